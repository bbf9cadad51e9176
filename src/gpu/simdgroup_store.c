/* simdgroup_store.c: a Metal simdgroup accumulator's T.copy to device memory, straight from the
 * simdgroup matrices.
 *
 * An accumulator in the metal.simdgroup scope (src/target/metal/simdgroup_scope.c) is laid out
 * as ACC with `sg` (layout.c): each simdgroup's (M/wm) x (N/wn) sub-tile is 8x8 blocks whose
 * registers are the thread_elements() of a simdgroup_matrix<float, 8, 8>. Its T.copy to a
 * global tile becomes one intrinsic,
 *
 *   simdgroup_store_acc(M, N, warps_m, warps_n, &C_regs[0], &G[tile origin], row_stride)
 *
 * which the target prints as a simdgroup_store of each block, converted in the thread to the
 * tensor's dtype: no threadgroup staging, no per-element index arithmetic. The warp partition is
 * the layout's, that is tc_gpu_acc_partition's, the one the gemm ran on. It is taken when the
 * tile lies inside the tensor (tested once at run time: simdgroup_store has no masking, and
 * needs no alignment beyond the element's); a partial tile at the tensor's edge takes the
 * element-wise copy with bounds checks. Replica simdgroups (a tile too small for every
 * simdgroup) do not store. */
#include <stdio.h>

#include "gpu/gpu_internal.h"
#include "util/strbuf.h"

static tc_expr *ci(tc_gpu_plan *P, int64_t v, tc_loc loc) { return tc_ir_int(P->a, v, tc_index_dtype(), loc); }

/* The dtypes a simdgroup_matrix may be stored as: the operand types it takes. */
static bool storable(const tc_gpu_plan *P, tc_dtype d) {
  return d.lanes == 1 && (d.code == TC_DT_FLOAT32 || d.code == TC_DT_FLOAT16 || (d.code == TC_DT_BFLOAT16 && P->desc->simdgroup_bfloat16));
}

tc_stmt *tc_gpu_acc_store_simdgroup(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                    tc_expr **cond, tc_loc loc) {
  const tc_buffer *f = src->buf;
  tc_buffer *g = dst->buf;
  if (f->scope != TC_SCOPE_METAL_SIMDGROUP || g->scope != TC_SCOPE_GLOBAL || tc_layout_on_global(g) || n != 2 || dst->ndim < 2)
    return NULL;
  const tc_gpu_layout *D = P->frag[f->id];
  tc_buffer *regs = P->regs[f->id];
  if (!D || !regs || D->kind != TC_GL_ACC || !D->sg || D->ndim != 2 || !storable(P, g->dtype)) return NULL;
  for (int d = 0; d < src->ndim; d++) {
    int64_t s0;
    if (!tc_expr_const_int(src->r[d].start, &s0) || s0 || src->r[d].extent != D->shape[d]) return NULL;
  }
  int nd = dst->ndim;
  if (ext[0] != D->M || ext[1] != D->N || dst->r[nd - 2].extent != D->M || dst->r[nd - 1].extent != D->N) return NULL;
  tc_expr **origin = TC_NEW_ARRAY(P->a, tc_expr *, nd);
  for (int d = 0; d < nd; d++) origin[d] = dst->r[d].start;
  tc_expr **zero = TC_NEW_ARRAY(P->a, tc_expr *, 1);
  zero[0] = ci(P, 0, loc);
  int64_t v[4] = {D->M, D->N, D->wm, D->wn};
  tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 7);
  for (int i = 0; i < 4; i++) args[i] = ci(P, v[i], loc);
  args[4] = tc_ir_address_of(P->a, regs, 1, zero, loc);
  args[5] = tc_ir_address_of(P->a, g, nd, origin, loc);
  args[6] = tc_ir_cast(P->a, tc_index_dtype(), tc_ir_clone_expr(P->a, g->shape[nd - 1]), loc); /* row-major: a row's elements */
  *cond = tc_gpu_global_in_bounds(P, dst, loc);
  if (P->notes) {
    if (loc.src) tc_sb_printf(P->notes, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    tc_sb_printf(P->notes, "T.copy(%s -> %s): simdgroup_store of the metal.simdgroup accumulator to device memory, %lld x %lld "
                           "blocks of 8x8 on each of %d x %d simdgroups (element-wise when the tile is partial)\n",
                 f->name, g->name, (long long)(D->M / D->wm / 8), (long long)(D->N / D->wn / 8), D->wm, D->wn);
  }
  return tc_ir_intrinsic_stmt(P->a, "simdgroup_store_acc", 7, args, loc);
}
