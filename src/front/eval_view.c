/* eval_view.c: buffer views. T.reshape(X, shape), T.view(X, shape, dtype) and
 * T.Tensor(shape, dtype, X.data) name X's storage with another shape: the same elements in
 * row-major order (TileLang checks that the sizes agree; so does this). A view is a buffer
 * whose view_of is X's storage owner, declared by an ALLOC after X (ir.h). */
#include "front/eval_int.h"

#include <string.h>

/* The factors of a shape: the product of its constant extents, and its other extents (split
 * at multiplications) in a list, so M * 4 and (M, 4) compare equal. */
typedef struct factors {
  int64_t c;
  int n;
  const tc_expr *v[32];
  bool overflow;
} factors;

static void add_factor(factors *f, const tc_expr *e) {
  int64_t c;
  if (tc_expr_const_int(e, &c)) {
    if (__builtin_mul_overflow(f->c, c, &f->c)) f->overflow = true;
  } else if (e->op == TC_OP_MUL && e->nargs == 2) {
    add_factor(f, e->args[0]);
    add_factor(f, e->args[1]);
  } else if (f->n < 32) {
    f->v[f->n++] = e;
  } else {
    f->overflow = true;
  }
}

/* Whether two shapes provably hold the same number of elements. */
static bool same_size(tc_expr *const *a, int na, tc_expr *const *b, int nb) {
  factors fa = {1, 0, {0}, false}, fb = {1, 0, {0}, false};
  for (int i = 0; i < na; i++) add_factor(&fa, a[i]);
  for (int i = 0; i < nb; i++) add_factor(&fb, b[i]);
  if (fa.overflow || fb.overflow || fa.c != fb.c || fa.n != fb.n) return false;
  bool used[32] = {false};
  for (int i = 0; i < fa.n; i++) {
    int j = 0;
    while (j < fb.n && (used[j] || !ev_expr_equal(fa.v[i], fb.v[j]))) j++;
    if (j == fb.n) return false;
    used[j] = true;
  }
  return true;
}

static void shape_text(tc_strbuf *sb, tc_expr *const *shape, int n) {
  tc_sb_putc(sb, '(');
  for (int i = 0; i < n; i++) {
    if (i) tc_sb_puts(sb, ", ");
    tc_ir_print_expr(sb, shape[i]);
  }
  if (n == 1) tc_sb_putc(sb, ',');
  tc_sb_putc(sb, ')');
}

tc_val *ev_make_view(tc_ev *ev, tc_val *data, tc_loc data_loc, tc_val *tt, const tc_ast *call, const char *what) {
  tc_loc loc = call ? call->loc : data_loc;
  if (!ev->cur) ev_emit(ev, NULL, loc, what); /* fails: outside a kernel */
  if (data->kind != TV_BUFFER)
    ev_fail(ev, data_loc, "%s needs a buffer (or its .data) to view, not %s", what, tv_kind_name(data));
  tc_buffer *src = data->u.buf;
  tc_buffer *base = src->view_of ? src->view_of : src;
  tc_dtype dt = tt->u.tensor.dt;
  if (!tc_dtype_eq(dt, base->dtype)) {
    char b1[32], b2[32];
    ev_fail(ev, loc, "unsupported: %s views '%s' (%s) as %s; a view that reinterprets the storage as another dtype is not supported",
            what, src->name, tc_dtype_name(base->dtype, b1, sizeof b1), tc_dtype_name(dt, b2, sizeof b2));
  }
  int n = tt->u.tensor.ndim;
  tc_expr **shape = TC_NEW_ARRAY(ev->ir, tc_expr *, n);
  for (int i = 0; i < n; i++) {
    shape[i] = ev_index_expr(ev, tt->u.tensor.shape[i], loc);
    int64_t c;
    if (base->scope != TC_SCOPE_GLOBAL && !tc_expr_const_int(shape[i], &c))
      ev_fail(ev, loc, "%s: a view of the %s buffer '%s' needs a constant shape", what, tc_scope_name(base->scope), src->name);
  }
  if (!same_size(shape, n, base->shape, base->ndim)) {
    tc_strbuf a, b;
    tc_sb_init(&a);
    tc_sb_init(&b);
    shape_text(&a, shape, n);
    shape_text(&b, base->shape, base->ndim);
    const char *msg = tc_arena_printf(&ev->tmp, "%s: the shape %s does not hold as many elements as '%s' %s", what, tc_sb_cstr(&a),
                                      src->name, tc_sb_cstr(&b));
    tc_sb_free(&a);
    tc_sb_free(&b);
    ev_fail(ev, loc, "%s", msg);
  }
  const char *name = ev_target_name(ev, call, "view");
  tc_buffer *v = tc_ir_new_buffer(ev->ir, ev->k, tc_arena_strdup(ev->ir, name), dt, base->scope, n, shape, loc);
  v->view_of = base;
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_ALLOC, loc);
  s->u.alloc.buf = v;
  ev_emit(ev, s, loc, what);
  return tv_buffer(ev, v);
}

tc_val *ev_t_reshape(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[0]->kind != TV_BUFFER) ev_fail(ev, arg_loc(a, 0), "T.reshape needs a buffer, not %s", tv_kind_name(a->p[0]));
  tc_val *dt = tv_dtype(ev, a->p[0]->u.buf->dtype);
  tc_val *tt = ev_tensor_type(ev, a->p[1], a->pnode[1], arg_loc(a, 1), dt, arg_loc(a, 0));
  return ev_make_view(ev, a->p[0], arg_loc(a, 0), tt, a->call, "T.reshape");
}

tc_val *ev_t_view(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[0]->kind != TV_BUFFER) ev_fail(ev, arg_loc(a, 0), "T.view needs a buffer, not %s", tv_kind_name(a->p[0]));
  tc_buffer *src = a->p[0]->u.buf;
  tc_val *shape = a->p[1];
  if (!shape || shape->kind == TV_NONE) shape = ev_getattr(ev, a->p[0], "shape", arg_loc(a, 0));
  tc_val *dt = a->p[2] && a->p[2]->kind != TV_NONE ? a->p[2] : tv_dtype(ev, src->dtype);
  tc_val *tt = ev_tensor_type(ev, shape, a->p[1] && a->p[1]->kind != TV_NONE ? a->pnode[1] : NULL, arg_loc(a, 1), dt, arg_loc(a, 2));
  return ev_make_view(ev, a->p[0], arg_loc(a, 0), tt, a->call, "T.view");
}
