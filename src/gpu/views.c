/* views.c: a view of a register tile that splits its last dimension, read as the tile itself
 * (a step of tc_gpu_lower, before the operands are staged).
 *
 * DeepSeek V3.2's lightning indexer keeps block_N x (block_Q * heads) scores in a gemm's
 * accumulator s and names the same registers block_N x block_Q x heads with T.reshape, to weigh
 * each head and sum the heads of each query:
 *
 *     for n, q, h in T.Parallel(N, Q, H): s_reshaped[n, q, h] = f(s_reshaped[n, q, h], w[q, h])
 *     T.reduce_sum(s_reshaped, logits, dim=-1)
 *
 * A fragment's layout places elements of its own shape, so the view gets none. Here:
 *   - a T.Parallel nest over the view's whole shape that reads and writes it only at the nest's
 *     own indices becomes a nest over the tile's shape, its last two loops one (j): view
 *     element [.., q, h] is tile element [.., j] with q = j / H and h = j % H, so the tile
 *     drives the loop as in any T.Parallel over it;
 *   - a reduction of the whole view over its last dimension becomes a T.Parallel nest over the
 *     destination whose iterations fold the H elements of their group in a serial loop (the
 *     tile is read at elements its threads may not hold: lower.c's attempts then read it
 *     through a shared copy);
 *   - any other element access reads or writes the tile element of the same row-major offset.
 * A view used any other way (a tile operation on it) keeps its ALLOC, and the lowering refuses
 * it as before. */
#include "gpu/gpu_internal.h"

#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "ir/walk.h"

typedef struct view_map {
  tc_gpu_plan *P;
  tc_buffer *view, *base;
  int n;         /* the view's dimensions (the base has n - 1) */
  int64_t inner; /* the view's last extent: base column j is view [j / inner, j % inner] */
  tc_var *vars[TC_GL_MAXDIM], *j; /* while folding a nest: its loop variables, the new one */
  bool exact;    /* while checking a nest: every access of the view is at its loop variables */
  int uses;      /* references to the view outside its ALLOC */
} view_map;

static tc_expr *ci(tc_gpu_plan *P, int64_t v, tc_loc loc) { return tc_ir_int(P->a, v, tc_index_dtype(), loc); }
static int64_t int_or(const tc_expr *e, int64_t otherwise) {
  int64_t v;
  return tc_expr_const_int(e, &v) ? v : otherwise;
}

/* The base's indices for view indices idx (the last two folded into one column). */
static tc_expr **base_index(view_map *V, tc_expr *const *idx, tc_loc loc) {
  tc_gpu_plan *P = V->P;
  tc_expr **b = TC_NEW_ARRAY(P->a, tc_expr *, V->n - 1);
  for (int d = 0; d < V->n - 2; d++) b[d] = idx[d];
  b[V->n - 2] = tc_ir_binary(P->a, TC_OP_ADD, tc_ir_binary(P->a, TC_OP_MUL, idx[V->n - 2], ci(P, V->inner, loc), loc), idx[V->n - 1], loc);
  return b;
}

/* ---- element accesses anywhere ---- */
static tc_expr *element_expr(void *ctx, tc_expr *e) {
  view_map *V = ctx;
  if (e->op != TC_OP_LOAD || e->buf != V->view || e->nargs != V->n) return e;
  return tc_ir_load(V->P->a, V->base, V->n - 1, base_index(V, e->args, e->loc), e->loc);
}
/* A store to the view made a store to the base at idx (the base's indices). */
static void store_to_base(view_map *V, tc_stmt *s, tc_expr **idx) {
  s->u.store.idx = idx;
  s->u.store.nidx = V->n - 1;
  s->u.store.buf = V->base;
}
static bool element_stmt(void *ctx, tc_stmt *s) {
  view_map *V = ctx;
  if (s->kind == TC_ST_STORE && s->u.store.buf == V->view && s->u.store.nidx == V->n) store_to_base(V, s, base_index(V, s->u.store.idx, s->loc));
  return true;
}

/* ---- T.Parallel nests over the view ---- */
static bool at_vars(const view_map *V, tc_expr *const *idx, int n) {
  if (n != V->n) return false;
  for (int d = 0; d < n; d++)
    if (idx[d]->op != TC_OP_VAR || idx[d]->var != V->vars[d]) return false;
  return true;
}
static tc_expr *exact_expr(void *ctx, tc_expr *e) {
  view_map *V = ctx;
  if (e->op == TC_OP_LOAD && e->buf == V->view && !at_vars(V, e->args, e->nargs)) V->exact = false;
  return e;
}
/* the view's own slots in statements: stores at the nest's indices; no tile operation, atomic
 * or print on it */
static bool exact_stmt(void *ctx, tc_stmt *s) {
  view_map *V = ctx;
  if (s->kind == TC_ST_STORE && s->u.store.buf == V->view && !at_vars(V, s->u.store.idx, s->u.store.nidx)) V->exact = false;
  if ((s->kind == TC_ST_ATOMIC_ADD && (s->u.atomic.buf == V->view || s->u.atomic.prev == V->view)) ||
      (s->kind == TC_ST_PRINT && s->u.print.buf == V->view))
    V->exact = false;
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(s, regs);
  for (int i = 0; i < nr; i++)
    if (regs[i].region->buf == V->view) V->exact = false;
  return true;
}

/* view[vars] -> base[vars[:-2], j] (loads and stores); then q, h -> j / inner, j % inner */
static tc_expr **folded_index(view_map *V, tc_expr *const *idx, tc_loc loc) {
  tc_expr **b = TC_NEW_ARRAY(V->P->a, tc_expr *, V->n - 1);
  for (int d = 0; d < V->n - 2; d++) b[d] = idx[d];
  b[V->n - 2] = tc_ir_var_ref(V->P->a, V->j, loc);
  return b;
}
static tc_expr *fold_load(void *ctx, tc_expr *e) {
  view_map *V = ctx;
  if (e->op != TC_OP_LOAD || e->buf != V->view || !at_vars(V, e->args, e->nargs)) return e;
  return tc_ir_load(V->P->a, V->base, V->n - 1, folded_index(V, e->args, e->loc), e->loc);
}
static bool fold_store(void *ctx, tc_stmt *s) {
  view_map *V = ctx;
  if (s->kind == TC_ST_STORE && s->u.store.buf == V->view && at_vars(V, s->u.store.idx, s->u.store.nidx))
    store_to_base(V, s, folded_index(V, s->u.store.idx, s->loc));
  return true;
}
static tc_expr *fold_vars(void *ctx, tc_expr *e) {
  view_map *V = ctx;
  tc_var *q = V->vars[V->n - 2], *h = V->vars[V->n - 1];
  if (e->op != TC_OP_VAR || (e->var != q && e->var != h)) return e;
  return tc_ir_binary(V->P->a, e->var == q ? TC_OP_FLOORDIV : TC_OP_FLOORMOD, tc_ir_var_ref(V->P->a, V->j, e->loc),
                      ci(V->P, V->inner, e->loc), e->loc);
}

/* The loops of a T.Parallel nest of depth n over exactly the view's shape (from 0), or false. */
static bool nest_over(view_map *V, tc_stmt *s, tc_stmt **loops) {
  tc_stmt *c = s;
  for (int d = 0; d < V->n; d++) {
    while (d > 0 && c && c->kind == TC_ST_SEQ && c->u.seq.n == 1) c = c->u.seq.items[0];
    int64_t mn, ext, want;
    if (!c || c->kind != TC_ST_FOR || c->u.loop.kind != TC_LOOP_PARALLEL || !tc_expr_const_int(c->u.loop.min, &mn) || mn ||
        !tc_expr_const_int(c->u.loop.extent, &ext) || !tc_expr_const_int(V->view->shape[d], &want) || ext != want)
      return false;
    loops[d] = c;
    V->vars[d] = c->u.loop.var;
    c = c->u.loop.body;
  }
  return true;
}

/* A T.Parallel nest over the view's whole shape that touches it only at its own indices, folded
 * into a nest over the base's (true); anything else is left to the element rewrite. */
static bool fold_nest(view_map *V, tc_stmt *s) {
  tc_gpu_plan *P = V->P;
  tc_stmt *loops[TC_GL_MAXDIM];
  if (V->n > TC_GL_MAXDIM || !nest_over(V, s, loops)) return false;
  tc_stmt *body = loops[V->n - 1]->u.loop.body;
  V->exact = true;
  tc_rewrite_stmt_exprs(body, exact_expr, V);
  tc_visit_stmts(body, exact_stmt, V);
  if (!V->exact) return false;
  tc_stmt *outer = loops[V->n - 2]; /* its loop becomes the one over j */
  V->j = tc_ir_new_var(P->a, P->k, "j", tc_index_dtype(), TC_VAR_LOOP, outer->loc);
  tc_visit_stmts(body, fold_store, V);
  tc_rewrite_stmt_exprs(body, fold_load, V);
  tc_rewrite_stmt_exprs(body, fold_vars, V);
  outer->u.loop.var = V->j;
  outer->u.loop.extent = ci(P, V->inner * int_or(V->view->shape[V->n - 2], 0), outer->loc);
  outer->u.loop.body = body;
  return true;
}

/* ---- reductions of the view over its last dimension ---- */
static tc_expr *reduce_init(tc_gpu_plan *P, tc_reduce_kind op, tc_dtype d, tc_loc loc) {
  double v = op == TC_RED_MAX || op == TC_RED_ABSMAX ? -INFINITY : op == TC_RED_MIN ? INFINITY : 0.0;
  return tc_dtype_is_float(d) ? tc_ir_float(P->a, v, d, loc) : tc_ir_int(P->a, (int64_t)(isinf(v) ? 0 : v), d, loc);
}

/* T.reduce_*(view, dst, dim=-1) -> for r in T.Parallel(dst's shape): [dst[r] = init;]
 * for c in range(inner): dst[r] = op(dst[r], base[r[:-1], r[-1] * inner + c]) */
static bool fold_reduce(view_map *V, tc_stmt *s) {
  tc_gpu_plan *P = V->P;
  const tc_region *src = &s->u.reduce.src, *dst = &s->u.reduce.dst;
  tc_reduce_kind op = s->u.reduce.op;
  if (src->buf != V->view || !tc_gpu_region_whole(src) || s->u.reduce.dim != V->n - 1 || !tc_gpu_region_whole(dst) || dst->buf->ndim != V->n - 1 ||
      !tc_scope_in_registers(dst->buf->scope))
    return false;
  for (int d = 0; d < V->n - 1; d++)
    if (int_or(dst->buf->shape[d], -1) != int_or(V->view->shape[d], -2)) return false;
  tc_loc loc = s->loc;
  tc_buffer *out = dst->buf;
  tc_var *r[TC_GL_MAXDIM];
  tc_expr **at = TC_NEW_ARRAY(P->a, tc_expr *, V->n - 1);
  for (int d = 0; d < V->n - 1; d++) {
    r[d] = tc_ir_new_var(P->a, P->k, "r", tc_index_dtype(), TC_VAR_LOOP, loc);
    at[d] = tc_ir_var_ref(P->a, r[d], loc);
  }
  tc_var *c = tc_ir_new_var(P->a, P->k, "c", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_expr *elem[TC_GL_MAXDIM]; /* the view's element [r, c] */
  for (int d = 0; d < V->n - 1; d++) elem[d] = at[d];
  elem[V->n - 1] = tc_ir_var_ref(P->a, c, loc);
  tc_expr *x = tc_ir_load(P->a, V->base, V->n - 1, base_index(V, elem, loc), loc);
  if (op == TC_RED_ABSSUM || op == TC_RED_ABSMAX) x = tc_ir_unary(P->a, TC_OP_ABS, x, loc);
  if (x->dtype.code != out->dtype.code) x = tc_ir_cast(P->a, out->dtype, x, loc);
  tc_expr *old = tc_ir_load(P->a, out, V->n - 1, at, loc);
  tc_expr *acc = tc_ir_binary(P->a, op == TC_RED_MAX || op == TC_RED_ABSMAX ? TC_OP_MAX : op == TC_RED_MIN ? TC_OP_MIN : TC_OP_ADD, old, x, loc);
  tc_stmt *step = tc_ir_stmt(P->a, TC_ST_STORE, loc);
  step->u.store.buf = out, step->u.store.nidx = V->n - 1, step->u.store.idx = at, step->u.store.value = acc;
  tc_stmt *fold = tc_ir_stmt(P->a, TC_ST_FOR, loc);
  fold->u.loop.var = c, fold->u.loop.kind = TC_LOOP_SERIAL, fold->u.loop.min = ci(P, 0, loc), fold->u.loop.extent = ci(P, V->inner, loc);
  fold->u.loop.body = step;
  tc_stmt *body = fold;
  if (s->u.reduce.clear) {
    tc_stmt *init = tc_ir_stmt(P->a, TC_ST_STORE, loc);
    init->u.store.buf = out, init->u.store.nidx = V->n - 1, init->u.store.idx = at;
    init->u.store.value = reduce_init(P, op, out->dtype, loc);
    tc_stmt *two[2] = {init, fold};
    body = tc_ir_seq(P->a, 2, two, loc);
  }
  for (int d = V->n - 2; d >= 0; d--) {
    tc_stmt *l = tc_ir_stmt(P->a, TC_ST_FOR, loc);
    l->u.loop.var = r[d], l->u.loop.kind = TC_LOOP_PARALLEL, l->u.loop.min = ci(P, 0, loc), l->u.loop.extent = dst->buf->shape[d];
    l->u.loop.body = body;
    body = l;
  }
  *s = *body;
  return true;
}

/* ---- the pass ---- */
static bool rewrite_cb(void *ctx, tc_stmt *s) {
  view_map *V = ctx;
  if (s->kind == TC_ST_FOR && s->u.loop.kind == TC_LOOP_PARALLEL && fold_nest(V, s)) return false;
  if (s->kind == TC_ST_REDUCE && fold_reduce(V, s)) return false;
  return true;
}
static void count_slot(void *ctx, tc_buffer **slot, const tc_stmt *where) {
  view_map *V = ctx;
  if (*slot == V->view && where->kind != TC_ST_ALLOC) V->uses++;
}
static bool drop_alloc(void *ctx, tc_stmt *s) {
  view_map *V = ctx;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf == V->view) *s = *tc_ir_seq(V->P->a, 0, NULL, s->loc);
  return true;
}

/* A view splits the base's last dimension in two: view shape = base shape[:-1] + (a, b),
 * a * b = base shape[-1], all constant. */
static bool splits_last(const tc_buffer *v, const tc_buffer *b, int64_t *inner) {
  if (v->ndim != b->ndim + 1 || v->ndim < 2 || v->ndim > TC_GL_MAXDIM) return false;
  for (int d = 0; d < b->ndim - 1; d++)
    if (int_or(v->shape[d], -1) < 0 || int_or(v->shape[d], -1) != int_or(b->shape[d], -2)) return false;
  int64_t x = int_or(v->shape[v->ndim - 2], -1), y = int_or(v->shape[v->ndim - 1], -1);
  if (x <= 0 || y <= 0 || x * y != int_or(b->shape[b->ndim - 1], -1)) return false;
  *inner = y;
  return true;
}

typedef struct view_list {
  tc_buffer *v[16];
  int n;
} view_list;
static bool find_views(void *ctx, tc_stmt *s) {
  view_list *L = ctx;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->view_of && tc_scope_in_registers(s->u.alloc.buf->scope) && L->n < 16)
    L->v[L->n++] = s->u.alloc.buf;
  return true;
}

void tc_gpu_resolve_views(tc_gpu_plan *P) {
  view_list L = {{0}, 0};
  tc_visit_stmts(P->k->body, find_views, &L);
  for (int i = 0; i < L.n; i++) {
    tc_buffer *b = L.v[i]->view_of;
    view_map V = {.P = P, .view = L.v[i], .base = b, .n = L.v[i]->ndim};
    if (!tc_scope_in_registers(b->scope) || b->view_of || !splits_last(V.view, b, &V.inner)) continue;
    tc_visit_stmts(P->k->body, rewrite_cb, &V);
    tc_rewrite_stmt_exprs(P->k->body, element_expr, &V);
    tc_visit_stmts(P->k->body, element_stmt, &V);
    tc_visit_buffer_slots(P->k->body, count_slot, &V);
    if (V.uses) continue; /* a tile operation on it: the lowering refuses the view */
    tc_visit_stmts(P->k->body, drop_alloc, &V);
    if (P->notes)
      tc_sb_printf(P->notes, "'%s' (T.reshape of '%s') is read as '%s' itself: its T.Parallel loops run over '%s', its "
                   "reductions fold each group of %lld\n", V.view->name, b->name, b->name, b->name, (long long)V.inner);
  }
}
