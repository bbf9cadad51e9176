/* order.c: the output dimensions along which a kernel places values in an order the schedule
 * decides.
 *
 * T.atomic_add(x, v, return_prev=True) gives each thread the value x held before its own
 * addition. Programs use it to hand out slots: a thread that finds a candidate takes the next
 * free position of a list (a top-k selection's `pos = atomic_add(count, 1, return_prev=True);
 * index[row, pos] = i`). Which thread gets which slot depends on the order threads reach the
 * atomic, which a GPU does not fix and in which the reference interpreter (threads in lockstep)
 * and the cpu target (each thread's run between barriers in turn) differ. The set of values a
 * row receives does not depend on it, so verification compares such dimensions as multisets
 * (compare.c sorts the values along them first).
 *
 * Flow-insensitive, to a fixpoint: an atomic's `prev` cell is schedule-dependent, and so is
 * whatever a statement writes from a schedule-dependent read (a variable, a per-thread cell, a
 * buffer). A store or an element atomic into a parameter whose index in dimension d reads a
 * schedule-dependent value marks d. Control flow carries no taint: which threads take a branch does not depend on the
 * order they arrive in unless a value read in it does, and that value is tainted itself. */
#include <stdlib.h>

#include "analysis/analysis.h"
#include "ir/walk.h"

typedef struct taint {
  int nids;
  bool *buf, *var; /* by id: holds schedule-dependent values */
  bool read;       /* the statement being visited reads one */
  const tc_buffer *wbuf[16];
  const tc_var *wvar[16];
  int nwbuf, nwvar;
  bool changed;
} taint;

static void on_var(void *ctx, const tc_var *v, bool write) {
  taint *t = ctx;
  if (!v || v->id < 0 || v->id >= t->nids) return;
  if (!write) t->read = t->read || t->var[v->id];
  else if (t->nwvar < 16) t->wvar[t->nwvar++] = v;
}

static void on_buf(void *ctx, const tc_buffer *b, bool write) {
  taint *t = ctx;
  if (!b || b->id < 0 || b->id >= t->nids) return;
  if (!write) t->read = t->read || t->buf[b->id];
  else if (t->nwbuf < 16) t->wbuf[t->nwbuf++] = b;
}

static void mark(taint *t, bool *slot) {
  if (!*slot) *slot = true, t->changed = true;
}

static bool stmt_cb(void *ctx, tc_stmt *s) {
  taint *t = ctx;
  switch (s->kind) {
  case TC_ST_SEQ:
  case TC_ST_FOR:
  case TC_ST_IF:
  case TC_ST_WHILE: return true;
  case TC_ST_ATOMIC_ADD: {
    const tc_buffer *prev = s->u.atomic.prev;
    if (prev && prev->id >= 0 && prev->id < t->nids) mark(t, &t->buf[prev->id]);
    break;
  }
  case TC_ST_STORE:
  case TC_ST_LET:
  case TC_ST_ASSIGN:
  case TC_ST_COPY:
  case TC_ST_GEMM:
  case TC_ST_FILL:
  case TC_ST_REDUCE:
  case TC_ST_CUMSUM:
  case TC_ST_INTRINSIC: break;
  default: return false;
  }
  t->read = false;
  t->nwbuf = t->nwvar = 0;
  tc_access_fns fns = {on_var, on_buf, t};
  tc_stmt_accesses(&fns, s, false);
  if (!t->read) return false;
  for (int i = 0; i < t->nwbuf; i++) mark(t, &t->buf[t->wbuf[i]->id]);
  for (int i = 0; i < t->nwvar; i++) mark(t, &t->var[t->wvar[i]->id]);
  return false;
}

typedef struct index_read {
  const taint *t;
  bool read;
} index_read;

static void idx_var(void *ctx, const tc_var *v, bool write) {
  index_read *r = ctx;
  if (!write && v && v->id >= 0 && v->id < r->t->nids) r->read = r->read || r->t->var[v->id];
}

static void idx_buf(void *ctx, const tc_buffer *b, bool write) {
  index_read *r = ctx;
  if (!write && b && b->id >= 0 && b->id < r->t->nids) r->read = r->read || r->t->buf[b->id];
}

typedef struct dims_ctx {
  const taint *t;
  const tc_kernel_ir *k;
  unsigned *out;
} dims_ctx;

/* stores and element atomics: the buffer and the index of each dimension they write */
static bool store_cb(void *ctx, tc_stmt *s) {
  dims_ctx *c = ctx;
  const tc_buffer *b = s->kind == TC_ST_STORE ? s->u.store.buf : s->kind == TC_ST_ATOMIC_ADD ? s->u.atomic.buf : NULL;
  if (!b) return true;
  int nidx = s->kind == TC_ST_STORE ? s->u.store.nidx : s->u.atomic.nidx;
  tc_expr *const *idx = s->kind == TC_ST_STORE ? s->u.store.idx : s->u.atomic.idx;
  for (int p = 0; p < c->k->nparams; p++) {
    if (c->k->params[p].buf != b) continue;
    for (int d = 0; d < nidx && d < 32; d++) {
      index_read r = {c->t, false};
      tc_expr_accesses(&(tc_access_fns){idx_var, idx_buf, &r}, idx[d]);
      if (r.read) c->out[p] |= 1u << d;
    }
  }
  return true;
}

int tc_kernel_unordered_dims(const tc_kernel_ir *k, unsigned *out) {
  for (int i = 0; i < k->nparams; i++) out[i] = 0;
  if (!k->body) return 0;
  taint t = {0};
  t.nids = tc_kernel_max_id(k) + 1;
  bool *all = calloc(2 * (size_t)t.nids, sizeof *all);
  if (!all) return -1;
  t.buf = all, t.var = all + t.nids;
  /* each round only adds marks, of which there are at most 2 * nids: it ends */
  do {
    t.changed = false;
    tc_visit_stmts(k->body, stmt_cb, &t);
  } while (t.changed);
  dims_ctx c = {&t, k, out};
  tc_visit_stmts(k->body, store_cb, &c);
  free(all);
  return 0;
}
