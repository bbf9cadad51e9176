#!/usr/bin/env python3
"""Where a kernel's warps spend their time, from Nsight Compute's per-instruction warp-state
samples (docs/performance.md, sixteenth round).

Input: the CSV of `ncu -i REPORT --page source --csv --print-source sass` for a report collected
with `--section WarpStateStats --section SourceCounters` (tests/gpu/profile.sh makes both).

Prints the share of samples by how often each instruction ran, relative to the instruction
with the most samples (in a GEMM that is the k loop's wait for its wgmma, so the classes are
the k loop, the spin loops of the barrier waits, the tile boundary and the set-up), the stall
reasons of each class, and the instructions with the most samples. A persistent GEMM's epilogue
is the class of instructions that run about once per tile and warp.

Usage: python3 bench/ncu_stalls.py SOURCE.csv [--top N]
"""
import argparse
import collections
import csv
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    head = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r), None)
    if head is None:
        sys.exit(f"{args.csv}: no 'Address' / 'Source' header: not an ncu --page source --csv export")
    hdr, data = rows[head], [r for r in rows[head + 1:] if len(r) == len(rows[head])]
    col = {name: hdr.index(name) for name in ("Address", "Source", "Instructions Executed")}
    samples_col = next((i for i, h in enumerate(hdr) if h.startswith("Warp Stall Sampling (All")), None)
    if samples_col is None:
        sys.exit(f"{args.csv}: no warp stall samples: collect with --section WarpStateStats --section SourceCounters")
    reasons = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(number(r[samples_col]) for r in data)
    if total <= 0:
        sys.exit(f"{args.csv}: no samples")
    hottest = max(data, key=lambda r: number(r[samples_col]))
    ref = number(hottest[col["Instructions Executed"]]) or 1.0

    def klass(executed):
        if executed == 0:
            return "never run"
        share = executed / ref
        if share > 2:
            return "more often than the hottest (spin loops)"
        if share >= 0.5:
            return "as often as the hottest (its loop)"
        if share >= 1 / 32:
            return "1/32 to 1/2 as often (inner waits, parts of the loop)"
        return "under 1/32 as often (per tile, set-up)"

    by_class = collections.defaultdict(lambda: [0.0, 0, collections.Counter()])
    for r in data:
        c = by_class[klass(number(r[col["Instructions Executed"]]))]
        c[0] += number(r[samples_col])
        c[1] += 1
        for i in reasons:
            c[2][hdr[i]] += number(r[i])
    print(f"{int(total)} samples over {len(data)} instructions; the one with the most ran {int(ref)} times")
    for name, (s, n, why) in sorted(by_class.items(), key=lambda kv: -kv[1][0]):
        top = ", ".join(f"{k[6:]} {100 * v / total:.1f}%" for k, v in why.most_common(3) if v > 0)
        print(f"  {100 * s / total:5.1f}%  {name}: {n} instructions; {top}")
    print(f"top {args.top} instructions (share of samples, times run, the main stall reasons):")
    for r in sorted(data, key=lambda r: -number(r[samples_col]))[: args.top]:
        why = sorted(((number(r[i]), hdr[i][6:]) for i in reasons), reverse=True)[:2]
        text = " ".join(r[col["Source"]].split())[:64]
        print(f"  {100 * number(r[samples_col]) / total:5.1f}%  {int(number(r[col['Instructions Executed']])):>9}  {text:<64}  "
              + ", ".join(f"{w} {int(v)}" for v, w in why if v > 0))


if __name__ == "__main__":
    main()
