#ifndef IMGCODEC_AVIF_INTERNAL_H
#define IMGCODEC_AVIF_INTERNAL_H
// Shared by the AVIF decoder's sources (avif_decoder.c, avif_container.c); not part of the public header.

#include "internal.h"

/// Bytes one AV1 decoder instance holds besides its pictures: a dav1d 1.0 context with one thread
/// and one frame in flight, as measured through libavif 0.11.1 (about 420 KiB). libavif opens one
/// per grid cell and keeps them all until the end, so a grid of many small cells costs this much
/// per cell whatever the cells' size.
#define IMGCODEC_AVIF_INSTANCE_MEMORY (448u << 10)

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
    int iloc_overruns;      // an iloc box declares more items or extents than its bytes hold
} imgcodec_avif_census;

// avif_container.c: the census of the container, taken before libavif parses it.

// Takes the census of a whole file: the top-level meta box, and each track's meta box and sample descriptions.
void imgcodec_avif_census_file(imgcodec_avif_census *census, const unsigned char *data, size_t size);
// Refuses a container over the census caps or needing more decoder state than max_memory; fails by longjmp.
void imgcodec_avif_check_census(imgcodec_decoder *decoder, const imgcodec_avif_census *census, size_t size);

#endif
