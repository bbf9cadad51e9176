/* codegen.c: SIMT IR (from src/gpu/) -> one CUDA C++ translation unit.
 *
 * The kernel is `extern "C" __global__` with the parameter ABI of docs/cuda.md: each kernel
 * parameter in order (a tensor as a pointer to its element storage, a scalar by value), then
 * each symbolic dimension as int32. Values compute as on the cpu target (float for the narrow
 * floats, rounded after each operation; wrapping signed integers, spelled with C's own operators
 * where analysis/range.c shows the result cannot wrap; saturating float->int), with
 * the same dtype prelude, so results agree bit for bit where the operations are exact. Shared
 * buffers are carved out of one dynamic shared-memory block; fragments are register arrays
 * indexed by constants. Global loads outside a tensor read zero and stores outside are
 * dropped (docs/language.md). */
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
#include "target/cuda/codegen.h"
#include "target/cuda/prelude/cuda_prelude.h"
#include "target/cuda/streamk.h"
#include "target/cuda/walk.h"

typedef struct cg {
  tc_arena *a;
  tc_strbuf *sb;
  const tc_kernel_ir *k;
  tilec_error *err;
  bool failed;
  int ind;
  int64_t smem;      /* bytes of dynamic shared memory so far */
  int nasserts;
  tc_ranges ranges;  /* what each integer can be: plain arithmetic where it cannot wrap (analysis/range.c) */
  tc_strbuf *ops;    /* wgmma instruction specializations the kernel needs (wgmma.c) */
  char op_keys[16][24];
  int nop_keys;
  int consumers;     /* the kernel's threads when it has a producer warpgroup, else 0 */
  int blocks_per_sm; /* a warp-specialized kernel's blocks resident on one SM (1 or 2) */
  int turn_in_gemm;  /* printing a wgmma gemm that passes the warpgroups' turn once issued: their number */
  bool in_producer;  /* printing a warp-specialized loop's producer part (one thread runs it) */
  const tc_stmt *count_let; /* the LET of that loop's iteration count being printed */
  const tc_stmt *fence_hoisted; /* the warp-specialized loop being printed whose wgmma operands that threads
                                 * write outside it were fenced once before it (hoisted_fence) */
  const char *nan_acc; /* printing a NaN-deferred loop's first pass: its NaN note (nan_deferred) */
  int nnan;            /* NaN-deferred loops so far, for their notes' names */
  bool exact_rerun;    /* printing a NaN-deferred loop's exact rerun (no deferral inside) */
  const tc_cuda_streamk *sk; /* the persistent walk cuts tiles along this loop (streamk.c), or NULL */
  bool sk_wgmma;             /* ... whose gemms are wgmma */
  bool sk_piece;             /* printing that loop: a piece's iterations */
  int64_t wave_own, wave_other; /* the persistent walk picks its panels' height from these bytes (walk.c), or 0 */
  bool free_consumers;          /* the consumers need not meet between tiles (walk.c) */
  bool in_consumer_tile;        /* printing the consumers' tile body */
  bool folds;                   /* the block recovers its logical (bx, by, bz) from a grid folded into x (fold_grid) */
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

/* The float32 -> narrow encoder applied to `value`. Fast math (TL_ENABLE_FAST_MATH) lets the
 * 16-bit float ones be the bare cvt: a NaN's payload is what it gives up (4 instructions an
 * element fewer, the softmax -> P conversion of attention). */
/* The hardware conversion alone (no NaN rule), or NULL where the exact conversion is as cheap. */
static const char *raw_decoder(tc_dtype d) { return d.code == TC_DT_FLOAT16 ? "tcg_float16_to_f32_raw" : NULL; }
static const char *raw_encoder(tc_dtype d) {
  switch (d.code) {
  case TC_DT_FLOAT16: return "tcg_f32_to_float16_fast";
  case TC_DT_BFLOAT16: return "tcg_f32_to_bfloat16_fast";
  case TC_DT_FLOAT8_E4M3FN: return "tcg_f32_to_float8_e4m3fn_raw";
  case TC_DT_FLOAT8_E5M2: return "tcg_f32_to_float8_e5m2_raw";
  default: return NULL;
  }
}

static void encode(const cg *g, tc_strbuf *sb, tc_dtype d, const char *value) {
  bool fast = g->k->fast_math && (d.code == TC_DT_FLOAT16 || d.code == TC_DT_BFLOAT16);
  if (g->nan_acc && !fast && raw_encoder(d)) {
    tc_sb_printf(sb, "%s_chk(%s, %s)", raw_encoder(d), value, g->nan_acc);
    return;
  }
  tc_sb_printf(sb, "tcg_f32_to_%s%s(%s)", dtname(d), fast ? "_fast" : tc_dtype_store_saturates(d) ? "_sat" : "", value);
}
/* type values compute in */
static const char *ctype(tc_dtype d) {
  if (d.code == TC_DT_FLOAT64) return "double";
  if (isfl(d)) return "float";
  if (d.code == TC_DT_BOOL) return "int";
  return tc_dtype_c_storage(d);
}
static const char *stype(tc_dtype d) { return tc_dtype_c_storage(d); }

static void round_to(tc_strbuf *sb, tc_dtype d, const char *val) {
  if (narrow(d)) tc_sb_printf(sb, "tcg_r_%s(%s)", dtname(d), val);
  else if (tc_dtype_is_int(d) && tc_dtype_bits(d) < 32) tc_sb_printf(sb, "((%s)(%s))", ctype(d), val);
  else tc_sb_puts(sb, val);
}

static void convert(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *val) {
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
      round_to(sb, to, tc_sb_cstr(&x));
      tc_sb_free(&x);
    } else {
      round_to(sb, to, t);
    }
  } else if (isfl(from)) {
    tc_sb_printf(sb, "tcg_f2%s((double)(%s))", dtname(to), val);
  } else {
    tc_sb_printf(sb, "((%s)(%s))", ctype(to), val);
  }
}

/* ---- names ---- */
static void var_name(cg *g, tc_strbuf *sb, const tc_var *v) {
  static const char axes[] = "xyz";
  switch (v->kind) {
  case TC_VAR_THREAD_IDX: tc_sb_printf(sb, "((int)threadIdx.%c)", axes[v->axis % 3]); return;
  case TC_VAR_BLOCK_IDX:
    if (v->axis == 3) tc_sb_puts(sb, "tcg_launch"); /* a kernel of several launches: the launch's number */
    else if (g->consumers) tc_sb_printf(sb, "tcg_b%c", axes[v->axis % 3]); /* a persistent block's tile */
    else if (g->k->swizzle_panel > 0 && g->k->swizzle_enable && v->axis < 2) tc_sb_printf(sb, "tcg_b%c", axes[v->axis]);
    else if (g->folds) tc_sb_printf(sb, "tcg_f%c", axes[v->axis % 3]);
    else tc_sb_printf(sb, "((int)blockIdx.%c)", axes[v->axis % 3]);
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
    tc_sb_puts(sb, "(int64_t)");
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
      tc_sb_puts(sb, " * (int64_t)");
      dim_text(g, sb, b, d);
      tc_sb_puts(sb, " + ");
    }
    tc_sb_puts(sb, "(int64_t)");
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
    tc_sb_puts(sb, d ? " && (uint32_t)" : "(uint32_t)");
    sub(g, sb, idx[d]);
    tc_sb_puts(sb, " < (uint32_t)");
    dim_text(g, sb, b, d);
  }
  tc_sb_putc(sb, ')');
}

/* raw: the stored code itself (a copy between buffers of one narrow dtype needs no decode) */
static void load_at(tc_strbuf *sb, const tc_buffer *b, const char *off, bool raw, const char *nan_acc) {
  tc_dtype d = b->dtype;
  tc_strbuf t;
  tc_sb_init(&t);
  buf_name(&t, b);
  if (narrow(d) && raw) tc_sb_printf(sb, "%s[%s]", tc_sb_cstr(&t), off);
  else if (nan_acc && raw_decoder(d)) tc_sb_printf(sb, "%s_chk(%s[%s], %s)", raw_decoder(d), tc_sb_cstr(&t), off, nan_acc);
  else if (narrow(d)) tc_sb_printf(sb, "tcg_%s_to_f32(%s[%s])", dtname(d), tc_sb_cstr(&t), off);
  else if (d.code == TC_DT_BOOL) tc_sb_printf(sb, "((int)(%s[%s] != 0))", tc_sb_cstr(&t), off);
  else tc_sb_printf(sb, "%s[%s]", tc_sb_cstr(&t), off);
  tc_sb_free(&t);
}

static void load(cg *g, tc_strbuf *sb, const tc_expr *e, bool raw) {
  const tc_buffer *b = e->buf;
  if (is4(b->dtype)) {
    fail(g, e->loc, "4-bit dtypes are not supported on cuda yet");
    return;
  }
  tc_strbuf off;
  tc_sb_init(&off);
  offset_text(g, &off, b, e->nargs, e->args);
  if (b->scope == TC_SCOPE_GLOBAL && !e->in_bounds) {
    tc_sb_puts(sb, "(");
    bounds_text(g, sb, b, e->nargs, e->args);
    tc_sb_puts(sb, " ? ");
    load_at(sb, b, tc_sb_cstr(&off), raw, g->nan_acc);
    tc_sb_printf(sb, " : (%s)0)", raw ? stype(b->dtype) : ctype(b->dtype)); /* code 0 is +0 in every narrow float */
  } else {
    load_at(sb, b, tc_sb_cstr(&off), raw, g->nan_acc);
  }
  tc_sb_free(&off);
}

static void const_float(tc_strbuf *sb, double v, tc_dtype d) {
  if (d.code == TC_DT_FLOAT64) {
    union { double d; uint64_t u; } x = {.d = v};
    tc_sb_printf(sb, "__longlong_as_double(0x%llxll)", (unsigned long long)x.u);
  } else {
    union { float f; uint32_t u; } x = {.f = (float)v};
    tc_sb_printf(sb, "__int_as_float(0x%x)", (unsigned)x.u);
  }
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

/* The kernel asked for fast math (pass_configs TL_ENABLE_FAST_MATH): the MUFU approximations,
 * as nvcc's --use_fast_math spells them (a few ulp; denormal inputs flush to zero). */
static const char *fast_fn(tc_expr_op op) {
  switch (op) {
  case TC_OP_EXP: return "__expf";
  case TC_OP_EXP2: return "tcg_fast_exp2f";
  case TC_OP_LOG: return "__logf";
  case TC_OP_LOG2: return "__log2f";
  case TC_OP_SIN: return "__sinf";
  case TC_OP_COS: return "__cosf";
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
  round_to(sb, e->dtype, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

static bool is_signed_int(tc_dtype d) { return tc_dtype_is_int(d) && tc_dtype_is_signed(d); }

/* reinterpret(x) (T.reinterpret), spelled as on the cpu (cfamily.c) with cuda's encoders. */
static void reinterpret(cg *g, tc_strbuf *sb, const tc_expr *e) {
  tc_dtype from = e->args[0]->dtype;
  tc_strbuf x, n;
  tc_sb_init(&x);
  tc_sb_init(&n);
  expr(g, &x, e->args[0]);
  if (narrow(from)) encode(g, &n, from, tc_sb_cstr(&x));
  tc_cf_reinterpret_text(sb, from, e->dtype, tc_sb_cstr(&x), tc_sb_cstr(&n), ctype(e->dtype));
  tc_sb_free(&x);
  tc_sb_free(&n);
}

static void expr(cg *g, tc_strbuf *sb, const tc_expr *e) {
  tc_dtype d = e->dtype;
  bool fl = isfl(d);
  switch (e->op) {
  case TC_OP_CONST_INT:
    if (tc_dtype_bits(d) > 32 || d.code == TC_DT_UINT32) tc_sb_printf(sb, "((%s)%lldll)", ctype(d), (long long)e->ival);
    else tc_sb_printf(sb, "%lld", (long long)e->ival);
    return;
  case TC_OP_CONST_FLOAT: const_float(sb, e->fval, d); return;
  case TC_OP_VAR: var_name(g, sb, e->var); return;
  case TC_OP_LOAD: load(g, sb, e, false); return;
  case TC_OP_CAST: {
    tc_strbuf t;
    tc_sb_init(&t);
    sub(g, &t, e->args[0]);
    convert(sb, e->args[0]->dtype, d, tc_sb_cstr(&t));
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
      tc_sb_puts(sb, "((((unsigned long long)");
      expr(g, sb, e->args[0]);
      tc_sb_puts(sb, ") & 15) == 0)");
      return;
    }
    if (e->callee && !strcmp(e->callee, "shfl_xor")) {
      tc_sb_puts(sb, "__shfl_xor_sync(0xffffffffu, ");
      expr(g, sb, e->args[0]);
      tc_sb_puts(sb, ", ");
      expr(g, sb, e->args[1]);
      tc_sb_puts(sb, ", ");
      expr(g, sb, e->args[2]);
      tc_sb_puts(sb, ")");
      return;
    }
    if (e->callee && !strcmp(e->callee, "reinterpret")) {
      reinterpret(g, sb, e);
      return;
    }
    if (e->callee && !strcmp(e->callee, "philox_rand") && e->nargs == 3) { /* T.rng_rand: philox.h */
      tc_strbuf a[3];
      const char *text[3];
      for (int i = 0; i < 3; i++) tc_sb_init(&a[i]), expr(g, &a[i], e->args[i]), text[i] = tc_sb_cstr(&a[i]);
      tc_cf_philox_text(sb, "uint64_t", text);
      for (int i = 0; i < 3; i++) tc_sb_free(&a[i]);
      return;
    }
    if (tc_intrinsic_construct(e->callee))
      fail(g, e->loc, "%s is not supported on cuda yet (it runs on the cpu target)", tc_intrinsic_construct(e->callee));
    else
      fail(g, e->loc, "intrinsic '%s' has no CUDA spelling", e->callee ? e->callee : "?");
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
      const char *u = tc_dtype_bits(d) > 32 ? "uint64_t" : "uint32_t";
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
      tc_sb_printf(sb, "((%s)((uint32_t)", ctype(d));
      sub(g, sb, e->args[0]);
      tc_sb_printf(sb, " %s %lldu))", e->op == TC_OP_FLOORDIV ? "/" : "%", (long long)e->args[1]->ival);
      return;
    }
    if (e->op == TC_OP_FLOORMOD) goto floormod;
    rounded(g, sb, e, fl ? (d.code == TC_DT_FLOAT64 ? "tcg_floordiv_d(" : "tcg_floordiv_f(") : tc_dtype_is_signed(d) ? "tcg_floordiv_i(" : "tcg_udiv(", ", ", ")");
    return;
  floormod:
    rounded(g, sb, e, fl ? (d.code == TC_DT_FLOAT64 ? "tcg_floormod_d(" : "tcg_floormod_f(") : tc_dtype_is_signed(d) ? "tcg_floormod_i(" : "tcg_umod(", ", ", ")");
    return;
  /* fast math: one FMNMX (which returns the number when one side is NaN) for the compare and select */
  case TC_OP_MIN: rounded(g, sb, e, fl ? (d.code == TC_DT_FLOAT64 ? "tcg_min_d(" : g->k->fast_math ? "fminf(" : "tcg_min_f(") : "tcg_min_i(", ", ", ")"); return;
  case TC_OP_MAX: rounded(g, sb, e, fl ? (d.code == TC_DT_FLOAT64 ? "tcg_max_d(" : g->k->fast_math ? "fmaxf(" : "tcg_max_f(") : "tcg_max_i(", ", ", ")"); return;
  case TC_OP_POW:
    if (fl) rounded(g, sb, e, d.code == TC_DT_FLOAT64 ? "pow(" : "powf(", ", ", ")");
    else rounded(g, sb, e, "tcg_ipow(", ", ", ")");
    return;
  case TC_OP_NEG:
    if (fl) rounded(g, sb, e, "(-", "", ")");
    else tc_sb_printf(sb, "((%s)(0 - (uint64_t)(", ctype(d)), expr(g, sb, e->args[0]), tc_sb_puts(sb, ")))");
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
    if (fl) rounded(g, sb, e, d.code == TC_DT_FLOAT64 ? "fabs(" : "fabsf(", "", ")");
    else tc_sb_printf(sb, "((%s)tcg_abs_i(", ctype(d)), expr(g, sb, e->args[0]), tc_sb_puts(sb, "))");
    return;
  case TC_OP_SIGMOID:
    if (d.code == TC_DT_FLOAT64) rounded(g, sb, e, "(1.0 / (1.0 + exp(-", "", ")))");
    else rounded(g, sb, e, "(1.0f / (1.0f + expf(-", "", ")))");
    return;
  default: {
    const char *fn = math_fn(e->op);
    if (!fn) {
      fail(g, e->loc, "expression `%s` has no CUDA spelling", tc_expr_op_name(e->op));
      return;
    }
    char pre[32];
    if (g->k->fast_math && d.code != TC_DT_FLOAT64 && fast_fn(e->op))
      snprintf(pre, sizeof pre, "%s(", fast_fn(e->op));
    else
      snprintf(pre, sizeof pre, "%s%s(", fn, d.code == TC_DT_FLOAT64 ? "" : "f");
    rounded(g, sb, e, pre, "", ")");
    return;
  }
  }
}

/* ---- statements ---- */
/* The printed coordinates "(int)(panel), (int)(group), (int)(lead)" of the box at global address
 * `at` (&buf[starts]) in the five dimensions of map `map`, whose panels are tc_tma_span bytes
 * wide; *row_form when the tensor's rows are not whole 8-row groups (the map counts single rows
 * then, runtime.c). */
static void tma_coords(cg *g, tc_strbuf *out, const tc_expr *at, int64_t map, bool *row_form) {
  const tc_buffer *b = at->buf;
  int nd = at->nargs, eb = tc_dtype_bits(b->dtype) / 8;
  int64_t cols = map >= 0 && map < g->k->ntma ? g->k->tma[map].cols : 128 / eb;
  int64_t A = tc_tma_span(cols, eb) / eb, R = 0;
  tc_loc loc = at->loc;
  tc_expr *lead = tc_ir_int(g->a, 0, tc_index_dtype(), loc);
  for (int d = 0; d + 2 < nd; d++)
    lead = tc_ir_binary(g->a, TC_OP_ADD, tc_ir_binary(g->a, TC_OP_MUL, lead, b->shape[d], loc), at->args[d], loc);
  tc_expr *panel = tc_ir_binary(g->a, TC_OP_FLOORDIV, at->args[nd - 1], tc_ir_int(g->a, A, tc_index_dtype(), loc), loc);
  *row_form = tc_expr_const_int(b->shape[nd - 2], &R) && R % 8 && R > 8; /* fewer rows: one group (runtime.c) */
  tc_expr *group = *row_form ? at->args[nd - 2] : tc_ir_binary(g->a, TC_OP_FLOORDIV, at->args[nd - 2], tc_ir_int(g->a, 8, tc_index_dtype(), loc), loc);
  tc_sb_puts(out, "(int)(");
  expr(g, out, panel);
  tc_sb_puts(out, "), (int)(");
  expr(g, out, group);
  tc_sb_puts(out, "), (int)(");
  expr(g, out, lead);
  tc_sb_puts(out, ")");
}

/* tma_load(&dst, &src[starts], &bar, rows, cols, map): the box's coordinates in the map's five
 * dimensions (tcg_tma.cuh): the panel, the 8-row group (the row in the row form), the
 * leading dimensions flattened; the lowering proved the starts are on a panel and a group. */
static void tma_load(cg *g, tc_expr *const *args) {
  int64_t map = 0;
  tc_expr_const_int(args[5], &map);
  bool row_form;
  tc_strbuf d, bar, c;
  tc_sb_init(&d), tc_sb_init(&bar), tc_sb_init(&c);
  expr(g, &d, args[0]);
  expr(g, &bar, args[2]);
  tma_coords(g, &c, args[1], map, &row_form);
  const struct tc_tma_map *m = map >= 0 && map < g->k->ntma ? &g->k->tma[map] : NULL;
  if (m && m->split > 1 && !row_form && g->in_producer) /* this block's share of the groups, to every block */
    line(g, "tcg_tma_load_multicast<%d, %lldu, %lld>(%s, &tcg_tm%lld, %s, %s);", m->split,
         (long long)(m->rows * m->cols * (tc_dtype_bits(args[1]->buf->dtype) / 8) / m->split), (long long)(m->rows / m->split / 8),
         tc_sb_cstr(&d), (long long)map, tc_sb_cstr(&bar), tc_sb_cstr(&c));
  else if (m && m->split > 1)
    fail(g, args[1]->loc, "internal: a split TMA map outside a warp-specialized producer");
  else
    line(g, "tcg_tma_load%s%s(%s, &tcg_tm%lld, %s, %s);", row_form ? "_rows" : "", g->in_producer ? "_any" : "", tc_sb_cstr(&d),
         (long long)map, tc_sb_cstr(&bar), tc_sb_cstr(&c));
  tc_sb_free(&d), tc_sb_free(&bar), tc_sb_free(&c);
}

/* tma_store(&src, &dst[starts], rows, cols, map): the box's coordinates as tma_load's. */
static void tma_store(cg *g, tc_expr *const *args) {
  int64_t map = 0;
  tc_expr_const_int(args[4], &map);
  bool row_form;
  tc_strbuf s, c;
  tc_sb_init(&s), tc_sb_init(&c);
  expr(g, &s, args[0]);
  tma_coords(g, &c, args[1], map, &row_form);
  line(g, "tcg_tma_store%s(%s, &tcg_tm%lld, %s);", row_form ? "_rows" : "", tc_sb_cstr(&s), (long long)map, tc_sb_cstr(&c));
  tc_sb_free(&s), tc_sb_free(&c);
}

/* copy_vec's element conversions, from tcg_g/tcg_r[k] to tcg_r/tcg_g[k]. raw: through the
 * raw conversions, each float value also kept in tcg_f<k> for the NaN check. */
static void copy_vec_elems(cg *g, tc_dtype xd, tc_dtype dd, int64_t n, bool load_side, bool raw) {
  for (int64_t k = 0; k < n; k++) {
    char from[64], to[64];
    snprintf(from, sizeof from, load_side ? "tcg_g[%lld]" : "tcg_r[%lld]", (long long)k);
    snprintf(to, sizeof to, load_side ? "tcg_r[%lld]" : "tcg_g[%lld]", (long long)k);
    tc_strbuf v, c;
    tc_sb_init(&v), tc_sb_init(&c);
    if (raw) {
      if (raw_decoder(xd)) tc_sb_printf(&v, "%s(%s)", raw_decoder(xd), from);
      else if (narrow(xd)) tc_sb_printf(&v, "tcg_%s_to_f32(%s)", dtname(xd), from);
      else tc_sb_puts(&v, from);
      line(g, "const float tcg_f%lld = %s;", (long long)k, tc_sb_cstr(&v));
      char f[32];
      snprintf(f, sizeof f, "tcg_f%lld", (long long)k);
      if (raw_encoder(dd)) tc_sb_printf(&c, "%s(%s)", raw_encoder(dd), f);
      else if (narrow(dd)) encode(g, &c, dd, f);
      else tc_sb_puts(&c, f);
    } else if (tc_dtype_eq(xd, dd)) {
      tc_sb_puts(&c, from);
    } else {
      if (narrow(xd)) tc_sb_printf(&v, "tcg_%s_to_f32(%s)", dtname(xd), from);
      else if (xd.code == TC_DT_BOOL) tc_sb_printf(&v, "((int)(%s != 0))", from);
      else tc_sb_puts(&v, from);
      tc_strbuf cv;
      tc_sb_init(&cv);
      if (narrow(dd) && isfl(xd)) tc_sb_printf(&cv, "(float)(%s)", tc_sb_cstr(&v)); /* the encoder rounds */
      else convert(&cv, xd, dd, tc_sb_cstr(&v));
      if (narrow(dd)) encode(g, &c, dd, tc_sb_cstr(&cv));
      else tc_sb_printf(&c, "(%s)(%s)", stype(dd), tc_sb_cstr(&cv));
      tc_sb_free(&cv);
    }
    line(g, "%s = %s;", to, tc_sb_cstr(&c));
    tc_sb_free(&v), tc_sb_free(&c);
  }
}

/* Whether copy_vec converts with the bare instructions (and a NaN check): a float16 / fp8
 * conversion to or from float32 (or bfloat16, whose decoding is exact and cheap). */
static bool copy_vec_raw(tc_dtype xd, tc_dtype dd) {
  return !tc_dtype_eq(xd, dd) && (raw_decoder(xd) || raw_encoder(dd)) &&
         (xd.code == TC_DT_FLOAT32 || raw_decoder(xd) || xd.code == TC_DT_BFLOAT16) &&
         (dd.code == TC_DT_FLOAT32 || raw_encoder(dd) || dd.code == TC_DT_BFLOAT16);
}

/* copy_vec(&dst, &src, n): the global side moves as one 4-, 8- or 16-byte vector, the
 * register side element by element, each converted as a T.copy converts (decode, cast,
 * encode; a copy within one narrow dtype moves the codes). */
static void copy_vec(cg *g, tc_expr *const *args) {
  const tc_expr *d = args[0], *x = args[1];
  const tc_buffer *db = d->buf, *xb = x->buf;
  int64_t n = 0;
  tc_expr_const_int(args[2], &n);
  bool load_side = xb->scope == TC_SCOPE_GLOBAL; /* global -> registers */
  const tc_buffer *gb = load_side ? xb : db;
  int bytes = (int)(n * (tc_dtype_bits(gb->dtype) / 8));
  const char *vt = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "unsigned";
  tc_strbuf da, xa;
  tc_sb_init(&da), tc_sb_init(&xa);
  expr(g, &da, d);
  expr(g, &xa, x);
  line(g, "{");
  g->ind++;
  if (load_side) line(g, "const %s tcg_v = *(const %s *)%s;", vt, vt, tc_sb_cstr(&xa));
  else line(g, "%s tcg_v;", vt);
  line(g, "%s%s *tcg_g = (%s%s *)&tcg_v;", load_side ? "const " : "", stype(gb->dtype), load_side ? "const " : "", stype(gb->dtype));
  line(g, "%s%s *tcg_r = %s;", load_side ? "" : "const ", stype(load_side ? db->dtype : xb->dtype), tc_sb_cstr(load_side ? &da : &xa));
  /* A group of float16 / fp8 conversions runs on the hardware instructions alone, which are
   * exact except for a NaN's payload or sign; one sum of the group's float values finds a NaN
   * (or an overflow, harmlessly), and then the group is converted again exactly. */
  bool raw = copy_vec_raw(xb->dtype, db->dtype) && !g->exact_rerun;
  copy_vec_elems(g, xb->dtype, db->dtype, n, load_side, raw);
  if (raw && g->nan_acc) { /* a run of groups (nan_deferred_run) checks once, after the run */
    for (int64_t k = 0; k < n; k++) line(g, "tcg_nan_note(tcg_f%lld, %s);", (long long)k, g->nan_acc);
  } else if (raw) {
    tc_strbuf sum;
    tc_sb_init(&sum);
    for (int64_t k = 0; k < n; k++) tc_sb_printf(&sum, "%stcg_f%lld", k ? " + " : "", (long long)k);
    line(g, "if (tcg_isnan(%s)) {", tc_sb_cstr(&sum));
    g->ind++;
    copy_vec_elems(g, xb->dtype, db->dtype, n, load_side, false);
    g->ind--;
    line(g, "}");
    tc_sb_free(&sum);
  }
  if (!load_side) line(g, "*(%s *)%s = tcg_v;", vt, tc_sb_cstr(&da));
  g->ind--;
  line(g, "}");
  tc_sb_free(&da), tc_sb_free(&xa);
}

static void store_text(cg *g, const tc_buffer *b, int n, tc_expr *const *idx, const tc_expr *value, bool in_bounds, tc_loc loc) {
  if (is4(b->dtype)) {
    fail(g, loc, "4-bit dtypes are not supported on cuda yet");
    return;
  }
  tc_strbuf off, val, name, conv;
  tc_sb_init(&off);
  tc_sb_init(&val);
  tc_sb_init(&name);
  tc_sb_init(&conv);
  offset_text(g, &off, b, n, idx);
  tc_dtype d = b->dtype;
  bool raw = narrow(d) && value->op == TC_OP_LOAD && tc_dtype_eq(value->dtype, d) && tc_dtype_eq(value->buf->dtype, d);
  if (raw) {
    load(g, &val, value, true);
  } else if (narrow(d) && value->op == TC_OP_CAST && tc_dtype_eq(value->dtype, d) && isfl(value->args[0]->dtype)) {
    /* The store's encoder rounds to d; rounding to d first (decode(encode(x))) would give the
     * same code, so skip it: a cast to float16 stored costs one cvt, not three conversions. */
    tc_sb_puts(&val, "(float)(");
    sub(g, &val, value->args[0]);
    tc_sb_puts(&val, ")");
  } else {
    expr(g, &val, value);
  }
  buf_name(&name, b);
  if (raw) tc_sb_puts(&conv, tc_sb_cstr(&val));
  else if (narrow(d)) encode(g, &conv, d, tc_sb_cstr(&val));
  else tc_sb_printf(&conv, "(%s)(%s)", stype(d), tc_sb_cstr(&val));
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

static void gemm_tag(tc_strbuf *sb, tc_dtype d) {
  switch (d.code) {
  case TC_DT_FLOAT16: tc_sb_puts(sb, "tcg_f16"); break;
  case TC_DT_BFLOAT16: tc_sb_puts(sb, "tcg_bf16"); break;
  case TC_DT_FLOAT8_E4M3FN: tc_sb_puts(sb, "tcg_e4m3"); break;
  case TC_DT_FLOAT8_E5M2: tc_sb_puts(sb, "tcg_e5m2"); break;
  case TC_DT_INT8: tc_sb_puts(sb, "tcg_i8"); break;
  case TC_DT_UINT8: tc_sb_puts(sb, "tcg_u8"); break;
  case TC_DT_FLOAT32: tc_sb_puts(sb, "tcg_f32"); break;
  case TC_DT_FLOAT64: tc_sb_puts(sb, "tcg_f64"); break;
  case TC_DT_INT32: tc_sb_puts(sb, "tcg_i32"); break;
  default: tc_sb_printf(sb, "tcg_dtype_%s", dtname(d)); break;
  }
}

/* Whether a statement writes shared tile b other than by TMA: stores, and the intrinsics whose
 * first argument is their destination (copy16, cp_async16, copy_vec). */
static bool written_by_threads(const tc_stmt *s, const tc_buffer *b) {
  if (!s) return false;
  switch (s->kind) {
  case TC_ST_STORE: return s->u.store.buf == b;
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (written_by_threads(s->u.seq.items[i], b)) return true;
    return false;
  case TC_ST_FOR: return written_by_threads(s->u.loop.body, b);
  case TC_ST_IF: return written_by_threads(s->u.if_.then_s, b) || written_by_threads(s->u.if_.else_s, b);
  case TC_ST_INTRINSIC: {
    const char *n = s->u.intrinsic.name;
    if (!strcmp(n, "tma_load") || !strncmp(n, "mbar_", 5) || !strcmp(n, "gemm_block") || s->u.intrinsic.nargs < 1) return false;
    const tc_expr *d = s->u.intrinsic.args[0];
    return d->op == TC_OP_ADDRESS_OF && d->buf == b;
  }
  default: return s->kind != TC_ST_LET && s->kind != TC_ST_ASSIGN && s->kind != TC_ST_ALLOC && s->kind != TC_ST_BARRIER &&
                  s->kind != TC_ST_EVALUATE && s->kind != TC_ST_ANNOTATE && s->kind != TC_ST_ASSERT; /* a tile op: say yes */
  }
}

/* Whether a wgmma that reads shared tile b needs fence.proxy.async before it: threads write b
 * somewhere, and not only outside a loop whose fence was hoisted. */
static bool thread_written_here(const cg *g, const tc_buffer *b) {
  if (!written_by_threads(g->k->body, b)) return false;
  return !g->fence_hoisted || written_by_threads(g->fence_hoisted, b);
}

/* Whether a warp-specialized loop's wgmma gemms read a shared tile that threads write, but only
 * outside the loop: then one fence.proxy.async before the barrier in front of the loop orders
 * every such write before the gemms, instead of a fence (a MEMBAR) at each of them. */
static bool hoisted_fence(const cg *g, const tc_stmt *s, const tc_stmt *loop) {
  if (!s) return false;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (hoisted_fence(g, s->u.seq.items[i], loop)) return true;
    return false;
  case TC_ST_FOR: return hoisted_fence(g, s->u.loop.body, loop);
  case TC_ST_IF: return hoisted_fence(g, s->u.if_.then_s, loop) || hoisted_fence(g, s->u.if_.else_s, loop);
  case TC_ST_INTRINSIC: {
    int64_t instr = -1;
    if (strcmp(s->u.intrinsic.name, "gemm_block") || s->u.intrinsic.nargs != 14 || !tc_expr_const_int(s->u.intrinsic.args[7], &instr) ||
        instr != 1)
      return false;
    for (int i = 10; i < 12; i++) {
      const tc_buffer *b = s->u.intrinsic.args[i]->buf;
      if (b && b->scope == TC_SCOPE_SHARED && written_by_threads(g->k->body, b) && !written_by_threads(loop, b)) return true;
    }
    return false;
  }
  default: return false;
  }
}

/* The wgmma path (prelude/tcg_wgmma.cuh): tcg_wgmma_ss / tcg_wgmma_rs and the instruction's
 * specialization, emitted once per shape. */
static void wgmma_call(cg *g, const int64_t *v, tc_expr *const *args) {
  const tc_buffer *A = args[10]->buf, *B = args[11]->buf;
  bool rs = A->scope == TC_SCOPE_LOCAL, bf16 = B->dtype.code == TC_DT_BFLOAT16;
  bool f8 = tc_gpu_wgmma_fp8(A->dtype); /* gemm.c took fp8 only K-major from shared memory */
  bool a5 = A->dtype.code == TC_DT_FLOAT8_E5M2, b5 = B->dtype.code == TC_DT_FLOAT8_E5M2;
  int64_t M = v[0], N = v[1], K = v[2];
  int ta = (int)v[5], tb = (int)v[6];
  char key[24];
  if (f8) snprintf(key, sizeof key, "%lldf%c%c", (long long)N, a5 ? '5' : '4', b5 ? '5' : '4');
  else snprintf(key, sizeof key, "%lld%c%c%d%d", (long long)N, bf16 ? 'b' : 'h', rs ? 'r' : 's', ta, tb);
  bool seen = false;
  for (int i = 0; i < g->nop_keys; i++) seen = seen || !strcmp(g->op_keys[i], key);
  if (!seen && g->nop_keys < 16) {
    snprintf(g->op_keys[g->nop_keys++], sizeof g->op_keys[0], "%s", key);
    if (f8) tc_cuda_wgmma_op_f8(g->ops, (int)N, a5, b5);
    else tc_cuda_wgmma_op(g->ops, (int)N, bf16, ta, !tb, rs);
  }
  /* columns of the stored tiles: A is M x K (K x M transposed), B K x N (N x K transposed) */
  int64_t acols = ta ? M : K, bcols = tb ? K : N;
  /* the template's last arguments, where they differ from their defaults (TURN 0, FENCE 1) */
  bool fence = (!rs && thread_written_here(g, A)) || thread_written_here(g, B);
  char turn[24] = "";
  if (g->turn_in_gemm || !fence) snprintf(turn, sizeof turn, ", %d%s", g->turn_in_gemm, fence ? "" : ", 0");
  tc_strbuf t, ea, eb, ec;
  tc_sb_init(&t), tc_sb_init(&ea), tc_sb_init(&eb), tc_sb_init(&ec);
  expr(g, &ea, args[10]);
  expr(g, &eb, args[11]);
  expr(g, &ec, args[12]);
  if (f8) /* every template argument spelled out: B's type is the last */
    line(g, "tcg_wgmma_ss<%lld, %lld, %lld, %lld, 0, 1, %lld, %lld, %s, %lld, %d, %d, %s>(%s, %s, %s);", (long long)M, (long long)N,
         (long long)K, (long long)v[3], (long long)acols, (long long)bcols, a5 ? "tcg_e5m2" : "tcg_e4m3", (long long)v[13],
         g->turn_in_gemm, fence ? 1 : 0, b5 ? "tcg_e5m2" : "tcg_e4m3", tc_sb_cstr(&ea), tc_sb_cstr(&eb), tc_sb_cstr(&ec));
  else if (rs)
    line(g, "tcg_wgmma_rs<%lld, %lld, %lld, %lld, %d, %lld, %s, %lld%s>((const uint16_t *)%s, %s, %s);", (long long)M, (long long)N,
         (long long)K, (long long)v[3], tb, (long long)bcols, bf16 ? "tcg_bf16" : "tcg_f16", (long long)v[13], turn, tc_sb_cstr(&ea),
         tc_sb_cstr(&eb), tc_sb_cstr(&ec));
  else
    line(g, "tcg_wgmma_ss<%lld, %lld, %lld, %lld, %d, %d, %lld, %lld, %s, %lld%s>(%s, %s, %s);", (long long)M, (long long)N,
         (long long)K, (long long)v[3], ta, tb, (long long)acols, (long long)bcols, bf16 ? "tcg_bf16" : "tcg_f16", (long long)v[13],
         turn, tc_sb_cstr(&ea), tc_sb_cstr(&eb), tc_sb_cstr(&ec));
  tc_sb_free(&t), tc_sb_free(&ea), tc_sb_free(&eb), tc_sb_free(&ec);
}

static void gemm_call(cg *g, tc_expr *const *args) {
  int64_t v[14] = {0};
  for (int i = 0; i < 10; i++) tc_expr_const_int(args[i], &v[i]);
  tc_expr_const_int(args[13], &v[13]);
  if (v[7] == TC_GPU_GEMM_WGMMA) {
    wgmma_call(g, v, args);
    return;
  }
  const tc_buffer *A = args[10]->buf, *B = args[11]->buf, *C = args[12]->buf;
  tc_strbuf t;
  tc_sb_init(&t);
  bool rs = A->scope == TC_SCOPE_LOCAL;
  tc_sb_printf(&t, "%s<%lld, %lld, %lld, %lld, %lld, %s, %s, %lld, %lld, ", rs ? "tcg_gemm_rs" : "tcg_gemm_ss", (long long)v[0],
               (long long)v[1], (long long)v[2], (long long)v[3], (long long)v[4], v[5] ? "true" : "false", v[6] ? "true" : "false",
               (long long)v[8], (long long)v[9]);
  gemm_tag(&t, A->dtype);
  tc_sb_puts(&t, ", ");
  gemm_tag(&t, B->dtype);
  tc_sb_puts(&t, ", ");
  gemm_tag(&t, C->dtype);
  tc_sb_puts(&t, ">(");
  expr(g, &t, args[10]);
  tc_sb_puts(&t, ", ");
  expr(g, &t, args[11]);
  tc_sb_puts(&t, ", ");
  expr(g, &t, args[12]);
  tc_sb_puts(&t, ");");
  line(g, "%s", tc_sb_cstr(&t));
  tc_sb_free(&t);
}

/* Where a shared tile goes in the dynamic shared memory, whose end *top moves past it. Tiles
 * of 1 KiB and more start on a 1 KiB boundary: the period of the 128-byte swizzle, which
 * wgmma's descriptors assume. */
static int64_t place_shared(int64_t *top, const tc_buffer *b, int64_t numel) {
  int64_t bytes = (int64_t)tc_dtype_storage_bytes(b->dtype, (size_t)numel);
  if (bytes >= 1024) *top = (*top + 1023) / 1024 * 1024;
  int64_t at = *top;
  *top += (bytes + 127) / 128 * 128;
  return at;
}

/* The shared memory of a warp-specialized kernel: its tiles, placed in the order tile_setup
 * prints them. */
static void ws_shared_bytes(const tc_stmt *s, int64_t *top) {
  if (!s) return;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) ws_shared_bytes(s->u.seq.items[i], top);
  else if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->scope == TC_SCOPE_SHARED && tc_buffer_numel(s->u.alloc.buf) >= 0)
    place_shared(top, s->u.alloc.buf, tc_buffer_numel(s->u.alloc.buf));
}

/* Registers a warp-specialized block's threads get at launch, and what setmaxnreg gives its
 * consumers once the producer warpgroup is down to 40: the SM's 65536 shared by its blocks. */
static int launch_regs(int T, int blocks) {
  int r = 65536 / blocks / (T + 128) / 8 * 8;
  return r > 255 ? 255 : r;
}
static int consumer_regs(int T, int blocks) {
  int r = (65536 / blocks - 128 * 40) / T / 8 * 8;
  return r > 240 ? 240 : r;
}

static void alloc(cg *g, const tc_buffer *b) {
  tc_strbuf n;
  tc_sb_init(&n);
  buf_name(&n, b);
  if (b->view_of && b->scope == TC_SCOPE_GLOBAL) { /* its own shape over its tensor's elements, row-major */
    tc_strbuf base;
    tc_sb_init(&base);
    buf_name(&base, b->view_of);
    line(g, "%s *%s = %s;", stype(b->dtype), tc_sb_cstr(&n), tc_sb_cstr(&base));
    tc_sb_free(&base);
    tc_sb_free(&n);
    return;
  }
  int64_t numel = tc_buffer_numel(b);
  if (numel < 0) {
    fail(g, b->loc, "buffer '%s' needs a constant size on cuda", b->name);
    tc_sb_free(&n);
    return;
  }
  if (b->scope == TC_SCOPE_SHARED) {
    int64_t at = b->smem_placed ? b->smem_at : place_shared(&g->smem, b, numel); /* placed by the lowering when tiles share memory */
    int64_t end = at + tc_gpu_tile_bytes(b->dtype, numel);
    if (end > g->smem) g->smem = end;
    line(g, "%s *%s = (%s *)(tcg_smem + %lld);", stype(b->dtype), tc_sb_cstr(&n), stype(b->dtype), (long long)at);
  } else {
    line(g, "%s %s[%lld];", stype(b->dtype), tc_sb_cstr(&n), (long long)(numel > 0 ? numel : 1));
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

/* ---- warp-specialized kernels: persistent blocks (pipeline.c, docs/cuda.md) ----
 * A kernel with a warp-specialized loop runs as a persistent kernel: the runtime launches
 * min(tiles, what fits on the device at once) blocks (meta persistent=1), and each block walks
 * the tiles (the logical grid, x fastest) from blockIdx.x in steps of gridDim.x. The producer
 * warpgroup and the consumers walk them independently: one producer thread issues the loads of
 * the next tile while the consumers store the last one, and both count the pipeline's
 * iterations across tiles (tcg_pipe), so a stage's mbarrier phases continue where they were. */
/* A loop's head, "for (...) {" (and its unroll pragma); the caller prints the body and "}". */
static void for_header(cg *g, const tc_stmt *s) {
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
      line(g, "for (int32_t %s = %s; %s < %s; %s++) {", tc_sb_cstr(&v), tc_sb_cstr(&mn), tc_sb_cstr(&v), tc_sb_cstr(&end), tc_sb_cstr(&v));
      tc_sb_free(&end);
    }
  tc_sb_free(&v), tc_sb_free(&mn), tc_sb_free(&ext);
}

static bool has_ws_loop(const tc_stmt *s) {
  if (!s) return false;
  if (s->kind == TC_ST_FOR && s->u.loop.ws_split) return true;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_ws_loop(s->u.seq.items[i])) return true;
  return false;
}

/* The LET c_pipe = k that begins a part of a warp-specialized loop (ir.h), or NULL. */
static const tc_stmt *count_let(const tc_stmt *loop, const tc_stmt *part) {
  const tc_stmt *first = part;
  while (first && first->kind == TC_ST_SEQ && first->u.seq.n > 0) first = first->u.seq.items[0];
  if (first && first->kind == TC_ST_LET && first->u.let.value->op == TC_OP_VAR && first->u.let.value->var == loop->u.loop.var)
    return first;
  return NULL;
}

/* A rotated consumer part (overlap.c), [LET c, IF(k == first, PRO, STEADY), IF(k == last, EPI)],
 * printed with the branches peeled off the loop:
 *   if (n > 0) { k = first: c, PRO;  for k in (first, last]: c, STEADY;  k = last: c, EPI } */
static void rotated_part(cg *g, const tc_stmt *loop, const tc_stmt *body) {
  const tc_stmt *pick = body->u.seq.items[1], *last = body->u.seq.items[2];
  tc_strbuf v, mn, ext;
  tc_sb_init(&v), tc_sb_init(&mn), tc_sb_init(&ext);
  var_name(g, &v, loop->u.loop.var);
  expr(g, &mn, loop->u.loop.min);
  expr(g, &ext, loop->u.loop.extent);
  tc_range_set_loop(&g->ranges, loop->u.loop.var, loop->u.loop.min, loop->u.loop.extent);
  const char *k = tc_sb_cstr(&v), *m = tc_sb_cstr(&mn), *n = tc_sb_cstr(&ext);
  line(g, "if ((%s) > 0) {", n);
  g->ind++;
  line(g, "{");
  g->ind++;
  line(g, "const int32_t %s = %s;", k, m);
  stmt(g, body->u.seq.items[0]);
  stmt(g, pick->u.if_.then_s);
  g->ind--;
  line(g, "}");
  line(g, "for (int32_t %s = (%s) + 1; %s < (%s) + (%s); %s++) {", k, m, k, m, n, k);
  g->ind++;
  stmt(g, body->u.seq.items[0]);
  stmt(g, pick->u.if_.else_s);
  g->ind--;
  line(g, "}");
  line(g, "{");
  g->ind++;
  line(g, "const int32_t %s = (%s) + (%s) - 1;", k, m, n);
  stmt(g, body->u.seq.items[0]);
  stmt(g, last->u.if_.then_s);
  g->ind--;
  line(g, "}");
  g->ind--;
  line(g, "}");
  tc_sb_free(&v), tc_sb_free(&mn), tc_sb_free(&ext);
}

/* One part of the warp-specialized loop, counting from tcg_pipe, which then moves past it. */
static void ws_part(cg *g, const tc_stmt *loop, int part) {
  const tc_stmt *body = loop->u.loop.body->u.seq.items[part];
  g->count_let = count_let(loop, body);
  if (!g->count_let) {
    fail(g, loop->loc, "internal: a warp-specialized loop part does not begin with its count");
    return;
  }
  g->in_producer = part == 0;
  g->sk_piece = g->sk && g->sk->loop == loop;
  if (part == 1 && loop->u.loop.ws_rotated) rotated_part(g, loop, body);
  else if (g->sk_piece) { /* this piece's iterations [tcg_k0, tcg_k1) of the tile's */
    tc_strbuf v, mn;
    tc_sb_init(&v), tc_sb_init(&mn);
    var_name(g, &v, loop->u.loop.var);
    expr(g, &mn, loop->u.loop.min);
    tc_range_set_loop(&g->ranges, loop->u.loop.var, loop->u.loop.min, NULL); /* from min up (tcg_k0 >= 0) */
    line(g, "for (int32_t %s = (%s) + tcg_k0; %s < (%s) + tcg_k1; %s++) {", tc_sb_cstr(&v), tc_sb_cstr(&mn), tc_sb_cstr(&v),
         tc_sb_cstr(&mn), tc_sb_cstr(&v));
    tc_sb_free(&v), tc_sb_free(&mn);
    g->ind++;
    stmt(g, body);
    g->ind--;
    line(g, "}");
  } else {
    for_header(g, loop);
    g->ind++;
    stmt(g, body);
    g->ind--;
    line(g, "}");
  }
  g->in_producer = false;
  if (g->sk_piece) {
    g->sk_piece = false;
    line(g, "tcg_pipe += tcg_k1 - tcg_k0;");
  } else {
    tc_strbuf ext;
    tc_sb_init(&ext);
    expr(g, &ext, loop->u.loop.extent);
    line(g, "tcg_pipe += %s;", tc_sb_cstr(&ext));
    tc_sb_free(&ext);
  }
  g->count_let = NULL;
}

/* Stream-K (streamk.c), after a piece's k loop in the consumers: a piece that stops before its
 * tile's end stores its partial sums and goes on to its next piece; a piece that ends a tile it
 * did not begin adds the sums of the blocks below, which ran the tile's earlier iterations
 * (tcg_sk_schedule), and goes on to the epilogue. */
static void streamk_handover(cg *g) {
  const tc_cuda_streamk *p = g->sk;
  const char *names[TC_CUDA_STREAMK_MAX_ACC];
  tc_strbuf nb[TC_CUDA_STREAMK_MAX_ACC];
  for (int a = 0; a < p->nacc; a++) {
    tc_sb_init(&nb[a]);
    buf_name(&nb[a], p->acc[a]);
    names[a] = tc_sb_cstr(&nb[a]);
  }
  line(g, "if (tcg_k1 != tcg_iters) { /* stream-K: a block above ends this tile: hand over the partial sums */");
  g->ind++;
  if (g->sk_wgmma) line(g, "tcg_wgmma_wait<0>();");
  tc_cuda_streamk_put(g->sb, g->ind, p, names);
  line(g, "tcg_sk_signal<%d>((unsigned *)tcg_sk_ws + blockIdx.x);", p->consumers);
  line(g, "continue;");
  g->ind--;
  line(g, "}");
  line(g, "if (tcg_k0 != 0) { /* stream-K: blocks below ran the tile's first iterations */");
  g->ind++;
  if (g->sk_wgmma) line(g, "tcg_wgmma_wait<0>();");
  line(g, "for (int tcg_below = (int)blockIdx.x - 1;; tcg_below--) {");
  g->ind++;
  line(g, "tcg_sk_wait<%d>((unsigned *)tcg_sk_ws + tcg_below);", p->consumers);
  tc_cuda_streamk_add(g->sb, g->ind, p, names);
  line(g, "if (!tcg_sk_shared_below(tcg_sk, tcg_below, tcg_tile, tcg_iters)) break;");
  g->ind--;
  line(g, "}");
  g->ind--;
  line(g, "}");
  for (int a = 0; a < p->nacc; a++) tc_sb_free(&nb[a]);
}

/* The body of one tile, for the producer thread (role 0: the top-level declarations and names,
 * which the loads may use, and the loop's producer part) or for the consumers (role 1: everything but the set-up of the
 * barriers, printed once before the tiles, and with the loop's consumer part). */
static bool nan_deferred_run(const tc_stmt *seq);
static void tile_body(cg *g, const tc_stmt *s, int role) {
  if (!s || g->failed) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    if (role == 1 && !g->nan_acc && !g->exact_rerun && nan_deferred_run(s)) { /* a run of copy groups: one NaN check */
      stmt(g, s);
      return;
    }
    for (int i = 0; i < s->u.seq.n; i++) {
      const tc_stmt *c = s->u.seq.items[i], *next = i + 1 < s->u.seq.n ? s->u.seq.items[i + 1] : NULL;
      if (role == 1 && c->kind == TC_ST_BARRIER && next && next->kind == TC_ST_FOR && next->u.loop.ws_split &&
          hoisted_fence(g, next, next)) {
        line(g, "tcg__fence_proxy_async(); /* the loop's wgmma operands threads wrote: one fence here, none at the gemms */");
        g->fence_hoisted = next;
      }
      tile_body(g, c, role);
    }
    return;
  case TC_ST_ALLOC:
    if (s->u.alloc.buf->scope != TC_SCOPE_SHARED) stmt(g, s); /* shared tiles: before the tiles */
    return;
  case TC_ST_LET:
  case TC_ST_ASSIGN: /* the producer computes every top-level name (pipeline.c refuses names assigned deeper) */
    stmt(g, s);
    return;
  case TC_ST_INTRINSIC:
    if (!strcmp(s->u.intrinsic.name, "mbar_init")) return; /* before the tiles */
    break;
  case TC_ST_FOR:
    if (s->u.loop.ws_split) {
      ws_part(g, s, role == 0 ? 0 : 1);
      g->fence_hoisted = NULL;
      if (role == 1 && g->sk && g->sk->loop == s) streamk_handover(g);
      return;
    }
    break;
  default: break;
  }
  if (role == 1) stmt(g, s);
}

/* What the tiles share: the shared tiles' addresses and the barriers' set-up. */
static void tile_setup(cg *g, const tc_stmt *s) {
  if (!s || g->failed) return;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) tile_setup(g, s->u.seq.items[i]);
  else if (s->kind == TC_ST_ALLOC && s->u.alloc.buf->scope == TC_SCOPE_SHARED) stmt(g, s);
  else if (s->kind == TC_ST_INTRINSIC && !strcmp(s->u.intrinsic.name, "mbar_init")) stmt(g, s);
}

/* T.use_swizzle's panel walk (inside a block): linear index `lin` over a grid of `fast` x
 * `slow` blocks (x fastest, or y for column order) -> tcg_bx, tcg_by (see rasterize()). */
static void panel_walk(cg *g, const char *panel, bool column, const char *lin, const char *fast, const char *slow) {
  line(g, "  const int p = %s / (%s * %s), in_p = %s %% (%s * %s);", lin, panel, fast, lin, panel, fast);
  line(g, "  const int h = min(%s, %s - p * %s);", panel, slow, panel);
  line(g, "  tcg_b%s = in_p / h;", column ? "y" : "x");
  line(g, "  tcg_b%s = p * %s + in_p %% h;", column ? "x" : "y", panel);
}

/* tcg_panel: the persistent walk's panels, as high (along `extent`) as make a wave read the
 * least (walk.c); nothing when the walk keeps T.use_swizzle's panel_size. */
static void wave_panel(cg *g, const char *extent) {
  if (g->wave_own > 0)
    line(g, "const int tcg_panel = tcg_wave_panel((int)gridDim.x, %lldLL, %lldLL, %s);", (long long)g->wave_own,
         (long long)g->wave_other, extent);
}

/* The tile loop's head in clusters (pipeline.c's cluster_pick): cluster c = blockIdx.x / C
 * (a one-dimensional grid's clusters are runs of C consecutive blocks) walks the groups of C
 * tiles of consecutive grid-y indices, as the plain walk walks tiles over a grid C times
 * shorter in y; the block of rank r takes the group's r-th tile. T.use_swizzle's row panels
 * keep their height in tiles. */
static void cluster_loop_head(cg *g) {
  const tc_kernel_ir *k = g->k;
  int C = k->cluster;
  line(g, "const int tcg_rank = (int)blockIdx.x %% %d, tcg_gyc = tcg_gy / %d;", C, C);
  wave_panel(g, k->swizzle_order != TC_SWIZZLE_ROW ? "tcg_gx" : "tcg_gyc");
  line(g, "for (int tcg_group = (int)blockIdx.x / %d; tcg_group < tcg_tiles / %d; tcg_group += (int)gridDim.x / %d) {", C, C, C);
  g->ind++;
  line(g, "const int tcg_lin = tcg_group %% (tcg_gx * tcg_gyc), tcg_bz = tcg_group / (tcg_gx * tcg_gyc);");
  line(g, "int tcg_bx, tcg_by;");
  if (k->swizzle_panel > 0 && k->swizzle_enable) {
    bool column = k->swizzle_order != TC_SWIZZLE_ROW;
    char panel[24];
    snprintf(panel, sizeof panel, "%d", column ? k->swizzle_panel : (k->swizzle_panel + C - 1) / C);
    line(g, "{");
    panel_walk(g, g->wave_own > 0 ? "tcg_panel" : panel, column, "tcg_lin", column ? "tcg_gyc" : "tcg_gx", column ? "tcg_gx" : "tcg_gyc");
    line(g, "}");
  } else {
    line(g, "tcg_bx = tcg_lin %% tcg_gx;");
    line(g, "tcg_by = tcg_lin / tcg_gx;");
  }
  line(g, "tcg_by = tcg_by * %d + tcg_rank;", C);
  line(g, "(void)tcg_bx, (void)tcg_by, (void)tcg_bz;");
}

/* The tile loop's head: tile -> (tcg_bx, tcg_by, tcg_bz), with T.use_swizzle's panels. */
static void tile_loop_head(cg *g) {
  const tc_kernel_ir *k = g->k;
  if (k->cluster > 1) {
    cluster_loop_head(g);
    return;
  }
  bool column = k->swizzle_order != TC_SWIZZLE_ROW;
  const char *fast = column ? "tcg_gy" : "tcg_gx", *slow = column ? "tcg_gx" : "tcg_gy";
  wave_panel(g, slow);
  if (g->sk) { /* whole tiles first, then this block's stream-K range (tcg_sk_schedule) */
    line(g, "for (int tcg_next = (int)blockIdx.x;; tcg_next += (int)gridDim.x) {");
    g->ind++;
    line(g, "int tcg_tile = tcg_next, tcg_k0 = 0, tcg_k1 = tcg_iters;");
    line(g, "if (tcg_next >= tcg_sk.dp && !tcg_sk_piece(tcg_sk, tcg_iters, tcg_tile, tcg_k0, tcg_k1)) break;");
  } else {
    line(g, "for (int tcg_tile = (int)blockIdx.x; tcg_tile < tcg_tiles; tcg_tile += (int)gridDim.x) {");
    g->ind++;
  }
  line(g, "const int tcg_lin = tcg_tile %% (tcg_gx * tcg_gy), tcg_bz = tcg_tile / (tcg_gx * tcg_gy);");
  line(g, "int tcg_bx, tcg_by;");
  if (k->swizzle_panel > 0 && k->swizzle_enable) {
    /* panels of `panel` rows (or columns), walked in order, as rasterize() does for a grid */
    char panel[24];
    snprintf(panel, sizeof panel, "%d", k->swizzle_panel);
    line(g, "{");
    panel_walk(g, g->wave_own > 0 ? "tcg_panel" : panel, column, "tcg_lin", fast, slow);
    line(g, "}");
  } else {
    line(g, "tcg_bx = tcg_lin %% tcg_gx;");
    line(g, "tcg_by = tcg_lin / tcg_gx;");
  }
  line(g, "(void)tcg_bx, (void)tcg_by, (void)tcg_bz;");
}

/* Whether an expression is the same in every tile: constants, symbolic dims and scalar
 * parameters, through the top-level LETs of `body`. */
static bool same_every_tile(const tc_stmt *body, const tc_expr *e, int depth) {
  if (!e || depth > 8) return false;
  if (e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF || e->op == TC_OP_CALL) return false;
  if (e->op == TC_OP_VAR) {
    if (e->var->kind == TC_VAR_SYMBOLIC || e->var->kind == TC_VAR_PARAM) return true;
    const tc_stmt *let = tc_cuda_find_let(body, e->var);
    return let && same_every_tile(body, let->u.let.value, depth + 1);
  }
  for (int i = 0; i < e->nargs; i++)
    if (!same_every_tile(body, e->args[i], depth)) return false;
  return true;
}
static const tc_stmt *find_ws_loop(const tc_stmt *s) {
  if (!s) return NULL;
  if (s->kind == TC_ST_FOR && s->u.loop.ws_split) return s;
  if (s->kind == TC_ST_SEQ)
    for (int i = 0; i < s->u.seq.n; i++) {
      const tc_stmt *f = find_ws_loop(s->u.seq.items[i]);
      if (f) return f;
    }
  return NULL;
}

/* e with the top-level LETs of `body` it names replaced by their values (same_every_tile holds),
 * for use before the tiles' code declares them. */
static tc_expr *inline_lets(cg *g, const tc_stmt *body, const tc_expr *e, int depth) {
  if (e->op == TC_OP_VAR) {
    const tc_stmt *let = e->var->kind == TC_VAR_LOCAL && depth < 8 ? tc_cuda_find_let(body, e->var) : NULL;
    return let ? inline_lets(g, body, let->u.let.value, depth + 1) : tc_ir_clone_expr(g->a, e);
  }
  tc_expr *c = tc_ir_clone_expr(g->a, e);
  for (int i = 0; i < c->nargs; i++) c->args[i] = inline_lets(g, body, e->args[i], depth);
  return c;
}

static bool is_wgmma_gemm(const tc_stmt *s) {
  int64_t instr = -1;
  return s->kind == TC_ST_INTRINSIC && !strcmp(s->u.intrinsic.name, "gemm_block") && s->u.intrinsic.nargs == 14 &&
         tc_expr_const_int(s->u.intrinsic.args[7], &instr) && instr == 1;
}

/* Whether an intrinsic statement in s (through sequences, loops and ifs) satisfies `is`. */
static bool some_intrinsic(const tc_stmt *s, bool (*is)(const tc_stmt *, const char *), const char *arg) {
  if (!s) return false;
  switch (s->kind) {
  case TC_ST_INTRINSIC: return is(s, arg);
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (some_intrinsic(s->u.seq.items[i], is, arg)) return true;
    return false;
  case TC_ST_FOR: return some_intrinsic(s->u.loop.body, is, arg);
  case TC_ST_IF: return some_intrinsic(s->u.if_.then_s, is, arg) || some_intrinsic(s->u.if_.else_s, is, arg);
  default: return false;
  }
}
static bool named(const tc_stmt *s, const char *name) { return !strcmp(s->u.intrinsic.name, name); }
static bool uses_intrinsic(const tc_stmt *s, const char *name) { return some_intrinsic(s, named, name); }
static bool wgmma_gemm(const tc_stmt *s, const char *unused) { return (void)unused, is_wgmma_gemm(s); }

/* What every thread does last: wait for its TMA stores (the shared tiles must outlive them),
 * and, in a cluster, meet the partner, which may still arrive on this block's barriers. */
static void kernel_end(cg *g) {
  if (uses_intrinsic(g->k->body, "tma_store")) line(g, "tcg_tma_store_wait<0>(); /* the shared tiles live until the stores are done */");
  if (g->k->cluster > 1) line(g, "tcg_cluster_sync();");
}

/* const int tcg_gx, tcg_gy, tcg_gz: the grid as the kernel wrote it, from its parameters. */
static void logical_grid(cg *g) {
  const tc_kernel_ir *k = g->k;
  tc_strbuf gd[3];
  for (int i = 0; i < 3; i++) {
    tc_sb_init(&gd[i]);
    if (i < k->grid_ndim) expr(g, &gd[i], k->grid[i]);
    else tc_sb_puts(&gd[i], "1");
  }
  line(g, "const int tcg_gx = (int)(%s), tcg_gy = (int)(%s), tcg_gz = (int)(%s);", tc_sb_cstr(&gd[0]), tc_sb_cstr(&gd[1]),
       tc_sb_cstr(&gd[2]));
  for (int i = 0; i < 3; i++) tc_sb_free(&gd[i]);
}

static void persistent_body(cg *g) {
  const tc_kernel_ir *k = g->k;
  int T = g->consumers;
  logical_grid(g);
  line(g, "const int tcg_tiles = tcg_gx * tcg_gy * tcg_gz;");
  if (g->sk) {
    tc_strbuf it;
    tc_sb_init(&it);
    expr(g, &it, inline_lets(g, k->body, g->sk->loop->u.loop.extent, 0));
    line(g, "const int tcg_iters = (int)(%s);", tc_sb_cstr(&it));
    tc_sb_free(&it);
    line(g, "tcg_sk_walk tcg_sk = tcg_sk_schedule(tcg_tiles, tcg_iters);");
  }
  tile_setup(g, k->body);
  /* clusters: the partner's first loads and arrivals land on barriers made here */
  line(g, k->cluster > 1 ? "tcg_cluster_sync();" : "__syncthreads();");
  /* registers: the launch bound gives each thread 65536 / blocks / (T + 128), rounded down to
   * 8; the producers keep 40 and the consumers share the rest (at most 240 each). Where the
   * launch bound already allows that much (one block of 256 threads), nothing moves. */
  int inc = consumer_regs(T, g->blocks_per_sm);
  bool realloc = launch_regs(T, g->blocks_per_sm) < inc;
  line(g, "if ((int)threadIdx.x >= %d) {", T);
  g->ind++;
  if (realloc) line(g, "tcg_setmaxnreg_dec<40>();");
  line(g, "if ((int)threadIdx.x == %d) {", T);
  g->ind++;
  line(g, "int tcg_pipe = 0;");
  tile_loop_head(g);
  tile_body(g, k->body, 0);
  g->ind--;
  line(g, "}");
  g->ind--;
  line(g, "}");
  if (k->cluster > 1) line(g, "tcg_cluster_sync(); /* the partner may still arrive on this block's barriers */");
  line(g, "return;");
  g->ind--;
  line(g, "}");
  if (realloc) line(g, "tcg_setmaxnreg_inc<%d>();", inc);
  if (uses_intrinsic(k->body, "wg_turn_wait")) line(g, "tcg_wg_turn_init<%d>(); /* the first turn is warpgroup 0's */", T / 128);
  line(g, "int tcg_pipe = 0;");
  tile_loop_head(g);
  g->in_consumer_tile = true;
  tile_body(g, k->body, 1);
  g->in_consumer_tile = false;
  if (!g->free_consumers) line(g, "tcg_bar_consumers<%d>(); /* the tile's shared memory is free for the next */", T);
  g->ind--;
  line(g, "}");
  kernel_end(g);
}

/* ---- NaN-deferred loops ----
 * The exact float16 / fp8 conversions cost four to seven instructions besides the cvt, for
 * the NaN rules (payload, sign) alone. A loop whose body only stores values computed from
 * buffers it does not write runs first with the bare instructions, noting any NaN or inf met
 * by a conversion (fma(x, 0, note)); when the note is NaN the loop runs again with the exact
 * conversions, and its stores overwrite the first pass's. Same results, and per element the
 * note's one fma instead of the NaN rules. */
typedef struct defer_scan {
  bool ok, conv;
  const tc_buffer *written[16];
  int nw;
} defer_scan;

static bool defer_stmt_cb(void *ctx, tc_stmt *s) {
  defer_scan *d = ctx;
  switch (s->kind) {
  case TC_ST_SEQ:
  case TC_ST_FOR:
  case TC_ST_IF:
  case TC_ST_LET: return true;
  case TC_ST_STORE:
    if (d->nw == 16) d->ok = false;
    else d->written[d->nw++] = s->u.store.buf;
    if (raw_encoder(s->u.store.buf->dtype) && !(s->u.store.value->op == TC_OP_LOAD && tc_dtype_eq(s->u.store.value->buf->dtype, s->u.store.buf->dtype)))
      d->conv = true;
    return true;
  default: d->ok = false; return false;
  }
}

static tc_expr *defer_expr_cb(void *ctx, tc_expr *e) {
  defer_scan *d = ctx;
  if (e->op == TC_OP_CALL || e->op == TC_OP_ADDRESS_OF) d->ok = false;
  if (e->op == TC_OP_LOAD) {
    for (int i = 0; i < d->nw; i++)
      if (d->written[i] == e->buf) d->ok = false;
    if (raw_decoder(e->buf->dtype)) d->conv = true;
  }
  return e;
}

static bool nan_deferred(const tc_stmt *loop) {
  defer_scan d = {.ok = true};
  tc_stmt *body = (tc_stmt *)loop->u.loop.body; /* read only: the callbacks change nothing */
  tc_visit_stmts(body, defer_stmt_cb, &d);
  if (!d.ok || !d.conv) return false;
  tc_rewrite_stmt_exprs(body, defer_expr_cb, &d);
  return d.ok;
}

/* A copy_vec statement, alone or under the guard of its group (IF without ELSE), or NULL. */
static const tc_stmt *guarded_copy_vec(const tc_stmt *s) {
  if (s && s->kind == TC_ST_IF && !s->u.if_.else_s) s = s->u.if_.then_s;
  return s && s->kind == TC_ST_INTRINSIC && !strcmp(s->u.intrinsic.name, "copy_vec") ? s : NULL;
}

/* A sequence of a tile copy's vector groups (tileops.c's vector_frag_copy) that convert with the
 * bare instructions. Each group's own NaN check is short enough that ptxas predicates its exact
 * rerun, which then costs every time; one check after the whole run is a real branch. One
 * source and one destination buffer, distinct, so a rerun reads what the first pass read. */
static bool nan_deferred_run(const tc_stmt *seq) {
  if (seq->u.seq.n < 2) return false;
  const tc_buffer *src = NULL, *dst = NULL;
  for (int i = 0; i < seq->u.seq.n; i++) {
    const tc_stmt *c = guarded_copy_vec(seq->u.seq.items[i]);
    if (!c) return false;
    const tc_buffer *d = c->u.intrinsic.args[0]->buf, *x = c->u.intrinsic.args[1]->buf;
    if (!d || !x || d == x || !copy_vec_raw(x->dtype, d->dtype) || (src && (src != x || dst != d))) return false;
    src = x, dst = d;
  }
  return true;
}

/* A FOR or SEQ printed as it stands, without the NaN deferral stmt() would try first. */
static void plain_stmt(cg *g, const tc_stmt *s) {
  if (s->kind == TC_ST_SEQ) {
    stmt(g, s); /* stmt() defers a SEQ only when no note is open and not in a rerun */
    return;
  }
  for_header(g, s);
  g->ind++;
  stmt(g, s->u.loop.body);
  g->ind--;
  line(g, "}");
}

/* Prints a NaN-deferred loop (nan_deferred) or run of copy groups (nan_deferred_run). */
static void nan_deferred_loop(cg *g, const tc_stmt *s) {
  char acc[32];
  snprintf(acc, sizeof acc, "tcg_nan%d", g->nnan++);
  line(g, "float %s = 0.0f;", acc);
  g->nan_acc = acc;
  plain_stmt(g, s);
  g->nan_acc = NULL;
  line(g, "if (tcg_isnan(%s)) { /* a NaN or inf met a bare conversion: again, exactly */", acc);
  g->ind++;
  /* read the sources again instead of keeping the first pass's loads alive through it */
  line(g, "asm volatile(\"\" ::: \"memory\");");
  bool was = g->exact_rerun;
  g->exact_rerun = true;
  plain_stmt(g, s);
  g->exact_rerun = was;
  g->ind--;
  line(g, "}");
}

static void stmt(cg *g, const tc_stmt *s) {
  if (!s || g->failed) return;
  tc_strbuf t;
  tc_sb_init(&t);
  switch (s->kind) {
  case TC_ST_SEQ:
    if (!g->nan_acc && !g->exact_rerun && nan_deferred_run(s)) {
      nan_deferred_loop(g, s);
      break;
    }
    for (int i = 0; i < s->u.seq.n; i++) {
      const tc_stmt *c = s->u.seq.items[i], *next = i + 1 < s->u.seq.n ? s->u.seq.items[i + 1] : NULL;
      if (next && is_wgmma_gemm(c) && next->kind == TC_ST_INTRINSIC && !strcmp(next->u.intrinsic.name, "wg_turn_pass")) {
        /* the turn passes once the gemm is issued, before its result is awaited (pingpong.c) */
        g->turn_in_gemm = g->consumers / 128;
        stmt(g, c);
        g->turn_in_gemm = 0;
        i++;
        continue;
      }
      stmt(g, c);
    }
    break;
  case TC_ST_ALLOC: alloc(g, s->u.alloc.buf); break;
  case TC_ST_FOR:
    if (!g->nan_acc && !g->exact_rerun && nan_deferred(s)) nan_deferred_loop(g, s);
    else plain_stmt(g, s);
    break;
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
    if (s == g->count_let) {
      tc_range_set(&g->ranges, s->u.let.var, (tc_int_range){0, INT32_MAX, true});
      if (g->sk_piece) /* a stream-K piece starts at iteration tcg_k0 of its tile; the count runs on */
        line(g, "%s %s = tcg_pipe + (%s - tcg_k0);", ctype(s->u.let.var->dtype), tc_sb_cstr(&v), tc_sb_cstr(&t));
      else
        line(g, "%s %s = tcg_pipe + %s;", ctype(s->u.let.var->dtype), tc_sb_cstr(&v), tc_sb_cstr(&t));
    } else if (s->kind == TC_ST_LET) {
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
    if (g->consumers && s->u.barrier.scope == TC_BARRIER_BLOCK) {
      if (!(g->free_consumers && g->in_consumer_tile)) line(g, "tcg_bar_consumers<%d>();", g->consumers);
    }
    else line(g, "__syncthreads();");
    break;
  case TC_ST_EVALUATE:
    expr(g, &t, s->u.evaluate.value);
    line(g, "(void)(%s);", tc_sb_cstr(&t));
    break;
  case TC_ST_INTRINSIC:
    if (!strcmp(s->u.intrinsic.name, "gemm_block")) {
      gemm_call(g, s->u.intrinsic.args);
    } else if (!strcmp(s->u.intrinsic.name, "copy16") || !strcmp(s->u.intrinsic.name, "cp_async16")) {
      tc_strbuf d, x;
      tc_sb_init(&d), tc_sb_init(&x);
      expr(g, &d, s->u.intrinsic.args[0]);
      expr(g, &x, s->u.intrinsic.args[1]);
      if (s->u.intrinsic.name[1] == 'o') line(g, "*(uint4 *)%s = *(const uint4 *)%s;", tc_sb_cstr(&d), tc_sb_cstr(&x));
      else line(g, "tcg_cp_async<16>(%s, %s);", tc_sb_cstr(&d), tc_sb_cstr(&x));
      tc_sb_free(&d), tc_sb_free(&x);
    } else if (!strcmp(s->u.intrinsic.name, "tma_load")) {
      tma_load(g, s->u.intrinsic.args);
    } else if (!strcmp(s->u.intrinsic.name, "tma_store")) {
      tma_store(g, s->u.intrinsic.args);
    } else if (!strcmp(s->u.intrinsic.name, "tma_store_wait")) {
      int64_t nw = 0, reads = 0;
      tc_expr_const_int(s->u.intrinsic.args[0], &nw);
      tc_expr_const_int(s->u.intrinsic.args[1], &reads);
      line(g, "tcg_tma_store_wait%s<%lld>();", reads ? "_read" : "", (long long)nw);
    } else if (!strcmp(s->u.intrinsic.name, "fence_async_shared")) {
      line(g, "tcg_fence_async_shared();");
    } else if (!strncmp(s->u.intrinsic.name, "mbar_", 5)) {
      const char *op = s->u.intrinsic.name + 5;
      tc_strbuf b, x, y;
      tc_sb_init(&b), tc_sb_init(&x), tc_sb_init(&y);
      expr(g, &b, s->u.intrinsic.args[0]);
      if (s->u.intrinsic.nargs > 1) expr(g, &x, s->u.intrinsic.args[1]);
      if (s->u.intrinsic.nargs > 2) expr(g, &y, s->u.intrinsic.args[2]);
      if (!strcmp(op, "init")) line(g, "tcg_mbar_init(%s, (int)(%s), (int)(%s));", tc_sb_cstr(&b), tc_sb_cstr(&x), tc_sb_cstr(&y));
      else if (!strcmp(op, "arrive_warp")) line(g, "tcg_mbar_arrive_warp(%s);", tc_sb_cstr(&b));
      else if (!strcmp(op, "arrive_cluster")) line(g, "tcg_mbar_arrive_cluster<%d>(%s);", g->k->cluster, tc_sb_cstr(&b));
      else line(g, "tcg_mbar_%s%s(%s, (uint32_t)(%s));", op, g->in_producer && !strcmp(op, "expect") ? "_any" : "", tc_sb_cstr(&b),
                tc_sb_cstr(&x));
      tc_sb_free(&b), tc_sb_free(&x), tc_sb_free(&y);
    } else if (!strcmp(s->u.intrinsic.name, "copy_vec")) {
      copy_vec(g, s->u.intrinsic.args);
    } else if (!strcmp(s->u.intrinsic.name, "cp_async_commit")) {
      line(g, "tcg_cp_async_commit();");
    } else if (!strcmp(s->u.intrinsic.name, "cp_async_wait")) {
      int64_t nw = 0;
      tc_expr_const_int(s->u.intrinsic.args[0], &nw);
      line(g, "tcg_cp_async_wait<%lld>();", (long long)nw);
    }
    else if (!strcmp(s->u.intrinsic.name, "warp_sync")) line(g, "__syncwarp();");
    else if (!strcmp(s->u.intrinsic.name, "wg_turn_wait")) line(g, "tcg_wg_turn_wait();");
    else if (!strcmp(s->u.intrinsic.name, "wg_turn_pass")) line(g, "tcg_wg_turn_pass<%d>();", g->consumers / 128);
    else if (!strcmp(s->u.intrinsic.name, "wgmma_wait")) {
      int64_t nw = 0;
      tc_expr_const_int(s->u.intrinsic.args[0], &nw);
      line(g, "tcg_wgmma_wait<%lld>();", (long long)nw);
    }
    else fail(g, s->loc, "intrinsic '%s' has no CUDA spelling", s->u.intrinsic.name);
    break;
  case TC_ST_ATOMIC_ADD: {
    const tc_buffer *b = s->u.atomic.buf;
    if (!b || is4(b->dtype)) {
      fail(g, s->loc, "this T.atomic_add is not supported on cuda yet");
      break;
    }
    tc_strbuf off, val, name, bd, prev;
    tc_sb_init(&off), tc_sb_init(&val), tc_sb_init(&name), tc_sb_init(&bd), tc_sb_init(&prev);
    /* return_prev: the thread's cell receives the element before its addition (for narrow
     * floats the storage bits, which is how the cell holds them too) */
    if (s->u.atomic.prev) {
      buf_name(&prev, s->u.atomic.prev);
      tc_sb_puts(&prev, "[0] = ");
    }
    offset_text(g, &off, b, s->u.atomic.nidx, s->u.atomic.idx);
    expr(g, &val, s->u.atomic.value);
    buf_name(&name, b);
    if (b->scope == TC_SCOPE_GLOBAL) bounds_text(g, &bd, b, s->u.atomic.nidx, s->u.atomic.idx);
    else tc_sb_puts(&bd, "(1)");
    line(g, "if %s %stcg_atomic_add_%s(%s, %s, %s);", tc_sb_cstr(&bd), tc_sb_cstr(&prev), dtname(b->dtype), tc_sb_cstr(&name),
         tc_sb_cstr(&off), tc_sb_cstr(&val));
    tc_sb_free(&off), tc_sb_free(&val), tc_sb_free(&name), tc_sb_free(&bd), tc_sb_free(&prev);
    break;
  }
  case TC_ST_ASSERT: {
    /* the GPU traps; the emulator reports the message as the cpu does (tcg_assert_fail) */
    tc_strbuf msg;
    tc_sb_init(&msg);
    tc_sb_putc(&msg, '"');
    for (const char *p = s->u.assert_.msg ? s->u.assert_.msg : "assertion failed"; *p; p++) {
      unsigned char c = (unsigned char)*p;
      if (c == '"' || c == '\\') tc_sb_printf(&msg, "\\%c", c);
      else if (c < 32 || c > 126 || c == '?') tc_sb_printf(&msg, "\\%03o", c);
      else tc_sb_putc(&msg, (char)c);
    }
    tc_sb_putc(&msg, '"');
    expr(g, &t, s->u.assert_.cond);
    line(g, "if (!(%s)) tcg_assert_fail(%s);", tc_sb_cstr(&t), tc_sb_cstr(&msg));
    tc_sb_free(&msg);
    g->nasserts++;
    break;
  }
  case TC_ST_PRINT:
    if (s->u.print.value) {
      expr(g, &t, s->u.print.value);
      line(g, "printf(\"%%s %%g\\n\", \"%s\", (double)(%s));", s->u.print.msg ? "" : "", tc_sb_cstr(&t));
    }
    break;
  case TC_ST_ANNOTATE:
    break;
  default:
    fail(g, s->loc, "statement `%s` has no CUDA spelling", tc_stmt_kind_name(s->kind));
  }
  tc_sb_free(&t);
}

/* Helpers every kernel may use; the dtype conversions come from the shared prelude. */
static const char cuda_helpers[] =
    /* cuRAND's Philox4_32_10 (T.rng_rand; src/ir/philox.h) */
    TC_PHILOX_CUDA_TEXT
    /* bit casts of float32/float64 (T.reinterpret, cfamily.c's spelling) */
    "static __device__ __forceinline__ uint32_t tcg_bits_f32(float x) { return __float_as_uint(x); }\n"
    "static __device__ __forceinline__ uint64_t tcg_bits_f64(double x) { return (uint64_t)__double_as_longlong(x); }\n"
    "static __device__ __forceinline__ float tcg_f32_bits(uint32_t b) { return __uint_as_float(b); }\n"
    "static __device__ __forceinline__ double tcg_f64_bits(uint64_t b) { return __longlong_as_double((long long)b); }\n"
    "static __device__ __forceinline__ int64_t tcg_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; }\n"
    "static __device__ __forceinline__ uint64_t tcg_udiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }\n"
    "static __device__ __forceinline__ uint64_t tcg_umod(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }\n"
    "static __device__ __forceinline__ int64_t tcg_floordiv_i(int64_t a, int64_t b) {\n"
    "  if (b == 0) return 0; int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "static __device__ __forceinline__ int64_t tcg_floormod_i(int64_t a, int64_t b) {\n"
    "  if (b == 0) return 0; int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "static __device__ __forceinline__ float tcg_floordiv_f(float a, float b) { return floorf(a / b); }\n"
    "static __device__ __forceinline__ double tcg_floordiv_d(double a, double b) { return floor(a / b); }\n"
    "static __device__ __forceinline__ float tcg_floormod_f(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "static __device__ __forceinline__ double tcg_floormod_d(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "static __device__ __forceinline__ float tcg_max_f(float a, float b) { return a > b ? a : b; }\n"
    "static __device__ __forceinline__ float tcg_min_f(float a, float b) { return a < b ? a : b; }\n"
    "static __device__ __forceinline__ double tcg_max_d(double a, double b) { return a > b ? a : b; }\n"
    "static __device__ __forceinline__ double tcg_min_d(double a, double b) { return a < b ? a : b; }\n"
    "static __device__ __forceinline__ int64_t tcg_max_i(int64_t a, int64_t b) { return a > b ? a : b; }\n"
    "static __device__ __forceinline__ int64_t tcg_min_i(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "static __device__ __forceinline__ int64_t tcg_abs_i(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }\n"
    "static __device__ __forceinline__ int64_t tcg_ipow(int64_t a, int64_t b) {\n"
    "  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "  uint64_t r = 1, x = (uint64_t)a; while (b) { if (b & 1) r *= x; x *= x; b >>= 1; } return (int64_t)r; }\n"
    "#define TCG_F2I(name, T, lo, hi) \\\n"
    "  static __device__ __forceinline__ T tcg_f2##name(double x) { return x != x ? (T)0 : x <= (double)(lo) ? (T)(lo) : x >= (double)(hi) ? (T)(hi) : (T)x; }\n"
    "TCG_F2I(int8, int8_t, -128, 127)\nTCG_F2I(int16, int16_t, -32768, 32767)\nTCG_F2I(int32, int32_t, -2147483648.0, 2147483647.0)\n"
    "TCG_F2I(uint8, uint8_t, 0, 255)\nTCG_F2I(uint16, uint16_t, 0, 65535)\nTCG_F2I(uint32, uint32_t, 0, 4294967295.0)\n"
    "static __device__ __forceinline__ int64_t tcg_f2int64(double x) { return x != x ? 0 : x < -9223372036854775808.0 ? (int64_t)0x8000000000000000ull : x >= 9223372036854775808.0 ? (int64_t)0x7fffffffffffffffll : (int64_t)x; }\n"
    "static __device__ __forceinline__ uint64_t tcg_f2uint64(double x) { return x != x || x <= 0 ? 0 : x >= 18446744073709551616.0 ? ~0ull : (uint64_t)x; }\n"
    "static __device__ __forceinline__ int tcg_f2bool(double x) { return x != 0; }\n"
    "#ifndef TCG_EMU\n"
    "static __device__ __forceinline__ uint16_t tcg_f32_to_float16_fast(float x) { uint16_t h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x)); return h; }\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "static __device__ __forceinline__ uint16_t tcg_f32_to_bfloat16_fast(float x) { uint16_t h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x)); return h; }\n"
    "#else\n"
    "static __device__ __forceinline__ uint16_t tcg_f32_to_bfloat16_fast(float x) { return tcg_f32_to_bfloat16(x); }\n"
    "#endif\n"
    "/* raw conversions: the instruction alone, exact but for a NaN (copy_vec checks the group) */\n"
    "static __device__ __forceinline__ float tcg_float16_to_f32_raw(uint16_t h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "#if __CUDA_ARCH__ >= 890\n"
    "static __device__ __forceinline__ uint8_t tcg_f32_to_float8_e4m3fn_raw(float x) { uint16_t p; asm(\"cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\" : \"=h\"(p) : \"f\"(0.0f), \"f\"(x)); return (uint8_t)p; }\n"
    "static __device__ __forceinline__ uint8_t tcg_f32_to_float8_e5m2_raw(float x) { uint16_t p; asm(\"cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;\" : \"=h\"(p) : \"f\"(0.0f), \"f\"(x)); return (uint8_t)p; }\n"
    "#else\n"
    "static __device__ __forceinline__ uint8_t tcg_f32_to_float8_e4m3fn_raw(float x) { return tcg_f32_to_float8_e4m3fn_sat(x); }\n"
    "static __device__ __forceinline__ uint8_t tcg_f32_to_float8_e5m2_raw(float x) { return tcg_f32_to_float8_e5m2_sat(x); }\n"
    "#endif\n"
    "static __device__ __forceinline__ void tcg_nan_note(float x, float &acc) { asm(\"fma.rn.f32 %0, %1, 0f00000000, %0;\" : \"+f\"(acc) : \"f\"(x)); }\n"
    "static __device__ __forceinline__ float tcg_fast_exp2f(float x) { float y; asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; }\n"
    "#else /* the emulator: the exact conversions, which the instructions match but for NaN payloads */\n"
    "static inline uint16_t tcg_f32_to_float16_fast(float x) { return tcg_f32_to_float16(x); }\n"
    "static inline uint16_t tcg_f32_to_bfloat16_fast(float x) { return tcg_f32_to_bfloat16(x); }\n"
    "static inline float tcg_float16_to_f32_raw(uint16_t h) { return tcg_float16_to_f32(h); }\n"
    "static inline uint8_t tcg_f32_to_float8_e4m3fn_raw(float x) { return tcg_f32_to_float8_e4m3fn_sat(x); }\n"
    "static inline uint8_t tcg_f32_to_float8_e5m2_raw(float x) { return tcg_f32_to_float8_e5m2_sat(x); }\n"
    "static inline void tcg_nan_note(float x, float &acc) { acc = fmaf(x, 0.0f, acc); }\n"
    "static inline float tcg_fast_exp2f(float x) { return exp2f(x); }\n"
    "#endif\n"
    "static __device__ __forceinline__ bool tcg_isnan(float x) { return x != x; }\n"
    "/* ..._chk: the raw conversion, noting a NaN or inf in acc (an fma the compiler keeps) */\n"
    "static __device__ __forceinline__ float tcg_float16_to_f32_raw_chk(uint16_t h, float &acc) { float f = tcg_float16_to_f32_raw(h); tcg_nan_note(f, acc); return f; }\n"
    "static __device__ __forceinline__ uint16_t tcg_f32_to_float16_fast_chk(float x, float &acc) { tcg_nan_note(x, acc); return tcg_f32_to_float16_fast(x); }\n"
    "static __device__ __forceinline__ uint16_t tcg_f32_to_bfloat16_fast_chk(float x, float &acc) { tcg_nan_note(x, acc); return tcg_f32_to_bfloat16_fast(x); }\n"
    "static __device__ __forceinline__ uint8_t tcg_f32_to_float8_e4m3fn_raw_chk(float x, float &acc) { tcg_nan_note(x, acc); return tcg_f32_to_float8_e4m3fn_raw(x); }\n"
    "static __device__ __forceinline__ uint8_t tcg_f32_to_float8_e5m2_raw_chk(float x, float &acc) { tcg_nan_note(x, acc); return tcg_f32_to_float8_e5m2_raw(x); }\n"
    "/* element atomics return the element's value before the addition (return_prev) */\n"
    "static __device__ __forceinline__ float tcg_atomic_add_float32(float *p, int64_t i, float v) { return atomicAdd(&p[i], v); }\n"
    "static __device__ __forceinline__ double tcg_atomic_add_float64(double *p, int64_t i, double v) { return atomicAdd(&p[i], v); }\n"
    "static __device__ __forceinline__ int32_t tcg_atomic_add_int32(int32_t *p, int64_t i, int32_t v) { return (int32_t)atomicAdd((int *)&p[i], (int)v); }\n"
    "static __device__ __forceinline__ uint32_t tcg_atomic_add_uint32(uint32_t *p, int64_t i, uint32_t v) { return atomicAdd((unsigned *)&p[i], (unsigned)v); }\n"
    "static __device__ __forceinline__ int64_t tcg_atomic_add_int64(int64_t *p, int64_t i, int64_t v) { return (int64_t)atomicAdd((unsigned long long *)&p[i], (unsigned long long)v); }\n"
    "static __device__ __forceinline__ uint64_t tcg_atomic_add_uint64(uint64_t *p, int64_t i, uint64_t v) { return (uint64_t)atomicAdd((unsigned long long *)&p[i], (unsigned long long)v); }\n";

static void narrow_helpers(tc_strbuf *sb) {
  for (int c = TC_DT_INVALID + 1; c < TC_DT_COUNT; c++) {
    tc_dtype d = tc_dt((tc_scalar_type)c);
    if (!narrow(d) || is4(d)) continue;
    const char *n = dtname(d), *st = stype(d);
    char enc[96];
    snprintf(enc, sizeof enc, "tcg_f32_to_%s%s", n, tc_dtype_store_saturates(d) ? "_sat" : "");
    tc_sb_printf(sb, "static __device__ __forceinline__ float tcg_r_%s(float x) { return tcg_%s_to_f32(%s(x)); }\n", n, n, enc);
    if (tc_dtype_bits(d) == 16)
      tc_sb_printf(sb,
                   "static __device__ __forceinline__ %s tcg_atomic_add_%s(%s *p, int64_t i, float v) {\n"
                   "  unsigned *w = (unsigned *)((unsigned long long)&p[i] & ~(unsigned long long)3); int sh = ((unsigned long long)&p[i] & 2) ? 16 : 0;\n"
                   "  unsigned old = *w, as;\n"
                   "  do { as = old; %s nv = %s(tcg_%s_to_f32((%s)(as >> sh)) + v);\n"
                   "       old = atomicCAS(w, as, (as & ~(0xffffu << sh)) | ((unsigned)nv << sh)); } while (as != old);\n"
                   "  return (%s)(as >> sh);\n"
                   "}\n",
                   st, n, st, st, enc, n, st, st);
  }
}

/* T.use_swizzle: blocks that run at the same time cover a panel of `panel` block rows (or
 * columns) instead of whole rows, so they share tiles in L2. A permutation of the blocks: each
 * (bx, by) still runs once. Linear id L (x fastest) walks the panels in order; inside a panel of
 * h rows (fewer in the last) block L takes row L % h and column L / h. */
static void rasterize(cg *g, int panel, bool column) {
  const char *x = column ? "y" : "x", *y = column ? "x" : "y";
  line(g, "int tcg_bx, tcg_by;");
  line(g, "{");
  if (g->folds) { /* the logical grid and block (fold_grid) */
    line(g, "  const int gx = tcg_g%s, gy = tcg_g%s;", x, y);
    line(g, "  const int lin = tcg_f%s + gx * tcg_f%s;", x, y);
  } else {
    line(g, "  const int gx = (int)gridDim.%s, gy = (int)gridDim.%s;", x, y);
    line(g, "  const int lin = (int)blockIdx.%s + gx * (int)blockIdx.%s;", x, y);
  }
  char p[24];
  snprintf(p, sizeof p, "%d", panel);
  panel_walk(g, p, column, "lin", "gx", "gy");
  line(g, "}");
}

/* Whether the grid may pass CUDA's 65535 blocks along y or z (one block per row of a large
 * tensor): an extent there that is not a constant within it. Such a kernel launches folded into
 * x when it does (meta fold=1, runtime.c), and as written otherwise. Clusters stay unfolded: a
 * cluster's blocks are neighbours along x of the grid as written. */
static bool grid_may_fold(const tc_kernel_ir *k) {
  if (k->cluster > 1) return false;
  for (int i = 1; i < k->grid_ndim && i < 3; i++) {
    int64_t v;
    if (!tc_expr_const_int(k->grid[i], &v) || v > 65535) return true;
  }
  return false;
}

/* The logical grid (tcg_gx, tcg_gy, tcg_gz) and this block's place in it (tcg_fx, tcg_fy,
 * tcg_fz): blockIdx as launched, or, when the runtime folded the grid into x (gridDim.x is then
 * gx * gy * gz, not gx), recovered from blockIdx.x with x fastest. */
static void fold_grid(cg *g) {
  logical_grid(g);
  line(g, "int tcg_fx = (int)blockIdx.x, tcg_fy = (int)blockIdx.y, tcg_fz = (int)blockIdx.z;");
  line(g, "if (gridDim.x != (unsigned)tcg_gx) { /* folded into x */");
  line(g, "  tcg_fx = (int)(blockIdx.x %% (unsigned)tcg_gx);");
  line(g, "  tcg_fy = (int)(blockIdx.x / (unsigned)tcg_gx %% (unsigned)tcg_gy);");
  line(g, "  tcg_fz = (int)(blockIdx.x / (unsigned)tcg_gx / (unsigned)tcg_gy);");
  line(g, "}");
  line(g, "(void)tcg_gz, (void)tcg_fx, (void)tcg_fy, (void)tcg_fz;");
}

tilec_status tc_cuda_print(const tc_kernel_ir *k, tc_arena *a, tc_generated *out, char *entry, size_t entry_cap,
                          bool streamk, tc_strbuf *notes, int64_t *smem_bytes, tilec_error *err) {
  tc_strbuf kern, full;
  tc_sb_init(&kern);
  tc_sb_init(&full);
  tc_strbuf ops;
  tc_sb_init(&ops);
  cg g = {.a = a, .sb = &kern, .k = k, .err = err, .ops = &ops};
  tc_cuda_streamk sk;
  bool persistent = false;
  tc_ranges_init(&g.ranges, a, k);
  tc_visit_stmts(k->body, note_assigned, &g);
  snprintf(entry, entry_cap, "tilec_%s", k->name);
  for (char *p = entry; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
  int threads = 1;
  for (int i = 0; i < k->threads_ndim; i++) threads *= k->threads[i];
  if (k->producer_threads > 0 && has_ws_loop(k->body)) g.consumers = threads;
  g.folds = !g.consumers && grid_may_fold(k);
  if (g.folds && notes)
    tc_sb_printf(notes, "grid: its y or z extent may pass CUDA's 65535 blocks; a launch where it does runs the grid folded into x "
                        "(gx * gy * gz blocks), each block recovering its (bx, by, bz)\n");
  if (g.consumers) {
    /* Two blocks on an SM when both fit and each consumer thread still gets 168 registers or
     * more (one consumer warpgroup): one block's epilogue then runs beside the other's
     * mainloop, where one block alone leaves the tensor cores idle while it stores. */
    int64_t smem = 0;
    ws_shared_bytes(k->body, &smem);
    g.blocks_per_sm = 2 * (smem + 1024) <= 228 * 1024 && consumer_regs(threads, 2) >= 168 ? 2 : 1;
    /* the blocks walk the tiles (persistent_body): as many blocks as run at once when every
     * tile's loop is as long (GEMM); else one block per tile, which the hardware schedules as
     * blocks finish (causal attention's tiles differ in length) */
    const tc_stmt *loop = find_ws_loop(k->body);
    persistent = loop && same_every_tile(k->body, loop->u.loop.extent, 0);
    const char *no = NULL;
    bool pure_sum = persistent && tc_cuda_streamk_plan(k->body, loop, threads, &sk, &no);
    if (!persistent) no = NULL; /* no stream-K without a persistent walk, and nothing to say */
    else if (!pure_sum) {}
    else if (k->cluster > 1) no = "the blocks run in clusters";
    else if (!streamk) no = "it is off; the persistent blocks could cut the last waves' tiles along the k loop (the cuda target option streamk=on)";
    else {
      g.sk = &sk;
      g.sk_wgmma = some_intrinsic(loop->u.loop.body, wgmma_gemm, NULL);
      if (notes)
        tc_sb_printf(notes, "stream-K: when the tiles do not fill the waves of persistent blocks, the last two waves' tiles (or all, "
                            "when there are fewer tiles than blocks) are cut along the k loop into equal ranges, one a block, each run "
                            "head first so that the blocks stay in step along k; a cut tile is finished by the block that ran its last "
                            "iterations, after adding the partial sums of the blocks below (%lld bytes a block, in a workspace the "
                            "runtime keeps)\n",
                     (long long)sk.slot_bytes);
    }
    if (no && notes) tc_sb_printf(notes, "no stream-K: %s\n", no);
    if (pure_sum && tc_cuda_consumers_run_free(k, loop)) {
      g.free_consumers = true;
      if (notes)
        tc_sb_printf(notes, "consumers: no barrier between the warpgroups at a tile's start, after its loop or at its end: "
                            "outside the loop they share no memory, so one warpgroup's epilogue overlaps the other's next gemms\n");
    }
    if (persistent && k->swizzle_panel > 0 && k->swizzle_enable) {
      int64_t per_x, per_y;
      bool column = k->swizzle_order != TC_SWIZZLE_ROW;
      int C = k->cluster > 1 ? k->cluster : 1; /* row panels of clusters count rows of C tiles */
      tc_cuda_wave_bytes(k, loop, &per_x, &per_y);
      if (per_x > 0 && per_y > 0) {
        g.wave_own = column ? per_x : per_y * C * C, g.wave_other = column ? per_y : per_x;
        char unit[64];
        if (column) snprintf(unit, sizeof unit, "grid-x tiles wide");
        else if (C > 1) snprintf(unit, sizeof unit, "cluster rows (of %d grid-y tiles) high", C);
        else snprintf(unit, sizeof unit, "grid-y tiles high");
        if (notes)
          tc_sb_printf(notes, "persistent walk: T.use_swizzle's panels are sqrt(G x %lld / %lld) %s on a device "
                              "of G blocks, not %d, so that the G tiles in flight read the fewest operand bytes (%lld bytes an "
                              "iteration for each grid-x index, %lld for each grid-y index)\n",
                       (long long)g.wave_other, (long long)g.wave_own, unit,
                       column || C == 1 ? k->swizzle_panel : (k->swizzle_panel + C - 1) / C, (long long)per_x, (long long)per_y);
      }
    }
    tc_sb_printf(&kern, "extern \"C\" __global__ void __launch_bounds__(%d, %d) ", threads + k->producer_threads, g.blocks_per_sm);
    if (k->cluster > 1) tc_sb_printf(&kern, "__cluster_dims__(%d, 1, 1) ", k->cluster);
    tc_sb_printf(&kern, "%s(", entry);
  }
  else tc_sb_printf(&kern, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", threads, entry);
  int np = 0;
  for (int i = 0; i < k->nparams; i++) {
    const tc_param *p = &k->params[i];
    if (np++) tc_sb_puts(&kern, ", ");
    if (p->buf) {
      tc_sb_printf(&kern, "%s *__restrict__ ", stype(p->buf->dtype));
      buf_name(&kern, p->buf);
    } else {
      tc_sb_printf(&kern, "%s ", p->var->dtype.code == TC_DT_BOOL ? "int8_t" : ctype(p->var->dtype));
      var_name(&g, &kern, p->var);
    }
  }
  for (int s = 0; s < k->nsyms; s++) {
    if (np++) tc_sb_puts(&kern, ", ");
    tc_sb_puts(&kern, "int32_t ");
    var_name(&g, &kern, k->syms[s]);
  }
  if (k->nlaunches > 1) {
    if (np++) tc_sb_puts(&kern, ", ");
    tc_sb_puts(&kern, "int32_t tcg_launch");
  }
  if (g.sk) { /* stream-K's flags and partial sums (cuda.h, "streamk=") */
    if (np++) tc_sb_puts(&kern, ", ");
    tc_sb_puts(&kern, "unsigned char *__restrict__ tcg_sk_ws");
  }
  for (int w = 0; w < k->nworkspaces; w++) { /* T.alloc_global: zeroed device memory the runtime keeps */
    if (np++) tc_sb_puts(&kern, ", ");
    tc_sb_printf(&kern, "%s *__restrict__ ", stype(k->workspaces[w]->dtype));
    buf_name(&kern, k->workspaces[w]);
  }
  for (int i = 0; i < k->ntma; i++) {
    if (np++) tc_sb_puts(&kern, ", ");
    tc_sb_printf(&kern, "const __grid_constant__ tcg_tmap tcg_tm%d", i);
  }
  tc_sb_puts(&kern, ") {\n");
  g.ind = 1;
  line(&g, "extern __shared__ __align__(1024) unsigned char tcg_smem[];");
  if (g.consumers) {
    persistent_body(&g);
  } else {
    if (g.folds) fold_grid(&g);
    if (k->swizzle_panel > 0 && k->swizzle_enable) rasterize(&g, k->swizzle_panel, k->swizzle_order != TC_SWIZZLE_ROW);
    stmt(&g, k->body);
    kernel_end(&g);
  }
  tc_sb_puts(&kern, "}\n");
  if (g.failed) {
    tc_sb_free(&kern);
    tc_sb_free(&full);
    tc_sb_free(&ops);
    return err->status;
  }
  *smem_bytes = g.smem;
  tc_sb_puts(&full, "/* generated by tilec for the cuda target */\n");
  tc_sb_puts(&full, tc_dtype_c_prelude());
  tc_sb_puts(&full, tc_cuda_prelude());
  tc_sb_puts(&full, cuda_helpers);
  narrow_helpers(&full);
  tc_sb_puts(&full, "\n");
  tc_sb_puts(&full, tc_sb_cstr(&ops));
  tc_sb_puts(&full, tc_sb_cstr(&kern));
  tc_sb_free(&ops);
  out->kernel_source = tc_sb_take(&kern);
  out->full_source = tc_sb_take(&full);
  if (k->ntma > 0) {
    /* the tensor maps the runtime makes at each launch (cuda.h, "tmap=") */
    tc_strbuf m;
    tc_sb_init(&m);
    for (int i = 0; i < k->ntma; i++) {
      const tc_buffer *b = k->params[k->tma[i].param].buf;
      int nd = b->ndim;
      int64_t R = 0, C = 0;
      tc_expr_const_int(b->shape[nd - 2], &R);
      tc_expr_const_int(b->shape[nd - 1], &C);
      /* a split map's box is the share one block of the cluster loads */
      int split = k->tma[i].split > 1 ? k->tma[i].split : 1;
      tc_sb_printf(&m, "tmap=%d,%d,%lld,%lld,%lld,%lld,", k->tma[i].param, tc_dtype_bits(b->dtype) / 8, (long long)(k->tma[i].rows / split),
                   (long long)k->tma[i].cols, (long long)R, (long long)C);
      if (nd == 2) tc_sb_puts(&m, "1");
      for (int d = 0; d + 2 < nd; d++) {
        int64_t v;
        if (d) tc_sb_putc(&m, '*');
        if (tc_expr_const_int(b->shape[d], &v)) {
          tc_sb_printf(&m, "%lld", (long long)v);
        } else {
          int sym = -1;
          for (int s = 0; s < k->nsyms; s++)
            if (b->shape[d]->op == TC_OP_VAR && b->shape[d]->var == k->syms[s]) sym = s;
          tc_sb_printf(&m, "s%d", sym);
        }
      }
      tc_sb_putc(&m, '\n');
    }
    if (g.consumers) { /* the walk chosen above */
      tc_sb_printf(&m, "persistent=%d\n", persistent ? 1 : 0);
      if (k->cluster > 1) tc_sb_printf(&m, "cluster=%d\n", k->cluster);
      if (g.sk) tc_sb_printf(&m, "streamk=%lld\n", (long long)g.sk->slot_bytes);
    }
    out->meta = tc_sb_take(&m);
  }
  if (k->nlaunches > 1 || g.folds) { /* cuda.h, "launches=", "fold=" */
    tc_strbuf m;
    tc_sb_init(&m);
    if (out->meta) tc_sb_puts(&m, out->meta);
    if (k->nlaunches > 1) tc_sb_printf(&m, "launches=%d\n", k->nlaunches);
    if (g.folds) tc_sb_puts(&m, "fold=1\n");
    free(out->meta);
    out->meta = tc_sb_take(&m);
  }
  return TILEC_OK;
}
