/* test_ir.c: the tile IR printer (exact text) and verifier (good IR passes, each class of bad IR
 * fails with its exact message). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/interp.h"
#include "ir_samples.h"
#include "verify/compare.h"

static char *print_kernel(const tc_kernel_ir *k) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_kernel(&sb, k);
  return tc_sb_take(&sb);
}

static char *print_expr(const tc_expr *e) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_expr(&sb, e);
  return tc_sb_take(&sb);
}

#define CHECK_PRINT_EXPR(e, want)  \
  do {                             \
    char *got_ = print_expr(e);    \
    int same_ = strcmp(got_, want) == 0; \
    if (!same_) printf("  got:      %s\n  expected: %s\n", got_, want); \
    free(got_);                    \
    CHECK(same_);                  \
  } while (0)

/* Verify k and expect failure with status st and exactly this message. */
static bool verify_fails(const tc_kernel_ir *k, tilec_status st, const char *msg) {
  tilec_error err;
  memset(&err, 0, sizeof err);
  bool ok = tc_ir_verify(k, "evaluate", &err);
  if (ok || err.status != st || strcmp(err.message, msg) != 0) {
    printf("  got:      [%d] %s\n  expected: [%d] %s\n", (int)err.status, ok ? "(passed)" : err.message, (int)st, msg);
    return false;
  }
  return true;
}

/* ---- printer ---- */
TEST(print_gemm_kernel) {
  char *got = print_kernel(sample_gemm(tc_dt(TC_DT_FLOAT16), tc_dt(TC_DT_FLOAT16), true));
  CHECK_STR(got,
            "kernel matmul(A: float16[M, 36], B: float16[40, 36], C: float16[M, 40] output):\n"
            "  symbolic M: int32\n"
            "  with T.Kernel(3, (M + 15) // 16, threads=32) as (bx, by):\n"
            "    A_shared = alloc shared float16[16, 8]\n"
            "    B_shared = alloc shared float16[16, 8]\n"
            "    C_local = alloc fragment float32[16, 16]\n"
            "    T.fill(C_local, 0.0)\n"
            "    for k in pipelined(0, 5, stages=2):\n"
            "      T.copy(A[by * 16 : +16, k * 8 : +8], A_shared)\n"
            "      T.copy(B[bx * 16 : +16, k * 8 : +8], B_shared)\n"
            "      T.gemm(A_shared, B_shared, C_local, transpose_B=True)\n"
            "    T.copy(C_local, C[by * 16 : +16, bx * 16 : +16])\n");
  free(got);
}

TEST(print_softmax_kernel) {
  char *got = print_kernel(sample_softmax());
  CHECK_STR(got,
            "kernel softmax(X: float32[M, 64], Y: float32[M, 64] output):\n"
            "  symbolic M: int32\n"
            "  with T.Kernel((M + 7) // 8, threads=64) as bx:\n"
            "    X_frag = alloc fragment float32[8, 64]\n"
            "    row_max = alloc fragment float32[8]\n"
            "    row_sum = alloc fragment float32[8]\n"
            "    T.copy(X[bx * 8 : +8, 0 : +64], X_frag)\n"
            "    T.reduce_max(X_frag, row_max, dim=1, clear=True)\n"
            "    for i in parallel(0, 8):\n"
            "      for j in parallel(0, 64):\n"
            "        X_frag[i, j] = T.exp(X_frag[i, j] - row_max[i])\n"
            "    T.reduce_sum(X_frag, row_sum, dim=1, clear=True)\n"
            "    for i in parallel(0, 8):\n"
            "      for j in parallel(0, 64):\n"
            "        X_frag[i, j] = X_frag[i, j] / row_sum[i]\n"
            "    T.copy(X_frag, Y[bx * 8 : +8, 0 : +64])\n");
  free(got);
}

TEST(print_cumsum_kernel) {
  char *got = print_kernel(sample_cumsum(1, true));
  CHECK_STR(got,
            "kernel prefix(X: float32[4, 32], Y: float32[4, 32] output):\n"
            "  with T.Kernel(1, threads=32):\n"
            "    S = alloc shared float32[4, 32]\n"
            "    T.copy(X, S)\n"
            "    T.cumsum(S, S, dim=1, reverse=True)\n"
            "    T.copy(S, Y)\n");
  free(got);
}

TEST(print_thread_level_kernel) {
  char *got = print_kernel(sample_threads());
  CHECK_STR(got,
            "kernel threads(A: int32[N], hist: int32[4] output, count: int32[1] output, total: float32[1] output, "
            "loops: int32[1] output):\n"
            "  symbolic N: int32\n"
            "  with T.Kernel((N + 63) // 64, threads=64) as bx:\n"
            "    S_hist = alloc shared int32[4]\n"
            "    S_sum = alloc shared float32[64]\n"
            "    acc = alloc var int32[1] init 0\n"
            "    for i in parallel(0, 4):\n"
            "      S_hist[i] = 0\n"
            "    barrier()\n"
            "    g: int32 = bx * 64 + tx\n"
            "    v: int32 = A[g]\n"
            "    if g < N:\n"
            "      T.atomic_add(S_hist[v % 4], 1)\n"
            "    S_sum[tx] = if_then_else(g < N, cast(float32, v), 0.0)\n"
            "    barrier()\n"
            "    if tx < 4:\n"
            "      T.atomic_add(hist[tx], S_hist[tx])\n"
            "    T.atomic_add(count[0], 1)\n"
            "    for s in serial(0, 6):\n"
            "      stride: int32 = 32 >> s\n"
            "      if tx < stride:\n"
            "        S_sum[tx] = S_sum[tx] + S_sum[tx + stride]\n"
            "      barrier()\n"
            "    if tx == 0:\n"
            "      T.atomic_add(total[0], S_sum[0])\n"
            "    for j in serial(0, tx % 3 + 1):\n"
            "      acc[0] = acc[0] + 1\n"
            "    T.atomic_add(loops[0], acc[0])\n"
            "    barrier()\n");
  free(got);
}

/* Tile ops with every attribute, else/elif, assert, print, annotate, a 3-D grid and 2-D threads. */
TEST(print_attributes_and_control_flow) {
  tc_kernel_ir *k = S_kernel("misc");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32), f16 = tc_dt(TC_DT_FLOAT16);
  tc_buffer *X = S_param(k, "X", f16, false, 3, S_I(2), S_I(64), S_I(32));
  tc_buffer *Y = S_param(k, "Y", f32, true, 2, S_I(64), S_I(64));
  k->jit_args = "out_idx=[-1]";
  k->grid_ndim = 3;
  k->grid[0] = S_I(1);
  k->grid[1] = S_I(2);
  k->grid[2] = S_I(2);
  k->threads_ndim = 2;
  k->threads[0] = 32;
  k->threads[1] = 4;
  tc_var *bz = S_bidx(k, 2, "bz");
  tc_buffer *As = S_buf(k, "As", f16, TC_SCOPE_SHARED, 2, 64, 32);
  tc_buffer *Cf = S_buf(k, "Cf", f32, TC_SCOPE_FRAGMENT, 2, 64, 64);
  tc_buffer *r = S_buf(k, "r", f32, TC_SCOPE_FRAGMENT, 2, 64, 1);
  tc_stmt *g = tc_ir_stmt(S_A, TC_ST_GEMM, S_NOLOC);
  g->u.gemm.a = S_W(As);
  g->u.gemm.b = S_W(As);
  g->u.gemm.c = S_W(Cf);
  g->u.gemm.trans_b = true;
  g->u.gemm.clear_accum = true;
  g->u.gemm.policy = TC_POLICY_FULL_ROW;
  tc_stmt *red = tc_ir_stmt(S_A, TC_ST_REDUCE, S_NOLOC);
  red->u.reduce.op = TC_RED_ABSMAX;
  red->u.reduce.src = S_W(Cf);
  red->u.reduce.dst = S_W(r);
  red->u.reduce.dim = 1;
  tc_stmt *as = tc_ir_stmt(S_A, TC_ST_ASSERT, S_NOLOC);
  as->u.assert_.cond = S_B(TC_OP_GE, S_V(bz), S_I(0));
  as->u.assert_.msg = "bz \"ok\"";
  tc_stmt *pr = tc_ir_stmt(S_A, TC_ST_PRINT, S_NOLOC);
  pr->u.print.buf = r;
  pr->u.print.msg = "r";
  tc_stmt *an = tc_ir_stmt(S_A, TC_ST_ANNOTATE, S_NOLOC);
  an->u.annotate.what = "use_swizzle";
  an->u.annotate.detail = "panel_size=10";
  tc_var *i = S_loopvar(k, "i");
  tc_stmt *chain = S_if(S_B(TC_OP_EQ, S_V(bz), S_I(0)), S_copy(S_W(Cf), S_W(Y)),
                        S_if(S_B(TC_OP_EQ, S_V(bz), S_I(1)), S_fill(S_W(Y), S_F(-1.5)), S_seq(0)));
  tc_stmt *un = S_for(i, S_I(2), S_I(4), TC_LOOP_UNROLL, S_store(Y, S_F(INFINITY), 2, S_V(i), S_I(0)));
  k->body = S_seq(10, an, S_alloc(As), S_alloc(Cf), S_alloc(r), S_copy(S_R(X, S_V(bz), 1, S_I(0), 64, S_I(0), 32), S_W(As)), g, red,
                  as, pr, S_seq(2, chain, un));
  CHECK(verify_ok(k));
  char *got = print_kernel(k);
  CHECK_STR(got,
            "@jit(out_idx=[-1])\n"
            "kernel misc(X: float16[2, 64, 32], Y: float32[64, 64] output):\n"
            "  with T.Kernel(1, 2, 2, threads=(32, 4)) as (_, _, bz):\n"
            "    annotate use_swizzle(panel_size=10)\n"
            "    As = alloc shared float16[64, 32]\n"
            "    Cf = alloc fragment float32[64, 64]\n"
            "    r = alloc fragment float32[64, 1]\n"
            "    T.copy(X[bz, 0 : +64, 0 : +32], As)\n"
            "    T.gemm(As, As, Cf, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)\n"
            "    T.reduce_absmax(Cf, r, dim=1, clear=False)\n"
            "    assert bz >= 0, \"bz \\\"ok\\\"\"\n"
            "    T.print(r, msg=\"r\")\n"
            "    if bz == 0:\n"
            "      T.copy(Cf, Y)\n"
            "    elif bz == 1:\n"
            "      T.fill(Y, -1.5)\n"
            "    else:\n"
            "      pass\n"
            "    for i in unroll(2, 6):\n"
            "      Y[i, 0] = inf\n");
  free(got);
}

TEST(print_expressions_with_minimal_parentheses) {
  tc_kernel_ir *k = S_kernel("e");
  tc_dtype i32 = tc_dt(TC_DT_INT32), f32 = tc_dt(TC_DT_FLOAT32), bl = tc_dt(TC_DT_BOOL);
  tc_var *a = tc_ir_new_var(S_A, k, "a", i32, TC_VAR_LOCAL, S_NOLOC), *b = tc_ir_new_var(S_A, k, "b", i32, TC_VAR_LOCAL, S_NOLOC);
  tc_var *c = tc_ir_new_var(S_A, k, "c", i32, TC_VAR_LOCAL, S_NOLOC), *x = tc_ir_new_var(S_A, k, "x", f32, TC_VAR_LOCAL, S_NOLOC);
  tc_var *p = tc_ir_new_var(S_A, k, "p", bl, TC_VAR_LOCAL, S_NOLOC), *q = tc_ir_new_var(S_A, k, "q", bl, TC_VAR_LOCAL, S_NOLOC);
  tc_expr *A = S_V(a), *B = S_V(b), *C = S_V(c), *X = S_V(x), *P = S_V(p), *Q = S_V(q);
  CHECK_PRINT_EXPR(S_B(TC_OP_MUL, S_B(TC_OP_ADD, A, B), C), "(a + b) * c");
  CHECK_PRINT_EXPR(S_B(TC_OP_ADD, A, S_B(TC_OP_MUL, B, C)), "a + b * c");
  CHECK_PRINT_EXPR(S_B(TC_OP_SUB, S_B(TC_OP_SUB, A, B), C), "a - b - c");
  CHECK_PRINT_EXPR(S_B(TC_OP_SUB, A, S_B(TC_OP_SUB, B, C)), "a - (b - c)");
  CHECK_PRINT_EXPR(S_B(TC_OP_FLOORDIV, A, S_B(TC_OP_MUL, B, C)), "a // (b * c)");
  CHECK_PRINT_EXPR(S_B(TC_OP_FLOORMOD, S_B(TC_OP_FLOORDIV, A, B), C), "a // b % c");
  CHECK_PRINT_EXPR(S_U(TC_OP_NEG, S_B(TC_OP_ADD, A, B)), "-(a + b)");
  CHECK_PRINT_EXPR(S_U(TC_OP_NEG, S_I(-3)), "-(-3)");
  CHECK_PRINT_EXPR(S_B(TC_OP_MUL, A, S_I(-3)), "a * -3");
  CHECK_PRINT_EXPR(S_B(TC_OP_SHL, A, S_B(TC_OP_ADD, B, S_I(1))), "a << b + 1");
  CHECK_PRINT_EXPR(S_B(TC_OP_BIT_AND, S_B(TC_OP_BIT_OR, A, B), C), "(a | b) & c");
  CHECK_PRINT_EXPR(S_U(TC_OP_BIT_NOT, A), "~a");
  CHECK_PRINT_EXPR(S_B(TC_OP_OR, S_B(TC_OP_AND, P, Q), P), "p and q or p");
  CHECK_PRINT_EXPR(S_B(TC_OP_AND, P, S_B(TC_OP_OR, Q, P)), "p and (q or p)");
  CHECK_PRINT_EXPR(S_B(TC_OP_AND, S_U(TC_OP_NOT, S_B(TC_OP_LT, A, B)), Q), "not a < b and q");
  CHECK_PRINT_EXPR(S_U(TC_OP_NOT, S_B(TC_OP_AND, P, Q)), "not (p and q)");
  CHECK_PRINT_EXPR(S_B(TC_OP_EQ, S_B(TC_OP_LT, A, B), P), "(a < b) == p");
  CHECK_PRINT_EXPR(S_B(TC_OP_LT, S_B(TC_OP_ADD, A, B), C), "a + b < c");
  CHECK_PRINT_EXPR(S_B(TC_OP_MAX, S_B(TC_OP_ADD, A, B), S_I(0)), "max(a + b, 0)");
  CHECK_PRINT_EXPR(S_B(TC_OP_POW, X, S_F(2.0)), "pow(x, 2.0)");
  CHECK_PRINT_EXPR(S_U(TC_OP_EXP2, S_B(TC_OP_MUL, X, S_F(1.44269504))), "T.exp2(x * 1.44269504)");
  CHECK_PRINT_EXPR(S_U(TC_OP_ABS, A), "T.abs(a)");
  CHECK_PRINT_EXPR(tc_ir_cast(S_A, tc_dt(TC_DT_FLOAT16), S_B(TC_OP_ADD, X, S_F(0.1)), S_NOLOC), "cast(float16, x + 0.1)");
  CHECK_PRINT_EXPR(tc_ir_select(S_A, P, X, S_U(TC_OP_NEG, S_F(INFINITY)), S_NOLOC), "if_then_else(p, x, -inf)");
  CHECK_PRINT_EXPR(S_B(TC_OP_SUB, X, S_F(-1.5)), "x - -1.5");
  CHECK_PRINT_EXPR(tc_ir_float(S_A, 1.0, tc_dt(TC_DT_FLOAT16), S_NOLOC), "float16(1.0)");
  CHECK_PRINT_EXPR(tc_ir_float(S_A, -0.25, tc_dt(TC_DT_BFLOAT16), S_NOLOC), "bfloat16(-0.25)");
  CHECK_PRINT_EXPR(tc_ir_float(S_A, 1e-5, tc_dt(TC_DT_FLOAT64), S_NOLOC), "float64(1e-05)");
  CHECK_PRINT_EXPR(tc_ir_float(S_A, NAN, tc_dt(TC_DT_FLOAT32), S_NOLOC), "nan");
  CHECK_PRINT_EXPR(S_F(3.0), "3.0");
  CHECK_PRINT_EXPR(S_F(1e20), "1e+20");
  CHECK_PRINT_EXPR(tc_ir_int(S_A, 5, tc_dt(TC_DT_INT64), S_NOLOC), "int64(5)");
  CHECK_PRINT_EXPR(tc_ir_int(S_A, 7, tc_dt(TC_DT_UINT8), S_NOLOC), "uint8(7)");
  CHECK_PRINT_EXPR(tc_ir_bool(S_A, true, S_NOLOC), "True");
  CHECK_PRINT_EXPR(tc_ir_bool(S_A, false, S_NOLOC), "False");
}

/* Names get their id only when two different variables or buffers of one name are visible at
 * once (a shadowing loop, a local named like a parameter); sibling loops keep plain names. */
TEST(print_disambiguates_overlapping_names_only) {
  tc_kernel_ir *k = S_kernel("names");
  tc_dtype i32 = tc_dt(TC_DT_INT32);
  tc_buffer *A = S_param(k, "A", i32, true, 1, S_I(4));
  k->grid[0] = S_I(1);
  tc_var *i1 = S_loopvar(k, "i"), *i2 = S_loopvar(k, "i"), *i3 = S_loopvar(k, "i"), *av;
  tc_stmt *let_a = S_let(k, &av, "A", S_V(i2));
  tc_stmt *inner = S_for(i2, S_I(0), S_I(2), TC_LOOP_SERIAL, S_seq(2, let_a, S_store(A, S_B(TC_OP_ADD, S_V(av), S_V(i1)), 1, S_V(i1))));
  k->body = S_seq(2, S_for(i1, S_I(0), S_I(2), TC_LOOP_SERIAL, inner), S_for(i3, S_I(0), S_I(4), TC_LOOP_SERIAL, S_store(A, S_V(i3), 1, S_V(i3))));
  CHECK(verify_ok(k));
  char *got = print_kernel(k);
  char want[1024];
  snprintf(want, sizeof want,
           "kernel names(A_%d: int32[4] output):\n"
           "  with T.Kernel(1, threads=1):\n"
           "    for i_%d in serial(0, 2):\n"
           "      for i_%d in serial(0, 2):\n"
           "        A_%d: int32 = i_%d\n"
           "        A_%d[i_%d] = A_%d + i_%d\n"
           "    for i in serial(0, 4):\n"
           "      A_%d[i] = i\n",
           A->id, i1->id, i2->id, av->id, i2->id, A->id, i1->id, av->id, i1->id, A->id);
  CHECK_STR(got, want);
  free(got);
}

/* ---- verifier ---- */
TEST(verify_accepts_the_samples) {
  CHECK(verify_ok(sample_gemm(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_FLOAT32), false)));
  CHECK(verify_ok(sample_gemm(tc_dt(TC_DT_FLOAT16), tc_dt(TC_DT_FLOAT16), true)));
  CHECK(verify_ok(sample_softmax()));
  CHECK(verify_ok(sample_cumsum(0, false)));
  CHECK(verify_ok(sample_threads()));
}

static tc_source src = {"prog.py", "def f():\n    T.gemm(A_s, B_s, C_l)\n", 37};
static const tc_loc L2 = {&src, 2, 5};

/* The softmax sample's statements by position: 3 copy, 4 reduce_max, 5 parallel, 6 reduce_sum. */
static tc_stmt *body_item(tc_kernel_ir *k, int i) { return k->body->u.seq.items[i]; }

TEST(verify_gemm_shape_mismatch_is_a_program_error) {
  tc_kernel_ir *k = sample_gemm(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_FLOAT32), false);
  tc_stmt *loop = body_item(k, 4);
  tc_stmt *g = loop->u.loop.body->u.seq.items[2];
  g->loc = L2;
  g->u.gemm.trans_b = true; /* B_shared is [8, 16]: as [N, K] it no longer fits */
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "T.gemm shapes do not fit: A (A_shared) is [16, 8], B (B_shared) is [8, 16], C (C_local) is [16, 16]; "
                     "expected A [M, K], B [N, K] (transpose_B), C [M, N]"));
  tilec_error err;
  memset(&err, 0, sizeof err);
  tc_ir_verify(k, "evaluate", &err);
  CHECK_INT(err.line, 2);
  CHECK_INT(err.col, 5);
  CHECK_STR(err.file, "prog.py");
  g->u.gemm.trans_b = false;
  g->u.gemm.trans_a = true;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "T.gemm shapes do not fit: A (A_shared) is [16, 8], B (B_shared) is [8, 16], C (C_local) is [16, 16]; "
                     "expected A [K, M] (transpose_A), B [K, N], C [M, N]"));
}

TEST(verify_tile_op_shape_errors) {
  tc_kernel_ir *k = sample_softmax();
  tc_stmt *cp = body_item(k, 3);
  cp->u.copy.src.r[1].extent = 32;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.copy shape mismatch: source X is [8, 32] but destination X_frag is [8, 64]"));
  cp->u.copy.src.r[1].extent = 64;
  cp->u.copy.src.r[0].extent = 1; /* [1, 64] vs [8, 64] */
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.copy shape mismatch: source X is [1, 64] but destination X_frag is [8, 64]"));
  cp->u.copy.src.r[0].extent = 8;
  CHECK(verify_ok(k));

  tc_stmt *rm = body_item(k, 4);
  rm->u.reduce.dim = 0;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "T.reduce_max shape mismatch: reducing X_frag [8, 64] along dim 0 gives [64], but destination row_max is [8]"));
  rm->u.reduce.dim = 2;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.reduce_max: dim=2 is out of range for the 2-D source X_frag"));
  rm->u.reduce.dim = 1;

  tc_kernel_ir *c = sample_cumsum(1, false);
  tc_stmt *cs = c->body->u.seq.items[2];
  cs->u.cumsum.dst.r[1].extent = 16;
  CHECK(verify_fails(c, TILEC_ERROR_PROGRAM, "T.cumsum shape mismatch: source S is [4, 32] but destination S is [4, 16]"));
  cs->u.cumsum.dst.r[1].extent = 32;
  cs->u.cumsum.dim = -1;
  CHECK(verify_fails(c, TILEC_ERROR_PROGRAM, "T.cumsum: dim=-1 is out of range for the 2-D source S"));
  cs->u.cumsum.dim = 1;
  cs->u.cumsum.dst.r[1].start = S_I(8);
  CHECK(verify_fails(c, TILEC_ERROR_PROGRAM,
                     "T.cumsum: the destination region [4, 32] of S runs outside the buffer in dimension 1 (start 8, size 32)"));
}

TEST(verify_fill_value_dtype) {
  tc_kernel_ir *k = sample_gemm(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_FLOAT32), false);
  body_item(k, 3)->u.fill.value = tc_ir_float(S_A, 0.0, tc_dt(TC_DT_FLOAT16), S_NOLOC);
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.fill: the value has dtype float16 but C_local holds float32"));
}

TEST(verify_tile_ops_need_the_whole_block) {
  tc_kernel_ir *k = sample_threads();
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", tc_dt(TC_DT_INT32), TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *S = k->body->u.seq.items[0]->u.alloc.buf;
  tc_stmt *fill = S_fill(S_W(S), S_I(0));
  fill->loc = L2;
  k->body->u.seq.items[16] = S_if(S_B(TC_OP_LT, S_V(tx), S_I(32)), fill, NULL);
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "T.fill under control flow that depends on the thread index; tile operations need the whole block"));
  /* through a LET derived from the thread index too */
  tc_var *g = k->body->u.seq.items[5]->u.let.var;
  k->body->u.seq.items[16] = S_if(S_B(TC_OP_LT, S_V(g), S_I(32)), fill, NULL);
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "T.fill under control flow that depends on the thread index; tile operations need the whole block"));
  tc_var *i = S_loopvar(k, "i");
  k->body->u.seq.items[16] = S_for(i, S_I(0), S_I(2), TC_LOOP_PARALLEL, fill);
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.fill inside a T.Parallel loop; tile operations are done by the whole block"));
  tc_stmt *cp = S_copy(S_R(k->params[0].buf, S_V(g), 4), S_R(S, S_I(0), 4));
  k->body->u.seq.items[16] = cp;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "T.copy on a region that depends on the thread index; tile operations are done by the whole block"));
  k->body->u.seq.items[16] = S_for(i, S_I(0), S_V(tx), TC_LOOP_PARALLEL, S_store(S, S_I(1), 1, S_I(0)));
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM,
                     "a T.Parallel loop with bounds that depend on the thread index; tile operations are done by the whole block"));
  k->body->u.seq.items[16] = S_if(S_B(TC_OP_LT, S_V(k->block_idx[0]), S_I(32)), fill, NULL); /* uniform: fine */
  CHECK(verify_ok(k));
}

TEST(verify_internal_structure_errors) {
  tc_kernel_ir *k = sample_softmax();
  tc_stmt *p1 = body_item(k, 5), *st = p1->u.loop.body->u.loop.body;
  tc_expr *exp_arg = st->u.store.value->args[0]; /* X_frag[i, j] - row_max[i] */
  tc_expr *ld = exp_arg->args[0];

  ld->nargs = 1;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: load from X_frag has 1 index(es), the buffer has 2 dimension(s), "
                     "in `X_frag[i, j] = T.exp(X_frag[i] - row_max[i])`"));
  ld->nargs = 2;

  st->u.store.nidx = 1;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: store to X_frag has 1 index(es), the buffer has 2 dimension(s), "
                     "in `X_frag[i] = T.exp(X_frag[i, j] - row_max[i])`"));
  st->u.store.nidx = 2;

  exp_arg->args[1] = tc_ir_float(S_A, 1.0, tc_dt(TC_DT_FLOAT64), S_NOLOC);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: operand 2 of `-` has dtype float64, the result is float32, "
                     "in `X_frag[i, j] = T.exp(X_frag[i, j] - float64(1.0))`"));
  exp_arg->args[1] = S_F(1.0);

  tc_expr *saved = st->u.store.value;
  st->u.store.value = S_U(TC_OP_EXP, S_I(1));
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: `T.exp` on int32, needs a float, in `X_frag[i, j] = T.exp(1)`"));
  st->u.store.value = NULL;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: missing expression, in `X_frag[i, j] = <null>`"));
  st->u.store.value = S_I(1);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: value stored to X_frag has dtype int32, the buffer is float32, "
                     "in `X_frag[i, j] = 1`"));
  tc_expr *bad = S_B(TC_OP_ADD, S_F(1.0), S_F(2.0));
  bad->nargs = 1;
  st->u.store.value = bad;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: `+` has 1 operand(s), expected 2, in `X_frag[i, j] = +(1.0)`"));
  tc_expr *cmp = S_B(TC_OP_LT, S_F(1.0), S_F(2.0));
  cmp->dtype = tc_dt(TC_DT_FLOAT32);
  st->u.store.value = cmp;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: `<` has result dtype float32, not bool, in `X_frag[i, j] = 1.0 < 2.0`"));
  st->u.store.value = tc_ir_select(S_A, S_I(1), S_F(1.0), S_F(2.0), S_NOLOC);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: if_then_else condition has dtype int32, not bool, "
                     "in `X_frag[i, j] = if_then_else(1, 1.0, 2.0)`"));
  st->u.store.value = S_B(TC_OP_AND, S_I(1), tc_ir_bool(S_A, true, S_NOLOC));
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: operand 1 of `and` has dtype int32, not bool, in `X_frag[i, j] = 1 and True`"));
  st->u.store.value = tc_ir_load(S_A, st->u.store.buf, 2, (tc_expr *[]){S_V(p1->u.loop.var), S_F(0.0)}, S_NOLOC);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: index 2 of X_frag has dtype float32, not an integer, "
                     "in `X_frag[i, j] = X_frag[i, 0.0]`"));
  st->u.store.value = saved;
  CHECK(verify_ok(k));

  /* the first parallel loop's i used in the second loop */
  tc_stmt *p2 = body_item(k, 7);
  tc_stmt *st2 = p2->u.loop.body->u.loop.body;
  st2->u.store.idx[0] = S_V(p1->u.loop.var);
  char want[256];
  snprintf(want, sizeof want,
           "IR verification failed after evaluate: variable i (id %d) used outside its scope, in `X_frag[i, j] = X_frag[i, j] / row_sum[i]`",
           p1->u.loop.var->id);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, want));
  st2->u.store.idx[0] = S_V(p2->u.loop.var);

  /* a loop condition that is not an integer; an IF on an int */
  p2->u.loop.extent = S_F(8.0);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: loop extent has dtype float32, not an integer, in `for i in parallel(0, 8.0):`"));
  p2->u.loop.extent = S_I(8);
  k->body->u.seq.items[7] = S_if(S_I(1), p2, NULL);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: if condition has dtype int32, not bool, in `if 1:`"));
  k->body->u.seq.items[7] = p2;

  /* a region whose rank differs from its buffer's */
  tc_stmt *cp = body_item(k, 3);
  cp->u.copy.dst.ndim = 1;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: destination region of X_frag has 1 dimension(s), the buffer has 2, "
                     "in `T.copy(X[bx * 8 : +8, 0 : +64], X_frag[0 : +8])`"));
  cp->u.copy.dst.ndim = 2;
  cp->u.copy.src.r[0].extent = 0;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: source region of X has extent 0 in dimension 0, "
                     "in `T.copy(X[bx * 8 : +0, 0 : +64], X_frag)`"));
  cp->u.copy.src.r[0].extent = 8;
  CHECK(verify_ok(k));
}

TEST(verify_scope_of_lets_and_buffers) {
  tc_kernel_ir *k = sample_threads();
  tc_stmt **it = k->body->u.seq.items;
  /* use of v (declared by item 6) before its LET: swap items 6 and 7 */
  tc_stmt *let_v = it[6], *use = it[7];
  it[6] = use;
  it[7] = let_v;
  char want[256];
  snprintf(want, sizeof want, "IR verification failed after evaluate: variable v (id %d) used outside its scope, in `T.atomic_add(S_hist[v %% 4], 1)`",
           let_v->u.let.var->id);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, want));
  it[6] = let_v;
  it[7] = use;
  /* a LET inside a loop body is not visible after the loop: use stride after the tree loop */
  tc_var *stride = it[12]->u.loop.body->u.seq.items[0]->u.let.var;
  tc_stmt *saved = it[16];
  it[16] = S_store(k->body->u.seq.items[1]->u.alloc.buf, S_F(0.0), 1, S_V(stride));
  snprintf(want, sizeof want, "IR verification failed after evaluate: variable stride (id %d) used outside its scope, in `S_sum[stride] = 0.0`",
           stride->id);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, want));
  it[16] = saved;
  /* a buffer used before its allocation: move the S_hist alloc after its first use */
  tc_stmt *alloc = it[0];
  it[0] = it[3];
  it[3] = alloc;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: buffer S_hist used outside its scope, in `S_hist[i] = 0`"));
  it[3] = it[0];
  it[0] = alloc;
  /* ASSIGN to a variable that is not in scope; LET of a loop-kind variable */
  tc_stmt *as = tc_ir_stmt(S_A, TC_ST_ASSIGN, S_NOLOC);
  as->u.let.var = stride;
  as->u.let.value = S_I(1);
  it[16] = as;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: assignment to stride outside its scope, in `stride = 1`"));
  as->kind = TC_ST_LET;
  as->u.let.var = it[3]->u.loop.var;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "IR verification failed after evaluate: let of i is not a local variable, in `i: int32 = 1`"));
  it[16] = saved;
  /* a thread index beyond the launch's thread dimensions */
  tc_var *ty = tc_ir_new_var(S_A, k, "ty", tc_dt(TC_DT_INT32), TC_VAR_THREAD_IDX, S_NOLOC);
  ty->axis = 1; /* threads=64 means (64, 1, 1): ty is always 0, and fine */
  it[16] = S_atomic(k->params[2].buf, S_V(ty), 1, S_I(0));
  CHECK(verify_ok(k));
  ty->axis = 3;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL,
                     "IR verification failed after evaluate: thread index ty has axis 3, not 0, 1 or 2, in `T.atomic_add(count[0], ty)`"));
  it[16] = saved;
  CHECK(verify_ok(k));
}

/* ---- robustness: damaged IR never crashes the verifier, the printer or the interpreter ---- */
typedef struct slots {
  tc_expr **e[4096];
  tc_stmt **s[1024];
  int ne, ns;
} slots;

static void slot_expr(slots *sl, tc_expr **p) {
  if (!*p || sl->ne >= 4096) return;
  sl->e[sl->ne++] = p;
  for (int i = 0; i < (*p)->nargs; i++) slot_expr(sl, &(*p)->args[i]);
}

static void slot_region(slots *sl, tc_region *r) {
  for (int i = 0; r->buf && i < r->ndim; i++) slot_expr(sl, &r->r[i].start);
}

static void slot_stmt(slots *sl, tc_stmt **p) {
  tc_stmt *s = *p;
  if (!s || sl->ns >= 1024) return;
  sl->s[sl->ns++] = p;
  switch (s->kind) {
  case TC_ST_SEQ: for (int i = 0; i < s->u.seq.n; i++) slot_stmt(sl, &s->u.seq.items[i]); break;
  case TC_ST_FOR: slot_expr(sl, &s->u.loop.min); slot_expr(sl, &s->u.loop.extent); slot_stmt(sl, &s->u.loop.body); break;
  case TC_ST_IF: slot_expr(sl, &s->u.if_.cond); slot_stmt(sl, &s->u.if_.then_s); slot_stmt(sl, &s->u.if_.else_s); break;
  case TC_ST_STORE:
    for (int i = 0; i < s->u.store.nidx; i++) slot_expr(sl, &s->u.store.idx[i]);
    slot_expr(sl, &s->u.store.value);
    break;
  case TC_ST_ATOMIC_ADD:
    for (int i = 0; s->u.atomic.buf && i < s->u.atomic.nidx; i++) slot_expr(sl, &s->u.atomic.idx[i]);
    slot_expr(sl, &s->u.atomic.value);
    slot_region(sl, &s->u.atomic.dst);
    slot_region(sl, &s->u.atomic.src);
    break;
  case TC_ST_LET: case TC_ST_ASSIGN: slot_expr(sl, &s->u.let.value); break;
  case TC_ST_COPY: slot_region(sl, &s->u.copy.src); slot_region(sl, &s->u.copy.dst); break;
  case TC_ST_GEMM: slot_region(sl, &s->u.gemm.a); slot_region(sl, &s->u.gemm.b); slot_region(sl, &s->u.gemm.c); break;
  case TC_ST_FILL: slot_region(sl, &s->u.fill.dst); slot_expr(sl, &s->u.fill.value); break;
  case TC_ST_REDUCE: slot_region(sl, &s->u.reduce.src); slot_region(sl, &s->u.reduce.dst); break;
  case TC_ST_CUMSUM: slot_region(sl, &s->u.cumsum.src); slot_region(sl, &s->u.cumsum.dst); break;
  default: break;
  }
}

static uint32_t dmg_rng = 12345;
static uint32_t dmg_next(void) {
  dmg_rng = dmg_rng * 1103515245u + 12345u;
  return dmg_rng >> 8;
}

TEST(damaged_ir_is_reported_not_crashed_on) {
  int passed = 0, rejected = 0;
  if (getenv("TILEC_DAMAGE_SEED")) dmg_rng = (uint32_t)strtoul(getenv("TILEC_DAMAGE_SEED"), NULL, 10);
  for (int iter = 0; iter < 1500; iter++) {
    tc_kernel_ir *k = iter % 3 == 0 ? sample_threads() : iter % 3 == 1 ? sample_softmax() : sample_gemm(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_FLOAT32), iter & 4);
    slots *sl = calloc(1, sizeof *sl);
    slot_stmt(sl, &k->body);
    for (int d = 0; d < 1 + (int)(dmg_next() % 3); d++) {
      uint32_t what = dmg_next() % 6;
      if (what == 0 && sl->ns) *sl->s[dmg_next() % (uint32_t)sl->ns] = NULL;
      else if (what == 1 && sl->ne) *sl->e[dmg_next() % (uint32_t)sl->ne] = NULL;
      else if (what == 2 && sl->ne) {
        tc_expr *e = *sl->e[dmg_next() % (uint32_t)sl->ne];
        if (e) e->op = (tc_expr_op)(dmg_next() % (TC_OP_COUNT + 2));
      }
      else if (what == 3 && sl->ne) {
        tc_expr *e = *sl->e[dmg_next() % (uint32_t)sl->ne];
        if (e) e->dtype = tc_dt((tc_scalar_type)(dmg_next() % (TC_DT_COUNT + 1)));
      } else if (what == 4 && sl->ns) {
        tc_stmt *s = *sl->s[dmg_next() % (uint32_t)sl->ns];
        if (s && s->kind == TC_ST_SEQ && s->u.seq.n > 1) { /* reorder: scope errors */
          int a = (int)(dmg_next() % (uint32_t)s->u.seq.n), b = (int)(dmg_next() % (uint32_t)s->u.seq.n);
          tc_stmt *t = s->u.seq.items[a];
          s->u.seq.items[a] = s->u.seq.items[b];
          s->u.seq.items[b] = t;
        }
      } else if (what == 5 && sl->ne) {
        tc_expr *e = *sl->e[dmg_next() % (uint32_t)sl->ne];
        if (e && e->op == TC_OP_CONST_INT) e->ival = (int64_t)dmg_next() - (1 << 23);
      }
    }
    free(sl);
    tilec_error err;
    memset(&err, 0, sizeof err);
    bool ok = tc_ir_verify(k, "damage", &err);
    char *text = print_kernel(k);
    EXPECT(text != NULL);
    free(text);
    if (!ok) {
      EXPECT(err.status == TILEC_ERROR_INTERNAL || err.status == TILEC_ERROR_PROGRAM);
      EXPECT(err.message[0] != 0);
      rejected++;
      continue;
    }
    passed++;
    /* still valid IR: the interpreter must run it or fail cleanly */
    static char bufs[8][1 << 16];
    void *data[8];
    for (int i = 0; i < 8; i++) data[i] = bufs[i];
    int64_t syms[1] = {20};
    memset(&err, 0, sizeof err);
    tilec_status st = tc_interp_run_limited(k, data, NULL, NULL, syms, 2000000, &err);
    EXPECT(st == TILEC_OK || err.message[0] != 0);
  }
  EXPECT(rejected > 500 && passed > 50);
  if (!(rejected > 500 && passed > 50) || getenv("TILEC_TEST_VERBOSE")) printf("  rejected %d, passed %d\n", rejected, passed);
}

/* --verify's comparison: a float32 result off by 8e-4 of its largest element fails float32's
 * tolerance, passes when the kernel multiplied fp8 tensors on a GPU (fp8 accumulation), and an
 * error of 1e-2 fails both; a coarser output keeps its own tolerance. */
TEST(compare_fp8_accumulation_floor) {
  float ref[64], out[64];
  for (int i = 0; i < 64; i++) ref[i] = out[i] = (float)(i % 7) - 3.5f;
  out[5] += 8e-4f * 3.5f;
  tilec_compare c;
  tc_compare_buffers(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_INVALID), false, out, ref, 64, &c);
  CHECK(!c.ok);
  tc_compare_buffers(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_INVALID), true, out, ref, 64, &c);
  CHECK(c.ok);
  out[5] = ref[5] + 1e-2f * 3.5f;
  tc_compare_buffers(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_INVALID), true, out, ref, 64, &c);
  CHECK(!c.ok);
  CHECK(tc_compare_is_fp8(tc_dt(TC_DT_FLOAT8_E4M3FN)));
  CHECK(!tc_compare_is_fp8(tc_dt(TC_DT_INT8)) && !tc_compare_is_fp8(tc_dt(TC_DT_FLOAT16)));
}

/* The GPU lowering drops a failed attempt's notes with tc_sb_truncate. */
TEST(strbuf_truncate_drops_the_tail) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_truncate(&sb, 0); /* empty: nothing to drop */
  CHECK_STR(tc_sb_cstr(&sb), "");
  tc_sb_puts(&sb, "kept\n");
  size_t mark = sb.len;
  tc_sb_printf(&sb, "dropped %d\n", 1);
  tc_sb_truncate(&sb, mark);
  CHECK_STR(tc_sb_cstr(&sb), "kept\n");
  tc_sb_truncate(&sb, 100); /* past the end: unchanged */
  tc_sb_puts(&sb, "again");
  char *s = tc_sb_take(&sb);
  CHECK_STR(s, "kept\nagain");
  free(s);
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  RUN(print_gemm_kernel);
  RUN(strbuf_truncate_drops_the_tail);
  RUN(print_softmax_kernel);
  RUN(print_cumsum_kernel);
  RUN(print_thread_level_kernel);
  RUN(print_attributes_and_control_flow);
  RUN(print_expressions_with_minimal_parentheses);
  RUN(print_disambiguates_overlapping_names_only);
  RUN(verify_accepts_the_samples);
  RUN(verify_gemm_shape_mismatch_is_a_program_error);
  RUN(verify_tile_op_shape_errors);
  RUN(verify_fill_value_dtype);
  RUN(verify_tile_ops_need_the_whole_block);
  RUN(verify_internal_structure_errors);
  RUN(verify_scope_of_lets_and_buffers);
  RUN(damaged_ir_is_reported_not_crashed_on);
  RUN(compare_fp8_accumulation_floor);
  tc_arena_free(&arena);
  TEST_MAIN_END();
}
