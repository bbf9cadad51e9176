/* cuda.h: the cuda target's execution backends. Their available() probes the machine
 * honestly (driver, device, NVRTC, nvcc); the code generator is a later issue, so generate,
 * build, load and launch are NULL and the registry refuses to compile for them. */
#ifndef TILEC_CUDA_H
#define TILEC_CUDA_H
#include "target/target.h"

extern const tc_backend tc_cuda_nvrtc_backend; /* in process: TC_BACKEND_IN_MEMORY */
extern const tc_backend tc_cuda_nvcc_backend;  /* external nvcc producing a cubin */

#endif
