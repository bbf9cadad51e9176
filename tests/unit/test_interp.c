/* test_interp.c: the reference interpreter against straightforward C loops written here.
 * Each reference rounds exactly where the IR program rounds (stores into float32 fragments,
 * fp16 outputs), so most comparisons are bit-exact. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Products and sums round separately, as the reference defines them: no fused multiply-add.
 * (GCC does not contract in ISO C mode; clang needs to be told.) */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include "harness.h"
#include "ir/interp.h"
#include "ir_samples.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double rnd(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static tc_source fake_src = {"k.py", "x = 1\n    y = A[i] // B[i]\n", 27};

static tilec_error fresh_err(void) {
  tilec_error e;
  memset(&e, 0, sizeof e);
  return e;
}

/* ---- gemm ---- */
static void run_gemm_case(bool fp16, bool trans_b, int M) {
  tc_kernel_ir *k = sample_gemm(tc_dt(fp16 ? TC_DT_FLOAT16 : TC_DT_FLOAT32), tc_dt(fp16 ? TC_DT_FLOAT16 : TC_DT_FLOAT32), trans_b);
  size_t na = (size_t)M * G_K, nb = (size_t)G_K * G_N, nc = (size_t)M * G_N;
  double *a = malloc(na * sizeof(double)), *b = malloc(nb * sizeof(double));
  void *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4);
  for (size_t i = 0; i < na; i++) {
    float v = (float)rnd();
    if (fp16) {
      ((uint16_t *)A)[i] = tc_float_to_half(v);
      a[i] = tc_half_to_float(((uint16_t *)A)[i]);
    } else {
      ((float *)A)[i] = v;
      a[i] = v;
    }
  }
  for (size_t i = 0; i < nb; i++) {
    float v = (float)rnd();
    if (fp16) {
      ((uint16_t *)B)[i] = tc_float_to_half(v);
      b[i] = tc_half_to_float(((uint16_t *)B)[i]);
    } else {
      ((float *)B)[i] = v;
      b[i] = v;
    }
  }
  memset(C, 0xff, nc * 4);
  void *data[3] = {A, B, C};
  int64_t syms[1] = {M};
  tilec_error err = fresh_err();
  tilec_status st = tc_interp_run(k, data, NULL, NULL, syms, &err);
  EXPECT(st == TILEC_OK);
  if (st != TILEC_OK) printf("  %s", err.rendered);
  int bad = 0;
  double maxerr = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < G_N; n++) {
      /* the program: a float32 fragment accumulates one 8-wide k step at a time */
      float acc = 0;
      double exact = 0;
      for (int kb = 0; kb < G_K; kb += G_BK) {
        double s = 0;
        for (int kk = kb; kk < kb + G_BK && kk < G_K; kk++) {
          double bv = trans_b ? b[(size_t)n * G_K + kk] : b[(size_t)kk * G_N + n];
          s += a[(size_t)m * G_K + kk] * bv;
          exact += a[(size_t)m * G_K + kk] * bv;
        }
        acc = (float)((double)acc + s);
      }
      if (fp16) {
        uint16_t want = tc_float_to_half(acc), got = ((uint16_t *)C)[(size_t)m * G_N + n];
        bad += want != got;
        maxerr = fmax(maxerr, fabs(tc_half_to_float(got) - exact));
      } else {
        float got = ((float *)C)[(size_t)m * G_N + n];
        bad += memcmp(&got, &acc, 4) != 0;
        maxerr = fmax(maxerr, fabs(got - exact));
      }
    }
  EXPECT(bad == 0);
  EXPECT(maxerr < (fp16 ? 2e-2 : 1e-5));
  if (bad || maxerr >= (fp16 ? 2e-2 : 1e-5)) printf("  gemm fp16=%d trans_b=%d M=%d: %d mismatches, max err %g\n", fp16, trans_b, M, bad, maxerr);
  free(a);
  free(b);
  free(A);
  free(B);
  free(C);
}

TEST(gemm_fp32_uneven_shapes) {
  run_gemm_case(false, false, 37); /* M, N, K all leave partial tiles */
  run_gemm_case(false, false, 16);
}
TEST(gemm_fp32_transpose_b) { run_gemm_case(false, true, 21); }
TEST(gemm_fp16_rounds_once_into_fp16_output) { run_gemm_case(true, false, 19); }

/* ---- softmax ---- */
TEST(softmax_rows_with_partial_block) {
  tc_kernel_ir *k = sample_softmax();
  enum { M = 20 };
  float *X = malloc(sizeof(float) * M * 64), *Y = malloc(sizeof(float) * (M + 8) * 64);
  for (int i = 0; i < M * 64; i++) X[i] = (float)(4 * rnd());
  for (int i = 0; i < (M + 8) * 64; i++) Y[i] = -7.0f;
  void *data[2] = {X, Y};
  int64_t syms[1] = {M};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, syms, &err), TILEC_OK);
  int bad = 0;
  for (int r = 0; r < M; r++) {
    float m = -INFINITY, e[64];
    for (int j = 0; j < 64; j++) m = fmaxf(m, X[r * 64 + j]);
    double s = 0;
    for (int j = 0; j < 64; j++) {
      float d = X[r * 64 + j] - m; /* float32 arithmetic rounds each operation */
      e[j] = (float)exp((double)d);
      s += e[j];
    }
    float sf = (float)s;
    for (int j = 0; j < 64; j++) {
      float want = (float)((double)e[j] / (double)sf);
      bad += memcmp(&want, &Y[r * 64 + j], 4) != 0;
    }
  }
  CHECK_INT(bad, 0);
  for (int i = M * 64; i < (M + 8) * 64; i++) CHECK(Y[i] == -7.0f); /* rows past M are dropped */
  free(X);
  free(Y);
}

/* ---- cumsum ---- */
static void cumsum_case(int dim, bool reverse) {
  tc_kernel_ir *k = sample_cumsum(dim, reverse);
  float X[4][32], Y[4][32];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 32; j++) X[i][j] = (float)rnd();
  void *data[2] = {X, Y};
  tilec_error err = fresh_err();
  EXPECT(tc_interp_run(k, data, NULL, NULL, NULL, &err) == TILEC_OK);
  int bad = 0;
  if (dim == 1) {
    for (int i = 0; i < 4; i++) {
      double s = 0;
      for (int jj = 0; jj < 32; jj++) {
        int j = reverse ? 31 - jj : jj;
        s += X[i][j];
        bad += (float)s != Y[i][j];
      }
    }
  } else {
    for (int j = 0; j < 32; j++) {
      double s = 0;
      for (int ii = 0; ii < 4; ii++) {
        int i = reverse ? 3 - ii : ii;
        s += X[i][j];
        bad += (float)s != Y[i][j];
      }
    }
  }
  EXPECT(bad == 0);
}
TEST(cumsum_inclusive_forward_and_reverse) {
  cumsum_case(1, false);
  cumsum_case(1, true);
  cumsum_case(0, true);
  cumsum_case(0, false);
}

/* ---- thread-level code ---- */
TEST(thread_level_atomics_barriers_and_divergent_loops) {
  tc_kernel_ir *k = sample_threads();
  enum { N = 150 }; /* three blocks of 64, the last one partial */
  int32_t A[N], hist[4] = {0}, count[1] = {0}, loops[1] = {0};
  float total[1] = {0};
  int64_t want_hist[4] = {0}, want_total = 0;
  for (int i = 0; i < N; i++) {
    A[i] = (int32_t)lrint(50 * rnd());
    want_hist[((A[i] % 4) + 4) % 4]++;
    want_total += A[i];
  }
  void *data[5] = {A, hist, count, total, loops};
  int64_t syms[1] = {N};
  tilec_error err = fresh_err();
  tilec_status st = tc_interp_run(k, data, NULL, NULL, syms, &err);
  if (st != TILEC_OK) printf("  %s", err.rendered);
  CHECK_INT(st, TILEC_OK);
  for (int j = 0; j < 4; j++) CHECK_INT(hist[j], want_hist[j]);
  CHECK_INT(count[0], 3 * 64); /* an element atomic outside T.Parallel runs once per thread */
  CHECK_INT((int64_t)total[0], want_total);
  int per_block = 0;
  for (int t = 0; t < 64; t++) per_block += t % 3 + 1;
  CHECK_INT(loops[0], 3 * per_block);
}

/* Lockstep: all threads read their operands before any writes, so S[tx + 1] = S[tx] shifts
 * (thread-by-thread execution would smear S[0] over everything). */
TEST(per_thread_statements_run_in_lockstep) {
  tc_kernel_ir *k = S_kernel("shift");
  tc_dtype i32 = tc_dt(TC_DT_INT32);
  tc_buffer *Y = S_param(k, "Y", i32, true, 1, S_I(9));
  k->grid[0] = S_I(1);
  k->threads[0] = 8;
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *S = S_buf(k, "S", i32, TC_SCOPE_SHARED, 1, 9);
  k->body = S_seq(5, S_alloc(S), S_store(S, S_B(TC_OP_ADD, S_V(tx), S_I(10)), 1, S_V(tx)), S_barrier(),
                  S_store(S, S_LD(S, 1, S_V(tx)), 1, S_B(TC_OP_ADD, S_V(tx), S_I(1))), S_copy(S_W(S), S_W(Y)));
  int32_t y[9];
  void *data[1] = {y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_OK);
  CHECK_INT(y[0], 10);
  for (int i = 1; i < 9; i++) CHECK_INT(y[i], 10 + i - 1);
}

/* Tile operations on per-thread storage run per thread, even under thread-dependent control
 * flow and with thread-dependent region starts. */
TEST(tile_ops_on_local_buffers_run_per_thread) {
  tc_kernel_ir *k = sample_locals();
  CHECK(tc_ir_verify(k, "test", NULL));
  float x[32], y[8];
  for (int i = 0; i < 32; i++) x[i] = (float)i;
  void *data[2] = {x, y};
  tilec_error err = fresh_err();
  tilec_status st = tc_interp_run(k, data, NULL, NULL, NULL, &err);
  if (st != TILEC_OK) printf("  %s", err.rendered);
  CHECK_INT(st, TILEC_OK);
  for (int t = 0; t < 8; t++) CHECK(y[t] == (t < 4 ? 100.0f : 0.0f) + (float)(16 * t + 6));
}

/* Narrow dtypes in global memory go through the dtype library: fp8 encodes with RNE, int4
 * wraps to 4 bits and packs two per byte (element 2k in the low nibble). */
TEST(narrow_global_dtypes) {
  tc_kernel_ir *k = sample_narrow();
  float x[8] = {0.1f, -1.0f, 3.3f, 500.0f, 1e-3f, -0.0f, 17.0f, 448.0f};
  int32_t in[8] = {0, 1, -1, 7, 8, 9, -8, -9};
  uint8_t y[8], z[4];
  uint16_t w[8];
  void *data[5] = {x, in, y, z, w};
  tilec_error err = fresh_err();
  tilec_status st = tc_interp_run(k, data, NULL, NULL, NULL, &err);
  if (st != TILEC_OK) printf("  %s", err.rendered);
  CHECK_INT(st, TILEC_OK);
  /* stores to float8 saturate (tc_dtype_store_saturates): 500 becomes 448, not NaN */
  for (int i = 0; i < 8; i++) CHECK_INT(y[i], tc_double_to_narrow(TC_DT_FLOAT8_E4M3FN, x[i], true));
  CHECK_INT(y[3], 0x7E);
  int want4[8] = {0, 1, -1, 7, -8, -7, -8, 7};
  for (int i = 0; i < 8; i++) CHECK_INT((int)tc_dtype_load_f64(tc_dt(TC_DT_INT4), z, (size_t)i), want4[i]);
  CHECK_INT(z[0], 0x10); /* 0 in the low nibble, 1 in the high one */
  CHECK(tc_narrow_to_double(TC_DT_FLOAT8_E4M3FN, y[3]) == 448.0); /* 500 overflows e4m3fn: saturated */
  CHECK(tc_bf16_to_float(w[3]) == 448.0f);
  for (int i = 0; i < 6; i++) /* fp8 -> bf16 is exact */
    if (i != 3) CHECK(tc_bf16_to_float(w[i]) == (float)tc_narrow_to_double(TC_DT_FLOAT8_E4M3FN, y[i]));
  CHECK_INT(w[6], 0x3f80); /* 1.00390625 is halfway between two bf16 values: ties to even, 1.0 */
}

TEST(two_dimensional_thread_blocks) {
  tc_kernel_ir *k = sample_tids();
  int32_t y[2][32];
  void *data[1] = {y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_OK);
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 32; t++) CHECK_INT(y[b][t], (t % 8) * 100 + t / 8);
}

/* Element atomics per thread vs once per T.Parallel iteration, and the tile form. */
TEST(atomic_add_counting_semantics) {
  tc_kernel_ir *k = sample_atomics();
  int32_t c[2] = {0, 0};
  float d[7] = {0, 0, 0, 0, 0, 0, -1};
  void *data[2] = {c, d};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_OK);
  CHECK_INT(c[0], 2 * 128);
  CHECK_INT(c[1], 2 * 10);
  CHECK(d[2] == 0 && d[3] == 3.0f && d[4] == 3.0f && d[5] == 3.0f && d[6] == -1.0f);
}

/* ---- rounding ---- */
TEST(fp16_store_rounds_to_nearest_even) {
  tc_kernel_ir *k = S_kernel("to_half");
  tc_dtype f16 = tc_dt(TC_DT_FLOAT16), f64 = tc_dt(TC_DT_FLOAT64);
  enum { n = 7 };
  tc_buffer *X = S_param(k, "X", f64, false, 1, S_I(n));
  tc_buffer *Y = S_param(k, "Y", f16, true, 1, S_I(n));
  k->grid[0] = S_I(1);
  k->threads[0] = 4;
  tc_var *i = S_loopvar(k, "i");
  k->body = S_for(i, S_I(0), S_I(n), TC_LOOP_PARALLEL, S_store(Y, tc_ir_cast(S_A, f16, S_LD(X, 1, S_V(i)), S_NOLOC), 1, S_V(i)));
  double x[n] = {1 + ldexp(1, -11), 1 + 3 * ldexp(1, -11), 65520.0, 65519.0, ldexp(1, -25), 3 * ldexp(1, -25), -0.0};
  uint16_t want[n] = {0x3c00, 0x3c02, 0x7c00, 0x7bff, 0x0000, 0x0002, 0x8000};
  uint16_t y[n];
  void *data[2] = {x, y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_OK);
  for (int j = 0; j < n; j++) CHECK_INT(y[j], want[j]);
}

TEST(float32_accumulator_rounds_where_the_program_stores) {
  tc_kernel_ir *k = S_kernel("accum");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32), f64 = tc_dt(TC_DT_FLOAT64);
  tc_buffer *X = S_param(k, "X", f64, false, 1, S_I(3));
  tc_buffer *Y = S_param(k, "Y", f64, true, 1, S_I(2));
  k->grid[0] = S_I(1);
  tc_buffer *acc = S_buf(k, "acc", f32, TC_SCOPE_VAR, 1, 1);
  acc->init = S_F(0.0);
  tc_var *i = S_loopvar(k, "i"), *s;
  tc_stmt *let_s = S_let(k, &s, "s", tc_ir_float(S_A, 0.0, f64, S_NOLOC));
  tc_stmt *assign = tc_ir_stmt(S_A, TC_ST_ASSIGN, S_NOLOC);
  assign->u.let.var = s;
  assign->u.let.value = S_B(TC_OP_ADD, S_V(s), S_LD(X, 1, S_V(i)));
  k->body = S_seq(5, S_alloc(acc), let_s,
                  S_for(i, S_I(0), S_I(3), TC_LOOP_SERIAL,
                        S_seq(2, S_store(acc, S_B(TC_OP_ADD, S_LD(acc, 1, S_I(0)), tc_ir_cast(S_A, f32, S_LD(X, 1, S_V(i)), S_NOLOC)), 1, S_I(0)),
                              assign)),
                  S_store(Y, tc_ir_cast(S_A, f64, S_LD(acc, 1, S_I(0)), S_NOLOC), 1, S_I(0)), S_store(Y, S_V(s), 1, S_I(1)));
  double x[3] = {1.0, 1e-8, 1e-8}, y[2];
  void *data[2] = {x, y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_OK);
  CHECK(y[0] == 1.0);             /* float32: 1 + 1e-8 == 1 */
  CHECK(y[1] == 1.0 + 1e-8 + 1e-8); /* float64 scalar keeps it */
}

/* ---- integers ---- */
static tc_kernel_ir *int_kernel(tc_buffer **Xo, tc_expr **div_out) {
  tc_kernel_ir *k = S_kernel("ints");
  tc_dtype i32 = tc_dt(TC_DT_INT32), i8 = tc_dt(TC_DT_INT8);
  tc_buffer *X = S_param(k, "X", i32, false, 1, S_I(4));
  tc_buffer *Y = S_param(k, "Y", i32, true, 1, S_I(9));
  k->grid[0] = S_I(1);
  tc_expr *x0 = S_LD(X, 1, S_I(0)), *x1 = S_LD(X, 1, S_I(1)), *x2 = S_LD(X, 1, S_I(2)), *x3 = S_LD(X, 1, S_I(3));
  tc_expr *div = S_B(TC_OP_FLOORDIV, x0, x1);
  div->loc = (tc_loc){&fake_src, 2, 9};
  k->body = S_seq(9, S_store(Y, div, 1, S_I(0)), S_store(Y, S_B(TC_OP_FLOORMOD, x0, x1), 1, S_I(1)),
                  S_store(Y, S_B(TC_OP_DIV, x0, x1), 1, S_I(2)), S_store(Y, S_B(TC_OP_MUL, x2, x2), 1, S_I(3)),
                  S_store(Y, tc_ir_cast(S_A, i32, S_F(-2.7), S_NOLOC), 1, S_I(4)),
                  S_store(Y, tc_ir_cast(S_A, i32, S_F(3e10), S_NOLOC), 1, S_I(5)),
                  S_store(Y, tc_ir_cast(S_A, i32, tc_ir_cast(S_A, i8, x3, S_NOLOC), S_NOLOC), 1, S_I(6)),
                  S_store(Y, S_B(TC_OP_SHR, x0, S_I(1)), 1, S_I(7)), S_store(Y, S_B(TC_OP_ADD, x2, S_I(INT32_MAX)), 1, S_I(8)));
  *Xo = X;
  *div_out = div;
  return k;
}

TEST(integer_semantics_floor_trunc_wrap_saturate) {
  tc_buffer *X;
  tc_expr *div;
  tc_kernel_ir *k = int_kernel(&X, &div);
  int32_t x[4] = {-7, 2, 65536, 200}, y[9];
  void *data[2] = {x, y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_OK);
  CHECK_INT(y[0], -4);        /* Python floor division */
  CHECK_INT(y[1], 1);         /* Python modulo: sign of the divisor */
  CHECK_INT(y[2], -3);        /* DIV on ints truncates */
  CHECK_INT(y[3], 0);         /* 65536 * 65536 wraps in int32 */
  CHECK_INT(y[4], -2);        /* float -> int truncates */
  CHECK_INT(y[5], INT32_MAX); /* and saturates */
  CHECK_INT(y[6], -56);       /* 200 wraps in int8 */
  CHECK_INT(y[7], -4);        /* arithmetic shift */
  CHECK_INT(y[8], INT32_MIN + 65535);
}

TEST(integer_division_by_zero_is_an_error) {
  tc_buffer *X;
  tc_expr *div;
  tc_kernel_ir *k = int_kernel(&X, &div);
  int32_t x[4] = {-7, 0, 1, 1}, y[9];
  void *data[2] = {x, y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_ERROR_PROGRAM);
  CHECK_STR(err.rendered,
            "k.py:2:9: error: integer division by zero (block (0, 0, 0), thread 0)\n"
            "      y = A[i] // B[i]\n"
            "          ^\n");
}

/* ---- runtime faults ---- */
static tc_kernel_ir *fault_kernel(int which) {
  tc_kernel_ir *k = S_kernel("faults");
  tc_dtype i32 = tc_dt(TC_DT_INT32), f32 = tc_dt(TC_DT_FLOAT32);
  tc_buffer *Y = S_param(k, "Y", f32, true, 1, S_I(4));
  k->grid[0] = S_I(1);
  k->threads[0] = 4;
  tc_var *tx = tc_ir_new_var(S_A, k, "tx", i32, TC_VAR_THREAD_IDX, S_NOLOC);
  tc_buffer *S = S_buf(k, "S", f32, TC_SCOPE_SHARED, 1, 4);
  tc_buffer *L = S_buf(k, "L", i32, TC_SCOPE_LOCAL, 1, 1);
  tc_stmt *s;
  if (which == 0) {
    s = tc_ir_stmt(S_A, TC_ST_ASSERT, S_NOLOC);
    s->u.assert_.cond = S_B(TC_OP_LT, S_V(tx), S_I(2));
    s->u.assert_.msg = "tx too big";
  } else if (which == 1) { /* thread-dependent through a local buffer: the shared varying analysis sees it */
    s = S_seq(2, S_store(L, S_V(tx), 1, S_I(0)), S_if(S_B(TC_OP_LT, S_LD(L, 1, S_I(0)), S_I(2)), S_fill(S_W(S), S_F(0.0)), NULL));
  } else if (which == 2) {
    s = S_store(S, S_F(1.0), 1, S_B(TC_OP_ADD, S_V(tx), S_I(1)));
  } else {
    s = S_seq(2, S_store(L, S_V(tx), 1, S_I(0)), S_if(S_B(TC_OP_EQ, S_LD(L, 1, S_I(0)), S_I(0)), S_barrier(), NULL));
  }
  k->body = S_seq(4, S_alloc(S), S_alloc(L), s, S_copy(S_W(S), S_W(Y)));
  return k;
}

static void expect_fault(int which, const char *msg) {
  tc_kernel_ir *k = fault_kernel(which);
  float y[4];
  void *data[1] = {y};
  tilec_error err = fresh_err();
  EXPECT(tc_interp_run(k, data, NULL, NULL, NULL, &err) == TILEC_ERROR_PROGRAM);
  if (strcmp(err.message, msg) != 0) {
    printf("  got:      %s\n  expected: %s\n", err.message, msg);
    EXPECT(0);
  }
}

TEST(runtime_faults_are_errors_not_crashes) {
  expect_fault(0, "assertion failed: tx too big (block (0, 0, 0), thread 2)");
  expect_fault(1, "T.fill under control flow that depends on the thread index; tile operations need the whole block");
  expect_fault(2, "write outside buffer S[4] (shape [4]) (block (0, 0, 0), thread 3)");
  expect_fault(3, "barrier reached by 1 of the block's 4 threads");
}

TEST(bad_ir_and_bad_arguments) {
  tc_kernel_ir *k = sample_softmax();
  float X[64], Y[64];
  void *data[2] = {X, Y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_ERROR_USAGE); /* no value for M */
  CHECK_STR(err.message, "reference interpreter: no values given for the symbolic dimensions");
  void *nodata[2] = {X, NULL};
  int64_t syms[1] = {1};
  err = fresh_err();
  CHECK_INT(tc_interp_run(k, nodata, NULL, NULL, syms, &err), TILEC_ERROR_USAGE);
  CHECK_STR(err.message, "no data given for the tensor parameter Y");
  k->threads[0] = 0; /* malformed IR: the verifier rejects it first */
  err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, syms, &err), TILEC_ERROR_INTERNAL);
  CHECK_STR(err.message, "IR verification failed after interp: thread block extent 0 along axis 0, in `kernel softmax`");
}

TEST(runaway_kernel_stops_at_the_step_limit) {
  tc_kernel_ir *k = S_kernel("spin");
  tc_buffer *Y = S_param(k, "Y", tc_dt(TC_DT_INT32), true, 1, S_I(1));
  k->grid[0] = S_I(1000000);
  k->threads[0] = 128;
  tc_var *i = S_loopvar(k, "i");
  k->body = S_for(i, S_I(0), S_I(INT32_MAX), TC_LOOP_SERIAL, S_store(Y, S_V(i), 1, S_I(0)));
  int32_t y[1];
  void *data[1] = {y};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run_limited(k, data, NULL, NULL, NULL, 100000, &err), TILEC_ERROR_TARGET);
  CHECK_STR(err.message, "reference interpreter stopped after 100000 steps: this for loop was still running (a runaway loop?)");
}

TEST(vector_dtypes_are_reported_unsupported) {
  tc_kernel_ir *k = S_kernel("vec");
  tc_dtype v4 = tc_dt(TC_DT_FLOAT16);
  v4.lanes = 4;
  S_param(k, "X", v4, false, 1, S_I(4));
  k->grid[0] = S_I(1);
  k->body = S_seq(0);
  uint16_t x[16];
  void *data[1] = {x};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, NULL, NULL, NULL, &err), TILEC_ERROR_TARGET);
  CHECK_STR(err.message, "reference interpreter: vector dtype of buffer X is not supported");
}

/* A scalar float parameter and an int parameter. */
TEST(scalar_parameters) {
  tc_kernel_ir *k = S_kernel("axpy");
  tc_dtype f32 = tc_dt(TC_DT_FLOAT32), i32 = tc_dt(TC_DT_INT32);
  tc_buffer *X = S_param(k, "X", f32, false, 1, S_I(8));
  tc_var *alpha = tc_ir_new_var(S_A, k, "alpha", f32, TC_VAR_PARAM, S_NOLOC);
  tc_var *n = tc_ir_new_var(S_A, k, "n", i32, TC_VAR_PARAM, S_NOLOC);
  tc_param *np = TC_NEW_ARRAY(S_A, tc_param, 3);
  np[0] = k->params[0];
  np[1] = (tc_param){"alpha", NULL, alpha, false};
  np[2] = (tc_param){"n", NULL, n, false};
  k->params = np;
  k->nparams = 3;
  k->grid[0] = S_I(1);
  k->threads[0] = 8;
  tc_var *i = S_loopvar(k, "i");
  k->body = S_for(i, S_I(0), S_I(8), TC_LOOP_PARALLEL,
                  S_if(S_B(TC_OP_LT, S_V(i), S_V(n)), S_store(X, S_B(TC_OP_MUL, S_LD(X, 1, S_V(i)), S_V(alpha)), 1, S_V(i)), NULL));
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  void *data[3] = {x, NULL, NULL};
  int64_t scalars[3] = {0, 0, 5};
  double fscalars[3] = {0, 0.5, 0};
  tilec_error err = fresh_err();
  CHECK_INT(tc_interp_run(k, data, scalars, fscalars, NULL, &err), TILEC_OK);
  CHECK(x[0] == 0.5f && x[4] == 2.5f && x[5] == 6.0f && x[7] == 8.0f);
}

int main(void) {
  tc_arena arena;
  tc_arena_init(&arena);
  S_A = &arena;
  RUN(gemm_fp32_uneven_shapes);
  RUN(gemm_fp32_transpose_b);
  RUN(gemm_fp16_rounds_once_into_fp16_output);
  RUN(softmax_rows_with_partial_block);
  RUN(cumsum_inclusive_forward_and_reverse);
  RUN(thread_level_atomics_barriers_and_divergent_loops);
  RUN(per_thread_statements_run_in_lockstep);
  RUN(tile_ops_on_local_buffers_run_per_thread);
  RUN(narrow_global_dtypes);
  RUN(two_dimensional_thread_blocks);
  RUN(atomic_add_counting_semantics);
  RUN(fp16_store_rounds_to_nearest_even);
  RUN(float32_accumulator_rounds_where_the_program_stores);
  RUN(integer_semantics_floor_trunc_wrap_saturate);
  RUN(integer_division_by_zero_is_an_error);
  RUN(runtime_faults_are_errors_not_crashes);
  RUN(bad_ir_and_bad_arguments);
  RUN(scalar_parameters);
  RUN(runaway_kernel_stops_at_the_step_limit);
  RUN(vector_dtypes_are_reported_unsupported);
  tc_arena_free(&arena);
  TEST_MAIN_END();
}
