#include "internal.h"

// Placeholder until the GIF decoder lands: every GIF file is refused as unsupported.
static void imgcodec_gif_open(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: GIF is not decoded yet");
}

static void imgcodec_gif_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)mode;
    (void)scale_num;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: GIF is not decoded yet");
}

static void imgcodec_gif_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    (void)row;
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: GIF is not decoded yet");
}

static void imgcodec_gif_finish(imgcodec_decoder *decoder) {
    imgcodec_fail(&decoder->failure, IMGCODEC_UNSUPPORTED, "unsupported: GIF is not decoded yet");
}

static void imgcodec_gif_destroy(imgcodec_decoder *decoder) {
    (void)decoder;
}

const imgcodec_format_ops imgcodec_gif_ops = {
    .name = "GIF",
    .open = imgcodec_gif_open,
    .start = imgcodec_gif_start,
    .read_row = imgcodec_gif_read_row,
    .finish = imgcodec_gif_finish,
    .destroy = imgcodec_gif_destroy,
};
