/* driver.h: the CUDA driver API, loaded with dlopen("libcuda.so.1") into a function table.
 *
 * tilec neither links against CUDA nor includes its headers: the few types and enum values it
 * uses are declared here with the driver's numbers (cuda.h, CUDA 12/13). The table is filled
 * once per process (pthread_once) and read-only afterwards; cuInit runs as part of filling it.
 * Functions the driver exports in versions (_v2) are looked up by their newest name first. */
#ifndef TILEC_CUDA_DRIVER_H
#define TILEC_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec.h"

typedef int tc_cu_result; /* CUresult: 0 is CUDA_SUCCESS */
typedef int tc_cu_device;
typedef struct tc_cu_ctx_st *tc_cu_context;
typedef struct tc_cu_mod_st *tc_cu_module;
typedef struct tc_cu_func_st *tc_cu_function;
typedef struct tc_cu_stream_st *tc_cu_stream;
typedef struct tc_cu_event_st *tc_cu_event;
typedef unsigned long long tc_cu_devptr;

enum {
  TC_CU_SUCCESS = 0,
  TC_CU_ERROR_NOT_INITIALIZED = 3,
  TC_CU_ERROR_INVALID_VALUE = 1,
  TC_CU_ERROR_NO_DEVICE = 100,
  /* device attributes */
  TC_CU_DEV_ATTR_MAX_SHARED_PER_BLOCK = 8,
  TC_CU_DEV_ATTR_MULTIPROCESSOR_COUNT = 16,
  TC_CU_DEV_ATTR_L2_CACHE_SIZE = 38,
  TC_CU_DEV_ATTR_CC_MAJOR = 75,
  TC_CU_DEV_ATTR_CC_MINOR = 76,
  TC_CU_DEV_ATTR_MAX_SHARED_PER_BLOCK_OPTIN = 97,
  /* function attributes */
  TC_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  /* pointer attributes and memory types */
  TC_CU_POINTER_ATTR_MEMORY_TYPE = 2,
  TC_CU_POINTER_ATTR_DEVICE_ORDINAL = 9,
  TC_CU_MEMORYTYPE_HOST = 1,
  TC_CU_MEMORYTYPE_DEVICE = 2,
  TC_CU_MEMORYTYPE_UNIFIED = 4,
  /* flags */
  TC_CU_STREAM_NON_BLOCKING = 1,
  TC_CU_EVENT_DEFAULT = 0
};

/* cuTensorMapEncodeTiled's map: 128 opaque bytes, 64-byte aligned. */
typedef struct tc_cu_tensor_map {
  _Alignas(64) unsigned long long opaque[16];
} tc_cu_tensor_map;

/* CUlaunchConfig (cuOccupancyMaxActiveClusters' argument); no attributes are passed. */
typedef struct tc_cu_launch_config {
  unsigned grid[3], block[3], smem;
  tc_cu_stream stream;
  void *attrs;
  unsigned nattrs;
} tc_cu_launch_config;

typedef struct tc_cu_api {
  void *lib;
  tc_cu_result (*Init)(unsigned flags);
  tc_cu_result (*DriverGetVersion)(int *version);
  tc_cu_result (*DeviceGetCount)(int *count);
  tc_cu_result (*DeviceGet)(tc_cu_device *dev, int ordinal);
  tc_cu_result (*DeviceGetAttribute)(int *value, int attrib, tc_cu_device dev);
  tc_cu_result (*DeviceGetName)(char *name, int len, tc_cu_device dev);
  tc_cu_result (*DeviceComputeCapability)(int *major, int *minor, tc_cu_device dev);
  tc_cu_result (*DevicePrimaryCtxRetain)(tc_cu_context *ctx, tc_cu_device dev);
  tc_cu_result (*DevicePrimaryCtxRelease)(tc_cu_device dev);
  tc_cu_result (*CtxSetCurrent)(tc_cu_context ctx);
  tc_cu_result (*CtxGetCurrent)(tc_cu_context *ctx);
  tc_cu_result (*ModuleLoadData)(tc_cu_module *mod, const void *image);
  tc_cu_result (*ModuleUnload)(tc_cu_module mod);
  tc_cu_result (*ModuleGetFunction)(tc_cu_function *fn, tc_cu_module mod, const char *name);
  tc_cu_result (*FuncSetAttribute)(tc_cu_function fn, int attrib, int value);
  tc_cu_result (*LaunchKernel)(tc_cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned smem, tc_cu_stream stream,
                               void **params, void **extra);
  tc_cu_result (*MemAlloc)(tc_cu_devptr *p, size_t bytes);
  tc_cu_result (*MemFree)(tc_cu_devptr p);
  tc_cu_result (*MemcpyHtoD)(tc_cu_devptr dst, const void *src, size_t bytes);
  tc_cu_result (*MemcpyDtoH)(void *dst, tc_cu_devptr src, size_t bytes);
  tc_cu_result (*MemcpyDtoD)(tc_cu_devptr dst, tc_cu_devptr src, size_t bytes);
  tc_cu_result (*MemcpyDtoDAsync)(tc_cu_devptr dst, tc_cu_devptr src, size_t bytes, tc_cu_stream s);
  tc_cu_result (*MemsetD8Async)(tc_cu_devptr dst, unsigned char value, size_t n, tc_cu_stream s);
  tc_cu_result (*StreamCreate)(tc_cu_stream *s, unsigned flags);
  tc_cu_result (*StreamDestroy)(tc_cu_stream s);
  tc_cu_result (*StreamSynchronize)(tc_cu_stream s);
  tc_cu_result (*EventCreate)(tc_cu_event *e, unsigned flags);
  tc_cu_result (*EventDestroy)(tc_cu_event e);
  tc_cu_result (*EventRecord)(tc_cu_event e, tc_cu_stream s);
  tc_cu_result (*EventSynchronize)(tc_cu_event e);
  tc_cu_result (*StreamWaitEvent)(tc_cu_stream s, tc_cu_event e, unsigned flags);
  tc_cu_result (*EventElapsedTime)(float *ms, tc_cu_event start, tc_cu_event end);
  tc_cu_result (*GetErrorName)(tc_cu_result r, const char **s);
  tc_cu_result (*GetErrorString)(tc_cu_result r, const char **s);
  tc_cu_result (*PointerGetAttribute)(void *data, int attrib, tc_cu_devptr ptr);
  /* Optional (NULL when the driver lacks it): the Hopper tensor-memory-access descriptor. */
  tc_cu_result (*TensorMapEncodeTiled)(tc_cu_tensor_map *map, int dtype, unsigned rank, void *addr,
                                       const uint64_t *dims, const uint64_t *strides,
                                       const unsigned *box, const unsigned *elem_strides,
                                       int interleave, int swizzle, int l2promo, int oobfill);
  /* Optional: clusters of a function (of its compile-time cluster size) the device runs at once */
  tc_cu_result (*OccupancyMaxActiveClusters)(int *clusters, tc_cu_function fn, const tc_cu_launch_config *config);
  /* Optional: blocks of a function that fit on one multiprocessor at once. */
  tc_cu_result (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, tc_cu_function fn, int block_size, size_t smem);
  int device_count; /* after cuInit */
  int driver_version;
} tc_cu_api;

/* The driver table, loading libcuda.so.1 and running cuInit on the first call; NULL when
 * there is no usable driver, with the reason in `why` ("no NVIDIA driver: ...",
 * "cuInit failed: ..."). A driver with no device is returned (device_count 0). */
const tc_cu_api *tc_cu_api_get(char *why, size_t cap);

/* "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" for a result. */
void tc_cu_describe(const tc_cu_api *cu, tc_cu_result r, char *out, size_t cap);
/* err := "WHAT failed: <describe>" (TILEC_ERROR_TARGET); returns TILEC_ERROR_TARGET. */
tilec_status tc_cu_fail(tilec_error *err, const tc_cu_api *cu, tc_cu_result r, const char *what);

/* Retain device `ordinal`'s primary context and make it current on this thread. The primary
 * context is the one the CUDA runtime, torch and CuPy use, so their pointers are valid in it.
 * Each successful call is paired with tc_cu_release_device. */
tilec_status tc_cu_retain_device(const tc_cu_api *cu, int ordinal, tc_cu_context *ctx, tilec_error *err);
void tc_cu_release_device(const tc_cu_api *cu, int ordinal);

#endif
