/* conv_check.cu: the GPU's conversion instructions against tilec's reference conversions
 * (src/dtype), on every float16 code and on a sample of float32 values that covers every
 * sign, exponent and top mantissa bits (the top 16 bits exhaustively, 16 low patterns each).
 * Reports, per instruction, how many results differ and the first few. It tells which
 * instructions the CUDA prelude may use alone and which need a NaN fix-up.
 * Build and run on a machine with a GPU: `make conv-check` (GPU_ARCH=sm_90a by default; the fp8
 * instructions need sm_89+). tests/gpu/run.sh runs it. */
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
extern "C" {
#include "dtype/dtype.h"
}

__global__ void k_h2f(const uint16_t *in, uint32_t *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(in[i]));
  out[i] = __float_as_uint(f);
}
/* kind 0: f16 rn, 1: f16 rn satfinite, 2: e4m3 rn satfinite, 3: e5m2 rn satfinite */
__global__ void k_f2n(const uint32_t *in, uint32_t *out, int n, int kind) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = __uint_as_float(in[i]);
  uint16_t h = 0;
  if (kind == 0) asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  else if (kind == 1) asm("cvt.rn.satfinite.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  else if (kind == 2) asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(v));
  else asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(v));
  out[i] = kind >= 2 ? (h & 0xffu) : h;
}

static int report(const char *what, const uint32_t *in, const uint32_t *got, const uint32_t *want, size_t n) {
  size_t bad = 0, badnan = 0, shown = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      bad++;
      float f; uint32_t b = in[i]; memcpy(&f, &b, 4);
      bool nan_in = strstr(what, "f16->") ? ((in[i] & 0x7fff) > 0x7c00) : (f != f);
      if (nan_in) badnan++;
      if (shown < 6) { printf("    in 0x%08x: got 0x%08x want 0x%08x%s\n", in[i], got[i], want[i], nan_in ? " (NaN input)" : ""); shown++; }
    }
  printf("%-40s %zu of %zu differ (%zu of them NaN inputs)\n", what, bad, n, badnan);
  return bad != badnan; /* a difference on a non-NaN input is a failure of the instruction itself */
}

int main() {
  int fails = 0;
  { /* every float16 code */
    std::vector<uint16_t> h(65536); std::vector<uint32_t> in(65536), got(65536), want(65536);
    for (int i = 0; i < 65536; i++) { h[i] = (uint16_t)i; in[i] = i; float f = tc_half_to_float((uint16_t)i); memcpy(&want[i], &f, 4); }
    uint16_t *dh; uint32_t *dout;
    cudaMalloc(&dh, 65536 * 2); cudaMalloc(&dout, 65536 * 4);
    cudaMemcpy(dh, h.data(), 65536 * 2, cudaMemcpyHostToDevice);
    k_h2f<<<256, 256>>>(dh, dout, 65536);
    cudaMemcpy(got.data(), dout, 65536 * 4, cudaMemcpyDeviceToHost);
    fails += report("cvt.f32.f16 (f16->f32)", in.data(), got.data(), want.data(), 65536);
    cudaFree(dh); cudaFree(dout);
  }
  { /* float32 sample: top 16 bits exhaustive, 16 low patterns */
    const uint32_t lows[16] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x0800, 0x07ff, 0x8000, 0x8001, 0x7fff, 0xffff, 0x4000, 0xc000, 0x2000, 0x3fff, 0xa5a5};
    size_t n = 65536 * 16;
    std::vector<uint32_t> in(n), got(n), want(n);
    for (size_t i = 0; i < n; i++) in[i] = ((uint32_t)(i / 16) << 16) | lows[i % 16];
    uint32_t *din, *dout;
    cudaMalloc(&din, n * 4); cudaMalloc(&dout, n * 4);
    cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice);
    const char *names[4] = {"cvt.rn.f16.f32 (f32->f16)", "cvt.rn.satfinite.f16.f32 (sat)", "cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32"};
    for (int kind = 0; kind < 4; kind++) {
      for (size_t i = 0; i < n; i++) {
        float f; memcpy(&f, &in[i], 4);
        want[i] = kind == 0 ? tc_float_to_half(f) : kind == 1 ? tc_float_to_narrow(TC_DT_FLOAT16, f, true)
                : tc_float_to_narrow(kind == 2 ? TC_DT_FLOAT8_E4M3FN : TC_DT_FLOAT8_E5M2, f, true);
      }
      k_f2n<<<(unsigned)((n + 255) / 256), 256>>>(din, dout, (int)n, kind);
      cudaMemcpy(got.data(), dout, n * 4, cudaMemcpyDeviceToHost);
      fails += report(names[kind], in.data(), got.data(), want.data(), n);
    }
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) { printf("CUDA error: %s\n", cudaGetErrorString(e)); return 2; }
  printf("%s\n", fails ? "FAIL conv_check: an instruction differs on a non-NaN input"
                      : "PASS conv_check: every instruction agrees with the library but on NaN inputs");
  return fails ? 1 : 0;
}
