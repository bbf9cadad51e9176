/* tcg_gemm.cuh: tilec's CUDA device prelude, part 2: block GEMM on tiles in shared memory
 * (tcg_gemm_ss) or with A in registers (tcg_gemm_rs), into an accumulator held in registers.
 * Layouts (fixed; the gpu lowering produces the same): docs/cuda-prelude.md.
 *
 * The path is chosen at compile time from the dtypes and the arch:
 *   f16 x f16 or bf16 x bf16 -> f32: mma.sync m16n8k16, fragments by ldmatrix(.trans)
 *   s8/u8 x s8/u8 -> s32:            mma.sync m16n8k32 (ldmatrix where the operand is
 *                                    K-contiguous, byte gathers otherwise)
 *   e4m3/e5m2 x e4m3/e5m2 -> f32:    mma.sync m16n8k32 on sm_89+
 *   anything else:                   FMA per thread, in the cpu reference's precision */
#ifndef TCG_CUDA_GEMM
#define TCG_CUDA_GEMM 1

/* accumulator register of tile (mi, ni), half h, column c */
#define TCG_ACC(mi, h, ni, c, NT) ((((mi) * 2 + (h)) * (NT) + (ni)) * 2 + (c))

enum { TCG_GEMM_SIMT = 0, TCG_GEMM_MMA_16 = 1, TCG_GEMM_MMA_I8 = 2, TCG_GEMM_MMA_F8 = 3 };
template <class TA, class TB, class TC> struct tcg__gemm_path {
  enum {
    f16 = tcg_same<TA, tcg_f16>::value && tcg_same<TB, tcg_f16>::value,
    bf16 = tcg_same<TA, tcg_bf16>::value && tcg_same<TB, tcg_bf16>::value,
    i8a = tcg_same<TA, tcg_i8>::value || tcg_same<TA, tcg_u8>::value,
    i8b = tcg_same<TB, tcg_i8>::value || tcg_same<TB, tcg_u8>::value,
    f8a = tcg_same<TA, tcg_e4m3>::value || tcg_same<TA, tcg_e5m2>::value,
    f8b = tcg_same<TB, tcg_e4m3>::value || tcg_same<TB, tcg_e5m2>::value,
    c32f = tcg_same<TC, tcg_f32>::value,
    c32i = tcg_same<TC, tcg_i32>::value,
    value = (f16 || bf16) && c32f ? TCG_GEMM_MMA_16
          : i8a && i8b && c32i    ? TCG_GEMM_MMA_I8
          : f8a && f8b && c32f    ? TCG_GEMM_MMA_F8
                                  : TCG_GEMM_SIMT
  };
};

/* ---- instructions ---- */
#ifndef TCG_EMU
TCG_DEV void tcg__ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
TCG_DEV void tcg__ldsm_x4_t(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
TCG_DEV void tcg__ldsm_x2(uint32_t addr, uint32_t &r0, uint32_t &r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
}
TCG_DEV void tcg__ldsm_x2_t(uint32_t addr, uint32_t &r0, uint32_t &r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
}

#endif
template <class TA, class TB> struct tcg__mma;
#ifndef TCG_EMU
#define TCG_MMA_F32(ta, tb, shape, ptx)                                                           \
  template <> struct tcg__mma<ta, tb> {                                                          \
    TCG_SDEV void run(float *d, const uint32_t *a, const uint32_t *b) {                         \
      asm volatile("mma.sync.aligned." shape ".row.col.f32." ptx ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, " \
                   "{%0,%1,%2,%3};"                                                              \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));          \
    }                                                                                            \
  };
#define TCG_MMA_S32(ta, tb, ptx)                                                                  \
  template <> struct tcg__mma<ta, tb> {                                                          \
    TCG_SDEV void run(int32_t *d, const uint32_t *a, const uint32_t *b) {                       \
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." ptx ".s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, " \
                   "{%0,%1,%2,%3};"                                                              \
                   : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));          \
    }                                                                                            \
  };
TCG_MMA_F32(tcg_f16, tcg_f16, "m16n8k16", "f16.f16")
TCG_MMA_F32(tcg_bf16, tcg_bf16, "m16n8k16", "bf16.bf16")
TCG_MMA_S32(tcg_i8, tcg_i8, "s8.s8")
TCG_MMA_S32(tcg_i8, tcg_u8, "s8.u8")
TCG_MMA_S32(tcg_u8, tcg_i8, "u8.s8")
TCG_MMA_S32(tcg_u8, tcg_u8, "u8.u8")
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
/* sm_90 has no fp8 mma.sync in hardware (ptxas expands it and spills at 128x128 tiles): convert
 * the fragments to float16 (exact for e4m3 and e5m2) and run two m16n8k16. Each register's four
 * bytes k = 4q..4q+3 become k slots 2q, 2q+1 (low pair) and 8+2q, 9+2q (high pair) of a k16
 * step, for A and B alike, so every product meets its partner. */
template <class T> TCG_DEV void tcg__fp8x4_to_f16(uint32_t v, uint32_t &lo, uint32_t &hi) {
  if (tcg_same<T, tcg_e4m3>::value)
    asm("{ .reg .b16 l, h; mov.b32 {l, h}, %2; cvt.rn.f16x2.e4m3x2 %0, l; cvt.rn.f16x2.e4m3x2 %1, h; }"
        : "=r"(lo), "=r"(hi) : "r"(v));
  else
    asm("{ .reg .b16 l, h; mov.b32 {l, h}, %2; cvt.rn.f16x2.e5m2x2 %0, l; cvt.rn.f16x2.e5m2x2 %1, h; }"
        : "=r"(lo), "=r"(hi) : "r"(v));
}
template <class TA, class TB> struct tcg__mma_f8_via_f16 {
  TCG_SDEV void run(float *d, const uint32_t *a, const uint32_t *b) {
#pragma unroll
    for (int s = 0; s < 2; s++) { /* k 0..15 from registers 0, 1; k 16..31 from 2, 3 */
      uint32_t fa[4], fb[2];
      tcg__fp8x4_to_f16<TA>(a[2 * s], fa[0], fa[2]);
      tcg__fp8x4_to_f16<TA>(a[2 * s + 1], fa[1], fa[3]);
      tcg__fp8x4_to_f16<TB>(b[s], fb[0], fb[1]);
      tcg__mma<tcg_f16, tcg_f16>::run(d, fa, fb);
    }
  }
};
template <> struct tcg__mma<tcg_e4m3, tcg_e4m3> : tcg__mma_f8_via_f16<tcg_e4m3, tcg_e4m3> {};
template <> struct tcg__mma<tcg_e4m3, tcg_e5m2> : tcg__mma_f8_via_f16<tcg_e4m3, tcg_e5m2> {};
template <> struct tcg__mma<tcg_e5m2, tcg_e4m3> : tcg__mma_f8_via_f16<tcg_e5m2, tcg_e4m3> {};
template <> struct tcg__mma<tcg_e5m2, tcg_e5m2> : tcg__mma_f8_via_f16<tcg_e5m2, tcg_e5m2> {};
#define TCG_HAVE_MMA_F8 1
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
TCG_MMA_F32(tcg_e4m3, tcg_e4m3, "m16n8k32", "e4m3.e4m3")
TCG_MMA_F32(tcg_e4m3, tcg_e5m2, "m16n8k32", "e4m3.e5m2")
TCG_MMA_F32(tcg_e5m2, tcg_e4m3, "m16n8k32", "e5m2.e4m3")
TCG_MMA_F32(tcg_e5m2, tcg_e5m2, "m16n8k32", "e5m2.e5m2")
#define TCG_HAVE_MMA_F8 1
#else
#define TCG_HAVE_MMA_F8 0
#endif
#undef TCG_MMA_F32
#undef TCG_MMA_S32
#else /* the emulator: ldmatrix and mma.sync meet their warp (emu/tcg_emu_mma.h) */
#include "tcg_emu_mma.h"
#endif

/* One mma on accumulator tile (mi, ni): its C fragment is registers r(mi,0,ni,0..1), r(mi,1,ni,0..1). */
template <class TA, class TB, int NT, class CS>
TCG_DEV void tcg__mma_tile(CS *acc, int mi, int ni, const uint32_t *a, const uint32_t *b) {
  CS d[4] = {acc[TCG_ACC(mi, 0, ni, 0, NT)], acc[TCG_ACC(mi, 0, ni, 1, NT)], acc[TCG_ACC(mi, 1, ni, 0, NT)],
             acc[TCG_ACC(mi, 1, ni, 1, NT)]};
  tcg__mma<TA, TB>::run(d, a, b);
  acc[TCG_ACC(mi, 0, ni, 0, NT)] = d[0], acc[TCG_ACC(mi, 0, ni, 1, NT)] = d[1];
  acc[TCG_ACC(mi, 1, ni, 0, NT)] = d[2], acc[TCG_ACC(mi, 1, ni, 1, NT)] = d[3];
}

/* Shape checks and the warp's place, shared by every path. */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int KSTEP> struct tcg__tiling {
  static_assert(M % (16 * WARPS_M) == 0, "tcg_gemm: M must be a multiple of 16 * WARPS_M");
  static_assert(N % (8 * WARPS_N) == 0, "tcg_gemm: N must be a multiple of 8 * WARPS_N");
  static_assert(K % KSTEP == 0, "tcg_gemm: K must be a multiple of 16 (32 for 8-bit operands)");
  enum { TM = M / WARPS_M, TN = N / WARPS_N, MT = TM / 16, NT = TN / 8, KS = K / KSTEP };
};

/* Element (row, col) of op(X) in a stored tile: op = identity when !TRANS (stored R x C),
 * transpose when TRANS (stored C x R); ROWS/COLS of op(X). */
template <int ROWS, int COLS, int TRANS, int SWZ, class T> TCG_DEV T tcg__op_elem(const T *x, int row, int col) {
  return TRANS ? x[tcg__tile_offset<ROWS, sizeof(T), SWZ>(col & ~7, col & 7, row)]
               : x[tcg__tile_offset<COLS, sizeof(T), SWZ>(row & ~7, row & 7, col)];
}

/* Four bytes of op(X) at (row, k0 .. k0+3) (A side) packed little-endian into one register. */
template <int ROWS, int COLS, int TRANS, int SWZ> TCG_DEV uint32_t tcg__gather4(const uint8_t *x, int row, const int *k) {
  uint32_t r = 0;
#pragma unroll
  for (int j = 0; j < 4; j++) r |= (uint32_t)tcg__op_elem<ROWS, COLS, TRANS, SWZ>(x, row, k[j]) << (8 * j);
  return r;
}

/* the type __shfl_sync moves an element as */
TCG_DEV int tcg__shfl_type(int8_t v) { return v; }
TCG_DEV int tcg__shfl_type(uint8_t v) { return v; }
TCG_DEV int tcg__shfl_type(int16_t v) { return v; }
TCG_DEV int tcg__shfl_type(uint16_t v) { return v; }
TCG_DEV int tcg__shfl_type(int32_t v) { return v; }
TCG_DEV unsigned tcg__shfl_type(uint32_t v) { return v; }
TCG_DEV long long tcg__shfl_type(int64_t v) { return v; }
TCG_DEV unsigned long long tcg__shfl_type(uint64_t v) { return v; }
TCG_DEV float tcg__shfl_type(float v) { return v; }
TCG_DEV double tcg__shfl_type(double v) { return v; }

/* ---- SIMT path: each thread computes its own accumulator elements, in the cpu's precision:
 * operands converted to C's arithmetic type and rounded to C's dtype, the product rounded,
 * the sum rounded (a float32 accumulator: float32 multiply-add). ---- */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
struct tcg__gemm_simt {
  typedef tcg__tiling<M, N, K, WARPS_M, WARPS_N, (TA::BYTES == 1 || TB::BYTES == 1) ? 32 : 16> G;
  typedef typename TC::C CT;
  TCG_SDEV CT op(CT acc, CT a, CT b) { return TC::round(acc + TC::round(a * b)); }
  /* c += a (the thread's 2*MT rows) x b (its 2*NT columns) for one k */
  TCG_SDEV void outer(CT *c, const CT *a, const CT *b) {
#pragma unroll
    for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int ni = 0; ni < G::NT; ni++)
#pragma unroll
          for (int cc = 0; cc < 2; cc++) {
            CT &d = c[TCG_ACC(mi, h, ni, cc, G::NT)];
            d = op(d, a[mi * 2 + h], b[ni * 2 + cc]);
          }
  }
  TCG_SDEV void ss(const void *Av, const void *Bv, typename TC::T *acc) {
    const typename TA::T *A = (const typename TA::T *)Av;
    const typename TB::T *B = (const typename TB::T *)Bv;
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) % (WARPS_M * WARPS_N), wm = w / WARPS_N, wn = w % WARPS_N;
    const int g = lane >> 2, q = lane & 3;
    CT c[G::MT * G::NT * 4];
#pragma unroll
    for (int r = 0; r < G::MT * G::NT * 4; r++) c[r] = TC::to_c(acc[r]);
#pragma unroll 2
    for (int k = 0; k < K; k++) {
      CT a[G::MT * 2], b[G::NT * 2];
#pragma unroll
      for (int i = 0; i < G::MT * 2; i++)
        a[i] = TC::round((CT)TA::to_c(tcg__op_elem<M, K, TRANS_A, SWZ_A>(A, wm * G::TM + i * 8 + g, k)));
#pragma unroll
      for (int j = 0; j < G::NT * 2; j++)
        b[j] = TC::round((CT)TB::to_c(tcg__op_elem<N, K, !TRANS_B, SWZ_B>(B, wn * G::TN + (j >> 1) * 8 + q * 2 + (j & 1), k)));
      outer(c, a, b);
    }
#pragma unroll
    for (int r = 0; r < G::MT * G::NT * 4; r++) acc[r] = TC::from_c(c[r]);
  }
  /* A in registers (accumulator layout, shape M x K, WARPS_N == 1): the four lanes of a quad hold
   * a whole 8-column group of a row, so each element of A comes from a quad shuffle. */
  TCG_SDEV void rs(const typename TA::T *Ar, const void *Bv, typename TC::T *acc) {
    static_assert(WARPS_N == 1, "tcg_gemm_rs: WARPS_N must be 1");
    const typename TB::T *B = (const typename TB::T *)Bv;
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) % (WARPS_M * WARPS_N), wn = 0;
    const int q = lane & 3;
    (void)w;
    enum { KT = K / 8 };
    CT c[G::MT * G::NT * 4];
#pragma unroll
    for (int r = 0; r < G::MT * G::NT * 4; r++) c[r] = TC::to_c(acc[r]);
#pragma unroll
    for (int k = 0; k < K; k++) {
      CT a[G::MT * 2], b[G::NT * 2];
#pragma unroll
      for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const typename TA::T v = (typename TA::T)__shfl_sync(
              0xffffffffu, tcg__shfl_type(Ar[TCG_ACC(mi, h, k / 8, k & 1, KT)]), (lane & ~3) | ((k & 7) >> 1));
          a[mi * 2 + h] = TC::round((CT)TA::to_c(v));
        }
#pragma unroll
      for (int j = 0; j < G::NT * 2; j++)
        b[j] = TC::round((CT)TB::to_c(tcg__op_elem<N, K, !TRANS_B, SWZ_B>(B, wn * G::TN + (j >> 1) * 8 + q * 2 + (j & 1), k)));
      outer(c, a, b);
    }
#pragma unroll
    for (int r = 0; r < G::MT * G::NT * 4; r++) acc[r] = TC::from_c(c[r]);
  }
};

/* ---- 16-bit tensor-core path: m16n8k16, ldmatrix.x4 (.trans for an M- or N-contiguous
 * operand). Addresses: lane l feeds row (l & 7) of 8x8 matrix (l >> 3). ---- */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
struct tcg__gemm_mma16 {
  typedef tcg__tiling<M, N, K, WARPS_M, WARPS_N, 16> G;
  /* B fragments of k-step ks for all NT tiles */
  TCG_SDEV void load_b(uint32_t sB, int wn, int lane, int ks, uint32_t (*bf)[2]) {
    const int i = lane >> 3, r = lane & 7;
#pragma unroll
    for (int ni = 0; ni < G::NT; ni += 2) {
      const int n8 = wn * G::TN + ni * 8;
      if (ni + 1 < G::NT) {
        if (TRANS_B) { /* stored N x K: rows n, K-contiguous */
          uint32_t off = tcg__tile_offset<K, 2, SWZ_B>(n8 + (i >> 1) * 8, r, ks * 16 + (i & 1) * 8);
          tcg__ldsm_x4(sB + off * 2, bf[ni][0], bf[ni][1], bf[ni + 1][0], bf[ni + 1][1]);
        } else { /* stored K x N: rows k */
          uint32_t off = tcg__tile_offset<N, 2, SWZ_B>(ks * 16 + (i & 1) * 8, r, n8 + (i >> 1) * 8);
          tcg__ldsm_x4_t(sB + off * 2, bf[ni][0], bf[ni][1], bf[ni + 1][0], bf[ni + 1][1]);
        }
      } else {
        const int i2 = i & 1;
        if (TRANS_B) {
          uint32_t off = tcg__tile_offset<K, 2, SWZ_B>(n8, r, ks * 16 + i2 * 8);
          tcg__ldsm_x2(sB + off * 2, bf[ni][0], bf[ni][1]);
        } else {
          uint32_t off = tcg__tile_offset<N, 2, SWZ_B>(ks * 16 + i2 * 8, r, n8);
          tcg__ldsm_x2_t(sB + off * 2, bf[ni][0], bf[ni][1]);
        }
      }
    }
  }
  TCG_SDEV void mma_all(uint32_t (*af)[4], uint32_t (*bf)[2], float *acc) {
#pragma unroll
    for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
      for (int ni = 0; ni < G::NT; ni++) {
        tcg__mma_tile<TA, TB, G::NT>(acc, mi, ni, af[mi], bf[ni]);
      }
  }
  TCG_SDEV void ss(const void *Av, const void *Bv, float *acc) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) % (WARPS_M * WARPS_N), wm = w / WARPS_N, wn = w % WARPS_N;
    const int i = lane >> 3, r = lane & 7;
    const uint32_t sA = tcg_smem_addr(Av), sB = tcg_smem_addr(Bv);
#pragma unroll
    for (int ks = 0; ks < G::KS; ks++) {
      uint32_t af[G::MT][4], bf[G::NT][2];
#pragma unroll
      for (int mi = 0; mi < G::MT; mi++) {
        const int m16 = wm * G::TM + mi * 16;
        if (TRANS_A) { /* stored K x M */
          uint32_t off = tcg__tile_offset<M, 2, SWZ_A>(ks * 16 + (i >> 1) * 8, r, m16 + (i & 1) * 8);
          tcg__ldsm_x4_t(sA + off * 2, af[mi][0], af[mi][1], af[mi][2], af[mi][3]);
        } else { /* stored M x K */
          uint32_t off = tcg__tile_offset<K, 2, SWZ_A>(m16 + (i & 1) * 8, r, ks * 16 + (i >> 1) * 8);
          tcg__ldsm_x4(sA + off * 2, af[mi][0], af[mi][1], af[mi][2], af[mi][3]);
        }
      }
      load_b(sB, wn, lane, ks, bf);
      mma_all(af, bf, acc);
    }
  }
  TCG_SDEV uint32_t pack(uint16_t lo, uint16_t hi) { return (uint32_t)lo | ((uint32_t)hi << 16); }
  TCG_SDEV void rs(const uint16_t *Ar, const void *Bv, float *acc) {
    static_assert(WARPS_N == 1, "tcg_gemm_rs: WARPS_N must be 1");
    enum { KT = K / 8 };
    const int lane = threadIdx.x & 31;
    const uint32_t sB = tcg_smem_addr(Bv);
#pragma unroll
    for (int ks = 0; ks < G::KS; ks++) {
      uint32_t af[G::MT][4], bf[G::NT][2];
#pragma unroll
      for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
        for (int j = 0; j < 4; j++) { /* j: (row half h = j & 1, k half = j >> 1) */
          const int x = TCG_ACC(mi, j & 1, ks * 2 + (j >> 1), 0, KT);
          af[mi][j] = pack(Ar[x], Ar[x + 1]);
        }
      load_b(sB, 0, lane, ks, bf);
      mma_all(af, bf, acc);
    }
  }
};

/* ---- 8-bit tensor-core path: m16n8k32 (integers into s32, fp8 into f32). A K-contiguous
 * operand loads by ldmatrix (an 8x8 b16 matrix is 8 rows of 16 bytes); an M- or
 * N-contiguous one by byte gathers, as ldmatrix cannot transpose bytes. ---- */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
struct tcg__gemm_mma8 {
  typedef tcg__tiling<M, N, K, WARPS_M, WARPS_N, 32> G;
  typedef typename TC::T CS; /* float or int32_t */
  /* B fragments; KPERM: the k of register byte j is (j >> 1) * 8 + 2q + (j & 1) within each
   * 16-k half instead of 4q + j (gemm_rs: the order A's accumulator layout holds). */
  /* B fragments of tiles ni and ni + 1 (if any) into bf[0..1]. KPERM: the k of register byte
   * j is (j >> 1) * 8 + 2q + (j & 1) within each 16-k half instead of 4q + j (gemm_rs: the order
   * A's accumulator layout holds; the dot product does not depend on the order of k). */
  template <int KPERM> TCG_SDEV void load_b(const uint8_t *B, uint32_t sB, int wn, int lane, int ks, int ni, uint32_t (*bf)[2]) {
    const int i = lane >> 3, r = lane & 7, g = lane >> 2, q = lane & 3;
    const int n8 = wn * G::TN + ni * 8;
    if (TRANS_B && !KPERM && ni + 1 < G::NT) {
      uint32_t off = tcg__tile_offset<K, 1, SWZ_B>(n8 + (i >> 1) * 8, r, ks * 32 + (i & 1) * 16);
      tcg__ldsm_x4(sB + off, bf[0][0], bf[0][1], bf[1][0], bf[1][1]);
    } else if (TRANS_B && !KPERM) {
      uint32_t off = tcg__tile_offset<K, 1, SWZ_B>(n8, r, ks * 32 + (i & 1) * 16);
      tcg__ldsm_x2(sB + off, bf[0][0], bf[0][1]);
    } else {
#pragma unroll
      for (int nj = 0; nj < 2 && ni + nj < G::NT; nj++)
#pragma unroll
        for (int hk = 0; hk < 2; hk++) {
          int k[4];
#pragma unroll
          for (int j = 0; j < 4; j++) k[j] = ks * 32 + hk * 16 + (KPERM ? (j >> 1) * 8 + 2 * q + (j & 1) : 4 * q + j);
          bf[nj][hk] = tcg__gather4<N, K, !TRANS_B, SWZ_B>(B, n8 + nj * 8 + g, k);
        }
    }
  }
  /* one k-step: B two tiles at a time (fewer live registers than loading all of B first) */
  template <int KPERM> TCG_SDEV void step(const uint8_t *B, uint32_t sB, int wn, int lane, int ks, uint32_t (*af)[4], CS *acc) {
#pragma unroll
    for (int ni = 0; ni < G::NT; ni += 2) {
      uint32_t bf[2][2];
      load_b<KPERM>(B, sB, wn, lane, ks, ni, bf);
#pragma unroll
      for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
        for (int nj = 0; nj < 2 && ni + nj < G::NT; nj++) {
          tcg__mma_tile<TA, TB, G::NT>(acc, mi, ni + nj, af[mi], bf[nj]);
        }
    }
  }
  TCG_SDEV void ss(const void *Av, const void *Bv, CS *acc) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) % (WARPS_M * WARPS_N), wm = w / WARPS_N, wn = w % WARPS_N;
    const int i = lane >> 3, r = lane & 7, g = lane >> 2, q = lane & 3;
    const uint8_t *A = (const uint8_t *)Av, *B = (const uint8_t *)Bv;
    const uint32_t sA = tcg_smem_addr(Av), sB = tcg_smem_addr(Bv);
#pragma unroll
    for (int ks = 0; ks < G::KS; ks++) {
      uint32_t af[G::MT][4];
#pragma unroll
      for (int mi = 0; mi < G::MT; mi++) {
        const int m16 = wm * G::TM + mi * 16;
        if (!TRANS_A) {
          uint32_t off = tcg__tile_offset<K, 1, SWZ_A>(m16 + (i & 1) * 8, r, ks * 32 + (i >> 1) * 16);
          tcg__ldsm_x4(sA + off, af[mi][0], af[mi][1], af[mi][2], af[mi][3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; j++) {
            int k[4];
#pragma unroll
            for (int b = 0; b < 4; b++) k[b] = ks * 32 + (j >> 1) * 16 + 4 * q + b;
            af[mi][j] = tcg__gather4<M, K, TRANS_A, SWZ_A>(A, m16 + (j & 1) * 8 + g, k);
          }
        }
      }
      step<0>(B, sB, wn, lane, ks, af, acc);
    }
  }
  TCG_SDEV void rs(const typename TA::T *Ar8, const void *Bv, CS *acc) {
    const uint8_t *Ar = (const uint8_t *)Ar8;
    static_assert(WARPS_N == 1, "tcg_gemm_rs: WARPS_N must be 1");
    enum { KT = K / 8 };
    const int lane = threadIdx.x & 31;
    const uint8_t *B = (const uint8_t *)Bv;
    const uint32_t sB = tcg_smem_addr(Bv);
#pragma unroll
    for (int ks = 0; ks < G::KS; ks++) {
      uint32_t af[G::MT][4];
#pragma unroll
      for (int mi = 0; mi < G::MT; mi++)
#pragma unroll
        for (int j = 0; j < 4; j++) { /* row half j & 1; k half j >> 1: groups 2 and 2+1 of it */
          const int x0 = TCG_ACC(mi, j & 1, ks * 4 + (j >> 1) * 2, 0, KT), x1 = TCG_ACC(mi, j & 1, ks * 4 + (j >> 1) * 2 + 1, 0, KT);
          af[mi][j] = (uint32_t)Ar[x0] | ((uint32_t)Ar[x0 + 1] << 8) | ((uint32_t)Ar[x1] << 16) | ((uint32_t)Ar[x1 + 1] << 24);
        }
      step<1>(B, sB, 0, lane, ks, af, acc);
    }
  }
};

/* ---- dispatch ---- */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC, int PATH>
struct tcg__gemm_impl : tcg__gemm_simt<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC> {};
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
struct tcg__gemm_impl<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC, TCG_GEMM_MMA_16>
    : tcg__gemm_mma16<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC> {};
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
struct tcg__gemm_impl<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC, TCG_GEMM_MMA_I8>
    : tcg__gemm_mma8<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC> {};
#if TCG_HAVE_MMA_F8
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
struct tcg__gemm_impl<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC, TCG_GEMM_MMA_F8>
    : tcg__gemm_mma8<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC> {};
#endif

/* acc (+)= op(A) @ op(B); every thread of the block calls it. A stored M x K (K x M when
 * TRANS_A), B stored K x N (N x K when TRANS_B), row-major in shared memory, swizzled when
 * SWZ_x. acc: this thread's MT*NT*4 accumulator elements (docs/cuda-prelude.md). */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
TCG_DEV void tcg_gemm_ss(const void *A_smem, const void *B_smem, typename TC::T *acc) {
  tcg__gemm_impl<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC,
                 tcg__gemm_path<TA, TB, TC>::value>::ss(A_smem, B_smem, acc);
}
/* The same with A (M x K) in registers, in the accumulator layout with WARPS_N = 1 (TRANS_A
 * and SWZ_A are not used: kept so both calls have the same parameters). */
template <int M, int N, int K, int WARPS_M, int WARPS_N, int TRANS_A, int TRANS_B, int SWZ_A, int SWZ_B, class TA,
          class TB, class TC>
TCG_DEV void tcg_gemm_rs(const typename TA::T *A_regs, const void *B_smem, typename TC::T *acc) {
  tcg__gemm_impl<M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC,
                 tcg__gemm_path<TA, TB, TC>::value>::rs(A_regs, B_smem, acc);
}
#endif /* TCG_CUDA_GEMM */
