/* lower.c: the cpu backend's execution plan for one block.
 *
 * TileLang's model: every thread of a block runs the kernel body; tile operations (copy, gemm,
 * fill, reduce, cumsum, tile atomic_add, T.Parallel loops) are collective and done once per
 * block; everything else runs per thread. A cpu block runs on one OS thread, so the plan
 * decides, statement by statement, what runs once and what runs in a loop over thread ids:
 *
 *  1. Varying analysis (a fixpoint): a LET variable, loop variable or local/var buffer is
 *     "varying" when its value may differ between threads: it depends on a thread index, on
 *     another varying value, or is set under control flow that does.
 *  2. The body is cut into nodes. A collective statement is a ONCE node (it must not use a
 *     varying value: that is an error). Consecutive per-thread statements form a group. A
 *     serial loop or if whose body contains a collective or needs a barrier inside becomes a
 *     LOOP/IF node around the nodes of its body; its bounds/condition must be uniform, else it
 *     is an error ("a barrier is needed under control flow that depends on the thread index").
 *  3. A group is split into segments at the barriers the program needs: conservatively,
 *     before a statement that writes a shared or global buffer an earlier statement of the
 *     segment read or wrote, or reads one an earlier statement wrote (and at explicit BARRIER
 *     statements). A loop whose body both reads and writes a shared buffer per thread is split
 *     around when its bounds are uniform (the loop-carried barrier). A segment with a
 *     per-thread statement (varying, atomic or print) becomes a THREADS node: a loop
 *     `for tid in 0..threads` running the whole segment for each thread before the next node
 *     starts, which is what a barrier between segments guarantees. A segment of uniform,
 *     idempotent statements runs once. A store that reads the shared/global buffer it writes
 *     (S[tx] = S[tx - 1]) runs in lockstep: one thread loop computes every thread's value,
 *     a second stores them, as a GPU warp would.
 *  4. Storage: a LET variable referenced only inside one THREADS segment is a plain C local of
 *     that thread loop. One written in a thread loop and referenced elsewhere lives in an
 *     array indexed by thread id, so it survives the splits; a local/var buffer written in a
 *     thread loop gets one copy per thread. Uniform statements that run once but write such
 *     per-thread storage are turned into thread loops too, so every copy is written.
 *
 * Per-thread tile operations: T.copy/T.fill/T.reduce/T.cumsum whose destination is a local or
 * var buffer act on the calling thread's own buffer (each thread fills its own), so they are
 * per-thread statements, not collective ones. */
#include <string.h>

#include "target/cpu/cpu_internal.h"

typedef struct plan_ctx {
  tc_arena *a;
  tc_cpu_plan *P;
  tilec_error *err;
} plan_ctx;

static bool is_thread_scope(const tc_buffer *b) {
  return b && (b->scope == TC_SCOPE_LOCAL || b->scope == TC_SCOPE_VAR);
}
static bool is_block_mem(const tc_buffer *b) { /* memory other threads can see */
  return b && (b->scope == TC_SCOPE_SHARED || b->scope == TC_SCOPE_GLOBAL);
}

static void nodes_push(tc_arena *a, tc_cpu_nodes *l, tc_cpu_node *n) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    l->v = tc_arena_grow(a, l->v, sizeof(*l->v) * (size_t)l->n, sizeof(*l->v) * (size_t)cap);
    l->cap = cap;
  }
  l->v[l->n++] = n;
}

bool tc_cpu_stmt_is_collective(const tc_stmt *s) {
  switch (s->kind) {
  case TC_ST_GEMM: return true;
  case TC_ST_COPY: return !is_thread_scope(s->u.copy.dst.buf);
  case TC_ST_FILL: return !is_thread_scope(s->u.fill.dst.buf);
  case TC_ST_REDUCE: return !is_thread_scope(s->u.reduce.dst.buf);
  case TC_ST_CUMSUM: return !is_thread_scope(s->u.cumsum.dst.buf);
  case TC_ST_ATOMIC_ADD: return s->u.atomic.dst.buf != NULL;
  case TC_ST_FOR: return s->u.loop.kind == TC_LOOP_PARALLEL;
  default: return false;
  }
}

/* ---- a visitor over every variable and buffer a statement touches ---- */
typedef struct visitor {
  void (*var)(void *c, const tc_var *v, bool write);
  void (*buf)(void *c, const tc_buffer *b, bool write);
  void *c;
} visitor;

static void visit_expr(const visitor *V, const tc_expr *e) {
  if (!e) return;
  if (e->op == TC_OP_VAR && V->var) V->var(V->c, e->var, false);
  if (e->op == TC_OP_LOAD && V->buf) V->buf(V->c, e->buf, false);
  for (int i = 0; i < e->nargs; i++) visit_expr(V, e->args[i]);
}

static void visit_region(const visitor *V, const tc_region *r, bool read, bool write) {
  if (!r->buf) return;
  for (int i = 0; i < r->ndim; i++) visit_expr(V, r->r[i].start);
  if (V->buf && read) V->buf(V->c, r->buf, false);
  if (V->buf && write) V->buf(V->c, r->buf, true);
}

static void visit_stmt(const visitor *V, const tc_stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) visit_stmt(V, s->u.seq.items[i]);
    break;
  case TC_ST_ALLOC:
    if (s->u.alloc.buf->init) {
      visit_expr(V, s->u.alloc.buf->init);
      if (V->buf) V->buf(V->c, s->u.alloc.buf, true);
    }
    break;
  case TC_ST_FOR:
    visit_expr(V, s->u.loop.min);
    visit_expr(V, s->u.loop.extent);
    visit_stmt(V, s->u.loop.body);
    break;
  case TC_ST_IF:
    visit_expr(V, s->u.if_.cond);
    visit_stmt(V, s->u.if_.then_s);
    visit_stmt(V, s->u.if_.else_s);
    break;
  case TC_ST_STORE:
    for (int i = 0; i < s->u.store.nidx; i++) visit_expr(V, s->u.store.idx[i]);
    visit_expr(V, s->u.store.value);
    if (V->buf) V->buf(V->c, s->u.store.buf, true);
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    visit_expr(V, s->u.let.value);
    if (V->var) V->var(V->c, s->u.let.var, true);
    break;
  case TC_ST_COPY:
    visit_region(V, &s->u.copy.src, true, false);
    visit_region(V, &s->u.copy.dst, false, true);
    break;
  case TC_ST_GEMM:
    visit_region(V, &s->u.gemm.a, true, false);
    visit_region(V, &s->u.gemm.b, true, false);
    visit_region(V, &s->u.gemm.c, true, true);
    break;
  case TC_ST_FILL:
    visit_expr(V, s->u.fill.value);
    visit_region(V, &s->u.fill.dst, false, true);
    break;
  case TC_ST_REDUCE:
    visit_region(V, &s->u.reduce.src, true, false);
    visit_region(V, &s->u.reduce.dst, !s->u.reduce.clear, true);
    break;
  case TC_ST_CUMSUM:
    visit_region(V, &s->u.cumsum.src, true, false);
    visit_region(V, &s->u.cumsum.dst, false, true);
    break;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.dst.buf) {
      visit_region(V, &s->u.atomic.src, true, false);
      visit_region(V, &s->u.atomic.dst, true, true);
    } else {
      for (int i = 0; i < s->u.atomic.nidx; i++) visit_expr(V, s->u.atomic.idx[i]);
      visit_expr(V, s->u.atomic.value);
      if (V->buf) {
        V->buf(V->c, s->u.atomic.buf, false);
        V->buf(V->c, s->u.atomic.buf, true);
      }
    }
    break;
  case TC_ST_PRINT:
    visit_expr(V, s->u.print.value);
    if (s->u.print.buf && V->buf) V->buf(V->c, s->u.print.buf, false);
    break;
  case TC_ST_ASSERT: visit_expr(V, s->u.assert_.cond); break;
  case TC_ST_EVALUATE: visit_expr(V, s->u.evaluate.value); break;
  default: break;
  }
}

/* ---- varying analysis ---- */
static bool id_ok(const tc_cpu_plan *P, int id) { return id >= 0 && id < P->nids; }

static bool expr_varying(const tc_cpu_plan *P, const tc_expr *e) {
  if (!e) return false;
  if (e->op == TC_OP_VAR) {
    if (e->var->kind == TC_VAR_THREAD_IDX) return true;
    if (id_ok(P, e->var->id) && P->varying[e->var->id]) return true;
  }
  if (e->op == TC_OP_LOAD && id_ok(P, e->buf->id) && P->varying[e->buf->id]) return true;
  for (int i = 0; i < e->nargs; i++)
    if (expr_varying(P, e->args[i])) return true;
  return false;
}

static bool region_varying(const tc_cpu_plan *P, const tc_region *r) {
  if (!r->buf) return false;
  if (id_ok(P, r->buf->id) && P->varying[r->buf->id]) return true;
  for (int i = 0; i < r->ndim; i++)
    if (expr_varying(P, r->r[i].start)) return true;
  return false;
}

static bool mark(tc_cpu_plan *P, int id) {
  if (!id_ok(P, id) || P->varying[id]) return false;
  P->varying[id] = true;
  return true;
}

static bool vary_stmt(tc_cpu_plan *P, const tc_stmt *s, bool ctl) {
  if (!s) return false;
  bool ch = false;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) ch |= vary_stmt(P, s->u.seq.items[i], ctl);
    break;
  case TC_ST_FOR: {
    bool v = ctl || expr_varying(P, s->u.loop.min) || expr_varying(P, s->u.loop.extent);
    if (v) ch |= mark(P, s->u.loop.var->id);
    ch |= vary_stmt(P, s->u.loop.body, v);
    break;
  }
  case TC_ST_IF: {
    bool v = ctl || expr_varying(P, s->u.if_.cond);
    ch |= vary_stmt(P, s->u.if_.then_s, v);
    ch |= vary_stmt(P, s->u.if_.else_s, v);
    break;
  }
  case TC_ST_STORE: {
    bool v = ctl || expr_varying(P, s->u.store.value);
    for (int i = 0; i < s->u.store.nidx; i++) v |= expr_varying(P, s->u.store.idx[i]);
    if (v && is_thread_scope(s->u.store.buf)) ch |= mark(P, s->u.store.buf->id);
    break;
  }
  case TC_ST_ATOMIC_ADD:
    if (!s->u.atomic.dst.buf && is_thread_scope(s->u.atomic.buf)) {
      bool v = ctl || expr_varying(P, s->u.atomic.value);
      for (int i = 0; i < s->u.atomic.nidx; i++) v |= expr_varying(P, s->u.atomic.idx[i]);
      if (v) ch |= mark(P, s->u.atomic.buf->id);
    }
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    if (ctl || expr_varying(P, s->u.let.value)) ch |= mark(P, s->u.let.var->id);
    break;
  case TC_ST_COPY:
    if (is_thread_scope(s->u.copy.dst.buf) &&
        (ctl || region_varying(P, &s->u.copy.src) || region_varying(P, &s->u.copy.dst)))
      ch |= mark(P, s->u.copy.dst.buf->id);
    break;
  case TC_ST_FILL:
    if (is_thread_scope(s->u.fill.dst.buf) &&
        (ctl || expr_varying(P, s->u.fill.value) || region_varying(P, &s->u.fill.dst)))
      ch |= mark(P, s->u.fill.dst.buf->id);
    break;
  case TC_ST_REDUCE:
    if (is_thread_scope(s->u.reduce.dst.buf) &&
        (ctl || region_varying(P, &s->u.reduce.src) || region_varying(P, &s->u.reduce.dst)))
      ch |= mark(P, s->u.reduce.dst.buf->id);
    break;
  case TC_ST_CUMSUM:
    if (is_thread_scope(s->u.cumsum.dst.buf) &&
        (ctl || region_varying(P, &s->u.cumsum.src) || region_varying(P, &s->u.cumsum.dst)))
      ch |= mark(P, s->u.cumsum.dst.buf->id);
    break;
  default: break;
  }
  return ch;
}

/* Does the statement have to run once per thread? (It uses a varying value, writes varying
 * storage, or is an atomic/print, whose effect counts per thread.) */
typedef struct pt_ctx {
  const tc_cpu_plan *P;
  bool yes;
} pt_ctx;
static void pt_var(void *c, const tc_var *v, bool write) {
  pt_ctx *x = c;
  (void)write;
  if (v->kind == TC_VAR_THREAD_IDX || (id_ok(x->P, v->id) && x->P->varying[v->id])) x->yes = true;
}
static void pt_buf(void *c, const tc_buffer *b, bool write) {
  pt_ctx *x = c;
  (void)write;
  if (id_ok(x->P, b->id) && x->P->varying[b->id]) x->yes = true;
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
  case TC_ST_ATOMIC_ADD: return s->u.atomic.dst.buf == NULL;
  case TC_ST_PRINT: return true;
  default: return false;
  }
}
static bool stmt_per_thread(const tc_cpu_plan *P, const tc_stmt *s) {
  if (has_atomic_or_print(s)) return true;
  pt_ctx x = {P, false};
  visitor V = {pt_var, pt_buf, &x};
  visit_stmt(&V, s);
  if (s->kind == TC_ST_FOR && id_ok(P, s->u.loop.var->id) && P->varying[s->u.loop.var->id]) x.yes = true;
  return x.yes;
}

static bool contains_collective(const tc_stmt *s) {
  if (!s) return false;
  if (tc_cpu_stmt_is_collective(s)) return true;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (contains_collective(s->u.seq.items[i])) return true;
    return false;
  case TC_ST_FOR: return contains_collective(s->u.loop.body);
  case TC_ST_IF: return contains_collective(s->u.if_.then_s) || contains_collective(s->u.if_.else_s);
  default: return false;
  }
}

/* ---- shared/global access sets, for barrier placement ---- */
typedef struct acc_ctx {
  bool *R, *W;
  int nids;
} acc_ctx;
static void acc_buf(void *c, const tc_buffer *b, bool write) {
  acc_ctx *x = c;
  if (!is_block_mem(b) || b->id < 0 || b->id >= x->nids) return;
  if (write) x->W[b->id] = true;
  else x->R[b->id] = true;
}
static void accesses(plan_ctx *C, const tc_stmt *s, bool *R, bool *W) {
  memset(R, 0, (size_t)C->P->nids);
  memset(W, 0, (size_t)C->P->nids);
  acc_ctx x = {R, W, C->P->nids};
  visitor V = {NULL, acc_buf, &x};
  visit_stmt(&V, s);
}
static bool conflicts(int n, const bool *R, const bool *W, const bool *r, const bool *w) {
  for (int i = 0; i < n; i++)
    if ((w[i] && (R[i] || W[i])) || (r[i] && W[i])) return true;
  return false;
}

static void flatten(plan_ctx *C, const tc_stmt *s, tc_stmt_list *out) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(C, s->u.seq.items[i], out);
    return;
  }
  tc_stmt_list_push(C->a, out, (tc_stmt *)s);
}

/* 0: no split needed; 1: a loop-carried barrier would be needed (split when possible);
 * 2: the body holds a collective or a barrier between its statements. */
static int needs_split(plan_ctx *C, const tc_stmt *s);

static int list_needs_split(plan_ctx *C, const tc_stmt *body) {
  tc_stmt_list l = {0};
  flatten(C, body, &l);
  int n = C->P->nids;
  bool *R = tc_arena_zalloc(C->a, (size_t)n + 1), *W = tc_arena_zalloc(C->a, (size_t)n + 1);
  bool *r = tc_arena_zalloc(C->a, (size_t)n + 1), *w = tc_arena_zalloc(C->a, (size_t)n + 1);
  int lvl = 0;
  for (int i = 0; i < l.n; i++) {
    const tc_stmt *s = l.items[i];
    if (tc_cpu_stmt_is_collective(s) || s->kind == TC_ST_BARRIER) return 2;
    int sub = needs_split(C, s);
    if (sub == 2) return 2;
    if (sub > lvl) lvl = sub;
    accesses(C, s, r, w);
    if (conflicts(n, R, W, r, w)) return 2;
    for (int j = 0; j < n; j++) {
      R[j] |= r[j];
      W[j] |= w[j];
    }
  }
  return lvl;
}

static int needs_split(plan_ctx *C, const tc_stmt *s) {
  if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL) {
    int lvl = list_needs_split(C, s->u.loop.body);
    if (lvl == 2) return 2;
    if (stmt_per_thread(C->P, s->u.loop.body)) {
      int n = C->P->nids;
      bool *r = tc_arena_zalloc(C->a, (size_t)n + 1), *w = tc_arena_zalloc(C->a, (size_t)n + 1);
      accesses(C, s->u.loop.body, r, w);
      for (int j = 0; j < n; j++)
        if (r[j] && w[j] && C->P->bufs[j] && C->P->bufs[j]->scope == TC_SCOPE_SHARED) return 1;
    }
    return lvl;
  }
  if (s->kind == TC_ST_IF) {
    int a = list_needs_split(C, s->u.if_.then_s);
    int b = s->u.if_.else_s ? list_needs_split(C, s->u.if_.else_s) : 0;
    return a == 2 || b == 2 ? 2 : 0;
  }
  return 0;
}

static tc_cpu_node *new_node(plan_ctx *C, tc_cpu_node_kind kind, const tc_stmt *s) {
  tc_cpu_node *n = TC_NEW(C->a, tc_cpu_node);
  n->kind = kind;
  n->stmt = s;
  n->seg = -1;
  return n;
}

static void end_segment(plan_ctx *C, tc_cpu_nodes *out, tc_stmt_list *seg) {
  if (seg->n == 0) return;
  bool per_thread = false;
  for (int i = 0; i < seg->n; i++) per_thread |= stmt_per_thread(C->P, seg->items[i]);
  if (per_thread) {
    tc_cpu_node *n = new_node(C, TC_CPU_THREADS, NULL);
    n->stmts = *seg;
    n->seg = C->P->nsegs++;
    nodes_push(C->a, out, n);
  } else {
    for (int i = 0; i < seg->n; i++) nodes_push(C->a, out, new_node(C, TC_CPU_ONCE, seg->items[i]));
  }
  memset(seg, 0, sizeof *seg);
}

/* A per-thread store whose value or indices read the shared/global buffer it writes. */
static bool self_hazard_store(plan_ctx *C, const tc_stmt *s, const bool *r) {
  return s->kind == TC_ST_STORE && is_block_mem(s->u.store.buf) && id_ok(C->P, s->u.store.buf->id) &&
         r[s->u.store.buf->id] && stmt_per_thread(C->P, s);
}

static void flush_group(plan_ctx *C, tc_cpu_nodes *out, tc_stmt_list *group) {
  int n = C->P->nids;
  bool *R = tc_arena_zalloc(C->a, (size_t)n + 1), *W = tc_arena_zalloc(C->a, (size_t)n + 1);
  bool *r = tc_arena_zalloc(C->a, (size_t)n + 1), *w = tc_arena_zalloc(C->a, (size_t)n + 1);
  tc_stmt_list seg = {0};
  for (int i = 0; i < group->n; i++) {
    const tc_stmt *s = group->items[i];
    if (s->kind == TC_ST_BARRIER) {
      end_segment(C, out, &seg);
      memset(R, 0, (size_t)n);
      memset(W, 0, (size_t)n);
      continue;
    }
    accesses(C, s, r, w);
    if (self_hazard_store(C, s, r)) {
      end_segment(C, out, &seg);
      tc_cpu_node *ls = new_node(C, TC_CPU_THREADS, NULL);
      tc_stmt_list_push(C->a, &ls->stmts, (tc_stmt *)s);
      ls->seg = C->P->nsegs++;
      ls->lockstep = true;
      nodes_push(C->a, out, ls);
      memset(R, 0, (size_t)n);
      memset(W, 0, (size_t)n);
      continue;
    }
    if (seg.n > 0 && conflicts(n, R, W, r, w)) {
      end_segment(C, out, &seg);
      memset(R, 0, (size_t)n);
      memset(W, 0, (size_t)n);
    }
    tc_stmt_list_push(C->a, &seg, (tc_stmt *)s);
    for (int j = 0; j < n; j++) {
      R[j] |= r[j];
      W[j] |= w[j];
    }
  }
  end_segment(C, out, &seg);
  memset(group, 0, sizeof *group);
}

static bool collective_uses_varying(plan_ctx *C, const tc_stmt *s) {
  pt_ctx x = {C->P, false};
  visitor V = {pt_var, pt_buf, &x};
  visit_stmt(&V, s);
  return x.yes;
}

static bool plan_list(plan_ctx *C, const tc_stmt *body, tc_cpu_nodes *out) {
  tc_stmt_list l = {0}, group = {0};
  flatten(C, body, &l);
  for (int i = 0; i < l.n; i++) {
    const tc_stmt *s = l.items[i];
    if (s->kind == TC_ST_ALLOC) {
      if (s->u.alloc.buf->init) tc_stmt_list_push(C->a, &group, (tc_stmt *)s);
      continue;
    }
    if (tc_cpu_stmt_is_collective(s)) {
      if (collective_uses_varying(C, s)) {
        tc_error_at(C->err, TILEC_ERROR_PROGRAM, s->loc,
                    "a tile operation uses a per-thread value (a thread index or a value "
                    "derived from one); tile operations are done by the whole block");
        return false;
      }
      flush_group(C, out, &group);
      nodes_push(C->a, out, new_node(C, TC_CPU_ONCE, s));
      continue;
    }
    if (s->kind == TC_ST_FOR || s->kind == TC_ST_IF) {
      int lvl = needs_split(C, s);
      bool uniform = s->kind == TC_ST_FOR
                         ? !expr_varying(C->P, s->u.loop.min) && !expr_varying(C->P, s->u.loop.extent)
                         : !expr_varying(C->P, s->u.if_.cond);
      if (lvl == 2 && !uniform) {
        if (contains_collective(s))
          tc_error_at(C->err, TILEC_ERROR_PROGRAM, s->loc,
                      "a tile operation is under control flow that depends on the thread index");
        else
          tc_error_at(C->err, TILEC_ERROR_PROGRAM, s->loc,
                      "a barrier is needed under control flow that depends on the thread index "
                      "(threads read shared memory other threads write inside this %s)",
                      s->kind == TC_ST_FOR ? "loop" : "if");
        return false;
      }
      if (lvl == 2 || (lvl == 1 && uniform)) {
        flush_group(C, out, &group);
        tc_cpu_node *n = new_node(C, s->kind == TC_ST_FOR ? TC_CPU_LOOP : TC_CPU_IF, s);
        if (s->kind == TC_ST_FOR) {
          if (!plan_list(C, s->u.loop.body, &n->body)) return false;
        } else {
          if (!plan_list(C, s->u.if_.then_s, &n->body)) return false;
          if (s->u.if_.else_s && !plan_list(C, s->u.if_.else_s, &n->orelse)) return false;
        }
        nodes_push(C->a, out, n);
        continue;
      }
    }
    tc_stmt_list_push(C->a, &group, (tc_stmt *)s);
  }
  flush_group(C, out, &group);
  return true;
}

/* ---- storage ---- */
typedef struct use_ctx {
  tc_cpu_plan *P;
  int seg;          /* -1: a ONCE node */
  int *first_seg;   /* by id: first segment referencing it, -1 none */
  bool *multi_seg;  /* referenced from several segments */
  bool *once_ref;   /* referenced from ONCE code */
  bool *thread_written;
  bool *once_writes_thread; /* scratch flag for a ONCE statement */
} use_ctx;

static void use_id(use_ctx *u, int id, bool write) {
  if (!id_ok(u->P, id)) return;
  if (u->seg < 0) {
    u->once_ref[id] = true;
    if (write && u->thread_written[id]) *u->once_writes_thread = true;
    return;
  }
  if (write) u->thread_written[id] = true;
  if (u->first_seg[id] < 0) u->first_seg[id] = u->seg;
  else if (u->first_seg[id] != u->seg) u->multi_seg[id] = true;
}
static void use_var(void *c, const tc_var *v, bool write) {
  if (v->kind == TC_VAR_LOCAL) use_id(c, v->id, write);
}
static void use_buf(void *c, const tc_buffer *b, bool write) {
  if (is_thread_scope(b)) use_id(c, b->id, write);
}

/* Records uses; returns true when a ONCE node had to become a thread loop. */
static bool use_nodes(plan_ctx *C, use_ctx *u, tc_cpu_nodes *l) {
  bool changed = false;
  visitor V = {use_var, use_buf, u};
  for (int i = 0; i < l->n; i++) {
    tc_cpu_node *n = l->v[i];
    switch (n->kind) {
    case TC_CPU_THREADS:
      u->seg = n->seg;
      for (int j = 0; j < n->stmts.n; j++) visit_stmt(&V, n->stmts.items[j]);
      break;
    case TC_CPU_ONCE: {
      bool flag = false;
      u->seg = -1;
      u->once_writes_thread = &flag;
      visit_stmt(&V, n->stmt);
      if (flag && !tc_cpu_stmt_is_collective(n->stmt)) {
        n->kind = TC_CPU_THREADS;
        memset(&n->stmts, 0, sizeof n->stmts);
        tc_stmt_list_push(C->a, &n->stmts, (tc_stmt *)n->stmt);
        n->seg = C->P->nsegs++;
        changed = true;
      }
      break;
    }
    case TC_CPU_LOOP:
    case TC_CPU_IF: {
      u->seg = -1;
      const tc_stmt *s = n->stmt;
      if (s->kind == TC_ST_FOR) {
        visit_expr(&V, s->u.loop.min);
        visit_expr(&V, s->u.loop.extent);
      } else {
        visit_expr(&V, s->u.if_.cond);
      }
      changed |= use_nodes(C, u, &n->body);
      changed |= use_nodes(C, u, &n->orelse);
      break;
    }
    }
  }
  return changed;
}

static void reg_var(void *c, const tc_var *v, bool write) {
  tc_cpu_plan *P = c;
  (void)write;
  if (v->kind == TC_VAR_LOCAL && id_ok(P, v->id)) P->vars[v->id] = v;
}
static void reg_buf(void *c, const tc_buffer *b, bool write) {
  tc_cpu_plan *P = c;
  (void)write;
  if (b->scope != TC_SCOPE_GLOBAL && id_ok(P, b->id)) P->bufs[b->id] = b;
}
static void reg_allocs(tc_cpu_plan *P, const tc_stmt *s) {
  if (!s) return;
  if (s->kind == TC_ST_ALLOC && id_ok(P, s->u.alloc.buf->id)) P->bufs[s->u.alloc.buf->id] = s->u.alloc.buf;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) reg_allocs(P, s->u.seq.items[i]);
  if (s->kind == TC_ST_FOR) reg_allocs(P, s->u.loop.body);
  if (s->kind == TC_ST_IF) {
    reg_allocs(P, s->u.if_.then_s);
    reg_allocs(P, s->u.if_.else_s);
  }
}

/* The largest id used by any var or buffer, for sizing the tables (hand-built IR may not keep
 * next_id up to date). */
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
static void max_loops(max_ctx *m, const tc_stmt *s) {
  if (!s) return;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->id > m->max) m->max = s->u.alloc.buf->id;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) max_loops(m, s->u.seq.items[i]);
  if (s->kind == TC_ST_FOR) {
    if (s->u.loop.var->id > m->max) m->max = s->u.loop.var->id;
    max_loops(m, s->u.loop.body);
  }
  if (s->kind == TC_ST_IF) {
    max_loops(m, s->u.if_.then_s);
    max_loops(m, s->u.if_.else_s);
  }
}

typedef struct cw_ctx {
  const tc_cpu_plan *P;
  const tc_buffer *bad;
} cw_ctx;
static void cw_buf(void *c, const tc_buffer *b, bool write) {
  cw_ctx *x = c;
  if (write && id_ok(x->P, b->id) && is_thread_scope(b) && x->P->storage[b->id] == TC_CPU_STORE_PER_THREAD)
    x->bad = b;
}

/* A tile operation writing per-thread storage would fill only one thread's copy. */
static bool check_collective_writes(plan_ctx *C, tc_cpu_nodes *l) {
  for (int i = 0; i < l->n; i++) {
    tc_cpu_node *n = l->v[i];
    if (n->kind == TC_CPU_ONCE && tc_cpu_stmt_is_collective(n->stmt)) {
      cw_ctx x = {C->P, NULL};
      visitor V = {NULL, cw_buf, &x};
      visit_stmt(&V, n->stmt);
      if (x.bad) {
        tc_error_at(C->err, TILEC_ERROR_PROGRAM, n->stmt->loc,
                    "a tile operation writes '%s', a per-thread buffer that thread-level code "
                    "also writes", x.bad->name);
        return false;
      }
    }
    if (!check_collective_writes(C, &n->body) || !check_collective_writes(C, &n->orelse)) return false;
  }
  return true;
}

bool tc_cpu_plan_build(tc_arena *a, const tc_kernel_ir *k, tc_cpu_plan *P, tilec_error *err) {
  memset(P, 0, sizeof *P);
  P->k = k;
  P->nthreads = 1;
  for (int i = 0; i < k->threads_ndim; i++) P->nthreads *= k->threads[i] > 0 ? k->threads[i] : 1;
  max_ctx m = {k->next_id};
  visitor MV = {max_var, max_buf, &m};
  visit_stmt(&MV, k->body);
  max_loops(&m, k->body);
  P->nids = m.max + 1;
  size_t n = (size_t)P->nids;
  P->storage = TC_NEW_ARRAY(a, tc_cpu_storage, n);
  P->var_seg = TC_NEW_ARRAY(a, int, n);
  P->varying = TC_NEW_ARRAY(a, bool, n);
  P->vars = TC_NEW_ARRAY(a, const tc_var *, n);
  P->bufs = TC_NEW_ARRAY(a, const tc_buffer *, n);
  visitor RV = {reg_var, reg_buf, P};
  visit_stmt(&RV, k->body);
  reg_allocs(P, k->body);

  while (vary_stmt(P, k->body, false)) {
  }

  plan_ctx C = {a, P, err};
  if (!plan_list(&C, k->body, &P->top)) return false;

  use_ctx u = {P, -1, TC_NEW_ARRAY(a, int, n), TC_NEW_ARRAY(a, bool, n), TC_NEW_ARRAY(a, bool, n),
               TC_NEW_ARRAY(a, bool, n), NULL};
  for (;;) {
    for (size_t i = 0; i < n; i++) {
      u.first_seg[i] = -1;
      u.multi_seg[i] = false;
      u.once_ref[i] = false;
    }
    if (!use_nodes(&C, &u, &P->top)) break;
  }
  for (size_t i = 0; i < n; i++) {
    P->var_seg[i] = -1;
    bool thread_store = u.thread_written[i];
    if (P->vars[i]) {
      if (u.first_seg[i] >= 0 && !u.multi_seg[i] && !u.once_ref[i]) {
        P->storage[i] = TC_CPU_STORE_SEGMENT;
        P->var_seg[i] = u.first_seg[i];
      } else {
        P->storage[i] = thread_store ? TC_CPU_STORE_PER_THREAD : TC_CPU_STORE_SHARED;
      }
    } else if (P->bufs[i] && is_thread_scope(P->bufs[i])) {
      P->storage[i] = thread_store && P->nthreads > 1 ? TC_CPU_STORE_PER_THREAD : TC_CPU_STORE_SHARED;
    }
  }
  return check_collective_writes(&C, &P->top);
}
