/* gemm.c: which matrix instruction a T.gemm runs on, decided once, before layout inference,
 * because the instruction fixes the accumulator's warp partition.
 *
 * The table, in order of preference:
 *   wgmma (sm_90a): f16 x f16 or bf16 x bf16 into float32, B in shared memory, A in shared
 *     memory or in registers, every warp along M (M a multiple of 16 * warps: the warpgroups
 *     take 64-row blocks in turn, each warp 16 rows of each), N a multiple of 8 up to 256, K of
 *     16, at most MAX_ACC_REGS accumulator registers a thread, and shared tiles the swizzle can
 *     lay out (rows of 32, 64 or a multiple of 128 bytes);
 *   wgmma (sm_90a) for fp8: e4m3/e5m2 x e4m3/e5m2 (mixed too) into float32, the same rules with
 *     K a multiple of 32 (m64nNk32), both operands in shared memory and both K-major: the PTX
 *     ISA has no transpose for 8-bit wgmma operands, so A must be stored M x K (no transpose_A)
 *     and B N x K (transpose_B=True), the layout of a linear layer's weights;
 *   mma.sync (sm_80+) with the warp partition of the gemm's policy: everything else.
 * tc_gpu_gemm_choose says why a gemm did not get wgmma, for `tilec source --explain`. */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu_internal.h"

/* accumulator registers a thread may hold on wgmma: beyond this the operands and addresses no
 * longer fit in 255 registers and ptxas spills */
enum { MAX_ACC_REGS = 128 };

static bool shared_tile_ok(const tc_buffer *b, int elem_bytes, char *why, size_t cap, const char *which) {
  int64_t shape[TC_GL_MAXDIM];
  if (b->ndim < 2 || b->ndim > TC_GL_MAXDIM || !tc_buffer_const_shape(b, shape)) {
    snprintf(why, cap, "%s is not a constant 2-D shared tile", which);
    return false;
  }
  if (b->layout && b->layout->kind == TC_LAYOUT_SHARED && !(b->layout->name && !strcmp(b->layout->name, "swizzle"))) {
    snprintf(why, cap, "%s has an annotated layout", which);
    return false;
  }
  int64_t rows = tc_gpu_tile_rows(b), cols = shape[b->ndim - 1];
  if (!tc_gpu_swizzle_applies(rows, cols, elem_bytes)) {
    snprintf(why, cap, "%s's rows are %lld bytes (wgmma's shared layouts need 32, 64 or a multiple of 128)", which,
             (long long)(cols * elem_bytes));
    return false;
  }
  return true;
}

bool tc_gpu_wgmma_fp8(tc_dtype d) { return d.code == TC_DT_FLOAT8_E4M3FN || d.code == TC_DT_FLOAT8_E5M2; }

tc_gpu_gemm_instr tc_gpu_gemm_choose(const tc_gpu_plan *P, const tc_stmt *s, char *why, size_t cap) {
  snprintf(why, cap, "mma.sync");
  if (!P->desc->wgmma) {
    snprintf(why, cap, "the arch has no wgmma (sm_90a only)");
    return TC_GPU_GEMM_MMA;
  }
  const tc_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
  int64_t cs[2];
  if (!C || C->ndim != 2 || !tc_buffer_const_shape(C, cs) || C->dtype.code != TC_DT_FLOAT32) {
    snprintf(why, cap, "wgmma here accumulates into a float32 2-D fragment");
    return TC_GPU_GEMM_MMA;
  }
  bool f16 = A->dtype.code == TC_DT_FLOAT16 && B->dtype.code == TC_DT_FLOAT16;
  bool bf16 = A->dtype.code == TC_DT_BFLOAT16 && B->dtype.code == TC_DT_BFLOAT16;
  bool f8 = tc_gpu_wgmma_fp8(A->dtype) && tc_gpu_wgmma_fp8(B->dtype);
  if (!f16 && !bf16 && !f8) {
    snprintf(why, cap, "wgmma here takes float16, bfloat16 or float8 (e4m3fn/e5m2) operands");
    return TC_GPU_GEMM_MMA;
  }
  /* 8-bit wgmma reads both operands K-major (no transpose flags): checked first, since it is
   * the reason an fp8 kernel written the (K, N) way misses wgmma */
  if (f8 && (s->u.gemm.trans_a || !s->u.gemm.trans_b)) {
    snprintf(why, cap, "fp8 wgmma reads both operands K-major: A as (M, K) and B as (N, K) with transpose_B=True (here %s)",
             s->u.gemm.trans_a ? "A is transposed" : "B is (K, N)");
    return TC_GPU_GEMM_MMA;
  }
  int eb = f8 ? 1 : 2, kstep = 32 / eb; /* one instruction reads 32 bytes of K */
  int warps = P->threads / 32;
  if (P->threads % 128 || cs[0] % (16 * (int64_t)warps)) {
    snprintf(why, cap, "wgmma needs whole warpgroups and M a multiple of 16 rows per warp (%d threads: M a multiple of %d; the tile has %lld)",
             P->threads, 16 * warps, (long long)cs[0]);
    return TC_GPU_GEMM_MMA;
  }
  if (cs[1] % 8 || cs[1] > 256) {
    snprintf(why, cap, "wgmma's N is a multiple of 8 up to 256 (the tile has %lld)", (long long)cs[1]);
    return TC_GPU_GEMM_MMA;
  }
  int64_t mblocks = cs[0] / (16 * warps); /* m64 instructions per warpgroup and K step */
  if (mblocks * cs[1] / 2 > MAX_ACC_REGS) {
    snprintf(why, cap, "a %lld x %lld float32 accumulator over %d warps is %lld registers a thread on wgmma (at most %d)",
             (long long)cs[0], (long long)cs[1], warps, (long long)(mblocks * cs[1] / 2), MAX_ACC_REGS);
    return TC_GPU_GEMM_MMA;
  }
  if (B->scope != TC_SCOPE_SHARED || !shared_tile_ok(B, eb, why, cap, "B")) {
    if (B->scope != TC_SCOPE_SHARED) snprintf(why, cap, "wgmma reads B from shared memory");
    return TC_GPU_GEMM_MMA;
  }
  int64_t as[TC_GL_MAXDIM];
  if (A->ndim < 2 || A->ndim > TC_GL_MAXDIM || !tc_buffer_const_shape(A, as)) {
    snprintf(why, cap, "A is not a constant 2-D tile");
    return TC_GPU_GEMM_MMA;
  }
  int64_t K = s->u.gemm.trans_a ? as[A->ndim - 2] : as[A->ndim - 1];
  if (K % kstep) {
    snprintf(why, cap, "wgmma's K step is %d (the tile's K is %lld)", kstep, (long long)K);
    return TC_GPU_GEMM_MMA;
  }
  if (A->scope == TC_SCOPE_FRAGMENT) {
    if (f8) { /* the register form's 8-bit A fragment is not the accumulator pattern tilec lays out */
      snprintf(why, cap, "fp8 wgmma here takes A from shared memory, not registers");
      return TC_GPU_GEMM_MMA;
    }
    if (s->u.gemm.trans_a) {
      snprintf(why, cap, "A in registers cannot be transposed");
      return TC_GPU_GEMM_MMA;
    }
  } else if (A->scope != TC_SCOPE_SHARED || !shared_tile_ok(A, eb, why, cap, "A")) {
    if (A->scope != TC_SCOPE_SHARED) snprintf(why, cap, "A is neither in shared memory nor a fragment");
    return TC_GPU_GEMM_MMA;
  }
  if (f8) {
    snprintf(why, cap, "wgmma m64n%lldk32 %s x %s, %d warpgroup%s x %lld row block%s, A and B K-major from shared memory",
             (long long)cs[1], A->dtype.code == TC_DT_FLOAT8_E5M2 ? "e5m2" : "e4m3", B->dtype.code == TC_DT_FLOAT8_E5M2 ? "e5m2" : "e4m3",
             warps / 4, warps > 4 ? "s" : "", (long long)mblocks, mblocks > 1 ? "s" : "");
    return TC_GPU_GEMM_WGMMA;
  }
  snprintf(why, cap, "wgmma m64n%lldk16 %s, %d warpgroup%s x %lld row block%s, A from %s", (long long)cs[1], f16 ? "f16" : "bf16",
           warps / 4, warps > 4 ? "s" : "", (long long)mblocks, mblocks > 1 ? "s" : "",
           A->scope == TC_SCOPE_FRAGMENT ? "registers" : "shared memory");
  return TC_GPU_GEMM_WGMMA;
}

bool tc_gpu_acc_partition(const tc_stmt *s, int threads, int warp_size, int *wm, int *wn) {
  const tc_buffer *C = s->u.gemm.c.buf;
  int64_t cs[2];
  if (!C || C->ndim != 2 || !tc_buffer_const_shape(C, cs) || warp_size <= 0 || threads % warp_size) return false;
  return tc_gpu_warp_partition(s->u.gemm.policy, cs[0], cs[1], threads / warp_size, wm, wn);
}

/* Metal 4's matmul2d, as the metal target uses it: one 16 x 32 x K operation per destination
 * fragment (execution_simdgroup), float32 destinations whose element placement the accumulator
 * layout mirrors (layout.c), operands of one float type read from threadgroup memory or, on the
 * direct-global form (direct.c), from device memory; or A from registers (the RS form): an
 * M x K fragment laid out as a matmul2d accumulator over wm x 1 simdgroups, whose 16 x 32
 * fragments give 16 x 16 left-input cooperative tensors of the K steps. */
const char *tc_gpu_matmul2d_reason(int64_t M, int64_t N, int64_t K, int wm, int wn, tc_dtype a, tc_dtype b, tc_dtype c,
                                   bool a_mem, bool b_mem, bool rs_blocked, char *buf, size_t cap) {
  bool ops = a.code == b.code && (a.code == TC_DT_FLOAT16 || a.code == TC_DT_BFLOAT16 || a.code == TC_DT_FLOAT32);
  if (!ops)
    snprintf(buf, cap, "its operands are %s x %s (matmul2d here takes float16, bfloat16 or float32 pairs)",
             tc_dtype_scalar_name((tc_scalar_type)a.code), tc_dtype_scalar_name((tc_scalar_type)b.code));
  else if (c.code != TC_DT_FLOAT32)
    snprintf(buf, cap, "the accumulator is %s (matmul2d here accumulates into float32)", tc_dtype_scalar_name((tc_scalar_type)c.code));
  else if (!b_mem) snprintf(buf, cap, "B is in registers (matmul2d reads B from memory)");
  else if (!a_mem && wn != 1)
    snprintf(buf, cap, "A is in registers over a %d x %d simdgroup partition (matmul2d's left input from registers needs "
                       "one simdgroup column: policy FullRow)", wm, wn);
  else if (!a_mem && K % 32)
    snprintf(buf, cap, "A is in registers with K = %lld, not a multiple of 32 (its 16 x 32 accumulator fragments)", (long long)K);
  else if (M % 16) snprintf(buf, cap, "M = %lld is not a multiple of 16", (long long)M);
  else if (N % 32) snprintf(buf, cap, "N = %lld is not a multiple of 32", (long long)N);
  else if (K % 16) snprintf(buf, cap, "K = %lld is not a multiple of 16", (long long)K);
  else if (wm <= 0 || wn <= 0 || (M / wm) % 16 || (N / wn) % 32 || M % wm || N % wn)
    snprintf(buf, cap, "the %d x %d simdgroup partition gives %lld x %lld sub-tiles, not multiples of 16 x 32", wm, wn,
             (long long)(wm > 0 ? M / wm : 0), (long long)(wn > 0 ? N / wn : 0));
  else if (rs_blocked)
    snprintf(buf, cap, "a T.gemm of this kernel reads A from registers and another cannot run on matmul2d (they share "
                       "the accumulator placement: all take matmul2d, or none)");
  else return NULL;
  return buf;
}
