"""The WAN-shaped scenarios (issue 13): many hosts, TLS with HTTP/2, and every response at 100 KB/s,
so that hundreds of transfers overlap as they do over a real network instead of finishing as soon
as they start, as they do on the plain loopback nginx of the other scenarios.

    wan-h2     the small set (2000 JPEGs) from one HTTPS host (HTTP/2), 64 at a time
    wan-hosts  the same 2000 files spread over 250 HTTPS hosts, 256 at a time
    wan-plain  the same over plain HTTP, imgfetch at -j 1000 and each peer at its own maximum

Host img-N.imgfetch.test is 127.0.1.N (N = 1..250), each with its own listening sockets on one
nginx (nginx-wan.conf.in), so connections, TLS sessions and per-host limits are per host as on a
WAN. Tools with a resolve option (imgfetch, curl: --resolve) get the names; the others (wget2 1.99
has no --dns-cache-preload, aria2c and img2dataset have no such option) get the same URLs with the
addresses in place of the names, which the certificate covers too. Every tool verifies the
certificate against the bench's own CA, through its own CA-file option.

Connections, full handshakes and resumed sessions come from nginx: its access log names each
request's connection and whether that connection's TLS session was resumed, and stub_status
counts the connections accepted (one closed before its first request is in no log line).
"""
from __future__ import annotations

import dataclasses
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import time
import urllib.request
from typing import Callable

from measure import Run, Summary, run_measured
from server import Server
from tools import Tool, _output

HERE = os.path.dirname(os.path.abspath(__file__))
DOMAIN = "imgfetch.test"
HOSTS = 250
CURL_MAX = 300                     # curl caps --parallel-max at 300
H2_J, HOSTS_J, PLAIN_J = 64, 256, 1000      # imgfetch's -j in wan-h2, wan-hosts, wan-plain
RSS_BASE_MIB, RSS_PER_TRANSFER_KIB = 64, 48   # wan-plain's peak RSS target: 64 MiB + 48 KiB × -j
RUN_TIMEOUT = 180.0
KEYS = ("wan-h2", "wan-hosts", "wan-plain")


def loopback_env() -> dict[str, str]:
    """The environment without proxy variables: every tool here (libcurl, wget2, aria2c, urllib)
    would send its requests to a proxy named in one, and the traffic must stay on loopback."""
    return {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}


def host_name(n: int) -> str:
    return f"img-{n}.{DOMAIN}"


def host_address(n: int) -> str:
    return f"127.0.1.{n}"


# --- TLS material ---------------------------------------------------------------------------

@dataclasses.dataclass
class Certificates:
    """A CA and one server certificate signed by it, made with `openssl req -x509` for each bench
    run (a few milliseconds), so nothing expires between benches and no key is kept around.

    The server certificate covers *.imgfetch.test (OpenSSL matches no wildcard directly under a
    one-label TLD such as *.test, hence the second label), 127.0.0.1 and every host address: the
    tools without a resolve option connect to addresses, and verify them against IP SANs. Keys
    are P-256: nginx's single worker signs each full handshake, and an ECDSA signature costs it
    far less than an RSA one, so the handshakes measure the clients more than the server."""
    directory: str

    @property
    def ca(self) -> str:
        return os.path.join(self.directory, "ca.pem")

    @property
    def cert(self) -> str:
        return os.path.join(self.directory, "server.pem")

    @property
    def key(self) -> str:
        return os.path.join(self.directory, "server.key")

    def generate(self) -> None:
        os.makedirs(self.directory, exist_ok=True)
        ca_key = os.path.join(self.directory, "ca.key")
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "7"]
        subprocess.run(["openssl", "req", "-x509", *ec, "-subj", "/CN=imgfetch bench CA",
                        "-keyout", ca_key, "-out", self.ca], check=True, capture_output=True)
        sans = [f"DNS:*.{DOMAIN}", "IP:127.0.0.1"] + [f"IP:{host_address(n)}" for n in range(1, HOSTS + 1)]
        config = os.path.join(self.directory, "server.cnf")
        with open(config, "w") as f:
            f.write("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = imgfetch bench server\n"
                    "[server]\nbasicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\n"
                    f"extendedKeyUsage = serverAuth\nsubjectAltName = {','.join(sans)}\n")
        subprocess.run(["openssl", "req", "-x509", *ec, "-config", config, "-extensions", "server",
                        "-CA", self.ca, "-CAkey", ca_key, "-keyout", self.key, "-out", self.cert],
                       check=True, capture_output=True)


# --- the server -----------------------------------------------------------------------------

def _free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 right now (nginx binds them on every 127.0.1.N as well)."""
    probes, ports = [], []
    try:
        for _ in range(count):
            probe = socket.socket()
            probe.bind(("127.0.0.1", 0))
            probes.append(probe)
            ports.append(probe.getsockname()[1])
    finally:
        for probe in probes:
            probe.close()
    return ports


@dataclasses.dataclass
class ConnectionStats:
    """What nginx saw of one run, from its access log lines and stub_status."""
    requests: int = 0
    connections: int = 0       # connections that carried at least one request
    accepted: int = 0          # connections accepted (stub_status), with or without a request
    full_handshakes: int = 0   # TLS connections whose session was not resumed
    resumed: int = 0           # TLS connections that resumed a session
    reconnects: int = 0        # connections opened to a host while another one to it was serving
    reconnects_resumed: int = 0
    hosts: int = 0
    protocols: str = ""        # e.g. "HTTP/2.0" or "HTTP/1.1 ×3, HTTP/2.0 ×1997"


class WanServer(Server):
    """nginx from nginx-wan.conf.in on 127.0.1.1-127.0.1.N (HTTPS with HTTP/2 on one port, plain
    HTTP on another) and 127.0.0.1 (stub_status), as a child in the foreground. Stopping it, its
    CPU time and its request count are server.Server's."""

    def __init__(self, prefix: str, root: str, certificates: Certificates, hosts: int = HOSTS):
        super().__init__(prefix, root)
        self.certificates, self.hosts = certificates, hosts
        self.tls_port = self.plain_port = self.status_port = 0

    def port(self, scheme: str) -> int:
        return self.tls_port if scheme == "https" else self.plain_port

    def start(self) -> None:
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(self.prefix, "tmp", sub), exist_ok=True)
        self.certificates.generate()
        with open(os.path.join(HERE, "nginx-wan.conf.in")) as f:
            template = f.read()
        for attempt in range(3):  # a port free on 127.0.0.1 may be taken on a 127.0.1.N
            self.tls_port, self.plain_port, self.status_port = _free_ports(3)
            addresses = [host_address(n) for n in range(1, self.hosts + 1)]
            values = {
                "USER": "user root;" if os.geteuid() == 0 else "",
                "PREFIX": self.prefix, "ROOT": self.root,
                "CERT": self.certificates.cert, "KEY": self.certificates.key,
                "STATUS_PORT": str(self.status_port),
                "TLS_LISTEN": "\n".join(f"        listen {a}:{self.tls_port} ssl http2 backlog=4096;"
                                        for a in addresses),
                "PLAIN_LISTEN": "\n".join(f"        listen {a}:{self.plain_port} backlog=4096;" for a in addresses),
            }
            config = template
            for key, value in values.items():
                config = config.replace(f"@{key}@", value)
            conf_path = os.path.join(self.prefix, "nginx.conf")
            with open(conf_path, "w") as f:
                f.write(config)
            open(self.access_log, "w").close()
            self.process = subprocess.Popen(["nginx", "-p", self.prefix, "-c", conf_path],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError(f"the WAN nginx did not start; see {self.prefix}/error.log")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 10
        last = host_address(self.hosts)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                for address, port in ((last, self.tls_port), (last, self.plain_port), ("127.0.0.1", self.status_port)):
                    socket.create_connection((address, port), timeout=0.2).close()
                return True
            except OSError:
                time.sleep(0.05)
        return False

    def accepted(self) -> int:
        """nginx's count of accepted connections, this request's own included."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
        with opener.open(f"http://127.0.0.1:{self.status_port}/status", timeout=5) as response:
            text = response.read().decode()
        return int(text.splitlines()[2].split()[0])

    def stats_since(self, offset: int, accepted_before: int) -> ConnectionStats:
        """Connections, handshakes and resumptions in the log lines after offset."""
        stats = ConnectionStats()
        connections: dict[tuple[str, str], dict] = {}
        protocols: dict[str, int] = {}
        with open(self.access_log, errors="replace") as f:
            f.seek(offset)
            for line in f:
                fields = line.split()
                if len(fields) < 12:
                    continue
                msec, pid, serial, _, conn_time, request_time, reused, protocol, address = fields[:9]
                stats.requests += 1
                protocols[protocol] = protocols.get(protocol, 0) + 1
                began = float(msec) - float(request_time)
                c = connections.setdefault((pid, serial), {"address": address, "reused": reused,
                                                           "opened": float(msec) - float(conn_time),
                                                           "serving": began})
                c["serving"] = min(c["serving"], began)
        stats.connections = len(connections)
        stats.accepted = self.accepted() - accepted_before - 1  # less this status request's own
        stats.full_handshakes = sum(1 for c in connections.values() if c["reused"] == ".")
        stats.resumed = sum(1 for c in connections.values() if c["reused"] == "r")
        by_host: dict[str, list[dict]] = {}
        for c in connections.values():
            by_host.setdefault(c["address"], []).append(c)
        stats.hosts = len(by_host)
        for host_connections in by_host.values():
            for c in host_connections:
                # A reconnect: opened when another connection to the same host was already serving
                # a request, so its handshake was over and the server had sent it its session
                # ticket (TLS 1.3 sends them right after the handshake) and response bytes with it:
                # the client could have resumed that session.
                if any(o is not c and o["serving"] < c["opened"] for o in host_connections):
                    stats.reconnects += 1
                    stats.reconnects_resumed += c["reused"] == "r"
        stats.protocols = ", ".join(f"{p} ×{n}" if len(protocols) > 1 else p
                                    for p, n in sorted(protocols.items()))
        return stats


@dataclasses.dataclass
class WanRun(ConnectionStats, Run):
    """One measured run with nginx's view of its connections, so that Summary.median works on
    either's fields. (Run's fields come first; `requests` is in both, counted from the same lines.)"""


# --- the URL lists --------------------------------------------------------------------------

@dataclasses.dataclass
class UrlLists:
    """One case's list twice, the same files in the same order: by host name (with the resolve
    table for them) and by address; plus the head of each for the warm-up round."""
    by_name: str
    by_address: str
    warmup_by_name: str
    warmup_by_address: str
    resolve: list[str]          # HOST:PORT:ADDR for every host in the list, curl's --resolve syntax
    count: int
    hosts: int

    def urls(self, by_name: bool, warmup: bool) -> str:
        if warmup:
            return self.warmup_by_name if by_name else self.warmup_by_address
        return self.by_name if by_name else self.by_address


def write_lists(www: str, directory: str, key: str, scheme: str, port: int, count: int, hosts: int,
                warmup: int) -> UrlLists:
    """The small set's first `count` files. One host: in file order, as the small scenario. Many
    hosts: file i on host i mod hosts, then shuffled with a fixed seed, as a scraped list mixes
    hosts (so a host may have several transfers in flight, or none, at any time)."""
    os.makedirs(directory, exist_ok=True)
    files = sorted(os.listdir(os.path.join(www, "small")))[:count]
    pairs = [(f, i % hosts + 1) for i, f in enumerate(files)]
    if hosts > 1:
        random.Random(13).shuffle(pairs)
    paths = {}
    for by_name in (True, False):
        host = host_name if by_name else host_address
        lines = [f"{scheme}://{host(n)}:{port}/small/{f}\n" for f, n in pairs]
        suffix = "names" if by_name else "addresses"
        for label, chosen in (("", lines), (".warmup", lines[:warmup])):
            path = os.path.join(directory, f"{key}.{suffix}{label}.txt")
            with open(path, "w") as out:
                out.writelines(chosen)
            paths[(by_name, bool(label))] = path
    used = sorted({n for _, n in pairs})
    return UrlLists(paths[(True, False)], paths[(False, False)], paths[(True, True)], paths[(False, True)],
                    [f"{host_name(n)}:{port}:{host_address(n)}" for n in used], len(pairs), len(used))


# --- the tools ------------------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    key: str
    title: str
    scheme: str
    lists: UrlLists
    imgfetch_j: int
    peer_j: int | None          # None: each peer at its own maximum (WanTool.max_concurrency)
    ca: str
    tools: list[WanTool]
    counted: int
    notes: list[str] = dataclasses.field(default_factory=list)
    max_runs: dict[str, int] = dataclasses.field(default_factory=dict)   # fewer counted runs for slow tools
    concurrency: dict[str, int] = dataclasses.field(default_factory=dict)   # tool -> what it ran at
    results: dict[str, Summary | str] = dataclasses.field(default_factory=dict)
    other_cpu: float | None = None
    server_cpu: float | None = None

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


class WanTool(Tool):
    """A downloader as the WAN cases run it: at a given concurrency, verifying against the bench's
    CA, with host names and a resolve table (by_name) or with addresses."""
    by_name = False
    max_concurrency = PLAIN_J   # the most it accepts, capped at imgfetch's -j in wan-plain

    def concurrency(self, case: Case) -> int:
        if self.name.startswith("imgfetch"):
            return case.imgfetch_j
        return case.peer_j if case.peer_j is not None else min(self.max_concurrency, case.imgfetch_j)

    def wan_command(self, case: Case, urls: str, out: str, scratch: str) -> list[str]:
        raise NotImplementedError

    def wan_env(self, case: Case) -> dict[str, str]:
        return loopback_env()


class WanImgfetch(WanTool):
    by_name = True
    needs = ("--resolve", "--cacert")

    def __init__(self, binary: str, name: str = "imgfetch", extra: tuple[str, ...] = ()):
        super().__init__(name)
        self.binary, self.extra = binary, extra

    def unavailable(self):
        if not os.access(self.binary, os.X_OK):
            return "not built"
        help_text = _output([self.binary, "--help", "all"])  # every option (-h shows the common ones)
        missing = [a for a in (*self.needs, *self.extra)
                   if a.startswith("--") and not re.search(re.escape(a) + r"(?![\w.-])", help_text)]
        return f"n/a (this build has no {', '.join(missing)})" if missing else None

    def wan_command(self, case, urls, out, scratch):
        # --per-host stays at its default (6): the TLS target is about that default.
        resolve = [arg for entry in case.lists.resolve for arg in ("--resolve", entry)]
        return [self.binary, urls, "-o", out, "-j", str(self.concurrency(case)), "-q",
                *(["--cacert", case.ca] if case.tls else []), *resolve, *self.extra]


class WanCurl(WanTool):
    """curl --parallel; the URLs, output names and the resolve table in a config file."""
    by_name = True
    max_concurrency = CURL_MAX
    exit_meanings = {7: "could not connect", 22: "HTTP error status (--fail)", 28: "timeout",
                     60: "certificate not verified"}

    def __init__(self):
        super().__init__("curl")

    def unavailable(self):
        return None if shutil.which("curl") else "not installed"

    _made: set[str] = set()  # configs written by this bench process (lists change with the ports)

    def wan_command(self, case, urls, out, scratch):
        config = urls + ".curl"
        if config not in self._made:
            self._made.add(config)
            with open(urls) as src, open(config, "w") as dst:
                dst.writelines(f'resolve = "{entry}"\n' for entry in case.lists.resolve)
                for url in filter(None, (line.strip() for line in src)):
                    dst.write(f'url = "{url}"\noutput = "{url.rsplit("/", 1)[1]}"\n')
        return ["curl", "--parallel", "--parallel-max", str(self.concurrency(case)), "-s", "-S", "--fail",
                *(["--cacert", case.ca] if case.tls else []), "--output-dir", out, "-K", config]


class WanWget2(WanTool):
    """wget2 1.99: --max-threads downloader threads, each with its own connection, and on HTTP/2
    up to --http2-request-window streams on it (30 by default). Threads × window is set to the
    case's concurrency, one connection per host where it can multiplex: one thread with 64 streams
    on the one host, 256 threads with one stream each on 250 hosts. TLS session resumption is off
    by default in wget2 and is turned on, with a session file of its own for each run."""
    exit_meanings = {4: "network failure", 5: "TLS failure", 8: "server issued an error response"}

    def __init__(self):
        super().__init__("wget2")

    def unavailable(self):
        return None if shutil.which("wget2") else "not installed"

    def wan_command(self, case, urls, out, scratch):
        j = self.concurrency(case)
        window = max(1, j // case.lists.hosts) if case.tls else 1
        session = os.path.join(scratch, "wget2.tls-session")
        if os.path.exists(session):
            os.unlink(session)   # sessions from an earlier run would make this one resume them
        return ["wget2", f"--max-threads={j // window}", f"--http2-request-window={window}", "-i", urls,
                "-P", out, "-q", "--no-config", "--no-robots", "--no-host-directories", "--no-directories",
                "--no-hsts", "--no-hpkp", "--no-ocsp",
                *([f"--ca-certificate={case.ca}", "--tls-resume", f"--tls-session-file={session}"]
                  if case.tls else [])]


class WanAria2c(WanTool):
    exit_meanings = {1: "unknown error", 2: "timeout", 3: "resource not found", 6: "network problem"}

    def __init__(self):
        super().__init__("aria2c")

    def unavailable(self):
        return None if shutil.which("aria2c") else "not installed"

    def wan_command(self, case, urls, out, scratch):
        return ["aria2c", "-j", str(self.concurrency(case)), "-x", "1", "-i", urls, "-d", out, "-q", "--no-conf",
                "--console-log-level=error", "--summary-interval=0", "--auto-file-renaming=false",
                "--allow-overwrite=true", *([f"--ca-certificate={case.ca}"] if case.tls else [])]


class WanImg2dataset(WanTool):
    """img2dataset fetches with urllib: HTTP/1.1, a new connection for every request. It has no
    CA option; Python's default SSL context reads SSL_CERT_FILE."""

    def __init__(self, venv: str):
        super().__init__("img2dataset")
        self.binary = os.path.join(venv, "bin", "img2dataset")

    def unavailable(self):
        return None if os.access(self.binary, os.X_OK) else "not installed (pip install into .bench/venv failed)"

    def wan_command(self, case, urls, out, scratch):
        return [self.binary, "--url_list", urls, "--input_format", "txt", "--output_folder", out,
                "--output_format", "files", "--thread_count", str(self.concurrency(case)), "--processes_count",
                "1", "--disable_all_reencoding", "True"]

    def wan_env(self, case):
        # No update checks or telemetry over the network: only loopback is used here.
        return {**loopback_env(), "NO_ALBUMENTATIONS_UPDATE": "1", "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1",
                "SSL_CERT_FILE": case.ca, "REQUESTS_CA_BUNDLE": case.ca}


# --- the cases and the runs -----------------------------------------------------------------

def build_cases(wanted: set[str], imgfetch: str, venv: str, server: WanServer, www: str, lists_dir: str,
                count: int, counted: int) -> list[Case]:
    ca = server.certificates.ca
    warmup = max(1, count // 8)

    def tools(*imgfetch_variants: tuple[str, tuple[str, ...]]) -> list[WanTool]:
        return [*(WanImgfetch(imgfetch, name, extra) for name, extra in imgfetch_variants),
                WanCurl(), WanWget2(), WanAria2c(), WanImg2dataset(venv)]

    # img2dataset takes 5-6 s to start and is 3-10 times slower than the rest here: one counted run.
    slow = {"img2dataset": 1}
    default, no_decode = ("imgfetch", ()), ("imgfetch --no-decode", ("--no-decode",))
    http11 = ("imgfetch --http1.1", ("--http1.1",))
    cases = []
    if "wan-h2" in wanted:
        lists = write_lists(www, lists_dir, "wan-h2", "https", server.tls_port, count, 1, warmup)
        cases.append(Case("wan-h2", f"(a) {lists.count} small JPEGs from one HTTPS host (HTTP/2), {H2_J} at a time",
                          "https", lists, H2_J, H2_J, ca, tools(default, no_decode), counted, max_runs=slow))
    if "wan-hosts" in wanted:
        lists = write_lists(www, lists_dir, "wan-hosts", "https", server.tls_port, count, HOSTS, warmup)
        cases.append(Case("wan-hosts", f"(b) {lists.count} small JPEGs over {lists.hosts} HTTPS hosts, "
                          f"{HOSTS_J} at a time", "https", lists, HOSTS_J, HOSTS_J, ca, tools(default, no_decode, http11), counted, max_runs=slow,
                          notes=["`imgfetch --http1.1` is there for the TLS target: over HTTP/1.1 a host with "
                                 "several transfers in flight gets several connections (up to `--per-host`, 6), "
                                 "so there are reconnects whose sessions can be resumed; over HTTP/2 one "
                                 "connection per host carries them all."]))
    if "wan-plain" in wanted:
        lists = write_lists(www, lists_dir, "wan-plain", "http", server.plain_port, count, HOSTS, warmup)
        cases.append(Case("wan-plain", f"(c) {lists.count} small JPEGs over {lists.hosts} plain-HTTP hosts, "
                          f"imgfetch at -j {PLAIN_J}, each peer at its maximum", "http", lists, PLAIN_J, None, ca,
                          tools(default, no_decode), counted, max_runs=slow))
    return cases


def run_case(case: Case, server: WanServer, bench_dir: str, out_root: str, renew: Callable[[], None],
             discard: Callable[[str], None]) -> None:
    """One warm-up round on the head of the list, then the counted rounds; tools alternate."""
    print(f"bench: {case.title}", flush=True)
    available = []
    for tool in case.tools:
        case.concurrency[tool.name] = tool.concurrency(case)
        reason = tool.unavailable()
        if reason:
            case.results[tool.name] = reason
        else:
            available.append(tool)
    runs: dict[str, list[WanRun]] = {t.name: [] for t in available}
    others, server_cpu = [], []
    scratch = os.path.join(bench_dir, "wan", "scratch")
    os.makedirs(scratch, exist_ok=True)
    for round_index in range(1 + case.counted):
        warmup = round_index == 0
        for tool in available:
            if not warmup and len(runs[tool.name]) >= case.max_runs.get(tool.name, case.counted):
                continue
            safe = tool.name.replace(" ", "_").replace("/", "_")
            out = os.path.join(out_root, case.key, safe)
            log = os.path.join(bench_dir, "logs", f"{case.key}.{safe}.log")
            renew()
            command = tool.wan_command(case, case.lists.urls(tool.by_name, warmup), out, scratch)
            offset, accepted = server.log_offset(), server.accepted()
            cpu_before = server.cpu_seconds()
            run = run_measured(command, output_dir=out, log_path=log, timeout=RUN_TIMEOUT,
                               env=tool.wan_env(case), server=server)
            used = server.cpu_seconds() - cpu_before
            if run.exit_code != 0 and not run.note:
                run.note = tool.explain(run.exit_code)
            result = WanRun(**{**dataclasses.asdict(run), **dataclasses.asdict(server.stats_since(offset, accepted))})
            discard(out)
            label = "warm-up" if warmup else f"run {len(runs[tool.name]) + 1}"
            print(f"  {tool.name:22} {label:8} {result.wall:6.2f} s  cpu {result.cpu:5.2f} s"
                  f"  rss {result.rss_kib / 1024:6.1f} MiB  req {result.requests:5}  conn {result.connections:4}"
                  f" (+{result.accepted - result.connections} idle)  full {result.full_handshakes:4}"
                  f"  resumed {result.resumed:4}  files {result.files:5}  exit {result.exit_code}"
                  + (f"  {result.note}" if result.exit_code else ""), flush=True)
            if not warmup:
                runs[tool.name].append(result)
                others.append(result.other_cpu)
                server_cpu.append(used)
    for tool in available:
        case.results[tool.name] = Summary(runs[tool.name], case.lists.count)
    case.other_cpu = statistics.median(others) if others else None
    case.server_cpu = statistics.median(server_cpu) if server_cpu else None


def run_all(wanted: set[str], imgfetch: str, bench_dir: str, www: str, count: int, counted: int,
            out_root: str, renew: Callable[[], None], discard: Callable[[str], None]) -> list[Case]:
    """Starts the WAN nginx, runs the wanted cases, stops it (also on an exception or Ctrl-C).
    Raises RuntimeError when the certificate or the server cannot be made."""
    wan_dir = os.path.join(bench_dir, "wan")
    server = WanServer(os.path.join(bench_dir, "nginx-wan"), www, Certificates(os.path.join(wan_dir, "tls")))
    try:
        try:
            server.start()
        except subprocess.CalledProcessError as error:
            raise RuntimeError(f"{error.cmd[0]} failed: {error.stderr.decode(errors='replace').strip()}") from error
        cases = build_cases(wanted, imgfetch, os.path.join(bench_dir, "venv"), server, www,
                            os.path.join(wan_dir, "lists"), count, counted)
        for case in cases:
            run_case(case, server, bench_dir, out_root, renew, discard)
    finally:
        server.stop()
    return cases
