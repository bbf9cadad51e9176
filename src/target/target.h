/* target.h: the one interface every target's execution backend implements.
 *
 * A target (cpu, cuda, metal) has one or more execution backends (cpu: cc; cuda: nvrtc, nvcc;
 * metal: metal, metallib). A backend turns a lowered kernel into source, builds the source into
 * an artifact, loads the artifact, and launches it. The registry (registry.c) lists every
 * backend and resolves "auto" through an explicit table of defaults, never registration order.
 */
#ifndef TILEC_TARGET_H
#define TILEC_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "tilec.h"

/* Environment a backend works in; owned by the context, read-only while compiling. */
typedef struct tc_backend_env {
  const char *cc;       /* C compiler command for cpu (never NULL) */
  int num_threads;      /* worker threads for cpu launches (>= 1) */
  struct tc_thread_pool *pool; /* shared by cpu launches of one context (may be NULL: serial) */
  /* Per compile (a kernel keeps its own copy of the context's environment): */
  char arch[32];   /* cuda: the GPU arch the kernel is built for ("sm_90a"), set by configure */
  bool build_only; /* the artifact is built but never loaded (`tilec compile`): cuda needs no GPU */
} tc_backend_env;

/* What generation produces. Strings are malloc'd; tc_generated_free releases them. */
typedef struct tc_generated {
  char *kernel_source; /* the kernel alone, as `tilec source --kernel-only` prints it */
  char *full_source;   /* the whole translation unit the backend builds */
  char *meta;          /* cuda: "key=value" lines for the runtime (target/cuda/cuda.h); or NULL */
} tc_generated;
void tc_generated_free(tc_generated *g);

/* Launch arguments, already checked against the kernel's parameters by the caller. */
typedef struct tc_launch_args {
  void *const *data;       /* per parameter: tensor data pointer (byte offset applied), or NULL for scalars */
  const int64_t *scalars;  /* per parameter: scalar value (ints; floats bit-cast in fval) */
  const double *fscalars;  /* per parameter: float scalar value */
  const int64_t *syms;     /* values of the kernel's symbolic dims, in tc_kernel_ir.syms order */
  int nparams, nsyms;
  int device;              /* device ordinal of the tensors (cuda) */
  void *stream;            /* cuda: the CUstream to launch on; NULL: the default stream, and the
                              launch waits for the kernel to finish */
  bool async;              /* return once the kernel is enqueued (tilec_kernel_launch_stream) */
  int64_t grid[3];         /* the kernel's grid with symbolic dims and scalars bound (1 past
                              grid_ndim), when grid_known: for backends that launch it as is */
  bool grid_known;
} tc_launch_args;

typedef struct tc_loaded tc_loaded; /* a backend's loaded module (opaque) */

enum {
  TC_BACKEND_IN_MEMORY = 1u << 0 /* the compiled kernel lives only in process memory: no artifact
                                    bytes exist, so the disk cache must skip this backend */
};

typedef struct tc_backend {
  const char *target;  /* "cpu", "cuda", "metal" */
  const char *name;    /* "cc", "nvrtc", "nvcc", "metal", "metallib" */
  unsigned flags;      /* TC_BACKEND_* */
  const char *description;
  /* Whether it can run here; when not, a one-line reason ("nvcc not found on PATH"). */
  bool (*available)(const tc_backend_env *env, char *why, size_t cap);
  /* Identity of the toolchain for the cache key: compiler path and version, GPU arch, ...
   * malloc'd; NULL with err on failure. */
  char *(*toolchain_id)(const tc_backend_env *env, tilec_error *err);
  /* Per-compile setup of `env` from the target string's options ("arch=sm_90a" of
   * "cuda,arch=sm_90a"; "" when none): cuda resolves its GPU arch here, before the cache key
   * is made. NULL: the backend takes no options. */
  tilec_status (*configure)(tc_backend_env *env, const char *options, tilec_error *err);
  /* Lowered IR -> source. */
  tilec_status (*generate)(const tc_backend_env *env, const tc_kernel_ir *k, tc_generated *out, tilec_error *err);
  /* Source -> artifact bytes (malloc'd). In-memory backends build and load in one step in
   * `load` and leave this NULL. */
  tilec_status (*build)(const tc_backend_env *env, const tc_generated *src, void **artifact,
                        size_t *artifact_size, tilec_error *err);
  /* Artifact (or, for in-memory backends, the source) -> loaded module. */
  tilec_status (*load)(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                       const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err);
  tilec_status (*launch)(const tc_backend_env *env, tc_loaded *mod, const tc_launch_args *args,
                         tilec_error *err);
  void (*unload)(tc_loaded *mod);
  /* The part of an artifact a user keeps (`tilec compile -o`): cuda's cubin inside its
   * container. NULL: the artifact itself. */
  const void *(*payload)(const void *artifact, size_t size, size_t *payload_size);
} tc_backend;

/* ---- registry (registry.c) ---- */
size_t tc_backend_count(void);
const tc_backend *tc_backend_at(size_t i);
/* The documented default backend of each target, from the explicit table. */
const char *tc_target_default_backend(const char *target);
/* Resolve (target, backend) where either may be NULL or "auto". target "auto" picks cpu.
 * Unknown or unavailable backends are errors that name the available ones. */
const tc_backend *tc_backend_resolve(const tc_backend_env *env, const char *target,
                                     const char *backend, tilec_error *err);

/* Text table of every backend with its availability here (for `tilec backends`); malloc'd. */
char *tc_backends_report(const tc_backend_env *env);

#endif
