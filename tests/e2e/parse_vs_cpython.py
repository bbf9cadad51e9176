#!/usr/bin/env python3
"""Compare tilec's syntax tree (tests/helpers/ast_dump) with CPython's ast module.

Usage: parse_vs_cpython.py AST_DUMP FILE...
Renders CPython's tree in tilec's S-expression dump format (src/front/ast.c) and compares it
statement by statement. f-string contents are not compared (tilec keeps them as raw text), nor
non-ASCII bytes (the two dumps spell them differently). Prints one PASS or FAIL line per file.
"""
import ast
import re
import subprocess
import sys
import warnings

warnings.simplefilter("ignore")
OPS = {ast.Add:'+',ast.Sub:'-',ast.Mult:'*',ast.Div:'/',ast.FloorDiv:'//',ast.Mod:'%',ast.Pow:'**',ast.MatMult:'@',
       ast.BitAnd:'&',ast.BitOr:'|',ast.BitXor:'^',ast.LShift:'<<',ast.RShift:'>>'}
CMP = {ast.Eq:'==',ast.NotEq:'!=',ast.Lt:'<',ast.LtE:'<=',ast.Gt:'>',ast.GtE:'>=',ast.In:'in',ast.NotIn:'not-in',ast.Is:'is',ast.IsNot:'is-not'}
def fl(v):
    for p in range(1,18):
        t = '%.*g' % (p, v)
        if float(t) == v: break
    if not any(c in t for c in '.eni'): t += '.0'
    return t
def s(x):
    out = '"'
    for ch in x:
        c = ord(ch)
        if ch == '"': out += '\\"'
        elif ch == '\\': out += '\\\\'
        elif ch == '\n': out += '\\n'
        elif ch == '\t': out += '\\t'
        elif ch == '\r': out += '\\r'
        elif c < 0x20 or c == 0x7f: out += '\\x%02x' % c
        else: out += ch
    return out + '"'
def L(xs): return ''.join(' ' + d(x) for x in xs)
def opt(x): return ' ' + (d(x) if x is not None else '_')
def blk(h, xs, always=False):
    if not xs and not always: return ''
    return ' (%s%s)' % (h, L(xs))
def params(a):
    out = []
    pos = a.posonlyargs + a.args
    defs = [None] * (len(pos) - len(a.defaults)) + a.defaults
    def one(arg, kind, default):
        if kind == '' and arg.annotation is None and default is None: return arg.arg
        r = '(' + arg.arg
        if kind: r += ' ' + kind
        if arg.annotation is not None: r += ' : ' + d(arg.annotation)
        if default is not None: r += ' = ' + d(default)
        return r + ')'
    for i, p in enumerate(pos): out.append(one(p, 'posonly' if i < len(a.posonlyargs) else '', defs[i]))
    if a.vararg: out.append(one(a.vararg, 'vararg', None))
    for p, df in zip(a.kwonlyargs, a.kw_defaults): out.append(one(p, 'kwonly', df))
    if a.kwarg: out.append(one(a.kwarg, 'kwarg', None))
    return '(params' + ''.join(' ' + o for o in out) + ')'
def d(n):
    t = type(n)
    if t is ast.Name: return n.id
    if t is ast.Constant:
        v = n.value
        if v is True: return 'True'
        if v is False: return 'False'
        if v is None: return 'None'
        if v is Ellipsis: return '...'
        if isinstance(v, int): return str(v) if v <= 2**63-1 else '(int-overflow)'
        if isinstance(v, float): return fl(v)
        if isinstance(v, complex): return fl(v.imag) + 'j'
        if isinstance(v, bytes): return 'b' + s(v.decode('latin-1'))
        if isinstance(v, str):
            return s(v)
    if t is ast.JoinedStr: return 'FSTRING'
    if t is ast.Attribute: return '(. %s %s)' % (d(n.value), n.attr)
    if t is ast.Subscript: return '([] %s %s)' % (d(n.value), d(n.slice))
    if t is ast.Slice: return '(:%s%s%s)' % (opt(n.lower), opt(n.upper), opt(n.step))
    if t is ast.Call:
        return '(call %s%s%s)' % (d(n.func), L(n.args), ''.join(' (kw %s %s)' % (k.arg, d(k.value)) if k.arg else ' (** %s)' % d(k.value) for k in n.keywords))
    if t is ast.BinOp: return '(%s %s %s)' % (OPS[type(n.op)], d(n.left), d(n.right))
    if t is ast.UnaryOp:
        o = {ast.Not:'not', ast.USub:'u-', ast.UAdd:'u+', ast.Invert:'~'}[type(n.op)]
        return '(%s %s)' % (o, d(n.operand))
    if t is ast.BoolOp: return '(%s%s)' % ('and' if isinstance(n.op, ast.And) else 'or', L(n.values))
    if t is ast.Compare: return '(cmp %s%s)' % (d(n.left), ''.join(' %s %s' % (CMP[type(o)], d(c)) for o, c in zip(n.ops, n.comparators)))
    if t is ast.IfExp: return '(ifexp %s %s %s)' % (d(n.test), d(n.body), d(n.orelse))
    if t is ast.Tuple: return '(tuple%s)' % L(n.elts)
    if t is ast.List: return '(list%s)' % L(n.elts)
    if t is ast.Set: return '(set%s)' % L(n.elts)
    if t is ast.Dict: return '(dict%s)' % ''.join(' (%s %s)' % (d(k), d(v)) if k is not None else ' (** %s)' % d(v) for k, v in zip(n.keys, n.values))
    if t is ast.Starred: return '(* %s)' % d(n.value)
    if t is ast.Lambda: return '(lambda %s %s)' % (params(n.args), d(n.body))
    def gens(gs): return ''.join(' (%s %s %s%s)' % ('async-for' if g.is_async else 'for', d(g.target), d(g.iter), ''.join(' (if %s)' % d(c) for c in g.ifs)) for g in gs)
    if t is ast.ListComp: return '(listcomp %s%s)' % (d(n.elt), gens(n.generators))
    if t is ast.SetComp: return '(setcomp %s%s)' % (d(n.elt), gens(n.generators))
    if t is ast.GeneratorExp: return '(genexp %s%s)' % (d(n.elt), gens(n.generators))
    if t is ast.DictComp: return '(dictcomp %s %s%s)' % (d(n.key), d(n.value), gens(n.generators))
    if t is ast.NamedExpr: return '(:= %s %s)' % (d(n.target), d(n.value))
    if t is ast.Await: return '(await %s)' % d(n.value)
    if t is ast.Yield: return '(yield%s)' % (opt(n.value) if n.value else '')
    if t is ast.YieldFrom: return '(yield-from %s)' % d(n.value)
    if t in (ast.FunctionDef, ast.AsyncFunctionDef):
        r = '(%s %s %s' % ('async-def' if t is ast.AsyncFunctionDef else 'def', n.name, params(n.args))
        if n.returns: r += ' (-> %s)' % d(n.returns)
        return r + blk('decorators', n.decorator_list) + blk('body', n.body, True) + ')'
    if t is ast.ClassDef:
        return '(class %s%s%s%s)' % (n.name, blk('bases', n.bases + n.keywords), blk('decorators', n.decorator_list), blk('body', n.body, True))
    if t is ast.keyword: return '(kw %s %s)' % (n.arg, d(n.value)) if n.arg else '(** %s)' % d(n.value)
    if t is ast.Return: return '(return%s)' % (opt(n.value) if n.value else '')
    if t is ast.Assign: return '(=%s%s)' % (L(n.targets), opt(n.value))
    if t is ast.AugAssign: return '(%s=%s%s)' % (OPS[type(n.op)], opt(n.target), opt(n.value))
    if t is ast.AnnAssign: return '(ann%s%s%s)' % (opt(n.target), opt(n.annotation), opt(n.value) if n.value else '')
    if t in (ast.For, ast.AsyncFor): return '(%s%s%s%s%s)' % ('async-for' if t is ast.AsyncFor else 'for', opt(n.target), opt(n.iter), blk('body', n.body, True), blk('else', n.orelse))
    if t is ast.While: return '(while%s%s%s)' % (opt(n.test), blk('body', n.body, True), blk('else', n.orelse))
    if t is ast.If: return '(if%s%s%s)' % (opt(n.test), blk('body', n.body, True), blk('else', n.orelse))
    if t in (ast.With, ast.AsyncWith): return '(%s%s%s)' % ('async-with' if t is ast.AsyncWith else 'with', ''.join(' (item%s%s)' % (opt(i.context_expr), opt(i.optional_vars) if i.optional_vars else '') for i in n.items), blk('body', n.body, True))
    if t is ast.Expr: return '(expr%s)' % opt(n.value)
    if t is ast.Pass: return 'pass'
    if t is ast.Break: return 'break'
    if t is ast.Continue: return 'continue'
    if t is ast.Assert: return '(assert%s%s)' % (opt(n.test), opt(n.msg) if n.msg else '')
    def al(a): return '(as %s %s)' % (a.name, a.asname) if a.asname else '(alias %s)' % a.name
    if t is ast.Import: return '(import%s)' % ''.join(' ' + al(a) for a in n.names)
    if t is ast.ImportFrom: return '(from %s%s)' % ('.' * n.level + (n.module or ''), ''.join(' ' + al(a) for a in n.names))
    if t is ast.Global: return '(global%s)' % ''.join(' ' + x for x in n.names)
    if t is ast.Nonlocal: return '(nonlocal%s)' % ''.join(' ' + x for x in n.names)
    if t is ast.Delete: return '(del%s)' % L(n.targets)
    if t is ast.Raise: return '(raise%s%s)' % (opt(n.exc) if n.exc else '', ' (from %s)' % d(n.cause) if n.cause else '')
    if t in (ast.Try, ast.TryStar):
        hs = ''.join(' (except%s%s%s)' % (opt(h.type), ' ' + h.name if h.name else '', blk('body', h.body, True)) for h in n.handlers)
        return '(%s%s%s%s%s)' % ('try*' if t is ast.TryStar else 'try', blk('body', n.body, True), hs, blk('else', n.orelse), blk('finally', n.finalbody))
    if t is ast.Match: return '(match)'
    return '?' + t.__name__


def normalize(text):
    text = re.sub(r'([ (])f"([^"\\]|\\.)*"', r'\1F', text)
    return ''.join(c for c in text.replace('FSTRING', 'F') if ord(c) < 0x80 and c != '\ufffd')


def main():
    dump, files = sys.argv[1], sys.argv[2:]
    out = subprocess.run([dump] + files, capture_output=True).stdout.decode('utf-8', 'replace')
    ours = {}
    cur = None
    for line in out.split('\n'):
        if line.startswith('== '):
            cur = line[3:]
            ours[cur] = []
        elif cur is not None and line:
            ours[cur].append(line)
    failed = 0
    for f in files:
        try:
            tree = ast.parse(open(f, 'rb').read())
        except (SyntaxError, ValueError):
            continue  # only files CPython accepts are compared
        want = [normalize(d(st)) for st in tree.body]
        got = [normalize(x) for x in ours.get(f, ['ERR no output'])]
        if want == got:
            print('PASS parse vs cpython %s' % f)
            continue
        failed += 1
        print('FAIL parse vs cpython %s' % f)
        for i, (w, g) in enumerate(zip(want + [''] * len(got), got + [''] * len(want))):
            if w != g:
                print('  statement %d\n  cpython: %s\n  tilec:   %s' % (i + 1, w[:400], g[:400]))
                break
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
