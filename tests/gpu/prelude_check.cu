/* prelude_check.cu: checks the CUDA prelude's block GEMMs and conversions on a GPU, and times
 * a 128x128x32 mainloop. Build and run (on a machine with a GPU):
 *     make prelude-check                  (GPU_ARCH=sm_90a by default; sm_80 / sm_89 work)
 * which runs `nvcc -include build/gpu/tcg_prelude.cuh`, the full prelude as the library emits
 * it. Prints one PASS/FAIL line per case and the benchmark figures.
 *
 * Every case fills shared tiles through tcg_swizzle_offset, loads the accumulator from an
 * initial C through the layout formula of docs/cuda-prelude.md (written out here, not taken
 * from the prelude), runs tcg_gemm_ss / tcg_gemm_rs, and compares every element with a host
 * reference. Inputs come from a small set of values exact in every operand dtype, so a
 * tensor-core sum is exact in float32 and is compared bit for bit with the exact sum; the
 * SIMT path, which rounds as the cpu does, is compared with the same rounding done on the host.
 *
 * Under NVRTC (tests/unit/test_cuda_prelude.c compiles this file for sm_80, sm_89 and sm_90a)
 * only the kernels are compiled. */
#ifndef __CUDACC_RTC__
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#endif

/* (row, col) of accumulator register r of thread t: the fixed layout */
template <int M, int N, int WM, int WN> struct chk_layout {
  enum { TM = M / WM, TN = N / WN, MT = TM / 16, NT = TN / 8, R = MT * NT * 4 };
  static __host__ __device__ int row(int t, int r) {
    int w = t / 32, l = t % 32, wm = w / WN, mi = r / (4 * NT), h = (r / (2 * NT)) % 2;
    return wm * TM + mi * 16 + h * 8 + l / 4;
  }
  static __host__ __device__ int col(int t, int r) {
    int w = t / 32, l = t % 32, wn = w % WN, ni = (r / 2) % NT, c = r % 2;
    return wn * TN + ni * 8 + (l % 4) * 2 + c;
  }
};

/* gA: A as stored (M x K, or K x M when TRA), plain row-major; gB likewise; gC: M x N. */
template <int M, int N, int K, int WM, int WN, int TRA, int TRB, int SWA, int SWB, class TA, class TB, class TC, int RS>
__device__ void chk_body(const typename TA::T *gA, const typename TB::T *gB, const typename TC::T *gC,
                         typename TC::T *out) {
  typedef typename TA::T AT;
  typedef typename TB::T BT;
  __shared__ __align__(128) AT sa[RS ? 1 : M * K];
  __shared__ __align__(128) BT sb[K * N];
  const int t = threadIdx.x;
  enum { ACOLS = TRA ? M : K, BCOLS = TRB ? K : N };
  if (!RS)
    for (int i = t; i < M * K; i += blockDim.x)
      sa[SWA ? tcg_swizzle_offset<ACOLS, sizeof(AT)>(i / ACOLS, i % ACOLS) : i] = gA[i];
  for (int i = t; i < K * N; i += blockDim.x) sb[SWB ? tcg_swizzle_offset<BCOLS, sizeof(BT)>(i / BCOLS, i % BCOLS) : i] = gB[i];
  __syncthreads();
  typedef chk_layout<M, N, WM, WN> L;
  typename TC::T acc[L::R];
#pragma unroll
  for (int r = 0; r < L::R; r++) acc[r] = gC[L::row(t, r) * N + L::col(t, r)];
  if constexpr (RS) {
    typedef chk_layout<M, K, WM, 1> LA;
    AT areg[LA::R];
#pragma unroll
    for (int r = 0; r < LA::R; r++) areg[r] = gA[LA::row(t, r) * K + LA::col(t, r)];
    tcg_gemm_rs<M, N, K, WM, WN, TRA, TRB, SWA, SWB, TA, TB, TC>(areg, sb, acc);
  } else {
    tcg_gemm_ss<M, N, K, WM, WN, TRA, TRB, SWA, SWB, TA, TB, TC>(sa, sb, acc);
  }
#pragma unroll
  for (int r = 0; r < L::R; r++) out[L::row(t, r) * N + L::col(t, r)] = acc[r];
}

/* X(name, M, N, K, WARPS_M, WARPS_N, TRANS_A, TRANS_B, SWZ_A, SWZ_B, TA, TB, TC, RS, min_arch)
 * min_arch: the arch from which the case runs on tensor cores (informational). */
#define CHK_CASES(X)                                                                            \
  X(f16_nn_128x128x32_2x2, 128, 128, 32, 2, 2, 0, 0, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)   \
  X(f16_nt_128x128x32_2x2, 128, 128, 32, 2, 2, 0, 1, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)   \
  X(f16_tn_128x128x32_2x2, 128, 128, 32, 2, 2, 1, 0, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)   \
  X(f16_tt_128x128x32_2x2, 128, 128, 32, 2, 2, 1, 1, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)   \
  X(f16_nt_64x64x64_4x1, 64, 64, 64, 4, 1, 0, 1, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)       \
  X(f16_tn_64x64x64_4x1, 64, 64, 64, 4, 1, 1, 0, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)       \
  X(f16_nn_64x32x32_plain, 64, 32, 32, 2, 2, 0, 0, 0, 0, tcg_f16, tcg_f16, tcg_f32, 0, 80)     \
  X(f16_nn_32x16x16_swz32, 32, 16, 16, 2, 1, 0, 0, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)     \
  X(f16_tt_64x24x16_oddnt, 64, 24, 16, 4, 1, 1, 1, 1, 1, tcg_f16, tcg_f16, tcg_f32, 0, 80)     \
  X(bf16_nn_128x128x32_2x2, 128, 128, 32, 2, 2, 0, 0, 1, 1, tcg_bf16, tcg_bf16, tcg_f32, 0, 80) \
  X(bf16_tt_64x64x64_4x1, 64, 64, 64, 4, 1, 1, 1, 1, 1, tcg_bf16, tcg_bf16, tcg_f32, 0, 80)    \
  X(i8_nt_128x128x64_2x2, 128, 128, 64, 2, 2, 0, 1, 1, 1, tcg_i8, tcg_i8, tcg_i32, 0, 80)      \
  X(i8_nn_64x64x64_4x1, 64, 64, 64, 4, 1, 0, 0, 1, 1, tcg_i8, tcg_i8, tcg_i32, 0, 80)          \
  X(i8_tn_64x64x32_2x2, 64, 64, 32, 2, 2, 1, 0, 1, 0, tcg_i8, tcg_i8, tcg_i32, 0, 80)          \
  X(u8i8_tt_64x64x64_4x1, 64, 64, 64, 4, 1, 1, 1, 1, 1, tcg_u8, tcg_i8, tcg_i32, 0, 80)        \
  X(e4m3_nt_128x128x64_2x2, 128, 128, 64, 2, 2, 0, 1, 1, 1, tcg_e4m3, tcg_e4m3, tcg_f32, 0, 89) \
  X(e5m2e4m3_tn_64x64x64_4x1, 64, 64, 64, 4, 1, 1, 0, 1, 1, tcg_e5m2, tcg_e4m3, tcg_f32, 0, 89) \
  X(simt_f32_nt_64x64x32_2x2, 64, 64, 32, 2, 2, 0, 1, 1, 1, tcg_f32, tcg_f32, tcg_f32, 0, 0)   \
  X(simt_f32_tn_64x64x16_4x1, 64, 64, 16, 4, 1, 1, 0, 1, 1, tcg_f32, tcg_f32, tcg_f32, 0, 0)   \
  X(simt_f64_nn_32x32x16_2x1, 32, 32, 16, 2, 1, 0, 0, 1, 1, tcg_f64, tcg_f64, tcg_f64, 0, 0)   \
  X(simt_f16acc_nt_64x64x32_2x2, 64, 64, 32, 2, 2, 0, 1, 1, 1, tcg_f16, tcg_f16, tcg_f16, 0, 0) \
  X(simt_mixed_nn_64x32x32_2x2, 64, 32, 32, 2, 2, 0, 0, 1, 0, tcg_bf16, tcg_f16, tcg_f32, 0, 0) \
  X(simt_e4m3f16_tn_32x32x32_2x1, 32, 32, 32, 2, 1, 1, 0, 1, 1, tcg_e4m3, tcg_f16, tcg_f32, 0, 0) \
  X(rs_f16_nn_64x64x64_4x1, 64, 64, 64, 4, 1, 0, 0, 0, 1, tcg_f16, tcg_f16, tcg_f32, 1, 80)    \
  X(rs_f16_nt_64x128x32_4x1, 64, 128, 32, 4, 1, 0, 1, 0, 1, tcg_f16, tcg_f16, tcg_f32, 1, 80)  \
  X(rs_bf16_nn_128x64x32_4x1, 128, 64, 32, 4, 1, 0, 0, 0, 1, tcg_bf16, tcg_bf16, tcg_f32, 1, 80) \
  X(rs_i8_nt_64x64x64_4x1, 64, 64, 64, 4, 1, 0, 1, 0, 1, tcg_i8, tcg_i8, tcg_i32, 1, 80)       \
  X(rs_e4m3_nn_64x64x32_4x1, 64, 64, 32, 4, 1, 0, 0, 0, 1, tcg_e4m3, tcg_e4m3, tcg_f32, 1, 89) \
  X(rs_simt_f16acc_nn_64x32x32_4x1, 64, 32, 32, 4, 1, 0, 0, 0, 1, tcg_f16, tcg_f16, tcg_f16, 1, 0)

#define CHK_KERNEL(name, M, N, K, WM, WN, TRA, TRB, SWA, SWB, TA, TB, TC, RS, ARCH)                            \
  extern "C" __global__ void __launch_bounds__(WM * WN * 32)                                                    \
      chk_##name(const TA::T *a, const TB::T *b, const TC::T *c, TC::T *out) {                                  \
    chk_body<M, N, K, WM, WN, TRA, TRB, SWA, SWB, TA, TB, TC, RS>(a, b, c, out);                                \
  }
CHK_CASES(CHK_KERNEL)

/* Mainloop microbenchmark: tiles resident in shared memory, ITERS gemm calls per block. */
#define BENCH_CASES(X)                                                                   \
  X(f16, 128, 128, 32, 2, 2, 0, 1, tcg_f16, tcg_f16, tcg_f32)                            \
  X(f16_nn, 128, 128, 32, 2, 2, 0, 0, tcg_f16, tcg_f16, tcg_f32)                         \
  X(bf16, 128, 128, 32, 2, 2, 0, 1, tcg_bf16, tcg_bf16, tcg_f32)                         \
  X(i8, 128, 128, 64, 2, 2, 0, 1, tcg_i8, tcg_i8, tcg_i32)                               \
  X(e4m3, 128, 128, 64, 2, 2, 0, 1, tcg_e4m3, tcg_e4m3, tcg_f32)
#define BENCH_KERNEL(name, M, N, K, WM, WN, TRA, TRB, TA, TB, TC)                                     \
  extern "C" __global__ void __launch_bounds__(WM * WN * 32) bench_##name(TC::T *out, int iters) {    \
    __shared__ __align__(128) TA::T sa[M * K];                                                        \
    __shared__ __align__(128) TB::T sb[K * N];                                                        \
    for (int i = threadIdx.x; i < M * K; i += blockDim.x) sa[i] = (TA::T)(i * 7 + blockIdx.x);        \
    for (int i = threadIdx.x; i < K * N; i += blockDim.x) sb[i] = (TB::T)(i * 5 + 3);                 \
    __syncthreads();                                                                                  \
    TC::T acc[(M / WM / 16) * (N / WN / 8) * 4];                                                      \
    _Pragma("unroll") for (int r = 0; r < (M / WM / 16) * (N / WN / 8) * 4; r++) acc[r] = 0;          \
    for (int it = 0; it < iters; it++) tcg_gemm_ss<M, N, K, WM, WN, TRA, TRB, 1, 1, TA, TB, TC>(sa, sb, acc); \
    TC::T s = 0;                                                                                      \
    _Pragma("unroll") for (int r = 0; r < (M / WM / 16) * (N / WN / 8) * 4; r++) s += acc[r];        \
    if (s == (TC::T)12345) out[blockIdx.x * blockDim.x + threadIdx.x] = s;                            \
  }
BENCH_CASES(BENCH_KERNEL)

/* The device conversions against the host's (the same prelude text compiled for the host,
 * which tests/unit/test_dtype.c checks against the library): float16/bfloat16 use cvt
 * instructions on the device, the rest the integer code. */
extern "C" __global__ void chk_convert(const uint32_t *in, uint32_t n, uint16_t *o16, uint16_t *o16s, uint16_t *ob16,
                                       uint16_t *ob16s, uint8_t *o8a, uint8_t *o8b) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = __uint_as_float(in[i]);
    o16[i] = tcg_f32_to_float16(v);
    o16s[i] = tcg_f32_to_float16_sat(v);
    ob16[i] = tcg_f32_to_bfloat16(v);
    ob16s[i] = tcg_f32_to_bfloat16_sat(v);
    o8a[i] = tcg_f32_to_float8_e4m3fn(v);
    o8b[i] = tcg_f32_to_float8_e5m2(v);
  }
}

#ifndef __CUDACC_RTC__
#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      printf("FAIL cuda: %s: %s\n", #x, cudaGetErrorString(e_));                           \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static const double chk_values[] = {0, 0.5, -0.5, 1, -1, 1.5, -1.5, 2, -2, 3, -3, 0.25, -0.75, 0.75};
static const int chk_ints[] = {0, 1, -1, 2, -2, 3, -3, 5, -7, 4};

template <class D> static typename D::T chk_make(unsigned r) {
  if ((int)D::KIND == (int)TCG_KIND_FLOAT) return D::from_c((typename D::C)chk_values[r % 14]);
  int v = chk_ints[r % 10];
  if ((int)D::KIND == (int)TCG_KIND_UINT && v < 0) v = -v;
  return (typename D::T)v;
}
template <class D> static double chk_val(typename D::T x) { return (double)D::to_c(x); }
static unsigned chk_rng = 12345;
static unsigned chk_rand() { return chk_rng = chk_rng * 1103515245u + 12345u, chk_rng >> 8; }

template <int M, int N, int K, int WM, int WN, int TRA, int TRB, class TA, class TB, class TC, int PATH>
static bool chk_run(const char *name, void (*kern)(const typename TA::T *, const typename TB::T *, const typename TC::T *, typename TC::T *)) {
  typedef typename TA::T AT;
  typedef typename TB::T BT;
  typedef typename TC::T CT;
  std::vector<AT> A(M * K);
  std::vector<BT> B(K * N);
  std::vector<CT> C(M * N), O(M * N), R(M * N);
  for (auto &x : A) x = chk_make<TA>(chk_rand());
  for (auto &x : B) x = chk_make<TB>(chk_rand());
  for (auto &x : C) x = chk_make<TC>(chk_rand());
  auto a_at = [&](int i, int k) { return TRA ? A[k * M + i] : A[i * K + k]; };
  auto b_at = [&](int k, int j) { return TRB ? B[j * K + k] : B[k * N + j]; };
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      if (PATH != TCG_GEMM_SIMT) { /* exact: the inputs keep every partial sum exact */
        double s = chk_val<TC>(C[i * N + j]);
        for (int k = 0; k < K; k++) s += chk_val<TA>(a_at(i, k)) * chk_val<TB>(b_at(k, j));
        R[i * N + j] = (CT)s;
      } else { /* the cpu's rounding, k in order */
        typedef typename TC::C X;
        X s = TC::to_c(C[i * N + j]);
        for (int k = 0; k < K; k++) {
          X a = TC::round((X)TA::to_c(a_at(i, k))), b = TC::round((X)TB::to_c(b_at(k, j)));
          s = TC::round(s + TC::round(a * b));
        }
        R[i * N + j] = TC::from_c(s);
      }
    }
  AT *dA;
  BT *dB;
  CT *dC, *dO;
  CK(cudaMalloc(&dA, A.size() * sizeof(AT)));
  CK(cudaMalloc(&dB, B.size() * sizeof(BT)));
  CK(cudaMalloc(&dC, C.size() * sizeof(CT)));
  CK(cudaMalloc(&dO, O.size() * sizeof(CT)));
  CK(cudaMemcpy(dA, A.data(), A.size() * sizeof(AT), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B.data(), B.size() * sizeof(BT), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dC, C.data(), C.size() * sizeof(CT), cudaMemcpyHostToDevice));
  CK(cudaMemset(dO, 0xff, O.size() * sizeof(CT)));
  kern<<<1, WM * WN * 32>>>(dA, dB, dC, dO);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(O.data(), dO, O.size() * sizeof(CT), cudaMemcpyDeviceToHost));
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dO);
  int bad = 0;
  for (int i = 0; i < M * N; i++) {
    bool same = (int)TC::KIND == (int)TCG_KIND_FLOAT ? chk_val<TC>(O[i]) == chk_val<TC>(R[i]) : O[i] == R[i];
    if (!same && bad++ < 3)
      printf("  %s: C[%d][%d] = %g, expected %g\n", name, i / N, i % N, chk_val<TC>(O[i]), chk_val<TC>(R[i]));
  }
  printf("%s %s (%s)\n", bad ? "FAIL" : "PASS", name,
         PATH == TCG_GEMM_MMA_16 ? "mma m16n8k16" : PATH == TCG_GEMM_MMA_I8 ? "mma m16n8k32 int" : PATH == TCG_GEMM_MMA_F8 ? "mma m16n8k32 fp8 (SIMT below sm_89)" : "SIMT");
  return bad == 0;
}

static bool chk_convert_all() {
  /* every float32 bit pattern would take 4 G launches' worth of memory: all patterns with
   * the low 8 bits varied over a sample, plus every pattern near each format's boundaries */
  std::vector<uint32_t> in;
  for (uint64_t x = 0; x < (1ull << 32); x += 0x10001) in.push_back((uint32_t)x);
  for (uint32_t hi = 0; hi < 0x10000; hi++)
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x0fffu, 0x1000u, 0x1001u, 0x2000u, 0xe000u})
      in.push_back(hi << 16 | lo);
  uint32_t n = (uint32_t)in.size();
  uint32_t *d;
  uint16_t *o[4];
  uint8_t *p[2];
  CK(cudaMalloc(&d, n * 4));
  for (auto &x : o) CK(cudaMalloc(&x, n * 2));
  for (auto &x : p) CK(cudaMalloc(&x, n));
  CK(cudaMemcpy(d, in.data(), n * 4, cudaMemcpyHostToDevice));
  chk_convert<<<1024, 256>>>(d, n, o[0], o[1], o[2], o[3], p[0], p[1]);
  CK(cudaGetLastError());
  std::vector<uint16_t> h[4];
  std::vector<uint8_t> g[2];
  for (int i = 0; i < 4; i++) {
    h[i].resize(n);
    CK(cudaMemcpy(h[i].data(), o[i], n * 2, cudaMemcpyDeviceToHost));
  }
  for (int i = 0; i < 2; i++) {
    g[i].resize(n);
    CK(cudaMemcpy(g[i].data(), p[i], n, cudaMemcpyDeviceToHost));
  }
  const char *names[] = {"float16", "float16_sat", "bfloat16", "bfloat16_sat", "float8_e4m3fn", "float8_e5m2"};
  int bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    float v;
    memcpy(&v, &in[i], 4);
    uint32_t want[6] = {tcg_f32_to_float16(v), tcg_f32_to_float16_sat(v), tcg_f32_to_bfloat16(v), tcg_f32_to_bfloat16_sat(v),
                        tcg_f32_to_float8_e4m3fn(v), tcg_f32_to_float8_e5m2(v)};
    uint32_t got[6] = {h[0][i], h[1][i], h[2][i], h[3][i], g[0][i], g[1][i]};
    for (int k = 0; k < 6; k++)
      if (got[k] != want[k] && bad++ < 5) printf("  %s(0x%08x): device 0x%x, host 0x%x\n", names[k], in[i], got[k], want[k]);
  }
  cudaFree(d);
  for (auto x : o) cudaFree(x);
  for (auto x : p) cudaFree(x);
  printf("%s convert_f32_to_narrow (%u inputs, device vs host)\n", bad ? "FAIL" : "PASS", n);
  return bad == 0;
}

template <int M, int N, int K, int WM, int WN, class TC>
static void bench_run(const char *name, void (*kern)(typename TC::T *, int)) {
  int dev, sms;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  int blocks = sms * 8, iters = 2048;
  typename TC::T *out;
  CK(cudaMalloc(&out, (size_t)blocks * WM * WN * 32 * sizeof(typename TC::T)));
  kern<<<blocks, WM * WN * 32>>>(out, 16);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int rep = 0; rep < 5; rep++) {
    CK(cudaEventRecord(e0));
    kern<<<blocks, WM * WN * 32>>>(out, iters);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  double flops = 2.0 * M * N * K * (double)iters * blocks;
  printf("BENCH %s mainloop %dx%dx%d, %d warps, %d blocks x %d iters: %.3f ms, %.1f TFLOP/s\n", name, M, N, K, WM * WN,
         blocks, iters, best, flops / (best * 1e-3) / 1e12);
  cudaFree(out);
}

int main(int argc, char **argv) {
  bool bench = !(argc > 1 && strcmp(argv[1], "--no-bench") == 0);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  int failed = 0;
#define CHK_RUN(name, M, N, K, WM, WN, TRA, TRB, SWA, SWB, TA, TB, TC, RS, ARCH) \
  failed += !chk_run<M, N, K, WM, WN, TRA, TRB, TA, TB, TC, tcg__gemm_path<TA, TB, TC>::value>(#name, chk_##name);
  CHK_CASES(CHK_RUN)
  failed += !chk_convert_all();
  if (bench) {
#define BENCH_RUN(name, M, N, K, WM, WN, TRA, TRB, TA, TB, TC) bench_run<M, N, K, WM, WN, TC>(#name, bench_##name);
    BENCH_CASES(BENCH_RUN)
  }
  printf("%s: %d failed\n", failed ? "FAIL" : "PASS", failed);
  return failed != 0;
}
#endif
