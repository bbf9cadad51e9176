/* verify.c: structural and type checks of the tile IR, run after the evaluator and between
 * later passes.
 *
 * Two kinds of failure. A broken invariant (a NULL operand, a wrong arity, a dtype mismatch the
 * evaluator should have cast away, a variable used outside its scope) is a bug in tilec:
 * TILEC_ERROR_INTERNAL, with a message naming the stage and the offending statement. A tile
 * operation whose shapes do not fit, or one placed under thread-dependent control flow, is a
 * mistake in the user's program: TILEC_ERROR_PROGRAM at its source location. The first error
 * stops the check. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "ir/ir.h"

typedef struct vctx {
  const tc_kernel_ir *k;
  const char *stage;
  tilec_error *err;
  bool failed;
  const tc_stmt *cur;      /* statement being checked, for messages */
  const void **scope;      /* vars and buffers visible here (a stack) */
  int nscope, scope_cap;
  tc_varying varying;      /* values that may differ between threads (analysis/varying.c) */
  int thread_dep;          /* > 0 under control flow that depends on the thread index */
  int in_parallel;         /* > 0 inside a T.Parallel body */
} vctx;

static bool push_ptr(const void ***arr, int *n, int *cap, const void *p) {
  if (*n == *cap) {
    int c = *cap ? *cap * 2 : 32;
    const void **a = realloc((void *)*arr, sizeof *a * (size_t)c);
    if (!a) return false;
    *arr = a;
    *cap = c;
  }
  (*arr)[(*n)++] = p;
  return true;
}

static void stmt_line(const tc_stmt *s, char *out, size_t cap) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_stmt(&sb, s, 0);
  const char *t = tc_sb_cstr(&sb);
  size_t n = strcspn(t, "\n");
  if (n > 160) n = 160;
  snprintf(out, cap, "%.*s", (int)n, t);
  tc_sb_free(&sb);
}

static bool internal(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool internal(vctx *v, const char *fmt, ...) {
  if (v->failed) return false;
  v->failed = true;
  char msg[512], where[200] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (v->cur) stmt_line(v->cur, where, sizeof where);
  else snprintf(where, sizeof where, "kernel %s", v->k->name ? v->k->name : "?");
  tc_error(v->err, TILEC_ERROR_INTERNAL, "IR verification failed after %s: %s, in `%s`", v->stage ? v->stage : "?",
           msg, where);
  return false;
}

static bool program(vctx *v, tc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool program(vctx *v, tc_loc loc, const char *fmt, ...) {
  if (v->failed) return false;
  v->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(v->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
  return false;
}

static const char *dtname(tc_dtype d, char *buf, size_t cap) {
  if (!tc_dtype_valid(d)) return "<invalid>";
  return tc_dtype_name(d, buf, cap);
}

static const char *bname(const tc_buffer *b) { return b && b->name ? b->name : "?"; }

static bool in_scope(const vctx *v, const void *p) {
  for (int i = v->nscope - 1; i >= 0; i--)
    if (v->scope[i] == p) return true;
  return false;
}

static bool declare(vctx *v, const void *p) {
  if (!push_ptr(&v->scope, &v->nscope, &v->scope_cap, p)) return internal(v, "out of memory");
  return true;
}

/* Does the value of e possibly differ between the threads of a block? */
static bool thread_dependent(const vctx *v, const tc_expr *e) { return tc_varying_expr(&v->varying, e); }

/* ---- expressions ---- */
static bool check_expr(vctx *v, const tc_expr *e);

/* A CALL (call != NULL, arguments already checked) or INTRINSIC against intrinsics.def. */
static bool check_intrinsic(vctx *v, const char *name, tc_intrinsic_kind kind, int nargs, tc_expr *const *args,
                            const tc_expr *call) {
  char b1[64], b2[64];
  tc_intrinsic_id id;
  const tc_intrinsic_info *in = tc_intrinsic_lookup(name, &id);
  const char *what = kind == TC_INTRIN_KIND_EXPR ? "call" : "intrinsic statement";
  if (!in) return internal(v, "%s of unknown intrinsic `%s`", what, name ? name : "<null>");
  if (in->kind != kind)
    return internal(v, "intrinsic `%s` is a%s, used as a%s", name, in->kind == TC_INTRIN_KIND_EXPR ? "n expression" : " statement",
                    kind == TC_INTRIN_KIND_EXPR ? "n expression" : " statement");
  if (in->arity >= 0 && nargs != in->arity)
    return internal(v, "intrinsic `%s` has %d argument(s), expected %d", name, nargs, in->arity);
  if (nargs > 0 && !args) return internal(v, "intrinsic `%s` has no argument array", name);
  if (!call)
    for (int i = 0; i < nargs; i++)
      if (!check_expr(v, args[i])) return false;
  if (id == TC_INTRIN_SHFL_XOR || id == TC_INTRIN_SHFL_SYNC) {
    if (!tc_dtype_eq(call->dtype, args[0]->dtype))
      return internal(v, "`%s` of %s has result dtype %s", name, dtname(args[0]->dtype, b1, sizeof b1), dtname(call->dtype, b2, sizeof b2));
    for (int i = 1; i < 3; i++)
      if (!tc_dtype_is_int(args[i]->dtype))
        return internal(v, "argument %d of `%s` has dtype %s, not an integer", i + 1, name, dtname(args[i]->dtype, b1, sizeof b1));
  }
  return true;
}

static bool check_int_expr(vctx *v, const tc_expr *e, const char *what) {
  if (!check_expr(v, e)) return false;
  char b[64];
  if (!tc_dtype_is_int(e->dtype) || e->dtype.lanes != 1)
    return internal(v, "%s has dtype %s, not an integer", what, dtname(e->dtype, b, sizeof b));
  return true;
}

static bool check_var_use(vctx *v, const tc_var *var) {
  if (var->kind == TC_VAR_THREAD_IDX) {
    /* the launch's thread shape is padded with 1s to three axes, as in TileLang */
    if (var->axis < 0 || var->axis > 2) return internal(v, "thread index %s has axis %d, not 0, 1 or 2", var->name, var->axis);
    return true;
  }
  if (!in_scope(v, var)) return internal(v, "variable %s (id %d) used outside its scope", var->name, var->id);
  return true;
}

static bool check_expr(vctx *v, const tc_expr *e) {
  char b1[64], b2[64], b3[64];
  if (!e) return internal(v, "missing expression");
  if ((unsigned)e->op >= TC_OP_COUNT) return internal(v, "unknown expression op %d", (int)e->op);
  const char *opn = tc_expr_op_name(e->op);
  if (!tc_dtype_valid(e->dtype)) return internal(v, "expression `%s` has an invalid dtype", opn);
  int arity = tc_expr_op_arity(e->op);
  if (arity >= 0 && e->nargs != arity)
    return internal(v, "`%s` has %d operand(s), expected %d", opn, e->nargs, arity);
  if (e->nargs > 0 && !e->args) return internal(v, "`%s` has no operand array", opn);
  for (int i = 0; i < e->nargs; i++)
    if (!check_expr(v, e->args[i])) return false;
  const tc_expr *x = e->nargs > 0 ? e->args[0] : NULL;
  const tc_expr *y = e->nargs > 1 ? e->args[1] : NULL;
  switch (tc_expr_op_class(e->op)) {
  case TC_CLS_LEAF:
    if (e->op == TC_OP_CONST_INT && tc_dtype_is_float(e->dtype))
      return internal(v, "integer constant %lld has float dtype %s", (long long)e->ival, dtname(e->dtype, b1, sizeof b1));
    if (e->op == TC_OP_CONST_FLOAT && !tc_dtype_is_float(e->dtype))
      return internal(v, "float constant %g has non-float dtype %s", e->fval, dtname(e->dtype, b1, sizeof b1));
    if (e->op == TC_OP_VAR) {
      if (!e->var) return internal(v, "variable reference without a variable");
      if (!tc_dtype_eq(e->dtype, e->var->dtype))
        return internal(v, "reference to %s has dtype %s, the variable is %s", e->var->name,
                        dtname(e->dtype, b1, sizeof b1), dtname(e->var->dtype, b2, sizeof b2));
      return check_var_use(v, e->var);
    }
    return true;
  case TC_CLS_ARITH:
    for (int i = 0; i < e->nargs; i++)
      if (!tc_dtype_eq(e->args[i]->dtype, e->dtype))
        return internal(v, "operand %d of `%s` has dtype %s, the result is %s", i + 1, opn,
                        dtname(e->args[i]->dtype, b1, sizeof b1), dtname(e->dtype, b2, sizeof b2));
    switch (e->op) {
    case TC_OP_BIT_AND: case TC_OP_BIT_OR: case TC_OP_BIT_XOR: case TC_OP_BIT_NOT: case TC_OP_SHL: case TC_OP_SHR:
      if (!tc_dtype_is_int(e->dtype) && !tc_dtype_is_bool(e->dtype))
        return internal(v, "`%s` on %s, needs integers", opn, dtname(e->dtype, b1, sizeof b1));
      break;
    default:
      if (tc_dtype_is_bool(e->dtype)) return internal(v, "`%s` on bool", opn);
      break;
    }
    return true;
  case TC_CLS_CMP:
    if (!tc_dtype_eq(x->dtype, y->dtype))
      return internal(v, "`%s` compares %s with %s", opn, dtname(x->dtype, b1, sizeof b1), dtname(y->dtype, b2, sizeof b2));
    if (!tc_dtype_is_bool(e->dtype)) return internal(v, "`%s` has result dtype %s, not bool", opn, dtname(e->dtype, b1, sizeof b1));
    return true;
  case TC_CLS_LOGIC:
    for (int i = 0; i < e->nargs; i++)
      if (!tc_dtype_is_bool(e->args[i]->dtype))
        return internal(v, "operand %d of `%s` has dtype %s, not bool", i + 1, opn, dtname(e->args[i]->dtype, b1, sizeof b1));
    if (!tc_dtype_is_bool(e->dtype)) return internal(v, "`%s` has result dtype %s, not bool", opn, dtname(e->dtype, b1, sizeof b1));
    return true;
  case TC_CLS_MATH:
    if (!tc_dtype_is_float(x->dtype)) return internal(v, "`%s` on %s, needs a float", opn, dtname(x->dtype, b1, sizeof b1));
    if (!tc_dtype_eq(x->dtype, e->dtype))
      return internal(v, "`%s` of %s has result dtype %s", opn, dtname(x->dtype, b1, sizeof b1), dtname(e->dtype, b2, sizeof b2));
    return true;
  case TC_CLS_SPECIAL:
    break;
  }
  switch (e->op) {
  case TC_OP_LOAD:
    if (!e->buf) return internal(v, "load without a buffer");
    if (e->buf->scope != TC_SCOPE_GLOBAL && !in_scope(v, e->buf))
      return internal(v, "buffer %s used outside its scope", bname(e->buf));
    if (e->buf->scope == TC_SCOPE_GLOBAL && !in_scope(v, e->buf))
      return internal(v, "global buffer %s is not a parameter of the kernel", bname(e->buf));
    if (e->nargs != e->buf->ndim)
      return internal(v, "load from %s has %d index(es), the buffer has %d dimension(s)", bname(e->buf), e->nargs, e->buf->ndim);
    for (int i = 0; i < e->nargs; i++)
      if (!tc_dtype_is_int(e->args[i]->dtype))
        return internal(v, "index %d of %s has dtype %s, not an integer", i + 1, bname(e->buf),
                        dtname(e->args[i]->dtype, b1, sizeof b1));
    if (!tc_dtype_eq(e->dtype, e->buf->dtype))
      return internal(v, "load from %s has dtype %s, the buffer is %s", bname(e->buf), dtname(e->dtype, b1, sizeof b1),
                      dtname(e->buf->dtype, b2, sizeof b2));
    return true;
  case TC_OP_ADDRESS_OF:
    if (!e->buf) return internal(v, "address_of without a buffer");
    if (!in_scope(v, e->buf)) return internal(v, "buffer %s used outside its scope", bname(e->buf));
    if (e->nargs != e->buf->ndim)
      return internal(v, "address_of %s has %d index(es), the buffer has %d dimension(s)", bname(e->buf), e->nargs, e->buf->ndim);
    for (int i = 0; i < e->nargs; i++)
      if (!tc_dtype_is_int(e->args[i]->dtype))
        return internal(v, "index %d of %s has dtype %s, not an integer", i + 1, bname(e->buf), dtname(e->args[i]->dtype, b1, sizeof b1));
    if (!tc_dtype_eq(e->dtype, tc_dt(TC_DT_UINT64)))
      return internal(v, "address_of %s has dtype %s, not uint64", bname(e->buf), dtname(e->dtype, b1, sizeof b1));
    return true;
  case TC_OP_CALL:
    return check_intrinsic(v, e->callee, TC_INTRIN_KIND_EXPR, e->nargs, e->args, e);
  case TC_OP_CAST:
    if (x->dtype.lanes != e->dtype.lanes)
      return internal(v, "cast from %s to %s changes the lane count", dtname(x->dtype, b1, sizeof b1), dtname(e->dtype, b2, sizeof b2));
    return true;
  case TC_OP_SELECT:
    if (!tc_dtype_is_bool(x->dtype)) return internal(v, "if_then_else condition has dtype %s, not bool", dtname(x->dtype, b1, sizeof b1));
    if (!tc_dtype_eq(e->args[1]->dtype, e->dtype) || !tc_dtype_eq(e->args[2]->dtype, e->dtype))
      return internal(v, "if_then_else branches have dtypes %s and %s, the result is %s", dtname(e->args[1]->dtype, b1, sizeof b1),
                      dtname(e->args[2]->dtype, b2, sizeof b2), dtname(e->dtype, b3, sizeof b3));
    return true;
  default:
    return internal(v, "unexpected expression op `%s`", opn);
  }
}

/* ---- regions ---- */
static void shape_str(const tc_region *r, char *out, size_t cap) {
  size_t n = 0;
  out[n++] = '[';
  for (int i = 0; i < r->ndim && n + 24 < cap; i++)
    n += (size_t)snprintf(out + n, cap - n, "%s%lld", i ? ", " : "", (long long)r->r[i].extent);
  snprintf(out + n, cap - n, "]");
}

static void dims_str(const int64_t *d, int n, char *out, size_t cap) {
  size_t w = 0;
  out[w++] = '[';
  for (int i = 0; i < n && w + 24 < cap; i++) w += (size_t)snprintf(out + w, cap - w, "%s%lld", i ? ", " : "", (long long)d[i]);
  snprintf(out + w, cap - w, "]");
}

static bool check_region(vctx *v, const tc_region *r, const char *op, const char *role) {
  if (!r->buf) return internal(v, "%s of %s is missing", role, op);
  const tc_buffer *b = r->buf;
  if (!in_scope(v, b)) return internal(v, "buffer %s used outside its scope", bname(b));
  if (r->ndim != b->ndim)
    return internal(v, "%s region of %s has %d dimension(s), the buffer has %d", role, bname(b), r->ndim, b->ndim);
  if (r->ndim > 0 && !r->r) return internal(v, "%s region of %s has no ranges", role, bname(b));
  for (int i = 0; i < r->ndim; i++) {
    if (!check_int_expr(v, r->r[i].start, "region start")) return false;
    if (r->r[i].extent <= 0)
      return internal(v, "%s region of %s has extent %lld in dimension %d", role, bname(b), (long long)r->r[i].extent, i);
  }
  if (b->scope != TC_SCOPE_GLOBAL) {
    for (int i = 0; i < r->ndim; i++) {
      int64_t start, dim;
      if (!tc_expr_const_int(b->shape[i], &dim) || !tc_expr_const_int(r->r[i].start, &start)) continue;
      if (start < 0 || start + r->r[i].extent > dim) {
        char sh[256];
        shape_str(r, sh, sizeof sh);
        return program(v, v->cur->loc, "%s: the %s region %s of %s runs outside the buffer in dimension %d (start %lld, size %lld)",
                       op, role, sh, bname(b), i, (long long)start, (long long)dim);
      }
    }
  }
  return true;
}

static bool same_squeezed(const tc_region *a, const tc_region *b) {
  int64_t sa[16], sb[16];
  int na = tc_region_squeezed(a, sa, 16), nb = tc_region_squeezed(b, sb, 16);
  if (na != nb || na > 16) return na == nb && tc_region_numel(a) == tc_region_numel(b);
  for (int i = 0; i < na; i++)
    if (sa[i] != sb[i]) return false;
  return true;
}

static bool regions_thread_dependent(const vctx *v, const tc_stmt *s) {
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int n = tc_stmt_regions(s, regs);
  for (int k = 0; k < n; k++)
    for (int i = 0; regs[k].region->buf && i < regs[k].region->ndim; i++)
      if (thread_dependent(v, regs[k].region->r[i].start)) return true;
  return false;
}

static bool check_collective(vctx *v, const tc_stmt *s, const char *op) {
  if (!tc_stmt_is_collective(s)) return true; /* per-thread storage: each thread does it (analysis.h) */
  if (v->in_parallel) return program(v, s->loc, "%s inside a T.Parallel loop; tile operations are done by the whole block", op);
  if (v->thread_dep)
    return program(v, s->loc, "%s under control flow that depends on the thread index; tile operations need the whole block", op);
  const char *why = "tile operations are done by the whole block";
  if (s->kind == TC_ST_FOR && (thread_dependent(v, s->u.loop.min) || thread_dependent(v, s->u.loop.extent)))
    return program(v, s->loc, "%s with bounds that depend on the thread index; %s", op, why);
  if (s->kind == TC_ST_FILL && thread_dependent(v, s->u.fill.value))
    return program(v, s->loc, "%s with a value that depends on the thread index; %s", op, why);
  bool dep = regions_thread_dependent(v, s);
  if (dep) return program(v, s->loc, "%s on a region that depends on the thread index; %s", op, why);
  return true;
}

/* The last two extents of a gemm operand, requiring every leading extent to be 1. */
static bool gemm_dims(vctx *v, const tc_stmt *s, const tc_region *r, const char *role, int64_t out[2]) {
  char sh[256];
  shape_str(r, sh, sizeof sh);
  if (r->ndim < 2) return program(v, s->loc, "T.gemm: %s (%s) is %s, not a 2-D tile", role, bname(r->buf), sh);
  for (int i = 0; i < r->ndim - 2; i++)
    if (r->r[i].extent != 1) return program(v, s->loc, "T.gemm: %s (%s) is %s, not a 2-D tile", role, bname(r->buf), sh);
  out[0] = r->r[r->ndim - 2].extent;
  out[1] = r->r[r->ndim - 1].extent;
  return true;
}

static bool check_gemm(vctx *v, const tc_stmt *s) {
  const tc_region *A = &s->u.gemm.a, *B = &s->u.gemm.b, *C = &s->u.gemm.c;
  if (!check_region(v, A, "T.gemm", "A") || !check_region(v, B, "T.gemm", "B") || !check_region(v, C, "T.gemm", "C"))
    return false;
  if (!check_collective(v, s, "T.gemm")) return false;
  int64_t a[2], b[2], c[2];
  if (!gemm_dims(v, s, A, "A", a) || !gemm_dims(v, s, B, "B", b) || !gemm_dims(v, s, C, "C", c)) return false;
  bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
  int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  int64_t K2 = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
  if (K != K2 || c[0] != M || c[1] != N)
    return program(v, s->loc,
                   "T.gemm shapes do not fit: A (%s) is [%lld, %lld], B (%s) is [%lld, %lld], C (%s) is [%lld, %lld]; "
                   "expected A %s, B %s, C [M, N]",
                   bname(A->buf), (long long)a[0], (long long)a[1], bname(B->buf), (long long)b[0], (long long)b[1],
                   bname(C->buf), (long long)c[0], (long long)c[1], ta ? "[K, M] (transpose_A)" : "[M, K]",
                   tb ? "[N, K] (transpose_B)" : "[K, N]");
  return true;
}

static bool check_reduce_like(vctx *v, const tc_stmt *s, const char *op, const tc_region *src, const tc_region *dst,
                              int dim, bool keep_dim) {
  if (!check_region(v, src, op, "source") || !check_region(v, dst, op, "destination")) return false;
  if (!check_collective(v, s, op)) return false;
  char ss[256], ds[256];
  shape_str(src, ss, sizeof ss);
  shape_str(dst, ds, sizeof ds);
  if (dim < 0 || dim >= src->ndim)
    return program(v, s->loc, "%s: dim=%d is out of range for the %d-D source %s", op, dim, src->ndim, bname(src->buf));
  if (keep_dim) {
    if (!same_squeezed(src, dst))
      return program(v, s->loc, "%s shape mismatch: source %s is %s but destination %s is %s", op, bname(src->buf), ss,
                     bname(dst->buf), ds);
    return true;
  }
  /* the source's extents without `dim`, compared with the destination ignoring unit dims */
  int64_t kept[16];
  int nk = 0;
  for (int i = 0; i < src->ndim && nk < 16; i++)
    if (i != dim) kept[nk++] = src->r[i].extent;
  int64_t sq[16], dsq[16];
  int nsq = 0;
  for (int i = 0; i < nk; i++)
    if (kept[i] != 1) sq[nsq++] = kept[i];
  int nd = tc_region_squeezed(dst, dsq, 16);
  bool ok = nd == nsq;
  for (int i = 0; ok && i < nsq; i++) ok = sq[i] == dsq[i];
  if (!ok) {
    char ks[256];
    dims_str(kept, nk, ks, sizeof ks);
    return program(v, s->loc, "%s shape mismatch: reducing %s %s along dim %d gives %s, but destination %s is %s", op,
                   bname(src->buf), ss, dim, ks, bname(dst->buf), ds);
  }
  return true;
}

/* ---- scheduling data ---- */
static int64_t block_threads(const tc_kernel_ir *k) {
  int64_t n = 1;
  for (int i = 0; i < k->threads_ndim && i < 3; i++) n *= k->threads[i];
  return n;
}

/* A layout's expression: integer, over its placeholders (declared only while it is checked). */
static bool check_layout_expr(vctx *v, const tc_layout *L, const tc_expr *e, bool with_replica, const char *what) {
  int mark = v->nscope;
  for (int i = 0; i < L->ndim; i++)
    if (!declare(v, L->index[i])) return false;
  if (with_replica && L->replica && !declare(v, L->replica)) return false;
  bool ok = check_int_expr(v, e, what);
  v->nscope = mark;
  return ok;
}

static bool check_layout(vctx *v, const tc_buffer *b) {
  const tc_layout *L = b->layout;
  bool global = b->scope == TC_SCOPE_GLOBAL;
  bool shared = b->scope == TC_SCOPE_SHARED || global, frag = tc_scope_in_registers(b->scope);
  tc_loc loc = v->cur ? v->cur->loc : b->loc;
  if (!shared && !frag)
    return program(v, loc, "a layout on the %s buffer '%s'; layouts are for global, shared and fragment buffers",
                   tc_scope_name(b->scope), bname(b));
  if (shared != (L->kind == TC_LAYOUT_SHARED))
    return program(v, loc, "the %s buffer '%s' has a %s layout; %s", tc_scope_name(b->scope), bname(b),
                   L->kind == TC_LAYOUT_SHARED ? "shared-memory (T.Layout)" : "fragment (T.Fragment)",
                   shared ? "shared buffers take a T.Layout" : "fragment buffers take a T.Fragment");
  if (L->ndim != b->ndim)
    return program(v, loc, "the layout of '%s' has %d input dimension(s), the buffer has %d", bname(b), L->ndim, b->ndim);
  if (L->ndim > 0 && !L->index) return internal(v, "layout of %s without placeholders", bname(b));
  for (int i = 0; i < L->ndim; i++)
    if (!L->index[i] || L->index[i]->kind != TC_VAR_LAYOUT_INDEX || !tc_dtype_is_int(L->index[i]->dtype))
      return internal(v, "layout of %s: placeholder %d is not an integer layout index", bname(b), i);
  if (L->replica && (L->kind != TC_LAYOUT_FRAGMENT || L->replica->kind != TC_VAR_LAYOUT_INDEX))
    return internal(v, "layout of %s: bad replica placeholder", bname(b));
  if (L->kind == TC_LAYOUT_SHARED) {
    if (!check_layout_expr(v, L, L->offset, false, "layout offset")) return false;
  } else {
    if (L->replicate < 1 || (L->replicate > 1) != (L->replica != NULL))
      return internal(v, "layout of %s: replicate %lld with%s a replica placeholder", bname(b), (long long)L->replicate,
                      L->replica ? "" : "out");
    if (!check_layout_expr(v, L, L->thread, true, "layout thread") || !check_layout_expr(v, L, L->reg, false, "layout register"))
      return false;
  }
  int64_t shape[16];
  if (b->ndim > 16 || !tc_buffer_const_shape(b, shape)) {
    if (global) /* the layout rearranges the tensor's memory: it must be known to fit */
      return program(v, loc, "the layout of the global buffer '%s' needs a compile-time shape", bname(b));
    return true;
  }
  if (global && L->storage_elems != tc_buffer_numel(b))
    return program(v, loc, "the layout of the global buffer '%s' spans %lld elements; the tensor holds %lld", bname(b),
                   (long long)L->storage_elems, (long long)tc_buffer_numel(b));
  /* Passes never change a layout, so each is enumerated (up to a second for a large one) once
   * per shape and block size, at the first stage that sees it; never one tilec built itself */
  int64_t numel = tc_buffer_numel(b);
  int threads = block_threads(v->k);
  if (L->by_construction || (L->checked_numel == numel && L->checked_threads == threads)) return true;
  char why[256];
  if (!tc_layout_check(L, shape, threads, why, sizeof why))
    return program(v, loc, "the %s layout of '%s' %s", L->name ? L->name : "annotated", bname(b), why);
  tc_layout *memo = (tc_layout *)L; /* only the memo changes; the layout itself is immutable */
  memo->checked_numel = numel, memo->checked_threads = threads;
  return true;
}

static bool is_scheduled(const tc_stmt *s) { return s && s->kind != TC_ST_LET && s->kind != TC_ST_ALLOC; }

/* T.Pipelined's order/stage/sync/group against the loop body, and thread-bound loops. */
static bool check_loop_schedule(vctx *v, const tc_stmt *s) {
  const tc_pipeline_args *p = &s->u.loop.pipeline;
  bool pipelined = s->u.loop.kind == TC_LOOP_PIPELINED;
  if (!pipelined && (p->order.n || p->stage.n || p->sync.n || p->group.n || s->u.loop.num_stages))
    return internal(v, "a %s loop with T.Pipelined arguments", tc_loop_kind_name(s->u.loop.kind));
  if (s->u.loop.kind == TC_LOOP_THREAD_BINDING) {
    int ax = s->u.loop.thread_axis;
    int64_t lo, ext;
    if (ax < 0 || ax >= v->k->threads_ndim) return internal(v, "thread-bound loop on axis %d of a %d-D block", ax, v->k->threads_ndim);
    if (!tc_expr_const_int(s->u.loop.min, &lo) || lo != 0 || !tc_expr_const_int(s->u.loop.extent, &ext) || ext != v->k->threads[ax])
      return internal(v, "thread-bound loop must run over [0, %d), the block's extent along axis %d", v->k->threads[ax], ax);
    if (v->in_parallel) return internal(v, "thread-bound loop inside a T.Parallel loop");
  }
  if (!pipelined) return true;
  const tc_stmt *body = s->u.loop.body;
  int total = 0, scheduled = 0;
  if (body && body->kind == TC_ST_SEQ) {
    for (int i = 0; i < body->u.seq.n; i++) total++, scheduled += is_scheduled(body->u.seq.items[i]);
  } else if (body) {
    total = 1, scheduled = is_scheduled(body);
  }
  /* TileLang counts the statements of the lowered loop body (a macro or a tile op may become
   * several), and -1 leaves a statement unscheduled, so only what holds in any count is checked:
   * order and stage pair up, cover at least the body's statements, and name each one once. */
  int n = p->order.n ? p->order.n : p->stage.n;
  if (p->order.n && p->stage.n && p->order.n != p->stage.n)
    return program(v, s->loc, "T.Pipelined: order has %d entries but stage has %d", p->order.n, p->stage.n);
  if (n && n < scheduled)
    return program(v, s->loc, "T.Pipelined: order/stage have %d entries, fewer than the %d statements of the loop body", n,
                   scheduled);
  (void)total;
  for (int i = 0; i < p->order.n; i++) {
    int o = p->order.v[i];
    if (o < -1 || o >= p->order.n)
      return program(v, s->loc, "T.Pipelined: order entry %d is %d, outside [-1, %d)", i, o, p->order.n);
    for (int j = 0; o >= 0 && j < i; j++)
      if (p->order.v[j] == o) return program(v, s->loc, "T.Pipelined: order lists %d twice; it must be a permutation", o);
  }
  for (int i = 0; i < p->stage.n; i++)
    if (p->stage.v[i] < -1) return program(v, s->loc, "T.Pipelined: stage entry %d is %d, not a stage number", i, p->stage.v[i]);
  const tc_int_lists *ls[2] = {&p->sync, &p->group};
  static const char *const names[2] = {"sync", "group"};
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < ls[k]->n; i++)
      for (int j = 0; j < ls[k]->v[i].n; j++)
        if (ls[k]->v[i].v[j] < 0)
          return program(v, s->loc, "T.Pipelined: %s[%d] holds %d, not a statement index", names[k], i, ls[k]->v[i].v[j]);
  return true;
}

/* ---- statements ---- */
/* A view (tc_buffer.view_of): of a buffer in scope that is not itself a view, with its scope,
 * dtype, element count (where both are constant) and, for a global one, its parameter. */
static bool check_view(vctx *v, const tc_buffer *b) {
  const tc_buffer *base = b->view_of;
  char b1[32], b2[32];
  if (base->view_of) return internal(v, "view %s is of %s, itself a view", bname(b), bname(base));
  if (!in_scope(v, base)) return internal(v, "view %s is of %s, which is not in scope", bname(b), bname(base));
  if (b->scope != base->scope)
    return internal(v, "view %s is in scope %s, the buffer it views in %s", bname(b), tc_scope_name(b->scope), tc_scope_name(base->scope));
  if (!tc_dtype_eq(b->dtype, base->dtype))
    return internal(v, "view %s has dtype %s, the buffer it views %s", bname(b), dtname(b->dtype, b1, sizeof b1),
                    dtname(base->dtype, b2, sizeof b2));
  if (b->ndim < 1 || !b->shape) return internal(v, "view %s has no shape", bname(b));
  for (int i = 0; i < b->ndim; i++)
    if (!check_int_expr(v, b->shape[i], "view dimension")) return false;
  int64_t n = tc_buffer_numel(b), nb = tc_buffer_numel(base);
  if (b->scope != TC_SCOPE_GLOBAL && n < 0) return internal(v, "view %s has a non-constant shape", bname(b));
  if (n >= 0 && nb >= 0 && n != nb)
    return internal(v, "view %s has %lld elements, the buffer it views %lld", bname(b), (long long)n, (long long)nb);
  if (b->param_index != -1) return internal(v, "view %s has param_index %d; a view is no parameter", bname(b), b->param_index);
  return true;
}

static bool check_stmt(vctx *v, const tc_stmt *s);

static bool check_block(vctx *v, const tc_stmt *s) {
  int mark = v->nscope;
  bool ok = check_stmt(v, s);
  v->nscope = mark;
  return ok;
}

static bool check_stmt(vctx *v, const tc_stmt *s) {
  char b1[64], b2[64];
  if (!s) return internal(v, "missing statement");
  const tc_stmt *saved = v->cur;
  if (s->kind != TC_ST_SEQ) v->cur = s;
  bool ok = true;
  switch (s->kind) {
  case TC_ST_SEQ:
    if (s->u.seq.n > 0 && !s->u.seq.items) {
      ok = internal(v, "sequence without items");
      break;
    }
    for (int i = 0; ok && i < s->u.seq.n; i++) ok = check_stmt(v, s->u.seq.items[i]);
    break;
  case TC_ST_ALLOC: {
    const tc_buffer *b = s->u.alloc.buf;
    if (!b) {
      ok = internal(v, "allocation without a buffer");
      break;
    }
    if ((b->scope == TC_SCOPE_GLOBAL && !b->view_of) || (unsigned)b->scope >= TC_SCOPE_COUNT) {
      ok = internal(v, "allocation of %s in scope %s", bname(b), tc_scope_name(b->scope));
      break;
    }
    if (b->view_of) {
      ok = check_view(v, b);
      if (ok && in_scope(v, b)) ok = internal(v, "buffer %s is allocated twice", bname(b));
      if (ok) ok = declare(v, b);
      break;
    }
    if (!tc_dtype_valid(b->dtype)) {
      ok = internal(v, "buffer %s has an invalid dtype", bname(b));
      break;
    }
    if (b->ndim < 1 || !b->shape) {
      ok = internal(v, "buffer %s has no shape", bname(b));
      break;
    }
    for (int i = 0; ok && i < b->ndim; i++) {
      int64_t d;
      if (!tc_expr_const_int(b->shape[i], &d)) ok = internal(v, "buffer %s has a non-constant dimension %d", bname(b), i);
      else if (d <= 0) ok = internal(v, "buffer %s has dimension %d of size %lld", bname(b), i, (long long)d);
    }
    if (!ok) break;
    if (b->scope == TC_SCOPE_VAR && tc_buffer_numel(b) != 1) {
      ok = internal(v, "var buffer %s holds %lld elements, not 1", bname(b), (long long)tc_buffer_numel(b));
      break;
    }
    if (b->init) {
      if (!check_expr(v, b->init)) {
        ok = false;
        break;
      }
      if (!tc_dtype_eq(b->init->dtype, b->dtype)) {
        ok = internal(v, "initial value of %s has dtype %s, the buffer is %s", bname(b), dtname(b->init->dtype, b1, sizeof b1),
                      dtname(b->dtype, b2, sizeof b2));
        break;
      }
    }
    if (in_scope(v, b)) {
      ok = internal(v, "buffer %s is allocated twice", bname(b));
      break;
    }
    if (b->layout && !check_layout(v, b)) {
      ok = false;
      break;
    }
    ok = declare(v, b);
    break;
  }
  case TC_ST_FOR: {
    const tc_var *var = s->u.loop.var;
    if (!var) {
      ok = internal(v, "loop without a variable");
      break;
    }
    if (var->kind != TC_VAR_LOOP) {
      ok = internal(v, "loop variable %s is not of kind loop", var->name);
      break;
    }
    if (!tc_dtype_is_int(var->dtype)) {
      ok = internal(v, "loop variable %s has dtype %s", var->name, dtname(var->dtype, b1, sizeof b1));
      break;
    }
    if ((unsigned)s->u.loop.kind >= TC_LOOP_KIND_COUNT || s->u.loop.num_stages < 0) {
      ok = internal(v, "bad loop kind or stage count");
      break;
    }
    if (s->u.loop.ws_split && (s->u.loop.kind != TC_LOOP_SERIAL || !s->u.loop.body || s->u.loop.body->kind != TC_ST_SEQ ||
                               s->u.loop.body->u.seq.n != 2)) {
      ok = internal(v, "a warp-specialized loop is serial with a body of [producer, consumer]");
      break;
    }
    if (s->u.loop.ws_rotated) {
      const tc_stmt *c = s->u.loop.ws_split ? s->u.loop.body->u.seq.items[1] : NULL;
      if (!c || c->kind != TC_ST_SEQ || c->u.seq.n != 3 || c->u.seq.items[0]->kind != TC_ST_LET ||
          c->u.seq.items[1]->kind != TC_ST_IF || !c->u.seq.items[1]->u.if_.else_s || c->u.seq.items[2]->kind != TC_ST_IF ||
          c->u.seq.items[2]->u.if_.else_s) {
        ok = internal(v, "a rotated warp-specialized loop's consumer part is [count, if first: else, if last:]");
        break;
      }
    }
    if (!check_loop_schedule(v, s)) {
      ok = false;
      break;
    }
    if (!check_int_expr(v, s->u.loop.min, "loop start") || !check_int_expr(v, s->u.loop.extent, "loop extent")) {
      ok = false;
      break;
    }
    if (in_scope(v, var)) {
      ok = internal(v, "loop variable %s is already bound", var->name);
      break;
    }
    bool parallel = s->u.loop.kind == TC_LOOP_PARALLEL;
    if (parallel && !v->in_parallel && !check_collective(v, s, "a T.Parallel loop")) {
      ok = false;
      break;
    }
    bool dep = thread_dependent(v, s->u.loop.min) || thread_dependent(v, s->u.loop.extent) ||
               s->u.loop.kind == TC_LOOP_THREAD_BINDING;
    int mark = v->nscope;
    if (!declare(v, var)) {
      ok = false;
      break;
    }
    v->thread_dep += dep;
    v->in_parallel += parallel;
    ok = check_block(v, s->u.loop.body);
    v->thread_dep -= dep;
    v->in_parallel -= parallel;
    v->nscope = mark;
    break;
  }
  case TC_ST_WHILE: {
    if (v->in_parallel) {
      ok = program(v, s->loc, "a 'while' loop on a runtime condition inside a T.Parallel loop is not supported");
      break;
    }
    if (!check_expr(v, s->u.while_.cond)) {
      ok = false;
      break;
    }
    if (!tc_dtype_is_bool(s->u.while_.cond->dtype)) {
      ok = internal(v, "while condition has dtype %s, not bool", dtname(s->u.while_.cond->dtype, b1, sizeof b1));
      break;
    }
    bool dep = thread_dependent(v, s->u.while_.cond);
    v->thread_dep += dep;
    ok = check_block(v, s->u.while_.body);
    v->thread_dep -= dep;
    break;
  }
  case TC_ST_IF: {
    if (!check_expr(v, s->u.if_.cond)) {
      ok = false;
      break;
    }
    if (!tc_dtype_is_bool(s->u.if_.cond->dtype)) {
      ok = internal(v, "if condition has dtype %s, not bool", dtname(s->u.if_.cond->dtype, b1, sizeof b1));
      break;
    }
    bool dep = thread_dependent(v, s->u.if_.cond);
    v->thread_dep += dep;
    ok = check_block(v, s->u.if_.then_s);
    if (ok && s->u.if_.else_s) {
      v->cur = s;
      ok = check_block(v, s->u.if_.else_s);
    }
    v->thread_dep -= dep;
    break;
  }
  case TC_ST_STORE:
  case TC_ST_ATOMIC_ADD: {
    bool atomic = s->kind == TC_ST_ATOMIC_ADD;
    const tc_buffer *b = atomic ? s->u.atomic.buf : s->u.store.buf;
    int nidx = atomic ? s->u.atomic.nidx : s->u.store.nidx;
    tc_expr *const *idx = atomic ? s->u.atomic.idx : s->u.store.idx;
    const tc_expr *value = atomic ? s->u.atomic.value : s->u.store.value;
    if (atomic && !b) { /* tile form */
      const tc_region *dst = &s->u.atomic.dst, *src = &s->u.atomic.src;
      if (!check_region(v, dst, "T.atomic_add", "destination") || !check_region(v, src, "T.atomic_add", "source") ||
          !check_collective(v, s, "T.atomic_add on tiles")) {
        ok = false;
        break;
      }
      if (!same_squeezed(dst, src)) {
        char ds[256], ss[256];
        shape_str(dst, ds, sizeof ds);
        shape_str(src, ss, sizeof ss);
        ok = program(v, s->loc, "T.atomic_add shape mismatch: destination %s is %s but source %s is %s", bname(dst->buf), ds,
                     bname(src->buf), ss);
      }
      break;
    }
    if (!b) {
      ok = internal(v, "store without a buffer");
      break;
    }
    if (!in_scope(v, b)) {
      ok = internal(v, "buffer %s used outside its scope", bname(b));
      break;
    }
    if (nidx != b->ndim) {
      ok = internal(v, "%s to %s has %d index(es), the buffer has %d dimension(s)", atomic ? "atomic_add" : "store", bname(b),
                    nidx, b->ndim);
      break;
    }
    if (nidx > 0 && !idx) {
      ok = internal(v, "store to %s has no index array", bname(b));
      break;
    }
    for (int i = 0; ok && i < nidx; i++) ok = check_int_expr(v, idx[i], "index");
    if (!ok || !check_expr(v, value)) {
      ok = false;
      break;
    }
    if (!tc_dtype_eq(value->dtype, b->dtype))
      ok = internal(v, "value stored to %s has dtype %s, the buffer is %s", bname(b), dtname(value->dtype, b1, sizeof b1),
                    dtname(b->dtype, b2, sizeof b2));
    if (ok && atomic && s->u.atomic.prev) { /* return_prev's cell */
      const tc_buffer *p = s->u.atomic.prev;
      if (p->scope != TC_SCOPE_VAR || !tc_dtype_eq(p->dtype, b->dtype) || !in_scope(v, p))
        ok = internal(v, "the return_prev cell %s of an atomic_add to %s is not an in-scope variable cell of its dtype", bname(p),
                      bname(b));
    }
    break;
  }
  case TC_ST_LET:
  case TC_ST_ASSIGN: {
    const tc_var *var = s->u.let.var;
    if (!var) {
      ok = internal(v, "%s without a variable", s->kind == TC_ST_LET ? "let" : "assignment");
      break;
    }
    if (var->kind != TC_VAR_LOCAL) {
      ok = internal(v, "%s %s is not a local variable", s->kind == TC_ST_LET ? "let of" : "assignment to", var->name);
      break;
    }
    if (!check_expr(v, s->u.let.value)) {
      ok = false;
      break;
    }
    if (!tc_dtype_eq(s->u.let.value->dtype, var->dtype)) {
      ok = internal(v, "value of %s has dtype %s, the variable is %s", var->name, dtname(s->u.let.value->dtype, b1, sizeof b1),
                    dtname(var->dtype, b2, sizeof b2));
      break;
    }
    if (s->kind == TC_ST_LET) {
      if (in_scope(v, var)) ok = internal(v, "variable %s is declared twice", var->name);
      else ok = declare(v, var);
    } else if (!in_scope(v, var)) {
      ok = internal(v, "assignment to %s outside its scope", var->name);
    }
    break;
  }
  case TC_ST_COPY: {
    const tc_region *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    if (!check_region(v, src, "T.copy", "source") || !check_region(v, dst, "T.copy", "destination") ||
        !check_collective(v, s, "T.copy")) {
      ok = false;
      break;
    }
    if (s->u.copy.coalesced_width < 0 || (unsigned)s->u.copy.eviction_policy > TC_EVICT_LAST) {
      ok = internal(v, "T.copy has coalesced_width %d and eviction policy %d", s->u.copy.coalesced_width,
                    (int)s->u.copy.eviction_policy);
      break;
    }
    if (!same_squeezed(src, dst)) {
      char ss[256], ds[256];
      shape_str(src, ss, sizeof ss);
      shape_str(dst, ds, sizeof ds);
      ok = program(v, s->loc, "T.copy shape mismatch: source %s is %s but destination %s is %s", bname(src->buf), ss,
                   bname(dst->buf), ds);
    }
    break;
  }
  case TC_ST_GEMM:
    if (s->u.gemm.k_pack < 0 || s->u.gemm.wg_wait < -1 || (unsigned)s->u.gemm.policy > TC_POLICY_FULL_COL) {
      ok = internal(v, "T.gemm has k_pack %d, wg_wait %d, policy %d", s->u.gemm.k_pack, s->u.gemm.wg_wait, (int)s->u.gemm.policy);
      break;
    }
    ok = check_gemm(v, s);
    break;
  case TC_ST_FILL: {
    const tc_region *dst = &s->u.fill.dst;
    if (!check_region(v, dst, "T.fill", "destination") || !check_collective(v, s, "T.fill") || !check_expr(v, s->u.fill.value)) {
      ok = false;
      break;
    }
    if (!tc_dtype_eq(s->u.fill.value->dtype, dst->buf->dtype))
      ok = program(v, s->loc, "T.fill: the value has dtype %s but %s holds %s", dtname(s->u.fill.value->dtype, b1, sizeof b1),
                   bname(dst->buf), dtname(dst->buf->dtype, b2, sizeof b2));
    break;
  }
  case TC_ST_REDUCE: {
    if ((unsigned)s->u.reduce.op > TC_RED_ABSMAX) {
      ok = internal(v, "unknown reduction %d", (int)s->u.reduce.op);
      break;
    }
    char op[32];
    snprintf(op, sizeof op, "T.reduce_%s", tc_reduce_kind_name(s->u.reduce.op));
    ok = check_reduce_like(v, s, op, &s->u.reduce.src, &s->u.reduce.dst, s->u.reduce.dim, false);
    break;
  }
  case TC_ST_CUMSUM:
    ok = check_reduce_like(v, s, "T.cumsum", &s->u.cumsum.src, &s->u.cumsum.dst, s->u.cumsum.dim, true);
    break;
  case TC_ST_PRINT:
    if (s->u.print.buf) {
      if (!in_scope(v, s->u.print.buf)) ok = internal(v, "buffer %s used outside its scope", bname(s->u.print.buf));
    } else if (!s->u.print.value) {
      ok = internal(v, "print without a value");
    } else {
      ok = check_expr(v, s->u.print.value);
    }
    break;
  case TC_ST_BARRIER:
    if ((unsigned)s->u.barrier.scope > TC_BARRIER_WARP) ok = internal(v, "barrier with scope %d", (int)s->u.barrier.scope);
    break;
  case TC_ST_INTRINSIC:
    ok = check_intrinsic(v, s->u.intrinsic.name, TC_INTRIN_KIND_STMT, s->u.intrinsic.nargs, s->u.intrinsic.args, NULL);
    break;
  case TC_ST_ASSERT:
    if (!check_expr(v, s->u.assert_.cond)) {
      ok = false;
      break;
    }
    if (!tc_dtype_is_bool(s->u.assert_.cond->dtype))
      ok = internal(v, "assert condition has dtype %s, not bool", dtname(s->u.assert_.cond->dtype, b1, sizeof b1));
    break;
  case TC_ST_ANNOTATE:
    if (!s->u.annotate.what) ok = internal(v, "annotation without a name");
    break;
  case TC_ST_EVALUATE:
    ok = check_expr(v, s->u.evaluate.value);
    break;
  default:
    ok = internal(v, "unknown statement kind %d", (int)s->kind);
    break;
  }
  v->cur = saved;
  return ok;
}

static bool check_kernel(vctx *v) {
  const tc_kernel_ir *k = v->k;
  char b1[64];
  if (!k->name) return internal(v, "kernel without a name");
  if (k->nparams < 0 || (k->nparams > 0 && !k->params)) return internal(v, "bad parameter list");
  if (k->nsyms < 0 || (k->nsyms > 0 && !k->syms)) return internal(v, "bad symbol list");
  /* kernel-level names first, so shapes may refer to any symbol */
  for (int i = 0; i < k->nsyms; i++) {
    const tc_var *s = k->syms[i];
    if (!s) return internal(v, "symbolic dimension %d is missing", i);
    if (s->kind != TC_VAR_SYMBOLIC) return internal(v, "symbolic dimension %s is not of kind symbolic", s->name);
    if (!tc_dtype_is_int(s->dtype)) return internal(v, "symbolic dimension %s has dtype %s", s->name, dtname(s->dtype, b1, sizeof b1));
    if (!declare(v, s)) return false;
  }
  for (int i = 0; i < k->nparams; i++) {
    const tc_param *p = &k->params[i];
    if ((p->buf != NULL) == (p->var != NULL))
      return internal(v, "parameter %d (%s) must be either a tensor or a scalar", i, p->name ? p->name : "?");
    if (p->var) {
      if (p->var->kind != TC_VAR_PARAM) return internal(v, "scalar parameter %s is not of kind param", p->var->name);
      if (!declare(v, p->var)) return false;
    } else {
      if (p->buf->scope != TC_SCOPE_GLOBAL) return internal(v, "tensor parameter %s is not global", bname(p->buf));
      if (p->buf->param_index != i)
        return internal(v, "tensor parameter %s has param_index %d, it is parameter %d", bname(p->buf), p->buf->param_index, i);
      if (!tc_dtype_valid(p->buf->dtype)) return internal(v, "tensor parameter %s has an invalid dtype", bname(p->buf));
      if (p->buf->layout && !check_layout(v, p->buf)) return false;
      if (!declare(v, p->buf)) return false;
    }
  }
  if (k->nworkspaces < 0 || (k->nworkspaces > 0 && !k->workspaces)) return internal(v, "bad workspace list");
  for (int i = 0; i < k->nworkspaces; i++) { /* T.alloc_global */
    const tc_buffer *b = k->workspaces[i];
    if (!b || b->scope != TC_SCOPE_GLOBAL || b->view_of) return internal(v, "workspace %d is not a global buffer", i);
    if (b->param_index != k->nparams + i)
      return internal(v, "workspace %s has param_index %d, it is workspace %d of %d parameters", bname(b), b->param_index, i,
                      k->nparams);
    if (!tc_dtype_valid(b->dtype)) return internal(v, "workspace %s has an invalid dtype", bname(b));
    if (b->ndim < 1 || !b->shape) return internal(v, "workspace %s has no shape", bname(b));
    for (int d = 0; d < b->ndim; d++)
      if (!check_int_expr(v, b->shape[d], "workspace dimension")) return false;
    if (!declare(v, b)) return false;
  }
  for (int i = 0; i < k->nparams; i++) {
    const tc_buffer *b = k->params[i].buf;
    if (!b) continue;
    if (b->ndim < 0 || (b->ndim > 0 && !b->shape)) return internal(v, "tensor parameter %s has no shape", bname(b));
    for (int d = 0; d < b->ndim; d++)
      if (!check_int_expr(v, b->shape[d], "tensor dimension")) return false;
  }
  if (k->grid_ndim < 1 || k->grid_ndim > 3) return internal(v, "grid has %d dimensions", k->grid_ndim);
  if (k->swizzle_panel < 0 || (unsigned)k->swizzle_order > TC_SWIZZLE_MLX)
    return internal(v, "block swizzle with panel size %d and order %d", k->swizzle_panel, (int)k->swizzle_order);
  if (k->threads_ndim < 1 || k->threads_ndim > 3) return internal(v, "thread block has %d dimensions", k->threads_ndim);
  for (int i = 0; i < k->threads_ndim; i++)
    if (k->threads[i] <= 0) return internal(v, "thread block extent %d along axis %d", k->threads[i], i);
  for (int i = 0; i < k->grid_ndim; i++)
    if (!check_int_expr(v, k->grid[i], "grid extent")) return false;
  for (int i = 0; i < 3; i++) {
    const tc_var *b = k->block_idx[i];
    if (!b) continue;
    if (i >= k->grid_ndim) return internal(v, "block index %s on axis %d beyond the %d-D grid", b->name, i, k->grid_ndim);
    if (b->kind != TC_VAR_BLOCK_IDX || b->axis != i) return internal(v, "block index %s is not blockIdx axis %d", b->name, i);
    if (!declare(v, b)) return false;
  }
  if (k->launch_var) {
    const tc_var *l = k->launch_var;
    if (k->nlaunches < 2 || l->kind != TC_VAR_BLOCK_IDX || l->axis != 3)
      return internal(v, "launch index %s of a kernel of %d launches", l->name, k->nlaunches);
    if (!declare(v, l)) return false;
  }
  if (!k->body) return internal(v, "kernel without a body");
  return check_stmt(v, k->body);
}

bool tc_ir_verify(const tc_kernel_ir *k, const char *stage, tilec_error *err) {
  vctx v;
  memset(&v, 0, sizeof v);
  v.k = k;
  v.stage = stage;
  v.err = err;
  if (k && !tc_varying_compute(k, &v.varying)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory verifying the IR");
    return false;
  }
  bool ok = k ? check_kernel(&v) : false;
  if (!k) tc_error(err, TILEC_ERROR_INTERNAL, "IR verification failed after %s: no kernel", stage ? stage : "?");
  free((void *)v.scope);
  tc_varying_free(&v.varying);
  return ok && !v.failed;
}
