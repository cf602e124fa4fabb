#include "internal.h"

// Placeholder until the WebP decoder lands: every WebP file is refused as unsupported.
static void imgcodec_webp_open(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: WebP is not decoded yet");
}

static void imgcodec_webp_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)mode;
    (void)scale_num;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: WebP is not decoded yet");
}

static void imgcodec_webp_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    (void)row;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: WebP is not decoded yet");
}

static void imgcodec_webp_finish(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: WebP is not decoded yet");
}

static void imgcodec_webp_destroy(imgcodec_decoder *decoder) {
    (void)decoder;
}

const imgcodec_format_ops imgcodec_webp_ops = {
    .name = "WebP",
    .open = imgcodec_webp_open,
    .start = imgcodec_webp_start,
    .read_row = imgcodec_webp_read_row,
    .finish = imgcodec_webp_finish,
    .destroy = imgcodec_webp_destroy,
};
