/* test_cuda_emu: the cuda emulator (src/target/cuda/emu_build.c, emu_run.c) on hand-written CUDA
 * C++: parameters reach the kernel by cuLaunchKernel's convention, threadIdx and blockIdx come
 * from the runner, dynamic shared memory is the block's own, __syncthreads waits and a missing
 * one gives a wrong result (a read too early in index order, a write too early in reverse order), shuffles meet their warp, atomics add across blocks, an mbarrier
 * wait that nothing completes is a deadlock reported as one, __trap ends the launch with an
 * error, clusters see each other's shared memory, and a compile error carries the compiler's
 * log. Needs a C++ compiler (c++); without one the tests say so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "harness.h"
#include "target/cuda/emu_build.h"
#include "target/cuda/emu_run.h"
#include "target/cuda/prelude/cuda_prelude.h"

static int have_cxx(void) {
  char why[256];
  if (tc_cxx_available(NULL, why, sizeof why)) return 1;
  printf("  (skipped: %s)\n", why);
  return 0;
}

static tc_cuemu_lib *build(const char *src) {
  tilec_error err = {0};
  void *so = NULL;
  size_t n = 0;
  char *log = NULL;
  tc_cuemu_lib *lib = NULL;
  if (tc_cuemu_compile(src, &so, &n, &log, &err) != TILEC_OK) printf("  build failed: %s\n%s\n", err.message, log ? log : "");
  else if (tc_cuemu_lib_open(so, n, &lib, &err) != TILEC_OK) printf("  load failed: %s\n", err.message);
  free(so);
  free(log);
  return lib;
}

static tilec_status run1(tc_cuemu_lib *lib, const char *entry, void *const *args, unsigned gx, unsigned tx, unsigned cluster,
                         size_t smem, tilec_error *err) {
  const unsigned grid[3] = {gx, 1, 1}, block[3] = {tx, 1, 1};
  return tc_cuemu_run(lib, entry, args, grid, block, cluster, smem, err);
}

/* Each thread writes its slot of shared memory, then reads its neighbour's. */
static const char k_neighbour[] =
    "extern \"C\" __global__ void __launch_bounds__(64) with_barrier(const float *__restrict__ in, float *__restrict__ out, int n) {\n"
    "  extern __shared__ __align__(1024) unsigned char tcg_smem[];\n"
    "  float *slot = (float *)tcg_smem;\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  slot[threadIdx.x] = i < n ? in[i] : 0.0f;\n"
    "  __syncthreads();\n"
    "  if (i < n) out[i] = slot[(threadIdx.x + 1) % blockDim.x];\n"
    "}\n"
    "extern \"C\" __global__ void without_barrier(const float *in, float *out, int n) {\n"
    "  extern __shared__ __align__(1024) unsigned char tcg_smem[];\n"
    "  float *slot = (float *)tcg_smem;\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  slot[threadIdx.x] = i < n ? in[i] : 0.0f;\n"
    "  if (i < n) out[i] = slot[(threadIdx.x + 1) % blockDim.x];\n"
    "}\n";

TEST(syncthreads_waits_and_a_missing_one_shows) {
  if (!have_cxx()) return;
  tc_cuemu_lib *lib = build(k_neighbour);
  CHECK(lib);
  if (!lib) return;
  enum { N = 200 };
  float in[N], out[N];
  for (int i = 0; i < N; i++) in[i] = (float)i + 0.5f;
  const float *pin = in;
  float *pout = out;
  int n = N;
  void *args[3] = {&pin, &pout, &n};
  tilec_error err = {0};
  memset(out, 0, sizeof out);
  CHECK(run1(lib, "with_barrier", args, 4, 64, 1, 256, &err) == TILEC_OK);
  int right = 0;
  for (int i = 0; i < N; i++) {
    int b = i / 64, t = i % 64, j = b * 64 + (t + 1) % 64;
    right += out[i] == (j < N ? in[j] : 0.0f);
  }
  CHECK(right == N);
  memset(out, 0, sizeof out);
  CHECK(run1(lib, "without_barrier", args, 4, 64, 1, 256, &err) == TILEC_OK);
  right = 0;
  for (int i = 0; i < N; i++) {
    int b = i / 64, t = i % 64, j = b * 64 + (t + 1) % 64;
    right += out[i] == (j < N ? in[j] : 0.0f);
  }
  CHECK(right < N / 2); /* each thread read its neighbour's slot before the neighbour wrote it */
  tc_cuemu_lib_close(lib);
}

/* Each thread reads its neighbour's slot, then overwrites its own, with no barrier between:
 * in index order every read comes before the neighbour's write (right by luck), in reverse order
 * after it (wrong), which is what TILEC_EMU_ORDER=reverse is for. */
static const char k_war[] =
    "extern \"C\" __global__ void write_after_read(const float *in, float *out) {\n"
    "  extern __shared__ __align__(1024) unsigned char tcg_smem[];\n"
    "  float *slot = (float *)tcg_smem;\n"
    "  slot[threadIdx.x] = in[threadIdx.x];\n"
    "  __syncthreads();\n"
    "  float v = slot[(threadIdx.x + 1) % blockDim.x];\n"
    "  slot[threadIdx.x] = 2.0f * v;\n"
    "  __syncthreads();\n"
    "  out[threadIdx.x] = slot[threadIdx.x];\n"
    "}\n";

TEST(reverse_order_shows_a_write_before_a_read) {
  if (!have_cxx()) return;
  tc_cuemu_lib *lib = build(k_war);
  CHECK(lib);
  if (!lib) return;
  float in[64], out[64];
  for (int i = 0; i < 64; i++) in[i] = (float)i;
  const float *pin = in;
  float *pout = out;
  void *args[2] = {&pin, &pout};
  tilec_error err = {0};
  int right[2];
  for (int rev = 0; rev < 2; rev++) {
    if (rev) setenv("TILEC_EMU_ORDER", "reverse", 1);
    CHECK(run1(lib, "write_after_read", args, 1, 64, 1, 256, &err) == TILEC_OK);
    right[rev] = 0;
    for (int i = 0; i < 64; i++) right[rev] += out[i] == 2.0f * in[(i + 1) % 64];
  }
  unsetenv("TILEC_EMU_ORDER");
  CHECK(right[0] == 63);  /* index order: every read before its neighbour's write but the wrap-around */
  CHECK(right[1] == 1);   /* reverse: every neighbour but the wrap-around wrote first */
  tc_cuemu_lib_close(lib);
}

static const char k_warp[] =
    "extern \"C\" __global__ void warp_sum(const int *in, int *out, unsigned long long *total) {\n"
    "  int v = in[blockIdx.x * blockDim.x + threadIdx.x];\n"
    "  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);\n"
    "  if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;\n"
    "  atomicAdd(total, (unsigned long long)v);\n"
    "}\n";

TEST(shuffles_meet_their_warp_and_atomics_add_across_blocks) {
  if (!have_cxx()) return;
  tc_cuemu_lib *lib = build(k_warp);
  CHECK(lib);
  if (!lib) return;
  enum { N = 8 * 96 };
  int in[N], out[N / 32];
  unsigned long long total = 0, expect = 0;
  for (int i = 0; i < N; i++) in[i] = (i * 37) % 101;
  const int *pin = in;
  int *pout = out;
  unsigned long long *pt = &total;
  void *args[3] = {&pin, &pout, &pt};
  tilec_error err = {0};
  CHECK(run1(lib, "warp_sum", args, 8, 96, 1, 0, &err) == TILEC_OK);
  int right = 0;
  for (int w = 0; w < N / 32; w++) {
    int s = 0;
    for (int l = 0; l < 32; l++) s += in[w * 32 + l];
    right += out[w] == s;
    expect += 32ull * (unsigned long long)s;
  }
  CHECK(right == N / 32);
  CHECK(total == expect);
  tc_cuemu_lib_close(lib);
}

/* A wait on an mbarrier whose phase nothing completes; a trap; a cluster reading its partner. */
static const char k_fail[] =
    "extern \"C\" __global__ void never_arrives(int *out) {\n"
    "  extern __shared__ __align__(1024) unsigned char tcg_smem[];\n"
    "  if (threadIdx.x == 0) tcg_emu_mbar_init(tcg_smem, 2);\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) tcg_emu_mbar_arrive(tcg_smem);\n"
    "  tcg_emu_mbar_wait(tcg_smem, 0);\n"
    "  out[threadIdx.x] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void traps(int *out) {\n"
    "  if (threadIdx.x == 5) __trap();\n"
    "  out[threadIdx.x] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) partner(int *out) {\n"
    "  extern __shared__ __align__(1024) unsigned char tcg_smem[];\n"
    "  int *mine = (int *)tcg_smem;\n"
    "  mine[threadIdx.x] = (int)(blockIdx.x * 100 + threadIdx.x);\n"
    "  tcg_emu_rt->meet(TC_CUEMU_CLUSTER, 0, 0);\n"
    "  const int *theirs = (const int *)tcg_emu_rt->peer_smem(tcg_emu_cur->rank ^ 1);\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = theirs[threadIdx.x];\n"
    "  tcg_emu_rt->meet(TC_CUEMU_CLUSTER, 0, 0);\n"
    "}\n";

TEST(deadlocks_and_traps_are_errors_and_clusters_share_memory) {
  if (!have_cxx()) return;
  tc_cuemu_lib *lib = build(k_fail);
  CHECK(lib);
  if (!lib) return;
  int out[128];
  int *p = out;
  void *args[1] = {&p};
  tilec_error err = {0};
  CHECK(run1(lib, "never_arrives", args, 3, 64, 1, 1024, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "deadlock") != NULL && strstr(err.message, "mbarrier wait") != NULL);
  memset(&err, 0, sizeof err);
  CHECK(run1(lib, "traps", args, 2, 64, 1, 0, &err) == TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "thread (5, 0, 0)") != NULL && strstr(err.message, "__trap()") != NULL);
  memset(&err, 0, sizeof err);
  CHECK(run1(lib, "partner", args, 4, 32, 2, 1024, &err) == TILEC_OK);
  int right = 0;
  for (int b = 0; b < 4; b++)
    for (int t = 0; t < 32; t++) right += out[b * 32 + t] == (b ^ 1) * 100 + t;
  CHECK(right == 128);
  CHECK(run1(lib, "partner", args, 3, 32, 2, 1024, &err) == TILEC_ERROR_USAGE); /* 3 blocks in clusters of 2 */
  tc_cuemu_lib_close(lib);
}

TEST(compile_error_has_the_log) {
  if (!have_cxx()) return;
  tilec_error err = {0};
  void *so = NULL;
  size_t n = 0;
  char *log = NULL;
  CHECK(tc_cuemu_compile("extern \"C\" __global__ void broken(int *p) { p[0] = undeclared_name; }\n", &so, &n, &log, &err) ==
        TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "cuda emulator: the C++ compiler failed") != NULL);
  CHECK(log && strstr(log, "undeclared_name") != NULL);
  free(log);
  free(so);
}

/* Stream-K's walk (tcg_sk_schedule, tcg_sk_piece, tcg_sk_shared_below in the prelude's
 * tcg_tma.cuh), as the generated kernel drives it, for every tile count and k extent up to
 * SK_TILES x SK_ITERS on 1 to 9 blocks: each block records its pieces (tile, k0, k1) and, for a
 * piece that ends a tile it did not begin, the lowest block whose partial sums it adds. */
enum { SK_TILES = 40, SK_ITERS = 24, SK_PIECES = 48 };
static const char k_sk_walk[] =
    "extern \"C\" __global__ void sk_walk(int *out) {\n"
    "  for (int tiles = 1; tiles <= 40; tiles++)\n"
    "    for (int iters = 1; iters <= 24; iters++) {\n"
    "      int *rec = out + ((((tiles - 1) * 24 + iters - 1) * (int)gridDim.x + (int)blockIdx.x) * (1 + 48 * 4));\n"
    "      tcg_sk_walk w = tcg_sk_schedule(tiles, iters);\n"
    "      int n = 0;\n"
    "      for (int next = (int)blockIdx.x;; next += (int)gridDim.x) {\n"
    "        int tile = next, k0 = 0, k1 = iters;\n"
    "        if (next >= w.dp && !tcg_sk_piece(w, iters, tile, k0, k1)) break;\n"
    "        if (next < w.dp && tile >= tiles) break;\n"
    "        int lowest = -1;\n"
    "        if (k1 == iters && k0 != 0)\n"
    "          for (int c = (int)blockIdx.x - 1;; c--) { lowest = c; if (!tcg_sk_shared_below(w, c, tile, iters)) break; }\n"
    "        if (n < 48) rec[1 + 4 * n] = tile, rec[2 + 4 * n] = k0, rec[3 + 4 * n] = k1, rec[4 + 4 * n] = lowest;\n"
    "        n++;\n"
    "      }\n"
    "      rec[0] = n;\n"
    "    }\n"
    "}\n";

/* |d| around a tile of `iters` iterations */
static int circ(int d, int iters) {
  d = ((d % iters) + iters) % iters;
  return d < iters - d ? d : iters - d;
}

/* The walk's promises, for one (tiles, iters, G): every unit run exactly once; a piece that
 * stops before its tile's end is its block's first cut piece, one at most per block, so no block
 * waits before it has handed over; the block ending a cut tile adds exactly the blocks below
 * that ran the rest; and, where there are more tiles than blocks, every block runs at each step
 * either iteration j of the step (a head piece) or j - L (the rest; L: the range's length),
 * give or take one: two groups in step, where cutting in order would scatter G. Returns the number of broken promises. */
static int sk_check(const int *out, int tiles, int iters, int G, int *cut) {
  int bad = 0;
  static unsigned char seen[SK_TILES][SK_ITERS];
  static int contributor[SK_TILES][16], ncontrib[SK_TILES];
  memset(seen, 0, sizeof seen);
  memset(ncontrib, 0, sizeof ncontrib);
  const int *recs[16];
  for (int b = 0; b < G; b++) {
    const int *rec = recs[b] = out + ((((tiles - 1) * SK_ITERS + iters - 1) * G + b) * (1 + SK_PIECES * 4));
    if (rec[0] > SK_PIECES) return 1;
    int first_cut = -1, handovers = 0;
    for (int i = 0; i < rec[0]; i++) {
      const int tile = rec[1 + 4 * i], k0 = rec[2 + 4 * i], k1 = rec[3 + 4 * i];
      if (tile < 0 || tile >= tiles || k0 < 0 || k1 > iters || k0 >= k1) return bad + 1;
      for (int k = k0; k < k1; k++) bad += seen[tile][k]++ != 0;
      if (k0 != 0 || k1 != iters) {
        *cut = 1;
        if (first_cut < 0) first_cut = i;
      }
      if (k1 != iters) {
        handovers++;
        bad += i != first_cut;
        contributor[tile][ncontrib[tile]++] = b;
      }
    }
    bad += handovers > 1;
  }
  for (int t = 0; t < tiles; t++)
    for (int k = 0; k < iters; k++) bad += seen[t][k] != 1;
  for (int b = 0; b < G; b++) /* owners: the blocks lowest..b-1 are exactly the tile's contributors */
    for (int i = 0; i < recs[b][0]; i++) {
      const int *p = recs[b] + 1 + 4 * i;
      if (p[2] != iters || p[1] == 0) continue;
      const int lowest = p[3];
      bad += lowest < 0 || ncontrib[p[0]] != b - lowest;
      for (int c = 0; c < ncontrib[p[0]]; c++) bad += contributor[p[0]][c] < lowest || contributor[p[0]][c] >= b;
    }
  if (tiles > G && *cut) { /* k in step: the cut pieces, step by step, on every block */
    int step_k[16][3 * SK_ITERS], len[16];
    for (int b = 0; b < G; b++) {
      len[b] = 0;
      for (int i = 0; i < recs[b][0]; i++) {
        const int *p = recs[b] + 1 + 4 * i;
        if (p[0] < tiles - (tiles % G + G)) continue; /* whole tiles of the first waves */
        for (int k = p[1]; k < p[2] && len[b] < 3 * SK_ITERS; k++) step_k[b][len[b]++] = k;
      }
    }
    const int L = (tiles % G + G) * iters / G;
    for (int j = 0;; j++) {
      int all = 1;
      for (int b = 0; b < G && all; b++) all = j < len[b];
      if (!all) break;
      for (int b = 0; b < G; b++) /* within one of the heads' k (j) or of everyone else's (j - L) */
        bad += circ(step_k[b][j] - j, iters) > 1 && circ(step_k[b][j] - j + L, iters) > 1;
    }
  }
  return bad;
}

TEST(streamk_walk_covers_every_unit_once_and_keeps_k_in_step) {
  if (!have_cxx()) return;
  size_t n = strlen(tc_dtype_c_prelude()) + strlen(tc_cuda_prelude()) + sizeof k_sk_walk;
  char *src = malloc(n);
  CHECK(src != NULL);
  if (!src) return;
  snprintf(src, n, "%s%s%s", tc_dtype_c_prelude(), tc_cuda_prelude(), k_sk_walk);
  tc_cuemu_lib *lib = build(src);
  free(src);
  CHECK(lib);
  if (!lib) return;
  int broken = 0, cut_cases = 0, few_tile_cuts = 0;
  for (int G = 1; G <= 9; G++) {
    size_t cells = (size_t)SK_TILES * SK_ITERS * G * (1 + SK_PIECES * 4);
    int *out = calloc(cells, sizeof *out);
    void *args[1] = {&out};
    tilec_error err = {0};
    CHECK(out && run1(lib, "sk_walk", args, (unsigned)G, 1, 1, 0, &err) == TILEC_OK);
    for (int tiles = 1; out && tiles <= SK_TILES; tiles++)
      for (int iters = 1; iters <= SK_ITERS; iters++) {
        int cut = 0, bad = sk_check(out, tiles, iters, G, &cut);
        if (bad && broken < 5) printf("  stream-K walk broken: %d tiles of %d iterations on %d blocks\n", tiles, iters, G);
        broken += bad != 0;
        cut_cases += cut;
        few_tile_cuts += cut && tiles < G;
      }
    free(out);
  }
  CHECK(broken == 0);
  CHECK(cut_cases > 500 && few_tile_cuts > 50); /* the walk did cut, both ways */
  tc_cuemu_lib_close(lib);
}

int main(void) {
  RUN(syncthreads_waits_and_a_missing_one_shows);
  RUN(reverse_order_shows_a_write_before_a_read);
  RUN(shuffles_meet_their_warp_and_atomics_add_across_blocks);
  RUN(deadlocks_and_traps_are_errors_and_clusters_share_memory);
  RUN(compile_error_has_the_log);
  RUN(streamk_walk_covers_every_unit_once_and_keeps_k_in_step);
  TEST_MAIN_END();
}
