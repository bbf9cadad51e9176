/* codegen.c: SIMT IR (from src/gpu/) -> one MSL translation unit (the metal target).
 *
 * The same lowered kernel the cuda printer consumes, in Metal's spelling: a
 * `[[kernel, max_total_threads_per_threadgroup(N)]]` function whose tensors are
 * `device T *__restrict` ([[buffer(i)]] in parameter order; `const` when the kernel never writes
 * them), scalars and symbolic dimensions `constant T &` after them, and the thread, threadgroup,
 * lane and simdgroup indices from attributes. Values compute as on the cpu and cuda targets
 * (float for the narrow floats, rounded after each operation; wrapping signed integers;
 * saturating float->int), so results agree with them where the operations are exact. float16
 * is MSL's half; bfloat16 is MSL's bfloat from MSL 3.1 and 16-bit storage with the dtype
 * prelude's conversions before; the float8 formats are bytes with the prelude's conversions.
 * Metal has no float64: a kernel that needs it is an error at its line. Shared buffers are
 * views of one threadgroup array; fragments are register arrays indexed by constants; the
 * block GEMM is the prelude's simdgroup_matrix code (prelude.metal). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "gpu/gpu.h"
#include "ir/philox.h"
#include "ir/walk.h"
#include "target/cfamily.h"
#include "target/metal/codegen.h"
#include "target/metal/metal.h"

typedef struct cg {
  tc_arena *a;
  tc_strbuf *sb;
  const tc_kernel_ir *k;
  tilec_error *err;
  bool failed;
  int ind;
  int64_t smem;      /* bytes of dynamic shared memory so far */
  int gemms;
  tc_ranges ranges;  /* what each integer can be: plain arithmetic where it cannot wrap (analysis/range.c) */
  int msl;           /* MSL version x 100: 300, 310, 400 */
  bool *written;     /* by buffer id: stored to (params not written are const) */
  bool *read;        /* by buffer id: loaded from */
  bool device_barrier; /* a barrier orders global memory too (a tensor both read and written) */
  bool matmul2d;     /* a gemm runs on Metal 4's matmul2d: the kernel includes prelude_mpp.metal */
} cg;

static void fail(cg *g, tc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(cg *g, tc_loc loc, const char *fmt, ...) {
  if (g->failed) return;
  g->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(g->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
}

static void line(cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(cg *g, const char *fmt, ...) {
  for (int i = 0; i < g->ind; i++) tc_sb_puts(g->sb, "  ");
  va_list ap;
  va_start(ap, fmt);
  tc_sb_vprintf(g->sb, fmt, ap);
  va_end(ap);
  tc_sb_putc(g->sb, '\n');
}

/* ---- dtypes ---- */
static bool is4(tc_dtype d) { return d.code == TC_DT_INT4 || d.code == TC_DT_UINT4 || d.code == TC_DT_FLOAT4_E2M1FN; }
static bool isfl(tc_dtype d) { return tc_dtype_is_float(d); }
static bool narrow(tc_dtype d) { return isfl(d) && d.code != TC_DT_FLOAT32 && d.code != TC_DT_FLOAT64; }
static const char *dtname(tc_dtype d) { return tc_dtype_scalar_name((tc_scalar_type)d.code); }
/* type values compute in */
static const char *ctype(tc_dtype d) {
  if (isfl(d)) return "float";
  switch (d.code) {
  case TC_DT_BOOL: return "int";
  case TC_DT_INT8: return "char";
  case TC_DT_UINT8: return "uchar";
  case TC_DT_INT16: return "short";
  case TC_DT_UINT16: return "ushort";
  case TC_DT_INT32: return "int";
  case TC_DT_UINT32: return "uint";
  case TC_DT_INT64: return "long";
  case TC_DT_UINT64: return "ulong";
  default: return tc_dtype_c_storage(d);
  }
}
static bool native16(const cg *g, tc_dtype d) {
  return d.code == TC_DT_FLOAT16 || (d.code == TC_DT_BFLOAT16 && g->msl >= 310);
}
/* the type values are stored as */
static const char *stype_of(const cg *g, tc_dtype d) {
  switch (d.code) {
  case TC_DT_FLOAT16: return "half";
  case TC_DT_BFLOAT16: return g->msl >= 310 ? "bfloat" : "ushort";
  case TC_DT_FLOAT32: return "float";
  case TC_DT_FLOAT64: return "double"; /* rejected before it is printed */
  case TC_DT_INT8: return "char";
  case TC_DT_UINT8: return "uchar";
  case TC_DT_BOOL: return "uchar";
  case TC_DT_INT16: return "short";
  case TC_DT_UINT16: return "ushort";
  case TC_DT_INT32: return "int";
  case TC_DT_UINT32: return "uint";
  case TC_DT_INT64: return "long";
  case TC_DT_UINT64: return "ulong";
  default: return narrow(d) ? "uchar" : tc_dtype_c_storage(d);
  }
}

static void round_to(const cg *g, tc_strbuf *sb, tc_dtype d, const char *val) {
  if (narrow(d) && native16(g, d)) tc_sb_printf(sb, "float(%s(%s))", stype_of(g, d), val);
  else if (narrow(d)) tc_sb_printf(sb, "tcg_r_%s(%s)", dtname(d), val);
  else if (tc_dtype_is_int(d) && tc_dtype_bits(d) < 32) tc_sb_printf(sb, "((%s)(%s))", ctype(d), val);
  else tc_sb_puts(sb, val);
}

static void convert(const cg *g, tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *val) {
  if (tc_dtype_eq(from, to)) {
    tc_sb_puts(sb, val);
  } else if (to.code == TC_DT_BOOL) {
    tc_sb_printf(sb, "((%s) != 0)", val);
  } else if (isfl(to)) {
    char t[1024];
    snprintf(t, sizeof t, "(%s)(%s)", ctype(to), val);
    if (strlen(val) > 900) {
      tc_strbuf x;
      tc_sb_init(&x);
      tc_sb_printf(&x, "(%s)(%s)", ctype(to), val);
      round_to(g, sb, to, tc_sb_cstr(&x));
      tc_sb_free(&x);
    } else {
      round_to(g, sb, to, t);
    }
  } else if (isfl(from)) {
    tc_sb_printf(sb, "tcg_f2%s((float)(%s))", dtname(to), val);
  } else {
    tc_sb_printf(sb, "((%s)(%s))", ctype(to), val);
  }
}

/* ---- names ---- */
static void var_name(cg *g, tc_strbuf *sb, const tc_var *v) {
  static const char axes[] = "xyz";
  switch (v->kind) {
  case TC_VAR_THREAD_IDX: tc_sb_printf(sb, "((int)tcg_tid.%c)", axes[v->axis % 3]); return;
  case TC_VAR_BLOCK_IDX:
    if (v->axis == 3) tc_sb_puts(sb, "tcg_launch"); /* a kernel of several launches: the launch's number */
    else if (g->k->swizzle_panel > 0 && g->k->swizzle_enable && v->axis < 2) tc_sb_printf(sb, "tcg_b%c", axes[v->axis]);
    else tc_sb_printf(sb, "((int)tcg_bid.%c)", axes[v->axis % 3]);
    return;
  case TC_VAR_SYMBOLIC: tc_sb_printf(sb, "tcg_sym_%d", v->id); return;
  case TC_VAR_PARAM: tc_sb_printf(sb, "tcg_p_%d", v->id); return;
  default: tc_sb_printf(sb, "v%d_", v->id); break;
  }
  for (const char *p = v->name; *p && p - v->name < 24; p++)
    tc_sb_putc(sb, (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_'));
  (void)g;
}

static void buf_name(tc_strbuf *sb, const tc_buffer *b) {
  tc_sb_printf(sb, "b%d_", b->id);
  for (const char *p = b->name; *p && p - b->name < 24; p++)
    tc_sb_putc(sb, (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_'));
}

static void expr(cg *g, tc_strbuf *sb, const tc_expr *e);
static void sub(cg *g, tc_strbuf *sb, const tc_expr *e);

static void dim_text(cg *g, tc_strbuf *sb, const tc_buffer *b, int d) { sub(g, sb, b->shape[d]); }

/* Linear offset of buf[idx] as text: row-major, or where the tensor's layout puts it. */
static void offset_text(cg *g, tc_strbuf *sb, const tc_buffer *b, int n, tc_expr *const *idx) {
  if (tc_layout_on_global(b) && n == b->ndim) { /* the tensor's own T.Layout places the element */
    tc_sb_puts(sb, "(long)");
    sub(g, sb, tc_layout_offset_at(g->a, b->layout, idx));
    return;
  }
  if (n == 0) {
    tc_sb_puts(sb, "0");
    return;
  }
  for (int d = 0; d < n - 1; d++) tc_sb_putc(sb, '(');
  for (int d = 0; d < n; d++) {
    if (d) {
      tc_sb_puts(sb, " * (long)");
      dim_text(g, sb, b, d);
      tc_sb_puts(sb, " + ");
    }
    tc_sb_puts(sb, "(long)");
    sub(g, sb, idx[d]);
    if (d) tc_sb_putc(sb, ')');
  }
}

/* Bounds condition of a global access as text. */
static void bounds_text(cg *g, tc_strbuf *sb, const tc_buffer *b, int n, tc_expr *const *idx) {
  if (n == 0) {
    tc_sb_puts(sb, "1");
    return;
  }
  tc_sb_putc(sb, '(');
  for (int d = 0; d < n; d++) {
    tc_sb_puts(sb, d ? " && (uint)" : "(uint)");
    sub(g, sb, idx[d]);
    tc_sb_puts(sb, " < (uint)");
    dim_text(g, sb, b, d);
  }
  tc_sb_putc(sb, ')');
}

static void load_at(const cg *g, tc_strbuf *sb, const tc_buffer *b, const char *off) {
  tc_dtype d = b->dtype;
  tc_strbuf t;
  tc_sb_init(&t);
  buf_name(&t, b);
  if (narrow(d) && native16(g, d)) tc_sb_printf(sb, "float(%s[%s])", tc_sb_cstr(&t), off);
  else if (narrow(d)) tc_sb_printf(sb, "tcg_%s_to_f32(%s[%s])", dtname(d), tc_sb_cstr(&t), off);
  else if (d.code == TC_DT_BOOL) tc_sb_printf(sb, "((int)(%s[%s] != 0))", tc_sb_cstr(&t), off);
  else tc_sb_printf(sb, "%s[%s]", tc_sb_cstr(&t), off);
  tc_sb_free(&t);
}

static void load(cg *g, tc_strbuf *sb, const tc_expr *e) {
  const tc_buffer *b = e->buf;
  if (is4(b->dtype)) {
    fail(g, e->loc, "4-bit dtypes are not supported on metal yet");
    return;
  }
  tc_strbuf off;
  tc_sb_init(&off);
  offset_text(g, &off, b, e->nargs, e->args);
  if (b->scope == TC_SCOPE_GLOBAL && !e->in_bounds) {
    tc_sb_puts(sb, "(");
    bounds_text(g, sb, b, e->nargs, e->args);
    tc_sb_puts(sb, " ? ");
    load_at(g, sb, b, tc_sb_cstr(&off));
    tc_sb_printf(sb, " : (%s)0)", ctype(b->dtype));
  } else {
    load_at(g, sb, b, tc_sb_cstr(&off));
  }
  tc_sb_free(&off);
}

/* A float constant by its bits: exact, and the same text for inf and NaN. */
static void const_float(tc_strbuf *sb, double v) {
  union { float f; uint32_t u; } x = {.f = (float)v};
  tc_sb_printf(sb, "as_type<float>(0x%xu)", (unsigned)x.u);
}

static const char *math_fn(tc_expr_op op) {
  switch (op) {
  case TC_OP_EXP: return "exp";
  case TC_OP_EXP2: return "exp2";
  case TC_OP_LOG: return "log";
  case TC_OP_LOG2: return "log2";
  case TC_OP_SQRT: return "sqrt";
  case TC_OP_RSQRT: return "rsqrt";
  case TC_OP_TANH: return "tanh";
  case TC_OP_SIN: return "sin";
  case TC_OP_COS: return "cos";
  case TC_OP_FLOOR: return "floor";
  case TC_OP_CEIL: return "ceil";
  default: return NULL;
  }
}

/* Whether an integer expression is known to be >= 0: then floor division and modulo by a
 * positive constant are C's / and %, in 32 bits (index arithmetic, which the lowering writes
 * with // and %, must not pay for 64-bit or sign-correcting division). */
static bool nonneg(const cg *g, const tc_expr *e) { return tc_range_nonneg(&g->ranges, e); }
static bool note_assigned(void *ctx, tc_stmt *s) {
  tc_ranges_note_assigned(&((cg *)ctx)->ranges, s);
  return true;
}

/* e as an operand: in parentheses unless its text is a primary expression */
static void sub(cg *g, tc_strbuf *sb, const tc_expr *e) {
  tc_strbuf t;
  tc_sb_init(&t);
  expr(g, &t, e);
  tc_cf_operand(sb, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

/* An operation whose result is rounded to a narrow dtype. */
static void rounded(cg *g, tc_strbuf *sb, const tc_expr *e, const char *pre, const char *mid, const char *post) {
  tc_strbuf t;
  tc_sb_init(&t);
  tc_sb_puts(&t, pre);
  sub(g, &t, e->args[0]);
  if (e->nargs > 1) {
    tc_sb_puts(&t, mid);
    sub(g, &t, e->args[1]);
  }
  tc_sb_puts(&t, post);
  round_to(g, sb, e->dtype, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

static bool is_signed_int(tc_dtype d) { return tc_dtype_is_int(d) && tc_dtype_is_signed(d); }

static void expr(cg *g, tc_strbuf *sb, const tc_expr *e);

/* reinterpret(x) (T.reinterpret), spelled as on the cpu and cuda (cfamily.c): a narrow float's
 * bits through the shared prelude's encoders (its value is already rounded to the type), a
 * float32's through as_type (tcg_bits_f32, the kernel's helpers). */
static void reinterpret(cg *g, tc_strbuf *sb, const tc_expr *e) {
  tc_strbuf x;
  tc_sb_init(&x);
  expr(g, &x, e->args[0]);
  tc_cf_reinterpret_text(sb, e->args[0]->dtype, e->dtype, tc_sb_cstr(&x), NULL, ctype(e->dtype));
  tc_sb_free(&x);
}

static void expr(cg *g, tc_strbuf *sb, const tc_expr *e) {
  tc_dtype d = e->dtype;
  bool fl = isfl(d);
  switch (e->op) {
  case TC_OP_CONST_INT:
    if (tc_dtype_bits(d) > 32 || d.code == TC_DT_UINT32) tc_sb_printf(sb, "((%s)%lldl)", ctype(d), (long long)e->ival);
    else tc_sb_printf(sb, "%lld", (long long)e->ival);
    return;
  case TC_OP_CONST_FLOAT: const_float(sb, e->fval); return;
  case TC_OP_VAR: var_name(g, sb, e->var); return;
  case TC_OP_LOAD: load(g, sb, e); return;
  case TC_OP_CAST: {
    tc_strbuf t;
    tc_sb_init(&t);
    sub(g, &t, e->args[0]);
    convert(g, sb, e->args[0]->dtype, d, tc_sb_cstr(&t));
    tc_sb_free(&t);
    return;
  }
  case TC_OP_SELECT:
    tc_sb_puts(sb, "(");
    sub(g, sb, e->args[0]);
    tc_sb_puts(sb, " ? ");
    sub(g, sb, e->args[1]);
    tc_sb_puts(sb, " : ");
    sub(g, sb, e->args[2]);
    tc_sb_puts(sb, ")");
    return;
  case TC_OP_CALL:
    if (e->callee && !strcmp(e->callee, "aligned16")) {
      tc_sb_puts(sb, "((((ulong)");
      expr(g, sb, e->args[0]);
      tc_sb_puts(sb, ") & 15) == 0)");
      return;
    }
    if (e->callee && !strcmp(e->callee, "shfl_xor")) {
      /* (value, lane mask, width): the lowering's masks stay inside the width, so the xor
       * over the whole simdgroup is the same exchange */
      tc_sb_puts(sb, "simd_shuffle_xor(");
      expr(g, sb, e->args[0]);
      tc_sb_puts(sb, ", (ushort)(");
      expr(g, sb, e->args[1]);
      tc_sb_puts(sb, "))");
      return;
    }
    if (e->callee && !strcmp(e->callee, "reinterpret") && e->nargs == 1) {
      reinterpret(g, sb, e);
      return;
    }
    if (e->callee && !strcmp(e->callee, "philox_rand") && e->nargs == 3) { /* T.rng_rand: philox.h */
      tc_strbuf a[3];
      const char *text[3];
      for (int i = 0; i < 3; i++) tc_sb_init(&a[i]), expr(g, &a[i], e->args[i]), text[i] = tc_sb_cstr(&a[i]);
      tc_cf_philox_text(sb, "ulong", text);
      for (int i = 0; i < 3; i++) tc_sb_free(&a[i]);
      return;
    }
    if (tc_intrinsic_construct(e->callee))
      fail(g, e->loc, "%s is not supported on metal yet (it runs on the cpu target)", tc_intrinsic_construct(e->callee));
    else
      fail(g, e->loc, "intrinsic '%s' has no Metal spelling", e->callee ? e->callee : "?");
    return;
  case TC_OP_ADDRESS_OF: {
    tc_sb_puts(sb, "(&");
    buf_name(sb, e->buf);
    tc_sb_puts(sb, "[");
    offset_text(g, sb, e->buf, e->nargs, e->args);
    tc_sb_puts(sb, "])");
    return;
  }
  case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MUL: {
    const char *o = e->op == TC_OP_ADD ? " + " : e->op == TC_OP_SUB ? " - " : " * ";
    if (is_signed_int(d) && tc_dtype_bits(d) >= 32 && tc_range_exact(&g->ranges, e)) { /* cannot wrap: C's own operator */
      tc_sb_putc(sb, '(');
      sub(g, sb, e->args[0]);
      tc_sb_puts(sb, o);
      sub(g, sb, e->args[1]);
      tc_sb_putc(sb, ')');
      return;
    }
    if (is_signed_int(d) && tc_dtype_bits(d) >= 32) {
      const char *u = tc_dtype_bits(d) > 32 ? "ulong" : "uint";
      tc_sb_printf(sb, "((%s)((%s)", ctype(d), u);
      sub(g, sb, e->args[0]);
      tc_sb_printf(sb, "%s(%s)", o, u);
      sub(g, sb, e->args[1]);
      tc_sb_puts(sb, "))");
      return;
    }
    rounded(g, sb, e, "(", o, ")");
    return;
  }
  case TC_OP_DIV:
    if (fl) rounded(g, sb, e, "(", " / ", ")");
    else if (tc_dtype_is_signed(d)) rounded(g, sb, e, "tcg_idiv(", ", ", ")");
    else rounded(g, sb, e, "tcg_udiv(", ", ", ")");
    return;
  case TC_OP_FLOORDIV:
  case TC_OP_FLOORMOD:
    if (!fl && e->args[1]->op == TC_OP_CONST_INT && e->args[1]->ival > 0 && !(e->args[1]->ival & (e->args[1]->ival - 1)) &&
        e->args[0]->dtype.code == d.code && nonneg(g, e->args[0])) { /* a power of two: a shift or a mask */
      tc_strbuf x;
      tc_sb_init(&x);
      sub(g, &x, e->args[0]);
      tc_cf_pow2_divmod(sb, tc_sb_cstr(&x), e->args[1]->ival, e->op == TC_OP_FLOORMOD);
      tc_sb_free(&x);
      return;
    }
    if (!fl && tc_dtype_bits(d) <= 32 && e->args[1]->op == TC_OP_CONST_INT && e->args[1]->ival > 0 && nonneg(g, e->args[0])) {
      tc_sb_printf(sb, "((%s)((uint)", ctype(d));
      sub(g, sb, e->args[0]);
      tc_sb_printf(sb, " %s %lldu))", e->op == TC_OP_FLOORDIV ? "/" : "%", (long long)e->args[1]->ival);
      return;
    }
    if (e->op == TC_OP_FLOORMOD) goto floormod;
    rounded(g, sb, e, fl ? "tcg_floordiv_f(" : tc_dtype_is_signed(d) ? "tcg_floordiv_i(" : "tcg_udiv(", ", ", ")");
    return;
  floormod:
    rounded(g, sb, e, fl ? "tcg_floormod_f(" : tc_dtype_is_signed(d) ? "tcg_floormod_i(" : "tcg_umod(", ", ", ")");
    return;
  case TC_OP_MIN: rounded(g, sb, e, fl ? "tcg_min_f(" : "tcg_min_i(", ", ", ")"); return;
  case TC_OP_MAX: rounded(g, sb, e, fl ? "tcg_max_f(" : "tcg_max_i(", ", ", ")"); return;
  case TC_OP_POW:
    if (fl) rounded(g, sb, e, "pow(", ", ", ")");
    else rounded(g, sb, e, "tcg_ipow(", ", ", ")");
    return;
  case TC_OP_NEG:
    if (fl) rounded(g, sb, e, "(-", "", ")");
    else tc_sb_printf(sb, "((%s)(0 - (ulong)(", ctype(d)), expr(g, sb, e->args[0]), tc_sb_puts(sb, ")))");
    return;
  case TC_OP_BIT_AND: rounded(g, sb, e, "(", " & ", ")"); return;
  case TC_OP_BIT_OR: rounded(g, sb, e, "(", " | ", ")"); return;
  case TC_OP_BIT_XOR: rounded(g, sb, e, "(", " ^ ", ")"); return;
  case TC_OP_BIT_NOT: rounded(g, sb, e, "(~", "", ")"); return;
  case TC_OP_SHL: rounded(g, sb, e, "(", " << ", ")"); return;
  case TC_OP_SHR: rounded(g, sb, e, "(", " >> ", ")"); return;
  case TC_OP_EQ: rounded(g, sb, e, "(", " == ", ")"); return;
  case TC_OP_NE: rounded(g, sb, e, "(", " != ", ")"); return;
  case TC_OP_LT: rounded(g, sb, e, "(", " < ", ")"); return;
  case TC_OP_LE: rounded(g, sb, e, "(", " <= ", ")"); return;
  case TC_OP_GT: rounded(g, sb, e, "(", " > ", ")"); return;
  case TC_OP_GE: rounded(g, sb, e, "(", " >= ", ")"); return;
  case TC_OP_AND: rounded(g, sb, e, "(", " && ", ")"); return;
  case TC_OP_OR: rounded(g, sb, e, "(", " || ", ")"); return;
  case TC_OP_NOT: rounded(g, sb, e, "(!", "", ")"); return;
  case TC_OP_ABS:
    if (fl) rounded(g, sb, e, "fabs(", "", ")");
    else tc_sb_printf(sb, "((%s)tcg_abs_i(", ctype(d)), expr(g, sb, e->args[0]), tc_sb_puts(sb, "))");
    return;
  case TC_OP_SIGMOID:
    rounded(g, sb, e, "(1.0f / (1.0f + exp(-", "", ")))");
    return;
  default: {
    const char *fn = math_fn(e->op);
    if (!fn) {
      fail(g, e->loc, "expression `%s` has no Metal spelling", tc_expr_op_name(e->op));
      return;
    }
    char pre[32];
    snprintf(pre, sizeof pre, "%s(", fn);
    rounded(g, sb, e, pre, "", ")");
    return;
  }
  }
}

/* ---- statements ---- */
static void store_text(cg *g, const tc_buffer *b, int n, tc_expr *const *idx, const tc_expr *value, bool in_bounds, tc_loc loc) {
  if (is4(b->dtype)) {
    fail(g, loc, "4-bit dtypes are not supported on metal yet");
    return;
  }
  tc_strbuf off, val, name, conv;
  tc_sb_init(&off);
  tc_sb_init(&val);
  tc_sb_init(&name);
  tc_sb_init(&conv);
  offset_text(g, &off, b, n, idx);
  expr(g, &val, value);
  buf_name(&name, b);
  tc_dtype d = b->dtype;
  if (narrow(d) && native16(g, d)) tc_sb_printf(&conv, "%s(%s)", stype_of(g, d), tc_sb_cstr(&val));
  else if (narrow(d)) tc_sb_printf(&conv, "tcg_f32_to_%s%s(%s)", dtname(d), tc_dtype_store_saturates(d) ? "_sat" : "", tc_sb_cstr(&val));
  else tc_sb_printf(&conv, "(%s)(%s)", stype_of(g, d), tc_sb_cstr(&val));
  if (b->scope == TC_SCOPE_GLOBAL && !in_bounds) {
    tc_strbuf bd;
    tc_sb_init(&bd);
    bounds_text(g, &bd, b, n, idx);
    line(g, "if %s %s[%s] = %s;", tc_sb_cstr(&bd), tc_sb_cstr(&name), tc_sb_cstr(&off), tc_sb_cstr(&conv));
    tc_sb_free(&bd);
  } else {
    line(g, "%s[%s] = %s;", tc_sb_cstr(&name), tc_sb_cstr(&off), tc_sb_cstr(&conv));
  }
  tc_sb_free(&off);
  tc_sb_free(&val);
  tc_sb_free(&name);
  tc_sb_free(&conv);
}

static void stmt(cg *g, const tc_stmt *s);

/* The address space a buffer lives in, as MSL spells it. */
static const char *space(const tc_buffer *b) {
  if (!b) return "device";
  switch (b->scope) {
  case TC_SCOPE_GLOBAL: return "device";
  case TC_SCOPE_SHARED: return "threadgroup";
  default: return "thread";
  }
}

/* e + k, folded where e is a constant or k is 0 */
static tc_expr *plus(cg *g, tc_expr *e, int64_t k, tc_loc loc) {
  int64_t c;
  if (k == 0) return e;
  if (tc_expr_const_int(e, &c)) return tc_ir_int(g->a, c + k, e->dtype, loc);
  return tc_ir_binary(g->a, TC_OP_ADD, e, tc_ir_int(g->a, k, e->dtype, loc), loc);
}

/* copy_vec(&mem[...], &regs[r], n) (tileops.c's vector_frag_copy: a run of n registers to n
 * consecutive elements inside the tensor, aligned to n): each value converted as store_text
 * converts it, then stored as vectors of up to 4 elements (one 8-byte store for 4 halves, where
 * element stores would be four). Only where the stored type has an MSL vector type; false: the
 * caller stores element by element. */
static bool vector_store(cg *g, const tc_stmt *s) {
  tc_expr *const *a = s->u.intrinsic.args;
  const tc_buffer *db = a[0]->buf, *xb = a[1]->buf;
  int64_t n = 0;
  if (!db || !xb || !tc_expr_const_int(a[2], &n) || n < 2 || (n & (n - 1)) || a[0]->nargs > TC_GL_MAXDIM ||
      a[1]->nargs > TC_GL_MAXDIM || a[0]->nargs < 1 || a[1]->nargs < 1)
    return false;
  if ((db->scope != TC_SCOPE_GLOBAL && db->scope != TC_SCOPE_SHARED) || xb->scope == TC_SCOPE_GLOBAL || xb->scope == TC_SCOPE_SHARED)
    return false;
  tc_dtype d = db->dtype;
  const char *st = stype_of(g, d);
  static const char *const vector_types[] = {"half", "bfloat", "float", "int", "uint", "short", "ushort", "char", "uchar"};
  bool has_vector = false;
  for (size_t i = 0; i < sizeof vector_types / sizeof vector_types[0]; i++) has_vector |= !strcmp(st, vector_types[i]);
  if (!has_vector || d.code == TC_DT_BOOL || is4(d) || (narrow(d) && !native16(g, d))) return false;
  int chunk = n < 4 ? (int)n : 4;
  for (int64_t k0 = 0; k0 < n; k0 += chunk) {
    tc_strbuf off, vals, name;
    tc_sb_init(&off), tc_sb_init(&vals), tc_sb_init(&name);
    tc_expr *di[TC_GL_MAXDIM];
    for (int i = 0; i < a[0]->nargs; i++) di[i] = a[0]->args[i];
    di[a[0]->nargs - 1] = plus(g, di[a[0]->nargs - 1], k0, s->loc);
    offset_text(g, &off, db, a[0]->nargs, di);
    buf_name(&name, db);
    for (int64_t k = k0; k < k0 + chunk; k++) {
      tc_expr *xi[TC_GL_MAXDIM];
      for (int i = 0; i < a[1]->nargs; i++) xi[i] = a[1]->args[i];
      xi[a[1]->nargs - 1] = plus(g, xi[a[1]->nargs - 1], k, s->loc);
      tc_expr *ld = tc_ir_load(g->a, a[1]->buf, a[1]->nargs, xi, s->loc);
      ld->in_bounds = true;
      tc_strbuf v;
      tc_sb_init(&v);
      expr(g, &v, tc_ir_cast(g->a, d, ld, s->loc));
      tc_sb_printf(&vals, "%s%s(%s)", k > k0 ? ", " : "", st, tc_cf_unwrapped(&v));
      tc_sb_free(&v);
    }
    line(g, "*(%s %s%d *)(&%s[%s]) = %s%d(%s);", space(db), st, chunk, tc_sb_cstr(&name), tc_sb_cstr(&off), st, chunk,
         tc_sb_cstr(&vals));
    tc_sb_free(&off), tc_sb_free(&vals), tc_sb_free(&name);
  }
  return true;
}

/* Intrinsic arguments [from, to) as a comma-separated list. */
static void args_text(cg *g, tc_strbuf *t, tc_expr *const *args, int from, int to) {
  for (int i = from; i < to; i++) {
    if (i > from) tc_sb_puts(t, ", ");
    expr(g, t, args[i]);
  }
}

/* The element type a gemm operand has in the prelude's templates. */
static const char *gemm_type(const cg *g, tc_dtype d) { return stype_of(g, d); }

/* gemm_block(M, N, K, warps_m, warps_n, trans_a, trans_b, instr, swizzle_a, swizzle_b, &A, &B, &C)
 * as a call of the prelude's matmul2d gemm (instr 2: C in the metal.cooperative_tensor scope),
 * simdgroup_matrix gemm (instr 3: C in the metal.simdgroup scope) or SIMT gemm (instr 0: 8-bit
 * integers, C a fragment in the m16n8 placement). */
static void gemm_call(cg *g, tc_loc loc, tc_expr *const *args) {
  int64_t v[10];
  for (int i = 0; i < 10; i++) tc_expr_const_int(args[i], &v[i]);
  const tc_buffer *A = args[10]->buf, *B = args[11]->buf, *C = args[12]->buf;
  bool rs = A->scope == TC_SCOPE_LOCAL;
  if (v[8] || v[9]) {
    fail(g, loc, "T.gemm on metal reads row-major operands; a swizzled operand reached the code generator");
    return;
  }
  tc_dtype ta = A->dtype, tb = B->dtype, tcd = C->dtype;
  if (v[7] == 2) {
    /* matmul2d: the lowering laid C out as 16 x 32 destinations (gemm.c checked the rest);
     * operands in device memory (direct-global, src/gpu/direct.c) are passed as the whole
     * matrix, its extents and the tile's origin, so matmul2d's bounds are the tensor's; A in
     * registers (rs: laid out as a matmul2d accumulator over WM x 1 simdgroups) gives the
     * left-input cooperative tensors, B comes from threadgroup memory */
    bool gg = A->scope == TC_SCOPE_GLOBAL && B->scope == TC_SCOPE_GLOBAL;
    tc_strbuf t;
    tc_sb_init(&t);
    tc_sb_printf(&t, "tcm_gemm_mpp_%s<%lld, %lld, %lld, %lld, %lld, %s, %s, %s, %s>(", rs ? "rs" : gg ? "gg" : "ss", (long long)v[0],
                 (long long)v[1], (long long)v[2], (long long)v[3], (long long)v[4], v[5] ? "true" : "false",
                 v[6] ? "true" : "false", gemm_type(g, ta), gemm_type(g, tb));
    for (int i = 10; i < 12; i++) {
      const tc_expr *op = args[i];
      if (gg && (op->op != TC_OP_ADDRESS_OF || op->nargs != 2 || op->buf->ndim != 2)) {
        fail(g, loc, "matmul2d (direct-global) reads 2-D tensors; its operand reached the code generator otherwise");
        tc_sb_free(&t);
        return;
      }
      if (gg) {
        buf_name(&t, op->buf);
        tc_sb_puts(&t, ", ");
        dim_text(g, &t, op->buf, 0);
        tc_sb_puts(&t, ", ");
        dim_text(g, &t, op->buf, 1);
        tc_sb_puts(&t, ", ");
        expr(g, &t, op->args[0]);
        tc_sb_puts(&t, ", ");
        expr(g, &t, op->args[1]);
      } else {
        expr(g, &t, op);
      }
      tc_sb_puts(&t, ", ");
    }
    expr(g, &t, args[12]);
    tc_sb_puts(&t, ", tcg_simdgroup);");
    line(g, "%s", tc_sb_cstr(&t));
    tc_sb_free(&t);
    g->gemms++;
    g->matmul2d = true;
    return;
  }
  bool sg = v[7] == TC_GPU_GEMM_SIMDGROUP;
  bool simt_ok = !isfl(ta) && !isfl(tb) && !isfl(tcd) && !rs;
  if (!sg && !simt_ok) {
    if (tc_metal_simdgroup_gemm(g->msl, ta, tb, tcd, v[2]))
      fail(g, loc, "T.gemm of %s x %s into %s: its accumulator '%s' is not in the metal.simdgroup scope (another T.gemm into "
                   "it cannot run on simdgroup_matrix)", dtname(ta), dtname(tb), dtname(tcd), C->name);
    else
      fail(g, loc, "T.gemm of %s x %s into %s is not supported on metal (simdgroup_matrix takes float16, float32 and, "
                   "from MSL 3.1, bfloat16 operands with K a multiple of 8; 8-bit integer operands take a SIMT path)",
           dtname(ta), dtname(tb), dtname(tcd));
    return;
  }
  tc_strbuf t;
  tc_sb_init(&t);
  tc_sb_printf(&t, "%s<%lld, %lld, %lld, %lld, %lld, %s, %s, %s, %s, %s>(", rs ? "tcm_gemm_rs" : sg ? "tcm_gemm_ss" : "tcm_gemm_ss_simt",
               (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3], (long long)v[4], v[5] ? "true" : "false",
               v[6] ? "true" : "false", gemm_type(g, ta), gemm_type(g, tb), gemm_type(g, tcd));
  args_text(g, &t, args, 10, 13);
  tc_sb_puts(&t, sg ? ", tcg_simdgroup);" : ", tcg_lane, tcg_simdgroup);");
  line(g, "%s", tc_sb_cstr(&t));
  tc_sb_free(&t);
  g->gemms++;
}

/* simdgroup_store_acc(M, N, warps_m, warps_n, &C, &G[origin], row_stride): the prelude's
 * simdgroup_store of each 8x8 block of a metal.simdgroup accumulator, straight to device memory. */
static void simdgroup_store_call(cg *g, tc_expr *const *args) {
  int64_t v[4];
  for (int i = 0; i < 4; i++) tc_expr_const_int(args[i], &v[i]);
  tc_strbuf t;
  tc_sb_init(&t);
  tc_sb_printf(&t, "tcm_store_sg<%lld, %lld, %lld, %lld>(", (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3]);
  args_text(g, &t, args, 4, 6);
  tc_sb_puts(&t, ", (ulong)(");
  expr(g, &t, args[6]);
  tc_sb_puts(&t, "), tcg_simdgroup);");
  line(g, "%s", tc_sb_cstr(&t));
  tc_sb_free(&t);
}

static void alloc(cg *g, const tc_buffer *b) {
  tc_strbuf n;
  tc_sb_init(&n);
  buf_name(&n, b);
  if (b->view_of && b->scope == TC_SCOPE_GLOBAL) { /* its own shape over its tensor's elements, row-major */
    tc_strbuf base;
    tc_sb_init(&base);
    buf_name(&base, b->view_of);
    line(g, "%sdevice %s *%s = %s;", g->written[b->view_of->id] ? "" : "const ", stype_of(g, b->dtype), tc_sb_cstr(&n),
         tc_sb_cstr(&base));
    tc_sb_free(&base);
    tc_sb_free(&n);
    return;
  }
  int64_t numel = tc_buffer_numel(b);
  if (numel < 0) {
    fail(g, b->loc, "buffer '%s' needs a constant size on metal", b->name);
    tc_sb_free(&n);
    return;
  }
  if (b->scope == TC_SCOPE_SHARED) {
    int64_t bytes = tc_gpu_tile_bytes(b->dtype, numel);
    int64_t at = b->smem_placed ? b->smem_at : g->smem; /* placed by the lowering when tiles share memory */
    line(g, "threadgroup %s *%s = (threadgroup %s *)(tcg_smem + %lld);", stype_of(g, b->dtype), tc_sb_cstr(&n),
         stype_of(g, b->dtype), (long long)(at / 16));
    if (at + bytes > g->smem) g->smem = at + bytes;
  } else {
    line(g, "%s %s[%lld];", stype_of(g, b->dtype), tc_sb_cstr(&n), (long long)(numel > 0 ? numel : 1));
    if (b->init) {
      tc_expr *zero[1];
      tc_expr z = {.op = TC_OP_CONST_INT, .dtype = tc_index_dtype()};
      zero[0] = &z;
      tc_buffer tmp = *b;
      tmp.ndim = 1;
      store_text(g, &tmp, 1, zero, b->init, false, b->loc);
    }
  }
  tc_sb_free(&n);
}

/* T.atomic_add: Metal's atomics on 32-bit words; 16-bit floats by compare-and-swap on the word
 * that holds them. */
static void atomic_add(cg *g, const tc_stmt *s) {
  const tc_buffer *b = s->u.atomic.buf;
  tc_dtype d = b ? b->dtype : tc_dt(TC_DT_INVALID);
  bool f16 = d.code == TC_DT_FLOAT16 || d.code == TC_DT_BFLOAT16;
  const char *at = d.code == TC_DT_FLOAT32 ? "atomic_float" : d.code == TC_DT_INT32 ? "atomic_int" : d.code == TC_DT_UINT32 ? "atomic_uint" : NULL;
  if (!b || (!at && !f16)) {
    fail(g, s->loc, "T.atomic_add on %s is not supported on metal (float32, int32, uint32, float16 and bfloat16 are)",
         b ? dtname(d) : "this operand");
    return;
  }
  tc_strbuf off, val, name, bd, prev;
  tc_sb_init(&off), tc_sb_init(&val), tc_sb_init(&name), tc_sb_init(&bd), tc_sb_init(&prev);
  /* return_prev: the per-thread cell that receives the value before this thread's addition */
  if (s->u.atomic.prev) {
    buf_name(&prev, s->u.atomic.prev);
    tc_sb_printf(&prev, "[0] = (%s)", ctype(d));
  }
  offset_text(g, &off, b, s->u.atomic.nidx, s->u.atomic.idx);
  expr(g, &val, s->u.atomic.value);
  buf_name(&name, b);
  if (b->scope == TC_SCOPE_GLOBAL) bounds_text(g, &bd, b, s->u.atomic.nidx, s->u.atomic.idx);
  else tc_sb_puts(&bd, "(1)");
  const char *sp = space(b);
  if (at) {
    line(g, "if %s %satomic_fetch_add_explicit((%s %s *)&%s[%s], (%s)(%s), memory_order_relaxed);", tc_sb_cstr(&bd),
         tc_sb_cstr(&prev), sp, at, tc_sb_cstr(&name), tc_sb_cstr(&off), ctype(d), tc_sb_cstr(&val));
  } else {
    const char *dec = d.code == TC_DT_FLOAT16 ? "float(as_type<half>(h_))" : g->msl >= 310 ? "float(as_type<bfloat>(h_))" : "tcg_bfloat16_to_f32(h_)";
    const char *enc = d.code == TC_DT_FLOAT16 ? "as_type<ushort>(half(f_))" : g->msl >= 310 ? "as_type<ushort>(bfloat(f_))" : "tcg_f32_to_bfloat16(f_)";
    line(g, "if %s {", tc_sb_cstr(&bd));
    g->ind++;
    line(g, "%s %s *p_ = &%s[%s];", sp, stype_of(g, d), tc_sb_cstr(&name), tc_sb_cstr(&off));
    line(g, "const uint sh_ = (((ulong)p_) & 2) ? 16u : 0u;");
    line(g, "%s atomic_uint *w_ = (%s atomic_uint *)((%s uchar *)p_ - (((ulong)p_) & 2));", sp, sp, sp);
    line(g, "const float v_ = %s;", tc_sb_cstr(&val));
    line(g, "uint old_ = atomic_load_explicit(w_, memory_order_relaxed);");
    line(g, "for (;;) {");
    line(g, "  ushort h_ = (ushort)(old_ >> sh_);");
    line(g, "  float f_ = %s + v_;", dec);
    line(g, "  uint nv_ = (old_ & ~(0xffffu << sh_)) | ((uint)%s << sh_);", enc);
    line(g, "  if (atomic_compare_exchange_weak_explicit(w_, &old_, nv_, memory_order_relaxed, memory_order_relaxed)) {");
    if (s->u.atomic.prev) line(g, "    %s%s;", tc_sb_cstr(&prev), dec);
    line(g, "    break;");
    line(g, "  }");
    line(g, "}");
    g->ind--;
    line(g, "}");
  }
  tc_sb_free(&off), tc_sb_free(&val), tc_sb_free(&name), tc_sb_free(&bd), tc_sb_free(&prev);
}

static void stmt(cg *g, const tc_stmt *s) {
  if (!s || g->failed) return;
  tc_strbuf t;
  tc_sb_init(&t);
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) stmt(g, s->u.seq.items[i]);
    break;
  case TC_ST_ALLOC: alloc(g, s->u.alloc.buf); break;
  case TC_ST_FOR: {
    tc_strbuf v, mn, ext;
    tc_sb_init(&v), tc_sb_init(&mn), tc_sb_init(&ext);
    var_name(g, &v, s->u.loop.var);
    expr(g, &mn, s->u.loop.min);
    expr(g, &ext, s->u.loop.extent);
    tc_range_set_loop(&g->ranges, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
    if (s->u.loop.kind == TC_LOOP_UNROLL) line(g, "#pragma unroll");
    {
      tc_strbuf end;
      tc_sb_init(&end);
      tc_cf_loop_end(&end, s->u.loop.min, s->u.loop.extent, tc_sb_cstr(&mn), tc_sb_cstr(&ext));
      line(g, "for (int %s = %s; %s < %s; %s++) {", tc_sb_cstr(&v), tc_sb_cstr(&mn), tc_sb_cstr(&v), tc_sb_cstr(&end), tc_sb_cstr(&v));
      tc_sb_free(&end);
    }
    g->ind++;
    stmt(g, s->u.loop.body);
    g->ind--;
    line(g, "}");
    tc_sb_free(&v), tc_sb_free(&mn), tc_sb_free(&ext);
    break;
  }
  case TC_ST_WHILE: /* its condition is the same in every thread (the barrier pass checked) */
    expr(g, &t, s->u.while_.cond);
    line(g, "while (%s) {", tc_sb_cstr(&t));
    g->ind++;
    stmt(g, s->u.while_.body);
    g->ind--;
    line(g, "}");
    break;
  case TC_ST_IF:
    expr(g, &t, s->u.if_.cond);
    line(g, "if (%s) {", tc_cf_unwrapped(&t));
    g->ind++;
    stmt(g, s->u.if_.then_s);
    g->ind--;
    if (s->u.if_.else_s) {
      line(g, "} else {");
      g->ind++;
      stmt(g, s->u.if_.else_s);
      g->ind--;
    }
    line(g, "}");
    break;
  case TC_ST_STORE:
    store_text(g, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->u.store.value, s->u.store.in_bounds, s->loc);
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN: {
    tc_strbuf v;
    tc_sb_init(&v);
    var_name(g, &v, s->u.let.var);
    expr(g, &t, s->u.let.value);
    if (s->kind == TC_ST_LET) {
      tc_range_set(&g->ranges, s->u.let.var, tc_range_of(&g->ranges, s->u.let.value));
      line(g, "%s %s = %s;", ctype(s->u.let.var->dtype), tc_sb_cstr(&v), tc_cf_unwrapped(&t));
    } else {
      /* reassigned: tc_ranges_note_assigned gave it its dtype's range */
      line(g, "%s = %s;", tc_sb_cstr(&v), tc_cf_unwrapped(&t));
    }
    tc_sb_free(&v);
    break;
  }
  case TC_ST_BARRIER:
    line(g, "threadgroup_barrier(%s);", g->device_barrier ? "mem_flags::mem_threadgroup | mem_flags::mem_device" : "mem_flags::mem_threadgroup");
    break;
  case TC_ST_EVALUATE:
    expr(g, &t, s->u.evaluate.value);
    line(g, "(void)(%s);", tc_sb_cstr(&t));
    break;
  case TC_ST_INTRINSIC:
    if (!strcmp(s->u.intrinsic.name, "gemm_block")) {
      gemm_call(g, s->loc, s->u.intrinsic.args);
    } else if (!strcmp(s->u.intrinsic.name, "simdgroup_store_acc")) {
      simdgroup_store_call(g, s->u.intrinsic.args);
    } else if (!strcmp(s->u.intrinsic.name, "copy16") || !strcmp(s->u.intrinsic.name, "cp_async16")) {
      tc_strbuf d, x;
      tc_sb_init(&d), tc_sb_init(&x);
      expr(g, &d, s->u.intrinsic.args[0]);
      expr(g, &x, s->u.intrinsic.args[1]);
      /* one 128-bit copy; Metal has no asynchronous copy into threadgroup memory, so a
       * pipelined producer's copy is this same synchronous one (the pipeline's barriers
       * keep it correct) */
      const tc_buffer *db = s->u.intrinsic.args[0]->buf, *xb = s->u.intrinsic.args[1]->buf;
      const char *vt = db && db->dtype.code == TC_DT_FLOAT32 ? "float4" : "uint4"; /* 16 bytes either way */
      line(g, "*(%s %s *)%s = *(const %s %s *)%s;", space(db), vt, tc_sb_cstr(&d), space(xb), vt, tc_sb_cstr(&x));
      tc_sb_free(&d), tc_sb_free(&x);
    } else if (!strcmp(s->u.intrinsic.name, "copy_vec")) {
      if (vector_store(g, s)) break;
      /* element by element: the stores below convert as T.copy does; the run is inside the
       * tensor (the lowering tested it), so no bounds checks */
      tc_expr *const *a = s->u.intrinsic.args;
      int64_t n = 0;
      tc_expr_const_int(a[2], &n);
      for (int64_t k = 0; k < n; k++) {
        tc_expr *di[TC_GL_MAXDIM], *xi[TC_GL_MAXDIM];
        if (a[0]->nargs > TC_GL_MAXDIM || a[1]->nargs > TC_GL_MAXDIM) break;
        for (int i = 0; i < a[0]->nargs; i++) di[i] = a[0]->args[i];
        for (int i = 0; i < a[1]->nargs; i++) xi[i] = a[1]->args[i];
        tc_expr *kk = tc_ir_int(g->a, k, tc_index_dtype(), s->loc);
        di[a[0]->nargs - 1] = tc_ir_binary(g->a, TC_OP_ADD, di[a[0]->nargs - 1], kk, s->loc);
        xi[a[1]->nargs - 1] = tc_ir_binary(g->a, TC_OP_ADD, xi[a[1]->nargs - 1], kk, s->loc);
        tc_expr *ld = tc_ir_load(g->a, a[1]->buf, a[1]->nargs, xi, s->loc);
        ld->in_bounds = true;
        store_text(g, a[0]->buf, a[0]->nargs, di, tc_ir_cast(g->a, a[0]->buf->dtype, ld, s->loc), true, s->loc);
      }
    } else if (!strcmp(s->u.intrinsic.name, "cp_async_commit") || !strcmp(s->u.intrinsic.name, "cp_async_wait")) {
      /* the copies above were synchronous: nothing to wait for */
    } else if (!strcmp(s->u.intrinsic.name, "warp_sync")) {
      line(g, "simdgroup_barrier(mem_flags::mem_threadgroup);");
    } else {
      fail(g, s->loc, "intrinsic '%s' has no Metal spelling", s->u.intrinsic.name);
    }
    break;
  case TC_ST_ATOMIC_ADD: atomic_add(g, s); break;
  case TC_ST_ASSERT:
    fail(g, s->loc, "a run-time T.assert is not supported on metal yet (Metal kernels cannot trap)");
    break;
  case TC_ST_PRINT:
    fail(g, s->loc, "T.print is not supported on metal");
    break;
  case TC_ST_ANNOTATE:
    break;
  default:
    fail(g, s->loc, "statement `%s` has no Metal spelling", tc_stmt_kind_name(s->kind));
  }
  tc_sb_free(&t);
}

/* Helpers every kernel may use (after the dtype prelude and prelude.metal). */
static const char metal_helpers[] =
    /* cuRAND's Philox4_32_10 (T.rng_rand; src/ir/philox.h) */
    TC_PHILOX_METAL_TEXT
    "inline long tcg_idiv(long a, long b) { return b == 0 ? 0 : b == -1 ? (long)(0 - (ulong)a) : a / b; }\n"
    "inline ulong tcg_udiv(ulong a, ulong b) { return b == 0 ? 0 : a / b; }\n"
    "inline ulong tcg_umod(ulong a, ulong b) { return b == 0 ? 0 : a % b; }\n"
    "inline long tcg_floordiv_i(long a, long b) {\n"
    "  if (b == 0) return 0; long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "inline long tcg_floormod_i(long a, long b) {\n"
    "  if (b == 0) return 0; long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "inline float tcg_floordiv_f(float a, float b) { return floor(a / b); }\n"
    "inline float tcg_floormod_f(float a, float b) { float r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "inline float tcg_max_f(float a, float b) { return a > b ? a : b; }\n"
    "inline float tcg_min_f(float a, float b) { return a < b ? a : b; }\n"
    "inline long tcg_max_i(long a, long b) { return a > b ? a : b; }\n"
    "inline long tcg_min_i(long a, long b) { return a < b ? a : b; }\n"
    "inline long tcg_abs_i(long a) { return a < 0 ? (long)(0 - (ulong)a) : a; }\n"
    "inline long tcg_ipow(long a, long b) {\n"
    "  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "  ulong r = 1, x = (ulong)a; while (b) { if (b & 1) r *= x; x *= x; b >>= 1; } return (long)r; }\n"
    "/* float -> integer: truncate toward zero, saturate, NaN gives 0 (the values arrive as float:\n"
    " * Metal has no double) */\n"
    "#define TCG_F2I(name, T, lo, hi) \\\n"
    "  inline T tcg_f2##name(float x) { return x != x ? (T)0 : x <= (float)(lo) ? (T)(lo) : x >= (float)(hi) ? (T)(hi) : (T)x; }\n"
    "TCG_F2I(int8, char, -128, 127)\nTCG_F2I(int16, short, -32768, 32767)\nTCG_F2I(int32, int, -2147483648.0f, 2147483647.0f)\n"
    "TCG_F2I(uint8, uchar, 0, 255)\nTCG_F2I(uint16, ushort, 0, 65535)\nTCG_F2I(uint32, uint, 0, 4294967295.0f)\n"
    "TCG_F2I(int64, long, -9223372036854775808.0f, 9223372036854775807.0f)\nTCG_F2I(uint64, ulong, 0, 18446744073709551615.0f)\n"
    "#undef TCG_F2I\n"
    "inline int tcg_f2bool(float x) { return x != 0; }\n";

/* Rounding to each software-converted narrow float (native half and bfloat round by a cast). */
static void narrow_helpers(const cg *g, tc_strbuf *sb) {
  /* bit casts of float32 (T.reinterpret, cfamily.c's spelling) */
  tc_sb_puts(sb, "inline uint tcg_bits_f32(float x) { return as_type<uint>(x); }\n");
  tc_sb_puts(sb, "inline float tcg_f32_bits(uint b) { return as_type<float>(b); }\n");
  for (int c = TC_DT_INVALID + 1; c < TC_DT_COUNT; c++) {
    tc_dtype d = tc_dt((tc_scalar_type)c);
    if (!narrow(d) || is4(d) || native16(g, d)) continue;
    const char *n = dtname(d);
    tc_sb_printf(sb, "inline float tcg_r_%s(float x) { return tcg_%s_to_f32(tcg_f32_to_%s%s(x)); }\n", n, n, n,
                 tc_dtype_store_saturates(d) ? "_sat" : "");
  }
}

/* T.use_swizzle: the same block permutation as the cuda target (docs/gpu.md). */
static void rasterize(cg *g, int panel, bool column) {
  const char *x = column ? "y" : "x", *y = column ? "x" : "y";
  line(g, "int tcg_bx, tcg_by;");
  line(g, "{");
  line(g, "  const int gx = (int)tcg_ngroups.%s, gy = (int)tcg_ngroups.%s;", x, y);
  line(g, "  const int lin = (int)tcg_bid.%s + gx * (int)tcg_bid.%s;", x, y);
  line(g, "  const int p = lin / (%d * gx), in_p = lin %% (%d * gx);", panel, panel);
  line(g, "  const int h = min(%d, gy - p * %d);", panel, panel);
  line(g, "  tcg_b%s = in_p / h;", x);
  line(g, "  tcg_b%s = p * %d + in_p %% h;", y, panel);
  line(g, "}");
}

/* ---- what the kernel reads and writes (const parameters, barrier scope) ---- */
static tc_expr *note_load(void *ctx, tc_expr *e) {
  cg *g = ctx;
  if (e->op == TC_OP_LOAD && e->buf) g->read[e->buf->id] = true;
  return e;
}
/* The argument through which an intrinsic writes (its other addresses are read), or -1. An
 * address elsewhere (aligned16's) only tests alignment. */
static int written_arg(const tc_stmt *s) {
  const char *n = s->u.intrinsic.name;
  if (!strcmp(n, "copy16") || !strcmp(n, "cp_async16") || !strcmp(n, "copy_vec")) return 0;
  if (!strcmp(n, "gemm_block")) return 12;
  if (!strcmp(n, "simdgroup_store_acc")) return 5;
  return -1;
}
static bool note_access(void *ctx, tc_stmt *s) {
  cg *g = ctx;
  note_assigned(ctx, s);
  /* a view's accesses are its tensor's (tc_buffer_storage) */
  if (s->kind == TC_ST_STORE) g->written[tc_buffer_storage(s->u.store.buf)->id] = true;
  if (s->kind == TC_ST_ATOMIC_ADD && s->u.atomic.buf) g->written[tc_buffer_storage(s->u.atomic.buf)->id] = true;
  if (s->kind == TC_ST_INTRINSIC) {
    int w = written_arg(s);
    for (int i = 0; i < s->u.intrinsic.nargs; i++) {
      const tc_expr *x = s->u.intrinsic.args[i];
      if (x->op != TC_OP_ADDRESS_OF || !x->buf) continue;
      if (i == w) g->written[tc_buffer_storage(x->buf)->id] = true;
      else g->read[tc_buffer_storage(x->buf)->id] = true;
    }
  }
  return true;
}

/* A dtype Metal cannot hold: float64 anywhere in the kernel is an error at its first use. */
static bool find_float64(void *ctx, tc_stmt *s) {
  cg *g = ctx;
  if (g->failed) return false;
  if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->dtype.code == TC_DT_FLOAT64)
    fail(g, s->u.alloc.buf->loc, "metal has no float64: buffer '%s' cannot be float64 on this target", s->u.alloc.buf->name);
  if ((s->kind == TC_ST_LET || s->kind == TC_ST_ASSIGN) && s->u.let.var->dtype.code == TC_DT_FLOAT64)
    fail(g, s->loc, "metal has no float64: '%s' cannot be float64 on this target", s->u.let.var->name);
  return !g->failed;
}
static tc_expr *find_float64_expr(void *ctx, tc_expr *e) {
  cg *g = ctx;
  if (e->dtype.code == TC_DT_FLOAT64) fail(g, e->loc, "metal has no float64: this expression is float64 (cast it to float32)");
  return e;
}

tilec_status tc_metal_print(const tc_kernel_ir *k, tc_arena *a, int msl, tc_generated *out, char *entry, size_t entry_cap,
                            int64_t *smem_bytes, tilec_error *err) {
  tc_strbuf body, kern, full;
  tc_sb_init(&body);
  tc_sb_init(&kern);
  tc_sb_init(&full);
  cg g = {.a = a, .sb = &body, .k = k, .err = err, .msl = msl};
  tc_ranges_init(&g.ranges, a, k);
  g.written = TC_NEW_ARRAY(a, bool, g.ranges.nvars);
  g.read = TC_NEW_ARRAY(a, bool, g.ranges.nvars);
  tc_stmt *root = (tc_stmt *)k->body; /* the lowered copy is ours; the visitors only look */
  tc_visit_stmts(root, note_access, &g);
  tc_rewrite_stmt_exprs(root, note_load, &g);
  for (int i = 0; i < k->nparams; i++) {
    const tc_param *p = &k->params[i];
    tc_dtype d = p->buf ? p->buf->dtype : p->var->dtype;
    if (d.code == TC_DT_FLOAT64)
      fail(&g, p->buf ? p->buf->loc : k->loc, "metal has no float64: parameter '%s' cannot be float64 on this target",
           p->buf ? p->buf->name : p->var->name);
    if (p->buf && g.read[p->buf->id] && g.written[p->buf->id]) g.device_barrier = true;
  }
  tc_visit_stmts(root, find_float64, &g);
  if (!g.failed) tc_rewrite_stmt_exprs(root, find_float64_expr, &g);
  snprintf(entry, entry_cap, "tilec_%s", k->name);
  for (char *p = entry; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
  int threads = 1;
  for (int i = 0; i < k->threads_ndim; i++) threads *= k->threads[i];
  g.ind = 1;
  if (!g.failed) {
    if (k->swizzle_panel > 0 && k->swizzle_enable) rasterize(&g, k->swizzle_panel, k->swizzle_order != TC_SWIZZLE_ROW);
    stmt(&g, k->body);
  }
  if (g.failed) {
    tc_sb_free(&body);
    tc_sb_free(&kern);
    tc_sb_free(&full);
    return err->status;
  }
  /* the signature: tensors, scalars, symbolic dims, the launch's number for a kernel of several
   * launches ([[buffer(i)]] in that order), then ids */
  tc_sb_printf(&kern, "[[kernel, max_total_threads_per_threadgroup(%d)]] void %s(\n", threads, entry);
  int nb = 0;
  for (int i = 0; i < k->nparams; i++) {
    const tc_param *p = &k->params[i];
    tc_sb_puts(&kern, "    ");
    if (p->buf) {
      tc_sb_printf(&kern, "%sdevice %s *__restrict ", g.written[p->buf->id] ? "" : "const ", stype_of(&g, p->buf->dtype));
      buf_name(&kern, p->buf);
    } else {
      tc_sb_printf(&kern, "constant %s &", tc_metal_scalar_type(p->var->dtype));
      var_name(&g, &kern, p->var);
    }
    tc_sb_printf(&kern, " [[buffer(%d)]],\n", nb++);
  }
  for (int s = 0; s < k->nsyms; s++) {
    tc_sb_puts(&kern, "    constant int &");
    var_name(&g, &kern, k->syms[s]);
    tc_sb_printf(&kern, " [[buffer(%d)]],\n", nb++);
  }
  if (k->nlaunches > 1) tc_sb_printf(&kern, "    constant int &tcg_launch [[buffer(%d)]],\n", nb++);
  tc_sb_puts(&kern, "    uint3 tcg_tid [[thread_position_in_threadgroup]], uint3 tcg_bid [[threadgroup_position_in_grid]],\n"
                    "    uint3 tcg_ngroups [[threadgroups_per_grid]], ushort tcg_lane [[thread_index_in_simdgroup]],\n"
                    "    ushort tcg_simdgroup [[simdgroup_index_in_threadgroup]]) {\n");
  tc_sb_puts(&kern, "  (void)tcg_tid; (void)tcg_bid; (void)tcg_ngroups; (void)tcg_lane; (void)tcg_simdgroup;\n");
  if (g.smem > 0) tc_sb_printf(&kern, "  threadgroup uint4 tcg_smem[%lld];\n", (long long)(g.smem / 16));
  tc_sb_puts(&kern, tc_sb_cstr(&body));
  tc_sb_puts(&kern, "}\n");
  tc_sb_free(&body);
  *smem_bytes = g.smem;
  tc_sb_printf(&full, "// generated by tilec for the metal target (MSL %d.%d)\n", msl / 100, msl % 100 / 10);
  tc_sb_puts(&full, tc_metal_prelude());
  if (g.matmul2d) tc_sb_puts(&full, tc_metal_prelude_mpp());
  tc_sb_puts(&full, tc_dtype_c_prelude());
  tc_sb_puts(&full, metal_helpers);
  narrow_helpers(&g, &full);
  tc_sb_puts(&full, "\n");
  tc_sb_puts(&full, tc_sb_cstr(&kern));
  out->kernel_source = tc_sb_take(&kern);
  out->full_source = tc_sb_take(&full);
  return TILEC_OK;
}

const char *tc_metal_scalar_type(tc_dtype d) {
  if (tc_dtype_is_float(d)) return "float";
  if (d.code == TC_DT_INT64) return "long";
  if (d.code == TC_DT_UINT64) return "ulong";
  if (d.code == TC_DT_UINT32) return "uint";
  return "int";
}
