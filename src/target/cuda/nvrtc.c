/* nvrtc.c: CUDA C++ -> cubin, in process with NVRTC (dlopen) or with an external nvcc.
 *
 * NVRTC is found as a file first (TILEC_NVRTC, then the CUDA library folders), so the toolchain
 * identity that keys the kernel cache comes from the file's real name (which carries NVRTC's
 * version, libnvrtc.so.13.0.88) and stat data without loading it: a warm cache hit never loads
 * NVRTC. Only when no folder has it is the dynamic loader's own search used (and NVRTC loaded to
 * learn which file it picked). The function table is filled once per process and read-only after. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/cuda/cuda_internal.h"
#include "util/diag.h"
#include "util/proc.h"
#include "util/strbuf.h"

typedef struct nvrtc_prog_st *nvrtc_program;
typedef struct nvrtc_api {
  void *lib;
  char path[PATH_MAX]; /* the file loaded */
  int (*Version)(int *major, int *minor);
  const char *(*GetErrorString)(int r);
  int (*CreateProgram)(nvrtc_program *p, const char *src, const char *name, int nheaders,
                       const char *const *headers, const char *const *include_names);
  int (*DestroyProgram)(nvrtc_program *p);
  int (*CompileProgram)(nvrtc_program p, int nopts, const char *const *opts);
  int (*GetProgramLogSize)(nvrtc_program p, size_t *n);
  int (*GetProgramLog)(nvrtc_program p, char *log);
  int (*GetCUBINSize)(nvrtc_program p, size_t *n);
  int (*GetCUBIN)(nvrtc_program p, char *cubin);
} nvrtc_api;

static const char *const k_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
#define NNAMES (sizeof k_names / sizeof *k_names)

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Try each library name in folder `dir` (a prefix of `n` bytes). */
static bool try_dir(const char *dir, size_t n, char *out, size_t cap) {
  if (!n) return false;
  for (size_t i = 0; i < NNAMES; i++) {
    if (snprintf(out, cap, "%.*s/%s", (int)n, dir, k_names[i]) < (int)cap && is_file(out)) return true;
  }
  return false;
}

static bool try_list(const char *list, char *out, size_t cap) {
  while (list && *list) {
    const char *c = strchr(list, ':');
    size_t n = c ? (size_t)(c - list) : strlen(list);
    if (try_dir(list, n, out, cap)) return true;
    list += n + (c ? 1 : 0);
  }
  return false;
}

bool tc_nvrtc_locate(char *out, size_t cap) {
  const char *explicit_path = getenv("TILEC_NVRTC");
  if (explicit_path && *explicit_path) {
    snprintf(out, cap, "%s", explicit_path);
    return is_file(out);
  }
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
  char dir[PATH_MAX];
  for (int i = 0; i < 2; i++) {
    if (!homes[i] || !*homes[i]) continue;
    snprintf(dir, sizeof dir, "%s/lib64", homes[i]);
    if (try_dir(dir, strlen(dir), out, cap)) return true;
  }
  if (try_list(getenv("LD_LIBRARY_PATH"), out, cap)) return true;
  return try_list("/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/lib/x86_64-linux-gnu:/usr/lib/aarch64-linux-gnu:"
                  "/usr/lib64:/usr/lib",
                  out, cap);
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static nvrtc_api g_nvrtc;
static bool g_ok;
static char g_why[512];

#define NEED(field, name)                                                              \
  do {                                                                                 \
    *(void **)&g_nvrtc.field = dlsym(lib, name);                                       \
    if (!g_nvrtc.field) {                                                              \
      snprintf(g_why, sizeof g_why, "%.300s lacks %s", g_nvrtc.path, name);              \
      return;                                                                          \
    }                                                                                  \
  } while (0)

static void load_once(void) {
  void *lib = NULL;
  char path[PATH_MAX];
  if (tc_nvrtc_locate(path, sizeof path)) {
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      snprintf(g_why, sizeof g_why, "NVRTC at %.200s cannot be loaded: %.250s", path, dlerror());
      return;
    }
  } else {
    for (size_t i = 0; i < NNAMES && !lib; i++) lib = dlopen(k_names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      snprintf(g_why, sizeof g_why,
               "NVRTC not found (libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 in $CUDA_HOME/lib64, "
               "$LD_LIBRARY_PATH, /usr/local/cuda/lib64; or set TILEC_NVRTC)");
      return;
    }
    Dl_info info;
    void *fn = dlsym(lib, "nvrtcVersion");
    snprintf(path, sizeof path, "%s", fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "libnvrtc");
  }
  g_nvrtc.lib = lib;
  snprintf(g_nvrtc.path, sizeof g_nvrtc.path, "%s", path);
  NEED(Version, "nvrtcVersion");
  NEED(GetErrorString, "nvrtcGetErrorString");
  NEED(CreateProgram, "nvrtcCreateProgram");
  NEED(DestroyProgram, "nvrtcDestroyProgram");
  NEED(CompileProgram, "nvrtcCompileProgram");
  NEED(GetProgramLogSize, "nvrtcGetProgramLogSize");
  NEED(GetProgramLog, "nvrtcGetProgramLog");
  NEED(GetCUBINSize, "nvrtcGetCUBINSize");
  NEED(GetCUBIN, "nvrtcGetCUBIN");
  g_ok = true; /* stays loaded: unloading it strands what its initialisers allocated */
}

static const nvrtc_api *nvrtc_get(char *why, size_t cap) {
  pthread_once(&g_once, load_once);
  if (!g_ok && why && cap) snprintf(why, cap, "%s", g_why);
  return g_ok ? &g_nvrtc : NULL;
}

bool tc_nvrtc_available(char *why, size_t cap) {
  char path[PATH_MAX];
  if (tc_nvrtc_locate(path, sizeof path)) return true;
  return nvrtc_get(why, cap) != NULL;
}

/* "<realpath> size=N mtime=S.NS": what changes whenever the file is replaced or upgraded. */
static void file_identity(const char *path, tc_strbuf *sb) {
  char real[PATH_MAX];
  if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
  struct stat st;
  tc_sb_puts(sb, real);
  if (stat(real, &st) == 0)
    tc_sb_printf(sb, " size=%lld mtime=%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                 st.st_mtim.tv_nsec);
}

char *tc_nvrtc_identity(tilec_error *err) {
  char path[PATH_MAX], why[512];
  if (!tc_nvrtc_locate(path, sizeof path)) {
    const nvrtc_api *nv = nvrtc_get(why, sizeof why);
    if (!nv) {
      tc_error(err, TILEC_ERROR_TARGET, "%s", why);
      return NULL;
    }
    snprintf(path, sizeof path, "%.4000s", nv->path);
  }
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_puts(&sb, "nvrtc=");
  file_identity(path, &sb);
  char *r = tc_sb_take(&sb);
  if (!r) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  return r;
}

/* A compiler log trimmed to fit an error message: its first lines (the first error is the one
 * that explains the rest), and how many lines were left out. */
static void trim_log(const char *log, char *out, size_t cap) {
  size_t len = strlen(log);
  while (len && (log[len - 1] == '\n' || log[len - 1] == ' ')) len--;
  if (len < cap) {
    snprintf(out, cap, "%.*s", (int)len, log);
    return;
  }
  size_t keep = cap > 64 ? cap - 64 : cap / 2;
  while (keep > 0 && log[keep] != '\n') keep--; /* whole lines */
  if (keep == 0) keep = cap > 64 ? cap - 64 : cap / 2;
  int more = 0;
  for (size_t i = keep; i < len; i++) more += log[i] == '\n';
  snprintf(out, cap, "%.*s\n... (%d more line%s)", (int)keep, log, more + 1, more ? "s" : "");
}

/* -I for the CUDA headers next to the library (cuda_fp16.h and friends), when present. */
static bool include_dir(const char *libpath, char *out, size_t cap) {
  char real[PATH_MAX], probe[PATH_MAX + 32];
  if (!realpath(libpath, real)) return false;
  char *slash = strrchr(real, '/');
  if (!slash) return false;
  *slash = 0; /* .../lib64 or .../lib */
  slash = strrchr(real, '/');
  if (!slash) return false;
  *slash = 0;
  snprintf(probe, sizeof probe, "%.4000s/include/cuda_fp16.h", real);
  if (!is_file(probe)) return false;
  snprintf(out, cap, "-I%.4000s/include", real);
  return true;
}

tilec_status tc_nvrtc_compile(const char *src, const char *arch, void **cubin, size_t *size, tilec_error *err) {
  *cubin = NULL;
  *size = 0;
  char why[512];
  const nvrtc_api *nv = nvrtc_get(why, sizeof why);
  if (!nv) {
    tc_error(err, TILEC_ERROR_TARGET, "%s", why);
    return TILEC_ERROR_TARGET;
  }
  char archopt[64], inc[PATH_MAX + 8];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
  const char *opts[8];
  int n = 0;
  opts[n++] = archopt;
  opts[n++] = "-std=c++17";
  opts[n++] = "--device-as-default-execution-space";
  const char *li = getenv("TILEC_CUDA_LINEINFO");
  if (li && *li && strcmp(li, "0") != 0) opts[n++] = "-lineinfo";
  if (include_dir(nv->path, inc, sizeof inc)) opts[n++] = inc;
  nvrtc_program prog = NULL;
  int r = nv->CreateProgram(&prog, src, "tilec_kernel.cu", 0, NULL, NULL);
  if (r != 0) {
    tc_error(err, TILEC_ERROR_TARGET, "nvrtcCreateProgram failed: %s", nv->GetErrorString(r));
    return TILEC_ERROR_TARGET;
  }
  tilec_status st = TILEC_OK;
  r = nv->CompileProgram(prog, n, opts);
  if (r != 0) {
    size_t lsz = 0;
    char *log = NULL;
    if (nv->GetProgramLogSize(prog, &lsz) == 0 && lsz > 0 && (log = malloc(lsz + 1)) != NULL) {
      if (nv->GetProgramLog(prog, log) != 0) log[0] = 0;
      log[lsz] = 0;
    }
    char trimmed[900];
    trim_log(log ? log : "", trimmed, sizeof trimmed);
    tc_error(err, TILEC_ERROR_TARGET, "NVRTC failed to compile the kernel for %s (%s):\n%s", arch,
             nv->GetErrorString(r), trimmed);
    free(log);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  size_t n_cubin = 0;
  r = nv->GetCUBINSize(prog, &n_cubin);
  if (r != 0 || n_cubin == 0) {
    tc_error(err, TILEC_ERROR_TARGET, "NVRTC produced no cubin for %s: %s", arch,
             r ? nv->GetErrorString(r) : "empty (is the arch a real sm_XX?)");
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  char *buf = malloc(n_cubin);
  if (!buf) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    st = TILEC_ERROR_NOMEM;
    goto done;
  }
  if ((r = nv->GetCUBIN(prog, buf)) != 0) {
    free(buf);
    tc_error(err, TILEC_ERROR_TARGET, "nvrtcGetCUBIN failed: %s", nv->GetErrorString(r));
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  *cubin = buf;
  *size = n_cubin;
done:
  nv->DestroyProgram(&prog);
  return st;
}

tilec_status tc_nvrtc_version(int *major, int *minor, tilec_error *err) {
  char why[512];
  const nvrtc_api *nv = nvrtc_get(why, sizeof why);
  if (!nv) {
    tc_error(err, TILEC_ERROR_TARGET, "%s", why);
    return TILEC_ERROR_TARGET;
  }
  nv->Version(major, minor);
  return TILEC_OK;
}

/* ---- nvcc ---- */

/* $TILEC_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc. */
bool tc_nvcc_locate(char *out, size_t cap) {
  const char *e = getenv("TILEC_NVCC");
  if (e && *e) return tc_find_exe(e, out, cap);
  return tc_find_exe("nvcc", out, cap) || tc_find_exe("/usr/local/cuda/bin/nvcc", out, cap);
}

char *tc_nvcc_identity(tilec_error *err) {
  char path[PATH_MAX];
  if (!tc_nvcc_locate(path, sizeof path)) {
    tc_error(err, TILEC_ERROR_TARGET, "nvcc not found (PATH, /usr/local/cuda/bin; or set TILEC_NVCC)");
    return NULL;
  }
  /* Identified like the C compiler: by the file and its stat data (running `nvcc --version`
   * would cost a process on every warm start); ptxas beside it changes with it. */
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_puts(&sb, "nvcc=");
  file_identity(path, &sb);
  char *slash = strrchr(path, '/');
  if (slash && (size_t)(slash - path) + 7 < sizeof path) {
    strcpy(slash + 1, "ptxas");
    if (is_file(path)) {
      tc_sb_puts(&sb, "; ptxas=");
      file_identity(path, &sb);
    }
  }
  char *r = tc_sb_take(&sb);
  if (!r) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  return r;
}

tilec_status tc_nvcc_compile(const char *src, const char *arch, void **cubin, size_t *size, tilec_error *err) {
  *cubin = NULL;
  *size = 0;
  char nvcc[PATH_MAX], dir[PATH_MAX], cu[PATH_MAX + 16], out[PATH_MAX + 16], archopt[64];
  if (!tc_nvcc_locate(nvcc, sizeof nvcc)) {
    tc_error(err, TILEC_ERROR_TARGET, "nvcc not found (PATH, /usr/local/cuda/bin; or set TILEC_NVCC)");
    return TILEC_ERROR_TARGET;
  }
  if (!tc_make_tmpdir("tilec-nvcc", dir, sizeof dir)) {
    tc_error(err, TILEC_ERROR_IO, "cannot create a temporary directory for nvcc: %s", strerror(errno));
    return TILEC_ERROR_IO;
  }
  snprintf(cu, sizeof cu, "%s/k.cu", dir);
  snprintf(out, sizeof out, "%s/k.cubin", dir);
  snprintf(archopt, sizeof archopt, "-arch=%s", arch);
  tilec_status st = TILEC_OK;
  if (!tc_write_file(cu, src, strlen(src))) {
    tc_error(err, TILEC_ERROR_IO, "cannot write %s: %s", cu, strerror(errno));
    st = TILEC_ERROR_IO;
    goto done;
  }
  char *argv[16];
  int n = 0;
  argv[n++] = nvcc;
  argv[n++] = "-cubin";
  argv[n++] = archopt;
  argv[n++] = "-std=c++17";
  const char *li = getenv("TILEC_CUDA_LINEINFO");
  if (li && *li && strcmp(li, "0") != 0) argv[n++] = "-lineinfo";
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n++] = cu;
  argv[n] = NULL;
  char *log = NULL;
  int status, e;
  if (!tc_run_capture(argv, &log, &status, &e)) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot run nvcc (%s): %s", nvcc, strerror(e));
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  if (status != 0) {
    char trimmed[900];
    trim_log(log ? log : "", trimmed, sizeof trimmed);
    tc_error(err, TILEC_ERROR_TARGET, "nvcc failed to compile the kernel for %s (exit %d):\n%s", arch, status, trimmed);
    st = TILEC_ERROR_TARGET;
  } else if (!tc_read_file(out, cubin, size)) {
    tc_error(err, TILEC_ERROR_IO, "cannot read the cubin nvcc wrote (%s)", out);
    st = TILEC_ERROR_IO;
  }
  free(log);
done:
  unlink(cu);
  unlink(out);
  rmdir(dir);
  return st;
}
