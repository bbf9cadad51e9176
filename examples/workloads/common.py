"""What the seed workloads share: backend discovery, weights from a fixed seed, and the table
(TVM's form: backend, cosine, max_delta, argmax) of every backend against the cpu backend.

Targets are discovered from tilec's registry (tilec.available_targets(): those whose default
backend can run kernels here and hold tensors), never listed here: a new backend appears in the
tables by itself.
"""
import argparse
import os
import sys
import time

import numpy as np

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import tilec  # noqa: F401  (installed with pip install ./python)
except ImportError:  # used in place: the repository's package
    sys.path.insert(0, os.path.join(_REPO, "python"))
    import tilec  # noqa: F401


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--targets", default="all",
                   help="comma-separated targets, or all (default): every target tilec can run on here")
    p.add_argument("--seed", type=int, default=0, help="seed of the weights and inputs (default 0)")
    p.add_argument("--no-numpy", action="store_true", help="skip the float64 numpy reference row")
    p.add_argument("--perturb", metavar="TARGET", help="testing aid: change the first output element of TARGET "
                   "by 1%% of the output's largest magnitude, to see the table disagree")
    return p


def targets(arg):
    """The targets to run: cpu first (the reference), then the others discovered here."""
    avail = tilec.available_targets()
    notes = []
    if arg != "all":
        wanted = [t.strip() for t in arg.split(",") if t.strip()]
        for t in wanted:
            if t not in avail:
                why = [b["reason"] for b in tilec.backends() if b["target"] == t and b["default"]]
                notes.append(f"{t}: skipped: {why[0] if why else 'unknown target'}")
        avail = [t for t in avail if t in wanted]
    if "cpu" not in avail:
        avail = ["cpu"] + avail  # the reference always runs
    others = [b for b in tilec.backends() if b["default"] and b["target"] not in avail and arg == "all"]
    for b in others:
        notes.append(f"{b['target']}: skipped: {b['reason'] or 'tilec cannot hold tensors there yet'}")
    return ["cpu"] + [t for t in avail if t != "cpu"], notes


def upload(arrays, target):
    """Host arrays -> tilec tensors on the target (a dict or list)."""
    if isinstance(arrays, dict):
        return {k: upload(v, target) for k, v in arrays.items()}
    if isinstance(arrays, (list, tuple)):
        return [upload(v, target) for v in arrays]
    return tilec.tensor(np.ascontiguousarray(arrays, dtype=np.float32), target=target)


def compare(out, ref):
    a, b = np.asarray(out, dtype=np.float64).ravel(), np.asarray(ref, dtype=np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else float(na == nb)
    return {"cosine": cos, "max_delta": float(np.max(np.abs(a - b))) if a.size else 0.0,
            "argmax": int(np.argmax(a)), "ref_argmax": int(np.argmax(b)), "ref_max": float(np.max(np.abs(b)))}


def agrees(c, min_cosine=1 - 1e-5, rel=1e-3):
    return (c["cosine"] >= min_cosine and c["argmax"] == c["ref_argmax"]
            and c["max_delta"] <= rel * max(c["ref_max"], 1e-30))


def _perturbed(out):
    out = np.array(out, dtype=np.float32)
    out.flat[0] += 0.01 * float(np.max(np.abs(out)))
    return out


def run_all(title, forward, numpy_forward, args, min_cosine=1 - 1e-5, rel=1e-3):
    """forward(target) -> [(label, output array)]: the model run on that target (label names the
    backend, and the variant when a target runs several). Runs it twice on every target (the
    second run is timed), compares every output with the cpu backend's first, prints the table
    and returns the exit status (0, or 3 when a backend disagrees)."""
    tlist, notes = targets(args.targets)
    results = []
    for t in tlist:
        forward(t)  # compiles, warms up
        t0 = time.perf_counter()
        outs = forward(t)
        ms = (time.perf_counter() - t0) * 1e3 / len(outs)
        if args.perturb == t:
            outs = [(label, _perturbed(out)) for label, out in outs]
        results += [(f"{t}/{label}", np.asarray(out), ms) for label, out in outs]
    ref = results[0][1]
    rows = []
    for name, out, ms in results:
        c = compare(out, ref)
        rows.append((name, c, ms, agrees(c, min_cosine, rel)))
    if not args.no_numpy:
        t0 = time.perf_counter()
        ref64 = numpy_forward()
        ms = (time.perf_counter() - t0) * 1e3
        c = compare(ref, ref64)  # the cpu backend against float64 numpy
        rows.append(("numpy float64 (vs cpu)", c, ms, agrees(c, 1 - 1e-4, 1e-2)))
    print(title)
    print(f"{'backend':<24} {'cosine':>12} {'max_delta':>10} {'argmax':>8}  {'ms':>9}  ok")
    for name, c, ms, ok in rows:
        mark = "" if c["argmax"] == c["ref_argmax"] else f" (cpu {c['ref_argmax']})"
        print(f"{name:<24} {c['cosine']:12.9f} {c['max_delta']:10.3g} {c['argmax']:>8}{mark}  {ms:9.2f}  "
              f"{'yes' if ok else 'NO'}")
    for n in notes:
        print(n)
    bad = [name for name, c, ms, ok in rows if not ok]
    if bad:
        print(f"DISAGREE: {', '.join(bad)}", file=sys.stderr)
        return 3
    return 0
