/* emu_run.h: the cuda emulator's runner: a kernel built for the CPU (emu_build.c) run over its
 * grid, every CUDA thread a cooperative thread (util/fiber.c). Clusters run on one OS thread
 * each, several at once; docs/cuda.md, "The emulator". */
#ifndef TILEC_CUDA_EMU_RUN_H
#define TILEC_CUDA_EMU_RUN_H
#include <stddef.h>

#include "tilec.h"

typedef struct tc_cuemu_lib tc_cuemu_lib;

/* Shared-object bytes (emu_build.c) -> a library whose ABI is this runner's. */
tilec_status tc_cuemu_lib_open(const void *so, size_t so_size, tc_cuemu_lib **out, tilec_error *err);
void tc_cuemu_lib_close(tc_cuemu_lib *lib);
/* Runs kernel `entry` with args[i] pointing at parameter i's value (cuLaunchKernel's
 * convention) over grid x block threads in clusters of `cluster` blocks along x (grid[0] a
 * multiple of it), `smem` bytes of dynamic shared memory per block. A trap, a failed check or a
 * deadlock (threads waiting for something no thread can bring about) is an error naming it. */
tilec_status tc_cuemu_run(tc_cuemu_lib *lib, const char *entry, void *const *args, const unsigned grid[3],
                          const unsigned block[3], unsigned cluster, size_t smem, tilec_error *err);

#endif
