"""Runs one command under /usr/bin/time and collects what the table needs.

One Run holds a single measured execution: wall time (from time.perf_counter around the
process, finer than GNU time's 10 ms %e), user+sys CPU and peak RSS (GNU time's %U %S %M, which
cover the process and every child it waited for), the exit code, the requests nginx logged
during the run, the image files found in the output directory, and the CPU that *other*
processes used meanwhile (this machine is shared: a busy neighbour shows up there).
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
import subprocess
import tarfile
import time

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif", ".ppm", ".pam")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass
class Run:
    exit_code: int
    wall: float
    cpu: float
    rss_kib: int
    requests: int = 0
    files: int = 0
    other_cpu: float = 0.0
    note: str = ""


def system_busy_seconds() -> float:
    """CPU seconds spent by all processes on all cores since boot (the 'cpu' line of /proc/stat)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / CLOCK_TICKS


def process_cpu_seconds(pids: list[int]) -> float:
    """utime + stime of the given processes (nginx's workers), 0 for any that vanished."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / CLOCK_TICKS


def count_images(directory: str) -> int:
    """Image files anywhere under directory (img2dataset and wget2 may make subfolders), and the
    image members of its tar shards (WebDataset output)."""
    count = 0
    for folder, _, files in os.walk(directory):
        count += sum(1 for f in files if f.lower().endswith(IMAGE_EXTENSIONS) and not f.startswith("."))
        for name in files:
            if name.endswith(".tar") and not name.startswith("."):
                try:
                    with tarfile.open(os.path.join(folder, name)) as tar:
                        count += sum(1 for m in tar if m.isfile() and m.name.lower().endswith(IMAGE_EXTENSIONS))
                except (OSError, tarfile.TarError):
                    pass
    return count


def run_measured(command: list[str], *, output_dir: str | None, log_path: str, timeout: float,
                 env: dict[str, str] | None = None, server=None, cwd: str | None = None) -> Run:
    """Runs command once into a fresh output_dir; never raises for a failing tool."""
    if output_dir:
        shutil.rmtree(output_dir, ignore_errors=True)
        os.makedirs(output_dir)
    time_file = log_path + ".time"
    wrapped = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", time_file, *command]
    log_offset = server.log_offset() if server else 0
    server_cpu = server.cpu_seconds() if server else 0.0
    busy = system_busy_seconds()
    note = ""
    start = time.perf_counter()
    with open(log_path, "wb") as log:
        try:
            process = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=log, env=env, cwd=cwd,
                                       start_new_session=True)
        except OSError as error:
            return Run(exit_code=127, wall=0.0, cpu=0.0, rss_kib=0, note=str(error))
        try:
            exit_code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)  # the session holds the tool and its children only
            process.wait()
            exit_code, note = 124, f"timeout after {timeout:.0f} s"
    wall = time.perf_counter() - start
    busy = system_busy_seconds() - busy
    server_cpu = (server.cpu_seconds() - server_cpu) if server else 0.0
    cpu, rss = 0.0, 0
    try:
        with open(time_file) as f:
            last = f.read().strip().splitlines()[-1].split()
        cpu, rss = float(last[1]) + float(last[2]), int(last[3])
    except (OSError, IndexError, ValueError):
        pass
    if exit_code != 0 and not note:
        note = last_error_line(log_path)
    run = Run(exit_code=exit_code, wall=wall, cpu=cpu, rss_kib=rss, note=note,
              other_cpu=max(0.0, busy - cpu - server_cpu))
    if server:
        run.requests = server.requests_since(log_offset)
    if output_dir:
        run.files = count_images(output_dir)
    return run


def last_error_line(log_path: str) -> str:
    try:
        with open(log_path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip() and "Command exited" not in line]
        return lines[-1][:120] if lines else ""
    except OSError:
        return ""


@dataclasses.dataclass
class Summary:
    """Medians over the counted runs, and what went wrong in any of them."""
    runs: list[Run]
    expected_files: int | None

    @property
    def ok_runs(self) -> list[Run]:
        return [r for r in self.runs if r.exit_code == 0]

    def median(self, field: str) -> float | None:
        values = [getattr(r, field) for r in (self.ok_runs or self.runs)]
        return statistics.median(values) if values else None

    @property
    def failures(self) -> list[Run]:
        return [r for r in self.runs if r.exit_code != 0]

    @property
    def file_mismatch(self) -> tuple[int, int] | None:
        """(found, expected) for the first successful run with the wrong file count."""
        if self.expected_files is None:
            return None
        for run in self.ok_runs:
            if run.files != self.expected_files:
                return run.files, self.expected_files
        return None

    def status(self) -> str:
        parts = []
        if self.failures:
            codes = sorted({r.exit_code for r in self.failures})
            first = self.failures[0].note
            parts.append(f"FAILED: exit {','.join(map(str, codes))} in {len(self.failures)}/{len(self.runs)} runs"
                         + (f" ({first})" if first else ""))
        mismatch = self.file_mismatch
        if mismatch:
            parts.append(f"FILES MISMATCH: {mismatch[0]} saved, {mismatch[1]} expected")
        return "; ".join(parts) or "ok"
