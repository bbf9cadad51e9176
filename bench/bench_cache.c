/* bench_cache: latency of the kernel cache for an entry of realistic size (a 50 KB shared
 * object plus metadata sections), and for 1 MB:
 *   put        encode + temp file + write + fsync + rename + directory fsync + eviction scan
 *   disk hit   open + read + validate (SHA-256 over the file) + last-use update
 *   raw read   open + read + close of the same file: the cost of loading the artifact at all
 *   mem hit    in-memory cache lookup with a reference count
 * Usage: bench_cache [DIR]   (default: a fresh directory under /tmp). Not a timed test. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"

static tilec_status build_bytes(const tc_backend_env *env, const tc_generated *src, void **a,
                                size_t *n, tilec_error *err) {
  (void)env, (void)src, (void)a, (void)n, (void)err;
  return TILEC_ERROR_INTERNAL;
}
static const tc_backend bench_backend = {.target = "bench", .name = "bytes", .build = build_bytes};

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct stats {
  double median, min, p90;
} stats;

static stats summarize(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return (stats){t[n / 2], t[0], t[n * 9 / 10]};
}

static atomic_int g_refs;
static void retain(void *p) { (void)p, atomic_fetch_add(&g_refs, 1); }
static void release(void *p) { (void)p, atomic_fetch_sub(&g_refs, 1); }

static void bench_size(const char *dir, size_t size) {
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  if (!c || !tc_disk_cache_enabled(c)) {
    printf("cannot open the cache in %s\n", dir);
    exit(1);
  }
  uint8_t *art = malloc(size);
  for (size_t i = 0; i < size; i++) art[i] = (uint8_t)(i * 2654435761u >> 13);
  static char source[20000];
  memset(source, 'x', sizeof source - 1);
  tc_cache_entry e = {.artifact = art, .artifact_size = size, .nsections = 3};
  e.sections[0] = (tc_cache_section){"params", "A:float16[1024,1024] B:float16[1024,1024] C:float32[1024,1024]", 63};
  e.sections[1] = (tc_cache_section){"source", source, sizeof source - 1};
  e.sections[2] = (tc_cache_section){"description", "gemm M=N=K=1024", 15};

  enum { NPUT = 50, NGET = 2000 };
  static double t[NGET];
  tc_cache_key k;
  for (int i = 0; i < NPUT; i++) {
    char name[32];
    snprintf(name, sizeof name, "bench put %d", i);
    tc_cache_key_input in = {.ir_text = name, .target = "bench", .backend = "bytes"};
    tc_cache_key_compute(&in, &k);
    double t0 = now_us();
    tc_disk_cache_put(c, &bench_backend, &k, &e, &err);
    t[i] = now_us() - t0;
  }
  stats put = summarize(t, NPUT);

  tc_cache_entry got;
  for (int i = 0; i < NGET; i++) {
    double t0 = now_us();
    tc_cache_result r = tc_disk_cache_get(c, &bench_backend, &k, &got, NULL, 0);
    t[i] = now_us() - t0;
    if (r != TC_CACHE_HIT) {
      printf("unexpected %s\n", tc_cache_result_name(r));
      exit(1);
    }
    tc_cache_entry_release(&got);
  }
  stats hit = summarize(t, NGET);

  char hex[TC_CACHE_KEY_HEX_SIZE], path[1024];
  tc_cache_key_hex(&k, hex);
  snprintf(path, sizeof path, "%s/%s.tce", dir, hex);
  struct stat st;
  stat(path, &st);
  uint8_t *buf = malloc((size_t)st.st_size);
  for (int i = 0; i < NGET; i++) {
    double t0 = now_us();
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, buf, (size_t)st.st_size);
    close(fd);
    t[i] = now_us() - t0;
    if (n != st.st_size) exit(1);
  }
  stats raw = summarize(t, NGET);
  free(buf);

  tc_mem_cache *m = tc_mem_cache_create(retain, release, 256);
  static int obj;
  for (int i = 0; i < 200; i++) { /* a context with a few hundred kernels */
    char name[32];
    snprintf(name, sizeof name, "mem %d", i);
    tc_cache_key mk;
    tc_cache_key_input in = {.ir_text = name};
    tc_cache_key_compute(&in, &mk);
    tc_mem_cache_insert(m, &mk, &obj);
  }
  tc_mem_cache_insert(m, &k, &obj);
  for (int i = 0; i < NGET; i++) {
    double t0 = now_us();
    void *o = tc_mem_cache_get(m, &k);
    t[i] = now_us() - t0;
    release(o);
  }
  stats mem = summarize(t, NGET);
  tc_mem_cache_destroy(m);

  /* The key itself: hashing a gemm-sized IR text (~4 KB). */
  static char ir[4096];
  memset(ir, 'i', sizeof ir - 1);
  for (int i = 0; i < NGET; i++) {
    tc_cache_key_input in = {.ir_text = ir, .params = "M=1024\nN=1024\nK=1024\n", .target = "cpu",
                             .backend = "cc", .toolchain_id = "cc: gcc (Debian 12.2.0-14) 12.2.0"};
    double t0 = now_us();
    tc_cache_key_compute(&in, &k);
    t[i] = now_us() - t0;
  }
  stats key = summarize(t, NGET);

  printf("entry: %zu-byte artifact + %zu bytes of sections = %lld-byte file\n", size,
         (size_t)(63 + sizeof source - 1 + 15), (long long)st.st_size);
  printf("  put (with fsync)     median %8.1f us   min %8.1f   p90 %8.1f\n", put.median, put.min, put.p90);
  printf("  disk hit             median %8.1f us   min %8.1f   p90 %8.1f\n", hit.median, hit.min, hit.p90);
  printf("  raw read of the file median %8.1f us   min %8.1f   p90 %8.1f\n", raw.median, raw.min, raw.p90);
  printf("  disk hit overhead    median %8.1f us (hit - raw read: validation + last-use update)\n",
         hit.median - raw.median);
  printf("  in-memory hit        median %8.3f us   min %8.3f   p90 %8.3f\n", mem.median, mem.min, mem.p90);
  printf("  key of a 4 KB IR     median %8.1f us\n", key.median);
  size_t removed;
  tc_disk_cache_clear(c, &removed, &err);
  tc_disk_cache_close(c);
  free(art);
}

int main(int argc, char **argv) {
  char dir[256];
  if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
  else {
    snprintf(dir, sizeof dir, "/tmp/tilec-bench-cache-XXXXXX");
    if (!mkdtemp(dir)) return 1;
  }
  unsetenv("TILEC_DISABLE_CACHE");
  unsetenv("TILEC_CACHE_MAX_MB");
  printf("kernel cache in %s\n", dir);
  bench_size(dir, 50 * 1000);
  bench_size(dir, 1000 * 1000);
  if (argc <= 1) rmdir(dir);
  return 0;
}
