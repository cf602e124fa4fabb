#ifndef IMGFETCH_SOCKET_EVENTS_H
#define IMGFETCH_SOCKET_EVENTS_H
// In C because Swift's Glibc module includes neither <sys/epoll.h> nor <sys/eventfd.h>, and
// struct epoll_event is packed on x86_64.

// Readiness flags, the same values as libcurl's CURL_CSELECT_IN/OUT/ERR.
enum {
    CSocketEvents_readable = 1,
    CSocketEvents_writable = 2,
    CSocketEvents_error = 4,
};

// A new epoll instance (close-on-exec); -1 and errno on failure.
int CSocketEvents_create(void);

// Watches `fd` for the given flags (readable, writable or both), adding it or changing its
// flags; 0 or -1 and errno.
int CSocketEvents_watch(int epoll, int fd, int flags);

// Stops watching `fd`; an fd that is not watched (or already closed) is not an error.
void CSocketEvents_unwatch(int epoll, int fd);

// Waits up to `timeout_ms` (-1: no limit) for at most `capacity` ready fds, written to `fds`
// with their readiness in `flags`; returns how many, 0 on timeout or EINTR, -1 on other errors.
int CSocketEvents_wait(int epoll, int *fds, int *flags, int capacity, int timeout_ms);

// A non-blocking, close-on-exec eventfd; -1 and errno on failure.
int CSocketEvents_eventfd(void);

// Makes `eventfd` readable (from any thread).
void CSocketEvents_signal(int eventfd);

// Makes `eventfd` unreadable again.
void CSocketEvents_drain(int eventfd);

#endif
