/* eval_types.c: runtime values as typed IR. Python literals adopt the dtype of the IR operand
 * they meet (a float literal with an integer operand makes both float32); two IR operands
 * promote (float over int, wider over narrower, float16 with bfloat16 to float32). Every cast
 * is explicit in the IR, so arithmetic operands always share a dtype. */
#include "front/eval_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_lit(const tc_val *v) { return v->kind == TV_INT || v->kind == TV_BOOL || v->kind == TV_FLOAT; }

bool ev_parse_dtype_string(tc_ev *ev, const char *s, tc_dtype *out, tc_loc loc, bool fail) {
  char sugg[64] = "";
  if (tc_dtype_lookup(s, out, sugg, sizeof sugg)) return true;
  if (!fail) return false;
  if (sugg[0]) ev_fail(ev, loc, "unknown dtype '%s'; did you mean '%s'?", s, sugg);
  ev_fail(ev, loc, "unknown dtype '%s'", s);
}

bool ev_get_dtype(tc_ev *ev, tc_val *v, tc_dtype *out, tc_loc loc, const char *what) {
  switch (v->kind) {
  case TV_DTYPE: *out = v->u.dt; return true;
  case TV_STR: return ev_parse_dtype_string(ev, v->u.str.s, out, loc, true);
  case TV_OPAQUE: {
    const char *dot = strrchr(v->u.opaque.name, '.');
    if (dot && strncmp(v->u.opaque.name, "torch.", 6) == 0 && ev_parse_dtype_string(ev, dot + 1, out, loc, false))
      return true;
    ev_fail(ev, loc, "%s must be a dtype, but '%s' is not one tilec knows", what, v->u.opaque.name);
  }
  default: ev_fail(ev, loc, "%s must be a dtype such as T.float16 or \"float16\", not %s", what, tv_kind_name(v));
  }
}

tc_dtype ev_promote(tc_dtype a, tc_dtype b) {
  if (tc_dtype_eq(a, b)) return a;
  if (tc_dtype_is_bool(a)) return tc_dtype_is_bool(b) ? a : b;
  if (tc_dtype_is_bool(b)) return a;
  bool fa = tc_dtype_is_float(a), fb = tc_dtype_is_float(b);
  if (fa != fb) return fa ? a : b;
  int ba = tc_dtype_bits(a), bb = tc_dtype_bits(b);
  if (ba != bb) return ba > bb ? a : b;
  if (fa) return tc_dt(TC_DT_FLOAT32); /* float16 with bfloat16, or two fp8 kinds */
  return tc_dtype_is_signed(a) ? b : a; /* same width, mixed signedness: unsigned, as in C */
}

/* ---------------------------------------------------------------- conversions */

tc_val *ev_scalar(tc_ev *ev, tc_val *v, tc_loc loc) {
  if (v->kind == TV_ELEM) return tv_expr(ev, tc_ir_load(ev->ir, v->u.elem.buf, v->u.elem.buf->ndim, v->u.elem.idx, loc));
  if (v->kind == TV_BUFFER && v->u.buf->scope == TC_SCOPE_VAR) {
    tc_expr *zero = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
    return tv_expr(ev, tc_ir_load(ev->ir, v->u.buf, 1, &zero, loc));
  }
  return v;
}

static tc_expr *const_of(tc_ev *ev, tc_val *v, tc_dtype dt, tc_loc loc) {
  double f = v->kind == TV_FLOAT ? v->u.f : (double)(v->kind == TV_BOOL ? v->u.b : v->u.i);
  if (tc_dtype_is_float(dt)) return tc_ir_float(ev->ir, f, dt, loc);
  if (tc_dtype_is_bool(dt)) return tc_ir_int(ev->ir, f != 0, dt, loc);
  int64_t i = v->kind == TV_FLOAT ? (int64_t)v->u.f : (v->kind == TV_BOOL ? v->u.b : v->u.i);
  if (v->kind == TV_FLOAT && !(v->u.f > -9.2e18 && v->u.f < 9.2e18))
    ev_fail(ev, loc, "%g does not fit in %s", v->u.f, ev_dtype_name(dt));
  return tc_ir_int(ev->ir, i, dt, loc);
}

static _Noreturn void not_scalar(tc_ev *ev, tc_val *v, tc_loc loc) {
  if (v->kind == TV_OPAQUE) ev_fail(ev, loc, "unsupported: use of '%s' inside a kernel", v->u.opaque.name);
  if (v->kind == TV_BUFFER || v->kind == TV_REGION)
    ev_fail(ev, loc, "expected a scalar value, but got the %s '%s'; index it to read an element",
            v->kind == TV_BUFFER ? "buffer" : "region of", v->kind == TV_BUFFER ? v->u.buf->name : v->u.region.buf->name);
  ev_fail(ev, loc, "expected a scalar value, got %s", tv_kind_name(v));
}

tc_expr *ev_to_expr(tc_ev *ev, tc_val *v, tc_loc loc) {
  v = ev_scalar(ev, v, loc);
  switch (v->kind) {
  case TV_EXPR: return v->u.e;
  case TV_BOOL: return tc_ir_bool(ev->ir, v->u.b, loc);
  case TV_INT:
    if (v->u.i >= INT32_MIN && v->u.i <= INT32_MAX) return tc_ir_int(ev->ir, v->u.i, tc_dt(TC_DT_INT32), loc);
    return tc_ir_int(ev->ir, v->u.i, tc_dt(TC_DT_INT64), loc);
  case TV_FLOAT: return tc_ir_float(ev->ir, v->u.f, tc_dt(TC_DT_FLOAT32), loc);
  default: not_scalar(ev, v, loc);
  }
}

tc_expr *ev_cast(tc_ev *ev, tc_expr *e, tc_dtype dt, tc_loc loc) {
  if (tc_dtype_eq(e->dtype, dt)) return e;
  if (e->op == TC_OP_CONST_INT || e->op == TC_OP_CONST_FLOAT) { /* a constant of the new dtype */
    tc_val tmp;
    if (e->op == TC_OP_CONST_FLOAT) {
      tmp.kind = TV_FLOAT;
      tmp.u.f = e->fval;
      if (!tc_dtype_is_float(dt)) {
        if (tc_dtype_is_bool(dt)) return tc_ir_int(ev->ir, e->fval != 0, dt, loc);
        if (!(e->fval > -9.2e18 && e->fval < 9.2e18)) return tc_ir_cast(ev->ir, dt, e, loc);
      }
    } else {
      tmp.kind = TV_INT;
      tmp.u.i = tc_dtype_is_bool(e->dtype) ? (e->ival != 0) : e->ival;
    }
    return const_of(ev, &tmp, dt, loc);
  }
  return tc_ir_cast(ev->ir, dt, e, loc);
}

tc_expr *ev_to_expr_as(tc_ev *ev, tc_val *v, tc_dtype dt, tc_loc loc) {
  v = ev_scalar(ev, v, loc);
  if (is_lit(v)) return const_of(ev, v, dt, loc);
  return ev_cast(ev, ev_to_expr(ev, v, loc), dt, loc);
}

tc_expr *ev_index_expr(tc_ev *ev, tc_val *v, tc_loc loc) {
  v = ev_scalar(ev, v, loc);
  if (v->kind == TV_INT || v->kind == TV_BOOL) {
    int64_t i = v->kind == TV_BOOL ? v->u.b : v->u.i;
    if (i < INT32_MIN || i > INT32_MAX) ev_fail(ev, loc, "index %lld does not fit in int32", (long long)i);
    return tc_ir_int(ev->ir, i, tc_index_dtype(), loc);
  }
  if (v->kind == TV_EXPR) {
    if (!tc_dtype_is_int(v->u.e->dtype) && !tc_dtype_is_bool(v->u.e->dtype))
      ev_fail(ev, loc, "buffer indices must be integers, but this one is %s", ev_dtype_name(v->u.e->dtype));
    return ev_cast(ev, v->u.e, tc_index_dtype(), loc);
  }
  if (v->kind == TV_FLOAT) ev_fail(ev, loc, "buffer indices must be integers, not float");
  if (v->kind == TV_SLICE) ev_fail(ev, loc, "a slice is not allowed here");
  ev_fail(ev, loc, "buffer indices must be integers, not %s", tv_kind_name(v));
}

tc_expr *ev_to_bool_expr(tc_ev *ev, tc_val *v, tc_loc loc) {
  v = ev_scalar(ev, v, loc);
  if (!ev_is_runtime(v)) return tc_ir_bool(ev->ir, ev_truth(ev, v, loc), loc);
  tc_expr *e = v->u.e;
  if (tc_dtype_is_bool(e->dtype)) return e;
  tc_expr *zero = tc_dtype_is_float(e->dtype) ? tc_ir_float(ev->ir, 0, e->dtype, loc) : tc_ir_int(ev->ir, 0, e->dtype, loc);
  return tc_ir_binary(ev->ir, TC_OP_NE, e, zero, loc);
}

/* Bring two scalar operands to one dtype, as TileLang (TVM) does: an int literal takes the IR
 * operand's dtype (bool operands become int32); a float literal is a float32 constant, so with
 * a narrower float operand both become float32 (x_fp16 * 2.0 is float32, x_fp16 * 2 is
 * float16). In comparisons (cmp=true) a float literal takes a float operand's dtype. */
static void unify_ex(tc_ev *ev, tc_val *x, tc_val *y, tc_expr **ex, tc_expr **ey, tc_loc loc, bool cmp) {
  x = ev_scalar(ev, x, loc);
  y = ev_scalar(ev, y, loc);
  if (!is_lit(x) && x->kind != TV_EXPR) not_scalar(ev, x, loc);
  if (!is_lit(y) && y->kind != TV_EXPR) not_scalar(ev, y, loc);
  if (is_lit(x) && is_lit(y)) {
    /* Two Python literals meet only where a runtime value chooses between them
     * (T.if_then_else(i < 64, 0, 1)): each takes its default dtype, then they promote. */
    tc_expr *a = ev_to_expr(ev, x, loc), *b = ev_to_expr(ev, y, loc);
    tc_dtype d = ev_promote(a->dtype, b->dtype);
    *ex = ev_cast(ev, a, d, loc);
    *ey = ev_cast(ev, b, d, loc);
    return;
  }
  if (x->kind == TV_EXPR && y->kind == TV_EXPR) {
    tc_dtype d = ev_promote(x->u.e->dtype, y->u.e->dtype);
    *ex = ev_cast(ev, x->u.e, d, loc);
    *ey = ev_cast(ev, y->u.e, d, loc);
    return;
  }
  bool swap = x->kind != TV_EXPR;
  tc_val *lit = swap ? x : y;
  tc_expr *e = swap ? y->u.e : x->u.e;
  tc_dtype d = e->dtype;
  if (lit->kind == TV_FLOAT && !tc_dtype_is_float(d)) {
    d = tc_dt(TC_DT_FLOAT32);
    e = ev_cast(ev, e, d, loc);
  } else if (lit->kind == TV_FLOAT && !cmp && tc_dtype_bits(d) < 32) {
    d = tc_dt(TC_DT_FLOAT32);
    e = ev_cast(ev, e, d, loc);
  } else if (tc_dtype_is_bool(d) && lit->kind != TV_BOOL) {
    d = lit->kind == TV_FLOAT ? tc_dt(TC_DT_FLOAT32) : tc_dt(TC_DT_INT32);
    e = ev_cast(ev, e, d, loc);
  }
  tc_expr *c = const_of(ev, lit, d, loc);
  if (swap) {
    *ex = c;
    *ey = e;
  } else {
    *ex = e;
    *ey = c;
  }
}

static void unify(tc_ev *ev, tc_val *x, tc_val *y, tc_expr **ex, tc_expr **ey, tc_loc loc) {
  unify_ex(ev, x, y, ex, ey, loc, false);
}

static bool fold_int(tc_expr_op op, tc_expr *a, tc_expr *b, int64_t *out) {
  if (a->op != TC_OP_CONST_INT || b->op != TC_OP_CONST_INT || !tc_dtype_is_int(a->dtype)) return false;
  int64_t x = a->ival, y = b->ival, r;
  switch (op) {
  case TC_OP_ADD: if (__builtin_add_overflow(x, y, &r)) return false; break;
  case TC_OP_SUB: if (__builtin_sub_overflow(x, y, &r)) return false; break;
  case TC_OP_MUL: if (__builtin_mul_overflow(x, y, &r)) return false; break;
  case TC_OP_FLOORDIV:
  case TC_OP_FLOORMOD: {
    if (y == 0 || (x == INT64_MIN && y == -1)) return false;
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) q--, m += y;
    r = op == TC_OP_FLOORDIV ? q : m;
    break;
  }
  case TC_OP_MIN: r = x < y ? x : y; break;
  case TC_OP_MAX: r = x > y ? x : y; break;
  default: return false;
  }
  int bits = tc_dtype_bits(a->dtype);
  if (bits < 64) {
    int64_t lo = tc_dtype_is_signed(a->dtype) ? -((int64_t)1 << (bits - 1)) : 0;
    int64_t hi = tc_dtype_is_signed(a->dtype) ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
    if (r < lo || r > hi) return false;
  }
  *out = r;
  return true;
}

static tc_expr *mk_binary(tc_ev *ev, tc_expr_op op, tc_expr *a, tc_expr *b, tc_loc loc) {
  int64_t r;
  if (fold_int(op, a, b, &r)) return tc_ir_int(ev->ir, r, a->dtype, loc);
  /* x + 0, x * 1: keep index arithmetic readable */
  if ((op == TC_OP_ADD || op == TC_OP_SUB) && b->op == TC_OP_CONST_INT && b->ival == 0 && tc_dtype_is_int(a->dtype)) return a;
  if (op == TC_OP_ADD && a->op == TC_OP_CONST_INT && a->ival == 0 && tc_dtype_is_int(b->dtype)) return b;
  if (op == TC_OP_MUL && b->op == TC_OP_CONST_INT && b->ival == 1 && tc_dtype_is_int(a->dtype)) return a;
  if (op == TC_OP_MUL && a->op == TC_OP_CONST_INT && a->ival == 1 && tc_dtype_is_int(b->dtype)) return b;
  return tc_ir_binary(ev->ir, op, a, b, loc);
}

tc_val *ev_ir_binop(tc_ev *ev, int op, tc_val *x, tc_val *y, tc_loc loc) {
  tc_expr *a, *b;
  unify(ev, x, y, &a, &b, loc);
  tc_dtype d = a->dtype;
  tc_expr_op iop;
  switch (op) {
  case TC_P_PLUS: iop = TC_OP_ADD; break;
  case TC_P_MINUS: iop = TC_OP_SUB; break;
  case TC_P_STAR: iop = TC_OP_MUL; break;
  case TC_P_SLASH: iop = TC_OP_DIV; break;
  case TC_P_DSLASH: iop = TC_OP_FLOORDIV; break;
  case TC_P_PERCENT: iop = TC_OP_FLOORMOD; break;
  case TC_P_DSTAR: iop = TC_OP_POW; break;
  case TC_P_AMP: iop = TC_OP_BIT_AND; break;
  case TC_P_PIPE: iop = TC_OP_BIT_OR; break;
  case TC_P_CARET: iop = TC_OP_BIT_XOR; break;
  case TC_P_LSHIFT: iop = TC_OP_SHL; break;
  case TC_P_RSHIFT: iop = TC_OP_SHR; break;
  default: ev_fail(ev, loc, "unsupported operator %s on runtime values", tc_punct_spelling((tc_punct)op));
  }
  bool bitop = iop >= TC_OP_BIT_AND && iop <= TC_OP_SHR;
  if (iop == TC_OP_DIV && !tc_dtype_is_float(d))
    ev_fail(ev, loc, "'/' on two integer values is ambiguous at run time (TileLang rejects it); use '//' for floor "
            "division, or cast an operand to a float dtype");
  if (tc_dtype_is_bool(d)) {
    if (iop == TC_OP_BIT_AND) return tv_expr(ev, tc_ir_binary(ev->ir, TC_OP_AND, a, b, loc));
    if (iop == TC_OP_BIT_OR) return tv_expr(ev, tc_ir_binary(ev->ir, TC_OP_OR, a, b, loc));
    if (iop == TC_OP_BIT_XOR) return tv_expr(ev, tc_ir_binary(ev->ir, TC_OP_NE, a, b, loc));
    a = ev_cast(ev, a, tc_dt(TC_DT_INT32), loc);
    b = ev_cast(ev, b, tc_dt(TC_DT_INT32), loc);
    d = a->dtype;
  }
  if (bitop && tc_dtype_is_float(d))
    ev_fail(ev, loc, "operator %s expects integer operands, got %s", tc_punct_spelling((tc_punct)op), ev_dtype_name(d));
  return tv_expr(ev, mk_binary(ev, iop, a, b, loc));
}

tc_val *ev_ir_compare(tc_ev *ev, tc_cmp_op op, tc_val *x, tc_val *y, tc_loc loc) {
  tc_expr *a, *b;
  static const tc_expr_op ops[] = {TC_OP_EQ, TC_OP_NE, TC_OP_LT, TC_OP_LE, TC_OP_GT, TC_OP_GE};
  if ((unsigned)op > TC_CMP_GE) ev_fail(ev, loc, "unsupported comparison on runtime values");
  unify_ex(ev, x, y, &a, &b, loc, true);
  return tv_expr(ev, tc_ir_binary(ev->ir, ops[op], a, b, loc));
}

tc_val *ev_ir_unary(tc_ev *ev, int op, tc_val *x, tc_loc loc) {
  tc_expr *e = ev_to_expr(ev, x, loc);
  if (op == TC_P_PLUS) return tv_expr(ev, e);
  if (tc_dtype_is_bool(e->dtype)) {
    if (op == TC_P_TILDE) return tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_NOT, e, loc));
    e = ev_cast(ev, e, tc_dt(TC_DT_INT32), loc);
  }
  if (op == TC_P_MINUS) {
    if (e->op == TC_OP_CONST_INT) return tv_expr(ev, tc_ir_int(ev->ir, -e->ival, e->dtype, loc));
    if (e->op == TC_OP_CONST_FLOAT) return tv_expr(ev, tc_ir_float(ev->ir, -e->fval, e->dtype, loc));
    return tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_NEG, e, loc));
  }
  if (op == TC_P_TILDE) {
    if (tc_dtype_is_float(e->dtype)) ev_fail(ev, loc, "operator ~ expects an integer operand, got %s", ev_dtype_name(e->dtype));
    return tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_BIT_NOT, e, loc));
  }
  ev_fail(ev, loc, "unsupported unary operator on a runtime value");
}

tc_val *ev_ir_math(tc_ev *ev, tc_expr_op op, const char *name, tc_val *x, tc_loc loc) {
  x = ev_scalar(ev, x, loc);
  tc_expr *e;
  if (x->kind == TV_FLOAT) e = tc_ir_float(ev->ir, x->u.f, tc_dt(TC_DT_FLOAT32), loc);
  else if (x->kind == TV_EXPR) e = x->u.e;
  else if (x->kind == TV_INT || x->kind == TV_BOOL)
    ev_fail(ev, loc, "%s expects a float operand, got the int %lld", name, (long long)(x->kind == TV_INT ? x->u.i : x->u.b));
  else not_scalar(ev, x, loc);
  if (!tc_dtype_is_float(e->dtype)) ev_fail(ev, loc, "%s expects a float operand, got %s", name, ev_dtype_name(e->dtype));
  return tv_expr(ev, tc_ir_unary(ev->ir, op, e, loc));
}

tc_val *ev_ir_minmax(tc_ev *ev, tc_expr_op op, tc_val *x, tc_val *y, tc_loc loc) {
  tc_expr *a, *b;
  unify(ev, x, y, &a, &b, loc);
  if (tc_dtype_is_bool(a->dtype)) {
    a = ev_cast(ev, a, tc_dt(TC_DT_INT32), loc);
    b = ev_cast(ev, b, tc_dt(TC_DT_INT32), loc);
  }
  return tv_expr(ev, mk_binary(ev, op, a, b, loc));
}

tc_val *ev_ir_select(tc_ev *ev, tc_val *c, tc_val *t, tc_val *f, tc_loc loc) {
  c = ev_scalar(ev, c, loc);
  if (!ev_is_runtime(c)) return ev_truth(ev, c, loc) ? t : f;
  tc_expr *cond = ev_to_bool_expr(ev, c, loc);
  tc_expr *a, *b;
  unify(ev, t, f, &a, &b, loc);
  return tv_expr(ev, tc_ir_select(ev->ir, cond, a, b, loc));
}

/* ---------------------------------------------------------------- why a value is runtime */

static const tc_expr *find_cause(const tc_expr *e, int depth) {
  if (!e || depth > 100) return NULL;
  if (e->op == TC_OP_VAR || e->op == TC_OP_LOAD) return e;
  for (int i = 0; i < e->nargs; i++) {
    const tc_expr *c = find_cause(e->args[i], depth + 1);
    if (c) return c;
  }
  return NULL;
}

const char *ev_runtime_reason(tc_ev *ev, tc_val *v) {
  if (v->kind == TV_ELEM) return tc_arena_printf(&ev->tmp, "depends on data loaded from '%s'", v->u.elem.buf->name);
  if (v->kind == TV_BUFFER) return tc_arena_printf(&ev->tmp, "reads the variable '%s'", v->u.buf->name);
  if (v->kind != TV_EXPR) return tc_arena_printf(&ev->tmp, "is %s", tv_kind_name(v));
  const tc_expr *c = find_cause(v->u.e, 0);
  if (!c) return "is computed at run time";
  if (c->op == TC_OP_LOAD) return tc_arena_printf(&ev->tmp, "depends on data loaded from '%s'", c->buf->name);
  const tc_var *var = c->var;
  switch (var->kind) {
  case TC_VAR_BLOCK_IDX: return "depends on the kernel's block index";
  case TC_VAR_THREAD_IDX: return "depends on the thread index";
  case TC_VAR_LOOP: return tc_arena_printf(&ev->tmp, "depends on the loop variable '%s'", var->name);
  case TC_VAR_SYMBOLIC:
    for (int i = 0; i < ev->nconst_dims; i++)
      if (ev->const_dims[i] == var)
        return tc_arena_printf(&ev->tmp, "depends on the symbolic dimension '%s' (a T.const size with no value; give it one with -D %s=...)",
                               var->name, var->name);
    return tc_arena_printf(&ev->tmp, "depends on the symbolic dimension '%s'", var->name);
  case TC_VAR_PARAM: return tc_arena_printf(&ev->tmp, "depends on the scalar parameter '%s'", var->name);
  case TC_VAR_LOCAL: return tc_arena_printf(&ev->tmp, "depends on the runtime variable '%s'", var->name);
  case TC_VAR_LAYOUT_INDEX: return tc_arena_printf(&ev->tmp, "depends on the layout index '%s'", var->name);
  }
  return "is computed at run time";
}

int64_t ev_need_int(tc_ev *ev, tc_val *v, const tc_ast *node, tc_loc loc, const char *what) {
  if (v->kind == TV_INT) return v->u.i;
  if (v->kind == TV_BOOL) return v->u.b;
  if (v->kind == TV_EXPR && v->u.e->op == TC_OP_CONST_INT && tc_dtype_is_int(v->u.e->dtype)) return v->u.e->ival;
  if (ev_is_runtime(v)) {
    if (node) ev_fail(ev, loc, "%s must be known at compile time, but '%s' %s", what, ev_node_text(ev, node), ev_runtime_reason(ev, v));
    ev_fail(ev, loc, "%s must be known at compile time, but it %s", what, ev_runtime_reason(ev, v));
  }
  if (v->kind == TV_NONE && node)
    ev_fail(ev, loc, "%s must be an int, but '%s' is None", what, ev_node_text(ev, node));
  ev_fail(ev, loc, "%s must be an int, not %s", what, tv_kind_name(v));
}

/* ---------------------------------------------------------------- symbolic simplification */

bool ev_expr_equal(const tc_expr *a, const tc_expr *b) {
  if (a == b) return true;
  if (!a || !b || a->op != b->op || !tc_dtype_eq(a->dtype, b->dtype) || a->nargs != b->nargs) return false;
  switch (a->op) {
  case TC_OP_CONST_INT: return a->ival == b->ival;
  case TC_OP_CONST_FLOAT: return a->fval == b->fval;
  case TC_OP_VAR: return a->var == b->var;
  case TC_OP_LOAD: if (a->buf != b->buf) return false; break;
  default: break;
  }
  for (int i = 0; i < a->nargs; i++)
    if (!ev_expr_equal(a->args[i], b->args[i])) return false;
  return true;
}

typedef struct lin_form {
  int n;
  int64_t coef[32];
  const tc_expr *atom[32];
  int64_t c;
  bool bad;
  bool expand_lets; /* a LOCAL var stands for the value of its LET (see ev_const_diff_lets) */
  unsigned since;   /* while expanding: a LOCAL var assigned at or after this stamp makes it bad */
  int nvars;
  tc_var *vars[32]; /* the LOCAL vars met while expanding */
} lin_form;

static void lin_note_var(lin_form *f, tc_var *v) {
  for (int i = 0; i < f->nvars; i++)
    if (f->vars[i] == v) return;
  if (f->nvars == 32) f->bad = true;
  else f->vars[f->nvars++] = v;
}

static void lin_add(lin_form *f, const tc_expr *e, int64_t coef, int depth) {
  if (f->bad) return;
  if (depth > 64) {
    f->bad = true;
    return;
  }
  int64_t t;
  switch (e->op) {
  case TC_OP_CONST_INT:
    if (__builtin_mul_overflow(coef, e->ival, &t) || __builtin_add_overflow(f->c, t, &f->c)) f->bad = true;
    return;
  case TC_OP_ADD:
    lin_add(f, e->args[0], coef, depth + 1);
    lin_add(f, e->args[1], coef, depth + 1);
    return;
  case TC_OP_SUB:
    lin_add(f, e->args[0], coef, depth + 1);
    lin_add(f, e->args[1], -coef, depth + 1);
    return;
  case TC_OP_NEG: lin_add(f, e->args[0], -coef, depth + 1); return;
  case TC_OP_VAR:
    if (f->expand_lets && e->var->kind == TC_VAR_LOCAL) {
      tc_var *v = e->var;
      lin_note_var(f, v);
      if (f->since && v->assign_stamp >= f->since) { /* assigned after the LET being expanded */
        f->bad = true;
        return;
      }
      if (v->let_value) {
        unsigned outer = f->since;
        if (!f->since || v->let_stamp < f->since) f->since = v->let_stamp;
        lin_add(f, v->let_value, coef, depth + 1);
        f->since = outer;
        return;
      }
    }
    break;
  case TC_OP_MUL:
    if (e->args[0]->op == TC_OP_CONST_INT) {
      if (__builtin_mul_overflow(coef, e->args[0]->ival, &t)) f->bad = true;
      else lin_add(f, e->args[1], t, depth + 1);
      return;
    }
    if (e->args[1]->op == TC_OP_CONST_INT) {
      if (__builtin_mul_overflow(coef, e->args[1]->ival, &t)) f->bad = true;
      else lin_add(f, e->args[0], t, depth + 1);
      return;
    }
    break;
  case TC_OP_CAST:
    /* an int-to-int widening/narrowing of an index keeps the linear structure for our sizes */
    if (tc_dtype_is_int(e->dtype) && tc_dtype_is_int(e->args[0]->dtype)) {
      lin_add(f, e->args[0], coef, depth + 1);
      return;
    }
    break;
  default: break;
  }
  for (int i = 0; i < f->n; i++)
    if (ev_expr_equal(f->atom[i], e)) {
      if (__builtin_add_overflow(f->coef[i], coef, &f->coef[i])) f->bad = true;
      return;
    }
  if (f->n == 32) {
    f->bad = true;
    return;
  }
  f->atom[f->n] = e;
  f->coef[f->n++] = coef;
}

bool ev_const_diff_lets(tc_expr *b, tc_expr *a, int64_t *out) {
  lin_form f;
  memset(&f, 0, sizeof f);
  f.expand_lets = true;
  lin_add(&f, b, 1, 0);
  lin_add(&f, a, -1, 0);
  if (f.bad) return false;
  for (int i = 0; i < f.n; i++)
    if (f.coef[i] != 0) return false;
  for (int i = 0; i < f.nvars; i++) f.vars[i]->folded = true;
  *out = f.c;
  return true;
}

bool ev_const_diff(tc_expr *b, tc_expr *a, int64_t *out) {
  lin_form f;
  memset(&f, 0, sizeof f);
  lin_add(&f, b, 1, 0);
  lin_add(&f, a, -1, 0);
  if (f.bad) return false;
  for (int i = 0; i < f.n; i++)
    if (f.coef[i] != 0) return false;
  *out = f.c;
  return true;
}
