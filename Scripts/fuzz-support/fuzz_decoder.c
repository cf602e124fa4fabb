// libFuzzer entry point for imgfetch's codec (Sources/CImageCodec). Each input goes through the
// same C entry points the Swift code calls: imgcodec_verify, then a pixel decode row by row whose
// rows are re-encoded by the PNG writer, and the Exif parser gets the raw bytes as a TIFF block.
// The input is sniffed like the decode stage does (by its magic bytes); anything else is tried as
// every format.
// Besides crashes, sanitizer reports and leaks, a broken contract aborts, so that libFuzzer keeps
// the input: a failure without a one-line message, verify and decode disagreeing, an impossible header.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "imgcodec.h"
#include "internal.h"
#include "sniff.h"

// Limits small enough that no input can spend long on one image, as DecodeLimits would be set for bulk decoding.
static const imgcodec_limits fuzz_limits = {
    .max_pixels = 1u << 22, .max_width = 1u << 16, .max_height = 1u << 16, .max_scans = 500, .max_memory = 256u << 20,
    .max_frames = 1000, .max_total_pixels = 1u << 24,
};

// In C because libFuzzer calls it once per input: a broken contract must crash so that the input is kept.
static void fuzz_require(int condition, const char *what, const char *message) {
    if (condition) return;
    fprintf(stderr, "fuzz_decoder: contract broken: %s (message \"%s\")\n", what, message);
    abort();
}

// In C beside the entry point: one anonymous in-memory file, reused for every input.
static int fuzz_memory_file(const char *name) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        FILE *file = tmpfile();
        if (file == NULL) abort();
        fd = dup(fileno(file));
        fclose(file);
    }
    return fd;
}

// In C beside the entry point: replaces the input file's contents with the fuzzer's bytes.
static void fuzz_load(int fd, const uint8_t *data, size_t size) {
    if (ftruncate(fd, 0) != 0) abort();
    for (size_t done = 0; done < size;) {
        ssize_t written = pwrite(fd, data + done, size - done, (off_t)done);
        if (written <= 0) abort();
        done += (size_t)written;
    }
}

// In C beside the decoders: the checks every returned status and message must pass.
static void fuzz_check_status(int status, const char *message) {
    fuzz_require(status >= IMGCODEC_OK && status <= IMGCODEC_IO, "known status", message);
    if (status == IMGCODEC_OK) return;
    size_t length = strnlen(message, IMGCODEC_MESSAGE_SIZE);
    fuzz_require(length > 0 && length < IMGCODEC_MESSAGE_SIZE, "a terminated, non-empty message", message);
    fuzz_require(strchr(message, '\n') == NULL && strchr(message, '\r') == NULL, "a one-line message", message);
}

// In C because it drives the codec's C API: header, rows (re-encoded as PNG), trailer. Returns the status.
static int fuzz_decode_pixels(int fd, int output, int format, int scale_num, imgcodec_header *header) {
    char message[IMGCODEC_MESSAGE_SIZE] = "";
    imgcodec_decoder *decoder = NULL;
    imgcodec_png_writer *writer = NULL;
    unsigned char *row = NULL;
    lseek(fd, 0, SEEK_SET);
    int status = imgcodec_decoder_open(fd, format, &fuzz_limits, &decoder, header, message, sizeof message);
    imgcodec_output out = {0};
    if (status == IMGCODEC_OK) status = imgcodec_decoder_start(decoder, IMGCODEC_MODE_PIXELS, scale_num, &out, message, sizeof message);
    if (status == IMGCODEC_OK) {
        fuzz_require(out.channels >= 1 && out.channels <= 4, "1 to 4 channels", message);
        fuzz_require(out.bit_depth == 8 || out.bit_depth == 16, "8- or 16-bit samples", message);
        fuzz_require(out.row_bytes == (size_t)out.width * (size_t)out.channels * (size_t)(out.bit_depth / 8), "packed rows", message);
        row = calloc(out.row_bytes > 0 ? out.row_bytes : 1, 1);
        if (row == NULL) abort();
        if (out.passes == 1 && ftruncate(output, 0) == 0 && lseek(output, 0, SEEK_SET) == 0) {
            char ignored[IMGCODEC_MESSAGE_SIZE];
            if (imgcodec_png_writer_open(output, out.width, out.height, out.channels, out.bit_depth, &writer, ignored,
                                         sizeof ignored) != IMGCODEC_OK) {
                imgcodec_png_writer_close(writer);
                writer = NULL;
            }
        }
    }
    uint64_t rows = status == IMGCODEC_OK ? (uint64_t)out.height * (uint64_t)out.passes : 0;
    for (uint64_t i = 0; i < rows && status == IMGCODEC_OK; i++) {
        status = imgcodec_decoder_read_row(decoder, row, message, sizeof message);
        if (status == IMGCODEC_OK && writer != NULL) {
            char ignored[IMGCODEC_MESSAGE_SIZE];
            fuzz_require(imgcodec_png_writer_write_row(writer, row, ignored, sizeof ignored) == IMGCODEC_OK, "PNG writer takes every row", ignored);
        }
    }
    if (status == IMGCODEC_OK) status = imgcodec_decoder_finish(decoder, message, sizeof message);
    if (status == IMGCODEC_OK && writer != NULL) {
        fuzz_require(imgcodec_png_writer_finish(writer, message, sizeof message) == IMGCODEC_OK, "PNG writer finishes", message);
    }
    fuzz_check_status(status, message);
    imgcodec_png_writer_close(writer);
    imgcodec_decoder_close(decoder);
    free(row);
    return status;
}

// In C because it compares the two ways of decoding one input.
static void fuzz_decode(int fd, int output, int format, int scale_num) {
    char message[IMGCODEC_MESSAGE_SIZE] = "";
    imgcodec_header verified = {0}, decoded = {0};
    lseek(fd, 0, SEEK_SET);
    int status = imgcodec_verify(fd, format, &fuzz_limits, &verified, message, sizeof message);
    fuzz_check_status(status, message);
    if (status == IMGCODEC_OK) {
        fuzz_require(verified.width > 0 && verified.height > 0, "a non-empty image", message);
        fuzz_require((uint64_t)verified.width * verified.height <= fuzz_limits.max_pixels, "within the limits", message);
        fuzz_require(verified.orientation >= 1 && verified.orientation <= 8, "orientation 1...8", message);
    }
    int pixels = fuzz_decode_pixels(fd, output, format, scale_num, &decoded);
    // DCT scaling takes other paths through libjpeg; unscaled, verifying and decoding must agree,
    // except for images a library reads but cannot convert (TIFF's float samples, AVIF's unusual
    // matrix coefficients), which verify and fail only a pixel decode, as unsupported.
    int unconvertible = pixels == IMGCODEC_UNSUPPORTED;
    if (scale_num == 8 && !unconvertible) {
        fuzz_require((status == IMGCODEC_OK) == (pixels == IMGCODEC_OK), "verify and decode agree", message);
    }
    if (status == IMGCODEC_OK && pixels == IMGCODEC_OK) {
        fuzz_require(verified.width == decoded.width && verified.height == decoded.height &&
                     verified.orientation == decoded.orientation, "verify and decode read one header", message);
    }
}
// In C because libFuzzer calls it.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int input = -1, output = -1;
    if (input < 0) input = fuzz_memory_file("fuzz-input");
    if (output < 0) output = fuzz_memory_file("fuzz-output");
    int orientation = imgcodec_exif_orientation(data, size);
    fuzz_require(orientation >= 1 && orientation <= 8, "Exif orientation 1...8", "");
    fuzz_load(input, data, size);
    // A quarter of the inputs are decoded DCT-scaled (JPEG), chosen by size so that a rerun repeats it.
    int scale_num = size % 4 == 0 ? (int)(size / 4 % 8) + 1 : 8;
    int format = imgcodec_tools_sniff(data, size);
    if (format != 0) {
        fuzz_decode(input, output, format, scale_num);
    } else {
        for (format = IMGCODEC_FORMAT_JPEG; format <= IMGCODEC_FORMAT_BMP; format++) fuzz_decode(input, output, format, scale_num);
    }
    return 0;
}
