/* gpu_source: lower a kernel file for the cuda target and print (or NVRTC-compile) the CUDA
 * C++ it becomes, or check the GPU lowering on the CPU: run the lowered SIMT IR in the
 * reference interpreter beside the original tile IR on the same random inputs and compare
 * every output. Used by tests/e2e/gpu_lower.sh.
 *   gpu_source FILE ARCH [--compile | --interp [--perturb]] [--clusters] [--streamk] [-D name=value ...]
 * --clusters, --streamk: as the cuda target options clusters=on, streamk=on.
 * --perturb changes one element of the lowered run's last tensor before the comparison, so
 * that the check must report FAIL (tests/e2e/gpu_lower.sh holds that it can). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "api.h"
#include "ir/interp.h"
#include "gpu/gpu.h"
#include "target/cuda/codegen.h"

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*logsize_fn)(void *, size_t *);
typedef int (*log_fn)(void *, char *);

static int nvrtc_compile(const char *src, const char *arch) {
  void *lib = dlopen("libnvrtc.so", RTLD_NOW);
  if (!lib) lib = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW);
  if (!lib) {
    printf("SKIP nvrtc not found\n");
    return 0;
  }
  create_fn create = (create_fn)dlsym(lib, "nvrtcCreateProgram");
  compile_fn compile = (compile_fn)dlsym(lib, "nvrtcCompileProgram");
  logsize_fn logsize = (logsize_fn)dlsym(lib, "nvrtcGetProgramLogSize");
  log_fn getlog = (log_fn)dlsym(lib, "nvrtcGetProgramLog");
  void *prog = NULL;
  if (create(&prog, src, "k.cu", 0, NULL, NULL)) return 1;
  char opt[64];
  snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt, "-std=c++17", "--ptxas-options=-v"};
  int r = compile(prog, getenv("TILEC_PTXAS_V") ? 3 : 2, opts);
  size_t n = 0;
  logsize(prog, &n);
  char *log = malloc(n + 1);
  getlog(prog, log);
  if (r || getenv("TILEC_PTXAS_V")) fprintf(stderr, "%s\n", log);
  free(log);
  return r;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double frand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* Run k (original) and the GPU lowering of k on the same inputs in the interpreter. */
static int interp_check(const char *file, tc_kernel_ir *k, const tilec_define *defs, size_t nd, int perturb, bool clusters) {
  int64_t syms[16] = {0};
  for (int s = 0; s < k->nsyms && s < 16; s++) {
    syms[s] = 64;
    for (size_t i = 0; i < nd; i++)
      if (!strcmp(defs[i].name, k->syms[s]->name)) syms[s] = atoll(defs[i].value);
  }
  void *in[64] = {0}, *a[64] = {0}, *b[64] = {0};
  int64_t scal[64] = {0}, numel[64] = {0};
  double fscal[64] = {0};
  for (int i = 0; i < k->nparams && i < 64; i++) {
    tc_param *p = &k->params[i];
    if (!p->buf) {
      scal[i] = 3, fscal[i] = 0.5;
      for (size_t j = 0; j < nd; j++)
        if (!strcmp(defs[j].name, p->name)) scal[i] = atoll(defs[j].value), fscal[i] = atof(defs[j].value);
      continue;
    }
    int64_t n = 1;
    for (int d = 0; d < p->buf->ndim; d++) {
      tc_expr *e = p->buf->shape[d];
      int64_t v = e->op == TC_OP_CONST_INT ? e->ival : 64;
      for (int s = 0; s < k->nsyms; s++)
        if (e->op == TC_OP_VAR && e->var == k->syms[s]) v = syms[s];
      n *= v;
    }
    numel[i] = n;
    size_t bytes = tc_dtype_storage_bytes(p->buf->dtype, (size_t)n) + 16;
    in[i] = calloc(1, bytes), a[i] = calloc(1, bytes), b[i] = calloc(1, bytes);
    for (int64_t j = 0; j < n; j++) {
      double v = tc_dtype_is_float(p->buf->dtype) ? frand() * 4 - 2 : (double)(int)(frand() * 8);
      tc_dtype_store_f64(p->buf->dtype, in[i], (size_t)j, v);
    }
    memcpy(a[i], in[i], bytes), memcpy(b[i], in[i], bytes);
  }
  tilec_error err = {0};
  int rc = 0;
  if (tc_interp_run(k, a, scal, fscal, syms, &err) != TILEC_OK) {
    printf("SKIP %s: the reference fails: %s\n", file, err.message);
    goto out;
  }
  tc_gpu_desc desc;
  tc_arena ar;
  tc_arena_init(&ar);
  extern bool tc_cuda_desc_for_arch(const char *, tc_gpu_desc *);
  tc_cuda_desc_for_arch("sm_90a", &desc);
  desc.clusters = clusters;
  tc_kernel_ir *g = tc_gpu_lower(&ar, k, &desc, NULL, &err);
  if (!g || tc_interp_run(g, b, scal, fscal, syms, &err) != TILEC_OK) {
    printf("FAIL %s: %s\n", file, err.rendered[0] ? err.rendered : err.message);
    tc_arena_free(&ar);
    rc = 1;
    goto out;
  }
  tc_arena_free(&ar);
  for (int i = (k->nparams < 64 ? k->nparams : 64) - 1; perturb && i >= 0; i--) {
    if (!k->params[i].buf || numel[i] == 0) continue;
    tc_dtype dt = k->params[i].buf->dtype;
    double v = tc_dtype_load_f64(dt, b[i], 0);
    tc_dtype_store_f64(dt, b[i], 0, v + 1 + fabs(v)); /* beyond any tolerance */
    break;
  }
  for (int i = 0; i < k->nparams && i < 64; i++) {
    tc_param *p = &k->params[i];
    if (!p->buf) continue;
    tc_dtype dt = p->buf->dtype;
    double rtol = tc_dtype_is_float(dt) ? (tc_dtype_bits(dt) >= 32 ? 1e-4 : 2e-2) : 0, atol = rtol;
    int64_t bad = 0, first = -1;
    for (int64_t j = 0; j < numel[i]; j++) {
      double x = tc_dtype_load_f64(dt, a[i], (size_t)j), y = tc_dtype_load_f64(dt, b[i], (size_t)j);
      if (!(fabs(x - y) <= atol + rtol * fabs(x)) && !(x != x && y != y)) {
        if (first < 0) first = j;
        bad++;
      }
    }
    if (bad) {
      printf("FAIL %s: %s: %lld of %lld elements differ (first at %lld: reference %g, gpu lowering %g)\n", file, p->name,
             (long long)bad, (long long)numel[i], (long long)first, tc_dtype_load_f64(dt, a[i], (size_t)first),
             tc_dtype_load_f64(dt, b[i], (size_t)first));
      rc = 1;
    }
  }
  if (!rc) printf("PASS %s\n", file);
out:
  for (int i = 0; i < 64; i++) free(in[i]), free(a[i]), free(b[i]);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  tilec_define defs[32];
  size_t nd = 0;
  int do_compile = 0, do_interp = 0, perturb = 0, clusters = 0, streamk = 0;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--compile")) do_compile = 1;
    else if (!strcmp(argv[i], "--interp")) do_interp = 1;
    else if (!strcmp(argv[i], "--perturb")) perturb = 1;
    else if (!strcmp(argv[i], "--clusters")) clusters = 1;
    else if (!strcmp(argv[i], "--streamk")) streamk = 1;
    else if (!strcmp(argv[i], "-D") && i + 1 < argc && nd < 32) {
      char *eq = strchr(argv[++i], '=');
      if (!eq) return 2;
      *eq = 0;
      defs[nd].name = argv[i];
      defs[nd].value = eq + 1;
      nd++;
    }
  }
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  tilec_program *prog = ctx ? tilec_program_from_file(ctx, argv[1], &err) : NULL;
  if (!prog) {
    fprintf(stderr, "%s\n", err.rendered[0] ? err.rendered : err.message);
    return 1;
  }
  tilec_compile_options o = {.defines = defs, .num_defines = nd};
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = tc_lower_kernel(prog, &o, 1, &a, &err);
  int rc = 1;
  if (k && do_interp) {
    rc = interp_check(argv[1], k, defs, nd, perturb, clusters);
  } else if (k) {
    tc_generated g = {0};
    char entry[128];
    int64_t smem;
    int block[3];
    if (tc_cuda_generate_for(k, argv[2], (tc_cuda_opts){clusters != 0, streamk != 0}, &g, entry, sizeof entry, &smem, block, &err) == TILEC_OK) {
      rc = do_compile ? nvrtc_compile(g.full_source, argv[2]) : (fputs(g.kernel_source, stdout), 0);
      if (do_compile) printf("%s %s smem=%lld\n", rc ? "FAIL" : "OK", argv[1], (long long)smem);
      tc_generated_free(&g);
    } else {
      fprintf(stderr, "%s\n", err.rendered[0] ? err.rendered : err.message);
    }
  } else {
    fprintf(stderr, "%s\n", err.rendered[0] ? err.rendered : err.message);
  }
  tc_arena_free(&a);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}
