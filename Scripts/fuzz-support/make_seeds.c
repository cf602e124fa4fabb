// Writes the fuzzer's seed corpus with CImageCodec's own fixture encoders: one small file for
// each JPEG process and color space, each PNG color type and bit depth, interlacing, transparency,
// Exif orientation, text chunks and APNG. Usage: make_seeds DIRECTORY
#include <stdio.h>
#include <stdlib.h>
#include "imgcodec.h"
#include "imgcodec_fixtures.h"

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
    return 0;
}
