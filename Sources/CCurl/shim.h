#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

// Opaque, distinct handle types (CURL*, CURLM*, CURLSH*) instead of void*.
#define CURL_STRICTER
// The gcc type-check macros wrap the variadic calls; Swift calls the wrappers below instead.
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

// Swift cannot call C variadic functions, so each argument type of
// curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo gets a typed wrapper.

static inline CURLcode CCurl_easy_setopt_long(CURL *h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode CCurl_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode CCurl_easy_setopt_string(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode CCurl_easy_setopt_pointer(CURL *h, CURLoption o, void *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode CCurl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode CCurl_easy_setopt_share(CURL *h, CURLSH *v) {
    return curl_easy_setopt(h, CURLOPT_SHARE, v);
}
static inline CURLcode CCurl_easy_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode CCurl_easy_setopt_seek_callback(CURL *h, curl_seek_callback v) {
    return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, v);
}
static inline CURLcode CCurl_easy_setopt_xferinfo_callback(CURL *h, curl_xferinfo_callback v) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v);
}

static inline CURLcode CCurl_easy_setopt_opensocket_callback(CURL *h, curl_opensocket_callback v) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, v);
}

// The address an open-socket callback is asked to connect to, as 16 bytes (IPv4 mapped into
// ::ffff:0:0/96); 0 for a family other than IPv4 and IPv6.
static inline int CCurl_sockaddr_address(const struct curl_sockaddr *a, unsigned char out[16]) {
    if (a->family == AF_INET && a->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&a->addr;
        memset(out, 0, 10);
        out[10] = 0xff;
        out[11] = 0xff;
        memcpy(out + 12, &in->sin_addr, 4);
        return 1;
    }
    if (a->family == AF_INET6 && a->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->addr;
        memcpy(out, &in6->sin6_addr, 16);
        return 1;
    }
    return 0;
}

// What libcurl's own open-socket does, with close-on-exec.
static inline curl_socket_t CCurl_open_socket(const struct curl_sockaddr *a) {
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static inline CURLMcode CCurl_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return curl_multi_setopt(m, o, v);
}
static inline CURLMcode CCurl_multi_setopt_pointer(CURLM *m, CURLMoption o, void *v) {
    return curl_multi_setopt(m, o, v);
}
static inline CURLMcode CCurl_multi_setopt_socket_callback(CURLM *m, curl_socket_callback v) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, v);
}
static inline CURLMcode CCurl_multi_setopt_timer_callback(CURLM *m, curl_multi_timer_callback v) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, v);
}

static inline CURLSHcode CCurl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) {
    return curl_share_setopt(s, o, v);
}

static inline CURLcode CCurl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode CCurl_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode CCurl_easy_getinfo_string(CURL *h, CURLINFO i, char **v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode CCurl_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) {
    return curl_easy_getinfo(h, i, v);
}

#endif
