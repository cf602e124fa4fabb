#include <malloc.h>
#include "imgcodec_fixtures.h"

// In C because mallinfo2 returns a struct by value and is declared in <malloc.h>, which Swift's
// Glibc module does not import.
size_t imgcodec_test_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
