#include "util/strbuf.h"

#include "util/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tc_sb_init(tc_strbuf *sb) { memset(sb, 0, sizeof *sb); }

void tc_sb_init_arena(tc_strbuf *sb, tc_arena *arena) {
  memset(sb, 0, sizeof *sb);
  sb->arena = arena;
}

void tc_sb_free(tc_strbuf *sb) {
  if (!sb->arena) free(sb->data);
  memset(sb, 0, sizeof *sb);
}

static int sb_reserve(tc_strbuf *sb, size_t extra) {
  if (sb->failed) return 0;
  if (sb->len + extra + 1 <= sb->cap) return 1;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1) {
    if (cap > ((size_t)-1) / 2) {
      sb->failed = 1;
      return 0;
    }
    cap *= 2;
  }
  char *p = sb->arena ? tc_arena_grow(sb->arena, sb->data, sb->len + (sb->data ? 1 : 0), cap) : realloc(sb->data, cap);
  if (!p) {
    sb->failed = 1;
    return 0;
  }
  sb->data = p;
  sb->cap = cap;
  return 1;
}

void tc_sb_putn(tc_strbuf *sb, const char *s, size_t n) {
  if (!sb_reserve(sb, n)) return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = 0;
}

void tc_sb_putc(tc_strbuf *sb, char c) { tc_sb_putn(sb, &c, 1); }
void tc_sb_puts(tc_strbuf *sb, const char *s) { tc_sb_putn(sb, s, strlen(s)); }

void tc_sb_vprintf(tc_strbuf *sb, const char *fmt, va_list ap) {
  if (sb->failed) return;
  /* format straight into the free space; only when it does not fit, grow and format again
   * (code generation prints hundreds of thousands of short pieces: one pass each, not two) */
  if (!sb_reserve(sb, 64)) return;
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = sb->cap - sb->len;
  int n = vsnprintf(sb->data + sb->len, room, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    sb->data[sb->len] = 0;
    sb->failed = 1;
    return;
  }
  if ((size_t)n >= room) {
    sb->data[sb->len] = 0;
    if (!sb_reserve(sb, (size_t)n)) return;
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  }
  sb->len += (size_t)n;
}

void tc_sb_printf(tc_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

void tc_sb_indent(tc_strbuf *sb, int level) {
  for (int i = 0; i < level; i++) tc_sb_puts(sb, "  ");
}

char *tc_sb_take(tc_strbuf *sb) {
  if (sb->arena) { /* the caller frees what it takes: hand over a heap copy */
    char *copy = sb->failed ? NULL : strdup(tc_sb_cstr(sb));
    tc_sb_free(sb);
    return copy;
  }
  if (sb->failed) {
    tc_sb_free(sb);
    return NULL;
  }
  if (!sb->data && !sb_reserve(sb, 0)) return NULL;
  if (sb->len == 0) sb->data[0] = 0;
  char *p = sb->data;
  memset(sb, 0, sizeof *sb);
  return p;
}

void tc_sb_truncate(tc_strbuf *sb, size_t len) {
  if (!sb->data || len >= sb->len) return;
  sb->len = len;
  sb->data[len] = 0;
}

const char *tc_sb_cstr(tc_strbuf *sb) { return (sb->data && !sb->failed) ? sb->data : ""; }
