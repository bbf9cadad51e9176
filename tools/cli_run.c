/* cli_run.c: `tilec run`: allocate every tensor parameter, fill inputs from a seeded generator
 * (never zeros) or from .npy files, launch, and optionally verify against the reference,
 * benchmark, save and report as JSON. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "dtype/dtype.h"
#include "npy.h"
#include "target/target.h"
#include "verify/compare.h"

typedef struct host_tensor {
  DLTensor t;
  int64_t shape[16];
  tc_dtype dt;
  size_t numel, nbytes;
  void *initial; /* copy of the inputs, for the reference run */
  DLTensor dev;  /* cuda and metal kernels: the device copy the kernel runs on (dev.data NULL:
                    none; metal: an id<MTLBuffer>) */
} host_tensor;

/* cuda, metal: copy every tensor to (to_device) or from the device; 0 or an exit code. */
static int sync_device(cli_gpu *g, cli_mtl *mtl, host_tensor *ts, size_t np, int to_device) {
  char why[1024];
  for (size_t i = 0; (g || mtl) && i < np; i++) {
    if (!ts[i].dev.data) continue;
    int r = mtl ? cli_mtl_copy(mtl, ts[i].dev.data, ts[i].t.data, ts[i].nbytes, to_device, why, sizeof why)
                : cli_gpu_copy(g, to_device ? ts[i].dev.data : ts[i].t.data, to_device ? ts[i].t.data : ts[i].dev.data,
                               ts[i].nbytes, to_device, why, sizeof why);
    if (r != 0) {
      cli_error("%s", why);
      return CLI_EXIT_TARGET;
    }
  }
  return 0;
}

/* The kernel compiled for the cpu backend with the same bindings: the reference a cuda run is
 * verified against. */
static tilec_kernel *cpu_reference_kernel(const cli_options *o, tilec_program *prog, tilec_error *err) {
  tilec_compile_options co;
  cli_compile_options(o, &co);
  co.target = "cpu";
  co.backend = NULL;
  return tilec_compile(prog, &co, err);
}

/* A second opinion when a non-cpu target fails its check against the reference: the other of
 * the two independent references (the cpu backend for an emulated target, checked against the
 * interpreter; the interpreter for a device, checked against the cpu backend), run on the same
 * inputs (`pristine`) and compared with the reference's results (`after`). 1: it matches them
 * on every output, so the target is the odd one out; 0: it does not; -1: it could not run. */
static int second_opinion_agrees(const cli_options *o, tilec_program *prog, const tilec_kernel *k, tilec_kernel *ref_k,
                                 const host_tensor *ts, const host_tensor *after, void *const *pristine, size_t np) {
  tilec_error err = {0};
  tilec_kernel *cpu = ref_k ? NULL : cpu_reference_kernel(o, prog, &err);
  DLTensor *t = calloc(np ? np : 1, sizeof *t);
  DLTensor **a = calloc(np ? np : 1, sizeof *a);
  int agrees = -1;
  if ((cpu || ref_k) && t && a) {
    for (size_t i = 0; i < np; i++) t[i] = ts[i].t, t[i].data = pristine[i], a[i] = &t[i];
    tilec_status st = ref_k ? tilec_kernel_run_reference(ref_k, a, np, &err) : tilec_kernel_launch(cpu, a, np, &err);
    if (st == TILEC_OK) {
      agrees = 1;
      for (size_t i = 0; i < np && agrees == 1; i++) {
        tilec_param_info pi;
        tilec_kernel_param(k, i, &pi);
        if (!pi.is_output) continue;
        tc_dtype through = tc_dt(TC_DT_INVALID);
        if (pi.rounds_through) tc_dtype_lookup(pi.rounds_through, &through, NULL, 0);
        tilec_compare c;
        if (!tc_compare_buffers_unordered(ts[i].dt, through, false, pristine[i], after[i].t.data, ts[i].t.ndim, ts[i].shape,
                                          pi.unordered_dims, &c))
          agrees = -1;
        else if (!c.ok)
          agrees = 0;
      }
    }
  }
  tilec_kernel_destroy(cpu);
  free(t);
  free(a);
  return agrees;
}

/* What a failed check most likely means, said once after the error. Random inputs put a kernel
 * that reads an integer tensor (indices, bounds) outside what it assumes, and a kernel whose
 * result depends on its inputs' range (a chaotic recurrence, a convergence) far from the
 * reference through rounding alone: the two references then disagree with each other too. A
 * target that differs where the two references agree is tilec's fault, and the note says so
 * rather than blaming the inputs. */
static void verify_failure_note(const cli_options *o, const tilec_kernel *k, const host_tensor *ts, const tilec_compare *cmp,
                                size_t np, int references_agree) {
  const char *index_input = NULL, *bad = NULL, *far = NULL;
  double cosine = 1, far_cosine = 1;
  for (size_t i = 0; i < np; i++) {
    tilec_param_info pi;
    tilec_kernel_param(k, i, &pi);
    if (!pi.is_output && pi.ndim > 0 && !tc_dtype_is_float(ts[i].dt) && !index_input) index_input = pi.name;
    if (pi.is_output && !cmp[i].ok && !bad) bad = pi.name, cosine = cmp[i].cosine;
    if (pi.is_output && !cmp[i].ok && !far && tc_dtype_is_float(ts[i].dt) && cmp[i].cosine < 0.99)
      far = pi.name, far_cosine = cmp[i].cosine;
  }
  if (!bad) return;
  const char *target = tilec_kernel_target(k), *backend = tilec_kernel_backend(k);
  bool on_cpu = strcmp(target, "cpu") == 0;
  if (!on_cpu && references_agree == 1) {
    fprintf(stderr,
            "tilec: note: '%s' on %s/%s differs from the reference (cosine %.3f), and the cpu backend and tilec's "
            "reference interpreter agree with each other on the same inputs: that is a bug in tilec's %s code, not in the "
            "kernel or its inputs; please report it with this kernel and command ('tilec source FILE --target %s' shows "
            "the generated code)\n",
            bad, target, backend, cosine, target, target);
    if (index_input && !o->load_dir)
      fprintf(stderr, "tilec: note: unless the integer tensor '%s' must hold valid indices or bounds, which random inputs "
                      "do not: then give such with --load DIR (DIR/NAME.npy for each) and run again\n", index_input);
    return;
  }
  if (o->load_dir) return;
  if (index_input) {
    fprintf(stderr,
            "tilec: note: the kernel reads the integer tensor '%s', which random inputs fill with values it may not "
            "expect as indices or bounds; give valid ones with --load DIR (DIR/NAME.npy for each)\n", index_input);
    return;
  }
  if (far && (on_cpu || references_agree == 0))
    fprintf(stderr,
            "tilec: note: '%s' is far from the reference (cosine %.3f), not just rounding apart%s; a kernel whose result "
            "depends on its inputs' range (positive values, normalized rows, an iteration that converges) needs such "
            "inputs: give them with --load DIR (DIR/NAME.npy for each)\n",
            far, far_cosine, on_cpu ? "" : ", and the cpu backend and tilec's reference interpreter differ as much");
}

static const char emulator_timing_note[] =
    "timed on the emulator, on this machine's CPU: these figures say nothing about the GPU's speed";

/* Target options the backend that runs the kernel does not act on: the metal emulator's tensors
 * are host memory, so storage_mode (the device's buffer placement) changes nothing there. */
static void note_ignored_target_options(const cli_options *o, const tilec_kernel *k) {
  tc_target_spec spec;
  tilec_error err = {0};
  if (strcmp(tilec_kernel_target(k), "metal") != 0 || strcmp(tilec_kernel_backend(k), "emu") != 0 ||
      !tc_target_spec_parse(o->target, &spec, &err))
    return;
  for (int i = 0; i < spec.nopts; i++)
    if (strcmp(spec.opts[i].key, "storage_mode") == 0)
      cli_note("storage_mode=%s is ignored on the metal emulator (backend emu), whose tensors are host memory; it "
               "applies to the Metal device (--backend metal)",
               spec.opts[i].value);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Seeded values that are never zero: floats in +-[1/64, 1), integers in +-[1, 8]. */
static void fill_random(host_tensor *h, const char *name, unsigned long long seed) {
  cli_fill_random(h->dt, h->t.data, h->numel, name, seed);
}

void cli_fill_random(tc_dtype dt, void *data, size_t numel, const char *name, unsigned long long seed) {
  uint64_t s = seed * 0x2545f4914f6cdd1dull ^ hash_name(name);
  for (size_t i = 0; i < numel; i++) {
    uint64_t r = splitmix(&s);
    double v;
    if (tc_dtype_is_float(dt)) {
      double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
      v = 1.0 / 64 + u * (1 - 1.0 / 64);
      if (r & 1) v = -v;
      if (dt.code == TC_DT_FLOAT8_E8M0FNU) v = fabs(v) * 4; /* exponent-only: positive */
    } else if (tc_dtype_is_bool(dt)) {
      v = (double)(r & 1);
    } else if (tc_dtype_is_signed(dt)) {
      v = (double)(1 + (int)((r >> 8) % 8));
      if (r & 1) v = -v;
    } else {
      v = (double)(1 + (int)((r >> 8) % 8));
    }
    tc_dtype_store_f64(dt, data, i, v);
  }
}

/* numpy descr of a dtype: its own for numpy types, raw bits for the others. */
static const char *npy_descr(tc_dtype dt) {
  switch (dt.code) {
  case TC_DT_FLOAT16: return "<f2";
  case TC_DT_FLOAT32: return "<f4";
  case TC_DT_FLOAT64: return "<f8";
  case TC_DT_INT8: return "|i1";
  case TC_DT_INT16: return "<i2";
  case TC_DT_INT32: return "<i4";
  case TC_DT_INT64: return "<i8";
  case TC_DT_UINT8: return "|u1";
  case TC_DT_UINT16: return "<u2";
  case TC_DT_UINT32: return "<u4";
  case TC_DT_UINT64: return "<u8";
  case TC_DT_BOOL: return "|b1";
  case TC_DT_BFLOAT16: return "<u2";
  default: return "|u1"; /* fp8 as uint8 bits; 4-bit types packed two per byte */
  }
}

static int packed4(tc_dtype dt) { return tc_dtype_bits(dt) == 4; }

/* A shape as numpy prints it: (3, 4), (5,), (). */
static void shape_text(const int64_t *shape, int ndim, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "(");
  for (int d = 0; d < ndim && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (n < cap) snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
}

static int load_npy(host_tensor *h, const char *dir, const char *name, int *loaded) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  struct stat st;
  *loaded = 0;
  if (stat(path, &st) != 0) return 0; /* not there: keep the generated values */
  npy_array a;
  char msg[512];
  if (npy_read(path, &a, msg, sizeof msg) != 0) {
    cli_error("%s", msg);
    return CLI_EXIT_USAGE;
  }
  int ok = strcmp(a.descr, npy_descr(h->dt)) == 0 && a.nbytes == h->nbytes;
  if (ok && !packed4(h->dt)) {
    ok = a.ndim == h->t.ndim;
    for (int d = 0; ok && d < a.ndim; d++) ok = a.shape[d] == h->shape[d];
  }
  if (!ok) {
    char dn[32], got[200], want[200];
    int64_t packed_shape[1] = {(int64_t)h->nbytes}; /* 4-bit types are saved as their packed bytes */
    shape_text(a.shape, a.ndim, got, sizeof got);
    shape_text(packed4(h->dt) ? packed_shape : h->shape, packed4(h->dt) ? 1 : h->t.ndim, want, sizeof want);
    cli_error("%s: the file holds dtype '%s' and shape %s, but parameter '%s' needs dtype '%s' (%s) and shape %s", path,
              a.descr, got, name, npy_descr(h->dt), tc_dtype_name(h->dt, dn, sizeof dn), want);
    npy_free(&a);
    return CLI_EXIT_USAGE;
  }
  memcpy(h->t.data, a.data, h->nbytes);
  npy_free(&a);
  *loaded = 1;
  return 0;
}

static int save_npy(const host_tensor *h, const char *dir, const char *name) {
  char path[4096], msg[512];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  int64_t packed_shape[1] = {(int64_t)h->nbytes};
  int rc = packed4(h->dt) ? npy_write(path, npy_descr(h->dt), 1, packed_shape, h->t.data, h->nbytes, msg, sizeof msg)
                          : npy_write(path, npy_descr(h->dt), h->t.ndim, h->shape, h->t.data, h->nbytes, msg, sizeof msg);
  if (rc != 0) cli_error("%s", msg);
  return rc;
}

static const char *define_value(const cli_options *o, const char *name) {
  for (int i = 0; i < o->ndefines; i++)
    if (strcmp(o->defines[i].name, name) == 0) return o->defines[i].value;
  return NULL;
}

/* The value -D gives a symbolic size, or -1 when it gives none (or not a size). */
static int64_t defined_size(const cli_options *o, const char *name) {
  const char *v = define_value(o, name);
  char *end = NULL;
  long long n = v ? strtoll(v, &end, 0) : -1;
  return v && *v && !*end && n >= 0 ? (int64_t)n : -1;
}

/* The kernel's symbolic sizes as -D gives them (-1 where it does not), malloc'd; NULL after
 * saying so when out of memory. */
static int64_t *defined_sizes(const cli_options *o, const tilec_kernel *k, size_t *nsyms) {
  *nsyms = tilec_kernel_num_syms(k);
  int64_t *sizes = malloc((*nsyms ? *nsyms : 1) * sizeof *sizes);
  if (!sizes) {
    cli_error("out of memory");
    return NULL;
  }
  for (size_t s = 0; s < *nsyms; s++) sizes[s] = defined_size(o, tilec_kernel_sym_name(k, s));
  return sizes;
}

bool cli_param_shape(const cli_options *o, const tilec_kernel *k, size_t i, const tilec_param_info *pi, int64_t *shape) {
  size_t nsyms;
  int64_t *sizes = defined_sizes(o, k, &nsyms);
  if (!sizes) return false;
  /* A plain symbolic dimension first, with the message that names it. */
  bool ok = true;
  for (int d = 0; d < pi->ndim && ok; d++)
    if (pi->shape[d] < 0 && pi->dims[d] && strcmp(pi->dims[d], "?") != 0 && defined_size(o, pi->dims[d]) < 0) {
      cli_error("dimension %d of '%s' is symbolic ('%s'); give its size with -D %s=N", d, pi->name,
              pi->dims[d], pi->dims[d]);
      ok = false;
    }
  tilec_error err = {0};
  int missing = -1;
  if (ok && tilec_kernel_param_shape(k, i, sizes, nsyms, shape, &missing, &err) != TILEC_OK) {
    if (missing >= 0) /* a dimension computed from sizes, one of which no -D gives */
      cli_error("%s; give its size with -D %s=N", err.message, tilec_kernel_sym_name(k, (size_t)missing));
    else
      cli_error("%s", err.message);
    ok = false;
  }
  free(sizes);
  return ok;
}

/* The grid for the -D sizes within the target's limits, before any tensor is allocated: a
 * grid CUDA cannot launch is refused at once, not after gigabytes of inputs are made. */
static bool cli_check_sizes(const cli_options *o, const tilec_kernel *k) {
  size_t nsyms;
  int64_t *sizes = defined_sizes(o, k, &nsyms);
  if (!sizes) return false;
  tilec_error err = {0};
  bool ok = tilec_kernel_check_sizes(k, sizes, nsyms, &err) == TILEC_OK;
  if (!ok) cli_error("%s", err.message);
  free(sizes);
  return ok;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void cli_json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

void cli_print_unordered(unsigned mask, int json) {
  if (!json && !mask) return;
  int n = 0;
  for (int d = 0; d < 32; d++) n += (mask >> d) & 1;
  printf("%s", json ? "[" : n > 1 ? "compared as multisets along dimensions " : "compared as multisets along dimension ");
  for (int d = 0, k = 0; d < 32; d++)
    if ((mask >> d) & 1) printf("%s%d", k++ ? ", " : "", d);
  if (json) printf("]");
}

void cli_json_number(double v) {
  if (isfinite(v)) printf("%.9g", v);
  else printf("null");
}

int cli_run(const cli_options *o) {
  tilec_error err = {0};
  int rc = 0;
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  tilec_program *prog = NULL;
  tilec_kernel *k = NULL;
  host_tensor *ts = NULL;
  DLTensor **args = NULL, **ref_args = NULL;
  size_t np = 0;
  tilec_compare *cmp = NULL;
  double *times = NULL;
  int nruns = 0;
  cli_gpu *gpu = NULL;
  cli_mtl *mtl = NULL; /* metal kernels on a device (not the emulator) */
  tilec_kernel *ref_k = NULL;
  void **pristine = NULL;    /* non-cpu targets: the inputs before the reference ran */
  int references_agree = -1; /* on a failed check of a non-cpu target: second_opinion_agrees */
  cli_watchdog *watchdog = cli_watchdog_start(o->timeout);
  char where[160] = "";

  prog = tilec_program_from_file(ctx, o->file, &err);
  if (!prog) goto report;
  tilec_compile_options co;
  cli_compile_options(o, &co);
  k = tilec_compile(prog, &co, &err);
  if (!k) goto report;
  cli_print_warning(ctx);
  snprintf(where, sizeof where, "on %s/%s", tilec_kernel_target(k), tilec_kernel_backend(k));
  note_ignored_target_options(o, k);
  if (!cli_check_sizes(o, k)) {
    rc = CLI_EXIT_USAGE;
    goto done;
  }
  if (strcmp(tilec_kernel_target(k), "cuda") == 0 && strcmp(tilec_kernel_backend(k), "emu") != 0) {
    char why[512];
    gpu = cli_gpu_open(0, why, sizeof why);
    if (!gpu) {
      cli_error("cannot use the GPU: %s", why);
      rc = CLI_EXIT_TARGET;
      goto done;
    }
  }
  if (strcmp(tilec_kernel_target(k), "metal") == 0 && strcmp(tilec_kernel_backend(k), "emu") != 0) {
    char why[1024];
    int code;
    mtl = cli_mtl_open(o->target, &code, why, sizeof why);
    if (!mtl) {
      cli_error("cannot use the Metal device: %s", why);
      rc = code;
      goto done;
    }
  }
  np = tilec_kernel_num_params(k);
  ts = calloc(np ? np : 1, sizeof *ts);
  args = calloc(np ? np : 1, sizeof *args);
  ref_args = calloc(np ? np : 1, sizeof *ref_args);
  cmp = calloc(np ? np : 1, sizeof *cmp);
  if (!ts || !args || !ref_args || !cmp) goto nomem;

  /* allocate and fill */
  for (size_t i = 0; i < np; i++) {
    tilec_param_info pi;
    tilec_kernel_param(k, i, &pi);
    host_tensor *h = &ts[i];
    if (!tc_dtype_lookup(pi.dtype, &h->dt, NULL, 0)) goto nomem;
    if (!cli_param_shape(o, k, i, &pi, h->shape)) {
      rc = CLI_EXIT_USAGE;
      goto done;
    }
    h->numel = 1;
    for (int d = 0; d < pi.ndim; d++) h->numel *= (size_t)h->shape[d];
    h->nbytes = tc_dtype_storage_bytes(h->dt, h->numel);
    h->t.data = aligned_alloc(64, (h->nbytes + 63) / 64 * 64 + 64);
    if (!h->t.data) goto nomem;
    memset(h->t.data, 0, h->nbytes);
    h->t.device.device_type = kDLCPU;
    h->t.ndim = pi.ndim;
    h->t.shape = h->shape;
    h->t.dtype = pi.dl_dtype;
    if (h->t.dtype.code == 255) h->t.dtype = (DLDataType){kDLUInt, 8, 1};
    fill_random(h, pi.name, o->seed);
    if (o->load_dir) {
      int loaded;
      rc = load_npy(h, o->load_dir, pi.name, &loaded);
      if (rc) goto done;
    }
    args[i] = &h->t;
    if ((gpu || mtl) && pi.ndim > 0) { /* tensors run from device memory; scalars stay on the host */
      char why[1024];
      h->dev = h->t;
      h->dev.device.device_type = mtl ? kDLMetal : kDLCUDA;
      h->dev.device.device_id = 0;
      h->dev.data = mtl ? cli_mtl_alloc(mtl, h->nbytes, why, sizeof why) : cli_gpu_alloc(gpu, h->nbytes, why, sizeof why);
      if (!h->dev.data) {
        cli_error("%s", why);
        rc = CLI_EXIT_TARGET;
        goto done;
      }
      args[i] = &h->dev;
    }
    if (o->verify) {
      h->initial = malloc(h->nbytes ? h->nbytes : 1);
      if (!h->initial) goto nomem;
      memcpy(h->initial, h->t.data, h->nbytes);
    }
  }

  if (o->perturb) {
    int found = 0;
    for (size_t i = 0; i < np; i++) {
      tilec_param_info pi;
      tilec_kernel_param(k, i, &pi);
      found |= pi.is_output && strcmp(pi.name, o->perturb) == 0;
    }
    if (!found || !o->verify) {
      cli_error("--perturb needs --verify and the name of an output of '%s'", tilec_kernel_name(k));
      rc = CLI_EXIT_USAGE;
      goto done;
    }
  }

  /* run */
  /* --timeout covers the first run; the timed runs repeat it on the same inputs. */
  cli_watchdog_arm(watchdog, k, where);
  if ((rc = sync_device(gpu, mtl, ts, np, 1)) != 0) goto done;
  double t0 = now_ms();
  if (tilec_kernel_launch(k, args, np, &err) != TILEC_OK) goto report;
  double first_ms = now_ms() - t0;
  if ((rc = sync_device(gpu, mtl, ts, np, 0)) != 0) goto done;
  cli_watchdog_disarm(watchdog);
  if (o->bench && gpu) {
    int cap = 500;
    times = malloc(sizeof(double) * (size_t)cap);
    if (!times) goto nomem;
    if (cli_gpu_bench(gpu, k, args, np, times, cap, &nruns, &err) != 0) goto report;
    qsort(times, (size_t)nruns, sizeof(double), cmp_double);
  } else if (o->bench && mtl) {
    int cap = 500;
    times = malloc(sizeof(double) * (size_t)cap);
    if (!times) goto nomem;
    if (cli_mtl_bench(mtl, k, args, np, times, cap, &nruns, &err) != 0) goto report;
    qsort(times, (size_t)nruns, sizeof(double), cmp_double);
  } else if (o->bench) {
    for (int w = 0; w < 2; w++)
      if (tilec_kernel_launch(k, args, np, &err) != TILEC_OK) goto report;
    int cap = 200;
    times = malloc(sizeof(double) * (size_t)cap);
    if (!times) goto nomem;
    double start = now_ms();
    while (nruns < cap && (nruns < 5 || now_ms() - start < 500)) {
      double a = now_ms();
      if (tilec_kernel_launch(k, args, np, &err) != TILEC_OK) goto report;
      times[nruns++] = now_ms() - a;
    }
    qsort(times, (size_t)nruns, sizeof(double), cmp_double);
  }

  /* verify: rerun from the initial inputs on the reference, compare the outputs */
  int verify_ok = 1;
  if (o->verify) {
    host_tensor *after = calloc(np ? np : 1, sizeof *after);
    pristine = calloc(np ? np : 1, sizeof *pristine);
    if (!after || !pristine) {
      free(after);
      goto nomem;
    }
    /* The kernel may have run several times under --bench; the comparison needs one run from
     * the initial state, so rerun once if we benchmarked. */
    if (o->bench) {
      for (size_t i = 0; i < np; i++) memcpy(ts[i].t.data, ts[i].initial, ts[i].nbytes);
      cli_watchdog_arm(watchdog, k, where);
      if ((rc = sync_device(gpu, mtl, ts, np, 1)) != 0 || tilec_kernel_launch(k, args, np, &err) != TILEC_OK ||
          (rc = sync_device(gpu, mtl, ts, np, 0)) != 0) {
        free(after);
        if (rc) goto done;
        goto report;
      }
      cli_watchdog_disarm(watchdog);
    }
    /* the inputs as they were, for a second opinion if this check fails */
    for (size_t i = 0; i < np && strcmp(tilec_kernel_target(k), "cpu") != 0; i++) {
      if (!(pristine[i] = malloc(ts[i].nbytes ? ts[i].nbytes : 1))) {
        free(after);
        goto nomem;
      }
      memcpy(pristine[i], ts[i].initial, ts[i].nbytes);
    }
    for (size_t i = 0; i < np; i++) {
      after[i] = ts[i];
      after[i].t.data = ts[i].initial; /* the reference runs in place on the initial copy */
      after[i].t.shape = after[i].shape;
      ref_args[i] = &after[i].t;
    }
    /* cuda and metal are checked against the cpu backend on the same inputs; cpu against the
     * reference interpreter. */
    tilec_status st;
    if (gpu || mtl) {
      ref_k = cpu_reference_kernel(o, prog, &err);
      cli_watchdog_arm(watchdog, ref_k, "on cpu/cc (the reference)");
      st = ref_k ? tilec_kernel_launch(ref_k, ref_args, np, &err) : err.status;
      cli_watchdog_disarm(watchdog);
    } else {
      st = cli_run_reference(o, k, ref_args, np, &err);
    }
    if (st != TILEC_OK) {
      free(after);
      goto report;
    }
    bool fp8_products = false; /* a GPU kernel that reads 8-bit float tensors (compare.h) */
    for (size_t i = 0; i < np && (gpu || mtl); i++) fp8_products |= ts[i].numel > 0 && tc_compare_is_fp8(ts[i].dt);
    for (size_t i = 0; i < np; i++) {
      tilec_param_info pi;
      tilec_kernel_param(k, i, &pi);
      if (!pi.is_output) continue;
      if (o->perturb && strcmp(o->perturb, pi.name) == 0 && ts[i].numel > 0)
        tc_dtype_store_f64(ts[i].dt, ts[i].t.data, 0, tc_dtype_load_f64(ts[i].dt, ts[i].t.data, 0) + 1.0);
      tc_dtype through = tc_dt(TC_DT_INVALID);
      if (pi.rounds_through) tc_dtype_lookup(pi.rounds_through, &through, NULL, 0);
      if (!tc_compare_buffers_unordered(ts[i].dt, through, fp8_products, ts[i].t.data, ts[i].initial, ts[i].t.ndim, ts[i].shape,
                                        pi.unordered_dims, &cmp[i])) {
        cli_error("out of memory comparing '%s'", pi.name);
        cmp[i].ok = 0;
      }
      if (!cmp[i].ok) verify_ok = 0;
    }
    if (!verify_ok && np && pristine[0]) {
      cli_watchdog_arm(watchdog, k, "in the second reference");
      references_agree = second_opinion_agrees(o, prog, k, ref_k, ts, after, pristine, np);
      cli_watchdog_disarm(watchdog);
    }
    free(after);
  }

  if (o->save_dir) {
    mkdir(o->save_dir, 0777);
    for (size_t i = 0; i < np; i++) {
      tilec_param_info pi;
      tilec_kernel_param(k, i, &pi);
      if (save_npy(&ts[i], o->save_dir, pi.name) != 0) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
    }
  }

  /* report */
  double flops = tilec_kernel_flops(k, args, np), bytes = tilec_kernel_bytes(k, args, np);
  bool emulated = strcmp(tilec_kernel_backend(k), "emu") == 0;
  double med = nruns ? times[nruns / 2] : first_ms;
  if (o->measured_ms) { /* tilec tune: the time, no report */
    *o->measured_ms = med;
  } else if (o->json) {
    printf("{\"kernel\": ");
    cli_json_string(tilec_kernel_name(k));
    printf(", \"target\": ");
    cli_json_string(tilec_kernel_target(k));
    printf(", \"backend\": ");
    cli_json_string(tilec_kernel_backend(k));
    printf(", \"cache\": ");
    cli_json_string(tilec_kernel_cache_status(k));
    printf(", \"compile_ms\": ");
    cli_json_number(tilec_kernel_compile_ms(k));
    printf(", \"first_run_ms\": ");
    cli_json_number(first_ms);
    if (mtl) {
      const char *src;
      const char *mode = cli_mtl_storage(mtl, &src);
      printf(", \"storage_mode\": ");
      cli_json_string(mode);
      printf(", \"storage_mode_source\": ");
      cli_json_string(src);
    }
    if (o->bench) {
      printf(", \"run_ms\": {\"median\": ");
      cli_json_number(med);
      printf(", \"min\": ");
      cli_json_number(times[0]);
      printf(", \"max\": ");
      cli_json_number(times[nruns - 1]);
      printf(", \"runs\": %d}", nruns);
      if (flops > 0) printf(", \"gflops\": "), cli_json_number(flops / (med * 1e6));
      if (bytes > 0) printf(", \"gbps\": "), cli_json_number(bytes / (med * 1e6));
      if (emulated) printf(", \"timing_note\": "), cli_json_string(emulator_timing_note);
    }
    if (o->verify) {
      printf(", \"verify\": {\"ok\": %s, \"tensors\": [", verify_ok ? "true" : "false");
      int first = 1;
      for (size_t i = 0; i < np; i++) {
        tilec_param_info pi;
        tilec_kernel_param(k, i, &pi);
        if (!pi.is_output) continue;
        printf("%s{\"name\": ", first ? "" : ", ");
        first = 0;
        cli_json_string(pi.name);
        printf(", \"max_abs_err\": ");
        cli_json_number(cmp[i].max_abs_err);
        printf(", \"max_rel_err\": ");
        cli_json_number(cmp[i].max_rel_err);
        printf(", \"cosine\": ");
        cli_json_number(cmp[i].cosine);
        printf(", \"argmax_match\": %s, \"ok\": %s, \"nan_inf_mismatch\": %lld, \"rounds_through\": ",
               cmp[i].argmax_match ? "true" : "false", cmp[i].ok ? "true" : "false", (long long)cmp[i].nan_mismatch);
        if (pi.rounds_through) cli_json_string(pi.rounds_through);
        else printf("null");
        printf(", \"unordered_dims\": ");
        cli_print_unordered(pi.unordered_dims, 1);
        printf("}");
      }
      printf("]}");
    }
    printf("}\n");
  } else {
    printf("kernel %s on %s/%s (cache %s, compile %.1f ms, first run %.3f ms)\n", tilec_kernel_name(k),
           tilec_kernel_target(k), tilec_kernel_backend(k), tilec_kernel_cache_status(k), tilec_kernel_compile_ms(k),
           first_ms);
    if (mtl) {
      const char *src;
      const char *mode = cli_mtl_storage(mtl, &src);
      printf("metal storage mode %s (%s)\n", mode, src);
    }
    if (o->bench) {
      printf("bench: median %.4f ms, min %.4f ms, max %.4f ms over %d runs", med, times[0], times[nruns - 1], nruns);
      if (gpu) { /* both figures: a GPU kernel is judged against either roof */
        if (flops > 0) printf(", %.2f TFLOP/s", flops / (med * 1e9));
        if (bytes > 0) printf(", %.2f GB/s", bytes / (med * 1e6));
        printf(" (CUDA events, L2 flushed)");
      } else if (mtl) {
        if (flops > 0) printf(", %.2f GFLOP/s", flops / (med * 1e6));
        if (bytes > 0) printf(", %.2f GB/s", bytes / (med * 1e6));
        printf(" (GPU timestamps of the command buffer)");
      } else if (flops > 0) printf(", %.2f GFLOP/s", flops / (med * 1e6));
      else if (bytes > 0) printf(", %.2f GB/s", bytes / (med * 1e6));
      if (emulated) printf(" (%s)", emulator_timing_note);
      printf("\n");
    }
    if (o->verify) {
      for (size_t i = 0; i < np; i++) {
        tilec_param_info pi;
        tilec_kernel_param(k, i, &pi);
        if (!pi.is_output) continue;
        printf("verify %s%s: %s max_abs_err=%.3g max_rel_err=%.3g cosine=%.9f argmax_match=%s", pi.name,
               gpu || mtl ? " (against the cpu backend)" : "", cmp[i].ok ? "ok" : "FAILED", cmp[i].max_abs_err, cmp[i].max_rel_err,
               cmp[i].cosine, cmp[i].argmax_match ? "yes" : "no");
        /* elements NaN or infinite on one side only (an overflow one side rounds into) */
        if (cmp[i].nan_mismatch) printf(" nan_inf_mismatch=%lld", (long long)cmp[i].nan_mismatch);
        printf(" (atol=%.3g rtol=%.3g%s%s", cmp[i].atol, cmp[i].rtol, pi.rounds_through ? "; rounded through " : "",
               pi.rounds_through ? pi.rounds_through : "");
        if (pi.unordered_dims) printf("; ");
        cli_print_unordered(pi.unordered_dims, 0);
        printf(")\n");
      }
    }
  }
  if (o->verify && !verify_ok) {
    cli_error("verification failed: results differ from the reference beyond tolerance");
    verify_failure_note(o, k, ts, cmp, np, references_agree);
    rc = CLI_EXIT_VERIFY;
  }
  goto done;

nomem:
  cli_error("out of memory");
  rc = CLI_EXIT_TARGET;
  goto done;
report:
  rc = cli_report(&err);
done:
  if (ts)
    for (size_t i = 0; i < np; i++) {
      if (mtl) cli_mtl_free(mtl, ts[i].dev.data);
      else cli_gpu_free(gpu, ts[i].dev.data);
      free(ts[i].t.data);
      free(ts[i].initial);
    }
  free(ts);
  if (pristine)
    for (size_t i = 0; i < np; i++) free(pristine[i]);
  free(pristine);
  free(args);
  free(ref_args);
  free(cmp);
  free(times);
  tilec_kernel_destroy(ref_k);
  tilec_kernel_destroy(k);
  cli_gpu_close(gpu);
  cli_mtl_close(mtl);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  cli_watchdog_stop(watchdog);
  return rc;
}
