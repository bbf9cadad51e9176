/* overlap.c: a consumer warpgroup overlaps its softmax with its own second gemm
 * (FlashAttention-3's intra-warpgroup overlap).
 *
 * In a warp-specialized loop (pipeline.c) whose consumer part is
 *
 *     for k:  W(k)  pre(k)  G1(k)  X(k)  G2(k)  A(k)
 *
 * (W: the wait for stage k; G1, G2: wgmma gemms that return with their result, attention's
 * S = Q K^T and O += P V; X: the work between them, the online softmax; A: the arrivals that
 * free stage k), each warpgroup idles the tensor cores from G1's end to G2's start. Rotated, the
 * loop issues G2 of iteration k-1 right behind G1 of iteration k, so that X(k) runs while G2(k-1)
 * does:
 *
 *     k = 0:      W pre G1 X                                (G1 awaited)
 *     0 < k < n:  W pre G1 G2(k-1) Xa wgmma_wait(0) A(k-1) Xb
 *                 (G1 returns at once; G2 returns once G1 has finished: wait 1)
 *     k = n - 1:  G2 A                                     (G2 awaited)
 *
 * Xa is the part of X before the first statement that conflicts with G2 (one that writes what G2
 * reads or writes, or reads what it writes: attention's P = cast(S) and O *= scale); Xb the rest.
 *
 * The rotation keeps the loop's meaning because G2(k-1) and A(k-1) move only past W(k), pre(k)
 * and G1(k), which the pass checks touch nothing G2 writes and write nothing G2 reads; run
 * serially (the interpreter) the rotated loop computes what the loop did. Stage k-1, which G2(k-1)
 * reads, stays valid until A(k-1) frees it; a warp-specialized loop has at least two stages, so
 * the producers of iteration k fill another one. In the IR the consumer part is
 *
 *     [LET c = k, IF(k == first, PRO, STEADY), IF(k == last, EPI)]
 *
 * with the loop marked ws_rotated, which a target prints as the three parts in turn (no branch
 * in the loop; cuda's codegen.c). With turns at the tensor cores (pingpong.c), a warpgroup's turn
 * covers the issue of G1(k) and G2(k-1). */
#include "gpu/gpu_internal.h"
#include "ir/walk.h"

#include <string.h>

/* The buffers a statement reads and writes; intrinsics other than gemm_block read and write
 * every buffer whose address they take. */
typedef struct bufset {
  const tc_buffer *v[32];
  int n;
  bool overflow;
} bufset;

static void add(bufset *s, const tc_buffer *b) {
  if (!b) return;
  for (int i = 0; i < s->n; i++)
    if (s->v[i] == b) return;
  if (s->n == 32) s->overflow = true;
  else s->v[s->n++] = b;
}

static bool meets(const bufset *x, const bufset *y) {
  if (x->overflow || y->overflow) return true;
  for (int i = 0; i < x->n; i++)
    for (int j = 0; j < y->n; j++)
      if (x->v[i] == y->v[j]) return true;
  return false;
}

typedef struct access {
  bufset r, w;
  bool opaque; /* an address taken outside a gemm_block: read and written */
} access;

static tc_expr *reads_cb(void *ctx, tc_expr *e) {
  access *A = ctx;
  if (e->op == TC_OP_LOAD) add(&A->r, e->buf);
  if (e->op == TC_OP_ADDRESS_OF) {
    add(&A->r, e->buf);
    if (A->opaque) add(&A->w, e->buf);
  }
  return e;
}

static void written_cb(void *ctx, tc_buffer *b, tc_stmt *where) {
  (void)where;
  add(&((access *)ctx)->w, b);
}


static bool stmt_access_cb(void *ctx, tc_stmt *s) {
  access *A = ctx;
  tc_stmt_written_buffers(s, written_cb, A);
  if (tc_gpu_is_intrinsic(s, "gemm_block") && s->u.intrinsic.nargs == 14) {
    const tc_expr *c = s->u.intrinsic.args[12];
    if (c->op == TC_OP_ADDRESS_OF) add(&A->w, c->buf);
  } else if (s->kind == TC_ST_INTRINSIC) {
    A->opaque = true;
  }
  return true;
}

/* Adds what s reads and writes to A. */
static void access_of(access *A, tc_stmt *s) {
  access t = {0};
  tc_visit_stmts(s, stmt_access_cb, &t);
  tc_rewrite_stmt_exprs(s, reads_cb, &t);
  for (int i = 0; i < t.r.n; i++) add(&A->r, t.r.v[i]);
  for (int i = 0; i < t.w.n; i++) add(&A->w, t.w.v[i]);
  A->r.overflow |= t.r.overflow, A->w.overflow |= t.w.overflow;
}

/* Whether running b before a (or beside it) changes nothing: neither writes what the other
 * reads or writes. */
static bool conflict(const access *a, const access *b) { return meets(&a->w, &b->r) || meets(&a->w, &b->w) || meets(&a->r, &b->w); }

/* A wgmma gemm_block that returns with its accumulator final. */
static bool sync_wgmma(const tc_stmt *s) {
  int64_t instr = -1, wait = -1;
  return tc_gpu_is_intrinsic(s, "gemm_block") && s->u.intrinsic.nargs == 14 && tc_expr_const_int(s->u.intrinsic.args[7], &instr) &&
         instr == 1 && tc_expr_const_int(s->u.intrinsic.args[13], &wait) && wait == 0;
}

/* Vars a statement refers to that a LET or ASSIGN of the consumer part (other than the count)
 * defines: G2 and A may only use the count, the loop's variable and names from outside. */
typedef struct defs {
  const tc_var *v[64];
  int n;
  bool hit;
} defs;
static bool defs_cb(void *ctx, tc_stmt *s) {
  defs *D = ctx;
  if ((s->kind == TC_ST_LET || s->kind == TC_ST_ASSIGN) && D->n < 64) D->v[D->n++] = s->u.let.var;
  if (s->kind == TC_ST_FOR && D->n < 64) D->v[D->n++] = s->u.loop.var;
  return true;
}
static tc_expr *uses_cb(void *ctx, tc_expr *e) {
  defs *D = ctx;
  if (e->op == TC_OP_VAR)
    for (int i = 0; i < D->n; i++)
      if (D->v[i] == e->var) D->hit = true;
  return e;
}

/* A copy of s for the previous iteration: the count and the loop variable one less. */
typedef struct prev_ctx {
  tc_arena *a;
  const tc_var *count, *k;
} prev_ctx;
static tc_expr *prev_cb(void *ctx, tc_expr *e) {
  prev_ctx *C = ctx;
  if (e->op == TC_OP_VAR && (e->var == C->count || e->var == C->k)) {
    tc_expr *one = tc_ir_int(C->a, 1, e->dtype, e->loc);
    return tc_ir_binary(C->a, TC_OP_SUB, tc_ir_var_ref(C->a, e->var, e->loc), one, e->loc);
  }
  return e;
}
static tc_stmt *previous(prev_ctx *C, const tc_stmt *s) {
  tc_stmt *c = tc_ir_clone_stmt(C->a, s);
  tc_rewrite_stmt_exprs(c, prev_cb, C);
  return c;
}

static tc_stmt *wait_at(tc_arena *a, tc_stmt *gemm, int wait) {
  tc_stmt *c = tc_ir_clone_stmt(a, gemm);
  tc_expr **args = TC_NEW_ARRAY(a, tc_expr *, 14);
  memcpy(args, c->u.intrinsic.args, sizeof *args * 14);
  args[13] = tc_ir_int(a, wait, args[13]->dtype, gemm->loc);
  c->u.intrinsic.args = args;
  return c;
}

static void push(tc_arena *a, tc_stmt_set *l, tc_stmt *s) { tc_gpu_flatten(a, l, s); }
static tc_stmt *seq(tc_arena *a, const tc_stmt_set *l, tc_loc loc) { return tc_ir_seq(a, l->n, l->v, loc); }

/* Why the loop's consumer part is not rotated, or NULL with the positions filled. */
typedef struct shape {
  int g1, g2;   /* the gemms */
  int x0;       /* X's first statement (after G1 and its turn pass) */
  int split;    /* Xb's first statement (g2 when X has no conflict with G2) */
  bool turn;    /* G1 is followed by the turn's pass */
} shape;

static const char *refusal(const tc_stmt_set *f, const tc_stmt *loop, shape *S) {
  const tc_stmt *let = f->n ? f->v[0] : NULL;
  if (!let || let->kind != TC_ST_LET || let->u.let.value->op != TC_OP_VAR || let->u.let.value->var != loop->u.loop.var)
    return "internal: the consumer part does not begin with its count";
  S->g1 = S->g2 = -1;
  for (int i = 0; i < f->n; i++) {
    if (!tc_gpu_is_intrinsic(f->v[i], "gemm_block")) continue;
    if (!sync_wgmma(f->v[i])) return "an asynchronous wgmma mainloop";
    if (S->g1 < 0) S->g1 = i;
    else if (S->g2 < 0) S->g2 = i;
    else return "more than two gemms in the loop";
  }
  if (S->g2 < 0) return "fewer than two gemms in the loop";
  for (int i = S->g2 + 1; i < f->n; i++)
    if (!tc_gpu_is_intrinsic(f->v[i], "mbar_arrive_warp")) return "work after the second gemm";
  S->turn = tc_gpu_is_intrinsic(f->v[S->g1 + 1], "wg_turn_pass");
  S->x0 = S->g1 + 1 + S->turn;
  if (S->x0 == S->g2) return "no work between the gemms";
  /* G2 and the arrivals move past W, pre and G1 of the next iteration */
  access g2 = {0}, before = {0};
  tc_stmt *g2s = f->v[S->g2];
  access_of(&g2, g2s);
  for (int i = 1; i <= S->g1; i++) access_of(&before, f->v[i]);
  if (conflict(&g2, &before)) return "the second gemm uses what the first one, or the work before it, writes";
  defs D = {0};
  for (int i = 1; i < S->g2; i++) tc_visit_stmts(f->v[i], defs_cb, &D);
  for (int i = S->g2; i < f->n; i++) tc_rewrite_stmt_exprs(f->v[i], uses_cb, &D);
  if (D.hit) return "the second gemm uses names the loop body defines";
  S->split = S->g2;
  for (int i = S->x0; i < S->g2 && S->split == S->g2; i++) {
    access x = {0};
    access_of(&x, f->v[i]);
    if (conflict(&x, &g2)) S->split = i;
  }
  return NULL;
}

static void rotate(tc_gpu_plan *P, tc_stmt *loop) {
  tc_arena *a = P->a;
  tc_loc loc = loop->loc;
  tc_stmt_set f = {0};
  push(a, &f, loop->u.loop.body->u.seq.items[1]);
  shape S;
  const char *why = refusal(&f, loop, &S);
  if (why) {
    if (P->notes && strcmp(why, "an asynchronous wgmma mainloop") && strcmp(why, "fewer than two gemms in the loop"))
      tc_sb_printf(P->notes, "T.Pipelined: the consumers await each gemm before the work after it (no overlap: %s)\n", why);
    return;
  }
  prev_ctx C = {a, f.v[0]->u.let.var, loop->u.loop.var};
  tc_stmt_set pro = {0}, steady = {0}, epi = {0};
  for (int i = 1; i < S.g2; i++) push(a, &pro, f.v[i]);
  for (int i = 1; i < S.g1; i++) push(a, &steady, tc_ir_clone_stmt(a, f.v[i]));
  push(a, &steady, wait_at(a, f.v[S.g1], -1));
  push(a, &steady, wait_at(a, previous(&C, f.v[S.g2]), 1));
  if (S.turn) push(a, &steady, tc_ir_clone_stmt(a, f.v[S.g1 + 1]));
  for (int i = S.x0; i < S.split; i++) push(a, &steady, tc_ir_clone_stmt(a, f.v[i]));
  tc_expr **w0 = TC_NEW_ARRAY(a, tc_expr *, 1);
  w0[0] = tc_ir_int(a, 0, tc_index_dtype(), loc);
  push(a, &steady, tc_ir_intrinsic_stmt(a, "wgmma_wait", 1, w0, loc));
  for (int i = S.g2 + 1; i < f.n; i++) push(a, &steady, previous(&C, f.v[i]));
  for (int i = S.split; i < S.g2; i++) push(a, &steady, tc_ir_clone_stmt(a, f.v[i]));
  for (int i = S.g2; i < f.n; i++) push(a, &epi, f.v[i]);

  tc_var *k = loop->u.loop.var;
  tc_expr *first = tc_ir_clone_expr(a, loop->u.loop.min);
  tc_expr *last = tc_ir_binary(a, TC_OP_SUB, tc_ir_binary(a, TC_OP_ADD, tc_ir_clone_expr(a, loop->u.loop.min),
                                                          tc_ir_clone_expr(a, loop->u.loop.extent), loc),
                               tc_ir_int(a, 1, loop->u.loop.extent->dtype, loc), loc);
  tc_stmt *pick = tc_ir_if_then(a, tc_ir_binary(a, TC_OP_EQ, tc_ir_var_ref(a, k, loc), first, loc), seq(a, &pro, loc), loc);
  pick->u.if_.else_s = seq(a, &steady, loc);
  tc_stmt *items[3] = {f.v[0], pick,
                       tc_ir_if_then(a, tc_ir_binary(a, TC_OP_EQ, tc_ir_var_ref(a, k, loc), last, loc), seq(a, &epi, loc), loc)};
  tc_stmt **v = TC_NEW_ARRAY(a, tc_stmt *, 3);
  memcpy(v, items, sizeof items);
  loop->u.loop.body->u.seq.items[1] = tc_ir_seq(a, 3, v, loc);
  loop->u.loop.ws_rotated = true;
  if (P->notes)
    tc_sb_printf(P->notes, "T.Pipelined: each consumer warpgroup issues the second gemm of block k-1 behind the first gemm of block "
                           "k and runs the work between them while it runs (FlashAttention-3's intra-warpgroup overlap)\n");
}

bool tc_gpu_overlap(tc_gpu_plan *P) {
  if (!P->desc->wgmma || !P->k->producer_threads) return true;
  tc_gpu_each_ws_loop(P, P->k->body, rotate);
  return !P->failed;
}
