/* analysis.h: the analyses of the tile IR that the verifier, the reference interpreter, the
 * passes and every target share. One rule lives in one place here; callers never re-derive it.
 *
 *   exec.c      who runs a statement: the whole block once (collective) or each thread
 *   regions.c   every buffer region, element access and variable a statement reads or writes
 *   varying.c   which values may differ between the threads of a block (uniform vs varying)
 *   affine.c    an index expression as a linear function of chosen variables
 *   conflict.c  hazards on block-visible memory between per-thread statements (barriers)
 *   rounding.c  the narrowest float dtype each output's value is rounded through (verification)
 *   range.c     the values an integer expression can take (printers: arithmetic that cannot wrap)
 *
 * All functions are pure queries over IR they do not modify. */
#ifndef TILEC_ANALYSIS_H
#define TILEC_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* ---- exec.c: tile-op classification ----
 * TileLang's model: every thread of a block runs the kernel body. A tile operation (copy, gemm,
 * fill, reduce, cumsum, tile atomic_add) and a T.Parallel loop are done by the block together,
 * once (TC_EXEC_BLOCK). A tile operation with an operand in per-thread storage (a local or var
 * buffer) cannot be shared by the block: each thread does it on its own copy, with its own
 * region starts, like any per-thread statement (TC_EXEC_THREAD). So `T.copy(loc, s[tx:tx + 1])`
 * is per thread, and so is `T.copy(A[i0:i0 + 4], loc)`. Every other statement is per thread;
 * SEQ/FOR(non-parallel)/IF are per thread as statements (their bodies are classified one by
 * one). */
typedef enum tc_exec_kind {
  TC_EXEC_THREAD, /* each active thread runs it */
  TC_EXEC_BLOCK   /* the whole block runs it once: every thread must reach it */
} tc_exec_kind;
tc_exec_kind tc_stmt_exec(const tc_stmt *s);
static inline bool tc_stmt_is_collective(const tc_stmt *s) { return tc_stmt_exec(s) == TC_EXEC_BLOCK; }
/* s or a statement nested in it (not inside a T.Parallel body) is collective. */
bool tc_stmt_contains_collective(const tc_stmt *s);
/* ... or a BARRIER: s must run as synchronised steps, all threads together. */
bool tc_stmt_contains_sync(const tc_stmt *s);
/* The program error for a loop or if (s) with thread-dependent bounds or condition around a
 * synchronisation point: a tile operation, or a barrier the program needs. */
void tc_error_sync_under_divergence(tilec_error *err, const tc_stmt *s);
/* A local or var buffer: one copy per thread. */
bool tc_buffer_is_per_thread(const tc_buffer *b);
/* A shared or global buffer: memory the other threads of the block see. */
bool tc_buffer_is_block_visible(const tc_buffer *b);

/* ---- regions.c: what a statement reads and writes ----
 * tc_stmt_regions lists the buffer regions of a tile operation (its operands) with their
 * roles, in operand order; element statements, control flow and others have none. */
typedef struct tc_stmt_region {
  tc_region *region;
  bool read, write;
} tc_stmt_region;
#define TC_MAX_STMT_REGIONS 3
int tc_stmt_regions(const tc_stmt *s, tc_stmt_region out[TC_MAX_STMT_REGIONS]);

/* tc_stmt_accesses walks a statement (and, with `recurse`, the statements nested in it) and
 * reports every variable and buffer it references: reads of variables in expressions, writes
 * of LET/ASSIGN targets, loads (read), stores and tile-op destinations (write; a read too when
 * the operation reads the old value: gemm C, tile atomic_add, reduce without clear, element
 * atomic_add), alloc_var initialisations (write). Loop variables are not reported as written.
 * Either callback may be NULL. NULL operands are skipped, so unverified IR is safe to walk. */
typedef struct tc_access_fns {
  void (*var)(void *ctx, const tc_var *v, bool write);
  void (*buf)(void *ctx, const tc_buffer *b, bool write);
  void *ctx;
} tc_access_fns;
void tc_stmt_accesses(const tc_access_fns *f, const tc_stmt *s, bool recurse);
void tc_expr_accesses(const tc_access_fns *f, const tc_expr *e);
/* The largest id of any variable or buffer the kernel references (at least next_id - 1), for
 * tables indexed by id. */
int tc_kernel_max_id(const tc_kernel_ir *k);

/* ---- uninit.c: on-chip memory read before anything writes it ----
 * The first statement, in program order (each loop's first iteration included), that reads a
 * shared, fragment, local or var buffer no earlier statement writes, outside any `if`; loop:
 * the outermost enclosing loop that writes it later (the read is undefined on its first
 * iteration), or NULL. Optimistic: any write counts, an `if`'s writes count before its
 * branches, buffers passed to intrinsics count as written. False when there is none. */
typedef struct tc_uninit_read {
  const tc_stmt *stmt;
  const tc_buffer *buf;
  const tc_stmt *loop;
} tc_uninit_read;
bool tc_find_uninit_read(const tc_kernel_ir *k, tc_uninit_read *out);

/* ---- varying.c: uniform vs varying ----
 * A value is varying when it may differ between the threads of a block: a thread index, a LET
 * variable or a local/var buffer assigned a varying value or assigned under control flow whose
 * condition or bounds are varying, a loop variable of a loop with varying bounds, and any
 * expression using one of these. Block indices, parameters, symbolic sizes, T.Parallel loop
 * variables and loads of shared/global memory at uniform indices are uniform. The analysis is
 * flow-insensitive (a variable varying anywhere is varying everywhere), computed to a fixpoint
 * over the whole kernel. */
typedef struct tc_varying {
  int nids;
  bool *by_id; /* by var/buffer id (malloc'd; tc_varying_free) */
} tc_varying;
bool tc_varying_compute(const tc_kernel_ir *k, tc_varying *out); /* false: out of memory */
void tc_varying_free(tc_varying *v);
bool tc_varying_var(const tc_varying *v, const tc_var *var);
bool tc_varying_buf(const tc_varying *v, const tc_buffer *b);
bool tc_varying_expr(const tc_varying *v, const tc_expr *e);
bool tc_varying_region(const tc_varying *v, const tc_region *r); /* its buffer or a start */
/* The statement must run once per thread: it references a varying value, writes varying
 * storage, is a loop with varying bounds, or holds an element atomic_add or a print (their
 * effect counts per thread). */
bool tc_varying_stmt(const tc_varying *v, const tc_stmt *s);

/* ---- affine.c: affine index analysis ----
 * Is e an affine function c0 + sum coef[i] * vars[i] of the given variables, with integer
 * constant coefficients and a remainder c0 that does not involve them? On success coef[] holds
 * the coefficients (added to; clear them first). `opaque(ctx, var)`, when given, names further
 * variables the remainder may not involve (it must then be evaluated outside the loops over
 * vars). Loads are never part of an affine remainder. */
typedef bool (*tc_affine_opaque_fn)(void *ctx, const tc_var *v);
typedef struct tc_affine_vars {
  int nv;
  const tc_var *const *vars;
  tc_affine_opaque_fn opaque;
  void *ctx;
} tc_affine_vars;
bool tc_expr_affine(const tc_affine_vars *A, const tc_expr *e, int64_t *coef);
/* e involves none of the variables (nor opaque ones, nor loads). */
bool tc_expr_free_of(const tc_affine_vars *A, const tc_expr *e);

/* ---- conflict.c: hazards on block-visible memory ----
 * Contract (used by the insert-barriers pass and by GPU lowerings for their own placement):
 * an access set records, by buffer id, which shared and global buffers some statements read
 * and write (other scopes are ignored: they are private to a thread or handled by the tile op
 * that owns them). Two per-thread statements run by the threads of a block need a barrier
 * between them when one writes a block-visible buffer the other reads or writes (write after
 * read, write after write, read after write): another thread may touch the same element. The
 * test is by buffer, not by element: conservative, never missing a hazard. */
typedef struct tc_conflict_set {
  int nids;
  bool *r, *w;  /* by buffer id */
  bool *shared; /* by buffer id: the buffer is in shared scope */
} tc_conflict_set;
void tc_conflict_init(tc_arena *a, tc_conflict_set *cs, int nids);
void tc_conflict_clear(tc_conflict_set *cs);
/* Add everything s (recursively) reads and writes. */
void tc_conflict_add_stmt(tc_conflict_set *cs, const tc_stmt *s);
void tc_conflict_merge(tc_conflict_set *into, const tc_conflict_set *from);
/* Would running `later` after `earlier` without a barrier race? */
bool tc_conflict_between(const tc_conflict_set *earlier, const tc_conflict_set *later);
/* A shared buffer both read and written: a loop whose body has this needs a barrier on its
 * back edge (iteration i+1 reads what another thread wrote in iteration i). */
bool tc_conflict_shared_read_write(const tc_conflict_set *cs);

/* ---- order.c: output dimensions whose order the schedule decides ----
 * out[i], for each parameter: a bit mask of the dimensions (d < 32) that some store indexes
 * with a value derived from T.atomic_add(..., return_prev=True), a slot handed out in the order
 * threads arrive; verification compares the values along them as multisets. Returns 0, or -1
 * when out of memory. */
int tc_kernel_unordered_dims(const tc_kernel_ir *k, unsigned *out);

/* ---- rounding.c: the dtype an output's value is rounded through ----
 * out[i], for each float parameter written from values rounded inside the kernel to a float
 * dtype narrower than its own (a bfloat16 intermediate of a float32 output): that dtype, whose
 * tolerance its verification needs; TC_DT_INVALID otherwise. Returns 0, or -1 without memory. */
int tc_kernel_rounds_through(const tc_kernel_ir *k, tc_dtype *out);

/* ---- range.c: integer ranges ----
 * Sound intervals of integer expressions: thread and block indices, loop counters and LET values
 * as a printer reaches their definitions (tc_range_set*), constants, and the operations on them;
 * everything else has its dtype's range. `known` is false where no bound holds (64-bit unsigned,
 * vectors, floats). */
typedef struct tc_int_range {
  int64_t lo, hi;
  bool known;
} tc_int_range;
typedef struct tc_ranges {
  const tc_kernel_ir *k;
  int nvars;
  tc_int_range *var; /* by var id: set at the definition the printer has reached */
  bool *assigned;    /* by var id: assigned after its LET, so only its dtype's range holds */
} tc_ranges;
void tc_ranges_init(tc_ranges *R, tc_arena *a, const tc_kernel_ir *k);
/* call on every statement before printing (tc_visit_stmts): marks the variables assigned again */
void tc_ranges_note_assigned(tc_ranges *R, const tc_stmt *s);
void tc_range_set(tc_ranges *R, const tc_var *v, tc_int_range r);
/* a loop counter: [min, min + extent); extent NULL: no upper bound but its dtype's */
void tc_range_set_loop(tc_ranges *R, const tc_var *v, const tc_expr *min, const tc_expr *extent);
tc_int_range tc_range_of(const tc_ranges *R, const tc_expr *e);
bool tc_range_nonneg(const tc_ranges *R, const tc_expr *e);
/* e's own operation (+, -, *, ...) on its operands' ranges never leaves e's integer dtype: C's plain
 * operator gives the wrapped result the IR defines */
bool tc_range_exact(const tc_ranges *R, const tc_expr *e);

#endif
