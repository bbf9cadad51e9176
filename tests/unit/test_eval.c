/* test_eval.c: the compile-time evaluator: Python semantics at compile time, each kernel
 * construct's IR, the three kernel styles, defines, types, and errors as values. Programs are
 * read with the real lexer and parser; every IR that evaluates is checked by tc_ir_verify. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "front/front.h"
#include "harness.h"
#include "ir/ir.h"

typedef struct run {
  tc_arena arena;
  tc_source src;
  tc_ast *mod;
  tc_kernel_ir *k;
  tilec_error err;
  char *ir; /* printed IR (malloc'd) or NULL */
} run;

/* Read and evaluate; r->k and r->ir are set on success, r->err otherwise. */
static bool eval_full(run *r, const char *name, const char *text, const char *kernel, const tilec_define *d, size_t nd) {
  memset(r, 0, sizeof *r);
  tc_arena_init(&r->arena);
  r->src.name = name;
  r->src.text = text;
  r->src.len = strlen(text);
  tc_token_array toks;
  if (!tc_lex(&r->arena, &r->src, &toks, &r->err)) return false;
  r->mod = tc_parse(&r->arena, &r->src, &toks, &r->err);
  if (!r->mod) return false;
  r->k = tc_front_eval(&r->arena, &r->src, r->mod, kernel, d, nd, &r->err);
  if (!r->k) return false;
  tilec_error verr = {0};
  if (!tc_ir_verify(r->k, "evaluate", &verr)) {
    r->err = verr;
    r->k = NULL;
    return false;
  }
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_kernel(&sb, r->k);
  r->ir = tc_sb_take(&sb);
  return true;
}

static bool eval_src(run *r, const char *text) { return eval_full(r, "t.py", text, NULL, NULL, 0); }

static void run_free(run *r) {
  free(r->ir);
  tc_arena_free(&r->arena);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static bool has_line(const char *ir, const char *line) {
  size_t n = strlen(line);
  for (const char *p = ir; (p = strstr(p, line)); p++)
    if ((p == ir || p[-1] == ' ' || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0)) return true;
  return false;
}

#define CHECK_EVAL(r, text)                                   \
  do {                                                        \
    if (!eval_src((r), (text))) {                             \
      printf("  unexpected error:\n%s", (r)->err.rendered);   \
      run_free(r);                                            \
      CHECK(0 && "evaluation failed");                        \
    }                                                         \
  } while (0)

#define EXPECT_LINE(r, line)                                              \
  do {                                                                    \
    if (!has_line((r)->ir, (line))) {                                     \
      printf("  missing line: %s\n  in IR:\n%s", (line), (r)->ir);      \
      tc_t_fail(__FILE__, __LINE__, "IR line: " line);                     \
    }                                                                     \
  } while (0)

#define HDR "import tilelang\nimport tilelang.language as T\n"

/* A factory whose body asserts Python semantics: any wrong fold is a failed assert. */
static const char *semantics_src = HDR
    "import math\n"
    "def helper(a, b=2, *rest, scale=1, **kw):\n"
    "    return (a + b + sum(rest)) * scale + len(kw)\n"
    "def make_adder(n):\n"
    "    def add(x):\n"
    "        return x + n\n"
    "    return add\n"
    "TILE = 64\n"
    "NAMES = ['a', 'b']\n"
    "def k(M=100):\n"
    "    assert -7 // 2 == -4 and -7 % 2 == 1 and 7 % -2 == -1 and 7 // -2 == -4\n"
    "    assert 2 ** 10 == 1024 and 2 ** -1 == 0.5 and (-2) ** 3 == -8\n"
    "    assert 7 / 2 == 3.5 and 1 < 2 < 3 and not (1 < 3 < 2) and 3 > 2 >= 2\n"
    "    assert (0 or 5) == 5 and (3 and 0) == 0 and (None or 'x') == 'x'\n"
    "    assert (1 if M > 50 else 2) == 1\n"
    "    assert min(3, 1, 2) == 1 and max([4, 9, 2]) == 9 and abs(-3) == 3 and abs(-2.5) == 2.5\n"
    "    assert int(3.9) == 3 and int(-3.9) == -3 and float(2) == 2.0 and int('0x10', 16) == 16\n"
    "    assert len((1, 2, 3)) == 3 and len('abc') == 3 and len({'a': 1}) == 1 and len(range(0, 10, 3)) == 4\n"
    "    assert T.ceildiv(M, TILE) == 2 and T.ceildiv(128, 64) == 2\n"
    "    assert helper(1) == 3 and helper(1, 2, 3, 4) == 10 and helper(1, scale=2, x=1) == 7\n"
    "    assert make_adder(5)(1) == 6\n"
    "    assert [x * x for x in range(4) if x % 2 == 0] == [0, 4]\n"
    "    assert list(enumerate(NAMES)) == [(0, 'a'), (1, 'b')] and list(zip([1, 2], 'ab')) == [(1, 'a'), (2, 'b')]\n"
    "    assert f'{M}x{TILE:04d}' == '100x0064' and 'a,b'.split(',') == NAMES and '-'.join(NAMES) == 'a-b'\n"
    "    assert '%d-%s' % (3, 'x') == '3-x' and 'n={}'.format(4) == 'n=4'\n"
    "    assert isinstance(M, int) and not isinstance(M, float) and isinstance(1.0, (int, float))\n"
    "    assert T.float16 == 'float16' and T.float == T.float32 and 'bfloat16' in ['bfloat16']\n"
    "    assert math.log2(1024) == 10.0 and math.ceil(2.1) == 3 and math.floor(-2.1) == -3\n"
    "    total = 0\n"
    "    i = 0\n"
    "    while i < 10:\n"
    "        i += 1\n"
    "        if i == 3:\n"
    "            continue\n"
    "        if i > 6:\n"
    "            break\n"
    "        total += i\n"
    "    else:\n"
    "        total = -1\n"
    "    assert total == 1 + 2 + 4 + 5 + 6\n"
    "    a, *b, c = (1, 2, 3, 4)\n"
    "    assert a == 1 and b == [2, 3] and c == 4\n"
    "    d = dict(x=1)\n"
    "    d['y'] = 2\n"
    "    assert d.get('y') == 2 and d.get('z', 7) == 7 and sorted([3, 1, 2]) == [1, 2, 3]\n"
    "    for n in (1, 2, 3):\n"
    "        if n == 2:\n"
    "            break\n"
    "    else:\n"
    "        n = 0\n"
    "    assert n == 2\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M,), T.float32)):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            T.clear(A[0:M])\n"
    "    return main\n";

TEST(python_semantics_fold) {
  run r;
  CHECK_EVAL(&r, semantics_src);
  EXPECT_LINE(&r, "T.fill(A, 0.0)");
  run_free(&r);
}

TEST(failed_assert_is_a_diagnostic) {
  run r;
  const char *src = HDR "def k(M=100, B=64):\n    assert M % B == 0, f'M={M} is not a multiple of {B}'\n"
                        "    @T.prim_func\n    def main(A: T.Tensor((M,), T.float32)):\n"
                        "        with T.Kernel(1) as bx:\n            T.clear(A[0:M])\n    return main\n";
  CHECK(!eval_src(&r, src));
  CHECK_INT(r.err.status, TILEC_ERROR_PROGRAM);
  CHECK_INT(r.err.line, 4);
  CHECK_INT(r.err.col, 5);
  CHECK_STR(r.err.message, "assertion failed: M=100 is not a multiple of 64");
  run_free(&r);
  tilec_define d[] = {{"M", "128"}};
  CHECK(eval_full(&r, "t.py", src, NULL, d, 1));
  run_free(&r);
}

static const char *constructs_src = HDR
    "@T.macro\n"
    "def add_one(buf, i):\n"
    "    buf[i] = buf[i] + 1\n"
    "@tilelang.jit(out_idx=[-1])\n"
    "def k(M=256, dtype='float16'):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, 64), dtype), B: T.Tensor((M,), T.float32)):\n"
    "        with T.Kernel(M // 128, threads=128) as bx:\n"
    "            acc = T.float32(0)\n"
    "            cnt = T.alloc_var(T.int32, init=0)\n"
    "            S = T.alloc_shared((128, 64), dtype)\n"
    "            T.copy(A[bx * 128:(bx + 1) * 128, :], S)\n"
    "            for k in T.serial(64):\n"
    "                acc = acc + S[0, k]\n"
    "                cnt = cnt + 1\n"
    "            if acc > 0:\n"
    "                B[bx] = acc\n"
    "            else:\n"
    "                B[bx] = -acc\n"
    "            for s in [1, 2]:\n"
    "                B[bx + s] = s * 1.5\n"
    "            tx = T.get_thread_binding()\n"
    "            h = S[tx, 0] + T.cast(S[tx, 1], 'bfloat16')\n"
    "            B[tx] = h\n"
    "            add_one(B, tx)\n"
    "            B[0] = T.if_then_else(tx > 3, 1.0, T.exp(S[0, 0]))\n"
    "    return main\n";

TEST(kernel_constructs_ir) {
  run r;
  CHECK_EVAL(&r, constructs_src);
  const char *expected =
      "@jit(out_idx=[-1])\n"
      "kernel k(A: float16[256, 64], B: float32[256] output):\n"
      "  with T.Kernel(2, threads=128) as bx:\n"
      "    acc: float32 = 0.0\n"
      "    cnt = alloc var int32[1] init 0\n"
      "    S = alloc shared float16[128, 64]\n"
      "    T.copy(A[bx * 128 : +128, 0 : +64], S)\n"
      "    for k in serial(0, 64):\n"
      "      acc = acc + cast(float32, S[0, k])\n"
      "      cnt[0] = cnt[0] + 1\n"
      "    if acc > 0.0:\n"
      "      B[bx] = acc\n"
      "    else:\n"
      "      B[bx] = -acc\n"
      "    B[bx + 1] = 1.5\n"
      "    B[bx + 2] = 3.0\n"
      "    h: float32 = cast(float32, S[tx, 0]) + cast(float32, cast(bfloat16, S[tx, 1]))\n"
      "    B[tx] = h\n"
      "    B[tx] = B[tx] + 1.0\n"
      "    B[0] = if_then_else(tx > 3, 1.0, cast(float32, T.exp(S[0, 0])))\n";
  CHECK_STR(r.ir, expected);
  /* structure, not only text */
  const tc_kernel_ir *k = r.k;
  CHECK_INT(k->grid_ndim, 1);
  CHECK_INT(k->threads[0], 128);
  CHECK_INT(k->nout_idx, 1);
  CHECK_INT(k->out_idx[0], -1);
  CHECK(k->params[1].is_output);
  CHECK(k->block_idx[0] && k->block_idx[0]->kind == TC_VAR_BLOCK_IDX);
  const tc_stmt *seq = k->body;
  CHECK_INT(seq->kind, TC_ST_SEQ);
  CHECK_INT(seq->u.seq.items[0]->kind, TC_ST_LET);
  CHECK_INT(seq->u.seq.items[4]->kind, TC_ST_FOR);
  CHECK_INT(seq->u.seq.items[4]->u.loop.kind, TC_LOOP_SERIAL);
  const tc_stmt *body = seq->u.seq.items[4]->u.loop.body;
  CHECK_INT(body->u.seq.items[0]->kind, TC_ST_ASSIGN);
  CHECK(body->u.seq.items[0]->u.let.var == seq->u.seq.items[0]->u.let.var);
  CHECK_INT(body->u.seq.items[1]->kind, TC_ST_STORE);
  CHECK_INT(body->u.seq.items[1]->u.store.buf->scope, TC_SCOPE_VAR);
  CHECK_INT(seq->u.seq.items[5]->kind, TC_ST_IF);
  const tc_stmt *copy = seq->u.seq.items[3];
  CHECK_INT(copy->kind, TC_ST_COPY);
  CHECK_INT(copy->u.copy.src.r[0].extent, 128);
  CHECK_INT(copy->u.copy.src.r[1].extent, 64);
  run_free(&r);
}

TEST(loops_reductions_tile_ops) {
  run r;
  const char *src = HDR
      "def k(M=128, N=64, stages=2):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((4, M, N), 'float16'), B: T.Tensor((M, N), 'float32'), S: T.Tensor((M,), 'float32')):\n"
      "        with T.Kernel(4, 2, threads=(64, 2)) as (bx, by):\n"
      "            X = T.alloc_fragment((64, N), T.float32)\n"
      "            Y = T.alloc_fragment((64, N), T.float32)\n"
      "            m = T.alloc_fragment((64,), T.float32)\n"
      "            L = T.alloc_local((4,), T.float32)\n"
      "            T.copy(A[bx, by * 64, 0], X)\n"
      "            for i, j in T.Parallel(64, N):\n"
      "                X[i, j] = T.max(X[i, j], 0)\n"
      "            T.reduce_max(X, m, dim=1, clear=False)\n"
      "            T.reduce_abssum(X, m)\n"
      "            T.cumsum(X, Y, dim=1, reverse=True)\n"
      "            T.gemm(X, Y, X, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)\n"
      "            for ko in T.Pipelined(1, 5, num_stages=stages):\n"
      "                T.atomic_add(B[by * 64, 0], X)\n"
      "            for u in T.unroll(0, 8, 2):\n"
      "                L[u // 2] = u\n"
      "            T.atomic_add(S[by], 1)\n"
      "            T.fill(L, T.infinity(T.float32))\n"
      "            T.print(m, msg='m')\n"
      "    return main\n";
  CHECK_EVAL(&r, src);
  EXPECT_LINE(&r, "with T.Kernel(4, 2, threads=(64, 2)) as (bx, by):");
  EXPECT_LINE(&r, "T.copy(A[bx, by * 64 : +64, 0 : +64], X)");
  EXPECT_LINE(&r, "for i in parallel(0, 64):");
  EXPECT_LINE(&r, "for j in parallel(0, 64):");
  EXPECT_LINE(&r, "X[i, j] = max(X[i, j], 0.0)");
  EXPECT_LINE(&r, "T.reduce_max(X, m, dim=1, clear=False)");
  EXPECT_LINE(&r, "T.reduce_abssum(X, m, dim=1, clear=True)");
  EXPECT_LINE(&r, "for ko in pipelined(1, 5, stages=2):");
  EXPECT_LINE(&r, "for u in unroll(0, 4):");
  EXPECT_LINE(&r, "L[u * 2 // 2] = cast(float32, u * 2)");
  const tc_stmt *seq = r.k->body;
  const tc_stmt *gemm = NULL, *cums = NULL, *atom_tile = NULL, *atom_el = NULL;
  for (int i = 0; i < seq->u.seq.n; i++) {
    const tc_stmt *s = seq->u.seq.items[i];
    if (s->kind == TC_ST_GEMM) gemm = s;
    if (s->kind == TC_ST_CUMSUM) cums = s;
    if (s->kind == TC_ST_FOR && s->u.loop.kind == TC_LOOP_PIPELINED) atom_tile = s->u.loop.body->u.seq.items[0];
    if (s->kind == TC_ST_ATOMIC_ADD) atom_el = s;
  }
  CHECK(gemm && gemm->u.gemm.trans_b && !gemm->u.gemm.trans_a && gemm->u.gemm.clear_accum);
  CHECK_INT(gemm->u.gemm.policy, TC_POLICY_FULL_COL);
  CHECK(cums && cums->u.cumsum.dim == 1 && cums->u.cumsum.reverse);
  CHECK(atom_tile && atom_tile->kind == TC_ST_ATOMIC_ADD && atom_tile->u.atomic.buf == NULL);
  CHECK_INT(atom_tile->u.atomic.dst.r[0].extent, 64);
  CHECK(atom_el && atom_el->u.atomic.buf && atom_el->u.atomic.value->dtype.code == TC_DT_FLOAT32);
  CHECK_INT(r.k->threads_ndim, 2);
  CHECK_INT(r.k->threads[1], 2);
  run_free(&r);
}

/* TileLang's own online_softmax example names its shape in the annotation only:
 * `X: T.Tensor([M, N], dtype)` with M and N defined nowhere. They are implicit T.const names:
 * symbolic, or bound by a define. `dtype: T.dtype = T.float16` is a hint on a compile-time
 * parameter. A module constant of that name is what TileLang uses, and a define may not bind it. */
TEST(eager_implicit_shape_names_and_dtype_hints) {
  run r;
  const char *src = HDR
      "@tilelang.jit\n"
      "def softmax(X, BLOCK_N=64, dtype: T.dtype = T.float16):\n"
      "    X: T.Tensor([M, N], dtype)\n"
      "    Y = T.empty([M, N], dtype)\n"
      "    with T.Kernel(M, threads=32) as bx:\n"
      "        for j in T.Parallel(BLOCK_N):\n"
      "            Y[bx, j] = X[bx, j]\n"
      "    return Y\n";
  CHECK_EVAL(&r, src);
  CHECK_INT(r.k->nsyms, 2);
  CHECK_STR(r.k->syms[0]->name, "M");
  CHECK_STR(r.k->syms[1]->name, "N");
  CHECK_INT(r.k->params[0].buf->dtype.code, TC_DT_FLOAT16);
  run_free(&r);
  tilec_define d[] = {{"N", "64"}};
  CHECK(eval_full(&r, "t.py", src, NULL, d, 1));
  CHECK_INT(r.k->nsyms, 1);
  int64_t n = 0;
  CHECK(tc_expr_const_int(r.k->params[0].buf->shape[1], &n) && n == 64);
  run_free(&r);
  char with_const[2048];
  snprintf(with_const, sizeof with_const, "%sM = 128\nN = 64\n", src);
  CHECK(eval_full(&r, "t.py", with_const, NULL, NULL, 0));
  CHECK_INT(r.k->nsyms, 0);
  run_free(&r);
  /* -D overrides a module constant (issue 10: a user shrinks an example) */
  tilec_define d32[] = {{"N", "32"}};
  CHECK(eval_full(&r, "t.py", with_const, NULL, d32, 1));
  CHECK(tc_expr_const_int(r.k->params[0].buf->shape[1], &n) && n == 32);
  run_free(&r);
  tilec_define typo[] = {{"Q", "32"}};
  CHECK(!eval_full(&r, "t.py", with_const, NULL, typo, 1));
  CHECK(r.err.status == TILEC_ERROR_USAGE);
  CHECK_STR(r.err.message, "kernel 'softmax' has no parameter 'Q'; parameters: X, BLOCK_N, dtype, M, N");
  run_free(&r);
}

TEST(tilelang_cdiv_is_ceildiv) {
  run r;
  CHECK_EVAL(&r, HDR
      "def f(n=100):\n"
      "    nb = tilelang.cdiv(n, 32)\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((n,), 'float32')):\n"
      "        with T.Kernel(nb, threads=32) as bx:\n"
      "            A[bx] = 1.0\n"
      "    return main\n");
  int64_t g = 0;
  CHECK(tc_expr_const_int(r.k->grid[0], &g));
  CHECK_INT(g, 4);
  run_free(&r);
  /* A runtime T.ceildiv prints as written (it was `(M + 1 - 1) // 1`); other floor divisions do not. */
  CHECK_EVAL(&r, HDR
      "M = T.symbolic('M')\n"
      "@T.prim_func\n"
      "def g(A: T.Tensor((M,), 'int32')):\n"
      "    with T.Kernel(T.ceildiv(M, 1), threads=32) as bx:\n"
      "        A[bx] = T.ceildiv(M, bx + 2) + (M + 3 - 1) // 2 + T.ceildiv(M - bx, 16) * 2\n");
  EXPECT_LINE(&r, "with T.Kernel(T.ceildiv(M, 1), threads=32) as bx:");
  EXPECT_LINE(&r, "A[bx] = T.ceildiv(M, bx + 2) + (M + 3 - 1) // 2 + T.ceildiv(M - bx, 16) * 2");
  run_free(&r);
}

TEST(eager_style) {
  run r;
  const char *src = HDR
      "@tilelang.jit\n"
      "def matmul(A, B, block_M: int = 64, block_N=64, dtype=T.float16):\n"
      "    M, N, K = T.const('M, N, K')\n"
      "    A: T.Tensor((M, K), dtype)\n"
      "    B: T.Tensor[(K, N), dtype]\n"
      "    C = T.empty((M, N), dtype)\n"
      "    D = T.empty(M, N, dtype=T.float32)\n"
      "    E = T.empty([M], 'int8')\n"
      "    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
      "        A_s = T.alloc_shared((block_M, 32), dtype)\n"
      "        B_s = T.alloc_shared((32, block_N), dtype)\n"
      "        C_l = T.alloc_fragment((block_M, block_N), T.float32)\n"
      "        T.clear(C_l)\n"
      "        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):\n"
      "            T.copy(A[by * block_M, k * 32], A_s)\n"
      "            T.copy(B[k * 32, bx * block_N], B_s)\n"
      "            T.gemm(A_s, B_s, C_l)\n"
      "        T.copy(C_l, C[by * block_M, bx * block_N])\n"
      "    return C\n";
  CHECK_EVAL(&r, src);
  const tc_kernel_ir *k = r.k;
  CHECK_STR(k->name, "matmul");
  CHECK_INT(k->nparams, 5);
  CHECK_STR(k->params[0].name, "A");
  CHECK_STR(k->params[2].name, "C");
  CHECK_STR(k->params[3].name, "D");
  CHECK_INT(k->params[3].buf->dtype.code, TC_DT_FLOAT32);
  CHECK_INT(k->params[3].buf->ndim, 2);
  CHECK_INT(k->params[4].buf->dtype.code, TC_DT_INT8);
  CHECK_INT(k->params[4].buf->ndim, 1);
  CHECK(!k->params[0].is_output && !k->params[1].is_output && k->params[2].is_output);
  CHECK_INT(k->nsyms, 3);
  CHECK_STR(k->syms[2]->name, "K");
  CHECK_INT(k->syms[0]->kind, TC_VAR_SYMBOLIC);
  CHECK(!tc_expr_const_int(k->params[0].buf->shape[0], NULL));
  run_free(&r);
  tilec_define d[] = {{"M", "100"}, {"N", "72"}, {"K", "40"}, {"block_M", "32"}};
  CHECK(eval_full(&r, "t.py", src, NULL, d, 4));
  CHECK_INT(r.k->nsyms, 0);
  EXPECT_LINE(&r, "kernel matmul(A: float16[100, 40], B: float16[40, 72], C: float16[100, 72] output, D: float32[100, 72] output, E: int8[100] output):");
  EXPECT_LINE(&r, "with T.Kernel(2, 4, threads=128) as (bx, by):");
  run_free(&r);
}

TEST(prim_func_module_constants_and_lazy_globals) {
  run r;
  const char *src = HDR
      "import torch\nimport argparse\n"
      "BLOCK = 32\nN = BLOCK * 4\nDTYPE = 'float32'\n"
      "x = torch.randn(10)\n"              /* never evaluated: nothing needs x */
      "print(undefined_name)\n"
      "not valid python = 3\n"
      "parser = argparse.ArgumentParser()\n"
      "@T.prim_func\n"
      "def scale(A: T.Tensor((N,), DTYPE)):\n"
      "    with T.Kernel(N // BLOCK, threads=BLOCK) as bx:\n"
      "        for i in T.Parallel(BLOCK):\n"
      "            A[bx * BLOCK + i] = A[bx * BLOCK + i] * 2\n"
      "def ref(a):\n    return torch.relu(a)\n"
      "if __name__ == '__main__':\n    scale(x)\n";
  CHECK_EVAL(&r, src);
  EXPECT_LINE(&r, "kernel scale(A: float32[128] output):");
  EXPECT_LINE(&r, "A[bx * 32 + i] = A[bx * 32 + i] * 2.0");
  run_free(&r);
  tilec_define d[] = {{"BLOCK", "64"}};
  CHECK(eval_full(&r, "t.py", src, NULL, d, 1));
  EXPECT_LINE(&r, "kernel scale(A: float32[256] output):");
  run_free(&r);
}

TEST(defines_are_typed_like_the_command_line) {
  run r;
  const char *src = HDR
      "def k(n=1, f=0.5, flag=False, dtype='float16'):\n"
      "    assert isinstance(n, int) and isinstance(f, float) and isinstance(flag, bool)\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((n,), dtype)):\n"
      "        with T.Kernel(1) as bx:\n"
      "            if flag:\n"
      "                T.fill(A[0:n], f)\n"
      "    return main\n";
  tilec_define d[] = {{"n", "0x10"}, {"f", "2.5"}, {"flag", "True"}, {"dtype", "bfloat16"}};
  CHECK(eval_full(&r, "t.py", src, NULL, d, 4));
  EXPECT_LINE(&r, "kernel k(A: bfloat16[16] output):");
  EXPECT_LINE(&r, "T.fill(A, bfloat16(2.5))");
  run_free(&r);
  tilec_define bad[] = {{"nn", "3"}};
  CHECK(!eval_full(&r, "t.py", src, NULL, bad, 1));
  CHECK_INT(r.err.status, TILEC_ERROR_USAGE);
  CHECK_STR(r.err.message, "kernel 'k' has no parameter 'nn'; did you mean 'n'? parameters: n, f, flag, dtype");
  run_free(&r);
  /* bracketed values are lists and tuples of -D values: a list-valued parameter */
  const char *lsrc = HDR
      "def k(sizes, pair):\n"
      "    assert isinstance(sizes, list) and isinstance(pair, tuple) and pair[1] == [2.5, True]\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((sum(sizes) + pair[0],), 'float32')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            T.fill(A, 0)\n"
      "    return main\n";
  tilec_define l[] = {{"sizes", "[16, 0x20]"}, {"pair", "(1,[2.5, True])"}};
  CHECK(eval_full(&r, "t.py", lsrc, NULL, l, 2));
  EXPECT_LINE(&r, "kernel k(A: float32[49] output):");
  run_free(&r);
}

TEST(types_promote_and_casts_are_explicit) {
  run r;
  const char *src = HDR
      "def k():\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((8,), 'float16'), B: T.Tensor((8,), 'bfloat16'), C: T.Tensor((8,), 'float32'),\n"
      "             I: T.Tensor((8,), 'int32'), J: T.Tensor((8,), 'int8')):\n"
      "        with T.Kernel(1) as bx:\n"
      "            for i in T.Parallel(8):\n"
      "                C[i] = A[i] + B[i]\n"
      "                C[i] = I[i] + 0.5\n"
      "                I[i] = I[i] + J[i]\n"
      "                A[i] = A[i] * 2\n"
      "                C[i] = A[i] * 2.0\n"
      "                C[i] = A[i] < 2.0\n"
      "                C[i] = (I[i] > 3) & (J[i] < 2)\n"
      "                I[i] = I[i] // 3 + I[i] % 3\n"
      "                I[i] = T.truncdiv(I[i], 3) + T.truncmod(-7, 2)\n"
      "                A[i] = A[i].astype(T.float32) + T.float16(1)\n"
      "    return main\n";
  CHECK_EVAL(&r, src);
  EXPECT_LINE(&r, "C[i] = cast(float32, A[i]) + cast(float32, B[i])");
  EXPECT_LINE(&r, "C[i] = cast(float32, I[i]) + 0.5");
  EXPECT_LINE(&r, "I[i] = I[i] + cast(int32, J[i])");
  EXPECT_LINE(&r, "A[i] = A[i] * float16(2.0)");
  EXPECT_LINE(&r, "C[i] = cast(float32, A[i]) * 2.0");
  EXPECT_LINE(&r, "C[i] = cast(float32, A[i] < float16(2.0))");
  EXPECT_LINE(&r, "C[i] = cast(float32, I[i] > 3 and J[i] < int8(2))");
  EXPECT_LINE(&r, "I[i] = I[i] // 3 + I[i] % 3");
  EXPECT_LINE(&r, "I[i] = I[i] / 3 + -1");
  EXPECT_LINE(&r, "A[i] = cast(float16, cast(float32, A[i]) + 1.0)");
  run_free(&r);
}

TEST(symbolic_dims_and_slices) {
  run r;
  const char *src = HDR
      "n = T.symbolic('n')\n"
      "@T.prim_func\n"
      "def f(A: T.Tensor((n, 64), 'float32'), B: T.Tensor((n, 64), 'float32')):\n"
      "    with T.Kernel(T.ceildiv(n, 16), threads=64) as bx:\n"
      "        S = T.alloc_shared((16, 64), 'float32')\n"
      "        T.copy(A[bx * 16:(bx + 1) * 16, 0:64], S)\n"
      "        T.copy(S[0:8, :], B[bx * 16 + 8, 0])\n"
      "        for i in range(n - bx * 16):\n"
      "            B[i, 0] = 1\n";
  CHECK_EVAL(&r, src);
  CHECK_INT(r.k->nsyms, 1);
  EXPECT_LINE(&r, "T.copy(S[0 : +8, 0 : +64], B[bx * 16 + 8 : +8, 0 : +64])");
  EXPECT_LINE(&r, "for i in serial(0, n - bx * 16):");
  run_free(&r);
  /* a define of a T.symbolic name gives `tilec run` its size; the kernel stays symbolic */
  tilec_define d[] = {{"n", "100"}};
  CHECK(eval_full(&r, "t.py", src, NULL, d, 1));
  CHECK_INT(r.k->nsyms, 1);
  run_free(&r);
}

/* A runtime condition choosing between two Python literals (issue 10: a null dereference while
 * unifying the branches): each literal takes its default dtype, then the two promote. */
TEST(select_between_two_literals) {
  run r;
  const char *src = HDR
      "def k(M=128):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((M,), 'float32'), I: T.Tensor((M,), 'int32')):\n"
      "        with T.Kernel(1, threads=128) as bx:\n"
      "            for i in T.Parallel(M):\n"
      "                I[i] = T.if_then_else(i < 64, 0, 1)\n"
      "                I[i] = (0 if i < 64 else 1)\n"
      "                A[i] = T.if_then_else(A[i] > 0.5, 0.0, -1e9)\n"
      "                A[i] = T.if_then_else(i < 3, 0, 1.5)\n"
      "                A[i] = T.if_then_else(i < 3, True, 2)\n"
      "    return main\n";
  CHECK_EVAL(&r, src);
  EXPECT_LINE(&r, "I[i] = if_then_else(i < 64, 0, 1)");
  EXPECT_LINE(&r, "A[i] = if_then_else(A[i] > 0.5, 0.0, -1e+09)");
  EXPECT_LINE(&r, "A[i] = if_then_else(i < 3, 0.0, 1.5)");
  EXPECT_LINE(&r, "A[i] = cast(float32, if_then_else(i < 3, 1, 2))");
  run_free(&r);
}

/* Compile-time helpers and device queries of TileLang's examples (issue 10), however imported;
 * device queries answer for the default CUDA target (sm_90, 132 SMs) on every target. */
TEST(compile_time_helpers_and_device_queries) {
  run r;
  const char *src = HDR
      "from tilelang.carver.arch import driver\n"
      "from tilelang.language.fp8 import determine_fp8_type\n"
      "from tilelang.math import next_power_of_2\n"
      "import tilelang as tl\n"
      "import torch\n"
      "from tilelang import tvm\n"
      "def k(n=100):\n"
      "    assert tilelang.math.next_power_of_2(n) == 128 and tl.math.next_power_of_2(64) == 64\n"
      "    assert next_power_of_2(1) == 1 and next_power_of_2(0) == 2 and next_power_of_2(3) == 4\n"
      "    assert n.bit_length() == 7 and (0).bit_length() == 0 and (-8).bit_length() == 4 and True.bit_length() == 1\n"
      "    assert 64 == 2 ** ((64).bit_length() - 1)\n"
      "    sm_major, sm_minor = torch.cuda.get_device_capability()\n"
      "    assert (sm_major, sm_minor) == (9, 0) and torch.cuda.get_device_capability(0)[0] >= 9\n"
      "    dtype = determine_fp8_type()\n"
      "    from tvm import DataType\n"
      "    assert DataType('float16').bits == 16 and DataType(T.int8).bits == 8 and tvm.DataType(dtype).bits == 8\n"
      "    assert 128 // DataType(T.bfloat16).bits == 8 and DataType('float32').lanes == 1\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((driver.get_num_sms(),), dtype)):\n"
      "        with T.Kernel(1) as bx:\n"
      "            T.clear(A)\n"
      "    return main\n";
  CHECK_EVAL(&r, src);
  EXPECT_LINE(&r, "kernel k(A: float8_e4m3fn[132] output):");
  run_free(&r);
  /* a dtype used as a string: iterated, str methods, compared with names */
  CHECK_EVAL(&r, HDR
      "def k(d='int8', storage_dtype=T.uint8):\n"
      "    assert d in [T.float16, T.int8] and T.int8 in ['int8'] and d == T.int8\n"
      "    nbit = int(''.join(c for c in storage_dtype if c.isdigit()))\n"
      "    assert nbit == 8 and storage_dtype.startswith('uint') and not 'a8'.isdigit() and str(T.int8) == 'int8'\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((nbit,), d)):\n"
      "        with T.Kernel(1) as bx:\n"
      "            T.clear(A)\n"
      "    return main\n");
  EXPECT_LINE(&r, "kernel k(A: int8[8] output):");
  run_free(&r);
}

/* The register-budget hints of warp specialization are accepted and leave no IR. */
TEST(register_hints_leave_no_ir) {
  run with, without;
  const char *head = HDR
      "@T.prim_func\n"
      "def k(A: T.Tensor((64,), 'float32')):\n"
      "    with T.Kernel(1, threads=128) as bx:\n";
  char src[1024];
  snprintf(src, sizeof src, "%s%s", head,
           "        T.disable_warp_group_reg_alloc()\n"
           "        T.no_set_max_nreg()\n"
           "        T.annotate_producer_reg_dealloc(24)\n"
           "        T.annotate_consumer_reg_alloc()\n"
           "        T.clear(A)\n");
  CHECK_EVAL(&with, src);
  snprintf(src, sizeof src, "%s%s", head, "        T.clear(A)\n");
  CHECK_EVAL(&without, src);
  CHECK_STR(with.ir, without.ir);
  run_free(&with);
  run_free(&without);
}

/* tx = T.thread_binding(0, n, thread="threadIdx.x") names the kernel's own thread index. */
TEST(thread_binding_names_the_thread_index) {
  run bound, got;
  CHECK_EVAL(&bound, HDR
      "@T.prim_func\n"
      "def k(A: T.Tensor((64, 4), 'float32')):\n"
      "    with T.Kernel(1, threads=(64, 4)) as bx:\n"
      "        tx = T.thread_binding(0, 64, thread='threadIdx.x')\n"
      "        ty = T.thread_binding(4, 'threadIdx.y')\n"
      "        tz = T.thread_binding(0, 1, thread='threadIdx.z')\n"
      "        A[tx, ty + tz] = 1.0\n");
  CHECK_EVAL(&got, HDR
      "@T.prim_func\n"
      "def k(A: T.Tensor((64, 4), 'float32')):\n"
      "    with T.Kernel(1, threads=(64, 4)) as bx:\n"
      "        A[T.get_thread_binding(0), T.get_thread_binding(1) + 0] = 1.0\n");
  CHECK_STR(bound.ir, got.ir);
  run_free(&bound);
  run_free(&got);
}

typedef struct diag_case {
  const char *body; /* kernel body lines, 12 spaces deep */
  const char *message;
  int line;
} diag_case;

TEST(diagnostics_are_values_with_places) {
  static const diag_case cases[] = {
      {"            X = T.alloc_shared((16, 16), T.flaot16)\n", "module 'T' has no attribute 'flaot16'; did you mean 'float16'?", 5},
      {"            T.copy(A)\n", "T.copy() missing 1 required positional argument: 'dst'", 5},
      {"            T.fill(A, 1, 2)\n", "T.fill() takes 2 positional arguments but 3 were given", 5},
      {"            X = T.alloc_fragment((16, 16), 'float32')\n            T.gemm(X, A, X)\n",
       "T.gemm: the reduction dimensions do not match: A is (16, 16) and B is (32, 32), so K is 16 for A but 32 for B", 6},
      {"            y = A[0, 0] + undefined\n", "name 'undefined' is not defined", 5},
      {"            for i in T.Parallel(4):\n                break\n", "unsupported: 'break' in a loop in a kernel", 5},
      {"            x = T.exp(bx)\n", "T.exp expects a float operand, got int32", 5},
      {"            X = T.alloc_shared((bx,), 'float32')\n",
       "the shape of T.alloc_shared must be known at compile time, but 'bx' depends on the kernel's block index", 5},
      {"            with T.Kernel(1) as by:\n                pass\n", "'with T.Kernel(...)' cannot be nested in another", 5},
      {"            A[0] = 1\n", "buffer 'A' has 2 dimensions but 1 index was given", 5},
      {"            for i in T.Parallel(4):\n                A[i, 0] = i / 2\n",
       "'/' on two integer values is ambiguous at run time (TileLang rejects it); use '//' for floor division, or cast an "
       "operand to a float dtype", 6},
      {"            x = 1 << 70\n", "integer overflow: the result of 1 << 70 does not fit in 64 bits", 5},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[2048];
    snprintf(src, sizeof src,
             HDR "@T.prim_func\ndef f(A: T.Tensor((32, 32), 'float32')):\n    if True:\n        with T.Kernel(2) as bx:\n%s",
             cases[i].body);
    /* body lines start at line 6 after the header (2 lines) + def + if + with: adjust */
    run r;
    bool ok = eval_src(&r, src);
    if (ok || r.err.status != TILEC_ERROR_PROGRAM || strcmp(r.err.message, cases[i].message) != 0 ||
        r.err.line != cases[i].line + 2) {
      printf("  case %zu: ok=%d status=%d line=%d\n  got:      %s\n  expected: %s (line %d)\n", i, ok, r.err.status,
             r.err.line, r.err.message, cases[i].message, cases[i].line + 2);
      tc_t_fail(__FILE__, __LINE__, "diagnostic case");
    }
    EXPECT(strncmp(r.err.rendered, "t.py:", 5) == 0 && strchr(r.err.rendered, '^'));
    run_free(&r);
  }
}

TEST(examples_evaluate_and_verify) {
  static const char *const files[] = {"gemm.py", "gemm_transposed.py", "gemm_fp8.py", "gemv.py", "flash_attention.py",
                                      "rms_norm.py", "layer_norm.py", "softmax.py", "elementwise.py", "conv_implicit_gemm.py",
                                      "cumsum.py", "fp8_cast.py", "symbolic_dim.py", "eager_gemm.py",
                                      "prim_func_module.py", "reduce_sum.py", "splitk_gemm.py", "atomic_add_hist.py"};
  int found = 0;
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[256];
    snprintf(path, sizeof path, "examples/%s", files[i]);
    char *text = read_file(path);
    if (!text) continue;
    found++;
    run r;
    if (!eval_full(&r, path, text, NULL, NULL, 0)) {
      printf("  %s:\n%s", path, r.err.rendered);
      tc_t_fail(__FILE__, __LINE__, "example evaluates");
    }
    run_free(&r);
    free(text);
  }
  CHECK(found >= 12);
}

/* The fuzzer's TileLang-style seeds (tests/fuzz/corpus/tl_*.py) have defaults for every size, so
 * evaluating them with their defaults reaches the evaluator's deeper paths; each must evaluate. */
TEST(fuzz_seeds_evaluate) {
  static const char *const files[] = {"tl_flash_attn_causal.py", "tl_masked_select.py", "tl_norm.py"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[256];
    snprintf(path, sizeof path, "tests/fuzz/corpus/%s", files[i]);
    char *text = read_file(path);
    CHECK(text != NULL);
    run r;
    if (!eval_full(&r, path, text, NULL, NULL, 0)) {
      printf("  %s:\n%s", path, r.err.rendered);
      tc_t_fail(__FILE__, __LINE__, "seed evaluates");
    }
    run_free(&r);
    free(text);
  }
}

/* Every prefix of every example (cut at line ends) and byte-flipped copies must give IR or a
 * diagnostic: never a crash, a hang or (under ASan) a leak. */
TEST(malformed_programs_never_crash) {
  static const char *const files[] = {"examples/gemm.py", "examples/flash_attention.py", "examples/eager_gemm.py",
                                      "examples/gemv.py"};
  unsigned seed = 12345;
  int runs = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char *text = read_file(files[f]);
    if (!text) continue;
    size_t n = strlen(text);
    char *copy = malloc(n + 1);
    for (size_t cut = 0; cut < n; cut++) {
      if (text[cut] != '\n') continue;
      memcpy(copy, text, cut + 1);
      copy[cut + 1] = 0;
      run r;
      if (!eval_full(&r, "cut.py", copy, NULL, NULL, 0)) EXPECT(r.err.status != TILEC_OK && r.err.rendered[0]);
      run_free(&r);
      runs++;
    }
    static const char junk[] = "()[]:,.=+-*/%<>!~ \n\tTx0123456789_'\"#@";
    for (int m = 0; m < 150; m++) {
      memcpy(copy, text, n + 1);
      for (int j = 0; j < 3; j++) {
        seed = seed * 1103515245u + 12345u;
        size_t pos = (seed >> 8) % n;
        seed = seed * 1103515245u + 12345u;
        copy[pos] = junk[(seed >> 8) % (sizeof junk - 1)];
      }
      run r;
      if (!eval_full(&r, "mut.py", copy, NULL, NULL, 0)) EXPECT(r.err.status != TILEC_OK && r.err.rendered[0]);
      run_free(&r);
      runs++;
    }
    free(copy);
    free(text);
  }
  CHECK(runs > 100);
}

TEST(runaway_compile_time_loops_are_bounded) {
  run r;
  CHECK(!eval_src(&r, HDR "def k():\n    while True:\n        pass\n    @T.prim_func\n    def main(A: T.Tensor((1,), 'int32')):\n"
                          "        with T.Kernel(1) as bx:\n            A[0] = 1\n    return main\n"));
  CHECK(strstr(r.err.message, "1000000 iterations") != NULL);
  run_free(&r);
  CHECK(!eval_src(&r, HDR "def f(n):\n    return f(n + 1)\ndef k():\n    f(0)\n    @T.prim_func\n"
                          "    def main(A: T.Tensor((1,), 'int32')):\n        with T.Kernel(1) as bx:\n            A[0] = 1\n"
                          "    return main\n"));
  CHECK(strstr(r.err.message, "nested too deeply") != NULL);
  run_free(&r);
  /* runtime expressions that would blow up printers and passes: a 2^60-path DAG, a long chain */
  CHECK(!eval_src(&r, HDR "@T.prim_func\ndef f(A: T.Tensor((8,), 'float32')):\n    with T.Kernel(1) as bx:\n"
                          "        xs = [A[0]]\n        for i in [0] * 60:\n            xs = [xs[0] + xs[0]]\n"
                          "        A[1] = xs[0]\n"));
  CHECK(strstr(r.err.message, "grows past 100000 operations") != NULL);
  run_free(&r);
  CHECK(!eval_src(&r, HDR "@T.prim_func\ndef f(A: T.Tensor((8,), 'float32')):\n    with T.Kernel(1) as bx:\n"
                          "        A[1] = sum([A[0] for i in range(200000)])\n"));
  CHECK(strstr(r.err.message, "more than 16384 operations deep") != NULL);
  run_free(&r);
  /* a chain of 3000 is cut into temporaries where it is stored; deeper than 2000 elsewhere, refused */
  CHECK(eval_src(&r, HDR "@T.prim_func\ndef f(A: T.Tensor((8,), 'float32')):\n    with T.Kernel(1) as bx:\n"
                         "        A[1] = sum([A[0] for i in range(3000)])\n"));
  run_free(&r);
  CHECK(!eval_src(&r, HDR "@T.prim_func\ndef f(A: T.Tensor((8,), 'float32')):\n    with T.Kernel(1) as bx:\n"
                          "        if sum([A[0] for i in range(3000)]) > 0:\n            A[1] = 1.0\n"));
  CHECK(strstr(r.err.message, "more than 2000 operations deep") != NULL);
  run_free(&r);
}

TEST(repeated_evaluation_is_independent) {
  char *text = read_file("examples/flash_attention.py");
  CHECK(text != NULL);
  run r;
  memset(&r, 0, sizeof r);
  tc_arena_init(&r.arena);
  r.src.name = "fa.py";
  r.src.text = text;
  r.src.len = strlen(text);
  tc_token_array toks;
  tilec_error err = {0};
  CHECK(tc_lex(&r.arena, &r.src, &toks, &err));
  tc_ast *mod = tc_parse(&r.arena, &r.src, &toks, &err);
  CHECK(mod != NULL);
  int iters = 200;
  for (int i = 0; i < iters; i++) {
    tc_arena a;
    tc_arena_init(&a);
    tc_kernel_ir *k = tc_front_eval(&a, &r.src, mod, NULL, NULL, 0, &err);
    EXPECT(k != NULL);
    tc_arena_free(&a);
  }
  /* No timing assertion here: bench/bench_compile measures speed. This checks that evaluating
   * one program many times, each in a fresh arena, keeps succeeding (and, under ASan, leaks
   * nothing). */
  tc_arena_free(&r.arena);
  free(text);
}

static const char *tilelang_style_src =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "def flash(batch=1, heads=2, seq_len=128, dim=64, is_causal=True, block_M=64, block_N=64, num_stages=1, threads=128):\n"
    "    scale = (1.0 / dim)**0.5 * 1.44269504\n"
    "    shape = [batch, seq_len, heads, dim]\n"
    "    dtype = \"float16\"\n"
    "    accum_dtype = \"float\"\n"
    "\n"
    "    @T.macro\n"
    "    def MMA0(K: T.Tensor(shape, dtype), Q_shared: T.SharedBuffer([block_M, dim], dtype), K_shared, acc_s, k, bx, by, bz):\n"
    "        T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)\n"
    "        if is_causal:\n"
    "            for i, j in T.Parallel(block_M, block_N):\n"
    "                acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))\n"
    "        else:\n"
    "            T.clear(acc_s)\n"
    "        T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), Output: T.Tensor(shape, dtype)):\n"
    "        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):\n"
    "            Q_shared = T.alloc_shared([block_M, dim], dtype)\n"
    "            K_shared = T.alloc_shared([block_N, dim], dtype)\n"
    "            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)\n"
    "            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)\n"
    "            loop_range = (\n"
    "                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))\n"
    "                if is_causal else T.ceildiv(seq_len, block_N))\n"
    "            for k in T.Pipelined(loop_range, num_stages=num_stages, order=[-1, 0, 3, 1, -1, 2], stage=[-1, 0, 0, 1, -1, 1], group=[[0], [1, 2], [3, 4, 5, 6, 7, 8, 9, 10], [11], [12], [13]]):\n"
    "                MMA0(K, Q_shared, K_shared, acc_s, k, bx, by, bz)\n"
    "            T.sync_threads()\n"
    "            for i, j in T.grid(2, 3):\n"
    "                Output[bz, i, by, j] = acc_s[i, j]\n"
    "    return main\n";

/* TileLang's own idioms: macros with buffer annotations, list shapes, "float", causal masks,
 * Pipelined scheduling hints, T.grid, T.sync_threads. */
TEST(tilelang_idioms) {
  run r;
  CHECK_EVAL(&r, tilelang_style_src);
  EXPECT_LINE(&r, "T.copy(Q[bz, bx * 64 : +64, by, 0 : +64], Q_shared)");
  EXPECT_LINE(&r, "loop_range: int32 = min(2, T.ceildiv((bx + 1) * 64, 64))");
  EXPECT_LINE(&r, "for k in pipelined(0, loop_range, stages=1, order=[-1, 0, 3, 1, -1, 2], stage=[-1, 0, 0, 1, -1, 1], group=[[0], [1, 2], [3, 4, 5, 6, 7, 8, 9, 10], [11], [12], [13]]):");
  EXPECT_LINE(&r, "acc_s[i, j] = if_then_else(bx * 64 + i >= k * 64 + j, 0.0, -inf)");
  EXPECT_LINE(&r, "T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)");
  EXPECT_LINE(&r, "barrier()");
  EXPECT_LINE(&r, "for j in serial(0, 3):");
  run_free(&r);
  tilec_define d[] = {{"is_causal", "False"}};
  CHECK(eval_full(&r, "t.py", tilelang_style_src, NULL, d, 1));
  EXPECT_LINE(&r, "for k in pipelined(0, 2, stages=1, order=[-1, 0, 3, 1, -1, 2], stage=[-1, 0, 0, 1, -1, 1], group=[[0], [1, 2], [3, 4, 5, 6, 7, 8, 9, 10], [11], [12], [13]]):");
  EXPECT_LINE(&r, "T.fill(acc_s, 0.0)");
  run_free(&r);
}

/* @autotune's configurations, evaluated at module level (itertools.product, dict(zip(...))),
 * one line each as -D takes them; "" without @autotune; errors with a place. */
TEST(autotune_configurations) {
  static const char src[] =
      "import itertools\n"
      "import tilelang\n"
      "import tilelang.language as T\n"
      "from tilelang.autotuner import autotune\n"
      "def get_configs():\n"
      "    space = dict(block=[32, 64], stages=[2, 3], dt=[T.bfloat16], fast=[True])\n"
      "    return [dict(zip(space, v)) for v in itertools.product(*space.values())]\n"
      "assert len(list(itertools.product([1, 2], repeat=3))) == 8\n"
      "assert dict([('a', 1), ('b', 2)]) == {'a': 1, 'b': 2}\n"
      "@autotune(configs=get_configs(), warmup=3)\n"
      "@tilelang.jit\n"
      "def k(N=64, block=None, stages=None, dt=T.float16, fast=False):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), dt)):\n"
      "        with T.Kernel(N // block, threads=32) as bx:\n"
      "            A[bx * block] = 1\n"
      "    return main\n"
      "@tilelang.jit\n"
      "def plain(N=64):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32')):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            A[0] = 1\n"
      "    return main\n"
      "@autotune(configs=get_configs)\n"
      "@tilelang.jit\n"
      "def uncalled(N=64):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32')):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            A[0] = 1\n"
      "    return main\n";
  run r;
  tilec_define d[] = {{"block", "64"}, {"stages", "2"}};
  CHECK(eval_full(&r, "t.py", src, "k", d, 2)); /* the module-level asserts hold */
  tilec_error err = {0};
  char *t = tc_front_autotune_configs(&r.src, r.mod, "k", &err);
  CHECK(t != NULL);
  CHECK_STR(t, "block=32 stages=2 dt=bfloat16 fast=True\nblock=32 stages=3 dt=bfloat16 fast=True\n"
               "block=64 stages=2 dt=bfloat16 fast=True\nblock=64 stages=3 dt=bfloat16 fast=True\n");
  free(t);
  t = tc_front_autotune_configs(&r.src, r.mod, "plain", &err);
  CHECK(t && !t[0]);
  free(t);
  t = tc_front_autotune_configs(&r.src, r.mod, "uncalled", &err);
  CHECK(t == NULL && err.status == TILEC_ERROR_PROGRAM && err.line == 25);
  CHECK(strstr(err.message, "(call it: configs=get_configs())") != NULL);
  t = tc_front_autotune_configs(&r.src, r.mod, "nope", &err);
  CHECK(t == NULL && err.status == TILEC_ERROR_USAGE);
  run_free(&r);
}

int main(void) {
  RUN(autotune_configurations);
  RUN(python_semantics_fold);
  RUN(failed_assert_is_a_diagnostic);
  RUN(kernel_constructs_ir);
  RUN(loops_reductions_tile_ops);
  RUN(eager_style);
  RUN(tilelang_cdiv_is_ceildiv);
  RUN(eager_implicit_shape_names_and_dtype_hints);
  RUN(prim_func_module_constants_and_lazy_globals);
  RUN(defines_are_typed_like_the_command_line);
  RUN(types_promote_and_casts_are_explicit);
  RUN(symbolic_dims_and_slices);
  RUN(select_between_two_literals);
  RUN(compile_time_helpers_and_device_queries);
  RUN(register_hints_leave_no_ir);
  RUN(thread_binding_names_the_thread_index);
  RUN(diagnostics_are_values_with_places);
  RUN(examples_evaluate_and_verify);
  RUN(fuzz_seeds_evaluate);
  RUN(malformed_programs_never_crash);
  RUN(runaway_compile_time_loops_are_bounded);
  RUN(tilelang_idioms);
  RUN(repeated_evaluation_is_independent);
  TEST_MAIN_END();
}
