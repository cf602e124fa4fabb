"""Writes the Markdown report: machine, versions, issue 8's targets (met / not met), one table per
scenario, and the method. Hand-written notes after NOTES_MARKER in an existing report are kept.
"""
from __future__ import annotations

import os
import platform

from measure import Summary

NOTES_MARKER = "<!-- Notes below this line are written by hand and kept when Scripts/bench rewrites the file. -->"
RSS_LIMIT_MIB = 64


def machine_info() -> dict:
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    return {"nproc": os.cpu_count(), "cpu": cpu, "ram_gib": mem_kib / 1024 / 1024, "arch": platform.machine()}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _summary(scenario, name) -> Summary | None:
    result = scenario.results.get(name)
    return result if isinstance(result, Summary) and result.runs else None


def _wall(scenario, name) -> float | None:
    summary = _summary(scenario, name)
    return summary.median("wall") if summary and not summary.failures else None


def _ratio(scenario, name, reference) -> float | None:
    a, b = _wall(scenario, name), _wall(scenario, reference)
    return a / b if a and b else None


def scenario_table(scenario) -> list[str]:
    lines = ["| tool | wall s | best wall s | CPU s (user+sys) | peak RSS MiB | requests | files | × curl (wall) "
             "| × decode limit (wall) | runs | status |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for tool in scenario.tools:
        result = scenario.results.get(tool.name)
        if not isinstance(result, Summary):
            lines.append(f"| {tool.name} |{' – |' * 8} 0 | {_cell(result or 'not run')} |")
            continue
        if not result.runs:
            lines.append(f"| {tool.name} |{' – |' * 8} 0 | no counted run |")
            continue
        wall, cpu, rss = result.median("wall"), result.median("cpu"), result.median("rss_kib") / 1024
        requests = "–"
        if tool.kind == "fetch":
            requests = f"{result.median('requests'):.0f}"
            want = scenario.expected_requests.get(tool.name)
            if want is not None and round(result.median("requests")) != want:
                requests += f" (want {want})"
            lines_in_list = scenario.expected_requests.get("*")
            if want is None and lines_in_list is not None and round(result.median("requests")) != lines_in_list:
                requests += f" (of {lines_in_list} lines)"
        files = f"{result.median('files'):.0f}" if tool.kind == "fetch" or "PPM" in tool.name else "–"
        vs_curl = _ratio(scenario, tool.name, "curl") if tool.kind == "fetch" else None
        limit = scenario.limit_of.get(tool.name)
        vs_limit = _ratio(scenario, tool.name, limit) if limit else None
        fmt = lambda v: f"{v:.2f}" if v is not None else "–"  # noqa: E731
        best = min(r.wall for r in (result.ok_runs or result.runs))
        lines.append(f"| {tool.name} | {wall:.2f} | {best:.2f} | {cpu:.2f} | {rss:.1f} | {requests} | {files} "
                     f"| {fmt(vs_curl)} "
                     f"| {fmt(vs_limit)} | {len(result.runs)} | {_cell(result.status())} |")
    return lines


def targets(meta, scenarios) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) for each of issue 8's targets."""
    by_key = {s.key: s for s in scenarios}
    rows = []

    def ratio_target(label, key, name, reference, limit, faster=False):
        s = by_key.get(key)
        if not s:
            rows.append((label, "scenario not run", "not measured"))
            return
        for tool in (name, reference):
            result = s.results.get(tool)
            if not isinstance(result, Summary):
                rows.append((label, f"{tool}: {result or 'not run'}", "not measured"))
                return
            if result.failures or result.file_mismatch or not result.runs:
                rows.append((label, f"{tool}: {result.status()}", "not met"))
                return
        cpu = f"; CPU {_summary(s, name).median('cpu'):.2f} s vs {_summary(s, reference).median('cpu'):.2f} s"
        walls = f"{_wall(s, name):.2f} s vs {_wall(s, reference):.2f} s{cpu}"
        if faster:
            r = _wall(s, reference) / _wall(s, name)
            rows.append((label, f"{r:.2f}× faster ({walls})", "met" if r >= limit else "not met"))
        else:
            r = _ratio(s, name, reference)
            rows.append((label, f"{r:.2f}× ({walls})", "met" if r <= limit else "not met"))

    ratio_target("small set, full verification: wall ≤ 1.11 × decode limit", "small", "imgfetch",
                 "decode limit (verify)", 1.11)
    ratio_target("small set, `--no-decode`: wall ≤ 1.1 × curl", "small", "imgfetch --no-decode", "curl", 1.1)
    ratio_target("large set, `--no-decode`: wall ≤ 1.1 × curl", "large", "imgfetch --no-decode", "curl", 1.1)
    ratio_target("large set, verification: wall ≤ 1.11 × decode limit", "large", "imgfetch",
                 "decode limit (verify)", 1.11)
    ratio_target("small set: ≥ 3× faster than aria2c", "small", "imgfetch", "aria2c", 3, faster=True)
    ratio_target("small set: ≥ 5× faster than img2dataset", "small", "imgfetch", "img2dataset", 5, faster=True)

    worst, where, missing = 0.0, "", []
    for s in scenarios:
        for tool in s.tools:
            if not tool.name.startswith("imgfetch"):
                continue
            summary = _summary(s, tool.name)
            if summary is None:
                missing.append(f"{s.key}/{tool.name}")
                continue
            rss = max(r.rss_kib for r in summary.runs) / 1024
            if rss > worst:
                worst, where = rss, f"{s.key}: {tool.name}"
    measured = f"max {worst:.1f} MiB ({where})" if where else "nothing measured"
    if missing:
        measured += f"; not measured: {', '.join(missing)}"
    verdict = "met" if where and worst <= RSS_LIMIT_MIB else ("not met" if where else "not measured")
    rows.append((f"peak RSS ≤ {RSS_LIMIT_MIB} MiB in every scenario (max over all runs)", measured, verdict))

    dup = by_key.get("dup")
    summary = _summary(dup, "imgfetch") if dup else None
    if summary:
        want = dup.expected_requests["imgfetch"]
        got = summary.median("requests")
        rows.append((f"duplicate-heavy list: imgfetch makes {want} requests", f"{got:.0f}",
                     "met" if round(got) == want and not summary.failures else "not met"))
    if meta.get("version_ms") is not None:
        ms = meta["version_ms"]
        rows.append(("`imgfetch --version` under 20 ms", f"{ms:.1f} ms ({meta['version_method']})",
                     "met" if ms < 20 else "not met"))
    else:
        rows.append(("`imgfetch --version` under 20 ms", "not run", "not measured"))
    return rows


def render(meta, scenarios, existing_path: str | None = "BENCHMARKS.md") -> str:
    v = meta["versions"]
    out = ["# Benchmarks", "",
           f"Written by `Scripts/bench` ({meta['mode']} mode) on {meta['date']}; the run took "
           f"{meta['elapsed'] / 60:.1f} min. Rerun it to refresh; edit only below the marker at the end.", "",
           "## Machine", "",
           f"- {meta['nproc']} cores ({meta['arch']}), {meta['cpu']}, {meta['ram_gib']:.1f} GiB RAM, {v['kernel']}",
           f"- 1-minute load average when the bench started: {meta['load_before']:.2f}. The machine is shared "
           "with other work; the *other CPU* line under each table is the median CPU time that processes "
           "other than the tool and nginx used during one run (0 means the run had the machine to itself).",
           "", "## Versions", "", "| component | version |", "|---|---|"]
    out += [f"| {name} | {_cell(text)} |" for name, text in v.items()]
    out += ["", "## Targets (issue 8)", "", "| target | measured | verdict |", "|---|---|---|"]
    out += [f"| {t} | {_cell(m)} | **{verdict}** |" for t, m, verdict in targets(meta, scenarios)]
    out += ["", "## Results", "",
            "Medians of the counted runs (*best wall*: the fastest one). *× curl*: wall time over curl's in the "
            "same scenario (below 1 is faster). *× decode limit*: imgfetch's wall time over the decode limit's (verification: "
            "`decode limit (verify)`; `--save-as ppm`: `decode limit (full, write PPM)`). *requests*: lines "
            "nginx logged during the run. *files*: image files found in the tool's output directory "
            "afterwards; a count other than expected is marked in *status*.", ""]
    for s in scenarios:
        out += [f"### {s.title}", ""]
        out += [f"{note}" for note in s.notes]
        if s.notes:
            out.append("")
        out += scenario_table(s)
        if s.other_cpu is not None:
            out += ["", f"Other CPU: {s.other_cpu:.2f} s per run (median)."]
        out.append("")
    out += meta.get("rerun_lines", [])
    out += ["## Method", "",
            "- Server: nginx on 127.0.0.1 at a free port, 1 worker, keep-alive (100,000 requests per "
            "connection), sendfile, access log on (one line per request: the request counts).",
            "- Clients, all at 16 concurrent transfers to the one host: `imgfetch LIST -o DIR -j 16 "
            "--per-host 16 -q`; `curl --parallel --parallel-max 16 -s -S --fail --output-dir DIR -K CFG`; "
            "`wget2 --max-threads=16 -i LIST -P DIR -q --no-config --no-robots --no-host-directories "
            "--no-directories --no-hsts --no-hpkp`; `aria2c -j 16 -x 1 -i LIST -d DIR -q --no-conf "
            "--console-log-level=error --summary-interval=0 --auto-file-renaming=false --allow-overwrite=true`; "
            "`img2dataset --input_format txt --output_format files --thread_count 16 --processes_count 1 "
            "--disable_all_reencoding True` (small set only).",
            "- Each run writes into a new, empty ext4 file system made for it (2 GiB, `mkfs.ext4` on a loop "
            "device whose image lives on the bench's own disk, mounted at `.bench/out`; the PPM, 100,000-line "
            "and 10,000×10,000 scenarios: tmpfs, `/dev/shm`, for every tool; see their notes); stdout goes to "
            "/dev/null. Why: on this VM's ext4, creating thousands of files soon after thousands were deleted "
            "sends the inode allocator through the freed inodes (`find_inode_bit` → `recently_deleted`), "
            "about 0.5 ms of kernel time per file, which landed on whichever tool ran next (38% of an imgfetch "
            "small-set run's CPU in one `perf` profile; curl's small-set time moved from 0.27 s to 0.82 s "
            "between two bench runs ten minutes apart). Everything else the disk costs stays in: aria2c's "
            "three `fsync` calls per file, for one, reach the disk. Without root the runs share `.bench/out` "
            "and their outputs are moved aside until the bench ends. Wall "
            "time: `time.perf_counter` around the process; CPU time (user+sys, children included) and peak "
            "RSS: GNU `time -f '%e %U %S %M'`.",
            "- Tools alternate run by run (A B C … A B C …): one warm-up round (on the head of the list where "
            "the scenario says so), then the counted rounds (5 by default; fewer where the scenario says so, "
            "to keep the whole bench under 15 minutes). A failing tool is reported with its exit code, not "
            "dropped.",
            "- Decode limit: `Scripts/bench-support/decode_limit.c`, one pthread per core, reads each file "
            "from disk into memory and decodes it with the same libjpeg-turbo and libpng. *verify* uses the "
            "settings imgfetch's verification uses (JPEG: 1/8 scale, which entropy-decodes every coefficient "
            "but runs only the DC term of the inverse DCT, `JDCT_IFAST`, no fancy upsampling, no color "
            "conversion; PNG: no transforms); *full* decodes to RGB with default settings; *write PPM* also "
            "writes each image as PPM (no temp file, no rename).",
            "- Corpus: deterministic (seeded), generated once by `Scripts/bench-support/gen_corpus.c` and cached "
            "under `.bench/corpus/`.", ""]
    notes = ""
    if existing_path and os.path.exists(existing_path):
        with open(existing_path) as f:
            previous = f.read()
        if NOTES_MARKER in previous:
            notes = previous.split(NOTES_MARKER, 1)[1].strip("\n")
    out += [NOTES_MARKER, ""]
    if notes:
        out += [notes, ""]
    return "\n".join(out)
