/* generate.c: the metal target's path from tile IR to MSL: the GPU description, the shared GPU
 * lowering (src/gpu/), the printer (codegen.c), and the decisions report (`--explain`): which
 * GEMM path each T.gemm takes and why (docs/metal.md, "GEMM paths"). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/walk.h"
#include "target/metal/codegen.h"
#include "target/metal/metal.h"
#include "util/diag.h"
#include "util/strbuf.h"

/* Apple GPU family 7 and later, as the lowering sees it. No asynchronous copies (pipelined
 * loops keep their staging with synchronous copies) and no operand swizzle (simdgroup_load
 * reads rows at a fixed stride). */
static void metal_gpu_desc(tc_gpu_desc *d, int msl) {
  memset(d, 0, sizeof *d);
  d->simdgroup_bfloat16 = msl >= 310;
  d->target = "metal";
  d->warp_size = 32;
  d->max_threads = 1024;
  d->max_smem = 32 * 1024;
  d->gemm_k_step = 8, d->gemm_k_step_8bit = 1; /* simdgroup_matrix 8x8 steps; 8-bit operands take the SIMT path */
  d->cp_async = false;
  d->swizzle_gemm_operands = false;
  d->atomic_fetch = true;
  d->launches = true; /* a kernel of several launches: one dispatch after another, tcg_launch = 0..N-1 */
}

typedef struct explain_ctx {
  tc_strbuf *sb;
  bool metal4;
  int msl;
  bool rs;      /* a gemm of the kernel reads A from registers */
  bool not_m2d; /* a gemm of the kernel is not on matmul2d */
  const char *notes; /* the lowering's notes (lines "LOC: not direct-global: why") */
} explain_ctx;

static bool find_rs(void *ctx, tc_stmt *s) {
  explain_ctx *X = ctx;
  if (s->kind != TC_ST_INTRINSIC || strcmp(s->u.intrinsic.name, "gemm_block")) return true;
  int64_t instr = 0;
  tc_expr_const_int(s->u.intrinsic.args[7], &instr);
  if (s->u.intrinsic.args[10]->buf && s->u.intrinsic.args[10]->buf->scope == TC_SCOPE_LOCAL) X->rs = true;
  if (instr != TC_GPU_GEMM_MATMUL2D) X->not_m2d = true;
  return true;
}

/* The lowering's reason a matmul2d gemm kept its threadgroup staging (src/gpu/direct.c), as
 * "not direct-global: why" in out. */
static void direct_note(const explain_ctx *X, tc_loc loc, char *out, size_t cap) {
  char key[300];
  int n = loc.src ? snprintf(key, sizeof key, "%s:%d:%d: not direct-global: ", loc.src->name, loc.line, loc.col) : 0;
  const char *p = n > 0 && (size_t)n < sizeof key && X->notes ? strstr(X->notes, key) : NULL;
  if (!p) {
    snprintf(out, cap, "not direct-global: A and B are read from threadgroup memory as T.copy stages them");
    return;
  }
  p += n;
  size_t len = strcspn(p, "\n");
  snprintf(out, cap, "not direct-global: %.*s", (int)len, p);
}

static bool explain_gemm(void *ctx, tc_stmt *s) {
  explain_ctx *X = ctx;
  if (s->kind != TC_ST_INTRINSIC || strcmp(s->u.intrinsic.name, "gemm_block") != 0) return true;
  int64_t v[10];
  for (int i = 0; i < 10; i++) tc_expr_const_int(s->u.intrinsic.args[i], &v[i]);
  const tc_buffer *A = s->u.intrinsic.args[10]->buf, *B = s->u.intrinsic.args[11]->buf, *C = s->u.intrinsic.args[12]->buf;
  tc_strbuf *sb = X->sb;
  if (s->loc.src) tc_sb_printf(sb, "%s:%d:%d: ", s->loc.src->name, s->loc.line, s->loc.col);
  tc_sb_printf(sb, "T.gemm %lld x %lld x %lld (%s x %s -> %s, A %s): ", (long long)v[0], (long long)v[1], (long long)v[2],
               tc_dtype_scalar_name((tc_scalar_type)A->dtype.code), tc_dtype_scalar_name((tc_scalar_type)B->dtype.code),
               tc_dtype_scalar_name((tc_scalar_type)C->dtype.code),
               A->scope == TC_SCOPE_LOCAL ? "in registers" : A->scope == TC_SCOPE_GLOBAL ? "in device memory" : "in threadgroup memory");
  if (v[7] == 2 && A->scope == TC_SCOPE_LOCAL) {
    tc_sb_printf(sb, "matmul2d (A from registers): mpp::tensor_ops::matmul2d 16 x 32 x 16 on each simdgroup's %lld x %lld "
                     "fragments over %lld x 1 simdgroups (%lld x %lld per simdgroup), float cooperative-tensor accumulation, "
                     "A's registers as 16 x 16 left-input cooperative tensors, B loaded from threadgroup memory\n",
                 (long long)(v[0] / v[3] / 16), (long long)(v[1] / 32), (long long)v[3], (long long)(v[0] / v[3]), (long long)v[1]);
    return true;
  }
  if (v[7] == 2) {
    bool gg = A->scope == TC_SCOPE_GLOBAL;
    tc_sb_printf(sb, "matmul2d (%s): mpp::tensor_ops::matmul2d 16 x 32 x %lld on each simdgroup's %lld x %lld "
                     "fragments over %lld x %lld simdgroups (%lld x %lld per simdgroup), float cooperative-tensor accumulation",
                 gg ? "direct-global" : "shared-staged", (long long)v[2], (long long)(v[0] / v[3] / 16), (long long)(v[1] / v[4] / 32),
                 (long long)v[3], (long long)v[4], (long long)(v[0] / v[3]), (long long)(v[1] / v[4]));
    if (gg) tc_sb_puts(sb, ", A and B read from device memory (no threadgroup staging)");
    else {
      char why[300];
      direct_note(X, s->loc, why, sizeof why);
      tc_sb_printf(sb, "; %s", why);
    }
    tc_sb_putc(sb, '\n');
    return true;
  }
  if (v[7] == TC_GPU_GEMM_SIMDGROUP)
    tc_sb_printf(sb, "simdgroup_matrix 8x8 path over %lld x %lld simdgroups (%lld x %lld per simdgroup, float accumulation "
                     "in the metal.simdgroup scope)",
                 (long long)v[3], (long long)v[4], (long long)(v[0] / v[3]), (long long)(v[1] / v[4]));
  else if (tc_metal_simdgroup_gemm(X->msl, A->dtype, B->dtype, C->dtype, v[2]))
    tc_sb_printf(sb, "SIMT path (the accumulator is not in the metal.simdgroup scope: another T.gemm into it cannot run on "
                     "simdgroup_matrix)");
  else
    tc_sb_printf(sb, "SIMT path (simdgroup_matrix does not take these operand types)");
  char why[200];
  const char *no = tc_gpu_matmul2d_reason(v[0], v[1], v[2], (int)v[3], (int)v[4], A->dtype, B->dtype, C->dtype,
                                          A->scope != TC_SCOPE_LOCAL, B->scope != TC_SCOPE_LOCAL, X->rs && X->not_m2d, why, sizeof why);
  if (!X->metal4) tc_sb_puts(sb, "; not matmul2d: metal4 is off (--target metal,metal4=1)");
  else if (no) tc_sb_printf(sb, "; not matmul2d: %s", no);
  else tc_sb_puts(sb, "; not matmul2d: its accumulator is laid out for another gemm's simdgroup path");
  tc_sb_putc(sb, '\n');
  return true;
}

/* The accumulators the target pass moved to a Metal scope (simdgroup_scope.c), one line each. */
static bool explain_scope(void *ctx, tc_stmt *s) {
  explain_ctx *X = ctx;
  if (s->kind != TC_ST_ALLOC) return true;
  const tc_buffer *b = s->u.alloc.buf;
  if (b->scope != TC_SCOPE_METAL_SIMDGROUP && b->scope != TC_SCOPE_METAL_COOPERATIVE_TENSOR) return true;
  if (b->loc.src) tc_sb_printf(X->sb, "%s:%d:%d: ", b->loc.src->name, b->loc.line, b->loc.col);
  tc_sb_printf(X->sb, "accumulator '%s': %s scope (%s)\n", b->name, tc_scope_name(b->scope),
               b->scope == TC_SCOPE_METAL_SIMDGROUP ? "its registers are the simdgroup_matrix 8x8 blocks' thread_elements()"
                                                    : "its registers are matmul2d's destination cooperative tensors");
  return true;
}

/* The lowering's notes metal shows: accumulator stores, shared tiles that share memory, barriers left to the
 * program. */
static void explain_stores(tc_strbuf *sb, const char *notes) {
  for (const char *p = notes; p && *p;) {
    size_t len = strcspn(p, "\n");
    if (memmem(p, len, "simdgroup_store", 15) || (len > 14 && !memcmp(p, "shared memory:", 14)) ||
        (len > 9 && !memcmp(p, "barriers:", 9))) tc_sb_printf(sb, "%.*s\n", (int)len, p);
    p += len + (p[len] == '\n');
  }
}

tilec_status tc_metal_emit(const tc_lowered *lw, tc_generated *out, tilec_error *err) {
  memset(out, 0, sizeof *out);
  int msl = 310;
  bool metal4 = false;
  if (!tc_metal_arch_parse(lw->desc->arch, &msl, &metal4)) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal: the description's arch '%s' is not an MSL version", lw->desc->arch);
    return TILEC_ERROR_INTERNAL;
  }
  tc_gpu_desc desc;
  metal_gpu_desc(&desc, msl);
  desc.matmul2d = metal4; /* gemm accumulators that suit it are laid out for matmul2d (src/gpu/gemm.c) */
  desc.plant = lw->desc->plant;
  tc_arena a;
  tc_arena_init(&a);
  tc_strbuf notes; /* the lowering's decisions: why a matmul2d gemm is not direct-global */
  tc_sb_init(&notes);
  jmp_buf oom;
  if (setjmp(oom)) {
    tc_sb_free(&notes);
    tc_arena_free(&a);
    tc_generated_free(out);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory generating metal code");
    return err->status;
  }
  a.oom_jmp = &oom;
  char entry[256] = "";
  int64_t smem = 0;
  tilec_status st = TILEC_OK;
  tc_kernel_ir *lowered = tc_gpu_lower(&a, lw->k, &desc, &notes, err);
  if (!lowered) st = err->status;
  else st = tc_metal_print(lowered, &a, msl, out, entry, sizeof entry, &smem, err);
  if (st == TILEC_OK) {
    tc_strbuf ex;
    tc_sb_init(&ex);
    explain_ctx X = {.sb = &ex, .metal4 = metal4, .msl = msl, .notes = tc_sb_cstr(&notes)};
    tc_visit_stmts(lowered->body, find_rs, &X);
    tc_visit_stmts(lowered->body, explain_gemm, &X);
    tc_visit_stmts(lw->k->body, explain_scope, &X);
    explain_stores(&ex, tc_sb_cstr(&notes));
    if (ex.len == 0) tc_sb_puts(&ex, "no T.gemm: no GEMM path to choose\n");
    out->explain = tc_sb_take(&ex);
    int block[3] = {1, 1, 1};
    for (int i = 0; i < lowered->threads_ndim && i < 3; i++) block[i] = (int)lowered->threads[i]; /* after gpu/ws_explicit.c */
    char meta[512];
    snprintf(meta, sizeof meta, "entry=%s\nblock=%d,%d,%d\nsmem=%lld\narch=%s\n", entry, block[0], block[1], block[2],
             (long long)smem, lw->desc->arch);
    out->meta = strdup(meta);
    if (!out->meta || !out->explain) {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory generating metal code");
      st = TILEC_ERROR_NOMEM;
    }
  }
  a.oom_jmp = NULL;
  tc_sb_free(&notes);
  tc_arena_free(&a);
  if (st != TILEC_OK) tc_generated_free(out);
  return st;
}
