/* test_cpu.c: the cpu backend end to end on hand-built tile IR: generate C, build it with cc,
 * dlopen it and launch it on random inputs at several shapes (including shapes that do not
 * divide the block sizes), compared with plain C reference loops. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "ir/interp.h"
#include "pass/pass.h"
#include "test_cpu_kernels.h"
#include "util/pool.h"

static tc_thread_pool *g_pool;

/* The compiler the kernels are built with: cc, or $TILEC_TEST_CC (e.g. clang). */
static const char *test_cc(void) {
  const char *c = getenv("TILEC_TEST_CC");
  return c && *c ? c : "cc";
}

static tc_backend_env env_of(const char *cc) {
  tc_backend_env e = {cc, 2, g_pool};
  return e;
}

typedef struct built {
  const tc_kernel_ir *ir;
  tc_arena lowering; /* what the target's passes decide */
  tc_generated gen;
  tc_loaded *mod;
  tilec_error err;
} built;

/* The cpu backend splits its thread loops at the barriers in the IR: hand-built kernels get
 * them from the insert-barriers pass, as compiled programs do. Its nodes live in a test-wide
 * arena (kernels outlive the call). */
static tc_arena g_pass_arena;
static bool g_pass_arena_ready;
static bool place_barriers(tc_kernel_ir *k, tilec_error *err) {
  if (!g_pass_arena_ready) tc_arena_init(&g_pass_arena);
  g_pass_arena_ready = true;
  return tc_pass_insert_barriers(&g_pass_arena, k, err);
}

static bool build_kernel(tc_kernel_ir *k, built *b) {
  memset(b, 0, sizeof *b);
  b->ir = k;
  tc_arena_init(&b->lowering);
  tc_backend_env env = env_of(test_cc());
  const tc_backend *be = &tc_cpu_cc_backend;
  if (!place_barriers(k, &b->err)) {
    printf("  insert-barriers: %s\n", b->err.rendered);
    return false;
  }
  if (tc_lower_and_emit(be, &b->lowering, k, &b->gen, &b->err) != TILEC_OK) {
    printf("  generate: %s\n", b->err.rendered);
    return false;
  }
  void *art = NULL;
  size_t n = 0;
  if (be->build(&env, &b->gen, &art, &n, &b->err) != TILEC_OK) {
    printf("  build: %s\n", b->err.message);
    return false;
  }
  tilec_status st = be->load(&env, k, &b->gen, art, n, &b->mod, &b->err);
  free(art);
  if (st != TILEC_OK) printf("  load: %s\n", b->err.message);
  return st == TILEC_OK;
}

static void built_free(built *b) {
  if (b->mod) tc_cpu_cc_backend.unload(b->mod);
  tc_generated_free(&b->gen);
  tc_arena_free(&b->lowering);
}

static bool launch(built *b, void **data, int nparams, const int64_t *syms, int nsyms) {
  int64_t scal[16] = {0};
  double fs[16] = {0};
  tc_launch_args la = {data, scal, fs, syms, nparams, nsyms};
  tc_backend_env env = env_of(test_cc());
  tilec_status st = tc_cpu_cc_backend.launch(&env, b->mod, &la, &b->err);
  if (st != TILEC_OK) printf("  launch: %s\n", b->err.message);
  return st == TILEC_OK;
}

static _Thread_local uint64_t rng = 88172645463325252ull; /* per thread: concurrent tests draw too */
static float frand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static bool close_to(double got, double want, double atol, double rtol) {
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* Runs the reference interpreter with the same inputs; outputs (the parameters flagged in
 * is_out, float32 with n[i] elements) go to fresh buffers compared with the backend's. */
static bool interp_agrees(const tc_kernel_ir *k, void **data, const bool *is_out, const size_t *n, int nparams,
                          const int64_t *syms, double atol, double rtol) {
  void *rd[8] = {0};
  for (int i = 0; i < nparams; i++) {
    rd[i] = data[i];
    if (is_out[i]) {
      rd[i] = calloc(n[i], sizeof(float));
      memcpy(rd[i], data[i], n[i] * sizeof(float)); /* same initial contents (atomics add to it) */
    }
  }
  tilec_error err = {0};
  int64_t sc[8] = {0};
  double fs[8] = {0};
  bool ok = true;
  if (tc_interp_run(k, rd, sc, fs, syms, &err) != TILEC_OK) {
    printf("  interp: %s\n", err.rendered);
    ok = false;
  }
  for (int i = 0; i < nparams; i++) {
    if (!is_out[i]) continue;
    for (size_t j = 0; ok && j < n[i]; j++) {
      float got = ((float *)data[i])[j], want = ((float *)rd[i])[j];
      if (!close_to(got, want, atol, rtol)) {
        printf("  vs interp: param %d [%zu] = %g, interp %g\n", i, j, got, want);
        ok = false;
      }
    }
    free(rd[i]);
  }
  return ok;
}

/* ---- gemm ---- */
static bool check_gemm(int bm, int bn, int bk, bool ta, bool tb, bool half, int M, int N, int K, built *b) {
  size_t es = half ? 2 : 4;
  void *A = malloc((size_t)M * K * es), *B = malloc((size_t)K * N * es);
  float *C = malloc(sizeof(float) * (size_t)M * N);
  double *ref = calloc((size_t)M * N, sizeof(double));
  float *Af = malloc(sizeof(float) * (size_t)M * K), *Bf = malloc(sizeof(float) * (size_t)K * N);
  for (int i = 0; i < M * K; i++) {
    float v = frand();
    if (half) {
      ((uint16_t *)A)[i] = tc_float_to_half(v);
      v = tc_half_to_float(((uint16_t *)A)[i]);
    } else ((float *)A)[i] = v;
    Af[i] = v;
  }
  for (int i = 0; i < K * N; i++) {
    float v = frand();
    if (half) {
      ((uint16_t *)B)[i] = tc_float_to_half(v);
      v = tc_half_to_float(((uint16_t *)B)[i]);
    } else ((float *)B)[i] = v;
    Bf[i] = v;
  }
  for (int i = 0; i < M * N; i++) C[i] = 12345.0f; /* every element must be overwritten */
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) {
        double a = ta ? Af[(size_t)k * M + i] : Af[(size_t)i * K + k];
        double bb = tb ? Bf[(size_t)j * K + k] : Bf[(size_t)k * N + j];
        s += a * bb;
      }
      ref[(size_t)i * N + j] = s;
    }
  void *data[3] = {A, B, C};
  int64_t syms[3] = {M, N, K};
  bool ok = launch(b, data, 3, syms, 3);
  if (ok && b->ir && M * N * K <= 200000) {
    bool outs[3] = {false, false, true};
    size_t ns[3] = {0, 0, (size_t)M * N};
    ok = interp_agrees(b->ir, data, outs, ns, 3, syms, 1e-4, 1e-4);
  }
  for (int i = 0; ok && i < M * N; i++)
    if (!close_to(C[i], ref[i], 1e-4, 1e-4)) {
      printf("  gemm %dx%dx%d (bm %d bn %d bk %d ta %d tb %d half %d): C[%d] = %g, want %g\n", M, N, K, bm, bn, bk, ta,
             tb, half, i, C[i], ref[i]);
      ok = false;
    }
  free(A);
  free(B);
  free(C);
  free(ref);
  free(Af);
  free(Bf);
  return ok;
}

static void gemm_case(int bm, int bn, int bk, bool ta, bool tb, bool half) {
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_gemm(&a, bm, bn, bk, ta, tb, tc_dt(half ? TC_DT_FLOAT16 : TC_DT_FLOAT32), kb_f32(), 128);
  built b;
  if (!build_kernel(k, &b)) {
    tc_t_fail(__FILE__, __LINE__, "gemm kernel did not build");
  } else {
    static const int shapes[][3] = {{64, 64, 32}, {128, 96, 64}, {100, 70, 45}, {1, 1, 1}, {33, 129, 17}, {7, 200, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      EXPECT(check_gemm(bm, bn, bk, ta, tb, half, shapes[s][0], shapes[s][1], shapes[s][2], &b));
  }
  built_free(&b);
  tc_arena_free(&a);
}

TEST(gemm_fp32) { gemm_case(64, 64, 32, false, false, false); }
TEST(gemm_fp32_odd_tiles) { gemm_case(48, 40, 24, false, false, false); }
TEST(gemm_transpose_b) { gemm_case(64, 32, 16, false, true, false); }
TEST(gemm_transpose_a) { gemm_case(32, 64, 16, true, false, false); }
TEST(gemm_fp16_operands) { gemm_case(64, 64, 32, false, true, true); }

TEST(gemm_clear_accum) {
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_gemm_ex(&a, 32, 32, 32, false, false, kb_f32(), kb_f32(), 128, true);
  built b;
  CHECK(build_kernel(k, &b));
  EXPECT(check_gemm(32, 32, 32, false, false, false, 32, 32, 32, &b));
  EXPECT(check_gemm(32, 32, 32, false, false, false, 50, 40, 20, &b));
  built_free(&b);
  tc_arena_free(&a);
}

/* ---- elementwise ---- */
static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

TEST(elementwise_chain) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  tc_kernel_ir *k = build_elementwise(&a, 32, 64, kb_f32());
  bool ok = build_kernel(k, &b);
  EXPECT(ok);
  static const int shapes[][2] = {{32, 64}, {100, 130}, {1, 1}, {65, 63}};
  for (size_t s = 0; ok && s < sizeof shapes / sizeof shapes[0]; s++) {
    int M = shapes[s][0], N = shapes[s][1];
    float *A = malloc(sizeof(float) * M * N), *B = malloc(sizeof(float) * M * N), *C = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * N; i++) {
      A[i] = frand() * 3;
      B[i] = frand() * 3;
      C[i] = 777;
    }
    void *data[3] = {A, B, C};
    int64_t syms[2] = {M, N};
    EXPECT(launch(&b, data, 3, syms, 2));
    bool outs[3] = {false, false, true};
    size_t ns[3] = {0, 0, (size_t)M * N};
    EXPECT(interp_agrees(k, data, outs, ns, 3, syms, 1e-6, 1e-5));
    for (int i = 0; i < M * N; i++) {
      float want = fmaxf(A[i] * B[i] + 1.0f, 0.0f) * 0.5f - sigm(A[i]);
      if (!close_to(C[i], want, 1e-6, 1e-5)) {
        printf("  elementwise %dx%d: C[%d] = %g, want %g\n", M, N, i, C[i], want);
        EXPECT(0);
        break;
      }
    }
    free(A);
    free(B);
    free(C);
  }
  built_free(&b);
  tc_arena_free(&a);
}

TEST(elementwise_bfloat16) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  tc_kernel_ir *k = build_elementwise(&a, 16, 32, tc_dt(TC_DT_BFLOAT16));
  bool ok = build_kernel(k, &b);
  CHECK(ok);
  int M = 37, N = 50;
  uint16_t *A = malloc(2 * M * N), *B = malloc(2 * M * N), *C = malloc(2 * M * N);
  for (int i = 0; i < M * N; i++) {
    A[i] = tc_float_to_bf16(frand() * 3);
    B[i] = tc_float_to_bf16(frand() * 3);
  }
  void *data[3] = {A, B, C};
  int64_t syms[2] = {M, N};
  EXPECT(launch(&b, data, 3, syms, 2));
  /* arithmetic in bfloat16: every operation rounds to bfloat16 */
  for (int i = 0; i < M * N; i++) {
    float x = tc_bf16_to_float(A[i]), y = tc_bf16_to_float(B[i]);
#define R(v) tc_bf16_to_float(tc_float_to_bf16(v))
    float v = R(fmaxf(R(R(x * y) + 1.0f), 0.0f));
    float want = R(R(v * 0.5f) - R(sigm(x)));
#undef R
    if (C[i] != tc_float_to_bf16(want)) {
      printf("  bf16 elementwise: C[%d] = %g, want %g\n", i, tc_bf16_to_float(C[i]), want);
      EXPECT(0);
      break;
    }
  }
  free(A);
  free(B);
  free(C);
  built_free(&b);
  tc_arena_free(&a);
}

/* Narrow stores and wrapping integers: Q = int4(A) (nibbles, odd length), E = float8_e4m3fn(F)
 * with round to nearest even, W = A * 1000003 wrapping in int32, H = float16(F) + 1 in fp16. */
static tc_kernel_ir *build_casts(tc_arena *a, int bn) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "casts");
  tc_var *N = kSym(b, "N");
  tc_expr *sh[1] = {kV(b, N)};
  tc_dtype i4 = tc_dt(TC_DT_INT4), f8 = tc_dt(TC_DT_FLOAT8_E4M3FN), f16 = tc_dt(TC_DT_FLOAT16);
  tc_buffer *A = kTensor(b, "A", kb_i32(), 1, sh, false), *F = kTensor(b, "F", kb_f32(), 1, sh, false);
  tc_buffer *Q = kTensor(b, "Q", i4, 1, sh, true), *E = kTensor(b, "E", f8, 1, sh, true);
  tc_buffer *W = kTensor(b, "W", kb_i32(), 1, sh, true), *H = kTensor(b, "H", f16, 1, sh, true);
  tc_expr *grid[1] = {kCeil(b, kV(b, N), bn)};
  kLaunch(b, 1, grid, 32);
  tc_var *bx = b->k->block_idx[0], *i = kLoopVar(b, "i");
  tc_expr *idx = kAdd(b, kMul(b, kV(b, bx), kI(b, bn)), kV(b, i));
  tc_stmt_list body = {0};
  tc_stmt_list_push(a, &body, kStore1(b, Q, idx, tc_ir_cast(a, i4, kLoad1(b, A, idx), b->loc)));
  tc_stmt_list_push(a, &body, kStore1(b, E, idx, tc_ir_cast(a, f8, kLoad1(b, F, idx), b->loc)));
  /* W = w < 0 ? w : -w with w = A * 1000003 (wrapping): the comparison must be signed */
  tc_expr *w = kMul(b, kLoad1(b, A, idx), kI(b, 1000003));
  tc_expr *negw = tc_ir_unary(a, TC_OP_NEG, kMul(b, kLoad1(b, A, idx), kI(b, 1000003)), b->loc);
  tc_stmt_list_push(a, &body, kStore1(b, W, idx, tc_ir_select(a, kBin(b, TC_OP_LT, w, kI(b, 0)), tc_ir_cast(a, kb_i32(), kMul(b, kLoad1(b, A, idx), kI(b, 1000003)), b->loc), negw, b->loc)));
  tc_expr *h = tc_ir_cast(a, f16, kLoad1(b, F, idx), b->loc);
  tc_stmt_list_push(a, &body, kStore1(b, H, idx, kAdd(b, h, tc_ir_float(a, 1.0, f16, b->loc))));
  tc_stmt_list_push(a, &b->body, kFor(b, i, kI(b, 0), kI(b, bn), TC_LOOP_PARALLEL, kSeq(b, &body)));
  kFinish(b);
  return b->k;
}

static int32_t wantw(int32_t a) {
  int32_t w = (int32_t)((uint32_t)a * 1000003u);
  return w < 0 ? w : (int32_t)(0u - (uint32_t)w);
}

TEST(narrow_dtypes_and_wrapping) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  tc_kernel_ir *k = build_casts(&a, 16);
  CHECK(build_kernel(k, &b));
  int n = 37;
  int32_t *A = malloc(4 * n), *W = malloc(4 * n), *rW = malloc(4 * n);
  float *F = malloc(4 * n);
  uint8_t *Q = calloc(n, 1), *E = calloc(n, 1), *rQ = calloc(n, 1), *rE = calloc(n, 1);
  uint16_t *H = calloc(n, 2), *rH = calloc(n, 2);
  for (int i = 0; i < n; i++) {
    A[i] = (int32_t)(frand() * 2e9);
    F[i] = frand() * 500;
  }
  A[0] = 7;
  A[1] = -8;
  A[2] = 9; /* wraps to -7 in int4 */
  F[0] = 0.0703125f; /* halfway between two e4m3 values */
  F[1] = 1e6f;       /* overflow: saturates to 448 */
  void *data[6] = {A, F, Q, E, W, H};
  int64_t syms[1] = {n};
  CHECK(launch(&b, data, 6, syms, 1));
  void *rd[6] = {A, F, rQ, rE, rW, rH};
  tilec_error err = {0};
  int64_t sc[6] = {0};
  double fs[6] = {0};
  CHECK_INT(tc_interp_run(k, rd, sc, fs, syms, &err), TILEC_OK);
  EXPECT(memcmp(Q, rQ, (n + 1) / 2) == 0);
  EXPECT(memcmp(E, rE, n) == 0);
  EXPECT(memcmp(W, rW, 4 * n) == 0);
  EXPECT(memcmp(H, rH, 2 * n) == 0);
  for (int i = 0; i < n; i++) {
    int q = (Q[i / 2] >> ((i & 1) * 4)) & 15;
    if (q & 8) q -= 16;
    int wantq = ((A[i] & 15) ^ 8) - 8;
    if (q != wantq || E[i] != tc_float_to_narrow(TC_DT_FLOAT8_E4M3FN, F[i], true) /* stores saturate */ ||
        W[i] != wantw(A[i]) ||
        H[i] != tc_float_to_half(tc_half_to_float(tc_float_to_half(F[i])) + 1.0f)) {
      printf("  casts[%d]: q %d (want %d), e %u, w %d, h %u\n", i, q, wantq, E[i], W[i], H[i]);
      EXPECT(0);
      break;
    }
  }
  free(A);
  free(W);
  free(rW);
  free(F);
  free(Q);
  free(E);
  free(rQ);
  free(rE);
  free(H);
  free(rH);
  built_free(&b);
  tc_arena_free(&a);
}

/* ---- softmax ---- */
TEST(softmax_rows) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  int n = 100;
  tc_kernel_ir *k = build_softmax(&a, 8, n);
  CHECK(build_kernel(k, &b));
  static const int Ms[] = {8, 21, 1};
  for (size_t s = 0; s < 3; s++) {
    int M = Ms[s];
    float *A = malloc(sizeof(float) * M * n), *C = malloc(sizeof(float) * M * n);
    for (int i = 0; i < M * n; i++) A[i] = frand() * 5;
    void *data[2] = {A, C};
    int64_t syms[1] = {M};
    EXPECT(launch(&b, data, 2, syms, 1));
    bool outs[2] = {false, true};
    size_t ns[2] = {0, (size_t)M * n};
    EXPECT(interp_agrees(k, data, outs, ns, 2, syms, 1e-7, 1e-5));
    for (int i = 0; i < M; i++) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < n; j++) mx = fmax(mx, A[i * n + j]);
      for (int j = 0; j < n; j++) sum += exp(A[i * n + j] - mx);
      for (int j = 0; j < n; j++) {
        double want = exp(A[i * n + j] - mx) / sum;
        if (!close_to(C[i * n + j], want, 1e-7, 1e-5)) {
          printf("  softmax M=%d: C[%d,%d] = %g, want %g\n", M, i, j, C[i * n + j], want);
          EXPECT(0);
          i = M;
          break;
        }
      }
    }
    free(A);
    free(C);
  }
  built_free(&b);
  tc_arena_free(&a);
}

/* Every reduce kind along either dim, with clear=False accumulating into the old values, and
 * a T.fill of a global region at an edge tile; compared with the reference interpreter. */
static tc_kernel_ir *build_reduces(tc_arena *a, int bm, int n) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "reduces");
  tc_var *M = kSym(b, "M");
  tc_expr *sh[2] = {kV(b, M), kI(b, n)}, *shr[2] = {kV(b, M), kI(b, 5)}, *shc[2] = {kCeil(b, kV(b, M), bm), kI(b, n)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 2, sh, false);
  tc_buffer *R = kTensor(b, "R", kb_f32(), 2, shr, true);  /* per row: 5 reductions */
  tc_buffer *Cm = kTensor(b, "Cm", kb_f32(), 2, shc, true); /* per block: column max */
  tc_buffer *Fl = kTensor(b, "Fl", kb_f32(), 2, sh, true);
  tc_expr *grid[1] = {kCeil(b, kV(b, M), bm)};
  kLaunch(b, 1, grid, 128);
  tc_var *bx = b->k->block_idx[0];
  int64_t tsh[2] = {bm, n}, rsh[2] = {bm, 5}, csh[1] = {n}, c1[2] = {1, n};
  tc_buffer *Al = kAlloc(b, &b->body, "A_frag", kb_f32(), TC_SCOPE_FRAGMENT, 2, tsh);
  tc_buffer *Rl = kAlloc(b, &b->body, "R_frag", kb_f32(), TC_SCOPE_FRAGMENT, 2, rsh);
  tc_buffer *Cl = kAlloc(b, &b->body, "C_frag", kb_f32(), TC_SCOPE_FRAGMENT, 1, csh);
  tc_expr *st[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kReg(b, A, st, tsh), kWhole(b, Al)));
  tc_stmt_list_push(a, &b->body, kFill(b, kWhole(b, Rl), kF(b, 0.25)));
  tc_reduce_kind kinds[5] = {TC_RED_SUM, TC_RED_MAX, TC_RED_MIN, TC_RED_ABSSUM, TC_RED_ABSMAX};
  for (int r = 0; r < 5; r++) {
    tc_stmt *rd = tc_ir_stmt(a, TC_ST_REDUCE, b->loc);
    rd->u.reduce.op = kinds[r];
    rd->u.reduce.src = kWhole(b, Al);
    tc_expr *ds[2] = {kI(b, 0), kI(b, r)};
    int64_t de[2] = {bm, 1};
    rd->u.reduce.dst = kReg(b, Rl, ds, de);
    rd->u.reduce.dim = 1;
    rd->u.reduce.clear = r % 2 == 0; /* sum, min, absmax clear; max, abssum accumulate */
    tc_stmt_list_push(a, &b->body, rd);
  }
  tc_stmt *cm = tc_ir_stmt(a, TC_ST_REDUCE, b->loc);
  cm->u.reduce.op = TC_RED_MAX;
  cm->u.reduce.src = kWhole(b, Al);
  cm->u.reduce.dst = kWhole(b, Cl);
  cm->u.reduce.dim = 0;
  cm->u.reduce.clear = true;
  tc_stmt_list_push(a, &b->body, cm);
  tc_expr *st2[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kWhole(b, Rl), kReg(b, R, st2, rsh)));
  tc_expr *st3[2] = {kV(b, bx), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kCopy(b, kWhole(b, Cl), kReg(b, Cm, st3, c1)));
  tc_expr *st4[2] = {kMul(b, kV(b, bx), kI(b, bm)), kI(b, 0)};
  tc_stmt_list_push(a, &b->body, kFill(b, kReg(b, Fl, st4, tsh), kF(b, -3.5)));
  kFinish(b);
  return b->k;
}

TEST(reduce_kinds_and_global_fill) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  int n = 24, bm = 8;
  tc_kernel_ir *k = build_reduces(&a, bm, n);
  CHECK(build_kernel(k, &b));
  int M = 19, nb = (M + bm - 1) / bm;
  float *A = malloc(sizeof(float) * M * n), *R = malloc(sizeof(float) * M * 5), *Cm = malloc(sizeof(float) * nb * n);
  float *Fl = malloc(sizeof(float) * M * n);
  for (int i = 0; i < M * n; i++) A[i] = frand() * 4;
  void *data[4] = {A, R, Cm, Fl};
  int64_t syms[1] = {M};
  CHECK(launch(&b, data, 4, syms, 1));
  bool outs[4] = {false, true, true, true};
  size_t ns[4] = {0, (size_t)M * 5, (size_t)nb * n, (size_t)M * n};
  EXPECT(interp_agrees(k, data, outs, ns, 4, syms, 1e-5, 1e-5));
  for (int i = 0; i < M; i++) {
    double s = 0, mx = -INFINITY, mn = INFINITY, as = 0, am = 0;
    for (int j = 0; j < n; j++) {
      double v = A[i * n + j];
      s += v;
      mx = fmax(mx, v);
      mn = fmin(mn, v);
      as += fabs(v);
      am = fmax(am, fabs(v));
    }
    double want[5] = {s, fmax(0.25, mx), mn, 0.25 + as, am};
    for (int r = 0; r < 5; r++)
      if (!close_to(R[i * 5 + r], want[r], 1e-5, 1e-5)) {
        printf("  reduce kind %d row %d: %g, want %g\n", r, i, R[i * 5 + r], want[r]);
        EXPECT(0);
      }
    for (int j = 0; j < n; j++) EXPECT(Fl[i * n + j] == -3.5f);
  }
  for (int blk = 0; blk < nb; blk++)
    for (int j = 0; j < n; j++) {
      double mx = -INFINITY;
      for (int i = blk * bm; i < blk * bm + bm; i++) mx = fmax(mx, i < M ? A[i * n + j] : 0.0); /* rows past M read 0 */
      EXPECT(close_to(Cm[blk * n + j], mx, 0, 0));
    }
  free(A);
  free(R);
  free(Cm);
  free(Fl);
  built_free(&b);
  tc_arena_free(&a);
}

/* ---- cumsum ---- */
static void cumsum_case(bool reverse) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  int n = 37;
  tc_kernel_ir *k = build_cumsum(&a, 4, n, reverse);
  if (!build_kernel(k, &b)) {
    tc_t_fail(__FILE__, __LINE__, "cumsum kernel did not build");
    built_free(&b);
    tc_arena_free(&a);
    return;
  }
  int M = 11;
  float *A = malloc(sizeof(float) * M * n), *C = malloc(sizeof(float) * M * n);
  for (int i = 0; i < M * n; i++) A[i] = frand();
  void *data[2] = {A, C};
  int64_t syms[1] = {M};
  EXPECT(launch(&b, data, 2, syms, 1));
  bool outs[2] = {false, true};
  size_t ns[2] = {0, (size_t)M * n};
  EXPECT(interp_agrees(k, data, outs, ns, 2, syms, 1e-6, 1e-6));
  for (int i = 0; i < M; i++) {
    float acc = 0;
    for (int jj = 0; jj < n; jj++) {
      int j = reverse ? n - 1 - jj : jj;
      acc += A[i * n + j];
      if (!close_to(C[i * n + j], acc, 1e-6, 1e-6)) {
        printf("  cumsum%s: C[%d,%d] = %g, want %g\n", reverse ? " reverse" : "", i, j, C[i * n + j], acc);
        EXPECT(0);
        i = M;
        break;
      }
    }
  }
  free(A);
  free(C);
  built_free(&b);
  tc_arena_free(&a);
}
TEST(cumsum_forward) { cumsum_case(false); }
TEST(cumsum_reverse) { cumsum_case(true); }

/* ---- a thread-level kernel: thread bindings, per-thread lets and locals, shared memory
 * written by each thread and read by its neighbour (needs a barrier), a serial loop with
 * barriers inside, element atomics on shared and global memory ---- */
#define TT 64
static tc_kernel_ir *build_threads(tc_arena *a) {
  kb B;
  kb *b = &B;
  kb_init(b, a, "threads");
  tc_var *n = kSym(b, "n");
  tc_expr *sh[1] = {kV(b, n)}, *shc[1] = {kCeil(b, kV(b, n), TT)}, *sh1[1] = {kI(b, 1)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 1, sh, false);
  tc_buffer *Bo = kTensor(b, "B", kb_f32(), 1, sh, true);
  tc_buffer *B2 = kTensor(b, "B2", kb_f32(), 1, sh, true);
  tc_buffer *Cnt = kTensor(b, "Cnt", kb_i32(), 1, shc, true);
  tc_buffer *Tot = kTensor(b, "Total", kb_f32(), 1, sh1, true);
  tc_expr *grid[1] = {kCeil(b, kV(b, n), TT)};
  kLaunch(b, 1, grid, TT);
  tc_var *bx = b->k->block_idx[0];
  tc_var *tx = tc_ir_new_var(a, b->k, "tx", kb_i32(), TC_VAR_THREAD_IDX, b->loc);
  tx->axis = 0;
  tc_stmt_list *L = &b->body;
  int64_t s64[1] = {TT}, s1[1] = {1}, s2[1] = {2};
  tc_buffer *S = kAlloc(b, L, "S", kb_f32(), TC_SCOPE_SHARED, 1, s64);
  tc_buffer *cnt = kAlloc(b, L, "cnt", kb_i32(), TC_SCOPE_SHARED, 1, s1);
  tc_buffer *loc = kAlloc(b, L, "loc", kb_f32(), TC_SCOPE_LOCAL, 1, s2);
  tc_var *i = tc_ir_new_var(a, b->k, "i", kb_i32(), TC_VAR_LOCAL, b->loc);
  tc_var *v = tc_ir_new_var(a, b->k, "v", kb_f32(), TC_VAR_LOCAL, b->loc);
  tc_var *w = tc_ir_new_var(a, b->k, "w", kb_f32(), TC_VAR_LOCAL, b->loc);
  tc_var *acc = tc_ir_new_var(a, b->k, "acc", kb_f32(), TC_VAR_LOCAL, b->loc);
  tc_var *u = tc_ir_new_var(a, b->k, "u", kb_f32(), TC_VAR_LOCAL, b->loc);
  tc_stmt_list_push(a, L, kLet(b, i, kAdd(b, kMul(b, kV(b, bx), kI(b, TT)), kV(b, tx)), false));
  tc_stmt_list_push(a, L, kIf(b, kBin(b, TC_OP_EQ, kV(b, tx), kI(b, 0)), kStore1(b, cnt, kI(b, 0), kI(b, 0)), NULL));
  tc_stmt_list_push(a, L, kLet(b, v, kMul(b, kLoad1(b, A, kV(b, i)), kF(b, 2.0)), false));
  tc_stmt_list_push(a, L, kStore1(b, loc, kI(b, 0), kV(b, v)));
  tc_stmt_list_push(a, L, kStore1(b, loc, kI(b, 1), kAdd(b, kV(b, v), kF(b, 1.0))));
  tc_stmt_list_push(a, L, kStore1(b, S, kV(b, tx), kAdd(b, kLoad1(b, loc, kI(b, 0)), kLoad1(b, loc, kI(b, 1)))));
  tc_expr *nb = kBin(b, TC_OP_FLOORMOD, kAdd(b, kV(b, tx), kI(b, 1)), kI(b, TT));
  tc_stmt_list_push(a, L, kLet(b, w, kLoad1(b, S, nb), false));
  tc_stmt_list_push(a, L, kAtomic1(b, cnt, kI(b, 0), kI(b, 1)));
  tc_stmt_list_push(a, L, kStore1(b, Bo, kV(b, i), kAdd(b, kV(b, w), kLoad1(b, loc, kI(b, 0)))));
  tc_stmt_list_push(a, L, kAtomic1(b, Tot, kI(b, 0), kV(b, v)));
  tc_stmt_list_push(a, L, kLet(b, acc, kF(b, 0.0), false));
  tc_stmt_list body = {0};
  tc_stmt_list_push(a, &body, kStore1(b, S, kV(b, tx), kAdd(b, kLoad1(b, S, kV(b, tx)), kF(b, 1.0))));
  tc_expr *nb3 = kBin(b, TC_OP_FLOORMOD, kAdd(b, kV(b, tx), kI(b, 3)), kI(b, TT));
  tc_stmt_list_push(a, &body, kLet(b, u, kLoad1(b, S, nb3), false));
  tc_stmt_list_push(a, &body, kLet(b, acc, kAdd(b, kV(b, acc), kV(b, u)), true));
  tc_var *r = kLoopVar(b, "r");
  tc_stmt_list_push(a, L, kFor(b, r, kI(b, 0), kI(b, 3), TC_LOOP_SERIAL, kSeq(b, &body)));
  tc_stmt_list_push(a, L, kStore1(b, B2, kV(b, i), kV(b, acc)));
  tc_stmt_list_push(a, L, kIf(b, kBin(b, TC_OP_EQ, kV(b, tx), kI(b, 0)), kStore1(b, Cnt, kV(b, bx), kLoad1(b, cnt, kI(b, 0))), NULL));
  kFinish(b);
  return b->k;
}

TEST(thread_level_kernel) {
  tc_arena a;
  tc_arena_init(&a);
  built b;
  tc_kernel_ir *k = build_threads(&a);
  CHECK(build_kernel(k, &b));
  /* the plan split thread loops at the barriers: the source shows several thread loops */
  CHECK(strstr(b.gen.kernel_source, "segment 2") != NULL);
  static const int ns[] = {64, 200, 5};
  for (size_t s = 0; s < 3; s++) {
    int n = ns[s], nb = (n + TT - 1) / TT;
    float *A = malloc(sizeof(float) * n), *Bv = malloc(sizeof(float) * n), *B2 = malloc(sizeof(float) * n);
    int32_t *Cnt = malloc(sizeof(int32_t) * nb);
    float Tot = 0;
    for (int x = 0; x < n; x++) A[x] = frand();
    void *data[5] = {A, Bv, B2, Cnt, &Tot};
    int64_t syms[1] = {n};
    EXPECT(launch(&b, data, 5, syms, 1));
    { /* the reference interpreter, from the same initial state */
      float *rB = calloc(n, sizeof(float)), *rB2 = calloc(n, sizeof(float)), rTot = 0;
      int32_t *rCnt = calloc(nb, sizeof(int32_t));
      void *rd[5] = {A, rB, rB2, rCnt, &rTot};
      tilec_error ierr = {0};
      int64_t sc[5] = {0};
      double fsc[5] = {0};
      EXPECT(tc_interp_run(k, rd, sc, fsc, syms, &ierr) == TILEC_OK);
      if (ierr.status) printf("  interp: %s\n", ierr.rendered);
      EXPECT(memcmp(rB, Bv, sizeof(float) * n) == 0);
      EXPECT(memcmp(rB2, B2, sizeof(float) * n) == 0);
      EXPECT(memcmp(rCnt, Cnt, sizeof(int32_t) * nb) == 0);
      EXPECT(close_to(Tot, rTot, 1e-5, 1e-5));
      free(rB);
      free(rB2);
      free(rCnt);
    }
    double tot = 0;
    for (int blk = 0; blk < nb; blk++) {
      float vv[TT], S0[TT], S[TT], accv[TT] = {0};
      for (int t = 0; t < TT; t++) {
        int x = blk * TT + t;
        vv[t] = (x < n ? A[x] : 0.0f) * 2.0f;
        S0[t] = vv[t] + (vv[t] + 1.0f);
        tot += vv[t];
      }
      memcpy(S, S0, sizeof S);
      for (int rr = 0; rr < 3; rr++) {
        for (int t = 0; t < TT; t++) S[t] += 1.0f;
        for (int t = 0; t < TT; t++) accv[t] += S[(t + 3) % TT];
      }
      for (int t = 0; t < TT; t++) {
        int x = blk * TT + t;
        if (x >= n) continue;
        float want = S0[(t + 1) % TT] + vv[t];
        if (Bv[x] != want || B2[x] != accv[t]) {
          printf("  threads n=%d: B[%d] = %g (want %g), B2 = %g (want %g)\n", n, x, Bv[x], want, B2[x], accv[t]);
          EXPECT(0);
          blk = nb;
          break;
        }
      }
      if (blk < nb && Cnt[blk] != TT) {
        printf("  threads n=%d: Cnt[%d] = %d, want %d\n", n, blk, Cnt[blk], TT);
        EXPECT(0);
      }
    }
    EXPECT(close_to(Tot, tot, 1e-4, 1e-5));
    free(A);
    free(Bv);
    free(B2);
    free(Cnt);
  }
  built_free(&b);
  tc_arena_free(&a);
}

/* S[tx] = S[tx - 1] reads what the neighbouring thread writes in the same statement: lockstep,
 * as on a GPU warp (and in the reference interpreter): every thread reads the old value. */
TEST(lockstep_shift) {
  tc_arena a;
  tc_arena_init(&a);
  kb B;
  kb *b = &B;
  kb_init(b, &a, "shift");
  tc_expr *sh[1] = {kI(b, 128)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 1, sh, false), *O = kTensor(b, "O", kb_f32(), 1, sh, true);
  tc_expr *grid[1] = {kI(b, 2)};
  kLaunch(b, 1, grid, 64);
  tc_var *tx = tc_ir_new_var(&a, b->k, "tx", kb_i32(), TC_VAR_THREAD_IDX, b->loc);
  int64_t s64[1] = {64};
  tc_buffer *S = kAlloc(b, &b->body, "S", kb_f32(), TC_SCOPE_SHARED, 1, s64);
  tc_expr *gi = kAdd(b, kMul(b, kV(b, b->k->block_idx[0]), kI(b, 64)), kV(b, tx));
  tc_stmt_list_push(&a, &b->body, kStore1(b, S, kV(b, tx), kLoad1(b, A, gi)));
  tc_expr *prev = kBin(b, TC_OP_FLOORMOD, kAdd(b, kV(b, tx), kI(b, 63)), kI(b, 64));
  tc_stmt_list_push(&a, &b->body, kStore1(b, S, kV(b, tx), kLoad1(b, S, prev)));
  tc_stmt_list_push(&a, &b->body, kStore1(b, O, gi, kLoad1(b, S, kV(b, tx))));
  kFinish(b);
  built bt;
  CHECK(build_kernel(b->k, &bt));
  CHECK(strstr(bt.gen.kernel_source, "lockstep store") != NULL);
  float Av[128], Ov[128], Rv[128];
  for (int i = 0; i < 128; i++) Av[i] = (float)i;
  void *data[2] = {Av, Ov}, *rd[2] = {Av, Rv};
  EXPECT(launch(&bt, data, 2, NULL, 0));
  tilec_error err = {0};
  int64_t sc[2] = {0};
  double fs[2] = {0};
  EXPECT(tc_interp_run(b->k, rd, sc, fs, NULL, &err) == TILEC_OK);
  for (int i = 0; i < 128; i++) {
    float want = Av[(i / 64) * 64 + (i % 64 + 63) % 64];
    if (Ov[i] != want || Rv[i] != want) {
      printf("  shift: O[%d] = %g, interp %g, want %g\n", i, Ov[i], Rv[i], want);
      EXPECT(0);
      break;
    }
  }
  built_free(&bt);
  tc_arena_free(&a);
}

/* A warp-synchronous Hillis-Steele scan: `if tx >= d: S[tx] = S[tx] + S[tx - d]` in a loop,
 * no barriers written: lockstep gives the inclusive prefix sum. */
TEST(lockstep_guarded_scan) {
  tc_arena a;
  tc_arena_init(&a);
  kb B;
  kb *b = &B;
  kb_init(b, &a, "scan");
  tc_expr *sh[1] = {kI(b, 128)};
  tc_buffer *A = kTensor(b, "A", kb_f32(), 1, sh, false), *O = kTensor(b, "O", kb_f32(), 1, sh, true);
  tc_expr *grid[1] = {kI(b, 2)};
  kLaunch(b, 1, grid, 64);
  tc_var *tx = tc_ir_new_var(&a, b->k, "tx", kb_i32(), TC_VAR_THREAD_IDX, b->loc);
  int64_t s64[1] = {64};
  tc_buffer *S = kAlloc(b, &b->body, "S", kb_f32(), TC_SCOPE_SHARED, 1, s64);
  tc_expr *gi = kAdd(b, kMul(b, kV(b, b->k->block_idx[0]), kI(b, 64)), kV(b, tx));
  tc_stmt_list_push(&a, &b->body, kStore1(b, S, kV(b, tx), kLoad1(b, A, gi)));
  tc_var *r = kLoopVar(b, "r");
  tc_expr *d = kBin(b, TC_OP_SHL, kI(b, 1), kV(b, r));
  tc_expr *sum = kAdd(b, kLoad1(b, S, kV(b, tx)), kLoad1(b, S, kBin(b, TC_OP_SUB, kV(b, tx), d)));
  tc_stmt *upd = kIf(b, kBin(b, TC_OP_GE, kV(b, tx), kBin(b, TC_OP_SHL, kI(b, 1), kV(b, r))), kStore1(b, S, kV(b, tx), sum), NULL);
  tc_stmt_list_push(&a, &b->body, kFor(b, r, kI(b, 0), kI(b, 6), TC_LOOP_SERIAL, upd));
  tc_stmt_list_push(&a, &b->body, kStore1(b, O, gi, kLoad1(b, S, kV(b, tx))));
  kFinish(b);
  built bt;
  CHECK(build_kernel(b->k, &bt));
  float Av[128], Ov[128], Rv[128];
  for (int i = 0; i < 128; i++) Av[i] = (float)(i % 7);
  void *data[2] = {Av, Ov}, *rd[2] = {Av, Rv};
  EXPECT(launch(&bt, data, 2, NULL, 0));
  tilec_error err = {0};
  int64_t sc[2] = {0};
  double fs[2] = {0};
  EXPECT(tc_interp_run(b->k, rd, sc, fs, NULL, &err) == TILEC_OK);
  float acc = 0;
  for (int i = 0; i < 128; i++) {
    acc = (i % 64 == 0 ? 0 : acc) + Av[i];
    if (Ov[i] != acc || Rv[i] != acc) {
      printf("  scan: O[%d] = %g, interp %g, want %g\n", i, Ov[i], Rv[i], acc);
      EXPECT(0);
      break;
    }
  }
  built_free(&bt);
  tc_arena_free(&a);
}

/* A barrier needed inside an if on the thread index is a clear error. */
TEST(barrier_under_thread_dependent_if_is_an_error) {
  tc_arena a;
  tc_arena_init(&a);
  kb B;
  kb *b = &B;
  kb_init(b, &a, "bad");
  tc_expr *sh[1] = {kI(b, 64)};
  tc_buffer *O = kTensor(b, "O", kb_f32(), 1, sh, true);
  tc_expr *grid[1] = {kI(b, 1)};
  kLaunch(b, 1, grid, 64);
  tc_var *tx = tc_ir_new_var(&a, b->k, "tx", kb_i32(), TC_VAR_THREAD_IDX, b->loc);
  int64_t s64[1] = {65};
  tc_buffer *S = kAlloc(b, &b->body, "S", kb_f32(), TC_SCOPE_SHARED, 1, s64);
  tc_stmt_list th = {0};
  tc_stmt_list_push(&a, &th, kStore1(b, S, kV(b, tx), kF(b, 1.0)));
  tc_stmt_list_push(&a, &th, kStore1(b, O, kV(b, tx), kLoad1(b, S, kAdd(b, kV(b, tx), kI(b, 1)))));
  tc_stmt_list_push(&a, &b->body, kIf(b, kBin(b, TC_OP_LT, kV(b, tx), kI(b, 32)), kSeq(b, &th), NULL));
  kFinish(b);
  tc_generated gen;
  tilec_error err = {0};
  CHECK(!place_barriers(b->k, &err));
  CHECK_INT(err.status, TILEC_ERROR_PROGRAM);
  CHECK_STR(err.message, "a barrier is needed under control flow that depends on the thread index (threads read "
                         "shared memory other threads write inside this if)");
  /* the cpu plan refuses a barrier written under such an if too */
  tc_error_clear(&err);
  tc_stmt *ifs = b->k->body->u.seq.items[b->k->body->u.seq.n - 1];
  tc_stmt *with_barrier[3] = {ifs->u.if_.then_s->u.seq.items[0], tc_ir_stmt(&a, TC_ST_BARRIER, b->loc), ifs->u.if_.then_s->u.seq.items[1]};
  ifs->u.if_.then_s = tc_ir_seq(&a, 3, with_barrier, b->loc);
  CHECK_INT(tc_lower_and_emit(&tc_cpu_cc_backend, &a, b->k, &gen, &err), TILEC_ERROR_PROGRAM);
  CHECK_STR(err.message, "a barrier is needed under control flow that depends on the thread index (threads read "
                         "shared memory other threads write inside this if)");
  /* a tile operation under such an if: the verifier, which runs after each of the target's
   * passes, rejects it before the plan's own check would */
  kb_init(b, &a, "bad2");
  O = kTensor(b, "O", kb_f32(), 1, sh, true);
  kLaunch(b, 1, grid, 64);
  tx = tc_ir_new_var(&a, b->k, "tx", kb_i32(), TC_VAR_THREAD_IDX, b->loc);
  tc_stmt_list_push(&a, &b->body, kIf(b, kBin(b, TC_OP_LT, kV(b, tx), kI(b, 32)), kFill(b, kWhole(b, O), kF(b, 0)), NULL));
  kFinish(b);
  tc_error_clear(&err);
  CHECK_INT(tc_lower_and_emit(&tc_cpu_cc_backend, &a, b->k, &gen, &err), TILEC_ERROR_PROGRAM);
  CHECK_STR(err.message, "T.fill under control flow that depends on the thread index; tile operations need the "
                         "whole block");
  tc_arena_free(&a);
}

/* Generation is deterministic; kernel_source is a part of full_source. */
TEST(source_is_deterministic) {
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_gemm(&a, 64, 64, 32, false, false, kb_f32(), kb_f32(), 128);
  tc_generated g1, g2;
  tilec_error err = {0};
  CHECK_INT(tc_lower_and_emit(&tc_cpu_cc_backend, &a, k, &g1, &err), TILEC_OK);
  CHECK_INT(tc_lower_and_emit(&tc_cpu_cc_backend, &a, k, &g2, &err), TILEC_OK);
  EXPECT(strcmp(g1.full_source, g2.full_source) == 0);
  EXPECT(strstr(g1.full_source, g1.kernel_source) != NULL);
  EXPECT(strstr(g1.kernel_source, "static int tcg_block(") != NULL);
  EXPECT(strstr(g1.kernel_source, "tcg_gemm_f32(64, 64, 32,") != NULL);
  EXPECT(strstr(g1.full_source, "int tilec_cpu_run_blocks(") != NULL);
  free(g1.kernel_source);
  free(g1.full_source);
  free(g2.kernel_source);
  free(g2.full_source);
  tc_arena_free(&a);
}

TEST(compiler_failure_reports_stderr) {
  tc_backend_env env = env_of("cc");
  tc_generated g = {"", "int broken = ;\n"};
  void *art = NULL;
  size_t n = 0;
  tilec_error err = {0};
  CHECK_INT(tc_cpu_cc_backend.build(&env, &g, &art, &n, &err), TILEC_ERROR_TARGET);
  CHECK(art == NULL);
  CHECK(strncmp(err.message, "cc failed (exit 1): ", 20) == 0);
  CHECK(strstr(err.message, "k.c:1:") != NULL);
  CHECK(strstr(err.message, "error") != NULL);
}

TEST(missing_compiler_is_a_clear_error) {
  tc_backend_env env = env_of("tilec-no-such-compiler");
  char why[256] = "";
  CHECK(!tc_cpu_cc_backend.available(&env, why, sizeof why));
  CHECK_STR(why, "C compiler 'tilec-no-such-compiler' not found: set CC or install gcc");
  tc_generated g = {"", "int x;\n"};
  void *art = NULL;
  size_t n = 0;
  tilec_error err = {0};
  CHECK_INT(tc_cpu_cc_backend.build(&env, &g, &art, &n, &err), TILEC_ERROR_TARGET);
  CHECK_STR(err.message, "C compiler 'tilec-no-such-compiler' not found: set CC or install gcc");
  tc_error_clear(&err);
  CHECK(tc_cpu_cc_backend.toolchain_id(&env, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_TARGET);
  env = env_of("cc");
  CHECK(tc_cpu_cc_backend.available(&env, why, sizeof why));
  char *id = tc_cpu_cc_backend.toolchain_id(&env, &err);
  CHECK(id != NULL);
  EXPECT(strncmp(id, "cc=/", 4) == 0 && strstr(id, "-march=native") != NULL);
  free(id);
}

/* A runtime assert that fails stops the launch with its message. */
TEST(runtime_assert_fails_with_its_message) {
  tc_arena a;
  tc_arena_init(&a);
  kb B;
  kb *b = &B;
  kb_init(b, &a, "asserting");
  tc_var *n = kSym(b, "n");
  tc_expr *sh[1] = {kV(b, n)};
  tc_buffer *O = kTensor(b, "O", kb_f32(), 1, sh, true);
  tc_expr *grid[1] = {kI(b, 4)};
  kLaunch(b, 1, grid, 32);
  tc_stmt *as = tc_ir_stmt(&a, TC_ST_ASSERT, b->loc);
  as->u.assert_.cond = kBin(b, TC_OP_LT, kV(b, b->k->block_idx[0]), kV(b, n));
  as->u.assert_.msg = "block index \"out\" of range";
  tc_stmt_list_push(&a, &b->body, as);
  tc_stmt_list_push(&a, &b->body, kStore1(b, O, kV(b, b->k->block_idx[0]), kF(b, 1.0)));
  kFinish(b);
  built bt;
  CHECK(build_kernel(b->k, &bt));
  float o[4] = {0};
  void *data[1] = {o};
  int64_t ok_syms[1] = {4}, bad_syms[1] = {2};
  CHECK(launch(&bt, data, 1, ok_syms, 1));
  EXPECT(o[0] == 1 && o[3] == 1);
  int64_t scal[1] = {0};
  double fs[1] = {0};
  tc_launch_args la = {data, scal, fs, bad_syms, 1, 1};
  tc_backend_env env = env_of(test_cc());
  tilec_error err = {0};
  EXPECT(tc_cpu_cc_backend.launch(&env, bt.mod, &la, &err) == TILEC_ERROR_TARGET);
  EXPECT(strcmp(err.message, "kernel assertion failed: block index \"out\" of range") == 0);
  built_free(&bt);
  tc_arena_free(&a);
}

/* A compiler that rejects -march=native: the build is retried without it. */
TEST(march_native_fallback) {
  char dir[] = "/tmp/tilec-test-cc-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[128];
  snprintf(path, sizeof path, "%s/oldcc", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fprintf(f, "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -march=native ] && { echo \"oldcc: error: unrecognized "
             "option '-march=native'\" >&2; exit 1; }; done\nexec cc \"$@\"\n");
  fclose(f);
  chmod(path, 0755);
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_axpb(&a, 64);
  tc_generated gen;
  tilec_error err = {0};
  CHECK_INT(tc_lower_and_emit(&tc_cpu_cc_backend, &a, k, &gen, &err), TILEC_OK);
  tc_backend_env env = env_of(path);
  void *art = NULL;
  size_t n = 0;
  EXPECT(tc_cpu_cc_backend.build(&env, &gen, &art, &n, &err) == TILEC_OK);
  EXPECT(art != NULL && n > 4 && memcmp(art, "\177ELF", 4) == 0);
  free(art);
  free(gen.kernel_source);
  free(gen.full_source);
  tc_arena_free(&a);
  unlink(path);
  rmdir(dir);
}

/* Several threads launching one kernel at once on one pool. */
typedef struct conc {
  built *b;
  int M, N, K;
  bool ok;
} conc;
static void *conc_main(void *p) {
  conc *c = p;
  c->ok = true;
  for (int r = 0; r < 3 && c->ok; r++) c->ok = check_gemm(32, 32, 16, false, false, false, c->M, c->N, c->K, c->b);
  return NULL;
}
TEST(concurrent_launches) {
  tc_arena a;
  tc_arena_init(&a);
  tc_kernel_ir *k = build_gemm(&a, 32, 32, 16, false, false, kb_f32(), kb_f32(), 128);
  built b;
  CHECK(build_kernel(k, &b));
  pthread_t th[4];
  conc c[4];
  for (int i = 0; i < 4; i++) {
    c[i] = (conc){&b, 40 + 7 * i, 50 + 3 * i, 33 + i, false};
    pthread_create(&th[i], NULL, conc_main, &c[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    EXPECT(c[i].ok);
  }
  built_free(&b);
  tc_arena_free(&a);
}

/* The pool runs every index exactly once, from several callers at once. */
typedef struct pool_ctx {
  _Atomic int *hits;
  int bad_slot;
} pool_ctx;
static void pool_fn(void *c, int64_t b, int64_t e, int slot) {
  pool_ctx *p = c;
  if (slot < 0 || slot >= tc_thread_pool_size(g_pool)) p->bad_slot = 1;
  for (int64_t i = b; i < e; i++) p->hits[i]++;
}
static void *pool_caller(void *arg) {
  pool_ctx *p = arg;
  tc_thread_pool_parallel_for(g_pool, 0, 1000, 7, pool_fn, p);
  return NULL;
}
TEST(pool_parallel_for) {
  _Atomic int hits[3][1000];
  memset(hits, 0, sizeof hits);
  pool_ctx pc[3] = {{hits[0], 0}, {hits[1], 0}, {hits[2], 0}};
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, pool_caller, &pc[i]);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  for (int c = 0; c < 3; c++) {
    EXPECT(!pc[c].bad_slot);
    for (int i = 0; i < 1000; i++) EXPECT(hits[c][i] == 1);
  }
  tc_thread_pool_parallel_for(NULL, 0, 10, 3, pool_fn, &pc[0]); /* serial without a pool */
  for (int i = 0; i < 10; i++) EXPECT(hits[0][i] == 2);
}

int main(void) {
  g_pool = tc_thread_pool_create(2);
  RUN(gemm_fp32);
  RUN(gemm_fp32_odd_tiles);
  RUN(gemm_transpose_b);
  RUN(gemm_transpose_a);
  RUN(gemm_fp16_operands);
  RUN(gemm_clear_accum);
  RUN(elementwise_chain);
  RUN(elementwise_bfloat16);
  RUN(narrow_dtypes_and_wrapping);
  RUN(softmax_rows);
  RUN(reduce_kinds_and_global_fill);
  RUN(cumsum_forward);
  RUN(cumsum_reverse);
  RUN(thread_level_kernel);
  RUN(lockstep_shift);
  RUN(lockstep_guarded_scan);
  RUN(barrier_under_thread_dependent_if_is_an_error);
  RUN(source_is_deterministic);
  RUN(compiler_failure_reports_stderr);
  RUN(missing_compiler_is_a_clear_error);
  RUN(runtime_assert_fails_with_its_message);
  RUN(march_native_fallback);
  RUN(concurrent_launches);
  RUN(pool_parallel_for);
  tc_thread_pool_destroy(g_pool);
  TEST_MAIN_END();
}
