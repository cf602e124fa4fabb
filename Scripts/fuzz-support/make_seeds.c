// Writes the fuzzer's seed corpus with CImageCodec's own fixture encoders: one small file for
// each JPEG process and color space, each PNG color type and bit depth, interlacing, transparency,
// Exif orientation, text chunks and APNG; WebP stills and animations; GIF frames, interlacing and
// transparency; AVIF stills, depths and sequences; TIFF layouts, compressions, tiles and pages;
// BMP headers, depths, bit fields and RLE. Usage: make_seeds DIRECTORY
#include <stdio.h>
#include <stdlib.h>
#include "imgcodec.h"
#include "imgcodec_fixtures.h"
#include "imgcodec_fixtures_avif.h"
#include "imgcodec_fixtures_bmp.h"
#include "imgcodec_fixtures_gif.h"
#include "imgcodec_fixtures_tiff.h"
#include "imgcodec_fixtures_webp.h"

// In C beside the fixture encoders: writes one seed file, or exits on failure.
static void seed_write(const char *directory, const char *name, const unsigned char *data, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(data, 1, size, file) != size || fclose(file) != 0) {
        fprintf(stderr, "make_seeds: cannot write %s\n", path);
        exit(1);
    }
}

// In C because the fixture encoders fill C buffers: a deterministic pattern of `count` bytes.
static unsigned char *seed_pattern(size_t count) {
    unsigned char *pixels = malloc(count);
    if (pixels == NULL) exit(1);
    uint32_t state = 2463534242u;
    for (size_t i = 0; i < count; i++) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        pixels[i] = (unsigned char)(i % 7 == 0 ? state : i * 3);
    }
    return pixels;
}

// In C because it calls the JPEG fixture encoder.
static void seed_jpeg(const char *directory, const char *name, imgcodec_test_jpeg_options options, int channels) {
    const uint32_t width = 19, height = 13;
    unsigned char *pixels = seed_pattern((size_t)width * height * (size_t)channels), *data = NULL;
    size_t size = 0;
    char message[IMGCODEC_MESSAGE_SIZE];
    if (imgcodec_test_encode_jpeg(pixels, width, height, &options, &data, &size, message, sizeof message) != 0) {
        fprintf(stderr, "make_seeds: %s: %s\n", name, message);
        exit(1);
    }
    seed_write(directory, name, data, size);
    imgcodec_free(data);
    free(pixels);
}

// In C because it calls the PNG fixture encoder.
static void seed_png(const char *directory, const char *name, imgcodec_test_png_options options) {
    const uint32_t width = 11, height = 9;
    static const int samples[] = {1, 0, 3, 1, 2, 0, 4};
    size_t row = ((size_t)width * (size_t)samples[options.color_type] * (size_t)options.bit_depth + 7) / 8;
    unsigned char *rows = seed_pattern(row * height), *palette = seed_pattern(3 * 256), *data = NULL;
    unsigned char alpha[] = {0, 80, 160, 255};
    if (options.color_type == 3) {
        options.palette = palette;
        options.palette_entries = 1 << options.bit_depth;
    }
    size_t size = 0;
    char message[IMGCODEC_MESSAGE_SIZE];
    if (options.color_type == 3 && options.palette_alpha_entries > 0) options.palette_alpha = alpha;
    if (imgcodec_test_encode_png(rows, width, height, &options, &data, &size, message, sizeof message) != 0) {
        fprintf(stderr, "make_seeds: %s: %s\n", name, message);
        exit(1);
    }
    seed_write(directory, name, data, size);
    imgcodec_free(data);
    free(rows);
    free(palette);
}

// In C beside the other seeds: exits when a fixture encoder failed, else writes and frees its
// output. Takes the output by address: C leaves the order of argument evaluation open, so the
// buffer must be read after the encoder call that is the `status` argument has filled it.
static void seed_check(const char *directory, const char *name, int status, unsigned char **data, const size_t *size,
                       const char *message) {
    if (status != 0) {
        fprintf(stderr, "make_seeds: %s: %s\n", name, message);
        exit(1);
    }
    seed_write(directory, name, *data, *size);
    imgcodec_free(*data);
    *data = NULL;
}

// In C because it calls the WebP, GIF, AVIF, TIFF and BMP fixture encoders.
static void seed_other_formats(const char *directory) {
    const uint32_t width = 13, height = 9;
    unsigned char *pixels = seed_pattern((size_t)width * height * 4 * 3), *data = NULL;
    size_t size = 0;
    char message[IMGCODEC_MESSAGE_SIZE] = "";
    char name[64];
    for (int variant = 0; variant < 4; variant++) {
        imgcodec_test_webp_options webp = { .lossless = variant & 1, .quality = 60, .alpha = variant >> 1, .exact = 1,
                                            .orientation = variant == 3 ? 6 : 0 };
        snprintf(name, sizeof name, "webp-%s%s.webp", webp.lossless ? "lossless" : "lossy", webp.alpha ? "-alpha" : "");
        seed_check(directory, name, imgcodec_test_encode_webp(pixels, width, height, &webp, &data, &size, message, sizeof message),
                   &data, &size, message);
        snprintf(name, sizeof name, "webp-anim-%d.webp", variant);
        seed_check(directory, name, imgcodec_test_encode_webp_animation(pixels, width, height, 3, &webp, &data, &size, message,
                                                                        sizeof message), &data, &size, message);
    }
    for (int variant = 0; variant < 4; variant++) {
        imgcodec_test_gif_frame frames[2] = {
            { .indices = pixels, .width = width, .height = height, .interlaced = variant & 1,
              .has_transparent = variant >> 1, .transparent_index = 3 },
            { .fill_index = 2, .left = 2, .top = 1, .width = 5, .height = 4, .palette = pixels, .palette_entries = 4 },
        };
        imgcodec_test_gif_options gif = { .screen_width = width, .screen_height = height, .palette = pixels + 64,
                                          .palette_entries = 256 };
        snprintf(name, sizeof name, "gif-%d.gif", variant);
        seed_check(directory, name, imgcodec_test_encode_gif(&gif, frames, variant == 0 ? 1 : 2, &data, &size, message, sizeof message),
                   &data, &size, message);
    }
    const struct { int channels, depth, yuv, lossless, frames; } avifs[] = {
        {3, 8, IMGCODEC_TEST_AVIF_YUV420, 0, 1}, {4, 8, IMGCODEC_TEST_AVIF_YUV444, 1, 1}, {3, 10, IMGCODEC_TEST_AVIF_YUV420, 0, 1},
        {1, 12, IMGCODEC_TEST_AVIF_YUV400, 1, 1}, {3, 8, IMGCODEC_TEST_AVIF_YUV420, 0, 3},
    };
    for (size_t i = 0; i < sizeof avifs / sizeof avifs[0]; i++) {
        imgcodec_test_avif_options avif = { .channels = avifs[i].channels, .bit_depth = avifs[i].depth, .yuv_format = avifs[i].yuv,
                                            .lossless = avifs[i].lossless, .frames = avifs[i].frames, .same_pixels = 1 };
        snprintf(name, sizeof name, "avif-%zu.avif", i);
        seed_check(directory, name, imgcodec_test_encode_avif(pixels, width, height, &avif, &data, &size, message, sizeof message),
                   &data, &size, message);
    }
    const struct { int samples, bits, photometric, compression, tiled, separate, extra, pages; } tiffs[] = {
        {1, 1, 1, 1, 0, 0, 0, 1}, {1, 16, 0, 5, 0, 0, 0, 1}, {3, 8, 2, 8, 1, 0, 0, 1}, {4, 8, 2, 32773, 0, 1, 2, 1},
        {1, 4, 3, 5, 0, 0, 0, 2}, {4, 8, 5, 1, 0, 0, 0, 1}, {3, 8, 6, 7, 0, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof tiffs / sizeof tiffs[0]; i++) {
        imgcodec_test_tiff_options tiff = { .samples = tiffs[i].samples, .bits = tiffs[i].bits, .photometric = tiffs[i].photometric,
                                            .compression = tiffs[i].compression, .planar_separate = tiffs[i].separate,
                                            .extra_samples = tiffs[i].extra, .pages = (uint32_t)tiffs[i].pages,
                                            .rows_per_strip = tiffs[i].compression == 7 ? 16 : 4,
                                            .tile_width = tiffs[i].tiled ? 16 : 0, .tile_height = tiffs[i].tiled ? 16 : 0 };
        snprintf(name, sizeof name, "tiff-%zu.tif", i);
        seed_check(directory, name, imgcodec_test_encode_tiff(pixels, width, height, &tiff, &data, &size, message, sizeof message),
                   &data, &size, message);
    }
    const struct { int bits, header, top_down, compression; uint32_t red, green, blue, alpha; } bmps[] = {
        {1, 40, 0, IMGCODEC_TEST_BMP_RGB, 0, 0, 0, 0}, {4, 12, 0, IMGCODEC_TEST_BMP_RGB, 0, 0, 0, 0},
        {8, 40, 0, IMGCODEC_TEST_BMP_RLE8, 0, 0, 0, 0}, {4, 40, 0, IMGCODEC_TEST_BMP_RLE4, 0, 0, 0, 0},
        {16, 40, 1, IMGCODEC_TEST_BMP_BITFIELDS, 0xF800, 0x07E0, 0x001F, 0}, {24, 108, 0, IMGCODEC_TEST_BMP_RGB, 0, 0, 0, 0},
        {32, 124, 1, IMGCODEC_TEST_BMP_BITFIELDS, 0xFF0000, 0xFF00, 0xFF, 0xFF000000u},
    };
    for (size_t i = 0; i < sizeof bmps / sizeof bmps[0]; i++) {
        imgcodec_test_bmp_options bmp = { .bits_per_pixel = bmps[i].bits, .header_size = bmps[i].header, .top_down = bmps[i].top_down,
                                          .compression = bmps[i].compression, .red_mask = bmps[i].red, .green_mask = bmps[i].green,
                                          .blue_mask = bmps[i].blue, .alpha_mask = bmps[i].alpha, .rle_skips = (int)(i % 2),
                                          .palette = pixels, .palette_entries = bmps[i].bits <= 8 ? 1 << bmps[i].bits : 0 };
        // Palette indices must stay within the palette: reuse the pattern masked to the depth.
        unsigned char *indices = seed_pattern((size_t)width * height * 4);
        if (bmps[i].bits <= 8) {
            for (size_t p = 0; p < (size_t)width * height; p++) indices[p] &= (unsigned char)((1 << bmps[i].bits) - 1);
        }
        snprintf(name, sizeof name, "bmp-%zu.bmp", i);
        seed_check(directory, name, imgcodec_test_encode_bmp(indices, width, height, &bmp, &data, &size, message, sizeof message),
                   &data, &size, message);
        free(indices);
    }
    free(pixels);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIRECTORY\n");
        return 2;
    }
    const char *directory = argv[1];
    const struct { const char *name; int progressive, arithmetic, color_space, orientation, little_endian, full_chroma, many_scans; } jpegs[] = {
        {"baseline.jpg", 0, 0, IMGCODEC_TEST_JPEG_RGB, 0, 0, 0, 0},
        {"progressive.jpg", 1, 0, IMGCODEC_TEST_JPEG_RGB, 0, 0, 0, 0},
        {"arithmetic.jpg", 0, 1, IMGCODEC_TEST_JPEG_RGB, 0, 0, 0, 0},
        {"arithmetic-progressive.jpg", 1, 1, IMGCODEC_TEST_JPEG_RGB, 0, 0, 0, 0},
        {"gray.jpg", 0, 0, IMGCODEC_TEST_JPEG_GRAY, 0, 0, 0, 0},
        {"cmyk.jpg", 0, 0, IMGCODEC_TEST_JPEG_CMYK, 0, 0, 0, 0},
        {"ycck-progressive.jpg", 1, 0, IMGCODEC_TEST_JPEG_YCCK, 0, 0, 0, 0},
        {"exif-mm-6.jpg", 0, 0, IMGCODEC_TEST_JPEG_RGB, 6, 0, 1, 0},
        {"exif-ii-8.jpg", 1, 0, IMGCODEC_TEST_JPEG_RGB, 8, 1, 0, 0},
        {"many-scans-gray.jpg", 0, 0, IMGCODEC_TEST_JPEG_GRAY, 0, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof jpegs / sizeof jpegs[0]; i++) {
        imgcodec_test_jpeg_options options = {
            .quality = 75, .progressive = jpegs[i].progressive, .arithmetic = jpegs[i].arithmetic,
            .color_space = jpegs[i].color_space, .orientation = jpegs[i].orientation,
            .exif_little_endian = jpegs[i].little_endian, .full_chroma = jpegs[i].full_chroma, .many_scans = jpegs[i].many_scans,
        };
        int channels = jpegs[i].color_space == IMGCODEC_TEST_JPEG_GRAY ? 1 : jpegs[i].color_space == IMGCODEC_TEST_JPEG_RGB ? 3 : 4;
        seed_jpeg(directory, jpegs[i].name, options, channels);
    }
    const struct { int color_type, depths[5]; } pngs[] = {
        {0, {1, 2, 4, 8, 16}}, {2, {8, 16}}, {3, {1, 2, 4, 8}}, {4, {8, 16}}, {6, {8, 16}},
    };
    for (size_t i = 0; i < sizeof pngs / sizeof pngs[0]; i++) {
        for (size_t d = 0; d < 5 && pngs[i].depths[d] != 0; d++) {
            for (int interlaced = 0; interlaced <= 1; interlaced++) {
                imgcodec_test_png_options options = {
                    .color_type = pngs[i].color_type, .bit_depth = pngs[i].depths[d], .interlaced = interlaced,
                    .palette_alpha_entries = pngs[i].color_type == 3 && d % 2 == 0 ? 4 : 0,
                    .transparent_color = pngs[i].color_type == 0 && interlaced, .transparent_gray = 1,
                    .text_chunks = d == 0 ? 2 : 0, .orientation = interlaced ? 0 : (int)d + 2, .apng = pngs[i].color_type == 6 && d == 0,
                };
                char name[64];
                snprintf(name, sizeof name, "type%d-depth%d%s.png", pngs[i].color_type, pngs[i].depths[d], interlaced ? "-interlaced" : "");
                seed_png(directory, name, options);
            }
        }
    }
    seed_other_formats(directory);
    return 0;
}
