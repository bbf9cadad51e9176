/* smem_reuse.c: shared tiles whose lifetimes do not overlap share memory (the last step of
 * tc_gpu_lower), as TileLang's shared-memory merging does. Flash attention's backward passes
 * need it: their dK and dV staging tiles are written only after the mainloop, whose Q, dO and
 * K tiles are dead by then, and one after another the tiles do not fit the 227 KiB of an H100.
 *
 * Taken only when the tiles placed one after another do not fit the target's shared memory, so
 * a kernel that fits keeps the placement it had. A lifetime is a range of the kernel body's
 * top-level statements (nested sequences flattened; a loop or branch is one statement), from
 * the first that names the tile to the last. Tiles are placed first-fit in order of their first
 * use, each at the lowest offset free of every tile whose lifetime overlaps its own, aligned as
 * the targets align tiles (1 KiB from 1 KiB up: the period of the 128-byte swizzle). Where a
 * tile takes memory an earlier one used, every thread must be done with the earlier tile before
 * any writes the later: a block barrier goes before the later tile's first statement unless
 * one already stands between them. A tile a TMA store reads (asynchronously, after its
 * statement) lives to the kernel's end: it may take the memory of tiles dead before its first
 * use (MLA decode's output tile takes the K/V stages'), but no later tile takes its own. A
 * warp-specialized kernel, whose producer fills the next tile's stages while the consumers
 * finish the last, is not rearranged at all. */
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_internal.h"
#include "ir/walk.h"
#include "util/strbuf.h"

typedef struct item {
  tc_stmt *parent; /* the sequence holding it (NULL: the body itself) */
  int index;       /* its index there */
  tc_stmt *s;
} item;

typedef struct tile {
  tc_buffer *b;
  int first, last; /* lifetime: item indices */
  int64_t bytes, at;
  bool pinned;     /* keeps memory of its own */
  bool async_read; /* a TMA store reads it after its statement: live to the kernel's end */
} tile;

typedef struct reuse {
  tc_gpu_plan *P;
  item *items;
  int nitems, capitems;
  tile *tiles; /* by buffer id: b NULL where the id is not a shared tile */
  int ntiles_by_id;
  int cur;     /* the item being scanned */
  bool ws;
} reuse;

static void add_item(reuse *R, tc_stmt *parent, int index, tc_stmt *s) {
  if (R->nitems == R->capitems) {
    int cap = R->capitems ? R->capitems * 2 : 32;
    R->items = tc_arena_grow(R->P->a, R->items, sizeof *R->items * (size_t)R->nitems, sizeof *R->items * (size_t)cap);
    R->capitems = cap;
  }
  R->items[R->nitems++] = (item){parent, index, s};
}

static void collect_items(reuse *R, tc_stmt *parent, int index, tc_stmt *s) {
  if (s && s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) collect_items(R, s, i, s->u.seq.items[i]);
    return;
  }
  if (s) add_item(R, parent, index, s);
}

static tile *tile_of(reuse *R, const tc_buffer *b) {
  return b && b->scope == TC_SCOPE_SHARED && b->id >= 0 && b->id < R->ntiles_by_id && R->tiles[b->id].b ? &R->tiles[b->id] : NULL;
}

static void note_use(void *ctx, tc_buffer **slot, const tc_stmt *where) {
  reuse *R = ctx;
  if (where->kind == TC_ST_ALLOC && *slot == where->u.alloc.buf && !where->u.alloc.buf->init) return; /* a declaration */
  tile *t = tile_of(R, *slot);
  if (!t) return;
  if (t->first < 0 || R->cur < t->first) t->first = R->cur;
  if (R->cur > t->last) t->last = R->cur;
}

static void async_use(void *ctx, tc_buffer **slot, const tc_stmt *where) {
  (void)where;
  tile *t = tile_of(ctx, *slot);
  if (t) t->async_read = true;
}

static bool scan_cb(void *ctx, tc_stmt *s) {
  reuse *R = ctx;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->scope == TC_SCOPE_SHARED) {
    tc_buffer *b = s->u.alloc.buf;
    int64_t n = tc_buffer_numel(b);
    if (n >= 0 && b->id >= 0 && b->id < R->ntiles_by_id)
      R->tiles[b->id] = (tile){.b = b, .first = -1, .last = -1, .bytes = (int64_t)tc_dtype_storage_bytes(b->dtype, (size_t)n)};
  }
  if (s->kind == TC_ST_FOR && s->u.loop.ws_split) R->ws = true;
  return true;
}

static bool pin_cb(void *ctx, tc_stmt *s) {
  if (tc_gpu_is_intrinsic(s, "tma_store")) tc_visit_buffer_slots(s, async_use, ctx);
  return true;
}

typedef struct smem_ctx {
  int64_t bytes;
} smem_ctx;
static bool smem_cb(void *ctx, tc_stmt *s) {
  int64_t n;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->scope == TC_SCOPE_SHARED && (n = tc_buffer_numel(s->u.alloc.buf)) > 0)
    ((smem_ctx *)ctx)->bytes += tc_gpu_tile_bytes(s->u.alloc.buf->dtype, n);
  return true;
}
/* Shared memory the kernel has asked for so far (its tiles and the lowering's scratch). */
int64_t tc_gpu_shared_bytes(const tc_gpu_plan *P) {
  smem_ctx S = {0};
  tc_visit_stmts(P->k->body, smem_cb, &S);
  const tc_buffer *extra[6] = {P->scratch, P->scratch64, P->scratch_i32, P->scratch_i64, P->epi_stage[0], P->epi_stage[1]};
  for (int i = 0; i < 6; i++)
    if (extra[i]) S.bytes += tc_gpu_tile_bytes(extra[i]->dtype, extra[i]->shape[0]->ival);
  return S.bytes;
}

static int64_t align_for(int64_t bytes) { return bytes >= 1024 ? 1024 : 128; }
static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t tc_gpu_tile_bytes(tc_dtype d, int64_t numel) { return round_up((int64_t)tc_dtype_storage_bytes(d, (size_t)numel), 128); }
static int64_t footprint(const tile *t) { return round_up(t->bytes, 128); }
static bool lifetimes_meet(const tile *x, const tile *y) { return x->pinned || y->pinned || !(x->last < y->first || y->last < x->first); }
/* [x, x + xn) and [y, y + yn) overlap */
static bool spans_meet(int64_t x, int64_t xn, int64_t y, int64_t yn) { return x < y + yn && y < x + xn; }
static bool memory_meets(const tile *x, const tile *y) { return spans_meet(x->at, footprint(x), y->at, footprint(y)); }

static int by_first_use(const void *x, const void *y) {
  const tile *a = *(tile *const *)x, *b = *(tile *const *)y;
  if (a->pinned != b->pinned) return a->pinned ? -1 : 1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->b->id - b->b->id;
}

/* The lowest offset for t free of every placed tile whose lifetime meets t's. */
static int64_t first_fit(tile *const *placed, int np, const tile *t) {
  int64_t al = align_for(t->bytes), at = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (int i = 0; i < np; i++) {
      const tile *p = placed[i];
      if (!lifetimes_meet(p, t)) continue;
      if (spans_meet(at, footprint(t), p->at, footprint(p))) {
        at = round_up(p->at + footprint(p), al);
        moved = true;
      }
    }
  }
  return at;
}

static bool barrier_between(const reuse *R, int after, int before) {
  for (int i = after + 1; i < before; i++)
    if (R->items[i].s->kind == TC_ST_BARRIER && R->items[i].s->u.barrier.scope == TC_BARRIER_BLOCK) return true;
  return false;
}

static void insert_barrier(reuse *R, const item *it) {
  tc_stmt *seq = it->parent;
  tc_stmt **items = TC_NEW_ARRAY(R->P->a, tc_stmt *, seq->u.seq.n + 1);
  memcpy(items, seq->u.seq.items, sizeof *items * (size_t)it->index);
  tc_stmt *bar = tc_ir_stmt(R->P->a, TC_ST_BARRIER, it->s->loc);
  bar->u.barrier.scope = TC_BARRIER_BLOCK;
  items[it->index] = bar;
  memcpy(items + it->index + 1, seq->u.seq.items + it->index, sizeof *items * (size_t)(seq->u.seq.n - it->index));
  seq->u.seq.items = items;
  seq->u.seq.n++;
}

bool tc_gpu_share_smem(tc_gpu_plan *P, const tc_buffer *over, int64_t sequential) {
  const tc_gpu_desc *desc = P->desc;
  tc_kernel_ir *k = P->k;
  reuse R = {.P = P, .ntiles_by_id = k->next_id};
  R.tiles = TC_NEW_ARRAY(P->a, tile, R.ntiles_by_id + 1);
  tc_visit_stmts(k->body, scan_cb, &R);
  if (R.ws) {
    tc_gpu_fail(P, over->loc, "shared memory: the block's tiles need %lld bytes; %s allows %lld (exceeded from '%s' on), and the "
                "tiles of a warp-specialized kernel are all live at once (fewer num_stages or smaller tiles would fit)",
                (long long)sequential, desc->target, (long long)desc->max_smem, over->name);
    return false;
  }
  collect_items(&R, NULL, 0, k->body);
  for (R.cur = 0; R.cur < R.nitems; R.cur++) tc_visit_buffer_slots(R.items[R.cur].s, note_use, &R);
  tc_visit_stmts(k->body, pin_cb, &R);
  int n = 0;
  tile **order = TC_NEW_ARRAY(P->a, tile *, R.ntiles_by_id + 1);
  for (int id = 0; id < R.ntiles_by_id; id++) {
    tile *t = &R.tiles[id];
    if (!t->b) continue;
    if (t->first < 0) t->first = 0, t->last = R.nitems - 1, t->pinned = true; /* named nowhere the scan sees: its own memory */
    if (t->async_read) t->last = R.nitems - 1; /* may take memory dead before it, never lend its own */
    order[n++] = t;
  }
  qsort(order, (size_t)n, sizeof *order, by_first_use);
  int64_t peak = 0;
  for (int i = 0; i < n; i++) {
    order[i]->at = first_fit(order, i, order[i]);
    if (order[i]->at + footprint(order[i]) > peak) peak = order[i]->at + footprint(order[i]);
  }
  if (peak > desc->max_smem) {
    tc_gpu_fail(P, over->loc, "shared memory: the block's tiles need %lld bytes one after another and %lld with the tiles of "
                "disjoint lifetimes sharing memory; %s allows %lld (exceeded from '%s' on)", (long long)sequential, (long long)peak,
                desc->target, (long long)desc->max_smem, over->name);
    return false;
  }
  /* a barrier before each tile's first statement where it takes memory an earlier tile used */
  bool *need = TC_NEW_ARRAY(P->a, bool, R.nitems + 1);
  int shared = 0, barriers = 0;
  for (int i = 0; i < n; i++) {
    tile *t = order[i];
    bool reuses = false;
    for (int j = 0; j < n; j++) {
      const tile *p = order[j];
      if (p == t || p->last >= t->first || !memory_meets(p, t)) continue;
      reuses = true;
      if (!barrier_between(&R, p->last, t->first)) need[t->first] = true;
    }
    shared += reuses;
  }
  for (int i = R.nitems - 1; i >= 0; i--)
    if (need[i] && R.items[i].parent) {
      insert_barrier(&R, &R.items[i]);
      barriers++;
    }
  for (int i = 0; i < n; i++) {
    order[i]->b->smem_placed = true;
    order[i]->b->smem_at = order[i]->at;
  }
  if (P->notes)
    tc_sb_printf(P->notes, "shared memory: %lld bytes, %d tile%s reusing the memory of tiles dead by then (%lld bytes one after "
                 "another, more than %s allows); %d barrier%s added\n", (long long)peak, shared, shared == 1 ? "" : "s",
                 (long long)sequential, desc->target, barriers, barriers == 1 ? "" : "s");
  return true;
}
