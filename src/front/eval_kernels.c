/* eval_kernels.c: several `with T.Kernel(...)` blocks in one prim_func (issue 10).
 *
 * TileLang launches each block as its own kernel, one after the other. tilec keeps them in one
 * kernel: its grid is the largest of theirs on each axis, every block's body runs under a
 * guard that keeps it to its own grid (block indices past its extent skip it; axes it does not
 * have must be 0), and the blocks share the kernel's block indices. A block that touches no
 * tensor an earlier block writes (and writes none an earlier block reads) joins the launch of
 * the blocks before it: blocks of one launch do not wait for each other, and need not. A block
 * that depends on an earlier one (a split kernel's combine reading its partial results) starts
 * a new launch: the kernel is launched once more over the same grid after every block of the
 * previous launch has finished, and each body is guarded by the number of its launch as well
 * (tc_kernel_ir.nlaunches, launch_var). The interpreter and the cpu target run the launches in
 * turn; the GPU targets refuse a kernel of several launches with a file:line:col error. The
 * blocks must have the same threads, since the kernel has one block shape. */
#include "analysis/analysis.h"
#include "front/eval_int.h"

#include <string.h>

static const char *const axis_names[] = {"bx", "by", "bz"};
enum { MAX_LAUNCHES = 16 };

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

/* launch == n, as a condition */
static tc_expr *launch_is(tc_ev *ev, int n, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  return tc_ir_binary(ev->ir, TC_OP_EQ, tc_ir_var_ref(ev->ir, k->launch_var, loc), tc_ir_int(ev->ir, n, tc_index_dtype(), loc), loc);
}

static tc_expr *both(tc_ev *ev, tc_expr *a, tc_expr *b, tc_loc loc) {
  return !a ? b : !b ? a : tc_ir_binary(ev->ir, TC_OP_AND, a, b, loc);
}

void ev_kernel_fuse_end(tc_ev *ev, const tc_ev_fuse *f, tc_stmt *body, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  touched a = touches(ev, f->old_body), b = touches(ev, body);
  bool dependent = false;
  for (int i = 0; i < k->nparams; i++)
    dependent = dependent || (a.write[i] && (b.read[i] || b.write[i])) || (b.write[i] && a.read[i]);
  tc_expr *old_guard = guard(ev, f->old_grid, k->grid_ndim, loc), *new_guard = guard(ev, f->new_grid, k->grid_ndim, loc);
  if (dependent && k->nlaunches < 2) { /* the blocks so far become launch 0 */
    k->launch_var = tc_ir_new_var(ev->ir, k, "launch", tc_index_dtype(), TC_VAR_BLOCK_IDX, loc);
    k->launch_var->axis = 3;
    k->nlaunches = 1;
    old_guard = both(ev, launch_is(ev, 0, loc), old_guard, loc);
  }
  if (dependent) { /* a launch of its own, after every block before it has finished */
    if (k->nlaunches >= MAX_LAUNCHES)
      ev_fail(ev, loc, "a prim_func may launch at most %d dependent 'with T.Kernel(...)' blocks", MAX_LAUNCHES);
    new_guard = both(ev, launch_is(ev, k->nlaunches++, loc), new_guard, loc);
  } else if (k->nlaunches > 1) { /* independent of all before it: it joins the last launch */
    new_guard = both(ev, launch_is(ev, k->nlaunches - 1, loc), new_guard, loc);
  }
  tc_stmt *items[2] = {guarded(ev, f->old_body, old_guard, loc), guarded(ev, body, new_guard, loc)};
  k->body = tc_ir_seq(ev->ir, 2, items, loc);
}
