/* registry.c: every execution backend tilec has, the explicit table of each target's default,
 * resolution of (target, backend) requests, and the report `tilec backends` prints.
 *
 * "auto" resolves through the defaults table only. The listing order of the backends carries
 * no meaning (the system tilec replaces resolved "auto" to whichever backend registered
 * first); tests resolve against reordered tables to hold this. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cpu/cpu.h"
#include "target/cuda/cuda.h"
#include "target/metal/metal.h"
#include "target/registry.h"
#include "util/diag.h"
#include "util/strbuf.h"
#include "cache/cache.h"

static const tc_backend *const k_backends[] = {
    &tc_cpu_cc_backend,
    &tc_cuda_nvrtc_backend,
    &tc_cuda_nvcc_backend,
    &tc_cuda_emu_backend,
    &tc_metal_metal_backend,
    &tc_metal_metallib_backend,
    &tc_metal_emu_backend,
};

/* The documented defaults (docs/cache.md, "Execution backends"). Metal runs on the device
 * where Metal exists (macOS) and on the emulator everywhere else. */
#ifdef __APPLE__
#define METAL_DEFAULT "metal"
#else
#define METAL_DEFAULT "emu"
#endif
static const tc_default_backend k_defaults[] = {
    {"cpu", "cc"},
    {"cuda", "nvrtc"},
    {"metal", METAL_DEFAULT},
};

static const tc_backend_table k_registry = {
    k_backends, sizeof k_backends / sizeof *k_backends,
    k_defaults, sizeof k_defaults / sizeof *k_defaults,
};

#define DEFAULT_TARGET "cpu"

const tc_backend_table *tc_backend_registry(void) { return &k_registry; }

size_t tc_backend_count(void) { return k_registry.nbackends; }

const tc_backend *tc_backend_at(size_t i) {
  return i < k_registry.nbackends ? k_registry.backends[i] : NULL;
}

const char *tc_target_default_backend(const char *target) {
  return tc_backend_table_default(&k_registry, target);
}

const tc_backend *tc_backend_resolve(const tc_backend_env *env, const char *target,
                                     const char *backend, tilec_error *err) {
  return tc_backend_resolve_in(&k_registry, env, target, backend, err);
}

char *tc_backends_report(const tc_backend_env *env) { return tc_backends_report_in(&k_registry, env); }

/* ---- table-generic ---- */
static bool is_auto(const char *s) { return !s || !*s || strcmp(s, "auto") == 0; }

const char *tc_backend_table_default(const tc_backend_table *t, const char *target) {
  if (is_auto(target)) target = DEFAULT_TARGET;
  for (size_t i = 0; i < t->ndefaults; i++)
    if (strcmp(t->defaults[i].target, target) == 0) return t->defaults[i].backend;
  return NULL;
}

static const tc_backend *find(const tc_backend_table *t, const char *target, const char *name) {
  for (size_t i = 0; i < t->nbackends; i++)
    if (strcmp(t->backends[i]->target, target) == 0 && strcmp(t->backends[i]->name, name) == 0)
      return t->backends[i];
  return NULL;
}

static bool target_known(const tc_backend_table *t, const char *target) {
  for (size_t i = 0; i < t->nbackends; i++)
    if (strcmp(t->backends[i]->target, target) == 0) return true;
  return false;
}

static bool probe(const tc_backend *b, const tc_backend_env *env, char *why, size_t cap) {
  why[0] = 0;
  if (!b->available) {
    snprintf(why, cap, "no availability check");
    return false;
  }
  bool ok = b->available(env, why, cap);
  if (!ok && !why[0]) snprintf(why, cap, "not available");
  return ok;
}

/* "cpu, cuda, metal": the distinct targets in table order. */
static void list_targets(const tc_backend_table *t, tc_strbuf *sb) {
  for (size_t i = 0; i < t->nbackends; i++) {
    bool seen = false;
    for (size_t j = 0; j < i; j++) seen |= strcmp(t->backends[j]->target, t->backends[i]->target) == 0;
    if (seen) continue;
    if (sb->len) tc_sb_puts(sb, ", ");
    tc_sb_puts(sb, t->backends[i]->target);
  }
}

/* Backends that can compile and run here ("cpu/cc, ..."), or "none". */
static void list_usable(const tc_backend_table *t, const tc_backend_env *env, tc_strbuf *sb) {
  size_t n = 0;
  char why[256];
  for (size_t i = 0; i < t->nbackends; i++) {
    const tc_backend *b = t->backends[i];
    if (!b->generate || !probe(b, env, why, sizeof why)) continue;
    tc_sb_printf(sb, "%s%s/%s", n++ ? ", " : "", b->target, b->name);
  }
  if (!n) tc_sb_puts(sb, "none");
}

const tc_backend *tc_backend_resolve_in(const tc_backend_table *t, const tc_backend_env *env,
                                        const char *target, const char *backend, tilec_error *err) {
  if (is_auto(target)) target = DEFAULT_TARGET;
  tc_strbuf sb;
  tc_sb_init(&sb);
  if (!target_known(t, target)) {
    list_targets(t, &sb);
    tc_error(err, TILEC_ERROR_USAGE, "unknown target '%s' (targets: %s)", target, tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    return NULL;
  }
  if (is_auto(backend)) {
    backend = tc_backend_table_default(t, target);
    if (!backend) {
      tc_error(err, TILEC_ERROR_INTERNAL, "target '%s' has no default backend", target);
      return NULL;
    }
  }
  const tc_backend *b = find(t, target, backend);
  if (!b) {
    for (size_t i = 0; i < t->nbackends; i++)
      if (strcmp(t->backends[i]->target, target) == 0)
        tc_sb_printf(&sb, "%s%s", sb.len ? ", " : "", t->backends[i]->name);
    tc_error(err, TILEC_ERROR_USAGE,
             "unknown backend '%s' for target '%s' (backends of %s: %s)", backend, target, target,
             tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    return NULL;
  }
  char why[256];
  bool avail = probe(b, env, why, sizeof why);
  if (!b->generate) {
    tc_error(err, TILEC_ERROR_TARGET, "target '%s' has no code generator yet (backend %s: %s)",
             target, b->name, avail ? "available here" : why);
    return NULL;
  }
  if (!avail) {
    list_usable(t, env, &sb);
    /* Name the other backends of this target with their reasons too. */
    tc_strbuf others;
    tc_sb_init(&others);
    for (size_t i = 0; i < t->nbackends; i++) {
      const tc_backend *o = t->backends[i];
      char owhy[256];
      if (o == b || strcmp(o->target, target) != 0) continue;
      if (!o->generate) snprintf(owhy, sizeof owhy, "no code generator yet");
      else if (probe(o, env, owhy, sizeof owhy)) continue; /* already among the available ones */
      tc_sb_printf(&others, "; %s/%s: %s", o->target, o->name, owhy);
    }
    tc_error(err, TILEC_ERROR_TARGET,
             "backend '%s' of target '%s' is not available: %s (available backends: %s%s)", b->name,
             target, why, tc_sb_cstr(&sb), tc_sb_cstr(&others));
    tc_sb_free(&others);
    tc_sb_free(&sb);
    return NULL;
  }
  tc_sb_free(&sb);
  return b;
}

char *tc_backends_report_in(const tc_backend_table *t, const tc_backend_env *env) {
  enum { NCOL = 5 };
  static const char *const head[NCOL] = {"target", "backend", "default", "available", "reason"};
  size_t n = t->nbackends;
  char(*reasons)[256] = calloc(n ? n : 1, sizeof *reasons);
  bool *avail = calloc(n ? n : 1, sizeof *avail);
  if (!reasons || !avail) {
    free(reasons);
    free(avail);
    return NULL;
  }
  size_t width[NCOL];
  for (int c = 0; c < NCOL; c++) width[c] = strlen(head[c]);
  for (size_t i = 0; i < n; i++) {
    const tc_backend *b = t->backends[i];
    avail[i] = probe(b, env, reasons[i], sizeof reasons[i]);
    if (avail[i]) snprintf(reasons[i], sizeof reasons[i], "%s", b->generate ? "-" : "no code generator yet");
    if (strlen(b->target) > width[0]) width[0] = strlen(b->target);
    if (strlen(b->name) > width[1]) width[1] = strlen(b->name);
  }
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_printf(&sb, "%-*s  %-*s  %-*s  %-*s  %s\n", (int)width[0], head[0], (int)width[1], head[1],
               (int)width[2], head[2], (int)width[3], head[3], head[4]);
  for (size_t i = 0; i < n; i++) {
    const tc_backend *b = t->backends[i];
    const char *def = tc_backend_table_default(t, b->target);
    tc_sb_printf(&sb, "%-*s  %-*s  %-*s  %-*s  %s\n", (int)width[0], b->target, (int)width[1],
                 b->name, (int)width[2], def && strcmp(def, b->name) == 0 ? "yes" : "no",
                 (int)width[3], avail[i] ? "yes" : "no", reasons[i]);
  }
  /* What available backends say about themselves (the device, the storage mode in force and
   * where it came from, the language version). */
  for (size_t i = 0; i < n; i++) {
    const tc_backend *b = t->backends[i];
    tc_backend_detail d[TC_BACKEND_MAX_DETAILS];
    int nd = avail[i] && b->details ? b->details(env, d) : 0;
    for (int j = 0; j < nd; j++) tc_sb_printf(&sb, "%s/%s %s: %s\n", b->target, b->name, d[j].key, d[j].value);
  }
  free(reasons);
  free(avail);
  return tc_sb_take(&sb);
}

static void json_str(tc_strbuf *sb, const char *s) {
  tc_sb_putc(sb, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') tc_sb_printf(sb, "\\%c", c);
    else if (c < 0x20) tc_sb_printf(sb, "\\u%04x", c);
    else tc_sb_putc(sb, (char)c);
  }
  tc_sb_putc(sb, '"');
}

char *tc_backends_report_json_in(const tc_backend_table *t, const tc_backend_env *env) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_puts(&sb, "{\"backends\": [");
  for (size_t i = 0; i < t->nbackends; i++) {
    const tc_backend *b = t->backends[i];
    char why[256];
    bool avail = probe(b, env, why, sizeof why);
    const char *def = tc_backend_table_default(t, b->target);
    tc_sb_puts(&sb, i ? ",\n  {\"target\": " : "\n  {\"target\": ");
    json_str(&sb, b->target);
    tc_sb_puts(&sb, ", \"backend\": ");
    json_str(&sb, b->name);
    tc_sb_printf(&sb, ", \"default\": %s, \"available\": %s, \"reason\": ", def && strcmp(def, b->name) == 0 ? "true" : "false",
                 avail ? "true" : "false");
    if (avail) tc_sb_puts(&sb, "null");
    else json_str(&sb, why);
    tc_sb_printf(&sb, ", \"disk_cache\": %s", tc_cache_disk_allowed(b) ? "true" : "false");
    tc_backend_detail d[TC_BACKEND_MAX_DETAILS];
    int nd = avail && b->details ? b->details(env, d) : 0;
    for (int j = 0; j < nd; j++) {
      tc_sb_puts(&sb, ", ");
      json_str(&sb, d[j].key);
      tc_sb_puts(&sb, ": ");
      json_str(&sb, d[j].value);
    }
    tc_sb_putc(&sb, '}');
  }
  tc_sb_puts(&sb, "\n]}\n");
  return tc_sb_take(&sb);
}

char *tc_backends_report_json(const tc_backend_env *env) { return tc_backends_report_json_in(&k_registry, env); }
