/* dtype_bulk.c: float32 -> narrow float rounding without branches, and the array forms.
 *
 * Each format's rounding is a branch-free inline function over float32 bits. Its format
 * parameters are constants at every call, so a loop over it specializes and vectorizes.
 * tc_float_to_narrow uses the same code one element at a time (tc_dtype_encode_f32_bits).
 * The array decoders here are a second implementation of dtype_conv.c's table-driven
 * decoder. tests/unit/test_dtype.c checks all of them on every code and on millions of
 * inputs. */
#include <string.h>

#include "dtype/dtype.h"
#include "dtype/dtype_internal.h"

/* The loops below only pay off vectorized: ask GCC for its full vectorizer (-O2 uses a
 * cost model that rejects them), and on x86-64 Linux also build an AVX2 clone, picked at
 * load time, since SSE2 has no per-lane variable shift. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define TC_BULK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TC_BULK_CLONES
#endif

enum { K_IEEE, K_FN, K_FNUZ, K_E2M1 }; /* e8m0 and bfloat16 have their own functions */

static inline uint32_t load_bits(const float *p) {
  uint32_t u;
  memcpy(&u, p, 4);
  return u;
}

/* cond ? a : b without a branch: the data decide these, and a mispredicted branch per
 * element costs more than the whole conversion. */
static inline uint32_t sel(int cond, uint32_t a, uint32_t b) { return b ^ ((a ^ b) & (0u - (uint32_t)(cond != 0))); }

/* |x| (float32 bits a, finite) rounded to nearest even with m mantissa bits and bias B:
 * the magnitude code, above the format's largest code on overflow. Float32 denormals round
 * to zero, which is right for every format with bias < 127. */
static inline uint32_t round_mag(uint32_t a, const uint32_t m, const uint32_t B) {
  const uint32_t sh = 23 - m;
  uint32_t nrm = (a - ((127 - B) << 23) + (1u << (sh - 1)) - 1 + ((a >> sh) & 1)) >> sh;
  uint32_t e = a >> 23, s = 151 - m - B - e;
  uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
  s = sel(s < 31, s, 31); /* a wrapped or large shift only feeds the unused value, or gives 0 */
  uint32_t sub = (mant + ((1u << s) >> 1) - 1 + ((mant >> s) & 1)) >> s;
  return sel(e >= 128 - B, nrm, sub);
}

static inline uint32_t enc(uint32_t x, const uint32_t bits, const uint32_t m, const uint32_t B,
                           const uint32_t maxcode, const int kind, const bool sat) {
  uint32_t sbit = (x >> 31) << (bits - 1), a = x & 0x7FFFFFFFu;
  uint32_t c = round_mag(a, m, B);
  uint32_t inf_code = ((1u << (bits - 1 - m)) - 1) << m;
  uint32_t ovf = sat ? maxcode : kind == K_IEEE ? inf_code : kind == K_FN ? 0x7Fu : kind == K_FNUZ ? 0x80u : maxcode;
  uint32_t mag = sel(c > maxcode, ovf, c);
  uint32_t r = sbit | mag;
  if (kind == K_FNUZ) r = sel(mag == 0 || mag == 0x80u, mag, r); /* no -0; the NaN has no sign */
  uint32_t nan;
  if (kind == K_IEEE && bits == 16) { /* float16: keep the payload's top bits (numpy) */
    uint32_t pm = (a >> 13) & 0x3FFu;
    nan = sbit | 0x7C00u | pm | (pm == 0);
  } else if (kind == K_IEEE) {
    nan = sbit | inf_code | (1u << (m - 1));
  } else if (kind == K_FN) {
    nan = sbit | 0x7Fu;
  } else if (kind == K_FNUZ) {
    nan = 0x80u;
  } else {
    nan = maxcode; /* float4_e2m1fn has no NaN: +6 */
  }
  return sel(a > 0x7F800000u, nan, r);
}

static inline uint32_t enc_bf16(uint32_t x, const bool sat) {
  uint32_t s = (x >> 16) & 0x8000u, a = x & 0x7FFFFFFFu;
  uint32_t c = (a + 0x7FFFu + ((a >> 16) & 1)) >> 16;
  c = sel(c > 0x7F7Fu, sat ? 0x7F7Fu : 0x7F80u, c);
  return s | sel(a > 0x7F800000u, 0x7FC0u, c);
}

static inline uint32_t enc_e8m0(uint32_t x, const bool sat) {
  uint32_t c = sel(x < 0x00800000u, (uint32_t)(x >= 0x00600000u), (x + 0x400000u) >> 23);
  c = sel(c > 0xFEu, sat ? 0xFEu : 0xFFu, c);
  return sel(x == 0 || x > 0x7F800000u, 0xFFu, c);
}

/* Exact float32 bits of a magnitude with exponent field e and mantissa field mf. */
static inline uint32_t dec_mag(uint32_t e, uint32_t mf, const uint32_t m, const uint32_t B) {
  uint32_t nrm = ((e + 127 - B) << 23) | (mf << (23 - m));
  float scale, sub;
  uint32_t scale_bits = (128 - B - m) << 23, sub_bits;
  memcpy(&scale, &scale_bits, 4);
  sub = (float)mf * scale; /* exact */
  memcpy(&sub_bits, &sub, 4);
  return sel(e != 0, nrm, sub_bits);
}

static inline uint32_t dec(uint32_t c, const uint32_t bits, const uint32_t m, const uint32_t B, const int kind) {
  uint32_t s = ((c >> (bits - 1)) & 1) << 31;
  uint32_t emax = (1u << (bits - 1 - m)) - 1, mag = c & ((1u << (bits - 1)) - 1);
  uint32_t e = mag >> m, mf = mag & ((1u << m) - 1);
  uint32_t r = s | dec_mag(e, mf, m, B);
  if (kind == K_IEEE) {
    uint32_t special = bits == 16 ? 0x7F800000u | (mf << (23 - m)) : (mf ? 0x7FC00000u : 0x7F800000u);
    r = sel(e == emax, s | special, r);
  } else if (kind == K_FN) {
    r = sel(mag == 0x7Fu, s | 0x7FC00000u, r);
  } else if (kind == K_FNUZ) {
    r = sel(c == 0x80u, 0xFFC00000u, r);
  }
  return r;
}

/* One element through the same code, for tc_float_to_narrow (dtype_conv.c). */
uint32_t tc_dtype_encode_f32_bits(tc_scalar_type t, uint32_t x, bool saturate) {
  switch (t) {
  case TC_DT_FLOAT16: return saturate ? enc(x, 16, 10, 15, 0x7BFF, K_IEEE, true) : enc(x, 16, 10, 15, 0x7BFF, K_IEEE, false);
  case TC_DT_BFLOAT16: return saturate ? enc_bf16(x, true) : enc_bf16(x, false);
  case TC_DT_FLOAT8_E5M2: return saturate ? enc(x, 8, 2, 15, 0x7B, K_IEEE, true) : enc(x, 8, 2, 15, 0x7B, K_IEEE, false);
  case TC_DT_FLOAT8_E4M3FN: return saturate ? enc(x, 8, 3, 7, 0x7E, K_FN, true) : enc(x, 8, 3, 7, 0x7E, K_FN, false);
  case TC_DT_FLOAT8_E4M3FNUZ: return saturate ? enc(x, 8, 3, 8, 0x7F, K_FNUZ, true) : enc(x, 8, 3, 8, 0x7F, K_FNUZ, false);
  case TC_DT_FLOAT8_E5M2FNUZ: return saturate ? enc(x, 8, 2, 16, 0x7F, K_FNUZ, true) : enc(x, 8, 2, 16, 0x7F, K_FNUZ, false);
  case TC_DT_FLOAT8_E8M0FNU: return saturate ? enc_e8m0(x, true) : enc_e8m0(x, false);
  case TC_DT_FLOAT4_E2M1FN: return enc(x, 4, 1, 1, 7, K_E2M1, false);
  default: return 0;
  }
}

#define ENC_LOOP(T, expr)                                \
  do {                                                   \
    T *o_ = out;                                         \
    for (size_t i = 0; i < n; i++) {                     \
      uint32_t x = load_bits(in + i);                    \
      o_[i] = (T)(expr);                                 \
    }                                                    \
  } while (0)
#define ENC_BOTH(T, fn_sat, fn_plain) \
  do {                                \
    if (saturate) ENC_LOOP(T, fn_sat); \
    else ENC_LOOP(T, fn_plain);       \
  } while (0)

TC_BULK_CLONES bool tc_float_to_narrow_n(tc_scalar_type t, const float *in, void *out, size_t n, bool saturate) {
  switch (t) {
  case TC_DT_FLOAT16: ENC_BOTH(uint16_t, enc(x, 16, 10, 15, 0x7BFF, K_IEEE, true), enc(x, 16, 10, 15, 0x7BFF, K_IEEE, false)); return true;
  case TC_DT_BFLOAT16: ENC_BOTH(uint16_t, enc_bf16(x, true), enc_bf16(x, false)); return true;
  case TC_DT_FLOAT8_E5M2: ENC_BOTH(uint8_t, enc(x, 8, 2, 15, 0x7B, K_IEEE, true), enc(x, 8, 2, 15, 0x7B, K_IEEE, false)); return true;
  case TC_DT_FLOAT8_E4M3FN: ENC_BOTH(uint8_t, enc(x, 8, 3, 7, 0x7E, K_FN, true), enc(x, 8, 3, 7, 0x7E, K_FN, false)); return true;
  case TC_DT_FLOAT8_E4M3FNUZ: ENC_BOTH(uint8_t, enc(x, 8, 3, 8, 0x7F, K_FNUZ, true), enc(x, 8, 3, 8, 0x7F, K_FNUZ, false)); return true;
  case TC_DT_FLOAT8_E5M2FNUZ: ENC_BOTH(uint8_t, enc(x, 8, 2, 16, 0x7F, K_FNUZ, true), enc(x, 8, 2, 16, 0x7F, K_FNUZ, false)); return true;
  case TC_DT_FLOAT8_E8M0FNU: ENC_BOTH(uint8_t, enc_e8m0(x, true), enc_e8m0(x, false)); return true;
  case TC_DT_FLOAT4_E2M1FN: {
    /* two per byte, element 2k in the low nibble; the last odd element keeps its byte's
     * high nibble */
    uint8_t *o = out;
    for (size_t k = 0; k + 1 < n; k += 2) {
      uint32_t lo = enc(load_bits(in + k), 4, 1, 1, 7, K_E2M1, false);
      uint32_t hi = enc(load_bits(in + k + 1), 4, 1, 1, 7, K_E2M1, false);
      o[k / 2] = (uint8_t)(lo | hi << 4);
    }
    if (n & 1) {
      uint32_t lo = enc(load_bits(in + n - 1), 4, 1, 1, 7, K_E2M1, false);
      o[n / 2] = (uint8_t)((o[n / 2] & 0xF0u) | lo);
    }
    return true;
  }
  default: return false;
  }
}

#define DEC_LOOP(T, expr)                 \
  do {                                    \
    const T *i_ = in;                     \
    for (size_t i = 0; i < n; i++) {      \
      uint32_t c = i_[i], r_ = (expr);    \
      memcpy(out + i, &r_, 4);            \
    }                                     \
  } while (0)

TC_BULK_CLONES bool tc_narrow_to_float_n(tc_scalar_type t, const void *in, float *out, size_t n) {
  switch (t) {
  case TC_DT_FLOAT16: DEC_LOOP(uint16_t, dec(c, 16, 10, 15, K_IEEE)); return true;
  case TC_DT_BFLOAT16: DEC_LOOP(uint16_t, c << 16); return true;
  case TC_DT_FLOAT8_E5M2: DEC_LOOP(uint8_t, dec(c, 8, 2, 15, K_IEEE)); return true;
  case TC_DT_FLOAT8_E4M3FN: DEC_LOOP(uint8_t, dec(c, 8, 3, 7, K_FN)); return true;
  case TC_DT_FLOAT8_E4M3FNUZ: DEC_LOOP(uint8_t, dec(c, 8, 3, 8, K_FNUZ)); return true;
  case TC_DT_FLOAT8_E5M2FNUZ: DEC_LOOP(uint8_t, dec(c, 8, 2, 16, K_FNUZ)); return true;
  case TC_DT_FLOAT8_E8M0FNU: DEC_LOOP(uint8_t, c == 0xFF ? 0x7FC00000u : c ? c << 23 : 0x00400000u); return true;
  case TC_DT_FLOAT4_E2M1FN: {
    const uint8_t *p = in;
    for (size_t i = 0; i < n; i++) {
      uint32_t r = dec((p[i >> 1] >> ((i & 1) * 4)) & 0xFu, 4, 1, 1, K_E2M1);
      memcpy(out + i, &r, 4);
    }
    return true;
  }
  default: return false;
  }
}
