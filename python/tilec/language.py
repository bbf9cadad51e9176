"""`import tilec.language as T`: what Python itself evaluates of a TileLang kernel when the module
defining it is imported.

tilec reads kernels from their source text; Python never runs a kernel's body. It does evaluate,
at definition time, decorators (`@T.prim_func`), default values (`dtype=T.float16`), the
annotations of a module-level prim_func's parameters (`A: T.Tensor((M, N), dtype)`) and module
constants (`m = T.symbolic("m")`). This module provides those; every other name (T.Kernel,
T.copy, ...) exists only inside kernels, where tilec's reader gives it meaning.
"""


class dtype(str):
    """A dtype name (`T.float16 == "float16"`)."""

    def __repr__(self):
        return f"T.{self}"


_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
           "float32", "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
           "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4"]
for _n in _DTYPES:
    globals()[_n] = dtype(_n)
float = dtype("float32")  # noqa: A001 (TileLang spells float32 "float" too)
half = dtype("float16")
double = dtype("float64")


class _Annotation:
    def __init__(self, kind, shape, dtype="float32", **kw):
        self.kind, self.shape, self.dtype, self.kw = kind, shape, dtype, kw

    def __repr__(self):
        return f"T.{self.kind}({self.shape!r}, {self.dtype!r})"


def Tensor(shape, dtype="float32", **kw):  # noqa: N802
    return _Annotation("Tensor", shape, dtype, **kw)


def Buffer(shape, dtype="float32", **kw):  # noqa: N802
    return _Annotation("Buffer", shape, dtype, **kw)


class Symbol(str):
    """T.symbolic("m") / T.dynamic("m"): a size bound from the tensors at launch."""


def symbolic(name, dtype="int32"):
    return Symbol(name)


dynamic = symbolic


def const(names):
    parts = [n.strip() for n in names.replace(",", " ").split()]
    return tuple(Symbol(p) for p in parts) if len(parts) > 1 else Symbol(parts[0])


class PrimFunc:
    """A module-level @T.prim_func: compile it with tilec.compile(f, out_idx=...)."""

    def __init__(self, func):
        self.func = func
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __call__(self, *args, **kwargs):
        from . import compile as _compile

        return _compile(self)(*args, **kwargs)


def prim_func(func=None, **kwargs):
    if func is None:
        return lambda f: PrimFunc(f)
    return PrimFunc(func)


def macro(func=None, **kwargs):
    return func if func is not None else (lambda f: f)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def only_in_kernels(*args, **kwargs):
        raise RuntimeError(f"T.{name} has a meaning only inside a kernel, which tilec reads from its source; "
                           "Python does not run it")

    only_in_kernels.__name__ = name
    return only_in_kernels
