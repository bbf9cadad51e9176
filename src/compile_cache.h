/* compile_cache.h: emit + build + load of a lowered kernel, through the context's
 * in-memory cache and the disk cache. Sets kern->module and
 * kern->cache_status. */
#ifndef TILEC_COMPILE_CACHE_H
#define TILEC_COMPILE_CACHE_H

#include "api.h"

struct tc_context_caches;
void tc_context_caches_destroy(struct tc_context_caches *c);
bool tc_compile_cached(tilec_kernel *kern, const tilec_compile_options *opts, tilec_error *err);

#endif
