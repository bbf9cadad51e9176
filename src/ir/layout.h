/* layout.h: buffer layouts, as TileLang's Layout and Fragment describe them. Included by ir.h.
 *
 * A layout is a function of a buffer's logical index (i0, ..., i{ndim-1}), written as IR
 * expressions over placeholder variables (kind TC_VAR_LAYOUT_INDEX, int32):
 *   SHARED:   the element offset in the buffer's storage (swizzle and padding live here);
 *   FRAGMENT: the thread that holds the element and the register it has there; with
 *             replicate > 1 the element is held by `replicate` threads, told apart by the
 *             `replica` placeholder in [0, replicate) that `thread` may use.
 * The verifier checks a layout of a constant-shape buffer by enumeration (layout.c). */
#ifndef TILEC_IR_LAYOUT_H
#define TILEC_IR_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/diag.h"
#include "util/strbuf.h"

typedef struct tc_var tc_var;
typedef struct tc_expr tc_expr;
typedef struct tc_buffer tc_buffer;
typedef struct tc_kernel_ir tc_kernel_ir;

typedef enum tc_layout_kind { TC_LAYOUT_SHARED, TC_LAYOUT_FRAGMENT } tc_layout_kind;

typedef struct tc_layout {
  tc_layout_kind kind;
  const char *name;      /* short description for the printer: "swizzle", "annotated", ... */
  int ndim;              /* logical dims (== the buffer's ndim) */
  tc_var **index;        /* ndim placeholder vars (int32, kind TC_VAR_LAYOUT_INDEX) used by the exprs */
  /* SHARED: element offset of a logical index in the buffer's storage */
  tc_expr *offset;
  int64_t storage_elems; /* elements of storage the layout needs (>= numel when padded) */
  /* FRAGMENT: which thread holds a logical index, and in which of its registers */
  tc_expr *thread;       /* in [0, threads); may use `replica` */
  tc_expr *reg;          /* in [0, num_regs) */
  int64_t num_regs;      /* registers per thread */
  int64_t replicate;     /* threads holding each element (1 = no replication) */
  tc_var *replica;       /* placeholder in [0, replicate) used by `thread`, or NULL */
  /* the verifier's memo: the full check passed for this shape (element count) and block size;
   * layouts never change once made, so later stages need not enumerate it again */
  int64_t checked_numel;
  int checked_threads;
  /* made by tilec itself (tc_layout_swizzled): a bijection onto its storage by construction,
   * which tests/unit/test_ir_sched.c enumerates; the verifier does not enumerate it per kernel */
  bool by_construction;
} tc_layout;

/* A layout of `kind` with ndim fresh placeholders named by `names` (NULL: i0, i1, ...); the
 * caller fills the expressions and sizes. replicate starts at 1. */
tc_layout *tc_layout_new(tc_arena *a, tc_kernel_ir *k, tc_layout_kind kind, const char *name, int ndim,
                         const char *const *names, tc_loc loc);
/* The replica placeholder of a FRAGMENT layout (made on first use). */
tc_var *tc_layout_replica_var(tc_arena *a, tc_kernel_ir *k, tc_layout *L, const char *name, tc_loc loc);

/* The project's shared-memory swizzle for a constant-shape buffer (kind SHARED, name
 * "swizzle"). The tile is stored row-major; row = the index of dim ndim-2 with all leading dims
 * folded in, col = the last dim; element bytes b, row bytes R = cols*b, 16-byte chunk
 * c = col*b/16, e = col % (16/b):
 *   R % 128 == 0: c' = (c & ~7) | ((c ^ row) & 7)     (128-byte swizzle)
 *   R == 64:      c' = c ^ ((row >> 1) & 3)           (64-byte)
 *   R == 32:      c' = c ^ ((row >> 2) & 1)           (32-byte)
 *   otherwise, and for sub-byte types: c' = c (no swizzle)
 * offset = row*cols + c'*(16/b) + e. NULL when the shape is not constant. */
tc_layout *tc_layout_swizzled(tc_arena *a, tc_kernel_ir *k, const tc_buffer *buf);

/* A global tensor whose elements a T.Layout places (T.annotate_layout on a kernel parameter):
 * every access goes through the layout's offset, so vector and bulk copies do not apply. */
bool tc_layout_on_global(const tc_buffer *b);

/* The storage offset of a SHARED layout at the logical index idx (ndim expressions): a copy of
 * L->offset, made in a, with its placeholders replaced by copies of idx. */
tc_expr *tc_layout_offset_at(tc_arena *a, const tc_layout *L, tc_expr *const *idx);

/* Evaluate a layout at a logical index (and replica, 0 when not replicated). Writes thread and
 * reg (FRAGMENT) or offset (SHARED); pointers for the other kind may be NULL. False when an
 * expression does not evaluate to a constant (a variable other than the placeholders, an op
 * the constant evaluator does not know, a division by zero). */
bool tc_layout_eval(const tc_layout *L, const int64_t *idx, int64_t replica, int64_t *thread, int64_t *reg,
                    int64_t *offset);

/* One expression of a layout (over its placeholders) at a logical index and replica. */
bool tc_layout_eval_expr(const tc_layout *L, const tc_expr *e, const int64_t *idx, int64_t replica, int64_t *out);

/* Check a layout against a buffer of constant `shape` and a block of `threads` threads by
 * enumerating every logical index. SHARED: offsets in [0, storage_elems) and distinct;
 * FRAGMENT: thread in [0, threads), reg in [0, num_regs), distinct (thread, reg) pairs for
 * distinct indices. FRAGMENT layouts over more than TC_LAYOUT_CHECK_LIMIT elements pass
 * unchecked; SHARED ones up to TC_LAYOUT_BITMAP_LIMIT elements are enumerated into a bitmap,
 * larger ones have their bounds proved by interval arithmetic (tc_layout_expr_bounds) and their
 * distinctness unchecked. False with a message in `why` otherwise. */
#define TC_LAYOUT_CHECK_LIMIT (1 << 16)
#define TC_LAYOUT_BITMAP_LIMIT (1 << 21)
bool tc_layout_check(const tc_layout *L, const int64_t *shape, int64_t threads, char *why, size_t cap);

/* Bounds [lo, hi] of a layout expression over every logical index of `shape` (and replica in
 * [0, reps)) by interval arithmetic: never narrower than the true range, exact for sums,
 * products by constants, and // and % by positive constants. False when the expression uses
 * something else (a product of two ranges, a comparison, a load, ...). */
bool tc_layout_expr_bounds(const tc_layout *L, const tc_expr *e, const int64_t *shape, int64_t reps, int64_t *lo, int64_t *hi);

/* Structural equality: same kind, sizes and expressions (placeholders matched by position). */
bool tc_layout_equal(const tc_layout *a, const tc_layout *b);

/* `name{(i, j) -> offset: EXPR; storage: N}` or
 * `name{(i, j) -> thread: EXPR, reg: EXPR; regs: N[, replicate: R]}` */
void tc_layout_print(tc_strbuf *sb, const tc_layout *L);

#endif
