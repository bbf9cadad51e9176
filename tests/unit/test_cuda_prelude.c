/* test_cuda_prelude: the CUDA device prelude (src/target/cuda/prelude/) compiles under NVRTC
 * with no include path for sm_80, sm_89 and sm_90a, as the dtype prelude alone and with every
 * gemm path instantiated (the kernels of tests/gpu/prelude_check.cu); the 128x128x32 f16
 * instance uses no stack; and the SASS holds tensor-core instructions (cuobjdump -sass).
 * NVRTC is loaded with dlopen; without it (or cuobjdump) those tests say so and pass.
 *   test_cuda_prelude --print-prelude   prints the full prelude (make prelude-check uses it) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype/dtype.h"
#include "harness.h"
#include "target/cuda/prelude/cuda_prelude.h"

typedef int (*nvrtc_create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*nvrtc_compile_fn)(void *, int, const char *const *);
typedef int (*nvrtc_size_fn)(void *, size_t *);
typedef int (*nvrtc_get_fn)(void *, char *);
typedef int (*nvrtc_destroy_fn)(void **);
static struct {
  void *lib;
  nvrtc_create_fn create;
  nvrtc_compile_fn compile;
  nvrtc_size_fn log_size, cubin_size;
  nvrtc_get_fn log, cubin;
  nvrtc_destroy_fn destroy;
} nv;

static int nvrtc_load(void) {
  if (nv.lib) return 1;
  /* TILEC_NVRTC first: where tests/run.sh names pip's nvidia-cuda-nvrtc (tools/deps.sh test) */
  const char *env = getenv("TILEC_NVRTC");
  const char *names[] = {env && *env ? env : "/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so",
                         "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !nv.lib; i++) nv.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!nv.lib) return 0;
  nv.create = (nvrtc_create_fn)dlsym(nv.lib, "nvrtcCreateProgram");
  nv.compile = (nvrtc_compile_fn)dlsym(nv.lib, "nvrtcCompileProgram");
  nv.log_size = (nvrtc_size_fn)dlsym(nv.lib, "nvrtcGetProgramLogSize");
  nv.log = (nvrtc_get_fn)dlsym(nv.lib, "nvrtcGetProgramLog");
  nv.cubin_size = (nvrtc_size_fn)dlsym(nv.lib, "nvrtcGetCUBINSize");
  nv.cubin = (nvrtc_get_fn)dlsym(nv.lib, "nvrtcGetCUBIN");
  nv.destroy = (nvrtc_destroy_fn)dlsym(nv.lib, "nvrtcDestroyProgram");
  return nv.create && nv.compile && nv.log_size && nv.log && nv.cubin_size && nv.cubin && nv.destroy;
}

/* one NVRTC compile: rc, log and cubin (malloc'd) */
typedef struct job {
  const char *src, *arch;
  int rc;
  char *log, *cubin;
  size_t cubin_len;
} job;

static void *compile_job(void *p) {
  job *j = p;
  char archopt[64];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", j->arch);
  const char *opts[] = {archopt, "-std=c++17", "--ptxas-options=-v"};
  void *prog = NULL;
  j->rc = nv.create(&prog, j->src, "tilec_prelude.cu", 0, NULL, NULL);
  if (j->rc != 0) return NULL;
  j->rc = nv.compile(prog, 3, opts);
  size_t n = 0;
  nv.log_size(prog, &n);
  j->log = calloc(n + 1, 1);
  if (j->log) nv.log(prog, j->log);
  if (j->rc == 0 && nv.cubin_size(prog, &j->cubin_len) == 0 && (j->cubin = malloc(j->cubin_len + 1)))
    nv.cubin(prog, j->cubin);
  nv.destroy(&prog);
  return NULL;
}

/* Compiles src for every arch in parallel; prints the log of any failure. */
static int compile_all(const char *src, job *jobs, int n) {
  pthread_t th[8];
  for (int i = 0; i < n; i++) {
    jobs[i].src = src;
    pthread_create(&th[i], NULL, compile_job, &jobs[i]);
  }
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  int ok = 1;
  for (int i = 0; i < n; i++)
    if (jobs[i].rc != 0) {
      printf("  NVRTC failed for %s (%d):\n%.4000s\n", jobs[i].arch, jobs[i].rc, jobs[i].log ? jobs[i].log : "");
      ok = 0;
    }
  return ok;
}
static void free_jobs(job *jobs, int n) {
  for (int i = 0; i < n; i++) free(jobs[i].log), free(jobs[i].cubin);
}

static char *concat3(const char *a, const char *b, const char *c) {
  size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
  char *s = malloc(la + lb + lc + 1);
  if (!s) return NULL;
  memcpy(s, a, la), memcpy(s + la, b, lb), memcpy(s + la + lb, c, lc + 1);
  return s;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

TEST(prelude_is_embedded) {
  const char *p = tc_cuda_prelude();
  CHECK(p && strstr(p, "#ifndef TCG_CUDA_PRELUDE") && strstr(p, "TCG_DEV void tcg_gemm_ss(") &&
        strstr(p, "TCG_DEV void tcg_gemm_rs(") && strstr(p, "tcg_swizzle_offset") &&
        strstr(p, "wgmma"));
  /* the embedded text is the files, byte for byte (the Makefile's quoting undone by the C compiler) */
  char *base = read_file("src/target/cuda/prelude/tcg_base.cuh"), *gemm = read_file("src/target/cuda/prelude/tcg_gemm.cuh"),
       *wgmma = read_file("src/target/cuda/prelude/tcg_wgmma.cuh"), *tma = read_file("src/target/cuda/prelude/tcg_tma.cuh");
  if (base && gemm && wgmma && tma) {
    char *three = concat3(base, gemm, wgmma), *all = three ? concat3(three, tma, "") : NULL;
    int same = all && strcmp(all, p) == 0;
    free(three);
    free(all);
    EXPECT(same);
  } else {
    printf("note: prelude sources not found (run from the repository root); text not compared\n");
  }
  free(base);
  free(gemm);
  free(wgmma);
  free(tma);
  /* no headers: NVRTC runs with no include path; only the emulator's branches include its
   * headers (emu/), and NVRTC never takes them */
  for (const char *q = p; (q = strstr(q, "#include")) != NULL; q++) {
    const char *line_start = q;
    while (line_start > p && line_start[-1] != '\n') line_start--;
    const char *before = line_start - 1 > p ? line_start - 2 : p; /* the previous line */
    while (before > p && before[-1] != '\n') before--;
    EXPECT(strncmp(q, "#include \"tcg_emu_", 18) == 0 &&
           (strncmp(before, "#else /* the emulator", 21) == 0 || strncmp(before, "#if defined(TCG_EMU)", 20) == 0));
  }
  CHECK(strstr(tc_dtype_c_prelude(), "TCG_FN uint16_t tcg_f32_to_float16(float v)") != NULL);
}

static const char *const archs[] = {"sm_80", "sm_89", "sm_90a"};
#define NARCH 3
/* Sanitizer builds compile for sm_90a only: NVRTC's output does not depend on the host build. */
static int narch(void) {
  const char *b = getenv("TILEC_BUILD");
  return b && (strstr(b, "asan") || strstr(b, "tsan")) ? 1 : NARCH;
}
static const char *arch_of(int i) { return narch() == NARCH ? archs[i] : "sm_90a"; }

/* every conversion the dtype prelude defines, called from a kernel */
static const char *conv_kernel =
    "extern \"C\" __global__ void tcg_conv(const float *x, const double *y, uint32_t *o) {\n"
    "  int i = threadIdx.x; float v = x[i]; double d = y[i]; uint32_t s = 0;\n"
    "#define F(name) s += tcg_f32_to_##name(v) + tcg_f32_to_##name##_sat(v) + (uint32_t)tcg_##name##_to_f32((uint8_t)i);\n"
    "  F(float16) F(bfloat16) F(float8_e4m3fn) F(float8_e5m2) F(float8_e4m3fnuz) F(float8_e5m2fnuz)\n"
    "  F(float8_e8m0fnu) F(float4_e2m1fn)\n"
    "  s += tcg_f64_to_int4(d) + tcg_f64_to_int8(d) + tcg_f64_to_int16(d) + tcg_f64_to_int32(d) + (uint32_t)tcg_f64_to_int64(d);\n"
    "  s += tcg_f64_to_uint4(d) + tcg_f64_to_uint8(d) + tcg_f64_to_uint16(d) + tcg_f64_to_uint32(d) + (uint32_t)tcg_f64_to_uint64(d);\n"
    "  uint8_t nb[2] = {1, 2}; tcg_nibble_set(nb, (size_t)i & 3, 5); s += tcg_int4_to_i8(tcg_nibble_get(nb, 1));\n"
    "  o[i] = s;\n"
    "}\n";

TEST(dtype_prelude_compiles_under_nvrtc) {
  if (!nvrtc_load()) {
    printf("  (skipped: NVRTC not found: TILEC_NVRTC, /usr/local/cuda/lib64, the loader's path; sh tools/deps.sh test)\n");
    return;
  }
  char *src = concat3(tc_dtype_c_prelude(), conv_kernel, "");
  CHECK(src != NULL);
  job jobs[NARCH] = {{0}};
  const int na = narch();
  for (int i = 0; i < na; i++) jobs[i].arch = arch_of(i);
  int ok = compile_all(src, jobs, na);
  free_jobs(jobs, na);
  free(src);
  CHECK(ok);
}

/* SASS opcodes of one function in a cubin, by cuobjdump; NULL when cuobjdump is absent. */
static const char *cuobjdump_path(void) {
  static char path[512];
  static int done;
  if (done) return path[0] ? path : NULL;
  done = 1;
  const char *env = getenv("TILEC_CUOBJDUMP");
  if (env && access(env, X_OK) == 0) return snprintf(path, sizeof path, "%s", env), path;
  FILE *p = popen("command -v cuobjdump 2>/dev/null || { test -x /usr/local/cuda/bin/cuobjdump && echo /usr/local/cuda/bin/cuobjdump; } || "
                  "ls \"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])' 2>/dev/null)\"/nvidia/*/bin/cuobjdump "
                  "2>/dev/null | head -n 1",
                  "r");
  if (p) {
    if (fgets(path, sizeof path, p)) path[strcspn(path, "\n")] = 0;
    else path[0] = 0;
    pclose(p);
  }
  return path[0] ? path : NULL;
}

static char *sass_of(const char *tool, const job *j, const char *fn) {
  char dir[] = "/tmp/tilec_sass_XXXXXX", file[64], cmd[2048];
  if (!mkdtemp(dir)) return NULL;
  snprintf(file, sizeof file, "%s/k.cubin", dir);
  FILE *f = fopen(file, "wb");
  if (!f) return NULL;
  fwrite(j->cubin, 1, j->cubin_len, f);
  fclose(f);
  /* cuobjdump -sass runs nvdisasm, which pip installs next to it */
  snprintf(cmd, sizeof cmd, "PATH=\"$(dirname '%s'):$PATH\" '%s' -sass -fun %s %s > %s/sass.txt 2>&1", tool, tool, fn, file, dir);
  int rc = system(cmd);
  snprintf(file, sizeof file, "%s/sass.txt", dir);
  char *s = rc == 0 ? read_file(file) : NULL;
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) {}
  return s;
}

/* "Function properties for NAME\n    N bytes stack frame": N, or -1 */
static long stack_frame(const char *log, const char *fn) {
  char pat[256];
  snprintf(pat, sizeof pat, "Function properties for %s\n", fn);
  const char *p = strstr(log, pat);
  if (!p) return -1;
  p += strlen(pat);
  while (*p == ' ' || *p == '\t' || *p == '.') p++;
  return strtol(p, NULL, 10);
}

TEST(gemm_paths_compile_under_nvrtc) {
  if (!nvrtc_load()) {
    printf("  (skipped: NVRTC not found: TILEC_NVRTC, /usr/local/cuda/lib64, the loader's path; sh tools/deps.sh test)\n");
    return;
  }
  char *check = read_file("tests/gpu/prelude_check.cu");
  if (!check) {
    printf("note: tests/gpu/prelude_check.cu not found (run from the repository root); skipped\n");
    return;
  }
  char *src = concat3(tc_dtype_c_prelude(), tc_cuda_prelude(), check);
  free(check);
  CHECK(src != NULL);
  job jobs[NARCH] = {{0}};
  const int na = narch();
  for (int i = 0; i < na; i++) jobs[i].arch = arch_of(i);
  int ok = compile_all(src, jobs, na);
  free(src);
  /* no local memory in the 128x128x32 f16 block gemm (the case and the mainloop benchmark) */
  for (int i = 0; ok && i < na; i++) {
    const char *fns[] = {"chk_f16_nt_128x128x32_2x2", "bench_f16", "bench_bf16", "bench_i8"};
    for (int k = 0; k < 4; k++) {
      long sf = stack_frame(jobs[i].log, fns[k]);
      if (sf != 0) {
        printf("  %s on %s: stack frame %ld bytes (want 0)\n", fns[k], jobs[i].arch, sf);
        ok = 0;
      }
    }
  }
  /* tensor-core instructions in the SASS */
  const char *tool = cuobjdump_path();
  if (ok && !tool)
    printf("note: cuobjdump not found (python3 -m pip install nvidia-cuda-cuobjdump, or set TILEC_CUOBJDUMP); SASS not checked\n");
  for (int i = 0; ok && tool && i < na; i++) {
    const int sm = atoi(jobs[i].arch + 3);
    struct {
      const char *fn, *want, *not_want;
    } expect[] = {
        {"chk_f16_nn_128x128x32_2x2", "HMMA.16816.F32", NULL},
        {"chk_f16_tt_128x128x32_2x2", "LDSM.16.MT88.4", NULL},
        {"chk_bf16_nn_128x128x32_2x2", "HMMA.16816.F32.BF16", NULL},
        {"chk_i8_nt_128x128x64_2x2", "IMMA.16832", NULL},
        {"chk_rs_f16_nn_64x64x64_4x1", "HMMA.16816.F32", NULL},
        {"chk_simt_f32_nt_64x64x32_2x2", "FFMA", "HMMA"},
        /* fp8: QMMA on sm_89; sm_90 runs mma.sync fp8 as HMMA; sm_80 has none (SIMT) */
        {"chk_e4m3_nt_128x128x64_2x2", sm == 89 ? "QMMA.16832.F32.E4M3.E4M3" : sm == 90 ? "HMMA" : "FFMA",
         sm == 80 ? "HMMA" : NULL},
    };
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) {
      char *sass = sass_of(tool, &jobs[i], expect[k].fn);
      int good = sass && strstr(sass, expect[k].want) && !(expect[k].not_want && strstr(sass, expect[k].not_want));
      if (!good) {
        printf("  %s on %s: SASS %s %s%s%s\n", expect[k].fn, jobs[i].arch, sass ? "lacks" : "unavailable for", expect[k].want,
               expect[k].not_want ? " or has " : "", expect[k].not_want ? expect[k].not_want : "");
        ok = 0;
      }
      free(sass);
    }
  }
  free_jobs(jobs, na);
  CHECK(ok);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--print-prelude") == 0) {
    fputs(tc_dtype_c_prelude(), stdout);
    fputs(tc_cuda_prelude(), stdout);
    return ferror(stdout) != 0;
  }
  RUN(prelude_is_embedded);
  RUN(dtype_prelude_compiles_under_nvrtc);
  RUN(gemm_paths_compile_under_nvrtc);
  TEST_MAIN_END();
}
