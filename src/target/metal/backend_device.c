/* backend_device.c: the `metal` backend's steps after code generation: load (compile the MSL
 * in process on the device through the runtime, runtime.h), launch (bind kDLMetal buffers and
 * scalars as the code generator declares them, dispatch on the queue), synchronize, its
 * availability and what `tilec backends` says about it. The device is Apple's on macOS and the
 * simulated one (sim.h) elsewhere: the same code runs against both.
 *
 * Binding ABI (codegen.c): [[buffer(i)]] is the i-th kernel parameter (a tensor's buffer at its
 * byte offset, or a scalar's bytes as tc_metal_scalar_type packs it), then each symbolic
 * dimension as an int. Threadgroup memory is declared inside the kernel (static), so the
 * dispatch sets none; its size (meta smem=) is checked against the device at load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/metal/codegen.h"
#include "target/metal/emu.h"
#include "target/metal/metal.h"
#include "target/metal/metal_rt.h"
#include "target/metal/runtime.h"
#include "target/metal/sim.h"
#include "util/diag.h"

struct tc_loaded {
  tc_mtl_rt *rt;
  tc_mtl_kernel *kern;
  char name[128];
  char entry[256];
  uint32_t block[3];
  int nparams, nsyms;
  int launches; /* a kernel of several launches (tc_kernel_ir.nlaunches): dispatches, one after another */
  bool *tensor;
  tc_dtype *scalar_dtype;
  char (*pname)[64];
};

tilec_status tc_metal_meta_parse(const char *meta, tc_metal_meta *out, tilec_error *err) {
  memset(out, 0, sizeof *out);
  const char *e = meta ? strstr(meta, "entry=") : NULL, *b = meta ? strstr(meta, "block=") : NULL;
  const char *s = meta ? strstr(meta, "smem=") : NULL, *a = meta ? strstr(meta, "arch=") : NULL;
  long long smem = 0;
  if (!e || !b || !a || sscanf(e, "entry=%255[A-Za-z0-9_]", out->entry) != 1 ||
      sscanf(b, "block=%u,%u,%u", &out->block[0], &out->block[1], &out->block[2]) != 3 ||
      sscanf(a, "arch=%31[A-Za-z0-9.+]", out->arch) != 1 || (s && sscanf(s, "smem=%lld", &smem) != 1) || smem < 0 ||
      !tc_metal_arch_parse(out->arch, &out->msl, &out->metal4)) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal: the code generator's meta lines are missing or damaged");
    return TILEC_ERROR_INTERNAL;
  }
  out->smem = (size_t)smem;
  return TILEC_OK;
}

tc_nsuint tc_metal_needed_language(const tc_metal_meta *m) {
  if (m->metal4 || m->msl >= 400) return TC_MTL_LANGUAGE(4, 0);
  return TC_MTL_LANGUAGE(m->msl / 100, m->msl % 100 / 10);
}

void tc_metal_device_unload(tc_loaded *m) {
  if (!m) return;
  tc_mtl_kernel_free(m->kern);
  free(m->tensor);
  free(m->scalar_dtype);
  free(m->pname);
  free(m);
}

/* Loads a kernel from its MSL source or, when `source` is NULL, from a metallib. */
static tilec_status load_common(const tc_kernel_ir *k, const char *meta_text, const char *source, const void *metallib,
                                size_t metallib_size, tc_loaded **out, tilec_error *err) {
  *out = NULL;
  tc_metal_meta meta;
  tilec_status st = tc_metal_meta_parse(meta_text, &meta, err);
  if (st != TILEC_OK) return st;
  char why[sizeof err->message];
  tc_mtl_rt *rt = tc_mtl_rt_shared(why, sizeof why);
  if (!rt) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot load '%s' on Metal: %s", k->name, why);
    return TILEC_ERROR_TARGET;
  }
  if (meta.smem > tc_mtl_rt_max_threadgroup_memory(rt)) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s' needs %zu bytes of threadgroup memory; the Metal device has %zu", k->name,
             meta.smem, tc_mtl_rt_max_threadgroup_memory(rt));
    return TILEC_ERROR_TARGET;
  }
  tc_loaded *m = calloc(1, sizeof *m);
  size_t np = (size_t)(k->nparams > 0 ? k->nparams : 1);
  if (!m || !(m->tensor = calloc(np, sizeof *m->tensor)) || !(m->scalar_dtype = calloc(np, sizeof *m->scalar_dtype)) ||
      !(m->pname = calloc(np, sizeof *m->pname))) {
    tc_metal_device_unload(m);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory loading '%s'", k->name);
    return TILEC_ERROR_NOMEM;
  }
  m->rt = rt;
  snprintf(m->name, sizeof m->name, "%s", k->name);
  snprintf(m->entry, sizeof m->entry, "%s", meta.entry);
  memcpy(m->block, meta.block, sizeof m->block);
  m->nparams = k->nparams;
  m->nsyms = k->nsyms;
  m->launches = k->nlaunches > 1 ? k->nlaunches : 1;
  for (int i = 0; i < k->nparams; i++) {
    m->tensor[i] = k->params[i].buf != NULL;
    if (!m->tensor[i]) m->scalar_dtype[i] = k->params[i].var->dtype;
    snprintf(m->pname[i], sizeof m->pname[i], "%s", k->params[i].name);
  }
  tc_nsuint needs = tc_metal_needed_language(&meta);
  st = source ? tc_mtl_kernel_create(rt, k->name, source, meta.entry, needs, meta.block, 0, &m->kern, err)
              : tc_mtl_kernel_from_metallib(rt, k->name, metallib, metallib_size, meta.entry, needs, meta.block, 0,
                                            &m->kern, err);
  if (st != TILEC_OK) {
    tc_metal_device_unload(m);
    return st;
  }
  *out = m;
  return TILEC_OK;
}

tilec_status tc_metal_device_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                                  const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err) {
  (void)env;
  (void)artifact;
  (void)artifact_size;
  *out = NULL;
  if (!src || !src->full_source) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal load: no source");
    return TILEC_ERROR_INTERNAL;
  }
  return load_common(k, src->meta, src->full_source, NULL, 0, out, err);
}

tilec_status tc_metal_metallib_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                                    const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err) {
  (void)env;
  (void)src;
  *out = NULL;
  const char *meta;
  const void *lib;
  size_t lib_size;
  if (!tc_metal_metallib_unpack(artifact, artifact_size, &meta, &lib, &lib_size)) {
    tc_error(err, TILEC_ERROR_TARGET, "not a tilec metallib artifact (its header is missing or damaged)");
    return TILEC_ERROR_TARGET;
  }
  return load_common(k, meta, NULL, lib, lib_size, out, err);
}

/* A scalar's bytes as its `constant T &` parameter reads them (tc_metal_scalar_type). */
static size_t scalar_bytes(tc_dtype d, int64_t ival, double fval, unsigned char out[8]) {
  memset(out, 0, 8);
  const char *t = tc_metal_scalar_type(d);
  if (!strcmp(t, "float")) {
    float f = (float)fval;
    memcpy(out, &f, 4);
    return 4;
  }
  if (!strcmp(t, "long") || !strcmp(t, "ulong")) {
    memcpy(out, &ival, 8);
    return 8;
  }
  int32_t v = tc_dtype_is_bool(d) ? ival != 0 : (int32_t)ival;
  memcpy(out, &v, 4);
  return 4;
}

tilec_status tc_metal_device_launch(const tc_backend_env *env, tc_loaded *m, const tc_launch_args *a, tilec_error *err) {
  (void)env;
  if (a->nparams != m->nparams || a->nsyms != m->nsyms || !a->offsets || !a->nbytes) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal launch: arguments do not fit the loaded kernel");
    return TILEC_ERROR_INTERNAL;
  }
  if (!a->grid_known) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s': the grid cannot be computed on the host", m->name);
    return TILEC_ERROR_TARGET;
  }
  uint32_t groups[3];
  for (int i = 0; i < 3; i++) {
    if (a->grid[i] <= 0) return TILEC_OK; /* an empty grid runs nothing */
    if (a->grid[i] > UINT32_MAX) {
      tc_error(err, TILEC_ERROR_USAGE, "launch grid dimension %lld is too large for Metal", (long long)a->grid[i]);
      return TILEC_ERROR_USAGE;
    }
    groups[i] = (uint32_t)a->grid[i];
  }
  int n = m->nparams + m->nsyms + (m->launches > 1); /* the launch's number last */
  tc_mtl_arg *args = calloc((size_t)(n > 0 ? n : 1), sizeof *args);
  unsigned char(*vals)[8] = calloc((size_t)(n > 0 ? n : 1), sizeof *vals);
  if (!args || !vals) {
    free(args);
    free(vals);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", m->name);
    return TILEC_ERROR_NOMEM;
  }
  tilec_status st = TILEC_OK;
  for (int i = 0; i < m->nparams && st == TILEC_OK; i++) {
    if (!m->tensor[i]) {
      args[i].nbytes = scalar_bytes(m->scalar_dtype[i], a->scalars[i], a->fscalars[i], vals[i]);
      args[i].bytes = vals[i];
      continue;
    }
    size_t len = 0;
    if (!tc_mtl_buffer_info(m->rt, a->data[i], &len, NULL)) {
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s' is not a Metal buffer (a kDLMetal tensor's data is its id<MTLBuffer>)",
               m->pname[i]);
      st = TILEC_ERROR_USAGE;
    } else if (a->offsets[i] < 0 || a->nbytes[i] < 0 || (uint64_t)a->offsets[i] > len ||
               (uint64_t)a->nbytes[i] > len - (uint64_t)a->offsets[i]) {
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s': %lld bytes at offset %lld do not fit its Metal buffer of %zu bytes",
               m->pname[i], (long long)a->nbytes[i], (long long)a->offsets[i], len);
      st = TILEC_ERROR_USAGE;
    }
    args[i].buffer = a->data[i];
    args[i].offset = (size_t)a->offsets[i];
  }
  for (int s = 0; s < m->nsyms; s++) {
    int32_t v = (int32_t)a->syms[s];
    memcpy(vals[m->nparams + s], &v, sizeof v);
    args[m->nparams + s].bytes = vals[m->nparams + s];
    args[m->nparams + s].nbytes = sizeof v;
  }
  /* each launch its own dispatch (its own compute encoder): Metal runs them in order, each
   * seeing the previous one's writes */
  for (int32_t l = 0; l < m->launches && st == TILEC_OK; l++) {
    if (m->launches > 1) {
      memcpy(vals[n - 1], &l, sizeof l);
      args[n - 1].bytes = vals[n - 1];
      args[n - 1].nbytes = sizeof l;
    }
    st = tc_mtl_dispatch(m->rt, a->stream, m->kern, args, n, groups, !a->async && l == m->launches - 1, err);
  }
  free(args);
  free(vals);
  return st;
}

tilec_status tc_metal_device_synchronize(const tc_backend_env *env, void *stream, tilec_error *err) {
  (void)env;
  char why[sizeof err->message];
  tc_mtl_rt *rt = tc_mtl_rt_shared(why, sizeof why);
  if (!rt) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot synchronize Metal: %s", why);
    return TILEC_ERROR_TARGET;
  }
  return tc_mtl_flush(rt, stream, NULL, err);
}

bool tc_metal_device_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
#ifndef __APPLE__
  /* the simulated device runs kernels on the emulator, which needs the C++ compiler */
  if (tc_mtl_sim_config_error(why, cap)) return false;
  if (!tc_emu_available(NULL, why, cap)) return false;
#endif
  return tc_mtl_rt_shared(why, cap) != NULL;
}

int tc_metal_device_details(const tc_backend_env *env, tc_backend_detail *out) {
  int n = 0;
  char why[512];
  tc_mtl_rt *rt = tc_mtl_rt_shared(why, sizeof why);
#define DETAIL(k, ...) (snprintf(out[n].key, sizeof out[n].key, "%s", k), snprintf(out[n].value, sizeof out[n].value, __VA_ARGS__), n++)
#ifdef __APPLE__
  DETAIL("device", "Metal.framework");
#else
  DETAIL("device", "simulated Metal device (no Metal off macOS: kernels run on the Metal emulator)");
#endif
  tc_mtl_storage opt = env && env->desc.target && strcmp(env->desc.target, "metal") == 0 ? (tc_mtl_storage)env->desc.storage_mode
                                                                                         : TC_MTL_STORAGE_UNSET;
  tc_mtl_storage mode;
  const char *source;
  tilec_error err = {0};
  if (tc_mtl_storage_resolve(opt, &mode, &source, &err) == TILEC_OK) {
    DETAIL("storage_mode", "%s", tc_mtl_storage_name(mode));
    DETAIL("storage_mode_source", "%s", source);
  } else {
    DETAIL("storage_mode", "error");
    DETAIL("storage_mode_source", "%s", err.message);
  }
  if (rt) {
    char t[48];
    tc_mtl_language_text(tc_mtl_rt_language(rt), t, sizeof t);
    DETAIL("msl", "%s", t);
    DETAIL("msl_reason", "%s", tc_mtl_rt_language_why(rt));
  }
#undef DETAIL
  return n;
}

