/* eval_int.h: internals of the compile-time evaluator (eval*.c). Not part of any interface.
 *
 * The evaluator runs the Python subset of a TileLang program. Compile-time values (ints,
 * floats, tuples, functions, ...) fold; values that depend on kernel indices or runtime data
 * are IR expressions (TV_EXPR). Inside `with T.Kernel(...)` statements that do work append IR
 * statements to the current list (ev->cur). Every error is reported through ev_fail, which
 * records the diagnostic and longjmps to tc_front_eval; all memory is arena memory, so the
 * escape leaks nothing. */
#ifndef TILEC_EVAL_INT_H
#define TILEC_EVAL_INT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "front/front.h"

typedef struct tc_val tc_val;
typedef struct tc_ev tc_ev;
typedef struct tc_env tc_env;

typedef enum tv_kind {
  TV_NONE, TV_BOOL, TV_INT, TV_FLOAT, TV_STR, TV_TUPLE, TV_LIST, TV_DICT, TV_SLICE,
  TV_DTYPE,      /* a dtype value (T.float16, "float16" converts to it where a dtype is wanted) */
  TV_FUNC,       /* a user function or lambda */
  TV_BUILTIN,    /* a builtin function, possibly bound to a receiver (self) */
  TV_MODULE,     /* tilelang, tilelang.language (T), math, T.GemmWarpPolicy */
  TV_OPAQUE,     /* an import tilec does not model (torch, numpy, ...) */
  TV_EXPR,       /* an IR expression: a runtime value */
  TV_BUFFER,     /* an IR buffer */
  TV_ELEM,       /* buf[i, j] with one index per dimension: a load, or a corner in tile ops */
  TV_REGION,     /* buf[a:b, i, :]: a box */
  TV_RANGE,      /* range(...) / T.serial / T.Parallel / T.Pipelined / T.unroll */
  TV_KERNEL,     /* the frame T.Kernel(...) returns, used by `with` */
  TV_TENSOR_TYPE,/* T.Tensor(shape, dtype) annotation */
  TV_ENUM,       /* T.GemmWarpPolicy.Square, ... */
  TV_LAYOUT,     /* T.Layout / T.Fragment / make_swizzled_layout: a tc_layout */
  TV_WARP_GROUP, /* the frame T.ws(k, ...) returns, used by `with` (eval_ws.c) */
  TV_DEAD        /* a name whose binding ended with a runtime block */
} tv_kind;

/* Module identities (TV_MODULE). */
enum { TM_TILELANG = 1, TM_LANGUAGE, TM_MATH, TM_POLICY, TM_LAYOUT, TM_ITERTOOLS }; /* TM_LAYOUT: tilelang.layout */

typedef struct tc_func {
  const char *name;
  const tc_ast *def;     /* FUNCTION_DEF or LAMBDA */
  tc_env *closure;     /* the scope the def was evaluated in */
  tc_val **defaults;     /* one per parameter (NULL where none) */
  bool is_prim_func, is_macro, is_jit;
  const tc_ast *jit_call; /* @tilelang.jit(...) call node, or NULL */
  tc_val *out_idx;        /* tilelang.compile(f, out_idx=...) */
} tc_func;

typedef struct tc_args tc_args;
typedef tc_val *(*tc_builtin_fn)(tc_ev *ev, tc_val *self, tc_args *a);

typedef struct tc_builtin {
  const char *name; /* as the user writes it: "T.copy", "len", "list.append" */
  const char *spec; /* parameters: "src dst coalesced_width? ..."; "*" varargs; "|" keyword-only */
  tc_builtin_fn fn;
  int tag;          /* a small integer the implementation uses (op, kind) */
} tc_builtin;

/* The entry of a NULL-terminated table whose name, past its first `skip` characters (the "T."
 * of "T.copy"), is `name`; NULL when none is. */
const tc_builtin *ev_builtin_find(const tc_builtin *table, const char *name, size_t skip);

enum { EV_TAG_LAZY_ARGS = 99 }; /* a builtin that receives its arguments unevaluated (None) */
enum { EV_TAG_LAMBDA_ARGS = 98 }; /* a builtin whose arguments may be lambdas even in a kernel */

/* Loop-range descriptors. */
typedef enum { TR_PY_RANGE, TR_SERIAL, TR_PARALLEL, TR_PIPELINED, TR_UNROLL, TR_VECTORIZED, TR_PERSISTENT } tr_kind;

struct tc_val {
  tv_kind kind;
  union {
    bool b;
    int64_t i;
    double f;
    struct { const char *s; size_t n; } str;
    struct { int n, cap; tc_val **v; } seq;          /* TUPLE, LIST */
    struct { int n, cap; tc_val **k, **v; } dict;
    struct { tc_val *lo, *hi, *step; } slice;
    tc_dtype dt;
    tc_func *func;
    struct { const tc_builtin *b; tc_val *self; } bi;
    struct { int id; } mod;
    struct { const char *name; } opaque;
    tc_expr *e;
    tc_buffer *buf;
    struct { tc_buffer *buf; tc_expr **idx; } elem;
    struct { tc_buffer *buf; tc_range *r; bool *point; } region; /* point: the dim was indexed */
    struct {
      tr_kind kind;
      int n;                 /* number of dimensions (T.Parallel(M, N): 2) */
      tc_val **start, **stop; /* per dim */
      tc_val *step;          /* TR_PY_RANGE / TR_SERIAL: step (int), NULL for 1 */
      int num_stages;
      tc_pipeline_args pipe; /* TR_PIPELINED: order, stage, sync, group */
      tc_val *wave, *index, *group; /* TR_PERSISTENT: wave_size, index, group_size (stop: the domain) */
    } range;
    struct { int n; tc_val **v; const tc_ast **nodes; int threads_ndim; int threads[3]; } kernel; /* T.Kernel(...) */
    struct { int ndim; tc_val **shape; tc_dtype dt; } tensor;
    struct { int id; int value; } en;
    struct { const char *why; tc_loc loc; } dead;
    struct { tc_layout *l; const tc_buffer *for_buf; int64_t shape[8]; int ndim; } layout; /* shape: the input shape */
    struct { int n; int64_t ids[8]; tc_loc loc; } ws; /* T.ws(...): warp group indices */
  } u;
};

/* Arguments of a call, evaluated, with their syntax for messages. */
struct tc_args {
  int n;              /* positional */
  tc_val **v;
  const tc_ast **node; /* may hold NULL entries (values from *args) */
  int nkw;
  const char **kw;
  tc_val **kv;
  const tc_ast **knode;
  const tc_ast *call; /* the CALL node (for its loc) */
  /* filled by ev_bind_builtin: one slot per spec parameter */
  tc_val **p;
  const tc_ast **pnode;
};

/* An eager kernel's implicit shape name (`X: T.Tensor([M, N], dtype)` with M defined nowhere):
 * like T.const("M"), bound by a define, else a symbolic dimension, and bound in the current scope. */
tc_val *ev_implicit_dim(tc_ev *ev, const char *name, tc_loc loc);

/* Where keyword argument i was written (its name), or `fallback` when not from a call. */
tc_loc ev_kw_loc(const tc_args *a, int i, tc_loc fallback);

/* ---- scopes ---- */
typedef struct tc_binding {
  const char *name;
  uint32_t hash;
  tc_val *val;
  tc_var *owned;   /* the LOCAL var this name declared (assignment then becomes ASSIGN) */
  int depth;       /* runtime-block depth at which it was bound */
} tc_binding;

struct tc_env {
  tc_env *parent; /* enclosing function scope (closures); NULL for module globals */
  bool is_module;
  int n, cap;       /* open addressing, cap a power of two */
  tc_binding *slots;
  const char **globals; /* names declared `global`/`nonlocal` in this function */
  int nglobals;
  struct tc_modctx *mod; /* a module scope: its module (eval_import.c), NULL before a sibling loads */
};

/* A pending module-level definition (lazy evaluation of module globals). */
typedef struct tc_pending {
  const char *name;
  const tc_ast *stmt;
  int state; /* 0 not run, 1 running, 2 done */
} tc_pending;

/* Undo log of bindings changed inside runtime blocks. */
typedef struct tc_undo {
  tc_env *scope;
  const char *name;
  tc_binding old; /* old.val NULL: was unbound */
} tc_undo;

/* FLOW_RT_BREAK: a 'break' under a runtime condition ran into the innermost runtime loop's flag
 * cell (tc_ev.brk); the rest of each enclosing block, up to the loop body, runs only while the
 * flag is clear (eval_stmt.c) */
typedef enum { FLOW_NORMAL, FLOW_BREAK, FLOW_CONTINUE, FLOW_RETURN, FLOW_RT_BREAK } tc_flow;

struct tc_ev {
  tc_arena *ir;      /* the caller's arena: IR nodes and their strings */
  tc_arena tmp;      /* values, scopes: freed when tc_front_eval returns */
  const tc_source *src;
  const tc_ast *module;
  tilec_error *err;
  jmp_buf fail_jmp;
  jmp_buf oom_jmp;

  tc_env *globals;
  tc_pending *pending;
  const tc_var **const_dims; /* T.const dimensions left symbolic: a -D binds them */
  int nconst_dims;
  int npending;
  const tc_ast **error_stmts;
  int nerror_stmts;
  struct tc_modctx *modules; /* the file's module and the sibling modules it imports (eval_import.c) */

  tc_kernel_ir *k;
  const char *kernel_name;
  tc_kernel_style style;
  const tilec_define *defines;
  size_t ndefines;
  bool *define_used;

  /* kernel construction */
  tc_stmt_list *cur;        /* where statements go; NULL outside T.Kernel */
  bool in_prim_func;        /* evaluating a prim_func body */
  bool kernel_seen;
  int threads_ndim, threads[3];
  tc_var *thread_vars[3];
  int rt_depth;             /* runtime-block nesting (FOR bodies, runtime IF branches) */
  int loop_depth_mark;      /* rt_depth at the innermost runtime loop's body (0: none) */
  unsigned assign_stamp;    /* counts LETs and assignments of local variables (ev_const_diff_lets) */
  tc_undo *undo;
  int nundo, capundo;

  /* eager style */
  const tc_ast *eager_def;
  bool implicit_dims; /* evaluating an eager tensor annotation: unknown names are shape names */
  tc_buffer **eager_tensors; /* tensor parameters by function parameter index */
  int neager;
  tc_buffer **empties;       /* T.empty outputs, in creation order */
  int nempties, capempties;
  tc_buffer **outputs;
  int noutputs;

  /* frames */
  tc_env *scope;          /* current local scope */
  tc_val *ret;              /* value of the last `return` */
  int call_depth;
  int fn_rt_base;           /* rt_depth when the current function was entered */
  int expr_depth;
  int64_t steps;            /* statements executed, bounded */
  tc_val *small_ints, *bools; /* shared immutable values */
  struct { const tc_expr **key; uint32_t *size, *depth; int n, cap; } esize; /* tree size, depth of exprs */
  int block_depth;
  const tc_ast *cur_stmt;   /* the statement being executed (names buffers after their target) */

  /* explicit warp specialization (eval_ws.c) */
  struct { tc_buffer *buf; int n; int64_t *counts; } *barriers; /* T.alloc_barrier: arrive counts */
  tc_buffer *implicit_barriers; /* T.create_list_of_mbarrier's list: int barrier arguments index it */
  int nbarriers, capbarriers;
  int64_t ws_threads;       /* threads of the enclosing T.ws group; 0 outside one */

  /* reducers (eval_reducer.c): the combine op of each T.alloc_reducer buffer */
  struct { tc_buffer *buf; int op; } *reducers;
  int nreducers, capreducers;

  /* T.attr / T.comm_reducer (eval_attr.c): the combine function of the enclosing
   * `with T.attr(T.comm_reducer(...), ...)`, and the one a T.attr call just named */
  tc_val *comm_reducer, *attr_pending;

  /* T.sync_grid (eval_kernels.c): the top-level statement list of the kernel block being read,
   * and where in it each T.sync_grid stands */
  tc_stmt_list *kernel_top;
  /* T.rng_init / T.rng_rand (eval_tl.c): the kernel block's per-thread generator state, a uint64
   * array (seed, subsequence, position) allocated at the block's top; NULL before the
   * block's first T.rng_init */
  tc_buffer *rng_state;
  /* 'break' under a runtime condition (eval_stmt.c): whether the innermost loop is a serial
   * runtime loop that may break, and its flag cell (a T.alloc_var int32, made on the first such
   * break; the loop allocates and clears it before it and runs its body while it is 0) */
  bool brk_ok;
  tc_buffer *brk;
  /* T.sync_threads(id, count) (eval_barrier.c): the kernel block's barriers of part of the block,
   * each with the conditions moved below it (NULL: none yet) */
  struct { tc_stmt *s; int64_t count; tc_expr *cond; } *pbars;
  int npbars, cappbars;
  int nsyncs;
  struct { int at; tc_loc loc; } syncs[16];
};

/* ---- eval.c: errors, values, scopes ---- */
_Noreturn void ev_fail(tc_ev *ev, tc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
_Noreturn void ev_fail_usage(tc_ev *ev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void ev_unsupported(tc_ev *ev, tc_loc loc, const char *what);
tc_val *tv_new(tc_ev *ev, tv_kind k);
tc_val *tv_none(tc_ev *ev);
tc_val *tv_bool(tc_ev *ev, bool b);
tc_val *tv_int(tc_ev *ev, int64_t i);
tc_val *tv_float(tc_ev *ev, double f);
tc_val *tv_str(tc_ev *ev, const char *s, size_t n);
tc_val *tv_cstr(tc_ev *ev, const char *s);
tc_val *tv_tuple(tc_ev *ev, int n, tc_val **v);
tc_val *tv_list(tc_ev *ev, int n, tc_val **v);
tc_val *tv_dtype(tc_ev *ev, tc_dtype dt);
tc_val *tv_expr(tc_ev *ev, tc_expr *e);
tc_val *tv_buffer(tc_ev *ev, tc_buffer *b);
tc_val *tv_builtin(tc_ev *ev, const tc_builtin *b, tc_val *self);
tc_val *tv_module(tc_ev *ev, int id);
tc_val *tv_opaque(tc_ev *ev, const char *name);
/* the value of iket.range(...): a context that does nothing (eval_compat.c) */
#define IKET_RANGE_NAME "iket.range(...)"
#define ATTR_NAME "T.attr(...)"
#define COMM_REDUCER_NAME "T.comm_reducer(...)"
void tv_list_push(tc_ev *ev, tc_val *list, tc_val *x);
const char *tv_kind_name(const tc_val *v); /* Python-ish type name: "int", "tuple", "buffer" */
/* repr/str into a string (for str(), f-strings and messages). */
void tv_format(tc_ev *ev, tc_strbuf *sb, const tc_val *v, bool repr);
const char *tv_to_cstr(tc_ev *ev, const tc_val *v, bool repr);
const char *ev_node_text(tc_ev *ev, const tc_ast *node); /* the source text of a node */
const char *ev_dtype_name(tc_dtype dt);                  /* static canonical name */

tc_env *scope_new(tc_ev *ev, tc_env *parent, bool is_module);
tc_binding *scope_find_local(tc_env *s, const char *name);
tc_binding *scope_set(tc_ev *ev, tc_env *s, const char *name, tc_val *v); /* logs for undo */
tc_val *ev_lookup(tc_ev *ev, const char *name, tc_loc loc); /* errors when unknown */
tc_val *ev_lookup_global(tc_ev *ev, const char *name, tc_loc loc, bool *found);
void ev_bind_name(tc_ev *ev, const char *name, tc_val *v, tc_loc loc); /* kernel-aware assignment */

/* ---- eval_expr.c ---- */
tc_val *ev_expr(tc_ev *ev, const tc_ast *e);
tc_val *ev_call_value(tc_ev *ev, tc_val *fn, tc_args *a, tc_loc loc);
tc_val *ev_call_func(tc_ev *ev, tc_func *f, tc_args *a, tc_loc loc);
tc_val *ev_binop(tc_ev *ev, int op, tc_val *x, tc_val *y, tc_loc loc);
tc_val *ev_compare(tc_ev *ev, tc_cmp_op op, tc_val *x, tc_val *y, tc_loc loc);
tc_val *ev_getattr(tc_ev *ev, tc_val *obj, const char *attr, tc_loc loc);
tc_val *ev_subscript(tc_ev *ev, tc_val *obj, tc_val *index, const tc_ast *index_node, tc_loc loc);
bool ev_truth(tc_ev *ev, tc_val *v, tc_loc loc); /* compile-time truthiness; errors on runtime */
bool ev_is_runtime(tc_val *v);                     /* EXPR / ELEM / VAR buffer */
tc_func *ev_make_func(tc_ev *ev, const tc_ast *def);
/* Iterate a compile-time iterable: calls fn for each element; stops early when fn returns false. */
typedef bool (*tc_iter_fn)(tc_ev *ev, tc_val *item, void *ctx);
void ev_iterate(tc_ev *ev, tc_val *it, tc_loc loc, tc_iter_fn fn, void *ctx);
tc_val *ev_to_list(tc_ev *ev, tc_val *it, tc_loc loc); /* list or tuple contents as a new tuple */
bool ev_equal(tc_ev *ev, tc_val *x, tc_val *y);        /* compile-time == */

/* ---- eval_types.c: IR conversion and typed arithmetic ---- */
tc_val *ev_scalar(tc_ev *ev, tc_val *v, tc_loc loc);    /* ELEM -> load; VAR buffer -> load [0] */
tc_expr *ev_to_expr(tc_ev *ev, tc_val *v, tc_loc loc);  /* a scalar value as an IR expression */
tc_expr *ev_to_expr_as(tc_ev *ev, tc_val *v, tc_dtype dt, tc_loc loc); /* and cast to dt */
tc_expr *ev_cast(tc_ev *ev, tc_expr *e, tc_dtype dt, tc_loc loc);    /* no-op when equal */
tc_expr *ev_index_expr(tc_ev *ev, tc_val *v, tc_loc loc);             /* int32 index */
tc_val *ev_ir_binop(tc_ev *ev, int op, tc_val *x, tc_val *y, tc_loc loc);
tc_val *ev_ir_compare(tc_ev *ev, tc_cmp_op op, tc_val *x, tc_val *y, tc_loc loc);
tc_val *ev_ir_unary(tc_ev *ev, int op, tc_val *x, tc_loc loc);
tc_val *ev_ir_math(tc_ev *ev, tc_expr_op op, const char *name, tc_val *x, tc_loc loc);
tc_val *ev_ir_minmax(tc_ev *ev, tc_expr_op op, tc_val *x, tc_val *y, tc_loc loc);
tc_val *ev_ir_select(tc_ev *ev, tc_val *c, tc_val *t, tc_val *f, tc_loc loc);
tc_expr *ev_to_bool_expr(tc_ev *ev, tc_val *v, tc_loc loc);
bool ev_get_dtype(tc_ev *ev, tc_val *v, tc_dtype *out, tc_loc loc, const char *what); /* errors */
tc_dtype ev_promote(tc_dtype a, tc_dtype b);
/* Why a value is not a compile-time constant: "depends on the kernel's block index". */
const char *ev_runtime_reason(tc_ev *ev, tc_val *v);
/* b - a when it folds to a constant. */
bool ev_const_diff(tc_expr *b, tc_expr *a, int64_t *out);
/* ev_const_diff that also sees through the LET values of local variables (`H1 = H0 + 64`: the
 * extent of H0:H1 is 64, as TileLang's simplifier finds); the variables it looked through are
 * marked folded, and assigning one of them later is an error (the extent would not hold). */
bool ev_const_diff_lets(tc_expr *b, tc_expr *a, int64_t *out);
bool ev_expr_equal(const tc_expr *a, const tc_expr *b);
/* A compile-time int, or an error naming `what` (and why the value is not constant). */
int64_t ev_need_int(tc_ev *ev, tc_val *v, const tc_ast *node, tc_loc loc, const char *what);
bool ev_parse_dtype_string(tc_ev *ev, const char *s, tc_dtype *out, tc_loc loc, bool fail);

/* ---- eval_stmt.c ---- */
tc_flow ev_block(tc_ev *ev, const tc_ast_list *body);
tc_flow ev_stmt(tc_ev *ev, const tc_ast *s);
void ev_assign(tc_ev *ev, const tc_ast *target, tc_val *v, tc_loc loc);
void ev_emit(tc_ev *ev, tc_stmt *s, tc_loc loc, const char *what);
void ev_rt_enter(tc_ev *ev, int *mark);
void ev_kernel_scope_end(tc_ev *ev, tc_loc loc);
/* eval_import.c: `from NAME import a, b` of a sibling file NAME.py in the program's folder */
bool ev_import_sibling(tc_ev *ev, const char *module, const tc_ast *import);
void ev_scan_module(tc_ev *ev);
typedef struct tc_modswitch {
  struct tc_modctx *saved; /* NULL: no switch happened */
} tc_modswitch;
/* Run a function defined in another module with that module's globals: enter before, leave after. */
tc_modswitch ev_module_enter(tc_ev *ev, const tc_env *closure);
void ev_module_leave(tc_ev *ev, tc_modswitch sw);
void ev_rt_leave(tc_ev *ev, int mark, bool kill);

/* ---- eval_tl.c: T.*, tilelang, math ---- */
tc_val *ev_module_attr(tc_ev *ev, int mod, const char *attr, tc_loc loc);
tc_val *ev_module_attr_try(tc_ev *ev, int mod, const char *attr);
/* eval_compat.c: helpers reached by dotted name (tilelang.math.next_power_of_2, device queries),
 * int methods, and the "needs an sm_100 target" diagnostic for Blackwell-only attributes. */
const tc_builtin *ev_compat_builtin(const char *dotted);
const tc_builtin *ev_tirx_builtin(const char *dotted); /* eval_tl.c: tvm.tirx.const, ... */
bool ev_compat_builtin_prefix(const char *dotted); /* a dotted path some compat or tirx builtin extends */
bool ev_tirx_builtin_prefix(const char *dotted);
tc_val *ev_compat_int_method(tc_ev *ev, tc_val *obj, const char *attr);
/* torch.cuda.get_device_properties(d) is an opaque value of this name; its attributes (major,
 * minor, multi_processor_count, name) come from ev_compat_device_property, NULL for others. */
#define DEVICE_PROPERTIES_NAME "torch.cuda.get_device_properties(...)"
tc_val *ev_compat_device_property(tc_ev *ev, const char *attr);
void ev_compat_check_attr(tc_ev *ev, const char *module, const char *attr, tc_loc loc);
tc_region ev_region(tc_ev *ev, tc_val *v, const tc_region *other, const tc_ast *node, tc_loc loc,
                    const char *what);
void ev_kernel_enter(tc_ev *ev, tc_val *frame, const tc_ast *target, const tc_ast_list *body,
                     tc_loc loc);
tc_buffer *ev_make_param_buffer(tc_ev *ev, const char *name, tc_val *ttype, tc_loc loc);
const char *ev_target_name(tc_ev *ev, const tc_ast *call, const char *dflt);

/* ---- eval_view.c: buffer views (T.reshape, T.view, T.Tensor(shape, dtype, X.data)) ---- */
/* T.Tensor(shape, dtype) as a tensor type value (TV_TENSOR_TYPE); shape_n: its syntax or NULL */
tc_val *ev_tensor_type(tc_ev *ev, tc_val *shape, const tc_ast *shape_n, tc_loc shape_loc, tc_val *dtype, tc_loc dtype_loc);
/* A view of the buffer `data` with the shape and dtype of the tensor type `tt`; emits its ALLOC. */
tc_val *ev_make_view(tc_ev *ev, tc_val *data, tc_loc data_loc, tc_val *tt, const tc_ast *call, const char *what);
tc_val *ev_t_reshape(tc_ev *ev, tc_val *self, tc_args *a); /* T.reshape(src, shape) */
tc_val *ev_t_view(tc_ev *ev, tc_val *self, tc_args *a);    /* T.view(src, shape=None, dtype=None) */

/* eval_tl.c: a loop-range value of n dimensions; a loop bound checked to be an integer */
tc_val *ev_make_range(tc_ev *ev, tr_kind kind, int n);
tc_val *ev_loop_bound(tc_ev *ev, tc_val *v, tc_loc loc, const char *what);
/* eval_loops_extra.c */
tc_val *ev_t_tir_parallel(tc_ev *ev, tc_val *self, tc_args *a); /* T.parallel(start, stop=None) */
tc_val *ev_t_persistent(tc_ev *ev, tc_val *self, tc_args *a);   /* T.Persistent(domain, wave, index, group) */
tc_val *ev_t_atomic_addx2(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_atomic_addx4(tc_ev *ev, tc_val *self, tc_args *a);

/* eval_im2col.c: T.im2col / T.c2d_im2col, the im2col tile of a 2-D convolution */
tc_val *ev_t_im2col(tc_ev *ev, tc_val *self, tc_args *a);

/* ---- eval_layout.c: T.Layout, T.Fragment, make_swizzled_layout, T.annotate_layout ---- */
tc_val *ev_t_annotate_layout(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_layout(tc_ev *ev, tc_val *self, tc_args *a);          /* T.Layout(shape, forward_fn) */
tc_val *ev_t_fragment(tc_ev *ev, tc_val *self, tc_args *a);        /* T.Fragment(shape, ...) */
tc_val *ev_t_swizzled_layout(tc_ev *ev, tc_val *self, tc_args *a); /* tilelang.layout.make_swizzled_layout */
tc_val *ev_t_mma_swizzle_layout(tc_ev *ev, tc_val *self, tc_args *a); /* tilelang.cuda.intrinsics.make_mma_swizzle_layout */

/* ---- eval_builtins.c: Python builtins and methods ---- */
const tc_builtin *ev_python_builtin(const char *name);
const char *ev_python_builtin_suggest(const char *name, int *dist);
tc_val *ev_method(tc_ev *ev, tc_val *obj, const char *attr, tc_loc loc); /* NULL when none */
/* Bind a call's arguments to a builtin's spec; fills a->p. Errors in Python's words. */
void ev_bind_builtin(tc_ev *ev, const tc_builtin *b, tc_args *a);
/* Accessors for bound parameters. */
tc_loc arg_loc(tc_args *a, int i);
bool arg_bool(tc_ev *ev, tc_args *a, int i, bool dflt);
int64_t arg_int(tc_ev *ev, tc_args *a, int i, int64_t dflt, const char *what);

#define EV_NEW(ev, type) TC_NEW(&(ev)->tmp, type)
#define EV_NEW_ARRAY(ev, type, n) TC_NEW_ARRAY(&(ev)->tmp, type, (n) > 0 ? (n) : 1)

/* ---- eval_barrier.c: T.sync_threads(id, count) ---- */
void ev_partial_barrier(tc_ev *ev, int64_t count, tc_loc loc);
bool ev_contains_partial_barrier(const tc_ev *ev, const tc_stmt *s);
tc_stmt *ev_hoist_partial_barriers(tc_ev *ev, tc_stmt *ifs); /* the IF with its condition moved below them */
void ev_check_partial_barriers(tc_ev *ev);                  /* at the end of a kernel block */

/* ---- eval_ws.c: explicit warp specialization ---- */
tc_val *ev_t_alloc_barrier(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_create_list_of_mbarrier(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_get_mbarrier(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_gemm(tc_ev *ev, tc_val *self, tc_args *a); /* eval_tl.c: T.gemm */
/* eval_hopper.c: T.wgmma_gemm, T.wait_wgmma, T.ptx_commit_group, T.ptx_wait_group by attribute */
const tc_builtin *ev_hopper_builtin(const char *attr);
/* eval_reducer.c: T.alloc_reducer, T.reducer_init, T.reducer_update, T.finalize_reducer */
const tc_builtin *ev_reducer_builtin(const char *attr);
/* eval_attr.c: T.attr, T.comm_reducer, T.evaluate, T.tvm_thread_allreduce; ev_attr_block runs
 * the body of `with T.attr(...)` with its comm_reducer in effect */
const tc_builtin *ev_attr_builtin(const char *attr);
tc_flow ev_attr_block(tc_ev *ev, const tc_ast_list *body);

/* eval_kernels.c: a second `with T.Kernel(...)` block of a prim_func joins the first's launch.
 * fuse_begin checks the threads, widens the grid to hold both and makes sure every axis has a
 * block index; fuse_end checks that the blocks are independent and sets the body to both
 * blocks, each guarded to its own grid. */
typedef struct tc_ev_fuse {
  tc_stmt *old_body;
  int old_ndim, new_ndim;
  tc_expr *old_grid[3], *new_grid[3]; /* NULL: the block has no such axis */
} tc_ev_fuse;
void ev_kernel_fuse_begin(tc_ev *ev, tc_ev_fuse *f, int n, tc_expr *const *grid, const int threads[3], int threads_ndim,
                          tc_loc loc);
void ev_kernel_fuse_end(tc_ev *ev, const tc_ev_fuse *f, tc_stmt *body, tc_loc loc);
/* T.sync_grid() in the top level of a kernel block: the kernel's next launch starts there */
void ev_kernel_grid_sync(tc_ev *ev, tc_loc loc);
/* The first kernel block's statements, split into launches at its T.sync_grid calls */
tc_stmt *ev_kernel_split_launches(tc_ev *ev, tc_stmt_list *list, tc_loc loc);
tc_val *ev_t_barrier_arrive(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_mbarrier_arrive(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_barrier_wait(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_mbarrier_wait_parity(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_t_ws(tc_ev *ev, tc_val *self, tc_args *a);
void ev_ws_enter(tc_ev *ev, tc_val *ws, const tc_ast_list *body, tc_loc loc);
void ev_check_barrier_arg(tc_ev *ev, tc_val *v, tc_loc loc, const char *what);
/* `if tx < C:` (eval_ws.c): how many threads of a 1-D block the condition selects when it
 * compares the thread index with a constant and selects some but not all; else -1. */
int64_t ev_thread_range_split(tc_ev *ev, const tc_expr *cond);
/* Emit an 'if' on the thread index whose branches hold tile operations as warp-specialized
 * branches, in place; false (nothing emitted) when they hold none. */
bool ev_ws_split_branches(tc_ev *ev, tc_stmt *if_stmt, tc_loc loc);

#endif
