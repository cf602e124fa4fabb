#!/usr/bin/env python3
"""The Spark job's end-to-end checks: deploy/spark/spark_fetch.py on Spark's local[2,3] (2 cores, a
failed task tried up to 3 times) against nginx on loopback, with the real imgfetch binary.

    .venv-spark/bin/python Scripts/test-support/check_spark.py --imgfetch .build/debug/imgfetch

1. A list of 2000 URLs (some that libcurl rewrites) and bad lines (one with a lone CR), 4
   partitions, WebDataset shards: one result row per item with its list line, partition K holds
   exactly what `imgfetch --shard K/4` takes, every URL requested once (nginx's log), every tar
   whole, sample keys distinct across partitions.
2. The same job again: not one image request, the same rows.
3. Partitions with no items and ones of only bad lines (from a list named `bad[1].txt`, which is
   not a pattern): the job succeeds, a row per item.
4. A worker killed (SIGKILL) mid-shard, writing into a path with a space and brackets: Spark retries
   the task; no truncated tar under a final name.
5. Two attempts of one partition at once, as speculation runs them: one intact set of shards,
   byte-identical to a single attempt's. (Spark starts a speculative copy only on another host, so
   a one-machine test cannot make Spark itself do it; the job runs with spark.speculation=true all
   the same.)
6. CSV (a quoted caption over two lines, an empty one), TSV (a '"' in a caption), JSON Lines (a
   null caption, a line that is not JSON) and Parquet (a binary URL column, a NaN): captions as
   imgfetch reads them, files output.
7. Worker options the job sets itself, a usage error, and another --partitions than the output
   was written with: each stops the job before it starts.
8. -o s3://…: the shards in a real S3 server (moto), read back whole; a second run makes no request.
9. With --toolchain DIR (the Swift toolchain, hidden from this process and everything it starts:
   Scripts/test-support/without-toolchain): the executors cannot see DIR, and the job runs there on Spark's
   local-cluster (executors in JVMs of their own, to which the binary is shipped), with the
   packaged binary. A binary that needs the toolchain (--toolchain-bound, a `swift build` one) is
   refused before Spark starts.
Prints one line per check; exits 1 at the first that fails.
"""
import argparse
import faulthandler
import glob
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "deploy", "spark"))
import spark_fetch  # noqa: E402

NGINX_CONF = """
{user}
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format check '$status $request_uri';
    access_log {prefix}/access.log check;
    client_body_temp_path {prefix}/tmp;
    proxy_temp_path {prefix}/tmp;
    fastcgi_temp_path {prefix}/tmp;
    uwsgi_temp_path {prefix}/tmp;
    scgi_temp_path {prefix}/tmp;
    types {{ image/jpeg jpg; }}
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        # /i/p-NNNN.jpg serves files/sD.jpg, D being the last digit: distinct URLs, ten images.
        location /i/ {{ rewrite "^/i/p-\\d*(\\d)\\.jpg$" /files/s$1.jpg break; }}
        location /slow/ {{ rewrite "^/slow/p-\\d*(\\d)\\.jpg$" /files/s$1.jpg break; limit_rate 48k; }}
    }}
}}
"""


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


class Nginx:
    def __init__(self, prefix):
        self.prefix = prefix
        os.makedirs(f"{prefix}/tmp", exist_ok=True)
        os.makedirs(f"{prefix}/www/files", exist_ok=True)
        random.seed(7)
        for digit in range(10):
            width, height = 96 + 8 * digit, 72 + 8 * digit
            pixels = bytes(random.getrandbits(8) for _ in range(width * height * 3))
            ppm = f"{prefix}/s{digit}.ppm"
            with open(ppm, "wb") as out:
                out.write(b"P6 %d %d 255\n" % (width, height) + pixels)
            subprocess.run(["cjpeg", "-quality", "90", "-outfile", f"{prefix}/www/files/s{digit}.jpg", ppm], check=True)
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        conf = f"{prefix}/nginx.conf"
        with open(conf, "w") as out:
            out.write(NGINX_CONF.format(prefix=prefix, port=self.port, user="user root;" if os.geteuid() == 0 else ""))
        self.process = subprocess.Popen(["nginx", "-p", prefix, "-c", conf, "-e", f"{prefix}/error.log"])
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise Failed("nginx did not start: " + open(f"{prefix}/error.log").read())

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def requests(self):
        """The image requests so far: URI → count."""
        with open(f"{self.prefix}/access.log") as log:
            return Counter(line.split()[1] for line in log if line.split()[1].startswith(("/i/", "/slow/")))

    def stop(self):
        self.process.terminate()
        self.process.wait()


def job(lists, output, partitions, options, **extra):
    argv = lists + ["-o", output, "--partitions", str(partitions), "--imgfetch", IMGFETCH]
    for key, value in extra.items():
        argv += [f"--{key.replace('_', '-')}", value]
    return spark_fetch.parse_args(argv + ["--"] + options)


def results(spark, args):
    return [row.asDict() for row in spark.read.parquet(spark_fetch._escaped(args.results)).collect()]


def check_shards(base, expected_samples):
    """Every part directory's tars whole and vouched for by a stats file; no temp file left."""
    samples, keys = 0, set()
    for part in sorted(glob.glob(f"{glob.escape(base)}/part-*")):
        leftovers = [name for name in os.listdir(part) if name.startswith(".imgfetch-")]
        check(not leftovers, f"{part}: temp files left: {leftovers}")
        for tar in sorted(glob.glob(f"{glob.escape(part)}/*.tar")):
            stats_path = tar[:-4] + "_stats.json"
            check(os.path.exists(stats_path), f"{tar} has no stats file")
            stats = json.load(open(stats_path))
            check(stats.get("tar_bytes") == os.path.getsize(tar), f"{tar}: {os.path.getsize(tar)} B, stats say {stats.get('tar_bytes')}")
            with tarfile.open(tar) as archive:
                for member in archive.getmembers():
                    check(member.isfile() and archive.extractfile(member).read(), f"{tar}: bad member {member.name}")
                    if member.name.endswith(".jpg"):
                        samples += 1
                        keys.add((part, member.name))
    check(samples == expected_samples, f"{base}: {samples} samples in the tars, expected {expected_samples}")
    return keys


def identity(rows):
    """The rows without the columns that record when and how (spark_fetch.RUN_COLUMNS): a
    function of the input, the same for a re-run and for a run that needed a retry."""
    return sorted(tuple((name, tuple(value) if isinstance(value, list) else value) for name, value in sorted(r.items())
                        if name not in spark_fetch.RUN_COLUMNS) for r in rows)


def main():
    global IMGFETCH
    parser = argparse.ArgumentParser()
    parser.add_argument("--imgfetch", required=True)
    parser.add_argument("--toolchain", help="the Swift toolchain's directory, hidden from this run (check 9)")
    parser.add_argument("--toolchain-bound", help="an imgfetch that needs the toolchain, to be refused (check 9)")
    parser.add_argument("--give-up-after", type=float, default=1200,
                        help="seconds; past them every thread's stack is printed and the check exits 1")
    options = parser.parse_args()
    # A check that hangs says where, and ends, rather than holding the test run until CI's limit.
    faulthandler.dump_traceback_later(options.give_up_after, exit=True)
    IMGFETCH = os.path.abspath(options.imgfetch)
    scratch = tempfile.mkdtemp(prefix="check-spark-")
    nginx = Nginx(f"{scratch}/nginx")
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2,3]").appName("check-spark")
             .config("spark.ui.enabled", "false").config("spark.speculation", "true")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        try:
            checks(spark, nginx, scratch)
        finally:
            spark.stop()
        if options.toolchain:
            check_without_toolchain(nginx, scratch, options.toolchain, options.toolchain_bound)
    except Failed as failure:
        print(f"check-spark: FAILED: {failure}")
        return 1
    finally:
        nginx.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    print("check-spark: all checks passed")
    return 0


def checks(spark, nginx, scratch):
    dataset = ["--output-format", "webdataset", "--shard-samples", "100"]
    bad = ["not-a-url", "ftp://127.0.0.1/a.jpg", "http://", "http://127.0.0.1:1/ x=y", "http://[::1"]
    lines = [nginx.url(f"/i/p-{n:04d}.jpg") for n in range(1989)]
    # URLs that libcurl normalizes: the partition must still be that of `imgfetch --shard`.
    port = nginx.port
    lines += [f"HTTP://127.0.0.1:{port}/i/p-9001.jpg", f"http://127.0.0.1:{port}/i/x/../p-9002.jpg",
              f"http://127.0.0.1:{port}/i/p-9003.jpg#fragment", f"http://127.1:{port}/i/p-9004.jpg",
              f"http://127.0.0.1:{port}/i/./p-9005.jpg", f"http://LOCALHOST:{port}/i/p-9006.jpg",
              f"  http://127.0.0.1:{port}/i/p-9007.jpg", f"http://127.0.0.1:{port}/i/p-9008.jpg?q=1",
              f"http://127.0.0.1:{port}/i/p-9009.jpg\tpriority=high", f"http://localhost:{port}/i/p-9010.jpg out=x.jpg",
              f"http://127.0.0.1:{port}/i/p-9011.jpg?"]
    for at, text in zip((3, 500, 1000, 1500, 1999), bad):
        lines.insert(at, text)
    urls = [spark_fetch.text_line_url(line) for line in lines]
    for url in urls:
        slow = spark_fetch.CurlURL().parse(url.strip())
        fast = spark_fetch._already_normal(url.strip())
        check(fast is None or fast == slow, f"{url}: the fast path gives {fast}, libcurl {slow}")
    list_path = f"{scratch}/urls.txt"
    # A lone CR inside a line is part of it (imgfetch fails that line), not the end of one.
    lines[1] = lines[1] + "\rjunk"
    with open(list_path, "w") as out:
        out.write("# a comment, and a blank line: not items\n\n" + "\n".join(lines) + "\n")

    # 1. Coverage, results, one request per URL, whole tars.
    args = job([list_path], f"{scratch}/out", 4, dataset)
    spark_fetch.run(args, spark)
    rows = results(spark, args)
    check(len(rows) == 2005, f"{len(rows)} result rows for 2005 items")
    check(sorted(r["input_line"] for r in rows) == list(range(3, 2008)), "list lines not each reported once")
    check({r["input_file"] for r in rows} == {"file:" + list_path}, f"input files {({r['input_file'] for r in rows})}")
    by_line = {r["input_line"]: r for r in rows}
    check(by_line[3]["url"] == lines[0] and by_line[6]["url"] == "not-a-url", "results matched to the wrong lines")
    statuses = Counter(r["status"] for r in rows)
    check(statuses == Counter(saved=1999, failed=6), f"statuses {dict(statuses)}")
    check(by_line[4]["status"] == "failed" and "control character 0xD" in by_line[4]["error_message"], f"line 4: {by_line[4]}")
    requests = nginx.requests()
    check(len(requests) == 1999 and set(requests.values()) == {1},
          f"{len(requests)} URLs requested, counts {Counter(requests.values())}")
    for k in range(4):
        listed = subprocess.run([IMGFETCH, list_path, "--shard", f"{k}/4", "--cache-policy", "only-if-cached",
                                 "-o", f"{scratch}/empty-{k}", "--jsonl", "-q"], capture_output=True, text=True)
        wanted = {json.loads(line)["line"]["line"] for line in listed.stdout.splitlines()
                  if json.loads(line)["error"]["class"] != "invalid-input"}
        got = {r["input_line"] for r in rows if r["partition"] == k and r["status"] == "saved"}
        check(wanted == got, f"partition {k} holds lines {sorted(got - wanted)[:5]}…, imgfetch --shard {k}/4 takes "
                             f"{sorted(wanted - got)[:5]}…")
    keys = check_shards(args.output, 1999)
    check(len({name for _, name in keys}) == 1999, "sample keys repeat across partitions")
    check(all(name.startswith(f"part-0000{r['partition']}-") for r in rows for name in [os.path.basename(p) for p in r["paths"]]),
          "a partition's shards are not named part-K-")
    print("check-spark: 1. 2005 rows with their list lines, partition K = --shard K/4 (normalized URLs too), "
          "each URL requested once, tars whole, keys distinct across partitions")

    # 2. The same job again: no image request, the same rows.
    before = nginx.requests()
    spark_fetch.run(args, spark)
    again = results(spark, args)
    check(nginx.requests() == before, f"{sum((nginx.requests() - before).values())} image requests on the second run")
    differ = [(a, b) for a, b in zip(identity(rows), identity(again)) if a != b]
    check(not differ and len(again) == len(rows), f"the second run's rows differ from the first's: {differ[:1]}")
    check(Counter(r["this_run"] for r in again) == Counter(skipped=1999, failed=6),
          f"second run: this_run {dict(Counter(r['this_run'] for r in again))}")
    check(Counter(r["status"] for r in again) == Counter(saved=1999, failed=6) and all(
        r["http_status"] == 200 and r["bytes"] > 0 and r["format"] == "jpeg" and r["width"] for r in again if r["status"] == "saved"),
          f"second run statuses {dict(Counter(r['status'] for r in again))}")
    print("check-spark: 2. second run: 0 image requests, the same 2005 rows (status, HTTP status, bytes, format and "
          "sizes as the first run made them; this_run says skipped)")

    # 3. Empty partitions and a partition of only bad lines (bad lines are placed by their row and
    # text, which spark_fetch.partition_of also gives them).
    # The bad lines are in a list of their own, without the port in it, so that their partitions
    # do not change from run to run: they take 4 partitions of 16, which 2 URLs cannot all share.
    with open(f"{scratch}/small.txt", "w") as out:
        out.write(nginx.url("/i/p-7001.jpg") + "\n" + nginx.url("/i/p-7002.jpg") + "\n")
    # "bad[1].txt" is a file's name, not a pattern that would read "bad1.txt".
    with open(f"{scratch}/bad[1].txt", "w") as out:
        out.write("".join(f"bad line {n}\n" for n in range(6)))
    with open(f"{scratch}/bad1.txt", "w") as out:
        out.write("not this list\n")
    args = job([f"{scratch}/small.txt", f"{scratch}/bad[1].txt"], f"{scratch}/small-out", 16, dataset)
    spark_fetch.run(args, spark)
    rows = results(spark, args)
    check(len(rows) == 8 and Counter(r["status"] for r in rows) == Counter(saved=2, failed=6), f"rows: {rows}")
    check({r["input_file"].rsplit("/", 1)[-1] for r in rows} == {"small.txt", "bad[1].txt"}, "the lists read")
    by_partition = Counter(r["partition"] for r in rows)
    only_bad = [p for p in by_partition if all(r["status"] == "failed" for r in rows if r["partition"] == p)]
    check(len({r["partition"] for r in rows if r["status"] == "failed"}) >= 3, "the bad lines share too few partitions")
    check(len(by_partition) < 16 and only_bad, f"partitions {dict(by_partition)}: no empty or no bad-only one")
    print(f"check-spark: 3. {16 - len(by_partition)} empty partitions and {len(only_bad)} of only bad lines: 8 rows")

    # 4. A worker killed mid-shard: Spark retries the task, and the output is whole.
    slow = [nginx.url(f"/slow/p-{n:04d}.jpg") for n in range(300)]
    with open(f"{scratch}/slow.txt", "w") as out:
        out.write("\n".join(slow) + "\n")
    output = f"{scratch}/slow out[1]"  # a space and a Hadoop glob character: paths, not patterns
    args = job([f"{scratch}/slow.txt"], output, 2, ["--output-format", "webdataset", "--shard-samples", "20", "-j", "4"])
    killed = []
    watcher = threading.Thread(target=kill_mid_shard, args=(f"{output}/part-00000", killed), daemon=True)
    watcher.start()
    spark_fetch.run(args, spark)
    watcher.join(timeout=5)
    check(killed, "no worker was killed mid-shard (it finished first?)")
    rows = results(spark, args)
    # The rows of the shards the killed attempt finished are as it made them, not `skipped`.
    check(len(rows) == 300 and all(r["status"] == "saved" and r["http_status"] == 200 and r["bytes"] > 0 and r["width"]
                                   for r in rows), f"{len(rows)} rows, statuses {dict(Counter(r['status'] for r in rows))}")
    check(Counter(r["this_run"] for r in rows)["skipped"] >= killed[1] * 20,
          f"this_run {dict(Counter(r['this_run'] for r in rows))} after {killed[1]} finished shards of 20")
    check_shards(output, 300)
    # The same job on another output, without a kill: the same table.
    clean = job([f"{scratch}/slow.txt"], f"{scratch}/slow-clean", 2, ["--output-format", "webdataset", "--shard-samples", "20", "-j", "4"])
    spark_fetch.run(clean, spark)
    strip = [{**r, "paths": [p.replace(output, clean.output) for p in r["paths"]]} for r in rows]
    check(identity(results(spark, clean)) == identity(strip), "a run that needed a retry gives other rows than one that did not")
    print(f"check-spark: 4. worker {killed[0]} killed after {killed[1]} shards; retried, 300 rows, every tar whole, "
          "the table identical to a run without the kill")

    # 5. Two attempts of one partition at once.
    args = job([list_path], f"{scratch}/twice", 4, dataset)
    placed = spark_fetch.placed_lines(spark, args, spark_fetch.list_files(spark, args.lists), 4)
    items = [line for _, line in placed.glom().collect()[1]]
    command = spark_fetch.worker_argv(args, IMGFETCH, 1, os.environ.get("TMPDIR", "/tmp"))
    workers = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={})
               for _ in range(2)]
    # Each is fed and read at once, as a task does: the one that waits for the other's run lock
    # must not keep the other from writing its result lines (a full pipe would hold both).
    outputs = [None, None]

    def attempt(n):
        outputs[n] = workers[n].communicate(("\n".join(items) + "\n").encode(), timeout=300)[0]
    attempts = [threading.Thread(target=attempt, args=(n,)) for n in range(2)]
    for thread in attempts:
        thread.start()
    for thread in attempts:
        thread.join()
    check(None not in outputs, "an attempt did not end within 300 s")
    check([w.returncode for w in workers] == [0, 0], f"exit codes {[w.returncode for w in workers]}")
    reported = sum(1 for line in items if spark_fetch.text_line_url(line))  # not blank lines and comments
    check(all(len(out.splitlines()) == reported for out in outputs), f"a worker did not report every item: "
          f"{[len(out.splitlines()) for out in outputs]} lines for {reported}")
    first, twice = sorted(glob.glob(f"{scratch}/out/part-00001/*.tar")), sorted(glob.glob(f"{scratch}/twice/part-00001/*.tar"))
    check([os.path.basename(t) for t in first] == [os.path.basename(t) for t in twice] and first,
          f"shards {twice} against {first}")
    for a, b in zip(first, twice):
        check(open(a, "rb").read() == open(b, "rb").read(), f"{b} differs from the single attempt's")
    check(not [n for n in os.listdir(f"{scratch}/twice/part-00001") if n.startswith(".imgfetch-")], "temp files left")
    print(f"check-spark: 5. two attempts at once: {len(twice)} shards, byte-identical to one attempt's")

    # 6. Tables, each read by Spark and given to the workers as JSON lines; files output.
    u = [nginx.url(f"/i/p-{n}.jpg") for n in range(8001, 8008)]
    tables = {
        "csv": (f'url,caption,score\n{u[0]},"two\nlines",1\n{u[1]},,2\n', {u[0]: "two\nlines", u[1]: ""}),
        "tsv": (f'url\tcaption\n{u[2]}\t"quoted\n{u[3]}\tplain\n', {u[2]: '"quoted', u[3]: "plain"}),
        "jsonl": (f'{{"url": "{u[4]}", "caption": null}}\n{{"url": "{u[5]}", "caption": "c", "n": 1e999}}\nnot json\n',
                  {u[4]: "", u[5]: "c", "": None}),
    }
    for name, (text, captions) in tables.items():
        with open(f"{scratch}/table.{name}", "w") as out:
            out.write(text)
    spark.createDataFrame([(bytearray(u[6].encode()), "p", float("nan"))], "url binary, caption string, score double") \
        .write.parquet(f"{scratch}/table.parquet")
    tables["parquet"] = (None, {u[6]: "p"})
    for name, (_, captions) in tables.items():
        args = job([f"{scratch}/table.{name}"], f"{scratch}/table-{name}", 2, [], input_format=name, caption_column="caption")
        spark_fetch.run(args, spark)
        rows = results(spark, args)
        got = {r["url"]: json.loads(r["result"]).get("caption") for r in rows}
        check(got == captions, f"{name}: captions {got}, expected {captions}")
        saved = [r for r in rows if r["status"] == "saved"]
        check(len(saved) == len([c for c in captions if c]), f"{name}: {len(saved)} saved of {len(rows)}")
        files = [f for part in glob.glob(f"{scratch}/table-{name}/part-*") for f in os.listdir(part) if f.endswith(".jpg")]
        check(len(files) == len(saved), f"{name}: {len(files)} files for {len(saved)} saved rows")
        # The cache index is on the executor's local disk, not in the (maybe shared) output.
        indexes = glob.glob(f"{glob.escape(scratch)}/table-{name}/part-*/.imgfetch/index.sqlite")
        work = os.path.join(os.environ.get("TMPDIR", "/tmp"), "spark-fetch-work", spark_fetch.work_name(args))
        check(not indexes and glob.glob(f"{work}/part-*/index-*/.imgfetch/index.sqlite"), f"{name}: indexes in the output {indexes}")
        shutil.rmtree(work, ignore_errors=True)
    check(next(r for r in results(spark, args) if True)["input_line"] == 1, "parquet record number")
    print("check-spark: 6. CSV, TSV, JSON Lines and Parquet lists: a row per record, captions as imgfetch reads them; "
          "the cache indexes on local scratch, not in the output")

    # 7. Options the workers cannot take, and a usage error, stop the job before it starts.
    for bad_options, code in ((["-o", "/elsewhere"], None), (["--bogus"], 2)):
        try:
            spark_fetch.run(job([list_path], f"{scratch}/refused", 2, bad_options), spark)
            check(False, f"{bad_options} were accepted")
        except SystemExit as stop:
            check(code is None or stop.code == code, f"{bad_options}: exit {stop.code}")
        check(not os.path.exists(f"{scratch}/refused"), f"{bad_options}: the job started")
    try:
        spark_fetch.run(job([list_path], f"{scratch}/out", 3, dataset), spark)
        check(False, "another --partitions than the output's was accepted")
    except SystemExit as stop:
        check("was written with --partitions 4" in str(stop.code), f"{stop.code}")
    # The worker binary: missing (given, or not on PATH) is refused before Spark starts; a command name is found on PATH.
    bin_dir = f"{scratch}/bin"
    os.makedirs(bin_dir, exist_ok=True)
    os.symlink(IMGFETCH, f"{bin_dir}/imgfetch")
    saved_path = os.environ.get("PATH", "")
    try:
        for given, path, wanted in (("/nonexistent/imgfetch", saved_path, "no such command"),
                                    (None, "/usr/bin:/bin", "no imgfetch on PATH"), ("imgfetch", "/usr/bin:/bin", "no such command on PATH")):
            os.environ["PATH"] = path
            argv = [list_path, "-o", f"{scratch}/nobin"] + (["--imgfetch", given] if given else [])
            try:
                spark_fetch.parse_args(argv)
                check(False, f"{argv}: accepted without a worker binary")
            except SystemExit as stop:
                check(stop.code == 2, f"{argv}: exit {stop.code}")
        os.environ["PATH"] = f"{bin_dir}:/usr/bin:/bin"
        check(spark_fetch.parse_args([list_path, "-o", f"{scratch}/nobin", "--imgfetch", "imgfetch"]).imgfetch == f"{bin_dir}/imgfetch",
              "--imgfetch imgfetch is not found on PATH")
        check(spark_fetch.parse_args([list_path, "-o", f"{scratch}/nobin"]).imgfetch == f"{bin_dir}/imgfetch",
              "imgfetch on PATH is not the default")
    finally:
        os.environ["PATH"] = saved_path
    check(not os.path.exists(f"{scratch}/nobin"), "a job without a worker binary started")
    print("check-spark: 7. reserved worker options, usage errors, another N than the output's and a missing worker "
          "binary stop the job before it starts; --imgfetch imgfetch is found on PATH")

    # 7b. A partition that fails every attempt: one line says which and why, no staging is left,
    # and the record of N goes when nothing was written.
    failing = f"{scratch}/failing"
    os.makedirs(failing)
    args = job([f"{scratch}/small.txt"], failing, 2, dataset)
    open(f"{failing}/part-00001", "w").close()  # a file where partition 1's directory goes
    captured = f"{scratch}/failing.err"
    saved_stderr = os.dup(2)
    with open(captured, "w") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            spark_fetch.run(args, spark)
            check(False, "a job whose partition always fails succeeded")
        except SystemExit as stop:
            code = stop.code
        finally:
            os.dup2(saved_stderr, 2)
            os.close(saved_stderr)
    said = open(captured).read().strip().splitlines()
    check(code == 1 and said and said[-1].startswith("spark-fetch: the job failed, after Spark's retries: partition 1: "
                                                      "imgfetch exited 2: imgfetch: output directory")
          and "is not a directory" in said[-1], f"exit {code}, last line {said[-1:]}")
    leftovers = [n for n in os.listdir(failing) if ".tmp-" in n or ".rows-tmp-" in n]
    check(not leftovers and not os.path.exists(f"{failing}/results.parquet"), f"left behind: {leftovers}")
    check(os.path.exists(f"{failing}/{spark_fetch.JOB_RECORD}") == bool(spark_fetch.glob_parts(failing)),
          "the record of N does not follow what was written")
    # A job that died (its PID gone) left staging directories: the next run removes them.
    os.makedirs(f"{failing}/results.parquet.rows-tmp-{spark_fetch._host()}-999999999")
    os.makedirs(f"{failing}/results.parquet.tmp-elsewhere-1")  # another host's: its to judge
    os.remove(f"{failing}/part-00001")
    spark_fetch.run(args, spark)
    check([n for n in os.listdir(failing) if "tmp-" in n] == ["results.parquet.tmp-elsewhere-1"],
          f"stale staging: {os.listdir(failing)}")
    print(f"check-spark: 7b. a partition failing every attempt: exit 1, one line naming it and the worker's own "
          f"error ({len(said)} lines on stderr); no staging left, a dead job's removed by the next run")

    # 7c. A worker that reports fewer items than it was given fails its task.
    short = f"{scratch}/short-worker"
    with open(short, "w") as out:
        out.write("#!/bin/sh\nhead -n 1 >/dev/null\necho 'imgfetch: gave up early' >&2\nexit 0\n")
    os.chmod(short, 0o755)
    try:
        list(spark_fetch.run_worker([short], {}, 3, iter([((3, 0, 0, 0), "http://a/1.jpg"), ((3, 0, 0, 1), "http://a/2.jpg")]), True))
        check(False, "a worker that reported no item passed")
    except RuntimeError as error:
        check(str(error) == "spark-fetch: partition 3: imgfetch reported 0 of its 2 items and exited 0: imgfetch: gave up early",
              f"{error}")
    print("check-spark: 7c. a worker that reports fewer items than it was given fails its task")

    check_object_store(spark, nginx, scratch)


def check_object_store(spark, nginx, scratch):
    """8. -o s3://…: a real S3 server (moto, checking signatures; Scripts/test-support/s3_store.py in .venv-tests)."""
    python, tool = f"{ROOT}/.venv-tests/bin/python", f"{ROOT}/Scripts/test-support/s3_store.py"
    store = subprocess.Popen([python, tool, "serve", "--bucket", "spark", "--log", f"{scratch}/s3.log",
                              "--faults", f"{scratch}/s3-faults.json"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    info = json.loads(store.stdout.readline() or "{}")
    check("endpoint" in info, "the S3 server did not start")
    environment = {"AWS_ACCESS_KEY_ID": info["access_key"], "AWS_SECRET_ACCESS_KEY": info["secret_key"],
                   "AWS_ENDPOINT_URL": info["endpoint"], "AWS_REGION": "us-east-1"}
    saved_environment = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    try:
        urls = [nginx.url(f"/i/p-{n}.jpg") for n in range(6000, 6200)]
        with open(f"{scratch}/s3.txt", "w") as out:
            out.write("\n".join(urls) + "\n")
        args = job([f"{scratch}/s3.txt"], "s3://spark/ds", 4, ["--output-format", "webdataset", "--shard-samples", "30"],
                   results=f"{scratch}/s3-results.parquet")
        spark_fetch.run(args, spark)
        rows = results(spark, args)
        check(len(rows) == 200 and Counter(r["status"] for r in rows) == Counter(saved=200),
              f"{len(rows)} rows, statuses {dict(Counter(r['status'] for r in rows))}")
        check(all(p.startswith(f"s3://spark/ds/part-0000{r['partition']}/part-0000{r['partition']}-") for r in rows for p in r["paths"]),
              f"paths {rows[0]['paths']}")
        listed = subprocess.run([python, tool, "list", "--store", info["store"], "--bucket", "spark", "--prefix", "ds/"],
                                capture_output=True, text=True, env={**os.environ, **environment}, check=True)
        objects = {json.loads(line)["key"]: json.loads(line) for line in listed.stdout.splitlines()}
        tars = sorted(key for key in objects if key.endswith(".tar"))
        check(tars and all(key[:-4] + "_stats.json" in objects and key[:-4] + ".jsonl" in objects for key in tars),
              f"objects {sorted(objects)}")
        samples = 0
        for key in tars:
            path = f"{scratch}/got.tar"
            subprocess.run([python, tool, "get", "--store", info["store"], "--bucket", "spark", "--key", key, "--out", path],
                           env={**os.environ, **environment}, check=True)
            stats = json.loads(subprocess.run([python, tool, "get", "--store", info["store"], "--bucket", "spark",
                                               "--key", key[:-4] + "_stats.json", "--out", "/dev/stdout"],
                                              capture_output=True, text=True, env={**os.environ, **environment},
                                              check=True).stdout)
            check(stats["tar_bytes"] == os.path.getsize(path), f"{key}: stats say {stats['tar_bytes']} B")
            with tarfile.open(path) as archive:
                samples += sum(1 for member in archive.getmembers() if member.name.endswith(".jpg"))
        check(samples == 200, f"{samples} samples in the store's tars, expected 200")
        work = os.path.join(os.environ.get("TMPDIR", "/tmp"), "spark-fetch-work", spark_fetch.work_name(args))
        left = [name for part in os.listdir(work) for name in os.listdir(f"{work}/{part}") if name != ".imgfetch"]
        check(not left, f"files left in the work directories: {left}")

        before = nginx.requests()
        spark_fetch.run(args, spark)
        again = results(spark, args)
        check(nginx.requests() == before, f"{sum((nginx.requests() - before).values())} image requests on the second run")
        check(identity(again) == identity(rows) and Counter(r["this_run"] for r in again) == Counter(skipped=200),
              "the second run's rows differ from the first's")
        shutil.rmtree(work, ignore_errors=True)
    finally:
        for name, value in saved_environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        store.stdin.close()
        store.wait(timeout=30)
    print(f"check-spark: 8. -o s3://: 200 samples in {len(tars)} shards in the store, read back whole; "
          "a second run: 0 image requests, the same rows")


def check_without_toolchain(nginx, scratch, toolchain, toolchain_bound):
    """9. Executors without the toolchain, on local-cluster; a toolchain-bound binary refused."""
    from pyspark.sql import SparkSession
    list_path = f"{scratch}/cluster.txt"
    with open(list_path, "w") as out:
        out.write("".join(nginx.url(f"/i/p-{n:04d}.jpg") + "\n" for n in range(5000, 5200)))
    if toolchain_bound:
        try:
            spark_fetch.parse_args([list_path, "-o", f"{scratch}/bound", "--imgfetch", toolchain_bound])
            check(False, f"{toolchain_bound}, which needs the toolchain, was accepted")
        except SystemExit as stop:
            check(stop.code == 2, f"a toolchain-bound binary: exit {stop.code}")
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("check-spark-cluster")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        seen = spark.sparkContext.parallelize(range(2), 2).pipe(
            shlex.join(["/bin/sh", "-c", 'test -e "$0/bin/swift" && echo visible || echo hidden', toolchain])).collect()
        check(seen == ["hidden", "hidden"], f"the executors see the toolchain at {toolchain}: {seen}")
        args = job([list_path], f"{scratch}/cluster", 2, ["--output-format", "webdataset", "--shard-samples", "50"])
        spark_fetch.run(args, spark)
        rows = results(spark, args)
        check(len(rows) == 200 and all(r["status"] == "saved" for r in rows),
              f"{len(rows)} rows, statuses {dict(Counter(r['status'] for r in rows))}")
        check_shards(args.output, 200)
        # A re-run on the cluster: the same table, every row skipped by this run.
        spark_fetch.run(args, spark)
        again = results(spark, args)
        check(identity(again) == identity(rows) and Counter(r["this_run"] for r in again) == Counter(skipped=200),
              f"the re-run on local-cluster gives other rows: this_run {dict(Counter(r['this_run'] for r in again))}")
        work = spark_fetch.local_cluster_work(spark)
        check(work and os.path.isdir(work), f"no local-cluster work directory at {work}")
    finally:
        spark_fetch.stop(spark)
    check(not os.path.exists(work), f"{work}: the local-cluster work directory is left")
    print(f"check-spark: 9. on local-cluster with {toolchain} hidden from the executors: 200 rows saved by the "
          "packaged binary, tars whole, a re-run's table the same, its work directory removed" + ("; a toolchain-bound binary refused before Spark starts" if toolchain_bound else ""))


def kill_mid_shard(part, killed):
    """SIGKILLs the worker writing `part` once it has committed a shard and is inside the next."""
    pattern = re.compile(re.escape(part))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = glob.glob(f"{glob.escape(part)}/*_stats.json")
        staged = [n for n in os.listdir(part) if n.startswith(".imgfetch-")] if os.path.isdir(part) else []
        if done and staged:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    cmdline = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
                except OSError:
                    continue
                if os.path.basename(cmdline[0]) == b"imgfetch" and any(pattern.search(a.decode(errors="replace")) for a in cmdline[1:]):
                    os.kill(int(pid), signal.SIGKILL)
                    killed += [int(pid), len(done)]
                    return
        time.sleep(0.02)


if __name__ == "__main__":
    sys.exit(main())
