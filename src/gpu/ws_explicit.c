/* ws_explicit.c: explicit warp specialization as TileLang users write it, mapped onto the
 * warp-specialized pipeline (docs/gpu.md, the passes, step 1).
 *
 * The reader runs `with T.ws(k)` bodies in program order (src/front/eval_ws.c): the producer's
 * and the consumer's statements of one iteration one after the other in one loop, the
 * T.alloc_barrier barriers as per-thread arrival counters, each wait a check that the order
 * satisfies it. The common shape of such a kernel is a ring: shared tiles of S stages, the
 * producer group filling stage k % S with copies (T.tma_copy / T.copy) against a "full"
 * barrier, the consumer groups waiting on it, running the gemm on that stage and freeing it on
 * an "empty" barrier:
 *
 *     for k in range(n):                                for k in T.Pipelined(n, num_stages=S):
 *       s = k % S                                         T.copy(A[..k..], A_s)
 *       wait empty[s]; T.copy(A[..k..], A_s[s])   ->      T.copy(B[..k..], B_s)
 *       T.copy(B[..k..], B_s[s]); arrive full[s]          T.gemm(A_s, B_s, acc)
 *       wait full[s]; T.gemm(A_s[s], B_s[s], acc); arrive empty[s]
 *
 * which is T.Pipelined's loop written out by hand. TileLang's own examples write it inside
 * T.Pipelined with single-buffered tiles (the copies fill A_s whole; one "loaded" and one
 * "consumed" barrier): the same, with the loop's num_stages. Run in program order, each stage is written
 * whole by the copies before the gemm of the same iteration reads it, so dropping the stage
 * index (and the barriers, which order nothing in program order) leaves the same results; the
 * pipeline lowering then makes the stages, the full and empty mbarriers and, on sm_90a, the
 * producer warpgroup and its TMA loads again, and its consumers are the groups that ran the
 * gemm. A kernel of any other shape keeps the program order, and --explain says what stopped
 * the mapping. */
#include "gpu/gpu_internal.h"

#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "ir/walk.h"

enum { MAX_RING = 8, MAX_ITEMS = 64 };

typedef struct ring_map {
  const tc_buffer *ring[MAX_RING];
  tc_buffer *flat[MAX_RING];
  bool written[MAX_RING];
  int slot_uses[MAX_RING]; /* accesses of the form [slot, whole stage] */
  int nring;
  /* single-buffered tiles: shared tiles each iteration's copy fills whole (T.Pipelined's own
   * stages multiply them) */
  const tc_buffer *whole[MAX_RING];
  int nwhole;
  const tc_stmt *loop;
  int64_t stages;
  const tc_var *loop_var, *slot_var; /* slot_var: a LET of loop_var % stages, or NULL */
  char why[200];
} ring_map;

#define NOT(...) (snprintf(R->why, sizeof R->why, __VA_ARGS__), false)

static void flatten(const tc_stmt *s, const tc_stmt **out, int *n) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) flatten(s->u.seq.items[i], out, n);
    return;
  }
  if (*n < MAX_ITEMS) out[*n] = s;
  (*n)++;
}

static bool is_barrier_buf(const tc_buffer *b) { return b && b->mbarrier; }

typedef struct uses { const tc_buffer *b; int n, writes; bool barrier; } uses;
static void count_use(void *ctx, const tc_buffer *b, bool write) {
  uses *u = ctx;
  if (b == u->b) u->n++, u->writes += write;
  if (is_barrier_buf(b)) u->barrier = true;
}
/* How s (and what it holds) uses b, and whether it touches a barrier. */
static uses scan(const tc_stmt *s, const tc_buffer *b) {
  uses u = {b, 0, 0, false};
  tc_access_fns F = {NULL, count_use, &u};
  tc_stmt_accesses(&F, s, true);
  return u;
}
static int buffer_writes(const tc_stmt *s, const tc_buffer *b) { return scan(s, b).writes; }
static int buffer_uses(const tc_stmt *s, const tc_buffer *b) { return scan(s, b).n; }
/* A statement that only counts arrivals or checks a wait: a store to a barrier's counter, or an
 * assert that reads one. */
static bool barrier_stmt(const tc_stmt *s) {
  if (s->kind == TC_ST_STORE) return is_barrier_buf(s->u.store.buf);
  return s->kind == TC_ST_ASSERT && scan(s, NULL).barrier;
}

/* e is loop_var % stages, or the LET that names it */
static bool is_slot(ring_map *R, const tc_expr *e, int64_t *stages) {
  while (e->op == TC_OP_CAST) e = e->args[0];
  if (e->op == TC_OP_VAR && R->slot_var && e->var == R->slot_var) return (*stages = R->stages), true;
  if (e->op == TC_OP_FLOORMOD && e->nargs == 2 && e->args[0]->op == TC_OP_VAR &&
      e->args[0]->var == R->loop_var && tc_expr_const_int(e->args[1], stages) && *stages >= 2)
    return true;
  return false;
}

static int find_buf(const tc_buffer *const *list, int n, const tc_buffer *b) {
  for (int i = 0; i < n; i++)
    if (list[i] == b) return i;
  return -1;
}
static int ring_index(ring_map *R, const tc_buffer *b) { return find_buf(R->ring, R->nring, b); }
static int whole_index(ring_map *R, const tc_buffer *b) { return find_buf(R->whole, R->nwhole, b); }

/* Whether r covers dimensions d0 .. of its shared buffer whole. */
static bool whole_from(const tc_region *r, int d0) {
  const tc_buffer *b = r->buf;
  int64_t start = 0, dim = 0;
  if (!b || b->scope != TC_SCOPE_SHARED || r->ndim != b->ndim) return false;
  for (int d = d0; d < b->ndim; d++)
    if (!tc_expr_const_int(r->r[d].start, &start) || start != 0 || !tc_expr_const_int(b->shape[d], &dim) || r->r[d].extent != dim)
      return false;
  return true;
}

/* A region of a ring tile: stage [slot] and the whole of every other dimension. Adds the tile
 * to the rings the first time. */
static bool ring_region(ring_map *R, const tc_region *r, int *which) {
  const tc_buffer *b = r->buf;
  *which = -1;
  if (!b || b->scope != TC_SCOPE_SHARED || b->ndim < 2 || r->ndim != b->ndim) return true; /* not a ring tile */
  int64_t stages = 0, dim = 0;
  if (!is_slot(R, r->r[0].start, &stages) || r->r[0].extent != 1) return true;
  if (!tc_expr_const_int(b->shape[0], &dim) || dim != stages) return NOT("'%s' has %lld stages where the slot takes %lld", b->name, (long long)dim, (long long)stages);
  if (R->stages && R->stages != stages) return NOT("the ring tiles have different stage counts (%lld and %lld)", (long long)R->stages, (long long)stages);
  if (!whole_from(r, 1)) return NOT("an access to '%s' takes part of a stage", b->name);
  R->stages = stages;
  int i = ring_index(R, b);
  if (i < 0) {
    if (R->nring == MAX_RING) return NOT("more than %d ring tiles", MAX_RING);
    i = R->nring++;
    R->ring[i] = b;
  }
  R->slot_uses[i]++;
  *which = i;
  return true;
}

/* The loop's statements, barriers aside: names, then per iteration copies that fill whole
 * stages (or whole single-buffered tiles) and gemms that read them. */
static bool check_loop(ring_map *R, const tc_stmt *loop) {
  const tc_stmt *items[MAX_ITEMS];
  int n = 0;
  flatten(loop->u.loop.body, items, &n);
  if (n > MAX_ITEMS) return NOT("its loop has more than %d statements", MAX_ITEMS);
  bool gemm = false;
  for (int i = 0; i < n; i++) {
    const tc_stmt *s = items[i];
    int w = -1, ra = -1, rb = -1;
    switch (s->kind) {
    case TC_ST_LET: {
      int64_t st = 0;
      if (!R->slot_var && is_slot(R, s->u.let.value, &st)) R->slot_var = s->u.let.var, R->stages = R->stages ? R->stages : st;
      break;
    }
    case TC_ST_STORE:
    case TC_ST_ASSERT:
      if (!barrier_stmt(s)) return NOT("its loop stores or checks something besides the barriers");
      break;
    case TC_ST_COPY:
      if (s->u.copy.src.buf->scope != TC_SCOPE_GLOBAL) return NOT("a copy in its loop fills '%s' from '%s', not from global memory", s->u.copy.dst.buf->name, s->u.copy.src.buf->name);
      if (!ring_region(R, &s->u.copy.dst, &w)) return false;
      if (w >= 0) {
        R->written[w] = true;
      } else if (whole_from(&s->u.copy.dst, 0) && whole_index(R, s->u.copy.dst.buf) < 0 && R->nwhole < MAX_RING) {
        R->whole[R->nwhole++] = s->u.copy.dst.buf;
      } else {
        return NOT("a copy in its loop writes part of '%s' (or writes it twice), not a whole stage of a ring or a whole tile", s->u.copy.dst.buf->name);
      }
      break;
    case TC_ST_GEMM:
      if (!ring_region(R, &s->u.gemm.a, &ra) || !ring_region(R, &s->u.gemm.b, &rb)) return false;
      if ((ra >= 0 && !R->written[ra]) || (rb >= 0 && !R->written[rb]))
        return NOT("its gemm reads a stage before the iteration's copy fills it");
      if (whole_index(R, s->u.gemm.c.buf) >= 0) return NOT("its gemm accumulates into '%s', which a copy fills", s->u.gemm.c.buf->name);
      /* an operand the loop writes must be a stage or tile this iteration's copies filled */
      for (int o = 0; o < 2; o++) {
        const tc_buffer *ob = o ? s->u.gemm.b.buf : s->u.gemm.a.buf;
        if ((o ? rb : ra) < 0 && whole_index(R, ob) < 0 && buffer_writes(R->loop, ob) > 0)
          return NOT("its gemm reads '%s' before the iteration's copy fills it", ob->name);
      }
      if (ring_index(R, s->u.gemm.c.buf) >= 0) return NOT("its gemm accumulates into a ring tile");
      gemm = true;
      break;
    default:
      return NOT("its loop holds a %s, which the pipeline does not take", tc_stmt_kind_name(s->kind));
    }
  }
  if (!gemm || R->nring + R->nwhole == 0) return NOT("its loop has no gemm on tiles that copies fill");
  return true;
}

static tc_region flat_region(tc_arena *a, ring_map *R, const tc_region *r) {
  int i = ring_index(R, r->buf);
  if (i < 0 || r->ndim != r->buf->ndim) return *r;
  tc_region out = {R->flat[i], r->ndim - 1, TC_NEW_ARRAY(a, tc_range, r->ndim - 1)};
  memcpy(out.r, r->r + 1, sizeof(tc_range) * (size_t)(r->ndim - 1));
  return out;
}

/* The loop rewritten: barriers out, stages dropped, pipelined over the ring's stages. */
static tc_stmt *rewrite_loop(tc_arena *a, ring_map *R, const tc_stmt *loop) {
  const tc_stmt *items[MAX_ITEMS];
  int n = 0;
  flatten(loop->u.loop.body, items, &n);
  tc_stmt **out = TC_NEW_ARRAY(a, tc_stmt *, n);
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (barrier_stmt(items[i])) continue;
    tc_stmt *s = TC_NEW(a, tc_stmt);
    *s = *items[i];
    if (s->kind == TC_ST_COPY) s->u.copy.dst = flat_region(a, R, &s->u.copy.dst);
    if (s->kind == TC_ST_GEMM) s->u.gemm.a = flat_region(a, R, &s->u.gemm.a), s->u.gemm.b = flat_region(a, R, &s->u.gemm.b);
    out[m++] = s;
  }
  tc_stmt *l = TC_NEW(a, tc_stmt);
  *l = *loop;
  l->u.loop.kind = TC_LOOP_PIPELINED;
  l->u.loop.num_stages = (int)R->stages;
  memset(&l->u.loop.pipeline, 0, sizeof l->u.loop.pipeline);
  l->u.loop.body = tc_ir_seq(a, m, out, loop->loc);
  return l;
}

/* What the block's thread count shows through: the thread index, or an element atomic_add,
 * which every thread that runs it adds (the mapped block has fewer threads). ctx: a bool. */
static tc_expr *thread_var(void *ctx, tc_expr *e) {
  if (e->op == TC_OP_VAR && e->var && e->var->kind == TC_VAR_THREAD_IDX) *(bool *)ctx = true;
  return e;
}
static bool per_thread_stmt(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_ATOMIC_ADD && !tc_stmt_is_collective(s)) *(bool *)ctx = true;
  tc_rewrite_stmt_exprs(s, thread_var, ctx); /* reads only: the callback returns each node as it is */
  return !*(bool *)ctx;
}

/* Whether b, outside its ALLOC, is used by the loop alone among the top-level statements. */
static bool loop_only(const tc_stmt *const *top, int n, const tc_stmt *loop, const tc_buffer *b) {
  int all = 0;
  for (int i = 0; i < n; i++)
    if (top[i]->kind != TC_ST_ALLOC) all += buffer_uses(top[i], b);
  return all == buffer_uses(loop, b);
}

int tc_gpu_ws_consumer_threads(const tc_kernel_ir *k) { return 128 * __builtin_popcount(k->ws_gemm_groups); }

/* Whether the mapping applies (else R->why says why not); if so, the kernel's body, threads and
 * mark are rewritten. */
static bool map_ring(tc_gpu_plan *P, ring_map *R) {
  tc_kernel_ir *k = P->k;
  int groups = tc_gpu_ws_consumer_threads(k) / 128;
  if (groups == 0) return NOT("no T.ws body runs a T.gemm");
  if (k->threads_ndim != 1 || P->threads % 128) return NOT("its block is not a whole number of warp groups along x");
  if (groups * 128 >= P->threads) return NOT("no warp group is left to load while %d run the gemm", groups);
  bool per_thread = false;
  tc_visit_stmts(k->body, per_thread_stmt, &per_thread);
  if (per_thread) return NOT("it reads the thread index or adds atomically per thread, which the consumer groups alone would change");
  /* the top level: set-up, one loop, what follows it */
  const tc_stmt *top[MAX_ITEMS];
  int n = 0;
  flatten(k->body, top, &n);
  if (n > MAX_ITEMS) return NOT("its body has more than %d statements", MAX_ITEMS);
  const tc_stmt *loop = NULL;
  for (int i = 0; i < n; i++) {
    const tc_stmt *s = top[i];
    uses u = scan(s, NULL);
    if (s->kind == TC_ST_FOR && u.barrier) {
      if (loop) return NOT("two of its loops use the barriers");
      if (s->u.loop.kind != TC_LOOP_SERIAL && s->u.loop.kind != TC_LOOP_PIPELINED) return NOT("its loop is neither a plain loop nor T.Pipelined");
      loop = s;
    } else if (u.barrier && !barrier_stmt(s) && !(s->kind == TC_ST_ALLOC && is_barrier_buf(s->u.alloc.buf))) {
      return NOT("a statement outside its loop uses the barriers");
    }
  }
  if (!loop) return NOT("no loop uses the barriers");
  R->loop = loop;
  R->loop_var = loop->u.loop.var;
  if (!check_loop(R, loop)) return false;
  /* the stages: the ring's; T.Pipelined's own (which also stages single-buffered tiles); else two */
  int64_t own = loop->u.loop.kind == TC_LOOP_PIPELINED ? loop->u.loop.num_stages : 0;
  if (R->nring && own > 0 && own != R->stages) return NOT("its ring has %lld stages and its T.Pipelined %lld", (long long)R->stages, (long long)own);
  if (!R->nring) R->stages = own > 0 ? own : 2;
  /* the ring tiles live in the loop alone, and every access there takes the iteration's stage */
  for (int r = 0; r < R->nring; r++) {
    if (buffer_uses(loop, R->ring[r]) != R->slot_uses[r]) return NOT("the loop reads or writes '%s' other than at stage %s %% %lld", R->ring[r]->name, R->loop_var->name, (long long)R->stages);
    if (!loop_only(top, n, loop, R->ring[r])) return NOT("'%s' is used outside the loop too", R->ring[r]->name);
    if (R->ring[r]->view_of || R->ring[r]->layout) return NOT("'%s' is a view or has a layout of its own", R->ring[r]->name);
  }
  for (int w = 0; w < R->nwhole; w++) /* and the single-buffered tiles too */
    if (!loop_only(top, n, loop, R->whole[w])) return NOT("'%s' is used outside the loop too", R->whole[w]->name);
  /* rewrite */
  for (int r = 0; r < R->nring; r++) {
    const tc_buffer *b = R->ring[r];
    R->flat[r] = tc_ir_new_buffer(P->a, k, b->name, b->dtype, TC_SCOPE_SHARED, b->ndim - 1, b->shape + 1, b->loc);
  }
  tc_stmt **items = TC_NEW_ARRAY(P->a, tc_stmt *, n);
  int m = 0;
  for (int i = 0; i < n; i++) {
    const tc_stmt *s = top[i];
    if (barrier_stmt(s) || (s->kind == TC_ST_ALLOC && is_barrier_buf(s->u.alloc.buf))) continue;
    if (s->kind == TC_ST_ALLOC && ring_index(R, s->u.alloc.buf) >= 0) {
      tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, s->loc);
      al->u.alloc.buf = R->flat[ring_index(R, s->u.alloc.buf)];
      items[m++] = al;
      continue;
    }
    items[m++] = s == loop ? rewrite_loop(P->a, R, loop) : (tc_stmt *)s;
  }
  k->body = tc_ir_seq(P->a, m, items, k->body->loc);
  k->warp_specialized = false;
  k->threads[0] = groups * 128;
  P->threads = groups * 128;
  return true;
}

bool tc_gpu_explicit_ws(tc_gpu_plan *P) {
  tc_kernel_ir *k = P->k;
  if (!k->warp_specialized) return true;
  ring_map R = {0};
  int threads = P->threads;
  bool mapped = map_ring(P, &R);
  if (!mapped && !P->desc->traps)
    return tc_gpu_fail(P, k->warp_specialized_loc,
                       "explicit warp specialization (T.ws, T.alloc_barrier and the barrier operations, or tile operations in the "
                       "branches of an 'if' on the thread index) runs on %s only where it maps onto T.Pipelined, and this kernel "
                       "does not because %s; in program order its waits are run-time checks, which %s kernels cannot make; the "
                       "cpu and cuda targets run it",
                       P->desc->target, R.why, P->desc->target);
  if (P->notes) {
    const tc_loc l = k->warp_specialized_loc;
    if (l.src) tc_sb_printf(P->notes, "%s:%d:%d: ", l.src->name, l.line, l.col);
    if (mapped) {
      char what[64];
      if (R.nring) snprintf(what, sizeof what, "a ring of %lld stages", (long long)R.stages);
      else snprintf(what, sizeof what, "shared tiles");
      tc_sb_printf(P->notes,
                   "explicit warp specialization: %s that copies fill and %d warp group%s run%s the gemm on, mapped onto "
                   "T.Pipelined(num_stages=%lld) over the %d threads of %s (where that loop is warp-specialized, its producer "
                   "warpgroup and mbarriers stand for the program's)\n",
                   what, P->threads / 128, P->threads > 128 ? "s" : "", P->threads > 128 ? "" : "s", (long long)R.stages,
                   P->threads, P->threads > 128 ? "those groups" : "that group");
    } else {
      tc_sb_printf(P->notes,
                   "explicit warp specialization runs in program order on all %d threads: each T.ws body (or thread-index "
                   "branch) in place, its barriers as per-thread counters whose waits are checks; it is not mapped onto "
                   "T.Pipelined because %s\n",
                   threads, R.why);
    }
  }
  return true;
}
