#ifndef IMGFETCH_PROCESS_ARGUMENTS_H
#define IMGFETCH_PROCESS_ARGUMENTS_H
#include <stddef.h>
// In C because only an ELF constructor sees the process's argc and argv besides main, and Swift
// cannot declare one. Swift's CommandLine.arguments finds them on Linux by looking the stack up in
// /proc/self/maps, so it is empty where /proc is not mounted (a bare chroot, a minimal sandbox):
// imgfetch would then run as if given no arguments at all.

// The number of arguments the process was started with, the program's name included.
int CProcessArguments_count(void);

// Argument `index` (0: the program's name), or NULL past the last one.
const char *CProcessArguments_at(int index);

// Overwrites `length` bytes of argument `index` from byte `start` with '*', in the process's own
// argument area, which /proc/PID/cmdline (ps) shows to every local user: a password given on the
// command line is masked there once read, as curl masks it. Bytes past the argument's end are left alone.
void CProcessArguments_mask(int index, size_t start, size_t length);

#endif
