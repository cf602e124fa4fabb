#!/usr/bin/env python3
"""spark-fetch: fetches URL lists with imgfetch on a Spark cluster (or Spark's local mode).

    Scripts/spark-fetch urls.txt -o /shared/out --partitions 64 -- --output-format webdataset
    Scripts/spark-fetch urls.txt -o s3://bucket/photos --results /shared/photos.parquet -- --output-format webdataset
    spark-submit --master yarn deploy/spark/spark_fetch.py s3a://b/urls.parquet --input-format parquet \\
        --url-column url -o /shared/out --imgfetch /opt/imgfetch/bin/imgfetch

The flow, one direction (docs/CLUSTER.md has the reasons):
  1. Spark reads the lists (text, CSV/TSV, JSON Lines or Parquet) on the executors; nothing is
     collected to the driver (img2dataset #338). Each line or record is tagged with its place:
     (list file, input split, offset in the split).
  2. Each item goes to the partition that `imgfetch --shard K/N` would give it (the first 8 bytes
     of the SHA-256 of libcurl's normalized URL, or of the lowercased host with --shard-by host,
     big-endian, modulo N). Within a partition items are sorted by their place, so a re-run gives
     every worker the same lines in the same order (the same shards, the same sample keys).
  3. Each partition is piped through one imgfetch worker, which the task starts, feeds and
     watches (`run_worker`). Partition K writes OUTPUT/part-K; its cache index lives on the
     executor's local disk, ${TMPDIR:-/tmp}/spark-fetch-work/HASH/part-K, never on a shared file
     system (with OUTPUT s3://BUCKET/PREFIX, the files are made there too, then uploaded). The
     worker runs with --failures-are-data: failed items are data (exit 0); any other exit (75: a
     full disk, an unwritable output, a signal), or fewer result lines than items, fails the
     task with one line naming the partition and the worker's last stderr line, and Spark retries it.
  4. The workers' result lines are matched to their input lines by the line number each result
     carries (line n of a worker's stdin is the partition's n-th line), written as Parquet with
     the list file and line of every item, and the driver prints a summary read back from it. An
     item whose output an earlier attempt or run made has that run's status, HTTP status and size
     (the result line's `made`), so the table does not depend on history; `this_run` says what
     this run did.
"""
import argparse
import ctypes
import ctypes.util
import hashlib
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time

# Options spark-fetch gives every worker itself, which options after `--` must not change.
RESERVED = {
    "-o": "spark-fetch's -o", "--output-dir": "spark-fetch's -o", "--input-format": "spark-fetch's --input-format",
    "--url-column": "spark-fetch's --url-column", "--caption-column": "spark-fetch's --caption-column",
    "--key-column": "spark-fetch's --key-column", "--shard": "spark-fetch's partitions",
    "--shard-by": "spark-fetch's --shard-by", "--jsonl": "spark-fetch", "--failures-are-data": "spark-fetch",
    "--report": "the results Parquet (every worker would write one file)",
    "--gallery": "nothing (every worker would write one page)", "--progress": "spark-fetch",
    "--shard-prefix": "spark-fetch (part-K-)", "--work-dir": "spark-fetch (the executor's local disk)", "--help": "nothing", "--version": "nothing", "--man": "nothing", "--completions": "nothing",
}

# What the workers may inherit from the driver's environment (they get nothing else).
PASSED_ENVIRONMENT = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                      "no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "TMPDIR")
# ... and, with -o s3://…, the object store's credentials, region and endpoint.
STORE_ENVIRONMENT = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                     "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE", "IMGFETCH_S3_PART_SIZE")

# The result columns: name, Spark type.
RESULT_COLUMNS = [
    ("partition", "int"), ("input_file", "string"), ("input_line", "bigint"), ("url", "string"),
    ("status", "string"), ("error_class", "string"), ("error_message", "string"), ("http_status", "int"),
    ("bytes", "bigint"), ("format", "string"), ("width", "int"), ("height", "int"), ("key", "string"),
    ("paths", "array<string>"), ("this_run", "string"), ("result", "string"),
]
# The columns that record when and how (they differ between a run and its re-run); the others are
# a function of the input.
RUN_COLUMNS = ("this_run", "result")


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




# The shared libraries of the Swift runtime: a binary that loads one runs only beside the toolchain
# that built it (`swift build` without --static-swift-stdlib), and an executor has none.
SWIFT_RUNTIME = re.compile(r"^(libswift|libFoundation|lib_Foundation|libdispatch\.so|libBlocksRuntime\.so)")


def needed_libraries(path):
    """The shared libraries an ELF executable names (DT_NEEDED), read as the loader reads them:
    the PT_DYNAMIC segment, its string table found through the PT_LOAD segments. None when the file
    is not a 64-bit little-endian ELF executable, or is damaged."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        return None
    try:
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
        # (p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz)
        segments = [struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
        dynamic = next(((offset, size) for kind, _, offset, _, _, size in segments if kind == 2), None)  # PT_DYNAMIC
        if dynamic is None:
            return []  # statically linked: it names no library
        entries = [struct.unpack_from("<qQ", data, at) for at in range(dynamic[0], dynamic[0] + dynamic[1], 16)]
        entries = entries[:next((i for i, (tag, _) in enumerate(entries) if tag == 0), len(entries))]
        address = next(value for tag, value in entries if tag == 5)  # DT_STRTAB, a virtual address

        def file_offset(virtual):
            for kind, _, offset, vaddr, _, size in segments:
                if kind == 1 and vaddr <= virtual < vaddr + size:  # PT_LOAD
                    return offset + virtual - vaddr
            raise ValueError("an address outside every segment")

        strings = file_offset(address)
        return [data[strings + value:data.index(b"\0", strings + value)].decode("utf-8", "replace")
                for tag, value in entries if tag == 1]  # DT_NEEDED
    except (struct.error, ValueError, StopIteration):
        return None


def shipped_binary(name):
    """The imgfetch binary to ship to the executors: NAME (a path, or a command looked up on PATH
    as a shell would), or imgfetch on PATH. Refused (exit 2), before Spark starts, when it would not
    run on an executor: one built by `swift build` loads the Swift runtime from the toolchain that
    built it."""
    def refuse(message):
        print(f"spark-fetch: {message}", file=sys.stderr)
        raise SystemExit(2)

    found = (name if "/" in name else shutil.which(name)) if name else shutil.which("imgfetch")
    if not found:
        refuse(f"{f'--imgfetch {name}: no such command on PATH' if name else 'no imgfetch on PATH'}; install the "
               "package (apt install ./imgfetch_VERSION_amd64.deb, made by Scripts/package), or give --imgfetch the "
               "path of bin/imgfetch from its tarball")
    if not os.path.isfile(found) or not os.access(found, os.X_OK):
        refuse(f"--imgfetch {found}: not an executable file")
    needed = needed_libraries(found)
    if needed is None:
        refuse(f"--imgfetch {found}: not a 64-bit Linux executable (ELF), or a damaged one")
    runtime = [library for library in needed if SWIFT_RUNTIME.match(library)]
    if runtime:
        refuse(f"{found} needs the Swift runtime ({', '.join(runtime[:3])}), which the executors do not have: ship "
               "the release binary that Scripts/package builds instead, which links it in (install its .deb on every "
               "node and leave --imgfetch out, or give --imgfetch bin/imgfetch of its tarball where the libraries the "
               ".deb depends on are installed)")
    return os.path.abspath(found)


def shard_of(text, count):
    """imgfetch's ShardSelector.shard(of:count:)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count


# A URL that libcurl's normalization leaves as it is: lowercase scheme and host name (not an IP
# address, which libcurl may rewrite, unless a plain dotted quad), no default port, a path with
# no dot segment, no fragment, no userinfo, only unreserved and reserved ASCII. Such URLs (most
# of any list) are hashed without calling libcurl; everything else goes through it.
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_NORMAL = re.compile(r"(https?)://(" + _LABEL + r"(?:\." + _LABEL + r")*)(?::([1-9][0-9]{0,4}))?"
                     r"(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)(\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]+)?")
_QUAD = re.compile(r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])")
_DEFAULT_PORT = {"http": "80", "https": "443"}


def _already_normal(url):
    if len(url) > 8192:
        return None  # longer than imgfetch takes (ParsedURL.maxLength): libcurl's path says so
    match = _NORMAL.fullmatch(url)
    if not match:
        return None
    scheme, host, port, path = match.group(1), match.group(2), match.group(3), match.group(4)
    if host[host.rfind(".") + 1:][:1].isdigit() and not _QUAD.fullmatch(host):
        return None  # maybe an IPv4 address in another form
    if port and (port == _DEFAULT_PORT[scheme] or int(port) > 65535):
        return None
    if "/./" in path or "/../" in path or path.endswith(("/.", "/..")):
        return None
    return url, host


_curl = None


def parse_url(text):
    """(normalized URL, host) as imgfetch's ParsedURL gives them, or None when imgfetch would not
    take the text as a URL. The text is trimmed as imgfetch trims a table cell."""
    global _curl
    text = text.strip(" \t\r\n")
    fast = _already_normal(text)
    if fast:
        return fast
    if _curl is None:
        _curl = CurlURL()
    return _curl.parse(text)


def partition_of(url, fallback, count, by):
    """The partition of an item: that of `imgfetch --shard K/N` for a URL imgfetch takes; for
    anything else (not a URL, no URL) that of `fallback`, the item's place and text."""
    parsed = parse_url(url) if isinstance(url, str) and url else None
    if parsed is None:
        return shard_of(fallback, count)
    return shard_of(parsed[1] if by == "host" else parsed[0], count)


def text_line_url(line):
    """The URL of a text list's line, as imgfetch's ListLineParser finds it: the first field, fields
    being separated by spaces and tabs; None for a blank line or a comment."""
    stripped = line.rstrip("\r").lstrip(" \t")
    if not stripped or stripped.startswith("#"):
        return None
    end = len(stripped)
    for separator in (" ", "\t"):
        at = stripped.find(separator)
        if at != -1:
            end = min(end, at)
    return stripped[:end]


def jsonl_url(line, column):
    import json
    try:
        # imgfetch takes a repeated member's first value; json.loads would keep the last.
        value = json.loads(line, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    except ValueError:
        return None
    url = value.get(column) if isinstance(value, dict) else None
    return url if isinstance(url, str) else None


def list_files(spark, patterns):
    """The list files, in the order given: each argument a path, a directory (its files) or a glob
    (its matches, sorted), as Spark's readers take them; a path that exists is never a glob."""
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    files = []
    for pattern in patterns:
        path = jvm.org.apache.hadoop.fs.Path(pattern)
        fs = path.getFileSystem(conf)
        # A file of that very name is itself ("urls[1].txt"); anything else is a pattern.
        statuses = [fs.getFileStatus(path)] if fs.exists(path) else (fs.globStatus(path) or [])
        found = []
        for status in statuses:
            if status.isDirectory():
                found += [child.getPath().toString() for child in fs.listStatus(status.getPath())
                          if child.isFile() and not child.getPath().getName().startswith((".", "_"))]
            else:
                found.append(status.getPath().toString())
        if not found:
            raise SystemExit(f"spark-fetch: no list at '{pattern}'")
        for name in found:
            if "," in name:
                raise SystemExit(f"spark-fetch: cannot read '{name}': Spark takes a comma in a path for a list of "
                                 "paths; rename the file")
        files += sorted(found)
    return files


def read_list(spark, path, args):
    """One list file as an RDD of (line for the worker, its URL or None)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    sc = spark.sparkContext
    path = _escaped(path)  # a file found by list_files: "a[1].txt" is that file, not a pattern
    if args.input_format in ("txt", "jsonl"):
        # Lines end at "\n" only, as imgfetch reads them (sc.textFile would also end one at a lone
        # "\r", and every later line number would be off by one).
        lines = sc.newAPIHadoopFile(path, "org.apache.hadoop.mapreduce.lib.input.TextInputFormat",
                                    "org.apache.hadoop.io.LongWritable", "org.apache.hadoop.io.Text",
                                    conf={"textinputformat.record.delimiter": "\n"}).map(lambda pair: pair[1])
        if args.input_format == "txt":
            return lines.map(lambda line: (line, text_line_url(line)))
        column = args.url_column
        return lines.map(lambda line: (line, jsonl_url(line, column)))
    if args.input_format == "parquet":
        frame = spark.read.parquet(path)
    else:
        reader = spark.read.option("header", True).option("mode", "PERMISSIVE")
        if args.input_format == "tsv":
            # imgfetch's TSV has no quoting: a '"' is text, and a row is one line.
            reader = reader.option("sep", "\t").option("quote", "").option("escape", "")
        else:
            reader = reader.option("multiLine", True).option("escape", '"')
        frame = reader.csv(path)
    if args.url_column not in frame.columns:
        raise SystemExit(f"spark-fetch: list '{path}' has no column '{args.url_column}' for the URLs "
                         f"(its columns: {', '.join(frame.columns)}); give --url-column")
    columns = []
    for field in frame.schema.fields:
        column = F.col(f"`{field.name}`")
        if isinstance(field.dataType, T.BinaryType):
            column = column.cast("string")  # UTF-8 text, as the worker wants it
        elif isinstance(field.dataType, (T.DoubleType, T.FloatType)):
            # JSON has no NaN or infinity; the worker would refuse the whole line.
            column = F.when(F.isnan(column) | (F.abs(column) == float("inf")), None).otherwise(column)
        elif args.input_format != "parquet":
            column = F.coalesce(column, F.lit(""))  # an empty CSV field is "" to imgfetch, not null
        columns.append(column.alias(field.name))
    url = F.col(f"`{args.url_column}`")
    return frame.select(F.to_json(F.struct(*columns)), F.when(url.isNotNull(), url.cast("string"))).rdd \
        .map(lambda row: (row[0], row[1]))


def placed_lines(spark, args, files, count):
    """The RDD of (place, line) in `count` partitions: partition K holds the lines whose items
    `--shard K/N` takes, sorted by place = (partition, list file, input split, offset in the split)."""
    sc = spark.sparkContext
    by = args.shard_by
    tagged = []
    for ordinal, path in enumerate(files):
        def tag(split, lines, ordinal=ordinal):
            for offset, (line, url) in enumerate(lines):
                place = (ordinal, split, offset)
                yield (partition_of(url, f"{ordinal}:{split}:{offset}\t{line}", count, by),) + place, line
        tagged.append(read_list(spark, path, args).mapPartitionsWithIndex(tag))
    everything = sc.union(tagged) if len(tagged) > 1 else tagged[0]
    # A shuffle delivers a partition's lines in any order; sorted by place, a re-run gives each
    # worker the same lines in the same order.
    return everything.repartitionAndSortWithinPartitions(count, partitionFunc=lambda key: key[0])


def worker_options(args):
    """The worker's options: the user's (after `--`), then spark-fetch's own."""
    options = list(args.imgfetch_options)
    options += ["--input-format", "txt" if args.input_format == "txt" else "jsonl", "--jsonl",
                "--failures-are-data", "--progress", "none"]
    if args.input_format != "txt":
        options += ["--url-column", args.url_column]
    if args.caption_column:
        options += ["--caption-column", args.caption_column]
    if args.key_column:
        options += ["--key-column", args.key_column]
    return options


def worker_argv(args, binary, part, temp="/tmp"):
    """The worker of partition `part`: imgfetch reading its list from stdin and writing
    OUTPUT/part-K. WebDataset shards and keys start with `part-K-`: every partition numbers its
    shards from 0. Its cache index (and, for an object store, its files in the making) lives on
    the executor's local disk, in a directory that a retry on the same host finds again: SQLite
    cannot keep its index on a shared file system."""
    name = f"part-{part:05d}"
    work = os.path.join(temp, "spark-fetch-work", work_name(args), name)
    prefix = ["--shard-prefix", f"{name}-"] if webdataset(args) else []
    return [binary, "-"] + worker_options(args) + ["-o", f"{args.output}/{name}"] + prefix + ["--work-dir", work]


def work_name(args):
    """The work directories' folder for OUTPUT: its text's SHA-256, shortened."""
    return hashlib.sha256(args.output.encode()).hexdigest()[:16]


def webdataset(args):
    options = args.imgfetch_options
    return "--output-format=webdataset" in options or any(
        a == "--output-format" and b == "webdataset" for a, b in zip(options, options[1:]))


def worker_environment(args):
    names = PASSED_ENVIRONMENT + (STORE_ENVIRONMENT if args.store else ())
    return {name: os.environ[name] for name in names if name in os.environ}


def check_passed_options(options):
    for option in options:
        name = option.split("=", 1)[0]
        if name.startswith("-o") and not name.startswith("--"):
            name = "-o"
        if name in RESERVED:
            raise SystemExit(f"spark-fetch: '{option}' cannot be given to the workers: it is set by {RESERVED[name]}")


def preflight(args):
    """Runs the worker's options once on the driver, on an empty list: a usage error (exit 2),
    which every task would repeat, stops the job before it starts."""
    binary = args.imgfetch
    with tempfile.TemporaryDirectory(prefix="spark-fetch-") as scratch:
        prefix = ["--shard-prefix", "part-00000-"] if webdataset(args) else []
        output = ["-o", args.output + "/part-00000" if args.store else os.path.join(scratch, "out"),
                  "--work-dir", os.path.join(scratch, "work")]
        done = subprocess.run([binary, "-"] + worker_options(args) + output + prefix,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=worker_environment(args))
    if done.returncode == 2:
        sys.stderr.write(done.stderr.decode("utf-8", "replace"))
        print("spark-fetch: the worker's options are not usable (imgfetch exited 2); nothing was started", file=sys.stderr)
        raise SystemExit(2)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="spark-fetch", description=__doc__.split("\n\n")[0],
                                     usage="%(prog)s LIST... -o OUTPUT [options] [-- IMGFETCH-OPTIONS...]")
    parser.add_argument("lists", nargs="+", metavar="LIST", help="URL lists: paths, directories, globs or URIs Spark reads")
    parser.add_argument("-o", "--output", required=True,
                        help="where partition K writes: OUTPUT/part-K (a local or shared directory, or s3://BUCKET/PREFIX)")
    parser.add_argument("--results", help="the results' Parquet directory (default OUTPUT/results.parquet; "
                        "needed with an s3:// OUTPUT)")
    parser.add_argument("--partitions", type=int, help="N, the number of workers (default: Spark's parallelism)")
    parser.add_argument("--input-format", choices=["txt", "csv", "tsv", "jsonl", "parquet"], default="txt")
    parser.add_argument("--url-column", default="url")
    parser.add_argument("--caption-column")
    parser.add_argument("--key-column")
    parser.add_argument("--shard-by", choices=["url", "host"], default="url")
    parser.add_argument("--imgfetch", help="the imgfetch binary to ship to the workers (sc.addFile): a path, or a command "
                        "on PATH; default: imgfetch on PATH (the installed package's). A binary that needs the Swift "
                        "toolchain is refused")
    parser.add_argument("--master", help="Spark's master (default: spark-submit's, or local[*,4]: a failed task is "
                        "tried 4 times, as on a cluster)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    if "--" in argv:
        at = argv.index("--")
        argv, passed = argv[:at], argv[at + 1:]
    else:
        passed = []
    args = parser.parse_args(argv)
    check_passed_options(passed)
    args.imgfetch = shipped_binary(args.imgfetch)
    args.imgfetch_options = passed
    if args.partitions is not None and not 1 <= args.partitions <= 1_000_000:
        parser.error("--partitions must be from 1 to 1000000")
    if args.output.startswith("file:"):
        args.output = re.sub(r"^file:(//)?", "", args.output)
    args.store = args.output.startswith("s3://")
    if args.store:
        args.output = args.output.rstrip("/")
        if not args.results:
            parser.error(f"-o {args.output}: give --results, a local or shared path for the results and the job's record")
    elif re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", args.output):
        parser.error(f"-o {args.output}: the workers write to a directory (a local or shared file system path) "
                     "or to s3://BUCKET/PREFIX")
    else:
        args.output = os.path.abspath(args.output)
    args.results = args.results or os.path.join(args.output, "results.parquet")
    if args.store:
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", args.results) and not args.results.startswith("file:"):
            parser.error(f"--results {args.results}: with an s3:// OUTPUT, the results go to a local or shared path")
        # The job's record goes beside them, on the driver's file system: a relative path would
        # mean the driver's directory there and perhaps another place to Spark.
        args.results = os.path.abspath(re.sub(r"^file:(//)?", "", args.results))
    return args


def main(argv=None):
    return run(parse_args(sys.argv[1:] if argv is None else argv))


def session(args):
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("imgfetch spark-fetch")
    if args.master:
        builder = builder.master(args.master)
    elif not SparkConf().contains("spark.master"):
        builder = builder.master("local[*,4]")
    # The job's own shuffles (the splits' lengths, the summary) are a few rows: 200 partitions
    # (Spark's default) would be 200 tasks each for nothing.
    builder = builder.config("spark.sql.shuffle.partitions", "8")
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # A task that fails is retried, and the job's own last line says why it failed for good:
    # Spark's warnings of each failed attempt (a traceback each) would bury it.
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def local_cluster_work(spark):
    """Where a local-cluster master's workers keep this application's files (a copy of the
    shipped binary per executor): SPARK_HOME/work/APP-ID, in pyspark's own directory, which Spark
    does not let a local-cluster move. None for any other master."""
    if not spark.sparkContext.master.startswith("local-cluster"):
        return None
    from pyspark.find_spark_home import _find_spark_home
    return os.path.join(_find_spark_home(), "work", spark.sparkContext.applicationId)


def stop(spark):
    """Stops the session, and removes its local-cluster work directory (7 MB a run otherwise)."""
    work = local_cluster_work(spark)
    spark.stop()
    if work:
        shutil.rmtree(work, ignore_errors=True)


def _escaped(path):
    """A path as itself, not as a Hadoop glob ("out[2]" is a directory, not a pattern)."""
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", path)


def partition_rows(spark, args, files, count):
    """The RDD of result rows: each partition's lines go through its worker (`run_worker`)."""
    sc = spark.sparkContext
    if __name__ != "__main__":
        # Imported (by a test, or another job): the workers need the module the functions are in.
        sc.addPyFile(os.path.abspath(__file__))
    sc.addFile(args.imgfetch)
    binary_name = os.path.basename(args.imgfetch)
    environment = worker_environment(args)
    temp = environment.get("TMPDIR") or "/tmp"  # the workers' TMPDIR: the driver's, as they get it
    text = args.input_format == "txt"

    def work(index, items):
        from pyspark import SparkFiles
        return run_worker(worker_argv(args, SparkFiles.get(binary_name), index, temp), environment, index, items, text)

    return placed_lines(spark, args, files, count).mapPartitionsWithIndex(work)


def expects_result(line, text):
    """Whether imgfetch reports the line: not a blank line, nor a text list's comment."""
    stripped = line.strip(" \t\r")
    return bool(stripped) and not (text and stripped.startswith("#"))


def run_worker(argv, environment, index, items, text):
    """Runs partition `index`'s worker on its lines (`items`: (place, line), in order) and yields
    its rows: ("result", partition, ordinal, split, offset, the result's fields…, the line) for
    each result line, with the place of the line it reports (its `line`, the n-th line the worker
    read); then ("split", partition, ordinal, split, last offset, None…) for each input split the
    partition had lines of (for the splits' lengths). A worker that exits other than 0, or reports
    fewer items than it was given, fails the task with one line naming the partition and the
    worker's last stderr line (Spark retries it)."""
    import collections
    import threading
    from array import array

    ordinals, splits, offsets = array("q"), array("q"), array("q")
    expected = [0]
    # The worker dies with the Python process that runs the task (a task Spark kills, a lost
    # executor): an orphaned worker would go on writing the partition's output beside the retry.
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment, preexec_fn=_parent_death_signal())
    fed = []

    def feed():
        try:
            for (_, ordinal, split, offset), line in items:
                ordinals.append(ordinal)
                splits.append(split)
                offsets.append(offset)
                expected[0] += expects_result(line, text)
                process.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
            fed.append(True)
        except BrokenPipeError:
            pass  # the worker ended early: its exit says why
        except BaseException as error:  # reading the partition failed: the task fails with it
            fed.append(error)
        finally:
            try:
                process.stdin.close()
            except BrokenPipeError:
                pass

    last = collections.deque(maxlen=20)

    def drain():
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            last.append(line)
            print(line, file=sys.stderr)  # the executor's log keeps all of it

    feeder, reader = threading.Thread(target=feed, daemon=True), threading.Thread(target=drain, daemon=True)
    feeder.start()
    reader.start()
    try:
        yield from _worker_rows(process, index, ordinals, splits, offsets, expected, fed, last, feeder, reader)
    finally:
        # Also when Spark stops reading (the task is killed, a later stage failed): no worker is left.
        if process.poll() is None:
            process.kill()
            process.wait()


def _parent_death_signal():
    """The preexec_fn that makes the worker's child SIGKILLed when its parent (the task's Python)
    dies: prctl(PR_SET_PDEATHSIG), looked up here, in the parent. Between fork and exec the child
    only calls it: loading a library there could wait forever on a lock another thread held at
    the fork. None where there is no prctl."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = (ctypes.c_int, ctypes.c_ulong)
    return lambda: prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


def _worker_rows(process, index, ordinals, splits, offsets, expected, fed, last, feeder, reader):
    import json
    reported = 0
    failure = None
    for raw in process.stdout:
        text_line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
        try:
            result = json.loads(text_line)
        except ValueError:
            result = None
        if not isinstance(result, dict):
            failure = f"a worker's output line is not a result: {text_line[:300]}"
            break
        where = result.get("line") or {}
        if where.get("file") != "<stdin>":
            failure = (f"a worker read a list besides its partition ({where.get('file')}): "
                       "give lists to spark-fetch, not after `--`")
            break
        n = where.get("line", 0) - 1
        if not 0 <= n < len(offsets):
            failure = f"a worker's result names no line it was given: {text_line[:300]}"
            break
        reported += 1
        error = result.get("error") or {}
        made = result.get("made")
        # What made the item's output: this run, or (`made`) the earlier attempt or run.
        status, http_status, size = ((made.get("status"), made.get("http_status"), made.get("bytes")) if made else
                                     (result.get("status"), result.get("http_status"), result.get("bytes")))
        yield ("result", index, ordinals[n], splits[n], offsets[n], result.get("url"), status,
               error.get("class"), error.get("message"), http_status, size, result.get("format"),
               result.get("width"), result.get("height"), result.get("key"), result.get("paths") or [],
               result.get("status"), text_line)
    if failure:
        process.kill()
    code = process.wait()
    feeder.join()
    reader.join()
    if fed and fed[0] is not True:
        raise fed[0]
    # Its own last word: not the closing summary (`imgfetch: 40 items: …`), which says only how many failed.
    said = next((line for line in reversed(last) if line.strip() and not re.match(r"imgfetch: \d+ items?:", line)),
                "nothing on stderr")
    if failure:
        raise RuntimeError(f"spark-fetch: partition {index}: {failure}")
    if code != 0:
        how = f"killed by signal {-code}" if code < 0 else f"exited {code}"
        raise RuntimeError(f"spark-fetch: partition {index}: imgfetch {how}: {said}")
    if reported < expected[0]:
        raise RuntimeError(f"spark-fetch: partition {index}: imgfetch reported {reported} of its {expected[0]} items "
                           f"and exited 0: {said}")
    last_offsets = {}
    for ordinal, split, offset in zip(ordinals, splits, offsets):
        last_offsets[(ordinal, split)] = offset
    for (ordinal, split), offset in last_offsets.items():
        yield ("split", index, ordinal, split, offset) + (None,) * 13


MATCHED_SCHEMA = ("kind string, partition int, ordinal int, split int, offset bigint, url string, status string, "
                  "error_class string, error_message string, http_status int, bytes bigint, format string, width int, "
                  "height int, key string, paths array<string>, this_run string, result string")


def run(args, spark=None):
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    preflight(args)
    started = time.monotonic()
    own = spark is None
    spark = spark or session(args)
    ready = time.monotonic()
    remove_stale_staging(spark, args.results)
    # One job runs the workers and writes what they said; everything after reads that. (A cached
    # DataFrame used twice was scanned by two concurrent stages, each of which could start a
    # partition's worker.) Then the results are written beside the old ones and renamed over
    # them: a job that fails keeps the last ones, and leaves neither staging directory.
    owner = f"{_host()}-{os.getpid()}"
    matched = args.results.rstrip("/") + f".rows-tmp-{owner}"
    staging = args.results.rstrip("/") + f".tmp-{owner}"
    record = None
    try:
        files = list_files(spark, args.lists)
        count, record = partition_count(spark, args)
        rows = spark.createDataFrame(partition_rows(spark, args, files, count), MATCHED_SCHEMA, verifySchema=False)
        try:
            rows.write.mode("overwrite").parquet(matched)
        except Exception as error:  # a task failed for good (Py4JJavaError): say which, in one line
            verdict = re.findall(r"spark-fetch: (partition \d+: [^\n]*)", str(error))
            if verdict:
                print(f"spark-fetch: the job failed, after Spark's retries: {verdict[-1]}", file=sys.stderr)
            else:
                print(f"spark-fetch: the job failed: {(str(error).strip().splitlines() or ['unknown'])[0][:500]}", file=sys.stderr)
            if record and not args.store and not glob_parts(args.output):
                os.remove(record)  # nothing was written: the next run may choose another N
            raise SystemExit(1)
        rows = spark.read.parquet(_escaped(matched))
        # A line's number in its file: the lengths of the file's earlier splits, plus its offset.
        splits = rows.where("kind = 'split'").groupBy("ordinal", "split").agg(F.max("offset").alias("last")) \
            .withColumn("start", F.coalesce(F.sum(F.col("last") + 1).over(
                Window.partitionBy("ordinal").orderBy("split").rowsBetween(Window.unboundedPreceding, -1)), F.lit(0)))
        names = spark.createDataFrame(list(enumerate(files)), "ordinal int, input_file string")
        columns = [name for name, _ in RESULT_COLUMNS]
        joined = rows.where("kind = 'result'") \
            .join(F.broadcast(splits.select("ordinal", "split", "start")), ["ordinal", "split"]) \
            .join(F.broadcast(names), ["ordinal"]) \
            .withColumn("input_line", F.col("start") + F.col("offset") + 1) \
            .select(*columns)
        joined.write.mode("overwrite").parquet(staging)  # written paths are not globs; read ones are
        replace(spark, staging, args.results)
        return summary(spark, args, ready - started, time.monotonic() - ready)
    finally:
        for path in (matched, staging):
            try:
                remove(spark, path)
            except Exception:  # the session is gone: remove_stale_staging tidies next time
                pass
        if own:
            stop(spark)


def glob_parts(output):
    """OUTPUT's part-K directories (local or shared file system)."""
    return [name for name in os.listdir(output) if name.startswith("part-")] if os.path.isdir(output) else []


def _host():
    import socket
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"


def remove_stale_staging(spark, results):
    """Removes the staging directories (RESULTS.rows-tmp-HOST-PID, RESULTS.tmp-HOST-PID) that a job
    which died left beside the results: those of this host whose PID is no longer running (a
    shared file system's other hosts' are theirs to judge)."""
    jvm = spark._jvm
    base = jvm.org.apache.hadoop.fs.Path(results.rstrip("/"))
    fs = base.getFileSystem(spark._jsc.hadoopConfiguration())
    parent = base.getParent()
    if parent is None or not fs.exists(parent):
        return
    name = base.getName()
    for status in fs.listStatus(parent):
        match = re.fullmatch(re.escape(name) + r"\.(?:rows-)?tmp-" + re.escape(_host()) + r"-(\d+)", status.getPath().getName())
        if match and not os.path.exists(f"/proc/{match.group(1)}"):
            fs.delete(status.getPath(), True)


JOB_RECORD = "_spark-fetch.json"


def partition_count(spark, args):
    """N: --partitions, or the N that OUTPUT was written with (OUTPUT/_spark-fetch.json; for an
    s3:// OUTPUT, RESULTS_spark-fetch.json beside the results), or Spark's parallelism; and the
    record's path when this run wrote it. Another N than the recorded one would put items in other
    part-K directories than before: their earlier files would stay beside new copies."""
    import json
    if args.store:
        record = args.results.rstrip("/") + JOB_RECORD
        os.makedirs(os.path.dirname(record), exist_ok=True)
    else:
        record = os.path.join(args.output, JOB_RECORD)
    try:
        with open(record) as f:
            job = json.load(f)
        recorded = job.get("partitions")
    except (OSError, ValueError, AttributeError):
        job, recorded = {}, None
    if args.store and recorded and job.get("output") != args.output:
        raise SystemExit(f"spark-fetch: {args.results} holds the results of {job.get('output')}, not of {args.output}; "
                         "give another --results")
    count = args.partitions or recorded or spark.sparkContext.defaultParallelism
    if recorded and count != recorded:
        raise SystemExit(f"spark-fetch: {args.output} was written with --partitions {recorded}; give --partitions "
                         f"{recorded}, or another -o")
    if recorded:
        return count, None
    if not args.store:
        os.makedirs(args.output, exist_ok=True)
    with open(record + ".tmp", "w") as f:
        json.dump({"partitions": count, "shard_by": args.shard_by, "output": args.output}, f)
    os.replace(record + ".tmp", record)
    return count, record


def remove(spark, path):
    jvm = spark._jvm
    target = jvm.org.apache.hadoop.fs.Path(path)
    target.getFileSystem(spark._jsc.hadoopConfiguration()).delete(target, True)


def replace(spark, staging, final):
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    target = jvm.org.apache.hadoop.fs.Path(final)
    fs = target.getFileSystem(conf)
    if fs.exists(target):
        fs.delete(target, True)
    if not fs.rename(jvm.org.apache.hadoop.fs.Path(staging), target):
        raise SystemExit(f"spark-fetch: could not rename {staging} to {final}")


def summary(spark, args, startup, seconds):
    """Prints the summary, read back from the Parquet; 0."""
    from pyspark.sql import functions as F

    results = spark.read.parquet(_escaped(args.results))
    counts = {row.status: row["count"] for row in results.groupBy("status").count().collect()}
    total = sum(counts.values())
    parts = ", ".join(f"{counts.get(s, 0)} {s}" for s in ("saved", "fresh", "skipped", "failed", "cancelled")
                      if counts.get(s, 0) or s in ("saved", "failed"))
    fetched = results.where("this_run = 'saved'").agg(F.sum("bytes")).first()[0] or 0
    # Rows whose output an earlier attempt or run made keep that run's status; this run skipped them.
    earlier = results.where("this_run = 'skipped' AND status <> 'skipped'").count()
    made = f" ({earlier} made by an earlier attempt or run)" if earlier else ""
    print(f"spark-fetch: {total} items: {parts}{made}; {fetched} B fetched; Spark start-up {startup:.1f} s, job {seconds:.1f} s; "
          f"results in {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
