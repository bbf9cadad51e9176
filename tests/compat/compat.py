#!/usr/bin/env python3
"""TileLang's own examples as tilec's acceptance corpus (issue 10).

    python3 tests/compat/compat.py TILELANG_CHECKOUT [--tilec build/tilec] [--jobs N] [--no-verify] [--static]

For every kernel `tilec ir FILE --list` names in TILELANG_CHECKOUT/examples, the sizes are bound
the way a user running the file would: tests/compat/trace.py runs the file with stand-ins for
torch, tilelang and the GPU and records the arguments of each kernel's first call; kernels it
cannot reach fall back to reading the source (the call in main() or __main__, main()'s and
argparse's defaults, simple assignments; --static uses that alone). Then `tilec ir` runs (when
the first call's values meet a construct tilec lacks and the file's run called the kernel again
with other values, with those: `main(.., fast_dequant=False)` after `fast_dequant=True`); each
kernel that reads is run with `--verify` on the cpu (sizes of 512 and up that are multiples of
256 are shrunk to 256 for that run, so the reference interpreter finishes; the few kernels only
defined on a domain of inputs get inputs made as their file's main() makes them, from
tests/compat/inputs.py). Prints the outcome
table and the most frequent missing constructs (docs/testing.md).
"""
import argparse
import ast
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import types

import inputs

BLACKWELL = re.compile(r"tcgen05|alloc_tmem|T\.ClusterKernel|TMEM|sm_?100|blockscaled")


class _Attr:
    """Stands for a module (T, torch, tilelang, ...): any attribute is its own name, so
    T.float16 and torch.bfloat16 evaluate to dtype names."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, a):
        return a

    def __call__(self, *a, **k):
        raise ValueError("call")


def _safe_builtins():
    return {"min": min, "max": max, "int": int, "float": float, "bool": bool, "abs": abs, "len": len,
            "round": round, "pow": pow, "str": str, "True": True, "False": False, "None": None}


def evaluate(node, env):
    try:
        code = compile(ast.Expression(node), "<arg>", "eval")
        g = dict(_safe_builtins())
        for mod in ("T", "torch", "tilelang", "tl", "np", "math"):
            g.setdefault(mod, _Attr(mod))
        g.update(env)
        return eval(code, {"__builtins__": {}}, g)
    except Exception:
        return None


TENSOR_CTORS = ("randn", "rand", "empty", "zeros", "ones", "randint", "full", "randn_like", "tensor")


def tensor_shape(node, env):
    """The shape of torch.randn(a, b, ...) / torch.zeros((a, b)) (method chains such as
    .cuda().half() stripped), or of a name with a known shape."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr not in TENSOR_CTORS:
        node = node.func.value
    if isinstance(node, ast.Name):
        return env.get("__shape__" + node.id)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TENSOR_CTORS):
        return None
    args = node.args
    if node.func.attr == "randint":
        args = args[2:] if len(args) > 2 else [k.value for k in node.keywords if k.arg == "size"]
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = args[0].elts
    dims = [evaluate(a, env) for a in args if not isinstance(a, ast.Starred)]
    return tuple(dims) if dims and all(isinstance(d, int) for d in dims) else None


def literal_env(stmts, env):
    """Run the simple assignments of a statement list (unrolled tuples, constants, arithmetic,
    the shapes of tensors made with torch.randn and friends, `a, b = x.shape`)."""
    for s in stmts:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            t, v = s.targets[0], s.value
            shp = tensor_shape(v, env)
            if isinstance(t, ast.Name) and shp is not None:
                env["__shape__" + t.id] = shp
                continue
            if isinstance(v, ast.Attribute) and v.attr == "shape":
                shp = tensor_shape(v.value, env)
                if shp is not None and isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == len(shp):
                    for n, d in zip(t.elts, shp):
                        if isinstance(n, ast.Name):
                            env[n.id] = d
                    continue
        if isinstance(s, ast.Assign):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    v = evaluate(s.value, env)
                    if v is not None:
                        env[t.id] = v
                elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(s.value, (ast.Tuple, ast.List)) and \
                        len(t.elts) == len(s.value.elts):
                    for n, e in zip(t.elts, s.value.elts):
                        v = evaluate(e, env)
                        if isinstance(n, ast.Name) and v is not None:
                            env[n.id] = v
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None:
            v = evaluate(s.value, env)
            if v is not None:
                env[s.target.id] = v
    return env


def argparse_defaults(tree):
    ns = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument" and n.args:
            first = n.args[0]
            if not isinstance(first, ast.Constant) or not isinstance(first.value, str):
                continue
            names = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            long = [x for x in names if x.startswith("--")] or names
            dest = long[0].lstrip("-").replace("-", "_")
            val = None
            for k in n.keywords:
                if k.arg == "dest" and isinstance(k.value, ast.Constant):
                    dest = k.value.value
                if k.arg == "default":
                    val = evaluate(k.value, {})
                if k.arg == "action" and isinstance(k.value, ast.Constant) and k.value.value == "store_true" and val is None:
                    val = False
            if val is not None:
                ns[dest] = val
    return ns


def decorator_names(fn):
    out = []
    for d in fn.decorator_list:
        if isinstance(d, ast.Call):
            d = d.func
        if isinstance(d, ast.Attribute):
            base = d.value.id if isinstance(d.value, ast.Name) else ""
            out.append((base, d.attr))
        elif isinstance(d, ast.Name):
            out.append(("", d.id))
    return out


def find_kernels(tree):
    kernels = []
    for s in tree.body:
        if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decs = decorator_names(s)
        if any(a == "prim_func" for _, a in decs):
            kernels.append((s.name, s, "prim_func"))
        elif any(a == "macro" for _, a in decs):
            continue
        elif any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                 any(a == "prim_func" for _, a in decorator_names(n)) for n in ast.walk(s) if n is not s):
            kernels.append((s.name, s, "factory"))
        elif any(a == "jit" and b in ("tilelang", "tl", "") for b, a in decs):
            kernels.append((s.name, s, "eager"))
    return kernels


def _is_call_of(n, name):
    f = n.func
    if isinstance(f, ast.Name) and f.id == name:
        return True
    return isinstance(f, ast.Attribute) and f.attr in ("compile", "get_tir") and isinstance(f.value, ast.Name) and \
        f.value.id == name


def env_in_function(tree, fdef, depth=0):
    """The values a function's names have when the file runs: main()'s environment, the
    function's defaults, the arguments of a call of it elsewhere (callers traced a few levels
    up), then its own simple assignments."""
    env = main_env(tree)
    if fdef is None or not isinstance(fdef, ast.FunctionDef) or fdef.name == "main":
        if isinstance(fdef, ast.FunctionDef):
            literal_env(fdef.body, env)
        return env
    a = fdef.args
    params = a.posonlyargs + a.args
    for p, d in zip(params[len(params) - len(a.defaults):], a.defaults):
        v = evaluate(d, env)
        if v is not None:
            env[p.arg] = v
    if depth < 3:
        funcs = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f is not fdef]
        callers = [f for f in funcs if f.name == "main"] + [s for s in tree.body if isinstance(s, ast.If)] + \
            [f for f in funcs if f.name != "main"]
        for c in callers:
            call = next((n for n in ast.walk(c) if isinstance(n, ast.Call) and _is_call_of(n, fdef.name)), None)
            if call is None:
                continue
            cenv = env_in_function(tree, c if isinstance(c, ast.FunctionDef) else None, depth + 1)
            if not isinstance(c, ast.FunctionDef):
                literal_env(c.body, cenv)
            for p, e in list(zip([p.arg for p in params], call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]:
                v = evaluate(e, cenv)
                if v is not None:
                    env[p] = v
                shp = tensor_shape(e, cenv)
                if shp is not None:
                    env["__shape__" + p] = shp
            break
    literal_env(fdef.body, env)
    return env


def kernel_calls(tree, name):
    """Calls of the kernel: name(...), name.compile(...), in main() first, then __main__, then anywhere."""
    def calls_in(node):
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and _is_call_of(n, name):
                yield n
    funcs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    order = []
    if "main" in funcs:
        order.append(funcs["main"])
    order += [s for s in tree.body if isinstance(s, ast.If)]
    order += [f for n, f in funcs.items() if n not in ("main", name)]
    for node in order:
        for c in calls_in(node):
            return c, node
    return None, None


def main_env(tree):
    env = literal_env([s for s in tree.body if isinstance(s, (ast.Assign, ast.AnnAssign))], {})
    env["args"] = types.SimpleNamespace(**argparse_defaults(tree))
    for k, v in vars(env["args"]).items():
        env.setdefault(k, v)
    funcs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    mainf = funcs.get("main")
    if mainf is not None:
        a = mainf.args
        params = a.posonlyargs + a.args
        defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
        for p, d in zip(params, defaults):
            if d is not None:
                v = evaluate(d, env)
                if v is not None:
                    env[p.arg] = v
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if d is not None:
                v = evaluate(d, env)
                if v is not None:
                    env[p.arg] = v
        # main(args.M, ...) in the __main__ block binds main's parameters
        for s in tree.body:
            if isinstance(s, ast.If):
                literal_env(s.body, env)
                for n in ast.walk(s):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "main":
                        for p, e in zip(params, n.args):
                            v = evaluate(e, env)
                            if v is not None:
                                env[p.arg] = v
                        for k in n.keywords:
                            v = evaluate(k.value, env) if k.arg else None
                            if v is not None:
                                env[k.arg] = v
    return env


class _Stub:
    """An unknown name while running a config generator: calls and attributes give False-ish stubs."""

    def __call__(self, *a, **k):
        return False

    def __getattr__(self, a):
        return _Stub()

    def __bool__(self):
        return False


class _Globals(dict):
    def __missing__(self, k):
        import builtins
        return getattr(builtins, k) if hasattr(builtins, k) else _Stub()


def autotune_first_config(tree, fn):
    """The first configuration of @tilelang.autotune(configs=...): what a user gets first. The
    module's functions and constants are run in isolation (no imports), unknown names as stubs."""
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "autotune"):
            continue
        cfg = next((k.value for k in d.keywords if k.arg == "configs"), d.args[0] if d.args else None)
        if cfg is None:
            return {}
        import itertools, math, functools
        g = _Globals(itertools=itertools, math=math, functools=functools, product=itertools.product)
        defs = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s is not fn and not s.decorator_list]
        defs += [s for s in tree.body if isinstance(s, ast.Assign)]
        import contextlib, io
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for s in defs:
                try:
                    exec(compile(ast.Module([s], []), "<configs>", "exec"), g)
                except Exception:
                    pass
            try:
                v = eval(compile(ast.Expression(cfg), "<configs>", "eval"), g)
            except Exception:
                v = None
        try:
            v = list(v) if not isinstance(v, (list, dict)) else v
            if isinstance(v, dict):
                return {k: (x[0] if isinstance(x, (list, tuple)) and x else x) for k, x in v.items()}
            if v and isinstance(v[0], dict):
                return dict(v[0])
        except Exception:
            pass
    return {}


ALIASES = {"batch": ["BATCH", "B", "batch_size"], "heads": ["H", "n_heads", "num_heads", "nheads"],
           "seq_len": ["N_CTX", "S", "seqlen", "seq_q", "seqlen_q"], "dim": ["D_HEAD", "D", "head_dim"],
           "batch_size": ["batch", "BATCH", "B"]}


def define_text(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        return v
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return "[" + ",".join(define_text(x) for x in v) + "]"  # tilec reads -D NAME=[a,b] as a list
    return None


def bindings(tree, name, fn):
    call, where = kernel_calls(tree, name)
    env = env_in_function(tree, where if isinstance(where, ast.FunctionDef) else None)
    if where is not None and not isinstance(where, ast.FunctionDef):
        literal_env(where.body, env)
    out = {}
    a = fn.args
    params = a.posonlyargs + a.args
    ndef = len(params) - len(a.defaults)
    # a parameter the call leaves open, but that main() or argparse names (or an alias of it)
    for i, p in enumerate(params + a.kwonlyargs):
        has_default = i >= ndef if i < len(params) else a.kw_defaults[i - len(params)] is not None
        if has_default:
            continue
        for cand in [p.arg] + ALIASES.get(p.arg, []) + [k for k in env if k.lower() == p.arg.lower()]:
            if cand in env and define_text(env[cand]) is not None:
                out[p.arg] = env[cand]
                break
    if call is None:
        out.update(autotune_first_config(tree, fn))
        return {k: t for k, t in ((k, define_text(v)) for k, v in out.items()) if t is not None}
    a = fn.args
    params = [p.arg for p in a.posonlyargs + a.args]
    out.update(autotune_first_config(tree, fn))
    shapes = {}
    for p, e in zip(params, call.args):
        v = evaluate(e, env)
        if v is not None:
            out[p] = v
        shp = tensor_shape(e, env)
        if shp is not None:
            shapes[p] = shp
    for k in call.keywords:
        v = evaluate(k.value, env)
        if k.arg and v is not None:
            out[k.arg] = v
        elif k.arg is None and isinstance(v, dict):  # f(a, b, **kwargs)
            out.update(v)
    # an eager kernel's `A: T.Tensor((M, K), dtype)`: the sizes come from the tensor passed as A
    for st in fn.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id in shapes and \
                isinstance(st.annotation, ast.Call) and st.annotation.args and \
                isinstance(st.annotation.args[0], (ast.Tuple, ast.List)):
            dims = st.annotation.args[0].elts
            if len(dims) == len(shapes[st.target.id]):
                for d, n in zip(dims, shapes[st.target.id]):
                    if isinstance(d, ast.Name):
                        out.setdefault(d.id, n)
    return {k: t for k, t in ((k, define_text(v)) for k, v in out.items()) if t is not None}


TRACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace.py")


def file_kernels(tilec, path, tree, trace):
    """The kernels tilec finds in the file (`tilec ir --list`: helpers such as get_best_config
    are not kernels), and what tests/compat/trace.py records of their first calls when the file
    runs with stand-ins for torch and tilelang."""
    rc, out, _ = run([tilec, "ir", path, "--list"], 60)
    if rc != 0:
        return [name for name, _, _ in find_kernels(tree)], {}, {}
    names = out.split()
    traced = {}
    module_globals = {}
    if trace and names:
        rc, out, _ = run([sys.executable, TRACE, path] + names, 60)
        if rc == 0:
            try:
                traced = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                traced = {}
        module_globals = traced.pop("__globals__", {})
        later = traced.pop("__later__", {})
        for name, recs in later.items():
            if name in traced:
                traced[name]["later"] = recs
    return names, traced, module_globals


def annotated_sizes(fn, shapes):
    """An eager kernel's `A: T.Tensor((M, K), dtype)`: M and K from the shape of the tensor passed as A."""
    out = {}
    alias = {}  # `KH, KW = K, K`: a dimension named by a local copy of a size binds the size
    for st in fn.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t, v = st.targets[0], st.value
            pairs = zip(t.elts, v.elts) if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and \
                len(t.elts) == len(v.elts) else [(t, v)]
            for a, b in pairs:
                if isinstance(a, ast.Name) and isinstance(b, ast.Name):
                    alias[a.id] = b.id
    # `shape = [seq_len_kv, index_dim]` ... `K: T.Tensor(shape, dtype)`: the shape through a name
    bindable = const_names(fn) | {p.arg for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    shape_vars = {st.targets[0].id: st.value for st in fn.body if isinstance(st, ast.Assign) and
                  len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and
                  isinstance(st.value, (ast.Tuple, ast.List))}
    for st in ast.walk(fn):
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id in shapes and \
                isinstance(st.annotation, ast.Call) and st.annotation.args:
            shape = st.annotation.args[0]
            via_name = isinstance(shape, ast.Name)
            if via_name:
                shape = shape_vars.get(shape.id)
            if not isinstance(shape, (ast.Tuple, ast.List)):
                continue
            # through a name, only the sizes -D can bind (not `H_kv = H // kv_group`)
            dims = [d if not via_name or (isinstance(d, ast.Name) and d.id in bindable) else None for d in shape.elts]
            if len(dims) == len(shapes[st.target.id]):
                for d, n in zip(dims, shapes[st.target.id]):
                    if isinstance(d, ast.Name):
                        out.setdefault(d.id, n)
                        if alias.get(d.id) in bindable:
                            out.setdefault(alias[d.id], n)
    return out


def required_params(fn):
    a = fn.args
    params = a.posonlyargs + a.args
    out = [p.arg for p in params[:len(params) - len(a.defaults)]]
    out += [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    return out


def const_names(fn):
    """The sizes an eager kernel declares with `M, N = T.const("M, N")`: -D binds them too."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "const" and \
                n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            out.update(x for x in re.split(r"[\s,]+", n.args[0].value) if x)
    return out


def traced_bindings(tree, fn, rec):
    """-D values from a recorded call: the arguments, then (eager kernels) the sizes named in
    `A: T.Tensor((M, K), dtype)` from the shapes of the tensors passed."""
    out = autotune_first_config(tree, fn) if fn is not None else {}
    out.update(rec.get("args", {}))
    shapes = rec.get("shapes", {})
    if fn is not None:
        for k, v in annotated_sizes(fn, shapes).items():
            out.setdefault(k, v)
        # a factory's tensor parameter is no size: only the names tilec can bind
        params = {p.arg for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} | const_names(fn)
        if not fn.args.kwarg:
            out = {k: v for k, v in out.items() if k in params or k not in rec.get("args", {})}
    return {k: t for k, t in ((k, define_text(v)) for k, v in out.items()) if t is not None}


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def construct_of(err):
    """The missing construct an error names, for the table of the most frequent ones."""
    m = re.search(r"error: (.*)", err)
    msg = m.group(1) if m else err.strip().splitlines()[0] if err.strip() else "?"
    for pat, fmt in [(r"unsupported: call of '([\w.]+)'", "{0}()"),
                     (r"module '(\w+(?:\.\w+)*)' has no attribute '(\w+)'", "{0}.{1}"),
                     (r"unsupported: (?:use of )?'?([\w.]+)'?", "{0}"),
                     (r"name '(\w+)' is not defined", "name {0}"),
                     (r"'(\w+)' object has no attribute '(\w+)'", "{0}.{1}"),
                     (r"needs an sm_100 target", "Blackwell (sm_100) construct")]:
        mm = re.search(pat, msg)
        if mm:
            return fmt.format(*mm.groups())
    msg = re.sub(r"'[^']*'", "'…'", msg)
    msg = re.sub(r"\d+", "N", msg)
    return msg[:90]


def shrink(defs):
    out = {}
    for k, v in defs.items():
        if re.fullmatch(r"\d+", v) and int(v) >= 512 and int(v) % 256 == 0 and not k.lower().startswith("block"):
            out[k] = "256"
        else:
            out[k] = v
    return out


def module_assigned(tree):
    """The names the file's top-level statements assign (outside any def or class)."""
    out, todo = set(), list(tree.body)
    while todo:
        st = todo.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        for field in ("body", "orelse", "finalbody"):
            todo.extend(getattr(st, field, []) or [])
    return out


def module_error_line(err, path, tree):
    """The line of a file:line:col error that lies in a top-level statement of the file, else None."""
    m = re.search(r"^(.*?):(\d+):\d+: error:", err, re.M)
    if not m or os.path.abspath(m.group(1)) != os.path.abspath(path):
        return None
    line = int(m.group(2))
    for st in tree.body:
        if st.lineno <= line <= (st.end_lineno or st.lineno):
            return None if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else line
    return None


def only_none_tests(tree, fname, var):
    """Whether kernel fname uses the name var only as `var is None` / `var is not None`."""
    fns = [s for s in (tree.body if tree is not None else []) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == fname]
    if not fns:
        return False
    uses = [n for n in ast.walk(fns[0]) if isinstance(n, ast.Name) and n.id == var]
    tests = set()
    for n in ast.walk(fns[0]):
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Is, ast.IsNot)) and \
                isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value is None and \
                isinstance(n.left, ast.Name) and n.left.id == var:
            tests.add(id(n.left))
    return bool(uses) and all(id(u) in tests for u in uses)


def one_kernel(tilec, path, name, defs, verify, module_globals=None, tree=None, later_defs=()):
    rc, out, err, defs, args = read_kernel(tilec, path, name, defs, module_globals, tree)
    read_with = None
    # the file's run calls the kernel again with other values (`main(.., fast_dequant=True)` then
    # `main(.., fast_dequant=False)`): when the first call's values meet a construct tilec lacks,
    # the kernel reads if a later call's values read; the details name the call
    first_err = err
    if rc == 1 and re.search(r":\d+:\d+: error:", err):
        for i, ldefs in enumerate(later_defs):
            lrc, lout, lerr, ldefs, largs = read_kernel(tilec, path, name, ldefs, module_globals, tree)
            if lrc == 0:
                rc, out, err, defs, args, read_with = lrc, lout, lerr, ldefs, largs, i + 2
                break
    res = {"file": path, "kernel": name, "defs": defs, "ir_rc": rc, "ir_err": err, "read_with_call": read_with,
           "first_err": first_err if read_with else ""}
    if rc != 0 or not verify:
        return res
    return verify_kernel(tilec, path, name, defs, args, res)


def read_kernel(tilec, path, name, defs, module_globals, tree):
    """`tilec ir` of one kernel with the -D values defs, and those the module's traced globals add."""
    args = []
    for k, v in defs.items():
        args += ["-D", f"{k}={v}"]
    rc, out, err = run([tilec, "ir", path, "--kernel", name] + args, 60)
    # module-level code tilec cannot run (`A = torch.rand(m, k)`, `M, K = A.shape`): the values its
    # names have when the file runs, from the traced module globals, as for a __main__-only name
    if rc == 1 and tree is not None and module_globals and module_error_line(err, path, tree):
        extra = {k: define_text(v) for k, v in module_globals.items()
                 if k in module_assigned(tree) and k not in defs and define_text(v) is not None}
        if extra:
            defs = dict(defs)
            defs.update(extra)
            for k, v in extra.items():
                args += ["-D", f"{k}={v}"]
            rc, out, err = run([tilec, "ir", path, "--kernel", name] + args, 60)
    # a name only the file's __main__ block binds (a module-level constant when the file runs)
    for _ in range(6):
        m = re.search(r"name '(\w+)' is only defined by module-level code", err) if rc == 1 else None
        if not m or m.group(1) not in (module_globals or {}) or m.group(1) in defs:
            break
        text = define_text(module_globals[m.group(1)])
        # a tensor the kernel only tests against None (nsa_bwd's `block_counts is not None`): its presence
        if text is None and only_none_tests(tree, name, m.group(1)):
            text = "None" if module_globals[m.group(1)] is None else "True"
        if text is None:
            break
        defs = dict(defs)
        defs[m.group(1)] = text
        args += ["-D", f"{m.group(1)}={defs[m.group(1)]}"]
        rc, out, err = run([tilec, "ir", path, "--kernel", name] + args, 60)
    return rc, out, err, defs, args


BATCH_NAMES = re.compile(r"(?i)^(n|b|bs|batch|batch_size|num_batches|nbatch)$")


def verify_kernel(tilec, path, name, defs, args, res):
    """`tilec run --verify` on the cpu of a kernel that reads, at shrunk sizes where they fit; when
    that passes the time limit, again as a user shrinks a problem (sizes named like a batch at 1,
    large sizes at 64, symbolic sizes at 16 rows instead of 128): the reference interpreter is slow."""
    rc2, out2, err2 = verify_at(tilec, path, name, defs, args, shrink(defs), "128")
    if rc2 == "timeout":
        # the batch at 1, and the sizes shrink() took to 256 further, to 64
        small = {k: ("1" if BATCH_NAMES.match(k) and re.fullmatch(r"\d+", v) else
                     "64" if v == "256" and defs.get(k) != "256" else v) for k, v in shrink(defs).items()}
        rc3, out3, err3 = verify_at(tilec, path, name, defs, args, small, "16")
        if rc3 != "timeout" and not (rc3 == 1 and re.search(r":\d+:\d+: error:", err3)):
            rc2, out2, err2 = rc3, out3, err3
            res.update(run_note="at smaller sizes (batch 1) after the first ones passed the time limit")
    res.update(run_rc=rc2, run_out=out2, run_err=err2)
    recipe = inputs.recipe_for(path, name)
    if recipe is not None:
        how = f"inputs from tests/compat/inputs.py {recipe.__name__}" if inputs.np is not None else \
            "random inputs: tests/compat/inputs.py has a recipe but numpy is missing"
        res.update(run_note="; ".join(filter(None, [res.get("run_note"), how])))
    return res


def verify_at(tilec, path, name, defs, args, small, sym_rows):
    sargs = []
    for k, v in small.items():
        sargs += ["-D", f"{k}={v}"]
    rc2, out2, err2 = verify_run(tilec, path, name, sargs)
    if rc2 == 2 and "give its size with -D" not in err2 and "needs an integer value" not in err2:
        rc2, out2, err2 = verify_run(tilec, path, name, args)
    # a T.dynamic / T.symbolic size is given at run time, as a user gives it: 128 rows unless bound
    # (named by a plain symbolic dimension, or by one computed from it such as seq_len * heads)
    for _ in range(6):
        m = re.search(r"give its size with -D (\w+)=N", err2) if rc2 == 2 else None
        if not m:
            break
        sargs += ["-D", f"{m.group(1)}={small.get(m.group(1), sym_rows)}"]
        rc2, out2, err2 = verify_run(tilec, path, name, sargs)
    # sizes the shrinking made inconsistent (a split of 256 rows into 8 parts smaller than the
    # file's block, a T.copy of a short slice into a full tile): the file's own sizes
    if rc2 == 1 and small != defs and re.search(r":\d+:\d+: error:", err2):
        full = list(args)
        for i in range(0, len(sargs), 2):  # the symbolic sizes bound above
            if sargs[i + 1].split("=")[0] not in defs:
                full += sargs[i:i + 2]
        rc3, out3, err3 = verify_run(tilec, path, name, full)
        if rc3 != 1:
            rc2, out2, err2 = rc3, out3, err3
    return rc2, out2, err2


# `--target T` / `--backend B`: where the runs go (the cpu unless given; the cuda emulator is
# `--target cuda,arch=sm_90a --backend emu`), and their time limit.
RUN_WHERE = []
RUN_LIMIT = 120


def verify_run(tilec, path, name, args):
    """`tilec run --verify` with the -D arguments args; where tests/compat/inputs.py has a recipe for
    the kernel, on the inputs it makes (shapes and dtypes from a first run's `--save`)."""
    cmd = [tilec, "run", path, "--kernel", name] + RUN_WHERE + args
    recipe = inputs.recipe_for(path, name) if inputs.np is not None else None
    if recipe is None:
        return run(cmd + ["--verify"], RUN_LIMIT)
    defs = dict(a.split("=", 1) for a in args[1::2] if "=" in a)
    with tempfile.TemporaryDirectory() as tmp:
        saved, made = os.path.join(tmp, "saved"), os.path.join(tmp, "inputs")
        rc, out, err = run(cmd + ["--save", saved], RUN_LIMIT)
        if rc != 0:
            return rc, out, err
        try:
            inputs.write_inputs(recipe, saved, defs, made)
        except (ValueError, OSError) as e:
            return 1, "", f"tests/compat/inputs.py: {e}\n"
        return run(cmd + ["--verify", "--load", made], RUN_LIMIT)


def classify(r):
    rc = r["ir_rc"]
    if rc == "timeout":
        return "timeout"
    if rc == 0:
        return "reads and evaluates"
    if isinstance(rc, int) and (rc < 0 or rc >= 128):
        return "crash"
    if re.search(r":\d+:\d+: error:", r["ir_err"]):
        return "a file:line:col error for a construct tilec lacks"
    return "needs a size the file's defaults do not give (usage error)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout")
    ap.add_argument("--tilec", default=os.environ.get("TILEC", "build/tilec"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--details", help="write one line per kernel to this file")
    ap.add_argument("--static", action="store_true",
                    help="bind sizes from the source text alone (no run of the file with stand-ins)")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="run only the files whose path under examples/ contains TEXT (repeatable)")
    ap.add_argument("--target", help="run the kernels on this target (default: cpu)")
    ap.add_argument("--backend", help="... through this backend (emu: the cuda or metal emulator)")
    o = ap.parse_args()
    global RUN_LIMIT
    if o.target:
        RUN_WHERE.extend(["--target", o.target])
    if o.backend:
        RUN_WHERE.extend(["--backend", o.backend])
        RUN_LIMIT = 300
    if "TILEC_CACHE_DIR" not in os.environ:  # the runs never touch the user's kernel cache
        import tempfile
        os.environ["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilec-compat-cache-")
    root = os.path.join(o.checkout, "examples")
    if not os.path.isdir(root):
        sys.exit(f"compat: {root} is not a folder (give a TileLang checkout)")
    jobs, files, bw_files = [], 0, set()
    parsed = []
    for dirpath, _, names in sorted(os.walk(root)):
        for fname in sorted(names):
            if not fname.endswith(".py"):
                continue
            path = os.path.join(dirpath, fname)
            if o.only and not any(t in os.path.relpath(path, root) for t in o.only):
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            if not find_kernels(tree):
                continue
            parsed.append((path, text, tree))
    with concurrent.futures.ThreadPoolExecutor(max_workers=o.jobs) as ex:
        listed = list(ex.map(lambda pt: file_kernels(o.tilec, pt[0], pt[2], not o.static), parsed))
    module_globals = {}
    trees = {path: tree for path, _, tree in parsed}
    for (path, text, tree), (names, traced, mg) in zip(parsed, listed):
        module_globals[path] = mg
        if not names:
            continue
        files += 1
        if BLACKWELL.search(text):
            bw_files.add(path)
        fns = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for name in names:
            fn = fns.get(name)
            later = []
            if name in traced:
                defs = traced_bindings(tree, fn, traced[name])
                later = [traced_bindings(tree, fn, rec) for rec in traced[name].get("later", [])]
            elif traced and fn is not None:
                # a kernel the file's default run does not call (another --kernel choice, the other
                # branch of use_atomic): the sizes its sibling kernels were called with, by name
                sib, sib_shapes = {}, {}
                for rec in traced.values():
                    for k, v in rec.get("args", {}).items():
                        sib.setdefault(k, v)
                    for k, v in rec.get("shapes", {}).items():
                        sib_shapes.setdefault(k, v)
                defs = bindings(tree, name, fn)
                for p in required_params(fn) + sorted(const_names(fn)):
                    if p not in defs and p in sib and define_text(sib[p]) is not None:
                        defs[p] = define_text(sib[p])
                # ... or their bindings (an @autotune sibling's first configuration)
                for sname, rec in traced.items():
                    if fns.get(sname) is None:
                        continue
                    sdefs = traced_bindings(tree, fns[sname], rec)
                    for p in required_params(fn):
                        if p not in defs and p in sdefs:
                            defs[p] = sdefs[p]
                # a size no call gives but the file's __main__ block names (`blk_k = 512`)
                for p in required_params(fn):
                    if p not in defs and define_text(mg.get(p)) is not None:
                        defs[p] = define_text(mg[p])
                for k, v in annotated_sizes(fn, sib_shapes).items():
                    defs.setdefault(k, define_text(v))
            else:
                defs = bindings(tree, name, fn) if fn is not None else {}
            jobs.append((path, name, defs, later))
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=o.jobs) as ex:
        futs = [ex.submit(one_kernel, o.tilec, p, n, d, not o.no_verify, module_globals.get(p, {}), trees[p], lt)
                for p, n, d, lt in jobs]
        for f in futs:
            results.append(f.result())
    table = collections.Counter()
    constructs = collections.Counter()
    construct_files = collections.defaultdict(set)
    verify = collections.Counter()
    bw = collections.Counter()
    lines = []
    later_reads = 0
    for r in results:
        c = classify(r)
        table[c] += 1
        is_bw = r["file"] in bw_files
        bw[(is_bw, c == "reads and evaluates")] += 1
        detail = ""
        if c == "a file:line:col error for a construct tilec lacks":
            k = construct_of(r["ir_err"])
            constructs[k] += 1
            construct_files[k].add(r["file"])
            detail = k
        if c == "crash" or c == "needs a size the file's defaults do not give (usage error)":
            detail = (r["ir_err"].strip().splitlines() or ["?"])[0][:120]
        if "run_rc" in r:
            v = r["run_rc"]
            vk = "verified" if v == 0 else "verification failed" if v == 3 else "timeout" if v == "timeout" else \
                "crash" if isinstance(v, int) and (v < 0 or v >= 128) else f"did not run (exit {v})"
            verify[vk] += 1
            if vk != "verified":
                detail += " | run: " + vk + ": " + ((r["run_err"] or r["run_out"]).strip().splitlines() or ["?"])[-1][:120]
            if r.get("run_note"):
                detail += " | run " + r["run_note"]
        if r.get("read_with_call"):
            detail = f"(read with the values of the run's call {r['read_with_call']}; with the first call's: {construct_of(r['first_err'])})" + detail
            later_reads += 1
        rel = os.path.relpath(r["file"], o.checkout)
        lines.append(f"{rel} {r['kernel']} [{c}] {' '.join(f'{k}={v}' for k, v in r['defs'].items())} {detail}")
    n = len(results)
    print(f"TileLang examples: {files} files define kernels, {n} kernels in all\n")
    print("| outcome | kernels |\n|---|---|")
    for k in ["reads and evaluates", "a file:line:col error for a construct tilec lacks",
              "needs a size the file's defaults do not give (usage error)", "timeout", "crash"]:
        print(f"| {k} | {table.get(k, 0)} |")
    nbw = bw[(True, True)] + bw[(True, False)]
    non = n - nbw
    ok_non = bw[(False, True)]
    print(f"\nWithout the {nbw} kernels of files that need Blackwell-only hardware (tcgen05, TMEM): "
          f"{ok_non} of {non} read ({100.0 * ok_non / max(non, 1):.0f}%)")
    if later_reads:
        print(f"{later_reads} of the kernels that read do so with the values of a later call of the file's run "
              "(the first call's meet a construct tilec lacks; --details names them)")
    if not o.no_verify:
        where = " ".join(RUN_WHERE[1::2]) or "cpu"
        print(f"\n| `tilec run --verify` on {where}, of those that read | kernels |\n|---|---|")
        for k, v in sorted(verify.items(), key=lambda kv: -kv[1]):
            print(f"| {k} | {v} |")
    print(f"\nTop missing constructs (kernels, files):")
    for k, v in constructs.most_common(o.top):
        print(f"  {v:4d} {len(construct_files[k]):4d}  {k}")
    if o.details:
        with open(o.details, "w") as f:
            f.write("\n".join(sorted(lines)) + "\n")
    return 0 if table.get("crash", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
