/* metal.h: the metal target (target.c), its code generation (generate.c, codegen.c) and its
 * execution backends: emu (the emulator, everywhere a C++ compiler is; the default off macOS),
 * metal and metallib (macOS: Metal.framework; their runtime is a later issue). */
#ifndef TILEC_METAL_H
#define TILEC_METAL_H
#include "target/target.h"

extern const tc_backend tc_metal_metal_backend;    /* compile from source in process: TC_BACKEND_IN_MEMORY */
extern const tc_backend tc_metal_metallib_backend; /* offline metal compiler -> .metallib */
extern const tc_backend tc_metal_emu_backend;      /* the generated MSL run on the CPU (emu.h) */
extern const tc_target tc_metal_target;            /* description and options (target.c) */

/* The MSL version (x100) and Metal 4 flag a description's arch ("msl3.1", "msl4.0+metal4")
 * stands for; false when it is not one. */
bool tc_metal_arch_parse(const char *arch, int *msl, bool *metal4);

/* Emission for every metal backend: the GPU lowering, then MSL. Fills out->kernel_source,
 * full_source, meta ("entry=", "block=x,y,z", "smem=") and explain (the GEMM path chosen for
 * each T.gemm, and why). */
tilec_status tc_metal_emit(const tc_lowered *lw, tc_generated *out, tilec_error *err);

/* The target pass "metal-accumulator-scope": gemm accumulators move to the metal.simdgroup or
 * metal.cooperative_tensor scope (simdgroup_scope.c). */
bool tc_metal_accumulator_scope(tc_lowered *lw, tilec_error *err);
/* Whether simdgroup_matrix takes an operand of dtype d under MSL `msl` (x100): float16,
 * float32, and bfloat16 from MSL 3.1. */
bool tc_metal_simdgroup_operand(int msl, tc_dtype d);
/* Whether a gemm of these dtypes and K runs on simdgroup_matrix 8x8 (else the SIMT gemm for
 * 8-bit integers, or an error): the rule the scope pass, the code generator and --explain share. */
bool tc_metal_simdgroup_gemm(int msl, tc_dtype a, tc_dtype b, tc_dtype c, int64_t K);

#endif
