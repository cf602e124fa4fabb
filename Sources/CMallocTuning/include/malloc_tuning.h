#ifndef IMGFETCH_MALLOC_TUNING_H
#define IMGFETCH_MALLOC_TUNING_H
// Process-wide malloc settings that only the imgfetch executable makes (the library never changes
// global state). In C because <malloc.h>'s mallopt and M_* constants are not in Swift's Glibc module.

// One malloc arena for every thread (M_ARENA_MAX), fixed mmap and trim thresholds: see the .c file.
void CMallocTuning_shareDecodeMemoryAcrossThreads(void);

#endif
