#!/usr/bin/env python3
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# Reads PTX on stdin and checks that every f32 fma in it rounds once what an
# add would: its product is exact, so it is not a multiply and an add
# contracted into one rounding (which the CPU path never does). Two forms
# qualify:
#   - the butterfly's cross-lane stage (TransformMath.cpp): one multiplicand
#     is a register that `selp.f32` sets to +1 or -1, and nothing else
#     writes;
#   - stochastic rounding's v + u: the hash's units times 256 (hash & ~0xff,
#     an integer converted by cvt.rn.f32.u32), times the immediate 2^-32
#     (0f2F800000), which scales an integer below 2^32 by a power of two
#     without underflow.
# Prints how many fmas of each form it checked; exits 1 and names the first
# other fma.
import re
import sys

ONES = {"0f3F800000", "0fBF800000"}
UNIT = "0f2F800000"


def functions(lines):
    """The lines of each .entry or .func (registers are named per function)."""
    body = []
    for line in lines:
        if re.search(r"\.(entry|func)\s", line) and body:
            yield body
            body = []
        body.append(line)
    yield body


def check(body, counts):
    writes, signs, integers = {}, set(), set()
    for line in body:
        m = re.match(r"\s*(?:@!?%p\d+\s+)?([\w.]+)\s+(%\w+)\s*,", line)
        if not m:
            continue
        writes[m.group(2)] = writes.get(m.group(2), 0) + 1
        s = re.match(r"\s*selp\.f32\s+(%\w+),\s*(\w+),\s*(\w+),", line)
        if s and {s.group(2), s.group(3)} == ONES:
            signs.add(s.group(1))
        if m.group(1) == "cvt.rn.f32.u32":
            integers.add(m.group(2))
    for line in body:
        if not re.match(r"\s*fma\.", line):
            continue
        m = re.match(r"\s*fma\.rn\.f32\s+%\w+,\s*(%?\w+),\s*(%?\w+),", line)
        single = lambda r: writes.get(r) == 1
        if m and any(r in signs and single(r) for r in m.groups()):
            counts["sign"] += 1
        elif m and UNIT in m.groups() and any(r in integers and single(r)
                                              for r in m.groups()):
            counts["units"] += 1
        else:
            sys.exit(f"check-exact-fmas.py: not an exact-product fma: {line.strip()}")


def main():
    counts = {"sign": 0, "units": 0}
    for body in functions(sys.stdin.read().splitlines()):
        check(body, counts)
    print(f"sign fmas: {counts['sign']}, units fmas: {counts['units']}")


if __name__ == "__main__":
    main()
