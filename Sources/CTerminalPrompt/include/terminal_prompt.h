#ifndef IMGFETCH_TERMINAL_PROMPT_H
#define IMGFETCH_TERMINAL_PROMPT_H
#include <stddef.h>
// In C because the terminal must get its echo back from a signal handler too: Ctrl-C at the
// prompt would otherwise leave the user's shell typing blind.

// Asks on the process's controlling terminal (/dev/tty), as curl asks for the password of
// `-u USER`: writes `prompt`, reads one line with echo off into `buffer` (at most capacity - 1
// bytes, NUL-terminated; the line's end is not kept), then restores the terminal and ends the
// line. SIGINT, SIGTERM, SIGHUP and SIGQUIT meanwhile restore it and then end the process as
// they would have. Returns the length read, or -1 when there is no terminal to ask on.
long CTerminalPrompt_readSecret(const char *prompt, char *buffer, size_t capacity);

#endif
