#include "internal.h"

// Placeholder until the BMP decoder lands: every BMP file is refused as unsupported.
static void imgcodec_bmp_open(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP is not decoded yet");
}

static void imgcodec_bmp_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)mode;
    (void)scale_num;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP is not decoded yet");
}

static void imgcodec_bmp_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    (void)row;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP is not decoded yet");
}

static void imgcodec_bmp_finish(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: BMP is not decoded yet");
}

static void imgcodec_bmp_destroy(imgcodec_decoder *decoder) {
    (void)decoder;
}

const imgcodec_format_ops imgcodec_bmp_ops = {
    .name = "BMP",
    .open = imgcodec_bmp_open,
    .start = imgcodec_bmp_start,
    .read_row = imgcodec_bmp_read_row,
    .finish = imgcodec_bmp_finish,
    .destroy = imgcodec_bmp_destroy,
};
