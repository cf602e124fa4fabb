#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <avif/avif.h>
#include "avif_internal.h"

/// Pictures dav1d may hold for an image sequence: its 8 reference slots and the frame being decoded.
#define IMGCODEC_AVIF_SEQUENCE_PICTURES 9u

/// What a dav1d context adds once it decodes inter frames (sequences), measured at about 1 MiB.
#define IMGCODEC_AVIF_SEQUENCE_INSTANCE_MEMORY (1u << 20)

/// libavif's decoder and what the PIXELS mode converts into.
typedef struct imgcodec_avif_state {
    avifDecoder *avif;
    unsigned char *pixels;  // the first frame in the output layout (PIXELS mode)
} imgcodec_avif_state;

// Turns a failed libavif call into a one-line message and fails by longjmp: only after libavif
// has returned, never from inside it.
__attribute__((noreturn))
static void imgcodec_avif_fail(imgcodec_decoder *decoder, avifResult result) {
    imgcodec_avif_state *state = decoder->state;
    const char *detail = state->avif != NULL ? state->avif->diag.error : "";
    // libavif refuses these from the container alone: its frame-count cap (set from max_frames) and
    // its own size cap (16384×16384 pixels, 32768 a side), past which it decodes nothing.
    if (strstr(detail, "imageCountLimit") != NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: more than %u frames",
                      state->avif->imageCountLimit);
    }
    if (strstr(detail, "too large") != NULL) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: over libavif's size limit (%s)",
                      detail);
    }
    if (result == AVIF_RESULT_OUT_OF_MEMORY) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    int status = IMGCODEC_INVALID;
    const char *words = avifResultToString(result);
    switch (result) {
    case AVIF_RESULT_TRUNCATED_DATA: words = "truncated data"; status = IMGCODEC_TRUNCATED; break;
    case AVIF_RESULT_IO_ERROR:
        words = "truncated data (an offset points past the end of the file)";
        status = IMGCODEC_TRUNCATED;
        break;
    case AVIF_RESULT_INVALID_FTYP: words = "not an AVIF file (no avif or avis brand in ftyp)"; break;
    case AVIF_RESULT_BMFF_PARSE_FAILED: words = "malformed container"; break;
    case AVIF_RESULT_NO_CONTENT: words = "no image in the file"; break;
    case AVIF_RESULT_NO_AV1_ITEMS_FOUND: words = "no AV1 image in the file"; break;
    case AVIF_RESULT_DECODE_COLOR_FAILED: words = "the AV1 color data does not decode"; break;
    case AVIF_RESULT_DECODE_ALPHA_FAILED: words = "the AV1 alpha data does not decode"; break;
    case AVIF_RESULT_COLOR_ALPHA_SIZE_MISMATCH: words = "the color and alpha images differ in size"; break;
    case AVIF_RESULT_ISPE_SIZE_MISMATCH: words = "the image data does not match the declared size"; break;
    case AVIF_RESULT_INVALID_IMAGE_GRID: words = "invalid image grid"; break;
    case AVIF_RESULT_NO_IMAGES_REMAINING: words = "fewer frames than declared"; break;
    case AVIF_RESULT_NO_CODEC_AVAILABLE: words = "AVIF without an AV1 decoder in libavif"; break;
    case AVIF_RESULT_NOT_IMPLEMENTED: words = "an AVIF feature libavif does not implement"; break;
    case AVIF_RESULT_UNSUPPORTED_DEPTH: words = "AVIF bit depth"; break;
    case AVIF_RESULT_REFORMAT_FAILED: words = "AVIF color conversion (matrix coefficients)"; break;
    default: break;
    }
    if (result == AVIF_RESULT_NO_CODEC_AVAILABLE || result == AVIF_RESULT_NOT_IMPLEMENTED ||
        result == AVIF_RESULT_UNSUPPORTED_DEPTH || result == AVIF_RESULT_REFORMAT_FAILED) {
        status = IMGCODEC_UNSUPPORTED;
    }
    // libavif says "truncated" in the detail of several parse failures; its decode failures carry
    // only the name of an internal call, which tells a reader nothing.
    if (strstr(detail, "truncated") != NULL) {
        words = "truncated data";
        status = IMGCODEC_TRUNCATED;
        detail = "";
    }
    if (strstr(detail, "getNextImage") != NULL) detail = "";
    const char *prefix = status == IMGCODEC_UNSUPPORTED ? "unsupported: " : "invalid AVIF: ";
    if (detail[0] != '\0') imgcodec_fail(&decoder->failure, status, "%s%s: %s", prefix, words, detail);
    imgcodec_fail(&decoder->failure, status, "%s%s", prefix, words);
}

// Bytes of one dav1d picture: planes padded to 128-pixel multiples (dav1d's default allocator),
// 16-bit samples past 8 bits. In C beside the memory estimates.
static uint64_t imgcodec_avif_picture_bytes(uint32_t width, uint32_t height, uint32_t depth, avifPixelFormat format) {
    uint64_t w = ((uint64_t)width + 127) & ~(uint64_t)127, h = ((uint64_t)height + 127) & ~(uint64_t)127;
    uint64_t luma = w * h * (depth > 8 ? 2 : 1);
    switch (format) {
    case AVIF_PIXEL_FORMAT_YUV444: return luma * 3;
    case AVIF_PIXEL_FORMAT_YUV422: return luma * 2;
    case AVIF_PIXEL_FORMAT_YUV420: return luma * 3 / 2;
    default: return luma;
    }
}

// Maps irot/imir (applied after decoding, rotation first) to the EXIF orientation that asks for
// the same display transform; in C beside the header reader.
static int imgcodec_avif_orientation(const avifImage *image) {
    int angle = (image->transformFlags & AVIF_TRANSFORM_IROT) ? image->irot.angle & 3 : 0;
    int mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? image->imir.mode & 1 : -1;
    if (mirror == 1) {  // a left-right mirror is a top-bottom mirror after a half turn
        angle = (angle + 2) & 3;
        mirror = 0;
    }
    static const int turned[4] = {1, 8, 3, 6}, mirrored[4] = {4, 5, 2, 7};
    return mirror == 0 ? mirrored[angle] : turned[angle];
}

// Fills decoder->header from the parsed container (libavif's image holds everything but the
// planes after avifDecoderParse) and the census. In C beside the decoder's open.
static void imgcodec_avif_read_header(imgcodec_decoder *decoder, const imgcodec_avif_census *census, size_t file_size) {
    const avifDecoder *avif = ((imgcodec_avif_state *)decoder->state)->avif;
    const avifImage *image = avif->image;
    imgcodec_header *header = &decoder->header;
    int gray = image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400, alpha = avif->alphaPresent != 0;
    header->bit_depth = (int)image->depth;
    header->channels = (gray ? 1 : 3) + alpha;
    header->has_alpha = alpha;
    if (gray) {
        header->color = alpha ? IMGCODEC_COLOR_GRAY_ALPHA : IMGCODEC_COLOR_GRAY;
    } else if (image->matrixCoefficients == AVIF_MATRIX_COEFFICIENTS_IDENTITY) {  // GBR stored as is
        header->color = alpha ? IMGCODEC_COLOR_RGBA : IMGCODEC_COLOR_RGB;
    } else {
        header->color = IMGCODEC_COLOR_YCBCR;
    }
    header->frames = (uint32_t)avif->imageCount;
    header->orientation = imgcodec_avif_orientation(image);

    // Memory: the file when read from a descriptor; one dav1d context per AV1 decoder (one per
    // av01 item: grid cells, color and alpha); dav1d's pictures (a sequence may fill every
    // reference slot) and per-frame side data (measured at about half a byte a pixel; 5/8 here);
    // for a grid, the cells' pictures (each padded) plus the image libavif assembles from them.
    // PIXELS adds the RGB(A) conversion (gray is converted as RGB too, then keeps G).
    uint32_t width = image->width, height = image->height, depth = image->depth;
    uint32_t minimum = 1 + (uint32_t)alpha, instances = census->av1_items > minimum ? census->av1_items : minimum;
    uint64_t planes = imgcodec_avif_picture_bytes(width, height, depth, image->yuvFormat);
    if (alpha) planes += imgcodec_avif_picture_bytes(width, height, depth, AVIF_PIXEL_FORMAT_YUV400);
    uint64_t per_instance = IMGCODEC_AVIF_INSTANCE_MEMORY;
    if (avif->imageCount > 1) {
        planes *= IMGCODEC_AVIF_SEQUENCE_PICTURES;
        per_instance += IMGCODEC_AVIF_SEQUENCE_INSTANCE_MEMORY;
    }
    if (instances > minimum) planes *= 3;  // the cells' pictures, padded each, and the assembled image
    uint64_t pixels = (uint64_t)width * height, side_data = pixels * 5 / 8 * (1u + (uint64_t)alpha);
    uint64_t file = decoder->source.fd >= 0 ? file_size : 0;
    header->decode_memory = file + (uint64_t)instances * per_instance + planes + side_data;
    header->convert_memory = header->decode_memory + pixels * (3u + (uint64_t)alpha) * (depth > 8 ? 2 : 1);
}

// In C because libavif is a C library and failures longjmp after its calls return.
static void imgcodec_avif_open(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = calloc(1, sizeof *state);
    if (state == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    decoder->state = state;
    size_t size = 0;
    const unsigned char *data = imgcodec_source_load(&decoder->source, &decoder->failure, 0, &size);
    // libavif reports a file of another format as a malformed container at best: say so first.
    if (size == 0) imgcodec_fail(&decoder->failure, IMGCODEC_INVALID, "invalid AVIF: empty file");
    if (size >= 8 && memcmp(data + 4, "ftyp", 4) != 0) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid AVIF: not an AVIF file (it does not start with an ftyp box)");
    }
    imgcodec_avif_census census = {0};
    imgcodec_avif_census_file(&census, data, size);
    imgcodec_avif_check_census(decoder, &census, size);

    state->avif = avifDecoderCreate();
    if (state->avif == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    avifDecoder *avif = state->avif;
    avif->maxThreads = 1;
    avif->ignoreExif = AVIF_TRUE;  // MIAF: irot/imir give the orientation, an Exif one is to be ignored
    avif->ignoreXMP = AVIF_TRUE;
    // libavif's cap is kept when max_frames is 0: without one, a small sample table can claim
    // billions of samples (chunks × samples per chunk), each an allocated entry.
    if (decoder->limits.max_frames != 0) avif->imageCountLimit = decoder->limits.max_frames;
    avifResult result = avifDecoderSetIOMemory(avif, data, size);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(avif);
    if (result != AVIF_RESULT_OK) imgcodec_avif_fail(decoder, result);

    // Parsing allocates nothing in proportion to the image: the limits are checked here with the
    // container's size (ispe or tkhd), and then handed to dav1d, which checks each AV1 frame's own.
    decoder->header.width = avif->image->width;
    decoder->header.height = avif->image->height;
    imgcodec_check_limits(decoder);
    if (decoder->limits.max_pixels != 0 && decoder->limits.max_pixels < avif->imageSizeLimit) {
        avif->imageSizeLimit = (uint32_t)decoder->limits.max_pixels;
    }
    imgcodec_check_frame_total(decoder, (uint64_t)avif->imageCount, avif->image->width, avif->image->height);
    imgcodec_avif_read_header(decoder, &census, size);
}

// Decodes the next frame, counted against the frame limits first. In C because failures longjmp
// after libavif returns.
static void imgcodec_avif_next_frame(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    imgcodec_count_frame(decoder, decoder->header.width, decoder->header.height);
    avifResult result = avifDecoderNextImage(state->avif);
    if (result != AVIF_RESULT_OK) imgcodec_avif_fail(decoder, result);
    // libavif scales a frame to its declared size, so a mismatch here would be a libavif change.
    const avifImage *image = state->avif->image;
    if (image->width != decoder->header.width || image->height != decoder->header.height) {
        imgcodec_fail(&decoder->failure, IMGCODEC_INVALID,
                      "invalid AVIF: frame %d is %u\xC3\x97%u, not the declared %u\xC3\x97%u",
                      state->avif->imageIndex + 1, image->width, image->height, decoder->header.width,
                      decoder->header.height);
    }
}

// Converts the decoded first frame to the output layout with libavif's own YUV-to-RGB (the one
// avifdec uses, with bilinear chroma upsampling). Monochrome frames are converted the same way and
// keep G (R = G = B there; G is also right for the identity matrix): this applies the YUV range and
// the depth scaling exactly as for color. In C because failures longjmp after libavif returns.
static void imgcodec_avif_convert(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    const avifImage *image = state->avif->image;
    imgcodec_output *output = &decoder->output;
    int alpha = decoder->header.has_alpha, gray = image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400;
    size_t sample_bytes = image->depth > 8 ? 2 : 1, rgb_channels = alpha ? 4 : 3;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    // libavif scales a full-range sample v of depth d to (uint16_t)(0.5f + v / (float)(2^d - 1) * 65535.0f):
    // float rounding puts 10-bit 820 and seven 12-bit values one above exact rounding (avifdec does the same).
    rgb.depth = image->depth > 8 ? 16 : 8;
    rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_BEST_QUALITY;
    rgb.rowBytes = (uint32_t)(image->width * rgb_channels * sample_bytes);  // width ≤ 32768: libavif's cap
    state->pixels = malloc((size_t)rgb.rowBytes * image->height);
    if (state->pixels == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
    rgb.pixels = state->pixels;
    avifResult result = avifImageYUVToRGB(image, &rgb);
    if (result != AVIF_RESULT_OK) imgcodec_avif_fail(decoder, result);
    output->channels = (gray ? 1 : 3) + alpha;
    output->row_bytes = (size_t)image->width * (size_t)output->channels * sample_bytes;
    if (gray) {
        // In place: pixel i's gray (and alpha) samples land before RGB(A) pixel i's G, and after
        // everything pixels before i still need.
        size_t pixels = (size_t)image->width * image->height;
        for (size_t i = 0; i < pixels; i++) {
            unsigned char *to = state->pixels + i * (size_t)output->channels * sample_bytes;
            const unsigned char *from = state->pixels + i * rgb_channels * sample_bytes;
            memcpy(to, from + sample_bytes, sample_bytes);  // never overlapping: see above
            if (alpha) memcpy(to + sample_bytes, from + 3 * sample_bytes, sample_bytes);
        }
        unsigned char *smaller = realloc(state->pixels, output->row_bytes * image->height);
        if (smaller != NULL) state->pixels = smaller;
    }
}

// In C because decoding the first frame runs libavif and fails by longjmp after it returns.
static void imgcodec_avif_start(imgcodec_decoder *decoder, int mode, int scale_num) {
    (void)scale_num;
    const imgcodec_header *header = &decoder->header;
    imgcodec_output *output = &decoder->output;
    output->width = header->width;
    output->height = header->height;
    output->bit_depth = header->bit_depth > 8 ? 16 : 8;
    output->channels = header->channels;
    output->row_bytes = (size_t)header->width * (size_t)header->channels * (size_t)(output->bit_depth / 8);
    imgcodec_avif_next_frame(decoder);
    // VERIFY needs no conversion: decoding the AV1 data is the check, and read_row is a no-op.
    if (mode == IMGCODEC_MODE_PIXELS) imgcodec_avif_convert(decoder);
}

// Copies one converted row; in VERIFY mode nothing was converted and the row is left as is.
static void imgcodec_avif_read_row(imgcodec_decoder *decoder, unsigned char *row) {
    imgcodec_avif_state *state = decoder->state;
    if (state->pixels == NULL) return;
    memcpy(row, state->pixels + (size_t)decoder->rows_read * decoder->output.row_bytes, decoder->output.row_bytes);
}

// In C because later frames are decoded by libavif and failures longjmp after it returns.
static void imgcodec_avif_finish(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    free(state->pixels);  // the first frame is out; later frames are only verified
    state->pixels = NULL;
    while (state->avif->imageIndex + 1 < state->avif->imageCount) imgcodec_avif_next_frame(decoder);
}

// In C because it frees libavif state.
static void imgcodec_avif_destroy(imgcodec_decoder *decoder) {
    imgcodec_avif_state *state = decoder->state;
    if (state == NULL) return;
    if (state->avif != NULL) avifDecoderDestroy(state->avif);
    free(state->pixels);
    free(state);
    decoder->state = NULL;
    // dav1d's context and pictures (about 1 MB for a web-sized image) are freed here among the rest
    // of the process's allocations, and imgfetch keeps up to 64 MiB of free heap for its big JPEG
    // decodes (CMallocTuning): over 500 AVIFs the fragments held 40 MiB more RSS than was in use.
    // Trimming hands the free pages back, within the bench's noise in CPU.
    malloc_trim(0);
}

const imgcodec_format_ops imgcodec_avif_ops = {
    .name = "AVIF",
    .open = imgcodec_avif_open,
    .start = imgcodec_avif_start,
    .read_row = imgcodec_avif_read_row,
    .finish = imgcodec_avif_finish,
    .destroy = imgcodec_avif_destroy,
};
