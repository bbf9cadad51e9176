/* test_metal_runtime: the Metal runtime (src/target/metal/runtime.h) driven through the
 * simulated device (sim.h), checked by the calls the device recorded: the storage-mode bits
 * given to newBufferWithLength:options:, the language version chosen for given OS / SDK /
 * GPU-family answers (and the one compiles are given), compile errors carrying the compiler's
 * log, blits for private buffers and `contents` for shared ones, chained dispatches in one
 * command buffer, the fault mode that serves stale private data after N dispatches (and
 * shared storage avoiding it), GPU timestamps, and no object left alive after closing. Needs a
 * C++ compiler for the kernels (the emulator); without one those tests say so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "cache/cache.h"
#include "harness.h"
#include "target/metal/metal.h"
#include "target/metal/metal_rt.h"
#include "target/metal/emu.h"
#include "target/metal/runtime.h"
#include "target/metal/sim.h"

static int have_cxx(void) {
  char why[256];
  if (tc_emu_available(NULL, why, sizeof why)) return 1;
  printf("  (skipped: %s)\n", why);
  return 0;
}

static int count_lines(const char *log, const char *prefix) {
  int n = 0;
  for (const char *p = log; p && *p;) {
    if (strncmp(p, prefix, strlen(prefix)) == 0) n++;
    const char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : NULL;
  }
  return n;
}

static tc_mtl_rt *open_with(const tc_mtl_sim_config *c) {
  tc_mtl_sim_configure(c);
  tc_mtl_rt *rt = NULL;
  tilec_error err = {0};
  if (tc_mtl_rt_open(tc_objc_sim(), &rt, &err) != TILEC_OK) printf("  open failed: %s\n", err.message);
  return rt;
}

static tc_mtl_rt *open_default(void) {
  tc_mtl_sim_config c;
  tc_mtl_sim_config_defaults(&c);
  return open_with(&c);
}

TEST(storage_mode_bits_reach_newBufferWithLength) {
  long live0 = tc_mtl_sim_live_objects();
  tc_mtl_rt *rt = open_default();
  CHECK(rt);
  tilec_error err = {0};
  tc_id priv = NULL, shared = NULL;
  CHECK(tc_mtl_buffer_new(rt, 4096, TC_MTL_STORAGE_PRIVATE, &priv, &err) == TILEC_OK);
  CHECK(tc_mtl_buffer_new(rt, 256, TC_MTL_STORAGE_SHARED, &shared, &err) == TILEC_OK);
  char *log = tc_mtl_sim_calls();
  EXPECT(strstr(log, "newBufferWithLength:options: 4096 0x20 (private)\n"));
  EXPECT(strstr(log, "newBufferWithLength:options: 256 0x0 (shared)\n"));
  free(log);
  size_t len;
  tc_mtl_storage m;
  CHECK(tc_mtl_buffer_info(rt, priv, &len, &m) && len == 4096 && m == TC_MTL_STORAGE_PRIVATE);
  CHECK(tc_mtl_buffer_info(rt, shared, &len, &m) && len == 256 && m == TC_MTL_STORAGE_SHARED);
  int not_a_buffer = 0;
  CHECK(!tc_mtl_buffer_info(rt, &not_a_buffer, NULL, NULL));
  /* A private buffer's contents is NULL, as on a Mac: the runtime copies through a blit. */
  const tc_objc_api *api = tc_objc_sim();
  CHECK(api->msg_p(priv, api->registerName("contents")) == NULL);
  CHECK(api->msg_p(shared, api->registerName("contents")) != NULL);
  tc_mtl_sim_clear_calls();
  unsigned char in[4096], out[4096];
  for (int i = 0; i < 4096; i++) in[i] = (unsigned char)(i * 7 + 3);
  CHECK(tc_mtl_upload(rt, NULL, priv, 0, in, sizeof in, &err) == TILEC_OK);
  CHECK(tc_mtl_download(rt, NULL, priv, 0, out, sizeof out, &err) == TILEC_OK);
  CHECK(memcmp(in, out, sizeof in) == 0);
  log = tc_mtl_sim_calls();
  EXPECT(count_lines(log, "blitCommandEncoder") == 2);
  EXPECT(count_lines(log, "commit ") == 1); /* upload and download in one command buffer */
  EXPECT(!strstr(log, "UNRECOGNIZED"));
  free(log);
  tc_mtl_sim_clear_calls();
  CHECK(tc_mtl_upload(rt, NULL, shared, 16, in, 100, &err) == TILEC_OK);
  CHECK(tc_mtl_download(rt, NULL, shared, 16, out, 100, &err) == TILEC_OK);
  CHECK(memcmp(in, out, 100) == 0);
  log = tc_mtl_sim_calls();
  EXPECT(count_lines(log, "blitCommandEncoder") == 0); /* shared: through contents */
  EXPECT(count_lines(log, "contents buffer#") == 2);
  free(log);
  /* out of range is an error, nothing copied */
  err = (tilec_error){0};
  CHECK(tc_mtl_upload(rt, NULL, shared, 200, in, 100, &err) == TILEC_ERROR_USAGE);
  CHECK(strstr(err.message, "outside the buffer"));
  tc_mtl_buffer_release(rt, priv);
  tc_mtl_buffer_release(rt, shared);
  tc_mtl_rt_close(rt);
  CHECK_INT(tc_mtl_sim_live_objects(), live0);
}

TEST(storage_mode_option_beats_environment) {
  tc_mtl_storage m;
  const char *src;
  tilec_error err = {0};
  unsetenv("TILEC_METAL_STORAGE_MODE");
  CHECK(tc_mtl_storage_resolve(TC_MTL_STORAGE_UNSET, &m, &src, &err) == TILEC_OK);
  CHECK(m == TC_MTL_STORAGE_PRIVATE && strcmp(src, "default") == 0);
  setenv("TILEC_METAL_STORAGE_MODE", "shared", 1);
  CHECK(tc_mtl_storage_resolve(TC_MTL_STORAGE_UNSET, &m, &src, &err) == TILEC_OK);
  CHECK(m == TC_MTL_STORAGE_SHARED && strcmp(src, "TILEC_METAL_STORAGE_MODE") == 0);
  CHECK(tc_mtl_storage_resolve(TC_MTL_STORAGE_PRIVATE, &m, &src, &err) == TILEC_OK);
  CHECK(m == TC_MTL_STORAGE_PRIVATE && strcmp(src, "target option storage_mode") == 0);
  setenv("TILEC_METAL_STORAGE_MODE", "managed", 1);
  CHECK(tc_mtl_storage_resolve(TC_MTL_STORAGE_UNSET, &m, &src, &err) == TILEC_ERROR_USAGE);
  CHECK(strstr(err.message, "TILEC_METAL_STORAGE_MODE='managed' is not a storage mode"));
  err = (tilec_error){0};
  CHECK(tc_mtl_storage_resolve(TC_MTL_STORAGE_SHARED, &m, &src, &err) == TILEC_OK); /* the option wins */
  unsetenv("TILEC_METAL_STORAGE_MODE");
  CHECK(!tc_mtl_storage_parse("Private", &m) && !tc_mtl_storage_parse("", &m) && !tc_mtl_storage_parse(NULL, &m));
}

static const char k_add[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void add_k(const device float *__restrict in [[buffer(0)]], device float *__restrict out [[buffer(1)]],\n"
    "    constant int &n [[buffer(2)]], constant float &k [[buffer(3)]],\n"
    "    uint3 tid [[thread_position_in_threadgroup]], uint3 gid [[threadgroup_position_in_grid]],\n"
    "    threadgroup float *stage [[threadgroup(0)]]) {\n"
    "  int i = int(gid.x) * 64 + int(tid.x);\n"
    "  stage[tid.x] = i < n ? in[i] : 0.0f;\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  if (i < n) out[i] = stage[tid.x] + k;\n"
    "}\n";

static const uint32_t k_threads[3] = {64, 1, 1};

/* Runs `chain` dispatches of add_k (k = 1) ping-ponging between two buffers of `mode`, all in
 * one command buffer, and returns how many of the n results are not x + chain. */
static int chain(tc_mtl_rt *rt, tc_mtl_kernel *kern, tc_mtl_storage mode, int chain_len, int *commits) {
  enum { N = 300 };
  float host[N], out[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  tilec_error err = {0};
  tc_id a = NULL, b = NULL;
  if (tc_mtl_buffer_new(rt, sizeof host, mode, &a, &err) || tc_mtl_buffer_new(rt, sizeof host, mode, &b, &err)) return -1;
  tc_mtl_sim_clear_calls();
  int n = N;
  float one = 1.0f;
  uint32_t groups[3] = {(N + 63) / 64, 1, 1};
  int bad = -1;
  if (tc_mtl_upload(rt, NULL, a, 0, host, sizeof host, &err) != TILEC_OK) goto done;
  for (int d = 0; d < chain_len; d++) {
    tc_mtl_arg args[4] = {{d % 2 ? b : a, 0, NULL, 0}, {d % 2 ? a : b, 0, NULL, 0}, {NULL, 0, &n, sizeof n}, {NULL, 0, &one, sizeof one}};
    if (tc_mtl_dispatch(rt, NULL, kern, args, 4, groups, false, &err) != TILEC_OK) goto done;
  }
  if (tc_mtl_download(rt, NULL, chain_len % 2 ? b : a, 0, out, sizeof out, &err) != TILEC_OK) goto done;
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != (float)i + (float)chain_len;
done:
  if (bad < 0) printf("  chain failed: %s\n", err.message);
  char *log = tc_mtl_sim_calls();
  *commits = count_lines(log, "commit ");
  free(log);
  tc_mtl_buffer_release(rt, a);
  tc_mtl_buffer_release(rt, b);
  return bad;
}

TEST(chained_dispatches_run_in_one_command_buffer) {
  if (!have_cxx()) return;
  long live0 = tc_mtl_sim_live_objects();
  tc_mtl_rt *rt = open_default();
  CHECK(rt);
  tilec_error err = {0};
  tc_mtl_kernel *k = NULL;
  CHECK(tc_mtl_kernel_create(rt, "add", k_add, "add_k", TC_MTL_LANGUAGE(3, 0), k_threads, 64 * sizeof(float), &k, &err) ==
        TILEC_OK);
  int commits = 0;
  CHECK_INT(chain(rt, k, TC_MTL_STORAGE_PRIVATE, 12, &commits), 0);
  CHECK_INT(commits, 1);
  CHECK_INT(chain(rt, k, TC_MTL_STORAGE_SHARED, 12, &commits), 0);
  /* the recorded encoding of one dispatch */
  tc_mtl_sim_clear_calls();
  tc_id a, b;
  CHECK(tc_mtl_buffer_new(rt, 256, TC_MTL_STORAGE_PRIVATE, &a, &err) == TILEC_OK);
  CHECK(tc_mtl_buffer_new(rt, 256, TC_MTL_STORAGE_PRIVATE, &b, &err) == TILEC_OK);
  int n = 64;
  float kk = 2;
  tc_mtl_arg args[4] = {{a, 0, NULL, 0}, {b, 0, NULL, 0}, {NULL, 0, &n, sizeof n}, {NULL, 0, &kk, sizeof kk}};
  uint32_t groups[3] = {1, 1, 1};
  double ms = -1;
  CHECK(tc_mtl_dispatch(rt, NULL, k, args, 4, groups, false, &err) == TILEC_OK);
  CHECK(tc_mtl_flush(rt, NULL, &ms, &err) == TILEC_OK);
  CHECK(ms > 0); /* GPUEndTime - GPUStartTime */
  char *log = tc_mtl_sim_calls();
  EXPECT(strstr(log, "setComputePipelineState: add_k\n"));
  EXPECT(strstr(log, "setBytes:length:atIndex: 4 2\n"));
  EXPECT(strstr(log, "setBytes:length:atIndex: 4 3\n"));
  EXPECT(strstr(log, "setThreadgroupMemoryLength:atIndex: 256 0\n"));
  EXPECT(strstr(log, "dispatchThreadgroups:threadsPerThreadgroup: 1,1,1 64,1,1 tg_mem=256\n"));
  EXPECT(!strstr(log, "UNRECOGNIZED") && !strstr(log, "LEAK") && !strstr(log, "ERROR"));
  free(log);
  /* nothing pending: a flush is a no-op */
  CHECK(tc_mtl_flush(rt, NULL, &ms, &err) == TILEC_OK && ms == 0);
  tc_mtl_buffer_release(rt, a);
  tc_mtl_buffer_release(rt, b);
  tc_mtl_kernel_free(k);
  tc_mtl_rt_close(rt);
  CHECK_INT(tc_mtl_sim_live_objects(), live0);
}

TEST(fault_mode_serves_stale_private_data_and_shared_avoids_it) {
  if (!have_cxx()) return;
  tc_mtl_sim_config c;
  tc_mtl_sim_config_defaults(&c);
  c.fault_after = 10;
  tc_mtl_rt *rt = open_with(&c);
  CHECK(rt);
  tilec_error err = {0};
  tc_mtl_kernel *k = NULL;
  CHECK(tc_mtl_kernel_create(rt, "add", k_add, "add_k", 0, k_threads, 256, &k, &err) == TILEC_OK);
  int commits;
  /* 9 dispatches and the download: the download is the 10th command, fine */
  CHECK_INT(chain(rt, k, TC_MTL_STORAGE_PRIVATE, 9, &commits), 0);
  /* with 10, the download comes after 10 dispatches and reads the buffer's starting bytes */
  CHECK_INT(chain(rt, k, TC_MTL_STORAGE_PRIVATE, 10, &commits), 300);
  int bad = chain(rt, k, TC_MTL_STORAGE_PRIVATE, 12, &commits);
  printf("  12 chained dispatches on private buffers, fault after 10: %d of 300 wrong\n", bad);
  CHECK(bad == 300);
  CHECK_INT(chain(rt, k, TC_MTL_STORAGE_SHARED, 12, &commits), 0);
  CHECK_INT(chain(rt, k, TC_MTL_STORAGE_SHARED, 40, &commits), 0);
  tc_mtl_kernel_free(k);
  tc_mtl_rt_close(rt);
}

typedef struct lang_case {
  long os_major, os_minor, sdk;
  int apple;
  bool metal3, metal4;
  const char *expect, *why;
} lang_case;

TEST(language_version_follows_os_sdk_and_family) {
  static const lang_case cases[] = {
      {26, 0, 260000, 9, true, true, "4.0", "Metal 4.0: macOS 26.0, SDK 26.0"},
      {26, 1, 150000, 9, true, true, "3.2", "the SDK is 15.0 (Metal 4 needs 26)"},
      {15, 5, 260000, 9, true, true, "3.2", "macOS is 15.5 (Metal 4 needs 26)"},
      {26, 1, 260100, 7, true, false, "3.2", "the GPU is not of family Metal4"},
      {14, 6, 150000, 8, true, false, "3.1", "macOS 14.6, SDK 15.0"},
      {13, 0, 140000, 7, true, false, "3.0", "macOS 13.0, SDK 14.0"},
      {15, 0, 150000, 6, false, false, "2.4", "not of family Metal3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const lang_case *lc = &cases[i];
    tc_mtl_sim_config c;
    tc_mtl_sim_config_defaults(&c);
    c.os_major = lc->os_major, c.os_minor = lc->os_minor, c.sdk_version = lc->sdk;
    c.apple_family = lc->apple, c.metal3 = lc->metal3, c.metal4 = lc->metal4;
    tc_mtl_rt *rt = open_with(&c);
    CHECK(rt);
    char t[48];
    tc_mtl_language_text(tc_mtl_rt_language(rt), t, sizeof t);
    if (strcmp(t, lc->expect) || !strstr(tc_mtl_rt_language_why(rt), lc->why)) {
      printf("  case %zu: got %s (%s), expected %s (%s)\n", i, t, tc_mtl_rt_language_why(rt), lc->expect, lc->why);
      EXPECT(0);
    }
    char *log = tc_mtl_sim_calls();
    EXPECT(strstr(log, "operatingSystemVersion -> "));
    EXPECT(strstr(log, "supportsFamily: 5002 -> "));
    free(log);
    /* the version reaches the compile options */
    if (have_cxx() && lc->metal3) {
      tc_mtl_sim_clear_calls();
      tilec_error err = {0};
      tc_mtl_kernel *k = NULL;
      EXPECT(tc_mtl_kernel_create(rt, "add", k_add, "add_k", TC_MTL_LANGUAGE(3, 0), k_threads, 256, &k, &err) == TILEC_OK);
      log = tc_mtl_sim_calls();
      char want[64];
      snprintf(want, sizeof want, "setLanguageVersion: %s\n", lc->expect);
      EXPECT(strstr(log, want));
      EXPECT(strstr(log, "setFastMathEnabled: 0\n")); /* NaN and inf kept, precise math: as the reference */
      free(log);
      tc_mtl_kernel_free(k);
    }
    tc_mtl_rt_close(rt);
  }
}

TEST(a_kernel_needing_metal4_is_refused_clearly_without_it) {
  tc_mtl_sim_config c;
  tc_mtl_sim_config_defaults(&c); /* macOS 15.5, SDK 15.0: Metal 3.2 */
  tc_mtl_rt *rt = open_with(&c);
  CHECK(rt);
  tc_mtl_sim_clear_calls();
  tilec_error err = {0};
  tc_mtl_kernel *k = NULL;
  CHECK(tc_mtl_kernel_create(rt, "gemm", "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n", "g",
                             TC_MTL_LANGUAGE(4, 0), k_threads, 0, &k, &err) == TILEC_ERROR_TARGET);
  CHECK(!k);
  printf("  %s\n", err.message);
  CHECK(strstr(err.message, "kernel 'gemm' needs Metal 4.0"));
  CHECK(strstr(err.message, "compiles Metal 3.2 at most"));
  CHECK(strstr(err.message, "the SDK is 15.0 (Metal 4 needs 26)"));
  char *log = tc_mtl_sim_calls();
  EXPECT(!strstr(log, "newLibraryWithSource")); /* refused before compiling */
  free(log);
  /* bfloat needs 3.1: on macOS 13 it is refused too */
  tc_mtl_rt_close(rt);
  c.os_major = 13, c.os_minor = 3;
  rt = open_with(&c);
  CHECK(rt);
  err = (tilec_error){0};
  CHECK(tc_mtl_kernel_create(rt, "bf", "kernel void f() {}\n", "f", TC_MTL_LANGUAGE(3, 1), k_threads, 0, &k, &err) ==
        TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "needs Metal 3.1, but this machine compiles Metal 3.0 at most"));
  /* and the device's compiler refuses the bfloat type itself at 3.0 (not names that contain it) */
  if (have_cxx()) {
    err = (tilec_error){0};
    CHECK(tc_mtl_kernel_create(rt, "bf", "#include <metal_stdlib>\nusing namespace metal;\nkernel void f(device bfloat *p [[buffer(0)]]) {}\n",
                               "f", 0, k_threads, 0, &k, &err) == TILEC_ERROR_TARGET);
    CHECK(strstr(err.message, "unknown type name 'bfloat'"));
    err = (tilec_error){0};
    CHECK(tc_mtl_kernel_create(rt, "bf16", "#include <metal_stdlib>\nusing namespace metal;\ninline float tcg_bfloat16_to_f32(ushort h) { return float(h); }\nkernel void f(device float *p [[buffer(0)]]) { p[0] = tcg_bfloat16_to_f32(1); }\n",
                               "f", 0, k_threads, 0, &k, &err) == TILEC_OK);
    tc_mtl_kernel_free(k);
  }
  tc_mtl_rt_close(rt);
  /* the device itself also refuses: Metal 4 source compiled as 3.2 fails with its log */
  tc_mtl_sim_config_defaults(&c);
  rt = open_with(&c);
  err = (tilec_error){0};
  CHECK(tc_mtl_kernel_create(rt, "gemm", "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n", "g", 0,
                             k_threads, 0, &k, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "MetalPerformancePrimitives requires Metal 4.0"));
  tc_mtl_rt_close(rt);
}

TEST(compile_errors_carry_the_log) {
  if (!have_cxx()) return;
  long live0 = tc_mtl_sim_live_objects();
  tc_mtl_rt *rt = open_default();
  CHECK(rt);
  tilec_error err = {0};
  tc_mtl_kernel *k = NULL;
  static const char bad[] = "#include <metal_stdlib>\nusing namespace metal;\n"
                            "kernel void broken(device float *out [[buffer(0)]]) {\n  out[0] = undefined_name_xyz;\n}\n";
  CHECK(tc_mtl_kernel_create(rt, "broken", bad, "broken", 0, k_threads, 0, &k, &err) == TILEC_ERROR_TARGET);
  CHECK(!k);
  CHECK(strstr(err.message, "Metal could not compile kernel 'broken' (MSL 3.2)"));
  CHECK(strstr(err.message, "undefined_name_xyz")); /* the compiler's own words */
  tc_mtl_rt_close(rt);
  CHECK_INT(tc_mtl_sim_live_objects(), live0);
}

TEST(limits_and_faults_come_back_as_errors) {
  if (!have_cxx()) return;
  tc_mtl_rt *rt = open_default();
  CHECK(rt);
  tilec_error err = {0};
  tc_mtl_kernel *k = NULL;
  uint32_t big[3] = {32, 32, 2};
  CHECK(tc_mtl_kernel_create(rt, "add", k_add, "add_k", 0, big, 0, &k, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "2048 threads per threadgroup"));
  err = (tilec_error){0};
  CHECK(tc_mtl_kernel_create(rt, "add", k_add, "add_k", 0, k_threads, 65536, &k, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "65536 bytes of threadgroup memory"));
  /* an entry the library lacks fails when it runs, and the error reaches the flush */
  err = (tilec_error){0};
  CHECK(tc_mtl_kernel_create(rt, "missing", k_add, "no_such_kernel", 0, k_threads, 256, &k, &err) == TILEC_OK);
  tc_id a;
  CHECK(tc_mtl_buffer_new(rt, 256, TC_MTL_STORAGE_SHARED, &a, &err) == TILEC_OK);
  tc_mtl_arg args[1] = {{a, 0, NULL, 0}};
  uint32_t groups[3] = {1, 1, 1};
  CHECK(tc_mtl_dispatch(rt, NULL, k, args, 1, groups, true, &err) == TILEC_ERROR_TARGET);
  printf("  %s\n", err.message);
  CHECK(strstr(err.message, "a Metal command buffer failed"));
  CHECK(strstr(err.message, "no_such_kernel"));
  tc_mtl_buffer_release(rt, a);
  tc_mtl_kernel_free(k);
  tc_mtl_rt_close(rt);
}

TEST(no_device_is_an_error_not_a_crash) {
  tc_mtl_sim_config c;
  tc_mtl_sim_config_defaults(&c);
  c.device = false;
  tc_mtl_sim_configure(&c);
  tc_mtl_rt *rt = NULL;
  tilec_error err = {0};
  CHECK(tc_mtl_rt_open(tc_objc_sim(), &rt, &err) == TILEC_ERROR_TARGET);
  CHECK(!rt);
  CHECK(strstr(err.message, "no Metal device"));
}

/* ---- the metal backend through the public API ---- */

static const char k_addk_src[] =
    "import tilelang.language as T\n"
    "M = T.symbolic('M')\n"
    "@T.prim_func\n"
    "def addk(A: T.Tensor((M, 8), 'float32'), B: T.Tensor((M, 8), 'float32'), k: T.float32):\n"
    "    with T.Kernel(T.ceildiv(M, 4), threads=32) as bx:\n"
    "        for i, j in T.Parallel(4, 8):\n"
    "            if bx * 4 + i < M:\n"
    "                B[bx * 4 + i, j] = A[bx * 4 + i, j] + k\n";

typedef struct mtensor {
  DLTensor t;
  int64_t shape[2];
} mtensor;

static void metal_tensor(mtensor *x, tc_id buffer, int64_t offset, int64_t m) {
  memset(x, 0, sizeof *x);
  x->shape[0] = m;
  x->shape[1] = 8;
  x->t.data = buffer;
  x->t.byte_offset = (uint64_t)offset;
  x->t.device.device_type = kDLMetal;
  x->t.ndim = 2;
  x->t.shape = x->shape;
  x->t.dtype = (DLDataType){kDLFloat, 32, 1};
}

static tilec_kernel *compile_metal(tilec_context *ctx, const char *target, tilec_error *err) {
  tilec_program *p = tilec_program_from_string(ctx, "addk.py", k_addk_src, strlen(k_addk_src), err);
  if (!p) return NULL;
  tilec_compile_options o = {0};
  o.target = target;
  o.backend = "metal";
  tilec_kernel *k = tilec_compile(p, &o, err);
  tilec_program_destroy(p);
  return k;
}

TEST(api_launches_chain_on_kDLMetal_buffers_until_synchronize) {
#ifdef __APPLE__
  /* the library's own runtime is Metal.framework there; this test reads the simulated device's
   * record, so it runs off macOS only */
  printf("  (skipped on macOS: the shared runtime is Metal.framework, not the simulated device)\n");
  return;
#endif
  if (!have_cxx()) return;
  tc_mtl_sim_reset();
  char why[512];
  tc_mtl_rt *rt = tc_mtl_rt_shared(why, sizeof why);
  CHECK(rt);
  char dir[] = "/tmp/tilec-mtl-cache-XXXXXX";
  CHECK(mkdtemp(dir));
  tilec_context_options co = {0};
  co.cache_dir = dir; /* the disk cache is on: the in-memory backend must skip it */
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(&co, &err);
  CHECK(ctx);
  tilec_kernel *k = compile_metal(ctx, "metal", &err);
  if (!k) printf("  %s\n", err.rendered);
  CHECK(k);
  CHECK_STR(tilec_kernel_backend(k), "metal");
  CHECK_STR(tilec_kernel_cache_status(k), "miss"); /* compiled now, kept in memory by design */
  enum { M = 37 };
  float host[M * 8], out[M * 8];
  for (int i = 0; i < M * 8; i++) host[i] = (float)i * 0.5f;
  tc_id a, b;
  CHECK(tc_mtl_buffer_new(rt, 64 + sizeof host, TC_MTL_STORAGE_PRIVATE, &a, &err) == TILEC_OK);
  CHECK(tc_mtl_buffer_new(rt, sizeof host, TC_MTL_STORAGE_PRIVATE, &b, &err) == TILEC_OK);
  CHECK(tc_mtl_upload(rt, NULL, a, 64, host, sizeof host, &err) == TILEC_OK);
  mtensor ta, tb;
  metal_tensor(&ta, a, 64, M); /* a byte offset into the buffer, as DLPack allows */
  metal_tensor(&tb, b, 0, M);
  float kval = 1.0f;
  int64_t no_shape[1] = {0};
  DLTensor tk = {&kval, {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, no_shape, NULL, 0};
  DLTensor *ab[3] = {&ta.t, &tb.t, &tk}, *ba[3] = {&tb.t, &ta.t, &tk};
  tc_mtl_sim_clear_calls();
  /* 6 launches ping-pong through the two buffers, enqueued only */
  for (int r = 0; r < 6; r++) CHECK(tilec_kernel_launch_stream(k, r % 2 ? ba : ab, 3, NULL, &err) == TILEC_OK);
  char *log = tc_mtl_sim_calls();
  EXPECT(count_lines(log, "dispatchThreadgroups:") == 6);
  EXPECT(count_lines(log, "commit ") == 0);
  EXPECT(strstr(log, "setBuffer:offset:atIndex: buffer#"));
  EXPECT(strstr(log, " 64 0\n")); /* A at offset 64, [[buffer(0)]] */
  EXPECT(strstr(log, "setBytes:length:atIndex: 4 2\n")); /* k */
  EXPECT(strstr(log, "setBytes:length:atIndex: 4 3\n")); /* the symbolic M */
  EXPECT(strstr(log, "dispatchThreadgroups:threadsPerThreadgroup: 10,1,1 32,1,1"));
  free(log);
  CHECK(tilec_kernel_synchronize(k, NULL, &err) == TILEC_OK);
  log = tc_mtl_sim_calls();
  EXPECT(count_lines(log, "commit ") == 1); /* the upload and 6 dispatches: one command buffer */
  EXPECT(strstr(log, "(7 commands)"));
  free(log);
  CHECK(tc_mtl_download(rt, NULL, a, 64, out, sizeof out, &err) == TILEC_OK);
  int bad = 0;
  for (int i = 0; i < M * 8; i++) bad += out[i] != host[i] + 6.0f;
  CHECK_INT(bad, 0);
  /* a blocking launch runs what is pending too */
  CHECK(tilec_kernel_launch_stream(k, ab, 3, NULL, &err) == TILEC_OK);
  CHECK(tilec_kernel_launch(k, ba, 3, &err) == TILEC_OK);
  CHECK(tc_mtl_download(rt, NULL, a, 64, out, sizeof out, &err) == TILEC_OK);
  for (int i = 0; i < M * 8; i++) bad += out[i] != host[i] + 8.0f;
  CHECK_INT(bad, 0);
  /* a host pointer, a buffer too small, a CPU tensor: errors, nothing runs */
  float hostdata[M * 8];
  mtensor bogus;
  metal_tensor(&bogus, hostdata, 0, M);
  DLTensor *bad_args[3] = {&bogus.t, &tb.t, &tk};
  err = (tilec_error){0};
  CHECK(tilec_kernel_launch(k, bad_args, 3, &err) == TILEC_ERROR_USAGE);
  CHECK(strstr(err.message, "argument 'A' is not a Metal buffer"));
  metal_tensor(&bogus, b, 16, M); /* 16 bytes in, the tensor runs past the end */
  err = (tilec_error){0};
  CHECK(tilec_kernel_launch(k, bad_args, 3, &err) == TILEC_ERROR_USAGE);
  CHECK(strstr(err.message, "do not fit its Metal buffer"));
  ta.t.device.device_type = kDLCPU;
  err = (tilec_error){0};
  CHECK(tilec_kernel_launch(k, ab, 3, &err) == TILEC_ERROR_USAGE);
  ta.t.device.device_type = kDLMetal;
  /* the user's own queue is a stream */
  const tc_objc_api *api = tc_objc_sim();
  tc_id dev = api->MTLCreateSystemDefaultDevice();
  tc_id q = api->msg_o(dev, api->registerName("newCommandQueue"));
  tc_mtl_sim_clear_calls();
  CHECK(tilec_kernel_launch_stream(k, ab, 3, q, &err) == TILEC_OK);
  CHECK(tilec_kernel_synchronize(k, NULL, &err) == TILEC_OK); /* tilec's queue: nothing there */
  log = tc_mtl_sim_calls();
  EXPECT(count_lines(log, "commit ") == 0);
  free(log);
  CHECK(tilec_kernel_synchronize(k, q, &err) == TILEC_OK);
  log = tc_mtl_sim_calls();
  EXPECT(count_lines(log, "commit ") == 1);
  free(log);
  /* something that is not a queue as the stream */
  err = (tilec_error){0};
  CHECK(tilec_kernel_launch_stream(k, ab, 3, a, &err) == TILEC_ERROR_USAGE);
  CHECK(strstr(err.message, "not an MTLCommandQueue"));
  api->release(q);
  api->release(dev);
  /* nothing reached the disk: the backend has no artifact */
  char *stats = NULL;
  CHECK(tilec_cache_report(ctx, "ls", &stats, &err) == TILEC_OK);
  CHECK(!strstr(stats, "addk"));
  tilec_free(stats);
  /* a second compile in a fresh context: a compile again, never a disk read */
  tilec_kernel *k2 = NULL;
  tilec_context *ctx2 = tilec_context_create(&co, &err);
  CHECK(ctx2);
  CHECK((k2 = compile_metal(ctx2, "metal,storage_mode=shared", &err)) != NULL);
  CHECK_STR(tilec_kernel_cache_status(k2), "miss");
  tilec_kernel_destroy(k2);
  tilec_context_destroy(ctx2);
  tc_mtl_buffer_release(rt, a);
  tc_mtl_buffer_release(rt, b);
  tilec_kernel_destroy(k);
  tilec_context_destroy(ctx);
  size_t removed;
  tilec_context *c3 = tilec_context_create(&co, &err);
  tilec_cache_clear(c3, &removed, &err);
  tilec_context_destroy(c3);
  rmdir(dir);
}

TEST(disk_cache_skips_by_the_in_memory_property) {
  /* never by name: the metal backend declares TC_BACKEND_IN_MEMORY, metallib has an artifact */
  for (size_t i = 0; i < tc_backend_count(); i++) {
    const tc_backend *b = tc_backend_at(i);
    bool in_mem = (b->flags & TC_BACKEND_IN_MEMORY) != 0;
    EXPECT(tc_cache_disk_allowed(b) == (!in_mem && b->build != NULL));
  }
  CHECK(tc_metal_metal_backend.flags & TC_BACKEND_IN_MEMORY);
  CHECK(!tc_metal_metal_backend.build);
  CHECK(!tc_cache_disk_allowed(&tc_metal_metal_backend));
  CHECK(tc_cache_disk_allowed(&tc_metal_metallib_backend));
  /* a backend like metal under another name is skipped the same way */
  tc_backend renamed = tc_metal_metal_backend;
  renamed.name = "anything";
  CHECK(!tc_cache_disk_allowed(&renamed));
  /* the metallib artifact container */
  const char *meta;
  const void *lib;
  size_t n;
  static const char art[] = "tilec-metallib 1\nentry=x\n\0MTLB";
  CHECK(tc_metal_metallib_unpack(art, sizeof art - 1, &meta, &lib, &n) && n == 4 && memcmp(lib, "MTLB", 4) == 0);
  CHECK(!tc_metal_metallib_unpack(art, 10, &meta, &lib, &n));
  CHECK(!tc_metal_metallib_unpack("tilec-metallib 1\nno end", 23, &meta, &lib, &n));
  /* the simulated device cannot load metallib bytecode: an error, not a crash */
  tc_mtl_rt *rt = open_default();
  CHECK(rt);
  tilec_error err = {0};
  tc_mtl_kernel *k = NULL;
  CHECK(tc_mtl_kernel_from_metallib(rt, "x", "MTLB", 4, "x", 0, k_threads, 0, &k, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "cannot load metallib bytecode"));
  tc_mtl_rt_close(rt);
}

int main(void) {
  RUN(storage_mode_bits_reach_newBufferWithLength);
  RUN(storage_mode_option_beats_environment);
  RUN(chained_dispatches_run_in_one_command_buffer);
  RUN(fault_mode_serves_stale_private_data_and_shared_avoids_it);
  RUN(language_version_follows_os_sdk_and_family);
  RUN(a_kernel_needing_metal4_is_refused_clearly_without_it);
  RUN(compile_errors_carry_the_log);
  RUN(limits_and_faults_come_back_as_errors);
  RUN(no_device_is_an_error_not_a_crash);
  RUN(disk_cache_skips_by_the_in_memory_property);
  RUN(api_launches_chain_on_kDLMetal_buffers_until_synchronize);
  tc_mtl_sim_reset();
  printf("%d passed, %d failed\n", tc_t_passed, tc_t_failed);
  return tc_t_failed != 0;
}
