#!/usr/bin/env python3
"""Write a small set of varied, good-looking images (and two bad files) for --gallery tests and
for docs/gallery.png.

    gallery_fixtures.py OUTDIR

Prints the names it wrote, one per line. Pixels are computed here (gradients and shapes, no
noise, so the same files come out every time) and encoded by the image libraries' own tools:
cjpeg (libjpeg-turbo-progs), pnmtopng, pnmquant and pamtogif (netpbm), cwebp (webp); PNGs with
alpha or 16-bit samples are written in pure Python (zlib). Everything stays loopback-free and
needs nothing beyond Scripts/install-deps.

  sunset.jpg      512x320  JPEG: sky gradient, sun, two mountain ranges
  portrait.jpg    256x384 as shown: stored 384x256 with EXIF orientation 6 (rotate 90 cw)
  rings.png       320x320  RGBA PNG: concentric rings on transparency
  deep.png        300x200  16-bit RGB PNG: smooth hue sweep
  tall.png        120x560  palette-like stripes (RGB PNG)
  waves.webp      400x250  lossy WebP: sine bands
  tiles.gif       300x200  GIF: a quilt of colors
  badge.svg                SVG (saved unverified: a placeholder tile)
  broken.jpg               a JPEG cut after its header (fails: not an image)
"""
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib


def clamp(v):
    return 0 if v < 0 else 255 if v > 255 else int(v)


def mix(a, b, t):
    return tuple(a[i] + (b[i] - a[i]) * t for i in range(3))


def hue(h):
    """An RGB color (0..1 floats) for hue h in [0, 1)."""
    h = (h % 1.0) * 6
    x = 1 - abs(h % 2 - 1)
    return [(1, x, 0), (x, 1, 0), (0, 1, x), (0, x, 1), (x, 0, 1), (1, 0, x)][int(h) % 6]


def ppm(width, height, pixel):
    rows = bytearray(b"P6\n%d %d\n255\n" % (width, height))
    for y in range(height):
        for x in range(width):
            rows += bytes(clamp(c) for c in pixel(x, y))
    return bytes(rows)


def png(width, height, color_type, bit_depth, rows):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + row for row in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def run(command, stdin=None, stdout=None):
    subprocess.run(command, input=stdin, stdout=stdout, stderr=subprocess.DEVNULL, check=True)


def tool(command, data):
    return subprocess.run(command, input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout


def sunset(x, y, width=512, height=320):
    sky = mix((255, 120, 60), (40, 30, 110), y / height)
    sun = math.hypot(x - 344, y - 200) < 56
    ridge_far = 208 + 32 * math.sin(x / 56.0) + 12 * math.sin(x / 18.0)
    ridge_near = 256 + 24 * math.sin(x / 88.0 + 1.3) + 8 * math.sin(x / 25.0)
    if y > ridge_near:
        return (30, 20, 45)
    if y > ridge_far:
        return (70, 45, 90)
    return (255, 225, 120) if sun else sky


def portrait_upright(x, y, width=256, height=384):
    # Upright: a striped lighthouse under its light, on a sky-to-sea gradient.
    base = mix((120, 200, 255), (10, 60, 120), y / height)
    if 104 < x < 152 and 96 < y < 336:
        return (240, 240, 240) if (y // 32) % 2 == 0 else (210, 40, 40)
    if 40 < y < 96 and abs(x - 128) < 36:
        return (255, 240, 150)
    if y >= 336:
        return (20, 50, 90)
    return base


def exif_orientation(value):
    """An APP1 Exif segment with one IFD entry: Orientation = value."""
    tiff = b"MM\x00\x2a\x00\x00\x00\x08" + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, value, 0) + b"\x00\x00\x00\x00"
    body = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = []

    def save(name, data):
        with open(os.path.join(out, name), "wb") as handle:
            handle.write(data)
        names.append(name)

    save("sunset.jpg", tool(["cjpeg", "-quality", "88"], ppm(512, 320, sunset)))

    # Stored 384x256; orientation 6 (the stored row 0 is the right-hand column) shows it upright, 256x384.
    stored = ppm(384, 256, lambda x, y: portrait_upright(255 - y, x))
    jpeg = tool(["cjpeg", "-quality", "88"], stored)
    save("portrait.jpg", jpeg[:2] + exif_orientation(6) + jpeg[2:])

    rows = []
    for y in range(320):
        row = bytearray()
        for x in range(320):
            r = math.hypot(x - 160, y - 160)
            red, green, blue = hue(r / 80.0)
            alpha = 0 if r > 156 else 255 if int(r / 13) % 2 == 0 else 90
            row += bytes((clamp(255 * red), clamp(255 * green), clamp(255 * blue), alpha))
        rows.append(bytes(row))
    save("rings.png", png(320, 320, 6, 8, rows))

    rows = []
    for y in range(200):
        row = bytearray()
        for x in range(300):
            red, green, blue = hue(x / 300.0)
            shade = 0.35 + 0.65 * (1 - y / 200.0)
            row += struct.pack(">HHH", *(int(65535 * c * shade) for c in (red, green, blue)))
        rows.append(bytes(row))
    save("deep.png", png(300, 200, 2, 16, rows))

    colors = [(230, 57, 70), (241, 250, 238), (168, 218, 220), (69, 123, 157), (29, 53, 87), (244, 162, 97)]
    save("tall.png", tool(["pnmtopng"], ppm(120, 560, lambda x, y: colors[(y // 28 + x // 60) % len(colors)])))

    waves = ppm(400, 250, lambda x, y: mix((20, 80, 160), (120, 230, 210),
                                            (math.sin(x / 25.0 + 3 * math.sin(y / 33.0)) + 1) / 2))
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "waves.ppm")
        with open(source, "wb") as handle:
            handle.write(waves)
        run(["cwebp", "-quiet", "-q", "80", source, "-o", os.path.join(out, "waves.webp")])
        names.append("waves.webp")

    quilt = ppm(300, 200, lambda x, y: [60 + 170 * c for c in hue(((x // 50) * 3 + (y // 50) * 5) / 17.0)])
    save("tiles.gif", tool(["pamtogif"], tool(["pnmquant", "64"], quilt)))

    save("badge.svg", b'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
                      b'<rect width="120" height="40" rx="8" fill="#457b9d"/></svg>\n')
    save("broken.jpg", jpeg[:300])

    print("\n".join(names))


if __name__ == "__main__":
    main()
