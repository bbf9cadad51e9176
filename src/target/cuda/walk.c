/* walk.c: the order in which a persistent kernel's blocks walk its tiles (docs/cuda.md,
 * "Persistent blocks").
 *
 * G persistent blocks run G consecutive tiles of the walk at once, every block at about the
 * same k iteration, so the operand panels those tiles share are read from DRAM once per wave
 * and from L2 after that. What a wave reads from DRAM is then about (distinct grid-y indices)
 * x (bytes loaded per y index) + (distinct grid-x indices) x (bytes per x index): least when
 * the wave is a block of tiles whose sides balance the two. T.use_swizzle's panels give that
 * shape when the panel height p is about sqrt(G x per_x / per_y) grid-y indices (for row
 * panels; per_y / per_x for column ones): 16 for 128 x 256 f16 tiles on 132 SMs, where the
 * panel_size=10 that suits hardware-scheduled blocks reads 25% more (186.6 against 148.9 MB at
 * 4096^3, as ncu counts on an H100). The panel is picked on the device (prelude
 * tcg_wave_panel), since G is the device's; this file finds the bytes it weighs.
 *
 * Between tiles the consumer warpgroups need not meet where they share nothing but the
 * pipeline's stages (tc_cuda_consumers_run_free): without the barriers at a tile's start, after
 * its loop and at its end, one warpgroup's epilogue overlaps the other's first gemms of the next
 * tile, where with them both store while the tensor cores wait (4096^3 f16 on an H100: 753
 * against 744 TFLOP/s, 1.00x against 0.98x cuBLAS). */
#include "target/cuda/walk.h"

#include <string.h>

#include "dtype/dtype.h"

const tc_stmt *tc_cuda_find_let(const tc_stmt *s, const tc_var *v) {
  if (!s) return NULL;
  if (s->kind == TC_ST_LET && s->u.let.var == v) return s;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) {
      const tc_stmt *f = tc_cuda_find_let(s->u.seq.items[i], v);
      if (f) return f;
    }
  return NULL;
}

/* Whether e depends on v, through the LETs of `scope` and of the kernel's body. */
static bool mentions(const tc_kernel_ir *k, const tc_stmt *scope, const tc_expr *e, const tc_var *v, int depth) {
  if (!e || !v || depth > 16) return false;
  if (e->op == TC_OP_VAR) {
    if (e->var == v) return true;
    if (e->var->kind != TC_VAR_LOCAL) return false;
    const tc_stmt *let = tc_cuda_find_let(scope, e->var);
    if (!let) let = tc_cuda_find_let(k->body, e->var);
    return let && mentions(k, scope, let->u.let.value, v, depth + 1);
  }
  for (int i = 0; i < e->nargs; i++)
    if (mentions(k, scope, e->args[i], v, depth + 1)) return true;
  return false;
}

static void tma_bytes(const tc_kernel_ir *k, const tc_stmt *scope, const tc_stmt *s, int64_t *per_x, int64_t *per_y) {
  if (!s) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tma_bytes(k, scope, s->u.seq.items[i], per_x, per_y);
    return;
  case TC_ST_FOR: tma_bytes(k, scope, s->u.loop.body, per_x, per_y); return;
  case TC_ST_IF:
    tma_bytes(k, scope, s->u.if_.then_s, per_x, per_y);
    tma_bytes(k, scope, s->u.if_.else_s, per_x, per_y);
    return;
  case TC_ST_INTRINSIC: {
    int64_t rows = 0, cols = 0;
    if (strcmp(s->u.intrinsic.name, "tma_load") || s->u.intrinsic.nargs != 6 || !s->u.intrinsic.args[1]->buf ||
        !tc_expr_const_int(s->u.intrinsic.args[3], &rows) || !tc_expr_const_int(s->u.intrinsic.args[4], &cols))
      return;
    const tc_expr *at = s->u.intrinsic.args[1];
    int64_t bytes = rows * cols * tc_dtype_bits(at->buf->dtype) / 8;
    bool x = mentions(k, scope, at, k->block_idx[0], 0), y = mentions(k, scope, at, k->block_idx[1], 0);
    if (x && !y) *per_x += bytes;
    if (y && !x) *per_y += bytes;
    return;
  }
  default: return;
  }
}

void tc_cuda_wave_bytes(const tc_kernel_ir *k, const tc_stmt *loop, int64_t *per_x, int64_t *per_y) {
  *per_x = *per_y = 0;
  if (!loop || loop->kind != TC_ST_FOR || !loop->u.loop.body || loop->u.loop.body->kind != TC_ST_SEQ ||
      loop->u.loop.body->u.seq.n < 1)
    return;
  const tc_stmt *producer = loop->u.loop.body->u.seq.items[0];
  tma_bytes(k, producer, producer, per_x, per_y);
}

/* ---- consumers that need not meet between tiles ---- */
typedef struct free_scan {
  const tc_stmt *loop;
  unsigned char *gread, *gwrite; /* per global buffer id (< n) */
  int n;
  bool ok;
} free_scan;

static void touch(free_scan *F, const tc_buffer *b, bool read, bool write) {
  if (!b) return;
  if (b->scope == TC_SCOPE_GLOBAL) {
    if (b->id < 0 || b->id >= F->n) {
      F->ok = false;
      return;
    }
    if (read) F->gread[b->id] = 1;
    if (write) F->gwrite[b->id] = 1;
  } else if (b->scope == TC_SCOPE_SHARED && !tc_buffer_storage(b)->warp_private)
    F->ok = false;
}

/* A load reads its buffer; an address handed to an intrinsic is read and written, unless the
 * caller says which (scan_address). */
static void scan_expr(free_scan *F, const tc_expr *e) {
  if (!e || !F->ok) return;
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && e->buf) touch(F, e->buf, true, e->op == TC_OP_ADDRESS_OF);
  for (int i = 0; i < e->nargs && e->args; i++) scan_expr(F, e->args[i]);
}
static void scan_address(free_scan *F, const tc_expr *e, bool write) {
  if (!e || e->op != TC_OP_ADDRESS_OF || !e->buf) {
    scan_expr(F, e);
    return;
  }
  touch(F, e->buf, !write, write);
  for (int i = 0; i < e->nargs && e->args; i++) scan_expr(F, e->args[i]);
}

static void scan_stmt(free_scan *F, const tc_stmt *s) {
  static const char *const quiet[] = {"tma_store_wait", "fence_async_shared", "warp_sync", "wgmma_wait", NULL};
  if (!s || !F->ok || s == F->loop) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) scan_stmt(F, s->u.seq.items[i]);
    return;
  case TC_ST_ALLOC:
  case TC_ST_BARRIER:
  case TC_ST_ANNOTATE: return;
  case TC_ST_LET:
  case TC_ST_ASSIGN: scan_expr(F, s->u.let.value); return;
  case TC_ST_FOR:
    if (s->u.loop.ws_split) F->ok = false; /* a second pipeline */
    scan_expr(F, s->u.loop.min), scan_expr(F, s->u.loop.extent), scan_stmt(F, s->u.loop.body);
    return;
  case TC_ST_IF: scan_expr(F, s->u.if_.cond), scan_stmt(F, s->u.if_.then_s), scan_stmt(F, s->u.if_.else_s); return;
  case TC_ST_STORE:
    touch(F, s->u.store.buf, false, true);
    for (int i = 0; i < s->u.store.nidx; i++) scan_expr(F, s->u.store.idx[i]);
    scan_expr(F, s->u.store.value);
    return;
  case TC_ST_INTRINSIC: {
    const char *n = s->u.intrinsic.name;
    if (!strcmp(n, "mbar_init")) return; /* made before the tiles */
    /* copies (dst, src, ...) and the TMA store (src, dst, ...) */
    int dst = !strcmp(n, "copy_vec") || !strcmp(n, "copy16") ? 0 : !strcmp(n, "tma_store") ? 1 : -1;
    bool known = dst >= 0;
    for (int i = 0; quiet[i]; i++) known |= !strcmp(n, quiet[i]);
    if (!known) {
      F->ok = false;
      return;
    }
    for (int i = 0; i < s->u.intrinsic.nargs; i++)
      if (dst >= 0 && i < 2) scan_address(F, s->u.intrinsic.args[i], i == dst);
      else scan_expr(F, s->u.intrinsic.args[i]);
    return;
  }
  default: F->ok = false; return; /* tile operations, atomics, prints: keep the barriers */
  }
}

bool tc_cuda_consumers_run_free(const tc_kernel_ir *k, const tc_stmt *loop) {
  enum { MAX_IDS = 4096 };
  unsigned char gread[MAX_IDS] = {0}, gwrite[MAX_IDS] = {0};
  free_scan F = {loop, gread, gwrite, MAX_IDS, true};
  if (!k || !loop) return false;
  scan_stmt(&F, k->body);
  for (int i = 0; F.ok && i < MAX_IDS; i++)
    if (gread[i] && gwrite[i]) F.ok = false;
  return F.ok;
}
