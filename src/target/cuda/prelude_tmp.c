/* prelude_tmp.c: stand-in device prelude until the real one (src/target/cuda/prelude/) lands:
 * fixed-width types and the cpu dtype prelude made device code. */
#include <string.h>

#include "dtype/dtype.h"
#include "target/cuda/codegen.h"
#include "util/strbuf.h"

const char *tc_cuda_prelude(void) {
  static char *text; /* built once; the same for every caller (benign race: identical bytes) */
  if (text) return text;
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_puts(&sb,
             "typedef signed char int8_t; typedef unsigned char uint8_t; typedef short int16_t; typedef unsigned short uint16_t;\n"
             "typedef int int32_t; typedef unsigned int uint32_t; typedef long long int64_t; typedef unsigned long long uint64_t;\n"
             "typedef unsigned long long uintptr_t;\n"
             "#define INT8_MIN (-128)\n#define INT8_MAX 127\n#define INT16_MIN (-32768)\n#define INT16_MAX 32767\n"
             "#define INT32_MIN (-2147483647 - 1)\n#define INT32_MAX 2147483647\n#define INT64_MIN (-9223372036854775807ll - 1)\n"
             "#define INT64_MAX 9223372036854775807ll\n#define UINT8_MAX 255\n#define UINT16_MAX 65535\n#define UINT32_MAX 4294967295u\n"
             "#define UINT64_MAX 18446744073709551615ull\n#define NAN __int_as_float(0x7fc00000)\n#define INFINITY __int_as_float(0x7f800000)\n"
             "static __device__ __forceinline__ void tcg__memcpy(void *d, const void *s, int n) { for (int i = 0; i < n; i++) ((char *)d)[i] = ((const char *)s)[i]; }\n");
  const char *p = tc_dtype_c_prelude();
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
    if (n >= 8 && !strncmp(p, "#include", 8)) { p += n; continue; }
    const char *si = "static inline ";
    for (size_t i = 0; i < n;) {
      if (i + strlen(si) <= n && !strncmp(p + i, si, strlen(si))) {
        tc_sb_puts(&sb, "static __device__ __forceinline__ ");
        i += strlen(si);
      } else if (i + 7 <= n && !strncmp(p + i, "memcpy(", 7)) {
        tc_sb_puts(&sb, "tcg__memcpy(");
        i += 7;
      } else {
        tc_sb_putc(&sb, p[i++]);
      }
    }
    p += n;
  }
  text = tc_sb_take(&sb);
  return text;
}
