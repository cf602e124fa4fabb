#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include "internal.h"

// libwebp decodes from a whole file in memory and holds a whole frame: a still image is decoded in
// `start`; an animation is checked frame by frame through WebPDemux (VERIFY, and every frame after
// the first) or composited by WebPAnimDecoder (the first frame in PIXELS mode). libwebp reports
// errors by return value, so every failure here is raised after the library call has returned.

/// State of a WebP decode; everything it points to is freed by imgcodec_webp_destroy.
typedef struct imgcodec_webp_state {
    const uint8_t *data;      // the RIFF chunk (trailing bytes after it are ignored, as libwebp does)
    size_t size;
    uint8_t *owned;           // `data` when it was read from a file descriptor
    int animated;
    int lossless;
    uint32_t frame_count;
    WebPDemuxer *demux;       // animations: the frame index
    WebPAnimDecoder *anim;    // animations in PIXELS mode, until finish
    const uint8_t *rows;      // PIXELS mode: the first frame, output.row_bytes per row
    uint8_t *pixels;          // PIXELS mode: a still image decoded whole
} imgcodec_webp_state;

/// Bytes a RIFF header takes: "RIFF", the chunk size, "WEBP".
#define IMGCODEC_WEBP_RIFF_HEADER 12

/// What libwebp's decoders hold besides whole-frame buffers: a VP8 decoder's macroblock caches
/// (about 100 bytes per image column) or a VP8L decoder's row cache and Huffman tables.
#define IMGCODEC_WEBP_ROW_BYTES 128
#define IMGCODEC_WEBP_FIXED_BYTES (256u << 10)

/// Bytes per pixel libwebp holds while decoding: a VP8L image's ARGB frame, and the alpha of a VP8
/// image (the VP8 decoder's alpha plane, the alpha decoder's own, and its VP8L ARGB frame); the
/// larger bounds an animation frame, which may be either.
#define IMGCODEC_WEBP_LOSSLESS_BYTES 4
#define IMGCODEC_WEBP_ALPHA_BYTES 6

/// What WebPDemux keeps per frame (its frame record and the allocator's overhead).
#define IMGCODEC_WEBP_FRAME_RECORD 96

// In C beside the chunk readers; reads a little-endian RIFF integer.
static uint32_t imgcodec_webp_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// In C because it fails by longjmp. Names a libwebp status plainly; `where` is "" or "frame 3: ".
static void imgcodec_webp_check_status(imgcodec_decoder *decoder, VP8StatusCode status, const char *where) {
    switch (status) {
    case VP8_STATUS_OK:
        return;
    case VP8_STATUS_OUT_OF_MEMORY:
        imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    case VP8_STATUS_UNSUPPORTED_FEATURE:
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: WebP %sfeature libwebp cannot decode",
                      where);
    case VP8_STATUS_NOT_ENOUGH_DATA:
    case VP8_STATUS_SUSPENDED:
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid WebP: %struncated", where);
    default:
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: %sbitstream error", where);
    }
}

// In C beside the decoders that call it. Decodes every pixel of one image (a still image, or an
// animation frame's ALPH + VP8/VP8L chunks) and keeps none: YUV, without the in-loop filter, scaled
// to 1×1. Damage shows in the bitstream parsing, which runs in full; the loop filter, color
// conversion and a whole-frame output buffer only cost time and memory.
static VP8StatusCode imgcodec_webp_check_image(const uint8_t *data, size_t size) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return VP8_STATUS_INVALID_PARAM;
    config.output.colorspace = MODE_YUV;
    config.options.bypass_filtering = 1;
    config.options.use_scaling = 1;
    config.options.scaled_width = 1;
    config.options.scaled_height = 1;
    VP8StatusCode status = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    return status;
}

// In C because it fails by longjmp. Reads the RIFF header and brings the RIFF chunk into memory:
// the caller's buffer for a memory source; for a file, only the RIFF chunk's bytes, so that data
// appended after it costs nothing.
static void imgcodec_webp_load(imgcodec_decoder *decoder, imgcodec_webp_state *state) {
    uint8_t riff[IMGCODEC_WEBP_RIFF_HEADER];
    size_t got = imgcodec_source_pread(&decoder->source, &decoder->failure, 0, riff, sizeof riff);
    int riff_prefix = memcmp(riff, "RIFF", got < 4 ? got : 4) == 0;
    if (got < sizeof riff && riff_prefix) imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid WebP: truncated");
    if (!riff_prefix || memcmp(riff + 8, "WEBP", 4) != 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: not a WebP file (no RIFF WEBP header)");
    }
    uint64_t extent = (uint64_t)imgcodec_webp_le32(riff + 4) + 8;
    uint64_t file_size = imgcodec_source_size(&decoder->source, &decoder->failure);
    if (file_size < extent) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED,
                      "invalid WebP: truncated (the RIFF header claims %llu bytes, the file has %llu)",
                      (unsigned long long)extent, (unsigned long long)file_size);
    }
    if (decoder->source.fd < 0) {
        size_t size;
        state->data = imgcodec_source_load(&decoder->source, &decoder->failure, 0, &size);
    } else {
        state->owned = malloc((size_t)extent);
        if (state->owned == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
        if (imgcodec_source_pread(&decoder->source, &decoder->failure, 0, state->owned, (size_t)extent) != extent) {
            imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid WebP: truncated");
        }
        state->data = state->owned;
    }
    state->size = (size_t)extent;
}

// In C because it fails by longjmp. Walks the top-level chunks without allocating: the first must
// be an image or VP8X header, and none may run past the RIFF data (libwebp calls that a bitstream
// error, or ignores it after the image); a missing pad byte after the last one is tolerated.
// Counts ANMF chunks (an animation's frames, checked against the limits before WebPDemux indexes
// them) and reads the orientation from the first EXIF chunk.
static uint32_t imgcodec_webp_scan_chunks(imgcodec_decoder *decoder, const imgcodec_webp_state *state) {
    const uint8_t *first = state->data + IMGCODEC_WEBP_RIFF_HEADER;
    if (state->size < IMGCODEC_WEBP_RIFF_HEADER + 8 ||
        (memcmp(first, "VP8 ", 4) != 0 && memcmp(first, "VP8L", 4) != 0 && memcmp(first, "VP8X", 4) != 0)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid WebP: no VP8, VP8L or VP8X chunk after the RIFF header");
    }
    uint32_t frames = 0;
    int exif_seen = 0;
    size_t offset = IMGCODEC_WEBP_RIFF_HEADER;
    while (offset < state->size) {
        const uint8_t *chunk = state->data + offset;
        if (state->size - offset < 8 || imgcodec_webp_le32(chunk + 4) > state->size - offset - 8) {
            imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED,
                          "invalid WebP: truncated (a chunk runs past the end of the RIFF data)");
        }
        uint32_t length = imgcodec_webp_le32(chunk + 4);
        if (memcmp(chunk, "ANMF", 4) == 0) {
            frames++;
        } else if (memcmp(chunk, "EXIF", 4) == 0 && !exif_seen) {
            exif_seen = 1;
            // Some writers keep JPEG's "Exif\0\0" prefix before the TIFF header.
            const uint8_t *exif = chunk + 8;
            size_t exif_length = length;
            if (exif_length >= 6 && memcmp(exif, "Exif\0\0", 6) == 0) {
                exif += 6;
                exif_length -= 6;
            }
            decoder->header.orientation = imgcodec_exif_orientation(exif, exif_length);
        }
        offset += 8 + (size_t)length + (length & 1);
    }
    return frames;
}

// In C because it fails by longjmp. An animation: the frame count from the chunks is checked
// against the limits (canvas-sized frames, since each is composited onto the whole canvas) before
// WebPDemux indexes the frames and validates the layout.
static void imgcodec_webp_open_animation(imgcodec_decoder *decoder, imgcodec_webp_state *state, uint32_t frames) {
    imgcodec_header *header = &decoder->header;
    if (frames == 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: animation without frames");
    }
    imgcodec_check_frame_total(decoder, frames, header->width, header->height);
    WebPData webp = {state->data, state->size};
    state->demux = WebPDemux(&webp);
    if (state->demux == NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid WebP: malformed animation (bad chunks, or a frame outside the canvas)");
    }
    // WebPDemux refuses an animation without frames, but silently drops an ANMF chunk holding no
    // image (a damaged VP8/VP8L chunk name, say): that is a damaged file.
    state->frame_count = WebPDemuxGetI(state->demux, WEBP_FF_FRAME_COUNT);
    if (state->frame_count != frames) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: an animation frame holds no image");
    }
    header->frames = state->frame_count;
}

// In C because it fails by longjmp. Checks the size in the first chunk's header before libwebp
// reads further: a VP8X canvas (up to 2^24 × 2^24, which libwebp rejects past 2^32 pixels only as
// a bitstream error) goes through the limits, and a VP8 frame of zero width or height, which
// libwebp also calls a bitstream error, is named.
static void imgcodec_webp_peek_size(imgcodec_decoder *decoder, const imgcodec_webp_state *state) {
    const uint8_t *chunk = state->data + IMGCODEC_WEBP_RIFF_HEADER;
    if (state->size < IMGCODEC_WEBP_RIFF_HEADER + 18) return;
    if (memcmp(chunk, "VP8X", 4) == 0) {
        decoder->header.width = 1 + (chunk[12] | chunk[13] << 8 | (uint32_t)chunk[14] << 16);
        decoder->header.height = 1 + (chunk[15] | chunk[16] << 8 | (uint32_t)chunk[17] << 16);
        imgcodec_check_limits(decoder);
    } else if (memcmp(chunk, "VP8 ", 4) == 0) {
        unsigned width = (chunk[14] | chunk[15] << 8) & 0x3fff, height = (chunk[16] | chunk[17] << 8) & 0x3fff;
        if (width == 0 || height == 0) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: image of %u\xC3\x97%u pixels",
                          width, height);
        }
    }
}

// In C because it fails by longjmp.
static void imgcodec_webp_open(imgcodec_decoder *decoder) {
    imgcodec_webp_state *state = calloc(1, sizeof *state);
    if (state == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    decoder->state = state;
    imgcodec_webp_load(decoder, state);
    uint32_t frames = imgcodec_webp_scan_chunks(decoder, state);
    imgcodec_webp_peek_size(decoder, state);
    WebPBitstreamFeatures features;
    imgcodec_webp_check_status(decoder, WebPGetFeatures(state->data, state->size, &features), "");
    imgcodec_header *header = &decoder->header;
    header->width = (uint32_t)features.width;
    header->height = (uint32_t)features.height;
    header->bit_depth = 8;
    state->animated = features.has_animation;
    state->lossless = features.format == 2;
    if (state->animated) {
        // Frames are composited onto an RGBA canvas that is transparent wherever no frame covers it.
        header->color = IMGCODEC_COLOR_RGBA;
        header->channels = 4;
        header->has_alpha = 1;
    } else {
        header->has_alpha = features.has_alpha;
        header->channels = features.has_alpha ? 4 : 3;
        header->color = state->lossless ? (features.has_alpha ? IMGCODEC_COLOR_RGBA : IMGCODEC_COLOR_RGB)
                                        : IMGCODEC_COLOR_YCBCR;
    }
    imgcodec_check_limits(decoder);
    if (state->animated) imgcodec_webp_open_animation(decoder, state, frames);

    // Estimates, from libwebp's allocations (checked with massif): VP8L decodes a whole ARGB frame;
    // VP8 holds only macroblock rows, plus for alpha two whole alpha planes and the ARGB frame of
    // the alpha's VP8L decoder. PIXELS mode adds the output frame; an animation adds
    // WebPAnimDecoder's two RGBA canvases and WebPDemux's frame index (twice: ours and the
    // animation decoder's).
    uint64_t pixels = (uint64_t)header->width * header->height;
    uint64_t fixed = (uint64_t)header->width * IMGCODEC_WEBP_ROW_BYTES + IMGCODEC_WEBP_FIXED_BYTES +
                     (state->owned != NULL ? state->size : 0);
    if (state->animated) {
        uint64_t index = (uint64_t)state->frame_count * IMGCODEC_WEBP_FRAME_RECORD;
        header->decode_memory = fixed + pixels * IMGCODEC_WEBP_ALPHA_BYTES + index;
        header->convert_memory = header->decode_memory + pixels * 8 + index;
    } else {
        uint64_t working = state->lossless ? pixels * IMGCODEC_WEBP_LOSSLESS_BYTES
                         : header->has_alpha ? pixels * IMGCODEC_WEBP_ALPHA_BYTES : 0;
        header->decode_memory = fixed + working;
        header->convert_memory = header->decode_memory + pixels * (uint64_t)header->channels;
    }
}

// In C because it fails by longjmp. Decodes a still image whole into RGB or RGBA (PIXELS mode).
static void imgcodec_webp_decode_still(imgcodec_decoder *decoder, imgcodec_webp_state *state) {
    const imgcodec_output *output = &decoder->output;
    size_t bytes = output->row_bytes * output->height;
    state->pixels = malloc(bytes);
    if (state->pixels == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "libwebp version mismatch");
    config.output.colorspace = output->channels == 4 ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = state->pixels;
    config.output.u.RGBA.stride = (int)output->row_bytes;
    config.output.u.RGBA.size = bytes;
    VP8StatusCode status = WebPDecode(state->data, state->size, &config);
    WebPFreeDecBuffer(&config.output);
    imgcodec_webp_check_status(decoder, status, "");
    state->rows = state->pixels;
}

// In C beside the frame checks; decodes frame `number` (1-based) alone, as imgcodec_webp_check_image
// does, without failing: a missing frame is a bitstream error.
static VP8StatusCode imgcodec_webp_frame_status(const imgcodec_webp_state *state, uint32_t number) {
    WebPIterator iterator;
    if (!WebPDemuxGetFrame(state->demux, (int)number, &iterator)) return VP8_STATUS_BITSTREAM_ERROR;
    VP8StatusCode status = imgcodec_webp_check_image(iterator.fragment.bytes, iterator.fragment.size);
    WebPDemuxReleaseIterator(&iterator);
    return status;
}

// In C because it fails by longjmp. Names the problem of frame `number`.
static void imgcodec_webp_check_frame_status(imgcodec_decoder *decoder, VP8StatusCode status, uint32_t number) {
    char where[32];
    snprintf(where, sizeof where, "frame %u: ", number);
    imgcodec_webp_check_status(decoder, status, where);
}

// In C because it fails by longjmp. Counts frame `number` against the limits (as the whole canvas,
// which WebPAnimDecoder composites for every frame), checks its own size, then that it decodes.
static void imgcodec_webp_check_frame(imgcodec_decoder *decoder, imgcodec_webp_state *state, uint32_t number) {
    imgcodec_count_frame(decoder, decoder->header.width, decoder->header.height);
    WebPIterator iterator;
    if (!WebPDemuxGetFrame(state->demux, (int)number, &iterator)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: frame %u is missing", number);
    }
    uint32_t width = (uint32_t)iterator.width, height = (uint32_t)iterator.height;
    WebPDemuxReleaseIterator(&iterator);
    imgcodec_check_frame_size(decoder, width, height);
    imgcodec_webp_check_frame_status(decoder, imgcodec_webp_frame_status(state, number), number);
}

// In C because it fails by longjmp. Composites the first frame of an animation (PIXELS mode).
static void imgcodec_webp_decode_first_frame(imgcodec_decoder *decoder, imgcodec_webp_state *state) {
    imgcodec_count_frame(decoder, decoder->header.width, decoder->header.height);
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_IO, "libwebp version mismatch");
    }
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    WebPData webp = {state->data, state->size};
    state->anim = WebPAnimDecoderNew(&webp, &options);
    // The layout already passed WebPDemux, so what is left to fail is the canvas allocation.
    if (state->anim == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    uint8_t *canvas = NULL;
    int timestamp = 0;
    if (!WebPAnimDecoderGetNext(state->anim, &canvas, &timestamp)) {
        // WebPAnimDecoder hides libwebp's status: decode the frame alone to name the problem.
        imgcodec_webp_check_frame_status(decoder, imgcodec_webp_frame_status(state, 1), 1);
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid WebP: frame 1: bitstream error");
    }
    state->rows = canvas;
}

// In C because decoding fails by longjmp.
static void imgcodec_webp_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    imgcodec_webp_state *state = decoder->state;
    imgcodec_output *output = &decoder->output;
    output->width = decoder->header.width;
    output->height = decoder->header.height;
    output->channels = decoder->header.channels;
    output->bit_depth = 8;
    output->row_bytes = (size_t)output->width * (size_t)output->channels;
    if (mode == IMGCODEC_MODE_PIXELS) {
        if (state->animated) imgcodec_webp_decode_first_frame(decoder, state);
        else imgcodec_webp_decode_still(decoder, state);
    } else if (state->animated) {
        imgcodec_webp_check_frame(decoder, state, 1);
    } else {
        imgcodec_webp_check_status(decoder, imgcodec_webp_check_image(state->data, state->size), "");
    }
}

// In C beside the other ops; the frame was decoded whole in start (VERIFY mode keeps no rows).
static void imgcodec_webp_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    const imgcodec_webp_state *state = decoder->state;
    if (state->rows == NULL) return;
    size_t row_bytes = decoder->output.row_bytes;
    memcpy(row, state->rows + (size_t)decoder->rows_read * row_bytes, row_bytes);
}

// In C because decoding fails by longjmp. Checks every frame after the first; the animation
// decoder and its canvases go first, since later frames need neither.
static void imgcodec_webp_finish(imgcodec_decoder *decoder) {
    imgcodec_webp_state *state = decoder->state;
    state->rows = NULL;
    WebPAnimDecoderDelete(state->anim);
    state->anim = NULL;
    free(state->pixels);
    state->pixels = NULL;
    for (uint32_t number = 2; state->animated && number <= state->frame_count; number++) {
        imgcodec_webp_check_frame(decoder, state, number);
    }
}

// In C beside the allocations it frees; accepts a state that open left half-built, or none.
static void imgcodec_webp_destroy(imgcodec_decoder *decoder) {
    imgcodec_webp_state *state = decoder->state;
    if (state == NULL) return;
    WebPAnimDecoderDelete(state->anim);
    WebPDemuxDelete(state->demux);
    free(state->pixels);
    free(state->owned);
    free(state);
    decoder->state = NULL;
}

const imgcodec_format_ops imgcodec_webp_ops = {
    .name = "WebP",
    .open = imgcodec_webp_open,
    .start = imgcodec_webp_start,
    .read_row = imgcodec_webp_read_row,
    .finish = imgcodec_webp_finish,
    .destroy = imgcodec_webp_destroy,
};
