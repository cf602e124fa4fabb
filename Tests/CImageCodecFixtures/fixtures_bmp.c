#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "imgcodec_fixtures.h"
#include "imgcodec_fixtures_bmp.h"

/// The most pixels a fixture holds: fixtures are small; huge claims come from the overrides.
#define IMGCODEC_FIXTURE_BMP_MAX_PIXELS (1u << 26)

/// A BMP being written into a buffer sized for the worst case up front, so writes cannot fail.
typedef struct imgcodec_fixture_bmp {
    unsigned char *data;
    size_t size;
    const unsigned char *pixels;
    uint32_t width, height;
    int bpp;
} imgcodec_fixture_bmp;

// Appends bytes; the buffer was sized for the worst case.
static void imgcodec_fixture_bmp_put(imgcodec_fixture_bmp *out, const void *bytes, size_t count) {
    memcpy(out->data + out->size, bytes, count);
    out->size += count;
}

// Appends a little-endian 16-bit field.
static void imgcodec_fixture_bmp_put16(imgcodec_fixture_bmp *out, uint32_t value) {
    unsigned char bytes[2] = {(unsigned char)value, (unsigned char)(value >> 8)};
    imgcodec_fixture_bmp_put(out, bytes, 2);
}

// Appends a little-endian 32-bit field.
static void imgcodec_fixture_bmp_put32(imgcodec_fixture_bmp *out, uint32_t value) {
    imgcodec_fixture_bmp_put16(out, value & 0xFFFF);
    imgcodec_fixture_bmp_put16(out, value >> 16);
}

// Overwrites a little-endian 32-bit field written earlier (sizes and offsets known only at the end).
static void imgcodec_fixture_bmp_patch32(imgcodec_fixture_bmp *out, size_t offset, uint32_t value) {
    for (int i = 0; i < 4; i++) out->data[offset + (size_t)i] = (unsigned char)(value >> (8 * i));
}

// Packs an 8-bit sample into a field of `mask`, rounding to nearest (the decoder's scaling inverted).
static uint32_t imgcodec_fixture_bmp_field(unsigned value, uint32_t mask) {
    if (mask == 0) return 0;
    int shift = __builtin_ctz(mask);
    uint64_t max = mask >> shift;
    return (uint32_t)(((uint64_t)value * max + 127) / 255) << shift;
}

// The palette indices of stored row `stored` (0 = first in the file).
static const unsigned char *imgcodec_fixture_bmp_row(const imgcodec_fixture_bmp *out, uint32_t stored, int top_down) {
    uint32_t y = top_down ? stored : out->height - 1 - stored;
    return out->pixels + (size_t)y * out->width;
}

// Whether the first `count` indices of `row` are all 0.
static int imgcodec_fixture_bmp_zeros(const unsigned char *row, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) if (row[i] != 0) return 0;
    return 1;
}

// Length of the run at `x` that one encoded RLE code can produce (RLE4: two alternating indices).
static uint32_t imgcodec_fixture_bmp_run(const unsigned char *row, uint32_t x, uint32_t width, int rle4) {
    uint32_t length = 1;
    while (x + length < width && length < 255 && row[x + length] == row[x + (rle4 ? (length & 1) : 0)]) length++;
    return length;
}

// Writes the RLE stream: encoded runs of 3 or more, absolute runs between them, and with `skips`
// deltas, end-of-line and end-of-bitmap codes over index 0.
static void imgcodec_fixture_bmp_rle(imgcodec_fixture_bmp *out, int rle4, int skips, int top_down) {
    uint32_t width = out->width, height = out->height, stored = 0, x = 0;
    while (stored < height) {
        const unsigned char *row = imgcodec_fixture_bmp_row(out, stored, top_down);
        if (x >= width) {
            imgcodec_fixture_bmp_put(out, stored + 1 == height ? "\0\1" : "\0\0", 2);
            stored++;
            x = 0;
            continue;
        }
        if (skips && row[x] == 0) {
            uint32_t zeros = 1;
            while (x + zeros < width && row[x + zeros] == 0) zeros++;
            if (x + zeros < width) {
                uint32_t dx = zeros < 255 ? zeros : 255;
                unsigned char delta[4] = {0, 2, (unsigned char)dx, 0};
                imgcodec_fixture_bmp_put(out, delta, 4);
                x += dx;
                continue;
            }
            int rest_zero = 1;
            for (uint32_t s = stored + 1; s < height && rest_zero; s++) {
                rest_zero = imgcodec_fixture_bmp_zeros(imgcodec_fixture_bmp_row(out, s, top_down), width);
            }
            if (rest_zero) {
                imgcodec_fixture_bmp_put(out, "\0\1", 2);
                return;
            }
            if (x > 0 && imgcodec_fixture_bmp_zeros(imgcodec_fixture_bmp_row(out, stored + 1, top_down), x)) {
                imgcodec_fixture_bmp_put(out, "\0\2\0\1", 4);  // one row up, same column
                stored++;
            } else {
                imgcodec_fixture_bmp_put(out, "\0\0", 2);
                stored++;
                x = 0;
            }
            continue;
        }
        uint32_t run = imgcodec_fixture_bmp_run(row, x, width, rle4);
        uint32_t literal = 0;
        if (run < 3) {
            while (x + literal < width && literal < 255 && !(skips && row[x + literal] == 0) &&
                   imgcodec_fixture_bmp_run(row, x + literal, width, rle4) < 3) {
                literal++;
            }
        }
        if (literal >= 3) {
            unsigned char code[2] = {0, (unsigned char)literal};
            imgcodec_fixture_bmp_put(out, code, 2);
            unsigned char bytes[256] = {0};
            uint32_t count = rle4 ? (literal + 1) / 2 : literal;
            for (uint32_t i = 0; i < literal; i++) {
                if (rle4) bytes[i / 2] |= (unsigned char)((row[x + i] & 15) << (i & 1 ? 0 : 4));
                else bytes[i] = row[x + i];
            }
            imgcodec_fixture_bmp_put(out, bytes, (count + 1) & ~1u);
            x += literal;
        } else {
            unsigned char index = rle4 ? (unsigned char)((row[x] & 15) << 4 | (run > 1 ? row[x + 1] & 15 : 0)) : row[x];
            unsigned char code[2] = {(unsigned char)run, index};
            imgcodec_fixture_bmp_put(out, code, 2);
            x += run;
        }
    }
}

// Writes uncompressed rows: packed indices, BGR, or pixels packed into the masks.
static void imgcodec_fixture_bmp_rows(imgcodec_fixture_bmp *out, int top_down, const uint32_t masks[4], int rgb32) {
    uint32_t width = out->width;
    int bpp = out->bpp;
    size_t stride = ((size_t)width * (size_t)bpp + 31) / 32 * 4;
    for (uint32_t stored = 0; stored < out->height; stored++) {
        uint32_t y = top_down ? stored : out->height - 1 - stored;
        unsigned char *row = out->data + out->size;
        memset(row, 0, stride);
        for (uint32_t x = 0; x < width; x++) {
            if (bpp <= 8) {
                unsigned index = out->pixels[(size_t)y * width + x] & ((1u << bpp) - 1);
                size_t bit = (size_t)x * (size_t)bpp;
                row[bit / 8] |= (unsigned char)(index << (8 - bpp - (int)(bit % 8)));
                continue;
            }
            const unsigned char *rgba = out->pixels + ((size_t)y * width + x) * 4;
            unsigned char *p = row + (size_t)x * (size_t)(bpp / 8);
            if (bpp == 24) {
                p[0] = rgba[2];
                p[1] = rgba[1];
                p[2] = rgba[0];
                continue;
            }
            uint32_t value = 0;
            for (int c = 0; c < 4; c++) value |= imgcodec_fixture_bmp_field(rgba[c], masks[c]);
            if (rgb32) value |= (uint32_t)rgba[3] << 24;  // the byte BI_RGB ignores
            for (int i = 0; i < bpp / 8; i++) p[i] = (unsigned char)(value >> (8 * i));
        }
        out->size += stride;
    }
}

// Refuses options the encoder cannot write; returns a message or NULL.
static const char *imgcodec_fixture_bmp_check(uint32_t width, uint32_t height, const imgcodec_test_bmp_options *o, int header_size) {
    int bpp = o->bits_per_pixel, c = o->compression;
    if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) return "bits_per_pixel must be 1, 2, 4, 8, 16, 24 or 32";
    if (header_size != 12 && header_size != 40 && header_size != 52 && header_size != 56 && header_size != 108 && header_size != 124) {
        return "header_size must be 12, 40, 52, 56, 108 or 124";
    }
    if (width == 0 || height == 0 || (uint64_t)width * height > IMGCODEC_FIXTURE_BMP_MAX_PIXELS) return "bad fixture size";
    if (header_size == 12 && (width > 65535 || height > 65535 || c != IMGCODEC_TEST_BMP_RGB || o->top_down)) {
        return "an OS/2 header needs 16-bit sizes, bottom-up rows and no compression";
    }
    if ((c == IMGCODEC_TEST_BMP_RLE8 && bpp != 8) || (c == IMGCODEC_TEST_BMP_RLE4 && bpp != 4)) return "RLE8 needs 8 bits, RLE4 4 bits per pixel";
    if ((c == IMGCODEC_TEST_BMP_BITFIELDS || c == IMGCODEC_TEST_BMP_ALPHABITFIELDS) && bpp != 16 && bpp != 32) return "bit fields need 16 or 32 bits per pixel";
    if (c != IMGCODEC_TEST_BMP_RGB && c != IMGCODEC_TEST_BMP_RLE8 && c != IMGCODEC_TEST_BMP_RLE4 &&
        c != IMGCODEC_TEST_BMP_BITFIELDS && c != IMGCODEC_TEST_BMP_ALPHABITFIELDS) {
        return "unknown compression";
    }
    if (o->palette_entries < 0 || o->palette_entries > 256 || (o->palette_entries > 0 && o->palette == NULL)) return "bad palette";
    return NULL;
}

// Writes the file header, the info header for `header_size`, the masks after a 40-byte header, the palette and the gap.
static void imgcodec_fixture_bmp_headers(imgcodec_fixture_bmp *out, const imgcodec_test_bmp_options *o, int header_size,
                                         const uint32_t masks[4]) {
    int bpp = o->bits_per_pixel;
    imgcodec_fixture_bmp_put(out, "BM", 2);
    imgcodec_fixture_bmp_put32(out, 0);  // bfSize, patched
    imgcodec_fixture_bmp_put32(out, 0);  // reserved
    imgcodec_fixture_bmp_put32(out, 0);  // bfOffBits, patched
    imgcodec_fixture_bmp_put32(out, (uint32_t)header_size);
    uint32_t colors = bpp <= 8 && o->palette_entries != (1 << bpp) ? (uint32_t)o->palette_entries : 0;
    if (header_size == 12) {
        imgcodec_fixture_bmp_put16(out, out->width);
        imgcodec_fixture_bmp_put16(out, out->height);
        imgcodec_fixture_bmp_put16(out, 1);
        imgcodec_fixture_bmp_put16(out, (uint32_t)bpp);
    } else {
        imgcodec_fixture_bmp_put32(out, out->width);
        imgcodec_fixture_bmp_put32(out, o->top_down ? (uint32_t)-(int64_t)out->height : out->height);
        imgcodec_fixture_bmp_put16(out, 1);
        imgcodec_fixture_bmp_put16(out, (uint32_t)bpp);
        imgcodec_fixture_bmp_put32(out, (uint32_t)o->compression);
        imgcodec_fixture_bmp_put32(out, 0);     // biSizeImage, patched
        imgcodec_fixture_bmp_put32(out, 2835);  // 72 dpi
        imgcodec_fixture_bmp_put32(out, 2835);
        imgcodec_fixture_bmp_put32(out, colors);
        imgcodec_fixture_bmp_put32(out, 0);     // biClrImportant
        for (int c = 0; c < 4 && 40 + 4 * c < header_size; c++) imgcodec_fixture_bmp_put32(out, masks[c]);
        if (header_size >= 108) {
            imgcodec_fixture_bmp_put32(out, 0x73524742u);  // LCS_sRGB
            for (int i = 0; i < 12; i++) imgcodec_fixture_bmp_put32(out, 0);  // endpoints and gammas
        }
        if (header_size >= 124) {
            imgcodec_fixture_bmp_put32(out, 4);  // LCS_GM_IMAGES
            for (int i = 0; i < 3; i++) imgcodec_fixture_bmp_put32(out, 0);  // no profile, reserved
        }
        int extra = header_size != 40 ? 0 : o->compression == IMGCODEC_TEST_BMP_BITFIELDS ? 3
                  : o->compression == IMGCODEC_TEST_BMP_ALPHABITFIELDS ? 4 : 0;
        for (int c = 0; c < extra; c++) imgcodec_fixture_bmp_put32(out, masks[c]);
    }
    for (int i = 0; i < o->palette_entries; i++) {
        const unsigned char *rgb = o->palette + 3 * i;
        unsigned char entry[4] = {rgb[2], rgb[1], rgb[0], 0};
        imgcodec_fixture_bmp_put(out, entry, header_size == 12 ? 3 : 4);
    }
    memset(out->data + out->size, 0, o->gap);
    out->size += o->gap;
}

// Writes the fields the options override (after the true values are in place).
static void imgcodec_fixture_bmp_override(imgcodec_fixture_bmp *out, const imgcodec_test_bmp_options *o, int header_size) {
    uint32_t set = o->overrides;
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_FILE_SIZE) imgcodec_fixture_bmp_patch32(out, 2, o->file_size);
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_DATA_OFFSET) imgcodec_fixture_bmp_patch32(out, 10, o->data_offset);
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_HEADER_SIZE) imgcodec_fixture_bmp_patch32(out, 14, o->header_size_field);
    if (header_size == 12) {
        unsigned char *p = out->data;
        if (set & IMGCODEC_TEST_BMP_OVERRIDE_WIDTH) { p[18] = (unsigned char)o->width; p[19] = (unsigned char)(o->width >> 8); }
        if (set & IMGCODEC_TEST_BMP_OVERRIDE_HEIGHT) { p[20] = (unsigned char)o->height; p[21] = (unsigned char)(o->height >> 8); }
        if (set & IMGCODEC_TEST_BMP_OVERRIDE_BIT_COUNT) { p[24] = (unsigned char)o->bit_count; p[25] = (unsigned char)(o->bit_count >> 8); }
        return;
    }
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_WIDTH) imgcodec_fixture_bmp_patch32(out, 18, (uint32_t)o->width);
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_HEIGHT) imgcodec_fixture_bmp_patch32(out, 22, (uint32_t)o->height);
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_BIT_COUNT) {
        out->data[28] = (unsigned char)o->bit_count;
        out->data[29] = (unsigned char)(o->bit_count >> 8);
    }
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_COMPRESSION) imgcodec_fixture_bmp_patch32(out, 30, o->compression_field);
    if (set & IMGCODEC_TEST_BMP_OVERRIDE_COLORS_USED) imgcodec_fixture_bmp_patch32(out, 46, o->colors_used);
}

// In C beside the decoder it feeds; see the header for the pixel layout.
int imgcodec_test_encode_bmp(const unsigned char *pixels, uint32_t width, uint32_t height,
                             const imgcodec_test_bmp_options *options,
                             unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    int header_size = options->header_size == 0 ? 40 : options->header_size;
    const char *problem = imgcodec_fixture_bmp_check(width, height, options, header_size);
    if (problem != NULL) {
        snprintf(message, message_size, "BMP fixture: %s", problem);
        return IMGCODEC_INVALID;
    }
    int bpp = options->bits_per_pixel;
    int rle = options->compression == IMGCODEC_TEST_BMP_RLE8 || options->compression == IMGCODEC_TEST_BMP_RLE4;
    size_t stride = ((size_t)width * (size_t)bpp + 31) / 32 * 4;
    size_t pixel_bytes = rle ? ((size_t)width * 3 + 8) * height + 16 : stride * height;
    size_t capacity = 14 + 124 + 16 + 256 * 4 + (size_t)options->gap + pixel_bytes;
    imgcodec_fixture_bmp out = {.data = malloc(capacity), .pixels = pixels, .width = width, .height = height, .bpp = bpp};
    if (out.data == NULL) {
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    uint32_t masks[4] = {options->red_mask, options->green_mask, options->blue_mask, options->alpha_mask};
    int bitfields = options->compression == IMGCODEC_TEST_BMP_BITFIELDS || options->compression == IMGCODEC_TEST_BMP_ALPHABITFIELDS;
    uint32_t defaults[4] = {bpp == 16 ? 0x7C00u : 0xFF0000u, bpp == 16 ? 0x03E0u : 0xFF00u, bpp == 16 ? 0x001Fu : 0xFFu, 0};
    const uint32_t *packing = bitfields && (masks[0] | masks[1] | masks[2] | masks[3]) != 0 ? masks : defaults;
    imgcodec_fixture_bmp_headers(&out, options, header_size, bitfields ? packing : masks);
    size_t data_offset = out.size;
    if (rle) {
        imgcodec_fixture_bmp_rle(&out, options->compression == IMGCODEC_TEST_BMP_RLE4, options->rle_skips, options->top_down);
    } else {
        imgcodec_fixture_bmp_rows(&out, options->top_down, packing, bpp == 32 && !bitfields);
    }
    imgcodec_fixture_bmp_patch32(&out, 2, (uint32_t)out.size);
    imgcodec_fixture_bmp_patch32(&out, 10, (uint32_t)data_offset);
    if (header_size > 12) imgcodec_fixture_bmp_patch32(&out, 34, (uint32_t)(out.size - data_offset));
    imgcodec_fixture_bmp_override(&out, options, header_size);
    *data = out.data;
    *size = out.size;
    return IMGCODEC_OK;
}
