/* eval_ws.c: explicit warp specialization in the reader: `with T.ws(k, ...)`, T.alloc_barrier,
 * T.barrier_arrive / T.mbarrier_arrive, T.barrier_wait / T.mbarrier_wait_parity and
 * T.tma_copy's barrier (issue 10).
 *
 * On a GPU, T.ws(k) runs its body on warp group k only (threads [128k, 128k + 128)), and the
 * groups order their work through mbarriers: an arrive counts one arrival per thread; a phase
 * completes when its barrier's arrive count is reached; wait(parity p) returns once the phase of
 * parity p has completed, i.e. while the barrier's completed-phase count has the other parity.
 *
 * tilec's reference runs the block's statements in program order. A race-free producer/consumer
 * program has the same result under every schedule its barriers allow, and program order is one
 * of them exactly when no wait needs an arrival that comes later in the program. (Branches of an
 * 'if' on the thread index whose loops must run side by side are interleaved: interleave_loops.) So the reader
 * emits each T.ws body in place (its tile operations act for the group; a tile operation's result
 * does not depend on which threads carry it out), keeps every barrier as a per-thread counter of
 * arrivals (every thread executes the same arrivals, so the copies agree), and turns each wait
 * into a runtime assert that its phase has completed. An assert that fails names the wait and
 * says why: that order is one tilec cannot run. A T.ws body that reads the thread index is
 * refused (it would run on threads outside the group). The kernel is marked, and GPU targets
 * refuse it until warp specialization is lowered onto their mbarriers. */
#include "analysis/analysis.h"
#include "front/eval_int.h"
#include "ir/walk.h"

#include <string.h>

enum { WARP_GROUP_THREADS = 128, MAX_BARRIERS = 64 };

static tc_loc call_loc(tc_args *a) { return a->call ? a->call->loc : (tc_loc){0}; }

static int64_t block_threads(tc_ev *ev) {
  int64_t n = 1;
  for (int i = 0; i < ev->threads_ndim; i++) n *= ev->threads[i];
  return n;
}

static void mark_kernel(tc_ev *ev, tc_loc loc) {
  if (!ev->k->warp_specialized) ev->k->warp_specialized = true, ev->k->warp_specialized_loc = loc;
}

/* ---- T.alloc_barrier(arrive_count | [counts]) ---- */
static tc_buffer *make_barriers(tc_ev *ev, tc_val *c, tc_loc loc, tc_loc cloc, const char *what, const char *name) {
  if (!ev->cur) ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)'", what);
  int n = c->kind == TV_LIST || c->kind == TV_TUPLE ? c->u.seq.n : 1;
  if (n < 1 || n > MAX_BARRIERS) ev_fail(ev, cloc, "%s: 1 to %d barriers, got %d", what, MAX_BARRIERS, n);
  int64_t *counts = EV_NEW_ARRAY(ev, int64_t, n);
  for (int i = 0; i < n; i++) {
    tc_val *v = c->kind == TV_LIST || c->kind == TV_TUPLE ? c->u.seq.v[i] : c;
    if (v->kind != TV_INT) ev_fail(ev, cloc, "%s: an arrive count must be an int known at compile time, not %s", what, tv_kind_name(v));
    counts[i] = v->u.i;
    if (counts[i] < 1 || counts[i] > 1024)
      ev_fail(ev, cloc, "%s: an arrive count must be between 1 and 1024 threads, got %lld", what, (long long)counts[i]);
  }
  tc_expr **shape = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  shape[0] = tc_ir_int(ev->ir, n, tc_index_dtype(), loc);
  tc_buffer *b = tc_ir_new_buffer(ev->ir, ev->k, tc_arena_strdup(ev->ir, name), tc_dt(TC_DT_INT32), TC_SCOPE_LOCAL, 1, shape, loc);
  b->mbarrier = true;
  tc_stmt *al = tc_ir_stmt(ev->ir, TC_ST_ALLOC, loc);
  al->u.alloc.buf = b;
  ev_emit(ev, al, loc, what);
  for (int i = 0; i < n; i++) { /* no arrivals yet: phase 0 in progress */
    tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
    st->u.store.buf = b;
    st->u.store.nidx = 1;
    st->u.store.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
    st->u.store.idx[0] = tc_ir_int(ev->ir, i, tc_index_dtype(), loc);
    st->u.store.value = tc_ir_int(ev->ir, 0, tc_dt(TC_DT_INT32), loc);
    ev_emit(ev, st, loc, what);
  }
  if (ev->nbarriers == ev->capbarriers) {
    int cap = ev->capbarriers ? ev->capbarriers * 2 : 4;
    ev->barriers = tc_arena_grow(&ev->tmp, ev->barriers, sizeof *ev->barriers * (size_t)ev->nbarriers, sizeof *ev->barriers * (size_t)cap);
    ev->capbarriers = cap;
  }
  ev->barriers[ev->nbarriers].buf = b;
  ev->barriers[ev->nbarriers].n = n;
  ev->barriers[ev->nbarriers].counts = counts;
  ev->nbarriers++;
  mark_kernel(ev, loc);
  return b;
}

tc_val *ev_t_alloc_barrier(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  return tv_buffer(ev, make_barriers(ev, a->p[0], loc, arg_loc(a, 0), "T.alloc_barrier", ev_target_name(ev, a->call, "mbar")));
}

/* ---- T.create_list_of_mbarrier(*counts) and T.get_mbarrier(i) ----
 * TileLang's older spelling: one list of barriers per kernel, named by their index; a barrier
 * argument that is an int (or an int expression) is barrier i of that list. */
tc_val *ev_t_create_list_of_mbarrier(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_val *c = a->p[0]; /* the star arguments: counts, or one list of them */
  if ((c->kind == TV_TUPLE || c->kind == TV_LIST) && c->u.seq.n == 1 &&
      (c->u.seq.v[0]->kind == TV_LIST || c->u.seq.v[0]->kind == TV_TUPLE))
    c = c->u.seq.v[0];
  if (ev->implicit_barriers) ev_fail(ev, loc, "T.create_list_of_mbarrier: the kernel already made its list of barriers (one list a kernel; T.alloc_barrier makes more)");
  ev->implicit_barriers = make_barriers(ev, c, loc, loc, "T.create_list_of_mbarrier", "mbarriers");
  return tv_none(ev);
}

/* Barrier i of the kernel's T.create_list_of_mbarrier list. */
static tc_val *implicit_barrier(tc_ev *ev, tc_expr *i, tc_loc loc) {
  tc_val *v = tv_new(ev, TV_ELEM);
  v->u.elem.buf = ev->implicit_barriers;
  v->u.elem.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  v->u.elem.idx[0] = ev_cast(ev, i, tc_index_dtype(), loc);
  return v;
}

tc_val *ev_t_get_mbarrier(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  if (!ev->implicit_barriers) ev_fail(ev, loc, "T.get_mbarrier: a barrier id names a barrier of the list T.create_list_of_mbarrier makes, and no such call comes before this one");
  tc_expr *i = ev_to_expr(ev, ev_scalar(ev, a->p[0], arg_loc(a, 0)), arg_loc(a, 0));
  if (!tc_dtype_is_int(i->dtype)) ev_fail(ev, arg_loc(a, 0), "T.get_mbarrier: the barrier's index must be an integer");
  return implicit_barrier(ev, i, loc);
}

typedef struct barrier_ref {
  tc_buffer *buf;
  tc_expr *idx;   /* int32 */
  tc_expr *count; /* the arrive count of that barrier (a select when they differ) */
} barrier_ref;

/* A barrier argument: the buffer T.alloc_barrier made (its barrier 0) or one element of it. */
static barrier_ref barrier_arg(tc_ev *ev, tc_val *v, tc_loc loc, const char *what) {
  if (ev->implicit_barriers && (v->kind == TV_INT || (v->kind == TV_EXPR && tc_dtype_is_int(v->u.e->dtype))))
    v = implicit_barrier(ev, ev_to_expr(ev, v, loc), loc);
  tc_buffer *b = v->kind == TV_BUFFER ? v->u.buf : v->kind == TV_ELEM ? v->u.elem.buf : NULL;
  int which = -1;
  for (int i = 0; b && i < ev->nbarriers; i++)
    if (ev->barriers[i].buf == b) which = i;
  if (which < 0) ev_fail(ev, loc, "%s expects a barrier from T.alloc_barrier, not %s", what, tv_kind_name(v));
  const int64_t *counts = ev->barriers[which].counts;
  int n = ev->barriers[which].n;
  barrier_ref r = {b, NULL, NULL};
  if (v->kind == TV_ELEM) {
    r.idx = v->u.elem.idx[0];
    int64_t c;
    if (tc_expr_const_int(r.idx, &c) && (c < 0 || c >= n))
      ev_fail(ev, loc, "%s: barrier %lld of '%s', which has %d", what, (long long)c, b->name, n);
  } else {
    r.idx = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
  }
  int64_t c;
  bool uniform = true;
  for (int i = 1; i < n; i++) uniform = uniform && counts[i] == counts[0];
  r.count = tc_ir_int(ev->ir, counts[n - 1], tc_dt(TC_DT_INT32), loc);
  if (tc_expr_const_int(r.idx, &c)) {
    r.count = tc_ir_int(ev->ir, counts[c], tc_dt(TC_DT_INT32), loc);
  } else if (!uniform) { /* idx == 0 ? c0 : idx == 1 ? c1 : ... : c{n-1} */
    for (int i = n - 2; i >= 0; i--)
      r.count = tc_ir_select(ev->ir, tc_ir_binary(ev->ir, TC_OP_EQ, tc_ir_clone_expr(ev->ir, r.idx), tc_ir_int(ev->ir, i, tc_index_dtype(), loc), loc),
                             tc_ir_int(ev->ir, counts[i], tc_dt(TC_DT_INT32), loc), r.count, loc);
  }
  return r;
}

static tc_expr *counter_load(tc_ev *ev, const barrier_ref *r, tc_loc loc) {
  tc_expr **idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  idx[0] = tc_ir_clone_expr(ev->ir, r->idx);
  return tc_ir_load(ev->ir, r->buf, 1, idx, loc);
}

/* ---- arrive: one arrival per thread that executes it ---- */
static tc_val *arrive(tc_ev *ev, tc_args *a, const char *what) {
  tc_loc loc = call_loc(a);
  if (!ev->cur) ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)'", what);
  barrier_ref r = barrier_arg(ev, a->p[0], arg_loc(a, 0), what);
  int64_t threads = ev->ws_threads ? ev->ws_threads : block_threads(ev);
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  st->u.store.buf = r.buf;
  st->u.store.nidx = 1;
  st->u.store.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  st->u.store.idx[0] = tc_ir_clone_expr(ev->ir, r.idx);
  st->u.store.value = tc_ir_binary(ev->ir, TC_OP_ADD, counter_load(ev, &r, loc), tc_ir_int(ev->ir, threads, tc_dt(TC_DT_INT32), loc), loc);
  ev_emit(ev, st, loc, what);
  return tv_none(ev);
}

tc_val *ev_t_barrier_arrive(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return arrive(ev, a, "T.barrier_arrive");
}

tc_val *ev_t_mbarrier_arrive(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[1] && a->p[1]->kind != TV_NONE)
    ev_fail(ev, arg_loc(a, 1), "T.mbarrier_arrive: cta_id arrives on a cluster barrier; thread-block clusters need sm_90 cluster launch, which tilec does not model");
  return arrive(ev, a, "T.mbarrier_arrive");
}

/* ---- wait(parity): passes when the completed-phase count has the other parity ---- */
static tc_val *wait_parity(tc_ev *ev, tc_args *a, const char *what) {
  tc_loc loc = call_loc(a);
  if (!ev->cur) ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)'", what);
  barrier_ref r = barrier_arg(ev, a->p[0], arg_loc(a, 0), what);
  tc_val *pv = ev_scalar(ev, a->p[1], arg_loc(a, 1));
  tc_expr *parity = ev_to_expr(ev, pv, arg_loc(a, 1));
  if (!tc_dtype_is_int(parity->dtype)) ev_fail(ev, arg_loc(a, 1), "%s: the parity must be an integer", what);
  parity = tc_ir_binary(ev->ir, TC_OP_FLOORMOD, ev_cast(ev, parity, tc_dt(TC_DT_INT32), loc), tc_ir_int(ev->ir, 2, tc_dt(TC_DT_INT32), loc), loc);
  tc_expr *phases = tc_ir_binary(ev->ir, TC_OP_FLOORDIV, counter_load(ev, &r, loc), r.count, loc);
  tc_expr *done = tc_ir_binary(ev->ir, TC_OP_FLOORMOD, phases, tc_ir_int(ev->ir, 2, tc_dt(TC_DT_INT32), loc), loc);
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_ASSERT, loc);
  st->u.assert_.cond = tc_ir_binary(ev->ir, TC_OP_NE, done, parity, loc);
  st->u.assert_.msg = tc_arena_printf(ev->ir,
                                      "%s:%d:%d: %s waits for a barrier phase that has not completed when the block reaches it in "
                                      "the order the cpu reference runs warp groups (one after another in program order, but a "
                                      "producer's and a consumer's loops of one trip count iteration by iteration), so it cannot "
                                      "run a wait that needs an arrival later in that order",
                                      ev->src && ev->src->name ? ev->src->name : "?", loc.line, loc.col, what);
  ev_emit(ev, st, loc, what);
  return tv_none(ev);
}

tc_val *ev_t_barrier_wait(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return wait_parity(ev, a, "T.barrier_wait");
}

tc_val *ev_t_mbarrier_wait_parity(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return wait_parity(ev, a, "T.mbarrier_wait_parity");
}

void ev_check_barrier_arg(tc_ev *ev, tc_val *v, tc_loc loc, const char *what) { (void)barrier_arg(ev, v, loc, what); }

/* ---- with T.ws(k, ...) ---- */
tc_val *ev_t_ws(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_val *l = a->p[0];
  int n = l->kind == TV_TUPLE || l->kind == TV_LIST ? l->u.seq.n : 0;
  if (n < 1 || n > 8) ev_fail(ev, loc, "T.ws takes 1 to 8 warp group indices");
  tc_val *v = tv_new(ev, TV_WARP_GROUP);
  v->u.ws.n = n;
  for (int i = 0; i < n; i++) {
    tc_val *x = l->u.seq.v[i];
    if (x->kind != TV_INT) ev_fail(ev, loc, "T.ws: a warp group index must be an int known at compile time, not %s", tv_kind_name(x));
    v->u.ws.ids[i] = x->u.i;
  }
  v->u.ws.loc = loc;
  return v;
}

typedef struct thread_use {
  bool found;
  tc_loc loc;
} thread_use;

static tc_expr *find_thread_var(void *ctx, tc_expr *e) {
  bool *found = ctx;
  if (e->op == TC_OP_VAR && e->var && e->var->kind == TC_VAR_THREAD_IDX) *found = true;
  return e;
}

/* Pre-order: the last statement that reads the thread index is the innermost one. */
static bool stmt_reads_thread(void *ctx, tc_stmt *s) {
  thread_use *u = ctx;
  bool found = false;
  tc_rewrite_stmt_exprs(s, find_thread_var, &found);
  if (found) u->found = true, u->loc = s->loc;
  return found;
}

static bool stmt_is_gemm(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_GEMM) *(bool *)ctx = true;
  return !*(bool *)ctx;
}

void ev_ws_enter(tc_ev *ev, tc_val *ws, const tc_ast_list *body, tc_loc loc) {
  if (!ev->cur) ev_fail(ev, loc, "'with T.ws(...)' must be inside 'with T.Kernel(...)'");
  if (ev->ws_threads) ev_fail(ev, loc, "'with T.ws(...)' inside another T.ws");
  int64_t threads = block_threads(ev);
  for (int i = 0; i < ws->u.ws.n; i++) {
    int64_t g = ws->u.ws.ids[i];
    for (int j = 0; j < i; j++)
      if (ws->u.ws.ids[j] == g) ev_fail(ev, ws->u.ws.loc, "T.ws: warp group %lld is listed twice", (long long)g);
    if (g < 0 || (g + 1) * WARP_GROUP_THREADS > threads)
      ev_fail(ev, ws->u.ws.loc, "T.ws(%lld): warp group %lld is threads [%lld, %lld), but the block has %lld threads", (long long)g,
              (long long)g, (long long)(g * WARP_GROUP_THREADS), (long long)((g + 1) * WARP_GROUP_THREADS), (long long)threads);
  }
  mark_kernel(ev, ws->u.ws.loc);
  int first = ev->cur->n;
  ev->ws_threads = (int64_t)ws->u.ws.n * WARP_GROUP_THREADS;
  tc_flow f = ev_block(ev, body);
  ev->ws_threads = 0;
  if (f == FLOW_RETURN || f == FLOW_BREAK || f == FLOW_CONTINUE)
    ev_unsupported(ev, loc, "'return', 'break' or 'continue' inside 'with T.ws(...)'");
  thread_use u = {false, {0}};
  for (int i = first; i < ev->cur->n; i++) tc_visit_stmts(ev->cur->items[i], stmt_reads_thread, &u);
  bool gemm = false;
  for (int i = first; i < ev->cur->n; i++) tc_visit_stmts(ev->cur->items[i], stmt_is_gemm, &gemm);
  if (gemm)
    for (int i = 0; i < ws->u.ws.n; i++)
      if (ws->u.ws.ids[i] < 32) ev->k->ws_gemm_groups |= 1u << ws->u.ws.ids[i];
  if (u.found)
    ev_fail(ev, u.loc, "this statement inside 'with T.ws(...)' reads the thread index; tilec runs a warp group's body as a whole "
                       "(its tile operations, T.Parallel loops and scalar code), not on the group's own threads");
}

/* ---- `if tx < C:` with tile operations in its branches ----
 * TileLang reads an 'if' on the thread index whose branches hold tile operations as warp
 * specialization: each branch's tile operations are carried out by the threads the condition
 * selects (its layout inference bounds the thread range by the condition; deepseek_mhc's
 * `if T.get_thread_binding() < 32:`). As for T.ws, a tile operation's result does not depend on
 * which threads carry it out, so the reader emits each branch in place, the then-branch first,
 * with its arrivals counted for the threads the condition selects, and refuses a branch that
 * reads the thread index. */

static const tc_expr *strip_casts(const tc_expr *e) {
  while (e->op == TC_OP_CAST) e = e->args[0];
  return e;
}

static bool is_thread_x(const tc_expr *e) {
  e = strip_casts(e);
  return e->op == TC_OP_VAR && e->var && e->var->kind == TC_VAR_THREAD_IDX && e->var->axis == 0;
}

int64_t ev_thread_range_split(tc_ev *ev, const tc_expr *cond) {
  int64_t threads = block_threads(ev);
  if (ev->threads_ndim < 1 || threads != ev->threads[0]) return -1; /* a 1-D block: tx is the thread */
  if (cond->op != TC_OP_LT && cond->op != TC_OP_LE && cond->op != TC_OP_GT && cond->op != TC_OP_GE) return -1;
  const tc_expr *l = cond->args[0], *r = cond->args[1];
  int64_t c;
  tc_expr_op op = cond->op;
  if (is_thread_x(r) && tc_expr_const_int(strip_casts(l), &c)) { /* C > tx is tx < C */
    const tc_expr *t = l;
    l = r, r = t;
    op = op == TC_OP_LT ? TC_OP_GT : op == TC_OP_LE ? TC_OP_GE : op == TC_OP_GT ? TC_OP_LT : TC_OP_LE;
  } else if (!is_thread_x(l) || !tc_expr_const_int(strip_casts(r), &c)) {
    return -1;
  }
  /* the threads in [0, threads) the comparison selects: a prefix or a suffix */
  int64_t below = op == TC_OP_LT ? c : op == TC_OP_LE ? c + 1 : op == TC_OP_GT ? c + 1 : c; /* the boundary */
  if (below <= 0 || below >= threads) return -1; /* all threads or none: no split */
  return op == TC_OP_LT || op == TC_OP_LE ? below : threads - below;
}

/* A per-thread atomic add counts once per executing thread, so run by the whole block it would
 * count the threads the condition leaves out too: the first one found, pre-order. */
static bool find_thread_atomic(void *ctx, tc_stmt *s) {
  const tc_stmt **found = ctx;
  if (!*found && s->kind == TC_ST_ATOMIC_ADD && !tc_stmt_is_collective(s)) *found = s;
  return *found == NULL;
}

/* ---- a producer and a consumer branch, each around one loop ----
 * A producer/consumer pair (minference's `if tid >= 128:` TMA producer and its consumer) runs
 * its loops side by side: the producer's iteration i waits for the consumer to free the stage
 * of iteration i - stages, so neither branch can run whole before the other. When both
 * branches are [before; for v in range(min, min + n): body; after] with the same bounds, the
 * reader emits one schedule the barriers allow: both befores, one loop running the first
 * branch's body and then the second's for each v, both afters (the producer goes first:
 * else_first). Every wait stays a runtime assert, so a schedule the barriers do not allow
 * stops with that assert's message rather than running racily. */

typedef struct branch_parts {
  tc_stmt **items;
  int n, loop; /* items[loop] is the serial FOR */
  tc_stmt *only; /* items when the branch is one statement */
} branch_parts;

static bool split_at_loop(tc_stmt *s, branch_parts *p) {
  p->only = s;
  p->items = s->kind == TC_ST_SEQ ? s->u.seq.items : &p->only;
  p->n = s->kind == TC_ST_SEQ ? s->u.seq.n : 1;
  p->loop = -1;
  for (int i = 0; i < p->n && p->loop < 0; i++) {
    const tc_stmt *x = p->items[i];
    if (x->kind == TC_ST_FOR && x->u.loop.kind == TC_LOOP_SERIAL) p->loop = i;
  }
  return p->loop >= 0;
}

/* What a statement tree reads and writes, as tc_stmt_accesses reports it; `over` when there
 * were more than the table holds (callers then leave the branches alone). */
enum { MAX_ACCESSED = 64 };
typedef struct access_set {
  const void *read[MAX_ACCESSED], *written[MAX_ACCESSED];
  int nread, nwritten;
  bool over;
} access_set;

static void add_access(access_set *s, const void *x, bool write) {
  const void **t = write ? s->written : s->read;
  int *n = write ? &s->nwritten : &s->nread;
  for (int i = 0; i < *n; i++)
    if (t[i] == x) return;
  if (*n == MAX_ACCESSED) s->over = true;
  else t[(*n)++] = x;
}

static void access_var(void *ctx, const tc_var *v, bool write) { add_access(ctx, v, write); }

static void access_buf(void *ctx, const tc_buffer *b, bool write) {
  if (tc_buffer_is_block_visible(b)) add_access(ctx, b, write);
}

static void access_any_buf(void *ctx, const tc_buffer *b, bool write) { add_access(ctx, b, write); }

static access_set accesses_of(tc_stmt *const *items, int n, bool all_buffers) {
  access_set s = {.nread = 0};
  tc_access_fns f = {access_var, all_buffers ? access_any_buf : access_buf, &s};
  for (int i = 0; i < n; i++) tc_stmt_accesses(&f, items[i], true);
  return s;
}

static bool writes_any_read_by(const access_set *w, const access_set *r) {
  for (int i = 0; i < w->nwritten; i++)
    for (int j = 0; j < r->nread; j++)
      if (w->written[i] == r->read[j]) return true;
  return false;
}

/* the asserts wait_parity emits are the only ones that read a barrier counter */
typedef struct wait_search {
  tc_ev *ev;
  bool found;
} wait_search;

static void note_barrier_load(void *ctx, const tc_buffer *b, bool write) {
  wait_search *w = ctx;
  for (int i = 0; !write && i < w->ev->nbarriers; i++) w->found = w->found || w->ev->barriers[i].buf == b;
}

static bool find_wait(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_ASSERT) tc_expr_accesses(&(tc_access_fns){NULL, note_barrier_load, ctx}, s->u.assert_.cond);
  return !((wait_search *)ctx)->found;
}

static bool waits_before_loop(tc_ev *ev, const branch_parts *p) {
  wait_search w = {ev, false};
  for (int i = 0; i < p->loop && !w.found; i++) tc_visit_stmts(p->items[i], find_wait, &w);
  return w.found;
}

/* The branch that runs first in each iteration: the one whose loop fills block-visible memory
 * the other's loop reads (the producer), else the one that does not wait before its loop (it
 * arrives on what the other waits for), else the then-branch. */
static bool else_first(tc_ev *ev, const branch_parts *t, const branch_parts *e) {
  tc_stmt *tb = t->items[t->loop]->u.loop.body, *eb = e->items[e->loop]->u.loop.body;
  access_set ta = accesses_of(&tb, 1, false), ea = accesses_of(&eb, 1, false);
  if (!ta.over && !ea.over) {
    bool t_feeds = writes_any_read_by(&ta, &ea), e_feeds = writes_any_read_by(&ea, &ta);
    if (t_feeds != e_feeds) return e_feeds;
  }
  return waits_before_loop(ev, t) && !waits_before_loop(ev, e);
}

typedef struct var_subst {
  const tc_var *from;
  tc_var *to;
} var_subst;

static tc_expr *subst_var(void *ctx, tc_expr *e) {
  var_subst *v = ctx;
  if (e->op == TC_OP_VAR && e->var == v->from) e->var = v->to;
  return e;
}

/* Whether statements items[0..n) may change the value of the loop's bounds. */
static bool changes_bounds(tc_stmt *const *items, int n, const tc_stmt *loop) {
  access_set bounds = {.nread = 0};
  tc_access_fns f = {access_var, access_any_buf, &bounds};
  tc_expr_accesses(&f, loop->u.loop.min);
  tc_expr_accesses(&f, loop->u.loop.extent);
  access_set w = accesses_of(items, n, true);
  return bounds.over || w.over || writes_any_read_by(&w, &bounds);
}

static bool interleave_loops(tc_ev *ev, tc_stmt *then_s, tc_stmt *else_s, tc_loc loc) {
  branch_parts t, e;
  if (!split_at_loop(then_s, &t) || !split_at_loop(else_s, &e)) return false;
  tc_stmt *tl = t.items[t.loop], *el = e.items[e.loop];
  if (!ev_expr_equal(tl->u.loop.min, el->u.loop.min) || !ev_expr_equal(tl->u.loop.extent, el->u.loop.extent)) return false;
  const branch_parts *first = else_first(ev, &t, &e) ? &e : &t, *second = first == &t ? &e : &t;
  /* the fused loop evaluates its bounds after both befores; in program order the first loop
   * evaluates them before the second's before, and the second after the whole first branch */
  if (changes_bounds(second->items, second->loop, tl) || changes_bounds(first->items + first->loop, first->n - first->loop, tl))
    return false;
  tc_stmt *l1 = first->items[first->loop], *l2 = second->items[second->loop];
  const char *what = "a branch of an 'if' on the thread index";
  for (int i = 0; i < first->loop; i++) ev_emit(ev, first->items[i], loc, what);
  for (int i = 0; i < second->loop; i++) ev_emit(ev, second->items[i], loc, what);
  var_subst v = {l2->u.loop.var, l1->u.loop.var};
  tc_rewrite_stmt_exprs(l2->u.loop.body, subst_var, &v);
  tc_stmt **body = TC_NEW_ARRAY(ev->ir, tc_stmt *, 2);
  body[0] = l1->u.loop.body;
  body[1] = l2->u.loop.body;
  l1->u.loop.body = tc_ir_seq(ev->ir, 2, body, l1->loc);
  ev_emit(ev, l1, loc, what);
  for (int i = first->loop + 1; i < first->n; i++) ev_emit(ev, first->items[i], loc, what);
  for (int i = second->loop + 1; i < second->n; i++) ev_emit(ev, second->items[i], loc, what);
  return true;
}

bool ev_ws_split_branches(tc_ev *ev, tc_stmt *st, tc_loc loc) {
  bool collective = (st->u.if_.then_s && tc_stmt_contains_collective(st->u.if_.then_s)) ||
                    (st->u.if_.else_s && tc_stmt_contains_collective(st->u.if_.else_s));
  if (!collective) return false; /* per-thread code: an ordinary 'if' */
  thread_use u = {false, {0}};
  if (st->u.if_.then_s) tc_visit_stmts(st->u.if_.then_s, stmt_reads_thread, &u);
  if (st->u.if_.else_s) tc_visit_stmts(st->u.if_.else_s, stmt_reads_thread, &u);
  if (u.found)
    ev_fail(ev, u.loc, "this statement reads the thread index inside a branch of an 'if' on the thread index that holds tile "
                       "operations; tilec runs such a branch as a whole (as it runs a T.ws body), not on the threads the "
                       "condition selects");
  const tc_stmt *atomic = NULL;
  if (st->u.if_.then_s) tc_visit_stmts(st->u.if_.then_s, find_thread_atomic, &atomic);
  if (st->u.if_.else_s) tc_visit_stmts(st->u.if_.else_s, find_thread_atomic, &atomic);
  if (atomic)
    ev_fail(ev, atomic->loc, "a per-thread T.atomic_add inside a branch of an 'if' on the thread index that holds tile "
                             "operations; tilec runs such a branch on every thread, so it would add once for each thread "
                             "of the block, not once for each thread the condition selects");
  mark_kernel(ev, loc);
  if (st->u.if_.then_s && st->u.if_.else_s && interleave_loops(ev, st->u.if_.then_s, st->u.if_.else_s, loc)) return true;
  if (st->u.if_.then_s) ev_emit(ev, st->u.if_.then_s, loc, "a branch of an 'if' on the thread index");
  if (st->u.if_.else_s) ev_emit(ev, st->u.if_.else_s, loc, "a branch of an 'if' on the thread index");
  return true;
}
