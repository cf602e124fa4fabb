#ifndef IMGFETCH_FILE_SYSTEM_H
#define IMGFETCH_FILE_SYSTEM_H
// In C because O_TMPFILE and renameat2 are GNU extensions: <fcntl.h> and <stdio.h> declare them
// only under _GNU_SOURCE, which Swift's Glibc module is not built with.

#include <sys/types.h>

// open(directory, O_TMPFILE | flags, mode): an unnamed regular file in `directory`, which
// linkat(2) can name later; -1 and errno (EOPNOTSUPP, EISDIR or EINVAL where the kernel or the
// file system has no O_TMPFILE).
int CFileSystem_openUnnamed(const char *directory, int flags, mode_t mode);

// renameat2(from, to, RENAME_NOREPLACE): moves `from` to `to` unless `to` exists (EEXIST, a
// symlink included); -1 and errno (EINVAL where the file system cannot).
int CFileSystem_renameNoReplace(const char *from, const char *to);

#endif
