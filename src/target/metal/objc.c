/* objc.c: the function table bound to Apple's frameworks (objc.h), and the selector list.
 *
 * On macOS: libobjc and Metal.framework are opened with dlopen (tilec links neither), and every
 * message entry is objc_msgSend cast to its signature: the cast is what tells the compiler how
 * to pass the arguments, so each signature has its own entry and no call goes through a type
 * other than the one it was made for. Struct returns larger than two registers go through
 * objc_msgSend_stret on x86_64 (arm64 has no _stret variant). No Mac ran this code here
 * (docs/metal-runtime.md); everything above this table is tested on Linux against the
 * simulated device, which has the same entries. */
#include "target/metal/objc.h"

#include <stdio.h>

void tc_mtl_sels_init(const tc_objc_api *api, tc_mtl_sels *s) {
#define S(field, name) s->field = api->registerName(name)
  S(alloc, "alloc");
  S(init, "init");
  S(new_, "new");
  S(release, "release");
  S(processInfo, "processInfo");
  S(operatingSystemVersion, "operatingSystemVersion");
  S(stringWithUTF8String, "stringWithUTF8String:");
  S(UTF8String, "UTF8String");
  S(localizedDescription, "localizedDescription");
  S(conformsToProtocol, "conformsToProtocol:");
  S(name, "name");
  S(supportsFamily, "supportsFamily:");
  S(newCommandQueue, "newCommandQueue");
  S(newBufferWithLength_options, "newBufferWithLength:options:");
  S(contents, "contents");
  S(length, "length");
  S(storageMode, "storageMode");
  S(newLibraryWithSource_options_error, "newLibraryWithSource:options:error:");
  S(newLibraryWithData_error, "newLibraryWithData:error:");
  S(setLanguageVersion, "setLanguageVersion:");
  S(setFastMathEnabled, "setFastMathEnabled:");
  S(newFunctionWithName, "newFunctionWithName:");
  S(newComputePipelineStateWithFunction_error, "newComputePipelineStateWithFunction:error:");
  S(maxTotalThreadsPerThreadgroup, "maxTotalThreadsPerThreadgroup");
  S(maxThreadgroupMemoryLength, "maxThreadgroupMemoryLength");
  S(commandBuffer, "commandBuffer");
  S(computeCommandEncoder, "computeCommandEncoder");
  S(blitCommandEncoder, "blitCommandEncoder");
  S(setComputePipelineState, "setComputePipelineState:");
  S(setBuffer_offset_atIndex, "setBuffer:offset:atIndex:");
  S(setBytes_length_atIndex, "setBytes:length:atIndex:");
  S(setThreadgroupMemoryLength_atIndex, "setThreadgroupMemoryLength:atIndex:");
  S(dispatchThreadgroups_threadsPerThreadgroup, "dispatchThreadgroups:threadsPerThreadgroup:");
  S(endEncoding, "endEncoding");
  S(copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size,
    "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:");
  S(commit, "commit");
  S(waitUntilCompleted, "waitUntilCompleted");
  S(status, "status");
  S(error, "error");
  S(GPUStartTime, "GPUStartTime");
  S(GPUEndTime, "GPUEndTime");
#undef S
}

#ifdef __APPLE__
#include <AvailabilityMacros.h>
#include <dlfcn.h>
#include <pthread.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tc_objc_api g_api;
static bool g_ok;
static char g_why[256];

#define BIND(field, lib, name)                                              \
  do {                                                                      \
    *(void **)&g_api.field = dlsym(lib, name);                              \
    if (!g_api.field) {                                                     \
      snprintf(g_why, sizeof g_why, "%s is missing from the system", name); \
      return;                                                               \
    }                                                                       \
  } while (0)

/* MMmmpp since macOS 10.10 (101500, 150000, 260000); older SDKs cannot build Metal 3 anyway. */
static long apple_sdk_version(void) {
#ifdef MAC_OS_X_VERSION_MAX_ALLOWED
  return MAC_OS_X_VERSION_MAX_ALLOWED >= 101000 ? (long)MAC_OS_X_VERSION_MAX_ALLOWED : 0;
#else
  return 0;
#endif
}

static void load_once(void) {
  void *objc = dlopen("/usr/lib/libobjc.A.dylib", RTLD_NOW | RTLD_GLOBAL);
  if (!objc) {
    snprintf(g_why, sizeof g_why, "the Objective-C runtime (/usr/lib/libobjc.A.dylib) cannot be loaded");
    return;
  }
  /* Foundation brings NSString, NSError and NSProcessInfo; Metal the device. */
  if (!dlopen("/System/Library/Frameworks/Foundation.framework/Foundation", RTLD_NOW | RTLD_GLOBAL)) {
    snprintf(g_why, sizeof g_why, "Foundation.framework cannot be loaded");
    return;
  }
  void *metal = dlopen("/System/Library/Frameworks/Metal.framework/Metal", RTLD_NOW | RTLD_GLOBAL);
  if (!metal) {
    snprintf(g_why, sizeof g_why, "Metal.framework cannot be loaded");
    return;
  }
  g_api.name = "Metal.framework";
  g_api.simulated = false;
  BIND(getClass, objc, "objc_getClass");
  BIND(getProtocol, objc, "objc_getProtocol");
  BIND(registerName, objc, "sel_registerName");
  BIND(retain, objc, "objc_retain");
  BIND(release, objc, "objc_release");
  BIND(poolPush, objc, "objc_autoreleasePoolPush");
  BIND(poolPop, objc, "objc_autoreleasePoolPop");
  BIND(MTLCreateSystemDefaultDevice, metal, "MTLCreateSystemDefaultDevice");
  BIND(dataCreate, RTLD_DEFAULT, "dispatch_data_create"); /* libSystem */
  BIND(dataRelease, RTLD_DEFAULT, "dispatch_release");
  void *send = dlsym(objc, "objc_msgSend");
  if (!send) {
    snprintf(g_why, sizeof g_why, "objc_msgSend is missing from the system");
    return;
  }
  /* One address, one cast per signature (objc.h). */
  *(void **)&g_api.msg_o = send;
  *(void **)&g_api.msg_o_p = send;
  *(void **)&g_api.msg_o_uu = send;
  *(void **)&g_api.msg_o_ooe = send;
  *(void **)&g_api.msg_o_oe = send;
  *(void **)&g_api.msg_v = send;
  *(void **)&g_api.msg_v_u = send;
  *(void **)&g_api.msg_v_o = send;
  *(void **)&g_api.msg_v_ouu = send;
  *(void **)&g_api.msg_v_puu = send;
  *(void **)&g_api.msg_v_uu = send;
  *(void **)&g_api.msg_v_ss = send;
  *(void **)&g_api.msg_v_ououu = send;
  *(void **)&g_api.msg_u = send;
  *(void **)&g_api.msg_b_l = send;
  *(void **)&g_api.msg_b_o = send;
  *(void **)&g_api.msg_p = send;
  *(void **)&g_api.msg_d = send;
#if defined(__x86_64__)
  void *stret = dlsym(objc, "objc_msgSend_stret");
  if (!stret) {
    snprintf(g_why, sizeof g_why, "objc_msgSend_stret is missing from the system");
    return;
  }
  *(void **)&g_api.msg_r = stret;
#else
  *(void **)&g_api.msg_r = send;
#endif
  g_api.sdkVersion = apple_sdk_version;
  g_ok = true;
}

const tc_objc_api *tc_objc_apple(char *why, size_t cap) {
  pthread_once(&g_once, load_once);
  if (!g_ok && why && cap) snprintf(why, cap, "%s", g_why);
  return g_ok ? &g_api : NULL;
}
#else
const tc_objc_api *tc_objc_apple(char *why, size_t cap) {
  if (why && cap) snprintf(why, cap, "Metal.framework exists only on macOS");
  return NULL;
}
#endif
