/* strbuf.h: a growable heap string for code generation and printing. An allocation failure
 * sets `failed` and further appends are ignored, so writers check once at the end. */
#ifndef TILEC_STRBUF_H
#define TILEC_STRBUF_H
#include <stdarg.h>
#include <stddef.h>

struct tc_arena;
typedef struct tc_strbuf {
  char *data;
  size_t len, cap;
  int failed;
  struct tc_arena *arena; /* when set, storage comes from this arena and tc_sb_free only resets */
} tc_strbuf;

void tc_sb_init(tc_strbuf *sb);
/* A buffer whose storage lives in an arena: code that may longjmp out (the evaluator's error
 * escape) cannot leak it. An arena allocation failure takes the arena's escape. */
void tc_sb_init_arena(tc_strbuf *sb, struct tc_arena *arena);
void tc_sb_free(tc_strbuf *sb);
void tc_sb_putc(tc_strbuf *sb, char c);
void tc_sb_puts(tc_strbuf *sb, const char *s);
void tc_sb_putn(tc_strbuf *sb, const char *s, size_t n);
void tc_sb_printf(tc_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tc_sb_vprintf(tc_strbuf *sb, const char *fmt, va_list ap);
void tc_sb_indent(tc_strbuf *sb, int level); /* two spaces per level */
/* Hand the string over to the caller (malloc'd, NUL-terminated; NULL if anything failed). */
char *tc_sb_take(tc_strbuf *sb);
const char *tc_sb_cstr(tc_strbuf *sb); /* never NULL; "" when empty or failed */
/* Drop what was appended after the first `len` bytes (the buffer's `len` at some earlier point). */
void tc_sb_truncate(tc_strbuf *sb, size_t len);

#endif
