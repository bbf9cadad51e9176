/* api.c: contexts, programs and kernel queries of the public API. Compiling and destroying
 * kernels, and the IR text of a program, are compile.c's. */
#include "api.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compile_cache.h"
#include "target/cpu/cpu.h"
#include "util/pool.h"

const char *tilec_version(void) { return TILEC_VERSION_STRING; }

const char *tilec_status_name(tilec_status s) {
  switch (s) {
  case TILEC_OK: return "ok";
  case TILEC_ERROR_PROGRAM: return "program error";
  case TILEC_ERROR_USAGE: return "usage error";
  case TILEC_ERROR_VERIFY: return "verification failed";
  case TILEC_ERROR_TARGET: return "target error";
  case TILEC_ERROR_NOMEM: return "out of memory";
  case TILEC_ERROR_IO: return "i/o error";
  case TILEC_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

void tilec_free(void *p) { free(p); }

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

tilec_context *tilec_context_create(const tilec_context_options *opts, tilec_error *err) {
  tilec_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory creating a context");
    return NULL;
  }
  tilec_context_options none = {0};
  if (!opts) opts = &none;
  ctx->flags = opts->flags;
  const char *disable = getenv("TILEC_DISABLE_CACHE");
  /* TILEC_DISABLE_CACHE turns all caching off: every compile builds anew. */
  if (disable && strcmp(disable, "0") != 0 && disable[0])
    ctx->flags |= TILEC_CONTEXT_NO_DISK_CACHE | TILEC_CONTEXT_NO_MEMORY_CACHE;
  const char *cc = opts->cc ? opts->cc : getenv("CC");
  if (!cc || !cc[0]) cc = "cc";
  ctx->cc = strdup(cc);
  ctx->cache_dir = dup_or_null(opts->cache_dir);
  int n = opts->num_threads;
  if (n <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n = cores > 0 ? (int)cores : 1;
  }
  ctx->num_threads = n;
  pthread_mutex_init(&ctx->mu, NULL);
  tc_warning_init(&ctx->warnings);
  if (!ctx->cc || (opts->cache_dir && !ctx->cache_dir)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory creating a context");
    tilec_context_destroy(ctx);
    return NULL;
  }
  ctx->env.cc = ctx->cc;
  ctx->env.num_threads = n;
  ctx->env.pool = NULL; /* created on the first launch that needs it (compile.c) */
  tc_target_spec cpu_spec = {"cpu", 0, {{"", ""}}};
  if (!tc_target_describe(&tc_cpu_target, &cpu_spec, &ctx->env.desc, err)) {
    tilec_context_destroy(ctx);
    return NULL;
  }
  return ctx;
}

void tilec_context_destroy(tilec_context *ctx) {
  if (!ctx) return;
  tc_context_caches_destroy(ctx->caches);
  if (ctx->env.pool) tc_thread_pool_destroy(ctx->env.pool);
  pthread_mutex_destroy(&ctx->mu);
  tc_warning_destroy(&ctx->warnings);
  free(ctx->cc);
  free(ctx->cache_dir);
  free(ctx);
}

char *tilec_context_take_warning(tilec_context *ctx) {
  return ctx ? tc_warning_take(&ctx->warnings) : NULL;
}

/* ---- programs ---- */

tilec_program *tilec_program_from_string(tilec_context *ctx, const char *name, const char *text,
                                         size_t len, tilec_error *err) {
  if (!ctx || !text) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_program_from_string: %s is NULL", ctx ? "text" : "context");
    return NULL;
  }
  const char *nul = memchr(text, 0, len);
  if (nul) { /* CPython's error, with the place of the byte */
    tc_source at = {name ? name : "<string>", text, len};
    tc_loc loc = {&at, 1, 1};
    for (const char *q = text; q < nul; q++) loc.line += *q == '\n', loc.col = *q == '\n' ? 1 : loc.col + 1;
    tc_error_at(err, TILEC_ERROR_PROGRAM, loc, "source code cannot contain null bytes");
    return NULL;
  }
  tilec_program *p = calloc(1, sizeof *p);
  if (!p) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory reading a program");
    return NULL;
  }
  p->ctx = ctx;
  p->refs = 1;
  pthread_mutex_init(&p->mu, NULL);
  tc_arena_init(&p->arena);
  jmp_buf oom;
  if (setjmp(oom)) {
    p->arena.oom_jmp = NULL;
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory reading a program");
    tilec_program_destroy(p);
    return NULL;
  }
  p->arena.oom_jmp = &oom;
  p->src.name = tc_arena_strdup(&p->arena, name ? name : "<string>");
  p->src.text = tc_arena_strndup(&p->arena, text, len);
  p->src.len = len;
  p->module = tc_read(&p->arena, &p->src, err);
  if (!p->module) goto fail;
  p->defs = tc_front_find_kernels(&p->arena, p->module);
  p->arena.oom_jmp = NULL;
  return p;
fail:
  p->arena.oom_jmp = NULL;
  tilec_program_destroy(p);
  return NULL;
}

tilec_program *tilec_program_from_file(tilec_context *ctx, const char *path, tilec_error *err) {
  if (!ctx || !path) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_program_from_file: %s is NULL", ctx ? "path" : "context");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    tc_error(err, TILEC_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    tc_error(err, TILEC_ERROR_IO, "'%s' is not a regular file", path);
    return NULL;
  }
  size_t cap = (size_t)st.st_size + 1, len = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory reading '%s'", path);
    return NULL;
  }
  size_t got;
  while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        tc_error(err, TILEC_ERROR_NOMEM, "out of memory reading '%s'", path);
        return NULL;
      }
      buf = nb;
      cap *= 2;
    }
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    tc_error(err, TILEC_ERROR_IO, "error reading '%s'", path);
    return NULL;
  }
  tilec_program *p = tilec_program_from_string(ctx, path, buf, len, err);
  free(buf);
  return p;
}

void tc_program_release(tilec_program *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  int left = --p->refs;
  pthread_mutex_unlock(&p->mu);
  if (left > 0) return;
  pthread_mutex_destroy(&p->mu);
  tc_arena_free(&p->arena);
  free(p);
}

void tilec_program_destroy(tilec_program *p) { tc_program_release(p); }

size_t tilec_program_num_kernels(const tilec_program *p) { return p ? (size_t)p->defs.n : 0; }

char *tilec_program_autotune_configs(tilec_program *p, const char *kernel, tilec_error *err) {
  tilec_error local;
  if (!err) err = &local;
  if (!p) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_program_autotune_configs: no program");
    return NULL;
  }
  return tc_front_autotune_configs(&p->src, p->module, kernel, err);
}

const char *tilec_program_kernel_name(const tilec_program *p, size_t i) {
  return (p && i < (size_t)p->defs.n) ? p->defs.v[i].name : NULL;
}

/* ---- kernel queries ---- */

const char *tilec_kernel_name(const tilec_kernel *k) { return k ? k->ir->name : NULL; }
const char *tilec_kernel_target(const tilec_kernel *k) { return k ? k->backend->target : NULL; }
const char *tilec_kernel_backend(const tilec_kernel *k) { return k ? k->backend->name : NULL; }
size_t tilec_kernel_num_params(const tilec_kernel *k) { return k ? (size_t)k->ir->nparams : 0; }
const char *tilec_kernel_cache_status(const tilec_kernel *k) { return k ? k->cache_status : NULL; }
double tilec_kernel_compile_ms(const tilec_kernel *k) { return k ? k->compile_ms : 0; }

int tilec_kernel_param(const tilec_kernel *k, size_t i, tilec_param_info *out) {
  if (!k || !out || i >= (size_t)k->ir->nparams) return -1;
  *out = k->params[i].info;
  return 0;
}

int tilec_kernel_param_reads(const tilec_kernel *k, size_t i) {
  if (!k || i >= (size_t)k->ir->nparams) return -1;
  return k->params[i].reads ? 1 : 0;
}

size_t tilec_kernel_num_syms(const tilec_kernel *k) { return k ? (size_t)k->ir->nsyms : 0; }

const char *tilec_kernel_sym_name(const tilec_kernel *k, size_t i) {
  return k && i < (size_t)k->ir->nsyms ? k->ir->syms[i]->name : NULL;
}

const char *tilec_kernel_source(const tilec_kernel *k, int kernel_only) {
  if (!k) return NULL;
  const char *s = kernel_only ? k->module->gen.kernel_source : k->module->gen.full_source;
  return s ? s : "";
}

size_t tilec_kernel_returns(const tilec_kernel *k, size_t *idx, size_t cap) {
  if (!k) return 0;
  size_t n = (size_t)k->ir->nreturns;
  for (size_t i = 0; i < n && i < cap && idx; i++) idx[i] = (size_t)k->ir->returns[i];
  return n;
}
