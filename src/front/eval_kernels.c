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

static tc_expr *launch_is(tc_ev *ev, int n, tc_loc loc);
static tc_stmt *guarded(tc_ev *ev, tc_stmt *body, tc_expr *cond, tc_loc loc);

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

static tc_stmt *guarded(tc_ev *ev, tc_stmt *body, tc_expr *cond, tc_loc loc) { return tc_ir_if_then(ev->ir, cond, body, loc); }

/* The global tensors a block reads and writes, by buffer id (a view counts as the tensor it
 * views). Not by parameter index: a @tilelang.jit kernel that annotates its tensors in its body
 * (`x: T.Tensor(...)`) gets its parameters only after the body has been evaluated, so while
 * its blocks are being fused no tensor has a parameter index yet (fusedmoe's two blocks, the
 * second reading what the first wrote, were once taken as independent and shared a launch). */
typedef struct touched {
  int n;
  bool *read, *write;
} touched;

static void on_buf(void *ctx, const tc_buffer *b, bool write) {
  touched *t = ctx;
  b = tc_buffer_storage(b);
  if (!b || b->scope != TC_SCOPE_GLOBAL || b->id < 0 || b->id >= t->n) return;
  if (write) t->write[b->id] = true;
  else t->read[b->id] = true;
}

static touched touches(tc_ev *ev, const tc_stmt *s) {
  int n = ev->k->next_id + 1;
  touched t = {n, EV_NEW_ARRAY(ev, bool, n), EV_NEW_ARRAY(ev, bool, n)};
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

/* The kernel's launch index, made on first need: the blocks read so far are launch 0. */
static void need_launches(tc_ev *ev, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  if (k->launch_var) return;
  k->launch_var = tc_ir_new_var(ev->ir, k, "launch", tc_index_dtype(), TC_VAR_BLOCK_IDX, loc);
  k->launch_var->axis = 3;
  k->nlaunches = 1;
}

void ev_kernel_fuse_end(tc_ev *ev, const tc_ev_fuse *f, tc_stmt *body, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  touched a = touches(ev, f->old_body), b = touches(ev, body);
  bool dependent = false;
  for (int i = 0; i < a.n; i++)
    dependent = dependent || (a.write[i] && (b.read[i] || b.write[i])) || (b.write[i] && a.read[i]);
  tc_expr *old_guard = guard(ev, f->old_grid, k->grid_ndim, loc), *new_guard = guard(ev, f->new_grid, k->grid_ndim, loc);
  if (dependent && k->nlaunches < 2) { /* the blocks so far become launch 0 */
    need_launches(ev, loc);
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

/* ---- T.sync_grid ----
 * Every block of the grid waits there for all the others (TileLang's cooperative launch). A
 * grid barrier at the top level of the kernel block is a launch boundary: the statements before
 * it are one launch, those after it the next. A block's shared, fragment and local buffers and
 * its local variables do not outlive a launch in tilec, so each must be used on one side of
 * the barrier only (the allocations themselves stay at the top); a kernel that carries one
 * across is refused, naming it. A grid barrier inside a loop or under a condition has no such
 * reading and is refused too. */
void ev_kernel_grid_sync(tc_ev *ev, tc_loc loc) {
  if (!ev->cur) ev_fail(ev, loc, "T.sync_grid must be inside 'with T.Kernel(...)'");
  if (ev->cur != ev->kernel_top)
    ev_unsupported(ev, loc, "T.sync_grid inside a loop, a condition or a T.ws body (tilec starts the kernel's next launch at a grid "
                            "barrier, so it must be in the top level of the 'with T.Kernel(...)' block)");
  if (ev->nsyncs >= (int)(sizeof ev->syncs / sizeof ev->syncs[0]) || ev->nsyncs + 1 >= MAX_LAUNCHES)
    ev_fail(ev, loc, "a kernel may have at most %d T.sync_grid calls", MAX_LAUNCHES - 1);
  ev->syncs[ev->nsyncs].at = ev->cur->n;
  ev->syncs[ev->nsyncs].loc = loc;
  ev->nsyncs++;
}

typedef struct segment_use {
  int *buf_seg, *var_seg; /* by id: the segment that first used it, -1 none */
  int nids, seg;
  const char *clash;      /* the first buffer or variable used in two segments */
} segment_use;

static void seg_buf(void *ctx, const tc_buffer *b, bool write) {
  (void)write;
  segment_use *u = ctx;
  b = tc_buffer_storage(b);
  /* tensors outlive a launch (those of a kernel that annotates them in its body have no
   * parameter index yet) */
  if (!b || b->param_index >= 0 || b->scope == TC_SCOPE_GLOBAL || b->id < 0 || b->id >= u->nids) return;
  if (u->buf_seg[b->id] < 0) u->buf_seg[b->id] = u->seg;
  else if (u->buf_seg[b->id] != u->seg && !u->clash) u->clash = b->name;
}

static void seg_var(void *ctx, const tc_var *v, bool write) {
  (void)write;
  segment_use *u = ctx;
  if (!v || v->kind != TC_VAR_LOCAL || v->id < 0 || v->id >= u->nids) return;
  if (u->var_seg[v->id] < 0) u->var_seg[v->id] = u->seg;
  else if (u->var_seg[v->id] != u->seg && !u->clash) u->clash = v->name;
}

tc_stmt *ev_kernel_split_launches(tc_ev *ev, tc_stmt_list *list, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  need_launches(ev, ev->syncs[0].loc);
  int nseg = ev->nsyncs + 1;
  segment_use u = {EV_NEW_ARRAY(ev, int, k->next_id + 1), EV_NEW_ARRAY(ev, int, k->next_id + 1), k->next_id + 1, 0, NULL};
  for (int i = 0; i < u.nids; i++) u.buf_seg[i] = u.var_seg[i] = -1;
  tc_access_fns fns = {seg_var, seg_buf, &u};
  tc_stmt_list allocs = {0}, *segs = EV_NEW_ARRAY(ev, tc_stmt_list, nseg);
  for (int i = 0, s = 0; i < list->n; i++) {
    while (s < ev->nsyncs && ev->syncs[s].at <= i) s++;
    tc_stmt *st = list->items[i];
    if (st->kind == TC_ST_ALLOC) { /* declared for every launch; each launch starts them afresh */
      tc_stmt_list_push(ev->ir, &allocs, st);
      continue;
    }
    u.seg = s;
    tc_stmt_accesses(&fns, st, true);
    if (u.clash)
      ev_fail(ev, ev->syncs[s > 0 ? s - 1 : 0].loc,
              "'%s' is used on both sides of this T.sync_grid: tilec runs the kernel as one launch before the grid barrier "
              "and one after it, and a block's buffers and local variables do not outlive a launch",
              u.clash);
    tc_stmt_list_push(ev->ir, &segs[s], st);
  }
  for (int s = 0; s < nseg; s++) {
    tc_stmt *body = tc_stmt_list_seq(ev->ir, &segs[s], loc);
    tc_stmt_list_push(ev->ir, &allocs, guarded(ev, body, launch_is(ev, s, loc), loc));
  }
  k->nlaunches = nseg;
  return tc_stmt_list_seq(ev->ir, &allocs, loc);
}
