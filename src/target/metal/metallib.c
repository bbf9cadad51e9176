/* metallib.c: the `metallib` backend's build: the generated MSL compiled offline by Apple's
 * `metal` and `metallib` tools (xcrun -sdk macosx ...) into a .metallib, packed with the code
 * generator's meta lines. Unlike `metal` it has an artifact, so the disk cache keeps it and a
 * warm start loads it with newLibraryWithData:error: without compiling (backend_device.c). The
 * tools exist only on macOS; there the backend's probe finds them (backends.c). No Mac ran
 * this code here (docs/metal-runtime.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/metal/metal_rt.h"
#include "util/diag.h"
#include "util/proc.h"

static const char k_magic[] = "tilec-metallib 1\n";

bool tc_metal_metallib_unpack(const void *artifact, size_t size, const char **meta, const void **lib, size_t *lib_size) {
  const char *a = artifact;
  size_t m = strlen(k_magic);
  if (!a || size < m || memcmp(a, k_magic, m) != 0) return false;
  const char *end = memchr(a + m, 0, size - m);
  if (!end) return false;
  *meta = a + m;
  *lib = end + 1;
  *lib_size = size - (size_t)(end + 1 - a);
  return true;
}

const void *tc_metal_metallib_payload(const void *artifact, size_t size, size_t *payload_size) {
  const char *meta;
  const void *lib = NULL;
  return tc_metal_metallib_unpack(artifact, size, &meta, &lib, payload_size) ? lib : NULL;
}

/* Runs one xcrun step; false with its output in err. */
static bool run_step(char *const *argv, const char *what, tilec_error *err) {
  char *out = NULL;
  int status = 0, spawn_errno = 0;
  if (!tc_run_capture(argv, &out, &status, &spawn_errno)) {
    tc_error(err, TILEC_ERROR_TARGET, "%s: xcrun could not be started (%s)", what, strerror(spawn_errno));
    free(out);
    return false;
  }
  if (status != 0) {
    tc_error(err, TILEC_ERROR_TARGET, "%s failed (exit %d):\n%.3000s", what, status, out ? out : "");
    free(out);
    return false;
  }
  free(out);
  return true;
}

tilec_status tc_metal_metallib_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                                     size_t *artifact_size, tilec_error *err) {
  (void)env;
  *artifact = NULL;
  *artifact_size = 0;
  tc_metal_meta meta;
  if (!src || !src->full_source) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metallib build: no source");
    return TILEC_ERROR_INTERNAL;
  }
  tilec_status st = tc_metal_meta_parse(src->meta, &meta, err);
  if (st != TILEC_OK) return st;
  char dir[4096], msl[4200], air[4200], lib[4200], std[32];
  if (!tc_make_tmpdir("tilec-metallib", dir, sizeof dir)) {
    tc_error(err, TILEC_ERROR_IO, "metallib build: cannot make a temporary directory");
    return TILEC_ERROR_IO;
  }
  snprintf(msl, sizeof msl, "%s/kernel.metal", dir);
  snprintf(air, sizeof air, "%s/kernel.air", dir);
  snprintf(lib, sizeof lib, "%s/kernel.metallib", dir);
  tc_nsuint lang = tc_metal_needed_language(&meta);
  snprintf(std, sizeof std, "-std=metal%lu.%lu", lang >> 16, lang & 0xffff);
  char *compile[] = {"xcrun", "-sdk", "macosx", "metal", std, "-c", msl, "-o", air, NULL};
  char *link[] = {"xcrun", "-sdk", "macosx", "metallib", air, "-o", lib, NULL};
  void *bytes = NULL;
  size_t n = 0;
  if (!tc_write_file(msl, src->full_source, strlen(src->full_source))) {
    tc_error(err, TILEC_ERROR_IO, "metallib build: cannot write %s", msl);
    st = TILEC_ERROR_IO;
  } else if (!run_step(compile, "xcrun metal (the offline Metal compiler)", err) ||
             !run_step(link, "xcrun metallib", err)) {
    st = TILEC_ERROR_TARGET;
  } else if (!tc_read_file(lib, &bytes, &n)) {
    tc_error(err, TILEC_ERROR_IO, "metallib build: cannot read %s", lib);
    st = TILEC_ERROR_IO;
  }
  unlink(msl);
  unlink(air);
  unlink(lib);
  rmdir(dir);
  if (st != TILEC_OK) return st;
  size_t m = strlen(k_magic), mt = strlen(src->meta) + 1;
  char *a = malloc(m + mt + n);
  if (!a) {
    free(bytes);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory building a metallib");
    return TILEC_ERROR_NOMEM;
  }
  memcpy(a, k_magic, m);
  memcpy(a + m, src->meta, mt);
  memcpy(a + m + mt, bytes, n);
  free(bytes);
  *artifact = a;
  *artifact_size = m + mt + n;
  return TILEC_OK;
}

/* The compiler's own version line: an Xcode update changes it, and with it the cache key. */
char *tc_metal_metallib_toolchain_id(const tc_backend_env *env, tilec_error *err) {
  (void)env;
  char *argv[] = {"xcrun", "-sdk", "macosx", "metal", "--version", NULL};
  char *out = NULL;
  int status = 0, spawn_errno = 0;
  if (!tc_run_capture(argv, &out, &status, &spawn_errno) || status != 0) {
    free(out);
    tc_error(err, TILEC_ERROR_TARGET, "xcrun -sdk macosx metal --version failed");
    return NULL;
  }
  size_t len = strlen(out ? out : "");
  char *id = malloc(len + 8);
  if (id) snprintf(id, len + 8, "metal=%s", out ? out : "");
  free(out);
  if (!id) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  return id;
}
