/* fuzz_reader.c: libFuzzer target for the reader. Any input must lex and parse, or fail with a
 * located error, without crashing, hanging or leaking; a parsed module is also dumped and, when
 * the evaluator is linked in, searched for kernels. Run with `make fuzz` (see docs/testing.md). */
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
#ifdef TC_FUZZ_EVAL /* set by `make fuzz` when src/front/eval.c exists */
    (void)tc_front_find_kernels(&arena, module);
#endif
  } else if (err.status == TILEC_OK || (err.status == TILEC_ERROR_PROGRAM && err.line < 1)) {
    abort(); /* a failure must say what and where */
  }
  tc_arena_free(&arena);
  free(text);
  return 0;
}
