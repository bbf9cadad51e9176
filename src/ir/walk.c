#include "ir/walk.h"

#include "analysis/analysis.h"

tc_expr *tc_rewrite_expr(tc_expr *e, tc_expr_rewrite_fn fn, void *ctx) {
  if (!e) return NULL;
  for (int i = 0; i < e->nargs; i++) e->args[i] = tc_rewrite_expr(e->args[i], fn, ctx);
  return fn(ctx, e);
}

void tc_visit_own_expr_slots(tc_stmt *s, tc_expr_slot_fn fn, void *ctx) {
  if (!s) return;
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(s, regs);
  for (int i = 0; i < nr; i++)
    for (int d = 0; regs[i].region->buf && d < regs[i].region->ndim; d++) fn(ctx, &regs[i].region->r[d].start);
  switch (s->kind) {
  case TC_ST_ALLOC:
    if (s->u.alloc.buf->init) fn(ctx, &s->u.alloc.buf->init);
    break;
  case TC_ST_FOR:
    fn(ctx, &s->u.loop.min);
    fn(ctx, &s->u.loop.extent);
    break;
  case TC_ST_WHILE: fn(ctx, &s->u.while_.cond); break;
  case TC_ST_IF: fn(ctx, &s->u.if_.cond); break;
  case TC_ST_STORE:
    for (int i = 0; i < s->u.store.nidx; i++) fn(ctx, &s->u.store.idx[i]);
    fn(ctx, &s->u.store.value);
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN: fn(ctx, &s->u.let.value); break;
  case TC_ST_FILL: fn(ctx, &s->u.fill.value); break;
  case TC_ST_ATOMIC_ADD:
    for (int i = 0; i < s->u.atomic.nidx; i++) fn(ctx, &s->u.atomic.idx[i]);
    fn(ctx, &s->u.atomic.value);
    break;
  case TC_ST_PRINT: fn(ctx, &s->u.print.value); break;
  case TC_ST_ASSERT: fn(ctx, &s->u.assert_.cond); break;
  case TC_ST_EVALUATE: fn(ctx, &s->u.evaluate.value); break;
  case TC_ST_INTRINSIC:
    for (int i = 0; i < s->u.intrinsic.nargs; i++) fn(ctx, &s->u.intrinsic.args[i]);
    break;
  default: break;
  }
}

typedef struct rewrite_ctx {
  tc_expr_rewrite_fn fn;
  void *ctx;
} rewrite_ctx;

static void rewrite_slot(void *ctx, tc_expr **slot) {
  const rewrite_ctx *r = ctx;
  if (*slot) *slot = tc_rewrite_expr(*slot, r->fn, r->ctx);
}

void tc_rewrite_stmt_exprs(tc_stmt *s, tc_expr_rewrite_fn fn, void *ctx) {
  if (!s) return;
  rewrite_ctx r = {fn, ctx};
  tc_visit_own_expr_slots(s, rewrite_slot, &r); /* the statement's own slots, then the statements in it */
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tc_rewrite_stmt_exprs(s->u.seq.items[i], fn, ctx);
    break;
  case TC_ST_FOR: tc_rewrite_stmt_exprs(s->u.loop.body, fn, ctx); break;
  case TC_ST_WHILE: tc_rewrite_stmt_exprs(s->u.while_.body, fn, ctx); break;
  case TC_ST_IF:
    tc_rewrite_stmt_exprs(s->u.if_.then_s, fn, ctx);
    tc_rewrite_stmt_exprs(s->u.if_.else_s, fn, ctx);
    break;
  default: break;
  }
}

void tc_visit_stmts(tc_stmt *s, tc_stmt_visit_fn fn, void *ctx) {
  if (!s || !fn(ctx, s)) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tc_visit_stmts(s->u.seq.items[i], fn, ctx);
    break;
  case TC_ST_FOR:
    tc_visit_stmts(s->u.loop.body, fn, ctx);
    break;
  case TC_ST_IF:
    tc_visit_stmts(s->u.if_.then_s, fn, ctx);
    tc_visit_stmts(s->u.if_.else_s, fn, ctx);
    break;
  case TC_ST_WHILE:
    tc_visit_stmts(s->u.while_.body, fn, ctx);
    break;
  default:
    break;
  }
}

void tc_stmt_written_buffers(tc_stmt *s, tc_buffer_fn fn, void *ctx) {
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(s, regs);
  for (int i = 0; i < nr; i++)
    if (regs[i].write) fn(ctx, regs[i].region->buf, s);
  if (s->kind == TC_ST_STORE) fn(ctx, s->u.store.buf, s);
  if (s->kind == TC_ST_ATOMIC_ADD && s->u.atomic.buf) fn(ctx, s->u.atomic.buf, s);
  if (s->kind == TC_ST_ATOMIC_ADD && s->u.atomic.prev) fn(ctx, s->u.atomic.prev, s);
}

typedef struct slot_ctx {
  tc_buffer_slot_fn fn;
  void *ctx;
  const tc_stmt *where;
} slot_ctx;

static tc_expr *slot_expr_cb(void *ctx, tc_expr *e) {
  slot_ctx *S = ctx;
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && e->buf) S->fn(S->ctx, &e->buf, S->where);
  return e;
}

static bool slot_stmt_cb(void *ctx, tc_stmt *s) {
  slot_ctx *S = ctx;
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(s, regs);
  for (int i = 0; i < nr; i++)
    if (regs[i].region->buf) S->fn(S->ctx, &regs[i].region->buf, s);
  tc_buffer **own[2] = {NULL, NULL};
  switch (s->kind) {
  case TC_ST_ALLOC: own[0] = &s->u.alloc.buf; break;
  case TC_ST_STORE: own[0] = &s->u.store.buf; break;
  case TC_ST_ATOMIC_ADD: own[0] = &s->u.atomic.buf, own[1] = &s->u.atomic.prev; break;
  case TC_ST_PRINT: own[0] = &s->u.print.buf; break;
  default: break;
  }
  for (int i = 0; i < 2; i++)
    if (own[i] && *own[i]) S->fn(S->ctx, own[i], s);
  return true;
}

void tc_visit_buffer_slots(tc_stmt *body, tc_buffer_slot_fn fn, void *ctx) {
  slot_ctx S = {fn, ctx, body};
  tc_rewrite_stmt_exprs(body, slot_expr_cb, &S); /* recurses into nested statements itself */
  tc_visit_stmts(body, slot_stmt_cb, &S);
}

typedef struct replace_ctx {
  tc_buffer *const *to;
  int n;
} replace_ctx;

static void replace_slot(void *ctx, tc_buffer **b, const tc_stmt *where) {
  const replace_ctx *R = ctx;
  (void)where;
  if ((*b)->id >= 0 && (*b)->id < R->n && R->to[(*b)->id]) *b = R->to[(*b)->id];
}

void tc_replace_buffers(tc_stmt *body, tc_buffer *const *to, int nbufs) {
  replace_ctx R = {to, nbufs};
  tc_visit_buffer_slots(body, replace_slot, &R);
}
