#include <stdlib.h>
#include <string.h>
#include "tiff_internal.h"

// libtiff's client I/O over the source (read/seek/size procs over imgcodec_source_pread; memory
// mapping refused) and its per-handle error and warning handlers, which only record the message:
// the checked call's failure is raised after it returns (imgcodec_tiff_end), because libtiff
// cannot be unwound.

// libtiff's read proc: the source's pread under a jump target of its own, so a read error
// records itself and returns -1 instead of unwinding libtiff.
tmsize_t imgcodec_tiff_read(thandle_t handle, void *buffer, tmsize_t size) {
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)handle;
    if (state->io_failed || size < 0) return -1;
    if (setjmp(state->io_failure.jump) != 0) {
        state->io_failed = 1;
        return -1;
    }
    size_t got = imgcodec_source_pread(&state->decoder->source, &state->io_failure, state->position, buffer,
                                       (size_t)size);
    state->position += got;
    return (tmsize_t)got;
}

// libtiff's write proc: the handle is read-only.
tmsize_t imgcodec_tiff_write(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle;
    (void)buffer;
    (void)size;
    return -1;
}

// libtiff's seek proc over the image's bytes (the source's offsets start at the image).
toff_t imgcodec_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)handle;
    uint64_t base = whence == SEEK_CUR ? state->position : whence == SEEK_END ? state->file_size : 0;
    state->position = base + offset;
    return state->position;
}

// libtiff's close proc: the decoder owns the source.
int imgcodec_tiff_close(thandle_t handle) {
    (void)handle;
    return 0;
}

// libtiff's size proc: measured once at open, outside libtiff (measuring can fail by longjmp).
toff_t imgcodec_tiff_size(thandle_t handle) {
    return ((imgcodec_tiff_state *)handle)->file_size;
}

// libtiff's map proc: refused, so libtiff reads through the read proc for fd and memory alike.
int imgcodec_tiff_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle;
    (void)base;
    (void)size;
    return 0;
}

// libtiff's unmap proc: nothing was mapped.
void imgcodec_tiff_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

// Formats a libtiff message as "module: text", dropping libtiff's own function names and the
// handle's name, which tell a reader nothing; codec names (LZWDecode, JPEGLib) stay.
static void imgcodec_tiff_format(char *out, size_t size, const char *module, const char *format, va_list args) {
    char formatted[IMGCODEC_MESSAGE_SIZE];
    vsnprintf(formatted, sizeof formatted, format, args);
    // Some messages start with the handle's name ("TIFF: Can not read TIFF directory count").
    const char *text = strncmp(formatted, "TIFF: ", 6) == 0 ? formatted + 6 : formatted;
    int named = module != NULL && module[0] != '\0' && strcmp(module, "TIFF") != 0 &&
                strncmp(module, "TIFF", 4) != 0 && strncmp(module, "_TIFF", 5) != 0;
    snprintf(out, size, named ? "%s: %s" : "%s%s", named ? module : "", text);
}

// libtiff's per-handle error handler: records the first error of the checked call; never unwinds.
int imgcodec_tiff_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)user_data;
    if (state->error[0] == '\0') imgcodec_tiff_format(state->error, sizeof state->error, module, format, args);
    return 1;
}

// Whether libtiff's message says the file ended early (a read past its end, or a directory past
// it: writers put it last), as its text is all there is to tell a cut-off file from a damaged one.
static int imgcodec_tiff_cut(const char *message) {
    return strstr(message, "Premature EOF") != NULL || strstr(message, "IO error during reading") != NULL ||
           strstr(message, "Read error") != NULL || strstr(message, "Can not read TIFF directory") != NULL;
}

// libtiff's per-handle warning handler. Most warnings are benign (unknown tags, sloppy counts);
// those below mean the file is damaged even though the call succeeds: libjpeg's (as the JPEG
// decoder treats them), a fax strip or PackBits run cut short, a JPEG smaller than its strip or
// tile (libtiff then leaves part of the buffer unwritten), and tag data past the end of the file
// (a truncated file whose pixels survive, but not, say, its ReferenceBlackWhite).
int imgcodec_tiff_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list args) {
    (void)tiff;
    imgcodec_tiff_state *state = (imgcodec_tiff_state *)user_data;
    char text[IMGCODEC_MESSAGE_SIZE];
    imgcodec_tiff_format(text, sizeof text, module, format, args);
    int damaged = (module != NULL && (strcmp(module, "JPEGLib") == 0 || strcmp(module, "LibJpeg") == 0)) ||
                  strstr(text, "Premature EOF") != NULL || strstr(text, "Terminating PackBitsDecode") != NULL ||
                  strstr(text, "Improper JPEG strip/tile size") != NULL || strstr(text, "IO error during reading of") != NULL;
    if (damaged && state->warning[0] == '\0') snprintf(state->warning, sizeof state->warning, "%s", text);
    memcpy(state->note, text, sizeof state->note);
    return 1;
}

// Forgets what the handlers recorded, before a libtiff call whose result is checked.
void imgcodec_tiff_begin(imgcodec_tiff_state *state) {
    state->error[0] = '\0';
    state->warning[0] = '\0';
    state->note[0] = '\0';
}

// Raises the failure of the libtiff call just made, in C because it longjmps: a read error, the
// call's own failure (`ok` 0) with libtiff's message, or a warning that means damaged pixels.
void imgcodec_tiff_end(imgcodec_decoder *decoder, int ok, const char *what) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    if (state->io_failed) imgcodec_fail(&decoder->failure, state->io_failure.status, "%s", state->io_failure.message);
    if (!ok && strstr(state->error, "limit defined in open options") != NULL) {
        // "Memory allocation of N bytes is beyond the M byte limit …", continuing "TIFF".
        state->error[0] = (char)(state->error[0] == 'M' ? 'm' : state->error[0]);
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE, "image too large: TIFF %s", state->error);
    }
    const char *reason = state->error[0] ? state->error : state->note[0] ? state->note : what;
    if (!ok) imgcodec_fail(&decoder->failure, imgcodec_tiff_cut(reason) ? IMGCODEC_TRUNCATED : IMGCODEC_INVALID,
                           "invalid TIFF: %s", reason);
    if (state->warning[0] != '\0') {
        imgcodec_fail(&decoder->failure, imgcodec_tiff_cut(state->warning) ? IMGCODEC_TRUNCATED : IMGCODEC_INVALID,
                      "invalid TIFF: %s", state->warning);
    }
}

// Grows `buffer` to `size` zeroed bytes; fails past limits.max_memory, in C because it longjmps.
void imgcodec_tiff_reserve(imgcodec_decoder *decoder, unsigned char **buffer, size_t *capacity, uint64_t size,
                           const char *what) {
    uint64_t limit = decoder->limits.max_memory;
    if ((limit != 0 && size > limit) || size > SIZE_MAX / 2) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TOO_LARGE,
                      "image too large: TIFF %s of %llu MiB exceeds the memory limit (%llu MiB)", what,
                      (unsigned long long)(size >> 20), (unsigned long long)(limit >> 20));
    }
    if (*capacity < size) {
        free(*buffer);
        *capacity = 0;
        *buffer = calloc(1, (size_t)size);
        if (*buffer == NULL) imgcodec_fail(&decoder->failure, IMGCODEC_IO, "out of memory");
        *capacity = (size_t)size;
    } else {
        memset(*buffer, 0, (size_t)size);
    }
}

// Checks that strip or tile `index` lies inside the file before libtiff reads it, so a lying
// byte count fails plainly instead of making libtiff grow a buffer towards it.
void imgcodec_tiff_check_strile(imgcodec_decoder *decoder, uint32_t index) {
    imgcodec_tiff_state *state = imgcodec_tiff(decoder);
    uint64_t offset = TIFFGetStrileOffset(state->tiff, index), count = TIFFGetStrileByteCount(state->tiff, index);
    if (count > state->file_size || offset > state->file_size - count) {
        imgcodec_fail(&decoder->failure, IMGCODEC_TRUNCATED,
                      "invalid TIFF: %s %u (%llu bytes at offset %llu) extends past the end of the file (%llu bytes)",
                      state->page.tiled ? "tile" : "strip", index, (unsigned long long)count,
                      (unsigned long long)offset, (unsigned long long)state->file_size);
    }
}
