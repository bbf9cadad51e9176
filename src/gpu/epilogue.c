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

typedef struct smem_ctx {
  int64_t bytes;
} smem_ctx;
static bool smem_cb(void *ctx, tc_stmt *s) {
  int64_t n;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->scope == TC_SCOPE_SHARED && (n = tc_buffer_numel(s->u.alloc.buf)) > 0)
    ((smem_ctx *)ctx)->bytes += ((int64_t)tc_dtype_storage_bytes(s->u.alloc.buf->dtype, (size_t)n) + 127) / 128 * 128;
  return true;
}
/* Shared memory the kernel has asked for so far (its tiles and the lowering's scratch). */
static int64_t shared_bytes(tc_gpu_plan *P) {
  smem_ctx S = {0};
  tc_visit_stmts(P->k->body, smem_cb, &S);
  tc_buffer *extra[6] = {P->scratch, P->scratch64, P->scratch_i32, P->scratch_i64, P->epi_stage[0], P->epi_stage[1]};
  for (int i = 0; i < 6; i++)
    if (extra[i]) S.bytes += ((int64_t)tc_dtype_storage_bytes(extra[i]->dtype, (size_t)extra[i]->shape[0]->ival) + 127) / 128 * 128;
  return S.bytes;
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

tc_stmt *tc_gpu_acc_store_staged(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                 tc_loc loc) {
  const tc_buffer *f = src->buf, *g = dst->buf;
  if (!P->desc->staged_epilogue || f->scope != TC_SCOPE_FRAGMENT || g->scope != TC_SCOPE_GLOBAL || n != 2) return NULL;
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
  /* the per-warp stages: one buffer per element size, sized for the block's warps */
  int warps = P->threads / 32, slot = bits == 16 ? 0 : 1;
  int64_t elems = (int64_t)warps * 16 * CW;
  if (!P->epi_stage[slot]) {
    int64_t need = (elems * eb + 127) / 128 * 128;
    if (shared_bytes(P) + need > P->desc->max_smem) return NULL; /* would not fit: stay element-wise */
    P->epi_stage[slot] = tc_ir_new_buffer(P->a, P->k, "tcg_epilogue", g->dtype, TC_SCOPE_SHARED, 1, one(P, ci(P, elems, loc)), loc);
  } else if (!tc_dtype_eq(P->epi_stage[slot]->dtype, g->dtype)) {
    return NULL; /* one stage per element size; a second dtype of that size stays element-wise */
  }
  tc_buffer *stage = P->epi_stage[slot];
  tc_stmt_list out = {0};
  /* per-thread values, once (LETs keep the printed code small: NVRTC time) */
  tc_expr *tid = tc_ir_var_ref(P->a, P->tid, loc);
  tc_expr *lane = let(P, &out, "epi_lane", bin(P, TC_OP_FLOORMOD, tid, ci(P, 32, loc), loc), loc);
  tc_expr *wbase = let(P, &out, "epi_base", bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORDIV, tid, ci(P, 32, loc), loc), ci(P, 16 * CW, loc), loc), loc);
  tc_expr *owner0 = let(P, &out, "epi_warp", bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORDIV, tid, ci(P, 32, loc), loc), ci(P, 32, loc), loc), loc);
  tc_expr *g4 = let(P, &out, "epi_g", bin(P, TC_OP_FLOORDIV, lane, ci(P, 4, loc), loc), loc);       /* row in 8 */
  tc_expr *q2 = bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORMOD, lane, ci(P, 4, loc), loc), ci(P, 2, loc), loc); /* column in 8 */
  tc_expr *cu = let(P, &out, "epi_cu", bin(P, TC_OP_FLOORDIV, q2, ci(P, U, loc), loc), loc);
  tc_expr *cw = let(P, &out, "epi_cw", bin(P, TC_OP_FLOORMOD, tc_ir_clone_expr(P->a, q2), ci(P, U, loc), loc), loc);
  tc_expr *r8 = let(P, &out, "epi_r8", bin(P, TC_OP_FLOORDIV, lane, ci(P, 8, loc), loc), loc);     /* read-back row in 4 */
  tc_expr *u8 = let(P, &out, "epi_u", bin(P, TC_OP_FLOORMOD, lane, ci(P, 8, loc), loc), loc);      /* read-back unit */
  /* whole 16-byte units may be stored where the tensor's rows are aligned (tested once) */
  tc_expr *aligned;
  {
    tc_expr **g0 = TC_NEW_ARRAY(P->a, tc_expr *, dst->ndim);
    for (int d = 0; d < dst->ndim; d++) g0[d] = dst->r[d].start;
    tc_expr *a0 = tc_ir_call(P->a, "aligned16", tc_dt(TC_DT_BOOL), 1, one(P, tc_ir_address_of(P->a, dst->buf, dst->ndim, g0, loc)), loc);
    tc_expr *rows = bin(P, TC_OP_EQ, bin(P, TC_OP_FLOORMOD, g->shape[g->ndim - 1], ci(P, U, loc), loc), ci(P, 0, loc), loc);
    aligned = let(P, &out, "epi_aligned", bin(P, TC_OP_AND, a0, rows, loc), loc);
  }
  int64_t NT = TN / 8, tiles = D->num_regs / (4 * NT);
  for (int64_t mi = 0; mi < tiles; mi++) {
    for (int64_t cb = 0; cb < TN / CW; cb++) {
      /* registers -> stage: row h*8 + g, columns j*8 + q2 (+1), units swizzled by the row */
      for (int64_t h = 0; h < 2; h++) {
        tc_expr *row = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, g4), ci(P, h * 8, loc), loc);
        tc_expr *rowbase = let(P, &out, "epi_row", bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, wbase), bin(P, TC_OP_MUL, row, ci(P, CW, loc), loc), loc), loc);
        for (int64_t j = 0; j < CW / 8; j++) {
          int64_t ni = cb * (CW / 8) + j, r = ((mi * 2 + h) * NT + ni) * 2;
          /* unit (j*8 + q2) / U = j*8/U + q2/U (U divides 8); the row's swizzle is g (h*8 + g & 7) */
          tc_expr *unit = bin(P, TC_OP_BIT_XOR, bin(P, TC_OP_ADD, ci(P, j * 8 / U, loc), tc_ir_clone_expr(P->a, cu), loc),
                              tc_ir_clone_expr(P->a, g4), loc);
          tc_expr *at = bin(P, TC_OP_ADD, tc_ir_clone_expr(P->a, rowbase),
                            bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, unit, ci(P, U, loc), loc), tc_ir_clone_expr(P->a, cw), loc), loc);
          tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 3);
          args[0] = tc_ir_address_of(P->a, stage, 1, one(P, at), loc);
          args[1] = tc_ir_address_of(P->a, regs, 1, one(P, ci(P, r, loc)), loc);
          args[2] = ci(P, 2, loc);
          tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "copy_vec", 3, args, loc));
        }
      }
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
