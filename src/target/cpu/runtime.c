/* runtime.c: loading a built cpu kernel (dlopen) and launching it on the thread pool.
 *
 * A launch computes the grid from the symbolic sizes, then runs the linear block ids on the
 * pool; each participant of the launch gets its own block scratch (shared buffers, fragments,
 * per-thread storage), taken on first use from the module's small cache of scratch blocks (or
 * allocated) and given back when the launch ends, so several threads may launch one kernel at
 * once and repeated launches do not pay for fresh pages. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/cpu/cpu_internal.h"
#include "util/pool.h"

typedef int (*run_blocks_fn)(void *const *, const int64_t *, const double *, const int64_t *, int64_t, int64_t, void *);
typedef void (*grid_fn)(const int64_t *, const double *, const int64_t *, int64_t[3]);
typedef int (*run_launch_fn)(void *const *, const int64_t *, const double *, const int64_t *, int64_t, int64_t, void *, int);

#define SCRATCH_CACHE 16

struct tc_loaded {
  void *handle;
  run_blocks_fn run;
  grid_fn grid;
  int64_t scratch_bytes;
  const char *(*assert_message)(int);
  pthread_mutex_t mu; /* guards the scratch cache */
  int ncached;
  void *cached[SCRATCH_CACHE];
  /* a kernel of several launches (tc_kernel_ir.nlaunches) exports these; others do not */
  run_launch_fn run_launch;
  int launches;
};

static void *scratch_get(tc_loaded *m, size_t bytes) {
  void *p = NULL;
  pthread_mutex_lock(&m->mu);
  if (m->ncached > 0) p = m->cached[--m->ncached];
  pthread_mutex_unlock(&m->mu);
  return p ? p : aligned_alloc(64, bytes); /* the kernel zeroes its buffers per block */
}

static void scratch_put(tc_loaded *m, void *p) {
  if (!p) return;
  pthread_mutex_lock(&m->mu);
  if (m->ncached < SCRATCH_CACHE) {
    m->cached[m->ncached++] = p;
    p = NULL;
  }
  pthread_mutex_unlock(&m->mu);
  free(p);
}

tilec_status tc_cpu_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                         const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err) {
  (void)env;
  (void)k;
  (void)src;
  *out = NULL;
  if (!artifact || artifact_size == 0) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cpu load: empty artifact");
    return TILEC_ERROR_INTERNAL;
  }
  const char *t = getenv("TMPDIR");
  if (!t || !*t) t = "/tmp";
  char path[4096];
  snprintf(path, sizeof path, "%s/tilec-kernel-XXXXXX.so", t);
  int fd = mkstemps(path, 3);
  if (fd < 0) {
    tc_error(err, TILEC_ERROR_IO, "cannot create a temporary file for the kernel: %s", strerror(errno));
    return TILEC_ERROR_IO;
  }
  const char *p = artifact;
  size_t left = artifact_size;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      unlink(path);
      tc_error(err, TILEC_ERROR_IO, "cannot write the kernel to %s", path);
      return TILEC_ERROR_IO;
    }
    p += w;
    left -= (size_t)w;
  }
  close(fd);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char *dle = h ? NULL : dlerror();
  unlink(path); /* the mapping stays valid */
  if (!h) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot load the compiled kernel: %s", dle ? dle : "dlopen failed");
    return TILEC_ERROR_TARGET;
  }
  int (*abi)(void) = (int (*)(void))dlsym(h, "tilec_cpu_abi");
  int64_t (*scratch)(void) = (int64_t(*)(void))dlsym(h, "tilec_cpu_scratch_bytes");
  tc_loaded m = {h, (run_blocks_fn)dlsym(h, "tilec_cpu_run_blocks"), (grid_fn)dlsym(h, "tilec_cpu_grid"), 0,
                 (const char *(*)(int))dlsym(h, "tilec_cpu_assert_message"), PTHREAD_MUTEX_INITIALIZER, 0, {0}};
  if (!abi || !scratch || !m.run || !m.grid || !m.assert_message) {
    dlclose(h);
    tc_error(err, TILEC_ERROR_TARGET, "the compiled kernel lacks the tilec cpu entry points");
    return TILEC_ERROR_TARGET;
  }
  if (abi() != TC_CPU_ABI_VERSION) {
    int v = abi();
    dlclose(h);
    tc_error(err, TILEC_ERROR_TARGET, "the compiled kernel has cpu ABI %d, this tilec expects %d", v, TC_CPU_ABI_VERSION);
    return TILEC_ERROR_TARGET;
  }
  m.scratch_bytes = scratch();
  int (*launches)(void) = (int (*)(void))dlsym(h, "tilec_cpu_launches");
  m.run_launch = (run_launch_fn)dlsym(h, "tilec_cpu_run_launch");
  m.launches = launches && m.run_launch ? launches() : 1;
  tc_loaded *r = malloc(sizeof *r);
  if (!r) {
    dlclose(h);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  *r = m;
  pthread_mutex_init(&r->mu, NULL);
  *out = r;
  return TILEC_OK;
}

void tc_cpu_unload(tc_loaded *mod) {
  if (!mod) return;
  for (int i = 0; i < mod->ncached; i++) free(mod->cached[i]);
  pthread_mutex_destroy(&mod->mu);
  dlclose(mod->handle);
  free(mod);
}

typedef struct launch_ctx {
  tc_loaded *mod;
  const tc_launch_args *args;
  void **scratch; /* per slot */
  size_t scratch_bytes;
  _Atomic int rc; /* 0, an assert id, or -1 for out of memory */
  int launch;     /* which launch of a kernel of several */
} launch_ctx;

static void run_range(void *c, int64_t b, int64_t e, int slot) {
  launch_ctx *L = c;
  if (atomic_load_explicit(&L->rc, memory_order_relaxed) != 0) return; /* a block failed: stop */
  if (!L->scratch[slot]) {
    L->scratch[slot] = scratch_get(L->mod, L->scratch_bytes);
    if (!L->scratch[slot]) {
      int z = 0;
      atomic_compare_exchange_strong(&L->rc, &z, -1);
      return;
    }
  }
  int rc = L->mod->launches > 1
               ? L->mod->run_launch(L->args->data, L->args->scalars, L->args->fscalars, L->args->syms, b, e, L->scratch[slot], L->launch)
               : L->mod->run(L->args->data, L->args->scalars, L->args->fscalars, L->args->syms, b, e, L->scratch[slot]);
  if (rc) {
    int z = 0;
    atomic_compare_exchange_strong(&L->rc, &z, rc);
  }
}

tilec_status tc_cpu_launch(const tc_backend_env *env, tc_loaded *mod, const tc_launch_args *args, tilec_error *err) {
  int64_t grid[3];
  mod->grid(args->scalars, args->fscalars, args->syms, grid);
  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0) return TILEC_OK;
  if (grid[0] > INT32_MAX || grid[1] > INT32_MAX || grid[2] > INT32_MAX ||
      grid[0] * grid[1] > INT64_MAX / grid[2]) {
    tc_error(err, TILEC_ERROR_USAGE, "launch grid (%lld, %lld, %lld) is too large", (long long)grid[0],
             (long long)grid[1], (long long)grid[2]);
    return TILEC_ERROR_USAGE;
  }
  int64_t total = grid[0] * grid[1] * grid[2];
  tc_thread_pool *pool = env ? env->pool : NULL;
  int nslots = tc_thread_pool_size(pool);
  launch_ctx L = {mod, args, calloc((size_t)nslots, sizeof(void *)),
                  (size_t)((mod->scratch_bytes + 63) / 64 * 64 + 64)};
  atomic_init(&L.rc, 0);
  if (!L.scratch) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching a kernel");
    return TILEC_ERROR_NOMEM;
  }
  /* small chunks balance the load; larger ones when there are many (small) blocks */
  int64_t grain = total / ((int64_t)nslots * 16);
  if (grain < 1) grain = 1;
  /* the launches one after another: parallel_for returns when every block of one has run */
  for (L.launch = 0; L.launch < mod->launches && atomic_load(&L.rc) == 0; L.launch++)
    tc_thread_pool_parallel_for(pool, 0, total, grain, run_range, &L);
  for (int i = 0; i < nslots; i++) scratch_put(mod, L.scratch[i]);
  free(L.scratch);
  int rc = atomic_load(&L.rc);
  if (rc == -1) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory allocating %zu bytes of block scratch", L.scratch_bytes);
    return TILEC_ERROR_NOMEM;
  }
  if (rc > 0) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel assertion failed: %s", mod->assert_message(rc));
    return TILEC_ERROR_TARGET;
  }
  return TILEC_OK;
}
