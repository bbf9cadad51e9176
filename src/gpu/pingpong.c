/* pingpong.c: the consumer warpgroups of a warp-specialized loop take turns at the tensor cores.
 *
 * A warp-specialized loop (pipeline.c) whose consumer part runs two wgmma gemms with other work
 * between them (attention: S = Q K^T, the softmax, O += P V) keeps the tensor cores idle while
 * every warpgroup does that work at the same time, as they do when nothing staggers them. With
 * turns, warpgroup w runs the second gemm of one iteration and the first of the next while
 * warpgroup w+1 runs its softmax, and the other way round (FlashAttention-3's "ping-pong"):
 *
 *     wg_turn_wait               before the loop
 *     for k:  ... gemm 1, wg_turn_pass, softmax ..., wg_turn_wait, gemm 2 ...
 *     wg_turn_pass               after the loop
 *
 * wg_turn_wait waits until the previous consumer warpgroup (cyclically) has passed the turn;
 * wg_turn_pass hands it to the next (the last warpgroup passes once as the kernel starts: the
 * target's part). Each warpgroup thus alternates wait and pass, so a turn is never passed twice
 * before it is taken. The turns order the warpgroups and never change a result; the
 * interpreter ignores them. What they must not do is deadlock, so the pass takes the loop only
 * when
 *   - the span a warpgroup holds the turn over (from the last gemm to the end of the body and
 *     from its start to the first gemm) has no barrier over every consumer (the other
 *     warpgroup would be waiting for the turn), and
 *   - the pipeline has 2 or more stages and frees each stage in the iteration that read it, so
 *     the producer can fill the next stage while one warpgroup holds the turn waiting for it. */
#include "gpu/gpu_internal.h"
#include "ir/walk.h"

#include <string.h>

typedef struct flat {
  tc_stmt **v;
  int n, cap;
} flat;

static void flatten(tc_arena *a, flat *f, tc_stmt *s) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(a, f, s->u.seq.items[i]);
    return;
  }
  if (f->n == f->cap) {
    int cap = f->cap ? 2 * f->cap : 32;
    tc_stmt **v = TC_NEW_ARRAY(a, tc_stmt *, cap);
    if (f->n) memcpy(v, f->v, sizeof *v * (size_t)f->n);
    f->v = v, f->cap = cap;
  }
  f->v[f->n++] = s;
}

static bool is_intrinsic(const tc_stmt *s, const char *name) {
  return s->kind == TC_ST_INTRINSIC && !strcmp(s->u.intrinsic.name, name);
}

/* A wgmma gemm_block that returns with its accumulator final (wait 0). */
static int wgmma_kind(const tc_stmt *s) {
  if (!is_intrinsic(s, "gemm_block") || s->u.intrinsic.nargs != 14) return 0;
  int64_t instr = -1, wait = -1;
  if (!tc_expr_const_int(s->u.intrinsic.args[7], &instr) || instr != 1) return 0;
  if (!tc_expr_const_int(s->u.intrinsic.args[13], &wait)) return -1;
  return wait == 0 ? 1 : -1; /* -1: an asynchronous mainloop's gemm */
}

static bool barrier_cb(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_BARRIER && s->u.barrier.scope != TC_BARRIER_WARP) *(bool *)ctx = true;
  return true;
}
static bool has_block_barrier(tc_stmt *s) {
  bool found = false;
  tc_visit_stmts(s, barrier_cb, &found);
  return found;
}

static tc_stmt *turn(tc_arena *a, const char *name, tc_loc loc) { return tc_ir_intrinsic_stmt(a, name, 0, NULL, loc); }

/* Why the loop's consumer part takes no turns, or NULL (then *first, *last: the gemms). */
static const char *refusal(tc_gpu_plan *P, const tc_stmt *loop, const flat *f, int *first, int *last) {
  *first = *last = -1;
  for (int i = 0; i < f->n; i++) {
    int w = wgmma_kind(f->v[i]);
    if (w < 0) return "an asynchronous wgmma mainloop";
    if (w == 0) continue;
    if (*first < 0) *first = i;
    *last = i;
  }
  if (*first < 0 || *first == *last) return "fewer than two wgmma gemms in the loop";
  if (P->threads < 256) return "one consumer warpgroup";
  if (loop->u.loop.num_stages < 2) return "a 1-stage pipeline";
  bool between = false;
  for (int i = *first + 1; i < *last; i++)
    if (!is_intrinsic(f->v[i], "gemm_block")) between = true;
  if (!between) return "no work between the gemms";
  for (int i = 0; i < f->n; i++)
    if ((i <= *first || i >= *last) && has_block_barrier(f->v[i])) return "a block barrier where a warpgroup holds the turn";
  return NULL;
}

static tc_stmt *seq_of(tc_arena *a, tc_stmt **v, int n, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(a, TC_ST_SEQ, loc);
  s->u.seq.n = n;
  s->u.seq.items = v;
  return s;
}

/* The loop with turns (or as it was), given the loop's statement in its parent. */
static tc_stmt *take_turns(tc_gpu_plan *P, tc_stmt *loop) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  tc_stmt *consumer = loop->u.loop.body->u.seq.items[1];
  flat f = {0};
  flatten(a, &f, consumer);
  int first, last;
  const char *why = refusal(P, loop, &f, &first, &last);
  if (why) {
    if (P->notes && first >= 0 && first != last) /* the loops that could have taken turns */ tc_sb_printf(P->notes, "T.Pipelined: the consumer warpgroups run in step (no turns at the tensor cores: %s)\n", why);
    return loop;
  }
  tc_stmt **v = TC_NEW_ARRAY(a, tc_stmt *, f.n + 2);
  int n = 0;
  for (int i = 0; i < f.n; i++) {
    if (i == last) v[n++] = turn(a, "wg_turn_wait", loc);
    v[n++] = f.v[i];
    if (i == first) v[n++] = turn(a, "wg_turn_pass", loc);
  }
  loop->u.loop.body->u.seq.items[1] = seq_of(a, v, n, loc);
  tc_stmt **around = TC_NEW_ARRAY(a, tc_stmt *, 3);
  around[0] = turn(a, "wg_turn_wait", loc);
  around[1] = loop;
  around[2] = turn(a, "wg_turn_pass", loc);
  if (P->notes)
    tc_sb_printf(P->notes,
                 "T.Pipelined: the %d consumer warpgroups take turns at the tensor cores: one runs its gemms while the "
                 "others run the work between them\n",
                 P->threads / 128);
  return seq_of(a, around, 3, loc);
}

static void visit(tc_gpu_plan *P, tc_stmt *s) {
  if (!s || s->kind != TC_ST_SEQ) return;
  for (int i = 0; i < s->u.seq.n; i++) {
    tc_stmt *c = s->u.seq.items[i];
    if (c->kind == TC_ST_FOR && c->u.loop.ws_split) s->u.seq.items[i] = take_turns(P, c);
    else visit(P, c);
  }
}

bool tc_gpu_pingpong(tc_gpu_plan *P) {
  if (!P->desc->wgmma || !P->k->producer_threads) return true;
  visit(P, P->k->body);
  return !P->failed;
}
