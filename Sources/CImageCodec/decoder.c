#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

// Sets the entry point's jump target: a failure anywhere below returns here with its status.
// Must be a macro, because setjmp's frame has to stay alive while libjpeg/libpng run.
#define IMGCODEC_GUARD(decoder, message, message_size)                         \
    do {                                                                       \
        if ((decoder)->failed) return imgcodec_report(&(decoder)->failure, message, message_size); \
        if (setjmp((decoder)->failure.jump) != 0) {                            \
            (decoder)->failed = 1;                                             \
            return imgcodec_report(&(decoder)->failure, message, message_size); \
        }                                                                      \
    } while (0)

// In C because the failure it raises longjmps.
void imgcodec_check_frame_size(imgcodec_decoder *decoder, uint32_t width, uint32_t height) {
    const imgcodec_limits *limits = &decoder->limits;
    if (limits->max_width != 0 && width > limits->max_width) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: width %u exceeds the limit (%u)",
                      width, limits->max_width);
    }
    if (limits->max_height != 0 && height > limits->max_height) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: height %u exceeds the limit (%u)",
                      height, limits->max_height);
    }
    uint64_t pixels = (uint64_t)width * height;
    if (limits->max_pixels != 0 && pixels > limits->max_pixels) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: %u\xC3\x97%u pixels exceeds --max-pixels (%llu)",
                      width, height, (unsigned long long)limits->max_pixels);
    }
}

// In C because the failure it raises longjmps.
void imgcodec_cancel(int *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
}

void imgcodec_check_cancel(imgcodec_decoder *decoder) {
    if (decoder->limits.cancel != NULL && __atomic_load_n(decoder->limits.cancel, __ATOMIC_RELAXED) != 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_CANCELLED, "cancelled");
    }
}

void imgcodec_check_limits(imgcodec_decoder *decoder) {
    imgcodec_check_frame_size(decoder, decoder->header.width, decoder->header.height);
}

// In C because the failure it raises longjmps.
void imgcodec_check_frame_total(imgcodec_decoder *decoder, uint64_t frames, uint32_t width, uint32_t height) {
    const imgcodec_limits *limits = &decoder->limits;
    if (limits->max_frames != 0 && frames > limits->max_frames) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: %llu frames exceed the limit (%u)",
                      (unsigned long long)frames, limits->max_frames);
    }
    // frames ≤ 2^32 and pixels < 2^64 / 2^32 keep the product in range; past that it is over any limit.
    uint64_t pixels = (uint64_t)width * height;
    int overflow = frames != 0 && pixels > UINT64_MAX / frames;
    if (limits->max_total_pixels != 0 && (overflow || pixels * frames > limits->max_total_pixels)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: %llu frames of %u\xC3\x97%u pixels exceed the animation limit (%llu pixels)",
                      (unsigned long long)frames, width, height, (unsigned long long)limits->max_total_pixels);
    }
}

// In C because the failure it raises longjmps.
void imgcodec_count_frame(imgcodec_decoder *decoder, uint32_t width, uint32_t height) {
    const imgcodec_limits *limits = &decoder->limits;
    imgcodec_check_frame_size(decoder, width, height);
    decoder->frames_seen++;
    decoder->frame_pixels += (uint64_t)width * height;
    if (limits->max_frames != 0 && decoder->frames_seen > limits->max_frames) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: more than %u frames", limits->max_frames);
    }
    if (limits->max_total_pixels != 0 && decoder->frame_pixels > limits->max_total_pixels) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: more than %llu pixels over %u frames",
                      (unsigned long long)limits->max_total_pixels, decoder->frames_seen);
    }
}

// The decoders, by IMGCODEC_FORMAT_* value.
static const imgcodec_format_ops *imgcodec_format_table(int format) {
    switch (format) {
    case IMGCODEC_FORMAT_JPEG: return &imgcodec_jpeg_ops;
    case IMGCODEC_FORMAT_PNG: return &imgcodec_png_ops;
    case IMGCODEC_FORMAT_WEBP: return &imgcodec_webp_ops;
    case IMGCODEC_FORMAT_GIF: return &imgcodec_gif_ops;
    case IMGCODEC_FORMAT_AVIF: return &imgcodec_avif_ops;
    case IMGCODEC_FORMAT_TIFF: return &imgcodec_tiff_ops;
    case IMGCODEC_FORMAT_BMP: return &imgcodec_bmp_ops;
    default: return NULL;
    }
}

// In C because reading the header runs libjpeg/libpng under longjmp. Shared by both openers:
// `source` says where the bytes come from.
static int imgcodec_decoder_open_source(imgcodec_source source, int format, const imgcodec_limits *limits,
                                        imgcodec_decoder **result, imgcodec_header *header,
                                        char *message, size_t message_size) {
    *result = NULL;
    imgcodec_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        if (source.fd >= 0) free(source.buffer);
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    decoder->format = format;
    decoder->ops = imgcodec_format_table(format);
    decoder->limits = *limits;
    decoder->source = source;
    decoder->header.orientation = 1;
    decoder->header.frames = 1;
    *result = decoder;
    IMGCODEC_GUARD(decoder, message, message_size);
    if (decoder->ops == NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: unknown image format %d", format);
    }
    decoder->ops->open(decoder);
    uint64_t overhead = (decoder->source.fd >= 0 ? IMGCODEC_SOURCE_CAPACITY : 0) + sizeof *decoder;
    decoder->header.decode_memory += overhead;
    decoder->header.convert_memory += overhead;
    if (decoder->header.convert_memory < decoder->header.decode_memory) {
        decoder->header.convert_memory = decoder->header.decode_memory;
    }
    *header = decoder->header;
    return IMGCODEC_OK;
}

// In C because reading the header runs libjpeg/libpng under longjmp.
int imgcodec_decoder_open(int fd, int format, const imgcodec_limits *limits,
                          imgcodec_decoder **result, imgcodec_header *header,
                          char *message, size_t message_size) {
    unsigned char *buffer = malloc(IMGCODEC_SOURCE_CAPACITY);
    if (buffer == NULL) {
        *result = NULL;
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    off_t start = lseek(fd, 0, SEEK_CUR);
    imgcodec_source source = { .fd = fd, .buffer = buffer, .capacity = IMGCODEC_SOURCE_CAPACITY, .start = start > 0 ? start : 0 };
    return imgcodec_decoder_open_source(source, format, limits, result, header, message, message_size);
}

// In C because reading the header runs libjpeg/libpng under longjmp.
int imgcodec_decoder_open_memory(const unsigned char *data, size_t size, int format, const imgcodec_limits *limits,
                                 imgcodec_decoder **result, imgcodec_header *header,
                                 char *message, size_t message_size) {
    // The buffer is only read: the cast is for the shared source struct, which a file source writes into.
    imgcodec_source source = { .fd = -1, .buffer = (unsigned char *)data, .capacity = size, .memory_left = size,
                               .memory = data, .memory_size = size };
    return imgcodec_decoder_open_source(source, format, limits, result, header, message, message_size);
}

// In C because starting decompression runs libjpeg/libpng under longjmp.
int imgcodec_decoder_start(imgcodec_decoder *decoder, int mode, int scale_num,
                           imgcodec_output *output, char *message, size_t message_size) {
    IMGCODEC_GUARD(decoder, message, message_size);
    if (decoder->started) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "decoder already started");
    decoder->started = 1;
    decoder->output.passes = 1;
    decoder->ops->start(decoder, mode, scale_num >= 1 && scale_num <= 8 ? scale_num : 8);
    *output = decoder->output;
    return IMGCODEC_OK;
}

// In C because each row is decoded under longjmp.
int imgcodec_decoder_read_row(imgcodec_decoder *decoder, unsigned char *row,
                              char *message, size_t message_size) {
    IMGCODEC_GUARD(decoder, message, message_size);
    uint64_t total = (uint64_t)decoder->output.height * (uint64_t)decoder->output.passes;
    if (!decoder->started || decoder->rows_read >= total) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "read past the last row");
    }
    imgcodec_check_cancel(decoder);
    decoder->ops->read_row(decoder, row);
    decoder->rows_read++;
    return IMGCODEC_OK;
}

// In C because the trailer is read under longjmp.
int imgcodec_decoder_finish(imgcodec_decoder *decoder, char *message, size_t message_size) {
    IMGCODEC_GUARD(decoder, message, message_size);
    uint64_t total = (uint64_t)decoder->output.height * (uint64_t)decoder->output.passes;
    if (!decoder->started || decoder->rows_read != total) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "finished before the last row");
    }
    decoder->ops->finish(decoder);
    decoder->finished = 1;
    return IMGCODEC_OK;
}

// In C because it destroys libjpeg/libpng state.
void imgcodec_decoder_close(imgcodec_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->ops != NULL) decoder->ops->destroy(decoder);
    imgcodec_source_release(&decoder->source);
    free(decoder);
}

// In C so verification runs every row without a Swift round trip per row.
int imgcodec_decoder_verify(imgcodec_decoder *decoder, char *message, size_t message_size) {
    imgcodec_output output;
    int status = imgcodec_decoder_start(decoder, IMGCODEC_MODE_VERIFY, 8, &output, message, message_size);
    unsigned char *row = NULL;
    if (status == IMGCODEC_OK) {
        row = malloc(output.row_bytes > 0 ? output.row_bytes : 1);
        if (row == NULL) {
            snprintf(message, message_size, "out of memory");
            status = IMGCODEC_IO;
        }
    }
    uint64_t total = status == IMGCODEC_OK ? (uint64_t)output.height * (uint64_t)output.passes : 0;
    for (uint64_t i = 0; i < total && status == IMGCODEC_OK; i++) {
        status = imgcodec_decoder_read_row(decoder, row, message, message_size);
    }
    if (status == IMGCODEC_OK) status = imgcodec_decoder_finish(decoder, message, message_size);
    free(row);
    return status;
}

// In C so verification runs every row without a Swift round trip per row.
int imgcodec_verify(int fd, int format, const imgcodec_limits *limits, imgcodec_header *header,
                    char *message, size_t message_size) {
    imgcodec_decoder *decoder = NULL;
    int status = imgcodec_decoder_open(fd, format, limits, &decoder, header, message, message_size);
    if (status == IMGCODEC_OK) status = imgcodec_decoder_verify(decoder, message, message_size);
    imgcodec_decoder_close(decoder);
    return status;
}

// In C because png.h's Adam7 helpers are macros.
int imgcodec_png_row_in_pass(uint32_t y, uint32_t width, int pass) {
    if (pass < 0 || pass > 6) return 0;
    return PNG_ROW_IN_INTERLACE_PASS(y, pass) && PNG_PASS_COLS(width, pass) > 0;
}
