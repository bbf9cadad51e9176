/* backends.c: descriptors of the metal target's device backends, metal and metallib. `metal`
 * compiles MSL in process through tilec's Metal runtime (runtime.h): on macOS on the system
 * default device, elsewhere on the simulated device (sim.h), which runs the kernels on the
 * emulator. metallib also needs the offline compiler (xcrun -sdk macosx -f metal). */
#include <stdio.h>

#include "target/metal/metal.h"

#include "target/metal/metal_rt.h"

#ifdef __APPLE__
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

static bool metallib_available(const tc_backend_env *env, char *why, size_t cap) {
  return tc_metal_device_available(env, why, cap) && probe_offline_compiler(why, cap);
}
#else
static bool metallib_available(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  snprintf(why, cap, "the offline Metal compiler (xcrun metal) exists only on macOS; the simulated device compiles source only");
  return false;
}
#endif

const tc_backend tc_metal_metal_backend = {
    .target = "metal",
    .device_type = kDLMetal,
    .name = "metal",
    .flags = TC_BACKEND_IN_MEMORY | TC_BACKEND_HANDLE_TENSORS,
    .description = "Metal compiles MSL source in process; the library lives in memory only",
    .available = tc_metal_device_available,
    .generate = tc_metal_emit,
    .load = tc_metal_device_load, /* compiles the source in process: no build, no artifact */
    .launch = tc_metal_device_launch,
    .unload = tc_metal_device_unload,
    .synchronize = tc_metal_device_synchronize,
    .details = tc_metal_device_details,
};

const tc_backend tc_metal_metallib_backend = {
    .target = "metal",
    .device_type = kDLMetal,
    .name = "metallib",
    .flags = TC_BACKEND_HANDLE_TENSORS, /* an artifact: the disk cache keeps it */
    .description = "the offline metal compiler builds a .metallib, loaded by the runtime",
    .available = metallib_available,
    .toolchain_id = tc_metal_metallib_toolchain_id,
    .generate = tc_metal_emit,
    .build = tc_metal_metallib_build,
    .load = tc_metal_metallib_load,
    .launch = tc_metal_device_launch,
    .unload = tc_metal_device_unload,
    .payload = tc_metal_metallib_payload,
    .synchronize = tc_metal_device_synchronize,
    .details = tc_metal_device_details,
};
