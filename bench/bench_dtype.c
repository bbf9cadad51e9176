/* bench_dtype: throughput of converting a large float32 array to float16, bfloat16 and
 * float8_e4m3fn with the library's per-element and array functions and with the generated-C
 * prelude (built by cc -O3 -march=native into a shared object and loaded), against memcpy
 * of the same input.
 *
 *   build/bench/bench_dtype [N_MI_ELEMENTS]   (default 64, i.e. 64 Mi elements)
 *
 * Bandwidth counts bytes read plus bytes written (memcpy: 2 x the array). Each figure is the
 * median of 7 runs after one warm-up (the fastest run is shown too); memcpy is measured again
 * before each format, since the machine may be shared. Not a test: it prints figures. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtype/dtype.h"

#define RUNS 7

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef void (*conv_fn)(const float *in, void *out, size_t n);

static void lib_f16(const float *in, void *out, size_t n) {
  uint16_t *o = out;
  for (size_t i = 0; i < n; i++) o[i] = tc_float_to_half(in[i]);
}
static void lib_bf16(const float *in, void *out, size_t n) {
  uint16_t *o = out;
  for (size_t i = 0; i < n; i++) o[i] = tc_float_to_bf16(in[i]);
}
static void lib_e4m3(const float *in, void *out, size_t n) {
  uint8_t *o = out;
  for (size_t i = 0; i < n; i++) o[i] = (uint8_t)tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, in[i], false);
}
static void bulk_f16(const float *in, void *out, size_t n) { tc_float_to_narrow_n(TC_DT_FLOAT16, in, out, n, false); }
static void bulk_bf16(const float *in, void *out, size_t n) { tc_float_to_narrow_n(TC_DT_BFLOAT16, in, out, n, false); }
static void bulk_e4m3(const float *in, void *out, size_t n) { tc_float_to_narrow_n(TC_DT_FLOAT8_E4M3FN, in, out, n, false); }
static void do_memcpy(const float *in, void *out, size_t n) { memcpy(out, in, n * 4); }

static double last_best; /* fastest of the runs in the last median_seconds call */

static double median_seconds(conv_fn fn, const float *in, void *out, size_t n) {
  double t[RUNS];
  fn(in, out, n); /* warm-up: faults the pages in */
  for (int r = 0; r < RUNS; r++) {
    double t0 = now();
    fn(in, out, n);
    t[r] = now() - t0;
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  last_best = t[0];
  return t[RUNS / 2];
}

static void report(const char *label, double t, double bytes, double copy_gbs, size_t n) {
  printf("%-34s %8.1f ms %7.2f GB/s  %.2fx memcpy  (%5.0f Melem/s; best run %6.2f GB/s)\n", label, t * 1e3,
         bytes / t / 1e9, bytes / t / 1e9 / copy_gbs, (double)n / t / 1e6, bytes / last_best / 1e9);
}

static const char *kernels =
    "void conv_f16(const float *in, uint16_t *out, size_t n) {\n"
    "  for (size_t i = 0; i < n; i++) out[i] = tcg_f32_to_float16(in[i]);\n}\n"
    "void conv_bf16(const float *in, uint16_t *out, size_t n) {\n"
    "  for (size_t i = 0; i < n; i++) out[i] = tcg_f32_to_bfloat16(in[i]);\n}\n"
    "void conv_e4m3(const float *in, uint8_t *out, size_t n) {\n"
    "  for (size_t i = 0; i < n; i++) out[i] = tcg_f32_to_float8_e4m3fn(in[i]);\n}\n";

/* Compile the prelude kernels; returns the dlopen handle or NULL. */
static void *build_prelude(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/tilec_bench_dtype_XXXXXX");
  if (!mkdtemp(dir)) return NULL;
  char src[96], so[96], cmd[1024];
  snprintf(src, sizeof src, "%s/k.c", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  FILE *f = fopen(src, "w");
  if (!f) return NULL;
  fputs(tc_dtype_c_prelude(), f);
  fputs(kernels, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -O3 -march=native -fPIC -shared -o %s %s 2>/dev/null || cc -std=c11 -O3 -fPIC -shared -o %s %s", so, src, so, src);
  if (system(cmd) != 0) return NULL;
  return dlopen(so, RTLD_NOW);
}

int main(int argc, char **argv) {
  size_t mi = argc > 1 ? (size_t)atol(argv[1]) : 64;
  if (mi == 0) mi = 64;
  size_t n = mi << 20;
  float *in = malloc(n * 4);
  void *out = malloc(n * 4);
  if (!in || !out) {
    fprintf(stderr, "bench_dtype: out of memory for %zu Mi elements\n", mi);
    return 1;
  }
  uint64_t s = 0x2545F4914F6CDD1Dull;
  for (size_t i = 0; i < n; i++) { /* values spread over [-2^10, 2^10] with random mantissas */
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint32_t u = (uint32_t)(s >> 32);
    uint32_t bits = (u & 0x807FFFFFu) | ((117u + (u >> 23) % 20u) << 23);
    memcpy(&in[i], &bits, 4);
  }
  memset(out, 0, n * 4);
  char dir[64];
  void *so = build_prelude(dir, sizeof dir);
  double copy_gbs;
  printf("dtype conversions: %zu Mi float32 elements, median of %d runs\n", mi, RUNS);
  struct {
    const char *name, *sym;
    conv_fn lib, bulk;
    int out_bytes;
  } cases[] = {
      {"float16", "conv_f16", lib_f16, bulk_f16, 2},
      {"bfloat16", "conv_bf16", lib_bf16, bulk_bf16, 2},
      {"float8_e4m3fn", "conv_e4m3", lib_e4m3, bulk_e4m3, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double bytes = (double)n * (4 + cases[c].out_bytes);
    /* the machine may be shared: measure memcpy again next to each case */
    double tc = median_seconds(do_memcpy, in, out, n);
    copy_gbs = 2.0 * (double)n * 4 / tc / 1e9;
    report("memcpy (float32 array)", tc, 2.0 * (double)n * 4, copy_gbs, n);
    double t = median_seconds(cases[c].lib, in, out, n);
    char label[64];
    snprintf(label, sizeof label, "library  f32->%s", cases[c].name);
    report(label, t, bytes, copy_gbs, n);
    t = median_seconds(cases[c].bulk, in, out, n);
    snprintf(label, sizeof label, "library  f32->%s, array", cases[c].name);
    report(label, t, bytes, copy_gbs, n);
    if (so) {
      conv_fn fn;
      void *sym = dlsym(so, cases[c].sym);
      memcpy(&fn, &sym, sizeof fn);
      if (!sym) continue;
      t = median_seconds(fn, in, out, n);
      snprintf(label, sizeof label, "prelude  f32->%s (cc -O3)", cases[c].name);
      report(label, t, bytes, copy_gbs, n);
    }
  }
  if (!so) printf("prelude: not measured (cc failed or dlopen failed)\n");
  else dlclose(so);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return 1;
  free(in);
  free(out);
  return 0;
}
