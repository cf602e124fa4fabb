#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "imgcodec_fixtures.h"

/// A growable in-memory PNG output for fixtures.
typedef struct imgcodec_fixture_png {
    imgcodec_failure failure;
    unsigned char *data;
    size_t size;
    size_t capacity;
} imgcodec_fixture_png;

// In C because libpng calls it; an allocation failure fails the fixture by longjmp.
static void imgcodec_fixture_png_write(png_structp png, png_bytep bytes, size_t length) {
    imgcodec_fixture_png *output = (imgcodec_fixture_png *)png_get_io_ptr(png);
    if (output->size + length > output->capacity) {
        size_t capacity = output->capacity ? output->capacity : 4096;
        while (capacity < output->size + length) capacity *= 2;
        unsigned char *grown = realloc(output->data, capacity);
        if (grown == NULL) imgcodec_fail(&output->failure, IMGCODEC_IO, "out of memory");
        output->data = grown;
        output->capacity = capacity;
    }
    memcpy(output->data + output->size, bytes, length);
    output->size += length;
}

// In C because libpng calls it; memory needs no flushing.
static void imgcodec_fixture_png_flush(png_structp png) {
    (void)png;
}

// In C because it replaces libpng's aborting error handler with a longjmp to the fixture call.
static void imgcodec_fixture_png_error(png_structp png, png_const_charp text) {
    imgcodec_fixture_png *output = (imgcodec_fixture_png *)png_get_error_ptr(png);
    imgcodec_fail(&output->failure, IMGCODEC_INVALID, "%s", text);
}

// In C because libpng calls it; fixtures stay silent.
static void imgcodec_fixture_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

// In C beside the APNG chunk writers; stores a big-endian PNG integer.
static void imgcodec_fixture_be32(unsigned char *p, uint32_t value) {
    p[0] = (unsigned char)(value >> 24);
    p[1] = (unsigned char)(value >> 16);
    p[2] = (unsigned char)(value >> 8);
    p[3] = (unsigned char)value;
}

// In C because png_write_chunk runs under the fixture's longjmp target; writes an APNG fcTL covering the whole image.
static void imgcodec_fixture_fctl(png_structp png, uint32_t sequence, uint32_t width, uint32_t height) {
    unsigned char fctl[26] = {0};
    imgcodec_fixture_be32(fctl, sequence);
    imgcodec_fixture_be32(fctl + 4, width);
    imgcodec_fixture_be32(fctl + 8, height);
    fctl[21] = 1;   // delay 0/1
    fctl[22] = 0;   // delay denominator 0 means 1/100 s
    png_write_chunk(png, (png_const_bytep)"fcTL", fctl, sizeof fctl);
}

// In C because libpng's encoder fails by longjmp.
int imgcodec_test_encode_png(const unsigned char *rows, uint32_t width, uint32_t height,
                             const imgcodec_test_png_options *options,
                             unsigned char **data, size_t *size, char *message, size_t message_size) {
    imgcodec_fixture_png *volatile output = calloc(1, sizeof *output);
    png_structp volatile png = NULL;
    png_infop volatile info = NULL;
    *data = NULL;
    *size = 0;
    if (output == NULL) {
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    if (setjmp(output->failure.jump) != 0) {
        png_structp p = png;
        png_infop i = info;
        if (p != NULL) png_destroy_write_struct(&p, i != NULL ? &i : NULL);
        int status = imgcodec_report(&output->failure, message, message_size);
        free(output->data);
        free(output);
        return status;
    }
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, output, imgcodec_fixture_png_error, imgcodec_fixture_png_warning);
    if (png == NULL) imgcodec_fail(&output->failure, IMGCODEC_IO, "out of memory");
    info = png_create_info_struct(png);
    if (info == NULL) imgcodec_fail(&output->failure, IMGCODEC_IO, "out of memory");
    png_set_write_fn(png, output, imgcodec_fixture_png_write, imgcodec_fixture_png_flush);
    png_set_IHDR(png, info, width, height, options->bit_depth, options->color_type,
                 options->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (options->palette_entries > 0) {
        png_color palette[256];
        for (int i = 0; i < options->palette_entries && i < 256; i++) {
            palette[i] = (png_color){options->palette[3 * i], options->palette[3 * i + 1], options->palette[3 * i + 2]};
        }
        png_set_PLTE(png, info, palette, options->palette_entries);
    }
    if (options->palette_alpha_entries > 0) {
        png_set_tRNS(png, info, options->palette_alpha, options->palette_alpha_entries, NULL);
    } else if (options->transparent_color) {
        png_color_16 color = {
            .gray = options->transparent_gray, .red = options->transparent_red,
            .green = options->transparent_green, .blue = options->transparent_blue,
        };
        png_set_tRNS(png, info, NULL, 0, &color);
    }
    png_write_info(png, info);
    // Chunks written by hand land between the header chunks and the first IDAT.
    if (options->orientation >= 1 && options->orientation <= 8) {
        unsigned char exif[26];
        png_write_chunk(png, (png_const_bytep)"eXIf", exif, imgcodec_fixture_exif(exif, options->orientation, 0));
    }
    for (int i = 0; i < options->text_chunks; i++) {
        char text[64];
        int length = snprintf(text, sizeof text, "Comment%cfixture text chunk %d", '\0', i);
        png_write_chunk(png, (png_const_bytep)"tEXt", (png_const_bytep)text, (size_t)length);
    }
    if (options->apng) {
        unsigned char actl[8];
        imgcodec_fixture_be32(actl, 2);      // two frames
        imgcodec_fixture_be32(actl + 4, 0);  // loop forever
        png_write_chunk(png, (png_const_bytep)"acTL", actl, sizeof actl);
        imgcodec_fixture_fctl(png, 0, width, height);
    }
    int passes = png_set_interlace_handling(png);
    size_t stride = png_get_rowbytes(png, info);
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < height; y++) png_write_row(png, rows + stride * y);
    }
    if (options->apng) {
        // The second frame's data is opaque to libpng: fdAT is an unknown ancillary chunk.
        imgcodec_fixture_fctl(png, 1, width, height);
        unsigned char fdat[16] = {0};
        imgcodec_fixture_be32(fdat, 2);
        memcpy(fdat + 4, "not-really-zlib", 12);
        png_write_chunk(png, (png_const_bytep)"fdAT", fdat, sizeof fdat);
    }
    png_write_end(png, NULL);
    png_structp p = png;
    png_infop i = info;
    png_destroy_write_struct(&p, &i);
    *data = output->data;
    *size = output->size;
    free(output);
    return IMGCODEC_OK;
}
