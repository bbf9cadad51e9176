"""What a Python call of a compiled tilec kernel costs beyond the launch itself (issue 37).

For each case it times
  (a) launch   the kernel alone: the C API's launch (tilec_kernel_launch, or on cuda
               tilec_kernel_launch_stream on torch's current stream) on the arguments of a
               prepared Launch (Kernel.prepare), called through ctypes with nothing else per call;
  (b) call     the full Python call `k(a, b, c)`: argument reading and checks, output allocation,
               launch;
and prints overhead = (b) - (a).

  cpu   numpy inputs, cpu target; (a) and (b) are medians of single calls timed with
        perf_counter_ns, over --calls calls in each of --rounds rounds, (a) and (b) alternating.
  cuda  torch CUDA tensors (when torch sees a GPU): CUDA events around --calls back-to-back calls
        on torch's current stream, median of --rounds rounds; per call = events time / calls.
        Beside it, when `import tilelang` works, TileLang's JITKernel of the same example:
        (a) with the output passed in, (b) with out_idx allocating it.

--compare DIR loads a second copy of the package (DIR/tilec, e.g. a checkout of an older
commit's python/) into the same process and times it too, so before and after come from one run:

    git archive HEAD python | tar -x -C /tmp/tilec-head
    python3 bench/python_call_overhead.py --compare /tmp/tilec-head/python --label-compare HEAD

Without torch (or without a GPU) the cuda part is skipped with a message saying why.
"""
import argparse
import ctypes
import importlib.util
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXAMPLE = os.path.join(REPO, "examples", "elementwise.py")
SOFTMAX = os.path.join(REPO, "examples", "softmax.py")


def load_package(python_dir, name):
    """The tilec package in python_dir/tilec, imported as module `name`."""
    init = os.path.join(python_dir, "tilec", "__init__.py")
    spec = importlib.util.spec_from_file_location(name, init,
                                                  submodule_search_locations=[os.path.dirname(init)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def raw_launcher(pkg, launch, stream=None):
    """(a): the C launch on a prepared Launch's DLTensors, with its arguments converted once."""
    lib = pkg._lib.lib()
    err = pkg._lib.tilec_error()
    ref = ctypes.byref(err)
    h = ctypes.c_void_p(launch.kernel.handle)
    n = ctypes.c_size_t(launch._n)
    arr = launch._arr
    if stream is None:
        f = lib["tilec_kernel_launch"]
        f.restype = ctypes.c_int

        def run():
            if f(h, arr, n, ref):
                raise RuntimeError(err.message.decode())
    else:
        f = lib["tilec_kernel_launch_stream"]
        f.restype = ctypes.c_int
        s = ctypes.c_void_p(stream or None)

        def run():
            if f(h, arr, n, s, ref):
                raise RuntimeError(err.message.decode())
    return run


def median_single_us(fns, calls, rounds):
    """Median time of one call of each fn (perf_counter_ns), the fns alternating by round."""
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fi, fn in enumerate(fns):
            for _ in range(20):
                fn()
            ts = samples[fi]
            for _ in range(calls):
                t0 = time.perf_counter_ns()
                fn()
                ts.append(time.perf_counter_ns() - t0)
    return [statistics.median(s) / 1e3 for s in samples]


def cpu_cases(pkg):
    rng = np.random.default_rng(0)
    k = pkg.compile(EXAMPLE, target="cpu", M=64, N=64, block_M=64, block_N=64)
    a, b, c = (rng.uniform(-1, 1, (64, 64)).astype(np.float16) for _ in range(3))
    yield "elementwise 64x64 f16 (3 in, 1 out)", k, (a, b, c)
    k = pkg.compile(SOFTMAX, target="cpu")  # m symbolic: outputs sized per call from X's rows
    x = rng.uniform(-1, 1, (16, 1000)).astype(np.float16)
    yield "softmax m=16 x 1000 f16, m symbolic (1 in, 2 out)", k, (x,)


def run_cpu(pkgs, calls, rounds):
    rows = []
    cases = {label: list(cpu_cases(pkg)) for label, pkg in pkgs}
    for ci in range(len(next(iter(cases.values())))):
        for label, pkg in pkgs:
            name, k, args = cases[label][ci]
            ref = k(*args)  # the plan is made here (first call), as are outputs of these sizes
            launch = k.prepare(*args)
            raw = raw_launcher(pkg, launch)
            out = k(*args)
            for r, o in zip(ref if isinstance(ref, tuple) else (ref,), out if isinstance(out, tuple) else (out,)):
                assert np.array_equal(r, o)
            t_launch, t_call = median_single_us([raw, lambda k=k, args=args: k(*args)], calls, rounds)
            rows.append(("cpu", name, label, t_launch, t_call))
    return rows


def run_cuda(pkgs, calls, rounds, m, n):
    try:
        import torch
    except ImportError:
        return [], "skipped cuda: torch is not installed"
    if not torch.cuda.is_available():
        return [], "skipped cuda: torch sees no CUDA device"
    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    a, b, c = (torch.rand((m, n), device="cuda", dtype=torch.float16, generator=g) - 0.5 for _ in range(3))
    name = f"elementwise {m}x{n} f16 (3 in, 1 out)"

    def events_us(fn):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        per = []
        for _ in range(rounds):
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            s.record()
            for _ in range(calls):
                fn()
            e.record()
            e.synchronize()
            per.append(s.elapsed_time(e) * 1e3 / calls)
        return statistics.median(per)

    for label, pkg in pkgs:
        k = pkg.compile(EXAMPLE, target="cuda", M=m, N=n)
        ref = k(a, b, c)
        torch.cuda.synchronize()
        launch = k.prepare(a, b, c)
        stream = torch.cuda.current_stream().cuda_stream
        raw = raw_launcher(pkg, launch, stream)
        t_launch = events_us(raw)
        t_call = events_us(lambda: k(a, b, c))
        torch.cuda.synchronize()
        torch.testing.assert_close(k(a, b, c), ref)
        rows.append(("cuda", name, label, t_launch, t_call))
    try:
        import tilelang  # noqa: F401
    except Exception as e:  # noqa: BLE001
        return rows, f"skipped TileLang: import tilelang failed ({type(e).__name__}: {e})"
    import tilelang as tl

    spec = importlib.util.spec_from_file_location("tl_elementwise", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    jk = mod.fused_mul_add_act(M=m, N=n)  # out_idx=[-1]: the call allocates D
    torch.testing.assert_close(jk(a, b, c), ref)
    t_call = events_us(lambda: jk(a, b, c))
    try:  # the same kernel with every argument passed in: TileLang's launch alone
        jk_all = tl.compile(mod.fused_mul_add_act.get_tir(M=m, N=n), out_idx=None)
        d = torch.empty_like(a)
        jk_all(a, b, c, d)
        torch.testing.assert_close(d, ref)
        t_launch = events_us(lambda: jk_all(a, b, c, d))
    except Exception as e:  # noqa: BLE001
        notes = f"TileLang's launch alone not timed ({type(e).__name__}: {e})"
        rows.append(("cuda", name, "TileLang", float("nan"), t_call))
        return rows, notes
    rows.append(("cuda", name, "TileLang", t_launch, t_call))
    return rows, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000, help="calls per round (>= 1000 for the record)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--compare", metavar="DIR", help="also time the package in DIR/tilec (a python/ folder)")
    ap.add_argument("--label-compare", default="compare", help="its name in the table")
    ap.add_argument("--m", type=int, default=256, help="rows of the cuda case")
    ap.add_argument("--n", type=int, default=256, help="columns of the cuda case")
    ap.add_argument("--skip-cuda", action="store_true")
    args = ap.parse_args()

    # every package loads the same library: the checkout's build unless TILEC_LIB says otherwise
    if not os.environ.get("TILEC_LIB") and os.path.exists(os.path.join(REPO, "build", "libtilec.so")):
        os.environ["TILEC_LIB"] = os.path.join(REPO, "build", "libtilec.so")
    pkgs = []
    if args.compare:
        pkgs.append((args.label_compare, load_package(os.path.abspath(args.compare), "tilec_compare")))
    pkgs.append(("tilec", load_package(os.path.join(REPO, "python"), "tilec")))
    print(f"library: {pkgs[-1][1]._lib.loaded_path()}; {args.calls} calls x {args.rounds} rounds; "
          f"python {sys.version.split()[0]}, numpy {np.__version__}")

    rows = run_cpu(pkgs, args.calls, args.rounds)
    notes = []
    if args.skip_cuda:
        notes.append("skipped cuda: --skip-cuda")
    else:
        crow, note = run_cuda(pkgs, args.calls, args.rounds, args.m, args.n)
        rows += crow
        if note:
            notes.append(note)
    w = max(len(r[1]) for r in rows)
    lw = max(8, max(len(r[2]) for r in rows))
    print(f"{'target':6}  {'case':{w}}  {'package':{lw}}  {'launch us':>9}  {'call us':>9}  {'overhead us':>11}")
    for tgt, case, label, tl_, tc in rows:
        print(f"{tgt:6}  {case:{w}}  {label:{lw}}  {tl_:9.2f}  {tc:9.2f}  {tc - tl_:11.2f}")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
