/* fiber.h: cooperative threads on small stacks (ucontext), for the emulators that run GPU
 * threads on the CPU (src/target/metal/emu.c, src/target/cuda/emu_run.c).
 *
 * One OS thread runs a scheduler that resumes fibers; a fiber runs until it yields back. Each
 * stack has a guard page below it, so an overflow faults instead of corrupting a neighbour.
 * Under AddressSanitizer every switch is announced to it (its fiber API) and stacks are larger. */
#ifndef TILEC_UTIL_FIBER_H
#define TILEC_UTIL_FIBER_H
#include <stdbool.h>
#include <stddef.h>
#include <ucontext.h>

typedef struct tc_fiber {
  ucontext_t ctx;
  char *stack; /* usable part, above the guard page */
  void *asan_fake;
} tc_fiber;

/* The scheduler's side of the switches (one per OS thread that runs fibers). */
typedef struct tc_fiber_sched {
  ucontext_t ctx;
  const void *bottom;
  size_t size;
  void *fake;
} tc_fiber_sched;

/* Stacks for n fibers, one mapping (reserved lazily). */
typedef struct tc_fiber_stacks {
  char *base;
  size_t bytes, per;
} tc_fiber_stacks;

bool tc_fiber_stacks_alloc(tc_fiber_stacks *s, int n);
/* The usable part of stack i (for tc_fiber.stack). */
char *tc_fiber_stack(const tc_fiber_stacks *s, int i);
void tc_fiber_stacks_free(tc_fiber_stacks *s);
/* A fresh context for f that starts in fn (which must end with tc_fiber_yield(..., true)). */
void tc_fiber_make(tc_fiber *f, void (*fn)(void));
/* Scheduler -> fiber; returns when the fiber yields or finishes. */
void tc_fiber_resume(tc_fiber_sched *s, tc_fiber *f);
/* Fiber -> scheduler; `finished`: the fiber never runs again (does not return). */
void tc_fiber_yield(tc_fiber_sched *s, tc_fiber *f, bool finished);
/* First thing a fiber's function does (completes the switch for ASan). */
void tc_fiber_started(tc_fiber_sched *s);

/* The OS threads an emulator spreads `items` independent groups (threadgroups, clusters) over:
 * the CPUs ($TILEC_EMU_THREADS overrides), at most 8, at most items, at least 1. */
int tc_fiber_worker_count(long items);
/* Runs fn(base + i * stride) for i in [0, n): 0 on the calling thread, the others on threads of
 * their own, and returns when all have. Workers take their groups from a shared counter, so
 * one that cannot be started leaves its share to the others. */
void tc_fiber_run_workers(int n, void *(*fn)(void *), void *base, size_t stride);

#endif
