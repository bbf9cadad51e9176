/* barrier.c: block barriers where shared memory has a hazard, and nowhere else.
 *
 * After lowering, every statement is run by every thread. A barrier is needed before a
 * statement that reads a block-visible buffer (shared, or global) written since the last
 * barrier, or writes one read or written since then. Register arrays and per-thread buffers
 * never need one. Control flow that may differ between threads (a condition or loop bound that
 * depends on the thread index) cannot hold a barrier, so such a statement is treated as one
 * access; uniform loops and ifs are entered, and a loop's back edge is a hazard like any other.
 * Atomics do not conflict with each other, but do with plain reads and writes of the same
 * buffer (clearing a shared histogram, then adding into it, needs the barrier between: the
 * Metal emulator showed the race). */
#include <string.h>

#include "analysis/analysis.h"
#include "gpu/gpu_internal.h"

typedef struct bset {
  int n;
  unsigned char *r, *w, *a; /* read, written, updated atomically */
} bset;

typedef struct bctx {
  tc_gpu_plan *P;
  int n;
  tc_varying varying; /* what may differ between threads (src/analysis/varying.c) */
} bctx;

static bset bs_new(bctx *C) {
  bset s = {C->n, TC_NEW_ARRAY(C->P->a, unsigned char, C->n), TC_NEW_ARRAY(C->P->a, unsigned char, C->n),
            TC_NEW_ARRAY(C->P->a, unsigned char, C->n)};
  return s;
}
static void bs_clear(bset *s) {
  memset(s->r, 0, (size_t)s->n);
  memset(s->w, 0, (size_t)s->n);
  memset(s->a, 0, (size_t)s->n);
}
static void bs_union(bset *d, const bset *s) {
  for (int i = 0; i < d->n; i++) d->r[i] |= s->r[i], d->w[i] |= s->w[i], d->a[i] |= s->a[i];
}
static void bs_copy(bset *d, const bset *s) {
  memcpy(d->r, s->r, (size_t)d->n);
  memcpy(d->w, s->w, (size_t)d->n);
  memcpy(d->a, s->a, (size_t)d->n);
}
static bool bs_conflict(const bset *state, const bset *acc) {
  for (int i = 0; i < state->n; i++)
    if ((acc->r[i] && (state->w[i] || state->a[i])) || (acc->w[i] && (state->r[i] || state->w[i] || state->a[i])) ||
        (acc->a[i] && (state->r[i] || state->w[i])))
      return true;
  return false;
}

/* Under pass_configs TL_DISABLE_THREAD_STORAGE_SYNC the program places the barriers for its own
 * shared tiles and tensors (TileLang then skips its thread-sync pass); the tiles the lowering made
 * (fragments moved to shared memory, scratch, staging) still get theirs here. */
static bool program_synced(const bctx *C, const tc_buffer *b) {
  const tc_kernel_ir *k = C->P->k;
  return k->no_storage_sync && (b->program_synced || (b->scope == TC_SCOPE_GLOBAL && b->param_index >= 0 && b->param_index < k->nparams));
}
static bool visible_in(const bctx *C, const tc_buffer *b) {
  return b && (b->scope == TC_SCOPE_SHARED || b->scope == TC_SCOPE_GLOBAL) && !program_synced(C, b);
}

static void acc_expr(bctx *C, bset *s, const tc_expr *e) {
  if (!e) return;
  if (e->op == TC_OP_LOAD && visible_in(C, e->buf) && e->buf->id < C->n) s->r[e->buf->id] = 1;
  /* an address alone touches no memory (aligned16 tests it); the intrinsics that take one say
   * what they do with it (acc_stmt) */
  if (e->op == TC_OP_ADDRESS_OF && (!e->buf || !visible_in(C, e->buf) || e->buf->id >= C->n)) return;
  for (int i = 0; i < e->nargs; i++) acc_expr(C, s, e->args[i]);
}

/* Every access of a statement and its children. */
static void acc_stmt(bctx *C, bset *s, const tc_stmt *st) {
  if (!st) return;
  switch (st->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < st->u.seq.n; i++) acc_stmt(C, s, st->u.seq.items[i]);
    break;
  case TC_ST_FOR:
    acc_expr(C, s, st->u.loop.min);
    acc_expr(C, s, st->u.loop.extent);
    acc_stmt(C, s, st->u.loop.body);
    break;
  case TC_ST_IF:
    acc_expr(C, s, st->u.if_.cond);
    acc_stmt(C, s, st->u.if_.then_s);
    acc_stmt(C, s, st->u.if_.else_s);
    break;
  case TC_ST_WHILE:
    acc_expr(C, s, st->u.while_.cond);
    acc_stmt(C, s, st->u.while_.body);
    break;
  case TC_ST_STORE:
    for (int i = 0; i < st->u.store.nidx; i++) acc_expr(C, s, st->u.store.idx[i]);
    acc_expr(C, s, st->u.store.value);
    if (visible_in(C, st->u.store.buf) && st->u.store.buf->id < C->n) s->w[st->u.store.buf->id] = 1;
    break;
  case TC_ST_ATOMIC_ADD: /* atomics commute with each other, not with plain accesses */
    for (int i = 0; i < st->u.atomic.nidx; i++) acc_expr(C, s, st->u.atomic.idx[i]);
    acc_expr(C, s, st->u.atomic.value);
    if (visible_in(C, st->u.atomic.buf) && st->u.atomic.buf->id < C->n) s->a[st->u.atomic.buf->id] = 1;
    break;
  case TC_ST_LET: case TC_ST_ASSIGN: acc_expr(C, s, st->u.let.value); break;
  case TC_ST_EVALUATE: acc_expr(C, s, st->u.evaluate.value); break;
  case TC_ST_INTRINSIC: {
    /* TMA loads and their mbarriers are ordered by the pipeline's own waits and barriers */
    if (!strncmp(st->u.intrinsic.name, "mbar_", 5) || !strcmp(st->u.intrinsic.name, "tma_load")) break;
    /* copy16 / cp_async16 (&dst, &src) write dst and read src; gemm_block reads A and B;
     * simdgroup_store_acc writes its argument 5 (the global tile), tma_store its argument 1 */
    bool copy = !strcmp(st->u.intrinsic.name, "copy16") || !strcmp(st->u.intrinsic.name, "cp_async16") ||
                !strcmp(st->u.intrinsic.name, "copy_vec");
    int written = copy ? 0 : !strcmp(st->u.intrinsic.name, "simdgroup_store_acc") ? 5 : !strcmp(st->u.intrinsic.name, "tma_store") ? 1 : -1;
    for (int i = 0; i < st->u.intrinsic.nargs; i++) {
      const tc_expr *x = st->u.intrinsic.args[i];
      acc_expr(C, s, x);
      if (x->op == TC_OP_ADDRESS_OF && visible_in(C, x->buf) && x->buf->id < C->n) {
        if (i == written) s->w[x->buf->id] = 1;
        else s->r[x->buf->id] = 1;
      }
    }
    break;
  }
  case TC_ST_ASSERT: acc_expr(C, s, st->u.assert_.cond); break;
  case TC_ST_PRINT: acc_expr(C, s, st->u.print.value); break;
  default: break;
  }
}

static bool has_barrier(const tc_stmt *st) {
  if (!st) return false;
  switch (st->kind) {
  case TC_ST_BARRIER: return true;
  case TC_ST_SEQ:
    for (int i = 0; i < st->u.seq.n; i++)
      if (has_barrier(st->u.seq.items[i])) return true;
    return false;
  case TC_ST_FOR: return has_barrier(st->u.loop.body);
  case TC_ST_WHILE: return has_barrier(st->u.while_.body);
  case TC_ST_IF: return has_barrier(st->u.if_.then_s) || has_barrier(st->u.if_.else_s);
  default: return false;
  }
}

static tc_stmt *place(bctx *C, tc_stmt *st, bset *state);
static tc_stmt *place_while(bctx *C, tc_stmt *st, bset *state);

static tc_stmt *place_seq(bctx *C, tc_stmt *st, bset *state) {
  tc_stmt_list out = {0};
  for (int i = 0; i < st->u.seq.n; i++) {
    tc_stmt *c = place(C, st->u.seq.items[i], state);
    if (!c) return NULL;
    if (c->kind == TC_ST_SEQ && c->u.seq.n == 0) continue;
    tc_stmt_list_push(C->P->a, &out, c);
  }
  return tc_stmt_list_seq(C->P->a, &out, st->loc);
}

/* A while loop on a condition every thread evaluates alike. The condition is read on entry and
 * after each trip, so it meets both the state before the loop and the body's end (the back
 * edge), and the body starts after its reads. Where the condition reads what one of those
 * wrote since a barrier, a barrier goes before the loop and at the body's end, so that every
 * evaluation follows one. */
static tc_stmt *place_while(bctx *C, tc_stmt *st, bset *state) {
  tc_gpu_plan *P = C->P;
  bset cond = bs_new(C);
  acc_expr(C, &cond, st->u.while_.cond);
  bset first = bs_new(C); /* a first placement, for the state the body leaves */
  bs_copy(&first, state);
  bs_union(&first, &cond);
  if (!place(C, st->u.while_.body, &first)) return NULL;
  bset at_cond = bs_new(C);
  bs_copy(&at_cond, state);
  bs_union(&at_cond, &first);
  bool sync = bs_conflict(&at_cond, &cond);
  if (sync) bs_clear(&at_cond);
  bset entry = bs_new(C);
  bs_copy(&entry, &at_cond);
  bs_union(&entry, &cond);
  tc_stmt *c = tc_ir_stmt(P->a, TC_ST_WHILE, st->loc);
  *c = *st;
  c->u.while_.body = place(C, st->u.while_.body, &entry);
  if (!c->u.while_.body) return NULL;
  if (sync) {
    tc_stmt_list body = {0}, out = {0};
    tc_stmt_list_push(P->a, &body, c->u.while_.body);
    tc_stmt_list_push(P->a, &body, tc_ir_stmt(P->a, TC_ST_BARRIER, st->loc));
    c->u.while_.body = tc_stmt_list_seq(P->a, &body, st->loc);
    tc_stmt_list_push(P->a, &out, tc_ir_stmt(P->a, TC_ST_BARRIER, st->loc));
    tc_stmt_list_push(P->a, &out, c);
    bs_copy(state, &cond); /* the last evaluation's reads */
    return tc_stmt_list_seq(P->a, &out, st->loc);
  }
  bs_union(state, &entry); /* the last evaluation follows the entry or a trip */
  bs_union(state, &cond);
  return c;
}

static int count_barriers(const tc_stmt *st) {
  if (!st) return 0;
  switch (st->kind) {
  case TC_ST_BARRIER: return 1;
  case TC_ST_SEQ: {
    int n = 0;
    for (int i = 0; i < st->u.seq.n; i++) n += count_barriers(st->u.seq.items[i]);
    return n;
  }
  case TC_ST_FOR: return count_barriers(st->u.loop.body);
  case TC_ST_WHILE: return count_barriers(st->u.while_.body);
  case TC_ST_IF: return count_barriers(st->u.if_.then_s) + count_barriers(st->u.if_.else_s);
  default: return 0;
  }
}

/* A loop every thread runs alike, its body placed in two rounds: the second starts from what the
 * state before the loop and the end of the first leave (the back edge). `entry` gets that state. */
static tc_stmt *place_loop(bctx *C, tc_stmt *st, const bset *state, bset *entry) {
  bset first = bs_new(C);
  bs_copy(&first, state);
  if (!place(C, st->u.loop.body, &first)) return NULL;
  bs_copy(entry, state);
  bs_union(entry, &first);
  tc_stmt *c = tc_ir_stmt(C->P->a, TC_ST_FOR, st->loc);
  *c = *st;
  c->u.loop.body = place(C, st->u.loop.body, entry);
  return c->u.loop.body ? c : NULL;
}

/* Returns the statement with barriers placed; `state` is updated to what is accessed since the
 * last barrier when it ends. */
static tc_stmt *place(bctx *C, tc_stmt *st, bset *state) {
  tc_gpu_plan *P = C->P;
  if (tc_stmt_set_has(&P->async, st)) return st; /* ordered by the pipeline's own waits and barriers */
  bool unit = tc_stmt_set_has(&P->units, st);
  switch (unit ? TC_ST_STORE : st->kind) { /* a unit is one access, like a store */
  case TC_ST_SEQ: return place_seq(C, st, state);
  case TC_ST_BARRIER:
    bs_clear(state);
    return st;
  case TC_ST_FOR:
    if (!tc_varying_expr(&C->varying, st->u.loop.min) && !tc_varying_expr(&C->varying, st->u.loop.extent)) {
      bset entry = bs_new(C);
      tc_stmt *c = place_loop(C, st, state, &entry);
      if (!c) return NULL;
      /* a body that meets what was written before the loop (not only its own back edge) would
       * take a barrier in every trip: one before the loop serves when that leaves fewer inside */
      bset clean = bs_new(C), entry2 = bs_new(C);
      bool planted = P->desc->plant == TC_PLANT_BARRIER; /* the planted bug: as it was planted */
      tc_stmt *c2 = !planted && count_barriers(c->u.loop.body) > 0 ? place_loop(C, st, &clean, &entry2) : NULL;
      if (c2 && count_barriers(c2->u.loop.body) < count_barriers(c->u.loop.body)) {
        tc_stmt *items[2] = {tc_ir_stmt(P->a, TC_ST_BARRIER, st->loc), c2};
        bs_copy(state, &entry2);
        return tc_ir_seq(P->a, 2, items, st->loc);
      }
      bs_union(state, &entry); /* zero trips leave the state as it was */
      return c;
    }
    break;
  case TC_ST_WHILE:
    if (!tc_varying_expr(&C->varying, st->u.while_.cond)) return place_while(C, st, state);
    break;
  case TC_ST_IF:
    if (!tc_varying_expr(&C->varying, st->u.if_.cond)) {
      bset a = bs_new(C), b = bs_new(C);
      bs_copy(&a, state);
      bs_copy(&b, state);
      bset cond = bs_new(C);
      acc_expr(C, &cond, st->u.if_.cond);
      if (bs_conflict(state, &cond)) {
        tc_gpu_fail(P, st->loc, "internal: a condition reads shared memory written without a barrier");
        return NULL;
      }
      tc_stmt *c = tc_ir_stmt(P->a, TC_ST_IF, st->loc);
      *c = *st;
      c->u.if_.then_s = place(C, st->u.if_.then_s, &a);
      if (!c->u.if_.then_s) return NULL;
      if (st->u.if_.else_s && !(c->u.if_.else_s = place(C, st->u.if_.else_s, &b))) return NULL;
      bs_copy(state, &a);
      bs_union(state, &b);
      return c;
    }
    break;
  default: break;
  }
  if (has_barrier(st)) {
    tc_gpu_fail(P, st->loc, "a barrier is needed under control flow that depends on the thread index");
    return NULL;
  }
  bset acc = bs_new(C);
  acc_stmt(C, &acc, st);
  if (bs_conflict(state, &acc) && !(P->desc->plant == TC_PLANT_BARRIER && st->kind == TC_ST_FOR)) {
    tc_stmt_list two = {0};
    tc_stmt_list_push(P->a, &two, tc_ir_stmt(P->a, TC_ST_BARRIER, st->loc));
    tc_stmt_list_push(P->a, &two, st);
    bs_copy(state, &acc);
    return tc_stmt_list_seq(P->a, &two, st->loc);
  }
  bs_union(state, &acc);
  return st;
}

/* Drop a barrier that directly follows another. */
static void dedupe(tc_stmt *st) {
  if (!st) return;
  if (st->kind == TC_ST_SEQ) {
    int n = 0;
    for (int i = 0; i < st->u.seq.n; i++) {
      tc_stmt *c = st->u.seq.items[i];
      dedupe(c);
      if (c->kind == TC_ST_BARRIER && n > 0 && st->u.seq.items[n - 1]->kind == TC_ST_BARRIER) continue;
      st->u.seq.items[n++] = c;
    }
    st->u.seq.n = n;
  } else if (st->kind == TC_ST_FOR) {
    dedupe(st->u.loop.body);
  } else if (st->kind == TC_ST_WHILE) {
    dedupe(st->u.while_.body);
  } else if (st->kind == TC_ST_IF) {
    dedupe(st->u.if_.then_s);
    dedupe(st->u.if_.else_s);
  }
}

bool tc_gpu_insert_barriers(tc_gpu_plan *P) {
  bctx C = {P, P->k->next_id + 1, {0}};
  if (!tc_varying_compute(P->k, &C.varying)) {
    tc_error(P->err, TILEC_ERROR_NOMEM, "out of memory placing barriers");
    return false;
  }
  bset state = bs_new(&C);
  tc_stmt *b = place(&C, P->k->body, &state);
  tc_varying_free(&C.varying);
  if (!b) return false;
  dedupe(b);
  P->k->body = b;
  return true;
}
