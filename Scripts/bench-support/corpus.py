"""The benchmark corpus: generated once, cached under .bench/corpus/<key>/, and the URL lists.

The key is CORPUS_VERSION plus a hash of the generator's source and the parameters below, so
changing either regenerates; other keys' folders are removed. A `complete` stamp is written
last, so an interrupted generation is redone from scratch.

    www/small/p-00000.jpg ..  2000 photo-like JPEGs, 640x480, q85, ~40 KB, every 4th progressive
    www/large/L-00000.jpg ..    24 JPEGs, 4000x3000, q85, ~1.7 MB, every 3rd progressive
    www/png/g-00000.png ..     300 PNGs, 512x512: gray, gray+alpha, RGB, RGBA, palette, RGB16;
                                   every 7th interlaced; half graphics-like, half photo-like
    www/tinyfiles/t-00000.jpg  1000 JPEGs of 64x64 (~2 KB); the 100,000 tiny URLs map onto them
    www/huge/huge.jpg          one 10,000x10,000 JPEG, generated row by row
    www/mixed/m-00000.jpg ..   the small set re-encoded by index mod 4: .jpg (the same file), .webp
                                   (lossy, q80), .avif (aom, 4:2:0), .gif (256 colors, dithered)
"""
from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import time

CORPUS_VERSION = "v1"
HERE = os.path.dirname(os.path.abspath(__file__))

# name: (subcommand args after DIR/PREFIX, count) — see gen_corpus.c's usage.
#         prefix, count, width, height, quality, seed, progressive_every, noise
JPEG_SETS = {
    "small": ("p", 2000, 640, 480, 85, 1, 4, 8),
    "large": ("L", 24, 4000, 3000, 85, 2, 3, 12),
    "tinyfiles": ("t", 1000, 64, 64, 85, 4, 0, 8),
}
PNG_SET = ("g", 300, 512, 512, 3)  # prefix, count, width, height, seed
HUGE = (10000, 10000, 85, 5, 4)    # width, height, quality, seed, noise
# The mixed set: its source set, prefix, WebP quality, AVIF speed and quantizer (0-63). At speed 8
# the whole set takes under 30 s on 2 cores, most of it aom's; quantizer 16 gives about 20 KB an
# AVIF, half the JPEG's and near the WebP's 16 KB (AV1 smooths away most of the noise that
# makes the JPEGs large).
MIXED = ("small", "m", 80, 8, 16)
TINY_URLS = 100_000
DUP_UNIQUE = 1000
DUP_COPIES = 3


def corpus_key() -> str:
    digest = hashlib.sha256()
    with open(os.path.join(HERE, "gen_corpus.c"), "rb") as f:
        digest.update(f.read())
    digest.update(repr((JPEG_SETS, PNG_SET, HUGE, MIXED)).encode())
    return f"{CORPUS_VERSION}-{digest.hexdigest()[:10]}"


def ensure_corpus(bench_dir: str, generator: str, jobs: int) -> str:
    """Returns the corpus's www root, generating it first if it is not cached."""
    parent = os.path.join(bench_dir, "corpus")
    key = corpus_key()
    root = os.path.join(parent, key)
    www = os.path.join(root, "www")
    if os.path.exists(os.path.join(root, "complete")):
        return www
    os.makedirs(parent, exist_ok=True)
    for stale in os.listdir(parent):  # older versions, or this one half-made
        shutil.rmtree(os.path.join(parent, stale), ignore_errors=True)
    print(f"bench: generating corpus {key} (once; cached in {root})", flush=True)
    started = time.monotonic()
    for name, (prefix, count, w, h, quality, seed, every, noise) in JPEG_SETS.items():
        target = os.path.join(www, name)
        os.makedirs(target)
        subprocess.run([generator, "jpegs", target, prefix, str(count), str(w), str(h), str(quality),
                        str(seed), str(every), str(noise), str(jobs)], check=True)
    prefix, count, w, h, seed = PNG_SET
    os.makedirs(os.path.join(www, "png"))
    subprocess.run([generator, "pngs", os.path.join(www, "png"), prefix, str(count), str(w), str(h),
                    str(seed), str(jobs)], check=True)
    os.makedirs(os.path.join(www, "huge"))
    w, h, quality, seed, noise = HUGE
    subprocess.run([generator, "huge", os.path.join(www, "huge", "huge.jpg"), str(w), str(h), str(quality),
                    str(seed), str(noise)], check=True)
    # Last, because it reads the small set's files.
    source, prefix, webp_quality, avif_speed, avif_quantizer = MIXED
    os.makedirs(os.path.join(www, "mixed"))
    mixed_started = time.monotonic()
    subprocess.run([generator, "mixed", os.path.join(www, source), JPEG_SETS[source][0], os.path.join(www, "mixed"),
                    prefix, str(JPEG_SETS[source][1]), str(webp_quality), str(avif_speed), str(avif_quantizer),
                    str(jobs)], check=True)
    done = time.monotonic()
    print(f"bench: corpus generated in {done - started:.1f} s (the mixed set: {done - mixed_started:.1f} s)",
          flush=True)
    open(os.path.join(root, "complete"), "w").close()
    return www


class Lists:
    """Writes the URL lists (they name the server's port) and the decode-limit path lists.

    sizes: how many files of each set to use (the --quick mode takes fewer).
    """

    def __init__(self, www: str, lists_dir: str, base_url: str, sizes: dict[str, int]):
        self.www, self.dir, self.base, self.sizes = www, lists_dir, base_url, sizes
        os.makedirs(lists_dir, exist_ok=True)

    def _files(self, folder: str, count: int) -> list[str]:
        return sorted(os.listdir(os.path.join(self.www, folder)))[:count]

    def _write(self, name: str, lines: list[str]) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def set_list(self, folder: str) -> tuple[str, str, int]:
        """(url list, path list for decode_limit, file count) for one corpus folder."""
        files = self._files(folder, self.sizes[folder])
        urls = self._write(f"{folder}.txt", [f"{self.base}/{folder}/{f}" for f in files])
        paths = self._write(f"{folder}.paths", [os.path.join(self.www, folder, f) for f in files])
        return urls, paths, len(files)

    def mean_sizes(self, folder: str) -> dict[str, float]:
        """Mean file size in KB by extension over the files set_list(folder) takes, in first-seen order."""
        sizes: dict[str, list[int]] = {}
        for name in self._files(folder, self.sizes[folder]):
            ext = os.path.splitext(name)[1].lstrip(".").upper().replace("JPG", "JPEG")
            sizes.setdefault(ext, []).append(os.path.getsize(os.path.join(self.www, folder, name)))
        return {ext: sum(values) / len(values) / 1000 for ext, values in sizes.items()}

    def dataset_table(self) -> tuple[str, int]:
        """The small set as a CSV table with a caption per image, as dataset builders start from:
        `url,caption`. Returns (table, rows)."""
        files = self._files("small", self.sizes["small"])
        rows = ["url,caption"] + [f'{self.base}/small/{f},"photo {i}, a test image"' for i, f in enumerate(files)]
        return self._write("dataset.csv", rows), len(files)

    def dataset_parquet(self, rows: int, python: str) -> tuple[str, int]:
        """The dataset table as Parquet, as LAION's parts are (url, caption, similarity; Snappy,
        dictionary-encoded strings), written by pyarrow with `python` (img2dataset's venv has it).
        Past the small set's size its files come again under distinct URLs (`?row=N`; nginx serves
        the file). Written every run, as the other lists are: the server's port changes. Returns
        (table, rows)."""
        files = self._files("small", self.sizes["small"])
        path = os.path.join(self.dir, f"dataset-{rows}.parquet")
        csv = self._write(f"dataset-{rows}.csv", ["url,caption,similarity"] + [
            f'{self.base}/small/{files[i % len(files)]}{"" if i < len(files) else f"?row={i}"},'
            f'"photo {i}, a test image",{0.25 + (i % 100) / 1000}' for i in range(rows)])
        subprocess.run([python, "-c", "import sys, pyarrow.csv as c, pyarrow.parquet as p; "
                        "p.write_table(c.read_csv(sys.argv[1]), sys.argv[2] + '.tmp', compression='snappy')",
                        csv, path], check=True)
        os.replace(path + ".tmp", path)
        return path, rows

    def duplicate_list(self) -> tuple[str, int, int]:
        """Each of `unique` small-set URLs three times, in a fixed shuffled order: copies of a URL
        can be in flight together or far apart, as in a scraped list. Returns (list, unique, lines)."""
        unique = self.sizes["dup"]
        urls = [f"{self.base}/small/{f}" for f in self._files("small", unique)] * DUP_COPIES
        random.Random(8).shuffle(urls)
        return self._write("dup.txt", urls), unique, len(urls)

    def tiny_list(self) -> tuple[str, int]:
        """Distinct URLs /tiny/t-NNNNNN.jpg; nginx rewrites each onto one of 1000 small files."""
        count = self.sizes["tiny"]
        return self._write("tiny.txt", [f"{self.base}/tiny/t-{i:06d}.jpg" for i in range(count)]), count

    def length_list(self, count: int) -> str:
        """`count` distinct URLs for the list-length scenarios (issue 20), written once and kept:
        /len/NNNNNNNN.jpg. They are never fetched (--cache-policy only-if-cached)."""
        path = os.path.join(self.dir, f"length-{count}.txt")
        if not os.path.exists(path):
            with open(path + ".tmp", "w") as out:
                for start in range(0, count, 100_000):
                    out.write("".join(f"{self.base}/len/{i:08d}.jpg\n" for i in range(start, min(count, start + 100_000))))
            os.replace(path + ".tmp", path)
        return path

    def head(self, path: str, lines: int) -> str:
        """A copy of a list (or path list) cut to its first lines: the warm-up round's input."""
        if not path:
            return path
        with open(path) as f:
            kept = [line.rstrip("\n") for _, line in zip(range(lines), f)]
        base, ext = os.path.splitext(path)
        return self._write(os.path.basename(f"{base}.head{lines}{ext}"), kept)

    def huge_list(self) -> tuple[str, str]:
        path = os.path.join(self.www, "huge", "huge.jpg")
        return self._write("huge.txt", [f"{self.base}/huge/huge.jpg"]), self._write("huge.paths", [path])
