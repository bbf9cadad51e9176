/* test_ir_sched.c: the scheduling fields of the tile IR (layouts, loop kinds, pipeline
 * arguments, hints, barrier scope, intrinsics): the constant evaluator, the shared swizzle,
 * printing, the verifier's checks and the reference interpreter's warp intrinsics. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/interp.h"
#include "ir_samples.h"

static const tc_dtype I32 = {TC_DT_INT32, 1}, F32 = {TC_DT_FLOAT32, 1}, F16 = {TC_DT_FLOAT16, 1};

static char *print_kernel(const tc_kernel_ir *k) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_kernel(&sb, k);
  return tc_sb_take(&sb);
}

static bool verify_fails(const tc_kernel_ir *k, tilec_status st, const char *msg) {
  tilec_error err;
  memset(&err, 0, sizeof err);
  bool ok = tc_ir_verify(k, "evaluate", &err);
  if (ok || err.status != st || !strstr(err.message, msg)) {
    printf("  got:      [%d] %s\n  expected: [%d] ...%s...\n", (int)err.status, ok ? "(passed)" : err.message, (int)st, msg);
    return false;
  }
  return true;
}

static tc_kernel_ir *mk(const char *name, int threads) {
  tc_kernel_ir *k = S_kernel(name);
  k->grid[0] = S_I(1);
  k->threads[0] = threads;
  return k;
}

static bool bind_xy(void *ctx, const tc_var *v, int64_t *out) {
  const tc_var *const *vars = ctx;
  if (v == vars[0]) return *out = 7, true;
  if (v == vars[1]) return *out = -3, true;
  return false;
}

TEST(const_eval_follows_python_and_wraps) {
  tc_kernel_ir *k = S_kernel("c");
  tc_var *x = tc_ir_new_var(S_A, k, "x", I32, TC_VAR_LOCAL, S_NOLOC), *y = tc_ir_new_var(S_A, k, "y", I32, TC_VAR_LOCAL, S_NOLOC);
  tc_var *z = tc_ir_new_var(S_A, k, "z", I32, TC_VAR_LOCAL, S_NOLOC);
  const tc_var *vars[2] = {x, y};
  int64_t v = 0;
  CHECK(tc_expr_eval_int(S_B(TC_OP_FLOORDIV, S_V(x), S_V(y)), bind_xy, vars, &v) && v == -3);
  CHECK(tc_expr_eval_int(S_B(TC_OP_FLOORMOD, S_V(x), S_V(y)), bind_xy, vars, &v) && v == -2);
  CHECK(tc_expr_eval_int(S_B(TC_OP_DIV, S_V(x), S_V(y)), bind_xy, vars, &v) && v == -2);
  CHECK(tc_expr_eval_int(S_B(TC_OP_BIT_XOR, S_B(TC_OP_SHL, S_V(x), S_I(2)), S_I(5)), bind_xy, vars, &v) && v == 25);
  CHECK(tc_expr_eval_int(tc_ir_select(S_A, S_B(TC_OP_LT, S_V(y), S_I(0)), S_V(x), S_I(0), S_NOLOC), bind_xy, vars, &v) && v == 7);
  CHECK(tc_expr_eval_int(S_B(TC_OP_MUL, S_I(65536), S_I(65536)), NULL, NULL, &v) && v == 0); /* int32 wraps */
  CHECK(!tc_expr_eval_int(S_B(TC_OP_FLOORDIV, S_V(x), S_I(0)), bind_xy, vars, &v));        /* division by zero */
  CHECK(!tc_expr_eval_int(S_B(TC_OP_ADD, S_V(x), S_V(z)), bind_xy, vars, &v));             /* unbound */
  CHECK(!tc_expr_eval_int(S_F(1.0), NULL, NULL, &v));                                        /* not an integer */
}

TEST(swizzle_is_a_permutation_with_the_documented_formula) {
  tc_kernel_ir *k = S_kernel("s");
  tc_buffer *b = S_buf(k, "As", F16, TC_SCOPE_SHARED, 2, 32, 64); /* 128-byte rows */
  tc_layout *L = tc_layout_swizzled(S_A, k, b);
  CHECK(L && L->kind == TC_LAYOUT_SHARED && strcmp(L->name, "swizzle") == 0 && L->storage_elems == 32 * 64);
  int64_t shape[2] = {32, 64}, off = -1;
  char why[200] = "";
  CHECK(tc_layout_check(L, shape, 1, why, sizeof why));
  int64_t idx[2] = {1, 0}; /* chunk 0 of row 1 moves to chunk 1 */
  CHECK(tc_layout_eval(L, idx, 0, NULL, NULL, &off) && off == 64 + 8);
  idx[0] = 3, idx[1] = 17; /* chunk 2, element 1: (2 ^ 3) & 7 = 1 */
  CHECK(tc_layout_eval(L, idx, 0, NULL, NULL, &off) && off == 3 * 64 + 1 * 8 + 1);
  tc_buffer *b64 = S_buf(k, "Bs", F16, TC_SCOPE_SHARED, 3, 2, 8, 32); /* 64-byte rows, leading dim folded */
  tc_layout *L64 = tc_layout_swizzled(S_A, k, b64);
  int64_t s3[3] = {2, 8, 32}, i3[3] = {1, 2, 8}; /* row 10, chunk 1: 1 ^ ((10 >> 1) & 3) = 0 */
  CHECK(tc_layout_check(L64, s3, 1, why, sizeof why));
  CHECK(tc_layout_eval(L64, i3, 0, NULL, NULL, &off) && off == 10 * 32 + 0);
  tc_buffer *odd = S_buf(k, "Cs", F32, TC_SCOPE_SHARED, 2, 4, 5); /* 20-byte rows: no swizzle */
  tc_layout *Lo = tc_layout_swizzled(S_A, k, odd);
  int64_t io[2] = {3, 4};
  CHECK(tc_layout_eval(Lo, io, 0, NULL, NULL, &off) && off == 19);
}

/* A fragment layout over a 2x4 buffer on 4 threads: thread j, register i. */
static tc_layout *frag_layout(tc_kernel_ir *k, bool collide) {
  tc_layout *L = tc_layout_new(S_A, k, TC_LAYOUT_FRAGMENT, "annotated", 2, NULL, S_NOLOC);
  L->thread = S_V(L->index[1]);
  L->reg = collide ? S_I(0) : S_V(L->index[0]);
  L->num_regs = 2;
  return L;
}

TEST(print_and_verify_layouts) {
  tc_kernel_ir *k = mk("lay", 4);
  tc_buffer *f = S_buf(k, "F", F32, TC_SCOPE_FRAGMENT, 2, 2, 4);
  f->layout = frag_layout(k, false);
  k->body = S_seq(2, S_alloc(f), S_fill(S_W(f), S_F(0.0)));
  CHECK(verify_ok(k));
  char *got = print_kernel(k);
  CHECK(strstr(got, "F = alloc fragment float32[2, 4] layout=annotated{(i0, i1) -> thread: i1, reg: i0; regs: 2}\n") != NULL);
  free(got);
  f->layout = frag_layout(k, true);
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "layout of 'F' maps two elements to thread 0, register 0"));
  k->threads[0] = 2;
  f->layout = frag_layout(k, false);
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "maps (0, 2) to thread 2, outside the block's 2 threads"));
  /* replication: thread = j + 4 * rep on 8 threads */
  k->threads[0] = 8;
  tc_layout *R = frag_layout(k, false);
  R->replicate = 2;
  tc_var *rep = tc_layout_replica_var(S_A, k, R, "rep", S_NOLOC);
  R->thread = S_B(TC_OP_ADD, S_V(R->index[1]), S_B(TC_OP_MUL, S_V(rep), S_I(4)));
  f->layout = R;
  CHECK(verify_ok(k));
  /* the placeholders are not variables of the body */
  tc_buffer *g = S_buf(k, "G", F32, TC_SCOPE_FRAGMENT, 2, 2, 4);
  k->body = S_seq(3, S_alloc(f), S_alloc(g), S_store(g, S_F(1.0), 2, S_V(R->index[0]), S_I(0)));
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "variable i0"));
  /* a shared layout on a fragment, a layout on a local buffer */
  tc_buffer *s = S_buf(k, "S", F16, TC_SCOPE_SHARED, 2, 16, 64);
  g->layout = tc_layout_swizzled(S_A, k, s);
  k->body = S_seq(1, S_alloc(g));
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "the fragment buffer 'G' has a shared-memory (T.Layout) layout"));
  tc_buffer *l = S_buf(k, "L", F32, TC_SCOPE_LOCAL, 2, 2, 4);
  l->layout = frag_layout(k, false);
  k->body = S_seq(1, S_alloc(l));
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "a layout on the local buffer 'L'"));
}

/* Interval bounds of layout expressions, and the checks of layouts too large to sort: the
 * dQ layout of flash attention's backward pass over 2 x 4 x 1024 x 64 elements. */
TEST(large_layouts_are_bounded_by_intervals) {
  tc_kernel_ir *k = mk("big", 32);
  int64_t shape[4] = {2, 4, 1024, 64}, lo = 0, hi = 0;
  tc_layout *L = tc_layout_new(S_A, k, TC_LAYOUT_SHARED, "annotated", 4, NULL, S_NOLOC);
  tc_expr *l = S_V(L->index[2]), *d = S_V(L->index[3]);
  tc_expr *last = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_I(4), S_B(TC_OP_FLOORMOD, l, S_I(8))),
                      S_B(TC_OP_FLOORDIV, S_B(TC_OP_FLOORMOD, d, S_I(8)), S_I(2)));
  CHECK(tc_layout_expr_bounds(L, last, shape, 1, &lo, &hi) && lo == 0 && hi == 31);
  CHECK(tc_layout_expr_bounds(L, S_B(TC_OP_FLOORDIV, l, S_I(8)), shape, 1, &lo, &hi) && lo == 0 && hi == 127);
  CHECK(tc_layout_expr_bounds(L, S_B(TC_OP_SUB, S_I(5), d), shape, 1, &lo, &hi) && lo == -58 && hi == 5);
  CHECK(!tc_layout_expr_bounds(L, S_B(TC_OP_MUL, l, d), shape, 1, &lo, &hi)); /* a product of two ranges */
  CHECK(!tc_layout_expr_bounds(L, S_B(TC_OP_FLOORMOD, l, d), shape, 1, &lo, &hi));
  /* offset = (((b*4 + h)*128 + l//8)*8 + d//8)*2 + d%2)*32 + last: a permutation of 524288 */
  tc_expr *b = S_V(L->index[0]), *h = S_V(L->index[1]);
  tc_expr *off = S_B(TC_OP_ADD, S_B(TC_OP_MUL, b, S_I(4)), h);
  off = S_B(TC_OP_ADD, S_B(TC_OP_MUL, off, S_I(128)), S_B(TC_OP_FLOORDIV, l, S_I(8)));
  off = S_B(TC_OP_ADD, S_B(TC_OP_MUL, off, S_I(8)), S_B(TC_OP_FLOORDIV, d, S_I(8)));
  off = S_B(TC_OP_ADD, S_B(TC_OP_MUL, off, S_I(2)), S_B(TC_OP_FLOORMOD, d, S_I(2)));
  L->offset = S_B(TC_OP_ADD, S_B(TC_OP_MUL, off, S_I(32)), last);
  L->storage_elems = 2 * 4 * 1024 * 64;
  char why[200] = "";
  CHECK(tc_layout_check(L, shape, 32, why, sizeof why)); /* enumerated into a bitmap */
  L->offset = S_B(TC_OP_ADD, S_B(TC_OP_MUL, off, S_I(32)), S_B(TC_OP_FLOORMOD, l, S_I(8))); /* drops d % 8 // 2 */
  CHECK(!tc_layout_check(L, shape, 32, why, sizeof why) && strstr(why, "maps two elements to offset"));
  int64_t huge[4] = {8, 32, 1024, 64}; /* beyond the bitmap: bounds only */
  L->offset = S_B(TC_OP_ADD, S_B(TC_OP_MUL, off, S_I(32)), last);
  L->storage_elems = 1000000; /* offsets reach ((59*128 + 127)*8 + 7)*2 + 1)*32 + 31 */
  CHECK(!tc_layout_check(L, huge, 32, why, sizeof why) && strstr(why, "in [0, 3932159], outside [0, 1000000)"));
  L->storage_elems = 8 * 32 * 1024 * 64; /* in bounds; that b*4 + h collides is not seen at this size */
  CHECK(tc_layout_check(L, huge, 32, why, sizeof why));
  /* a global parameter may carry a storage layout that spans exactly its elements */
  tc_kernel_ir *g = mk("glob", 32);
  tc_buffer *Q = S_param(g, "dQ", F32, true, 2, S_I(64), S_I(32));
  tc_layout *T2 = tc_layout_new(S_A, g, TC_LAYOUT_SHARED, "annotated", 2, NULL, S_NOLOC);
  T2->offset = S_B(TC_OP_ADD, S_B(TC_OP_MUL, S_V(T2->index[1]), S_I(64)), S_V(T2->index[0]));
  T2->storage_elems = 64 * 32;
  Q->layout = T2;
  g->body = S_seq(1, S_fill(S_W(Q), S_F(0.0)));
  CHECK(verify_ok(g));
  T2->storage_elems = 64 * 64;
  CHECK(verify_fails(g, TILEC_ERROR_PROGRAM, "the layout of the global buffer 'dQ' spans 4096 elements; the tensor holds 2048"));
}

TEST(print_and_verify_loop_kinds_and_pipeline) {
  tc_kernel_ir *k = mk("loops", 64);
  tc_buffer *X = S_param(k, "X", F32, true, 1, S_I(64));
  tc_buffer *s = S_buf(k, "s", F32, TC_SCOPE_SHARED, 1, 64);
  tc_var *i = S_loopvar(k, "i"), *t = S_loopvar(k, "t"), *v = S_loopvar(k, "v");
  tc_stmt *body = S_seq(3, S_copy(S_W(X), S_W(s)), S_fill(S_W(s), S_F(1.0)), S_copy(S_W(s), S_W(X)));
  tc_stmt *pipe = S_for(i, S_I(0), S_I(4), TC_LOOP_PIPELINED, body);
  pipe->u.loop.num_stages = 2;
  static int order[3] = {2, 0, 1}, stage[3] = {0, 1, 1}, g0[2] = {0, 1}, g1[1] = {2};
  static tc_int_list groups[2] = {{2, g0}, {1, g1}};
  pipe->u.loop.pipeline.order = (tc_int_list){3, order};
  pipe->u.loop.pipeline.stage = (tc_int_list){3, stage};
  pipe->u.loop.pipeline.group = (tc_int_lists){2, groups};
  tc_stmt *tb = S_for(t, S_I(0), S_I(64), TC_LOOP_THREAD_BINDING, S_store(X, S_F(2.0), 1, S_V(t)));
  tc_stmt *vec = S_for(v, S_I(0), S_I(8), TC_LOOP_VECTORIZED, S_store(s, S_F(3.0), 1, S_V(v)));
  tc_stmt *warp = S_barrier();
  warp->u.barrier.scope = TC_BARRIER_WARP;
  k->body = S_seq(6, S_alloc(s), pipe, tb, warp, vec, S_barrier());
  CHECK(verify_ok(k));
  char *got = print_kernel(k);
  CHECK_STR(got, "kernel loops(X: float32[64] output):\n"
                 "  with T.Kernel(1, threads=64):\n"
                 "    s = alloc shared float32[64]\n"
                 "    for i in pipelined(0, 4, stages=2, order=[2, 0, 1], stage=[0, 1, 1], group=[[0, 1], [2]]):\n"
                 "      T.copy(X, s)\n"
                 "      T.fill(s, 1.0)\n"
                 "      T.copy(s, X)\n"
                 "    for t in thread_binding(0, 64, axis=x):\n"
                 "      X[t] = 2.0\n"
                 "    barrier(scope=\"warp\")\n"
                 "    for v in vectorized(0, 8):\n"
                 "      s[v] = 3.0\n"
                 "    barrier()\n");
  free(got);
  order[2] = 2;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.Pipelined: order lists 2 twice; it must be a permutation"));
  order[2] = 1;
  pipe->u.loop.pipeline.stage.n = 2;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "T.Pipelined: order has 3 entries but stage has 2"));
  pipe->u.loop.pipeline.stage.n = 3;
  pipe->u.loop.pipeline.order.n = pipe->u.loop.pipeline.stage.n = 2;
  order[0] = 1, order[1] = 0;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "order/stage have 2 entries, fewer than the 3 statements of the loop body"));
  pipe->u.loop.pipeline.order.n = pipe->u.loop.pipeline.stage.n = 0;
  g1[0] = -3;
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "group[1] holds -3, not a statement index"));
  g1[0] = 2;
  tb->u.loop.extent = S_I(32);
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "thread-bound loop must run over [0, 64)"));
  tb->u.loop.extent = S_I(64);
  /* a tile operation inside a thread-bound loop depends on the thread */
  tb->u.loop.body = S_fill(S_W(s), S_F(0.0));
  CHECK(verify_fails(k, TILEC_ERROR_PROGRAM, "depends on the thread index"));
}

TEST(verify_intrinsics_against_the_table) {
  tc_kernel_ir *k = mk("intr", 32);
  tc_buffer *X = S_param(k, "X", F32, true, 1, S_I(32));
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", I32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_expr *args[3] = {S_LD(X, 1, S_V(tx)), S_I(1), S_I(32)};
  tc_expr *sh = tc_ir_call(S_A, "shfl_xor", F32, 3, args, S_NOLOC);
  tc_expr *addr_idx[1] = {S_I(0)};
  tc_stmt *ev = tc_ir_stmt(S_A, TC_ST_EVALUATE, S_NOLOC);
  ev->u.evaluate.value = tc_ir_address_of(S_A, X, 1, addr_idx, S_NOLOC);
  k->body = S_seq(3, S_store(X, sh, 1, S_V(tx)), tc_ir_intrinsic_stmt(S_A, "warp_sync", 0, NULL, S_NOLOC), ev);
  CHECK(verify_ok(k));
  char *got = print_kernel(k);
  CHECK(strstr(got, "    X[tx] = @shfl_xor(X[tx], 1, 32)\n    @warp_sync()\n    evaluate(T.address_of(X[0]))\n") != NULL);
  free(got);
  sh->nargs = 2;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "intrinsic `shfl_xor` has 2 argument(s), expected 3"));
  sh->nargs = 3;
  sh->callee = "shfl_up";
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "call of unknown intrinsic `shfl_up`"));
  sh->callee = "warp_sync";
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "intrinsic `warp_sync` is a statement, used as an expression"));
  sh->callee = "shfl_xor";
  sh->dtype = I32;
  CHECK(verify_fails(k, TILEC_ERROR_INTERNAL, "`shfl_xor` of float32 has result dtype int32"));
}

/* A warp sum by butterfly shuffles, a thread-bound loop and a warp barrier, in the reference
 * interpreter: 64 threads = 2 warps, each thread ends with its warp's total. */
TEST(interpreter_runs_warp_intrinsics) {
  tc_kernel_ir *k = mk("warp_sum", 64);
  tc_buffer *X = S_param(k, "X", F32, false, 1, S_I(64));
  tc_buffer *Y = S_param(k, "Y", F32, true, 1, S_I(64));
  tc_var *t = S_loopvar(k, "t");
  tc_var *acc;
  tc_stmt *let = S_let(k, &acc, "acc", S_LD(X, 1, S_V(t)));
  tc_stmt *steps[5];
  for (int i = 0; i < 5; i++) {
    tc_expr *args[3] = {S_V(acc), S_I(1 << i), S_I(32)};
    tc_stmt *as = tc_ir_stmt(S_A, TC_ST_ASSIGN, S_NOLOC);
    as->u.let.var = acc;
    as->u.let.value = S_B(TC_OP_ADD, S_V(acc), tc_ir_call(S_A, "shfl_xor", F32, 3, args, S_NOLOC));
    steps[i] = as;
  }
  tc_stmt *wb = S_barrier();
  wb->u.barrier.scope = TC_BARRIER_WARP;
  tc_stmt *body = S_seq(9, let, steps[0], steps[1], steps[2], steps[3], steps[4], wb,
                        tc_ir_intrinsic_stmt(S_A, "warp_sync", 0, NULL, S_NOLOC), S_store(Y, S_V(acc), 1, S_V(t)));
  k->body = S_for(t, S_I(0), S_I(64), TC_LOOP_THREAD_BINDING, body);
  CHECK(verify_ok(k));
  float x[64], y[64];
  for (int i = 0; i < 64; i++) x[i] = (float)(i % 7), y[i] = -1;
  void *data[2] = {x, y};
  tilec_error err;
  memset(&err, 0, sizeof err);
  CHECK(tc_interp_run(k, data, NULL, NULL, NULL, &err) == TILEC_OK);
  for (int w = 0; w < 2; w++) {
    float sum = 0;
    for (int i = 0; i < 32; i++) sum += x[w * 32 + i];
    for (int i = 0; i < 32; i++) CHECK(y[w * 32 + i] == sum);
  }
  /* a warp barrier that only half a warp reaches is an error */
  k->body = S_for(t, S_I(0), S_I(64), TC_LOOP_THREAD_BINDING, S_if(S_B(TC_OP_LT, S_V(t), S_I(16)), wb, NULL));
  memset(&err, 0, sizeof err);
  CHECK(tc_interp_run(k, data, NULL, NULL, NULL, &err) == TILEC_ERROR_PROGRAM && strstr(err.message, "warp barrier reached by only part of warp 0"));
  /* an intrinsic the interpreter lacks is an error value, not a crash */
  tc_expr *ai[1] = {S_I(0)};
  tc_stmt *ev = tc_ir_stmt(S_A, TC_ST_EVALUATE, S_NOLOC);
  ev->u.evaluate.value = tc_ir_address_of(S_A, X, 1, ai, S_NOLOC);
  k->body = ev;
  memset(&err, 0, sizeof err);
  CHECK(tc_interp_run(k, data, NULL, NULL, NULL, &err) == TILEC_ERROR_TARGET && strstr(err.message, "runs only on a GPU target"));
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  RUN(const_eval_follows_python_and_wraps);
  RUN(swizzle_is_a_permutation_with_the_documented_formula);
  RUN(print_and_verify_layouts);
  RUN(large_layouts_are_bounded_by_intervals);
  RUN(print_and_verify_loop_kinds_and_pipeline);
  RUN(verify_intrinsics_against_the_table);
  RUN(interpreter_runs_warp_intrinsics);
  tc_arena_free(&arena);
  TEST_MAIN_END();
}
