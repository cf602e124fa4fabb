#!/usr/bin/env python3
"""Scriptable HTTP/1.1 test server for imgfetch end-to-end tests (stdlib only).

    test_server.py --root DIR [--log FILE] [--bind 127.0.0.1] [--port 0] [--max-seconds 600]
                  [--tls-cert FILE --tls-key FILE]

Loopback only (127.0.0.1 or ::1). Prints one line "PORT <n>" on stdout, then
serves until SIGTERM/SIGINT or --max-seconds (0 = forever). Keep-alive works;
responses carry Content-Length unless a fault says otherwise (1xx/204/304 carry
neither body nor length). All methods route alike; HEAD gets headers only.
With --tls-cert/--tls-key (PEM) the one port speaks both: a connection whose
first byte starts a TLS handshake is served over HTTPS, any other as plain
HTTP, so https://HOST:PORT and http://HOST:PORT differ in nothing but the
scheme (a failed handshake, e.g. the client rejecting the certificate, just
closes that connection).
--log FILE appends, before handling, one JSON line per request:
  {"method": "GET", "path": "/raw/path?q", "headers": {"Name": "a, b"}, "time": 1.7e9,
   "tls": false}
and, once the response is over (sent, or cut short by the client), one more:
  {"event": "sent", "method": "GET", "path": "/raw/path?q", "body_bytes": N, "time": 1.7e9}
where N counts the body bytes the socket accepted (a client that hung up stops it short).

Grammar: prefixes compose, each consumes its segments and handles the rest,
e.g. /delay/1/redirect/2/files/a.jpg (the query string rides along to the end).
  /files/<name>                    ROOT/<name>; subdirs ok, %-decoded, ".."/absolute -> 404.
                                   mimetypes Content-Type (else application/octet-stream),
                                   Last-Modified, ETag "<sha1>"; If-None-Match /
                                   If-Modified-Since hit -> 304
  /status/<code>                   <code>, text/plain "status <code>\n"
  /delay/<secs>/<rest>             sleep (float), then rest
  /drip/<bytes>/<rest>             headers (full length) now, body <bytes> per second
  /truncate/<n>/<rest>             full Content-Length, n body bytes, then FIN
  /reset/<n>/<rest>                full Content-Length, n body bytes, then TCP RST
  /reset-once/<n>/<key>/<rest>     the same for the first hit on <key>; later hits: rest
  /no-ranges/<rest>                rest, ignoring Range (files answer Range: bytes=N- with
                                   206 and Content-Range, If-Range honored, 416 past the end)
  /nolength/<rest>                 no Content-Length, Connection: close
  /chunked/<rest>                  Transfer-Encoding: chunked, 4096-byte chunks
  /length/<n>/<rest>               Content-Length: n (a lie), real body, then close
  /content-length/<%-value>/<rest> send "Content-Length: <value>" verbatim instead of the
                                   real one (repeat the prefix for several headers, in
                                   URL order), real body, then close
  /status-line/<%-line>/<rest>     send the bytes of <line> verbatim instead of the status
                                   line, then rest's headers and body, then close
  /hang                            never answer (closes after 120 s)
  /empty                           close without sending a byte
  /redirect/<n>/<rest>             n>0: 302 Location: /redirect/<n-1>/<rest>; 0: rest
  /redirect-code/<code>/<rest>     <code> with Location: /<rest>
  /loop/<x>                        302 Location: /loop/<x> (itself)
  /redirect-to?url=<%-url>         302 Location: <url> verbatim (any scheme/host)
  /auth/<user>/<pass>/<rest>       Basic auth or 401 + WWW-Authenticate: Basic realm="test"
  /require-header/<name>/<value>/<rest>   403 unless header == %-decoded value
  /set-cookie/<name>/<value>/<rest>       adds Set-Cookie: <name>=<value>; Path=/
  /require-cookie/<name>/<value>/<rest>   403 unless Cookie has <name>=<value>
  /fail/<count>/<status>/<key>/<rest>     first <count> hits on <key>: <status> "fail\n"
  /retry-after/<count>/<secs>/<key>/<rest>       same with 503 + Retry-After: <secs>
  /retry-after-date/<count>/<secs>/<key>/<rest>  Retry-After: HTTP-date (now + secs)
  /type/<%-content-type>/<rest>    override Content-Type
  /headers/<kib>/<rest>            add X-Big: aaa... of <kib> KiB
  /header/<%-name>/<%-value>/<rest>  add the response header <name>: <value>
  /drop-header/<%-name>/<rest>     remove the response header <name> (e.g. ETag, to test
                                   Last-Modified-only revalidation)
  /big/<bytes>                     image/jpeg FF D8 FF E0 + zeros, streamed, with length
  /bigstream/<bytes>               same, no Content-Length, close-delimited
  /echo-headers                    200 application/json of the request headers
  /robots.txt                      ROOT/robots.txt as /files/ serves it (404 without it); with
                                   ROOT/robots.status holding a code: that status instead; with
                                   ROOT/robots.redirect: 302 to /robots.txt itself (a loop); with
                                   ROOT/robots.noindex: X-Robots-Tag: noindex added
  anything else                    404 "not found\n"; malformed number -> 400
fail/retry-after* counters share one table keyed by <key>: use unique keys.
"""
import argparse
import base64
import email.utils
import hashlib
import http
import http.server
import ipaddress
import json
import mimetypes
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse

STOP = threading.Event()
HANG_SECONDS = 120
for _ext, _type in ((".webp", "image/webp"), (".avif", "image/avif"), (".heic", "image/heic")):
    mimetypes.add_type(_type, _ext)


class Response:
    def __init__(self, status=200, body=b"", ctype="text/plain"):
        self.status = status
        self.headers = [("Content-Type", ctype)] if ctype else []
        self.body = body           # bytes, used unless stream is set
        self.stream = None         # (length or None, factory returning an iterator of bytes)
        self.framing = "length"    # "length" | "close" | "chunked"
        self.lie = None            # Content-Length to announce instead of the real one
        self.drip = None           # bytes per second
        self.cut = None            # (n, "close" | "reset")
        self.action = None         # "hang" | "empty"
        self.raw_lengths = []      # Content-Length values sent verbatim instead of the real one
        self.status_line = None    # bytes sent instead of "HTTP/1.1 <status> <reason>"

    def set_header(self, name, value):
        self.headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()]
        self.headers.append((name, value))

    def length(self):
        return self.stream[0] if self.stream else len(self.body)

    def chunks(self):
        return self.stream[1]() if self.stream else iter((self.body,))


def text(status, body, **kw):
    return Response(status, body.encode(), **kw)


def redirect(code, location):
    r = text(code, "redirect\n")
    r.set_header("Location", location)
    return r


class Ctx:
    """What a route handler sees: its args, the remaining segments, the request."""

    def __init__(self, req, name, args, rest, query):
        self.req, self.name, self.args, self.rest, self.query = req, name, args, rest, query

    @property
    def rest_path(self):
        return "/".join(self.rest) + ("?" + self.query if self.query else "")

    def handle_rest(self):
        return dispatch(self.req, self.rest, self.query)


ROUTES = {}


def route(name, nargs=0):
    def deco(fn):
        ROUTES[name] = (nargs, fn)
        return fn
    return deco


def dispatch(req, segs, query):
    if not segs or segs[0] not in ROUTES:
        return text(404, "not found\n")
    nargs, fn = ROUTES[segs[0]]
    if len(segs) < 1 + nargs:
        return text(404, "not found\n")
    return fn(Ctx(req, segs[0], segs[1:1 + nargs], segs[1 + nargs:], query))


def _not_modified(headers, etag, mtime):
    inm, ims = headers.get("If-None-Match"), headers.get("If-Modified-Since")
    if inm is not None:
        return inm.strip() == "*" or etag in [t.strip().removeprefix("W/") for t in inm.split(",")]
    try:
        return ims is not None and mtime <= email.utils.parsedate_to_datetime(ims).timestamp()
    except (TypeError, ValueError):
        return False


@route("robots.txt")
def r_robots(c):
    root = c.req.server.root
    status_file = os.path.join(root, "robots.status")
    if os.path.exists(os.path.join(root, "robots.redirect")):
        return redirect(302, "/robots.txt")
    if os.path.exists(status_file):
        with open(status_file) as f:
            return text(int(f.read().strip()), "robots status\n")
    if not os.path.exists(os.path.join(root, "robots.txt")):
        return text(404, "not found\n")
    c.rest = ["robots.txt"]
    r = r_files(c)
    if os.path.exists(os.path.join(root, "robots.noindex")):
        r.headers.append(("X-Robots-Tag", "noindex"))
    return r


@route("files")
def r_files(c):
    name = urllib.parse.unquote("/".join(c.rest))
    parts = name.split("/")
    if not name or name.startswith("/") or ".." in parts or "\0" in name or "\\" in name:
        return text(404, "not found\n")
    root = os.path.realpath(c.req.server.root)
    path = os.path.realpath(os.path.join(root, name))
    if not path.startswith(root + os.sep) or not os.path.isfile(path):
        return text(404, "not found\n")
    with open(path, "rb") as f:
        data = f.read()
    mtime = int(os.path.getmtime(path))
    etag = '"%s"' % hashlib.sha1(data).hexdigest()
    ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
    r = Response(200, data, ctype)
    last_modified = email.utils.formatdate(mtime, usegmt=True)
    r.headers += [("Last-Modified", last_modified), ("ETag", etag)]
    if _not_modified(c.req.headers, etag, mtime):
        r.status, r.body = 304, b""
    elif not c.req.ignore_ranges:
        _apply_range(c.req.headers, r, data, (etag, last_modified))
    return r


def _apply_range(headers, r, data, validators):
    """Range: bytes=N- (the one form clients resume with), honoring If-Range: 206 with the rest,
    416 past the end, the whole body when If-Range names another version."""
    wanted = headers.get("Range", "")
    if not wanted.startswith("bytes=") or not wanted.endswith("-") or not wanted[6:-1].isdigit():
        return
    if_range = headers.get("If-Range")
    if if_range is not None and if_range not in validators:
        return
    start = int(wanted[6:-1])
    if start >= len(data):
        r.status, r.body = 416, b""
        r.set_header("Content-Range", "bytes */%d" % len(data))
        return
    r.status, r.body = 206, data[start:]
    r.set_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))


@route("status", 1)
def r_status(c):
    code = int(c.args[0])
    if code in (204, 304) or code < 200:
        return Response(code, b"", None)
    return text(code, "status %d\n" % code)


@route("delay", 1)
def r_delay(c):
    STOP.wait(max(0.0, float(c.args[0])))
    return c.handle_rest()


@route("drip", 1)
@route("truncate", 1)
@route("reset", 1)
@route("length", 1)
@route("nolength")
@route("chunked")
@route("type", 1)
@route("headers", 1)
@route("header", 2)
@route("drop-header", 1)
@route("set-cookie", 2)
@route("content-length", 1)
@route("status-line", 1)
def r_modifier(c):
    """Prefixes that handle the rest first, then alter its response."""
    r, a, name = c.handle_rest(), c.args, c.name
    if name == "drip":
        r.drip = int(a[0])
        if r.drip <= 0:
            raise ValueError("drip rate must be > 0")
    elif name in ("truncate", "reset"):
        r.cut = (int(a[0]), "close" if name == "truncate" else "reset")
    elif name == "length":
        r.lie = int(a[0])
    elif name in ("nolength", "chunked"):
        r.framing = "close" if name == "nolength" else "chunked"
    elif name == "type":
        r.set_header("Content-Type", urllib.parse.unquote(a[0]))
    elif name == "headers":
        r.headers.append(("X-Big", "a" * (int(a[0]) * 1024)))
    elif name == "header":
        r.headers.append((urllib.parse.unquote(a[0]), urllib.parse.unquote(a[1])))
    elif name == "drop-header":
        dropped = urllib.parse.unquote(a[0]).lower()
        r.headers = [(k, v) for k, v in r.headers if k.lower() != dropped]
    elif name == "set-cookie":
        r.headers.append(("Set-Cookie", "%s=%s; Path=/" % (a[0], a[1])))
    elif name == "content-length":
        r.raw_lengths.insert(0, urllib.parse.unquote(a[0]))
    elif name == "status-line":
        r.status_line = urllib.parse.unquote_to_bytes(a[0])
    return r


@route("hang")
@route("empty")
def r_action(c):
    r = Response(200, b"", None)
    r.action = c.name
    return r


@route("redirect", 1)
def r_redirect(c):
    n = int(c.args[0])
    if n > 0:
        return redirect(302, "/redirect/%d/%s" % (n - 1, c.rest_path))
    return c.handle_rest()


@route("redirect-code", 1)
def r_redirect_code(c):
    return redirect(int(c.args[0]), "/" + c.rest_path)


@route("loop", 1)
def r_loop(c):
    return redirect(302, "/loop/" + "/".join([c.args[0]] + c.rest))


@route("redirect-to")
def r_redirect_to(c):
    urls = [v for k, _, v in (p.partition("=") for p in c.query.split("&")) if k == "url"]
    if not urls:
        return text(400, "missing url\n")
    return redirect(302, urllib.parse.unquote(urls[0]))


@route("auth", 2)
def r_auth(c):
    want = "%s:%s" % (urllib.parse.unquote(c.args[0]), urllib.parse.unquote(c.args[1]))
    got = c.req.headers.get("Authorization", "")
    scheme, _, token = got.partition(" ")
    try:
        ok = scheme.lower() == "basic" and base64.b64decode(token.strip(), validate=True).decode() == want
    except (ValueError, UnicodeDecodeError):
        ok = False
    if ok:
        return c.handle_rest()
    r = text(401, "unauthorized\n")
    r.set_header("WWW-Authenticate", 'Basic realm="test"')
    return r


@route("require-header", 2)
def r_require_header(c):
    name, value = urllib.parse.unquote(c.args[0]), urllib.parse.unquote(c.args[1])
    if value not in c.req.headers.get_all(name, []):
        return text(403, "forbidden\n")
    return c.handle_rest()


@route("require-cookie", 2)
def r_require_cookie(c):
    pairs = [p.strip() for h in c.req.headers.get_all("Cookie", []) for p in h.split(";")]
    if "%s=%s" % (c.args[0], c.args[1]) not in pairs:
        return text(403, "forbidden\n")
    return c.handle_rest()


def _seen(req, key):
    """How many requests with this key came before this one (shared table)."""
    with req.server.lock:
        n = req.server.counters.get(key, 0)
        req.server.counters[key] = n + 1
        return n


@route("reset-once", 2)
def r_reset_once(c):
    """The first request with <key>: <n> body bytes, then a TCP RST; later ones: rest as it is."""
    r = c.handle_rest()
    if _seen(c.req, c.args[1]) == 0:
        r.cut = (int(c.args[0]), "reset")
    return r


@route("no-ranges")
def r_no_ranges(c):
    """rest, answered as a server that does not know Range (the whole body, 200)."""
    c.req.ignore_ranges = True
    return c.handle_rest()


@route("fail", 3)
@route("retry-after", 3)
@route("retry-after-date", 3)
def r_fail(c):
    count, arg, key = int(c.args[0]), int(c.args[1]), c.args[2]
    if _seen(c.req, key) >= count:
        return c.handle_rest()
    if c.name == "fail":
        return text(arg, "fail\n")
    r = text(503, "fail\n")
    when = email.utils.formatdate(time.time() + arg, usegmt=True)
    r.set_header("Retry-After", when if c.name == "retry-after-date" else str(arg))
    return r


ZEROS = bytes(65536)


@route("big", 1)
@route("bigstream", 1)
def r_big(c):
    size = int(c.args[0])
    if size < 0:
        raise ValueError("negative size")

    def gen():
        yield (b"\xff\xd8\xff\xe0" + ZEROS[4:])[:size]
        for left in range(size - len(ZEROS), 0, -len(ZEROS)):
            yield ZEROS[:left]

    r = Response(200, b"", "image/jpeg")
    r.stream = (size, gen)
    r.framing = "close" if c.name == "bigstream" else "length"
    return r


@route("echo-headers")
def r_echo_headers(c):
    body = json.dumps(c.req.header_dict(), indent=1).encode() + b"\n"
    return Response(200, body, "application/json")


def limit(chunks, n):
    for chunk in chunks:
        if n <= 0:
            return
        yield chunk[:n]
        n -= len(chunk)


def rechunk(chunks, size):
    buf = b""
    for chunk in chunks:
        buf = buf + chunk if buf else chunk
        while len(buf) >= size:
            yield buf[:size]
            buf = buf[size:]
    if buf:
        yield buf


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "imgfetch-testserver/1"
    sys_version = ""

    def log_message(self, format, *args):
        pass

    def header_dict(self):
        out, names = {}, {}
        for k, v in self.headers.items():
            key = names.setdefault(k.lower(), k)
            out[key] = out[key] + ", " + v if key in out else v
        return out

    def handle_any(self):
        self.server.log_request_json(self)
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = 0
        if n > 0:
            self.rfile.read(n)
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True  # request bodies are not decoded; don't reuse
        raw = self.path
        if "://" in raw.split("?", 1)[0]:  # absolute-form request target
            parts = urllib.parse.urlsplit(raw)
            raw = parts.path + ("?" + parts.query if parts.query else "")
        path, _, query = raw.partition("?")
        self.ignore_ranges = False
        try:
            resp = dispatch(self, path.lstrip("/").split("/"), query)
        except (ValueError, OverflowError):
            resp = text(400, "bad request\n")
        self.body_bytes = 0
        try:
            self.send(resp)
        except OSError:  # client went away (BrokenPipe, ConnectionReset, ...)
            self.close_connection = True
        self.server.log_sent(self, self.body_bytes)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = handle_any

    def abort(self, rst):
        self.close_connection = True
        sock = self.connection
        if rst:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        sock.close()

    def send(self, r):
        if r.action == "empty":
            return self.abort(False)
        if r.action == "hang":
            STOP.wait(HANG_SECONDS)
            return self.abort(False)
        has_body = not (r.status < 200 or r.status in (204, 304))
        closing = bool(r.framing == "close" or r.cut or r.lie is not None or r.raw_lengths
                       or r.status_line is not None or self.close_connection)
        headers = list(r.headers) + [("Content-Length", v) for v in r.raw_lengths]
        if has_body and r.framing == "length" and not r.raw_lengths:  # 1xx/204/304: no body, no length
            headers.append(("Content-Length", str(r.lie if r.lie is not None else r.length())))
        elif has_body and r.framing == "chunked":
            headers.append(("Transfer-Encoding", "chunked"))
        if closing:
            headers.append(("Connection", "close"))
        try:
            reason = http.HTTPStatus(r.status).phrase
        except ValueError:
            reason = "Status"
        head = ["Date: " + self.date_time_string(), "Server: " + self.server_version]
        head += ["%s: %s" % kv for kv in headers]
        status = r.status_line if r.status_line is not None else ("HTTP/1.1 %d %s" % (r.status, reason)).encode()
        self.wfile.write(status + b"\r\n" + ("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if has_body and self.command != "HEAD":
            chunks = r.chunks()
            if r.cut:
                chunks = limit(chunks, r.cut[0])
            size = r.drip or (4096 if r.framing == "chunked" else 65536)
            for i, piece in enumerate(rechunk(chunks, size)):
                if r.drip and i and STOP.wait(1):
                    return self.abort(False)
                body = len(piece)
                if r.framing == "chunked":
                    piece = b"%x\r\n%s\r\n" % (len(piece), piece)
                self.wfile.write(piece)
                self.wfile.flush()
                self.body_bytes += body
            if r.framing == "chunked" and not r.cut:
                self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        if r.cut:
            return self.abort(r.cut[1] == "reset")
        if closing:
            self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True
    block_on_close = False  # idle keep-alive clients must not delay shutdown
    allow_reuse_address = True

    def __init__(self, addr, root, log_path, tls=None):
        super().__init__(addr, Handler)
        self.root = root
        self.tls = tls             # ssl.SSLContext, or None for plain HTTP only
        self.lock = threading.Lock()
        self.counters = {}
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None

    def finish_request(self, request, client_address):
        """Runs on the connection's thread: with TLS on, a handshake's first byte (0x16) selects HTTPS."""
        if self.tls is None:
            return super().finish_request(request, client_address)
        try:
            request.settimeout(HANG_SECONDS)  # for the peek and the handshake only
            first = request.recv(1, socket.MSG_PEEK)
            if first != b"\x16":
                request.settimeout(None)
                return super().finish_request(request, client_address)
            conn = self.tls.wrap_socket(request, server_side=True)
            conn.settimeout(None)
        except (OSError, ssl.SSLError):  # the client left, or rejected our certificate
            return
        try:
            super().finish_request(conn, client_address)
        finally:
            conn.close()

    def log_request_json(self, req):
        if not self.log_file:
            return
        entry = {"method": req.command, "path": req.path, "headers": req.header_dict(), "time": time.time(),
                 "tls": isinstance(req.connection, ssl.SSLSocket)}
        with self.lock:
            self.log_file.write(json.dumps(entry) + "\n")
            self.log_file.flush()

    def log_sent(self, req, body_bytes):
        if not self.log_file:
            return
        entry = {"event": "sent", "method": req.command, "path": req.path, "body_bytes": body_bytes, "time": time.time()}
        with self.lock:
            self.log_file.write(json.dumps(entry) + "\n")
            self.log_file.flush()

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # real bugs still go to stderr


class Server6(Server):
    address_family = socket.AF_INET6


def main():
    ap = argparse.ArgumentParser(description="imgfetch end-to-end test server (grammar: see module docstring)")
    ap.add_argument("--root", required=True, help="directory served under /files/")
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--bind", default="127.0.0.1", help="loopback address (127.0.0.1 or ::1)")
    ap.add_argument("--port", type=int, default=0, help="0 = pick a free port")
    ap.add_argument("--max-seconds", type=float, default=600, help="stop after this long (0 = never)")
    ap.add_argument("--tls-cert", help="PEM certificate: also serve HTTPS on the same port")
    ap.add_argument("--tls-key", help="PEM private key of --tls-cert")
    a = ap.parse_args()
    bind = a.bind.strip("[]")
    try:
        if not ipaddress.ip_address(bind).is_loopback:
            ap.error("--bind must be a loopback address")
    except ValueError:
        ap.error("--bind must be a numeric loopback address")
    if not os.path.isdir(a.root):
        ap.error("--root %s is not a directory" % a.root)
    tls = None
    if bool(a.tls_cert) != bool(a.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    if a.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(a.tls_cert, a.tls_key)
    server = (Server6 if ":" in bind else Server)((bind, a.port), a.root, a.log, tls)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: STOP.set())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    STOP.wait(a.max_seconds if a.max_seconds > 0 else None)
    STOP.set()
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
