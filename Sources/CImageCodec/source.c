#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

// In C because a read error fails the decode by longjmp.
size_t imgcodec_source_fill(imgcodec_source *source, imgcodec_failure *failure) {
    if (source->fd < 0) {
        // In memory: the first fill hands out the whole file, every later one is end of file.
        source->position = 0;
        source->length = source->memory_left;
        source->memory_left = 0;
        return source->length;
    }
    for (;;) {
        ssize_t count = read(source->fd, source->buffer, source->capacity);
        if (count >= 0) {
            source->position = 0;
            source->length = (size_t)count;
            return (size_t)count;
        }
        if (errno != EINTR) {
            imgcodec_fail(failure, IMGCODEC_IO, "cannot read image file: %s", strerror(errno));
        }
    }
}

// In C because it refills through imgcodec_source_fill, which longjmps on errors.
size_t imgcodec_source_read(imgcodec_source *source, imgcodec_failure *failure, unsigned char *out, size_t count) {
    size_t copied = 0;
    while (copied < count) {
        if (source->position == source->length && imgcodec_source_fill(source, failure) == 0) break;
        size_t available = source->length - source->position;
        size_t chunk = count - copied < available ? count - copied : available;
        memcpy(out + copied, source->buffer + source->position, chunk);
        source->position += chunk;
        copied += chunk;
    }
    return copied;
}

// In C because a failing fstat fails the decode by longjmp.
uint64_t imgcodec_source_size(imgcodec_source *source, imgcodec_failure *failure) {
    if (source->fd < 0) return source->memory_size;
    struct stat status;
    if (fstat(source->fd, &status) != 0) {
        imgcodec_fail(failure, IMGCODEC_IO, "cannot read image file: %s", strerror(errno));
    }
    return status.st_size > source->start ? (uint64_t)(status.st_size - source->start) : 0;
}

// In C because a read error fails the decode by longjmp.
size_t imgcodec_source_pread(imgcodec_source *source, imgcodec_failure *failure, uint64_t offset,
                             unsigned char *out, size_t count) {
    if (source->fd < 0) {
        if (offset >= source->memory_size) return 0;
        size_t available = source->memory_size - (size_t)offset;
        size_t chunk = count < available ? count : available;
        memcpy(out, source->memory + offset, chunk);
        return chunk;
    }
    if (offset > (uint64_t)INT64_MAX - (uint64_t)source->start) return 0;
    size_t done = 0;
    while (done < count) {
        ssize_t got = pread(source->fd, out + done, count - done, (off_t)(source->start + (int64_t)offset + (int64_t)done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) imgcodec_fail(failure, IMGCODEC_IO, "cannot read image file: %s", strerror(errno));
        if (got == 0) break;
        done += (size_t)got;
    }
    return done;
}

// In C because a read error or an oversized file fails the decode by longjmp.
const unsigned char *imgcodec_source_load(imgcodec_source *source, imgcodec_failure *failure, uint64_t max_size,
                                          size_t *size) {
    if (source->fd < 0) {
        if (max_size != 0 && source->memory_size > max_size) {
            imgcodec_fail(failure, IMGCODEC_TOO_LARGE, "image too large: a %zu-byte file", source->memory_size);
        }
        *size = source->memory_size;
        return source->memory;
    }
    if (source->loaded == NULL) {
        uint64_t total = imgcodec_source_size(source, failure);
        if (max_size != 0 && total > max_size) {
            imgcodec_fail(failure, IMGCODEC_TOO_LARGE, "image too large: a %llu-byte file", (unsigned long long)total);
        }
        if (total > SIZE_MAX - 1) imgcodec_fail(failure, IMGCODEC_TOO_LARGE, "image too large: a %llu-byte file", (unsigned long long)total);
        source->loaded = malloc(total > 0 ? (size_t)total : 1);
        if (source->loaded == NULL) imgcodec_fail(failure, IMGCODEC_IO, "out of memory");
        // A file that shrank since fstat is read as far as it goes; one that grew is cut at the size seen.
        source->loaded_size = imgcodec_source_pread(source, failure, 0, source->loaded, (size_t)total);
    }
    *size = source->loaded_size;
    return source->loaded;
}

// In C beside the functions that allocate the buffers.
void imgcodec_source_release(imgcodec_source *source) {
    if (source->fd >= 0) free(source->buffer);
    source->buffer = NULL;
    free(source->loaded);
    source->loaded = NULL;
}
