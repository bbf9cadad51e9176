/* compile_cache.h: emit + build + load of a lowered kernel, through the context's
 * in-memory cache and the disk cache. Sets kern->module and
 * kern->cache_status. */
#ifndef TILEC_COMPILE_CACHE_H
#define TILEC_COMPILE_CACHE_H

#include "api.h"

struct tc_context_caches;
void tc_context_caches_destroy(struct tc_context_caches *c);
bool tc_compile_cached(tilec_kernel *kern, const tilec_compile_options *opts, tilec_error *err);
/* Canonical text of a kernel's parameter list (kern->ir and kern->params): part of an entry. */
char *tc_kernel_params_text(const tilec_kernel *kern);
/* tilec_compile_artifact's generate + build of a lowered kernel behind the disk cache (keys of
 * their own, never shared with runs); `status` as a kernel's cache status. */
tilec_status tc_artifact_cached(tilec_context *ctx, const tilec_compile_options *opts, const tc_backend_env *env,
                                const tc_backend *be, tc_lowered *lw, const char *ptext, const char *src_name,
                                tc_generated *gen, void **artifact, size_t *size, const char **status, tilec_error *err);

#endif
