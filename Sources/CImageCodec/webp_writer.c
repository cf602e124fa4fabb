#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <webp/encode.h>
#include "internal.h"

typedef struct imgcodec_webp_output {
    int fd;
    int error;  // errno of a failed write; 0 while all is well
} imgcodec_webp_output;

// In C because libwebp calls it with each piece of the encoded file, as it is made: the pieces go
// straight to the descriptor, so the encoded file is never held whole. A failed write returns 0,
// which makes libwebp stop and free its state (a longjmp from here would leak it).
static int imgcodec_webp_write_piece(const uint8_t *data, size_t size, const WebPPicture *picture) {
    imgcodec_webp_output *output = (imgcodec_webp_output *)picture->custom_ptr;
    size_t done = 0;
    while (done < size) {
        ssize_t written = write(output->fd, data + done, size - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            output->error = written < 0 ? errno : EIO;
            return 0;
        }
        done += (size_t)written;
    }
    return 1;
}

static const char *imgcodec_webp_error(WebPEncodingError error) {
    switch (error) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY: return "out of memory";
    case VP8_ENC_ERROR_BAD_DIMENSION: return "the image is larger than WebP allows (16383 x 16383)";
    case VP8_ENC_ERROR_FILE_TOO_BIG: return "the file would be larger than WebP allows (4 GiB)";
    default: return "libwebp failed";
    }
}

// In C beside the other codecs: ImgFetchCore reaches libwebp only through CImageCodec.
int imgcodec_webp_write(int fd, const unsigned char *pixels, uint32_t width, uint32_t height, int channels,
                        int quality, char *message, size_t message_size) {
    if ((channels != 3 && channels != 4) || width == 0 || height == 0 || width > WEBP_MAX_DIMENSION
        || height > WEBP_MAX_DIMENSION) {
        snprintf(message, message_size, "cannot encode WebP: %d channels, %ux%u (WebP holds at most %dx%d)",
                 channels, width, height, WEBP_MAX_DIMENSION, WEBP_MAX_DIMENSION);
        return IMGCODEC_IO;
    }
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) {
        snprintf(message, message_size, "cannot encode WebP: libwebp version mismatch");
        return IMGCODEC_IO;
    }
    config.quality = (float)(quality < 1 ? 1 : quality > 100 ? 100 : quality);
    picture.width = (int)width;
    picture.height = (int)height;
    int stride = (int)width * channels;
    int imported = channels == 4 ? WebPPictureImportRGBA(&picture, pixels, stride)
                                 : WebPPictureImportRGB(&picture, pixels, stride);
    imgcodec_webp_output output = { fd, 0 };
    picture.writer = imgcodec_webp_write_piece;
    picture.custom_ptr = &output;
    int encoded = imported && WebPEncode(&config, &picture);
    WebPEncodingError error = picture.error_code;
    WebPPictureFree(&picture);
    if (encoded) return IMGCODEC_OK;
    if (!imported) {
        snprintf(message, message_size, "cannot encode WebP: out of memory");
    } else if (output.error != 0) {
        snprintf(message, message_size, "cannot write WebP: %s", strerror(output.error));
        if (output.error == ENOSPC || output.error == EDQUOT) return IMGCODEC_NO_SPACE;
    } else {
        snprintf(message, message_size, "cannot encode WebP: %s", imgcodec_webp_error(error));
    }
    return IMGCODEC_IO;
}
