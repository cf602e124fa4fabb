#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fixtures_avif_internal.h"

// The AVIF fixtures' box work: walking libavif's output (32-bit sizes only, as libavif writes
// them) to rewrite it in place into files that lie (a claimed frame count, a declared size), and
// writing boxes from scratch for the shared-grid file.

// Reads a big-endian 32-bit box field; in C beside the box walkers.
uint32_t imgcodec_fixture_be32_at(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

// Writes a big-endian 32-bit box field; in C beside the box walkers.
static void imgcodec_fixture_put_be32(unsigned char *p, uint32_t value) {
    p[0] = (unsigned char)(value >> 24);
    p[1] = (unsigned char)(value >> 16);
    p[2] = (unsigned char)(value >> 8);
    p[3] = (unsigned char)value;
}

// Finds the first box of `type` among the boxes in [start, end) of `data` (32-bit sizes only, as
// libavif writes them); returns its offset, or SIZE_MAX when absent. In C beside the box walkers.
static size_t imgcodec_fixture_find_box(const unsigned char *data, size_t start, size_t end, const char *type) {
    size_t at = start;
    while (at + 8 <= end) {
        uint32_t size = imgcodec_fixture_be32_at(data + at);
        if (size < 8 || size > end - at) return SIZE_MAX;
        if (memcmp(data + at + 4, type, 4) == 0) return at;
        at += size;
    }
    return SIZE_MAX;
}

// Follows a path of nested box types from the top level; returns the last box's offset, or 0
// when one is missing (no box of interest starts the file: ftyp does). In C beside the box walkers.
size_t imgcodec_fixture_find_path(const unsigned char *data, size_t size, const char *const *path, int depth) {
    size_t start = 0, end = size, box = 0;
    for (int i = 0; i < depth; i++) {
        box = imgcodec_fixture_find_box(data, start, end, path[i]);
        if (box == SIZE_MAX) return 0;
        size_t header = strcmp(path[i], "meta") == 0 ? 12 : 8;  // meta is a full box: version and flags
        end = box + imgcodec_fixture_be32_at(data + box);
        start = box + header;
    }
    return box;
}

// In C beside the encoder: makes a sequence claim `claimed` samples by rewriting its sample table
// in place (no box changes size): one chunk of `claimed` samples, every one the first one's size.
int imgcodec_fixture_claim_frames(unsigned char *data, size_t size, uint32_t claimed) {
    static const char *const stsc_path[] = {"moov", "trak", "mdia", "minf", "stbl", "stsc"};
    static const char *const stsz_path[] = {"moov", "trak", "mdia", "minf", "stbl", "stsz"};
    size_t stsc = imgcodec_fixture_find_path(data, size, stsc_path, 6);
    size_t stsz = imgcodec_fixture_find_path(data, size, stsz_path, 6);
    if (stsc == 0 || stsz == 0) return 0;
    // stsc: full box header, entry_count, then first_chunk, samples_per_chunk, description index.
    imgcodec_fixture_put_be32(data + stsc + 12, 1);
    imgcodec_fixture_put_be32(data + stsc + 16, 1);
    imgcodec_fixture_put_be32(data + stsc + 20, claimed);
    // stsz: full box header, sample_size, sample_count, entry sizes: set a common size, so the
    // now unread entries need no room.
    uint32_t first = imgcodec_fixture_be32_at(data + stsz + 20);
    imgcodec_fixture_put_be32(data + stsz + 12, first);
    imgcodec_fixture_put_be32(data + stsz + 16, claimed);
    return 1;
}

// In C beside the encoder: makes the container declare another size (every ispe and tkhd that
// says width × height), leaving the AV1 data as it is.
void imgcodec_fixture_declare_size(unsigned char *data, size_t size, uint32_t width, uint32_t height,
                                   uint32_t declared_width, uint32_t declared_height) {
    static const char *const ipco_path[] = {"meta", "iprp", "ipco"};
    static const char *const moov_path[] = {"moov"};
    size_t ipco = imgcodec_fixture_find_path(data, size, ipco_path, 3);
    for (size_t at = ipco + 8; ipco != 0 && at + 20 <= ipco + imgcodec_fixture_be32_at(data + ipco);
         at += imgcodec_fixture_be32_at(data + at)) {
        if (imgcodec_fixture_be32_at(data + at) < 8) break;
        if (memcmp(data + at + 4, "ispe", 4) == 0 && imgcodec_fixture_be32_at(data + at + 12) == width &&
            imgcodec_fixture_be32_at(data + at + 16) == height) {
            imgcodec_fixture_put_be32(data + at + 12, declared_width);
            imgcodec_fixture_put_be32(data + at + 16, declared_height);
        }
    }
    size_t moov = imgcodec_fixture_find_path(data, size, moov_path, 1);
    size_t moov_end = moov != 0 ? moov + imgcodec_fixture_be32_at(data + moov) : 0;
    size_t trak = moov + 8;
    while (moov != 0 && (trak = imgcodec_fixture_find_box(data, trak, moov_end, "trak")) != SIZE_MAX) {
        size_t trak_end = trak + imgcodec_fixture_be32_at(data + trak);
        size_t tkhd = imgcodec_fixture_find_box(data, trak + 8, trak_end, "tkhd");
        trak = trak_end;
        if (tkhd == SIZE_MAX) continue;
        size_t fields = tkhd + (data[tkhd + 8] == 1 ? 96 : 84);  // width and height (16.16) after the version's fields
        if (imgcodec_fixture_be32_at(data + fields) == width << 16 &&
            imgcodec_fixture_be32_at(data + fields + 4) == height << 16) {
            imgcodec_fixture_put_be32(data + fields, declared_width << 16);
            imgcodec_fixture_put_be32(data + fields + 4, declared_height << 16);
        }
    }
}

// Appends bytes, growing the buffer; in C beside the box writers.
void imgcodec_fixture_put(imgcodec_fixture_boxes *boxes, const void *bytes, size_t count) {
    if (boxes->failed) return;
    if (boxes->size + count > boxes->capacity) {
        size_t capacity = boxes->capacity ? boxes->capacity : 4096;
        while (capacity < boxes->size + count) capacity *= 2;
        unsigned char *grown = realloc(boxes->data, capacity);
        if (grown == NULL) {
            boxes->failed = 1;
            return;
        }
        boxes->data = grown;
        boxes->capacity = capacity;
    }
    memcpy(boxes->data + boxes->size, bytes, count);
    boxes->size += count;
}

// Appends big-endian integers of 8, 16 or 32 bits; in C beside the box writers.
void imgcodec_fixture_put_uint(imgcodec_fixture_boxes *boxes, uint32_t value, int bytes) {
    unsigned char out[4];
    imgcodec_fixture_put_be32(out, value);
    imgcodec_fixture_put(boxes, out + 4 - bytes, (size_t)bytes);
}

// Starts a box (version >= 0: a full box with that version and zero flags); returns its offset
// for imgcodec_fixture_end_box. In C beside the shared-grid builder.
size_t imgcodec_fixture_begin_box(imgcodec_fixture_boxes *boxes, const char *type, int version) {
    size_t start = boxes->size;
    imgcodec_fixture_put_uint(boxes, 0, 4);
    imgcodec_fixture_put(boxes, type, 4);
    if (version >= 0) imgcodec_fixture_put_uint(boxes, (uint32_t)version << 24, 4);
    return start;
}

// Stores a finished box's size; in C beside imgcodec_fixture_begin_box.
void imgcodec_fixture_end_box(imgcodec_fixture_boxes *boxes, size_t start) {
    if (!boxes->failed) imgcodec_fixture_put_be32(boxes->data + start, (uint32_t)(boxes->size - start));
}
