/* bench_cpu_elementwise.c: an elementwise kernel built from tile IR (C = A * 2 + 1 over a flat
 * float32 tensor, T.Parallel tiles of 4096) against memcpy of the same bytes: one read stream
 * and one write stream each. memcpy runs once single-threaded and once split over the same
 * thread pool the kernel uses. Median of 9 runs. Not a test: it prints figures.
 *   build/bench/bench_cpu_elementwise [N]    (default 16M elements: 64 MiB in, 64 MiB out) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/unit/test_cpu_kernels.h"
#include "util/pool.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
typedef struct mc {
  char *dst;
  const char *src;
  size_t chunk, total;
} mc;
static void memcpy_range(void *c, int64_t b, int64_t e, int slot) {
  (void)slot;
  mc *m = c;
  for (int64_t i = b; i < e; i++) {
    size_t off = (size_t)i * m->chunk, n = off + m->chunk <= m->total ? m->chunk : m->total - off;
    memcpy(m->dst + off, m->src + off, n);
  }
}
#define RUNS 9

int main(int argc, char **argv) {
  int64_t N = argc > 1 ? atoll(argv[1]) : (int64_t)16 << 20;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;
  tc_thread_pool *pool = tc_thread_pool_create(ncpu);
  tc_backend_env env = {"cc", ncpu, pool, {0}};
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_axpb(&a, 4096);
  tc_generated gen;
  tilec_error err = {0};
  void *art;
  size_t n;
  tc_loaded *mod;
  if (tc_lower_and_emit(&tc_cpu_cc_backend, &a, k, &gen, &err) || tc_cpu_cc_backend.build(&env, &gen, &art, &n, &err) ||
      tc_cpu_cc_backend.load(&env, k, &gen, art, n, &mod, &err)) {
    fprintf(stderr, "%s\n", err.rendered);
    return 1;
  }
  size_t bytes = (size_t)N * 4;
  float *A = malloc(bytes), *C = malloc(bytes);
  for (int64_t i = 0; i < N; i++) A[i] = (float)(i % 1000) * 0.001f;
  memset(C, 0, bytes);
  void *data[2] = {A, C};
  int64_t syms[1] = {N}, scal[2] = {0};
  double fs[2] = {0};
  tc_launch_args la = {data, scal, fs, syms, 2, 1};
  double tk[RUNS], tm1[RUNS], tmp[RUNS];
  mc m = {(char *)C, (const char *)A, (size_t)1 << 20, bytes};
  int64_t nchunks = (int64_t)((bytes + m.chunk - 1) / m.chunk);
  tc_cpu_cc_backend.launch(&env, mod, &la, &err);
  for (int r = 0; r < RUNS; r++) {
    double x = now_ms();
    tc_cpu_cc_backend.launch(&env, mod, &la, &err);
    tk[r] = now_ms() - x;
    x = now_ms();
    memcpy(C, A, bytes);
    tm1[r] = now_ms() - x;
    x = now_ms();
    tc_thread_pool_parallel_for(pool, 0, nchunks, 1, memcpy_range, &m);
    tmp[r] = now_ms() - x;
  }
  tc_cpu_cc_backend.launch(&env, mod, &la, &err);
  int bad = 0;
  for (int64_t i = 0; i < N; i++)
    if (C[i] != A[i] * 2.0f + 1.0f) bad++;
  qsort(tk, RUNS, sizeof(double), cmp_d);
  qsort(tm1, RUNS, sizeof(double), cmp_d);
  qsort(tmp, RUNS, sizeof(double), cmp_d);
  double gb = 2.0 * bytes / 1e9; /* read + write */
  printf("cpu elementwise C = A*2+1, %lld float32 (%zu MiB in + out), %d threads%s\n", (long long)N, 2 * bytes >> 20, ncpu,
         bad ? ", WRONG RESULTS" : "");
  printf("  tilec kernel      %7.2f ms  %6.2f GB/s\n", tk[RUNS / 2], gb / tk[RUNS / 2] * 1e3);
  printf("  memcpy (1 thread) %7.2f ms  %6.2f GB/s   kernel/memcpy %.2fx\n", tm1[RUNS / 2], gb / tm1[RUNS / 2] * 1e3,
         tm1[RUNS / 2] / tk[RUNS / 2]);
  printf("  memcpy (%d thr.)   %7.2f ms  %6.2f GB/s   kernel/memcpy %.2fx\n", ncpu, tmp[RUNS / 2], gb / tmp[RUNS / 2] * 1e3,
         tmp[RUNS / 2] / tk[RUNS / 2]);
  free(A);
  free(C);
  tc_cpu_cc_backend.unload(mod);
  free(art);
  free(gen.kernel_source);
  free(gen.full_source);
  tc_arena_free(&a);
  tc_thread_pool_destroy(pool);
  return bad != 0;
}
