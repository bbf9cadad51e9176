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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

TCG_DEV uint32_t tcg__smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Thread 0 makes n barriers that complete on one arrival plus their transaction bytes; the
 * fences make them visible to the TMA unit. A block barrier follows (the lowering places it). */
TCG_DEV void tcg_mbar_init(uint64_t *bar, int n) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    for (int i = 0; i < n; i++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(tcg__smem_addr(bar + i)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
}

/* Thread 0 arrives on the stage's barrier and announces the bytes its copies will deliver. */
TCG_DEV void tcg_mbar_expect(uint64_t *bar, uint32_t bytes) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tcg__smem_addr(bar)), "r"(bytes) : "memory");
}

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

/* Thread 0 copies one box (coordinates in the map's five dimensions, innermost first) into
 * shared memory at dst; it completes on bar. Elements outside the tensor arrive as zeros. */
TCG_DEV void tcg_tma_load(void *dst, const tcg_tmap *map, uint64_t *bar, int c2, int c3, int c4) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                 ::"r"(tcg__smem_addr(dst)), "l"((unsigned long long)map), "r"(0), "r"(0), "r"(c2), "r"(c3), "r"(c4),
                 "r"(tcg__smem_addr(bar))
                 : "memory");
}

#endif
#endif
