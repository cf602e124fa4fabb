#ifndef IMGCODEC_INTERNAL_H
#define IMGCODEC_INTERNAL_H
// Shared by the CImageCodec sources; not part of the public header.

#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include "imgcodec.h"

/// Where an entry point's failure lands: each public function calls setjmp on `jump` first, and
/// every error path (ours or a library callback) fills `status`/`message` and longjmps back.
typedef struct imgcodec_failure {
    jmp_buf jump;
    int status;
    char message[IMGCODEC_MESSAGE_SIZE];
} imgcodec_failure;

// Records a failure and longjmps to the current entry point; in C because it longjmps.
__attribute__((noreturn, format(printf, 3, 4)))
void imgcodec_fail(imgcodec_failure *failure, int status, const char *format, ...);

// Copies a recorded failure to the caller's buffer and returns its status; in C beside imgcodec_fail.
int imgcodec_report(const imgcodec_failure *failure, char *message, size_t message_size);

// Writes all `count` bytes to `fd`, retrying after EINTR; a write error fails with
// "cannot write <format>: <reason>" by longjmp. Shared by the encoders.
void imgcodec_write_all(imgcodec_failure *failure, int fd, const unsigned char *data, size_t count, const char *format);

// The entry-point guard of an encoder (a struct with `failure` and `failed`): same jump-target
// discipline as the decoder's, see decoder.c.
#define IMGCODEC_WRITER_GUARD(writer, message, message_size)                    \
    do {                                                                        \
        if ((writer)->failed) return imgcodec_report(&(writer)->failure, message, message_size); \
        if (setjmp((writer)->failure.jump) != 0) {                              \
            (writer)->failed = 1;                                               \
            return imgcodec_report(&(writer)->failure, message, message_size);  \
        }                                                                       \
    } while (0)

/// A buffered reader over a file descriptor or a file in memory, shared by every format's input.
/// Sequential reads go through `buffer`; imgcodec_source_pread and imgcodec_source_load give the
/// random access and the whole-file view that libtiff, libwebp and libavif need.
typedef struct imgcodec_source {
    int fd;                  // -1: the whole file is in memory, at `memory`
    unsigned char *buffer;   // owned (and freed) only when fd >= 0
    size_t memory_left;      // with fd -1: bytes the next fill hands out (all of them, once)
    size_t capacity;
    size_t position;
    size_t length;
    const unsigned char *memory;  // with fd -1: the whole file (`memory_size` bytes)
    size_t memory_size;
    int64_t start;           // with fd >= 0: the file offset where the image starts (the fd's position at open)
    unsigned char *loaded;   // the whole file read by imgcodec_source_load (fd >= 0 only); owned
    size_t loaded_size;
} imgcodec_source;

#define IMGCODEC_SOURCE_CAPACITY 65536

// Refills the buffer; returns bytes read (0 at end of file). In C because it fails by longjmp.
size_t imgcodec_source_fill(imgcodec_source *source, imgcodec_failure *failure);

// Copies up to `count` bytes, refilling as needed; returns fewer only at end of file. In C because it fails by longjmp.
size_t imgcodec_source_read(imgcodec_source *source, imgcodec_failure *failure, unsigned char *out, size_t count);

// Bytes in the whole file (from the image's start). In C because it fails by longjmp.
uint64_t imgcodec_source_size(imgcodec_source *source, imgcodec_failure *failure);

// Reads up to `count` bytes at `offset` (from the image's start) without moving the sequential
// position; returns fewer only at end of file. In C because it fails by longjmp.
size_t imgcodec_source_pread(imgcodec_source *source, imgcodec_failure *failure, uint64_t offset,
                             unsigned char *out, size_t count);

// The whole file in memory: the caller's buffer for a memory source, else read once into a buffer
// the source owns (freed by imgcodec_source_release). Fails with IMGCODEC_TOO_LARGE past
// `max_size` bytes (0: no limit). In C because it fails by longjmp.
const unsigned char *imgcodec_source_load(imgcodec_source *source, imgcodec_failure *failure, uint64_t max_size,
                                          size_t *size);

// Frees what the source owns. In C beside the functions that allocate it.
void imgcodec_source_release(imgcodec_source *source);

// EXIF orientation (1...8) from a TIFF-structured Exif block, 1 when absent or malformed.
// In C because the decoders call it while reading headers.
int imgcodec_exif_orientation(const unsigned char *tiff, size_t length);

/// libjpeg state of a decoder.
typedef struct imgcodec_jpeg_state {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    int created;
    int cmyk;            // rows come out of libjpeg as CMYK and are converted here
    int inverted_cmyk;   // Adobe files store CMYK inverted
    unsigned char *cmyk_row;
    int exif_seen;       // the first APP1 Exif block was read: later ones are skipped
    unsigned char *exif; // that block while it is being read
} imgcodec_jpeg_state;

/// libpng state of a decoder.
typedef struct imgcodec_png_state {
    png_structp png;
    png_infop info;
    int user_limit_tripped;  // a "exceeds user limit" warning preceded the IHDR error
    int last_row;            // the next (or current) row read is the last one
    int finishing;           // the last row is inflated: IDAT data still coming in is surplus
    uint64_t surplus_idat;   // IDAT bytes read since then
    unsigned char *exif;     // the start of the first eXIf chunk, while the header is read
    size_t exif_length;
    int exif_done;           // the first eXIf chunk, or IDAT, has gone by
} imgcodec_png_state;

/// The most of a PNG eXIf chunk kept for the orientation: as much as a JPEG APP1 segment holds.
#define IMGCODEC_EXIF_MAX 65536

/// Most IDAT bytes read after the last row before the file counts as a zlib bomb. A well-formed
/// stream has only its last few bytes left (end-of-block code and Adler-32) once the rows are out.
#define IMGCODEC_PNG_SURPLUS_IDAT_MAX 16384

typedef struct imgcodec_decoder imgcodec_decoder;

/// One format's half of the decoder entry points, each called with the failure jump already set:
/// a format fails with imgcodec_fail (status and a one-line "invalid WebP: …" message), never by
/// returning. Whatever a format allocates hangs off `decoder->state` (or its embedded state)
/// before anything can fail, so that `destroy` frees it after a failure at any point.
typedef struct imgcodec_format_ops {
    const char *name;  // "JPEG", "WebP", …: for messages
    // Reads the header: fills decoder->header (width, height, channels, bit_depth, color,
    // has_alpha, frames, decode_memory, convert_memory) and calls imgcodec_check_limits before any
    // pixel memory is allocated.
    void (*open)(imgcodec_decoder *decoder);
    // Fills decoder->output for `mode` (IMGCODEC_MODE_*); `scale_num` (1...8) is JPEG's DCT scaling.
    void (*start)(imgcodec_decoder *decoder, int mode, int scale_num);
    // Fills one row of the first frame, top to bottom (PNG's interlaced passes aside).
    void (*read_row)(imgcodec_decoder *decoder, unsigned char *row);
    // After the last row: checks the trailer and decodes every later frame or page.
    void (*finish)(imgcodec_decoder *decoder);
    // Frees everything the format holds; called once, after success or failure at any point. May
    // be called when open failed early (state NULL).
    void (*destroy)(imgcodec_decoder *decoder);
} imgcodec_format_ops;

extern const imgcodec_format_ops imgcodec_jpeg_ops, imgcodec_png_ops, imgcodec_webp_ops, imgcodec_gif_ops,
    imgcodec_avif_ops, imgcodec_tiff_ops, imgcodec_bmp_ops;

struct imgcodec_decoder {
    imgcodec_failure failure;
    int format;
    const imgcodec_format_ops *ops;
    void *state;     // the state of WebP, GIF, AVIF, TIFF and BMP decoders (JPEG and PNG embed theirs below)
    int failed;      // a failure happened; later calls repeat it
    int started;
    int finished;
    imgcodec_limits limits;
    imgcodec_header header;
    imgcodec_output output;
    uint64_t rows_read;
    imgcodec_source source;
    imgcodec_jpeg_state jpeg;
    imgcodec_png_state png;
    uint32_t frames_seen;     // frames counted by imgcodec_count_frame
    uint64_t frame_pixels;    // their width × height, summed
};

// Fails with IMGCODEC_TOO_LARGE when the header exceeds the decoder's limits; in C beside the decoders.
void imgcodec_check_limits(imgcodec_decoder *decoder);

// Fails with IMGCODEC_CANCELLED once *limits.cancel is non-zero (longjmp); in C beside the failure machinery.
void imgcodec_check_cancel(imgcodec_decoder *decoder);

// Fails with IMGCODEC_TOO_LARGE when `width` × `height` is over the per-image limits (a frame of an
// animation or a page); in C beside imgcodec_check_limits.
void imgcodec_check_frame_size(imgcodec_decoder *decoder, uint32_t width, uint32_t height);

// Counts one more frame (or page) of `width` × `height` before it is decoded: fails with
// IMGCODEC_TOO_LARGE past limits.max_frames frames or limits.max_total_pixels pixels over all
// frames. Formats that know the count from the header check it there with
// imgcodec_check_frame_total first. In C because it fails by longjmp.
void imgcodec_count_frame(imgcodec_decoder *decoder, uint32_t width, uint32_t height);

// Fails with IMGCODEC_TOO_LARGE when `frames` frames of `width` × `height` are over the limits
// (for formats whose header announces the count). In C because it fails by longjmp.
void imgcodec_check_frame_total(imgcodec_decoder *decoder, uint64_t frames, uint32_t width, uint32_t height);

// Scales a sample of `bits` bits (1...16) to 8 bits, or to 16 bits, rounding to nearest.
static inline unsigned imgcodec_scale_to_8(unsigned value, unsigned bits) {
    unsigned max = (1u << bits) - 1;
    return (value * 255u + max / 2) / max;
}
static inline unsigned imgcodec_scale_to_16(unsigned value, unsigned bits) {
    unsigned max = (1u << bits) - 1;
    return (unsigned)(((uint64_t)value * 65535u + max / 2) / max);
}

// Writes a 26-byte TIFF block whose IFD0 holds one Orientation tag; for the fixture encoders.
// In C beside the fixture encoders that embed it.
size_t imgcodec_fixture_exif(unsigned char out[26], int orientation, int little_endian);

#endif
