#ifndef IMGCODEC_TIFF_INTERNAL_H
#define IMGCODEC_TIFF_INTERNAL_H
// Shared by the TIFF decoder's sources (tiff_decoder.c, tiff_page.c, tiff_io.c); not part of the public header.

#include <tiffio.h>
#include "internal.h"

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
    int whole_strips;    // read a strip at a time: a codec that cannot decode part of one (JBIG, OJPEG), or subsampled YCbCr
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

// The state of `decoder`; for the libtiff callbacks too. Inline in this header, as every TIFF source needs it.
static inline imgcodec_tiff_state *imgcodec_tiff(imgcodec_decoder *decoder) {
    return (imgcodec_tiff_state *)decoder->state;
}

// tiff_io.c: libtiff's client procs over the source, and its per-handle error and warning handlers.

// libtiff's read proc: the source's pread; a read error is recorded and returns -1.
tmsize_t imgcodec_tiff_read(thandle_t handle, void *buffer, tmsize_t size);
// libtiff's write proc: the handle is read-only.
tmsize_t imgcodec_tiff_write(thandle_t handle, void *buffer, tmsize_t size);
// libtiff's seek proc over the image's bytes.
toff_t imgcodec_tiff_seek(thandle_t handle, toff_t offset, int whence);
// libtiff's close proc: the decoder owns the source.
int imgcodec_tiff_close(thandle_t handle);
// libtiff's size proc: the file size measured at open.
toff_t imgcodec_tiff_size(thandle_t handle);
// libtiff's map proc: refused, so libtiff reads through the read proc.
int imgcodec_tiff_map(thandle_t handle, void **base, toff_t *size);
// libtiff's unmap proc: nothing was mapped.
void imgcodec_tiff_unmap(thandle_t handle, void *base, toff_t size);
// libtiff's per-handle error handler: records the first error of the checked call; never unwinds.
int imgcodec_tiff_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args);
// libtiff's per-handle warning handler: records the warnings that mean damaged data.
int imgcodec_tiff_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args);
// Forgets what the handlers recorded, before a libtiff call whose result is checked.
void imgcodec_tiff_begin(imgcodec_tiff_state *state);
// Raises the failure of the libtiff call just made, in C because it longjmps.
void imgcodec_tiff_end(imgcodec_decoder *decoder, int ok, const char *what);
// Grows `buffer` to `size` zeroed bytes; fails past limits.max_memory, in C because it longjmps.
void imgcodec_tiff_reserve(imgcodec_decoder *decoder, unsigned char **buffer, size_t *capacity, uint64_t size,
                           const char *what);
// Fails when strip or tile `index` extends past the end of the file; in C because it longjmps.
void imgcodec_tiff_check_strile(imgcodec_decoder *decoder, uint32_t index);

// tiff_page.c: one page's layout, the first page's PIXELS plan, and the memory estimates.

// Reads the current directory's layout into state->page, in C because it fails by longjmp.
void imgcodec_tiff_read_page(imgcodec_decoder *decoder);
// The largest raw strip or tile libtiff will hold for the page (within the file), for estimates.
uint64_t imgcodec_tiff_largest_strile(imgcodec_tiff_state *state);
// Picks the first page's PIXELS path and output layout, and fills the colormap.
void imgcodec_tiff_plan(imgcodec_decoder *decoder);
// Bytes the first page's buffers take in PIXELS mode, for the header's estimate and start's allocation.
uint64_t imgcodec_tiff_pixels_memory(imgcodec_tiff_state *state, uint64_t *plane_bytes, uint64_t *band_bytes);

#endif
