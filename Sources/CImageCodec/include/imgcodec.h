#ifndef IMGCODEC_H
#define IMGCODEC_H
// Streaming image decode (JPEG, PNG, WebP, GIF, AVIF, TIFF, BMP) and PNG encode for imgfetch.
// libjpeg and libpng report errors by longjmp (their defaults call exit() or abort()), and Swift
// cannot call setjmp, so every entry point here sets its own jump target and hands failures back
// as a one-line message in a caller-provided buffer. JPEG, PNG, TIFF and uncompressed BMP stream
// rows; WebP, AVIF, RLE BMP and interlaced GIF hold one frame, within the limits and the
// estimate the header reports (see imgcodec_header.decode_memory).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Formats the decoder understands.
enum {
    IMGCODEC_FORMAT_JPEG = 1,
    IMGCODEC_FORMAT_PNG = 2,
    IMGCODEC_FORMAT_WEBP = 3,
    IMGCODEC_FORMAT_GIF = 4,
    IMGCODEC_FORMAT_AVIF = 5,
    IMGCODEC_FORMAT_TIFF = 6,
    IMGCODEC_FORMAT_BMP = 7,
};

/// Return values: 0 is success; the others say which kind of failure the message describes.
enum {
    IMGCODEC_OK = 0,
    IMGCODEC_INVALID = 1,     // corrupt or malformed data: "invalid JPEG: …"
    IMGCODEC_TOO_LARGE = 2,   // refused by a limit before decoding: "image too large: …"
    IMGCODEC_UNSUPPORTED = 3, // valid but not decodable here: "unsupported: 12-bit JPEG"
    IMGCODEC_IO = 4,          // reading the input or writing the output failed
    IMGCODEC_NO_SPACE = 5,    // writing the output failed with ENOSPC or EDQUOT: the disk (or a quota) is full
    IMGCODEC_TRUNCATED = 6,   // the data ends before the image does: "invalid JPEG: Premature end of JPEG file"
    IMGCODEC_CANCELLED = 7,   // *limits.cancel turned non-zero: the decode stopped at its next row or scan
};

/// Color model of the stored image.
enum {
    IMGCODEC_COLOR_GRAY = 1,
    IMGCODEC_COLOR_GRAY_ALPHA = 2,
    IMGCODEC_COLOR_RGB = 3,
    IMGCODEC_COLOR_RGBA = 4,
    IMGCODEC_COLOR_PALETTE = 5,
    IMGCODEC_COLOR_YCBCR = 6,
    IMGCODEC_COLOR_CMYK = 7,
    IMGCODEC_COLOR_YCCK = 8,
    IMGCODEC_COLOR_OTHER = 9,
};

/// What `imgcodec_decoder_start` produces.
enum {
    IMGCODEC_MODE_VERIFY = 0,  // rows in whatever layout is cheapest; only errors matter
    IMGCODEC_MODE_PIXELS = 1,  // rows with the source's channels and depth: see imgcodec_output
};

/// Suggested size of message buffers; longer messages are truncated.
#define IMGCODEC_MESSAGE_SIZE 256

/// Limits checked from the header, before any pixel memory is allocated. 0 means no limit.
typedef struct imgcodec_limits {
    uint64_t max_pixels;
    uint32_t max_width;
    uint32_t max_height;
    uint32_t max_scans;
    uint64_t max_memory;  // cap on libjpeg's whole-image coefficient buffers (progressive and multi-scan JPEG)
    uint32_t max_frames;  // most frames an animation (GIF, WebP, AVIF sequence) or multi-page TIFF may have
    uint64_t max_total_pixels;  // most pixels decoded over all frames: the sum of each frame's width × height
    // Read (atomically) before each row and each chunk of JPEG input; non-zero stops the decode
    // (Ctrl-C): imgcodec_cancel sets it. NULL: never. The caller keeps it alive while the decoder lives.
    int *cancel;
} imgcodec_limits;

/// Facts from the header.
typedef struct imgcodec_header {
    uint32_t width;
    uint32_t height;
    int channels;      // stored channels: 1 gray, 2 gray+alpha, 3 color, 4 RGBA or CMYK; palette counts 3 (4 with tRNS)
    int bit_depth;     // bits per sample as stored (PNG palette: bits per index)
    int color;         // IMGCODEC_COLOR_*
    int progressive;   // progressive JPEG or Adam7-interlaced PNG
    int has_alpha;     // an alpha channel or tRNS
    int orientation;   // EXIF orientation 1...8 (1 when absent)
    uint32_t frames;   // frames the header announces (WebP and AVIF animations); 1 for a still image, 0 when
                       // only decoding counts them (GIF)
    uint64_t decode_memory;  // bytes the decoder itself will hold while verifying: libjpeg's whole-image
                             // coefficient buffers for progressive and multi-scan JPEG, a whole frame
                             // for WebP and AVIF, else a few rows. An estimate for scheduling
                             // concurrent decodes, not a limit.
    uint64_t convert_memory; // the same for IMGCODEC_MODE_PIXELS (at least decode_memory)
} imgcodec_header;

/// The rows `imgcodec_decoder_read_row` will deliver. In IMGCODEC_MODE_PIXELS a row holds `width`
/// pixels of `channels` samples: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA (alpha not premultiplied),
/// each sample 8 bits, or 16 bits in native byte order when `bit_depth` is 16. Channels and depth
/// are the source's: palettes become RGB (RGBA with transparency), samples below 8 bits are scaled
/// to 8, CMYK and YCbCr become RGB, and samples of 9 to 16 bits are scaled to 16.
typedef struct imgcodec_output {
    uint32_t width;
    uint32_t height;
    int channels;      // 1...4 in IMGCODEC_MODE_PIXELS
    int bit_depth;     // 8 or 16 in IMGCODEC_MODE_PIXELS
    size_t row_bytes;  // bytes each read_row call fills
    int passes;        // 7 for interlaced PNG: call read_row passes × height times (see imgcodec_png_row_in_pass)
} imgcodec_output;

typedef struct imgcodec_decoder imgcodec_decoder;

// In C because reading the header runs libjpeg/libpng, which report errors by longjmp.
// Reads the header from `fd` (from its current position) and checks `limits`. The caller keeps
// ownership of `fd` and must call imgcodec_decoder_close, also after a failure.
int imgcodec_decoder_open(int fd, int format, const imgcodec_limits *limits,
                          imgcodec_decoder **decoder, imgcodec_header *header,
                          char *message, size_t message_size);

// In C because reading the header runs libjpeg/libpng, which report errors by longjmp.
// As imgcodec_decoder_open, but reads the whole file from `data` (`size` bytes), which must stay
// valid and unchanged until imgcodec_decoder_close: a body already in memory is not read again.
int imgcodec_decoder_open_memory(const unsigned char *data, size_t size, int format, const imgcodec_limits *limits,
                                 imgcodec_decoder **decoder, imgcodec_header *header,
                                 char *message, size_t message_size);

// In C because starting decompression allocates and (for progressive JPEG) decodes every scan under longjmp.
// `scale_num` asks libjpeg for DCT scaling to scale_num/8 (1...8; PNG ignores it).
int imgcodec_decoder_start(imgcodec_decoder *decoder, int mode, int scale_num,
                           imgcodec_output *output, char *message, size_t message_size);

// In C because each row is decoded by libjpeg/libpng under longjmp. Fills output.row_bytes bytes.
// For interlaced PNG, `row` must hold that row's pixels from earlier passes (libpng fills only
// the current pass's pixels); rows outside the current pass are left untouched.
int imgcodec_decoder_read_row(imgcodec_decoder *decoder, unsigned char *row,
                              char *message, size_t message_size);

// In C because it reads the rest of the file (trailing markers, CRCs, IEND) under longjmp. For an
// animation or a multi-page file it also decodes every later frame: a file is valid only when all are.
int imgcodec_decoder_finish(imgcodec_decoder *decoder, char *message, size_t message_size);

// In C because it frees libjpeg/libpng state. Accepts NULL. Does not close the fd.
void imgcodec_decoder_close(imgcodec_decoder *decoder);

// In C so the rest of a verification (every row, every scan, trailer) runs without crossing into
// Swift per row. Runs on a decoder that imgcodec_decoder_open* made and that was not started; the
// caller still closes it.
int imgcodec_decoder_verify(imgcodec_decoder *decoder, char *message, size_t message_size);

// In C so a whole verification (header, every row, every scan, trailer) runs without crossing into Swift per row.
int imgcodec_verify(int fd, int format, const imgcodec_limits *limits, imgcodec_header *header,
                    char *message, size_t message_size);

// In C because png.h's PNG_ROW_IN_INTERLACE_PASS and PNG_PASS_COLS are macros Swift cannot import.
// Nonzero when libpng writes pixels of row `y` during Adam7 `pass` (0...6) of an image `width` wide.
int imgcodec_png_row_in_pass(uint32_t y, uint32_t width, int pass);

typedef struct imgcodec_png_writer imgcodec_png_writer;

// In C because libpng's writer reports errors by longjmp. Writes the signature and IHDR of a
// non-interlaced PNG to `fd` sequentially: gray, gray + alpha, RGB or RGBA (channels 1...4) at
// bit_depth 8 or 16. Rows are laid out as imgcodec_output describes (16-bit samples native-endian).
int imgcodec_png_writer_open(int fd, uint32_t width, uint32_t height, int channels, int bit_depth,
                             imgcodec_png_writer **writer, char *message, size_t message_size);

// In C because the writer's libpng state lives here. Trades size for speed, for previews: zlib
// level 1 and the Sub filter (a 256 px thumbnail of a noisy photo: about 4 ms instead of 30, and
// 20 % larger). Call after open, before the first row.
void imgcodec_png_writer_prefer_speed(imgcodec_png_writer *writer);

// In C because compressing a row runs libpng/zlib under longjmp.
int imgcodec_png_writer_write_row(imgcodec_png_writer *writer, const unsigned char *row,
                                  char *message, size_t message_size);

// In C because it writes IEND and flushes under longjmp. Fails if fewer rows than the height were written.
int imgcodec_png_writer_finish(imgcodec_png_writer *writer, char *message, size_t message_size);

// In C because it frees libpng state. Accepts NULL. Does not close the fd.
void imgcodec_png_writer_close(imgcodec_png_writer *writer);

typedef struct imgcodec_jpeg_writer imgcodec_jpeg_writer;

// In C because libjpeg's encoder reports errors by longjmp (its default calls exit()). Starts a
// baseline JPEG on `fd`, written sequentially: gray or RGB (channels 1 or 3) rows of 8-bit
// samples, at `quality` (1...100, 4:2:0 chroma), with optimized Huffman tables. For previews.
int imgcodec_jpeg_writer_open(int fd, uint32_t width, uint32_t height, int channels, int quality,
                              imgcodec_jpeg_writer **writer, char *message, size_t message_size);

// In C because compressing a row runs libjpeg under longjmp.
int imgcodec_jpeg_writer_write_row(imgcodec_jpeg_writer *writer, const unsigned char *row,
                                   char *message, size_t message_size);

// In C because it writes the last data and EOI under longjmp. Fails if fewer rows than the height were written.
int imgcodec_jpeg_writer_finish(imgcodec_jpeg_writer *writer, char *message, size_t message_size);

// In C because it frees libjpeg state. Accepts NULL. Does not close the fd.
void imgcodec_jpeg_writer_close(imgcodec_jpeg_writer *writer);

// In C beside the other codecs (libwebp has no row-by-row encoder): encodes a whole image of RGB
// or RGBA (channels 3 or 4) 8-bit pixels, rows of width × channels bytes, as a lossy WebP at
// `quality` (1...100, libwebp's default method 4; alpha kept), written to `fd` as it is made.
int imgcodec_webp_write(int fd, const unsigned char *pixels, uint32_t width, uint32_t height, int channels,
                        int quality, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

/// Sets the flag a decoder's limits point to (`cancel`): decodes that read it stop at their next
/// row or chunk of input with IMGCODEC_CANCELLED. Safe from any thread.
void imgcodec_cancel(int *flag);

#endif
