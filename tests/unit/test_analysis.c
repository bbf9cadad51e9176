/* test_analysis.c: the shared analyses (src/analysis/) and the insert-barriers pass: one rule
 * for who runs a tile operation, the varying analysis, affine indices, conflicts, and where
 * barriers go. */
#include <string.h>

#include "analysis/analysis.h"
#include "harness.h"
#include "ir_samples.h"
#include "pass/pass.h"

static tc_dtype f32(void) { return tc_dt(TC_DT_FLOAT32); }
static tc_dtype i32(void) { return tc_dt(TC_DT_INT32); }

static const char *printed(const tc_kernel_ir *k) {
  static char out[8192];
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_kernel(&sb, k);
  snprintf(out, sizeof out, "%s", tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  return out;
}

TEST(tile_op_classification) {
  tc_kernel_ir *k = S_kernel("cls");
  tc_buffer *S = S_buf(k, "S", f32(), TC_SCOPE_SHARED, 1, 16);
  tc_buffer *F = S_buf(k, "F", f32(), TC_SCOPE_FRAGMENT, 1, 16);
  tc_buffer *L = S_buf(k, "L", f32(), TC_SCOPE_LOCAL, 1, 1);
  tc_buffer *V = S_buf(k, "V", f32(), TC_SCOPE_VAR, 1, 1);
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32(), TC_VAR_THREAD_IDX, S_NOLOC);
  /* block-wide: every operand shared by the block */
  CHECK(tc_stmt_exec(S_copy(S_W(S), S_W(F))) == TC_EXEC_BLOCK);
  CHECK(tc_stmt_exec(S_fill(S_W(S), S_F(0))) == TC_EXEC_BLOCK);
  /* per thread: a local or var operand, source or destination */
  CHECK(tc_stmt_exec(S_copy(S_W(L), S_R(S, S_V(tx), 1))) == TC_EXEC_THREAD);
  CHECK(tc_stmt_exec(S_copy(S_R(S, S_I(3), 1), S_W(V))) == TC_EXEC_THREAD);
  CHECK(tc_stmt_exec(S_fill(S_W(L), S_F(1))) == TC_EXEC_THREAD);
  /* element statements and serial loops are per thread; T.Parallel is collective */
  CHECK(tc_stmt_exec(S_store(S, S_F(1), 1, S_V(tx))) == TC_EXEC_THREAD);
  tc_var *i = S_loopvar(k, "i");
  CHECK(tc_stmt_exec(S_for(i, S_I(0), S_I(4), TC_LOOP_PARALLEL, S_store(S, S_F(1), 1, S_V(i)))) == TC_EXEC_BLOCK);
  CHECK(tc_stmt_exec(S_for(i, S_I(0), S_I(4), TC_LOOP_SERIAL, S_store(S, S_F(1), 1, S_V(i)))) == TC_EXEC_THREAD);
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  tc_stmt *cp = S_copy(S_W(L), S_R(S, S_V(tx), 1));
  CHECK_INT(tc_stmt_regions(cp, regs), 2);
  CHECK(regs[0].read && !regs[0].write && regs[0].region->buf == L);
  CHECK(!regs[1].read && regs[1].write && regs[1].region->buf == S);
}

/* The per-thread copy of issue 8 passes the verifier (it is per thread, not a tile operation
 * on a thread-dependent region), and the pass puts a barrier before the mirror read. */
TEST(per_thread_copy_verifies_and_gets_a_barrier) {
  tc_kernel_ir *k = sample_per_thread_copy();
  tilec_error err = {0};
  CHECK(tc_ir_verify(k, "test", &err));
  CHECK(tc_pass_insert_barriers(S_A, k, &err));
  CHECK(tc_ir_verify(k, "insert-barriers", &err));
  CHECK(strstr(printed(k), "    T.copy(loc, s[tx])\n    barrier()\n    Y[tx] = s[15 - tx]\n") != NULL);
  /* idempotent */
  char before[8192];
  snprintf(before, sizeof before, "%s", printed(k));
  CHECK(tc_pass_insert_barriers(S_A, k, &err));
  CHECK_STR(printed(k), before);
}

TEST(varying_analysis) {
  tc_kernel_ir *k = S_kernel("vary");
  k->threads[0] = 4;
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32(), TC_VAR_THREAD_IDX, S_NOLOC);
  tc_var *bx = S_bidx(k, 0, "bx");
  tc_buffer *L = S_buf(k, "L", i32(), TC_SCOPE_LOCAL, 1, 1);
  tc_buffer *U = S_buf(k, "U", i32(), TC_SCOPE_LOCAL, 1, 1);
  tc_var *a = NULL, *b = NULL, *c = NULL;
  tc_stmt *la = S_let(k, &a, "a", S_B(TC_OP_ADD, S_V(bx), S_I(1)));   /* uniform */
  tc_stmt *lb = S_let(k, &b, "b", S_V(a));                             /* varying: assigned under `if tx` below */
  tc_stmt *lc = S_let(k, &c, "c", S_B(TC_OP_MUL, S_V(bx), S_I(2)));   /* uniform */
  tc_stmt *as = tc_ir_stmt(S_A, TC_ST_ASSIGN, S_NOLOC);
  as->u.let.var = b;
  as->u.let.value = S_I(0);
  k->body = S_seq(7, S_alloc(L), S_alloc(U), la, lb, lc, S_if(S_B(TC_OP_LT, S_V(tx), S_I(2)), as, NULL),
                  S_seq(2, S_store(L, S_V(tx), 1, S_I(0)), S_store(U, S_V(c), 1, S_I(0))));
  tc_varying V;
  CHECK(tc_varying_compute(k, &V));
  EXPECT(!tc_varying_var(&V, a));
  EXPECT(tc_varying_var(&V, b));
  EXPECT(!tc_varying_var(&V, c));
  EXPECT(tc_varying_var(&V, tx));
  EXPECT(tc_varying_buf(&V, L));
  EXPECT(!tc_varying_buf(&V, U));
  EXPECT(tc_varying_expr(&V, S_LD(L, 1, S_I(0))));
  EXPECT(!tc_varying_expr(&V, S_B(TC_OP_ADD, S_LD(U, 1, S_I(0)), S_V(a))));
  tc_varying_free(&V);
}

TEST(affine_indices) {
  tc_kernel_ir *k = S_kernel("aff");
  tc_var *i = S_loopvar(k, "i"), *j = S_loopvar(k, "j"), *n = S_sym(k, "n");
  const tc_var *vars[2] = {i, j};
  tc_affine_vars A = {2, vars, NULL, NULL};
  int64_t coef[2] = {0, 0};
  /* 3 * (i - j) + n * 4 - j: coefficients 3 and -4, remainder n * 4 */
  tc_expr *e = S_B(TC_OP_SUB, S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_I(3), S_B(TC_OP_SUB, S_V(i), S_V(j))), S_B(TC_OP_MUL, S_V(n), S_I(4))),
                   S_V(j));
  CHECK(tc_expr_affine(&A, e, coef));
  CHECK_INT(coef[0], 3);
  CHECK_INT(coef[1], -4);
  memset(coef, 0, sizeof coef);
  EXPECT(!tc_expr_affine(&A, S_B(TC_OP_MUL, S_V(i), S_V(j)), coef));
  EXPECT(!tc_expr_affine(&A, S_B(TC_OP_FLOORDIV, S_V(i), S_I(2)), coef));
  EXPECT(tc_expr_free_of(&A, S_B(TC_OP_MUL, S_V(n), S_V(n))));
  EXPECT(!tc_expr_free_of(&A, S_B(TC_OP_ADD, S_V(n), S_V(j))));
}

TEST(conflicts_between_statements) {
  tc_kernel_ir *k = S_kernel("conf");
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32(), TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *S = S_buf(k, "S", f32(), TC_SCOPE_SHARED, 1, 8);
  tc_buffer *L = S_buf(k, "L", f32(), TC_SCOPE_LOCAL, 1, 8);
  tc_buffer *G = S_param(k, "G", f32(), true, 1, S_I(8));
  int n = tc_kernel_max_id(k) + 1;
  tc_conflict_set w, r, l;
  tc_conflict_init(S_A, &w, n);
  tc_conflict_init(S_A, &r, n);
  tc_conflict_init(S_A, &l, n);
  tc_conflict_add_stmt(&w, S_store(S, S_F(1), 1, S_V(tx)));
  tc_var *x = NULL;
  tc_conflict_add_stmt(&r, S_let(k, &x, "x", S_B(TC_OP_ADD, S_LD(S, 1, S_I(0)), S_LD(G, 1, S_V(tx)))));
  tc_conflict_add_stmt(&l, S_store(L, S_F(1), 1, S_V(tx)));
  EXPECT(tc_conflict_between(&w, &r));  /* read after write */
  EXPECT(tc_conflict_between(&r, &w));  /* write after read */
  EXPECT(tc_conflict_between(&w, &w));  /* write after write */
  EXPECT(!tc_conflict_between(&r, &r)); /* reads only */
  EXPECT(!tc_conflict_between(&l, &l)); /* per-thread memory never conflicts */
  EXPECT(!tc_conflict_shared_read_write(&w));
  tc_conflict_merge(&w, &r);
  EXPECT(tc_conflict_shared_read_write(&w));
}

/* A uniform loop whose body reads and writes shared memory per thread gets a back-edge
 * barrier; under a thread-dependent if a needed barrier is an error. */
TEST(loop_back_edge_barrier_and_divergent_error) {
  tc_kernel_ir *k = S_kernel("loop");
  k->threads[0] = 8;
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32(), TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *S = S_buf(k, "S", f32(), TC_SCOPE_SHARED, 1, 8);
  tc_var *r = S_loopvar(k, "r");
  tc_stmt *body = S_store(S, S_B(TC_OP_ADD, S_LD(S, 1, S_B(TC_OP_FLOORMOD, S_B(TC_OP_ADD, S_V(tx), S_I(1)), S_I(8))), S_F(1)), 1, S_V(tx));
  k->body = S_seq(2, S_alloc(S), S_for(r, S_I(0), S_I(3), TC_LOOP_SERIAL, body));
  tilec_error err = {0};
  CHECK(tc_pass_insert_barriers(S_A, k, &err));
  CHECK(strstr(printed(k), "S[tx] = S[(tx + 1) % 8] + 1.0\n      barrier()\n") != NULL);

  tc_kernel_ir *k2 = S_kernel("divergent");
  k2->threads[0] = 8;
  tx = tc_ir_new_var(S_A, k2, "tx", i32(), TC_VAR_THREAD_IDX, S_NOLOC);
  S = S_buf(k2, "S", f32(), TC_SCOPE_SHARED, 1, 9);
  tc_stmt *th = S_seq(2, S_store(S, S_F(1), 1, S_V(tx)), S_store(S, S_LD(S, 1, S_B(TC_OP_ADD, S_V(tx), S_I(1))), 1, S_V(tx)));
  k2->body = S_seq(2, S_alloc(S), S_if(S_B(TC_OP_LT, S_V(tx), S_I(4)), th, NULL));
  tc_error_clear(&err);
  CHECK(!tc_pass_insert_barriers(S_A, k2, &err));
  CHECK_STR(err.message, "a barrier is needed under control flow that depends on the thread index (threads read "
                         "shared memory other threads write inside this if)");
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  RUN(tile_op_classification);
  RUN(per_thread_copy_verifies_and_gets_a_barrier);
  RUN(varying_analysis);
  RUN(affine_indices);
  RUN(conflicts_between_statements);
  RUN(loop_back_edge_barrier_and_divergent_error);
  tc_arena_free(&arena);
  TEST_MAIN_END();
}
