/* compile_cache.h: codegen + build + load of a lowered kernel, through the context's
 * in-memory cache and the disk cache. Sets kern->gen, kern->mod and kern->cache_status. */
#ifndef TILEC_COMPILE_CACHE_H
#define TILEC_COMPILE_CACHE_H

#include "api.h"

bool tc_compile_cached(tilec_kernel *kern, const tilec_compile_options *opts, tilec_error *err);

#endif
