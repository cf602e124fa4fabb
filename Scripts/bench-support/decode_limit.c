// The decode limit: how long decoding a corpus takes when downloading costs nothing.
//
//   decode_limit [-t THREADS] [-m verify|full] [-w OUTDIR] -l PATHS_FILE
//
// Decodes every file named in PATHS_FILE (one path a line; the format from its magic bytes, as
// imgfetch's decode stage and Scripts/fuzz-support/fuzz_decoder.c sniff it) with THREADS pthreads
// (default: one per online core). Each file is read from disk into memory, then decoded from
// memory with the libraries imgfetch links: libjpeg-turbo, libpng, libwebp, giflib and libavif
// (dav1d, one thread per decoder, as Sources/CImageCodec opens it). Modes:
//   verify  decode every scan, row and frame, as imgfetch's verification does, with its cheap
//           settings: JPEG at 1/8 scale (every coefficient is entropy-decoded but the inverse DCT
//           keeps only the DC term; JDCT_IFAST, no fancy upsampling, no color conversion); PNG
//           without transforms; WebP to YUV scaled to 1x1 without the in-loop filter (the
//           bitstream is parsed in full); GIF's LZW data line by line, every frame; AVIF's AV1
//           data decoded to YUV, every frame, with no conversion to RGB;
//   full    decode to 8-bit RGB(A) pixels as imgfetch's --save-as does: JPEG and PNG with the
//           default (accurate) settings, WebP with its loop filter, GIF through its color table
//           (the first frame; later ones verified), AVIF through libavif's bilinear YUV-to-RGB
//           (the first frame; later ones decoded); with -w, also write each image as a binary PPM
//           into OUTDIR (alpha dropped), the work of `imgfetch --save-as ppm` minus the download
//           and the temp-file + rename.
// Animated WebP, TIFF and BMP (BMP has imgfetch's own decoder, no library) are recognized but not
// decoded: no bench corpus has them, and they count as failed.
// Prints one line: "files=N failed=F pixels=P wall_s=S" and exits 1 if any file failed.
// Build: gcc -O2 -pthread -ISources/CImageCodec/include -o decode_limit decode_limit.c -ljpeg -lpng -lwebp -lgif -lavif
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
#include <webp/decode.h>
#include <gif_lib.h>
#include <avif/avif.h>
#include "imgcodec.h"  // IMGCODEC_FORMAT_*, the codec's names for the formats
#include "sniff.h"    // imgcodec_tools_sniff, shared with the fuzz harness

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

// Writes `h` rows of `channels`-sample 8-bit pixels as PPM's RGB (alpha, a 4th channel, dropped).
static int write_ppm(const job_t *job, const char *path, const unsigned char *pixels, unsigned w, unsigned h,
                     int channels) {
    FILE *ppm = open_ppm(job, path, w, h);
    if (!ppm) return job->outdir != NULL;
    unsigned char *rgb = channels == 3 ? NULL : malloc((size_t)w * 3);
    for (unsigned y = 0; y < h; y++) {
        const unsigned char *row = pixels + (size_t)y * w * (size_t)channels;
        if (rgb) {
            for (unsigned x = 0; x < w; x++) memcpy(rgb + 3 * x, row + (size_t)channels * x, 3);
            row = rgb;
        }
        fwrite(row, 3, w, ppm);
    }
    free(rgb);
    return fclose(ppm) != 0;
}

// A still image (WebPDecode refuses an animation). verify: the codec's check, YUV scaled to 1x1
// without the loop filter; full: RGB or RGBA at full size with the default options.
static int decode_webp(job_t *job, const char *path, const unsigned char *data, size_t size) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config) || WebPGetFeatures(data, size, &config.input) != VP8_STATUS_OK) return 1;
    if (job->full) {
        config.output.colorspace = config.input.has_alpha ? MODE_RGBA : MODE_RGB;
    } else {
        config.output.colorspace = MODE_YUV;
        config.options.bypass_filtering = 1;
        config.options.use_scaling = 1;
        config.options.scaled_width = 1;
        config.options.scaled_height = 1;
    }
    int failed = WebPDecode(data, size, &config) != VP8_STATUS_OK;
    unsigned w = (unsigned)config.input.width, h = (unsigned)config.input.height;
    if (!failed && job->full) {
        const WebPRGBABuffer *rgba = &config.output.u.RGBA;
        failed = write_ppm(job, path, rgba->rgba, w, h, config.input.has_alpha ? 4 : 3);
    }
    if (!failed) atomic_fetch_add(&job->pixels, (long long)w * h);
    WebPFreeDecBuffer(&config.output);
    return failed;
}

typedef struct { const unsigned char *data; size_t size, at; } mem_src_t;
static int gif_read_mem(GifFileType *gif, GifByteType *out, int n) {
    mem_src_t *src = gif->UserData;
    size_t count = (size_t)n < src->size - src->at ? (size_t)n : src->size - src->at;
    memcpy(out, src->data + src->at, count);
    src->at += count;
    return (int)count;
}

// Every frame's LZW data line by line, up to the trailer, as the codec verifies. full: the first
// frame's lines also go through its color table into RGB; PPM only for a first frame that is not
// interlaced and covers the screen (else it would need the whole bitmap), as for PNG.
static int decode_gif(job_t *job, const char *path, const unsigned char *data, size_t size) {
    mem_src_t src = { data, size, 0 };
    int error = 0, failed = 1, frames = 0;
    GifFileType *gif = DGifOpen(&src, gif_read_mem, &error);
    if (!gif) return 1;
    unsigned char *line = NULL, *rgb = NULL;
    FILE *ppm = NULL;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) break;
        if (type == TERMINATE_RECORD_TYPE) { failed = frames == 0; break; }
        if (type == EXTENSION_RECORD_TYPE) {  // skipped: only the image data costs anything
            int code, ok;
            GifByteType *block = NULL;
            ok = DGifGetExtension(gif, &code, &block) != GIF_ERROR;
            while (ok && block) ok = DGifGetExtensionNext(gif, &block) != GIF_ERROR;
            if (!ok) break;
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE || DGifGetImageDesc(gif) == GIF_ERROR) break;
        GifFreeSavedImages(gif);  // giflib keeps every descriptor for DGifSlurp; nothing here needs them
        gif->ImageCount = 0;
        int w = gif->Image.Width, h = gif->Image.Height, y = 0;
        if (w <= 0 || h <= 0) break;
        free(line);
        line = malloc((size_t)w);
        const ColorMapObject *map = gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap;
        int convert = job->full && frames == 0 && map;
        if (convert) {
            rgb = malloc((size_t)w * 3);
            if (!gif->Image.Interlace && w == gif->SWidth && h == gif->SHeight && gif->Image.Left == 0
                && gif->Image.Top == 0) ppm = open_ppm(job, path, (unsigned)w, (unsigned)h);
        }
        for (; y < h; y++) {
            if (DGifGetLine(gif, line, w) == GIF_ERROR) break;
            if (!convert) continue;
            for (int x = 0; x < w; x++) {
                const GifColorType *c = &map->Colors[line[x] < map->ColorCount ? line[x] : 0];
                rgb[3 * x] = c->Red; rgb[3 * x + 1] = c->Green; rgb[3 * x + 2] = c->Blue;
            }
            if (ppm) fwrite(rgb, 3, (size_t)w, ppm);
        }
        if (y < h) break;
        if (frames++ == 0) atomic_fetch_add(&job->pixels, (long long)gif->SWidth * gif->SHeight);
    }
    DGifCloseFile(gif, &error);
    free(line); free(rgb);
    if (ppm && fclose(ppm) != 0) failed = 1;
    return failed;
}

// Every frame's AV1 data decoded to YUV by dav1d, one thread (libavif's maxThreads, as the codec
// sets it); Exif and XMP ignored, as the codec does. full: the first frame converted to 8-bit RGB
// or RGBA with libavif's bilinear chroma upsampling, the codec's choice for --save-as.
static int decode_avif(job_t *job, const char *path, const unsigned char *data, size_t size) {
    avifDecoder *avif = avifDecoderCreate();
    if (!avif) return 1;
    avif->maxThreads = 1;
    avif->ignoreExif = AVIF_TRUE;
    avif->ignoreXMP = AVIF_TRUE;
    avifRGBImage rgb;
    memset(&rgb, 0, sizeof rgb);
    avifResult result = avifDecoderSetIOMemory(avif, data, size);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(avif);
    while (result == AVIF_RESULT_OK && avif->imageIndex + 1 < avif->imageCount) {
        result = avifDecoderNextImage(avif);
        if (result != AVIF_RESULT_OK || avif->imageIndex != 0) continue;
        const avifImage *image = avif->image;
        atomic_fetch_add(&job->pixels, (long long)image->width * image->height);
        if (!job->full) continue;
        avifRGBImageSetDefaults(&rgb, image);
        rgb.depth = 8;
        rgb.format = avif->alphaPresent ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
        rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BEST_QUALITY;
        avifRGBImageAllocatePixels(&rgb);
        result = avifImageYUVToRGB(image, &rgb);
        if (result == AVIF_RESULT_OK && write_ppm(job, path, rgb.pixels, rgb.width, rgb.height,
                                                  avif->alphaPresent ? 4 : 3)) {
            result = AVIF_RESULT_IO_ERROR;
        }
        avifRGBImageFreePixels(&rgb);
    }
    avifDecoderDestroy(avif);
    return result != AVIF_RESULT_OK;
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
        int format = data ? imgcodec_tools_sniff(data, size) : 0;
        switch (format) {
        case IMGCODEC_FORMAT_JPEG: failed = decode_jpeg(job, path, data, size); break;
        case IMGCODEC_FORMAT_PNG: failed = decode_png(job, path, data, size); break;
        case IMGCODEC_FORMAT_WEBP: failed = decode_webp(job, path, data, size); break;
        case IMGCODEC_FORMAT_GIF: failed = decode_gif(job, path, data, size); break;
        case IMGCODEC_FORMAT_AVIF: failed = decode_avif(job, path, data, size); break;
        default: break;  // none, or TIFF and BMP: see the top of the file
        }
        if (failed) {
            fprintf(stderr, "decode_limit: failed: %s (format %d)\n", job->paths[i], format);
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
