#!/usr/bin/env python3
"""Downscale quality against img2dataset's: sources, and PSNR against a LANCZOS reference.

    downscale_quality.py make OUTDIR [--target 256]
    downscale_quality.py measure SOURCES OUTPUTS [--target 256]

`make` writes 20 JPEG sources (q92, 4:2:0, as cameras and CDNs write them) whose longer side is
1.5 to 8 times the target, on a geometric scale: src-00.jpg ... src-19.jpg. Their content is
photo-like and hard to shrink well: smooth gradients, soft blobs, fine gratings near the source's
Nyquist frequency (what a poor filter aliases into moire), sharp edges and sensor-like noise, all
from a fixed seed, so the same files every time.

`measure` reads OUTPUTS/src-NN.png (imgfetch's shrink of each source to TARGET on its longer side,
saved as PNG) and, for each source, makes the reference (Pillow decodes it and shrinks it with
LANCZOS to the same size) and img2dataset's shrink (OpenCV decodes it and shrinks it with
INTER_AREA, img2dataset's downscale_interpolation, to the same size). Prints one JSON object:
{"sources": [{"name", "scale", "imgfetch_db", "area_db"}...], "median_gap_db", "worst_gap_db"},
where a gap is INTER_AREA's PSNR minus imgfetch's (positive: imgfetch is behind).
"""
import argparse
import json
import math
import os
import statistics

import cv2
import numpy as np
from PIL import Image


def source(width, height, rng):
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    u, v = x / width, y / height
    image = np.zeros((height, width, 3))
    # Smooth light and color.
    image[..., 0] = 90 + 100 * u + 30 * np.sin(3 * v)
    image[..., 1] = 80 + 90 * v + 40 * np.cos(2 * u + 1)
    image[..., 2] = 120 + 60 * np.sin(2 * (u + v))
    # Soft blobs.
    for _ in range(12):
        cx, cy, r = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(0.03, 0.2) * width
        color = rng.uniform(-70, 70, 3)
        image += np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))[..., None] * color
    # Fine gratings: a band at about a third of the source's Nyquist frequency, another at two thirds.
    for period, angle, amplitude in [(6.0, 0.3, 25), (3.2, 1.2, 18), (9.0, 2.0, 20)]:
        phase = (x * math.cos(angle) + y * math.sin(angle)) * 2 * math.pi / period
        mask = (np.sin(u * 7 + v * 3) > 0.2)[..., None]
        image += amplitude * np.sin(phase)[..., None] * mask
    # Sharp edges: rectangles of flat color.
    for _ in range(6):
        x0, y0 = int(rng.uniform(0, width * 0.8)), int(rng.uniform(0, height * 0.8))
        x1, y1 = x0 + int(rng.uniform(0.05, 0.2) * width), y0 + int(rng.uniform(0.05, 0.2) * height)
        image[y0:y1, x0:x1] = rng.uniform(0, 255, 3)
    image += rng.normal(0, 4, image.shape)
    return Image.fromarray(np.clip(image, 0, 255).astype(np.uint8), "RGB")


def make(out, target):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(34)
    for index in range(20):
        scale = 1.5 * (8 / 1.5) ** (index / 19)
        width = round(target * scale)
        height = round(width * 2 / 3)
        source(width, height, rng).save(os.path.join(out, f"src-{index:02d}.jpg"), quality=92, subsampling=2)


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def measure(sources, outputs, target):
    rows = []
    for name in sorted(n for n in os.listdir(sources) if n.endswith(".jpg")):
        path = os.path.join(sources, name)
        mine = np.asarray(Image.open(os.path.join(outputs, name[:-4] + ".png")).convert("RGB"))
        height, width = mine.shape[:2]
        original = Image.open(path).convert("RGB")
        reference = np.asarray(original.resize((width, height), Image.LANCZOS))
        decoded = cv2.cvtColor(cv2.imdecode(np.fromfile(path, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
        area = cv2.resize(decoded, (width, height), interpolation=cv2.INTER_AREA)
        rows.append({"name": name, "scale": round(max(original.size) / max(width, height), 2),
                     "imgfetch_db": round(psnr(mine, reference), 3), "area_db": round(psnr(area, reference), 3)})
    gaps = [row["area_db"] - row["imgfetch_db"] for row in rows]
    print(json.dumps({"sources": rows, "median_gap_db": round(statistics.median(gaps), 3), "worst_gap_db": round(max(gaps), 3)}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["make", "measure"])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--target", type=int, default=256)
    args = parser.parse_args()
    if args.command == "make":
        make(args.paths[0], args.target)
    else:
        measure(args.paths[0], args.paths[1], args.target)


if __name__ == "__main__":
    main()
