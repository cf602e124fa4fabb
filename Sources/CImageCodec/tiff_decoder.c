#include "internal.h"

// Placeholder until the TIFF decoder lands: every TIFF file is refused as unsupported.
static void imgcodec_tiff_open(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: TIFF is not decoded yet");
}

static void imgcodec_tiff_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)mode;
    (void)scale_num;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: TIFF is not decoded yet");
}

static void imgcodec_tiff_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    (void)row;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: TIFF is not decoded yet");
}

static void imgcodec_tiff_finish(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: TIFF is not decoded yet");
}

static void imgcodec_tiff_destroy(imgcodec_decoder *decoder) {
    (void)decoder;
}

const imgcodec_format_ops imgcodec_tiff_ops = {
    .name = "TIFF",
    .open = imgcodec_tiff_open,
    .start = imgcodec_tiff_start,
    .read_row = imgcodec_tiff_read_row,
    .finish = imgcodec_tiff_finish,
    .destroy = imgcodec_tiff_destroy,
};
