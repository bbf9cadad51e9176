/* generate.c: the cuda target's path from tile IR to CUDA C++: the GPU description of the
 * arch, the shared GPU lowering (src/gpu/), then the printer (codegen.c). */
#include <stdio.h>
#include <string.h>

#include "target/cuda/codegen.h"

bool tc_cuda_desc_for_arch(const char *arch, tc_gpu_desc *d) {
  int sm = 0;
  if (!arch || sscanf(arch, "sm_%d", &sm) != 1 || sm < 70) return false;
  memset(d, 0, sizeof *d);
  d->target = "cuda";
  d->warp_size = 32;
  d->max_threads = 1024;
  d->gemm_k_step = 16, d->gemm_k_step_8bit = 32; /* the prelude's tcg__tiling */
  /* opt-in shared memory per block */
  d->max_smem = sm >= 90 ? 227 * 1024 : sm == 80 ? 163 * 1024 : sm >= 86 ? 99 * 1024 : 96 * 1024;
  d->mma_f16 = sm >= 80;
  d->mma_i8 = sm >= 80;
  d->mma_fp8 = sm >= 89;
  d->cp_async = sm >= 80;
  /* wgmma needs the arch-specific feature set: sm_90a, not sm_90 */
  size_t n = strlen(arch);
  d->wgmma = sm == 90 && n > 0 && arch[n - 1] == 'a';
  d->tma = sm >= 90;
  d->swizzle_gemm_operands = true;
  d->staged_epilogue = true;
  d->atomic_fetch = true; /* T.atomic_add(..., return_prev=True): the helpers return the old value */
  d->traps = true;
  d->launches = true; /* meta launches=N: the runtime launches N times with tcg_launch = 0..N-1 */
  d->workspaces = true; /* runtime.c: zeroed device memory per launch, passed after the stream-K workspace */
  return true;
}

tilec_status tc_cuda_generate_for(const tc_kernel_ir *k, const char *arch, tc_cuda_opts opts, tc_generated *out, char *entry, size_t entry_cap,
                                  int64_t *smem_bytes, int block[3], tilec_error *err) {
  tc_gpu_desc desc;
  if (!tc_cuda_desc_for_arch(arch, &desc)) {
    tc_error(err, TILEC_ERROR_USAGE, "unknown cuda arch '%s' (expected sm_80, sm_86, sm_89, sm_90, sm_90a, ...)", arch ? arch : "");
    return err->status;
  }
  desc.clusters = opts.clusters && desc.wgmma;
  desc.plant = opts.plant;
  tc_arena a;
  tc_arena_init(&a);
  jmp_buf oom;
  if (setjmp(oom)) {
    tc_arena_free(&a);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory generating cuda code");
    return err->status;
  }
  a.oom_jmp = &oom;
  tc_strbuf notes; /* in the arena: the out-of-memory escape cannot leak it */
  tc_sb_init_arena(&notes, &a);
  tc_kernel_ir *lowered = tc_gpu_lower(&a, k, &desc, &notes, err);
  tilec_status st = lowered ? tc_cuda_print(lowered, &a, out, entry, entry_cap, opts.streamk, &notes, smem_bytes, err) : err->status;
  if (st == TILEC_OK) {
    if (notes.len == 0) tc_sb_printf(&notes, "no T.gemm: no matrix instruction to choose (%s)\n", arch);
    out->explain = strdup(tc_sb_cstr(&notes));
    if (!out->explain) {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory generating cuda code");
      st = TILEC_ERROR_NOMEM;
    }
  }
  block[0] = 1, block[1] = 1, block[2] = 1;
  /* the lowered kernel's: explicit warp specialization may have kept only its consumer groups
   * (gpu/ws_explicit.c) */
  const tc_kernel_ir *bk = lowered ? lowered : k;
  for (int i = 0; i < bk->threads_ndim; i++) block[i] = bk->threads[i];
  if (lowered && lowered->producer_threads > 0) block[0] += lowered->producer_threads; /* the producer warpgroup (pipeline.c) */
  a.oom_jmp = NULL;
  tc_arena_free(&a);
  return st;
}
