/* streamk_streams: a stream-K GEMM (examples/gemm.py, target cuda,streamk=on) launched many
 * times, alternately on two non-blocking streams, gives on each stream exactly the result of one
 * launch on its own. The launches share the kernel's workspace (partial sums and flags), so
 * the runtime must order them across streams (runtime.c); without that, two launches running at
 * once would mix their partial sums. Stream-K's sums are in a fixed order, so the comparison is
 * bitwise. Run by tests/gpu/streamk.sh; without a CUDA device it says so and exits 0.
 *   streamk_streams [M N K]   (default 4096 4096 4096: 512 tiles of 128 x 256, cut on 132 SMs) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "target/cuda/driver.h"
#include "tilec.h"

static const tc_cu_api *cu;

static int ck(tc_cu_result r, const char *what) {
  if (r == TC_CU_SUCCESS) return 1;
  char d[200];
  tc_cu_describe(cu, r, d, sizeof d);
  printf("FAIL streamk streams: %s: %s\n", what, d);
  return 0;
}

static void tensor(DLTensor *t, int64_t *shape, int64_t r, int64_t c, tc_cu_devptr p) {
  memset(t, 0, sizeof *t);
  shape[0] = r, shape[1] = c;
  t->ndim = 2;
  t->shape = shape;
  t->dtype = (DLDataType){kDLFloat, 16, 1};
  t->device.device_type = kDLCUDA;
  t->data = (void *)(uintptr_t)p;
}

int main(int argc, char **argv) {
  long M = argc > 3 ? atol(argv[1]) : 4096, N = argc > 3 ? atol(argv[2]) : 4096, K = argc > 3 ? atol(argv[3]) : 4096;
  char why[256];
  cu = tc_cu_api_get(why, sizeof why);
  tilec_error err = {0};
  tc_cu_context cuctx;
  if (!cu || cu->device_count == 0 || tc_cu_retain_device(cu, 0, &cuctx, &err) != TILEC_OK) {
    printf("no CUDA device: nothing checked\n");
    return 0;
  }
  char dm[32], dn[32], dk[32];
  snprintf(dm, sizeof dm, "%ld", M), snprintf(dn, sizeof dn, "%ld", N), snprintf(dk, sizeof dk, "%ld", K);
  tilec_define d[] = {{"M", dm},          {"N", dn},        {"K", dk},           {"block_M", "128"},
                      {"block_N", "256"}, {"block_K", "64"}, {"threads", "256"}, {"num_stages", "4"}};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  tilec_program *p = ctx ? tilec_program_from_file(ctx, "examples/gemm.py", &err) : NULL;
  tilec_compile_options co = {.defines = d, .num_defines = sizeof d / sizeof *d, .target = "cuda,streamk=on"};
  tilec_kernel *k = p ? tilec_compile(p, &co, &err) : NULL;
  tilec_program_destroy(p);
  if (!k) {
    printf("FAIL streamk streams: %s", err.rendered);
    return 1;
  }
  size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  uint16_t *host = malloc(2 * (na > nb ? na : nb)), *ref = malloc(2 * nc), *got = malloc(2 * nc);
  tc_cu_devptr A, B, C[3];
  tc_cu_stream s[2];
  int ok = host && ref && got && ck(cu->MemAlloc(&A, 2 * na), "cuMemAlloc") && ck(cu->MemAlloc(&B, 2 * nb), "cuMemAlloc");
  for (int i = 0; ok && i < 3; i++) ok = ck(cu->MemAlloc(&C[i], 2 * nc), "cuMemAlloc");
  for (int i = 0; ok && i < 2; i++) ok = ck(cu->StreamCreate(&s[i], 1 /* CU_STREAM_NON_BLOCKING */), "cuStreamCreate");
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t e = 0; ok && e < (na > nb ? na : nb); e++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    tc_dtype_store_f64(tc_dt(TC_DT_FLOAT16), host, e, ((double)(x >> 40) / (1 << 24) - 0.5));
  }
  ok = ok && ck(cu->MemcpyHtoD(A, host, 2 * na), "cuMemcpyHtoD") && ck(cu->MemcpyHtoD(B, host, 2 * nb), "cuMemcpyHtoD");
  int64_t sh[5][2];
  DLTensor ta, tb, tc[3];
  tensor(&ta, sh[0], M, K, A), tensor(&tb, sh[1], K, N, B);
  for (int i = 0; i < 3; i++) tensor(&tc[i], sh[2 + i], M, N, C[i]);
  /* the reference: one launch, alone */
  DLTensor *args[3] = {&ta, &tb, &tc[2]};
  ok = ok && tilec_kernel_launch(k, args, 3, &err) == TILEC_OK && ck(cu->MemcpyDtoH(ref, C[2], 2 * nc), "cuMemcpyDtoH");
  for (int round = 0; ok && round < 25; round++)
    for (int i = 0; ok && i < 2; i++) {
      args[2] = &tc[i];
      ok = tilec_kernel_launch_stream(k, args, 3, s[i], &err) == TILEC_OK;
    }
  for (int i = 0; ok && i < 2; i++) ok = ck(cu->StreamSynchronize(s[i]), "cuStreamSynchronize");
  int same = ok;
  for (int i = 0; ok && i < 2; i++) {
    ok = ck(cu->MemcpyDtoH(got, C[i], 2 * nc), "cuMemcpyDtoH");
    size_t diff = 0;
    for (size_t e = 0; ok && e < nc; e++) diff += got[e] != ref[e];
    if (diff) printf("stream %d: %zu of %zu elements differ from the launch alone\n", i, diff, nc);
    same &= diff == 0;
  }
  if (!ok && err.message[0]) printf("FAIL streamk streams: %s\n", err.message);
  printf("%s streamk streams: 50 launches on two streams, %ld x %ld x %ld, bitwise equal to one launch alone\n",
         ok && same ? "PASS" : "FAIL", M, N, K);
  tilec_kernel_destroy(k);
  tilec_context_destroy(ctx);
  free(host), free(ref), free(got);
  return ok && same ? 0 : 1;
}
