"""Writes the Markdown report: machine, versions, the targets of issues 8 and 14 (met / not met), one
table per scenario, the method, and the WAN-shaped scenarios (issue 13) with their own targets. Hand-written
notes after NOTES_MARKER in an existing report are kept.
"""
from __future__ import annotations

import os
import statistics
import platform

import wan
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

    def per_cpu_target(label, key, name, reference, limit):
        s = by_key.get(key)
        results = [s.results.get(tool) if s else None for tool in (name, reference)]
        if not all(isinstance(r, Summary) and r.runs for r in results):
            rows.append((label, "; ".join(f"{t}: {r.status() if isinstance(r, Summary) else r or 'not run'}"
                                          for t, r in zip((name, reference), results)), "not measured"))
            return
        if any(r.failures or r.file_mismatch for r in results):
            rows.append((label, "; ".join(f"{t}: {r.status()}" for t, r in zip((name, reference), results)), "not met"))
            return
        mine, theirs = (r.median("files") / max(r.median("cpu"), 1e-9) for r in results)
        rss = max(run.rss_kib for run in results[0].runs) / 1024
        ratio = mine / theirs
        rows.append((label, f"{ratio:.2f}× ({mine:.0f} vs {theirs:.0f} images per CPU s; imgfetch peak RSS {rss:.1f} MiB)",
                     "met" if ratio >= limit and rss <= RSS_LIMIT_MIB else "not met"))

    def per_cpu_after_startup(label, key, pairs, limit):
        """Images per CPU second with each tool's start-up (its 1-row run) taken off, mine over theirs."""
        s = by_key.get(key)
        results = [s.results.get(tool) if s else None for pair in pairs for tool in pair]
        if not all(isinstance(r, Summary) and r.runs and not r.failures and not r.file_mismatch for r in results):
            rows.append((label, "; ".join(f"{t}: {r.status() if isinstance(r, Summary) else r or 'not run'}"
                                          for pair in pairs for t, r in zip(pair, results)), "not measured"))
            return
        rates = []
        for run, startup in zip(results[0::2], results[1::2]):
            cpu, fixed = run.median("cpu"), startup.median("cpu")
            rates.append(((run.median("files") - 1) / max(cpu - fixed, 1e-9), cpu, fixed))
        (mine, my_cpu, my_start), (theirs, their_cpu, their_start) = rates
        rows.append((label, f"{mine / theirs:.2f}× ({mine:.0f} vs {theirs:.0f} images per CPU s after start-up; "
                            f"CPU {my_cpu:.2f} s vs {their_cpu:.2f} s, of which start-up {my_start:.2f} s vs {their_start:.2f} s; "
                            f"with start-up {results[0].median('files') / my_cpu:.0f} vs {results[2].median('files') / their_cpu:.0f})",
                     "met" if mine / theirs >= limit else "not met"))

    ratio_target("small set, full verification: wall ≤ 1.11 × decode limit", "small", "imgfetch",
                 "decode limit (verify)", 1.11)
    ratio_target("small set, `--no-decode`: wall ≤ 1.1 × curl", "small", "imgfetch --no-decode", "curl", 1.1)
    ratio_target("large set, `--no-decode`: wall ≤ 1.1 × curl", "large", "imgfetch --no-decode", "curl", 1.1)
    ratio_target("large set, verification: wall ≤ 1.11 × decode limit", "large", "imgfetch",
                 "decode limit (verify)", 1.11)
    ratio_target("small set: ≥ 3× faster than aria2c", "small", "imgfetch", "aria2c", 3, faster=True)
    ratio_target("small set: ≥ 5× faster than img2dataset", "small", "imgfetch", "img2dataset", 5, faster=True)
    per_cpu_target("dataset shards from Parquet (issue 18): ≥ 5× img2dataset's images per CPU second", "dataset",
                   "imgfetch webdataset", "img2dataset webdataset", 5)
    per_cpu_after_startup("dataset shards at 10,000 rows, start-up apart (issue 37): ≥ 2.5× img2dataset's images "
                          "per CPU second", "dataset10k",
                          [("imgfetch webdataset", "imgfetch webdataset, 1 row (start-up)"),
                           ("img2dataset webdataset", "img2dataset webdataset, 1 row (start-up)")], 2.5)
    scaleout = by_key.get("scaleout")
    label = "scale-out (issue 19): spark-fetch on local[2] ≤ 1.3 × one process + Spark's fixed start-up"
    names = ("imgfetch", "spark-fetch local[2]", "spark-fetch local[2], 1 URL (start-up)")
    results = [scaleout.results.get(n) if scaleout else None for n in names]
    if not all(isinstance(r, Summary) and r.runs for r in results):
        rows.append((label, "; ".join(f"{n}: {r.status() if isinstance(r, Summary) else r or 'not run'}"
                                      for n, r in zip(names, results)), "not measured"))
    elif any(r.failures or r.file_mismatch for r in results):
        rows.append((label, "; ".join(f"{n}: {r.status()}" for n, r in zip(names, results)), "not met"))
    else:
        single, spark, startup = (r.median("wall") for r in results)
        bound = 1.3 * single + startup
        # The JVM that pyspark starts is not waited for by its driver, so /usr/bin/time misses it:
        # CPU here is the whole machine's during the run, less nginx's.
        machine = [statistics.median(run.cpu + run.other_cpu for run in r.runs) for r in results]
        rows.append((label, f"{spark:.2f} s vs 1.3 × {single:.2f} s + {startup:.2f} s = {bound:.2f} s "
                            f"({(spark - startup) / single:.2f}× after start-up; machine CPU less nginx's "
                            f"{machine[1]:.2f} s vs {machine[0]:.2f} s, start-up {machine[2]:.2f} s)",
                     "met" if spark <= bound else "not met"))

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

    # Issue 14 asks for the bound on the mixed-format set by name; the row above covers it too.
    label = f"mixed formats (issue 14): imgfetch peak RSS ≤ {RSS_LIMIT_MIB} MiB (max over runs)"
    mixed = by_key.get("mixed")
    peaks = {tool.name: max(r.rss_kib for r in summary.runs) / 1024 for tool in (mixed.tools if mixed else [])
             if tool.name.startswith("imgfetch") and (summary := _summary(mixed, tool.name))}
    if peaks:
        rows.append((label, "; ".join(f"{name}: {mib:.1f} MiB" for name, mib in peaks.items()),
                     "met" if max(peaks.values()) <= RSS_LIMIT_MIB else "not met"))
    else:
        rows.append((label, "no counted run" if mixed else "scenario not run", "not measured"))

    dup = by_key.get("dup")
    summary = _summary(dup, "imgfetch") if dup else None
    if summary:
        want = dup.expected_requests["imgfetch"]
        got = summary.median("requests")
        rows.append((f"duplicate-heavy list: imgfetch makes {want} requests", f"{got:.0f}",
                     "met" if round(got) == want and not summary.failures else "not met"))
    if meta.get("version_ms") is not None:
        ms = meta["version_ms"]
        dynamic = meta.get("dynamic_version_ms")
        against = f"; the dynamic-runtime build {dynamic:.1f} ms" if dynamic is not None else ""
        rows.append(("`imgfetch --version` under 20 ms", f"{ms:.1f} ms ({meta['version_method']}{against})",
                     "met" if ms < 20 else "not met"))
    else:
        rows.append(("`imgfetch --version` under 20 ms", "not run", "not measured"))
    return rows


def render(meta, scenarios, existing_path: str | None = "BENCHMARKS.md", wan_cases=()) -> str:
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
    out += ["", "## Targets (issues 8 and 14)", "", "| target | measured | verdict |", "|---|---|---|"]
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
    out += meta.get("names_lines", [])
    out += ["## Method", "",
            "- Server: nginx on 127.0.0.1 at a free port, 1 worker, keep-alive (100,000 requests per "
            "connection), sendfile, access log on (one line per request: the request counts).",
            "- Clients, all at 16 concurrent transfers to the one host: `imgfetch LIST -o DIR -j 16 "
            "--per-host 16 -q`; `curl --parallel --parallel-max 16 -s -S --fail --output-dir DIR -K CFG`; "
            "`wget2 --max-threads=16 -i LIST -P DIR -q --no-config --no-robots --no-host-directories "
            "--no-directories --no-hsts --no-hpkp`; `aria2c -j 16 -x 1 -i LIST -d DIR -q --no-conf "
            "--console-log-level=error --summary-interval=0 --auto-file-renaming=false --allow-overwrite=true`; "
            "`img2dataset --input_format txt --output_format files --thread_count 16 --processes_count 1 "
            "--disable_all_reencoding True` (small and mixed sets).",
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
            "from disk into memory, picks the format by its magic bytes and decodes it with the same "
            "libjpeg-turbo, libpng, libwebp, giflib and libavif (dav1d, one thread per decoder). *verify* uses the "
            "settings imgfetch's verification uses (JPEG: 1/8 scale, which entropy-decodes every coefficient "
            "but runs only the DC term of the inverse DCT, `JDCT_IFAST`, no fancy upsampling, no color "
            "conversion; PNG: no transforms; WebP: YUV scaled to 1×1 without the loop filter, the bitstream "
            "parsed in full; GIF: every line of every frame; AVIF: AV1 decoded to YUV, no RGB conversion); "
            "*full* decodes to 8-bit RGB as `--save-as` does (libjpeg's and libwebp's defaults, GIF through its "
            "color table, AVIF with libavif's bilinear YUV-to-RGB); *write PPM* also "
            "writes each image as PPM (no temp file, no rename).",
            "- Corpus: deterministic (seeded), generated once by `Scripts/bench-support/gen_corpus.c` and cached "
            "under `.bench/corpus/`.", ""]
    if wan_cases or meta.get("wan_error"):
        out += wan_section(wan_cases, meta.get("wan_error", ""))
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


# --- WAN-shaped scenarios (issue 13, Scripts/bench-support/wan.py) -----------------------------

WAN_WALL_LIMIT, WAN_CPU_LIMIT = 1.05, 1.3


def _median(summary: Summary, field: str) -> float:
    return summary.median(field) or 0.0


def _usable(case, name) -> Summary | str:
    """The tool's Summary if it ran cleanly, else why not (for the targets)."""
    result = case.results.get(name)
    if not isinstance(result, Summary):
        return f"{name}: {result or 'not run'}"
    if not result.runs:
        return f"{name}: no counted run"
    if result.failures or result.file_mismatch:
        return f"{name}: {result.status()}"
    return result


def wan_table(case) -> list[str]:
    tls = case.tls
    curl = case.results.get("curl")
    curl = curl if isinstance(curl, Summary) and curl.runs and not curl.failures else None
    head = ("| tool | concurrency | HTTP | wall s | CPU s (user+sys) | peak RSS MiB | connections "
            + ("| full handshakes | resumed | reconnects resumed " if tls else "")
            + "| × curl (wall) | × curl (CPU) | files | runs | status |")
    lines = [head, "|---|--:|---|--:|--:|--:|--:|" + ("--:|--:|--:|" if tls else "") + "--:|--:|--:|--:|---|"]
    blanks = 9 + (3 if tls else 0)
    for tool in case.tools:
        j = case.concurrency.get(tool.name, "–")
        result = case.results.get(tool.name)
        if not isinstance(result, Summary) or not result.runs:
            why = result if not isinstance(result, Summary) else "no counted run"
            lines.append(f"| {tool.name} | {j} |{' – |' * blanks} 0 | {_cell(why or 'not run')} |")
            continue
        wall, cpu = _median(result, "wall"), _median(result, "cpu")
        rss = _median(result, "rss_kib") / 1024
        connections, accepted = _median(result, "connections"), _median(result, "accepted")
        conn = f"{connections:.0f}"
        if round(accepted) > round(connections):
            conn += f" (+{accepted - connections:.0f} without a request)"
        protocol = next((r.protocols for r in (result.ok_runs or result.runs) if r.protocols), "–")
        row = f"| {tool.name} | {j} | {protocol} | {wall:.2f} | {cpu:.2f} | {rss:.1f} | {conn} |"
        if tls:
            reconnects = _median(result, "reconnects")
            row += (f" {_median(result, 'full_handshakes'):.0f} | {_median(result, 'resumed'):.0f} "
                    f"| {_median(result, 'reconnects_resumed'):.0f} of {reconnects:.0f} |")
        vs_wall = f"{wall / _median(curl, 'wall'):.2f}" if curl and not result.failures else "–"
        vs_cpu = f"{cpu / _median(curl, 'cpu'):.2f}" if curl and not result.failures and _median(curl, "cpu") else "–"
        row += f" {vs_wall} | {vs_cpu} | {_median(result, 'files'):.0f} | {len(result.runs)} | {_cell(result.status())} |"
        lines.append(row)
    return lines


def wan_targets(cases) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) for each of issue 13's targets."""
    by_key = {c.key: c for c in cases}
    rows = []

    def versus(key, label, name, field, limit):
        case = by_key.get(key)
        if not case:
            rows.append((label, "scenario not run", "not measured"))
            return
        a, b = _usable(case, name), _usable(case, "curl")
        for r in (a, b):
            if isinstance(r, str):
                rows.append((label, r, "not met" if "FAILED" in r or "MISMATCH" in r else "not measured"))
                return
        x, y = _median(a, field), _median(b, field)
        ratio = x / y if y else float("inf")
        other = "CPU" if field == "wall" else "wall"
        o = "cpu" if field == "wall" else "wall"
        rows.append((label, f"{ratio:.2f}× ({x:.2f} s vs {y:.2f} s; {other} {_median(a, o):.2f} s vs "
                     f"{_median(b, o):.2f} s)", "met" if ratio <= limit else "not met"))

    for key, what in (("wan-h2", f"(a) one HTTP/2 host, -j {wan.H2_J}"),
                      ("wan-hosts", f"(b) {wan.HOSTS} HTTPS hosts, -j {wan.HOSTS_J}")):
        versus(key, f"{what}: imgfetch (verification on) wall ≤ {WAN_WALL_LIMIT} × curl", "imgfetch", "wall",
               WAN_WALL_LIMIT)
        versus(key, f"{what}: `imgfetch --no-decode` CPU ≤ {WAN_CPU_LIMIT} × curl", "imgfetch --no-decode",
               "cpu", WAN_CPU_LIMIT)

    plain = by_key.get("wan-plain")
    label = f"(c) plain HTTP, {wan.HOSTS} hosts: imgfetch at -j {wan.PLAIN_J} faster than every peer at its maximum"
    if not plain:
        rows.append((label, "scenario not run", "not measured"))
    else:
        mine = _usable(plain, "imgfetch")
        if isinstance(mine, str):
            rows.append((label, mine, "not met" if "FAILED" in mine or "MISMATCH" in mine else "not measured"))
        else:
            ours, parts, beaten, compared = _median(mine, "wall"), [], True, 0
            for tool in plain.tools:
                if tool.name.startswith("imgfetch"):
                    continue
                theirs = _usable(plain, tool.name)
                if isinstance(theirs, str):
                    parts.append(f"{_cell(theirs)} (not compared)")
                    continue
                wall = _median(theirs, "wall")
                compared += 1
                beaten &= ours < wall
                parts.append(f"{tool.name} -j {plain.concurrency[tool.name]}: {wall:.2f} s ({wall / ours:.2f}×)")
            measured = f"imgfetch {ours:.2f} s; " + "; ".join(parts)
            rows.append((label, measured, ("met" if beaten else "not met") if compared else "not measured"))
        rss_limit = wan.RSS_BASE_MIB + wan.RSS_PER_TRANSFER_KIB * wan.PLAIN_J / 1024
        label = (f"(c) imgfetch -j {wan.PLAIN_J}: peak RSS ≤ {wan.RSS_BASE_MIB} MiB + {wan.RSS_PER_TRANSFER_KIB} KiB × "
                 f"{wan.PLAIN_J} = {rss_limit:.1f} MiB (max over runs)")
        runs = [r for tool in plain.tools if tool.name.startswith("imgfetch")
                for r in (_summary(plain, tool.name).runs if _summary(plain, tool.name) else [])]
        if runs:
            worst = max(r.rss_kib for r in runs) / 1024
            rows.append((label, f"{worst:.1f} MiB", "met" if worst <= rss_limit else "not met"))
        else:
            rows.append((label, "not run", "not measured"))

    hosts = by_key.get("wan-hosts")
    label1 = f"TLS, {wan.HOSTS} hosts at `--per-host 6`: at most one full handshake per connection"
    label2 = f"TLS, {wan.HOSTS} hosts at `--per-host 6`: resumed sessions for reconnects"
    variants = [(t.name, _summary(hosts, t.name)) for t in hosts.tools if t.name.startswith("imgfetch")] if hosts else []
    variants = [(n, s) for n, s in variants if s]
    if not variants:
        why = "scenario not run" if not hosts else "; ".join(
            f"{t.name}: {hosts.results.get(t.name)}" for t in hosts.tools if t.name.startswith("imgfetch"))
        rows += [(label1, _cell(why), "not measured"), (label2, _cell(why), "not measured")]
        return rows
    first, second, ok1, ok2, any_reconnect = [], [], True, True, False
    for name, summary in variants:
        runs = summary.runs
        full, conns = sum(r.full_handshakes for r in runs), sum(r.connections for r in runs)
        accepted = sum(r.accepted for r in runs)
        reconnects, resumed = sum(r.reconnects for r in runs), sum(r.reconnects_resumed for r in runs)
        ok1 &= all(r.full_handshakes <= r.connections and r.accepted <= r.connections for r in runs)
        ok2 &= resumed == reconnects
        any_reconnect |= reconnects > 0
        n = len(runs)
        first.append(f"{name}: {full / n:.0f} full handshakes, {conns / n:.0f} connections with requests, "
                     f"{accepted / n:.0f} accepted")
        second.append(f"{name}: {resumed / n:.0f} of {reconnects / n:.0f} reconnects resumed "
                      f"({sum(r.resumed for r in runs) / n:.0f} resumed in all)")
    per_run = " (per run, mean of the counted runs)"
    rows.append((label1, "; ".join(first) + per_run, "met" if ok1 else "not met"))
    rows.append((label2, "; ".join(second) + per_run,
                 ("met" if ok2 else "not met") if any_reconnect else "not measured (no reconnect happened)"))
    return rows


def wan_section(cases, error: str = "") -> list[str]:
    out = ["## WAN-shaped scenarios", ""]
    if error:
        return out + [f"Not run: {_cell(error)}", ""]
    out += ["One nginx of its own (`Scripts/bench-support/nginx-wan.conf.in`): host `img-N.imgfetch.test` is "
            "127.0.1.N (N = 1…250), each address with its own listening sockets; HTTPS with HTTP/2 on one port "
            "and plain HTTP on another; a certificate made for each bench by `openssl req -x509` (P-256, signed "
            "by a CA made alongside it; SANs `*.imgfetch.test`, 127.0.0.1 and every host address), verified by "
            "every tool against that CA; every response sent at 100 KB/s (`limit_rate 100k`, with "
            "`sendfile_max_chunk 16k` so that the limit holds for small files too), so a 40 KB image takes about "
            "a third of a second and the transfers overlap as over a WAN.",
            "",
            "*concurrency*: what the tool ran at (imgfetch `-j`; curl `--parallel-max`; wget2 `--max-threads` × "
            "`--http2-request-window`; aria2c `-j`; img2dataset `--thread_count`). *HTTP*: the protocol nginx "
            "logged. *connections*: connections that carried a request (from the access log's `$connection`); "
            "*without a request*: connections nginx accepted (stub_status) that never sent one. *full "
            "handshakes* / *resumed*: connections by `$ssl_session_reused`. *reconnects resumed*: of the "
            "connections opened to a host while another connection to it was already serving a request "
            "(so its handshake was over and the client had been sent that host's session ticket), how many "
            "resumed it. *× curl*: over curl's median in the same "
            "case. Medians of the counted runs, as above.",
            "",
            "### Targets (issue 13)", "", "| target | measured | verdict |", "|---|---|---|"]
    out += [f"| {t} | {_cell(m)} | **{verdict}** |" for t, m, verdict in wan_targets(cases)]
    out.append("")
    for case in cases:
        out += [f"### {case.title}", ""]
        if case.notes:
            out += case.notes + [""]
        out += wan_table(case)
        extra = []
        if case.other_cpu is not None:
            extra.append(f"Other CPU: {case.other_cpu:.2f} s per run (median)")
        if case.server_cpu is not None:
            extra.append(f"nginx: {case.server_cpu:.2f} s of CPU per run (median)")
        if extra:
            out += ["", ". ".join(extra) + "."]
        out.append("")
    out += ["### Method (WAN-shaped)", "",
            "- Host names for the tools with a resolve option: imgfetch `--resolve HOST:PORT:ADDR` (one per "
            "host), curl `resolve = ...` lines in its `-K` config. The others get the same list with the "
            "addresses in place of the names (`https://127.0.1.N:PORT/...`): wget2 1.99 has no "
            "`--dns-cache-preload`, aria2c and img2dataset no resolve option at all; they verify the address "
            "against the certificate's IP SANs and send no SNI.",
            "- CA file: imgfetch and curl `--cacert`, wget2 and aria2c `--ca-certificate`, img2dataset "
            "`SSL_CERT_FILE` (urllib's default context). wget2 also gets `--tls-resume` with a new "
            "`--tls-session-file` each run (resumption is off by default in wget2) and `--no-ocsp`.",
            "- Commands: `imgfetch LIST -o DIR -j N -q --cacert CA --resolve … [--no-decode | --http1.1]` "
            "(`--per-host` left at its default, 6); `curl --parallel --parallel-max N -s -S --fail --cacert CA "
            "--output-dir DIR -K CFG`; `wget2 --max-threads=T --http2-request-window=W …` (T × W = N; over "
            "HTTPS one thread with N streams for one host, N threads with one stream each for 250 hosts); "
            "`aria2c -j N -x 1 --ca-certificate CA …`; `img2dataset --thread_count N --processes_count 1 …`; "
            "otherwise as in the Method above.",
            "- Concurrency: (a) 64 and (b) 256 for every tool; (c) imgfetch 1000, curl 300 (its cap), wget2, "
            "aria2c and img2dataset 1000, imgfetch's (none of them has a lower cap).",
            "- Lists: the small set's files (2000, 500 with `--quick`). (a) all on img-1, in file order; (b) and "
            "(c) file i on host i mod 250 + 1, then shuffled with a fixed seed, so a host has 8 files and, "
            "at any moment, several transfers or none.",
            "- One warm-up round on the first eighth of each list, then the counted rounds (2; 1 with "
            "`--quick`; `--runs` sets both; img2dataset, which needs 5–6 s to start and is the slowest by far, "
            "has 1); tools alternate run by run; output into a new ext4 per run as above.", ""]
    return out
