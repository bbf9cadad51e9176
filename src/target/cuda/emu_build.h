/* emu_build.h: generated CUDA C++ built for the CPU, for the cuda emulator (docs/cuda.md, "The
 * emulator"). */
#ifndef TILEC_CUDA_EMU_BUILD_H
#define TILEC_CUDA_EMU_BUILD_H
#include <stddef.h>

#include "tilec.h"
#include "util/cxxlib.h"

/* The emulator's headers (the .h files of src/target/cuda/emu, embedded by the Makefile). */
extern const tc_cxx_header tc_cuda_emu_headers[];
extern const int tc_cuda_emu_nheaders;

/* The CUDA source NVRTC would compile (codegen's full source) -> shared-object bytes: built with
 * TCG_EMU defined and emu/tcg_emu.h first; the dynamic shared memory declaration reads the
 * block's memory, and every kernel NAME gets an entry point tc_cuemu_entry_NAME(void *const *args)
 * that passes *args[i] as parameter i. */
tilec_status tc_cuemu_compile(const char *source, void **so, size_t *so_size, char **log, tilec_error *err);

#endif
