"""nginx on 127.0.0.1 at a free port, from nginx.conf.in, owned by the bench.

Server.start() writes the config under PREFIX, starts `nginx -p PREFIX -c nginx.conf` in the
foreground (daemon off) as a child, and waits for the port. stop() ends exactly that child.
Requests are counted from the access log: one line per request.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, prefix: str, root: str):
        self.prefix = os.path.abspath(prefix)
        self.root = os.path.abspath(root)
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def access_log(self) -> str:
        return os.path.join(self.prefix, "access.log")

    def start(self) -> None:
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(self.prefix, "tmp", sub), exist_ok=True)
        self.port = free_port()
        with open(os.path.join(HERE, "nginx.conf.in")) as f:
            config = f.read()
        # As root, workers would drop to 'nobody', who may not read a corpus under /root or /work.
        user = "user root;" if os.geteuid() == 0 else ""
        for key, value in {"USER": user, "PREFIX": self.prefix, "PORT": str(self.port),
                           "ROOT": self.root}.items():
            config = config.replace(f"@{key}@", value)
        conf_path = os.path.join(self.prefix, "nginx.conf")
        with open(conf_path, "w") as f:
            f.write(config)
        open(self.access_log, "w").close()
        self.process = subprocess.Popen(["nginx", "-p", self.prefix, "-c", conf_path],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}; see {self.prefix}/error.log")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not start listening within 10 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: finish logging, then exit
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def worker_pids(self) -> list[int]:
        if not self.process:
            return []
        try:
            with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as f:
                return [self.process.pid] + [int(p) for p in f.read().split()]
        except OSError:
            return [self.process.pid]

    def cpu_seconds(self) -> float:
        from measure import process_cpu_seconds
        return process_cpu_seconds(self.worker_pids())

    def log_offset(self) -> int:
        return os.path.getsize(self.access_log)

    def requests_since(self, offset: int) -> int:
        """Lines nginx appended since offset (it writes each line with one write(), unbuffered)."""
        time.sleep(0.02)  # a worker may still be finishing the last line of a closed connection
        with open(self.access_log, "rb") as f:
            f.seek(offset)
            return f.read().count(b"\n")
