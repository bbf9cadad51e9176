/* tcg_emu_mma.h: ldmatrix and mma.sync for the cuda emulator, included by prelude/tcg_gemm.cuh
 * in place of the instructions when TCG_EMU is defined.
 *
 * Both are collectives of the warp: every lane leaves its operands (or its row address) and
 * where its results go in its exchange slot, and the last lane to arrive computes every lane's
 * registers with the PTX ISA's fragment layouts (g = lane / 4, t = lane % 4):
 *   ldmatrix .m8n8.b16: matrix i's rows are at the addresses of lanes 8i..8i+7; lane l receives
 *     row g, columns 2t, 2t+1 (.trans: rows 2t, 2t+1 of column g), the lower column first;
 *   mma.sync m16n8kK: A register j holds row g + 8 (j & 1), the E = 4 / bytes elements of k from
 *     (j >> 1) K/2 + E t; B register j holds column g, k from j K/2 + E t; D registers 0, 1 are
 *     row g, columns 2t, 2t+1, and 2, 3 the same of row g + 8. */
#ifndef TCG_EMU_MMA_H
#define TCG_EMU_MMA_H 1

struct tcg_emu_ldsm_slot {
  uint32_t addr;
  uint32_t *r[4];
};
template <int NM, int TRANS> static void tcg_emu_ldsm_run(void *) {
  uint32_t out[32][4];
  for (int l = 0; l < 32; l++) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < NM; i++) {
      uint32_t v;
      if (!TRANS) {
        const tcg_emu_ldsm_slot *row = (const tcg_emu_ldsm_slot *)tcg_emu_warp_slot((unsigned)(8 * i + g));
        memcpy(&v, tcg_emu_smem(row->addr) + 4 * t, 4);
      } else {
        uint16_t lo, hi;
        const tcg_emu_ldsm_slot *r0 = (const tcg_emu_ldsm_slot *)tcg_emu_warp_slot((unsigned)(8 * i + 2 * t));
        const tcg_emu_ldsm_slot *r1 = (const tcg_emu_ldsm_slot *)tcg_emu_warp_slot((unsigned)(8 * i + 2 * t + 1));
        memcpy(&lo, tcg_emu_smem(r0->addr) + 2 * g, 2);
        memcpy(&hi, tcg_emu_smem(r1->addr) + 2 * g, 2);
        v = (uint32_t)lo | (uint32_t)hi << 16;
      }
      out[l][i] = v;
    }
  }
  for (int l = 0; l < 32; l++) {
    const tcg_emu_ldsm_slot *s = (const tcg_emu_ldsm_slot *)tcg_emu_warp_slot((unsigned)l);
    for (int i = 0; i < NM; i++) *s->r[i] = out[l][i];
  }
}
template <int NM, int TRANS> static inline void tcg_emu_ldsm(uint32_t addr, uint32_t *r0, uint32_t *r1, uint32_t *r2, uint32_t *r3) {
  tcg_emu_ldsm_slot *s = (tcg_emu_ldsm_slot *)tcg_emu_warp_slot(tcg_emu_lane());
  s->addr = addr;
  s->r[0] = r0, s->r[1] = r1, s->r[2] = r2, s->r[3] = r3;
  tcg_emu_rt->meet(TC_CUEMU_WARP, tcg_emu_ldsm_run<NM, TRANS>, 0);
}
TCG_DEV void tcg__ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
  tcg_emu_ldsm<4, 0>(addr, &r0, &r1, &r2, &r3);
}
TCG_DEV void tcg__ldsm_x4_t(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
  tcg_emu_ldsm<4, 1>(addr, &r0, &r1, &r2, &r3);
}
TCG_DEV void tcg__ldsm_x2(uint32_t addr, uint32_t &r0, uint32_t &r1) { tcg_emu_ldsm<2, 0>(addr, &r0, &r1, 0, 0); }
TCG_DEV void tcg__ldsm_x2_t(uint32_t addr, uint32_t &r0, uint32_t &r1) { tcg_emu_ldsm<2, 1>(addr, &r0, &r1, 0, 0); }

/* element e of a register holding 4 / sizeof(T) elements, the lowest first */
template <class D> static inline typename D::C tcg_emu_elem(uint32_t reg, int e) {
  typename D::T v;
  const uint32_t bits = reg >> (8 * sizeof(v) * (unsigned)e);
  memcpy(&v, &bits, sizeof v); /* little-endian: the low bytes */
  return D::to_c(v);
}

struct tcg_emu_mma_slot {
  void *d;
  uint32_t a[4], b[2];
};
template <class TA, class TB, class CS> static void tcg_emu_mma_run(void *) {
  enum { E = 4 / sizeof(typename TA::T), K = 8 * E };
  CS A[16][K], B[K][8];
  for (int l = 0; l < 32; l++) {
    const tcg_emu_mma_slot *s = (const tcg_emu_mma_slot *)tcg_emu_warp_slot((unsigned)l);
    const int g = l / 4, t = l % 4;
    for (int j = 0; j < 4; j++)
      for (int e = 0; e < E; e++) A[g + 8 * (j & 1)][(j >> 1) * (K / 2) + E * t + e] = (CS)tcg_emu_elem<TA>(s->a[j], e);
    for (int j = 0; j < 2; j++)
      for (int e = 0; e < E; e++) B[j * (K / 2) + E * t + e][g] = (CS)tcg_emu_elem<TB>(s->b[j], e);
  }
  for (int l = 0; l < 32; l++) {
    const tcg_emu_mma_slot *s = (const tcg_emu_mma_slot *)tcg_emu_warp_slot((unsigned)l);
    CS *d = (CS *)s->d;
    const int g = l / 4, t = l % 4;
    for (int r = 0; r < 4; r++) {
      const int row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
      CS acc = d[r];
      for (int k = 0; k < K; k++) acc += A[row][k] * B[k][col];
      d[r] = acc;
    }
  }
}
template <class TA, class TB, class CS> static inline void tcg_emu_mma(CS *d, const uint32_t *a, const uint32_t *b) {
  tcg_emu_mma_slot *s = (tcg_emu_mma_slot *)tcg_emu_warp_slot(tcg_emu_lane());
  s->d = d;
  memcpy(s->a, a, sizeof s->a);
  memcpy(s->b, b, sizeof s->b);
  tcg_emu_rt->meet(TC_CUEMU_WARP, tcg_emu_mma_run<TA, TB, CS>, 0);
}

#define TCG_EMU_MMA(ta, tb, cs) \
  template <> struct tcg__mma<ta, tb> { \
    TCG_SDEV void run(cs *d, const uint32_t *a, const uint32_t *b) { tcg_emu_mma<ta, tb, cs>(d, a, b); } \
  };
TCG_EMU_MMA(tcg_f16, tcg_f16, float)
TCG_EMU_MMA(tcg_bf16, tcg_bf16, float)
TCG_EMU_MMA(tcg_i8, tcg_i8, int32_t)
TCG_EMU_MMA(tcg_i8, tcg_u8, int32_t)
TCG_EMU_MMA(tcg_u8, tcg_i8, int32_t)
TCG_EMU_MMA(tcg_u8, tcg_u8, int32_t)
TCG_EMU_MMA(tcg_e4m3, tcg_e4m3, float)
TCG_EMU_MMA(tcg_e4m3, tcg_e5m2, float)
TCG_EMU_MMA(tcg_e5m2, tcg_e4m3, float)
TCG_EMU_MMA(tcg_e5m2, tcg_e5m2, float)
#undef TCG_EMU_MMA
#define TCG_HAVE_MMA_F8 1

#endif
