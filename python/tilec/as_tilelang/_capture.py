"""A @T.prim_func, as CPython defined it, turned into a tilec program text.

TileLang's `@T.prim_func` parses the decorated function and evaluates the names it uses when the
decorator runs. Under the compatibility layer CPython runs everything around the kernel (factories
inside factories, helpers imported from a package, small classes that compute tile sizes) and the
decorator hands tilec a program: the function's own source (dedented, its parameter annotations
and defaults replaced by the values CPython computed for them), preceded by the values of the names
it reads (closure cells and globals: ints, floats, bools, strings, dtypes, symbolic sizes, tuples,
lists and dicts of those), the modules it reads (tilelang.language as T, math) and the source of
the helper functions and @T.macro functions it calls, each with the values of its own names. A value
tilec cannot take is a CompatError naming the variable and the script line that uses it.
"""
import ast
import builtins
import enum
import inspect
import math
import textwrap
import types

from ._errors import CompatError, _rel

_T = "_tlc_T"  # the generated program's own name for tilelang.language


class _Unsupported(Exception):
    pass


def _served_name(modname):
    """The tilelang name of a module (or a function's __module__) of the layer, or None."""
    if modname == "tilec.as_tilelang.tl":
        return "tilelang"
    if modname.startswith("tilec.as_tilelang.tl."):
        return "tilelang." + modname[len("tilec.as_tilelang.tl."):]
    if modname == "tilec.language":
        return "tilelang.language"
    return None


class _Source:
    """A function's source: file, first line, removed indentation, dedented lines, its ast."""

    def __init__(self, f):
        try:
            lines, start = inspect.getsourcelines(f)
        except (OSError, TypeError) as e:
            raise _Unsupported(f"its source cannot be read ({e})") from None
        self.file = f.__code__.co_filename
        self.start = start
        first = next((ln for ln in lines if ln.strip()), "")
        self.indent = len(first) - len(first.lstrip())
        text = textwrap.dedent("".join(lines))
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            raise _Unsupported(f"its source does not parse alone ({e.msg})") from None
        if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise _Unsupported("it is not a plain 'def' (a lambda or a callable object)")
        self.fn = tree.body[0]
        self.lines = text.splitlines()

    def origin(self, i):
        """(file, line, indent) of line i (0-based) of the dedented text."""
        return (self.file, self.start + i, self.indent)


def _names(fn, skip_decorators):
    """(loaded, bound) names of a function definition."""
    loaded, bound = {}, set()
    nodes = [fn.args] + list(fn.body) + ([] if skip_decorators else list(fn.decorator_list))
    if fn.returns is not None:
        nodes.append(fn.returns)
    for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs + [fn.args.vararg, fn.args.kwarg]:
        if a is not None:
            bound.add(a.arg)
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Load):
                    loaded.setdefault(n.id, n.lineno)
                else:
                    bound.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(n.name)
            elif isinstance(n, ast.arg):
                bound.add(n.arg)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    bound.add((a.asname or a.name).split(".")[0])
    return loaded, bound


_MISSING = object()


def _lookup(f, name):
    code = f.__code__
    if f.__closure__ and name in code.co_freevars:
        try:
            return f.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return _MISSING
    if name in f.__globals__:
        return f.__globals__[name]
    if hasattr(builtins, name):
        return _MISSING  # a builtin: tilec's evaluator has its own
    return _MISSING


class Program:
    """The program text being built, with where each of its lines comes from."""

    def __init__(self):
        self.head = [(f"import tilelang.language as {_T}", None)]
        self.lines = []       # helper functions' and the kernel's lines: (text, origin)
        self.names = {}       # module-level name -> the text that binds it
        self.symbols = {}     # symbolic size name -> module-level name
        self.funcs = {}       # id(function) -> name
        self.busy = set()

    def bind(self, name, text, where):
        old = self.names.get(name)
        if old is not None and old != text:
            raise CompatError(f"the kernel's code reads two different values named '{name}' "
                              f"({old.split(' = ', 1)[-1]} and {text.split(' = ', 1)[-1]}); tilec puts them in one "
                              "program, so rename one", where)
        if old is None:
            self.names[name] = text
            self.head.append((text, None))

    # -- values --
    def symbol(self, s):
        n = self.symbols.get(s.name)
        if n is None:
            n = f"_tlc_sym_{s.name}"
            self.symbols[s.name] = n
            self.head.append((f"{n} = {_T}.symbolic({s.name!r})", None))
        return n

    def expr(self, v):
        """Program text that evaluates to v; _Unsupported when tilec cannot take v."""
        from .tl import language as L

        if v is None or isinstance(v, bool):
            return repr(v)
        if isinstance(v, L.SymExpr):
            return v.render(self.symbol)
        if isinstance(v, enum.Enum) and isinstance(v.value, (str, int)):
            if isinstance(v, L.GemmWarpPolicy):
                return f"{_T}.GemmWarpPolicy.{v.name}"
            return repr(v.value)
        if isinstance(v, str):
            return repr(str(v))
        if isinstance(v, int):
            return repr(int(v))
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else f'float("{v}")'
        if isinstance(v, tuple):
            items = [self.expr(x) for x in v]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(v, list):
            return "[" + ", ".join(self.expr(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.expr(k)}: {self.expr(x)}" for k, x in v.items()) + "}"
        if isinstance(v, L.Annotation):
            kw = "".join(f", {k}={self.expr(x)}" for k, x in v.kw.items())
            return f"{_T}.{v.kind}({self.expr(v.shape)}, {self.expr(v.dtype)}{kw})"
        mod = type(v).__module__.split(".")[0]
        if mod == "numpy":
            import numpy as np

            if isinstance(v, np.generic):
                return self.expr(v.item())
            if isinstance(v, np.dtype):
                return repr(v.name)
            if isinstance(v, type) and issubclass(v, np.generic):
                return repr(np.dtype(v).name)
        if mod == "torch" and type(v).__name__ == "dtype":
            return repr(str(v).replace("torch.", ""))
        raise _Unsupported(f"a {type(v).__module__}.{type(v).__qualname__}" if mod != "builtins"
                           else f"a {type(v).__name__}")

    # -- names --
    def name(self, f, name, value, where):
        """Bind `name` (read by function f) to value in the program."""
        if isinstance(value, types.ModuleType):
            served = _served_name(value.__name__)
            self.bind(name, f"import {served or value.__name__} as {name}", where)
            return
        if isinstance(value, types.BuiltinFunctionType) and getattr(value, "__module__", None) == "math":
            self.bind("_tlc_math", "import math as _tlc_math", where)
            self.bind(name, f"{name} = _tlc_math.{value.__name__}", where)
            return
        from .tl import language as L

        plain = (str, int, float, tuple, list, dict, enum.Enum, L.SymExpr, L.Annotation)
        if callable(value) and not isinstance(value, type) and not isinstance(value, plain):
            served = _served_name(getattr(value, "__module__", "") or "")
            if served is not None:
                attr = getattr(value, "__name__", name)
                self.bind(name, f"from {served} import {attr} as {name}" if attr != name
                          else f"from {served} import {name}", where)
                return
        if isinstance(value, L.PrimFunc):
            raise CompatError(f"the kernel reads '{name}', another @T.prim_func; tilec compiles one prim_func at a "
                              "time (call a @T.macro or a plain helper instead)", where)
        fn = getattr(value, "__tilec_macro__", value)
        if isinstance(fn, types.FunctionType):
            if fn.__name__ == "<lambda>":
                raise CompatError(f"the kernel reads '{name}', a lambda; tilec needs it as a 'def' function", where)
            given = self.function(fn, where)
            if given != name:
                self.bind(name, f"{name} = {given}", where)
            return
        try:
            text = self.expr(value)
        except _Unsupported as e:
            raise CompatError(f"the kernel reads '{name}', {e}; tilec takes ints, floats, bools, strings, dtypes, "
                              "T.symbolic sizes and tuples, lists and dicts of those, modules and functions", where) \
                from None
        self.bind(name, f"{name} = {text}", where)

    def function(self, f, where, kernel=False, replace_signature=False):
        """Add a function's source (and what it reads); returns its name in the program."""
        if id(f) in self.funcs:
            return self.funcs[id(f)]
        if id(f) in self.busy:
            return f.__name__
        self.busy.add(id(f))
        try:
            src = _Source(f)
        except _Unsupported as e:
            raise CompatError(f"cannot read the function '{f.__qualname__}': {e}", where) from None
        fn = src.fn
        lines = list(src.lines)
        if replace_signature:
            lines = self._signature(f, src, lines)
        loaded, bound = _names(fn, skip_decorators=kernel)
        objs = {}
        for n in loaded:
            v = _lookup(f, n) if n not in bound else _MISSING
            if v is not _MISSING and self._is_object(v):
                objs[n] = v
        if objs:
            lines = self._attributes(f, src, lines, objs)
        for n, line in loaded.items():
            if n in bound or n in objs:
                continue  # a parameter or local name: the function never reads an outer value of it
            v = _lookup(f, n)
            if v is _MISSING:
                continue  # a builtin, or a name only tilec knows (an error there if it is not)
            self.name(f, n, v, f"{_rel(src.file)}:{src.start + line - 1}")
        first = fn.lineno - 1 if kernel else 0  # a kernel's decorators are the caller's to write
        out = [("", None)]
        for i in range(first, len(lines)):
            out.append((lines[i], src.origin(i)))
        if kernel:
            self.kernel_lines = out
        else:
            self.lines.extend(out)
        self.funcs[id(f)] = fn.name
        self.busy.discard(id(f))
        return fn.name

    def _is_object(self, v):
        """A Python object (or class: Mode.CAUSAL) whose attributes a kernel may read (cfg.block_M),
        not a value itself."""
        from .tl import language as L

        if isinstance(v, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, L.PrimFunc)):
            return False
        if getattr(v, "__tilec_macro__", None) is not None:
            return False
        try:
            self.expr(v)
            return False
        except _Unsupported:
            return True

    def _attributes(self, f, src, lines, objs):
        """`cfg.block_M` where cfg is a Python object: the attribute's value (read now, as TileLang
        reads it when the decorator runs) under a name of its own, written in its place."""
        parent = {}
        for top in src.fn.body:
            for n in ast.walk(top):
                for c in ast.iter_child_nodes(n):
                    parent[c] = n
        edits = []
        for top in src.fn.body:
            for node in ast.walk(top):
                if not (isinstance(node, ast.Name) and node.id in objs and isinstance(node.ctx, ast.Load)):
                    continue
                where = f"{_rel(src.file)}:{src.start + node.lineno - 1}"
                chain, path = node, []
                while isinstance(parent.get(chain), ast.Attribute) and parent[chain].value is chain:
                    chain = parent[chain]
                    path.append(chain.attr)
                obj = objs[node.id]
                what = ".".join([node.id] + path)
                if not path:
                    raise CompatError(f"the kernel reads '{node.id}', a {type(obj).__module__}.{type(obj).__qualname__}; "
                                      "tilec takes ints, floats, bools, strings, dtypes, T.symbolic sizes and tuples, "
                                      "lists and dicts of those, and such values as attributes of an object "
                                      f"('{node.id}.NAME')", where)
                value = obj
                try:
                    for a in path:
                        value = getattr(value, a)
                except AttributeError as e:
                    raise CompatError(f"the kernel reads '{what}': {e}", where) from None
                try:
                    text = self.expr(value)
                except _Unsupported as e:
                    raise CompatError(f"the kernel reads '{what}', {e}; tilec takes ints, floats, bools, strings, "
                                      "dtypes, T.symbolic sizes and tuples, lists and dicts of those", where) from None
                if chain.lineno != chain.end_lineno:
                    raise CompatError(f"'{what}' is written over several lines; write it on one", where)
                name = "_tlc_" + "_".join([node.id] + path)
                self.bind(name, f"{name} = {text}", where)
                edits.append((chain.lineno - 1, chain.col_offset, chain.end_col_offset, name))
        lines = list(lines)
        for ln, c0, c1, name in sorted(edits, reverse=True):
            b = lines[ln].encode()
            lines[ln] = b[:c0].decode() + name + b[c1:].decode()
        return lines

    def _signature(self, f, src, lines):
        """The parameters' annotations and defaults replaced by the values CPython gave them (they
        were evaluated in the enclosing scope, whose names the function itself may never read)."""
        from .tl import language as L

        fn = src.fn
        args = fn.args
        edits = []
        ann = getattr(f, "__annotations__", {}) or {}
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.annotation is not None and a.arg in ann:
                edits.append((a.annotation, ann[a.arg], a.arg))
        pos = args.posonlyargs + args.args
        for a, d, v in zip(pos[len(pos) - len(args.defaults):], args.defaults, f.__defaults__ or ()):
            edits.append((d, v, a.arg))
        kwd = f.__kwdefaults__ or {}
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            if d is not None and a.arg in kwd:
                edits.append((d, kwd[a.arg], a.arg))
        edits.sort(key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True)
        for node, value, pname in edits:
            where = f"{_rel(src.file)}:{src.start + node.lineno - 1}"
            try:
                text = f"{_T}.{value}" if isinstance(value, L.dtype) else self.expr(value)
            except _Unsupported as e:
                raise CompatError(f"parameter '{pname}' of the kernel '{f.__name__}' is annotated with {e}, "
                                  "not a T.Tensor / T.Buffer or a dtype", where) from None
            l0, c0, l1, c1 = node.lineno - 1, node.col_offset, node.end_lineno - 1, node.end_col_offset
            # keep the line count: the replacement on the first line, the rest of the span emptied
            b0, b1 = lines[l0].encode(), lines[l1].encode()  # ast offsets are in UTF-8 bytes
            if l0 == l1:
                lines[l0] = (b0[:c0].decode() + text + b0[c1:].decode())
            else:
                lines[l0] = b0[:c0].decode() + text
                for i in range(l0 + 1, l1):
                    lines[i] = ""
                lines[l1] = " " * len(b1[:c1].decode()) + b1[c1:].decode()
        return lines

    def text(self, decorators):
        """(program text, line origins) with the kernel last, under `decorators` (lines)."""
        rows = list(self.head) + list(self.lines) + [("", None)]
        rows += [(d, None) for d in decorators]
        rows += self.kernel_lines[1:]
        return "\n".join(r[0] for r in rows) + "\n", [r[1] for r in rows]


def capture(f, where):
    """The Program of a @T.prim_func (its kernel lines kept apart for the decorators)."""
    p = Program()
    p.function(f, where, kernel=True, replace_signature=True)
    return p
