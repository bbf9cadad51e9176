"""Contexts, programs, kernels, device tensors and the DLPack plumbing of the tilec package."""
import ctypes
import os
import threading
import time
import warnings

import numpy as np

from . import _dtypes
from ._lib import (DLTensor, TILEC_COPY_DEVICE_TO_HOST, TILEC_COPY_HOST_TO_DEVICE, kDLBfloat, kDLBool, kDLCPU,
                   kDLCUDA, kDLFloat, kDLInt, kDLUInt, lib, take_string, tilec_backend_info, tilec_compare,
                   tilec_compile_options, tilec_define, tilec_error, tilec_param_info)
from .errors import TilecWarning, UsageError, VerifyError, from_c

_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _check(ok, err):
    if not ok:
        raise from_c(err)


# ---- the context ------------------------------------------------------------------------------
class Context:
    """One tilec_context (thread pool, kernel caches). Programs and kernels refer to it, never the
    other way round, so Python frees them before it (no reference cycles)."""

    def __init__(self):
        err = tilec_error()
        self._lib = lib()
        self.handle = self._lib.tilec_context_create(None, ctypes.byref(err))
        _check(self.handle, err)

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h and getattr(self, "_lib", None):
            self._lib.tilec_context_destroy(h)

    def program(self, name, text):
        key = (id(self), name, text)
        with _cache_lock:
            prog = _programs.get(key)
            if prog is None:
                prog = Program(self, name, text)
                _programs[key] = prog
            return prog


# Programs and kernels read so far, by their text and bindings (a module-level cache: it holds
# them, they hold the context).
_programs = {}
_kernels = {}
_cache_lock = threading.Lock()

_context = None
_context_lock = threading.Lock()


def context():
    global _context
    if _context is None:
        with _context_lock:
            if _context is None:
                _context = Context()
    return _context


def _warn_from(ctx):
    """The context's waiting warning, if any, as a TilecWarning."""
    p = lib().tilec_context_take_warning(ctx.handle)
    if p:
        warnings.warn(take_string(p).rstrip("\n"), TilecWarning, stacklevel=4)


class Program:
    def __init__(self, ctx, name, text):
        self.ctx, self.name, self.text = ctx, name, text
        self._lib = lib()
        err = tilec_error()
        data = text.encode()
        self.handle = self._lib.tilec_program_from_string(ctx.handle, name.encode(), data, len(data),
                                                          ctypes.byref(err))
        _check(self.handle, err)

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h and getattr(self, "_lib", None):
            self._lib.tilec_program_destroy(h)

    def kernels(self):
        n = lib().tilec_program_num_kernels(self.handle)
        return [lib().tilec_program_kernel_name(self.handle, i).decode() for i in range(n)]

    def _options(self, kernel, defines, target, backend, keep):
        arr = (tilec_define * max(1, len(defines)))()
        for i, (k, v) in enumerate(defines):
            arr[i].name, arr[i].value = k.encode(), v.encode()
        keep.append(arr)
        return tilec_compile_options(kernel.encode() if kernel else None, arr, len(defines),
                                     (target or "auto").encode(), (backend or "auto").encode(), 0)

    def autotune_configs(self, kernel=None):
        """The configurations of the kernel's @autotune(configs=[...]): a list of
        [(name, value text), ...], empty without @autotune."""
        err = tilec_error()
        p = lib().tilec_program_autotune_configs(self.handle, kernel.encode() if kernel else None, ctypes.byref(err))
        _check(p, err)
        lines = take_string(p).splitlines()
        return [[tuple(w.split("=", 1)) for w in line.split(" ")] for line in lines if line]

    def compile(self, kernel=None, defines=(), target="auto", backend=None, returns=None):
        defines = tuple(defines)
        # A kernel with @autotune whose tuned names are all unbound takes the first configuration,
        # as `tilec run` does before `tilec tune` has chosen one.
        if not getattr(self, "_configs_checked", {}).get(kernel):
            self._configs_checked = getattr(self, "_configs_checked", {})
            self._configs_checked[kernel] = self.autotune_configs(kernel) or [[]]
        first = self._configs_checked[kernel][0]
        bound = {k for k, _ in defines}
        if first and not bound.intersection(k for k, _ in first):
            defines = defines + tuple(first)
        key = (id(self), kernel, defines, target, backend, None if returns is None else tuple(returns))
        with _cache_lock:
            k = _kernels.get(key)
        if k is not None:
            return k
        keep = []
        opts = self._options(kernel, defines, target, backend, keep)
        err = tilec_error()
        h = lib().tilec_compile(self.handle, ctypes.byref(opts), ctypes.byref(err))
        _check(h, err)
        _warn_from(self.ctx)
        k = Kernel(self, h, kernel, defines, returns)
        with _cache_lock:
            _kernels[key] = k
        return k

    def source(self, kernel=None, defines=(), target="auto", backend=None, kernel_only=True):
        keep = []
        opts = self._options(kernel, tuple(defines), target, backend, keep)
        err = tilec_error()
        p = lib().tilec_program_source(self.handle, ctypes.byref(opts), int(kernel_only), ctypes.byref(err))
        _check(p, err)
        return take_string(p)

    def ir(self, kernel=None, defines=(), target=None, lowered=False):
        keep = []
        opts = self._options(kernel, tuple(defines), target, None, keep)
        if target is None:
            opts.target = None
        err = tilec_error()
        p = lib().tilec_program_ir(self.handle, ctypes.byref(opts), int(lowered), ctypes.byref(err))
        _check(p, err)
        return take_string(p)


# ---- backends and device memory ----------------------------------------------------------------
def backends():
    """Every execution backend tilec has, as the library's registry lists them: dicts with target,
    name, default, available, reason, device_type and memory (whether tilec can allocate there)."""
    ctx = context()
    out = []
    for i in range(lib().tilec_backend_count()):
        info = tilec_backend_info()
        if lib().tilec_backend_get(ctx.handle, i, ctypes.byref(info)) != 0:
            break
        out.append({"target": info.target.decode(), "name": info.name.decode(), "default": bool(info.is_default),
                    "available": bool(info.available), "reason": info.reason.decode(),
                    "device_type": info.device_type, "memory": bool(info.has_memory)})
    return out


def available_targets():
    """Targets whose default backend can run kernels here and hold tensors (cpu first)."""
    return [b["target"] for b in backends() if b["default"] and b["available"] and b["memory"]]


def _device_type_of(target, backend=None):
    """Where tensors of this target live: its default backend's device, or the named backend's
    (the emulators run on host memory)."""
    kind = target.split(",")[0]
    for b in backends():
        if b["target"] == kind and (b["name"] == backend if backend else b["default"]):
            return b["device_type"]
    raise UsageError(f"unknown target '{kind}'")


class Tensor:
    """A dense row-major tensor in memory tilec allocated on a target's device
    (tilec_device_alloc): host memory for cpu, device memory for cuda. Kernels take it like any
    DLPack tensor; `numpy()` copies it to the host."""

    def __init__(self, shape, dtype="float32", target="cpu", device=0):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = str(dtype)
        self.target = target.split(",")[0] if target != "auto" else "cpu"
        self.device = int(device)
        self.numel = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.nbytes = _dtypes.nbytes(self.dtype, self.numel)
        self.device_type = _device_type_of(self.target)
        self._ctx = context()
        self._lib = lib()
        err = tilec_error()
        ptr = lib().tilec_device_alloc(self._ctx.handle, self.target.encode(), self.device, self.nbytes,
                                       ctypes.byref(err))
        _check(ptr, err)
        self.ptr = ptr
        self._base = None  # a view's owner
        self._shape_arr = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)

    def reshape(self, *shape):
        """The same memory seen with another shape of as many elements (no copy)."""
        shape = tuple(int(s) for s in (shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                                          else shape))
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if numel != self.numel:
            raise UsageError(f"cannot view a tensor of {self.numel} elements as {shape}")
        v = object.__new__(Tensor)
        v.__dict__.update(self.__dict__)
        v.shape = shape
        v._shape_arr = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        v._base = self._base if self._base is not None else self
        return v

    def __del__(self):
        if getattr(self, "_base", None) is not None:
            return  # a view: its base frees the memory
        p, self.ptr = getattr(self, "ptr", None), None
        if p and getattr(self, "_lib", None):
            self._lib.tilec_device_free(self._ctx.handle, self.target.encode(), self.device, p)

    def __repr__(self):
        return f"tilec.Tensor(shape={self.shape}, dtype={self.dtype}, target={self.target}:{self.device})"

    def __dlpack_device__(self):
        return (self.device_type, self.device)

    def _dltensor(self):
        t = DLTensor()
        t.data = self.ptr
        t.device.device_type, t.device.device_id = self.device_type, self.device
        t.ndim = len(self.shape)
        code, bits = _dtypes.dl_of_numpy(_dtypes.numpy_dtype(self.dtype))
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = self._shape_arr
        t.strides = None
        t.byte_offset = 0
        return t

    def copy_from(self, array):
        """Copy a host array of the same number of bytes into this tensor."""
        a = np.ascontiguousarray(array, dtype=_dtypes.numpy_dtype(self.dtype))
        if a.nbytes != self.nbytes:
            raise UsageError(f"copy_from: {a.nbytes} bytes given for a tensor of {self.nbytes}")
        _copy(self.target, self.device, self.ptr, a.ctypes.data, self.nbytes, TILEC_COPY_HOST_TO_DEVICE)
        return self

    def numpy(self):
        """A host copy as a numpy array."""
        out = np.empty(self.shape, dtype=_dtypes.numpy_dtype(self.dtype))
        _copy(self.target, self.device, out.ctypes.data, self.ptr, self.nbytes, TILEC_COPY_DEVICE_TO_HOST)
        return out


def _copy(target, device, dst, src, n, direction):
    err = tilec_error()
    st = lib().tilec_device_copy(context().handle, target.encode(), device, dst, src, n, direction,
                                 ctypes.byref(err))
    _check(st == 0, err)


def empty(shape, dtype="float32", target="cpu", device=0):
    return Tensor(shape, dtype, target, device)


def zeros(shape, dtype="float32", target="cpu", device=0):
    t = Tensor(shape, dtype, target, device)
    return t.copy_from(np.zeros(t.shape, dtype=_dtypes.numpy_dtype(t.dtype)))


def tensor(array, target="cpu", device=0, dtype=None):
    """A Tensor on `target` holding a copy of a host array."""
    a = np.asarray(array)
    name = str(dtype) if dtype else ("bool" if a.dtype == np.bool_ else a.dtype.name)
    t = Tensor(a.shape, name, target, device)
    return t.copy_from(a)


# ---- tensors from the caller ---------------------------------------------------------------------
def _from_numpy_interface(a, keep):
    """A DLTensor over a numpy array's own memory (for arrays numpy will not export: read-only
    ones, ml_dtypes types)."""
    code, bits = _dtypes.dl_of_numpy(a.dtype)
    t = DLTensor()
    t.data = a.ctypes.data
    t.device.device_type, t.device.device_id = kDLCPU, 0
    t.ndim = a.ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    shape = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
    strides = (ctypes.c_int64 * max(1, a.ndim))(*[s // a.itemsize for s in a.strides])
    t.shape, t.strides, t.byte_offset = shape, strides, 0
    keep += [a, shape, strides]
    return t


def _dltensor_of(obj, keep):
    """A DLTensor describing obj's memory, without a copy. Whatever must stay alive for it goes
    into keep."""
    if isinstance(obj, Tensor):
        keep.append(obj)
        return obj._dltensor()
    if isinstance(obj, np.ndarray) and (not obj.flags.writeable or obj.dtype.kind not in "fiub"
                                        or obj.dtype.name == "bfloat16"):
        return _from_numpy_interface(obj, keep)
    if not hasattr(obj, "__dlpack__"):
        raise UsageError(f"expected a tensor (numpy, torch, CuPy or anything with __dlpack__), got "
                         f"{type(obj).__name__}")
    dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (kDLCPU, 0)
    try:
        # CUDA producers order their pending work before the legacy default stream (1), where
        # tilec launches; host producers take no stream.
        cap = obj.__dlpack__(stream=1) if dev[0] == kDLCUDA else obj.__dlpack__()
    except BufferError:
        if isinstance(obj, np.ndarray):
            return _from_numpy_interface(obj, keep)
        raise
    keep += [obj, cap]
    ptr = _PyCapsule_GetPointer(cap, b"dltensor")
    src = ctypes.cast(ptr, ctypes.POINTER(DLTensor)).contents  # DLManagedTensor starts with it
    t = DLTensor()
    ctypes.pointer(t)[0] = src  # a copy of the struct; shape/strides still point into the capsule
    if t.dtype.code == kDLBool:  # the C API takes bool as uint8 (tilec.h)
        t.dtype.code = kDLUInt
    return t


def _shape_of(obj):
    return tuple(int(s) for s in obj.shape)


class Param:
    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = info.dtype.decode()
        self.ndim = info.ndim
        self.shape = tuple(info.shape[d] for d in range(info.ndim))
        self.dims = tuple((info.dims[d].decode() if info.dims[d] else None) for d in range(info.ndim))
        self.is_output = bool(info.is_output)
        self.is_scalar = info.ndim == 0
        # a float output computed through a narrower float inside the kernel: its tolerance applies
        self.rounds_through = info.rounds_through.decode() if info.rounds_through else None
        # dimensions filled in the order threads take slots (T.atomic_add return_prev): compared as multisets
        self.unordered_dims = tuple(d for d in range(32) if (info.unordered_dims >> d) & 1)

    def __repr__(self):
        dims = ", ".join(d if s < 0 else str(s) for s, d in zip(self.shape, self.dims))
        return f"{self.name}: {self.dtype}[{dims}]{' output' if self.is_output else ''}"


def _framework(obj):
    if isinstance(obj, Tensor):
        return "tilec"
    mod = type(obj).__module__.split(".")[0]
    return mod if mod in ("torch", "cupy", "numpy") else "other"


# ---- the call plan ------------------------------------------------------------------------------
# A call of a compiled kernel does, per argument, what cannot be known in advance: read its data
# pointer, shape, strides, dtype and device, and write them into a DLTensor the plan keeps for that
# parameter (shape and strides only when they differ from the last call's). Everything else (the
# parameter order, out_idx, where each symbolic size comes from, the outputs' shapes per tuple of
# sizes, the ctypes structures) is made once. The library checks the DLTensors as for any launch,
# so a wrong argument gets the same UsageError as through DLPack. Arguments the plan does not read
# directly go through DLPack (Kernel._call_generic).
class _Slow(Exception):
    """An argument the plan does not read itself: the call goes through DLPack instead."""


_KIND_NUMPY, _KIND_TORCH, _KIND_TILEC, _KIND_SLOW = 1, 2, 3, 0
_kinds = {}  # type -> kind


def _kind_of_type(t):
    k = _kinds.get(t)
    if k is not None:
        return k
    k = _KIND_SLOW
    if t is np.ndarray:
        k = _KIND_NUMPY
    elif t is Tensor:
        k = _KIND_TILEC
    elif t.__module__.split(".")[0] == "torch":
        import torch

        # exactly torch's tensor classes: a subclass may give data_ptr() another meaning
        if t is torch.Tensor or t is torch.nn.Parameter:
            k = _KIND_TORCH
    _kinds[t] = k
    return k


# A numpy array's data pointer: numpy's PyArrayObject starts with PyObject_HEAD and then `char
# *data` (numpy/ndarraytypes.h, the layout PyArray_DATA reads), so it is read at
# object.__basicsize__ past the object's address. `a.ctypes.data` and `__array_interface__` cost
# 2 us each; this read costs a tenth of that. Checked once on a probe array; where it does not
# hold (another Python implementation), `a.ctypes.data` is used.
_NP_DATA_AT = object.__basicsize__
_NP_DATA_WORD = _NP_DATA_AT // 8
# the process's memory as 64-bit words: indexing it reads one (no ctypes object is made per read)
_peek = (ctypes.c_uint64 * (1 << 59)).from_address(0) if ctypes.sizeof(ctypes.c_void_p) == 8 else None


def _np_raw_ok():
    try:
        a = np.arange(12, dtype=np.float32).reshape(3, 4)[1:, 1:]
        return (_peek is not None and _NP_DATA_AT % 8 == 0 and id(a) % 8 == 0
                and _peek[(id(a) >> 3) + _NP_DATA_WORD] == a.ctypes.data
                and ctypes.c_int.from_address(id(a) + _NP_DATA_AT + 8).value == 2)
    except Exception:  # noqa: BLE001 (any failure: use the slow, documented way)
        return False


_NP_RAW = _np_raw_ok()
_np_dl = {}     # numpy dtype -> (code, bits), or None when it has no DLPack form here
_torch_dl = {}  # torch dtype -> (code, bits)
_tilec_dl = {}  # tilec dtype name -> (code, bits)
_cuda_stream = None  # torch's current raw CUDA stream of a device index


def _np_dl_of(dt):
    try:
        cb = _dtypes.dl_of_numpy(dt)
    except TypeError:
        cb = None
    _np_dl[dt] = cb
    return cb


def _torch_tables():
    import torch

    table = {torch.float16: (kDLFloat, 16), torch.float32: (kDLFloat, 32), torch.float64: (kDLFloat, 64),
             torch.bfloat16: (kDLBfloat, 16), torch.int8: (kDLInt, 8), torch.int16: (kDLInt, 16),
             torch.int32: (kDLInt, 32), torch.int64: (kDLInt, 64), torch.uint8: (kDLUInt, 8),
             torch.bool: (kDLUInt, 8)}  # bool travels as uint8 (tilec.h)
    _torch_dl.update(table)


def _current_stream_fn():
    """torch's current stream of a CUDA device index, as a CUstream int: the raw getter torch's
    own compilers use (a dict lookup in C), else the public API."""
    global _cuda_stream
    import torch

    f = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    try:
        if f is not None:
            f(torch.cuda.current_device())
    except Exception:  # noqa: BLE001
        f = None
    _cuda_stream = f if f is not None else (lambda idx: torch.cuda.current_stream(idx).cuda_stream)
    return _cuda_stream


def _order_after_current(stream, index):
    """Make CUstream `stream` wait for what torch's current stream of device `index` has pending
    (the producer of the arguments), as torch's __dlpack__(stream=...) does."""
    import torch

    cur = torch.cuda.current_stream(index)
    if cur.cuda_stream == stream or (stream in (0, 1) and cur.cuda_stream == 0):
        return
    other = (torch.cuda.default_stream(index) if stream in (0, 1)
             else torch.cuda.ExternalStream(stream, device=torch.device("cuda", index)))
    other.wait_stream(cur)


def _numpy_dtype_or_none(name):
    try:
        return _dtypes.numpy_dtype(name)
    except TypeError:
        return None


class _Plan:
    """What a call of one kernel needs, made on its first call (no reference to the kernel, so
    the kernel is freed as soon as Python drops it)."""

    def __init__(self, k):
        params = k.params
        n = len(params)
        self.n = n
        self.out_idx = tuple(k.out_idx)
        self.n_out = len(self.out_idx)
        self.n_in = n - self.n_out
        self.in_idx = tuple(i for i in range(n) if i not in self.out_idx)
        self.all_idx = tuple(range(n))
        self.scalar = tuple(p.is_scalar for p in params)
        self.scalar_dtype = tuple(_numpy_dtype_or_none(p.dtype) if p.is_scalar else None for p in params)
        self.kernel_name = k.name
        # each symbolic size: the (parameter, dimension) pairs of the inputs that give it, in the
        # order the generic path looks (the first input that has it wins)
        syms = k._sym_names()
        cands = {s: [] for s in syms}
        for i in self.in_idx:
            p = params[i]
            if p.is_scalar:
                continue
            for d, (size, name) in enumerate(zip(p.shape, p.dims)):
                if size < 0 and name and name != "?" and name in cands:
                    cands[name].append((i, d))
        self.sym_cands = tuple(tuple(cands[s]) for s in syms)
        self.nsyms = len(syms)
        self.proto = next((i for i in self.in_idx if not params[i].is_scalar), None)
        self.proto_j = self.in_idx.index(self.proto) if self.proto is not None else None
        self.out_dtypes = tuple(params[i].dtype for i in self.out_idx)
        self.out_np = tuple(_numpy_dtype_or_none(d) for d in self.out_dtypes)
        self.out_torch = None
        self.zero = {}  # (argument kind, kernel.zero_outputs) -> per output: zero-filled?
        self.cuda = k._device_type == kDLCUDA
        self.host = k._device_type == kDLCPU
        self.handle = k.handle
        # the launch functions without argtypes, called with ctypes objects made once: ctypes then
        # converts nothing (argtypes conversion of 4 arguments costs about 0.8 us a call)
        L = lib()
        self.launch = L["tilec_kernel_launch"]
        self.launch.restype = ctypes.c_int
        self.launch_stream = L["tilec_kernel_launch_stream"]
        self.launch_stream.restype = ctypes.c_int
        self.c_handle = ctypes.c_void_p(k.handle)
        self.c_n = ctypes.c_size_t(n)
        self.pool = []  # _CallStates not in use (one per call in flight; threads may share a kernel)

    def count_error(self, nargs):
        n, r = self.n, self.out_idx
        ins = n - len(r)
        with_outs = f" ({n} with its outputs)" if r else ""
        return UsageError(f"kernel '{self.kernel_name}' takes {ins if r else n} arguments{with_outs}, {nargs} given")

    def zero_of(self, k, kind):
        """Per output: whether a call allocating it like a `kind` argument zero-fills it (and
        checks, once, that the outputs have that framework's dtypes)."""
        fw = {_KIND_NUMPY: "numpy", _KIND_TORCH: "torch", _KIND_TILEC: "tilec"}.get(kind)
        if kind == _KIND_NUMPY and any(dt is None for dt in self.out_np):
            raise _Slow
        if kind == _KIND_TORCH and self.out_torch is None:
            try:
                self.out_torch = tuple(_dtypes.torch_dtype(d) for d in self.out_dtypes)
            except TypeError:
                raise _Slow from None
        z = tuple(k._zero_fill(j, fw) for j in range(self.n_out))
        self.zero[(kind, k.zero_outputs)] = z
        return z

    def call(self, k, st, args, stream, sync):
        nargs = len(args)
        if nargs == self.n:
            alloc, pos = False, self.all_idx
        elif nargs == self.n_in and self.n_out:
            alloc, pos = True, self.in_idx
        else:
            raise self.count_error(nargs)
        scalar, keys, tens = self.scalar, st.keys, st.tensors
        cuda_dev = -1  # the device index of a torch CUDA argument, if any
        for i, x in zip(pos, args):
            if scalar[i]:
                tx = type(x)
                if (tx is float or tx is int or tx is bool) and i in st.sbuf:
                    st.sbuf[i][()] = x  # numpy's conversion, as np.array(x, dtype) (overflow raises)
                    continue
                raise _Slow
            kind = _kinds.get(type(x))
            if kind is None:
                kind = _kind_of_type(type(x))
            if kind == _KIND_NUMPY:
                key = (x.dtype, x.shape, x.strides)
                if key != keys[i]:
                    st.set_numpy(i, key)
                tens[i].data = _peek[(id(x) >> 3) + _NP_DATA_WORD] if _NP_RAW else x.ctypes.data
            elif kind == _KIND_TORCH:
                key = (x.dtype, x.shape, x.stride(), x.device)
                if key != keys[i]:
                    st.set_torch(i, x, key)
                tens[i].data = x.data_ptr()
                if st.cuda_of[i] >= 0:
                    cuda_dev = st.cuda_of[i]
            elif kind == _KIND_TILEC:
                key = (x.dtype, x._shape_arr, x.device_type, x.device)
                if key != keys[i]:
                    st.set_tilec(i, x, key)
                tens[i].data = x.ptr
            else:
                raise _Slow
        if alloc:
            outs = self.allocate(k, st, args)
        # launch
        if self.cuda and (cuda_dev >= 0 or stream is not None):
            if stream is None:
                s = (_cuda_stream or _current_stream_fn())(cuda_dev)
            else:
                s = stream
                if cuda_dev >= 0:
                    _order_after_current(stream, cuda_dev)
            if self.launch_stream(self.c_handle, st.arr, self.c_n, st.stream(s), st.err_ref):
                raise st.failed()
            if sync:
                k._synchronize(s)
        elif stream is not None:
            if self.launch_stream(self.c_handle, st.arr, self.c_n, st.stream(stream), st.err_ref):
                raise st.failed()
            if sync:
                k._synchronize(stream)
        elif self.launch(self.c_handle, st.arr, self.c_n, st.err_ref):
            raise st.failed()
        if alloc:
            return outs[0] if self.n_out == 1 else tuple(outs)
        if not self.n_out:
            return None
        return args[self.out_idx[0]] if self.n_out == 1 else tuple(args[i] for i in self.out_idx)

    def allocate(self, k, st, args):
        """The outputs, allocated like the first tensor argument, with their DLTensors filled."""
        if self.nsyms:
            shp = st.shapes
            sizes = []
            for cands in self.sym_cands:
                v = -1
                for i, d in cands:
                    sh = shp[i]
                    if d < len(sh):
                        v = sh[d]
                        break
                sizes.append(v)
            sizes = tuple(sizes)
        else:
            sizes = ()
        ent = k._sized_cache.get(sizes)
        if ent is None:
            ent = k._sized(sizes)
        shapes = ent[0]
        if self.proto is None:
            raise _Slow
        x0 = args[self.proto_j]
        kind = _kinds[type(x0)]
        zk = (kind, k.zero_outputs)
        z = self.zero.get(zk)
        if z is None:
            z = self.zero_of(k, kind)
        outs = []
        if kind == _KIND_NUMPY and self.host:
            for m in range(self.n_out):
                outs.append((np.zeros if z[m] else np.empty)(shapes[m], dtype=self.out_np[m]))
            mark = (ent, kind)
        elif kind == _KIND_TORCH:
            import torch

            dev = st.keys[self.proto][3]
            tdt = self.out_torch
            for m in range(self.n_out):
                outs.append((torch.zeros if z[m] else torch.empty)(shapes[m], dtype=tdt[m], device=dev))
            mark = (ent, kind, dev)
        elif kind == _KIND_TILEC:
            for m in range(self.n_out):
                outs.append((zeros if z[m] else empty)(shapes[m], self.out_dtypes[m], x0.target, x0.device))
            mark = (ent, kind, x0.device_type, x0.device)
        else:
            raise _Slow
        keys, tens = st.keys, st.tensors
        m = 0
        for i in self.out_idx:
            o = outs[m]
            if keys[i] != mark:
                st.set_output(i, m, mark, o)
            if kind == _KIND_NUMPY:
                tens[i].data = _peek[(id(o) >> 3) + _NP_DATA_WORD] if _NP_RAW else o.ctypes.data
            elif kind == _KIND_TORCH:
                tens[i].data = o.data_ptr()
            else:
                tens[i].data = o.ptr
            m += 1
        return outs


class _CallState:
    """The DLTensors of one call in flight, filled in place: per parameter the DLTensor, the last
    (dtype, shape, strides, device) written into it, and the ctypes arrays its shape and strides
    point to."""

    def __init__(self, plan):
        n = plan.n
        self.plan = plan
        self.tensors = [DLTensor() for _ in range(n)]
        self.arr = (ctypes.POINTER(DLTensor) * max(1, n))(*[ctypes.pointer(t) for t in self.tensors])
        self.keys = [None] * n
        self.shapes = [()] * n
        self.cuda_of = [-1] * n  # the CUDA device index of a torch tensor there, else -1
        self.hold = [None] * n
        self.err = tilec_error()
        self.err_ref = ctypes.byref(self.err)
        self.last_stream, self.c_stream = None, None
        self.sbuf = {}
        for i in range(n):
            if plan.scalar[i] and plan.scalar_dtype[i] is not None:  # a 0-d host tensor each call writes
                buf = np.zeros((), dtype=plan.scalar_dtype[i])
                t = self.tensors[i]
                code, bits = _dtypes.dl_of_numpy(buf.dtype)
                t.data = buf.ctypes.data
                t.device.device_type, t.device.device_id = kDLCPU, 0
                t.ndim = 0
                t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
                t.shape = t.strides = None
                t.byte_offset = 0
                self.sbuf[i] = buf

    def stream(self, s):
        """CUstream s as a ctypes pointer (the last one kept)."""
        if s != self.last_stream:
            self.c_stream = ctypes.c_void_p(s or None)
            self.last_stream = s
        return self.c_stream

    def failed(self):
        """The exception for the error the library wrote, which is then cleared (the library
        writes into an error only while its status is TILEC_OK)."""
        e = from_c(self.err)
        ctypes.memset(ctypes.addressof(self.err), 0, ctypes.sizeof(self.err))
        return e

    def _fill(self, i, key, code, bits, dev_type, dev_id, shape, strides):
        self.keys[i] = None  # until every field is written
        t = self.tensors[i]
        nd = len(shape)
        sh = (ctypes.c_int64 * max(1, nd))(*shape)
        t.shape = sh
        if strides is None:
            t.strides = None
            self.hold[i] = (sh,)
        else:
            sd = (ctypes.c_int64 * max(1, nd))(*strides)
            t.strides = sd
            self.hold[i] = (sh, sd)
        t.ndim = nd
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.device.device_type, t.device.device_id = dev_type, dev_id
        t.byte_offset = 0
        self.shapes[i] = tuple(shape)
        self.cuda_of[i] = dev_id if dev_type == kDLCUDA else -1
        self.keys[i] = key

    def set_numpy(self, i, key):
        dt, shape, strides = key
        cb = _np_dl[dt] if dt in _np_dl else _np_dl_of(dt)
        size = dt.itemsize
        if cb is None or not size or any(s % size for s in strides):
            raise _Slow  # as DLPack export (or its absence) says
        self._fill(i, key, cb[0], cb[1], kDLCPU, 0, shape, [s // size for s in strides])

    def set_torch(self, i, x, key):
        dt, shape, strides, dev = key
        if not _torch_dl:
            _torch_tables()
        cb = _torch_dl.get(dt)
        if cb is None or x.is_conj() or x.is_neg():
            raise _Slow
        if dev.type == "cuda":
            dev_type, dev_id = kDLCUDA, dev.index if dev.index is not None else 0
        elif dev.type == "cpu":
            dev_type, dev_id = kDLCPU, 0
        else:
            raise _Slow
        self._fill(i, key, cb[0], cb[1], dev_type, dev_id, tuple(shape), tuple(strides))

    def set_tilec(self, i, x, key):
        cb = _tilec_dl.get(x.dtype)
        if cb is None:
            try:
                cb = _tilec_dl[x.dtype] = _dtypes.dl_of_numpy(_dtypes.numpy_dtype(x.dtype))
            except TypeError:
                raise _Slow from None
        self.keys[i] = None
        t = self.tensors[i]
        t.shape = x._shape_arr  # the tensor's own array (the key keeps a reference)
        t.strides = None
        t.ndim = len(x.shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = cb[0], cb[1], 1
        t.device.device_type, t.device.device_id = x.device_type, x.device
        t.byte_offset = 0
        self.hold[i] = None
        self.shapes[i] = x.shape
        self.cuda_of[i] = -1
        self.keys[i] = key

    def set_output(self, i, m, mark, o):
        """Parameter i's DLTensor for the m-th output, which the call allocated (dense; its shape
        the cached one of these sizes)."""
        ent, kind = mark[0], mark[1]
        plan = self.plan
        if kind == _KIND_NUMPY:
            dt = plan.out_np[m]
            cb = _np_dl[dt] if dt in _np_dl else _np_dl_of(dt)
            dev_type, dev_id = kDLCPU, 0
        elif kind == _KIND_TORCH:
            if not _torch_dl:
                _torch_tables()
            cb = _torch_dl.get(plan.out_torch[m])
            dev = mark[2]
            dev_type, dev_id = (kDLCUDA, dev.index or 0) if dev.type == "cuda" else (kDLCPU, 0)
        else:
            cb = _tilec_dl.get(o.dtype)
            if cb is None:
                cb = _tilec_dl[o.dtype] = _dtypes.dl_of_numpy(_dtypes.numpy_dtype(o.dtype))
            dev_type, dev_id = mark[2], mark[3]
        if cb is None:
            raise _Slow
        self.keys[i] = None
        t = self.tensors[i]
        t.shape = ent[1][m]  # the cached ctypes array of this output's shape
        t.strides = None
        t.ndim = len(ent[0][m])
        t.dtype.code, t.dtype.bits, t.dtype.lanes = cb[0], cb[1], 1
        t.device.device_type, t.device.device_id = dev_type, dev_id
        t.byte_offset = 0
        self.hold[i] = None
        self.shapes[i] = ent[0][m]
        self.cuda_of[i] = -1
        self.keys[i] = mark


# ---- outputs a kernel reads ---------------------------------------------------------------------
def _outputs_read(k):
    """Per out_idx entry of kernel k: whether the kernel reads that output's values (an atomic_add
    or `+=` into it, a gemm accumulating into it: the library's analysis of the IR,
    tilec_kernel_param_reads). Such outputs are zero-filled when a call allocates them; the others
    come from torch.empty, as TileLang's. When the library cannot say, the output counts as read."""
    L = lib()
    return [L.tilec_kernel_param_reads(k.handle, i) != 0 for i in k.out_idx]


class Kernel:
    """A compiled kernel. Call it like TileLang's JITKernel: with every argument, or, when it
    returns tensors (out_idx, an eager function's T.empty), with the others only: those are then
    allocated like the first tensor argument (numpy, torch, CuPy or tilec.Tensor), zeroed, and
    returned."""

    def __init__(self, program, handle, kernel, defines, returns):
        self.program, self.handle, self._defines = program, handle, defines
        self._lib = lib()
        L = self._lib
        self.name = L.tilec_kernel_name(handle).decode()
        self.target = L.tilec_kernel_target(handle).decode()
        self.backend = L.tilec_kernel_backend(handle).decode()
        self.cache_status = L.tilec_kernel_cache_status(handle).decode()
        self.compile_ms = L.tilec_kernel_compile_ms(handle)
        self.params = []
        for i in range(L.tilec_kernel_num_params(handle)):
            info = tilec_param_info()
            L.tilec_kernel_param(handle, i, ctypes.byref(info))
            self.params.append(Param(info))
        if returns is None:
            n = L.tilec_kernel_returns(handle, None, 0)
            idx = (ctypes.c_size_t * max(1, n))()
            L.tilec_kernel_returns(handle, idx, n)
            returns = [int(idx[i]) for i in range(n)]
        else:
            np_ = len(self.params)
            returns = [r + np_ if r < 0 else r for r in returns]
            for r in returns:
                if not 0 <= r < np_:
                    raise UsageError(f"out_idx {r} is out of range for kernel '{self.name}' with {np_} parameters")
        self.out_idx = returns
        self._device_type = _device_type_of(self.target, self.backend)
        self._kernel_name = kernel
        # Whether outputs a call allocates are zero-filled: None zero-fills numpy outputs and,
        # for torch, CuPy and tilec.Tensor, those the kernel's IR shows it reads (an atomic_add
        # into it), taking the others from torch.empty & co.; True always; False never.
        self.zero_outputs = None
        self._reads = None  # per out_idx entry: whether the kernel reads that output (IR)
        self._plan = None   # the call plan, made on the first call (_Plan)
        self._sized_cache = {}  # symbolic sizes tuple -> (output shapes, their ctypes arrays)

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h and getattr(self, "_lib", None):
            self._lib.tilec_kernel_destroy(h)

    def __repr__(self):
        return f"<tilec.Kernel {self.name}({', '.join(map(repr, self.params))}) on {self.target}/{self.backend}>"

    # -- source --
    def get_kernel_source(self):
        """The generated kernel (without host code), as TileLang's JITKernel.get_kernel_source."""
        return self.source(kernel_only=True)

    def source(self, kernel_only=True):
        return self._lib.tilec_kernel_source(self.handle, int(kernel_only)).decode()

    # -- arguments --
    def _full_args(self, args):
        n, r = len(self.params), self.out_idx
        if len(args) == n:
            return list(args), []
        if r and len(args) == n - len(r):
            it = iter(args)
            full = [None if i in r else next(it) for i in range(n)]
            return full, list(r)
        ins = n - len(r)
        with_outs = f" ({n} with its outputs)" if r else ""
        raise UsageError(f"kernel '{self.name}' takes {ins if r else n} arguments{with_outs}, {len(args)} given")

    def _sized(self, sizes):
        """The outputs' shapes for the symbolic sizes `sizes` (a tuple, tilec_kernel_num_syms
        entries, -1 where unknown): checked against the target's grid limits and computed by the
        library once per distinct tuple, then cached: ([shape tuple per out_idx entry],
        [its ctypes int64 array])."""
        ent = self._sized_cache.get(sizes)
        if ent is not None:
            return ent
        L = self._lib
        names = self._sym_names()
        arr = (ctypes.c_int64 * max(1, len(names)))(*sizes)
        err = tilec_error()  # a grid the device cannot launch is refused before the outputs exist
        if L.tilec_kernel_check_sizes(self.handle, arr, len(names), ctypes.byref(err)) != 0:
            raise from_c(err)
        shapes, carrs = [], []
        for i in self.out_idx:
            p = self.params[i]
            shape = (ctypes.c_int64 * max(1, p.ndim))()
            unknown, err = ctypes.c_int(-1), tilec_error()
            if L.tilec_kernel_param_shape(self.handle, i, arr, len(names), shape, ctypes.byref(unknown),
                                          ctypes.byref(err)) != 0:
                if unknown.value >= 0:
                    raise UsageError(f"output '{p.name}' of kernel '{self.name}' needs the size '{names[unknown.value]}' "
                                     f"that no input tensor gives; pass '{p.name}' yourself")
                raise from_c(err)
            shapes.append(tuple(shape[d] for d in range(p.ndim)))
            carrs.append(shape)
        ent = (shapes, carrs)
        if len(self._sized_cache) >= 1024:  # a bound, for callers that sweep sizes
            self._sized_cache.clear()
        self._sized_cache[sizes] = ent
        return ent

    def _sym_names(self):
        names = getattr(self, "_sym_names_", None)
        if names is None:
            L = self._lib
            names = [L.tilec_kernel_sym_name(self.handle, s).decode()
                     for s in range(L.tilec_kernel_num_syms(self.handle))]
            self._sym_names_ = names
        return names

    def _zero_fill(self, k, fw):
        """Whether the k-th returned output is zero-filled when allocated like a `fw` tensor (None:
        no tensor argument to copy)."""
        if self.zero_outputs is not None:
            return bool(self.zero_outputs)
        if fw not in ("torch", "cupy", "tilec") and self._device_type == kDLCPU:
            return True  # numpy: zero-filled, as before (kernels need not write every element)
        if self._reads is None:
            self._reads = _outputs_read(self)
        return self._reads[k]

    def _allocate(self, full, missing, zero=False):
        syms, proto = {}, None
        for i, a in enumerate(full):
            if a is None or self.params[i].is_scalar or not hasattr(a, "shape"):
                continue
            proto = proto if proto is not None else a
            shape = _shape_of(a)
            for d, (size, name) in enumerate(zip(self.params[i].shape, self.params[i].dims)):
                if size < 0 and name and name != "?" and d < len(shape):
                    syms.setdefault(name, shape[d])
        # the library sizes each output from the symbolic sizes, dimensions such as seq_len * heads included
        shapes, _ = self._sized(tuple(syms.get(n, -1) for n in self._sym_names()))
        fw = _framework(proto) if proto is not None else None
        for i in missing:
            k = self.out_idx.index(i)
            full[i] = self._new_tensor(proto, self.params[i].dtype, list(shapes[k]), zero or self._zero_fill(k, fw))

    def _new_tensor(self, proto, dtype, shape, zero=True):
        fw = _framework(proto) if proto is not None else None
        if fw == "torch":
            import torch

            new = torch.zeros if zero else torch.empty
            return new(shape, dtype=_dtypes.torch_dtype(dtype), device=proto.device)
        if fw == "cupy":
            import cupy

            with cupy.cuda.Device(proto.device.id):
                return (cupy.zeros if zero else cupy.empty)(shape, dtype=_dtypes.numpy_dtype(dtype))
        if fw == "tilec":
            return (zeros if zero else empty)(shape, dtype, proto.target, proto.device)
        if self._device_type == kDLCPU:
            return (np.zeros if zero else np.empty)(shape, dtype=_dtypes.numpy_dtype(dtype))
        return (zeros if zero else empty)(shape, dtype, self.target, 0)

    def _dlargs(self, full, keep):
        n = len(self.params)
        tensors = []
        for i, a in enumerate(full):
            p = self.params[i]
            if p.is_scalar and not hasattr(a, "__dlpack__") and not isinstance(a, (np.ndarray, Tensor)):
                if not isinstance(a, (int, float, bool, np.generic)):
                    raise UsageError(f"argument '{p.name}' is a scalar of dtype {p.dtype}, got {type(a).__name__}")
                a = np.array(a, dtype=_dtypes.numpy_dtype(p.dtype))
            tensors.append(_dltensor_of(a, keep))
        keep.append(tensors)
        arr = (ctypes.POINTER(DLTensor) * max(1, n))(*[ctypes.pointer(t) for t in tensors])
        return arr

    def _launch(self, arr, n):
        err = tilec_error()
        st = self._lib.tilec_kernel_launch(self.handle, arr, n, ctypes.byref(err))
        _check(st == 0, err)

    def _result(self, full):
        outs = [full[i] for i in self.out_idx]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _enqueue(self, arr, n, stream):
        err = tilec_error()
        st = self._lib.tilec_kernel_launch_stream(self.handle, arr, n, ctypes.c_void_p(stream or None),
                                                  ctypes.byref(err))
        _check(st == 0, err)

    def __call__(self, *args, stream=None, sync=False):
        """Run the kernel; returns its out_idx tensors (allocated when not given).

        A cuda kernel called with torch CUDA tensors is enqueued on torch's current stream of
        their device and the call returns without waiting, as a torch operation does; with
        `sync=True` it waits for the kernel (and reports a fault inside it). Other cuda calls
        wait. With `stream` (a CUstream handle as an int, 0 for the default stream; cuda kernels
        only) the launch is enqueued there, after the torch current stream's pending work when the
        arguments are torch tensors, and the call returns without waiting unless `sync=True`
        (tilec_kernel_launch_stream)."""
        plan = self._plan
        if plan is None:
            plan = self._make_plan()
        pool = plan.pool
        try:
            st = pool.pop()
        except IndexError:
            st = _CallState(plan)
        try:
            return plan.call(self, st, args, stream, sync)
        except _Slow:
            pass
        finally:
            pool.append(st)
        return self._call_generic(args, stream, sync)

    def _make_plan(self):
        plan = _Plan(self)
        self._plan = plan
        return plan

    def _call_generic(self, args, stream=None, sync=False):
        """A call through DLPack export, for arguments the plan does not read directly (CuPy,
        other __dlpack__ producers, 0-d arrays for scalars, unusual dtypes)."""
        full, missing = self._full_args(args)
        self._allocate(full, missing)
        keep = []
        arr = self._dlargs(full, keep)
        if stream is None:
            self._launch(arr, len(full))
        else:
            self._enqueue(arr, len(full), stream)
            if sync:
                self._synchronize(stream)
        return self._result(full)

    def _synchronize(self, stream):
        err = tilec_error()
        st = self._lib.tilec_kernel_synchronize(self.handle, ctypes.c_void_p(stream or None), ctypes.byref(err))
        _check(st == 0, err)

    def prepare(self, *args):
        """The arguments converted once (outputs allocated as in a call): the returned Launch runs
        the kernel on them with no per-call Python conversion (for chains and timing loops)."""
        full, missing = self._full_args(args)
        self._allocate(full, missing)
        keep = []
        arr = self._dlargs(full, keep)
        return Launch(self, arr, len(full), keep, self._result(full))

    # -- verification --
    def _host_copy(self, t, p):
        """The bytes of DLTensor t (on this kernel's device or the host) as a numpy array."""
        shape = tuple(t.shape[d] for d in range(t.ndim))
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        nb = _dtypes.nbytes(p.dtype, numel)
        buf = np.empty(max(1, nb), dtype=np.uint8)
        src = (t.data or 0) + t.byte_offset
        if nb == 0:
            pass
        elif t.device.device_type in (kDLCPU, 3):
            ctypes.memmove(buf.ctypes.data, src, nb)
        else:
            _copy(self.target, t.device.device_id, buf.ctypes.data, src, nb, TILEC_COPY_DEVICE_TO_HOST)
        return buf, shape

    def verify(self, *args, raise_on_failure=True):
        """Run the kernel on these arguments (outputs allocated as in a call) and compare every
        output with the reference on a host copy of the same inputs: the reference interpreter for
        cpu kernels, the cpu backend for the others (as `tilec run --verify`). Returns a
        VerifyReport (and the outputs in `report.outputs`); raises VerifyError when an output is
        out of tolerance unless raise_on_failure is False. Outputs it allocates are zero-filled,
        so elements a kernel leaves unwritten compare equal."""
        full, missing = self._full_args(args)
        self._allocate(full, missing, zero=True)
        keep = []
        arr = self._dlargs(full, keep)
        n = len(full)
        tensors = keep[-1]
        snap = [self._host_copy(tensors[i], self.params[i]) for i in range(n)]
        self._launch(arr, n)
        after = [self._host_copy(tensors[i], self.params[i]) if self.params[i].is_output else None for i in range(n)]
        host_keep = []

        def host_tensor(i, buf, shape):
            t = DLTensor()
            t.data = buf.ctypes.data
            t.device.device_type, t.device.device_id = kDLCPU, 0
            t.ndim = len(shape)
            t.dtype = tensors[i].dtype
            sh = (ctypes.c_int64 * max(1, len(shape)))(*shape)
            t.shape, t.strides, t.byte_offset = sh, None, 0
            host_keep.extend([buf, sh, t])
            return t

        ref = [host_tensor(i, *snap[i]) for i in range(n)]
        ref_arr = (ctypes.POINTER(DLTensor) * max(1, n))(*[ctypes.pointer(t) for t in ref])
        err = tilec_error()
        if self.target == "cpu":
            st = self._lib.tilec_kernel_run_reference(self.handle, ref_arr, n, ctypes.byref(err))
            against = "reference interpreter"
        else:
            cpu = self.program.compile(self._kernel_name, self._defines, "cpu", None, self.out_idx)
            st = self._lib.tilec_kernel_launch(cpu.handle, ref_arr, n, ctypes.byref(err))
            against = "cpu backend"
        _check(st == 0, err)
        report = VerifyReport(self.name, self.target, against)
        for i in range(n):
            if not self.params[i].is_output:
                continue
            res = host_tensor(i, *after[i])
            cmp = tilec_compare()
            err = tilec_error()
            through = self.params[i].rounds_through
            mask = sum(1 << d for d in self.params[i].unordered_dims)
            st = self._lib.tilec_compare_output(ctypes.byref(res), ctypes.byref(ref[i]),
                                                through.encode() if through else None, mask, ctypes.byref(cmp),
                                                ctypes.byref(err))
            _check(st == 0, err)
            report.append({"name": self.params[i].name, "max_abs_err": cmp.max_abs_err,
                           "max_rel_err": cmp.max_rel_err, "cosine": cmp.cosine,
                           "argmax_match": bool(cmp.argmax_match), "ok": bool(cmp.ok), "atol": cmp.atol,
                           "rtol": cmp.rtol, "rounds_through": through,
                           "unordered_dims": list(self.params[i].unordered_dims)})
        report.outputs = self._result(full)
        if raise_on_failure and not report.ok:
            raise VerifyError(f"kernel '{self.name}' on {self.target}: results differ from the {against} beyond "
                              f"tolerance\n{report}")
        return report

    # -- timing --
    def bench(self, *args, warmup=2, min_runs=5, min_seconds=0.5, max_runs=200):
        """Time launches on these arguments (outputs allocated once): dict with median_ms, min_ms,
        max_ms and runs. Each launch returns when the kernel has finished (tilec_kernel_launch)."""
        full, missing = self._full_args(args)
        self._allocate(full, missing)
        keep = []
        arr = self._dlargs(full, keep)
        n = len(full)
        for _ in range(warmup):
            self._launch(arr, n)
        times, start = [], time.perf_counter()
        while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < min_seconds):
            t0 = time.perf_counter()
            self._launch(arr, n)
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        return {"median_ms": times[len(times) // 2], "min_ms": times[0], "max_ms": times[-1], "runs": len(times)}


class Launch:
    """A kernel with its arguments converted (Kernel.prepare). Calling it runs the kernel and
    returns the outputs; enqueue(stream) launches without waiting (cuda)."""

    def __init__(self, kernel, arr, n, keep, outputs):
        self.kernel, self._arr, self._n, self._keep, self.outputs = kernel, arr, n, keep, outputs

    def __call__(self):
        self.kernel._launch(self._arr, self._n)
        return self.outputs

    def enqueue(self, stream=0):
        self.kernel._enqueue(self._arr, self._n, stream)
        return self.outputs


class VerifyReport(list):
    """One dict per output: name, max_abs_err, max_rel_err, cosine, argmax_match, ok, atol, rtol."""

    def __init__(self, kernel, target, against):
        super().__init__()
        self.kernel, self.target, self.against = kernel, target, against
        self.outputs = None

    @property
    def ok(self):
        return all(r["ok"] for r in self)

    def __str__(self):
        lines = [f"verify {self.kernel} on {self.target} against the {self.against}:"]
        for r in self:
            lines.append(f"  {r['name']}: {'ok' if r['ok'] else 'FAILED'} max_abs_err={r['max_abs_err']:.3g} "
                         f"max_rel_err={r['max_rel_err']:.3g} cosine={r['cosine']:.9f} "
                         f"argmax_match={'yes' if r['argmax_match'] else 'no'}")
        return "\n".join(lines)
