#!/usr/bin/env python3
"""Run one TileLang example the way a user would, with stand-ins for torch, tilelang and the GPU,
and record the arguments of the first call of each kernel (tests/compat, issue 10).

    python3 tests/compat/trace.py FILE KERNEL...

Prints one JSON object: {kernel: {"args": {param: value}, "shapes": {param: [dims]}}}, with
"__globals__" (the module's names after the run) and "__later__" ({kernel: [records of the later
calls whose arguments differ from the first's]}). Nothing
runs on a GPU and nothing is compiled: torch tensors are shape-only stand-ins (`FakeTensor`),
every other torch or tilelang object is a permissive stand-in (`Any`), and each statement of
the file runs under its own try/except, so a call the stand-ins cannot model skips that
statement alone. A kernel factory or @tilelang.jit function named on the command line is
replaced by a recorder that notes its bound arguments (tensors as their shapes) and returns a
stand-in kernel. Values that come from tensor data (`x.max().item()`) are 128: the run has no
data, so these sizes are a choice of the harness, not the file's.
"""
import argparse
import ast
import importlib.abc
import importlib.machinery
import inspect
import io
import json
import math
import os
import sys
import types

DATA_VALUE = 128

DTYPE_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64",
                 "short": "int16", "cfloat": "complex64", "bool_": "bool"}
DTYPE_NAMES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "bool", "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
               "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4", "float6_e2m3fn",
               "float6_e3m2fn", "int2", "uint2", "uint1", "int1"} | set(DTYPE_ALIASES)


class DType(str):
    """A dtype name (T.float16, torch.bfloat16, "float16"): a str, with any attribute or call
    giving a stand-in (T.float16(0), dtype.as_torch())."""

    def __getattr__(self, a):
        if a.startswith("__"):
            raise AttributeError(a)
        if a in ("as_torch", "dtype"):
            return (lambda *x, **k: self) if a == "as_torch" else self
        if a == "bits":
            return 16
        return Any(str(self) + "." + a)

    def __call__(self, *a, **k):
        return Any(str(self) + "()")


def dtype_of(name):
    return DType(DTYPE_ALIASES.get(name, name))


class Any:
    """A permissive stand-in: attributes and calls give stand-ins, arithmetic gives itself, it is
    true, iterates as nothing, is 1 as an int. Called with a single function it returns that
    function (a decorator)."""

    def __init__(self, name="?"):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, a):
        if a.startswith("__") and a.endswith("__"):
            raise AttributeError(a)
        return Any(self._name + "." + a)

    def __setattr__(self, a, v):
        pass

    def __call__(self, *a, **k):
        if len(a) == 1 and not k and (inspect.isfunction(a[0]) or inspect.isclass(a[0]) or isinstance(a[0], Recorder)):
            return a[0]
        if a and isinstance(a[0], FakeTensor):  # an unknown library's op on x: shaped like x
            return LikeResult(a[0]._shape, a[0].dtype)
        return Any(self._name + "()")

    def __mro_entries__(self, bases):
        return (object,)

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return True

    def __int__(self):
        return 1

    def __index__(self):
        return 1

    def __float__(self):
        return 1.0

    def __len__(self):
        return 0

    def __format__(self, spec):
        return "0"

    def __str__(self):
        return self._name

    __repr__ = __str__

    def __getitem__(self, k):
        return Any(self._name + "[]")

    def __setitem__(self, k, v):
        pass

    def __contains__(self, k):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __hash__(self):
        return id(self)

    def __eq__(self, o):
        return o is self

    def _self(self, *a):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _self
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _self
    __neg__ = __pos__ = __abs__ = __invert__ = __and__ = __or__ = __xor__ = __rand__ = __ror__ = _self
    __lshift__ = __rshift__ = __lt__ = __le__ = __gt__ = __ge__ = _self


# ---- torch tensors as shapes --------------------------------------------------------------------

def _dims(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for d in args:
        if isinstance(d, bool) or not isinstance(d, int):
            try:
                d = int(d)
            except Exception:
                return None
        out.append(d)
    return tuple(out)


def _broadcast(a, b):
    if a is None or b is None:
        return a if b is None else b
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))


class FakeTensor:
    """A torch tensor stand-in that knows its shape (None: unknown) and dtype."""

    def __init__(self, shape, dtype="float32"):
        self._shape = tuple(shape) if shape is not None else None
        self.dtype = dtype

    @property
    def shape(self):
        return torch_Size(self._shape) if self._shape is not None else Any("shape")

    def size(self, i=None):
        if self._shape is None:
            return Any("size")
        return torch_Size(self._shape) if i is None else self._shape[i]

    def dim(self):
        return len(self._shape) if self._shape is not None else 1

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        return math.prod(self._shape) if self._shape is not None else DATA_VALUE

    def stride(self, i=None):
        if self._shape is None:
            return Any("stride")
        st, acc = [], 1
        for d in reversed(self._shape):
            st.append(acc)
            acc *= d
        st = tuple(reversed(st))
        return st if i is None else st[i]

    def item(self):
        return 0.5 if "float" in str(self.dtype) else DATA_VALUE

    def tolist(self):
        if self._shape is not None and len(self._shape) == 1:
            return [DATA_VALUE] * self._shape[0]
        return []

    def __int__(self):
        return DATA_VALUE

    def __index__(self):
        return DATA_VALUE

    def __float__(self):
        return 0.5

    def __bool__(self):
        return True

    def __len__(self):
        return self._shape[0] if self._shape else 0

    def __iter__(self):
        n = self._shape[0] if self._shape else 0
        return iter([FakeTensor(self._shape[1:], self.dtype) for _ in range(min(n, 4096))])

    def __format__(self, spec):
        return "0"

    def __hash__(self):
        return id(self)

    def _same(self, *a, **k):
        dt = k.get("dtype") or next((x for x in a if isinstance(x, DType)), None)
        return FakeTensor(self._shape, dt or self.dtype)

    cuda = cpu = contiguous = clone = detach = requires_grad_ = _same
    half = lambda self, *a, **k: FakeTensor(self._shape, DType("float16"))  # noqa: E731
    float = lambda self, *a, **k: FakeTensor(self._shape, DType("float32"))  # noqa: E731
    bfloat16 = lambda self, *a, **k: FakeTensor(self._shape, DType("bfloat16"))  # noqa: E731
    int = lambda self, *a, **k: FakeTensor(self._shape, DType("int32"))  # noqa: E731
    long = lambda self, *a, **k: FakeTensor(self._shape, DType("int64"))  # noqa: E731
    bool = lambda self, *a, **k: FakeTensor(self._shape, DType("bool"))  # noqa: E731

    def to(self, *a, **k):
        return self._same(*a, **k)

    def type(self, *a, **k):
        return self._same(*a, **k)

    def view(self, *a):
        if len(a) == 1 and isinstance(a[0], DType):
            return FakeTensor(self._shape, a[0])
        return self.reshape(*a)

    def reshape(self, *a):
        d = _dims(a)
        if d is None:
            return FakeTensor(None, self.dtype)
        if -1 in d and self._shape is not None:
            known = math.prod(x for x in d if x != -1) or 1
            d = tuple(self.numel() // known if x == -1 else x for x in d)
        return FakeTensor(d, self.dtype)

    def flatten(self, start=0, end=-1):
        if self._shape is None:
            return FakeTensor(None, self.dtype)
        s = list(self._shape)
        end = end % len(s) if s else 0
        return FakeTensor(s[:start] + [math.prod(s[start:end + 1])] + s[end + 1:], self.dtype)

    def expand(self, *a):
        d = _dims(a)
        if d is None or self._shape is None:
            return FakeTensor(d, self.dtype)
        return FakeTensor(tuple(s if x == -1 else x for x, s in zip(d, (1,) * (len(d) - len(self._shape)) + self._shape)), self.dtype)

    def repeat(self, *a):
        d = _dims(a)
        if d is None or self._shape is None:
            return FakeTensor(None, self.dtype)
        s = (1,) * (len(d) - len(self._shape)) + self._shape
        return FakeTensor(tuple(x * y for x, y in zip(s, d)), self.dtype)

    def transpose(self, a, b):
        if self._shape is None:
            return self
        s = list(self._shape)
        s[a], s[b] = s[b], s[a]
        return FakeTensor(s, self.dtype)

    def t(self):
        return self.transpose(0, 1) if self._shape and len(self._shape) == 2 else self

    @property
    def T(self):
        return FakeTensor(tuple(reversed(self._shape)) if self._shape else None, self.dtype)

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def permute(self, *a):
        d = _dims(a)
        if d is None or self._shape is None:
            return FakeTensor(None, self.dtype)
        return FakeTensor(tuple(self._shape[i] for i in d), self.dtype)

    def unsqueeze(self, i):
        if self._shape is None:
            return self
        s = list(self._shape)
        s.insert(i if i >= 0 else len(s) + 1 + i, 1)
        return FakeTensor(s, self.dtype)

    def squeeze(self, i=None):
        if self._shape is None:
            return self
        s = list(self._shape)
        if i is None:
            s = [x for x in s if x != 1]
        elif s and s[i] == 1:
            del s[i]
        return FakeTensor(s, self.dtype)

    def _reduce(self, dim=None, keepdim=False, **k):
        if self._shape is None or dim is None:
            return FakeTensor(() if dim is None else None, self.dtype)
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [d % len(self._shape) for d in dims]
        s = [1 if i in dims else x for i, x in enumerate(self._shape) if keepdim or i not in dims]
        return FakeTensor(s, self.dtype)

    sum = mean = amax = amin = prod = norm = std = var = logsumexp = argmax = argmin = _reduce

    def max(self, dim=None, keepdim=False):
        r = self._reduce(dim, keepdim)
        return r if dim is None else (r, r)

    min = max

    def __getitem__(self, idx):
        if self._shape is None:
            return FakeTensor(None, self.dtype)
        if not isinstance(idx, tuple):
            idx = (idx,)
        s, out, i = list(self._shape), [], 0
        if any(x is Ellipsis for x in idx):  # by identity: a tensor index's == is elementwise
            k = [x is Ellipsis for x in idx].index(True)
            idx = idx[:k] + (slice(None),) * (len(s) - (len(idx) - 1 - sum(x is None for x in idx))) + idx[k + 1:]
        for x in idx:
            if x is None:
                out.append(1)
            elif isinstance(x, slice):
                if i < len(s):
                    out.append(len(range(*x.indices(s[i]))))
                i += 1
            elif isinstance(x, FakeTensor) and x._shape is not None and len(x._shape) == 1 and \
                    str(x.dtype) != "bool" and len(idx) == 1:
                out.extend(x._shape)  # t[index_tensor]: one row per index
                i += 1
            elif isinstance(x, int) or isinstance(x, Any):
                i += 1
            else:
                return FakeTensor(None, self.dtype)
        return FakeTensor(out + s[i:], self.dtype)

    def sort(self, *a, **k):  # (values, indices)
        return (FakeTensor(self._shape, self.dtype), FakeTensor(self._shape, DType("int64")))

    def __setitem__(self, k, v):
        pass

    def _binop(self, o, *a):
        return FakeTensor(_broadcast(self._shape, o._shape if isinstance(o, FakeTensor) else ()), self.dtype)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _binop
    __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = __rpow__ = __and__ = __or__ = __xor__ = _binop
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _binop
    __iadd__ = __isub__ = __imul__ = __itruediv__ = _binop

    def __neg__(self):
        return self

    __pos__ = __abs__ = __invert__ = __neg__

    def __matmul__(self, o):
        if not isinstance(o, FakeTensor) or self._shape is None or o._shape is None or len(o._shape) < 2:
            return FakeTensor(None, self.dtype)
        return FakeTensor(_broadcast(self._shape[:-2], o._shape[:-2]) + (self._shape[-2], o._shape[-1]), self.dtype)

    def __getattr__(self, a):
        if a.startswith("__"):
            raise AttributeError(a)
        # an elementwise method (exp, sigmoid, softmax, masked_fill, ...) keeps the shape
        return lambda *x, **k: FakeTensor(self._shape, self.dtype)


class LikeResult(FakeTensor):
    """What an unknown library function returns for a tensor argument: a tensor shaped like it,
    or (unpacked) that tensor first and unknowns after."""


class torch_Size(tuple):
    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return torch_Size(r) if isinstance(i, slice) else r

    def numel(self):
        return math.prod(self)


def _ctor(kind):
    def make(*a, **k):
        dt = dtype_of(str(k["dtype"])) if isinstance(k.get("dtype"), str) else DType("float32")
        if kind == "like":
            t = a[0] if a else None
            return FakeTensor(t._shape if isinstance(t, FakeTensor) else None, k.get("dtype") or getattr(t, "dtype", dt))
        if kind == "full":
            return FakeTensor(_dims([a[0]]) if a else None, dt)
        if kind == "randint":
            size = k.get("size", a[2] if len(a) > 2 else a[1] if len(a) == 2 and isinstance(a[1], (tuple, list)) else None)
            return FakeTensor(_dims([size]) if size is not None else None, k.get("dtype") or DType("int64"))
        if kind == "arange":
            nums = [x for x in a if isinstance(x, (int, float))]
            if len(nums) == 1:
                n = int(nums[0])
            elif len(nums) >= 2:
                n = len(range(int(nums[0]), int(nums[1]), int(nums[2]) if len(nums) > 2 else 1))
            else:
                n = None
            return FakeTensor((n,) if n is not None else None, k.get("dtype") or DType("int64"))
        if kind == "tensor":
            v = a[0] if a else None
            shp = []
            while isinstance(v, (list, tuple)):
                shp.append(len(v))
                v = v[0] if v else None
            return FakeTensor(shp, dt)
        if kind == "linspace":
            return FakeTensor((int(a[2]) if len(a) > 2 else int(k.get("steps", 100)),), dt)
        if kind == "eye":
            n = int(a[0])
            return FakeTensor((n, int(a[1]) if len(a) > 1 else n), dt)
        return FakeTensor(_dims(a), dt)
    return make


def _cat(ts, dim=0, **k):
    ts = [t for t in ts if isinstance(t, FakeTensor)]
    if not ts or any(t._shape is None for t in ts):
        return FakeTensor(None)
    s = list(ts[0]._shape)
    s[dim] = sum(t._shape[dim] for t in ts)
    return FakeTensor(s, ts[0].dtype)


def _stack(ts, dim=0, **k):
    ts = [t for t in ts if isinstance(t, FakeTensor)]
    if not ts or ts[0]._shape is None:
        return FakeTensor(None)
    s = list(ts[0]._shape)
    s.insert(dim, len(ts))
    return FakeTensor(s, ts[0].dtype)


class FakeModule(types.ModuleType):
    """A module whose missing attributes are stand-ins (dtype names are DTypes)."""

    def __init__(self, name, special=None):
        super().__init__(name)
        self.__path__ = []
        self._special = special or {}
        self.__all__ = [k for k in self._special if not k.startswith("_")]  # `from tilelang.autotuner import *`

    def __getattr__(self, a):
        if a == "__version__":
            return "2.5.0"
        if a.startswith("__") and a.endswith("__"):
            raise AttributeError(a)
        if a in self._special:
            return self._special[a]
        if a in DTYPE_NAMES:
            return dtype_of(a)
        if self.__name__ == "tilelang" and a in TILELANG_SUBMODULES:
            import importlib
            return importlib.import_module("tilelang." + a)
        return Any(self.__name__ + "." + a)


TILELANG_SUBMODULES = {"language", "testing", "profiler", "autotuner", "carver", "utils", "tools", "transform",
                       "contrib", "intrinsics", "layout", "math", "cuda", "engine", "env", "quantize", "tileop"}


class Module:
    """torch.nn.Module: calling runs forward; device and dtype moves are no-ops."""

    def __call__(self, *a, **k):
        return self.forward(*a, **k)

    def _me(self, *a, **k):
        return self

    to = cuda = half = float = bfloat16 = eval = train = requires_grad_ = _me

    def register_buffer(self, name, t, *a, **k):
        setattr(self, name, t)

    def parameters(self, *a, **k):
        return iter(())

    def __getattr__(self, a):
        if a.startswith("__"):
            raise AttributeError(a)
        return Any("module." + a)


def _first_tensor_shape(*a, **k):
    t = next((x for x in a if isinstance(x, FakeTensor)), None)
    return FakeTensor(t._shape if t is not None else None, t.dtype if t is not None else "float32")


TORCH_SUBMODULES = {"cuda", "nn", "backends", "testing", "distributed", "autograd", "utils", "library", "profiler",
                    "compiler", "fx", "jit", "ops", "linalg", "fft", "special", "sparse", "version", "random",
                    "amp", "cpu", "multiprocessing", "no_grad", "inference_mode", "compile", "set_grad_enabled",
                    "enable_grad", "device", "dtype", "Generator", "get_default_dtype", "set_default_dtype",
                    "set_printoptions", "use_deterministic_algorithms", "empty_cache", "set_default_device"}


class _Props:
    """torch.cuda.get_device_properties(): an H100-class device (sm_90, 132 SMs)."""
    name = "NVIDIA H100 80GB HBM3"
    major, minor = 9, 0
    multi_processor_count = 132
    total_memory = 80 * 2**30
    shared_memory_per_block_optin = 227 * 1024
    L2_cache_size = 50 * 2**20

    def __getattr__(self, a):
        return Any("props." + a)


CUDA = {"is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
        "get_device_capability": lambda *a: (9, 0), "get_device_name": lambda *a: _Props.name,
        "get_device_properties": lambda *a: _Props(), "synchronize": lambda *a: None,
        "manual_seed": lambda *a: None, "empty_cache": lambda *a: None}


class _Ctx:
    def save_for_backward(self, *ts):
        self.saved_tensors = ts

    def __getattr__(self, a):
        if a.startswith("__"):
            raise AttributeError(a)
        return Any("ctx." + a)


class Function:
    """torch.autograd.Function: apply runs forward, then backward at once (the files that define
    one call .backward on the result; the kernels of the backward pass are reached that way)."""

    @classmethod
    def apply(cls, *a, **k):
        ctx = _Ctx()
        out = cls.forward(ctx, *a, **k)
        outs = out if isinstance(out, tuple) else (out,)
        first = next((x for x in a if isinstance(x, FakeTensor)), None)
        grads = [FakeTensor(o._shape if isinstance(o, FakeTensor) else first._shape if first is not None else None)
                 for o in outs]
        try:
            cls.backward(ctx, *grads)
        except Exception:
            pass
        return out

    @staticmethod
    def backward(ctx, *g):
        return None


def _pad(t, pad, *a, **k):
    if not isinstance(t, FakeTensor) or t._shape is None:
        return FakeTensor(None)
    s = list(t._shape)
    for i in range(len(pad) // 2):
        s[-1 - i] += int(pad[2 * i]) + int(pad[2 * i + 1])
    return FakeTensor(s, t.dtype)


def _nonzero(t, as_tuple=False):
    """Every element nonzero (the data of a mask is unknown: a full mask)."""
    if not isinstance(t, FakeTensor) or t._shape is None:
        return FakeTensor(None)
    return FakeTensor((t.numel(), len(t._shape)), DType("int64"))


class TorchModule(FakeModule):
    def __getattr__(self, a):
        if a.startswith("__") and a.endswith("__"):
            raise AttributeError(a)
        if a in self._special:
            return self._special[a]
        if a in DTYPE_NAMES:
            return dtype_of(a)
        if self.__name__ == "torch" and a == "torch":
            return self
        if self.__name__ == "torch.nn.functional" and a == "pad":
            return _pad
        if self.__name__ == "torch" and a == "gather":
            def gather(input, dim, index, **k):  # torch.gather(input=.., dim=.., index=..) too
                return FakeTensor(index._shape if isinstance(index, FakeTensor) else None,
                                  getattr(input, "dtype", "float32"))
            return gather
        if self.__name__ == "torch" and a == "nonzero":
            return _nonzero
        if self.__name__ == "torch" and a in ("cuda", "nn", "backends", "testing", "autograd", "distributed", "utils",
                                              "linalg", "fft", "special", "profiler", "library"):
            import importlib
            return importlib.import_module("torch." + a)
        if self.__name__ == "torch.nn" and a == "functional":
            import importlib
            return importlib.import_module("torch.nn.functional")
        if self.__name__ in ("torch", "torch.nn.functional") and a[:1].islower() and a not in TORCH_SUBMODULES:
            return _first_tensor_shape  # torch.exp(x), F.softmax(x), ...: the shape of x
        return Any(self.__name__ + "." + a)


# ---- kernels ------------------------------------------------------------------------------------

RECORDS = {}
SKIPPED = []  # the statements that failed: TILEC_TRACE_DEBUG=1 prints them on stderr
KERNELS = set()


def _jsonable(v):
    if isinstance(v, FakeTensor):
        return None
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return v
    if isinstance(v, DType):
        return str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)) and v and len(v) <= 64:  # a list-valued parameter (batch_sizes_list)
        items = [_jsonable(x) for x in v]
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
            return items
    return None


LATER = {}  # kernel name: the arguments of its later calls that differ from the first's
MAX_LATER_CALLS = 4
EXPLORING = False  # set while _other_choices calls main() with a bool flipped


class Recorder:
    """Stands for a kernel (factory or @tilelang.jit function): its first call's arguments are
    noted, and those of later calls that differ (LATER)."""

    def __init__(self, name, fn):
        self._name, self._fn = name, fn
        try:
            self._sig = inspect.signature(fn)
        except Exception:
            self._sig = None

    def _record(self, a, k):
        if self._sig is None or len(LATER.get(self._name, [])) >= MAX_LATER_CALLS:
            return
        if EXPLORING and self._name in RECORDS:  # only the file's own run gives later calls
            return
        # `kernel.compile(M=4096, ...)` binds an eager kernel's T.const sizes by keyword: names the
        # signature lacks are sizes too
        has_var_kw = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in self._sig.parameters.values())
        extra = {} if has_var_kw else {n: v for n, v in k.items() if n not in self._sig.parameters}
        try:
            b = self._sig.bind_partial(*a, **{n: v for n, v in k.items() if n not in extra})
        except TypeError:
            return
        args, shapes = {}, {}
        for n, v in extra.items():
            j = _jsonable(v)
            if j is not None:
                args[n] = j
        for p, v in b.arguments.items():
            kind = self._sig.parameters[p].kind
            if kind == inspect.Parameter.VAR_KEYWORD:
                for kk, vv in v.items():
                    j = _jsonable(vv)
                    if j is not None:
                        args[kk] = j
                continue
            if isinstance(v, FakeTensor) and v._shape is not None:
                shapes[p] = list(v._shape)
            j = _jsonable(v)
            if j is not None:
                args[p] = j
        rec = {"args": args, "shapes": shapes}
        if self._name not in RECORDS:
            RECORDS[self._name] = rec
        elif rec != RECORDS[self._name] and rec not in LATER.get(self._name, []):
            # the file's run calls the kernel again with other values (`main(.., fast_dequant=False)`):
            # compat.py reads with these when the first call's values meet a construct tilec lacks
            LATER.setdefault(self._name, []).append(rec)

    def __call__(self, *a, **k):
        self._record(a, k)
        if any(isinstance(x, FakeTensor) for x in list(a) + list(k.values())):
            return FakeTensor(None)  # an eager kernel ran: its result
        return KernelStub(self._name)

    def __getattr__(self, a):
        if a.startswith("__"):
            raise AttributeError(a)
        if a in ("compile", "get_tir", "get_kernel", "jit"):
            return lambda *x, **k: self(*x, **k)
        return Any(self._name + "." + a)

    def __get__(self, obj, cls=None):
        return self


class KernelStub(Any):
    """A compiled kernel: calling it gives a tensor of unknown shape."""

    def __call__(self, *a, **k):
        return FakeTensor(None)


def unpack(v, n):
    """`a, b = v` where v is a stand-in: n stand-ins (tensors of unknown shape)."""
    if isinstance(v, Any):
        return tuple(Any(str(v)) for _ in range(n))
    if isinstance(v, LikeResult):
        return (FakeTensor(v._shape, v.dtype),) + tuple(FakeTensor(None) for _ in range(n - 1))
    if isinstance(v, FakeTensor) and v._shape is None:
        return tuple(FakeTensor(None) for _ in range(n))
    return v


def _cdiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return Any("cdiv()")


def _jit(*a, **k):
    """tilelang.jit / tilelang.autotune: a decorator with or without arguments."""
    if len(a) == 1 and not k and callable(a[0]):
        return a[0]
    return lambda fn: fn


# ---- imports ------------------------------------------------------------------------------------

FAKE_ROOTS = {"torch", "tilelang", "tvm", "triton", "einops", "fla", "flash_attn", "transformers", "bitblas",
              "pytest", "cuda", "tqdm", "deep_gemm", "flashinfer", "apex", "xformers", "vllm", "sgl_kernel",
              "scipy", "matplotlib", "pandas", "safetensors", "accelerate", "cupy", "packaging", "ml_dtypes",
              "nvtx", "tabulate", "FLA_KDA"}


def make_module(name):
    root = name.split(".")[0]
    if root == "torch":
        sp = {"Size": torch_Size, "Tensor": FakeTensor, "cat": _cat, "concat": _cat, "stack": _stack,
              "manual_seed": lambda *a, **k: None, "float8_e4m3fn": DType("float8_e4m3fn")}
        for n in ("randn", "rand", "empty", "zeros", "ones", "full", "randint", "arange", "tensor", "linspace",
                  "eye", "randperm"):
            sp[n] = _ctor(n if n in ("full", "randint", "arange", "tensor", "linspace", "eye") else
                          "arange" if n == "randperm" else "shape")
        for n in ("randn_like", "rand_like", "empty_like", "zeros_like", "ones_like", "full_like", "randint_like"):
            sp[n] = _ctor("like")
        sp["allclose"] = lambda *a, **k: True
        sp["equal"] = lambda *a, **k: True
        sp["matmul"] = lambda a, b, **k: a @ b if isinstance(a, FakeTensor) else Any("matmul")
        sp["bmm"] = sp["mm"] = sp["matmul"]
        sp["is_tensor"] = lambda x: isinstance(x, FakeTensor)
        if name == "torch.cuda":
            sp = dict(CUDA)
        elif name == "torch.autograd":
            sp = {"Function": Function}
        elif name == "torch.nn":
            sp = {"Module": Module, "Parameter": lambda t, *a, **k: t, "ModuleList": list,
                  "Linear": lambda i, o, *a, **k: (lambda x: FakeTensor(x._shape[:-1] + (o,), x.dtype)
                                                   if isinstance(x, FakeTensor) and x._shape else FakeTensor(None))}
        elif name != "torch":
            sp = {}
        return TorchModule(name, sp)
    if root == "einops":
        return FakeModule(name, {"rearrange": rearrange, "repeat": rearrange})
    if root == "tilelang":
        return FakeModule(name, {"jit": _jit, "autotune": _jit, "lazy_jit": _jit, "dtype": lambda x, *a: DType(str(x)),
                                 "cdiv": _cdiv, "ceildiv": _cdiv, "next_power_of_2": lambda x: 1 << (int(x) - 1).bit_length(),
                                 "determine_fp8_type": lambda kind="e4m3": DType("float8_e4m3fn" if kind == "e4m3"
                                                                                 else "float8_e5m2")})
    return FakeModule(name)


def _einops_groups(side):
    return [g.split() if g.startswith("(") or " " in g else [g]
            for g in (x.strip("()") if x.startswith("(") else x for x in _tokens(side))]


def _tokens(side):
    out, i = [], 0
    while i < len(side):
        if side[i] == "(":
            j = side.index(")", i)
            out.append(side[i:j + 1])
            i = j + 1
        elif side[i].isspace():
            i += 1
        else:
            j = i
            while j < len(side) and not side[j].isspace() and side[j] != "(":
                j += 1
            out.append(side[i:j])
            i = j
    return out


def rearrange(t, pattern, **sizes):
    """einops.rearrange/repeat on shapes: "b s h d -> (b s) h d", sizes of new axes as keywords."""
    if isinstance(t, (list, tuple)):
        t = _stack(list(t))
    if not isinstance(t, FakeTensor) or t._shape is None:
        return FakeTensor(None)
    lhs, rhs = pattern.split("->")
    known = {k: int(v) for k, v in sizes.items()}
    lt = _tokens(lhs)
    shape = list(t._shape)
    if "..." in lt:  # "..." stands for the dims the other tokens leave
        k = lt.index("...")
        n = len(shape) - (len(lt) - 1)
        if n < 0:
            return FakeTensor(None, t.dtype)
        known["..."] = math.prod(shape[k:k + n])
        ell = shape[k:k + n]
        shape = shape[:k] + [known["..."]] + shape[k + n:]
    else:
        ell = []
    if len(lt) != len(shape):
        return FakeTensor(None, t.dtype)
    for tok, d in zip(lt, shape):
        names = tok.strip("()").split()
        unknown = [n for n in names if n not in known and not n.isdigit()]
        prod = math.prod(known.get(n, int(n) if n.isdigit() else 1) for n in names if n not in unknown)
        if len(unknown) == 1:
            known[unknown[0]] = d // max(prod, 1)
    out = []
    for tok in _tokens(rhs):
        if tok == "...":
            out += ell
            continue
        names = tok.strip("()").split()
        out.append(math.prod(known.get(n, int(n) if n.isdigit() else 1) for n in names))
    return FakeTensor(out, t.dtype)


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, fallback):
        self.fallback = fallback

    def find_spec(self, name, path=None, target=None):
        if not self.fallback and name.split(".")[0] not in FAKE_ROOTS:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return make_module(spec.name)

    def exec_module(self, module):
        pass


# ---- each statement under its own try ----------------------------------------------------------

class Guard(ast.NodeTransformer):
    """Wrap every simple statement (not def/class/control flow) in try/except Exception: pass."""

    def _wrap(self, body):
        out = []
        for s in body:
            s = self.visit(s)
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Return, ast.Break,
                              ast.Continue, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom)) and \
                    not isinstance(s, (ast.Import, ast.ImportFrom)):
                out.append(s)
                continue
            note = ast.Expr(ast.Call(ast.Name("__tilec_skip__", ast.Load()), [ast.Name("__tilec_e", ast.Load()),
                                                                             ast.Constant(getattr(s, "lineno", 0))], []))
            handler = ast.ExceptHandler(type=ast.Name("Exception", ast.Load()), name="__tilec_e", body=[note])
            out.append(ast.Try(body=[s], handlers=[handler], orelse=[], finalbody=[]))
        return out

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            v = getattr(node, field, None)
            if isinstance(v, list) and v and isinstance(v[0], ast.stmt):
                setattr(node, field, self._wrap(v))
        if isinstance(node, ast.Try):
            for h in node.handlers:
                h.body = self._wrap(h.body)
        return node

    def visit_FunctionDef(self, node):
        # loops run at most a few times: a benchmark loop need not spin
        return self.generic_visit(node)

    def visit_Assign(self, node):
        t = node.targets[0]
        if len(node.targets) == 1 and isinstance(t, (ast.Tuple, ast.List)) and \
                not any(isinstance(e, ast.Starred) for e in t.elts):
            node.value = ast.Call(ast.Name("__tilec_unpack__", ast.Load()), [node.value, ast.Constant(len(t.elts))], [])
        return node

    def visit_Assert(self, node):
        return ast.Pass()


class LocalFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The example's own helper modules (varlen_utils, ...): run with every statement guarded."""

    def __init__(self, root):
        self.root = root

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not spec.origin or not spec.origin.endswith(".py") or \
                not os.path.abspath(spec.origin).startswith(self.root):
            return None
        spec.loader = self
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        src = open(module.__spec__.origin, encoding="utf-8", errors="replace").read()
        module.__dict__.update(GUARD_GLOBALS)
        exec(guarded(ast.parse(src), ()), module.__dict__)


GUARD_GLOBALS = {"__tilec_unpack__": unpack,
                 "__tilec_skip__": lambda e, line: SKIPPED.append(f"{line}: {type(e).__name__}: {e}")}


def guarded(tree, kernels, path="<file>"):
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and n.name in kernels:
            n.decorator_list.insert(0, ast.Call(ast.Name("__tilec_record__", ast.Load()), [ast.Constant(n.name)], []))
    tree = Guard().visit(tree)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


def _safe_open(file, mode="r", *a, **k):
    """open() for the traced file: reading works, writing goes nowhere (the run leaves no files)."""
    if any(c in mode for c in "wax+"):
        return io.open(os.devnull, "wb" if "b" in mode else "w")
    return io.open(file, mode, *a, **k)


def _sandbox():
    """The traced file runs no programs and changes no files."""
    import builtins
    import shutil
    noop = lambda *a, **k: None  # noqa: E731
    os.system = lambda *a, **k: 0
    for name in ("remove", "unlink", "rmdir", "removedirs", "makedirs", "mkdir", "rename", "replace", "chmod"):
        setattr(os, name, noop)
    shutil.rmtree = shutil.copy = shutil.copyfile = shutil.move = noop
    builtins.open = _safe_open
    for name in ("subprocess", "multiprocessing"):
        sys.modules[name] = FakeModule(name)


def _other_choices(g, kernels):
    """Kernels the default run does not call, called by main() with one of its bool choices flipped
    (`main(use_atomic=False)`: the other branch a user runs the file with); the first call of each
    kernel is kept, so the kernels the default run called keep its sizes."""
    fn = g.get("main")
    if all(k in RECORDS for k in kernels) or not inspect.isfunction(fn):
        return
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return
    global EXPLORING
    EXPLORING = True
    out = sys.stdout
    for p in params:
        if not isinstance(p.default, bool) or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        sys.stdout = io.StringIO()
        try:
            fn(**{p.name: not p.default})
        except BaseException:
            pass
        finally:
            sys.stdout = out
        if all(k in RECORDS for k in kernels):
            return


def main():
    path, kernels = sys.argv[1], sys.argv[2:]
    _sandbox()
    KERNELS.update(kernels)
    sys.meta_path.insert(0, Finder(False))
    sys.meta_path.append(Finder(True))
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(path)), ".."))
    sys.meta_path.insert(1, LocalFinder(root))
    src = open(path, encoding="utf-8", errors="replace").read()
    try:
        code = guarded(ast.parse(src), KERNELS, path)
    except Exception:
        print("{}")
        return
    g = {"__name__": "__main__", "__file__": os.path.abspath(path), "__builtins__": __builtins__,
         "__tilec_record__": lambda name: (lambda fn: Recorder(name, fn))}
    g.update(GUARD_GLOBALS)
    sys.argv = [path]
    out = sys.stdout
    sys.stdout = io.StringIO()
    sys.stderr = io.StringIO()
    try:
        exec(code, g)
    except BaseException:
        pass
    finally:
        sys.stdout = out
    _other_choices(g, kernels)
    # the module's globals after the run (names the __main__ block binds that kernels read)
    glob = {}
    for k, v in list(g.items()):
        if not k.startswith("__") and type(v) in (int, float, bool, DType):
            glob[k] = _jsonable(v)
        elif not k.startswith("__") and (v is None or (hasattr(v, "shape") and not isinstance(v, type))):
            glob[k] = None if v is None else "<tensor>"  # only its presence: compat.py's only_none_tests
    RECORDS["__globals__"] = glob
    RECORDS["__later__"] = LATER
    print(json.dumps(RECORDS))
    if os.environ.get("TILEC_TRACE_DEBUG"):
        sys.stderr = sys.__stderr__
        for line in SKIPPED[:40]:
            print(line[:200], file=sys.stderr)


if __name__ == "__main__":
    main()
