/* backend.c: the cpu target's "cc" execution backend descriptor. */
#include "target/cpu/cpu_internal.h"

static tilec_status cc_generate(const tc_backend_env *env, const tc_kernel_ir *k, tc_generated *out, tilec_error *err) {
  (void)env;
  return tc_cpu_generate(k, out, err);
}

const tc_backend tc_cpu_cc_backend = {
    .target = "cpu",
    .name = "cc",
    .flags = 0, /* artifacts are shared objects: the disk cache may store them */
    .description = "system C compiler (cc -O3 -march=native) building a shared object loaded with dlopen",
    .available = tc_cpu_available,
    .toolchain_id = tc_cpu_toolchain_id,
    .generate = cc_generate,
    .build = tc_cpu_build,
    .load = tc_cpu_load,
    .launch = tc_cpu_launch,
    .unload = tc_cpu_unload,
};
