/* cpu_internal.h: pieces of the cpu backend shared between its files.
 *   target.c  the cpu description and pass list (the plan is the pass "cpu-plan")
 *   lower.c   the execution plan: which statements run once per block and which per thread,
 *             where thread loops split, how per-thread values are stored
 *   module.c  the translation unit for the plan: scratch layout, block function, entry points
 *   codegen.c the expression printer's cpu hooks and statements; tileops.c tile operations
 *   gemm.c    the register-blocked GEMM micro-kernel source
 *   build.c   running the C compiler; tmpdir.c the directories it runs in
 *   runtime.c dlopen and launching blocks on the pool */
#ifndef TILEC_TARGET_CPU_INTERNAL_H
#define TILEC_TARGET_CPU_INTERNAL_H

#include <stdbool.h>

#include "target/cpu/cpu.h"
#include "util/strbuf.h"

/* ---- the plan (lower.c) ---- */
typedef enum tc_cpu_node_kind {
  TC_CPU_ONCE,    /* one statement run once per block (tile op, or uniform per-thread code) */
  TC_CPU_THREADS, /* a list of per-thread statements run in a loop over the block's threads */
  TC_CPU_LOOP,    /* a serial loop with uniform bounds, or a while with a uniform condition, split around: body is a node list */
  TC_CPU_IF       /* an if with a uniform condition split around */
} tc_cpu_node_kind;

typedef struct tc_cpu_node tc_cpu_node;
typedef struct tc_cpu_nodes {
  int n, cap;
  tc_cpu_node **v;
} tc_cpu_nodes;

struct tc_cpu_node {
  tc_cpu_node_kind kind;
  const tc_stmt *stmt;     /* ONCE: the statement; LOOP: the FOR; IF: the IF */
  tc_stmt_list stmts;      /* THREADS: the statements of this segment */
  int seg;                 /* THREADS: segment id (0..) */
  bool lockstep;           /* THREADS: one store reading its own buffer: all threads compute the
                              value, then all store (as warps do), instead of one after another */
  tc_cpu_nodes body, orelse;
};

/* How a LET variable or a local/var buffer is stored. */
typedef enum tc_cpu_storage {
  TC_CPU_STORE_SHARED = 0, /* one copy for the block: function-scope scalar / one buffer copy */
  TC_CPU_STORE_SEGMENT,    /* scalar private to one thread-loop segment (declared inside it) */
  TC_CPU_STORE_PER_THREAD  /* one copy per thread: array indexed by thread id */
} tc_cpu_storage;

typedef struct tc_cpu_plan {
  const tc_kernel_ir *k;
  int nthreads;            /* threads per block (product of the launch's thread extents) */
  int nids;                /* ids of vars and buffers are < nids */
  tc_cpu_nodes top;
  int nsegs;
  tc_cpu_storage *storage; /* by var/buffer id */
  int *var_seg;            /* by var id: the segment of a SEGMENT var */
  bool *varying;           /* by var/buffer id: differs between threads */
  const tc_var **vars;     /* by id: every LET var (NULL elsewhere) */
  const tc_buffer **bufs;  /* by id: every non-global buffer declared by ALLOC */
} tc_cpu_plan;

bool tc_cpu_plan_build(tc_arena *a, const tc_kernel_ir *k, tc_cpu_plan *plan, tilec_error *err);
/* The store a lockstep THREADS node runs: the statement itself, or the one store of an if. */
const tc_stmt *tc_cpu_lockstep_store(const tc_stmt *s);

/* ---- gemm (gemm.c) ---- */
/* Appends the micro-kernel and the packing helpers (once per translation unit). */
void tc_cpu_emit_gemm_support(tc_strbuf *sb);

/* ---- emission (module.c): needs the plan of the pass "cpu-plan" in lw->state ---- */
tilec_status tc_cpu_generate(const tc_lowered *lw, tc_generated *out, tilec_error *err);

/* ---- build and runtime ---- */
bool tc_cpu_available(const tc_backend_env *env, char *why, size_t cap);
char *tc_cpu_toolchain_id(const tc_backend_env *env, tilec_error *err);
tilec_status tc_cpu_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                          size_t *artifact_size, tilec_error *err);
/* The private directory a build compiles in (tmpdir.c): $TMPDIR/tilec-cc-<pid namespace>-<pid>-XXXXXX,
 * made after removing the ones processes that no longer exist left behind (a build killed with
 * SIGKILL cannot remove its own). False with errno set when none can be made. */
bool tc_cpu_make_build_dir(char *out, size_t cap);
tilec_status tc_cpu_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                         const void *artifact, size_t artifact_size, tc_loaded **out,
                         tilec_error *err);
tilec_status tc_cpu_launch(const tc_backend_env *env, tc_loaded *mod, const tc_launch_args *args,
                           tilec_error *err);
void tc_cpu_unload(tc_loaded *mod);
/* Host memory for tilec_device_* (memory.c). */

#endif
