/* arena.h: bump allocation tied to a lifetime (one compile, one kernel). Everything allocated
 * from an arena is freed at once by tc_arena_free. When an allocation fails and the arena has
 * an escape (oom_jmp), it longjmps there so deep recursive code need not check every pointer;
 * without one it returns NULL. */
#ifndef TILEC_ARENA_H
#define TILEC_ARENA_H
#include <setjmp.h>
#include <stddef.h>

typedef struct tc_arena_block tc_arena_block;
typedef struct tc_arena {
  tc_arena_block *head;
  size_t total;        /* bytes reserved from malloc */
  size_t limit;        /* 0: no limit; else allocations past it fail (used by tests and fuzzing) */
  jmp_buf *oom_jmp;    /* optional escape on failure */
  int failed;          /* set once any allocation failed */
} tc_arena;

void tc_arena_init(tc_arena *a);
void tc_arena_free(tc_arena *a);
void *tc_arena_alloc(tc_arena *a, size_t size);  /* 16-byte aligned, uninitialised */
void *tc_arena_zalloc(tc_arena *a, size_t size); /* zeroed */
char *tc_arena_strdup(tc_arena *a, const char *s);
char *tc_arena_strndup(tc_arena *a, const char *s, size_t n);
char *tc_arena_printf(tc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Grow an array allocated from the arena (old contents copied; old block is not reclaimed). */
void *tc_arena_grow(tc_arena *a, void *old, size_t old_size, size_t new_size);

#define TC_NEW(arena, type) ((type *)tc_arena_zalloc((arena), sizeof(type)))
#define TC_NEW_ARRAY(arena, type, n) ((type *)tc_arena_zalloc((arena), sizeof(type) * (size_t)(n)))

#endif
