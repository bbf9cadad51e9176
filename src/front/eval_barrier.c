/* eval_barrier.c: T.sync_threads(barrier_id, arrive_count), a named barrier of part of the block.
 *
 * TileLang lowers it to `bar.sync id, count`: the `count` threads that reach it wait for each
 * other, and it is written under a condition that selects exactly those threads
 * (topk_selector.py: `if tx < RADIX:` ... `T.sync_threads(3, RADIX)`). tilec's reference runs a
 * block's threads in lockstep and its cpu target runs them one after another between barriers,
 * so neither can hold a barrier under a thread-dependent condition. The reader moves the
 * condition below such barriers instead: `if c: A; sync; B` becomes `if c: A`, a barrier of
 * the whole block, `if c: B` (and a serial loop of uniform bounds around barriers is kept, its
 * body split the same way). The other threads wait at the barrier too, which synchronizes more
 * and changes no result of a program whose barriers order its accesses. For that to keep the
 * meaning, c must not change in between: it may only read thread indices and constants. The
 * conditions a barrier was moved out of are kept with it; when the kernel block ends, the
 * threads they select (evaluated for every thread) must number exactly `count`, as the
 * hardware barrier requires. */
#include "front/eval_int.h"

#include <string.h>

static int find_pbar(const tc_ev *ev, const tc_stmt *s) {
  for (int i = 0; i < ev->npbars; i++)
    if (ev->pbars[i].s == s) return i;
  return -1;
}

void ev_partial_barrier(tc_ev *ev, int64_t count, tc_loc loc) {
  int64_t nth = 1;
  for (int i = 0; i < ev->threads_ndim; i++) nth *= ev->threads[i];
  if (count < 1 || count > nth)
    ev_fail(ev, loc, "T.sync_threads: the arrive count %lld is not between 1 and the block's %lld threads", (long long)count,
            (long long)nth);
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_BARRIER, loc);
  if (count < nth) { /* the whole block's barrier needs no more */
    if (ev->npbars == ev->cappbars) {
      int cap = ev->cappbars ? ev->cappbars * 2 : 8;
      ev->pbars = tc_arena_grow(&ev->tmp, ev->pbars, sizeof *ev->pbars * (size_t)ev->cappbars, sizeof *ev->pbars * (size_t)cap);
      ev->cappbars = cap;
    }
    ev->pbars[ev->npbars].s = s;
    ev->pbars[ev->npbars].count = count;
    ev->pbars[ev->npbars].cond = NULL;
    ev->npbars++;
  }
  ev_emit(ev, s, loc, "T.sync_threads");
}

static bool contains_pbar(const tc_ev *ev, const tc_stmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case TC_ST_BARRIER: return find_pbar(ev, s) >= 0;
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (contains_pbar(ev, s->u.seq.items[i])) return true;
    return false;
  case TC_ST_FOR: return contains_pbar(ev, s->u.loop.body);
  case TC_ST_IF: return contains_pbar(ev, s->u.if_.then_s) || contains_pbar(ev, s->u.if_.else_s);
  case TC_ST_WHILE: return contains_pbar(ev, s->u.while_.body);
  default: return false;
  }
}

bool ev_contains_partial_barrier(const tc_ev *ev, const tc_stmt *s) { return ev->npbars > 0 && contains_pbar(ev, s); }

/* Whether e reads only thread indices and constants (no loads, no other variables). */
static bool thread_only(const tc_expr *e) {
  if (!e) return true;
  if (e->op == TC_OP_LOAD || e->op == TC_OP_CALL || e->op == TC_OP_ADDRESS_OF) return false;
  if (e->op == TC_OP_VAR && e->var->kind != TC_VAR_THREAD_IDX) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!thread_only(e->args[i])) return false;
  return true;
}

/* Whether e is the same for every thread in a block and cannot change in a loop body: no
 * thread indices, loads or local variables. */
static bool fixed_uniform(const tc_expr *e) {
  if (!e) return true;
  if (e->op == TC_OP_LOAD || e->op == TC_OP_CALL || e->op == TC_OP_ADDRESS_OF) return false;
  if (e->op == TC_OP_VAR && (e->var->kind == TC_VAR_THREAD_IDX || e->var->kind == TC_VAR_LOCAL)) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!fixed_uniform(e->args[i])) return false;
  return true;
}

static tc_expr *both(tc_ev *ev, tc_expr *a, tc_expr *b, tc_loc loc) {
  return !a ? b : !b ? a : tc_ir_binary(ev->ir, TC_OP_AND, tc_ir_clone_expr(ev->ir, a), tc_ir_clone_expr(ev->ir, b), loc);
}

static void flush(tc_ev *ev, tc_expr *c, tc_stmt_list *group, tc_stmt_list *out, tc_loc loc) {
  if (!group->n) return;
  tc_stmt_list_push(ev->ir, out, tc_ir_if_then(ev->ir, tc_ir_clone_expr(ev->ir, c), tc_stmt_list_seq(ev->ir, group, loc), loc));
  memset(group, 0, sizeof *group);
}

static void flatten(tc_ev *ev, tc_stmt *s, tc_stmt_list *l) {
  if (s && s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(ev, s->u.seq.items[i], l);
  } else if (s) {
    tc_stmt_list_push(ev->ir, l, s);
  }
}

static void split(tc_ev *ev, tc_expr *c, tc_stmt *body, tc_stmt_list *out, tc_loc loc) {
  tc_stmt_list items = {0}, group = {0};
  flatten(ev, body, &items);
  for (int i = 0; i < items.n; i++) {
    tc_stmt *s = items.items[i];
    int pb = s->kind == TC_ST_BARRIER ? find_pbar(ev, s) : -1;
    if (pb >= 0) {
      flush(ev, c, &group, out, loc);
      ev->pbars[pb].cond = both(ev, c, ev->pbars[pb].cond, loc);
      tc_stmt_list_push(ev->ir, out, s);
    } else if (contains_pbar(ev, s)) {
      flush(ev, c, &group, out, loc);
      if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL && fixed_uniform(s->u.loop.min) && fixed_uniform(s->u.loop.extent)) {
        tc_stmt *f = tc_ir_stmt(ev->ir, TC_ST_FOR, s->loc);
        f->u.loop = s->u.loop;
        tc_stmt_list inner = {0};
        split(ev, c, s->u.loop.body, &inner, s->loc);
        f->u.loop.body = tc_stmt_list_seq(ev->ir, &inner, s->loc);
        tc_stmt_list_push(ev->ir, out, f);
      } else if (s->kind == TC_ST_IF && !s->u.if_.else_s && thread_only(s->u.if_.cond)) {
        split(ev, both(ev, c, s->u.if_.cond, s->loc), s->u.if_.then_s, out, s->loc);
      } else {
        ev_unsupported(ev, s->loc,
                       "T.sync_threads(id, count) in this statement under a thread-dependent condition (tilec moves the "
                       "condition below the barrier through serial loops of fixed bounds and 'if's on thread indices only)");
      }
    } else if (s->kind == TC_ST_ALLOC || (s->kind == TC_ST_LET && fixed_uniform(s->u.let.value))) {
      /* declarations stay visible to the later pieces; a LET of a uniform value is the same for all */
      flush(ev, c, &group, out, loc);
      tc_stmt_list_push(ev->ir, out, s);
    } else if (s->kind == TC_ST_LET) {
      for (int j = i + 1; j < items.n; j++)
        if (contains_pbar(ev, items.items[j]))
          ev_unsupported(ev, s->loc,
                         "a thread-dependent value bound before a T.sync_threads(id, count) and used after it under the same "
                         "condition (make it a T.alloc_var cell)");
      tc_stmt_list_push(ev->ir, &group, s);
    } else {
      tc_stmt_list_push(ev->ir, &group, s);
    }
  }
  flush(ev, c, &group, out, loc);
}

tc_stmt *ev_hoist_partial_barriers(tc_ev *ev, tc_stmt *ifs) {
  tc_expr *c = ifs->u.if_.cond;
  if (ifs->u.if_.else_s)
    ev_unsupported(ev, ifs->loc, "T.sync_threads(id, count) under an 'if' with an 'else' branch");
  if (!thread_only(c))
    ev_unsupported(ev, ifs->loc,
                   "T.sync_threads(id, count) under a condition that reads more than the thread index (tilec moves the "
                   "condition below the barrier, so it must not change in between)");
  tc_stmt_list out = {0};
  split(ev, c, ifs->u.if_.then_s, &out, ifs->loc);
  return tc_stmt_list_seq(ev->ir, &out, ifs->loc);
}

typedef struct tid_ctx {
  int64_t coord[3];
} tid_ctx;

static bool bind_tid(void *ctx, const tc_var *v, int64_t *out) {
  if (v->kind != TC_VAR_THREAD_IDX || v->axis < 0 || v->axis > 2) return false;
  *out = ((const tid_ctx *)ctx)->coord[v->axis];
  return true;
}

void ev_check_partial_barriers(tc_ev *ev) {
  int64_t nth = 1, dim[3] = {1, 1, 1};
  for (int i = 0; i < ev->threads_ndim; i++) nth *= (dim[i] = ev->threads[i]);
  for (int i = 0; i < ev->npbars; i++) {
    int64_t n = 0;
    if (!ev->pbars[i].cond) n = nth;
    for (int64_t t = 0; ev->pbars[i].cond && t < nth; t++) {
      tid_ctx tc = {{t % dim[0], t / dim[0] % dim[1], t / (dim[0] * dim[1])}};
      int64_t v;
      if (!tc_expr_eval_int(ev->pbars[i].cond, bind_tid, &tc, &v))
        ev_fail(ev, ev->pbars[i].s->loc, "T.sync_threads: cannot work out which threads reach this barrier");
      n += v != 0;
    }
    if (n != ev->pbars[i].count)
      ev_fail(ev, ev->pbars[i].s->loc,
              "T.sync_threads: %lld thread%s reach this barrier, but its arrive count is %lld (the condition around a named "
              "barrier must select exactly that many threads)",
              (long long)n, n == 1 ? "" : "s", (long long)ev->pbars[i].count);
  }
  ev->npbars = 0;
}
