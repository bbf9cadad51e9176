/* compile.c: the pipeline, readable as a list in one function (tc_compile_kernel):
 *
 *   read (tilec_program_*, api.c)
 *   -> evaluate (front/)                      -> verify
 *   -> target-independent passes (pass/passes.def), each followed by the verifier
 *   -> the target's passes (tc_target.passes: cpu/target.c, cuda/target.c, metal/target.c),
 *      each followed by the verifier
 *   -> emit (backend->generate) -> build (backend->build) -> load (backend->load),
 *      with the kernel cache in front of these three (compile_cache.c).
 *
 * `tilec ir` shows the IR after evaluation; `--lowered` after the target-independent passes,
 * and with an explicit --target after that target's passes too (tilec_program_ir). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "api.h"
#include "compile_cache.h"
#include "pass/pass.h"
#include "util/clock.h"
#include "util/pool.h"

/* The target-independent passes, in order. */
static const tc_pass tc_passes[] = {
#define TC_PASS(name, fn) {name, fn},
#include "pass/passes.def"
};

/* ---- the stages; each returns false with err filled ---- */

/* A read of on-chip memory nothing has written (analysis/uninit.c) becomes the context's
 * warning: the kernel compiles, but its GPU results are whatever the memory held. */
static void warn_uninit_read(tilec_program *prog, const tc_kernel_ir *k) {
  tc_uninit_read u;
  /* explicit warp specialization: the reader has put the warp groups in the order the
   * reference runs them, and checks their barriers there itself (front/eval_ws.c) */
  if (k->warp_specialized || !tc_find_uninit_read(k, &u) || !u.stmt) return;
  const tc_stmt *s = u.stmt;
  const char *name = u.buf->name ? u.buf->name : "?";
  const char *why = u.buf->scope == TC_SCOPE_SHARED ? "shared memory starts undefined on a GPU, while the cpu reference reads zeros"
                                                     : "registers start undefined on a GPU, while the cpu reference reads zeros";
  char loop[128] = "", msg[900], text[2048];
  if (u.loop) snprintf(loop, sizeof loop, " on the first iteration of the loop at line %d, which writes it later", u.loop->loc.line);
  if (s->kind == TC_ST_GEMM && tc_buffer_storage(s->u.gemm.c.buf) == u.buf)
    snprintf(msg, sizeof msg, "T.gemm adds its product to '%s', which nothing has written yet%s (%s); clear it first with T.clear(%s), or pass clear_accum=True",
             name, loop, why, name);
  else
    snprintf(msg, sizeof msg, "%s reads '%s' before anything writes it%s (%s)",
             s->kind == TC_ST_STORE || s->kind == TC_ST_LET || s->kind == TC_ST_ASSIGN ? "this statement" : tc_stmt_kind_name(s->kind), name, loop, why);
  tc_render_at(text, sizeof text, s->loc, "warning", msg);
  tc_warn(&prog->ctx->warnings, "%s", text);
}

static bool evaluate(tilec_program *prog, const tilec_compile_options *opts, tc_arena *arena,
                     tc_kernel_ir **out, tilec_error *err) {
  *out = tc_front_eval(arena, &prog->src, prog->module, opts->kernel, opts->defines, opts->num_defines, err);
  if (!*out || !tc_ir_verify(*out, "evaluate", err)) return false;
  warn_uninit_read(prog, *out);
  return true;
}

static bool run_passes(tc_arena *arena, tc_kernel_ir *k, tilec_error *err) {
  for (size_t i = 0; i < sizeof tc_passes / sizeof tc_passes[0]; i++)
    if (!tc_passes[i].run(arena, k, err) || !tc_ir_verify(k, tc_passes[i].name, err)) return false;
  return true;
}

bool tc_run_target_passes(const tc_target *t, tc_lowered *lw, tilec_error *err) {
  for (int i = 0; i < t->npasses; i++)
    if (!t->passes[i].run(lw, err) || !tc_ir_verify(lw->k, t->passes[i].name, err)) return false;
  return true;
}

tilec_status tc_lower_and_emit(const tc_backend *be, tc_arena *arena, tc_kernel_ir *k, tc_generated *out,
                               tilec_error *err) {
  memset(out, 0, sizeof *out);
  tc_target_spec spec = {{0}, 0, {{"", ""}}};
  snprintf(spec.kind, sizeof spec.kind, "%s", be->target);
  tc_target_desc desc;
  const tc_target *t = tc_target_find(spec.kind, err);
  if (!t || !tc_target_describe(t, &spec, &desc, err)) return err ? err->status : TILEC_ERROR_USAGE;
  tc_lowered lw = {arena, k, &desc, NULL};
  if (!tc_run_target_passes(t, &lw, err)) return err ? err->status : TILEC_ERROR_PROGRAM;
  if (!be->generate) {
    tc_error(err, TILEC_ERROR_TARGET, "target '%s' has no code generator yet", be->target);
    return TILEC_ERROR_TARGET;
  }
  return be->generate(&lw, out, err);
}

/* The target string -> the target and its description (options checked). */
static const tc_target *target_of(const tilec_compile_options *opts, tc_target_desc *desc, tilec_error *err) {
  tc_target_spec spec;
  if (!tc_target_spec_parse(opts->target, &spec, err)) return NULL;
  const tc_target *t = tc_target_find(spec.kind, err);
  return t && tc_target_describe(t, &spec, desc, err) ? t : NULL;
}

/* Out of memory inside the arena longjmps here: the whole lowering fails cleanly. */
#define ARENA_GUARD(arena, err, fail_value)                                  \
  jmp_buf oom_;                                                             \
  jmp_buf *saved_ = (arena)->oom_jmp;                                       \
  if (setjmp(oom_)) {                                                       \
    (arena)->oom_jmp = saved_;                                              \
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory compiling kernel");     \
    return fail_value;                                                      \
  }                                                                         \
  (arena)->oom_jmp = &oom_

/* What a caller needs of a backend: generation alone (`tilec source`), an artifact
 * (tilec_compile_artifact), or loading and launching (tilec_compile). */
enum { NEED_GENERATE, NEED_BUILD, NEED_RUN };

/* The backend of the target: the one named, or the target's default ("auto"), with what `need`
 * asks of it. */
static const tc_backend *backend_of(const tc_backend_env *env, const tc_target *t, const tilec_compile_options *opts,
                                    int need, tilec_error *err) {
  const tc_backend *be = tc_backend_resolve(env, t->name, opts->backend, err);
  if (be && (!be->generate || (need == NEED_RUN && (!be->load || !be->launch)))) {
    tc_error(err, TILEC_ERROR_TARGET, "target '%s' (backend '%s') has no code generator yet", be->target, be->name);
    return NULL;
  }
  if (be && need == NEED_BUILD && !be->build) {
    tc_error(err, TILEC_ERROR_TARGET, "backend '%s' of target '%s' builds no artifact: %s", be->name, be->target,
             (be->flags & TC_BACKEND_IN_MEMORY) ? "it compiles in process and the kernel lives in memory only"
                                                : "it has no build step");
    return NULL;
  }
  return be;
}

typedef struct param_reads {
  const tc_kernel_ir *k;
  tc_param_meta *params;
} param_reads;
static void note_param_read(void *ctx, const tc_buffer *b, bool write) {
  param_reads *R = ctx;
  if (write || !b) return;
  const tc_buffer *root = tc_buffer_storage(b);
  for (int i = 0; i < R->k->nparams; i++)
    if (R->k->params[i].buf == root) R->params[i].reads = true;
}

/* Parameter metadata for queries and launch checks, derived from the IR. */
static void build_param_meta(tilec_kernel *kern) {
  tc_kernel_ir *k = kern->ir;
  tc_arena *a = &kern->arena;
  kern->params = TC_NEW_ARRAY(a, tc_param_meta, k->nparams > 0 ? k->nparams : 1);
  tc_dtype *through = TC_NEW_ARRAY(a, tc_dtype, k->nparams > 0 ? k->nparams : 1);
  if (tc_kernel_rounds_through(k, through) != 0)
    for (int i = 0; i < k->nparams; i++) through[i] = tc_dt(TC_DT_INVALID); /* no memory: the plain tolerances */
  unsigned *unordered = TC_NEW_ARRAY(a, unsigned, k->nparams > 0 ? k->nparams : 1);
  if (tc_kernel_unordered_dims(k, unordered) != 0)
    for (int i = 0; i < k->nparams; i++) unordered[i] = 0; /* no memory: compared in order */
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
    m->info.rounds_through = NULL;
    if (p->is_output && tc_dtype_valid(through[i])) {
      tc_dtype_name(through[i], m->through_name, sizeof m->through_name);
      m->info.rounds_through = m->through_name;
    }
    m->info.unordered_dims = p->is_output ? unordered[i] : 0;
    m->reads = p->var != NULL; /* a scalar is read; a tensor when the body reads it (below) */
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
  /* which tensors the body reads: loads, and tile operations that read the old value of their
   * destination (gemm accumulation, atomic_add, a reduce that does not clear) */
  param_reads R = {k, kern->params};
  tc_access_fns fns = {NULL, note_param_read, &R};
  tc_stmt_accesses(&fns, k->body, true);
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

/* The pipeline, stage by stage; false with err filled. */
static bool compile_pipeline(tilec_kernel *kern, const tilec_compile_options *opts, tilec_error *err) {
  tc_arena *arena = &kern->arena;
  jmp_buf oom;
  if (setjmp(oom)) { /* the arena ran out of memory in one of the stages below */
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory compiling kernel");
    return false;
  }
  arena->oom_jmp = &oom;
  bool ok = false;
  if (!evaluate(kern->prog, opts, arena, &kern->ir, err)) goto done;  /* evaluate -> verify */
  if (!run_passes(arena, kern->ir, err)) goto done;                   /* passes.def, each verified */
  kern->target = target_of(opts, &kern->env.desc, err);              /* "cuda,arch=sm_90a" */
  if (!kern->target) goto done;
  kern->lowered = (tc_lowered){arena, kern->ir, &kern->env.desc, NULL};
  if (!tc_run_target_passes(kern->target, &kern->lowered, err)) goto done; /* each verified */
  kern->backend = backend_of(&kern->env, kern->target, opts, NEED_RUN, err);  /* cc, nvrtc, ... */
  if (!kern->backend) goto done;
  build_param_meta(kern);
  arena->oom_jmp = NULL;
  ok = tc_compile_cached(kern, opts, err);                            /* emit -> build -> load, cached */
done:
  arena->oom_jmp = NULL;
  return ok;
}

tilec_kernel *tc_compile_kernel(tilec_program *prog, const tilec_compile_options *opts, tilec_error *err) {
  static const tilec_compile_options none = {0};
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
  context_pool(ctx);
  kern->env = ctx->env; /* desc becomes the kernel's target description in the pipeline */
  if (!compile_pipeline(kern, opts ? opts : &none, err)) {
    tilec_kernel_destroy(kern);
    return NULL;
  }
  kern->compile_ms = tc_now_ms() - t0;
  return kern;
}

void tilec_kernel_destroy(tilec_kernel *k) {
  if (!k) return;
  tc_module_release(k->module);
  tc_arena_free(&k->arena);
  tc_program_release(k->prog);
  free(k);
}

/* ---- the IR at each stage, for `tilec ir` ---- */

static tc_kernel_ir *lower_guarded(tilec_program *prog, const tilec_compile_options *opts, int lowered, tc_arena *arena,
                                   tilec_error *err) {
  ARENA_GUARD(arena, err, NULL);
  tc_kernel_ir *k = NULL;
  bool ok = evaluate(prog, opts, arena, &k, err) && (!lowered || run_passes(arena, k, err));
  arena->oom_jmp = saved_;
  return ok ? k : NULL;
}

tc_kernel_ir *tc_lower_kernel(tilec_program *prog, const tilec_compile_options *opts, int lowered, tc_arena *arena,
                              tilec_error *err) {
  static const tilec_compile_options none = {0};
  return lower_guarded(prog, opts ? opts : &none, lowered, arena, err);
}

static bool lower_for_ir(tilec_program *prog, const tilec_compile_options *opts, int lowered, tc_arena *arena,
                         tc_strbuf *sb, tilec_error *err) {
  ARENA_GUARD(arena, err, false);
  tc_kernel_ir *k = NULL;
  bool ok = evaluate(prog, opts, arena, &k, err) && (!lowered || run_passes(arena, k, err));
  /* the target's passes run only for an explicitly named target */
  bool for_target = ok && lowered && opts->target && *opts->target && strcmp(opts->target, "auto") != 0;
  tc_target_desc desc;
  tc_lowered lw = {arena, k, &desc, NULL};
  const tc_target *t = for_target ? target_of(opts, &desc, err) : NULL;
  if (for_target) ok = t && tc_run_target_passes(t, &lw, err);
  if (ok) {
    tc_ir_print_kernel(sb, lw.k); /* a target's passes may replace the kernel (the GPU lowering) */
    if (t) {
      tc_target_desc_print(sb, &desc);
      tc_sb_printf(sb, "# passes of target %s:", t->name);
      for (int i = 0; i < t->npasses; i++) tc_sb_printf(sb, " %s", t->passes[i].name);
      tc_sb_puts(sb, t->npasses ? "\n" : " none yet\n");
      if (t->print_state) t->print_state(sb, &lw);
    }
  }
  arena->oom_jmp = saved_;
  return ok;
}

char *tilec_program_ir(tilec_program *prog, const tilec_compile_options *opts, int lowered, tilec_error *err) {
  static const tilec_compile_options none = {0};
  if (!prog) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_program_ir: program is NULL");
    return NULL;
  }
  tc_arena arena;
  tc_arena_init(&arena);
  tc_strbuf sb;
  tc_sb_init(&sb);
  char *text = NULL;
  if (lower_for_ir(prog, opts ? opts : &none, lowered, &arena, &sb, err)) {
    text = tc_sb_take(&sb);
    if (!text) tc_error(err, TILEC_ERROR_NOMEM, "out of memory printing the IR");
  }
  tc_sb_free(&sb);
  tc_arena_free(&arena);
  return text;
}

/* The pipeline up to emission (evaluate, passes, target passes, backend), for `tilec compile`
 * and `tilec source`; lw->k is the lowered kernel. */
static bool lower_for_emit(tilec_program *prog, const tilec_compile_options *opts, tc_arena *arena,
                           tc_backend_env *env, int need, const tc_backend **be, tc_lowered *lw, tilec_error *err) {
  ARENA_GUARD(arena, err, false);
  *lw = (tc_lowered){arena, NULL, &env->desc, NULL};
  const tc_target *t = NULL;
  bool ok = evaluate(prog, opts, arena, &lw->k, err) && run_passes(arena, lw->k, err);
  if (ok) ok = (t = target_of(opts, &env->desc, err)) != NULL && tc_run_target_passes(t, lw, err);
  if (ok) ok = (*be = backend_of(env, t, opts, need, err)) != NULL;
  arena->oom_jmp = saved_;
  return ok;
}

/* The parameter list a cache entry carries, for a kernel lowered without a tilec_kernel; NULL
 * without memory. */
static char *params_text_of(tilec_program *prog, tc_kernel_ir *k) {
  tilec_kernel meta = {.ctx = prog->ctx, .prog = prog, .ir = k};
  tc_arena_init(&meta.arena);
  char *text = NULL;
  jmp_buf oom;
  if (!setjmp(oom)) {
    meta.arena.oom_jmp = &oom;
    build_param_meta(&meta);
    text = tc_kernel_params_text(&meta);
  }
  tc_arena_free(&meta.arena);
  return text;
}

/* Lowering for `tilec compile`: the pipeline up to emission, then the build behind the disk
 * cache; no load. */
static tilec_status lower_and_build(tilec_program *prog, const tilec_compile_options *opts, tc_arena *arena,
                                    tc_backend_env *env, const tc_backend **be, tc_generated *gen, void **artifact,
                                    size_t *size, tilec_error *err) {
  tc_lowered lw;
  if (!lower_for_emit(prog, opts, arena, env, NEED_BUILD, be, &lw, err))
    return err && err->status != TILEC_OK ? err->status : TILEC_ERROR_PROGRAM;
  char *ptext = params_text_of(prog, lw.k);
  if (!ptext) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  const char *status = NULL;
  tilec_status st = tc_artifact_cached(prog->ctx, opts, env, *be, &lw, ptext, prog->src.name, gen, artifact, size, &status, err);
  free(ptext);
  return st;
}

tilec_status tilec_compile_artifact(tilec_program *prog, const tilec_compile_options *opts, void **out,
                                    size_t *out_size, tilec_error *err) {
  if (out) *out = NULL;
  if (out_size) *out_size = 0;
  if (!prog || !out || !out_size) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_compile_artifact: %s is NULL", !prog ? "program" : "out");
    return TILEC_ERROR_USAGE;
  }
  static const tilec_compile_options none = {0};
  if (!opts) opts = &none;
  tc_arena arena;
  tc_arena_init(&arena);
  tc_generated gen = {0};
  void *artifact = NULL;
  size_t size = 0;
  tc_backend_env env = prog->ctx->env; /* desc becomes the compile's target description */
  env.build_only = true;
  const tc_backend *be = NULL;
  tilec_status st = lower_and_build(prog, opts, &arena, &env, &be, &gen, &artifact, &size, err);
  if (st != TILEC_OK) goto done;
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

/* ---- the generated code alone, for `tilec source`: the pipeline up to emit, no build ---- */

char *tilec_program_source(tilec_program *prog, const tilec_compile_options *opts, int kernel_only, tilec_error *err) {
  static const tilec_compile_options none = {0};
  if (!prog) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_program_source: program is NULL");
    return NULL;
  }
  tc_arena arena;
  tc_arena_init(&arena);
  tc_backend_env env = prog->ctx->env;
  env.build_only = true; /* generation needs no device, as `tilec compile` needs none */
  const tc_backend *be = NULL;
  tc_lowered lw;
  tc_generated gen = {0};
  char *text = NULL;
  if (lower_for_emit(prog, opts ? opts : &none, &arena, &env, NEED_GENERATE, &be, &lw, err) &&
      be->generate(&lw, &gen, err) == TILEC_OK) {
    const char *s = (kernel_only & TILEC_SOURCE_KERNEL_ONLY) ? gen.kernel_source : gen.full_source;
    tc_strbuf sb;
    tc_sb_init(&sb);
    if (kernel_only & TILEC_SOURCE_EXPLAIN) { /* the decisions report, one comment line each */
      if (!gen.explain || !*gen.explain) tc_sb_printf(&sb, "// the %s target reports no decisions\n", be->target);
      for (const char *p = gen.explain; p && *p;) {
        size_t n = strcspn(p, "\n");
        tc_sb_printf(&sb, "// %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
      }
    }
    tc_sb_puts(&sb, s ? s : "");
    text = tc_sb_take(&sb);
    if (!text) tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
  }
  tc_generated_free(&gen);
  tc_arena_free(&arena);
  return text;
}
