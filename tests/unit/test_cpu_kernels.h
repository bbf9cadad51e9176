/* test_cpu_kernels.h: hand-built tile IR kernels for the cpu backend's tests and benchmarks
 * (the shapes TileLang programs produce: tiled gemm, elementwise chain, softmax, cumsum, and a
 * thread-level kernel). Header-only; each includer uses what it needs. */
#ifndef TILEC_TEST_CPU_KERNELS_H
#define TILEC_TEST_CPU_KERNELS_H

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "target/cpu/cpu.h"

typedef struct kb {
  tc_arena *a;
  tc_kernel_ir *k;
  tc_loc loc;
  tc_stmt_list body;
} kb;

static inline tc_dtype kb_i32(void) { return tc_dt(TC_DT_INT32); }
static inline tc_dtype kb_f32(void) { return tc_dt(TC_DT_FLOAT32); }

static inline void kb_init(kb *b, tc_arena *a, const char *name) {
  memset(b, 0, sizeof *b);
  b->a = a;
  b->k = TC_NEW(a, tc_kernel_ir);
  b->k->name = name;
}
static inline tc_expr *kI(kb *b, int64_t v) { return tc_ir_int(b->a, v, kb_i32(), b->loc); }
static inline tc_expr *kF(kb *b, double v) { return tc_ir_float(b->a, v, kb_f32(), b->loc); }
static inline tc_expr *kV(kb *b, tc_var *v) { return tc_ir_var_ref(b->a, v, b->loc); }
static inline tc_expr *kBin(kb *b, tc_expr_op op, tc_expr *x, tc_expr *y) { return tc_ir_binary(b->a, op, x, y, b->loc); }
static inline tc_expr *kAdd(kb *b, tc_expr *x, tc_expr *y) { return kBin(b, TC_OP_ADD, x, y); }
static inline tc_expr *kMul(kb *b, tc_expr *x, tc_expr *y) { return kBin(b, TC_OP_MUL, x, y); }
static inline tc_expr *kCeil(kb *b, tc_expr *n, int64_t d) {
  return kBin(b, TC_OP_FLOORDIV, kAdd(b, n, kI(b, d - 1)), kI(b, d));
}
static inline tc_var *kSym(kb *b, const char *name) {
  tc_var *v = tc_ir_new_var(b->a, b->k, name, kb_i32(), TC_VAR_SYMBOLIC, b->loc);
  b->k->syms = tc_arena_grow(b->a, b->k->syms, sizeof(tc_var *) * (size_t)b->k->nsyms,
                             sizeof(tc_var *) * (size_t)(b->k->nsyms + 1));
  b->k->syms[b->k->nsyms++] = v;
  return v;
}
static inline tc_buffer *kTensor(kb *b, const char *name, tc_dtype dt, int ndim, tc_expr **shape, bool out) {
  tc_buffer *buf = tc_ir_new_buffer(b->a, b->k, name, dt, TC_SCOPE_GLOBAL, ndim, shape, b->loc);
  buf->param_index = b->k->nparams;
  b->k->params = tc_arena_grow(b->a, b->k->params, sizeof(tc_param) * (size_t)b->k->nparams,
                               sizeof(tc_param) * (size_t)(b->k->nparams + 1));
  tc_param *p = &b->k->params[b->k->nparams++];
  memset(p, 0, sizeof *p);
  p->name = name;
  p->buf = buf;
  p->is_output = out;
  return buf;
}
static inline tc_buffer *kAlloc(kb *b, tc_stmt_list *l, const char *name, tc_dtype dt, tc_scope sc, int ndim,
                                const int64_t *shape) {
  tc_expr *sh[8];
  for (int i = 0; i < ndim; i++) sh[i] = kI(b, shape[i]);
  tc_buffer *buf = tc_ir_new_buffer(b->a, b->k, name, dt, sc, ndim, sh, b->loc);
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_ALLOC, b->loc);
  s->u.alloc.buf = buf;
  tc_stmt_list_push(b->a, l, s);
  return buf;
}
static inline void kLaunch(kb *b, int gdim, tc_expr **grid, int threads) {
  tc_kernel_ir *k = b->k;
  k->grid_ndim = gdim;
  for (int i = 0; i < gdim; i++) {
    k->grid[i] = grid[i];
    k->block_idx[i] = tc_ir_new_var(b->a, k, i == 0 ? "bx" : i == 1 ? "by" : "bz", kb_i32(), TC_VAR_BLOCK_IDX, b->loc);
    k->block_idx[i]->axis = i;
  }
  k->threads_ndim = 1;
  k->threads[0] = threads;
}
/* region buf[starts[i] : starts[i]+ext[i]] */
static inline tc_region kReg(kb *b, tc_buffer *buf, tc_expr **starts, const int64_t *ext) {
  tc_region r;
  r.buf = buf;
  r.ndim = buf->ndim;
  r.r = TC_NEW_ARRAY(b->a, tc_range, buf->ndim);
  for (int i = 0; i < buf->ndim; i++) {
    r.r[i].start = starts[i];
    r.r[i].extent = ext[i];
  }
  return r;
}
static inline tc_region kWhole(kb *b, tc_buffer *buf) { return tc_ir_whole_region(b->a, buf); }
static inline tc_stmt *kCopy(kb *b, tc_region src, tc_region dst) {
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_COPY, b->loc);
  s->u.copy.src = src;
  s->u.copy.dst = dst;
  return s;
}
static inline tc_stmt *kFill(kb *b, tc_region dst, tc_expr *v) {
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_FILL, b->loc);
  s->u.fill.dst = dst;
  s->u.fill.value = v;
  return s;
}
static inline tc_stmt *kFor(kb *b, tc_var *v, tc_expr *lo, tc_expr *ext, tc_loop_kind kind, tc_stmt *body) {
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_FOR, b->loc);
  s->u.loop.var = v;
  s->u.loop.min = lo;
  s->u.loop.extent = ext;
  s->u.loop.kind = kind;
  s->u.loop.body = body;
  return s;
}
static inline tc_var *kLoopVar(kb *b, const char *n) { return tc_ir_new_var(b->a, b->k, n, kb_i32(), TC_VAR_LOOP, b->loc); }
static inline tc_expr *kLoad(kb *b, tc_buffer *buf, int n, tc_expr **idx) { return tc_ir_load(b->a, buf, n, idx, b->loc); }
static inline tc_expr *kLoad1(kb *b, tc_buffer *buf, tc_expr *i) { return kLoad(b, buf, 1, &i); }
static inline tc_expr *kLoad2(kb *b, tc_buffer *buf, tc_expr *i, tc_expr *j) {
  tc_expr *ix[2] = {i, j};
  return kLoad(b, buf, 2, ix);
}
static inline tc_stmt *kStore(kb *b, tc_buffer *buf, int n, tc_expr **idx, tc_expr *v) {
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_STORE, b->loc);
  s->u.store.buf = buf;
  s->u.store.nidx = n;
  s->u.store.idx = TC_NEW_ARRAY(b->a, tc_expr *, n);
  memcpy(s->u.store.idx, idx, sizeof(tc_expr *) * (size_t)n);
  s->u.store.value = v;
  return s;
}
static inline tc_stmt *kStore1(kb *b, tc_buffer *buf, tc_expr *i, tc_expr *v) { return kStore(b, buf, 1, &i, v); }
static inline tc_stmt *kStore2(kb *b, tc_buffer *buf, tc_expr *i, tc_expr *j, tc_expr *v) {
  tc_expr *ix[2] = {i, j};
  return kStore(b, buf, 2, ix, v);
}
static inline tc_stmt *kLet(kb *b, tc_var *v, tc_expr *e, bool assign) {
  tc_stmt *s = tc_ir_stmt(b->a, assign ? TC_ST_ASSIGN : TC_ST_LET, b->loc);
  s->u.let.var = v;
  s->u.let.value = e;
  return s;
}
static inline tc_stmt *kAtomic1(kb *b, tc_buffer *buf, tc_expr *i, tc_expr *v) {
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_ATOMIC_ADD, b->loc);
  s->u.atomic.buf = buf;
  s->u.atomic.nidx = 1;
  s->u.atomic.idx = TC_NEW_ARRAY(b->a, tc_expr *, 1);
  s->u.atomic.idx[0] = i;
  s->u.atomic.value = v;
  return s;
}
static inline tc_stmt *kIf(kb *b, tc_expr *c, tc_stmt *t, tc_stmt *e) {
  tc_stmt *s = tc_ir_stmt(b->a, TC_ST_IF, b->loc);
  s->u.if_.cond = c;
  s->u.if_.then_s = t;
  s->u.if_.else_s = e;
  return s;
}
static inline tc_stmt *kSeq(kb *b, tc_stmt_list *l) { return tc_stmt_list_seq(b->a, l, b->loc); }
static inline void kFinish(kb *b) { b->k->body = kSeq(b, &b->body); }

/* Tiled gemm: C[M,N] = A[M,K] @ B[K,N] (A stored (K,M) when trans_a, B stored (N,K) when
 * trans_b), M, N, K symbolic; grid (ceil(N/bn), ceil(M/bm)); T.Pipelined k loop. */
/* clear_in_gemm: instead of T.clear, fill the accumulator with 7 and pass clear_accum=True to
 * T.gemm (only meaningful when K <= bk, one k step). */
static inline tc_kernel_ir *build_gemm_ex(tc_arena *a, int bm, int bn, int bk, bool ta, bool tb, tc_dtype ab_dt,
                                          tc_dtype c_dt, int threads, bool clear_in_gemm) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "gemm");
  tc_var *M = kSym(b, "M"), *N = kSym(b, "N"), *K = kSym(b, "K");
  tc_expr *sa[2] = {ta ? kV(b, K) : kV(b, M), ta ? kV(b, M) : kV(b, K)};
  tc_expr *sb[2] = {tb ? kV(b, N) : kV(b, K), tb ? kV(b, K) : kV(b, N)};
  tc_expr *sc[2] = {kV(b, M), kV(b, N)};
  tc_buffer *A = kTensor(b, "A", ab_dt, 2, sa, false);
  tc_buffer *Bt = kTensor(b, "B", ab_dt, 2, sb, false);
  tc_buffer *C = kTensor(b, "C", c_dt, 2, sc, true);
  tc_expr *grid[2] = {kCeil(b, kV(b, N), bn), kCeil(b, kV(b, M), bm)};
  kLaunch(b, 2, grid, threads);
  tc_var *bx = b->k->block_idx[0], *by = b->k->block_idx[1];
  int64_t ash[2] = {ta ? bk : bm, ta ? bm : bk}, bsh[2] = {tb ? bn : bk, tb ? bk : bn}, csh[2] = {bm, bn};
  tc_buffer *As = kAlloc(b, &b->body, "A_shared", ab_dt, TC_SCOPE_SHARED, 2, ash);
  tc_buffer *Bs = kAlloc(b, &b->body, "B_shared", ab_dt, TC_SCOPE_SHARED, 2, bsh);
  tc_buffer *Cl = kAlloc(b, &b->body, "C_local", c_dt, TC_SCOPE_FRAGMENT, 2, csh);
  tc_stmt_list_push(a, &b->body, kFill(b, kWhole(b, Cl), tc_ir_float(a, clear_in_gemm ? 7 : 0, c_dt, b->loc)));
  tc_var *ko = kLoopVar(b, "ko");
  tc_stmt_list kl = {0};
  tc_expr *row = kMul(b, kV(b, by), kI(b, bm)), *col = kMul(b, kV(b, bx), kI(b, bn)), *kk = kMul(b, kV(b, ko), kI(b, bk));
  tc_expr *as[2] = {ta ? kk : row, ta ? row : kk};
  tc_expr *bs[2] = {tb ? col : kk, tb ? kk : col};
  tc_stmt_list_push(a, &kl, kCopy(b, kReg(b, A, as, ash), kWhole(b, As)));
  tc_stmt_list_push(a, &kl, kCopy(b, kReg(b, Bt, bs, bsh), kWhole(b, Bs)));
  tc_stmt *g = tc_ir_stmt(a, TC_ST_GEMM, b->loc);
  g->u.gemm.a = kWhole(b, As);
  g->u.gemm.b = kWhole(b, Bs);
  g->u.gemm.c = kWhole(b, Cl);
  g->u.gemm.trans_a = ta;
  g->u.gemm.trans_b = tb;
  g->u.gemm.clear_accum = clear_in_gemm;
  tc_stmt_list_push(a, &kl, g);
  tc_stmt *loop = kFor(b, ko, kI(b, 0), kCeil(b, kV(b, K), bk), TC_LOOP_PIPELINED, kSeq(b, &kl));
  loop->u.loop.num_stages = 3;
  tc_stmt_list_push(a, &b->body, loop);
  tc_expr *cs[2] = {kMul(b, kV(b, by), kI(b, bm)), kMul(b, kV(b, bx), kI(b, bn))};
  tc_stmt_list_push(a, &b->body, kCopy(b, kWhole(b, Cl), kReg(b, C, cs, csh)));
  kFinish(b);
  return b->k;
}

static inline tc_kernel_ir *build_gemm(tc_arena *a, int bm, int bn, int bk, bool ta, bool tb, tc_dtype ab_dt,
                                       tc_dtype c_dt, int threads) {
  return build_gemm_ex(a, bm, bn, bk, ta, tb, ab_dt, c_dt, threads, false);
}

/* Elementwise chain over (M, N): C = max(A * B + 1, 0) * 0.5 - sigmoid(A), T.Parallel tiles. */
static inline tc_kernel_ir *build_elementwise(tc_arena *a, int bm, int bn, tc_dtype dt) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "elementwise");
  tc_var *M = kSym(b, "M"), *N = kSym(b, "N");
  tc_expr *sh[2] = {kV(b, M), kV(b, N)};
  tc_buffer *A = kTensor(b, "A", dt, 2, sh, false), *Bt = kTensor(b, "B", dt, 2, sh, false);
  tc_buffer *C = kTensor(b, "C", dt, 2, sh, true);
  tc_expr *grid[2] = {kCeil(b, kV(b, N), bn), kCeil(b, kV(b, M), bm)};
  kLaunch(b, 2, grid, 128);
  tc_var *bx = b->k->block_idx[0], *by = b->k->block_idx[1];
  tc_var *i = kLoopVar(b, "i"), *j = kLoopVar(b, "j");
  tc_expr *r = kAdd(b, kMul(b, kV(b, by), kI(b, bm)), kV(b, i));
  tc_expr *c = kAdd(b, kMul(b, kV(b, bx), kI(b, bn)), kV(b, j));
  tc_expr *x = kLoad2(b, A, r, c), *y = kLoad2(b, Bt, r, c);
  tc_expr *one = tc_ir_float(a, 1.0, dt, b->loc), *zero = tc_ir_float(a, 0.0, dt, b->loc);
  tc_expr *half = tc_ir_float(a, 0.5, dt, b->loc);
  tc_expr *v = kBin(b, TC_OP_MAX, kAdd(b, kMul(b, x, y), one), zero);
  v = kBin(b, TC_OP_SUB, kMul(b, v, half), tc_ir_unary(a, TC_OP_SIGMOID, x, b->loc));
  tc_stmt *st = kStore2(b, C, r, c, v);
  tc_stmt *inner = kFor(b, j, kI(b, 0), kI(b, bn), TC_LOOP_PARALLEL, st);
  tc_stmt_list_push(a, &b->body, kFor(b, i, kI(b, 0), kI(b, bm), TC_LOOP_PARALLEL, inner));
  kFinish(b);
  return b->k;
}

/* Plain copy-style elementwise kernel C = A * s + t over a flat (N,) tensor (bandwidth bench). */
static inline tc_kernel_ir *build_axpb(tc_arena *a, int bn) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "axpb");
  tc_var *N = kSym(b, "N");
  tc_expr *sh[1] = {kV(b, N)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 1, sh, false), *C = kTensor(b, "C", kb_f32(), 1, sh, true);
  tc_expr *grid[1] = {kCeil(b, kV(b, N), bn)};
  kLaunch(b, 1, grid, 128);
  tc_var *bx = b->k->block_idx[0], *i = kLoopVar(b, "i");
  tc_expr *idx = kAdd(b, kMul(b, kV(b, bx), kI(b, bn)), kV(b, i));
  tc_expr *v = kAdd(b, kMul(b, kLoad1(b, A, idx), kF(b, 2.0)), kF(b, 1.0));
  tc_stmt_list_push(a, &b->body, kFor(b, i, kI(b, 0), kI(b, bn), TC_LOOP_PARALLEL, kStore1(b, C, idx, v)));
  kFinish(b);
  return b->k;
}

/* Row softmax of A[M, N] (N constant): copy rows to a fragment, reduce_max, exp, reduce_sum,
 * divide, copy out. */
static inline tc_kernel_ir *build_softmax(tc_arena *a, int bm, int n) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "softmax");
  tc_var *M = kSym(b, "M");
  tc_expr *sh[2] = {kV(b, M), kI(b, n)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 2, sh, false), *C = kTensor(b, "C", kb_f32(), 2, sh, true);
  tc_expr *grid[1] = {kCeil(b, kV(b, M), bm)};
  kLaunch(b, 1, grid, 128);
  tc_var *bx = b->k->block_idx[0];
  int64_t tsh[2] = {bm, n}, rsh[1] = {bm};
  tc_buffer *Al = kAlloc(b, &b->body, "A_local", kb_f32(), TC_SCOPE_FRAGMENT, 2, tsh);
  tc_buffer *mx = kAlloc(b, &b->body, "row_max", kb_f32(), TC_SCOPE_FRAGMENT, 1, rsh);
  tc_buffer *sm = kAlloc(b, &b->body, "row_sum", kb_f32(), TC_SCOPE_FRAGMENT, 1, rsh);
  tc_expr *st[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kReg(b, A, st, tsh), kWhole(b, Al)));
  tc_stmt *r1 = tc_ir_stmt(a, TC_ST_REDUCE, b->loc);
  r1->u.reduce.op = TC_RED_MAX;
  r1->u.reduce.src = kWhole(b, Al);
  r1->u.reduce.dst = kWhole(b, mx);
  r1->u.reduce.dim = 1;
  r1->u.reduce.clear = true;
  tc_stmt_list_push(a, &b->body, r1);
  tc_var *i = kLoopVar(b, "i"), *j = kLoopVar(b, "j");
  tc_expr *e = tc_ir_unary(a, TC_OP_EXP, kBin(b, TC_OP_SUB, kLoad2(b, Al, kV(b, i), kV(b, j)), kLoad1(b, mx, kV(b, i))), b->loc);
  tc_stmt *p1 = kFor(b, i, kI(b, 0), kI(b, bm), TC_LOOP_PARALLEL,
                     kFor(b, j, kI(b, 0), kI(b, n), TC_LOOP_PARALLEL, kStore2(b, Al, kV(b, i), kV(b, j), e)));
  tc_stmt_list_push(a, &b->body, p1);
  tc_stmt *r2 = tc_ir_stmt(a, TC_ST_REDUCE, b->loc);
  r2->u.reduce.op = TC_RED_SUM;
  r2->u.reduce.src = kWhole(b, Al);
  r2->u.reduce.dst = kWhole(b, sm);
  r2->u.reduce.dim = 1;
  r2->u.reduce.clear = true;
  tc_stmt_list_push(a, &b->body, r2);
  tc_var *i2 = kLoopVar(b, "i"), *j2 = kLoopVar(b, "j");
  tc_expr *d = kBin(b, TC_OP_DIV, kLoad2(b, Al, kV(b, i2), kV(b, j2)), kLoad1(b, sm, kV(b, i2)));
  tc_stmt *p2 = kFor(b, i2, kI(b, 0), kI(b, bm), TC_LOOP_PARALLEL,
                     kFor(b, j2, kI(b, 0), kI(b, n), TC_LOOP_PARALLEL, kStore2(b, Al, kV(b, i2), kV(b, j2), d)));
  tc_stmt_list_push(a, &b->body, p2);
  tc_expr *st2[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kWhole(b, Al), kReg(b, C, st2, tsh)));
  kFinish(b);
  return b->k;
}

/* Inclusive cumsum along rows of A[M, N] (N constant), through shared memory. */
static inline tc_kernel_ir *build_cumsum(tc_arena *a, int bm, int n, bool reverse) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "cumsum");
  tc_var *M = kSym(b, "M");
  tc_expr *sh[2] = {kV(b, M), kI(b, n)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 2, sh, false), *C = kTensor(b, "C", kb_f32(), 2, sh, true);
  tc_expr *grid[1] = {kCeil(b, kV(b, M), bm)};
  kLaunch(b, 1, grid, 64);
  tc_var *bx = b->k->block_idx[0];
  int64_t tsh[2] = {bm, n};
  tc_buffer *As = kAlloc(b, &b->body, "A_shared", kb_f32(), TC_SCOPE_SHARED, 2, tsh);
  tc_buffer *Cs = kAlloc(b, &b->body, "C_shared", kb_f32(), TC_SCOPE_SHARED, 2, tsh);
  tc_expr *st[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kReg(b, A, st, tsh), kWhole(b, As)));
  tc_stmt *cs = tc_ir_stmt(a, TC_ST_CUMSUM, b->loc);
  cs->u.cumsum.src = kWhole(b, As);
  cs->u.cumsum.dst = kWhole(b, Cs);
  cs->u.cumsum.dim = 1;
  cs->u.cumsum.reverse = reverse;
  tc_stmt_list_push(a, &b->body, cs);
  tc_expr *st2[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kWhole(b, Cs), kReg(b, C, st2, tsh)));
  kFinish(b);
  return b->k;
}

#endif
