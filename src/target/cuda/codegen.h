/* codegen.h: the cuda target's code generator (SIMT IR -> CUDA C++). */
#ifndef TILEC_CUDA_CODEGEN_H
#define TILEC_CUDA_CODEGEN_H

#include "gpu/gpu.h"
#include "target/target.h"
#include "target/cuda/cuda_internal.h"

/* Print a kernel lowered by tc_gpu_lower. `entry` receives the __global__ function's name and
 * `smem_bytes` the dynamic shared memory it needs. `streamk`: a persistent GEMM may cut its last
 * waves' tiles along k (streamk.c). `notes` (may be NULL) gets the printer's choices, a line each,
 * for `tilec source --explain`. */
tilec_status tc_cuda_print(const tc_kernel_ir *k, tc_arena *a, tc_generated *out, char *entry, size_t entry_cap,
                          bool streamk, tc_strbuf *notes, int64_t *smem_bytes, tilec_error *err);
/* The GPU description of an arch ("sm_80", "sm_90a", ...); false when unknown. */
/* The specialization of the prelude's tcg__wgmma_ss_op (rs: tcg__wgmma_rs_op) for m64nNk16
 * (wgmma.c). */
void tc_cuda_wgmma_op(tc_strbuf *sb, int n, bool bf16, int tnsp_a, int tnsp_b, bool rs);
/* The fp8 m64nNk32 instruction (e4m3 unless e5m2), both operands K-major from shared memory. */
void tc_cuda_wgmma_op_f8(tc_strbuf *sb, int n, bool a_e5m2, bool b_e5m2);
bool tc_cuda_desc_for_arch(const char *arch, tc_gpu_desc *out);

#endif
