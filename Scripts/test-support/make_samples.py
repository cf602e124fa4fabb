#!/usr/bin/env python3
"""Write a small, deterministic set of real, valid images for demos and tests.

    make_samples.py OUTDIR [--count N] [--seed S]

Writes N PNGs (sample-01.png ...) and N JPEGs (photo-01.jpg ...) into OUTDIR
(created if missing). PNGs are encoded in pure Python (zlib + struct) and cycle
through 8-bit RGB, RGBA, grayscale and palette images; JPEGs are made by
writing a PPM (or a PGM for every third one, grayscale) and running
`cjpeg -quality 85` (Debian package libjpeg-turbo-progs); photo-02 is
progressive. Sizes range over 16..256 px, content is gradients plus seeded
noise. The same seed always gives byte-identical files. Prints only errors.
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SIZES = [16, 24, 32, 48, 64, 96, 128, 160, 200, 256]
# (PNG color type, channels): 8-bit RGB, RGBA, grayscale, palette
PNG_KINDS = [(2, 3), (6, 4), (0, 1), (3, 1)]


def png_chunk(kind, data):
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_png(width, height, color_type, rows, palette=None):
    """rows: list of bytes, each width * channels long (8-bit samples)."""
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 (None) per row
    out = [b"\x89PNG\r\n\x1a\n",
           png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0))]
    if palette is not None:
        out.append(png_chunk(b"PLTE", b"".join(bytes(c) for c in palette)))
    out.append(png_chunk(b"IDAT", zlib.compress(raw, 9)))
    out.append(png_chunk(b"IEND", b""))
    return b"".join(out)


def clamp(v):
    return 0 if v < 0 else 255 if v > 255 else int(v)


def pixels(rng, width, height, channels, noise):
    """Gradient + a soft disc + seeded noise, as a list of rows of bytes."""
    cx, cy = rng.random() * width, rng.random() * height
    radius2 = (min(width, height) * (0.2 + 0.3 * rng.random())) ** 2
    tint = [rng.random() for _ in range(3)]
    rows = []
    for y in range(height):
        row = bytearray()
        fy = y / max(1, height - 1)
        for x in range(width):
            fx = x / max(1, width - 1)
            disc = 80 if (x - cx) ** 2 + (y - cy) ** 2 < radius2 else 0
            r = 255 * fx * tint[0] + disc + (rng.random() - 0.5) * noise
            g = 255 * fy * tint[1] + disc + (rng.random() - 0.5) * noise
            b = 255 * (1 - fx) * tint[2] + 40 + (rng.random() - 0.5) * noise
            if channels == 1:
                row.append(clamp(0.299 * r + 0.587 * g + 0.114 * b))
            else:
                row += bytes((clamp(r), clamp(g), clamp(b)))
                if channels == 4:
                    row.append(clamp(64 + 191 * (fx + fy) / 2))
        rows.append(bytes(row))
    return rows


def make_png(rng, index):
    color_type, channels = PNG_KINDS[index % len(PNG_KINDS)]
    width, height = rng.choice(SIZES), rng.choice(SIZES)
    if color_type == 3:
        palette = [(rng.getrandbits(8), rng.getrandbits(8), rng.getrandbits(8)) for _ in range(16)]
        gray = pixels(rng, width, height, 1, 24)
        rows = [bytes(v >> 4 for v in row) for row in gray]  # 16 levels -> palette index
        return encode_png(width, height, 3, rows, palette)
    return encode_png(width, height, color_type, pixels(rng, width, height, channels, 48))


def make_jpeg(rng, index, cjpeg, path, tmpdir):
    width, height = rng.choice(SIZES), rng.choice(SIZES)
    gray = index % 3 == 2
    rows = pixels(rng, width, height, 1 if gray else 3, 32)
    src = os.path.join(tmpdir, "in.pgm" if gray else "in.ppm")
    with open(src, "wb") as f:
        f.write(b"P%d\n%d %d\n255\n" % (5 if gray else 6, width, height))
        f.write(b"".join(rows))
    cmd = [cjpeg, "-quality", "85"]
    if index == 1:
        cmd.append("-progressive")
    cmd += ["-outfile", path, src]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("make-samples: cjpeg failed for %s: %s" % (path, result.stderr.strip()))


def main():
    ap = argparse.ArgumentParser(description="write deterministic sample PNGs and JPEGs")
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, default=6, help="number of PNGs and of JPEGs (default 6)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    a = ap.parse_args()
    if a.count < 0:
        ap.error("--count must be >= 0")
    cjpeg = shutil.which("cjpeg")
    if cjpeg is None:
        print("make-samples: error: cjpeg not found; install it with "
              "`apt-get install -y libjpeg-turbo-progs`", file=sys.stderr)
        sys.exit(1)
    os.makedirs(a.outdir, exist_ok=True)
    for i in range(a.count):
        rng = random.Random("png-%d-%d" % (a.seed, i))
        with open(os.path.join(a.outdir, "sample-%02d.png" % (i + 1)), "wb") as f:
            f.write(make_png(rng, i))
    with tempfile.TemporaryDirectory(prefix="make-samples-") as tmpdir:
        for i in range(a.count):
            rng = random.Random("jpeg-%d-%d" % (a.seed, i))
            make_jpeg(rng, i, cjpeg, os.path.join(a.outdir, "photo-%02d.jpg" % (i + 1)), tmpdir)


if __name__ == "__main__":
    main()
