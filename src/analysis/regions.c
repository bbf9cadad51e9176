/* regions.c: the buffer regions, element accesses and variables a statement reads and writes.
 * The one per-statement switch over operands; walkers that only need "what does this statement
 * touch" use these instead of repeating it. */
#include "analysis/analysis.h"

int tc_stmt_regions(const tc_stmt *s, tc_stmt_region out[TC_MAX_STMT_REGIONS]) {
  tc_stmt *m = (tc_stmt *)s; /* regions are handed out mutable for rewriting walkers */
  switch (s->kind) {
  case TC_ST_COPY:
    out[0] = (tc_stmt_region){&m->u.copy.src, true, false};
    out[1] = (tc_stmt_region){&m->u.copy.dst, false, true};
    return 2;
  case TC_ST_GEMM:
    out[0] = (tc_stmt_region){&m->u.gemm.a, true, false};
    out[1] = (tc_stmt_region){&m->u.gemm.b, true, false};
    out[2] = (tc_stmt_region){&m->u.gemm.c, true, true};
    return 3;
  case TC_ST_FILL: out[0] = (tc_stmt_region){&m->u.fill.dst, false, true}; return 1;
  case TC_ST_REDUCE:
    out[0] = (tc_stmt_region){&m->u.reduce.src, true, false};
    out[1] = (tc_stmt_region){&m->u.reduce.dst, !s->u.reduce.clear, true};
    return 2;
  case TC_ST_CUMSUM:
    out[0] = (tc_stmt_region){&m->u.cumsum.src, true, false};
    out[1] = (tc_stmt_region){&m->u.cumsum.dst, false, true};
    return 2;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) return 0; /* element form */
    out[0] = (tc_stmt_region){&m->u.atomic.dst, true, true};
    out[1] = (tc_stmt_region){&m->u.atomic.src, true, false};
    return 2;
  default: return 0;
  }
}

void tc_expr_accesses(const tc_access_fns *f, const tc_expr *e) {
  if (!e) return;
  if (e->op == TC_OP_VAR && e->var && f->var) f->var(f->ctx, e->var, false);
  if (e->op == TC_OP_LOAD && e->buf && f->buf) f->buf(f->ctx, e->buf, false);
  for (int i = 0; i < e->nargs && e->args; i++) tc_expr_accesses(f, e->args[i]);
}

static void exprs(const tc_access_fns *f, tc_expr *const *v, int n) {
  for (int i = 0; i < n && v; i++) tc_expr_accesses(f, v[i]);
}

static void buf(const tc_access_fns *f, const tc_buffer *b, bool read, bool write) {
  if (!b || !f->buf) return;
  if (read) f->buf(f->ctx, b, false);
  if (write) f->buf(f->ctx, b, true);
}

void tc_stmt_accesses(const tc_access_fns *f, const tc_stmt *s, bool recurse) {
  if (!s) return;
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(s, regs);
  for (int i = 0; i < nr; i++) {
    const tc_region *r = regs[i].region;
    if (!r->buf) continue;
    for (int j = 0; j < r->ndim && r->r; j++) tc_expr_accesses(f, r->r[j].start);
    buf(f, r->buf, regs[i].read, regs[i].write);
  }
  switch (s->kind) {
  case TC_ST_SEQ:
    if (recurse)
      for (int i = 0; i < s->u.seq.n && s->u.seq.items; i++) tc_stmt_accesses(f, s->u.seq.items[i], true);
    break;
  case TC_ST_ALLOC:
    if (s->u.alloc.buf && s->u.alloc.buf->init) {
      tc_expr_accesses(f, s->u.alloc.buf->init);
      buf(f, s->u.alloc.buf, false, true);
    }
    break;
  case TC_ST_FOR:
    tc_expr_accesses(f, s->u.loop.min);
    tc_expr_accesses(f, s->u.loop.extent);
    if (recurse) tc_stmt_accesses(f, s->u.loop.body, true);
    break;
  case TC_ST_WHILE:
    tc_expr_accesses(f, s->u.while_.cond);
    if (recurse) tc_stmt_accesses(f, s->u.while_.body, true);
    break;
  case TC_ST_IF:
    tc_expr_accesses(f, s->u.if_.cond);
    if (recurse) {
      tc_stmt_accesses(f, s->u.if_.then_s, true);
      tc_stmt_accesses(f, s->u.if_.else_s, true);
    }
    break;
  case TC_ST_STORE:
    exprs(f, s->u.store.idx, s->u.store.nidx);
    tc_expr_accesses(f, s->u.store.value);
    buf(f, s->u.store.buf, false, true);
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    tc_expr_accesses(f, s->u.let.value);
    if (f->var && s->u.let.var) f->var(f->ctx, s->u.let.var, true);
    break;
  case TC_ST_FILL: tc_expr_accesses(f, s->u.fill.value); break;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) {
      exprs(f, s->u.atomic.idx, s->u.atomic.nidx);
      tc_expr_accesses(f, s->u.atomic.value);
      buf(f, s->u.atomic.buf, true, true);
      buf(f, s->u.atomic.prev, false, true);
    }
    break;
  case TC_ST_PRINT:
    tc_expr_accesses(f, s->u.print.value);
    buf(f, s->u.print.buf, true, false);
    break;
  case TC_ST_ASSERT: tc_expr_accesses(f, s->u.assert_.cond); break;
  case TC_ST_EVALUATE: tc_expr_accesses(f, s->u.evaluate.value); break;
  default: break;
  }
}

typedef struct max_ctx {
  int max;
} max_ctx;
static void max_var(void *c, const tc_var *v, bool write) {
  (void)write;
  if (v->id > ((max_ctx *)c)->max) ((max_ctx *)c)->max = v->id;
}
static void max_buf(void *c, const tc_buffer *b, bool write) {
  (void)write;
  if (b->id > ((max_ctx *)c)->max) ((max_ctx *)c)->max = b->id;
}
/* Declarations the access walk does not report: allocations without init, loop variables. */
static void max_decls(max_ctx *m, const tc_stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case TC_ST_ALLOC:
    if (s->u.alloc.buf && s->u.alloc.buf->id > m->max) m->max = s->u.alloc.buf->id;
    break;
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.items; i++) max_decls(m, s->u.seq.items[i]);
    break;
  case TC_ST_FOR:
    if (s->u.loop.var && s->u.loop.var->id > m->max) m->max = s->u.loop.var->id;
    max_decls(m, s->u.loop.body);
    break;
  case TC_ST_IF:
    max_decls(m, s->u.if_.then_s);
    max_decls(m, s->u.if_.else_s);
    break;
  case TC_ST_WHILE: max_decls(m, s->u.while_.body); break;
  default: break;
  }
}

int tc_kernel_max_id(const tc_kernel_ir *k) {
  max_ctx m = {k->next_id - 1};
  tc_access_fns f = {max_var, max_buf, &m};
  tc_stmt_accesses(&f, k->body, true);
  max_decls(&m, k->body);
  return m.max;
}
