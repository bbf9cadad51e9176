/* backends.c: descriptors of the cuda target's backends, nvrtc and nvcc. Availability is
 * probed for real: the driver (libcuda.so.1, cuInit, at least one device) for both, plus
 * NVRTC for nvrtc and nvcc for nvcc. A build-only compile (`tilec compile`) needs no driver.
 * Everything is looked up with dlopen/dlsym, so tilec neither links against CUDA nor needs its
 * headers. Probing NVRTC finds its file without loading it, so a warm cache hit never loads it. */
#include <limits.h>
#include <stdio.h>

#include "target/cuda/cuda_internal.h"

/* The NVIDIA driver is loaded and initialised and has a device. */
static bool probe_driver(char *why, size_t cap) {
  const tc_cu_api *cu = tc_cu_api_get(why, cap);
  if (!cu) return false;
  if (cu->device_count <= 0) {
    snprintf(why, cap, "no CUDA device found");
    return false;
  }
  return true;
}

static bool nvrtc_available(const tc_backend_env *env, char *why, size_t cap) {
  /* An artifact only (`tilec compile`, `tilec source`): NVRTC found on disk is enough here, so a
   * kernel cache hit loads neither NVRTC nor the driver; a miss loads NVRTC to build, and says
   * plainly if it cannot. Running needs the driver, and NVRTC loaded, as before. */
  char path[PATH_MAX];
  if (env && env->build_only && tc_nvrtc_locate(path, sizeof path)) return true;
  if (!tc_nvrtc_available(why, cap)) return false;
  return (env && env->build_only) || probe_driver(why, cap);
}

static bool nvcc_available(const tc_backend_env *env, char *why, size_t cap) {
  char path[PATH_MAX];
  if (!tc_nvcc_locate(path, sizeof path)) {
    snprintf(why, cap, "nvcc not found (PATH, /usr/local/cuda/bin; or set TILEC_NVCC)");
    return false;
  }
  return (env && env->build_only) || probe_driver(why, cap);
}

const tc_backend tc_cuda_nvrtc_backend = {
    .target = "cuda",
    .name = "nvrtc",
    .flags = 0, /* cubins go to the disk cache: a warm hit needs no NVRTC */
    .description = "NVRTC compiles CUDA C++ to a cubin in process; the driver API loads it",
    .available = nvrtc_available,
    .toolchain_id = tc_cuda_nvrtc_toolchain_id,
    .generate = tc_cuda_emit,
    .build = tc_cuda_nvrtc_build,
    .load = tc_cuda_load,
    .launch = tc_cuda_launch,
    .check_grid = tc_cuda_loaded_check_grid,
    .unload = tc_cuda_unload,
    .payload = tc_cuda_payload,
    .synchronize = tc_cuda_synchronize,
    .device_type = kDLCUDA,
    .mem_alloc = tc_cuda_mem_alloc,
    .mem_free = tc_cuda_mem_free,
    .mem_copy = tc_cuda_mem_copy,
};

const tc_backend tc_cuda_nvcc_backend = {
    .target = "cuda",
    .name = "nvcc",
    .flags = 0,
    .description = "nvcc compiles CUDA C++ into a cubin, loaded with the driver API",
    .available = nvcc_available,
    .toolchain_id = tc_cuda_nvcc_toolchain_id,
    .generate = tc_cuda_emit,
    .build = tc_cuda_nvcc_build,
    .load = tc_cuda_load,
    .launch = tc_cuda_launch,
    .check_grid = tc_cuda_loaded_check_grid,
    .unload = tc_cuda_unload,
    .payload = tc_cuda_payload,
    .synchronize = tc_cuda_synchronize,
    .device_type = kDLCUDA,
    .mem_alloc = tc_cuda_mem_alloc,
    .mem_free = tc_cuda_mem_free,
    .mem_copy = tc_cuda_mem_copy,
};
