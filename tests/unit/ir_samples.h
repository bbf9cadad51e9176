/* ir_samples.h: tile IR kernels built by hand with the builder, shared by test_ir.c (printer,
 * verifier) and test_interp.c (reference interpreter). */
#ifndef TILEC_TEST_IR_SAMPLES_H
#define TILEC_TEST_IR_SAMPLES_H
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

static tc_arena *S_A; /* the arena every sample is built in; set by the test's main */
static const tc_loc S_NOLOC = {0};

static inline tc_expr *S_I(int64_t v) { return tc_ir_int(S_A, v, tc_dt(TC_DT_INT32), S_NOLOC); }
static inline tc_expr *S_F(double v) { return tc_ir_float(S_A, v, tc_dt(TC_DT_FLOAT32), S_NOLOC); }
static inline tc_expr *S_V(tc_var *v) { return tc_ir_var_ref(S_A, v, S_NOLOC); }
static inline tc_expr *S_B(tc_expr_op op, tc_expr *x, tc_expr *y) { return tc_ir_binary(S_A, op, x, y, S_NOLOC); }
static inline tc_expr *S_U(tc_expr_op op, tc_expr *x) { return tc_ir_unary(S_A, op, x, S_NOLOC); }
static inline tc_expr *S_LD(tc_buffer *b, int n, ...) {
  tc_expr *idx[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) idx[i] = va_arg(ap, tc_expr *);
  va_end(ap);
  return tc_ir_load(S_A, b, n, idx, S_NOLOC);
}

static inline tc_kernel_ir *S_kernel(const char *name) {
  tc_kernel_ir *k = TC_NEW(S_A, tc_kernel_ir);
  k->name = name;
  k->grid_ndim = 1;
  k->threads_ndim = 1;
  k->threads[0] = 1;
  return k;
}

static inline tc_buffer *S_param(tc_kernel_ir *k, const char *name, tc_dtype dt, bool out, int ndim, ...) {
  tc_expr *shape[8];
  va_list ap;
  va_start(ap, ndim);
  for (int i = 0; i < ndim; i++) shape[i] = va_arg(ap, tc_expr *);
  va_end(ap);
  tc_buffer *b = tc_ir_new_buffer(S_A, k, name, dt, TC_SCOPE_GLOBAL, ndim, shape, S_NOLOC);
  tc_param *np = TC_NEW_ARRAY(S_A, tc_param, k->nparams + 1);
  if (k->nparams) memcpy(np, k->params, sizeof *np * (size_t)k->nparams);
  b->param_index = k->nparams;
  np[k->nparams] = (tc_param){name, b, NULL, out};
  k->params = np;
  k->nparams++;
  return b;
}

static inline tc_var *S_sym(tc_kernel_ir *k, const char *name) {
  tc_var *v = tc_ir_new_var(S_A, k, name, tc_dt(TC_DT_INT32), TC_VAR_SYMBOLIC, S_NOLOC);
  tc_var **ns = TC_NEW_ARRAY(S_A, tc_var *, k->nsyms + 1);
  if (k->nsyms) memcpy(ns, k->syms, sizeof *ns * (size_t)k->nsyms);
  ns[k->nsyms++] = v;
  k->syms = ns;
  return v;
}

static inline tc_var *S_bidx(tc_kernel_ir *k, int axis, const char *name) {
  tc_var *v = tc_ir_new_var(S_A, k, name, tc_dt(TC_DT_INT32), TC_VAR_BLOCK_IDX, S_NOLOC);
  v->axis = axis;
  k->block_idx[axis] = v;
  return v;
}

static inline tc_buffer *S_buf(tc_kernel_ir *k, const char *name, tc_dtype dt, tc_scope scope, int ndim, ...) {
  tc_expr *shape[8];
  va_list ap;
  va_start(ap, ndim);
  for (int i = 0; i < ndim; i++) shape[i] = S_I(va_arg(ap, int));
  va_end(ap);
  return tc_ir_new_buffer(S_A, k, name, dt, scope, ndim, shape, S_NOLOC);
}

static inline tc_stmt *S_alloc(tc_buffer *b) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_ALLOC, S_NOLOC);
  s->u.alloc.buf = b;
  return s;
}

/* region: n (start, extent) pairs */
static inline tc_region S_R(tc_buffer *b, ...) {
  tc_region r;
  r.buf = b;
  r.ndim = b->ndim;
  r.r = TC_NEW_ARRAY(S_A, tc_range, b->ndim);
  va_list ap;
  va_start(ap, b);
  for (int i = 0; i < b->ndim; i++) {
    r.r[i].start = va_arg(ap, tc_expr *);
    r.r[i].extent = va_arg(ap, int);
  }
  va_end(ap);
  return r;
}
static inline tc_region S_W(tc_buffer *b) { return tc_ir_whole_region(S_A, b); }

static inline tc_stmt *S_copy(tc_region src, tc_region dst) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_COPY, S_NOLOC);
  s->u.copy.src = src;
  s->u.copy.dst = dst;
  return s;
}

static inline tc_stmt *S_fill(tc_region dst, tc_expr *v) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_FILL, S_NOLOC);
  s->u.fill.dst = dst;
  s->u.fill.value = v;
  return s;
}

static inline tc_stmt *S_for(tc_var *v, tc_expr *min, tc_expr *ext, tc_loop_kind kind, tc_stmt *body) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_FOR, S_NOLOC);
  s->u.loop.var = v;
  s->u.loop.min = min;
  s->u.loop.extent = ext;
  s->u.loop.kind = kind;
  s->u.loop.body = body;
  return s;
}

static inline tc_var *S_loopvar(tc_kernel_ir *k, const char *name) {
  return tc_ir_new_var(S_A, k, name, tc_dt(TC_DT_INT32), TC_VAR_LOOP, S_NOLOC);
}

static inline tc_stmt *S_store(tc_buffer *b, tc_expr *value, int n, ...) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_STORE, S_NOLOC);
  s->u.store.buf = b;
  s->u.store.nidx = n;
  s->u.store.idx = TC_NEW_ARRAY(S_A, tc_expr *, n > 0 ? n : 1);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) s->u.store.idx[i] = va_arg(ap, tc_expr *);
  va_end(ap);
  s->u.store.value = value;
  return s;
}

static inline tc_stmt *S_atomic(tc_buffer *b, tc_expr *value, int n, ...) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_ATOMIC_ADD, S_NOLOC);
  s->u.atomic.buf = b;
  s->u.atomic.nidx = n;
  s->u.atomic.idx = TC_NEW_ARRAY(S_A, tc_expr *, n > 0 ? n : 1);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) s->u.atomic.idx[i] = va_arg(ap, tc_expr *);
  va_end(ap);
  s->u.atomic.value = value;
  return s;
}

static inline tc_stmt *S_let(tc_kernel_ir *k, tc_var **out, const char *name, tc_expr *value) {
  tc_var *v = tc_ir_new_var(S_A, k, name, value->dtype, TC_VAR_LOCAL, S_NOLOC);
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_LET, S_NOLOC);
  s->u.let.var = v;
  s->u.let.value = value;
  *out = v;
  return s;
}

static inline tc_stmt *S_if(tc_expr *c, tc_stmt *t, tc_stmt *e) {
  tc_stmt *s = tc_ir_stmt(S_A, TC_ST_IF, S_NOLOC);
  s->u.if_.cond = c;
  s->u.if_.then_s = t;
  s->u.if_.else_s = e;
  return s;
}

static inline tc_stmt *S_seq(int n, ...) {
  tc_stmt *items[64];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) items[i] = va_arg(ap, tc_stmt *);
  va_end(ap);
  return tc_ir_seq(S_A, n, items, S_NOLOC);
}

static inline tc_stmt *S_barrier(void) { return tc_ir_stmt(S_A, TC_ST_BARRIER, S_NOLOC); }

static inline tc_expr *S_ceildiv(tc_expr *a, int b) { return S_B(TC_OP_FLOORDIV, S_B(TC_OP_ADD, a, S_I(b - 1)), S_I(b)); }

/* ---- sample 1: a tiled gemm C[M, N] = A[M, K] @ B (B is [K, N], or [N, K] with trans_b).
 * M is symbolic; N = 48 and K = 40 do not divide the 16x16x8 tiles evenly. ---- */
enum { G_N = 40, G_K = 36, G_BM = 16, G_BN = 16, G_BK = 8 };

static inline tc_kernel_ir *sample_gemm(tc_dtype in_dt, tc_dtype out_dt, bool trans_b) {
  tc_kernel_ir *k = S_kernel("matmul");
  tc_var *M = S_sym(k, "M");
  tc_buffer *A = S_param(k, "A", in_dt, false, 2, S_V(M), S_I(G_K));
  tc_buffer *B = trans_b ? S_param(k, "B", in_dt, false, 2, S_I(G_N), S_I(G_K)) : S_param(k, "B", in_dt, false, 2, S_I(G_K), S_I(G_N));
  tc_buffer *C = S_param(k, "C", out_dt, true, 2, S_V(M), S_I(G_N));
  k->grid_ndim = 2;
  k->grid[0] = S_I((G_N + G_BN - 1) / G_BN);
  k->grid[1] = S_ceildiv(S_V(M), G_BM);
  k->threads[0] = 32;
  tc_var *bx = S_bidx(k, 0, "bx"), *by = S_bidx(k, 1, "by");
  tc_buffer *As = S_buf(k, "A_shared", in_dt, TC_SCOPE_SHARED, 2, G_BM, G_BK);
  tc_buffer *Bs = trans_b ? S_buf(k, "B_shared", in_dt, TC_SCOPE_SHARED, 2, G_BN, G_BK)
                          : S_buf(k, "B_shared", in_dt, TC_SCOPE_SHARED, 2, G_BK, G_BN);
  tc_buffer *Cl = S_buf(k, "C_local", tc_dt(TC_DT_FLOAT32), TC_SCOPE_FRAGMENT, 2, G_BM, G_BN);
  tc_var *kv = S_loopvar(k, "k");
  tc_stmt *gemm = tc_ir_stmt(S_A, TC_ST_GEMM, S_NOLOC);
  gemm->u.gemm.a = S_W(As);
  gemm->u.gemm.b = S_W(Bs);
  gemm->u.gemm.c = S_W(Cl);
  gemm->u.gemm.trans_b = trans_b;
  tc_region bsrc = trans_b ? S_R(B, S_B(TC_OP_MUL, S_V(bx), S_I(G_BN)), G_BN, S_B(TC_OP_MUL, S_V(kv), S_I(G_BK)), G_BK)
                           : S_R(B, S_B(TC_OP_MUL, S_V(kv), S_I(G_BK)), G_BK, S_B(TC_OP_MUL, S_V(bx), S_I(G_BN)), G_BN);
  tc_stmt *loop = S_for(kv, S_I(0), S_I((G_K + G_BK - 1) / G_BK), TC_LOOP_PIPELINED,
                        S_seq(3, S_copy(S_R(A, S_B(TC_OP_MUL, S_V(by), S_I(G_BM)), G_BM, S_B(TC_OP_MUL, S_V(kv), S_I(G_BK)), G_BK), S_W(As)),
                              S_copy(bsrc, S_W(Bs)), gemm));
  loop->u.loop.num_stages = 2;
  k->body = S_seq(6, S_alloc(As), S_alloc(Bs), S_alloc(Cl), S_fill(S_W(Cl), S_F(0.0)), loop,
                  S_copy(S_W(Cl), S_R(C, S_B(TC_OP_MUL, S_V(by), S_I(G_BM)), G_BM, S_B(TC_OP_MUL, S_V(bx), S_I(G_BN)), G_BN)));
  return k;
}

/* ---- sample 2: a row softmax, 8 rows per block, M symbolic, 64 columns ---- */
static inline tc_kernel_ir *sample_softmax(void) {
  tc_kernel_ir *k = S_kernel("softmax");
  tc_var *M = S_sym(k, "M");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32);
  tc_buffer *X = S_param(k, "X", f32, false, 2, S_V(M), S_I(64));
  tc_buffer *Y = S_param(k, "Y", f32, true, 2, S_V(M), S_I(64));
  k->grid[0] = S_ceildiv(S_V(M), 8);
  k->threads[0] = 64;
  tc_var *bx = S_bidx(k, 0, "bx");
  tc_buffer *Xf = S_buf(k, "X_frag", f32, TC_SCOPE_FRAGMENT, 2, 8, 64);
  tc_buffer *mx = S_buf(k, "row_max", f32, TC_SCOPE_FRAGMENT, 1, 8);
  tc_buffer *sm = S_buf(k, "row_sum", f32, TC_SCOPE_FRAGMENT, 1, 8);
  tc_stmt *rmax = tc_ir_stmt(S_A, TC_ST_REDUCE, S_NOLOC);
  rmax->u.reduce.op = TC_RED_MAX;
  rmax->u.reduce.src = S_W(Xf);
  rmax->u.reduce.dst = S_W(mx);
  rmax->u.reduce.dim = 1;
  rmax->u.reduce.clear = true;
  tc_stmt *rsum = tc_ir_stmt(S_A, TC_ST_REDUCE, S_NOLOC);
  *rsum = *rmax;
  rsum->u.reduce.op = TC_RED_SUM;
  rsum->u.reduce.dst = S_W(sm);
  tc_var *i1 = S_loopvar(k, "i"), *j1 = S_loopvar(k, "j"), *i2 = S_loopvar(k, "i"), *j2 = S_loopvar(k, "j");
  tc_stmt *p1 = S_for(i1, S_I(0), S_I(8), TC_LOOP_PARALLEL,
                      S_for(j1, S_I(0), S_I(64), TC_LOOP_PARALLEL,
                            S_store(Xf, S_U(TC_OP_EXP, S_B(TC_OP_SUB, S_LD(Xf, 2, S_V(i1), S_V(j1)), S_LD(mx, 1, S_V(i1)))), 2, S_V(i1), S_V(j1))));
  tc_stmt *p2 = S_for(i2, S_I(0), S_I(8), TC_LOOP_PARALLEL,
                      S_for(j2, S_I(0), S_I(64), TC_LOOP_PARALLEL,
                            S_store(Xf, S_B(TC_OP_DIV, S_LD(Xf, 2, S_V(i2), S_V(j2)), S_LD(sm, 1, S_V(i2))), 2, S_V(i2), S_V(j2))));
  tc_expr *row0 = S_B(TC_OP_MUL, S_V(bx), S_I(8));
  k->body = S_seq(9, S_alloc(Xf), S_alloc(mx), S_alloc(sm), S_copy(S_R(X, row0, 8, S_I(0), 64), S_W(Xf)), rmax, p1, rsum, p2,
                  S_copy(S_W(Xf), S_R(Y, row0, 8, S_I(0), 64)));
  return k;
}

/* ---- sample 3: cumsum of a [4, 32] tile in shared memory, in place ---- */
static inline tc_kernel_ir *sample_cumsum(int dim, bool reverse) {
  tc_kernel_ir *k = S_kernel("prefix");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32);
  tc_buffer *X = S_param(k, "X", f32, false, 2, S_I(4), S_I(32));
  tc_buffer *Y = S_param(k, "Y", f32, true, 2, S_I(4), S_I(32));
  k->grid[0] = S_I(1);
  k->threads[0] = 32;
  tc_buffer *S = S_buf(k, "S", f32, TC_SCOPE_SHARED, 2, 4, 32);
  tc_stmt *cs = tc_ir_stmt(S_A, TC_ST_CUMSUM, S_NOLOC);
  cs->u.cumsum.src = S_W(S);
  cs->u.cumsum.dst = S_W(S);
  cs->u.cumsum.dim = dim;
  cs->u.cumsum.reverse = reverse;
  k->body = S_seq(4, S_alloc(S), S_copy(S_W(X), S_W(S)), cs, S_copy(S_W(S), S_W(Y)));
  return k;
}

/* ---- sample 4: thread-level code. 64 threads per block over A[N] (N symbolic):
 *  - a histogram of A[i] % 4 with shared-memory atomics, then one global atomic per bin;
 *  - a per-thread counter: every thread adds 1 to count[0] (64 per block);
 *  - a shared-memory tree sum with barriers, added to total[0] by thread 0;
 *  - a loop whose trip count depends on the thread (tx % 3 + 1), counted in an alloc_var. ---- */
static inline tc_kernel_ir *sample_threads(void) {
  tc_kernel_ir *k = S_kernel("threads");
  tc_var *N = S_sym(k, "N");
  tc_dtype i32 = tc_dt(TC_DT_INT32), f32 = tc_dt(TC_DT_FLOAT32);
  tc_buffer *A = S_param(k, "A", i32, false, 1, S_V(N));
  tc_buffer *H = S_param(k, "hist", i32, true, 1, S_I(4));
  tc_buffer *cnt = S_param(k, "count", i32, true, 1, S_I(1));
  tc_buffer *tot = S_param(k, "total", f32, true, 1, S_I(1));
  tc_buffer *lp = S_param(k, "loops", i32, true, 1, S_I(1));
  k->grid[0] = S_ceildiv(S_V(N), 64);
  k->threads[0] = 64;
  tc_var *bx = S_bidx(k, 0, "bx");
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *Sh = S_buf(k, "S_hist", i32, TC_SCOPE_SHARED, 1, 4);
  tc_buffer *Ss = S_buf(k, "S_sum", f32, TC_SCOPE_SHARED, 1, 64);
  tc_buffer *acc = S_buf(k, "acc", i32, TC_SCOPE_VAR, 1, 1);
  acc->init = S_I(0);
  tc_var *i = S_loopvar(k, "i"), *s = S_loopvar(k, "s"), *j = S_loopvar(k, "j");
  tc_var *g, *v, *stride;
  tc_stmt *let_g = S_let(k, &g, "g", S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(bx), S_I(64)), S_V(tx)));
  tc_stmt *let_v = S_let(k, &v, "v", S_LD(A, 1, S_V(g)));
  tc_stmt *tree_body;
  tc_stmt *let_stride = S_let(k, &stride, "stride", S_B(TC_OP_SHR, S_I(32), S_V(s)));
  tree_body = S_seq(3, let_stride,
                    S_if(S_B(TC_OP_LT, S_V(tx), S_V(stride)),
                         S_store(Ss, S_B(TC_OP_ADD, S_LD(Ss, 1, S_V(tx)), S_LD(Ss, 1, S_B(TC_OP_ADD, S_V(tx), S_V(stride)))), 1, S_V(tx)),
                         NULL),
                    S_barrier());
  k->body = S_seq(
      17, S_alloc(Sh), S_alloc(Ss), S_alloc(acc), S_for(i, S_I(0), S_I(4), TC_LOOP_PARALLEL, S_store(Sh, S_I(0), 1, S_V(i))),
      S_barrier(), let_g, let_v,
      S_if(S_B(TC_OP_LT, S_V(g), S_V(N)), S_atomic(Sh, S_I(1), 1, S_B(TC_OP_FLOORMOD, S_V(v), S_I(4))), NULL),
      S_store(Ss, tc_ir_select(S_A, S_B(TC_OP_LT, S_V(g), S_V(N)), tc_ir_cast(S_A, f32, S_V(v), S_NOLOC), S_F(0.0), S_NOLOC), 1,
              S_V(tx)),
      S_barrier(), S_if(S_B(TC_OP_LT, S_V(tx), S_I(4)), S_atomic(H, S_LD(Sh, 1, S_V(tx)), 1, S_V(tx)), NULL),
      S_atomic(cnt, S_I(1), 1, S_I(0)), S_for(s, S_I(0), S_I(6), TC_LOOP_SERIAL, tree_body),
      S_if(S_B(TC_OP_EQ, S_V(tx), S_I(0)), S_atomic(tot, S_LD(Ss, 1, S_I(0)), 1, S_I(0)), NULL),
      S_for(j, S_I(0), S_B(TC_OP_ADD, S_B(TC_OP_FLOORMOD, S_V(tx), S_I(3)), S_I(1)), TC_LOOP_SERIAL,
            S_store(acc, S_B(TC_OP_ADD, S_LD(acc, 1, S_I(0)), S_I(1)), 1, S_I(0))),
      S_atomic(lp, S_LD(acc, 1, S_I(0)), 1, S_I(0)), S_barrier());
  return k;
}

/* ---- small kernels for single rules (test_interp.c explains each) ---- */
static inline tc_kernel_ir *sample_locals(void) {
  tc_kernel_ir *k = S_kernel("locals");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32), i32 = tc_dt(TC_DT_INT32);
  tc_buffer *X = S_param(k, "X", f32, false, 1, S_I(32));
  tc_buffer *Y = S_param(k, "Y", f32, true, 1, S_I(8));
  k->grid[0] = S_I(1);
  k->threads[0] = 8;
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *L = S_buf(k, "L", f32, TC_SCOPE_LOCAL, 1, 4);
  tc_buffer *acc = S_buf(k, "acc", f32, TC_SCOPE_VAR, 1, 1);
  tc_stmt *red = tc_ir_stmt(S_A, TC_ST_REDUCE, S_NOLOC);
  red->u.reduce.op = TC_RED_SUM;
  red->u.reduce.src = S_W(L);
  red->u.reduce.dst = S_W(acc);
  red->u.reduce.dim = 0;
  red->u.reduce.clear = false;
  k->body = S_seq(6, S_alloc(L), S_alloc(acc), S_copy(S_R(X, S_B(TC_OP_MUL, S_V(tx), S_I(4)), 4), S_W(L)),
                  S_if(S_B(TC_OP_LT, S_V(tx), S_I(4)), S_fill(S_W(acc), S_F(100.0)), S_fill(S_W(acc), S_F(0.0))), red,
                  S_store(Y, S_LD(acc, 1, S_I(0)), 1, S_V(tx)));
  return k;
}

static inline tc_kernel_ir *sample_narrow(void) {
  tc_kernel_ir *k = S_kernel("narrow");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32), i32 = tc_dt(TC_DT_INT32), e4m3 = tc_dt(TC_DT_FLOAT8_E4M3FN), i4 = tc_dt(TC_DT_INT4);
  tc_dtype bf16 = tc_dt(TC_DT_BFLOAT16);
  tc_buffer *X = S_param(k, "X", f32, false, 1, S_I(8));
  tc_buffer *I = S_param(k, "I", i32, false, 1, S_I(8));
  tc_buffer *Y = S_param(k, "Y", e4m3, true, 1, S_I(8));
  tc_buffer *Z = S_param(k, "Z", i4, true, 1, S_I(8));
  tc_buffer *W = S_param(k, "W", bf16, true, 1, S_I(8));
  k->grid[0] = S_I(1);
  k->threads[0] = 4;
  tc_buffer *F = S_buf(k, "F", bf16, TC_SCOPE_FRAGMENT, 1, 8);
  k->body = S_seq(6, S_alloc(F), S_copy(S_W(X), S_W(Y)), S_copy(S_W(I), S_W(Z)), S_copy(S_W(Y), S_W(F)),
                  S_fill(S_R(F, S_I(6), 2), tc_ir_float(S_A, 1.00390625, bf16, S_NOLOC)), S_copy(S_W(F), S_W(W)));
  return k;
}

static inline tc_kernel_ir *sample_tids(void) {
  tc_kernel_ir *k = S_kernel("tids");
  tc_dtype i32 = tc_dt(TC_DT_INT32);
  tc_buffer *Y = S_param(k, "Y", i32, true, 2, S_I(2), S_I(32));
  k->grid[0] = S_I(2);
  k->threads_ndim = 2;
  k->threads[0] = 8;
  k->threads[1] = 4;
  tc_var *bx = S_bidx(k, 0, "bx");
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_var *ty = tc_ir_new_var(S_A, k, "ty", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_var *tz = tc_ir_new_var(S_A, k, "tz", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  ty->axis = 1;
  tz->axis = 2;
  k->body = S_store(Y, S_B(TC_OP_ADD, S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(tx), S_I(100)), S_V(ty)), S_V(tz)), 2, S_V(bx),
                    S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(ty), S_I(8)), S_V(tx)));
  return k;
}

static inline tc_kernel_ir *sample_atomics(void) {
  tc_kernel_ir *k = S_kernel("atomics");
  tc_dtype i32 = tc_dt(TC_DT_INT32), f32 = tc_dt(TC_DT_FLOAT32);
  tc_buffer *C = S_param(k, "C", i32, true, 1, S_I(2));
  tc_buffer *D = S_param(k, "D", f32, true, 1, S_I(6));
  k->grid[0] = S_I(2);
  k->threads[0] = 128;
  tc_buffer *F = S_buf(k, "F", f32, TC_SCOPE_FRAGMENT, 1, 4);
  tc_var *i = S_loopvar(k, "i");
  tc_stmt *tile = tc_ir_stmt(S_A, TC_ST_ATOMIC_ADD, S_NOLOC);
  tile->u.atomic.dst = S_R(D, S_I(3), 4); /* D[3:7]: the last element is outside D and dropped */
  tile->u.atomic.src = S_W(F);
  k->body = S_seq(5, S_alloc(F), S_fill(S_W(F), S_F(1.5)), S_atomic(C, S_I(1), 1, S_I(0)),
                  S_for(i, S_I(0), S_I(10), TC_LOOP_PARALLEL, S_atomic(C, S_I(1), 1, S_I(1))), tile);
  return k;
}

/* Each thread copies its own local buffer into its slot of shared memory (a per-thread tile
 * operation: an operand is per-thread storage), then reads its mirror slot, which another
 * thread wrote (the insert-barriers pass places a barrier between). */
static inline tc_kernel_ir *sample_per_thread_copy(void) {
  tc_kernel_ir *k = S_kernel("per_thread_copy");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32), i32 = tc_dt(TC_DT_INT32);
  tc_buffer *X = S_param(k, "X", f32, false, 1, S_I(16));
  tc_buffer *Y = S_param(k, "Y", f32, true, 1, S_I(16));
  k->grid[0] = S_I(1);
  k->threads[0] = 16;
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *S = S_buf(k, "s", f32, TC_SCOPE_SHARED, 1, 16);
  tc_buffer *L = S_buf(k, "loc", f32, TC_SCOPE_LOCAL, 1, 1);
  k->body = S_seq(5, S_alloc(S), S_alloc(L), S_store(L, S_B(TC_OP_MUL, S_LD(X, 1, S_V(tx)), S_F(2.0)), 1, S_I(0)),
                  S_copy(S_W(L), S_R(S, S_V(tx), 1)), S_store(Y, S_LD(S, 1, S_B(TC_OP_SUB, S_I(15), S_V(tx))), 1, S_V(tx)));
  return k;
}

/* Verify k and print the error when it fails (for CHECK(verify_ok(k))). */
static inline bool verify_ok(const tc_kernel_ir *k) {
  tilec_error err;
  memset(&err, 0, sizeof err);
  bool ok = tc_ir_verify(k, "test", &err);
  if (!ok) printf("  unexpected: %s", err.rendered);
  return ok;
}

#endif
