"""The re-run scenario (issue 7): the small set fetched twice into one output directory, the
second time with the cache index of the first. What does the second run ask the server, what
does it transfer, which files does it touch, and how long does it take?

nginx serves the same corpus under three prefixes (see nginx.conf.in):
  /            its defaults: ETag and Last-Modified, no Cache-Control
  /revalidate/ adds Cache-Control: no-cache, so every entry must be revalidated
  /maxage/     `expires 1h`: Cache-Control: max-age=3600
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
import time

from measure import run_measured

VARIANTS = [
    ("nginx defaults (ETag, Last-Modified)", ""),
    ("Cache-Control: no-cache", "/revalidate"),
    ("Cache-Control: max-age=3600", "/maxage"),
]


@dataclasses.dataclass
class RerunResult:
    variant: str
    first_wall: float
    second_wall: float
    second_cpu: float
    second_rss_mib: float
    requests: int
    not_modified: int
    body_bytes: int
    files_changed: int
    files: int
    exit_codes: tuple[int, int]


def _snapshot(directory: str) -> dict[str, tuple[int, int, int]]:
    """Inode, size and modification time (ns) of every image file: equal means untouched."""
    result = {}
    for entry in os.scandir(directory):
        if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
            info = entry.stat(follow_symlinks=False)
            result[entry.name] = (info.st_ino, info.st_size, info.st_mtime_ns)
    return result


def _log_lines(server, offset: int) -> list[tuple[int, int]]:
    """(status, body bytes) of every request nginx logged since offset."""
    time.sleep(0.02)
    with open(server.access_log, "rb") as f:
        f.seek(offset)
        lines = f.read().decode().splitlines()
    return [(int(status), int(sent)) for status, sent, _ in (line.split(" ", 2) for line in lines)]


def _prefixed_list(urls_path: str, base: str, prefix: str, lists_dir: str, name: str) -> str:
    with open(urls_path) as f:
        urls = [line.strip() for line in f if line.strip()]
    path = os.path.join(lists_dir, f"rerun-{name}.txt")
    with open(path, "w") as f:
        f.write("".join(base + prefix + url[len(base):] + "\n" for url in urls))
    return path


def run_rerun(imgfetch: str, bench_dir: str, server, small_urls: str, runs: int, renew_output) -> list[RerunResult]:
    print("bench: re-run with the cache index (issue 7)", flush=True)
    results = []
    for variant, prefix in VARIANTS:
        urls = _prefixed_list(small_urls, server.base_url, prefix, os.path.join(bench_dir, "lists"),
                              prefix.strip("/") or "plain")
        out = os.path.join(bench_dir, "out", "rerun")
        log = os.path.join(bench_dir, "logs", "rerun.log")
        command = [imgfetch, urls, "-o", out, "-j", "16", "--per-host", "16", "-q"]
        samples = []
        for _ in range(runs):
            renew_output()
            first = run_measured(command, output_dir=out, log_path=log, timeout=300, server=server)
            before = _snapshot(out)
            offset = server.log_offset()
            second = run_measured(command, output_dir=None, log_path=log, timeout=300, server=server)
            requests = _log_lines(server, offset)
            after = _snapshot(out)
            changed = sum(1 for name, info in after.items() if before.get(name) != info) + len(set(before) - set(after))
            samples.append(RerunResult(variant, first.wall, second.wall, second.cpu, second.rss_kib / 1024,
                                       len(requests), sum(1 for status, _ in requests if status == 304),
                                       sum(sent for _, sent in requests), changed, len(after),
                                       (first.exit_code, second.exit_code)))
            shutil.rmtree(out, ignore_errors=True)
            s = samples[-1]
            print(f"  {variant:40} first {s.first_wall:6.2f} s  second {s.second_wall:6.2f} s  req {s.requests:5}"
                  f"  304 {s.not_modified:5}  bytes {s.body_bytes:9}  changed {s.files_changed}"
                  f"  exit {s.exit_codes}", flush=True)
        median = lambda values: statistics.median(values)  # noqa: E731
        results.append(RerunResult(
            variant, median([s.first_wall for s in samples]), median([s.second_wall for s in samples]),
            median([s.second_cpu for s in samples]), max(s.second_rss_mib for s in samples),
            max(s.requests for s in samples), min(s.not_modified for s in samples),
            max(s.body_bytes for s in samples), max(s.files_changed for s in samples),
            min(s.files for s in samples), max((s.exit_codes for s in samples), key=max)))
    return results


def render(results: list[RerunResult], corpus_age_days: float | None) -> list[str]:
    if not results:
        return []
    if corpus_age_days is None:
        age = "an unknown time"
    elif corpus_age_days < 2:
        age = f"about {corpus_age_days * 24:.1f} hours"
    else:
        age = f"about {corpus_age_days:.0f} days"
    out = ["### Re-run with the cache index: the small set twice into one directory", "",
           "First run into an empty directory, then the same command again (default `--cache-policy "
           "protocol`). *requests*, *304*, *body bytes*: what nginx logged for the second run; "
           "*files changed*: image files whose inode, size or modification time differ after it. "
           f"The corpus files were last modified {age} ago, so under nginx's defaults (no Cache-Control) "
           "the index gives them heuristic freshness (10 % of that age, at most a week; RFC 9111 §4.2.2).",
           "", "| server sends | first run s | second run s | second / first | CPU s (2nd) | peak RSS MiB (2nd) "
           "| requests | 304 | body bytes | files changed | files | exit codes |",
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in results:
        out.append(f"| {r.variant} | {r.first_wall:.2f} | {r.second_wall:.2f} | {r.second_wall / r.first_wall:.2f} "
                   f"| {r.second_cpu:.2f} | {r.second_rss_mib:.1f} | {r.requests} | {r.not_modified} "
                   f"| {r.body_bytes} | {r.files_changed} | {r.files} | {r.exit_codes[0]}, {r.exit_codes[1]} |")
    return out + [""]
