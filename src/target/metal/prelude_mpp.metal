// tilec's MSL prelude for Metal 4 (docs/metal.md, "Metal 4 cooperative tensors"): the block
// GEMM on MetalPerformancePrimitives' matmul2d. Included after prelude.metal, only by kernels
// that use it.
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>

// C (M x N, in registers) += op(A) (M x K) * op(B) (K x N) over WM x WN simdgroups (simdgroup
// w takes sub-tile (w / WN, w % WN); replicas beyond WM*WN compute the same). A's tile is
// stored row-major at row ar0, column ac0 of the tensor ta (M x K there, or K x M when TRANS_A;
// B likewise, K x N or N x K). Each simdgroup's TM x TN sub-tile is (TM/16) x (TN/32)
// fragments, fragment f in acc[16f .. 16f+15]: exactly the elements its matmul2d destination
// cooperative tensor gives this lane (the accumulator layout is built that way,
// src/gpu/layout.c), so moving a fragment between the registers and the cooperative tensor is
// a copy within the thread. A tensor's extent 0 is its contiguous dimension, and slice() takes
// (column, row): elements past the tensor's extents read as zero.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TTA, typename TTB>
inline void tcm_gemm_mpp(TTA ta, int ar0, int ac0, TTB tb, int br0, int bc0, thread float *acc, ushort simdgroup) {
  constexpr int TM = M / WM, TN = N / WN, FM = TM / 16, FN = TN / 32;
  static_assert(TM % 16 == 0 && TN % 32 == 0 && K % 16 == 0, "tcm_gemm_mpp: 16 x 32 x 16 multiples");
  const int w = simdgroup % (WM * WN), row0 = (w / WN) * TM, col0 = (w % WN) * TN;
  constexpr auto desc = mpp::tensor_ops::matmul2d_descriptor(16, 32, K, TRANS_A, TRANS_B, false,
                                                             mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);
  mpp::tensor_ops::matmul2d<desc, execution_simdgroup> op;
  for (int fi = 0; fi < FM; fi++) {
    const int r = row0 + fi * 16;
    auto a = TRANS_A ? ta.slice(ac0 + r, ar0) : ta.slice(ac0, ar0 + r);
    for (int fj = 0; fj < FN; fj++) {
      const int c = col0 + fj * 32;
      auto b = TRANS_B ? tb.slice(bc0, br0 + c) : tb.slice(bc0 + c, br0);
      auto d = op.template get_destination_cooperative_tensor<decltype(a), decltype(b), float>();
      thread float *f = acc + (fi * FN + fj) * 16;
      for (int i = 0; i < 16; i++) d[i] = f[i];
      op.run(a, b, d);
      for (int i = 0; i < 16; i++) f[i] = d[i];
    }
  }
}

// Shared-staged: A and B are whole tiles in threadgroup memory (as T.copy stages them).
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB>
inline void tcm_gemm_mpp_ss(const threadgroup TA *A, const threadgroup TB *B, thread float *acc, ushort simdgroup) {
  tensor<threadgroup TA, dextents<int32_t, 2>, tensor_inline> ta((threadgroup TA *)A, dextents<int32_t, 2>(TRANS_A ? M : K, TRANS_A ? K : M));
  tensor<threadgroup TB, dextents<int32_t, 2>, tensor_inline> tb((threadgroup TB *)B, dextents<int32_t, 2>(TRANS_B ? K : N, TRANS_B ? N : K));
  tcm_gemm_mpp<M, N, K, WM, WN, TRANS_A, TRANS_B>(ta, 0, 0, tb, 0, 0, acc, simdgroup);
}

// Direct-global: A and B are read from the row-major device matrices A (a_rows x a_cols) and B,
// their tiles at (ar0, ac0) and (br0, bc0); no threadgroup memory, no barrier.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB>
inline void tcm_gemm_mpp_gg(const device TA *A, int a_rows, int a_cols, int ar0, int ac0, const device TB *B, int b_rows,
                            int b_cols, int br0, int bc0, thread float *acc, ushort simdgroup) {
  tensor<device TA, dextents<int32_t, 2>, tensor_inline> ta((device TA *)A, dextents<int32_t, 2>(a_cols, a_rows));
  tensor<device TB, dextents<int32_t, 2>, tensor_inline> tb((device TB *)B, dextents<int32_t, 2>(b_cols, b_rows));
  tcm_gemm_mpp<M, N, K, WM, WN, TRANS_A, TRANS_B>(ta, ar0, ac0, tb, br0, bc0, acc, simdgroup);
}

// A from registers (the RS form, attention's P * V): A is an M x K fragment laid out like a
// matmul2d accumulator over WM x 1 simdgroups (src/gpu/layout.c), 16 x 32 fragments in
// registers 16f .. 16f+15. The 16 x 16 left input of K step kb is then elements 8 * (kb % 2) ..
// +7 of A's fragment (fi, kb / 2): a left-input cooperative tensor places a 16 x 16 tile as a
// destination places each of its 16-column halves (public Metal 4 GEMMs fill it this way;
// Apple does not document it, the emulator models it). B is loaded from threadgroup memory into
// the right-input cooperative tensor, whose placement tilec never needs.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB>
inline void tcm_gemm_mpp_rs(thread const TA *A, const threadgroup TB *B, thread float *acc, ushort simdgroup) {
  static_assert(WN == 1 && !TRANS_A && M % (16 * WM) == 0 && N % 32 == 0 && K % 32 == 0, "tcm_gemm_mpp_rs: A over WM x 1, 16 x 32 fragments");
  constexpr int TM = M / WM, FM = TM / 16, FN = N / 32, FK = K / 32;
  (void)simdgroup; // each simdgroup's rows of A are in its own registers; B is shared
  tensor<threadgroup TB, dextents<int32_t, 2>, tensor_inline> tb((threadgroup TB *)B, dextents<int32_t, 2>(TRANS_B ? K : N, TRANS_B ? N : K));
  constexpr auto desc = mpp::tensor_ops::matmul2d_descriptor(16, 32, 16, false, TRANS_B, false,
                                                             mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);
  mpp::tensor_ops::matmul2d<desc, execution_simdgroup> op;
  for (int fi = 0; fi < FM; fi++)
    for (int fj = 0; fj < FN; fj++) {
      auto a = op.template get_left_input_cooperative_tensor<TA, TB, float>();
      auto b = op.template get_right_input_cooperative_tensor<TA, TB, float>();
      auto d = op.template get_destination_cooperative_tensor<decltype(a), decltype(b), float>();
      thread float *f = acc + (fi * FN + fj) * 16;
      for (int i = 0; i < 16; i++) d[i] = f[i];
      for (int kb = 0; kb < K / 16; kb++) {
        thread const TA *af = A + (fi * FK + kb / 2) * 16 + (kb % 2) * 8;
        for (int i = 0; i < 8; i++) a[i] = af[i];
        b.load(TRANS_B ? tb.slice(kb * 16, fj * 32) : tb.slice(fj * 32, kb * 16));
        op.run(a, b, d);
      }
      for (int i = 0; i < 16; i++) f[i] = d[i];
    }
}
