/* range.c: the values an integer expression can take (analysis.h).
 *
 * The GPU printers spell signed 32- and 64-bit arithmetic through unsigned casts, which wraps as
 * the IR defines, where C's signed overflow would be undefined. Where the operands' ranges show
 * that the exact result fits the dtype, the plain operator computes the same value, and the
 * generated code reads as the program was written. Every range here is sound: a value outside it
 * cannot occur. Thread indices lie in [0, threads), block indices in [0, grid extent), a loop
 * variable in [min, min + extent), a LET's variable in its value's range (one assigned again has
 * its dtype's whole range); anything else has its dtype's range. */
#include <limits.h>

#include "analysis/analysis.h"
#include "util/arena.h"

static tc_int_range whole(void) { return (tc_int_range){INT64_MIN, INT64_MAX, false}; }
static tc_int_range span(int64_t lo, int64_t hi) { return (tc_int_range){lo, hi, true}; }

/* The values of an integer dtype; unknown for 64-bit unsigned (past INT64_MAX) and vectors. */
static tc_int_range dtype_range(tc_dtype d) {
  if (d.lanes > 1) return whole();
  if (tc_dtype_is_bool(d)) return span(0, 1);
  if (!tc_dtype_is_int(d)) return whole();
  int bits = tc_dtype_bits(d);
  if (bits >= 64) return tc_dtype_is_signed(d) ? span(INT64_MIN, INT64_MAX) : whole();
  if (tc_dtype_is_signed(d)) return span(-((int64_t)1 << (bits - 1)), ((int64_t)1 << (bits - 1)) - 1);
  return span(0, ((int64_t)1 << bits) - 1);
}

static bool within(tc_int_range r, tc_int_range in) { return r.known && in.known && r.lo >= in.lo && r.hi <= in.hi; }

/* r clipped to what e's dtype can hold: a result outside it wraps, so only the dtype's range holds */
static tc_int_range as_dtype(tc_int_range r, tc_dtype d) {
  tc_int_range t = dtype_range(d);
  return within(r, t) ? r : t;
}

void tc_ranges_init(tc_ranges *R, tc_arena *a, const tc_kernel_ir *k) {
  R->k = k;
  R->nvars = k->next_id + 1;
  R->var = TC_NEW_ARRAY(a, tc_int_range, R->nvars);
  R->assigned = TC_NEW_ARRAY(a, bool, R->nvars);
}

void tc_ranges_note_assigned(tc_ranges *R, const tc_stmt *s) {
  if (s->kind == TC_ST_ASSIGN && s->u.let.var->id >= 0 && s->u.let.var->id < R->nvars) R->assigned[s->u.let.var->id] = true;
}

void tc_range_set(tc_ranges *R, const tc_var *v, tc_int_range r) {
  if (v->id < 0 || v->id >= R->nvars) return;
  R->var[v->id] = R->assigned[v->id] ? whole() : as_dtype(r, v->dtype);
}

void tc_range_set_loop(tc_ranges *R, const tc_var *v, const tc_expr *min, const tc_expr *extent) {
  tc_int_range m = tc_range_of(R, min), n = extent ? tc_range_of(R, extent) : whole();
  int64_t hi;
  if (!m.known) {
    tc_range_set(R, v, whole());
    return;
  }
  /* the counter stops below min + extent; with no bound on that, below its dtype's maximum */
  if (n.known && !__builtin_add_overflow(m.hi, n.hi, &hi)) tc_range_set(R, v, span(m.lo, hi - 1 < m.lo ? m.lo : hi - 1));
  else tc_range_set(R, v, span(m.lo, dtype_range(v->dtype).hi));
}

static tc_int_range var_range(const tc_ranges *R, const tc_var *v) {
  const tc_kernel_ir *k = R->k;
  if (v->kind == TC_VAR_THREAD_IDX && v->axis >= 0 && v->axis < k->threads_ndim) /* a producer warpgroup comes after */
    return span(0, k->threads[v->axis] + (v->axis == 0 ? k->producer_threads : 0) - 1);
  if (v->kind == TC_VAR_BLOCK_IDX && v->axis >= 0 && v->axis < k->grid_ndim && k->grid[v->axis]) {
    tc_int_range g = tc_range_of(R, k->grid[v->axis]);
    return g.known && g.hi >= 1 ? span(0, g.hi - 1) : span(0, dtype_range(v->dtype).hi);
  }
  if (v->kind == TC_VAR_SYMBOLIC) { /* a size: never negative */
    tc_int_range d = dtype_range(v->dtype);
    return d.known ? span(0, d.hi) : d;
  }
  if (v->id >= 0 && v->id < R->nvars && R->var[v->id].known) return R->var[v->id];
  return dtype_range(v->dtype);
}

/* the product's range, or unknown when a corner overflows */
static tc_int_range mul_range(tc_int_range a, tc_int_range b) {
  int64_t c[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &c[0]) || __builtin_mul_overflow(a.lo, b.hi, &c[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &c[2]) || __builtin_mul_overflow(a.hi, b.hi, &c[3]))
    return whole();
  tc_int_range r = span(c[0], c[0]);
  for (int i = 1; i < 4; i++) r.lo = c[i] < r.lo ? c[i] : r.lo, r.hi = c[i] > r.hi ? c[i] : r.hi;
  return r;
}

static int64_t floor_div(int64_t x, int64_t d) { return x / d - (x % d != 0 && (x < 0) != (d < 0)); }

/* 2^k - 1 covering x >= 0: what an or / xor of values in [0, x] can reach */
static int64_t mask_covering(int64_t x) {
  int64_t m = 0;
  while (m < x) m = m * 2 + 1;
  return m;
}

/* The exact (unwrapped) result of e's own operation on its operands' ranges. */
static tc_int_range exact_range(const tc_ranges *R, const tc_expr *e) {
  tc_int_range a = e->nargs > 0 ? tc_range_of(R, e->args[0]) : whole();
  tc_int_range b = e->nargs > 1 ? tc_range_of(R, e->args[1]) : whole();
  int64_t lo, hi;
  switch (e->op) {
  case TC_OP_CONST_INT: return span(e->ival, e->ival);
  case TC_OP_VAR: return var_range(R, e->var);
  case TC_OP_ADD:
    if (!a.known || !b.known || __builtin_add_overflow(a.lo, b.lo, &lo) || __builtin_add_overflow(a.hi, b.hi, &hi)) return whole();
    return span(lo, hi);
  case TC_OP_SUB:
    if (!a.known || !b.known || __builtin_sub_overflow(a.lo, b.hi, &lo) || __builtin_sub_overflow(a.hi, b.lo, &hi)) return whole();
    return span(lo, hi);
  case TC_OP_MUL: return a.known && b.known ? mul_range(a, b) : whole();
  case TC_OP_NEG:
    if (!a.known || a.lo == INT64_MIN) return whole();
    return span(-a.hi, -a.lo);
  case TC_OP_FLOORDIV:
    if (!a.known || !b.known || b.lo != b.hi || b.lo <= 0) return a.known && b.known && a.lo >= 0 && b.lo > 0 ? span(0, a.hi) : whole();
    return span(floor_div(a.lo, b.lo), floor_div(a.hi, b.lo));
  case TC_OP_FLOORMOD:
    if (!b.known || b.lo <= 0) return whole();
    if (a.known && a.lo >= 0 && a.hi < b.lo) return a; /* already below the divisor */
    return span(0, b.hi - 1);
  case TC_OP_MIN: /* below both; with one side unknown, still below the known one */
    if (a.known && b.known) return span(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi);
    return whole();
  case TC_OP_MAX: /* above both; with one side unknown, still above the known one */
    if (a.known && b.known) return span(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
    if (a.known || b.known) return span(a.known ? a.lo : b.lo, dtype_range(e->dtype).hi);
    return whole();
  case TC_OP_BIT_AND:
    if (a.known && a.lo >= 0 && b.known && b.lo >= 0) return span(0, a.hi < b.hi ? a.hi : b.hi);
    if (a.known && a.lo >= 0) return span(0, a.hi);
    if (b.known && b.lo >= 0) return span(0, b.hi);
    return whole();
  case TC_OP_BIT_OR: case TC_OP_BIT_XOR:
    if (a.known && a.lo >= 0 && b.known && b.lo >= 0) return span(0, mask_covering(a.hi > b.hi ? a.hi : b.hi));
    return whole();
  case TC_OP_SHR:
    if (a.known && a.lo >= 0 && b.known && b.lo >= 0 && b.hi < 63) return span(a.lo >> b.hi, a.hi >> b.lo);
    return whole();
  case TC_OP_SHL:
    if (a.known && a.lo >= 0 && b.known && b.lo >= 0 && b.hi < 62 && a.hi <= (INT64_MAX >> b.hi)) return span(a.lo << b.lo, a.hi << b.hi);
    return whole();
  case TC_OP_SELECT: {
    tc_int_range x = tc_range_of(R, e->args[1]), y = tc_range_of(R, e->args[2]);
    if (!x.known || !y.known) return whole();
    return span(x.lo < y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi);
  }
  case TC_OP_CAST: return tc_dtype_is_int(e->args[0]->dtype) || tc_dtype_is_bool(e->args[0]->dtype) ? a : whole();
  case TC_OP_EQ: case TC_OP_NE: case TC_OP_LT: case TC_OP_LE: case TC_OP_GT: case TC_OP_GE:
  case TC_OP_AND: case TC_OP_OR: case TC_OP_NOT:
    return span(0, 1);
  default: return whole();
  }
}

tc_int_range tc_range_of(const tc_ranges *R, const tc_expr *e) {
  if (!e || e->nargs > 3) return whole();
  if (!tc_dtype_is_int(e->dtype) && !tc_dtype_is_bool(e->dtype)) return whole();
  return as_dtype(exact_range(R, e), e->dtype);
}

bool tc_range_exact(const tc_ranges *R, const tc_expr *e) {
  if (!e || !tc_dtype_is_int(e->dtype) || e->dtype.lanes > 1) return false;
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i]->dtype.code != e->dtype.code) return false;
  return within(exact_range(R, e), dtype_range(e->dtype));
}

bool tc_range_nonneg(const tc_ranges *R, const tc_expr *e) {
  tc_int_range r = tc_range_of(R, e);
  return r.known && r.lo >= 0;
}
