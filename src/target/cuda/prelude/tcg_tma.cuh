/* tcg_tma.cuh: tilec's CUDA device prelude, part 4: sm_90's tensor memory accelerator (TMA)
 * and the shared-memory barriers (mbarrier) its copies complete on.
 *
 * A pipelined loop whose producers all qualify (src/gpu/pipeline.c) loads each stage with one
 * cp.async.bulk.tensor per tile, issued by thread 0 of the block, and every thread waits on the
 * stage's mbarrier instead of cp.async groups. The tensor map (a kernel parameter,
 * __grid_constant__, made by the runtime with cuTensorMapEncodeTiled at each launch) describes
 * the global tensor as five dimensions so that one box lands in the lowering's 128-byte-atom
 * layout: (column in a 128-byte atom row, row in an 8-row group, 128-byte panel, 8-row group,
 * the leading dimensions flattened), 128-byte swizzle; docs/cuda.md, "TMA". */
#ifndef TCG_CUDA_TMA
#define TCG_CUDA_TMA 1

/* the map as the kernel takes it (the driver's CUtensorMap: 128 opaque bytes) */
struct __align__(64) tcg_tmap {
  unsigned long long v[16];
};


/* The height, in tiles, of the persistent walk's panels (walk.c): about sqrt(G x other / own),
 * where own and other are the bytes a k iteration loads for one index along the panel's
 * height and along its width, so that a wave of G tiles reads the fewest bytes; within
 * [1, extent]. */
TCG_DEV int tcg_wave_panel(int G, long long own, long long other, int extent) {
  const int p = (int)(sqrtf((float)G * (float)other / (float)own) + 0.5f);
  return p < 1 ? 1 : p > extent ? extent : p;
}

/* Stream-K (codegen.c, streamk.c; docs/cuda.md "Stream-K"). The walk: the first dp tiles whole,
 * block b taking tiles b, b + G, ...; the rest cut into G ranges of (tile, k iteration) units,
 * range b for block b. A range runs its last piece first when that is the head of a tile (the
 * tile's first iterations, which the next block finishes), then the rest from its start: the end
 * of a tile the blocks below began, then whole tiles. Every block then runs the same k
 * iteration at the same time, give or take one, so that the tiles in flight read their operand
 * panels together, through L2, as whole tiles do (pieces at scattered k offsets read them from
 * DRAM: half the speed). A piece that does not end its tile stores its partial sums; it is its
 * block's first piece, so no block waits before it has stored. The block whose piece ends a tile
 * adds the sums of the blocks below that ran its earlier iterations.
 * What is cut: the last two waves' tiles where there are more tiles than blocks, so that a range
 * is at least a tile long; every tile where there are fewer (a tile then spans several ranges).
 * Nothing when the tiles fill the waves, or the blocks' idle share of the last wave is under four
 * k iterations each, or a range would be shorter than that (partial sums cost more). */
struct tcg_sk_walk {
  int dp;      /* the tiles run whole */
  int units;   /* the cut tiles' (tile, k) units */
  int s0;      /* this block's range [s0, s1) */
  int u, e, h; /* the walk: the next unit u of the stretch [u, e); then [s0, h) */
};
TCG_DEV int tcg_sk_begin(const tcg_sk_walk &w, int b) { return (int)((long long)w.units * b / (int)gridDim.x); }
TCG_DEV tcg_sk_walk tcg_sk_schedule(int tiles, int iters) {
  const int G = (int)gridDim.x, b = (int)blockIdx.x, r = tiles % G;
  tcg_sk_walk w = {tiles, 0, 0, 0, 0, 0};
  if (r == 0 || (long long)(G - r) * iters < 4LL * G) return w;
  const int dp = tiles > G ? (tiles / G - 1) * G : 0;
  const long long units = (long long)(tiles - dp) * iters;
  if (units < 4LL * G || units > 0x7fffffffLL) return w;
  w.dp = dp, w.units = (int)units;
  w.s0 = tcg_sk_begin(w, b);
  const int s1 = tcg_sk_begin(w, b + 1), head = (s1 - 1) / iters * iters;
  if (s1 % iters != 0 && head > w.s0) w.u = head, w.e = s1, w.h = head;
  else w.u = w.s0, w.e = s1, w.h = w.s0;
  return w;
}
/* The walk's next piece: its tile and its iterations [k0, k1); false when the range is done. */
TCG_DEV bool tcg_sk_piece(tcg_sk_walk &w, int iters, int &tile, int &k0, int &k1) {
  if (w.u >= w.e) {
    if (w.h <= w.s0) return false;
    w.u = w.s0, w.e = w.h, w.h = w.s0;
  }
  const int t = w.u / iters, end = (t + 1) * iters < w.e ? (t + 1) * iters : w.e;
  tile = w.dp + t;
  k0 = w.u - t * iters;
  k1 = k0 + (end - w.u);
  w.u = end;
  return true;
}
/* Whether block c's range begins after the first unit of `tile`: a block below it ran some of
 * the tile's iterations too. */
TCG_DEV bool tcg_sk_shared_below(const tcg_sk_walk &w, int c, int tile, int iters) {
  return tcg_sk_begin(w, c) > (tile - w.dp) * iters;
}
/* The workspace: a flag per block, then a slot of partial sums per block. */
TCG_DEV unsigned char *tcg_sk_slots(unsigned char *ws) { return ws + (((size_t)gridDim.x * 4 + 255) & ~(size_t)255); }

#if defined(TCG_EMU) /* the emulator (emu/tcg_emu_tma.h) */
#include "tcg_emu_tma.h"
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

TCG_DEV uint32_t tcg__smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Thread 0 makes n barriers that complete on `count` arrivals plus their transaction bytes;
 * the fences make them visible to the TMA unit. A block barrier follows (the lowering places
 * it). */
TCG_DEV void tcg_mbar_init(uint64_t *bar, int n, int count) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    for (int i = 0; i < n; i++)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tcg__smem_addr(bar + i)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
}

/* The calling thread arrives on the stage's barrier and announces the bytes its copies will
 * deliver (_any: whichever thread calls it; the plain form: thread 0 of the block). */
TCG_DEV void tcg_mbar_expect_any(uint64_t *bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tcg__smem_addr(bar)), "r"(bytes) : "memory");
}
TCG_DEV void tcg_mbar_expect(uint64_t *bar, uint32_t bytes) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) tcg_mbar_expect_any(bar, bytes);
}

/* Each warp arrives once, when all its lanes are here: the consumers of a warp-specialized
 * loop freeing a stage (the barrier counts warps). */
TCG_DEV void tcg_mbar_arrive_warp(uint64_t *bar) {
  __syncwarp();
  if ((threadIdx.x & 31) == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(tcg__smem_addr(bar)) : "memory");
}

/* Clusters (pipeline.c's cluster_pick): lanes 0..C-1 of each warp arrive on this barrier of
 * the cluster's blocks 0..C-1 (mapa gives its address in each), once all the warp's lanes are
 * here: a stage the blocks share is free only when every block's consumers freed it. */
template <int C> TCG_DEV void tcg_mbar_arrive_cluster(uint64_t *bar) {
  __syncwarp();
  const uint32_t lane = threadIdx.x & 31;
  if (lane < C) {
    uint32_t at;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(at) : "r"(tcg__smem_addr(bar)), "r"(lane));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(at) : "memory");
  }
}

/* Every thread of the cluster meets here: after the barriers are made (a partner's first
 * copies and arrivals land on them) and before a block exits (a partner may still arrive on
 * its barriers). */
TCG_DEV void tcg_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

/* Register reallocation between the warpgroups of a warp-specialized block: every warp of a
 * warpgroup executes it. */
template <int R> TCG_DEV void tcg_setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R)); }
template <int R> TCG_DEV void tcg_setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R)); }

/* Every thread waits for the barrier's phase with this parity to complete. */
TCG_DEV void tcg_mbar_wait(uint64_t *bar, uint32_t parity) {
  const uint32_t a = tcg__smem_addr(bar);
  uint32_t done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(a), "r"(parity)
                 : "memory");
  } while (!done);
}

/* One box (coordinates in the map's five dimensions, innermost first) into shared memory at
 * dst; it completes on bar. Elements outside the tensor arrive as zeros. _any: the calling
 * thread issues it; the plain form: thread 0 of the block. */
TCG_DEV void tcg_tma_load_any(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
               ::"r"(tcg__smem_addr(dst)), "l"((unsigned long long)map), "r"(0), "r"(0), "r"(c2), "r"(c3), "r"(c4),
               "r"(tcg__smem_addr(bar))
               : "memory");
}
TCG_DEV void tcg_tma_load(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) tcg_tma_load_any(dst, map, bar, c2, c3, c4);
}

/* A box shared by the C blocks of a cluster (a split map, whose box is 1/C of the tile's
 * 8-row groups): the block of rank r loads the r-th share, SHARE bytes at dst + r * SHARE and
 * GROUPS groups from group c3 + r * GROUPS, into the same place in every block of the cluster,
 * completing on each block's barrier at bar's offset. Each block's barrier so expects the
 * whole tile, as without clusters. */
template <int C, uint32_t SHARE, int GROUPS>
TCG_DEV void tcg_tma_load_multicast(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
               ::"r"(tcg__smem_addr(dst) + rank * SHARE), "l"((unsigned long long)map), "r"(0), "r"(0), "r"(c2),
               "r"(c3 + (int)rank * GROUPS), "r"(c4), "r"(tcg__smem_addr(bar)), "h"((unsigned short)((1u << C) - 1))
               : "memory");
}

/* The row form, for a tensor whose rows are not whole 8-row groups (a one-panel tile; the map
 * is (column in the atom row, row, panel, leading dimensions, 1), runtime.c): rows past the
 * tensor's end arrive as zeros, in the same shared layout as the five-dimension form's box. */
TCG_DEV void tcg_tma_load_rows_any(void *dst, const tcg_tmap *map, uint64_t *bar, int panel, int row, int lead) {
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
               ::"r"(tcg__smem_addr(dst)), "l"((unsigned long long)map), "r"(0), "r"(row), "r"(panel), "r"(lead), "r"(0),
               "r"(tcg__smem_addr(bar))
               : "memory");
}
TCG_DEV void tcg_tma_load_rows(void *dst, const tcg_tmap *map, uint64_t *bar, int panel, int row, int lead) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) tcg_tma_load_rows_any(dst, map, bar, panel, row, lead);
}

/* TMA stores (the staged epilogue's TMA form, src/gpu/epilogue.c): the calling thread copies the
 * swizzled shared tile at src into the box at the given coordinates (the map's five dimensions,
 * as tcg_tma_load_any's; _rows: the row form's), each store its own bulk group; elements
 * outside the tensor are not written. The writing threads fence their shared stores first. */
TCG_DEV void tcg_fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
TCG_DEV void tcg_tma_store(const void *src, const tcg_tmap *map, int c2, int c3, int c4) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
               ::"l"((unsigned long long)map), "r"(0), "r"(0), "r"(c2), "r"(c3), "r"(c4), "r"(tcg__smem_addr(src))
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
TCG_DEV void tcg_tma_store_rows(const void *src, const tcg_tmap *map, int panel, int row, int lead) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];"
               ::"l"((unsigned long long)map), "r"(0), "r"(row), "r"(panel), "r"(lead), "r"(0), "r"(tcg__smem_addr(src))
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/* At most N of the calling thread's newer stores are still running: _read, they have read their
 * shared tiles (which may be rewritten); the plain form, their writes are done. */
template <int N> TCG_DEV void tcg_tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory"); }
template <int N> TCG_DEV void tcg_tma_store_wait() { asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory"); }

/* The consumers of a warp-specialized block (its threads other than the producer warpgroup)
 * meet at named barrier 1; barrier 0 (__syncthreads) would wait for the producers too. */
template <int N> TCG_DEV void tcg_bar_consumers() { asm volatile("bar.sync 1, %0;" ::"n"(N) : "memory"); }

/* Stream-K's hand-over. The contributor's consumers store their partial sums past L1 (.cg),
 * fence, meet, and thread 0 releases the flag; the owner's thread 0 acquires it and clears it
 * for the next launch, and the consumers meet before reading the sums (past L1, which may hold
 * an earlier launch's). */
template <int N> TCG_DEV void tcg_sk_signal(unsigned *flag) {
  __threadfence();
  tcg_bar_consumers<N>();
  if (threadIdx.x == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(1u) : "memory");
}
template <int N> TCG_DEV void tcg_sk_wait(unsigned *flag) {
  if (threadIdx.x == 0) {
    unsigned v;
    do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    while (v == 0);
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(0u) : "memory");
  }
  tcg_bar_consumers<N>();
}
TCG_DEV void tcg_sk_put4(float *slot, const float *v) { __stcg((float4 *)slot, make_float4(v[0], v[1], v[2], v[3])); }
TCG_DEV void tcg_sk_put4(int *slot, const int *v) { __stcg((int4 *)slot, make_int4(v[0], v[1], v[2], v[3])); }
TCG_DEV void tcg_sk_add4(float *slot, float *v) {
  const float4 p = __ldcg((const float4 *)slot);
  v[0] += p.x, v[1] += p.y, v[2] += p.z, v[3] += p.w;
}
TCG_DEV void tcg_sk_add4(int *slot, int *v) {
  const int4 p = __ldcg((const int4 *)slot);
  v[0] += p.x, v[1] += p.y, v[2] += p.z, v[3] += p.w;
}
template <typename T> TCG_DEV void tcg_sk_put1(T *slot, const T *v) { __stcg(slot, v[0]); }
template <typename T> TCG_DEV void tcg_sk_add1(T *slot, T *v) { v[0] += __ldcg(slot); }

#endif
#endif
