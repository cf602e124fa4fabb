#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include "file_system.h"

// In C because O_TMPFILE needs _GNU_SOURCE (see the header).
int CFileSystem_openUnnamed(const char *directory, int flags, mode_t mode) {
    return open(directory, O_TMPFILE | flags, mode);
}

// In C because renameat2 needs _GNU_SOURCE (see the header).
int CFileSystem_renameNoReplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
