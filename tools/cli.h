/* cli.h: shared pieces of the tilec command-line driver. */
#ifndef TILEC_CLI_H
#define TILEC_CLI_H
#include "dtype/dtype.h"
#include "tilec.h"

enum { CLI_EXIT_PROGRAM = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_VERIFY = 3, CLI_EXIT_TARGET = 4 };
enum { CLI_MAX_DEFINES = 64 };

enum { CLI_MAX_CONFIGS = 256 };

typedef struct cli_options {
  const char *file, *kernel, *target, *backend, *load_dir, *save_dir, *perturb, *output;
  unsigned long long seed;
  int verify, bench, json, kernel_only, lowered, explain, list;
  const char *reference; /* verify: "interp" (default) or "cpu" */
  int ndefines;
  tilec_define defines[CLI_MAX_DEFINES];
  char define_names[CLI_MAX_DEFINES][128];
  char define_values[CLI_MAX_DEFINES][128]; /* values of bindings added from a configuration */
  /* tune */
  int nconfigs, jobs;
  const char *configs[CLI_MAX_CONFIGS]; /* --config "NAME=VALUE ..." */
  double *measured_ms; /* run: measure only (no report): the median time goes here */
  double timeout;      /* run, verify: --timeout SECONDS for each run and the reference; 0: none */
} cli_options;

int cli_exit_code(tilec_status st);
int cli_report(const tilec_error *err); /* prints the diagnostic, returns the exit code */
/* The library's rendered diagnostic on stderr, an unlocated "error: ..." as "tilec: error: ...". */
void cli_print_rendered(const tilec_error *err);
/* "tilec: error: ..." and "tilec: note: ..." lines on stderr. Standard output is flushed first, so
 * where both streams share a pipe, a table comes before the error that sums it up. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --timeout for code that cannot be stopped from inside (the cpu backend's native code, the
 * emulators, a device): a thread that, when an armed run has not finished within `seconds`,
 * prints why (located at the kernel's runtime `while`, when it has one) and ends the process
 * with exit 4. The reference interpreter stops itself (tc_kernel_run_reference_within).
 * cli_watchdog_start returns NULL (and arming it does nothing) when seconds <= 0. */
typedef struct cli_watchdog cli_watchdog;
cli_watchdog *cli_watchdog_start(double seconds);
void cli_watchdog_arm(cli_watchdog *w, const tilec_kernel *k, const char *where); /* where: "on cpu/cc" */
void cli_watchdog_disarm(cli_watchdog *w);
void cli_watchdog_stop(cli_watchdog *w); /* NULL is fine */
/* The reference interpreter's run of k within o->timeout (none when 0). */
tilec_status cli_run_reference(const cli_options *o, tilec_kernel *k, DLTensor *const *args, size_t n,
                               tilec_error *err);
void cli_compile_options(const cli_options *o, tilec_compile_options *co);
void cli_print_warning(tilec_context *ctx);
int cli_run(const cli_options *o);
int cli_backends(const char *target, int json);
int cli_cache(int argc, char **argv);
int cli_compile(const cli_options *o);
int cli_verify(const cli_options *o);
int cli_tune(const cli_options *o);
int cli_fuzz(int argc, char **argv); /* its own options: tilec fuzz --help */
/* A kernel with @autotune whose tuned names the command line leaves unbound gets the
 * configuration `tilec tune` stored for these options, else the first one (a note on stderr
 * says which). Returns 0, or an exit code. */
int cli_apply_autotune(cli_options *o, int quiet);
/* Parameter i's shape (pi->ndim entries) with the kernel's symbolic sizes bound by -D, including
 * dimensions computed from them (seq_len * heads); false (and on stderr the -D that would fix
 * it) when one cannot be sized. */
bool cli_param_shape(const cli_options *o, const tilec_kernel *k, size_t i, const tilec_param_info *pi, int64_t *shape);
/* The values `tilec run` fills a tensor with: seeded, never zero (floats in +-[1/64, 1), integers
 * in +-[1, 8]); the same for every backend given the same name and seed. */
void cli_fill_random(tc_dtype dt, void *data, size_t numel, const char *name, unsigned long long seed);
void cli_json_string(const char *s);
void cli_json_number(double v); /* null when not finite */
/* tilec_param_info.unordered_dims: "[1, 2]" for JSON, else "compared as multisets along
 * dimension 1" (nothing when mask is 0). */
void cli_print_unordered(unsigned mask, int json);

/* cuda device buffers, copies and event timing for `tilec run --target cuda` (cli_cuda.c);
 * failures come back as a message in `why`. */
typedef struct cli_gpu cli_gpu;
cli_gpu *cli_gpu_open(int ordinal, char *why, size_t cap);
void cli_gpu_close(cli_gpu *g); /* NULL is fine */
void *cli_gpu_alloc(cli_gpu *g, size_t bytes, char *why, size_t cap);
void cli_gpu_free(cli_gpu *g, void *p); /* NULLs are fine */
int cli_gpu_copy(cli_gpu *g, void *dst, const void *src, size_t n, int to_device, char *why, size_t cap);
/* Warm-up, then timed runs (L2 flushed before each) until `cap` runs or a second of kernel
 * time with at least 10; times in ms. */
int cli_gpu_bench(cli_gpu *g, tilec_kernel *k, DLTensor *const *args, size_t n, double *times, int cap, int *nruns,
                  tilec_error *err);

/* Metal buffers, copies and GPU-timestamp timing for `tilec run --target metal --backend metal`
 * (cli_metal.c), in the storage mode the target string or the environment gives. */
typedef struct cli_mtl cli_mtl;
cli_mtl *cli_mtl_open(const char *target, int *exit_code, char *why, size_t cap); /* NULL: exit_code, why */
void cli_mtl_close(cli_mtl *m); /* NULL is fine */
const char *cli_mtl_storage(const cli_mtl *m, const char **source);
void *cli_mtl_alloc(cli_mtl *m, size_t bytes, char *why, size_t cap); /* an id<MTLBuffer> */
void cli_mtl_free(cli_mtl *m, void *buffer);                          /* NULLs are fine */
int cli_mtl_copy(cli_mtl *m, void *buffer, void *host, size_t n, int to_device, char *why, size_t cap);
int cli_mtl_bench(cli_mtl *m, tilec_kernel *k, DLTensor *const *args, size_t n, double *times, int cap, int *nruns,
                  tilec_error *err);
#endif
