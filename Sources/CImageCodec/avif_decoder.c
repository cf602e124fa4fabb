#include "internal.h"

// Placeholder until the AVIF decoder lands: every AVIF file is refused as unsupported.
static void imgcodec_avif_open(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: AVIF is not decoded yet");
}

static void imgcodec_avif_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)mode;
    (void)scale_num;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: AVIF is not decoded yet");
}

static void imgcodec_avif_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    (void)row;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: AVIF is not decoded yet");
}

static void imgcodec_avif_finish(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: AVIF is not decoded yet");
}

static void imgcodec_avif_destroy(imgcodec_decoder *decoder) {
    (void)decoder;
}

const imgcodec_format_ops imgcodec_avif_ops = {
    .name = "AVIF",
    .open = imgcodec_avif_open,
    .start = imgcodec_avif_start,
    .read_row = imgcodec_avif_read_row,
    .finish = imgcodec_avif_finish,
    .destroy = imgcodec_avif_destroy,
};
