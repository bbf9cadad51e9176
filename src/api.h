/* api.h: internal definitions behind the public objects of tilec.h, shared by api.c (contexts,
 * programs, kernel queries), compile.c (the pipeline, kernel lifetime), compile_cache.c (the
 * cached last stages) and launch.c (argument checks, launches).
 *
 * The files call downward only: compile.c -> api.c, compile_cache.c; api.c -> compile_cache.c
 * (to free a context's caches); the helpers all of them share live below, in src/util/
 * (clock, warnings) and src/target/module.c (compiled modules). */
#ifndef TILEC_API_H
#define TILEC_API_H

#include <pthread.h>

#include "front/front.h"
#include "target/module.h"
#include "target/target.h"
#include "tilec.h"
#include "util/warning.h"

struct tilec_context {
  unsigned flags;
  char *cc;
  char *cache_dir;
  int num_threads;
  tc_backend_env env; /* desc: the cpu's; each compile copies it with its own target's */
  pthread_mutex_t mu; /* guards lazily created members */
  tc_warning_slot warnings;
  struct tc_context_caches *caches; /* disk + memory caches and toolchain ids (compile_cache.c) */
};

struct tilec_program {
  tilec_context *ctx;
  int refs; /* kernels keep their program (and so the source their IR points into) alive */
  pthread_mutex_t mu;
  tc_arena arena;
  tc_source src;
  tc_ast *module;
  tc_kernel_defs defs;
};

typedef struct tc_param_meta {
  tilec_param_info info;
  int64_t *shape;
  const char **dims;
  char dtype_name[32];
  char through_name[32]; /* info.rounds_through */
  int *sym_of_dim; /* per dim: index into ir->syms, or -1 for a fixed size */
  bool reads;      /* the kernel reads its values (tilec_kernel_param_reads) */
} tc_param_meta;

struct tilec_kernel {
  tilec_context *ctx;
  tilec_program *prog;
  tc_arena arena; /* the IR and metadata */
  tc_kernel_ir *ir;
  const tc_target *target;
  tc_backend_env env; /* the context's, with desc = this kernel's target description (cuda: its arch) */
  tc_lowered lowered; /* ir + desc + what the target's passes decided */
  const tc_backend *backend;
  tc_module *module;
  tc_param_meta *params;
  const char *cache_status;
  double compile_ms;
};

/* The compile pipeline (compile.c): evaluate, verify, the target-independent passes, the
 * target's passes (each followed by the verifier), then emit, build, load behind the cache. */
tilec_kernel *tc_compile_kernel(tilec_program *prog, const tilec_compile_options *opts, tilec_error *err);
void tc_program_release(tilec_program *p);
/* Evaluate + the target-independent passes (when `lowered`); the IR lives in `arena`. */
tc_kernel_ir *tc_lower_kernel(tilec_program *prog, const tilec_compile_options *opts, int lowered, tc_arena *arena,
                              tilec_error *err);

#endif
