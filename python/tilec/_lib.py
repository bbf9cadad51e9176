"""ctypes bindings of include/tilec.h and DLPack's structs.

The library is found, in order (the first that loads wins; `loaded_path()` says which):
  1. $TILEC_LIB, a path to libtilec.so (when set, nothing else is tried);
  2. the package's own copy, tilec/libtilec.so (`pip install .` builds and ships it);
     in place in a checkout (`PYTHONPATH=python`), the repository's build/libtilec.so;
  3. the system loader's paths: LD_LIBRARY_PATH, the ldconfig cache, /lib and /usr/lib
     (`make install` as root runs ldconfig);
  4. pkg-config's `tilec` (`make install PREFIX=...` writes lib/pkgconfig/tilec.pc), looking in
     PKG_CONFIG_PATH, the default folders, and the lib/pkgconfig of this Python's prefix and of
     the user base (~/.local), where `make install PREFIX=$HOME/.local` puts it.
The ImportError raised when none loads lists what was tried, and why each failed.
"""
import ctypes
import os
import shutil
import site
import subprocess
import sys
import threading

# ---- DLPack (dlpack/dlpack.h: the DLTensor layout is the same in 0.6 and 1.x) ---------------
kDLCPU, kDLCUDA, kDLCUDAHost, kDLMetal = 1, 2, 3, 8
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

# ---- tilec.h -------------------------------------------------------------------------------
TILEC_OK, TILEC_ERROR_PROGRAM, TILEC_ERROR_USAGE, TILEC_ERROR_VERIFY = 0, 1, 2, 3
TILEC_ERROR_TARGET, TILEC_ERROR_NOMEM, TILEC_ERROR_IO, TILEC_ERROR_INTERNAL = 4, 5, 6, 7
TILEC_COPY_HOST_TO_DEVICE, TILEC_COPY_DEVICE_TO_HOST, TILEC_COPY_DEVICE_TO_DEVICE = 0, 1, 2


class tilec_error(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("line", ctypes.c_int),
        ("col", ctypes.c_int),
        ("file", ctypes.c_char * 256),
        ("message", ctypes.c_char * 1024),
        ("rendered", ctypes.c_char * 4096),
    ]


class tilec_context_options(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint), ("cache_dir", ctypes.c_char_p), ("cc", ctypes.c_char_p),
                ("num_threads", ctypes.c_int)]


class tilec_define(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class tilec_compile_options(ctypes.Structure):
    _fields_ = [
        ("kernel", ctypes.c_char_p),
        ("defines", ctypes.POINTER(tilec_define)),
        ("num_defines", ctypes.c_size_t),
        ("target", ctypes.c_char_p),
        ("backend", ctypes.c_char_p),
        ("flags", ctypes.c_uint),
    ]


class tilec_param_info(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("dl_dtype", DLDataType),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("dims", ctypes.POINTER(ctypes.c_char_p)),
        ("is_output", ctypes.c_int),
        ("rounds_through", ctypes.c_char_p),
        ("unordered_dims", ctypes.c_uint),
    ]


class tilec_compare(ctypes.Structure):
    _fields_ = [
        ("max_abs_err", ctypes.c_double),
        ("max_rel_err", ctypes.c_double),
        ("cosine", ctypes.c_double),
        ("argmax_match", ctypes.c_int),
        ("ok", ctypes.c_int),
        ("atol", ctypes.c_double),
        ("rtol", ctypes.c_double),
        ("nan_mismatch", ctypes.c_int64),
    ]


class tilec_backend_info(ctypes.Structure):
    _fields_ = [
        ("target", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("is_default", ctypes.c_int),
        ("available", ctypes.c_int),
        ("device_type", ctypes.c_int),
        ("has_memory", ctypes.c_int),
        ("reason", ctypes.c_char * 256),
    ]


_P = ctypes.c_void_p
_E = ctypes.POINTER(tilec_error)
_T = ctypes.POINTER(ctypes.POINTER(DLTensor))
_SIGNATURES = {
    "tilec_version": (ctypes.c_char_p, []),
    "tilec_context_create": (_P, [ctypes.POINTER(tilec_context_options), _E]),
    "tilec_context_destroy": (None, [_P]),
    "tilec_context_take_warning": (_P, [_P]),
    "tilec_program_from_file": (_P, [_P, ctypes.c_char_p, _E]),
    "tilec_program_from_string": (_P, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _E]),
    "tilec_program_destroy": (None, [_P]),
    "tilec_program_num_kernels": (ctypes.c_size_t, [_P]),
    "tilec_program_kernel_name": (ctypes.c_char_p, [_P, ctypes.c_size_t]),
    "tilec_program_autotune_configs": (_P, [_P, ctypes.c_char_p, _E]),
    "tilec_program_ir": (_P, [_P, ctypes.POINTER(tilec_compile_options), ctypes.c_int, _E]),
    "tilec_program_source": (_P, [_P, ctypes.POINTER(tilec_compile_options), ctypes.c_int, _E]),
    "tilec_compile": (_P, [_P, ctypes.POINTER(tilec_compile_options), _E]),
    "tilec_kernel_destroy": (None, [_P]),
    "tilec_kernel_name": (ctypes.c_char_p, [_P]),
    "tilec_kernel_target": (ctypes.c_char_p, [_P]),
    "tilec_kernel_backend": (ctypes.c_char_p, [_P]),
    "tilec_kernel_num_params": (ctypes.c_size_t, [_P]),
    "tilec_kernel_param": (ctypes.c_int, [_P, ctypes.c_size_t, ctypes.POINTER(tilec_param_info)]),
    "tilec_kernel_param_reads": (ctypes.c_int, [_P, ctypes.c_size_t]),
    "tilec_kernel_num_syms": (ctypes.c_size_t, [_P]),
    "tilec_kernel_sym_name": (ctypes.c_char_p, [_P, ctypes.c_size_t]),
    "tilec_kernel_param_shape": (ctypes.c_int, [_P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t,
                                                ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int), _E]),
    "tilec_kernel_check_sizes": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, _E]),
    "tilec_kernel_returns": (ctypes.c_size_t, [_P, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t]),
    "tilec_kernel_source": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "tilec_kernel_cache_status": (ctypes.c_char_p, [_P]),
    "tilec_kernel_compile_ms": (ctypes.c_double, [_P]),
    "tilec_kernel_launch": (ctypes.c_int, [_P, _T, ctypes.c_size_t, _E]),
    "tilec_kernel_launch_stream": (ctypes.c_int, [_P, _T, ctypes.c_size_t, _P, _E]),
    "tilec_kernel_synchronize": (ctypes.c_int, [_P, _P, _E]),
    "tilec_kernel_run_reference": (ctypes.c_int, [_P, _T, ctypes.c_size_t, _E]),
    "tilec_compare_tensors": (ctypes.c_int, [ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor),
                                             ctypes.POINTER(tilec_compare), _E]),
    "tilec_compare_tensors_as": (ctypes.c_int, [ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.c_char_p,
                                                ctypes.POINTER(tilec_compare), _E]),
    "tilec_compare_output": (ctypes.c_int, [ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.c_char_p,
                                            ctypes.c_uint, ctypes.POINTER(tilec_compare), _E]),
    "tilec_backends_report": (_P, [_P]),
    "tilec_backend_count": (ctypes.c_size_t, []),
    "tilec_backend_get": (ctypes.c_int, [_P, ctypes.c_size_t, ctypes.POINTER(tilec_backend_info)]),
    "tilec_device_alloc": (_P, [_P, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t, _E]),
    "tilec_device_free": (None, [_P, ctypes.c_char_p, ctypes.c_int, _P]),
    "tilec_device_copy": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int, _P, _P, ctypes.c_size_t, ctypes.c_int, _E]),
    "tilec_free": (None, [_P]),
}


def _in_checkout(pkg_dir):
    """The repository around a package used in place (python/tilec), or None."""
    root = os.path.dirname(os.path.dirname(pkg_dir))
    if os.path.basename(os.path.dirname(pkg_dir)) == "python" and os.path.isfile(os.path.join(root, "Makefile")) \
            and os.path.isdir(os.path.join(root, "src")):
        return root
    return None


def _pkg_config_libdir():
    """libtilec.so in pkg-config's `tilec` libdir: (path or None, what was looked at)."""
    exe = shutil.which("pkg-config")
    if not exe:
        return None, "pkg-config tilec (pkg-config is not installed)"
    extra = []
    for prefix in (sys.prefix, site.getuserbase() if hasattr(site, "getuserbase") else None):
        if prefix:
            d = os.path.join(prefix, "lib", "pkgconfig")
            if os.path.isdir(d) and d not in extra:
                extra.append(d)
    env = dict(os.environ)
    path = [p for p in env.get("PKG_CONFIG_PATH", "").split(os.pathsep) if p] + extra
    env["PKG_CONFIG_PATH"] = os.pathsep.join(path)
    where = "pkg-config tilec (PKG_CONFIG_PATH=" + env["PKG_CONFIG_PATH"] + ", then the default folders)"
    try:
        out = subprocess.run([exe, "--variable=libdir", "tilec"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"{where}: {e}"
    libdir = out.stdout.decode(errors="replace").strip()
    if out.returncode != 0 or not libdir:
        return None, f"{where}: no tilec.pc"
    return os.path.join(libdir, "libtilec.so"), None


def _candidates():
    """(path, note) pairs in search order; a path None with a note is a step that found nothing."""
    env = os.environ.get("TILEC_LIB")
    if env:
        yield env, "$TILEC_LIB"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libtilec.so"), "the package's own copy"
    root = _in_checkout(here)
    if root:
        yield os.path.join(root, "build", "libtilec.so"), "the checkout's build/ (make)"
    yield "libtilec.so", "the system loader (LD_LIBRARY_PATH, the ldconfig cache, /lib, /usr/lib)"
    path, why = _pkg_config_libdir()
    yield path, why or "pkg-config tilec"


_lib = None
_lib_path = None
_lock = threading.Lock()


def loaded_path():
    """The libtilec.so that was loaded (a path, or "libtilec.so" when the system loader found it)."""
    lib()
    return _lib_path


def lib():
    """The loaded libtilec.so with every function's signature set."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path, note in _candidates():
            if path is None:
                tried.append(note)
                continue
            if os.sep in path and not os.path.exists(path):
                tried.append(f"{path} ({note}: no such file)")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({note}: {e})")
                continue
            for name, (res, args) in _SIGNATURES.items():
                fn = getattr(handle, name)
                fn.restype = res
                fn.argtypes = args
            _lib, _lib_path = handle, path
            return _lib
        raise ImportError("tilec: cannot load libtilec.so. Install the package with the library built in "
                          "(`pip install .` from the repository root), or build it (`make`) and set TILEC_LIB, "
                          "or `make install`. Tried: " + "; ".join(tried))


def take_string(ptr):
    """A char* the caller frees with tilec_free, as str (None for NULL)."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        lib().tilec_free(ptr)
