#include <stdlib.h>
#include <string.h>
#include <gif_lib.h>
#include "internal.h"
#include "imgcodec_fixtures.h"
#include "imgcodec_fixtures_gif.h"

/// A growable in-memory GIF output for fixtures.
typedef struct imgcodec_fixture_gif {
    unsigned char *data;
    size_t size;
    size_t capacity;
    int failed;  // an allocation failed: giflib ignores some write results, so this is checked at the end
} imgcodec_fixture_gif;

// In C beside the write callback and the frame repeater; grows the output to hold `extra` more bytes.
static int imgcodec_fixture_gif_reserve(imgcodec_fixture_gif *output, size_t extra) {
    if (output->size + extra <= output->capacity) return 1;
    size_t capacity = output->capacity ? output->capacity : 4096;
    while (capacity < output->size + extra) capacity *= 2;
    unsigned char *grown = realloc(output->data, capacity);
    if (grown == NULL) {
        output->failed = 1;
        return 0;
    }
    output->data = grown;
    output->capacity = capacity;
    return 1;
}

// In C because giflib calls it (its OutputFunc); returns the bytes taken, short on failure.
static int imgcodec_fixture_gif_write(GifFileType *gif, const GifByteType *bytes, int length) {
    imgcodec_fixture_gif *output = (imgcodec_fixture_gif *)gif->UserData;
    if (length <= 0) return 0;
    if (!imgcodec_fixture_gif_reserve(output, (size_t)length)) return 0;
    memcpy(output->data + output->size, bytes, (size_t)length);
    output->size += (size_t)length;
    return length;
}

// In C beside the encoder; a giflib color map from RGB triples, or NULL when there are none or the
// count is not a power of two from 2 to 256 (`*invalid` then says which).
static ColorMapObject *imgcodec_fixture_gif_map(const unsigned char *rgb, int entries, int *invalid) {
    if (rgb == NULL || entries == 0) return NULL;
    if (entries < 2 || entries > 256 || (entries & (entries - 1)) != 0) {
        *invalid = 1;
        return NULL;
    }
    GifColorType colors[256];
    for (int i = 0; i < entries; i++) colors[i] = (GifColorType){rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]};
    ColorMapObject *map = GifMakeMapObject(entries, colors);
    if (map == NULL) *invalid = 1;
    return map;
}

// In C beside the encoder; stores a little-endian GIF word.
static void imgcodec_fixture_gif_word(unsigned char *p, uint32_t value) {
    p[0] = (unsigned char)value;
    p[1] = (unsigned char)(value >> 8);
}

// In C because it drives giflib's encoder. Writes one frame: graphic control extension when
// transparent, descriptor, and the rows (in interlaced order when asked); 0 on a giflib error.
static int imgcodec_fixture_gif_frame(GifFileType *gif, imgcodec_fixture_gif *output,
                                      const imgcodec_test_gif_frame *frame, unsigned char *line, const char **problem) {
    static const uint32_t first_row[4] = {0, 4, 2, 1};
    static const uint32_t row_step[4] = {8, 8, 4, 2};
    if (frame->has_transparent) {
        GraphicsControlBlock control = {.DisposalMode = DISPOSAL_UNSPECIFIED, .TransparentColor = frame->transparent_index & 255};
        GifByteType extension[4];
        EGifGCBToExtension(&control, extension);
        if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, extension) == GIF_ERROR) return 0;
    }
    int invalid = 0;
    ColorMapObject *map = imgcodec_fixture_gif_map(frame->palette, frame->palette_entries, &invalid);
    if (invalid) {
        *problem = "palette_entries must be a power of two from 2 to 256";
        return 0;
    }
    if (map == NULL && gif->Image.ColorMap != NULL) {
        // EGifPutImageDesc drops (and leaks) the previous frame's local table when this one has none.
        GifFreeMapObject(gif->Image.ColorMap);
        gif->Image.ColorMap = NULL;
    }
    size_t descriptor = output->size;
    int status = EGifPutImageDesc(gif, (int)frame->left, (int)frame->top, (int)frame->width, (int)frame->height,
                                  frame->interlaced != 0, map);
    GifFreeMapObject(map);
    if (status == GIF_ERROR) return 0;
    int passes = frame->interlaced ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        uint32_t first = frame->interlaced ? first_row[pass] : 0, step = frame->interlaced ? row_step[pass] : 1;
        for (uint32_t row = first; row < frame->height; row += step) {
            // EGifPutLine masks the line in place: it gets a copy.
            if (frame->indices != NULL) memcpy(line, frame->indices + (size_t)row * frame->width, frame->width);
            else memset(line, frame->fill_index, frame->width);
            if (EGifPutLine(gif, line, (int)frame->width) == GIF_ERROR) return 0;
        }
    }
    if (frame->declare_size && !output->failed) {
        imgcodec_fixture_gif_word(output->data + descriptor + 5, frame->declared_width);
        imgcodec_fixture_gif_word(output->data + descriptor + 7, frame->declared_height);
    }
    return 1;
}

// In C because it drives giflib's encoder; the byte surgery options run on its finished output.
int imgcodec_test_encode_gif(const imgcodec_test_gif_options *options, const imgcodec_test_gif_frame *frames,
                             uint32_t frame_count, unsigned char **data, size_t *size,
                             char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    const char *problem = NULL;
    if (frame_count == 0) problem = "at least one frame is needed";
    if (options->screen_width > 65535 || options->screen_height > 65535) problem = "the screen is over 65535 pixels";
    for (uint32_t i = 0; i < frame_count && problem == NULL; i++) {
        const imgcodec_test_gif_frame *frame = &frames[i];
        if (frame->width == 0 || frame->height == 0 || frame->width > 65535 || frame->height > 65535 ||
            frame->left > 65535 || frame->top > 65535 || frame->declared_width > 65535 || frame->declared_height > 65535) {
            problem = "frame sizes and positions are 1...65535 (positions and declared sizes 0...65535)";
        }
    }
    if (problem != NULL) {
        snprintf(message, message_size, "GIF encoder: %s", problem);
        return IMGCODEC_INVALID;
    }
    imgcodec_fixture_gif output = {0};
    int error = E_GIF_SUCCEEDED;
    GifFileType *gif = EGifOpen(&output, imgcodec_fixture_gif_write, &error);
    if (gif == NULL) {
        snprintf(message, message_size, "GIF encoder: %s", GifErrorString(error));
        return IMGCODEC_INVALID;
    }
    EGifSetGifVersion(gif, true);
    uint32_t widest = 1;
    for (uint32_t i = 0; i < frame_count; i++) widest = frames[i].width > widest ? frames[i].width : widest;
    unsigned char *line = malloc(widest);
    int invalid = 0;
    ColorMapObject *global = imgcodec_fixture_gif_map(options->palette, options->palette_entries, &invalid);
    int ok = line != NULL && !invalid;
    if (invalid) problem = "palette_entries must be a power of two from 2 to 256";
    if (ok) {
        ok = EGifPutScreenDesc(gif, (int)options->screen_width, (int)options->screen_height, 8,
                               options->background_index, global) != GIF_ERROR;
    }
    size_t last_frame = 0;
    for (uint32_t i = 0; i < frame_count && ok; i++) {
        last_frame = output.size;
        ok = imgcodec_fixture_gif_frame(gif, &output, &frames[i], line, &problem);
    }
    // Copies of the last frame go in before EGifCloseFile writes the trailer.
    size_t frame_bytes = output.size - last_frame;
    for (uint32_t i = 0; i < options->repeat_last_frame && ok; i++) {
        ok = imgcodec_fixture_gif_reserve(&output, frame_bytes);
        if (ok) {
            memcpy(output.data + output.size, output.data + last_frame, frame_bytes);
            output.size += frame_bytes;
        }
    }
    if (!ok && gif->Error != 0 && problem == NULL) problem = GifErrorString(gif->Error);
    GifFreeMapObject(global);
    free(line);
    if (EGifCloseFile(gif, &error) == GIF_ERROR && ok) {
        ok = 0;
        problem = GifErrorString(error);
    }
    if (ok && output.failed) {
        ok = 0;
        problem = "out of memory";
    }
    if (ok && options->remove_global_palette && output.size > 13 && (output.data[10] & 0x80) != 0) {
        // The table follows the 13-byte header and screen descriptor; the flag says it is there.
        size_t table = (size_t)3 << ((output.data[10] & 7) + 1);
        memmove(output.data + 13, output.data + 13 + table, output.size - 13 - table);
        output.size -= table;
        output.data[10] &= 0x7F;
    }
    if (!ok) {
        free(output.data);
        snprintf(message, message_size, "GIF encoder: %s", problem != NULL ? problem : "encoding failed");
        return IMGCODEC_INVALID;
    }
    *data = output.data;
    *size = output.size;
    return IMGCODEC_OK;
}
