/* compare.h: comparison of a result with a reference, for buffers whose dtype DLPack may not
 * be able to name (fp8 travels as uint8). */
#ifndef TILEC_COMPARE_H
#define TILEC_COMPARE_H
#include <stddef.h>

#include "dtype/dtype.h"
#include "tilec.h"

void tc_compare_buffers(tc_dtype dt, const void *result, const void *reference, size_t n, tilec_compare *out);

#endif
