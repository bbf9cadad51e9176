/* eval_kernels.c: several `with T.Kernel(...)` blocks in one prim_func (issue 10).
 *
 * TileLang launches each block as its own kernel, one after the other. tilec's kernel is one
 * launch, so the blocks become one launch: its grid is the largest of theirs on each axis, every
 * block's body runs under a guard that keeps it to its own grid (block indices past its extent
 * skip it; axes it does not have must be 0), and the blocks share the launch's block indices.
 * That has the sequential meaning exactly when no block depends on another: the blocks of one
 * launch do not wait for each other. So the reader fuses blocks that touch disjoint tensors for
 * every tensor one of them writes (a postprocess that converts dQ in one block and dK, dV in
 * another), and refuses, with the tensor named, a block that reads or writes a tensor an earlier
 * block writes, or writes one an earlier block reads (a split kernel and the combine that reads
 * its partial results need two launches: two prim_funcs in tilec). The threads of the blocks
 * must agree, since the launch has one block shape. The result is an ordinary kernel, so every
 * target builds it as it builds any kernel whose tile operations sit under a condition on the
 * block index. */
#include "analysis/analysis.h"
#include "front/eval_int.h"

#include <string.h>

static const char *const axis_names[] = {"bx", "by", "bz"};

void ev_kernel_fuse_begin(tc_ev *ev, tc_ev_fuse *f, int n, tc_expr *const *grid, const int threads[3], int threads_ndim,
                          tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  int64_t t0 = 1, t1 = 1;
  for (int i = 0; i < 3; i++) t0 *= k->threads[i], t1 *= threads[i];
  if (threads_ndim != k->threads_ndim || memcmp(threads, k->threads, sizeof k->threads) != 0)
    ev_fail(ev, loc,
            "the 'with T.Kernel(...)' blocks of a prim_func run as one launch in tilec, so they need the same threads=; "
            "this one has %lld threads and the first %lld (write them as separate prim_funcs)",
            (long long)t1, (long long)t0);
  memset(f, 0, sizeof *f);
  f->old_body = k->body;
  f->old_ndim = k->grid_ndim;
  f->new_ndim = n;
  int fused = n > k->grid_ndim ? n : k->grid_ndim;
  for (int i = 0; i < fused; i++) {
    tc_expr *a = i < k->grid_ndim ? k->grid[i] : NULL, *b = i < n ? grid[i] : NULL;
    f->old_grid[i] = a;
    f->new_grid[i] = b;
    int64_t ca = 1, cb = 1;
    bool ka = !a || tc_expr_const_int(a, &ca), kb = !b || tc_expr_const_int(b, &cb);
    if (ka && kb) k->grid[i] = tc_ir_int(ev->ir, ca > cb ? ca : cb, tc_index_dtype(), loc);
    else if (!a || !b) k->grid[i] = tc_ir_clone_expr(ev->ir, a ? a : b);
    else k->grid[i] = tc_ir_binary(ev->ir, TC_OP_MAX, tc_ir_clone_expr(ev->ir, a), tc_ir_clone_expr(ev->ir, b), loc);
    if (!k->block_idx[i]) { /* the guards need every axis's index, bound by `as` or not */
      k->block_idx[i] = tc_ir_new_var(ev->ir, k, axis_names[i], tc_index_dtype(), TC_VAR_BLOCK_IDX, loc);
      k->block_idx[i]->axis = i;
    }
  }
  k->grid_ndim = fused;
}

/* The condition that keeps a block to its own grid inside the fused one, or NULL when its grid
 * is the fused grid. An axis the block lacks has extent 1 there. */
static tc_expr *guard(tc_ev *ev, tc_expr *const *own, int fused, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  tc_expr *cond = NULL;
  for (int i = 0; i < fused; i++) {
    int64_t c_own = 1, c_all;
    bool known = !own[i] || tc_expr_const_int(own[i], &c_own);
    if (known && tc_expr_const_int(k->grid[i], &c_all) && c_own == c_all) continue;
    if (own[i] == k->grid[i]) continue;
    tc_expr *lim = own[i] ? tc_ir_clone_expr(ev->ir, own[i]) : tc_ir_int(ev->ir, 1, tc_index_dtype(), loc);
    tc_expr *c = tc_ir_binary(ev->ir, TC_OP_LT, tc_ir_var_ref(ev->ir, k->block_idx[i], loc), lim, loc);
    cond = cond ? tc_ir_binary(ev->ir, TC_OP_AND, cond, c, loc) : c;
  }
  return cond;
}

static tc_stmt *guarded(tc_ev *ev, tc_stmt *body, tc_expr *cond, tc_loc loc) {
  if (!cond) return body;
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_IF, loc);
  s->u.if_.cond = cond;
  s->u.if_.then_s = body;
  return s;
}

/* The global tensors a block reads and writes, by parameter index (a view counts as the tensor
 * it views). */
typedef struct touched {
  int n;
  bool *read, *write;
} touched;

static void on_buf(void *ctx, const tc_buffer *b, bool write) {
  touched *t = ctx;
  b = tc_buffer_storage(b);
  if (!b || b->param_index < 0 || b->param_index >= t->n) return;
  if (write) t->write[b->param_index] = true;
  else t->read[b->param_index] = true;
}

static touched touches(tc_ev *ev, const tc_stmt *s) {
  int n = ev->k->nparams;
  touched t = {n, EV_NEW_ARRAY(ev, bool, n > 0 ? n : 1), EV_NEW_ARRAY(ev, bool, n > 0 ? n : 1)};
  tc_access_fns fns = {NULL, on_buf, &t};
  if (s) tc_stmt_accesses(&fns, s, true);
  return t;
}

void ev_kernel_fuse_end(tc_ev *ev, const tc_ev_fuse *f, tc_stmt *body, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  touched a = touches(ev, f->old_body), b = touches(ev, body);
  for (int i = 0; i < k->nparams; i++) {
    const char *why = a.write[i] && (b.read[i] || b.write[i]) ? (b.write[i] ? "writes" : "reads")
                      : b.write[i] && a.read[i]               ? "writes"
                                                              : NULL;
    if (why)
      ev_fail(ev, loc,
              "this 'with T.Kernel(...)' block %s '%s', which an earlier block of the prim_func %s: tilec runs the blocks "
              "of a prim_func as one launch, whose blocks do not wait for each other, so a block that depends on another "
              "must be a prim_func of its own",
              why, k->params[i].name, a.write[i] ? "writes" : "reads");
  }
  tc_stmt *items[2] = {guarded(ev, f->old_body, guard(ev, f->old_grid, k->grid_ndim, loc), loc),
                       guarded(ev, body, guard(ev, f->new_grid, k->grid_ndim, loc), loc)};
  k->body = tc_ir_seq(ev->ir, 2, items, loc);
}
