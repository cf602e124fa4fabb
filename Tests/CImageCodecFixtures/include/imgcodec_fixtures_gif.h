#ifndef IMGCODEC_FIXTURES_GIF_H
#define IMGCODEC_FIXTURES_GIF_H
// GIF fixture encoder for imgfetch's tests, on giflib's EGif* encoder: frames of palette indices
// placed on a logical screen, with global or local color tables, transparency and interlacing,
// plus the knobs the hostile cases need (a descriptor that lies about the frame's size, a file
// with no color table at all, a cheap animation of many copies of one frame).
//
// Hostile cases derived by byte surgery on a valid fixture of `size` bytes:
// - truncation: keep the first n < size bytes (the last byte is the trailer 0x3B, which is required);
// - another format's body: "GIF89a" followed by, say, a PNG file minus its 8-byte signature.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One frame of a fixture GIF. Zero-initialized fields mean: global color table, opaque, not
/// interlaced, descriptor telling the truth.
typedef struct imgcodec_test_gif_frame {
    const unsigned char *indices;  // width × height palette indices, rows top to bottom in display order
                                   // (the encoder reorders them when interlaced); NULL: every pixel is fill_index.
                                   // giflib masks each index to the LZW code size (at least 2 bits), so with a
                                   // 2-entry table indices 2 and 3 still reach the file: indices beyond the table.
    unsigned char fill_index;
    uint32_t left, top;            // position on the logical screen (at most 65535)
    uint32_t width, height;        // size of the data encoded (1...65535)
    const unsigned char *palette;  // local color table of palette_entries RGB triples; NULL: use the global one
    int palette_entries;           // 2, 4, 8, 16, 32, 64, 128 or 256
    int has_transparent;           // adds a graphic control extension naming transparent_index
    int transparent_index;         // 0...255
    int interlaced;                // stores the rows in GIF's four interlaced passes
    int declare_size;              // the descriptor says declared_width × declared_height instead of width × height
    uint32_t declared_width;       //   (0 makes an empty frame; more than width × height makes LZW data that ends
    uint32_t declared_height;      //   early, the cheap decompression bomb)
} imgcodec_test_gif_frame;

typedef struct imgcodec_test_gif_options {
    uint32_t screen_width;           // logical screen (0...65535)
    uint32_t screen_height;
    const unsigned char *palette;    // global color table of palette_entries RGB triples; NULL: none (then every
    int palette_entries;             // frame needs a local one); entries as for frames
    int background_index;            // background color index written in the screen descriptor
    int remove_global_palette;       // cut the global table out after encoding: frames without a local table then
                                     // have no color table at all (giflib refuses to encode that directly)
    uint32_t repeat_last_frame;      // append this many more copies of the last frame (with its graphic control
                                     // extension): 100,000 frames of 1×1 cost ~1.5 MB and no encoding time
} imgcodec_test_gif_options;

// In C because it drives giflib's encoder. Encodes `frame_count` frames (at least 1) into a malloc'd
// GIF89a buffer freed with imgcodec_free, ending with the trailer. Returns IMGCODEC_OK, or
// IMGCODEC_INVALID with a message for options giflib cannot encode.
int imgcodec_test_encode_gif(const imgcodec_test_gif_options *options, const imgcodec_test_gif_frame *frames,
                             uint32_t frame_count, unsigned char **data, size_t *size,
                             char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
