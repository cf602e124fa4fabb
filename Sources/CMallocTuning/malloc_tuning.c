#include <malloc.h>
#include "malloc_tuning.h"

// In C because mallopt and the M_* constants come from <malloc.h>.
//
// libjpeg's whole-image coefficient arrays (36 MB for a progressive 12-megapixel JPEG) are freed
// after each decode, and the decode stage runs one such decode at a time (DecodeMemoryBudget). By
// default every decode thread has its own arena and glibc raises its mmap threshold to the first
// big buffer freed, so each thread's arena kept its own 36 MB: the large set peaked at 99 MiB.
// - One arena: the next big decode, on whichever thread, reuses the memory the last one freed.
//   (Fixed 1 MiB mmap threshold instead, so big buffers were unmapped on free, gave the same peak
//   but a fresh page fault per 4 KiB of every decode: 0.15 s more system time on the large set.)
// - Fixed thresholds (setting them also stops glibc's dynamic raising): buffers from 32 MiB up are
//   mapped on their own and given back when freed; up to 64 MiB of free memory stays at the top of
//   the heap rather than being returned and faulted in again by the next image.
void CMallocTuning_shareDecodeMemoryAcrossThreads(void) {
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
