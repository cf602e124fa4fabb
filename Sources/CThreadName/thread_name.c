#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include "thread_name.h"

// In C because pthread_setname_np needs _GNU_SOURCE (see the header).
void CThreadName_setCurrent(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    // A name that cannot be set only makes debugging less convenient: the error is ignored.
    (void)pthread_setname_np(pthread_self(), truncated);
}
