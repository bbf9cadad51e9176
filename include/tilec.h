/* tilec.h: the public interface of tilec, a tile-level kernel compiler for TileLang programs.
 *
 * Flow: create a context, read a program (a TileLang source file), compile one of its kernels
 * for a target with some parameters bound, query and launch the kernel with DLPack tensors.
 *
 * Conventions
 *  - Every fallible function takes a `tilec_error *err` (may be NULL) and reports failure by
 *    its return value (NULL or a status other than TILEC_OK); *err then says what and where.
 *  - The library never prints, never exits, and owns nothing the caller passes in.
 *  - A context may be used from several threads at once; a kernel may be launched from several
 *    threads at once. A program is read-only after it is created.
 *  - Strings returned by query functions live as long as the object they came from, unless the
 *    function says the caller frees them with tilec_free.
 */
#ifndef TILEC_H
#define TILEC_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with -fvisibility=hidden; TILEC_API marks what libtilec.so exports. */
#if defined(__GNUC__) || defined(__clang__)
#define TILEC_API __attribute__((visibility("default")))
#else
#define TILEC_API
#endif

#define TILEC_VERSION_MAJOR 0
#define TILEC_VERSION_MINOR 1
#define TILEC_VERSION_PATCH 0
#define TILEC_VERSION_STRING "0.1.0"

TILEC_API const char *tilec_version(void);

/* Status codes. The CLI's exit codes are the same numbers for the first five. */
typedef enum tilec_status {
  TILEC_OK = 0,
  TILEC_ERROR_PROGRAM = 1,  /* the TileLang program is wrong (has a source location) */
  TILEC_ERROR_USAGE = 2,    /* bad arguments to an API call or option */
  TILEC_ERROR_VERIFY = 3,   /* verification found results out of tolerance */
  TILEC_ERROR_TARGET = 4,   /* target/backend unavailable, toolchain or runtime failure */
  TILEC_ERROR_NOMEM = 5,    /* out of memory */
  TILEC_ERROR_IO = 6,       /* reading or writing a file failed */
  TILEC_ERROR_INTERNAL = 7  /* a bug in tilec: an IR check failed after a pass */
} tilec_status;

/* An error as a value. `rendered` holds the whole diagnostic the way a C compiler prints it:
 *   file:line:col: error: message
 *     source line
 *     ^
 * `file` is empty and line/col are 0 when the error is not about a place in a program. */
typedef struct tilec_error {
  tilec_status status;
  int line, col;
  char file[256];
  char message[1024];
  char rendered[4096];
} tilec_error;

TILEC_API const char *tilec_status_name(tilec_status s);

/* ---- context ------------------------------------------------------------------------------ */
typedef struct tilec_context tilec_context;

enum {
  TILEC_CONTEXT_NO_DISK_CACHE = 1u << 0, /* TILEC_DISABLE_CACHE=1 in the environment sets both */
  TILEC_CONTEXT_NO_MEMORY_CACHE = 1u << 1
};

typedef struct tilec_context_options {
  unsigned flags;
  const char *cache_dir; /* NULL: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec */
  const char *cc;        /* C compiler for the cpu target; NULL: $CC, else "cc" */
  int num_threads;       /* cpu worker threads; 0: all cores */
} tilec_context_options;

TILEC_API tilec_context *tilec_context_create(const tilec_context_options *opts, tilec_error *err);
TILEC_API void tilec_context_destroy(tilec_context *ctx);
/* One warning the context recorded but did not fail on, or NULL: a kernel that reads on-chip
 * memory before anything writes it ("file:line:col: warning: ...", the source line and a
 * caret), "disk cache disabled: ...". The first one is kept until read; reading clears it.
 * The caller frees it with tilec_free. */
TILEC_API char *tilec_context_take_warning(tilec_context *ctx);

/* ---- programs ----------------------------------------------------------------------------- */
typedef struct tilec_program tilec_program;

TILEC_API tilec_program *tilec_program_from_file(tilec_context *ctx, const char *path, tilec_error *err);
/* `name` is used in diagnostics as the file name. The text is copied. */
TILEC_API tilec_program *tilec_program_from_string(tilec_context *ctx, const char *name, const char *text,
                                         size_t len, tilec_error *err);
TILEC_API void tilec_program_destroy(tilec_program *prog);

/* Kernels found in the program: kernel factories, eager @tilelang.jit functions and
 * module-level prim_funcs, by the Python name that defines them. */
TILEC_API size_t tilec_program_num_kernels(const tilec_program *prog);
TILEC_API const char *tilec_program_kernel_name(const tilec_program *prog, size_t i);

/* ---- compiling ---------------------------------------------------------------------------- */
/* The configurations a kernel's @autotune(configs=[...]) lists (kernel NULL: the only one): one
 * line per configuration, "NAME=VALUE NAME=VALUE ...", each a tilec_define as -D writes it; ""
 * when the kernel has no @autotune. NULL with err set on a problem. Free with tilec_free. */
TILEC_API char *tilec_program_autotune_configs(tilec_program *prog, const char *kernel, tilec_error *err);

/* A binding of a factory parameter or T.const name. Values are written as on the command line:
 * ints, floats, True/False, or bare words taken as strings (dtype names: "bfloat16"). */
typedef struct tilec_define {
  const char *name;
  const char *value;
} tilec_define;

enum {
  TILEC_COMPILE_NO_CACHE = 1u << 0 /* neither read nor write any cache for this compile */
};

typedef struct tilec_compile_options {
  const char *kernel;          /* NULL: the program's only kernel */
  const tilec_define *defines; /* bindings, by name */
  size_t num_defines;
  const char *target;          /* "cpu", "cuda", "metal" or "auto", with options:
                                  "cuda,arch=sm_90a" (docs/cli.md); NULL: "auto" */
  const char *backend;         /* execution backend; NULL or "auto": the target's default */
  unsigned flags;
} tilec_compile_options;

/* Evaluate the kernel with its bindings and print its tile IR (after the target-independent
 * passes when `lowered` is nonzero; when opts->target names a target, also after that target's
 * passes, followed by '#' lines with its description, pass list and decisions). The caller
 * frees the text with tilec_free. */
TILEC_API char *tilec_program_ir(tilec_program *prog, const tilec_compile_options *opts, int lowered,
                       tilec_error *err);

/* The code the target's backend generates for the kernel, without building or loading it: no
 * compiler runs. Freed with tilec_free. `kernel_only` holds flags: TILEC_SOURCE_KERNEL_ONLY
 * (1: the kernel alone, without host code) and TILEC_SOURCE_EXPLAIN (2: first the target's
 * decisions report, e.g. metal's GEMM path for each T.gemm and why, as // comment lines). */
#define TILEC_SOURCE_KERNEL_ONLY 1
#define TILEC_SOURCE_EXPLAIN 2
TILEC_API char *tilec_program_source(tilec_program *prog, const tilec_compile_options *opts, int kernel_only,
                           tilec_error *err);

typedef struct tilec_kernel tilec_kernel;

TILEC_API tilec_kernel *tilec_compile(tilec_program *prog, const tilec_compile_options *opts,
                            tilec_error *err);
/* Build the kernel's artifact without loading or running it: the shared object for cpu, the
 * cubin for cuda (NVRTC or nvcc alone: no GPU or driver needed; the arch comes from the target
 * string, "cuda,arch=sm_90a", else as docs/cuda.md says). No cache is read or written. On
 * success *out (freed with tilec_free) holds *out_size bytes. */
TILEC_API tilec_status tilec_compile_artifact(tilec_program *prog, const tilec_compile_options *opts,
                                              void **out, size_t *out_size, tilec_error *err);
TILEC_API void tilec_kernel_destroy(tilec_kernel *k);

/* ---- querying a kernel -------------------------------------------------------------------- */
typedef struct tilec_param_info {
  const char *name;
  const char *dtype;       /* canonical dtype name, e.g. "float16" */
  DLDataType dl_dtype;     /* its DLPack form; code 255 when DLPack has none */
  int ndim;                /* 0 for a scalar parameter */
  const int64_t *shape;    /* ndim entries; -1 where the dimension is symbolic */
  const char *const *dims; /* ndim entries: the symbolic name, or NULL for a fixed size */
  int is_output;           /* written by the kernel */
  /* A float output computed from values the kernel rounds to a narrower float dtype (a
   * float32 result of bfloat16 intermediates): that dtype's name, whose tolerance verification
   * applies (docs/verify.md); NULL otherwise. */
  const char *rounds_through;
  /* An output some of whose dimensions receive values at positions handed out by
   * T.atomic_add(..., return_prev=True) (a list filled by whichever thread comes first): bit d
   * set for each such dimension d < 32. The order along them is the schedule's, so verification
   * compares the values along them as multisets (docs/verify.md); 0 otherwise. */
  unsigned unordered_dims;
} tilec_param_info;

TILEC_API const char *tilec_kernel_name(const tilec_kernel *k);
TILEC_API const char *tilec_kernel_target(const tilec_kernel *k);
TILEC_API const char *tilec_kernel_backend(const tilec_kernel *k);
TILEC_API size_t tilec_kernel_num_params(const tilec_kernel *k);
TILEC_API int tilec_kernel_param(const tilec_kernel *k, size_t i, tilec_param_info *out); /* 0 on success */
/* Whether the kernel reads parameter i's values: 1 for a scalar, and for a tensor it loads from or
 * updates in place (a gemm accumulating into it, an atomic_add, a reduce that does not clear); 0
 * for a tensor it only writes, whose starting contents do not matter (an output the caller may
 * allocate uninitialised); -1 for a bad kernel or index. */
TILEC_API int tilec_kernel_param_reads(const tilec_kernel *k, size_t i);
/* The kernel's symbolic sizes (T.dynamic names, and T.const names no binding fixed), which a
 * launch binds from the tensors' shapes: tilec_kernel_num_syms of them, each by its name
 * (NULL past the end). A parameter dimension is one of them (tilec_param_info.dims names it)
 * or an expression of them, such as seq_len * heads (dims says "?"). */
TILEC_API size_t tilec_kernel_num_syms(const tilec_kernel *k);
TILEC_API const char *tilec_kernel_sym_name(const tilec_kernel *k, size_t i);
/* Parameter `param`'s shape (its tilec_param_info.ndim entries, written to `shape`) when the
 * symbolic sizes have the values `sizes` (nsizes == tilec_kernel_num_syms entries, in that
 * order; -1 for a size not known): fixed dimensions as they are, symbolic ones looked up, and
 * those computed from symbolic sizes (seq_len * heads, T.ceildiv(n, 64)) evaluated as a launch
 * evaluates them and the grid. A dimension that needs an unknown size is a TILEC_ERROR_USAGE,
 * with *missing (when not NULL) set to that size's index; otherwise *missing is -1. So is a
 * dimension that depends on a scalar parameter's value or comes out negative. */
TILEC_API tilec_status tilec_kernel_param_shape(const tilec_kernel *k, size_t param, const int64_t *sizes,
                                                size_t nsizes, int64_t *shape, int *missing, tilec_error *err);
/* Whether a launch with the symbolic sizes `sizes` (as for tilec_kernel_param_shape) fits the
 * kernel's target: its grid, evaluated as a launch evaluates it, within the device's limits
 * (cuda: 2^31 - 1 blocks along x, 65535 along y and z). A caller can so refuse before it
 * allocates the tensors. TILEC_OK also when the grid needs a size given as -1 or a scalar
 * parameter's value, which only the launch knows (and checks). */
TILEC_API tilec_status tilec_kernel_check_sizes(const tilec_kernel *k, const int64_t *sizes, size_t nsizes,
                                                tilec_error *err);
/* The parameters a TileLang caller gets back, in order, as parameter indices: the out_idx of
 * @tilelang.jit / tilelang.compile (negative ones counted from the end), or the tensors an eager
 * @tilelang.jit function returns (its T.empty tensors). Returns how many there are (0: the
 * kernel returns nothing) and writes the first min(that, cap) of them to idx (NULL when cap is 0). */
TILEC_API size_t tilec_kernel_returns(const tilec_kernel *k, size_t *idx, size_t cap);
/* Generated source: the kernel alone, or the whole translation unit with host code. */
TILEC_API const char *tilec_kernel_source(const tilec_kernel *k, int kernel_only);
/* How the kernel was obtained: "miss" (compiled now), "hit" (from a cache) or "off". */
TILEC_API const char *tilec_kernel_cache_status(const tilec_kernel *k);
TILEC_API double tilec_kernel_compile_ms(const tilec_kernel *k);
/* Floating-point operations of one launch for the given dynamic sizes, or 0 when unknown;
 * the byte traffic likewise (both estimates derived from the tile operations). */
TILEC_API double tilec_kernel_flops(const tilec_kernel *k, DLTensor *const *args, size_t nargs);
TILEC_API double tilec_kernel_bytes(const tilec_kernel *k, DLTensor *const *args, size_t nargs);

/* ---- launching ---------------------------------------------------------------------------- */
/* Run the kernel. args[i] is the tensor for parameter i, on the kernel's device. Shapes,
 * dtypes, devices and strides are checked before anything runs; on any mismatch nothing is
 * written. Symbolic dimensions are bound from the tensors and must agree across them.
 * Conventions: tensors are dense row-major (strides NULL or compact); a scalar parameter is a
 * 0-d tensor of its dtype; types DLPack cannot name (the float8 types, float4_e2m1fn, int4,
 * uint4) travel as kDLUInt tensors of their storage (8 bits; 4-bit types packed two per byte,
 * element 2k in the low nibble); bool is kDLUInt 8 where the DLPack header has no kDLBool. */
TILEC_API tilec_status tilec_kernel_launch(tilec_kernel *k, DLTensor *const *args, size_t nargs,
                                 tilec_error *err);
/* CUDA kernels (target "cuda"): tensors are kDLCUDA DLTensors holding device pointers of the
 * caller's (torch, CuPy, cuMemAlloc), all on one device (device.device_id picks it); scalar
 * parameters stay 0-d host tensors (kDLCPU or kDLCUDAHost), passed by value. Host tensors given
 * for a cuda kernel's tensors, or device tensors for a cpu kernel's, are an error: nothing is
 * copied. tilec_kernel_launch runs on the default stream and returns when the kernel has
 * finished (a fault inside it comes back as its error). tilec_kernel_launch_stream enqueues on
 * `cu_stream` (a CUstream; NULL is the default stream) and returns without waiting: launch
 * errors come back, faults surface at the caller's next synchronisation. A non-NULL stream for
 * a kernel of another target is an error. */
TILEC_API tilec_status tilec_kernel_launch_stream(tilec_kernel *k, DLTensor *const *args, size_t nargs,
                                                  void *cu_stream, tilec_error *err);
/* Metal kernels (target "metal", backend metal): tensors are kDLMetal DLTensors whose data is
 * an id<MTLBuffer> (as PyTorch's MPS DLPack export gives it) and byte_offset the offset into
 * it; scalars stay 0-d host tensors. tilec_kernel_launch encodes the dispatch into the open
 * command buffer of tilec's queue (with whatever earlier tilec_kernel_launch_stream calls put
 * there), commits it and waits: a fault comes back as its error. tilec_kernel_launch_stream
 * encodes into the open command buffer of `cu_stream` (an id<MTLCommandQueue>; NULL: tilec's
 * queue) and returns: kernels launched one after another this way are chained dispatches in
 * one command buffer, which runs at the next tilec_kernel_synchronize (or blocking launch). */
/* Waits for what launches with tilec_kernel_launch_stream left on `stream` (the same value):
 * cuda: cuStreamSynchronize; metal: commits the queue's open command buffer and waits, with
 * its errors; cpu, or a backend whose launches always finish: TILEC_OK at once (a non-NULL
 * stream is then an error). */
TILEC_API tilec_status tilec_kernel_synchronize(tilec_kernel *k, void *stream, tilec_error *err);
/* Run the independent reference (a float64 interpreter of the tile IR) on host tensors. */
TILEC_API tilec_status tilec_kernel_run_reference(tilec_kernel *k, DLTensor *const *args, size_t nargs,
                                        tilec_error *err);

/* ---- verification ------------------------------------------------------------------------- */
typedef struct tilec_compare {
  double max_abs_err, max_rel_err, cosine;
  int argmax_match;      /* argmax over the flattened tensor agrees */
  int ok;                /* within the dtype's tolerance */
  double atol, rtol;     /* the tolerance that was applied */
  int64_t nan_mismatch;  /* elements where exactly one side is NaN */
} tilec_compare;

/* Compare a result with a reference of the same shape and dtype (host tensors). */
TILEC_API tilec_status tilec_compare_tensors(const DLTensor *result, const DLTensor *reference,
                                   tilec_compare *out, tilec_error *err);
/* The same, for an output the kernel rounded through a narrower float dtype
 * (tilec_param_info.rounds_through; NULL: none): that dtype's tolerance when it is looser. */
TILEC_API tilec_status tilec_compare_tensors_as(const DLTensor *result, const DLTensor *reference,
                                      const char *rounds_through, tilec_compare *out, tilec_error *err);
/* The same, for an output as its tilec_param_info describes it: rounded through rounds_through
 * (NULL: none), and along the dimensions of unordered_dims compared as multisets (the values
 * of both tensors sorted along those dimensions first; dtypes narrower than a byte are
 * compared as they are). */
TILEC_API tilec_status tilec_compare_output(const DLTensor *result, const DLTensor *reference, const char *rounds_through,
                                            unsigned unordered_dims, tilec_compare *out, tilec_error *err);

/* ---- backends and the kernel cache -------------------------------------------------------- */
/* A table of every execution backend: target, name, whether it is the target's default,
 * whether it is available here and why not. The caller frees it with tilec_free. */
TILEC_API char *tilec_backends_report(tilec_context *ctx);
/* The same, then one line per fact an available backend reports about itself here
 * ("metal/metal storage_mode: private", "metal/metal storage_mode_source: default", the device,
 * the MSL version and why); as one JSON object instead when `json` is nonzero. `target` (may
 * be NULL) is a target string whose options the facts take into account
 * ("metal,storage_mode=shared"); a bad one is an error. Freed with tilec_free. */
TILEC_API char *tilec_backends_report_for(tilec_context *ctx, const char *target, int json, tilec_error *err);
/* `what` is "ls" (one line per entry, most recently used first) or "stats" (totals). The
 * caller frees *out with tilec_free. */
TILEC_API tilec_status tilec_cache_report(tilec_context *ctx, const char *what, char **out, tilec_error *err);
/* The disk cache's directory (made when missing), or NULL with err when the context has none.
 * Free with tilec_free. */
TILEC_API char *tilec_cache_dir(tilec_context *ctx, tilec_error *err);
TILEC_API tilec_status tilec_cache_clear(tilec_context *ctx, size_t *removed, tilec_error *err);

/* Every execution backend, in the order `tilec backends` lists them: tilec_backend_count() of
 * them. tilec_backend_get fills *out for backend i and returns 0, or nonzero when i is past the
 * end. `available` means it can compile and run kernels here (it has a code generator and its
 * probe passed); `reason` says why not, and is empty when it is available. Callers that run a
 * kernel "everywhere" (tilec verify, the Python package) discover backends here, never from a
 * list of their own. */
typedef struct tilec_backend_info {
  const char *target;  /* "cpu", "cuda", "metal" */
  const char *name;    /* "cc", "nvrtc", "nvcc", "metal", "metallib" */
  int is_default;      /* the target's default backend ("auto") */
  int available;
  int device_type;     /* the DLDeviceType its tensors live on (kDLCPU, kDLCUDA, kDLMetal) */
  int has_memory;      /* tilec_device_alloc works for its target through this backend */
  char reason[256];
} tilec_backend_info;
TILEC_API size_t tilec_backend_count(void);
TILEC_API int tilec_backend_get(tilec_context *ctx, size_t i, tilec_backend_info *out);

/* ---- device memory ------------------------------------------------------------------------ */
/* Memory on the device of a target's default backend (`target` as in compile options, options
 * ignored: "cpu", "cuda,arch=sm_90a"; NULL or "auto": cpu), for callers without an allocator of
 * their own. cpu memory is host memory aligned to 64 bytes; cuda memory comes from cuMemAlloc in
 * device `device_id`'s primary context (the one torch and CuPy use). A target whose backend has
 * no device memory yet is a TILEC_ERROR_TARGET. Copies are synchronous: `direction` is one of
 * TILEC_COPY_*, `src`/`dst` host or device pointers accordingly. Zero bytes allocate a valid
 * pointer. tilec_device_free(NULL) does nothing. */
enum { TILEC_COPY_HOST_TO_DEVICE = 0, TILEC_COPY_DEVICE_TO_HOST = 1, TILEC_COPY_DEVICE_TO_DEVICE = 2 };
TILEC_API void *tilec_device_alloc(tilec_context *ctx, const char *target, int device_id, size_t bytes,
                                   tilec_error *err);
TILEC_API void tilec_device_free(tilec_context *ctx, const char *target, int device_id, void *ptr);
TILEC_API tilec_status tilec_device_copy(tilec_context *ctx, const char *target, int device_id, void *dst,
                                         const void *src, size_t bytes, int direction, tilec_error *err);

/* ---- misc --------------------------------------------------------------------------------- */
TILEC_API void tilec_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
