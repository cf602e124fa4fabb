#ifndef IMGFETCH_MALLOC_TUNING_H
#define IMGFETCH_MALLOC_TUNING_H
// Process-wide malloc settings that only the imgfetch executable makes (the library never changes
// global state). In C because <malloc.h>'s mallopt and M_* constants are not in Swift's Glibc module.

// Has buffers of 1 MiB and more mapped and unmapped on their own (M_MMAP_THRESHOLD), so big decode
// buffers go back to the system when freed instead of staying in a thread's arena; and lets each
// arena keep up to 4 MiB of free memory at its top (M_TRIM_THRESHOLD) instead of returning it.
void CMallocTuning_returnBigBuffersToTheSystem(void);

#endif
