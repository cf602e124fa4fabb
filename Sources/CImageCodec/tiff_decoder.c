#include <stdlib.h>
#include <string.h>
#include "tiff_internal.h"

// TIFF through libtiff, reading from the source by random access (read/seek/size procs over
// imgcodec_source_pread; memory mapping refused). libtiff reports errors through per-handle
// handlers (never the global ones: several decodes run at once), which only record the message;
// the checked call's failure is raised after it returns, because libtiff cannot be unwound.
// Striped pages stream: contiguous strips one TIFFReadScanline per row, separate planes (and
// JBIG, which cannot decode part of a strip) one strip of every plane at a time; tiled pages one
// row of tiles at a time. Layouts the native conversion does not cover (YCbCr, CMYK, CIELab,
// LogLuv, OJPEG …) go through libtiff's RGBA conversion, one strip or one row of tiles at a time.

/// What libtiff's codecs hold besides the raw strip: zlib and LZW tables, PackBits and fax state.
#define IMGCODEC_TIFF_CODEC_MEMORY (256u << 10)

// Decodes every strip or tile of the current page without converting it (VERIFY mode, and every
// page after the first): scanline by scanline, or whole tiles and strips (separate planes, JBIG,
// OJPEG, subsampled YCbCr).
static void imgcodec_tiff_verify_page(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    TIFF *tiff = state->tiff;
    const imgcodec_tiff_page *page = &state->page;
    // Separate planes are read a strip at a time, as the pixel path reads them: libtiff's scanline
    // reads of a short PackBits strip stop where the strip's reads do not, and verifying must accept
    // exactly what converting accepts.
    if (page->tiled || page->whole_strips || page->planes > 1) {
        uint64_t size = page->tiled ? TIFFTileSize64(tiff) : TIFFStripSize64(tiff);
        imgcodec_tiff_reserve(decoder, &state->buffer, &state->buffer_size, size, page->tiled ? "tile" : "strip");
        uint32_t count = page->tiled ? TIFFNumberOfTiles(tiff) : TIFFNumberOfStrips(tiff);
        for (uint32_t i = 0; i < count; i++) {
            imgcodec_tiff_check_strile(decoder, i);
            imgcodec_tiff_begin(state);
            tmsize_t got = page->tiled ? TIFFReadEncodedTile(tiff, i, state->buffer, (tmsize_t)size)
                                       : TIFFReadEncodedStrip(tiff, i, state->buffer, (tmsize_t)size);
            imgcodec_tiff_end(decoder, got >= 0, page->tiled ? "cannot decode a tile" : "cannot decode a strip");
        }
        return;
    }
    uint64_t scanline = TIFFScanlineSize64(tiff);
    imgcodec_tiff_reserve(decoder, &state->buffer, &state->buffer_size, scanline, "scanline");
    for (uint16_t plane = 0; plane < page->planes; plane++) {
        for (uint32_t y = 0; y < page->height; y++) {
            if (y % page->rows_per_strip == 0) imgcodec_tiff_check_strile(decoder, TIFFComputeStrip(tiff, y, plane));
            imgcodec_tiff_begin(state);
            imgcodec_tiff_end(decoder, TIFFReadScanline(tiff, state->buffer, y, plane) == 1, "cannot decode a scanline");
        }
    }
}

// In C because libtiff's calls and the limit checks fail by longjmp.
static void imgcodec_tiff_open(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = calloc(1, sizeof *state);
    if (state == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    decoder->state = state;
    state->decoder = decoder;
    state->file_size = imgcodec_source_size(&decoder->source, &decoder->failure);
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (options == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    TIFFOpenOptionsSetErrorHandlerExtR(options, imgcodec_tiff_error, state);
    TIFFOpenOptionsSetWarningHandlerExtR(options, imgcodec_tiff_warning, state);
    uint64_t max_memory = decoder->limits.max_memory;
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, max_memory <= (uint64_t)INT64_MAX ? (tmsize_t)max_memory : 0);
    imgcodec_tiff_begin(state);
    state->tiff = TIFFClientOpenExt("TIFF", "rm", (thandle_t)state, imgcodec_tiff_read, imgcodec_tiff_write,
                                    imgcodec_tiff_seek, imgcodec_tiff_close, imgcodec_tiff_size, imgcodec_tiff_map,
                                    imgcodec_tiff_unmap, options);
    TIFFOpenOptionsFree(options);
    imgcodec_tiff_end(decoder, state->tiff != NULL, "no image directory");
    imgcodec_tiff_read_page(decoder);
    const imgcodec_tiff_page *page = &state->page;
    imgcodec_header *header = &decoder->header;
    header->width = page->width;
    header->height = page->height;
    header->bit_depth = page->bits;
    header->has_alpha = page->alpha != 0;
    header->frames = TIFFLastDirectory(state->tiff) ? 1 : 0;  // later pages are only counted as they are decoded
    uint16_t orientation = ORIENTATION_TOPLEFT, inkset = INKSET_CMYK;
    TIFFGetFieldDefaulted(state->tiff, TIFFTAG_ORIENTATION, &orientation);
    header->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    TIFFGetFieldDefaulted(state->tiff, TIFFTAG_INKSET, &inkset);
    int colors = page->samples - page->extra;
    switch (page->photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
        header->color = page->alpha ? IMGCODEC_COLOR_GRAY_ALPHA : IMGCODEC_COLOR_GRAY;
        colors = 1;
        break;
    case PHOTOMETRIC_RGB:
        header->color = page->alpha ? IMGCODEC_COLOR_RGBA : IMGCODEC_COLOR_RGB;
        colors = 3;
        break;
    case PHOTOMETRIC_PALETTE: header->color = IMGCODEC_COLOR_PALETTE; colors = 3; break;
    case PHOTOMETRIC_YCBCR: header->color = IMGCODEC_COLOR_YCBCR; colors = 3; break;
    case PHOTOMETRIC_SEPARATED:
        header->color = inkset == INKSET_CMYK && colors == 4 ? IMGCODEC_COLOR_CMYK : IMGCODEC_COLOR_OTHER;
        break;
    default: header->color = IMGCODEC_COLOR_OTHER; break;
    }
    header->channels = colors + (page->alpha != 0);
    imgcodec_check_limits(decoder);
    imgcodec_count_frame(decoder, page->width, page->height);
    // Held while verifying: a scanline (a tile, or a JBIG strip), libtiff's raw strip or tile
    // (at most the largest in the file), its strip arrays, and codec state (zlib and LZW tables,
    // libjpeg's rows).
    TIFF *tiff = state->tiff;
    uint64_t strips = page->tiled ? TIFFNumberOfTiles(tiff) : TIFFNumberOfStrips(tiff);
    uint64_t work = page->tiled ? TIFFTileSize64(tiff)
                  : page->whole_strips || page->planes > 1 ? TIFFStripSize64(tiff) : TIFFScanlineSize64(tiff);
    uint64_t jpeg = page->compression == COMPRESSION_JPEG || page->compression == COMPRESSION_OJPEG
                        ? (uint64_t)(page->tiled ? page->tile_width : page->width) * page->samples * 48 : 0;
    uint64_t common = imgcodec_tiff_largest_strile(state) + strips * 16 + IMGCODEC_TIFF_CODEC_MEMORY + jpeg + sizeof *state;
    header->decode_memory = common + work;
    imgcodec_tiff_plan(decoder);
    uint64_t plane_bytes, band_bytes;
    header->convert_memory = common + imgcodec_tiff_pixels_memory(state, &plane_bytes, &band_bytes);
}

// In C because libtiff's calls and the allocations fail by longjmp.
static void imgcodec_tiff_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    // Subsampled YCbCr (not JPEG's) is read by libtiff's RGBA conversion, which asks for its strips
    // in sizes of its own (rounded to whole blocks); verifying it the same way is the only way both
    // accept exactly the same files.
    int subsampled = state->page.whole_strips && state->page.photometric == PHOTOMETRIC_YCBCR && state->path == IMGCODEC_TIFF_RGBA;
    if (mode != IMGCODEC_MODE_PIXELS && !subsampled) {
        // The whole first page is decoded here; read_row then has nothing left to do.
        imgcodec_tiff_verify_page(decoder);
        decoder->output = (imgcodec_output){ .width = state->page.width, .height = state->page.height, .channels = 1,
                                             .bit_depth = 8, .row_bytes = state->page.width, .passes = 1 };
        return;
    }
    if (state->path == IMGCODEC_TIFF_UNSUPPORTED) {
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "%s", state->unsupported);
    }
    uint64_t plane_bytes, band_bytes;
    imgcodec_tiff_pixels_memory(state, &plane_bytes, &band_bytes);
    state->plane_bytes = (size_t)plane_bytes;
    state->plane_row = (size_t)TIFFScanlineSize64(state->tiff);
    state->pixels = 1;
    state->band_rows = 0;
    size_t band_capacity = 0;
    if (state->path != IMGCODEC_TIFF_RGBA) {
        imgcodec_tiff_reserve(decoder, &state->buffer, &state->buffer_size, plane_bytes * state->page.planes, "strip buffer");
    }
    if (band_bytes > 0) imgcodec_tiff_reserve(decoder, &state->band, &band_capacity, band_bytes, "band of rows");
    if (state->path == IMGCODEC_TIFF_RGBA) {
        char reason[1024] = "";
        imgcodec_tiff_begin(state);
        state->rgba_started = TIFFRGBAImageBegin(&state->rgba, state->tiff, 1, reason);
        if (!state->rgba_started) {
            imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: TIFF image (%.200s)", reason);
        }
        imgcodec_tiff_end(decoder, 1, "");
        // Rows in stored order, like every other format: the orientation is the caller's to apply.
        state->rgba.req_orientation = ORIENTATION_TOPLEFT;
        state->rgba.orientation = ORIENTATION_TOPLEFT;
    }
}

// Reads one sample (`bits` 1...16, MSB first below 8, native-endian at 16) from a row of packed samples.
static unsigned imgcodec_tiff_sample(const unsigned char *row, size_t index, unsigned bits) {
    if (bits == 8) return row[index];
    if (bits == 16) {
        uint16_t value;
        memcpy(&value, row + index * 2, 2);
        return value;
    }
    size_t bit = index * bits;
    const unsigned char *p = row + bit / 8;
    unsigned shift = (unsigned)(bit % 8), need = (shift + bits + 7) / 8;
    uint32_t word = 0;
    for (unsigned i = 0; i < need; i++) word = word << 8 | p[i];
    return (word >> (need * 8 - shift - bits)) & ((1u << bits) - 1);
}

// Converts `pixels` stored pixels (planes[p]: plane p's samples, or planes[0] holding all of them
// interleaved) to output pixels: MINISWHITE inverted, palette looked up, associated alpha
// unassociated (c × max / a, rounded, 0 where a is 0), samples below 8 bits scaled to 8 and of
// 9 to 15 bits to 16.
static void imgcodec_tiff_convert(const imgcodec_tiff_state *state, unsigned char *const *planes, uint32_t pixels,
                                  unsigned char *out) {
    const imgcodec_tiff_page *page = &state->page;
    const imgcodec_output *output = &state->decoder->output;
    if (state->copy) {
        memcpy(out, planes[0], (size_t)pixels * (size_t)output->channels * (size_t)(output->bit_depth / 8));
        return;
    }
    unsigned bits = page->bits, max = (1u << bits) - 1, stride = page->planes > 1 ? 1 : page->samples;
    unsigned colors = (unsigned)page->colors, samples = colors + (page->alpha != 0);
    int separate = page->planes > 1, palette = page->photometric == PHOTOMETRIC_PALETTE, wide = output->bit_depth == 16;
    for (uint32_t x = 0; x < pixels; x++) {
        unsigned value[4];
        // Sample s of pixel x: in plane s at x, or in plane 0 at x × samples + s.
        for (unsigned s = 0; s < samples; s++) {
            value[s] = imgcodec_tiff_sample(planes[separate ? s : 0], (size_t)x * stride + (separate ? 0 : s), bits);
        }
        unsigned alpha = page->alpha ? value[colors] : max;
        if (palette) {
            const unsigned char *color = state->colormap[value[0] & 0xFF];
            *out++ = color[0], *out++ = color[1], *out++ = color[2];
            if (page->alpha) *out++ = (unsigned char)(bits < 8 ? imgcodec_scale_to_8(alpha, bits) : alpha);
            continue;
        }
        if (page->photometric == PHOTOMETRIC_MINISWHITE) value[0] = max - value[0];
        for (unsigned c = 0; c < colors && page->alpha == EXTRASAMPLE_ASSOCALPHA; c++) {
            uint64_t straight = alpha == 0 ? 0 : ((uint64_t)value[c] * max + alpha / 2) / alpha;
            value[c] = straight > max ? max : (unsigned)straight;
        }
        for (unsigned c = 0; c < samples; c++) {
            if (!wide) {
                *out++ = (unsigned char)(bits < 8 ? imgcodec_scale_to_8(value[c], bits) : value[c]);
            } else {
                uint16_t sample = (uint16_t)(bits < 16 ? imgcodec_scale_to_16(value[c], bits) : value[c]);
                memcpy(out, &sample, 2);
                out += 2;
            }
        }
    }
}

// Decodes the strip of every plane holding row `y` into state->buffer (STRIPS path).
static void imgcodec_tiff_load_strips(imgcodec_decoder *decoder, uint32_t y) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    const imgcodec_tiff_page *page = &state->page;
    state->band_top = y / page->rows_per_strip * page->rows_per_strip;
    uint32_t left = page->height - state->band_top;
    state->band_rows = left < page->rows_per_strip ? left : page->rows_per_strip;
    for (uint16_t plane = 0; plane < page->planes; plane++) {
        uint32_t strip = TIFFComputeStrip(state->tiff, y, plane);
        imgcodec_tiff_check_strile(decoder, strip);
        imgcodec_tiff_begin(state);
        unsigned char *out = state->buffer + state->plane_bytes * plane;
        tmsize_t got = TIFFReadEncodedStrip(state->tiff, strip, out, (tmsize_t)state->plane_bytes);
        imgcodec_tiff_end(decoder, got >= 0, "cannot decode a strip");
    }
}

// Decodes the row of tiles holding row `y` and converts it into state->band (TILES path).
static void imgcodec_tiff_load_tiles(imgcodec_decoder *decoder, uint32_t y) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    const imgcodec_tiff_page *page = &state->page;
    size_t row_bytes = decoder->output.row_bytes, pixel_bytes = row_bytes / page->width;
    size_t tile_row = (size_t)TIFFTileRowSize64(state->tiff);
    state->band_top = y / page->tile_height * page->tile_height;
    state->band_rows = page->height - state->band_top < page->tile_height ? page->height - state->band_top : page->tile_height;
    for (uint32_t x = 0; x < page->width; x += page->tile_width) {
        for (uint16_t plane = 0; plane < page->planes; plane++) {
            uint32_t tile = TIFFComputeTile(state->tiff, x, y, 0, plane);
            imgcodec_tiff_check_strile(decoder, tile);
            imgcodec_tiff_begin(state);
            unsigned char *out = state->buffer + state->plane_bytes * plane;
            tmsize_t got = TIFFReadEncodedTile(state->tiff, tile, out, (tmsize_t)state->plane_bytes);
            imgcodec_tiff_end(decoder, got >= 0, "cannot decode a tile");
        }
        uint32_t count = page->width - x < page->tile_width ? page->width - x : page->tile_width;
        for (uint32_t r = 0; r < state->band_rows; r++) {
            unsigned char *planes[4];
            for (int p = 0; p < 4; p++) {
                planes[p] = state->buffer + state->plane_bytes * (p < page->planes ? p : 0) + r * tile_row;
            }
            imgcodec_tiff_convert(state, planes, count, state->band + r * row_bytes + x * pixel_bytes);
        }
    }
}

// Decodes the strip or row of tiles holding row `y` through libtiff's RGBA conversion (RGBA path).
static void imgcodec_tiff_load_rgba(imgcodec_decoder *decoder, uint32_t y) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    const imgcodec_tiff_page *page = &state->page;
    uint32_t band = page->tiled ? page->tile_height : page->rows_per_strip;
    state->band_top = y / band * band;
    state->band_rows = page->height - state->band_top < band ? page->height - state->band_top : band;
    for (uint16_t plane = 0; plane < page->planes; plane++) {
        for (uint32_t x = 0; x < page->width; x += page->tiled ? page->tile_width : page->width) {
            uint32_t strile = page->tiled ? TIFFComputeTile(state->tiff, x, y, 0, plane)
                                          : TIFFComputeStrip(state->tiff, y, plane);
            imgcodec_tiff_check_strile(decoder, strile);
        }
    }
    state->rgba.row_offset = (int)state->band_top;
    state->rgba.col_offset = 0;
    imgcodec_tiff_begin(state);
    int ok = TIFFRGBAImageGet(&state->rgba, (uint32_t *)(void *)state->band, page->width, state->band_rows);
    imgcodec_tiff_end(decoder, ok, "cannot decode a strip");
}

// In C because decoding fails by longjmp. VERIFY mode decoded the page in start: the row is zeroed.
static void imgcodec_tiff_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    const imgcodec_tiff_page *page = &state->page;
    uint32_t y = (uint32_t)decoder->rows_read;
    unsigned char *planes[4];
    if (!state->pixels) {
        memset(row, 0, decoder->output.row_bytes);
        return;
    }
    int loaded = state->band_rows != 0 && y >= state->band_top && y - state->band_top < state->band_rows;
    switch (state->path) {
    case IMGCODEC_TIFF_SCANLINES:
        if (y % page->rows_per_strip == 0) imgcodec_tiff_check_strile(decoder, TIFFComputeStrip(state->tiff, y, 0));
        imgcodec_tiff_begin(state);
        imgcodec_tiff_end(decoder, TIFFReadScanline(state->tiff, state->buffer, y, 0) == 1, "cannot decode a scanline");
        planes[0] = state->buffer;
        imgcodec_tiff_convert(state, planes, page->width, row);
        break;
    case IMGCODEC_TIFF_STRIPS: {
        if (!loaded) imgcodec_tiff_load_strips(decoder, y);
        size_t offset = (size_t)(y - state->band_top) * state->plane_row;
        for (int p = 0; p < 4; p++) planes[p] = state->buffer + state->plane_bytes * (p < page->planes ? p : 0) + offset;
        imgcodec_tiff_convert(state, planes, page->width, row);
        break;
    }
    case IMGCODEC_TIFF_TILES:
        if (!loaded) imgcodec_tiff_load_tiles(decoder, y);
        memcpy(row, state->band + (size_t)(y - state->band_top) * decoder->output.row_bytes, decoder->output.row_bytes);
        break;
    case IMGCODEC_TIFF_RGBA: {
        if (!loaded) imgcodec_tiff_load_rgba(decoder, y);
        const uint32_t *raster = (const uint32_t *)(const void *)state->band + (size_t)(y - state->band_top) * page->width;
        int alpha = decoder->output.channels == 4;
        for (uint32_t x = 0; x < page->width; x++) {
            uint32_t pixel = raster[x];
            unsigned a = TIFFGetA(pixel), color[3] = { TIFFGetR(pixel), TIFFGetG(pixel), TIFFGetB(pixel) };
            for (int c = 0; c < 3; c++) {
                // libtiff's raster is premultiplied; rows are not.
                unsigned straight = !alpha ? color[c] : a == 0 ? 0 : (color[c] * 255 + a / 2) / a;
                *row++ = (unsigned char)(straight > 255 ? 255 : straight);
            }
            if (alpha) *row++ = (unsigned char)a;
        }
        break;
    }
    default:
        break;
    }
}

// In C because reading directories and decoding fail by longjmp: decodes every later page.
static void imgcodec_tiff_finish(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    if (state->rgba_started) TIFFRGBAImageEnd(&state->rgba);
    state->rgba_started = 0;
    while (!TIFFLastDirectory(state->tiff)) {
        imgcodec_tiff_begin(state);
        imgcodec_tiff_end(decoder, TIFFReadDirectory(state->tiff), "cannot read the next page's directory");
        imgcodec_tiff_read_page(decoder);
        imgcodec_count_frame(decoder, state->page.width, state->page.height);
        imgcodec_tiff_verify_page(decoder);
    }
}

// In C because it frees libtiff state; runs after success or a failure at any point.
static void imgcodec_tiff_destroy(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    if (state == NULL) return;
    if (state->rgba_started) TIFFRGBAImageEnd(&state->rgba);
    if (state->tiff != NULL) TIFFClose(state->tiff);
    free(state->buffer);
    free(state->band);
    free(state);
    decoder->state = NULL;
}

const imgcodec_format_ops imgcodec_tiff_ops = {
    .name = "TIFF",
    .open = imgcodec_tiff_open,
    .start = imgcodec_tiff_start,
    .read_row = imgcodec_tiff_read_row,
    .finish = imgcodec_tiff_finish,
    .destroy = imgcodec_tiff_destroy,
};
