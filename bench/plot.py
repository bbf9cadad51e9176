#!/usr/bin/env python3
"""bench/plot.py: the H200 figures of docs/performance.md as a table and a PNG.

    python3 bench/plot.py LOG... [-o docs/h200.png] [--csv out.csv] [--peak 989]

Each LOG is what a device call printed: build/bench/bench_cuda's output (blocks that begin
"gemm DTYPE N^3" followed by "tilec ... TFLOP/s" and "cuBLAS ... TFLOP/s" lines, and
"flash_attention ..." blocks), and bench/attention_peer.py's lines ("sdpa flash|cudnn ...:
... TFLOP/s"). A "== gemm KEY=VALUE..." line names the tilec block configuration of the
blocks after it. When one figure appears several times (several configurations or runs), the
best tilec figure and the median peer figure are kept, and the table says which configuration
gave it. The PNG has one bar group per workload: tilec beside its peers, in TFLOP/s, with the
fraction of the dense peak (--peak, 989 TFLOP/s for the H200's f16/bf16 tensor cores) on the
right axis; fp8 rows are measured against twice that, the fp8 dense peak. matplotlib is needed for the PNG only (pip install matplotlib).
"""
import argparse
import re
import statistics
import sys

GEMM = re.compile(r"^gemm (\w+) (\d+\^3|\d+x\d+x\d+)$")
FA = re.compile(r"^flash_attention (fp16|bf16) (.*?) (causal|non-causal)$")
SDPA = re.compile(r"^sdpa (flash|cudnn) (fp16|bf16) (.*?) (causal|non-causal):\s+[\d.]+ ms\s+([\d.]+) TFLOP/s")
FIG = re.compile(r"^\s+(tilec|cuBLASLtf|cuBLASLt|cuBLAS)\s+[\d.]+ ms\s+([\d.]+) TFLOP/s")
PEER_NAMES = {"cuBLASLtf": "cuBLASLt fast acc."}
CFG = re.compile(r"^== gemm (.*)$")


def parse(paths):
    """{workload: {"tilec": [(tflops, config)], peer: [tflops]}}"""
    figs = {}
    for path in paths:
        workload, config = None, "default"
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                m = CFG.match(line)
                if m:
                    config = m.group(1).strip()
                    continue
                m = GEMM.match(line)
                if m:
                    workload = "GEMM %s %s" % ({"float16": "f16", "bfloat16": "bf16"}.get(m.group(1), m.group(1)),
                                               m.group(2).replace("^3", "³"))
                    continue
                m = FA.match(line)
                if m:
                    workload = "attention %s %s" % (m.group(1), m.group(3))
                    continue
                m = SDPA.match(line)
                if m:
                    w = "attention %s %s" % (m.group(2), m.group(4))
                    peer = "cuDNN" if m.group(1) == "cudnn" else "SDPA flash"
                    figs.setdefault(w, {}).setdefault(peer, []).append(float(m.group(5)))
                    continue
                m = FIG.match(line)
                if m and workload:
                    who, v = m.group(1), float(m.group(2))
                    entry = figs.setdefault(workload, {})
                    if who == "tilec":
                        entry.setdefault("tilec", []).append((v, config if workload.startswith("GEMM") else "example"))
                    else:
                        entry.setdefault(PEER_NAMES.get(who, who), []).append(v)
    return figs


def peak_of(workload, peak):
    """fp8 tensor cores run at twice the f16/bf16 dense rate"""
    return 2 * peak if "float8" in workload else peak


def summarize(figs, peak):
    rows = []
    for w in sorted(figs, key=lambda s: (not s.startswith("GEMM"), s)):
        e = figs[w]
        if "tilec" not in e:
            continue
        best, cfg = max(e["tilec"])
        peers = {p: statistics.median(v) for p, v in e.items() if p != "tilec"}
        rows.append((w, best, cfg, peers))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("-o", "--output", help="PNG to write")
    ap.add_argument("--csv", help="CSV to write (workload,who,tflops,fraction_of_peak,config)")
    ap.add_argument("--peak", type=float, default=989.0, help="dense peak TFLOP/s (H200 f16/bf16: 989)")
    a = ap.parse_args()
    try:
        rows = summarize(parse(a.logs), a.peak)
    except OSError as e:
        print("plot.py: %s" % e, file=sys.stderr)
        return 2
    if not rows:
        print("plot.py: no tilec figures in %s" % ", ".join(a.logs), file=sys.stderr)
        return 1
    print("%-26s %8s %6s  %s" % ("workload", "TFLOP/s", "peak", "peers (ratio), tilec configuration"))
    for w, best, cfg, peers in rows:
        ps = ", ".join("%s %.0f (%.2fx)" % (p, v, best / v) for p, v in sorted(peers.items()))
        print("%-26s %8.1f %5.0f%%  %s; %s" % (w, best, 100 * best / peak_of(w, a.peak), ps or "-", cfg))
    if a.csv:
        with open(a.csv, "w", encoding="utf-8") as f:
            f.write("workload,who,tflops,fraction_of_peak,config\n")
            for w, best, cfg, peers in rows:
                f.write('%s,tilec,%.1f,%.3f,"%s"\n' % (w, best, best / peak_of(w, a.peak), cfg))
                for p, v in sorted(peers.items()):
                    f.write("%s,%s,%.1f,%.3f,\n" % (w, p, v, v / peak_of(w, a.peak)))
    if a.output:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("plot.py: the PNG needs matplotlib (pip install matplotlib)", file=sys.stderr)
            return 2
        who = ["tilec"] + sorted({p for _, _, _, peers in rows for p in peers})
        colors = {"tilec": "#d62728", "cuBLAS": "#1f77b4", "cuDNN": "#2ca02c", "SDPA flash": "#9467bd", "cuBLASLt": "#17becf",
                  "cuBLASLt fast acc.": "#8c564b"}
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 4.2))
        width = 0.8 / len(who)
        for i, name in enumerate(who):
            xs, ys = [], []
            for j, (w, best, _, peers) in enumerate(rows):
                v = best if name == "tilec" else peers.get(name)
                if v is not None:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    ys.append(v)
            ax.bar(xs, ys, width, label=name, color=colors.get(name))
        ax.axhline(a.peak, color="gray", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r[0] for r in rows], rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("TFLOP/s")
        top = max([a.peak] + [r[1] for r in rows] + [v for r in rows for v in r[3].values()])
        ax.set_ylim(0, top * 1.08)
        sec = ax.secondary_yaxis("right", functions=(lambda t: t / a.peak, lambda f: f * a.peak))
        sec.set_ylabel("fraction of the f16 dense peak (fp8: 2x)")
        ax.legend(fontsize=8, loc="upper left", ncol=len(who))
        ax.set_title("H200: tilec (best configuration) beside its peers (medians of the same runs)", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.output, dpi=120)
        print("wrote %s" % a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
