#ifndef IMGCODEC_BMP_INTERNAL_H
#define IMGCODEC_BMP_INTERNAL_H
// Shared by the BMP decoder's sources (bmp_decoder.c, bmp_rle.c); not part of the public header.

#include "internal.h"

/// BMP compression codes (biCompression).
enum {
    IMGCODEC_BMP_RGB = 0,
    IMGCODEC_BMP_RLE8 = 1,
    IMGCODEC_BMP_RLE4 = 2,
    IMGCODEC_BMP_BITFIELDS = 3,
    IMGCODEC_BMP_JPEG = 4,
    IMGCODEC_BMP_PNG = 5,
    IMGCODEC_BMP_ALPHABITFIELDS = 6,
};

/// One channel of a 16- or 32-bit pixel: where its bits lie and their largest value (0: absent).
typedef struct imgcodec_bmp_field {
    uint32_t shift;
    uint32_t max;
    int bits;
} imgcodec_bmp_field;

/// Everything a BMP decode holds, hung off decoder->state.
typedef struct imgcodec_bmp_state {
    uint32_t width, height;
    int top_down;
    int bpp;
    uint32_t compression;
    uint64_t data_offset;   // where the pixel data starts (bfOffBits)
    uint64_t file_size;
    uint64_t consumed;      // bytes read sequentially so far (the headers and palette)
    uint64_t stride;        // bytes of one stored row, padded to 4 (uncompressed)
    uint64_t row_data;      // bytes of one row's pixels, without the padding
    int alpha;              // an alpha channel: a non-zero alpha mask with bit fields
    int wide;               // a field wider than 8 bits: 16-bit output samples
    int pixels;             // IMGCODEC_MODE_PIXELS: rows are converted (else only read)
    imgcodec_bmp_field field[4];      // red, green, blue, alpha
    unsigned char scale[4][256];      // field value → 8 bits, for fields of at most 8 bits
    unsigned char palette[256][3];    // RGB; entries past the stored ones stay black
    unsigned char *window;            // stored rows window_first … window_first + window_count - 1
    uint32_t window_rows, window_first, window_count;
    unsigned char *indices;           // RLE in PIXELS mode: width × height indices, top row first
} imgcodec_bmp_state;

// bmp_rle.c: RLE8 and RLE4.

// Skips sequentially to the pixel data and decodes the RLE stream; in C because failures longjmp.
void imgcodec_bmp_start_rle(imgcodec_decoder *decoder);

#endif
