/* dtype.c: the canonical dtype table (names, aliases, target spellings, DLPack codes) and
 * lookup by any accepted spelling. Bits, kind and signedness come from TC_DTYPE_LIST in
 * dtype.h; everything else about a scalar type is in the one table below. */
#include "dtype/dtype.h"

#include <dlpack/dlpack.h>
#include <stdio.h>
#include <string.h>

#include "util/diag.h"

/* Which DLPack type codes the installed header knows. kDLBool arrived in DLPack 0.8, the
 * float8/float4 codes in 1.1; Debian's libdlpack-dev ships 0.6, which has neither. */
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
#define TC_DL_HAS_BOOL 1
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
#define TC_DL_HAS_FP8 1
#endif
#elif defined(DLPACK_VERSION) && DLPACK_VERSION >= 80
#define TC_DL_HAS_BOOL 1
#endif
#ifndef TC_DL_HAS_BOOL
#define TC_DL_HAS_BOOL 0
#endif
#ifndef TC_DL_HAS_FP8
#define TC_DL_HAS_FP8 0
#endif

/* DLPack type codes by number (fixed by the DLPack ABI); used only where the header has them. */
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_BOOL = 6, DL_NONE = 255 };
#if TC_DL_HAS_FP8
#define DL_FP8(code) (code)
#else
#define DL_FP8(code) DL_NONE
#endif

typedef struct tc_dtype_info {
  const char *display;   /* TileLang's str(dtype); equal to the canonical name for every type */
  const char *c_storage; /* C type holding one element's bits (4-bit types: two per byte) */
  const char *c_compute; /* C type expressions of this dtype compute in: float for narrow floats */
  const char *cuda;      /* CUDA C++ spelling, NULL when CUDA has none */
  const char *msl;       /* Metal Shading Language spelling, NULL when MSL has none */
  uint8_t dl_code;       /* DLPack type code, DL_NONE when the installed DLPack has none */
} tc_dtype_info;

/* Indexed by tc_scalar_type. The MSL entries for fp8/fp4 are the storage type: Metal has no
 * 8-bit or 4-bit float, kernels convert through the same bit-level routines as C. bfloat is
 * MSL 3.1+. Metal has no 64-bit float. */
static const tc_dtype_info tc_dtype_table[TC_DT_COUNT] = {
    [TC_DT_INVALID] = {"invalid", NULL, "int", NULL, NULL, DL_NONE},
    [TC_DT_BOOL] = {"bool", "uint8_t", "int", "bool", "bool", TC_DL_HAS_BOOL ? DL_BOOL : DL_UINT},
    [TC_DT_INT4] = {"int4", "uint8_t", "int8_t", NULL, NULL, DL_INT},
    [TC_DT_INT8] = {"int8", "int8_t", "int8_t", "int8_t", "char", DL_INT},
    [TC_DT_INT16] = {"int16", "int16_t", "int16_t", "int16_t", "short", DL_INT},
    [TC_DT_INT32] = {"int32", "int32_t", "int32_t", "int", "int", DL_INT},
    [TC_DT_INT64] = {"int64", "int64_t", "int64_t", "int64_t", "long", DL_INT},
    [TC_DT_UINT4] = {"uint4", "uint8_t", "uint8_t", NULL, NULL, DL_UINT},
    [TC_DT_UINT8] = {"uint8", "uint8_t", "uint8_t", "uint8_t", "uchar", DL_UINT},
    [TC_DT_UINT16] = {"uint16", "uint16_t", "uint16_t", "uint16_t", "ushort", DL_UINT},
    [TC_DT_UINT32] = {"uint32", "uint32_t", "uint32_t", "unsigned int", "uint", DL_UINT},
    [TC_DT_UINT64] = {"uint64", "uint64_t", "uint64_t", "uint64_t", "ulong", DL_UINT},
    [TC_DT_FLOAT4_E2M1FN] = {"float4_e2m1fn", "uint8_t", "float", "__nv_fp4_e2m1", "uchar", DL_FP8(17)},
    [TC_DT_FLOAT8_E4M3FN] = {"float8_e4m3fn", "uint8_t", "float", "__nv_fp8_e4m3", "uchar", DL_FP8(10)},
    [TC_DT_FLOAT8_E5M2] = {"float8_e5m2", "uint8_t", "float", "__nv_fp8_e5m2", "uchar", DL_FP8(12)},
    [TC_DT_FLOAT8_E4M3FNUZ] = {"float8_e4m3fnuz", "uint8_t", "float", NULL, "uchar", DL_FP8(11)},
    [TC_DT_FLOAT8_E5M2FNUZ] = {"float8_e5m2fnuz", "uint8_t", "float", NULL, "uchar", DL_FP8(13)},
    [TC_DT_FLOAT8_E8M0FNU] = {"float8_e8m0fnu", "uint8_t", "float", "__nv_fp8_e8m0", "uchar", DL_FP8(14)},
    [TC_DT_FLOAT16] = {"float16", "uint16_t", "float", "half", "half", DL_FLOAT},
    [TC_DT_BFLOAT16] = {"bfloat16", "uint16_t", "float", "__nv_bfloat16", "bfloat", DL_BFLOAT},
    [TC_DT_FLOAT32] = {"float32", "float", "float", "float", "float", DL_FLOAT},
    [TC_DT_FLOAT64] = {"float64", "double", "double", "double", NULL, DL_FLOAT},
};

static const char *const tc_scalar_names[TC_DT_COUNT] = {
    [TC_DT_INVALID] = "invalid",
#define X(id, name, bits, kind, sgn) [TC_DT_##id] = name,
    TC_DTYPE_LIST(X)
#undef X
};
static const uint8_t tc_scalar_bits[TC_DT_COUNT] = {
#define X(id, name, bits, kind, sgn) [TC_DT_##id] = bits,
    TC_DTYPE_LIST(X)
#undef X
};
static const uint8_t tc_scalar_kind[TC_DT_COUNT] = {
#define X(id, name, bits, kind, sgn) [TC_DT_##id] = kind,
    TC_DTYPE_LIST(X)
#undef X
};
static const uint8_t tc_scalar_signed[TC_DT_COUNT] = {
#define X(id, name, bits, kind, sgn) [TC_DT_##id] = sgn,
    TC_DTYPE_LIST(X)
#undef X
};

/* Spellings other than the canonical names. TileLang's own string aliases (its
 * _CANONICAL_TO_DISPLAY_STR and TVM's parser) and its T.<attr> aliases differ, so each alias
 * says where it is accepted. "fp16"-style short names are tilec conveniences. */
enum { IN_STRING = 1, IN_ATTR = 2, IN_VECTOR = 4 /* also as the base of "<alias>x<lanes>" */ };
static const struct {
  const char *alias;
  uint8_t type;
  uint8_t where;
} tc_dtype_aliases[] = {
    {"float", TC_DT_FLOAT32, IN_STRING | IN_ATTR},  {"double", TC_DT_FLOAT64, IN_STRING | IN_ATTR},
    {"half", TC_DT_FLOAT16, IN_STRING | IN_ATTR},   {"int", TC_DT_INT32, IN_STRING | IN_ATTR},
    {"long", TC_DT_INT64, IN_STRING | IN_ATTR},     {"short", TC_DT_INT16, IN_STRING | IN_ATTR},
    {"uint", TC_DT_UINT32, IN_STRING | IN_ATTR},    {"ulong", TC_DT_UINT64, IN_STRING},
    {"bfloat", TC_DT_BFLOAT16, IN_STRING},          {"e4m3_float8", TC_DT_FLOAT8_E4M3FN, IN_STRING},
    {"e5m2_float8", TC_DT_FLOAT8_E5M2, IN_STRING},  {"fp16", TC_DT_FLOAT16, IN_STRING},
    {"fp32", TC_DT_FLOAT32, IN_STRING},             {"fp64", TC_DT_FLOAT64, IN_STRING},
    {"bf16", TC_DT_BFLOAT16, IN_STRING},
    /* TVM's float8_e4m3 is a separate type, but TileLang's code generators store and convert
     * it as the fn format (fp8_e4_t, __nv_fp8_e4m3) and bind torch.float8_e4m3fn tensors to
     * it, and TileLang programs write it for OCP E4M3. */
    {"float8_e4m3", TC_DT_FLOAT8_E4M3FN, IN_STRING | IN_ATTR | IN_VECTOR},
    /* TensorFloat-32 is float32 storage (torch passes float32 tensors for it) whose 10-bit
     * mantissa only NVIDIA's tensor cores see when they multiply. tilec's gemms multiply at
     * full float32 precision on every target, so the results are those of float32: never less
     * accurate than TileLang's, and the same bits in and out of memory. */
    {"tfloat32", TC_DT_FLOAT32, IN_STRING | IN_ATTR},
};
#define TC_N_ALIASES (sizeof tc_dtype_aliases / sizeof tc_dtype_aliases[0])

static tc_scalar_type code_of(tc_dtype d) {
  return d.code > TC_DT_INVALID && d.code < TC_DT_COUNT ? (tc_scalar_type)d.code : TC_DT_INVALID;
}

int tc_dtype_bits(tc_dtype d) { return tc_scalar_bits[code_of(d)]; }
tc_dtype_kind tc_dtype_kind_of(tc_dtype d) { return (tc_dtype_kind)tc_scalar_kind[code_of(d)]; }
bool tc_dtype_is_float(tc_dtype d) { return code_of(d) && tc_scalar_kind[d.code] == TC_KIND_FLOAT; }
bool tc_dtype_is_int(tc_dtype d) {
  return code_of(d) && (tc_scalar_kind[d.code] == TC_KIND_INT || tc_scalar_kind[d.code] == TC_KIND_UINT);
}
bool tc_dtype_is_signed(tc_dtype d) { return code_of(d) && tc_scalar_signed[d.code]; }
bool tc_dtype_is_bool(tc_dtype d) { return code_of(d) == TC_DT_BOOL; }

size_t tc_dtype_storage_bytes(tc_dtype d, size_t n) {
  size_t lanes = d.lanes ? d.lanes : 1;
  size_t bits = (size_t)tc_dtype_bits(d) * lanes;
  if (bits % 8 == 0) return n * (bits / 8);
  return (n * bits + 7) / 8; /* 4-bit elements, two per byte */
}

const char *tc_dtype_scalar_name(tc_scalar_type t) {
  return t > TC_DT_INVALID && t < TC_DT_COUNT ? tc_scalar_names[t] : "invalid";
}

const char *tc_dtype_display_name(tc_scalar_type t) {
  return t > TC_DT_INVALID && t < TC_DT_COUNT ? tc_dtype_table[t].display : "invalid";
}

const char *tc_dtype_name(tc_dtype d, char *buf, size_t cap) {
  if (!buf || cap == 0) return buf;
  const char *base = tc_dtype_scalar_name(code_of(d));
  if (d.lanes > 1) snprintf(buf, cap, "%sx%u", base, (unsigned)d.lanes);
  else snprintf(buf, cap, "%s", base);
  return buf;
}

static tc_scalar_type scalar_by_canonical(const char *s, size_t n) {
  for (int t = 1; t < TC_DT_COUNT; t++)
    if (strlen(tc_scalar_names[t]) == n && memcmp(tc_scalar_names[t], s, n) == 0) return (tc_scalar_type)t;
  return TC_DT_INVALID;
}

static tc_scalar_type scalar_by_alias(const char *s, size_t n, int where) {
  for (size_t i = 0; i < TC_N_ALIASES; i++)
    if ((tc_dtype_aliases[i].where & where) == where && strlen(tc_dtype_aliases[i].alias) == n &&
        memcmp(tc_dtype_aliases[i].alias, s, n) == 0)
      return (tc_scalar_type)tc_dtype_aliases[i].type;
  return TC_DT_INVALID;
}

/* Split "float16x4" into the base "float16" and lanes 4. Returns the base length, or the
 * whole length with *lanes = 1 when there is no "x<digits>" suffix. Lanes must be 1..65535
 * without leading zeros; a malformed count gives *lanes = 0. */
static size_t split_lanes(const char *s, unsigned *lanes) {
  size_t n = strlen(s), i = n;
  *lanes = 1;
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
  if (i == n || i < 2 || s[i - 1] != 'x') return n;
  size_t digits = n - i;
  if (digits > 5 || s[i] == '0') {
    *lanes = 0;
    return i - 1;
  }
  unsigned v = 0;
  for (size_t k = i; k < n; k++) v = v * 10 + (unsigned)(s[k] - '0');
  *lanes = v <= 65535 ? v : 0;
  return i - 1;
}

static bool lookup_in(const char *name, int where, tc_dtype *out, char *suggestion, size_t cap) {
  if (suggestion && cap) suggestion[0] = 0;
  if (!name) return false;
  tc_scalar_type t = scalar_by_alias(name, strlen(name), where);
  if (!t) t = scalar_by_canonical(name, strlen(name));
  if (t) {
    if (out) *out = tc_dt(t);
    return true;
  }
  unsigned lanes;
  size_t base_len = split_lanes(name, &lanes);
  if (base_len < strlen(name)) {
    t = scalar_by_canonical(name, base_len);
    if (!t) t = scalar_by_alias(name, base_len, where | IN_VECTOR);
    if (t && lanes >= 1) {
      if (out) {
        out->code = (uint8_t)t;
        out->lanes = (uint16_t)lanes;
      }
      return true;
    }
  }
  if (!suggestion || cap == 0) return false;
  /* Nearest spelling by edit distance; a lanes suffix is kept and matched on the base. */
  char base[80];
  size_t blen = base_len < sizeof base ? base_len : sizeof base - 1;
  memcpy(base, name, blen);
  base[blen] = 0;
  const char *suffix = name + base_len; /* "" or "x4" */
  bool vector = *suffix != 0;
  int limit = (int)blen / 3 > 2 ? (int)blen / 3 : 2;
  int best = limit + 1;
  const char *best_name = NULL;
  for (int k = 1; k < TC_DT_COUNT; k++) {
    int dist = tc_edit_distance(base, tc_scalar_names[k], best - 1);
    if (dist < best) best = dist, best_name = tc_scalar_names[k];
  }
  if (!vector)
    for (size_t i = 0; i < TC_N_ALIASES; i++) {
      if (!(tc_dtype_aliases[i].where & where)) continue;
      int dist = tc_edit_distance(base, tc_dtype_aliases[i].alias, best - 1);
      if (dist < best) best = dist, best_name = tc_dtype_aliases[i].alias;
    }
  if (best_name) {
    if (vector && lanes >= 1) snprintf(suggestion, cap, "%s%s", best_name, suffix);
    else snprintf(suggestion, cap, "%s", best_name);
  }
  return false;
}

bool tc_dtype_lookup(const char *name, tc_dtype *out, char *suggestion, size_t cap) {
  return lookup_in(name, IN_STRING, out, suggestion, cap);
}

bool tc_dtype_lookup_attr(const char *attr, tc_dtype *out, char *suggestion, size_t cap) {
  if (attr && strncmp(attr, "T.", 2) == 0) attr += 2;
  return lookup_in(attr, IN_ATTR, out, suggestion, cap);
}

bool tc_dtype_to_dlpack(tc_dtype d, uint8_t *code, uint8_t *bits, uint16_t *lanes) {
  tc_scalar_type t = code_of(d);
  if (!t || tc_dtype_table[t].dl_code == DL_NONE) return false;
  if (code) *code = tc_dtype_table[t].dl_code;
  if (bits) *bits = tc_scalar_bits[t];
  if (lanes) *lanes = d.lanes ? d.lanes : 1;
  return true;
}

bool tc_dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes, tc_dtype *out) {
  if (lanes == 0 || code == DL_NONE) return false;
  for (int t = 1; t < TC_DT_COUNT; t++) {
    /* Without kDLBool, bool shares (kDLUInt, 8) with uint8; that pair reads back as uint8. */
    if (t == TC_DT_BOOL && !TC_DL_HAS_BOOL) continue;
    if (tc_dtype_table[t].dl_code == code && tc_scalar_bits[t] == bits) {
      if (out) {
        out->code = (uint8_t)t;
        out->lanes = lanes;
      }
      return true;
    }
  }
  return false;
}

const char *tc_dtype_c_storage(tc_dtype d) { return tc_dtype_table[code_of(d)].c_storage; }
const char *tc_dtype_c_compute(tc_dtype d) { return tc_dtype_table[code_of(d)].c_compute; }
bool tc_dtype_is_packed4(tc_dtype d) { return code_of(d) && tc_scalar_bits[d.code] == 4; }
bool tc_dtype_is_narrow_float(tc_dtype d) {
  return tc_dtype_is_float(d) && d.code != TC_DT_FLOAT32 && d.code != TC_DT_FLOAT64;
}

/* Vector spellings that CUDA and MSL define as built-in (or cuda_fp16/bf16/fp8 header) types. */
static const struct {
  uint8_t type;
  uint8_t lanes;
  const char *cuda, *msl;
} tc_vector_names[] = {
    {TC_DT_FLOAT32, 2, "float2", "float2"},        {TC_DT_FLOAT32, 3, "float3", "float3"},
    {TC_DT_FLOAT32, 4, "float4", "float4"},        {TC_DT_FLOAT16, 2, "half2", "half2"},
    {TC_DT_FLOAT16, 3, NULL, "half3"},             {TC_DT_FLOAT16, 4, NULL, "half4"},
    {TC_DT_BFLOAT16, 2, "__nv_bfloat162", "bfloat2"}, {TC_DT_BFLOAT16, 3, NULL, "bfloat3"},
    {TC_DT_BFLOAT16, 4, NULL, "bfloat4"},          {TC_DT_FLOAT64, 2, "double2", NULL},
    {TC_DT_FLOAT64, 4, "double4", NULL},           {TC_DT_INT32, 2, "int2", "int2"},
    {TC_DT_INT32, 3, "int3", "int3"},              {TC_DT_INT32, 4, "int4", "int4"},
    {TC_DT_UINT32, 2, "uint2", "uint2"},           {TC_DT_UINT32, 3, "uint3", "uint3"},
    {TC_DT_UINT32, 4, "uint4", "uint4"},           {TC_DT_INT8, 2, "char2", "char2"},
    {TC_DT_INT8, 4, "char4", "char4"},             {TC_DT_UINT8, 2, "uchar2", "uchar2"},
    {TC_DT_UINT8, 4, "uchar4", "uchar4"},          {TC_DT_INT16, 2, "short2", "short2"},
    {TC_DT_INT16, 4, "short4", "short4"},          {TC_DT_UINT16, 2, "ushort2", "ushort2"},
    {TC_DT_UINT16, 4, "ushort4", "ushort4"},       {TC_DT_INT64, 2, "longlong2", "long2"},
    {TC_DT_FLOAT8_E4M3FN, 2, "__nv_fp8x2_e4m3", "uchar2"},
    {TC_DT_FLOAT8_E4M3FN, 4, "__nv_fp8x4_e4m3", "uchar4"},
    {TC_DT_FLOAT8_E5M2, 2, "__nv_fp8x2_e5m2", "uchar2"},
    {TC_DT_FLOAT8_E5M2, 4, "__nv_fp8x4_e5m2", "uchar4"},
};

static const char *vector_name(tc_dtype d, bool cuda) {
  for (size_t i = 0; i < sizeof tc_vector_names / sizeof tc_vector_names[0]; i++)
    if (tc_vector_names[i].type == d.code && tc_vector_names[i].lanes == d.lanes)
      return cuda ? tc_vector_names[i].cuda : tc_vector_names[i].msl;
  return NULL;
}

const char *tc_dtype_cuda_name(tc_dtype d) {
  if (d.lanes > 1) return vector_name(d, true);
  return tc_dtype_table[code_of(d)].cuda;
}

const char *tc_dtype_msl_name(tc_dtype d) {
  if (d.lanes > 1) return vector_name(d, false);
  return tc_dtype_table[code_of(d)].msl;
}
