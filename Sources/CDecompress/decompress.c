#include "decompress.h"

#include <limits.h>
#include <snappy-c.h>
#include <stdio.h>
#include <zlib.h>
#include <zstd.h>

int CDecompress_snappy(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size,
                       char *error, size_t error_size) {
    size_t length = 0;
    if (snappy_uncompressed_length((const char *)input, input_size, &length) != SNAPPY_OK) {
        snprintf(error, error_size, "Snappy data without a valid length");
        return -1;
    }
    if (length != output_size) {
        snprintf(error, error_size, "Snappy data of %zu bytes where the page header says %zu", length, output_size);
        return -1;
    }
    size_t written = output_size;
    if (snappy_uncompress((const char *)input, input_size, (char *)output, &written) != SNAPPY_OK || written != output_size) {
        snprintf(error, error_size, "Snappy data that does not decompress");
        return -1;
    }
    return 0;
}

int CDecompress_zstd(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size,
                     char *error, size_t error_size) {
    size_t written = ZSTD_decompress(output, output_size, input, input_size);
    if (ZSTD_isError(written)) {
        snprintf(error, error_size, "Zstandard data that does not decompress (%s)", ZSTD_getErrorName(written));
        return -1;
    }
    if (written != output_size) {
        snprintf(error, error_size, "Zstandard data of %zu bytes where the page header says %zu", written, output_size);
        return -1;
    }
    return 0;
}

int CDecompress_gzip(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size,
                     char *error, size_t error_size) {
    if (input_size > UINT_MAX || output_size > UINT_MAX) {
        snprintf(error, error_size, "a gzip page over 4 GiB");
        return -1;
    }
    z_stream stream = {0};
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)input_size;
    stream.next_out = output;
    stream.avail_out = (uInt)output_size;
    // 15 + 32: a gzip or a zlib header, detected.
    if (inflateInit2(&stream, 15 + 32) != Z_OK) {
        snprintf(error, error_size, "zlib cannot start");
        return -1;
    }
    int status = inflate(&stream, Z_FINISH);
    size_t written = output_size - stream.avail_out;
    inflateEnd(&stream);
    if (status != Z_STREAM_END) {
        snprintf(error, error_size, "gzip data that does not decompress (%s)", status == Z_BUF_ERROR ? "longer than the page header says, or cut short" : "corrupt");
        return -1;
    }
    if (written != output_size) {
        snprintf(error, error_size, "gzip data of %zu bytes where the page header says %zu", written, output_size);
        return -1;
    }
    return 0;
}
