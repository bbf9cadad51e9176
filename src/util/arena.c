#include "util/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tc_arena_block {
  tc_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

enum { TC_ARENA_BLOCK = 64 * 1024 };

void tc_arena_init(tc_arena *a) { memset(a, 0, sizeof *a); }

void tc_arena_free(tc_arena *a) {
  tc_arena_block *b = a->head;
  while (b) {
    tc_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->total = 0;
}

static void *arena_fail(tc_arena *a) {
  a->failed = 1;
  if (a->oom_jmp) longjmp(*a->oom_jmp, 1);
  return NULL;
}

void *tc_arena_alloc(tc_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  tc_arena_block *b = a->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > TC_ARENA_BLOCK ? size : TC_ARENA_BLOCK;
    if (cap > SIZE_MAX - sizeof(tc_arena_block)) return arena_fail(a);
    if (a->limit && a->total + cap > a->limit) return arena_fail(a);
    tc_arena_block *nb = malloc(sizeof(tc_arena_block) + cap);
    if (!nb) return arena_fail(a);
    nb->used = 0;
    nb->cap = cap;
    a->total += cap;
    /* A large allocation gets its own block behind the current one so the current block's
     * free space stays usable. */
    if (b && size > TC_ARENA_BLOCK / 4) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += size;
  return p;
}

void *tc_arena_zalloc(tc_arena *a, size_t size) {
  void *p = tc_arena_alloc(a, size);
  if (p) memset(p, 0, size);
  return p;
}

char *tc_arena_strndup(tc_arena *a, const char *s, size_t n) {
  char *p = tc_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *tc_arena_strdup(tc_arena *a, const char *s) { return tc_arena_strndup(a, s, strlen(s)); }

char *tc_arena_printf(tc_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *p = tc_arena_alloc(a, (size_t)n + 1);
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void *tc_arena_grow(tc_arena *a, void *old, size_t old_size, size_t new_size) {
  void *p = tc_arena_alloc(a, new_size);
  if (p && old && old_size) memcpy(p, old, old_size < new_size ? old_size : new_size);
  return p;
}
