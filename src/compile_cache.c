/* compile_cache.c: the last three pipeline stages (emit, build, load) behind the caches:
 * the context's in-memory cache of loaded modules, then the disk cache of artifacts.
 *
 * The key covers everything that changes the artifact (cache/cache.h): the canonical IR after
 * binding and all the passes (so editing a comment still hits, and symbolic dimensions stay
 * symbolic), the bindings, the target, its arch and the backend, and the toolchain. A disk
 * entry carries the generated source and the parameter list; a hit whose parameter list does
 * not match the kernel is treated as a miss and replaced. */
#include "compile_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

#ifndef TILEC_BUILD_ID
#define TILEC_BUILD_ID "unknown" /* builds outside the Makefile */
#endif

typedef struct toolchain_memo {
  const tc_backend *backend;
  char *id;
} toolchain_memo;

struct tc_context_caches {
  tc_disk_cache *disk; /* NULL when disabled for the context */
  tc_mem_cache *mem;   /* NULL when disabled for the context */
  int ntool;
  toolchain_memo tool[8];
};

void tc_context_caches_destroy(struct tc_context_caches *c) {
  if (!c) return;
  tc_mem_cache_destroy(c->mem);
  tc_disk_cache_close(c->disk);
  for (int i = 0; i < c->ntool; i++) free(c->tool[i].id);
  free(c);
}

/* Create the caches on first use (the disk cache reads the environment and makes a dir). */
static struct tc_context_caches *context_caches(tilec_context *ctx, tilec_error *err) {
  pthread_mutex_lock(&ctx->mu);
  struct tc_context_caches *c = ctx->caches;
  if (!c) {
    c = calloc(1, sizeof *c);
    if (c) {
      if (!(ctx->flags & TILEC_CONTEXT_NO_MEMORY_CACHE))
        c->mem = tc_mem_cache_create(tc_module_retain, tc_module_release, 256);
      unsigned dflags = (ctx->flags & TILEC_CONTEXT_NO_DISK_CACHE) ? TC_DISK_CACHE_DISABLE : 0;
      c->disk = tc_disk_cache_open(ctx->cache_dir, dflags, err);
      if (!c->disk && err && err->status != TILEC_OK) {
        tc_context_caches_destroy(c);
        c = NULL;
      } else {
        ctx->caches = c;
        char *w = c->disk ? tc_disk_cache_take_warning(c->disk) : NULL;
        if (w) tc_warn(&ctx->warnings, "%s", w);
        free(w);
      }
    } else {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory creating the kernel cache");
    }
  }
  pthread_mutex_unlock(&ctx->mu);
  return c;
}

static const char *memo_find(const struct tc_context_caches *c, const tc_backend *be) {
  for (int i = 0; i < c->ntool; i++)
    if (c->tool[i].backend == be) return c->tool[i].id;
  return NULL;
}

/* The backend's toolchain identity, computed once per context (it may run the compiler). */
static char *toolchain_id(tilec_context *ctx, struct tc_context_caches *c, const tc_backend_env *env,
                          const tc_backend *be, tilec_error *err) {
  char *id = NULL;
  pthread_mutex_lock(&ctx->mu);
  const char *memo = memo_find(c, be);
  if (memo) id = strdup(memo);
  pthread_mutex_unlock(&ctx->mu);
  if (memo) return id;
  /* Computed outside the lock (it may stat or run the compiler); threads that race here compute
   * the same text, and only the first stores it. */
  id = be->toolchain_id ? be->toolchain_id(env, err) : strdup("none");
  if (!id) return NULL;
  pthread_mutex_lock(&ctx->mu);
  if (!memo_find(c, be) && c->ntool < (int)(sizeof c->tool / sizeof c->tool[0])) {
    c->tool[c->ntool].backend = be;
    c->tool[c->ntool].id = strdup(id);
    if (c->tool[c->ntool].id) c->ntool++;
  }
  pthread_mutex_unlock(&ctx->mu);
  return id;
}

/* Canonical text of the parameter list: what a cache entry must agree with. */
char *tc_kernel_params_text(const tilec_kernel *kern) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  for (int i = 0; i < kern->ir->nparams; i++) {
    const tilec_param_info *p = &kern->params[i].info;
    tc_sb_printf(&sb, "%s %s%s [", p->name, p->dtype, p->is_output ? " out" : "");
    for (int d = 0; d < p->ndim; d++) {
      if (p->shape[d] >= 0) tc_sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)p->shape[d]);
      else tc_sb_printf(&sb, "%s%s", d ? ", " : "", p->dims[d] ? p->dims[d] : "?");
    }
    tc_sb_puts(&sb, "]\n");
  }
  return tc_sb_take(&sb);
}

static int cmp_define(const void *a, const void *b) {
  const tilec_define *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->value, y->value);
}

/* The bindings, sorted; sizes of symbolic dimensions are left out, since they bind at launch
 * and a kernel compiled for one size serves every size. */
static char *defines_text(const tilec_compile_options *opts, const tc_kernel_ir *k) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tilec_define *sorted = NULL;
  if (opts->num_defines) {
    sorted = malloc(sizeof *sorted * opts->num_defines);
    if (!sorted) return NULL;
    memcpy(sorted, opts->defines, sizeof *sorted * opts->num_defines);
    qsort(sorted, opts->num_defines, sizeof *sorted, cmp_define);
  }
  for (size_t i = 0; i < opts->num_defines; i++) {
    bool symbolic = false;
    for (int s = 0; s < k->nsyms; s++) symbolic |= strcmp(k->syms[s]->name, sorted[i].name) == 0;
    if (!symbolic) tc_sb_printf(&sb, "%s=%s\n", sorted[i].name, sorted[i].value);
  }
  free(sorted);
  tc_sb_puts(&sb, "");
  return tc_sb_take(&sb);
}

static char *dup_section(const tc_cache_entry *e, const char *name) {
  const tc_cache_section *s = tc_cache_entry_section(e, name);
  return s ? strndup(s->data, s->size) : NULL;
}

/* A disk entry -> a loaded module, or NULL when the entry does not fit this kernel. */
static tc_module *module_from_entry(tilec_kernel *kern, const tc_cache_entry *e, const char *ptext, tilec_error *err) {
  const tc_cache_section *ps = tc_cache_entry_section(e, "params");
  if (!ps || ps->size != strlen(ptext) || memcmp(ps->data, ptext, ps->size) != 0) return NULL;
  tc_module *m = tc_module_new(kern->backend);
  if (!m) return NULL;
  m->gen.kernel_source = dup_section(e, "kernel_source");
  m->gen.full_source = dup_section(e, "full_source");
  tilec_error lerr = {0};
  if (!m->gen.kernel_source || !m->gen.full_source ||
      kern->backend->load(&kern->env, kern->ir, &m->gen, e->artifact, e->artifact_size, &m->mod, &lerr) != TILEC_OK) {
    (void)err; /* a bad artifact is a miss, not a failure: the caller rebuilds it */
    tc_module_release(m);
    return NULL;
  }
  return m;
}

static tc_module *build_module(tilec_kernel *kern, void **artifact, size_t *artifact_size, tilec_error *err) {
  const tc_backend *be = kern->backend;
  const tc_backend_env *env = &kern->env;
  tc_module *m = tc_module_new(be);
  if (!m) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory compiling '%s'", kern->ir->name);
    return NULL;
  }
  *artifact = NULL;
  *artifact_size = 0;
  if (be->generate(&kern->lowered, &m->gen, err) != TILEC_OK ||
      (be->build && be->build(env, &m->gen, artifact, artifact_size, err) != TILEC_OK) ||
      be->load(env, kern->ir, &m->gen, *artifact, *artifact_size, &m->mod, err) != TILEC_OK) {
    free(*artifact);
    *artifact = NULL;
    tc_module_release(m);
    return NULL;
  }
  return m;
}

/* The key: the arch, and every target option that changes the generated code (a planted bug
 * too: a kernel built with one must never be served to a compile without it). A build without a
 * device (`tilec compile`) has keys of its own: its lowering may take limits from the arch table
 * where a run takes them from the device, so neither is served to the other. */
static void compute_key(const tc_backend_env *env, const tc_backend *be, const char *ir_text, const char *dtext,
                        const char *tool, bool build_only, tc_cache_key *key) {
  char arch_id[96];
  snprintf(arch_id, sizeof arch_id, "%s%s%s+plant%d%s", env->desc.arch, env->desc.clusters == 1 ? "+clusters" : "",
           env->desc.streamk == 1 ? "+streamk" : "", env->desc.plant, build_only ? "+build-only" : "");
  tc_cache_key_input in = {TILEC_VERSION_STRING "+" TILEC_BUILD_ID, ir_text, dtext, be->target, arch_id, be->name, tool};
  tc_cache_key_compute(&in, key);
}

/* Store a built artifact with the sections a hit needs; false (with a warning in the context)
 * when the disk cache could not keep it. */
static bool store_entry(tilec_context *ctx, struct tc_context_caches *c, const tc_backend *be, const tc_cache_key *key,
                        const char *kname, const char *src_name, const char *ptext, const tc_generated *gen,
                        const char *ir_text, void *artifact, size_t artifact_size) {
  char desc[512];
  snprintf(desc, sizeof desc, "%s (%s/%s) from %s", kname, be->target, be->name, src_name ? src_name : "?");
  tc_cache_entry e = {0};
  e.artifact = artifact;
  e.artifact_size = artifact_size;
  const char *names[] = {"description", "params", "kernel_source", "full_source", "ir"};
  const char *vals[] = {desc, ptext, gen->kernel_source, gen->full_source, ir_text};
  for (int i = 0; i < 5; i++) {
    e.sections[i].name = names[i];
    e.sections[i].data = vals[i] ? vals[i] : "";
    e.sections[i].size = vals[i] ? strlen(vals[i]) : 0;
  }
  e.nsections = 5;
  tilec_error perr = {0};
  bool stored = false;
  if (tc_disk_cache_put(c->disk, be, key, &e, &perr) != TILEC_OK) tc_warn(&ctx->warnings, "kernel cache: %s", perr.message);
  else stored = tc_disk_cache_enabled(c->disk); /* a write fault switches the cache off */
  char *w = tc_disk_cache_take_warning(c->disk);
  if (w) tc_warn(&ctx->warnings, "%s", w);
  free(w);
  return stored;
}

bool tc_compile_cached(tilec_kernel *kern, const tilec_compile_options *opts, tilec_error *err) {
  tilec_context *ctx = kern->ctx;
  const tc_backend *be = kern->backend;
  bool use_cache = !(opts->flags & TILEC_COMPILE_NO_CACHE);
  struct tc_context_caches *c = use_cache ? context_caches(ctx, err) : NULL;
  if (use_cache && !c) return false;
  bool mem_on = c && c->mem, disk_on = c && c->disk && tc_disk_cache_enabled(c->disk) && tc_cache_disk_allowed(be);
  void *artifact = NULL;
  size_t artifact_size = 0;
  if (!mem_on && !disk_on) {
    kern->cache_status = "off";
    kern->module = build_module(kern, &artifact, &artifact_size, err);
    free(artifact);
    return kern->module != NULL;
  }

  /* key */
  bool ok = false;
  tc_strbuf irs;
  tc_sb_init(&irs);
  tc_ir_print_kernel(&irs, kern->ir);
  char *ir_text = tc_sb_take(&irs), *ptext = tc_kernel_params_text(kern), *dtext = defines_text(opts, kern->ir);
  char *tool = toolchain_id(ctx, c, &kern->env, be, err);
  if (!ir_text || !ptext || !dtext || !tool) {
    if (err && err->status == TILEC_OK) tc_error(err, TILEC_ERROR_NOMEM, "out of memory computing the cache key");
    goto done;
  }
  tc_cache_key key;
  compute_key(&kern->env, be, ir_text, dtext, tool, false, &key);

  /* 1. this context already loaded it */
  if (mem_on && (kern->module = tc_mem_cache_get(c->mem, &key)) != NULL) {
    kern->cache_status = "hit";
    ok = true;
    goto done;
  }
  /* 2. the disk has it */
  if (disk_on) {
    tc_cache_entry e = {0};
    char why[256];
    tc_cache_result r = tc_disk_cache_get(c->disk, be, &key, &e, why, sizeof why);
    if (r == TC_CACHE_HIT) {
      kern->module = module_from_entry(kern, &e, ptext, err);
      tc_cache_entry_release(&e);
      if (kern->module) kern->cache_status = "hit";
      else snprintf(why, sizeof why, "its code does not load");
    }
    if (r == TC_CACHE_HIT && !kern->module) { /* a valid file whose code does not load: damaged too */
      char unlink_why[128];
      if (!tc_disk_cache_remove_why(c->disk, &key, unlink_why, sizeof unlink_why)) {
        size_t n = strlen(why);
        snprintf(why + n, sizeof why - n, "; removing it failed: %s", unlink_why);
        r = TC_CACHE_INVALID_KEPT;
      } else {
        r = TC_CACHE_INVALID;
      }
    }
    /* A damaged entry is removed and rebuilt; say so, and say when it could not be removed (a
     * read-only directory): it then stays, and every run rebuilds the kernel. The context keeps
     * the first warning. */
    if (r == TC_CACHE_INVALID)
      tc_warn(&ctx->warnings, "kernel cache: the entry for '%s' in %s was damaged (%s); it was removed and is rebuilt",
              kern->ir->name, tc_disk_cache_dir(c->disk), why[0] ? why : "invalid");
    else if (r == TC_CACHE_INVALID_KEPT)
      tc_warn(&ctx->warnings,
              "kernel cache: the entry for '%s' in %s is damaged (%s), so it is still there; the kernel is "
              "rebuilt now, and on every run until the entry is deleted from a writable directory",
              kern->ir->name, tc_disk_cache_dir(c->disk), why);
  }
  /* 3. compile, and store */
  if (!kern->module) {
    kern->module = build_module(kern, &artifact, &artifact_size, err);
    if (!kern->module) goto done;
    /* "miss": compiled now and stored on disk (or memory only, by design); "miss-not-stored":
     * the disk cache should have kept it but could not (the warning says why). */
    bool stored = !(c->disk && !tc_disk_cache_off_by_choice(c->disk) && tc_cache_disk_allowed(be));
    if (disk_on && artifact)
      stored = store_entry(ctx, c, be, &key, kern->ir->name, kern->prog->src.name, ptext, &kern->module->gen, ir_text,
                           artifact, artifact_size);
    kern->cache_status = stored ? "miss" : "miss-not-stored";
  }
  if (mem_on) {
    tc_module *shared = tc_mem_cache_insert(c->mem, &key, kern->module);
    if (shared != kern->module) {
      tc_module_release(kern->module);
      kern->module = shared;
    }
  }
  ok = true;
done:
  free(artifact);
  free(ir_text);
  free(ptext);
  free(dtext);
  free(tool);
  return ok;
}

/* tilec_compile_artifact's generate + build behind the disk cache (no load, so no memory cache):
 * a hit returns the stored artifact without building, and needs the toolchain only for its
 * identity. `status` gets "hit", "miss", "miss-not-stored" or "off", as a run's does. */
tilec_status tc_artifact_cached(tilec_context *ctx, const tilec_compile_options *opts, const tc_backend_env *env,
                                const tc_backend *be, tc_lowered *lw, const char *ptext, const char *src_name,
                                tc_generated *gen, void **artifact, size_t *size, const char **status, tilec_error *err) {
  *artifact = NULL;
  *size = 0;
  *status = "off";
  bool use_cache = !(opts->flags & TILEC_COMPILE_NO_CACHE);
  struct tc_context_caches *c = use_cache ? context_caches(ctx, err) : NULL;
  if (use_cache && !c) return err && err->status != TILEC_OK ? err->status : TILEC_ERROR_NOMEM;
  bool disk_on = c && c->disk && tc_disk_cache_enabled(c->disk) && tc_cache_disk_allowed(be);
  if (!disk_on) {
    tilec_status st = be->generate(lw, gen, err);
    return st == TILEC_OK ? be->build(env, gen, artifact, size, err) : st;
  }
  tilec_status st = TILEC_ERROR_NOMEM;
  tc_strbuf irs;
  tc_sb_init(&irs);
  tc_ir_print_kernel(&irs, lw->k);
  char *ir_text = tc_sb_take(&irs), *dtext = defines_text(opts, lw->k), *tool = toolchain_id(ctx, c, env, be, err);
  if (!ir_text || !dtext || !tool) {
    if (err && err->status != TILEC_OK) st = err->status;
    else tc_error(err, TILEC_ERROR_NOMEM, "out of memory computing the cache key");
    goto done;
  }
  tc_cache_key key;
  compute_key(env, be, ir_text, dtext, tool, true, &key);
  tc_cache_entry e = {0};
  char why[256];
  tc_cache_result r = tc_disk_cache_get(c->disk, be, &key, &e, why, sizeof why);
  if (r == TC_CACHE_HIT) {
    const tc_cache_section *ps = tc_cache_entry_section(&e, "params");
    bool fits = ps && ps->size == strlen(ptext) && memcmp(ps->data, ptext, ps->size) == 0 && e.artifact_size > 0;
    if (fits && (*artifact = malloc(e.artifact_size)) != NULL) {
      memcpy(*artifact, e.artifact, e.artifact_size);
      *size = e.artifact_size;
      *status = "hit";
    }
    tc_cache_entry_release(&e);
    if (*artifact) {
      st = TILEC_OK;
      goto done;
    }
  } else if (r == TC_CACHE_INVALID || r == TC_CACHE_INVALID_KEPT) {
    tc_warn(&ctx->warnings, "kernel cache: the entry for '%s' in %s was damaged (%s); it is rebuilt", lw->k->name,
            tc_disk_cache_dir(c->disk), why[0] ? why : "invalid");
  }
  st = be->generate(lw, gen, err);
  if (st == TILEC_OK) st = be->build(env, gen, artifact, size, err);
  if (st == TILEC_OK)
    *status = store_entry(ctx, c, be, &key, lw->k->name, src_name, ptext, gen, ir_text, *artifact, *size) ? "miss"
                                                                                                         : "miss-not-stored";
done:
  free(ir_text);
  free(dtext);
  free(tool);
  return st;
}
