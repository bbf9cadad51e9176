/* runtime.c: the cuda backends' steps around the code generator: the metadata from its outputs,
 * toolchain identity, building the artifact (NVRTC or nvcc), loading it with the driver and
 * launching it (parameter ABI in cuda.h).
 *
 * A loaded module is shared by every kernel the in-memory cache hands it to, so it keeps what
 * launches need (parameter kinds, names and sizes; the cubin) and no pointer into any kernel's
 * IR. It is loaded into device 0's primary context at load time (so a bad cubin fails the
 * compile), and into another device's the first time a launch's tensors live there. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda_internal.h"
#include "util/diag.h"

#define MAX_DEVICES 16
#define MAX_WORKSPACES 64 /* T.alloc_global buffers of one kernel */

/* ---- generate: the code generator, then the metadata from what it returned ---- */

tilec_status tc_cuda_emit(const tc_lowered *lw, tc_generated *out, tilec_error *err) {
  memset(out, 0, sizeof *out);
  const char *arch = lw->desc->arch;
  char entry[256] = "";
  int64_t smem = 0;
  int block[3] = {0, 0, 0};
  tilec_status st = tc_cuda_generate_for(lw->k, arch, (tc_cuda_opts){lw->desc->clusters == 1, lw->desc->streamk == 1, lw->desc->plant}, out, entry, sizeof entry, &smem, block, err);
  if (st != TILEC_OK) {
    tc_generated_free(out);
    return st;
  }
  if (!out->full_source || !out->kernel_source) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda code generator returned no source");
    tc_generated_free(out);
    return TILEC_ERROR_INTERNAL;
  }
  char meta[2048];
  /* the generator's own lines (tensor maps) follow the ones made here */
  int n = snprintf(meta, sizeof meta, "entry=%s\nblock=%d,%d,%d\nsmem=%lld\narch=%s\n%s", entry, block[0], block[1],
                   block[2], (long long)smem, arch, out->meta ? out->meta : "");
  free(out->meta);
  out->meta = NULL;
  tc_cuda_meta m;
  /* the runtime's own parse checks what the generator returned (identifier, block, smem) */
  if (n < 0 || (size_t)n >= sizeof meta) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda code generator returned an entry name too long");
    st = TILEC_ERROR_INTERNAL;
  } else if ((st = tc_cuda_meta_parse(meta, (size_t)n, &m, err)) == TILEC_OK && !(out->meta = strdup(meta))) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory generating '%s'", entry);
    st = TILEC_ERROR_NOMEM;
  }
  if (st != TILEC_OK) tc_generated_free(out);
  return st;
}

/* ---- toolchain ids: compiler identity; the arch is in the cache key's target options ---- */

char *tc_cuda_nvrtc_toolchain_id(const tc_backend_env *env, tilec_error *err) {
  (void)env;
  return tc_nvrtc_identity(err);
}

char *tc_cuda_nvcc_toolchain_id(const tc_backend_env *env, tilec_error *err) {
  (void)env;
  return tc_nvcc_identity(err);
}

/* ---- build ---- */

typedef tilec_status (*compile_fn)(const char *src, const char *arch, void **cubin, size_t *size, tilec_error *err);

static tilec_status build_with(compile_fn compile, const tc_backend_env *env, const tc_generated *src,
                               void **artifact, size_t *artifact_size, tilec_error *err) {
  *artifact = NULL;
  *artifact_size = 0;
  if (!src || !src->full_source || !src->meta) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda build: no source or metadata");
    return TILEC_ERROR_INTERNAL;
  }
  void *cubin = NULL;
  size_t n = 0;
  tilec_status st = compile(src->full_source, env->desc.arch, &cubin, &n, err);
  if (st == TILEC_OK) st = tc_cuda_artifact_pack(src->meta, cubin, n, artifact, artifact_size, err);
  free(cubin);
  return st;
}

tilec_status tc_cuda_nvrtc_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                                 size_t *artifact_size, tilec_error *err) {
  return build_with(tc_nvrtc_compile, env, src, artifact, artifact_size, err);
}

tilec_status tc_cuda_nvcc_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                                size_t *artifact_size, tilec_error *err) {
  return build_with(tc_nvcc_compile, env, src, artifact, artifact_size, err);
}

/* ---- load ---- */

typedef struct param_abi {
  char name[64];
  bool tensor;
  tc_dtype dtype; /* scalars */
  int size;       /* scalars: bytes passed */
} param_abi;

typedef struct device_slot {
  bool loaded;
  tc_cu_context ctx;
  tc_cu_module module;
  tc_cu_function fn;
  int resident; /* blocks the device runs at once (persistent kernels), after loading */
  /* Device memory the kernel's launches share (scratch_layout): stream-K's workspace for
   * `resident` blocks (meta streamk=), then the T.alloc_global workspaces; and the last launch's
   * stream and completion, so that a launch on another stream waits for it. Guarded by mu. */
  tc_cu_devptr scratch;
  size_t scratch_bytes;
  tc_cu_event done;
  bool has_event;
  tc_cu_stream last_stream;
  bool launched;
} device_slot;

struct tc_loaded {
  const tc_cu_api *cu;
  tc_cuda_meta meta;
  void *cubin;
  size_t cubin_size;
  int nparams, nsyms;
  param_abi *params;
  pthread_mutex_t mu; /* guards loading into further devices */
  device_slot dev[MAX_DEVICES];
};

/* Where each part of the scratch memory lies: stream-K's workspace at 0, then the workspaces,
 * each on a 256-byte boundary. Returns the bytes needed (0: none). */
static size_t scratch_layout(const tc_loaded *m, const device_slot *s, const tc_launch_args *a, size_t *ws_at) {
  size_t at = m->meta.streamk ? ((size_t)tc_cuda_streamk_bytes(&m->meta, s->resident) + 255) & ~(size_t)255 : 0;
  for (int w = 0; w < a->nworkspaces; w++) {
    ws_at[w] = at;
    at += ((size_t)(a->ws_bytes[w] > 0 ? a->ws_bytes[w] : 1) + 255) & ~(size_t)255;
  }
  return at;
}

/* At least `bytes` of scratch on the device of slot s (current; mu held): a larger allocation
 * replaces a smaller one once the launches using it are done; stream-K's flags start zeroed
 * (its slots need nothing: every slot is written before it is read). */
static tilec_status scratch_reserve(tc_loaded *m, device_slot *s, size_t bytes, tilec_error *err) {
  const tc_cu_api *cu = m->cu;
  tc_cu_result r = TC_CU_SUCCESS;
  if (!s->has_event) {
    if ((r = cu->EventCreate(&s->done, 2 /* CU_EVENT_DISABLE_TIMING */)) != TC_CU_SUCCESS) return tc_cu_fail(err, cu, r, "cuEventCreate");
    s->has_event = true;
  }
  if (bytes <= s->scratch_bytes) return TILEC_OK;
  if (s->scratch) {
    if (s->launched) cu->EventSynchronize(s->done);
    cu->MemFree(s->scratch);
    s->scratch = 0, s->scratch_bytes = 0;
  }
  char what[320];
  snprintf(what, sizeof what, "allocating %zu bytes of workspace for kernel '%s'", bytes, m->meta.entry);
  if ((r = cu->MemAlloc(&s->scratch, bytes)) != TC_CU_SUCCESS) {
    s->scratch = 0;
    return tc_cu_fail(err, cu, r, what);
  }
  if (m->meta.streamk) {
    size_t flag_bytes = (size_t)s->resident * 4;
    unsigned *zero = calloc(flag_bytes, 1);
    r = zero ? cu->MemcpyHtoD(s->scratch, zero, flag_bytes) : TC_CU_SUCCESS;
    free(zero);
    if (!zero || r != TC_CU_SUCCESS) {
      cu->MemFree(s->scratch);
      s->scratch = 0;
      if (!zero) {
        tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", m->meta.entry);
        return TILEC_ERROR_NOMEM;
      }
      return tc_cu_fail(err, cu, r, what);
    }
  }
  s->scratch_bytes = bytes;
  return TILEC_OK;
}

/* Load the cubin into device `d` (its primary context, made current). */
static tilec_status load_on(tc_loaded *m, int d, tilec_error *err) {
  const tc_cu_api *cu = m->cu;
  device_slot *s = &m->dev[d];
  tilec_status st = tc_cu_retain_device(cu, d, &s->ctx, err);
  if (st != TILEC_OK) return st;
  tc_cu_device dev;
  int optin = 0;
  tc_cu_result r = cu->DeviceGet(&dev, d);
  if (r == TC_CU_SUCCESS) r = cu->DeviceGetAttribute(&optin, TC_CU_DEV_ATTR_MAX_SHARED_PER_BLOCK_OPTIN, dev);
  if (r == TC_CU_SUCCESS && m->meta.smem > optin) {
    tc_error(err, TILEC_ERROR_TARGET,
             "kernel '%s' needs %lld bytes of shared memory per block; device %d allows at most %d",
             m->meta.entry, (long long)m->meta.smem, d, optin);
    tc_cu_release_device(cu, d);
    return TILEC_ERROR_TARGET;
  }
  if (r == TC_CU_SUCCESS) r = cu->ModuleLoadData(&s->module, m->cubin);
  if (r != TC_CU_SUCCESS) {
    tc_cu_release_device(cu, d);
    return tc_cu_fail(err, cu, r, "loading the cubin (cuModuleLoadData)");
  }
  r = cu->ModuleGetFunction(&s->fn, s->module, m->meta.entry);
  if (r == TC_CU_SUCCESS && m->meta.smem > 48 * 1024)
    r = cu->FuncSetAttribute(s->fn, TC_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)m->meta.smem);
  if (r != TC_CU_SUCCESS) {
    cu->ModuleUnload(s->module);
    tc_cu_release_device(cu, d);
    char what[320];
    snprintf(what, sizeof what, "preparing kernel entry '%s'", m->meta.entry);
    return tc_cu_fail(err, cu, r, what);
  }
  /* a persistent kernel launches as many blocks as run at once: multiprocessors x blocks each */
  int sms = 0, per_sm = 0;
  if (m->meta.persistent) {
    if (cu->DeviceGetAttribute(&sms, TC_CU_DEV_ATTR_MULTIPROCESSOR_COUNT, dev) != TC_CU_SUCCESS || sms < 1) sms = 1;
    if (!cu->OccupancyMaxActiveBlocksPerMultiprocessor ||
        cu->OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s->fn, m->meta.block[0] * m->meta.block[1] * m->meta.block[2],
                                                      (size_t)m->meta.smem) != TC_CU_SUCCESS || per_sm < 1)
      per_sm = 1;
  }
  s->resident = sms * per_sm;
  if (m->meta.persistent && m->meta.cluster > 1) {
    /* whole clusters, and no more than run at once: a cluster that waits for another to
     * finish would double the kernel's time (clusters live in one GPC, which may leave SMs
     * idle) */
    int C = m->meta.cluster, clusters = 0;
    tc_cu_launch_config lc = {{(unsigned)(C * sms), 1, 1},
                              {(unsigned)m->meta.block[0], (unsigned)m->meta.block[1], (unsigned)m->meta.block[2]},
                              (unsigned)m->meta.smem, NULL, NULL, 0};
    if (cu->OccupancyMaxActiveClusters && cu->OccupancyMaxActiveClusters(&clusters, s->fn, &lc) == TC_CU_SUCCESS && clusters > 0 &&
        clusters * C <= s->resident)
      s->resident = clusters * C;
    else
      s->resident = s->resident / C * C;
    if (s->resident < C) s->resident = C;
  }
  s->loaded = true;
  return TILEC_OK;
}

int tc_cuda_scalar_size(tc_dtype dt) {
  int bits = tc_dtype_bits(dt);
  return bits <= 8 ? 1 : bits / 8;
}

void tc_cuda_unload(tc_loaded *m) {
  if (!m) return;
  for (int d = 0; d < MAX_DEVICES; d++) {
    if (!m->dev[d].loaded) continue;
    m->cu->CtxSetCurrent(m->dev[d].ctx);
    if (m->dev[d].has_event) { /* launches still running use the scratch */
      m->cu->EventSynchronize(m->dev[d].done);
      m->cu->EventDestroy(m->dev[d].done);
    }
    if (m->dev[d].scratch) m->cu->MemFree(m->dev[d].scratch);
    m->cu->ModuleUnload(m->dev[d].module);
    tc_cu_release_device(m->cu, d);
  }
  pthread_mutex_destroy(&m->mu);
  free(m->params);
  free(m->cubin);
  free(m);
}

tilec_status tc_cuda_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                          const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err) {
  (void)src;
  *out = NULL;
  if (env->build_only) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda: load called for a build-only compile");
    return TILEC_ERROR_INTERNAL;
  }
  const char *meta_text;
  const void *cubin;
  size_t meta_len, cubin_size;
  tilec_status st = tc_cuda_artifact_unpack(artifact, artifact_size, &meta_text, &meta_len, &cubin, &cubin_size, err);
  if (st != TILEC_OK) return st;
  char why[256];
  const tc_cu_api *cu = tc_cu_api_get(why, sizeof why);
  if (!cu || cu->device_count <= 0) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot load the cuda kernel: %s", cu ? "no CUDA device found" : why);
    return TILEC_ERROR_TARGET;
  }
  tc_loaded *m = calloc(1, sizeof *m);
  if (!m) goto nomem;
  pthread_mutex_init(&m->mu, NULL);
  m->cu = cu;
  if ((st = tc_cuda_meta_parse(meta_text, meta_len, &m->meta, err)) != TILEC_OK) goto fail;
  m->cubin = malloc(cubin_size);
  m->params = calloc((size_t)(k->nparams > 0 ? k->nparams : 1), sizeof *m->params);
  if (!m->cubin || !m->params) goto nomem;
  memcpy(m->cubin, cubin, cubin_size);
  m->cubin_size = cubin_size;
  m->nparams = k->nparams;
  m->nsyms = k->nsyms;
  for (int i = 0; i < k->nparams; i++) {
    param_abi *p = &m->params[i];
    snprintf(p->name, sizeof p->name, "%s", k->params[i].name);
    p->tensor = k->params[i].buf != NULL;
    if (!p->tensor) {
      p->dtype = k->params[i].var->dtype;
      p->size = tc_cuda_scalar_size(p->dtype);
    }
  }
  /* tensor maps name tensor parameters and symbolic dims the kernel has */
  for (int i = 0; i < m->meta.ntmaps; i++) {
    const tc_cuda_tmap *t = &m->meta.tmaps[i];
    bool ok = t->param < m->nparams && m->params[t->param].tensor;
    for (int j = 0; ok && j < t->nlead; j++) ok = t->lead[j] >= 0 || -(t->lead[j] + 1) < m->nsyms;
    if (!ok) {
      tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: tensor map %d of '%s' names a parameter or dim the kernel lacks", i, m->meta.entry);
      st = TILEC_ERROR_INTERNAL;
      goto fail;
    }
  }
  tc_cu_context saved = NULL;
  cu->CtxGetCurrent(&saved);
  st = load_on(m, 0, err);
  cu->CtxSetCurrent(saved);
  if (st != TILEC_OK) goto fail;
  *out = m;
  return TILEC_OK;
nomem:
  tc_error(err, TILEC_ERROR_NOMEM, "out of memory loading a cuda kernel");
  st = TILEC_ERROR_NOMEM;
fail:
  tc_cuda_unload(m);
  return st;
}

/* ---- launch ---- */

/* The TMA tensor map of meta line t for this launch's tensor (cuda.h, "tmap="; tcg_tma.cuh):
 * five dimensions, innermost first: a panel's row (128 bytes of an atom, or the whole 64- or
 * 32-byte row of a narrower tile: tc_tma_span), the 8 rows of a group, the panels, the 8-row
 * groups, the leading dimensions flattened. A tensor of fewer than 8
 * rows is one group of R rows (the box's rows past R arrive as zeros; stores drop them); one of
 * more rows not in whole groups takes the row form, a map over single rows for one-panel tiles.
 * The driver encodes it (below); the emulator reads the same numbers (emu_backend.c). */
tilec_status tc_cuda_tmap_geometry(const tc_cuda_meta *meta, const char *name, const tc_cuda_tmap *t, const void *addr,
                                   const int64_t *syms, uint64_t dims[5], uint64_t strides[4], unsigned box[5],
                                   tilec_error *err) {
  if ((uintptr_t)addr % 16) {
    tc_error(err, TILEC_ERROR_USAGE,
             "argument '%s': kernel '%s' (%s) loads it with TMA, which needs its data 16-byte aligned (it is at %p); pass an "
             "aligned tensor or compile for sm_80",
             name, meta->entry, meta->arch, addr);
    return TILEC_ERROR_USAGE;
  }
  uint64_t lead = 1;
  for (int j = 0; j < t->nlead; j++) {
    int64_t v = t->lead[j] >= 0 ? t->lead[j] : syms[-(t->lead[j] + 1)];
    lead *= (uint64_t)(v > 0 ? v : 0);
  }
  if (lead == 0 || lead > (1ull << 32)) {
    tc_error(err, TILEC_ERROR_USAGE, "argument '%s': kernel '%s' loads it with TMA, which needs between 1 and 2^32 leading slices (it has %llu)",
             name, meta->entry, (unsigned long long)lead);
    return TILEC_ERROR_USAGE;
  }
  /* a panel: 128 bytes, or the whole 64- or 32-byte row of a narrower tile (tc_tma_span) */
  uint64_t W = (uint64_t)tc_tma_span(t->cols, t->eb), eb = (uint64_t)t->eb, A = W / eb, C = (uint64_t)t->C, R = (uint64_t)t->R;
  uint64_t d[5] = {A, 8, C / A, R / 8, lead};
  uint64_t s[4] = {C * eb, W, 8 * C * eb, R * C * eb};
  unsigned b[5] = {(unsigned)A, 8, (unsigned)(t->cols / (int64_t)A), (unsigned)(t->rows / 8), 1};
  if (R < 8) { /* the short form: one 8-row group of which R rows exist, zeros past them */
    d[1] = R, d[3] = 1;
  } else if (R % 8) { /* the row form (tcg_tma_load_rows; the tile is one panel): single rows, zeros past R */
    uint64_t rd[5] = {A, R, C / A, lead, 1}, rs[4] = {C * eb, W, R * C * eb, R * C * eb};
    unsigned rb[5] = {(unsigned)A, (unsigned)t->rows, 1, 1, 1};
    memcpy(d, rd, sizeof d), memcpy(s, rs, sizeof s), memcpy(b, rb, sizeof b);
  }
  memcpy(dims, d, sizeof d), memcpy(strides, s, sizeof s), memcpy(box, b, sizeof b);
  return TILEC_OK;
}

static tilec_status encode_tmap(const tc_cu_api *cu, const tc_loaded *m, const tc_cuda_tmap *t, const tc_launch_args *a,
                                tc_cu_tensor_map *map, tilec_error *err) {
  const char *name = t->param < m->nparams ? m->params[t->param].name : "?";
  if (!cu->TensorMapEncodeTiled) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s' loads '%s' with TMA, which needs cuTensorMapEncodeTiled (a CUDA 12 driver or newer)",
             m->meta.entry, name);
    return TILEC_ERROR_TARGET;
  }
  uint64_t dims[5], strides[4];
  unsigned box[5];
  tilec_status st = tc_cuda_tmap_geometry(&m->meta, name, t, a->data[t->param], a->syms, dims, strides, box, err);
  if (st != TILEC_OK) return st;
  unsigned es[5] = {1, 1, 1, 1, 1};
  /* uint8 / uint16 / uint32 data, no interleave, the tile's swizzle (CU_TENSOR_MAP_SWIZZLE_32B,
   * 64B, 128B: 1, 2, 3), 128-byte L2 promotion, zeros outside */
  int span = tc_tma_span(t->cols, t->eb), swizzle = span == 128 ? 3 : span == 64 ? 2 : 1;
  tc_cu_result r =
      cu->TensorMapEncodeTiled(map, t->eb == 1 ? 0 : t->eb == 2 ? 1 : 2, 5, a->data[t->param], dims, strides, box, es, 0, swizzle, 2, 0);
  if (r != TC_CU_SUCCESS) {
    char what[640];
    snprintf(what, sizeof what, "making the TMA tensor map of '%s' for kernel '%s' (cuTensorMapEncodeTiled)", name, m->meta.entry);
    return tc_cu_fail(err, cu, r, what);
  }
  return TILEC_OK;
}

void tc_cuda_scalar_bytes(tc_dtype dt, int64_t ival, double fval, unsigned char out[8]) {
  memset(out, 0, 8);
  if (tc_dtype_is_float(dt)) {
    tc_dtype_store_f64(dt, out, 0, fval);
  } else {
    uint64_t u = (uint64_t)ival; /* two's complement, little-endian: the low bytes */
    for (int b = 0; b < tc_cuda_scalar_size(dt); b++) out[b] = (unsigned char)(u >> (8 * b));
    if (tc_dtype_is_bool(dt)) out[0] = ival != 0;
  }
}

tilec_status tc_cuda_launch_check(const tc_cuda_meta *meta, int nparams, int nsyms, const tc_launch_args *a, bool *empty,
                                  tilec_error *err) {
  *empty = false;
  if (a->nparams != nparams || a->nsyms != nsyms) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda launch: argument counts differ from the loaded kernel's");
    return TILEC_ERROR_INTERNAL;
  }
  if (!a->grid_known) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s': the grid cannot be computed on the host", meta->entry);
    return TILEC_ERROR_TARGET;
  }
  for (int i = 0; i < 3; i++) {
    if (a->grid[i] <= 0) { /* an empty grid runs nothing */
      *empty = true;
      return TILEC_OK;
    }
  }
  return tc_cuda_check_grid(meta, a->grid, err);
}

/* A kernel that walks its tiles or folds its grid launches along x (tc_cuda_launch_grid): only
 * the count of blocks is limited; any other, each dimension. */
tilec_status tc_cuda_check_grid(const tc_cuda_meta *meta, const int64_t grid[3], tilec_error *err) {
  if (meta->walks_tiles || meta->folds) {
    if (grid[0] > INT32_MAX / grid[1] / grid[2]) {
      tc_error(err, TILEC_ERROR_USAGE, "launch grid (%lld, %lld, %lld) has more than 2^31 - 1 blocks", (long long)grid[0],
               (long long)grid[1], (long long)grid[2]);
      return TILEC_ERROR_USAGE;
    }
    return TILEC_OK;
  }
  for (int i = 0; i < 3; i++)
    if (grid[i] > (i == 0 ? INT32_MAX : 65535)) {
      tc_error(err, TILEC_ERROR_USAGE, "launch grid (%lld, %lld, %lld) exceeds CUDA's limits (2^31 - 1 blocks along x, 65535 along y and z)",
               (long long)grid[0], (long long)grid[1], (long long)grid[2]);
      return TILEC_ERROR_USAGE;
    }
  return TILEC_OK;
}

tilec_status tc_cuda_loaded_check_grid(const tc_loaded *m, const int64_t grid[3], tilec_error *err) {
  return tc_cuda_check_grid(&m->meta, grid, err);
}

void tc_cuda_launch_grid(const tc_cuda_meta *meta, const tc_launch_args *a, int64_t resident, unsigned grid[3]) {
  /* tc_cuda_launch_check bounded the grid */
  grid[0] = (unsigned)a->grid[0], grid[1] = (unsigned)a->grid[1], grid[2] = (unsigned)a->grid[2];
  if (meta->folds && (a->grid[1] > 65535 || a->grid[2] > 65535)) { /* the kernel unfolds it (codegen.c fold_grid) */
    grid[0] = (unsigned)(a->grid[0] * a->grid[1] * a->grid[2]); /* tc_cuda_check_grid bounded it */
    grid[1] = grid[2] = 1;
    return;
  }
  if (!meta->walks_tiles) return;
  /* the blocks walk the logical grid's tiles themselves (no more than 2^31 - 1: tc_cuda_check_grid) */
  int64_t tiles = a->grid[0] * a->grid[1] * a->grid[2];
  /* stream-K spreads fewer tiles than blocks over every block (tcg_sk_schedule) */
  grid[0] = (unsigned)(meta->persistent && (tiles > resident || meta->streamk > 0) ? resident : tiles);
  grid[1] = grid[2] = 1;
}

tilec_status tc_cuda_launch(const tc_backend_env *env, tc_loaded *m, const tc_launch_args *a, tilec_error *err) {
  (void)env;
  const tc_cu_api *cu = m->cu;
  bool empty = false;
  tilec_status cs = tc_cuda_launch_check(&m->meta, m->nparams, m->nsyms, a, &empty, err);
  if (cs != TILEC_OK || empty) return cs;
  int d = a->device;
  if (d < 0 || d >= MAX_DEVICES || d >= cu->device_count) {
    tc_error(err, TILEC_ERROR_USAGE, "CUDA device %d does not exist (%d device%s)", d, cu->device_count,
             cu->device_count == 1 ? "" : "s");
    return TILEC_ERROR_USAGE;
  }
  tc_cu_context saved = NULL;
  cu->CtxGetCurrent(&saved);
  tilec_status st = TILEC_OK;
  pthread_mutex_lock(&m->mu);
  if (!m->dev[d].loaded) st = load_on(m, d, err);
  pthread_mutex_unlock(&m->mu);
  if (st != TILEC_OK) goto done;
  tc_cu_result r = cu->CtxSetCurrent(m->dev[d].ctx);
  if (r != TC_CU_SUCCESS) {
    st = tc_cu_fail(err, cu, r, "cuCtxSetCurrent");
    goto done;
  }
  /* Argument values, then pointers to them, as cuLaunchKernel takes them; tensor maps last. */
  /* the launch's number (a kernel of several launches), the stream-K workspace and the
   * T.alloc_global workspaces sit between the symbolic dims and the maps */
  int nl = m->meta.launches > 1, nk = m->meta.streamk > 0, nw = a->nworkspaces, nt = m->meta.ntmaps,
      n = m->nparams + m->nsyms + nl + nk + nw + nt, L = m->nparams + m->nsyms;
  if (nw > MAX_WORKSPACES) {
    tc_error(err, TILEC_ERROR_USAGE, "kernel '%s' has %d global workspaces (T.alloc_global); the cuda runtime takes at most %d",
             m->meta.entry, nw, MAX_WORKSPACES);
    st = TILEC_ERROR_USAGE;
    goto done;
  }
  unsigned char(*vals)[8] = calloc((size_t)(n > 0 ? n : 1), sizeof *vals);
  void **ptrs = calloc((size_t)(n > 0 ? n : 1), sizeof *ptrs);
  tc_cu_tensor_map *maps = nt ? aligned_alloc(64, sizeof *maps * (size_t)nt) : NULL;
  if (!vals || !ptrs || (nt && !maps)) {
    free(vals);
    free(ptrs);
    free(maps);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", m->meta.entry);
    st = TILEC_ERROR_NOMEM;
    goto done;
  }
  for (int i = 0; i < m->nparams && st == TILEC_OK; i++) {
    const param_abi *p = &m->params[i];
    if (p->tensor) {
      tc_cu_devptr dp = (tc_cu_devptr)(uintptr_t)a->data[i];
      unsigned mem_type = 0;
      if (dp && (cu->PointerGetAttribute(&mem_type, TC_CU_POINTER_ATTR_MEMORY_TYPE, dp) != TC_CU_SUCCESS ||
                 (mem_type != TC_CU_MEMORYTYPE_DEVICE && mem_type != TC_CU_MEMORYTYPE_UNIFIED))) {
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s' is not CUDA device memory (its data pointer is %p)", p->name,
                 a->data[i]);
        st = TILEC_ERROR_USAGE;
      }
      memcpy(vals[i], &dp, sizeof dp);
    } else {
      tc_cuda_scalar_bytes(p->dtype, a->scalars[i], a->fscalars[i], vals[i]);
    }
    ptrs[i] = vals[i];
  }
  for (int s = 0; s < m->nsyms; s++) {
    int32_t v = (int32_t)a->syms[s];
    memcpy(vals[m->nparams + s], &v, sizeof v);
    ptrs[m->nparams + s] = vals[m->nparams + s];
  }
  for (int i = 0; i < nt && st == TILEC_OK; i++) {
    st = encode_tmap(cu, m, &m->meta.tmaps[i], a, &maps[i], err);
    ptrs[L + nl + nk + nw + i] = &maps[i];
  }
  unsigned grid[3];
  if (st == TILEC_OK) tc_cuda_launch_grid(&m->meta, a, m->dev[d].resident, grid);
  if (st == TILEC_OK) {
    device_slot *ds = &m->dev[d];
    tc_cu_stream stream = (tc_cu_stream)a->stream;
    if (nl) ptrs[L] = vals[L];
    r = TC_CU_SUCCESS;
    size_t ws_at[MAX_WORKSPACES];
    bool shared = nk || nw; /* launches share the scratch: one on another stream waits for the last */
    if (shared) {
      pthread_mutex_lock(&m->mu);
      st = scratch_reserve(m, ds, scratch_layout(m, ds, a, ws_at), err);
      if (st == TILEC_OK && ds->launched && ds->last_stream != stream) r = cu->StreamWaitEvent(stream, ds->done, 0);
      if (nk) {
        memcpy(vals[L + nl], &ds->scratch, sizeof ds->scratch);
        ptrs[L + nl] = vals[L + nl];
      }
      for (int w = 0; w < nw && st == TILEC_OK && r == TC_CU_SUCCESS; w++) { /* zeroed before every launch, as the cpu's are */
        tc_cu_devptr p = ds->scratch + ws_at[w];
        memcpy(vals[L + nl + nk + w], &p, sizeof p);
        ptrs[L + nl + nk + w] = vals[L + nl + nk + w];
        if (a->ws_bytes[w] > 0) r = cu->MemsetD8Async(p, 0, (size_t)a->ws_bytes[w], stream);
      }
    }
    for (int32_t l = 0; l < m->meta.launches && st == TILEC_OK && r == TC_CU_SUCCESS; l++) { /* one after another on the stream */
      if (nl) memcpy(vals[L], &l, sizeof l);
      r = cu->LaunchKernel(ds->fn, grid[0], grid[1], grid[2],
                           (unsigned)m->meta.block[0], (unsigned)m->meta.block[1], (unsigned)m->meta.block[2],
                           (unsigned)m->meta.smem, stream, ptrs, NULL);
    }
    if (shared) {
      if (st == TILEC_OK && r == TC_CU_SUCCESS && (r = cu->EventRecord(ds->done, stream)) == TC_CU_SUCCESS)
        ds->last_stream = stream, ds->launched = true;
      pthread_mutex_unlock(&m->mu);
    }
    char what[320];
    snprintf(what, sizeof what, "launching kernel '%s' (cuLaunchKernel)", m->meta.entry);
    if (st != TILEC_OK) {
      /* reported */
    } else if (r != TC_CU_SUCCESS) {
      st = tc_cu_fail(err, cu, r, what);
    } else if (!a->async && (r = cu->StreamSynchronize(stream)) != TC_CU_SUCCESS) {
      snprintf(what, sizeof what, "running kernel '%s'", m->meta.entry);
      st = tc_cu_fail(err, cu, r, what);
    }
  }
  free(vals);
  free(ptrs);
  free(maps);
done:
  cu->CtxSetCurrent(saved);
  return st;
}

/* ---- synchronize: tilec_kernel_synchronize ---- */

tilec_status tc_cuda_synchronize(const tc_backend_env *env, void *stream, tilec_error *err) {
  (void)env;
  char why[256];
  const tc_cu_api *cu = tc_cu_api_get(why, sizeof why);
  if (!cu) {
    tc_error(err, TILEC_ERROR_TARGET, "cannot synchronize: %s", why);
    return TILEC_ERROR_TARGET;
  }
  /* The default stream is the current context's: device 0's primary context, as launches use. */
  tc_cu_context saved = NULL, ctx = NULL;
  cu->CtxGetCurrent(&saved);
  tilec_status st = tc_cu_retain_device(cu, 0, &ctx, err);
  if (st != TILEC_OK) return st;
  tc_cu_result r = cu->StreamSynchronize((tc_cu_stream)stream);
  if (r != TC_CU_SUCCESS) st = tc_cu_fail(err, cu, r, "cuStreamSynchronize");
  tc_cu_release_device(cu, 0);
  cu->CtxSetCurrent(saved);
  return st;
}
