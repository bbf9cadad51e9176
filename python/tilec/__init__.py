"""tilec: TileLang kernels compiled by tilec, from Python.

    import tilec
    import tilec.language as T

    @tilec.jit(out_idx=[-1])
    def add(N, block=256, dtype=T.float32):
        @T.prim_func
        def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
                for i in T.Parallel(block):
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
        return main

    kernel = add(1024)                  # compiled for the cpu ("auto"); target="cuda" for a GPU
    c = kernel(a, b)                    # numpy arrays, torch or CuPy tensors, tilec.Tensor: no copy

The kernel's text is read by tilec's own reader from the file that defines it; Python runs none of
its body. See docs/python.md.
"""
import ast
import functools
import inspect
import os
import textwrap
import types

from . import language  # noqa: F401  (import tilec.language as T)
from ._core import (Kernel, Tensor, VerifyReport, available_targets, backends, context, empty, tensor,  # noqa: F401
                    zeros)
from ._lib import lib
from .errors import ProgramError, TargetError, TilecError, TilecWarning, UsageError, VerifyError  # noqa: F401
from .language import PrimFunc

__all__ = ["compile", "jit", "Kernel", "Tensor", "tensor", "empty", "zeros", "backends", "available_targets",
           "version", "TilecError", "TilecWarning", "ProgramError", "UsageError", "VerifyError", "TargetError", "language"]


def version():
    return lib().tilec_version().decode()


__version__ = "0.1.0"


def _define_value(name, v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int) or (hasattr(v, "__index__") and not isinstance(v, float)):
        return str(int(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return str(v)
    if v is None:
        return "None"
    if type(v).__module__.split(".")[0] == "torch" and "dtype" in type(v).__name__:
        return str(v).replace("torch.", "")
    raise UsageError(f"cannot bind '{name}' to a {type(v).__name__}: values are ints, floats, bools or strings "
                     "(dtype names)")


def _defines(consts):
    return tuple((k, _define_value(k, v)) for k, v in consts.items())


# ---- where a function's text comes from ------------------------------------------------------------
def _code_names(code, out):
    out.update(code.co_names)
    out.update(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


def _source_of(func):
    """(name, text) of the program defining func: its whole file for a module-level function (so
    diagnostics point into that file and module constants and helpers are seen), else the
    function alone with the imports and simple constants it refers to."""
    f = inspect.unwrap(func.func if isinstance(func, (PrimFunc, JitFunction)) else func)
    filename = f.__code__.co_filename
    if "<locals>" not in f.__qualname__ and os.path.isfile(filename):
        with open(filename, encoding="utf-8") as fh:
            return filename, fh.read()
    try:
        src = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError) as e:
        raise UsageError(f"cannot read the source of '{f.__qualname__}': {e}") from None
    names = _code_names(f.__code__, set())
    scope = dict(f.__globals__)
    if f.__closure__:
        for n, cell in zip(f.__code__.co_freevars, f.__closure__):
            try:
                scope[n] = cell.cell_contents
            except ValueError:
                pass
    lines = []
    for n in sorted(names):
        if n not in scope:
            continue
        v = scope[n]
        if isinstance(v, types.ModuleType):
            mod = v.__name__
            if mod.split(".")[0] in ("tilec", "tilelang", "math"):
                lines.append(f"import {mod} as {n}")
        elif isinstance(v, (bool, int, float, str)) and not isinstance(v, language.Symbol):
            lines.append(f"{n} = {v!r}")
        elif isinstance(v, language.Symbol):
            lines.append(f"{n} = T.symbolic({str(v)!r})")
    if not any(line.startswith("import tilec.language as") for line in lines):
        lines.insert(0, "import tilec.language as T")
    lines.insert(0, "import tilec")
    return f"<{f.__qualname__}>", "\n".join(lines) + "\n\n" + src


def _program_for(func):
    name, text = _source_of(func)
    return context().program(name, text)


def compile(path_or_source, kernel=None, target="auto", backend=None, out_idx=None, **consts):  # noqa: A001
    """Compile a kernel: from a file path, a program text, a @T.prim_func, or a function decorated
    with @tilec.jit. `kernel` picks one by name when the program has several; `consts` bind factory
    parameters, T.const names and module constants (as `-D` on the command line); `out_idx`
    overrides the program's. Returns a Kernel; raises ProgramError with file:line:col."""
    obj = path_or_source
    if isinstance(obj, (PrimFunc, JitFunction)) or callable(obj) and hasattr(obj, "__code__"):
        prog = _program_for(obj)
        kernel = kernel or getattr(obj, "__name__", None)
    elif isinstance(obj, (str, os.PathLike)):
        s = os.fspath(obj)
        if "\n" not in s and (s.endswith(".py") or os.path.exists(s)):
            try:
                with open(s, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError as e:
                raise UsageError(f"cannot read '{s}': {e.strerror}") from None
            prog = context().program(s, text)
        else:
            prog = context().program("<string>", s)
    else:
        raise UsageError(f"tilec.compile takes a path, a program text or a kernel function, not {type(obj).__name__}")
    return prog.compile(kernel, _defines(consts), target, backend, out_idx)


# ---- @tilec.jit -----------------------------------------------------------------------------------
def _analyse(func):
    """('factory' | 'eager', {const name: (tensor param, dim)}) from the function's own text."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return "factory", {}
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return "factory", {}

    def deco_name(d):
        d = d.func if isinstance(d, ast.Call) else d
        return d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else ""

    for node in ast.walk(fn):
        if node is not fn and isinstance(node, ast.FunctionDef) and any(
                deco_name(d) == "prim_func" for d in node.decorator_list):
            return "factory", {}
    consts, dims = set(), {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and deco_name(node.value) == "const":
            for a in node.value.args[:1]:
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    consts.update(p for p in a.value.replace(",", " ").split())
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(node.annotation, ast.Call) and deco_name(node.annotation) in ("Tensor", "Buffer")
                and node.annotation.args and isinstance(node.annotation.args[0], (ast.Tuple, ast.List))):
            for d, e in enumerate(node.annotation.args[0].elts):
                if isinstance(e, ast.Name) and e.id in consts and e.id not in dims:
                    dims[e.id] = (node.target.id, d)
    return "eager", dims


class JitFunction:
    """A function in TileLang's syntax, compiled by tilec when called.

    A kernel factory (it returns a @T.prim_func) is called with its compile-time parameters and
    returns the compiled Kernel (cached per binding). An eager function (tensor parameters,
    T.const sizes, T.empty outputs) is called with the tensors: the sizes come from their shapes,
    the kernel is compiled once per binding and run, and its T.empty tensors are returned."""

    def __init__(self, func, out_idx=None, target="auto", backend=None):
        self.func = func
        functools.update_wrapper(self, func)
        self.out_idx = [out_idx] if isinstance(out_idx, int) else out_idx
        self.target, self.backend = target, backend
        self._sig = inspect.signature(func)
        self.style, self._const_dims = _analyse(func)
        self._program = None

    def program(self):
        if self._program is None:
            self._program = _program_for(self.func)
        return self._program

    def compile(self, target=None, backend=None, **consts):
        """The Kernel for these bindings (factory parameters, T.const names)."""
        return self.program().compile(self.func.__name__, _defines(consts), target or self.target,
                                      backend or self.backend, self.out_idx)

    def get_kernel_source(self, **consts):
        return self.compile(**consts).get_kernel_source()

    def __call__(self, *args, **kwargs):
        try:
            bound = self._sig.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise UsageError(f"{self.func.__name__}: {e}") from None
        if self.style == "factory":
            return self.compile(**bound.arguments)
        tensors, consts = {}, {}
        for name, v in bound.arguments.items():
            if hasattr(v, "__dlpack__") or hasattr(v, "shape") and not isinstance(v, (int, float)):
                tensors[name] = v
            else:
                consts[name] = v
        for c, (pname, d) in self._const_dims.items():
            if pname in tensors and c not in consts:
                consts[c] = int(tensors[pname].shape[d])
        k = self.compile(**consts)
        full = []
        for p in k.params:
            if p.name in tensors:
                full.append(tensors[p.name])
            elif k.out_idx and k.params.index(p) in k.out_idx:
                full.append(None)
            else:
                raise UsageError(f"kernel '{k.name}' needs tensor '{p.name}'")
        missing = [i for i, a in enumerate(full) if a is None]
        if not missing or missing == list(k.out_idx):  # a kernel call: its plan, torch's stream
            return k(*[a for a in full if a is not None])
        k._allocate(full, missing)
        keep = []
        arr = k._dlargs(full, keep)
        k._launch(arr, len(full))
        return k._result(full)


def jit(func=None, *, out_idx=None, target="auto", backend=None, **options):
    """TileLang's @tilelang.jit for tilec: `@tilec.jit`, `@tilec.jit(out_idx=[-1])`,
    `@tilec.jit(target="cuda")`. Other TileLang options (pass_configs, execution_backend, ...) are
    accepted and ignored here; tilec reads those it honours from the source."""
    if func is None:
        return lambda f: JitFunction(f, out_idx, target, backend)
    return JitFunction(func, out_idx, target, backend)
