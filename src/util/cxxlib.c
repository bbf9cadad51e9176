/* cxxlib.c: C++ text built into a shared object and loaded (cxxlib.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cxxlib.h"
#include "util/diag.h"
#include "util/proc.h"
#include "util/strbuf.h"

#if defined(__SANITIZE_ADDRESS__)
#define TC_CXX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_CXX_ASAN 1
#endif
#endif

static const char *const k_flags[] = {"-x", "c++", "-std=c++20", "-O1", "-fPIC", "-shared", "-Wno-attributes",
                                      "-Wno-ignored-attributes", "-fno-exceptions", "-fno-rtti",
#ifdef TC_CXX_ASAN
                                      "-fsanitize=address", "-fno-omit-frame-pointer",
#endif
                                      };
#define NFLAGS (sizeof k_flags / sizeof k_flags[0])

static const char *default_cxx(const char *cxx) {
  if (cxx && *cxx) return cxx;
  const char *e = getenv("TILEC_EMU_CXX");
  return e && *e ? e : "c++";
}

/* The compiler command split at spaces into argv; the strings live in *buf (malloc'd). */
static int split_cmd(const char *cmd, char **buf, char **argv, int cap) {
  *buf = strdup(cmd);
  if (!*buf) return 0;
  int n = 0;
  for (char *p = *buf; *p && n < cap;) {
    while (*p == ' ' || *p == '\t') *p++ = 0;
    if (!*p) break;
    argv[n++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
  }
  return n;
}

bool tc_cxx_available(const char *cxx, char *why, size_t cap) {
  char *buf, *argv[16], path[PATH_MAX];
  int n = split_cmd(default_cxx(cxx), &buf, argv, 15);
  bool ok = n > 0 && tc_find_exe(argv[0], path, sizeof path);
  if (!ok && why && cap) snprintf(why, cap, "C++ compiler '%s' not found (set TILEC_EMU_CXX or install g++)", n ? argv[0] : "");
  free(buf);
  return ok;
}

char *tc_cxx_toolchain_id(const char *cxx, const char *tag, int abi, tilec_error *err) {
  char *buf, *argv[16], path[PATH_MAX], real[PATH_MAX];
  int n = split_cmd(default_cxx(cxx), &buf, argv, 15);
  if (n <= 0 || !tc_find_exe(argv[0], path, sizeof path)) {
    tc_error(err, TILEC_ERROR_TARGET, "C++ compiler '%s' not found (set TILEC_EMU_CXX or install g++)", n > 0 ? argv[0] : "");
    free(buf);
    return NULL;
  }
  if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
  struct stat st;
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_printf(&sb, "%s cxx=%s", tag, real);
  for (int i = 1; i < n; i++) tc_sb_printf(&sb, " %s", argv[i]);
  if (stat(real, &st) == 0) tc_sb_printf(&sb, " size=%lld mtime=%lld", (long long)st.st_size, (long long)st.st_mtim.tv_sec);
  for (size_t i = 0; i < NFLAGS; i++) tc_sb_printf(&sb, " %s", k_flags[i]);
  tc_sb_printf(&sb, " abi=%d", abi);
  free(buf);
  char *r = tc_sb_take(&sb);
  if (!r) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  return r;
}

/* Writes the headers under dir (folders made as needed); false on an I/O error. */
static bool write_headers(const char *dir, const tc_cxx_header *h, int n) {
  for (int i = 0; i < n; i++) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, h[i].name);
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(dir)) { /* a folder inside dir */
      *slash = 0;
      if (mkdir(path, 0700) != 0 && errno != EEXIST) return false;
      *slash = '/';
    }
    if (!tc_write_file(path, h[i].text, strlen(h[i].text))) return false;
  }
  return true;
}

static void remove_headers(const char *dir, const tc_cxx_header *h, int n) {
  for (int i = 0; i < n; i++) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, h[i].name);
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(dir)) {
      *slash = 0;
      rmdir(path);
    }
  }
}

tilec_status tc_cxx_build_so(const char *who, const char *cxx, const char *src_name, const char *source,
                             const tc_cxx_header *headers, int nheaders, void **so, size_t *so_size, char **log,
                             tilec_error *err) {
  *so = NULL;
  *so_size = 0;
  if (log) *log = NULL;
  char dir[4096], cpath[4200], sopath[4200], incl[4200];
  if (!tc_make_tmpdir("tilec-emu", dir, sizeof dir)) {
    tc_error(err, TILEC_ERROR_IO, "cannot create a temporary directory for the C++ compiler: %s", strerror(errno));
    return TILEC_ERROR_IO;
  }
  snprintf(cpath, sizeof cpath, "%s/%s", dir, src_name);
  snprintf(sopath, sizeof sopath, "%s/kernel.so", dir);
  snprintf(incl, sizeof incl, "-I%s", dir);
  tilec_status st = TILEC_OK;
  char *buf = NULL;
  if (!write_headers(dir, headers, nheaders) || !tc_write_file(cpath, source, strlen(source))) {
    tc_error(err, TILEC_ERROR_IO, "cannot write the emulator's sources in %s", dir);
    st = TILEC_ERROR_IO;
    goto done;
  }
  char *argv[48];
  int n = split_cmd(default_cxx(cxx), &buf, argv, 15);
  if (n <= 0) {
    tc_error(err, TILEC_ERROR_USAGE, "empty C++ compiler command");
    st = TILEC_ERROR_USAGE;
    goto done;
  }
  for (size_t i = 0; i < NFLAGS; i++) argv[n++] = (char *)k_flags[i];
  argv[n++] = incl;
  argv[n++] = "-o";
  argv[n++] = sopath;
  argv[n++] = cpath;
  argv[n] = NULL;
  char *out = NULL;
  int status = 0, e = 0;
  if (!tc_run_capture(argv, &out, &status, &e)) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot run the C++ compiler '%s': %s", argv[0], strerror(e));
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  if (status != 0) {
    tc_error(err, TILEC_ERROR_TARGET, "%s: the C++ compiler failed (exit %d): %.700s", who, status, out ? out : "");
    if (log) *log = out;
    else free(out);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  if (log) *log = out;
  else free(out);
  if (!tc_read_file(sopath, so, so_size)) {
    tc_error(err, TILEC_ERROR_IO, "cannot read the built library %s", sopath);
    st = TILEC_ERROR_IO;
  }
done:
  free(buf);
  remove_headers(dir, headers, nheaders);
  unlink(cpath);
  unlink(sopath);
  rmdir(dir);
  return st;
}

tilec_status tc_so_open(const void *so, size_t so_size, const char *what, void **handle, tilec_error *err) {
  *handle = NULL;
  const char *t = getenv("TMPDIR");
  if (!t || !*t) t = "/tmp";
  char path[4096];
  snprintf(path, sizeof path, "%s/tilec-emu-XXXXXX.so", t);
  int fd = mkstemps(path, 3);
  if (fd < 0) {
    tc_error(err, TILEC_ERROR_IO, "cannot create a temporary file for the %s: %s", what, strerror(errno));
    return TILEC_ERROR_IO;
  }
  const char *p = so;
  size_t left = so_size;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      unlink(path);
      tc_error(err, TILEC_ERROR_IO, "cannot write %s", path);
      return TILEC_ERROR_IO;
    }
    p += n;
    left -= (size_t)n;
  }
  close(fd);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char *dle = h ? NULL : dlerror();
  unlink(path);
  if (!h) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot load the %s: %s", what, dle ? dle : "dlopen failed");
    return TILEC_ERROR_TARGET;
  }
  *handle = h;
  return TILEC_OK;
}
