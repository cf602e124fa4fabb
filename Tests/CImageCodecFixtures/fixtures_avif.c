#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <avif/avif.h>
#include "imgcodec.h"
#include "imgcodec_fixtures.h"
#include "imgcodec_fixtures_avif.h"
#include "fixtures_avif_internal.h"

/// What one fixture call owns, freed on every exit path.
typedef struct imgcodec_fixture_avif {
    avifEncoder *encoder;
    avifImage **images;       // one per frame or grid cell (grid cells are views into images[count])
    size_t image_count;
    unsigned char *expanded;  // gray input widened to RGB(A) for the color formats
    avifRWData output;
} imgcodec_fixture_avif;

// In C beside the fixture encoders; formats a failure into the caller's buffer and returns `status`.
__attribute__((format(printf, 4, 5)))
static int imgcodec_fixture_avif_fail(int status, char *message, size_t message_size, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    if (message != NULL && message_size > 0) vsnprintf(message, message_size, format, arguments);
    va_end(arguments);
    return status;
}

// In C beside the encoder; frees what imgcodec_fixture_avif holds.
static void imgcodec_fixture_avif_release(imgcodec_fixture_avif *fixture) {
    if (fixture->encoder != NULL) avifEncoderDestroy(fixture->encoder);
    for (size_t i = 0; i < fixture->image_count; i++) {
        if (fixture->images[i] != NULL) avifImageDestroy(fixture->images[i]);
    }
    free(fixture->images);
    free(fixture->expanded);
    avifRWDataFree(&fixture->output);
}

// In C beside the encoder: sets irot/imir equal to an EXIF orientation (libavif's exif.c mapping, inverted).
static void imgcodec_fixture_avif_orient(avifImage *image, int orientation) {
    static const int angle[9] = {0, 0, 0, 2, 0, 1, 3, 3, 1};   // irot angle, anticlockwise quarter turns
    static const int mirror[9] = {-1, -1, 1, -1, 0, 0, -1, 0, -1};  // imir mode, -1 for none
    if (orientation < 2 || orientation > 8) return;
    if (angle[orientation] != 0) {
        image->transformFlags |= AVIF_TRANSFORM_IROT;
        image->irot.angle = (uint8_t)angle[orientation];
    }
    if (mirror[orientation] >= 0) {
        image->transformFlags |= AVIF_TRANSFORM_IMIR;
        image->imir.mode = (uint8_t)mirror[orientation];
    }
}

// In C beside the encoder: fills `image`'s planes from one frame of packed samples.
static avifResult imgcodec_fixture_avif_fill(imgcodec_fixture_avif *fixture, avifImage *image,
                                             const unsigned char *pixels, const imgcodec_test_avif_options *options) {
    int gray = options->channels <= 2, alpha = options->channels == 2 || options->channels == 4;
    size_t sample_bytes = options->bit_depth > 8 ? 2 : 1;
    size_t count = (size_t)image->width * image->height;
    if (gray && image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400) {
        // Gray goes to Y (and alpha to A) as is: no color conversion, so lossless means exact.
        avifResult result = avifImageAllocatePlanes(image, alpha ? AVIF_PLANES_ALL : AVIF_PLANES_YUV);
        if (result != AVIF_RESULT_OK) return result;
        for (uint32_t y = 0; y < image->height; y++) {
            for (uint32_t x = 0; x < image->width; x++) {
                size_t i = ((size_t)y * image->width + x) * (size_t)options->channels;
                for (int c = 0; c < (alpha ? 2 : 1); c++) {
                    unsigned v = sample_bytes == 2 ? ((const uint16_t *)pixels)[i + c] : pixels[i + c];
                    if (c == 0 && options->limited_range) v = (unsigned)avifFullToLimitedY((int)image->depth, (int)v);
                    uint8_t *row = c == 0 ? image->yuvPlanes[AVIF_CHAN_Y] + (size_t)y * image->yuvRowBytes[AVIF_CHAN_Y]
                                          : image->alphaPlane + (size_t)y * image->alphaRowBytes;
                    if (sample_bytes == 2) ((uint16_t *)row)[x] = (uint16_t)v;
                    else row[x] = (uint8_t)v;
                }
            }
        }
        return AVIF_RESULT_OK;
    }
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.depth = (uint32_t)options->bit_depth;
    rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    int rgb_channels = alpha ? 4 : 3;
    rgb.rowBytes = (uint32_t)((size_t)image->width * (size_t)rgb_channels * sample_bytes);
    if (gray) {
        // Gray into a color format: R = G = B.
        if (fixture->expanded == NULL) fixture->expanded = malloc(count * (size_t)rgb_channels * sample_bytes);
        if (fixture->expanded == NULL) return AVIF_RESULT_OUT_OF_MEMORY;
        for (size_t i = 0; i < count; i++) {
            for (int c = 0; c < rgb_channels; c++) {
                size_t from = i * (size_t)options->channels + (c == 3 ? 1 : 0);
                size_t to = i * (size_t)rgb_channels + (size_t)c;
                if (sample_bytes == 2) ((uint16_t *)fixture->expanded)[to] = ((const uint16_t *)pixels)[from];
                else fixture->expanded[to] = pixels[from];
            }
        }
        rgb.pixels = fixture->expanded;
    } else {
        rgb.pixels = (uint8_t *)(uintptr_t)pixels;  // only read by avifImageRGBToYUV
    }
    return avifImageRGBToYUV(image, &rgb);
}

// In C because libavif is a C library.
int imgcodec_test_encode_avif(const unsigned char *pixels, uint32_t width, uint32_t height,
                              const imgcodec_test_avif_options *options,
                              unsigned char **data, size_t *size, char *message, size_t message_size) {
    static const avifPixelFormat formats[] = {AVIF_PIXEL_FORMAT_YUV444, AVIF_PIXEL_FORMAT_YUV422,
                                              AVIF_PIXEL_FORMAT_YUV420, AVIF_PIXEL_FORMAT_YUV400};
    *data = NULL;
    *size = 0;
    int depth = options->bit_depth;
    if (options->channels < 1 || options->channels > 4 || options->yuv_format < 0 || options->yuv_format > 3 ||
        (depth != 8 && depth != 10 && depth != 12) || width == 0 || height == 0) {
        return imgcodec_fixture_avif_fail(IMGCODEC_INVALID, message, message_size, "bad AVIF fixture options");
    }
    int frames = options->frames > 1 ? options->frames : 1;
    int same_pixels = options->same_pixels || frames == 1;
    if (options->claimed_frames > 0 && frames < 2) frames = 2;  // only a sequence has a sample table
    int columns = options->grid_columns > 0 ? options->grid_columns : 1;
    int rows = options->grid_rows > 0 ? options->grid_rows : 1;
    int grid = columns * rows > 1;
    if (grid && (frames > 1 || width % (uint32_t)columns != 0 || height % (uint32_t)rows != 0)) {
        return imgcodec_fixture_avif_fail(IMGCODEC_INVALID, message, message_size, "bad AVIF fixture grid");
    }
    size_t frame_bytes = (size_t)width * height * (size_t)options->channels * (options->bit_depth > 8 ? 2 : 1);
    imgcodec_fixture_avif fixture = {0};
    fixture.image_count = (size_t)frames + (grid ? (size_t)(columns * rows) : 0);
    fixture.images = calloc(fixture.image_count, sizeof *fixture.images);
    fixture.encoder = avifEncoderCreate();
    if (fixture.images == NULL || fixture.encoder == NULL) {
        imgcodec_fixture_avif_release(&fixture);
        return imgcodec_fixture_avif_fail(IMGCODEC_IO, message, message_size, "out of memory");
    }
    avifEncoder *encoder = fixture.encoder;
    encoder->codecChoice = options->rav1e ? AVIF_CODEC_CHOICE_RAV1E : AVIF_CODEC_CHOICE_AOM;
    encoder->maxThreads = 1;
    encoder->speed = options->speed > 0 ? options->speed : AVIF_SPEED_FASTEST;
    int quantizer = options->lossless ? AVIF_QUANTIZER_LOSSLESS : options->quantizer > 0 ? options->quantizer : 20;
    encoder->minQuantizer = encoder->maxQuantizer = quantizer;
    encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS;
    encoder->timescale = 30;
    // AV1 caps a tile at 4096 wide and 4096×2304 pixels, and dav1d refuses bigger ones (libaom
    // 3.6 writes them, and libavif 0.11's autoTiling does not always split enough): 2048² tiles.
    while (encoder->tileColsLog2 < 6 && (width >> encoder->tileColsLog2) > 2048) encoder->tileColsLog2++;
    while (encoder->tileRowsLog2 < 6 && (height >> encoder->tileRowsLog2) > 2048) encoder->tileRowsLog2++;
    avifPixelFormat format = formats[options->yuv_format];
    avifResult result = AVIF_RESULT_OK;
    for (int f = 0; f < frames && result == AVIF_RESULT_OK; f++) {
        avifImage *image = avifImageCreate(width, height, (uint32_t)options->bit_depth, format);
        fixture.images[f] = image;
        if (image == NULL) {
            result = AVIF_RESULT_OUT_OF_MEMORY;
            break;
        }
        image->yuvRange = options->limited_range ? AVIF_RANGE_LIMITED : AVIF_RANGE_FULL;
        if (options->lossless && format == AVIF_PIXEL_FORMAT_YUV444) {
            image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_IDENTITY;
        }
        imgcodec_fixture_avif_orient(image, options->orientation);
        const unsigned char *frame = pixels + (same_pixels ? 0 : (size_t)f * frame_bytes);
        result = imgcodec_fixture_avif_fill(&fixture, image, frame, options);
        if (result != AVIF_RESULT_OK || grid) break;
        avifAddImageFlags flags = frames == 1 ? AVIF_ADD_IMAGE_FLAG_SINGLE : AVIF_ADD_IMAGE_FLAG_NONE;
        result = avifEncoderAddImage(encoder, image, 1, flags);
        avifImageDestroy(image);  // encoded by now: a long sequence holds one frame at a time
        fixture.images[f] = NULL;
    }
    if (result == AVIF_RESULT_OK && grid) {
        // Cells are views into the whole image, so they share its planes and properties.
        uint32_t cell_width = width / (uint32_t)columns, cell_height = height / (uint32_t)rows;
        for (int i = 0; i < columns * rows && result == AVIF_RESULT_OK; i++) {
            avifImage *cell = avifImageCreateEmpty();
            fixture.images[1 + i] = cell;
            avifCropRect rect = {(uint32_t)(i % columns) * cell_width, (uint32_t)(i / columns) * cell_height,
                                 cell_width, cell_height};
            result = cell == NULL ? AVIF_RESULT_OUT_OF_MEMORY : avifImageSetViewRect(cell, fixture.images[0], &rect);
        }
        if (result == AVIF_RESULT_OK) {
            const avifImage *const *cells = (const avifImage *const *)(fixture.images + 1);
            uint32_t grid_columns = (uint32_t)columns, grid_rows = (uint32_t)rows;
            result = avifEncoderAddImageGrid(encoder, grid_columns, grid_rows, cells, AVIF_ADD_IMAGE_FLAG_SINGLE);
        }
    }
    if (result == AVIF_RESULT_OK) result = avifEncoderFinish(encoder, &fixture.output);
    if (result != AVIF_RESULT_OK) {
        int status = imgcodec_fixture_avif_fail(IMGCODEC_INVALID, message, message_size, "AVIF encoding failed: %s%s%s",
                                                avifResultToString(result), encoder->diag.error[0] ? ": " : "",
                                                encoder->diag.error);
        imgcodec_fixture_avif_release(&fixture);
        return status;
    }
    if (options->claimed_frames > 0 &&
        !imgcodec_fixture_claim_frames(fixture.output.data, fixture.output.size, options->claimed_frames)) {
        imgcodec_fixture_avif_release(&fixture);
        return imgcodec_fixture_avif_fail(IMGCODEC_INVALID, message, message_size, "no sample table to rewrite");
    }
    if (options->declared_width > 0 && options->declared_height > 0) {
        imgcodec_fixture_declare_size(fixture.output.data, fixture.output.size, width, height, options->declared_width,
                                      options->declared_height);
    }
    *data = fixture.output.data;  // avifRWData is allocated with avifAlloc, which is malloc
    *size = fixture.output.size;
    fixture.output = (avifRWData)AVIF_DATA_EMPTY;
    imgcodec_fixture_avif_release(&fixture);
    return IMGCODEC_OK;
}

/// The layout of a shared-cell grid file, for its meta box.
typedef struct imgcodec_fixture_grid {
    uint32_t cells, width, height, cell_width, cell_height;
    const unsigned char *av1c;  // the cell's av1C box, copied as is
    size_t av1c_size;
    size_t grid_offset, grid_size;  // the ImageGrid payload in mdat
    size_t cell_offset, cell_size;  // the one cell's AV1 data in mdat
} imgcodec_fixture_grid;

// Writes the meta box of a grid whose cells (item IDs 2...cells + 1) all use the same bytes; in C
// beside imgcodec_test_encode_avif_shared_grid. Item IDs are 32-bit (pitm v1, iloc v2, infe v3,
// iref v1, ipma v1) since 65535 cells need IDs past 65535.
static void imgcodec_fixture_grid_meta(imgcodec_fixture_boxes *boxes, const imgcodec_fixture_grid *grid) {
    uint32_t cells = grid->cells;
    size_t meta = imgcodec_fixture_begin_box(boxes, "meta", 0);
    size_t hdlr = imgcodec_fixture_begin_box(boxes, "hdlr", 0);
    imgcodec_fixture_put_uint(boxes, 0, 4);
    imgcodec_fixture_put(boxes, "pict", 4);
    for (int i = 0; i < 3; i++) imgcodec_fixture_put_uint(boxes, 0, 4);
    imgcodec_fixture_put_uint(boxes, 0, 1);
    imgcodec_fixture_end_box(boxes, hdlr);
    size_t pitm = imgcodec_fixture_begin_box(boxes, "pitm", 1);
    imgcodec_fixture_put_uint(boxes, 1, 4);
    imgcodec_fixture_end_box(boxes, pitm);
    size_t iloc = imgcodec_fixture_begin_box(boxes, "iloc", 2);
    imgcodec_fixture_put_uint(boxes, 0x4400, 2);  // offset_size 4, length_size 4, base_offset_size 0, index_size 0
    imgcodec_fixture_put_uint(boxes, cells + 1, 4);
    for (uint32_t id = 1; id <= cells + 1; id++) {
        imgcodec_fixture_put_uint(boxes, id, 4);
        imgcodec_fixture_put_uint(boxes, 0, 2);  // construction_method 0: file offsets
        imgcodec_fixture_put_uint(boxes, 0, 2);  // data_reference_index 0: this file
        imgcodec_fixture_put_uint(boxes, 1, 2);  // one extent
        imgcodec_fixture_put_uint(boxes, (uint32_t)(id == 1 ? grid->grid_offset : grid->cell_offset), 4);
        imgcodec_fixture_put_uint(boxes, (uint32_t)(id == 1 ? grid->grid_size : grid->cell_size), 4);
    }
    imgcodec_fixture_end_box(boxes, iloc);
    size_t iinf = imgcodec_fixture_begin_box(boxes, "iinf", 1);
    imgcodec_fixture_put_uint(boxes, cells + 1, 4);
    for (uint32_t id = 1; id <= cells + 1; id++) {
        size_t infe = imgcodec_fixture_begin_box(boxes, "infe", 3);
        imgcodec_fixture_put_uint(boxes, id, 4);
        imgcodec_fixture_put_uint(boxes, 0, 2);
        imgcodec_fixture_put(boxes, id == 1 ? "grid" : "av01", 4);
        imgcodec_fixture_put_uint(boxes, 0, 1);
        imgcodec_fixture_end_box(boxes, infe);
    }
    imgcodec_fixture_end_box(boxes, iinf);
    size_t iref = imgcodec_fixture_begin_box(boxes, "iref", 1);
    size_t dimg = imgcodec_fixture_begin_box(boxes, "dimg", -1);
    imgcodec_fixture_put_uint(boxes, 1, 4);
    imgcodec_fixture_put_uint(boxes, cells, 2);
    for (uint32_t id = 2; id <= cells + 1; id++) imgcodec_fixture_put_uint(boxes, id, 4);
    imgcodec_fixture_end_box(boxes, dimg);
    imgcodec_fixture_end_box(boxes, iref);
    size_t iprp = imgcodec_fixture_begin_box(boxes, "iprp", -1);
    size_t ipco = imgcodec_fixture_begin_box(boxes, "ipco", -1);
    for (int i = 0; i < 2; i++) {  // property 1: the grid's ispe, 2: the cells'
        size_t ispe = imgcodec_fixture_begin_box(boxes, "ispe", 0);
        imgcodec_fixture_put_uint(boxes, i == 0 ? grid->width : grid->cell_width, 4);
        imgcodec_fixture_put_uint(boxes, i == 0 ? grid->height : grid->cell_height, 4);
        imgcodec_fixture_end_box(boxes, ispe);
    }
    imgcodec_fixture_put(boxes, grid->av1c, grid->av1c_size);  // property 3
    size_t pixi = imgcodec_fixture_begin_box(boxes, "pixi", 0);  // property 4: three 8-bit planes
    imgcodec_fixture_put_uint(boxes, 0x03080808, 4);
    imgcodec_fixture_end_box(boxes, pixi);
    imgcodec_fixture_end_box(boxes, ipco);
    size_t ipma = imgcodec_fixture_begin_box(boxes, "ipma", 1);
    imgcodec_fixture_put_uint(boxes, cells + 1, 4);
    for (uint32_t id = 1; id <= cells + 1; id++) {
        imgcodec_fixture_put_uint(boxes, id, 4);
        if (id == 1) {
            imgcodec_fixture_put_uint(boxes, 0x020104, 3);    // ispe 1, pixi 4
        } else {
            imgcodec_fixture_put_uint(boxes, 0x03028304, 4);  // ispe 2, av1C 3 (essential), pixi 4
        }
    }
    imgcodec_fixture_end_box(boxes, ipma);
    imgcodec_fixture_end_box(boxes, iprp);
    imgcodec_fixture_end_box(boxes, meta);
}

// In C because the cell is encoded with libavif; the container is written by hand.
int imgcodec_test_encode_avif_shared_grid(uint32_t columns, uint32_t rows, uint32_t cell_width, uint32_t cell_height,
                                          unsigned char **data, size_t *size, char *message, size_t message_size) {
    *data = NULL;
    *size = 0;
    if (columns < 1 || columns > 256 || rows < 1 || rows > 256 || columns * rows > 65535 || cell_width == 0 ||
        cell_height == 0 || cell_width > 4096 || cell_height > 4096) {
        return imgcodec_fixture_avif_fail(IMGCODEC_INVALID, message, message_size, "bad AVIF shared-grid options");
    }
    unsigned char *pixels = malloc((size_t)cell_width * cell_height * 3);
    if (pixels == NULL) return imgcodec_fixture_avif_fail(IMGCODEC_IO, message, message_size, "out of memory");
    for (size_t i = 0; i < (size_t)cell_width * cell_height; i++) {
        size_t x = i % cell_width, y = i / cell_width;
        pixels[3 * i] = (unsigned char)(x * 255 / cell_width);
        pixels[3 * i + 1] = (unsigned char)(y * 255 / cell_height);
        pixels[3 * i + 2] = (unsigned char)((x + y) & 255);
    }
    imgcodec_test_avif_options options = {.channels = 3, .bit_depth = 8, .lossless = 1};
    unsigned char *cell = NULL;
    size_t cell_file_size = 0;
    int status = imgcodec_test_encode_avif(pixels, cell_width, cell_height, &options, &cell, &cell_file_size, message,
                                           message_size);
    free(pixels);
    if (status != IMGCODEC_OK) return status;
    // The single-image file's mdat holds exactly the cell's AV1 data; its av1C is reused as is.
    static const char *const mdat_path[] = {"mdat"};
    static const char *const av1c_path[] = {"meta", "iprp", "ipco", "av1C"};
    size_t mdat = imgcodec_fixture_find_path(cell, cell_file_size, mdat_path, 1);
    size_t av1c = imgcodec_fixture_find_path(cell, cell_file_size, av1c_path, 4);
    if (mdat == 0 || av1c == 0) {
        imgcodec_free(cell);
        return imgcodec_fixture_avif_fail(IMGCODEC_INVALID, message, message_size, "unexpected libavif output layout");
    }
    const unsigned char *obu = cell + mdat + 8;
    size_t obu_size = imgcodec_fixture_be32_at(cell + mdat) - 8;
    imgcodec_fixture_grid grid = {.cells = columns * rows, .width = columns * cell_width, .height = rows * cell_height,
                                  .cell_width = cell_width, .cell_height = cell_height, .av1c = cell + av1c,
                                  .av1c_size = imgcodec_fixture_be32_at(cell + av1c), .cell_size = obu_size};
    int wide = grid.width > 65535 || grid.height > 65535;
    grid.grid_size = wide ? 12 : 8;
    imgcodec_fixture_boxes boxes = {0};
    static const unsigned char ftyp[28] = {0, 0, 0, 28, 'f', 't', 'y', 'p', 'a', 'v', 'i', 'f', 0, 0, 0, 0,
                                           'a', 'v', 'i', 'f', 'm', 'i', 'f', '1', 'm', 'i', 'a', 'f'};
    imgcodec_fixture_put(&boxes, ftyp, sizeof ftyp);
    // Written twice: first to learn the meta box's size (and so mdat's offset), then for real.
    size_t meta_start = boxes.size;
    imgcodec_fixture_grid_meta(&boxes, &grid);
    grid.grid_offset = boxes.size + 8;  // mdat's payload: the ImageGrid, then the cell
    grid.cell_offset = grid.grid_offset + grid.grid_size;
    boxes.size = meta_start;
    imgcodec_fixture_grid_meta(&boxes, &grid);
    size_t mdat_out = imgcodec_fixture_begin_box(&boxes, "mdat", -1);
    imgcodec_fixture_put_uint(&boxes, wide ? 1 : 0, 2);  // version 0; flags 1: 32-bit output size
    imgcodec_fixture_put_uint(&boxes, rows - 1, 1);
    imgcodec_fixture_put_uint(&boxes, columns - 1, 1);
    imgcodec_fixture_put_uint(&boxes, grid.width, wide ? 4 : 2);
    imgcodec_fixture_put_uint(&boxes, grid.height, wide ? 4 : 2);
    imgcodec_fixture_put(&boxes, obu, obu_size);
    imgcodec_fixture_end_box(&boxes, mdat_out);
    imgcodec_free(cell);
    if (boxes.failed) {
        free(boxes.data);
        return imgcodec_fixture_avif_fail(IMGCODEC_IO, message, message_size, "out of memory");
    }
    *data = boxes.data;
    *size = boxes.size;
    return IMGCODEC_OK;
}
