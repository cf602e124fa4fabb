"""A new, empty ext4 file system for each run's output, so that no run pays for another's files.

On this VM's ext4, creating thousands of files soon after thousands were deleted sends the inode
allocator through the freed inodes (find_inode_bit -> recently_deleted): 0.5 ms of kernel time
per file, landing on whichever tool ran next, even in the next bench. Each run therefore gets a
fresh ext4 (2 GiB, on a loop device whose image file lives on the bench's own disk, so fsync still
reaches the disk), mounted at .bench/out. Needs root; without it the runs share .bench/out and
their outputs are only moved aside until the bench ends (a weaker remedy).
"""
from __future__ import annotations

import os
import shutil
import subprocess


class OutputFilesystem:
    def __init__(self, bench_dir: str):
        self.root = os.path.join(bench_dir, "out")
        self.image = os.path.join(bench_dir, "outfs.img")
        self.fresh = (os.geteuid() == 0 and shutil.which("mkfs.ext4") is not None
                      and os.path.exists("/dev/loop-control"))

    def renew(self) -> None:
        """An empty file system at `root` (or, without root, just the directory)."""
        if not self.fresh:
            os.makedirs(self.root, exist_ok=True)
            return
        self.release()
        os.makedirs(self.root, exist_ok=True)
        with open(self.image, "wb") as image:
            image.truncate(2 << 30)
        try:
            # Inode tables and journal written now, not by a kernel thread during the run.
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.image],
                           check=True, capture_output=True)
            subprocess.run(["mount", "-o", "loop", self.image, self.root], check=True, capture_output=True)
        except subprocess.CalledProcessError as error:
            print(f"bench: no fresh file system for outputs ({error.stderr.decode().strip()}); "
                  "runs share .bench/out", flush=True)
            self.fresh = False
            os.makedirs(self.root, exist_ok=True)

    def release(self) -> None:
        if os.path.ismount(self.root):
            subprocess.run(["umount", self.root], check=True)
        if os.path.exists(self.image):
            os.unlink(self.image)
