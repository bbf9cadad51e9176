/* streamk.c: stream-K for the persistent GEMM (docs/cuda.md, "Stream-K").
 *
 * A persistent block walks whole tiles, so when the tiles are not a multiple of the blocks the
 * last wave leaves blocks idle: 512 tiles of 128 x 256 on 132 SMs are 3.88 waves, and the
 * kernel takes 4 tiles' time. With stream-K the tiles of the last two waves (all of them when
 * there are fewer tiles than blocks) are cut along their k loop instead: block b takes a
 * contiguous range of (tile, k) iterations, so every block does the same share, runs its range
 * head first so that the blocks stay in step along k, and a cut tile is finished by the block
 * that ran its last iterations (the owner) once the blocks that ran the others (the
 * contributors, of lower index) have stored their partial sums. The cut is made on the device
 * (prelude tcg_sk_schedule) from the grid and the tile count, so one kernel serves every shape;
 * where the cut would not pay (tiles a multiple of the blocks, or too little to gain for the
 * fix-up) every block walks whole tiles as before.
 *
 * It applies where the k loop is a pure sum: the loop's consumer part does nothing but wait for
 * its stages, run gemms into per-thread accumulators and free the stages (whichever k
 * iterations a block runs, their sum is the same), and every accumulator is zeroed before the
 * loop by the tile's own code, which runs for each piece (as may what else comes before the
 * loop, as long as it writes only shared tiles and other per-thread buffers). What follows the loop (the epilogue)
 * runs once per tile, in the owner, on the whole sum. This file finds such a loop and prints
 * the partial sums' store and the owner's addition; codegen.c prints the walk. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "target/cuda/streamk.h"

static bool is_zero(const tc_expr *e) {
  while (e->op == TC_OP_CAST) e = e->args[0];
  if (e->op == TC_OP_CONST_INT) return e->ival == 0;
  if (e->op == TC_OP_CONST_FLOAT) return e->fval == 0.0 && !signbit(e->fval);
  return false;
}

static bool is_intrinsic_in(const tc_stmt *s, const char *const *names) {
  for (; *names; names++)
    if (!strcmp(s->u.intrinsic.name, *names)) return true;
  return false;
}

static int acc_index(const tc_cuda_streamk *p, const tc_buffer *b) {
  for (int i = 0; i < p->nacc; i++)
    if (p->acc[i] == b) return i;
  return -1;
}

/* Whether the consumer part only waits, frees stages and runs gemms into per-thread float32 /
 * int32 arrays (added to p->acc). */
static bool pure_sum(const tc_stmt *s, tc_cuda_streamk *p) {
  static const char *const sync_ops[] = {"mbar_wait", "mbar_arrive_warp", "mbar_arrive", "mbar_arrive_cluster", "wgmma_wait",
                                         "fence_async_shared", "warp_sync", NULL};
  if (!s) return true;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!pure_sum(s->u.seq.items[i], p)) return false;
    return true;
  case TC_ST_LET: return true; /* names; a consumer part assigns none it keeps (pipeline.c) */
  case TC_ST_IF: return pure_sum(s->u.if_.then_s, p) && pure_sum(s->u.if_.else_s, p);
  case TC_ST_INTRINSIC: {
    if (is_intrinsic_in(s, sync_ops)) return true;
    if (strcmp(s->u.intrinsic.name, "gemm_block") || s->u.intrinsic.nargs != 14) return false;
    const tc_expr *c = s->u.intrinsic.args[12];
    if (c->op != TC_OP_ADDRESS_OF || !c->buf) return false;
    const tc_buffer *b = c->buf;
    if (b->scope != TC_SCOPE_LOCAL || (b->dtype.code != TC_DT_FLOAT32 && b->dtype.code != TC_DT_INT32) || b->dtype.lanes > 1)
      return false;
    if (acc_index(p, b) >= 0) return true;
    int64_t n = tc_buffer_numel(b);
    if (n <= 0 || p->nacc == TC_CUDA_STREAMK_MAX_ACC) return false;
    p->acc[p->nacc] = b;
    p->acc_n[p->nacc++] = n;
    return true;
  }
  default: return false;
  }
}

/* FOR i in [0, n): acc[i] = 0, zeroing all of accumulator `a`: its index, else -1. */
static int zero_fill(const tc_stmt *s, const tc_cuda_streamk *p) {
  int64_t mn, ext;
  if (s->kind != TC_ST_FOR || s->u.loop.ws_split || !tc_expr_const_int(s->u.loop.min, &mn) || mn != 0 ||
      !tc_expr_const_int(s->u.loop.extent, &ext))
    return -1;
  const tc_stmt *b = s->u.loop.body;
  while (b && b->kind == TC_ST_SEQ && b->u.seq.n == 1) b = b->u.seq.items[0];
  if (!b || b->kind != TC_ST_STORE || b->u.store.nidx != 1 || !is_zero(b->u.store.value)) return -1;
  const tc_expr *i = b->u.store.idx[0];
  while (i->op == TC_OP_CAST) i = i->args[0];
  if (i->op != TC_OP_VAR || i->var != s->u.loop.var) return -1;
  int a = acc_index(p, b->u.store.buf);
  return a >= 0 && ext == p->acc_n[a] ? a : -1;
}

/* Whether a statement before the loop may run once per piece instead of once per tile: it
 * writes only shared tiles and per-thread buffers other than the accumulators (a bias staged in
 * shared memory), so running it again gives what it gave. */
static bool rerunnable(const tc_stmt *s, const tc_cuda_streamk *p) {
  static const char *const ops[] = {"copy16", "copy_vec", "fence_async_shared", "warp_sync", "mbar_init", NULL};
  if (!s) return true;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!rerunnable(s->u.seq.items[i], p)) return false;
    return true;
  case TC_ST_FOR: return !s->u.loop.ws_split && rerunnable(s->u.loop.body, p);
  case TC_ST_IF: return rerunnable(s->u.if_.then_s, p) && rerunnable(s->u.if_.else_s, p);
  case TC_ST_ALLOC:
  case TC_ST_LET:
  case TC_ST_ASSIGN:
  case TC_ST_BARRIER: return true;
  case TC_ST_STORE: {
    const tc_buffer *b = s->u.store.buf;
    return (b->scope == TC_SCOPE_SHARED || b->scope == TC_SCOPE_LOCAL) && acc_index(p, b) < 0;
  }
  case TC_ST_INTRINSIC: {
    if (!is_intrinsic_in(s, ops)) return false;
    if (strcmp(s->u.intrinsic.name, "copy16") && strcmp(s->u.intrinsic.name, "copy_vec")) return true;
    const tc_expr *dst = s->u.intrinsic.nargs > 0 ? s->u.intrinsic.args[0] : NULL;
    return dst && dst->op == TC_OP_ADDRESS_OF && dst->buf && (dst->buf->scope == TC_SCOPE_SHARED || dst->buf->scope == TC_SCOPE_LOCAL) &&
           acc_index(p, dst->buf) < 0;
  }
  default: return false;
  }
}

static void flatten(const tc_stmt *s, const tc_stmt **out, int *n, int cap) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(s->u.seq.items[i], out, n, cap);
    return;
  }
  if (*n < cap) out[*n] = s;
  (*n)++;
}

bool tc_cuda_streamk_plan(const tc_stmt *body, const tc_stmt *loop, int consumers, tc_cuda_streamk *out, const char **why) {
  memset(out, 0, sizeof *out);
  *why = NULL;
  if (!loop || !loop->u.loop.ws_split || consumers <= 0 || consumers % 32) return false;
  if (loop->u.loop.ws_rotated) {
    *why = "the loop's consumers do more than sum gemms (it is rotated: work after its gemms overlaps the next iteration)";
    return false;
  }
  const tc_stmt *parts = loop->u.loop.body;
  if (!parts || parts->kind != TC_ST_SEQ || parts->u.seq.n != 2 || !pure_sum(parts->u.seq.items[1], out) || out->nacc == 0) {
    *why = "the loop's consumers do more than add gemms into float32 or int32 accumulators";
    return false;
  }
  /* the tile's statements before the loop: declarations, names, barriers and the accumulators'
   * zeroing, which every piece may run again; the loop itself at the top level */
  enum { CAP = 256 };
  const tc_stmt *top[CAP];
  int n = 0;
  flatten(body, top, &n, CAP);
  bool zeroed[TC_CUDA_STREAMK_MAX_ACC] = {false};
  int at = -1;
  for (int i = 0; i < n && i < CAP && at < 0; i++) {
    const tc_stmt *s = top[i];
    if (s == loop) {
      at = i;
      break;
    }
    int a = zero_fill(s, out);
    if (a >= 0) zeroed[a] = true;
    else if (!rerunnable(s, out)) {
      *why = "the tile writes global memory or an accumulator before the loop (a piece of a tile runs that part again)";
      return false;
    }
  }
  if (at < 0) {
    *why = "the loop is not at the tile's top level";
    return false;
  }
  for (int a = 0; a < out->nacc; a++)
    if (!zeroed[a]) {
      *why = "an accumulator is not zeroed before the loop";
      return false;
    }
  out->loop = loop;
  out->consumers = consumers;
  for (int a = 0; a < out->nacc; a++) out->slot_bytes += out->acc_n[a] * 4 * consumers;
  return true;
}

/* The accumulators' elements in a slot: accumulator a's chunk c (of `vec` elements) of
 * consumer thread t at element offset off_a + (c * T + t) * vec, so that a warp's stores and
 * loads are contiguous. */
static void each_chunk(tc_strbuf *sb, int ind, const tc_cuda_streamk *p, const char *const *names, const char *block, bool add) {
  char slot[160];
  snprintf(slot, sizeof slot, "tcg_sk_slots(tcg_sk_ws) + (size_t)(%s) * %lldu", block, (long long)p->slot_bytes);
  int64_t off = 0;
  for (int a = 0; a < p->nacc; a++) {
    int64_t n = p->acc_n[a];
    int vec = n % 4 == 0 ? 4 : 1;
    const char *ty = p->acc[a]->dtype.code == TC_DT_INT32 ? "int" : "float";
    for (int i = 0; i < ind; i++) tc_sb_puts(sb, "  ");
    tc_sb_printf(sb, "#pragma unroll\n");
    for (int i = 0; i < ind; i++) tc_sb_puts(sb, "  ");
    tc_sb_printf(sb, "for (int tcg_c = 0; tcg_c < %lld; tcg_c++) tcg_sk_%s%d((%s *)(%s) + %lldLL + ((long long)tcg_c * %d + (int)threadIdx.x) * %d, &%s[tcg_c * %d]);\n",
                 (long long)(n / vec), add ? "add" : "put", vec, ty, slot, (long long)off, p->consumers, vec, names[a], vec);
    off += n * p->consumers;
  }
}

void tc_cuda_streamk_put(tc_strbuf *sb, int ind, const tc_cuda_streamk *p, const char *const *names) {
  each_chunk(sb, ind, p, names, "(int)blockIdx.x", false);
}

void tc_cuda_streamk_add(tc_strbuf *sb, int ind, const tc_cuda_streamk *p, const char *const *names) {
  each_chunk(sb, ind, p, names, "tcg_below", true);
}
