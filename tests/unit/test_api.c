/* test_api.c: the public API end to end: read, compile, query, launch with DLPack tensors,
 * argument checks that write nothing, the reference, verification that can fail, threads. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tilec.h"

static const char *scale_src =
    "import tilelang.language as T\n"
    "def scale(M=100, N=48, block_M=32, block_N=16, alpha=2.0, dtype='float32'):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):\n"
    "            for i, j in T.Parallel(block_M, block_N):\n"
    "                B[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * alpha + 1.0\n"
    "    return main\n";

static const char *sym_src =
    "import tilelang.language as T\n"
    "M = T.symbolic('M')\n"
    "@T.prim_func\n"
    "def addone(A: T.Tensor((M, 8), 'float32'), B: T.Tensor((M, 8), 'float32')):\n"
    "    with T.Kernel(T.ceildiv(M, 4), threads=32) as bx:\n"
    "        for i, j in T.Parallel(4, 8):\n"
    "            B[bx * 4 + i, j] = A[bx * 4 + i, j] + 1.0\n";

typedef struct tensor {
  DLTensor t;
  int64_t shape[4];
} tensor;

static void make_tensor(tensor *x, float *data, int64_t m, int64_t n) {
  memset(x, 0, sizeof *x);
  x->shape[0] = m;
  x->shape[1] = n;
  x->t.data = data;
  x->t.device.device_type = kDLCPU;
  x->t.ndim = 2;
  x->t.shape = x->shape;
  x->t.dtype.code = kDLFloat;
  x->t.dtype.bits = 32;
  x->t.dtype.lanes = 1;
}

static tilec_context *ctx;

static tilec_kernel *compile_src(const char *src, const tilec_define *defs, size_t ndefs, tilec_error *err) {
  tilec_program *p = tilec_program_from_string(ctx, "test.py", src, strlen(src), err);
  if (!p) return NULL;
  tilec_compile_options o = {0};
  o.defines = defs;
  o.num_defines = ndefs;
  o.target = "cpu";
  tilec_kernel *k = tilec_compile(p, &o, err);
  tilec_program_destroy(p); /* the kernel keeps what it needs */
  return k;
}

/* tilec_param_info.rounds_through: a float output computed from values the kernel rounds to a
 * narrower float (a cast, a bfloat16 tile) names that dtype, so verification can use its
 * tolerance; exact inputs, a float32 accumulator and same-dtype copies round nothing narrower. */
static const char rounding_src[] =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def mix(A: T.Tensor((16, 16), \"float16\"), B: T.Tensor((16, 16), \"float16\"), C: T.Tensor((16, 16), \"float32\"),\n"
    "        P: T.Tensor((16, 16), \"float32\"), S: T.Tensor((16, 16), \"float32\"), H: T.Tensor((16, 16), \"float16\"),\n"
    "        X: T.Tensor((16, 16), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        As = T.alloc_shared((16, 16), \"float16\")\n"
    "        Bs = T.alloc_shared((16, 16), \"float16\")\n"
    "        acc = T.alloc_fragment((16, 16), \"float32\")\n"
    "        pb = T.alloc_shared((16, 16), \"bfloat16\")\n"
    "        T.copy(A, As)\n"
    "        T.copy(B, Bs)\n"
    "        T.clear(acc)\n"
    "        T.gemm(As, Bs, acc)\n"
    "        T.copy(acc, C)\n"
    "        for i, j in T.Parallel(16, 16):\n"
    "            P[i, j] = T.cast(T.cast(acc[i, j], \"bfloat16\"), \"float32\") * 2.0\n"
    "        T.copy(acc, pb)\n"
    "        T.copy(pb, S)\n"
    "        T.copy(acc, H)\n"
    "        for i, j in T.Parallel(16, 16):\n"
    "            X[i, j] = A[i, j]\n";

TEST(outputs_rounded_through_a_narrower_float) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(rounding_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  if (!k) return;
  static const char *const want[] = {NULL, NULL, NULL, "bfloat16", "bfloat16", NULL, NULL};
  CHECK_INT((int)tilec_kernel_num_params(k), 7);
  for (size_t i = 0; i < 7; i++) {
    tilec_param_info pi;
    CHECK_INT(tilec_kernel_param(k, i, &pi), 0);
    if (want[i]) CHECK(pi.rounds_through && strcmp(pi.rounds_through, want[i]) == 0);
    else CHECK(pi.rounds_through == NULL);
  }
  /* tilec_compare_tensors_as: the named dtype's tolerance when it is looser */
  float ref[4] = {1, 2, 3, 4}, out[4] = {1.01f, 2, 3, 4};
  int64_t shape[1] = {4};
  DLTensor a = {.data = out, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor b = a;
  b.data = ref;
  tilec_compare c;
  CHECK_INT(tilec_compare_tensors(&a, &b, &c, &err), TILEC_OK);
  CHECK(!c.ok);
  CHECK_INT(tilec_compare_tensors_as(&a, &b, "bfloat16", &c, &err), TILEC_OK);
  CHECK(c.ok && c.rtol == 5e-2);
  CHECK_INT(tilec_compare_tensors_as(&a, &b, "float64", &c, &err), TILEC_OK); /* narrower than float32: float32's */
  CHECK(!c.ok && c.rtol == 1e-4);
  CHECK_INT(tilec_compare_tensors_as(&a, &b, "float77", &c, &err), TILEC_ERROR_USAGE);
  tilec_kernel_destroy(k);
}

/* A slot list filled through T.atomic_add(..., return_prev=True): Idx's dimension 1 takes its
 * order from the schedule (analysis/order.c); Count and the input do not. */
static const char slots_src[] =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def slots(A: T.Tensor((2, 64), \"float32\"), Idx: T.Tensor((2, 64), \"int32\"), Count: T.Tensor((2,), \"int32\"),\n"
    "          Tally: T.Tensor((2, 64), \"int32\")):\n"
    "    with T.Kernel(2, threads=64) as bx:\n"
    "        count = T.alloc_shared((1,), \"int32\")\n"
    "        slot = T.alloc_var(\"int32\")\n"
    "        tx = T.get_thread_binding()\n"
    "        if tx == 0:\n"
    "            count[0] = 0\n"
    "        T.sync_threads()\n"
    "        if A[bx, tx] > 0:\n"
    "            slot = T.atomic_add(count[0], 1, return_prev=True)\n"
    "            Idx[bx, slot] = tx\n"
    "            T.atomic_add(Tally[bx, slot], 1)\n"
    "        T.sync_threads()\n"
    "        if tx == 0:\n"
    "            Count[bx] = count[0]\n";

TEST(outputs_ordered_by_the_schedule) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(slots_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  if (!k) return;
  static const unsigned want[] = {0, 2, 0, 2}; /* Tally: an element atomic at the slot */
  /* A is read, Idx and Count only stored to, Tally updated in place (atomic adds): read, so a
   * caller must give it its starting values */
  static const int reads[] = {1, 0, 0, 1};
  for (size_t i = 0; i < 4; i++) CHECK_INT(tilec_kernel_param_reads(k, i), reads[i]);
  for (size_t i = 0; i < 4; i++) {
    tilec_param_info pi;
    CHECK_INT(tilec_kernel_param(k, i, &pi), 0);
    CHECK_INT((int)pi.unordered_dims, (int)want[i]);
  }
  tilec_kernel_destroy(k);
  /* rows that hold the same values in another order: equal as multisets along dimension 1 only */
  int32_t ref[2][4] = {{5, 1, 9, -1}, {7, 7, 2, 0}}, out[2][4] = {{9, 5, 1, -1}, {2, 7, 0, 7}};
  int64_t shape[2] = {2, 4};
  DLTensor a = {.data = out, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLInt, 32, 1}, .shape = shape};
  DLTensor b = a;
  b.data = ref;
  tilec_compare c;
  CHECK_INT(tilec_compare_tensors(&a, &b, &c, &err), TILEC_OK);
  CHECK(!c.ok);
  CHECK_INT(tilec_compare_output(&a, &b, NULL, 1u << 1, &c, &err), TILEC_OK);
  CHECK(c.ok && c.max_abs_err == 0);
  CHECK_INT(tilec_compare_output(&a, &b, NULL, 1u << 0, &c, &err), TILEC_OK); /* the rows are not permuted */
  CHECK(!c.ok);
  CHECK_INT(tilec_compare_output(&a, &b, NULL, 3u, &c, &err), TILEC_OK); /* the whole tensor as one multiset */
  CHECK(c.ok);
  out[1][0] = 3; /* a value the reference's row lacks */
  CHECK_INT(tilec_compare_output(&a, &b, NULL, 1u << 1, &c, &err), TILEC_OK);
  CHECK(!c.ok);
  CHECK_INT(tilec_compare_output(&a, &b, "float77", 2u, &c, &err), TILEC_ERROR_USAGE);
  CHECK_INT(tilec_compare_output(&a, NULL, NULL, 2u, &c, &err), TILEC_ERROR_USAGE);
}

TEST(compile_query_launch) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(scale_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  CHECK_STR(tilec_kernel_name(k), "scale");
  CHECK_STR(tilec_kernel_target(k), "cpu");
  CHECK_STR(tilec_kernel_backend(k), "cc");
  CHECK_INT(tilec_kernel_num_params(k), 2);
  tilec_param_info pi;
  CHECK(tilec_kernel_param(k, 1, &pi) == 0);
  CHECK_STR(pi.name, "B");
  CHECK_STR(pi.dtype, "float32");
  CHECK_INT(pi.ndim, 2);
  CHECK_INT(pi.shape[0], 100);
  CHECK(pi.is_output);
  CHECK(tilec_kernel_param(k, 0, &pi) == 0 && !pi.is_output);
  CHECK(tilec_kernel_param(k, 2, &pi) != 0);
  CHECK_INT(tilec_kernel_param_reads(k, 0), 1); /* A is read, B only written: B may start uninitialised */
  CHECK_INT(tilec_kernel_param_reads(k, 1), 0);
  CHECK_INT(tilec_kernel_param_reads(k, 2), -1);
  CHECK_INT(tilec_kernel_param_reads(NULL, 0), -1);
  CHECK(strlen(tilec_kernel_source(k, 1)) > 0);
  float *a = malloc(100 * 48 * 4), *b = malloc(100 * 48 * 4);
  for (int i = 0; i < 100 * 48; i++) a[i] = (float)i * 0.5f, b[i] = -1;
  tensor ta, tb;
  make_tensor(&ta, a, 100, 48);
  make_tensor(&tb, b, 100, 48);
  DLTensor *args[2] = {&ta.t, &tb.t};
  CHECK(tilec_kernel_launch(k, args, 2, &err) == TILEC_OK);
  int bad = 0;
  for (int i = 0; i < 100 * 48; i++) bad += b[i] != a[i] * 2.0f + 1.0f;
  free(a);
  free(b);
  tilec_kernel_destroy(k);
  CHECK_INT(bad, 0);
}

TEST(bad_arguments_write_nothing) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(scale_src, NULL, 0, &err);
  CHECK(k != NULL);
  float *a = calloc(100 * 48, 4), *b = malloc(100 * 48 * 4);
  for (int i = 0; i < 100 * 48; i++) b[i] = 7;
  tensor ta, tb, small;
  make_tensor(&ta, a, 100, 48);
  make_tensor(&tb, b, 100, 48);
  make_tensor(&small, b, 99, 48);
  DLTensor *wrong_shape[2] = {&ta.t, &small.t};
  tilec_error e1 = {0};
  EXPECT(tilec_kernel_launch(k, wrong_shape, 2, &e1) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e1.message, "size 99 in dimension 0, expected 100") != NULL);
  DLTensor *null_arg[2] = {&ta.t, NULL};
  tilec_error e2 = {0};
  EXPECT(tilec_kernel_launch(k, null_arg, 2, &e2) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e2.message, "argument 1 ('B') is NULL") != NULL);
  tensor no_shape = tb;
  no_shape.t.shape = NULL;
  DLTensor *null_shape[2] = {&ta.t, &no_shape.t};
  tilec_error e7 = {0};
  EXPECT(tilec_kernel_launch(k, null_shape, 2, &e7) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e7.message, "argument 'B' has 2 dimensions but its shape is NULL") != NULL);
  EXPECT(tilec_kernel_bytes(k, null_shape, 2) > 0); /* the shapeless tensor is left out, never read */
  tensor half = tb;
  half.t.shape = half.shape;
  half.t.dtype.code = kDLFloat;
  half.t.dtype.bits = 16;
  DLTensor *wrong_dtype[2] = {&ta.t, &half.t};
  tilec_error e3 = {0};
  EXPECT(tilec_kernel_launch(k, wrong_dtype, 2, &e3) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e3.message, "has dtype float16, expected float32") != NULL);
  DLTensor *too_few[1] = {&ta.t};
  tilec_error e4 = {0};
  EXPECT(tilec_kernel_launch(k, too_few, 1, &e4) == TILEC_ERROR_USAGE);
  tensor gpu = tb;
  gpu.t.shape = gpu.shape;
  gpu.t.device.device_type = kDLCUDA;
  DLTensor *wrong_dev[2] = {&ta.t, &gpu.t};
  tilec_error e5 = {0};
  EXPECT(tilec_kernel_launch(k, wrong_dev, 2, &e5) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e5.message, "is a tensor on device 'cuda', but kernel") != NULL);
  EXPECT(strstr(e5.message, "tilec copies nothing") != NULL);
  tilec_error e5s = {0}; /* a stream is a cuda notion */
  EXPECT(tilec_kernel_launch_stream(k, wrong_dev, 2, (void *)0x1, &e5s) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e5s.message, "has no streams") != NULL);
  int64_t strides[2] = {1, 100};
  tensor strided = tb;
  strided.t.shape = strided.shape;
  strided.t.strides = strides;
  DLTensor *wrong_strides[2] = {&ta.t, &strided.t};
  tilec_error e6 = {0};
  EXPECT(tilec_kernel_launch(k, wrong_strides, 2, &e6) == TILEC_ERROR_USAGE);
  int untouched = 1;
  for (int i = 0; i < 100 * 48; i++) untouched &= b[i] == 7;
  EXPECT(untouched);
  free(a);
  free(b);
  tilec_kernel_destroy(k);
}

TEST(symbolic_dims_bound_from_tensors) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(sym_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  tilec_param_info pi;
  CHECK(tilec_kernel_param(k, 0, &pi) == 0);
  CHECK_INT(pi.shape[0], -1);
  CHECK_STR(pi.dims[0], "M");
  for (int m = 1; m <= 13; m += 6) {
    float *a = malloc((size_t)m * 8 * 4), *b = malloc((size_t)m * 8 * 4);
    for (int i = 0; i < m * 8; i++) a[i] = (float)i, b[i] = 0;
    tensor ta, tb;
    make_tensor(&ta, a, m, 8);
    make_tensor(&tb, b, m, 8);
    DLTensor *args[2] = {&ta.t, &tb.t};
    EXPECT(tilec_kernel_launch(k, args, 2, &err) == TILEC_OK);
    for (int i = 0; i < m * 8; i++) EXPECT(b[i] == (float)i + 1);
    tensor tc = tb;
    tc.shape[0] = m + 1;
    tc.t.shape = tc.shape;
    DLTensor *mismatch[2] = {&ta.t, &tc.t};
    tilec_error e = {0};
    EXPECT(tilec_kernel_launch(k, mismatch, 2, &e) == TILEC_ERROR_USAGE);
    EXPECT(strstr(e.message, "but 'M' is") != NULL);
    free(a);
    free(b);
  }
  tilec_kernel_destroy(k);
}

/* Dimensions computed from symbolic sizes (TileLang's IndexQ: [seq_len * heads, index_dim]):
 * tilec_kernel_param_shape evaluates them from given sizes, and the launch checks them against
 * the sizes the plain dimensions bind. */
static const char *shape_expr_src =
    "import tilelang.language as T\n"
    "a = T.dynamic('a')\n"
    "b = T.dynamic('b')\n"
    "@T.prim_func\n"
    "def rows(X: T.Tensor((a * b, 4), 'float32'), S: T.Tensor((a, b), 'float32'),\n"
    "         Y: T.Tensor((a, b, 4), 'float32'), H: T.Tensor((T.ceildiv(a, 2), 4), 'float32')):\n"
    "    with T.Kernel(a, b, threads=32) as (bx, by):\n"
    "        for k in T.Parallel(4):\n"
    "            Y[bx, by, k] = X[bx * b + by, k] * S[bx, by]\n"
    "        if bx % 2 == 0 and by == 0:\n"
    "            for k in T.Parallel(4):\n"
    "                H[bx // 2, k] = X[bx * b, k]\n";

static void make_nd(tensor *x, float *data, int ndim, const int64_t *shape) {
  make_tensor(x, data, 0, 0);
  x->t.ndim = ndim;
  for (int d = 0; d < ndim; d++) x->shape[d] = shape[d];
}

TEST(param_shapes_from_symbolic_sizes) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(shape_expr_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  CHECK_INT((int)tilec_kernel_num_syms(k), 2);
  CHECK(tilec_kernel_sym_name(k, 2) == NULL && tilec_kernel_sym_name(NULL, 0) == NULL);
  int ia = strcmp(tilec_kernel_sym_name(k, 0), "a") == 0 ? 0 : 1, ib = 1 - ia;
  CHECK_STR(tilec_kernel_sym_name(k, (size_t)ib), "b");
  int64_t sizes[2];
  sizes[ia] = 5, sizes[ib] = 3;
  int64_t shape[4][3];
  int missing = 7;
  for (size_t i = 0; i < 4; i++) EXPECT(tilec_kernel_param_shape(k, i, sizes, 2, shape[i], &missing, &err) == TILEC_OK);
  EXPECT(missing == -1);
  EXPECT(shape[0][0] == 15 && shape[0][1] == 4);                    /* a * b */
  EXPECT(shape[1][0] == 5 && shape[1][1] == 3);                     /* a, b */
  EXPECT(shape[2][0] == 5 && shape[2][1] == 3 && shape[2][2] == 4); /* a, b, 4 */
  EXPECT(shape[3][0] == 3 && shape[3][1] == 4);                     /* ceildiv(a, 2) */

  /* an unknown size: which one, as a value */
  sizes[ib] = -1;
  tilec_error e = {0};
  EXPECT(tilec_kernel_param_shape(k, 0, sizes, 2, shape[0], &missing, &e) == TILEC_ERROR_USAGE);
  EXPECT(missing == ib && e.status == TILEC_ERROR_USAGE);
  EXPECT(strstr(e.message, "dimension 0 of 'X' (a * b) needs the symbolic size 'b'") != NULL);
  EXPECT(tilec_kernel_param_shape(k, 1, sizes, 2, shape[1], &missing, NULL) == TILEC_ERROR_USAGE && missing == ib);
  EXPECT(tilec_kernel_param_shape(k, 3, sizes, 2, shape[3], &missing, NULL) == TILEC_OK && missing == -1);
  /* bad calls */
  EXPECT(tilec_kernel_param_shape(k, 4, sizes, 2, shape[0], NULL, NULL) == TILEC_ERROR_USAGE);
  EXPECT(tilec_kernel_param_shape(k, 0, sizes, 1, shape[0], NULL, NULL) == TILEC_ERROR_USAGE);
  EXPECT(tilec_kernel_param_shape(k, 0, NULL, 2, shape[0], NULL, NULL) == TILEC_ERROR_USAGE);
  EXPECT(tilec_kernel_param_shape(NULL, 0, sizes, 2, shape[0], &missing, NULL) == TILEC_ERROR_USAGE && missing == -1);
  /* the grid for those sizes: the cpu has no limit; an unknown size leaves it to the launch */
  EXPECT(tilec_kernel_check_sizes(k, sizes, 2, NULL) == TILEC_OK);
  sizes[ib] = 3, sizes[ia] = 1000000000;
  EXPECT(tilec_kernel_check_sizes(k, sizes, 2, NULL) == TILEC_OK);
  sizes[ia] = 5;
  EXPECT(tilec_kernel_check_sizes(k, sizes, 1, NULL) == TILEC_ERROR_USAGE);
  EXPECT(tilec_kernel_check_sizes(k, NULL, 2, NULL) == TILEC_ERROR_USAGE);
  EXPECT(tilec_kernel_check_sizes(NULL, sizes, 2, NULL) == TILEC_ERROR_USAGE);

  /* the launch: tensors of those shapes run; X of another height is refused, naming a * b */
  float x[15 * 4], sv[15], y[15 * 4], h[3 * 4];
  for (int i = 0; i < 60; i++) x[i] = (float)i, y[i] = 0;
  for (int i = 0; i < 15; i++) sv[i] = (float)(i + 1);
  for (int i = 0; i < 12; i++) h[i] = 0;
  int64_t xs[2] = {15, 4}, ss[2] = {5, 3}, ys[3] = {5, 3, 4}, hs[2] = {3, 4};
  tensor tx, ts, ty, th;
  make_nd(&tx, x, 2, xs);
  make_nd(&ts, sv, 2, ss);
  make_nd(&ty, y, 3, ys);
  make_nd(&th, h, 2, hs);
  DLTensor *args[4] = {&tx.t, &ts.t, &ty.t, &th.t};
  EXPECT(tilec_kernel_launch(k, args, 4, &err) == TILEC_OK);
  for (int r = 0; r < 15; r++)
    for (int c = 0; c < 4; c++) EXPECT(y[r * 4 + c] == x[r * 4 + c] * sv[r]);
  for (int r = 0; r < 3; r++) EXPECT(h[r * 4 + 1] == x[(2 * r) * 3 * 4 + 1]);
  tx.shape[0] = 14;
  tilec_error e2 = {0};
  EXPECT(tilec_kernel_launch(k, args, 4, &e2) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e2.message, "argument 'X' has size 14 in dimension 0, expected a * b = 15") != NULL);
  tilec_kernel_destroy(k);

  /* a size only a computed dimension names binds by solving it (n * 4 + 1 rows) */
  static const char *solve_src = "import tilelang.language as T\n"
                                 "n = T.dynamic('n')\n"
                                 "@T.prim_func\n"
                                 "def f(A: T.Tensor((n * 4 + 1, 2), 'float32'), B: T.Tensor((n * 4 + 1, 2), 'float32')):\n"
                                 "    with T.Kernel(n * 4 + 1, threads=32) as bx:\n"
                                 "        for j in T.Parallel(2):\n"
                                 "            B[bx, j] = A[bx, j] + 1.0\n";
  k = compile_src(solve_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  float a2[13 * 2], b2[13 * 2];
  for (int i = 0; i < 26; i++) a2[i] = (float)i, b2[i] = 0;
  int64_t s13[2] = {13, 2};
  tensor ta, tb;
  make_nd(&ta, a2, 2, s13);
  make_nd(&tb, b2, 2, s13);
  DLTensor *args2[2] = {&ta.t, &tb.t};
  EXPECT(tilec_kernel_launch(k, args2, 2, &err) == TILEC_OK);
  for (int i = 0; i < 26; i++) EXPECT(b2[i] == a2[i] + 1);
  ta.shape[0] = tb.shape[0] = 12; /* 12 = n * 4 + 1 has no integer n */
  tilec_error e3 = {0};
  EXPECT(tilec_kernel_launch(k, args2, 2, &e3) == TILEC_ERROR_USAGE);
  EXPECT(strstr(e3.message, "'n' is not the size of any tensor argument") != NULL);
  tilec_kernel_destroy(k);
}

TEST(reference_and_verification_can_fail) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(scale_src, NULL, 0, &err);
  CHECK(k != NULL);
  float *a = malloc(100 * 48 * 4), *b = malloc(100 * 48 * 4), *r = malloc(100 * 48 * 4);
  for (int i = 0; i < 100 * 48; i++) a[i] = sinf((float)i), b[i] = r[i] = 0;
  tensor ta, tb, tr;
  make_tensor(&ta, a, 100, 48);
  make_tensor(&tb, b, 100, 48);
  make_tensor(&tr, r, 100, 48);
  DLTensor *args[2] = {&ta.t, &tb.t}, *ref[2] = {&ta.t, &tr.t};
  EXPECT(tilec_kernel_launch(k, args, 2, &err) == TILEC_OK);
  EXPECT(tilec_kernel_run_reference(k, ref, 2, &err) == TILEC_OK);
  tilec_compare c;
  EXPECT(tilec_compare_tensors(&tb.t, &tr.t, &c, &err) == TILEC_OK);
  EXPECT(c.ok && c.max_abs_err == 0 && c.cosine > 0.999999 && c.argmax_match);
  b[1234] += 0.01f; /* one wrong element */
  EXPECT(tilec_compare_tensors(&tb.t, &tr.t, &c, &err) == TILEC_OK);
  EXPECT(!c.ok && fabs(c.max_abs_err - 0.01) < 1e-3);
  b[1234] = NAN;
  EXPECT(tilec_compare_tensors(&tb.t, &tr.t, &c, &err) == TILEC_OK);
  EXPECT(!c.ok && c.nan_mismatch == 1);
  free(a);
  free(b);
  free(r);
  tilec_kernel_destroy(k);
}


/* T.annotate_layout on a global tensor rearranges its memory, as TileLang's lowering does:
 * logical B[i, j] lives at the row-major offset of the layout's result. B is written through a
 * tile copy and C element by element; the large layout (over more than 65536 elements) is the
 * shape of the flash-attention backward dQ layout and is sized by interval arithmetic. */
static const char *global_layout_src =
    "import tilelang.language as T\n"
    "def relayout(M=64, N=32, block=16):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, N), 'float32'), B: T.Tensor((M, N), 'float32'), C: T.Tensor((M, N), 'float32')):\n"
    "        with T.Kernel(M // block, threads=32) as bx:\n"
    "            T.annotate_layout({B: T.Layout(B.shape, lambda i, j: [j // 8, i // 8, j % 8, i % 8]),\n"
    "                               C: T.Layout((M, N), lambda i, j: [j, i])})\n"
    "            S = T.alloc_shared((block, N), 'float32')\n"
    "            T.copy(A[bx * block, 0], S)\n"
    "            T.copy(S, B[bx * block, 0])\n"
    "            for i, j in T.Parallel(block, N):\n"
    "                C[bx * block + i, j] = S[i, j] + 1.0\n"
    "    return main\n";

static int check_relayout(int64_t M, int64_t N) {
  tilec_error err = {0};
  char ms[24], ns[24];
  snprintf(ms, sizeof ms, "%lld", (long long)M);
  snprintf(ns, sizeof ns, "%lld", (long long)N);
  tilec_define defs[2] = {{"M", ms}, {"N", ns}};
  tilec_kernel *k = compile_src(global_layout_src, defs, 2, &err);
  if (!k) printf("%s", err.rendered);
  if (!k) return -1;
  size_t n = (size_t)(M * N);
  float *a = malloc(n * 4), *b = calloc(n, 4), *c = calloc(n, 4), *rb = calloc(n, 4), *rc = calloc(n, 4);
  for (size_t i = 0; i < n; i++) a[i] = (float)i;
  tensor ta, tb, tc, trb, trc;
  make_tensor(&ta, a, M, N);
  make_tensor(&tb, b, M, N);
  make_tensor(&tc, c, M, N);
  make_tensor(&trb, rb, M, N);
  make_tensor(&trc, rc, M, N);
  DLTensor *args[3] = {&ta.t, &tb.t, &tc.t}, *ref[3] = {&ta.t, &trb.t, &trc.t};
  int bad = 0;
  if (tilec_kernel_launch(k, args, 3, &err) != TILEC_OK || tilec_kernel_run_reference(k, ref, 3, &err) != TILEC_OK) {
    printf("%s", err.rendered);
    bad = -1;
  }
  for (int64_t i = 0; bad >= 0 && i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      int64_t ob = (((j / 8) * (M / 8) + i / 8) * 8 + j % 8) * 8 + i % 8, oc = j * M + i;
      float want = a[i * N + j];
      bad += b[ob] != want || rb[ob] != want || c[oc] != want + 1 || rc[oc] != want + 1;
    }
  free(a), free(b), free(c), free(rb), free(rc);
  tilec_kernel_destroy(k);
  return bad;
}

TEST(global_layouts_rearrange_memory) {
  CHECK_INT(check_relayout(64, 32), 0);
  CHECK_INT(check_relayout(512, 256), 0); /* 131072 elements: not enumerated */
}


/* Explicit warp specialization: warp group 1 produces chunks of A into a two-stage ring of
 * shared tiles, warp group 0 sums them; full/empty barriers order the two. The cpu reference
 * runs it in program order, where every wait finds its phase completed. */
static const char *ws_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def ring(A: T.Tensor((256, 64), 'float32'), Out: T.Tensor((32, 64), 'float32')):\n"
    "    with T.Kernel(1, threads=256) as bx:\n"
    "        S = T.alloc_shared((2, 32, 64), 'float32')\n"
    "        acc = T.alloc_fragment((32, 64), 'float32')\n"
    "        bars = T.alloc_barrier([128, 128, 128, 128])  # full[0], full[1], empty[0], empty[1]\n"
    "        with T.ws(0):\n"
    "            T.clear(acc)\n"
    "        for k in T.serial(8):\n"
    "            with T.ws(1):\n"
    "                T.mbarrier_wait_parity(bars[k % 2 + 2], (k // 2) % 2 ^ 1)\n"
    "                T.tma_copy(A[k * 32:(k + 1) * 32, :], S[k % 2, :, :], barrier=bars[k % 2])\n"
    "                T.barrier_arrive(bars[k % 2])\n"
    "            with T.ws(0):\n"
    "                T.barrier_wait(bars[k % 2], (k // 2) % 2)\n"
    "                for i, j in T.Parallel(32, 64):\n"
    "                    acc[i, j] += S[k % 2, i, j]\n"
    "                T.mbarrier_arrive(mbarrier=bars[k % 2 + 2])\n"
    "        with T.ws(0):\n"
    "            T.copy(acc, Out)\n";

TEST(warp_specialized_ring_runs_in_program_order) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(ws_src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  float *a = malloc(256 * 64 * 4), *o = calloc(32 * 64, 4), *r = calloc(32 * 64, 4);
  for (int i = 0; i < 256 * 64; i++) a[i] = (float)(i % 7) - 3.0f + (float)(i / 2048);
  tensor ta, to, tr;
  make_tensor(&ta, a, 256, 64);
  make_tensor(&to, o, 32, 64);
  make_tensor(&tr, r, 32, 64);
  DLTensor *args[2] = {&ta.t, &to.t}, *ref[2] = {&ta.t, &tr.t};
  EXPECT(tilec_kernel_launch(k, args, 2, &err) == TILEC_OK);
  EXPECT(tilec_kernel_run_reference(k, ref, 2, &err) == TILEC_OK);
  int bad = 0;
  for (int i = 0; i < 32 * 64; i++) {
    float want = 0;
    for (int c = 0; c < 8; c++) want += a[c * 32 * 64 + i];
    bad += o[i] != want || r[i] != want;
  }
  free(a), free(o), free(r);
  tilec_kernel_destroy(k);
  CHECK_INT(bad, 0);
}

/* Whether `tilec backends` reports target/backend as available on this machine: the line
 * "cuda    nvrtc     yes      yes        -" has the columns target, backend, default, available. */
static bool backend_available(const char *target, const char *backend) {
  char *r = tilec_backends_report(ctx);
  bool yes = false;
  for (char *line = r; line && *line;) {
    char t[32], b[32], def[8], avail[8];
    if (sscanf(line, "%31s %31s %7s %7s", t, b, def, avail) == 4 && strcmp(t, target) == 0 &&
        strcmp(b, backend) == 0)
      yes = strcmp(avail, "yes") == 0;
    char *nl = strchr(line, '\n');
    line = nl ? nl + 1 : NULL;
  }
  tilec_free(r);
  return yes;
}

TEST(defines_and_errors_as_values) {
  tilec_error err = {0};
  tilec_define d[] = {{"M", "64"}, {"alpha", "3.0"}};
  tilec_kernel *k = compile_src(scale_src, d, 2, &err);
  CHECK(k != NULL);
  tilec_param_info pi;
  tilec_kernel_param(k, 0, &pi);
  CHECK_INT(pi.shape[0], 64);
  tilec_kernel_destroy(k);
  tilec_error e = {0};
  tilec_define bad[] = {{"blok_M", "64"}};
  EXPECT(compile_src(scale_src, bad, 1, &e) == NULL);
  EXPECT(e.status == TILEC_ERROR_USAGE);
  tilec_error e2 = {0};
  const char *broken = "import tilelang.language as T\ndef f(:\n    pass\n";
  EXPECT(tilec_program_from_string(ctx, "broken.py", broken, strlen(broken), &e2) == NULL);
  EXPECT(e2.status == TILEC_ERROR_PROGRAM && e2.line == 2 && strcmp(e2.file, "broken.py") == 0);
  tilec_error e3 = {0};
  EXPECT(tilec_program_from_file(ctx, "/nonexistent/x.py", &e3) == NULL && e3.status == TILEC_ERROR_IO);
  tilec_error e4 = {0};
  tilec_compile_options o = {0};
  o.target = "quantum";
  tilec_program *p = tilec_program_from_string(ctx, "t.py", scale_src, strlen(scale_src), &e4);
  CHECK(p != NULL);
  EXPECT(tilec_compile(p, &o, &e4) == NULL && e4.status == TILEC_ERROR_USAGE);
  EXPECT(strstr(e4.message, "unknown target 'quantum'") != NULL);
  /* cuda compiles where its default backend is available (a machine with the NVIDIA driver)
   * and is a target error elsewhere; tilec's own report says which kind of machine this is. */
  tilec_error e5 = {0};
  o.target = "cuda";
  tilec_kernel *kc = tilec_compile(p, &o, &e5);
  if (backend_available("cuda", "nvrtc")) {
    if (!kc) printf("  %s", e5.rendered);
    EXPECT(kc && strcmp(tilec_kernel_target(kc), "cuda") == 0 && strcmp(tilec_kernel_backend(kc), "nvrtc") == 0);
  } else {
    EXPECT(kc == NULL && e5.status == TILEC_ERROR_TARGET && strstr(e5.message, "'nvrtc' of target 'cuda'"));
  }
  tilec_kernel_destroy(kc);
#ifndef __APPLE__
  tilec_error e5m = {0};
  o.target = "metal";
  o.backend = "metal"; /* the device backend: off macOS the simulated device, when a C++ compiler is */
  tilec_kernel *km = tilec_compile(p, &o, &e5m);
  if (backend_available("metal", "metal")) EXPECT(km && strcmp(tilec_kernel_backend(km), "metal") == 0);
  else EXPECT(km == NULL && e5m.status == TILEC_ERROR_TARGET);
  tilec_kernel_destroy(km);
  o.backend = NULL;
#endif
  tilec_error e6 = {0};
  o.target = "cpu";
  o.backend = "nvcc";
  EXPECT(tilec_compile(p, &o, &e6) == NULL && e6.status == TILEC_ERROR_USAGE);
  tilec_program_destroy(p);
}

/* Stores to float8 saturate to the largest finite value on the target and in the reference,
 * as TileLang's CUDA conversions do (docs/dtypes.md). */
TEST(fp8_stores_saturate) {
  static const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def sat(A: T.Tensor((8,), 'float32'), B: T.Tensor((8,), 'float8_e4m3fn')):\n"
      "    with T.Kernel(1, threads=8) as bx:\n"
      "        for i in T.Parallel(8):\n"
      "            B[i] = A[i] * 1000.0\n";
  tilec_error err = {0};
  tilec_kernel *k = compile_src(src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  float a[8] = {1, -1, 0.448f, 0.1f, 5, -0.0005f, 0.3f, -2};
  uint8_t b[8] = {0}, r[8] = {0};
  tensor ta;
  make_tensor(&ta, a, 8, 1);
  ta.t.ndim = 1;
  /* float8_e4m3fn travels as (kDLFloat8_e4m3fn, 8) where the DLPack header has that code
   * (1.1 and later, as torch's) and as (kDLUInt, 8) where it has none (Debian's 0.6). */
  tilec_param_info pi;
  CHECK(tilec_kernel_param(k, 1, &pi) == 0);
  DLDataType b_dtype = pi.dl_dtype.code == 255 ? (DLDataType){kDLUInt, 8, 1} : pi.dl_dtype;
  CHECK(b_dtype.bits == 8 && b_dtype.lanes == 1);
  DLTensor tb = {b, {kDLCPU, 0}, 1, b_dtype, ta.shape, NULL, 0};
  DLTensor tr = {r, {kDLCPU, 0}, 1, b_dtype, ta.shape, NULL, 0};
  DLTensor *args[2] = {&ta.t, &tb}, *ref[2] = {&ta.t, &tr};
  EXPECT(tilec_kernel_launch(k, args, 2, &err) == TILEC_OK);
  EXPECT(tilec_kernel_run_reference(k, ref, 2, &err) == TILEC_OK);
  EXPECT(b[0] == 0x7E && b[1] == 0xFE && b[4] == 0x7E && b[7] == 0xFE); /* +-448, not NaN */
  EXPECT(b[2] == 0x7E);                                                    /* 448 exactly */
  EXPECT(memcmp(b, r, 8) == 0);
  tilec_kernel_destroy(k);
}

/* Scalar parameters travel as 0-d tensors of their dtype. */
TEST(scalar_parameters) {
  static const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def axpy(A: T.Tensor((40,), 'float32'), B: T.Tensor((40,), 'float32'), alpha: T.float32, n: T.int32):\n"
      "    with T.Kernel(2, threads=32) as bx:\n"
      "        for i in T.Parallel(20):\n"
      "            if bx * 20 + i < n:\n"
      "                B[bx * 20 + i] = A[bx * 20 + i] * alpha + B[bx * 20 + i]\n";
  tilec_error err = {0};
  tilec_kernel *k = compile_src(src, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  tilec_param_info pi;
  CHECK(tilec_kernel_param(k, 3, &pi) == 0);
  CHECK_STR(pi.name, "n");
  CHECK_INT(pi.ndim, 0);
  float a[40], b[40];
  for (int i = 0; i < 40; i++) a[i] = (float)i, b[i] = 1;
  float alpha = 0.5f;
  int32_t n = 33;
  int64_t shape[1] = {40};
  DLTensor ta = {a, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor tb = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor tal = {&alpha, {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, NULL, NULL, 0};
  DLTensor tn = {&n, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, NULL, NULL, 0};
  DLTensor *args[4] = {&ta, &tb, &tal, &tn};
  EXPECT(tilec_kernel_launch(k, args, 4, &err) == TILEC_OK);
  for (int i = 0; i < 40; i++) EXPECT(b[i] == (i < 33 ? (float)i * 0.5f + 1 : 1.0f));
  DLTensor wrong = tn;
  wrong.dtype.bits = 64;
  DLTensor *bad[4] = {&ta, &tb, &tal, &wrong};
  tilec_error e = {0};
  EXPECT(tilec_kernel_launch(k, bad, 4, &e) == TILEC_ERROR_USAGE && strstr(e.message, "'n' has dtype int64, expected int32"));
  tilec_kernel_destroy(k);
}

typedef struct thread_arg {
  int ok;
} thread_arg;

static void *compile_and_run(void *p) {
  thread_arg *ta = p;
  tilec_error err = {0};
  tilec_kernel *k = compile_src(scale_src, NULL, 0, &err);
  if (!k) return NULL;
  float *a = malloc(100 * 48 * 4), *b = malloc(100 * 48 * 4);
  for (int i = 0; i < 100 * 48; i++) a[i] = (float)i;
  tensor x, y;
  make_tensor(&x, a, 100, 48);
  make_tensor(&y, b, 100, 48);
  DLTensor *args[2] = {&x.t, &y.t};
  int ok = 1;
  for (int rep = 0; rep < 5; rep++) {
    ok &= tilec_kernel_launch(k, args, 2, &err) == TILEC_OK;
    for (int i = 0; i < 100 * 48; i++) ok &= b[i] == a[i] * 2 + 1;
  }
  ta->ok = ok;
  free(a);
  free(b);
  tilec_kernel_destroy(k);
  return NULL;
}

TEST(threads_share_a_context) {
  pthread_t th[4];
  thread_arg args[4] = {{0}};
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, compile_and_run, &args[i]);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) CHECK(args[i].ok);
}

/* The same with the disk cache on: threads race to compile, store and load one kernel. */
TEST(threads_share_a_context_with_disk_cache) {
  char dir[] = "/tmp/tilec-test-api-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  tilec_error err = {0};
  tilec_context_options o = {0};
  o.cache_dir = dir;
  tilec_context *saved = ctx;
  ctx = tilec_context_create(&o, &err);
  CHECK(ctx != NULL);
  pthread_t th[4];
  thread_arg args[4] = {{0}};
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, compile_and_run, &args[i]);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  tilec_error e2 = {0};
  tilec_kernel *k = compile_src(scale_src, NULL, 0, &e2);
  EXPECT(k && strcmp(tilec_kernel_cache_status(k), "hit") == 0);
  tilec_kernel_destroy(k);
  tilec_context_destroy(ctx);
  ctx = saved;
  size_t removed = 0;
  tilec_context_options o2 = {0};
  o2.cache_dir = dir;
  tilec_context *c2 = tilec_context_create(&o2, &err);
  EXPECT(tilec_cache_clear(c2, &removed, &err) == TILEC_OK && removed == 1);
  tilec_context_destroy(c2);
  rmdir(dir);
  for (int i = 0; i < 4; i++) CHECK(args[i].ok);
}

/* GEMM flops are counted per block: a loop bound that depends on the block index (a causal
 * attention's) counts the iterations each block runs (issue 10: --bench had no FLOP/s). */
static const char *triangular_src =
    "import tilelang\nimport tilelang.language as T\n"
    "def k(M=256):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, 64), 'float32'), B: T.Tensor((64, 64), 'float32'), C: T.Tensor((M, 64), 'float32')):\n"
    "        with T.Kernel(M // 64, threads=128) as bx:\n"
    "            As = T.alloc_shared((64, 64), 'float32')\n"
    "            Bs = T.alloc_shared((64, 64), 'float32')\n"
    "            Cl = T.alloc_fragment((64, 64), 'float32')\n"
    "            T.clear(Cl)\n"
    "            n = T.min(bx + 1, 8)\n"
    "            for k in T.Pipelined(n, num_stages=1):\n"
    "                T.copy(A[bx * 64, 0], As)\n"
    "                T.copy(B[0, 0], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[bx * 64, 0])\n"
    "    return main\n";

TEST(flops_follow_block_dependent_loops) {
  tilec_error err = {0};
  tilec_kernel *k = compile_src(triangular_src, NULL, 0, &err);
  if (!k) printf("  %s", err.rendered);
  CHECK(k != NULL);
  tensor a, b, c;
  make_tensor(&a, NULL, 256, 64);
  make_tensor(&b, NULL, 64, 64);
  make_tensor(&c, NULL, 256, 64);
  DLTensor *args[3] = {&a.t, &b.t, &c.t};
  double want = 2.0 * 64 * 64 * 64 * (1 + 2 + 3 + 4);
  double got = tilec_kernel_flops(k, args, 3);
  if (got != want) printf("  flops %.0f, expected %.0f\n", got, want);
  EXPECT(got == want);
  tilec_kernel_destroy(k);
}

/* What a TileLang caller gets back: out_idx (negative counted from the end), an eager function's
 * T.empty tensors, or nothing; `tilec` stands for tilelang in the program text. */
TEST(kernel_returns) {
  static const char *factory =
      "import tilec\nimport tilec.language as T\n"
      "@tilec.jit(out_idx=[-1, 1])\n"
      "def f(N=64):\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32'), C: T.Tensor((N,), 'float32')):\n"
      "        with T.Kernel(1, threads=32) as bx:\n"
      "            for i in T.Parallel(N):\n"
      "                B[i] = A[i]\n"
      "                C[i] = A[i]\n"
      "    return main\n";
  static const char *eager =
      "import tilec as tl\nimport tilec.language as T\n"
      "@tl.jit\n"
      "def g(A, B):\n"
      "    N = T.const('N')\n"
      "    A: T.Tensor((N,), 'float32')\n"
      "    B: T.Tensor((N,), 'float32')\n"
      "    X = T.empty((N,), 'float32')\n"
      "    Y = T.empty((N,), 'float32')\n"
      "    with T.Kernel(1, threads=32) as bx:\n"
      "        for i in T.Parallel(N):\n"
      "            X[i] = A[i]\n"
      "            Y[i] = B[i]\n"
      "    return Y, X\n";
  static const char *plain =
      "import tilelang.language as T\n@T.prim_func\n"
      "def h(A: T.Tensor((8,), 'float32')):\n    with T.Kernel(1, threads=8) as bx:\n"
      "        for i in T.Parallel(8):\n            A[i] = A[i] * 2.0\n";
  tilec_error err = {0};
  tilec_kernel *k = compile_src(factory, NULL, 0, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  size_t idx[4] = {9, 9, 9, 9};
  EXPECT(tilec_kernel_returns(k, idx, 4) == 2 && idx[0] == 2 && idx[1] == 1 && idx[2] == 9);
  EXPECT(tilec_kernel_returns(k, idx, 1) == 2);
  EXPECT(tilec_kernel_returns(k, NULL, 0) == 2);
  tilec_kernel_destroy(k);
  tilec_define d = {"N", "16"};
  k = compile_src(eager, &d, 1, &err);
  if (!k) printf("%s", err.rendered);
  CHECK(k != NULL);
  CHECK_INT((int)tilec_kernel_num_params(k), 4); /* A, B, X, Y */
  EXPECT(tilec_kernel_returns(k, idx, 4) == 2 && idx[0] == 3 && idx[1] == 2); /* return Y, X */
  tilec_kernel_destroy(k);
  k = compile_src(plain, NULL, 0, &err);
  CHECK(k != NULL);
  EXPECT(tilec_kernel_returns(k, idx, 4) == 0);
  tilec_kernel_destroy(k);
  EXPECT(tilec_kernel_returns(NULL, idx, 4) == 0);
}

/* The registry as the API lists it, and device memory through the cpu backend's hooks. */
TEST(backends_and_device_memory) {
  size_t n = tilec_backend_count();
  CHECK(n >= 3);
  int cpu_default = 0, cuda = 0, cuda_usable = 0;
  tilec_backend_info bi;
  for (size_t i = 0; i < n; i++) {
    CHECK(tilec_backend_get(ctx, i, &bi) == 0);
    EXPECT(bi.available || bi.reason[0]);
    EXPECT(!bi.available || !bi.reason[0]);
    if (strcmp(bi.target, "cpu") == 0 && bi.is_default) {
      cpu_default = 1;
      EXPECT(bi.available && bi.has_memory && bi.device_type == kDLCPU);
    }
    if (strcmp(bi.target, "cuda") == 0) {
      cuda = 1;
      if (bi.is_default) cuda_usable = bi.available;
      /* the emulator, like metal's, runs on host tensors */
      EXPECT(strcmp(bi.name, "emu") == 0 ? bi.device_type == kDLCPU && bi.has_memory && !bi.is_default
                                         : bi.device_type == kDLCUDA && bi.has_memory);
    }
    /* metal's emulator runs on host tensors (host memory); a Metal device takes id<MTLBuffer>s */
    if (strcmp(bi.target, "metal") == 0)
      EXPECT(strcmp(bi.name, "emu") == 0 ? bi.device_type == kDLCPU && bi.has_memory : bi.device_type == kDLMetal);
  }
  EXPECT(cpu_default && cuda);
  EXPECT(tilec_backend_get(ctx, n, &bi) != 0);
  tilec_error err = {0};
  float host[5] = {1, 2, 3, 4, 5}, back[5] = {0};
  float *p = tilec_device_alloc(ctx, "cpu", 0, sizeof host, &err);
  CHECK(p != NULL);
  EXPECT(((uintptr_t)p & 63) == 0);
  EXPECT(tilec_device_copy(ctx, "cpu", 0, p, host, sizeof host, TILEC_COPY_HOST_TO_DEVICE, &err) == TILEC_OK);
  EXPECT(tilec_device_copy(ctx, "auto", 0, back, p, sizeof back, TILEC_COPY_DEVICE_TO_HOST, &err) == TILEC_OK);
  EXPECT(memcmp(host, back, sizeof host) == 0);
  tilec_error d1 = {0}, d2 = {0};
  EXPECT(tilec_device_copy(ctx, "cpu", 0, back, p, 4, 7, &d1) == TILEC_ERROR_USAGE && strstr(d1.message, "direction"));
  EXPECT(tilec_device_copy(ctx, "cpu", 0, NULL, p, 4, TILEC_COPY_DEVICE_TO_HOST, &d2) == TILEC_ERROR_USAGE);
  tilec_device_free(ctx, "cpu", 0, p);
  tilec_device_free(ctx, "cpu", 0, NULL);
  void *z = tilec_device_alloc(ctx, "cpu", 0, 0, &err);
  EXPECT(z != NULL);
  tilec_device_free(ctx, "cpu", 0, z);
  tilec_error e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
  EXPECT(tilec_device_alloc(ctx, "cpu", 1, 16, &e1) == NULL && e1.status == TILEC_ERROR_USAGE);
  EXPECT(tilec_device_alloc(ctx, "tpu", 0, 16, &e2) == NULL && e2.status == TILEC_ERROR_USAGE);
  /* a target whose default backend cannot hold tensors here is a target error: cuda without a
   * GPU; with one, its memory is real device memory */
  void *c = tilec_device_alloc(ctx, "cuda", 0, 16, &e3);
  if (cuda_usable) EXPECT(c != NULL);
  else EXPECT(c == NULL && e3.status == TILEC_ERROR_TARGET);
  tilec_device_free(ctx, "cuda", 0, c);
  EXPECT(tilec_device_alloc(NULL, "cpu", 0, 16, &e4) == NULL && e4.status == TILEC_ERROR_USAGE);
}

int main(void) {
  tilec_error err = {0};
  tilec_context_options o = {0};
  o.flags = TILEC_CONTEXT_NO_DISK_CACHE;
  ctx = tilec_context_create(&o, &err);
  if (!ctx) {
    printf("FAIL context: %s", err.rendered);
    return 1;
  }
  RUN(flops_follow_block_dependent_loops);
  RUN(compile_query_launch);
  RUN(bad_arguments_write_nothing);
  RUN(symbolic_dims_bound_from_tensors);
  RUN(param_shapes_from_symbolic_sizes);
  RUN(reference_and_verification_can_fail);
  RUN(global_layouts_rearrange_memory);
  RUN(warp_specialized_ring_runs_in_program_order);
  RUN(defines_and_errors_as_values);
  RUN(fp8_stores_saturate);
  RUN(scalar_parameters);
  RUN(threads_share_a_context);
  RUN(threads_share_a_context_with_disk_cache);
  RUN(kernel_returns);
  RUN(outputs_rounded_through_a_narrower_float);
  RUN(outputs_ordered_by_the_schedule);
  RUN(backends_and_device_memory);
  tilec_context_destroy(ctx);
  TEST_MAIN_END();
}
