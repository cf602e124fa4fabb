// Deterministic, photo-like benchmark images for Scripts/bench.
//
//   gen_corpus jpegs DIR PREFIX COUNT W H QUALITY SEED PROGRESSIVE_EVERY NOISE JOBS
//   gen_corpus pngs  DIR PREFIX COUNT W H SEED JOBS
//   gen_corpus huge  PATH W H QUALITY SEED NOISE
//   gen_corpus mixed SRC_DIR SRC_PREFIX DIR PREFIX COUNT WEBP_QUALITY AVIF_SPEED AVIF_QUANTIZER JOBS
//
// Pixels are smooth gradients, separable low-frequency waves and a few soft-edged discs, plus
// seeded uniform noise: JPEG sizes then land near real photos' (about 40 KB for 640x480 at q85).
// Every image is a pure function of (SEED, index), so the same arguments give byte-identical
// files on every machine with the same libjpeg-turbo/libpng. `jpegs` and `pngs` fork JOBS
// processes (image i goes to process i % JOBS). `huge` streams one row at a time, so a
// 10,000 x 10,000 JPEG needs a few hundred KB of memory, not the 300 MB bitmap.
// `mixed` re-encodes an existing JPEG set (SRC_DIR/SRC_PREFIX-NNNNN.jpg) the way a CDN serves it,
// by index modulo 4: 0 stays the same JPEG (copied), 1 becomes lossy WebP (libwebp at
// WEBP_QUALITY), 2 AVIF (libavif with aom, 8-bit 4:2:0, AVIF_SPEED, one AVIF_QUANTIZER for the
// whole frame), 3 a 256-color GIF (a fixed 6x7x6 palette with 8x8 ordered dither, giflib). Each
// file keeps its real extension. The encoders are deterministic for one set of library versions.
// Build: gcc -O2 -o gen_corpus gen_corpus.c -ljpeg -lpng -lwebp -lgif -lavif -lm
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <sys/wait.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/encode.h>
#include <gif_lib.h>
#include <avif/avif.h>

#define DISCS 8

typedef struct { uint64_t s; } rng_t;

static uint64_t rng_next(rng_t *r) {  // splitmix64: tiny, seedable, good enough for pixels
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }

// One image's content. Waves are separable (wx[x] * wy[y]) so a pixel costs a multiply, not a sin().
typedef struct {
    int w, h, noise;
    double base[3], gx[3], gy[3], amp[3];
    float *wx[3], *wy[3];
    double cx[DISCS], cy[DISCS], r[DISCS], dc[DISCS][3];
    rng_t noise_rng;
} scene_t;

static void scene_init(scene_t *s, int w, int h, uint64_t seed, int noise) {
    rng_t r = { seed };
    s->w = w; s->h = h; s->noise = noise;
    for (int c = 0; c < 3; c++) {
        s->base[c] = 40 + 170 * rng_unit(&r);
        s->gx[c] = 80 * (rng_unit(&r) - 0.5);
        s->gy[c] = 80 * (rng_unit(&r) - 0.5);
        s->amp[c] = 50 * rng_unit(&r);
        double fx = (1 + 6 * rng_unit(&r)) * 2 * M_PI, fy = (1 + 6 * rng_unit(&r)) * 2 * M_PI;
        double px = 6.28 * rng_unit(&r), py = 6.28 * rng_unit(&r);
        s->wx[c] = malloc(sizeof(float) * (size_t)w);
        s->wy[c] = malloc(sizeof(float) * (size_t)h);
        for (int x = 0; x < w; x++) s->wx[c][x] = (float)sin(fx * x / w + px);
        for (int y = 0; y < h; y++) s->wy[c][y] = (float)sin(fy * y / h + py);
    }
    double scale = w < h ? w : h;
    for (int d = 0; d < DISCS; d++) {
        s->cx[d] = w * rng_unit(&r);
        s->cy[d] = h * rng_unit(&r);
        s->r[d] = scale * (0.05 + 0.25 * rng_unit(&r));
        for (int c = 0; c < 3; c++) s->dc[d][c] = 120 * (rng_unit(&r) - 0.5);
    }
    s->noise_rng.s = seed ^ 0xA5A5A5A5DEADBEEFull;
}

static void scene_free(scene_t *s) {
    for (int c = 0; c < 3; c++) { free(s->wx[c]); free(s->wy[c]); }
}

static inline unsigned char clamp255(double v) { return v < 0 ? 0 : v > 255 ? 255 : (unsigned char)v; }

// Fills one RGB row (w * 3 bytes).
static void scene_row(scene_t *s, int y, unsigned char *row) {
    double fy = (double)y / s->h;
    for (int x = 0; x < s->w; x++) {
        double fx = (double)x / s->w;
        for (int c = 0; c < 3; c++) {
            row[3 * x + c] = clamp255(s->base[c] + s->gx[c] * fx + s->gy[c] * fy
                                      + s->amp[c] * s->wx[c][x] * s->wy[c][y]);
        }
    }
    for (int d = 0; d < DISCS; d++) {  // add each disc over the span of this row it covers
        double dy = y - s->cy[d];
        if (fabs(dy) >= s->r[d]) continue;
        double half = sqrt(s->r[d] * s->r[d] - dy * dy);
        int x0 = (int)(s->cx[d] - half), x1 = (int)(s->cx[d] + half);
        if (x0 < 0) x0 = 0;
        if (x1 > s->w) x1 = s->w;
        for (int x = x0; x < x1; x++)
            for (int c = 0; c < 3; c++) row[3 * x + c] = clamp255(row[3 * x + c] + s->dc[d][c]);
    }
    if (s->noise > 0) {
        int span = 2 * s->noise + 1;
        for (int i = 0; i < 3 * s->w; i++) {
            int n = (int)((rng_next(&s->noise_rng) >> 40) % (uint64_t)span) - s->noise;
            int v = row[i] + n;
            row[i] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

static int write_jpeg(const char *path, int w, int h, int quality, uint64_t seed, int progressive, int noise) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); return 1; }
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&cinfo);
    jpeg_stdio_dest(&cinfo, f);
    cinfo.image_width = (JDIMENSION)w;
    cinfo.image_height = (JDIMENSION)h;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.optimize_coding = TRUE;  // what cjpeg -optimize and most cameras' exports do
    if (progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    scene_t s;
    scene_init(&s, w, h, seed, noise);
    unsigned char *row = malloc((size_t)w * 3);
    while (cinfo.next_scanline < cinfo.image_height) {
        scene_row(&s, (int)cinfo.next_scanline, row);
        JSAMPROW rows[1] = { row };
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    free(row);
    scene_free(&s);
    return fclose(f) != 0;
}

// PNG kinds cycle through the color types users meet: gray, gray+alpha, RGB, RGBA, palette, RGB16.
static int write_png(const char *path, int w, int h, uint64_t seed, int index) {
    static const int types[6] = { PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                  PNG_COLOR_TYPE_RGB_ALPHA, PNG_COLOR_TYPE_PALETTE, PNG_COLOR_TYPE_RGB };
    int kind = index % 6, type = types[kind], depth = kind == 5 ? 16 : 8;
    int interlace = index % 7 == 0 ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE;
    // Half the PNGs are graphics-like (no noise, they compress well), half photo-like (light noise).
    int noise = index % 2 == 0 ? 0 : 3;
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); return 1; }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    // No setjmp: libpng's default handler then aborts on an error, which is fine for a generator.
    png_init_io(png, f);
    png_set_compression_level(png, 4);  // generation speed; decoders don't care about the level
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, type, interlace,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (type == PNG_COLOR_TYPE_PALETTE) {  // 3-3-2 palette
        png_color pal[256];
        for (int i = 0; i < 256; i++) {
            pal[i].red = (png_byte)((i >> 5) * 255 / 7);
            pal[i].green = (png_byte)(((i >> 2) & 7) * 255 / 7);
            pal[i].blue = (png_byte)((i & 3) * 255 / 3);
        }
        png_set_PLTE(png, info, pal, 256);
    }
    png_write_info(png, info);
    int channels = png_get_channels(png, info);
    size_t stride = (size_t)w * (size_t)channels * (size_t)(depth / 8);
    // Adam7 needs the whole image; these are 512x512, so keep it simple and build it in memory.
    unsigned char *image = malloc(stride * (size_t)h), *rgb = malloc((size_t)w * 3);
    png_bytep *rows = malloc(sizeof(png_bytep) * (size_t)h);
    scene_t s;
    scene_init(&s, w, h, seed, noise);
    for (int y = 0; y < h; y++) {
        scene_row(&s, y, rgb);
        unsigned char *out = image + stride * (size_t)y;
        rows[y] = out;
        for (int x = 0; x < w; x++) {
            unsigned char r = rgb[3 * x], g = rgb[3 * x + 1], b = rgb[3 * x + 2];
            unsigned char gray = (unsigned char)((r * 77 + g * 150 + b * 29) >> 8);
            unsigned char alpha = (unsigned char)(255 * x / w);
            switch (kind) {
            case 0: out[x] = gray; break;
            case 1: out[2 * x] = gray; out[2 * x + 1] = alpha; break;
            case 2: memcpy(out + 3 * x, rgb + 3 * x, 3); break;
            case 3: memcpy(out + 4 * x, rgb + 3 * x, 3); out[4 * x + 3] = alpha; break;
            case 4: out[x] = (unsigned char)((r & 0xE0) | ((g >> 3) & 0x1C) | (b >> 6)); break;
            case 5:
                for (int c = 0; c < 3; c++) {  // 16-bit big-endian, low byte from a second ramp
                    out[6 * x + 2 * c] = rgb[3 * x + c];
                    out[6 * x + 2 * c + 1] = (unsigned char)(x + y + c);
                }
                break;
            }
        }
    }
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(image); free(rgb); free(rows);
    scene_free(&s);
    return fclose(f) != 0;
}

// Reads a JPEG whole into 8-bit RGB (w * h * 3 bytes), the input of the mixed set's encoders.
// libjpeg's default error handler exits, which is fine for a generator.
static unsigned char *read_jpeg_rgb(const char *path, int *w, int *h) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return NULL; }
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&cinfo);
    jpeg_stdio_src(&cinfo, f);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    *w = (int)cinfo.output_width;
    *h = (int)cinfo.output_height;
    size_t stride = (size_t)*w * 3;
    unsigned char *rgb = malloc(stride * (size_t)*h);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[1] = { rgb + stride * cinfo.output_scanline };
        jpeg_read_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    fclose(f);
    return rgb;
}

static int write_bytes(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); return 1; }
    int failed = fwrite(data, 1, size, f) != size;
    return fclose(f) != 0 || failed;
}

// The original bytes, so the mixed set's JPEGs are the small set's files exactly.
static int copy_file(const char *from, const char *to) {
    FILE *f = fopen(from, "rb");
    if (!f) { perror(from); return 1; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
    int failed = n <= 0 || fread(data, 1, (size_t)n, f) != (size_t)n;
    fclose(f);
    if (!failed) failed = write_bytes(to, data, (size_t)n);
    free(data);
    return failed;
}

// libwebp's one-call lossy encoder: method 4 and the default filters, as cwebp -q QUALITY.
static int write_webp(const char *path, const unsigned char *rgb, int w, int h, int quality) {
    uint8_t *out = NULL;
    size_t size = WebPEncodeRGB(rgb, w, h, w * 3, (float)quality, &out);
    int failed = size == 0 || write_bytes(path, out, size);
    WebPFree(out);
    return failed;
}

// aom through libavif, one thread (the generator already runs a process per core). One quantizer
// for the frame, so the size depends on the picture only. The color signalling is avifenc's
// default for an RGB input: BT.709 primaries, sRGB transfer, BT.601 matrix, full range.
static int write_avif(const char *path, const unsigned char *rgb, int w, int h, int speed, int quantizer) {
    avifImage *image = avifImageCreate((uint32_t)w, (uint32_t)h, 8, AVIF_PIXEL_FORMAT_YUV420);
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    image->yuvRange = AVIF_RANGE_FULL;
    avifRGBImage pixels;
    avifRGBImageSetDefaults(&pixels, image);
    pixels.format = AVIF_RGB_FORMAT_RGB;
    pixels.pixels = (uint8_t *)rgb;  // only read by avifImageRGBToYUV
    pixels.rowBytes = (uint32_t)w * 3;
    avifEncoder *encoder = avifEncoderCreate();
    encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
    encoder->maxThreads = 1;
    encoder->speed = speed;
    encoder->minQuantizer = encoder->maxQuantizer = quantizer;
    avifRWData out = AVIF_DATA_EMPTY;
    avifResult result = avifImageRGBToYUV(image, &pixels);
    if (result == AVIF_RESULT_OK) result = avifEncoderWrite(encoder, image, &out);
    if (result != AVIF_RESULT_OK) fprintf(stderr, "%s: %s\n", path, avifResultToString(result));
    int failed = result != AVIF_RESULT_OK || write_bytes(path, out.data, out.size);
    avifRWDataFree(&out);
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return failed;
}

// A 256-color GIF: 6 red x 7 green x 6 blue levels (252 colors; the table is padded to 256) and an
// 8x8 Bayer ordered dither, which is quick and deterministic. The dither's noise makes the LZW
// data large, as it is in real photo GIFs.
static int write_gif(const char *path, const unsigned char *rgb, int w, int h) {
    static const int levels[3] = { 6, 7, 6 };
    static const unsigned char bayer[8][8] = {
        { 0, 32, 8, 40, 2, 34, 10, 42 }, { 48, 16, 56, 24, 50, 18, 58, 26 },
        { 12, 44, 4, 36, 14, 46, 6, 38 }, { 60, 28, 52, 20, 62, 30, 54, 22 },
        { 3, 35, 11, 43, 1, 33, 9, 41 }, { 51, 19, 59, 27, 49, 17, 57, 25 },
        { 15, 47, 7, 39, 13, 45, 5, 37 }, { 63, 31, 55, 23, 61, 29, 53, 21 } };
    GifColorType colors[256] = { { 0, 0, 0 } };
    for (int r = 0; r < 6; r++)
        for (int g = 0; g < 7; g++)
            for (int b = 0; b < 6; b++) {
                GifColorType *c = &colors[(r * 7 + g) * 6 + b];
                c->Red = (GifByteType)(r * 255 / 5);
                c->Green = (GifByteType)(g * 255 / 6);
                c->Blue = (GifByteType)(b * 255 / 5);
            }
    int error = 0;
    GifFileType *gif = EGifOpenFileName(path, false, &error);
    if (!gif) { fprintf(stderr, "%s: %s\n", path, GifErrorString(error)); return 1; }
    EGifSetGifVersion(gif, true);
    ColorMapObject *map = GifMakeMapObject(256, colors);
    int failed = EGifPutScreenDesc(gif, w, h, 8, 0, map) == GIF_ERROR
                 || EGifPutImageDesc(gif, 0, 0, w, h, false, NULL) == GIF_ERROR;
    GifPixelType *line = malloc((size_t)w);
    for (int y = 0; y < h && !failed; y++) {
        for (int x = 0; x < w; x++) {
            int q[3];
            for (int c = 0; c < 3; c++) {
                // level = floor(v * steps / 255 + t), t = (bayer + 1/2) / 64, in integers.
                int steps = levels[c] - 1;
                int v = rgb[3 * ((size_t)y * (size_t)w + (size_t)x) + c];
                int level = (v * steps * 128 + (2 * bayer[y & 7][x & 7] + 1) * 255) / (255 * 128);
                q[c] = level > steps ? steps : level;
            }
            line[x] = (GifPixelType)((q[0] * 7 + q[1]) * 6 + q[2]);
        }
        failed = EGifPutLine(gif, line, w) == GIF_ERROR;  // masks the line in place; it is rebuilt per row
    }
    free(line);
    GifFreeMapObject(map);
    if (EGifCloseFile(gif, &error) == GIF_ERROR) failed = 1;
    return failed;
}

// Runs body(i) for i in [0, count) across `jobs` forked processes; returns nonzero if any failed.
typedef int (*job_fn)(int index, char **argv);
static int run_jobs(int count, int jobs, job_fn body, char **argv) {
    for (int k = 0; k < jobs; k++) {
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            int failed = 0;
            for (int i = k; i < count; i += jobs) failed |= body(i, argv);
            _exit(failed);
        }
    }
    int failed = 0, status;
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return failed;
}

static int jpeg_job(int i, char **a) {  // a: jpegs DIR PREFIX COUNT W H QUALITY SEED PROG NOISE JOBS
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%05d.jpg", a[2], a[3], i);
    int every = atoi(a[9]);
    uint64_t seed = strtoull(a[8], NULL, 10) * 1000003ull + (uint64_t)i;
    return write_jpeg(path, atoi(a[5]), atoi(a[6]), atoi(a[7]), seed, every > 0 && i % every == every - 1,
                      atoi(a[10]));
}

static int png_job(int i, char **a) {  // a: pngs DIR PREFIX COUNT W H SEED JOBS
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%05d.png", a[2], a[3], i);
    return write_png(path, atoi(a[5]), atoi(a[6]), strtoull(a[7], NULL, 10) * 1000003ull + (uint64_t)i, i);
}

static int mixed_job(int i, char **a) {  // a: mixed SRC_DIR SRC_PREFIX DIR PREFIX COUNT WEBPQ SPEED QUANT JOBS
    static const char *extensions[4] = { "jpg", "webp", "avif", "gif" };
    char source[4096], path[4096];
    snprintf(source, sizeof source, "%s/%s-%05d.jpg", a[2], a[3], i);
    snprintf(path, sizeof path, "%s/%s-%05d.%s", a[4], a[5], i, extensions[i % 4]);
    if (i % 4 == 0) return copy_file(source, path);
    int w, h, failed;
    unsigned char *rgb = read_jpeg_rgb(source, &w, &h);
    if (!rgb) return 1;
    if (i % 4 == 1) failed = write_webp(path, rgb, w, h, atoi(a[7]));
    else if (i % 4 == 2) failed = write_avif(path, rgb, w, h, atoi(a[8]), atoi(a[9]));
    else failed = write_gif(path, rgb, w, h);
    free(rgb);
    return failed;
}

int main(int argc, char **argv) {
    if (argc == 12 && strcmp(argv[1], "jpegs") == 0) return run_jobs(atoi(argv[4]), atoi(argv[11]), jpeg_job, argv);
    if (argc == 9 && strcmp(argv[1], "pngs") == 0) return run_jobs(atoi(argv[4]), atoi(argv[8]), png_job, argv);
    if (argc == 11 && strcmp(argv[1], "mixed") == 0) return run_jobs(atoi(argv[6]), atoi(argv[10]), mixed_job, argv);
    if (argc == 8 && strcmp(argv[1], "huge") == 0)
        return write_jpeg(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), strtoull(argv[6], NULL, 10), 0,
                          atoi(argv[7]));
    fprintf(stderr, "usage: gen_corpus jpegs DIR PREFIX COUNT W H QUALITY SEED PROGRESSIVE_EVERY NOISE JOBS\n"
                    "       gen_corpus pngs DIR PREFIX COUNT W H SEED JOBS\n"
                    "       gen_corpus huge PATH W H QUALITY SEED NOISE\n"
                    "       gen_corpus mixed SRC_DIR SRC_PREFIX DIR PREFIX COUNT WEBP_QUALITY AVIF_SPEED AVIF_QUANTIZER JOBS\n");
    return 2;
}
