/* compare.h: comparison of a result with a reference, for buffers whose dtype DLPack may not
 * be able to name (fp8 travels as uint8). */
#ifndef TILEC_COMPARE_H
#define TILEC_COMPARE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype/dtype.h"
#include "tilec.h"

/* fp8_products: the result came from a GPU kernel that reads 8-bit float tensors, whose tensor
 * cores accumulate fp8 products with fewer bits than float32 (as cuBLASLt's fast accumulation
 * does); a result wider than that then gets at least that accumulation's tolerance. */
/* through: the narrowest float dtype the result was rounded through inside the kernel
 * (tilec_param_info.rounds_through; TC_DT_INVALID for none), whose tolerance applies when it is
 * looser than dt's. */
void tc_compare_buffers(tc_dtype dt, tc_dtype through, bool fp8_products, const void *result, const void *reference, size_t n,
                        tilec_compare *out);
/* The same for a tensor of ndim dimensions (shape), whose values along the dimensions in mask
 * are compared as multisets: both sides sorted along them first (analysis/order.c). Returns
 * false when out of memory (out untouched). */
bool tc_compare_buffers_unordered(tc_dtype dt, tc_dtype through, bool fp8_products, const void *result, const void *reference, int ndim,
                                  const int64_t *shape, unsigned mask, tilec_compare *out);
/* Whether dt is an 8-bit (or narrower) float, for fp8_products. */
bool tc_compare_is_fp8(tc_dtype dt);

#endif
