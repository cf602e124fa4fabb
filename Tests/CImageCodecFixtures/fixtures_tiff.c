#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include "imgcodec.h"
#include "imgcodec_fixtures.h"
#include "imgcodec_fixtures_tiff.h"

/// A growable in-memory file that libtiff writes (and reads back while linking directories).
typedef struct imgcodec_fixture_tiff {
    unsigned char *data;
    uint64_t size, capacity, position;
    char error[IMGCODEC_MESSAGE_SIZE];  // libtiff's first error
} imgcodec_fixture_tiff;

// libtiff's read proc over the fixture buffer.
static tmsize_t imgcodec_fixture_tiff_read(thandle_t handle, void *buffer, tmsize_t size) {
    imgcodec_fixture_tiff *file = (imgcodec_fixture_tiff *)handle;
    uint64_t available = file->position < file->size ? file->size - file->position : 0;
    uint64_t count = (uint64_t)size < available ? (uint64_t)size : available;
    memcpy(buffer, file->data + file->position, (size_t)count);
    file->position += count;
    return (tmsize_t)count;
}

// libtiff's write proc: grows the buffer (zero-filling any gap a seek left).
static tmsize_t imgcodec_fixture_tiff_write(thandle_t handle, void *buffer, tmsize_t size) {
    imgcodec_fixture_tiff *file = (imgcodec_fixture_tiff *)handle;
    uint64_t end = file->position + (uint64_t)size;
    if (end > file->capacity) {
        uint64_t capacity = file->capacity ? file->capacity : 65536;
        while (capacity < end) capacity *= 2;
        unsigned char *grown = realloc(file->data, (size_t)capacity);
        if (grown == NULL) return -1;
        memset(grown + file->capacity, 0, (size_t)(capacity - file->capacity));
        file->data = grown;
        file->capacity = capacity;
    }
    memcpy(file->data + file->position, buffer, (size_t)size);
    file->position = end;
    if (end > file->size) file->size = end;
    return size;
}

// libtiff's seek proc over the fixture buffer.
static toff_t imgcodec_fixture_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    imgcodec_fixture_tiff *file = (imgcodec_fixture_tiff *)handle;
    uint64_t base = whence == SEEK_CUR ? file->position : whence == SEEK_END ? file->size : 0;
    file->position = base + offset;
    return file->position;
}

// libtiff's close proc: the buffer outlives the handle.
static int imgcodec_fixture_tiff_close(thandle_t handle) {
    (void)handle;
    return 0;
}

// libtiff's size proc over the fixture buffer.
static toff_t imgcodec_fixture_tiff_size(thandle_t handle) {
    return ((imgcodec_fixture_tiff *)handle)->size;
}

// libtiff's per-handle error handler: keeps the first message for the fixture's failure.
static int imgcodec_fixture_tiff_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    (void)module;
    imgcodec_fixture_tiff *file = (imgcodec_fixture_tiff *)user_data;
    if (file->error[0] == '\0') vsnprintf(file->error, sizeof file->error, format, args);
    return 1;
}

// libtiff's per-handle warning handler: fixtures stay silent.
static int imgcodec_fixture_tiff_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    (void)user_data;
    (void)module;
    (void)format;
    (void)args;
    return 1;
}

// Reads sample `index` of a packed row (MSB first below 8 bits, native-endian at 16).
static unsigned imgcodec_fixture_tiff_get(const unsigned char *row, size_t index, int bits) {
    if (bits == 16) {
        uint16_t value;
        memcpy(&value, row + index * 2, 2);
        return value;
    }
    if (bits == 8) return row[index];
    size_t bit = index * (size_t)bits;
    return (row[bit / 8] >> (8 - bits - bit % 8)) & ((1u << bits) - 1);
}

// Writes sample `index` of a packed row (MSB first below 8 bits, native-endian at 16).
static void imgcodec_fixture_tiff_put(unsigned char *row, size_t index, int bits, unsigned value) {
    if (bits == 16) {
        uint16_t sample = (uint16_t)value;
        memcpy(row + index * 2, &sample, 2);
    } else if (bits == 8) {
        row[index] = (unsigned char)value;
    } else {
        size_t bit = index * (size_t)bits;
        unsigned shift = 8 - (unsigned)bits - bit % 8, mask = ((1u << bits) - 1) << shift;
        row[bit / 8] = (unsigned char)((row[bit / 8] & ~mask) | ((value << shift) & mask));
    }
}

// Copies `count` pixels from x of a source row into `out`: all samples, or only `plane` when separate.
static void imgcodec_fixture_tiff_pixels(const unsigned char *row, uint32_t x, uint32_t count, int samples, int bits,
                                         int plane, unsigned char *out) {
    int first = plane < 0 ? 0 : plane, last = plane < 0 ? samples - 1 : plane, width = last - first + 1;
    for (uint32_t i = 0; i < count; i++) {
        for (int s = first; s <= last; s++) {
            unsigned value = row == NULL ? 0 : imgcodec_fixture_tiff_get(row, ((size_t)x + i) * samples + s, bits);
            imgcodec_fixture_tiff_put(out, (size_t)i * width + (s - first), bits, value);
        }
    }
}

// In C because libtiff writes the page: tags, then strips row by row or tiles one by one.
static int imgcodec_fixture_tiff_page(TIFF *tiff, const unsigned char *pixels, uint32_t width, uint32_t height,
                                      const imgcodec_test_tiff_options *options, unsigned char *scratch) {
    int samples = options->samples > 0 ? options->samples : 1, bits = options->bits > 0 ? options->bits : 8;
    int compression = options->compression > 0 ? options->compression : COMPRESSION_NONE;
    int colors = options->photometric == PHOTOMETRIC_RGB || options->photometric == PHOTOMETRIC_YCBCR ? 3
               : options->photometric == PHOTOMETRIC_SEPARATED ? 4 : 1;
    size_t stride = ((size_t)width * samples * bits + 7) / 8;
    TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, width);
    TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, height);
    TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, samples);
    TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, bits);
    TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC, options->photometric);
    TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, options->planar_separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
    TIFFSetField(tiff, TIFFTAG_COMPRESSION, compression);
    if (options->predictor > 1) TIFFSetField(tiff, TIFFTAG_PREDICTOR, options->predictor);
    if (compression == COMPRESSION_JPEG) {
        TIFFSetField(tiff, TIFFTAG_JPEGQUALITY, options->jpeg_quality > 0 ? options->jpeg_quality : 90);
        if (options->photometric == PHOTOMETRIC_YCBCR) TIFFSetField(tiff, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    }
    if (options->orientation >= 1 && options->orientation <= 8) TIFFSetField(tiff, TIFFTAG_ORIENTATION, options->orientation);
    if (options->extra_samples > 0 && samples > colors) {
        uint16_t kinds[64] = {0};
        kinds[0] = options->extra_samples == 1 ? EXTRASAMPLE_ASSOCALPHA
                 : options->extra_samples == 2 ? EXTRASAMPLE_UNASSALPHA : EXTRASAMPLE_UNSPECIFIED;
        TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, samples - colors < 64 ? samples - colors : 64, kinds);
    }
    if (options->photometric == PHOTOMETRIC_PALETTE && bits <= 8) {
        uint16_t map[3 * 256];
        unsigned entries = 1u << bits;
        for (unsigned i = 0; i < entries; i++) {
            // The default ramp: red rises, green falls, blue hops, so every index has its own color.
            unsigned ramp[3] = { i, entries - 1 - i, i * 7 % entries };
            for (unsigned c = 0; c < 3; c++) {
                map[c * entries + i] = options->colormap ? options->colormap[c * entries + i]
                                                         : (uint16_t)(ramp[c] * 65535u / (entries - 1));
            }
        }
        TIFFSetField(tiff, TIFFTAG_COLORMAP, map, map + entries, map + 2 * entries);
    }
    int planes = options->planar_separate ? samples : 1, per_plane = options->planar_separate ? 1 : samples;
    if (options->tile_width != 0 && options->tile_height != 0) {
        TIFFSetField(tiff, TIFFTAG_TILEWIDTH, options->tile_width);
        TIFFSetField(tiff, TIFFTAG_TILELENGTH, options->tile_height);
        tmsize_t tile_size = TIFFTileSize(tiff);
        size_t tile_row = ((size_t)options->tile_width * per_plane * bits + 7) / 8;
        for (int p = 0; p < planes; p++) {
            for (uint32_t y = 0; y < height; y += options->tile_height) {
                for (uint32_t x = 0; x < width; x += options->tile_width) {
                    memset(scratch, 0, (size_t)tile_size);
                    uint32_t count = width - x < options->tile_width ? width - x : options->tile_width;
                    for (uint32_t r = 0; r < options->tile_height && y + r < height; r++) {
                        imgcodec_fixture_tiff_pixels(pixels ? pixels + stride * (y + r) : NULL, x, count, samples, bits,
                                                     options->planar_separate ? p : -1, scratch + tile_row * r);
                    }
                    uint32_t tile = TIFFComputeTile(tiff, x, y, 0, (uint16_t)p);
                    if (TIFFWriteEncodedTile(tiff, tile, scratch, tile_size) < 0) return 0;
                }
            }
        }
    } else {
        uint32_t rows = options->rows_per_strip ? options->rows_per_strip : TIFFDefaultStripSize(tiff, 0);
        TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, rows);
        for (int p = 0; p < planes; p++) {
            for (uint32_t y = 0; y < height; y++) {
                memset(scratch, 0, (size_t)TIFFScanlineSize(tiff));
                imgcodec_fixture_tiff_pixels(pixels ? pixels + stride * y : NULL, 0, width, samples, bits,
                                             options->planar_separate ? p : -1, scratch);
                if (TIFFWriteScanline(tiff, scratch, y, (uint16_t)p) < 0) return 0;
            }
        }
    }
    return TIFFWriteDirectory(tiff);
}

// In C because libtiff writes the file; see imgcodec_fixtures_tiff.h.
int imgcodec_test_encode_tiff(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_tiff_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    imgcodec_fixture_tiff file = {0};
    TIFFOpenOptions *open_options = TIFFOpenOptionsAlloc();
    if (open_options == NULL) {
        snprintf(message, message_size, "out of memory");
        return IMGCODEC_IO;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(open_options, imgcodec_fixture_tiff_error, &file);
    TIFFOpenOptionsSetWarningHandlerExtR(open_options, imgcodec_fixture_tiff_warning, &file);
    TIFF *tiff = TIFFClientOpenExt("fixture", options->big_endian ? "wb" : "wl", (thandle_t)&file,
                                   imgcodec_fixture_tiff_read, imgcodec_fixture_tiff_write, imgcodec_fixture_tiff_seek,
                                   imgcodec_fixture_tiff_close, imgcodec_fixture_tiff_size, NULL, NULL, open_options);
    TIFFOpenOptionsFree(open_options);
    int ok = tiff != NULL;
    // The scratch buffer holds a scanline or a tile: samples × 16 bits a pixel at most.
    int samples = options->samples > 0 ? options->samples : 1;
    uint64_t pixel_bytes = (uint64_t)samples * 2;
    uint64_t scratch_size = options->tile_width != 0 && options->tile_height != 0
                                ? (uint64_t)options->tile_width * options->tile_height * pixel_bytes
                                : (uint64_t)width * pixel_bytes;
    unsigned char *scratch = ok ? calloc(1, (size_t)scratch_size + 16) : NULL;
    ok = ok && scratch != NULL;
    uint32_t pages = options->pages > 1 ? options->pages : 1;
    for (uint32_t page = 0; ok && page < pages; page++) {
        ok = imgcodec_fixture_tiff_page(tiff, pixels, width, height, options, scratch);
    }
    if (tiff != NULL) TIFFClose(tiff);
    free(scratch);
    if (!ok) {
        snprintf(message, message_size, "%s", file.error[0] ? file.error : "cannot write the TIFF fixture");
        free(file.data);
        return IMGCODEC_INVALID;
    }
    *data = file.data;
    *size = (size_t)file.size;
    return IMGCODEC_OK;
}

// Reads a 16- or 32-bit value in the file's byte order.
static uint32_t imgcodec_fixture_tiff_u(const unsigned char *p, int bytes, int little_endian) {
    uint32_t value = 0;
    for (int i = 0; i < bytes; i++) value |= (uint32_t)p[i] << (8 * (little_endian ? i : bytes - 1 - i));
    return value;
}

// Writes a 16- or 32-bit value in the file's byte order.
static void imgcodec_fixture_tiff_set(unsigned char *p, int bytes, int little_endian, uint32_t value) {
    for (int i = 0; i < bytes; i++) p[little_endian ? i : bytes - 1 - i] = (unsigned char)(value >> (8 * i));
}

// In C beside the encoder: walks the classic TIFF IFD chain, bounds-checked (stops after 1,000,000 IFDs).
uint32_t imgcodec_test_tiff_ifd_offset(const unsigned char *data, size_t size, uint32_t index) {
    if (size < 8 || !((data[0] == 'I' && data[1] == 'I') || (data[0] == 'M' && data[1] == 'M'))) return 0;
    int little_endian = data[0] == 'I';
    uint32_t offset = imgcodec_fixture_tiff_u(data + 4, 4, little_endian);
    for (uint32_t i = 0; i < index && i < 1000000; i++) {
        if (offset == 0 || (uint64_t)offset + 2 > size) return 0;
        uint64_t next = (uint64_t)offset + 2 + 12ull * imgcodec_fixture_tiff_u(data + offset, 2, little_endian);
        if (next + 4 > size) return 0;
        offset = imgcodec_fixture_tiff_u(data + next, 4, little_endian);
    }
    return offset != 0 && (uint64_t)offset + 2 <= size ? offset : 0;
}

// In C beside the encoder; see imgcodec_fixtures_tiff.h.
int imgcodec_test_tiff_patch(unsigned char *data, size_t size, uint32_t index, uint16_t tag, uint32_t element,
                             uint32_t value) {
    uint32_t offset = imgcodec_test_tiff_ifd_offset(data, size, index);
    if (offset == 0) return IMGCODEC_INVALID;
    int little_endian = data[0] == 'I';
    unsigned entries = imgcodec_fixture_tiff_u(data + offset, 2, little_endian);
    if ((uint64_t)offset + 2 + 12ull * entries + 4 > size) return IMGCODEC_INVALID;
    if (tag == 0) {
        imgcodec_fixture_tiff_set(data + offset + 2 + 12 * entries, 4, little_endian, value);
        return IMGCODEC_OK;
    }
    for (unsigned i = 0; i < entries; i++) {
        unsigned char *entry = data + offset + 2 + 12 * i;
        if (imgcodec_fixture_tiff_u(entry, 2, little_endian) != tag) continue;
        unsigned type = imgcodec_fixture_tiff_u(entry + 2, 2, little_endian);
        uint32_t count = imgcodec_fixture_tiff_u(entry + 4, 4, little_endian);
        int bytes = type == TIFF_SHORT ? 2 : type == TIFF_LONG ? 4 : 0;
        if (bytes == 0 || element >= count) return IMGCODEC_INVALID;
        int inline_value = (uint64_t)count * bytes <= 4;
        uint64_t at = inline_value ? (uint64_t)(entry + 8 - data) : imgcodec_fixture_tiff_u(entry + 8, 4, little_endian);
        at += (uint64_t)element * bytes;
        if (at + bytes > size) return IMGCODEC_INVALID;
        imgcodec_fixture_tiff_set(data + at, bytes, little_endian, value);
        return IMGCODEC_OK;
    }
    return IMGCODEC_INVALID;
}
