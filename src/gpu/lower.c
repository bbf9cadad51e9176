/* lower.c: the GPU lowering as a list of passes (tc_gpu_lower), and the steps between them
 * that are bookkeeping rather than passes: the thread index, register arrays for fragments,
 * which shared tiles are swizzled, and flat storage for shared buffers. */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "gpu/gpu_internal.h"
#include "ir/walk.h"
#include "pass/pass.h"

void tc_stmt_set_add(tc_arena *a, tc_stmt_set *s, tc_stmt *st) {
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    s->v = tc_arena_grow(a, s->v, sizeof(tc_stmt *) * (size_t)s->n, sizeof(tc_stmt *) * (size_t)cap);
    s->cap = cap;
  }
  s->v[s->n++] = st;
}

bool tc_stmt_set_has(const tc_stmt_set *s, const tc_stmt *st) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i] == st) return true;
  return false;
}

/* The swizzle works on 16-byte chunks within rows of R = cols * elem_bytes bytes. Rows of 32,
 * 64 or 128 bytes: chunk ^= a few bits of the row, which is what the hardware's 32/64/128-byte
 * swizzle modes do to addresses. Wider rows (R a multiple of 128) are cut into 8-row x 128-byte
 * atoms laid out one after another along the row (atom (row / 8, panel) at element
 * (row / 8) * 8 * cols + panel * 8 * P, P = 128 / elem_bytes), each swizzled as a 128-byte-row
 * tile: ldmatrix stays conflict-free and the tile is one that a wgmma descriptor can describe
 * whichever way it is read (K-major: 8-row groups 8 * R bytes apart; MN-major: 64-element panels
 * 1024 bytes apart). Atoms need the rows to be a multiple of 8. */
bool tc_gpu_swizzle_applies(int64_t rows, int64_t cols, int elem_bytes) {
  int64_t R = cols * elem_bytes;
  if (elem_bytes < 1) return false;
  if (R > 128 && R % 128 == 0) return rows % 8 == 0;
  return R == 128 || R == 64 || R == 32;
}

int64_t tc_gpu_swizzle_index(int64_t row, int64_t col, int64_t cols, int b) {
  int64_t per = 16 / b, R = cols * b, c = col / per, e = col % per;
  if (R % 128 == 0) {
    int64_t P = 128 / b, panel = col / P, cp = (col % P) / per;
    return (row >> 3) * 8 * cols + panel * 8 * P + (row & 7) * P + ((cp ^ row) & 7) * per + e;
  }
  int64_t sw = c;
  if (R == 64) sw = c ^ ((row >> 1) & 3);
  else if (R == 32) sw = c ^ ((row >> 2) & 1);
  return row * cols + sw * per + e;
}

static tc_expr *ci(tc_arena *a, int64_t v, tc_loc loc) { return tc_ir_int(a, v, tc_index_dtype(), loc); }

tc_expr *tc_gpu_swizzle_offset(tc_arena *a, tc_expr *row, tc_expr *col, int64_t cols, int b, tc_loc loc) {
  int64_t per = 16 / b, R = cols * b;
#define B2(op, x, y) tc_ir_binary(a, TC_OP_##op, x, y, loc)
#define CL(x) tc_ir_clone_expr(a, x)
  tc_expr *e = B2(FLOORMOD, CL(col), ci(a, per, loc));
  if (R % 128 == 0) {
    int64_t P = 128 / b;
    tc_expr *r7 = B2(BIT_AND, CL(row), ci(a, 7, loc));
    tc_expr *cp = B2(FLOORDIV, B2(FLOORMOD, CL(col), ci(a, P, loc)), ci(a, per, loc));
    tc_expr *sw = B2(BIT_XOR, cp, r7);
    tc_expr *off = B2(MUL, B2(SHR, CL(row), ci(a, 3, loc)), ci(a, 8 * cols, loc));
    if (R > 128) off = B2(ADD, off, B2(MUL, B2(FLOORDIV, CL(col), ci(a, P, loc)), ci(a, 8 * P, loc)));
    off = B2(ADD, off, B2(MUL, CL(r7), ci(a, P, loc)));
    return B2(ADD, B2(ADD, off, B2(MUL, sw, ci(a, per, loc))), e);
  }
  tc_expr *c = B2(FLOORDIV, CL(col), ci(a, per, loc));
  tc_expr *sw = R == 64 ? B2(BIT_XOR, c, B2(BIT_AND, B2(SHR, CL(row), ci(a, 1, loc)), ci(a, 3, loc)))
                        : B2(BIT_XOR, c, B2(BIT_AND, B2(SHR, CL(row), ci(a, 2, loc)), ci(a, 1, loc)));
  tc_expr *off = B2(ADD, B2(MUL, CL(row), ci(a, cols, loc)), B2(MUL, sw, ci(a, per, loc)));
  return B2(ADD, off, e);
#undef B2
#undef CL
}

/* ---- buffers by id ---- */
typedef struct bufs_ctx {
  tc_gpu_plan *P;
  tc_buffer **by_id;
} bufs_ctx;

static bool collect_allocs(void *ctx, tc_stmt *s) {
  bufs_ctx *B = ctx;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->id < B->P->nbufs) B->by_id[s->u.alloc.buf->id] = s->u.alloc.buf;
  return true;
}

/* Rows of a shared buffer's 2-D tile as the swizzle sees them: the next-to-last dimension when
 * leading dimensions stack tiles (stages) and it is a multiple of 8 (flat_offset), else all the
 * rows before the last dimension; 0 when not constant. */
int64_t tc_gpu_tile_rows(const tc_buffer *b) {
  int64_t shape[TC_GL_MAXDIM], rows = 1;
  if (b->ndim > TC_GL_MAXDIM || !tc_buffer_const_shape(b, shape)) return 0;
  if (b->ndim >= 3 && shape[b->ndim - 2] % 8 == 0) return shape[b->ndim - 2];
  for (int d = 0; d + 1 < b->ndim; d++) rows *= shape[d];
  return rows;
}

/* T.annotate_layout on a shared buffer: make_swizzled_layout is this target's swizzle; another
 * layout (T.Layout) places the elements as written. */
static bool annotated_cb(void *ctx, tc_stmt *s) {
  tc_gpu_plan *P = ctx;
  if (s->kind != TC_ST_ALLOC) return true;
  const tc_buffer *b = s->u.alloc.buf;
  int64_t cols;
  if (b->scope != TC_SCOPE_SHARED || !b->layout || b->layout->kind != TC_LAYOUT_SHARED || b->id >= P->nbufs) return true;
  if (b->layout->name && !strcmp(b->layout->name, "swizzle")) {
    if (!P->desc->swizzle_gemm_operands) return true; /* a placement only: row-major gives the same results */
    int bits = tc_dtype_bits(b->dtype);
    if (b->ndim >= 2 && bits >= 8 && tc_expr_const_int(b->shape[b->ndim - 1], &cols) &&
        tc_gpu_swizzle_applies(tc_gpu_tile_rows(b), cols, bits / 8))
      P->swizzle[b->id] = true;
  } else {
    P->annotated[b->id] = b->layout;
  }
  return true;
}

static bool swizzle_cb(void *ctx, tc_stmt *s) {
  tc_gpu_plan *P = ctx;
  if (s->kind != TC_ST_GEMM) return true;
  const tc_region *ops[2] = {&s->u.gemm.a, &s->u.gemm.b};
  for (int i = 0; i < 2; i++) {
    const tc_buffer *b = ops[i]->buf;
    int64_t cols;
    int bits = tc_dtype_bits(b->dtype);
    if (b->scope != TC_SCOPE_SHARED || b->ndim < 2 || !tc_expr_const_int(b->shape[b->ndim - 1], &cols)) continue;
    if (b->id < P->nbufs && P->annotated[b->id]) {
      tc_gpu_fail(P, s->loc, "T.gemm on %s reads its operands row-major or in its own swizzle; '%s' has an annotated "
                             "layout (use tilelang.layout.make_swizzled_layout, or none)", P->desc->target, b->name);
      P->failed = true;
      return false;
    }
    if ((bits == 16 || bits == 8) && P->desc->swizzle_gemm_operands &&
        tc_gpu_swizzle_applies(tc_gpu_tile_rows(b), cols, bits / 8))
      P->swizzle[b->id] = true;
  }
  return true;
}

/* ---- flat shared storage ---- */
static tc_expr *flat_offset(tc_gpu_plan *P, const tc_buffer *b, int n, tc_expr *const *idx, tc_loc loc) {
  int64_t shape[TC_GL_MAXDIM];
  tc_buffer_const_shape(b, shape);
  if (P->annotated[b->id] && P->annotated[b->id]->ndim == n) {
    return tc_layout_offset_at(P->a, P->annotated[b->id], idx);
  }
  /* Tiles stacked along leading dimensions (the stages of a pipelined tile): each tile is
   * swizzled on its own rows, which is the same placement when the rows are a multiple of the
   * swizzle's period of 8, and keeps the per-thread part of an address free of the stage, so
   * the target computes it once outside the loop. */
  if (P->swizzle[b->id] && n >= 3 && shape[n - 2] % 8 == 0) {
    tc_expr *lead = NULL;
    for (int d = 0; d + 2 < n; d++)
      lead = lead ? tc_ir_binary(P->a, TC_OP_ADD, tc_ir_binary(P->a, TC_OP_MUL, lead, ci(P->a, shape[d], loc), loc), idx[d], loc) : idx[d];
    tc_expr *tile = tc_gpu_swizzle_offset(P->a, idx[n - 2], idx[n - 1], shape[n - 1], tc_dtype_bits(b->dtype) / 8, loc);
    return tc_ir_binary(P->a, TC_OP_ADD, tc_ir_binary(P->a, TC_OP_MUL, lead, ci(P->a, shape[n - 2] * shape[n - 1], loc), loc), tile, loc);
  }
  tc_expr *row = NULL;
  for (int d = 0; d + 1 < n; d++) row = row ? tc_ir_binary(P->a, TC_OP_ADD, tc_ir_binary(P->a, TC_OP_MUL, row, ci(P->a, shape[d], loc), loc), idx[d], loc) : idx[d];
  tc_expr *col = n ? idx[n - 1] : ci(P->a, 0, loc);
  if (P->swizzle[b->id] && row) return tc_gpu_swizzle_offset(P->a, row, col, shape[n - 1], tc_dtype_bits(b->dtype) / 8, loc);
  return row ? tc_ir_binary(P->a, TC_OP_ADD, tc_ir_binary(P->a, TC_OP_MUL, row, ci(P->a, shape[n - 1], loc), loc), col, loc) : col;
}

static bool needs_flat(tc_gpu_plan *P, const tc_buffer *b) {
  return b && b->scope == TC_SCOPE_SHARED && b->id < P->nbufs && P->flat[b->id];
}

static tc_expr *flat_rewrite(void *ctx, tc_expr *e) {
  tc_gpu_plan *P = ctx;
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && needs_flat(P, e->buf)) {
    tc_expr *c = TC_NEW(P->a, tc_expr);
    *c = *e;
    c->args = TC_NEW_ARRAY(P->a, tc_expr *, 1);
    c->args[0] = flat_offset(P, e->buf, e->nargs, e->args, e->loc);
    c->nargs = 1;
    c->buf = P->flat[e->buf->id];
    return c;
  }
  return e;
}

static bool flat_stmt_cb(void *ctx, tc_stmt *s) {
  tc_gpu_plan *P = ctx;
  tc_rewrite_stmt_exprs(s, flat_rewrite, P);
  if (s->kind == TC_ST_STORE && needs_flat(P, s->u.store.buf)) {
    tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, 1);
    idx[0] = flat_offset(P, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->loc);
    s->u.store.buf = P->flat[s->u.store.buf->id];
    s->u.store.idx = idx;
    s->u.store.nidx = 1;
  } else if (s->kind == TC_ST_ATOMIC_ADD && s->u.atomic.buf && needs_flat(P, s->u.atomic.buf)) {
    tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, 1);
    idx[0] = flat_offset(P, s->u.atomic.buf, s->u.atomic.nidx, s->u.atomic.idx, s->loc);
    s->u.atomic.buf = P->flat[s->u.atomic.buf->id];
    s->u.atomic.idx = idx;
    s->u.atomic.nidx = 1;
  } else if (s->kind == TC_ST_ALLOC && needs_flat(P, s->u.alloc.buf)) {
    s->u.alloc.buf = P->flat[s->u.alloc.buf->id];
  }
  return true;
}

/* ---- fragments kept in shared memory ---- */
static bool demote_fragments(tc_gpu_plan *P, tc_buffer **by_id) {
  tc_buffer **to = TC_NEW_ARRAY(P->a, tc_buffer *, P->nbufs + 1);
  bool any = false;
  for (int id = 0; id < P->nbufs; id++) {
    if (!P->demote[id] || !by_id[id]) continue;
    tc_buffer *b = by_id[id], *nb = TC_NEW(P->a, tc_buffer);
    *nb = *b;
    nb->scope = TC_SCOPE_SHARED; /* same id: the plan's tables stay valid */
    to[id] = nb;
    by_id[id] = nb;
    any = true;
  }
  if (any) tc_replace_buffers(P->k->body, to, P->nbufs);
  return true;
}

static bool find_return_prev(void *ctx, tc_stmt *s) {
  const tc_stmt **found = ctx;
  if (s->kind == TC_ST_ATOMIC_ADD && s->u.atomic.buf && s->u.atomic.prev && !*found) *found = s;
  return !*found;
}

static bool verify_step(tc_gpu_plan *P, const char *stage) { return tc_ir_verify(P->k, stage, P->err); }

static bool find_local_view(void *ctx, tc_stmt *s) {
  const tc_buffer **view = ctx;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->view_of && s->u.alloc.buf->scope != TC_SCOPE_GLOBAL && !*view) *view = s->u.alloc.buf;
  return true;
}

/* ---- Attempts ----
 * Some choices are known to be wrong only once layouts are inferred: a gemm's A fragment that
 * other statements laid out unlike the operand (lower_gemm), a fragment a T.Parallel loop reads
 * or writes at elements its threads do not hold (tileops.c). The pass that finds one names it
 * and gives up; tc_gpu_lower then lowers the kernel again from the start with that gemm's A
 * staged through shared memory (stage_operands.c), or that fragment kept in shared memory,
 * where every thread reads every element. Each request is granted once: one that comes back
 * leaves the error as it is. */
typedef struct attempt {
  int stage_a[16], demote[16];
  tc_loc demote_at[16];
  int nstage_a, ndemote;
} attempt;

static bool number_gemm(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_GEMM) s->u.gemm.seq = ++*(int *)ctx;
  return true;
}

typedef struct demote_scan {
  tc_gpu_plan *P;
  tc_buffer **to;        /* by id: the shared tile a requested fragment becomes */
  const tc_buffer **req; /* by id: a requested fragment */
  bool *acc;             /* by id: a gemm accumulates into it */
  int n;
  tc_stmt_list allocs;   /* the shared copies read_through_cb made */
} demote_scan;

static bool requested(const tc_gpu_plan *P, const tc_buffer *b) {
  for (int i = 0; i < P->ndemote_ids; i++)
    if (P->demote_ids[i] == b->id && tc_scope_in_registers(b->scope) && !b->layout && !b->view_of) return true;
  return false;
}
static bool note_acc_cb(void *ctx, tc_stmt *s) {
  demote_scan *D = ctx;
  if (s->kind == TC_ST_GEMM && s->u.gemm.c.buf && s->u.gemm.c.buf->id < D->n) D->acc[s->u.gemm.c.buf->id] = true;
  return true;
}
static bool demote_scan_cb(void *ctx, tc_stmt *s) {
  demote_scan *D = ctx;
  if (s->kind != TC_ST_ALLOC || !requested(D->P, s->u.alloc.buf)) return true;
  const tc_buffer *b = s->u.alloc.buf;
  if (b->id >= D->n || D->to[b->id]) return true;
  D->req[b->id] = b;
  if (D->acc[b->id]) return true;
  tc_buffer *nb = TC_NEW(D->P->a, tc_buffer);
  *nb = *b;
  nb->scope = TC_SCOPE_SHARED;
  D->to[nb->id] = nb;
  return true;
}

typedef struct shared_tiles {
  bool *is_shared;
  int n;
} shared_tiles;
static bool shared_alloc_cb(void *ctx, tc_stmt *s) {
  shared_tiles *T = ctx;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->scope == TC_SCOPE_SHARED && s->u.alloc.buf->id < T->n)
    T->is_shared[s->u.alloc.buf->id] = true;
  return true;
}
/* by buffer id: the shared tiles the program itself allocates (fragments moved to shared memory
 * keep their ids but are not among them) */
static bool *program_shared_tiles(tc_arena *a, const tc_kernel_ir *k0, int *n) {
  shared_tiles T = {TC_NEW_ARRAY(a, bool, k0->next_id + 1), k0->next_id};
  tc_visit_stmts(k0->body, shared_alloc_cb, &T);
  *n = T.n;
  return T.is_shared;
}

static bool same_loc(tc_loc x, tc_loc y) { return x.src == y.src && x.line == y.line && x.col == y.col; }

typedef struct uses_scan { const tc_buffer *b; bool read, write; } uses_scan;
static void note_use(void *ctx, const tc_buffer *b, bool write) {
  uses_scan *U = ctx;
  if (b == U->b) U->read |= !write, U->write |= write;
}

/* A gemm's accumulator stays in registers: the T.Parallel loop that asked reads it through a
 * shared copy made just before the loop, where every thread reaches every element (only a loop
 * that does not write it). */
static bool read_through_cb(void *ctx, tc_stmt *s) {
  demote_scan *D = ctx;
  tc_gpu_plan *P = D->P;
  if (s->kind != TC_ST_FOR || s->u.loop.kind != TC_LOOP_PARALLEL) return true;
  for (int i = 0; i < P->ndemote_ids; i++) {
    int id = P->demote_ids[i];
    const tc_buffer *b = id < D->n && D->acc[id] ? D->req[id] : NULL;
    if (!b || !same_loc(s->loc, P->demote_at[i])) continue;
    uses_scan U = {b, false, false};
    tc_access_fns F = {NULL, note_use, &U};
    tc_stmt_accesses(&F, s, true);
    if (!U.read || U.write) continue;
    tc_buffer *copy = tc_ir_new_buffer(P->a, P->k, tc_arena_printf(P->a, "%s_read", b->name), b->dtype, TC_SCOPE_SHARED, b->ndim,
                                       b->shape, s->loc);
    tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, s->loc);
    al->u.alloc.buf = copy;
    tc_stmt_list_push(P->a, &D->allocs, al);
    tc_stmt *fill = tc_ir_stmt(P->a, TC_ST_COPY, s->loc);
    fill->u.copy.src = tc_ir_whole_region(P->a, (tc_buffer *)b);
    fill->u.copy.dst = tc_ir_whole_region(P->a, copy);
    tc_stmt *loop = tc_ir_stmt(P->a, TC_ST_FOR, s->loc);
    *loop = *s;
    tc_buffer **to = TC_NEW_ARRAY(P->a, tc_buffer *, D->n);
    to[id] = copy;
    tc_replace_buffers(loop, to, D->n);
    tc_stmt *two[2] = {fill, loop};
    *s = *tc_ir_seq(P->a, 2, two, s->loc);
    if (P->notes)
      tc_sb_printf(P->notes, "%s:%d:%d: T.Parallel: reads the accumulator '%s' through a shared copy '%s', made before the loop: "
                   "it uses elements of it that its threads do not hold\n", s->loc.src ? s->loc.src->name : "?", s->loc.line,
                   s->loc.col, b->name, copy->name);
    return false;
  }
  return true;
}

/* The fragments earlier attempts asked for, as shared tiles of the same id. */
static void demote_requested(tc_gpu_plan *P) {
  if (!P->ndemote_ids) return;
  int n = P->k->next_id + 1;
  demote_scan D = {P, TC_NEW_ARRAY(P->a, tc_buffer *, n), TC_NEW_ARRAY(P->a, const tc_buffer *, n), TC_NEW_ARRAY(P->a, bool, n), n, {0}};
  tc_visit_stmts(P->k->body, note_acc_cb, &D);
  tc_visit_stmts(P->k->body, demote_scan_cb, &D);
  bool any = false;
  for (int id = 0; id < D.n; id++) {
    if (!D.to[id]) continue;
    any = true;
    if (P->notes)
      tc_sb_printf(P->notes, "fragment '%s' is kept in shared memory: a T.Parallel loop uses elements of it that its threads "
                   "would not hold in registers\n", D.to[id]->name);
  }
  if (any) tc_replace_buffers(P->k->body, D.to, D.n);
  tc_visit_stmts(P->k->body, read_through_cb, &D);
  if (D.allocs.n) {
    tc_stmt_list_push(P->a, &D.allocs, P->k->body);
    P->k->body = tc_stmt_list_seq(P->a, &D.allocs, P->k->body->loc);
  }
}

/* One attempt at the lowering with what earlier attempts asked for (T); on failure, *ask holds
 * this attempt's request (zero: none). */
static tc_kernel_ir *lower_once(tc_arena *a, const tc_kernel_ir *k0, const tc_gpu_desc *desc, tc_strbuf *notes, tilec_error *err,
                                const attempt *T, attempt *ask) {
  tc_kernel_ir *k = TC_NEW(a, tc_kernel_ir);
  *k = *k0;
  k->body = tc_ir_clone_stmt(a, k0->body);
  int ngemms = 0;
  tc_visit_stmts(k->body, number_gemm, &ngemms);
  tc_gpu_plan plan = {.a = a, .notes = notes, .k = k, .desc = desc, .err = err, .stage_a = T->stage_a, .nstage_a = T->nstage_a,
                      .demote_ids = T->demote, .demote_at = T->demote_at, .ndemote_ids = T->ndemote, .redemote = -1};
  tc_gpu_plan *P = &plan;
  memset(ask, 0, sizeof *ask);
  P->threads = 1;
  for (int i = 0; i < k->threads_ndim; i++) P->threads *= k->threads[i];
  if (P->threads > desc->max_threads) {
    tc_gpu_fail(P, k->loc, "a block of %d threads is more than %s allows (%d)", P->threads, desc->target, desc->max_threads);
    return NULL;
  }
  /* Explicit warp specialization (src/front/eval_ws.c made it a program in order): mapped onto
   * the warp-specialized pipeline where it is a ring of stages, else run in that order, which
   * needs a target that can trap (its waits are run-time checks). */
  if (!tc_gpu_explicit_ws(P)) return NULL;
  tc_gpu_resolve_views(P);
  demote_requested(P);
  if (k->nworkspaces > 0 && !desc->workspaces) {
    tc_gpu_fail(P, k->workspaces[0]->loc, "a global workspace ('%s' = T.alloc_global(...)) is not yet supported on %s; the cpu "
                "and cuda targets run it", k->workspaces[0]->name, desc->target);
    return NULL;
  }
  if (k->nlaunches > 1 && !desc->launches) {
    tc_gpu_fail(P, k->launch_var->loc, "a kernel of %d launches, one after another (a 'with T.Kernel(...)' block that depends on an "
                "earlier one, or T.sync_grid), is not yet supported on %s; the cpu, cuda and metal targets run it", k->nlaunches, desc->target);
    return NULL;
  }
  if (k->nlaunches > 1 && notes)
    tc_sb_printf(notes, "a kernel of %d launches: the runtime launches it %d times, one after another, each block running the "
                 "'with T.Kernel(...)' blocks of its launch's number\n", k->nlaunches, k->nlaunches);
  const tc_stmt *fetch = NULL;
  tc_visit_stmts(k->body, find_return_prev, &fetch);
  if (fetch && !desc->atomic_fetch) {
    tc_gpu_fail(P, fetch->loc, "T.atomic_add(..., return_prev=True) is not yet supported on %s; the cpu target runs it", desc->target);
    return NULL;
  }
  const tc_buffer *view = NULL; /* a view of a global tensor is a pointer to it; others are not supported yet */
  tc_visit_stmts(k->body, find_local_view, &view);
  if (view) {
    tc_gpu_fail(P, view->loc, "a view of the %s buffer '%s' ('%s': T.reshape, T.view) is not yet supported on %s; the cpu target "
                "runs it, and a view of a global tensor (T.Tensor(..., X.data)) runs everywhere", tc_scope_name(view->scope),
                view->view_of->name, view->name, desc->target);
    return NULL;
  }
  for (int i = 0; i < k->nparams; i++) { /* a storage layout is applied at every access (codegen's offset_text) */
    const tc_buffer *b = k->params[i].buf;
    if (b && b->layout && !tc_layout_on_global(b)) {
      tc_gpu_fail(P, b->layout->index && b->layout->ndim ? b->layout->index[0]->loc : b->loc,
                  "a fragment layout on the global buffer '%s' has no meaning on %s", b->name, desc->target);
      return NULL;
    }
  }
  /* 0. gemms no matrix instruction can take: loops every thread runs */
  if (!tc_gpu_simt_gemms(P) || !verify_step(P, "gpu-simt-gemms")) return NULL;
  /* 0. a gemm's fragment B operand read through a shared tile */
  if (!tc_gpu_stage_operands(P) || !verify_step(P, "gpu-stage-operands")) return NULL;
  /* 0. software pipelines (creates the staged tiles, so it runs before the tables are sized) */
  tc_gpu_plan pre = {.a = a, .notes = notes, .k = k, .desc = desc, .err = err, .threads = P->threads};
  if (!tc_gpu_pipeline(&pre)) return NULL;
  P->async = pre.async;
  P->async_mma = pre.async_mma;
  /* Metal 4: gemm operands only staged in shared memory are read from global memory */
  if (!tc_gpu_matmul2d_direct(&pre)) return NULL;
  P->nbufs = k->next_id;
  P->frag = TC_NEW_ARRAY(a, tc_gpu_layout *, P->nbufs + 1);
  P->swizzle = TC_NEW_ARRAY(a, bool, P->nbufs + 1);
  P->regs = TC_NEW_ARRAY(a, tc_buffer *, P->nbufs + 1);
  P->flat = TC_NEW_ARRAY(a, tc_buffer *, P->nbufs + 1);
  tc_buffer **by_id = TC_NEW_ARRAY(a, tc_buffer *, P->nbufs + 1);
  bufs_ctx B = {P, by_id};
  tc_visit_stmts(k->body, collect_allocs, &B);

  /* the flat thread index */
  tc_stmt_list top = {0};
  tc_loc loc = k->loc;
  if (k->threads_ndim == 1) {
    P->tid = tc_ir_new_var(a, k, "tid", tc_index_dtype(), TC_VAR_THREAD_IDX, loc);
    P->tid->axis = 0;
  } else {
    tc_expr *flat = NULL;
    for (int ax = k->threads_ndim - 1; ax >= 0; ax--) {
      tc_var *t = tc_ir_new_var(a, k, ax == 0 ? "tx" : ax == 1 ? "ty" : "tz", tc_index_dtype(), TC_VAR_THREAD_IDX, loc);
      t->axis = ax;
      tc_expr *tr = tc_ir_var_ref(a, t, loc);
      flat = flat ? tc_ir_binary(a, TC_OP_ADD, tc_ir_binary(a, TC_OP_MUL, flat, ci(a, k->threads[ax], loc), loc), tr, loc) : tr;
    }
    P->tid = tc_ir_new_var(a, k, "tid", tc_index_dtype(), TC_VAR_LOCAL, loc);
    tc_stmt *let = tc_ir_stmt(a, TC_ST_LET, loc);
    let->u.let.var = P->tid;
    let->u.let.value = flat;
    tc_stmt_list_push(a, &top, let);
  }

  /* 1. layouts; fragments no layout fits become shared tiles */
  P->demote = TC_NEW_ARRAY(a, bool, P->nbufs + 1);
  if (!tc_gpu_infer_layouts(P)) return NULL;
  if (!demote_fragments(P, by_id)) return NULL;
  for (int id = 0; id < P->nbufs; id++) {
    if (!P->frag[id] || !by_id[id]) continue;
    tc_buffer *b = by_id[id];
    tc_expr **shape = TC_NEW_ARRAY(a, tc_expr *, 1);
    shape[0] = ci(a, P->frag[id]->num_regs > 0 ? P->frag[id]->num_regs : 1, b->loc);
    P->regs[id] = tc_ir_new_buffer(a, k, b->name, b->dtype, TC_SCOPE_LOCAL, 1, shape, b->loc);
  }
  P->annotated = TC_NEW_ARRAY(a, const tc_layout *, P->nbufs + 1);
  tc_visit_stmts(k->body, annotated_cb, P);
  tc_visit_stmts(k->body, swizzle_cb, P);
  if (P->failed) return NULL;
  /* 2. tile operations */
  if (!tc_gpu_lower_tileops(P)) {
    if (P->restage_a > 0) ask->stage_a[ask->nstage_a++] = P->restage_a;
    else if (P->redemote >= 0) ask->demote_at[ask->ndemote] = P->redemote_at, ask->demote[ask->ndemote++] = P->redemote;
    return NULL;
  }
  /* 3. flat shared storage */
  int nprogram = 0; /* the shared tiles the program allocated (not the lowering's) */
  bool *program_shared = program_shared_tiles(a, k0, &nprogram);
  int64_t smem = 0;
  const tc_buffer *over = NULL; /* the tile past which they do not fit one after another */
  for (int id = 0; id < P->nbufs; id++) {
    tc_buffer *b = by_id[id];
    int64_t n;
    if (!b || b->scope != TC_SCOPE_SHARED || (n = tc_buffer_numel(b)) < 0) continue;
    tc_expr **shape = TC_NEW_ARRAY(a, tc_expr *, 1);
    shape[0] = ci(a, n, b->loc);
    P->flat[id] = tc_ir_new_buffer(a, k, b->name, b->dtype, TC_SCOPE_SHARED, 1, shape, b->loc);
    P->flat[id]->program_synced = k->no_storage_sync && id < nprogram && program_shared[id];
    if (P->annotated[id]) n = P->annotated[id]->storage_elems > n ? P->annotated[id]->storage_elems : n;
    shape[0]->ival = n;
    smem += tc_gpu_tile_bytes(b->dtype, n);
    if (smem > desc->max_smem && !over) over = b;
  }
  tc_visit_stmts(k->body, flat_stmt_cb, P);
  /* scratch buffers the reductions asked for */
  tc_buffer *scr[6] = {P->scratch, P->scratch64, P->scratch_i32, P->scratch_i64, P->epi_stage[0], P->epi_stage[1]};
  for (int i = 0; i < 6; i++) {
    if (!scr[i]) continue;
    tc_stmt *al = tc_ir_stmt(a, TC_ST_ALLOC, loc);
    al->u.alloc.buf = scr[i];
    tc_stmt_list_push(a, &top, al);
  }
  tc_stmt_list_push(a, &top, k->body);
  k->body = tc_stmt_list_seq(a, &top, loc);
  if (!verify_step(P, "gpu-lower-tileops")) return NULL;
  if (!tc_gpu_hoist_combines(P) || !verify_step(P, "gpu-hoist-combines")) return NULL;
  /* 4. barriers */
  if (k->no_storage_sync && notes)
    tc_sb_printf(notes, "barriers: pass_configs tl.disable_thread_storage_sync: the program's T.sync_threads() order its "
                 "shared tiles and tensors, tilec adds none for them (only for the tiles it makes itself)\n");
  if (!tc_gpu_insert_barriers(P) || !verify_step(P, "gpu-insert-barriers")) return NULL;
  /* 4b. the consumer warpgroups' turns at the tensor cores (needs the barriers in place) */
  if (!tc_gpu_pingpong(P) || !verify_step(P, "gpu-pingpong")) return NULL;
  /* 4c. each consumer warpgroup's softmax beside its own second gemm */
  if (!tc_gpu_overlap(P) || !verify_step(P, "gpu-overlap")) return NULL;
  /* 5. fold what the unrolling left constant (register numbers, tile offsets) */
  if (!tc_pass_simplify(a, k, err) || !verify_step(P, "gpu-simplify")) return NULL;
  /* 6. when the shared tiles one after another do not fit: tiles of disjoint lifetimes share memory */
  if (over && (!tc_gpu_share_smem(P, over, smem) || !verify_step(P, "gpu-share-smem"))) return NULL;
  return k;
}

static bool granted(const int *v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* a fragment is demoted once; an accumulator is read through a copy once per loop */
static bool granted_at(const attempt *T, int id, tc_loc at) {
  for (int i = 0; i < T->ndemote; i++)
    if (T->demote[i] == id && same_loc(T->demote_at[i], at)) return true;
  return false;
}

tc_kernel_ir *tc_gpu_lower(tc_arena *a, const tc_kernel_ir *k0, const tc_gpu_desc *desc, tc_strbuf *notes, tilec_error *err) {
  attempt T = {0}, ask;
  size_t notes_len = notes ? notes->len : 0;
  for (;;) {
    tc_kernel_ir *k = lower_once(a, k0, desc, notes, err, &T, &ask);
    if (k) return k;
    if (ask.nstage_a && T.nstage_a < 16 && !granted(T.stage_a, T.nstage_a, ask.stage_a[0])) T.stage_a[T.nstage_a++] = ask.stage_a[0];
    else if (ask.ndemote && T.ndemote < 16 && !granted_at(&T, ask.demote[0], ask.demote_at[0]))
      T.demote_at[T.ndemote] = ask.demote_at[0], T.demote[T.ndemote++] = ask.demote[0];
    else return NULL; /* nothing asked, or asked again: the error stands */
    /* again from the start: what the failed attempt noted and reported goes */
    if (notes) tc_sb_truncate(notes, notes_len);
    tc_error_clear(err);
  }
}
