/* pipeline.c: T.Pipelined(num_stages=N) as a multi-stage software pipeline.
 *
 * In a pipelined loop, the copies from global into shared memory (the producers) are issued
 * N - 1 iterations ahead of the statements that use them (the consumers), each into its own
 * stage of an N-deep shared buffer, asynchronously where the target has asynchronous copies:
 *
 *   prologue: for s < N-1: if s < n: producers(iteration s) -> stage s; commit
 *   for k < n: wait until at most N-2 groups are in flight; barrier
 *              if k+N-1 < n: producers(iteration k+N-1) -> stage (k+N-1) % N; commit
 *              consumers(iteration k), reading stage k % N
 *   drain:    wait for every group; barrier
 *
 * A mainloop whose consumers are only gemms that run on wgmma (a GEMM's K loop) also leaves
 * each iteration's wgmma running into the next one: producers go D = N - 2 iterations ahead
 * instead of N - 1, every gemm returns once the previous iteration's has finished (gemm_block
 * with wait 1), and wgmma_wait(0) follows the loop. The stage that iteration k's producers
 * overwrite was read by the gemms of iteration k - 2, which every thread has waited for before
 * the barrier at the top of iteration k; the tensor cores keep the running gemm busy while the
 * block waits at that barrier and issues the next copies.
 *
 * The barrier at the top of an iteration is both the wait for stage k and the guarantee that
 * every thread is done reading the stage the new producers overwrite, so the barrier pass
 * leaves the producers out of its bookkeeping (tc_gpu_plan.async).
 *
 * On sm_90 (desc->tma), when every producer copies a tile of a kernel parameter into a gemm
 * operand stored in the 128-byte-atom swizzle, the producers become TMA loads instead: thread
 * 0 announces the stage's bytes on the stage's mbarrier and issues one cp.async.bulk.tensor
 * per tile, and every thread waits on that mbarrier (phase parity (k / N) % 2) where it waited
 * for cp.async groups. The barrier at the top of the iteration stays: it is what makes the
 * stage about to be overwritten free.
 *
 *   mbar_init(N barriers); barrier
 *   prologue: for s < D: if s < n: expect(bar s, bytes); tma_load tiles(s) -> stage s
 *   for k < n: barrier
 *              if k+D < n: expect(bar (k+D)%N); tma_load tiles(k+D) -> stage (k+D)%N
 *              wait(bar k%N, (k/N)%2); consumers(k)
 *
 * Warp specialization (sm_90a, a loop at the kernel's top level, threads a multiple of 128): the
 * block gets a producer warpgroup more (tc_kernel_ir.producer_threads), one of whose threads
 * issues every iteration's TMA loads, running up to N stages ahead of the consumers: it waits
 * for a stage's "empty" mbarrier, on which each consumer warp arrives once the gemms that read
 * the stage have finished, instead of the whole block meeting at a barrier every iteration. The
 * loop is marked ws_split, its body [producer(k), consumer(k)]; run serially (the interpreter,
 * and the meaning) it is the same loop; the cuda printer runs the parts on different threads:
 *
 *   mbar_init(full: N, 1 arrival); mbar_init(empty: N, threads/32 arrivals); barrier
 *   for k < n (ws_split):
 *     producer: if k >= N: wait(empty k%N, (k/N + 1)%2)
 *               expect(full k%N, bytes); tma_load tiles(k) -> stage k%N
 *     consumer: wait(full k%N, (k/N)%2); consumers(k)
 *               arrive(empty k%N)   -- or, for an asynchronous wgmma mainloop, arrive on the
 *                                      stage of k-1 once gemm k-1 has finished (k > 0)
 *
 * A loop that does not fit
 * this shape (a producer whose tile is read before it in the body, or used outside the loop, or
 * whose indices depend on values the body computes) is left as written: it stays correct,
 * only unpipelined. */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "gpu/gpu_internal.h"
#include "ir/walk.h"

static tc_expr *ci(tc_arena *a, int64_t v, tc_loc loc) { return tc_ir_int(a, v, tc_index_dtype(), loc); }

typedef struct use_ctx {
  const tc_buffer *b;
  int uses;
} use_ctx;
static void count_expr(use_ctx *U, const tc_expr *e) {
  if (!e) return;
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && e->buf == U->b) U->uses++;
  for (int i = 0; i < e->nargs; i++) count_expr(U, e->args[i]);
}
static tc_expr *count_cb(void *ctx, tc_expr *e) {
  count_expr(ctx, e);
  return e;
}
static bool count_stmt_cb(void *ctx, tc_stmt *s) {
  use_ctx *U = ctx;
  tc_rewrite_stmt_exprs(s, count_cb, U);
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int n = tc_stmt_regions(s, regs);
  for (int i = 0; i < n; i++)
    if (regs[i].region->buf == U->b) U->uses++;
  if (s->kind == TC_ST_STORE && s->u.store.buf == U->b) U->uses++;
  return true;
}
static int uses_of(tc_stmt *s, const tc_buffer *b) {
  use_ctx U = {b, 0};
  tc_visit_stmts(s, count_stmt_cb, &U);
  return U.uses;
}

/* Variables a statement's expressions use that are declared (LET) inside `body`. */
typedef struct let_ctx {
  tc_var *lets[256];
  int n;
  bool bad;
} let_ctx;
static bool collect_lets(void *ctx, tc_stmt *s) {
  let_ctx *L = ctx;
  if ((s->kind == TC_ST_LET) && L->n < 256) L->lets[L->n++] = s->u.let.var;
  if (s->kind == TC_ST_FOR && L->n < 256) L->lets[L->n++] = s->u.loop.var;
  return true;
}
static tc_expr *check_vars_cb(void *ctx, tc_expr *e) {
  let_ctx *L = ctx;
  if (e->op == TC_OP_VAR)
    for (int i = 0; i < L->n; i++)
      if (L->lets[i] == e->var) L->bad = true;
  if (e->op == TC_OP_LOAD && e->buf->scope != TC_SCOPE_GLOBAL) L->bad = true; /* data-dependent index */
  return e;
}

/* Substitute a variable by an expression. */
typedef struct subst_ctx {
  tc_arena *a;
  const tc_var *v;
  tc_expr *by;
} subst_ctx;
static tc_expr *subst_cb(void *ctx, tc_expr *e) {
  subst_ctx *S = ctx;
  return e->op == TC_OP_VAR && e->var == S->v ? tc_ir_clone_expr(S->a, S->by) : e;
}
static bool subst_stmt_cb(void *ctx, tc_stmt *s) {
  tc_rewrite_stmt_exprs(s, subst_cb, ctx);
  return true;
}
static tc_stmt *with_var(tc_arena *a, const tc_stmt *s, const tc_var *v, tc_expr *by) {
  tc_stmt *c = tc_ir_clone_stmt(a, s);
  subst_ctx S = {a, v, by};
  tc_visit_stmts(c, subst_stmt_cb, &S);
  return c;
}

/* References to a staged buffer S become references to stage `stage` of S2. */
typedef struct stage_ctx {
  tc_arena *a;
  const tc_buffer *from;
  tc_buffer *to;
  tc_expr *stage;
} stage_ctx;
static tc_expr **prepend(tc_arena *a, tc_expr *first, int n, tc_expr *const *rest) {
  tc_expr **v = TC_NEW_ARRAY(a, tc_expr *, n + 1);
  v[0] = tc_ir_clone_expr(a, first);
  for (int i = 0; i < n; i++) v[i + 1] = rest[i];
  return v;
}
static tc_expr *stage_expr_cb(void *ctx, tc_expr *e) {
  stage_ctx *S = ctx;
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && e->buf == S->from) {
    tc_expr *c = TC_NEW(S->a, tc_expr);
    *c = *e;
    c->buf = S->to;
    c->args = prepend(S->a, S->stage, e->nargs, e->args);
    c->nargs = e->nargs + 1;
    return c;
  }
  return e;
}
static void stage_region(stage_ctx *S, tc_region *r) {
  if (r->buf != S->from) return;
  tc_range *nr = TC_NEW_ARRAY(S->a, tc_range, r->ndim + 1);
  nr[0].start = tc_ir_clone_expr(S->a, S->stage);
  nr[0].extent = 1;
  for (int i = 0; i < r->ndim; i++) nr[i + 1] = r->r[i];
  r->buf = S->to;
  r->r = nr;
  r->ndim++;
}
static bool stage_stmt_cb(void *ctx, tc_stmt *s) {
  stage_ctx *S = ctx;
  tc_rewrite_stmt_exprs(s, stage_expr_cb, S);
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int n = tc_stmt_regions(s, regs);
  for (int i = 0; i < n; i++) stage_region(S, (tc_region *)regs[i].region);
  if (s->kind == TC_ST_STORE && s->u.store.buf == S->from) {
    s->u.store.buf = S->to;
    s->u.store.idx = prepend(S->a, S->stage, s->u.store.nidx, s->u.store.idx);
    s->u.store.nidx++;
  }
  return true;
}

static tc_stmt *intrin(tc_arena *a, const char *name, int64_t arg, bool has_arg, tc_loc loc) {
  tc_expr **args = TC_NEW_ARRAY(a, tc_expr *, 1);
  args[0] = ci(a, arg, loc);
  return tc_ir_intrinsic_stmt(a, name, has_arg ? 1 : 0, args, loc);
}

static tc_stmt *if_then(tc_arena *a, tc_expr *c, tc_stmt *t, tc_loc loc) { return tc_ir_if_then(a, c, t, loc); }

/* Producers of iteration `it` (an expression), into stage `stage`, marked asynchronous. */
static tc_stmt *producers_at(tc_gpu_plan *P, tc_stmt **prod, int np, const tc_var *v, tc_expr *it, tc_buffer **from,
                             tc_buffer **to, tc_expr *stage, tc_loc loc) {
  tc_stmt_list out = {0};
  for (int i = 0; i < np; i++) {
    tc_stmt *c = with_var(P->a, prod[i], v, it);
    stage_ctx S = {P->a, from[i], to[i], stage};
    stage_stmt_cb(&S, c);
    tc_stmt_set_add(P->a, &P->async, c);
    tc_stmt_list_push(P->a, &out, c);
  }
  return tc_stmt_list_seq(P->a, &out, loc);
}

/* Appends to `cons` the consumers of iteration k (the loop's statements other than the
 * producers, reading the staged tiles at stage_k) and returns the k loop over `cons`. */
static tc_stmt *consumer_loop(tc_gpu_plan *P, tc_stmt *loop, tc_stmt_list *cons, tc_stmt **prod, int np, tc_buffer **from,
                              tc_buffer **to, tc_var *k, tc_expr *nr, tc_expr *iter_k, tc_expr *stage_k, bool async_mma) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  tc_stmt *body = loop->u.loop.body;
  int nitems = body->kind == TC_ST_SEQ ? body->u.seq.n : 1;
  tc_stmt **items = body->kind == TC_ST_SEQ ? body->u.seq.items : &loop->u.loop.body;
  for (int i = 0; i < nitems; i++) {
    bool is_prod = false;
    for (int j = 0; j < np; j++) is_prod |= items[i] == prod[j];
    if (is_prod) continue;
    tc_stmt *c = with_var(a, items[i], loop->u.loop.var, iter_k);
    for (int j = 0; j < np; j++) {
      stage_ctx S = {a, from[j], to[j], stage_k};
      tc_visit_stmts(c, stage_stmt_cb, &S);
    }
    if (async_mma) tc_stmt_set_add(a, &P->async_mma, c);
    tc_stmt_list_push(a, cons, c);
  }
  tc_stmt *kloop = tc_ir_stmt(a, TC_ST_FOR, loc);
  kloop->u.loop.var = k;
  kloop->u.loop.min = ci(a, 0, loc);
  kloop->u.loop.extent = nr;
  kloop->u.loop.kind = TC_LOOP_SERIAL;
  kloop->u.loop.body = tc_stmt_list_seq(a, cons, loc);
  return kloop;
}

/* ---- TMA producers ---- */
bool tc_gpu_multiple_of(const tc_expr *e, int64_t m) {
  int64_t v;
  if (tc_expr_const_int(e, &v)) return v % m == 0;
  if (!tc_dtype_is_int(e->dtype)) return false;
  if (e->op == TC_OP_MUL) return tc_gpu_multiple_of(e->args[0], m) || tc_gpu_multiple_of(e->args[1], m);
  if (e->op == TC_OP_ADD || e->op == TC_OP_SUB) return tc_gpu_multiple_of(e->args[0], m) && tc_gpu_multiple_of(e->args[1], m);
  return false;
}

typedef struct operand_ctx {
  const tc_buffer *b;
  bool found;
} operand_ctx;
static bool operand_cb(void *ctx, tc_stmt *s) {
  operand_ctx *O = ctx;
  if (s->kind == TC_ST_GEMM && (s->u.gemm.a.buf == O->b || s->u.gemm.b.buf == O->b)) O->found = true;
  return true;
}

/* The parameter index of the global tensor a producer copies from when one TMA box can do the
 * copy (the 5-d map of tcg_tma.cuh), else -1: an 8/16-bit tile of rows % 8 == 0 rows of whole
 * 128-byte atoms, or of rows of 64 or 32 bytes (one panel in the 64- or 32-byte swizzle:
 * tc_tma_span), a T.gemm operand (so the lowering stores it in that swizzle), from a parameter
 * whose last two dimensions are constants the map's dimensions divide, at a start on a panel. */
static int tma_param(tc_gpu_plan *P, tc_stmt *root, const tc_stmt *s, const tc_buffer *b, char *why, size_t cap) {
  const tc_region *src = &s->u.copy.src;
  const tc_buffer *g = src->buf;
  int bits = tc_dtype_bits(b->dtype);
#define NOT(...) return (snprintf(why, cap, __VA_ARGS__), -1)
  if (!P->desc->tma || !P->desc->swizzle_gemm_operands) NOT("the arch has no TMA (sm_90+)");
  if (!tc_dtype_eq(g->dtype, b->dtype) || (bits != 8 && bits != 16)) NOT("'%s' is not an 8- or 16-bit copy of one dtype", b->name);
  int64_t eb = bits / 8, rows, cols, R, C;
  if (b->ndim != 2 || !tc_expr_const_int(b->shape[0], &rows) || !tc_expr_const_int(b->shape[1], &cols)) NOT("'%s' is not a 2-d tile", b->name);
  int64_t W = tc_tma_span(cols, (int)eb), A = W / eb; /* the panel, bytes and elements */
  if (rows % 8 || !((cols * eb) % 128 == 0 || cols * eb == 64 || cols * eb == 32) || cols / A > 256 || rows / 8 > 256)
    NOT("'%s' has rows of %lld bytes; a TMA box here needs rows of 32, 64 or whole 128-byte panels, a multiple of 8 of them", b->name,
        (long long)(cols * eb));
  if (b->layout && !(b->layout->name && !strcmp(b->layout->name, "swizzle"))) NOT("'%s' has an annotated layout", b->name);
  if (tc_layout_on_global(g)) NOT("'%s' has its own layout (T.annotate_layout)", g->name);
  operand_ctx O = {b, false};
  tc_visit_stmts(root, operand_cb, &O);
  if (!O.found) NOT("'%s' is not a T.gemm operand (only those are stored in the swizzle a TMA box writes)", b->name);
  int param = -1;
  for (int i = 0; i < P->k->nparams; i++)
    if (P->k->params[i].buf == g) param = i;
  int nd = g->ndim;
  if (param < 0 || nd < 2 || src->ndim != nd) NOT("'%s' is not copied from a kernel parameter", b->name);
  /* rows not in whole 8-row groups: fewer than 8 (decode's M = 1) fit one group, the rest past R
   * arriving as zeros (the runtime's "short form"); more need a map over single rows (the
   * runtime's and the printer's "row form"), whose boxes land in the same layout only when the
   * tile is one panel */
  if (!tc_expr_const_int(g->shape[nd - 2], &R) || !tc_expr_const_int(g->shape[nd - 1], &C))
    NOT("the last two dimensions of '%s' are not constants", g->name);
  if (C % A) NOT("'%s' has %lld columns, not a multiple of the tile's %lld-byte panel (%lld elements)", g->name, (long long)C, (long long)W, (long long)A);
  if (R % 8 && R > 8 && cols != A)
    NOT("'%s' has %lld rows, not a multiple of 8, and the tile is wider than one 128-byte panel", g->name, (long long)R);
  if (!tc_gpu_tma_leading_dims(src)) NOT("the leading dimensions of '%s' are not single indices of constant or symbolic dims", g->name);
  if (src->r[nd - 2].extent != rows || src->r[nd - 1].extent != cols || !tc_gpu_multiple_of(src->r[nd - 2].start, 8) ||
      !tc_gpu_multiple_of(src->r[nd - 1].start, A))
    NOT("the tile of '%s' is not known to start on an 8-row group and a %lld-byte panel", g->name, (long long)W);
#undef NOT
  return param;
}

/* Append map m to the kernel's tensor maps; its index. */
static int add_tma_map(tc_gpu_plan *P, struct tc_tma_map m) {
  tc_kernel_ir *k = P->k;
  struct tc_tma_map *v = TC_NEW_ARRAY(P->a, struct tc_tma_map, k->ntma + 1);
  for (int i = 0; i < k->ntma; i++) v[i] = k->tma[i];
  v[k->ntma] = m;
  k->tma = v;
  return k->ntma++;
}

bool tc_gpu_tma_leading_dims(const tc_region *r) {
  const tc_buffer *g = r->buf;
  for (int d = 0; d + 2 < g->ndim; d++) {
    int64_t v;
    if (r->r[d].extent != 1 ||
        (!tc_expr_const_int(g->shape[d], &v) && !(g->shape[d]->op == TC_OP_VAR && g->shape[d]->var->kind == TC_VAR_SYMBOLIC)))
      return false;
  }
  return true;
}

int tc_gpu_tma_map(tc_gpu_plan *P, int param, int64_t rows, int64_t cols) {
  tc_kernel_ir *k = P->k;
  for (int i = 0; i < k->ntma; i++)
    if (k->tma[i].param == param && k->tma[i].rows == rows && k->tma[i].cols == cols && k->tma[i].split <= 1) return i;
  return add_tma_map(P, (struct tc_tma_map){param, rows, cols, 1});
}

static tc_expr *bar_at(tc_arena *a, tc_buffer *bar, tc_expr *stage, tc_loc loc) {
  tc_expr **i = TC_NEW_ARRAY(a, tc_expr *, 1);
  i[0] = tc_ir_clone_expr(a, stage);
  return tc_ir_address_of(a, bar, 1, i, loc);
}

/* The tensor map of each producer's tile (maps[j]), the bytes it brings (each[j], when not NULL)
 * and the bytes one stage brings. */
static int64_t tma_stage_maps(tc_gpu_plan *P, int np, const int *params, tc_buffer **from, int *maps, int64_t *each) {
  int64_t bytes = 0;
  for (int j = 0; j < np; j++) {
    int64_t rows = 0, cols = 0;
    tc_expr_const_int(from[j]->shape[0], &rows);
    tc_expr_const_int(from[j]->shape[1], &cols);
    maps[j] = tc_gpu_tma_map(P, params[j], rows, cols);
    int64_t b = rows * cols * (tc_dtype_bits(from[j]->dtype) / 8);
    if (each) each[j] = b;
    bytes += b;
  }
  return bytes;
}

/* A shared array of n mbarriers. */
static tc_buffer *new_mbars(tc_gpu_plan *P, int n, tc_loc loc) {
  tc_expr **shape = TC_NEW_ARRAY(P->a, tc_expr *, 1);
  shape[0] = ci(P->a, n, loc);
  return tc_ir_new_buffer(P->a, P->k, "tcg_mbar", tc_dt(TC_DT_UINT64), TC_SCOPE_SHARED, 1, shape, loc);
}

/* The statements every pipeline form begins with: n := the trip count, and the allocation of
 * its barriers (bar, or none). */
static void pipeline_head(tc_gpu_plan *P, tc_stmt_list *out, tc_var *n, tc_expr *extent, tc_buffer *bar, tc_loc loc) {
  tc_stmt *ln = tc_ir_stmt(P->a, TC_ST_LET, loc);
  ln->u.let.var = n;
  ln->u.let.value = extent;
  tc_stmt_list_push(P->a, out, ln);
  if (!bar) return;
  tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, loc);
  al->u.alloc.buf = bar;
  tc_stmt_list_push(P->a, out, al);
}

/* ... and end with: the loop, the wait for its last wgmma (and its last cp.async group), a
 * barrier; the tiles' allocations become the staged ones (realloc_cb). */
static void pipeline_tail(tc_gpu_plan *P, tc_stmt_list *out, tc_stmt *kloop, bool async_mma, bool cp_async, int np,
                          tc_buffer **from, tc_buffer **to, tc_loc loc) {
  tc_stmt_list_push(P->a, out, kloop);
  if (async_mma) tc_stmt_list_push(P->a, out, intrin(P->a, "wgmma_wait", 0, true, loc));
  if (cp_async) tc_stmt_list_push(P->a, out, intrin(P->a, "cp_async_wait", 0, true, loc));
  tc_stmt_list_push(P->a, out, tc_ir_stmt(P->a, TC_ST_BARRIER, loc));
  for (int j = 0; j < np; j++) {
    P->restage_from[P->nrestage] = from[j];
    P->restage_to[P->nrestage++] = to[j];
  }
}

static tc_stmt *tma_pipeline(tc_gpu_plan *P, tc_stmt *loop, tc_stmt **prod, int np, const int *params, tc_buffer **from,
                             tc_buffer **to, int N, int D, bool async_mma);
static const char *ws_refusal(const tc_gpu_plan *P, bool top_level);
static tc_stmt *ws_pipeline(tc_gpu_plan *P, tc_stmt *loop, tc_stmt **prod, int np, const int *params, tc_buffer **from,
                            tc_buffer **to, int N, bool async_mma);

/* Producers of iteration `it` into stage `stage` as TMA loads completing on bar[stage]. */
static tc_stmt *tma_producers_at(tc_gpu_plan *P, tc_stmt **prod, int np, const int *maps, int64_t bytes, tc_buffer *bar,
                                 tc_expr *bar_index, const tc_var *v, tc_expr *it, tc_buffer **from, tc_buffer **to, tc_expr *stage,
                                 tc_loc loc) {
  tc_arena *a = P->a;
  tc_stmt_list out = {0};
  tc_expr **ea = TC_NEW_ARRAY(a, tc_expr *, 2);
  ea[0] = bar_at(a, bar, bar_index, loc);
  ea[1] = ci(a, bytes, loc);
  tc_stmt_list_push(a, &out, tc_ir_intrinsic_stmt(a, "mbar_expect", 2, ea, loc));
  for (int i = 0; i < np; i++) {
    tc_stmt *c = with_var(a, prod[i], v, it);
    stage_ctx S = {a, from[i], to[i], stage};
    stage_stmt_cb(&S, c);
    const tc_region *src = &c->u.copy.src, *dst = &c->u.copy.dst;
    tc_expr **di = TC_NEW_ARRAY(a, tc_expr *, dst->ndim), **si = TC_NEW_ARRAY(a, tc_expr *, src->ndim);
    for (int d = 0; d < dst->ndim; d++) di[d] = dst->r[d].start;
    for (int d = 0; d < src->ndim; d++) si[d] = src->r[d].start;
    tc_expr **args = TC_NEW_ARRAY(a, tc_expr *, 6);
    args[0] = tc_ir_address_of(a, dst->buf, dst->ndim, di, loc);
    args[1] = tc_ir_address_of(a, src->buf, src->ndim, si, loc);
    args[2] = bar_at(a, bar, bar_index, loc);
    args[3] = ci(a, dst->r[dst->ndim - 2].extent, loc);
    args[4] = ci(a, dst->r[dst->ndim - 1].extent, loc);
    args[5] = ci(a, maps[i], loc);
    tc_stmt_list_push(a, &out, tc_ir_intrinsic_stmt(a, "tma_load", 6, args, loc));
  }
  return tc_stmt_list_seq(a, &out, loc);
}

static tc_stmt *pipeline_staged(tc_gpu_plan *P, tc_stmt *loop, tc_stmt *root, bool top_level, tc_stmt_list *hoist);
/* A staged tile allocated inside the loop's body (T.alloc_shared in a T.Pipelined body, as
 * TileLang allows) has its ALLOC moved in front of the pipeline: the prologue's producers
 * write it before the loop, and every iteration's producers write stages a later iteration
 * reads, so it must live across the whole loop (TileLang allocates shared tiles once per block
 * anyway). Only the tiles that become producers move; each is overwritten whole by its copy. */
static tc_stmt *pipeline_loop(tc_gpu_plan *P, tc_stmt *loop, tc_stmt *root, bool top_level) {
  tc_stmt_list hoisted = {0};
  tc_stmt *r = pipeline_staged(P, loop, root, top_level, &hoisted);
  if (!hoisted.n) return r;
  tc_stmt_list_push(P->a, &hoisted, r);
  return tc_stmt_list_seq(P->a, &hoisted, loop->loc);
}

static tc_stmt *pipeline_staged(tc_gpu_plan *P, tc_stmt *loop, tc_stmt *root, bool top_level, tc_stmt_list *hoist) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  int N = loop->u.loop.num_stages;
  tc_stmt *body = loop->u.loop.body;
  int nitems = body->kind == TC_ST_SEQ ? body->u.seq.n : 1;
  tc_stmt **items = body->kind == TC_ST_SEQ ? body->u.seq.items : &loop->u.loop.body;
  tc_stmt *prod[16];
  tc_buffer *from[16], *to[16];
  int np = 0;
  let_ctx L = {0};
  tc_visit_stmts(body, collect_lets, &L);
  for (int i = 0; i < nitems && np < 16; i++) {
    tc_stmt *s = items[i];
    if (s->kind != TC_ST_COPY) continue;
    const tc_region *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    tc_buffer *b = dst->buf;
    int64_t rows, cols, numel = tc_buffer_numel(b);
    if (src->buf->scope != TC_SCOPE_GLOBAL || b->scope != TC_SCOPE_SHARED || numel < 0 || b->ndim < 1) continue;
    if (tc_region_numel(dst) != numel) continue; /* the whole buffer */
    /* the tile must be used only in this loop, written only here, read only after here */
    if (uses_of(root, b) != uses_of(body, b)) continue; /* (the ALLOC is not a use) */
    bool before = false, written = false;
    for (int j = 0; j < nitems; j++) {
      if (j == i) continue;
      int u = uses_of(items[j], b);
      if (u && j < i) before = true;
      tc_stmt_region regs[TC_MAX_STMT_REGIONS];
      int nr = tc_stmt_regions(items[j], regs);
      for (int r = 0; r < nr; r++)
        if (regs[r].region->buf == b && regs[r].write) written = true;
    }
    L.bad = false;
    tc_rewrite_stmt_exprs(s, check_vars_cb, &L);
    if (before || written || L.bad) continue;
    if (b->ndim >= 2 && tc_expr_const_int(b->shape[b->ndim - 2], &rows) && tc_expr_const_int(b->shape[b->ndim - 1], &cols) &&
        rows % 8)
      continue; /* stages must start at a swizzle period */
    prod[np] = s;
    from[np] = b;
    tc_expr **shape = TC_NEW_ARRAY(a, tc_expr *, b->ndim + 1);
    shape[0] = ci(a, N, loc);
    for (int d = 0; d < b->ndim; d++) shape[d + 1] = b->shape[d];
    to[np] = tc_ir_new_buffer(a, P->k, b->name, b->dtype, TC_SCOPE_SHARED, b->ndim + 1, shape, b->loc);
    np++;
  }
  if (!np) return loop;
  if (body->kind == TC_ST_SEQ) { /* the staged tiles' ALLOCs move in front (pipeline_loop) */
    int m = 0;
    for (int i = 0; i < nitems; i++) {
      bool staged = false;
      for (int j = 0; j < np && items[i]->kind == TC_ST_ALLOC; j++) staged |= items[i]->u.alloc.buf == from[j];
      if (staged) tc_stmt_list_push(a, hoist, items[i]);
      else items[m++] = items[i];
    }
    body->u.seq.n = nitems = m;
  }
  /* an asynchronous wgmma mainloop: every consumer is a gemm on wgmma */
  bool async_mma = N >= 3;
  for (int i = 0; i < nitems && async_mma; i++) {
    bool is_prod = false;
    for (int j = 0; j < np; j++) is_prod |= items[i] == prod[j];
    char why[200];
    if (!is_prod && (items[i]->kind != TC_ST_GEMM || tc_gpu_gemm_choose(P, items[i], why, sizeof why) != TC_GPU_GEMM_WGMMA))
      async_mma = false;
  }
  int D = async_mma ? N - 2 : N - 1; /* how many iterations ahead the producers run */
  /* TMA when every producer qualifies */
  int params[16];
  char why[256] = "";
  bool tma = true;
  for (int j = 0; j < np && tma; j++) tma = (params[j] = tma_param(P, root, prod[j], from[j], why, sizeof why)) >= 0;
  if (tma) {
    const char *no_ws = ws_refusal(P, top_level);
    /* a warp-specialized kernel's tiles are all live at once (smem_reuse.c cannot rearrange it) */
    int64_t staged = tc_gpu_shared_bytes(P) + 1024; /* + the barriers, alignment */
    for (int j = 0; j < np; j++) staged += (N - 1) * tc_gpu_tile_bytes(from[j]->dtype, tc_buffer_numel(from[j]));
    char big[160];
    if (!no_ws && staged > P->desc->max_smem) {
      snprintf(big, sizeof big, "its tiles, staged, need %lld bytes of shared memory all live at once, more than %s allows (%lld)",
               (long long)staged, P->desc->target, (long long)P->desc->max_smem);
      no_ws = big;
    }
    if (!no_ws) return ws_pipeline(P, loop, prod, np, params, from, to, N, async_mma);
    if (P->notes) tc_sb_printf(P->notes, "T.Pipelined(num_stages=%d): not warp-specialized: %s\n", N, no_ws);
    return tma_pipeline(P, loop, prod, np, params, from, to, N, D, async_mma);
  }
  if (P->notes && P->desc->tma)
    tc_sb_printf(P->notes, "T.Pipelined(num_stages=%d): %d tile%s per stage by cp.async, producers %d iteration%s ahead; not TMA: %s\n",
                 N, np, np == 1 ? "" : "s", D, D == 1 ? "" : "s", why);
  /* consumers: the other statements, with the staged tiles at stage k % N */
  tc_var *k = tc_ir_new_var(a, P->k, "k_pipe", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *n = tc_ir_new_var(a, P->k, "n_pipe", tc_index_dtype(), TC_VAR_LOCAL, loc);
  tc_expr *kr = tc_ir_var_ref(a, k, loc), *nr = tc_ir_var_ref(a, n, loc);
  tc_expr *iter_k = tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, kr, loc);
  tc_expr *stage_k = tc_ir_binary(a, TC_OP_FLOORMOD, kr, ci(a, N, loc), loc);
  tc_stmt_list cons = {0};
  tc_stmt_list_push(a, &cons, intrin(a, "cp_async_wait", D - 1, true, loc));
  tc_stmt_list_push(a, &cons, tc_ir_stmt(a, TC_ST_BARRIER, loc));
  tc_expr *ahead = tc_ir_binary(a, TC_OP_ADD, kr, ci(a, D, loc), loc);
  tc_stmt_list_push(a, &cons,
                    if_then(a, tc_ir_binary(a, TC_OP_LT, ahead, nr, loc),
                            producers_at(P, prod, np, loop->u.loop.var, tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, ahead, loc),
                                         from, to, tc_ir_binary(a, TC_OP_FLOORMOD, ahead, ci(a, N, loc), loc), loc),
                            loc));
  tc_stmt_list_push(a, &cons, intrin(a, "cp_async_commit", 0, false, loc));
  tc_stmt *kloop = consumer_loop(P, loop, &cons, prod, np, from, to, k, nr, iter_k, stage_k, async_mma);
  tc_stmt_list out = {0};
  pipeline_head(P, &out, n, loop->u.loop.extent, NULL, loc);
  for (int s = 0; s < D; s++) {
    tc_stmt_list_push(a, &out,
                      if_then(a, tc_ir_binary(a, TC_OP_LT, ci(a, s, loc), nr, loc),
                              producers_at(P, prod, np, loop->u.loop.var, tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, ci(a, s, loc), loc),
                                           from, to, ci(a, s, loc), loc),
                              loc));
    tc_stmt_list_push(a, &out, intrin(a, "cp_async_commit", 0, false, loc));
  }
  pipeline_tail(P, &out, kloop, async_mma, true, np, from, to, loc);
  return tc_stmt_list_seq(a, &out, loc);
}

/* The TMA form of the pipeline (the comment at the top). */
static tc_stmt *tma_pipeline(tc_gpu_plan *P, tc_stmt *loop, tc_stmt **prod, int np, const int *params, tc_buffer **from,
                             tc_buffer **to, int N, int D, bool async_mma) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  int maps[16];
  int64_t bytes = tma_stage_maps(P, np, params, from, maps, NULL);
  tc_buffer *bar = new_mbars(P, N, loc);
  tc_var *k = tc_ir_new_var(a, P->k, "k_pipe", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *n = tc_ir_new_var(a, P->k, "n_pipe", tc_index_dtype(), TC_VAR_LOCAL, loc);
  tc_expr *kr = tc_ir_var_ref(a, k, loc), *nr = tc_ir_var_ref(a, n, loc);
  tc_expr *iter_k = tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, kr, loc);
  tc_expr *stage_k = tc_ir_binary(a, TC_OP_FLOORMOD, kr, ci(a, N, loc), loc);
  tc_stmt_list cons = {0};
  tc_stmt_list_push(a, &cons, tc_ir_stmt(a, TC_ST_BARRIER, loc));
  tc_expr *ahead = tc_ir_binary(a, TC_OP_ADD, kr, ci(a, D, loc), loc);
  tc_stmt_list_push(a, &cons,
                    if_then(a, tc_ir_binary(a, TC_OP_LT, ahead, nr, loc),
                            tma_producers_at(P, prod, np, maps, bytes, bar, tc_ir_binary(a, TC_OP_FLOORMOD, ahead, ci(a, N, loc), loc),
                                             loop->u.loop.var, tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, ahead, loc), from, to,
                                             tc_ir_binary(a, TC_OP_FLOORMOD, ahead, ci(a, N, loc), loc), loc),
                            loc));
  tc_expr **wa = TC_NEW_ARRAY(a, tc_expr *, 2);
  wa[0] = bar_at(a, bar, stage_k, loc);
  wa[1] = tc_ir_binary(a, TC_OP_FLOORMOD, tc_ir_binary(a, TC_OP_FLOORDIV, kr, ci(a, N, loc), loc), ci(a, 2, loc), loc);
  tc_stmt_list_push(a, &cons, tc_ir_intrinsic_stmt(a, "mbar_wait", 2, wa, loc));
  tc_stmt *kloop = consumer_loop(P, loop, &cons, prod, np, from, to, k, nr, iter_k, stage_k, async_mma);
  tc_stmt_list out = {0};
  pipeline_head(P, &out, n, loop->u.loop.extent, bar, loc);
  tc_expr **ia = TC_NEW_ARRAY(a, tc_expr *, 3);
  ia[0] = bar_at(a, bar, ci(a, 0, loc), loc);
  ia[1] = ci(a, N, loc);
  ia[2] = ci(a, 1, loc);
  tc_stmt_list_push(a, &out, tc_ir_intrinsic_stmt(a, "mbar_init", 3, ia, loc));
  tc_stmt_list_push(a, &out, tc_ir_stmt(a, TC_ST_BARRIER, loc));
  for (int s = 0; s < D; s++)
    tc_stmt_list_push(a, &out,
                      if_then(a, tc_ir_binary(a, TC_OP_LT, ci(a, s, loc), nr, loc),
                              tma_producers_at(P, prod, np, maps, bytes, bar, ci(a, s, loc), loop->u.loop.var,
                                               tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, ci(a, s, loc), loc), from, to, ci(a, s, loc), loc),
                              loc));
  pipeline_tail(P, &out, kloop, async_mma, false, np, from, to, loc);
  if (P->notes)
    tc_sb_printf(P->notes, "T.Pipelined(num_stages=%d): %d tile%s per stage by TMA (cp.async.bulk.tensor), mbarrier waits, producers %d iteration%s ahead\n",
                 N, np, np == 1 ? "" : "s", D, D == 1 ? "" : "s");
  return tc_stmt_list_seq(a, &out, loc);
}

/* Why the TMA pipeline of `loop` cannot be warp-specialized, or NULL. */
static const char *ws_refusal(const tc_gpu_plan *P, bool top_level) {
  if (!P->desc->wgmma) return "the arch is not sm_90a (setmaxnreg)";
  if (P->k->no_warp_specialize) return "pass_configs turns it off (tl.disable_warp_specialized)";
  if (!top_level) return "the loop is not at the kernel's top level, or a name it may use is assigned inside a statement before it";
  if (P->k->threads_ndim != 1 || P->threads % 128 || P->threads + 128 > P->desc->max_threads)
    return "the block is not one-dimensional with a multiple of 128 threads, at most 896";
  if (P->k->producer_threads) return "another loop of the kernel has the producer warpgroup";
  return NULL;
}

/* The warp-specialized form of the TMA pipeline (the comment at the top). */
/* Groups of a warp-specialized pipeline's tiles by the consumer statement that reads them first
 * (attention: K by Q K^T, V by P V), so that each group has its own full and empty barriers: a
 * tile is awaited just before its first reader and its stage freed just after its last one, and
 * the producer refills K while V is still being read. group[j] (all 0 on entry): producer j's group; first[g],
 * last[g]: the indices, among the consumer statements, of group g's first and last readers.
 * One group when every tile is first read by the same statement (a GEMM's mainloop), and for an
 * asynchronous wgmma mainloop. */
static int ws_groups(tc_stmt *loop, tc_stmt **prod, int np, tc_buffer **from, bool async_mma, int *group, int *first, int *last) {
  tc_stmt *body = loop->u.loop.body;
  int nitems = body->kind == TC_ST_SEQ ? body->u.seq.n : 1;
  tc_stmt **items = body->kind == TC_ST_SEQ ? body->u.seq.items : &loop->u.loop.body;
  int f[16], l[16], G = 0;
  for (int j = 0; j < np; j++) f[j] = l[j] = -1;
  for (int i = 0, ci_ = 0; i < nitems; i++) {
    bool is_prod = false;
    for (int j = 0; j < np; j++) is_prod |= items[i] == prod[j];
    if (is_prod) continue;
    for (int j = 0; j < np; j++)
      if (uses_of(items[i], from[j])) {
        if (f[j] < 0) f[j] = ci_;
        l[j] = ci_;
      }
    ci_++;
  }
  for (int j = 0; j < np; j++)
    if (f[j] < 0 || async_mma) return 1; /* group[] stays all 0 */
  for (int j = 0; j < np; j++) {
    int g = 0;
    while (g < G && first[g] != f[j]) g++;
    if (g == G) first[G] = f[j], last[G] = l[j], G++;
    if (l[j] > last[g]) last[g] = l[j];
    group[j] = g;
  }
  for (int g = 0; g < G; g++) /* by first reader, so the producer issues them in that order */
    for (int h = g + 1; h < G; h++)
      if (first[h] < first[g]) {
        int t = first[g];
        first[g] = first[h], first[h] = t;
        t = last[g], last[g] = last[h], last[h] = t;
        for (int j = 0; j < np; j++) group[j] = group[j] == g ? h : group[j] == h ? g : group[j];
      }
  return G;
}

static tc_stmt *mbar_op(tc_arena *a, const char *op, tc_buffer *bar, tc_expr *at, tc_expr *arg, tc_loc loc) {
  tc_expr **args = TC_NEW_ARRAY(a, tc_expr *, 2);
  args[0] = bar_at(a, bar, at, loc);
  args[1] = arg;
  return tc_ir_intrinsic_stmt(a, op, arg ? 2 : 1, args, loc);
}

/* Whether e may depend on the block index v: directly, or through a name (conservatively: any
 * name the loop body or the kernel assigns). */
static bool depends_on_block(const tc_expr *e, const tc_var *v, int depth) {
  if (!e) return false;
  if (e->op == TC_OP_VAR) return e->var == v || (e->var->kind != TC_VAR_SYMBOLIC && e->var->kind != TC_VAR_PARAM &&
                                                   e->var->kind != TC_VAR_LOOP && e->var->kind != TC_VAR_BLOCK_IDX);
  if (e->op == TC_OP_LOAD || depth > 32) return true;
  for (int i = 0; i < e->nargs; i++)
    if (depends_on_block(e->args[i], v, depth + 1)) return true;
  return false;
}

/* Clusters of two blocks (sm_90a; docs/gpu.md "Clusters"). The persistent blocks of an
 * asynchronous wgmma mainloop walk the tiles in pairs of consecutive grid-y indices, run as
 * one cluster: a tile the pair shares (a GEMM's B tile, which depends on the column block
 * only) is loaded half by each block and multicast to both, which halves the bytes each
 * multiprocessor draws from L2 for it. Each stage's full barrier still expects the whole
 * stage; a stage is free when the consumers of both blocks freed it, so they arrive on the
 * empty barriers of both. Returns the producer whose tile is split, or -1 and the reason. */
static int cluster_pick(tc_gpu_plan *P, const tc_stmt *loop, tc_stmt **prod, int np, tc_buffer **from, const int64_t *each,
                        bool async_mma, int G, const char **why) {
  const tc_kernel_ir *k = P->k;
  int64_t gy = 0, ext = 0;
  *why = NULL;
  if (!async_mma || G != 1) return *why = "the mainloop is not an asynchronous wgmma one", -1;
  if (!tc_expr_const_int(loop->u.loop.extent, &ext))
    return *why = "the loop's trip count is not a constant (every tile of a pair must run as long)", -1;
  if (k->grid_ndim < 2 || !tc_expr_const_int(k->grid[1], &gy) || gy < 2 || gy % 2)
    return *why = "the grid's y extent is not a constant multiple of 2", -1;
  int best = -1;
  for (int j = 0; j < np; j++) {
    const tc_region *src = &prod[j]->u.copy.src;
    const tc_buffer *g = src->buf;
    int64_t rows = 0, R = 0;
    bool shared = true;
    for (int d = 0; d < src->ndim; d++) shared &= !depends_on_block(src->r[d].start, k->block_idx[1], 0);
    if (!shared || !tc_expr_const_int(from[j]->shape[0], &rows) || rows % 16 || !tc_expr_const_int(g->shape[g->ndim - 2], &R) ||
        R < 8 || R % 8)
      continue;
    if (best < 0 || each[j] > each[best]) best = j;
  }
  if (best < 0) *why = "no tile of a stage is the same for consecutive grid-y blocks in whole 16-row halves";
  return best;
}

/* The warp-specialized form of the TMA pipeline (the comment at the top). */
static tc_stmt *ws_pipeline(tc_gpu_plan *P, tc_stmt *loop, tc_stmt **prod, int np, const int *params, tc_buffer **from,
                            tc_buffer **to, int N, bool async_mma) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  int maps[16];
  int64_t each[16];
  int maps_before = P->k->ntma;
  tma_stage_maps(P, np, params, from, maps, each);
  int group[16] = {0}, first[16], last[16];
  int G = ws_groups(loop, prod, np, from, async_mma, group, first, last);
  const char *no_cluster = NULL;
  int split = cluster_pick(P, loop, prod, np, from, each, async_mma, G, &no_cluster);
  if (!P->desc->clusters) { /* off: a note only where they would apply */
    no_cluster = split >= 0 ? "they are off; clusters of 2 could share this loop's tiles (the cuda target option clusters=on)" : NULL;
    split = -1;
  }
  if (split >= 0) {
    /* an earlier loop's map stays whole: the split one is another; one this loop made is split */
    if (maps[split] < maps_before) maps[split] = add_tma_map(P, P->k->tma[maps[split]]);
    P->k->tma[maps[split]].split = 2;
    P->k->cluster = 2;
  }
  const char *free_op = split >= 0 ? "mbar_arrive_cluster" : "mbar_arrive_warp";
  tc_buffer *bar = new_mbars(P, 2 * G * N, loc); /* full, then empty; each G groups of N stages */
  tc_var *k = tc_ir_new_var(a, P->k, "k_pipe", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *n = tc_ir_new_var(a, P->k, "n_pipe", tc_index_dtype(), TC_VAR_LOCAL, loc);
  tc_expr *kr = tc_ir_var_ref(a, k, loc), *nr = tc_ir_var_ref(a, n, loc);
  tc_expr *iter_k = tc_ir_binary(a, TC_OP_ADD, loop->u.loop.min, kr, loc);
  /* Stages and phases count iterations through c_pipe, LET to k at the top of each part: a
   * persistent kernel, which runs the loop once per tile, continues the count (ir.h) */
  tc_var *cp = tc_ir_new_var(a, P->k, "c_pipe", tc_index_dtype(), TC_VAR_LOCAL, loc);
  tc_var *cc = tc_ir_new_var(a, P->k, "c_pipe", tc_index_dtype(), TC_VAR_LOCAL, loc);
  tc_expr *cpr = tc_ir_var_ref(a, cp, loc), *ccr = tc_ir_var_ref(a, cc, loc);
  tc_expr *stage_k = tc_ir_binary(a, TC_OP_FLOORMOD, ccr, ci(a, N, loc), loc);
  tc_expr *round_k = tc_ir_binary(a, TC_OP_FLOORDIV, ccr, ci(a, N, loc), loc);
  tc_expr *pstage = tc_ir_binary(a, TC_OP_FLOORMOD, cpr, ci(a, N, loc), loc);
  tc_expr *pround = tc_ir_binary(a, TC_OP_FLOORDIV, cpr, ci(a, N, loc), loc);
  tc_stmt *lp = tc_ir_stmt(a, TC_ST_LET, loc), *lc = tc_ir_stmt(a, TC_ST_LET, loc);
  lp->u.let.var = cp, lp->u.let.value = tc_ir_var_ref(a, k, loc);
  lc->u.let.var = cc, lc->u.let.value = tc_ir_var_ref(a, k, loc);
  /* bar[g * N + stage]: group g's full barriers; bar[(G + g) * N + stage]: its empty ones */
  tc_expr *full_at[16], *empty_at[16], *pfull[16], *pempty[16];
  for (int g = 0; g < G; g++) {
    full_at[g] = g ? tc_ir_binary(a, TC_OP_ADD, ci(a, g * N, loc), stage_k, loc) : stage_k;
    empty_at[g] = tc_ir_binary(a, TC_OP_ADD, ci(a, (G + g) * N, loc), stage_k, loc);
    pfull[g] = g ? tc_ir_binary(a, TC_OP_ADD, ci(a, g * N, loc), pstage, loc) : pstage;
    pempty[g] = tc_ir_binary(a, TC_OP_ADD, ci(a, (G + g) * N, loc), pstage, loc);
  }
  /* producer(k): per group, the wait for its stage to be free, then its loads */
  tc_stmt_list pl = {0};
  tc_stmt_list_push(a, &pl, lp);
  for (int g = 0; g < G; g++) {
    tc_expr *parity =
        tc_ir_binary(a, TC_OP_FLOORMOD, tc_ir_binary(a, TC_OP_ADD, tc_ir_clone_expr(a, pround), ci(a, 1, loc), loc), ci(a, 2, loc), loc);
    tc_stmt_list_push(a, &pl, if_then(a, tc_ir_binary(a, TC_OP_GE, cpr, ci(a, N, loc), loc), mbar_op(a, "mbar_wait", bar, pempty[g], parity, loc), loc));
    tc_stmt *gp[16];
    tc_buffer *gfrom[16], *gto[16];
    int gmaps[16], ng = 0;
    int64_t gbytes = 0;
    for (int j = 0; j < np; j++) {
      if (group[j] != g) continue;
      gp[ng] = prod[j], gfrom[ng] = from[j], gto[ng] = to[j], gmaps[ng] = maps[j], ng++;
      gbytes += each[j];
    }
    tc_stmt_list_push(a, &pl, tma_producers_at(P, gp, ng, gmaps, gbytes, bar, pfull[g], loop->u.loop.var, iter_k, gfrom, gto,
                                               pstage, loc));
  }
  tc_stmt *producer = tc_stmt_list_seq(a, &pl, loc);
  /* consumer(k) */
  tc_stmt_list cons = {0};
  tc_stmt_list_push(a, &cons, lc);
  if (G == 1) tc_stmt_list_push(a, &cons, mbar_op(a, "mbar_wait", bar, stage_k, tc_ir_binary(a, TC_OP_FLOORMOD, round_k, ci(a, 2, loc), loc), loc));
  tc_stmt *kloop = consumer_loop(P, loop, &cons, prod, np, from, to, k, nr, iter_k, stage_k, async_mma);
  tc_stmt_list cl = {0};
  if (G == 1) {
    tc_stmt_list_push(a, &cl, kloop->u.loop.body);
    if (async_mma) { /* gemm k-1 has finished once gemm k returns */
      tc_expr *prev = tc_ir_binary(a, TC_OP_FLOORMOD, tc_ir_binary(a, TC_OP_SUB, ccr, ci(a, 1, loc), loc), ci(a, N, loc), loc);
      tc_stmt_list_push(a, &cl, if_then(a, tc_ir_binary(a, TC_OP_GT, ccr, ci(a, 0, loc), loc),
                                        mbar_op(a, free_op, bar, tc_ir_binary(a, TC_OP_ADD, ci(a, N, loc), prev, loc), NULL, loc), loc));
    } else {
      tc_stmt_list_push(a, &cl, mbar_op(a, "mbar_arrive_warp", bar, empty_at[0], NULL, loc));
    }
  } else { /* each group awaited before its first reader and freed after its last */
    tc_stmt *cb = kloop->u.loop.body;
    tc_stmt_list_push(a, &cl, cb->u.seq.items[0]);
    for (int i = 1; i < cb->u.seq.n; i++) {
      for (int g = 0; g < G; g++)
        if (first[g] == i - 1)
          tc_stmt_list_push(a, &cl, mbar_op(a, "mbar_wait", bar, full_at[g],
                                            tc_ir_binary(a, TC_OP_FLOORMOD, tc_ir_clone_expr(a, round_k), ci(a, 2, loc), loc), loc));
      tc_stmt_list_push(a, &cl, cb->u.seq.items[i]);
      for (int g = 0; g < G; g++)
        if (last[g] == i - 1) tc_stmt_list_push(a, &cl, mbar_op(a, "mbar_arrive_warp", bar, empty_at[g], NULL, loc));
    }
  }
  tc_stmt **parts = TC_NEW_ARRAY(a, tc_stmt *, 2);
  parts[0] = producer;
  parts[1] = tc_stmt_list_seq(a, &cl, loc);
  tc_stmt *body = tc_ir_stmt(a, TC_ST_SEQ, loc);
  body->u.seq.n = 2;
  body->u.seq.items = parts;
  kloop->u.loop.body = body;
  kloop->u.loop.ws_split = true;
  P->k->producer_threads = 128;
  /* the loop, after the barriers are made */
  tc_stmt_list out = {0};
  pipeline_head(P, &out, n, loop->u.loop.extent, bar, loc);
  for (int e = 0; e < 2; e++) {
    tc_expr **ia = TC_NEW_ARRAY(a, tc_expr *, 3);
    ia[0] = bar_at(a, bar, ci(a, e * G * N, loc), loc);
    ia[1] = ci(a, G * N, loc);
    ia[2] = ci(a, e ? P->threads / 32 * (split >= 0 ? 2 : 1) : 1, loc); /* empty: every consumer warp of the cluster */
    tc_stmt_list_push(a, &out, tc_ir_intrinsic_stmt(a, "mbar_init", 3, ia, loc));
  }
  tc_stmt_list_push(a, &out, tc_ir_stmt(a, TC_ST_BARRIER, loc));
  pipeline_tail(P, &out, kloop, async_mma, false, np, from, to, loc);
  if (P->notes) {
    tc_sb_printf(P->notes,
                 "T.Pipelined(num_stages=%d): warp-specialized: a producer warpgroup (threads %d..%d) loads %d tile%s per stage by TMA "
                 "up to %d stages ahead; the %d consumer threads wait on full mbarriers and free stages on empty ones%s\n",
                 N, P->threads, P->threads + 127, np, np == 1 ? "" : "s", N, P->threads,
                 P->threads + 128 >= 384 ? "; setmaxnreg moves registers from the producers to the consumers" : "");
    if (split >= 0)
      tc_sb_printf(P->notes,
                   "T.Pipelined: clusters of 2 blocks on consecutive grid-y tiles: each loads half of the '%s' tile and multicasts it "
                   "to both (TMA .multicast::cluster), and frees a stage on both blocks' empty mbarriers\n",
                   from[split]->name);
    else if (no_cluster && async_mma)
      tc_sb_printf(P->notes, "T.Pipelined: no clusters: %s\n", no_cluster);
    if (G > 1)
      tc_sb_printf(P->notes,
                   "T.Pipelined: the tiles of a stage come in %d groups with barriers of their own, each awaited before the statement "
                   "that reads it first and freed after the one that reads it last\n",
                   G);
  }
  return tc_stmt_list_seq(a, &out, loc);
}

typedef struct walk_ctx {
  tc_gpu_plan *P;
  tc_stmt *root;
  int depth;          /* enclosing loops and conditions */
  bool deep_assign;   /* a statement before, at the top level, assigns a name inside itself */
} walk_ctx;

static bool nested_assign_cb(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_ASSIGN) *(bool *)ctx = true;
  return true;
}
/* Whether s assigns a name below its top level (a top-level ASSIGN the producer thread of a
 * warp-specialized kernel replays; one inside a loop or condition it cannot). */
static bool assigns_inside(tc_stmt *s) {
  if (!s || s->kind == TC_ST_ASSIGN || s->kind == TC_ST_LET) return false;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++)
      if (assigns_inside(s->u.seq.items[i])) return true;
    return false;
  }
  bool any = false;
  tc_visit_stmts(s, nested_assign_cb, &any);
  return any;
}

static tc_stmt *rewrite(walk_ctx *W, tc_stmt *s) {
  if (!s) return s;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      s->u.seq.items[i] = rewrite(W, s->u.seq.items[i]);
      if (W->depth == 0 && assigns_inside(s->u.seq.items[i])) W->deep_assign = true;
    }
    return s;
  case TC_ST_FOR:
    W->depth++;
    s->u.loop.body = rewrite(W, s->u.loop.body);
    W->depth--;
    if (s->u.loop.kind == TC_LOOP_PIPELINED && s->u.loop.num_stages >= 2 && W->P->nrestage < 60)
      return pipeline_loop(W->P, s, W->root, W->depth == 0 && !W->deep_assign);
    return s;
  case TC_ST_WHILE:
    W->depth++;
    s->u.while_.body = rewrite(W, s->u.while_.body);
    W->depth--;
    return s;
  case TC_ST_IF:
    W->depth++;
    s->u.if_.then_s = rewrite(W, s->u.if_.then_s);
    s->u.if_.else_s = rewrite(W, s->u.if_.else_s);
    W->depth--;
    return s;
  default: return s;
  }
}

static bool realloc_cb(void *ctx, tc_stmt *s) {
  tc_gpu_plan *P = ctx;
  if (s->kind == TC_ST_ALLOC)
    for (int i = 0; i < P->nrestage; i++)
      if (s->u.alloc.buf == P->restage_from[i]) s->u.alloc.buf = P->restage_to[i];
  return true;
}

bool tc_gpu_pipeline(tc_gpu_plan *P) {
  if (!P->desc->cp_async) return true;
  walk_ctx W = {P, P->k->body, 0, false};
  P->k->body = rewrite(&W, P->k->body);
  tc_visit_stmts(P->k->body, realloc_cb, P);
  return true;
}
