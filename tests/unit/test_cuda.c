/* test_cuda.c: the cuda runtime pieces that need no GPU: NVRTC compiling a hand-written kernel
 * to a cubin for sm_80 and sm_90a, the artifact container and its metadata, NVRTC's log on a bad
 * source, the arch rule and target options, generate without the code generator, the driver's absence reported as such, and a
 * build-only compile through the public API. NVRTC tests are skipped, saying so, where NVRTC
 * is absent. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include "harness.h"
#include "api.h"
#include "target/cuda/cuda_internal.h"
#include "util/diag.h"

static const char k_kernel[] =
    "extern \"C\" __global__ void axpy(float *y, const float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] += a * x[i];\n"
    "}\n";

static const char k_meta[] = "entry=axpy\nblock=128,1,1\nsmem=0\narch=sm_80\n";

/* Run first: finding NVRTC and computing its identity (what a warm cache hit does) must not
 * load the library. */
TEST(identity_does_not_load_nvrtc) {
  char path[PATH_MAX];
  CHECK(tc_nvrtc_locate(path, sizeof path));
  tilec_error err = {0};
  char *id = tc_nvrtc_identity(&err);
  CHECK(id != NULL);
  CHECK(strncmp(id, "nvrtc=/", 7) == 0);
  CHECK(strstr(id, "libnvrtc") && strstr(id, " size=") && strstr(id, " mtime="));
  free(id);
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  CHECK(h == NULL);
}

static void compile_for(const char *arch) {
  void *cubin = NULL;
  size_t n = 0;
  tilec_error err = {0};
  if (tc_nvrtc_compile(k_kernel, arch, &cubin, &n, &err) != TILEC_OK) printf("  %s\n", err.message);
  CHECK(cubin != NULL && n > 64);
  CHECK(memcmp(cubin, "\177ELF", 4) == 0);
  /* the container round-trips */
  void *art = NULL;
  size_t an = 0;
  CHECK_INT(tc_cuda_artifact_pack(k_meta, cubin, n, &art, &an, &err), TILEC_OK);
  CHECK_INT(an, TC_CUDA_ARTIFACT_HEADER + strlen(k_meta) + n);
  const char *meta;
  size_t mlen, cn;
  const void *c;
  CHECK_INT(tc_cuda_artifact_unpack(art, an, &meta, &mlen, &c, &cn, &err), TILEC_OK);
  CHECK(mlen == strlen(k_meta) && memcmp(meta, k_meta, mlen) == 0);
  CHECK(cn == n && memcmp(c, cubin, n) == 0);
  size_t pn = 0;
  CHECK(tc_cuda_payload(art, an, &pn) == c && pn == n);
  /* truncated, corrupted and foreign containers are errors, not crashes */
  CHECK_INT(tc_cuda_artifact_unpack(art, an - 1, &meta, &mlen, &c, &cn, &err), TILEC_ERROR_TARGET);
  ((unsigned char *)art)[8] = 99; /* format version */
  tc_error_clear(&err);
  CHECK_INT(tc_cuda_artifact_unpack(art, an, &meta, &mlen, &c, &cn, &err), TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "format version") != NULL);
  CHECK_INT(tc_cuda_artifact_unpack(cubin, n, &meta, &mlen, &c, &cn, &err), TILEC_ERROR_TARGET);
  CHECK(tc_cuda_payload(cubin, n, &pn) == NULL);
  free(art);
  free(cubin);
}

TEST(nvrtc_sm80) { compile_for("sm_80"); }
TEST(nvrtc_sm90a) { compile_for("sm_90a"); }

TEST(nvrtc_error_carries_the_log) {
  void *cubin = (void *)1;
  size_t n = 7;
  tilec_error err = {0};
  CHECK_INT(tc_nvrtc_compile("extern \"C\" __global__ void f() { undefined_name(); }\n", "sm_80", &cubin, &n, &err),
            TILEC_ERROR_TARGET);
  CHECK(cubin == NULL && n == 0);
  CHECK(strstr(err.message, "NVRTC failed to compile the kernel for sm_80") != NULL);
  CHECK(strstr(err.message, "undefined_name") != NULL); /* NVRTC's own words */
  /* a long log is cut to whole lines with a count of the rest */
  char big[20000] = "extern \"C\" __global__ void f() {\n";
  for (int i = 0; i < 200; i++) sprintf(big + strlen(big), "  nope%d();\n", i); /* 200 distinct errors */
  strcat(big, "}\n");
  tc_error_clear(&err);
  CHECK_INT(tc_nvrtc_compile(big, "sm_80", &cubin, &n, &err), TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "more lines)") != NULL);
  CHECK(strlen(err.message) < sizeof err.message - 1);
}

TEST(build_stores_nothing_on_failure) {
  tc_backend_env env = {.cc = "cc", .num_threads = 1, .build_only = true};
  CHECK(tc_cuda_describe_arch("sm_80", &env.desc, NULL));
  tc_generated g = {"", "this is not CUDA\n", (char *)k_meta};
  void *art = (void *)1;
  size_t an = 5;
  tilec_error err = {0};
  CHECK_INT(tc_cuda_nvrtc_build(&env, &g, &art, &an, &err), TILEC_ERROR_TARGET);
  CHECK(art == NULL && an == 0);
  g.full_source = (char *)k_kernel;
  CHECK_INT(tc_cuda_nvrtc_build(&env, &g, &art, &an, &err), TILEC_OK);
  tc_cuda_meta m;
  const char *meta;
  size_t mlen, cn;
  const void *c;
  CHECK_INT(tc_cuda_artifact_unpack(art, an, &meta, &mlen, &c, &cn, &err), TILEC_OK);
  CHECK_INT(tc_cuda_meta_parse(meta, mlen, &m, &err), TILEC_OK);
  CHECK_STR(m.entry, "axpy");
  free(art);
}

TEST(meta_parsing) {
  tc_cuda_meta m;
  tilec_error err = {0};
  const char *ok = "entry=gemm_kernel\nblock=128,2,1\nsmem=98304\narch=sm_90a\nfuture_key=1\n";
  CHECK_INT(tc_cuda_meta_parse(ok, strlen(ok), &m, &err), TILEC_OK);
  CHECK_STR(m.entry, "gemm_kernel");
  CHECK(m.block[0] == 128 && m.block[1] == 2 && m.block[2] == 1);
  CHECK_INT(m.smem, 98304);
  CHECK_STR(m.arch, "sm_90a");
  CHECK_INT(m.ntmaps, 0);
  CHECK_INT(m.launches, 1); /* one launch unless launches= says otherwise */
  const char *three = "entry=k\nblock=32,1,1\narch=sm_80\nlaunches=3\n";
  CHECK_INT(tc_cuda_meta_parse(three, strlen(three), &m, &err), TILEC_OK);
  CHECK_INT(m.launches, 3);
  CHECK_INT(m.streamk, 0); /* no stream-K workspace unless streamk= says so */
  const char *sk = "entry=k\nblock=384,1,1\narch=sm_90a\npersistent=1\nstreamk=131072\n";
  CHECK_INT(tc_cuda_meta_parse(sk, strlen(sk), &m, &err), TILEC_OK);
  CHECK_INT(m.streamk, 131072);
  CHECK_INT(tc_cuda_streamk_bytes(&m, 132), 768 + 132 * 131072LL); /* 132 flags padded to 768 bytes, then the slots */
  { /* a persistent grid: the resident blocks when the tiles are more, or when stream-K spreads fewer over them all */
    tc_launch_args la = {0};
    la.grid[0] = 8, la.grid[1] = 4, la.grid[2] = 1;
    unsigned grid[3];
    tc_cuda_launch_grid(&m, &la, 132, grid);
    CHECK(grid[0] == 132 && grid[1] == 1 && grid[2] == 1);
    m.streamk = 0;
    tc_cuda_launch_grid(&m, &la, 132, grid);
    CHECK(grid[0] == 32);
    tc_cuda_launch_grid(&m, &la, 20, grid);
    CHECK(grid[0] == 20);
  }
  const char *maps = "entry=k\nblock=256,1,1\narch=sm_90a\ntmap=1,2,64,256,4096,4096,1\ntmap=0,1,128,128,512,256,8*s0*16\n"
                     "tmap=2,4,16,32,512,512,1\n"; /* a float32 store map (the TMA-store epilogue) */
  CHECK_INT(tc_cuda_meta_parse(maps, strlen(maps), &m, &err), TILEC_OK);
  CHECK_INT(m.ntmaps, 3);
  CHECK(m.tmaps[2].param == 2 && m.tmaps[2].eb == 4 && m.tmaps[2].rows == 16 && m.tmaps[2].cols == 32);
  CHECK(m.tmaps[0].param == 1 && m.tmaps[0].eb == 2 && m.tmaps[0].rows == 64 && m.tmaps[0].cols == 256 && m.tmaps[0].R == 4096 &&
        m.tmaps[0].C == 4096 && m.tmaps[0].nlead == 1 && m.tmaps[0].lead[0] == 1);
  CHECK(m.tmaps[1].eb == 1 && m.tmaps[1].nlead == 3 && m.tmaps[1].lead[0] == 8 && m.tmaps[1].lead[1] == -1 && m.tmaps[1].lead[2] == 16);
  { /* the maps' five dimensions: 128-byte panels of a 256-column tile; the 64- and 32-byte rows of a
     * 32- or 16-column f16 tile are one panel of their own width (tc_tma_span) */
    static const struct { int64_t cols; uint64_t A, panels, panel_stride; unsigned box_panels; } geo[] = {
        {256, 64, 64, 128, 4}, {32, 32, 128, 64, 1}, {16, 16, 256, 32, 1}};
    static _Alignas(16) unsigned char data[64];
    for (size_t i = 0; i < sizeof geo / sizeof *geo; i++) {
      tc_cuda_tmap t = m.tmaps[0]; /* f16, 4096 x 4096, 64-row boxes */
      t.cols = geo[i].cols;
      uint64_t dims[5], strides[4];
      unsigned box[5];
      int64_t syms[1] = {0};
      CHECK_INT(tc_cuda_tmap_geometry(&m, "A", &t, data, syms, dims, strides, box, &err), TILEC_OK);
      CHECK(dims[0] == geo[i].A && dims[1] == 8 && dims[2] == geo[i].panels && dims[3] == 512 && dims[4] == 1);
      CHECK(strides[0] == 8192 && strides[1] == geo[i].panel_stride && strides[2] == 8 * 8192);
      CHECK(box[0] == geo[i].A && box[1] == 8 && box[2] == geo[i].box_panels && box[3] == 8 && box[4] == 1);
    }
  }
  static const char *const bad[] = {
      "block=1,1,1\narch=sm_80\n",                      /* no entry */
      "entry=k\narch=sm_80\n",                          /* no block */
      "entry=k\nblock=1,1,1\n",                         /* no arch */
      "entry=k;rm\nblock=1,1,1\narch=sm_80\n",          /* not an identifier */
      "entry=k\nblock=2048,1,1\narch=sm_80\n",          /* too many threads */
      "entry=k\nblock=32,1\narch=sm_80\n",              /* two numbers */
      "entry=k\nblock=32,1,1\nsmem=-1\narch=sm_80\n",   /* negative */
      "entry=k\nblock=32,1,1\narch=compute_80\n",       /* not a real arch */
      "entry=k\nblock=32,1,1\narch=sm_80\njunk\n",      /* not key=value */
      "entry=k\nblock=32,1,1\narch=sm_90a\ntmap=0,2,64,64\n",               /* tensor map: too few fields */
      "entry=k\nblock=32,1,1\narch=sm_90a\ntmap=0,8,64,64,512,512,1\n",     /* 8-byte elements */
      "entry=k\nblock=32,1,1\narch=sm_90a\ntmap=0,2,64,64,512,512,\n",      /* no leading factor */
      "entry=k\nblock=32,1,1\narch=sm_90a\ntmap=0,2,64,64,512,512,8*x\n",   /* not a factor */
      "entry=k\nblock=32,1,1\narch=sm_80\nlaunches=0\n",                     /* no launch */
      "entry=k\nblock=32,1,1\narch=sm_80\nlaunches=2x\n",                    /* not a number */
      "entry=k\nblock=32,1,1\narch=sm_90a\npersistent=1\nstreamk=6\n",     /* not whole float32 values */
      "entry=k\nblock=32,1,1\narch=sm_90a\nstreamk=1024\n",                 /* without a persistent walk */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tc_error_clear(&err);
    EXPECT(tc_cuda_meta_parse(bad[i], strlen(bad[i]), &m, &err) == TILEC_ERROR_INTERNAL);
    EXPECT(strncmp(err.message, "cuda meta: ", 11) == 0);
  }
}

/* The cuda description for target string `text`, or false with err filled. */
static bool describe(const char *text, tc_target_desc *d, tilec_error *err) {
  tc_target_spec spec;
  tc_error_clear(err);
  return tc_target_spec_parse(text, &spec, err) && tc_target_describe(&tc_cuda_target, &spec, d, err);
}

TEST(arch_rule_and_options) {
  CHECK(tc_cuda_arch_known("sm_80") && tc_cuda_arch_known("sm_90a") && tc_cuda_arch_known("sm_89"));
  CHECK(!tc_cuda_arch_known("sm_8") && !tc_cuda_arch_known("compute_90") && !tc_cuda_arch_known("sm_90x") &&
        !tc_cuda_arch_known(""));
  tc_target_desc d;
  tilec_error err = {0};
  unsetenv("TILEC_CUDA_ARCH");
  CHECK(describe("cuda,arch=sm_90a", &d, &err));
  CHECK_STR(d.arch, "sm_90a");
  CHECK(!describe("cuda,arch=sm_9", &d, &err));
  CHECK_STR(err.message, "unknown cuda arch 'sm_9' (supported: sm_80, sm_86, sm_89, sm_90, sm_90a)");
  CHECK(!describe("cuda,fast=1", &d, &err));
  CHECK_STR(err.message, "unknown option 'fast' for target 'cuda' (valid options: arch, clusters, streamk, plant)");
  CHECK(describe("cuda,arch=sm_90a,clusters=on", &d, &err) && d.clusters == 1);
  CHECK(describe("cuda,arch=sm_90a,clusters=off", &d, &err) && d.clusters == 2);
  CHECK(describe("cuda,arch=sm_90a", &d, &err) && d.clusters == 0);
  CHECK(!describe("cuda,clusters=2", &d, &err));
  CHECK_STR(err.message, "clusters=2: expected clusters=on or clusters=off");
  setenv("TILEC_CUDA_ARCH", "sm_89", 1);
  CHECK(describe("cuda", &d, &err));
  CHECK_STR(d.arch, "sm_89");
  CHECK(describe("cuda,arch=sm_80", &d, &err)); /* the option wins */
  CHECK_STR(d.arch, "sm_80");
  setenv("TILEC_CUDA_ARCH", "sm_9", 1);
  CHECK(!describe("cuda", &d, &err));
  CHECK_STR(err.message,
            "unknown cuda arch 'sm_9' from TILEC_CUDA_ARCH (supported: sm_80, sm_86, sm_89, sm_90, sm_90a)");
  setenv("TILEC_CUDA_ARCH", "", 1); /* empty: as if unset */
  CHECK(describe("cuda", &d, &err));
  unsetenv("TILEC_CUDA_ARCH");
  /* neither: the device's arch, or the documented default without one */
  char why[256];
  const tc_cu_api *cu = tc_cu_api_get(why, sizeof why);
  CHECK(describe("cuda", &d, &err));
  if (!cu || cu->device_count == 0) CHECK_STR(d.arch, TC_CUDA_DEFAULT_ARCH);
  else CHECK(tc_cuda_arch_known(d.arch));
}

/* The backends' generate lowers and prints through tc_cuda_generate_for and describes the
 * launch in the metadata; a kernel that cannot map onto the GPU is a program error at its line,
 * before NVRTC runs, and leaves nothing allocated. */
/* The program must outlive its IR: locations in errors point into its source. */
static tc_kernel_ir *kernel_from(tc_arena *a, tilec_context *ctx, const char *name, const char *src, tilec_program **keep,
                                 tilec_error *err) {
  *keep = tilec_program_from_string(ctx, name, src, strlen(src), err);
  return *keep ? tc_lower_kernel(*keep, NULL, 1, a, err) : NULL;
}

TEST(generate_lowers_prints_and_describes_the_launch) {
  tilec_error err = {0};
  tilec_context_options o = {.flags = TILEC_CONTEXT_NO_DISK_CACHE};
  tilec_context *ctx = tilec_context_create(&o, &err);
  tc_arena a;
  tc_arena_init(&a);
  static const char ok_src[] =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def scale(A: T.Tensor((1000, 64), \"float16\"), B: T.Tensor((1000, 64), \"float16\")):\n"
      "    with T.Kernel(T.ceildiv(1000, 32), threads=128) as bx:\n"
      "        x = T.alloc_fragment((32, 64), \"float32\")\n"
      "        m = T.alloc_fragment((32,), \"float32\")\n"
      "        T.copy(A[bx * 32, 0], x)\n"
      "        T.reduce_max(x, m, dim=1)\n"
      "        for i, j in T.Parallel(32, 64):\n"
      "            B[bx * 32 + i, j] = x[i, j] / m[i]\n";
  tilec_program *p1 = NULL, *p2 = NULL;
  tc_kernel_ir *k = kernel_from(&a, ctx, "scale.py", ok_src, &p1, &err);
  if (!k) printf("  %s", err.rendered);
  CHECK(k != NULL);
  tc_target_desc d;
  CHECK(tc_cuda_describe_arch("sm_90a", &d, NULL));
  tc_lowered lw = {&a, k, &d, NULL};
  tc_generated g = {0};
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  CHECK(strstr(g.full_source, "extern \"C\" __global__") != NULL);
  CHECK(strstr(g.full_source, "__shfl_xor_sync") != NULL); /* the row maximum stays in registers */
  CHECK(strstr(g.meta, "entry=tilec_scale\n") != NULL);
  CHECK(strstr(g.meta, "block=128,1,1\n") != NULL);
  CHECK(strstr(g.meta, "arch=sm_90a\n") != NULL);
  tc_generated_free(&g);
  /* an 8 x 16 accumulator: no 16 x 8 tensor-core tiling exists for any number of warps */
  static const char bad_src[] =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def small(A: T.Tensor((8, 16), \"float16\"), B: T.Tensor((16, 16), \"float16\"), C: T.Tensor((8, 16), \"float32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        a = T.alloc_shared((8, 16), \"float16\")\n"
      "        b = T.alloc_shared((16, 16), \"float16\")\n"
      "        c = T.alloc_fragment((8, 16), \"float32\")\n"
      "        T.copy(A, a)\n"
      "        T.copy(B, b)\n"
      "        T.gemm(a, b, c, clear_accum=True)\n"
      "        T.copy(c, C)\n";
  k = kernel_from(&a, ctx, "small.py", bad_src, &p2, &err);
  CHECK(k != NULL);
  lw.k = k;
  tc_error_clear(&err);
  /* an 8 x 16 accumulator has no split over 8 warps in 16 x 8 tiles: the gemm is a loop each
   * thread runs over the elements it holds (simt_gemm.c), not a tensor-core call */
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  CHECK(g.kernel_source && strstr(g.kernel_source, "tcg_gemm_") == NULL);
  CHECK(g.explain && strstr(g.explain, "T.gemm 8 x 16 x 16: a loop every thread runs") != NULL);
  tc_generated_free(&g);
  tc_arena_free(&a);
  tilec_program_destroy(p1);
  tilec_program_destroy(p2);
  tilec_context_destroy(ctx);
}

/* A batched gemm whose K loop runs the given number of iterations (the format argument), its
 * tiles loaded by TMA on sm_90. */
static const char bmm_src[] =
    "import tilelang.language as T\n"
    "b = T.symbolic('b')\n"
    "@T.prim_func\n"
    "def bmm(A: T.Tensor((b, 256, 128), \"float16\"), B: T.Tensor((b, 128, 256), \"float16\"), C: T.Tensor((b, 256, 256), \"float16\")):\n"
    "    with T.Kernel(2, 2, b, threads=128) as (bx, by, bz):\n"
    "        As = T.alloc_shared((128, 64), \"float16\")\n"
    "        Bs = T.alloc_shared((64, 128), \"float16\")\n"
    "        c = T.alloc_fragment((128, 128), \"float32\")\n"
    "        T.clear(c)\n"
    "        for k in T.Pipelined(%s, num_stages=3):\n"
    "            T.copy(A[bz, by * 128, k * 64], As)\n"
    "            T.copy(B[bz, k * 64, bx * 128], Bs)\n"
    "            T.gemm(As, Bs, c)\n"
    "        T.copy(c, C[bz, by * 128, bx * 128])\n";

/* bmm_src with the pipelined loop's trip count `trip`, read into a fresh context (*ctx, *p and
 * the arena *a belong to the caller). */
static tc_kernel_ir *bmm_kernel(tc_arena *a, tilec_context **ctx, tilec_program **p, const char *trip, tilec_error *err) {
  tilec_context_options o = {.flags = TILEC_CONTEXT_NO_DISK_CACHE};
  *ctx = tilec_context_create(&o, err);
  tc_arena_init(a);
  char src[sizeof bmm_src + 16];
  snprintf(src, sizeof src, bmm_src, trip);
  return kernel_from(a, *ctx, "bmm.py", src, p, err);
}

/* A pipelined gemm whose tiles are whole 128-byte rows loads them by TMA on sm_90a: tensor maps
 * after the symbolic dims, described in the metadata (a symbolic leading dim as sK); sm_80 keeps
 * cp.async and takes no map. */
TEST(tma_maps_in_the_signature_and_metadata) {
  tilec_error err = {0};
  tilec_context *ctx = NULL;
  tilec_program *p = NULL;
  tc_arena a;
  tc_kernel_ir *k = bmm_kernel(&a, &ctx, &p, "2", &err);
  if (!k) printf("  %s", err.rendered);
  CHECK(k != NULL);
  tc_target_desc d;
  CHECK(tc_cuda_describe_arch("sm_90a", &d, NULL));
  tc_lowered lw = {&a, k, &d, NULL};
  tc_generated g = {0};
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  CHECK(strstr(g.kernel_source, "const __grid_constant__ tcg_tmap tcg_tm0, const __grid_constant__ tcg_tmap tcg_tm1)") != NULL);
  /* warp-specialized: thread 128 (the producer warpgroup's first) issues the loads */
  CHECK(strstr(g.kernel_source, "tcg_tma_load_any(") != NULL && strstr(g.kernel_source, "tcg_mbar_wait(") != NULL);
  CHECK(strstr(g.kernel_source, "if ((int)threadIdx.x == 128) {") != NULL);
  /* one consumer warpgroup and tiles that fit twice: two blocks an SM, the consumers raised to 216
   * registers (the launch bound gives 128) */
  CHECK(strstr(g.kernel_source, "__launch_bounds__(256, 2)") != NULL);
  CHECK(strstr(g.kernel_source, "tcg_setmaxnreg_inc<216>();") != NULL && strstr(g.kernel_source, "tcg_setmaxnreg_dec<40>();") != NULL);
  CHECK(strstr(g.meta, "block=256,1,1\n") != NULL);
  /* every tile's loop is as long: the blocks that fit on the device walk all the tiles */
  CHECK(strstr(g.meta, "persistent=1\n") != NULL);
  CHECK(strstr(g.kernel_source, "for (int tcg_tile = (int)blockIdx.x; tcg_tile < tcg_tiles; tcg_tile += (int)gridDim.x) {") != NULL);
  CHECK(strstr(g.kernel_source, "tcg_cp_async") == NULL);
  CHECK(strstr(g.meta, "tmap=0,2,128,64,256,128,s0\n") != NULL);
  CHECK(strstr(g.meta, "tmap=1,2,64,128,128,256,s0\n") != NULL);
  tc_generated_free(&g);
  CHECK(tc_cuda_describe_arch("sm_80", &d, NULL));
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  CHECK(strstr(g.kernel_source, "tcg_tmap") == NULL && strstr(g.kernel_source, "tcg_cp_async") != NULL);
  CHECK(strstr(g.meta, "tmap=") == NULL);
  tc_generated_free(&g);
  tc_arena_free(&a);
  tilec_program_destroy(p);
  tilec_context_destroy(ctx);
}

/* clusters=on: consecutive grid-y tiles run as a cluster of two sharing B's tile (it depends on
 * bx, bz and k only): each block loads half of its 8-row groups and multicasts it, the map's box
 * is that half, both blocks' consumers free each stage, and the meta asks for clusters. Off (the
 * default), the kernel is the plain one. */
TEST(clusters_of_two_share_a_tile_by_multicast) {
  tilec_error err = {0};
  tilec_context *ctx = NULL;
  tilec_program *p = NULL;
  tc_arena a;
  tc_kernel_ir *k = bmm_kernel(&a, &ctx, &p, "2", &err);
  CHECK(k != NULL);
  tc_target_desc d;
  CHECK(tc_cuda_describe_arch("sm_90a", &d, NULL));
  d.clusters = 1;
  tc_lowered lw = {&a, k, &d, NULL};
  tc_generated g = {0};
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  const char *ks = g.kernel_source;
  CHECK(strstr(ks, "__launch_bounds__(256, 2) __cluster_dims__(2, 1, 1) tilec_bmm(") != NULL);
  CHECK(strstr(ks, "tcg_tma_load_multicast<2, 8192u, 4>(") != NULL); /* 64 x 128 halves: 8 KB, 4 groups */
  CHECK(strstr(ks, "tcg_tma_load_any(") != NULL);                    /* A's tile is each block's own */
  CHECK(strstr(ks, "tcg_mbar_arrive_cluster<2>(") != NULL && strstr(ks, "tcg_mbar_arrive_warp(") == NULL);
  CHECK(strstr(ks, "(int)(3), (int)(8));") != NULL); /* the empty barriers count both blocks' 4 consumer warps */
  CHECK(strstr(ks, "tcg_by = tcg_by * 2 + tcg_rank;") != NULL);
  int syncs = 0;
  for (const char *q = ks; (q = strstr(q, "tcg_cluster_sync();")) != NULL; q++) syncs++;
  CHECK_INT(syncs, 3); /* after the barriers are made, and before each role exits */
  CHECK(strstr(ks, "__syncthreads();") == NULL);
  CHECK(strstr(g.meta, "cluster=2\n") != NULL && strstr(g.meta, "persistent=1\n") != NULL);
  CHECK(strstr(g.meta, "tmap=0,2,128,64,256,128,s0\n") != NULL);
  CHECK(strstr(g.meta, "tmap=1,2,32,128,128,256,s0\n") != NULL); /* the box is one block's half */
  CHECK(g.explain && strstr(g.explain, "clusters of 2 blocks on consecutive grid-y tiles: each loads half of the 'Bs' tile") != NULL);
  tc_cuda_meta m;
  CHECK_INT(tc_cuda_meta_parse(g.meta, strlen(g.meta), &m, &err), TILEC_OK);
  CHECK_INT(m.cluster, 2);
  CHECK_INT(tc_cuda_meta_parse("entry=f\nblock=1,1,1\narch=sm_90a\ncluster=9\n", 42, &m, &err), TILEC_ERROR_INTERNAL);
  tc_generated_free(&g);
  /* off: no cluster, and --explain says they would apply */
  d.clusters = 0;
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  CHECK(strstr(g.kernel_source, "__cluster_dims__") == NULL && strstr(g.meta, "cluster=") == NULL);
  CHECK(strstr(g.kernel_source, "tcg_mbar_arrive_warp(") != NULL);
  CHECK(g.explain && strstr(g.explain, "no clusters: they are off; clusters of 2 could share this loop's tiles") != NULL);
  tc_generated_free(&g);
  tc_arena_free(&a);
  tilec_program_destroy(p);
  tilec_context_destroy(ctx);
}

/* A warp-specialized loop whose length depends on the tile (causal attention's shape) gets one
 * block per tile, which the hardware schedules as blocks finish; the meta says which. */
TEST(tile_dependent_loops_launch_a_block_per_tile) {
  tilec_error err = {0};
  tilec_context *ctx = NULL;
  tilec_program *p = NULL;
  tc_arena a;
  tc_kernel_ir *k = bmm_kernel(&a, &ctx, &p, "bx + 1", &err); /* tile (bx, ...) runs bx + 1 iterations */
  if (!k) printf("  %s", err.rendered);
  CHECK(k != NULL);
  tc_target_desc d;
  CHECK(tc_cuda_describe_arch("sm_90a", &d, NULL));
  tc_lowered lw = {&a, k, &d, NULL};
  tc_generated g = {0};
  CHECK_INT(tc_cuda_nvrtc_backend.generate(&lw, &g, &err), TILEC_OK);
  CHECK(g.meta && strstr(g.meta, "persistent=0\n") != NULL);
  tc_cuda_meta m;
  CHECK_INT(tc_cuda_meta_parse(g.meta, strlen(g.meta), &m, &err), TILEC_OK);
  CHECK(m.walks_tiles && !m.persistent);
  CHECK_INT(tc_cuda_meta_parse("entry=f\nblock=1,1,1\narch=sm_90a\npersistent=2\n", 45, &m, &err), TILEC_ERROR_INTERNAL);
  tc_generated_free(&g);
  tc_arena_free(&a);
  tilec_program_destroy(p);
  tilec_context_destroy(ctx);
}

/* Without a driver the reason says so; with one, the table is complete. */
TEST(driver_presence_is_reported) {
  char why[256] = "";
  const tc_cu_api *cu = tc_cu_api_get(why, sizeof why);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    CHECK(cu == NULL);
    CHECK_STR(why, "no NVIDIA driver: libcuda.so.1 cannot be loaded");
  } else {
    dlclose(lib);
    if (cu) CHECK(cu->LaunchKernel && cu->ModuleLoadData && cu->EventElapsedTime && cu->PointerGetAttribute);
    else CHECK(why[0] != 0);
  }
}

/* The public build-only path: a cubin for an explicit arch, or the emitter's absence said. */
TEST(compile_artifact_public_api) {
  tilec_error err = {0};
  tilec_context_options o = {.flags = TILEC_CONTEXT_NO_DISK_CACHE};
  tilec_context *ctx = tilec_context_create(&o, &err);
  CHECK(ctx != NULL);
  static const char src[] =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def add_one(A: T.Tensor((256,), \"float32\"), B: T.Tensor((256,), \"float32\")):\n"
      "    with T.Kernel(2, threads=128) as bx:\n"
      "        for i in T.Parallel(128):\n"
      "            B[bx * 128 + i] = A[bx * 128 + i] + 1.0\n";
  tilec_program *p = tilec_program_from_string(ctx, "add_one.py", src, strlen(src), &err);
  if (!p) printf("  %s", err.rendered);
  CHECK(p != NULL);
  tilec_compile_options co = {.target = "cuda,arch=sm_80"};
  void *out = NULL;
  size_t n = 0;
  tilec_status st = tilec_compile_artifact(p, &co, &out, &n, &err);
  const char *nvrtc = getenv("TILEC_NVRTC"); /* pip's nvidia-cuda-nvrtc, as tests/run.sh names it */
  void *lib = nvrtc && *nvrtc ? dlopen(nvrtc, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!lib) lib = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    if (st != TILEC_OK) printf("  %s\n", err.message);
    EXPECT(st == TILEC_OK && n > 4 && memcmp(out, "\177ELF", 4) == 0); /* the cubin alone */
  } else {
    EXPECT(st == TILEC_ERROR_TARGET); /* no NVRTC here: the reason is given */
  }
  tilec_free(out);
  tc_error_clear(&err);
  co.target = "cuda,arch=sm_1";
  EXPECT(tilec_compile_artifact(p, &co, &out, &n, &err) == TILEC_ERROR_USAGE);
  tc_error_clear(&err);
  co.target = "cpu,arch=sm_80";
  EXPECT(tilec_compile_artifact(p, &co, &out, &n, &err) == TILEC_ERROR_USAGE);
  EXPECT(strcmp(err.message, "unknown option 'arch' for target 'cpu' (cpu takes no options)") == 0);
  co.target = "cpu";
  EXPECT(tilec_compile_artifact(p, &co, &out, &n, &err) == TILEC_OK);
  EXPECT(out && n > 4 && memcmp(out, "\177ELF", 4) == 0); /* the shared object */
  tilec_free(out);
  tilec_program_destroy(p);
  tilec_context_destroy(ctx);
}

int main(void) {
  char why[512] = "";
  char path[PATH_MAX];
  bool have_nvrtc = tc_nvrtc_locate(path, sizeof path);
  if (have_nvrtc) RUN(identity_does_not_load_nvrtc); /* before anything loads it */
  if (tc_nvrtc_available(why, sizeof why)) {
    RUN(nvrtc_sm80);
    RUN(nvrtc_sm90a);
    RUN(nvrtc_error_carries_the_log);
    RUN(build_stores_nothing_on_failure);
    RUN(compile_artifact_public_api);
  } else {
    printf("SKIP NVRTC tests: %s\n", why);
  }
  RUN(meta_parsing);
  RUN(arch_rule_and_options);
  RUN(generate_lowers_prints_and_describes_the_launch);
  RUN(tma_maps_in_the_signature_and_metadata);
  RUN(clusters_of_two_share_a_tile_by_multicast);
  RUN(tile_dependent_loops_launch_a_block_per_tile);
  RUN(driver_presence_is_reported);
  TEST_MAIN_END();
}
