/* emu_run.c: the cuda emulator's runner (emu_run.h).
 *
 * Workers (OS threads) take clusters from a shared counter; a worker runs the threads of all
 * the blocks of its cluster as fibers and resumes the runnable ones in index order. A thread
 * runs alone until it finishes or waits: at a meeting of its warp, warpgroup, block or cluster
 * (shuffles, ldmatrix, mma and wgmma meet their warp or warpgroup; __syncthreads its block), at
 * a named barrier, or for a condition (an mbarrier phase). So code that reads another thread's
 * write without waiting for it reads what was there before: a missing barrier gives a wrong
 * result instead of passing by luck. Asynchronous copies (TMA) are deferred until no thread of
 * the cluster can go on, the latest moment the hardware could complete them, so reading a stage
 * before its mbarrier says it has landed reads stale data. Resuming in index order shows a read
 * that runs before the write it needs; TILEC_EMU_ORDER=reverse resumes from the last thread,
 * which shows the other half (a write that runs before a read of the old value). When nothing can go on and nothing is
 * deferred, the launch fails with a deadlock report instead of hanging. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/emu/tcg_emu_abi.h"
#include "target/cuda/emu_run.h"
#include "util/cxxlib.h"
#include "util/diag.h"
#include "util/fiber.h"

#define NBARS 16

typedef void (*entry_fn)(void *const *args);

struct tc_cuemu_lib {
  void *handle;
  tc_cuemu_thread **(*current)(void); /* the library's per-OS-thread "current thread" slot */
};

enum { F_READY, F_WAIT_GEN, F_WAIT_POLL, F_DONE, F_DEAD };

typedef struct scope_ctr {
  int live, arrived;
  unsigned gen;
  void (*last)(void *);
  void *ctx;
} scope_ctr;

typedef struct named_bar {
  int arrived, count; /* count 0: every live thread of the block */
  unsigned gen;
} named_bar;

typedef struct cfiber {
  tc_fiber fb;
  tc_cuemu_thread t;
  int state, block;
  const unsigned *gen_ptr; /* F_WAIT_GEN: runnable once *gen_ptr != wait_gen */
  unsigned wait_gen;
  int (*ready)(void *); /* F_WAIT_POLL */
  void *ready_ctx;
  const char *what;
} cfiber;

typedef struct cblock {
  unsigned char *smem;
  void *state;
  char *tstates;
  scope_ctr all, *warp, *wg;
  named_bar bars[NBARS];
} cblock;

typedef struct worker {
  entry_fn entry;
  void *const *args;
  unsigned grid[3], bdim[3], C;
  size_t smem;
  _Atomic long *next;
  long nclusters;
  tc_cuemu_thread **(*lib_current)(void);
  tc_cuemu_thread **current;
  int nthreads, nwarps, nwgs, nfibers;
  cfiber *f;
  tc_fiber_stacks stacks;
  cblock *blocks;
  unsigned char *mem; /* every block's shared memory and states */
  size_t mem_per_block;
  scope_ctr cluster;
  unsigned char *deferred; /* queue of {fn, size, bytes} records */
  size_t ndeferred, capdeferred;
  int cur;
  tc_fiber_sched sched;
  int failed;
  bool reverse; /* TILEC_EMU_ORDER=reverse: resume threads from the last */
  char error[1024];
} worker;

static _Thread_local worker *tls_worker;

static cfiber *me(worker *w) { return &w->f[w->cur]; }

static scope_ctr *scope_of(worker *w, cfiber *f, int scope) {
  cblock *b = &w->blocks[f->block];
  switch (scope) {
  case TC_CUEMU_WARP: return &b->warp[f->t.linear / 32];
  case TC_CUEMU_WARPGROUP: return &b->wg[f->t.linear / 128];
  case TC_CUEMU_BLOCK: return &b->all;
  default: return &w->cluster;
  }
}

static void release(scope_ctr *s) {
  s->arrived = 0;
  if (s->last) {
    void (*fn)(void *) = s->last;
    s->last = NULL;
    fn(s->ctx);
  }
  s->gen++;
}

static void block_on(worker *w, cfiber *f, const unsigned *gen) {
  f->state = F_WAIT_GEN;
  f->gen_ptr = gen;
  f->wait_gen = *gen;
  tc_fiber_yield(&w->sched, &f->fb, false);
}

static void rt_meet(int scope, void (*last)(void *), void *ctx) {
  worker *w = tls_worker;
  cfiber *f = me(w);
  scope_ctr *s = scope_of(w, f, scope);
  if (last) s->last = last, s->ctx = ctx;
  if (++s->arrived >= s->live) {
    release(s);
    return;
  }
  block_on(w, f, &s->gen);
}

static int bar_target(const cblock *b, const named_bar *nb) { return nb->count > 0 ? nb->count : b->all.live; }

static named_bar *arrive_named(worker *w, cfiber *f, int id, int count, bool *released) {
  cblock *b = &w->blocks[f->block];
  *released = false;
  if (id < 0 || id >= NBARS) return NULL;
  named_bar *nb = &b->bars[id];
  if (nb->arrived == 0) nb->count = count;
  if (++nb->arrived >= bar_target(b, nb)) {
    nb->arrived = 0;
    nb->gen++;
    *released = true;
  }
  return nb;
}

static void rt_fail(const char *msg);

static void rt_bar_sync(int id, int count) {
  worker *w = tls_worker;
  cfiber *f = me(w);
  bool released;
  named_bar *nb = arrive_named(w, f, id, count, &released);
  if (!nb) rt_fail("bar.sync: barrier id outside 0..15");
  if (!released) block_on(w, f, &nb->gen);
}

static void rt_bar_arrive(int id, int count) {
  worker *w = tls_worker;
  bool released;
  if (!arrive_named(w, me(w), id, count, &released)) rt_fail("bar.arrive: barrier id outside 0..15");
}

static void rt_wait(int (*ready)(void *), void *ctx, const char *what) {
  if (ready(ctx)) return;
  worker *w = tls_worker;
  cfiber *f = me(w);
  f->state = F_WAIT_POLL;
  f->ready = ready;
  f->ready_ctx = ctx;
  f->what = what;
  tc_fiber_yield(&w->sched, &f->fb, false);
}

typedef struct deferred_head {
  void (*fn)(void *);
  size_t size; /* bytes of argument after the head, rounded up to 16 */
} deferred_head;

static void rt_defer(void (*fn)(void *), const void *arg, unsigned size) {
  worker *w = tls_worker;
  size_t rounded = ((size_t)size + 15) / 16 * 16, need = w->ndeferred + sizeof(deferred_head) + rounded;
  if (need > w->capdeferred) {
    size_t cap = w->capdeferred ? w->capdeferred * 2 : 4096;
    while (cap < need) cap *= 2;
    unsigned char *p = realloc(w->deferred, cap);
    if (!p) rt_fail("out of memory for the emulator's deferred copies");
    w->deferred = p;
    w->capdeferred = cap;
  }
  deferred_head h = {fn, rounded};
  memcpy(w->deferred + w->ndeferred, &h, sizeof h);
  memcpy(w->deferred + w->ndeferred + sizeof h, arg, size);
  w->ndeferred = need;
}

static unsigned char *rt_peer_smem(unsigned rank) {
  worker *w = tls_worker;
  if (rank >= w->C) rt_fail("a cluster address names a block outside the cluster");
  return w->blocks[rank].smem;
}

static void *rt_peer_block(unsigned rank) {
  worker *w = tls_worker;
  if (rank >= w->C) rt_fail("a cluster address names a block outside the cluster");
  return w->blocks[rank].state;
}

static void rt_fail(const char *msg) {
  worker *w = tls_worker;
  cfiber *f = me(w);
  if (!w->failed) {
    snprintf(w->error, sizeof w->error, "block (%u, %u, %u) thread (%u, %u, %u): %s", f->t.bid.x, f->t.bid.y, f->t.bid.z,
             f->t.tid.x, f->t.tid.y, f->t.tid.z, msg);
    w->failed = 1;
  }
  f->state = F_DEAD;
  tc_fiber_yield(&w->sched, &f->fb, false); /* never resumed */
  abort();                                  /* unreachable: the scheduler stops at a failure */
}

static const tc_cuemu_runtime k_runtime = {rt_meet, rt_bar_sync, rt_bar_arrive, rt_wait, rt_defer, rt_peer_smem,
                                           rt_peer_block, rt_fail};

/* A thread that finished no longer counts in its scopes, which may complete them. */
static void leave(worker *w, cfiber *f) {
  cblock *b = &w->blocks[f->block];
  scope_ctr *scopes[4] = {&b->warp[f->t.linear / 32], &b->wg[f->t.linear / 128], &b->all, &w->cluster};
  for (int i = 0; i < 4; i++) {
    scope_ctr *s = scopes[i];
    s->live--;
    if (s->live > 0 && s->arrived >= s->live) release(s);
  }
  for (int i = 0; i < NBARS; i++) {
    named_bar *nb = &b->bars[i];
    if (nb->arrived > 0 && nb->count == 0 && nb->arrived >= b->all.live) {
      nb->arrived = 0;
      nb->gen++;
    }
  }
}

static void fiber_main(void) {
  worker *w = tls_worker;
  cfiber *f = me(w);
  tc_fiber_started(&w->sched);
  w->entry(w->args);
  f->state = F_DONE;
  leave(w, f);
  tc_fiber_yield(&w->sched, &f->fb, true);
}

static bool runnable(cfiber *f) {
  switch (f->state) {
  case F_READY: return true;
  case F_WAIT_GEN: return *f->gen_ptr != f->wait_gen;
  case F_WAIT_POLL: return f->ready(f->ready_ctx) != 0;
  default: return false;
  }
}

static void run_deferred(worker *w) {
  /* the tasks may defer more: take the queue first */
  unsigned char *q = w->deferred;
  size_t n = w->ndeferred;
  w->deferred = NULL;
  w->ndeferred = w->capdeferred = 0;
  for (size_t at = 0; at < n;) {
    deferred_head h;
    memcpy(&h, q + at, sizeof h);
    h.fn(q + at + sizeof h);
    at += sizeof h + h.size;
  }
  free(q);
}

static void deadlock_report(worker *w) {
  int gen = 0, poll = 0, first_poll = -1, first_gen = -1;
  for (int i = 0; i < w->nfibers; i++) {
    if (w->f[i].state == F_WAIT_GEN) gen++, first_gen = first_gen < 0 ? i : first_gen;
    if (w->f[i].state == F_WAIT_POLL) poll++, first_poll = first_poll < 0 ? i : first_poll;
  }
  const cfiber *f = &w->f[first_poll >= 0 ? first_poll : first_gen >= 0 ? first_gen : 0];
  snprintf(w->error, sizeof w->error,
           "deadlock in the cluster of block (%u, %u, %u): %d threads wait at barriers and %d for a condition%s%s%s, "
           "and none can go on (thread (%u, %u, %u) of block (%u, %u, %u) among them)",
           w->f[0].t.bid.x, w->f[0].t.bid.y, w->f[0].t.bid.z, gen, poll, first_poll >= 0 ? " (" : "",
           first_poll >= 0 ? w->f[first_poll].what : "", first_poll >= 0 ? ")" : "", f->t.tid.x, f->t.tid.y,
           f->t.tid.z, f->t.bid.x, f->t.bid.y, f->t.bid.z);
  w->failed = 1;
}

/* Runs cluster k to completion; false with w->error on a failure. */
static bool run_cluster(worker *w, long k) {
  unsigned ncx = w->grid[0] / w->C;
  unsigned cx = (unsigned)(k % ncx), cy = (unsigned)(k / ncx % w->grid[1]), cz = (unsigned)(k / ncx / w->grid[1]);
  w->cluster = (scope_ctr){.live = w->nfibers};
  for (unsigned r = 0; r < w->C; r++) {
    cblock *b = &w->blocks[r];
    memset(b->smem, 0xff, w->smem); /* NaN for floats: reads of what nobody wrote show */
    for (int t = 0; t < w->nthreads; t++) memset(b->tstates + (size_t)t * TC_CUEMU_THREAD_BYTES, 0, TC_CUEMU_THREAD_ZEROED);
    b->all = (scope_ctr){.live = w->nthreads};
    for (int i = 0; i < w->nwarps; i++) b->warp[i] = (scope_ctr){.live = (i + 1) * 32 <= w->nthreads ? 32 : w->nthreads - i * 32};
    for (int i = 0; i < w->nwgs; i++) b->wg[i] = (scope_ctr){.live = (i + 1) * 128 <= w->nthreads ? 128 : w->nthreads - i * 128};
    memset(b->bars, 0, sizeof b->bars);
    for (int t = 0; t < w->nthreads; t++) {
      cfiber *f = &w->f[r * (unsigned)w->nthreads + (unsigned)t];
      tc_cuemu_thread *id = &f->t;
      id->tid = (tc_cuemu_dim3){(unsigned)t % w->bdim[0], (unsigned)t / w->bdim[0] % w->bdim[1],
                                (unsigned)t / w->bdim[0] / w->bdim[1]};
      id->bid = (tc_cuemu_dim3){cx * w->C + r, cy, cz};
      id->bdim = (tc_cuemu_dim3){w->bdim[0], w->bdim[1], w->bdim[2]};
      id->gdim = (tc_cuemu_dim3){w->grid[0], w->grid[1], w->grid[2]};
      id->linear = (unsigned)t;
      id->rank = r;
      id->csize = w->C;
      id->smem = b->smem;
      id->block = b->state;
      id->self = b->tstates + (size_t)t * TC_CUEMU_THREAD_BYTES;
      f->block = (int)r;
      f->state = F_READY;
      tc_fiber_make(&f->fb, fiber_main);
    }
  }
  int live = w->nfibers;
  while (live > 0) {
    bool progress = false;
    for (int n = 0; n < w->nfibers && !w->failed; n++) {
      const int i = w->reverse ? w->nfibers - 1 - n : n;
      cfiber *f = &w->f[i];
      if (!runnable(f)) continue;
      f->state = F_READY;
      w->cur = i;
      *w->current = &f->t;
      tc_fiber_resume(&w->sched, &f->fb);
      if (f->state == F_DONE) live--;
      progress = true;
    }
    *w->current = NULL;
    if (w->failed) return false;
    if (!progress) {
      if (w->ndeferred == 0) {
        deadlock_report(w);
        return false;
      }
      run_deferred(w);
    }
  }
  if (w->ndeferred) run_deferred(w); /* copies nobody waited for still land */
  return true;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  tls_worker = w;
  w->current = w->lib_current();
  for (;;) {
    long k = atomic_fetch_add(w->next, 1);
    if (k >= w->nclusters) break;
    if (!run_cluster(w, k)) {
      atomic_store(w->next, w->nclusters); /* the others stop too */
      break;
    }
  }
  tls_worker = NULL;
  return NULL;
}

static void worker_free(worker *w) {
  tc_fiber_stacks_free(&w->stacks);
  if (w->blocks)
    for (unsigned r = 0; r < w->C; r++) free(w->blocks[r].warp), free(w->blocks[r].wg);
  free(w->blocks);
  free(w->f);
  free(w->mem);
  free(w->deferred);
}

static bool worker_init(worker *w) {
  w->nfibers = (int)w->C * w->nthreads;
  w->nwarps = (w->nthreads + 31) / 32;
  w->nwgs = (w->nthreads + 127) / 128;
  size_t smem = (w->smem + 1023) / 1024 * 1024;
  w->mem_per_block = smem + TC_CUEMU_BLOCK_BYTES + (size_t)w->nthreads * TC_CUEMU_THREAD_BYTES;
  w->f = calloc((size_t)w->nfibers, sizeof *w->f);
  w->blocks = calloc(w->C, sizeof *w->blocks);
  if (!w->f || !w->blocks || posix_memalign((void **)&w->mem, 1024, w->mem_per_block * w->C) != 0) return false;
  for (unsigned r = 0; r < w->C; r++) {
    cblock *b = &w->blocks[r];
    unsigned char *base = w->mem + w->mem_per_block * r;
    b->smem = base; /* 1024-aligned, as the code generator aligns shared buffers */
    b->state = base + smem;
    b->tstates = (char *)base + smem + TC_CUEMU_BLOCK_BYTES;
    b->warp = calloc((size_t)w->nwarps, sizeof *b->warp);
    b->wg = calloc((size_t)w->nwgs, sizeof *b->wg);
    if (!b->warp || !b->wg) return false;
  }
  if (!tc_fiber_stacks_alloc(&w->stacks, w->nfibers)) return false;
  for (int i = 0; i < w->nfibers; i++) w->f[i].fb.stack = tc_fiber_stack(&w->stacks, i);
  return true;
}

tilec_status tc_cuemu_lib_open(const void *so, size_t so_size, tc_cuemu_lib **out, tilec_error *err) {
  *out = NULL;
  void *h = NULL;
  tilec_status st = tc_so_open(so, so_size, "emulated cuda kernel", &h, err);
  if (st != TILEC_OK) return st;
  int (*abi)(void) = (int (*)(void))dlsym(h, "tc_cuemu_abi");
  void (*install)(const tc_cuemu_runtime *) = (void (*)(const tc_cuemu_runtime *))dlsym(h, "tc_cuemu_install");
  tc_cuemu_thread **(*current)(void) = (tc_cuemu_thread * *(*)(void)) dlsym(h, "tc_cuemu_current");
  if (!abi || !install || !current || abi() != TC_CUEMU_ABI) {
    dlclose(h);
    tc_error(err, TILEC_ERROR_TARGET, "the emulated cuda kernel was built for another emulator version");
    return TILEC_ERROR_TARGET;
  }
  install(&k_runtime);
  tc_cuemu_lib *lib = malloc(sizeof *lib);
  if (!lib) {
    dlclose(h);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  lib->handle = h;
  lib->current = current;
  *out = lib;
  return TILEC_OK;
}

void tc_cuemu_lib_close(tc_cuemu_lib *lib) {
  if (!lib) return;
  dlclose(lib->handle);
  free(lib);
}

tilec_status tc_cuemu_run(tc_cuemu_lib *lib, const char *entry, void *const *args, const unsigned grid[3],
                          const unsigned block[3], unsigned cluster, size_t smem, tilec_error *err) {
  char sym[300];
  snprintf(sym, sizeof sym, "tc_cuemu_entry_%s", entry);
  entry_fn fn = (entry_fn)dlsym(lib->handle, sym);
  if (!fn) {
    tc_error(err, TILEC_ERROR_USAGE, "the emulated library has no kernel named '%s'", entry);
    return TILEC_ERROR_USAGE;
  }
  long nthreads = (long)block[0] * block[1] * block[2];
  if (nthreads <= 0 || nthreads > 1024) {
    tc_error(err, TILEC_ERROR_USAGE, "a block of %ld threads (CUDA allows 1 to 1024)", nthreads);
    return TILEC_ERROR_USAGE;
  }
  if (cluster < 1 || cluster > 8 || grid[0] % cluster) {
    tc_error(err, TILEC_ERROR_USAGE, "clusters of %u blocks do not tile a grid %u blocks wide", cluster, grid[0]);
    return TILEC_ERROR_USAGE;
  }
  long nclusters = (long)(grid[0] / cluster) * grid[1] * grid[2];
  if (nclusters <= 0) return TILEC_OK;
  int nworkers = tc_fiber_worker_count(nclusters);
  const char *order = getenv("TILEC_EMU_ORDER");
  bool reverse = order && strcmp(order, "reverse") == 0;
  worker *ws = calloc((size_t)nworkers, sizeof *ws);
  if (!ws) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  _Atomic long next = 0;
  tilec_status st = TILEC_OK;
  for (int i = 0; i < nworkers; i++) {
    worker *w = &ws[i];
    w->entry = fn;
    w->args = args;
    memcpy(w->grid, grid, sizeof w->grid);
    memcpy(w->bdim, block, sizeof w->bdim);
    w->C = cluster;
    w->smem = smem;
    w->next = &next;
    w->nclusters = nclusters;
    w->nthreads = (int)nthreads;
    w->reverse = reverse;
    w->lib_current = lib->current;
    if (!worker_init(w)) {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory for the emulator's threads");
      st = TILEC_ERROR_NOMEM;
      break;
    }
  }
  if (st == TILEC_OK) {
    tc_fiber_run_workers(nworkers, worker_main, ws, sizeof *ws);
    for (int i = 0; i < nworkers; i++)
      if (ws[i].failed) {
        tc_error(err, TILEC_ERROR_TARGET, "cuda emulator: %s", ws[i].error);
        st = TILEC_ERROR_TARGET;
        break;
      }
  }
  for (int i = 0; i < nworkers; i++) worker_free(&ws[i]);
  free(ws);
  return st;
}
