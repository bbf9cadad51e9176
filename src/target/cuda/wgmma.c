/* wgmma.c: the wgmma.mma_async instructions a kernel uses, printed as specializations of the
 * prelude's tcg__wgmma_ss_op / tcg__wgmma_rs_op (prelude/tcg_wgmma.cuh). One asm statement lists
 * all N / 2 accumulator registers of a thread, which no preprocessor loop can write, so the code
 * generator writes the ones the kernel needs.
 *
 * Register order: the instruction's d[4j + 2h + c] is row (lane / 4) + 8h, column 8j + 2(lane % 4)
 * + c of the warp's 16-row slice; in the ACC layout that is register (h * NT + j) * 2 + c
 * (NT = N / 8, one 16-row tile per warp). */
#include <stdio.h>
#include <string.h>

#include "target/cuda/codegen.h"

void tc_cuda_wgmma_op(tc_strbuf *sb, int n, bool bf16, int tnsp_a, int tnsp_b, bool rs) {
  const char *ty = bf16 ? "bf16" : "f16", *tag = bf16 ? "tcg_bf16" : "tcg_f16";
  int nd = n / 2, nt = n / 8;
  /* the emulator has its own, for every shape (emu/tcg_emu_wgmma.h) */
  tc_sb_puts(sb, "#ifndef TCG_EMU\n");
  if (rs)
    tc_sb_printf(sb, "template <> struct tcg__wgmma_rs_op<%d, %s, %d> {\n  static __device__ __forceinline__ void run(float *d, const uint32_t *a, uint64_t db) {\n", n, tag, tnsp_b);
  else
    tc_sb_printf(sb, "template <> struct tcg__wgmma_ss_op<%d, %s, %d, %d> {\n  static __device__ __forceinline__ void run(float *d, uint64_t da, uint64_t db) {\n", n, tag, tnsp_a, tnsp_b);
  /* scale-d is a predicate: true (accumulate) from a register, as ptxas wants */
  tc_sb_printf(sb, "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                   "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", rs ? nd + 5 : nd + 2, n, ty, ty);
  for (int i = 0; i < nd; i++) tc_sb_printf(sb, "%s%%%d", i ? "," : "", i);
  int next = nd;
  if (rs) {
    tc_sb_printf(sb, "}, {%%%d,%%%d,%%%d,%%%d}, %%%d, p, 1, 1, %d; }\"\n", next, next + 1, next + 2, next + 3, next + 4, tnsp_b);
  } else {
    tc_sb_printf(sb, "}, %%%d, %%%d, p, 1, 1, %d, %d; }\"\n", next, next + 1, tnsp_a, tnsp_b);
  }
  tc_sb_puts(sb, "      : ");
  for (int i = 0; i < nd; i++) {
    int j = i / 4, h = (i / 2) % 2, c = i % 2;
    tc_sb_printf(sb, "%s\"+f\"(d[%d])", i ? ", " : "", (h * nt + j) * 2 + c);
  }
  if (rs) tc_sb_puts(sb, "\n      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"(1));\n");
  else tc_sb_puts(sb, "\n      : \"l\"(da), \"l\"(db), \"r\"(1));\n");
  tc_sb_puts(sb, "#else\n    __trap(); /* wgmma needs sm_90a */\n#endif\n  }\n};\n#endif\n");
}

/* fp8 (m64nNk32, e4m3/e5m2, mixed allowed): both operands from shared-memory descriptors and
 * both K-major, so the instruction takes no transpose immediates (the PTX ISA allows them for
 * 16-bit types only); the specialization's TNSP_A and TNSP_B are 0, and TB names B's type. */
void tc_cuda_wgmma_op_f8(tc_strbuf *sb, int n, bool a_e5m2, bool b_e5m2) {
  const char *ta = a_e5m2 ? "e5m2" : "e4m3", *tb = b_e5m2 ? "e5m2" : "e4m3";
  int nd = n / 2, nt = n / 8;
  tc_sb_puts(sb, "#ifndef TCG_EMU\n");
  tc_sb_printf(sb, "template <> struct tcg__wgmma_ss_op<%d, tcg_%s, 0, 0, tcg_%s> {\n  static __device__ __forceinline__ void run(float *d, uint64_t da, uint64_t db) {\n", n, ta, tb);
  tc_sb_printf(sb, "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                   "wgmma.mma_async.sync.aligned.m64n%dk32.f32.%s.%s {", nd + 2, n, ta, tb);
  for (int i = 0; i < nd; i++) tc_sb_printf(sb, "%s%%%d", i ? "," : "", i);
  tc_sb_printf(sb, "}, %%%d, %%%d, p, 1, 1; }\"\n", nd, nd + 1);
  tc_sb_puts(sb, "      : ");
  for (int i = 0; i < nd; i++) { /* the same accumulator fragment as k16 (the D layout depends on N only) */
    int j = i / 4, h = (i / 2) % 2, c = i % 2;
    tc_sb_printf(sb, "%s\"+f\"(d[%d])", i ? ", " : "", (h * nt + j) * 2 + c);
  }
  tc_sb_puts(sb, "\n      : \"l\"(da), \"l\"(db), \"r\"(1));\n");
  tc_sb_puts(sb, "#else\n    __trap(); /* wgmma needs sm_90a */\n#endif\n  }\n};\n#endif\n");
}
