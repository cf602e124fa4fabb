#include "internal.h"

// In C so the header readers can call it; reads a 16-bit value in the block's byte order.
static unsigned imgcodec_exif_u16(const unsigned char *p, int little_endian) {
    return little_endian ? (unsigned)(p[0] | p[1] << 8) : (unsigned)(p[0] << 8 | p[1]);
}

// In C so the header readers can call it; reads a 32-bit value in the block's byte order.
static uint32_t imgcodec_exif_u32(const unsigned char *p, int little_endian) {
    return little_endian
        ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
        : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

// In C because the JPEG and PNG decoders call it while reading headers. Only IFD0 is searched:
// that is where the Orientation tag (0x0112) lives. Every offset is bounds-checked.
int imgcodec_exif_orientation(const unsigned char *tiff, size_t length) {
    if (tiff == NULL || length < 8) return 1;
    int little_endian;
    if (tiff[0] == 'I' && tiff[1] == 'I') little_endian = 1;
    else if (tiff[0] == 'M' && tiff[1] == 'M') little_endian = 0;
    else return 1;
    if (imgcodec_exif_u16(tiff + 2, little_endian) != 42) return 1;
    uint32_t ifd = imgcodec_exif_u32(tiff + 4, little_endian);
    if (ifd < 8 || (uint64_t)ifd + 2 > length) return 1;
    unsigned entries = imgcodec_exif_u16(tiff + ifd, little_endian);
    for (unsigned i = 0; i < entries; i++) {
        uint64_t entry = (uint64_t)ifd + 2 + (uint64_t)i * 12;
        if (entry + 12 > length) return 1;
        const unsigned char *e = tiff + entry;
        if (imgcodec_exif_u16(e, little_endian) != 0x0112) continue;
        unsigned type = imgcodec_exif_u16(e + 2, little_endian);
        uint32_t count = imgcodec_exif_u32(e + 4, little_endian);
        if (type != 3 || count != 1) return 1;  // SHORT, one value, stored inline
        unsigned value = imgcodec_exif_u16(e + 8, little_endian);
        return value >= 1 && value <= 8 ? (int)value : 1;
    }
    return 1;
}
