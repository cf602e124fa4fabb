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

// In C because libpng calls it. Warnings are benign ("iCCP: known incorrect sRGB profile") and
// are dropped, except the user-limit ones that explain the IHDR error following them.
static void imgcodec_png_warning(png_structp png, png_const_charp text) {
    imgcodec_decoder *decoder = (imgcodec_decoder *)png_get_error_ptr(png);
    if (decoder->png.user_limit_tripped == 0 && strstr(text, "exceeds user limit") != NULL) {
        decoder->png.user_limit_tripped = strstr(text, "width") != NULL ? 1 : 2;
    }
}

// In C because libpng calls it; a short read fails the decode by longjmp.
static void imgcodec_png_read(png_structp png, png_bytep out, size_t count) {
    imgcodec_decoder *decoder = (imgcodec_decoder *)png_get_io_ptr(png);
    if (imgcodec_source_read(&decoder->source, &decoder->failure, out, count) != count) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid PNG: Premature end of PNG file");
    }
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
void imgcodec_png_open(imgcodec_decoder *decoder) {
    unsigned char signature[8];
    size_t got = imgcodec_source_read(&decoder->source, &decoder->failure, signature, sizeof signature);
    if (got < sizeof signature && (got == 0 || png_sig_cmp(signature, 0, got) == 0)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid PNG: Premature end of PNG file");
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
    // Text, ICC profiles and suggested palettes are never used: skip them (CRC still checked)
    // instead of storing them, so thousands of text chunks cost no memory.
    static const png_byte ignored[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT";
    png_set_keep_unknown_chunks(state->png, PNG_HANDLE_CHUNK_NEVER, ignored, 5);
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
#ifdef PNG_eXIf_SUPPORTED
    png_bytep exif = NULL;
    png_uint_32 exif_length = 0;
    if (png_get_eXIf_1(state->png, state->info, &exif_length, &exif) != 0) {
        header->orientation = imgcodec_exif_orientation(exif, exif_length);
    }
#endif
    imgcodec_check_limits(decoder);
}

// In C because png_read_update_info allocates and may fail by longjmp.
void imgcodec_png_start(imgcodec_decoder *decoder, int mode) {
    png_structp png = decoder->png.png;
    png_infop info = decoder->png.info;
    if (mode == IMGCODEC_MODE_PIXELS) {
        int color_type = png_get_color_type(png, info);
        int bit_depth = png_get_bit_depth(png, info);
        if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
        if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS) != 0) png_set_tRNS_to_alpha(png);
        if (bit_depth == 16) png_set_scale_16(png);
        if ((color_type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    imgcodec_output *output = &decoder->output;
    output->width = png_get_image_width(png, info);
    output->height = png_get_image_height(png, info);
    output->channels = png_get_channels(png, info);
    output->row_bytes = png_get_rowbytes(png, info);
    output->passes = passes;
}

// In C because png_read_row decodes under longjmp.
void imgcodec_png_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    png_read_row(decoder->png.png, row, NULL);
}

// In C because png_read_end checks the remaining chunks' CRCs and IEND under longjmp.
void imgcodec_png_finish(imgcodec_decoder *decoder) {
    png_read_end(decoder->png.png, NULL);
}

// In C because it frees libpng state.
void imgcodec_png_destroy(imgcodec_decoder *decoder) {
    if (decoder->png.png != NULL) {
        png_destroy_read_struct(&decoder->png.png, decoder->png.info != NULL ? &decoder->png.info : NULL, NULL);
    }
    decoder->png.png = NULL;
    decoder->png.info = NULL;
}
