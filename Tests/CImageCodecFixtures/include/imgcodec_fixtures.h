#ifndef IMGCODEC_FIXTURES_H
#define IMGCODEC_FIXTURES_H
// Fixture encoders and a reference decoder for imgfetch's tests: tests generate every image they
// decode (and then damage it), so no binary fixtures live in the repository.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Stored color model of a fixture JPEG (and the layout of the pixels given to the encoder).
enum {
    IMGCODEC_TEST_JPEG_RGB = 0,   // pixels RGB, stored YCbCr
    IMGCODEC_TEST_JPEG_GRAY = 1,  // pixels gray, stored gray
    IMGCODEC_TEST_JPEG_CMYK = 2,  // pixels CMYK, stored CMYK
    IMGCODEC_TEST_JPEG_YCCK = 3,  // pixels CMYK, stored YCCK
};

typedef struct imgcodec_test_jpeg_options {
    int quality;             // 1...100
    int progressive;         // libjpeg's standard progressive script
    int arithmetic;          // arithmetic coding instead of Huffman
    int color_space;         // IMGCODEC_TEST_JPEG_*
    int no_adobe_marker;     // CMYK without the Adobe marker (so the samples are not inverted)
    int full_chroma;         // 4:4:4 instead of libjpeg's default 4:2:0
    int orientation;         // 1...8 adds an APP1 Exif block with that orientation; 0 adds none
    int exif_little_endian;  // "II" instead of "MM" byte order in the Exif block
    int many_scans;          // progressive with one scan per coefficient and bit: 1 + components × 693 scans
} imgcodec_test_jpeg_options;

typedef struct imgcodec_test_png_options {
    int color_type;                       // PNG_COLOR_TYPE_* value: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
    int bit_depth;                        // 1, 2, 4, 8 or 16
    int interlaced;                       // Adam7
    const unsigned char *palette;         // palette_entries RGB triples
    int palette_entries;
    const unsigned char *palette_alpha;   // tRNS for palette images
    int palette_alpha_entries;
    int transparent_color;                // tRNS for gray/RGB images: the values below
    uint16_t transparent_gray, transparent_red, transparent_green, transparent_blue;
    int text_chunks;                      // this many tEXt chunks before IDAT
    int orientation;                      // 1...8 adds an eXIf chunk before IDAT
    int apng;                             // acTL/fcTL before IDAT and fcTL/fdAT after it (a second frame)
} imgcodec_test_png_options;

// In C because libjpeg's encoder reports errors by longjmp. Encodes `pixels` (rows packed without
// padding, layout per options->color_space) into a malloc'd buffer freed with imgcodec_free.
int imgcodec_test_encode_jpeg(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_jpeg_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size);

// In C because libjpeg's encoder reports errors by longjmp. Streams a baseline RGB JPEG of a
// deterministic pattern to `fd` row by row, so huge fixtures need no pixel buffer.
// orientation 1...8 adds an Exif block (0: none).
int imgcodec_test_write_pattern_jpeg(int fd, uint32_t width, uint32_t height, int quality, int orientation,
                                     char *message, size_t message_size);

// In C because libjpeg's decoder reports errors by longjmp. libjpeg's own decode with default
// settings, scaled by scale_num/8: RGB for YCbCr, RGB and gray files, raw CMYK (components 4)
// for CMYK and YCCK files. The malloc'd pixels are freed with imgcodec_free.
int imgcodec_test_decode_jpeg(const unsigned char *data, size_t size, int scale_num,
                              unsigned char **pixels, uint32_t *width, uint32_t *height, int *components,
                              char *message, size_t message_size);

// In C because libpng's encoder reports errors by longjmp. `rows` holds height rows of
// (width × bits per pixel + 7) / 8 bytes each, in PNG's packed layout (16-bit samples big-endian).
int imgcodec_test_encode_png(const unsigned char *rows, uint32_t width, uint32_t height,
                             const imgcodec_test_png_options *options,
                             unsigned char **data, size_t *size, char *message, size_t message_size);

// In C because the buffers above come from C's allocator.
void imgcodec_free(void *pointer);

/// Bytes malloc has handed out and not taken back, over every arena and mmapped chunk: the
/// tests' leak measure (resident memory also moves with page residency and other threads' stacks).
size_t imgcodec_test_heap_in_use(void);

#ifdef __cplusplus
}
#endif

#endif
