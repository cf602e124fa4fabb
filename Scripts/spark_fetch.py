#!/usr/bin/env python3
"""spark-fetch: fetches URL lists with imgfetch on a Spark cluster (or Spark's local mode).

    Scripts/spark-fetch urls.txt -o /shared/out --partitions 64 -- --output-format webdataset
    spark-submit --master yarn Scripts/spark_fetch.py s3a://b/urls.parquet --input-format parquet \\
        --url-column url -o /shared/out --imgfetch /opt/imgfetch/bin/imgfetch

The flow, one direction:
  1. Spark reads the lists (text, CSV/TSV, JSON Lines or Parquet) on the executors; nothing is
     collected to the driver (img2dataset #338).
  2. Each item gets its input position and its partition: the same function of the URL as
     `imgfetch --shard K/N` (the first 8 bytes of the SHA-256 of libcurl's normalized URL, or of the
     lowercased host with --shard-by host, big-endian, modulo N), so partition K holds exactly the
     items that `--shard K/N` would take. Within a partition items keep their input order, so a
     re-run gives every partition the same rows in the same order (the same sample keys).
  3. Each partition is piped through one imgfetch worker with RDD.pipe(checkCode=True) and an empty
     environment. The worker runs with --failures-are-data: failed items are data (exit 0), and
     exit 75 (a full disk, an unwritable output, a signal) fails the task, which Spark retries.
     Partition K writes to OUTPUT/part-K (its own directory, its own cache index).
  4. The workers' result lines (one per input item) become a DataFrame, written as Parquet, and the
     driver prints a summary read back from it.
"""
import argparse
import ctypes
import ctypes.util
import hashlib
import json
import os
import shlex
import sys
import time

RESULT_FIELDS = [
    # (column, Spark type, how to read it from a result line)
    ("partition", "int"),
    ("input_file", "string"),
    ("input_row", "bigint"),
    ("url", "string"),
    ("status", "string"),
    ("error_class", "string"),
    ("error_message", "string"),
    ("http_status", "int"),
    ("bytes", "bigint"),
    ("format", "string"),
    ("width", "int"),
    ("height", "int"),
    ("key", "string"),
    ("paths", "array<string>"),
    ("result", "string"),
]

# The columns spark-fetch adds to each row it gives imgfetch; the results carry them back.
INPUT_FILE, INPUT_ROW = "_input_file", "_input_row"


class CurlURL:
    """libcurl's URL API through ctypes: the normalization of imgfetch's ParsedURL, by the same
    library, so that partitions agree with `imgfetch --shard`."""

    CURLUPART_URL, CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_FRAGMENT = 0, 1, 5, 9
    CURLU_NO_DEFAULT_PORT, CURLU_NON_SUPPORT_SCHEME = 1 << 1, 1 << 3

    def __init__(self):
        name = ctypes.util.find_library("curl") or "libcurl.so.4"
        lib = ctypes.CDLL(name)
        lib.curl_url.restype = ctypes.c_void_p
        lib.curl_url_cleanup.argtypes = [ctypes.c_void_p]
        lib.curl_url_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        lib.curl_url_get.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        lib.curl_free.argtypes = [ctypes.c_void_p]
        self.lib = lib

    def _get(self, handle, part, flags=0):
        out = ctypes.c_void_p()
        if self.lib.curl_url_get(handle, part, ctypes.byref(out), flags) != 0 or not out.value:
            return None
        try:
            return ctypes.string_at(out.value).decode("utf-8", "surrogateescape")
        finally:
            self.lib.curl_free(out)

    def parse(self, text):
        """(normalized URL, lowercased host), or None when imgfetch would not take the URL."""
        data = text.encode("utf-8", "surrogateescape")
        if len(data) > 8192 or b"\0" in data:
            return None
        handle = self.lib.curl_url()
        try:
            if self.lib.curl_url_set(handle, self.CURLUPART_URL, data, self.CURLU_NON_SUPPORT_SCHEME) != 0:
                return None
            scheme, host = self._get(handle, self.CURLUPART_SCHEME), self._get(handle, self.CURLUPART_HOST)
            if scheme is None or scheme.lower() not in ("http", "https") or not host:
                return None
            host = host.lower()
            self.lib.curl_url_set(handle, self.CURLUPART_HOST, host.encode("utf-8", "surrogateescape"), 0)
            self.lib.curl_url_set(handle, self.CURLUPART_FRAGMENT, None, 0)
            normalized = self._get(handle, self.CURLUPART_URL, self.CURLU_NO_DEFAULT_PORT)
            return None if normalized is None else (normalized, host)
        finally:
            self.lib.curl_url_cleanup(handle)


def shard_of(text, count):
    """imgfetch's ShardSelector.shard(of:count:)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count


_curl = None


def partition_of(url, fallback, count, by):
    """The partition of an item: that of `imgfetch --shard K/N` for a URL imgfetch takes; for
    anything else (not a URL, no URL) that of `fallback`, the item's position and text."""
    global _curl
    if _curl is None:
        _curl = CurlURL()
    parsed = _curl.parse(url) if isinstance(url, str) and url else None
    if parsed is None:
        return shard_of(fallback, count)
    return shard_of(parsed[1] if by == "host" else parsed[0], count)


def records(spark, args):
    """The input as an RDD of (input row, JSON line for imgfetch, the partition key of a line without
    a URL imgfetch takes: its row and text, URL for what is not a URL), in input order."""
    from pyspark.sql import functions as F

    url_column = args.url_column
    if args.input_format == "txt":
        frame = spark.read.text(args.lists).withColumn("file", F.input_file_name())

        def to_record(row):
            line = row.value.strip(" \t\r")
            if not line or line.startswith("#"):
                return None  # blank lines and comments are not items, as in imgfetch
            url = line.split(None, 1)[0]
            return {"url": url, INPUT_FILE: row.file}
    elif args.input_format == "jsonl":
        frame = spark.read.text(args.lists).withColumn("file", F.input_file_name())

        def to_record(row):
            if not row.value.strip():
                return None
            try:
                value = json.loads(row.value)
            except ValueError:
                value = None
            if not isinstance(value, dict):
                return {"__raw__": row.value, INPUT_FILE: row.file}  # imgfetch reports why
            value[INPUT_FILE] = row.file
            return value
    else:
        if args.input_format in ("csv", "tsv"):
            frame = (spark.read.option("header", True).option("multiLine", True).option("escape", '"')
                     .option("sep", "\t" if args.input_format == "tsv" else ",").csv(args.lists))
        else:
            frame = spark.read.parquet(*args.lists)
        if url_column not in frame.columns:
            raise SystemExit(f"spark-fetch: the input has no column '{url_column}' (its columns: "
                             f"{', '.join(frame.columns)}); give --url-column")
        frame = frame.withColumn(INPUT_FILE, F.input_file_name())

        def to_record(row):
            return row.asDict(recursive=True)

    def stringify(value):
        return value if value is None or isinstance(value, (str, int, float, bool, list, dict)) else str(value)

    def finish(pair):
        record, index = pair
        if "__raw__" in record:
            return index, record["__raw__"], f"{index}\t{record['__raw__']}", None
        record = {k: stringify(v) for k, v in record.items()}
        record[INPUT_ROW] = index
        url = record.get(url_column)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return index, line, f"{index}\t{url}", url

    rows = frame.rdd.map(to_record).filter(lambda r: r is not None).zipWithIndex()
    return rows.map(finish)


def worker_command(args):
    """The pipe's command. RDD.pipe runs one command for every partition, so a partition's first
    two lines tell the shell its number and where Spark put the binary; the rest is the list."""
    options = ["--input-format", "jsonl", "--url-column", "url" if args.input_format == "txt" else args.url_column,
               "--jsonl", "--failures-are-data", "--progress", "none"]
    if args.caption_column:
        options += ["--caption-column", args.caption_column]
    if args.key_column:
        options += ["--key-column", args.key_column]
    script = ('IFS= read -r part && IFS= read -r bin && exec "$bin" - -o "$0/part-$part" "$@"')
    return shlex.join(["/bin/sh", "-c", script, args.output] + options + args.imgfetch_options)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="spark-fetch", description=__doc__.split("\n\n")[0],
                                     usage="%(prog)s LIST... -o OUTPUT [options] [-- IMGFETCH-OPTIONS...]")
    parser.add_argument("lists", nargs="+", metavar="LIST", help="URL lists: paths or URIs Spark can read")
    parser.add_argument("-o", "--output", required=True,
                        help="where partition K writes: OUTPUT/part-K (a local or shared directory)")
    parser.add_argument("--results", help="the results' Parquet directory (default OUTPUT/results.parquet)")
    parser.add_argument("--partitions", type=int, help="N, the number of workers (default: Spark's parallelism)")
    parser.add_argument("--input-format", choices=["txt", "csv", "tsv", "jsonl", "parquet"], default="txt")
    parser.add_argument("--url-column", default="url")
    parser.add_argument("--caption-column")
    parser.add_argument("--key-column")
    parser.add_argument("--shard-by", choices=["url", "host"], default="url")
    parser.add_argument("--imgfetch", help="the imgfetch binary to ship to the workers (sc.addFile); "
                        "default: imgfetch on the workers' PATH")
    parser.add_argument("--master", help="Spark's master (default: spark-submit's, or local[*])")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    if "--" in argv:
        at = argv.index("--")
        argv, passed = argv[:at], argv[at + 1:]
    else:
        passed = []
    args = parser.parse_args(argv)
    args.imgfetch_options = passed
    if args.partitions is not None and not 1 <= args.partitions <= 1_000_000:
        parser.error("--partitions must be from 1 to 1000000")
    if "://" not in args.output:
        args.output = os.path.abspath(args.output)
    args.results = args.results or os.path.join(args.output, "results.parquet")
    return args


def main(argv=None):
    return run(parse_args(sys.argv[1:] if argv is None else argv))


def session(args):
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("imgfetch spark-fetch")
    if args.master:
        builder = builder.master(args.master)
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    return builder.getOrCreate()


def partition_lines(spark, args):
    """(N, the RDD of N partitions that are piped): partition K holds its number, the binary's path
    on the executor, then the JSON line of each of its items in input order."""
    sc = spark.sparkContext
    count = args.partitions or sc.defaultParallelism
    if __name__ != "__main__":
        # Imported (by a test, or another job): the workers need the module the functions are in.
        sc.addPyFile(os.path.abspath(__file__))
    if args.imgfetch:
        sc.addFile(os.path.abspath(args.imgfetch))
    binary_name = os.path.basename(args.imgfetch) if args.imgfetch else None
    by = args.shard_by

    keyed = records(spark, args).map(lambda r: ((partition_of(r[3], r[2], count, by), r[0]), r[1]))
    # Partition K gets the items of shard K, sorted by input position: a shuffle delivers them in
    # any order, and a re-run must give every worker the same rows in the same order.
    ordered = keyed.repartitionAndSortWithinPartitions(count, partitionFunc=lambda key: key[0])

    def with_header(index, items):
        import shutil
        from pyspark import SparkFiles
        yield f"{index:05d}"
        yield SparkFiles.get(binary_name) if binary_name else shutil.which("imgfetch") or "imgfetch"
        for _, line in items:
            yield line

    return count, ordered.mapPartitionsWithIndex(with_header, preservesPartitioning=True)


def run(args, spark=None):
    started = time.monotonic()
    own = spark is None
    spark = spark or session(args)
    ready = time.monotonic()
    try:
        _, lines = partition_lines(spark, args)
        piped = lines.pipe(worker_command(args), env={}, checkCode=True)
        rows = piped.mapPartitionsWithIndex(lambda index, results: (result_row(index, line) for line in results))
        frame = spark.createDataFrame(rows, schema=", ".join(f"{name} {kind}" for name, kind in RESULT_FIELDS))
        # The workers run once, for this write; the summary reads the Parquet back.
        frame.write.mode("overwrite").parquet(args.results)
        summary(spark, args, ready - started, time.monotonic() - ready)
        return 0
    finally:
        if own:
            spark.stop()


def result_row(partition, line):
    value = json.loads(line)
    columns = value.get("columns") or {}
    error = value.get("error") or {}
    row = {
        "partition": partition,
        "input_file": columns.get(INPUT_FILE),
        "input_row": columns.get(INPUT_ROW),
        "url": value.get("url"),
        "status": value.get("status"),
        "error_class": error.get("class"),
        "error_message": error.get("message"),
        "http_status": value.get("http_status"),
        "bytes": value.get("bytes"),
        "format": value.get("format"),
        "width": value.get("width"),
        "height": value.get("height"),
        "key": value.get("key"),
        "paths": value.get("paths") or [],
        "result": line,
    }
    return tuple(row[name] for name, _ in RESULT_FIELDS)


def summary(spark, args, startup, seconds):
    from pyspark.sql import functions as F

    results = spark.read.parquet(args.results)
    counts = {row.status: row["count"] for row in results.groupBy("status").count().collect()}
    total = sum(counts.values())
    parts = ", ".join(f"{counts.get(s, 0)} {s}" for s in ("saved", "fresh", "skipped", "failed", "cancelled")
                      if counts.get(s, 0) or s in ("saved", "failed"))
    fetched = results.agg(F.sum("bytes")).first()[0] or 0
    print(f"spark-fetch: {total} items: {parts}; {fetched} B; Spark start-up {startup:.1f} s, job {seconds:.1f} s; "
          f"results in {args.results}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
