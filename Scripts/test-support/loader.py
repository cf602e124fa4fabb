#!/usr/bin/env python3
"""A training job's loader, as img2dataset's users write it, run on a directory of WebDataset shards.

    loader.py SHARD_DIR [--batch 4] [--threshold 0.3]

Reads every *.tar with the webdataset package, decodes the image with Pillow, keeps the samples
whose meta["similarity"] is over THRESHOLD, and collates them into fixed-size batches (numpy.stack:
every image of a batch must have the same size). Prints one JSON object: the samples in URL order
(url, caption, image size, similarity, punsafe, and the Python type of each of those two), the
number kept, and the batch shapes. No key is printed: each tool names samples its own way.
"""
import argparse
import glob
import json
import os

import numpy as np
import webdataset as wds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shards")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--threshold", type=float, default=0.3)
    args = parser.parse_args()
    tars = sorted(glob.glob(os.path.join(args.shards, "*.tar")))
    dataset = wds.WebDataset(tars, shardshuffle=False).decode("pil").to_tuple("jpg", "txt", "json")
    samples, images = [], []
    for image, caption, meta in dataset:
        if meta["similarity"] > args.threshold:
            images.append(np.asarray(image.convert("RGB")))
            samples.append({"url": meta["url"], "caption": caption, "size": list(image.size),
                            "similarity": round(meta["similarity"], 6), "similarity_type": type(meta["similarity"]).__name__,
                            "punsafe": round(meta["punsafe"], 6), "punsafe_type": type(meta["punsafe"]).__name__})
    batches = [list(np.stack(images[i:i + args.batch]).shape) for i in range(0, len(images) - args.batch + 1, args.batch)]
    samples.sort(key=lambda sample: sample["url"])
    print(json.dumps({"kept": len(samples), "batches": batches, "samples": samples}))


if __name__ == "__main__":
    main()
