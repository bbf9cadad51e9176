/* simt_gemm.c: a T.gemm that no matrix instruction can take becomes a loop every thread runs
 * (the first step of tc_gpu_lower, before operands are staged).
 *
 * The block GEMM splits the accumulator into 16 x 8 tiles over the warps and steps K by the
 * target's tc_gpu_desc.gemm_k_step (cuda 16, or 32 with an 8-bit operand; metal 8). A gemm
 * whose shapes do not divide so (a 64 x 1 accumulator: NSA's
 * backward pass with one query head per group; a K of 1; a matrix-vector product) would
 * otherwise be refused. Here it is rewritten as the TileLang loop it means:
 *
 *     for i, j in T.Parallel(M, N):
 *         C[i, j] = 0                                  # clear_accum only
 *         for k in T.serial(K):
 *             C[i, j] += cast(A[i, k]) * cast(B[k, j])  # transposes as the gemm says
 *
 * which layout inference then places like any T.Parallel loop over C: each thread sums the
 * elements of C it holds, reading A and B where they are (shared tiles; a fragment A read at
 * other rows is kept in shared memory by the retry that lowering already makes). Slower than a
 * tensor-core gemm, but these shapes are small; `--explain` says which gemms took this path. */
#include <stdio.h>

#include "gpu/gpu_internal.h"
#include "ir/walk.h"
#include "util/strbuf.h"

/* Whether the target's block GEMM can take the gemm: the accumulator split into 16 x 8 tiles
 * over the policy's warps, and K a multiple of its step (tc_gpu_desc.gemm_k_step). NULL when it
 * can, else why not (in buf). */
static const char *no_tensor_cores(const tc_gpu_plan *P, const tc_stmt *s, int64_t M, int64_t N, int64_t K, char *buf,
                                   size_t cap) {
  int wm, wn;
  tc_gpu_layout L;
  char why[160];
  bool bytes1 = tc_dtype_bits(s->u.gemm.a.buf->dtype) == 8 || tc_dtype_bits(s->u.gemm.b.buf->dtype) == 8;
  int64_t kstep = bytes1 ? P->desc->gemm_k_step_8bit : P->desc->gemm_k_step;
  if (tc_gpu_gemm_choose(P, s, why, sizeof why) == TC_GPU_GEMM_WGMMA) return NULL; /* every warp along M: its own checks */
  if (!tc_gpu_acc_partition(s, P->threads, P->desc->warp_size, &wm, &wn))
    snprintf(buf, cap, "a %lld x %lld accumulator has no split over %d threads in 16 x 8 tiles", (long long)M, (long long)N,
             P->threads);
  else if (!tc_gl_make_acc(&L, M, N, wm, wn, P->threads, why, sizeof why))
    snprintf(buf, cap, "%s", why);
  else if (kstep > 0 && K % kstep)
    snprintf(buf, cap, "K = %lld is not a multiple of the tensor cores' K step (%lld)", (long long)K, (long long)kstep);
  else return NULL;
  return buf;
}

/* Index of a gemm operand region at (row, col) of its last two dimensions, the leading ones at
 * their starts. */
static tc_expr **region_index(tc_gpu_plan *P, const tc_region *r, tc_expr *row, tc_expr *col, tc_loc loc) {
  tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, r->ndim);
  for (int d = 0; d < r->ndim; d++) idx[d] = tc_ir_clone_expr(P->a, r->r[d].start);
  tc_expr *at[2] = {row, col};
  for (int i = 0; i < 2; i++) { /* a start of 0 leaves the loop's index as it is, which layout inference matches */
    int64_t v;
    tc_expr **e = &idx[r->ndim - 2 + i];
    *e = tc_expr_const_int(*e, &v) && v == 0 ? at[i] : tc_ir_binary(P->a, TC_OP_ADD, *e, at[i], loc);
  }
  return idx;
}

static tc_expr *var(tc_gpu_plan *P, tc_var *v, tc_loc loc) { return tc_ir_var_ref(P->a, v, loc); }

/* A region of 2 or more dimensions whose leading ones are single elements: the last two are the
 * matrix. */
static bool matrix_region(const tc_region *r) {
  if (!r->buf || r->ndim < 2) return false;
  for (int d = 0; d < r->ndim - 2; d++)
    if (r->r[d].extent != 1) return false;
  return true;
}

static bool simt_cb(void *ctx, tc_stmt *s) {
  tc_gpu_plan *P = ctx;
  if (s->kind != TC_ST_GEMM) return true;
  const tc_region *ra = &s->u.gemm.a, *rb = &s->u.gemm.b, *rc = &s->u.gemm.c;
  if (!rc->buf || rc->buf->scope != TC_SCOPE_FRAGMENT || !matrix_region(ra) || !matrix_region(rb) || !matrix_region(rc))
    return false; /* lower_gemm says what it needs */
  bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
  int64_t M = rc->r[rc->ndim - 2].extent, N = rc->r[rc->ndim - 1].extent;
  int64_t K = ta ? ra->r[ra->ndim - 2].extent : ra->r[ra->ndim - 1].extent;
  int64_t Kb = tb ? rb->r[rb->ndim - 1].extent : rb->r[rb->ndim - 2].extent;
  if (K != Kb || (ta ? ra->r[ra->ndim - 1].extent : ra->r[ra->ndim - 2].extent) != M ||
      (tb ? rb->r[rb->ndim - 2].extent : rb->r[rb->ndim - 1].extent) != N)
    return false; /* shapes that do not match: lower_gemm reports them */
  char buf[200];
  const char *why = no_tensor_cores(P, s, M, N, K, buf, sizeof buf);
  if (!why) return false;
  tc_loc loc = s->loc;
  tc_kernel_ir *k = P->k;
  tc_dtype acc = rc->buf->dtype, ix = tc_index_dtype();
  tc_var *vi = tc_ir_new_var(P->a, k, "gemm_i", ix, TC_VAR_LOOP, loc), *vj = tc_ir_new_var(P->a, k, "gemm_j", ix, TC_VAR_LOOP, loc);
  tc_var *vk = tc_ir_new_var(P->a, k, "gemm_k", ix, TC_VAR_LOOP, loc);
  tc_expr *a = tc_ir_load(P->a, ra->buf, ra->ndim,
                          ta ? region_index(P, ra, var(P, vk, loc), var(P, vi, loc), loc) : region_index(P, ra, var(P, vi, loc), var(P, vk, loc), loc),
                          loc);
  tc_expr *b = tc_ir_load(P->a, rb->buf, rb->ndim,
                          tb ? region_index(P, rb, var(P, vj, loc), var(P, vk, loc), loc) : region_index(P, rb, var(P, vk, loc), var(P, vj, loc), loc),
                          loc);
  tc_expr *c = tc_ir_load(P->a, rc->buf, rc->ndim, region_index(P, rc, var(P, vi, loc), var(P, vj, loc), loc), loc);
  tc_expr *prod = tc_ir_binary(P->a, TC_OP_MUL, tc_ir_cast(P->a, acc, a, loc), tc_ir_cast(P->a, acc, b, loc), loc);
  tc_stmt *add = tc_ir_stmt(P->a, TC_ST_STORE, loc);
  add->u.store.buf = rc->buf, add->u.store.nidx = rc->ndim;
  add->u.store.idx = region_index(P, rc, var(P, vi, loc), var(P, vj, loc), loc);
  add->u.store.value = tc_ir_binary(P->a, TC_OP_ADD, c, prod, loc);
  tc_stmt *kl = tc_ir_stmt(P->a, TC_ST_FOR, loc);
  kl->u.loop.var = vk, kl->u.loop.kind = TC_LOOP_SERIAL, kl->u.loop.min = tc_ir_int(P->a, 0, ix, loc);
  kl->u.loop.extent = tc_ir_int(P->a, K, ix, loc), kl->u.loop.body = add;
  tc_stmt *body = kl;
  if (s->u.gemm.clear_accum) {
    tc_stmt *zero = tc_ir_stmt(P->a, TC_ST_STORE, loc);
    zero->u.store.buf = rc->buf, zero->u.store.nidx = rc->ndim;
    zero->u.store.idx = region_index(P, rc, var(P, vi, loc), var(P, vj, loc), loc);
    zero->u.store.value = tc_ir_cast(P->a, acc, tc_ir_int(P->a, 0, ix, loc), loc);
    tc_stmt *two[2] = {zero, kl};
    body = tc_ir_seq(P->a, 2, two, loc);
  }
  for (int d = 1; d >= 0; d--) {
    tc_stmt *l = tc_ir_stmt(P->a, TC_ST_FOR, loc);
    l->u.loop.var = d ? vj : vi, l->u.loop.kind = TC_LOOP_PARALLEL, l->u.loop.min = tc_ir_int(P->a, 0, ix, loc);
    l->u.loop.extent = tc_ir_int(P->a, d ? N : M, ix, loc), l->u.loop.body = body;
    body = l;
  }
  if (P->notes) {
    if (loc.src) tc_sb_printf(P->notes, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    tc_sb_printf(P->notes, "T.gemm %lld x %lld x %lld: a loop every thread runs over the accumulator elements it holds, "
                 "not the tensor cores (%s)\n", (long long)M, (long long)N, (long long)K, why);
  }
  *s = *body;
  return false;
}

bool tc_gpu_simt_gemms(tc_gpu_plan *P) {
  tc_visit_stmts(P->k->body, simt_cb, P);
  return true;
}
