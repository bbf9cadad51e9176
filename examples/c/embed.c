/* embed.c: using tilec from C. Compiles examples/softmax.py for the cpu target, runs it on a
 * 200 x 1000 float16 input given as DLPack tensors, checks the result against tilec's reference
 * interpreter, and prints the comparison.
 *
 *   cc -o embed examples/c/embed.c $(pkg-config --cflags --libs tilec)     # after `make install`
 *   cc -o embed examples/c/embed.c -Iinclude build/libtilec.a -ldl -lpthread -lm   # in the tree
 *   ./embed [examples/softmax.py]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tilec.h>

enum { M = 200, N = 1000 };

/* float -> IEEE half, round to nearest even (enough for this example's inputs in [-4, 4]). */
static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp < 113) return (uint16_t)sign; /* tiny: flush (not reached here) */
  uint32_t h = ((exp - 112) << 10) | (man >> 13), rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

static DLTensor tensor(void *data, int ndim, int64_t *shape, uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.shape = shape;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  return t;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/softmax.py";
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  tilec_program *prog = ctx ? tilec_program_from_file(ctx, path, &err) : NULL;
  if (!prog) {
    fputs(err.rendered, stderr);
    tilec_context_destroy(ctx);
    return 1;
  }
  tilec_define defs[] = {{"N", "1000"}}; /* softmax.py: N is a factory parameter, m is symbolic */
  tilec_compile_options opts = {0};
  opts.defines = defs;
  opts.num_defines = 1;
  opts.target = "cpu";
  tilec_kernel *k = tilec_compile(prog, &opts, &err);
  if (!k) {
    fputs(err.rendered, stderr);
    tilec_program_destroy(prog);
    tilec_context_destroy(ctx);
    return 1;
  }
  printf("compiled %s for %s/%s (cache %s) in %.1f ms\n", tilec_kernel_name(k), tilec_kernel_target(k),
         tilec_kernel_backend(k), tilec_kernel_cache_status(k), tilec_kernel_compile_ms(k));
  size_t np = tilec_kernel_num_params(k);
  for (size_t i = 0; i < np; i++) {
    tilec_param_info p;
    tilec_kernel_param(k, i, &p);
    printf("  param %s: %s, %d dims%s\n", p.name, p.dtype, p.ndim, p.is_output ? ", output" : "");
  }

  /* softmax(X: float16[m, N]) -> Y: float16[m, N], LSE: float32[m] */
  uint16_t *x = malloc(sizeof(uint16_t) * M * N), *y = calloc(M * N, 2), *yr = calloc(M * N, 2);
  float *lse = calloc(M, 4), *lser = calloc(M, 4);
  for (int i = 0; i < M * N; i++) x[i] = to_half((float)((i * 37 % 101) - 50) / 12.5f);
  int64_t s2[2] = {M, N}, s1[1] = {M};
  DLTensor tx = tensor(x, 2, s2, kDLFloat, 16), ty = tensor(y, 2, s2, kDLFloat, 16), tl = tensor(lse, 1, s1, kDLFloat, 32);
  DLTensor tyr = tensor(yr, 2, s2, kDLFloat, 16), tlr = tensor(lser, 1, s1, kDLFloat, 32);
  DLTensor *args[3] = {&tx, &ty, &tl}, *ref[3] = {&tx, &tyr, &tlr};
  int rc = 0;
  if (np != 3 || tilec_kernel_launch(k, args, 3, &err) != TILEC_OK || tilec_kernel_run_reference(k, ref, 3, &err) != TILEC_OK) {
    fputs(err.rendered[0] ? err.rendered : "unexpected parameters\n", stderr);
    rc = 1;
  } else {
    tilec_compare c;
    tilec_compare_tensors(&ty, &tyr, &c, &err);
    printf("Y against the reference: max_abs_err=%.3g cosine=%.9f argmax_match=%d -> %s\n", c.max_abs_err, c.cosine,
           c.argmax_match, c.ok ? "ok" : "FAILED");
    rc = c.ok ? 0 : 3;
  }
  free(x), free(y), free(yr), free(lse), free(lser);
  tilec_kernel_destroy(k);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}
