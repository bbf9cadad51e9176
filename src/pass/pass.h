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

#endif
