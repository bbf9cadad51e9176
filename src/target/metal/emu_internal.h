/* emu_internal.h: what the emulator's builder (emu_build.c) and runner (emu.c) share with the
 * code they append to a library and with the metal_stdlib stand-in. */
#ifndef TILEC_METAL_EMU_INTERNAL_H
#define TILEC_METAL_EMU_INTERNAL_H

/* Version of the entry-point convention below; a library of another version is refused. */
#define TC_EMU_ABI 1
/* Bytes of exchange area each simdgroup has for its collective operations (metal_stdlib). */
#define TC_EMU_SIMD_SCRATCH 8192

/* One thread's position, as the appended entry points read it (same layout there). */
typedef struct tc_emu_ids {
  unsigned tid[3], tg[3], ntg[3], tptg[3];
  unsigned tindex, lane, sg, nsg;
  void *tg_mem;
} tc_emu_ids;

/* The runner's side of the collective operations (same layout in metal_stdlib). */
typedef struct tc_emu_runtime {
  void (*threadgroup_barrier)(void);
  void (*simdgroup_barrier)(void);
  void *(*simd_scratch)(void);
  unsigned (*simd_lane)(void);
} tc_emu_runtime;

#endif
