/* fuzz_reader.c: libFuzzer target for the reader. Any input must lex and parse, or fail with a
 * located error, without crashing, hanging or leaking; a parsed module is also dumped, and every
 * kernel found is evaluated and its IR verified and printed. Run with `make fuzz` (see
 * docs/testing.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "front/ast.h"
#include "front/front.h"
#include "util/strbuf.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1); /* the reader wants NUL-terminated text */
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  tc_source src = {"fuzz.py", text, size};
  tc_arena arena;
  tc_arena_init(&arena);
  arena.limit = 64u << 20;
  tilec_error err;
  tc_error_clear(&err);
  tc_ast *module = tc_read(&arena, &src, &err); /* lex + parse (+ the prefix parse on a lex error) */
  if (module) {
    tc_strbuf sb;
    tc_sb_init(&sb);
    tc_ast_dump(&sb, module);
    tc_sb_free(&sb);
    /* The evaluator is part of the reader: every kernel found is evaluated with its defaults,
     * in an arena of its own with a limit, and its IR checked. Errors are fine; crashes,
     * hangs, leaks and IR that fails the verifier without an error are not. */
    tc_kernel_defs defs = tc_front_find_kernels(&arena, module);
    for (int i = 0; i < defs.n && i < 4; i++) {
      tc_arena ka;
      tc_arena_init(&ka);
      ka.limit = 64u << 20;
      tilec_error kerr;
      tc_error_clear(&kerr);
      tc_kernel_ir *k = tc_front_eval(&ka, &src, module, defs.v[i].name, NULL, 0, &kerr);
      if (k) {
        tilec_error verr;
        tc_error_clear(&verr);
        if (!tc_ir_verify(k, "fuzz", &verr) && verr.status == TILEC_ERROR_INTERNAL) abort();
        tc_strbuf ir;
        tc_sb_init(&ir);
        tc_ir_print_kernel(&ir, k);
        tc_sb_free(&ir);
      } else if (kerr.status == TILEC_OK) {
        abort(); /* a failed evaluation must say why */
      }
      tc_arena_free(&ka);
    }
  } else if (err.status == TILEC_OK || (err.status == TILEC_ERROR_PROGRAM && err.line < 1)) {
    abort(); /* a failure must say what and where */
  }
  tc_arena_free(&arena);
  free(text);
  return 0;
}
