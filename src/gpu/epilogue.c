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
 * No block barrier is needed: a warp reads back only what it wrote. It is taken when the whole
 * tile is inside the tensor, 16-byte aligned, with rows of whole 16-byte units (tested once at
 * run time, like the other fast paths); otherwise the element-wise copy runs. */
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

tc_stmt *tc_gpu_acc_store_staged(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                 tc_expr **cond, tc_loc loc) {
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
  tc_expr *tid = tc_ir_var_ref(P->a, P->tid, loc);
  tc_expr *warp = bin(P, TC_OP_FLOORDIV, tid, ci(P, 32, loc), loc), *lane = bin(P, TC_OP_FLOORMOD, tid, ci(P, 32, loc), loc);
  tc_expr *base = bin(P, TC_OP_MUL, warp, ci(P, 16 * CW, loc), loc);
  int64_t NT = TN / 8, tiles = D->num_regs / (4 * NT);
  tc_stmt_list out = {0};
  for (int64_t mi = 0; mi < tiles; mi++) {
    for (int64_t cb = 0; cb < TN / CW; cb++) {
      /* registers -> stage: row h*8 + lane/4, columns j*8 + (lane%4)*2 (+1) of the chunk */
      tc_expr *srow0 = bin(P, TC_OP_FLOORDIV, lane, ci(P, 4, loc), loc);
      for (int64_t h = 0; h < 2; h++) {
        tc_expr *srow = bin(P, TC_OP_ADD, srow0, ci(P, h * 8, loc), loc);
        tc_expr *sw = bin(P, TC_OP_BIT_AND, srow, ci(P, 7, loc), loc);
        for (int64_t j = 0; j < CW / 8; j++) {
          int64_t ni = cb * (CW / 8) + j, r = ((mi * 2 + h) * NT + ni) * 2;
          tc_expr *col = bin(P, TC_OP_ADD, ci(P, j * 8, loc), bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORMOD, lane, ci(P, 4, loc), loc), ci(P, 2, loc), loc), loc);
          tc_expr *unit = bin(P, TC_OP_BIT_XOR, bin(P, TC_OP_FLOORDIV, col, ci(P, U, loc), loc), sw, loc);
          tc_expr *at = bin(P, TC_OP_ADD, base, bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, srow, ci(P, CW, loc), loc),
                                                     bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, unit, ci(P, U, loc), loc),
                                                         bin(P, TC_OP_FLOORMOD, col, ci(P, U, loc), loc), loc), loc), loc);
          tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 3);
          args[0] = tc_ir_address_of(P->a, stage, 1, one(P, at), loc);
          args[1] = tc_ir_address_of(P->a, regs, 1, one(P, ci(P, r, loc)), loc);
          args[2] = ci(P, 2, loc);
          tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "copy_vec", 3, args, loc));
        }
      }
      tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
      /* stage -> global: unit q = i*32 + lane is row q / 8, unit q % 8 of the chunk */
      for (int64_t i = 0; i < 16 * 8 / 32; i++) {
        tc_expr *q = bin(P, TC_OP_ADD, lane, ci(P, i * 32, loc), loc);
        tc_expr *srow = bin(P, TC_OP_FLOORDIV, q, ci(P, 8, loc), loc), *u = bin(P, TC_OP_FLOORMOD, q, ci(P, 8, loc), loc);
        tc_expr *at = bin(P, TC_OP_ADD, base, bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, srow, ci(P, CW, loc), loc),
                                                   bin(P, TC_OP_MUL, bin(P, TC_OP_BIT_XOR, u, bin(P, TC_OP_BIT_AND, srow, ci(P, 7, loc), loc), loc),
                                                       ci(P, U, loc), loc), loc), loc);
        /* the tile element there: row of register (mi, h = i / 2, first column of the chunk) in
         * the thread of this warp that holds row srow % 8 of it, at lane group 0 */
        int64_t h = (i * 4) / 8, r = ((mi * 2 + h) * NT + cb * (CW / 8)) * 2;
        tc_expr *owner = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, warp, ci(P, 32, loc), loc),
                             bin(P, TC_OP_MUL, bin(P, TC_OP_BIT_AND, srow, ci(P, 7, loc), loc), ci(P, 4, loc), loc), loc);
        tc_expr *idx[TC_GL_MAXDIM], *valid = NULL;
        tc_gl_index_exprs(P->a, D, owner, r, idx, &valid, loc);
        tc_expr *it[2] = {idx[0], bin(P, TC_OP_ADD, idx[1], bin(P, TC_OP_MUL, u, ci(P, U, loc), loc), loc)};
        tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 2);
        args[0] = tc_ir_address_of(P->a, dst->buf, dst->ndim, tc_gpu_region_at(P, dst, it, loc), loc);
        args[1] = tc_ir_address_of(P->a, stage, 1, one(P, at), loc);
        tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "copy16", 2, args, loc));
      }
      tc_stmt_list_push(P->a, &out, tc_ir_intrinsic_stmt(P->a, "warp_sync", 0, NULL, loc));
    }
  }
  *cond = tc_gpu_aligned_tile(P, dst, (int)U, loc);
  if (P->notes) {
    char what[96];
    tc_gl_describe(D, what, sizeof what);
    tc_sb_printf(P->notes, "T.copy(%s -> %s): the %s accumulator through shared memory, 16-byte stores of whole rows\n", f->name,
                 g->name, what);
  }
  return tc_ir_seq(P->a, out.n, out.items, loc);
}
