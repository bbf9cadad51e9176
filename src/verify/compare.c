/* compare.c: verification of a result tensor against the reference.
 *
 * An element passes when |out - ref| <= atol + rtol * |ref|, where atol = atol_scale * max|ref|
 * (so the bound follows the tensor's magnitude: a GEMM over a long K has proportionally larger
 * rounding noise) plus a tiny absolute floor. NaN must match NaN and infinities must match
 * exactly. Integer and bool tensors must match exactly. The tensor also needs a cosine
 * similarity of at least min_cosine. Tolerances per dtype are in tolerance_for() and docs/verify.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "tilec.h"
#include "util/diag.h"
#include "verify/compare.h"

typedef struct tolerance {
  double rtol, atol_scale, min_cosine;
} tolerance;

static tolerance tolerance_for(tc_dtype dt) {
  tolerance t = {0, 0, 1};
  switch (dt.code) {
  case TC_DT_FLOAT64: t = (tolerance){1e-9, 1e-9, 1 - 1e-9}; break;
  case TC_DT_FLOAT32: t = (tolerance){1e-4, 1e-4, 1 - 1e-6}; break;
  case TC_DT_FLOAT16: t = (tolerance){1e-2, 1e-2, 1 - 1e-4}; break;
  case TC_DT_BFLOAT16: t = (tolerance){5e-2, 5e-2, 1 - 1e-3}; break;
  case TC_DT_FLOAT8_E4M3FN:
  case TC_DT_FLOAT8_E4M3FNUZ: t = (tolerance){1.5e-1, 1.5e-1, 0.99}; break;
  case TC_DT_FLOAT8_E5M2:
  case TC_DT_FLOAT8_E5M2FNUZ: t = (tolerance){3e-1, 3e-1, 0.98}; break;
  case TC_DT_FLOAT8_E8M0FNU: t = (tolerance){1.0, 1.0, 0.9}; break;
  case TC_DT_FLOAT4_E2M1FN: t = (tolerance){5e-1, 5e-1, 0.9}; break;
  default: t = (tolerance){0, 0, 0}; break; /* integers and bool: exact */
  }
  return t;
}

bool tc_compare_is_fp8(tc_dtype dt) { return tc_dtype_is_float(dt) && tc_dtype_bits(dt) <= 8; }

/* Hopper's fp8 wgmma keeps about 13 mantissa bits while it adds products (measured on the H200:
 * a float32 result of K = 1024 differs from the exact sum by up to 8e-4 of the largest
 * element); docs/verify.md */
static const tolerance fp8_accumulation = {1e-3, 2e-3, 1 - 1e-5};

void tc_compare_buffers(tc_dtype dt, tc_dtype through, bool fp8_products, const void *result, const void *reference, size_t n,
                        tilec_compare *out) {
  memset(out, 0, sizeof *out);
  tolerance tol = tolerance_for(dt);
  /* rounded through a narrower float inside the kernel: its unit in the last place is the noise
   * floor (analysis/rounding.c) */
  if (tc_dtype_is_float(dt) && tc_dtype_valid(through) && tc_dtype_is_float(through) && tolerance_for(through).rtol > tol.rtol)
    tol = tolerance_for(through);
  if (fp8_products && tc_dtype_is_float(dt) && tol.atol_scale < fp8_accumulation.atol_scale) tol = fp8_accumulation;
  out->rtol = tol.rtol;
  double max_ref = 0;
  for (size_t i = 0; i < n; i++) {
    double r = tc_dtype_load_f64(dt, reference, i);
    if (isfinite(r) && fabs(r) > max_ref) max_ref = fabs(r);
  }
  double atol = tol.atol_scale * max_ref + (tol.atol_scale > 0 ? 1e-30 : 0);
  out->atol = atol;
  double dot = 0, na = 0, nb = 0, best_a = -INFINITY, best_b = -INFINITY;
  size_t arg_a = 0, arg_b = 0;
  bool ok = true;
  double rel_floor = max_ref * 1e-3 > 1e-30 ? max_ref * 1e-3 : 1e-30;
  for (size_t i = 0; i < n; i++) {
    double a = tc_dtype_load_f64(dt, result, i), b = tc_dtype_load_f64(dt, reference, i);
    if (isnan(a) || isnan(b)) {
      if (isnan(a) != isnan(b)) out->nan_mismatch++, ok = false;
      continue;
    }
    if (isinf(a) || isinf(b)) {
      if (a != b) out->nan_mismatch++, ok = false;
      continue;
    }
    double d = fabs(a - b);
    if (d > out->max_abs_err) out->max_abs_err = d;
    double rel = d / (fabs(b) > rel_floor ? fabs(b) : rel_floor);
    if (rel > out->max_rel_err) out->max_rel_err = rel;
    if (d > atol + tol.rtol * fabs(b)) ok = false;
    dot += a * b;
    na += a * a;
    nb += b * b;
    if (a > best_a) best_a = a, arg_a = i;
    if (b > best_b) best_b = b, arg_b = i;
  }
  if (na == 0 && nb == 0) out->cosine = 1;
  else if (na == 0 || nb == 0) out->cosine = 0;
  else out->cosine = dot / (sqrt(na) * sqrt(nb));
  if (out->cosine > 1) out->cosine = 1;
  out->argmax_match = arg_a == arg_b;
  if (tol.min_cosine > 0 && n > 0 && out->cosine < tol.min_cosine) ok = false;
  out->ok = ok;
}

/* ---- outputs whose order along some dimensions the schedule decides (analysis/order.c) ---- */

typedef struct keyed {
  double v;
  size_t at; /* flat index of the element */
} keyed;

static int by_value(const void *x, const void *y) { /* NaN last */
  double a = ((const keyed *)x)->v, b = ((const keyed *)y)->v;
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

/* The flat index of element j of group g: g counts the dimensions outside mask, j those in it,
 * both row-major. */
static size_t flat_index(int ndim, const int64_t *shape, unsigned mask, size_t g, size_t j) {
  size_t flat = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    size_t *k = (mask >> d) & 1 ? &j : &g, ext = (size_t)shape[d];
    flat += (*k % ext) * stride;
    *k /= ext;
    stride *= ext;
  }
  return flat;
}

/* src with the values of each group (gsize elements along the dimensions of mask) sorted, into
 * dst; elements are esize bytes. */
static void sort_groups(tc_dtype dt, const void *src, void *dst, int ndim, const int64_t *shape, unsigned mask, size_t n, size_t gsize,
                        size_t esize, keyed *scratch) {
  for (size_t g = 0; gsize && g < n / gsize; g++) {
    for (size_t j = 0; j < gsize; j++) {
      scratch[j].at = flat_index(ndim, shape, mask, g, j);
      scratch[j].v = tc_dtype_load_f64(dt, src, scratch[j].at);
    }
    qsort(scratch, gsize, sizeof *scratch, by_value);
    for (size_t j = 0; j < gsize; j++)
      memcpy((char *)dst + flat_index(ndim, shape, mask, g, j) * esize, (const char *)src + scratch[j].at * esize, esize);
  }
}

bool tc_compare_buffers_unordered(tc_dtype dt, tc_dtype through, bool fp8_products, const void *result, const void *reference, int ndim,
                                  const int64_t *shape, unsigned mask, tilec_compare *out) {
  size_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (size_t)shape[d];
  if (ndim < 32) mask &= (1u << ndim) - 1;
  if (!mask || tc_dtype_bits(dt) < 8 || n == 0) {
    tc_compare_buffers(dt, through, fp8_products, result, reference, n, out);
    return true;
  }
  size_t esize = (size_t)tc_dtype_bits(dt) / 8, gsize = 1;
  for (int d = 0; d < ndim; d++)
    if ((mask >> d) & 1) gsize *= (size_t)shape[d];
  char *a = malloc(n * esize), *b = malloc(n * esize);
  keyed *scratch = malloc(gsize * sizeof *scratch);
  bool ok = a && b && scratch;
  if (ok) {
    sort_groups(dt, result, a, ndim, shape, mask, n, gsize, esize, scratch);
    sort_groups(dt, reference, b, ndim, shape, mask, n, gsize, esize, scratch);
    tc_compare_buffers(dt, through, fp8_products, a, b, n, out);
  }
  free(a);
  free(b);
  free(scratch);
  return ok;
}

tilec_status tilec_compare_tensors(const DLTensor *result, const DLTensor *reference, tilec_compare *out,
                                   tilec_error *err) {
  return tilec_compare_tensors_as(result, reference, NULL, out, err);
}

tilec_status tilec_compare_tensors_as(const DLTensor *result, const DLTensor *reference, const char *through_name,
                                      tilec_compare *out, tilec_error *err) {
  return tilec_compare_output(result, reference, through_name, 0, out, err);
}

tilec_status tilec_compare_output(const DLTensor *result, const DLTensor *reference, const char *through_name,
                                  unsigned unordered_dims, tilec_compare *out, tilec_error *err) {
  if (!result || !reference || !out) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compare_tensors: NULL argument");
    return TILEC_ERROR_USAGE;
  }
  memset(out, 0, sizeof *out);
  if (result->ndim != reference->ndim ||
      (result->ndim > 0 && memcmp(result->shape, reference->shape, sizeof(int64_t) * (size_t)result->ndim) != 0)) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compare_tensors: shapes differ");
    return TILEC_ERROR_USAGE;
  }
  if (memcmp(&result->dtype, &reference->dtype, sizeof result->dtype) != 0) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compare_tensors: dtypes differ");
    return TILEC_ERROR_USAGE;
  }
  if (result->device.device_type != kDLCPU || reference->device.device_type != kDLCPU) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compare_tensors: tensors must be on the host");
    return TILEC_ERROR_USAGE;
  }
  tc_dtype dt;
  if (!tc_dtype_from_dlpack(result->dtype.code, result->dtype.bits, result->dtype.lanes, &dt)) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compare_tensors: unsupported dtype");
    return TILEC_ERROR_USAGE;
  }
  tc_dtype through = tc_dt(TC_DT_INVALID);
  if (through_name && !tc_dtype_lookup(through_name, &through, NULL, 0)) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compare_output: unknown dtype '%s'", through_name);
    return TILEC_ERROR_USAGE;
  }
  if (!tc_compare_buffers_unordered(dt, through, false, (const char *)result->data + result->byte_offset,
                                    (const char *)reference->data + reference->byte_offset, result->ndim, result->shape,
                                    unordered_dims, out)) {
    tc_error(err, TILEC_ERROR_NOMEM, "tilec_compare_output: out of memory sorting along the unordered dimensions");
    return TILEC_ERROR_NOMEM;
  }
  return TILEC_OK;
}
