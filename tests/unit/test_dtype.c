/* test_dtype: the dtype table, names and suggestions, and every narrow float conversion.
 *
 * Conversions are checked against a reference written here from each format's bit-level
 * definition (value = (-1)^s * 2^(e-bias) * 1.m, the format's special codes, and rounding by
 * searching the sorted list of representable values), not through the library's code.
 * The generated-C prelude is compiled with cc and compared with the library bit for bit. */
#include <dlpack/dlpack.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype/dtype.h"
#include "harness.h"

/* ---------------- reference formats ---------------- */

enum { R_IEEE, R_FN, R_FNUZ, R_E8M0, R_E2M1 };
typedef struct rfmt {
  tc_scalar_type t;
  const char *name;
  int bits, ebits, mbits, bias, kind;
  uint32_t maxcode;   /* largest finite positive code */
  double *vals;       /* vals[i]: value of positive code i, i <= maxcode + 1 (virtual next) */
} rfmt;

static rfmt fmts[] = {
    {TC_DT_FLOAT16, "float16", 16, 5, 10, 15, R_IEEE, 0x7BFF, NULL},
    {TC_DT_BFLOAT16, "bfloat16", 16, 8, 7, 127, R_IEEE, 0x7F7F, NULL},
    {TC_DT_FLOAT8_E5M2, "float8_e5m2", 8, 5, 2, 15, R_IEEE, 0x7B, NULL},
    {TC_DT_FLOAT8_E4M3FN, "float8_e4m3fn", 8, 4, 3, 7, R_FN, 0x7E, NULL},
    {TC_DT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 8, 4, 3, 8, R_FNUZ, 0x7F, NULL},
    {TC_DT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 8, 5, 2, 16, R_FNUZ, 0x7F, NULL},
    {TC_DT_FLOAT8_E8M0FNU, "float8_e8m0fnu", 8, 8, 0, 127, R_E8M0, 0xFE, NULL},
    {TC_DT_FLOAT4_E2M1FN, "float4_e2m1fn", 4, 2, 1, 1, R_E2M1, 0x7, NULL},
};
#define NFMT (int)(sizeof fmts / sizeof fmts[0])

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t dbits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static double bitsd(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

static uint32_t sign_bit(const rfmt *f) { return f->kind == R_E8M0 ? 0 : 1u << (f->bits - 1); }

/* Is code c a NaN in format f? */
static int ref_is_nan(const rfmt *f, uint32_t c) {
  uint32_t mag = c & (sign_bit(f) - 1);
  uint32_t emax = (1u << f->ebits) - 1, e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1);
  switch (f->kind) {
  case R_IEEE: return e == emax && m != 0;
  case R_FN: return mag == 0x7F;
  case R_FNUZ: return c == 0x80;
  case R_E8M0: return c == 0xFF;
  default: return 0;
  }
}
static int ref_is_inf(const rfmt *f, uint32_t c) {
  uint32_t mag = c & (sign_bit(f) - 1);
  return f->kind == R_IEEE && mag == ((1u << f->ebits) - 1) << f->mbits;
}

/* Value of a non-NaN code, from the definition. */
static double ref_value(const rfmt *f, uint32_t c) {
  if (f->kind == R_E8M0) return ldexp(1.0, (int)c - 127);
  int neg = (c & sign_bit(f)) != 0;
  uint32_t mag = c & (sign_bit(f) - 1);
  if (ref_is_inf(f, c)) return neg ? -INFINITY : INFINITY;
  int e = (int)(mag >> f->mbits), m = (int)(mag & ((1u << f->mbits) - 1));
  double v = e == 0 ? ldexp(m, 1 - f->bias - f->mbits) : ldexp((1 << f->mbits) + m, e - f->bias - f->mbits);
  return neg ? -v : v;
}

/* float32 bits that decoding a NaN code must give (documented per format). */
static uint32_t ref_nan_f32(const rfmt *f, uint32_t c) {
  uint32_t s = (c & sign_bit(f)) ? 0x80000000u : 0;
  if (f->kind == R_FNUZ) return 0xFFC00000u;
  if (f->bits == 16) return s | 0x7F800000u | ((c & ((1u << f->mbits) - 1)) << (23 - f->mbits));
  return s | 0x7FC00000u;
}

/* Code that encoding a NaN must give; m52 is the input's double mantissa. */
static uint32_t ref_nan_code(const rfmt *f, int neg, uint64_t m52) {
  uint32_t s = neg ? sign_bit(f) : 0;
  switch (f->kind) {
  case R_IEEE:
    if (f->t == TC_DT_FLOAT16) {
      uint32_t m = (uint32_t)(m52 >> 42) & 0x3FF;
      return s | 0x7C00 | (m ? m : 1);
    }
    return f->t == TC_DT_BFLOAT16 ? s | 0x7FC0 : s | 0x7E;
  case R_FN: return s | 0x7F;
  case R_FNUZ: return 0x80;
  case R_E8M0: return 0xFF;
  default: return 0x7; /* float4_e2m1fn has no NaN: +6 */
  }
}

static uint32_t ref_overflow_code(const rfmt *f, int neg, int saturate) {
  uint32_t s = neg ? sign_bit(f) : 0;
  if (saturate || f->kind == R_E2M1) return f->kind == R_E8M0 ? 0xFE : s | f->maxcode;
  switch (f->kind) {
  case R_IEEE: return s | (((1u << f->ebits) - 1) << f->mbits);
  case R_FN: return s | 0x7F;
  case R_FNUZ: return 0x80;
  default: return 0xFF;
  }
}

/* Round x to format f: nearest representable value by search; ties to the even code
 * (e8m0: ties up, as ml_dtypes). */
static uint32_t ref_encode(const rfmt *f, double x, int saturate) {
  int neg = signbit(x) != 0;
  if (isnan(x)) return ref_nan_code(f, neg, dbits(x) & 0xFFFFFFFFFFFFFull);
  if (f->kind == R_E8M0 && (neg || x == 0)) return 0xFF;
  double a = fabs(x);
  if (isinf(a)) return ref_overflow_code(f, neg, saturate);
  uint32_t top = f->maxcode + 1;
  if (f->kind == R_E8M0 && a < f->vals[0]) return 0;
  if (a >= f->vals[top]) return ref_overflow_code(f, neg, saturate);
  uint32_t lo = 0, hi = top; /* vals[lo] <= a < vals[hi] */
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (f->vals[mid] <= a) lo = mid;
    else hi = mid;
  }
  uint32_t c;
  if (f->vals[lo] == a) c = lo;
  else {
    double mid = (f->vals[lo] + f->vals[hi]) / 2; /* exact: few significant bits */
    if (a < mid) c = lo;
    else if (a > mid) c = hi;
    else c = f->kind == R_E8M0 ? hi : (lo % 2 == 0 ? lo : hi);
  }
  if (c == top) return ref_overflow_code(f, neg, saturate);
  if (c == 0 && f->kind == R_FNUZ) return 0;
  return (neg ? sign_bit(f) : 0) | c;
}

static void init_ref(void) {
  for (int i = 0; i < NFMT; i++) {
    rfmt *f = &fmts[i];
    if (f->vals) continue;
    uint32_t top = f->maxcode + 1;
    f->vals = malloc(sizeof(double) * (top + 1));
    for (uint32_t c = 0; c <= f->maxcode; c++) f->vals[c] = ref_value(f, c);
    f->vals[top] = f->kind == R_E8M0 ? ldexp(1.0, 128) : 2 * f->vals[f->maxcode] - f->vals[f->maxcode - 1];
  }
}
static void free_ref(void) {
  for (int i = 0; i < NFMT; i++) free(fmts[i].vals), fmts[i].vals = NULL;
}

/* ---------------- inputs ---------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

typedef struct { float *v; size_t n, cap; } fvec;
static void push(fvec *a, float x) {
  if (a->n == a->cap) a->v = realloc(a->v, sizeof(float) * (a->cap = a->cap ? a->cap * 2 : 4096));
  a->v[a->n++] = x;
}
static void push_around(fvec *a, float x) {
  push(a, x), push(a, -x), push(a, nextafterf(x, INFINITY)), push(a, nextafterf(x, 0));
  push(a, -nextafterf(x, INFINITY)), push(a, -nextafterf(x, 0));
}

/* Every value, every midpoint (including the one above the largest value), their float32
 * neighbours, specials and random bit patterns. */
static fvec float_inputs(const rfmt *f, size_t nrandom) {
  fvec a = {0};
  uint32_t top = f->maxcode + 1;
  for (uint32_t c = 0; c <= top; c++) {
    push_around(&a, (float)f->vals[c]);
    if (c < top) push_around(&a, (float)((f->vals[c] + f->vals[c + 1]) / 2));
  }
  push_around(&a, (float)(f->vals[0] / 2));
  push_around(&a, (float)(f->vals[0] * 0.75));
  const uint32_t specials[] = {0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,
                               0x7FA12345, 0xFFFFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001,
                               0x007FFFFF, 0x00800000, 0x00400000, 0x00600000, 0x005FFFFF, 0x7F7FFFFF};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) push(&a, bitsf(specials[i]));
  for (size_t i = 0; i < nrandom; i++) push(&a, bitsf(rnd32()));
  return a;
}

/* ---------------- decode / encode against the reference ---------------- */

TEST(decode_every_encoding) {
  for (int i = 0; i < NFMT; i++) {
    const rfmt *f = &fmts[i];
    for (uint32_t c = 0; c < (1u << f->bits); c++) {
      float got = tc_narrow_to_float(f->t, c);
      double gotd = tc_narrow_to_double(f->t, c);
      if (ref_is_nan(f, c)) {
        uint32_t want = ref_nan_f32(f, c);
        EXPECT(fbits(got) == want);
        /* the double keeps the float32 payload, shifted, unquieted */
        uint64_t wantd = ((uint64_t)(want >> 31) << 63) | 0x7FF0000000000000ull | ((uint64_t)(want & 0x7FFFFF) << 29);
        EXPECT(dbits(gotd) == wantd);
        continue;
      }
      double want = ref_value(f, c);
      if (fbits(got) != fbits((float)want) || dbits(gotd) != dbits(want)) {
        printf("  %s code 0x%x: got %a / %a, want %a\n", f->name, c, (double)got, gotd, want);
        CHECK(0);
      }
    }
  }
  /* fast-path names decode the same */
  for (uint32_t c = 0; c < 65536; c++) {
    EXPECT(fbits(tc_half_to_float((uint16_t)c)) == fbits(tc_narrow_to_float(TC_DT_FLOAT16, c)));
    EXPECT(fbits(tc_bf16_to_float((uint16_t)c)) == fbits(tc_narrow_to_float(TC_DT_BFLOAT16, c)));
  }
}

TEST(reencode_every_encoding) {
  for (int i = 0; i < NFMT; i++) {
    const rfmt *f = &fmts[i];
    for (uint32_t c = 0; c < (1u << f->bits); c++) {
      float v = tc_narrow_to_float(f->t, c);
      uint32_t want = c;
      if (ref_is_nan(f, c)) want = ref_nan_code(f, (c & sign_bit(f)) != 0, (uint64_t)(fbits(v) & 0x7FFFFF) << 29);
      if (f->kind == R_E8M0 && c == 0xFF) want = 0xFF;
      uint32_t sat_want = ref_is_inf(f, c) ? ((c & sign_bit(f)) | f->maxcode) : want;
      uint32_t g1 = tc_float_to_narrow(f->t, v, false), g2 = tc_double_to_narrow(f->t, tc_narrow_to_double(f->t, c), false);
      uint32_t g3 = tc_float_to_narrow(f->t, v, true);
      if (g1 != want || g2 != want || g3 != sat_want) {
        printf("  %s code 0x%x: re-encoded 0x%x / 0x%x / sat 0x%x\n", f->name, c, g1, g2, g3);
        CHECK(0);
      }
    }
  }
}

TEST(encode_float32_matches_reference) {
  init_ref();
  for (int i = 0; i < NFMT; i++) {
    const rfmt *f = &fmts[i];
    fvec in = float_inputs(f, 200000);
    for (size_t k = 0; k < in.n; k++) {
      float x = in.v[k];
      for (int sat = 0; sat <= 1; sat++) {
        uint32_t want = ref_encode(f, (double)x, sat);
        if (isnan(x)) want = ref_nan_code(f, signbit(x) != 0, (uint64_t)(fbits(x) & 0x7FFFFF) << 29);
        uint32_t got = tc_float_to_narrow(f->t, x, sat);
        uint32_t gotd = isnan(x) ? want : tc_double_to_narrow(f->t, (double)x, sat);
        if (got != want || gotd != want) {
          printf("  %s%s(%a = 0x%08x): got 0x%x / double path 0x%x, want 0x%x\n", f->name, sat ? " sat" : "",
                 (double)x, fbits(x), got, gotd, want);
          free(in.v);
          CHECK(0);
        }
      }
      if (f->t == TC_DT_FLOAT16) EXPECT(tc_float_to_half(x) == tc_float_to_narrow(f->t, x, false));
      if (f->t == TC_DT_BFLOAT16) EXPECT(tc_float_to_bf16(x) == tc_float_to_narrow(f->t, x, false));
    }
    free(in.v);
  }
}

/* The array functions agree with the per-element ones. */
TEST(bulk_matches_per_element) {
  init_ref();
  for (int i = 0; i < NFMT; i++) {
    const rfmt *f = &fmts[i];
    fvec in = float_inputs(f, 100000);
    size_t n = in.n | 1; /* odd, to reach float4's half-filled last byte */
    if (n > in.n) push(&in, 1.0f);
    uint8_t *codes = malloc(n * 2 + 2);
    for (int sat = 0; sat < 2; sat++) {
      memset(codes, 0xA5, n * 2 + 2);
      CHECK(tc_float_to_narrow_n(f->t, in.v, codes, n, sat));
      for (size_t k = 0; k < n; k++) {
        uint32_t got = f->bits == 16 ? ((const uint16_t *)(const void *)codes)[k]
                       : f->bits == 8 ? codes[k] : (uint32_t)((codes[k / 2] >> ((k & 1) * 4)) & 0xF);
        uint32_t want = tc_float_to_narrow(f->t, in.v[k], sat);
        if (got != want) {
          printf("  bulk %s%s(%a = 0x%08x) = 0x%x, per-element 0x%x\n", f->name, sat ? " sat" : "", (double)in.v[k],
                 fbits(in.v[k]), got, want);
          free(codes), free(in.v);
          CHECK(0);
        }
      }
      if (f->bits == 4) CHECK((codes[n / 2] & 0xF0) == 0xA0); /* the odd tail kept its high nibble */
    }
    free(codes);
    free(in.v);
    /* decode every code in one call */
    size_t ncodes = (size_t)1 << f->bits;
    uint8_t raw[65536 * 2];
    for (size_t c = 0; c < ncodes; c++) {
      if (f->bits == 16) memcpy(raw + 2 * c, &(uint16_t){(uint16_t)c}, 2);
      else if (f->bits == 8) raw[c] = (uint8_t)c;
      else raw[c / 2] = (uint8_t)((c & 1) ? (raw[c / 2] & 0xF) | (c << 4) : c);
    }
    float *dec = malloc(ncodes * sizeof(float));
    CHECK(tc_narrow_to_float_n(f->t, raw, dec, ncodes));
    for (size_t c = 0; c < ncodes; c++)
      if (fbits(dec[c]) != fbits(tc_narrow_to_float(f->t, (uint32_t)c))) {
        printf("  bulk %s decode 0x%zx = 0x%08x, per-element 0x%08x\n", f->name, c, fbits(dec[c]),
               fbits(tc_narrow_to_float(f->t, (uint32_t)c)));
        free(dec);
        CHECK(0);
      }
    free(dec);
  }
  float x = 1.0f;
  uint8_t o;
  CHECK(!tc_float_to_narrow_n(TC_DT_FLOAT32, &x, &o, 1, false));
  CHECK(!tc_narrow_to_float_n(TC_DT_INT8, &o, &x, 1));
}

/* Doubles that round differently from their float32 rounding (no double rounding). */
TEST(encode_float64_matches_reference) {
  init_ref();
  for (int i = 0; i < NFMT; i++) {
    const rfmt *f = &fmts[i];
    uint32_t top = f->maxcode + 1;
    for (uint32_t c = 0; c < top; c++) {
      double mid = (f->vals[c] + f->vals[c + 1]) / 2;
      double xs[] = {mid, nextafter(mid, INFINITY), nextafter(mid, 0), mid + mid * 0x1p-40, mid - mid * 0x1p-40};
      for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++)
        for (int s = 0; s < 2; s++)
          for (int sat = 0; sat < 2; sat++) {
            double x = s ? -xs[k] : xs[k];
            uint32_t want = ref_encode(f, x, sat), got = tc_double_to_narrow(f->t, x, sat);
            if (got != want) {
              printf("  %s%s(%a): got 0x%x, want 0x%x\n", f->name, sat ? " sat" : "", x, got, want);
              CHECK(0);
            }
          }
    }
    double specials[] = {1e300, -1e300, 1e-300, -1e-300, 4.9e-324, DBL_MAX, 0.0, -0.0};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
      for (int sat = 0; sat < 2; sat++) EXPECT(tc_double_to_narrow(f->t, specials[k], sat) == ref_encode(f, specials[k], sat));
    for (int k = 0; k < 100000; k++) {
      double x = bitsd(((uint64_t)rnd32() << 32) | rnd32());
      if (isnan(x)) continue;
      EXPECT(tc_double_to_narrow(f->t, x, false) == ref_encode(f, x, 0));
    }
  }
}

/* Hand-checked values: halfway cases, saturation, overflow, NaN/inf, -0. */
TEST(known_values) {
  CHECK_INT(tc_float_to_half(1.0f + 0x1p-11f), 0x3C00);      /* tie, even is down */
  CHECK_INT(tc_float_to_half(1.0f + 3 * 0x1p-11f), 0x3C02);  /* tie, even is up */
  CHECK_INT(tc_float_to_half(65504.0f), 0x7BFF);
  CHECK_INT(tc_float_to_half(65519.996f), 0x7BFF);
  CHECK_INT(tc_float_to_half(65520.0f), 0x7C00);             /* halfway to 2^16: inf */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT16, 65520.0f, true), 0x7BFF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT16, -INFINITY, true), 0xFBFF);
  CHECK_INT(tc_float_to_half(0x1p-24f), 0x0001);             /* smallest subnormal */
  CHECK_INT(tc_float_to_half(0x1p-25f), 0x0000);             /* tie to even: zero */
  CHECK_INT(tc_float_to_half(-0x1.8p-25f), 0x8001);
  CHECK_INT(tc_float_to_half(-0.0f), 0x8000);
  CHECK_INT(tc_float_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  CHECK_INT(tc_float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  CHECK_INT(tc_float_to_bf16(FLT_MAX), 0x7F80);
  CHECK_INT(tc_float_to_narrow(TC_DT_BFLOAT16, FLT_MAX, true), 0x7F7F);
  CHECK_INT(tc_float_to_bf16(-NAN), 0xFFC0);
  CHECK_INT(tc_double_to_narrow(TC_DT_BFLOAT16, 1.0 + 0x1p-8 + 0x1p-40, false), 0x3F81); /* no double rounding */
  /* float8_e4m3fn: max 448; 464 is halfway to the NaN code and ties to even 448 */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 448.0f, false), 0x7E);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 464.0f, false), 0x7E);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 464.1f, false), 0x7F);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 1000.0f, true), 0x7E);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, -1000.0f, false), 0xFF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, INFINITY, false), 0x7F);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, -INFINITY, true), 0xFE);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 0x1p-9f, false), 0x01);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 0x1p-10f, false), 0x00);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, 0x1.8p-9f, false), 0x02);
  CHECK(tc_narrow_to_float(TC_DT_FLOAT8_E4M3FN, 0x7E) == 448.0f);
  CHECK(isnan(tc_narrow_to_float(TC_DT_FLOAT8_E4M3FN, 0xFF)));
  /* float8_e5m2: inf exists */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E5M2, 57344.0f, false), 0x7B);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E5M2, 61440.0f, false), 0x7C);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E5M2, 61440.0f, true), 0x7B);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E5M2, -INFINITY, false), 0xFC);
  /* fnuz: no -0, one NaN */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FNUZ, -0.0f, false), 0x00);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FNUZ, -0x1p-12f, false), 0x00);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FNUZ, 240.0f, false), 0x7F);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FNUZ, 248.0f, false), 0x80);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E4M3FNUZ, -300.0f, true), 0xFF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E5M2FNUZ, NAN, true), 0x80);
  CHECK(tc_narrow_to_float(TC_DT_FLOAT8_E5M2FNUZ, 0x7F) == 57344.0f);
  /* e8m0: powers of two; ties (1.5 * 2^k) round up; no zero */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, 1.0f, false), 127);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, 1.5f, false), 128);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, 3.0f, false), 129);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, 1.49f, false), 127);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, 0.0f, false), 0xFF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, -2.0f, true), 0xFF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, 0x1p-140f, false), 0x00);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, FLT_MAX, false), 0xFF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT8_E8M0FNU, FLT_MAX, true), 0xFE);
  CHECK(tc_narrow_to_double(TC_DT_FLOAT8_E8M0FNU, 0) == 0x1p-127);
  /* float4_e2m1fn: 0 .5 1 1.5 2 3 4 6, saturating */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, 5.0f, false), 0x6);  /* tie: 4 (even) */
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, 7.0f, false), 0x7);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, -1e9f, false), 0xF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, -INFINITY, false), 0xF);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, NAN, false), 0x7);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, 0.25f, false), 0x0);
  CHECK_INT(tc_float_to_narrow(TC_DT_FLOAT4_E2M1FN, -0.25f, false), 0x8);
  CHECK(tc_narrow_to_float(TC_DT_FLOAT4_E2M1FN, 0xD) == -3.0f);
}

/* ---------------- names, table ---------------- */

static tc_dtype dtl(tc_scalar_type t, int lanes) {
  tc_dtype d = {(uint8_t)t, (uint16_t)lanes};
  return d;
}

TEST(lookup_names_and_aliases) {
  static const struct { const char *s; tc_scalar_type t; int lanes; } ok[] = {
      {"float16", TC_DT_FLOAT16, 1},  {"half", TC_DT_FLOAT16, 1},         {"float", TC_DT_FLOAT32, 1},
      {"double", TC_DT_FLOAT64, 1},   {"int", TC_DT_INT32, 1},            {"long", TC_DT_INT64, 1},
      {"short", TC_DT_INT16, 1},      {"uint", TC_DT_UINT32, 1},          {"ulong", TC_DT_UINT64, 1},
      {"bool", TC_DT_BOOL, 1},        {"bfloat16", TC_DT_BFLOAT16, 1},    {"bfloat", TC_DT_BFLOAT16, 1},
      {"bf16", TC_DT_BFLOAT16, 1},    {"fp16", TC_DT_FLOAT16, 1},         {"fp32", TC_DT_FLOAT32, 1},
      {"e4m3_float8", TC_DT_FLOAT8_E4M3FN, 1}, {"e5m2_float8", TC_DT_FLOAT8_E5M2, 1},
      {"float8_e4m3fnuz", TC_DT_FLOAT8_E4M3FNUZ, 1}, {"float8_e8m0fnu", TC_DT_FLOAT8_E8M0FNU, 1},
      {"float4_e2m1fn", TC_DT_FLOAT4_E2M1FN, 1}, {"int4", TC_DT_INT4, 1}, {"uint4", TC_DT_UINT4, 1},
      {"float16x4", TC_DT_FLOAT16, 4}, {"float32x8", TC_DT_FLOAT32, 8}, {"int8x16", TC_DT_INT8, 16},
      {"float8_e4m3fnx2", TC_DT_FLOAT8_E4M3FN, 2}, {"float8_e4m3fnuzx64", TC_DT_FLOAT8_E4M3FNUZ, 64},
      {"uint64x2", TC_DT_UINT64, 2}, {"float8_e4m3", TC_DT_FLOAT8_E4M3FN, 1},
      {"float8_e4m3x4", TC_DT_FLOAT8_E4M3FN, 4},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    tc_dtype d = {0, 0};
    char sug[64] = "junk";
    if (!tc_dtype_lookup(ok[i].s, &d, sug, sizeof sug) || !tc_dtype_eq(d, dtl(ok[i].t, ok[i].lanes))) {
      printf("  lookup(%s) failed\n", ok[i].s);
      CHECK(0);
    }
    CHECK_STR(sug, "");
  }
  const char *bad[] = {"float16x0", "float16x", "x4", "float16x04", "float16x70000", "", "halfx4", "Float16", "float8"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tc_dtype d;
    if (tc_dtype_lookup(bad[i], &d, NULL, 0)) {
      printf("  lookup(%s) accepted\n", bad[i]);
      CHECK(0);
    }
  }
  tc_dtype d;
  CHECK(tc_dtype_lookup_attr("T.float", &d, NULL, 0) && tc_dtype_eq(d, tc_dt(TC_DT_FLOAT32)));
  CHECK(tc_dtype_lookup_attr("T.half", &d, NULL, 0) && tc_dtype_eq(d, tc_dt(TC_DT_FLOAT16)));
  CHECK(tc_dtype_lookup_attr("float16", &d, NULL, 0) && tc_dtype_eq(d, tc_dt(TC_DT_FLOAT16)));
  CHECK(tc_dtype_lookup_attr("T.int", &d, NULL, 0) && tc_dtype_eq(d, tc_dt(TC_DT_INT32)));
  CHECK(tc_dtype_lookup_attr("T.float16x4", &d, NULL, 0) && tc_dtype_eq(d, dtl(TC_DT_FLOAT16, 4)));
  CHECK(tc_dtype_lookup_attr("T.float8_e4m3", &d, NULL, 0) && tc_dtype_eq(d, tc_dt(TC_DT_FLOAT8_E4M3FN)));
  CHECK(!tc_dtype_lookup_attr("T.bf16", &d, NULL, 0)); /* string-only conveniences */
  CHECK(!tc_dtype_lookup_attr("T.ulong", &d, NULL, 0));
  CHECK(!tc_dtype_lookup_attr("T.e4m3_float8", &d, NULL, 0));
}

TEST(suggestions) {
  static const struct { const char *s, *want; int attr; } cases[] = {
      {"flaot16", "float16", 0},         {"floot16", "float16", 0},       {"bfloat61", "bfloat16", 0},
      {"flaot16x4", "float16x4", 0},     {"float8_e4m3fz", "float8_e4m3fn", 0}, {"float8_e4m4", "float8_e4m3", 0},
      {"float8_e4m3fnuzz", "float8_e4m3fnuz", 0}, {"float8_e5m3fnx2", "float8_e4m3fnx2", 0},
      {"int33", "int32", 0},             {"hlaf", "half", 0},             {"T.flaot", "float", 1},
      {"T.flaot32", "float32", 1},       {"xyzzy", "", 0},                {"completely_wrong_name", "", 0},
      {"uint7", "uint4", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char sug[64] = "junk";
    tc_dtype d;
    bool found = cases[i].attr ? tc_dtype_lookup_attr(cases[i].s, &d, sug, sizeof sug)
                               : tc_dtype_lookup(cases[i].s, &d, sug, sizeof sug);
    CHECK(!found);
    CHECK_STR(sug, cases[i].want);
  }
  char tiny[4];
  CHECK(!tc_dtype_lookup("flaot16", NULL, tiny, sizeof tiny));
  CHECK_STR(tiny, "flo"); /* truncated, still terminated */
}

TEST(table_properties) {
  char buf[32];
  CHECK_STR(tc_dtype_name(dtl(TC_DT_FLOAT16, 4), buf, sizeof buf), "float16x4");
  CHECK_STR(tc_dtype_name(tc_dt(TC_DT_FLOAT8_E4M3FN), buf, sizeof buf), "float8_e4m3fn");
  CHECK_STR(tc_dtype_display_name(TC_DT_FLOAT32), "float32");
  for (int t = 1; t < TC_DT_COUNT; t++) {
    char nb[32];
    tc_dtype d;
    /* every canonical name (and its vector form) looks up to itself */
    CHECK(tc_dtype_lookup(tc_dtype_scalar_name((tc_scalar_type)t), &d, NULL, 0) && d.code == t && d.lanes == 1);
    CHECK(tc_dtype_lookup(tc_dtype_name(dtl((tc_scalar_type)t, 8), nb, sizeof nb), &d, NULL, 0) && d.code == t && d.lanes == 8);
    CHECK_STR(tc_dtype_display_name((tc_scalar_type)t), tc_dtype_scalar_name((tc_scalar_type)t));
    CHECK(tc_dtype_c_storage(tc_dt((tc_scalar_type)t)) != NULL);
  }
  CHECK_INT(tc_dtype_bits(tc_dt(TC_DT_INT4)), 4);
  CHECK_INT(tc_dtype_bits(dtl(TC_DT_BFLOAT16, 4)), 16);
  CHECK_INT(tc_dtype_bits(tc_dt(TC_DT_BOOL)), 8);
  CHECK(tc_dtype_is_float(tc_dt(TC_DT_FLOAT8_E8M0FNU)) && !tc_dtype_is_signed(tc_dt(TC_DT_FLOAT8_E8M0FNU)));
  CHECK(tc_dtype_is_int(tc_dt(TC_DT_UINT4)) && !tc_dtype_is_signed(tc_dt(TC_DT_UINT4)));
  CHECK(tc_dtype_is_int(tc_dt(TC_DT_INT4)) && tc_dtype_is_signed(tc_dt(TC_DT_INT4)));
  CHECK(!tc_dtype_is_int(tc_dt(TC_DT_BOOL)) && tc_dtype_is_bool(tc_dt(TC_DT_BOOL)));
  CHECK(tc_dtype_kind_of(tc_dt(TC_DT_UINT16)) == TC_KIND_UINT);
  CHECK_INT(tc_dtype_storage_bytes(tc_dt(TC_DT_INT4), 3), 2);
  CHECK_INT(tc_dtype_storage_bytes(tc_dt(TC_DT_FLOAT4_E2M1FN), 4), 2);
  CHECK_INT(tc_dtype_storage_bytes(dtl(TC_DT_FLOAT16, 4), 2), 16);
  CHECK_INT(tc_dtype_storage_bytes(tc_dt(TC_DT_FLOAT64), 5), 40);
  tc_dtype inval = {0, 1};
  CHECK(!tc_dtype_is_float(inval) && tc_dtype_bits(inval) == 0);
}

TEST(target_spellings) {
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_FLOAT16)), "half");
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_BFLOAT16)), "__nv_bfloat16");
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_FLOAT8_E4M3FN)), "__nv_fp8_e4m3");
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_FLOAT8_E5M2)), "__nv_fp8_e5m2");
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_FLOAT8_E8M0FNU)), "__nv_fp8_e8m0");
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_FLOAT4_E2M1FN)), "__nv_fp4_e2m1");
  CHECK_STR(tc_dtype_cuda_name(tc_dt(TC_DT_INT8)), "int8_t");
  CHECK_STR(tc_dtype_cuda_name(dtl(TC_DT_FLOAT16, 2)), "half2");
  CHECK_STR(tc_dtype_cuda_name(dtl(TC_DT_FLOAT32, 4)), "float4");
  CHECK(tc_dtype_cuda_name(tc_dt(TC_DT_FLOAT8_E4M3FNUZ)) == NULL);
  CHECK(tc_dtype_cuda_name(tc_dt(TC_DT_INT4)) == NULL); /* CUDA's int4 is a vector of int */
  CHECK_STR(tc_dtype_msl_name(tc_dt(TC_DT_FLOAT16)), "half");
  CHECK_STR(tc_dtype_msl_name(tc_dt(TC_DT_BFLOAT16)), "bfloat");
  CHECK_STR(tc_dtype_msl_name(tc_dt(TC_DT_FLOAT8_E4M3FN)), "uchar");
  CHECK_STR(tc_dtype_msl_name(dtl(TC_DT_FLOAT16, 4)), "half4");
  CHECK(tc_dtype_msl_name(tc_dt(TC_DT_FLOAT64)) == NULL);
  CHECK_STR(tc_dtype_c_storage(tc_dt(TC_DT_FLOAT16)), "uint16_t");
  CHECK_STR(tc_dtype_c_storage(tc_dt(TC_DT_FLOAT32)), "float");
  CHECK_STR(tc_dtype_c_storage(tc_dt(TC_DT_FLOAT8_E5M2)), "uint8_t");
  CHECK_STR(tc_dtype_c_to_f32_fn(tc_dt(TC_DT_FLOAT16)), "tcg_float16_to_f32");
  CHECK_STR(tc_dtype_c_from_f32_fn(tc_dt(TC_DT_BFLOAT16)), "tcg_f32_to_bfloat16");
  CHECK_STR(tc_dtype_c_from_f32_sat_fn(tc_dt(TC_DT_FLOAT8_E4M3FN)), "tcg_f32_to_float8_e4m3fn_sat");
  CHECK_STR(tc_dtype_c_from_f64_int_fn(tc_dt(TC_DT_UINT16)), "tcg_f64_to_uint16");
  CHECK(tc_dtype_c_to_f32_fn(tc_dt(TC_DT_FLOAT32)) == NULL && tc_dtype_c_from_f32_fn(tc_dt(TC_DT_INT32)) == NULL);
  /* every function the table names is defined in the prelude */
  const char *pre = tc_dtype_c_prelude();
  for (int t = 1; t < TC_DT_COUNT; t++) {
    const char *fns[] = {tc_dtype_c_to_f32_fn(tc_dt((tc_scalar_type)t)), tc_dtype_c_from_f32_fn(tc_dt((tc_scalar_type)t)),
                         tc_dtype_c_from_f32_sat_fn(tc_dt((tc_scalar_type)t)), tc_dtype_c_from_f64_int_fn(tc_dt((tc_scalar_type)t))};
    for (int k = 0; k < 4; k++) {
      if (!fns[k]) continue;
      char pat[96], pat2[96]; /* a definition, or a TCG_F64_TO_INT(name, ...) expansion */
      snprintf(pat, sizeof pat, " %s(", fns[k]);
      snprintf(pat2, sizeof pat2, "(%s,", fns[k]);
      if (!strstr(pre, pat) && !strstr(pre, pat2)) {
        printf("  prelude lacks %s\n", fns[k]);
        CHECK(0);
      }
    }
  }
}

TEST(dlpack_mapping) {
  uint8_t code = 99, bits = 99;
  uint16_t lanes = 99;
  tc_dtype d;
  CHECK(tc_dtype_to_dlpack(tc_dt(TC_DT_FLOAT16), &code, &bits, &lanes) && code == kDLFloat && bits == 16 && lanes == 1);
  CHECK(tc_dtype_to_dlpack(tc_dt(TC_DT_BFLOAT16), &code, &bits, &lanes) && code == kDLBfloat && bits == 16);
  CHECK(tc_dtype_to_dlpack(dtl(TC_DT_INT32, 4), &code, &bits, &lanes) && code == kDLInt && bits == 32 && lanes == 4);
  CHECK(tc_dtype_to_dlpack(tc_dt(TC_DT_UINT4), &code, &bits, &lanes) && code == kDLUInt && bits == 4);
  CHECK(tc_dtype_from_dlpack(kDLFloat, 64, 1, &d) && tc_dtype_eq(d, tc_dt(TC_DT_FLOAT64)));
  CHECK(tc_dtype_from_dlpack(kDLInt, 4, 1, &d) && tc_dtype_eq(d, tc_dt(TC_DT_INT4)));
  CHECK(tc_dtype_from_dlpack(kDLUInt, 8, 1, &d) && tc_dtype_eq(d, tc_dt(TC_DT_UINT8)));
  CHECK(tc_dtype_from_dlpack(kDLFloat, 16, 2, &d) && tc_dtype_eq(d, dtl(TC_DT_FLOAT16, 2)));
  CHECK(!tc_dtype_from_dlpack(kDLFloat, 8, 1, &d));
  CHECK(!tc_dtype_from_dlpack(kDLComplex, 64, 1, &d));
  CHECK(!tc_dtype_from_dlpack(kDLFloat, 32, 0, &d));
#if defined(DLPACK_MAJOR_VERSION) && (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 1))
  CHECK(tc_dtype_to_dlpack(tc_dt(TC_DT_FLOAT8_E4M3FN), &code, &bits, &lanes) && code == kDLFloat8_e4m3fn && bits == 8);
  CHECK(tc_dtype_to_dlpack(tc_dt(TC_DT_BOOL), &code, &bits, &lanes) && code == kDLBool && bits == 8);
#elif defined(DLPACK_VERSION) && DLPACK_VERSION < 80
  /* DLPack 0.6 (Debian): no float8 codes, bool travels as uint8 */
  CHECK(!tc_dtype_to_dlpack(tc_dt(TC_DT_FLOAT8_E4M3FN), &code, &bits, &lanes));
  CHECK(!tc_dtype_to_dlpack(tc_dt(TC_DT_FLOAT4_E2M1FN), &code, &bits, &lanes));
  CHECK(tc_dtype_to_dlpack(tc_dt(TC_DT_BOOL), &code, &bits, &lanes) && code == kDLUInt && bits == 8);
#endif
}

/* ---------------- integers, element access, nibble packing ---------------- */

TEST(float_to_int_rules) {
  CHECK_INT(tc_double_to_sint(TC_DT_INT8, 127.9), 127);
  CHECK_INT(tc_double_to_sint(TC_DT_INT8, 128.0), 127);
  CHECK_INT(tc_double_to_sint(TC_DT_INT8, -128.9), -128);
  CHECK_INT(tc_double_to_sint(TC_DT_INT8, -1e10), -128);
  CHECK_INT(tc_double_to_sint(TC_DT_INT8, -0.9), 0);
  CHECK_INT(tc_double_to_sint(TC_DT_INT8, -1.5), -1);
  CHECK_INT(tc_double_to_sint(TC_DT_INT32, NAN), 0);
  CHECK_INT(tc_double_to_sint(TC_DT_INT32, INFINITY), INT32_MAX);
  CHECK_INT(tc_double_to_sint(TC_DT_INT32, -2147483648.9), INT32_MIN);
  CHECK_INT(tc_double_to_sint(TC_DT_INT64, 9.3e18), INT64_MAX);
  CHECK_INT(tc_double_to_sint(TC_DT_INT64, -9.3e18), INT64_MIN);
  CHECK_INT(tc_double_to_sint(TC_DT_INT4, 7.99), 7);
  CHECK_INT(tc_double_to_sint(TC_DT_INT4, -100), -8);
  CHECK(tc_double_to_uint(TC_DT_UINT8, -5.0) == 0);
  CHECK(tc_double_to_uint(TC_DT_UINT8, 255.9) == 255);
  CHECK(tc_double_to_uint(TC_DT_UINT8, 256.0) == 255);
  CHECK(tc_double_to_uint(TC_DT_UINT4, 15.5) == 15);
  CHECK(tc_double_to_uint(TC_DT_UINT64, 1.9e19) == UINT64_MAX);
  CHECK(tc_double_to_uint(TC_DT_UINT64, 1.8e19) == 18000000000000000000ull);
  CHECK(tc_double_to_uint(TC_DT_UINT32, NAN) == 0);
}

TEST(load_store_every_scalar) {
  const double vals[] = {0.0, 1.0, -1.0, 2.5, -3.75, 6.0, 100.0, -0.0};
  for (int t = 1; t < TC_DT_COUNT; t++) {
    tc_dtype d = tc_dt((tc_scalar_type)t);
    uint8_t buf[16 * 8];
    memset(buf, 0xAB, sizeof buf);
    for (size_t i = 0; i < 8; i++) tc_dtype_store_f64(d, buf, i, vals[i]);
    for (size_t i = 0; i < 8; i++) {
      double v = vals[i], want;
      if (tc_dtype_is_bool(d)) want = v != 0;
      else if (tc_dtype_is_int(d) && tc_dtype_is_signed(d)) want = (double)tc_double_to_sint((tc_scalar_type)t, v);
      else if (tc_dtype_is_int(d)) want = (double)tc_double_to_uint((tc_scalar_type)t, v);
      else if (t == TC_DT_FLOAT32) want = (float)v;
      else if (t == TC_DT_FLOAT64) want = v;
      else want = tc_narrow_to_double((tc_scalar_type)t, tc_double_to_narrow((tc_scalar_type)t, v, false));
      double got = tc_dtype_load_f64(d, buf, i);
      if (!(got == want || (isnan(got) && isnan(want)))) {
        printf("  %s[%zu]: stored %g, loaded %g, want %g\n", tc_dtype_scalar_name((tc_scalar_type)t), i, v, got, want);
        CHECK(0);
      }
    }
    /* neighbours untouched: storage_bytes(8) bytes written, the rest keeps 0xAB */
    size_t used = tc_dtype_storage_bytes(d, 8);
    for (size_t k = used; k < sizeof buf; k++) CHECK(buf[k] == 0xAB);
  }
  uint16_t h = 0;
  tc_dtype_store_f64(tc_dt(TC_DT_FLOAT16), &h, 0, 1.0 + 0x1p-11 + 0x1p-30); /* rounds from the double */
  CHECK_INT(h, 0x3C01);
}

TEST(nibble_packing) {
  uint8_t buf[8] = {0};
  for (int i = 0; i < 16; i++) tc_dtype_store_f64(tc_dt(TC_DT_INT4), buf, (size_t)i, (double)(i - 8));
  /* element 2k is the low nibble of byte k: -8 (0x8) then -7 (0x9) -> byte 0x98 */
  CHECK_INT(buf[0], 0x98);
  CHECK_INT(buf[3], 0xFE); /* -2, -1 */
  CHECK_INT(buf[4], 0x10); /* 0, 1 */
  CHECK_INT(buf[7], 0x76); /* 6, 7 */
  for (int i = 0; i < 16; i++) CHECK(tc_dtype_load_f64(tc_dt(TC_DT_INT4), buf, (size_t)i) == i - 8);
  uint8_t u[2] = {0x21, 0x43};
  CHECK(tc_dtype_load_f64(tc_dt(TC_DT_UINT4), u, 0) == 1 && tc_dtype_load_f64(tc_dt(TC_DT_UINT4), u, 3) == 4);
  tc_dtype_store_f64(tc_dt(TC_DT_UINT4), u, 1, 99.0); /* saturates to 15, leaves element 0 */
  CHECK_INT(u[0], 0xF1);
  tc_dtype_store_f64(tc_dt(TC_DT_FLOAT4_E2M1FN), u, 2, -3.0);
  CHECK_INT(u[1], 0x4D);
  CHECK(tc_dtype_load_f64(tc_dt(TC_DT_FLOAT4_E2M1FN), u, 2) == -3.0);
}

/* ---------------- generated C ---------------- */

/* The driver reads, per narrow type, a count and float32 inputs, and writes their encodings
 * (plain and _sat, as uint16) and the decoding of every code; then float->int results and
 * nibble helper results. */
static const char *driver_src =
    "#include <stdio.h>\n#include <stdlib.h>\n"
    "static FILE *in, *out;\n"
    "static float *rd_floats(size_t *n) {\n"
    "  if (fread(n, sizeof *n, 1, in) != 1) exit(4);\n"
    "  float *x = malloc(*n * 4 + 4); if (!x || fread(x, 4, *n, in) != *n) exit(5);\n"
    "  return x;\n"
    "}\n"
    "#define TYPE(name, ncodes) { size_t n; float *x = rd_floats(&n); uint16_t *o = malloc(n * 2 + 2);\\\n"
    "  for (size_t i = 0; i < n; i++) { o[i] = tcg_f32_to_##name(x[i]); } fwrite(o, 2, n, out);\\\n"
    "  for (size_t i = 0; i < n; i++) { o[i] = tcg_f32_to_##name##_sat(x[i]); } fwrite(o, 2, n, out);\\\n"
    "  for (uint32_t c = 0; c < (ncodes); c++) { float f = tcg_##name##_to_f32(c); fwrite(&f, 4, 1, out); }\\\n"
    "  free(o); free(x); }\n"
    "#define DO_INT(fn) for (size_t i = 0; i < nd; i++) { int64_t v = (int64_t)fn(y[i]); fwrite(&v, 8, 1, out); }\n"
    "int main(int argc, char **argv) {\n"
    "  if (argc != 3) return 2;\n"
    "  in = fopen(argv[1], \"rb\"), out = fopen(argv[2], \"wb\");\n"
    "  if (!in || !out) return 3;\n"
    "  TYPE(float16, 65536) TYPE(bfloat16, 65536) TYPE(float8_e5m2, 256) TYPE(float8_e4m3fn, 256)\n"
    "  TYPE(float8_e4m3fnuz, 256) TYPE(float8_e5m2fnuz, 256) TYPE(float8_e8m0fnu, 256) TYPE(float4_e2m1fn, 16)\n"
    "  size_t nd; if (fread(&nd, sizeof nd, 1, in) != 1) return 4;\n"
    "  double *y = malloc(nd * 8); if (!y || fread(y, 8, nd, in) != nd) return 5;\n"
    "  DO_INT(tcg_f64_to_int4) DO_INT(tcg_f64_to_int8) DO_INT(tcg_f64_to_int16) DO_INT(tcg_f64_to_int32)\n"
    "  DO_INT(tcg_f64_to_int64) DO_INT(tcg_f64_to_uint4) DO_INT(tcg_f64_to_uint8) DO_INT(tcg_f64_to_uint16)\n"
    "  DO_INT(tcg_f64_to_uint32) DO_INT(tcg_f64_to_uint64)\n"
    "  uint8_t nb[4] = {0x21, 0x43, 0x65, 0x87};\n"
    "  for (size_t i = 0; i < 8; i++) { int64_t v = tcg_int4_to_i8(tcg_nibble_get(nb, i)); fwrite(&v, 8, 1, out); }\n"
    "  tcg_nibble_set(nb, 5, 0xA); tcg_nibble_set(nb, 0, 0xF); fwrite(nb, 1, 4, out);\n"
    "  fclose(out); fclose(in); free(y);\n"
    "  return 0;\n"
    "}\n";

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t w = fwrite(p, 1, n, f);
  return fclose(f) == 0 && w == n;
}

TEST(prelude_matches_library) {
  if (system("cc --version >/dev/null 2>&1") != 0) {
    printf("note: no cc on PATH; the generated-C check did not run\n");
    tc_t_cur_failed = 0;
    return;
  }
  init_ref();
  char dir[] = "/tmp/tilec_dtype_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char src[64], bin[64], inp[64], outp[64], cmd[1024];
  snprintf(src, sizeof src, "%s/conv.c", dir);
  snprintf(bin, sizeof bin, "%s/conv", dir);
  snprintf(inp, sizeof inp, "%s/in.bin", dir);
  snprintf(outp, sizeof outp, "%s/out.bin", dir);
  /* inputs, per format: its values, midpoints and neighbours, and random bit patterns */
  fvec ins[NFMT];
  FILE *fi = fopen(inp, "wb");
  CHECK(fi != NULL);
  for (int i = 0; i < NFMT; i++) {
    ins[i] = float_inputs(&fmts[i], 300000);
    fwrite(&ins[i].n, sizeof ins[i].n, 1, fi);
    fwrite(ins[i].v, 4, ins[i].n, fi);
  }
  double dv[] = {0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 7.5, -8.5, 15.9, 16.0, 127.9, -128.9, 255.5, 256.0,
                 32767.5, -32768.5, 65535.9, 65536.0, 2147483647.5, -2147483648.9, 4294967295.5, 4294967296.0,
                 9.2e18, -9.3e18, 1.8e19, 1.9e19, 1e300, -1e300, INFINITY, -INFINITY, NAN, 3.99, -3.99};
  size_t nd = sizeof dv / sizeof dv[0];
  fwrite(&nd, sizeof nd, 1, fi);
  fwrite(dv, 8, nd, fi);
  fclose(fi);
  size_t plen = strlen(tc_dtype_c_prelude()), dlen = strlen(driver_src);
  char *text = malloc(plen + dlen + 1);
  memcpy(text, tc_dtype_c_prelude(), plen);
  memcpy(text + plen, driver_src, dlen + 1);
  int wrote = write_file(src, text, plen + dlen);
  free(text);
  CHECK(wrote);
  /* plain -O3; the CPU backend's flags (src/target/cpu/build.c); and -ffast-math in case a
   * backend adds it */
  static const char *const flag_sets[] = {"-O3", "-O3 -march=native -ffp-contract=fast -fwrapv -fno-math-errno",
                                          "-O3 -march=native -ffast-math"};
  int rc = 0, bad = 0;
  for (int fs = 0; fs < 3 && rc == 0 && !bad; fs++) {
    /* like the CPU backend, drop -march=native where the compiler rejects it */
    char portable[128];
    snprintf(portable, sizeof portable, "%s", flag_sets[fs]);
    char *march = strstr(portable, " -march=native");
    if (march) memmove(march, march + 14, strlen(march + 14) + 1);
    snprintf(cmd, sizeof cmd,
             "rm -f %s && { cc -std=c11 %s -Wall -Wextra -Werror -o %s %s -lm 2>/dev/null || "
             "cc -std=c11 %s -Wall -Wextra -Werror -o %s %s -lm 2>&1 | head -n 20; } && %s %s %s",
             bin, flag_sets[fs], bin, src, portable, bin, src, bin, inp, outp);
    rc = system(cmd);
    EXPECT(rc == 0);
    FILE *fo = rc == 0 ? fopen(outp, "rb") : NULL;
    for (int i = 0; fo && i < NFMT && !bad; i++) {
      const rfmt *f = &fmts[i];
      const fvec *in = &ins[i];
      uint16_t *o = malloc(in->n * 2);
      for (int sat = 0; sat < 2 && !bad; sat++) {
        if (fread(o, 2, in->n, fo) != in->n) bad = 1;
        for (size_t k = 0; k < in->n && !bad; k++) {
          uint32_t want = tc_float_to_narrow(f->t, in->v[k], sat);
          if (o[k] != want) {
            printf("  prelude %s%s(%a = 0x%08x) = 0x%x, library 0x%x\n", f->name, sat ? "_sat" : "", (double)in->v[k],
                   fbits(in->v[k]), o[k], want);
            bad = 1;
          }
        }
      }
      for (uint32_t c = 0; c < (1u << f->bits) && !bad; c++) {
        uint32_t got;
        if (fread(&got, 4, 1, fo) != 1) bad = 1;
        else if (got != fbits(tc_narrow_to_float(f->t, c))) {
          printf("  prelude %s decode 0x%x = 0x%08x, library 0x%08x\n", f->name, c, got, fbits(tc_narrow_to_float(f->t, c)));
          bad = 1;
        }
      }
      free(o);
    }
    static const tc_scalar_type ints[] = {TC_DT_INT4, TC_DT_INT8, TC_DT_INT16, TC_DT_INT32, TC_DT_INT64,
                                          TC_DT_UINT4, TC_DT_UINT8, TC_DT_UINT16, TC_DT_UINT32, TC_DT_UINT64};
    for (int i = 0; fo && i < 10 && !bad; i++)
      for (size_t k = 0; k < nd && !bad; k++) {
        int64_t got;
        if (fread(&got, 8, 1, fo) != 1) { bad = 1; break; }
        int64_t want = tc_dtype_is_signed(tc_dt(ints[i])) ? tc_double_to_sint(ints[i], dv[k]) : (int64_t)tc_double_to_uint(ints[i], dv[k]);
        if (got != want) {
          printf("  prelude %s(%g) = %lld, library %lld\n", tc_dtype_scalar_name(ints[i]), dv[k], (long long)got, (long long)want);
          bad = 1;
        }
      }
    uint8_t nb[4] = {0x21, 0x43, 0x65, 0x87};
    for (size_t k = 0; fo && k < 8 && !bad; k++) {
      int64_t got;
      if (fread(&got, 8, 1, fo) != 1 || got != (int64_t)tc_dtype_load_f64(tc_dt(TC_DT_INT4), nb, k)) bad = 1;
    }
    uint8_t after[4];
    if (fo && !bad) {
      tc_dtype_store_f64(tc_dt(TC_DT_UINT4), nb, 5, 10.0);
      tc_dtype_store_f64(tc_dt(TC_DT_UINT4), nb, 0, 15.0);
      if (fread(after, 1, 4, fo) != 4 || memcmp(after, nb, 4) != 0) bad = 1;
    }
    if (fo) fclose(fo);
    if (bad) printf("  (prelude built with cc %s)\n", flag_sets[fs]);
  }
  for (int i = 0; i < NFMT; i++) free(ins[i].v);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  EXPECT(system(cmd) == 0);
  CHECK(rc == 0 && !bad);
}

int main(void) {
  init_ref();
  RUN(decode_every_encoding);
  RUN(reencode_every_encoding);
  RUN(encode_float32_matches_reference);
  RUN(encode_float64_matches_reference);
  RUN(bulk_matches_per_element);
  RUN(known_values);
  RUN(lookup_names_and_aliases);
  RUN(suggestions);
  RUN(table_properties);
  RUN(target_spellings);
  RUN(dlpack_mapping);
  RUN(float_to_int_rules);
  RUN(load_store_every_scalar);
  RUN(nibble_packing);
  RUN(prelude_matches_library);
  free_ref();
  TEST_MAIN_END();
}
