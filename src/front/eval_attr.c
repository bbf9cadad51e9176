/* eval_attr.c: TVM's thread all-reduce as TileLang's gemv examples write it (issue 10):
 *
 *     with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, dtype)]), "reduce_scope", ...):
 *         T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, out[0], tk, dtype="handle"))
 *
 * Every thread contributes `value`; the threads that differ only in the thread index `tk` (one
 * thread axis) combine their contributions with the comm_reducer's function, and each of them
 * gets the result in `out`. The reader writes that out in tile IR every target runs: each
 * thread stores its value into a shared scratch row, a block barrier, each thread folds the
 * values of its group in thread-index order, and a second barrier before the scratch can be
 * written again. T.attr is otherwise a context with no effect on results (TVM's annotation);
 * it makes its comm_reducer the one tvm_thread_allreduce uses inside it. */
#include "front/eval_int.h"

#include <string.h>

static tc_loc call_loc(tc_args *a) { return a->call ? a->call->loc : (tc_loc){0}; }

/* T.comm_reducer(fn, identities): the combine function is all the all-reduce needs (it folds
 * the group's values starting from the first, so the identities are not used). */
static tc_val *a_comm_reducer(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[0]->kind != TV_FUNC) ev_fail(ev, arg_loc(a, 0), "T.comm_reducer expects a function such as lambda x, y: x + y");
  tc_val *v = tv_opaque(ev, COMM_REDUCER_NAME);
  ev->attr_pending = a->p[0];
  return v;
}

/* T.attr(node, key, value): a context (ev_attr_block). Its arguments arrive unevaluated: only
 * the node is evaluated, since the value is often a TVM handle (`T.reinterpret(T.uint64(0),
 * dtype="handle")`) that has no meaning here. */
static tc_val *a_attr(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!a->pnode[0]) ev_fail(ev, call_loc(a), "T.attr expects a node, a key and a value");
  ev->attr_pending = NULL;
  tc_val *n = ev_expr(ev, a->pnode[0]);
  tc_val *v = tv_opaque(ev, ATTR_NAME);
  (void)n; /* a comm_reducer node set attr_pending as it was evaluated */
  return v;
}

tc_flow ev_attr_block(tc_ev *ev, const tc_ast_list *body) {
  tc_val *saved = ev->comm_reducer;
  if (ev->attr_pending) ev->comm_reducer = ev->attr_pending;
  ev->attr_pending = NULL;
  tc_flow f = ev_block(ev, body);
  ev->comm_reducer = saved;
  return f;
}

/* T.evaluate(x): x was evaluated for its effect already (tvm_thread_allreduce emits its
 * statements when called); a pure expression has none. */
static tc_val *a_evaluate(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_none(ev);
}

static tc_expr *iconst(tc_ev *ev, int64_t v, tc_loc loc) { return tc_ir_int(ev->ir, v, tc_index_dtype(), loc); }

static tc_expr *thread_index(tc_ev *ev, int axis, tc_loc loc) {
  if (!ev->thread_vars[axis]) {
    static const char *const names[] = {"tx", "ty", "tz"};
    ev->thread_vars[axis] = tc_ir_new_var(ev->ir, ev->k, names[axis], tc_index_dtype(), TC_VAR_THREAD_IDX, loc);
    ev->thread_vars[axis]->axis = axis;
  }
  return tc_ir_var_ref(ev->ir, ev->thread_vars[axis], loc);
}

static void emit_barrier(tc_ev *ev, tc_loc loc) {
  ev_emit(ev, tc_ir_stmt(ev->ir, TC_ST_BARRIER, loc), loc, "T.tvm_thread_allreduce");
}

static tc_stmt *store(tc_ev *ev, tc_buffer *b, int n, tc_expr **idx, tc_expr *value, tc_loc loc) {
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  st->u.store.buf = b;
  st->u.store.nidx = n;
  st->u.store.idx = idx;
  st->u.store.value = value;
  return st;
}

static tc_expr **clone_idx(tc_ev *ev, int n, tc_expr **idx) {
  tc_expr **c = TC_NEW_ARRAY(ev->ir, tc_expr *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) c[i] = tc_ir_clone_expr(ev->ir, idx[i]);
  return c;
}

/* The block's linear thread id, x + X * (y + Y * z). */
static tc_expr *linear_thread(tc_ev *ev, tc_loc loc) {
  tc_expr *tid = NULL;
  for (int i = ev->threads_ndim - 1; i >= 0; i--)
    tid = tid ? tc_ir_binary(ev->ir, TC_OP_ADD, tc_ir_binary(ev->ir, TC_OP_MUL, tid, iconst(ev, ev->threads[i], loc), loc),
                             thread_index(ev, i, loc), loc)
              : thread_index(ev, i, loc);
  return tid;
}

/* A shared row of n elements (one slot per thread), allocated where the statement stands. */
static tc_buffer *scratch_row(tc_ev *ev, const char *name, tc_dtype dt, int64_t n, tc_loc loc, const char *what) {
  tc_expr *shape = iconst(ev, n, loc);
  tc_buffer *scratch = tc_ir_new_buffer(ev->ir, ev->k, name, dt, TC_SCOPE_SHARED, 1, &shape, loc);
  tc_stmt *al = tc_ir_stmt(ev->ir, TC_ST_ALLOC, loc);
  al->u.alloc.buf = scratch;
  ev_emit(ev, al, loc, what);
  return scratch;
}

/* T.tvm_thread_allreduce(n, value, cond, out, axis_var, dtype="handle") with n = 1, cond True
 * and one reduced thread axis: the forms TileLang's examples use. */
static tc_val *a_allreduce(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  const char *what = "T.tvm_thread_allreduce";
  if (!ev->cur) ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)'", what);
  if (!ev->comm_reducer) ev_fail(ev, loc, "%s needs a 'with T.attr(T.comm_reducer(...), \"reduce_scope\", ...)' around it", what);
  tc_val *args = a->p[0];
  int n = args->u.seq.n;
  int64_t nv = -1;
  if (n >= 1) {
    tc_val *c = args->u.seq.v[0];
    if (c->kind == TV_INT) nv = c->u.i;
    else if (c->kind == TV_EXPR) tc_expr_const_int(c->u.e, &nv);
  }
  if (nv != 1 || n != 5)
    ev_unsupported(ev, loc, "T.tvm_thread_allreduce of other than one value over one thread axis");
  tc_val *cond = args->u.seq.v[2], *out = args->u.seq.v[3], *axis_v = args->u.seq.v[4];
  if (!(cond->kind == TV_BOOL && cond->u.b)) ev_unsupported(ev, loc, "T.tvm_thread_allreduce with a condition other than True");
  if (out->kind != TV_ELEM) ev_fail(ev, loc, "%s: the result must be one element of a buffer, such as out[0]", what);
  const tc_expr *ax = axis_v->kind == TV_EXPR ? axis_v->u.e : NULL;
  if (!ax || ax->op != TC_OP_VAR || ax->var->kind != TC_VAR_THREAD_IDX)
    ev_fail(ev, loc, "%s: the reduced axis must be a thread index from T.get_thread_binding", what);
  int axis = ax->var->axis;
  tc_expr *value = ev_to_expr(ev, ev_scalar(ev, args->u.seq.v[1], loc), loc);
  tc_dtype dt = value->dtype;

  /* the scratch row: one slot per thread of the block, linear thread id x + X * (y + Y * z) */
  int64_t nthreads = 1, stride = 1;
  for (int i = 0; i < ev->threads_ndim; i++) nthreads *= ev->threads[i];
  for (int i = 0; i < axis; i++) stride *= ev->threads[i];
  int64_t extent = ev->threads[axis];
  tc_expr *tid = linear_thread(ev, loc);
  tc_buffer *scratch = scratch_row(ev, "allreduce_scratch", dt, nthreads, loc, what);
  tc_expr **si = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  si[0] = tid;
  ev_emit(ev, store(ev, scratch, 1, si, value, loc), loc, what);
  emit_barrier(ev, loc);

  /* group base: this thread's id with its index along the reduced axis set to 0 */
  tc_expr *base = tc_ir_binary(ev->ir, TC_OP_SUB, tc_ir_clone_expr(ev->ir, tid),
                               tc_ir_binary(ev->ir, TC_OP_MUL, thread_index(ev, axis, loc), iconst(ev, stride, loc), loc), loc);
  tc_buffer *ob = out->u.elem.buf;
  int on = ob->ndim;
  tc_expr **oi = out->u.elem.idx;
  tc_expr **li = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  li[0] = tc_ir_clone_expr(ev->ir, base);
  ev_emit(ev, store(ev, ob, on, clone_idx(ev, on, oi), ev_cast(ev, tc_ir_load(ev->ir, scratch, 1, li, loc), ob->dtype, loc), loc),
          loc, what);
  /* for k in serial(1, extent): out = reducer(out, scratch[base + k * stride]) */
  tc_var *k = tc_ir_new_var(ev->ir, ev->k, "k", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_expr **ki = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  ki[0] = tc_ir_binary(ev->ir, TC_OP_ADD, tc_ir_clone_expr(ev->ir, base),
                       tc_ir_binary(ev->ir, TC_OP_MUL, tc_ir_var_ref(ev->ir, k, loc), iconst(ev, stride, loc), loc), loc);
  tc_val *xy[2] = {tv_expr(ev, tc_ir_load(ev->ir, ob, on, clone_idx(ev, on, oi), loc)),
                   tv_expr(ev, ev_cast(ev, tc_ir_load(ev->ir, scratch, 1, ki, loc), ob->dtype, loc))};
  const tc_ast *nodes[2] = {NULL, NULL};
  tc_args ca = {0};
  ca.call = a->call;
  ca.n = 2;
  ca.v = xy;
  ca.node = nodes;
  tc_val *r = ev_call_value(ev, ev->comm_reducer, &ca, loc);
  if (!ev_is_runtime(r) && r->kind != TV_INT && r->kind != TV_FLOAT)
    ev_fail(ev, loc, "%s: the comm_reducer's function must return a value, not %s", what, tv_kind_name(r));
  tc_stmt *loop = tc_ir_stmt(ev->ir, TC_ST_FOR, loc);
  loop->u.loop.var = k;
  loop->u.loop.kind = TC_LOOP_SERIAL;
  loop->u.loop.min = iconst(ev, 1, loc);
  loop->u.loop.extent = iconst(ev, extent - 1, loc);
  loop->u.loop.body = store(ev, ob, on, clone_idx(ev, on, oi), ev_to_expr_as(ev, r, ob->dtype, loc), loc);
  ev_emit(ev, loop, loc, what);
  emit_barrier(ev, loc); /* the scratch row may be written again after this */
  return tv_none(ev);
}

/* T.tvm_warp_shuffle(mask, value, lane, width, warp_size): TVM's warp shuffle (CUDA's
 * __shfl_sync): each thread gets `value` as thread `lane` of its group of `width` consecutive
 * lanes holds it (example_hadamard.py exchanges butterfly partners this way). The reader writes
 * it out in tile IR every target runs, as the all-reduce above: each thread stores its value into
 * a shared scratch row, a barrier, each thread reads its source lane's slot into a per-thread
 * cell, and a barrier before the row can be written again. All threads of the block must reach
 * it (the barriers' condition); a mask other than all lanes is refused. */
static tc_val *a_warp_shuffle(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  const char *what = "T.tvm_warp_shuffle";
  tc_loc loc = call_loc(a);
  if (!ev->cur) ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)'", what);
  int64_t mask = 0, width = 0, warp_size = 0;
  tc_val *mv = ev_scalar(ev, a->p[0], arg_loc(a, 0));
  if (mv->kind != TV_INT && !(mv->kind == TV_EXPR && tc_expr_const_int(mv->u.e, &mask)))
    ev_fail(ev, arg_loc(a, 0), "%s: the mask must be known at compile time", what);
  if (mv->kind == TV_INT) mask = mv->u.i;
  if ((mask & 0xFFFFFFFFll) != 0xFFFFFFFFll)
    ev_unsupported(ev, arg_loc(a, 0), "T.tvm_warp_shuffle with a mask other than all lanes (0xFFFFFFFF)");
  width = arg_int(ev, a, 3, 0, "the width of T.tvm_warp_shuffle");
  warp_size = arg_int(ev, a, 4, 0, "the warp_size of T.tvm_warp_shuffle");
  if (width < 1 || width > 32 || (width & (width - 1)))
    ev_fail(ev, arg_loc(a, 3), "%s: the width must be a power of two from 1 to 32, got %lld", what, (long long)width);
  if (warp_size < width || warp_size > 64 || (warp_size & (warp_size - 1)))
    ev_fail(ev, arg_loc(a, 4), "%s: the warp size must be a power of two from the width (%lld) to 64, got %lld", what,
            (long long)width, (long long)warp_size);
  int64_t nthreads = 1;
  for (int i = 0; i < ev->threads_ndim; i++) nthreads *= ev->threads[i];
  if (nthreads % width != 0)
    ev_fail(ev, loc, "%s: the block's %lld threads do not divide into groups of %lld lanes", what, (long long)nthreads, (long long)width);
  tc_expr *value = ev_to_expr(ev, ev_scalar(ev, a->p[1], arg_loc(a, 1)), arg_loc(a, 1));
  tc_expr *lane = ev_to_expr(ev, ev_scalar(ev, a->p[2], arg_loc(a, 2)), arg_loc(a, 2));
  if (!tc_dtype_is_int(lane->dtype)) ev_fail(ev, arg_loc(a, 2), "%s: the source lane must be an integer", what);
  lane = ev_cast(ev, lane, tc_index_dtype(), loc);
  tc_dtype dt = value->dtype;

  tc_expr *tid = linear_thread(ev, loc);
  tc_buffer *scratch = scratch_row(ev, "shuffle_scratch", dt, nthreads, loc, what);
  tc_expr *one = iconst(ev, 1, loc);
  tc_buffer *cell = tc_ir_new_buffer(ev->ir, ev->k, "shuffled", dt, TC_SCOPE_LOCAL, 1, &one, loc);
  tc_stmt *cal = tc_ir_stmt(ev->ir, TC_ST_ALLOC, loc);
  cal->u.alloc.buf = cell;
  ev_emit(ev, cal, loc, what);
  tc_expr **si = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  si[0] = tid;
  ev_emit(ev, store(ev, scratch, 1, si, value, loc), loc, what);
  ev_emit(ev, tc_ir_stmt(ev->ir, TC_ST_BARRIER, loc), loc, what);
  /* the source: this thread's group of `width` lanes, lane `lane mod width` of it */
  tc_expr *group = tc_ir_binary(ev->ir, TC_OP_SUB, tc_ir_clone_expr(ev->ir, tid),
                                tc_ir_binary(ev->ir, TC_OP_FLOORMOD, tc_ir_clone_expr(ev->ir, tid), iconst(ev, width, loc), loc), loc);
  tc_expr **li = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  li[0] = tc_ir_binary(ev->ir, TC_OP_ADD, group, tc_ir_binary(ev->ir, TC_OP_FLOORMOD, lane, iconst(ev, width, loc), loc), loc);
  tc_expr **ci0 = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  ci0[0] = iconst(ev, 0, loc);
  ev_emit(ev, store(ev, cell, 1, ci0, tc_ir_load(ev->ir, scratch, 1, li, loc), loc), loc, what);
  ev_emit(ev, tc_ir_stmt(ev->ir, TC_ST_BARRIER, loc), loc, what); /* the row may be written again after this */
  tc_expr **ci1 = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  ci1[0] = iconst(ev, 0, loc);
  return tv_expr(ev, tc_ir_load(ev->ir, cell, 1, ci1, loc));
}

static const tc_builtin attr_builtins[] = {
    {"T.tvm_warp_shuffle", "mask value lane width warp_size", a_warp_shuffle, 0},
    {"T.attr", "node key value", a_attr, EV_TAG_LAZY_ARGS},
    {"T.comm_reducer", "combiner identity", a_comm_reducer, EV_TAG_LAMBDA_ARGS},
    {"T.evaluate", "value", a_evaluate, 0},
    {"T.tvm_thread_allreduce", "*args | dtype?", a_allreduce, 0},
    {NULL, NULL, NULL, 0},
};

const tc_builtin *ev_attr_builtin(const char *attr) {
  return ev_builtin_find(attr_builtins, attr, 2);
}
