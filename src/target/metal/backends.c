/* backends.c: descriptors of the metal target's backends, metal and metallib. On macOS the
 * probe asks Metal.framework for the system default device (and, for metallib, xcrun for the
 * offline `metal` compiler); elsewhere Metal does not exist. */
#include <stdio.h>

#include "target/metal/metal.h"

#ifdef __APPLE__
#include <dlfcn.h>
#include <stdlib.h>

typedef void *(*mtl_create_device_fn)(void);
typedef void (*objc_release_fn)(void *obj);

static bool probe_device(char *why, size_t cap) {
  void *lib = dlopen("/System/Library/Frameworks/Metal.framework/Metal", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, cap, "Metal.framework cannot be loaded");
    return false;
  }
  mtl_create_device_fn create = (mtl_create_device_fn)dlsym(lib, "MTLCreateSystemDefaultDevice");
  void *device = create ? create() : NULL;
  if (!device) {
    snprintf(why, cap, "no Metal device (MTLCreateSystemDefaultDevice returned nil)");
    return false;
  }
  /* The device comes retained (+1); give it back through the Objective-C runtime. */
  objc_release_fn release = (objc_release_fn)dlsym(RTLD_DEFAULT, "objc_release");
  if (release) release(device);
  return true;
}

static bool probe_offline_compiler(char *why, size_t cap) {
  FILE *p = popen("xcrun -sdk macosx -f metal 2>/dev/null", "r");
  char line[1024] = "";
  if (p) {
    if (!fgets(line, sizeof line, p)) line[0] = 0;
    if (pclose(p) != 0) line[0] = 0;
  }
  if (!line[0]) {
    snprintf(why, cap, "the offline metal compiler was not found (xcrun -sdk macosx -f metal)");
    return false;
  }
  return true;
}

static bool metal_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  return probe_device(why, cap);
}

static bool metallib_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  return probe_device(why, cap) && probe_offline_compiler(why, cap);
}
#else
static bool metal_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  snprintf(why, cap, "Metal is only available on macOS");
  return false;
}
#define metallib_available metal_available
#endif

const tc_backend tc_metal_metal_backend = {
    .target = "metal",
    .device_type = kDLMetal,
    .name = "metal",
    .flags = TC_BACKEND_IN_MEMORY,
    .description = "Metal compiles MSL source in process; the library lives in memory only",
    .available = metal_available,
};

const tc_backend tc_metal_metallib_backend = {
    .target = "metal",
    .device_type = kDLMetal,
    .name = "metallib",
    .flags = 0,
    .description = "the offline metal compiler builds a .metallib, loaded by the runtime",
    .available = metallib_available,
};
