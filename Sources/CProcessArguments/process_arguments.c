#include <stddef.h>
#include <string.h>
#include "process_arguments.h"

static int captured_count;
static char **captured_vector;

// glibc calls the executable's constructors with main's own (argc, argv, envp), before main.
__attribute__((constructor)) static void capture(int argc, char **argv, char **envp) {
    (void)envp;
    captured_count = argc;
    captured_vector = argv;
}

int CProcessArguments_count(void) {
    return captured_count;
}

const char *CProcessArguments_at(int index) {
    return index >= 0 && index < captured_count ? captured_vector[index] : NULL;
}

void CProcessArguments_mask(int index, size_t start, size_t length) {
    if (index < 0 || index >= captured_count || captured_vector[index] == NULL) return;
    size_t size = strlen(captured_vector[index]);
    if (start >= size) return;
    if (length > size - start) length = size - start;
    memset(captured_vector[index] + start, '*', length);
}
