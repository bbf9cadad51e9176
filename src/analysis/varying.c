/* varying.c: which values may differ between the threads of a block (rule in analysis.h). */
#include <stdlib.h>

#include "analysis/analysis.h"

static bool id_ok(const tc_varying *v, int id) { return id >= 0 && id < v->nids; }

bool tc_varying_var(const tc_varying *v, const tc_var *var) {
  if (!var) return false;
  return var->kind == TC_VAR_THREAD_IDX || (id_ok(v, var->id) && v->by_id[var->id]);
}

bool tc_varying_buf(const tc_varying *v, const tc_buffer *b) {
  b = tc_buffer_storage(b); /* a view varies with the storage it names */
  return b && id_ok(v, b->id) && v->by_id[b->id];
}

bool tc_varying_expr(const tc_varying *v, const tc_expr *e) {
  if (!e) return false;
  if (e->op == TC_OP_VAR && tc_varying_var(v, e->var)) return true;
  if (e->op == TC_OP_LOAD && tc_varying_buf(v, e->buf)) return true;
  for (int i = 0; i < e->nargs && e->args; i++)
    if (tc_varying_expr(v, e->args[i])) return true;
  return false;
}

bool tc_varying_region(const tc_varying *v, const tc_region *r) {
  if (!r->buf) return false;
  if (tc_varying_buf(v, r->buf)) return true;
  for (int i = 0; i < r->ndim && r->r; i++)
    if (tc_varying_expr(v, r->r[i].start)) return true;
  return false;
}

static bool mark(tc_varying *v, int id) {
  if (!id_ok(v, id) || v->by_id[id]) return false;
  v->by_id[id] = true;
  return true;
}

/* One sweep; true when something new became varying. ctl: under varying control flow. */
static bool sweep(tc_varying *v, const tc_stmt *s, bool ctl) {
  if (!s) return false;
  bool ch = false;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.items; i++) ch |= sweep(v, s->u.seq.items[i], ctl);
    return ch;
  case TC_ST_FOR: {
    bool dep = ctl || tc_varying_expr(v, s->u.loop.min) || tc_varying_expr(v, s->u.loop.extent) ||
               s->u.loop.kind == TC_LOOP_THREAD_BINDING; /* its variable is the thread index */
    if (dep && s->u.loop.var) ch |= mark(v, s->u.loop.var->id);
    return ch | sweep(v, s->u.loop.body, dep);
  }
  case TC_ST_IF: {
    bool dep = ctl || tc_varying_expr(v, s->u.if_.cond);
    return sweep(v, s->u.if_.then_s, dep) | sweep(v, s->u.if_.else_s, dep);
  }
  case TC_ST_WHILE: return sweep(v, s->u.while_.body, ctl || tc_varying_expr(v, s->u.while_.cond));
  case TC_ST_STORE:
  case TC_ST_ATOMIC_ADD: {
    bool atomic = s->kind == TC_ST_ATOMIC_ADD;
    const tc_buffer *b = atomic ? s->u.atomic.buf : s->u.store.buf;
    if (!b) break; /* tile atomic_add: below */
    /* return_prev: each thread gets the value before its own addition */
    bool prev = atomic && s->u.atomic.prev && mark(v, s->u.atomic.prev->id);
    if (!tc_buffer_is_per_thread(b)) return prev;
    int n = atomic ? s->u.atomic.nidx : s->u.store.nidx;
    tc_expr *const *idx = atomic ? s->u.atomic.idx : s->u.store.idx;
    bool dep = ctl || tc_varying_expr(v, atomic ? s->u.atomic.value : s->u.store.value);
    for (int i = 0; i < n && idx; i++) dep |= tc_varying_expr(v, idx[i]);
    return (dep && mark(v, tc_buffer_storage(b)->id)) || prev;
  }
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    if (s->u.let.var && (ctl || tc_varying_expr(v, s->u.let.value))) return mark(v, s->u.let.var->id);
    return false;
  default: break;
  }
  /* a tile operation writing per-thread storage: varying when any operand or the fill value is */
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int n = tc_stmt_regions(s, regs);
  bool dep = ctl || (s->kind == TC_ST_FILL && tc_varying_expr(v, s->u.fill.value));
  for (int i = 0; i < n; i++) dep |= tc_varying_region(v, regs[i].region);
  for (int i = 0; i < n && dep; i++)
    if (regs[i].write && tc_buffer_is_per_thread(regs[i].region->buf)) ch |= mark(v, tc_buffer_storage(regs[i].region->buf)->id);
  return ch;
}

bool tc_varying_compute(const tc_kernel_ir *k, tc_varying *out) {
  out->nids = tc_kernel_max_id(k) + 1;
  out->by_id = calloc((size_t)out->nids + 1, sizeof(bool));
  if (!out->by_id) return false;
  while (sweep(out, k->body, false)) {
  }
  return true;
}

void tc_varying_free(tc_varying *v) {
  free(v->by_id);
  v->by_id = NULL;
  v->nids = 0;
}

static bool has_atomic_or_print(const tc_stmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_atomic_or_print(s->u.seq.items[i])) return true;
    return false;
  case TC_ST_FOR: return s->u.loop.kind != TC_LOOP_PARALLEL && has_atomic_or_print(s->u.loop.body);
  case TC_ST_IF: return has_atomic_or_print(s->u.if_.then_s) || has_atomic_or_print(s->u.if_.else_s);
  case TC_ST_WHILE: return has_atomic_or_print(s->u.while_.body);
  case TC_ST_ATOMIC_ADD: return s->u.atomic.dst.buf == NULL;
  case TC_ST_PRINT: return true;
  default: return false;
  }
}

typedef struct any_ctx {
  const tc_varying *v;
  bool yes;
} any_ctx;
static void any_var(void *c, const tc_var *var, bool write) {
  (void)write;
  if (tc_varying_var(((any_ctx *)c)->v, var)) ((any_ctx *)c)->yes = true;
}
static void any_buf(void *c, const tc_buffer *b, bool write) {
  (void)write;
  if (tc_varying_buf(((any_ctx *)c)->v, b)) ((any_ctx *)c)->yes = true;
}

bool tc_varying_stmt(const tc_varying *v, const tc_stmt *s) {
  if (!s) return false;
  if (has_atomic_or_print(s)) return true;
  if (s->kind == TC_ST_FOR && tc_varying_var(v, s->u.loop.var)) return true;
  any_ctx x = {v, false};
  tc_access_fns f = {any_var, any_buf, &x};
  tc_stmt_accesses(&f, s, true);
  return x.yes;
}
