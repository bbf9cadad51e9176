/* walk.h: generic traversal of the tile IR, so passes only say what they do to a node. */
#ifndef TILEC_WALK_H
#define TILEC_WALK_H

#include "ir/ir.h"

/* Rewrite every expression slot of a statement tree, bottom-up: fn gets an expression whose
 * operands were already rewritten and returns its replacement (or the same node). Region
 * starts, loop bounds, indices, values and conditions are all slots. */
typedef tc_expr *(*tc_expr_rewrite_fn)(void *ctx, tc_expr *e);
tc_expr *tc_rewrite_expr(tc_expr *e, tc_expr_rewrite_fn fn, void *ctx);
void tc_rewrite_stmt_exprs(tc_stmt *s, tc_expr_rewrite_fn fn, void *ctx);

/* Every expression slot of s itself, not of the statements nested in it (a loop's bounds, not its
 * body's), through a callback that may replace the expression: region starts, bounds, indices,
 * values, conditions, intrinsic arguments. */
typedef void (*tc_expr_slot_fn)(void *ctx, tc_expr **slot);
void tc_visit_own_expr_slots(tc_stmt *s, tc_expr_slot_fn fn, void *ctx);

/* Visit every statement, pre-order (children after their parent). Return false from fn to
 * skip a statement's children. */
typedef bool (*tc_stmt_visit_fn)(void *ctx, tc_stmt *s);
void tc_visit_stmts(tc_stmt *s, tc_stmt_visit_fn fn, void *ctx);

/* The buffers a statement writes (tile-op destinations, stores, atomics), through a callback. */
typedef void (*tc_buffer_fn)(void *ctx, tc_buffer *b, tc_stmt *where);
void tc_stmt_written_buffers(tc_stmt *s, tc_buffer_fn fn, void *ctx);

/* Every buffer slot of a statement tree, through a callback that may change it: allocations,
 * stores, element atomics, prints, tile-op regions, and loads and addresses in every expression
 * slot (nested call arguments too). `where` is the statement holding the slot (for an expression,
 * the statement whose expression slot it is in, or one that contains that statement). */
typedef void (*tc_buffer_slot_fn)(void *ctx, tc_buffer **slot, const tc_stmt *where);
void tc_visit_buffer_slots(tc_stmt *body, tc_buffer_slot_fn fn, void *ctx);

/* Make every reference to a buffer with id i < nbufs and to[i] set refer to to[i] instead:
 * allocations, stores, element atomics, prints, tile-op regions, and loads and addresses in
 * every expression slot (nested call arguments too). Passes use it to move a buffer to another
 * scope without changing its id, so tables indexed by id stay valid. */
void tc_replace_buffers(tc_stmt *body, tc_buffer *const *to, int nbufs);

#endif
