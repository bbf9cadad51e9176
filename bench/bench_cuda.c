/* bench_cuda.c: tilec's cuda kernels beside a peer in the same process, through the public API.
 *   GEMM f16/bf16 at 4096^3 and 8192^3 (examples/gemm.py)   vs cuBLAS cublasGemmEx (dlopen);
 *     2048^3 and M x 8192 x 8192 (M = 1, 16, 128) when the filter names a size ("gemm float16 16x")
 *   GEMM fp8 e4m3 -> bf16 at 4096^3 and 8192^3 (examples/gemm_fp8.py, B as (N, K))
 *                                                           vs cuBLASLt's fp8 cublasLtMatmul (dlopen),
 *     with and without its fast accumulation (tilec's wgmma accumulates as fast accumulation does)
 *   rms_norm, softmax, fp8_cast (memory-bound examples)     vs device copy bandwidth (cuMemcpyDtoD)
 *   flash attention fwd fp16, bf16 B=8 H=16 S=4096 D=128    (peer: bench/attention_peer.py, torch)
 * Each figure is the median of timed runs (CUDA events) after warm-up, with the L2 cache flushed
 * (a memset of twice its size) before every run. Without a CUDA device it says so and exits 0.
 *   build/bench/bench_cuda [filter [KEY=VALUE ...]]
 *     runs only the cases whose name contains `filter`; KEY=VALUE bind the GEMM example's
 *     parameters (block_M=128 block_N=256 block_K=64 threads=256 num_stages=3);
 *     target=STRING compiles every tilec kernel for that target (e.g. target=cuda,clusters=on);
 *     file=PATH and fa_file=PATH replace examples/gemm.py and examples/flash_attention.py (a variant of the
 *     same kernel, e.g. with different pass_configs); fa.KEY=VALUE binds (or rebinds) a parameter
 *     of the attention kernel, e.g. fa.block_N=128; f8.KEY=VALUE likewise for the fp8 GEMM
 *     (defaults block_M=128 block_N=256 block_K=128 threads=256 num_stages=4), e.g. f8.num_stages=3 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "target/cuda/driver.h"
#include "tilec.h"

#define RUNS 30
static const tc_cu_api *cu;
static tc_cu_stream stream;
static tc_cu_event ev0, ev1;
static tc_cu_devptr flush_buf;
static size_t flush_bytes;
static int failures;
static const char *gemm_extra[16]; /* KEY=VALUE bindings for the GEMM example from the command line */
static int ngemm_extra;
static const char *fa_extra[8]; /* KEY=VALUE from fa.KEY=VALUE: the attention kernel's parameters */
static int nfa_extra;
static const char *f8_extra[8]; /* KEY=VALUE from f8.KEY=VALUE: the fp8 GEMM's parameters */
static int nf8_extra;
static const char *gemm_file = "examples/gemm.py", *fa_file = "examples/flash_attention.py";
static const char *target = "cuda"; /* target=STRING: e.g. cuda,clusters=on */

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool ck(tc_cu_result r, const char *what) {
  if (r == TC_CU_SUCCESS) return true;
  char d[200];
  tc_cu_describe(cu, r, d, sizeof d);
  printf("  %s failed: %s\n", what, d);
  failures++;
  return false;
}

/* Median ms of `run` (called with `arg`), L2 flushed before each timed run. */
typedef bool (*run_fn)(void *arg);
static double time_median(run_fn run, void *arg) {
  for (int w = 0; w < 3; w++)
    if (!run(arg)) return -1;
  if (!ck(cu->StreamSynchronize(stream), "warm-up")) return -1;
  double t[RUNS];
  for (int i = 0; i < RUNS; i++) {
    float ms = 0;
    if (!ck(cu->MemsetD8Async(flush_buf, (unsigned char)i, flush_bytes, stream), "L2 flush") ||
        !ck(cu->EventRecord(ev0, stream), "cuEventRecord") || !run(arg) ||
        !ck(cu->EventRecord(ev1, stream), "cuEventRecord") || !ck(cu->EventSynchronize(ev1), "cuEventSynchronize") ||
        !ck(cu->EventElapsedTime(&ms, ev0, ev1), "cuEventElapsedTime"))
      return -1;
    t[i] = ms;
  }
  qsort(t, RUNS, sizeof *t, cmp_d);
  return t[RUNS / 2];
}

/* ---- a tilec kernel with device tensors of seeded values ---- */
typedef struct tk {
  tilec_kernel *k;
  size_t n;
  DLTensor t[8];
  int64_t shape[8][4];
  tc_cu_devptr dev[8];
  double flops, bytes;
} tk;

static bool tk_run(void *arg) {
  tk *x = arg;
  DLTensor *a[8];
  for (size_t i = 0; i < x->n; i++) a[i] = &x->t[i];
  tilec_error err = {0};
  if (tilec_kernel_launch_stream(x->k, a, x->n, stream, &err) != TILEC_OK) {
    printf("  launch: %s", err.rendered);
    failures++;
    return false;
  }
  return true;
}

static bool tk_make(tilec_context *ctx, const char *file, const char *const *defs, tk *x) {
  memset(x, 0, sizeof *x);
  tilec_define d[16];
  char names[16][64];
  size_t nd = 0;
  for (; defs[nd] && nd < 16; nd++) {
    const char *eq = strchr(defs[nd], '=');
    snprintf(names[nd], sizeof names[nd], "%.*s", (int)(eq - defs[nd]), defs[nd]);
    d[nd].name = names[nd];
    d[nd].value = eq + 1;
  }
  tilec_error err = {0};
  tilec_program *p = tilec_program_from_file(ctx, file, &err);
  tilec_compile_options co = {.defines = d, .num_defines = nd, .target = target};
  x->k = p ? tilec_compile(p, &co, &err) : NULL;
  tilec_program_destroy(p); /* the kernel keeps what it needs */
  if (!x->k) {
    printf("  tilec: %s", err.rendered);
    failures++;
    return false;
  }
  x->n = tilec_kernel_num_params(x->k);
  DLTensor *a[8];
  for (size_t i = 0; i < x->n && i < 8; i++) {
    tilec_param_info pi;
    tilec_kernel_param(x->k, i, &pi);
    tc_dtype dt;
    tc_dtype_lookup(pi.dtype, &dt, NULL, 0);
    size_t numel = 1;
    for (int j = 0; j < pi.ndim; j++) {
      int64_t ext = pi.shape[j];
      /* a symbolic dimension (T.symbolic) takes its size from the define of the same name */
      for (int q = 0; ext < 0 && defs[q]; q++) {
        size_t len = strlen(pi.dims[j]);
        if (!strncmp(defs[q], pi.dims[j], len) && defs[q][len] == '=') ext = atoll(defs[q] + len + 1);
      }
      if (ext < 0) {
        printf("  tilec: no size for the symbolic dimension '%s' of %s\n", pi.dims[j], pi.name);
        failures++;
        return false;
      }
      x->shape[i][j] = ext;
      numel *= (size_t)ext;
    }
    size_t bytes = tc_dtype_storage_bytes(dt, numel);
    void *host = malloc(bytes ? bytes : 1);
    uint64_t s = 0x9e3779b97f4a7c15ull * (i + 1);
    for (size_t e = 0; host && e < numel; e++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      tc_dtype_store_f64(dt, host, e, ((double)(s >> 40) / (1 << 24) - 0.5) * 0.5);
    }
    x->t[i].ndim = pi.ndim;
    x->t[i].shape = x->shape[i];
    x->t[i].dtype = pi.dl_dtype.code == 255 ? (DLDataType){kDLUInt, 8, 1} : pi.dl_dtype;
    x->t[i].device.device_type = kDLCUDA;
    if (!host || !ck(cu->MemAlloc(&x->dev[i], bytes ? bytes : 1), "cuMemAlloc") ||
        !ck(cu->MemcpyHtoD(x->dev[i], host, bytes), "cuMemcpyHtoD")) {
      free(host);
      return false;
    }
    free(host);
    x->t[i].data = (void *)(uintptr_t)x->dev[i];
    a[i] = &x->t[i];
  }
  x->flops = tilec_kernel_flops(x->k, a, x->n);
  x->bytes = tilec_kernel_bytes(x->k, a, x->n);
  return true;
}

static void tk_free(tk *x) {
  for (size_t i = 0; i < 8; i++)
    if (x->dev[i]) cu->MemFree(x->dev[i]);
  tilec_kernel_destroy(x->k);
}

/* ---- cuBLAS through dlopen ---- */
typedef int (*cublas_create_fn)(void **h);
typedef int (*cublas_set_stream_fn)(void *h, tc_cu_stream s);
typedef int (*cublas_gemm_ex_fn)(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
                                 int at, int lda, const void *B, int bt, int ldb, const void *beta, void *C, int ct,
                                 int ldc, int compute, int algo);
static void *cublas;
static cublas_gemm_ex_fn gemm_ex;
enum { CUDA_R_16F = 2, CUDA_R_16BF = 14, CUBLAS_COMPUTE_32F = 68, CUBLAS_GEMM_DEFAULT = -1 };

static bool cublas_open(void) {
  static const char *const names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                      "/usr/local/cuda/lib64/libcublas.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  cublas_create_fn create = (cublas_create_fn)dlsym(lib, "cublasCreate_v2");
  cublas_set_stream_fn set_stream = (cublas_set_stream_fn)dlsym(lib, "cublasSetStream_v2");
  gemm_ex = (cublas_gemm_ex_fn)dlsym(lib, "cublasGemmEx");
  if (!create || !set_stream || !gemm_ex || create(&cublas) != 0 || set_stream(cublas, stream) != 0) return false;
  return true;
}

typedef struct blas_case {
  int m, n, k, type;
  tc_cu_devptr a, b, c;
} blas_case;

static bool blas_run(void *arg) {
  blas_case *g = arg;
  float one = 1, zero = 0;
  /* row-major C = A B is column-major C^T = B^T A^T */
  int st = gemm_ex(cublas, 0, 0, g->n, g->m, g->k, &one, (void *)(uintptr_t)g->b, g->type, g->n,
                   (void *)(uintptr_t)g->a, g->type, g->k, &zero, (void *)(uintptr_t)g->c, g->type, g->n,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != 0) {
    printf("  cublasGemmEx failed: status %d\n", st);
    failures++;
  }
  return st == 0;
}

/* ---- cuBLASLt's fp8 matmul through dlopen (types and values from cublasLt.h, library_types.h) ---- */
typedef struct { uint64_t data[8]; } lt_algo;
typedef struct {
  lt_algo algo;
  size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
} lt_heuristic;
enum {
  CUDA_R_32F = 0, CUDA_R_8F_E4M3 = 28, CUBLAS_OP_N = 0, CUBLAS_OP_T = 1,
  LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4, LT_DESC_FAST_ACCUM = 25, LT_PREF_MAX_WORKSPACE_BYTES = 1
};
static struct {
  void *h;
  int (*create)(void **h);
  int (*desc_create)(void **d, int compute, int scale_type);
  int (*desc_set)(void *d, int attr, const void *buf, size_t size);
  int (*desc_destroy)(void *d);
  int (*layout_create)(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld);
  int (*layout_destroy)(void *l);
  int (*pref_create)(void **p);
  int (*pref_set)(void *p, int attr, const void *buf, size_t size);
  int (*pref_destroy)(void *p);
  int (*heuristic)(void *h, void *desc, void *a, void *b, void *c, void *d, void *pref, int n, lt_heuristic *out, int *got);
  int (*matmul)(void *h, void *desc, const void *alpha, const void *A, void *ad, const void *B, void *bd, const void *beta,
                const void *C, void *cd, void *D, void *dd, const lt_algo *algo, void *ws, size_t ws_size, tc_cu_stream s);
} lt;
enum { LT_WORKSPACE = 32 << 20 };
static tc_cu_devptr lt_ws;

static bool cublaslt_open(void) {
  static const char *const names[] = {"libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12",
                                      "/usr/local/cuda/lib64/libcublasLt.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
#define LT_SYM(f, name) (*(void **)&lt.f = dlsym(lib, name)) != NULL
  bool all = LT_SYM(create, "cublasLtCreate") && LT_SYM(desc_create, "cublasLtMatmulDescCreate") &&
             LT_SYM(desc_set, "cublasLtMatmulDescSetAttribute") && LT_SYM(desc_destroy, "cublasLtMatmulDescDestroy") &&
             LT_SYM(layout_create, "cublasLtMatrixLayoutCreate") && LT_SYM(layout_destroy, "cublasLtMatrixLayoutDestroy") &&
             LT_SYM(pref_create, "cublasLtMatmulPreferenceCreate") && LT_SYM(pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
             LT_SYM(pref_destroy, "cublasLtMatmulPreferenceDestroy") && LT_SYM(heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
             LT_SYM(matmul, "cublasLtMatmul");
#undef LT_SYM
  return all && lt.create(&lt.h) == 0 && ck(cu->MemAlloc(&lt_ws, LT_WORKSPACE), "cuMemAlloc (cuBLASLt workspace)");
}

/* One fp8 problem for cuBLASLt: row-major C (M x N, bf16) = A (M x K) B^T with B stored N x K,
 * the same bytes tilec's kernel reads. Column-major, that is C^T (N x M) = op_T(B') op_N(A'),
 * B' the K x N matrix of B's bytes and A' the K x M matrix of A's: the "TN" form, the only one
 * cuBLASLt takes for fp8 on Hopper. */
typedef struct lt_case {
  void *desc, *la, *lb, *lc;
  lt_algo algo;
  tc_cu_devptr a, b, c;
} lt_case;

static bool lt_setup(lt_case *g, int M, int N, int K, bool fast) {
  int ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  int8_t fa = fast ? 1 : 0;
  uint64_t ws = LT_WORKSPACE;
  void *pref = NULL;
  lt_heuristic res;
  int got = 0, st;
  memset(&res, 0, sizeof res);
  if ((st = lt.desc_create(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F)) || (st = lt.desc_set(g->desc, LT_DESC_TRANSA, &ta, sizeof ta)) ||
      (st = lt.desc_set(g->desc, LT_DESC_TRANSB, &tb, sizeof tb)) || (st = lt.desc_set(g->desc, LT_DESC_FAST_ACCUM, &fa, sizeof fa)) ||
      (st = lt.layout_create(&g->la, CUDA_R_8F_E4M3, (uint64_t)K, (uint64_t)N, K)) ||
      (st = lt.layout_create(&g->lb, CUDA_R_8F_E4M3, (uint64_t)K, (uint64_t)M, K)) ||
      (st = lt.layout_create(&g->lc, CUDA_R_16BF, (uint64_t)N, (uint64_t)M, N)) || (st = lt.pref_create(&pref)) ||
      (st = lt.pref_set(pref, LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
      (st = lt.heuristic(lt.h, g->desc, g->la, g->lb, g->lc, g->lc, pref, 1, &res, &got)) || got < 1) {
    printf("  cuBLASLt fp8 setup failed: status %d (%d algorithms)\n", st, got);
    failures++;
    if (pref) lt.pref_destroy(pref);
    return false;
  }
  lt.pref_destroy(pref);
  g->algo = res.algo;
  return true;
}

static void lt_teardown(lt_case *g) {
  if (g->lc) lt.layout_destroy(g->lc);
  if (g->lb) lt.layout_destroy(g->lb);
  if (g->la) lt.layout_destroy(g->la);
  if (g->desc) lt.desc_destroy(g->desc);
}

static bool lt_run(void *arg) {
  lt_case *g = arg;
  float one = 1, zero = 0;
  void *c = (void *)(uintptr_t)g->c;
  int st = lt.matmul(lt.h, g->desc, &one, (void *)(uintptr_t)g->b, g->la, (void *)(uintptr_t)g->a, g->lb, &zero, c, g->lc, c, g->lc,
                     &g->algo, (void *)(uintptr_t)lt_ws, LT_WORKSPACE, stream);
  if (st != 0) {
    printf("  cublasLtMatmul failed: status %d\n", st);
    failures++;
  }
  return st == 0;
}

/* ---- device copy: the memory-bound peer ---- */
typedef struct copy_case {
  tc_cu_devptr src, dst;
  size_t bytes;
} copy_case;

static bool copy_run(void *arg) {
  copy_case *c = arg;
  /* on our stream, so the events bracket it */
  return ck(cu->MemcpyDtoDAsync(c->dst, c->src, c->bytes, stream), "cuMemcpyDtoDAsync");
}

static void bench_gemm(tilec_context *ctx, const char *label, int M, int N, int K, const char *dtype) {
  char m[32], n[32], k[32], dt[32];
  snprintf(m, sizeof m, "M=%d", M);
  snprintf(n, sizeof n, "N=%d", N);
  snprintf(k, sizeof k, "K=%d", K);
  snprintf(dt, sizeof dt, "dtype=%s", dtype);
  const char *defs[24] = {m, n, k, dt};
  for (int i = 0; i < ngemm_extra; i++) defs[4 + i] = gemm_extra[i];
  defs[4 + ngemm_extra] = NULL;
  double flops = 2.0 * M * N * (double)K;
  printf("%s\n", label);
  tk x;
  double t_tilec = tk_make(ctx, gemm_file, defs, &x) ? time_median(tk_run, &x) : -1;
  double t_blas = -1;
  if (cublas) {
    blas_case g = {M, N, K, strcmp(dtype, "bfloat16") == 0 ? CUDA_R_16BF : CUDA_R_16F, 0, 0, 0};
    size_t abytes = (size_t)M * K * 2, bbytes = (size_t)K * N * 2, cbytes = (size_t)M * N * 2;
    if (ck(cu->MemAlloc(&g.a, abytes), "cuMemAlloc") && ck(cu->MemAlloc(&g.b, bbytes), "cuMemAlloc") &&
        ck(cu->MemAlloc(&g.c, cbytes), "cuMemAlloc")) {
      /* the same values as tilec's A and B: the tensor cores' power, and so their clock, depend
       * on the data (constant operands draw less) */
      if (x.k && x.n >= 2) {
        cu->MemcpyDtoDAsync(g.a, x.dev[0], abytes, stream);
        cu->MemcpyDtoDAsync(g.b, x.dev[1], bbytes, stream);
      } else {
        cu->MemsetD8Async(g.a, 0x3c, abytes, stream);
        cu->MemsetD8Async(g.b, 0x3c, bbytes, stream);
      }
      t_blas = time_median(blas_run, &g);
    }
    if (g.a) cu->MemFree(g.a);
    if (g.b) cu->MemFree(g.b);
    if (g.c) cu->MemFree(g.c);
  }
  if (t_tilec > 0) printf("  tilec   %8.3f ms  %7.1f TFLOP/s\n", t_tilec, flops / t_tilec / 1e9);
  if (t_blas > 0) printf("  cuBLAS  %8.3f ms  %7.1f TFLOP/s\n", t_blas, flops / t_blas / 1e9);
  if (t_tilec > 0 && t_blas > 0) printf("  ratio   %.2fx cuBLAS\n", t_blas / t_tilec);
  if (x.k) tk_free(&x);
}

/* fp8 e4m3 GEMM, C (bf16) = A B^T with B as (N, K): examples/gemm_fp8.py beside cuBLASLt, which
 * reads the very same device tensors. */
static void bench_gemm_fp8(tilec_context *ctx, const char *label, int M, int N, int K) {
  char m[32], n[32], k[32];
  snprintf(m, sizeof m, "M=%d", M);
  snprintf(n, sizeof n, "N=%d", N);
  snprintf(k, sizeof k, "K=%d", K);
  /* the f16 GEMM's best shape (docs/performance.md) with block_K doubled: 128-byte rows of K */
  const char *defs[24] = {m, n, k, "block_M=128", "block_N=256", "block_K=128", "threads=256", "num_stages=4"};
  for (int e = 0; e < nf8_extra; e++) { /* a binding replaces the default of the same name */
    size_t len = strcspn(f8_extra[e], "=");
    int j = 0;
    while (defs[j] && !(strncmp(defs[j], f8_extra[e], len) == 0 && defs[j][len] == '=')) j++;
    defs[j] = f8_extra[e];
  }
  double flops = 2.0 * M * N * (double)K;
  printf("%s\n", label);
  tk x;
  double t_tilec = tk_make(ctx, "examples/gemm_fp8.py", defs, &x) ? time_median(tk_run, &x) : -1;
  double t_lt[2] = {-1, -1};
  for (int fast = 0; fast < 2 && lt.h && x.k && x.n >= 3; fast++) {
    lt_case g = {0};
    g.a = x.dev[0], g.b = x.dev[1], g.c = x.dev[2]; /* A (M x K), B (N x K), C (M x N bf16) */
    if (lt_setup(&g, M, N, K, fast)) t_lt[fast] = time_median(lt_run, &g);
    lt_teardown(&g);
  }
  if (t_tilec > 0) printf("  tilec     %8.3f ms  %7.1f TFLOP/s\n", t_tilec, flops / t_tilec / 1e9);
  for (int fast = 0; fast < 2; fast++) {
    if (t_lt[fast] <= 0) continue;
    printf("  cuBLASLt%s %8.3f ms  %7.1f TFLOP/s\n", fast ? "f" : " ", t_lt[fast], flops / t_lt[fast] / 1e9);
    if (t_tilec > 0)
      printf("  ratio     %.2fx cuBLASLt%s\n", t_lt[fast] / t_tilec, fast ? " with fast accumulation (tilec's kind)" : " (default accumulation)");
  }
  if (x.k) tk_free(&x);
}

static double copy_bandwidth_gbps(size_t bytes) {
  copy_case c = {0, 0, bytes};
  double gbps = -1;
  if (ck(cu->MemAlloc(&c.src, bytes), "cuMemAlloc") && ck(cu->MemAlloc(&c.dst, bytes), "cuMemAlloc")) {
    double t = time_median(copy_run, &c);
    if (t > 0) gbps = 2.0 * (double)bytes / t / 1e6; /* read + write */
  }
  if (c.src) cu->MemFree(c.src);
  if (c.dst) cu->MemFree(c.dst);
  return gbps;
}

static void bench_memory(tilec_context *ctx, const char *name, const char *file, const char *const *defs, double peer) {
  printf("%s\n", name);
  tk x;
  double t = tk_make(ctx, file, defs, &x) ? time_median(tk_run, &x) : -1;
  if (t > 0) {
    double gbps = x.bytes / t / 1e6;
    printf("  tilec   %8.3f ms  %7.1f GB/s", t, gbps);
    if (peer > 0) printf("  (%.2fx device copy)", gbps / peer);
    printf("\n");
  }
  if (x.k) tk_free(&x);
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : "";
  for (int i = 2; i < argc && ngemm_extra < 16; i++) {
    if (!strncmp(argv[i], "file=", 5)) gemm_file = argv[i] + 5;
    else if (!strncmp(argv[i], "target=", 7)) target = argv[i] + 7;
    else if (!strncmp(argv[i], "fa_file=", 8)) fa_file = argv[i] + 8;
    else if (!strncmp(argv[i], "fa.", 3)) {
      if (nfa_extra < 8) fa_extra[nfa_extra++] = argv[i] + 3;
    } else if (!strncmp(argv[i], "f8.", 3)) {
      if (nf8_extra < 8) f8_extra[nf8_extra++] = argv[i] + 3;
    }
    else gemm_extra[ngemm_extra++] = argv[i];
  }
  char why[256];
  cu = tc_cu_api_get(why, sizeof why);
  if (!cu || cu->device_count == 0) {
    printf("no CUDA device: %s; nothing to measure\n", cu ? "the driver lists none" : why);
    return 0;
  }
  tc_cu_context cuctx;
  tilec_error err = {0};
  if (tc_cu_retain_device(cu, 0, &cuctx, &err) != TILEC_OK) {
    printf("no CUDA device: %s\n", err.message);
    return 0;
  }
  tc_cu_device dev;
  char name[256] = "?";
  int l2 = 0;
  cu->DeviceGet(&dev, 0);
  cu->DeviceGetName(name, sizeof name, dev);
  cu->DeviceGetAttribute(&l2, TC_CU_DEV_ATTR_L2_CACHE_SIZE, dev);
  flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
  if (!ck(cu->StreamCreate(&stream, TC_CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
      !ck(cu->EventCreate(&ev0, 0), "cuEventCreate") || !ck(cu->EventCreate(&ev1, 0), "cuEventCreate") ||
      !ck(cu->MemAlloc(&flush_buf, flush_bytes), "cuMemAlloc"))
    return 1;
  printf("device: %s, L2 %d MiB, driver %d; median of %d runs, L2 flushed before each\n", name, l2 >> 20,
         cu->driver_version, RUNS);
  if (!cublas_open()) printf("cuBLAS not found (libcublas.so): GEMM without its peer\n");
  if (!cublaslt_open()) printf("cuBLASLt not found (libcublasLt.so): fp8 GEMM without its peer\n");
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return 1;

  /* the square sizes, and the skinny shapes of inference (M = 1, 16, 128 tokens, N = K = 8192);
   * 2048^3 and the skinny ones run only when the filter names a size (e.g. "gemm float16 16x"),
   * since they want their own block configuration */
  bool sized = strpbrk(filter, "0123456789") != NULL;
  static const int shapes[][4] = {{4096, 4096, 4096, 1}, {8192, 8192, 8192, 1}, {2048, 2048, 2048, 0},
                                  {1, 8192, 8192, 0},    {16, 8192, 8192, 0},   {128, 8192, 8192, 0}};
  static const char *const types[] = {"float16", "bfloat16"};
  for (int s = 0; s < 6; s++)
    for (int t = 0; t < 2; t++) {
      const int *sh = shapes[s];
      char label[64];
      if (sh[0] == sh[1] && sh[1] == sh[2]) snprintf(label, sizeof label, "gemm %s %d^3", types[t], sh[0]);
      else snprintf(label, sizeof label, "gemm %s %dx%dx%d", types[t], sh[0], sh[1], sh[2]);
      if (strstr(label, filter) && (sh[3] || sized)) bench_gemm(ctx, label, sh[0], sh[1], sh[2], types[t]);
    }
  for (int s = 0; s < 2; s++) { /* fp8: the square sizes */
    char label[64];
    snprintf(label, sizeof label, "gemm float8_e4m3fn %d^3", shapes[s][0]);
    if (strstr(label, filter)) bench_gemm_fp8(ctx, label, shapes[s][0], shapes[s][1], shapes[s][2]);
  }

  double copy = copy_bandwidth_gbps((size_t)1 << 30);
  if (copy > 0) printf("device copy (cuMemcpyDtoDAsync, 1 GiB): %.1f GB/s (read + write)\n", copy);
  /* the fastest configurations of a sweep on the H200 (docs/performance.md, ninth round): few
   * rows a block, so that many blocks keep loads in flight on each SM; fp8_cast's whole row in
   * one tile, so it reads X once */
  static const char *const rms[] = {"M=65536", "N=1024", "block_M=4", NULL};
  static const char *const smx[] = {"m=65536", "N=4096", "block_M=1", "block_N=4096", "threads=128", NULL};
  static const char *const fp8[] = {"M=16384", "N=8192", "block_M=1", "block_N=8192", "threads=128", NULL};
  if (strstr("rms_norm", filter)) bench_memory(ctx, "rms_norm f16 65536x1024", "examples/rms_norm.py", rms, copy);
  if (strstr("softmax", filter)) bench_memory(ctx, "softmax f16 65536x4096", "examples/softmax.py", smx, copy);
  if (strstr("fp8_cast", filter)) bench_memory(ctx, "fp8_cast f16->e4m3 16384x8192", "examples/fp8_cast.py", fp8, copy);

  for (int run = 0; run < 4; run++) {
    int causal = run % 2 == 0, bf16 = run >= 2;
    const char *fa[] = {"batch=8", "heads=16", "seq_len=4096", "dim=128", causal ? "is_causal=True" : "is_causal=False",
                        "block_M=128", "block_N=128", "threads=256", "num_stages=2", bf16 ? "dtype=bfloat16" : "dtype=float16",
                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}; /* 8 warps: no spills; room for fa.KEY=VALUE */
    for (int e = 0; e < nfa_extra; e++) { /* a binding replaces the default of the same name */
      size_t len = strcspn(fa_extra[e], "=");
      int j = 0;
      while (fa[j] && !(strncmp(fa[j], fa_extra[e], len) == 0 && fa[j][len] == '=')) j++;
      fa[j] = fa_extra[e];
    }
    char label[96];
    snprintf(label, sizeof label, "flash_attention %s B=8 H=16 S=4096 D=128 %s", bf16 ? "bf16" : "fp16", causal ? "causal" : "non-causal");
    if (!strstr(label, filter)) continue;
    printf("%s\n", label);
    tk x;
    double t = tk_make(ctx, fa_file, fa, &x) ? time_median(tk_run, &x) : -1;
    double flops = 4.0 * 8 * 16 * 4096.0 * 4096.0 * 128 * (causal ? 0.5 : 1.0);
    if (t > 0) printf("  tilec   %8.3f ms  %7.1f TFLOP/s (peer: python3 bench/attention_peer.py)\n", t, flops / t / 1e9);
    if (x.k) tk_free(&x);
  }
  tilec_context_destroy(ctx);
  printf("%s\n", failures ? "some measurements failed (see above)" : "done");
  return failures ? 1 : 0;
}
