/* bench_compile.c: how long each stage of the front end and of compilation takes.
 *
 *   build/bench/bench_compile [examples/gemm.py examples/flash_attention.py ...]
 *
 * For each file: read (lex + parse), evaluate + passes into tile IR, tilec's whole share of a
 * cuda compile (the GPU lowering and the CUDA C++ printed, for sm_90a and sm_80: what NVRTC
 * gets; no GPU or NVRTC needed), then for the cpu target: a cold compile (no cache: generate C,
 * run cc, load), a warm disk hit (a fresh context over the same cache directory) and a warm
 * in-memory hit (the same context). Medians of repeated runs; the reader stages are repeated
 * many times since they take microseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tilec.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0, *len = (size_t)n;
  return buf;
}

static int bench_file(const char *path, const char *cache_dir) {
  size_t len;
  char *src = read_file(path, &len);
  if (!src) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  tilec_error err = {0};
  tilec_context_options co = {0};
  co.flags = TILEC_CONTEXT_NO_DISK_CACHE;
  tilec_context *ctx = tilec_context_create(&co, &err);
  enum { READS = 200 };
  double t_read[READS], t_eval[READS];
  tilec_program *prog = NULL;
  for (int i = 0; i < READS; i++) {
    double t0 = now_ms();
    tilec_program *p = tilec_program_from_string(ctx, path, src, len, &err);
    t_read[i] = now_ms() - t0;
    if (!p) {
      fprintf(stderr, "%s", err.rendered);
      return 1;
    }
    t0 = now_ms();
    char *ir = tilec_program_ir(p, NULL, 1, &err);
    t_eval[i] = now_ms() - t0;
    if (!ir) {
      fprintf(stderr, "%s", err.rendered);
      return 1;
    }
    tilec_free(ir);
    if (i == READS - 1) prog = p;
    else tilec_program_destroy(p);
  }
  printf("%-32s read (lex+parse) %8.4f ms   evaluate+passes %8.4f ms   (median of %d)\n", path,
         median(t_read, READS), median(t_eval, READS), READS);

  /* tilec's share of a cuda compile: lowering and printing, to the source NVRTC compiles */
  static const char *const archs[] = {"cuda,arch=sm_90a", "cuda,arch=sm_80"};
  for (int a = 0; a < 2; a++) {
    enum { SOURCES = 50 };
    double t_src[SOURCES];
    tilec_compile_options so = {0};
    so.target = archs[a];
    size_t bytes = 0;
    for (int i = 0; i < SOURCES; i++) {
      double t0 = now_ms();
      char *cu = tilec_program_source(prog, &so, 0, &err);
      t_src[i] = now_ms() - t0;
      if (!cu) {
        fprintf(stderr, "%s", err.rendered);
        return 1;
      }
      bytes = strlen(cu);
      tilec_free(cu);
    }
    printf("%-32s %s source (lowering + CUDA C++) %8.3f ms   %zu bytes   (median of %d)\n", path, archs[a] + 5,
           median(t_src, SOURCES), bytes, SOURCES);
  }

  /* compile: cold, warm disk, warm memory */
  enum { COMPILES = 5 };
  double cold[COMPILES], disk[COMPILES], mem[COMPILES];
  tilec_compile_options o = {0};
  o.target = "cpu";
  for (int i = 0; i < COMPILES; i++) {
    o.flags = TILEC_COMPILE_NO_CACHE;
    double t0 = now_ms();
    tilec_kernel *k = tilec_compile(prog, &o, &err);
    cold[i] = now_ms() - t0;
    if (!k) {
      fprintf(stderr, "%s", err.rendered);
      return 1;
    }
    tilec_kernel_destroy(k);
  }
  o.flags = 0;
  tilec_context_options dco = {0};
  dco.cache_dir = cache_dir;
  { /* fill the disk cache once */
    tilec_context *c2 = tilec_context_create(&dco, &err);
    tilec_program *p2 = tilec_program_from_string(c2, path, src, len, &err);
    tilec_kernel *k = tilec_compile(p2, &o, &err);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p2);
    tilec_context_destroy(c2);
  }
  for (int i = 0; i < COMPILES; i++) {
    tilec_context *c2 = tilec_context_create(&dco, &err);
    tilec_program *p2 = tilec_program_from_string(c2, path, src, len, &err);
    double t0 = now_ms();
    tilec_kernel *k = tilec_compile(p2, &o, &err);
    disk[i] = now_ms() - t0;
    if (!k || strcmp(tilec_kernel_cache_status(k), "hit") != 0) {
      fprintf(stderr, "expected a disk hit for %s: %s\n", path, k ? tilec_kernel_cache_status(k) : err.rendered);
      return 1;
    }
    tilec_kernel *k2 = NULL;
    t0 = now_ms();
    k2 = tilec_compile(p2, &o, &err);
    mem[i] = now_ms() - t0;
    tilec_kernel_destroy(k2);
    tilec_kernel_destroy(k);
    tilec_program_destroy(p2);
    tilec_context_destroy(c2);
  }
  printf("%-32s cpu compile: cold %8.2f ms   warm disk hit %7.3f ms   warm memory hit %7.3f ms   (median of %d)\n",
         path, median(cold, COMPILES), median(disk, COMPILES), median(mem, COMPILES), COMPILES);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  free(src);
  return 0;
}

int main(int argc, char **argv) {
  char dir[] = "/tmp/tilec-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  const char *defaults[] = {"examples/gemm.py", "examples/flash_attention.py"};
  int rc = 0;
  if (argc > 1)
    for (int i = 1; i < argc; i++) rc |= bench_file(argv[i], dir);
  else
    for (int i = 0; i < 2; i++) rc |= bench_file(defaults[i], dir);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) rc = 1;
  return rc;
}
