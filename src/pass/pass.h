/* pass.h: target-independent passes over the tile IR. Each pass rewrites the kernel in place
 * (allocating new nodes from the compile's arena) and returns false with err filled when the
 * program cannot be compiled. The pipeline (compile.c) runs the verifier after every pass. */
#ifndef TILEC_PASS_H
#define TILEC_PASS_H

#include "ir/ir.h"

typedef bool (*tc_pass_fn)(tc_arena *arena, tc_kernel_ir *k, tilec_error *err);
typedef struct tc_pass {
  const char *name;
  tc_pass_fn run;
} tc_pass;

#define TC_PASS(name, fn) bool fn(tc_arena *arena, tc_kernel_ir *k, tilec_error *err);
#include "pass/passes.def"

/* Fold one expression (used by the simplify pass and by codegen helpers). */
tc_expr *tc_simplify_expr(tc_arena *arena, tc_expr *e);

/* Integer arithmetic as the generated code computes it (simplify.c), shared with the host-side
 * evaluation of launch grids (launch.c): tc_fold_int applies a binary op, false where it must
 * not be evaluated (division by zero, INT64_MIN / -1, a shift out of range, a non-integer op);
 * tc_wrap_int wraps a result to its dtype's width. */
bool tc_fold_int(tc_expr_op op, int64_t a, int64_t b, int64_t *out);
int64_t tc_wrap_int(int64_t v, tc_dtype dt);

#endif
