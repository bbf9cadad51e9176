"""tilelang.autotuner under tilec's compatibility layer: @autotune(configs=...) over a @tilelang.jit
factory, and set_autotune_inputs.

A call that passes any of the configurations' parameters itself compiles those values directly, as
TileLang does. Otherwise every configuration is compiled (one that tilec refuses is left out, and
the reason kept), checked against ref_prog when one is given, and timed with the profiler's
do_bench on the same inputs; the fastest is kept for those arguments and returned.
"""
import contextlib
import inspect

from .._errors import CompatError, missing_attr, script_line
from .._jit import JitFunction
from tilec.errors import TilecError

__all__ = ["autotune", "set_autotune_inputs", "AutotuneResult"]
_inputs = [None]  # tensors set_autotune_inputs gave, for the tunings inside its block


@contextlib.contextmanager
def set_autotune_inputs(*tensors):
    """Within the block, tunings time configurations on these tensors (the kernel's inputs)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    prev, _inputs[0] = _inputs[0], list(tensors)
    try:
        yield
    finally:
        _inputs[0] = prev


class AutotuneResult:
    def __init__(self, config, latency, kernel, tried):
        self.config, self.latency, self.kernel, self.tried = config, latency, kernel, tried
        self.func = getattr(kernel, "prim_func", None)
        self.libcode = kernel.get_kernel_source()


class AutoTuned:
    """An @autotune(...)-decorated @tilelang.jit factory."""

    def __init__(self, jit_fn, options, where):
        self.jit, self.options, self.where = jit_fn, options, where
        self.signature = inspect.signature(jit_fn.func)
        self._best = {}
        self.__name__ = getattr(jit_fn, "__name__", "autotuned")
        self.__doc__ = getattr(jit_fn, "__doc__", None)

    def _configs(self, args, kwargs):
        c = self.options["configs"]
        configs = list(c(*args, **kwargs) if callable(c) else c)
        if not configs or not all(isinstance(x, dict) for x in configs):
            raise CompatError("autotune(configs=...) needs a non-empty list of dicts (or a function returning one)",
                              self.where)
        return configs

    def __call__(self, *args, **kwargs):
        configs = self._configs(args, kwargs)
        given = set(self.signature.bind_partial(*args, **kwargs).arguments)
        if any(k in given for k in configs[0]):  # the caller chose: no tuning (as TileLang)
            return self.jit.compile(*args, **kwargs)
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is None or key not in self._best:
            result = self.tune(configs, args, kwargs)
            if key is None:
                return result.kernel
            self._best[key] = result
        return self._best[key].kernel

    def compile(self, *args, **kwargs):
        return self(*args, **kwargs)

    def tune(self, configs, args, kwargs):
        from .profiler import Profiler
        o = self.options
        tried, best = [], None
        for cfg in configs:
            merged = dict(kwargs)
            merged.update(cfg)
            try:
                kernel = self.jit.compile(*args, **merged)
            except TilecError as e:
                tried.append((cfg, None, f"refused: {e.message}"))
                continue
            prof = Profiler(kernel, o.get("supply_type"))
            ins = _inputs[0]
            if ins is None and o.get("supply_prog") is not None:
                ins = list(o["supply_prog"](kernel.params))
            if ins is None:
                ins = prof._get_inputs()
            if o.get("ref_prog") is not None and not o.get("skip_check"):
                try:
                    if o.get("manual_check_prog") is not None:
                        prof.manual_assert_close(o["ref_prog"], ins, o["manual_check_prog"])
                    else:
                        prof.assert_allclose(o["ref_prog"], ins, atol=o.get("atol", 1e-2), rtol=o.get("rtol", 1e-2),
                                             max_mismatched_ratio=o.get("max_mismatched_ratio", 0.01))
                except AssertionError as e:
                    tried.append((cfg, None, f"wrong result: {str(e).splitlines()[0] if str(e) else 'mismatch'}"))
                    continue
            ms = prof.do_bench(warmup=o.get("warmup", 25), rep=o.get("rep", 100), input_tensors=ins)
            tried.append((cfg, ms, "ok"))
            if best is None or ms < best[1]:
                best = (cfg, ms, kernel)
        if best is None:
            why = "; ".join(f"{c}: {r}" for c, _, r in tried[:4])
            raise CompatError(f"autotune: none of the {len(configs)} configurations compiled and checked ({why})",
                              self.where)
        return AutotuneResult(best[0], best[1], best[2], tried)


_OPTIONS = ("configs", "warmup", "rep", "timeout", "supply_type", "ref_prog", "supply_prog", "rtol", "atol",
            "max_mismatched_ratio", "skip_check", "manual_check_prog", "cache_input_tensors", "do_not_specialize",
            "early_stop", "early_stop_factor")


def autotune(func=None, **options):
    """@autotune(configs=[{...}, ...], warmup=..., rep=..., ref_prog=..., ...) above @tilelang.jit."""
    where = script_line()
    if func is not None:
        raise CompatError("autotune needs configs=...: write @autotune(configs=...) above @tilelang.jit", where)
    for k in options:
        if k not in _OPTIONS:
            raise CompatError(f"autotune({k}=...) is not a TileLang autotune option", where)
    if "configs" not in options:
        raise CompatError("autotune needs configs=...", where)

    def decorate(fn):
        if not isinstance(fn, JitFunction):
            raise CompatError("@autotune goes above a @tilelang.jit function", where)
        if fn._eager is not None:
            raise CompatError("@autotune over an eager @tilelang.jit function (one that opens T.Kernel itself) "
                              "is not supported by tilec; write it as a factory returning a @T.prim_func", where)
        return AutoTuned(fn, options, where)

    return decorate


def __getattr__(name):
    missing_attr("tilelang.autotuner", name)
