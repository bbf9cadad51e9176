/* front.h: the reader's entry points. read = lex + parse (once per program); evaluate = run
 * the Python subset with the bindings and build the tile IR of one kernel (once per compile). */
#ifndef TILEC_FRONT_H
#define TILEC_FRONT_H

#include "front/ast.h"
#include "ir/ir.h"

/* A kernel definition found in a module. */
typedef enum tc_kernel_style {
  TC_STYLE_FACTORY,   /* def f(params...): ... @T.prim_func def main(...) ... return main */
  TC_STYLE_EAGER,     /* @tilelang.jit def f(A, B, block_M, ...): T.const / T.empty / return C */
  TC_STYLE_PRIM_FUNC  /* a module-level @T.prim_func */
} tc_kernel_style;

typedef struct tc_kernel_def {
  const char *name;      /* the Python name of the factory, eager function or prim_func */
  tc_kernel_style style;
  const tc_ast *def;     /* its FUNCTION_DEF */
} tc_kernel_def;

typedef struct tc_kernel_defs {
  int n;
  tc_kernel_def *v;
} tc_kernel_defs;

/* Find every kernel definition at module level (arena-allocated list). Never fails. */
tc_kernel_defs tc_front_find_kernels(tc_arena *arena, const tc_ast *module);

/* Evaluate kernel `name` (NULL: the only one; an error names the choices when there are
 * several or none) with the given bindings (factory parameters and T.const names; values as
 * on the command line) and build its tile IR. Every problem in the program comes back in err
 * with its place. The IR is allocated from `arena`. */
/* The configurations of kernel `name`'s @autotune(configs=...) (NULL: the only kernel),
 * evaluated at module level: one line per configuration, "NAME=VALUE NAME=VALUE", values as -D
 * takes them; "" when the kernel has no @autotune. NULL with err on a problem (malloc'd text). */
char *tc_front_autotune_configs(const tc_source *src, const tc_ast *module, const char *name, tilec_error *err);

tc_kernel_ir *tc_front_eval(tc_arena *arena, const tc_source *src, const tc_ast *module,
                            const char *name, const tilec_define *defines, size_t ndefines,
                            tilec_error *err);

#endif
