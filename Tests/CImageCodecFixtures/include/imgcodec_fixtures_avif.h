#ifndef IMGCODEC_FIXTURES_AVIF_H
#define IMGCODEC_FIXTURES_AVIF_H
// AVIF fixture encoders for imgfetch's tests (libavif with aom), including the hostile shapes the
// decoder must refuse. Buffers are freed with imgcodec_free (imgcodec_fixtures.h).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How a fixture AVIF stores its samples (AV1 chroma layout).
enum {
    IMGCODEC_TEST_AVIF_YUV444 = 0,
    IMGCODEC_TEST_AVIF_YUV422 = 1,
    IMGCODEC_TEST_AVIF_YUV420 = 2,
    IMGCODEC_TEST_AVIF_YUV400 = 3,  // monochrome: gray input is written to the Y plane as is
};

typedef struct imgcodec_test_avif_options {
    int channels;        // samples per pixel given: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA
    int bit_depth;       // 8, 10 or 12 (AV1 depth); pixels are bytes at 8, else native-endian uint16 of bit_depth bits
    int yuv_format;      // IMGCODEC_TEST_AVIF_YUV*; gray input into 444/422/420 is stored as R = G = B
    int lossless;        // quantizer 0 for color and alpha, and (444 only) the identity matrix: 444 RGB and 400
                         // gray decode to exactly the input
    int quantizer;       // 1...63 for lossy color (0: 20); alpha is always lossless
    int limited_range;   // limited ("video") range YUV instead of full range
    int frames;          // 0 or 1: a still image; 2 or more: an image sequence ('avis' with a track)
    int same_pixels;     // every frame of a sequence is `pixels`; else `pixels` holds `frames` images back to back
    uint32_t claimed_frames;  // > 0: a sequence (2 frames of `pixels` when frames < 2) whose sample table (stsc,
                              // stsz) is rewritten in place to claim this many samples, all the size of the
                              // first, in one chunk: the 100,000-frame case; libavif's imageCountLimit (our
                              // max_frames) refuses it at parse, and without that cap the samples run past the
                              // end of the file
    int grid_columns;    // with grid_rows, both >= 1 and not both 1: a grid image of that many cells, each
    int grid_rows;       // width / columns × height / rows pixels (cells must be at least 64×64 and divide evenly)
    int orientation;     // 2...8: irot/imir boxes equivalent to that EXIF orientation; 0 or 1: none
    uint32_t declared_width;   // with declared_height, > 0: rewrite the container's size (every ispe and tkhd
    uint32_t declared_height;  // that says width × height) to this, leaving the AV1 data as encoded: a header
                               // that lies; libavif scales decoded frames to the declared size, so a
                               // small file declaring 12000×12000 is a cheap decompression bomb
    int speed;           // encoder speed 0...10 (0: 10, the fastest)
    int rav1e;           // encode with rav1e instead of aom, for frames of more than about 45 Mpx: libaom 3.6's
                         // (e.g. 7000×7000) do not decode with dav1d 1.0. rav1e's quantizer 0 is not lossless.
} imgcodec_test_avif_options;

// In C because libavif is a C library. Encodes `pixels` (rows packed without padding, layout per
// options) into a malloc'd AVIF freed with imgcodec_free.
int imgcodec_test_encode_avif(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_avif_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size);

// In C beside imgcodec_test_encode_avif, whose output it reuses. Builds a grid image of
// columns × rows cells (1...256 each, at most 65535 cells in all) that all point at the same
// bytes: one lossless 8-bit 4:4:4 RGB cell of cell_width × cell_height encoded once, whose pixel
// (x, y) is R = x × 255 / cell_width, G = y × 255 / cell_height, B = (x + y) mod 256. A file of
// about 50 bytes per cell asks libavif for one AV1 decoder per cell (~450 KB each): the grid
// bomb. With cells of at least 64×64 it is a valid grid (columns × cell_width wide) that decodes
// to that cell repeated.
int imgcodec_test_encode_avif_shared_grid(uint32_t columns, uint32_t rows, uint32_t cell_width, uint32_t cell_height,
                                          unsigned char **data, size_t *size, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
