/* backend.c: the cpu target's "cc" execution backend descriptor. */
#include "target/cpu/cpu_internal.h"

const tc_backend tc_cpu_cc_backend = {
    .target = "cpu",
    .name = "cc",
    .flags = 0, /* artifacts are shared objects: the disk cache may store them */
    .description = "system C compiler (cc -O3 -march=native) building a shared object loaded with dlopen",
    .available = tc_cpu_available,
    .toolchain_id = tc_cpu_toolchain_id,
    .generate = tc_cpu_generate, /* after the passes of tc_cpu_target */
    .build = tc_cpu_build,
    .load = tc_cpu_load,
    .launch = tc_cpu_launch,
    .unload = tc_cpu_unload,
    .device_type = kDLCPU,
    .mem_alloc = tc_host_mem_alloc,
    .mem_free = tc_host_mem_free,
    .mem_copy = tc_host_mem_copy,
};
