#include <stdlib.h>
#include <string.h>
#include "internal.h"

// In C because it replaces libpng's error handler (which aborts without a jump target) with our longjmp.
static void imgcodec_png_error(png_structp png, png_const_charp text) {
    imgcodec_decoder *decoder = (imgcodec_decoder *)png_get_error_ptr(png);
    if (decoder->png.user_limit_tripped && strcmp(text, "Invalid IHDR data") == 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: PNG %s exceeds the limit (%u)",
                      decoder->png.user_limit_tripped == 1 ? "width" : "height",
                      decoder->png.user_limit_tripped == 1 ? decoder->limits.max_width : decoder->limits.max_height);
    }
    imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid PNG: %s", text);
}

// In C because libpng calls it and a fatal one longjmps. Warnings are benign ("iCCP: known
// incorrect sRGB profile") and are dropped, except the user-limit ones that explain the IHDR error
// following them, and image data beyond what IHDR declares: libpng only warns about that once it
// has inflated all of it, so a small file could make it inflate gigabytes (a zlib bomb).
static void imgcodec_png_warning(png_structp png, png_const_charp text) {
    imgcodec_decoder *decoder = (imgcodec_decoder *)png_get_error_ptr(png);
    if (strstr(text, "Too much image data") != NULL || strstr(text, "Extra compressed data") != NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid PNG: %s", text);
    }
    if (decoder->png.user_limit_tripped == 0 && strstr(text, "exceeds user limit") != NULL) {
        decoder->png.user_limit_tripped = strstr(text, "width") != NULL ? 1 : 2;
    }
}

// In C beside the read callback, which feeds it the bytes of eXIf chunks as libpng skips them:
// keeps the first IMGCODEC_EXIF_MAX bytes of the first one, for the orientation. libpng's own eXIf
// handling would hold the whole chunk twice (a 50 MB chunk cost 100 MB), reading it byte by byte.
static void imgcodec_png_keep_exif(imgcodec_decoder *decoder, int location, const unsigned char *bytes, size_t count) {
    imgcodec_png_state *state = &decoder->png;
    if (location == PNG_IO_CHUNK_CRC) {
        state->exif_done = 1;  // only the first eXIf counts
        return;
    }
    if (location != PNG_IO_CHUNK_DATA) return;
    if (state->exif == NULL) {
        state->exif = malloc(IMGCODEC_EXIF_MAX);
        if (state->exif == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    }
    size_t room = IMGCODEC_EXIF_MAX - state->exif_length;
    size_t kept = count < room ? count : room;
    memcpy(state->exif + state->exif_length, bytes, kept);
    state->exif_length += kept;
}

// In C because libpng calls it; a short read fails the decode by longjmp. Once the last row is
// inflated, libpng inflates whatever IDAT data is left before it reports "Too much image data", so
// a small file declaring a small image could make it inflate gigabytes: that stops here at 16 KiB
// of surplus input.
static void imgcodec_png_read(png_structp png, png_bytep out, size_t count) {
    imgcodec_decoder *decoder = (imgcodec_decoder *)png_get_io_ptr(png);
    imgcodec_png_state *state = &decoder->png;
    int location = (int)(png_get_io_state(png) & PNG_IO_MASK_LOC);
    png_uint_32 chunk = png_get_io_chunk_type(png);
    if (state->finishing && location == PNG_IO_CHUNK_DATA && chunk == 0x49444154u /* IDAT */) {
        state->surplus_idat += count;
        if (state->surplus_idat > IMGCODEC_PNG_SURPLUS_IDAT_MAX) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid PNG: IDAT: Too much image data");
        }
    }
    if (imgcodec_source_read(&decoder->source, &decoder->failure, out, count) != count) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid PNG: Premature end of PNG file");
    }
    if (!state->exif_done && chunk == 0x65584966u /* eXIf */) imgcodec_png_keep_exif(decoder, location, out, count);
}

// In C because a refusal longjmps. IHDR must follow the signature: its size is checked against
// the limits before libpng reads (and allocates for) anything else; libpng's own user limits stay
// as a backstop.
static void imgcodec_png_peek_size(imgcodec_decoder *decoder) {
    imgcodec_source *source = &decoder->source;
    if (source->length - source->position < 16) return;
    const unsigned char *ihdr = source->buffer + source->position;
    if (memcmp(ihdr + 4, "IHDR", 4) != 0) return;
    decoder->header.width = png_get_uint_32(ihdr + 8);
    decoder->header.height = png_get_uint_32(ihdr + 12);
    imgcodec_check_limits(decoder);
}

// In C because libpng calls are made under the entry point's longjmp target.
static void imgcodec_png_open(imgcodec_decoder *decoder) {
    unsigned char signature[8];
    size_t got = imgcodec_source_read(&decoder->source, &decoder->failure, signature, sizeof signature);
    if (got < sizeof signature && (got == 0 || png_sig_cmp(signature, 0, got) == 0)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid PNG: Premature end of PNG file");
    }
    if (png_sig_cmp(signature, 0, sizeof signature) != 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid PNG: Not a PNG file (bad signature)");
    }
    imgcodec_png_peek_size(decoder);
    imgcodec_png_state *state = &decoder->png;
    state->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, decoder, imgcodec_png_error, imgcodec_png_warning);
    if (state->png == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    state->info = png_create_info_struct(state->png);
    if (state->info == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    png_set_read_fn(state->png, decoder, imgcodec_png_read);
    png_set_sig_bytes(state->png, 8);
    uint32_t max_width = decoder->limits.max_width, max_height = decoder->limits.max_height;
    png_set_user_limits(state->png, max_width == 0 || max_width > PNG_UINT_31_MAX ? PNG_UINT_31_MAX : max_width,
                        max_height == 0 || max_height > PNG_UINT_31_MAX ? PNG_UINT_31_MAX : max_height);
    // A damaged ancillary chunk means a damaged file: fail as for critical chunks.
    png_set_crc_action(state->png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
    // Text, ICC profiles, suggested palettes and calibration are never used: skip them (CRC still
    // checked) instead of storing them, so thousands of text chunks cost no memory. Skipping pCAL
    // and sCAL matters most: libpng allocates and zeroes a buffer of their declared length first
    // (its chunk size limit is only a warning), so a 30-byte file claiming a 2 GiB pCAL would
    // touch 2 GiB before the read fails. eXIf is skipped too: the read callback keeps its start.
    static const png_byte ignored[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0pCAL\0sCAL\0eXIf";
    png_set_keep_unknown_chunks(state->png, PNG_HANDLE_CHUNK_NEVER, ignored, 8);
    png_read_info(state->png, state->info);

    png_uint_32 width, height;
    int bit_depth, color_type, interlace;
    png_get_IHDR(state->png, state->info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    int trns = png_get_valid(state->png, state->info, PNG_INFO_tRNS) != 0;
    imgcodec_header *header = &decoder->header;
    header->width = width;
    header->height = height;
    header->bit_depth = bit_depth;
    header->progressive = interlace != PNG_INTERLACE_NONE;
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: header->color = IMGCODEC_COLOR_GRAY; header->channels = 1; break;
    case PNG_COLOR_TYPE_GRAY_ALPHA: header->color = IMGCODEC_COLOR_GRAY_ALPHA; header->channels = 2; break;
    case PNG_COLOR_TYPE_RGB: header->color = IMGCODEC_COLOR_RGB; header->channels = 3; break;
    case PNG_COLOR_TYPE_RGB_ALPHA: header->color = IMGCODEC_COLOR_RGBA; header->channels = 4; break;
    default: header->color = IMGCODEC_COLOR_PALETTE; header->channels = 3; break;
    }
    header->has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || trns;
    if (trns && (color_type & PNG_COLOR_MASK_ALPHA) == 0) header->channels += 1;
    // libpng holds the current and previous row (as stored, and as transformed: at most 8 bytes a
    // pixel) and zlib's 32 KiB window; it never holds the whole image, interlaced or not.
    header->decode_memory = ((uint64_t)png_get_rowbytes(state->png, state->info) + (uint64_t)width * 8) * 2 + (64u << 10);
    header->convert_memory = header->decode_memory;
    // An eXIf after the image data comes too late for the header, as in libpng's own handling.
    state->exif_done = 1;
    if (state->exif != NULL) header->orientation = imgcodec_exif_orientation(state->exif, state->exif_length);
    free(state->exif);
    state->exif = NULL;
    imgcodec_check_limits(decoder);
}

// In C because libpng calls it, after inflating a row and before finishing it (which, for the
// last row, inflates every IDAT byte left): from the last row's call on, IDAT data is surplus.
static void imgcodec_png_row_inflated(png_structp png, png_row_infop row_info, png_bytep data) {
    (void)row_info;
    (void)data;
    imgcodec_decoder *decoder = (imgcodec_decoder *)png_get_io_ptr(png);
    if (decoder->png.last_row) decoder->png.finishing = 1;
}

// In C because png_read_update_info allocates and may fail by longjmp.
static void imgcodec_png_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    png_structp png = decoder->png.png;
    png_infop info = decoder->png.info;
    if (mode == IMGCODEC_MODE_PIXELS) {
        // The source's channels and depth, unpacked: palettes become RGB, tRNS an alpha channel,
        // gray below 8 bits is scaled to 8, and 16-bit samples stay 16-bit in native byte order.
        int color_type = png_get_color_type(png, info);
        int bit_depth = png_get_bit_depth(png, info);
        if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
        if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS) != 0) png_set_tRNS_to_alpha(png);
        if (bit_depth == 16) {
            const uint16_t probe = 1;
            if (*(const unsigned char *)&probe == 1) png_set_swap(png);
        }
    }
    int passes = png_set_interlace_handling(png);
    png_set_read_user_transform_fn(png, imgcodec_png_row_inflated);
    png_read_update_info(png, info);
    imgcodec_output *output = &decoder->output;
    output->width = png_get_image_width(png, info);
    output->height = png_get_image_height(png, info);
    output->channels = png_get_channels(png, info);
    output->bit_depth = png_get_bit_depth(png, info) == 16 ? 16 : 8;
    output->row_bytes = png_get_rowbytes(png, info);
    output->passes = passes;
}

// In C because png_read_row decodes under longjmp.
static void imgcodec_png_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    const imgcodec_output *output = &decoder->output;
    if (decoder->rows_read + 1 == (uint64_t)output->height * (uint64_t)output->passes) {
        decoder->png.last_row = 1;
        // An interlaced image's last row may get no pixels in the last pass: then no row data
        // comes before the surplus.
        if (output->passes > 1 && !imgcodec_png_row_in_pass(output->height - 1, output->width, output->passes - 1)) {
            decoder->png.finishing = 1;
        }
    }
    png_read_row(decoder->png.png, row, NULL);
}

// In C because png_read_end checks the remaining chunks' CRCs and IEND under longjmp.
static void imgcodec_png_finish(imgcodec_decoder *decoder) {
    decoder->png.finishing = 1;
    png_read_end(decoder->png.png, NULL);
}

// In C because it frees libpng state.
static void imgcodec_png_destroy(imgcodec_decoder *decoder) {
    if (decoder->png.png != NULL) {
        png_destroy_read_struct(&decoder->png.png, decoder->png.info != NULL ? &decoder->png.info : NULL, NULL);
    }
    decoder->png.png = NULL;
    decoder->png.info = NULL;
    free(decoder->png.exif);
    decoder->png.exif = NULL;
}

const imgcodec_format_ops imgcodec_png_ops = {
    .name = "PNG",
    .open = imgcodec_png_open,
    .start = imgcodec_png_start,
    .read_row = imgcodec_png_read_row,
    .finish = imgcodec_png_finish,
    .destroy = imgcodec_png_destroy,
};
