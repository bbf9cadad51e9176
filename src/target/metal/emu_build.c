/* emu_build.c: building MSL for the emulator (emu.h).
 *
 * The MSL text is compiled as C++20 (Metal 4's matmul2d takes its descriptor as a class-type
 * template argument) against the stand-ins for <metal_stdlib> and <metal_tensor> (which is also
 * <MetalPerformancePrimitives/MetalPerformancePrimitives.h>), after two source passes:
 *  - a threadgroup array declared in a function body (`threadgroup float t[256];`) becomes
 *    `static thread_local`, one copy per OS thread: the emulator runs one threadgroup at a time
 *    on an OS thread, so its threads share the array as they would on the GPU;
 *  - for every kernel (`kernel void f(...)` or `[[kernel, ...]] void f(...)`) a C entry point
 *    `tc_emu_entry_f(bindings, ids)` is appended that passes [[buffer(i)]] arguments from
 *    bindings[i] and the thread-position attributes from the runner's ids.
 * The compiler and its flags: util/cxxlib.c. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/metal/emu.h"
#include "target/metal/emu_internal.h"
#include "util/diag.h"
#include "util/cxxlib.h"
#include "util/strbuf.h"

bool tc_emu_available(const char *cxx, char *why, size_t cap) { return tc_cxx_available(cxx, why, cap); }

char *tc_emu_toolchain_id(const char *cxx, tilec_error *err) { return tc_cxx_toolchain_id(cxx, "emu", TC_EMU_ABI, err); }

/* ---- the source passes ---- */
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Length of the comment, string or character literal at p, or 0. */
static size_t skip_len(const char *p) {
  if (p[0] == '/' && p[1] == '/') return strcspn(p, "\n");
  if (p[0] == '/' && p[1] == '*') {
    const char *e = strstr(p + 2, "*/");
    return e ? (size_t)(e + 2 - p) : strlen(p);
  }
  if (p[0] == '"' || p[0] == '\'') {
    size_t i = 1;
    while (p[i] && p[i] != p[0]) i += (p[i] == '\\' && p[i + 1]) ? 2 : 1;
    return p[i] ? i + 1 : i;
  }
  return 0;
}

/* Whether the identifier `w` starts at s[i] as a whole token. */
static bool word_at(const char *s, size_t i, const char *w) {
  size_t n = strlen(w);
  return strncmp(s + i, w, n) == 0 && (i == 0 || !ident_char(s[i - 1])) && !ident_char(s[i + n]);
}

/* The last significant character before s[i] (skipping spaces), or 0. Comments before a
 * declaration are rare in generated code; a comment there only makes the pass miss it. */
static char prev_sig(const char *s, size_t i) {
  while (i > 0 && isspace((unsigned char)s[i - 1])) i--;
  return i > 0 ? s[i - 1] : 0;
}

/* A threadgroup declaration starting at s[i] declares an array: '[' before any of ";=({". */
static bool declares_array(const char *s, size_t i) {
  for (; s[i]; i++) {
    if (strchr(";=({", s[i])) return false;
    if (s[i] == '[' && s[i + 1] != '[') return true;
    if (s[i] == '[') return false; /* an attribute */
  }
  return false;
}

typedef struct kparam {
  char type[256];
  char name[64];
  char attr[64];
  int index;
} kparam;

/* Parses one kernel's parameters from the text between its parentheses. */
static bool parse_params(const char *p, size_t len, kparam *out, int cap, int *n, char *why, size_t whycap) {
  *n = 0;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= len; i++) {
    char c = i < len ? p[i] : ',';
    if (c == '(' || c == '<' || (c == '[' && i + 1 < len && p[i + 1] == '[')) depth++;
    else if (c == ')' || c == '>' || (c == ']' && i + 1 < len && p[i + 1] == ']')) depth--;
    if (c != ',' || depth > 0) continue;
    const char *q = p + start;
    size_t qn = i - start;
    start = i + 1;
    while (qn && isspace((unsigned char)*q)) q++, qn--;
    if (!qn) continue;
    if (*n >= cap) {
      snprintf(why, whycap, "too many kernel parameters");
      return false;
    }
    kparam *k = &out[(*n)++];
    memset(k, 0, sizeof *k);
    k->index = -1;
    const char *at = NULL;
    for (size_t j = 0; j + 1 < qn; j++)
      if (q[j] == '[' && q[j + 1] == '[') {
        at = q + j;
        break;
      }
    size_t decl_len = at ? (size_t)(at - q) : qn;
    if (at) { /* [[name]] or [[name(i)]] */
      const char *a = at + 2;
      while (isspace((unsigned char)*a)) a++;
      size_t an = 0;
      while (ident_char(a[an])) an++;
      snprintf(k->attr, sizeof k->attr, "%.*s", (int)an, a);
      const char *paren = a + an;
      while (isspace((unsigned char)*paren)) paren++;
      if (*paren == '(') k->index = atoi(paren + 1);
    }
    while (decl_len && isspace((unsigned char)q[decl_len - 1])) decl_len--;
    size_t name_end = decl_len, name_start = decl_len;
    while (name_start && ident_char(q[name_start - 1])) name_start--;
    if (name_start == name_end) {
      snprintf(why, whycap, "cannot read the kernel parameter '%.*s'", (int)qn, q);
      return false;
    }
    snprintf(k->name, sizeof k->name, "%.*s", (int)(name_end - name_start), q + name_start);
    /* the type without restrict qualifiers (they do not survive template matching) */
    tc_strbuf t;
    tc_sb_init(&t);
    for (size_t j = 0; j < name_start;) {
      if (ident_char(q[j]) && (j == 0 || !ident_char(q[j - 1]))) {
        size_t w = 0;
        while (j + w < name_start && ident_char(q[j + w])) w++;
        bool restrict_kw = (w == 10 && !strncmp(q + j, "__restrict", 10)) || (w == 12 && !strncmp(q + j, "__restrict__", 12)) ||
                           (w == 8 && !strncmp(q + j, "restrict", 8));
        if (!restrict_kw) tc_sb_printf(&t, "%.*s", (int)w, q + j);
        j += w;
      } else {
        tc_sb_putc(&t, q[j] == '\n' ? ' ' : q[j]);
        j++;
      }
    }
    snprintf(k->type, sizeof k->type, "%s", tc_sb_cstr(&t));
    tc_sb_free(&t);
  }
  return true;
}

/* How the wrapper passes one parameter, or NULL with why. */
static bool param_expr(const kparam *k, tc_strbuf *sb, char *why, size_t whycap) {
  static const struct { const char *attr, *x, *y, *z; } ids[] = {
      {"thread_position_in_threadgroup", "id->tid[0]", "id->tid[1]", "id->tid[2]"},
      {"threadgroup_position_in_grid", "id->tg[0]", "id->tg[1]", "id->tg[2]"},
      {"threadgroups_per_grid", "id->ntg[0]", "id->ntg[1]", "id->ntg[2]"},
      {"threads_per_threadgroup", "id->tptg[0]", "id->tptg[1]", "id->tptg[2]"},
      {"dispatch_threads_per_threadgroup", "id->tptg[0]", "id->tptg[1]", "id->tptg[2]"},
      {"thread_position_in_grid", "id->tg[0] * id->tptg[0] + id->tid[0]", "id->tg[1] * id->tptg[1] + id->tid[1]",
       "id->tg[2] * id->tptg[2] + id->tid[2]"},
      {"threads_per_grid", "id->ntg[0] * id->tptg[0]", "id->ntg[1] * id->tptg[1]", "id->ntg[2] * id->tptg[2]"},
      {"thread_index_in_threadgroup", "id->tindex", "0", "0"},
      {"thread_index_in_simdgroup", "id->lane", "0", "0"},
      {"simdgroup_index_in_threadgroup", "id->sg", "0", "0"},
      {"simdgroups_per_threadgroup", "id->nsg", "0", "0"},
      {"threads_per_simdgroup", "32u", "0", "0"},
  };
  if (!strcmp(k->attr, "buffer")) {
    tc_sb_printf(sb, "tc_emu_arg<%s>::get(b[%d])", k->type, k->index);
    return true;
  }
  if (!strcmp(k->attr, "threadgroup")) {
    if (k->index != 0) {
      snprintf(why, whycap, "parameter '%s': the emulator has one dynamic threadgroup buffer, [[threadgroup(0)]]", k->name);
      return false;
    }
    tc_sb_printf(sb, "(%s)id->tg_mem", k->type);
    return true;
  }
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    if (!strcmp(k->attr, ids[i].attr)) {
      tc_sb_printf(sb, "tc_emu_id<%s>::get(%s, %s, %s)", k->type, ids[i].x, ids[i].y, ids[i].z);
      return true;
    }
  snprintf(why, whycap, "parameter '%s': the emulator does not provide [[%s]]", k->name, k->attr[0] ? k->attr : "no attribute");
  return false;
}

static const char k_wrapper_head[] =
    "\n/* ---- appended by tilec's Metal emulator: C entry points for the runner ---- */\n"
    "extern \"C\" {\n"
    "typedef struct tc_emu_ids { unsigned tid[3], tg[3], ntg[3], tptg[3]; unsigned tindex, lane, sg, nsg; void *tg_mem; } tc_emu_ids;\n"
    "__attribute__((visibility(\"default\"))) void tc_emu_install(const tc_emu_runtime *rt) { tc_emu_rt = rt; }\n"
    "__attribute__((visibility(\"default\"))) int tc_emu_abi(void) { return %d; }\n"
    "}\n"
    "template <class T> struct tc_emu_arg { static T get(void *p) { return *(T *)p; } };\n"
    "template <class T> struct tc_emu_arg<T *> { static T *get(void *p) { return (T *)p; } };\n"
    "template <class T> struct tc_emu_arg<T &> { static T &get(void *p) { return *(T *)p; } };\n"
    "template <class T> struct tc_emu_id { static T get(unsigned x, unsigned, unsigned) { return (T)x; } };\n"
    "template <class E> struct tc_emu_id<metal::vec<E, 2>> { static metal::vec<E, 2> get(unsigned x, unsigned y, unsigned) { return metal::vec<E, 2>((E)x, (E)y); } };\n"
    "template <class E> struct tc_emu_id<metal::vec<E, 3>> { static metal::vec<E, 3> get(unsigned x, unsigned y, unsigned z) { return metal::vec<E, 3>((E)x, (E)y, (E)z); } };\n";

/* The source with threadgroup arrays made per-OS-thread and the entry points appended. */
static bool transform(const char *src, tc_strbuf *out, char *why, size_t whycap) {
  tc_strbuf wrappers;
  tc_sb_init(&wrappers);
  tc_sb_printf(&wrappers, k_wrapper_head, TC_EMU_ABI);
  int nkernels = 0;
  bool pending_kernel = false;
  size_t n = strlen(src);
  for (size_t i = 0; i < n;) {
    size_t sk = skip_len(src + i);
    if (sk) {
      tc_sb_printf(out, "%.*s", (int)sk, src + i);
      i += sk;
      continue;
    }
    if (src[i] == '[' && src[i + 1] == '[') {
      /* an attribute: kernel marks a kernel; the text goes (the address-space macros would
       * break [[threadgroup(0)]], and C++ has no use for the rest) */
      const char *e = strstr(src + i + 2, "]]");
      size_t end = e ? (size_t)(e + 2 - src) : n;
      for (size_t j = i + 2; j + 6 <= end; j++)
        if (word_at(src, j, "kernel")) pending_kernel = true;
      for (size_t j = i; j < end; j++) tc_sb_putc(out, src[j] == '\n' ? '\n' : ' ');
      i = end;
      continue;
    }
    if (word_at(src, i, "kernel")) pending_kernel = true;
    if (word_at(src, i, "threadgroup") && strchr("{};", prev_sig(src, i)) && prev_sig(src, i) && declares_array(src, i)) {
      tc_sb_puts(out, "static thread_local");
      i += strlen("threadgroup");
      continue;
    }
    if (pending_kernel && word_at(src, i, "void")) {
      /* void NAME ( params ) */
      size_t j = i + 4;
      while (isspace((unsigned char)src[j])) j++;
      size_t ns = j;
      while (ident_char(src[j])) j++;
      size_t ne = j;
      while (isspace((unsigned char)src[j])) j++;
      if (ne > ns && src[j] == '(') {
        size_t open = j;
        int depth = 0;
        for (; j < n; j++) {
          if (src[j] == '(') depth++;
          else if (src[j] == ')' && --depth == 0) break;
        }
        if (j >= n) {
          snprintf(why, whycap, "kernel '%.*s': unbalanced parentheses", (int)(ne - ns), src + ns);
          tc_sb_free(&wrappers);
          return false;
        }
        kparam ps[64];
        int np = 0;
        if (!parse_params(src + open + 1, j - open - 1, ps, 64, &np, why, whycap)) {
          tc_sb_free(&wrappers);
          return false;
        }
        tc_sb_printf(&wrappers, "extern \"C\" __attribute__((visibility(\"default\"))) void tc_emu_entry_%.*s(void *const *b, const tc_emu_ids *id) {\n  (void)b; (void)id;\n  %.*s(",
                     (int)(ne - ns), src + ns, (int)(ne - ns), src + ns);
        for (int p = 0; p < np; p++) {
          if (p) tc_sb_puts(&wrappers, ", ");
          if (!param_expr(&ps[p], &wrappers, why, whycap)) {
            tc_sb_free(&wrappers);
            return false;
          }
        }
        tc_sb_puts(&wrappers, ");\n}\n");
        nkernels++;
      }
      pending_kernel = false;
    }
    if (src[i] == ';' || src[i] == '{') pending_kernel = false;
    tc_sb_putc(out, src[i]);
    i++;
  }
  if (nkernels == 0) {
    snprintf(why, whycap, "the MSL source has no kernel function");
    tc_sb_free(&wrappers);
    return false;
  }
  tc_sb_puts(out, tc_sb_cstr(&wrappers));
  tc_sb_free(&wrappers);
  return true;
}

tilec_status tc_emu_compile(const char *source, const char *cxx, void **so, size_t *so_size, char **log,
                            tilec_error *err) {
  *so = NULL;
  *so_size = 0;
  if (log) *log = NULL;
  if (!source) {
    tc_error(err, TILEC_ERROR_USAGE, "tc_emu_compile: no source");
    return TILEC_ERROR_USAGE;
  }
  char why[512] = "";
  tc_strbuf text;
  tc_sb_init(&text);
  if (!transform(source, &text, why, sizeof why)) {
    tc_sb_free(&text);
    tc_error(err, TILEC_ERROR_TARGET, "metal emulator: %s", why);
    return TILEC_ERROR_TARGET;
  }
  /* Metal 4's tensor and MetalPerformancePrimitives headers are one stand-in */
  const tc_cxx_header headers[] = {
      {"metal_stdlib", tc_metal_emu_stdlib()},
      {"metal_tensor", tc_metal_emu_tensor()},
      {"MetalPerformancePrimitives/MetalPerformancePrimitives.h", "#include <metal_tensor>\n"},
  };
  tilec_status st = tc_cxx_build_so("metal emulator", cxx, "kernel.metal", tc_sb_cstr(&text), headers, 3, so, so_size, log, err);
  tc_sb_free(&text);
  return st;
}
