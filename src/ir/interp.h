/* interp.h: the reference evaluator. A tile-level interpreter of the tile IR that shares no
 * code with any code generator; `tilec run --verify` and the tests compare backends with it.
 *
 * Semantics (docs/language.md, "Execution model"):
 *  - Blocks run one after another, x fastest. Within a block the threads run the body in
 *    lockstep, statement by statement, under an active mask: a per-thread statement (element
 *    store, LET/ASSIGN, element atomic_add, assert) is done by every active thread, with all
 *    threads' operands read before any thread writes. Conditions and loop bounds that differ
 *    between threads narrow the mask.
 *  - Collective statements (copy, gemm, fill, reduce, cumsum, tile atomic_add and T.Parallel
 *    loops) run once per block and are an error when reached by only some threads or inside a
 *    T.Parallel body; their region starts must agree across threads. A T.Parallel body runs
 *    once per iteration as one logical thread; the thread index has no value there.
 *  - A tile operation with an operand in per-thread storage (local or var) is not collective:
 *    each active thread does it on its own copy.
 *  - Per-thread storage: LET variables, local and var buffers. Shared and fragment buffers are
 *    one per block, zeroed when the block starts.
 *  - Arithmetic is done in float64 for float dtypes and exactly (wrapped to the expression's
 *    width) for integers. Values round to their dtype where the program rounds: stores, casts,
 *    LET/ASSIGN of a typed scalar, constants. GEMM sums in float64 and rounds once into C.
 *  - Global loads outside the tensor read 0; global stores outside are dropped. An access
 *    outside a shared/fragment/local buffer is an error.
 *  - Float to integer conversion truncates toward zero and saturates (NaN gives 0), like
 *    CUDA's cvt.rzi.
 *  - Integer division by zero, a failed assert and a shift count out of range are errors; 8-
 *    and 16-bit integers shift as if promoted to 32 bits, as C and CUDA do (counts up to 31).
 *    T.print does nothing here (the library never prints). A step limit, and optionally a
 *    time limit, stop runaway kernels with an error at the loop that did not end.
 *  Vector dtypes (lanes > 1) are not supported and give TILEC_ERROR_TARGET. */
#ifndef TILEC_IR_INTERP_H
#define TILEC_IR_INTERP_H

#include <stdint.h>

#include "ir/ir.h"

/* Run kernel k once over its whole grid.
 *   data[i]:     host pointer to parameter i's tensor: dense, row-major, elements encoded as
 *                the dtype stores them (tc_dtype_load_f64/tc_dtype_store_f64); unused for
 *                scalar parameters.
 *   scalars[i]:  the value of parameter i when it is an integer or bool scalar;
 *   fscalars[i]: the value of parameter i when it is a float scalar (either may be NULL
 *                when the kernel has no such parameter);
 *   syms[j]:     the value of k->syms[j] (NULL when there are none).
 * The IR is verified first. Returns TILEC_OK, or the error's status with err filled:
 * TILEC_ERROR_PROGRAM for a fault of the program at run time (with its location),
 * TILEC_ERROR_USAGE for bad arguments, TILEC_ERROR_TARGET for what the interpreter does not
 * support or the step limit, TILEC_ERROR_NOMEM. */
tilec_status tc_interp_run(const tc_kernel_ir *k, void *const *data, const int64_t *scalars, const double *fscalars,
                           const int64_t *syms, tilec_error *err);

/* The step limit: statements executed per thread plus elements touched by tile operations. */
#define TC_INTERP_STEP_LIMIT (UINT64_C(1) << 34)

/* tc_interp_run with another step limit (tests use a small one). */
tilec_status tc_interp_run_limited(const tc_kernel_ir *k, void *const *data, const int64_t *scalars, const double *fscalars,
                                   const int64_t *syms, uint64_t step_limit, tilec_error *err);

/* What a run may spend before it stops with TILEC_ERROR_TARGET, located at the loop still
 * running (the innermost runtime `while`, else the innermost loop): a loop whose condition never
 * becomes false would otherwise never return. */
typedef struct tc_interp_budget {
  uint64_t step_limit; /* 0: TC_INTERP_STEP_LIMIT */
  double seconds;      /* wall-clock seconds; 0: no time limit */
} tc_interp_budget;

tilec_status tc_interp_run_budget(const tc_kernel_ir *k, void *const *data, const int64_t *scalars,
                                  const double *fscalars, const int64_t *syms, const tc_interp_budget *budget,
                                  tilec_error *err);

/* tilec_kernel_run_reference (launch.c) within `seconds` of wall-clock time (0: no limit), for
 * the command line's --timeout; the same argument checks. */
tilec_status tc_kernel_run_reference_within(tilec_kernel *k, DLTensor *const *args, size_t nargs, double seconds,
                                            tilec_error *err);

#endif
