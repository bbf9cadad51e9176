// tilec's MSL prelude: the helpers generated kernels call (docs/metal.md). Plain MSL; the
// emulator compiles it against its metal_stdlib stand-in.
#include <metal_stdlib>
using namespace metal;

// ---- accumulators in the metal.simdgroup scope ----
// tilec's metal target moves a gemm accumulator to the metal.simdgroup scope (docs/metal.md)
// and the GPU lowering lays it out as the simdgroup's matrices hold it: registers 2b and 2b+1
// of block b = i * NB + j (i: 8-row block, j: 8-column block of the simdgroup's sub-tile, NB
// column blocks) are that block's simdgroup_matrix thread_elements(). Moving a block between
// registers and matrix stays in the thread.
template <int NB, typename T>
inline simdgroup_matrix<float, 8, 8> tcm_sg_block(thread const T *regs, int i, int j) {
  simdgroup_matrix<float, 8, 8> m;
  m.thread_elements()[0] = float(regs[(i * NB + j) * 2 + 0]);
  m.thread_elements()[1] = float(regs[(i * NB + j) * 2 + 1]);
  return m;
}
template <int NB, typename T>
inline void tcm_sg_unblock(thread T *regs, int i, int j, simdgroup_matrix<float, 8, 8> m) {
  regs[(i * NB + j) * 2 + 0] = T(m.thread_elements()[0]);
  regs[(i * NB + j) * 2 + 1] = T(m.thread_elements()[1]);
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

// C (M x N, a metal.simdgroup accumulator) += op(A) (M x K) * op(B) (K x N), A and B in
// threadgroup memory, over WM x WN simdgroups (simdgroup w takes sub-tile (w / WN, w % WN),
// replicas beyond WM*WN compute the same), with 8x8 simdgroup matrices and float accumulation.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void tcm_gemm_ss(const threadgroup TA *A, const threadgroup TB *B, thread TC *acc, ushort simdgroup) {
  constexpr int TM = M / WM, TN = N / WN, MB = TM / 8, NB = TN / 8;
  const int w = simdgroup % (WM * WN), row0 = (w / WN) * TM, col0 = (w % WN) * TN;
  simdgroup_matrix<float, 8, 8> c[MB][NB];
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) c[i][j] = tcm_sg_block<NB>(acc, i, j);
  for (int k = 0; k < K; k += 8) {
    simdgroup_matrix<float, 8, 8> a[MB], b[NB];
    for (int i = 0; i < MB; i++) a[i] = tcm_load_operand<TRANS_A>(A, TRANS_A ? M : K, row0 + i * 8, k);
    for (int j = 0; j < NB; j++) b[j] = tcm_load_operand<TRANS_B>(B, TRANS_B ? K : N, k, col0 + j * 8);
    for (int i = 0; i < MB; i++)
      for (int j = 0; j < NB; j++) simdgroup_multiply_accumulate(c[i][j], a[i], b[j], c[i][j]);
  }
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) tcm_sg_unblock<NB>(acc, i, j, c[i][j]);
}

// The same with A in registers: an M x K fragment laid out like a metal.simdgroup accumulator
// over WM x 1 simdgroups (WN must be 1), as attention's second gemm has it.
template <int M, int N, int K, int WM, int WN, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void tcm_gemm_rs(thread const TA *A, const threadgroup TB *B, thread TC *acc, ushort simdgroup) {
  static_assert(WN == 1, "tcm_gemm_rs: A in registers needs one simdgroup column");
  constexpr int TM = M / WM, MB = TM / 8, NB = N / 8, KB = K / 8;
  (void)simdgroup;
  simdgroup_matrix<float, 8, 8> c[MB][NB];
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) c[i][j] = tcm_sg_block<NB>(acc, i, j);
  for (int kb = 0; kb < KB; kb++) {
    simdgroup_matrix<float, 8, 8> a[MB], b[NB];
    for (int i = 0; i < MB; i++) a[i] = tcm_sg_block<KB>(A, i, kb);
    for (int j = 0; j < NB; j++) b[j] = tcm_load_operand<TRANS_B>(B, TRANS_B ? K : N, kb * 8, j * 8);
    for (int i = 0; i < MB; i++)
      for (int j = 0; j < NB; j++) simdgroup_multiply_accumulate(c[i][j], a[i], b[j], c[i][j]);
  }
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) tcm_sg_unblock<NB>(acc, i, j, c[i][j]);
}

// A metal.simdgroup accumulator (M x N over WM x WN simdgroups) stored to device memory at dst,
// row-major with ld elements a row: each 8x8 block is converted to the tensor's type in the
// thread and written by simdgroup_store, with no threadgroup staging. The lowering calls it only
// for a tile inside the tensor. Replica simdgroups (beyond WM*WN) hold copies and do not store.
template <int M, int N, int WM, int WN, typename TC, typename TO>
inline void tcm_store_sg(thread const TC *acc, device TO *dst, ulong ld, ushort simdgroup) {
  constexpr int TM = M / WM, TN = N / WN, MB = TM / 8, NB = TN / 8;
  if (simdgroup >= WM * WN) return;
  const int row0 = (simdgroup / WN) * TM, col0 = (simdgroup % WN) * TN;
  for (int i = 0; i < MB; i++)
    for (int j = 0; j < NB; j++) {
      simdgroup_matrix<TO, 8, 8> m;
      m.thread_elements()[0] = TO(acc[(i * NB + j) * 2 + 0]);
      m.thread_elements()[1] = TO(acc[(i * NB + j) * 2 + 1]);
      simdgroup_store(m, dst, ld, ulong2(col0 + j * 8, row0 + i * 8));
    }
}

// Operand types simdgroup_matrix does not take (8-bit integers): each thread computes its own
// accumulator elements with scalar multiply-adds in the accumulator's type. The accumulator stays
// a fragment in docs/gpu.md's m16n8 placement (lane 4g+q: row g, columns 2q, 2q+1 of a block).
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
