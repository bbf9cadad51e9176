/* insert_barriers.c: writes BARRIER statements where the threads of a block need one.
 *
 * Within a statement list, per-thread statements run by every thread in turn (as a GPU block
 * runs them, in any interleaving). Before a per-thread statement that writes block-visible
 * memory (shared or global) an earlier statement since the last synchronisation read or wrote,
 * or reads memory one wrote, another thread may race with it: a barrier goes there (the test
 * is tc_conflict_between, by buffer). Synchronisation points reset the pending accesses: an
 * existing barrier, a collective statement (tile operation or T.Parallel loop: a target that
 * maps it onto threads places its own barriers around it, as the GPU lowering does after
 * mapping), and a serial loop or if that has a barrier or a collective inside (its body is a
 * separate list, handled the same way, and the target runs it as its own step).
 *
 * A serial loop with uniform bounds, under uniform control flow, whose body reads and writes
 * one shared buffer per thread gets a barrier at the end of its body: the next iteration reads
 * what another thread wrote in this one (the back-edge hazard). A barrier is never placed
 * under control flow that depends on the thread index (only some threads would reach it):
 * where one is needed there, the program is rejected. Running the pass again adds nothing.
 * A kernel compiled with TL_DISABLE_THREAD_STORAGE_SYNC places its barriers itself: the pass
 * leaves it as written. */
#include "analysis/analysis.h"
#include "pass/pass.h"

typedef struct bctx {
  tc_arena *a;
  tc_varying V;
  tilec_error *err;
  bool failed;
} bctx;

static void flatten(tc_arena *a, tc_stmt *s, tc_stmt_list *out) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(a, s->u.seq.items[i], out);
    return;
  }
  tc_stmt_list_push(a, out, s);
}

static tc_stmt *barrier_at(tc_arena *a, tc_loc loc) { return tc_ir_stmt(a, TC_ST_BARRIER, loc); }

static bool stmt_uniform(const bctx *c, const tc_stmt *s) {
  if (s->kind == TC_ST_FOR) return !tc_varying_expr(&c->V, s->u.loop.min) && !tc_varying_expr(&c->V, s->u.loop.extent);
  if (s->kind == TC_ST_WHILE) return !tc_varying_expr(&c->V, s->u.while_.cond);
  return !tc_varying_expr(&c->V, s->u.if_.cond);
}

static tc_stmt *place(bctx *c, tc_stmt *body, bool uniform_ctl, bool *synced);

/* A serial loop, a while or an if: place barriers in its bodies; *synced when it must run as its own
 * synchronised step. */
static bool place_control(bctx *c, tc_stmt *s, bool uniform_ctl, bool *synced) {
  bool uniform = stmt_uniform(c, s);
  bool inner_ctl = uniform_ctl && uniform;
  bool sub = false;
  if (s->kind == TC_ST_FOR || s->kind == TC_ST_WHILE) {
    tc_stmt **body = s->kind == TC_ST_FOR ? &s->u.loop.body : &s->u.while_.body;
    *body = place(c, *body, inner_ctl, &sub);
    if (c->failed) return false;
    if (!sub && inner_ctl && tc_varying_stmt(&c->V, *body)) {
      tc_conflict_set cs;
      tc_conflict_init(c->a, &cs, c->V.nids);
      tc_conflict_add_stmt(&cs, *body);
      if (tc_conflict_shared_read_write(&cs)) {
        tc_stmt_list l = {0};
        flatten(c->a, *body, &l);
        tc_stmt_list_push(c->a, &l, barrier_at(c->a, s->loc));
        *body = tc_stmt_list_seq(c->a, &l, *body ? (*body)->loc : s->loc);
        sub = true;
      }
    }
  } else {
    bool sa = false, sb = false;
    s->u.if_.then_s = place(c, s->u.if_.then_s, inner_ctl, &sa);
    if (!c->failed && s->u.if_.else_s) s->u.if_.else_s = place(c, s->u.if_.else_s, inner_ctl, &sb);
    if (c->failed) return false;
    sub = sa || sb;
  }
  if (sub && !uniform) {
    c->failed = true;
    tc_error_sync_under_divergence(c->err, s);
    return false;
  }
  *synced = sub;
  return true;
}

/* Places barriers in one statement list (nested sequences flattened); returns the new list.
 * *synced: the list holds a barrier or a collective statement. */
static tc_stmt *place(bctx *c, tc_stmt *body, bool uniform_ctl, bool *synced) {
  *synced = false;
  if (!body) return NULL;
  tc_stmt_list in = {0}, out = {0};
  flatten(c->a, body, &in);
  tc_conflict_set pending, cur;
  tc_conflict_init(c->a, &pending, c->V.nids);
  tc_conflict_init(c->a, &cur, c->V.nids);
  bool changed = false;
  for (int i = 0; i < in.n; i++) {
    tc_stmt *s = in.items[i];
    bool sync = s->kind == TC_ST_BARRIER || tc_stmt_is_collective(s);
    if (!sync && ((s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL) || s->kind == TC_ST_IF || s->kind == TC_ST_WHILE)) {
      if (!place_control(c, s, uniform_ctl, &sync)) return body;
    }
    if (sync) {
      tc_stmt_list_push(c->a, &out, s);
      tc_conflict_clear(&pending);
      *synced = true;
      continue;
    }
    tc_conflict_clear(&cur);
    tc_conflict_add_stmt(&cur, s);
    if (tc_conflict_between(&pending, &cur)) {
      tc_stmt_list_push(c->a, &out, barrier_at(c->a, s->loc));
      tc_conflict_clear(&pending);
      changed = *synced = true;
    }
    tc_stmt_list_push(c->a, &out, s);
    tc_conflict_merge(&pending, &cur);
  }
  return changed ? tc_stmt_list_seq(c->a, &out, body->loc) : body;
}

bool tc_pass_insert_barriers(tc_arena *arena, tc_kernel_ir *k, tilec_error *err) {
  if (k->no_storage_sync) return true;
  bctx c = {arena, {0}, err, false};
  if (!tc_varying_compute(k, &c.V)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory placing barriers");
    return false;
  }
  bool synced;
  k->body = place(&c, k->body, true, &synced);
  tc_varying_free(&c.V);
  return !c.failed;
}
