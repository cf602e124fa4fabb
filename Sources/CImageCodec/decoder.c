#include <stdlib.h>
#include <string.h>
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
void imgcodec_check_limits(imgcodec_decoder *decoder) {
    const imgcodec_limits *limits = &decoder->limits;
    const imgcodec_header *header = &decoder->header;
    if (limits->max_width != 0 && header->width > limits->max_width) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: width %u exceeds the limit (%u)",
                      header->width, limits->max_width);
    }
    if (limits->max_height != 0 && header->height > limits->max_height) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: height %u exceeds the limit (%u)",
                      header->height, limits->max_height);
    }
    uint64_t pixels = (uint64_t)header->width * header->height;
    if (limits->max_pixels != 0 && pixels > limits->max_pixels) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: %u\xC3\x97%u pixels exceeds --max-pixels (%llu)",
                      header->width, header->height, (unsigned long long)limits->max_pixels);
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
    decoder->limits = *limits;
    decoder->source = source;
    decoder->header.orientation = 1;
    *result = decoder;
    IMGCODEC_GUARD(decoder, message, message_size);
    switch (format) {
    case IMGCODEC_FORMAT_JPEG: imgcodec_jpeg_open(decoder); break;
    case IMGCODEC_FORMAT_PNG: imgcodec_png_open(decoder); break;
    default: imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: unknown image format %d", format);
    }
    decoder->header.decode_memory += (decoder->source.fd >= 0 ? IMGCODEC_SOURCE_CAPACITY : 0) + sizeof *decoder;
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
    imgcodec_source source = { .fd = fd, .buffer = buffer, .capacity = IMGCODEC_SOURCE_CAPACITY };
    return imgcodec_decoder_open_source(source, format, limits, result, header, message, message_size);
}

// In C because reading the header runs libjpeg/libpng under longjmp.
int imgcodec_decoder_open_memory(const unsigned char *data, size_t size, int format, const imgcodec_limits *limits,
                                 imgcodec_decoder **result, imgcodec_header *header,
                                 char *message, size_t message_size) {
    // The buffer is only read: the cast is for the shared source struct, which a file source writes into.
    imgcodec_source source = { .fd = -1, .buffer = (unsigned char *)data, .capacity = size, .memory_left = size };
    return imgcodec_decoder_open_source(source, format, limits, result, header, message, message_size);
}

// In C because starting decompression runs libjpeg/libpng under longjmp.
int imgcodec_decoder_start(imgcodec_decoder *decoder, int mode, int scale_num,
                           imgcodec_output *output, char *message, size_t message_size) {
    IMGCODEC_GUARD(decoder, message, message_size);
    if (decoder->started) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "decoder already started");
    decoder->started = 1;
    if (decoder->format == IMGCODEC_FORMAT_JPEG) imgcodec_jpeg_start(decoder, mode, scale_num >= 1 && scale_num <= 8 ? scale_num : 8);
    else imgcodec_png_start(decoder, mode);
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
    if (decoder->format == IMGCODEC_FORMAT_JPEG) imgcodec_jpeg_read_row(decoder, row);
    else imgcodec_png_read_row(decoder, row);
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
    if (decoder->format == IMGCODEC_FORMAT_JPEG) imgcodec_jpeg_finish(decoder);
    else imgcodec_png_finish(decoder);
    decoder->finished = 1;
    return IMGCODEC_OK;
}

// In C because it destroys libjpeg/libpng state.
void imgcodec_decoder_close(imgcodec_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->format == IMGCODEC_FORMAT_JPEG) imgcodec_jpeg_destroy(decoder);
    if (decoder->format == IMGCODEC_FORMAT_PNG) imgcodec_png_destroy(decoder);
    if (decoder->source.fd >= 0) free(decoder->source.buffer);
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
