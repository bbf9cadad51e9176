/* dtype_conv.c: bit-exact conversions between float32/float64 and every narrow float format,
 * and element loads/stores for every scalar dtype.
 *
 * A table-driven rounding core (encode) serves every format for float64 inputs: it works on
 * the exact sign, exponent and mantissa of a double, so they round once, never through
 * float32. float32 inputs go through the branch-free code of dtype_bulk.c, which also has
 * the array forms; float16 and bfloat16 have their own fast paths here. Each format's special
 * values follow the OCP 8-bit float specification and ml_dtypes 0.7 (docs/dtypes.md lists the
 * rules). The tests check every path against a reference built from the format definitions. */
#include <math.h>
#include <string.h>

#include "dtype/dtype.h"
#include "dtype/dtype_internal.h"

typedef enum fmt_kind {
  FMT_IEEE, /* all-ones exponent: inf (mantissa 0) or NaN */
  FMT_FN,   /* no inf; only S.1111.111 is NaN (float8_e4m3fn) */
  FMT_FNUZ, /* no inf, no -0; 0x80 is the one NaN */
  FMT_E8M0, /* exponent only, unsigned, no zero; 0xFF is NaN */
  FMT_NOSPECIAL, /* no inf, no NaN (float4_e2m1fn) */
} fmt_kind;

typedef struct fmt {
  uint8_t bits, mbits, ebits;
  int bias;
  uint32_t maxcode; /* largest finite magnitude code */
  fmt_kind kind;
} fmt;

static const fmt *fmt_of(tc_scalar_type t) {
  static const fmt f16 = {16, 10, 5, 15, 0x7BFF, FMT_IEEE};
  static const fmt bf16 = {16, 7, 8, 127, 0x7F7F, FMT_IEEE};
  static const fmt e5m2 = {8, 2, 5, 15, 0x7B, FMT_IEEE};
  static const fmt e4m3fn = {8, 3, 4, 7, 0x7E, FMT_FN};
  static const fmt e4m3fnuz = {8, 3, 4, 8, 0x7F, FMT_FNUZ};
  static const fmt e5m2fnuz = {8, 2, 5, 16, 0x7F, FMT_FNUZ};
  static const fmt e8m0 = {8, 0, 8, 127, 0xFE, FMT_E8M0};
  static const fmt e2m1 = {4, 1, 2, 1, 0x7, FMT_NOSPECIAL};
  switch (t) {
  case TC_DT_FLOAT16: return &f16;
  case TC_DT_BFLOAT16: return &bf16;
  case TC_DT_FLOAT8_E5M2: return &e5m2;
  case TC_DT_FLOAT8_E4M3FN: return &e4m3fn;
  case TC_DT_FLOAT8_E4M3FNUZ: return &e4m3fnuz;
  case TC_DT_FLOAT8_E5M2FNUZ: return &e5m2fnuz;
  case TC_DT_FLOAT8_E8M0FNU: return &e8m0;
  case TC_DT_FLOAT4_E2M1FN: return &e2m1;
  default: return NULL;
  }
}

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}
static inline double bits_f64(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* float32 bits -> float64 bits, exactly; NaN payloads are kept (no quieting), unlike a
 * hardware conversion of a signaling NaN. */
static uint64_t widen_bits(uint32_t x) {
  uint64_t sign = (uint64_t)(x >> 31) << 63;
  uint32_t e = (x >> 23) & 0xFF, m = x & 0x7FFFFF;
  if (e == 0xFF) return sign | 0x7FF0000000000000ull | ((uint64_t)m << 29);
  if (e == 0) {
    if (m == 0) return sign;
    int p = 31 - __builtin_clz(m); /* leading bit of the denormal mantissa */
    uint64_t mant = ((uint64_t)m << (52 - p)) & 0xFFFFFFFFFFFFFull;
    return sign | ((uint64_t)(p - 149 + 1023) << 52) | mant;
  }
  return sign | ((uint64_t)(e - 127 + 1023) << 52) | ((uint64_t)m << 29);
}

/* Code of a value too large for f (or an infinite input), non-saturating. */
static uint32_t overflow_code(const fmt *f, uint32_t sbit) {
  switch (f->kind) {
  case FMT_IEEE: return sbit | ((((1u << f->ebits) - 1)) << f->mbits); /* inf */
  case FMT_FN: return sbit | 0x7F;                                     /* NaN */
  case FMT_FNUZ: return 0x80;
  case FMT_E8M0: return 0xFF;
  case FMT_NOSPECIAL: return sbit | f->maxcode; /* no inf: saturates */
  }
  return 0;
}

/* Code of a NaN input with sign bit sbit and double mantissa m52. */
static uint32_t nan_code(const fmt *f, uint32_t sbit, uint64_t m52) {
  switch (f->kind) {
  case FMT_IEEE:
    if (f->bits == 16 && f->mbits == 10) { /* float16: numpy keeps the payload's top bits */
      uint32_t m = (uint32_t)(m52 >> 42);
      return sbit | 0x7C00 | (m ? m : 1);
    }
    /* bfloat16 and float8_e5m2: the quiet NaN with the input's sign (ml_dtypes) */
    return sbit | (((1u << f->ebits) - 1) << f->mbits) | (1u << (f->mbits - 1));
  case FMT_FN: return sbit | 0x7F;
  case FMT_FNUZ: return 0x80;
  case FMT_E8M0: return 0xFF;
  case FMT_NOSPECIAL: return f->maxcode; /* no NaN: +max (see docs/dtypes.md) */
  }
  return 0;
}

static uint32_t encode_e8m0(uint64_t x, bool saturate) {
  uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
  if ((x >> 63) || a == 0 || a > 0x7FF0000000000000ull) return 0xFF; /* negative, zero, NaN */
  if (a == 0x7FF0000000000000ull) return saturate ? 0xFE : 0xFF;
  int e = (int)(a >> 52) - 1023;
  if (e < -127) return 0x00; /* below the smallest value 2^-127: ml_dtypes gives 2^-127 */
  /* Nearest power of two; a mantissa of exactly 1.5 rounds up (ml_dtypes). */
  uint32_t code = (uint32_t)(e + 127) + (uint32_t)((a >> 51) & 1);
  if (code > 0xFE) return saturate ? 0xFE : 0xFF;
  return code;
}

/* The rounding core: x is a double's bits. */
static uint32_t encode(const fmt *f, uint64_t x, bool saturate) {
  if (f->kind == FMT_E8M0) return encode_e8m0(x, saturate);
  uint32_t sbit = (uint32_t)(x >> 63) << (f->bits - 1);
  uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
  if (a > 0x7FF0000000000000ull) return nan_code(f, sbit, a & 0xFFFFFFFFFFFFFull);
  if (a == 0x7FF0000000000000ull) return saturate ? sbit | f->maxcode : overflow_code(f, sbit);
  int e = (int)(a >> 52) - 1023;
  uint64_t m = (a & 0xFFFFFFFFFFFFFull) | (1ull << 52);
  if ((a >> 52) == 0) { /* double denormal: far below every narrow format's range */
    e = -1022;
    m = a;
  }
  int emin = 1 - f->bias;
  int shift = 52 - f->mbits + (e < emin ? emin - e : 0);
  uint64_t q = 0;
  if (shift <= 60) {
    uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    q = m >> shift;
    if (rem > half || (rem == half && (q & 1))) q++;
  }
  uint64_t code = e < emin ? q : ((uint64_t)(e + f->bias - 1) << f->mbits) + q;
  if (code == 0) return f->kind == FMT_FNUZ ? 0 : sbit;
  if (code > f->maxcode) return saturate ? sbit | f->maxcode : overflow_code(f, sbit);
  return sbit | (uint32_t)code;
}

/* Exact decode of a narrow code to float32 bits. */
static uint32_t decode(const fmt *f, uint32_t c) {
  if (f->kind == FMT_E8M0) {
    c &= 0xFF;
    if (c == 0xFF) return 0x7FC00000;
    return c ? c << 23 : 0x00400000; /* 2^(c-127); 2^-127 is a float32 denormal */
  }
  c &= (1u << f->bits) - 1;
  uint32_t sign = (c >> (f->bits - 1)) << 31;
  uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
  uint32_t e = (c >> f->mbits) & emask, m = c & mmask;
  if (f->bits == 16 && f->ebits == 8) return c << 16; /* bfloat16 is float32's top half */
  switch (f->kind) {
  case FMT_IEEE:
    if (e == emask) {
      if (m == 0) return sign | 0x7F800000;
      if (f->bits == 16) return sign | 0x7F800000 | (m << (23 - f->mbits)); /* payload kept */
      return sign | 0x7FC00000; /* float8_e5m2: ml_dtypes gives the quiet NaN */
    }
    break;
  case FMT_FN:
    if ((c & 0x7F) == 0x7F) return sign | 0x7FC00000;
    break;
  case FMT_FNUZ:
    if (c == 0x80) return 0xFFC00000; /* ml_dtypes decodes the one NaN with the sign set */
    break;
  default: break;
  }
  if (e == 0) {
    if (m == 0) return sign;
    int p = 31 - __builtin_clz(m); /* value m * 2^(1-bias-mbits), normalized */
    int exp = p + 1 - f->bias - f->mbits;
    return sign | ((uint32_t)(exp + 127) << 23) | ((m << (23 - p)) & 0x7FFFFF);
  }
  return sign | ((uint32_t)((int)e - f->bias + 127) << 23) | (m << (23 - f->mbits));
}

/* ---- float16 and bfloat16 fast paths (integer only, branch-light) ---- */

float tc_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  uint32_t normal = sign | ((e + 112) << 23) | (m << 13);
  uint32_t special = sign | 0x7F800000 | (m << 13);
  float sub = (float)m * 0x1p-24f; /* exact: m < 2^10 */
  if (e == 0) return sign ? -sub : sub;
  return bits_f32(e == 0x1F ? special : normal);
}

uint16_t tc_float_to_half(float f) {
  uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000, a = x & 0x7FFFFFFF;
  uint32_t out;
  if (a >= 0x38800000u) { /* >= 2^-14: normal range, overflow, inf, NaN */
    out = (a - (112u << 23) + 0xFFF + ((a >> 13) & 1)) >> 13;
    if (out > 0x7BFF) out = 0x7C00;
    if (a > 0x7F800000u) {
      uint32_t m = (a >> 13) & 0x3FF;
      out = 0x7C00 | (m ? m : 1);
    }
  } else { /* subnormal or zero: round mant * 2^(e-150) to a multiple of 2^-24 */
    uint32_t e = a >> 23, s = 126 - e;
    uint32_t m = (a & 0x7FFFFF) | 0x800000;
    if (s > 31) s = 31;
    out = (m + (1u << (s - 1)) - 1 + ((m >> s) & 1)) >> s;
  }
  return (uint16_t)(sign | out);
}

float tc_bf16_to_float(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t tc_float_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7FFFFFFF) > 0x7F800000u) return (uint16_t)(((x >> 16) & 0x8000) | 0x7FC0);
  return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

/* ---- generic entry points ---- */

float tc_narrow_to_float(tc_scalar_type t, uint32_t bits) {
  if (t == TC_DT_FLOAT16) return tc_half_to_float((uint16_t)bits);
  if (t == TC_DT_BFLOAT16) return tc_bf16_to_float((uint16_t)bits);
  const fmt *f = fmt_of(t);
  return f ? bits_f32(decode(f, bits)) : NAN;
}

double tc_narrow_to_double(tc_scalar_type t, uint32_t bits) {
  const fmt *f = fmt_of(t);
  return f ? bits_f64(widen_bits(decode(f, bits))) : NAN;
}

uint32_t tc_double_to_narrow(tc_scalar_type t, double v, bool saturate) {
  const fmt *f = fmt_of(t);
  return f ? encode(f, f64_bits(v), saturate) : 0;
}

uint32_t tc_float_to_narrow(tc_scalar_type t, float v, bool saturate) {
  uint32_t x = f32_bits(v);
  bool finite_result_needed = saturate && (x & 0x7FFFFFFF) <= 0x7F800000u;
  if (t == TC_DT_FLOAT16) {
    uint16_t h = tc_float_to_half(v);
    if (finite_result_needed && (h & 0x7FFF) == 0x7C00) h = (uint16_t)((h & 0x8000) | 0x7BFF);
    return h;
  }
  if (t == TC_DT_BFLOAT16) {
    uint16_t h = tc_float_to_bf16(v);
    if (finite_result_needed && (h & 0x7FFF) == 0x7F80) h = (uint16_t)((h & 0x8000) | 0x7F7F);
    return h;
  }
  return tc_dtype_encode_f32_bits(t, x, saturate);
}

/* ---- integers ---- */

int64_t tc_double_to_sint(tc_scalar_type t, double v) {
  int bits = tc_dtype_bits(tc_dt(t));
  if (bits < 4 || bits > 64 || v != v) return 0;
  double hi = ldexp(1.0, bits - 1); /* 2^(bits-1): first value above the range */
  if (v >= hi) return (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
  if (v <= -hi) return -(int64_t)(((uint64_t)1 << (bits - 1)) - 1) - 1;
  return (int64_t)v; /* truncates toward zero */
}

uint64_t tc_double_to_uint(tc_scalar_type t, double v) {
  int bits = tc_dtype_bits(tc_dt(t));
  if (bits < 4 || bits > 64 || !(v >= 1.0)) return 0; /* NaN, negatives, (-1, 1) */
  double hi = ldexp(1.0, bits);
  if (v >= hi) return bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  return (uint64_t)v;
}

/* ---- element access ---- */

static inline unsigned nibble_get(const uint8_t *p, size_t i) { return (p[i >> 1] >> ((i & 1) * 4)) & 0xF; }
static inline void nibble_set(uint8_t *p, size_t i, unsigned v) {
  unsigned shift = (unsigned)(i & 1) * 4;
  p[i >> 1] = (uint8_t)((p[i >> 1] & ~(0xFu << shift)) | ((v & 0xF) << shift));
}

double tc_dtype_load_f64(tc_dtype d, const void *base, size_t index) {
  const uint8_t *p = base;
  switch ((tc_scalar_type)d.code) {
  case TC_DT_BOOL: return p[index] != 0;
  case TC_DT_INT4: return (double)(((int)nibble_get(p, index) ^ 8) - 8);
  case TC_DT_UINT4: return nibble_get(p, index);
  case TC_DT_FLOAT4_E2M1FN: return tc_narrow_to_double(TC_DT_FLOAT4_E2M1FN, nibble_get(p, index));
#define LOAD(T) { T v_; memcpy(&v_, p + index * sizeof(T), sizeof(T)); return (double)v_; }
  case TC_DT_INT8: LOAD(int8_t)
  case TC_DT_INT16: LOAD(int16_t)
  case TC_DT_INT32: LOAD(int32_t)
  case TC_DT_INT64: LOAD(int64_t)
  case TC_DT_UINT8: LOAD(uint8_t)
  case TC_DT_UINT16: LOAD(uint16_t)
  case TC_DT_UINT32: LOAD(uint32_t)
  case TC_DT_UINT64: LOAD(uint64_t)
  case TC_DT_FLOAT64: LOAD(double)
#undef LOAD
  case TC_DT_FLOAT32: {
    uint32_t u;
    memcpy(&u, p + index * 4, 4);
    return bits_f64(widen_bits(u));
  }
  case TC_DT_FLOAT16:
  case TC_DT_BFLOAT16: {
    uint16_t u;
    memcpy(&u, p + index * 2, 2);
    return tc_narrow_to_double((tc_scalar_type)d.code, u);
  }
  case TC_DT_FLOAT8_E4M3FN:
  case TC_DT_FLOAT8_E5M2:
  case TC_DT_FLOAT8_E4M3FNUZ:
  case TC_DT_FLOAT8_E5M2FNUZ:
  case TC_DT_FLOAT8_E8M0FNU: return tc_narrow_to_double((tc_scalar_type)d.code, p[index]);
  default: return NAN;
  }
}

bool tc_dtype_store_saturates(tc_dtype d) {
  switch (d.code) {
  case TC_DT_FLOAT8_E4M3FN:
  case TC_DT_FLOAT8_E5M2:
  case TC_DT_FLOAT8_E4M3FNUZ:
  case TC_DT_FLOAT8_E5M2FNUZ: return true;
  default: return false;
  }
}

void tc_dtype_store_f64(tc_dtype d, void *base, size_t index, double v) {
  uint8_t *p = base;
  tc_scalar_type t = (tc_scalar_type)d.code;
  switch (t) {
  case TC_DT_BOOL: p[index] = v != 0; return; /* C semantics: NaN is true */
  case TC_DT_INT4: nibble_set(p, index, (unsigned)tc_double_to_sint(t, v) & 0xF); return;
  case TC_DT_UINT4: nibble_set(p, index, (unsigned)tc_double_to_uint(t, v)); return;
  case TC_DT_FLOAT4_E2M1FN: nibble_set(p, index, tc_double_to_narrow(t, v, false)); return;
#define STORE(T, val) { T v_ = (T)(val); memcpy(p + index * sizeof(T), &v_, sizeof(T)); return; }
  case TC_DT_INT8: STORE(int8_t, tc_double_to_sint(t, v))
  case TC_DT_INT16: STORE(int16_t, tc_double_to_sint(t, v))
  case TC_DT_INT32: STORE(int32_t, tc_double_to_sint(t, v))
  case TC_DT_INT64: STORE(int64_t, tc_double_to_sint(t, v))
  case TC_DT_UINT8: STORE(uint8_t, tc_double_to_uint(t, v))
  case TC_DT_UINT16: STORE(uint16_t, tc_double_to_uint(t, v))
  case TC_DT_UINT32: STORE(uint32_t, tc_double_to_uint(t, v))
  case TC_DT_UINT64: STORE(uint64_t, tc_double_to_uint(t, v))
  case TC_DT_FLOAT32: STORE(float, v)
  case TC_DT_FLOAT64: STORE(double, v)
  case TC_DT_FLOAT16:
  case TC_DT_BFLOAT16: STORE(uint16_t, tc_double_to_narrow(t, v, false))
#undef STORE
  case TC_DT_FLOAT8_E4M3FN:
  case TC_DT_FLOAT8_E5M2:
  case TC_DT_FLOAT8_E4M3FNUZ:
  case TC_DT_FLOAT8_E5M2FNUZ:
  case TC_DT_FLOAT8_E8M0FNU: p[index] = (uint8_t)tc_double_to_narrow(t, v, tc_dtype_store_saturates(d)); return;
  default: return;
  }
}
