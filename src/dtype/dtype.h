/* dtype.h: the canonical table of tilec's scalar and vector types.
 *
 * One table (dtype.def) is the source of truth for names, aliases, sizes and each target
 * language's spelling. Conversions between float32/float64 and every narrow format live in
 * dtype_conv.c; dtype_csrc.c emits the same conversions as C source for generated kernels,
 * so host and kernel round identically. */
#ifndef TILEC_DTYPE_H
#define TILEC_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* X(id, canonical name, bits, kind, signed) -- the scalar types. Vector forms carry lanes. */
#define TC_DTYPE_LIST(X)                                   \
  X(BOOL, "bool", 8, TC_KIND_BOOL, 0)                      \
  X(INT4, "int4", 4, TC_KIND_INT, 1)                       \
  X(INT8, "int8", 8, TC_KIND_INT, 1)                       \
  X(INT16, "int16", 16, TC_KIND_INT, 1)                    \
  X(INT32, "int32", 32, TC_KIND_INT, 1)                    \
  X(INT64, "int64", 64, TC_KIND_INT, 1)                    \
  X(UINT4, "uint4", 4, TC_KIND_UINT, 0)                    \
  X(UINT8, "uint8", 8, TC_KIND_UINT, 0)                    \
  X(UINT16, "uint16", 16, TC_KIND_UINT, 0)                 \
  X(UINT32, "uint32", 32, TC_KIND_UINT, 0)                 \
  X(UINT64, "uint64", 64, TC_KIND_UINT, 0)                 \
  X(FLOAT4_E2M1FN, "float4_e2m1fn", 4, TC_KIND_FLOAT, 1)   \
  X(FLOAT8_E4M3FN, "float8_e4m3fn", 8, TC_KIND_FLOAT, 1)   \
  X(FLOAT8_E5M2, "float8_e5m2", 8, TC_KIND_FLOAT, 1)       \
  X(FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 8, TC_KIND_FLOAT, 1) \
  X(FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 8, TC_KIND_FLOAT, 1) \
  X(FLOAT8_E8M0FNU, "float8_e8m0fnu", 8, TC_KIND_FLOAT, 0) \
  X(FLOAT16, "float16", 16, TC_KIND_FLOAT, 1)              \
  X(BFLOAT16, "bfloat16", 16, TC_KIND_FLOAT, 1)            \
  X(FLOAT32, "float32", 32, TC_KIND_FLOAT, 1)              \
  X(FLOAT64, "float64", 64, TC_KIND_FLOAT, 1)

typedef enum tc_dtype_kind { TC_KIND_BOOL, TC_KIND_INT, TC_KIND_UINT, TC_KIND_FLOAT } tc_dtype_kind;

typedef enum tc_scalar_type {
  TC_DT_INVALID = 0,
#define X(id, name, bits, kind, sgn) TC_DT_##id,
  TC_DTYPE_LIST(X)
#undef X
  TC_DT_COUNT
} tc_scalar_type;

/* A dtype value: a scalar type and a lane count (1 for scalars). Passed by value everywhere. */
typedef struct tc_dtype {
  uint8_t code;   /* tc_scalar_type */
  uint16_t lanes; /* >= 1 */
} tc_dtype;

static inline tc_dtype tc_dt(tc_scalar_type code) {
  tc_dtype d = {(uint8_t)code, 1};
  return d;
}
static inline bool tc_dtype_eq(tc_dtype a, tc_dtype b) { return a.code == b.code && a.lanes == b.lanes; }
static inline bool tc_dtype_valid(tc_dtype d) { return d.code > TC_DT_INVALID && d.code < TC_DT_COUNT && d.lanes >= 1; }

/* Properties of the scalar element. */
int tc_dtype_bits(tc_dtype d);        /* element bits: 4, 8, 16, 32, 64 */
tc_dtype_kind tc_dtype_kind_of(tc_dtype d);
bool tc_dtype_is_float(tc_dtype d);
bool tc_dtype_is_int(tc_dtype d);     /* signed or unsigned integer (not bool) */
bool tc_dtype_is_signed(tc_dtype d);
bool tc_dtype_is_bool(tc_dtype d);
/* Bytes occupied by n elements (int4/uint4/float4 pack two per byte, rounding up). */
size_t tc_dtype_storage_bytes(tc_dtype d, size_t n);

/* Names. canonical: "float16", "float16x4". display: TileLang's display string. */
const char *tc_dtype_name(tc_dtype d, char *buf, size_t cap); /* writes canonical name, returns buf */
const char *tc_dtype_scalar_name(tc_scalar_type t);            /* static canonical scalar name */
/* The canonical name of d's element type ("float16" for float16x4). */
static inline const char *tc_dtype_elem_name(tc_dtype d) { return tc_dtype_scalar_name((tc_scalar_type)d.code); }
/* TileLang's display string (str(T.float16)); the same as the canonical name for every type. */
const char *tc_dtype_display_name(tc_scalar_type t);

/* Look up any accepted spelling: "float16", "half", "float", "fp16"... and vector forms
 * ("float16x4"). Returns false when unknown; then, if suggestion is non-NULL, writes the
 * nearest valid name (edit distance), or "" when nothing is close. */
bool tc_dtype_lookup(const char *name, tc_dtype *out, char *suggestion, size_t cap);
/* Same for the attribute form T.<name> ("T.float", "T.half", "T.float16"). */
bool tc_dtype_lookup_attr(const char *attr, tc_dtype *out, char *suggestion, size_t cap);

/* DLPack mapping: code (kDLInt=0, kDLUInt=1, kDLFloat=2, kDLBfloat=4, kDLBool=6,
 * kDLFloat8_* ...), bits, lanes. Returns false when the type has no DLPack form. */
bool tc_dtype_to_dlpack(tc_dtype d, uint8_t *code, uint8_t *bits, uint16_t *lanes);
bool tc_dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes, tc_dtype *out);

/* Spellings in target languages; NULL when the language has no such type. */
const char *tc_dtype_c_storage(tc_dtype d);  /* C storage type of one element: "uint16_t" for float16 */
/* C type expressions of dtype d compute in (the C-family emitters): "float" for the narrow
 * floats, "int" for bool, "int8_t" for int4; "int" for an invalid dtype. */
const char *tc_dtype_c_compute(tc_dtype d);
bool tc_dtype_is_packed4(tc_dtype d);      /* int4, uint4, float4_e2m1fn: two elements per byte */
bool tc_dtype_is_narrow_float(tc_dtype d); /* a float type other than float32/float64 */
const char *tc_dtype_cuda_name(tc_dtype d);  /* "half", "__nv_bfloat16", "__nv_fp8_e4m3", ... */
const char *tc_dtype_msl_name(tc_dtype d);   /* "half", "bfloat", "uchar" for fp8 storage, ... */

/* Conversions (round to nearest even; each format's NaN/inf rules; see dtype_conv.c). */
float tc_half_to_float(uint16_t h);
uint16_t tc_float_to_half(float f);
float tc_bf16_to_float(uint16_t h);
uint16_t tc_float_to_bf16(float f);
/* Generic: decode one element of narrow float type t from its bits; encode with RNE.
 * saturate: overflow goes to the largest finite value instead of inf/NaN. */
double tc_narrow_to_double(tc_scalar_type t, uint32_t bits);
uint32_t tc_double_to_narrow(tc_scalar_type t, double v, bool saturate);
float tc_narrow_to_float(tc_scalar_type t, uint32_t bits);
uint32_t tc_float_to_narrow(tc_scalar_type t, float v, bool saturate);

/* Stores and casts to these types saturate to the largest finite value (NaN stays NaN), as
 * TileLang's CUDA conversions do (__nv_fp8_* with __NV_SATFINITE): float8_e4m3fn, float8_e5m2,
 * float8_e4m3fnuz, float8_e5m2fnuz. (float4_e2m1fn has no inf or NaN and always saturates.)
 * Every backend and the reference follow this; the non-saturating conversions above stay
 * available to host code. */
bool tc_dtype_store_saturates(tc_dtype d);

/* Element access in a buffer of dtype d (scalar). Index counts elements, so 4-bit types
 * address nibbles: element 2k is the low nibble of byte k, element 2k+1 the high nibble. */
/* Array forms, vectorizable, with the same results as the per-element functions. Codes are
 * in the type's storage: uint16_t for 16-bit types, uint8_t for 8-bit ones, and packed
 * nibbles for float4_e2m1fn (element 2k in the low nibble of byte k; with odd n the last
 * byte's high nibble is kept). Return false when t is not a narrow float type. */
bool tc_float_to_narrow_n(tc_scalar_type t, const float *in, void *out, size_t n, bool saturate);
bool tc_narrow_to_float_n(tc_scalar_type t, const void *in, float *out, size_t n);

/* float -> integer of type t: truncate toward zero, saturate to t's range, NaN gives 0.
 * tc_double_to_sint is for signed types (int4..int64), tc_double_to_uint for unsigned ones. */
int64_t tc_double_to_sint(tc_scalar_type t, double v);
uint64_t tc_double_to_uint(tc_scalar_type t, double v);

double tc_dtype_load_f64(tc_dtype d, const void *base, size_t index);
void tc_dtype_store_f64(tc_dtype d, void *base, size_t index, double v);

/* Generated C. tc_dtype_c_prelude() is a static string of C11 source that defines, for every
 * narrow float type, `static inline float tcg_<name>_to_f32(<storage> bits)` and
 * `static inline <storage> tcg_f32_to_<name>(float v)` (saturate=false), plus the _sat variant
 * `tcg_f32_to_<name>_sat` where the format has one, with <name> the canonical name
 * (tcg_float16_to_f32, tcg_f32_to_bfloat16, tcg_f32_to_float8_e4m3fn_sat, ...). They round
 * bit-identically to the library functions above. The two functions below name them. */
const char *tc_dtype_c_prelude(void);
const char *tc_dtype_c_to_f32_fn(tc_dtype d);   /* NULL for types that are plain C types */
const char *tc_dtype_c_from_f32_fn(tc_dtype d); /* NULL likewise */
const char *tc_dtype_c_from_f32_sat_fn(tc_dtype d); /* "tcg_f32_to_<name>_sat"; every narrow float has one */
/* "tcg_f64_to_int32" etc.: the prelude's float -> integer conversion (rules as
 * tc_double_to_sint/uint); NULL for non-integer types. The prelude also has
 * tcg_nibble_get/tcg_nibble_set (4-bit element access) and tcg_int4_to_i8. */
const char *tc_dtype_c_from_f64_int_fn(tc_dtype d);

#endif
