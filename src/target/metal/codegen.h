/* codegen.h: the metal target's code generator (SIMT IR -> MSL). */
#ifndef TILEC_METAL_CODEGEN_H
#define TILEC_METAL_CODEGEN_H

#include "gpu/gpu.h"
#include "target/target.h"

/* The MSL prelude generated kernels include (src/target/metal/prelude.metal). */
const char *tc_metal_prelude(void);
/* The Metal 4 prelude: the matmul2d block GEMM (src/target/metal/prelude_mpp.metal), included
 * only by kernels that use it. */
const char *tc_metal_prelude_mpp(void);

/* Print a kernel lowered by tc_gpu_lower as MSL of version `msl` (x100: 300, 310, 400).
 * `entry` receives the kernel function's name and `smem_bytes` its threadgroup memory. */
tilec_status tc_metal_print(const tc_kernel_ir *k, tc_arena *a, int msl, tc_generated *out, char *entry, size_t entry_cap,
                            int64_t *smem_bytes, tilec_error *err);
/* The MSL type a scalar parameter is passed as (`constant T &`): float for floats, long/ulong
 * for 64-bit integers, uint for uint32, int for the rest. The launcher packs it the same way. */
const char *tc_metal_scalar_type(tc_dtype d);

#endif
