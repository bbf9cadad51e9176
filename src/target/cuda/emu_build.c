/* emu_build.c: generated CUDA C++ built for the CPU (emu_build.h).
 *
 * Two source passes, both on the code generator's fixed spellings (an unexpected spelling is an
 * error naming it, not a silent miscompile):
 *  - `extern __shared__ ... NAME[];` becomes `TYPE *NAME = (TYPE *)tcg_emu_cur->smem;`;
 *  - for every `extern "C" __global__ void [__attr(...)]... NAME(PARAMS)` an entry point is
 *    appended that calls NAME(*(T0 *)args[0], ...) and then tcg_emu_thread_exit(). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "target/cuda/emu/tcg_emu_abi.h"
#include "target/cuda/emu_build.h"
#include "util/diag.h"
#include "util/strbuf.h"

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* `extern __shared__ [__align__(n)] TYPE NAME[];` at p (up to ';') -> the pointer declaration. */
static bool shared_decl(const char *p, const char *end, tc_strbuf *out, char *why, size_t cap) {
  const char *q = p + strlen("extern __shared__");
  const char *br = strstr(q, "[]");
  if (!br || br > end) {
    snprintf(why, cap, "a dynamic shared memory declaration without [] (%.60s)", p);
    return false;
  }
  const char *ne = br, *nb = ne;
  while (nb > q && ident_char(nb[-1])) nb--;
  tc_strbuf type;
  tc_sb_init(&type);
  for (const char *t = q; t < nb;) {
    if (!strncmp(t, "__align__(", 10)) {
      const char *c = strchr(t, ')');
      t = c ? c + 1 : nb;
      continue;
    }
    tc_sb_putc(&type, *t++);
  }
  tc_sb_printf(out, "%s*%.*s = (%s*)tcg_emu_cur->smem;", tc_sb_cstr(&type), (int)(ne - nb), nb, tc_sb_cstr(&type));
  tc_sb_free(&type);
  return true;
}

/* The parameter types of the kernel whose parameter list starts after `open` (the '('). */
static bool kernel_wrapper(const char *name, size_t nlen, const char *open, tc_strbuf *wr, char *why, size_t cap) {
  const char *close = strchr(open, ')');
  if (!close) {
    snprintf(why, cap, "kernel '%.*s': no end to its parameter list", (int)nlen, name);
    return false;
  }
  tc_sb_printf(wr, "extern \"C\" __attribute__((visibility(\"default\"))) void tc_cuemu_entry_%.*s(void *const *args) {\n  %.*s(",
               (int)nlen, name, (int)nlen, name);
  int i = 0;
  for (const char *p = open + 1; p < close;) {
    const char *comma = memchr(p, ',', (size_t)(close - p));
    const char *e = comma ? comma : close, *ne = e;
    while (ne > p && isspace((unsigned char)ne[-1])) ne--;
    const char *nb = ne;
    while (nb > p && ident_char(nb[-1])) nb--;
    while (p < nb && isspace((unsigned char)*p)) p++;
    if (nb == ne || nb == p) {
      if (ne == p && !comma) break; /* no parameters */
      snprintf(why, cap, "kernel '%.*s': cannot read parameter %d", (int)nlen, name, i);
      return false;
    }
    tc_sb_printf(wr, "%s*(%.*s*)args[%d]", i ? ", " : "", (int)(nb - p), p, i);
    i++;
    p = comma ? comma + 1 : close;
  }
  tc_sb_puts(wr, ");\n  tcg_emu_thread_exit();\n}\n");
  return true;
}

static bool transform(const char *src, tc_strbuf *out, char *why, size_t cap) {
  tc_strbuf wrappers;
  tc_sb_init(&wrappers);
  tc_sb_puts(out, "#define TCG_EMU 1\n#include \"tcg_emu.h\"\n");
  static const char k_kernel[] = "extern \"C\" __global__ void ";
  bool ok = true;
  for (const char *p = src; *p && ok;) {
    if (!strncmp(p, "extern __shared__", 17)) {
      const char *semi = strchr(p, ';');
      if (!semi) {
        snprintf(why, cap, "a dynamic shared memory declaration without ';'");
        ok = false;
        break;
      }
      ok = shared_decl(p, semi, out, why, cap);
      p = semi + 1;
      continue;
    }
    if (!strncmp(p, k_kernel, sizeof k_kernel - 1)) {
      const char *q = p + sizeof k_kernel - 1;
      for (;;) { /* attributes: __launch_bounds__(...), __cluster_dims__(...) */
        while (isspace((unsigned char)*q)) q++;
        if (strncmp(q, "__", 2) != 0) break;
        const char *c = strchr(q, ')');
        if (!c) break;
        q = c + 1;
      }
      const char *nb = q;
      while (ident_char(*q)) q++;
      if (q == nb || *q != '(') {
        snprintf(why, cap, "cannot read a kernel's name (%.60s)", p);
        ok = false;
        break;
      }
      ok = kernel_wrapper(nb, (size_t)(q - nb), q, &wrappers, why, cap);
    }
    tc_sb_putc(out, *p++);
  }
  if (ok) tc_sb_puts(out, tc_sb_cstr(&wrappers));
  tc_sb_free(&wrappers);
  return ok;
}

tilec_status tc_cuemu_compile(const char *source, void **so, size_t *so_size, char **log, tilec_error *err) {
  *so = NULL;
  *so_size = 0;
  if (log) *log = NULL;
  char why[512] = "";
  tc_strbuf text;
  tc_sb_init(&text);
  if (!transform(source, &text, why, sizeof why)) {
    tc_sb_free(&text);
    tc_error(err, TILEC_ERROR_TARGET, "cuda emulator: %s", why);
    return TILEC_ERROR_TARGET;
  }
  tilec_status st = tc_cxx_build_so("cuda emulator", NULL, "kernel.cu.cc", tc_sb_cstr(&text), tc_cuda_emu_headers,
                                    tc_cuda_emu_nheaders, so, so_size, log, err);
  tc_sb_free(&text);
  return st;
}
