/* const_eval.c: tc_expr_eval_int, a small evaluator of integer expressions with bound
 * variables (layouts, constant folding in later passes). Integer results wrap to their dtype's
 * width, as the interpreter's do; // and % follow Python. */
#include "ir/ir.h"

static int64_t wrap_to(tc_dtype d, int64_t v) {
  if (tc_dtype_is_bool(d)) return v != 0;
  int bits = tc_dtype_bits(d);
  if (bits <= 0 || bits >= 64) return v;
  uint64_t m = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & m;
  if (tc_dtype_is_signed(d) && (u >> (bits - 1))) u |= ~m;
  return (int64_t)u;
}

static bool eval_rec(const tc_expr *e, tc_var_binding_fn bind, void *ctx, int64_t *out, int depth) {
  if (!e || depth > 200) return false;
  if (tc_dtype_is_float(e->dtype) || e->dtype.lanes != 1) return false;
  int64_t a = 0, b = 0, c = 0;
  switch (e->op) {
  case TC_OP_CONST_INT: *out = wrap_to(e->dtype, e->ival); return true;
  case TC_OP_VAR: return e->var && bind && bind(ctx, e->var, out);
  case TC_OP_SELECT:
    if (e->nargs != 3 || !eval_rec(e->args[0], bind, ctx, &c, depth + 1)) return false;
    return eval_rec(e->args[c ? 1 : 2], bind, ctx, out, depth + 1);
  case TC_OP_CAST:
    if (e->nargs != 1 || !eval_rec(e->args[0], bind, ctx, &a, depth + 1)) return false;
    *out = wrap_to(e->dtype, a);
    return true;
  default: break;
  }
  int arity = tc_expr_op_arity(e->op);
  tc_op_class cls = tc_expr_op_class(e->op);
  if ((cls != TC_CLS_ARITH && cls != TC_CLS_CMP && cls != TC_CLS_LOGIC) || arity < 1 || e->nargs != arity) return false;
  if (!eval_rec(e->args[0], bind, ctx, &a, depth + 1)) return false;
  if (arity > 1 && !eval_rec(e->args[1], bind, ctx, &b, depth + 1)) return false;
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int64_t r;
  switch (e->op) {
  case TC_OP_ADD: r = (int64_t)(ua + ub); break;
  case TC_OP_SUB: r = (int64_t)(ua - ub); break;
  case TC_OP_MUL: r = (int64_t)(ua * ub); break;
  case TC_OP_DIV:
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    r = a / b;
    break;
  case TC_OP_FLOORDIV:
  case TC_OP_FLOORMOD: {
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) q--, m += b;
    r = e->op == TC_OP_FLOORDIV ? q : m;
    break;
  }
  case TC_OP_MIN: r = a < b ? a : b; break;
  case TC_OP_MAX: r = a > b ? a : b; break;
  case TC_OP_NEG: r = (int64_t)(0 - ua); break;
  case TC_OP_ABS: r = a < 0 ? (int64_t)(0 - ua) : a; break;
  case TC_OP_BIT_AND: r = a & b; break;
  case TC_OP_BIT_OR: r = a | b; break;
  case TC_OP_BIT_XOR: r = a ^ b; break;
  case TC_OP_BIT_NOT: r = ~a; break;
  case TC_OP_SHL:
    if (b < 0 || b > 63) return false;
    r = (int64_t)(ua << b);
    break;
  case TC_OP_SHR:
    if (b < 0 || b > 63) return false;
    r = tc_dtype_is_signed(e->dtype) ? a >> b : (int64_t)(ua >> b);
    break;
  case TC_OP_EQ: r = a == b; break;
  case TC_OP_NE: r = a != b; break;
  case TC_OP_LT: r = a < b; break;
  case TC_OP_LE: r = a <= b; break;
  case TC_OP_GT: r = a > b; break;
  case TC_OP_GE: r = a >= b; break;
  case TC_OP_AND: r = a && b; break;
  case TC_OP_OR: r = a || b; break;
  case TC_OP_NOT: r = !a; break;
  default: return false; /* POW and anything new */
  }
  *out = wrap_to(e->dtype, r);
  return true;
}

bool tc_expr_eval_int(const tc_expr *e, tc_var_binding_fn bind, void *ctx, int64_t *out) {
  int64_t v;
  if (!eval_rec(e, bind, ctx, &v, 0)) return false;
  if (out) *out = v;
  return true;
}
