/* admin.c: the backend listing and the kernel cache's maintenance commands. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "cache/cache.h"

char *tilec_backends_report(tilec_context *ctx) { return ctx ? tc_backends_report(&ctx->env) : NULL; }

char *tilec_backends_report_for(tilec_context *ctx, const char *target, int json, tilec_error *err) {
  if (!ctx) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_backends_report_for: context is NULL");
    return NULL;
  }
  tc_backend_env env = ctx->env;
  if (target && *target) { /* its options reach the backends' details (metal: storage_mode) */
    tc_target_spec spec;
    const tc_target *t;
    if (!tc_target_spec_parse(target, &spec, err) || !(t = tc_target_find(spec.kind, err)) ||
        !tc_target_describe(t, &spec, &env.desc, err))
      return NULL;
  }
  char *r = json ? tc_backends_report_json(&env) : tc_backends_report(&env);
  if (!r) tc_error(err, TILEC_ERROR_NOMEM, "out of memory listing the backends");
  return r;
}

static tc_disk_cache *open_for_admin(tilec_context *ctx, tilec_error *err) {
  /* Administration works on the directory even when caching is disabled for compiles. */
  return tc_disk_cache_open(ctx->cache_dir, 0, err);
}

char *tilec_cache_dir(tilec_context *ctx, tilec_error *err) {
  if (!ctx) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_cache_dir: no context");
    return NULL;
  }
  if (ctx->flags & TILEC_CONTEXT_NO_DISK_CACHE) {
    tc_error(err, TILEC_ERROR_USAGE, "the disk cache is disabled for this context");
    return NULL;
  }
  tc_disk_cache *dc = open_for_admin(ctx, err);
  if (!dc) return NULL;
  char *dir = strdup(tc_disk_cache_dir(dc));
  tc_disk_cache_close(dc);
  if (!dir) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  return dir;
}

tilec_status tilec_cache_report(tilec_context *ctx, const char *what, char **out, tilec_error *err) {
  if (!ctx || !what || !out) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_cache_report: NULL argument");
    return TILEC_ERROR_USAGE;
  }
  *out = NULL;
  bool ls = strcmp(what, "ls") == 0;
  if (!ls && strcmp(what, "stats") != 0) {
    tc_error(err, TILEC_ERROR_USAGE, "unknown cache report '%s' (use ls or stats)", what);
    return TILEC_ERROR_USAGE;
  }
  tc_disk_cache *dc = open_for_admin(ctx, err);
  if (!dc) return err ? err->status : TILEC_ERROR_NOMEM;
  tc_cache_listing l;
  tilec_status st = tc_disk_cache_list(dc, ls, &l, err);
  if (st != TILEC_OK) {
    tc_disk_cache_close(dc);
    return st;
  }
  tc_strbuf sb;
  tc_sb_init(&sb);
  if (ls) {
    for (size_t i = 0; i < l.count; i++) {
      const tc_cache_listing_entry *e = &l.entries[i];
      time_t t = (time_t)(e->last_use_ns / 1000000000);
      struct tm tm;
      char when[32];
      strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
      tc_sb_printf(&sb, "%.16s  %10" PRIu64 "  %s  %s%s\n", e->key_hex, e->size, when,
                   e->description ? e->description : "", e->valid ? "" : " [invalid]");
    }
  } else {
    char why[600];
    const char *enabled = (ctx->flags & TILEC_CONTEXT_NO_DISK_CACHE) ? "no (TILEC_DISABLE_CACHE)"
                          : !tc_disk_cache_enabled(dc)                ? "no (see the warning)"
                          : tc_disk_cache_writable(dc, why, sizeof why) ? "yes"
                                                                        : NULL;
    tc_sb_printf(&sb, "directory: %s\nentries: %zu\nbytes: %" PRIu64 "\nlimit: %" PRIu64 " bytes\ntemp files: %zu (%" PRIu64 " bytes)\n",
                 tc_disk_cache_dir(dc), l.count, l.total_bytes, tc_disk_cache_max_bytes(dc), l.temp_files, l.temp_bytes);
    if (enabled) tc_sb_printf(&sb, "enabled: %s\n", enabled);
    else tc_sb_printf(&sb, "enabled: read-only (%s; entries are read, new kernels are not stored)\n", why);
  }
  tc_cache_listing_free(&l);
  tc_disk_cache_close(dc);
  *out = tc_sb_take(&sb);
  if (!*out) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  return TILEC_OK;
}

tilec_status tilec_cache_clear(tilec_context *ctx, size_t *removed, tilec_error *err) {
  if (!ctx) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_cache_clear: NULL context");
    return TILEC_ERROR_USAGE;
  }
  size_t n = 0;
  tc_disk_cache *dc = open_for_admin(ctx, err);
  if (!dc) return err ? err->status : TILEC_ERROR_NOMEM;
  tilec_status st = tc_disk_cache_clear(dc, &n, err);
  tc_disk_cache_close(dc);
  if (removed) *removed = n;
  return st;
}
