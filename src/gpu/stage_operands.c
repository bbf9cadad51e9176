/* stage_operands.c: a T.gemm whose B operand is a fragment reads it from a shared tile instead
 * (the first step of tc_gpu_lower). The GPU's matrix instructions take B from shared memory
 * only (A may come from registers), while TileLang kernels compute B in registers too (kda's
 * backward pass: a gated K in a fragment). The gemm becomes a T.copy of the fragment into a new
 * shared tile of its shape, allocated once per block, and the gemm reads that tile; the barrier
 * pass then orders the copy's writes before the gemm's reads, and the next copy after them. */
#include "gpu/gpu_internal.h"
#include "ir/walk.h"
#include "util/strbuf.h"

typedef struct stage_ctx {
  tc_gpu_plan *P;
  tc_stmt_list allocs;
} stage_ctx;

static bool stage_cb(void *ctx, tc_stmt *s) {
  stage_ctx *S = ctx;
  tc_gpu_plan *P = S->P;
  if (s->kind != TC_ST_GEMM || !s->u.gemm.b.buf || s->u.gemm.b.buf->scope != TC_SCOPE_FRAGMENT) return true;
  const tc_region *rb = &s->u.gemm.b;
  const tc_buffer *frag = rb->buf;
  int64_t ext[TC_GL_MAXDIM];
  if (tc_region_squeezed(rb, ext, TC_GL_MAXDIM) != 2) return true; /* lower_gemm reports it */
  tc_expr **shape = TC_NEW_ARRAY(P->a, tc_expr *, 2);
  for (int d = 0; d < 2; d++) shape[d] = tc_ir_int(P->a, ext[d], tc_index_dtype(), s->loc);
  const char *name = tc_arena_printf(P->a, "%s_staged", frag->name);
  tc_buffer *tile = tc_ir_new_buffer(P->a, P->k, name, frag->dtype, TC_SCOPE_SHARED, 2, shape, s->loc);
  tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, s->loc);
  al->u.alloc.buf = tile;
  tc_stmt_list_push(P->a, &S->allocs, al);
  tc_stmt *copy = tc_ir_stmt(P->a, TC_ST_COPY, s->loc);
  copy->u.copy.src = *rb;
  copy->u.copy.dst = tc_ir_whole_region(P->a, tile);
  tc_stmt *gemm = tc_ir_stmt(P->a, TC_ST_GEMM, s->loc);
  *gemm = *s;
  gemm->u.gemm.b = tc_ir_whole_region(P->a, tile);
  tc_stmt *items[2] = {copy, gemm};
  *s = *tc_ir_seq(P->a, 2, items, s->loc);
  if (P->notes) {
    const tc_loc l = s->loc;
    if (l.src) tc_sb_printf(P->notes, "%s:%d:%d: ", l.src->name, l.line, l.col);
    tc_sb_printf(P->notes, "T.gemm: B ('%s') is a fragment; it is copied to a shared tile '%s' first (the matrix instructions "
                 "read B from shared memory)\n", frag->name, name);
  }
  return false; /* the new copy and gemm need nothing more */
}

bool tc_gpu_stage_operands(tc_gpu_plan *P) {
  stage_ctx S = {.P = P};
  tc_visit_stmts(P->k->body, stage_cb, &S);
  if (!S.allocs.n) return true;
  tc_stmt_list_push(P->a, &S.allocs, P->k->body);
  P->k->body = tc_stmt_list_seq(P->a, &S.allocs, P->k->body->loc);
  return true;
}
