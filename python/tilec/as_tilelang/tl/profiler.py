"""tilelang.profiler: Profiler (kernel.get_profiler()) and do_bench, timing with the wall clock
(torch.cuda.synchronize around CUDA work)."""
import functools
import statistics
import time

from .._errors import missing_attr
from .utils.tensor import TensorSupplyType, supply, to_numpy, torch_assert_close  # noqa: F401


def _sync():
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, grad_to_none=None, quantiles=None, fast_flush=True,
             backend="event",
             return_mode="mean"):
    """Milliseconds per call of fn: warmup ms (or _n_warmup calls) of warm-up, then rep ms (or
    _n_repeat calls) of timed calls, each waited for; mean, median, min or max (return_mode), or
    the quantiles asked for."""
    fn()
    _sync()
    t0 = time.perf_counter()
    fn()
    _sync()
    est = max((time.perf_counter() - t0) * 1e3, 1e-3)
    n_warm = _n_warmup if _n_warmup > 0 else max(1, int(warmup / est))
    n_rep = _n_repeat if _n_repeat > 0 else max(1, int(rep / est))
    for _ in range(n_warm):
        fn()
    _sync()
    times = []
    for _ in range(n_rep):
        t = time.perf_counter()
        fn()
        _sync()
        times.append((time.perf_counter() - t) * 1e3)
    if quantiles is not None:
        s = sorted(times)
        r = [s[min(len(s) - 1, int(q * len(s)))] for q in quantiles]
        return r[0] if len(r) == 1 else r
    return {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max,
            "all": list}[return_mode](times)


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (tuple, list)) else [x]


class Profiler:
    """kernel.get_profiler(tensor_supply_type=...): inputs made per the supply type (torch tensors
    on the kernel's device where torch is installed, else numpy arrays), checked against a
    reference program, timed."""

    def __init__(self, kernel, supply_type=None):
        self.kernel = kernel
        self.params = kernel.params
        self.result_idx = list(kernel.out_idx)
        self.supply_type = TensorSupplyType.Auto if supply_type is None else supply_type

    def _device(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            return None
        k = self.kernel.kernel
        return "cuda" if k.target == "cuda" and k.backend != "emu" else "cpu"

    def _get_inputs(self, with_output=False):
        dev = self._device()
        return [supply(p, self.supply_type, dev) for i, p in enumerate(self.params)
                if with_output or i not in self.result_idx]

    @property
    def func(self):
        return self.kernel

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.01):
        ins = self._get_inputs() if input_tensors is None else list(input_tensors)
        ref = _as_list(reference_program(*ins))
        _sync()
        out = _as_list(self.kernel(*ins))
        _sync()
        if len(ref) != len(out):
            raise AssertionError(f"the kernel returned {len(out)} tensors, the reference program {len(ref)}")
        for lhs, rhs in zip(ins + out, ins + ref):
            torch_assert_close(lhs, rhs, rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                               base_name="tilelang", ref_name="ref")

    def manual_assert_close(self, reference_program, input_tensors=None, manual_check_prog=None):
        ins = self._get_inputs() if input_tensors is None else list(input_tensors)
        ref = _as_list(reference_program(*ins))
        out = _as_list(self.kernel(*ins))
        _sync()
        manual_check_prog(out, ref)

    def assert_consistent(self, repeat=10):
        ins = self._get_inputs()
        first = [to_numpy(x).copy() for x in _as_list(self.kernel(*ins))]
        for _ in range(repeat):
            for a, b in zip(_as_list(self.kernel(*ins)), first):
                if not (to_numpy(a) == b).all():
                    raise AssertionError("result is not consistent between runs")

    def run_once(self, func=None):
        ins = self._get_inputs()
        return (func or self.kernel)(*ins)

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=1, n_repeat=1, input_tensors=None, backend="event",
                 quantiles=None, return_mode="mean"):
        ins = self._get_inputs() if input_tensors is None else list(input_tensors)
        return do_bench(functools.partial(func or self.kernel, *ins), warmup=warmup, rep=rep, _n_warmup=n_warmup,
                        _n_repeat=n_repeat, quantiles=quantiles, return_mode=return_mode)


def __getattr__(name):
    missing_attr("tilelang.profiler", name)
