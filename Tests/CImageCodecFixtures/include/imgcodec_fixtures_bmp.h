#ifndef IMGCODEC_FIXTURES_BMP_H
#define IMGCODEC_FIXTURES_BMP_H
// A hand-written BMP encoder for imgfetch's tests: every layout the decoder reads, plus raw
// control over the header fields that hostile files lie about.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Compression of a fixture BMP: the biCompression values themselves.
enum {
    IMGCODEC_TEST_BMP_RGB = 0,
    IMGCODEC_TEST_BMP_RLE8 = 1,            // 8 bits per pixel, bottom-up only
    IMGCODEC_TEST_BMP_RLE4 = 2,            // 4 bits per pixel, bottom-up only
    IMGCODEC_TEST_BMP_BITFIELDS = 3,       // 16 or 32 bits per pixel, with the masks below
    IMGCODEC_TEST_BMP_ALPHABITFIELDS = 6,  // as BITFIELDS, with an alpha mask even in a 40-byte header
};

/// Header fields `overrides` can replace (bits), and their byte offsets in the file for byte
/// surgery (little-endian): bfSize 2, bfOffBits 10, biSize 14, biWidth 18, biHeight 22, biPlanes 26,
/// biBitCount 28, biCompression 30, biSizeImage 34, biClrUsed 46 (BITMAPINFOHEADER and later).
enum {
    IMGCODEC_TEST_BMP_OVERRIDE_FILE_SIZE = 1,    // bfSize ← file_size
    IMGCODEC_TEST_BMP_OVERRIDE_DATA_OFFSET = 2,  // bfOffBits ← data_offset
    IMGCODEC_TEST_BMP_OVERRIDE_HEADER_SIZE = 4,  // biSize ← header_size_field (the layout written stays header_size)
    IMGCODEC_TEST_BMP_OVERRIDE_COLORS_USED = 8,  // biClrUsed ← colors_used (the palette written stays as given)
    IMGCODEC_TEST_BMP_OVERRIDE_WIDTH = 16,       // biWidth ← width (the rows written stay as wide as the pixels)
    IMGCODEC_TEST_BMP_OVERRIDE_HEIGHT = 32,      // biHeight ← height, sign included (the rows written stay)
    IMGCODEC_TEST_BMP_OVERRIDE_BIT_COUNT = 64,   // biBitCount ← bit_count
    IMGCODEC_TEST_BMP_OVERRIDE_COMPRESSION = 128,  // biCompression ← compression_field
};

typedef struct imgcodec_test_bmp_options {
    int bits_per_pixel;      // 1, 2, 4, 8 (palette), 16, 24, 32
    int header_size;         // 40 (also when 0), 12 (OS/2 core), 52 and 56 (40 + RGB(A) masks), 108 (V4), 124 (V5)
    int top_down;            // negative height, rows stored top first (not with RLE)
    int compression;         // IMGCODEC_TEST_BMP_*
    uint32_t red_mask, green_mask, blue_mask, alpha_mask;  // bit fields; all four 0: 5-5-5 (16) or 8-8-8 (32).
                             // Headers of 56 bytes and more carry all four even without bit fields.
    const unsigned char *palette;  // palette_entries RGB triples (at most 256), written as BGRX (BGR for OS/2)
    int palette_entries;     // also written as biClrUsed (0 when it is 2^bits_per_pixel)
    int rle_skips;           // RLE: runs of index 0 are skipped with delta, end-of-line and end-of-bitmap codes
                             // (they decode as index 0, so the image is unchanged); otherwise every pixel is coded
    uint32_t gap;            // bytes of zeros between the palette (or masks) and the pixel data
    uint32_t overrides;      // IMGCODEC_TEST_BMP_OVERRIDE_* bits: write the values below instead of the true ones
    uint32_t file_size, data_offset, header_size_field, colors_used;
    int32_t width, height;
    uint16_t bit_count;
    uint32_t compression_field;
} imgcodec_test_bmp_options;

// In C beside the decoder it feeds. Encodes a width × height BMP into a malloc'd buffer freed with
// imgcodec_free. `pixels` holds rows top first, packed without padding: one palette index a pixel
// for 1...8 bits per pixel; RGBA (4 bytes a pixel) for 16, 24 and 32, each channel stored as
// round(v × max / 255) in its field (alpha only where there is an alpha field, or as the ignored
// fourth byte of 32-bit BI_RGB). A value v = round(k × 255 / max) survives the round trip exactly.
// Fails with IMGCODEC_INVALID and a message for options it cannot encode.
int imgcodec_test_encode_bmp(const unsigned char *pixels, uint32_t width, uint32_t height,
                             const imgcodec_test_bmp_options *options,
                             unsigned char **data, size_t *size, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
