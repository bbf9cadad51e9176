/* affine.c: an index expression as c0 + sum coef[i] * vars[i] (contract in analysis.h). */
#include "analysis/analysis.h"

static bool is_var_of(const tc_affine_vars *A, const tc_var *v, int *at) {
  for (int i = 0; i < A->nv; i++)
    if (A->vars[i] == v) {
      *at = i;
      return true;
    }
  return false;
}

bool tc_expr_free_of(const tc_affine_vars *A, const tc_expr *e) {
  if (e->op == TC_OP_LOAD) return false;
  if (e->op == TC_OP_VAR) {
    int at;
    if (is_var_of(A, e->var, &at)) return false;
    if (A->opaque && A->opaque(A->ctx, e->var)) return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!tc_expr_free_of(A, e->args[i])) return false;
  return true;
}

static bool affine(const tc_affine_vars *A, const tc_expr *e, int64_t scale, int64_t *coef) {
  switch (e->op) {
  case TC_OP_VAR: {
    int at;
    if (is_var_of(A, e->var, &at)) {
      coef[at] += scale;
      return true;
    }
    return tc_expr_free_of(A, e);
  }
  case TC_OP_CONST_INT: return true;
  case TC_OP_ADD: return affine(A, e->args[0], scale, coef) && affine(A, e->args[1], scale, coef);
  case TC_OP_SUB: return affine(A, e->args[0], scale, coef) && affine(A, e->args[1], -scale, coef);
  case TC_OP_NEG: return affine(A, e->args[0], -scale, coef);
  case TC_OP_CAST:
    return !tc_dtype_is_float(e->dtype) && !tc_dtype_is_float(e->args[0]->dtype) && affine(A, e->args[0], scale, coef);
  case TC_OP_MUL:
    if (e->args[0]->op == TC_OP_CONST_INT) return affine(A, e->args[1], scale * e->args[0]->ival, coef);
    if (e->args[1]->op == TC_OP_CONST_INT) return affine(A, e->args[0], scale * e->args[1]->ival, coef);
    return tc_expr_free_of(A, e);
  default: return tc_expr_free_of(A, e);
  }
}

bool tc_expr_affine(const tc_affine_vars *A, const tc_expr *e, int64_t *coef) { return affine(A, e, 1, coef); }
