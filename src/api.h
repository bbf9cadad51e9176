/* api.h: internal definitions behind the public objects of tilec.h, shared by api.c (objects,
 * compile), launch.c (argument checks, launches) and compile.c (the pipeline). */
#ifndef TILEC_API_H
#define TILEC_API_H

#include <pthread.h>

#include "front/front.h"
#include "target/target.h"
#include "tilec.h"

struct tilec_context {
  unsigned flags;
  char *cc;
  char *cache_dir;
  int num_threads;
  tc_backend_env env;
  pthread_mutex_t mu; /* guards warning and lazily created members */
  char *warning;
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
  int *sym_of_dim; /* per dim: index into ir->syms, or -1 for a fixed size */
} tc_param_meta;

/* Generated source and the loaded module of one compiled kernel, shared (reference counted)
 * between the kernels that the in-memory cache hands the same compile to. */
typedef struct tc_module {
  int refs; /* atomic */
  const tc_backend *backend;
  tc_generated gen;
  tc_loaded *mod;
} tc_module;
void tc_module_retain(void *m);
void tc_module_release(void *m);

struct tilec_kernel {
  tilec_context *ctx;
  tilec_program *prog;
  tc_arena arena; /* the IR and metadata */
  tc_kernel_ir *ir;
  const tc_backend *backend;
  tc_backend_env env; /* the context's, with this compile's settings (cuda arch) */
  tc_module *module;
  tc_param_meta *params;
  const char *cache_status;
  double compile_ms;
};

/* The compile pipeline (compile.c): evaluate, run the target-independent passes with the
 * verifier between them, generate, build, load. */
tilec_kernel *tc_compile_kernel(tilec_program *prog, const tilec_compile_options *opts, tilec_error *err);
/* Evaluate + passes only (for `tilec ir`). The IR lives in `arena`. */
tc_kernel_ir *tc_lower_kernel(tilec_program *prog, const tilec_compile_options *opts, int lowered,
                              tc_arena *arena, tilec_error *err);
void tc_context_warn(tilec_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double tc_now_ms(void);

#endif
