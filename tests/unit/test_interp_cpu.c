/* test_interp_cpu.c: the two independent implementations of the execution model, checked
 * against each other. Each sample kernel runs in the reference interpreter as built, and
 * through the target-independent passes and the cpu backend (generate, cc, dlopen, launch);
 * every output must agree within the dtype's tolerance (integers exactly). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/interp.h"
#include "ir_samples.h"
#include "pass/pass.h"
#include "target/cpu/cpu.h"

static uint64_t rng = 88172645463325252ull;
static double rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static int64_t dim_value(const tc_kernel_ir *k, const tc_expr *e, const int64_t *syms) {
  if (e->op == TC_OP_CONST_INT) return e->ival;
  for (int i = 0; i < k->nsyms; i++)
    if (e->op == TC_OP_VAR && e->var == k->syms[i]) return syms[i];
  return -1;
}

/* Build the kernel twice (the passes rewrite in place), run both ways, compare. */
static void xcheck(const char *what, tc_kernel_ir *(*build)(void), const int64_t *syms, double rtol) {
  tc_kernel_ir *ref = build(), *low = build();
  tilec_error err;
  memset(&err, 0, sizeof err);
  if (!tc_pass_simplify(S_A, low, &err) || !tc_pass_infer_outputs(S_A, low, &err) || !tc_pass_check_bounds(S_A, low, &err) ||
      !tc_pass_insert_barriers(S_A, low, &err)) {
    printf("  %s: passes: %s", what, err.rendered);
    EXPECT(0);
    return;
  }
  int np = ref->nparams;
  void *a[16], *b[16];
  size_t bytes[16];
  for (int i = 0; i < np; i++) {
    const tc_buffer *buf = ref->params[i].buf;
    int64_t n = 1;
    for (int d = 0; d < buf->ndim; d++) n *= dim_value(ref, buf->shape[d], syms);
    bytes[i] = tc_dtype_storage_bytes(buf->dtype, (size_t)n);
    a[i] = calloc(1, bytes[i] + 1);
    b[i] = calloc(1, bytes[i] + 1);
    if (!ref->params[i].is_output)
      for (int64_t j = 0; j < n; j++)
        tc_dtype_store_f64(buf->dtype, a[i], (size_t)j, tc_dtype_is_float(buf->dtype) ? rnd() : floor(50 * rnd()));
    memcpy(b[i], a[i], bytes[i]);
  }
  tilec_status st = tc_interp_run(ref, a, NULL, NULL, syms, &err);
  if (st != TILEC_OK) printf("  %s: interp: %s", what, err.rendered);
  EXPECT(st == TILEC_OK);

  tc_backend_env env = {"cc", 1, NULL, {0}};
  tc_generated g = {0};
  void *art = NULL;
  size_t art_size = 0;
  tc_loaded *mod = NULL;
  memset(&err, 0, sizeof err);
  tc_arena lowering;
  tc_arena_init(&lowering);
  st = tc_lower_and_emit(&tc_cpu_cc_backend, &lowering, low, &g, &err);
  if (st == TILEC_OK) st = tc_cpu_cc_backend.build(&env, &g, &art, &art_size, &err);
  if (st == TILEC_OK) st = tc_cpu_cc_backend.load(&env, low, &g, art, art_size, &mod, &err);
  int64_t scalars[16] = {0};
  double fscalars[16] = {0};
  tc_launch_args la = {b, scalars, fscalars, syms, np, low->nsyms};
  if (st == TILEC_OK) st = tc_cpu_cc_backend.launch(&env, mod, &la, &err);
  if (st != TILEC_OK) printf("  %s: cpu backend: %s", what, err.rendered);
  EXPECT(st == TILEC_OK);
  if (mod) tc_cpu_cc_backend.unload(mod);
  free(art);
  tc_generated_free(&g);
  tc_arena_free(&lowering);

  for (int i = 0; i < np; i++) {
    const tc_buffer *buf = ref->params[i].buf;
    if (!ref->params[i].is_output) continue;
    int64_t n = 1, bad = 0;
    for (int d = 0; d < buf->ndim; d++) n *= dim_value(ref, buf->shape[d], syms);
    for (int64_t j = 0; j < n; j++) {
      double x = tc_dtype_load_f64(buf->dtype, a[i], (size_t)j), y = tc_dtype_load_f64(buf->dtype, b[i], (size_t)j);
      bool ok = tc_dtype_is_float(buf->dtype) ? fabs(x - y) <= rtol * (1 + fabs(x)) : x == y;
      if (!ok && bad++ < 3) printf("  %s: %s[%lld]: reference %.9g, cpu %.9g\n", what, buf->name, (long long)j, x, y);
    }
    EXPECT(bad == 0);
  }
  for (int i = 0; i < np; i++) {
    free(a[i]);
    free(b[i]);
  }
}

static tc_kernel_ir *gemm_f32(void) { return sample_gemm(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_FLOAT32), false); }
static tc_kernel_ir *gemm_f32_tb(void) { return sample_gemm(tc_dt(TC_DT_FLOAT32), tc_dt(TC_DT_FLOAT32), true); }
static tc_kernel_ir *gemm_f16(void) { return sample_gemm(tc_dt(TC_DT_FLOAT16), tc_dt(TC_DT_FLOAT16), false); }
static tc_kernel_ir *cumsum_fwd(void) { return sample_cumsum(1, false); }
static tc_kernel_ir *cumsum_rev(void) { return sample_cumsum(0, true); }

TEST(gemm_agrees_with_cpu_backend) {
  int64_t m37[1] = {37}, m16[1] = {16};
  xcheck("gemm f32 M=37", gemm_f32, m37, 1e-5);
  xcheck("gemm f32 M=16", gemm_f32, m16, 1e-5);
  xcheck("gemm f32 transpose_B", gemm_f32_tb, m37, 1e-5);
  xcheck("gemm f16", gemm_f16, m37, 2e-3);
}

TEST(softmax_agrees_with_cpu_backend) {
  int64_t m[1] = {20};
  xcheck("softmax M=20", sample_softmax, m, 1e-5);
}

TEST(cumsum_agrees_with_cpu_backend) {
  xcheck("cumsum dim=1", cumsum_fwd, NULL, 1e-5);
  xcheck("cumsum dim=0 reverse", cumsum_rev, NULL, 1e-5);
}

TEST(thread_level_kernel_agrees_with_cpu_backend) {
  int64_t n[1] = {150};
  xcheck("threads N=150", sample_threads, n, 1e-6);
}

TEST(small_kernels_agree_with_cpu_backend) {
  xcheck("tile ops on local buffers", sample_locals, NULL, 1e-6);
  xcheck("fp8 / int4 / bf16 globals", sample_narrow, NULL, 1e-6);
  xcheck("2-D thread blocks", sample_tids, NULL, 0);
  xcheck("atomic_add counting", sample_atomics, NULL, 1e-6);
  xcheck("per-thread copy into a shared slice", sample_per_thread_copy, NULL, 0);
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  char why[256] = "";
  tc_backend_env env = {"cc", 1, NULL, {0}};
  if (!tc_cpu_cc_backend.available(&env, why, sizeof why)) {
    printf("FAIL cpu backend unavailable: %s\n", why);
    return 1;
  }
  RUN(gemm_agrees_with_cpu_backend);
  RUN(softmax_agrees_with_cpu_backend);
  RUN(cumsum_agrees_with_cpu_backend);
  RUN(thread_level_kernel_agrees_with_cpu_backend);
  RUN(small_kernels_agree_with_cpu_backend);
  tc_arena_free(&arena);
  TEST_MAIN_END();
}
