/* test_range.c: integer ranges (src/analysis/range.c), which let the GPU printers spell int32
 * arithmetic with C's plain operators. Soundness is what matters: a value outside a computed
 * range, or an operation called exact that wraps, would print code that computes another
 * number. So besides the cases written out, random expressions over variables of random ranges
 * are evaluated (with the IR's wrapping int32 semantics) at random points and checked. */
#include "analysis/analysis.h"
#include "harness.h"
#include "ir_samples.h"

TEST(thread_block_and_loop_ranges) {
  tc_kernel_ir *k = S_kernel("ranges");
  k->threads[0] = 128;
  k->grid[0] = S_I(16);
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", tc_dt(TC_DT_INT32), TC_VAR_THREAD_IDX, S_NOLOC);
  tc_var *bx = tc_ir_new_var(S_A, k, "bx", tc_dt(TC_DT_INT32), TC_VAR_BLOCK_IDX, S_NOLOC);
  tc_var *i = tc_ir_new_var(S_A, k, "i", tc_dt(TC_DT_INT32), TC_VAR_LOOP, S_NOLOC);
  tc_var *n = tc_ir_new_var(S_A, k, "n", tc_dt(TC_DT_INT32), TC_VAR_SYMBOLIC, S_NOLOC);
  tc_ranges R;
  tc_ranges_init(&R, S_A, k);
  tc_range_set_loop(&R, i, S_I(0), S_I(4));
  tc_int_range r = tc_range_of(&R, S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(bx), S_I(128)), S_V(tx)));
  CHECK(r.known);
  CHECK_INT(r.lo, 0);
  CHECK_INT(r.hi, 16 * 128 - 1);
  r = tc_range_of(&R, S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(128)), S_V(tx)));
  CHECK_INT(r.hi, 511);
  CHECK(tc_range_exact(&R, S_B(TC_OP_MUL, S_V(bx), S_I(128))));
  /* a symbolic size is non-negative but unbounded: n * 128 may wrap, n >> 2 may not */
  CHECK(!tc_range_exact(&R, S_B(TC_OP_MUL, S_V(n), S_I(128))));
  CHECK(tc_range_nonneg(&R, S_B(TC_OP_FLOORDIV, S_V(n), S_I(4))));
  CHECK(!tc_range_nonneg(&R, S_B(TC_OP_SUB, S_V(tx), S_I(1))));
  /* the block index of a symbolic grid: below the grid's range */
  k->grid[0] = S_B(TC_OP_FLOORDIV, S_V(n), S_I(64));
  CHECK(tc_range_nonneg(&R, S_V(bx)));
  CHECK(!tc_range_exact(&R, S_B(TC_OP_MUL, S_V(bx), S_I(1 << 20))));
  CHECK(tc_range_exact(&R, S_B(TC_OP_MUL, S_V(bx), S_I(64))));
}

TEST(reassigned_variable_has_its_dtype_range) {
  tc_kernel_ir *k = S_kernel("assigned");
  tc_var *v = tc_ir_new_var(S_A, k, "v", tc_dt(TC_DT_INT32), TC_VAR_LOCAL, S_NOLOC);
  tc_ranges R;
  tc_ranges_init(&R, S_A, k);
  tc_stmt *as = tc_ir_stmt(S_A, TC_ST_ASSIGN, S_NOLOC);
  as->u.let.var = v;
  as->u.let.value = S_I(3);
  tc_ranges_note_assigned(&R, as);
  tc_range_set(&R, v, (tc_int_range){0, 7, true});
  CHECK(!tc_range_nonneg(&R, S_V(v)));
  CHECK(!tc_range_exact(&R, S_B(TC_OP_ADD, S_V(v), S_I(1))));
}

/* ---- random expressions against the IR's own int32 semantics ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

#define NV 3
typedef struct world {
  tc_var *v[NV];
  int64_t lo[NV], hi[NV], val[NV];
} world;

static tc_expr *random_expr(world *W, int depth) {
  if (depth == 0 || rnd() % 4 == 0) {
    if (rnd() % 3) return S_V(W->v[rnd() % NV]);
    return S_I(pick(-3, 300));
  }
  static const tc_expr_op ops[] = {TC_OP_ADD, TC_OP_SUB, TC_OP_MUL, TC_OP_FLOORDIV, TC_OP_FLOORMOD, TC_OP_MIN, TC_OP_MAX,
                                   TC_OP_BIT_AND, TC_OP_BIT_OR, TC_OP_BIT_XOR, TC_OP_SHR, TC_OP_SHL, TC_OP_SELECT};
  tc_expr_op op = ops[rnd() % (sizeof ops / sizeof ops[0])];
  tc_expr *x = random_expr(W, depth - 1);
  switch (op) {
  case TC_OP_FLOORDIV: case TC_OP_FLOORMOD: return S_B(op, x, S_I(pick(1, 70)));
  case TC_OP_SHR: case TC_OP_SHL: return S_B(op, x, S_I(pick(0, 12)));
  case TC_OP_SELECT: return tc_ir_select(S_A, S_B(TC_OP_LT, x, S_I(50)), random_expr(W, depth - 1), random_expr(W, depth - 1), S_NOLOC);
  default: return S_B(op, x, random_expr(W, depth - 1));
  }
}

static int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static int64_t fdiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* the value as the IR defines it (int32, wrapping); *exact: the unwrapped result of e's own
 * operation on its (wrapped) operands */
static int32_t eval(const world *W, const tc_expr *e, int64_t *exact) {
  int64_t dummy, a = 0, b = 0, r;
  if (e->nargs > 0 && e->op != TC_OP_SELECT) a = eval(W, e->args[0], &dummy);
  if (e->nargs > 1 && e->op != TC_OP_SELECT) b = eval(W, e->args[1], &dummy);
  switch (e->op) {
  case TC_OP_CONST_INT: r = e->ival; break;
  case TC_OP_VAR:
    r = 0;
    for (int i = 0; i < NV; i++)
      if (W->v[i] == e->var) r = W->val[i];
    break;
  case TC_OP_ADD: r = a + b; break;
  case TC_OP_SUB: r = a - b; break;
  case TC_OP_MUL: r = a * b; break;
  case TC_OP_FLOORDIV: r = fdiv(a, b); break;
  case TC_OP_FLOORMOD: r = a - fdiv(a, b) * b; break;
  case TC_OP_MIN: r = a < b ? a : b; break;
  case TC_OP_MAX: r = a > b ? a : b; break;
  case TC_OP_BIT_AND: r = a & b; break;
  case TC_OP_BIT_OR: r = a | b; break;
  case TC_OP_BIT_XOR: r = a ^ b; break;
  case TC_OP_SHR: r = a >> b; break;
  case TC_OP_SHL: r = (int64_t)((uint64_t)a << b); break;
  case TC_OP_LT: r = a < b; break;
  case TC_OP_SELECT: r = eval(W, e->args[0], &dummy) ? eval(W, e->args[1], &dummy) : eval(W, e->args[2], &dummy); break;
  default: r = 0; break;
  }
  *exact = r;
  return wrap32(r);
}

static bool check_tree(const tc_ranges *R, const world *W, const tc_expr *e, char *why, size_t cap) {
  for (int i = 0; i < e->nargs; i++)
    if (!check_tree(R, W, e->args[i], why, cap)) return false;
  int64_t exact;
  int32_t v = eval(W, e, &exact);
  tc_int_range r = tc_range_of(R, e);
  if (r.known && (v < r.lo || v > r.hi)) {
    snprintf(why, cap, "op %s: value %d outside [%lld, %lld]", tc_expr_op_name(e->op), v, (long long)r.lo, (long long)r.hi);
    return false;
  }
  if (tc_range_exact(R, e) && exact != v) {
    snprintf(why, cap, "op %s: called exact, but %lld wraps to %d", tc_expr_op_name(e->op), (long long)exact, v);
    return false;
  }
  return true;
}

TEST(random_expressions_stay_in_their_ranges) {
  tc_kernel_ir *k = S_kernel("random");
  int exact_nodes = 0;
  for (int round = 0; round < 400; round++) {
    world W;
    for (int i = 0; i < NV; i++) W.v[i] = tc_ir_new_var(S_A, k, "v", tc_dt(TC_DT_INT32), TC_VAR_LOOP, S_NOLOC);
    tc_ranges R;
    tc_ranges_init(&R, S_A, k);
    for (int i = 0; i < NV; i++) {
      /* small ranges mostly, some near the int32 limits so that wrapping happens */
      int64_t lo = rnd() % 5 ? pick(-50, 200) : pick(INT32_MAX - 1000, INT32_MAX - 500);
      int64_t ext = pick(1, rnd() % 5 ? 300 : 400);
      W.lo[i] = lo, W.hi[i] = lo + ext - 1;
      tc_range_set_loop(&R, W.v[i], S_I(lo), S_I(ext));
    }
    tc_expr *e = random_expr(&W, 5);
    for (int t = 0; t < 50; t++) {
      for (int i = 0; i < NV; i++) W.val[i] = t == 0 ? W.lo[i] : t == 1 ? W.hi[i] : pick(W.lo[i], W.hi[i]);
      char why[200];
      if (!check_tree(&R, &W, e, why, sizeof why)) {
        printf("  round %d: %s\n", round, why);
        CHECK(false);
      }
    }
    exact_nodes += tc_range_exact(&R, e);
  }
  CHECK(exact_nodes > 50); /* the check above saw many expressions printed with plain operators */
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  RUN(thread_block_and_loop_ranges);
  RUN(reassigned_variable_has_its_dtype_range);
  RUN(random_expressions_stay_in_their_ranges);
  tc_arena_free(&arena);
  TEST_MAIN_END();
}
