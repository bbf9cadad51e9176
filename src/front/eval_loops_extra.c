/* eval_loops_extra.c: TileLang constructs read as loops or element operations the IR already
 * has: T.parallel (TIR's parallel loop), T.Persistent (eval_stmt.c builds its wave loop) and
 * the vector atomics T.atomic_addx2 / T.atomic_addx4. */
#include "front/eval_int.h"

/* T.parallel(start, stop=None): TIR's parallel loop, one dimension; TileLang lowers a parallel
 * For as it lowers T.Parallel's, so it is a one-dimensional T.Parallel over [start, stop). */
tc_val *ev_t_tir_parallel(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  bool two = a->p[1] && a->p[1]->kind != TV_NONE;
  tc_val *r = ev_make_range(ev, TR_PARALLEL, 1);
  r->u.range.start[0] = two ? ev_loop_bound(ev, a->p[0], arg_loc(a, 0), "T.parallel") : tv_int(ev, 0);
  r->u.range.stop[0] = ev_loop_bound(ev, two ? a->p[1] : a->p[0], arg_loc(a, two ? 1 : 0), "T.parallel");
  return r;
}

/* T.Persistent(domain, wave_size, index, group_size=8): the tiles of `domain` this block takes in
 * a persistent kernel (eval_stmt.c, persistent_for, builds the loop). */
tc_val *ev_t_persistent(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *dom = a->p[0];
  if (dom->kind != TV_LIST && dom->kind != TV_TUPLE) ev_fail(ev, arg_loc(a, 0), "T.Persistent needs the domain as a list of extents");
  int n = dom->u.seq.n;
  if (n < 1 || n > 8) ev_fail(ev, arg_loc(a, 0), "T.Persistent takes 1 to 8 extents, got %d", n);
  tc_val *r = ev_make_range(ev, TR_PERSISTENT, n);
  for (int i = 0; i < n; i++) {
    r->u.range.start[i] = tv_int(ev, 0);
    r->u.range.stop[i] = ev_loop_bound(ev, dom->u.seq.v[i], arg_loc(a, 0), "T.Persistent");
  }
  r->u.range.wave = ev_loop_bound(ev, a->p[1], arg_loc(a, 1), "the wave size of T.Persistent");
  r->u.range.index = ev_loop_bound(ev, a->p[2], arg_loc(a, 2), "the index of T.Persistent");
  r->u.range.group = a->p[3] && a->p[3]->kind != TV_NONE ? ev_loop_bound(ev, a->p[3], arg_loc(a, 3), "the group size of T.Persistent")
                                                         : tv_int(ev, 8);
  return r;
}

/* T.atomic_addx2 / T.atomic_addx4(dst[..., j], value[..., k]): the 2 or 4 consecutive elements
 * along the last dimension added at once (a vector atomic on the GPU); each element's add is
 * atomic, so they are that many element atomic_adds. */
static tc_val *atomic_add_vec(tc_ev *ev, tc_args *a, int width) {
  tc_loc loc = (a->call ? a->call->loc : arg_loc(a, 0));
  const char *fn = width == 2 ? "T.atomic_addx2" : "T.atomic_addx4";
  if (a->p[2] && a->p[2]->kind != TV_NONE && ev_truth(ev, a->p[2], arg_loc(a, 2)))
    ev_unsupported(ev, arg_loc(a, 2), tc_arena_printf(&ev->tmp, "%s(..., return_prev=True)", fn));
  tc_val *dst = a->p[0], *val = a->p[1];
  if (dst->kind != TV_ELEM || val->kind != TV_ELEM)
    ev_fail(ev, loc, "%s needs element operands such as dst[i, j] and value[i, k] (the first of %d consecutive elements)", fn, width);
  tc_buffer *db = dst->u.elem.buf, *vb = val->u.elem.buf;
  for (int q = 0; q < width; q++) {
    tc_expr **di = TC_NEW_ARRAY(ev->ir, tc_expr *, db->ndim), **vi = TC_NEW_ARRAY(ev->ir, tc_expr *, vb->ndim);
    for (int d = 0; d < db->ndim; d++) di[d] = dst->u.elem.idx[d];
    for (int d = 0; d < vb->ndim; d++) vi[d] = val->u.elem.idx[d];
    tc_expr *off = tc_ir_int(ev->ir, q, tc_index_dtype(), loc);
    di[db->ndim - 1] = tc_ir_binary(ev->ir, TC_OP_ADD, di[db->ndim - 1], off, loc);
    vi[vb->ndim - 1] = tc_ir_binary(ev->ir, TC_OP_ADD, vi[vb->ndim - 1], off, loc);
    tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_ATOMIC_ADD, loc);
    s->u.atomic.buf = db;
    s->u.atomic.nidx = db->ndim;
    s->u.atomic.idx = di;
    s->u.atomic.value = ev_cast(ev, tc_ir_load(ev->ir, vb, vb->ndim, vi, loc), db->dtype, loc);
    ev_emit(ev, s, loc, fn);
  }
  return tv_none(ev);
}
tc_val *ev_t_atomic_addx2(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return atomic_add_vec(ev, a, 2); }
tc_val *ev_t_atomic_addx4(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return atomic_add_vec(ev, a, 4); }

