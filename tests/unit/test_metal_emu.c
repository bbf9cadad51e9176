/* test_metal_emu: the Metal emulator (src/target/metal/emu.h) on hand-written MSL: buffers and
 * scalars reach [[buffer(i)]], thread positions come from their attributes, threadgroup memory
 * is shared by a threadgroup's threads only, barriers wait, a missing barrier gives wrong
 * results, simd operations meet their lanes, simdgroup_matrix multiplies, Metal 4's matmul2d
 * multiplies into a cooperative tensor with the element ownership tilec relies on and takes
 * cooperative inputs (the left one filled by lane at the placement tilec assumes), a deadlock
 * and a compile error are reported. Needs a C++ compiler (c++); without one the tests say so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "target/metal/emu.h"

static int have_cxx(void) {
  char why[256];
  if (tc_emu_available(NULL, why, sizeof why)) return 1;
  printf("  (skipped: %s)\n", why);
  return 0;
}

static tc_emu_library *build(const char *src) {
  tilec_error err = {0};
  tc_emu_library *lib = NULL;
  char *log = NULL;
  if (tc_emu_library_build(src, NULL, &lib, &log, &err) != TILEC_OK) printf("  build failed: %s\n%s\n", err.message, log ? log : "");
  free(log);
  return lib;
}

/* Each thread writes its slot of threadgroup memory, then reads its neighbour's. */
static const char k_neighbour[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "[[kernel, max_total_threads_per_threadgroup(64)]] void with_barrier(const device float *__restrict in [[buffer(0)]],\n"
    "    device float *__restrict out [[buffer(1)]], constant uint &n [[buffer(2)]],\n"
    "    uint3 tid [[thread_position_in_threadgroup]], uint3 gid [[threadgroup_position_in_grid]],\n"
    "    uint3 tpg [[threads_per_threadgroup]]) {\n"
    "  threadgroup float slot[64];\n"
    "  uint i = gid.x * tpg.x + tid.x;\n"
    "  slot[tid.x] = i < n ? in[i] : 0.0f;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  if (i < n) out[i] = slot[(tid.x + 1) % tpg.x];\n"
    "}\n"
    "kernel void without_barrier(const device float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "    constant uint &n [[buffer(2)]], uint tid [[thread_index_in_threadgroup]], uint2 gid [[threadgroup_position_in_grid]]) {\n"
    "  threadgroup float slot[64];\n"
    "  uint i = gid.x * 64 + tid;\n"
    "  slot[tid] = i < n ? in[i] : 0.0f;\n"
    "  if (i < n) out[i] = slot[(tid + 1) % 64];\n"
    "}\n";

TEST(barrier_waits_and_a_missing_barrier_shows) {
  if (!have_cxx()) return;
  tc_emu_library *lib = build(k_neighbour);
  CHECK(lib);
  enum { N = 200 };
  float in[N], out[N], expect[N];
  uint32_t n = N;
  for (int i = 0; i < N; i++) in[i] = (float)(i * 3 + 1);
  for (int i = 0; i < N; i++) {
    int g = i / 64, t = i % 64, j = g * 64 + (t + 1) % 64;
    expect[i] = j < N ? in[j] : 0.0f;
  }
  void *b[3] = {in, out, &n};
  uint32_t groups[3] = {(N + 63) / 64, 1, 1}, threads[3] = {64, 1, 1};
  tilec_error err = {0};
  memset(out, 0, sizeof out);
  CHECK(tc_emu_dispatch(lib, "with_barrier", b, 3, groups, threads, 0, &err) == TILEC_OK);
  CHECK(memcmp(out, expect, sizeof out) == 0);
  memset(out, 0, sizeof out);
  CHECK(tc_emu_dispatch(lib, "without_barrier", b, 3, groups, threads, 0, &err) == TILEC_OK);
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += out[i] != expect[i];
  printf("  without the barrier: %d of %d elements wrong\n", wrong, N);
  CHECK(wrong > N / 2);
  err = (tilec_error){0};
  CHECK(tc_emu_dispatch(lib, "nonexistent", b, 3, groups, threads, 0, &err) == TILEC_ERROR_USAGE);
  CHECK(strstr(err.message, "nonexistent"));
  tc_emu_library_free(lib);
}

static const char k_simd[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void simd_ops(device float *out [[buffer(0)]], device int *lanes [[buffer(1)]],\n"
    "    ushort lane [[thread_index_in_simdgroup]], ushort sg [[simdgroup_index_in_threadgroup]],\n"
    "    uint t [[thread_index_in_threadgroup]], threadgroup float *dyn [[threadgroup(0)]]) {\n"
    "  float v = float(t);\n"
    "  float x = simd_shuffle_xor(v, ushort(5));\n"
    "  float s = simd_sum(v);\n"
    "  float m = simd_max(v);\n"
    "  dyn[t] = x;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  out[t * 3 + 0] = dyn[t];\n"
    "  out[t * 3 + 1] = s;\n"
    "  out[t * 3 + 2] = m;\n"
    "  lanes[t] = int(sg) * 100 + int(lane);\n"
    "}\n"
    "kernel void deadlock(device float *out [[buffer(0)]], uint t [[thread_index_in_threadgroup]]) {\n"
    "  if (t < 16) threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  else out[t] = simd_sum(1.0f);\n"
    "}\n";

TEST(simd_operations_meet_their_lanes) {
  if (!have_cxx()) return;
  tc_emu_library *lib = build(k_simd);
  CHECK(lib);
  float out[96 * 3];
  int lanes[96];
  void *b[2] = {out, lanes};
  uint32_t groups[3] = {1, 1, 1}, threads[3] = {96, 1, 1};
  tilec_error err = {0};
  CHECK(tc_emu_dispatch(lib, "simd_ops", b, 2, groups, threads, 96 * sizeof(float), &err) == TILEC_OK);
  for (int t = 0; t < 96; t++) {
    int base = t / 32 * 32;
    float sum = 0, max = 0;
    for (int l = 0; l < 32; l++) sum += (float)(base + l), max = (float)(base + l);
    EXPECT(out[t * 3 + 0] == (float)(base + ((t % 32) ^ 5)));
    EXPECT(out[t * 3 + 1] == sum);
    EXPECT(out[t * 3 + 2] == max);
    EXPECT(lanes[t] == (t / 32) * 100 + t % 32);
  }
  err = (tilec_error){0};
  uint32_t one[3] = {1, 1, 1}, t32[3] = {32, 1, 1};
  CHECK(tc_emu_dispatch(lib, "deadlock", b, 1, one, t32, 0, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "deadlock"));
  tc_emu_library_free(lib);
}

/* D = A * B + C on 8x8 matrices through simdgroup_load / multiply_accumulate / store, A
 * loaded transposed from A^T, and each lane's two elements where simdgroup_matrix puts them. */
static const char k_matrix[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void mma(const device float *at [[buffer(0)]], const device half *b [[buffer(1)]],\n"
    "    const device float *c [[buffer(2)]], device float *d [[buffer(3)]], device float *own [[buffer(4)]],\n"
    "    ushort lane [[thread_index_in_simdgroup]]) {\n"
    "  simdgroup_matrix<float, 8, 8> ma, mc, md;\n"
    "  simdgroup_matrix<half, 8, 8> mb;\n"
    "  simdgroup_load(ma, at, 8, ulong2(0, 0), true);\n"
    "  simdgroup_load(mb, b, 8);\n"
    "  simdgroup_load(mc, c, 8);\n"
    "  simdgroup_multiply_accumulate(md, ma, mb, mc);\n"
    "  simdgroup_store(md, d, 8);\n"
    "  own[lane * 2] = md.thread_elements()[0];\n"
    "  own[lane * 2 + 1] = md.thread_elements()[1];\n"
    "}\n";

TEST(simdgroup_matrix_multiplies) {
  if (!have_cxx()) return;
  tc_emu_library *lib = build(k_matrix);
  CHECK(lib);
  float at[64], c[64], d[64], own[64];
  uint16_t b[64]; /* half: small integers, exact */
  float bf[64];
  static const uint16_t half_of_int[8] = {0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};
  for (int i = 0; i < 64; i++) {
    at[i] = (float)(i % 7) - 3;
    c[i] = (float)(i % 5);
    b[i] = half_of_int[i % 8];
    bf[i] = (float)(i % 8);
  }
  void *bind[5] = {at, b, c, d, own};
  uint32_t one[3] = {1, 1, 1}, t32[3] = {32, 1, 1};
  tilec_error err = {0};
  CHECK(tc_emu_dispatch(lib, "mma", bind, 5, one, t32, 0, &err) == TILEC_OK);
  for (int r = 0; r < 8; r++)
    for (int col = 0; col < 8; col++) {
      float s = c[r * 8 + col];
      for (int k = 0; k < 8; k++) s += at[k * 8 + r] * bf[k * 8 + col];
      EXPECT(d[r * 8 + col] == s);
    }
  for (int l = 0; l < 32; l++) {
    int row = ((l >> 4) & 1) * 4 + ((l >> 1) & 3), col = (((l >> 3) & 1) * 2 + (l & 1)) * 2;
    EXPECT(own[l * 2] == d[row * 8 + col] && own[l * 2 + 1] == d[row * 8 + col + 1]);
  }
  tc_emu_library_free(lib);
}

/* Small integers -2 .. 2 as float16 bits and as floats: exact in both, so the emulator's
 * products and sums compare exactly with a host product. Element i is ((i * mul) % 5) - 2. */
static const uint16_t k_half_of_int[5] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};
static void small_ints(uint16_t *h, float *f, int n, int mul) {
  for (int i = 0; i < n; i++) {
    int v = (i * mul) % 5;
    h[i] = k_half_of_int[v], f[i] = (float)v - 2;
  }
}

/* Metal 4: D = 1 + A[8.., :] * B[:, 4..] for a 16 x 32 destination, A (20 x 40) and B (40 x 36)
 * device tensors sliced at an origin, so rows 12..15 of the fragment lie past A's extents and
 * read zeros; every lane writes its elements where get_multidimensional_index says they are. */
static const char k_matmul2d[] =
    "#include <metal_stdlib>\n"
    "#include <metal_tensor>\n"
    "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n"
    "using namespace metal;\n"
    "kernel void mm(device half *a [[buffer(0)]], device half *b [[buffer(1)]], device float *d [[buffer(2)]],\n"
    "    device int *own [[buffer(3)]], ushort lane [[thread_index_in_simdgroup]]) {\n"
    "  tensor<device half, dextents<int32_t, 2>, tensor_inline> ta(a, dextents<int32_t, 2>(40, 20));\n"
    "  tensor<device half, dextents<int32_t, 2>, tensor_inline> tb(b, dextents<int32_t, 2>(36, 40));\n"
    "  constexpr auto desc = mpp::tensor_ops::matmul2d_descriptor(16, 32, 40, false, false, false,\n"
    "      mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);\n"
    "  mpp::tensor_ops::matmul2d<desc, execution_simdgroup> op;\n"
    "  auto sa = ta.slice(0, 8);\n"
    "  auto sb = tb.slice(4, 0);\n"
    "  auto c = op.get_destination_cooperative_tensor<decltype(sa), decltype(sb), float>();\n"
    "  for (int i = 0; i < c.get_capacity(); i++) c[i] = 1.0f;\n"
    "  op.run(sa, sb, c);\n"
    "  for (int i = 0; i < c.get_capacity(); i++) {\n"
    "    if (!c.is_valid_element(i)) continue;\n"
    "    auto idx = c.get_multidimensional_index(i);\n"
    "    d[idx[1] * 32 + idx[0]] = c[i];\n"
    "    own[lane * 16 + i] = idx[1] * 32 + idx[0];\n"
    "  }\n"
    "}\n";

TEST(matmul2d_multiplies_into_a_cooperative_tensor) {
  if (!have_cxx()) return;
  tc_emu_library *lib = build(k_matmul2d);
  CHECK(lib);
  uint16_t a[20 * 40], b[40 * 36];
  float af[20 * 40], bf[40 * 36], d[16 * 32];
  int own[32 * 16];
  small_ints(a, af, 20 * 40, 1);
  small_ints(b, bf, 40 * 36, 3);
  for (int i = 0; i < 16 * 32; i++) d[i] = -1000, own[i] = -1;
  void *bind[4] = {a, b, d, own};
  uint32_t one[3] = {1, 1, 1}, t32[3] = {32, 1, 1};
  tilec_error err = {0};
  CHECK(tc_emu_dispatch(lib, "mm", bind, 4, one, t32, 0, &err) == TILEC_OK);
  for (int r = 0; r < 16; r++)
    for (int col = 0; col < 32; col++) {
      float s = 1;
      for (int k = 0; r + 8 < 20 && k < 40; k++) s += af[(r + 8) * 40 + k] * bf[k * 36 + col + 4];
      EXPECT(d[r * 32 + col] == s);
    }
  /* element i of lane l: row 8*i[2] + 4*l[4] + l[2:1], column 16*i[3] + 4*(l[0] + 2*l[3]) + i[1:0] */
  int seen[16 * 32] = {0};
  for (int l = 0; l < 32; l++)
    for (int i = 0; i < 16; i++) {
      int row = ((i >> 2) & 1) * 8 + ((l >> 4) & 1) * 4 + ((l >> 1) & 3);
      int col = ((i >> 3) & 1) * 16 + ((l & 1) + ((l >> 3) & 1) * 2) * 4 + (i & 3);
      EXPECT(own[l * 16 + i] == row * 32 + col);
      seen[row * 32 + col]++;
    }
  for (int e = 0; e < 16 * 32; e++) EXPECT(seen[e] == 1);
  tc_emu_library_free(lib);
}

/* Metal 4 with cooperative inputs (the RS form): each lane puts its elements of the 16 x 16 left
 * operand in the left-input cooperative tensor at the placement tilec's prelude assumes (a
 * destination's 16-column half); the right operand is loaded from a 16 x 32 tensor (stored
 * 32 x 16 when transposed). D = A * B, compared with a host product. */
static const char k_matmul2d_coop_inputs[] =
    "#include <metal_stdlib>\n"
    "#include <metal_tensor>\n"
    "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n"
    "using namespace metal;\n"
    "template <bool TR> void mm_inputs(device half *a, device half *b, device float *d, ushort lane) {\n"
    "  tensor<device half, dextents<int32_t, 2>, tensor_inline> tb(b, dextents<int32_t, 2>(TR ? 16 : 32, TR ? 32 : 16));\n"
    "  constexpr auto desc = mpp::tensor_ops::matmul2d_descriptor(16, 32, 16, false, TR, false,\n"
    "      mpp::tensor_ops::matmul2d_descriptor::mode::multiply);\n"
    "  mpp::tensor_ops::matmul2d<desc, execution_simdgroup> op;\n"
    "  auto ca = op.template get_left_input_cooperative_tensor<half, half, float>();\n"
    "  auto cb = op.template get_right_input_cooperative_tensor<half, half, float>();\n"
    "  auto c = op.template get_destination_cooperative_tensor<decltype(ca), decltype(cb), float>();\n"
    "  for (int i = 0; i < 8; i++) {\n"
    "    int row = ((i >> 2) & 1) * 8 + ((lane >> 4) & 1) * 4 + ((lane >> 1) & 3);\n"
    "    int col = ((lane & 1) + ((lane >> 3) & 1) * 2) * 4 + (i & 3);\n"
    "    ca[i] = a[row * 16 + col];\n"
    "  }\n"
    "  cb.load(tb);\n"
    "  op.run(ca, cb, c);\n"
    "  for (int i = 0; i < c.get_capacity(); i++) {\n"
    "    auto idx = c.get_multidimensional_index(i);\n"
    "    d[idx[1] * 32 + idx[0]] = c[i];\n"
    "  }\n"
    "}\n"
    "kernel void mm_n(device half *a [[buffer(0)]], device half *b [[buffer(1)]], device float *d [[buffer(2)]],\n"
    "    ushort lane [[thread_index_in_simdgroup]]) { mm_inputs<false>(a, b, d, lane); }\n"
    "kernel void mm_t(device half *a [[buffer(0)]], device half *b [[buffer(1)]], device float *d [[buffer(2)]],\n"
    "    ushort lane [[thread_index_in_simdgroup]]) { mm_inputs<true>(a, b, d, lane); }\n";

TEST(matmul2d_takes_cooperative_inputs) {
  if (!have_cxx()) return;
  tc_emu_library *lib = build(k_matmul2d_coop_inputs);
  CHECK(lib);
  uint16_t a[16 * 16], b[16 * 32], bt[32 * 16];
  float af[16 * 16], bf[16 * 32], d[16 * 32];
  small_ints(a, af, 16 * 16, 7);
  small_ints(b, bf, 16 * 32, 3);
  for (int k = 0; k < 16; k++) /* B stored transposed, for the transposed descriptor */
    for (int n = 0; n < 32; n++) bt[n * 16 + k] = b[k * 32 + n];
  uint32_t one[3] = {1, 1, 1}, t32[3] = {32, 1, 1};
  for (int tr = 0; tr < 2; tr++) {
    for (int i = 0; i < 16 * 32; i++) d[i] = -1000;
    void *bind[3] = {a, tr ? bt : b, d};
    tilec_error err = {0};
    CHECK(tc_emu_dispatch(lib, tr ? "mm_t" : "mm_n", bind, 3, one, t32, 0, &err) == TILEC_OK);
    int bad = 0;
    for (int r = 0; r < 16; r++)
      for (int n = 0; n < 32; n++) {
        float s = 0;
        for (int k = 0; k < 16; k++) s += af[r * 16 + k] * bf[k * 32 + n];
        bad += d[r * 32 + n] != s;
      }
    EXPECT(bad == 0);
  }
  tc_emu_library_free(lib);
}

TEST(compile_error_has_the_log) {
  if (!have_cxx()) return;
  tilec_error err = {0};
  tc_emu_library *lib = NULL;
  char *log = NULL;
  tilec_status st = tc_emu_library_build("#include <metal_stdlib>\nkernel void broken(device float *x [[buffer(0)]]) { x[0] = undefined_name; }\n",
                                         NULL, &lib, &log, &err);
  CHECK(st == TILEC_ERROR_TARGET);
  CHECK(lib == NULL);
  CHECK(log && strstr(log, "undefined_name"));
  CHECK(strstr(err.message, "undefined_name"));
  free(log);
  err = (tilec_error){0};
  CHECK(tc_emu_library_build("int no_kernels_here;\n", NULL, &lib, NULL, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "no kernel"));
}

int main(void) {
  RUN(barrier_waits_and_a_missing_barrier_shows);
  RUN(simd_operations_meet_their_lanes);
  RUN(simdgroup_matrix_multiplies);
  RUN(matmul2d_multiplies_into_a_cooperative_tensor);
  RUN(matmul2d_takes_cooperative_inputs);
  RUN(compile_error_has_the_log);
  TEST_MAIN_END();
}
