/* lower.c: the cpu backend's execution plan for one block.
 *
 * TileLang's model: every thread of a block runs the kernel body; tile operations (copy, gemm,
 * fill, reduce, cumsum, tile atomic_add, T.Parallel loops) are collective and done once per
 * block; everything else runs per thread. A cpu block runs on one OS thread, so the plan
 * decides, statement by statement, what runs once and what runs in a loop over thread ids:
 *
 *  1. Varying analysis (tc_varying_compute, src/analysis/): a LET variable, loop variable or
 *     local/var buffer is "varying" when its value may differ between threads.
 *  2. The body is cut into nodes. A collective statement (tc_stmt_exec) is a ONCE node (it must
 *     not use a varying value: the verifier rejects that first). Consecutive per-thread
 *     statements form a group. A serial loop or if whose body contains a collective or a
 *     barrier becomes a LOOP/IF node around the nodes of its body; its bounds/condition must be
 *     uniform, else it is an error ("a barrier is needed under control flow that depends on the
 *     thread index").
 *  3. A group is split into segments at the BARRIER statements the insert-barriers pass wrote
 *     (src/pass/insert_barriers.c: conflicts on shared/global memory, loop back edges). A
 *     segment with a per-thread statement (varying, atomic or print) becomes a THREADS node: a
 *     loop `for tid in 0..threads` running the whole segment for each thread before the next
 *     node starts, which is what a barrier between segments guarantees. A segment of uniform,
 *     idempotent statements runs once. A store that reads the shared/global buffer it writes
 *     (S[tx] = S[tx - 1], also under an if: `if tx >= d: S[tx] = S[tx] + S[tx - d]`) runs in
 *     lockstep: one thread loop computes every thread's guard and value, a second stores
 *     them, as a GPU warp would.
 *  4. Storage: a LET variable referenced only inside one THREADS segment is a plain C local of
 *     that thread loop. One written in a thread loop and referenced elsewhere lives in an
 *     array indexed by thread id, so it survives the splits; a local/var buffer written in a
 *     thread loop gets one copy per thread. Uniform statements that run once but write such
 *     per-thread storage are turned into thread loops too, so every copy is written.
 *
 * Per-thread tile operations: a tile operation with an operand in a local or var buffer acts on
 * the calling thread's own buffer (tc_stmt_exec), so it is a per-thread statement. */
#include <string.h>

#include "analysis/analysis.h"
#include "target/cpu/cpu_internal.h"

typedef struct plan_ctx {
  tc_arena *a;
  tc_cpu_plan *P;
  tilec_error *err;
} plan_ctx;

static bool is_thread_scope(const tc_buffer *b) { return tc_buffer_is_per_thread(b); }
static bool id_ok(const tc_cpu_plan *P, int id) { return id >= 0 && id < P->nids; }

static void nodes_push(tc_arena *a, tc_cpu_nodes *l, tc_cpu_node *n) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    l->v = tc_arena_grow(a, l->v, sizeof(*l->v) * (size_t)l->n, sizeof(*l->v) * (size_t)cap);
    l->cap = cap;
  }
  l->v[l->n++] = n;
}

static void visit_stmt(const tc_access_fns *V, const tc_stmt *s) { tc_stmt_accesses(V, s, true); }

static bool stmt_per_thread(const tc_cpu_plan *P, const tc_stmt *s) {
  tc_varying V = {P->nids, P->varying};
  return tc_varying_stmt(&V, s);
}
static bool expr_varying(const tc_cpu_plan *P, const tc_expr *e) {
  tc_varying V = {P->nids, P->varying};
  return tc_varying_expr(&V, e);
}

static void flatten(plan_ctx *C, const tc_stmt *s, tc_stmt_list *out) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(C, s->u.seq.items[i], out);
    return;
  }
  tc_stmt_list_push(C->a, out, (tc_stmt *)s);
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

/* The store of `s` when s is a store, or an if without else around exactly one store. */
const tc_stmt *tc_cpu_lockstep_store(const tc_stmt *s) {
  if (s->kind == TC_ST_IF && !s->u.if_.else_s) {
    const tc_stmt *t = s->u.if_.then_s;
    while (t && t->kind == TC_ST_SEQ && t->u.seq.n == 1) t = t->u.seq.items[0];
    return t && t->kind == TC_ST_STORE ? t : NULL;
  }
  return s->kind == TC_ST_STORE ? s : NULL;
}

/* A per-thread (guarded) store whose value, indices or guard read the shared/global buffer it
 * writes. */
typedef struct self_ctx {
  const tc_buffer *b;
  bool reads;
} self_ctx;
static void self_buf(void *c, const tc_buffer *b, bool write) {
  self_ctx *x = c;
  if (!write && b == x->b) x->reads = true;
}
static bool self_hazard_store(plan_ctx *C, const tc_stmt *s) {
  const tc_stmt *st = tc_cpu_lockstep_store(s);
  if (!st || !tc_buffer_is_block_visible(st->u.store.buf)) return false;
  self_ctx x = {st->u.store.buf, false};
  tc_access_fns V = {NULL, self_buf, &x};
  visit_stmt(&V, s);
  return x.reads && stmt_per_thread(C->P, s);
}

/* Per-thread statements between synchronisation points: segments end at BARRIER statements
 * (placed by the insert-barriers pass) and around lockstep stores. */
static void flush_group(plan_ctx *C, tc_cpu_nodes *out, tc_stmt_list *group) {
  tc_stmt_list seg = {0};
  for (int i = 0; i < group->n; i++) {
    const tc_stmt *s = group->items[i];
    if (s->kind == TC_ST_BARRIER) {
      end_segment(C, out, &seg);
      continue;
    }
    if (self_hazard_store(C, s)) {
      end_segment(C, out, &seg);
      tc_cpu_node *ls = new_node(C, TC_CPU_THREADS, NULL);
      tc_stmt_list_push(C->a, &ls->stmts, (tc_stmt *)s);
      ls->seg = C->P->nsegs++;
      ls->lockstep = true;
      nodes_push(C->a, out, ls);
      continue;
    }
    tc_stmt_list_push(C->a, &seg, (tc_stmt *)s);
  }
  end_segment(C, out, &seg);
  memset(group, 0, sizeof *group);
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
    if (tc_stmt_is_collective(s)) {
      if (stmt_per_thread(C->P, s)) { /* the verifier rejects this first; hand-built IR may not be verified */
        tc_error_at(C->err, TILEC_ERROR_PROGRAM, s->loc,
                    "a tile operation uses a per-thread value (a thread index or a value "
                    "derived from one); tile operations are done by the whole block");
        return false;
      }
      flush_group(C, out, &group);
      nodes_push(C->a, out, new_node(C, TC_CPU_ONCE, s));
      continue;
    }
    if ((s->kind == TC_ST_FOR || s->kind == TC_ST_IF || s->kind == TC_ST_WHILE) && tc_stmt_contains_sync(s)) {
      bool uniform = s->kind == TC_ST_FOR     ? !expr_varying(C->P, s->u.loop.min) && !expr_varying(C->P, s->u.loop.extent)
                     : s->kind == TC_ST_WHILE ? !expr_varying(C->P, s->u.while_.cond)
                                              : !expr_varying(C->P, s->u.if_.cond);
      if (!uniform) { /* the insert-barriers pass rejects this first, with the same words */
        tc_error_sync_under_divergence(C->err, s);
        return false;
      }
      flush_group(C, out, &group);
      tc_cpu_node *n = new_node(C, s->kind == TC_ST_IF ? TC_CPU_IF : TC_CPU_LOOP, s);
      if (s->kind == TC_ST_FOR) {
        if (!plan_list(C, s->u.loop.body, &n->body)) return false;
      } else if (s->kind == TC_ST_WHILE) {
        if (!plan_list(C, s->u.while_.body, &n->body)) return false;
      } else {
        if (!plan_list(C, s->u.if_.then_s, &n->body)) return false;
        if (s->u.if_.else_s && !plan_list(C, s->u.if_.else_s, &n->orelse)) return false;
      }
      nodes_push(C->a, out, n);
      continue;
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
  if (is_thread_scope(b)) use_id(c, tc_buffer_storage(b)->id, write); /* a view uses the storage it names */
}

/* Records uses; returns true when a ONCE node had to become a thread loop. */
static bool use_nodes(plan_ctx *C, use_ctx *u, tc_cpu_nodes *l) {
  bool changed = false;
  tc_access_fns V = {use_var, use_buf, u};
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
      if (flag && !tc_stmt_is_collective(n->stmt)) {
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
        tc_expr_accesses(&V, s->u.loop.min);
        tc_expr_accesses(&V, s->u.loop.extent);
      } else if (s->kind == TC_ST_WHILE) {
        tc_expr_accesses(&V, s->u.while_.cond);
      } else {
        tc_expr_accesses(&V, s->u.if_.cond);
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
  if (s->kind == TC_ST_WHILE) reg_allocs(P, s->u.while_.body);
  if (s->kind == TC_ST_IF) {
    reg_allocs(P, s->u.if_.then_s);
    reg_allocs(P, s->u.if_.else_s);
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
    if (n->kind == TC_CPU_ONCE && tc_stmt_is_collective(n->stmt)) {
      cw_ctx x = {C->P, NULL};
      tc_access_fns V = {NULL, cw_buf, &x};
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
  tc_varying V;
  if (!tc_varying_compute(k, &V)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory planning the cpu kernel");
    return false;
  }
  P->nids = V.nids;
  size_t n = (size_t)P->nids;
  P->storage = TC_NEW_ARRAY(a, tc_cpu_storage, n);
  P->var_seg = TC_NEW_ARRAY(a, int, n);
  P->varying = TC_NEW_ARRAY(a, bool, n);
  memcpy(P->varying, V.by_id, n);
  tc_varying_free(&V);
  P->vars = TC_NEW_ARRAY(a, const tc_var *, n);
  P->bufs = TC_NEW_ARRAY(a, const tc_buffer *, n);
  tc_access_fns RV = {reg_var, reg_buf, P};
  visit_stmt(&RV, k->body);
  reg_allocs(P, k->body);

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
  for (size_t i = 0; i < n; i++) /* a view is stored as the buffer it views (its id comes later) */
    if (P->bufs[i] && P->bufs[i]->view_of && id_ok(P, P->bufs[i]->view_of->id)) P->storage[i] = P->storage[P->bufs[i]->view_of->id];
  return check_collective_writes(&C, &P->top);
}
