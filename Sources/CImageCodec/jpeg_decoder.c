#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <jerror.h>
#include "internal.h"

// In C for libjpeg's callbacks: the decoder that owns a libjpeg object (client_data points back to it).
static imgcodec_decoder *imgcodec_jpeg_owner(j_common_ptr info) {
    return (imgcodec_decoder *)info->client_data;
}

// In C because it replaces libjpeg's error_exit (which calls exit()) with a longjmp.
static void imgcodec_jpeg_error_exit(j_common_ptr info) {
    imgcodec_decoder *decoder = imgcodec_jpeg_owner(info);
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    switch (info->err->msg_code) {
    case JERR_BAD_PRECISION:
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: %d-bit JPEG", info->err->msg_parm.i[0]);
    case JERR_NO_BACKING_STORE:
        // libjpeg wanted more than max_memory_to_use for its coefficient buffers.
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: %u\xC3\x97%u multi-scan JPEG needs more than %llu MiB to decode",
                      info->is_decompressor ? ((j_decompress_ptr)info)->image_width : 0,
                      info->is_decompressor ? ((j_decompress_ptr)info)->image_height : 0,
                      (unsigned long long)(decoder->limits.max_memory >> 20));
    case JERR_SOF_UNSUPPORTED:
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: JPEG process SOF%d",
                      info->err->msg_parm.i[0] - 0xC0);
    default:
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid JPEG: %s", text);
    }
}

// In C because warnings ("Premature end of JPEG file", "Corrupt JPEG data: …") must fail the
// decode by longjmp; trace messages (level >= 0) are dropped, and so are the warnings that say
// nothing of the pixels: a JFIF version libjpeg does not know (a one-bit change in an APP0 it
// otherwise reads), and an ICC profile it cannot assemble (the pixels decode without it).
static void imgcodec_jpeg_emit_message(j_common_ptr info, int level) {
    if (level >= 0) return;
    if (info->err->msg_code == JWRN_JFIF_MAJOR || info->err->msg_code == JWRN_BOGUS_ICC) return;
    imgcodec_decoder *decoder = imgcodec_jpeg_owner(info);
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid JPEG: %s", text);
}

// In C because libjpeg calls it; messages never go to stderr.
static void imgcodec_jpeg_output_message(j_common_ptr info) {
    (void)info;
}

// In C because libjpeg calls it before every chunk of input; counting scans here is how
// libjpeg-turbo's own TJFLAG_LIMITSCANS works, so a scan bomb stops before scan N+1 is decoded.
static void imgcodec_jpeg_progress(j_common_ptr info) {
    imgcodec_decoder *decoder = imgcodec_jpeg_owner(info);
    // A progressive file is consumed whole before its first row: the chunks are where Ctrl-C gets in.
    imgcodec_check_cancel(decoder);
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    uint32_t limit = decoder->limits.max_scans;
    if (limit != 0 && decompress->input_scan_number > 0 && (uint32_t)decompress->input_scan_number > limit) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid JPEG: more than %u progressive scans", limit);
    }
}

// In C because libjpeg calls it (source manager hook).
static void imgcodec_jpeg_init_source(j_decompress_ptr info) {
    (void)info;
}

// In C because libjpeg calls it; end of file fails at once instead of faking an EOI marker.
static boolean imgcodec_jpeg_fill_input(j_decompress_ptr info) {
    imgcodec_decoder *decoder = imgcodec_jpeg_owner((j_common_ptr)info);
    if (imgcodec_source_fill(&decoder->source, &decoder->failure) == 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid JPEG: Premature end of JPEG file");
    }
    info->src->next_input_byte = decoder->source.buffer;
    info->src->bytes_in_buffer = decoder->source.length;
    return TRUE;
}

// In C because libjpeg calls it to skip marker payloads it does not keep.
static void imgcodec_jpeg_skip_input(j_decompress_ptr info, long count) {
    struct jpeg_source_mgr *source = info->src;
    while (count > 0) {
        if (source->bytes_in_buffer == 0) imgcodec_jpeg_fill_input(info);
        size_t step = (size_t)count < source->bytes_in_buffer ? (size_t)count : source->bytes_in_buffer;
        source->next_input_byte += step;
        source->bytes_in_buffer -= step;
        count -= (long)step;
    }
}

// In C because libjpeg calls it (source manager hook).
static void imgcodec_jpeg_term_source(j_decompress_ptr info) {
    (void)info;
}

// In C beside the marker reader below: copies `count` bytes from libjpeg's source, refilling it as
// needed (the fill callback never suspends: it fails by longjmp at end of file).
static void imgcodec_jpeg_copy_input(j_decompress_ptr info, unsigned char *out, size_t count) {
    struct jpeg_source_mgr *source = info->src;
    while (count > 0) {
        if (source->bytes_in_buffer == 0) (*source->fill_input_buffer)(info);
        size_t step = count < source->bytes_in_buffer ? count : source->bytes_in_buffer;
        memcpy(out, source->next_input_byte, step);
        source->next_input_byte += step;
        source->bytes_in_buffer -= step;
        out += step;
        count -= step;
    }
}

// In C because libjpeg calls it for every APP1 segment. The first Exif block's orientation is read
// and everything else is skipped: libjpeg's jpeg_save_markers would keep each segment in memory,
// so a file of a thousand 64 KiB APP1 segments would hold 64 MiB.
static boolean imgcodec_jpeg_read_app1(j_decompress_ptr info) {
    imgcodec_decoder *decoder = imgcodec_jpeg_owner((j_common_ptr)info);
    imgcodec_jpeg_state *state = &decoder->jpeg;
    unsigned char bytes[6];
    imgcodec_jpeg_copy_input(info, bytes, 2);
    size_t length = (size_t)bytes[0] << 8 | bytes[1];
    length = length > 2 ? length - 2 : 0;  // the length counts itself; libjpeg reads less as empty too
    if (!state->exif_seen && length > 6) {
        imgcodec_jpeg_copy_input(info, bytes, 6);
        length -= 6;
        if (memcmp(bytes, "Exif\0\0", 6) == 0) {
            state->exif_seen = 1;
            // Owned by the state until freed, so a longjmp out of the copy leaks nothing.
            state->exif = malloc(length);
            if (state->exif == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
            imgcodec_jpeg_copy_input(info, state->exif, length);
            decoder->header.orientation = imgcodec_exif_orientation(state->exif, length);
            free(state->exif);
            state->exif = NULL;
            return TRUE;
        }
    }
    if (length > 0) (*info->src->skip_input_data)(info, (long)length);
    return TRUE;
}

// In C because it reads libjpeg's component geometry. What libjpeg will allocate for this file: a
// multi-scan file (progressive, or a first scan without every component) is decoded into
// whole-image coefficient buffers, one JBLOCK (128 bytes) per block of each component, padded to
// whole MCUs as jdcoefct.c does; a single-scan file needs only an MCU row and a few sample rows.
static uint64_t imgcodec_jpeg_decode_memory(const struct jpeg_decompress_struct *info) {
    uint64_t rows = (uint64_t)info->image_width * (uint64_t)info->num_components *
                    (uint64_t)info->max_v_samp_factor * DCTSIZE * 4;
    if (!info->progressive_mode && info->comps_in_scan >= info->num_components) return rows;
    uint64_t coefficients = 0;
    for (int i = 0; i < info->num_components; i++) {
        const jpeg_component_info *component = &info->comp_info[i];
        uint64_t h = (uint64_t)component->h_samp_factor, v = (uint64_t)component->v_samp_factor;
        uint64_t across = ((uint64_t)component->width_in_blocks + h - 1) / h * h;
        uint64_t down = ((uint64_t)component->height_in_blocks + v - 1) / v * v;
        coefficients += across * down * sizeof(JBLOCK);
    }
    return coefficients + rows;
}

// In C because libjpeg calls are made under the entry point's longjmp target.
static void imgcodec_jpeg_open(imgcodec_decoder *decoder) {
    imgcodec_jpeg_state *state = &decoder->jpeg;
    struct jpeg_decompress_struct *info = &state->info;
    info->err = jpeg_std_error(&state->errors);
    state->errors.error_exit = imgcodec_jpeg_error_exit;
    state->errors.emit_message = imgcodec_jpeg_emit_message;
    state->errors.output_message = imgcodec_jpeg_output_message;
    info->client_data = decoder;
    jpeg_create_decompress(info);
    state->created = 1;
    if (decoder->limits.max_memory != 0) {
        // Progressive files decode into whole-image coefficient buffers; past this cap libjpeg asks
        // for a backing store, which libjpeg-turbo lacks, so the decode fails instead of ballooning.
        uint64_t cap = decoder->limits.max_memory;
        info->mem->max_memory_to_use = cap > (uint64_t)LONG_MAX ? LONG_MAX : (long)cap;
    }
    state->source = (struct jpeg_source_mgr){
        .init_source = imgcodec_jpeg_init_source,
        .fill_input_buffer = imgcodec_jpeg_fill_input,
        .skip_input_data = imgcodec_jpeg_skip_input,
        .resync_to_restart = jpeg_resync_to_restart,
        .term_source = imgcodec_jpeg_term_source,
    };
    info->src = &state->source;
    state->progress.progress_monitor = imgcodec_jpeg_progress;
    info->progress = &state->progress;
    jpeg_set_marker_processor(info, JPEG_APP0 + 1, imgcodec_jpeg_read_app1);
    jpeg_read_header(info, TRUE);

    imgcodec_header *header = &decoder->header;
    header->width = info->image_width;
    header->height = info->image_height;
    header->channels = info->num_components;
    header->bit_depth = info->data_precision;
    header->progressive = info->progressive_mode ? 1 : 0;
    header->has_alpha = 0;
    switch (info->jpeg_color_space) {
    case JCS_GRAYSCALE: header->color = IMGCODEC_COLOR_GRAY; break;
    case JCS_YCbCr: header->color = IMGCODEC_COLOR_YCBCR; break;
    case JCS_RGB: header->color = IMGCODEC_COLOR_RGB; break;
    case JCS_CMYK: header->color = IMGCODEC_COLOR_CMYK; break;
    case JCS_YCCK: header->color = IMGCODEC_COLOR_YCCK; break;
    default: header->color = IMGCODEC_COLOR_OTHER; break;
    }
    header->decode_memory = imgcodec_jpeg_decode_memory(info);
    header->convert_memory = header->decode_memory;
    imgcodec_check_limits(decoder);
}

// In C because jpeg_start_decompress allocates and, for multi-scan files, decodes every scan under longjmp.
static void imgcodec_jpeg_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    imgcodec_jpeg_state *state = &decoder->jpeg;
    struct jpeg_decompress_struct *info = &state->info;
    int cmyk = info->jpeg_color_space == JCS_CMYK || info->jpeg_color_space == JCS_YCCK;
    if (info->jpeg_color_space == JCS_UNKNOWN) {
        // Verification refuses what conversion could not turn into RGB, so both agree.
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: JPEG with %d color components",
                      info->num_components);
    }
    if (mode == IMGCODEC_MODE_VERIFY) {
        // Only the entropy decoder and the marker reader detect damage: skip color conversion
        // and the costly accuracy of the later stages.
        info->dct_method = JDCT_IFAST;
        info->do_fancy_upsampling = FALSE;
        info->out_color_space = info->jpeg_color_space;
        // 1/8 scale: every coefficient of every block is still entropy-decoded (where truncation and
        // corruption show), but the inverse DCT keeps only the DC term and rows are 1/8 as wide.
        info->scale_num = 1;
        info->scale_denom = 8;
    } else {
        info->scale_num = (unsigned)scale_num;
        info->scale_denom = 8;
        info->out_color_space = cmyk ? JCS_CMYK : info->jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
        state->cmyk = cmyk;
        state->inverted_cmyk = info->saw_Adobe_marker ? 1 : 0;
    }
    jpeg_calc_output_dimensions(info);
    if (state->cmyk) {
        state->cmyk_row = malloc((size_t)info->output_width * 4);
        if (state->cmyk_row == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    }
    jpeg_start_decompress(info);
    imgcodec_output *output = &decoder->output;
    output->width = info->output_width;
    output->height = info->output_height;
    output->channels = state->cmyk ? 3 : info->output_components;
    output->bit_depth = 8;
    output->row_bytes = (size_t)output->width * (size_t)output->channels;
    output->passes = 1;
}

// In C beside jpeg_read_scanlines, which fills the CMYK row: converts it to RGB. Adobe files store
// the channels inverted (255 = no ink).
static void imgcodec_jpeg_cmyk_to_rgb(const unsigned char *cmyk, unsigned char *rgb, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++, cmyk += 4, rgb += 3) {
        unsigned c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        rgb[0] = (unsigned char)((c * k + 127) / 255);
        rgb[1] = (unsigned char)((m * k + 127) / 255);
        rgb[2] = (unsigned char)((y * k + 127) / 255);
    }
}

// In C because jpeg_read_scanlines decodes under longjmp.
static void imgcodec_jpeg_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    imgcodec_jpeg_state *state = &decoder->jpeg;
    JSAMPROW target = state->cmyk ? state->cmyk_row : row;
    if (jpeg_read_scanlines(&state->info, &target, 1) != 1) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid JPEG: no scanline decoded");
    }
    if (state->cmyk) imgcodec_jpeg_cmyk_to_rgb(state->cmyk_row, row, decoder->output.width, state->inverted_cmyk);
}

// In C because jpeg_finish_decompress reads up to EOI under longjmp.
static void imgcodec_jpeg_finish(imgcodec_decoder *decoder) {
    jpeg_finish_decompress(&decoder->jpeg.info);
}

// In C because it frees libjpeg state.
static void imgcodec_jpeg_destroy(imgcodec_decoder *decoder) {
    if (decoder->jpeg.created) jpeg_destroy_decompress(&decoder->jpeg.info);
    decoder->jpeg.created = 0;
    free(decoder->jpeg.cmyk_row);
    decoder->jpeg.cmyk_row = NULL;
    free(decoder->jpeg.exif);
    decoder->jpeg.exif = NULL;
}

const imgcodec_format_ops imgcodec_jpeg_ops = {
    .name = "JPEG",
    .open = imgcodec_jpeg_open,
    .start = imgcodec_jpeg_start,
    .read_row = imgcodec_jpeg_read_row,
    .finish = imgcodec_jpeg_finish,
    .destroy = imgcodec_jpeg_destroy,
};
