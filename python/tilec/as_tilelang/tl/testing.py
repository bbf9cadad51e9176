"""tilelang.testing: main, requires_cuda*, set_random_seed, torch_assert_close, and the performance
regression suite's process_func / regression (examples/**/regression_*.py run unmodified).

requires_cuda holds where the layer runs TileLang's cuda kernels: on a CUDA device, or wherever
TILEC_AS_TILELANG_TARGET names a target (the cpu, the cuda emulator). The compute version is the
device's, or, without one, tilec's default CUDA target's (9.0), as tilec's device queries answer.
"""
import fnmatch
import inspect
import json
import os
import random
import sys
import time

import numpy as np

from .._errors import missing_attr
from .utils.tensor import torch_assert_close  # noqa: F401


def main():
    import pytest

    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file] + sys.argv[1:]))


def set_random_seed(seed: int = 42) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def _cuda_device():
    import tilec

    return "cuda" in tilec.available_targets()


def _cuda_reason():
    if _cuda_device() or os.environ.get("TILEC_AS_TILELANG_TARGET"):
        return None
    return "no CUDA device (TILEC_AS_TILELANG_TARGET=cpu runs cuda kernels on tilec's cpu target)"


def _compute_version():
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None and torch.cuda.is_available():
        return tuple(torch.cuda.get_device_capability())
    return (9, 0)


class _Requirement:
    """A pytest skip mark usable as @requires_x, requires_x(func) and requires_x.marks()."""

    def __init__(self, reason_fn):
        self.reason_fn = reason_fn

    def marks(self):
        import pytest

        reason = self.reason_fn()
        return [pytest.mark.skipif(reason is not None, reason=reason or "")]

    def __call__(self, func):
        for m in self.marks():
            func = m(func)
        return func


requires_cuda = _Requirement(_cuda_reason)
requires_gpu = requires_cuda
requires_rocm = _Requirement(lambda: "tilec has no ROCm target")
requires_metal = _Requirement(lambda: None)
requires_package = lambda *names: _Requirement(lambda: None)  # noqa: E731


def requires_cuda_compute_version(major_version, minor_version=0, mode="ge"):
    want = (major_version, minor_version)
    ops = {"ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b,
           "lt": lambda a, b: a < b, "eq": lambda a, b: a == b}

    def reason():
        r = _cuda_reason()
        if r:
            return r
        have = _compute_version()
        if not ops[mode](have, want):
            return f"Requires CUDA compute {mode} {major_version}.{minor_version}, have {have[0]}.{have[1]}"
        return None

    return _Requirement(reason)


def requires_cuda_compute_version_ge(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "ge")


def requires_cuda_compute_version_gt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "gt")


def requires_cuda_compute_version_eq(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "eq")


def requires_cuda_compute_version_lt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "lt")


def requires_cuda_compute_version_le(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "le")


# ---- the performance regression suite: `regression_*` functions call process_func(run_regression_perf)
_perf_results = []  # (case, name, latency) of this process's regression() run
_perf_case = [None]


def process_func(func, name=None, /, **kwargs):
    """Run a run_regression_perf(**kwargs) and keep the latency it returns (a few tries if it is not
    positive, as timers at their resolution can give 0)."""
    label = name or getattr(func, "__module__", "<unknown>")
    label = label[len("regression_"):] if label.startswith("regression_") else label
    for _ in range(6):
        latency = float(func(**kwargs))
        if latency > 0.0:
            _perf_results.append((_perf_case[0], label, latency))
            return
    print(f"tilelang.testing.process_func: {label} timed {latency} <= 0, not recorded", file=sys.stderr)


def regression(prefixes=("regression_",), verbose=True):
    """Run the calling module's regression_* functions in name order (TL_PERF_REGRESSION_ONLY: a
    comma-separated list or JSON list of name patterns) and print each latency, as `name: ms` lines,
    or one `__TILELANG_PERF_RESULTS_JSON__=[...]` line where TL_PERF_REGRESSION_FORMAT=json."""
    scope = sys._getframe(1).f_globals
    only = os.environ.get("TL_PERF_REGRESSION_ONLY", "").strip()
    try:
        patterns = json.loads(only) if only else []
    except json.JSONDecodeError:
        patterns = only.split(",")
    patterns = [str(p).strip().lower() for p in ([patterns] if isinstance(patterns, str) else patterns)
                if str(p).strip()]
    cases = sorted((k, v) for k, v in scope.items() if callable(v) and k.startswith(tuple(prefixes)))
    short = lambda k: k[len("regression_"):] if k.startswith("regression_") else k  # noqa: E731
    cases = [(k, v) for k, v in cases if not patterns or any(
        fnmatch.fnmatch(n.lower(), p) or p in n.lower() for p in patterns for n in (k, short(k)))]
    del _perf_results[:]
    for i, (k, fn) in enumerate(cases, 1):
        _perf_case[0] = short(k)
        t0 = time.perf_counter()
        if verbose:
            print(f"  ├─ [{i}/{len(cases)}] {short(k)}", end="", flush=True)
        try:
            fn()
        finally:
            _perf_case[0] = None
        if verbose:
            print(f" ({time.perf_counter() - t0:.2f}s)", flush=True)
    if os.environ.get("TL_PERF_REGRESSION_FORMAT", "text").strip().lower() == "json":
        items = [dict(name=n, latency=lat, **({"case": c} if c else {})) for c, n, lat in _perf_results]
        print("__TILELANG_PERF_RESULTS_JSON__=" + json.dumps(items, separators=(",", ":")))
    else:
        for _, n, lat in _perf_results:
            print(f"{n}: {lat}")


def __getattr__(name):
    missing_attr("tilelang.testing", name)
