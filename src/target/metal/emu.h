/* emu.h: the Metal emulator: MSL source built for the CPU and run there.
 *
 * tc_emu_library_build compiles MSL with the host C++ compiler against tilec's stand-in for
 * <metal_stdlib> (src/target/metal/emu/metal_stdlib) into a shared object; tc_emu_dispatch runs
 * one kernel of it over a grid, every MSL thread a cooperative thread on a small stack, so
 * threadgroup_barrier really waits for the other threads of the threadgroup and the simdgroup
 * operations (simd_shuffle*, simd_sum, simdgroup_matrix) meet their 32 lanes. Threadgroups run
 * on several OS threads at once. docs/metal.md says what this can and cannot show.
 *
 * This interface is shared with the Metal runtime's simulated device: keep it stable (changes
 * are listed at the top of this file and in EMU_API_CHANGES.md). */
#ifndef TILEC_METAL_EMU_H
#define TILEC_METAL_EMU_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec.h"

typedef struct tc_emu_library tc_emu_library; /* MSL source built for the CPU */

/* Builds MSL `source` with the host C++ compiler (`cxx`: a command such as "g++" or "ccache
 * c++"; NULL: $TILEC_EMU_CXX, else "c++") against the metal_stdlib stand-in. On a compile
 * error returns TILEC_ERROR_TARGET with the compiler's log in err (and *log malloc'd, may be
 * NULL; log itself may be NULL when not wanted). */
tilec_status tc_emu_library_build(const char *source, const char *cxx, tc_emu_library **out, char **log,
                                  tilec_error *err);
/* Runs kernel `entry`: grid of `groups[3]` threadgroups of `threads[3]` threads; bindings[i] is
 * what [[buffer(i)]] points at (device buffers and setBytes scalars alike); tg_mem_bytes of
 * dynamic threadgroup memory (the [[threadgroup(0)]] argument). Returns when every threadgroup
 * has finished; a deadlock (threads waiting at barriers that can never be met) is an error. */
tilec_status tc_emu_dispatch(tc_emu_library *lib, const char *entry, void *const *bindings, int nbindings,
                             const uint32_t groups[3], const uint32_t threads[3], size_t tg_mem_bytes,
                             tilec_error *err);
void tc_emu_library_free(tc_emu_library *lib);

/* ---- the two halves of tc_emu_library_build, for the emu backend (its artifact is the shared
 * object, so the disk cache can keep it) ---- */
/* MSL -> shared object bytes (malloc'd). */
tilec_status tc_emu_compile(const char *source, const char *cxx, void **so, size_t *so_size, char **log,
                            tilec_error *err);
/* Shared object bytes -> library. */
tilec_status tc_emu_library_load(const void *so, size_t so_size, tc_emu_library **out, tilec_error *err);
/* Identity of the compiler for cache keys (malloc'd), or NULL with err. */
char *tc_emu_toolchain_id(const char *cxx, tilec_error *err);
/* Whether the C++ compiler exists; else a reason in why. */
bool tc_emu_available(const char *cxx, char *why, size_t cap);
/* The stand-in header's text (generated from src/target/metal/emu/metal_stdlib). */
const char *tc_metal_emu_stdlib(void);
/* The <metal_tensor> / MetalPerformancePrimitives stand-in (src/target/metal/emu/metal_tensor). */
const char *tc_metal_emu_tensor(void);

#endif
