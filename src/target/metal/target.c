/* target.c: the metal target's description and pass list. One description for now: the
 * Apple GPU family 7 (M1) and later: 32-wide SIMD groups, 1024 threads and 32 KB of
 * threadgroup memory per threadgroup, 8x8 simdgroup matrices. */
#include <stdio.h>

#include "target/metal/metal.h"

static const tc_mma_shape k_mma_apple7[] = {
    {"simdgroup_matrix", 8, 8, 8, "float16", "float32"},
    {"simdgroup_matrix", 8, 8, 8, "float32", "float32"},
};

static bool metal_describe(const tc_target_spec *spec, tc_target_desc *out, tilec_error *err) {
  (void)spec;
  (void)err;
  out->target = "metal";
  snprintf(out->arch, sizeof out->arch, "apple7");
  out->warp_size = 32;
  out->max_threads_per_block = 1024;
  out->smem_per_block = 32 * 1024;
  out->mma = k_mma_apple7;
  out->nmma = (int)(sizeof k_mma_apple7 / sizeof *k_mma_apple7);
  return true;
}

/* The GPU lowering (src/gpu/) adds its passes here as it lands. */
const tc_target tc_metal_target = {
    .name = "metal",
    .describe = metal_describe,
};
