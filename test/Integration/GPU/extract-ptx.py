#!/usr/bin/env python3
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# Reads MLIR with gpu.binary ops serialized by gpu-module-to-binary format=isa
# (PTX text in an `assembly = "..."` string, bytes escaped as \XX) and writes
# the PTX to stdout: of the binary named by the argument (e.g. hot_kernels),
# or of every binary, one after the other. Used by the GPU lit tests to feed
# ptxas.
import re
import sys


def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
                continue
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
            continue
        out.extend(c.encode())
        i += 1
    return out.decode()


def main():
    wanted = sys.argv[1] if len(sys.argv) > 1 else None
    source = sys.stdin.read()
    found = re.findall(
        r'gpu\.binary @([\w$.]+)[^\n]*?assembly = "((?:[^"\\]|\\.)*)"', source)
    found = [ptx for name, ptx in found if wanted in (None, name)]
    if not found:
        sys.exit("extract-ptx.py: no gpu.binary with PTX `assembly` found")
    for ptx in found:
        sys.stdout.write(unescape(ptx))


if __name__ == "__main__":
    main()
