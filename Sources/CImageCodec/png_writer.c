#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define IMGCODEC_WRITER_CAPACITY 65536

struct imgcodec_png_writer {
    imgcodec_failure failure;
    int failed;
    int fd;
    png_structp png;
    png_infop info;
    uint32_t height;
    uint32_t rows_written;
    size_t used;
    unsigned char buffer[IMGCODEC_WRITER_CAPACITY];
};

// In C because a write error fails the encode by longjmp.
static void imgcodec_png_writer_flush_buffer(imgcodec_png_writer *writer) {
    imgcodec_write_all(&writer->failure, writer->fd, writer->buffer, writer->used, "PNG");
    writer->used = 0;
}

// In C because libpng calls it; output is gathered into large sequential writes.
static void imgcodec_png_writer_write(png_structp png, png_bytep data, size_t length) {
    imgcodec_png_writer *writer = (imgcodec_png_writer *)png_get_io_ptr(png);
    while (length > 0) {
        if (writer->used == IMGCODEC_WRITER_CAPACITY) imgcodec_png_writer_flush_buffer(writer);
        size_t room = IMGCODEC_WRITER_CAPACITY - writer->used;
        size_t chunk = length < room ? length : room;
        memcpy(writer->buffer + writer->used, data, chunk);
        writer->used += chunk;
        data += chunk;
        length -= chunk;
    }
}

// In C because libpng calls it; flushing happens once, at the end.
static void imgcodec_png_writer_flush(png_structp png) {
    (void)png;
}

// In C because it replaces libpng's aborting error handler with our longjmp.
static void imgcodec_png_writer_error(png_structp png, png_const_charp text) {
    imgcodec_png_writer *writer = (imgcodec_png_writer *)png_get_error_ptr(png);
    imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode PNG: %s", text);
}

// In C because libpng calls it; write warnings do not affect the output's validity.
static void imgcodec_png_writer_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

// In C because png_write_info runs under longjmp.
int imgcodec_png_writer_open(int fd, uint32_t width, uint32_t height, int channels, int bit_depth,
                             imgcodec_png_writer **result, char *message, size_t message_size) {
    *result = NULL;
    imgcodec_png_writer *writer = calloc(1, sizeof *writer);
    if (writer == NULL) {
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    writer->fd = fd;
    writer->height = height;
    *result = writer;
    IMGCODEC_WRITER_GUARD(writer, message, message_size);
    static const int color_types[] = { PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                       PNG_COLOR_TYPE_RGB_ALPHA };
    if (channels < 1 || channels > 4 || (bit_depth != 8 && bit_depth != 16)) {
        imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode PNG: %d channels of %d bits", channels, bit_depth);
    }
    writer->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, writer, imgcodec_png_writer_error,
                                          imgcodec_png_writer_warning);
    if (writer->png == NULL) imgcodec_fail(&writer->failure, IMGCODEC_IO, "out of memory");
    writer->info = png_create_info_struct(writer->png);
    if (writer->info == NULL) imgcodec_fail(&writer->failure, IMGCODEC_IO, "out of memory");
    png_set_write_fn(writer->png, writer, imgcodec_png_writer_write, imgcodec_png_writer_flush);
    png_set_IHDR(writer->png, writer->info, width, height, bit_depth, color_types[channels - 1],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(writer->png, writer->info);
    // Rows come with native-endian 16-bit samples; PNG stores them big-endian.
    const uint16_t probe = 1;
    if (bit_depth == 16 && *(const unsigned char *)&probe == 1) png_set_swap(writer->png);
    return IMGCODEC_OK;
}

// In C because the writer's libpng state lives here. Neither call can fail: they set fields that
// the first row's compression reads.
void imgcodec_png_writer_prefer_speed(imgcodec_png_writer *writer) {
    if (writer == NULL || writer->png == NULL || writer->failed) return;
    png_set_compression_level(writer->png, 1);
    png_set_filter(writer->png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
}

// In C because png_write_row compresses under longjmp.
int imgcodec_png_writer_write_row(imgcodec_png_writer *writer, const unsigned char *row,
                                  char *message, size_t message_size) {
    IMGCODEC_WRITER_GUARD(writer, message, message_size);
    if (writer->rows_written >= writer->height) {
        imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode PNG: more rows than the height");
    }
    png_write_row(writer->png, row);
    writer->rows_written++;
    return IMGCODEC_OK;
}

// In C because png_write_end runs under longjmp.
int imgcodec_png_writer_finish(imgcodec_png_writer *writer, char *message, size_t message_size) {
    IMGCODEC_WRITER_GUARD(writer, message, message_size);
    if (writer->rows_written != writer->height) {
        imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode PNG: %u of %u rows written",
                      writer->rows_written, writer->height);
    }
    png_write_end(writer->png, NULL);
    imgcodec_png_writer_flush_buffer(writer);
    return IMGCODEC_OK;
}

// In C because it frees libpng state.
void imgcodec_png_writer_close(imgcodec_png_writer *writer) {
    if (writer == NULL) return;
    if (writer->png != NULL) {
        png_destroy_write_struct(&writer->png, writer->info != NULL ? &writer->info : NULL);
    }
    free(writer);
}
