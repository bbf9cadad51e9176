/* emu.c: the Metal emulator's runner (emu.h).
 *
 * A dispatch runs its threadgroups on a few OS threads (workers), one threadgroup at a time
 * each. Inside a threadgroup every MSL thread is a cooperative thread (a ucontext on its own
 * small stack, with a guard page below it). The worker's scheduler resumes the runnable threads
 * in index order (TILEC_EMU_ORDER=reverse: from the last, which shows a write that runs before
 * another thread's read of the old value); a thread runs until it finishes or reaches a barrier:
 *  - threadgroup_barrier: it waits until every live thread of the threadgroup has arrived;
 *  - a simdgroup operation: its lanes deposit their values in the simdgroup's exchange area and
 *    wait until every live lane of the simdgroup has arrived, read, and meet once more.
 * Between barriers a thread runs alone to its next barrier, so code that relies on another
 * thread's write without a barrier reads a value that is not there yet: a missing barrier
 * gives wrong results instead of passing by luck. A barrier that can never be met (threads
 * waiting at different ones) is reported as a deadlock, never a hang.
 *
 * The fibers are util/fiber.c's; the libraries are built with ASan when tilec is (emu_build.c). */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/metal/emu.h"
#include "target/metal/emu_internal.h"
#include "util/cxxlib.h"
#include "util/diag.h"
#include "util/fiber.h"


typedef void (*entry_fn)(void *const *bindings, const tc_emu_ids *ids);
typedef void (*install_fn)(const tc_emu_runtime *rt);

struct tc_emu_library {
  void *handle;
};

enum { F_READY, F_WAIT_TG, F_WAIT_SG, F_DONE };

typedef struct fiber {
  tc_fiber fb;
  tc_emu_ids ids;
  int state;
  unsigned wait_gen; /* the barrier generation it waits to see pass */
} fiber;

typedef struct simdgroup {
  int live, arrived;
  unsigned gen;
  void *scratch;
} simdgroup;

typedef struct worker {
  /* the dispatch */
  entry_fn entry;
  void *const *bindings;
  uint32_t groups[3], threads[3];
  size_t tg_mem_bytes;
  _Atomic long *next_group;
  long ngroups;
  /* this worker's threadgroup */
  int nthreads, nsg;
  fiber *f;
  tc_fiber_stacks stacks;
  simdgroup *sg;
  void *tg_mem;
  int live, tg_arrived;
  unsigned tg_gen;
  int cur;
  bool reverse; /* TILEC_EMU_ORDER=reverse: resume threads from the last */
  tc_fiber_sched sched;
  /* the first error */
  char error[512];
} worker;

static _Thread_local worker *tls_worker;

/* ---- the collective operations, called from kernel code on a fiber ---- */
static void rt_threadgroup_barrier(void) {
  worker *w = tls_worker;
  fiber *f = &w->f[w->cur];
  if (++w->tg_arrived >= w->live) { /* the last to arrive releases the others */
    w->tg_arrived = 0;
    w->tg_gen++;
    return;
  }
  f->state = F_WAIT_TG;
  f->wait_gen = w->tg_gen;
  tc_fiber_yield(&w->sched, &f->fb, false);
}

static void rt_simdgroup_barrier(void) {
  worker *w = tls_worker;
  fiber *f = &w->f[w->cur];
  simdgroup *s = &w->sg[f->ids.sg];
  if (++s->arrived >= s->live) {
    s->arrived = 0;
    s->gen++;
    return;
  }
  f->state = F_WAIT_SG;
  f->wait_gen = s->gen;
  tc_fiber_yield(&w->sched, &f->fb, false);
}

static void *rt_simd_scratch(void) {
  worker *w = tls_worker;
  return w->sg[w->f[w->cur].ids.sg].scratch;
}

static unsigned rt_simd_lane(void) {
  worker *w = tls_worker;
  return w->f[w->cur].ids.lane;
}

static const tc_emu_runtime k_runtime = {rt_threadgroup_barrier, rt_simdgroup_barrier, rt_simd_scratch, rt_simd_lane};

static void fiber_main(void) {
  worker *w = tls_worker;
  fiber *f = &w->f[w->cur];
  tc_fiber_started(&w->sched);
  w->entry(w->bindings, &f->ids);
  /* finished: the barriers now wait for one thread fewer, which may release them */
  f->state = F_DONE;
  w->live--;
  if (w->live > 0 && w->tg_arrived >= w->live) {
    w->tg_arrived = 0;
    w->tg_gen++;
  }
  simdgroup *s = &w->sg[f->ids.sg];
  s->live--;
  if (s->live > 0 && s->arrived >= s->live) {
    s->arrived = 0;
    s->gen++;
  }
  tc_fiber_yield(&w->sched, &f->fb, true);
}

static bool runnable(const worker *w, const fiber *f) {
  switch (f->state) {
  case F_READY: return true;
  case F_WAIT_TG: return w->tg_gen != f->wait_gen;
  case F_WAIT_SG: return w->sg[f->ids.sg].gen != f->wait_gen;
  default: return false;
  }
}

/* Runs threadgroup `g` (linear index) to completion; false with w->error on a deadlock. */
static bool run_group(worker *w, long g) {
  uint32_t gx = (uint32_t)(g % w->groups[0]), gy = (uint32_t)(g / w->groups[0] % w->groups[1]),
           gz = (uint32_t)(g / w->groups[0] / w->groups[1]);
  w->live = w->nthreads;
  w->tg_arrived = 0;
  for (int s = 0; s < w->nsg; s++) {
    w->sg[s].live = (s + 1) * 32 <= w->nthreads ? 32 : w->nthreads - s * 32;
    w->sg[s].arrived = 0;
  }
  for (int t = 0; t < w->nthreads; t++) {
    fiber *f = &w->f[t];
    tc_emu_ids *id = &f->ids;
    memset(id, 0, sizeof *id);
    id->tid[0] = (unsigned)t % w->threads[0];
    id->tid[1] = (unsigned)t / w->threads[0] % w->threads[1];
    id->tid[2] = (unsigned)t / w->threads[0] / w->threads[1];
    id->tg[0] = gx, id->tg[1] = gy, id->tg[2] = gz;
    for (int d = 0; d < 3; d++) id->ntg[d] = w->groups[d], id->tptg[d] = w->threads[d];
    id->tindex = (unsigned)t;
    id->lane = (unsigned)t % 32;
    id->sg = (unsigned)t / 32;
    id->nsg = (unsigned)w->nsg;
    id->tg_mem = w->tg_mem;
    f->state = F_READY;
    tc_fiber_make(&f->fb, fiber_main);
  }
  while (w->live > 0) {
    bool progress = false;
    for (int n = 0; n < w->nthreads; n++) {
      const int t = w->reverse ? w->nthreads - 1 - n : n;
      fiber *f = &w->f[t];
      if (!runnable(w, f)) continue;
      f->state = F_READY;
      w->cur = t;
      tc_fiber_resume(&w->sched, &f->fb);
      progress = true;
    }
    if (!progress) {
      int at_tg = 0, at_sg = 0;
      for (int t = 0; t < w->nthreads; t++) at_tg += w->f[t].state == F_WAIT_TG, at_sg += w->f[t].state == F_WAIT_SG;
      snprintf(w->error, sizeof w->error,
               "metal emulator: deadlock in threadgroup (%u, %u, %u): %d threads wait at threadgroup_barrier and %d at a "
               "simdgroup operation, and none can go on (barriers in divergent control flow?)",
               gx, gy, gz, at_tg, at_sg);
      return false;
    }
  }
  return true;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  tls_worker = w;
  for (;;) {
    long g = atomic_fetch_add(w->next_group, 1);
    if (g >= w->ngroups) break;
    if (!run_group(w, g)) {
      atomic_store(w->next_group, w->ngroups); /* the others stop too */
      break;
    }
  }
  tls_worker = NULL;
  return NULL;
}

static void worker_free(worker *w) {
  tc_fiber_stacks_free(&w->stacks);
  if (w->sg)
    for (int s = 0; s < w->nsg; s++) free(w->sg[s].scratch);
  free(w->sg);
  free(w->f);
  free(w->tg_mem);
}

static bool worker_init(worker *w, int nthreads, size_t tg_mem_bytes) {
  w->nthreads = nthreads;
  w->nsg = (nthreads + 31) / 32;
  w->f = calloc((size_t)nthreads, sizeof *w->f);
  w->sg = calloc((size_t)w->nsg, sizeof *w->sg);
  if (!w->f || !w->sg) return false;
  for (int s = 0; s < w->nsg; s++)
    if (!(w->sg[s].scratch = calloc(1, TC_EMU_SIMD_SCRATCH))) return false;
  if (tg_mem_bytes) {
    if (!(w->tg_mem = malloc(tg_mem_bytes))) return false;
    memset(w->tg_mem, 0xff, tg_mem_bytes); /* NaN for floats: uninitialised reads show */
  }
  if (!tc_fiber_stacks_alloc(&w->stacks, nthreads)) return false;
  for (int t = 0; t < nthreads; t++) w->f[t].fb.stack = tc_fiber_stack(&w->stacks, t);
  return true;
}

tilec_status tc_emu_library_load(const void *so, size_t so_size, tc_emu_library **out, tilec_error *err) {
  *out = NULL;
  void *h = NULL;
  tilec_status st = tc_so_open(so, so_size, "emulated library", &h, err);
  if (st != TILEC_OK) return st;
  install_fn install = (install_fn)dlsym(h, "tc_emu_install");
  int (*abi)(void) = (int (*)(void))dlsym(h, "tc_emu_abi");
  if (!install || !abi || abi() != TC_EMU_ABI) {
    dlclose(h);
    tc_error(err, TILEC_ERROR_TARGET, "the emulated library was built for another emulator version");
    return TILEC_ERROR_TARGET;
  }
  install(&k_runtime);
  tc_emu_library *lib = malloc(sizeof *lib);
  if (!lib) {
    dlclose(h);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  lib->handle = h;
  *out = lib;
  return TILEC_OK;
}

tilec_status tc_emu_library_build(const char *source, const char *cxx, tc_emu_library **out, char **log,
                                  tilec_error *err) {
  *out = NULL;
  void *so = NULL;
  size_t n = 0;
  tilec_status st = tc_emu_compile(source, cxx, &so, &n, log, err);
  if (st == TILEC_OK) st = tc_emu_library_load(so, n, out, err);
  free(so);
  return st;
}

void tc_emu_library_free(tc_emu_library *lib) {
  if (!lib) return;
  dlclose(lib->handle);
  free(lib);
}

tilec_status tc_emu_dispatch(tc_emu_library *lib, const char *entry, void *const *bindings, int nbindings,
                             const uint32_t groups[3], const uint32_t threads[3], size_t tg_mem_bytes,
                             tilec_error *err) {
  (void)nbindings;
  if (!lib || !entry) {
    tc_error(err, TILEC_ERROR_USAGE, "tc_emu_dispatch: no library or entry");
    return TILEC_ERROR_USAGE;
  }
  char sym[256];
  snprintf(sym, sizeof sym, "tc_emu_entry_%s", entry);
  entry_fn fn = (entry_fn)dlsym(lib->handle, sym);
  if (!fn) {
    tc_error(err, TILEC_ERROR_USAGE, "the library has no kernel named '%s'", entry);
    return TILEC_ERROR_USAGE;
  }
  long nthreads = (long)threads[0] * threads[1] * threads[2];
  long ngroups = (long)groups[0] * groups[1] * groups[2];
  if (nthreads <= 0 || nthreads > 1024) {
    tc_error(err, TILEC_ERROR_USAGE, "a threadgroup of %ld threads (Metal allows 1 to 1024)", nthreads);
    return TILEC_ERROR_USAGE;
  }
  if (ngroups <= 0) return TILEC_OK;
  int nworkers = tc_fiber_worker_count(ngroups);
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
    w->bindings = bindings;
    memcpy(w->groups, groups, sizeof w->groups);
    memcpy(w->threads, threads, sizeof w->threads);
    w->tg_mem_bytes = tg_mem_bytes;
    w->next_group = &next;
    w->ngroups = ngroups;
    w->reverse = reverse;
    if (!worker_init(w, (int)nthreads, tg_mem_bytes)) {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory for the emulator's threads");
      st = TILEC_ERROR_NOMEM;
      break;
    }
  }
  if (st == TILEC_OK) {
    tc_fiber_run_workers(nworkers, worker_main, ws, sizeof *ws);
    for (int i = 0; i < nworkers; i++)
      if (ws[i].error[0]) {
        tc_error(err, TILEC_ERROR_TARGET, "%s", ws[i].error);
        st = TILEC_ERROR_TARGET;
        break;
      }
  }
  for (int i = 0; i < nworkers; i++) worker_free(&ws[i]);
  free(ws);
  return st;
}
