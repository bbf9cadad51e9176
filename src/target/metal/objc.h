/* objc.h: the one table of functions through which tilec's Metal runtime (runtime.c) reaches a
 * Metal device: the Objective-C runtime's entry points, objc_msgSend cast once per message
 * signature, MTLCreateSystemDefaultDevice, and the facts about the machine the runtime cannot
 * ask by message (the SDK tilec was built with).
 *
 * Two tables fill it:
 *  - on macOS, tc_objc_apple() (objc.c): dlopen of /usr/lib/libobjc.A.dylib and
 *    Metal.framework, every msg_* entry the address of objc_msgSend (objc_msgSend_stret for
 *    the struct return on x86_64). Nothing else of tilec is Apple-specific;
 *  - everywhere, tc_objc_sim() (sim_device.c): the simulated Metal device, which answers the
 *    same messages on the CPU (kernels run on the Metal emulator, emu.h), records every call
 *    and can be told which OS, SDK and GPU families to report and to serve stale data (sim.h).
 * The runtime never knows which one it talks to. Selectors are looked up by name once per
 * table (tc_mtl_sels). Ownership follows Cocoa's rules: new / alloc / copy return +1 (the
 * runtime releases them), everything else is autoreleased into the innermost pool the runtime
 * pushed. */
#ifndef TILEC_METAL_OBJC_H
#define TILEC_METAL_OBJC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void *tc_id;       /* id (an object or a class) */
typedef const void *tc_sel; /* SEL */
typedef unsigned long tc_nsuint; /* NSUInteger (64-bit on every Mac Metal runs on) */
typedef long tc_nsint;           /* NSInteger */
typedef signed char tc_bool;     /* BOOL as it comes back in a register on both arm64 and x86_64 */

typedef struct tc_mtl_size { /* MTLSize */
  tc_nsuint width, height, depth;
} tc_mtl_size;

typedef struct tc_os_version { /* NSOperatingSystemVersion */
  tc_nsint major, minor, patch;
} tc_os_version;

/* MTLResourceOptions: storage mode bits (MTLResourceStorageModeShift 4). */
enum {
  TC_MTL_RESOURCE_STORAGE_SHARED = 0u << 4,
  TC_MTL_RESOURCE_STORAGE_MANAGED = 1u << 4,
  TC_MTL_RESOURCE_STORAGE_PRIVATE = 2u << 4,
  TC_MTL_RESOURCE_STORAGE_MASK = 0xfu << 4,
  TC_MTL_RESOURCE_HAZARD_UNTRACKED = 1u << 8
};

/* MTLLanguageVersion: (major << 16) | minor. */
#define TC_MTL_LANGUAGE(major, minor) (((tc_nsuint)(major) << 16) | (tc_nsuint)(minor))

/* MTLGPUFamily values. */
enum {
  TC_MTL_FAMILY_APPLE7 = 1007,
  TC_MTL_FAMILY_APPLE8 = 1008,
  TC_MTL_FAMILY_APPLE9 = 1009,
  TC_MTL_FAMILY_MAC2 = 2002,
  TC_MTL_FAMILY_METAL3 = 5001,
  TC_MTL_FAMILY_METAL4 = 5002
};

/* MTLCommandBufferStatus. */
enum {
  TC_MTL_CB_NOT_ENQUEUED = 0,
  TC_MTL_CB_ENQUEUED = 1,
  TC_MTL_CB_COMMITTED = 2,
  TC_MTL_CB_SCHEDULED = 3,
  TC_MTL_CB_COMPLETED = 4,
  TC_MTL_CB_ERROR = 5
};

typedef struct tc_objc_api {
  const char *name; /* "Metal.framework" or "simulated Metal device" */
  bool simulated;
  /* the Objective-C runtime */
  tc_id (*getClass)(const char *name);
  tc_id (*getProtocol)(const char *name);
  tc_sel (*registerName)(const char *name);
  tc_id (*retain)(tc_id obj);
  void (*release)(tc_id obj);
  void *(*poolPush)(void);
  void (*poolPop)(void *pool);
  /* Metal.framework */
  tc_id (*MTLCreateSystemDefaultDevice)(void);
  /* libdispatch: dispatch_data_create(buffer, size, NULL, DISPATCH_DATA_DESTRUCTOR_DEFAULT),
   * which copies the bytes, and dispatch_release (a metallib reaches newLibraryWithData:error:
   * as dispatch data) */
  tc_id (*dataCreate)(const void *bytes, size_t n, void *queue, void *destructor);
  void (*dataRelease)(tc_id data);
  /* objc_msgSend, one entry per signature: msg_<result>_<arguments>, where
   * o = id, p = pointer, u = NSUInteger, l = NSInteger, s = MTLSize, v = void, b = BOOL,
   * d = double, e = id* (NSError **), r = NSOperatingSystemVersion. */
  tc_id (*msg_o)(tc_id self, tc_sel op);                                   /* new, commandBuffer, ... */
  tc_id (*msg_o_p)(tc_id self, tc_sel op, const void *a);                  /* stringWithUTF8String:, newFunctionWithName: */
  tc_id (*msg_o_uu)(tc_id self, tc_sel op, tc_nsuint a, tc_nsuint b);      /* newBufferWithLength:options: */
  tc_id (*msg_o_ooe)(tc_id self, tc_sel op, tc_id a, tc_id b, tc_id *e);   /* newLibraryWithSource:options:error: */
  tc_id (*msg_o_oe)(tc_id self, tc_sel op, tc_id a, tc_id *e);             /* newComputePipelineStateWithFunction:error: */
  void (*msg_v)(tc_id self, tc_sel op);                                    /* commit, endEncoding, ... */
  void (*msg_v_u)(tc_id self, tc_sel op, tc_nsuint a);                     /* setLanguageVersion:, setFastMathEnabled: */
  void (*msg_v_o)(tc_id self, tc_sel op, tc_id a);                         /* setComputePipelineState: */
  void (*msg_v_ouu)(tc_id self, tc_sel op, tc_id a, tc_nsuint b, tc_nsuint c);   /* setBuffer:offset:atIndex: */
  void (*msg_v_puu)(tc_id self, tc_sel op, const void *a, tc_nsuint b, tc_nsuint c); /* setBytes:length:atIndex: */
  void (*msg_v_uu)(tc_id self, tc_sel op, tc_nsuint a, tc_nsuint b);       /* setThreadgroupMemoryLength:atIndex: */
  void (*msg_v_ss)(tc_id self, tc_sel op, tc_mtl_size a, tc_mtl_size b);   /* dispatchThreadgroups:threadsPerThreadgroup: */
  void (*msg_v_ououu)(tc_id self, tc_sel op, tc_id a, tc_nsuint b, tc_id c, tc_nsuint d, tc_nsuint e); /* copyFromBuffer:... */
  tc_nsuint (*msg_u)(tc_id self, tc_sel op);                               /* length, status, ... */
  tc_bool (*msg_b_l)(tc_id self, tc_sel op, tc_nsint a);                   /* supportsFamily: */
  tc_bool (*msg_b_o)(tc_id self, tc_sel op, tc_id a);                      /* conformsToProtocol: */
  void *(*msg_p)(tc_id self, tc_sel op);                                   /* contents, UTF8String */
  double (*msg_d)(tc_id self, tc_sel op);                                  /* GPUStartTime, GPUEndTime */
  tc_os_version (*msg_r)(tc_id self, tc_sel op);                           /* operatingSystemVersion */
  /* The macOS SDK tilec was built with, as MMmmpp (150000 for macOS 15.0); 0 when unknown. The
   * language version can only be as new as the SDK's Metal compiler knows. */
  long (*sdkVersion)(void);
} tc_objc_api;

/* The selectors the runtime sends, registered once per table. */
typedef struct tc_mtl_sels {
  tc_sel alloc, init, newLibraryWithData_error, new_, release, processInfo, operatingSystemVersion, stringWithUTF8String,
      UTF8String, localizedDescription, conformsToProtocol, name, supportsFamily, newCommandQueue,
      newBufferWithLength_options, contents, length, storageMode, newLibraryWithSource_options_error,
      setLanguageVersion, setFastMathEnabled, newFunctionWithName, newComputePipelineStateWithFunction_error,
      maxTotalThreadsPerThreadgroup, maxThreadgroupMemoryLength, commandBuffer,
      computeCommandEncoder, blitCommandEncoder, setComputePipelineState, setBuffer_offset_atIndex,
      setBytes_length_atIndex, setThreadgroupMemoryLength_atIndex,
      dispatchThreadgroups_threadsPerThreadgroup, endEncoding,
      copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size, commit, waitUntilCompleted,
      status, error, GPUStartTime, GPUEndTime;
} tc_mtl_sels;
void tc_mtl_sels_init(const tc_objc_api *api, tc_mtl_sels *s);

/* The table bound to Apple's frameworks; NULL with the reason elsewhere or when they do not
 * load (objc.c). Filled once per process. */
const tc_objc_api *tc_objc_apple(char *why, size_t cap);
/* The table bound to the simulated device (sim_device.c). */
const tc_objc_api *tc_objc_sim(void);

#endif
