/* tcg_emu.h: CUDA C++ on the CPU, for the cuda emulator (docs/cuda.md, "The emulator").
 *
 * The emulator builds the very source NVRTC would compile, with TCG_EMU defined and this file
 * first: it spells CUDA's keywords and builtins in plain C++ (threadIdx reads the running
 * thread's record, __syncthreads meets the block's threads, shuffles exchange through the warp's
 * area) and gives the prelude's TCG_EMU branches (prelude/tcg_*.cuh) the helpers they share:
 * shared-memory addresses, the mbarrier, TMA boxes. The runner (emu_run.c) runs every CUDA
 * thread as a fiber; tcg_emu_abi.h is the contract between the two. */
#ifndef TCG_EMU_H
#define TCG_EMU_H 1

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tcg_emu_abi.h"

/* ---- the library's side of the ABI ---- */
static const tc_cuemu_runtime *tcg_emu_rt;
static thread_local tc_cuemu_thread *tcg_emu_cur;
extern "C" __attribute__((visibility("default"))) int tc_cuemu_abi(void) { return TC_CUEMU_ABI; }
extern "C" __attribute__((visibility("default"))) void tc_cuemu_install(const tc_cuemu_runtime *rt) { tcg_emu_rt = rt; }
extern "C" __attribute__((visibility("default"))) tc_cuemu_thread **tc_cuemu_current(void) { return &tcg_emu_cur; }

/* ---- keywords ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __grid_constant__

/* the vector types generated code uses */
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) float2 { float x, y; };

#define threadIdx (tcg_emu_cur->tid)
#define blockIdx (tcg_emu_cur->bid)
#define blockDim (tcg_emu_cur->bdim)
#define gridDim (tcg_emu_cur->gdim)

[[noreturn]] static inline void tcg_emu_fail(const char *msg) {
  tcg_emu_rt->fail(msg);
  __builtin_unreachable();
}
#define __trap() tcg_emu_fail("__trap(): a kernel check failed (a runtime assert, or an instruction the emulated arch lacks)")

/* ---- bit casts and math builtins ---- */
static inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
static inline float __uint_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
static inline unsigned __float_as_uint(float x) { unsigned i; memcpy(&i, &x, 4); return i; }
static inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
static inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
/* glibc declares these names itself: macros take them over */
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __log2f(x) log2f(x)
#define __exp10f(x) exp10f(x)
#define __powf(x, y) powf(x, y)
#define __tanf(x) tanf(x)
static inline float __fdividef(float a, float b) { return a / b; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }

/* ---- barriers and warp exchange ---- */
static inline void __syncthreads(void) { tcg_emu_rt->bar_sync(0, 0); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)mask;
  tcg_emu_rt->meet(TC_CUEMU_WARP, 0, 0);
}
static inline unsigned tcg_emu_lane(void) { return tcg_emu_cur->linear % 32; }

/* The block state (tcg_emu_abi.h): warp exchange slots first (32 warps x 32 lanes x 64 bytes),
 * then warpgroup slots (8 warpgroups x 128 threads x 64 bytes). */
enum { TCG_EMU_SLOT = 64, TCG_EMU_WARPS = 32 };
static inline unsigned char *tcg_emu_warp_slot(unsigned lane) {
  return (unsigned char *)tcg_emu_cur->block + ((tcg_emu_cur->linear / 32) * 32 + lane) * TCG_EMU_SLOT;
}
static inline unsigned char *tcg_emu_wg_slot(unsigned t) {
  return (unsigned char *)tcg_emu_cur->block + TCG_EMU_WARPS * 32 * TCG_EMU_SLOT + ((tcg_emu_cur->linear / 128) * 128 + t) * TCG_EMU_SLOT;
}

/* Every live lane deposits v, meets, reads lane src's value (its own when src is out of the
 * width's group), and meets again before the slots are reused. */
template <class T> static inline T tcg_emu_shfl(T v, int src) {
  static_assert(sizeof(T) <= TCG_EMU_SLOT, "shuffle of a value wider than a slot");
  memcpy(tcg_emu_warp_slot(tcg_emu_lane()), &v, sizeof v);
  tcg_emu_rt->meet(TC_CUEMU_WARP, 0, 0);
  T r = v;
  if (src >= 0 && src < 32) memcpy(&r, tcg_emu_warp_slot((unsigned)src), sizeof r);
  tcg_emu_rt->meet(TC_CUEMU_WARP, 0, 0);
  return r;
}
template <class T> static inline T __shfl_xor_sync(unsigned mask, T v, int lanemask, int width = 32) {
  (void)mask;
  int l = (int)tcg_emu_lane(), s = l ^ lanemask;
  return tcg_emu_shfl(v, (s / width == l / width) ? s : l);
}
template <class T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  (void)mask;
  int l = (int)tcg_emu_lane();
  return tcg_emu_shfl(v, (l / width) * width + src % width);
}
template <class T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  (void)mask;
  int l = (int)tcg_emu_lane(), s = l + (int)d;
  return tcg_emu_shfl(v, s / width == l / width ? s : l);
}
template <class T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
  (void)mask;
  int l = (int)tcg_emu_lane(), s = l - (int)d;
  return tcg_emu_shfl(v, s >= 0 && s / width == l / width ? s : l);
}

/* ---- atomics (blocks of different clusters run on different OS threads) ---- */
static inline float atomicAdd(float *p, float v) {
  unsigned *w = (unsigned *)p, old = __atomic_load_n(w, __ATOMIC_RELAXED), nw;
  do nw = __float_as_uint(__uint_as_float(old) + v);
  while (!__atomic_compare_exchange_n(w, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return __uint_as_float(old);
}
static inline double atomicAdd(double *p, double v) {
  unsigned long long *w = (unsigned long long *)p, old = __atomic_load_n(w, __ATOMIC_RELAXED), nw;
  do nw = (unsigned long long)__double_as_longlong(__longlong_as_double((long long)old) + v);
  while (!__atomic_compare_exchange_n(w, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return __longlong_as_double((long long)old);
}
static inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
static inline int atomicCAS(int *p, int cmp, int v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
static inline int atomicMax(int *p, int v) {
  int old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return old;
}
static inline int atomicMin(int *p, int v) {
  int old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old > v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return old;
}
static inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicExch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
static inline float atomicExch(float *p, float v) {
  return __uint_as_float(__atomic_exchange_n((unsigned *)p, __float_as_uint(v), __ATOMIC_SEQ_CST));
}

/* ---- shared-memory addresses ----
 * A shared address is the byte offset in the block's dynamic shared memory (which starts
 * 1024-aligned, as the hardware's swizzles assume); an address mapped into another block of the
 * cluster (mapa) carries that block's rank + 1 in bits 24 and up. */
static inline size_t __cvta_generic_to_shared(const void *p) {
  return (size_t)((const unsigned char *)p - tcg_emu_cur->smem);
}
static inline unsigned char *tcg_emu_smem(uint32_t addr) {
  uint32_t rank = addr >> 24;
  return (rank ? tcg_emu_rt->peer_smem(rank - 1) : tcg_emu_cur->smem) + (addr & 0xffffffu);
}
/* The hardware's shared-memory swizzles on absolute byte addresses: the 16-byte chunk (bits
 * 4..6) XOR the row of the pattern (bits 7..9), over 128, 64 or 32 bytes (1, 2 or 3 chunk bits). */
static inline uint32_t tcg_emu_swizzle(uint32_t a, int width) {
  uint32_t m = width == 128 ? 7u : width == 64 ? 3u : width == 32 ? 1u : 0u;
  return a ^ (((a >> 7) & m) << 4);
}

/* ---- the thread's state (tcg_emu_abi.h: its first 64 bytes are zeroed when the block starts) ---- */
enum { TCG_EMU_CP = 96, TCG_EMU_WG = 64, TCG_EMU_BULK = 24 };
struct tcg_emu_cp { unsigned char *dst; const unsigned char *src; int bytes, valid, group, pad; };
struct tcg_emu_wgop { /* one wgmma in flight (emu/tcg_emu_wgmma.h) */
  void (*exec)(unsigned first_thread, int index);
  float *d;
  uint64_t da, db;
  uint32_t a[4];
  int group, pad;
};
struct tcg_emu_bulk { tc_cuemu_tmap map; uint32_t src; int c[5]; int group; };
struct tcg_emu_tstate {
  int ncp, cp_groups, nwg, wg_groups, nbulk, bulk_groups, pad[10];
  tcg_emu_cp cp[TCG_EMU_CP];
  tcg_emu_wgop wg[TCG_EMU_WG];
  tcg_emu_bulk bulk[TCG_EMU_BULK];
};
static_assert(sizeof(tcg_emu_tstate) <= TC_CUEMU_THREAD_BYTES, "the thread state outgrew its bytes");
static inline tcg_emu_tstate *tcg_emu_me(void) { return (tcg_emu_tstate *)tcg_emu_cur->self; }
/* thread t of the block (the runner lays thread states out in order) */
static inline tcg_emu_tstate *tcg_emu_thread_state(unsigned t) {
  return (tcg_emu_tstate *)((unsigned char *)tcg_emu_cur->self + ((ptrdiff_t)t - (ptrdiff_t)tcg_emu_cur->linear) * TC_CUEMU_THREAD_BYTES);
}

/* ---- cp.async: copies land when their group is waited for ---- */
static inline void tcg_emu_cp_push(void *dst, const void *src, int bytes, int valid) {
  tcg_emu_tstate *s = tcg_emu_me();
  if (s->ncp == TCG_EMU_CP) tcg_emu_fail("cuda emulator: more than 96 cp.async copies in flight in one thread");
  s->cp[s->ncp++] = tcg_emu_cp{(unsigned char *)dst, (const unsigned char *)src, bytes, valid, s->cp_groups, 0};
}
static inline void tcg_emu_cp_wait(int n) { /* at most n committed groups still in flight */
  tcg_emu_tstate *s = tcg_emu_me();
  int keep = 0;
  for (int i = 0; i < s->ncp; i++) {
    tcg_emu_cp *c = &s->cp[i];
    if (c->group < s->cp_groups - n) {
      if (c->valid) memcpy(c->dst, c->src, (size_t)c->bytes);
      else memset(c->dst, 0, (size_t)c->bytes);
    } else {
      s->cp[keep++] = *c;
    }
  }
  s->ncp = keep;
}

/* ---- mbarrier: 8 bytes of shared memory: pending arrivals (bits 0..15), the arrival count
 * (16..30), the phase's parity (31); the transaction count in the high word ---- */
struct tcg_emu_mbar { uint32_t w; int32_t tx; };
static inline void tcg_emu_mbar_init(void *bar, int count) {
  tcg_emu_mbar *m = (tcg_emu_mbar *)bar;
  m->w = (uint32_t)count | ((uint32_t)count << 16);
  m->tx = 0;
}
static inline void tcg_emu_mbar_check(tcg_emu_mbar *m) {
  if ((m->w & 0xffffu) == 0 && m->tx == 0) m->w = ((m->w ^ 0x80000000u) & 0xffff0000u) | ((m->w >> 16) & 0x7fffu);
}
static inline void tcg_emu_mbar_arrive(void *bar) {
  tcg_emu_mbar *m = (tcg_emu_mbar *)bar;
  if ((m->w & 0xffffu) == 0) tcg_emu_fail("cuda emulator: an mbarrier arrival beyond its count (was it initialised?)");
  m->w--;
  tcg_emu_mbar_check(m);
}
static inline void tcg_emu_mbar_expect(void *bar, uint32_t bytes) { ((tcg_emu_mbar *)bar)->tx += (int32_t)bytes; }
static inline void tcg_emu_mbar_complete_tx(void *bar, uint32_t bytes) {
  tcg_emu_mbar *m = (tcg_emu_mbar *)bar;
  m->tx -= (int32_t)bytes;
  tcg_emu_mbar_check(m);
}
struct tcg_emu_wait_ctx { const tcg_emu_mbar *m; uint32_t parity; };
static int tcg_emu_mbar_done(void *p) {
  const tcg_emu_wait_ctx *c = (const tcg_emu_wait_ctx *)p;
  return (c->m->w >> 31) != c->parity;
}
static inline void tcg_emu_mbar_wait(void *bar, uint32_t parity) {
  tcg_emu_wait_ctx c{(const tcg_emu_mbar *)bar, parity & 1};
  tcg_emu_rt->wait(tcg_emu_mbar_done, &c, "an mbarrier wait");
}

/* ---- TMA: a box of the map (tc_cuemu_tmap, made by the runtime) between global memory and a
 * swizzled shared tile; loads are deferred until nothing else can run ---- */
template <class F> static inline void tcg_emu_box_walk(const tc_cuemu_tmap *m, const int *c, F f) {
  const int eb = (int)m->elem_bytes;
  uint64_t o = 0; /* byte offset in the box */
  for (uint32_t i4 = 0; i4 < m->box[4]; i4++)
    for (uint32_t i3 = 0; i3 < m->box[3]; i3++)
      for (uint32_t i2 = 0; i2 < m->box[2]; i2++)
        for (uint32_t i1 = 0; i1 < m->box[1]; i1++)
          for (uint32_t i0 = 0; i0 < m->box[0]; i0++, o += (uint64_t)eb) {
            const int64_t g[5] = {(int64_t)c[0] + i0, (int64_t)c[1] + i1, (int64_t)c[2] + i2, (int64_t)c[3] + i3, (int64_t)c[4] + i4};
            bool in = true;
            uint64_t at = 0;
            for (int d = 0; d < 5; d++) {
              if (g[d] < 0 || (uint64_t)g[d] >= m->dims[d]) in = false;
              at += (uint64_t)g[d] * (d ? m->strides[d - 1] : (uint64_t)eb);
            }
            f(o, in ? (unsigned char *)(uintptr_t)m->base + at : (unsigned char *)0, eb);
          }
}
static inline uint64_t tcg_emu_box_bytes(const tc_cuemu_tmap *m) {
  return (uint64_t)m->box[0] * m->box[1] * m->box[2] * m->box[3] * m->box[4] * m->elem_bytes;
}
/* one deferred load: the box into each destination block's shared memory, completing on each
 * one's barrier */
struct tcg_emu_tma_load {
  tc_cuemu_tmap map; /* a copy: the kernel's parameter may be gone when the box lands */
  int c[5], ndst;
  unsigned char *smem[8]; /* each destination block's shared memory */
  uint32_t dst, bar;      /* offsets in it */
};
static void tcg_emu_tma_land(void *p) {
  const tcg_emu_tma_load *t = (const tcg_emu_tma_load *)p;
  const int width = (int)t->map.swizzle;
  for (int k = 0; k < t->ndst; k++) {
    unsigned char *sm = t->smem[k];
    tcg_emu_box_walk(&t->map, t->c, [&](uint64_t o, const unsigned char *g, int eb) {
      unsigned char *s = sm + tcg_emu_swizzle(t->dst + (uint32_t)o, width);
      if (g) memcpy(s, g, (size_t)eb);
      else memset(s, 0, (size_t)eb);
    });
    tcg_emu_mbar_complete_tx(sm + t->bar, (uint32_t)tcg_emu_box_bytes(&t->map));
  }
}
static inline void tcg_emu_tma_issue(uint32_t dst, const void *map, uint32_t bar, const int c[5], unsigned mask) {
  tcg_emu_tma_load t;
  memset(&t, 0, sizeof t);
  memcpy(&t.map, map, sizeof t.map);
  memcpy(t.c, c, sizeof t.c);
  t.dst = dst & 0xffffffu;
  t.bar = bar & 0xffffffu;
  if (!mask) t.smem[t.ndst++] = tcg_emu_cur->smem;
  for (unsigned r = 0; r < 8 && mask; r++)
    if (mask >> r & 1) t.smem[t.ndst++] = tcg_emu_rt->peer_smem(r);
  tcg_emu_rt->defer(tcg_emu_tma_land, &t, sizeof t);
}
/* stores: each its own bulk group, written when the thread waits for it */
static inline void tcg_emu_bulk_store_run(const tcg_emu_bulk *b) {
  const unsigned char *sm = tcg_emu_cur->smem;
  const int width = (int)b->map.swizzle;
  tcg_emu_box_walk(&b->map, b->c, [&](uint64_t o, const unsigned char *g, int eb) {
    if (g) memcpy((unsigned char *)g, sm + tcg_emu_swizzle(b->src + (uint32_t)o, width), (size_t)eb);
  });
}
static inline void tcg_emu_bulk_push(const void *map, uint32_t src, const int c[5]) {
  tcg_emu_tstate *s = tcg_emu_me();
  if (s->nbulk == TCG_EMU_BULK) tcg_emu_fail("cuda emulator: more than 24 bulk stores in flight in one thread");
  tcg_emu_bulk b;
  memcpy(&b.map, map, sizeof b.map);
  b.src = src & 0xffffffu;
  memcpy(b.c, c, sizeof b.c);
  b.group = s->bulk_groups++;
  s->bulk[s->nbulk++] = b;
}
static inline void tcg_emu_bulk_wait(int n) {
  tcg_emu_tstate *s = tcg_emu_me();
  int keep = 0;
  for (int i = 0; i < s->nbulk; i++) {
    if (s->bulk[i].group < s->bulk_groups - n) tcg_emu_bulk_store_run(&s->bulk[i]);
    else s->bulk[keep++] = s->bulk[i];
  }
  s->nbulk = keep;
}

/* The appended entry points call this when a thread's kernel returns: copies it never waited
 * for still land (a kernel that exits with wgmma in flight is left to the verifier). */
static inline void tcg_emu_thread_exit(void) {
  tcg_emu_cp_wait(0);
  tcg_emu_bulk_wait(0);
}

#endif
