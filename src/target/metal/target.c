/* target.c: the metal target's description and options. One machine description: the Apple
 * GPU family 7 (M1) and later: 32-wide SIMD groups, 1024 threads and 32 KB of threadgroup
 * memory per threadgroup, 8x8 simdgroup matrices. The options say which Metal the code is for:
 *   msl=3.0|3.1|4.0   the Metal Shading Language version (default 3.1; 4.0 with metal4=1)
 *   metal4=0|1        Metal 4 (MSL 4.0): the cooperative-tensor GEMM may be chosen (docs/metal.md)
 *   storage_mode=private|shared  the runtime's storage mode for the buffers tilec allocates
 *                     (docs/metal-runtime.md); not part of the code, so not of the arch
 * Both are folded into the description's arch ("msl3.1", "msl4.0+metal4"), which the code
 * generator reads and the kernel cache keys on. */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "target/metal/metal.h"
#include "target/metal/runtime.h"
#include "util/diag.h"

static const tc_mma_shape k_mma_apple7[] = {
    {"simdgroup_matrix", 8, 8, 8, "float16", "float32"},
    {"simdgroup_matrix", 8, 8, 8, "float32", "float32"},
};

bool tc_metal_arch_parse(const char *arch, int *msl, bool *metal4) {
  int major = 0, minor = 0;
  if (!arch || sscanf(arch, "msl%d.%d", &major, &minor) != 2) return false;
  *msl = major * 100 + minor * 10;
  *metal4 = strstr(arch, "+metal4") != NULL;
  return true;
}

static bool metal_describe(const tc_target_spec *spec, tc_target_desc *out, tilec_error *err) {
  int msl = 0, metal4 = -1;
  for (int i = 0; i < spec->nopts; i++) {
    const char *k = spec->opts[i].key, *v = spec->opts[i].value;
    if (!strcmp(k, "msl")) {
      if (!strcmp(v, "3.0")) msl = 300;
      else if (!strcmp(v, "3.1")) msl = 310;
      else if (!strcmp(v, "3.2")) msl = 320;
      else if (!strcmp(v, "4.0")) msl = 400;
      else {
        tc_error(err, TILEC_ERROR_USAGE, "unknown MSL version '%s' for metal (supported: 3.0, 3.1, 3.2, 4.0)", v);
        return false;
      }
    } else if (!strcmp(k, "metal4")) {
      if (strcmp(v, "0") && strcmp(v, "1")) {
        tc_error(err, TILEC_ERROR_USAGE, "metal4=%s: expected metal4=0 or metal4=1", v);
        return false;
      }
      metal4 = v[0] == '1';
    } else if (!strcmp(k, "plant")) { /* a bug planted on purpose (tc_gpu_plant; docs/testing.md) */
      if (!tc_gpu_plant_parse(v, &out->plant)) {
        tc_error(err, TILEC_ERROR_USAGE, "plant=%s: expected plant=layout-thread, barrier, bounds or reduce-init", v);
        return false;
      }
    } else if (!strcmp(k, "storage_mode")) {
      /* the runtime's, not the code's: buffers tilec allocates for this kernel (docs/metal-runtime.md) */
      tc_mtl_storage m;
      if (!tc_mtl_storage_parse(v, &m)) {
        tc_error(err, TILEC_ERROR_USAGE, "storage_mode=%s: expected storage_mode=private or storage_mode=shared", v);
        return false;
      }
      out->storage_mode = (int)m;
    }
  }
  if (metal4 == 1 && msl && msl < 400) {
    tc_error(err, TILEC_ERROR_USAGE, "metal4=1 needs MSL 4.0 (msl=%d.%d given)", msl / 100, msl % 100 / 10);
    return false;
  }
  if (!msl) msl = metal4 == 1 ? 400 : 310;
  out->target = "metal";
  snprintf(out->arch, sizeof out->arch, "msl%d.%d%s", msl / 100, msl % 100 / 10, metal4 == 1 ? "+metal4" : "");
  out->warp_size = 32;
  out->max_threads_per_block = 1024;
  out->smem_per_block = 32 * 1024;
  out->mma = k_mma_apple7;
  out->nmma = (int)(sizeof k_mma_apple7 / sizeof *k_mma_apple7);
  return true;
}

static const char *const k_metal_keys[] = {"msl", "metal4", "storage_mode", "plant"};

/* On tile IR: gemm accumulators move to the scope of the instruction that holds them
 * (simdgroup_scope.c). The GPU lowering then runs inside the backends' generate (generate.c),
 * as on cuda. */
static const tc_target_pass k_metal_passes[] = {{"metal-accumulator-scope", tc_metal_accumulator_scope}};

const tc_target tc_metal_target = {
    .name = "metal",
    .option_keys = k_metal_keys,
    .noption_keys = 4,
    .describe = metal_describe,
    .passes = k_metal_passes,
    .npasses = 1,
};
