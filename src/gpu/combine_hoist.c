/* combine_hoist.c: the gpu-hoist-combines pass.
 *
 * A T.Parallel loop that combines several iterations into one element of a replicated fragment
 * (`o[i] += a[i, j] * x[j]`, a T.alloc_reducer's update) is lowered by tileops.c
 * (par_reduce_wrap) as three parts: save the fragment's registers and start them from the op's
 * identity; run the loop, each thread updating its own copy; combine the copies through shared
 * memory (two barriers) and fold in the saved value. Inside a serial loop whose body touches the
 * fragment nowhere else (a GEMV's loop over K), the first part can run once before that loop and
 * the last once after it: the copies keep accumulating across the iterations, and the op being
 * associative and commutative the folded value is the same. That takes the barriers and the
 * shared-memory round trip out of every iteration, as TileLang's reducers defer their combine
 * to T.finalize_reducer. Applied from the innermost loop outwards, each move leaving a wrap of
 * the same three parts around the loop for the next one out. */
#include "gpu/gpu_internal.h"
#include "ir/walk.h"

typedef struct ref_count {
  tc_buffer *const *bufs;
  int nbufs;
  int64_t n;
} ref_count;

static void count_slot(void *ctx, tc_buffer **slot, const tc_stmt *where) {
  ref_count *R = ctx;
  (void)where;
  for (int i = 0; i < R->nbufs; i++)
    if (*slot == R->bufs[i]) R->n++;
}

static int64_t refs_in(tc_stmt *s, tc_buffer *const *bufs, int nbufs) {
  ref_count R = {bufs, nbufs, 0};
  if (s) tc_visit_buffer_slots(s, count_slot, &R);
  return R.n;
}

/* The register arrays a wrap's first part saves (the buffers its stores write that it did not
 * allocate itself). */
typedef struct saved_regs {
  tc_buffer *allocated[32], *stored[32];
  int nalloc, nstored;
} saved_regs;

static bool saved_cb(void *ctx, tc_stmt *s) {
  saved_regs *S = ctx;
  if (s->kind == TC_ST_ALLOC && S->nalloc < 32) S->allocated[S->nalloc++] = s->u.alloc.buf;
  if (s->kind == TC_ST_STORE && S->nstored < 32) {
    for (int i = 0; i < S->nstored; i++)
      if (S->stored[i] == s->u.store.buf) return true;
    S->stored[S->nstored++] = s->u.store.buf;
  }
  return true;
}

static int wrap_regs(tc_stmt *pre, tc_buffer **out) {
  saved_regs S = {0};
  tc_visit_stmts(pre, saved_cb, &S);
  int n = 0;
  for (int i = 0; i < S.nstored; i++) {
    bool mine = false;
    for (int j = 0; j < S.nalloc; j++) mine |= S.stored[i] == S.allocated[j];
    if (!mine) out[n++] = S.stored[i];
  }
  return n;
}

static bool is_wrap(const tc_gpu_plan *P, const tc_stmt *s) {
  return s && s->kind == TC_ST_SEQ && s->u.seq.n == 3 && tc_stmt_set_has(&P->combine_wraps, s);
}

/* The wraps inside s (not inside another wrap), in program order. */
typedef struct wrap_list {
  const tc_gpu_plan *P;
  tc_stmt *v[16];
  int n;
} wrap_list;

static bool find_wraps_cb(void *ctx, tc_stmt *s) {
  wrap_list *W = ctx;
  if (!is_wrap(W->P, s)) return true;
  if (W->n < 16) W->v[W->n++] = s;
  return false;
}

/* Replace statement `from` by `to` somewhere below s (by slot). */
static bool replace_stmt(tc_stmt *s, tc_stmt *from, tc_stmt *to) {
  if (!s) return false;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) {
      if (s->u.seq.items[i] == from) return s->u.seq.items[i] = to, true;
      if (replace_stmt(s->u.seq.items[i], from, to)) return true;
    }
    return false;
  case TC_ST_FOR:
    if (s->u.loop.body == from) return s->u.loop.body = to, true;
    return replace_stmt(s->u.loop.body, from, to);
  case TC_ST_WHILE:
    if (s->u.while_.body == from) return s->u.while_.body = to, true;
    return replace_stmt(s->u.while_.body, from, to);
  case TC_ST_IF:
    if (s->u.if_.then_s == from) return s->u.if_.then_s = to, true;
    if (s->u.if_.else_s == from) return s->u.if_.else_s = to, true;
    return replace_stmt(s->u.if_.then_s, from, to) || replace_stmt(s->u.if_.else_s, from, to);
  default: return false;
  }
}

/* A serial loop: move out the wraps whose fragments its body touches nowhere else. Returns the
 * statement that takes the loop's place (the loop, or a new wrap around it). */
static tc_stmt *hoist_from_loop(tc_gpu_plan *P, tc_stmt *loop, int *moved) {
  wrap_list W = {P, {0}, 0};
  tc_visit_stmts(loop->u.loop.body, find_wraps_cb, &W);
  tc_stmt_list pre = {0}, post = {0};
  for (int i = 0; i < W.n; i++) {
    tc_stmt *w = W.v[i];
    tc_buffer *regs[32];
    int nregs = wrap_regs(w->u.seq.items[0], regs);
    if (nregs == 0 || refs_in(loop, regs, nregs) != refs_in(w, regs, nregs)) continue;
    /* the combined fragments are used only by this wrap in the loop (its bounds included) */
    if (!replace_stmt(loop, w, w->u.seq.items[1])) continue;
    tc_stmt_list_push(P->a, &pre, w->u.seq.items[0]);
    tc_stmt_list_push(P->a, &post, w->u.seq.items[2]);
    (*moved)++;
  }
  if (!pre.n) return loop;
  tc_stmt *items[3] = {tc_stmt_list_seq(P->a, &pre, loop->loc), loop, tc_stmt_list_seq(P->a, &post, loop->loc)};
  tc_stmt *wrap = tc_ir_seq(P->a, 3, items, loop->loc);
  tc_stmt_set_add(P->a, &P->combine_wraps, wrap);
  return wrap;
}

static tc_stmt *hoist(tc_gpu_plan *P, tc_stmt *s, int *moved) {
  if (!s) return s;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) s->u.seq.items[i] = hoist(P, s->u.seq.items[i], moved);
    return s;
  case TC_ST_IF:
    s->u.if_.then_s = hoist(P, s->u.if_.then_s, moved);
    s->u.if_.else_s = hoist(P, s->u.if_.else_s, moved);
    return s;
  case TC_ST_WHILE:
    s->u.while_.body = hoist(P, s->u.while_.body, moved);
    return s;
  case TC_ST_FOR:
    s->u.loop.body = hoist(P, s->u.loop.body, moved);
    /* every thread runs a serial loop the same number of times (the combine has barriers) */
    if (s->u.loop.kind != TC_LOOP_SERIAL && s->u.loop.kind != TC_LOOP_PIPELINED && s->u.loop.kind != TC_LOOP_UNROLL) return s;
    return hoist_from_loop(P, s, moved);
  default: return s;
  }
}

bool tc_gpu_hoist_combines(tc_gpu_plan *P) {
  if (!P->combine_wraps.n) return true;
  int moved = 0;
  P->k->body = hoist(P, P->k->body, &moved);
  if (moved && P->notes)
    tc_sb_printf(P->notes, "combines: %d T.Parallel combine%s into replicated fragments moved out of the serial loops around "
                 "them (the replicas are combined once, after the loop)\n", moved, moved == 1 ? "" : "s");
  return true;
}
