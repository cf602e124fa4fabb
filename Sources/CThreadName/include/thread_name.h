#ifndef IMGFETCH_THREAD_NAME_H
#define IMGFETCH_THREAD_NAME_H
// In C because pthread_setname_np is a GNU extension: <pthread.h> declares it only under
// _GNU_SOURCE, which Swift's Glibc module is not built with.

// Names the calling thread (shown by top -H, perf, gdb); Linux keeps the first 15 bytes.
void CThreadName_setCurrent(const char *name);

#endif
