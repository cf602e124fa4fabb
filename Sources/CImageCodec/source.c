#include <errno.h>
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
