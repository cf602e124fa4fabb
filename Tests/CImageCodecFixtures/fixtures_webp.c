#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include "internal.h"
#include "imgcodec_fixtures_webp.h"

/// Largest width or height of a VP8L bitstream (14-bit fields).
#define IMGCODEC_FIXTURE_VP8L_MAX 16384

/// Bytes a hand-built solid VP8L bitstream takes: 40 bits of header, 3 flags and five 11-bit codes.
#define IMGCODEC_FIXTURE_SOLID_BYTES 13

// In C beside the fixture encoders; reports a failure in the caller's buffer.
static int imgcodec_fixture_webp_error(int status, char *message, size_t message_size, const char *text) {
    snprintf(message, message_size, "%s", text);
    return status;
}

// In C because libwebp's output lives in its own allocator: copies it into a buffer that
// imgcodec_free releases.
static int imgcodec_fixture_webp_output(const uint8_t *bytes, size_t count, unsigned char **data, size_t *size,
                                        char *message, size_t message_size) {
    *data = malloc(count > 0 ? count : 1);
    if (*data == NULL) return imgcodec_fixture_webp_error(IMGCODEC_IO, message, message_size, "out of memory");
    memcpy(*data, bytes, count);
    *size = count;
    return IMGCODEC_OK;
}

// In C beside the encoders; fills a WebPConfig from the fixture options.
static int imgcodec_fixture_webp_config(WebPConfig *config, const imgcodec_test_webp_options *options) {
    if (!WebPConfigInit(config)) return 0;
    config->lossless = options->lossless ? 1 : 0;
    config->quality = (float)(options->quality < 0 ? 0 : options->quality > 100 ? 100 : options->quality);
    config->exact = options->exact ? 1 : 0;
    return WebPValidateConfig(config);
}

// In C beside the encoders; loads packed RGB or RGBA rows into a picture (ARGB for lossless, YUV
// for lossy, as cwebp does).
static int imgcodec_fixture_webp_picture(WebPPicture *picture, const unsigned char *pixels, uint32_t width,
                                         uint32_t height, const imgcodec_test_webp_options *options) {
    memset(picture, 0, sizeof *picture);  // WebPPictureFree must be safe even if the init below fails
    if (!WebPPictureInit(picture)) return 0;
    picture->width = (int)width;
    picture->height = (int)height;
    picture->use_argb = options->lossless ? 1 : 0;
    int stride = (int)width * (options->alpha ? 4 : 3);
    return options->alpha ? WebPPictureImportRGBA(picture, pixels, stride)
                          : WebPPictureImportRGB(picture, pixels, stride);
}

// In C beside imgcodec_test_encode_webp; adds an EXIF chunk holding `orientation` through WebPMux,
// which also turns the file into the VP8X container. Replaces *data on success.
static int imgcodec_fixture_webp_add_exif(unsigned char **data, size_t *size, int orientation,
                                          char *message, size_t message_size) {
    unsigned char exif[26];
    WebPData image = {*data, *size}, chunk = {exif, imgcodec_fixture_exif(exif, orientation, 0)}, assembled;
    WebPDataInit(&assembled);
    WebPMux *mux = WebPMuxCreate(&image, 0);
    int ok = mux != NULL && WebPMuxSetChunk(mux, "EXIF", &chunk, 0) == WEBP_MUX_OK &&
             WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    if (!ok) {
        WebPDataClear(&assembled);
        return imgcodec_fixture_webp_error(IMGCODEC_IO, message, message_size, "WebPMux failed to add EXIF");
    }
    unsigned char *old = *data;
    int status = imgcodec_fixture_webp_output(assembled.bytes, assembled.size, data, size, message, message_size);
    WebPDataClear(&assembled);
    if (status == IMGCODEC_OK) free(old);
    return status;
}

// In C so Swift makes one flat call instead of filling libwebp's config and picture structs.
int imgcodec_test_encode_webp(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_webp_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    WebPConfig config;
    if (!imgcodec_fixture_webp_config(&config, options)) {
        return imgcodec_fixture_webp_error(IMGCODEC_INVALID, message, message_size, "invalid WebP encoder options");
    }
    WebPPicture picture;
    if (!imgcodec_fixture_webp_picture(&picture, pixels, width, height, options)) {
        WebPPictureFree(&picture);
        return imgcodec_fixture_webp_error(IMGCODEC_IO, message, message_size, "cannot import the pixels");
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int ok = WebPEncode(&config, &picture);
    int error = picture.error_code;
    WebPPictureFree(&picture);
    int status = IMGCODEC_OK;
    if (!ok) {
        snprintf(message, message_size, "WebPEncode failed (error %d)", error);
        status = IMGCODEC_INVALID;
    } else {
        status = imgcodec_fixture_webp_output(writer.mem, writer.size, data, size, message, message_size);
    }
    WebPMemoryWriterClear(&writer);
    if (status == IMGCODEC_OK && options->orientation >= 1 && options->orientation <= 8) {
        status = imgcodec_fixture_webp_add_exif(data, size, options->orientation, message, message_size);
    }
    if (status != IMGCODEC_OK) {
        free(*data);
        *data = NULL;
        *size = 0;
    }
    return status;
}

// In C so Swift makes one flat call instead of driving WebPAnimEncoder.
int imgcodec_test_encode_webp_animation(const unsigned char *frames, uint32_t width, uint32_t height,
                                        uint32_t frame_count, const imgcodec_test_webp_options *options,
                                        unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    WebPConfig config;
    WebPAnimEncoderOptions encoder_options;
    if (!imgcodec_fixture_webp_config(&config, options) || !WebPAnimEncoderOptionsInit(&encoder_options)) {
        return imgcodec_fixture_webp_error(IMGCODEC_INVALID, message, message_size, "invalid WebP encoder options");
    }
    WebPAnimEncoder *encoder = WebPAnimEncoderNew((int)width, (int)height, &encoder_options);
    if (encoder == NULL) {
        return imgcodec_fixture_webp_error(IMGCODEC_IO, message, message_size, "WebPAnimEncoderNew failed");
    }
    size_t frame_bytes = (size_t)width * height * (options->alpha ? 4 : 3);
    int duration = options->duration_ms > 0 ? options->duration_ms : 100;
    int timestamp = 0, ok = 1;
    for (uint32_t i = 0; i < frame_count && ok; i++, timestamp += duration) {
        WebPPicture picture;
        ok = imgcodec_fixture_webp_picture(&picture, frames + frame_bytes * i, width, height, options) &&
             WebPAnimEncoderAdd(encoder, &picture, timestamp, &config);
        WebPPictureFree(&picture);
    }
    WebPData assembled;
    WebPDataInit(&assembled);
    ok = ok && WebPAnimEncoderAdd(encoder, NULL, timestamp, NULL) && WebPAnimEncoderAssemble(encoder, &assembled);
    int status;
    if (!ok) {
        const char *error = WebPAnimEncoderGetError(encoder);
        snprintf(message, message_size, "WebPAnimEncoder failed: %s", error != NULL ? error : "unknown error");
        status = IMGCODEC_INVALID;
    } else {
        status = imgcodec_fixture_webp_output(assembled.bytes, assembled.size, data, size, message, message_size);
    }
    WebPDataClear(&assembled);
    WebPAnimEncoderDelete(encoder);
    return status;
}

// In C beside the solid VP8L writer; appends `count` bits of `value`, least significant first, as
// VP8L's bit reader takes them.
static void imgcodec_fixture_put_bits(unsigned char *bytes, size_t *bit, uint32_t value, int count) {
    for (int i = 0; i < count; i++, (*bit)++) {
        if ((value >> i) & 1) bytes[*bit >> 3] |= (unsigned char)(1u << (*bit & 7));
    }
}

// In C beside the fixture builders. Writes a VP8L bitstream of one color into `out`
// (IMGCODEC_FIXTURE_SOLID_BYTES, zeroed by the caller) and returns its length: no transform, no
// color cache, no meta codes, and five "simple" Huffman codes of one 8-bit symbol each (green,
// red, blue, alpha, distance 0), which decode every pixel from zero bits.
static size_t imgcodec_fixture_solid_vp8l(unsigned char *out, uint32_t width, uint32_t height, uint32_t argb) {
    size_t bit = 0;
    imgcodec_fixture_put_bits(out, &bit, 0x2f, 8);             // VP8L signature
    imgcodec_fixture_put_bits(out, &bit, width - 1, 14);
    imgcodec_fixture_put_bits(out, &bit, height - 1, 14);
    imgcodec_fixture_put_bits(out, &bit, (argb >> 24) != 0xff, 1);  // alpha is used
    imgcodec_fixture_put_bits(out, &bit, 0, 3);                // version
    imgcodec_fixture_put_bits(out, &bit, 0, 1);                // no transform
    imgcodec_fixture_put_bits(out, &bit, 0, 1);                // no color cache
    imgcodec_fixture_put_bits(out, &bit, 0, 1);                // no meta Huffman image
    const uint32_t symbols[5] = {(argb >> 8) & 0xff, (argb >> 16) & 0xff, argb & 0xff, argb >> 24, 0};
    for (int i = 0; i < 5; i++) {
        imgcodec_fixture_put_bits(out, &bit, 1, 1);            // simple code
        imgcodec_fixture_put_bits(out, &bit, 0, 1);            // one symbol
        imgcodec_fixture_put_bits(out, &bit, 1, 1);            // stored in 8 bits
        imgcodec_fixture_put_bits(out, &bit, symbols[i], 8);
    }
    return (bit + 7) / 8;
}

// In C beside the fixture builders; stores a little-endian integer of `count` bytes.
static void imgcodec_fixture_le(unsigned char *p, uint32_t value, int count) {
    for (int i = 0; i < count; i++) p[i] = (unsigned char)(value >> (8 * i));
}

// In C beside the fixture builders; writes a chunk header and returns the bytes its payload takes
// once padded to an even length.
static size_t imgcodec_fixture_chunk(unsigned char *p, const char *fourcc, size_t payload) {
    memcpy(p, fourcc, 4);
    imgcodec_fixture_le(p + 4, (uint32_t)payload, 4);
    return 8 + payload + (payload & 1);
}

// In C beside imgcodec_test_build_webp_animation, which embeds the same bitstream.
int imgcodec_test_build_webp_solid(uint32_t width, uint32_t height, uint32_t argb,
                                   unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    if (width < 1 || height < 1 || width > IMGCODEC_FIXTURE_VP8L_MAX || height > IMGCODEC_FIXTURE_VP8L_MAX) {
        return imgcodec_fixture_webp_error(IMGCODEC_INVALID, message, message_size, "VP8L sizes are 1...16384");
    }
    unsigned char *out = calloc(1, 12 + 8 + IMGCODEC_FIXTURE_SOLID_BYTES + 1);
    if (out == NULL) return imgcodec_fixture_webp_error(IMGCODEC_IO, message, message_size, "out of memory");
    size_t length = imgcodec_fixture_solid_vp8l(out + 20, width, height, argb);
    size_t total = 12 + imgcodec_fixture_chunk(out + 12, "VP8L", length);
    memcpy(out, "RIFF", 4);
    imgcodec_fixture_le(out + 4, (uint32_t)(total - 8), 4);
    memcpy(out + 8, "WEBP", 4);
    *data = out;
    *size = total;
    return IMGCODEC_OK;
}

// In C beside imgcodec_test_build_webp_solid.
int imgcodec_test_build_webp_animation(const imgcodec_test_webp_animation_layout *layout,
                                       unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    const imgcodec_test_webp_animation_layout *l = layout;
    if (l->frame_width < 1 || l->frame_height < 1 || l->frame_width > IMGCODEC_FIXTURE_VP8L_MAX ||
        l->frame_height > IMGCODEC_FIXTURE_VP8L_MAX || l->canvas_width < 1 || l->canvas_height < 1 ||
        l->canvas_width > (1u << 24) || l->canvas_height > (1u << 24)) {
        return imgcodec_fixture_webp_error(IMGCODEC_INVALID, message, message_size,
                                           "frame or canvas size out of range");
    }
    unsigned char bitstream[IMGCODEC_FIXTURE_SOLID_BYTES] = {0};
    size_t length = imgcodec_fixture_solid_vp8l(bitstream, l->frame_width, l->frame_height, l->argb);
    size_t vp8l_chunk = 8 + length + (length & 1);
    size_t anmf_chunk = 8 + 16 + vp8l_chunk;
    uint64_t total = 12 + (8 + 10) + (8 + 6) + (uint64_t)anmf_chunk * l->frame_count;
    if (total - 8 > UINT32_MAX) {
        return imgcodec_fixture_webp_error(IMGCODEC_INVALID, message, message_size, "too many frames for a RIFF file");
    }
    unsigned char *out = calloc(1, (size_t)total);
    if (out == NULL) return imgcodec_fixture_webp_error(IMGCODEC_IO, message, message_size, "out of memory");
    memcpy(out, "RIFF", 4);
    imgcodec_fixture_le(out + 4, (uint32_t)(total - 8), 4);
    memcpy(out + 8, "WEBP", 4);
    unsigned char *p = out + 12;
    imgcodec_fixture_chunk(p, "VP8X", 10);
    p[8] = (l->argb >> 24) != 0xff ? 0x12 : 0x02;  // animation, and alpha when the frames have it
    imgcodec_fixture_le(p + 12, l->canvas_width - 1, 3);
    imgcodec_fixture_le(p + 15, l->canvas_height - 1, 3);
    p += 18;
    imgcodec_fixture_chunk(p, "ANIM", 6);  // background transparent black, loop forever
    p += 14;
    for (uint32_t i = 0; i < l->frame_count; i++, p += anmf_chunk) {
        imgcodec_fixture_chunk(p, "ANMF", 16 + vp8l_chunk);
        imgcodec_fixture_le(p + 8, l->frame_x / 2, 3);
        imgcodec_fixture_le(p + 11, l->frame_y / 2, 3);
        imgcodec_fixture_le(p + 14, l->frame_width - 1, 3);
        imgcodec_fixture_le(p + 17, l->frame_height - 1, 3);
        imgcodec_fixture_le(p + 20, 100, 3);  // duration in ms; flags byte 0: blend, no disposal
        imgcodec_fixture_chunk(p + 24, "VP8L", length);
        memcpy(p + 32, bitstream, length);
    }
    *data = out;
    *size = (size_t)total;
    return IMGCODEC_OK;
}
