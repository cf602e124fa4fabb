#include "terminal_prompt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static const int prompt_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define PROMPT_SIGNAL_COUNT (sizeof prompt_signals / sizeof prompt_signals[0])

// What the handler restores: set before the handlers are installed, read only by them.
static volatile sig_atomic_t prompt_terminal = -1;
static struct termios prompt_saved;

static void restore_and_reraise(int number) {
    if (prompt_terminal >= 0) {
        tcsetattr(prompt_terminal, TCSAFLUSH, &prompt_saved);
        (void)!write(prompt_terminal, "\n", 1);
    }
    signal(number, SIG_DFL);
    raise(number);
}

static void write_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        text += written;
        length -= (size_t)written;
    }
}

long CTerminalPrompt_readSecret(const char *prompt, char *buffer, size_t capacity) {
    if (capacity == 0) return -1;
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct termios saved;
    if (tcgetattr(fd, &saved) != 0) {
        close(fd);
        return -1;
    }
    prompt_saved = saved;
    prompt_terminal = fd;
    struct sigaction previous[PROMPT_SIGNAL_COUNT];
    struct sigaction handler;
    memset(&handler, 0, sizeof handler);
    handler.sa_handler = restore_and_reraise;
    sigemptyset(&handler.sa_mask);
    for (size_t i = 0; i < PROMPT_SIGNAL_COUNT; i++) sigaction(prompt_signals[i], &handler, &previous[i]);

    struct termios quiet = saved;
    quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
    tcsetattr(fd, TCSAFLUSH, &quiet);
    write_all(fd, prompt, strlen(prompt));

    size_t length = 0;
    for (;;) {
        char byte;
        ssize_t got = read(fd, &byte, 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0 || byte == '\n') break;
        if (length + 1 < capacity) buffer[length++] = byte;
    }
    if (length > 0 && buffer[length - 1] == '\r') length--;
    buffer[length] = '\0';

    tcsetattr(fd, TCSAFLUSH, &saved);
    write_all(fd, "\n", 1);
    for (size_t i = 0; i < PROMPT_SIGNAL_COUNT; i++) sigaction(prompt_signals[i], &previous[i], NULL);
    prompt_terminal = -1;
    close(fd);
    return (long)length;
}
