/* codegen_stub.c: stands in for the cuda code generator (codegen.c) until it lands, which
 * deletes this file. The cuda target says it cannot generate; it never makes up a kernel. */
#include "target/cuda/cuda_internal.h"
#include "util/diag.h"

tilec_status tc_cuda_generate_for(const tc_kernel_ir *k, const char *arch, tc_generated *out, char *entry,
                                  size_t entry_cap, int64_t *smem_bytes, int block[3], tilec_error *err) {
  (void)k, (void)arch, (void)out, (void)entry, (void)entry_cap, (void)smem_bytes, (void)block;
  tc_error(err, TILEC_ERROR_TARGET, "cuda code generator not built yet");
  return TILEC_ERROR_TARGET;
}
