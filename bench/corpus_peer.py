#!/usr/bin/env python3
"""bench/corpus_peer.py: TileLang's own performance-regression suite under TileLang and under tilec,
in the same process, on the same inputs, timed by the same timer, outputs compared.

    python3 bench/corpus_peer.py --examples TILELANG/examples [--jobs 8] [--only TEXT] [--out DIR]
    python3 bench/corpus_peer.py --report DIR/corpus.jsonl [--svg FILE.svg]   # table (and plot) again

The corpus is what TileLang times itself on: every `tilelang.testing.process_func(mod.run_regression_perf,
**kwargs)` in `examples/**/regression_*.py` (57 entries in 0.1.15's tree: GEMM, fp8 and split-K GEMMs,
dequantizing GEMM and GEMV, attention forward and backward, sinks, varlen, flash and GQA decoding,
MLA decode, sparse and NSA attention, DeepSeek v3.2's indexer and sparse MLA, linear attention,
fused MoE, convolution, elementwise, casts, top-k, mHC). Each entry runs in a child process:

  1. TileLang (`import tilelang`, the real one) runs the entry's `run_regression_perf(**kwargs)` with
     `tilelang.profiler.do_bench` replaced by a recorder: the function it was asked to time is kept,
     nothing is timed. Then tilec's compatibility layer (`tilec.as_tilelang.install()`) serves
     `import tilelang`, the example is imported afresh and its entry runs again, recorded the same way.
     Both runs start from `torch.manual_seed(0)`.
  2. Same inputs: a profiler's auto-made inputs are TileLang's for both engines; tensors a timed
     closure holds (found through its closure cells, lists, dicts and partials) are copied from
     TileLang's run into tilec's, name by name, before either runs.
  3. Outputs: each engine's timed function runs once; every tensor it returned or holds is compared
     (relative L2 error, NaN positions; integers exactly, 99.9%).
  4. Time, holding a file lock so that one child times at a time (the others compile meanwhile):
     CUDA events around each call, the L2 cache flushed (256 MB written) before each, the two engines
     alternating, median of at least 30 calls (more for short kernels, up to 200).
ratio = TileLang ms / tilec ms (above 1: tilec is faster). The geometric mean is over entries both
engines ran with outputs agreeing; an entry tilec refuses or gets wrong is listed as such.
Writes DIR/corpus.jsonl (one record per entry), DIR/corpus.md (the table) and DIR/corpus.svg.
"""
import argparse
import ast
import fcntl
import functools
import glob
import importlib
import inspect
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---------------------------------------------------------------- the corpus

def corpus(examples):
    """[(folder, module, function, kwargs)] from every regression_*.py's process_func calls."""
    entries = []
    for path in sorted(glob.glob(os.path.join(examples, "**", "regression_*.py"), recursive=True)):
        tree = ast.parse(open(path).read(), path)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "process_func" and node.args):
                continue
            target = node.args[0]
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            entries.append((os.path.dirname(path), target.value.id, target.attr, kwargs))
    return entries


def entry_name(examples, folder, module):
    return os.path.relpath(os.path.join(folder, module), examples)


# ---------------------------------------------------------------- one entry, in a child process

class Recorder:
    """Stands in for do_bench: keeps what it was asked to time and returns a token in its place."""

    def __init__(self):
        self.calls = []

    def __call__(self, fn=None, *args, **kwargs):
        self.calls.append(fn)
        return 1.0e6 + len(self.calls)  # run_regression_perf returns this: which call it timed

    def timed(self, result):
        """The functions whose time run_regression_perf returned: the one whose token it returned,
        or all of them (a suite that averages several kernels' times returns no single token)."""
        if not self.calls:
            raise RuntimeError("run_regression_perf timed nothing (no do_bench call)")
        if isinstance(result, float) and result >= 1.0e6 and int(result - 1.0e6) - 1 < len(self.calls):
            return [self.calls[int(result - 1.0e6) - 1]]
        return list(self.calls)


def local_modules(folder):
    folder = os.path.realpath(folder)
    return [name for name, m in list(sys.modules.items())
            if os.path.realpath(getattr(m, "__file__", None) or "/").startswith(folder + os.sep)]


def run_engine(engine, folder, module, function, kwargs):
    """Import the example under `engine` and run its entry; returns (timed function, seconds)."""
    import torch
    for name in local_modules(folder):  # the other engine's copy of the example and its helpers
        del sys.modules[name]
    rec = Recorder()
    if engine == "tilec":
        import tilec.as_tilelang as layer
        layer.install()
    import tilelang
    import tilelang.profiler
    tilelang.profiler.do_bench = rec  # Profiler.do_bench and `from tilelang.profiler import do_bench` see it
    if engine == "tilelang":
        import tilelang.profiler.bench
        tilelang.profiler.bench.do_bench = rec
    torch.manual_seed(0)
    t0 = time.time()
    mod = importlib.import_module(module)
    result = getattr(mod, function)(**kwargs)
    torch.cuda.synchronize()
    return rec.timed(result), time.time() - t0


def tensors_of(obj, path="", depth=0, seen=None):
    """[(path, tensor)] reachable from a timed function: partial arguments, closure cells, lists."""
    import torch
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 4:
        return []
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return [(path, obj)]
    out = []
    if isinstance(obj, functools.partial):
        for i, a in enumerate(obj.args):
            out += tensors_of(a, f"{path}.arg{i}", depth + 1, seen)
        for k, a in sorted(obj.keywords.items()):
            out += tensors_of(a, f"{path}.{k}", depth + 1, seen)
    elif isinstance(obj, (list, tuple)):
        for i, a in enumerate(obj):
            out += tensors_of(a, f"{path}[{i}]", depth + 1, seen)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            out += tensors_of(obj[k], f"{path}[{k!r}]", depth + 1, seen)
    elif inspect.isfunction(obj) and obj.__closure__:
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            out += tensors_of(value, f"{path}.{name}", depth + 1, seen)
    return out


def same_inputs(fn_tl, fn_tc):
    """Make tilec's timed function read TileLang's inputs; returns (tilec's function, how)."""
    if isinstance(fn_tl, functools.partial) and isinstance(fn_tc, functools.partial):
        # a profiler's do_bench: the kernel on auto-made inputs; give tilec's kernel TileLang's
        import torch
        mine = [a.clone() if isinstance(a, torch.Tensor) else a for a in fn_tl.args]
        return functools.partial(fn_tc.func, *mine, **fn_tl.keywords), "TileLang's profiler inputs (copies)"
    a, b = dict(tensors_of(fn_tl)), dict(tensors_of(fn_tc))
    copied = 0
    for name, t in b.items():
        s = a.get(name)
        if s is not None and s.shape == t.shape and s.dtype == t.dtype and s.data_ptr() != t.data_ptr():
            t.copy_(s)
            copied += 1
    return fn_tc, f"{copied} of {len(b)} held tensors copied"


def compare(x, y):
    """(agree, worst relative error) of two tensors."""
    import torch
    if x.shape != y.shape:
        return False, float("inf")
    if x.dtype.is_floating_point or y.dtype.is_floating_point:
        xf, yf = x.detach().float(), y.detach().float()
        if not torch.equal(torch.isnan(xf), torch.isnan(yf)):
            return False, float("nan")
        xf, yf = torch.nan_to_num(xf, 0.0, 0.0, 0.0), torch.nan_to_num(yf, 0.0, 0.0, 0.0)
        den = max(float(torch.linalg.vector_norm(yf)), 1e-12)
        err = float(torch.linalg.vector_norm(xf - yf)) / den
        low = {torch.float16, torch.bfloat16} | {getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2")
                                                 if hasattr(torch, n)}
        return err <= (6e-2 if x.dtype.itemsize == 1 else 2e-2 if x.dtype in low else 1e-2), err
    if x.numel() == 0:
        return True, 0.0
    agree = float((x == y).float().mean())
    return agree >= 0.999, 1.0 - agree


def outputs(fn):
    """Run the timed function once; its returned tensors and every tensor it holds, by path."""
    import torch
    ret = fn()
    torch.cuda.synchronize()
    got = [(f"return{p}", t.clone()) for p, t in tensors_of(ret)]
    got += [(p, t.clone()) for p, t in tensors_of(fn)]
    return dict(got)


def check(fn_tl, fn_tc):
    a, b = outputs(fn_tl), outputs(fn_tc)
    worst, bad, n = 0.0, [], 0
    for name, x in b.items():
        y = a.get(name)
        if y is None:
            continue
        ok, err = compare(x, y)
        n += 1
        worst = max(worst, err) if not math.isnan(err) else err
        if not ok:
            bad.append(f"{name} ({err:.3g})")
    return {"agree": not bad and n > 0, "compared": n, "worst_rel_err": worst, "disagree": bad[:4]}


def time_pair(fns, min_iters=30, max_iters=200, budget_s=1.5):
    """Median ms of each function: CUDA events, L2 flushed before each call, the functions alternating."""
    import torch
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for f in fns:
        for _ in range(3):
            f()
    torch.cuda.synchronize()
    t0 = time.time()
    for f in fns:
        for _ in range(3):
            f()
    torch.cuda.synchronize()
    per_round = max((time.time() - t0) / 3, 1e-6)
    iters = int(min(max_iters, max(min_iters, budget_s / per_round)))
    events = [[] for _ in fns]
    for i in range(iters):
        order = range(len(fns)) if i % 2 == 0 else reversed(range(len(fns)))
        for k in order:
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fns[k]()
            e.record()
            events[k].append((s, e))
    torch.cuda.synchronize()
    return [statistics.median(s.elapsed_time(e) for s, e in ev) for ev in events], iters


def entry_sizes(folder, module, function, kwargs):
    """run_regression_perf's defaults with the suite's keyword arguments: the sizes it runs at."""
    f = getattr(sys.modules.get(module), function, None)
    try:
        params = inspect.signature(f).parameters if f else {}
    except (TypeError, ValueError):
        params = {}
    return {k: kwargs.get(k, p.default) for k, p in params.items()
            if k != "argv" and (p.default is not inspect.Parameter.empty or k in kwargs)}


def child(args):
    import torch
    folder, module, function = args.one
    kwargs = json.loads(args.kwargs)
    rec = {"entry": entry_name(args.examples, folder, module), "function": function, "kwargs": kwargs,
           "device": torch.cuda.get_device_name(0)}
    sys.path.insert(0, folder)
    os.chdir(folder)
    sys.argv = [module + ".py"]  # entries that parse arguments (argv=None) must see none of ours
    fns = {}
    try:
        saved = {}
        for engine in ("tilelang", "tilec"):
            try:
                fns[engine], rec[f"{engine}_build_s"] = run_engine(engine, folder, module, function, kwargs)
            except BaseException as e:  # noqa: B036 - an engine's failure is the entry's result
                rec[f"{engine}_error"] = f"{type(e).__name__}: {e}"[:600]
                rec[f"{engine}_trace"] = traceback.format_exc()[-1500:]
            if engine == "tilelang":
                rec["sizes"] = entry_sizes(folder, module, function, kwargs)
                saved = {k: v for k, v in sys.modules.items() if k == "tilelang" or k.startswith("tilelang.")}
            else:  # TileLang's modules back, for anything it imports late
                import tilec.as_tilelang as layer
                layer.uninstall()
                sys.modules.update(saved)
        if len(fns) == 2:
            tl, tc = fns["tilelang"], fns["tilec"]
            if len(tl) != len(tc):
                raise RuntimeError(f"TileLang timed {len(tl)} functions, tilec {len(tc)}")
            with open(args.lock, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # one child on the GPU at a time
                pairs = [same_inputs(a, b) for a, b in zip(tl, tc)]
                tc = [p[0] for p in pairs]
                rec["inputs"] = "; ".join(p[1] for p in pairs)
                checks = [check(a, b) for a, b in zip(tl, tc)]
                rec.update(agree=all(c["agree"] for c in checks), compared=sum(c["compared"] for c in checks),
                           worst_rel_err=max(c["worst_rel_err"] for c in checks),
                           disagree=[d for c in checks for d in c["disagree"]][:4], kernels=len(tl))
                seq = lambda fs: (lambda: [f() for f in fs])  # noqa: E731 - several kernels: their total
                (rec["tilelang_ms"], rec["tilec_ms"]), rec["iters"] = time_pair([seq(tl), seq(tc)])
                rec["ratio"] = rec["tilelang_ms"] / rec["tilec_ms"]
    except BaseException as e:  # noqa: B036
        rec["error"] = f"{type(e).__name__}: {e}"[:600]
        rec["trace"] = traceback.format_exc()[-1500:]
    print("CORPUS " + json.dumps(rec, default=str), flush=True)


# ---------------------------------------------------------------- the table

def status(r):
    if "ratio" in r:
        return "agree" if r.get("agree") else "DISAGREE"
    if r.get("tilec_error") and not r.get("tilelang_error"):
        return "tilec failed"
    if r.get("tilelang_error") and not r.get("tilec_error"):
        return "TileLang failed"
    if r.get("tilelang_error"):
        return "both failed"
    return "error"


def table(records):
    rows = ["| kernel | sizes | TileLang ms | tilec ms | TileLang/tilec | outputs | note |",
            "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for r in sorted(records, key=lambda r: r.get("ratio", -1.0)):
        sizes = ", ".join(f"{k}={v}" for k, v in (r.get("sizes") or r.get("kwargs") or {}).items())
        note = r.get("tilec_error") or r.get("tilelang_error") or r.get("error") or ""
        if r.get("disagree"):
            note = "differ: " + "; ".join(r["disagree"])
        elif "ratio" in r:
            note = f"rel. err {r.get('worst_rel_err', 0):.1e}, {r.get('compared', 0)} tensors, {r.get('iters')} calls"
        note = note.replace("|", "/").replace("\n", " ")[:160]
        ms = lambda k: f"{r[k]:.4f}" if k in r else "-"  # noqa: E731
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        rows.append(f"| {r['entry']} | {sizes[:60]} | {ms('tilelang_ms')} | {ms('tilec_ms')} | {ratio} | "
                    f"{status(r)} | {note} |")
    good = [r["ratio"] for r in records if "ratio" in r and r.get("agree")]
    geo = math.exp(sum(map(math.log, good)) / len(good)) if good else float("nan")
    counts = {}
    for r in records:
        counts[status(r)] = counts.get(status(r), 0) + 1
    summary = (f"{len(records)} entries: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
               + f"; geometric mean TileLang/tilec over the {len(good)} agreeing: {geo:.3f}"
               + (f"; below 0.95: {sum(1 for g in good if g < 0.95)}" if good else ""))
    return "\n".join(rows), summary


def svg(records, path):
    """A horizontal bar per entry: TileLang ms / tilec ms on a log axis, 1.0 marked."""
    rs = sorted((r for r in records if "ratio" in r), key=lambda r: r["ratio"])
    if not rs:
        return
    w, bar, left = 900, 16, 330
    h = 40 + bar * len(rs)
    lo, hi = math.log(min(0.1, min(r["ratio"] for r in rs))), math.log(max(10.0, max(r["ratio"] for r in rs)))
    x = lambda v: left + (math.log(v) - lo) / (hi - lo) * (w - left - 20)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           'font-size="11">', f'<text x="{left}" y="14">TileLang ms / tilec ms (log scale; right of the line: '
           'tilec faster)</text>']
    for i, r in enumerate(rs):
        y = 24 + i * bar
        x0, x1 = sorted((x(1.0), x(r["ratio"])))
        color = "#3a7" if r["ratio"] >= 1.0 else "#c44"
        if not r.get("agree"):
            color = "#888"
        out.append(f'<text x="{left - 6}" y="{y + 11}" text-anchor="end">{r["entry"][-52:]}</text>')
        out.append(f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 1):.1f}" height="{bar - 4}" '
                   f'fill="{color}"/>')
        out.append(f'<text x="{x1 + 3 if r["ratio"] >= 1 else x0 - 3:.1f}" y="{y + 11}" '
                   f'text-anchor="{"start" if r["ratio"] >= 1 else "end"}">{r["ratio"]:.2f}</text>')
    for v in (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0):
        if lo <= math.log(v) <= hi:
            out.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="20" y2="{h}" stroke="#000" '
                       f'stroke-opacity="{0.8 if v == 1.0 else 0.15}"/>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def report(records, out_dir, header):
    rows, summary = table(records)
    with open(os.path.join(out_dir, "corpus.md"), "w") as f:
        f.write(header + "\n\n" + summary + "\n\n" + rows + "\n")
    svg(records, os.path.join(out_dir, "corpus.svg"))
    return rows, summary


# ---------------------------------------------------------------- the parent

def parent(args):
    entries = corpus(args.examples)
    if args.only:
        entries = [e for e in entries if any(o in entry_name(args.examples, e[0], e[1]) for o in args.only.split(","))]
    if args.list:
        for folder, module, function, kwargs in entries:
            print(entry_name(args.examples, folder, module), function, kwargs or "")
        return 0
    os.makedirs(args.out, exist_ok=True)
    lock = os.path.join(tempfile.mkdtemp(prefix="corpus-peer-"), "gpu.lock")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    records, running, todo = [], [], list(entries)
    deadline = time.time() + args.deadline
    log = open(os.path.join(args.out, "corpus.log"), "w")
    jsonl = open(os.path.join(args.out, "corpus.jsonl"), "w")

    def finish(p, e, started, timed_out=False):
        p.outfile.seek(0)
        out = p.outfile.read().decode("utf-8", "replace")
        p.outfile.close()
        log.write(f"==== {entry_name(args.examples, e[0], e[1])} ({time.time() - started:.0f} s)\n{out}\n")
        log.flush()
        line = [ln for ln in out.splitlines() if ln.startswith("CORPUS ")]
        if line:
            rec = json.loads(line[-1][7:])
        else:
            rec = {"entry": entry_name(args.examples, e[0], e[1]), "kwargs": e[3],
                   "error": "timed out" if timed_out else
                   f"child exited {p.returncode}: {(out.strip().splitlines() or [''])[-1][-300:]}"}
        records.append(rec)
        jsonl.write(json.dumps(rec) + "\n")
        jsonl.flush()
        print(f"{status(rec):>15}  {rec.get('ratio', float('nan')):6.2f}  {rec['entry']} {e[3] or ''}", flush=True)

    while todo or running:
        while todo and len(running) < args.jobs and time.time() < deadline:
            e = todo.pop(0)
            cmd = [sys.executable, os.path.abspath(__file__), "--examples", args.examples, "--lock", lock,
                   "--one", e[0], e[1], e[2], "--kwargs", json.dumps(e[3])]
            outfile = tempfile.TemporaryFile()  # not a pipe: a child that prints much must not block
            p = subprocess.Popen(cmd, stdout=outfile, stderr=subprocess.STDOUT, env=env)
            p.outfile = outfile
            running.append((p, e, time.time()))
        if not running and time.time() >= deadline:
            for e in todo:
                records.append({"entry": entry_name(args.examples, e[0], e[1]), "kwargs": e[3],
                                "error": "not run (the run's deadline)"})
            break
        time.sleep(0.2)
        for item in list(running):
            p, e, started = item
            if p.poll() is not None:
                running.remove(item)
                finish(p, e, started)
            elif time.time() - started > args.timeout:
                p.kill()
                p.wait()
                running.remove(item)
                finish(p, e, started, timed_out=True)
    header = (f"TileLang's regression suite ({len(entries)} entries) under TileLang and under tilec, "
              f"{records[0].get('device', '?') if records else '?'}, {time.strftime('%Y-%m-%d')}")
    rows, summary = report(records, args.out, header)
    print(rows + "\n\n" + summary)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", help="TileLang's examples folder")
    ap.add_argument("--out", default="corpus-out", help="where corpus.{jsonl,md,svg,log} go")
    ap.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--only", help="entries whose name holds one of these comma-separated texts")
    ap.add_argument("--timeout", type=float, default=300, help="seconds an entry may take")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds after which no entry starts")
    ap.add_argument("--list", action="store_true", help="list the entries and stop")
    ap.add_argument("--report", help="a corpus.jsonl: write its table and plot again")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--kwargs", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--lock", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.report:
        records = [json.loads(ln) for ln in open(args.report) if ln.strip()]
        rows, summary = report(records, os.path.dirname(os.path.abspath(args.report)), "corpus")
        print(rows + "\n\n" + summary)
        return 0
    if not args.examples:
        ap.error("--examples TILELANG/examples is needed")
    args.examples = os.path.abspath(args.examples)
    if args.one:
        args.one[0] = os.path.abspath(args.one[0])
        child(args)
        return 0
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
