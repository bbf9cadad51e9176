/* device.c: the backend table and device memory of the public API (tilec_backend_*,
 * tilec_device_*). Memory comes from the hooks of the target's default backend
 * (target.h: mem_alloc, mem_free, mem_copy), so a new backend's memory appears here by itself. */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "target/registry.h"
#include "util/diag.h"

size_t tilec_backend_count(void) { return tc_backend_count(); }

int tilec_backend_get(tilec_context *ctx, size_t i, tilec_backend_info *out) {
  const tc_backend *b = tc_backend_at(i);
  if (!b || !out) return 1;
  memset(out, 0, sizeof *out);
  out->target = b->target;
  out->name = b->name;
  const char *def = tc_target_default_backend(b->target);
  out->is_default = def && strcmp(def, b->name) == 0;
  out->device_type = b->device_type;
  out->has_memory = b->mem_alloc && b->mem_free && b->mem_copy;
  char why[256] = "";
  bool ok = b->available ? b->available(ctx ? &ctx->env : NULL, why, sizeof why) : false;
  if (!b->available) snprintf(why, sizeof why, "no availability check");
  if (ok && (!b->generate || !b->load || !b->launch)) {
    ok = false;
    snprintf(why, sizeof why, "no code generator yet");
  }
  if (!ok && !why[0]) snprintf(why, sizeof why, "not available");
  out->available = ok;
  snprintf(out->reason, sizeof out->reason, "%s", ok ? "" : why);
  return 0;
}

/* The backend whose memory serves `target` (its default), or NULL with err. */
static const tc_backend *memory_backend(tilec_context *ctx, const char *target, tilec_error *err) {
  if (!ctx) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_device_*: context is NULL");
    return NULL;
  }
  tc_target_spec spec;
  if (!tc_target_spec_parse(target, &spec, err)) return NULL;
  const tc_backend *b = tc_backend_resolve(&ctx->env, spec.kind, NULL, err);
  if (!b) return NULL;
  if (!b->mem_alloc || !b->mem_free || !b->mem_copy) {
    tc_error(err, TILEC_ERROR_TARGET, "target '%s' (backend '%s') has no device memory yet", b->target, b->name);
    return NULL;
  }
  return b;
}

void *tilec_device_alloc(tilec_context *ctx, const char *target, int device_id, size_t bytes, tilec_error *err) {
  const tc_backend *b = memory_backend(ctx, target, err);
  return b ? b->mem_alloc(device_id, bytes, err) : NULL;
}

void tilec_device_free(tilec_context *ctx, const char *target, int device_id, void *ptr) {
  if (!ptr) return;
  tilec_error err = {0};
  const tc_backend *b = memory_backend(ctx, target, &err);
  if (b) b->mem_free(device_id, ptr);
}

tilec_status tilec_device_copy(tilec_context *ctx, const char *target, int device_id, void *dst, const void *src,
                               size_t bytes, int direction, tilec_error *err) {
  if (direction < TILEC_COPY_HOST_TO_DEVICE || direction > TILEC_COPY_DEVICE_TO_DEVICE) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_device_copy: unknown direction %d", direction);
    return TILEC_ERROR_USAGE;
  }
  if (bytes && (!dst || !src)) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_device_copy: NULL pointer");
    return TILEC_ERROR_USAGE;
  }
  const tc_backend *b = memory_backend(ctx, target, err);
  return b ? b->mem_copy(device_id, dst, src, bytes, direction, err) : err ? err->status : TILEC_ERROR_TARGET;
}
