/* runtime.h: tilec's Metal runtime (runtime.c), written in C against the function table of
 * objc.h, so one code path drives Apple's Metal.framework on macOS and the simulated device
 * (sim.h) everywhere else.
 *
 * A tc_mtl_rt holds a device, a command queue, the selectors, and what the machine allows:
 * the MSL language version it compiles kernels with (tc_mtl_choose_language) and why. Work is
 * batched: uploads to private buffers, dispatches and downloads are encoded into the open
 * command buffer of their queue (one per queue), and run when the batch is flushed, so the
 * kernels a caller launches one after another are chained dispatches in one command buffer.
 * A blocking launch or a download flushes. Every function is safe to call from several
 * threads; the batch of a queue is guarded by the runtime's mutex. */
#ifndef TILEC_METAL_RUNTIME_H
#define TILEC_METAL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/metal/objc.h"
#include "tilec.h"

/* ---- storage modes ---- */
typedef enum tc_mtl_storage {
  TC_MTL_STORAGE_UNSET = 0,
  TC_MTL_STORAGE_PRIVATE = 1, /* the default: GPU memory; the host reaches it through blits */
  TC_MTL_STORAGE_SHARED = 2   /* CPU and GPU see the same memory through `contents` */
} tc_mtl_storage;

/* "private" / "shared" -> the mode; false for anything else. */
bool tc_mtl_storage_parse(const char *text, tc_mtl_storage *out);
const char *tc_mtl_storage_name(tc_mtl_storage m);
/* The storage mode in force: the target option (`option`, already parsed; UNSET when absent)
 * wins over $TILEC_METAL_STORAGE_MODE, which wins over the default (private). *source says
 * which: "target option storage_mode", "TILEC_METAL_STORAGE_MODE", "default". An unknown
 * value in the environment is TILEC_ERROR_USAGE. */
tilec_status tc_mtl_storage_resolve(tc_mtl_storage option, tc_mtl_storage *mode, const char **source, tilec_error *err);

/* ---- what the machine allows ---- */
/* The language version for an OS (major.minor), an SDK (MMmmpp) and the device's answers to
 * supportsFamily:Metal3 / Metal4: Metal 4.0 only when all three allow it (OS 26, SDK 26,
 * family Metal4); else the newest 3.x the OS and SDK both know (3.2 at 15, 3.1 at 14, 3.0 at
 * 13; and a Metal3-family GPU), else 2.4. `why` gets one line saying what decided it. */
tc_nsuint tc_mtl_choose_language(long os_major, long os_minor, long sdk, bool metal3, bool metal4, char *why, size_t cap);
/* "4.0", "3.2": the version's text (static buffer per call site: pass your own). */
void tc_mtl_language_text(tc_nsuint lang, char *out, size_t cap);

typedef struct tc_mtl_rt tc_mtl_rt;

/* Opens the device through `api`: MTLCreateSystemDefaultDevice, a command queue, the OS/SDK/
 * family queries and the language choice. TILEC_ERROR_TARGET when there is no device. */
tilec_status tc_mtl_rt_open(const tc_objc_api *api, tc_mtl_rt **out, tilec_error *err);
/* Flushes what is pending and releases everything. */
void tc_mtl_rt_close(tc_mtl_rt *rt);
/* The process's runtime, opened on first use on the platform's table (Apple's on macOS, the
 * simulated device elsewhere) and kept until exit; NULL with the reason. */
tc_mtl_rt *tc_mtl_rt_shared(char *why, size_t cap);

const tc_objc_api *tc_mtl_rt_api(const tc_mtl_rt *rt);
tc_id tc_mtl_rt_queue(const tc_mtl_rt *rt);        /* tilec's own command queue */
tc_nsuint tc_mtl_rt_language(const tc_mtl_rt *rt);  /* the language version kernels compile with */
const char *tc_mtl_rt_language_why(const tc_mtl_rt *rt);
size_t tc_mtl_rt_max_threadgroup_memory(const tc_mtl_rt *rt); /* the device's, in bytes */

/* ---- kernels ---- */
typedef struct tc_mtl_kernel tc_mtl_kernel;
/* Compiles MSL in process (newLibraryWithSource:options:error:) with the runtime's language
 * version and makes the pipeline for `entry`. `needs` is the lowest language version the source
 * needs (0: any): a kernel that needs more than the machine allows is TILEC_ERROR_TARGET
 * saying why, before anything compiles. A compile error is TILEC_ERROR_TARGET carrying Metal's
 * log. `threads` (the kernel's threadgroup size) is checked against the pipeline's limit and
 * `tg_mem` against the device's. */
tilec_status tc_mtl_kernel_create(tc_mtl_rt *rt, const char *name, const char *source, const char *entry, tc_nsuint needs,
                                  const uint32_t threads[3], size_t tg_mem, tc_mtl_kernel **out, tilec_error *err);
/* The same from a precompiled .metallib (newLibraryWithData:error:); `needs` and the limits as
 * above. */
tilec_status tc_mtl_kernel_from_metallib(tc_mtl_rt *rt, const char *name, const void *metallib, size_t size,
                                         const char *entry, tc_nsuint needs, const uint32_t threads[3], size_t tg_mem,
                                         tc_mtl_kernel **out, tilec_error *err);
void tc_mtl_kernel_free(tc_mtl_kernel *k);

/* One [[buffer(i)]] argument: a buffer at an offset, or bytes (setBytes, at most 4 KB). */
typedef struct tc_mtl_arg {
  tc_id buffer;
  size_t offset;
  const void *bytes;
  size_t nbytes;
} tc_mtl_arg;

/* Encodes one dispatch of `groups` threadgroups (of the kernel's threads and threadgroup
 * memory) into `queue`'s open command buffer (NULL: the runtime's queue). With `wait`, the batch
 * is then flushed and its errors come back here; without, it stays open for more work. */
tilec_status tc_mtl_dispatch(tc_mtl_rt *rt, tc_id queue, tc_mtl_kernel *k, const tc_mtl_arg *args, int nargs,
                             const uint32_t groups[3], bool wait, tilec_error *err);
/* Commits `queue`'s open command buffer (NULL: the runtime's queue) and waits for it; a fault
 * in any of its commands comes back as TILEC_ERROR_TARGET with Metal's description. *gpu_ms
 * (may be NULL) gets GPUEndTime - GPUStartTime of that command buffer (0 when nothing was
 * pending). */
tilec_status tc_mtl_flush(tc_mtl_rt *rt, tc_id queue, double *gpu_ms, tilec_error *err);

/* ---- buffers ---- */
/* A new buffer (+1; tc_mtl_buffer_release) of `bytes` in storage mode `mode`. */
tilec_status tc_mtl_buffer_new(tc_mtl_rt *rt, size_t bytes, tc_mtl_storage mode, tc_id *out, tilec_error *err);
void tc_mtl_buffer_release(tc_mtl_rt *rt, tc_id buffer);
/* Whether `obj` is an MTLBuffer, and its length and storage mode. */
bool tc_mtl_buffer_info(tc_mtl_rt *rt, tc_id obj, size_t *length, tc_mtl_storage *mode);
/* Host -> buffer: through `contents` for shared buffers (after flushing pending work on
 * `queue`), through a staging buffer and a blit encoded into `queue`'s batch for private ones
 * (no flush: it is ordered before the dispatches that follow). */
tilec_status tc_mtl_upload(tc_mtl_rt *rt, tc_id queue, tc_id buffer, size_t offset, const void *src, size_t n,
                           tilec_error *err);
/* Buffer -> host: a blit into a staging buffer for private buffers, then a flush of `queue`'s
 * batch, then the bytes (shared: flush, then `contents`). */
tilec_status tc_mtl_download(tc_mtl_rt *rt, tc_id queue, tc_id buffer, size_t offset, void *dst, size_t n,
                             tilec_error *err);

#endif
