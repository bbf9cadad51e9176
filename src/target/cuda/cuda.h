/* cuda.h: the cuda target (description and passes, target.c) and its execution backends
 * (backends.c). The backends' available() probes the machine honestly (driver, device, NVRTC,
 * nvcc); the code generator is a later issue, so generate, build, load and launch are NULL and
 * the registry refuses to compile for them. */
#ifndef TILEC_CUDA_H
#define TILEC_CUDA_H
#include "target/target.h"

extern const tc_backend tc_cuda_nvrtc_backend; /* in process: TC_BACKEND_IN_MEMORY */
extern const tc_backend tc_cuda_nvcc_backend;  /* external nvcc producing a cubin */
extern const tc_target tc_cuda_target;
/* The description of one arch ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"); an unknown
 * arch is an error naming the supported ones. */
bool tc_cuda_describe_arch(const char *arch, tc_target_desc *out, tilec_error *err);

#endif
