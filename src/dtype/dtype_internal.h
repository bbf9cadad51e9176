/* dtype_internal.h: what the dtype files share and nobody else needs. */
#ifndef TILEC_DTYPE_INTERNAL_H
#define TILEC_DTYPE_INTERNAL_H

#include "dtype/dtype.h"

/* float32 bits x to narrow float type t, rounding to nearest even; the branch-free code of
 * dtype_bulk.c for one element. 0 for a type that is not a narrow float. */
uint32_t tc_dtype_encode_f32_bits(tc_scalar_type t, uint32_t x, bool saturate);

#endif
