/* compile.c: the pipeline, readable in one function (tc_compile_kernel):
 *   read (done by tilec_program_*) -> evaluate -> verify -> target-independent passes, each
 *   followed by the verifier -> target lowering + codegen (backend->generate) -> build
 *   (backend->build) -> load (backend->load); the kernel cache sits in front of the last three. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "compile_cache.h"
#include "pass/pass.h"
#include "util/pool.h"

static const tc_pass tc_pipeline[] = {
#define TC_PASS(name, fn) {name, fn},
#include "pass/passes.def"
};

static tc_kernel_ir *lower_steps(tilec_program *prog, const tilec_compile_options *opts, int lowered,
                                 tc_arena *arena, tilec_error *err) {
  tc_kernel_ir *k = tc_front_eval(arena, &prog->src, prog->module, opts->kernel, opts->defines,
                                  opts->num_defines, err);
  if (k && !tc_ir_verify(k, "evaluate", err)) k = NULL;
  for (size_t i = 0; k && lowered && i < sizeof tc_pipeline / sizeof tc_pipeline[0]; i++) {
    if (!tc_pipeline[i].run(arena, k, err) || !tc_ir_verify(k, tc_pipeline[i].name, err)) k = NULL;
  }
  return k;
}

tc_kernel_ir *tc_lower_kernel(tilec_program *prog, const tilec_compile_options *opts, int lowered,
                              tc_arena *arena, tilec_error *err) {
  static const tilec_compile_options none = {0};
  jmp_buf oom;
  jmp_buf *saved = arena->oom_jmp;
  if (setjmp(oom)) {
    arena->oom_jmp = saved;
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory compiling kernel");
    return NULL;
  }
  arena->oom_jmp = &oom;
  tc_kernel_ir *k = lower_steps(prog, opts ? opts : &none, lowered, arena, err);
  arena->oom_jmp = saved;
  return k;
}

/* Parameter metadata for queries and launch checks, derived from the IR. */
static void build_param_meta(tilec_kernel *kern) {
  tc_kernel_ir *k = kern->ir;
  tc_arena *a = &kern->arena;
  kern->params = TC_NEW_ARRAY(a, tc_param_meta, k->nparams > 0 ? k->nparams : 1);
  for (int i = 0; i < k->nparams; i++) {
    tc_param *p = &k->params[i];
    tc_param_meta *m = &kern->params[i];
    tc_dtype dt = p->buf ? p->buf->dtype : p->var->dtype;
    tc_dtype_name(dt, m->dtype_name, sizeof m->dtype_name);
    m->info.name = p->name;
    m->info.dtype = m->dtype_name;
    uint8_t code = 255, bits = 0;
    uint16_t lanes = 1;
    if (!tc_dtype_to_dlpack(dt, &code, &bits, &lanes)) code = 255, bits = (uint8_t)tc_dtype_bits(dt);
    m->info.dl_dtype.code = code;
    m->info.dl_dtype.bits = bits;
    m->info.dl_dtype.lanes = lanes;
    m->info.is_output = p->is_output;
    int nd = p->buf ? p->buf->ndim : 0;
    m->info.ndim = nd;
    m->shape = TC_NEW_ARRAY(a, int64_t, nd > 0 ? nd : 1);
    m->dims = TC_NEW_ARRAY(a, const char *, nd > 0 ? nd : 1);
    m->sym_of_dim = TC_NEW_ARRAY(a, int, nd > 0 ? nd : 1);
    for (int d = 0; d < nd; d++) {
      tc_expr *e = p->buf->shape[d];
      m->sym_of_dim[d] = -1;
      if (e->op == TC_OP_CONST_INT) {
        m->shape[d] = e->ival;
      } else {
        m->shape[d] = -1;
        if (e->op == TC_OP_VAR) {
          m->dims[d] = e->var->name;
          for (int s = 0; s < k->nsyms; s++)
            if (k->syms[s] == e->var) m->sym_of_dim[d] = s;
        } else {
          m->dims[d] = "?";
        }
      }
    }
    m->info.shape = m->shape;
    m->info.dims = m->dims;
  }
}

tilec_kernel *tilec_compile(tilec_program *prog, const tilec_compile_options *opts, tilec_error *err) {
  if (!prog) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compile: program is NULL");
    return NULL;
  }
  return tc_compile_kernel(prog, opts, err);
}

static tc_thread_pool *context_pool(tilec_context *ctx) {
  pthread_mutex_lock(&ctx->mu);
  if (!ctx->env.pool && ctx->num_threads > 1) ctx->env.pool = tc_thread_pool_create(ctx->num_threads);
  tc_thread_pool *p = ctx->env.pool;
  pthread_mutex_unlock(&ctx->mu);
  return p;
}

/* "cuda,arch=sm_90a" -> kind "cuda", options "arch=sm_90a" (options "" when there are none).
 * The options themselves are the backend's to read (tc_backend.configure). Kept to this one
 * function so a fuller target-string parser can replace it. */
static bool split_target(const char *spec, char *kind, size_t cap, const char **options, tilec_error *err) {
  if (!spec) spec = "auto";
  const char *comma = strchr(spec, ',');
  size_t n = comma ? (size_t)(comma - spec) : strlen(spec);
  if (n >= cap) {
    tc_error(err, TILEC_ERROR_USAGE, "target '%s' is too long", spec);
    return false;
  }
  memcpy(kind, spec, n);
  kind[n] = 0;
  *options = comma ? comma + 1 : "";
  return true;
}

/* Resolve the backend for opts' target string and set up env for this compile. */
static const tc_backend *resolve_backend(tc_backend_env *env, const tilec_compile_options *opts, tilec_error *err) {
  char kind[64];
  const char *options;
  if (!split_target(opts->target, kind, sizeof kind, &options, err)) return NULL;
  const tc_backend *be = tc_backend_resolve(env, kind, opts->backend, err);
  if (!be) return NULL;
  if (!be->generate || (!env->build_only && (!be->load || !be->launch)) || (env->build_only && !be->build)) {
    tc_error(err, TILEC_ERROR_TARGET, "target '%s' (backend '%s') has no code generator yet", be->target, be->name);
    return NULL;
  }
  if (be->configure) {
    if (be->configure(env, options, err) != TILEC_OK) return NULL;
  } else if (*options) {
    tc_error(err, TILEC_ERROR_USAGE, "target '%s' takes no options (got '%s')", be->target, options);
    return NULL;
  }
  return be;
}

tilec_kernel *tc_compile_kernel(tilec_program *prog, const tilec_compile_options *opts, tilec_error *err) {
  tilec_compile_options none = {0};
  if (!opts) opts = &none;
  tilec_context *ctx = prog->ctx;
  double t0 = tc_now_ms();
  tilec_kernel *kern = calloc(1, sizeof *kern);
  if (!kern) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory compiling kernel");
    return NULL;
  }
  kern->ctx = ctx;
  tc_arena_init(&kern->arena);
  pthread_mutex_lock(&prog->mu);
  prog->refs++;
  pthread_mutex_unlock(&prog->mu);
  kern->prog = prog;

  /* 1. evaluate and lower the tile IR */
  kern->ir = tc_lower_kernel(prog, opts, 1, &kern->arena, err);
  if (!kern->ir) goto fail;
  /* 2. pick the execution backend through the explicit default table, and configure it */
  context_pool(ctx);
  kern->env = ctx->env;
  kern->backend = resolve_backend(&kern->env, opts, err);
  if (!kern->backend) goto fail;
  build_param_meta(kern);
  /* 3. codegen, build and load, through the cache */
  if (!tc_compile_cached(kern, opts, err)) goto fail;
  kern->compile_ms = tc_now_ms() - t0;
  return kern;
fail:
  tilec_kernel_destroy(kern);
  return NULL;
}

tilec_status tilec_compile_artifact(tilec_program *prog, const tilec_compile_options *opts, void **out,
                                    size_t *out_size, tilec_error *err) {
  if (out) *out = NULL;
  if (out_size) *out_size = 0;
  if (!prog || !out || !out_size) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compile_artifact: %s is NULL", !prog ? "program" : "out");
    return TILEC_ERROR_USAGE;
  }
  tilec_compile_options none = {0};
  if (!opts) opts = &none;
  tc_arena arena;
  tc_arena_init(&arena);
  tc_generated gen = {0};
  void *artifact = NULL;
  size_t size = 0;
  tilec_status st = TILEC_ERROR_PROGRAM;
  tc_kernel_ir *k = tc_lower_kernel(prog, opts, 1, &arena, err);
  if (!k) {
    st = err ? err->status : TILEC_ERROR_PROGRAM;
    goto done;
  }
  tc_backend_env env = prog->ctx->env;
  env.build_only = true;
  const tc_backend *be = resolve_backend(&env, opts, err);
  st = TILEC_ERROR_TARGET;
  if (!be) {
    st = err ? err->status : TILEC_ERROR_TARGET;
    goto done;
  }
  if ((st = be->generate(&env, k, &gen, err)) != TILEC_OK || (st = be->build(&env, &gen, &artifact, &size, err)) != TILEC_OK)
    goto done;
  size_t psize = size;
  const void *payload = be->payload ? be->payload(artifact, size, &psize) : artifact;
  if (!payload) {
    tc_error(err, TILEC_ERROR_INTERNAL, "%s/%s built an artifact it cannot read back", be->target, be->name);
    st = TILEC_ERROR_INTERNAL;
    goto done;
  }
  if (payload != artifact) memmove(artifact, payload, psize);
  *out = artifact;
  *out_size = psize;
  artifact = NULL;
done:
  free(artifact);
  tc_generated_free(&gen);
  tc_arena_free(&arena);
  return st;
}
