/* tcg_emu_wgmma.h: sm_90a's warpgroup MMA for the cuda emulator, included by
 * prelude/tcg_wgmma.cuh in place of the instructions when TCG_EMU is defined.
 *
 * wgmma.mma_async is asynchronous: an instruction only records itself in its thread's list (the
 * accumulator's address, the descriptors, A's registers) with the group it belongs to; it runs
 * when a tcg_wgmma_wait retires its group. That is the latest moment the hardware may run it,
 * so reading the accumulator before the wait, or overwriting a shared operand before it, gives
 * a wrong result here as it may on the GPU. The wait is a meeting of the warpgroup: the last
 * thread to arrive runs every retired instruction for all 128 threads.
 *
 * Operands in shared memory are read through the matrix descriptor as the PTX ISA defines it:
 * start address, leading and stride byte offsets (16-byte units), swizzle mode (1: 128 bytes,
 * 2: 64, 3: 32). A K-major operand's element (row r, k) is at start + (r / 8) SBO + (r % 8) W +
 * k bytes, an MN-major one's (k, mn) at start + (k / 8) SBO + (k % 8) W + (mn bytes / W) LBO +
 * mn bytes % W, W the swizzle's span; the swizzle then applies to the absolute address. The
 * accumulator fragment: register i of the instruction is row 16 warp + lane / 4 + 8 h, column
 * 8 j + 2 (lane % 4) + c (i = 4 j + 2 h + c), which tilec keeps at (h N/8 + j) 2 + c. */
#ifndef TCG_EMU_WGMMA_H
#define TCG_EMU_WGMMA_H 1

TCG_DEV void tcg__wg_fence() {}
TCG_DEV void tcg__fence_proxy_async() {}
template <int NREG> TCG_DEV void tcg__wg_pin(float *acc) { (void)acc; }
TCG_DEV void tcg__wg_commit() { tcg_emu_me()->wg_groups++; }

TCG_DEV void tcg_wg_turn_wait() { tcg_emu_rt->bar_sync(2 + (int)threadIdx.x / 128, 256); }
template <int G> TCG_DEV void tcg_wg_turn_pass() { tcg_emu_rt->bar_arrive(2 + ((int)threadIdx.x / 128 + 1) % G, 256); }
template <int G> TCG_DEV void tcg_wg_turn_init() {
  if ((int)threadIdx.x / 128 == G - 1) tcg_emu_rt->bar_arrive(2, 256);
}

/* element (mn, k) of an operand through its descriptor */
template <class T> static inline float tcg_emu_desc_elem(uint64_t desc, int mn_major, int mn, int k) {
  const uint32_t start = (uint32_t)(desc & 0x3fff) << 4, lbo = (uint32_t)(desc >> 16 & 0x3fff) << 4,
                 sbo = (uint32_t)(desc >> 32 & 0x3fff) << 4;
  const int mode = (int)(desc >> 62), W = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0;
  if (!W) tcg_emu_fail("cuda emulator: a wgmma descriptor without a swizzle mode (tilec never makes one)");
  const uint32_t by = (uint32_t)sizeof(typename T::T);
  uint32_t a;
  if (!mn_major) {
    a = start + (uint32_t)(mn / 8) * sbo + (uint32_t)(mn % 8) * (uint32_t)W + (uint32_t)k * by;
  } else {
    const uint32_t mb = (uint32_t)mn * by;
    a = start + (uint32_t)(k / 8) * sbo + (uint32_t)(k % 8) * (uint32_t)W + mb / (uint32_t)W * lbo + mb % (uint32_t)W;
  }
  typename T::T v;
  memcpy(&v, tcg_emu_cur->smem + tcg_emu_swizzle(a, W), sizeof v);
  return T::to_c(v);
}

/* Runs instruction q of every thread of the warpgroup whose first thread is t0. */
template <int N, class TA, class TB, int TNSP_A, int TNSP_B, int RS> static void tcg_emu_wgmma_exec(unsigned t0, int q) {
  enum { KS = 32 / sizeof(typename TA::T), NT = N / 8 };
  static thread_local float A[64][KS], B[N][KS]; /* too large for a fiber's stack */
  const tcg_emu_wgop *o0 = &tcg_emu_thread_state(t0)->wg[q];
  for (int n = 0; n < N; n++)
    for (int k = 0; k < KS; k++) B[n][k] = tcg_emu_desc_elem<TB>(o0->db, TNSP_B, n, k);
  if (RS) { /* A from the threads' registers: the mma.sync A fragment of each warp's 16 rows */
    for (unsigned t = 0; t < 128; t++) {
      const tcg_emu_wgop *o = &tcg_emu_thread_state(t0 + t)->wg[q];
      const int w = (int)t / 32, g = (int)(t % 32) / 4, tt = (int)t % 4;
      for (int j = 0; j < 4; j++)
        for (int e = 0; e < 2; e++) A[16 * w + g + 8 * (j & 1)][(j >> 1) * 8 + 2 * tt + e] = tcg_emu_elem<TA>(o->a[j], e);
    }
  } else {
    for (int m = 0; m < 64; m++)
      for (int k = 0; k < KS; k++) A[m][k] = tcg_emu_desc_elem<TA>(o0->da, TNSP_A, m, k);
  }
  for (unsigned t = 0; t < 128; t++) {
    const tcg_emu_wgop *o = &tcg_emu_thread_state(t0 + t)->wg[q];
    const int w = (int)t / 32, g = (int)(t % 32) / 4, tt = (int)t % 4;
    for (int i = 0; i < N / 2; i++) {
      const int j = i / 4, h = i / 2 % 2, c = i % 2, row = 16 * w + g + 8 * h, col = 8 * j + 2 * tt + c;
      float acc = o->d[(h * NT + j) * 2 + c];
      for (int k = 0; k < KS; k++) acc += A[row][k] * B[col][k];
      o->d[(h * NT + j) * 2 + c] = acc;
    }
  }
}

static inline void tcg_emu_wg_push(void (*exec)(unsigned, int), float *d, uint64_t da, uint64_t db, const uint32_t *a) {
  tcg_emu_tstate *s = tcg_emu_me();
  if (s->nwg == TCG_EMU_WG) tcg_emu_fail("cuda emulator: more than 64 wgmma instructions in flight in one thread");
  tcg_emu_wgop *o = &s->wg[s->nwg++];
  o->exec = exec;
  o->d = d;
  o->da = da;
  o->db = db;
  if (a) memcpy(o->a, a, sizeof o->a);
  o->group = s->wg_groups;
}

template <int N, class T, int TNSP_A, int TNSP_B, class TB> struct tcg__wgmma_ss_op {
  TCG_SDEV void run(float *d, uint64_t da, uint64_t db) {
    tcg_emu_wg_push(tcg_emu_wgmma_exec<N, T, TB, TNSP_A, TNSP_B, 0>, d, da, db, 0);
  }
};
template <int N, class T, int TNSP_B> struct tcg__wgmma_rs_op {
  TCG_SDEV void run(float *d, const uint32_t *a, uint64_t db) {
    tcg_emu_wg_push(tcg_emu_wgmma_exec<N, T, T, 0, TNSP_B, 1>, d, 0, db, a);
  }
};

/* The last of the warpgroup to arrive retires, in order, the instructions of every group older
 * than the newest *keep of its first thread (the warpgroup issues the same instructions). */
static void tcg_emu_wg_retire(void *ctx) {
  const int keep = *(const int *)ctx;
  const unsigned t0 = tcg_emu_cur->linear / 128 * 128;
  tcg_emu_tstate *s0 = tcg_emu_thread_state(t0);
  int n = 0;
  while (n < s0->nwg && s0->wg[n].group < s0->wg_groups - keep) n++;
  for (int q = 0; q < n; q++) s0->wg[q].exec(t0, q);
  for (unsigned t = 0; t < 128; t++) {
    tcg_emu_tstate *s = tcg_emu_thread_state(t0 + t);
    if (s->nwg < n) continue; /* a thread past the end of the block */
    memmove(s->wg, s->wg + n, sizeof s->wg[0] * (size_t)(s->nwg - n));
    s->nwg -= n;
  }
}
template <int N> TCG_DEV void tcg_wgmma_wait() {
  int keep = N;
  tcg_emu_rt->meet(TC_CUEMU_WARPGROUP, tcg_emu_wg_retire, &keep);
}

#endif
