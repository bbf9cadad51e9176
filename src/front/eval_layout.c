/* eval_layout.c: buffer layouts in the reader: T.Layout, T.Fragment,
 * tilelang.layout.make_swizzled_layout and T.annotate_layout, which attaches a layout to a
 * shared or fragment buffer (tc_buffer.layout, see src/ir/layout.h).
 *
 * A layout function (usually a lambda) is called once with IR placeholder variables as its
 * arguments; what it returns is the layout's expression over them. Sizes that TileLang derives
 * by range analysis (storage of a padded layout, registers per thread, the extents of a
 * multi-dimensional index that is flattened row-major) are found here by evaluating the
 * expressions at every logical index. */
#include "front/eval_int.h"

#include <string.h>

#define MAX_LAYOUT_DIMS 8
static tc_loc call_loc(tc_args *a) { return a->call ? a->call->loc : (tc_loc){0}; }

static int layout_shape(tc_ev *ev, tc_val *v, tc_loc loc, const char *what, int64_t *shape) {
  if (v->kind == TV_BUFFER) {
    if (v->u.buf->ndim > MAX_LAYOUT_DIMS || !tc_buffer_const_shape(v->u.buf, shape))
      ev_fail(ev, loc, "%s: the shape of '%s' is not a compile-time constant", what, v->u.buf->name);
    return v->u.buf->ndim;
  }
  tc_val *l = ev_to_list(ev, v, loc);
  int n = l->u.seq.n;
  if (n < 1 || n > MAX_LAYOUT_DIMS) ev_fail(ev, loc, "%s: the shape must have 1 to %d dimensions, got %d", what, MAX_LAYOUT_DIMS, n);
  for (int i = 0; i < n; i++) {
    shape[i] = ev_need_int(ev, l->u.seq.v[i], NULL, loc, "a layout dimension");
    if (shape[i] < 1) ev_fail(ev, loc, "%s: dimension %d has size %lld", what, i, (long long)shape[i]);
  }
  return n;
}

static int64_t numel_of(const int64_t *shape, int n) {
  int64_t m = 1;
  for (int i = 0; i < n; i++) m = m > TC_LAYOUT_CHECK_LIMIT ? m : m * shape[i];
  return m;
}

/* Call a layout function with the placeholders (and the replica placeholder when given). */
static tc_val *call_layout_fn(tc_ev *ev, tc_val *fn, tc_layout *L, tc_var *replica, tc_loc loc, const char *what) {
  if (fn->kind != TV_FUNC && fn->kind != TV_BUILTIN) ev_fail(ev, loc, "%s must be a function (a lambda), not %s", what, tv_kind_name(fn));
  int n = L->ndim + (replica ? 1 : 0);
  tc_args a = {0};
  a.n = n;
  a.v = EV_NEW_ARRAY(ev, tc_val *, n);
  a.node = EV_NEW_ARRAY(ev, const tc_ast *, n);
  for (int i = 0; i < L->ndim; i++) a.v[i] = tv_expr(ev, tc_ir_var_ref(ev->ir, L->index[i], loc));
  if (replica) a.v[L->ndim] = tv_expr(ev, tc_ir_var_ref(ev->ir, replica, loc));
  return ev_call_value(ev, fn, &a, loc);
}

/* The value(s) a layout function returned, as int32 expressions. */
static int result_exprs(tc_ev *ev, tc_val *r, tc_loc loc, const char *what, tc_expr **out, int cap) {
  if (r->kind == TV_TUPLE || r->kind == TV_LIST) {
    if (r->u.seq.n < 1 || r->u.seq.n > cap) ev_fail(ev, loc, "%s returned %d indices; 1 to %d are supported", what, r->u.seq.n, cap);
    for (int i = 0; i < r->u.seq.n; i++) out[i] = ev_index_expr(ev, r->u.seq.v[i], loc);
    return r->u.seq.n;
  }
  out[0] = ev_index_expr(ev, r, loc);
  return 1;
}

/* The largest value + 1 of each expression over every logical index (and replica). */
static void value_extents(tc_ev *ev, const tc_layout *L, const int64_t *shape, int64_t reps, tc_expr **e, int ne,
                          int64_t *ext, tc_loc loc, const char *what) {
  int64_t numel = numel_of(shape, L->ndim);
  if (numel * reps > TC_LAYOUT_CHECK_LIMIT) { /* too many to enumerate: interval arithmetic */
    for (int k = 0; k < ne; k++) {
      int64_t lo, hi;
      if (!tc_layout_expr_bounds(L, e[k], shape, reps, &lo, &hi))
        ev_fail(ev, loc, "%s: over more than %d elements, a layout may use only +, -, and *, // and %% by constants "
                         "(result %d of %d cannot be bounded otherwise)", what, TC_LAYOUT_CHECK_LIMIT, k + 1, ne);
      if (lo < 0) ev_fail(ev, loc, "%s may return %lld, a negative index", what, (long long)lo);
      if (hi >= INT32_MAX) ev_fail(ev, loc, "%s may return %lld, beyond the int32 range of a layout index", what, (long long)hi);
      ext[k] = hi + 1;
    }
    return;
  }
  for (int k = 0; k < ne; k++) ext[k] = 0;
  int64_t idx[MAX_LAYOUT_DIMS];
  for (int64_t lin = 0; lin < numel; lin++) {
    int64_t r = lin;
    for (int i = L->ndim - 1; i >= 0; i--) idx[i] = r % shape[i], r /= shape[i];
    for (int64_t rep = 0; rep < reps; rep++) {
      for (int k = 0; k < ne; k++) {
        int64_t v;
        if (!tc_layout_eval_expr(L, e[k], idx, rep, &v))
          ev_fail(ev, loc, "%s must compute its result from its arguments with integer arithmetic only", what);
        if (v < 0) ev_fail(ev, loc, "%s returns %lld, a negative index", what, (long long)v);
        if (v + 1 > ext[k]) ext[k] = v + 1;
      }
    }
  }
}

/* Several indices into one, row-major over their extents. */
static tc_expr *flatten(tc_ev *ev, tc_expr **e, const int64_t *ext, int ne, tc_loc loc, int64_t *total) {
  tc_expr *acc = e[0];
  *total = ext[0];
  for (int k = 1; k < ne; k++) {
    acc = tc_ir_binary(ev->ir, TC_OP_ADD, tc_ir_binary(ev->ir, TC_OP_MUL, acc, tc_ir_int(ev->ir, ext[k], tc_index_dtype(), loc), loc),
                       e[k], loc);
    *total = *total > INT32_MAX ? *total : *total * ext[k]; /* saturates: the caller refuses it */
  }
  return acc;
}

static const char *const *param_names(tc_ev *ev, tc_val *fn, int n) {
  if (fn->kind != TV_FUNC || !fn->u.func->def || fn->u.func->def->params.n < n) return NULL;
  const char **names = EV_NEW_ARRAY(ev, const char *, n);
  for (int i = 0; i < n; i++) names[i] = tc_arena_strdup(ev->ir, fn->u.func->def->params.v[i].name);
  return names;
}

static tc_val *layout_value(tc_ev *ev, tc_layout *L, const int64_t *shape, const tc_buffer *for_buf) {
  tc_val *v = tv_new(ev, TV_LAYOUT);
  v->u.layout.l = L;
  v->u.layout.for_buf = for_buf;
  v->u.layout.ndim = L->ndim;
  for (int i = 0; i < L->ndim; i++) v->u.layout.shape[i] = shape[i];
  return v;
}

static tc_layout *shared_layout(tc_ev *ev, const int64_t *shape, int nd, tc_val *fn, tc_loc loc, const char *what) {
  tc_layout *L = tc_layout_new(ev->ir, ev->k, TC_LAYOUT_SHARED, "annotated", nd, param_names(ev, fn, nd), loc);
  tc_expr *e[MAX_LAYOUT_DIMS];
  int ne = result_exprs(ev, call_layout_fn(ev, fn, L, NULL, loc, what), loc, what, e, MAX_LAYOUT_DIMS);
  int64_t ext[MAX_LAYOUT_DIMS];
  value_extents(ev, L, shape, 1, e, ne, ext, loc, what);
  L->offset = flatten(ev, e, ext, ne, loc, &L->storage_elems);
  if (L->storage_elems > INT32_MAX) ev_fail(ev, loc, "%s spans %lld elements, beyond the int32 range of a layout offset", what, (long long)L->storage_elems);
  return L;
}

tc_val *ev_t_layout(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int64_t shape[MAX_LAYOUT_DIMS];
  int nd = layout_shape(ev, a->p[0], arg_loc(a, 0), "T.Layout", shape);
  return layout_value(ev, shared_layout(ev, shape, nd, a->p[1], call_loc(a), "the forward function of T.Layout"), shape, NULL);
}

static bool given(const tc_val *v) { return v && v->kind != TV_NONE; }

tc_val *ev_t_fragment(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  int64_t shape[MAX_LAYOUT_DIMS];
  int nd = layout_shape(ev, a->p[0], arg_loc(a, 0), "T.Fragment", shape);
  int64_t rep = arg_int(ev, a, 3, 1, "replicate of T.Fragment");
  if (rep < 1 || rep > 1024) ev_fail(ev, arg_loc(a, 3), "replicate of T.Fragment must be between 1 and 1024, got %lld", (long long)rep);
  tc_val *fwd = a->p[1], *thr = a->p[2], *idx = a->p[4];
  if (given(fwd) == (given(thr) || given(idx)))
    ev_fail(ev, loc, "T.Fragment takes either forward_fn or forward_thread_fn with forward_index_fn");
  if (!given(fwd) && (!given(thr) || !given(idx)))
    ev_fail(ev, loc, "T.Fragment needs both forward_thread_fn and forward_index_fn (tilec does not infer the index)");
  tc_layout *L = tc_layout_new(ev->ir, ev->k, TC_LAYOUT_FRAGMENT, "annotated", nd, param_names(ev, given(fwd) ? fwd : thr, nd), loc);
  L->replicate = rep;
  tc_var *replica = rep > 1 ? tc_layout_replica_var(ev->ir, ev->k, L, "rep", loc) : NULL;
  tc_expr *e[MAX_LAYOUT_DIMS];
  int ne;
  if (given(fwd)) {
    const char *what = "the forward function of T.Fragment";
    tc_val *r = call_layout_fn(ev, fwd, L, replica, loc, what);
    if ((r->kind != TV_TUPLE && r->kind != TV_LIST) || r->u.seq.n != 2)
      ev_fail(ev, loc, "%s must return (thread, index)", what);
    L->thread = ev_index_expr(ev, r->u.seq.v[0], loc);
    ne = result_exprs(ev, r->u.seq.v[1], loc, what, e, MAX_LAYOUT_DIMS);
  } else {
    L->thread = ev_index_expr(ev, call_layout_fn(ev, thr, L, replica, loc, "forward_thread_fn of T.Fragment"), loc);
    ne = result_exprs(ev, call_layout_fn(ev, idx, L, NULL, loc, "forward_index_fn of T.Fragment"), loc,
                      "forward_index_fn of T.Fragment", e, MAX_LAYOUT_DIMS);
  }
  int64_t ext[MAX_LAYOUT_DIMS], text;
  value_extents(ev, L, shape, 1, e, ne, ext, loc, "the index function of T.Fragment");
  value_extents(ev, L, shape, rep, &L->thread, 1, &text, loc, "the thread function of T.Fragment");
  L->reg = flatten(ev, e, ext, ne, loc, &L->num_regs);
  return layout_value(ev, L, shape, NULL);
}

static tc_buffer *buffer_arg(tc_ev *ev, tc_val *v, tc_loc loc, const char *what) {
  if (v->kind == TV_BUFFER) return v->u.buf;
  if (v->kind == TV_REGION) return v->u.region.buf;
  if (v->kind == TV_ELEM) return v->u.elem.buf;
  ev_fail(ev, loc, "%s expects a buffer, not %s", what, tv_kind_name(v));
}

tc_val *ev_t_swizzled_layout(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  const char *what = "make_swizzled_layout";
  tc_buffer *b = buffer_arg(ev, a->p[0], arg_loc(a, 0), what);
  int64_t shape[MAX_LAYOUT_DIMS];
  if (b->ndim > MAX_LAYOUT_DIMS || !tc_buffer_const_shape(b, shape))
    ev_fail(ev, arg_loc(a, 0), "%s: the shape of '%s' is not a compile-time constant", what, b->name);
  arg_bool(ev, a, 1, true); /* k_major, allow_pad: accepted; the project's swizzle has no variants */
  arg_bool(ev, a, 2, true);
  tc_layout *L = tc_layout_swizzled(ev->ir, ev->k, b);
  if (!L) ev_fail(ev, arg_loc(a, 0), "%s: '%s' has no constant shape", what, b->name);
  return layout_value(ev, L, shape, b);
}

/* tilelang.cuda.intrinsics.make_mma_swizzle_layout(buf, is_smooth=False): TileLang's ldmatrix
 * swizzle when a row is a multiple of 512 bits and is_smooth is off, else the identity layout.
 * A shared-memory layout changes where elements live, never their values, so the swizzled case
 * takes the project's swizzle (as make_swizzled_layout does) and the other is row-major. */
tc_val *ev_t_mma_swizzle_layout(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  const char *what = "make_mma_swizzle_layout";
  tc_buffer *b = buffer_arg(ev, a->p[0], arg_loc(a, 0), what);
  int64_t shape[MAX_LAYOUT_DIMS];
  if (b->ndim < 1 || b->ndim > MAX_LAYOUT_DIMS || !tc_buffer_const_shape(b, shape))
    ev_fail(ev, arg_loc(a, 0), "%s: the shape of '%s' is not a compile-time constant", what, b->name);
  bool smooth = arg_bool(ev, a, 1, false);
  int64_t row_bits = shape[b->ndim - 1] * tc_dtype_bits(b->dtype) * b->dtype.lanes;
  tc_layout *L;
  if (!smooth && row_bits % 512 == 0) {
    L = tc_layout_swizzled(ev->ir, ev->k, b);
  } else {
    L = tc_layout_new(ev->ir, ev->k, TC_LAYOUT_SHARED, "identity", b->ndim, NULL, call_loc(a));
    L->by_construction = true;
    tc_expr *off = NULL;
    int64_t n = 1;
    for (int i = 0; i < b->ndim; i++) {
      tc_expr *x = tc_ir_var_ref(ev->ir, L->index[i], call_loc(a));
      off = off ? tc_ir_binary(ev->ir, TC_OP_ADD, tc_ir_binary(ev->ir, TC_OP_MUL, off, tc_ir_int(ev->ir, shape[i], tc_index_dtype(), call_loc(a)), call_loc(a)), x, call_loc(a)) : x;
      n *= shape[i];
    }
    L->offset = off;
    L->storage_elems = n;
  }
  if (!L) ev_fail(ev, arg_loc(a, 0), "%s: '%s' has no constant shape", what, b->name);
  return layout_value(ev, L, shape, b);
}

tc_val *ev_t_annotate_layout(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  if (!ev->cur) ev_fail(ev, loc, "T.annotate_layout must be inside 'with T.Kernel(...)'");
  tc_val *map = a->p[0];
  if (map->kind != TV_DICT) ev_fail(ev, arg_loc(a, 0), "T.annotate_layout expects a dict {buffer: layout}, not %s", tv_kind_name(map));
  bool again = arg_bool(ev, a, 1, false);
  for (int i = 0; i < map->u.dict.n; i++) {
    tc_buffer *b = buffer_arg(ev, map->u.dict.k[i], arg_loc(a, 0), "T.annotate_layout");
    tc_val *lv = map->u.dict.v[i];
    /* a global buffer's layout rearranges the tensor's memory, as TileLang's does (docs/ir.md) */
    bool global = b->scope == TC_SCOPE_GLOBAL;
    bool shared = b->scope == TC_SCOPE_SHARED || global;
    if (!shared && b->scope != TC_SCOPE_FRAGMENT)
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: '%s' is a %s buffer; layouts are for global, shared and fragment buffers",
              b->name, tc_scope_name(b->scope));
    int64_t shape[MAX_LAYOUT_DIMS];
    if (b->ndim > MAX_LAYOUT_DIMS || !tc_buffer_const_shape(b, shape))
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: the shape of '%s' is not a compile-time constant", b->name);
    if (lv->kind == TV_FUNC) /* a function of the indices: TileLang makes a Layout over the buffer's shape */
      lv = layout_value(ev, shared_layout(ev, shape, b->ndim, lv, loc, "the layout function"), shape, NULL);
    if (lv->kind != TV_LAYOUT)
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: the layout of '%s' must be a T.Layout, T.Fragment or make_swizzled_layout(...), not %s",
              b->name, tv_kind_name(lv));
    tc_layout *L = lv->u.layout.l;
    if (shared != (L->kind == TC_LAYOUT_SHARED))
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: '%s' is a %s buffer, so its layout must be a %s", b->name,
              tc_scope_name(b->scope), shared ? "T.Layout (or make_swizzled_layout)" : "T.Fragment");
    bool same = lv->u.layout.ndim == b->ndim;
    for (int d = 0; same && d < b->ndim; d++) same = lv->u.layout.shape[d] == shape[d];
    if (!same) ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: the layout's input shape differs from the shape of '%s'", b->name);
    if (lv->u.layout.for_buf && !tc_dtype_eq(lv->u.layout.for_buf->dtype, b->dtype))
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: the swizzle was made for '%s', whose dtype differs from '%s'",
              lv->u.layout.for_buf->name, b->name);
    if (global && L->storage_elems != tc_buffer_numel(b))
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: a layout of the global buffer '%s' must rearrange its %lld elements, but "
                                 "it spans %lld", b->name, (long long)tc_buffer_numel(b), (long long)L->storage_elems);
    if (b->layout && !again && !tc_layout_equal(b->layout, L))
      ev_fail(ev, arg_loc(a, 0), "T.annotate_layout: '%s' already has a layout; pass allow_reannotation=True to replace it", b->name);
    b->layout = L;
  }
  return tv_none(ev);
}
