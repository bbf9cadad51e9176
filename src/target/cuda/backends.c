/* backends.c: descriptors of the cuda target's backends, nvrtc and nvcc. Availability is
 * probed for real: the driver (libcuda.so.1, cuInit, at least one device) for both, plus
 * libnvrtc for nvrtc and nvcc on PATH for nvcc. Everything is looked up with dlopen/dlsym, so
 * tilec neither links against CUDA nor needs its headers. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/cuda/cuda.h"

typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_device_get_count_fn)(int *count);
typedef int (*cu_get_error_name_fn)(int result, const char **name);

/* The NVIDIA driver is loaded and initialised and has a device. The library stays loaded
 * after a successful cuInit: unloading an initialised driver is not supported by it, and the
 * backends will use it once they exist (dlopen reference counts repeated probes). */
static bool probe_driver(char *why, size_t cap) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, cap, "no NVIDIA driver: libcuda.so.1 cannot be loaded");
    return false;
  }
  cu_init_fn cu_init = (cu_init_fn)dlsym(lib, "cuInit");
  cu_device_get_count_fn get_count = (cu_device_get_count_fn)dlsym(lib, "cuDeviceGetCount");
  cu_get_error_name_fn err_name = (cu_get_error_name_fn)dlsym(lib, "cuGetErrorName");
  if (!cu_init || !get_count) {
    snprintf(why, cap, "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
    dlclose(lib);
    return false;
  }
  int r = cu_init(0);
  if (r != 0) {
    const char *name = NULL;
    if (err_name) err_name(r, &name);
    snprintf(why, cap, "cuInit failed: %s (%d)", name ? name : "CUDA error", r);
    return false;
  }
  int count = 0;
  r = get_count(&count);
  if (r != 0 || count <= 0) {
    snprintf(why, cap, "no CUDA device found");
    return false;
  }
  return true;
}

static bool probe_nvrtc(char *why, size_t cap) {
  static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    if (dlsym(lib, "nvrtcCreateProgram") && dlsym(lib, "nvrtcVersion"))
      return true; /* stays loaded: unloading it strands what its initialisers allocated */
    dlclose(lib);
  }
  snprintf(why, cap, "NVRTC not found (libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12)");
  return false;
}

/* An executable named `name` in a directory of $PATH. */
static bool on_path(const char *name) {
  const char *path = getenv("PATH");
  if (!path) return false;
  while (*path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    char buf[PATH_MAX];
    if (n && n + strlen(name) + 2 <= sizeof buf) {
      snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, name);
      if (access(buf, X_OK) == 0) return true;
    }
    path += n + (end ? 1 : 0);
  }
  return false;
}

static bool nvrtc_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  return probe_nvrtc(why, cap) && probe_driver(why, cap);
}

static bool nvcc_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  if (!on_path("nvcc")) {
    snprintf(why, cap, "nvcc not found on PATH");
    return false;
  }
  return probe_driver(why, cap);
}

const tc_backend tc_cuda_nvrtc_backend = {
    .target = "cuda",
    .name = "nvrtc",
    .flags = TC_BACKEND_IN_MEMORY,
    .description = "NVRTC compiles CUDA C++ in process; the module lives in GPU memory only",
    .available = nvrtc_available,
};

const tc_backend tc_cuda_nvcc_backend = {
    .target = "cuda",
    .name = "nvcc",
    .flags = 0,
    .description = "nvcc compiles CUDA C++ into a cubin, loaded with the driver API",
    .available = nvcc_available,
};
