#include <string.h>
#include "tiff_internal.h"

// One TIFF page as its directory states it (sizes, samples, codec, alpha), and what decoding the
// first page takes: its PIXELS path and output layout, and the bytes the header's estimates count.

// Reads the current directory's layout into state->page, in C because it fails by longjmp:
// zero sizes are invalid and codecs this libtiff lacks unsupported.
void imgcodec_tiff_read_page(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    TIFF *tiff = state->tiff;
    imgcodec_tiff_page *page = &state->page;
    memset(page, 0, sizeof *page);
    uint16_t *info = NULL;
    TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &page->width);
    TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &page->height);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &page->bits);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &page->samples);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLEFORMAT, &page->sample_format);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_COMPRESSION, &page->compression);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_EXTRASAMPLES, &page->extra, &info);
    uint16_t planar = PLANARCONFIG_CONTIG;
    TIFFGetFieldDefaulted(tiff, TIFFTAG_PLANARCONFIG, &planar);
    page->planes = planar == PLANARCONFIG_SEPARATE ? page->samples : 1;
    if (page->width == 0 || page->height == 0) {
        const char *which = page->width == 0 ? "width" : "height";
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid TIFF: zero image %s", which);
    }
    imgcodec_check_frame_size(decoder, page->width, page->height);  // an oversized page is too large before it is invalid
    if (page->samples == 0 || page->bits == 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid TIFF: zero %s",
                      page->bits == 0 ? "bits per sample" : "samples per pixel");
    }
    if (!TIFFIsCODECConfigured(page->compression)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: TIFF compression %u", page->compression);
    }
    page->tiled = TIFFIsTiled(tiff);
    if (page->tiled) {
        TIFFGetField(tiff, TIFFTAG_TILEWIDTH, &page->tile_width);
        TIFFGetField(tiff, TIFFTAG_TILELENGTH, &page->tile_height);
        if (page->tile_width == 0 || page->tile_height == 0) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid TIFF: zero tile size");
        }
        uint64_t limit = decoder->limits.max_pixels, area = (uint64_t)page->tile_width * page->tile_height;
        if (limit != 0 && area > limit) {
            imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                          "image too large: TIFF tiles of %u\xC3\x97%u pixels exceed --max-pixels (%llu)",
                          page->tile_width, page->tile_height, (unsigned long long)limit);
        }
    } else {
        TIFFGetFieldDefaulted(tiff, TIFFTAG_ROWSPERSTRIP, &page->rows_per_strip);
        if (page->rows_per_strip == 0 || page->rows_per_strip > page->height) page->rows_per_strip = page->height;
    }
    // Uncompressed data must all be in the file: a page claiming more fails before anything is
    // allocated for it (libtiff reads an uncompressed tile's full size, whatever its byte count says).
    if (page->compression == COMPRESSION_NONE) {
        uint64_t unit = page->tiled ? TIFFTileSize64(tiff) : TIFFScanlineSize64(tiff);
        uint64_t units = page->tiled ? TIFFNumberOfTiles(tiff) : (uint64_t)page->height * page->planes;
        if (unit != 0 && units > state->file_size / unit) {
            imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                          "invalid TIFF: uncompressed image data needs more than the file's %llu bytes",
                          (unsigned long long)state->file_size);
        }
    }
    // As TIFFRGBAImageBegin: a missing Photometric tag means gray (white is zero for fax) or RGB.
    if (!TIFFGetField(tiff, TIFFTAG_PHOTOMETRIC, &page->photometric)) {
        int fax = page->compression == COMPRESSION_CCITTFAX3 || page->compression == COMPRESSION_CCITTFAX4 ||
                  page->compression == COMPRESSION_CCITTRLE || page->compression == COMPRESSION_CCITTRLEW;
        int colors = page->samples - page->extra;
        page->photometric = colors == 3 ? PHOTOMETRIC_RGB
                          : colors == 1 && fax ? PHOTOMETRIC_MINISWHITE : PHOTOMETRIC_MINISBLACK;
    }
    // libtiff converts YCbCr JPEG to RGB through libjpeg, as TIFFRGBAImageBegin asks it to.
    if (page->photometric == PHOTOMETRIC_YCBCR && page->compression == COMPRESSION_JPEG && page->planes == 1) {
        imgcodec_tiff_begin(state);
        int ok = TIFFSetField(tiff, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        imgcodec_tiff_end(decoder, ok, "cannot decode YCbCr JPEG as RGB");
        page->jpeg_rgb = 1;
    }
    // A photometric interpretation needs its color samples: an "RGB" page of one sample reads as
    // bytes but means nothing, so it is damaged, not merely unconvertible.
    int colors = (int)page->samples - (int)page->extra;
    int three = page->photometric == PHOTOMETRIC_RGB || page->photometric == PHOTOMETRIC_YCBCR ||
                page->photometric == PHOTOMETRIC_CIELAB || page->photometric == PHOTOMETRIC_ICCLAB ||
                page->photometric == PHOTOMETRIC_ITULAB;
    if (colors < 1 || (three && colors < 3) || (page->photometric == PHOTOMETRIC_PALETTE && colors != 1)) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid TIFF: photometric interpretation %u with %d color samples",
                      page->photometric, colors);
    }
    // Subsampled YCbCr (not JPEG's, which libjpeg converts) is stored in blocks that scanline reads
    // do not follow: it is read a whole strip at a time, as the RGBA conversion reads it.
    uint16_t horizontal = 1, vertical = 1;
    if (page->photometric == PHOTOMETRIC_YCBCR && !page->jpeg_rgb) {
        TIFFGetFieldDefaulted(tiff, TIFFTAG_YCBCRSUBSAMPLING, &horizontal, &vertical);
    }
    page->whole_strips = page->compression == COMPRESSION_JBIG || page->compression == COMPRESSION_OJPEG ||
                         horizontal != 1 || vertical != 1;
    page->colors = page->photometric == PHOTOMETRIC_RGB || page->jpeg_rgb ? 3 : 1;
    // libtiff's rule (TIFFRGBAImageBegin): the first extra sample is the alpha; an unspecified one
    // counts as associated alpha when there are more than 3 samples.
    if (page->extra >= 1 && info != NULL) {
        if (info[0] == EXTRASAMPLE_ASSOCALPHA || info[0] == EXTRASAMPLE_UNASSALPHA) page->alpha = info[0];
        else if (info[0] == EXTRASAMPLE_UNSPECIFIED && page->samples > 3) page->alpha = EXTRASAMPLE_ASSOCALPHA;
    }
}

// The largest raw strip or tile libtiff will hold for the page (within the file), for estimates.
uint64_t imgcodec_tiff_largest_strile(imgcodec_tiff_state *state) {
    uint32_t count = state->page.tiled ? TIFFNumberOfTiles(state->tiff) : TIFFNumberOfStrips(state->tiff);
    uint64_t largest = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t bytes = TIFFGetStrileByteCount(state->tiff, i);
        if (bytes > largest) largest = bytes;
    }
    return largest < state->file_size ? largest : state->file_size;
}

// Picks the first page's PIXELS path and output layout, and fills the colormap. Native: unsigned
// 1- to 16-bit gray, RGB and palette (up to 8 bits), contiguous or separate; signed and
// floating-point samples are unsupported; the rest goes through libtiff's RGBA conversion when it
// can (LogLuv's samples are signed), else is unsupported (the reason kept for start).
void imgcodec_tiff_plan(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    const imgcodec_tiff_page *page = &state->page;
    int gray = page->photometric == PHOTOMETRIC_MINISBLACK || page->photometric == PHOTOMETRIC_MINISWHITE;
    int rgb = page->photometric == PHOTOMETRIC_RGB || page->jpeg_rgb;
    int palette = page->photometric == PHOTOMETRIC_PALETTE && page->bits <= 8;
    uint16_t *red = NULL, *green = NULL, *blue = NULL;
    if (palette && !TIFFGetField(state->tiff, TIFFTAG_COLORMAP, &red, &green, &blue)) palette = 0;
    int unsigned_samples = page->sample_format == SAMPLEFORMAT_UINT || page->sample_format == SAMPLEFORMAT_VOID;
    int native = unsigned_samples && page->bits <= 16 && page->compression != COMPRESSION_OJPEG &&
                 (gray || rgb || palette) && page->samples - page->extra == page->colors;
    imgcodec_output *output = &decoder->output;
    if (native) {
        state->path = page->tiled ? IMGCODEC_TIFF_TILES
                    : page->planes > 1 || page->whole_strips ? IMGCODEC_TIFF_STRIPS : IMGCODEC_TIFF_SCANLINES;
        output->channels = (palette ? 3 : page->colors) + (page->alpha != 0);
        output->bit_depth = palette || page->bits <= 8 ? 8 : 16;
        state->copy = !palette && page->planes == 1 && (page->bits == 8 || page->bits == 16) &&
                      page->photometric != PHOTOMETRIC_MINISWHITE && page->alpha != EXTRASAMPLE_ASSOCALPHA &&
                      output->channels == page->samples;
        if (palette) {
            // tiff2rgba's rule (checkcmap): a colormap with no entry above 255 is taken as 8-bit.
            unsigned entries = 1u << page->bits, wide = 0;
            for (unsigned i = 0; i < entries; i++) wide |= red[i] | green[i] | blue[i];
            for (unsigned i = 0; i < entries; i++) {
                state->colormap[i][0] = (unsigned char)(wide > 255 ? red[i] >> 8 : red[i]);
                state->colormap[i][1] = (unsigned char)(wide > 255 ? green[i] >> 8 : green[i]);
                state->colormap[i][2] = (unsigned char)(wide > 255 ? blue[i] >> 8 : blue[i]);
            }
        }
    } else if (page->sample_format == SAMPLEFORMAT_IEEEFP || (!unsigned_samples && (gray || rgb || palette))) {
        state->path = IMGCODEC_TIFF_UNSUPPORTED;
        snprintf(state->unsupported, sizeof state->unsupported, "unsupported: TIFF with %s samples",
                 page->sample_format == SAMPLEFORMAT_IEEEFP ? "floating-point" : "signed or complex");
    } else {
        char reason[1024] = "";
        if (TIFFRGBAImageOK(state->tiff, reason)) {
            state->path = IMGCODEC_TIFF_RGBA;
            // libtiff premultiplies alpha, and keeps it only for RGB and gray; CMYK, YCbCr and CIELab lose theirs.
            output->channels = page->alpha != 0 && (rgb || gray) ? 4 : 3;
            output->bit_depth = 8;
        } else {
            state->path = IMGCODEC_TIFF_UNSUPPORTED;
            snprintf(state->unsupported, sizeof state->unsupported, "unsupported: TIFF image (%.200s)", reason);
        }
    }
    output->width = page->width;
    output->height = page->height;
    output->row_bytes = (size_t)page->width * (size_t)output->channels * (size_t)(output->bit_depth / 8);
}

// Bytes the first page's buffers take in PIXELS mode (a strip of every plane, tiles and a band,
// or the RGBA raster), for the header's estimate and start's allocation.
uint64_t imgcodec_tiff_pixels_memory(imgcodec_tiff_state *state, uint64_t *plane_bytes, uint64_t *band_bytes) {
    const imgcodec_tiff_page *page = &state->page;
    TIFF *tiff = state->tiff;
    uint32_t band_rows = page->tiled ? page->tile_height : page->rows_per_strip;
    uint64_t rows = band_rows < page->height ? band_rows : page->height;
    *plane_bytes = page->tiled ? TIFFTileSize64(tiff) : TIFFStripSize64(tiff);
    *band_bytes = 0;
    switch (state->path) {
    case IMGCODEC_TIFF_SCANLINES: *plane_bytes = TIFFScanlineSize64(tiff); break;
    case IMGCODEC_TIFF_TILES: *band_bytes = rows * state->decoder->output.row_bytes; break;
    case IMGCODEC_TIFF_RGBA: *band_bytes = rows * page->width * 4; break;  // plus the strips or tiles libtiff decodes into
    default: break;
    }
    return *plane_bytes * page->planes + *band_bytes;
}
