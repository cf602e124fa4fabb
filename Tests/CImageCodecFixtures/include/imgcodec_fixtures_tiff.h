#ifndef IMGCODEC_FIXTURES_TIFF_H
#define IMGCODEC_FIXTURES_TIFF_H
// TIFF fixture encoder (libtiff) and in-place editors that make hostile files from valid ones.
// Buffers are freed with imgcodec_free (imgcodec_fixtures.h).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How a fixture TIFF is stored. Zero-initialized fields take the defaults noted.
typedef struct imgcodec_test_tiff_options {
    int samples;               // samples per pixel: color samples (1 gray or palette, 3 RGB or YCbCr, 4 CMYK)
                               // plus extra samples; 0: 1
    int bits;                  // bits per sample: 1, 2, 4, 8 or 16 (JPEG: 8); 0: 8
    int photometric;           // PHOTOMETRIC_*: 0 min-is-white, 1 min-is-black, 2 RGB, 3 palette, 5 separated (CMYK),
                               // 6 YCbCr (JPEG only: the pixels are RGB and libjpeg converts them)
    int planar_separate;       // one plane per sample (PLANARCONFIG_SEPARATE) instead of interleaved samples
    int compression;           // COMPRESSION_*: 0 or 1 none, 5 LZW, 8 deflate, 32773 PackBits, 7 JPEG
    int predictor;             // 2: horizontal differencing (LZW and deflate, 8 and 16 bits)
    int jpeg_quality;          // 1...100; 0: 90
    uint32_t rows_per_strip;   // 0: libtiff's default (strips of about 8 KiB); ignored when tiled
    uint32_t tile_width;       // both nonzero: tiled, tiles of tile_width × tile_height (multiples of 16)
    uint32_t tile_height;
    int extra_samples;         // the ExtraSamples tag's first entry (later ones unspecified): 0 no tag,
                               // 1 associated alpha, 2 unassociated alpha, 3 unspecified
    int orientation;           // 1...8 writes the Orientation tag; 0 none
    const uint16_t *colormap;  // palette: 3 × 2^bits 16-bit entries, all reds, then greens, then blues; NULL: a fixed ramp
    uint32_t pages;            // 0 or 1: one page; N: the image N times, as N pages
    int big_endian;            // "MM" byte order instead of "II"
} imgcodec_test_tiff_options;

// In C because libtiff writes the file. `pixels` holds height rows of (width × samples × bits + 7) / 8
// bytes: samples interleaved whatever planar_separate says (the encoder splits the planes),
// packed MSB first below 8 bits, 16-bit samples in native byte order. NULL encodes all-zero
// samples row by row without a pixel buffer (for huge decompression-bomb fixtures). The result
// is a malloc'd buffer freed with imgcodec_free.
int imgcodec_test_encode_tiff(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_tiff_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size);

// In C beside the encoder. The offset of IFD `index` (0: the first) of a classic TIFF, or 0 when
// the chain is shorter or points outside the buffer.
uint32_t imgcodec_test_tiff_ifd_offset(const unsigned char *data, size_t size, uint32_t index);

// In C beside the encoder, for lying files. Overwrites value `element` of tag `tag` (SHORT or
// LONG, stored inline or not) in IFD `index` with `value`; tag 0 overwrites that IFD's next-IFD
// offset instead (point it at an earlier IFD for a loop). Examples: 279 (StripByteCounts) past
// the end of the file, 273 (StripOffsets), 256/257 (ImageWidth/ImageLength), 258
// (BitsPerSample), 259 (Compression). Returns IMGCODEC_OK, or IMGCODEC_INVALID when the IFD, the
// tag or the element is not there or the tag is not SHORT or LONG.
int imgcodec_test_tiff_patch(unsigned char *data, size_t size, uint32_t index, uint16_t tag, uint32_t element,
                             uint32_t value);

#ifdef __cplusplus
}
#endif

#endif
