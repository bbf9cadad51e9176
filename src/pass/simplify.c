/* simplify.c: constant folding and the algebraic identities that index arithmetic produces
 * (x + 0, x * 1, x * 0 for integers, x // 1, casts of constants). Integer results wrap to the
 * width of their dtype, as the generated code would compute them. Floats fold only where the
 * result is exact in the dtype (float32/float64) and never through identities that NaN breaks. */
#include <math.h>

#include "ir/walk.h"
#include "pass/pass.h"

int64_t tc_wrap_int(int64_t v, tc_dtype dt) {
  int bits = tc_dtype_bits(dt);
  if (tc_dtype_is_bool(dt)) return v != 0;
  if (bits >= 64) return v;
  uint64_t mask = (1ull << bits) - 1, u = (uint64_t)v & mask;
  if (tc_dtype_is_signed(dt) && (u >> (bits - 1))) u |= ~mask;
  return (int64_t)u;
}

static bool is_int_const(const tc_expr *e, int64_t v) { return e->op == TC_OP_CONST_INT && e->ival == v; }
static bool int_typed(const tc_expr *e) { return tc_dtype_is_int(e->dtype) && e->dtype.lanes == 1; }

static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static int64_t floormod(int64_t a, int64_t b) {
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

bool tc_fold_int(tc_expr_op op, int64_t a, int64_t b, int64_t *out) {
  switch (op) {
  case TC_OP_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return true;
  case TC_OP_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return true;
  case TC_OP_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return true;
  case TC_OP_DIV: if (b == 0 || (a == INT64_MIN && b == -1)) return false; *out = a / b; return true;
  case TC_OP_FLOORDIV: if (b == 0 || (a == INT64_MIN && b == -1)) return false; *out = floordiv(a, b); return true;
  case TC_OP_FLOORMOD: if (b == 0 || (a == INT64_MIN && b == -1)) return false; *out = floormod(a, b); return true;
  case TC_OP_MIN: *out = a < b ? a : b; return true;
  case TC_OP_MAX: *out = a > b ? a : b; return true;
  case TC_OP_BIT_AND: *out = a & b; return true;
  case TC_OP_BIT_OR: *out = a | b; return true;
  case TC_OP_BIT_XOR: *out = a ^ b; return true;
  case TC_OP_SHL: if (b < 0 || b > 62) return false; *out = (int64_t)((uint64_t)a << b); return true;
  case TC_OP_SHR: if (b < 0 || b > 62) return false; *out = a >> b; return true;
  case TC_OP_EQ: *out = a == b; return true;
  case TC_OP_NE: *out = a != b; return true;
  case TC_OP_LT: *out = a < b; return true;
  case TC_OP_LE: *out = a <= b; return true;
  case TC_OP_GT: *out = a > b; return true;
  case TC_OP_GE: *out = a >= b; return true;
  case TC_OP_AND: *out = a && b; return true;
  case TC_OP_OR: *out = a || b; return true;
  default: return false;
  }
}

static tc_expr *simplify_node(void *ctx, tc_expr *e) {
  tc_arena *a = ctx;
  tc_expr *x = e->nargs > 0 ? e->args[0] : NULL, *y = e->nargs > 1 ? e->args[1] : NULL;
  if (e->nargs == 2 && x->op == TC_OP_CONST_INT && y->op == TC_OP_CONST_INT && int_typed(x)) {
    int64_t v;
    if (tc_fold_int(e->op, x->ival, y->ival, &v)) return tc_ir_int(a, tc_wrap_int(v, e->dtype), e->dtype, e->loc);
  }
  if (e->nargs == 2 && (e->op == TC_OP_AND || e->op == TC_OP_OR) && x->op == TC_OP_CONST_INT) {
    bool xv = x->ival != 0;
    if (e->op == TC_OP_AND) return xv ? y : x;
    return xv ? x : y;
  }
  /* x && true, x || false: x, when x is itself a truth value (the other cases may skip x's evaluation
   * only by changing the result's type or dropping a side effect, so they stay) */
  if (e->nargs == 2 && (e->op == TC_OP_AND || e->op == TC_OP_OR) && y->op == TC_OP_CONST_INT && tc_dtype_is_bool(x->dtype) &&
      (y->ival != 0) == (e->op == TC_OP_AND))
    return x;
  switch (e->op) {
  case TC_OP_ADD:
    if (int_typed(e) && is_int_const(y, 0)) return x;
    if (int_typed(e) && is_int_const(x, 0)) return y;
    break;
  case TC_OP_SUB:
    if (int_typed(e) && is_int_const(y, 0)) return x;
    break;
  case TC_OP_MUL:
    if (int_typed(e) && is_int_const(y, 1)) return x;
    if (int_typed(e) && is_int_const(x, 1)) return y;
    if (int_typed(e) && (is_int_const(x, 0) || is_int_const(y, 0))) return tc_ir_int(a, 0, e->dtype, e->loc);
    break;
  case TC_OP_FLOORDIV:
  case TC_OP_DIV:
    if (int_typed(e) && is_int_const(y, 1)) return x;
    break;
  case TC_OP_FLOORMOD:
    if (int_typed(e) && is_int_const(y, 1)) return tc_ir_int(a, 0, e->dtype, e->loc);
    break;
  case TC_OP_NEG:
    if (x->op == TC_OP_CONST_INT && int_typed(x)) return tc_ir_int(a, tc_wrap_int(-x->ival, e->dtype), e->dtype, e->loc);
    if (x->op == TC_OP_CONST_FLOAT) return tc_ir_float(a, -x->fval, e->dtype, e->loc);
    break;
  case TC_OP_NOT:
    if (x->op == TC_OP_CONST_INT) return tc_ir_bool(a, x->ival == 0, e->loc);
    break;
  case TC_OP_SELECT:
    if (x->op == TC_OP_CONST_INT) return x->ival ? e->args[1] : e->args[2];
    break;
  case TC_OP_CAST:
    if (tc_dtype_eq(e->dtype, x->dtype)) return x;
    if (x->op == TC_OP_CONST_INT && (tc_dtype_is_int(e->dtype) || tc_dtype_is_bool(e->dtype)) && e->dtype.lanes == 1)
      return tc_ir_int(a, tc_wrap_int(x->ival, e->dtype), e->dtype, e->loc);
    if (x->op == TC_OP_CONST_INT && e->dtype.code == TC_DT_FLOAT64 && e->dtype.lanes == 1)
      return tc_ir_float(a, (double)x->ival, e->dtype, e->loc);
    if (x->op == TC_OP_CONST_INT && e->dtype.code == TC_DT_FLOAT32 && e->dtype.lanes == 1)
      return tc_ir_float(a, (double)(float)x->ival, e->dtype, e->loc);
    if (x->op == TC_OP_CONST_FLOAT && e->dtype.code == TC_DT_FLOAT32 && x->dtype.code == TC_DT_FLOAT64)
      return tc_ir_float(a, (double)(float)x->fval, e->dtype, e->loc);
    break;
  default:
    break;
  }
  return e;
}

tc_expr *tc_simplify_expr(tc_arena *arena, tc_expr *e) { return tc_rewrite_expr(e, simplify_node, arena); }

bool tc_pass_simplify(tc_arena *arena, tc_kernel_ir *k, tilec_error *err) {
  (void)err;
  for (int i = 0; i < k->grid_ndim; i++) k->grid[i] = tc_simplify_expr(arena, k->grid[i]);
  tc_rewrite_stmt_exprs(k->body, simplify_node, arena);
  return true;
}
