#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

// In C because it longjmps to the entry point that owns `failure`.
void imgcodec_fail(imgcodec_failure *failure, int status, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(failure->message, sizeof failure->message, format, arguments);
    va_end(arguments);
    // Messages are one line: library texts never need more, and hostile input must not add any.
    for (char *c = failure->message; *c != '\0'; c++) {
        if (*c == '\n' || *c == '\r') *c = ' ';
    }
    failure->status = status;
    longjmp(failure->jump, 1);
}

// In C beside imgcodec_fail, whose records it copies out.
int imgcodec_report(const imgcodec_failure *failure, char *message, size_t message_size) {
    if (message != NULL && message_size > 0) {
        snprintf(message, message_size, "%s", failure->message);
    }
    return failure->status;
}

// In C because a write error fails the encode by longjmp.
void imgcodec_write_all(imgcodec_failure *failure, int fd, const unsigned char *data, size_t count, const char *format) {
    size_t done = 0;
    while (done < count) {
        ssize_t written = write(fd, data + done, count - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            int full = written < 0 && (errno == ENOSPC || errno == EDQUOT);
            imgcodec_fail(failure, full ? IMGCODEC_NO_SPACE : IMGCODEC_IO, "cannot write %s: %s", format,
                          written < 0 ? strerror(errno) : "short write");
        }
        done += (size_t)written;
    }
}
