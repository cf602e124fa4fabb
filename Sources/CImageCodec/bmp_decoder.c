#include <stdlib.h>
#include <string.h>
#include "bmp_internal.h"

// A bounded BMP decoder written here (no BMP library is trusted). Headers: OS/2 BITMAPCOREHEADER
// (12 bytes), BITMAPINFOHEADER (40), its 52/56-byte variants with RGB(A) masks, V4 (108) and V5
// (124). Pixels: 1/2/4/8-bit palettes, 16/32-bit bit fields (default 5-5-5 and 8-8-8), 24-bit BGR,
// RLE8 and RLE4. Uncompressed rows are read where they lie in the file, a window of at most
// 64 KiB (or one row) at a time, so a file of any height costs one row of memory. RLE data is
// decoded whole into one palette index per pixel, since its rows come bottom-up and deltas skip
// about. Choices where files disagree with the spec or with each other:
// - pixels an RLE stream skips (delta, early end of line or of bitmap) are palette index 0;
// - runs past the right edge are clipped, a delta past the top ends the image;
// - an index beyond the palette is black; biClrUsed above 2^bpp is clamped to 2^bpp, and a
//   palette is cut where the pixel data starts;
// - the last row may lack its padding; anything after the pixel data is ignored.

/// The most bytes of stored rows read at once (more only when one row is longer).
#define IMGCODEC_BMP_WINDOW 65536

// Reads a little-endian 16-bit field.
static inline uint32_t imgcodec_bmp_le16(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

// Reads a little-endian 32-bit field.
static inline uint32_t imgcodec_bmp_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// Reads `count` header bytes in sequence; in C because a short file fails by longjmp.
static void imgcodec_bmp_read(imgcodec_decoder *decoder, unsigned char *out, size_t count) {
    imgcodec_bmp_state *state = decoder->state;
    size_t got = imgcodec_source_read(&decoder->source, &decoder->failure, out, count);
    state->consumed += got;
    if (got < count) imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated header");
}

// Turns a mask into a field, refusing masks a decoder could only guess at: bits outside the
// pixel, holes in the run of ones, or bits shared with another channel.
static void imgcodec_bmp_set_fields(imgcodec_decoder *decoder, const uint32_t masks[4]) {
    imgcodec_bmp_state *state = decoder->state;
    uint32_t seen = 0;
    for (int c = 0; c < 4; c++) {
        uint32_t mask = masks[c];
        imgcodec_bmp_field *field = &state->field[c];
        *field = (imgcodec_bmp_field){0, 0, 0};
        if (mask == 0) continue;
        if (state->bpp == 16 && mask > 0xFFFFu) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: bit-field mask 0x%X exceeds 16 bits", mask);
        }
        field->shift = (uint32_t)__builtin_ctz(mask);
        field->max = mask >> field->shift;
        if ((field->max & (field->max + 1u)) != 0) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: bit-field mask 0x%X is not contiguous", mask);
        }
        if ((seen & mask) != 0) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: bit-field masks overlap (0x%X)", mask);
        }
        seen |= mask;
        field->bits = 32 - __builtin_clz(field->max);
        if (field->bits > 8) state->wide = 1;
    }
    state->alpha = state->field[3].max != 0;
    for (int c = 0; c < 4; c++) {
        const imgcodec_bmp_field *field = &state->field[c];
        if (field->max == 0 || field->bits > 8) continue;
        for (uint32_t v = 0; v <= field->max; v++) state->scale[c][v] = (unsigned char)imgcodec_scale_to_8(v, (unsigned)field->bits);
    }
}

// Reads the masks of 16- and 32-bit images: from the header, after a 40-byte header, or the
// defaults (5-5-5, 8-8-8) without bit fields; the alpha mask counts only with bit fields.
static void imgcodec_bmp_read_masks(imgcodec_decoder *decoder, const unsigned char *info, uint32_t info_size) {
    imgcodec_bmp_state *state = decoder->state;
    uint32_t masks[4] = {0, 0, 0, 0};
    int bitfields = state->compression == IMGCODEC_BMP_BITFIELDS || state->compression == IMGCODEC_BMP_ALPHABITFIELDS;
    if (!bitfields) {
        int five = state->bpp == 16;
        masks[0] = five ? 0x7C00u : 0xFF0000u;
        masks[1] = five ? 0x03E0u : 0x00FF00u;
        masks[2] = five ? 0x001Fu : 0x0000FFu;
    } else if (info_size == 40) {
        unsigned char extra[16];
        size_t count = state->compression == IMGCODEC_BMP_ALPHABITFIELDS ? 16 : 12;
        imgcodec_bmp_read(decoder, extra, count);
        for (size_t c = 0; c < count / 4; c++) masks[c] = imgcodec_bmp_le32(extra + 4 * c);
    } else {
        for (int c = 0; c < 3; c++) masks[c] = imgcodec_bmp_le32(info + 40 + 4 * c);
        if (info_size >= 56) masks[3] = imgcodec_bmp_le32(info + 52);
    }
    imgcodec_bmp_set_fields(decoder, masks);
}

// Checks the compression code against the pixel size; in C because a refusal longjmps.
static void imgcodec_bmp_check_compression(imgcodec_decoder *decoder) {
    const imgcodec_bmp_state *state = decoder->state;
    int bpp = state->bpp;
    switch (state->compression) {
    case IMGCODEC_BMP_RGB: break;
    case IMGCODEC_BMP_RLE8:
    case IMGCODEC_BMP_RLE4:
        if (bpp != (state->compression == IMGCODEC_BMP_RLE8 ? 8 : 4)) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: RLE%d compression with %d bits per pixel",
                          state->compression == IMGCODEC_BMP_RLE8 ? 8 : 4, bpp);
        }
        if (state->top_down) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: top-down RLE image");
        break;
    case IMGCODEC_BMP_BITFIELDS:
    case IMGCODEC_BMP_ALPHABITFIELDS:
        if (bpp != 16 && bpp != 32) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: bit-field compression with %d bits per pixel", bpp);
        }
        break;
    case IMGCODEC_BMP_JPEG: imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP compression JPEG");
    case IMGCODEC_BMP_PNG: imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP compression PNG");
    default:
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP compression %u", state->compression);
    }
}

// Reads the palette between the headers and the pixel data: 2^bpp entries, or biClrUsed when
// smaller, and no more than fit before the pixel data. Entries are BGR(X); OS/2 ones 3 bytes.
static void imgcodec_bmp_read_palette(imgcodec_decoder *decoder, uint32_t colors_used, int core) {
    imgcodec_bmp_state *state = decoder->state;
    uint32_t count = 1u << state->bpp;
    if (colors_used != 0 && colors_used < count) count = colors_used;
    uint32_t entry = core ? 3 : 4;
    uint64_t room = (state->data_offset - state->consumed) / entry;
    if (count > room) count = (uint32_t)room;
    unsigned char bytes[256 * 4];
    imgcodec_bmp_read(decoder, bytes, (size_t)count * entry);
    for (uint32_t i = 0; i < count; i++) {
        state->palette[i][0] = bytes[i * entry + 2];
        state->palette[i][1] = bytes[i * entry + 1];
        state->palette[i][2] = bytes[i * entry];
    }
}

// Fails unless the uncompressed rows fit in the file (the last row may lack its padding): a
// lying height is refused here, before any row is read or allocated.
static void imgcodec_bmp_check_size(imgcodec_decoder *decoder) {
    imgcodec_bmp_state *state = decoder->state;
    state->stride = ((uint64_t)state->width * (uint64_t)state->bpp + 31) / 32 * 4;
    state->row_data = ((uint64_t)state->width * (uint64_t)state->bpp + 7) / 8;
    uint64_t available = state->file_size - state->data_offset;
    uint64_t rows_before = state->height - 1u;
    if (available < state->row_data || rows_before > (available - state->row_data) / state->stride) {
        // Saturates: a width and height near 2^31 would overflow 64 bits.
        uint64_t needed = rows_before > (UINT64_MAX - state->row_data) / state->stride
                              ? UINT64_MAX : rows_before * state->stride + state->row_data;
        uint64_t end = needed > UINT64_MAX - state->data_offset ? UINT64_MAX : state->data_offset + needed;
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated (pixel data ends at byte %llu; the file has %llu)",
                      (unsigned long long)end, (unsigned long long)state->file_size);
    }
}

// Reads the file and info headers, the masks and the palette; in C because failures longjmp.
static void imgcodec_bmp_open(imgcodec_decoder *decoder) {
    imgcodec_bmp_state *state = calloc(1, sizeof *state);
    if (state == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    decoder->state = state;
    unsigned char head[18];
    size_t got = imgcodec_source_read(&decoder->source, &decoder->failure, head, sizeof head);
    state->consumed = got;
    if (got == 0) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: empty file");
    if (head[0] != 'B' || (got >= 2 && head[1] != 'M')) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: not a BMP file (no BM signature)");
    }
    if (got < sizeof head) imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated header");
    state->data_offset = imgcodec_bmp_le32(head + 10);
    uint32_t info_size = imgcodec_bmp_le32(head + 14);
    if (info_size < 12 || info_size > 124) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: info header of %u bytes", info_size);
    }
    if (info_size != 12 && info_size != 40 && info_size != 52 && info_size != 56 && info_size != 108 && info_size != 124) {
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP header of %u bytes", info_size);
    }
    unsigned char info[124];
    memcpy(info, head + 14, 4);
    imgcodec_bmp_read(decoder, info + 4, info_size - 4);
    int core = info_size == 12;
    int64_t width = core ? (int64_t)imgcodec_bmp_le16(info + 4) : (int64_t)(int32_t)imgcodec_bmp_le32(info + 4);
    int64_t height = core ? (int64_t)imgcodec_bmp_le16(info + 6) : (int64_t)(int32_t)imgcodec_bmp_le32(info + 8);
    state->bpp = (int)imgcodec_bmp_le16(info + (core ? 10 : 14));
    state->compression = core ? IMGCODEC_BMP_RGB : imgcodec_bmp_le32(info + 16);
    uint32_t colors_used = core ? 0 : imgcodec_bmp_le32(info + 32);
    if (width == 0 || height == 0) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: zero-size image");
    if (width < 0) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: negative width (%lld)", (long long)width);
    state->top_down = height < 0;
    state->width = (uint32_t)width;
    state->height = (uint32_t)(height < 0 ? -height : height);
    // Compression first: BI_JPEG and BI_PNG files declare 0 bits per pixel.
    imgcodec_bmp_check_compression(decoder);
    int bpp = state->bpp;
    if (bpp == 64) imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP with 64 bits per pixel");
    if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: %d bits per pixel", bpp);
    }

    imgcodec_header *header = &decoder->header;
    header->width = state->width;
    header->height = state->height;
    imgcodec_check_limits(decoder);
    if (bpp == 16 || bpp == 32) imgcodec_bmp_read_masks(decoder, info, info_size);
    if (state->data_offset < state->consumed) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid BMP: pixel data offset %llu inside the headers",
                      (unsigned long long)state->data_offset);
    }
    state->file_size = imgcodec_source_size(&decoder->source, &decoder->failure);
    if (state->data_offset >= state->file_size) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated (pixel data starts at byte %llu; the file has %llu)",
                      (unsigned long long)state->data_offset, (unsigned long long)state->file_size);
    }
    if (bpp <= 8) imgcodec_bmp_read_palette(decoder, colors_used, core);
    int rle = state->compression == IMGCODEC_BMP_RLE8 || state->compression == IMGCODEC_BMP_RLE4;
    if (!rle) imgcodec_bmp_check_size(decoder);

    header->channels = state->alpha ? 4 : 3;
    header->color = bpp <= 8 ? IMGCODEC_COLOR_PALETTE : state->alpha ? IMGCODEC_COLOR_RGBA : IMGCODEC_COLOR_RGB;
    header->has_alpha = state->alpha;
    header->bit_depth = bpp <= 8 ? bpp : bpp == 24 ? 8 : 0;
    for (int c = 0; c < 4; c++) {
        if (state->field[c].bits > header->bit_depth) header->bit_depth = state->field[c].bits;
    }
    // Uncompressed: a window of stored rows. RLE: verifying only tracks the position, converting
    // holds one index byte per pixel.
    uint64_t window = state->stride > IMGCODEC_BMP_WINDOW ? state->stride : IMGCODEC_BMP_WINDOW;
    header->decode_memory = sizeof *state + (rle ? 0 : window);
    header->convert_memory = header->decode_memory + (rle ? (uint64_t)state->width * state->height : 0);
}

// Describes the rows and sets up reading them; in C because failures longjmp.
static void imgcodec_bmp_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    imgcodec_bmp_state *state = decoder->state;
    state->pixels = mode == IMGCODEC_MODE_PIXELS;
    imgcodec_output *output = &decoder->output;
    output->width = state->width;
    output->height = state->height;
    output->channels = state->alpha ? 4 : 3;
    output->bit_depth = state->wide ? 16 : 8;
    // Verifying fills no rows: reading every stored byte (or decoding the RLE stream) is the check.
    output->row_bytes = state->pixels ? (size_t)state->width * (size_t)output->channels * (state->wide ? 2u : 1u) : 0;
    if (state->compression == IMGCODEC_BMP_RLE8 || state->compression == IMGCODEC_BMP_RLE4) {
        imgcodec_bmp_start_rle(decoder);
        return;
    }
    uint64_t rows = state->stride >= IMGCODEC_BMP_WINDOW ? 1 : IMGCODEC_BMP_WINDOW / state->stride;
    state->window_rows = rows < state->height ? (uint32_t)rows : state->height;
    state->window = malloc((size_t)(state->window_rows * state->stride));
    if (state->window == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
}

// The stored bytes of file row `stored` (0 = first in the file), reading a new window of rows
// when it is not held: the rows after it for top-down files, the rows before it for bottom-up.
static const unsigned char *imgcodec_bmp_stored_row(imgcodec_decoder *decoder, uint32_t stored) {
    imgcodec_bmp_state *state = decoder->state;
    if (state->window_count == 0 || stored < state->window_first || stored - state->window_first >= state->window_count) {
        uint32_t first, count;
        if (state->top_down) {
            first = stored;
            count = state->height - stored < state->window_rows ? state->height - stored : state->window_rows;
        } else {
            first = stored + 1 > state->window_rows ? stored + 1 - state->window_rows : 0;
            count = stored - first + 1;
        }
        uint64_t want = (uint64_t)count * state->stride;
        uint64_t need = first + count == state->height ? want - state->stride + state->row_data : want;
        size_t got = imgcodec_source_pread(&decoder->source, &decoder->failure, state->data_offset + first * state->stride,
                                           state->window, (size_t)want);
        if (got < need) {
            imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED, "invalid BMP: truncated (the file ended in row %u)",
                          state->top_down ? first + 1 : state->height - first);
        }
        state->window_first = first;
        state->window_count = count;
    }
    return state->window + (size_t)(stored - state->window_first) * state->stride;
}

// Scales one field of a 16/32-bit pixel to the output: 8 bits by table, 16 bits by arithmetic.
static inline unsigned imgcodec_bmp_sample(const imgcodec_bmp_state *state, int c, uint32_t pixel) {
    const imgcodec_bmp_field *field = &state->field[c];
    if (field->max == 0) return 0;
    uint32_t value = (pixel >> field->shift) & field->max;
    if (!state->wide) return state->scale[c][value];
    return (unsigned)(((uint64_t)value * 65535u + field->max / 2) / field->max);
}

// Converts one stored row (packed indices, BGR, or bit fields) to RGB or RGBA output samples.
static void imgcodec_bmp_convert(const imgcodec_bmp_state *state, const unsigned char *in, unsigned char *out) {
    uint32_t width = state->width;
    int bpp = state->bpp;
    if (bpp <= 8) {
        unsigned mask = (1u << bpp) - 1;
        for (uint32_t x = 0; x < width; x++, out += 3) {
            uint64_t bit = (uint64_t)x * (uint64_t)bpp;
            unsigned index = (in[bit / 8] >> (8 - bpp - (unsigned)(bit % 8))) & mask;
            memcpy(out, state->palette[index], 3);
        }
    } else if (bpp == 24) {
        for (uint32_t x = 0; x < width; x++, in += 3, out += 3) {
            out[0] = in[2];
            out[1] = in[1];
            out[2] = in[0];
        }
    } else {
        int channels = state->alpha ? 4 : 3;
        for (uint32_t x = 0; x < width; x++) {
            uint32_t pixel = bpp == 16 ? imgcodec_bmp_le16(in) : imgcodec_bmp_le32(in);
            in += bpp / 8;
            for (int c = 0; c < channels; c++) {
                unsigned sample = imgcodec_bmp_sample(state, c, pixel);
                if (state->wide) {
                    uint16_t wide = (uint16_t)sample;
                    memcpy(out, &wide, 2);  // native byte order
                    out += 2;
                } else {
                    *out++ = (unsigned char)sample;
                }
            }
        }
    }
}

// Delivers the next row from the top: from the RLE index buffer, or read (and converted) from the file.
static void imgcodec_bmp_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    imgcodec_bmp_state *state = decoder->state;
    uint32_t y = (uint32_t)decoder->rows_read;
    if (state->compression == IMGCODEC_BMP_RLE8 || state->compression == IMGCODEC_BMP_RLE4) {
        if (!state->pixels) return;
        const unsigned char *indices = state->indices + (size_t)y * state->width;
        for (uint32_t x = 0; x < state->width; x++) memcpy(row + 3 * (size_t)x, state->palette[indices[x]], 3);
        return;
    }
    const unsigned char *stored = imgcodec_bmp_stored_row(decoder, state->top_down ? y : state->height - 1 - y);
    if (state->pixels) imgcodec_bmp_convert(state, stored, row);
}

// Nothing follows the pixel data that needs checking: trailing bytes are ignored, as browsers do.
static void imgcodec_bmp_finish(imgcodec_decoder *decoder) {
    (void)decoder;
}

// Frees the state; open may have failed before it existed.
static void imgcodec_bmp_destroy(imgcodec_decoder *decoder) {
    imgcodec_bmp_state *state = decoder->state;
    if (state == NULL) return;
    free(state->window);
    free(state->indices);
    free(state);
    decoder->state = NULL;
}

const imgcodec_format_ops imgcodec_bmp_ops = {
    .name = "BMP",
    .open = imgcodec_bmp_open,
    .start = imgcodec_bmp_start,
    .read_row = imgcodec_bmp_read_row,
    .finish = imgcodec_bmp_finish,
    .destroy = imgcodec_bmp_destroy,
};
