/* target.h: the two halves of a target, lowering and emission.
 *
 * Lowering: a target (cpu, cuda, metal) is a tc_target: a description of the machine
 * (tc_target_desc: warp width, threads and shared memory per block, matrix instruction
 * shapes, arch), built from the target string's options ("cuda,arch=sm_90a"), and a list of
 * named passes that src/compile.c runs after the target-independent ones, with the verifier
 * after each. A pass may rewrite the IR or record the target's lowering decisions in
 * tc_lowered.state (the cpu plan).
 *
 * Emission and execution: each target has one or more execution backends (cpu: cc; cuda:
 * nvrtc, nvcc; metal: metal, metallib). A backend turns the lowered kernel into source
 * (generate), builds the source into an artifact, loads the artifact, and launches it. The
 * registry (registry.c) lists every target and backend and resolves "auto" through an explicit
 * table of defaults, never registration order. See docs/architecture.md.
 */
#ifndef TILEC_TARGET_H
#define TILEC_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "tilec.h"
#include "util/strbuf.h"

/* One matrix instruction a target has: shape m x n x k with operand and accumulator types. */
typedef struct tc_mma_shape {
  const char *instr;   /* "mma.sync", "wgmma", "simdgroup_matrix" */
  int m, n, k;         /* wgmma: n is the largest; any multiple of 8 up to it is valid */
  const char *ab;      /* operand dtype(s): "float16", "bfloat16", "float8", "int8", "tfloat32", "float64" */
  const char *acc;     /* accumulator dtype */
} tc_mma_shape;

/* What lowering and emission may assume about the machine. */
typedef struct tc_target_desc {
  const char *target;         /* "cpu", "cuda", "metal" */
  char arch[24];              /* "sm_90a"; "native" (cpu: cc -march=native); "apple7" */
  int warp_size;              /* threads that run in lockstep: 32 on cuda and metal; 1 on cpu */
  int max_threads_per_block;  /* cpu: the CPU backend's own limit */
  int64_t smem_per_block;     /* bytes of shared memory one block may use (cuda: the opt-in
                                 maximum); 0 on cpu: shared buffers live in ordinary memory */
  int nmma;
  const tc_mma_shape *mma;    /* static table; nmma entries */
  int storage_mode;           /* metal: the storage_mode option (1 private, 2 shared: the values of
                                 tc_mtl_storage, target/metal/runtime.h); 0 when not given */
  int clusters;               /* cuda: the clusters option (1 on, 2 off); 0 when not given (off) */
  int streamk;                /* cuda: the streamk option (1 on, 2 off); 0 when not given (off) */
  int plant;                  /* cuda, metal: a bug planted in the GPU lowering on purpose (the plant
                                 option, tc_gpu_plant): 0, none, unless a test of the tests asks */
} tc_target_desc;

/* Environment a backend works in. The context owns one (the cpu description in `desc`);
 * every compile works on its own copy whose `desc` is the compile's target, options applied.
 * Read-only while compiling. */
typedef struct tc_backend_env {
  const char *cc;       /* C compiler command for cpu (never NULL) */
  int num_threads;      /* worker threads for cpu launches (>= 1) */
  struct tc_thread_pool *pool; /* shared by cpu launches of one context (may be NULL: serial) */
  tc_target_desc desc;  /* the target compiled for (cuda: desc.arch is the GPU arch built for) */
  bool build_only;      /* the artifact is built but never loaded (`tilec compile`): cuda needs
                           no GPU */
} tc_backend_env;

/* A target string "kind[,key=value]*" split up (tc_target_spec_parse; keys checked against
 * the target by tc_target_describe). */
#define TC_TARGET_MAX_OPTIONS 8
typedef struct tc_target_option {
  char key[32];
  char value[64];
} tc_target_option;
typedef struct tc_target_spec {
  char kind[32]; /* "cpu", "cuda", "metal", or "auto" (also for NULL/empty text) */
  int nopts;
  tc_target_option opts[TC_TARGET_MAX_OPTIONS];
} tc_target_spec;
bool tc_target_spec_parse(const char *text, tc_target_spec *out, tilec_error *err);

/* A kernel being lowered for a target: the IR, the description, and what the target's passes
 * decided (target-owned; allocated in `arena`, which outlives emission). */
typedef struct tc_lowered {
  tc_arena *arena;
  tc_kernel_ir *k;
  const tc_target_desc *desc;
  void *state;
} tc_lowered;

typedef struct tc_target_pass {
  const char *name; /* "cpu-plan" */
  bool (*run)(tc_lowered *lw, tilec_error *err);
} tc_target_pass;

typedef struct tc_target {
  const char *name;                /* "cpu" */
  const char *const *option_keys;  /* the keys its target string accepts */
  int noption_keys;
  /* The description for these options (already checked against option_keys). */
  bool (*describe)(const tc_target_spec *spec, tc_target_desc *out, tilec_error *err);
  const tc_target_pass *passes;    /* run in order by compile.c, each followed by the verifier */
  int npasses;
  /* Appends the passes' decisions (tc_lowered.state) as '#' comment lines, for
   * `tilec ir --lowered --target`; may be NULL. */
  void (*print_state)(tc_strbuf *sb, const tc_lowered *lw);
} tc_target;

/* The target of a spec's kind ("auto" is cpu), or NULL with an error naming the targets;
 * then its description, the options checked against the target's keys. */
const tc_target *tc_target_find(const char *kind, tilec_error *err);
bool tc_target_describe(const tc_target *t, const tc_target_spec *spec, tc_target_desc *out,
                        tilec_error *err);
/* "# target cuda: arch sm_90a, warp 32, ..." lines describing d. */
void tc_target_desc_print(tc_strbuf *sb, const tc_target_desc *d);

/* What generation produces. Strings are malloc'd; tc_generated_free releases them. */
typedef struct tc_generated {
  char *kernel_source; /* the kernel alone, as `tilec source --kernel-only` prints it */
  char *full_source;   /* the whole translation unit the backend builds */
  char *meta;          /* cuda: "key=value" lines for the runtime (target/cuda/cuda.h); or NULL */
  char *explain;       /* the target's decisions report, one per line (`tilec source --explain`:
                          metal's GEMM path per T.gemm and why); or NULL when it reports none */
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
  /* Backends with TC_BACKEND_HANDLE_TENSORS: data[i] is the tensor's handle as given (metal:
   * the id<MTLBuffer>), its byte_offset is offsets[i] and its bytes from there nbytes[i]. */
  const int64_t *offsets;
  const int64_t *nbytes;
  /* T.alloc_global workspaces (tc_kernel_ir.workspaces): their bytes, zeroed before the launch.
   * Backends with host tensors find them allocated at data[nparams + w]; device backends
   * allocate them (data[nparams + w] is NULL there). */
  int nworkspaces;
  const int64_t *ws_bytes;
} tc_launch_args;

typedef struct tc_loaded tc_loaded; /* a backend's loaded module (opaque) */

/* One fact a backend reports about itself here (`tilec backends`): "storage_mode" = "private". */
typedef struct tc_backend_detail {
  char key[32];
  char value[1100];
} tc_backend_detail;
#define TC_BACKEND_MAX_DETAILS 8

enum {
  TC_BACKEND_IN_MEMORY = 1u << 0, /* the compiled kernel lives only in process memory: no artifact
                                    bytes exist, so the disk cache must skip this backend */
  TC_BACKEND_HOST_TENSORS = 1u << 1, /* tensors are host memory whatever the target (metal's
                                       emulator runs the GPU code on the CPU) */
  TC_BACKEND_HANDLE_TENSORS = 1u << 2 /* a tensor's data is an object handle (metal: an
                                         id<MTLBuffer>, as DLPack's kDLMetal has it): the
                                         byte offset travels apart (tc_launch_args.offsets) */
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
  /* Emission: the kernel after its target's passes -> source (and cuda's meta). The arch is
   * lw->desc->arch. */
  tilec_status (*generate)(const tc_lowered *lw, tc_generated *out, tilec_error *err);
  /* Source -> artifact bytes (malloc'd). In-memory backends build and load in one step in
   * `load` and leave this NULL. */
  tilec_status (*build)(const tc_backend_env *env, const tc_generated *src, void **artifact,
                        size_t *artifact_size, tilec_error *err);
  /* Artifact (or, for in-memory backends, the source) -> loaded module. */
  tilec_status (*load)(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                       const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err);
  tilec_status (*launch)(const tc_backend_env *env, tc_loaded *mod, const tc_launch_args *args,
                         tilec_error *err);
  /* Whether a grid (tc_launch_args.grid) fits the device's limits, checked again by launch; lets
   * tilec_kernel_check_sizes refuse before any tensor exists. NULL: no limit. */
  tilec_status (*check_grid)(const tc_loaded *mod, const int64_t grid[3], tilec_error *err);
  void (*unload)(tc_loaded *mod);
  /* The part of an artifact a user keeps (`tilec compile -o`): cuda's cubin inside its
   * container. NULL: the artifact itself. */
  const void *(*payload)(const void *artifact, size_t size, size_t *payload_size);
  /* Waits for the work launches with `async` left on `stream` (metal: commits the queue's open
   * command buffer and waits for it). NULL: launches are finished when they return. */
  tilec_status (*synchronize)(const tc_backend_env *env, void *stream, tilec_error *err);
  /* Facts for `tilec backends` beyond availability (the device, the storage mode in force and
   * where it came from); at most TC_BACKEND_MAX_DETAILS, returns how many. May be NULL. */
  int (*details)(const tc_backend_env *env, tc_backend_detail *out);
  /* Memory on the device its kernels run on, for tilec_device_alloc/_free/_copy (callers with
   * no allocator of their own: the CLI, tilec verify, the Python package). device_type is the
   * DLDeviceType of its tensors. NULL hooks: the backend has no device memory (yet). Copies
   * are synchronous; `direction` is a TILEC_COPY_* value. */
  int device_type;
  void *(*mem_alloc)(int device, size_t bytes, tilec_error *err);
  void (*mem_free)(int device, void *p);
  tilec_status (*mem_copy)(int device, void *dst, const void *src, size_t bytes, int direction, tilec_error *err);
} tc_backend;

/* Host memory as device memory (host_memory.c): the hooks of backends whose tensors live on the host. */
void *tc_host_mem_alloc(int device, size_t bytes, tilec_error *err);
void tc_host_mem_free(int device, void *p);
tilec_status tc_host_mem_copy(int device, void *dst, const void *src, size_t bytes, int direction, tilec_error *err);

/* ---- lowering for a target (compile.c, which runs these as part of its pipeline) ---- */
/* The target's passes over lw->k in order, the verifier after each. */
bool tc_run_target_passes(const tc_target *t, tc_lowered *lw, tilec_error *err);
/* For tests and benchmarks that build IR by hand: the passes of be's target (default options;
 * IR they add and their decisions live in `arena`), then be's emission. */
tilec_status tc_lower_and_emit(const tc_backend *be, tc_arena *arena, tc_kernel_ir *k, tc_generated *out,
                               tilec_error *err);

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
char *tc_backends_report_json(const tc_backend_env *env);

#endif
