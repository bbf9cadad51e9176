/* pingpong.c: the consumer warpgroups of a warp-specialized loop take turns at the tensor cores.
 *
 * A warp-specialized loop (pipeline.c) whose consumer part runs two wgmma gemms with other work
 * between them (attention: S = Q K^T, the online softmax, O += P V) keeps the tensor cores idle
 * while every warpgroup does that work at the same time, as they do when nothing staggers them.
 * With turns, each warpgroup starts its first gemm only after the previous one (cyclically) has
 * started its own, so their softmaxes fall at different times and one's softmax runs while the
 * others' gemms do (FlashAttention-3's "ping-pong"):
 *
 *     for k:  ... wg_turn_wait, gemm 1, wg_turn_pass, softmax ..., gemm 2 ...
 *
 * wg_turn_wait waits until the previous consumer warpgroup has passed the turn; wg_turn_pass
 * hands it to the next (the last warpgroup passes once as the kernel starts, the target's part;
 * a target may pass as soon as the gemm is issued, before waiting for its result). Each
 * warpgroup alternates wait and pass, so a turn is never passed twice before it is taken. The
 * turns order the warpgroups and never change a result: the interpreter ignores them.
 *
 * They cannot deadlock: a warpgroup holds the turn only while it issues one gemm, and from a pass
 * to its next wait it needs nothing from the others but what they give without a turn (a barrier
 * over all consumers outside that span is reached by each of them: the one waiting for the turn
 * gets it from the one at the barrier, which passed it). The loop's other synchronization (the
 * stages' mbarriers, the producer) never waits for a warpgroup that waits for the turn. The
 * warpgroups of the loop must each run every gemm (no gemm under a condition), which a wgmma gemm
 * at the consumer part's top level is. The loop's last wait is matched by the next loop's (or the
 * next tile's) pass, so the turn goes round across tiles. */
#include "gpu/gpu_internal.h"

#include <string.h>

void tc_gpu_flatten(tc_arena *a, tc_stmt_set *f, tc_stmt *s) {
  if (!s) return;
  if (s->kind != TC_ST_SEQ) {
    tc_stmt_set_add(a, f, s);
    return;
  }
  for (int i = 0; i < s->u.seq.n; i++) tc_gpu_flatten(a, f, s->u.seq.items[i]);
}

bool tc_gpu_is_intrinsic(const tc_stmt *s, const char *name) {
  return s->kind == TC_ST_INTRINSIC && !strcmp(s->u.intrinsic.name, name);
}

/* A wgmma gemm_block that returns with its accumulator final (wait 0). */
static int wgmma_kind(const tc_stmt *s) {
  if (!tc_gpu_is_intrinsic(s, "gemm_block") || s->u.intrinsic.nargs != 14) return 0;
  int64_t instr = -1, wait = -1;
  if (!tc_expr_const_int(s->u.intrinsic.args[7], &instr) || instr != 1) return 0;
  if (!tc_expr_const_int(s->u.intrinsic.args[13], &wait)) return -1;
  return wait == 0 ? 1 : -1; /* -1: an asynchronous mainloop's gemm */
}

static tc_stmt *turn(tc_arena *a, const char *name, tc_loc loc) { return tc_ir_intrinsic_stmt(a, name, 0, NULL, loc); }

/* Why the loop's consumer part takes no turns, or NULL (then *first: the first gemm). */
static const char *refusal(tc_gpu_plan *P, const tc_stmt_set *f, int *first) {
  int last = -1;
  *first = -1;
  for (int i = 0; i < f->n; i++) {
    int w = wgmma_kind(f->v[i]);
    if (w < 0) return "an asynchronous wgmma mainloop";
    if (w == 0) continue;
    if (*first < 0) *first = i;
    last = i;
  }
  if (*first < 0 || *first == last) return "fewer than two wgmma gemms in the loop";
  bool between = false;
  for (int i = *first + 1; i < last; i++)
    if (!tc_gpu_is_intrinsic(f->v[i], "gemm_block")) between = true;
  if (!between) return "no work between the gemms";
  if (P->threads < 256) return "one consumer warpgroup";
  return NULL;
}

/* The loop's consumer part with turns around its first gemm (or as it was). */
static void take_turns(tc_gpu_plan *P, tc_stmt *loop) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  tc_stmt_set f = {0};
  tc_gpu_flatten(a, &f, loop->u.loop.body->u.seq.items[1]);
  int first;
  const char *why = refusal(P, &f, &first);
  if (why) {
    if (P->notes && first >= 0 && strcmp(why, "fewer than two wgmma gemms in the loop") && strcmp(why, "an asynchronous wgmma mainloop"))
      tc_sb_printf(P->notes, "T.Pipelined: the consumer warpgroups run in step (no turns at the tensor cores: %s)\n", why);
    return;
  }
  tc_stmt **v = TC_NEW_ARRAY(a, tc_stmt *, f.n + 2);
  int n = 0;
  for (int i = 0; i < f.n; i++) {
    if (i == first) v[n++] = turn(a, "wg_turn_wait", loc);
    v[n++] = f.v[i];
    if (i == first) v[n++] = turn(a, "wg_turn_pass", loc);
  }
  loop->u.loop.body->u.seq.items[1] = tc_ir_seq(a, n, v, loc);
  if (P->notes)
    tc_sb_printf(P->notes,
                 "T.Pipelined: the %d consumer warpgroups take turns at the tensor cores: each starts its first gemm after the "
                 "previous one has, so one's softmax runs beside the others' gemms\n",
                 P->threads / 128);
}

void tc_gpu_each_ws_loop(tc_gpu_plan *P, tc_stmt *s, void (*fn)(tc_gpu_plan *P, tc_stmt *loop)) {
  if (!s || s->kind != TC_ST_SEQ) return;
  for (int i = 0; i < s->u.seq.n; i++) {
    tc_stmt *c = s->u.seq.items[i];
    if (c->kind == TC_ST_FOR && c->u.loop.ws_split) fn(P, c);
    else tc_gpu_each_ws_loop(P, c, fn);
  }
}

bool tc_gpu_pingpong(tc_gpu_plan *P) {
  if (!P->desc->wgmma || !P->k->producer_threads) return true;
  tc_gpu_each_ws_loop(P, P->k->body, take_turns);
  return !P->failed;
}
