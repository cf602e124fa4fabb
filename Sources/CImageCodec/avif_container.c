#include <string.h>
#include "avif_internal.h"

// The AVIF container scan that runs before libavif: the boxes libavif 0.11.1 allocates or
// searches per entry while parsing (items, extents, properties, tracks) are counted straight from
// the file, and a file over caps that no real image reaches is refused before avifDecoderParse.

/// The census limits: far above what a decodable file has (a grid within the other limits has at
/// most a few thousand cells), and low enough that libavif's parse stays under half a second and
/// about 30 MiB (measured at 19,990 item names).
#define IMGCODEC_AVIF_MAX_ITEM_NAMES 20000u
#define IMGCODEC_AVIF_MAX_EXTENTS 65536u
#define IMGCODEC_AVIF_MAX_ASSOCIATIONS 65536u
#define IMGCODEC_AVIF_MAX_PROPERTIES 16384u
#define IMGCODEC_AVIF_MAX_TRACKS 16u
#define IMGCODEC_AVIF_MAX_DESCRIPTIONS 64u

/// A walk over the boxes in one range of the file, for the census: each step exposes one box.
typedef struct imgcodec_avif_boxes {
    const unsigned char *data;
    size_t next;      // where the next box starts
    size_t end;       // the end of the range (the enclosing box's contents, or the file)
    size_t start;     // the current box: its size and type are here
    size_t body;      // and its contents: [body, body_end)
    size_t body_end;
} imgcodec_avif_boxes;

// Reads a big-endian field of `bytes` bytes at `at` if it lies before `end` (else 0); in C beside the census.
static uint64_t imgcodec_avif_field(const unsigned char *data, size_t at, size_t end, int bytes) {
    uint64_t value = 0;
    if (at > end || end - at < (size_t)bytes) return 0;
    for (int i = 0; i < bytes; i++) value = value << 8 | data[at + (size_t)i];
    return value;
}

// Starts a walk over the boxes in [start, end); in C beside the census.
static imgcodec_avif_boxes imgcodec_avif_walk(const unsigned char *data, size_t start, size_t end) {
    imgcodec_avif_boxes boxes = {.data = data, .next = start, .end = end};
    return boxes;
}

// Steps to the next box; 0 when none fits in the range (a malformed box ends the walk: libavif
// fails on it anyway). In C beside the census.
static int imgcodec_avif_next_box(imgcodec_avif_boxes *boxes) {
    size_t at = boxes->next, end = boxes->end;
    if (at >= end || end - at < 8) return 0;
    uint64_t size = imgcodec_avif_field(boxes->data, at, end, 4);
    size_t header = 8;
    if (size == 1) {  // a 64-bit largesize follows the type
        size = imgcodec_avif_field(boxes->data, at + 8, end, 8);
        header = 16;
    } else if (size == 0) {  // to the end of the enclosing box
        size = end - at;
    }
    if (size < header || size > end - at) return 0;
    boxes->start = at;
    boxes->body = at + header;
    boxes->body_end = at + (size_t)size;
    boxes->next = boxes->body_end;
    return 1;
}

// Whether the current box of a walk has this type; in C beside the census.
static int imgcodec_avif_is(const imgcodec_avif_boxes *boxes, const char *type) {
    return memcmp(boxes->data + boxes->start + 4, type, 4) == 0;
}

// Finds the first box of `type` in [start, end) and walks its children (after `skip` bytes: 4 for
// a full box's version and flags); the walk is empty when there is no such box. In C beside the census.
static imgcodec_avif_boxes imgcodec_avif_enter(const unsigned char *data, size_t start, size_t end, const char *type,
                                               size_t skip) {
    imgcodec_avif_boxes boxes = imgcodec_avif_walk(data, start, end);
    while (imgcodec_avif_next_box(&boxes)) {
        if (imgcodec_avif_is(&boxes, type)) return imgcodec_avif_walk(data, boxes.body + skip, boxes.body_end);
    }
    return imgcodec_avif_walk(data, 0, 0);
}

// The smaller of a count a box claims and the entries of `size` bytes its remaining bytes can
// hold: libavif stops at the end of the data, so a lying count costs nothing. In C beside the census.
static uint64_t imgcodec_avif_entries(uint64_t claimed, size_t at, size_t end, size_t size) {
    uint64_t room = at < end ? (end - at) / size : 0;
    return claimed < room ? claimed : room;
}

// Counts the entries and associations of one ipma box's contents [at, end); in C beside the census.
static void imgcodec_avif_census_ipma(imgcodec_avif_census *census, const unsigned char *data, size_t at, size_t end) {
    int version = (int)imgcodec_avif_field(data, at, end, 1);
    int wide = (imgcodec_avif_field(data, at, end, 4) & 1) != 0;  // flag 1: 16-bit property indices
    uint64_t entries = imgcodec_avif_field(data, at + 4, end, 4);
    at += 8;
    for (uint64_t i = 0; i < entries && at < end; i++) {
        at += version < 1 ? 2 : 4;  // item_ID
        uint64_t count = imgcodec_avif_field(data, at, end, 1);
        census->item_names++;
        census->associations += count;
        at += 1 + (size_t)count * (wide ? 2 : 1);
    }
}

// Adds without wrapping around (lengths in a hostile file can be anything); in C beside the census.
static uint64_t imgcodec_avif_add(uint64_t a, uint64_t b) {
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// Counts the items and extents of one iloc box's contents [at, end) and the bytes libavif copies
// to join items in several extents; in C beside the census.
static void imgcodec_avif_census_iloc(imgcodec_avif_census *census, const unsigned char *data, size_t at, size_t end) {
    // Version and flags; offset, length, base offset and index sizes (4 bits each); the item count.
    int version = (int)imgcodec_avif_field(data, at, end, 1);
    uint64_t sizes = imgcodec_avif_field(data, at + 4, end, 2);
    size_t offset_size = (sizes >> 12) & 15, length_size = (sizes >> 8) & 15, base_offset_size = (sizes >> 4) & 15;
    size_t index_size = version >= 1 ? sizes & 15 : 0, id = version < 2 ? 2 : 4;
    uint64_t items = imgcodec_avif_field(data, at + 6, end, (int)id);
    at += 6 + id;
    uint64_t i = 0;
    for (; i < items && at < end; i++) {
        census->item_names++;
        at += id + (version >= 1 ? 2 : 0) + 2 + base_offset_size;  // item_ID, construction method, data ref, base
        uint64_t extents = imgcodec_avif_field(data, at, end, 2), bytes = 0;
        at += 2;
        // Extents whose fields run past the box are not there: the box is damaged, not large.
        size_t extent_size = index_size + offset_size + length_size;
        if (at > end || (extent_size > 0 && extents > (end - at) / extent_size)) {
            census->iloc_overruns = 1;
            return;
        }
        census->extents += extents;
        if (extent_size == 0) continue;  // extents of no bytes: nothing to read
        for (uint64_t e = 0; e < extents && at <= end; e++) {
            at += index_size + offset_size;
            uint64_t length = imgcodec_avif_field(data, at, end, (int)length_size);
            bytes = imgcodec_avif_add(bytes, length);
            at += length_size;
        }
        if (extents > 1) census->merged_bytes = imgcodec_avif_add(census->merged_bytes, bytes);
    }
    if (i < items) census->iloc_overruns = 1;  // more items declared than the box holds
}

// Counts the items an iinf box's contents [at, end) declare, and (file level) its av01 items;
// in C beside the census.
static void imgcodec_avif_census_iinf(imgcodec_avif_census *census, const unsigned char *data, size_t at, size_t end,
                                      int file_level) {
    // Version and flags, then a 16-bit (version 0) or 32-bit entry count, then infe boxes.
    imgcodec_avif_boxes infe = imgcodec_avif_walk(data, at + (imgcodec_avif_field(data, at, end, 1) == 0 ? 6 : 8), end);
    while (imgcodec_avif_next_box(&infe)) {
        census->item_names++;
        // infe version 2 has a 16-bit item_ID, version 3 a 32-bit one; then a protection index and the type.
        int version = (int)imgcodec_avif_field(data, infe.body, infe.body_end, 1);
        size_t type = infe.body + 4 + (version == 3 ? 4 : 2) + 2;
        if (file_level && version >= 2 && type + 4 <= infe.body_end && memcmp(data + type, "av01", 4) == 0) {
            census->av1_items++;
        }
    }
}

// Counts what the boxes of one meta box's contents [start, end) name (after its version and
// flags); in C beside the census.
static void imgcodec_avif_census_meta(imgcodec_avif_census *census, const unsigned char *data, size_t start, size_t end,
                                      int file_level) {
    imgcodec_avif_boxes box = imgcodec_avif_walk(data, start, end);
    while (imgcodec_avif_next_box(&box)) {
        size_t body = box.body, body_end = box.body_end;
        int version = (int)imgcodec_avif_field(data, body, body_end, 1);
        if (imgcodec_avif_is(&box, "pitm")) census->item_names++;
        if (imgcodec_avif_is(&box, "iinf")) imgcodec_avif_census_iinf(census, data, body, body_end, file_level);
        if (imgcodec_avif_is(&box, "iloc")) imgcodec_avif_census_iloc(census, data, body, body_end);
        if (imgcodec_avif_is(&box, "iref")) {
            size_t id = version == 0 ? 2 : 4;
            imgcodec_avif_boxes ref = imgcodec_avif_walk(data, body + 4, body_end);
            while (imgcodec_avif_next_box(&ref)) {  // from_item_ID, reference_count, to_item_IDs
                uint64_t claimed = imgcodec_avif_field(data, ref.body + id, ref.body_end, 2);
                census->item_names += 1 + imgcodec_avif_entries(claimed, ref.body + id + 2, ref.body_end, id);
            }
        }
        if (imgcodec_avif_is(&box, "iprp")) {
            imgcodec_avif_boxes child = imgcodec_avif_walk(data, body, body_end);
            while (imgcodec_avif_next_box(&child)) {
                if (imgcodec_avif_is(&child, "ipma")) {
                    imgcodec_avif_census_ipma(census, data, child.body, child.body_end);
                }
                if (!imgcodec_avif_is(&child, "ipco")) continue;
                imgcodec_avif_boxes property = imgcodec_avif_walk(data, child.body, child.body_end);
                while (imgcodec_avif_next_box(&property)) census->properties++;
            }
        }
    }
}

// Takes the census of a whole file: the top-level meta box, and each track's meta box and sample
// descriptions. In C beside the decoder's open.
void imgcodec_avif_census_file(imgcodec_avif_census *census, const unsigned char *data, size_t size) {
    imgcodec_avif_boxes top = imgcodec_avif_walk(data, 0, size);
    while (imgcodec_avif_next_box(&top)) {
        if (imgcodec_avif_is(&top, "meta")) imgcodec_avif_census_meta(census, data, top.body + 4, top.body_end, 1);
        if (!imgcodec_avif_is(&top, "moov")) continue;
        imgcodec_avif_boxes trak = imgcodec_avif_walk(data, top.body, top.body_end);
        while (imgcodec_avif_next_box(&trak)) {
            if (!imgcodec_avif_is(&trak, "trak")) continue;
            census->tracks++;
            imgcodec_avif_boxes meta = imgcodec_avif_enter(data, trak.body, trak.body_end, "meta", 4);
            imgcodec_avif_census_meta(census, data, meta.next, meta.end, 0);
            imgcodec_avif_boxes path = imgcodec_avif_enter(data, trak.body, trak.body_end, "mdia", 0);
            path = imgcodec_avif_enter(data, path.next, path.end, "minf", 0);
            path = imgcodec_avif_enter(data, path.next, path.end, "stbl", 0);
            // stsd: version and flags, an entry count, sample entries of at least 8 bytes.
            imgcodec_avif_boxes stsd = imgcodec_avif_enter(data, path.next, path.end, "stsd", 4);
            uint64_t claimed = imgcodec_avif_field(data, stsd.next, stsd.end, 4);
            census->descriptions += imgcodec_avif_entries(claimed, stsd.next + 4, stsd.end, 8);
        }
    }
}

// Refuses a container whose census would make libavif's parse slow or large, or whose grid cells
// would need more decoder state than max_memory. In C because it fails by longjmp.
void imgcodec_avif_check_census(imgcodec_decoder *decoder, const imgcodec_avif_census *census, size_t size) {
    static const char *const names[] = {"item references", "item extents", "property associations", "properties",
                                        "tracks", "sample descriptions"};
    static const uint32_t caps[] = {IMGCODEC_AVIF_MAX_ITEM_NAMES, IMGCODEC_AVIF_MAX_EXTENTS,
                                    IMGCODEC_AVIF_MAX_ASSOCIATIONS, IMGCODEC_AVIF_MAX_PROPERTIES,
                                    IMGCODEC_AVIF_MAX_TRACKS, IMGCODEC_AVIF_MAX_DESCRIPTIONS};
    if (census->iloc_overruns) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid AVIF: malformed container (its iloc box declares more items or extents than it holds)");
    }
    const uint64_t counts[] = {census->item_names, census->extents, census->associations, census->properties,
                               census->tracks, census->descriptions};
    for (int i = 0; i < 6; i++) {
        if (counts[i] > caps[i]) {
            imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                          "image too large: an AVIF container with %llu %s (at most %u)",
                          (unsigned long long)counts[i], names[i], caps[i]);
        }
    }
    // Items in pieces are joined in memory: pieces of distinct bytes never add up to more than the file.
    if (census->merged_bytes > size) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: AVIF items in pieces add up to %llu bytes, more than the file (%zu bytes)",
                      (unsigned long long)census->merged_bytes, size);
    }
    // libavif keeps one AV1 decoder per grid cell until the end: their state grows with the
    // number of cells, not with the pixels, so only max_memory bounds it.
    uint64_t state_bytes = (uint64_t)census->av1_items * IMGCODEC_AVIF_INSTANCE_MEMORY;
    if (decoder->limits.max_memory != 0 && state_bytes > decoder->limits.max_memory) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: %u AV1 images (grid cells) need %llu MiB of decoder state, "
                      "over the memory limit (%llu MiB)", census->av1_items, (unsigned long long)(state_bytes >> 20),
                      (unsigned long long)(decoder->limits.max_memory >> 20));
    }
}
