/* cuda_prelude.h: the CUDA device prelude (tcg_*.cuh in this folder), embedded at build time.
 * Generated CUDA C++ is tc_dtype_c_prelude() followed by tc_cuda_prelude() and the kernel;
 * it includes no header. API and layouts: docs/cuda-prelude.md. */
#ifndef TILEC_TARGET_CUDA_PRELUDE_H
#define TILEC_TARGET_CUDA_PRELUDE_H

const char *tc_cuda_prelude(void);

#endif
