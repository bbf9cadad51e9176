/* epilogue.c: a gemm accumulator's T.copy to global memory, through shared memory.
 *
 * In the tensor-core accumulator layout (layout.c, TC_GL_ACC) a thread holds pairs of
 * neighbouring elements, four threads cover 8 columns of a row and a warp 8 rows: stored from
 * registers, every warp instruction writes 8 rows x 16 bytes (4- or 8-byte pieces), partial
 * sectors of eight lines, and the 2-byte form of a float16 tile needs 128 such instructions
 * per thread for a 128 x 256 tile. On the H200 that cost a quarter of a 4096^3 GEMM's time.
 *
 * Staged, each warp passes its part of the tile through a private shared-memory tile of
 * 16 rows x 128 bytes, one chunk of columns at a time:
 *
 *   for each 16-row tile mi of the warp, each 128-byte column chunk cb:
 *     registers -> stage: copy_vec of each pair (converted), 16-byte units XOR-swizzled by
 *                         row so that the 8 rows of one instruction hit different banks
 *     warp_sync
 *     stage -> global:    each lane moves 16-byte units (copy16), a warp instruction 4 whole
 *                         rows of 128 bytes
 *     warp_sync            (the stage is rewritten by the next chunk)
 *
 * No block barrier is needed: a warp reads back only what it wrote. A 16-byte unit is stored
 * whole when it lies inside the tensor and the tensor's rows are 16-byte aligned (the tile's
 * first element aligned, rows of whole units: one run-time test); otherwise its elements are
 * stored one by one, each checked, from the stage (a loop, not unrolled: the registers are
 * already in shared memory). So partial and unaligned tiles take the same path, and the kernel
 * carries one copy of the epilogue instead of several unrolled ones. */
#include <stdio.h>

#include "analysis/analysis.h"
#include "gpu/gpu_internal.h"
#include "ir/walk.h"
#include "util/strbuf.h"

static tc_expr *ci(tc_gpu_plan *P, int64_t v, tc_loc loc) { return tc_ir_int(P->a, v, tc_index_dtype(), loc); }
static tc_expr *bin(tc_gpu_plan *P, tc_expr_op op, tc_expr *x, tc_expr *y, tc_loc loc) {
  return tc_ir_binary(P->a, op, x, y, loc);
}
static tc_expr **one(tc_gpu_plan *P, tc_expr *e) {
  tc_expr **v = TC_NEW_ARRAY(P->a, tc_expr *, 1);
  v[0] = e;
  return v;
}

/* LET name = v, appended to out; returns a reference to it. */
static tc_expr *let(tc_gpu_plan *P, tc_stmt_list *out, const char *name, tc_expr *v, tc_loc loc) {
  tc_var *x = tc_ir_new_var(P->a, P->k, name, v->dtype, TC_VAR_LOCAL, loc);
  tc_stmt *s = tc_ir_stmt(P->a, TC_ST_LET, loc);
  s->u.let.var = x;
  s->u.let.value = v;
  tc_stmt_list_push(P->a, out, s);
  return tc_ir_var_ref(P->a, x, loc);
}

/* dst[idx] is inside its tensor, along every dimension (the last one for `span` elements). */
static tc_expr *inside(tc_gpu_plan *P, const tc_region *dst, tc_expr **idx, int64_t span, tc_loc loc) {
  tc_expr *c = NULL;
  for (int d = 0; d < dst->ndim; d++) {
    tc_expr *end = d == dst->ndim - 1 ? bin(P, TC_OP_ADD, idx[d], ci(P, span, loc), loc) : bin(P, TC_OP_ADD, idx[d], ci(P, 1, loc), loc);
    tc_expr *t = bin(P, TC_OP_AND, bin(P, TC_OP_GE, idx[d], ci(P, 0, loc), loc), bin(P, TC_OP_LE, end, dst->buf->shape[d], loc), loc);
    c = c ? bin(P, TC_OP_AND, c, t, loc) : t;
  }
  return c;
}

/* The per-thread values both forms use, once (LETs keep the printed code small: NVRTC time). */
typedef struct epi_lanes {
  tc_expr *lane, *wbase, *warp, *g4, *cu, *cw; /* lane; the warp's stage; its first thread (with_warp);
                                                  row in 8; 16-byte unit, word in it */
} epi_lanes;
static epi_lanes epi_setup(tc_gpu_plan *P, tc_stmt_list *out, int64_t stage_per_warp, int64_t U, bool with_warp, tc_loc loc) {
  epi_lanes E = {0};
  tc_expr *tid = tc_ir_var_ref(P->a, P->tid, loc);
  E.lane = let(P, out, "epi_lane", bin(P, TC_OP_FLOORMOD, tid, ci(P, 32, loc), loc), loc);
  E.wbase = let(P, out, "epi_base", bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORDIV, tc_ir_clone_expr(P->a, tid), ci(P, 32, loc), loc),
                                        ci(P, stage_per_warp, loc), loc), loc);
  if (with_warp)
    E.warp = let(P, out, "epi_warp", bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORDIV, tc_ir_clone_expr(P->a, tid), ci(P, 32, loc), loc), ci(P, 32, loc), loc), loc);
  E.g4 = let(P, out, "epi_g", bin(P, TC_OP_FLOORDIV, E.lane, ci(P, 4, loc), loc), loc);                 /* row in 8 */
  tc_expr *q2 = bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORMOD, E.lane, ci(P, 4, loc), loc), ci(P, 2, loc), loc); /* column in 8 */
  E.cu = let(P, out, "epi_cu", bin(P, TC_OP_FLOORDIV, q2, ci(P, U, loc), loc), loc);
  E.cw = let(P, out, "epi_cw", bin(P, TC_OP_FLOORMOD, tc_ir_clone_expr(P->a, q2), ci(P, U, loc), loc), loc);
  return E;
}

/* registers -> stage tile at sbase (16 rows x CW elements) for 16-row tile mi, chunk cb: row
 * h*8 + g, columns j*8 + q2 (+1), 16-byte units XOR-swizzled by the row (the 128-byte swizzle).
 * The chunk's copies form one sequence of their own, so that the cuda printer converts them with
 * the bare instructions and checks for a NaN once per chunk (codegen.c, nan_deferred_run): a
 * check per pair cost a branch and a convergence barrier each, 5% of a 4096^3 GEMM's time. */
static void stage_chunk(tc_gpu_plan *P, tc_stmt_list *out, const epi_lanes *E, tc_buffer *stage, tc_buffer *regs, tc_expr *sbase,
                        int64_t mi, int64_t cb, int64_t NT, int64_t CW, int64_t U, tc_loc loc) {
  tc_expr *rowbases[2];
  for (int64_t h = 0; h < 2; h++) {
    tc_expr *row = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, E->g4), ci(P, h * 8, loc), loc);
    rowbases[h] = let(P, out, "epi_row", bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, sbase), bin(P, TC_OP_MUL, row, ci(P, CW, loc), loc), loc), loc);
  }
  tc_stmt_list copies = {0};
  for (int64_t h = 0; h < 2; h++) {
    tc_expr *rowbase = rowbases[h];
    for (int64_t j = 0; j < CW / 8; j++) {
      int64_t ni = cb * (CW / 8) + j, r = ((mi * 2 + h) * NT + ni) * 2;
      /* unit (j*8 + q2) / U = j*8/U + q2/U (U divides 8); the row's swizzle is g (h*8 + g & 7) */
      tc_expr *unit = bin(P, TC_OP_BIT_XOR, bin(P, TC_OP_ADD, ci(P, j * 8 / U, loc), tc_ir_clone_expr(P->a, E->cu), loc),
                          tc_ir_clone_expr(P->a, E->g4), loc);
      tc_expr *at = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, rowbase),
                        bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, unit, ci(P, U, loc), loc), tc_ir_clone_expr(P->a, E->cw), loc), loc);
      tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 3);
      args[0] = tc_ir_address_of(P->a, stage, 1, one(P, at), loc);
      args[1] = tc_ir_address_of(P->a, regs, 1, one(P, ci(P, r, loc)), loc);
      args[2] = ci(P, 2, loc);
      tc_stmt_list_push(P->a, &copies, tc_ir_intrinsic_stmt(P->a, "copy_vec", 3, args, loc));
    }
  }
  tc_stmt_list_push(P->a, out, tc_ir_seq(P->a, copies.n, copies.items, loc));
}

/* ---- the TMA form (sm_90) ----
 * A warp's 16-row tile of a chunk is one TMA box (16 rows x one 128-byte panel, the 128-byte
 * swizzle the stage is already written in), so on sm_90 the stage -> global half becomes one
 * cp.async.bulk.tensor store by lane 0, which returns at once: the warp goes on to its next
 * chunk, and after the last to the next tile's mainloop, while the TMA unit drains the stage.
 * With every block of a persistent GEMM finishing its tile at about the same moment, the
 * 16-byte stores stalled the consumers for the whole write of the tile (5% of a 4096^3 GEMM on
 * the H200). Each warp cycles through `slots` 16-row tiles:
 *
 *   lane 0: wait until the previous epilogue's stores are written; warp_sync
 *   for each chunk c:
 *     if c >= slots: lane 0: wait until chunk c - slots has read its tile; warp_sync
 *     registers -> slot c % slots (as above); fence_async_shared; warp_sync
 *     lane 0: tma_store(slot -> the chunk's 16 x 128-byte box)
 *
 * The boxes clip at the tensor's edges, so partial tiles need no test. The stores are
 * asynchronous, so the form is taken only when this copy is the kernel's one access to the
 * tensor (nothing reads it back, nothing else writes it); the kernel's end waits for them
 * (codegen). */

typedef struct count_ctx {
  const tc_buffer *b;
  int n;
} count_ctx;
static void count_buf(void *ctx, const tc_buffer *b, bool write) {
  (void)write;
  count_ctx *C = ctx;
  if (b == C->b) C->n++;
}

/* The kernel parameter the copy to dst may store with TMA boxes of 16 rows x CW columns, or -1
 * with the reason in why (empty when the arch has no TMA). */
static int tma_store_param(tc_gpu_plan *P, const tc_region *dst, int64_t CW, char *why, size_t cap) {
  const tc_buffer *g = dst->buf;
#define NOT(...) return (snprintf(why, cap, __VA_ARGS__), -1)
  if (!P->desc->tma) return -1;
  int param = -1, nd = g->ndim;
  for (int i = 0; i < P->k->nparams; i++)
    if (P->k->params[i].buf == g) param = i;
  if (param < 0 || nd < 2 || dst->ndim != nd) NOT("'%s' is not a kernel parameter", g->name);
  if (g->layout) NOT("'%s' has an annotated layout", g->name);
  int64_t R, C;
  if (!tc_expr_const_int(g->shape[nd - 2], &R) || !tc_expr_const_int(g->shape[nd - 1], &C) || C % CW)
    NOT("the last two dimensions of '%s' are not constants with columns a multiple of %lld", g->name, (long long)CW);
  if (!tc_gpu_tma_leading_dims(dst)) NOT("the leading dimensions of '%s' are not single indices of constant or symbolic dims", g->name);
  if (!tc_gpu_multiple_of(dst->r[nd - 2].start, 8) || !tc_gpu_multiple_of(dst->r[nd - 1].start, CW))
    NOT("the tile is not known to start on an 8-row group and a 128-byte panel of '%s'", g->name);
  count_ctx N = {g, 0};
  tc_access_fns F = {NULL, count_buf, &N};
  tc_stmt_accesses(&F, P->k->body, true);
  if (N.n != 1) NOT("the kernel accesses '%s' elsewhere too (the stores are asynchronous)", g->name);
#undef NOT
  return param;
}

/* The 16-row tiles each warp gets for the TMA form: as many as it has chunks, within the shared
 * memory left, at least two (one for a single chunk), and never at the cost of a second block on the SM (the 128 x 128
 * GEMM runs two); 0 with the reason in why. */
static int64_t tma_slots(tc_gpu_plan *P, int warps, int64_t chunks, char *why, size_t cap) {
  int64_t one = (int64_t)warps * 16 * 128, base = tc_gpu_shared_bytes(P) + 1024; /* + the barriers, alignment */
  /* blocks an SM holds by shared memory (the cuda printer's rule: 228 KiB, 1 KiB per block) */
  int64_t blocks1 = 228 * 1024 / (base + one + 1024), keep = blocks1 < 2 ? blocks1 : 2, slots = chunks;
  while (slots > 1 && (base + slots * one > P->desc->max_smem || 228 * 1024 / (base + slots * one + 1024) < keep)) slots--;
  if (slots < (chunks < 2 ? chunks : 2)) {
    snprintf(why, cap, "two 16-row tiles per warp do not fit beside the kernel's %lld bytes of shared memory without costing a block "
             "per SM", (long long)base);
    return 0;
  }
  return slots;
}

static tc_stmt *lane0(tc_gpu_plan *P, tc_expr *lane, tc_stmt *s, tc_loc loc) {
  tc_stmt *c = tc_ir_stmt(P->a, TC_ST_IF, loc);
  c->u.if_.cond = bin(P, TC_OP_EQ, tc_ir_clone_expr(P->a, lane), ci(P, 0, loc), loc);
  c->u.if_.then_s = s;
  return c;
}
static tc_stmt *store_wait(tc_gpu_plan *P, int64_t n, bool reads, tc_loc loc) {
  tc_expr **a = TC_NEW_ARRAY(P->a, tc_expr *, 2);
  a[0] = ci(P, n, loc);
  a[1] = ci(P, reads, loc);
  return tc_ir_intrinsic_stmt(P->a, "tma_store_wait", 2, a, loc);
}

static tc_stmt *acc_store_tma(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, const tc_gpu_layout *D, tc_buffer *regs,
                              tc_buffer *stage, int64_t slots, int param, int64_t CW, tc_loc loc) {
  const tc_buffer *g = dst->buf;
  int eb = tc_dtype_bits(g->dtype) / 8;
  int64_t TN = D->N / D->wn, U = 16 / eb, NT = TN / 8, tiles = D->num_regs / (4 * NT);
  int map = tc_gpu_tma_map(P, param, 16, CW);
  tc_stmt_list out = {0};
  tc_expr *tid = tc_ir_var_ref(P->a, P->tid, loc);
  epi_lanes E = epi_setup(P, &out, slots * 16 * CW, U, false, loc);
  tc_expr *lane = E.lane;
  /* the previous epilogue's stores (a persistent block's last tile, or this copy in a loop) */
  tc_stmt_list_push(P->a, &out, lane0(P, lane, store_wait(P, 0, false, loc), loc));
  tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
  int64_t c = 0;
  for (int64_t mi = 0; mi < tiles; mi++) {
    for (int64_t cb = 0; cb < TN / CW; cb++, c++) {
      int64_t at0 = (c % slots) * 16 * CW;
      if (c >= slots) {
        tc_stmt_list_push(P->a, &out, lane0(P, lane, store_wait(P, slots - 1, true, loc), loc));
        tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
      }
      tc_expr *sbase = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, E.wbase), ci(P, at0, loc), loc);
      stage_chunk(P, &out, &E, stage, regs, sbase, mi, cb, NT, CW, U, loc);
      tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "fence_async_shared", 0, NULL, loc));
      tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
      /* the box's origin: the tile element of lane 0's first register of the chunk */
      tc_expr *idx[TC_GL_MAXDIM], *valid = NULL;
      tc_expr *warp0 = bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORDIV, tc_ir_clone_expr(P->a, tid), ci(P, 32, loc), loc), ci(P, 32, loc), loc);
      tc_gl_index_exprs(P->a, D, warp0, ((mi * 2) * NT + cb * (CW / 8)) * 2, idx, &valid, loc);
      tc_expr **gi = tc_gpu_region_at(P, dst, idx, loc);
      tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 5);
      args[0] = tc_ir_address_of(P->a, stage, 1, one(P, sbase), loc);
      args[1] = tc_ir_address_of(P->a, dst->buf, dst->ndim, gi, loc);
      args[2] = ci(P, 16, loc);
      args[3] = ci(P, CW, loc);
      args[4] = ci(P, map, loc);
      tc_stmt_list_push(P->a, &out, lane0(P, lane, tc_ir_intrinsic_stmt(P->a, "tma_store", 5, args, loc), loc));
    }
  }
  if (P->notes) {
    char what[96];
    tc_gl_describe(D, what, sizeof what);
    tc_sb_printf(P->notes,
                 "T.copy(%s -> %s): the %s accumulator through shared memory, TMA stores (cp.async.bulk.tensor) of 16 x 128-byte "
                 "boxes, %lld tile%s per warp\n",
                 src->buf->name, g->name, what, (long long)slots, slots == 1 ? "" : "s");
  }
  return tc_ir_seq(P->a, out.n, out.items, loc);
}

tc_stmt *tc_gpu_acc_store_staged(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                 tc_loc loc) {
  const tc_buffer *f = src->buf, *g = dst->buf;
  if (!P->desc->staged_epilogue || f->scope != TC_SCOPE_FRAGMENT || g->scope != TC_SCOPE_GLOBAL || tc_layout_on_global(g) || n != 2)
    return NULL;
  const tc_gpu_layout *D = P->frag[f->id];
  tc_buffer *regs = P->regs[f->id];
  if (!D || !regs || D->kind != TC_GL_ACC || D->reps != 1 || D->ndim != 2 || D->threads != P->threads) return NULL;
  int bits = tc_dtype_bits(g->dtype), eb = bits / 8;
  if ((bits != 16 && bits != 32) || g->dtype.lanes != 1 || tc_dtype_bits(f->dtype) < 8) return NULL;
  int64_t M = D->M, N = D->N, TN = N / D->wn, CW = 128 / eb, U = 16 / eb; /* columns per chunk, per 16-byte unit */
  if (ext[0] != M || ext[1] != N || TN % CW || M % (16 * D->wm)) return NULL;
  for (int d = 0; d < src->ndim; d++) {
    int64_t s0;
    if (!tc_expr_const_int(src->r[d].start, &s0) || s0 || src->r[d].extent != D->shape[d]) return NULL;
  }
  if (dst->r[dst->ndim - 2].extent != M || dst->r[dst->ndim - 1].extent != N) return NULL;
  /* the per-warp stages: one buffer per element size, sized for the block's warps; in the TMA
   * form each warp has `slots` 16-row tiles of it. Every user of a buffer takes the same form:
   * a 16-byte-store epilogue would rewrite a tile a TMA store may still be reading. */
  int warps = P->threads / 32, slot = bits == 16 ? 0 : 1;
  int64_t NT = TN / 8, tiles = D->num_regs / (4 * NT), chunks = tiles * (TN / CW);
  char why[160] = "";
  int param = tma_store_param(P, dst, CW, why, sizeof why);
  int64_t slots = 0;
  if (param >= 0 && !(slots = tma_slots(P, warps, chunks, why, sizeof why))) param = -1;
  if (!P->epi_stage[slot]) {
    int64_t elems = (int64_t)warps * 16 * CW * (param >= 0 ? slots : 1), need = (elems * eb + 127) / 128 * 128;
    if (tc_gpu_shared_bytes(P) + need > P->desc->max_smem) return NULL; /* would not fit: stay element-wise */
    P->epi_stage[slot] = tc_ir_new_buffer(P->a, P->k, "tcg_epilogue", g->dtype, TC_SCOPE_SHARED, 1, one(P, ci(P, elems, loc)), loc);
    P->epi_stage[slot]->warp_private = true;
    P->epi_slots[slot] = param >= 0 ? (int)slots : 0;
  } else if (!tc_dtype_eq(P->epi_stage[slot]->dtype, g->dtype) || (P->epi_slots[slot] > 0) != (param >= 0)) {
    return NULL; /* one stage per element size, in one form; another user stays element-wise */
  }
  if (param >= 0) return acc_store_tma(P, src, dst, D, regs, P->epi_stage[slot], P->epi_slots[slot], param, CW, loc);
  tc_buffer *stage = P->epi_stage[slot];
  tc_stmt_list out = {0};
  epi_lanes E = epi_setup(P, &out, 16 * CW, U, true, loc);
  tc_expr *lane = E.lane, *wbase = E.wbase, *owner0 = E.warp;
  tc_expr *r8 = let(P, &out, "epi_r8", bin(P, TC_OP_FLOORDIV, lane, ci(P, 8, loc), loc), loc);     /* read-back row in 4 */
  tc_expr *u8 = let(P, &out, "epi_u", bin(P, TC_OP_FLOORMOD, lane, ci(P, 8, loc), loc), loc);      /* read-back unit */
  if (P->notes && why[0]) tc_sb_printf(P->notes, "T.copy(%s -> %s): not by TMA stores: %s\n", f->name, g->name, why);
  /* whole 16-byte units may be stored where the tensor's rows are aligned (tested once) */
  tc_expr *aligned;
  {
    tc_expr **g0 = TC_NEW_ARRAY(P->a, tc_expr *, dst->ndim);
    for (int d = 0; d < dst->ndim; d++) g0[d] = dst->r[d].start;
    tc_expr *a0 = tc_ir_call(P->a, "aligned16", tc_dt(TC_DT_BOOL), 1, one(P, tc_ir_address_of(P->a, dst->buf, dst->ndim, g0, loc)), loc);
    tc_expr *rows = bin(P, TC_OP_EQ, bin(P, TC_OP_FLOORMOD, g->shape[g->ndim - 1], ci(P, U, loc), loc), ci(P, 0, loc), loc);
    aligned = let(P, &out, "epi_aligned", bin(P, TC_OP_AND, a0, rows, loc), loc);
  }
  for (int64_t mi = 0; mi < tiles; mi++) {
    for (int64_t cb = 0; cb < TN / CW; cb++) {
      stage_chunk(P, &out, &E, stage, regs, wbase, mi, cb, NT, CW, U, loc);
      tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
      /* stage -> global: unit i*32 + lane is row 4i + r8, unit u8 of the chunk */
      for (int64_t i = 0; i < 16 * 8 / 32; i++) {
        /* row & 7 = r8 + 4 (i % 2), as r8 < 4 */
        tc_expr *sw = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, r8), ci(P, 4 * (i % 2), loc), loc);
        tc_expr *at = let(P, &out, "epi_at",
                          bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, wbase),
                              bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, r8), ci(P, 4 * i, loc), loc), ci(P, CW, loc), loc),
                                  bin(P, TC_OP_MUL, bin(P, TC_OP_BIT_XOR, tc_ir_clone_expr(P->a, u8), sw, loc), ci(P, U, loc), loc), loc), loc), loc);
        /* the tile element there: register (mi, h = i / 2, the chunk's first column) of the
         * thread of this warp holding row (4i + r8) % 8 of it in lane group 0 */
        int64_t h = (i * 4) / 8, r = ((mi * 2 + h) * NT + cb * (CW / 8)) * 2;
        tc_expr *owner = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, owner0), bin(P, TC_OP_MUL, tc_ir_clone_expr(P->a, sw), ci(P, 4, loc), loc), loc);
        tc_expr *idx[TC_GL_MAXDIM], *valid = NULL;
        tc_gl_index_exprs(P->a, D, owner, r, idx, &valid, loc);
        tc_expr *it[2] = {let(P, &out, "epi_i", idx[0], loc),
                          let(P, &out, "epi_j", bin(P, TC_OP_ADD, idx[1], bin(P, TC_OP_MUL, tc_ir_clone_expr(P->a, u8), ci(P, U, loc), loc), loc), loc)};
        tc_expr **gi = tc_gpu_region_at(P, dst, it, loc);
        tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 2);
        args[0] = tc_ir_address_of(P->a, dst->buf, dst->ndim, gi, loc);
        args[1] = tc_ir_address_of(P->a, stage, 1, one(P, tc_ir_clone_expr(P->a, at)), loc);
        tc_stmt *whole = tc_ir_intrinsic_stmt(P->a, "copy16", 2, args, loc);
        /* else element by element, each store checked against the tensor (codegen's bounds) */
        tc_var *e = tc_ir_new_var(P->a, P->k, "e", tc_index_dtype(), TC_VAR_LOOP, loc);
        tc_expr *er = tc_ir_var_ref(P->a, e, loc);
        tc_expr **gie = TC_NEW_ARRAY(P->a, tc_expr *, dst->ndim);
        for (int d = 0; d < dst->ndim; d++) gie[d] = tc_ir_clone_expr(P->a, gi[d]);
        gie[dst->ndim - 1] = bin(P, TC_OP_ADD, gie[dst->ndim - 1], er, loc);
        tc_stmt *st = tc_ir_stmt(P->a, TC_ST_STORE, loc);
        st->u.store.buf = dst->buf;
        st->u.store.nidx = dst->ndim;
        st->u.store.idx = gie;
        st->u.store.value = tc_ir_load(P->a, stage, 1, one(P, bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, at), er, loc)), loc);
        tc_stmt *each = tc_ir_stmt(P->a, TC_ST_FOR, loc);
        each->u.loop.var = e;
        each->u.loop.min = ci(P, 0, loc);
        each->u.loop.extent = ci(P, U, loc);
        each->u.loop.kind = TC_LOOP_SERIAL;
        each->u.loop.body = st;
        tc_stmt *pick = tc_ir_stmt(P->a, TC_ST_IF, loc);
        pick->u.if_.cond = bin(P, TC_OP_AND, tc_ir_clone_expr(P->a, aligned), inside(P, dst, gi, U, loc), loc);
        pick->u.if_.then_s = whole;
        pick->u.if_.else_s = each;
        tc_stmt_list_push(P->a, &out, pick);
      }
      tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
    }
  }
  if (P->notes) {
    char what[96];
    tc_gl_describe(D, what, sizeof what);
    tc_sb_printf(P->notes, "T.copy(%s -> %s): the %s accumulator through shared memory, 16-byte stores of whole rows\n", f->name,
                 g->name, what);
  }
  return tc_ir_seq(P->a, out.n, out.items, loc);
}
