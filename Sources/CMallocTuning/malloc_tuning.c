#include <malloc.h>
#include "malloc_tuning.h"

// In C because mallopt and M_MMAP_THRESHOLD come from <malloc.h>. See main.swift for why.
void CMallocTuning_returnBigBuffersToTheSystem(void) {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
}
