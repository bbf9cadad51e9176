/* bench_cpu_gemm.c: the cpu backend's tiled fp32 GEMM (built from tile IR: T.Kernel grid,
 * shared A/B tiles, a fragment accumulator, a T.Pipelined k loop of T.copy + T.gemm) against
 * OpenBLAS sgemm in the same run, at 1024^3 and 2048^3, on all cores. Median of 7 runs after a
 * warm-up. Not a test: it prints figures.
 *   build/bench/bench_cpu_gemm [bm bn bk]     (default 128 128 64) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/unit/test_cpu_kernels.h"
#include "util/pool.h"

/* OpenBLAS (libopenblas-dev); declared here so no cblas header is needed. */
enum { CblasRowMajor = 101, CblasNoTrans = 111 };
void cblas_sgemm(int order, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);
void openblas_set_num_threads(int n);
char *openblas_get_config(void);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
#define RUNS 7

int main(int argc, char **argv) {
  int bm = argc > 3 ? atoi(argv[1]) : 128, bn = argc > 3 ? atoi(argv[2]) : 128, bk = argc > 3 ? atoi(argv[3]) : 64;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;
  openblas_set_num_threads(ncpu);
  tc_thread_pool *pool = tc_thread_pool_create(ncpu);
  tc_backend_env env = {"cc", ncpu, pool, {0}};
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_gemm(&a, bm, bn, bk, false, false, kb_f32(), kb_f32(), 128);
  tc_generated gen;
  tilec_error err = {0};
  double t0 = now_ms();
  if (tc_lower_and_emit(&tc_cpu_cc_backend, &a, k, &gen, &err) != TILEC_OK) {
    fprintf(stderr, "generate: %s\n", err.rendered);
    return 1;
  }
  double t1 = now_ms();
  void *art;
  size_t n;
  if (tc_cpu_cc_backend.build(&env, &gen, &art, &n, &err) != TILEC_OK) {
    fprintf(stderr, "build: %s\n", err.message);
    return 1;
  }
  double t2 = now_ms();
  tc_loaded *mod;
  if (tc_cpu_cc_backend.load(&env, k, &gen, art, n, &mod, &err) != TILEC_OK) {
    fprintf(stderr, "load: %s\n", err.message);
    return 1;
  }
  printf("cpu gemm: tiles %dx%dx%d, %d threads; generate %.2f ms, cc %.0f ms; openblas: %s\n", bm, bn, bk, ncpu,
         t1 - t0, t2 - t1, openblas_get_config());
  int sizes[2] = {1024, 2048};
  for (int s = 0; s < 2; s++) {
    int N = sizes[s];
    size_t nn = (size_t)N * N;
    float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4), *R = malloc(nn * 4);
    for (size_t i = 0; i < nn; i++) {
      A[i] = (float)((i * 7 + 3) % 13) / 13.0f - 0.5f;
      B[i] = (float)((i * 5 + 1) % 11) / 11.0f - 0.5f;
    }
    void *data[3] = {A, B, C};
    int64_t syms[3] = {N, N, N}, scal[3] = {0};
    double fs[3] = {0};
    tc_launch_args la = {data, scal, fs, syms, 3, 3};
    double tt[RUNS], tb[RUNS];
    tc_cpu_cc_backend.launch(&env, mod, &la, &err); /* warm-up */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, A, N, B, N, 0.0f, R, N);
    /* Each library runs its repetitions as one block, with a pause between the blocks:
     * OpenBLAS's threads spin for a while after each call, and interleaving its calls with
     * ours made ours compete with them for the two cores (about 2x slower at 1024^3). */
    usleep(200000);
    for (int r = 0; r < RUNS; r++) {
      double x = now_ms();
      tc_cpu_cc_backend.launch(&env, mod, &la, &err);
      tt[r] = now_ms() - x;
    }
    for (int r = 0; r < RUNS; r++) {
      double x = now_ms();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, A, N, B, N, 0.0f, R, N);
      tb[r] = now_ms() - x;
    }
    double maxd = 0;
    for (size_t i = 0; i < nn; i++) maxd = fmax(maxd, fabs((double)C[i] - R[i]));
    qsort(tt, RUNS, sizeof(double), cmp_d);
    qsort(tb, RUNS, sizeof(double), cmp_d);
    double fl = 2.0 * N * N * (double)N;
    printf("  %4d^3: tilec %8.2f ms (%6.1f GFLOP/s)  openblas %8.2f ms (%6.1f GFLOP/s)  ratio %.2fx  max|diff| %.2g\n", N,
           tt[RUNS / 2], fl / tt[RUNS / 2] / 1e6, tb[RUNS / 2], fl / tb[RUNS / 2] / 1e6, tb[RUNS / 2] / tt[RUNS / 2], maxd);
    free(A);
    free(B);
    free(C);
    free(R);
  }
  tc_cpu_cc_backend.unload(mod);
  free(art);
  free(gen.kernel_source);
  free(gen.full_source);
  tc_arena_free(&a);
  tc_thread_pool_destroy(pool);
  return 0;
}
