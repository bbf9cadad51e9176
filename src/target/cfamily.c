/* cfamily.c: the C-family expression printer (see cfamily.h) and the C spellings.
 *
 * Values: expressions compute in the hook's ctype (float for float16/bfloat16/float8 in C),
 * rounded to the expression's dtype after every operation, which for +,-,*,/ and sqrt equals
 * computing in the narrow type since float has more than twice its precision. */
#include "target/cfamily.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/diag.h"

void tc_cf_fail(tc_cf *p, tc_loc loc, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(p->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
}

/* ---- the C spellings ---- */
static bool is_float(tc_dtype d) { return tc_dtype_is_float(d); }
static bool is_unsigned(tc_dtype d) { return tc_dtype_kind_of(d) == TC_KIND_UINT; }
static const char *dtname(tc_dtype d) { return tc_dtype_elem_name(d); }

void tc_cf_c_round(tc_strbuf *sb, tc_dtype d, const char *val) {
  if (tc_dtype_is_narrow_float(d)) tc_sb_printf(sb, "tcg_r_%s(%s)", dtname(d), val);
  else if (d.code == TC_DT_INT4) tc_sb_printf(sb, "tcg_wrap_i4(%s)", val);
  else if (d.code == TC_DT_UINT4) tc_sb_printf(sb, "((uint8_t)((%s) & 15))", val);
  else if (d.code == TC_DT_BOOL) tc_sb_printf(sb, "((%s) != 0)", val);
  else if (!is_float(d) && d.code != TC_DT_INT32 && d.code != TC_DT_INT64 && d.code != TC_DT_UINT32 &&
           d.code != TC_DT_UINT64)
    tc_sb_printf(sb, "((%s)(%s))", tc_dtype_c_compute(d), val); /* narrower ints were promoted by C */
  else tc_sb_puts(sb, val); /* 32/64-bit ints: the value text is already an atom or parenthesized */
}

void tc_cf_c_convert(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *val) {
  if (tc_dtype_eq(from, to)) {
    tc_sb_puts(sb, val);
    return;
  }
  if (to.code == TC_DT_BOOL) {
    tc_sb_printf(sb, "((%s) != 0)", val);
  } else if (is_float(to)) {
    tc_strbuf t;
    tc_sb_init(&t);
    tc_sb_printf(&t, "(%s)(%s)", tc_dtype_c_compute(to), val);
    tc_cf_c_round(sb, to, tc_sb_cstr(&t));
    tc_sb_free(&t);
  } else if (is_float(from)) {
    tc_sb_printf(sb, "tcg_f2%s((double)(%s))", dtname(to), val);
  } else {
    tc_cf_c_round(sb, to, val);
  }
}

const char *tc_cf_c_call(tc_expr_op op, tc_dtype d) {
  bool dbl = d.code == TC_DT_FLOAT64, fl = is_float(d), u = is_unsigned(d);
  /* <math.h> functions: the float form (suffix f) unless the dtype is float64 */
#define MATHFN(name) (dbl ? name : name "f")
  switch (op) {
  case TC_OP_DIV: return fl ? NULL : u ? "tcg_udiv" : "tcg_idiv";
  case TC_OP_FLOORDIV: return fl ? (dbl ? "tcg_floordiv_d" : "tcg_floordiv_f") : u ? "tcg_udiv" : "tcg_floordiv_i";
  case TC_OP_FLOORMOD: return fl ? (dbl ? "tcg_floormod_d" : "tcg_floormod_f") : u ? "tcg_umod" : "tcg_floormod_i";
  case TC_OP_MIN: return fl ? (dbl ? "tcg_min_d" : "tcg_min_f") : "tcg_min_i";
  case TC_OP_MAX: return fl ? (dbl ? "tcg_max_d" : "tcg_max_f") : "tcg_max_i";
  case TC_OP_POW: return fl ? MATHFN("pow") : "tcg_ipow";
  case TC_OP_ABS: return fl ? MATHFN("fabs") : "tcg_abs_i";
  case TC_OP_EXP: return MATHFN("exp");
  case TC_OP_EXP2: return MATHFN("exp2");
  case TC_OP_LOG: return MATHFN("log");
  case TC_OP_LOG2: return MATHFN("log2");
  case TC_OP_SQRT: return MATHFN("sqrt");
  case TC_OP_TANH: return MATHFN("tanh");
  case TC_OP_SIN: return MATHFN("sin");
  case TC_OP_COS: return MATHFN("cos");
  case TC_OP_FLOOR: return MATHFN("floor");
  case TC_OP_CEIL: return MATHFN("ceil");
  default: return NULL;
  }
#undef MATHFN
}

/* ---- expressions ---- */
static void emit_const_float(tc_cf *p, tc_strbuf *sb, double v, tc_dtype d) {
  bool dbl = d.code == TC_DT_FLOAT64;
  if (isnan(v)) tc_sb_puts(sb, dbl ? "((double)NAN)" : "NAN");
  else if (isinf(v)) tc_sb_puts(sb, v > 0 ? (dbl ? "((double)INFINITY)" : "INFINITY") : (dbl ? "(-(double)INFINITY)" : "(-INFINITY)"));
  else if (dbl) tc_sb_printf(sb, "%a", v);
  else if (d.code == TC_DT_FLOAT32) tc_sb_printf(sb, "%af", (double)(float)v);
  else {
    char t[64];
    snprintf(t, sizeof t, "%af", (double)(float)v);
    p->h->round(sb, d, t);
  }
}

static void emit_const_int(tc_cf *p, tc_strbuf *sb, int64_t v, tc_dtype d) {
  if (is_float(d)) {
    emit_const_float(p, sb, (double)v, d);
    return;
  }
  switch (d.code) {
  case TC_DT_BOOL: tc_sb_puts(sb, v ? "1" : "0"); return;
  case TC_DT_INT64:
    if (v == INT64_MIN) tc_sb_puts(sb, "INT64_MIN");
    else tc_sb_printf(sb, "INT64_C(%lld)", (long long)v);
    return;
  case TC_DT_UINT64: tc_sb_printf(sb, "UINT64_C(%llu)", (unsigned long long)v); return;
  case TC_DT_INT32:
    if (v == INT32_MIN) tc_sb_puts(sb, "INT32_MIN");
    else if (v >= INT32_MIN && v <= INT32_MAX) tc_sb_printf(sb, v < 0 ? "(%lld)" : "%lld", (long long)v);
    else tc_sb_printf(sb, "((int32_t)INT64_C(%lld))", (long long)v);
    return;
  default: tc_sb_printf(sb, "((%s)INT64_C(%lld))", p->h->ctype(d), (long long)v); return;
  }
}

/* The unsigned type signed arithmetic of dtype d wraps through, or NULL (not signed, or an
 * index context). */
static const char *wrap_type(const tc_cf *p, tc_dtype d) {
  if (p->index_ctx) return NULL;
  switch (d.code) {
  case TC_DT_INT8: return "uint8_t";
  case TC_DT_INT16: return "uint16_t";
  case TC_DT_INT32: return "uint32_t";
  case TC_DT_INT64: return "uint64_t";
  default: return NULL;
  }
}

/* Writes `pre args(joined by mid) post` and rounds the result to the expression's dtype. */
static void emit_rounded(tc_cf *p, tc_strbuf *sb, const tc_expr *e, const char *pre, const char *mid,
                         const char *post) {
  tc_strbuf t;
  tc_sb_init(&t);
  tc_sb_puts(&t, pre);
  for (int i = 0; i < e->nargs; i++) {
    if (i) tc_sb_puts(&t, mid);
    tc_cf_expr(p, &t, e->args[i]);
  }
  tc_sb_puts(&t, post);
  p->h->round(sb, e->dtype, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

static void unsupported(tc_cf *p, tc_strbuf *sb, const tc_expr *e) {
  tc_cf_fail(p, e->loc, "the %s backend does not support expression '%s'", p->target ? p->target : "?",
             tc_expr_op_name(e->op));
  tc_sb_puts(sb, "0");
}

/* fn(args), with fn from the call hook. */
static void emit_call(tc_cf *p, tc_strbuf *sb, const tc_expr *e) {
  const char *fn = p->h->call(e->op, e->dtype);
  if (!fn) {
    unsupported(p, sb, e);
    return;
  }
  char pre[64];
  snprintf(pre, sizeof pre, "%s(", fn);
  emit_rounded(p, sb, e, pre, ", ", ")");
}

void tc_cf_philox_text(tc_strbuf *sb, const char *u64, const char *const args[3]) {
  tc_sb_printf(sb, "tcg_philox((%s)(%s), (%s)(%s), (%s)(%s))", u64, args[0], u64, args[1], u64, args[2]);
}

void tc_cf_reinterpret_text(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *x, const char *narrow_bits,
                            const char *to_ctype) {
  int bits = tc_dtype_bits(from);
  const char *u = bits == 8 ? "uint8_t" : bits == 16 ? "uint16_t" : bits == 32 ? "uint32_t" : "uint64_t";
  tc_strbuf b;
  tc_sb_init(&b);
  if (tc_dtype_is_narrow_float(from) && narrow_bits) tc_sb_printf(&b, "((%s)%s)", u, narrow_bits);
  else if (tc_dtype_is_narrow_float(from))
    tc_sb_printf(&b, "((%s)tcg_f32_to_%s%s(%s))", u, dtname(from), tc_dtype_store_saturates(from) ? "_sat" : "", x);
  else if (from.code == TC_DT_FLOAT32) tc_sb_printf(&b, "tcg_bits_f32(%s)", x);
  else if (from.code == TC_DT_FLOAT64) tc_sb_printf(&b, "tcg_bits_f64(%s)", x);
  else tc_sb_printf(&b, "((%s)(%s))", u, x);
  if (tc_dtype_is_narrow_float(to)) tc_sb_printf(sb, "tcg_%s_to_f32((%s)%s)", dtname(to), tc_dtype_c_storage(to), tc_sb_cstr(&b));
  else if (to.code == TC_DT_FLOAT32) tc_sb_printf(sb, "tcg_f32_bits((uint32_t)%s)", tc_sb_cstr(&b));
  else if (to.code == TC_DT_FLOAT64) tc_sb_printf(sb, "tcg_f64_bits((uint64_t)%s)", tc_sb_cstr(&b));
  else if (to.code == TC_DT_BOOL) tc_sb_printf(sb, "(%s != 0)", tc_sb_cstr(&b));
  else tc_sb_printf(sb, "((%s)%s)", to_ctype, tc_sb_cstr(&b));
  tc_sb_free(&b);
}

/* reinterpret(x) on the cpu, narrow floats through the prelude's encoders (x is already rounded
 * to the type). */
static void emit_reinterpret(tc_cf *p, tc_strbuf *sb, const tc_expr *e) {
  tc_strbuf x;
  tc_sb_init(&x);
  tc_cf_expr(p, &x, e->args[0]);
  tc_cf_reinterpret_text(sb, e->args[0]->dtype, e->dtype, tc_sb_cstr(&x), NULL, p->h->ctype(e->dtype));
  tc_sb_free(&x);
}

void tc_cf_expr(tc_cf *p, tc_strbuf *sb, const tc_expr *e) {
  if (!e) {
    tc_sb_puts(sb, "0");
    return;
  }
  tc_dtype d = e->dtype;
  bool fl = is_float(d), dbl = d.code == TC_DT_FLOAT64;
  char pre[96];
  switch (e->op) {
  case TC_OP_CONST_INT: emit_const_int(p, sb, e->ival, d); return;
  case TC_OP_CONST_FLOAT:
    if (!fl) emit_const_int(p, sb, (int64_t)e->fval, d);
    else emit_const_float(p, sb, e->fval, d);
    return;
  case TC_OP_VAR: p->h->var(p, sb, e->var); return;
  case TC_OP_LOAD: p->h->load(p, sb, e); return;
  case TC_OP_CAST: {
    tc_strbuf t;
    tc_sb_init(&t);
    tc_cf_expr(p, &t, e->args[0]);
    p->h->cast(sb, e->args[0]->dtype, d, tc_sb_cstr(&t));
    tc_sb_free(&t);
    return;
  }
  case TC_OP_SELECT:
    tc_sb_puts(sb, "(");
    tc_cf_expr(p, sb, e->args[0]);
    tc_sb_puts(sb, " ? ");
    tc_cf_expr(p, sb, e->args[1]);
    tc_sb_puts(sb, " : ");
    tc_cf_expr(p, sb, e->args[2]);
    tc_sb_puts(sb, ")");
    return;
  case TC_OP_ADD:
  case TC_OP_SUB:
  case TC_OP_MUL: {
    const char *op = e->op == TC_OP_ADD ? " + " : e->op == TC_OP_SUB ? " - " : " * ";
    const char *u = wrap_type(p, d);
    if (u) { /* signed overflow wraps, as on GPUs: compute in the unsigned type, convert back */
      char mid[48];
      snprintf(pre, sizeof pre, "((%s)((%s)(", p->h->ctype(d), u);
      snprintf(mid, sizeof mid, ")%s(%s)(", op, u);
      emit_rounded(p, sb, e, pre, mid, ")))");
    } else {
      emit_rounded(p, sb, e, "(", op, ")");
    }
    return;
  }
  case TC_OP_DIV:
    if (fl) emit_rounded(p, sb, e, "(", " / ", ")");
    else emit_call(p, sb, e);
    return;
  case TC_OP_FLOORDIV:
  case TC_OP_FLOORMOD:
  case TC_OP_MIN:
  case TC_OP_MAX:
  case TC_OP_POW:
  case TC_OP_ABS:
  case TC_OP_EXP:
  case TC_OP_EXP2:
  case TC_OP_LOG:
  case TC_OP_LOG2:
  case TC_OP_SQRT:
  case TC_OP_TANH:
  case TC_OP_SIN:
  case TC_OP_COS:
  case TC_OP_FLOOR:
  case TC_OP_CEIL: emit_call(p, sb, e); return;
  case TC_OP_NEG:
    if (wrap_type(p, d)) {
      snprintf(pre, sizeof pre, "((%s)((%s)0 - (%s)(", p->h->ctype(d), wrap_type(p, d), wrap_type(p, d));
      emit_rounded(p, sb, e, pre, "", ")))");
    } else {
      emit_rounded(p, sb, e, "(-", "", ")");
    }
    return;
  case TC_OP_BIT_AND: emit_rounded(p, sb, e, "(", " & ", ")"); return;
  case TC_OP_BIT_OR: emit_rounded(p, sb, e, "(", " | ", ")"); return;
  case TC_OP_BIT_XOR: emit_rounded(p, sb, e, "(", " ^ ", ")"); return;
  case TC_OP_BIT_NOT: emit_rounded(p, sb, e, "(~", "", ")"); return;
  case TC_OP_SHL: emit_rounded(p, sb, e, "(", " << ", ")"); return;
  case TC_OP_SHR: emit_rounded(p, sb, e, "(", " >> ", ")"); return;
  case TC_OP_EQ: emit_rounded(p, sb, e, "(", " == ", ")"); return;
  case TC_OP_NE: emit_rounded(p, sb, e, "(", " != ", ")"); return;
  case TC_OP_LT: emit_rounded(p, sb, e, "(", " < ", ")"); return;
  case TC_OP_LE: emit_rounded(p, sb, e, "(", " <= ", ")"); return;
  case TC_OP_GT: emit_rounded(p, sb, e, "(", " > ", ")"); return;
  case TC_OP_GE: emit_rounded(p, sb, e, "(", " >= ", ")"); return;
  case TC_OP_AND: emit_rounded(p, sb, e, "(", " && ", ")"); return;
  case TC_OP_OR: emit_rounded(p, sb, e, "(", " || ", ")"); return;
  case TC_OP_NOT: emit_rounded(p, sb, e, "(!", "", ")"); return;
  case TC_OP_RSQRT: {
    const char *fn = p->h->call(TC_OP_SQRT, d);
    if (!fn) break;
    snprintf(pre, sizeof pre, "(%s / %s(", dbl ? "1.0" : "1.0f", fn);
    emit_rounded(p, sb, e, pre, "", "))");
    return;
  }
  case TC_OP_SIGMOID: {
    const char *fn = p->h->call(TC_OP_EXP, d);
    if (!fn) break;
    snprintf(pre, sizeof pre, dbl ? "(1.0 / (1.0 + %s(-" : "(1.0f / (1.0f + %s(-", fn);
    emit_rounded(p, sb, e, pre, "", ")))");
    return;
  }
  case TC_OP_CALL:
    if (e->callee && strcmp(e->callee, "reinterpret") == 0 && e->nargs == 1 && p->target && strcmp(p->target, "cpu") == 0) {
      emit_reinterpret(p, sb, e);
      return;
    }
    if (e->callee && strcmp(e->callee, "philox_rand") == 0 && e->nargs == 3 && p->target && strcmp(p->target, "cpu") == 0) {
      tc_strbuf a[3];
      const char *text[3];
      for (int i = 0; i < 3; i++) tc_sb_init(&a[i]), tc_cf_expr(p, &a[i], e->args[i]), text[i] = tc_sb_cstr(&a[i]);
      tc_cf_philox_text(sb, "uint64_t", text);
      for (int i = 0; i < 3; i++) tc_sb_free(&a[i]);
      return;
    }
    tc_cf_fail(p, e->loc, "intrinsic '%s' has no %s spelling", e->callee ? e->callee : "?", p->target ? p->target : "C");
    tc_sb_puts(sb, "0");
    return;
  default: break;
  }
  unsupported(p, sb, e);
}

void tc_cf_index_expr(tc_cf *p, tc_strbuf *sb, const tc_expr *e) {
  bool was = p->index_ctx;
  p->index_ctx = true;
  tc_cf_expr(p, sb, e);
  p->index_ctx = was;
}

void tc_cf_expr_as(tc_cf *p, tc_strbuf *sb, const tc_expr *e, tc_dtype to) {
  tc_strbuf t;
  tc_sb_init(&t);
  tc_cf_expr(p, &t, e);
  p->h->cast(sb, e->dtype, to, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

/* The index just past the group that opens at text[i] ('(' or '['), or -1 when it never closes. */
static long group_end(const char *text, long i) {
  int depth = 0;
  for (; text[i]; i++) {
    if (text[i] == '(' || text[i] == '[') depth++;
    else if (text[i] == ')' || text[i] == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return -1;
}

bool tc_cf_is_primary(const char *text) {
  long i = 0;
  if (text[0] == '(') return group_end(text, 0) == (long)strlen(text);
  while ((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z') || (text[i] >= '0' && text[i] <= '9') ||
         text[i] == '_' || text[i] == '.')
    i++;
  if (i == 0) return false;
  while (text[i] == '(' || text[i] == '[') /* calls and subscripts bind tightest */
    if ((i = group_end(text, i)) < 0) return false;
  return text[i] == '\0';
}

void tc_cf_operand(tc_strbuf *sb, const char *text) {
  if (tc_cf_is_primary(text)) tc_sb_puts(sb, text);
  else tc_sb_printf(sb, "(%s)", text);
}

const char *tc_cf_unwrapped(tc_strbuf *sb) {
  const char *text = tc_sb_cstr(sb);
  size_t n = strlen(text);
  while (n >= 2 && text[0] == '(' && group_end(text, 0) == (long)n) {
    memmove(sb->data, sb->data + 1, n - 2);
    sb->data[n - 2] = '\0';
    sb->len = n - 2;
    n -= 2;
    text = tc_sb_cstr(sb);
  }
  return text;
}

void tc_cf_loop_end(tc_strbuf *sb, const tc_expr *min, const tc_expr *extent, const char *min_text, const char *extent_text) {
  int64_t m, n, end;
  bool mc = tc_expr_const_int(min, &m), nc = tc_expr_const_int(extent, &n);
  if (mc && nc && !__builtin_add_overflow(m, n, &end) && end >= INT32_MIN && end <= INT32_MAX) {
    tc_sb_printf(sb, "%lld", (long long)end);
    return;
  }
  if (!mc || m != 0) {
    tc_cf_operand(sb, min_text);
    tc_sb_puts(sb, " + ");
  }
  tc_cf_operand(sb, extent_text);
}

void tc_cf_pow2_divmod(tc_strbuf *sb, const char *x, int64_t c, bool mod) {
  int k = 0;
  while (((int64_t)1 << k) < c) k++;
  if (mod) tc_sb_printf(sb, "(%s & %lld)", x, (long long)c - 1);
  else tc_sb_printf(sb, "(%s >> %d)", x, k);
}
