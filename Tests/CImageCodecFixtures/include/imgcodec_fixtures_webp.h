#ifndef IMGCODEC_FIXTURES_WEBP_H
#define IMGCODEC_FIXTURES_WEBP_H
// WebP fixture encoders for imgfetch's tests. Every buffer they return is malloc'd: free it with
// imgcodec_free (imgcodec_fixtures.h). Hostile files come from valid ones by byte surgery (all
// integers little-endian; offsets from the start of the file):
//   - RIFF size larger than the file: raise the LE32 at offset 4 ("invalid WebP: truncated (the
//     RIFF header claims … bytes, the file has …)"); cutting the file short does the same.
//   - Truncation inside the RIFF size: cut the file, then set offset 4 to (new size - 8).
//   - Zero-size frame: a lossy still without alpha or orientation is RIFF + "VP8 " chunk at 12;
//     its width (14 bits) is the LE16 at offset 26, its height at 28.
//   - VP8X canvas: files with alpha, an orientation or animation start with a VP8X chunk at 12;
//     canvas width - 1 is the LE24 at offset 24, height - 1 at 27 (a still image's canvas must
//     match its bitstream; an animation's canvas is checked against the limits).
//   - Another format behind the magic: keep the 12-byte "RIFF" size "WEBP" header, replace the rest.
//   - Animations of many frames, without frames, with frames off the canvas, and decompression
//     bombs: imgcodec_test_build_webp_animation and imgcodec_test_build_webp_solid below.

#include <stddef.h>
#include <stdint.h>
#include "imgcodec_fixtures.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imgcodec_test_webp_options {
    int lossless;     // VP8L (lossless) instead of VP8 (lossy)
    int quality;      // 0...100: lossy quality; lossless compression effort
    int alpha;        // pixels are RGBA (4 bytes each) instead of RGB (3); lossy keeps alpha in an ALPH chunk
    int exact;        // lossless: keep the RGB of fully transparent pixels (the encoder may change them otherwise)
    int orientation;  // stills: 1...8 adds an EXIF chunk with that orientation (VP8X container); 0 adds none
    int duration_ms;  // animations: each frame's duration (0: 100 ms)
} imgcodec_test_webp_options;

// In C so the Swift tests make one flat call instead of filling libwebp's config and picture
// structs. Encodes one still image from `pixels` (rows packed without padding, RGB or RGBA per
// options->alpha).
int imgcodec_test_encode_webp(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_webp_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size);

// In C so the Swift tests make one flat call instead of driving WebPAnimEncoder. Encodes
// `frame_count` frames of width × height, stored one after another in `frames` (each packed as for imgcodec_test_encode_webp). The encoder
// may store later frames as sub-rectangles; with a single frame it writes a still image, so
// animations need two frames or more. The first frame covers the whole canvas unless its
// borders are fully transparent.
int imgcodec_test_encode_webp_animation(const unsigned char *frames, uint32_t width, uint32_t height,
                                        uint32_t frame_count, const imgcodec_test_webp_options *options,
                                        unsigned char **data, size_t *size, char *message, size_t message_size);

// In C beside the animation builder that embeds it. Writes a still lossless WebP of one color
// (`argb`, 0xAARRGGBB; alpha below 0xFF marks the image as having alpha), width and height
// 1...16384 each, by hand: 34 bytes whatever the size, since every Huffman code has one symbol
// and so each pixel costs no bits. 16384 × 16384 decodes to 1 GiB: a decompression bomb.
int imgcodec_test_build_webp_solid(uint32_t width, uint32_t height, uint32_t argb,
                                   unsigned char **data, size_t *size, char *message, size_t message_size);

/// Layout of a hand-built animation: `frame_count` ANMF chunks that all hold the same solid
/// lossless frame, so 100,000 frames cost about 4.5 MB and no encoding.
typedef struct imgcodec_test_webp_animation_layout {
    uint32_t canvas_width, canvas_height;  // the VP8X canvas, 1...16777216 each (libwebp refuses 2^32 pixels)
    uint32_t frame_width, frame_height;    // every frame, 1...16384 each
    uint32_t frame_x, frame_y;             // every frame's offset (stored halved: odd values round down)
    uint32_t frame_count;                  // 0 writes an animation header without frames
    uint32_t argb;                         // the frames' color, 0xAARRGGBB
} imgcodec_test_webp_animation_layout;

// In C beside imgcodec_test_build_webp_solid. Writes RIFF, VP8X (animation flag, plus alpha when
// argb's alpha is below 0xFF), ANIM (loop forever) and the ANMF chunks, without validating the
// layout: frames off the canvas, or no frames, make invalid files on purpose.
int imgcodec_test_build_webp_animation(const imgcodec_test_webp_animation_layout *layout,
                                       unsigned char **data, size_t *size, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
