#ifndef IMGCODEC_TOOLS_SNIFF_H
#define IMGCODEC_TOOLS_SNIFF_H
// The codec format a file's magic bytes name, as ImageSniffer tells them apart; 0 for none. Shared
// by the fuzz harness and the bench's decode-limit program, which pick a decoder the way the
// decode stage does. Needs imgcodec.h first.

#include <stddef.h>
#include <stdint.h>
#include <string.h>

// In C because both C tools call it; static inline, so each gets its own copy and no link symbol.
static inline int imgcodec_tools_sniff(const uint8_t *data, size_t size) {
    if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8) return IMGCODEC_FORMAT_JPEG;
    if (size >= 4 && memcmp(data, "\x89PNG", 4) == 0) return IMGCODEC_FORMAT_PNG;
    if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0) return IMGCODEC_FORMAT_WEBP;
    if (size >= 6 && (memcmp(data, "GIF87a", 6) == 0 || memcmp(data, "GIF89a", 6) == 0)) return IMGCODEC_FORMAT_GIF;
    if (size >= 12 && memcmp(data + 4, "ftyp", 4) == 0 && (memcmp(data + 8, "avif", 4) == 0 || memcmp(data + 8, "avis", 4) == 0)) {
        return IMGCODEC_FORMAT_AVIF;
    }
    if (size >= 4 && (memcmp(data, "II*\0", 4) == 0 || memcmp(data, "MM\0*", 4) == 0)) return IMGCODEC_FORMAT_TIFF;
    if (size >= 2 && memcmp(data, "BM", 2) == 0) return IMGCODEC_FORMAT_BMP;
    return 0;
}

#endif
