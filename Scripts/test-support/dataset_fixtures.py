#!/usr/bin/env python3
"""Write images for the dataset filter tests, and print what img2dataset records of their EXIF.

    dataset_fixtures.py OUTDIR

Writes OUTDIR/WxH.jpg for the sizes in SIZES (for --min-size and --max-aspect-ratio), and
OUTDIR/exif.jpg (APP1: IFD0 with Make, Model, Orientation, resolutions, DateTime; the
EXIF directory with exposure, aperture, ISO, DateTimeOriginal, ExifVersion, ColorSpace; a GPS
directory), OUTDIR/exif.png (the same block in an eXIf chunk), OUTDIR/exif.webp and
OUTDIR/plain.jpg (no EXIF), all with Pillow. Prints one JSON object: file name -> the string
img2dataset's --extract_exif stores in the sample (exifread.process_file(details=False), each
value str()-ed and stripped, then json.dumps).
"""
import io
import json
import os
import sys

import exifread
from PIL import Image
from PIL.TiffImagePlugin import IFDRational


def exif():
    data = Image.Exif()
    data[0x010F] = "imgfetch test camera"
    data[0x0110] = "Model 7"
    data[0x0112] = 6
    data[0x011A] = IFDRational(72, 1)
    data[0x011B] = IFDRational(72, 1)
    data[0x0128] = 2
    data[0x0132] = "2026:12:03 10:00:00"
    sub = data.get_ifd(0x8769)
    sub[0x829A] = IFDRational(1, 125)
    sub[0x829D] = IFDRational(28, 10)
    sub[0x8827] = 200
    sub[0x9003] = "2026:12:01 09:30:00"
    sub[0x9000] = b"0232"
    sub[0xA001] = 1
    gps = data.get_ifd(0x8825)
    gps[1] = "N"
    gps[2] = (IFDRational(52, 1), IFDRational(31, 1), IFDRational(125, 10))
    gps[3] = "E"
    gps[4] = (IFDRational(13, 1), IFDRational(24, 1), IFDRational(0, 1))
    return data


SIZES = [(20, 20), (64, 64), (200, 50), (60, 30), (30, 90)]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for width, height in SIZES:
        Image.new("RGB", (width, height), (30, 140, 90)).save(os.path.join(out, f"{width}x{height}.jpg"), quality=90)
    image = Image.new("RGB", (40, 30), (200, 100, 50))
    block = exif().tobytes()
    image.save(os.path.join(out, "exif.jpg"), exif=block, quality=90)
    image.save(os.path.join(out, "exif.png"), exif=block)
    image.save(os.path.join(out, "exif.webp"), exif=block, quality=90)
    image.save(os.path.join(out, "plain.jpg"), quality=90)
    expected = {}
    for name in ["exif.jpg", "exif.png", "exif.webp", "plain.jpg"]:
        with open(os.path.join(out, name), "rb") as f:
            stream = io.BytesIO(f.read())
        tags = exifread.process_file(stream, details=False)
        expected[name] = json.dumps({k: str(v).strip() for k, v in tags.items() if v is not None})
    print(json.dumps(expected))


if __name__ == "__main__":
    main()
