/* driver.c: loading the CUDA driver API (see driver.h). The one piece of process state is the
 * function table, written once under pthread_once and read-only from then on; the library stays
 * loaded, since an initialised driver does not support being unloaded. */
#include "target/cuda/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/diag.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tc_cu_api g_api;
static bool g_ok;
static char g_why[256];

/* The first of the names the library exports (newest version first). */
static void *sym(void *lib, const char *a, const char *b) {
  void *p = dlsym(lib, a);
  if (!p && b) p = dlsym(lib, b);
  return p;
}

#define REQUIRE(field, name, alt)                                                     \
  do {                                                                                \
    *(void **)&g_api.field = sym(lib, name, alt);                                     \
    if (!g_api.field) {                                                               \
      snprintf(g_why, sizeof g_why, "libcuda.so.1 lacks %s (driver too old?)", name); \
      return;                                                                         \
    }                                                                                 \
  } while (0)

static void load_once(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(g_why, sizeof g_why, "no NVIDIA driver: libcuda.so.1 cannot be loaded");
    return;
  }
  g_api.lib = lib;
  REQUIRE(Init, "cuInit", NULL);
  REQUIRE(DriverGetVersion, "cuDriverGetVersion", NULL);
  REQUIRE(DeviceGetCount, "cuDeviceGetCount", NULL);
  REQUIRE(DeviceGet, "cuDeviceGet", NULL);
  REQUIRE(DeviceGetAttribute, "cuDeviceGetAttribute", NULL);
  REQUIRE(DeviceGetName, "cuDeviceGetName", NULL);
  REQUIRE(DeviceComputeCapability, "cuDeviceComputeCapability", NULL);
  REQUIRE(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
  REQUIRE(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
  REQUIRE(CtxSetCurrent, "cuCtxSetCurrent", NULL);
  REQUIRE(CtxGetCurrent, "cuCtxGetCurrent", NULL);
  REQUIRE(ModuleLoadData, "cuModuleLoadData", NULL);
  REQUIRE(ModuleUnload, "cuModuleUnload", NULL);
  REQUIRE(ModuleGetFunction, "cuModuleGetFunction", NULL);
  REQUIRE(FuncSetAttribute, "cuFuncSetAttribute", NULL);
  REQUIRE(LaunchKernel, "cuLaunchKernel", NULL);
  REQUIRE(MemAlloc, "cuMemAlloc_v2", "cuMemAlloc");
  REQUIRE(MemFree, "cuMemFree_v2", "cuMemFree");
  REQUIRE(MemcpyHtoD, "cuMemcpyHtoD_v2", "cuMemcpyHtoD");
  REQUIRE(MemcpyDtoH, "cuMemcpyDtoH_v2", "cuMemcpyDtoH");
  REQUIRE(MemcpyDtoD, "cuMemcpyDtoD_v2", "cuMemcpyDtoD");
  REQUIRE(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync");
  REQUIRE(MemsetD8Async, "cuMemsetD8Async", NULL);
  REQUIRE(StreamCreate, "cuStreamCreate", NULL);
  REQUIRE(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
  REQUIRE(StreamSynchronize, "cuStreamSynchronize", NULL);
  REQUIRE(EventCreate, "cuEventCreate", NULL);
  REQUIRE(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  REQUIRE(EventRecord, "cuEventRecord", NULL);
  REQUIRE(EventSynchronize, "cuEventSynchronize", NULL);
  REQUIRE(StreamWaitEvent, "cuStreamWaitEvent", NULL);
  REQUIRE(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  REQUIRE(GetErrorName, "cuGetErrorName", NULL);
  REQUIRE(GetErrorString, "cuGetErrorString", NULL);
  REQUIRE(PointerGetAttribute, "cuPointerGetAttribute", NULL);
  *(void **)&g_api.TensorMapEncodeTiled = dlsym(lib, "cuTensorMapEncodeTiled"); /* optional */
  *(void **)&g_api.OccupancyMaxActiveBlocksPerMultiprocessor = dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  *(void **)&g_api.OccupancyMaxActiveClusters = dlsym(lib, "cuOccupancyMaxActiveClusters");
  tc_cu_result r = g_api.Init(0);
  if (r != TC_CU_SUCCESS) {
    char d[160];
    tc_cu_describe(&g_api, r, d, sizeof d);
    snprintf(g_why, sizeof g_why, "cuInit failed: %s", d);
    return;
  }
  if (g_api.DeviceGetCount(&g_api.device_count) != TC_CU_SUCCESS) g_api.device_count = 0;
  if (g_api.DriverGetVersion(&g_api.driver_version) != TC_CU_SUCCESS) g_api.driver_version = 0;
  g_ok = true;
}

const tc_cu_api *tc_cu_api_get(char *why, size_t cap) {
  pthread_once(&g_once, load_once);
  if (!g_ok && why && cap) snprintf(why, cap, "%s", g_why);
  return g_ok ? &g_api : NULL;
}

void tc_cu_describe(const tc_cu_api *cu, tc_cu_result r, char *out, size_t cap) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->GetErrorName) cu->GetErrorName(r, &name);
  if (cu && cu->GetErrorString) cu->GetErrorString(r, &text);
  snprintf(out, cap, "%s (%d)%s%s", name ? name : "CUDA error", r, text ? ": " : "", text ? text : "");
}

tilec_status tc_cu_fail(tilec_error *err, const tc_cu_api *cu, tc_cu_result r, const char *what) {
  char d[256];
  tc_cu_describe(cu, r, d, sizeof d);
  tc_error(err, TILEC_ERROR_TARGET, "%s failed: %s", what, d);
  return TILEC_ERROR_TARGET;
}

tilec_status tc_cu_retain_device(const tc_cu_api *cu, int ordinal, tc_cu_context *ctx, tilec_error *err) {
  if (ordinal < 0 || ordinal >= cu->device_count) {
    tc_error(err, TILEC_ERROR_TARGET, "CUDA device %d does not exist (%d device%s)", ordinal, cu->device_count,
             cu->device_count == 1 ? "" : "s");
    return TILEC_ERROR_TARGET;
  }
  tc_cu_device dev;
  tc_cu_result r = cu->DeviceGet(&dev, ordinal);
  if (r != TC_CU_SUCCESS) return tc_cu_fail(err, cu, r, "cuDeviceGet");
  r = cu->DevicePrimaryCtxRetain(ctx, dev);
  if (r != TC_CU_SUCCESS) return tc_cu_fail(err, cu, r, "cuDevicePrimaryCtxRetain");
  r = cu->CtxSetCurrent(*ctx);
  if (r != TC_CU_SUCCESS) {
    cu->DevicePrimaryCtxRelease(dev);
    return tc_cu_fail(err, cu, r, "cuCtxSetCurrent");
  }
  return TILEC_OK;
}

void tc_cu_release_device(const tc_cu_api *cu, int ordinal) {
  tc_cu_device dev;
  if (cu->DeviceGet(&dev, ordinal) == TC_CU_SUCCESS) cu->DevicePrimaryCtxRelease(dev);
}
