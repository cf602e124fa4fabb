"""The tools under test, how each is invoked, and their versions.

Every downloader gets the same concurrency (16 transfers, all to the one nginx host) and writes
into a fresh output directory on the same filesystem (see bench.output_root and discard_output). A Tool's command() returns None when the
tool cannot run here; unavailable() then says why, and the table shows that instead of numbers.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess

CONCURRENCY = 16


def _output(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        return (done.stdout + done.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


class Tool:
    """A named way of running one program on one list. kind: 'fetch' or 'limit' (decode limit).
    expected_files: the files this tool must write, when not the scenario's."""

    expected_files: int | None = None

    def __init__(self, name: str, kind: str = "fetch"):
        self.name, self.kind = name, kind

    def unavailable(self) -> str | None:
        return None

    def command(self, urls: str, paths: str, out: str) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str] | None:
        return None

    # Exit codes worth a word in the table when the tool printed nothing (aria2c -q prints nothing).
    exit_meanings: dict[int, str] = {}

    def explain(self, exit_code: int) -> str:
        return self.exit_meanings.get(exit_code, "")


class Imgfetch(Tool):
    """With `only_list`, it fetches that list instead of the scenario's: one row, for the start-up cost."""

    def __init__(self, binary: str, name: str = "imgfetch", extra: tuple[str, ...] = (),
                 only_list: tuple[str, int] | None = None):
        super().__init__(name)
        self.binary, self.extra, self.only_list = binary, extra, only_list
        if only_list:
            self.expected_files = only_list[1]

    def unavailable(self) -> str | None:
        if not os.access(self.binary, os.X_OK):
            return "not built"
        help_text = _output([self.binary, "--help", "all"])  # every option (-h shows the common ones)
        for arg in self.extra:
            if arg.startswith("--") and not re.search(re.escape(arg) + r"\b", help_text):
                return "n/a (option not available)"
        return None

    def command(self, urls, paths, out):
        return [self.binary, self.only_list[0] if self.only_list else urls, "-o", out, "-j", str(CONCURRENCY),
                "--per-host", str(CONCURRENCY), "-q", *self.extra]


class Curl(Tool):
    """curl --parallel with a config file: one `url` and one `output` (a base name) per line pair."""
    exit_meanings = {7: "could not connect", 22: "HTTP error status (--fail)", 28: "timeout"}

    def __init__(self):
        super().__init__("curl")

    def unavailable(self):
        return None if shutil.which("curl") else "not installed"

    _made: set[str] = set()  # configs written by this bench process (lists change with the port)

    @classmethod
    def config_for(cls, urls: str) -> str:
        config = urls + ".curl"
        if config not in cls._made:
            cls._made.add(config)
            with open(urls) as src, open(config, "w") as dst:
                for url in filter(None, (line.strip() for line in src)):
                    dst.write(f'url = "{url}"\noutput = "{url.rsplit("/", 1)[1]}"\n')
        return config

    def command(self, urls, paths, out):
        return ["curl", "--parallel", "--parallel-max", str(CONCURRENCY), "-s", "-S", "--fail",
                "--output-dir", out, "-K", self.config_for(urls)]


class Wget2(Tool):
    exit_meanings = {4: "network failure", 8: "server issued an error response"}

    def __init__(self):
        super().__init__("wget2")

    def unavailable(self):
        return None if shutil.which("wget2") else "not installed"

    def command(self, urls, paths, out):
        # No config files, no HSTS/HPKP databases, no robots.txt, flat output directory.
        return ["wget2", f"--max-threads={CONCURRENCY}", "-i", urls, "-P", out, "-q", "--no-config",
                "--no-robots", "--no-host-directories", "--no-directories", "--no-hsts", "--no-hpkp"]


class Aria2c(Tool):
    exit_meanings = {2: "timeout", 3: "resource not found", 6: "network problem",
                     13: "file already existed: aria2c counts the list's repeated URLs as errors"}

    def __init__(self):
        super().__init__("aria2c")

    def unavailable(self):
        return None if shutil.which("aria2c") else "not installed"

    def command(self, urls, paths, out):
        return ["aria2c", "-j", str(CONCURRENCY), "-x", "1", "-i", urls, "-d", out, "-q", "--no-conf",
                "--console-log-level=error", "--summary-interval=0", "--auto-file-renaming=false",
                "--allow-overwrite=true"]


class Img2dataset(Tool):
    def __init__(self, venv: str):
        super().__init__("img2dataset")
        self.binary = os.path.join(venv, "bin", "img2dataset")

    def unavailable(self):
        return None if os.access(self.binary, os.X_OK) else "not installed (pip install into .bench/venv failed)"

    def command(self, urls, paths, out):
        # It wants to create its output folder itself; the runner made it empty, which it accepts.
        return [self.binary, "--url_list", urls, "--input_format", "txt", "--output_folder", out,
                "--output_format", "files", "--thread_count", str(CONCURRENCY), "--processes_count", "1",
                "--disable_all_reencoding", "True"]

    def env(self):
        # No update checks or telemetry over the network: only loopback is used here.
        return {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "WANDB_MODE": "disabled",
                "HF_HUB_OFFLINE": "1"}


class Img2datasetShards(Img2dataset):
    """img2dataset building WebDataset shards from a table with captions (CSV or Parquet): 256×256
    center crops re-encoded as JPEG (its default encoding, quality 95), one process of 16 threads.
    With `only_list`, the table it reads instead of the scenario's: one row, for the start-up cost."""

    def __init__(self, venv: str, input_format: str = "csv", only_list: tuple[str, int] | None = None):
        super().__init__(venv)
        self.name = "img2dataset webdataset" + (", 1 row (start-up)" if only_list else "")
        self.input_format, self.only_list = input_format, only_list
        if only_list:
            self.expected_files = only_list[1]

    def command(self, urls, paths, out):
        return [self.binary, "--url_list", self.only_list[0] if self.only_list else urls, "--input_format", self.input_format,
                "--url_col", "url", "--caption_col", "caption",
                "--output_folder", out, "--output_format", "webdataset", "--image_size", "256",
                "--resize_mode", "center_crop", "--thread_count", str(CONCURRENCY), "--processes_count", "1"]


class DecodeLimit(Tool):
    """decode_limit.c: the same files from disk, decoded with one thread per core, no network."""

    def __init__(self, binary: str, mode: str, write_ppm: bool = False):
        name = f"decode limit ({mode}{', write PPM' if write_ppm else ''})"
        super().__init__(name, kind="limit")
        self.binary, self.mode, self.write_ppm = binary, mode, write_ppm

    def unavailable(self):
        return None if os.access(self.binary, os.X_OK) else "not built"

    def command(self, urls, paths, out):
        return [self.binary, "-m", self.mode, "-l", paths, *(["-w", out] if self.write_ppm else [])]


class SparkFetch(Tool):
    """Scripts/spark-fetch on Spark's local mode: N partitions, each piped through one imgfetch
    worker, the scenario's concurrency shared among them. With `only_list`, it fetches that list
    instead of the scenario's: one URL, for Spark's fixed start-up cost."""

    def __init__(self, binary: str, root: str, partitions: int = 2, only_list: tuple[str, int] | None = None):
        super().__init__(f"spark-fetch local[{partitions}]" + (", 1 URL (start-up)" if only_list else ""))
        self.binary, self.root, self.partitions, self.only_list = binary, root, partitions, only_list
        if only_list:
            self.expected_files = only_list[1]

    def unavailable(self):
        if not os.access(os.path.join(self.root, ".venv-spark", "bin", "python"), os.X_OK):
            return "not installed (Scripts/install-deps --with-spark)"
        return None

    def command(self, urls, paths, out):
        each = str(max(1, CONCURRENCY // self.partitions))
        return [os.path.join(self.root, "Scripts", "spark-fetch"), self.only_list[0] if self.only_list else urls,
                "-o", out, "--partitions", str(self.partitions), "--master", f"local[{self.partitions}]",
                "--imgfetch", self.binary, "--conf", "spark.ui.enabled=false",
                "--", "-j", each, "--per-host", each, "-q"]


class ImgfetchS3(Imgfetch):
    """imgfetch -o s3://BUCKET/PREFIX into a real S3 server on loopback: moto's, checking every
    signature (Scripts/test-support/s3_store.py serve, from the tests' venv), addressed directly. The work
    directory is the run's output directory, so its files are counted as for `-o DIR`."""

    def __init__(self, binary: str, root: str):
        super().__init__(binary, "imgfetch -o s3 (moto)")
        self.root = root
        self.store: dict[str, str] | None = None

    def unavailable(self):
        if not os.access(os.path.join(self.root, ".venv-tests", "bin", "python"), os.X_OK):
            return "not installed (Scripts/install-deps)"
        return super().unavailable()

    def _start(self) -> dict[str, str]:
        if self.store is None:
            process = subprocess.Popen([os.path.join(self.root, ".venv-tests", "bin", "python"),
                                        os.path.join(self.root, "Scripts", "test-support", "s3_store.py"), "serve", "--bucket", "bench",
                                        "--log", os.devnull, "--faults", os.devnull],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.store = json.loads(process.stdout.readline())

            def stop():
                process.stdin.close()
                process.wait(timeout=30)
            atexit.register(stop)
        return self.store

    def command(self, urls, paths, out):
        self._start()
        # moto's signature check fails on keys with characters such as "(" (AWS accepts them).
        prefix = re.sub(r"[^A-Za-z0-9_-]", "_", os.path.basename(out))
        return [self.binary, urls, "-o", f"s3://bench/{prefix}", "--work-dir", out, "-j", str(CONCURRENCY),
                "--per-host", str(CONCURRENCY), "-q", *self.extra]

    def env(self):
        store = self._start()
        return {**os.environ, "AWS_ACCESS_KEY_ID": store["access_key"], "AWS_SECRET_ACCESS_KEY": store["secret_key"],
                "AWS_ENDPOINT_URL": store["store"], "AWS_REGION": "us-east-1"}


def versions(imgfetch: str, venv: str) -> dict[str, str]:
    """One line per tool and library that the numbers depend on."""
    def first(command: list[str]) -> str:
        text = _output(command)
        return text.splitlines()[0] if text else "not installed"

    def package(name: str) -> str:
        return _output(["dpkg-query", "-W", "-f", "${Version}", name]) or "?"

    python = os.path.join(venv, "bin", "python")
    img2dataset = _output([python, "-c", "import importlib.metadata as m; print(m.version('img2dataset'))"])
    return {
        "imgfetch": first([imgfetch, "--version"]),
        "curl": first(["curl", "--version"]),
        "wget2": first(["wget2", "--version"]),
        "aria2c": first(["aria2c", "--version"]),
        "img2dataset": img2dataset.splitlines()[-1] if img2dataset else "not installed",
        "nginx": first(["nginx", "-v"]),
        "libjpeg-turbo": package("libjpeg62-turbo"),
        "libpng": package("libpng16-16"),
        "libwebp": package("libwebp7"),
        "giflib": package("libgif7"),
        "libavif (dav1d, aom)": f"{package('libavif15')} ({package('libdav1d6')}, {package('libaom3')})",
        "libcurl": package("libcurl4"),
        "gcc": first(["gcc", "--version"]),
        "swift": first(["swift", "--version"]),
        "hyperfine": first(["hyperfine", "--version"]) if shutil.which("hyperfine") else "not installed",
        "kernel": first(["uname", "-sr"]),
    }
