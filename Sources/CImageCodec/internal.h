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

/// A buffered reader over a file descriptor, shared by the JPEG source manager and the PNG read callback.
typedef struct imgcodec_source {
    int fd;                  // -1: the whole file is in memory, at `buffer`
    unsigned char *buffer;   // owned (and freed) only when fd >= 0
    size_t memory_left;      // with fd -1: bytes the next fill hands out (all of them, once)
    size_t capacity;
    size_t position;
    size_t length;
} imgcodec_source;

#define IMGCODEC_SOURCE_CAPACITY 65536

// Refills the buffer; returns bytes read (0 at end of file). In C because it fails by longjmp.
size_t imgcodec_source_fill(imgcodec_source *source, imgcodec_failure *failure);

// Copies up to `count` bytes, refilling as needed; returns fewer only at end of file. In C because it fails by longjmp.
size_t imgcodec_source_read(imgcodec_source *source, imgcodec_failure *failure, unsigned char *out, size_t count);

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

struct imgcodec_decoder {
    imgcodec_failure failure;
    int format;
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
};

// Format-specific halves of the decoder entry points; called with the failure jump already set.
void imgcodec_jpeg_open(imgcodec_decoder *decoder);
void imgcodec_jpeg_start(imgcodec_decoder *decoder, int mode, int scale_num);
void imgcodec_jpeg_read_row(imgcodec_decoder *decoder, unsigned char *row);
void imgcodec_jpeg_finish(imgcodec_decoder *decoder);
void imgcodec_jpeg_destroy(imgcodec_decoder *decoder);
void imgcodec_png_open(imgcodec_decoder *decoder);
void imgcodec_png_start(imgcodec_decoder *decoder, int mode);
void imgcodec_png_read_row(imgcodec_decoder *decoder, unsigned char *row);
void imgcodec_png_finish(imgcodec_decoder *decoder);
void imgcodec_png_destroy(imgcodec_decoder *decoder);

// Fails with IMGCODEC_TOO_LARGE when the header exceeds the decoder's limits; in C beside the decoders.
void imgcodec_check_limits(imgcodec_decoder *decoder);

// Writes a 26-byte TIFF block whose IFD0 holds one Orientation tag; for the fixture encoders.
// In C beside the fixture encoders that embed it.
size_t imgcodec_fixture_exif(unsigned char out[26], int orientation, int little_endian);

#endif
