/* tcg_wgmma.cuh: tilec's CUDA device prelude, part 3: block GEMM on sm_90a's warpgroup MMA
 * (wgmma.mma_async), operands described by shared-memory matrix descriptors.
 *
 * The lowering (src/gpu/gemm.c) picks this path for f16/bf16 operands (fp8 e4m3/e5m2 too, on
 * m64nNk32 with both operands K-major) into a float32 accumulator when the warps lie along M and M is a multiple of 16 * WARPS: the tile's rows are
 * MB = M / (16 * WARPS) bands of 16 * WARPS rows, and in band b warpgroup g (threads 128g ..
 * 128g + 127) runs m64nNk16 instructions on rows b * 16 * WARPS + 64g .. + 63. A thread's
 * accumulator registers are the mma.sync path's ACC layout (docs/cuda-prelude.md) with the
 * warp's 16-row tiles interleaved (TCG_ACC's mi is the band: layout.c's `interleave`); band b's
 * N / 2 registers start at acc + b * N / 2.
 *
 * Shared tiles are the lowering's swizzled tiles (tcg__tile_offset): rows of 32, 64 or 128 bytes
 * are the hardware's 32/64/128-byte swizzle modes with 8-row groups R * 8 bytes apart; wider rows
 * are 8-row x 128-byte atoms side by side, 1024 bytes apart along the row. Tiles start on a
 * 1024-byte boundary (the code generator aligns shared buffers).
 *
 * The instruction itself (one asm statement per N, dtype and transposition, listing N / 2
 * accumulator registers) is emitted by the code generator as a specialization of
 * tcg__wgmma_ss_op / tcg__wgmma_rs_op, for the shapes the kernel uses. */
#ifndef TCG_CUDA_WGMMA
#define TCG_CUDA_WGMMA 1

/* TB: B's type where it differs from A's (fp8: e4m3 x e5m2) */
template <int N, class T, int TNSP_A, int TNSP_B, class TB = T> struct tcg__wgmma_ss_op; /* run(float *d, uint64_t da, uint64_t db) */
template <int N, class T, int TNSP_B> struct tcg__wgmma_rs_op;             /* run(float *d, const uint32_t *a, uint64_t db) */

/* descriptor: start address, leading and stride byte offsets (16-byte units), swizzle mode */
TCG_DEV uint64_t tcg__wg_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t mode) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
         ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | ((uint64_t)mode << 62);
}
/* swizzle mode of a tile whose rows are R bytes: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte */
template <int R> struct tcg__wg_mode {
  enum { value = R % 128 == 0 ? 1 : R == 64 ? 2 : R == 32 ? 3 : 0, W = R < 128 ? R : 128 };
  static_assert(value != 0, "tcg_wgmma: shared tile rows must be 32, 64 or a multiple of 128 bytes");
};
/* K-major operand (stored rows x K, K contiguous): rows row0 .. row0 + 63 (A) or all (B), the 32
 * bytes of K from element k0 (k0 .. k0 + 15 of 16-bit, k0 .. k0 + 31 of fp8) */
template <int COLS, int BYTES> TCG_DEV uint64_t tcg__wg_desc_k(uint32_t base, int row0, int k0) {
  enum { R = COLS * BYTES };
  const uint32_t kb = (uint32_t)(k0 * BYTES);
  const uint32_t addr = base + (uint32_t)(row0 * R) + (R > 128 ? (kb / 128) * 1024 + kb % 128 : kb);
  return tcg__wg_desc(addr, 16, 8 * R, tcg__wg_mode<R>::value);
}
/* MN-major operand (stored K x COLS, M or N contiguous): k rows k0 .. k0 + 15, from element mn0 */
template <int COLS, int BYTES> TCG_DEV uint64_t tcg__wg_desc_mn(uint32_t base, int k0, int mn0) {
  enum { R = COLS * BYTES };
  const uint32_t addr = base + (uint32_t)(k0 * R) + (uint32_t)(mn0 * BYTES / 128) * 1024;
  return tcg__wg_desc(addr, 1024, 8 * R, tcg__wg_mode<R>::value);
}

#ifndef TCG_EMU
TCG_DEV void tcg__wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
TCG_DEV void tcg__wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> TCG_DEV void tcg_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
/* shared memory written by ordinary stores and cp.async (the generic proxy) is read by wgmma
 * through the async proxy */
TCG_DEV void tcg__fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
/* keeps the compiler from moving accesses to the accumulator across the asynchronous MMA */
template <int NREG> TCG_DEV void tcg__wg_pin(float *acc) {
#pragma unroll
  for (int i = 0; i < NREG; i++) asm volatile("" : "+f"(acc[i])::"memory");
}

/* Turns of the consumer warpgroups at the tensor cores (src/gpu/pingpong.c): warpgroup w waits
 * at named barrier 2 + w, which completes when the previous warpgroup, cyclically, arrives
 * there (bar.arrive does not wait); 128 threads sync and 128 arrive. The last of the G
 * warpgroups passes once at the start, so warpgroup 0 has the first turn. */
TCG_DEV void tcg_wg_turn_wait() { asm volatile("bar.sync %0, 256;" ::"r"(2 + (int)threadIdx.x / 128) : "memory"); }
template <int G> TCG_DEV void tcg_wg_turn_pass() {
  asm volatile("bar.arrive %0, 256;" ::"r"(2 + ((int)threadIdx.x / 128 + 1) % G) : "memory");
}
template <int G> TCG_DEV void tcg_wg_turn_init() {
  if ((int)threadIdx.x / 128 == G - 1) asm volatile("bar.arrive 2, 256;" ::: "memory");
}
#else /* the emulator: wgmma runs when its group is waited for (emu/tcg_emu_wgmma.h) */
#include "tcg_emu_wgmma.h"
#endif

/* TA, TB: the operand types, float16 or bfloat16 (TB = TA), or float8 e4m3/e5m2 in any mix. One
 * instruction reads 32 bytes of K: k16 for 16-bit types, k32 for fp8, whose operands must both
 * be K-major (TRANS_A 0, TRANS_B 1: wgmma has no transpose for 8-bit types). The descriptors are
 * the same in bytes either way.
 * WAIT: how many of this warpgroup's gemms may still run when it returns (0: acc is final; 1: the
 * asynchronous mainloop, closed by tcg_wgmma_wait<0>(); -1: returns once issued, a later gemm's
 * wait or tcg_wgmma_wait awaits it, overlap.c). TURN: the warpgroups' turn passes once
 * the gemm is issued (pingpong.c). FENCE: some thread wrote a shared operand with ordinary
 * stores, which the wgmma (the async proxy) sees only after fence.proxy.async; tiles that only
 * TMA fills (the async proxy too, ordered by their mbarrier) need none. */
template <int M, int N, int K, int WARPS, int TRANS_A, int TRANS_B, int ACOLS, int BCOLS, class TA, int WAIT, int TURN = 0,
          int FENCE = 1, class TB = TA>
TCG_DEV void tcg_wgmma_ss(const void *A, const void *B, float *acc) {
  enum { BY = TA::BYTES, KS = 32 / BY, MB = M / (16 * WARPS) };
  static_assert(WARPS % 4 == 0 && M % (16 * WARPS) == 0, "tcg_wgmma: the warps along M, 16 rows each per band");
  static_assert(N % 8 == 0 && N <= 256 && K % KS == 0, "tcg_wgmma: N a multiple of 8 up to 256, K of 16 (fp8: 32)");
  static_assert((BY == 2 && TB::BYTES == 2) || (BY == 1 && TB::BYTES == 1 && !TRANS_A && TRANS_B),
                "tcg_wgmma: 8-bit operands are K-major only: A as M x K, B as N x K");
  const int wg = (int)(threadIdx.x >> 7) % (WARPS / 4);
  const uint32_t sa = tcg_smem_addr(A), sb = tcg_smem_addr(B);
  if (FENCE) tcg__fence_proxy_async(); /* shared tiles written by threads, not only by TMA */
  tcg__wg_pin<MB * N / 2>(acc);
  tcg__wg_fence();
#pragma unroll
  for (int ks = 0; ks < K / KS; ks++) {
    const uint64_t db = TRANS_B ? tcg__wg_desc_k<BCOLS, BY>(sb, 0, ks * KS) : tcg__wg_desc_mn<BCOLS, BY>(sb, ks * KS, 0);
#pragma unroll
    for (int b = 0; b < MB; b++) {
      const int row0 = b * 16 * WARPS + 64 * wg;
      const uint64_t da = TRANS_A ? tcg__wg_desc_mn<ACOLS, BY>(sa, ks * KS, row0) : tcg__wg_desc_k<ACOLS, BY>(sa, row0, ks * KS);
      tcg__wgmma_ss_op<N, TA, TRANS_A, !TRANS_B, TB>::run(acc + b * (N / 2), da, db);
    }
  }
  tcg__wg_commit();
  if (TURN) tcg_wg_turn_pass<TURN ? TURN : 1>(); /* issued: the next warpgroup may start its gemm */
  if (WAIT >= 0) tcg_wgmma_wait<WAIT < 0 ? 0 : WAIT>();
  tcg__wg_pin<MB * N / 2>(acc);
}

/* A in registers: the thread's registers in the ACC layout of the M x K tile (the same warps) */
template <int M, int N, int K, int WARPS, int TRANS_B, int BCOLS, class TA, int WAIT, int TURN = 0, int FENCE = 1>
TCG_DEV void tcg_wgmma_rs(const uint16_t *Ar, const void *B, float *acc) {
  static_assert(WARPS % 4 == 0 && M % (16 * WARPS) == 0, "tcg_wgmma: the warps along M, 16 rows each per band");
  static_assert(N % 8 == 0 && N <= 256 && K % 16 == 0, "tcg_wgmma: N a multiple of 8 up to 256, K of 16");
  enum { KT = K / 8, MB = M / (16 * WARPS) };
  const uint32_t sb = tcg_smem_addr(B);
  uint32_t af[MB][K / 16][4];
#pragma unroll
  for (int b = 0; b < MB; b++)
#pragma unroll
    for (int ks = 0; ks < K / 16; ks++)
#pragma unroll
      for (int j = 0; j < 4; j++) { /* j: row half j & 1, k half j >> 1 (the mma.sync A fragment) */
        const int x = TCG_ACC(b, j & 1, ks * 2 + (j >> 1), 0, KT);
        af[b][ks][j] = (uint32_t)Ar[x] | ((uint32_t)Ar[x + 1] << 16);
      }
  if (FENCE) tcg__fence_proxy_async(); /* shared tiles written by threads, not only by TMA */
  tcg__wg_pin<MB * N / 2>(acc);
  tcg__wg_fence();
#pragma unroll
  for (int ks = 0; ks < K / 16; ks++) {
    const uint64_t db = TRANS_B ? tcg__wg_desc_k<BCOLS, 2>(sb, 0, ks * 16) : tcg__wg_desc_mn<BCOLS, 2>(sb, ks * 16, 0);
#pragma unroll
    for (int b = 0; b < MB; b++) tcg__wgmma_rs_op<N, TA, !TRANS_B>::run(acc + b * (N / 2), af[b][ks], db);
  }
  tcg__wg_commit();
  if (TURN) tcg_wg_turn_pass<TURN ? TURN : 1>(); /* issued: the next warpgroup may start its gemm */
  if (WAIT >= 0) tcg_wgmma_wait<WAIT < 0 ? 0 : WAIT>();
  tcg__wg_pin<MB * N / 2>(acc);
}

#endif
