#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include "internal.h"

// TIFF through libtiff, reading from the source by random access (read/seek/size procs over
// imgcodec_source_pread; memory mapping refused). libtiff reports errors through per-handle
// handlers (never the global ones: several decodes run at once), which only record the message;
// the checked call's failure is raised after it returns, because libtiff cannot be unwound.
// Striped pages stream: contiguous strips one TIFFReadScanline per row, separate planes (and
// JBIG, which cannot decode part of a strip) one strip of every plane at a time; tiled pages one
// row of tiles at a time. Layouts the native conversion does not cover (YCbCr, CMYK, CIELab,
// LogLuv, OJPEG …) go through libtiff's RGBA conversion, one strip or one row of tiles at a time.

/// Where PIXELS rows come from.
typedef enum imgcodec_tiff_path {
    IMGCODEC_TIFF_SCANLINES = 1,  // contiguous strips: one TIFFReadScanline per row
    IMGCODEC_TIFF_STRIPS,         // separate planes or JBIG: a strip of every plane at a time
    IMGCODEC_TIFF_TILES,          // a row of tiles at a time, converted into a band
    IMGCODEC_TIFF_RGBA,           // TIFFRGBAImageGet, a strip or a row of tiles at a time
    IMGCODEC_TIFF_UNSUPPORTED,    // verifiable, but no conversion to our layouts
} imgcodec_tiff_path;

/// One page's layout, as its directory states it.
typedef struct imgcodec_tiff_page {
    uint32_t width, height, rows_per_strip, tile_width, tile_height;
    uint16_t bits, samples, extra, photometric, compression, sample_format, planes;
    int tiled;
    int colors;          // color samples the native conversion reads: 1 gray or palette index, 3 RGB
    int alpha;           // EXTRASAMPLE_ASSOCALPHA, EXTRASAMPLE_UNASSALPHA or 0, by libtiff's rule
    int jpeg_rgb;        // YCbCr JPEG that libjpeg converts to RGB (JPEGCOLORMODE_RGB)
    int whole_strips;    // a codec that cannot decode part of a strip (JBIG, OJPEG)
} imgcodec_tiff_page;

/// The per-decode state (decoder->state): the libtiff handle, what its handlers recorded, and the buffers.
typedef struct imgcodec_tiff_state {
    imgcodec_decoder *decoder;
    TIFF *tiff;
    uint64_t file_size;
    uint64_t position;                 // the read proc's file position
    imgcodec_failure io_failure;       // the read proc's own jump target around imgcodec_source_pread
    int io_failed;
    char error[IMGCODEC_MESSAGE_SIZE];    // libtiff's first error since the checked call began
    char warning[IMGCODEC_MESSAGE_SIZE];  // a warning that means damaged data (libjpeg, fax, PackBits)
    char note[IMGCODEC_MESSAGE_SIZE];     // the last warning: the only word on some failures (an IFD loop)
    imgcodec_tiff_page page;
    imgcodec_tiff_path path;
    char unsupported[IMGCODEC_MESSAGE_SIZE];  // why PIXELS mode cannot convert the first page
    int copy;                          // stored rows are the output rows (8/16-bit gray or RGB[A])
    unsigned char colormap[256][3];
    unsigned char *buffer;             // scanline, strips of every plane, or one tile per plane
    size_t buffer_size;
    size_t plane_bytes;                // a plane's share of `buffer` (a strip or a tile)
    size_t plane_row;                  // STRIPS: a plane's scanline within its strip
    int pixels;                        // started in IMGCODEC_MODE_PIXELS
    unsigned char *band;               // TILES: converted rows; RGBA: the raster
    uint32_t band_top, band_rows;      // image rows the band (or the strips in `buffer`) hold
    TIFFRGBAImage rgba;
    int rgba_started;
} imgcodec_tiff_state;

/// What libtiff's codecs hold besides the raw strip: zlib and LZW tables, PackBits and fax state.
#define IMGCODEC_TIFF_CODEC_MEMORY (256u << 10)

// The state of `decoder`; for the libtiff callbacks too.
static imgcodec_tiff_state *imgcodec_tiff(imgcodec_decoder *decoder) {
    return (imgcodec_tiff_state *)decoder->state;
}

// libtiff's read proc: the source's pread under a jump target of its own, so a read error
// records itself and returns -1 instead of unwinding libtiff.
static tmsize_t imgcodec_tiff_read(thandle_t handle, void *buffer, tmsize_t size) {
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)handle;
    if (state->io_failed || size < 0) return -1;
    if (setjmp(state->io_failure.jump) != 0) {
        state->io_failed = 1;
        return -1;
    }
    size_t got = imgcodec_source_pread(&state->decoder->source, &state->io_failure, state->position, buffer,
                                       (size_t)size);
    state->position += got;
    return (tmsize_t)got;
}

// libtiff's write proc: the handle is read-only.
static tmsize_t imgcodec_tiff_write(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle;
    (void)buffer;
    (void)size;
    return -1;
}

// libtiff's seek proc over the image's bytes (the source's offsets start at the image).
static toff_t imgcodec_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)handle;
    uint64_t base = whence == SEEK_CUR ? state->position : whence == SEEK_END ? state->file_size : 0;
    state->position = base + offset;
    return state->position;
}

// libtiff's close proc: the decoder owns the source.
static int imgcodec_tiff_close(thandle_t handle) {
    (void)handle;
    return 0;
}

// libtiff's size proc: measured once at open, outside libtiff (measuring can fail by longjmp).
static toff_t imgcodec_tiff_size(thandle_t handle) {
    return ((imgcodec_tiff_state *)handle)->file_size;
}

// libtiff's map proc: refused, so libtiff reads through the read proc for fd and memory alike.
static int imgcodec_tiff_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

// libtiff's unmap proc: nothing was mapped.
static void imgcodec_tiff_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

// Formats a libtiff message as "module: text", dropping libtiff's own function names and the
// handle's name, which tell a reader nothing; codec names (LZWDecode, JPEGLib) stay.
static void imgcodec_tiff_format(char *out, size_t size, const char *module, const char *format, va_list args) {
    char formatted[IMGCODEC_MESSAGE_SIZE];
    vsnprintf(formatted, sizeof formatted, format, args);
    // Some messages start with the handle's name ("TIFF: Can not read TIFF directory count").
    const char *text = strncmp(formatted, "TIFF: ", 6) == 0 ? formatted + 6 : formatted;
    int named = module != NULL && module[0] != '\0' && strcmp(module, "TIFF") != 0 &&
                strncmp(module, "TIFF", 4) != 0 && strncmp(module, "_TIFF", 5) != 0;
    snprintf(out, size, named ? "%s: %s" : "%s%s", named ? module : "", text);
}

// libtiff's per-handle error handler: records the first error of the checked call; never unwinds.
static int imgcodec_tiff_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)user_data;
    if (state->error[0] == '\0') imgcodec_tiff_format(state->error, sizeof state->error, module, format, args);
    return 1;
}

// libtiff's per-handle warning handler. Most warnings are benign (unknown tags, sloppy counts);
// those below mean the file is damaged even though the call succeeds: libjpeg's (as the JPEG
// decoder treats them), a fax strip or PackBits run cut short, a JPEG smaller than its strip or
// tile (libtiff then leaves part of the buffer unwritten), and tag data past the end of the file
// (a truncated file whose pixels survive, but not, say, its ReferenceBlackWhite).
static int imgcodec_tiff_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)user_data;
    char text[IMGCODEC_MESSAGE_SIZE];
    imgcodec_tiff_format(text, sizeof text, module, format, args);
    int damaged = (module != NULL && (strcmp(module, "JPEGLib") == 0 || strcmp(module, "LibJpeg") == 0)) ||
                  strstr(text, "Premature EOF") != NULL || strstr(text, "Terminating PackBitsDecode") != NULL ||
                  strstr(text, "Improper JPEG strip/tile size") != NULL || strstr(text, "IO error during reading of") != NULL;
    if (damaged && state->warning[0] == '\0') snprintf(state->warning, sizeof state->warning, "%s", text);
    memcpy(state->note, text, sizeof state->note);
    return 1;
}

// Forgets what the handlers recorded, before a libtiff call whose result is checked.
static void imgcodec_tiff_begin(imgcodec_tiff_state *state) {
    state->error[0] = '\0';
    state->warning[0] = '\0';
    state->note[0] = '\0';
}

// Raises the failure of the libtiff call just made, in C because it longjmps: a read error, the
// call's own failure (`ok` 0) with libtiff's message, or a warning that means damaged pixels.
static void imgcodec_tiff_end(imgcodec_decoder *decoder, int ok, const char *what) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    if (state->io_failed) imgcodec_fail(&decoder->failure, state->io_failure.status, "%s", state->io_failure.message);
    if (!ok && strstr(state->error, "limit defined in open options") != NULL) {
        // "Memory allocation of N bytes is beyond the M byte limit …", continuing "TIFF".
        state->error[0] = (char)(state->error[0] == 'M' ? 'm' : state->error[0]);
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: TIFF %s", state->error);
    }
    const char *reason = state->error[0] ? state->error : state->note[0] ? state->note : what;
    if (!ok) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid TIFF: %s", reason);
    if (state->warning[0] != '\0') imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid TIFF: %s", state->warning);
}

// Grows `buffer` to `size` zeroed bytes; fails past limits.max_memory, in C because it longjmps.
static void imgcodec_tiff_reserve(imgcodec_decoder *decoder, unsigned char **buffer, size_t *capacity, uint64_t size,
                                  const char *what) {
    uint64_t limit = decoder->limits.max_memory;
    if ((limit != 0 && size > limit) || size > SIZE_MAX / 2) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: TIFF %s of %llu MiB exceeds the memory limit (%llu MiB)", what,
                      (unsigned long long)(size >> 20), (unsigned long long)(limit >> 20));
    }
    if (*capacity < size) {
        free(*buffer);
        *capacity = 0;
        *buffer = calloc(1, (size_t)size);
        if (*buffer == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
        *capacity = (size_t)size;
    } else {
        memset(*buffer, 0, (size_t)size);
    }
}

// Checks that strip or tile `index` lies inside the file before libtiff reads it, so a lying
// byte count fails plainly instead of making libtiff grow a buffer towards it.
static void imgcodec_tiff_check_strile(imgcodec_decoder *decoder, uint32_t index) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    uint64_t offset = TIFFGetStrileOffset(state->tiff, index), count = TIFFGetStrileByteCount(state->tiff, index);
    if (count > state->file_size || offset > state->file_size - count) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid TIFF: %s %u (%llu bytes at offset %llu) extends past the end of the file (%llu bytes)",
                      state->page.tiled ? "tile" : "strip", index, (unsigned long long)count,
                      (unsigned long long)offset, (unsigned long long)state->file_size);
    }
}

// Reads the current directory's layout into state->page, in C because it fails by longjmp:
// zero sizes are invalid and codecs this libtiff lacks unsupported.
static void imgcodec_tiff_read_page(imgcodec_decoder *decoder) {
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
    page->whole_strips = page->compression == COMPRESSION_JBIG || page->compression == COMPRESSION_OJPEG;
    page->colors = page->photometric == PHOTOMETRIC_RGB || page->jpeg_rgb ? 3 : 1;
    // libtiff's rule (TIFFRGBAImageBegin): the first extra sample is the alpha; an unspecified one
    // counts as associated alpha when there are more than 3 samples.
    if (page->extra >= 1 && info != NULL) {
        if (info[0] == EXTRASAMPLE_ASSOCALPHA || info[0] == EXTRASAMPLE_UNASSALPHA) page->alpha = info[0];
        else if (info[0] == EXTRASAMPLE_UNSPECIFIED && page->samples > 3) page->alpha = EXTRASAMPLE_ASSOCALPHA;
    }
}

// The largest raw strip or tile libtiff will hold for the page (within the file), for estimates.
static uint64_t imgcodec_tiff_largest_strile(imgcodec_tiff_state *state) {
    uint32_t count = state->page.tiled ? TIFFNumberOfTiles(state->tiff) : TIFFNumberOfStrips(state->tiff);
    uint64_t largest = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t bytes = TIFFGetStrileByteCount(state->tiff, i);
        if (bytes > largest) largest = bytes;
    }
    return largest < state->file_size ? largest : state->file_size;
}

// Decodes every strip or tile of the current page without converting it (VERIFY mode, and every
// page after the first): scanline by scanline, plane by plane, or whole tiles (and JBIG strips).
static void imgcodec_tiff_verify_page(imgcodec_decoder *decoder) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    TIFF *tiff = state->tiff;
    const imgcodec_tiff_page *page = &state->page;
    if (page->tiled || page->whole_strips) {
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

// Picks the first page's PIXELS path and output layout, and fills the colormap. Native: unsigned
// 1- to 16-bit gray, RGB and palette (up to 8 bits), contiguous or separate; signed and
// floating-point samples are unsupported; the rest goes through libtiff's RGBA conversion when it
// can (LogLuv's samples are signed), else is unsupported (the reason kept for start).
static void imgcodec_tiff_plan(imgcodec_decoder *decoder) {
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
static uint64_t imgcodec_tiff_pixels_memory(imgcodec_tiff_state *state, uint64_t *plane_bytes, uint64_t *band_bytes) {
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
    uint64_t work = page->tiled ? TIFFTileSize64(tiff) : page->whole_strips ? TIFFStripSize64(tiff) : TIFFScanlineSize64(tiff);
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
    if (mode != IMGCODEC_MODE_PIXELS) {
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
