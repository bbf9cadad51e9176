/* test_gpu_layout.c: the GPU layout inference's reading of T.Parallel index maps
 * (src/gpu/layout.c, tc_gpu_bijective_access): which accesses map a nest one to one onto a
 * fragment, and the map's strides and offset that the lowering inverts. */
#include "gpu/gpu_internal.h"
#include "harness.h"
#include "ir_samples.h"

static par_nest nest2(tc_kernel_ir *k, tc_var **i, tc_var **j, int64_t ei, int64_t ej) {
  par_nest N = {0};
  *i = tc_ir_new_var(S_A, k, "i", tc_dt(TC_DT_INT32), TC_VAR_LOOP, S_NOLOC);
  *j = tc_ir_new_var(S_A, k, "j", tc_dt(TC_DT_INT32), TC_VAR_LOOP, S_NOLOC);
  N.n = 2, N.var[0] = *i, N.var[1] = *j, N.ext[0] = ei, N.ext[1] = ej;
  return N;
}

TEST(bijective_flat_index_of_a_2d_nest) {
  tc_kernel_ir *k = S_kernel("flat");
  tc_var *i, *j;
  par_nest N = nest2(k, &i, &j, 128, 8);
  int64_t shape[1] = {1024};
  par_map m;
  /* i * 8 + j: the leaky_relu pattern, strides (8, 1) */
  tc_expr *idx[1] = {S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(8)), S_V(j))};
  CHECK(tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
  CHECK(m.stride[0] == 8 && m.stride[1] == 1 && m.offset == 0);
  /* j * 128 + i: transposed order */
  idx[0] = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(j), S_I(128)), S_V(i));
  CHECK(tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
  CHECK(m.stride[0] == 1 && m.stride[1] == 128);
  /* (127 - i) * 8 + (7 - j): reversed, offset 1023 */
  idx[0] = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_B(TC_OP_SUB, S_I(127), S_V(i)), S_I(8)), S_B(TC_OP_SUB, S_I(7), S_V(j)));
  CHECK(tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
  CHECK(m.stride[0] == -8 && m.stride[1] == -1 && m.offset == 1023);
}

TEST(non_bijective_maps_are_refused) {
  tc_kernel_ir *k = S_kernel("nonbij");
  tc_var *i, *j;
  par_nest N = nest2(k, &i, &j, 128, 8);
  int64_t shape[1] = {1024}, small[1] = {512};
  par_map m;
  tc_expr *idx[1] = {S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(4)), S_V(j))}; /* overlaps */
  CHECK(!tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
  idx[0] = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(16)), S_V(j)); /* gaps */
  CHECK(!tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
  idx[0] = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(8)), S_V(j)); /* more iterations than elements */
  CHECK(!tc_gpu_bijective_access(&N, NULL, 1, small, 1, idx, &m));
  idx[0] = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(8)), S_B(TC_OP_ADD, S_V(j), S_I(1))); /* shifted past the end */
  CHECK(!tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
  idx[0] = S_B(TC_OP_MUL, S_V(i), S_V(j)); /* not affine */
  CHECK(!tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m));
}

TEST(two_dim_transpose_and_floor_pairs) {
  tc_kernel_ir *k = S_kernel("twod");
  tc_var *i, *j;
  par_nest N = nest2(k, &i, &j, 16, 32);
  int64_t tshape[2] = {32, 16};
  par_map m;
  tc_expr *idx[2] = {S_V(j), S_V(i)}; /* t[j, i] of a (32, 16) tile */
  CHECK(tc_gpu_bijective_access(&N, NULL, 2, tshape, 2, idx, &m));
  CHECK(m.stride[0] == 1 && m.stride[1] == 16);
  /* a flat nest e over (16, 32) read as [e // 32, e % 32] is the identity */
  par_nest F = {0};
  tc_var *e = tc_ir_new_var(S_A, k, "e", tc_dt(TC_DT_INT32), TC_VAR_LOOP, S_NOLOC);
  F.n = 1, F.var[0] = e, F.ext[0] = 512;
  int64_t shape[2] = {16, 32};
  tc_expr *fi[2] = {S_B(TC_OP_FLOORDIV, S_V(e), S_I(32)), S_B(TC_OP_FLOORMOD, S_V(e), S_I(32))};
  CHECK(tc_gpu_bijective_access(&F, NULL, 2, shape, 2, fi, &m));
  CHECK(m.stride[0] == 1 && m.offset == 0);
  /* the divisor must be the minor extent */
  tc_expr *bad[2] = {S_B(TC_OP_FLOORDIV, S_V(e), S_I(16)), S_B(TC_OP_FLOORMOD, S_V(e), S_I(16))};
  CHECK(!tc_gpu_bijective_access(&F, NULL, 2, shape, 2, bad, &m));
}

TEST(let_bound_index_is_followed) {
  tc_kernel_ir *k = S_kernel("lets");
  tc_var *i, *j;
  par_nest N = nest2(k, &i, &j, 4, 8);
  tc_var *e = tc_ir_new_var(S_A, k, "e", tc_dt(TC_DT_INT32), TC_VAR_LOCAL, S_NOLOC);
  tc_stmt *let = tc_ir_stmt(S_A, TC_ST_LET, S_NOLOC);
  let->u.let.var = e;
  let->u.let.value = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(i), S_I(8)), S_V(j));
  par_lets L;
  tc_gpu_collect_lets(let, &L);
  CHECK(L.n == 1);
  int64_t shape[1] = {32};
  par_map m;
  tc_expr *idx[1] = {S_V(e)};
  CHECK(tc_gpu_bijective_access(&N, &L, 1, shape, 1, idx, &m));
  CHECK(m.stride[0] == 8 && m.stride[1] == 1);
  CHECK(!tc_gpu_bijective_access(&N, NULL, 1, shape, 1, idx, &m)); /* without the binding: unknown */
  /* a variable assigned again is not a binding */
  tc_stmt *as = tc_ir_stmt(S_A, TC_ST_ASSIGN, S_NOLOC);
  as->u.let.var = e;
  as->u.let.value = S_I(0);
  tc_stmt *items[2] = {let, as};
  tc_gpu_collect_lets(tc_ir_seq(S_A, 2, items, S_NOLOC), &L);
  CHECK(L.n == 0);
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  RUN(bijective_flat_index_of_a_2d_nest);
  RUN(non_bijective_maps_are_refused);
  RUN(two_dim_transpose_and_floor_pairs);
  RUN(let_bound_index_is_followed);
  tc_arena_free(&arena);
  return tc_t_failed != 0;
}
