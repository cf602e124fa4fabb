#!/usr/bin/env python3
"""Makes a stripped release binary the same bytes wherever the same commit is built.

    Scripts/package-support/normalize-binary.py BINARY

Two parts of a linked Swift binary depend on the checkout's path even after `strip`:
- `.swift_modhash`: the compiler's hash of each module's LLVM IR, kept for incremental builds and
  never read at run time; its bytes are set to zero. (Removing the section with objcopy would
  rewrite the program headers, and it drops the GNU_RELRO segment.)
- the GNU build ID, which the linker computes over its whole output, debug information and its
  paths included; it is set to the SHA-1 of the binary as it is after the first step (with the ID
  zeroed), so it still names exactly these bytes (for a core dump, or debuginfod).
"""
import hashlib
import struct
import sys


def sections(data):
    """{name: (file offset, size)} from the section headers of a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SystemExit("normalize-binary.py: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    found = {}
    for name, _, _, _, offset, size in headers:
        start = names + name
        found[bytes(data[start:data.index(b"\0", start)]).decode()] = (offset, size)
    return found


def main():
    path = sys.argv[1]
    data = bytearray(open(path, "rb").read())
    found = sections(data)
    if ".note.gnu.build-id" not in found:
        raise SystemExit("normalize-binary.py: the file has no .note.gnu.build-id section")
    if ".swift_modhash" in found:
        offset, size = found[".swift_modhash"]
        data[offset:offset + size] = bytes(size)
    note, _ = found[".note.gnu.build-id"]
    namesz, descsz, note_type = struct.unpack_from("<III", data, note)
    if note_type != 3 or data[note + 12:note + 12 + namesz] != b"GNU\0":
        raise SystemExit("normalize-binary.py: .note.gnu.build-id holds no GNU build ID")
    start = note + 12 + ((namesz + 3) & ~3)
    data[start:start + descsz] = bytes(descsz)
    data[start:start + descsz] = hashlib.sha1(data).digest()[:descsz].ljust(descsz, b"\0")
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
