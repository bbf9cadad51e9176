/* ast_dump: print the syntax tree of each Python file named on the command line, one top-level
 * statement per line after a "== FILE" header, or "ERR line:col: message" when reading fails.
 * tests/e2e/parse_vs_cpython.sh compares it with CPython's own ast module. */
#include <stdio.h>
#include <stdlib.h>

#include "front/ast.h"
#include "util/strbuf.h"

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  int status = 0;
  for (int i = 1; i < argc; i++) {
    size_t len = 0;
    char *text = read_file(argv[i], &len);
    printf("== %s\n", argv[i]);
    if (!text) {
      printf("ERR cannot read\n");
      status = 1;
      continue;
    }
    tc_source src = {argv[i], text, len};
    tc_arena arena;
    tc_arena_init(&arena);
    tilec_error err;
    tc_error_clear(&err);
    tc_ast *m = tc_read(&arena, &src, &err);
    if (!m) {
      printf("ERR %d:%d: %s\n", err.line, err.col, err.message);
    } else {
      tc_strbuf sb;
      tc_sb_init(&sb);
      for (int k = 0; k < m->list.n; k++) {
        tc_ast_dump(&sb, m->list.v[k]);
        tc_sb_putc(&sb, '\n');
      }
      fputs(tc_sb_cstr(&sb), stdout);
      tc_sb_free(&sb);
    }
    tc_arena_free(&arena);
    free(text);
  }
  return status;
}
