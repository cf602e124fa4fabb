#!/usr/bin/env python3
"""Writes a LAION-shaped Parquet file with pyarrow, for the Parquet reader's tests.

    make_parquet.py OUT --rows N [--codec snappy|zstd|gzip|none] [--no-dictionary]
                    [--page-version 1.0|2.0] [--row-group-rows N] [--url-base URL] [--no-nulls]

Columns, as LAION's parts have them: url (string, dictionary-encoded unless --no-dictionary),
caption (string, every 7th null), similarity (float, every 11th null), width and height (int64),
punsafe (double), and key (string, unique); --no-nulls leaves out the nulls (LAION's similarity
has none). Row i's url is URL_BASE/img{i}.jpg. Prints the row count.
"""
import argparse

import pyarrow as pa
import pyarrow.parquet as pq


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--codec", default="snappy")
    parser.add_argument("--no-dictionary", action="store_true")
    parser.add_argument("--page-version", default="1.0")
    parser.add_argument("--row-group-rows", type=int, default=None)
    parser.add_argument("--url-base", default="http://127.0.0.1:1")
    parser.add_argument("--no-nulls", action="store_true")
    args = parser.parse_args()
    n = args.rows
    table = pa.table({
        "url": pa.array([f"{args.url_base}/img{i}.jpg" for i in range(n)], pa.string()),
        "caption": pa.array([None if i % 7 == 3 and not args.no_nulls else f"a photo number {i}, \"quoted\"" for i in range(n)], pa.string()),
        "similarity": pa.array([None if i % 11 == 5 and not args.no_nulls else 0.25 + (i % 100) / 1000 for i in range(n)], pa.float32()),
        "width": pa.array([640 + i % 3 for i in range(n)], pa.int64()),
        "height": pa.array([480 for _ in range(n)], pa.int64()),
        "punsafe": pa.array([(i % 13) / 100 for i in range(n)], pa.float64()),
        "key": pa.array([f"{i:09d}" for i in range(n)], pa.string()),
    })
    pq.write_table(table, args.out, compression=None if args.codec == "none" else args.codec,
                   use_dictionary=not args.no_dictionary, data_page_version=args.page_version,
                   row_group_size=args.row_group_rows)
    print(n)


if __name__ == "__main__":
    main()
