// The decode limit: how long decoding a corpus takes when downloading costs nothing.
//
//   decode_limit [-t THREADS] [-m verify|full] [-w OUTDIR] -l PATHS_FILE
//
// Decodes every file named in PATHS_FILE (one path a line; JPEG or PNG by magic bytes) with
// THREADS pthreads (default: one per online core). Each file is read from disk into memory, then
// decoded from memory with libjpeg-turbo / libpng, the libraries imgfetch links. Modes:
//   verify  decode every scan and row, as imgfetch's verification does: for JPEG the same cheap
//           settings (1/8 scale, so every coefficient is entropy-decoded but the inverse DCT keeps
//           only the DC term; JDCT_IFAST, no fancy upsampling, no color conversion), PNG without
//           transforms;
//   full    decode to 8-bit RGB(A) pixels with the default (accurate) settings, as a viewer does;
//           with -w, also write each image as a binary PPM into OUTDIR (alpha dropped), the work
//           of `imgfetch --save-as ppm` minus the download and the temp-file + rename.
// Prints one line: "files=N failed=F pixels=P wall_s=S" and exits 1 if any file failed.
// Build: gcc -O2 -pthread -o decode_limit decode_limit.c -ljpeg -lpng
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <jpeglib.h>
#include <png.h>

typedef struct {
    char **paths;
    int count;
    int full;
    const char *outdir;
    atomic_int next;
    atomic_int failed;
    atomic_llong pixels;
} job_t;

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

// Opens OUTDIR/basename(path).ppm and writes the header; NULL when not writing.
static FILE *open_ppm(const job_t *job, const char *path, unsigned w, unsigned h) {
    if (!job->outdir) return NULL;
    const char *base = strrchr(path, '/');
    char out[4096];
    snprintf(out, sizeof out, "%s/%s.ppm", job->outdir, base ? base + 1 : path);
    FILE *f = fopen(out, "wb");
    if (f) fprintf(f, "P6\n%u %u\n255\n", w, h);
    return f;
}

// libjpeg's default error handler calls exit(): jump back instead.
typedef struct { struct jpeg_error_mgr mgr; jmp_buf jump; } jpeg_err_t;
static void jpeg_fail(j_common_ptr cinfo) { longjmp(((jpeg_err_t *)cinfo->err)->jump, 1); }
static void jpeg_quiet(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }

static int decode_jpeg(job_t *job, const char *path, const unsigned char *data, size_t size) {
    struct jpeg_decompress_struct info;
    jpeg_err_t err;
    unsigned char *volatile rows = NULL;
    FILE *volatile ppm = NULL;
    info.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_fail;
    err.mgr.emit_message = jpeg_quiet;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&info);
        free(rows);
        if (ppm) fclose(ppm);
        return 1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if (job->full) {
        info.out_color_space = JCS_RGB;
    } else {
        info.dct_method = JDCT_IFAST;
        info.do_fancy_upsampling = FALSE;
        info.out_color_space = info.jpeg_color_space;
        info.scale_num = 1;
        info.scale_denom = 8;
    }
    jpeg_start_decompress(&info);
    size_t stride = (size_t)info.output_width * (size_t)info.output_components;
    int batch = info.rec_outbuf_height;
    rows = malloc(stride * (size_t)batch);
    JSAMPROW ptrs[16];
    for (int i = 0; i < batch && i < 16; i++) ptrs[i] = rows + stride * (size_t)i;
    ppm = job->full ? open_ppm(job, path, info.output_width, info.output_height) : NULL;
    while (info.output_scanline < info.output_height) {
        JDIMENSION got = jpeg_read_scanlines(&info, ptrs, (JDIMENSION)batch);
        if (ppm) fwrite(rows, stride, got, ppm);
    }
    jpeg_finish_decompress(&info);
    atomic_fetch_add(&job->pixels, (long long)info.output_width * info.output_height);
    jpeg_destroy_decompress(&info);
    free(rows);
    return ppm ? fclose(ppm) != 0 : 0;
}

typedef struct { const unsigned char *data; size_t size, at; } png_src_t;
static void png_read_mem(png_structp png, png_bytep out, png_size_t n) {
    png_src_t *src = png_get_io_ptr(png);
    if (n > src->size - src->at) png_error(png, "truncated");
    memcpy(out, src->data + src->at, n);
    src->at += n;
}

static int decode_png(job_t *job, const char *path, const unsigned char *data, size_t size) {
    png_src_t src = { data, size, 0 };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    unsigned char *volatile row = NULL, *volatile rgb = NULL;
    FILE *volatile ppm = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(row); free(rgb);
        if (ppm) fclose(ppm);
        return 1;
    }
    png_set_read_fn(png, &src, png_read_mem);
    png_read_info(png, info);
    if (job->full) {  // the same expansions imgfetch applies for pixel outputs
        int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
        if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
        if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
        if (depth == 16) png_set_scale_16(png);
        if ((type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    size_t stride = png_get_rowbytes(png, info);
    int channels = png_get_channels(png, info);
    row = malloc(stride);
    // Interlaced images would need the whole bitmap for PPM output: write only non-interlaced ones.
    ppm = job->full && passes == 1 ? open_ppm(job, path, w, h) : NULL;
    rgb = ppm ? malloc((size_t)w * 3) : NULL;
    for (int pass = 0; pass < passes; pass++) {
        for (png_uint_32 y = 0; y < h; y++) {
            png_read_row(png, row, NULL);
            if (!ppm) continue;
            for (png_uint_32 x = 0; x < w; x++) memcpy(rgb + 3 * x, row + (size_t)channels * x, 3);
            fwrite(rgb, 3, w, ppm);
        }
    }
    png_read_end(png, NULL);
    atomic_fetch_add(&job->pixels, (long long)w * h);
    png_destroy_read_struct(&png, &info, NULL);
    free(row); free(rgb);
    return ppm ? fclose(ppm) != 0 : 0;
}

static void *worker(void *arg) {
    job_t *job = arg;
    for (;;) {
        int i = atomic_fetch_add(&job->next, 1);
        if (i >= job->count) return NULL;
        size_t size = 0;
        unsigned char *data = read_file(job->paths[i], &size);
        int failed = 1;
        const char *path = job->paths[i];
        if (data && size >= 8 && data[0] == 0xFF && data[1] == 0xD8) failed = decode_jpeg(job, path, data, size);
        else if (data && size >= 8 && png_sig_cmp(data, 0, 8) == 0) failed = decode_png(job, path, data, size);
        if (failed) {
            fprintf(stderr, "decode_limit: failed: %s\n", job->paths[i]);
            atomic_fetch_add(&job->failed, 1);
        }
        free(data);
    }
}

static char **read_paths(const char *list, int *count) {
    FILE *f = fopen(list, "r");
    if (!f) { perror(list); exit(2); }
    int cap = 1024, n = 0;
    char **paths = malloc(sizeof(char *) * (size_t)cap), line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (n == cap) paths = realloc(paths, sizeof(char *) * (size_t)(cap *= 2));
        paths[n++] = strdup(line);
    }
    fclose(f);
    *count = n;
    return paths;
}

int main(int argc, char **argv) {
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    const char *list = NULL;
    job_t job = { 0 };
    int opt;
    while ((opt = getopt(argc, argv, "t:m:w:l:")) != -1) {
        switch (opt) {
        case 't': threads = atol(optarg); break;
        case 'm': job.full = strcmp(optarg, "full") == 0; break;
        case 'w': job.outdir = optarg; break;
        case 'l': list = optarg; break;
        default: list = NULL; optind = argc; threads = 0; break;
        }
    }
    if (!list || threads < 1 || threads > 256 || (job.outdir && !job.full)) {
        fprintf(stderr, "usage: decode_limit [-t THREADS] [-m verify|full] [-w OUTDIR (full only)] -l PATHS_FILE\n");
        return 2;
    }
    job.paths = read_paths(list, &job.count);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t tids[256];
    for (long i = 0; i < threads; i++) pthread_create(&tids[i], NULL, worker, &job);
    for (long i = 0; i < threads; i++) pthread_join(tids[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("files=%d failed=%d pixels=%lld wall_s=%.4f\n", job.count, atomic_load(&job.failed),
           atomic_load(&job.pixels), wall);
    return atomic_load(&job.failed) ? 1 : 0;
}
