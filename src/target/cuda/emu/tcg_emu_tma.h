/* tcg_emu_tma.h: the TMA and mbarrier part of the prelude (prelude/tcg_tma.cuh) for the cuda
 * emulator. Loads land when no thread of the cluster can go on (tcg_emu_tma_issue), stores when
 * their thread waits for them; a wait on an mbarrier yields until its phase completes. */
#ifndef TCG_EMU_TMA_H
#define TCG_EMU_TMA_H 1

#include <sched.h>
#include <time.h>

TCG_DEV uint32_t tcg__smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
static inline bool tcg_emu_thread0(void) { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }

TCG_DEV void tcg_mbar_init(uint64_t *bar, int n, int count) {
  if (tcg_emu_thread0())
    for (int i = 0; i < n; i++) tcg_emu_mbar_init(bar + i, count);
}
TCG_DEV void tcg_mbar_expect_any(uint64_t *bar, uint32_t bytes) {
  tcg_emu_mbar_expect(bar, bytes);
  tcg_emu_mbar_arrive(bar);
}
TCG_DEV void tcg_mbar_expect(uint64_t *bar, uint32_t bytes) {
  if (tcg_emu_thread0()) tcg_mbar_expect_any(bar, bytes);
}
TCG_DEV void tcg_mbar_arrive_warp(uint64_t *bar) {
  __syncwarp();
  if ((threadIdx.x & 31) == 0) tcg_emu_mbar_arrive(bar);
}
template <int C> TCG_DEV void tcg_mbar_arrive_cluster(uint64_t *bar) {
  __syncwarp();
  const uint32_t lane = threadIdx.x & 31;
  if (lane < C) tcg_emu_mbar_arrive(tcg_emu_rt->peer_smem(lane) + tcg__smem_addr(bar));
}
TCG_DEV void tcg_cluster_sync() { tcg_emu_rt->meet(TC_CUEMU_CLUSTER, 0, 0); }
template <int R> TCG_DEV void tcg_setmaxnreg_dec() {}
template <int R> TCG_DEV void tcg_setmaxnreg_inc() {}
TCG_DEV void tcg_mbar_wait(uint64_t *bar, uint32_t parity) { tcg_emu_mbar_wait(bar, parity); }

TCG_DEV void tcg_tma_load_any(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  const int c[5] = {0, 0, c2, c3, c4};
  tcg_emu_tma_issue(tcg__smem_addr(dst), map, tcg__smem_addr(bar), c, 0);
}
TCG_DEV void tcg_tma_load(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  if (tcg_emu_thread0()) tcg_tma_load_any(dst, map, bar, c2, c3, c4);
}
template <int C, uint32_t SHARE, int GROUPS>
TCG_DEV void tcg_tma_load_multicast(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  const uint32_t rank = tcg_emu_cur->rank;
  const int c[5] = {0, 0, c2, c3 + (int)rank * GROUPS, c4};
  tcg_emu_tma_issue(tcg__smem_addr(dst) + rank * SHARE, map, tcg__smem_addr(bar), c, (1u << C) - 1);
}
TCG_DEV void tcg_tma_load_rows_any(void *dst, const tcg_tmap *map, uint64_t *bar, int panel, int row, int lead) {
  const int c[5] = {0, row, panel, lead, 0};
  tcg_emu_tma_issue(tcg__smem_addr(dst), map, tcg__smem_addr(bar), c, 0);
}
TCG_DEV void tcg_tma_load_rows(void *dst, const tcg_tmap *map, uint64_t *bar, int panel, int row, int lead) {
  if (tcg_emu_thread0()) tcg_tma_load_rows_any(dst, map, bar, panel, row, lead);
}

TCG_DEV void tcg_fence_async_shared() {}
TCG_DEV void tcg_tma_store(const void *src, const tcg_tmap *map, int c2, int c3, int c4) {
  const int c[5] = {0, 0, c2, c3, c4};
  tcg_emu_bulk_push(map, tcg__smem_addr(src), c);
}
TCG_DEV void tcg_tma_store_rows(const void *src, const tcg_tmap *map, int panel, int row, int lead) {
  const int c[5] = {0, row, panel, lead, 0};
  tcg_emu_bulk_push(map, tcg__smem_addr(src), c);
}
template <int N> TCG_DEV void tcg_tma_store_wait_read() { tcg_emu_bulk_wait(N); }
template <int N> TCG_DEV void tcg_tma_store_wait() { tcg_emu_bulk_wait(N); }
template <int N> TCG_DEV void tcg_bar_consumers() { tcg_emu_rt->bar_sync(1, N); }

/* Stream-K's hand-over: blocks of different clusters run on different OS threads; a block
 * waits only for one of lower index, which a worker took before it (or finished). */
template <int N> TCG_DEV void tcg_sk_signal(unsigned *flag) {
  tcg_bar_consumers<N>();
  if (threadIdx.x == 0) __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
}
template <int N> TCG_DEV void tcg_sk_wait(unsigned *flag) {
  if (threadIdx.x == 0) {
    const time_t start = time(NULL);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
      sched_yield();
      if (time(NULL) - start > 300) tcg_emu_rt->fail("stream-K: the partial sums of the previous block never arrived");
    }
    __atomic_store_n(flag, 0u, __ATOMIC_RELAXED);
  }
  tcg_bar_consumers<N>();
}
template <typename T> TCG_DEV void tcg_sk_put4(T *slot, const T *v) { memcpy(slot, v, 4 * sizeof(T)); }
template <typename T> TCG_DEV void tcg_sk_add4(T *slot, T *v) {
  for (int i = 0; i < 4; i++) v[i] += slot[i];
}
template <typename T> TCG_DEV void tcg_sk_put1(T *slot, const T *v) { slot[0] = v[0]; }
template <typename T> TCG_DEV void tcg_sk_add1(T *slot, T *v) { v[0] += slot[0]; }

#endif
