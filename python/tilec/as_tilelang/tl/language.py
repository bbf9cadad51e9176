"""tilelang.language under tilec's compatibility layer (`import tilelang.language as T`).

What CPython evaluates of a TileLang program outside kernels is real here: dtypes, T.Tensor /
T.Buffer annotations, T.symbolic / T.dynamic sizes and arithmetic on them, T.ceildiv on ints,
T.GemmWarpPolicy, and the decorators: @T.prim_func hands the function, with the values it reads,
to tilec (see tilec/as_tilelang/_capture.py); @T.macro marks a helper whose source goes with it.
Every other T.name means something only inside a kernel, which tilec reads from the source: it
is a value here that tilec's reader knows, and calling it from Python is an error naming it.
"""
import builtins as _builtins
import enum

from .._errors import CompatError, script_line


class dtype(str):
    """A dtype name (`T.float16 == "float16"`)."""

    def __repr__(self):
        return f"T.{self}"

    def __call__(self, *args, **kwargs):
        raise CompatError(f"T.{self}(...) builds a typed value inside a kernel; CPython cannot run it here")

    @property
    def bits(self):
        import re

        m = re.search(r"\d+", self)
        return 1 if self == "bool" else int(m.group(0)) if m else 32


_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
           "float32", "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
           "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4"]
for _n in _DTYPES:
    globals()[_n] = dtype(_n)
float = dtype("float32")  # noqa: A001 (TileLang spells float32 "float" too)
half = dtype("float16")
double = dtype("float64")
float8_e4m3 = dtype("float8_e4m3fn")


class SymExpr:
    """A size expression of symbolic dimensions, built by CPython (T.dynamic("m") * 2)."""

    def __init__(self, parts):
        self.parts = parts  # a list of str / Symbol pieces

    def render(self, symbol):
        return "".join(symbol(p) if isinstance(p, Symbol) else p for p in self.parts)

    def _op(self, other, op, rev=False):
        if isinstance(other, _builtins.bool) or not isinstance(other, (int, SymExpr)):
            return NotImplemented
        o = other.parts if isinstance(other, SymExpr) else [str(int(other))]
        a, b = (o, self.parts) if rev else (self.parts, o)
        return SymExpr(["("] + a + [f" {op} "] + b + [")"])

    def __add__(self, o): return self._op(o, "+")
    def __radd__(self, o): return self._op(o, "+", True)
    def __sub__(self, o): return self._op(o, "-")
    def __rsub__(self, o): return self._op(o, "-", True)
    def __mul__(self, o): return self._op(o, "*")
    def __rmul__(self, o): return self._op(o, "*", True)
    def __floordiv__(self, o): return self._op(o, "//")
    def __rfloordiv__(self, o): return self._op(o, "//", True)
    def __mod__(self, o): return self._op(o, "%")
    def __rmod__(self, o): return self._op(o, "%", True)

    def __repr__(self):
        return self.render(lambda s: s.name)


class Symbol(SymExpr):
    """T.symbolic("m") / T.dynamic("m"): a size bound from the tensors at launch."""

    def __init__(self, name, dtype="int32"):
        self.name, self.dtype = name, dtype
        super().__init__([self])

    def __eq__(self, other):
        return isinstance(other, Symbol) and other.name == self.name

    def __hash__(self):
        return hash(("sym", self.name))


def symbolic(name, dtype="int32"):
    return Symbol(name, dtype)


dynamic = symbolic


class Annotation:
    def __init__(self, kind, shape, dtype="float32", **kw):
        if not isinstance(shape, (tuple, list)):
            shape = (shape,)
        self.kind, self.shape, self.dtype, self.kw = kind, tuple(shape), dtype, kw

    def __repr__(self):
        return f"T.{self.kind}({self.shape!r}, {self.dtype!r})"


class _AnnotationMaker:
    def __init__(self, kind):
        self.kind = kind

    def __call__(self, shape, dtype="float32", **kw):
        return Annotation(self.kind, shape, dtype, **kw)

    def __getitem__(self, item):  # T.Tensor[(M, N), dtype]
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], (tuple, list)):
            return Annotation(self.kind, item[0], item[1])
        return Annotation(self.kind, item)


Tensor = _AnnotationMaker("Tensor")
Buffer = _AnnotationMaker("Buffer")


class GemmWarpPolicy(enum.IntEnum):
    Square = 0
    FullRow = 1
    FullCol = 2


def ceildiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    if isinstance(a, (int, SymExpr)) and isinstance(b, (int, SymExpr)):
        return (a + b - 1) // b
    raise CompatError("T.ceildiv takes ints or symbolic sizes outside a kernel")


class PrimFunc:
    """A @T.prim_func: the function with the values it read when CPython defined it. tilelang.jit
    and tilelang.compile compile it with tilec."""

    def __init__(self, func, where):
        from .._capture import capture

        self.func = func
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.where = where
        self.program = capture(func, where)

    def __call__(self, *args, **kwargs):
        raise CompatError(f"calling the @T.prim_func '{self.__name__}' directly: compile it first "
                          "(tilelang.compile(func, out_idx=...) or a @tilelang.jit factory)")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        from .._errors import UnsupportedAttribute

        raise UnsupportedAttribute(f"PrimFunc.{name} (TVM's PrimFunc API) is not supported by tilec")


def prim_func(func=None, **kwargs):
    where = script_line()
    if func is None:
        return lambda f: PrimFunc(f, where)
    return PrimFunc(func, where)


def macro(func=None, **kwargs):
    def mark(f):
        f.__tilec_macro__ = f
        return f

    return mark(func) if func is not None else mark


def const(names):
    raise CompatError("T.const is read by tilec in an eager @tilelang.jit function only")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def only_in_kernels(*args, **kwargs):
        raise CompatError(f"T.{name} means something only inside a kernel, which tilec reads from the source; "
                          "CPython called it here, outside one")

    only_in_kernels.__name__ = name
    only_in_kernels.__qualname__ = name
    only_in_kernels.__module__ = __name__
    globals()[name] = only_in_kernels
    return only_in_kernels
