/* eval_reducer.c: TileLang's reducers (issue 10): T.alloc_reducer, T.reducer_init,
 * T.reducer_update and T.finalize_reducer.
 *
 * On a GPU a reducer keeps a partial result per participating thread (its replicas), each
 * thread combines its contributions into its own replica, and T.finalize_reducer combines the
 * replicas with the reducer's op. Combining is associative and commutative (sum, max, min and
 * the bitwise ops), so the finalized value is every contribution combined into the starting
 * value once, which is what one copy updated in program order holds. tilec's reference (the
 * interpreter and the cpu backend) keeps that one copy: the reducer is a fragment, updates are
 * read-modify-writes of it (inside a T.Parallel loop, several iterations may update one
 * element; the reference runs them one after another), and finalizing copies it to `dst` or
 * leaves it in place (TileLang's legacy in-place form). The GPU lowering (src/gpu/tileops.c,
 * par_reduce_wrap) keeps the replicas: a T.Parallel loop wider than the reducer's shape starts
 * each thread's copy from the op's identity and combines the copies right after the loop, so
 * the reducer holds the reference's value wherever it is read; an update it cannot combine is
 * a file:line:col error. */
#include "front/eval_int.h"

#include <math.h>
#include <string.h>

enum { R_SUM, R_MAX, R_MIN, R_BITAND, R_BITOR, R_BITXOR };
static const char *const op_names[] = {"sum", "max", "min", "bitand", "bitor", "bitxor", NULL};

static tc_loc call_loc(tc_args *a) { return a->call ? a->call->loc : (tc_loc){0}; }

/* Call the T.<name> builtin with positional parameters p[0..n-1] (NULL: its default). */
static tc_val *call_t(tc_ev *ev, const char *name, tc_args *a, int n, tc_val **p, const tc_ast **pn) {
  tc_val *f = ev_module_attr_try(ev, TM_LANGUAGE, name);
  if (!f || f->kind != TV_BUILTIN) ev_fail(ev, call_loc(a), "internal error: T.%s is missing", name);
  tc_args g = *a;
  g.p = EV_NEW_ARRAY(ev, tc_val *, 8);
  g.pnode = EV_NEW_ARRAY(ev, const tc_ast *, 8);
  for (int i = 0; i < n; i++) g.p[i] = p[i], g.pnode[i] = pn ? pn[i] : NULL;
  return f->u.bi.b->fn(ev, NULL, &g);
}

static int reducer_op(tc_ev *ev, tc_buffer *b) {
  for (int i = 0; i < ev->nreducers; i++)
    if (ev->reducers[i].buf == b) return ev->reducers[i].op;
  return -1;
}

static tc_buffer *reducer_arg(tc_ev *ev, tc_args *a, int i, const char *what, int *op) {
  tc_val *v = a->p[i];
  tc_buffer *b = v->kind == TV_BUFFER ? v->u.buf : v->kind == TV_ELEM ? v->u.elem.buf : NULL;
  *op = b ? reducer_op(ev, b) : -1;
  if (*op < 0) ev_fail(ev, arg_loc(a, i), "%s expects a reducer from T.alloc_reducer, not %s", what, tv_kind_name(v));
  return b;
}

/* T.alloc_reducer(shape, dtype, op="sum", replication=None) */
static tc_val *r_alloc(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int op = R_SUM;
  if (a->p[2] && a->p[2]->kind != TV_NONE) {
    const char *s = a->p[2]->kind == TV_STR ? a->p[2]->u.str.s : NULL;
    for (op = 0; s && op_names[op] && strcmp(op_names[op], s) != 0; op++) {}
    if (!s || !op_names[op])
      ev_fail(ev, arg_loc(a, 2), "op= of T.alloc_reducer must be \"sum\", \"max\", \"min\", \"bitand\", \"bitor\" or \"bitxor\"");
  }
  tc_val *rep = a->p[3];
  if (rep && rep->kind != TV_NONE &&
      !(rep->kind == TV_STR && (strcmp(rep->u.str.s, "all") == 0 || strcmp(rep->u.str.s, "none") == 0)))
    ev_fail(ev, arg_loc(a, 3), "replication= of T.alloc_reducer must be \"all\" or \"none\"");
  tc_val *p[2] = {a->p[0], a->p[1]};
  const tc_ast *pn[2] = {a->pnode[0], a->pnode[1]};
  tc_val *buf = call_t(ev, "alloc_fragment", a, 2, p, pn);
  tc_buffer *b = buf->u.buf;
  if (op >= R_BITAND && !tc_dtype_is_int(b->dtype))
    ev_fail(ev, arg_loc(a, 2), "the bitwise reducer op '%s' needs an integer dtype, not %s", op_names[op], ev_dtype_name(b->dtype));
  if (ev->nreducers == ev->capreducers) {
    int cap = ev->capreducers ? ev->capreducers * 2 : 4;
    ev->reducers = tc_arena_grow(&ev->tmp, ev->reducers, sizeof *ev->reducers * (size_t)ev->nreducers, sizeof *ev->reducers * (size_t)cap);
    ev->capreducers = cap;
  }
  ev->reducers[ev->nreducers].buf = b;
  ev->reducers[ev->nreducers].op = op;
  ev->nreducers++;
  return buf;
}

/* The op's identity: the value T.reducer_init starts from when given none. */
static tc_val *identity(tc_ev *ev, tc_args *a, int op, tc_dtype dt) {
  tc_val *d = tv_dtype(ev, dt);
  switch (op) {
  case R_MAX: return tc_dtype_is_float(dt) ? tv_float(ev, -INFINITY) : call_t(ev, "min_value", a, 1, &d, NULL);
  case R_MIN: return tc_dtype_is_float(dt) ? tv_float(ev, INFINITY) : call_t(ev, "max_value", a, 1, &d, NULL);
  case R_BITAND: return tv_int(ev, -1);
  default: return tv_int(ev, 0);
  }
}

/* T.reducer_init(reducer, init=None): every element starts from init (the op's identity). */
static tc_val *r_init(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int op;
  tc_buffer *b = reducer_arg(ev, a, 0, "T.reducer_init", &op);
  tc_val *p[2] = {tv_buffer(ev, b), a->p[1] && a->p[1]->kind != TV_NONE ? a->p[1] : identity(ev, a, op, b->dtype)};
  const tc_ast *pn[2] = {a->pnode[0], a->pnode[1]};
  return call_t(ev, "fill", a, 2, p, pn);
}

/* T.reducer_update(reducer[indices], contribution): combine one contribution into an element. */
static tc_val *r_update(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  int op;
  tc_buffer *b = reducer_arg(ev, a, 0, "T.reducer_update", &op);
  if (a->p[0]->kind != TV_ELEM) ev_fail(ev, arg_loc(a, 0), "T.reducer_update takes one element of the reducer, reducer[i, ...]");
  int n = b->ndim;
  tc_expr **idx = TC_NEW_ARRAY(ev->ir, tc_expr *, n), **idx2 = TC_NEW_ARRAY(ev->ir, tc_expr *, n);
  for (int i = 0; i < n; i++) idx[i] = a->p[0]->u.elem.idx[i], idx2[i] = tc_ir_clone_expr(ev->ir, idx[i]);
  static const tc_expr_op ops[] = {TC_OP_ADD, TC_OP_MAX, TC_OP_MIN, TC_OP_BIT_AND, TC_OP_BIT_OR, TC_OP_BIT_XOR};
  tc_expr *v = ev_to_expr_as(ev, ev_scalar(ev, a->p[1], arg_loc(a, 1)), b->dtype, arg_loc(a, 1));
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  st->u.store.buf = b;
  st->u.store.nidx = n;
  st->u.store.idx = idx;
  st->u.store.value = tc_ir_binary(ev->ir, ops[op], tc_ir_load(ev->ir, b, n, idx2, loc), v, loc);
  ev_emit(ev, st, loc, "T.reducer_update");
  return tv_none(ev);
}

/* T.finalize_reducer(reducer, dst=None, batch=1, annotations=None): the one copy already holds
 * every contribution combined; with dst it is copied there. */
static tc_val *r_finalize(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int op;
  tc_buffer *b = reducer_arg(ev, a, 0, "T.finalize_reducer", &op);
  if (!a->p[1] || a->p[1]->kind == TV_NONE) {
    if (!ev->cur) ev_emit(ev, NULL, call_loc(a), "T.finalize_reducer");
    return tv_none(ev);
  }
  tc_val *p[2] = {tv_buffer(ev, b), a->p[1]};
  const tc_ast *pn[2] = {a->pnode[0], a->pnode[1]};
  return call_t(ev, "copy", a, 2, p, pn);
}

static const tc_builtin reducer_builtins[] = {
    {"T.alloc_reducer", "shape dtype op? replication?", r_alloc, 0},
    {"T.reducer_init", "reducer init?", r_init, 0},
    {"T.reducer_update", "elem value", r_update, 0},
    {"T.finalize_reducer", "reducer dst? batch? | annotations?", r_finalize, 0},
    {NULL, NULL, NULL, 0},
};

const tc_builtin *ev_reducer_builtin(const char *attr) {
  return ev_builtin_find(reducer_builtins, attr, 2);
}
