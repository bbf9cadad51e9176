/* cache_internal.h: what the cache's own files share (the entry format). */
#ifndef TILEC_CACHE_INTERNAL_H
#define TILEC_CACHE_INTERNAL_H
#include <stdio.h>

#include "cache/cache.h"
#include "util/diag.h"

#define TC_ENTRY_FORMAT_VERSION 1u
#define TC_ENTRY_HEADER_SIZE 128
#define TC_ENTRY_ARTIFACT_NAME "artifact"
#define TC_ENTRY_SUFFIX ".tce"
#define TC_TEMP_PREFIX ".tmp-"

/* Serialise an entry into one malloc'd file image. */
tilec_status tc_entry_encode(const tc_cache_key *key, const tc_cache_entry *e, uint8_t **out,
                             size_t *out_size, tilec_error *err);
/* Validate a file image (key NULL: any key) and point *out into buf. On failure, false with
 * the reason in why. buf is only modified transiently. */
bool tc_entry_decode(uint8_t *buf, size_t size, const tc_cache_key *key, tc_cache_entry *out,
                     char *why, size_t why_cap);

#endif
