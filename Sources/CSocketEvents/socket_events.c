#include "socket_events.h"

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

int CSocketEvents_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int CSocketEvents_watch(int epoll, int fd, int flags) {
    struct epoll_event event = {0};
    event.events = ((flags & CSocketEvents_readable) ? EPOLLIN : 0) | ((flags & CSocketEvents_writable) ? EPOLLOUT : 0);
    event.data.fd = fd;
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

void CSocketEvents_unwatch(int epoll, int fd) {
    struct epoll_event event = {0};
    (void)epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event);
}

int CSocketEvents_wait(int epoll, int *fds, int *flags, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epoll, events, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        uint32_t ready = events[i].events;
        fds[i] = events[i].data.fd;
        flags[i] = ((ready & EPOLLIN) ? CSocketEvents_readable : 0) | ((ready & EPOLLOUT) ? CSocketEvents_writable : 0)
                 | ((ready & (EPOLLERR | EPOLLHUP)) ? CSocketEvents_error : 0);
    }
    return count;
}

int CSocketEvents_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void CSocketEvents_signal(int fd) {
    uint64_t one = 1;
    ssize_t written;
    do { written = write(fd, &one, sizeof one); } while (written < 0 && errno == EINTR);
}

void CSocketEvents_drain(int fd) {
    uint64_t count;
    ssize_t got;
    do { got = read(fd, &count, sizeof count); } while (got < 0 && errno == EINTR);
}
