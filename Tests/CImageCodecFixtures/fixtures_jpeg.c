#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "imgcodec_fixtures.h"

// In C because it replaces libjpeg's exit()-ing error handler with a longjmp to the fixture call.
static void imgcodec_fixture_error_exit(j_common_ptr info) {
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    imgcodec_fail((imgcodec_failure *)info->client_data, IMGCODEC_INVALID, "%s", text);
}

// In C because libjpeg calls it; fixtures stay silent.
static void imgcodec_fixture_output_message(j_common_ptr info) {
    (void)info;
}

// In C because libjpeg's error manager is set up before any libjpeg call.
static struct jpeg_error_mgr *imgcodec_fixture_errors(struct jpeg_error_mgr *errors) {
    jpeg_std_error(errors);
    errors->error_exit = imgcodec_fixture_error_exit;
    errors->output_message = imgcodec_fixture_output_message;
    return errors;
}

// In C beside the Exif block writer; stores 16 bits in the block's byte order.
static void imgcodec_fixture_put16(unsigned char *p, unsigned value, int little_endian) {
    p[little_endian ? 0 : 1] = (unsigned char)(value & 0xFF);
    p[little_endian ? 1 : 0] = (unsigned char)(value >> 8);
}

// In C beside the Exif block writer; stores 32 bits in the block's byte order.
static void imgcodec_fixture_put32(unsigned char *p, uint32_t value, int little_endian) {
    imgcodec_fixture_put16(p + (little_endian ? 0 : 2), value & 0xFFFF, little_endian);
    imgcodec_fixture_put16(p + (little_endian ? 2 : 0), value >> 16, little_endian);
}

// In C beside the fixture encoders that embed it.
size_t imgcodec_fixture_exif(unsigned char out[26], int orientation, int little_endian) {
    memset(out, 0, 26);
    out[0] = out[1] = little_endian ? 'I' : 'M';
    imgcodec_fixture_put16(out + 2, 42, little_endian);
    imgcodec_fixture_put32(out + 4, 8, little_endian);          // IFD0 right after the header
    imgcodec_fixture_put16(out + 8, 1, little_endian);          // one entry
    imgcodec_fixture_put16(out + 10, 0x0112, little_endian);    // Orientation
    imgcodec_fixture_put16(out + 12, 3, little_endian);         // SHORT
    imgcodec_fixture_put32(out + 14, 1, little_endian);         // one value
    imgcodec_fixture_put16(out + 18, (unsigned)orientation, little_endian);
    return 26;                                                  // next-IFD offset 0 ends it
}

// In C because jpeg_write_marker runs under the fixture's longjmp target.
static void imgcodec_fixture_write_exif(j_compress_ptr info, int orientation, int little_endian) {
    if (orientation < 1 || orientation > 8) return;
    unsigned char block[32];
    memcpy(block, "Exif\0\0", 6);
    size_t length = 6 + imgcodec_fixture_exif(block + 6, orientation, little_endian);
    jpeg_write_marker(info, JPEG_APP0 + 1, block, (unsigned)length);
}

// In C because libjpeg's encoder takes the script: one scan per AC coefficient per bit, a "scan bomb" that is still a correct JPEG.
static jpeg_scan_info *imgcodec_fixture_many_scans(int components, int *count) {
    const int bits = 10;  // libjpeg's MAX_AH_AL for 8-bit data
    int total = 1 + components * 63 * (bits + 1);
    jpeg_scan_info *scans = calloc((size_t)total, sizeof *scans);
    if (scans == NULL) return NULL;
    scans[0].comps_in_scan = components;
    for (int c = 0; c < components; c++) scans[0].component_index[c] = c;
    int n = 1;
    for (int c = 0; c < components; c++) {
        for (int k = 1; k < 64; k++) {
            for (int al = bits; al >= 0; al--) {
                jpeg_scan_info *scan = &scans[n++];
                scan->comps_in_scan = 1;
                scan->component_index[0] = c;
                scan->Ss = scan->Se = k;
                scan->Ah = al == bits ? 0 : al + 1;
                scan->Al = al;
            }
        }
    }
    *count = total;
    return scans;
}

// In C because libjpeg's encoder fails by longjmp.
int imgcodec_test_encode_jpeg(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_jpeg_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size) {
    static const int components[] = {3, 1, 4, 4};
    static const J_COLOR_SPACE input[] = {JCS_RGB, JCS_GRAYSCALE, JCS_CMYK, JCS_CMYK};
    static const J_COLOR_SPACE stored[] = {JCS_YCbCr, JCS_GRAYSCALE, JCS_CMYK, JCS_YCCK};
    int space = options->color_space >= 0 && options->color_space <= 3 ? options->color_space : 0;
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    imgcodec_failure failure;
    unsigned char *target = NULL;  // set by libjpeg through its address, so it survives longjmp
    unsigned long length = 0;
    jpeg_scan_info *volatile scans = NULL;
    *data = NULL;
    *size = 0;
    info.err = imgcodec_fixture_errors(&errors);
    info.client_data = &failure;
    jpeg_create_compress(&info);
    if (setjmp(failure.jump) != 0) {
        jpeg_destroy_compress(&info);
        free(target);
        free(scans);
        return imgcodec_report(&failure, message, message_size);
    }
    jpeg_mem_dest(&info, &target, &length);
    info.image_width = width;
    info.image_height = height;
    info.input_components = components[space];
    info.in_color_space = input[space];
    jpeg_set_defaults(&info);
    jpeg_set_colorspace(&info, stored[space]);
    if (options->no_adobe_marker) info.write_Adobe_marker = FALSE;
    jpeg_set_quality(&info, options->quality, TRUE);
    if (options->full_chroma) {
        for (int c = 0; c < info.num_components; c++) info.comp_info[c].h_samp_factor = info.comp_info[c].v_samp_factor = 1;
    }
    if (options->progressive) jpeg_simple_progression(&info);
    if (options->many_scans) {
        int count = 0;
        scans = imgcodec_fixture_many_scans(info.num_components, &count);
        if (scans == NULL) imgcodec_fail(&failure, IMGCODEC_IO, "out of memory");
        info.scan_info = scans;
        info.num_scans = count;
    }
    info.arith_code = options->arithmetic ? TRUE : FALSE;
    jpeg_start_compress(&info, TRUE);
    imgcodec_fixture_write_exif(&info, options->orientation, options->exif_little_endian);
    size_t stride = (size_t)width * (size_t)components[space];
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * info.next_scanline);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    free(scans);
    *data = target;
    *size = length;
    return IMGCODEC_OK;
}

/// A destination manager that streams compressed data to a file descriptor.
typedef struct imgcodec_fixture_fd_destination {
    struct jpeg_destination_mgr manager;
    int fd;
    unsigned char buffer[65536];
} imgcodec_fixture_fd_destination;

// In C because a write error fails the fixture by longjmp.
static void imgcodec_fixture_fd_write(j_compress_ptr info, size_t count) {
    imgcodec_fixture_fd_destination *destination = (imgcodec_fixture_fd_destination *)info->dest;
    size_t done = 0;
    while (done < count) {
        ssize_t written = write(destination->fd, destination->buffer + done, count - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) imgcodec_fail((imgcodec_failure *)info->client_data, IMGCODEC_IO, "write: %s", strerror(errno));
        done += (size_t)written;
    }
    destination->manager.next_output_byte = destination->buffer;
    destination->manager.free_in_buffer = sizeof destination->buffer;
}

// In C because libjpeg calls it (destination manager hook).
static void imgcodec_fixture_fd_init(j_compress_ptr info) {
    imgcodec_fixture_fd_destination *destination = (imgcodec_fixture_fd_destination *)info->dest;
    destination->manager.next_output_byte = destination->buffer;
    destination->manager.free_in_buffer = sizeof destination->buffer;
}

// In C because libjpeg calls it when the buffer is full (the whole buffer is due).
static boolean imgcodec_fixture_fd_empty(j_compress_ptr info) {
    imgcodec_fixture_fd_write(info, sizeof ((imgcodec_fixture_fd_destination *)info->dest)->buffer);
    return TRUE;
}

// In C because libjpeg calls it at the end with a partly filled buffer.
static void imgcodec_fixture_fd_term(j_compress_ptr info) {
    imgcodec_fixture_fd_destination *destination = (imgcodec_fixture_fd_destination *)info->dest;
    imgcodec_fixture_fd_write(info, sizeof destination->buffer - destination->manager.free_in_buffer);
}

// In C because libjpeg's encoder fails by longjmp.
int imgcodec_test_write_pattern_jpeg(int fd, uint32_t width, uint32_t height, int quality, int orientation,
                                     char *message, size_t message_size) {
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    imgcodec_failure failure;
    imgcodec_fixture_fd_destination *volatile destination = calloc(1, sizeof *destination);
    unsigned char *volatile row = malloc((size_t)width * 3);
    info.err = imgcodec_fixture_errors(&errors);
    info.client_data = &failure;
    jpeg_create_compress(&info);
    if (setjmp(failure.jump) != 0) {
        jpeg_destroy_compress(&info);
        free(destination);
        free(row);
        return imgcodec_report(&failure, message, message_size);
    }
    if (destination == NULL || row == NULL) imgcodec_fail(&failure, IMGCODEC_IO, "out of memory");
    destination->fd = fd;
    destination->manager.init_destination = imgcodec_fixture_fd_init;
    destination->manager.empty_output_buffer = imgcodec_fixture_fd_empty;
    destination->manager.term_destination = imgcodec_fixture_fd_term;
    info.dest = &destination->manager;
    info.image_width = width;
    info.image_height = height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    imgcodec_fixture_write_exif(&info, orientation, 0);
    while (info.next_scanline < height) {
        uint32_t y = info.next_scanline;
        for (uint32_t x = 0; x < width; x++) {
            row[3 * x] = (unsigned char)((uint64_t)x * 255 / (width > 1 ? width - 1 : 1));
            row[3 * x + 1] = (unsigned char)((uint64_t)y * 255 / (height > 1 ? height - 1 : 1));
            row[3 * x + 2] = (unsigned char)(((x >> 4) ^ (y >> 4)) & 1 ? 200 : 40);
        }
        JSAMPROW pointer = row;
        jpeg_write_scanlines(&info, &pointer, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    free(destination);
    free(row);
    return IMGCODEC_OK;
}

// In C because libjpeg's decoder fails by longjmp.
int imgcodec_test_decode_jpeg(const unsigned char *data, size_t size, int scale_num,
                              unsigned char **pixels, uint32_t *width, uint32_t *height, int *components,
                              char *message, size_t message_size) {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    imgcodec_failure failure;
    unsigned char *volatile output = NULL;
    *pixels = NULL;
    info.err = imgcodec_fixture_errors(&errors);
    info.client_data = &failure;
    jpeg_create_decompress(&info);
    if (setjmp(failure.jump) != 0) {
        jpeg_destroy_decompress(&info);
        free(output);
        return imgcodec_report(&failure, message, message_size);
    }
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    info.scale_num = (unsigned)scale_num;
    info.scale_denom = 8;
    jpeg_start_decompress(&info);
    size_t stride = (size_t)info.output_width * (size_t)info.output_components;
    output = malloc(stride * info.output_height);
    if (output == NULL) imgcodec_fail(&failure, IMGCODEC_IO, "out of memory");
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = output + stride * info.output_scanline;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    *width = info.output_width;
    *height = info.output_height;
    *components = info.output_components;
    jpeg_destroy_decompress(&info);
    *pixels = output;
    return IMGCODEC_OK;
}

// In C because the fixture buffers come from C's allocator.
void imgcodec_free(void *pointer) {
    free(pointer);
}
