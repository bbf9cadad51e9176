/* fiber.c: cooperative threads on small stacks (fiber.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define TC_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_FIBER_ASAN 1
#endif
#endif
#ifdef TC_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#define STACK_BYTES (512 * 1024)
#else
#define STACK_BYTES (128 * 1024)
#endif

bool tc_fiber_stacks_alloc(tc_fiber_stacks *s, int n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), per = STACK_BYTES + page;
  s->per = per;
  s->bytes = per * (size_t)n;
  void *m = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    s->base = NULL;
    return false;
  }
  s->base = m;
  for (int t = 0; t < n; t++) {
    char *base = s->base + per * (size_t)t;
    mprotect(base, page, PROT_NONE); /* guard page: an overflow faults instead of corrupting */
  }
  return true;
}

char *tc_fiber_stack(const tc_fiber_stacks *s, int i) { return s->base + s->per * (size_t)i + (s->per - STACK_BYTES); }

void tc_fiber_stacks_free(tc_fiber_stacks *s) {
  if (s->base) munmap(s->base, s->bytes);
  s->base = NULL;
}

/* apart: getcontext returns twice */
__attribute__((noinline)) void tc_fiber_make(tc_fiber *f, void (*fn)(void)) {
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = f->stack;
  f->ctx.uc_stack.ss_size = STACK_BYTES;
  f->ctx.uc_link = NULL;
  makecontext(&f->ctx, fn, 0);
}

__attribute__((noinline)) void tc_fiber_resume(tc_fiber_sched *s, tc_fiber *f) {
#ifdef TC_FIBER_ASAN
  __sanitizer_start_switch_fiber(&s->fake, f->stack, STACK_BYTES);
#endif
  swapcontext(&s->ctx, &f->ctx);
#ifdef TC_FIBER_ASAN
  __sanitizer_finish_switch_fiber(s->fake, NULL, NULL);
#endif
}

__attribute__((noinline)) void tc_fiber_yield(tc_fiber_sched *s, tc_fiber *f, bool finished) {
#ifdef TC_FIBER_ASAN
  __sanitizer_start_switch_fiber(finished ? NULL : &f->asan_fake, s->bottom, s->size);
#endif
  if (finished) setcontext(&s->ctx); /* never returns */
  swapcontext(&f->ctx, &s->ctx);
#ifdef TC_FIBER_ASAN
  __sanitizer_finish_switch_fiber(f->asan_fake, &s->bottom, &s->size);
#endif
}

void tc_fiber_started(tc_fiber_sched *s) {
#ifdef TC_FIBER_ASAN
  __sanitizer_finish_switch_fiber(NULL, &s->bottom, &s->size);
#else
  (void)s;
#endif
}

int tc_fiber_worker_count(long items) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("TILEC_EMU_THREADS");
  if (env && atoi(env) > 0) ncpu = atoi(env);
  long n = ncpu < 1 ? 1 : ncpu > 8 ? 8 : ncpu;
  if (n > items) n = items;
  return n < 1 ? 1 : (int)n;
}

void tc_fiber_run_workers(int n, void *(*fn)(void *), void *base, size_t stride) {
  pthread_t threads[8];
  int started = 0;
  for (int i = 1; i < n && i <= 8; i++) {
    if (pthread_create(&threads[started], NULL, fn, (char *)base + stride * (size_t)i) != 0) break;
    started++;
  }
  fn(base);
  for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
}
