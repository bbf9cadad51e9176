/* emu_backend.c: the cuda target's `emu` backend: the CUDA C++ the code generator writes for
 * NVRTC, built by the host C++ compiler for the CPU (emu_build.c) and run by the emulator's
 * runner (emu_run.c), every CUDA thread a fiber. It is never a default (registry.c): a user asks
 * for it with `--backend emu`, to check generated CUDA where no GPU is at hand (CI) and to find
 * races and deadlocks as errors instead of flaky results. Tensors are host memory.
 *
 * The artifact is the cuda one (artifact.c) with the shared object where the cubin would be; the
 * launch follows runtime.c's: the same parameter bytes, tensor maps of the same geometry (in the
 * emulator's layout, tcg_emu_abi.h), the same persistent and cluster grids over an emulated
 * device of TILEC_CUDA_EMU_SMS multiprocessors (default 4) running one block each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda_internal.h"
#include "target/cuda/emu/tcg_emu_abi.h"
#include "target/cuda/emu_build.h"
#include "target/cuda/emu_run.h"
#include "util/diag.h"

struct tc_loaded {
  tc_cuemu_lib *lib;
  tc_cuda_meta meta;
  int nparams, nsyms;
  bool *tensor;
  tc_dtype *dtype; /* scalars */
  char **names;
};

static bool emu_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  return tc_cxx_available(NULL, why, cap);
}

static char *emu_toolchain_id(const tc_backend_env *env, tilec_error *err) {
  (void)env;
  return tc_cxx_toolchain_id(NULL, "cuda-emu", TC_CUEMU_ABI, err);
}

static tilec_status emu_build(const tc_backend_env *env, const tc_generated *src, void **artifact, size_t *artifact_size,
                              tilec_error *err) {
  (void)env;
  *artifact = NULL;
  *artifact_size = 0;
  if (!src || !src->full_source || !src->meta) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda emu build: no source or metadata");
    return TILEC_ERROR_INTERNAL;
  }
  void *so = NULL;
  size_t n = 0;
  tilec_status st = tc_cuemu_compile(src->full_source, &so, &n, NULL, err);
  if (st == TILEC_OK) st = tc_cuda_artifact_pack(src->meta, so, n, artifact, artifact_size, err);
  free(so);
  return st;
}

static void emu_unload(tc_loaded *m) {
  if (!m) return;
  tc_cuemu_lib_close(m->lib);
  if (m->names)
    for (int i = 0; i < m->nparams; i++) free(m->names[i]);
  free(m->names);
  free(m->tensor);
  free(m->dtype);
  free(m);
}

static tilec_status emu_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src, const void *artifact,
                             size_t artifact_size, tc_loaded **out, tilec_error *err) {
  (void)env;
  (void)src;
  *out = NULL;
  const char *meta;
  const void *so;
  size_t meta_len, so_size;
  tilec_status st = tc_cuda_artifact_unpack(artifact, artifact_size, &meta, &meta_len, &so, &so_size, err);
  if (st != TILEC_OK) return st;
  tc_loaded *m = calloc(1, sizeof *m);
  if (!m) goto nomem;
  m->nparams = k->nparams;
  m->nsyms = k->nsyms;
  m->tensor = calloc((size_t)k->nparams + 1, sizeof *m->tensor);
  m->dtype = calloc((size_t)k->nparams + 1, sizeof *m->dtype);
  m->names = calloc((size_t)k->nparams + 1, sizeof *m->names);
  if (!m->tensor || !m->dtype || !m->names) goto nomem;
  for (int i = 0; i < k->nparams; i++) {
    m->tensor[i] = k->params[i].buf != NULL;
    if (!m->tensor[i]) m->dtype[i] = k->params[i].var->dtype;
    if (!(m->names[i] = strdup(k->params[i].name))) goto nomem;
  }
  if ((st = tc_cuda_meta_parse(meta, meta_len, &m->meta, err)) != TILEC_OK) goto fail;
  for (int i = 0; i < m->meta.ntmaps; i++)
    if (m->meta.tmaps[i].param >= m->nparams || !m->tensor[m->meta.tmaps[i].param]) {
      tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: tensor map %d of '%s' names a parameter the kernel lacks", i, m->meta.entry);
      st = TILEC_ERROR_INTERNAL;
      goto fail;
    }
  if ((st = tc_cuemu_lib_open(so, so_size, &m->lib, err)) != TILEC_OK) goto fail;
  *out = m;
  return TILEC_OK;
nomem:
  tc_error(err, TILEC_ERROR_NOMEM, "out of memory loading an emulated cuda kernel");
  st = TILEC_ERROR_NOMEM;
fail:
  emu_unload(m);
  return st;
}

/* Blocks the emulated device runs at once: multiprocessors x 1, in whole clusters. */
static long emu_resident(int cluster) {
  const char *e = getenv("TILEC_CUDA_EMU_SMS");
  long sms = e && atol(e) > 0 ? atol(e) : 4;
  long c = cluster > 1 ? cluster : 1;
  return sms / c * c > 0 ? sms / c * c : c;
}

static tilec_status emu_check_grid(const tc_loaded *m, const int64_t grid[3], tilec_error *err) {
  return tc_cuda_check_grid(&m->meta, grid, err);
}

static tilec_status emu_launch(const tc_backend_env *env, tc_loaded *m, const tc_launch_args *a, tilec_error *err) {
  (void)env;
  bool empty = false;
  tilec_status cs = tc_cuda_launch_check(&m->meta, m->nparams, m->nsyms, a, &empty, err);
  if (cs != TILEC_OK || empty) return cs;
  /* the launch's number (a kernel of several launches) sits between the symbolic dims and the maps */
  /* ... and the stream-K workspace, host memory for this launch (flags zeroed) */
  /* ... and the T.alloc_global workspaces, host memory the launch made (tc_launch_args) */
  int nl = m->meta.launches > 1, nk = m->meta.streamk > 0, nw = a->nworkspaces, nt = m->meta.ntmaps,
      n = m->nparams + m->nsyms + nl + nk + nw + nt, L = m->nparams + m->nsyms;
  void *sk_ws = NULL;
  unsigned char(*vals)[8] = calloc((size_t)(n > 0 ? n : 1), sizeof *vals);
  void **ptrs = calloc((size_t)(n > 0 ? n : 1), sizeof *ptrs);
  unsigned char *maps = nt ? aligned_alloc(64, 128 * (size_t)nt) : NULL;
  tilec_status st = TILEC_OK;
  if (!vals || !ptrs || (nt && !maps)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", m->meta.entry);
    st = TILEC_ERROR_NOMEM;
    goto done;
  }
  for (int i = 0; i < m->nparams; i++) {
    if (m->tensor[i]) memcpy(vals[i], &a->data[i], sizeof(void *));
    else tc_cuda_scalar_bytes(m->dtype[i], a->scalars[i], a->fscalars[i], vals[i]);
    ptrs[i] = vals[i];
  }
  for (int s = 0; s < m->nsyms; s++) {
    int32_t v = (int32_t)a->syms[s];
    memcpy(vals[m->nparams + s], &v, sizeof v);
    ptrs[m->nparams + s] = vals[m->nparams + s];
  }
  for (int w = 0; w < nw; w++) {
    memcpy(vals[L + nl + nk + w], &a->data[m->nparams + w], sizeof(void *));
    ptrs[L + nl + nk + w] = vals[L + nl + nk + w];
  }
  for (int i = 0; i < nt && st == TILEC_OK; i++) {
    const tc_cuda_tmap *t = &m->meta.tmaps[i];
    tc_cuemu_tmap e;
    memset(&e, 0, sizeof e);
    st = tc_cuda_tmap_geometry(&m->meta, m->names[t->param], t, a->data[t->param], a->syms, e.dims, e.strides, e.box, err);
    e.base = (unsigned long long)(uintptr_t)a->data[t->param];
    e.elem_bytes = (unsigned)t->eb;
    e.swizzle = (unsigned)tc_tma_span(t->cols, t->eb);
    memset(maps + 128 * (size_t)i, 0, 128);
    memcpy(maps + 128 * (size_t)i, &e, sizeof e);
    ptrs[L + nl + nk + nw + i] = maps + 128 * (size_t)i;
  }
  unsigned grid[3];
  int cluster = m->meta.cluster > 1 ? m->meta.cluster : 1;
  if (st == TILEC_OK) tc_cuda_launch_grid(&m->meta, a, emu_resident(cluster), grid);
  if (st == TILEC_OK && nk) {
    sk_ws = calloc((size_t)tc_cuda_streamk_bytes(&m->meta, grid[0]), 1);
    if (!sk_ws) {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory for the stream-K workspace of '%s'", m->meta.entry);
      st = TILEC_ERROR_NOMEM;
    }
    memcpy(vals[L + nl], &sk_ws, sizeof sk_ws);
    ptrs[L + nl] = vals[L + nl];
  }
  if (st == TILEC_OK) {
    unsigned block[3] = {(unsigned)m->meta.block[0], (unsigned)m->meta.block[1], (unsigned)m->meta.block[2]};
    if (nl) ptrs[L] = vals[L];
    for (int32_t l = 0; l < m->meta.launches && st == TILEC_OK; l++) { /* one launch after another */
      if (nl) memcpy(vals[L], &l, sizeof l);
      st = tc_cuemu_run(m->lib, m->meta.entry, ptrs, grid, block, (unsigned)cluster, (size_t)m->meta.smem, err);
    }
  }
done:
  free(sk_ws);
  free(vals);
  free(ptrs);
  free(maps);
  return st;
}

const tc_backend tc_cuda_emu_backend = {
    .target = "cuda",
    .name = "emu",
    .flags = TC_BACKEND_HOST_TENSORS,
    .device_type = kDLCPU, /* the emulator runs on host tensors */
    .mem_alloc = tc_host_mem_alloc,
    .mem_free = tc_host_mem_free,
    .mem_copy = tc_host_mem_copy,
    .description = "the emulator: the CUDA C++ built by the host C++ compiler, every CUDA thread run on the CPU",
    .available = emu_available,
    .toolchain_id = emu_toolchain_id,
    .generate = tc_cuda_emit,
    .build = emu_build,
    .load = emu_load,
    .launch = emu_launch,
    .check_grid = emu_check_grid,
    .unload = emu_unload,
    .payload = tc_cuda_payload,
};
