// tilec's MSL prelude: the helpers generated kernels call (docs/metal.md). Plain MSL; the
// emulator compiles it against its metal_stdlib stand-in.
#include <metal_stdlib>
using namespace metal;

// ---- accumulator fragments and simdgroup matrices ----
// tilec's GPU lowering lays a gemm accumulator out as docs/gpu.md's ACC: in every 8x8 block of
// a simdgroup's sub-tile, lane 4g+q holds row g, columns 2q and 2q+1. A simdgroup_matrix lane
// also owns two neighbouring elements of one row, at another place; the two are a permutation
// of the lanes, so one simd_shuffle per element moves a block between the two forms.
// The simdgroup lane that owns (row, 2p) and (row, 2p+1): row = 4*l[4] + l[2:1], p = 2*l[3] + l[0].
inline ushort tcm_acc_lane_for_sg_lane(ushort l) {
  ushort row = ((l >> 4) & 1) * 4 + ((l >> 1) & 3), pair = ((l >> 3) & 1) * 2 + (l & 1);
  return row * 4 + pair;
}
inline ushort tcm_sg_lane_for_acc_lane(ushort l) {
  ushort g = l >> 2, q = l & 3;
  return ((g >> 2) << 4) | ((q >> 1) << 3) | ((g & 3) << 1) | (q & 1);
}

// Block (i, j) of an accumulator in registers (i: 8-row block, j: 8-column block of the
// simdgroup's sub-tile, NB column blocks) as a float simdgroup matrix, and back.
template <int NB, typename T>
inline simdgroup_matrix<float, 8, 8> tcm_acc_to_sg(thread const T *acc, int i, int j, ushort from) {
  simdgroup_matrix<float, 8, 8> m;
  m.thread_elements()[0] = simd_shuffle(float(acc[(i * NB + j) * 2 + 0]), from);
  m.thread_elements()[1] = simd_shuffle(float(acc[(i * NB + j) * 2 + 1]), from);
  return m;
}
template <int NB, typename T>
inline void tcm_sg_to_acc(thread T *acc, int i, int j, simdgroup_matrix<float, 8, 8> m, ushort from) {
  acc[(i * NB + j) * 2 + 0] = T(simd_shuffle(m.thread_elements()[0], from));
  acc[(i * NB + j) * 2 + 1] = T(simd_shuffle(m.thread_elements()[1], from));
}

// An 8x8 operand block from threadgroup memory as a float matrix: rows `row0`.., columns
// `col0`.. of op(X), where X is stored row-major with `stride` elements per row, transposed
// (op(X) = X^T) when TRANS.
template <bool TRANS, typename T>
inline simdgroup_matrix<float, 8, 8> tcm_load_operand(const threadgroup T *x, int stride, int row0, int col0) {
  simdgroup_matrix<T, 8, 8> raw;
  if (TRANS) simdgroup_load(raw, x, stride, ulong2(row0, col0), true);
  else simdgroup_load(raw, x, stride, ulong2(col0, row0), false);
  simdgroup_matrix<float, 8, 8> m;
  m.thread_elements()[0] = float(raw.thread_elements()[0]);
  m.thread_elements()[1] = float(raw.thread_elements()[1]);
  return m;
}

// C (M x N, in registers) += op(A) (M x K) * op(B) (K x N), A and B in threadgroup memory, over
// WM x WN simdgroups (simdgroup w takes sub-tile (w / WN, w % WN), replicas beyond WM*WN
// compute the same), with 8x8 simdgroup matrices and float accumulation.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void tcm_gemm_ss(const threadgroup TA *A, const threadgroup TB *B, thread TC *acc, ushort lane, ushort simdgroup) {
  constexpr int TM = M / WM, TN = N / WN, MB = TM / 8, NB = TN / 8;
  const int w = simdgroup % (WM * WN), row0 = (w / WN) * TM, col0 = (w % WN) * TN;
  const ushort in_from = tcm_acc_lane_for_sg_lane(lane), out_from = tcm_sg_lane_for_acc_lane(lane);
  simdgroup_matrix<float, 8, 8> c[MB][NB];
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) c[i][j] = tcm_acc_to_sg<NB>(acc, i, j, in_from);
  for (int k = 0; k < K; k += 8) {
    simdgroup_matrix<float, 8, 8> a[MB], b[NB];
    for (int i = 0; i < MB; i++) a[i] = tcm_load_operand<TRANS_A>(A, TRANS_A ? M : K, row0 + i * 8, k);
    for (int j = 0; j < NB; j++) b[j] = tcm_load_operand<TRANS_B>(B, TRANS_B ? K : N, k, col0 + j * 8);
    for (int i = 0; i < MB; i++)
      for (int j = 0; j < NB; j++) simdgroup_multiply_accumulate(c[i][j], a[i], b[j], c[i][j]);
  }
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) tcm_sg_to_acc<NB>(acc, i, j, c[i][j], out_from);
}

// The same with A in registers: an accumulator-layout fragment of shape M x K over WM x 1
// simdgroups (WN must be 1), as attention's second gemm has it.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void tcm_gemm_rs(thread const TA *A, const threadgroup TB *B, thread TC *acc, ushort lane, ushort simdgroup) {
  static_assert(WN == 1, "tcm_gemm_rs: A in registers needs one simdgroup column");
  constexpr int TM = M / WM, MB = TM / 8, NB = N / 8, KB = K / 8;
  const ushort in_from = tcm_acc_lane_for_sg_lane(lane), out_from = tcm_sg_lane_for_acc_lane(lane);
  (void)simdgroup;
  simdgroup_matrix<float, 8, 8> c[MB][NB];
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) c[i][j] = tcm_acc_to_sg<NB>(acc, i, j, in_from);
  for (int kb = 0; kb < KB; kb++) {
    simdgroup_matrix<float, 8, 8> a[MB], b[NB];
    for (int i = 0; i < MB; i++) a[i] = tcm_acc_to_sg<KB>(A, i, kb, in_from);
    for (int j = 0; j < NB; j++) b[j] = tcm_load_operand<TRANS_B>(B, TRANS_B ? K : N, kb * 8, j * 8);
    for (int i = 0; i < MB; i++)
      for (int j = 0; j < NB; j++) simdgroup_multiply_accumulate(c[i][j], a[i], b[j], c[i][j]);
  }
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) tcm_sg_to_acc<NB>(acc, i, j, c[i][j], out_from);
}

// Operand types simdgroup_matrix does not take (8-bit integers): each thread computes its own
// accumulator elements (ACC layout) with scalar multiply-adds in the accumulator's type.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void tcm_gemm_ss_simt(const threadgroup TA *A, const threadgroup TB *B, thread TC *acc, ushort lane, ushort simdgroup) {
  constexpr int TM = M / WM, TN = N / WN, MB = TM / 8, NB = TN / 8;
  const int w = simdgroup % (WM * WN), row0 = (w / WN) * TM, col0 = (w % WN) * TN;
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++)
      for (int e = 0; e < 2; e++) {
        const int row = row0 + i * 8 + (lane >> 2), col = col0 + j * 8 + (lane & 3) * 2 + e;
        TC s = acc[(i * NB + j) * 2 + e];
        for (int k = 0; k < K; k++)
          s += TC(TRANS_A ? A[k * M + row] : A[row * K + k]) * TC(TRANS_B ? B[col * K + k] : B[k * N + col]);
        acc[(i * NB + j) * 2 + e] = s;
      }
}
