"""The file-name scenario (issue 20): 1,000,000 lines fetched from nginx with --no-decode, in
constant memory, and named exactly as the release before issue 20 names them.

Name claims moved from memory to a file in issue 20; the names must not change. The list's first
100,000 lines are shaped to collide (a small pool of names over many directories, case variants,
out= names, exact repeats, names that look like disambiguated ones, long and non-ASCII names,
queries); the rest are distinct names with a collision now and then. nginx answers every
/names/ URL with one tiny JPEG (see nginx.conf.in).

The reference is a release build of REFERENCE_COMMIT, made once from the repository's history
(git archive) and kept under .bench/reference/. It fetches the first 100,000 lines; the measured
run (the imgfetch under test) fetches all 1,000,000. Their --report lines are compared line by
line: the same file name for every line, or the mismatches are listed.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import subprocess

from measure import run_measured

REFERENCE_COMMIT = "07800b4"  # issue 19's final main: name claims in a dictionary
LINES = 1_000_000
COMPARED = 100_000
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

STEMS = ["cat", "Cat", "CAT", "image", "photo", "IMG_0001", "0", "index", "thumb", "a%20b", "%C3%BCn%C3%AFcode",
         "%E6%97%A5%E6%9C%AC", "x" * 230, ".hidden", "..", "x.tar", "name.jpeg", "logo", "download", "a%2Fb",
         "semi;colon", "cat-1a2b3c4d"]
EXTENSIONS = [".jpg", ".JPG", ".jpeg", ".png", ".PNG", ".gif", ".webp", "", ".php", ".avif"]
OUT_NAMES = ["cat.jpg", "keep", "photo.png", "x.JPG", "My_Photo.webp", "cat"]
SUFFIX = re.compile(r"-[0-9a-f]{8}(?:[0-9a-f]{8})?(?:\.|$)")


@dataclasses.dataclass
class NamesResult:
    lines: int
    wall: float
    cpu: float
    rss_mib: float
    exit_code: int
    files: int
    compared: int
    mismatches: list[str]
    disambiguated: int
    reference_error: str = ""


def names_list(lists_dir: str, base: str) -> str:
    """The 1,000,000-line list, written once per server base (its port is in every URL's hash)."""
    path = os.path.join(lists_dir, "names.txt")
    stamp = path + ".base"
    if os.path.exists(path) and os.path.exists(stamp) and open(stamp).read() == base:
        return path
    rng = random.Random(20)
    earlier: list[str] = []
    with open(path + ".tmp", "w") as out:
        for index in range(LINES):
            # Past the compared head, one line in twenty is shaped like the head's; the rest are distinct.
            roll = rng.randrange(100) if index < COMPARED or rng.randrange(20) == 0 else 99
            if roll < 10 and earlier:
                line = earlier[rng.randrange(len(earlier))]
            elif roll < 50:
                line = f"{base}/names/d{rng.randrange(2000)}/{rng.choice(STEMS)}{rng.choice(EXTENSIONS)}"
            elif roll < 55:
                line = f"{base}/names/d{rng.randrange(2000)}/" + ("" if rng.randrange(2) else f"?id={rng.randrange(50)}")
            elif roll < 62:
                line = f"{base}/names/e/{index}.jpg out={rng.choice(OUT_NAMES)}"
            elif roll < 67:
                line = f"{base}/names/m{rng.randrange(100)}/cat-{rng.randrange(1 << 30):x}.jpg"
            elif roll < 70:
                line = "HTTP://" + base[len("http://"):].upper() + f"/names/d{rng.randrange(2000)}/Cat.jpg#f"
            else:
                line = f"{base}/names/u/{index}.jpg"
            if len(earlier) < 5000:
                earlier.append(line)
            else:
                earlier[rng.randrange(5000)] = line
            out.write(line + "\n")
    os.replace(path + ".tmp", path)
    with open(stamp, "w") as f:
        f.write(base)
    return path


def reference_binary(bench_dir: str) -> str:
    """A release build of REFERENCE_COMMIT, made once (a few minutes) from the repository's history."""
    root = os.path.join(bench_dir, "reference", REFERENCE_COMMIT)
    binary = os.path.join(root, "src", ".build", "release", "imgfetch")
    if os.path.exists(binary):
        return binary
    source = os.path.join(root, "src")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(source)
    archive = subprocess.run(["git", "-C", REPO, "archive", REFERENCE_COMMIT], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", source], input=archive, check=True)
    print(f"bench: building the naming reference ({REFERENCE_COMMIT}) once", flush=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "imgfetch"], cwd=source, check=True,
                   stdout=subprocess.DEVNULL)
    return binary


def report_names(report: str, limit: int) -> dict[int, str]:
    """Line number → the file name of a --report file's items (failed items: '-')."""
    names = {}
    with open(report) as f:
        for text in f:
            item = json.loads(text)
            line = item["line"]["line"]
            if line > limit:
                continue
            paths = item.get("paths") or []
            names[line] = os.path.basename(paths[0]) if paths else "-"
    return names


def run_names(imgfetch: str, bench_dir: str, server, lists_dir: str, out_root: str, renew_output) -> NamesResult:
    print("bench: 1,000,000 named lines (issue 20)", flush=True)
    urls = names_list(lists_dir, server.base_url)
    logs = os.path.join(bench_dir, "logs")
    out = os.path.join(out_root, "names")
    report = os.path.join(logs, "names-report.jsonl")
    renew_output()
    run = run_measured([imgfetch, urls, "-o", out, "--no-decode", "-q", "--report", report], output_dir=out,
                       log_path=os.path.join(logs, "names.log"), timeout=1800, server=server)
    files = sum(1 for entry in os.scandir(out) if entry.is_file() and not entry.name.startswith("."))
    measured = report_names(report, COMPARED)
    shutil.rmtree(out, ignore_errors=True)
    result = NamesResult(LINES, run.wall, run.cpu, run.rss_kib / 1024, run.exit_code, files, 0, [], 0)
    try:
        reference = reference_binary(bench_dir)
    except (OSError, subprocess.CalledProcessError) as error:
        result.reference_error = f"the reference build failed: {error}"
        return result
    head = os.path.join(lists_dir, "names-head.txt")
    with open(urls) as source, open(head, "w") as target:
        for index, line in enumerate(source):
            if index >= COMPARED:
                break
            target.write(line)
    reference_report = os.path.join(logs, "names-reference.jsonl")
    ref_out = os.path.join(out_root, "names-reference")
    run_measured([reference, head, "-o", ref_out, "--no-decode", "-q", "--report", reference_report], output_dir=ref_out,
                 log_path=os.path.join(logs, "names-reference.log"), timeout=900)
    shutil.rmtree(ref_out, ignore_errors=True)
    expected = report_names(reference_report, COMPARED)
    result.compared = len(expected)
    for line in sorted(expected):
        if measured.get(line) != expected[line]:
            result.mismatches.append(f"line {line}: {measured.get(line)!r}, the reference {expected[line]!r}")
    result.disambiguated = sum(1 for name in expected.values() if SUFFIX.search(name))
    return result


def render(result: NamesResult | None) -> list[str]:
    if result is None:
        return []
    out = ["", "## File names at 1,000,000 lines (issue 20)", "",
           f"`imgfetch LIST -o OUT --no-decode` over {result.lines:,} lines fetched from nginx (every `/names/` URL "
           "answers one tiny JPEG; output on tmpfs). The first 100,000 lines are shaped to collide (a pool of 22 names "
           "over 2000 directories, case variants, `out=` names, repeats, names that look disambiguated, long and "
           "non-ASCII names, queries); the rest are distinct with a collision now and then.", "",
           "| lines | wall s | CPU s (user+sys) | peak RSS MiB | exit | files |",
           "|--:|--:|--:|--:|--:|--:|",
           f"| {result.lines:,} | {result.wall:.1f} | {result.cpu:.1f} | {result.rss_mib:.1f} | {result.exit_code} | {result.files:,} |",
           ""]
    if result.reference_error:
        out.append(f"Names not compared: {result.reference_error}.")
    elif result.mismatches:
        out.append(f"**Names differ** from the release before issue 20 ({REFERENCE_COMMIT}) on {len(result.mismatches)} "
                   f"of {result.compared:,} lines; the first: " + "; ".join(result.mismatches[:5]) + ".")
    else:
        out.append(f"Every one of the first {result.compared:,} lines got the file name that the release before issue 20 "
                   f"({REFERENCE_COMMIT}, claims in memory) gives it, {result.disambiguated:,} of them a hash-suffixed one.")
    return out
