/* sim.h: the simulated Metal device (sim_device.c), the Linux side of the runtime's function
 * table (objc.h).
 *
 * It models what the runtime relies on: one device; command queues; buffers with their storage
 * mode (a private buffer's `contents` is NULL, as on a Mac, so a missing blit fails loudly);
 * command buffers holding compute and blit encoders' commands, run in order at commit, with
 * status, error and GPU start/end times; dispatches that run the MSL on the Metal emulator
 * (emu.h); in-process compiles that refuse a language version the configured OS/SDK cannot
 * compile, or source that needs a newer one (MetalPerformancePrimitives: 4.0; bfloat: 3.1),
 * with a compiler log; reference counts and autorelease pools, so leaks show as live objects.
 *
 * Every message is recorded as one line "selector arg..." (newBufferWithLength:options: 4096
 * 0x20), for tests. The device's answers come from a configuration: set by tests
 * (tc_mtl_sim_configure), else read once from the environment:
 *   TILEC_METAL_SIM_OS=15.5          the macOS version NSProcessInfo reports (default 15.5)
 *   TILEC_METAL_SIM_SDK=15.0         the SDK tilec "was built with" (default 15.0)
 *   TILEC_METAL_SIM_FAMILIES=apple9,metal3[,metal4]   GPU families supportsFamily: says YES to
 *   TILEC_METAL_SIM_FAULT=N          the fault mode (below); absent or "off": none
 *   TILEC_METAL_SIM_DEVICE=0         no device (MTLCreateSystemDefaultDevice returns nil)
 * A malformed value makes the device unavailable with the reason (tc_mtl_sim_config_error).
 *
 * Fault mode (fault_after = N >= 0): once N dispatches have run in a command buffer, every
 * later command of it (dispatch or blit) reads private buffers as they were when the command
 * buffer began (what it writes still lands). Shared buffers are never stale. This reproduces, deterministically, the silent
 * corruption the TVM Metal runtime showed after ~11 chained dispatches on private buffers. */
#ifndef TILEC_METAL_SIM_H
#define TILEC_METAL_SIM_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tc_mtl_sim_config {
  long os_major, os_minor, os_patch;
  long sdk_version;   /* MMmmpp */
  bool device;        /* false: MTLCreateSystemDefaultDevice returns nil */
  int apple_family;   /* supportsFamily:Apple<k> is YES for k <= this (0: none) */
  bool metal3, metal4; /* supportsFamily:Metal3 / Metal4 */
  int fault_after;    /* -1: no fault */
} tc_mtl_sim_config;

/* The defaults (macOS 15.5, SDK 15.0, Apple9 + Metal3, no fault). */
void tc_mtl_sim_config_defaults(tc_mtl_sim_config *c);
/* Replace the configuration (from now on; objects already made keep working), and clear the
 * call record. */
void tc_mtl_sim_configure(const tc_mtl_sim_config *c);
/* Back to the configuration the environment gives. */
void tc_mtl_sim_reset(void);
/* Whether the environment's configuration was malformed; the reason in why. */
bool tc_mtl_sim_config_error(char *why, size_t cap);

/* The calls recorded since the last configure/clear, one per line (malloc'd). */
char *tc_mtl_sim_calls(void);
void tc_mtl_sim_clear_calls(void);
/* Objects alive now (created and not yet released to zero), classes excluded. */
long tc_mtl_sim_live_objects(void);

#endif
