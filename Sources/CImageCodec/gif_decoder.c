#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <gif_lib.h>
#include "internal.h"

/// What giflib itself holds while decoding: its GifFileType, the private LZW tables (prefix, suffix
/// and stack for 4096 codes, about 25 KiB) and up to two 256-entry color maps.
#define IMGCODEC_GIF_LIBRARY_MEMORY (32u << 10)

/// A GIF decode. giflib hands out one line of palette indices at a time in file order, so frames
/// stream through one line buffer; only an interlaced first frame in PIXELS mode is held (its
/// indices, clipped to the screen), because its rows come in four passes.
typedef struct imgcodec_gif_state {
    GifFileType *gif;
    int mode;                  // IMGCODEC_MODE_* given to start
    int input_failed;          // reading the file failed inside giflib's input callback: `failure` says why
    int input_ended;           // the input callback reached the end of the file: giflib's error is a truncation
    unsigned char magic[6];    // the first bytes handed to giflib, to tell a short non-GIF file from a cut GIF
    size_t magic_length;
    int pending_transparent;   // transparent index of the latest graphic control extension, -1 for none
    uint32_t frame_number;     // frames begun so far; the current frame's number in messages
    uint32_t left, top, width, height;  // the current frame's place on the screen
    int interlaced;
    int transparent;           // the current frame's transparent index, -1 for none
    uint32_t lines_done;       // lines of the current frame decoded so far
    uint32_t visible_width, visible_height;  // the part of the first frame inside the screen
    unsigned char *line;       // one frame line of indices
    size_t line_capacity;
    unsigned char *held;       // interlaced first frame in PIXELS mode: visible_width × visible_height indices
    unsigned char palette[256][4];  // the first frame's colors as RGBA
} imgcodec_gif_state;

// In C because it sets a nested jump target: imgcodec_source_read fails by longjmp, and that jump
// must never cross giflib's frames. A read error lands here, is recorded, and reads as end of file.
static size_t imgcodec_gif_read_guarded(imgcodec_decoder *decoder, unsigned char *out, size_t count) {
    imgcodec_decoder *volatile owner = decoder;
    jmp_buf outer;
    memcpy(outer, decoder->failure.jump, sizeof outer);
    volatile size_t got = 0;
    if (setjmp(decoder->failure.jump) == 0) {
        got = imgcodec_source_read(&owner->source, &owner->failure, out, count);
    } else {
        ((imgcodec_gif_state *)owner->state)->input_failed = 1;
    }
    memcpy(owner->failure.jump, outer, sizeof outer);
    return got;
}

// In C because giflib calls it (its InputFunc). It must not longjmp: a short count makes giflib fail,
// and the caller of the giflib function reports why (see imgcodec_gif_fail_call).
static int imgcodec_gif_input(GifFileType *gif, GifByteType *out, int count) {
    imgcodec_decoder *decoder = (imgcodec_decoder *)gif->UserData;
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    if (count <= 0 || state->input_failed) return 0;
    size_t got = imgcodec_gif_read_guarded(decoder, out, (size_t)count);
    for (size_t i = 0; i < got && state->magic_length < sizeof state->magic; i++) {
        state->magic[state->magic_length++] = out[i];
    }
    if (got < (size_t)count) state->input_ended = 1;
    return (int)got;
}

// In C because it fails by longjmp. Called after a giflib call returned GIF_ERROR (never from inside
// giflib); `where` says where in the file, e.g. "in the image data of frame 3".
__attribute__((noreturn, format(printf, 2, 3)))
static void imgcodec_gif_fail_call(imgcodec_decoder *decoder, const char *where_format, ...) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    if (state->input_failed) {
        // The read error recorded by the input callback, raised now that giflib has returned.
        char text[IMGCODEC_MESSAGE_SIZE];
        snprintf(text, sizeof text, "%s", decoder->failure.message);
        imgcodec_fail(&decoder->failure, decoder->failure.status, "%s", text);
    }
    char where[96];
    va_list arguments;
    va_start(arguments, where_format);
    vsnprintf(where, sizeof where, where_format, arguments);
    va_end(arguments);
    if (state->input_ended) imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid GIF: truncated %s", where);
    int error = state->gif != NULL ? state->gif->Error : 0;
    switch (error) {
    case D_GIF_ERR_NOT_ENOUGH_MEM:
        imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    case D_GIF_ERR_WRONG_RECORD:
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: unknown block type %s", where);
    case D_GIF_ERR_IMAGE_DEFECT:
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: corrupt LZW data %s", where);
    case D_GIF_ERR_EOF_TOO_SOON:
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: LZW data ends before the last pixel %s", where);
    case D_GIF_ERR_READ_FAILED:
        // Without an end of file, giflib's only READ_FAILED is an LZW minimum code size over 8.
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: LZW code size over 8 bits %s", where);
    default: {
        const char *text = GifErrorString(error);
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: %s %s", text != NULL ? text : "decoding failed", where);
    }
    }
}

// In C because it fails by longjmp: DGifOpen returned NULL with `error` (giflib freed its own state).
__attribute__((noreturn))
static void imgcodec_gif_fail_open(imgcodec_decoder *decoder, int error) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    if (error == D_GIF_ERR_NOT_ENOUGH_MEM) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    if (!state->input_failed && state->input_ended) {
        if (state->magic_length == 0) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: empty file");
        // A file shorter than the signature is only a cut GIF if what is there matches "GIF".
        size_t compared = state->magic_length < 3 ? state->magic_length : 3;
        if (memcmp(state->magic, "GIF", compared) != 0) error = D_GIF_ERR_NOT_GIF_FILE;
    }
    if (error == D_GIF_ERR_NOT_GIF_FILE) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: not a GIF file (bad signature)");
    }
    imgcodec_gif_fail_call(decoder, "in the header");
}

// In C because it fails by longjmp: reading an extension block failed.
__attribute__((noreturn))
static void imgcodec_gif_fail_extension(imgcodec_decoder *decoder) {
    uint32_t frame = ((imgcodec_gif_state *)decoder->state)->frame_number;
    if (frame == 0) imgcodec_gif_fail_call(decoder, "in an extension block before the first frame");
    imgcodec_gif_fail_call(decoder, "in an extension block after frame %u", frame);
}

// In C because it fails by longjmp. Reads one extension: a graphic control extension's
// transparent index applies to the next frame; every other extension is skipped. A malformed
// graphic control block (not 4 bytes) is ignored, as browsers do.
static void imgcodec_gif_read_extension(imgcodec_decoder *decoder) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    int code = 0;
    GifByteType *block = NULL;
    if (DGifGetExtension(state->gif, &code, &block) == GIF_ERROR) imgcodec_gif_fail_extension(decoder);
    if (code == GRAPHICS_EXT_FUNC_CODE && block != NULL) {
        GraphicsControlBlock control;
        if (DGifExtensionToGCB(block[0], block + 1, &control) == GIF_OK) {
            state->pending_transparent = control.TransparentColor;
        }
    }
    while (block != NULL) {
        if (DGifGetExtensionNext(state->gif, &block) == GIF_ERROR) imgcodec_gif_fail_extension(decoder);
    }
}

// In C because it fails by longjmp. Reads the image descriptor that DGifGetRecordType announced and
// checks the frame's size and the frame limits before anything is allocated for it.
static void imgcodec_gif_begin_frame(imgcodec_decoder *decoder) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    GifFileType *gif = state->gif;
    uint32_t number = state->frame_number + 1;
    if (DGifGetImageDesc(gif) == GIF_ERROR) imgcodec_gif_fail_call(decoder, "in the descriptor of frame %u", number);
    // giflib appends a copy of every descriptor (and its color table) to SavedImages for DGifSlurp:
    // dropping it at once keeps memory flat however many frames there are.
    GifFreeSavedImages(gif);
    gif->ImageCount = 0;
    state->frame_number = number;
    state->left = (uint32_t)gif->Image.Left;
    state->top = (uint32_t)gif->Image.Top;
    state->width = (uint32_t)gif->Image.Width;
    state->height = (uint32_t)gif->Image.Height;
    state->interlaced = gif->Image.Interlace;
    state->transparent = state->pending_transparent;
    state->pending_transparent = -1;  // a graphic control extension applies to one frame
    state->lines_done = 0;
    if (state->width == 0 || state->height == 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: empty frame (frame %u is %u\xC3\x97%u)",
                      number, state->width, state->height);
    }
    imgcodec_count_frame(decoder, state->width, state->height);
    if (state->width > state->line_capacity) {
        unsigned char *line = realloc(state->line, state->width);
        if (line == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
        state->line = line;
        state->line_capacity = state->width;
    }
}

// In C because it fails by longjmp. Reads records up to the next frame: 1 when its descriptor is
// read, 0 at the trailer. A file cut before the trailer fails, as in giflib's own DGifSlurp.
static int imgcodec_gif_next_frame(imgcodec_decoder *decoder) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    for (;;) {
        GifRecordType type = UNDEFINED_RECORD_TYPE;
        if (DGifGetRecordType(state->gif, &type) == GIF_ERROR) {
            if (state->frame_number == 0) imgcodec_gif_fail_call(decoder, "before the first frame");
            imgcodec_gif_fail_call(decoder, "after frame %u, before the trailer", state->frame_number);
        }
        switch (type) {
        case TERMINATE_RECORD_TYPE:
            return 0;
        case EXTENSION_RECORD_TYPE:
            imgcodec_gif_read_extension(decoder);
            break;
        case IMAGE_DESC_RECORD_TYPE:
            imgcodec_gif_begin_frame(decoder);
            return 1;
        default:
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: unknown block type after frame %u",
                          state->frame_number);
        }
    }
}

// In C because giflib's decoding fails by longjmp here. Decodes the current frame's next line.
static void imgcodec_gif_decode_line(imgcodec_decoder *decoder, unsigned char *out) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    if (DGifGetLine(state->gif, out, (int)state->width) == GIF_ERROR) {
        imgcodec_gif_fail_call(decoder, "in the image data of frame %u", state->frame_number);
    }
    state->lines_done++;
}

// In C because decoding fails by longjmp. Decodes the current frame's remaining lines into the line
// buffer: verification, and the frame lines outside the screen.
static void imgcodec_gif_finish_frame(imgcodec_decoder *decoder) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    while (state->lines_done < state->height) imgcodec_gif_decode_line(decoder, state->line);
}

// In C because decoding fails by longjmp. Decodes an interlaced first frame in its four passes,
// keeping the part of each line that lies inside the screen.
static void imgcodec_gif_hold_interlaced(imgcodec_decoder *decoder) {
    static const uint32_t first_row[4] = {0, 4, 2, 1};
    static const uint32_t row_step[4] = {8, 8, 4, 2};
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    size_t held_size = (size_t)state->visible_width * state->visible_height;
    if (held_size > 0) {
        // calloc: a huge frame whose data stops early touches only the pages it reached.
        state->held = calloc(held_size, 1);
        if (state->held == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    }
    for (int pass = 0; pass < 4; pass++) {
        for (uint32_t row = first_row[pass]; row < state->height; row += row_step[pass]) {
            imgcodec_gif_decode_line(decoder, state->line);
            if (row < state->visible_height) {
                memcpy(state->held + (size_t)row * state->visible_width, state->line, state->visible_width);
            }
        }
    }
}

// In C beside the decoder that uses it. The first frame's colors: its local color table, else the
// global one. An index beyond the table (or any index when there is no table at all, which the GIF
// spec leaves to the decoder) is opaque black, as browsers show it; the transparent index is (0,0,0,0).
static void imgcodec_gif_build_palette(imgcodec_gif_state *state) {
    const ColorMapObject *map = state->gif->Image.ColorMap != NULL ? state->gif->Image.ColorMap : state->gif->SColorMap;
    int count = map != NULL ? map->ColorCount : 0;
    for (int i = 0; i < 256; i++) {
        int known = i < count;
        state->palette[i][0] = known ? map->Colors[i].Red : 0;
        state->palette[i][1] = known ? map->Colors[i].Green : 0;
        state->palette[i][2] = known ? map->Colors[i].Blue : 0;
        state->palette[i][3] = 255;
    }
    if (state->transparent >= 0 && state->transparent < 256) memset(state->palette[state->transparent], 0, 4);
}

// In C because giflib's reads fail by longjmp. Reads the logical screen and every record up to the
// first frame's descriptor, so that the header knows whether the first frame needs alpha.
static void imgcodec_gif_open(imgcodec_decoder *decoder) {
    imgcodec_gif_state *state = calloc(1, sizeof *state);
    if (state == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    decoder->state = state;
    state->pending_transparent = -1;
    state->transparent = -1;
    int error = D_GIF_SUCCEEDED;
    state->gif = DGifOpen(decoder, imgcodec_gif_input, &error);
    if (state->gif == NULL) imgcodec_gif_fail_open(decoder, error);
    GifFileType *gif = state->gif;
    imgcodec_header *header = &decoder->header;
    header->width = (uint32_t)gif->SWidth;
    header->height = (uint32_t)gif->SHeight;
    if (header->width == 0 || header->height == 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: empty logical screen (%u\xC3\x97%u)",
                      header->width, header->height);
    }
    imgcodec_check_limits(decoder);
    if (!imgcodec_gif_next_frame(decoder)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid GIF: no image before the trailer");
    }
    uint32_t width = header->width, height = header->height;
    state->visible_width = state->left < width ? (width - state->left < state->width ? width - state->left : state->width) : 0;
    state->visible_height = state->top < height ? (height - state->top < state->height ? height - state->top : state->height) : 0;
    if (state->visible_width == 0) state->visible_height = 0;
    if (state->visible_height == 0) state->visible_width = 0;
    int covers = state->visible_width == width && state->visible_height == height;  // implies left = top = 0
    const ColorMapObject *map = gif->Image.ColorMap != NULL ? gif->Image.ColorMap : gif->SColorMap;
    header->color = IMGCODEC_COLOR_PALETTE;
    header->bit_depth = map != NULL ? map->BitsPerPixel : 8;  // bits per index, as for PNG palettes
    header->has_alpha = state->transparent >= 0 || !covers;
    header->channels = header->has_alpha ? 4 : 3;
    header->frames = 0;  // only decoding counts them
    uint64_t line = state->width > width ? state->width : width;
    header->decode_memory = sizeof *state + IMGCODEC_GIF_LIBRARY_MEMORY + line;
    header->convert_memory = header->decode_memory;
    if (state->interlaced) header->convert_memory += (uint64_t)state->visible_width * state->visible_height;
}

// In C because decoding fails by longjmp. VERIFY decodes the first frame here through the line
// buffer; PIXELS holds an interlaced first frame here and streams any other one in read_row.
static void imgcodec_gif_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    imgcodec_output *output = &decoder->output;
    state->mode = mode;
    output->width = decoder->header.width;
    output->height = decoder->header.height;
    output->bit_depth = 8;
    if (mode == IMGCODEC_MODE_PIXELS) {
        output->channels = decoder->header.channels;
        output->row_bytes = (size_t)output->width * (size_t)output->channels;
        imgcodec_gif_build_palette(state);
        if (state->interlaced) imgcodec_gif_hold_interlaced(decoder);
    } else {
        // Rows of indices nobody reads: read_row leaves them alone.
        output->channels = 1;
        output->row_bytes = output->width;
        imgcodec_gif_finish_frame(decoder);
    }
}

// In C because decoding fails by longjmp. Composites one row of the first frame onto a transparent
// screen; rows come top to bottom, and so do a non-interlaced frame's lines.
static void imgcodec_gif_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    if (state->mode != IMGCODEC_MODE_PIXELS) return;
    int channels = decoder->output.channels;
    // With 3 channels the frame covers the whole screen: every pixel is written below.
    if (channels == 4) memset(row, 0, decoder->output.row_bytes);
    uint32_t y = (uint32_t)decoder->rows_read;
    if (y < state->top || y - state->top >= state->visible_height) return;
    uint32_t line = y - state->top;
    const unsigned char *indices;
    if (state->interlaced) {
        indices = state->held + (size_t)line * state->visible_width;
    } else {
        while (state->lines_done <= line) imgcodec_gif_decode_line(decoder, state->line);
        indices = state->line;
    }
    unsigned char *out = row + (size_t)state->left * (size_t)channels;
    for (uint32_t x = 0; x < state->visible_width; x++, out += channels) {
        memcpy(out, state->palette[indices[x]], (size_t)channels);
    }
}

// In C because decoding fails by longjmp. Verifies the rest: the first frame's lines below the
// screen, then every later frame line by line, up to the required trailer.
static void imgcodec_gif_finish(imgcodec_decoder *decoder) {
    imgcodec_gif_finish_frame(decoder);
    while (imgcodec_gif_next_frame(decoder)) imgcodec_gif_finish_frame(decoder);
}

// In C because it frees giflib state.
static void imgcodec_gif_destroy(imgcodec_decoder *decoder) {
    imgcodec_gif_state *state = (imgcodec_gif_state *)decoder->state;
    if (state == NULL) return;
    if (state->gif != NULL) {
        int error = D_GIF_SUCCEEDED;
        DGifCloseFile(state->gif, &error);
    }
    free(state->line);
    free(state->held);
    free(state);
    decoder->state = NULL;
}

const imgcodec_format_ops imgcodec_gif_ops = {
    .name = "GIF",
    .open = imgcodec_gif_open,
    .start = imgcodec_gif_start,
    .read_row = imgcodec_gif_read_row,
    .finish = imgcodec_gif_finish,
    .destroy = imgcodec_gif_destroy,
};
