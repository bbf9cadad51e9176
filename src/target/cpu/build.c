/* build.c: running the system C compiler for the cpu backend.
 *
 * The compiler is run with posix_spawnp (no shell: nothing is quoted or interpreted); $CC may
 * hold a command with arguments ("ccache gcc"), split at spaces. Flags:
 *   -O3 -march=native -fPIC -shared -std=c11 -ffp-contract=fast -fno-math-errno -fno-trapping-math
 * -ffp-contract=fast lets the compiler fuse a*b+c into FMA: it changes rounding slightly (one
 * rounding instead of two), which the verifier's tolerances cover, and it is what makes the
 * gemm micro-kernel fast. No -fwrapv: it keeps GCC from vectorizing loops whose indices are
 * int32 (8x slower elementwise kernels); instead the generated code computes signed values
 * through unsigned types where they may wrap, and index arithmetic, which never overflows,
 * stays plain. -fno-trapping-math (kernels never read floating-point exception flags) lets GCC
 * if-convert, and so vectorize, the narrow-float conversions, whose branches hold float
 * arithmetic: without it fp16 loads and stores run scalar, about 10x slower.
 * -march=native is dropped when the compiler rejects it. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/cpu/cpu_internal.h"
#include "util/proc.h"

static const char *const base_flags[] = {"-O3", "-fPIC", "-shared", "-std=c11", "-ffp-contract=fast",
                                         "-fno-math-errno", "-fno-trapping-math"};
#define NBASE (sizeof base_flags / sizeof base_flags[0])

/* Split the compiler command at spaces into argv (malloc'd strings in one block). */
typedef struct cc_cmd {
  char *buf;
  char *argv[16];
  int argc;
} cc_cmd;

static bool cc_split(const char *cc, cc_cmd *out) {
  memset(out, 0, sizeof *out);
  out->buf = strdup(cc && *cc ? cc : "cc");
  if (!out->buf) return false;
  for (char *p = out->buf; *p && out->argc < 15;) {
    while (*p == ' ' || *p == '\t') *p++ = 0;
    if (!*p) break;
    out->argv[out->argc++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
  }
  if (out->argc == 0) {
    free(out->buf);
    out->buf = strdup("cc");
    if (!out->buf) return false;
    out->argv[out->argc++] = out->buf;
  }
  return true;
}

bool tc_cpu_available(const tc_backend_env *env, char *why, size_t cap) {
  cc_cmd cmd;
  char path[4096];
  if (!cc_split(env ? env->cc : "cc", &cmd)) {
    if (why && cap) snprintf(why, cap, "out of memory");
    return false;
  }
  bool ok = tc_find_exe(cmd.argv[0], path, sizeof path);
  if (!ok && why && cap) snprintf(why, cap, "C compiler '%s' not found: set CC or install gcc", cmd.argv[0]);
  free(cmd.buf);
  return ok;
}

/* A short identity of this CPU: -march=native code built on one machine may not run on
 * another, so it is part of the toolchain id (and thus of cache keys). */
static void cpu_identity(char *out, size_t cap) {
  snprintf(out, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[4096], model[256] = "?";
  uint64_t h = 1469598103934665603ull;
  bool have_flags = false;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "model name", 10) && model[0] == '?') {
      char *c = strchr(line, ':');
      if (c) snprintf(model, sizeof model, "%.*s", (int)strcspn(c + 2, "\n"), c + 2);
    } else if ((!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)) && !have_flags) {
      for (const char *p = line; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
      have_flags = true;
    }
  }
  fclose(f);
  snprintf(out, cap, "%s/%016llx", model, (unsigned long long)h);
}

char *tc_cpu_toolchain_id(const tc_backend_env *env, tilec_error *err) {
  cc_cmd cmd;
  if (!cc_split(env ? env->cc : "cc", &cmd)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return NULL;
  }
  char path[4096];
  if (!tc_find_exe(cmd.argv[0], path, sizeof path)) {
    tc_error(err, TILEC_ERROR_TARGET, "C compiler '%s' not found: set CC or install gcc", cmd.argv[0]);
    free(cmd.buf);
    return NULL;
  }
  /* The compiler is identified by the file it resolves to (through symlinks and Debian's
   * alternatives) and that file's identity and timestamps, which change whenever it is
   * upgraded. Running `cc --version` instead would cost a process spawn on every warm start. */
  char real[4096];
  if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
  struct stat st;
  char ver[4400] = "?";
  if (stat(real, &st) == 0)
    snprintf(ver, sizeof ver, "%s dev=%llu ino=%llu size=%lld mtime=%lld.%09ld", real, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  char cpu[512];
  cpu_identity(cpu, sizeof cpu);
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_printf(&sb, "cc=%s", path);
  for (int i = 1; i < cmd.argc; i++) tc_sb_printf(&sb, " %s", cmd.argv[i]);
  tc_sb_printf(&sb, "; exe=%s; flags=", ver);
  for (size_t i = 0; i < NBASE; i++) tc_sb_printf(&sb, "%s ", base_flags[i]);
  tc_sb_printf(&sb, "-march=native; cpu=%s; abi=%d", cpu, TC_CPU_ABI_VERSION);
  free(cmd.buf);
  char *r = tc_sb_take(&sb);
  if (!r) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  return r;
}

tilec_status tc_cpu_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                          size_t *artifact_size, tilec_error *err) {
  *artifact = NULL;
  *artifact_size = 0;
  if (!src || !src->full_source) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cpu build: no source");
    return TILEC_ERROR_INTERNAL;
  }
  cc_cmd cmd;
  if (!cc_split(env ? env->cc : "cc", &cmd)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  char dir[4096], cpath[4200], sopath[4200];
  if (!tc_cpu_make_build_dir(dir, sizeof dir)) {
    tc_error(err, TILEC_ERROR_IO, "cannot create a temporary directory for the C compiler: %s", strerror(errno));
    free(cmd.buf);
    return TILEC_ERROR_IO;
  }
  snprintf(cpath, sizeof cpath, "%s/k.c", dir);
  snprintf(sopath, sizeof sopath, "%s/k.so", dir);
  tilec_status st = TILEC_OK;
  if (!tc_write_file(cpath, src->full_source, strlen(src->full_source))) {
    tc_error(err, TILEC_ERROR_IO, "cannot write %s: %s", cpath, strerror(errno));
    st = TILEC_ERROR_IO;
    goto done;
  }
  for (int attempt = 0; attempt < 2; attempt++) {
    bool native = attempt == 0;
    char *argv[40];
    int n = 0;
    for (int i = 0; i < cmd.argc; i++) argv[n++] = cmd.argv[i];
    for (size_t i = 0; i < NBASE; i++) argv[n++] = (char *)base_flags[i];
    if (native) argv[n++] = "-march=native";
    argv[n++] = "-o";
    argv[n++] = sopath;
    argv[n++] = cpath;
    argv[n++] = "-lm";
    argv[n] = NULL;
    char *out = NULL;
    int status, e;
    if (!tc_run_capture(argv, &out, &status, &e)) {
      if (e == ENOENT) tc_error(err, TILEC_ERROR_TARGET, "C compiler '%s' not found: set CC or install gcc", cmd.argv[0]);
      else tc_error(err, TILEC_ERROR_TARGET, "cannot run C compiler '%s': %s", cmd.argv[0], strerror(e));
      st = TILEC_ERROR_TARGET;
      goto done;
    }
    if (status == 0) {
      free(out);
      if (!tc_read_file(sopath, artifact, artifact_size)) {
        tc_error(err, TILEC_ERROR_IO, "cannot read the compiled kernel %s", sopath);
        st = TILEC_ERROR_IO;
      }
      goto done;
    }
    if (native && out && strstr(out, "march")) { /* the compiler rejects -march=native: retry without */
      free(out);
      continue;
    }
    /* keep the compiler's message, trimmed to what fits */
    size_t len = out ? strlen(out) : 0;
    const char *msg = out ? out : "";
    if (len > 900) msg = out + len - 900; /* the end holds the error */
    tc_error(err, TILEC_ERROR_TARGET, "cc failed (exit %d): %s", status, msg);
    free(out);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
done:
  unlink(cpath);
  unlink(sopath);
  rmdir(dir);
  free(cmd.buf);
  return st;
}
