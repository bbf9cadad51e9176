/* philox.h: cuRAND's Philox4_32_10 generator as one C function, for the philox_rand intrinsic
 * (intrinsics.def): the reference interpreter calls it, and the cpu, cuda and metal code
 * generators carry the same text (TC_PHILOX_TEXT and its CUDA and MSL forms), so they cannot drift
 * apart.
 *
 * tcg_philox(key, seq, pos): the Philox-4x32 block cipher, 10 rounds (multipliers 0xD2511F53 and
 * 0xCD9E8D57, key increments 0x9E3779B9 and 0xBB67AE85), of the counter words
 * (pos / 4 low, pos / 4 high, seq low, seq high) under the key (key low, key high); word pos % 4
 * of the result. This is what curand(&s) returns after curand_init(key, seq, off, &s) and
 * pos - off earlier calls. */
#ifndef TILEC_IR_PHILOX_H
#define TILEC_IR_PHILOX_H

#include <stdint.h>

/* QUAL: the function's qualifiers in the language that carries it ("static inline" in C,
 * "static __device__ __forceinline__" in CUDA, "inline" in MSL). */
#define TC_PHILOX_FN(QUAL)                                                                                               \
  QUAL uint32_t tcg_philox(uint64_t key, uint64_t seq, uint64_t pos) {                                                   \
    uint32_t c0 = (uint32_t)(pos >> 2), c1 = (uint32_t)(pos >> 34), c2 = (uint32_t)seq, c3 = (uint32_t)(seq >> 32);       \
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);                                                             \
    for (int r = 0; r < 10; r++) {                                                                                       \
      uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;                                          \
      uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;                                  \
      c1 = (uint32_t)p1;                                                                                                 \
      c3 = (uint32_t)p0;                                                                                                 \
      c0 = n0;                                                                                                           \
      c2 = n2;                                                                                                           \
      k0 += 0x9E3779B9u;                                                                                                 \
      k1 += 0xBB67AE85u;                                                                                                 \
    }                                                                                                                    \
    switch (pos & 3) {                                                                                                   \
    case 0: return c0;                                                                                                   \
    case 1: return c1;                                                                                                   \
    case 2: return c2;                                                                                                   \
    default: return c3;                                                                                                  \
    }                                                                                                                    \
  }

#define TC_PHILOX_CODE TC_PHILOX_FN(static inline)

#define TC_PHILOX_STR_(...) #__VA_ARGS__
#define TC_PHILOX_STR(...) TC_PHILOX_STR_(__VA_ARGS__)
#define TC_PHILOX_TEXT TC_PHILOX_STR(TC_PHILOX_CODE) "\n"
#define TC_PHILOX_CUDA_TEXT TC_PHILOX_STR(TC_PHILOX_FN(static __device__ __forceinline__)) "\n"
#define TC_PHILOX_METAL_TEXT TC_PHILOX_STR(TC_PHILOX_FN(inline)) "\n"

#endif
