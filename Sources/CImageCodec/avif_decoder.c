#include <stdlib.h>
#include <string.h>
#include <avif/avif.h>
#include "internal.h"

/// Bytes one AV1 decoder instance holds besides its pictures: a dav1d 1.0 context with one thread
/// and one frame in flight, as measured through libavif 0.11.1 (about 420 KiB). libavif opens one
/// per grid cell and keeps them all until the end, so a grid of many small cells costs this much
/// per cell whatever the cells' size.
#define IMGCODEC_AVIF_INSTANCE_MEMORY (448u << 10)

/// Pictures dav1d may hold for an image sequence: its 8 reference slots and the frame being decoded.
#define IMGCODEC_AVIF_SEQUENCE_PICTURES 9u

/// What a dav1d context adds once it decodes inter frames (sequences), measured at about 1 MiB.
#define IMGCODEC_AVIF_SEQUENCE_INSTANCE_MEMORY (1u << 20)

/// libavif's decoder and what the PIXELS mode converts into.
typedef struct imgcodec_avif_state {
    avifDecoder *avif;
    unsigned char *pixels;  // the first frame in the output layout (PIXELS mode)
} imgcodec_avif_state;

// Turns a failed libavif call into a one-line message and fails by longjmp: only after libavif
// has returned, never from inside it.
__attribute__((noreturn))
static void imgcodec_avif_fail(imgcodec_decoder *decoder, avifResult result) {
    imgcodec_avif_state *state = decoder->state;
    const char *detail = state->avif != NULL ? state->avif->diag.error : "";
    // libavif refuses these from the container alone: its frame-count cap (set from max_frames) and
    // its own size cap (16384×16384 pixels, 32768 a side), past which it decodes nothing.
    if (strstr(detail, "imageCountLimit") != NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: more than %u frames",
                      state->avif->imageCountLimit);
    }
    if (strstr(detail, "too large") != NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: over libavif's size limit (%s)",
                      detail);
    }
    if (result == AVIF_RESULT_OUT_OF_MEMORY) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    int status = IMGCODEC_INVALID;
    const char *words = avifResultToString(result);
    switch (result) {
    case AVIF_RESULT_TRUNCATED_DATA: words = "truncated data"; break;
    case AVIF_RESULT_IO_ERROR: words = "truncated data (an offset points past the end of the file)"; break;
    case AVIF_RESULT_INVALID_FTYP: words = "not an AVIF file (no avif or avis brand in ftyp)"; break;
    case AVIF_RESULT_BMFF_PARSE_FAILED: words = "malformed container"; break;
    case AVIF_RESULT_NO_CONTENT: words = "no image in the file"; break;
    case AVIF_RESULT_NO_AV1_ITEMS_FOUND: words = "no AV1 image in the file"; break;
    case AVIF_RESULT_DECODE_COLOR_FAILED: words = "the AV1 color data does not decode"; break;
    case AVIF_RESULT_DECODE_ALPHA_FAILED: words = "the AV1 alpha data does not decode"; break;
    case AVIF_RESULT_COLOR_ALPHA_SIZE_MISMATCH: words = "the color and alpha images differ in size"; break;
    case AVIF_RESULT_ISPE_SIZE_MISMATCH: words = "the image data does not match the declared size"; break;
    case AVIF_RESULT_INVALID_IMAGE_GRID: words = "invalid image grid"; break;
    case AVIF_RESULT_NO_IMAGES_REMAINING: words = "fewer frames than declared"; break;
    case AVIF_RESULT_NO_CODEC_AVAILABLE: words = "AVIF without an AV1 decoder in libavif"; break;
    case AVIF_RESULT_NOT_IMPLEMENTED: words = "an AVIF feature libavif does not implement"; break;
    case AVIF_RESULT_UNSUPPORTED_DEPTH: words = "AVIF bit depth"; break;
    case AVIF_RESULT_REFORMAT_FAILED: words = "AVIF color conversion (matrix coefficients)"; break;
    default: break;
    }
    if (result == AVIF_RESULT_NO_CODEC_AVAILABLE || result == AVIF_RESULT_NOT_IMPLEMENTED ||
        result == AVIF_RESULT_UNSUPPORTED_DEPTH || result == AVIF_RESULT_REFORMAT_FAILED) {
        status = IMGCODEC_UNSUPPORTED;
    }
    // libavif says "truncated" in the detail of several parse failures; its decode failures carry
    // only the name of an internal call, which tells a reader nothing.
    if (strstr(detail, "truncated") != NULL) {
        words = "truncated data";
        detail = "";
    }
    if (strstr(detail, "getNextImage") != NULL) detail = "";
    const char *prefix = status == IMGCODEC_UNSUPPORTED ? "unsupported: " : "invalid AVIF: ";
    if (detail[0] != '\0') imgcodec_fail(&decoder->failure, status, "%s%s: %s", prefix, words, detail);
    imgcodec_fail(&decoder->failure, status, "%s%s", prefix, words);
}

/// What libavif 0.11.1 allocates or searches per entry while parsing the container, counted
/// before avifDecoderParse, which caps none of it: every item ID named anywhere creates an item
/// (about 1.4 KiB) and is found by a linear search over the items, so n names cost n² steps (a
/// 240 KB file naming 60,000 items took 13 s); each ipma association copies a property (72
/// bytes, from 1 byte of file); each trak box costs about 3 KiB (a 1 MB file of empty traks: 400
/// MB); an iloc extent costs 16 bytes and takes no file bytes when offsets and lengths are 0 bits
/// wide (65535 per item); and an item in several extents is copied whole before it is decoded, so
/// grid cells whose extents overlap copy the file many times over.
typedef struct imgcodec_avif_census {
    uint64_t item_names;    // item IDs in pitm, iinf, iloc, ipma and iref (file level and tracks)
    uint64_t extents;       // iloc extents
    uint64_t merged_bytes;  // the lengths of the extents of items in more than one extent
    uint64_t associations;  // ipma property associations
    uint64_t properties;    // ipco property boxes
    uint64_t tracks;        // trak boxes
    uint64_t descriptions;  // stsd sample entries
    uint32_t av1_items;     // av01 items of the file-level meta: its grid cells, color and alpha
} imgcodec_avif_census;

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
    for (uint64_t i = 0; i < items && at < end; i++) {
        census->item_names++;
        at += id + (version >= 1 ? 2 : 0) + 2 + base_offset_size;  // item_ID, construction method, data ref, base
        uint64_t extents = imgcodec_avif_field(data, at, end, 2), bytes = 0;
        at += 2;
        census->extents += extents;
        if (index_size + offset_size + length_size == 0) continue;  // extents of no bytes: nothing to read
        for (uint64_t e = 0; e < extents && at <= end; e++) {
            at += index_size + offset_size;
            uint64_t length = imgcodec_avif_field(data, at, end, (int)length_size);
            bytes = imgcodec_avif_add(bytes, length);
            at += length_size;
        }
        if (extents > 1) census->merged_bytes = imgcodec_avif_add(census->merged_bytes, bytes);
    }
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
static void imgcodec_avif_census_file(imgcodec_avif_census *census, const unsigned char *data, size_t size) {
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
static void imgcodec_avif_check_census(imgcodec_decoder *decoder, const imgcodec_avif_census *census, size_t size) {
    static const char *const names[] = {"item references", "item extents", "property associations", "properties",
                                        "tracks", "sample descriptions"};
    static const uint32_t caps[] = {IMGCODEC_AVIF_MAX_ITEM_NAMES, IMGCODEC_AVIF_MAX_EXTENTS,
                                    IMGCODEC_AVIF_MAX_ASSOCIATIONS, IMGCODEC_AVIF_MAX_PROPERTIES,
                                    IMGCODEC_AVIF_MAX_TRACKS, IMGCODEC_AVIF_MAX_DESCRIPTIONS};
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

// Bytes of one dav1d picture: planes padded to 128-pixel multiples (dav1d's default allocator),
// 16-bit samples past 8 bits. In C beside the memory estimates.
static uint64_t imgcodec_avif_picture_bytes(uint32_t width, uint32_t height, uint32_t depth, avifPixelFormat format) {
    uint64_t w = ((uint64_t)width + 127) & ~(uint64_t)127, h = ((uint64_t)height + 127) & ~(uint64_t)127;
    uint64_t luma = w * h * (depth > 8 ? 2 : 1);
    switch (format) {
    case AVIF_PIXEL_FORMAT_YUV444: return luma * 3;
    case AVIF_PIXEL_FORMAT_YUV422: return luma * 2;
    case AVIF_PIXEL_FORMAT_YUV420: return luma * 3 / 2;
    default: return luma;
    }
}

// Maps irot/imir (applied after decoding, rotation first) to the EXIF orientation that asks for
// the same display transform; in C beside the header reader.
static int imgcodec_avif_orientation(const avifImage *image) {
    int angle = (image->transformFlags & AVIF_TRANSFORM_IROT) ? image->irot.angle & 3 : 0;
    int mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? image->imir.mode & 1 : -1;
    if (mirror == 1) {  // a left-right mirror is a top-bottom mirror after a half turn
        angle = (angle + 2) & 3;
        mirror = 0;
    }
    static const int turned[4] = {1, 8, 3, 6}, mirrored[4] = {4, 5, 2, 7};
    return mirror == 0 ? mirrored[angle] : turned[angle];
}

// Fills decoder->header from the parsed container (libavif's image holds everything but the
// planes after avifDecoderParse) and the census. In C beside the decoder's open.
static void imgcodec_avif_read_header(imgcodec_decoder *decoder, const imgcodec_avif_census *census, size_t file_size) {
    const avifDecoder *avif = ((imgcodec_avif_state *)decoder->state)->avif;
    const avifImage *image = avif->image;
    imgcodec_header *header = &decoder->header;
    int gray = image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400, alpha = avif->alphaPresent != 0;
    header->bit_depth = (int)image->depth;
    header->channels = (gray ? 1 : 3) + alpha;
    header->has_alpha = alpha;
    if (gray) {
        header->color = alpha ? IMGCODEC_COLOR_GRAY_ALPHA : IMGCODEC_COLOR_GRAY;
    } else if (image->matrixCoefficients == AVIF_MATRIX_COEFFICIENTS_IDENTITY) {  // GBR stored as is
        header->color = alpha ? IMGCODEC_COLOR_RGBA : IMGCODEC_COLOR_RGB;
    } else {
        header->color = IMGCODEC_COLOR_YCBCR;
    }
    header->frames = (uint32_t)avif->imageCount;
    header->orientation = imgcodec_avif_orientation(image);

    // Memory: the file when read from a descriptor; one dav1d context per AV1 decoder (one per
    // av01 item: grid cells, color and alpha); dav1d's pictures (a sequence may fill every
    // reference slot) and per-frame side data (measured at about half a byte a pixel; 5/8 here);
    // for a grid, the cells' pictures (each padded) plus the image libavif assembles from them.
    // PIXELS adds the RGB(A) conversion (gray is converted as RGB too, then keeps G).
    uint32_t width = image->width, height = image->height, depth = image->depth;
    uint32_t minimum = 1 + (uint32_t)alpha, instances = census->av1_items > minimum ? census->av1_items : minimum;
    uint64_t planes = imgcodec_avif_picture_bytes(width, height, depth, image->yuvFormat);
    if (alpha) planes += imgcodec_avif_picture_bytes(width, height, depth, AVIF_PIXEL_FORMAT_YUV400);
    uint64_t per_instance = IMGCODEC_AVIF_INSTANCE_MEMORY;
    if (avif->imageCount > 1) {
        planes *= IMGCODEC_AVIF_SEQUENCE_PICTURES;
        per_instance += IMGCODEC_AVIF_SEQUENCE_INSTANCE_MEMORY;
    }
    if (instances > minimum) planes *= 3;  // the cells' pictures, padded each, and the assembled image
    uint64_t pixels = (uint64_t)width * height, side_data = pixels * 5 / 8 * (1u + (uint64_t)alpha);
    uint64_t file = decoder->source.fd >= 0 ? file_size : 0;
    header->decode_memory = file + (uint64_t)instances * per_instance + planes + side_data;
    header->convert_memory = header->decode_memory + pixels * (3u + (uint64_t)alpha) * (depth > 8 ? 2 : 1);
}

// In C because libavif is a C library and failures longjmp after its calls return.
static void imgcodec_avif_open(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = calloc(1, sizeof *state);
    if (state == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    decoder->state = state;
    size_t size = 0;
    const unsigned char *data = imgcodec_source_load(&decoder->source, &decoder->failure, 0, &size);
    // libavif reports a file of another format as a malformed container at best: say so first.
    if (size == 0) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid AVIF: empty file");
    if (size >= 8 && memcmp(data + 4, "ftyp", 4) != 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid AVIF: not an AVIF file (it does not start with an ftyp box)");
    }
    imgcodec_avif_census census = {0};
    imgcodec_avif_census_file(&census, data, size);
    imgcodec_avif_check_census(decoder, &census, size);

    state->avif = avifDecoderCreate();
    if (state->avif == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    avifDecoder *avif = state->avif;
    avif->maxThreads = 1;
    avif->ignoreExif = AVIF_TRUE;  // MIAF: irot/imir give the orientation, an Exif one is to be ignored
    avif->ignoreXMP = AVIF_TRUE;
    // libavif's cap is kept when max_frames is 0: without one, a small sample table can claim
    // billions of samples (chunks × samples per chunk), each an allocated entry.
    if (decoder->limits.max_frames != 0) avif->imageCountLimit = decoder->limits.max_frames;
    avifResult result = avifDecoderSetIOMemory(avif, data, size);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(avif);
    if (result != AVIF_RESULT_OK) imgcodec_avif_fail(decoder, result);

    // Parsing allocates nothing in proportion to the image: the limits are checked here with the
    // container's size (ispe or tkhd), and then handed to dav1d, which checks each AV1 frame's own.
    decoder->header.width = avif->image->width;
    decoder->header.height = avif->image->height;
    imgcodec_check_limits(decoder);
    if (decoder->limits.max_pixels != 0 && decoder->limits.max_pixels < avif->imageSizeLimit) {
        avif->imageSizeLimit = (uint32_t)decoder->limits.max_pixels;
    }
    imgcodec_check_frame_total(decoder, (uint64_t)avif->imageCount, avif->image->width, avif->image->height);
    imgcodec_avif_read_header(decoder, &census, size);
}

// Decodes the next frame, counted against the frame limits first. In C because failures longjmp
// after libavif returns.
static void imgcodec_avif_next_frame(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    imgcodec_count_frame(decoder, decoder->header.width, decoder->header.height);
    avifResult result = avifDecoderNextImage(state->avif);
    if (result != AVIF_RESULT_OK) imgcodec_avif_fail(decoder, result);
    // libavif scales a frame to its declared size, so a mismatch here would be a libavif change.
    const avifImage *image = state->avif->image;
    if (image->width != decoder->header.width || image->height != decoder->header.height) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid AVIF: frame %d is %u\xC3\x97%u, not the declared %u\xC3\x97%u",
                      state->avif->imageIndex + 1, image->width, image->height, decoder->header.width,
                      decoder->header.height);
    }
}

// Converts the decoded first frame to the output layout with libavif's own YUV-to-RGB (the one
// avifdec uses, with bilinear chroma upsampling). Monochrome frames are converted the same way and
// keep G (R = G = B there; G is also right for the identity matrix): this applies the YUV range and
// the depth scaling exactly as for color. In C because failures longjmp after libavif returns.
static void imgcodec_avif_convert(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    const avifImage *image = state->avif->image;
    imgcodec_output *output = &decoder->output;
    int alpha = decoder->header.has_alpha, gray = image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400;
    size_t sample_bytes = image->depth > 8 ? 2 : 1, rgb_channels = alpha ? 4 : 3;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    // libavif scales a full-range sample v of depth d to (uint16_t)(0.5f + v / (float)(2^d - 1) * 65535.0f):
    // float rounding puts 10-bit 820 and seven 12-bit values one above exact rounding (avifdec does the same).
    rgb.depth = image->depth > 8 ? 16 : 8;
    rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BEST_QUALITY;
    rgb.rowBytes = (uint32_t)(image->width * rgb_channels * sample_bytes);  // width ≤ 32768: libavif's cap
    state->pixels = malloc((size_t)rgb.rowBytes * image->height);
    if (state->pixels == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    rgb.pixels = state->pixels;
    avifResult result = avifImageYUVToRGB(image, &rgb);
    if (result != AVIF_RESULT_OK) imgcodec_avif_fail(decoder, result);
    output->channels = (gray ? 1 : 3) + alpha;
    output->row_bytes = (size_t)image->width * (size_t)output->channels * sample_bytes;
    if (gray) {
        // In place: pixel i's gray (and alpha) samples land before RGB(A) pixel i's G, and after
        // everything pixels before i still need.
        size_t pixels = (size_t)image->width * image->height;
        for (size_t i = 0; i < pixels; i++) {
            unsigned char *to = state->pixels + i * (size_t)output->channels * sample_bytes;
            const unsigned char *from = state->pixels + i * rgb_channels * sample_bytes;
            memcpy(to, from + sample_bytes, sample_bytes);  // never overlapping: see above
            if (alpha) memcpy(to + sample_bytes, from + 3 * sample_bytes, sample_bytes);
        }
        unsigned char *smaller = realloc(state->pixels, output->row_bytes * image->height);
        if (smaller != NULL) state->pixels = smaller;
    }
}

// In C because decoding the first frame runs libavif and fails by longjmp after it returns.
static void imgcodec_avif_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    const imgcodec_header *header = &decoder->header;
    imgcodec_output *output = &decoder->output;
    output->width = header->width;
    output->height = header->height;
    output->bit_depth = header->bit_depth > 8 ? 16 : 8;
    output->channels = header->channels;
    output->row_bytes = (size_t)header->width * (size_t)header->channels * (size_t)(output->bit_depth / 8);
    imgcodec_avif_next_frame(decoder);
    // VERIFY needs no conversion: decoding the AV1 data is the check, and read_row is a no-op.
    if (mode == IMGCODEC_MODE_PIXELS) imgcodec_avif_convert(decoder);
}

// Copies one converted row; in VERIFY mode nothing was converted and the row is left as is.
static void imgcodec_avif_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    imgcodec_avif_state *state = decoder->state;
    if (state->pixels == NULL) return;
    memcpy(row, state->pixels + (size_t)decoder->rows_read * decoder->output.row_bytes, decoder->output.row_bytes);
}

// In C because later frames are decoded by libavif and failures longjmp after it returns.
static void imgcodec_avif_finish(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    free(state->pixels);  // the first frame is out; later frames are only verified
    state->pixels = NULL;
    while (state->avif->imageIndex + 1 < state->avif->imageCount) imgcodec_avif_next_frame(decoder);
}

// In C because it frees libavif state.
static void imgcodec_avif_destroy(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    if (state == NULL) return;
    if (state->avif != NULL) avifDecoderDestroy(state->avif);
    free(state->pixels);
    free(state);
    decoder->state = NULL;
}

const imgcodec_format_ops imgcodec_avif_ops = {
    .name = "AVIF",
    .open = imgcodec_avif_open,
    .start = imgcodec_avif_start,
    .read_row = imgcodec_avif_read_row,
    .finish = imgcodec_avif_finish,
    .destroy = imgcodec_avif_destroy,
};
