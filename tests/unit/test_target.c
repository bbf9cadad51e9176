/* test_target.c: targets apart from their backends: target strings ("cuda,arch=sm_90a") with
 * their exact diagnostics, the descriptions of each target and cuda arch, and the pass lists
 * compile.c runs. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "target/cpu/cpu.h"
#include "target/cuda/cuda.h"
#include "target/metal/metal.h"
#include "util/diag.h"

/* Parse and describe `text`; on failure the error message, else "". */
static const char *describe(const char *text, tc_target_desc *d) {
  static tilec_error err;
  memset(&err, 0, sizeof err);
  tc_target_spec spec;
  const tc_target *t = NULL;
  if (tc_target_spec_parse(text, &spec, &err) && (t = tc_target_find(spec.kind, &err)) != NULL &&
      tc_target_describe(t, &spec, d, &err))
    return "";
  return err.message;
}

TEST(good_target_strings) {
  tc_target_spec s;
  tilec_error err = {0};
  CHECK(tc_target_spec_parse("cuda,arch=sm_90a", &s, &err));
  CHECK_STR(s.kind, "cuda");
  CHECK_INT(s.nopts, 1);
  CHECK_STR(s.opts[0].key, "arch");
  CHECK_STR(s.opts[0].value, "sm_90a");
  CHECK(tc_target_spec_parse("cpu", &s, &err));
  CHECK_STR(s.kind, "cpu");
  CHECK_INT(s.nopts, 0);
  CHECK(tc_target_spec_parse(NULL, &s, &err));
  CHECK_STR(s.kind, "auto");
  CHECK(tc_target_spec_parse("", &s, &err));
  CHECK_STR(s.kind, "auto");
  tc_target_desc d;
  CHECK_STR(describe("auto", &d), "");
  CHECK_STR(d.target, "cpu");
}

TEST(bad_target_strings) {
  tc_target_desc d;
  CHECK_STR(describe("cuda,arch", &d), "target 'cuda,arch': option 'arch' is not key=value");
  CHECK_STR(describe("cuda,=sm_80", &d), "target 'cuda,=sm_80': option '=sm_80' is not key=value");
  CHECK_STR(describe("cuda,arch=", &d), "target 'cuda,arch=': option 'arch' has an empty value");
  CHECK_STR(describe("cuda,arch=sm_80,arch=sm_90", &d),
            "target 'cuda,arch=sm_80,arch=sm_90': option 'arch' is given twice");
  CHECK_STR(describe(",arch=sm_80", &d), "target ',arch=sm_80' names no target before its options");
  CHECK_STR(describe("cuda,", &d), "target 'cuda,': option '' is not key=value");
  CHECK_STR(describe("tpu", &d), "unknown target 'tpu' (targets: cpu, cuda, metal)");
  CHECK_STR(describe("cuda,sm=90", &d), "unknown option 'sm' for target 'cuda' (valid options: arch, clusters, streamk, plant)");
  CHECK_STR(describe("cpu,arch=native", &d), "unknown option 'arch' for target 'cpu' (cpu takes no options)");
  CHECK_STR(describe("cuda,arch=sm_75", &d),
            "unknown cuda arch 'sm_75' (supported: sm_80, sm_86, sm_89, sm_90, sm_90a)");
}

static bool dlopen_cuda_present(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib != NULL; /* left loaded, as the probes leave it */
}

static bool has_mma(const tc_target_desc *d, const char *instr, const char *ab) {
  for (int i = 0; i < d->nmma; i++)
    if (strcmp(d->mma[i].instr, instr) == 0 && strcmp(d->mma[i].ab, ab) == 0) return true;
  return false;
}

TEST(cuda_descriptions) {
  static const struct {
    const char *arch;
    int64_t smem;
    bool fp8, wgmma;
  } want[] = {
      {"sm_80", 163 * 1024, false, false}, {"sm_86", 99 * 1024, false, false},
      {"sm_89", 99 * 1024, true, false},   {"sm_90", 227 * 1024, true, false},
      {"sm_90a", 227 * 1024, true, true},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    char text[64];
    snprintf(text, sizeof text, "cuda,arch=%s", want[i].arch);
    tc_target_desc d;
    CHECK_STR(describe(text, &d), "");
    CHECK_STR(d.target, "cuda");
    CHECK_STR(d.arch, want[i].arch);
    CHECK_INT(d.warp_size, 32);
    CHECK_INT(d.max_threads_per_block, 1024);
    CHECK_INT(d.smem_per_block, want[i].smem);
    CHECK(has_mma(&d, "mma.sync", "float16"));
    CHECK(has_mma(&d, "mma.sync", "float8") == want[i].fp8);
    CHECK(has_mma(&d, "wgmma", "float16") == want[i].wgmma);
  }
  /* no arch: device 0's when a driver and a device are present, else sm_80 */
  tc_target_desc d;
  CHECK_STR(describe("cuda", &d), "");
  if (!dlopen_cuda_present()) CHECK_STR(d.arch, "sm_80");
}

TEST(cpu_and_metal_descriptions) {
  tc_target_desc d;
  CHECK_STR(describe("cpu", &d), "");
  CHECK_STR(d.arch, "native");
  CHECK_INT(d.warp_size, 1);
  CHECK_INT(d.nmma, 0);
  CHECK_STR(describe("metal", &d), "");
  CHECK_INT(d.warp_size, 32);
  CHECK_INT(d.smem_per_block, 32 * 1024);
}

/* The pass lists compile.c runs (the cpu plan is a pass; metal moves gemm accumulators to its
 * scopes before the GPU lowering). */
TEST(pass_lists) {
  CHECK_INT(tc_cpu_target.npasses, 2);
  CHECK_STR(tc_cpu_target.passes[0].name, "cpu-launch-check");
  CHECK_STR(tc_cpu_target.passes[1].name, "cpu-plan");
  CHECK_INT(tc_cuda_target.npasses, 0);
  CHECK_INT(tc_metal_target.npasses, 1);
  CHECK_STR(tc_metal_target.passes[0].name, "metal-accumulator-scope");
}

int main(void) {
  RUN(good_target_strings);
  RUN(bad_target_strings);
  RUN(cuda_descriptions);
  RUN(cpu_and_metal_descriptions);
  RUN(pass_lists);
  TEST_MAIN_END();
}
