/* test_parse.c: the Python parser: the tree of every statement and expression form (by its
 * S-expression dump), node places, syntax errors with their exact places, error recovery,
 * real-world files, and malformed input (truncations and random mutations must never crash,
 * hang or leak). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "front/ast.h"
#include "harness.h"
#include "py_samples.h"
#include "util/strbuf.h"

static char out_buf[1 << 17];

/* Parse src; return the dump of each top-level statement, one per line, or "ERR l:c: msg"
 * when reading fails. */
static const char *parse(const char *text) {
  tc_source src = {"t.py", text, strlen(text)};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks;
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ast *m = NULL;
  if (tc_lex(&arena, &src, &toks, &err)) m = tc_parse(&arena, &src, &toks, &err);
  if (!m) {
    tc_sb_printf(&sb, "ERR %d:%d: %s", err.line, err.col, err.message);
  } else {
    for (int i = 0; i < m->list.n; i++) {
      if (i) tc_sb_putc(&sb, '\n');
      tc_ast_dump(&sb, m->list.v[i]);
    }
  }
  snprintf(out_buf, sizeof out_buf, "%s", tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  tc_arena_free(&arena);
  return out_buf;
}

/* Parse an expression statement and return the dump of the expression alone. */
static const char *expr(const char *text) {
  static char buf[1 << 15];
  const char *d = parse(text);
  size_t n = strlen(d);
  if (strncmp(d, "(expr ", 6) == 0 && d[n - 1] == ')') snprintf(buf, sizeof buf, "%.*s", (int)(n - 7), d + 6);
  else snprintf(buf, sizeof buf, "%s", d);
  return buf;
}

/* ---- kernel constructs ------------------------------------------------------------------ */

TEST(kernel_constructs) {
  CHECK_STR(parse("with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n  pass\n"),
            "(with (item (call (. T Kernel) (call (. T ceildiv) N bn) (call (. T ceildiv) M bm) (kw threads 128)) "
            "(tuple bx by)) (body pass))");
  CHECK_STR(parse("with T.Kernel(g, threads=(32, 4)) as bx:\n  pass\n"),
            "(with (item (call (. T Kernel) g (kw threads (tuple 32 4))) bx) (body pass))");
  CHECK_STR(parse("for i, j in T.Parallel(M, N):\n    C[i, j] += A[i, j]\n"),
            "(for (tuple i j) (call (. T Parallel) M N) (body (+= ([] C (tuple i j)) ([] A (tuple i j)))))");
  CHECK_STR(parse("for k in T.Pipelined(T.ceildiv(K, bk), num_stages=3):\n    pass\n"),
            "(for k (call (. T Pipelined) (call (. T ceildiv) K bk) (kw num_stages 3)) (body pass))");
  CHECK_STR(parse("def f(A: T.Tensor((M, K), dtype)):\n  pass\n"),
            "(def f (params (A : (call (. T Tensor) (tuple M K) dtype))) (body pass))");
  CHECK_STR(parse("A: T.Tensor((M, K), dtype)\n"), "(ann A (call (. T Tensor) (tuple M K) dtype))");
  CHECK_STR(parse("T.copy(A[by * bm, k * bk], A_s)\n"),
            "(expr (call (. T copy) ([] A (tuple (* by bm) (* k bk))) A_s))");
  CHECK_STR(expr("A[0:4, :]"), "([] A (tuple (: 0 4 _) (: _ _ _)))");
  CHECK_STR(expr("A[bz, k * bn:(k + 1) * bn, by, :]"),
            "([] A (tuple bz (: (* k bn) (* (+ k 1) bn) _) by (: _ _ _)))");
  CHECK_STR(parse("T.gemm(A_s, B_s, C_l, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)\n"),
            "(expr (call (. T gemm) A_s B_s C_l (kw transpose_B True) (kw policy (. (. T GemmWarpPolicy) FullRow))))");
  CHECK_STR(parse("M, N, K = T.const(\"M, N, K\")\n"), "(= (tuple M N K) (call (. T const) \"M, N, K\"))");
  CHECK_STR(parse("@tilelang.jit(out_idx=[-1])\ndef f(M, N, block_M=128, dtype=T.float16):\n"
                  "    @T.prim_func\n    def main(A: T.Tensor((M, N), dtype)):\n        pass\n    return main\n"),
            "(def f (params M N (block_M = 128) (dtype = (. T float16))) "
            "(decorators (call (. tilelang jit) (kw out_idx (list (u- 1))))) "
            "(body (def main (params (A : (call (. T Tensor) (tuple M N) dtype))) (decorators (. T prim_func)) "
            "(body pass)) (return main)))");
  CHECK_STR(parse("x = T.if_then_else(i < n, A[i], T.cast(0, \"float16\")).astype(\"float\")\n"),
            "(= x (call (. (call (. T if_then_else) (cmp i < n) ([] A i) (call (. T cast) 0 \"float16\")) astype) \"float\"))");
}

/* ---- expressions ------------------------------------------------------------------------ */

TEST(precedence) {
  CHECK_STR(expr("a + b * c ** -d ** e"), "(+ a (* b (** c (u- (** d e)))))");
  CHECK_STR(expr("a - b - c"), "(- (- a b) c)");
  CHECK_STR(expr("a | b ^ c & d << e + f"), "(| a (^ b (& c (<< d (+ e f)))))");
  CHECK_STR(expr("a // b % c @ d / e"), "(/ (@ (% (// a b) c) d) e)");
  CHECK_STR(expr("-a ** 2"), "(u- (** a 2))");
  CHECK_STR(expr("~+-x"), "(~ (u+ (u- x)))");
  CHECK_STR(expr("not a and b or c and not d"), "(or (and (not a) b) (and c (not d)))");
  CHECK_STR(expr("a or b or c"), "(or a b c)");
  CHECK_STR(expr("a < b <= c == d != e > f >= g"), "(cmp a < b <= c == d != e > f >= g)");
  CHECK_STR(expr("a in b not in c is d is not e"), "(cmp a in b not-in c is d is-not e)");
  CHECK_STR(expr("not a == b"), "(not (cmp a == b))");
  CHECK_STR(expr("a if b else c if d else e"), "(ifexp b a (ifexp d c e))");
  CHECK_STR(expr("lambda: 0"), "(lambda (params) 0)");
  CHECK_STR(expr("lambda x, y=1, *a, k, **kw: x if y else k"),
            "(lambda (params x (y = 1) (a vararg) (k kwonly) (kw kwarg)) (ifexp y x k))");
  CHECK_STR(expr("(a + b) * c"), "(* (+ a b) c)");
  CHECK_STR(expr("a.b.c(d)[e].f"), "(. ([] (call (. (. a b) c) d) e) f)");
  CHECK_STR(expr("await x ** 2"), "(** (await x) 2)");
  CHECK_STR(expr("x[1:2, ::3, a:]"), "([] x (tuple (: 1 2 _) (: _ _ 3) (: a _ _)))");
  CHECK_STR(expr("x[i,]"), "([] x (tuple i))");
  CHECK_STR(expr("x[()]"), "([] x (tuple))");
  CHECK_STR(expr("x[*a, b]"), "([] x (tuple (* a) b))");
  CHECK_STR(expr("x[*a]"), "([] x (tuple (* a)))");
  CHECK_STR(expr("f(a)(b)"), "(call (call f a) b)");
  CHECK_STR(expr("a is not -1"), "(cmp a is-not (u- 1))");
}

TEST(literals) {
  CHECK_STR(expr("1"), "1");
  CHECK_STR(expr("0xff"), "255");
  CHECK_STR(expr("99999999999999999999"), "(int-overflow)");
  CHECK_STR(expr("1.5"), "1.5");
  CHECK_STR(expr("2."), "2.0");
  CHECK_STR(expr("1e100"), "1e+100");
  CHECK_STR(expr("3j"), "3.0j");
  CHECK_STR(expr("True"), "True");
  CHECK_STR(expr("None"), "None");
  CHECK_STR(expr("..."), "...");
  CHECK_STR(expr("'a' \"b\" '''c'''"), "\"abc\"");
  CHECK_STR(expr("'a\\n'"), "\"a\\n\"");
  CHECK_STR(expr("b'x' b'y'"), "b\"xy\"");
  CHECK_STR(expr("f'{x}'"), "f\"{x}\"");
  CHECK_STR(expr("'a{' f'{x}' 'b}'"), "f\"a{{{x}b}}\""); /* plain parts keep their braces literal */
  CHECK_STR(expr("'a' b'b'"), "(error \"t.py:1:1: error: cannot mix bytes and nonbytes literals\")");
}

TEST(displays) {
  CHECK_STR(expr("()"), "(tuple)");
  CHECK_STR(expr("(1,)"), "(tuple 1)");
  CHECK_STR(expr("(1, *a, 2,)"), "(tuple 1 (* a) 2)");
  CHECK_STR(expr("[]"), "(list)");
  CHECK_STR(expr("[1, [2], *b]"), "(list 1 (list 2) (* b))");
  CHECK_STR(expr("{}"), "(dict)");
  CHECK_STR(expr("{1: 2, **d, 'k': v,}"), "(dict (1 2) (** d) (\"k\" v))");
  CHECK_STR(expr("{1, 2, *s}"), "(set 1 2 (* s))");
  CHECK_STR(expr("{**a}"), "(dict (** a))");
  CHECK_STR(parse("x = 1, 2\n"), "(= x (tuple 1 2))");
  CHECK_STR(parse("x = 1,\n"), "(= x (tuple 1))");
  CHECK_STR(parse("x = *a, *b\n"), "(= x (tuple (* a) (* b)))");
}

TEST(comprehensions) {
  CHECK_STR(expr("[x for x in y]"), "(listcomp x (for x y))");
  CHECK_STR(expr("[x * y for x in a if x if x > 1 for y in b]"),
            "(listcomp (* x y) (for x a (if x) (if (cmp x > 1))) (for y b))");
  CHECK_STR(expr("{k: v for k, v in d.items()}"), "(dictcomp k v (for (tuple k v) (call (. d items))))");
  CHECK_STR(expr("{x for x in s}"), "(setcomp x (for x s))");
  CHECK_STR(expr("(x for x in g)"), "(genexp x (for x g))");
  CHECK_STR(expr("sum(x for x in g)"), "(call sum (genexp x (for x g)))");
  CHECK_STR(expr("[x async for x in g]"), "(listcomp x (async-for x g))");
  CHECK_STR(expr("[a if c else b for a, b in z]"), "(listcomp (ifexp c a b) (for (tuple a b) z))");
  CHECK_STR(expr("[y for x in a for y in x if y]"), "(listcomp y (for x a) (for y x (if y)))");
  CHECK_STR(expr("[(i, j) for i in range(3) for j in range(i)]"),
            "(listcomp (tuple i j) (for i (call range 3)) (for j (call range i)))");
  CHECK_STR(expr("[x for x in lambda: y]"), "(error \"t.py:1:13: error: invalid syntax\")");
}

TEST(calls) {
  CHECK_STR(expr("f()"), "(call f)");
  CHECK_STR(expr("f(a, *b, c=1, **d)"), "(call f a (* b) (kw c 1) (** d))");
  CHECK_STR(expr("f(a, b,)"), "(call f a b)");
  CHECK_STR(expr("f(*a, *b, k=1, *c, **d, e=2)"), "(call f (* a) (* b) (* c) (kw k 1) (** d) (kw e 2))");
  CHECK_STR(expr("f(x := 1)"), "(call f (:= x 1))");
  CHECK_STR(expr("f(lambda x: x, key=lambda y: -y)"),
            "(call f (lambda (params x) x) (kw key (lambda (params y) (u- y))))");
}

TEST(named_starred_yield) {
  CHECK_STR(parse("if (n := len(a)) > 10:\n  pass\n"), "(if (cmp (:= n (call len a)) > 10) (body pass))");
  CHECK_STR(parse("while chunk := f():\n  pass\n"), "(while (:= chunk (call f)) (body pass))");
  CHECK_STR(parse("def g():\n  x = yield\n  y = yield a, b\n  yield from z\n  await w\n"),
            "(def g (params) (body (= x (yield)) (= y (yield (tuple a b))) (expr (yield-from z)) (expr (await w))))");
  CHECK_STR(expr("(yield)"), "(yield)");
  CHECK_STR(parse("first, *rest = x\n"), "(= (tuple first (* rest)) x)");
  CHECK_STR(parse("[a, *b] = c\n"), "(= (list a (* b)) c)");
}

/* ---- statements ------------------------------------------------------------------------- */

TEST(function_definitions) {
  CHECK_STR(parse("def f(a, b, /, c, d=1, *args, e, f=2, **kw) -> int:\n  return a\n"),
            "(def f (params (a posonly) (b posonly) c (d = 1) (args vararg) (e kwonly) (f kwonly = 2) (kw kwarg)) "
            "(-> int) (body (return a)))");
  CHECK_STR(parse("def f(*, a, b: int = 3): pass\n"), "(def f (params (a kwonly) (b kwonly : int = 3)) (body pass))");
  CHECK_STR(parse("def f(a: 'x', *b: int, **c: str,): pass\n"),
            "(def f (params (a : \"x\") (b vararg : int) (c kwarg : str)) (body pass))");
  CHECK_STR(parse("@a\n@b.c(1, k=2)\ndef f(): pass\n"),
            "(def f (params) (decorators a (call (. b c) 1 (kw k 2))) (body pass))");
  CHECK_STR(parse("async def f():\n  async for x in y:\n    pass\n  async with a as b:\n    pass\n"),
            "(async-def f (params) (body (async-for x y (body pass)) (async-with (item a b) (body pass))))");
  CHECK_STR(parse("def f():\n  return\n"), "(def f (params) (body (return)))");
  CHECK_STR(parse("def f(): return 1, 2\n"), "(def f (params) (body (return (tuple 1 2))))");
}

TEST(class_definitions) {
  CHECK_STR(parse("class A:\n  x = 1\n  def m(self): pass\n"),
            "(class A (body (= x 1) (def m (params self) (body pass))))");
  CHECK_STR(parse("@dataclass(frozen=True)\nclass B(A, metaclass=M):\n  pass\n"),
            "(class B (bases A (kw metaclass M)) (decorators (call dataclass (kw frozen True))) (body pass))");
  CHECK_STR(parse("class C(): pass\n"), "(class C (body pass))");
}

TEST(control_flow) {
  CHECK_STR(parse("if a:\n  x\nelif b:\n  y\nelif c:\n  z\nelse:\n  w\n"),
            "(if a (body (expr x)) (else (if b (body (expr y)) (else (if c (body (expr z)) (else (expr w)))))))");
  CHECK_STR(parse("for x in a, b:\n  break\nelse:\n  continue\n"),
            "(for x (tuple a b) (body break) (else continue))");
  CHECK_STR(parse("while True:\n  pass\nelse:\n  pass\n"), "(while True (body pass) (else pass))");
  CHECK_STR(parse("for (a, b), c in z: pass\n"), "(for (tuple (tuple a b) c) z (body pass))");
  CHECK_STR(parse("for x.y in z: pass\n"), "(for (. x y) z (body pass))");
  CHECK_STR(parse("if x: a; b\n"), "(if x (body (expr a) (expr b)))");
  CHECK_STR(parse("if x:\n    if y:\n        pass\n    z = 1\n"), "(if x (body (if y (body pass)) (= z 1)))");
}

TEST(with_statements) {
  CHECK_STR(parse("with a: pass\n"), "(with (item a) (body pass))");
  CHECK_STR(parse("with a as b, c as d: pass\n"), "(with (item a b) (item c d) (body pass))");
  CHECK_STR(parse("with (a as b, c): pass\n"), "(with (item a b) (item c) (body pass))");
  CHECK_STR(parse("with (\n  open(x) as f,\n  open(y) as g,\n): pass\n"),
            "(with (item (call open x) f) (item (call open y) g) (body pass))");
  CHECK_STR(parse("with (a, b) as c: pass\n"), "(with (item (tuple a b) c) (body pass))");
  CHECK_STR(parse("with (open(x)) as f: pass\n"), "(with (item (call open x) f) (body pass))");
  CHECK_STR(parse("with a as [x, y]: pass\n"), "(with (item a (list x y)) (body pass))");
  CHECK_STR(parse("with (a): pass\n"), "(with (item a) (body pass))");
}

TEST(try_statements) {
  CHECK_STR(parse("try:\n  a\nexcept E as e:\n  b\nexcept (F, G):\n  c\nexcept:\n  d\nelse:\n  f\nfinally:\n  g\n"),
            "(try (body (expr a)) (except E e (body (expr b))) (except (tuple F G) (body (expr c))) "
            "(except _ (body (expr d))) (else (expr f)) (finally (expr g)))");
  CHECK_STR(parse("try:\n  a\nfinally:\n  b\n"), "(try (body (expr a)) (finally (expr b)))");
  CHECK_STR(parse("try:\n  a\nexcept* E:\n  b\n"), "(try* (body (expr a)) (except E (body (expr b))))");
  CHECK_STR(parse("raise\n"), "(raise)");
  CHECK_STR(parse("raise E(1) from e\n"), "(raise (call E 1) (from e))");
}

TEST(simple_statements) {
  CHECK_STR(parse("import a, b.c as d\n"), "(import (alias a) (as b.c d))");
  CHECK_STR(parse("from a.b import c, d as e\n"), "(from a.b (alias c) (as d e))");
  CHECK_STR(parse("from . import x\nfrom ..m import (y,\n z,)\nfrom ...p import *\n"),
            "(from . (alias x))\n(from ..m (alias y) (alias z))\n(from ...p (alias *))");
  CHECK_STR(parse("global a, b\nnonlocal c\n"), "(global a b)\n(nonlocal c)");
  CHECK_STR(parse("del a, b[0], c.d\n"), "(del a ([] b 0) (. c d))");
  CHECK_STR(parse("assert x, 'msg'\nassert y\n"), "(assert x \"msg\")\n(assert y)");
  CHECK_STR(parse("pass; pass;\n"), "pass\npass");
  CHECK_STR(parse("a = b = c = 0\n"), "(= a b c 0)");
  CHECK_STR(parse("a[i], b.c = 1, 2\n"), "(= (tuple ([] a i) (. b c)) (tuple 1 2))");
  CHECK_STR(parse("x += 1\nx -= 1\nx *= 2\nx /= 2\nx //= 2\nx %= 2\nx **= 2\nx @= m\nx &= 1\nx |= 1\nx ^= 1\nx <<= 1\nx >>= 1\n"),
            "(+= x 1)\n(-= x 1)\n(*= x 2)\n(/= x 2)\n(//= x 2)\n(%= x 2)\n(**= x 2)\n(@= x m)\n(&= x 1)\n"
            "(|= x 1)\n(^= x 1)\n(<<= x 1)\n(>>= x 1)");
  CHECK_STR(parse("x: int = 5\ny.z: str\nw[0]: float = 1.0\n"), "(ann x int 5)\n(ann (. y z) str)\n(ann ([] w 0) float 1.0)");
  CHECK_STR(parse("match x:\n  case 1:\n    pass\n  case _:\n    y = 2\nz = 3\n"), "(match)\n(= z 3)");
  CHECK_STR(parse("match = 1\nmatch.x = 2\nmatch(a)\n"), "(= match 1)\n(= (. match x) 2)\n(expr (call match a))");
}

/* ---- places ----------------------------------------------------------------------------- */

static tc_ast *parse_tree(tc_arena *arena, tc_source *src, const char *text) {
  src->name = "t.py";
  src->text = text;
  src->len = strlen(text);
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks;
  if (!tc_lex(arena, src, &toks, &err)) return NULL;
  return tc_parse(arena, src, &toks, &err);
}

#define CHECK_LOC(node, l1, c1, l2, c2)     \
  do {                                      \
    CHECK((node) != NULL);                  \
    CHECK_INT((node)->loc.line, l1);        \
    CHECK_INT((node)->loc.col, c1);         \
    CHECK_INT((node)->end_line, l2);      \
    CHECK_INT((node)->end_col, c2);    \
  } while (0)

TEST(node_places) {
  tc_arena arena;
  tc_arena_init(&arena);
  tc_source src;
  tc_ast *m = parse_tree(&arena, &src, "def f(a, b=1):\n    x = a + f(b)\n    return x\ny = '''a\nbc'''\n");
  CHECK(m && m->list.n == 2);
  tc_ast *f = m->list.v[0];
  CHECK_LOC(f, 1, 1, 3, 13);
  CHECK_INT(f->params.v[1].loc.col, 10);
  CHECK_INT(f->params.v[1].default_->loc.col, 12);
  tc_ast *assign = f->list.v[0];
  CHECK_LOC(assign, 2, 5, 2, 17);
  CHECK_LOC(assign->a, 2, 9, 2, 17);       /* a + f(b) */
  CHECK_LOC(assign->a->b, 2, 13, 2, 17);   /* f(b) */
  CHECK_LOC(assign->a->b->list.v[0], 2, 15, 2, 16);
  tc_ast *y = m->list.v[1];
  CHECK_LOC(y, 4, 1, 5, 6);
  CHECK_LOC(y->a, 4, 5, 5, 6);
  CHECK_LOC(m, 1, 1, 5, 6);
  m = parse_tree(&arena, &src, "with T.Kernel(8) as (bx, by):\n  A[0:4, :] = 1\n");
  CHECK(m);
  tc_ast *w = m->list.v[0];
  CHECK_LOC(w, 1, 1, 2, 16);
  CHECK_LOC(w->list.v[0], 1, 6, 1, 29);
  tc_arena_free(&arena);
}

/* ---- errors ----------------------------------------------------------------------------- */

/* The message and place of a syntax error in a definition (fatal) or the first ERROR_STMT. */
static const char *error_of(const char *text) {
  static char buf[2048];
  tc_source src = {"t.py", text, strlen(text)};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks;
  tc_ast *m = NULL;
  snprintf(buf, sizeof buf, "no error");
  if (tc_lex(&arena, &src, &toks, &err)) m = tc_parse(&arena, &src, &toks, &err);
  if (!m) {
    snprintf(buf, sizeof buf, "%d:%d: %s", err.line, err.col, err.message);
  } else {
    for (int i = 0; i < m->list.n; i++)
      if (m->list.v[i]->kind == TC_AST_ERROR_STMT) {
        /* "t.py:L:C: error: msg\n..." -> "L:C: msg" */
        const char *s = m->list.v[i]->str;
        int l = 0, c = 0, off = 0;
        if (sscanf(s, "t.py:%d:%d: error: %n", &l, &c, &off) == 2) {
          const char *nl = strchr(s + off, '\n');
          snprintf(buf, sizeof buf, "%d:%d: %.*s", l, c, (int)(nl ? nl - (s + off) : (long)strlen(s + off)), s + off);
        }
        break;
      }
  }
  tc_arena_free(&arena);
  return buf;
}

TEST(syntax_errors) {
  static const struct { const char *src, *want; } cases[] = {
      {"if x\n    pass\n", "1:5: expected ':'"},
      {"def f():\n  if x\n    pass\n", "2:7: expected ':'"},
      {"for x in y\n  pass\n", "1:11: expected ':'"},
      {"if x:\npass\n", "2:1: expected an indented block after 'if' statement on line 1"},
      {"def f():\n  pass\n\nclass A:\nx = 1\n", "5:1: expected an indented block after class definition on line 4"},
      {"def f():\nreturn 1\n", "2:1: expected an indented block after function definition on line 1"},
      {"@d\ndef f():\nreturn 1\n", "3:1: expected an indented block after function definition on line 2"},
      {"for x in y:\n", "1:12: expected an indented block after 'for' statement on line 1"},
      {"def f():", "1:9: expected an indented block after function definition on line 1"},
      {"while x:\n# c\ny\n", "3:1: expected an indented block after 'while' statement on line 1"},
      {"if a:\n  b\nelse:\nc\n", "4:1: expected an indented block after 'else' statement on line 3"},
      {"if a:\n  b\nelif c:\nd\n", "4:1: expected an indented block after 'elif' statement on line 3"},
      {"try:\nx\n", "2:1: expected an indented block after 'try' statement on line 1"},
      {"try:\n  x\nexcept:\ny\n", "4:1: expected an indented block after 'except' statement on line 3"},
      {"try:\n  x\nfinally:\ny\n", "4:1: expected an indented block after 'finally' statement on line 3"},
      {"with a:\nb\n", "2:1: expected an indented block after 'with' statement on line 1"},
      {"try:\n  x\ny = 1\n", "3:1: expected 'except' or 'finally' block"},
      {"f() = 1\n", "1:1: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
      {"a + b = 1\n", "1:1: cannot assign to expression here. Maybe you meant '==' instead of '='?"},
      {"x = 1 = y\n", "1:5: cannot assign to literal"},
      {"(a, f()) = 1\n", "1:5: cannot assign to function call"},
      {"True = 1\n", "1:1: cannot assign to True"},
      {"for f() in x: pass\n", "1:5: cannot assign to function call"},
      {"with a as f(): pass\n", "1:11: cannot assign to function call"},
      {"[x for 1 in y]\n", "1:8: cannot assign to literal"},
      {"del f()\n", "1:5: cannot delete function call"},
      {"f() += 1\n", "1:1: 'function call' is an illegal expression for augmented assignment"},
      {"a, b += 1\n", "1:1: 'tuple' is an illegal expression for augmented assignment"},
      {"a, b: int\n", "1:1: only single target (not tuple) can be annotated"},
      {"f(): int\n", "1:1: illegal target for annotation"},
      {"*a = b\n", "1:1: starred assignment target must be in a list or tuple"},
      {"*a\n", "1:1: can't use starred expression here"},
      {"x = (*a)\n", "1:6: cannot use starred expression here"},
      {"f(a b)\n", "1:3: invalid syntax. Perhaps you forgot a comma?"},
      {"[1, 2 3]\n", "1:5: invalid syntax. Perhaps you forgot a comma?"},
      {"print 'hello'\n", "1:1: Missing parentheses in call to 'print'. Did you mean print(...)?"},
      {"x = 1 if y\n", "1:5: expected 'else' after 'if' expression"},
      {"if x = 1:\n  pass\n", "1:4: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
      {"if f() = 1:\n  pass\n", "1:4: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
      {"f(x for x in y, 1)\n", "1:3: Generator expression must be parenthesized"},
      {"f(a=1, b)\n", "1:8: positional argument follows keyword argument"},
      {"f(**a, b)\n", "1:8: positional argument follows keyword argument unpacking"},
      {"f(**a, *b)\n", "1:8: iterable argument unpacking follows keyword argument unpacking"},
      {"f(a=1, a=2)\n", "1:8: keyword argument repeated: a"},
      {"f(a.b=1)\n", "1:3: expression cannot contain assignment, perhaps you meant \"==\"?"},
      {"def f(a=1, b):\n  pass\n", "1:12: non-default argument follows default argument"},
      {"def f(a, a):\n  pass\n", "1:10: duplicate argument 'a' in function definition"},
      {"def f(*):\n  pass\n", "1:7: named arguments must follow bare *"},
      {"def f(/, a):\n  pass\n", "1:7: at least one argument must precede /"},
      {"def f(a, /, b, /):\n  pass\n", "1:16: / may appear only once"},
      {"def f(*a, /):\n  pass\n", "1:11: / must be ahead of *"},
      {"def f(**k, a):\n  pass\n", "1:12: arguments cannot follow var-keyword argument"},
      {"def f(*a=1):\n  pass\n", "1:9: var-positional argument cannot have default value"},
      {"def f:\n  pass\n", "1:6: expected '('"},
      {"lambda x y: 1\n", "1:10: invalid syntax"},
      {"x = {1: }\n", "1:7: expression expected after dictionary key and ':'"},
      {"x = {1: 2, 3}\n", "1:12: ':' expected after dictionary key"},
      {"x = [a, b for a in c]\n", "1:6: did you forget parentheses around the comprehension target?"},
      {"x = [*a for a in b]\n", "1:6: iterable unpacking cannot be used in comprehension"},
      {"x = {**a for a in b}\n", "1:6: dict unpacking cannot be used in dict comprehension"},
      {"(a.b := 1)\n", "1:2: cannot use assignment expressions with attribute"},
      {"x := 1\n", "1:3: invalid syntax"},
      {"from x import a,\n", "1:17: trailing comma not allowed without surrounding parentheses"},
      {"try:\n  a\nexcept A, B:\n  pass\n", "3:8: multiple exception types must be parenthesized"},
      {"try:\n  a\nexcept* E:\n  b\nexcept F:\n  c\n", "5:1: cannot have both 'except' and 'except*' on the same 'try'"},
      {"  x = 1\n", "1:2: unexpected indent"},
      {"x = 1\n    y = 2\n", "2:4: unexpected indent"},
      {"else:\n  pass\n", "1:1: invalid syntax"},
      {"x = )\n", "1:5: unmatched ')'"},
      {"x = a.\n", "1:7: invalid syntax"},
      {"x = a.if\n", "1:7: invalid syntax"},
      {"import\n", "1:7: invalid syntax"},
      {"x = 'a' b'b'\n", "1:5: cannot mix bytes and nonbytes literals"},
      {"def f():\n    x = (1 +\n", "2:9: '(' was never closed"},
      {"x = [1,\n2)\n", "2:2: closing parenthesis ')' does not match opening parenthesis '[' on line 1"},
      {"class A:\n    def f(self):\n        return 1\n      x = 2\n", "4:12: unindent does not match any outer indentation level"},
      {"x = 1 +\n", "1:8: invalid syntax"},
      {"@dec\nx = 1\n", "2:1: invalid syntax"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = error_of(cases[i].src);
    if (strcmp(got, cases[i].want) != 0) {
      printf("  source:   %s  got:      %s\n  expected: %s\n", cases[i].src, got, cases[i].want);
      EXPECT(strcmp(got, cases[i].want) == 0);
    }
  }
}

TEST(rendered_diagnostic) {
  tc_source src = {"k.py", "def f():\n    x = (a b)\n", 0};
  src.len = strlen(src.text);
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks;
  CHECK(tc_lex(&arena, &src, &toks, &err));
  CHECK(tc_parse(&arena, &src, &toks, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_PROGRAM);
  CHECK_STR(err.rendered, "k.py:2:10: error: invalid syntax. Perhaps you forgot a comma?\n      x = (a b)\n           ^\n");
  tc_arena_free(&arena);
}

TEST(error_recovery) {
  /* A bad top-level statement becomes an ERROR_STMT and parsing goes on... */
  CHECK_STR(parse("x = 1 +\ny = 2\nif a:\n  b = (c d)\n  e\nz = 3\n"),
            "(error \"t.py:1:8: error: invalid syntax\")\n(= y 2)\n"
                     "(error \"t.py:4:8: error: invalid syntax. Perhaps you forgot a comma?\")\n(= z 3)");
  /* ...including statements after a partly parsed line. */
  CHECK_STR(parse("a = 1; b = +\nc = 2\n"), "(error \"t.py:1:13: error: invalid syntax\")\n(= c 2)");
  CHECK_STR(parse("  x = 1\n  y = 2\nz\n"), "(error \"t.py:1:2: error: unexpected indent\")\n(expr z)");
  CHECK_STR(parse("type X = int\nx = 1\n"), "(error \"t.py:1:6: error: invalid syntax\")\n(= x 1)");
  CHECK_STR(parse("if __name__ == '__main__':\n    def main(:):\n        pass\n    main()\nk = 1\n"),
            "(error \"t.py:2:14: error: invalid syntax\")\n(= k 1)");
  /* ...but an error inside a top-level definition is fatal. */
  CHECK_STR(parse("x = 1 +\ndef f():\n    return (a b)\n"), "ERR 3:13: invalid syntax. Perhaps you forgot a comma?");
  CHECK_STR(parse("@tilelang.jit(\ndef f(): pass\n"), "ERR 1:14: '(' was never closed");
  CHECK_STR(parse("class A:\n  x = = 1\n"), "ERR 2:7: invalid syntax");
  CHECK_STR(parse("async def f():\n  await\n"), "ERR 2:8: invalid syntax");
}

static int read_any(const char *text, size_t n, size_t arena_limit);

static const char *read_error(const char *text) {
  static char buf[1200];
  tc_source src = {"t.py", text, strlen(text)};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_ast *m = tc_read(&arena, &src, &err);
  if (m) snprintf(buf, sizeof buf, "ok");
  else snprintf(buf, sizeof buf, "%d:%d: %s", err.line, err.col, err.message);
  tc_arena_free(&arena);
  return buf;
}

TEST(first_error_of_the_file) {
  /* Which of a lexing error and a syntax error tc_read reports, as CPython 3.11 does (each case
   * checked against it): a bad string, number or closing bracket always wins... */
  CHECK_STR(read_error("def f():\n    return (a b)\nx = 'abc\n"), "3:5: unterminated string literal (detected at line 3)");
  CHECK_STR(read_error("x = 'abc\ndef f(:\n  pass\n"), "1:5: unterminated string literal (detected at line 1)");
  CHECK_STR(read_error("x = 1 +\ny = 0x\n"), "2:5: invalid hexadecimal literal");
  CHECK_STR(read_error("x = (a b)\ny = )\n"), "2:5: unmatched ')'");
  /* ...others lose to a syntax error before them, even a recoverable module-level one. */
  CHECK_STR(read_error("def f():\n    return a +\nx = (\n"), "2:15: invalid syntax");
  CHECK_STR(read_error("x = 1 +\ny = $\n"), "1:8: invalid syntax");
  CHECK_STR(read_error("x = (a b)\nif y:\n    a\n  b\n"), "1:6: invalid syntax. Perhaps you forgot a comma?");
  CHECK_STR(read_error("x = (a b)\ny = b'\xc3\xa9'\n"), "1:6: invalid syntax. Perhaps you forgot a comma?");
  /* An unclosed bracket's error sits at the bracket, so errors inside it lose. */
  CHECK_STR(read_error("x = f(a b\ny = 2\n"), "1:6: '(' was never closed");
  CHECK_STR(read_error("def f():\n    x = g(a,\n    return x\n"), "2:10: '(' was never closed");
  CHECK_STR(read_error("x = 1\ny = $\n"), "2:5: invalid character '$' (U+0024)");
  CHECK_STR(read_error("def f():\n    x = [1,\n"), "2:9: '[' was never closed");
  CHECK_STR(read_error("def f():\n    pass\n"), "ok");
}

/* Inputs that once misbehaved (found by fuzzing and by comparing with CPython's parser). */
TEST(fuzz_regressions) {
  static char buf[100000];
  /* Right-recursive `**` was not bounded. */
  size_t k = 0;
  for (int i = 0; i < 5000; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "x ** ");
  snprintf(buf + k, sizeof buf - k, "1\n");
  CHECK_STR(error_of(buf), "1:5001: expression too deeply nested");
  CHECK_STR(error_of("def f(*, **k):\n  pass\n"), "1:7: named arguments must follow bare *");
  /* A backslash at the very end of the input. */
  CHECK_STR(error_of("x = 1 \\"), "1:8: unexpected EOF while parsing");
  CHECK_STR(error_of("\\"), "1:2: unexpected EOF while parsing");
  /* A header at the end of the input with no body. */
  CHECK_STR(error_of("class A:"), "1:9: expected an indented block after class definition on line 1");
  CHECK_STR(error_of("if x:\n  # only a comment\n"), "1:6: expected an indented block after 'if' statement on line 1");
  /* An f-string whose field is never closed, and one nested too deeply. */
  CHECK_STR(error_of("x = f'{a'\n"), "1:5: unterminated string literal (detected at line 1)");
  k = 0;
  for (int i = 0; i < 40; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "f'{");
  snprintf(buf + k, sizeof buf - k, "\n");
  CHECK_STR(error_of(buf), "1:1: f-string: expressions nested too deeply");
  /* Long parameter and keyword lists are checked for repeats without quadratic time. */
  k = (size_t)snprintf(buf, sizeof buf, "def f(");
  char want[128];
  for (int i = 0; i < 10000; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "p%d, ", i);
  snprintf(want, sizeof want, "1:%zu: duplicate argument 'p17' in function definition", k + 1);
  k += (size_t)snprintf(buf + k, sizeof buf - k, "p17): pass\n");
  CHECK_STR(error_of(buf), want);
  k = (size_t)snprintf(buf, sizeof buf, "f(");
  for (int i = 0; i < 9000; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "k%d=1, ", i);
  snprintf(want, sizeof want, "1:%zu: keyword argument repeated: k5", k + 1);
  k += (size_t)snprintf(buf + k, sizeof buf - k, "k5=2)\n");
  CHECK_STR(error_of(buf), want);
  /* A UTF-8 byte order mark is skipped. */
  CHECK_STR(parse("\xEF\xBB\xBF" "from . import util\n"), "(from . (alias util))");
  CHECK_STR(error_of("\xEF\xBB\xBF" "x = (\n"), "1:5: '(' was never closed");
  /* A bad escape, then more adjacent literals: the concatenation read a NULL string (UBSan). */
  CHECK_STR(read_error("x = 'a' '\\u'\n"),
            "1:9: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: truncated \\uXXXX escape");
  CHECK_STR(read_error("x = 'a' '\\x' 'b'\n"),
            "1:9: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: truncated \\xXX escape");
  /* Stray NUL and high bytes. */
  CHECK(read_any("x = \xff\xfe\n", 7, 0));
  CHECK(read_any("if x:\n\0", 7, 0));
}

/* ---- real-world files ------------------------------------------------------------------- */

TEST(real_world_files) {
  for (size_t i = 0; i < sizeof py_samples / sizeof py_samples[0]; i++) {
    const char *d = parse(py_samples[i].text);
    if (strncmp(d, "ERR", 3) == 0 || strstr(d, "(error ")) {
      printf("  %s: %.300s\n", py_samples[i].name, strncmp(d, "ERR", 3) == 0 ? d : strstr(d, "(error "));
      EXPECT(0);
    }
  }
  /* Spot checks on the trees. */
  const char *g = parse(py_sample_gemm_autotune);
  CHECK(strstr(g, "(def matmul (params M N K (block_M = 128) (block_N = 128) (block_K = 32) (num_stages = 3) "
                  "(thread_num = 128) (enable_rasteration = False) (dtype = \"float16\") (accum_dtype = \"float\")) "
                  "(decorators (call autotune (kw configs (call get_configs 1024 1024 1024)) (kw warmup 3) (kw rep 20)) "
                  "(call (. tilelang jit) (kw out_idx (list (u- 1))) (kw pass_configs (dict (\"tl.disable_tma_lower\" True)))))"));
  CHECK(strstr(g, "(for k (call (. T Pipelined) (call (. T ceildiv) K block_K) (kw num_stages num_stages)) (body "
                  "(expr (call (. T copy) ([] A (tuple (* by block_M) (* k block_K))) A_shared))"));
  CHECK(strstr(g, "(= configs (listcomp (dict (\"block_M\" ([] c 0))"));
  CHECK(strstr(g, "(for c _configs (if (or (cmp (* ([] c 0) ([] c 2)) <= (* 128 64)) (cmp ([] c 3) < 2))))"));
  CHECK(strstr(g, "(if (cmp __name__ == \"__main__\") (body (= parser (call (. argparse ArgumentParser) "
                  "(kw description \"Autotuned MatMul Benchmark\")))"));
  CHECK(strstr(g, "(expr (call print f\"TFlops: {total_flops / latency * 1e-9:.3f} TFlops\"))"));
  const char *f = parse(py_sample_flash_attn);
  CHECK(strstr(f, "(= loop_range (ifexp is_causal (call (. T min) (call (. T ceildiv) seq_len block_N) "
                  "(call (. T ceildiv) (* (+ bx 1) block_M) block_N)) (call (. T ceildiv) seq_len block_N)))"));
  CHECK(strstr(f, "(= scale (* (** (/ 1.0 dim) 0.5) 1.44269504))"));
  CHECK(strstr(f, "(expr (call (. T annotate_layout) (dict (O_shared (call (. (. tilelang layout) make_swizzled_layout) O_shared)))))"));
  const char *e = parse(py_sample_eager_misc);
  CHECK(strstr(e, "(def describe (params value) (body (match)))"));
  CHECK(strstr(e, "(= s \"itsconcatenated across lines\")"));
  CHECK(strstr(e, "(ann A (call (. T Tensor) (tuple M N) dtype))"));
  CHECK(strstr(e, "(with (item (call (. T Kernel) 1 (kw threads (tuple 32 4))) _) (body"));
}

TEST(read_speed) {
  /* Not a timed test: prints the figure (the brief expects well under 1 ms for 300 lines). */
  const char *text = py_sample_flash_attn;
  size_t len = strlen(text), lines = 0;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  tc_source src = {"t.py", text, len};
  struct timespec t0, t1;
  int reps = 200;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < reps; r++) {
    tc_arena arena;
    tc_arena_init(&arena);
    tilec_error err;
    tc_error_clear(&err);
    tc_token_array toks;
    CHECK(tc_lex(&arena, &src, &toks, &err));
    CHECK(tc_parse(&arena, &src, &toks, &err) != NULL);
    tc_arena_free(&arena);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / reps;
  printf("  lex+parse of %zu lines: %.1f us (%.1f us per 300 lines)\n", lines, us, us * 300 / (double)lines);
}

/* ---- malformed input -------------------------------------------------------------------- */

/* Read text of length n; the reader must either succeed or fail with a located program
 * error. (ASan and LSan catch crashes and leaks; the test's run time bounds hangs.) */
static int read_any(const char *text, size_t n, size_t arena_limit) {
  tc_source src = {"m.py", text, n};
  tc_arena arena;
  tc_arena_init(&arena);
  arena.limit = arena_limit;
  tilec_error err;
  tc_error_clear(&err);
  tc_token_array toks;
  int ok = 1;
  tc_ast *m = NULL;
  if (tc_lex(&arena, &src, &toks, &err)) m = tc_parse(&arena, &src, &toks, &err);
  if (!m) {
    if (err.status == TILEC_ERROR_PROGRAM) ok = err.line >= 1 && err.col >= 1 && strstr(err.rendered, "m.py:") == err.rendered;
    else ok = err.status == TILEC_ERROR_NOMEM && arena_limit != 0;
  } else {
    tc_strbuf sb;
    tc_sb_init(&sb);
    tc_ast_dump(&sb, m);
    ok = !sb.failed && sb.len > 0;
    tc_sb_free(&sb);
  }
  if (arena.oom_jmp != NULL) ok = 0;
  tc_arena_free(&arena);
  return ok;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { /* xorshift64*: deterministic across runs */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

TEST(truncated_files) {
  for (size_t i = 0; i < sizeof py_samples / sizeof py_samples[0]; i++) {
    const char *t = py_samples[i].text;
    size_t n = strlen(t);
    char *copy = malloc(n + 1);
    CHECK(copy);
    for (size_t k = 0; k <= n; k += 3) {
      memcpy(copy, t, k); /* a NUL-terminated prefix, as a file cut short */
      copy[k] = 0;
      if (!read_any(copy, k, 0)) {
        printf("  %s cut at %zu\n", py_samples[i].name, k);
        EXPECT(0);
        break;
      }
    }
    free(copy);
  }
}

TEST(mutated_files) {
  static const char pieces[][6] = {"(", ")", "[", "]", "{", "}", ":", "\n", "\t", " ", "'", "\"", "\"\"\"", "\\",
                                   "#", "=", ",", "*", "**", "@", "if ", "def ", "lambda", "for ", " in ", "f'{",
                                   "\xff", "\0", "\r", "0x", "1e", "...", ":=", "->", "    ", "yield", "not "};
  int cases = 0;
  for (size_t s = 0; s < sizeof py_samples / sizeof py_samples[0]; s++) {
    const char *t = py_samples[s].text;
    size_t n = strlen(t);
    char *buf = malloc(n + 64);
    CHECK(buf);
    for (int iter = 0; iter < 1200; iter++) {
      memcpy(buf, t, n + 1);
      size_t len = n;
      int edits = 1 + (int)(rng() % 4);
      for (int e = 0; e < edits; e++) {
        size_t at = (size_t)(rng() % (len ? len : 1));
        switch (rng() % 4) {
        case 0: buf[at] = (char)(rng() & 0xff); break; /* replace a byte */
        case 1:                                         /* delete a byte */
          if (len) {
            memmove(buf + at, buf + at + 1, len - at);
            len--;
          }
          break;
        default: { /* insert a piece of syntax */
          const char *p = pieces[rng() % (sizeof pieces / sizeof pieces[0])];
          size_t pl = p[0] ? strlen(p) : 1;
          if (len + pl < n + 60) {
            memmove(buf + at + pl, buf + at, len - at + 1);
            memcpy(buf + at, p, pl);
            len += pl;
          }
        }
        }
      }
      buf[len] = 0;
      cases++;
      if (!read_any(buf, len, 0)) {
        printf("  %s mutation %d failed\n", py_samples[s].name, iter);
        EXPECT(0);
        break;
      }
    }
    free(buf);
  }
  CHECK(cases >= 3000);
}

TEST(deep_nesting_is_bounded) {
  static char buf[200000];
  /* 199 parentheses are fine... */
  size_t k = 0;
  for (int i = 0; i < 199; i++) buf[k++] = '(';
  buf[k++] = 'x';
  for (int i = 0; i < 199; i++) buf[k++] = ')';
  buf[k] = 0;
  CHECK_STR(parse(buf), "(expr x)");
  /* ...and long chains of prefix operators end in an error, not a stack overflow. */
  static const char *const chains[] = {"-", "not ", "lambda: ", "a if b else ", "~", "await ", "x ** "};
  for (size_t c = 0; c < sizeof chains / sizeof chains[0]; c++) {
    size_t pl = strlen(chains[c]);
    k = 0;
    memcpy(buf, "def f():\n  ", 11);
    k = 11;
    for (int i = 0; i < 20000 && k + pl + 8 < sizeof buf; i++) {
      memcpy(buf + k, chains[c], pl);
      k += pl;
    }
    buf[k++] = '1';
    buf[k++] = '\n';
    buf[k] = 0;
    const char *d = parse(buf);
    if (!strstr(d, "expression too deeply nested") && !strstr(d, "invalid syntax")) {
      printf("  chain '%s': %.200s\n", chains[c], d);
      EXPECT(0);
    }
  }
  CHECK(read_any(buf, strlen(buf), 0));
}

TEST(out_of_memory_is_an_error) {
  for (size_t limit = 64 * 1024; limit <= 64 * 1024 * 8; limit *= 2) {
    tc_source src = {"t.py", py_sample_flash_attn, strlen(py_sample_flash_attn)};
    tc_arena arena;
    tc_arena_init(&arena);
    tilec_error err;
    tc_error_clear(&err);
    tc_token_array toks;
    CHECK(tc_lex(&arena, &src, &toks, &err));
    arena.limit = arena.total + limit / 4;
    tc_ast *m = tc_parse(&arena, &src, &toks, &err);
    CHECK(m == NULL ? err.status == TILEC_ERROR_NOMEM : err.status == TILEC_OK);
    CHECK(arena.oom_jmp == NULL);
    tc_arena_free(&arena);
  }
}

/* The reader's memory per source byte is a small constant: the tokens (64 bytes each, about one
 * per 5 bytes of real code) live only while the parse runs, and what stays is the tree. Sources
 * past TC_MAX_SOURCE_BYTES are refused with a located error before anything is allocated. */
TEST(reader_memory_per_byte_is_bounded) {
  CHECK_INT(sizeof(tc_token), 64);
  size_t one = strlen(py_sample_flash_attn), copies = (1u << 20) / one + 1;
  char *text = malloc(one * copies + 1);
  CHECK(text != NULL);
  for (size_t i = 0; i < copies; i++) memcpy(text + i * one, py_sample_flash_attn, one);
  text[one * copies] = 0;
  tc_source src = {"big.py", text, one * copies};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err;
  tc_error_clear(&err);
  tc_ast *m = tc_read(&arena, &src, &err);
  double per_byte = (double)arena.total / (double)src.len;
  tc_arena_free(&arena);
  free(text);
  if (!m || per_byte > 32) printf("  %s; %.1f arena bytes per source byte\n", m ? "read" : err.message, per_byte);
  CHECK(m != NULL);
  CHECK(per_byte <= 32);
  /* Too large: refused at 1:1, without reading the text (it is never touched here). */
  static const char tiny[] = "x = 1\n";
  tc_source huge = {"huge.py", tiny, TC_MAX_SOURCE_BYTES + 1};
  tc_arena_init(&arena);
  tc_error_clear(&err);
  CHECK(tc_read(&arena, &huge, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_PROGRAM);
  CHECK_INT(err.line, 1);
  CHECK_INT(err.col, 1);
  CHECK_STR(err.message, "the file is 8388609 bytes; tilec reads programs of at most 8388608 bytes (8 MiB)");
  tc_arena_free(&arena);
}

int main(void) {
  RUN(kernel_constructs);
  RUN(precedence);
  RUN(literals);
  RUN(displays);
  RUN(comprehensions);
  RUN(calls);
  RUN(named_starred_yield);
  RUN(function_definitions);
  RUN(class_definitions);
  RUN(control_flow);
  RUN(with_statements);
  RUN(try_statements);
  RUN(simple_statements);
  RUN(node_places);
  RUN(syntax_errors);
  RUN(rendered_diagnostic);
  RUN(error_recovery);
  RUN(first_error_of_the_file);
  RUN(fuzz_regressions);
  RUN(real_world_files);
  RUN(read_speed);
  RUN(truncated_files);
  RUN(mutated_files);
  RUN(deep_nesting_is_bounded);
  RUN(out_of_memory_is_an_error);
  RUN(reader_memory_per_byte_is_bounded);
  TEST_MAIN_END();
}
