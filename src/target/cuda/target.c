/* target.c: the cuda target's description (docs/cli.md, "Target strings"; docs/cuda.md, "The
 * arch rule") and its pass list.
 *
 * The arch comes from the target string (cuda,arch=sm_90a); without one, from $TILEC_CUDA_ARCH;
 * without that, from device 0 when a driver and a device are present (compute capability 9.0
 * gives sm_90a, so that wgmma and TMA are usable: the kernel runs on that device; other
 * capabilities give the closest supported arch at or below them of the same major version, or
 * sm_90 for newer majors); else sm_80. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "target/cuda/cuda_internal.h"
#include "util/diag.h"

#define MMA_SM80                                                                                  \
  {"mma.sync", 16, 8, 16, "float16", "float32"}, {"mma.sync", 16, 8, 16, "bfloat16", "float32"},   \
      {"mma.sync", 16, 8, 8, "tfloat32", "float32"}, {"mma.sync", 16, 8, 32, "int8", "int32"},     \
      {"mma.sync", 8, 8, 4, "float64", "float64"}
#define MMA_SM89 MMA_SM80, {"mma.sync", 16, 8, 32, "float8", "float32"}
static const tc_mma_shape k_mma_sm80[] = {MMA_SM80};
static const tc_mma_shape k_mma_sm89[] = {MMA_SM89};
static const tc_mma_shape k_mma_sm90a[] = {
    MMA_SM89,
    {"wgmma", 64, 256, 16, "float16", "float32"},
    {"wgmma", 64, 256, 16, "bfloat16", "float32"},
    {"wgmma", 64, 256, 8, "tfloat32", "float32"},
    {"wgmma", 64, 256, 32, "float8", "float32"},
    {"wgmma", 64, 256, 32, "int8", "int32"},
};
#define N(a) (int)(sizeof a / sizeof *a)

/* Shared memory per block is the opt-in maximum (cudaFuncAttributeMaxDynamicSharedMemorySize):
 * 163 KB on sm_80, 99 KB on sm_86/sm_89, 227 KB on sm_90. */
static const struct arch_row {
  const char *arch;
  int major, minor;
  int64_t smem;
  const tc_mma_shape *mma;
  int nmma;
} k_archs[] = {
    {"sm_80", 8, 0, 163 * 1024, k_mma_sm80, N(k_mma_sm80)},
    {"sm_86", 8, 6, 99 * 1024, k_mma_sm80, N(k_mma_sm80)},
    {"sm_89", 8, 9, 99 * 1024, k_mma_sm89, N(k_mma_sm89)},
    {"sm_90", 9, 0, 227 * 1024, k_mma_sm89, N(k_mma_sm89)},
    {"sm_90a", 9, 0, 227 * 1024, k_mma_sm90a, N(k_mma_sm90a)},
};
#define NARCHS (int)(sizeof k_archs / sizeof *k_archs)

/* The arch for compute capability major.minor (see the rule at the top). */
static const char *arch_for_capability(int major, int minor) {
  if (major == 9 && minor == 0) return "sm_90a";
  if (major > 9) return "sm_90";
  const char *best = NULL;
  for (int i = 0; i < NARCHS; i++)
    if (k_archs[i].major == major && k_archs[i].minor <= minor) best = k_archs[i].arch;
  return best ? best : "sm_80";
}

/* Device 0's compute capability through the driver table (driver.c: dlopen, tilec does not
 * link CUDA). The arch is probed once per process. */
static char g_device_arch[16];
static void probe_device_arch(void) {
  char why[256];
  const tc_cu_api *cu = tc_cu_api_get(why, sizeof why);
  tc_cu_device dev;
  int major = 0, minor = 0;
  if (!cu || cu->device_count <= 0 || cu->DeviceGet(&dev, 0) != TC_CU_SUCCESS ||
      cu->DeviceGetAttribute(&major, TC_CU_DEV_ATTR_CC_MAJOR, dev) != TC_CU_SUCCESS ||
      cu->DeviceGetAttribute(&minor, TC_CU_DEV_ATTR_CC_MINOR, dev) != TC_CU_SUCCESS)
    return;
  snprintf(g_device_arch, sizeof g_device_arch, "%s", arch_for_capability(major, minor));
}

static const char *default_arch(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, probe_device_arch);
  return g_device_arch[0] ? g_device_arch : TC_CUDA_DEFAULT_ARCH;
}

/* `from`: where the arch came from when not the target string, for the error. */
static bool describe_arch(const char *arch, const char *from, tc_target_desc *out, tilec_error *err) {
  for (int i = 0; i < NARCHS; i++) {
    if (strcmp(k_archs[i].arch, arch) != 0) continue;
    out->target = "cuda";
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    out->warp_size = 32;
    out->max_threads_per_block = 1024;
    out->smem_per_block = k_archs[i].smem;
    out->mma = k_archs[i].mma;
    out->nmma = k_archs[i].nmma;
    return true;
  }
  char names[128] = "";
  for (int i = 0; i < NARCHS; i++)
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", k_archs[i].arch);
  tc_error(err, TILEC_ERROR_USAGE, "unknown cuda arch '%s'%s%s (supported: %s)", arch, from ? " from " : "",
           from ? from : "", names);
  return false;
}

bool tc_cuda_describe_arch(const char *arch, tc_target_desc *out, tilec_error *err) {
  return describe_arch(arch, NULL, out, err);
}

bool tc_cuda_arch_known(const char *arch) {
  for (int i = 0; i < NARCHS; i++)
    if (strcmp(k_archs[i].arch, arch) == 0) return true;
  return false;
}

/* clusters=on|off: thread-block clusters with TMA multicast for the GEMM mainloops that suit
 * them (src/gpu/pipeline.c, cluster_pick); off unless asked for (docs/cuda.md, "Clusters").
 * streamk=on|off: persistent GEMMs cut their last waves' tiles along k (streamk.c; docs/cuda.md,
 * "Stream-K"); off unless asked for. */
static bool on_off(const char *key, const char *v, int *out, tilec_error *err) {
  if (!strcmp(v, "on") || !strcmp(v, "1")) *out = 1;
  else if (!strcmp(v, "off") || !strcmp(v, "0")) *out = 2;
  else {
    tc_error(err, TILEC_ERROR_USAGE, "%s=%s: expected %s=on or %s=off", key, v, key, key);
    return false;
  }
  return true;
}

static bool cuda_describe(const tc_target_spec *spec, tc_target_desc *out, tilec_error *err) {
  const char *arch = NULL, *from = NULL;
  int clusters = 0, streamk = 0, plant = 0;
  for (int i = 0; i < spec->nopts; i++) {
    const char *k = spec->opts[i].key, *v = spec->opts[i].value;
    if (strcmp(k, "arch") == 0) arch = v;
    else if (strcmp(k, "plant") == 0 && !tc_gpu_plant_parse(v, &plant)) {
      tc_error(err, TILEC_ERROR_USAGE, "plant=%s: expected plant=layout-thread, barrier, bounds or reduce-init", v);
      return false;
    }
    else if (strcmp(k, "clusters") == 0 && !on_off(k, v, &clusters, err)) return false;
    else if (strcmp(k, "streamk") == 0 && !on_off(k, v, &streamk, err)) return false;
  }
  if (!arch) {
    const char *env = getenv("TILEC_CUDA_ARCH");
    if (env && *env) arch = env, from = "TILEC_CUDA_ARCH";
    else arch = default_arch();
  }
  if (!describe_arch(arch, from, out, err)) return false;
  out->clusters = clusters;
  out->streamk = streamk;
  out->plant = plant;
  return true;
}

/* plant=NAME: a bug planted in the lowering on purpose (tc_gpu_plant; docs/testing.md) */
static const char *const k_cuda_keys[] = {"arch", "clusters", "streamk", "plant"};

/* The GPU lowering (src/gpu/: thread mapping, layouts, barriers, pipelining) adds its passes
 * here as it lands; until then the list is empty and no backend emits. */
const tc_target tc_cuda_target = {
    .name = "cuda",
    .option_keys = k_cuda_keys,
    .noption_keys = 4,
    .describe = cuda_describe,
    .passes = NULL,
    .npasses = 0,
};
