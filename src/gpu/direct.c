/* direct.c: Metal 4's direct-global matmul2d (docs/metal.md). On Apple's unified memory a
 * threadgroup tile that only stages a gemm operand is an extra copy and a barrier: matmul2d
 * reads its operands straight from device memory. A T.gemm whose A and B are each such a tile
 *
 *   T.copy(G[r0, c0], S)   ... only other T.copy into shared tiles in between ...   T.gemm(S, ...)
 *
 * (S a 2-D shared tile written by that copy alone and read by that gemm alone, G a 2-D global
 * tensor of S's dtype, the copy's region exactly S's shape) gets G's region as its operand: the
 * copies and the tiles' allocations go, and with them the threadgroup memory and the barriers.
 * Elements of the region outside G read as zero in matmul2d, as T.copy's bounds checks give
 * them (the MPP tensor's extents are G's). Runs before the allocations are collected, after the
 * pipeline pass (which stages nothing on Metal). */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "gpu/gpu_internal.h"
#include "ir/walk.h"

typedef struct use_ctx {
  int *uses;        /* by buffer id: statements that reference it */
  tc_stmt **last;   /* by buffer id: the last of them (counted once per statement) */
  tc_stmt *cur;
  int n;
} use_ctx;

static void count_buf(void *ctx, const tc_buffer *b, bool write) {
  (void)write;
  use_ctx *U = ctx;
  if (!b || b->id < 0 || b->id >= U->n || U->last[b->id] == U->cur) return;
  U->last[b->id] = U->cur;
  U->uses[b->id]++;
}

/* Buffers the access walk does not see: any inside an intrinsic's arguments, and any whose
 * address is taken; they count as used too often to be staging. */
static void pin_expr(use_ctx *U, const tc_expr *e) {
  if (!e) return;
  if (e->buf && e->buf->id >= 0 && e->buf->id < U->n) U->uses[e->buf->id] += 2;
  for (int i = 0; i < e->nargs && e->args; i++) pin_expr(U, e->args[i]);
}
static tc_expr *pin_address_cb(void *ctx, tc_expr *e) {
  use_ctx *U = ctx;
  if (e->op == TC_OP_ADDRESS_OF && e->buf && e->buf->id >= 0 && e->buf->id < U->n) U->uses[e->buf->id] += 2;
  return e;
}

static bool count_cb(void *ctx, tc_stmt *s) {
  use_ctx *U = ctx;
  U->cur = s;
  tc_access_fns f = {.buf = count_buf, .ctx = U};
  tc_stmt_accesses(&f, s, false); /* an allocation without an initial value is no use */
  if (s->kind == TC_ST_INTRINSIC)
    for (int i = 0; i < s->u.intrinsic.nargs; i++) pin_expr(U, s->u.intrinsic.args[i]);
  return true;
}

typedef struct direct_ctx {
  tc_gpu_plan *P;
  use_ctx U;
  int *gemms; /* by buffer id: gemms accumulating into it */
  tc_buffer **drop; /* shared tiles whose allocations go */
  int ndrop, capdrop;
} direct_ctx;

static bool count_gemms_cb(void *ctx, tc_stmt *s) {
  direct_ctx *D = ctx;
  if (s->kind == TC_ST_GEMM && s->u.gemm.c.buf && s->u.gemm.c.buf->id >= 0 && s->u.gemm.c.buf->id < D->U.n) D->gemms[s->u.gemm.c.buf->id]++;
  return true;
}

/* Index in seq of the copy that alone writes S before item g, or -1 with why filled. */
static int staging_copy(direct_ctx *D, tc_stmt *seq, int g, const tc_buffer *S, const char *which, char *why, size_t cap) {
  int64_t shape[2];
  if (S->scope != TC_SCOPE_SHARED || S->ndim != 2 || !tc_buffer_const_shape(S, shape)) {
    snprintf(why, cap, "%s is not a 2-D shared tile", which);
    return -1;
  }
  /* the swizzle is a placement only (Metal reads row-major, lower.c); another layout is not */
  if (S->layout && !(S->layout->name && !strcmp(S->layout->name, "swizzle"))) {
    snprintf(why, cap, "%s ('%s') has an annotated layout", which, S->name);
    return -1;
  }
  if (D->U.uses[S->id] != 2) {
    snprintf(why, cap, "%s ('%s') is used by more than its T.copy and this T.gemm", which, S->name);
    return -1;
  }
  for (int i = g - 1; i >= 0; i--) {
    tc_stmt *c = seq->u.seq.items[i];
    if (c->kind != TC_ST_COPY || !c->u.copy.dst.buf || c->u.copy.dst.buf->scope != TC_SCOPE_SHARED) break;
    if (c->u.copy.dst.buf != S) continue;
    const tc_region *src = &c->u.copy.src;
    if (!src->buf || src->buf->scope != TC_SCOPE_GLOBAL || tc_layout_on_global(src->buf) || src->buf->ndim != 2 || src->ndim != 2 ||
        !tc_dtype_eq(src->buf->dtype, S->dtype)) {
      snprintf(why, cap, "%s ('%s') is not copied from a 2-D global tensor of its dtype", which, S->name);
      return -1;
    }
    for (int d = 0; d < 2; d++) {
      int64_t s0;
      if (src->r[d].extent != shape[d] || c->u.copy.dst.r[d].extent != shape[d] || !tc_expr_const_int(c->u.copy.dst.r[d].start, &s0) ||
          s0) {
        snprintf(why, cap, "%s ('%s') is not copied whole from a region of its shape", which, S->name);
        return -1;
      }
    }
    return i;
  }
  snprintf(why, cap, "%s ('%s') is not staged by a T.copy right before the T.gemm", which, S->name);
  return -1;
}

static void note(direct_ctx *D, tc_loc loc, const char *why) {
  tc_strbuf *n = D->P->notes;
  if (!n) return;
  if (loc.src) tc_sb_printf(n, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
  tc_sb_printf(n, "not direct-global: %s\n", why);
}

static void try_gemm(direct_ctx *D, tc_stmt *seq, int g) {
  tc_gpu_plan *P = D->P;
  tc_stmt *s = seq->u.seq.items[g];
  tc_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
  int64_t as[2];
  /* matmul2d holds exactly the accumulators the metal target moved to its scope */
  if (!A || !B || !C || C->scope != TC_SCOPE_METAL_COOPERATIVE_TENSOR || A->ndim != 2 || !tc_buffer_const_shape(A, as)) return;
  if (tc_scope_in_registers(A->scope)) return; /* the RS form: A's left inputs come from registers */
  char why[200];
  if (A == B) {
    note(D, s->loc, "A and B are the same tile");
    return;
  }
  if (D->gemms[C->id] != 1) { /* the first gemm into C decides its layout (layout.c): keep them alike */
    note(D, s->loc, "another T.gemm accumulates into the same fragment");
    return;
  }
  int ia = staging_copy(D, seq, g, A, "A", why, sizeof why);
  int ib = ia < 0 ? -1 : staging_copy(D, seq, g, B, "B", why, sizeof why);
  if (ia < 0 || ib < 0) {
    note(D, s->loc, why);
    return;
  }
  tc_stmt *ca = seq->u.seq.items[ia], *cb = seq->u.seq.items[ib];
  s->u.gemm.a = ca->u.copy.src;
  s->u.gemm.b = cb->u.copy.src;
  seq->u.seq.items[ia] = tc_ir_stmt(P->a, TC_ST_SEQ, ca->loc);
  seq->u.seq.items[ib] = tc_ir_stmt(P->a, TC_ST_SEQ, cb->loc);
  for (int i = 0; i < 2; i++) {
    if (D->ndrop == D->capdrop) {
      int nc = D->capdrop ? 2 * D->capdrop : 8;
      tc_buffer **nd = TC_NEW_ARRAY(P->a, tc_buffer *, nc);
      if (D->ndrop) memcpy(nd, D->drop, sizeof *nd * (size_t)D->ndrop);
      D->drop = nd, D->capdrop = nc;
    }
    D->drop[D->ndrop++] = i ? B : A;
  }
}

static bool gemm_cb(void *ctx, tc_stmt *s) {
  direct_ctx *D = ctx;
  if (s->kind != TC_ST_SEQ) return true;
  for (int i = 0; i < s->u.seq.n; i++)
    if (s->u.seq.items[i]->kind == TC_ST_GEMM) try_gemm(D, s, i);
  return true;
}

static bool drop_allocs_cb(void *ctx, tc_stmt *s) {
  direct_ctx *D = ctx;
  if (s->kind != TC_ST_SEQ) return true;
  for (int i = 0; i < s->u.seq.n; i++) {
    tc_stmt *it = s->u.seq.items[i];
    if (it->kind != TC_ST_ALLOC) continue;
    for (int j = 0; j < D->ndrop; j++)
      if (it->u.alloc.buf == D->drop[j]) s->u.seq.items[i] = tc_ir_stmt(D->P->a, TC_ST_SEQ, it->loc);
  }
  return true;
}

bool tc_gpu_matmul2d_direct(tc_gpu_plan *P) {
  if (!P->desc->matmul2d) return true;
  tc_kernel_ir *k = P->k;
  int n = tc_kernel_max_id(k) + 1;
  direct_ctx D = {.P = P};
  D.U.n = n;
  D.U.uses = TC_NEW_ARRAY(P->a, int, n);
  D.U.last = TC_NEW_ARRAY(P->a, tc_stmt *, n);
  D.gemms = TC_NEW_ARRAY(P->a, int, n);
  tc_visit_stmts(k->body, count_gemms_cb, &D);
  tc_visit_stmts(k->body, count_cb, &D.U);
  tc_rewrite_stmt_exprs(k->body, pin_address_cb, &D.U);
  tc_visit_stmts(k->body, gemm_cb, &D);
  if (D.ndrop) tc_visit_stmts(k->body, drop_allocs_cb, &D);
  return true;
}
