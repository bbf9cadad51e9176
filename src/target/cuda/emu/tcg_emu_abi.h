/* tcg_emu_abi.h: what the cuda emulator's runner (src/target/cuda/emu_run.c, C) and the kernels it
 * runs (generated CUDA C++ built for the CPU against tcg_emu.h) share. Both sides include this
 * file; the library is refused when its TC_CUEMU_ABI differs from the runner's. */
#ifndef TC_CUEMU_ABI_H
#define TC_CUEMU_ABI_H
#include <stdint.h>

#define TC_CUEMU_ABI 1
/* Bytes of state the runner gives the library per block (warp and warpgroup exchange areas)
 * and per thread (its pending cp.async copies, wgmma and bulk stores), the thread states laid
 * out in thread order; the first TC_CUEMU_THREAD_ZEROED bytes of each thread's are zeroed when
 * the block starts. */
#define TC_CUEMU_BLOCK_BYTES (160 * 1024)
#define TC_CUEMU_THREAD_BYTES (12 * 1024)
#define TC_CUEMU_THREAD_ZEROED 64

typedef struct tc_cuemu_dim3 {
  unsigned x, y, z;
} tc_cuemu_dim3;

/* One CUDA thread as the kernel sees it (threadIdx and friends read it). */
typedef struct tc_cuemu_thread {
  tc_cuemu_dim3 tid, bid, bdim, gdim;
  unsigned linear;       /* thread index in the block, x fastest */
  unsigned rank, csize;  /* the block's rank in its cluster, and the cluster's size */
  unsigned char *smem;   /* the block's dynamic shared memory */
  void *block;           /* the block's state for the library (TC_CUEMU_BLOCK_BYTES) */
  void *self;            /* this thread's state for the library (TC_CUEMU_THREAD_BYTES) */
} tc_cuemu_thread;

/* A TMA tensor map as the emulated kernel reads it (the 128 bytes of a CUtensorMap): dims[0]
 * innermost, strides in bytes of dims 1..4, the box in elements, the swizzle span in bytes
 * (0, 32, 64 or 128); elements outside dims read as zero and are not written. */
typedef struct tc_cuemu_tmap {
  uint64_t base;
  uint64_t dims[5], strides[4];
  unsigned box[5], elem_bytes, swizzle;
} tc_cuemu_tmap;

/* The scopes whose live threads tc_cuemu_runtime.meet gathers. */
enum { TC_CUEMU_WARP, TC_CUEMU_WARPGROUP, TC_CUEMU_BLOCK, TC_CUEMU_CLUSTER };

/* The runner's services, called from kernel code (on a fiber). */
typedef struct tc_cuemu_runtime {
  /* Every live thread of the scope meets; the last to arrive runs last(ctx) (when not NULL)
   * before any goes on. */
  void (*meet)(int scope, void (*last)(void *ctx), void *ctx);
  /* Named barrier `id` of the block (bar.sync / bar.arrive): it completes when `count`
   * threads (0: every live thread of the block) have arrived; sync also waits for that. */
  void (*bar_sync)(int id, int count);
  void (*bar_arrive)(int id, int count);
  /* Yields until ready(ctx) is true; `what` names the wait in a deadlock report. */
  void (*wait)(int (*ready)(void *ctx), void *ctx, const char *what);
  /* fn(a copy of arg) runs once no thread of the cluster can go on (the latest time an
   * asynchronous copy may land). */
  void (*defer)(void (*fn)(void *arg), const void *arg, unsigned size);
  /* The dynamic shared memory and library state of block `rank` of this cluster. */
  unsigned char *(*peer_smem)(unsigned rank);
  void *(*peer_block)(unsigned rank);
  /* Ends the launch with this message (a trap, a failed check); does not return. */
  void (*fail)(const char *msg);
} tc_cuemu_runtime;

#endif
