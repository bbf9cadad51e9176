/* emu_backend.c: the metal target's `emu` backend: the generated MSL built by the host C++
 * compiler and run on the CPU by the emulator (emu.h). It is the metal default where Metal
 * does not exist (registry.c). Tensors are host memory (TC_BACKEND_HOST_TENSORS).
 *
 * The artifact is the built shared object behind a small header that carries the generator's
 * meta lines (entry, block, threadgroup memory), so a disk cache hit needs neither the
 * generator nor the compiler:  "tilec-emu 1\n" META "\n\0" SO-BYTES. `tilec compile -o` keeps
 * the shared object. Arguments are bound as Metal would: [[buffer(i)]] is the i-th kernel
 * parameter (tensor data, or the scalar's bytes as codegen.c declares it), then each symbolic
 * dimension as an int. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/metal/codegen.h"
#include "target/metal/emu.h"
#include "target/metal/metal.h"
#include "util/diag.h"

static const char k_magic[] = "tilec-emu 1\n";

struct tc_loaded {
  tc_emu_library *lib;
  char entry[256];
  uint32_t block[3];
  int nparams, nsyms;
  int launches;           /* a kernel of several launches: dispatches, one after another */
  tc_dtype *scalar_dtype; /* by parameter: the scalar's dtype (tensors: invalid) */
  bool *tensor;
};

static bool emu_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  return tc_emu_available(NULL, why, cap);
}

static char *emu_toolchain_id(const tc_backend_env *env, tilec_error *err) {
  (void)env;
  return tc_emu_toolchain_id(NULL, err);
}

static tilec_status emu_build(const tc_backend_env *env, const tc_generated *src, void **artifact, size_t *artifact_size,
                              tilec_error *err) {
  (void)env;
  *artifact = NULL;
  *artifact_size = 0;
  if (!src || !src->full_source || !src->meta) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal emu build: no source");
    return TILEC_ERROR_INTERNAL;
  }
  void *so = NULL;
  size_t n = 0;
  tilec_status st = tc_emu_compile(src->full_source, NULL, &so, &n, NULL, err);
  if (st != TILEC_OK) return st;
  size_t head = strlen(k_magic) + strlen(src->meta) + 1;
  char *a = malloc(head + n);
  if (!a) {
    free(so);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  memcpy(a, k_magic, strlen(k_magic));
  memcpy(a + strlen(k_magic), src->meta, strlen(src->meta) + 1);
  memcpy(a + head, so, n);
  free(so);
  *artifact = a;
  *artifact_size = head + n;
  return TILEC_OK;
}

/* The meta text and the shared object inside an artifact; NULL when it is not one. */
static const char *split_artifact(const void *artifact, size_t size, const void **so, size_t *so_size) {
  const char *a = artifact;
  size_t m = strlen(k_magic);
  if (!a || size < m || memcmp(a, k_magic, m) != 0) return NULL;
  const char *meta = a + m, *end = memchr(meta, 0, size - m);
  if (!end) return NULL;
  *so = end + 1;
  *so_size = size - (size_t)(end + 1 - a);
  return meta;
}

static const void *emu_payload(const void *artifact, size_t size, size_t *payload_size) {
  const void *so = NULL;
  return split_artifact(artifact, size, &so, payload_size) ? so : NULL;
}

static tilec_status emu_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src, const void *artifact,
                             size_t artifact_size, tc_loaded **out, tilec_error *err) {
  (void)env;
  (void)src;
  *out = NULL;
  const void *so = NULL;
  size_t so_size = 0;
  const char *meta = split_artifact(artifact, artifact_size, &so, &so_size);
  tc_loaded *m = calloc(1, sizeof *m);
  if (!m) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  const char *e = meta ? strstr(meta, "entry=") : NULL, *b = meta ? strstr(meta, "block=") : NULL;
  if (!e || !b || sscanf(e, "entry=%255[A-Za-z0-9_]", m->entry) != 1 ||
      sscanf(b, "block=%u,%u,%u", &m->block[0], &m->block[1], &m->block[2]) != 3) {
    free(m);
    tc_error(err, TILEC_ERROR_TARGET, "not a metal emulator artifact (its header is missing or damaged)");
    return TILEC_ERROR_TARGET;
  }
  m->nparams = k->nparams;
  m->nsyms = k->nsyms;
  m->launches = k->nlaunches > 1 ? k->nlaunches : 1;
  m->scalar_dtype = calloc((size_t)(k->nparams + 1), sizeof *m->scalar_dtype);
  m->tensor = calloc((size_t)(k->nparams + 1), sizeof *m->tensor);
  if (!m->scalar_dtype || !m->tensor) {
    free(m->scalar_dtype);
    free(m->tensor);
    free(m);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  for (int i = 0; i < k->nparams; i++) {
    m->tensor[i] = k->params[i].buf != NULL;
    if (!m->tensor[i]) m->scalar_dtype[i] = k->params[i].var->dtype;
  }
  tilec_status st = tc_emu_library_load(so, so_size, &m->lib, err);
  if (st != TILEC_OK) {
    free(m->scalar_dtype);
    free(m->tensor);
    free(m);
    return st;
  }
  *out = m;
  return TILEC_OK;
}

/* A scalar's bytes as its `constant T &` parameter reads them (tc_metal_scalar_type). */
static void scalar_bytes(tc_dtype d, int64_t ival, double fval, unsigned char out[8]) {
  memset(out, 0, 8);
  const char *t = tc_metal_scalar_type(d);
  if (!strcmp(t, "float")) {
    float f = (float)fval;
    memcpy(out, &f, 4);
  } else if (!strcmp(t, "long") || !strcmp(t, "ulong")) {
    memcpy(out, &ival, 8);
  } else {
    int32_t v = tc_dtype_is_bool(d) ? ival != 0 : (int32_t)ival;
    memcpy(out, &v, 4);
  }
}

static tilec_status emu_launch(const tc_backend_env *env, tc_loaded *m, const tc_launch_args *a, tilec_error *err) {
  (void)env;
  if (a->nparams != m->nparams || a->nsyms != m->nsyms) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal emu launch: argument counts differ from the loaded kernel's");
    return TILEC_ERROR_INTERNAL;
  }
  if (!a->grid_known) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s': the grid cannot be computed on the host", m->entry);
    return TILEC_ERROR_TARGET;
  }
  uint32_t groups[3];
  for (int i = 0; i < 3; i++) {
    if (a->grid[i] <= 0) return TILEC_OK; /* an empty grid runs nothing */
    if (a->grid[i] > UINT32_MAX) {
      tc_error(err, TILEC_ERROR_USAGE, "launch grid dimension %lld is too large", (long long)a->grid[i]);
      return TILEC_ERROR_USAGE;
    }
    groups[i] = (uint32_t)a->grid[i];
  }
  int n = m->nparams + m->nsyms + (m->launches > 1); /* the launch's number last */
  unsigned char(*vals)[8] = calloc((size_t)(n > 0 ? n : 1), sizeof *vals);
  void **bind = calloc((size_t)(n > 0 ? n : 1), sizeof *bind);
  if (!vals || !bind) {
    free(vals);
    free(bind);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", m->entry);
    return TILEC_ERROR_NOMEM;
  }
  for (int i = 0; i < m->nparams; i++) {
    if (m->tensor[i]) {
      bind[i] = a->data[i];
    } else {
      scalar_bytes(m->scalar_dtype[i], a->scalars[i], a->fscalars[i], vals[i]);
      bind[i] = vals[i];
    }
  }
  for (int s = 0; s < m->nsyms; s++) {
    int32_t v = (int32_t)a->syms[s];
    memcpy(vals[m->nparams + s], &v, sizeof v);
    bind[m->nparams + s] = vals[m->nparams + s];
  }
  tilec_status st = TILEC_OK;
  for (int32_t l = 0; l < m->launches && st == TILEC_OK; l++) { /* one launch after another */
    if (m->launches > 1) {
      memcpy(vals[n - 1], &l, sizeof l);
      bind[n - 1] = vals[n - 1];
    }
    st = tc_emu_dispatch(m->lib, m->entry, bind, n, groups, m->block, 0, err);
  }
  free(vals);
  free(bind);
  return st;
}

static void emu_unload(tc_loaded *m) {
  if (!m) return;
  tc_emu_library_free(m->lib);
  free(m->scalar_dtype);
  free(m->tensor);
  free(m);
}

const tc_backend tc_metal_emu_backend = {
    .target = "metal",
    .name = "emu",
    .flags = TC_BACKEND_HOST_TENSORS,
    .device_type = kDLCPU, /* the emulator runs on host tensors */
    .mem_alloc = tc_host_mem_alloc,
    .mem_free = tc_host_mem_free,
    .mem_copy = tc_host_mem_copy,
    .description = "the emulator: MSL built by the host C++ compiler against tilec's metal_stdlib, run on the CPU",
    .available = emu_available,
    .toolchain_id = emu_toolchain_id,
    .generate = tc_metal_emit,
    .build = emu_build,
    .load = emu_load,
    .launch = emu_launch,
    .unload = emu_unload,
    .payload = emu_payload,
};
