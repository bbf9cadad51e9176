/* dtype_dump: prints tilec's conversion tables, for comparison with other implementations
 * (tests/e2e/dtype_ml_dtypes.sh compares them with ml_dtypes and numpy).
 *
 *   dtype_dump decode TYPE            one line per code: "0xCODE 0xFLOAT32BITS"
 *   dtype_dump encode TYPE [--sat]    stdin: raw little-endian float32 values;
 *                                     stdout: one raw uint32 code per value
 *   dtype_dump encode64 TYPE [--sat]  the same with float64 inputs (rounded once, directly)
 *   dtype_dump int TYPE               stdin: raw float64; stdout: raw int64 results of the
 *                                     float->integer conversion (uint64 results as bits)
 * TYPE is any spelling tilec accepts ("float8_e4m3fn", "bf16", ...). Exit status 2 on a bad
 * command line. */
#include <stdio.h>
#include <string.h>

#include "dtype/dtype.h"

static int usage(void) {
  fprintf(stderr, "usage: dtype_dump decode|encode|encode64|int TYPE [--sat]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) return usage();
  const char *mode = argv[1];
  bool sat = argc == 4 && strcmp(argv[3], "--sat") == 0;
  if (argc == 4 && !sat) return usage();
  tc_dtype d;
  char sug[64];
  if (!tc_dtype_lookup(argv[2], &d, sug, sizeof sug) || d.lanes != 1) {
    fprintf(stderr, "dtype_dump: unknown dtype '%s'%s%s\n", argv[2], *sug ? "; did you mean " : "", sug);
    return 2;
  }
  tc_scalar_type t = (tc_scalar_type)d.code;
  bool narrow_float = tc_dtype_is_float(d) && tc_dtype_bits(d) < 32;
  if (strcmp(mode, "decode") == 0 && narrow_float) {
    for (uint32_t c = 0; c < (1u << tc_dtype_bits(d)); c++) {
      float f = tc_narrow_to_float(t, c);
      uint32_t u;
      memcpy(&u, &f, 4);
      printf("0x%x 0x%08x\n", c, u);
    }
    return 0;
  }
  if (strcmp(mode, "encode") == 0 && narrow_float) {
    float buf[4096];
    uint32_t out[4096];
    size_t n;
    while ((n = fread(buf, 4, 4096, stdin)) > 0) {
      for (size_t i = 0; i < n; i++) out[i] = tc_float_to_narrow(t, buf[i], sat);
      if (fwrite(out, 4, n, stdout) != n) return 1;
    }
    return 0;
  }
  if (strcmp(mode, "encode64") == 0 && narrow_float) {
    double buf[4096];
    uint32_t out[4096];
    size_t n;
    while ((n = fread(buf, 8, 4096, stdin)) > 0) {
      for (size_t i = 0; i < n; i++) out[i] = tc_double_to_narrow(t, buf[i], sat);
      if (fwrite(out, 4, n, stdout) != n) return 1;
    }
    return 0;
  }
  if (strcmp(mode, "int") == 0 && tc_dtype_is_int(d)) {
    double buf[4096];
    int64_t out[4096];
    size_t n;
    while ((n = fread(buf, 8, 4096, stdin)) > 0) {
      for (size_t i = 0; i < n; i++)
        out[i] = tc_dtype_is_signed(d) ? tc_double_to_sint(t, buf[i]) : (int64_t)tc_double_to_uint(t, buf[i]);
      if (fwrite(out, 8, n, stdout) != n) return 1;
    }
    return 0;
  }
  return usage();
}
