// tilec's MSL prelude for Metal 4 (docs/metal.md, "Metal 4 cooperative tensors"): the block
// GEMM on MetalPerformancePrimitives' matmul2d. Included after prelude.metal, only by kernels
// that use it.
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>

// C (M x N, in registers) += op(A) (M x K) * op(B) (K x N), A and B in threadgroup memory
// (row-major: A is M x K, or K x M when TRANS_A; B is K x N, or N x K when TRANS_B), over WM x WN
// simdgroups (simdgroup w takes sub-tile (w / WN, w % WN); replicas beyond WM*WN compute the
// same). Each simdgroup's TM x TN sub-tile is (TM/16) x (TN/32) fragments, fragment f in
// acc[16f .. 16f+15]: exactly the elements its matmul2d destination cooperative tensor gives
// this lane (the accumulator layout is built that way, src/gpu/layout.c), so moving a fragment
// between the registers and the cooperative tensor is a copy within the thread.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB>
inline void tcm_gemm_mpp_ss(const threadgroup TA *A, const threadgroup TB *B, thread float *acc, ushort simdgroup) {
  constexpr int TM = M / WM, TN = N / WN, FM = TM / 16, FN = TN / 32;
  static_assert(TM % 16 == 0 && TN % 32 == 0 && K % 16 == 0, "tcm_gemm_mpp_ss: 16 x 32 x 16 multiples");
  const int w = simdgroup % (WM * WN), row0 = (w / WN) * TM, col0 = (w % WN) * TN;
  // a tensor's extent 0 is its contiguous dimension: (columns, rows) of the stored matrix
  tensor<threadgroup TA, dextents<int32_t, 2>, tensor_inline> ta((threadgroup TA *)A, dextents<int32_t, 2>(TRANS_A ? M : K, TRANS_A ? K : M));
  tensor<threadgroup TB, dextents<int32_t, 2>, tensor_inline> tb((threadgroup TB *)B, dextents<int32_t, 2>(TRANS_B ? K : N, TRANS_B ? N : K));
  constexpr auto desc = mpp::tensor_ops::matmul2d_descriptor(16, 32, K, TRANS_A, TRANS_B, false,
                                                             mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);
  mpp::tensor_ops::matmul2d<desc, execution_simdgroup> op;
  for (int fi = 0; fi < FM; fi++) {
    auto a = TRANS_A ? ta.slice(row0 + fi * 16, 0) : ta.slice(0, row0 + fi * 16);
    for (int fj = 0; fj < FN; fj++) {
      auto b = TRANS_B ? tb.slice(0, col0 + fj * 32) : tb.slice(col0 + fj * 32, 0);
      auto c = op.template get_destination_cooperative_tensor<decltype(a), decltype(b), float>();
      thread float *f = acc + (fi * FN + fj) * 16;
      for (int i = 0; i < 16; i++) c[i] = f[i];
      op.run(a, b, c);
      for (int i = 0; i < 16; i++) f[i] = c[i];
    }
  }
}
