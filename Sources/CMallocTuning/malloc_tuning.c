#include <malloc.h>
#include "malloc_tuning.h"

// In C because mallopt and the M_* constants come from <malloc.h>. See main.swift for why.
void CMallocTuning_returnBigBuffersToTheSystem(void) {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    // Fixing the mmap threshold also stops glibc from raising the trim threshold, which then stays
    // at 128 KiB: every free of a body buffer at an arena's top gave pages back with madvise and
    // the next body faulted them in again (98,000 page faults and 15% more CPU on 2000 small images).
    mallopt(M_TRIM_THRESHOLD, 4 << 20);
}
