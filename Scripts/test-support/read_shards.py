#!/usr/bin/env python3
"""Reads WebDataset shards as a training job would, with the webdataset package (and Pillow for
the images), and prints one JSON line per sample: its key, its members, the decoded image's size
and mode, its .json member and its .txt caption.

    .venv-tests/bin/python Scripts/test-support/read_shards.py out/000000.tar out/000001.tar

Scripts/install-deps puts webdataset and Pillow in .venv-tests; the WebDataset tests run this to
check imgfetch's shards with a real consumer.
"""
import io
import json
import sys

import PIL.Image

import webdataset as wds

IMAGE_EXTENSIONS = ("jpg", "png", "webp", "ppm", "pam", "gif", "avif", "tif", "tiff", "bmp")


def main(paths):
    dataset = wds.WebDataset(paths, shardshuffle=False).decode("pil")
    for sample in dataset:
        members = sorted(k for k in sample if not k.startswith("__"))
        image = next((sample[k] for k in members if k in IMAGE_EXTENSIONS), None)
        if isinstance(image, bytes):
            # webdataset's "pil" decoder knows no AVIF (nor TIFF): Pillow opens them itself.
            image = PIL.Image.open(io.BytesIO(image))
            image.load()
        line = {
            "key": sample["__key__"],
            "members": members,
            "image": None if image is None else [image.size[0], image.size[1], image.mode],
            "json": sample.get("json"),
            "txt": sample.get("txt"),
        }
        print(json.dumps(line, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
