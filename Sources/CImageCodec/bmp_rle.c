#include <stdlib.h>
#include "bmp_internal.h"

// BMP's RLE8 and RLE4, decoded whole: the rows come bottom-up and deltas skip about, so converting
// keeps one palette index per pixel; verifying only walks the stream.

// Decodes the whole RLE stream from the file's current position: into state->indices when set,
// else only checking it. Every command consumes input and only moves forward, so the work is
// bounded by the file size plus width × height.
static void imgcodec_bmp_decode_rle(imgcodec_decoder *decoder) {
    imgcodec_bmp_state *state = decoder->state;
    imgcodec_source *source = &decoder->source;
    int rle4 = state->compression == IMGCODEC_BMP_RLE4;
    uint32_t width = state->width, height = state->height;
    uint32_t x = 0, y = 0;  // y counts rows from the bottom, as stored
    unsigned char pair[2];
    while (y < height) {
        if (imgcodec_source_read(source, &decoder->failure, pair, 2) != 2) break;
        unsigned char *row = state->indices != NULL ? state->indices + (size_t)(height - 1 - y) * width : NULL;
        if (pair[0] > 0) {  // encoded run: pair[0] pixels of one index (RLE4: two alternating)
            uint32_t count = pair[0] < width - x ? pair[0] : width - x;
            for (uint32_t i = 0; row != NULL && i < count; i++) {
                row[x + i] = rle4 ? (i & 1 ? pair[1] & 15 : pair[1] >> 4) : pair[1];
            }
            x += count;
        } else if (pair[1] == 0) {  // end of line
            x = 0;
            y++;
        } else if (pair[1] == 1) {  // end of bitmap
            return;
        } else if (pair[1] == 2) {  // delta: right and up, skipped pixels stay index 0
            unsigned char delta[2];
            if (imgcodec_source_read(source, &decoder->failure, delta, 2) != 2) break;
            x = delta[0] < width - x ? x + delta[0] : width;
            y += delta[1];
        } else {  // absolute run: pair[1] literal indices, padded to a 16-bit boundary
            uint32_t count = pair[1];
            uint32_t bytes = rle4 ? (count + 1) / 2 : count;
            unsigned char literal[256];
            if (imgcodec_source_read(source, &decoder->failure, literal, (bytes + 1) & ~1u) != ((bytes + 1) & ~1u)) break;
            for (uint32_t i = 0; i < count && x < width; i++, x++) {
                if (row != NULL) row[x] = rle4 ? (i & 1 ? literal[i / 2] & 15 : literal[i / 2] >> 4) : literal[i];
            }
        }
    }
    if (y < height) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated RLE data (row %u of %u)",
                      height - y, height);
    }
}

// Skips sequentially to the pixel data and decodes the RLE stream; in C because failures longjmp.
void imgcodec_bmp_start_rle(imgcodec_decoder *decoder) {
    imgcodec_bmp_state *state = decoder->state;
    unsigned char skipped[4096];
    while (state->consumed < state->data_offset) {
        uint64_t left = state->data_offset - state->consumed;
        size_t chunk = left < sizeof skipped ? (size_t)left : sizeof skipped;
        if (imgcodec_source_read(&decoder->source, &decoder->failure, skipped, chunk) != chunk) {
            imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated before the pixel data");
        }
        state->consumed += chunk;
    }
    if (state->pixels) {
        state->indices = calloc((size_t)state->width * state->height, 1);
        if (state->indices == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    }
    imgcodec_bmp_decode_rle(decoder);
}
