/* check_bounds.c: tiles in on-chip memory (shared, fragment, local, var) have no bounds
 * checks at run time, so an access that is provably outside one is a program error here:
 * constant element indices, and regions whose constant start plus extent overrun a
 * dimension. Global tensors are exempt: their out-of-bounds reads give zero by definition. */
#include <inttypes.h>

#include "ir/walk.h"
#include "pass/pass.h"

typedef struct bounds_ctx {
  tilec_error *err;
  bool ok;
} bounds_ctx;

static void check_index(bounds_ctx *c, tc_buffer *b, int nidx, tc_expr **idx, tc_loc loc) {
  if (!c->ok || b->scope == TC_SCOPE_GLOBAL) return;
  for (int d = 0; d < nidx && d < b->ndim; d++) {
    int64_t i, n;
    if (tc_expr_const_int(idx[d], &i) && tc_expr_const_int(b->shape[d], &n) && (i < 0 || i >= n)) {
      tc_error_at(c->err, TILEC_ERROR_PROGRAM, loc,
                  "index %" PRId64 " is out of bounds for dimension %d of '%s' (size %" PRId64 ")", i, d,
                  b->name, n);
      c->ok = false;
      return;
    }
  }
}

static void check_region(bounds_ctx *c, const tc_region *r, tc_loc loc) {
  if (!c->ok || !r->buf || r->buf->scope == TC_SCOPE_GLOBAL) return;
  for (int d = 0; d < r->ndim; d++) {
    int64_t s, n;
    if (!tc_expr_const_int(r->buf->shape[d], &n)) continue;
    if (r->r[d].extent > n || (tc_expr_const_int(r->r[d].start, &s) && (s < 0 || s + r->r[d].extent > n))) {
      tc_error_at(c->err, TILEC_ERROR_PROGRAM, loc,
                  "region of extent %" PRId64 " exceeds dimension %d of '%s' (size %" PRId64 ")",
                  r->r[d].extent, d, r->buf->name, n);
      c->ok = false;
      return;
    }
  }
}

static tc_expr *check_loads(void *ctx, tc_expr *e) {
  if (e->op == TC_OP_LOAD) check_index(ctx, e->buf, e->nargs, e->args, e->loc);
  return e;
}

static bool visit(void *ctx, tc_stmt *s) {
  bounds_ctx *c = ctx;
  switch (s->kind) {
  case TC_ST_STORE: check_index(c, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->loc); break;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) check_index(c, s->u.atomic.buf, s->u.atomic.nidx, s->u.atomic.idx, s->loc);
    check_region(c, &s->u.atomic.dst, s->loc);
    check_region(c, &s->u.atomic.src, s->loc);
    break;
  case TC_ST_COPY: check_region(c, &s->u.copy.src, s->loc); check_region(c, &s->u.copy.dst, s->loc); break;
  case TC_ST_GEMM:
    check_region(c, &s->u.gemm.a, s->loc);
    check_region(c, &s->u.gemm.b, s->loc);
    check_region(c, &s->u.gemm.c, s->loc);
    break;
  case TC_ST_FILL: check_region(c, &s->u.fill.dst, s->loc); break;
  case TC_ST_REDUCE: check_region(c, &s->u.reduce.src, s->loc); check_region(c, &s->u.reduce.dst, s->loc); break;
  case TC_ST_CUMSUM: check_region(c, &s->u.cumsum.src, s->loc); check_region(c, &s->u.cumsum.dst, s->loc); break;
  default: break;
  }
  return c->ok;
}

bool tc_pass_check_bounds(tc_arena *arena, tc_kernel_ir *k, tilec_error *err) {
  (void)arena;
  bounds_ctx c = {err, true};
  tc_visit_stmts(k->body, visit, &c);
  /* loads: a separate walk over every expression slot (it never rewrites) */
  if (c.ok) tc_rewrite_stmt_exprs(k->body, check_loads, &c);
  return c.ok;
}
