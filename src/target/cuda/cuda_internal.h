/* cuda_internal.h: pieces of the cuda target shared between its files.
 *   driver.c   the driver API table (driver.h)
 *   nvrtc.c    NVRTC and nvcc: CUDA C++ -> cubin, and their identities for the cache key
 *   artifact.c the artifact container and the metadata
 *   runtime.c  the backends: generate (around the code generator), build, load, launch
 *   target.c   the target: the arch rule, the description, the pass list
 *   backends.c the backend descriptors and their availability */
#ifndef TILEC_CUDA_INTERNAL_H
#define TILEC_CUDA_INTERNAL_H

#include "target/cuda/cuda.h"
#include "target/cuda/driver.h"

/* NVRTC's library file, found without loading it; false when no known folder has it. */
bool tc_nvrtc_locate(char *out, size_t cap);
/* NVRTC can be loaded here (found as a file, or by the dynamic loader). */
bool tc_nvrtc_available(char *why, size_t cap);
/* "nvrtc=<real path> size=.. mtime=..": identity for the cache key, without loading NVRTC
 * when the file is found. malloc'd. */
char *tc_nvrtc_identity(tilec_error *err);
tilec_status tc_nvrtc_version(int *major, int *minor, tilec_error *err);
/* CUDA C++ -> cubin (malloc'd) for `arch`; a failure carries NVRTC's log, trimmed. */
tilec_status tc_nvrtc_compile(const char *src, const char *arch, void **cubin, size_t *size, tilec_error *err);

bool tc_nvcc_locate(char *out, size_t cap);
char *tc_nvcc_identity(tilec_error *err);
tilec_status tc_nvcc_compile(const char *src, const char *arch, void **cubin, size_t *size, tilec_error *err);

/* The CUDA C++ code generator (src/gpu/ lowers, codegen.c prints; generate.c joins them): lowers and prints k
 * for `arch` ("sm_80", "sm_90a": the compile's tc_target_desc.arch), filling
 * out->kernel_source and out->full_source (malloc'd), the entry's name (a C identifier, at most
 * entry_cap - 1 bytes), its dynamic shared memory in bytes and its threads per block. */
typedef struct tc_cuda_opts {
  bool clusters; /* clusters=on: thread-block clusters with TMA multicast where they suit */
  bool streamk;  /* streamk=on: persistent GEMMs cut their last waves' tiles along k (streamk.c) */
  int plant;     /* plant=NAME: a bug planted on purpose (tc_gpu_plant) */
} tc_cuda_opts;
tilec_status tc_cuda_generate_for(const tc_kernel_ir *k, const char *arch, tc_cuda_opts opts, tc_generated *out, char *entry,
                                  size_t entry_cap, int64_t *smem_bytes, int block[3], tilec_error *err);

/* runtime.c, for the backend descriptors */
/* The backends' generate: tc_cuda_generate_for, then out->meta from its outputs (cuda.h). */
tilec_status tc_cuda_emit(const tc_lowered *lw, tc_generated *out, tilec_error *err);
char *tc_cuda_nvrtc_toolchain_id(const tc_backend_env *env, tilec_error *err);
char *tc_cuda_nvcc_toolchain_id(const tc_backend_env *env, tilec_error *err);
tilec_status tc_cuda_nvrtc_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                                 size_t *artifact_size, tilec_error *err);
tilec_status tc_cuda_nvcc_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                                size_t *artifact_size, tilec_error *err);
tilec_status tc_cuda_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                          const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err);
tilec_status tc_cuda_launch(const tc_backend_env *env, tc_loaded *mod, const tc_launch_args *args,
                            tilec_error *err);
void tc_cuda_unload(tc_loaded *mod);
/* The launch's checks every cuda backend makes (argument counts, a grid the host knows within
 * CUDA's limits; *empty: a grid with no blocks, which runs nothing), and the grid it launches:
 * the logical grid, or for a kernel that walks its tiles min(tiles, resident) blocks along x
 * (persistent) or one per tile. */
tilec_status tc_cuda_launch_check(const tc_cuda_meta *meta, int nparams, int nsyms, const tc_launch_args *a, bool *empty,
                                  tilec_error *err);
/* The logical grid within CUDA's limits for this kernel (a folded grid or one whose tiles the
 * blocks walk: 2^31 - 1 blocks in all; else per dimension); the nvrtc and nvcc backends'
 * check_grid hook for their loaded module. */
tilec_status tc_cuda_check_grid(const tc_cuda_meta *meta, const int64_t grid[3], tilec_error *err);
tilec_status tc_cuda_loaded_check_grid(const tc_loaded *m, const int64_t grid[3], tilec_error *err);
/* The grid a launch of `a` takes (bounded by tc_cuda_check_grid): as given, folded into x, or
 * the resident blocks of a tile walk. */
void tc_cuda_launch_grid(const tc_cuda_meta *meta, const tc_launch_args *a, int64_t resident, unsigned grid[3]);
/* Bytes a scalar parameter of dtype dt takes, and its value's bytes as the kernel reads them. */
int tc_cuda_scalar_size(tc_dtype dt);
void tc_cuda_scalar_bytes(tc_dtype dt, int64_t ival, double fval, unsigned char out[8]);
/* Dimensions, strides (bytes, dims 1..4) and box of meta's tensor map t over the tensor at addr,
 * for this launch's symbolic dims; checks the alignment and the leading extent. */
tilec_status tc_cuda_tmap_geometry(const tc_cuda_meta *meta, const char *name, const tc_cuda_tmap *t, const void *addr,
                                   const int64_t *syms, uint64_t dims[5], uint64_t strides[4], unsigned box[5],
                                   tilec_error *err);
tilec_status tc_cuda_synchronize(const tc_backend_env *env, void *stream, tilec_error *err);
/* Device memory for tilec_device_* (memory.c): cuMemAlloc in the device's primary context. */
void *tc_cuda_mem_alloc(int device, size_t bytes, tilec_error *err);
void tc_cuda_mem_free(int device, void *p);
tilec_status tc_cuda_mem_copy(int device, void *dst, const void *src, size_t bytes, int direction, tilec_error *err);
const void *tc_cuda_payload(const void *artifact, size_t size, size_t *payload_size);

#endif
