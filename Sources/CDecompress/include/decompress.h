#ifndef CDECOMPRESS_H
#define CDECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

// Whole-buffer decompression of Parquet pages (parquet-format's Compression.md): the page header
// gives the uncompressed size, so each call fills exactly `output_size` bytes or fails. Each
// returns 0 on success, else a negative code and a message in `error` (at most `error_size` bytes).

/// Snappy's raw block format (no framing), through libsnappy's C API.
int CDecompress_snappy(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size,
                       char *error, size_t error_size);

/// A Zstandard frame, through libzstd.
int CDecompress_zstd(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size,
                     char *error, size_t error_size);

/// GZIP as Parquet means it, RFC 1952 (zlib's format is taken too), through zlib. In C because
/// `inflateInit2` is a macro.
int CDecompress_gzip(const uint8_t *input, size_t input_size, uint8_t *output, size_t output_size,
                     char *error, size_t error_size);

#endif
