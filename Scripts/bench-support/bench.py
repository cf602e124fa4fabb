"""Scripts/bench's driver: corpus, nginx, the scenarios, the table. Run through Scripts/bench,
which installs the tools and builds imgfetch, gen_corpus and decode_limit first.

    bench.py --imgfetch BIN --bin-dir DIR [--quick] [--only a,b] [--runs N] [--output FILE]

Within a scenario the tools alternate run by run (A B C ... A B C ...): one warm-up round, then
the counted rounds; medians of the counted runs are reported. A scenario with a time budget
stops adding rounds once it is over budget and has at least 3 counted runs (the table says so).
The WAN-shaped group (wan.py: wan-h2, wan-hosts, wan-plain; `--only wan` for all three) runs last,
on an nginx of its own.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
from outputfs import OutputFilesystem  # noqa: E402
import report  # noqa: E402
import names  # noqa: E402
import rerun  # noqa: E402
import wan  # noqa: E402
from measure import Run, Summary, run_measured  # noqa: E402
from server import Server  # noqa: E402
from tools import (Aria2c, Curl, DecodeLimit, Img2dataset, Img2datasetShards, Imgfetch, ImgfetchS3, SparkFetch, Tool,  # noqa: E402
                   Wget2, versions)

FULL_SIZES = {"small": 2000, "large": 24, "png": 300, "dup": corpus.DUP_UNIQUE, "tiny": corpus.TINY_URLS,
              "mixed": 2000}
QUICK_SIZES = {"small": 300, "large": 6, "png": 60, "dup": 300, "tiny": 10_000, "mixed": 300}
WAN_FILES = {"full": 2000, "quick": 500}     # URLs per WAN case (wan.py)
WAN_RUNS = {"full": 2, "quick": 1}           # counted runs per WAN case: at 100 KB/s they are slow
RUN_TIMEOUT = 300.0
TMPFS_OUT = "/dev/shm/imgfetch-bench-out"  # removed by Scripts/bench's exit trap too


@dataclasses.dataclass
class Scenario:
    key: str
    title: str
    urls: str
    paths: str
    expected_files: int
    tools: list[Tool]
    counted: int
    budget: float                      # seconds; past it, stop after 3 counted rounds
    notes: list[str] = dataclasses.field(default_factory=list)
    limit_of: dict[str, str] = dataclasses.field(default_factory=dict)  # tool -> its decode limit
    expected_requests: dict[str, int] = dataclasses.field(default_factory=dict)
    max_runs: dict[str, int] = dataclasses.field(default_factory=dict)  # fewer counted runs for slow tools
    results: dict[str, Summary | str] = dataclasses.field(default_factory=dict)
    other_cpu: float | None = None     # median CPU seconds other processes used per run
    out_root: str | None = None        # where output directories go (default: output_root, on disk)
    warmup_lists: tuple[str, str] | None = None  # (urls, paths) for a shorter warm-up round
    run_timeout: float = RUN_TIMEOUT   # seconds one run may take


def output_root(bench_dir: str) -> str:
    """Where output directories go unless a scenario says otherwise: the disk the bench lives on."""
    return os.path.join(bench_dir, "out")


def tmpfs_root() -> str | None:
    """tmpfs for the scenarios whose output is too big or too many files to keep on disk."""
    return TMPFS_OUT if os.path.isdir("/dev/shm") else None


OUTPUT_FS: OutputFilesystem | None = None  # set by main()


def discard_output(out: str, bench_dir: str) -> None:
    """Gets a finished run's output out of the way. On disk it is only moved aside and deleted when
    the bench ends: creating thousands of files right after deleting thousands sends ext4's inode
    allocator through the freed inodes (find_inode_bit -> recently_deleted), a cost of the bench's
    own churn that landed on whichever tool ran next (see the Method section)."""
    if out.startswith(TMPFS_OUT + "/"):
        shutil.rmtree(out, ignore_errors=True)
        return
    if OUTPUT_FS and OUTPUT_FS.fresh:
        return  # the next run gets a new file system; this one's files go with the old one
    if not os.path.isdir(out):
        return
    trash = os.path.join(output_root(bench_dir), ".trash")
    os.makedirs(trash, exist_ok=True)
    os.rename(out, os.path.join(trash, f"{len(os.listdir(trash))}-{os.path.basename(out)}"))


def run_scenario(scenario: Scenario, bench_dir: str, server: Server) -> None:
    print(f"bench: {scenario.title}", flush=True)
    available: list[Tool] = []
    for tool in scenario.tools:
        reason = tool.unavailable()
        if reason:
            scenario.results[tool.name] = reason
        else:
            available.append(tool)
    runs: dict[str, list[Run]] = {t.name: [] for t in available}
    started = time.monotonic()
    counted_rounds = 0
    for round_index in range(1 + scenario.counted):
        warmup = round_index == 0
        for tool in available:
            if not warmup and len(runs[tool.name]) >= scenario.max_runs.get(tool.name, scenario.counted):
                continue
            out = os.path.join(scenario.out_root or output_root(bench_dir), scenario.key,
                               tool.name.replace(" ", "_").replace("/", "_"))
            log = os.path.join(bench_dir, "logs", f"{scenario.key}.{tool.name.replace(' ', '_')}.log")
            urls, paths = scenario.warmup_lists if warmup and scenario.warmup_lists else (scenario.urls,
                                                                                          scenario.paths)
            if OUTPUT_FS and not out.startswith(TMPFS_OUT + "/"):
                OUTPUT_FS.renew()
            command = tool.command(urls, paths, out)
            needs_dir = tool.kind == "fetch" or "-w" in command
            run = run_measured(command, output_dir=out if needs_dir else None, log_path=log,
                               timeout=scenario.run_timeout, env=tool.env(), server=server)
            if run.exit_code != 0 and not run.note:
                run.note = tool.explain(run.exit_code)
            if not needs_dir:
                run.files = scenario.expected_files  # the decode limit writes nothing to count
            discard_output(out, bench_dir)
            label = "warm-up" if warmup else f"run {len(runs[tool.name]) + 1}"
            print(f"  {tool.name:32} {label:8} {run.wall:7.2f} s  cpu {run.cpu:6.2f} s"
                  f"  rss {run.rss_kib / 1024:6.1f} MiB"
                  f"  req {run.requests:6}  files {run.files:6}  exit {run.exit_code}"
                  + (f"  {run.note}" if run.exit_code else ""), flush=True)
            if not warmup:
                runs[tool.name].append(run)
        if not warmup:
            counted_rounds += 1
            if counted_rounds >= 3 and time.monotonic() - started > scenario.budget \
                    and counted_rounds < scenario.counted:
                scenario.notes.append(f"Stopped after {counted_rounds} counted runs (time budget "
                                      f"{scenario.budget:.0f} s).")
                break
    for tool in available:
        scenario.results[tool.name] = Summary(runs[tool.name], tool.expected_files or scenario.expected_files)
    others = [r.other_cpu for rs in runs.values() for r in rs]
    scenario.other_cpu = statistics.median(others) if others else None


def version_time(imgfetch: str, bench_dir: str) -> tuple[float | None, str]:
    """Median wall time of `imgfetch --version` in ms, and how it was measured."""
    if shutil.which("hyperfine"):
        export = os.path.join(bench_dir, "logs", "version.json")
        done = subprocess.run(["hyperfine", "-N", "--warmup", "5", "--runs", "50", "--export-json", export,
                               f"{imgfetch} --version"], capture_output=True, text=True)
        if done.returncode == 0:
            with open(export) as f:
                return json.load(f)["results"][0]["median"] * 1000, "hyperfine -N, 5 warm-ups, 50 runs, median"
    times = []
    for _ in range(21):
        start = time.perf_counter()
        subprocess.run([imgfetch, "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:]) * 1000, "loop of 20 after 1 warm-up, median"


def build_scenarios(args, lists: corpus.Lists, bench_dir: str) -> list[Scenario]:
    quick = args.quick
    counted = args.runs or (2 if quick else 5)
    fetch = args.imgfetch
    limit = os.path.join(args.bin_dir, "decode_limit")
    venv = os.path.join(bench_dir, "venv")
    default, no_decode = Imgfetch(fetch), Imgfetch(fetch, "imgfetch --no-decode", ("--no-decode",))
    save_ppm = Imgfetch(fetch, "imgfetch --save-as ppm", ("--save-as", "ppm"))
    verify_limit, full_limit = DecodeLimit(limit, "verify"), DecodeLimit(limit, "full")
    ppm_limit = DecodeLimit(limit, "full", write_ppm=True)
    peers = [Curl(), Wget2(), Aria2c()]
    limits = {"imgfetch": verify_limit.name, "imgfetch --save-as ppm": ppm_limit.name}

    small_urls, small_paths, small_n = lists.set_list("small")
    large_urls, large_paths, large_n = lists.set_list("large")
    png_urls, png_paths, png_n = lists.set_list("png")
    dup_urls, dup_unique, dup_lines = lists.duplicate_list()
    tiny_urls, tiny_n = lists.tiny_list()
    huge_urls, huge_paths = lists.huge_list()
    mixed_urls, mixed_paths, mixed_n = lists.set_list("mixed")
    mixed_sizes = ", ".join(f"{ext} ~{kb:.0f} KB" for ext, kb in lists.mean_sizes("mixed").items())
    _, _, webp_quality, avif_speed, avif_quantizer = corpus.MIXED
    scenarios = [
        Scenario("small", f"Small JPEGs: {small_n} × 640×480 (~40 KB, every 4th progressive)", small_urls,
                 small_paths, small_n, [default, no_decode, *peers, Img2dataset(venv), verify_limit, full_limit],
                 counted, 200, limit_of=limits, max_runs={"img2dataset": min(counted, 3), "aria2c": min(counted, 3)},
                 notes=["`imgfetch` verifies by default; `--no-decode` only sniffs magic bytes. Both ran in the "
                        "same alternating rounds as the peers. aria2c and img2dataset, the slow ones, have at "
                        "most 3 counted runs (time budget)."]),
        Scenario("large", f"Large JPEGs: {large_n} × 4000×3000 (~1.7 MB)", large_urls, large_paths, large_n,
                 [default, no_decode, *peers, verify_limit, full_limit], counted, 90, limit_of=limits),
        Scenario("png", f"PNGs: {png_n} × 512×512, six color types, every 7th interlaced", png_urls, png_paths,
                 png_n, [default, no_decode, *peers, verify_limit, full_limit], counted, 90, limit_of=limits),
        Scenario("dup", f"Duplicate-heavy list: {dup_lines} lines, {dup_unique} distinct URLs × "
                 f"{corpus.DUP_COPIES}, shuffled", dup_urls, "", dup_unique, [default, *peers], counted, 60,
                 expected_requests={"imgfetch": dup_unique, "*": dup_lines}, max_runs={"aria2c": min(counted, 2)},
                 warmup_lists=(lists.head(dup_urls, dup_lines // 10), ""),
                 notes=[f"Requests: imgfetch should make {dup_unique} (one per distinct URL); a client that does "
                        f"not coalesce makes {dup_lines}. Files: {dup_unique} expected for every tool. "
                        f"Warm-up round on the first {dup_lines // 10} lines (the files are the small set's, "
                        "already in the page cache); aria2c is slow here, so it has at most 2 counted runs."]),
        Scenario("ppm", f"`--save-as ppm` on the small set: {small_n} × 640×480 → {small_n} PPMs "
                 f"(~0.9 MB each)", small_urls, small_paths, small_n, [save_ppm, ppm_limit],
                 min(counted, 3), 60, limit_of=limits, out_root=tmpfs_root(),
                 warmup_lists=(lists.head(small_urls, small_n // 10), lists.head(small_paths, small_n // 10)),
                 notes=[f"Each run writes ~{small_n * 921615 / 1e9:.1f} GB of pixels, to tmpfs (`/dev/shm`) for every tool "
                        "here: kept on disk until the bench ends, the runs' pixels would be written back "
                        "during later scenarios. "
                        "At most 3 counted runs (time budget); the warm-up round "
                        f"does the first {small_n // 10} files only (the small set is already in the page cache)."]),
        Scenario("tiny", f"{tiny_n:,}-line list of tiny images (64×64, ~2 KB)", tiny_urls, "", tiny_n,
                 [default, Curl()], min(counted, 3), 150, out_root=tmpfs_root(),
                 warmup_lists=(lists.head(tiny_urls, min(tiny_n, 5000)), ""),
                 notes=[f"{tiny_n:,} distinct URLs `/tiny/t-NNNNNN.jpg`; nginx `rewrite` maps each onto one "
                        "of 1000 files by its last three digits. At most 3 counted runs (time budget); the "
                        f"warm-up round fetches the first {min(tiny_n, 5000):,} URLs, which cover all 1000 files. "
                        f"Output directories are on tmpfs (`/dev/shm`) for every tool here: {tiny_n:,} files a "
                        "run are too many to keep on disk until the bench ends."]),
        Scenario("huge", "One 10,000×10,000 JPEG (4.2 MB) → 300 MB PPM", huge_urls, huge_paths, 1,
                 [save_ppm, default, ppm_limit], min(counted, 3), 60, limit_of=limits, out_root=tmpfs_root(),
                 notes=["For peak RSS: the bitmap is 300 MB, so a streaming decoder stays far below it. "
                        "Output on tmpfs, as for the PPM scenario."]),
        Scenario("mixed", f"Mixed formats: the small set re-encoded, {mixed_n} × 640×480, ¼ each JPEG, WebP, AVIF, "
                 "GIF", mixed_urls, mixed_paths, mixed_n,
                 [default, no_decode, *peers, Img2dataset(venv), verify_limit, full_limit], counted, 120,
                 limit_of=limits, max_runs={"img2dataset": min(counted, 3), "aria2c": min(counted, 3)},
                 notes=["File i of the small set stays the same JPEG when i mod 4 = 0 (so all of them are "
                        "baseline: the small set's progressive ones are at i mod 4 = 3) and is otherwise re-encoded "
                        f"from its decoded pixels (`gen_corpus mixed`): lossy WebP (libwebp, q{webp_quality}), AVIF "
                        f"(libavif with aom, speed {avif_speed}, quantizer {avif_quantizer}, 4:2:0), GIF (256 "
                        "colors: a 6×7×6 palette with ordered dither). "
                        f"Mean sizes: {mixed_sizes}. The list is in file order, so the formats alternate. "
                        "The decode limits decode each format with imgfetch's libraries and verification settings "
                        "(see the Method). img2dataset runs with `--disable_all_reencoding`, so it decodes nothing "
                        "here either; aria2c and img2dataset have at most 3 counted runs (time budget)."]),
    ]
    dataset_table, dataset_n = lists.dataset_table()
    venv_python = os.path.join(venv, "bin", "python")
    shard_options = ("--caption-column", "caption", "--output-format", "webdataset", "--save-as", "jpeg",
                     "--resize", "256", "--fit", "center-crop")
    shards = Imgfetch(fetch, "imgfetch webdataset", ("--input-format", "csv", *shard_options))
    dataset_notes = ("`--save-as jpeg --resize 256 --fit center-crop --output-format webdataset --caption-column caption` "
                     "against `img2dataset --output_format webdataset --image_size 256 --resize_mode center_crop "
                     "--caption_col caption --thread_count 16 --processes_count 1` (JPEG quality 95 for both, "
                     "their defaults). Files: image members in the output's tars. Throughput per CPU second is "
                     "images ÷ CPU seconds; img2dataset has at most 3 counted runs (time budget).")
    if os.access(venv_python, os.X_OK):
        parquet, parquet_n = lists.dataset_parquet(dataset_n, venv_python)
        big, big_n = lists.dataset_parquet(10_000, venv_python)
        one, _ = lists.dataset_parquet(1, venv_python)
        parquet_shards = Imgfetch(fetch, "imgfetch webdataset", shard_options)
        scenarios.append(
            Scenario("dataset", f"Dataset shards: the small set from a LAION-shaped Parquet table (url, caption, "
                     f"similarity), {parquet_n} × 640×480 → 256×256 center crops, JPEG q95, WebDataset tars", parquet, "",
                     parquet_n, [parquet_shards, Img2datasetShards(venv, "parquet")], counted, 150,
                     max_runs={"img2dataset webdataset": min(counted, 3)},
                     notes=["Both read the Parquet file (`imgfetch TABLE.parquet`, `img2dataset --input_format "
                            "parquet`). " + dataset_notes]))
        scenarios.append(
            Scenario("dataset10k", f"Dataset shards at 10,000 rows: the small set {big_n // parquet_n}× over "
                     "(distinct URLs), Parquet, 256×256 center crops, JPEG q95; each tool's start-up apart (a 1-row "
                     "table)", big, "", big_n,
                     [parquet_shards, Img2datasetShards(venv, "parquet"),
                      Imgfetch(fetch, "imgfetch webdataset, 1 row (start-up)", shard_options, only_list=(one, 1)),
                      Img2datasetShards(venv, "parquet", only_list=(one, 1))], counted, 600,
                     max_runs={"img2dataset webdataset": min(counted, 3),
                               "img2dataset webdataset, 1 row (start-up)": min(counted, 3)},
                     notes=["Images per CPU second after start-up: (rows − 1) ÷ (CPU at 10,000 rows − CPU "
                            "of the 1-row table). " + dataset_notes]))
    scenarios.append(
        Scenario("dataset-csv", f"Dataset shards: the small set from a CSV with captions, {dataset_n} × 640×480 → "
                 "256×256 center crops, JPEG q95, WebDataset tars", dataset_table, "", dataset_n,
                 [shards, Img2datasetShards(venv)], counted, 150, max_runs={"img2dataset webdataset": min(counted, 3)},
                 notes=["`imgfetch CSV --input-format csv …` against `img2dataset --input_format csv …`. " + dataset_notes]))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    one_url = lists.head(tiny_urls, 1)
    scenarios.append(
        Scenario("scaleout", f"Scale-out: the {tiny_n:,}-line tiny list through Scripts/spark-fetch on local[2] "
                 "against one imgfetch process", tiny_urls, "", tiny_n,
                 [default, SparkFetch(fetch, root), SparkFetch(fetch, root, only_list=(one_url, 1))],
                 min(counted, 3), 300, out_root=tmpfs_root(), warmup_lists=(lists.head(tiny_urls, 5000), ""),
                 notes=["`Scripts/spark-fetch LIST -o OUT --partitions 2 --master local[2] --imgfetch BIN -- -j 8 "
                        "--per-host 8 -q`: Spark reads the list, hashes every URL to its partition (the `--shard` "
                        "hash), sorts each partition by input position, pipes it through one imgfetch worker each, "
                        "and writes the results as Parquet; the single process runs `-j 16 --per-host 16`. "
                        "The same job on a one-URL list measures Spark's fixed cost (JVM, session, the stages, "
                        "the Parquet write). CPU counts the processes `/usr/bin/time` waited for: the driver, the "
                        "JVM and the workers it started. Output on tmpfs, as for the tiny list."]))
    scenarios.append(
        Scenario("s3", f"Object storage: the small set, {small_n} × 640×480, into a directory and into an S3 server "
                 "on loopback", small_urls, small_paths, small_n, [default, ImgfetchS3(fetch, root)], min(counted, 3), 120,
                 notes=["`imgfetch LIST -o s3://bench/RUN --work-dir OUT` against `imgfetch LIST -o OUT`: the same "
                        "fetch, then every file uploaded (signed PUT with the file's SHA-256, one per file, 8 upload "
                        "threads) to moto's S3 server (`Scripts/test-support/s3_store.py serve`, Python, checking every signature), "
                        "addressed directly. imgfetch's CPU is its own process's; the server's CPU is in the "
                        "machine's other CPU. At most 3 counted runs."]))
    # Issue 20: the cost of a list's length alone. No request is made (only-if-cached into an
    # empty directory: every line fails as not cached), so what grows is the per-line bookkeeping.
    no_network = Imgfetch(fetch, "imgfetch only-if-cached", ("--cache-policy", "only-if-cached", "--failures-are-data"))
    for count, label in ((100_000, "0.1M"), (1_000_000, "1M"), (10_000_000, "10M")):
        scenarios.append(
            Scenario(f"length-{label}", f"List length: {count:,} distinct URLs, no network", lists.length_list(count), "", 0,
                     [no_network], 1, 600, out_root=tmpfs_root(), warmup_lists=(lists.length_list(100_000), ""),
                     run_timeout=1800,
                     notes=["`imgfetch LIST -o EMPTY --cache-policy only-if-cached --failures-are-data`: every line "
                            "fails as not cached without a request (exit 0 under --failures-are-data), so the run is "
                            "the per-line bookkeeping alone. One counted run, after a warm-up on the 0.1M list; peak RSS "
                            "is the figure that matters."]))
    # Issue 31: the shipped binary links the Swift runtime in; the same commit with the runtime loaded
    # from the toolchain's shared libraries, in the same alternating rounds.
    if args.dynamic_imgfetch:
        dynamic = args.dynamic_imgfetch
        scenarios.append(
            Scenario("runtime", f"Static against dynamic Swift runtime: the small set, {small_n} × 640×480", small_urls,
                     small_paths, small_n,
                     [Imgfetch(fetch, "imgfetch (static runtime)"), Imgfetch(dynamic, "imgfetch (dynamic runtime)"),
                      Imgfetch(fetch, "imgfetch --no-decode (static runtime)", ("--no-decode",)),
                      Imgfetch(dynamic, "imgfetch --no-decode (dynamic runtime)", ("--no-decode",))],
                     counted, 150,
                     notes=["One commit, two builds: `Scripts/package --binary` (`--static-swift-stdlib`, stripped: the "
                            "binary every artifact ships) and `swift build -c release` (the Swift runtime's shared "
                            "libraries loaded from the toolchain). The four ran in the same alternating rounds."]))
    # A change that must not cost CPU per item: the same scenarios, this tree against a baseline
    # commit (Scripts/bench --baseline REV), in the same alternating rounds.
    if args.baseline_imgfetch:
        before, rev = args.baseline_imgfetch, args.baseline_name
        pair = lambda label, extra=(): [Imgfetch(before, f"{rev} {label}".rstrip(), extra),
                                        Imgfetch(fetch, f"this tree {label}".rstrip(), extra)]
        ab_note = (f"A/B: `{rev}` (`Scripts/bench --baseline {rev}`: its own `Scripts/package --binary`) against this "
                   "tree, each binary once per alternating round.")
        scenarios += [
            Scenario("ab-small", f"A/B, small set with `--no-decode`: {small_n} × 640×480", small_urls, small_paths,
                     small_n, pair("--no-decode", ("--no-decode",)), counted, 150, notes=[ab_note]),
            Scenario("ab-tiny", f"A/B, the {tiny_n:,}-line tiny list", tiny_urls, "", tiny_n, pair(""), counted, 300,
                     out_root=tmpfs_root(), warmup_lists=(lists.head(tiny_urls, min(tiny_n, 5000)), ""),
                     notes=[ab_note, "Output on tmpfs, as for the tiny list."]),
            Scenario("ab-dataset", f"A/B, dataset shards: {dataset_n} × 640×480 → 256×256 center crops, JPEG q95",
                     dataset_table, "", dataset_n,
                     pair("webdataset", shards.extra),
                     counted, 150, notes=[ab_note]),
        ]
    wanted = set(args.only.split(",")) if args.only else None
    if wanted and "length" in wanted:
        wanted |= {"length-0.1M", "length-1M", "length-10M"}
    return [s for s in scenarios if wanted is None or s.key in wanted]


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--imgfetch", required=True, help="the binary under test: the release one, the Swift runtime "
                        "linked in (Scripts/package --binary)")
    parser.add_argument("--dynamic-imgfetch", help="the same commit built by plain `swift build -c release` (the Swift "
                        "runtime loaded from the toolchain), for the runtime scenario's A/B")
    parser.add_argument("--baseline-imgfetch", help="a baseline commit's shipped binary, for the ab-* scenarios "
                        "(Scripts/bench --baseline REV builds it)")
    parser.add_argument("--baseline-name", default="baseline", help="the baseline's name in the tables (its commit)")
    parser.add_argument("--bin-dir", required=True, help="where gen_corpus and decode_limit were built")
    parser.add_argument("--bench-dir", default=".bench")
    parser.add_argument("--quick", action="store_true", help="fewer files and runs, for iteration")
    parser.add_argument("--only", help="comma-separated scenarios: small,large,png,dup,ppm,tiny,huge,mixed,dataset,dataset10k,dataset-csv,scaleout,s3,length,names,rerun,version,runtime, "
                        "wan-h2,wan-hosts,wan-plain (or wan for all three)")
    parser.add_argument("--runs", type=int, help="counted runs per scenario (default 5, quick 2; WAN cases 2, "
                        "quick 1)")
    parser.add_argument("--output", help="Markdown file to write (default BENCHMARKS.md; "
                        ".bench/BENCHMARKS-partial.md with --quick or --only)")
    args = parser.parse_args()
    args.imgfetch = os.path.abspath(args.imgfetch)
    if args.only:  # "wan" names the whole WAN-shaped group
        groups = {"wan": wan.KEYS, "ab": ("ab-small", "ab-tiny", "ab-dataset")}
        args.only = ",".join(k for key in args.only.split(",") for k in groups.get(key, (key,)))
    bench_dir = os.path.abspath(args.bench_dir)
    os.makedirs(os.path.join(bench_dir, "logs"), exist_ok=True)
    output = args.output or (os.path.join(bench_dir, "BENCHMARKS-partial.md") if args.quick or args.only
                             else "BENCHMARKS.md")
    began = time.monotonic()
    global OUTPUT_FS
    OUTPUT_FS = OutputFilesystem(bench_dir)
    www = corpus.ensure_corpus(bench_dir, os.path.join(args.bin_dir, "gen_corpus"), os.cpu_count() or 2)
    server = Server(os.path.join(bench_dir, "nginx"), www)
    # SIGTERM/SIGHUP end the bench like Ctrl-C does, so the finally below stops nginx.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    try:
        server.start()
        sizes = QUICK_SIZES if args.quick else FULL_SIZES
        lists = corpus.Lists(www, os.path.join(bench_dir, "lists"), server.base_url, sizes)
        scenarios = build_scenarios(args, lists, bench_dir)
        load_before = os.getloadavg()[0]
        for scenario in scenarios:
            run_scenario(scenario, bench_dir, server)
        rerun_results = []
        if not args.only or "rerun" in args.only.split(","):
            small_urls = lists.set_list("small")[0]
            rerun_results = rerun.run_rerun(args.imgfetch, bench_dir, server, small_urls, 1 if args.quick else 3,
                                            OUTPUT_FS.renew)
            first_file = os.path.join(www, "small", sorted(os.listdir(os.path.join(www, "small")))[0])
            corpus_age = (time.time() - os.path.getmtime(first_file)) / 86400
        names_result = None
        if not args.only or "names" in args.only.split(","):
            names_result = names.run_names(args.imgfetch, bench_dir, server, lists.dir,
                                           tmpfs_root() or output_root(bench_dir), OUTPUT_FS.renew)
        wan_wanted = {k for k in wan.KEYS if not args.only or k in args.only.split(",")}
        mode = "quick" if args.quick else "full"
        wan_cases, wan_error = [], ""
        if wan_wanted:
            try:
                wan_cases = wan.run_all(wan_wanted, args.imgfetch, bench_dir, www, WAN_FILES[mode],
                                        args.runs or WAN_RUNS[mode], output_root(bench_dir), OUTPUT_FS.renew,
                                        lambda out: discard_output(out, bench_dir))
            except RuntimeError as error:
                # No certificate or no WAN nginx: the other scenarios' results still get written.
                wan_error = str(error)
                print(f"bench: WAN-shaped scenarios not run: {wan_error}", flush=True)
    finally:
        server.stop()
        # The runs' outputs on disk were kept until now (see discard_output).
        OUTPUT_FS.release()
        shutil.rmtree(os.path.join(output_root(bench_dir), ".trash"), ignore_errors=True)
    version, dynamic_version = (None, ""), (None, "")
    if not args.only or "version" in args.only.split(","):
        version = version_time(args.imgfetch, bench_dir)
        if args.dynamic_imgfetch:
            dynamic_version = version_time(args.dynamic_imgfetch, bench_dir)
    meta = report.machine_info()
    meta.update(date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
                mode="quick" if args.quick else "full", elapsed=time.monotonic() - began,
                load_before=load_before, versions=versions(args.imgfetch, os.path.join(bench_dir, "venv")),
                version_ms=version[0], version_method=version[1], dynamic_version_ms=dynamic_version[0],
                rerun_lines=rerun.render(rerun_results, corpus_age if rerun_results else None),
                names_lines=names.render(names_result),
                wan_error=wan_error)
    text = report.render(meta, scenarios, output, wan_cases)
    with open(output, "w") as f:
        f.write(text)
    print(text)
    print(f"bench: wrote {output} in {meta['elapsed'] / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
