#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define IMGCODEC_JPEG_WRITER_CAPACITY 65536

struct imgcodec_jpeg_writer {
    imgcodec_failure failure;
    int failed;
    int created;  // `info` holds libjpeg state to destroy
    int fd;
    uint32_t height;
    uint32_t rows_written;
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    struct jpeg_destination_mgr destination;
    unsigned char buffer[IMGCODEC_JPEG_WRITER_CAPACITY];
};

// In C because it replaces libjpeg's error_exit (which calls exit()) with a longjmp.
static void imgcodec_jpeg_writer_error_exit(j_common_ptr info) {
    imgcodec_jpeg_writer *writer = (imgcodec_jpeg_writer *)info->client_data;
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode JPEG: %s", text);
}

// In C because libjpeg calls it; encoder warnings do not affect the output's validity.
static void imgcodec_jpeg_writer_output_message(j_common_ptr info) {
    (void)info;
}

// In C because a write error fails the encode by longjmp.
static void imgcodec_jpeg_writer_write(imgcodec_jpeg_writer *writer, size_t count) {
    imgcodec_write_all(&writer->failure, writer->fd, writer->buffer, count, "JPEG");
}

// In C because libjpeg calls it: the whole buffer is ready for the next bytes.
static void imgcodec_jpeg_writer_init_destination(j_compress_ptr info) {
    imgcodec_jpeg_writer *writer = (imgcodec_jpeg_writer *)info->client_data;
    writer->destination.next_output_byte = writer->buffer;
    writer->destination.free_in_buffer = IMGCODEC_JPEG_WRITER_CAPACITY;
}

// In C because libjpeg calls it when the buffer is full: the whole buffer goes out.
static boolean imgcodec_jpeg_writer_empty_buffer(j_compress_ptr info) {
    imgcodec_jpeg_writer *writer = (imgcodec_jpeg_writer *)info->client_data;
    imgcodec_jpeg_writer_write(writer, IMGCODEC_JPEG_WRITER_CAPACITY);
    imgcodec_jpeg_writer_init_destination(info);
    return TRUE;
}

// In C because libjpeg calls it at the end: what is left in the buffer goes out.
static void imgcodec_jpeg_writer_term_destination(j_compress_ptr info) {
    imgcodec_jpeg_writer *writer = (imgcodec_jpeg_writer *)info->client_data;
    imgcodec_jpeg_writer_write(writer, IMGCODEC_JPEG_WRITER_CAPACITY - writer->destination.free_in_buffer);
}

// In C because jpeg_start_compress runs under longjmp.
int imgcodec_jpeg_writer_open(int fd, uint32_t width, uint32_t height, int channels, int quality,
                              imgcodec_jpeg_writer **result, char *message, size_t message_size) {
    *result = NULL;
    imgcodec_jpeg_writer *writer = calloc(1, sizeof *writer);
    if (writer == NULL) {
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    writer->fd = fd;
    writer->height = height;
    *result = writer;
    IMGCODEC_WRITER_GUARD(writer, message, message_size);
    if ((channels != 1 && channels != 3) || width == 0 || height == 0 || width > JPEG_MAX_DIMENSION
        || height > JPEG_MAX_DIMENSION) {
        imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode JPEG: %d channels, %ux%u", channels, width, height);
    }
    writer->info.err = jpeg_std_error(&writer->errors);
    writer->errors.error_exit = imgcodec_jpeg_writer_error_exit;
    writer->errors.output_message = imgcodec_jpeg_writer_output_message;
    writer->info.client_data = writer;
    jpeg_create_compress(&writer->info);
    writer->created = 1;
    writer->destination.init_destination = imgcodec_jpeg_writer_init_destination;
    writer->destination.empty_output_buffer = imgcodec_jpeg_writer_empty_buffer;
    writer->destination.term_destination = imgcodec_jpeg_writer_term_destination;
    writer->info.dest = &writer->destination;
    writer->info.image_width = width;
    writer->info.image_height = height;
    writer->info.input_components = channels;
    writer->info.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&writer->info);
    jpeg_set_quality(&writer->info, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    writer->info.optimize_coding = TRUE;
    jpeg_start_compress(&writer->info, TRUE);
    return IMGCODEC_OK;
}

// In C because jpeg_write_scanlines compresses under longjmp.
int imgcodec_jpeg_writer_write_row(imgcodec_jpeg_writer *writer, const unsigned char *row,
                                   char *message, size_t message_size) {
    IMGCODEC_WRITER_GUARD(writer, message, message_size);
    if (writer->rows_written >= writer->height) {
        imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode JPEG: more rows than the height");
    }
    JSAMPROW rows[1] = { (JSAMPROW)row };
    jpeg_write_scanlines(&writer->info, rows, 1);
    writer->rows_written++;
    return IMGCODEC_OK;
}

// In C because jpeg_finish_compress writes the last data and EOI under longjmp.
int imgcodec_jpeg_writer_finish(imgcodec_jpeg_writer *writer, char *message, size_t message_size) {
    IMGCODEC_WRITER_GUARD(writer, message, message_size);
    if (writer->rows_written != writer->height) {
        imgcodec_fail(&writer->failure, IMGCODEC_IO, "cannot encode JPEG: %u of %u rows written",
                      writer->rows_written, writer->height);
    }
    jpeg_finish_compress(&writer->info);
    return IMGCODEC_OK;
}

// In C because it frees libjpeg state.
void imgcodec_jpeg_writer_close(imgcodec_jpeg_writer *writer) {
    if (writer == NULL) return;
    if (writer->created) jpeg_destroy_compress(&writer->info);
    free(writer);
}
