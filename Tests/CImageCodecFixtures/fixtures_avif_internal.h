#ifndef IMGCODEC_FIXTURES_AVIF_INTERNAL_H
#define IMGCODEC_FIXTURES_AVIF_INTERNAL_H
// Shared by the AVIF fixture sources (fixtures_avif.c, fixtures_avif_boxes.c); not part of the public headers.

#include <stddef.h>
#include <stdint.h>

/// A growable buffer the shared-grid builder writes boxes into.
typedef struct imgcodec_fixture_boxes {
    unsigned char *data;
    size_t size;
    size_t capacity;
    int failed;  // an allocation failed: later writes are dropped
} imgcodec_fixture_boxes;

// fixtures_avif_boxes.c: reading, rewriting in place and writing ISO BMFF boxes.

// Reads a big-endian 32-bit box field.
uint32_t imgcodec_fixture_be32_at(const unsigned char *p);
// Follows a path of nested box types from the top level; the last box's offset, or 0 when one is missing.
size_t imgcodec_fixture_find_path(const unsigned char *data, size_t size, const char *const *path, int depth);
// Makes a sequence claim `claimed` samples by rewriting its sample table in place; 0 without one.
int imgcodec_fixture_claim_frames(unsigned char *data, size_t size, uint32_t claimed);
// Makes the container declare another size (every ispe and tkhd that says width × height).
void imgcodec_fixture_declare_size(unsigned char *data, size_t size, uint32_t width, uint32_t height,
                                   uint32_t declared_width, uint32_t declared_height);
// Appends bytes, growing the buffer.
void imgcodec_fixture_put(imgcodec_fixture_boxes *boxes, const void *bytes, size_t count);
// Appends big-endian integers of 8, 16 or 32 bits.
void imgcodec_fixture_put_uint(imgcodec_fixture_boxes *boxes, uint32_t value, int bytes);
// Starts a box (version >= 0: a full box with that version and zero flags); returns its offset.
size_t imgcodec_fixture_begin_box(imgcodec_fixture_boxes *boxes, const char *type, int version);
// Stores a finished box's size.
void imgcodec_fixture_end_box(imgcodec_fixture_boxes *boxes, size_t start);

#endif
