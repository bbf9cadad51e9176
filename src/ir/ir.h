/* ir.h: tilec's tile IR. One typed IR in which every stage after the reader works.
 *
 * A kernel (tc_kernel_ir) is one launch: a grid of blocks, each block a group of threads that
 * runs the body. The body is a statement tree. Tile operations (copy, gemm, fill, reduce,
 * cumsum, atomic_add on regions) are first-class statements that the block's threads perform
 * together; element stores and loops are ordinary statements. Every expression carries a dtype.
 *
 * All nodes live in the arena of the compile that built them; nothing here is freed
 * individually. Nodes are immutable after construction except through passes that own them. */
#ifndef TILEC_IR_H
#define TILEC_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype/dtype.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/strbuf.h"

typedef enum tc_expr_op {
#define TC_EXPR_OP(id, spelling, arity, cls) TC_OP_##id,
#include "ir/ops.def"
  TC_OP_COUNT
} tc_expr_op;

typedef enum tc_stmt_kind {
#define TC_STMT_OP(id, spelling) TC_ST_##id,
#include "ir/ops.def"
  TC_ST_COUNT
} tc_stmt_kind;

typedef enum tc_op_class { TC_CLS_LEAF, TC_CLS_ARITH, TC_CLS_CMP, TC_CLS_LOGIC, TC_CLS_MATH, TC_CLS_SPECIAL } tc_op_class;

const char *tc_expr_op_name(tc_expr_op op);
int tc_expr_op_arity(tc_expr_op op);
tc_op_class tc_expr_op_class(tc_expr_op op);
const char *tc_stmt_kind_name(tc_stmt_kind k);

/* ---- variables ---- */
typedef enum tc_var_kind {
  TC_VAR_LOOP,       /* induction variable of a FOR */
  TC_VAR_BLOCK_IDX,  /* blockIdx along axis */
  TC_VAR_THREAD_IDX, /* threadIdx along axis (T.get_thread_binding) */
  TC_VAR_SYMBOLIC,   /* a dimension known only at run time (T.symbolic / T.dynamic / T.const) */
  TC_VAR_PARAM,      /* a scalar kernel parameter */
  TC_VAR_LOCAL,      /* a per-thread scalar declared by LET */
  TC_VAR_LAYOUT_INDEX /* a placeholder of a layout's expressions (layout.h); never in a body */
} tc_var_kind;

typedef struct tc_var {
  const char *name;
  tc_dtype dtype;
  tc_var_kind kind;
  int axis; /* BLOCK_IDX/THREAD_IDX: 0=x, 1=y, 2=z */
  int id;   /* unique within the kernel; printers and codegen may use it to disambiguate */
  tc_loc loc;
  /* front end only (LOCAL vars): the value of the LET that declared it, until it is assigned
   * again; `folded` once a slice's extent was folded through that value (a later assignment is
   * then an error: the extent would no longer hold). Never read after evaluation. */
  const struct tc_expr *let_value;
  bool folded;
  unsigned let_stamp, assign_stamp; /* front end: when the LET ran, when it was last assigned */
} tc_var;

/* ---- buffers ---- */
typedef enum tc_scope {
  TC_SCOPE_GLOBAL,   /* a kernel parameter in device memory */
  TC_SCOPE_SHARED,   /* shared by the block (T.alloc_shared) */
  TC_SCOPE_FRAGMENT, /* a block-wide tile held in registers, distributed over threads */
  TC_SCOPE_LOCAL,    /* per-thread array (T.alloc_local) */
  TC_SCOPE_VAR,      /* per-thread scalar cell (T.alloc_var), shape (1,) */
  /* target scopes, assigned by a target's passes (src/target/metal/simdgroup_scope.c): a gemm
   * accumulator held as the instruction holds it, simdgroup_matrix 8x8 blocks or Metal 4
   * matmul2d destination cooperative tensors; still a block-wide tile in registers */
  TC_SCOPE_METAL_SIMDGROUP,
  TC_SCOPE_METAL_COOPERATIVE_TENSOR,
  TC_SCOPE_COUNT
} tc_scope;
const char *tc_scope_name(tc_scope s);
/* Block-wide tiles held in the threads' registers: fragments and the target accumulator scopes. */
static inline bool tc_scope_in_registers(tc_scope s) {
  return s == TC_SCOPE_FRAGMENT || s == TC_SCOPE_METAL_SIMDGROUP || s == TC_SCOPE_METAL_COOPERATIVE_TENSOR;
}

typedef struct tc_expr tc_expr;
typedef struct tc_stmt tc_stmt;

#include "ir/layout.h"

typedef struct tc_buffer {
  const char *name;
  tc_dtype dtype;
  tc_scope scope;
  int ndim;
  tc_expr **shape;   /* ndim extents; constant except for global buffers with symbolic dims */
  int id;            /* unique within the kernel */
  int param_index;   /* index into the kernel's params for GLOBAL buffers, else -1; a workspace
                      * (tc_kernel_ir.workspaces) has nparams + its index there */
  tc_expr *init;     /* alloc_var's initial value, or NULL */
  tc_layout *layout; /* T.annotate_layout's layout (shared/fragment only); NULL: lowering decides */
  /* A view (T.reshape, T.view, T.Tensor(shape, dtype, X.data)): the buffer whose storage this
   * one names, never itself a view; NULL for a buffer with its own storage. A view has the
   * same scope, dtype and element count; its own shape indexes the same elements in row-major
   * order. It is declared by an ALLOC (of any scope) after the buffer it views. */
  struct tc_buffer *view_of;
  /* Set by the GPU lowering when shared tiles of disjoint lifetimes share memory
   * (gpu/smem_reuse.c): the tile's byte offset in the block's shared memory. Otherwise the
   * target places shared tiles one after another. */
  bool smem_placed;
  int64_t smem_at;
  /* Set by the GPU lowering on a shared tile that each warp reads back only where it wrote it
   * (gpu/epilogue.c's staging tiles): no other thread's access can conflict with a warp's. */
  bool warp_private;
  /* Set by the GPU lowering, under pass_configs TL_DISABLE_THREAD_STORAGE_SYNC, on the flat copy
   * of a shared tile the program allocated: the program places the barriers its accesses need,
   * so the lowering places none for it (tiles the lowering made keep theirs). */
  bool program_synced;
  /* T.alloc_barrier's arrival counters (src/front/eval_ws.c): they only order warp groups */
  bool mbarrier;
  tc_loc loc;
} tc_buffer;

/* The buffer that owns b's storage: b itself, or the buffer b views. Analyses keyed by buffer
 * (who writes what, where threads conflict) key by this one, so a view and its buffer are one. */
static inline const struct tc_buffer *tc_buffer_storage(const struct tc_buffer *b) { return b && b->view_of ? b->view_of : b; }

/* ---- expressions ---- */
struct tc_expr {
  tc_expr_op op;
  tc_dtype dtype;
  tc_loc loc;
  int64_t ival;     /* CONST_INT */
  double fval;      /* CONST_FLOAT */
  tc_var *var;      /* VAR */
  tc_buffer *buf;   /* LOAD, ADDRESS_OF */
  const char *callee; /* CALL: an expression intrinsic's name (intrinsics.def) */
  bool in_bounds;     /* LOAD of a global tensor proven inside it (set by lowering): no check */
  int nargs;
  tc_expr **args;   /* operands; LOAD, ADDRESS_OF: indices; CALL: arguments */
};

/* ---- regions: a box inside a buffer ---- */
typedef struct tc_range {
  tc_expr *start;  /* int32 expression */
  int64_t extent;  /* a compile-time size; tiles always have constant sizes */
} tc_range;

typedef struct tc_region {
  tc_buffer *buf; /* NULL: no region */
  int ndim;       /* == buf->ndim */
  tc_range *r;
} tc_region;

/* The region's extents with the unit dimensions dropped: the shape tile ops match on. */
int tc_region_squeezed(const tc_region *reg, int64_t *out, int cap);
int64_t tc_region_numel(const tc_region *reg);

/* ---- statements ---- */
typedef enum tc_loop_kind {
  TC_LOOP_SERIAL,
  TC_LOOP_PARALLEL,
  TC_LOOP_PIPELINED,
  TC_LOOP_UNROLL,
  TC_LOOP_VECTORIZED,    /* T.vectorized: serial semantics; a target may vectorize it */
  TC_LOOP_THREAD_BINDING /* var is threadIdx along thread_axis, extent the block size there;
                          * made by GPU lowering, never by the reader */
} tc_loop_kind;
#define TC_LOOP_KIND_COUNT 6
const char *tc_loop_kind_name(tc_loop_kind k);

/* An int list, and a list of int lists, for T.Pipelined's scheduling arguments. */
typedef struct tc_int_list { int n; int *v; } tc_int_list;
typedef struct tc_int_lists { int n; tc_int_list *v; } tc_int_lists;

/* T.Pipelined's arguments as written (empty lists when not given; num_stages is the loop's own
 * field). order/stage have one entry
 * per scheduled statement of the body (its top-level statements other than LET/ALLOC). */
typedef struct tc_pipeline_args {
  tc_int_list order;  /* emission order: distinct positions in [0, n), or -1 */
  tc_int_list stage;  /* pipeline stage of each statement, or -1 */
  tc_int_lists sync;  /* synchronisation metadata: lists of statement indices */
  tc_int_lists group; /* producer groups: lists of statement indices */
} tc_pipeline_args;

typedef enum tc_eviction_policy { TC_EVICT_NORMAL, TC_EVICT_FIRST, TC_EVICT_LAST } tc_eviction_policy;
const char *tc_eviction_policy_name(tc_eviction_policy p); /* "evict_normal", ... */

typedef enum tc_barrier_scope { TC_BARRIER_BLOCK, TC_BARRIER_WARP } tc_barrier_scope;
const char *tc_barrier_scope_name(tc_barrier_scope s);    /* "block", "warp" */

/* Block rasterization order of T.use_swizzle. */
typedef enum tc_swizzle_order { TC_SWIZZLE_ROW, TC_SWIZZLE_COLUMN, TC_SWIZZLE_MLX } tc_swizzle_order;
const char *tc_swizzle_order_name(tc_swizzle_order o);    /* "row", "column", "mlx" */

/* Intrinsics (intrinsics.def): target instructions the IR can name. */
typedef enum tc_intrinsic_id {
#define TC_INTRINSIC(id, name, kind, arity, targets) TC_INTRIN_##id,
#include "ir/intrinsics.def"
  TC_INTRIN_COUNT
} tc_intrinsic_id;
typedef enum tc_intrinsic_kind { TC_INTRIN_KIND_EXPR, TC_INTRIN_KIND_STMT } tc_intrinsic_kind;
typedef struct tc_intrinsic_info {
  const char *name;
  tc_intrinsic_kind kind;
  int arity;           /* -1: variable */
  const char *targets; /* targets that implement it, space separated ("interp cuda") */
} tc_intrinsic_info;
/* The entry named `name`, or NULL. */
const tc_intrinsic_info *tc_intrinsic_lookup(const char *name, tc_intrinsic_id *id);
/* The TileLang construct the user wrote that became intrinsic `name` ("T.rng_rand" for
 * philox_rand), for errors on a target that lacks it; NULL when the IR's name is the one to say. */
const char *tc_intrinsic_construct(const char *name);

typedef enum tc_reduce_kind { TC_RED_SUM, TC_RED_MAX, TC_RED_MIN, TC_RED_ABSSUM, TC_RED_ABSMAX } tc_reduce_kind;
const char *tc_reduce_kind_name(tc_reduce_kind k);

typedef enum tc_gemm_policy { TC_POLICY_SQUARE, TC_POLICY_FULL_ROW, TC_POLICY_FULL_COL } tc_gemm_policy;
const char *tc_gemm_policy_name(tc_gemm_policy p);

struct tc_stmt {
  tc_stmt_kind kind;
  tc_loc loc;
  union {
    struct { int n; tc_stmt **items; } seq;
    struct { tc_buffer *buf; } alloc;
    struct {
      tc_var *var;
      tc_expr *min, *extent;  /* int32 */
      tc_loop_kind kind;
      int num_stages;         /* PIPELINED; 0 when not given */
      tc_pipeline_args pipeline; /* PIPELINED: order, stage, sync, group */
      int thread_axis;        /* THREAD_BINDING: 0=x, 1=y, 2=z */
      /* SERIAL, made by the GPU lowering (pipeline.c): the body is SEQ[producer, consumer] and
       * runs serially (producer(k), then consumer(k)), but a target may run the producers of
       * every iteration on the kernel's producer threads and the consumers on the others,
       * ordered by the full/empty mbarriers the two parts contain (warp specialization).
       * Each part begins with LET c = var: the pipeline's iteration count, which stages and
       * phases are computed from; a target that runs the loop once per tile of a persistent
       * block continues it from the previous run instead */
      bool ws_split;
      /* ws_split, set by overlap.c: the consumer part is [LET c = var, IF(var == min, PRO,
       * STEADY), IF(var == min + extent - 1, EPI)]; a target may print it as PRO for the first
       * iteration, STEADY for the others and EPI after the last, with no branch in the loop */
      bool ws_rotated;
      tc_stmt *body;
    } loop;
    struct { tc_expr *cond; tc_stmt *then_s, *else_s; } if_;
    struct { tc_expr *cond; tc_stmt *body; } while_; /* WHILE: cond is evaluated before each run of body */
    struct { tc_buffer *buf; int nidx; tc_expr **idx; tc_expr *value; bool in_bounds; /* as LOAD's */ } store;
    struct { tc_var *var; tc_expr *value; } let; /* LET and ASSIGN */
    struct {
      tc_region src, dst;
      bool disable_tma;          /* hints of T.copy; they never change results */
      int coalesced_width;       /* 0: not given */
      tc_eviction_policy eviction_policy;
    } copy;
    struct {
      tc_region a, b, c;
      bool trans_a, trans_b, clear_accum;
      tc_gemm_policy policy;
      int k_pack;
      int wg_wait;               /* Hopper wgmma wait depth (0: wait for all; -1: no wait) */
      int seq;                   /* the GPU lowering's number for it (1, 2, ... in program order; 0: none) */
    } gemm;
    struct { tc_region dst; tc_expr *value; } fill;
    struct { tc_reduce_kind op; tc_region src, dst; int dim; bool clear; } reduce;
    struct { tc_region src, dst; int dim; bool reverse; } cumsum;
    /* ATOMIC_ADD. Element form: buf[idx...] += value (dst.buf NULL). Tile form: region dst +=
     * region src (buf NULL), elementwise over the squeezed shape. */
    struct {
      tc_buffer *buf; int nidx; tc_expr **idx; tc_expr *value;
      tc_region dst, src;
      /* element form, T.atomic_add(..., return_prev=True): a per-thread T.alloc_var cell (scope
       * VAR, the destination's dtype) that receives the element's value before this thread's
       * addition; NULL otherwise. Only the interpreter and the cpu target run it. */
      tc_buffer *prev;
    } atomic;
    struct { const char *msg; tc_expr *value; tc_buffer *buf; } print;
    struct { tc_expr *cond; const char *msg; } assert_;
    struct { const char *what; const char *detail; } annotate;
    struct { tc_expr *value; } evaluate;
    struct { tc_barrier_scope scope; } barrier;
    /* INTRINSIC: a statement intrinsic of intrinsics.def, applied to args */
    struct { const char *name; int nargs; tc_expr **args; } intrinsic;
  } u;
};

/* ---- kernels ---- */
typedef struct tc_param {
  const char *name;
  tc_buffer *buf;  /* tensor parameter (scope GLOBAL), or NULL */
  tc_var *var;     /* scalar parameter, or NULL */
  bool is_output;  /* eager T.empty result, out_idx, or written by the body */
} tc_param;

typedef struct tc_kernel_ir {
  const char *name;
  tc_loc loc;
  int nparams;
  tc_param *params;
  int nsyms;
  tc_var **syms;          /* symbolic dimensions, bound from tensor shapes at launch */
  int grid_ndim;          /* 1..3 */
  tc_expr *grid[3];       /* int32, may involve symbolic dims */
  int threads_ndim;       /* 1..3 */
  int threads[3];
  tc_var *block_idx[3];   /* NULL for axes not bound by `as` */
  tc_stmt *body;
  /* @tilelang.jit arguments, recorded */
  int nout_idx;
  int *out_idx;
  const char *jit_args;   /* the jit decorator's keyword arguments, as written */
  /* TMA tensor maps the lowered kernel takes after its symbolic dims (cuda sm_90a; set by the
   * GPU lowering, docs/cuda.md "TMA"): map i describes parameter tma[i].param for boxes of
   * rows x cols elements landing in the swizzled layout (tc_tma_span). split > 1: the blocks
   * of a cluster (below) each load rows / split of the box, a whole number of 8-row groups, and
   * multicast it to every block of the cluster, so that each still receives the whole box */
  int ntma;
  struct tc_tma_map { int param; int64_t rows, cols; int split; } *tma;
  /* Set by the GPU lowering (cuda sm_90a, pipeline.c): the persistent blocks run in clusters of
   * this many (0: none), which take the tiles of consecutive grid-y indices together and share
   * the loads of the split maps; the grid's y extent is a multiple of it */
  int cluster;
  /* pass_configs={PassConfigKey.TL_ENABLE_FAST_MATH: True}: gpu targets may use approximate
   * exp/exp2/log/log2/sin/cos (the cpu reference stays exact; --verify's tolerance covers it) */
  bool fast_math;
  /* pass_configs={PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}: no producer warpgroup */
  bool no_warp_specialize;
  /* pass_configs={PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True}: the program places every
   * barrier between its per-thread statements itself; insert-barriers adds none and refuses
   * none (a race the program leaves shows as a difference from the reference) */
  bool no_storage_sync;
  /* The parameters a TileLang caller gets back, in order (0-based): out_idx normalised, or
   * the tensors an eager @tilelang.jit function returns; nreturns 0 when neither. */
  int nreturns;
  int *returns;
  /* T.use_swizzle: block rasterization (L2 locality); results do not depend on it */
  int swizzle_panel;      /* panel size; 0 when T.use_swizzle was not called */
  bool swizzle_enable;
  tc_swizzle_order swizzle_order;
  /* explicit warp specialization (T.ws, T.alloc_barrier): the reader runs it in program order
   * (src/front/eval_ws.c); GPU targets refuse it until it is lowered onto their mbarriers */
  bool warp_specialized;
  tc_loc warp_specialized_loc;
  /* the warp groups (bit g: T.ws(g)) whose bodies run a T.gemm: the consumers, when the GPU
   * lowering maps the kernel onto its warp-specialized pipeline (gpu/ws_explicit.c) */
  unsigned ws_gemm_groups;
  /* Set by the GPU lowering when a loop is ws_split: the block launches threads + this many
   * threads (a producer warpgroup, last); they run only the producer parts of that loop, and
   * a block barrier still means the kernel's own threads */
  int producer_threads;
  /* Several dependent `with T.Kernel(...)` blocks of one prim_func (src/front/eval_kernels.c):
   * the kernel is launched nlaunches times over its grid, one launch after another (every block
   * of a launch finishes before the next launch starts); launch_var, a BLOCK_IDX variable of
   * axis 3, holds the launch's number. nlaunches <= 1 and launch_var NULL: one launch. Only the
   * interpreter and the cpu target run more than one; the GPU lowering refuses them. */
  int nlaunches;
  tc_var *launch_var;
  /* T.alloc_global: global workspace buffers (scope GLOBAL, no parameter) that the runtime
   * allocates, zeroed, for each launch of the kernel (tilec_kernel_launch, the reference run)
   * and frees after it; every block and every launch of the kernel (nlaunches) sees the same
   * storage. Workspace w has param_index nparams + w: a backend finds its storage at
   * data[nparams + w] of the launch's pointers. Only the interpreter and the cpu target run
   * them; the GPU lowering refuses them. */
  int nworkspaces;
  tc_buffer **workspaces;
  int next_id;            /* id counter for vars and buffers */
} tc_kernel_ir;

/* The swizzle span, in bytes, of a TMA box (and of the shared tile it lands in) whose rows are
 * `cols` elements of `eb` bytes: 128 for rows of whole 128-byte panels (8-row x 128-byte atoms
 * side by side); a row of 64 or 32 bytes is one panel in the hardware's 64- or 32-byte swizzle
 * (tc_gpu_swizzle_index's layouts). */
static inline int tc_tma_span(int64_t cols, int eb) {
  int64_t r = cols * eb;
  return r >= 128 ? 128 : (int)r;
}

/* ---- builder (ir.c). Every constructor allocates from the arena and never fails: the arena
 * escapes on out-of-memory. Constructors do not fold or check types; tc_ir_verify does. ---- */
tc_expr *tc_ir_int(tc_arena *a, int64_t v, tc_dtype dt, tc_loc loc);
tc_expr *tc_ir_float(tc_arena *a, double v, tc_dtype dt, tc_loc loc);
tc_expr *tc_ir_bool(tc_arena *a, bool v, tc_loc loc);
tc_expr *tc_ir_var_ref(tc_arena *a, tc_var *v, tc_loc loc);
tc_expr *tc_ir_load(tc_arena *a, tc_buffer *b, int nidx, tc_expr **idx, tc_loc loc);
tc_expr *tc_ir_cast(tc_arena *a, tc_dtype to, tc_expr *x, tc_loc loc);
/* Unary/binary/ternary with the dtype rules of the op class: ARITH/MATH: dtype of the first
 * operand; CMP/LOGIC: bool. SELECT: dtype of the second operand. */
tc_expr *tc_ir_unary(tc_arena *a, tc_expr_op op, tc_expr *x, tc_loc loc);
tc_expr *tc_ir_binary(tc_arena *a, tc_expr_op op, tc_expr *x, tc_expr *y, tc_loc loc);
tc_expr *tc_ir_select(tc_arena *a, tc_expr *c, tc_expr *t, tc_expr *f, tc_loc loc);
/* CALL of an expression intrinsic, with result dtype dt. */
tc_expr *tc_ir_call(tc_arena *a, const char *callee, tc_dtype dt, int nargs, tc_expr **args, tc_loc loc);
/* ADDRESS_OF buf[idx...] (uint64). */
tc_expr *tc_ir_address_of(tc_arena *a, tc_buffer *b, int nidx, tc_expr **idx, tc_loc loc);
/* INTRINSIC statement. */
tc_stmt *tc_ir_intrinsic_stmt(tc_arena *a, const char *name, int nargs, tc_expr **args, tc_loc loc);

/* Evaluate an integer (or bool) expression made of constants, variables and integer
 * arithmetic, with variables bound by `bind` (false: unbound). Python semantics for // and %
 * and int64 arithmetic. False when the expression has another op, a variable is unbound, or it
 * divides by zero. */
typedef bool (*tc_var_binding_fn)(void *ctx, const tc_var *v, int64_t *out);
bool tc_expr_eval_int(const tc_expr *e, tc_var_binding_fn bind, void *ctx, int64_t *out);

tc_var *tc_ir_new_var(tc_arena *a, tc_kernel_ir *k, const char *name, tc_dtype dt, tc_var_kind kind, tc_loc loc);
tc_buffer *tc_ir_new_buffer(tc_arena *a, tc_kernel_ir *k, const char *name, tc_dtype dt, tc_scope scope,
                            int ndim, tc_expr **shape, tc_loc loc);

tc_stmt *tc_ir_stmt(tc_arena *a, tc_stmt_kind kind, tc_loc loc); /* zeroed, fill the union */
tc_stmt *tc_ir_seq(tc_arena *a, int n, tc_stmt **items, tc_loc loc);
/* IF cond: then_s; cond NULL (always true) gives then_s itself. */
tc_stmt *tc_ir_if_then(tc_arena *a, tc_expr *cond, tc_stmt *then_s, tc_loc loc);
/* A growable statement list for builders. */
typedef struct tc_stmt_list { int n, cap; tc_stmt **items; } tc_stmt_list;
void tc_stmt_list_push(tc_arena *a, tc_stmt_list *l, tc_stmt *s);
tc_stmt *tc_stmt_list_seq(tc_arena *a, tc_stmt_list *l, tc_loc loc);

tc_region tc_ir_whole_region(tc_arena *a, tc_buffer *b); /* requires a constant shape */

/* Queries */
bool tc_expr_const_int(const tc_expr *e, int64_t *out);
bool tc_buffer_const_shape(const tc_buffer *b, int64_t *out /* ndim */);
int64_t tc_buffer_numel(const tc_buffer *b); /* -1 when not constant */
tc_dtype tc_index_dtype(void); /* int32 */

/* Deep copy of an expression or statement (new nodes, same vars and buffers). */
tc_expr *tc_ir_clone_expr(tc_arena *a, const tc_expr *e);
tc_stmt *tc_ir_clone_stmt(tc_arena *a, const tc_stmt *s);

/* ---- printer (print.c) and verifier (verify.c) ---- */
void tc_ir_print_expr(tc_strbuf *sb, const tc_expr *e);
void tc_ir_print_kernel(tc_strbuf *sb, const tc_kernel_ir *k);
/* One statement (and its body) at the given indentation level, names printed bare. */
void tc_ir_print_stmt(tc_strbuf *sb, const tc_stmt *s, int indent);
/* A region as the printer shows it: `A[by * 128 : +128, k]`, or `A` when it is the whole buffer. */
void tc_ir_print_region(tc_strbuf *sb, const tc_region *r);
/* Check structural and type invariants. `stage` names the pass after which it runs, for the
 * message. Returns false and fills err with TILEC_ERROR_INTERNAL (or PROGRAM for errors the
 * user's program caused, such as a shape mismatch, with its location). */
bool tc_ir_verify(const tc_kernel_ir *k, const char *stage, tilec_error *err);

#endif
