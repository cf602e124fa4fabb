#!/usr/bin/env python3
"""Runs two builds of imgfetch on the same input against the same servers and compares what they
leave, byte for byte: the golden comparison of a change that must not change behaviour.

    .venv-tests/bin/python Scripts/test-support/golden_outputs.py --before BIN --after BIN [--keep DIR]

(`Scripts/test-support/golden-outputs REV` builds REV and the working tree and runs this.)

Modes, each run by both binaries in a directory of its own (same relative paths):
  files        a list (PNGs, JPEGs, a repeat, a redirect, a 404, a text page) into a directory,
               with --report; then the same again (every item skipped); then --save-as png
  dataset      a CSV (key, caption, an extra column) into WebDataset shards of 3, with a 404 row
  s3-files     the list into -o s3://BUCKET/PREFIX (moto, through s3_store.py's proxy)
  s3-dataset   the CSV into shards in the store

Compared: stdout, stderr, the --report file, every file left (name, bytes, mtime, mode), every
object in the store (key under the mode's prefix, bytes, content type). Times are taken out
first: JSON members duration_ms, start_time, end_time, duration and duration_s. Lines of file runs are
sorted (they come in completion order). Prints each difference; exits 1 if there is one.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# Members that hold a time, or (results_etag) the hash of a file that holds times.
TIMES = {"duration_ms", "start_time", "end_time", "duration", "duration_s", "results_etag"}
# Summary lines say how long the run took.
SECONDS = re.compile(r" in [0-9.]+ s\b")


def without_times(text):
    """Each line that is a JSON object, with its time members nulled; other lines as they are."""
    lines = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        if isinstance(value, dict):
            for name in TIMES & value.keys():
                value[name] = None
            line = json.dumps(value, ensure_ascii=False)
        lines.append(line)
    return lines


def normalized(data, name, sort):
    """A file's bytes as compared: JSON text without times, stats too; anything else as is."""
    if name.endswith((".json", ".jsonl")) or sort is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        if name.endswith(".json") and not name.endswith(".jsonl"):
            try:
                value = json.loads(text)
            except ValueError:
                return data
            if isinstance(value, dict):
                for key in TIMES & value.keys():
                    value[key] = None
                return json.dumps(value, sort_keys=False, ensure_ascii=False)
        lines = without_times(text)
        return "\n".join(sorted(lines) if sort else lines)
    return data


def tree(root):
    """Every file under root but the cache index: relative path → (bytes, mode). (Not the mtime:
    a file's is the time it was written.)"""
    found = {}
    for directory, _, names in os.walk(root):
        if ".imgfetch" in directory.split(os.sep):
            continue  # the index, a SQLite file whose pages differ with timing
        for name in names:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            with open(path, "rb") as file:
                found[os.path.relpath(path, root)] = (file.read(), oct(info.st_mode))
    return found


class Servers:
    def __init__(self, scratch):
        images = os.path.join(scratch, "server")
        subprocess.run([sys.executable, os.path.join(HERE, "make_samples.py"), images, "--count", "4", "--seed", "7"],
                       check=True)
        with open(os.path.join(images, "page.txt"), "w") as file:
            file.write("not an image\n")
        # Old, fixed Last-Modified times: heuristically fresh for both builds' re-runs alike, and
        # the same tar member times in every session.
        for name in os.listdir(images):
            os.utime(os.path.join(images, name), (1577836800, 1577836800))
        self.images = sorted(name for name in os.listdir(images) if name != "page.txt")
        self.http = subprocess.Popen([sys.executable, os.path.join(HERE, "test_server.py"), "--root", images,
                                      "--port", "0", "--max-seconds", "900"], stdout=subprocess.PIPE, text=True)
        self.base = "http://127.0.0.1:" + self.http.stdout.readline().split()[1]
        self.s3 = subprocess.Popen([sys.executable, os.path.join(HERE, "s3_store.py"), "serve", "--bucket", "golden",
                                    "--log", os.path.join(scratch, "s3.log"), "--faults", os.path.join(scratch, "faults.json")],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        info = json.loads(self.s3.stdout.readline())
        self.store_info = info
        self.environment = {"PATH": "/usr/bin:/bin", "AWS_ACCESS_KEY_ID": info["access_key"],
                            "AWS_SECRET_ACCESS_KEY": info["secret_key"], "AWS_ENDPOINT_URL": info["endpoint"],
                            "AWS_REGION": "us-east-1"}

    def url(self, path):
        return self.base + path

    def objects(self, prefix):
        """Every object under prefix: key after it → (bytes, content type); each is deleted,
        so that the other build's run finds the store as this one did."""
        import boto3
        info = self.store_info
        client = boto3.client("s3", endpoint_url=info["store"], region_name="us-east-1",
                              aws_access_key_id=info["access_key"], aws_secret_access_key=info["secret_key"])
        found = {}
        # Filtered here, not by the request: moto's signature check fails on a Prefix parameter.
        for page in client.get_paginator("list_objects_v2").paginate(Bucket="golden"):
            for entry in page.get("Contents", []):
                if not entry["Key"].startswith(prefix):
                    continue
                body = client.get_object(Bucket="golden", Key=entry["Key"])
                found[entry["Key"][len(prefix):]] = (body["Body"].read(), body.get("ContentType"))
                client.delete_object(Bucket="golden", Key=entry["Key"])
        return found

    def stop(self):
        self.http.terminate()
        self.s3.stdin.close()
        self.http.wait()
        self.s3.wait()


def inputs(servers, directory):
    files = [servers.url("/files/" + name) for name in servers.images]
    files += [files[0], servers.url("/redirect/1/files/" + servers.images[1]), servers.url("/files/missing.jpg"),
              servers.url("/files/page.txt")]
    with open(os.path.join(directory, "urls.txt"), "w") as file:
        file.write("\n".join(files) + "\n")
    with open(os.path.join(directory, "table.csv"), "w") as file:
        file.write("id,url,caption,license\n")
        for i, name in enumerate(servers.images):
            file.write(f"s{i},{servers.url('/files/' + name)},\"a caption, {i}\",cc-by\n")
        file.write(f"gone,{servers.url('/files/missing.jpg')},lost,none\n")


def scenarios():
    """(mode, [argument lists run in order], sorted lines?)"""
    table = ["table.csv", "--input-format", "csv", "--output-format", "webdataset", "--shard-samples", "3",
             "--key-column", "id", "--caption-column", "caption", "--jsonl"]
    return [
        ("files", [["urls.txt", "-o", "out", "--jsonl", "--report", "report.jsonl"],
                   ["urls.txt", "-o", "out", "--jsonl"],
                   ["urls.txt", "-o", "out-png", "--save-as", "png", "--jsonl"]], True),
        ("dataset", [table + ["-o", "shards"]], False),
        ("s3-files", [["urls.txt", "-o", "s3://golden/run/files", "--work-dir", "work", "--jsonl"]], True),
        ("s3-dataset", [table + ["-o", "s3://golden/run/shards", "--work-dir", "work"]], False),
    ]


def run(binary, label, servers, scratch):
    """Runs every mode with `binary`; returns mode → what it left."""
    results = {}
    for mode, runs, sort in scenarios():
        directory = os.path.join(scratch, label, mode)
        os.makedirs(directory)
        inputs(servers, directory)
        outputs = {}
        for number, arguments in enumerate(runs):
            done = subprocess.run([binary] + arguments, cwd=directory, env=servers.environment, capture_output=True)
            text = done.stdout.decode("utf-8", "replace")
            lines = without_times(text)
            outputs[f"run {number} exit"] = done.returncode
            outputs[f"run {number} stdout"] = "\n".join(sorted(lines) if sort else lines)
            errors = SECONDS.sub(" in T s", done.stderr.decode("utf-8", "replace")).splitlines()
            outputs[f"run {number} stderr"] = "\n".join(sorted(errors) if sort else errors)
        for path, (data, mode_bits) in tree(directory).items():
            if path not in ("urls.txt", "table.csv"):
                outputs["file " + path] = (normalized(data, path, True if path == "report.jsonl" else None), mode_bits)
        if mode.startswith("s3-"):
            for key, (data, content_type) in servers.objects("run/").items():
                outputs["object " + key] = (normalized(data, key, None), content_type)
        results[mode] = outputs
    return results


def what_differs(name, old, new):
    """A short account of how two compared values differ."""
    if old is None or new is None:
        return "only " + ("after" if old is None else "before") + " has it"
    if isinstance(old, tuple):
        parts = ["bytes", "mode" if name.startswith("file ") else "content type"]
        return ", ".join(f"{part} {str(a)[:200]!r} → {str(b)[:200]!r}" if part != "bytes" else "bytes"
                         for part, a, b in zip(parts, old, new) if a != b)
    if isinstance(old, str) and isinstance(new, str):
        for number, (a, b) in enumerate(zip(old.splitlines(), new.splitlines())):
            if a != b:
                return f"line {number + 1}: {a[:400]!r} → {b[:400]!r}"
        return f"{len(old.splitlines())} lines → {len(new.splitlines())}"
    return f"{old!r} → {new!r}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the build before the change")
    parser.add_argument("--after", required=True, help="the build after it")
    parser.add_argument("--keep", help="leave the runs' directories here")
    args = parser.parse_args()
    scratch = args.keep or tempfile.mkdtemp(prefix="imgfetch-golden-")
    os.makedirs(scratch, exist_ok=True)
    servers = Servers(scratch)
    try:
        before = run(os.path.abspath(args.before), "before", servers, scratch)
        after = run(os.path.abspath(args.after), "after", servers, scratch)
    finally:
        servers.stop()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    differences = 0
    compared = 0
    for mode in before:
        for name in sorted(before[mode].keys() | after[mode].keys()):
            compared += 1
            old, new = before[mode].get(name), after[mode].get(name)
            if old != new:
                differences += 1
                print(f"{mode}: {name} differs: {what_differs(name, old, new)}")
    print(f"golden: {compared} outputs compared over {len(before)} modes, {differences} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
