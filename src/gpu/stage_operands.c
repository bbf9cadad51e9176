/* stage_operands.c: a T.gemm operand held in a fragment (or in part of a shared tile) is read
 * from a whole shared tile instead, where the matrix instructions cannot take it as it is (the
 * first step of tc_gpu_lower).
 *
 * B: the GPU's matrix instructions take B from shared memory only (A may come from registers),
 * while TileLang kernels compute B in registers too (kda's backward pass: a gated K in a
 * fragment).
 *
 * A: registers serve only when the fragment is laid out as the gemm's operand wants (like the
 * accumulator of an M x K gemm over the same warps). Which layout a fragment gets is known only
 * after layout inference, where a fragment that other statements pin to another layout (a
 * dequantized weight written by a T.Parallel loop, the cast scores of a gemm over other warps)
 * makes lower_gemm give up; tc_gpu_lower then lowers the kernel again with that gemm's A
 * (named by gemm.seq in P->stage_a) staged here.
 *
 * Part of a shared tile: the instructions address whole tiles (their rows, their swizzle), so a
 * column slice (sparse MLA's Q_shared[:, :D] and Q_shared[:, D:]) is copied to a tile of its own.
 *
 * The gemm becomes a T.copy of the fragment into a new shared tile of its shape, allocated once
 * per block, and the gemm reads that tile; the barrier pass then orders the copy's writes before
 * the gemm's reads, and the next copy after them. */
#include "gpu/gpu_internal.h"
#include "ir/walk.h"
#include "util/strbuf.h"

typedef struct stage_ctx {
  tc_gpu_plan *P;
  tc_stmt_list allocs;
} stage_ctx;

static bool wants_staged_a(const tc_gpu_plan *P, const tc_stmt *s) {
  for (int i = 0; i < P->nstage_a; i++)
    if (s->u.gemm.seq > 0 && P->stage_a[i] == s->u.gemm.seq) return true;
  return false;
}

static bool frag_operand(const tc_region *r) { return r->buf && r->buf->scope == TC_SCOPE_FRAGMENT; }

/* A shared operand the matrix instructions cannot address as it is: part of its tile's last two
 * dimensions (a column slice, Q_shared[:, :D]), where they take whole tiles (leading dimensions
 * of extent 1 pick a tile of a stack). */
static bool partial_shared(const tc_region *r) {
  if (!r->buf || r->buf->scope != TC_SCOPE_SHARED || r->ndim != r->buf->ndim || r->ndim < 2) return false;
  for (int d = 0; d < r->ndim - 2; d++)
    if (r->r[d].extent != 1) return false; /* not a tile: lower_gemm says so */
  return !tc_gpu_region_is_tile(r);
}

/* A shared tile holding the fragment region r (2-D once unit dimensions go), and the copy that
 * fills it, before `before`; NULL when r is not 2-D (lower_gemm reports it). */
static tc_buffer *staged_tile(stage_ctx *S, const tc_region *r, tc_stmt_list *before, tc_loc loc) {
  tc_gpu_plan *P = S->P;
  int64_t ext[TC_GL_MAXDIM];
  if (tc_region_squeezed(r, ext, TC_GL_MAXDIM) != 2) return NULL;
  tc_expr **shape = TC_NEW_ARRAY(P->a, tc_expr *, 2);
  for (int d = 0; d < 2; d++) shape[d] = tc_ir_int(P->a, ext[d], tc_index_dtype(), loc);
  const char *name = tc_arena_printf(P->a, "%s_staged", r->buf->name);
  tc_buffer *tile = tc_ir_new_buffer(P->a, P->k, name, r->buf->dtype, TC_SCOPE_SHARED, 2, shape, loc);
  tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, loc);
  al->u.alloc.buf = tile;
  tc_stmt_list_push(P->a, &S->allocs, al);
  tc_stmt *copy = tc_ir_stmt(P->a, TC_ST_COPY, loc);
  copy->u.copy.src = *r;
  copy->u.copy.dst = tc_ir_whole_region(P->a, tile);
  tc_stmt_list_push(P->a, before, copy);
  return tile;
}

static void note(tc_gpu_plan *P, tc_loc l, const char *operand, const char *buf, bool fragment, const char *tile, const char *why) {
  if (!P->notes) return;
  if (l.src) tc_sb_printf(P->notes, "%s:%d:%d: ", l.src->name, l.line, l.col);
  tc_sb_printf(P->notes, "T.gemm: %s ('%s')%s is copied to a shared tile '%s' first (%s)\n", operand, buf,
               fragment ? " is a fragment; it" : "", tile, why);
}

static bool stage_cb(void *ctx, tc_stmt *s) {
  stage_ctx *S = ctx;
  tc_gpu_plan *P = S->P;
  if (s->kind != TC_ST_GEMM) return true;
  bool a_part = partial_shared(&s->u.gemm.a), b_part = partial_shared(&s->u.gemm.b);
  bool b = frag_operand(&s->u.gemm.b) || b_part, a = (frag_operand(&s->u.gemm.a) && wants_staged_a(P, s)) || a_part;
  if (!a && !b) return true;
  tc_stmt_list seq = {0};
  tc_stmt *gemm = tc_ir_stmt(P->a, TC_ST_GEMM, s->loc);
  *gemm = *s;
  const char *fa = s->u.gemm.a.buf->name, *fb = s->u.gemm.b.buf->name;
  tc_buffer *ta = a ? staged_tile(S, &s->u.gemm.a, &seq, s->loc) : NULL;
  tc_buffer *tb = b ? staged_tile(S, &s->u.gemm.b, &seq, s->loc) : NULL;
  if (!ta && !tb) return true;
  static const char part[] = "it is part of a shared tile, and the matrix instructions read whole tiles";
  if (ta) {
    gemm->u.gemm.a = tc_ir_whole_region(P->a, ta);
    note(P, s->loc, "A", fa, !a_part, ta->name, a_part ? part : "its registers are laid out for other statements, not as this gemm's operand");
  }
  if (tb) {
    gemm->u.gemm.b = tc_ir_whole_region(P->a, tb);
    note(P, s->loc, "B", fb, !b_part, tb->name, b_part ? part : "the matrix instructions read B from shared memory");
  }
  tc_stmt_list_push(P->a, &seq, gemm);
  *s = *tc_stmt_list_seq(P->a, &seq, s->loc);
  return false; /* the new copies and gemm need nothing more */
}

bool tc_gpu_stage_operands(tc_gpu_plan *P) {
  stage_ctx S = {.P = P};
  tc_visit_stmts(P->k->body, stage_cb, &S);
  if (!S.allocs.n) return true;
  tc_stmt_list_push(P->a, &S.allocs, P->k->body);
  P->k->body = tc_stmt_list_seq(P->a, &S.allocs, P->k->body->loc);
  return true;
}
