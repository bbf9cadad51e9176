"""Speed of the seed workloads and of a tilec call from Python (docs/performance.md, "Python and
the seed workloads"). Three sections, each a compact table:

  chain   the 20-kernel gated tanh·σ chain on 16M fp32 elements (65536 x 256): tilec one kernel per
          stage (prepared launches enqueued back to back, intermediates on the device), tilec's one
          fused TileLang kernel, PyTorch eager, torch.compile (when torch is present); with the
          byte floor (read the input and write the output once at --peak-tbps)
  cnn     the MobileNetV2-style CNN on one 224x224 image: tilec (prepared launches) vs PyTorch eager
          (F.conv2d with the same weights), with the outputs' cosine
  launch  the per-launch overhead of a tilec call from Python: a full call (tensor conversion,
          checks, launch, wait), a prepared launch enqueued, vs a CuPy RawKernel launch (if CuPy is
          present) of the same trivial kernel

Each time is the median of --reps runs (after warm-up), wall clock with the device synchronised.

    python3 bench/workloads_bench.py                  # all sections on cuda if it runs here, else cpu
    python3 bench/workloads_bench.py chain --target cpu --elements 1048576
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "examples", "workloads"))
import common  # noqa: E402  (puts the repository's package on the path when not installed)
import kernels  # noqa: E402
import mobilenet_v2  # noqa: E402
import tilec  # noqa: E402

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None


def torch_ok(target):
    return torch is not None and (target == "cpu" or (target == "cuda" and torch.cuda.is_available()))


def tdev(target):
    return "cuda" if target == "cuda" else "cpu"


def sync(target):
    if torch is not None and target == "cuda" and torch.cuda.is_available():
        torch.cuda.synchronize()


def median_ms(fn, reps, target, warmup=3):
    for _ in range(warmup):
        fn()
    sync(target)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync(target)
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def run_plan(plan, target):
    """Enqueue every prepared launch but the last, then run the last synchronously: it waits for
    the others (one stream). On the cpu a launch runs when it is called."""
    if target == "cpu":
        for p in plan:
            p()
        return plan[-1].outputs
    for p in plan[:-1]:
        p.enqueue(0)
    return plan[-1]()


def table(title, head, rows):
    print(title)
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    print()


# ---- chain ------------------------------------------------------------------------------------
def bench_chain(args):
    t, N, C = args.target, args.stages, 256
    R = args.elements // C
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((R, C)).astype(np.float32)
    P = np.empty((N, 4, C), np.float32)
    P[:, 0::2] = rng.uniform(0.5, 1.5, (N, 2, C))
    P[:, 1::2] = rng.uniform(-0.5, 0.5, (N, 2, C))
    k = kernels.gated.compile(target=t, R=R, C=C)
    kf = kernels.gated_fused.compile(target=t, R=R, C=C, stages=N)
    X = tilec.tensor(x0, target=t)
    Ps = [tilec.tensor(P[s], target=t) for s in range(N)]
    bufs = [tilec.empty((R, C), "float32", target=t) for _ in range(N)]
    plan, prev = [], X
    for s in range(N):
        plan.append(k.prepare(prev, Ps[s], bufs[s]))
        prev = bufs[s]
    fused = kf.prepare(X, tilec.tensor(P, target=t), tilec.empty((R, C), "float32", target=t))
    rows = []
    ms = median_ms(lambda: run_plan(plan, t), args.reps, t)
    out_stage = bufs[-1].numpy()
    rows.append([f"tilec, {N} kernels ({k.backend})", f"{ms:.3f}"])
    ms = median_ms(lambda: run_plan([fused], t), args.reps, t)
    out_fused = fused.outputs.numpy()
    rows.append([f"tilec, 1 fused kernel ({kf.backend})", f"{ms:.3f}"])
    cos = common.compare(out_fused, out_stage)["cosine"]
    if torch_ok(t):
        dev = tdev(t)
        xt = torch.from_numpy(x0).to(dev)
        pt = torch.from_numpy(P).to(dev)

        def eager(x):
            for s in range(N):
                x = torch.tanh(x * pt[s, 0] + pt[s, 1]) * torch.sigmoid(x * pt[s, 2] + pt[s, 3]) + x
            return x

        ms = median_ms(lambda: eager(xt), args.reps, t)
        rows.append(["PyTorch eager", f"{ms:.3f}"])
        cos_t = common.compare(eager(xt).cpu().numpy(), out_stage)["cosine"]
        try:
            comp = torch.compile(eager)
            comp(xt)
            ms = median_ms(lambda: comp(xt), args.reps, t)
            rows.append(["torch.compile", f"{ms:.3f}"])
        except Exception as e:  # noqa: BLE001  (no compiler toolchain for inductor, ...)
            rows.append([f"torch.compile: not run ({type(e).__name__})", "-"])
    else:
        cos_t = None
        rows.append(["PyTorch: not installed" if torch is None else f"PyTorch: no {t} device", "-"])
    floor = 2 * R * C * 4 / (args.peak_tbps * 1e12) * 1e3
    rows.append([f"byte floor (2 x {R * C * 4 / 2**20:.0f} MiB at {args.peak_tbps} TB/s)", f"{floor:.4f}"])
    table(f"chain: {N} gated tanh·σ stages on {R}x{C} = {R * C} fp32 elements, target {t}, median of {args.reps} "
          f"(fused vs per-stage cosine {cos:.9f}" + (f", torch vs tilec {cos_t:.9f})" if cos_t is not None else ")"),
          ["what", "ms"], rows)


# ---- cnn --------------------------------------------------------------------------------------
def bench_cnn(args):
    t, res = args.target, args.resolution
    rng = np.random.default_rng(0)
    image = rng.uniform(-1, 1, (3, res, res)).astype(np.float32)
    layers = mobilenet_v2.build(1.0, res, 1000, rng)
    up = lambda a: tilec.tensor(a, target=t)  # noqa: E731
    plan, x = [], up(image)
    for ly in layers:
        if ly["kind"] == "stem":
            k = kernels.conv2d.compile(target=t, Cin=3, H=res, W=res, Cout=ly["Cout"], K=3, stride=2, pad=1, act="relu6")
            plan.append(k.prepare(x, up(ly["W"]), up(ly["B"])))
        elif ly["kind"] == "block":
            cin, hid, cout, h, s = ly["Cin"], ly["hidden"], ly["Cout"], ly["H"], ly["stride"]
            inp, y = x, x
            if ly["t"] != 1:
                ke = kernels.pointwise.compile(target=t, Cin=cin, P=h * h, Cout=hid, act="relu6")
                plan.append(ke.prepare(y.reshape(cin, h * h), up(ly["We"]), up(ly["Be"])))
                y = plan[-1].outputs
            kd = kernels.depthwise.compile(target=t, C=hid, H=h, W=h, stride=s, act="relu6")
            plan.append(kd.prepare(y.reshape(hid, h, h), up(ly["Wd"]), up(ly["Bd"])))
            y = plan[-1].outputs
            ho = (h - 1) // s + 1
            if ly["res"]:
                kp = kernels.pointwise_residual.compile(target=t, Cin=hid, P=ho * ho, Cout=cout)
                plan.append(kp.prepare(y.reshape(hid, ho * ho), up(ly["Wp"]), up(ly["Bp"]), inp.reshape(cout, ho * ho)))
            else:
                kp = kernels.pointwise.compile(target=t, Cin=hid, P=ho * ho, Cout=cout, act="none")
                plan.append(kp.prepare(y.reshape(hid, ho * ho), up(ly["Wp"]), up(ly["Bp"])))
        else:
            h = ly["H"]
            kh = kernels.pointwise.compile(target=t, Cin=ly["Cin"], P=h * h, Cout=ly["Cout"], act="relu6")
            plan.append(kh.prepare(x.reshape(ly["Cin"], h * h), up(ly["W"]), up(ly["B"])))
            plan.append(kernels.avgpool.compile(target=t, C=ly["Cout"], P=h * h).prepare(plan[-1].outputs))
            plan.append(kernels.linear.compile(target=t, Cin=ly["Cout"], Cout=1000).prepare(
                plan[-1].outputs, up(ly["Wc"]), up(ly["Bc"])))
        x = plan[-1].outputs
    ms = median_ms(lambda: run_plan(plan, t), args.reps, t)
    out = x.numpy()
    rows = [[f"tilec ({len(plan)} kernels, {plan[0].kernel.backend})", f"{ms:.3f}", int(np.argmax(out)), "-"]]
    if torch_ok(t):
        import torch.nn.functional as F

        dev = tdev(t)
        T = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(dev)  # noqa: E731
        tw = [{k: T(v) for k, v in ly.items() if isinstance(v, np.ndarray)} for ly in layers]

        def eager(img):
            x = img[None]
            for ly, w in zip(layers, tw):
                if ly["kind"] == "stem":
                    x = F.conv2d(x, w["W"], w["B"], stride=2, padding=1).clamp(0, 6)
                elif ly["kind"] == "block":
                    inp, y = x, x
                    if ly["t"] != 1:
                        y = F.conv2d(y, w["We"][:, :, None, None], w["Be"]).clamp(0, 6)
                    y = F.conv2d(y, w["Wd"][:, None], w["Bd"], stride=ly["stride"], padding=1,
                                 groups=ly["hidden"]).clamp(0, 6)
                    y = F.conv2d(y, w["Wp"][:, :, None, None], w["Bp"])
                    x = y + inp if ly["res"] else y
                else:
                    x = F.conv2d(x, w["W"][:, :, None, None], w["B"]).clamp(0, 6).mean(dim=(2, 3))
                    x = F.linear(x, w["Wc"], w["Bc"])
            return x[0]

        img = T(image)
        with torch.no_grad():
            ms = median_ms(lambda: eager(img), args.reps, t)
            ref = eager(img).cpu().numpy()
        c = common.compare(out, ref)
        rows.append(["PyTorch eager (F.conv2d)", f"{ms:.3f}", int(np.argmax(ref)), f"{c['cosine']:.9f}"])
    else:
        rows.append(["PyTorch: not installed" if torch is None else f"PyTorch: no {t} device", "-", "-", "-"])
    table(f"cnn: MobileNetV2-style, one {res}x{res} image, fp32, target {t}, median of {args.reps}",
          ["what", "ms", "argmax", "cosine vs tilec"], rows)


# ---- launch -----------------------------------------------------------------------------------
TINY = """import tilec.language as T
@T.prim_func
def tiny(A: T.Tensor((32,), 'float32'), B: T.Tensor((32,), 'float32')):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding(0)
        B[tx] = A[tx] + 1.0
"""


def per_launch_us(fn, n, target, final=None):
    for _ in range(100):
        fn()
    sync(target)
    if final is not None:
        final()
    t0 = time.perf_counter()
    for _ in range(n - 1):
        fn()
    (final or fn)()
    sync(target)
    return (time.perf_counter() - t0) * 1e6 / n


def bench_launch(args):
    t, n = args.target, args.launches
    k = tilec.compile(TINY, target=t)
    a, b = tilec.zeros((32,), target=t), tilec.zeros((32,), target=t)
    run = k.prepare(a, b)
    rows = [["tilec kernel(a, b): convert, check, launch, wait (tilec.Tensor)", f"{per_launch_us(lambda: k(a, b), n, t):.2f}"]]
    if t == "cuda":
        rows.append(["tilec prepared launch, enqueued (kernel.prepare(...).enqueue)",
                     f"{per_launch_us(lambda: run.enqueue(0), n, t, final=run):.2f}"])
    rows.append(["tilec prepared launch + wait", f"{per_launch_us(run, n, t):.2f}"])
    if torch_ok(t):
        ta, tb = torch.zeros(32, device=tdev(t)), torch.zeros(32, device=tdev(t))
        rows.append([f"tilec kernel(a, b) on torch {tdev(t)} tensors (DLPack per call, wait)",
                     f"{per_launch_us(lambda: k(ta, tb), n, t):.2f}"])
    if cupy is not None and t == "cuda":
        raw = cupy.RawKernel(r'extern "C" __global__ void tiny(const float* A, float* B) '
                             r'{ B[threadIdx.x] = A[threadIdx.x] + 1.0f; }', "tiny")
        ca, cb = cupy.zeros(32, dtype=cupy.float32), cupy.zeros(32, dtype=cupy.float32)
        dev = cupy.cuda.Device()
        rows.append(["CuPy RawKernel launch (enqueue)", f"{per_launch_us(lambda: raw((1,), (32,), (ca, cb)), n, t, final=dev.synchronize):.2f}"])
    else:
        rows.append(["CuPy RawKernel: " + ("not installed" if cupy is None else "needs cuda"), "-"])
    table(f"launch: per-launch overhead from Python, 1 block of 32 threads, target {t} ({k.backend}), {n} launches",
          ["what", "us per launch"], rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sections", nargs="*", help="chain, cnn, launch (default: all three)")
    p.add_argument("--target", default=None, help="default: cuda when it runs here, else cpu")
    p.add_argument("--stages", type=int, default=20)
    p.add_argument("--elements", type=int, default=16 * 2**20, help="chain elements (default 16M)")
    p.add_argument("--resolution", type=int, default=224)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--launches", type=int, default=20000)
    p.add_argument("--peak-tbps", type=float, default=4.8, help="memory bandwidth for the byte floor (H200: 4.8)")
    args = p.parse_args()
    if args.target is None:
        args.target = "cuda" if "cuda" in tilec.available_targets() else "cpu"
    print(f"tilec {tilec.version()}, target {args.target}, torch {torch.__version__ if torch else 'absent'}, "
          f"cupy {cupy.__version__ if cupy else 'absent'}\n")
    for s in args.sections or ["chain", "cnn", "launch"]:
        if s not in ("chain", "cnn", "launch"):
            p.error(f"unknown section '{s}' (chain, cnn, launch)")
        {"chain": bench_chain, "cnn": bench_cnn, "launch": bench_launch}[s](args)


if __name__ == "__main__":
    main()
