"""tilelang.jit, tilelang.compile and JITKernel under tilec's compatibility layer."""
import ast
import enum
import functools
import inspect
import linecache
import os
import sys
import textwrap

import tilec
from tilec import _core
from tilec.errors import TilecError

from ._capture import _T, Program
from ._errors import CompatError, UnsupportedAttribute, _rel, script_line, unsupported

_JIT_OPTIONS = ("out_idx", "target", "target_host", "execution_backend", "verbose", "pass_configs",
                "debug_root_path", "compile_flags")
_noted = set()


def _note(text):
    if text not in _noted:
        _noted.add(text)
        print(f"tilec.as_tilelang: {text}", file=sys.stderr)


def resolve_target(target, where):
    """(tilec target, backend) for a TileLang target: TILEC_AS_TILELANG_TARGET (and
    TILEC_AS_TILELANG_BACKEND) when set, whatever the script names; else cuda for "cuda" and
    "auto" where a CUDA device is, the cpu (said once on stderr) where none is; "c" / "llvm" /
    "cpu" the cpu, "metal" metal."""
    env = os.environ.get("TILEC_AS_TILELANG_TARGET", "").strip()
    backend = os.environ.get("TILEC_AS_TILELANG_BACKEND", "").strip() or None
    if env:
        return env, backend
    desc = str(getattr(target, "kind", None) and getattr(target.kind, "name", None) or target or "auto")
    kind = desc.strip().split()[0].split(",")[0].lower() if desc.strip() else "auto"
    if kind in ("auto", "cuda", "nvidia"):
        if "cuda" in tilec.available_targets():
            return "cuda", backend
        _note(f"no CUDA device here: target {desc!r} runs on tilec's cpu target "
              "(TILEC_AS_TILELANG_TARGET=cuda TILEC_AS_TILELANG_BACKEND=emu runs the CUDA C++ on tilec's emulator)")
        return "cpu", backend
    if kind in ("c", "llvm", "cpu"):
        return "cpu", backend
    if kind == "metal":
        return "metal", backend
    raise unsupported(f"target={desc!r}", "tilec's targets are cuda, cpu and metal", where)


def _configs(pass_configs, compile_flags):
    """The pass_configs entries tilec's reader takes, as a dict literal's text, or None."""
    d = {}
    for k, v in (pass_configs or {}).items():
        key = k.value if isinstance(k, enum.Enum) else str(k)
        if isinstance(v, enum.Enum):
            v = v.value
        if isinstance(v, (bool, int, float, str)):
            d[key] = v
    flags = compile_flags or []
    if isinstance(flags, str):
        flags = flags.split()
    if any(f.lstrip("-") == "use_fast_math" for f in flags):
        d.setdefault("tl.enable_fast_math", True)
    return repr(d) if d else None


def _remap(e, name, origins, qualname, where):
    """A tilec diagnostic about the generated program, told at the script's own line."""
    if e.file != name or not 1 <= e.line <= len(origins):
        return e
    o = origins[e.line - 1]
    if o is None:
        rendered = (f"{where}: error: {e.message} (in what the compatibility layer wrote for '{qualname}' "
                    "around it; TILEC_AS_TILELANG_DUMP=DIR keeps that program)")
        return type(e)(e.message, e.file, e.line, e.col, rendered)
    file, line, indent = o
    col = e.col + indent if e.col else 0
    src = linecache.getline(file, line).rstrip("\n")
    rendered = f"{_rel(file)}:{line}:{col}: error: {e.message}"
    if src:
        rendered += f"\n{src}\n{' ' * max(0, col - 1)}^"
    return type(e)(e.message, file, line, col, rendered)


def _dump(name, text):
    d = os.environ.get("TILEC_AS_TILELANG_DUMP")
    if d:
        os.makedirs(d, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name.strip("<>"))
        with open(os.path.join(d, safe + ".py"), "w", encoding="utf-8") as fh:
            fh.write(text)


def compile_prim(pf, out_idx=None, target="auto", pass_configs=None, compile_flags=None, where=None):
    where = where or pf.where
    t, backend = resolve_target(target, where)
    prog: Program = pf.program
    decos = []
    cfg = _configs(pass_configs, compile_flags)
    if cfg:
        prog.bind("_tlc_tilelang", "import tilelang as _tlc_tilelang", where)
        decos.append(f"@_tlc_tilelang.jit(pass_configs={cfg})")
    decos.append(f"@{_T}.prim_func")
    text, origins = prog.text(decos)
    name = f"<tilelang {pf.__qualname__}>"
    _dump(name, text)
    if isinstance(out_idx, int):
        out_idx = [out_idx]
    try:
        k = _core.context().program(name, text).compile(pf.__name__, (), t, backend, out_idx)
    except TilecError as e:
        raise _remap(e, name, origins, pf.__qualname__, where) from None
    return JITKernel(k, pf)


class JITKernel:
    """TileLang's JITKernel over a tilec.Kernel: call it on tensors (the out_idx outputs are
    allocated and returned), get_kernel_source(), get_profiler()."""

    def __init__(self, kernel, prim_func=None):
        self.kernel = kernel
        self.prim_func = prim_func
        self.out_idx = list(kernel.out_idx)
        self.params = kernel.params
        self.target = kernel.target

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def get_kernel_source(self, kernel_only=True):
        return self.kernel.source(kernel_only=kernel_only)

    def get_host_source(self):
        return self.kernel.source(kernel_only=False)

    @property
    def kernel_source(self):
        return self.kernel.source(kernel_only=True)

    def get_profiler(self, tensor_supply_type=None):
        from .tl.profiler import Profiler

        return Profiler(self, tensor_supply_type)

    def run_once(self, func=None):
        return self.get_profiler().run_once(func)

    def __repr__(self):
        return f"<tilelang.JITKernel (tilec) {self.kernel!r}>"

    def __getattr__(self, name):
        if name.startswith("__") or name in ("kernel", "prim_func"):
            raise AttributeError(name)
        raise UnsupportedAttribute(f"JITKernel.{name} is not supported by tilec", script_line())


def _is_eager(func):
    """An eager @tilelang.jit function: its own body holds `with T.Kernel(...)` (not a nested def)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return False
    fn = tree.body[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
    if fn is None:
        return False
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.With):
            for it in n.items:
                c = it.context_expr
                if isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) == "Kernel":
                    return True
        todo.extend(ast.iter_child_nodes(n))
    return False


class _Eager(tilec.JitFunction):
    """An eager function: tilec reads its source (with the values it reads) and binds its T.const
    sizes from the tensors, as tilec.jit does."""

    def __init__(self, func, opts, where):
        t, backend = resolve_target(opts.get("target"), where)
        super().__init__(func, opts.get("out_idx"), t, backend)
        self._opts, self._where = opts, where

    def program(self):
        if self._program is None:
            p = Program()
            p.function(self.func, self._where, kernel=True)
            p.bind("_tlc_tilelang", "import tilelang as _tlc_tilelang", self._where)
            cfg = _configs(self._opts.get("pass_configs"), self._opts.get("compile_flags"))
            text, origins = p.text([f"@_tlc_tilelang.jit({'pass_configs=' + cfg if cfg else ''})"])
            name = f"<tilelang {self.func.__qualname__}>"
            _dump(name, text)
            self._origins, self._name = origins, name
            try:
                self._program = _core.context().program(name, text)
            except TilecError as e:
                raise _remap(e, name, origins, self.func.__qualname__, self._where) from None
        return self._program

    def compile(self, target=None, backend=None, **consts):
        try:
            return super().compile(target, backend, **consts)
        except TilecError as e:
            raise _remap(e, getattr(self, "_name", ""), getattr(self, "_origins", []), self.func.__qualname__,
                         self._where) from None


class JitFunction:
    """@tilelang.jit over a factory (called by CPython; the @T.prim_func it returns is compiled,
    once per distinct arguments) or an eager function (tilec reads it)."""

    def __init__(self, func, opts, where):
        functools.update_wrapper(self, func)
        self.func, self.opts, self.where = func, opts, where
        self._eager = _Eager(func, opts, where) if _is_eager(func) else None
        self._kernels = {}

    def __call__(self, *args, **kwargs):
        if self._eager is not None:
            return self._eager(*args, **kwargs)
        return self.compile(*args, **kwargs)

    def compile(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        try:
            k = self._kernels.get(key)
        except TypeError:
            key, k = None, None
        if k is not None:
            return k
        r = self.func(*args, **kwargs)
        k = _kernel_of(r, self.opts, script_line(), f"the @tilelang.jit function '{self.func.__name__}'")
        if key is not None:
            self._kernels[key] = k
        return k

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()


def _kernel_of(r, opts, where, what):
    from .tl.language import PrimFunc

    if isinstance(r, JITKernel):
        return r
    if isinstance(r, PrimFunc):
        return compile_prim(r, opts.get("out_idx"), opts.get("target"), opts.get("pass_configs"),
                            opts.get("compile_flags"), r.where)
    raise CompatError(f"{what} returned {type(r).__name__}, not a @T.prim_func", where)


def jit(func=None, **options):
    """TileLang's @tilelang.jit: `@tilelang.jit`, `@tilelang.jit(out_idx=[-1], target="cuda",
    pass_configs={...}, execution_backend=..., compile_flags=[...])`."""
    where = script_line()
    for k in options:
        if k not in _JIT_OPTIONS:
            raise unsupported(f"tilelang.jit({k}=...)", f"tilec takes {', '.join(_JIT_OPTIONS)}", where)
    if func is None:
        return lambda f: JitFunction(f, options, where)
    if not callable(func):
        raise CompatError(f"tilelang.jit takes a function, not {type(func).__name__}", where)
    return JitFunction(func, options, where)


def compile(func, out_idx=None, execution_backend="auto", target="auto", target_host=None, verbose=False,  # noqa: A001
            pass_configs=None, compile_flags=None, **options):
    """TileLang's tilelang.compile(prim_func, out_idx=..., target=..., pass_configs=...)."""
    where = script_line()
    for k in options:
        raise unsupported(f"tilelang.compile({k}=...)", "", where)
    return _kernel_of(func, {"out_idx": out_idx, "target": target, "pass_configs": pass_configs,
                             "compile_flags": compile_flags}, where, "tilelang.compile's argument")
