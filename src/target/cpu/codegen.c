/* codegen.c: tile IR -> one C11 translation unit for the cpu backend.
 *
 * Layout of the translation unit (full_source):
 *   1. includes and the dtype prelude (bit-exact narrow-float conversions, dtype library)
 *   2. small helpers (bounds checks, integer division, saturating casts, atomics, 4-bit access)
 *   3. the gemm micro-kernel, when the kernel has a T.gemm (gemm.c)
 *   4. the kernel: `static int tcg_block(...)` running one block (this alone is kernel_source)
 *   5. exported entry points, ABI version TC_CPU_ABI_VERSION:
 *        int tilec_cpu_abi(void);
 *        int64_t tilec_cpu_scratch_bytes(void);   bytes of per-worker block scratch
 *        void tilec_cpu_grid(const int64_t *scalars, const double *fscalars,
 *                            const int64_t *syms, int64_t grid[3]);
 *        int tilec_cpu_run_blocks(void *const *data, const int64_t *scalars,
 *                                 const double *fscalars, const int64_t *syms,
 *                                 int64_t begin, int64_t end, void *scratch);
 *            runs linear block ids [begin, end) (x fastest); 0, or 1 + the failed assert
 *        const char *tilec_cpu_assert_message(int id);
 *
 * Values: expressions compute in C types (float for float16/bfloat16/float8, rounded to the
 * expression's dtype after every operation, which for +,-,*,/ and sqrt equals computing in the
 * narrow type since float has more than twice its precision); buffers hold the dtype's
 * encoding and loads/stores go through the prelude's conversions. Shared buffers, fragments
 * and local/var buffers live in a per-worker scratch block at fixed 64-byte aligned offsets. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cpu/codegen.h"

/* ---- dtypes ---- */
typedef struct dt_row {
  const char *name, *ctype, *stype;
} dt_row;
static const dt_row dt_rows[TC_DT_COUNT] = {
    [TC_DT_BOOL] = {"bool", "int", "uint8_t"},
    [TC_DT_INT4] = {"int4", "int8_t", "uint8_t"},
    [TC_DT_INT8] = {"int8", "int8_t", "int8_t"},
    [TC_DT_INT16] = {"int16", "int16_t", "int16_t"},
    [TC_DT_INT32] = {"int32", "int32_t", "int32_t"},
    [TC_DT_INT64] = {"int64", "int64_t", "int64_t"},
    [TC_DT_UINT4] = {"uint4", "uint8_t", "uint8_t"},
    [TC_DT_UINT8] = {"uint8", "uint8_t", "uint8_t"},
    [TC_DT_UINT16] = {"uint16", "uint16_t", "uint16_t"},
    [TC_DT_UINT32] = {"uint32", "uint32_t", "uint32_t"},
    [TC_DT_UINT64] = {"uint64", "uint64_t", "uint64_t"},
    [TC_DT_FLOAT4_E2M1FN] = {"float4_e2m1fn", "float", "uint8_t"},
    [TC_DT_FLOAT8_E4M3FN] = {"float8_e4m3fn", "float", "uint8_t"},
    [TC_DT_FLOAT8_E5M2] = {"float8_e5m2", "float", "uint8_t"},
    [TC_DT_FLOAT8_E4M3FNUZ] = {"float8_e4m3fnuz", "float", "uint8_t"},
    [TC_DT_FLOAT8_E5M2FNUZ] = {"float8_e5m2fnuz", "float", "uint8_t"},
    [TC_DT_FLOAT8_E8M0FNU] = {"float8_e8m0fnu", "float", "uint8_t"},
    [TC_DT_FLOAT16] = {"float16", "float", "uint16_t"},
    [TC_DT_BFLOAT16] = {"bfloat16", "float", "uint16_t"},
    [TC_DT_FLOAT32] = {"float32", "float", "float"},
    [TC_DT_FLOAT64] = {"float64", "double", "double"},
};
static const dt_row *dt_row_of(tc_dtype d) {
  static const dt_row bad = {"invalid", "int", "int"};
  return d.code > TC_DT_INVALID && d.code < TC_DT_COUNT && dt_rows[d.code].name ? &dt_rows[d.code] : &bad;
}
const char *tc_cg_ctype(tc_dtype d) { return dt_row_of(d)->ctype; }
const char *tc_cg_stype(tc_dtype d) { return dt_row_of(d)->stype; }
const char *tc_cg_dtname(tc_dtype d) { return dt_row_of(d)->name; }
bool tc_cg_is4(tc_dtype d) {
  return d.code == TC_DT_INT4 || d.code == TC_DT_UINT4 || d.code == TC_DT_FLOAT4_E2M1FN;
}
static bool is_float(tc_dtype d) { return !strcmp(dt_row_of(d)->ctype, "float") || d.code == TC_DT_FLOAT64; }
bool tc_cg_narrow_float(tc_dtype d) { return is_float(d) && d.code != TC_DT_FLOAT32 && d.code != TC_DT_FLOAT64; }
static bool is_unsigned(tc_dtype d) { return d.code >= TC_DT_UINT4 && d.code <= TC_DT_UINT64; }
static bool is_intlike(tc_dtype d) { return !is_float(d); }

/* ---- output helpers ---- */
void tc_cg_fail(tc_cg *g, tc_loc loc, const char *fmt, ...) {
  if (g->failed) return;
  g->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(g->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
}

void tc_cg_line(tc_cg *g, const char *fmt, ...) {
  tc_sb_indent(g->sb, g->ind);
  va_list ap;
  va_start(ap, fmt);
  tc_sb_vprintf(g->sb, fmt, ap);
  va_end(ap);
  tc_sb_putc(g->sb, '\n');
}

static const char *c_name(tc_cg *g, const char *name, int id) {
  char buf[96];
  size_t n = 0;
  if (!name || !*name) name = "t";
  if (name[0] >= '0' && name[0] <= '9') buf[n++] = 'v';
  for (const char *p = name; *p && n < 60; p++) {
    char c = *p;
    buf[n++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_';
  }
  buf[n] = 0;
  return tc_arena_printf(g->a, "%s_%d", buf, id);
}

/* ---- variables ---- */
static void var_ref(tc_cg *g, tc_strbuf *sb, const tc_var *v) {
  if (g->subst && v->id >= 0 && v->id < g->P->nids && g->subst[v->id]) {
    tc_sb_puts(sb, g->subst[v->id]);
    return;
  }
  static const char *const bnames[3] = {"tcg_bx", "tcg_by", "tcg_bz"};
  static const char *const tnames[3] = {"tcg_tx", "tcg_ty", "tcg_tz"};
  int ax = v->axis >= 0 && v->axis < 3 ? v->axis : 0;
  switch (v->kind) {
  case TC_VAR_BLOCK_IDX: tc_sb_puts(sb, bnames[ax]); return;
  case TC_VAR_THREAD_IDX:
    if (!g->in_threads) tc_sb_puts(sb, "0");
    else tc_sb_puts(sb, tnames[ax]);
    return;
  case TC_VAR_LOCAL:
    tc_sb_puts(sb, c_name(g, v->name, v->id));
    if (v->id >= 0 && v->id < g->P->nids && g->P->storage[v->id] == TC_CPU_STORE_PER_THREAD)
      tc_sb_puts(sb, g->in_threads ? "[tcg_tid]" : "[0]");
    return;
  default: tc_sb_puts(sb, c_name(g, v->name, v->id)); return;
  }
}

/* ---- buffers ---- */
void tc_cg_buf_name(tc_cg *g, tc_strbuf *sb, const tc_buffer *b) { tc_sb_puts(sb, c_name(g, b->name, b->id)); }

static bool buf_per_thread(tc_cg *g, const tc_buffer *b) {
  return b->scope != TC_SCOPE_GLOBAL && b->id >= 0 && b->id < g->P->nids &&
         g->P->storage[b->id] == TC_CPU_STORE_PER_THREAD;
}

void tc_cg_buf_copy_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b) {
  if (!buf_per_thread(g, b) || !g->in_threads) return;
  tc_sb_printf(sb, " + (int64_t)tcg_tid * %lld", (long long)tc_buffer_numel(b));
}

void tc_cg_dim(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int j) {
  int64_t v;
  if (b->scope != TC_SCOPE_GLOBAL && tc_expr_const_int(b->shape[j], &v)) {
    tc_sb_printf(sb, "%lld", (long long)v);
    return;
  }
  tc_sb_printf(sb, "%s_d%d", c_name(g, b->name, b->id), j);
}

void tc_cg_stride(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int j) {
  if (b->scope != TC_SCOPE_GLOBAL) {
    int64_t s = 1, v;
    for (int i = j + 1; i < b->ndim; i++) s *= tc_expr_const_int(b->shape[i], &v) ? v : 1;
    tc_sb_printf(sb, "%lld", (long long)s);
    return;
  }
  if (j == b->ndim - 1) tc_sb_puts(sb, "1");
  else tc_sb_printf(sb, "%s_s%d", c_name(g, b->name, b->id), j);
}

void tc_cg_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int nidx, tc_expr *const *idx) {
  tc_sb_putc(sb, '(');
  if (nidx == 0) tc_sb_puts(sb, "0");
  for (int j = 0; j < nidx; j++) {
    if (j) tc_sb_puts(sb, " + ");
    tc_sb_puts(sb, "(int64_t)(");
    tc_cg_index_expr(g, sb, idx[j]);
    tc_sb_puts(sb, ")");
    if (j != nidx - 1) {
      tc_sb_puts(sb, " * ");
      tc_cg_stride(g, sb, b, j);
    }
  }
  tc_cg_buf_copy_offset(g, sb, b);
  tc_sb_putc(sb, ')');
}

void tc_cg_load_at(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, const char *off) {
  const char *nm = c_name(g, b->name, b->id);
  tc_dtype d = b->dtype;
  if (tc_cg_is4(d)) {
    if (d.code == TC_DT_INT4) tc_sb_printf(sb, "tcg_sx4(tcg_ld4(%s, %s))", nm, off);
    else if (d.code == TC_DT_UINT4) tc_sb_printf(sb, "tcg_ld4(%s, %s)", nm, off);
    else tc_sb_printf(sb, "tcg_%s_to_f32(tcg_ld4(%s, %s))", tc_cg_dtname(d), nm, off);
  } else if (tc_cg_narrow_float(d)) {
    tc_sb_printf(sb, "tcg_%s_to_f32(%s[%s])", tc_cg_dtname(d), nm, off);
  } else if (d.code == TC_DT_BOOL) {
    tc_sb_printf(sb, "(int)%s[%s]", nm, off);
  } else {
    tc_sb_printf(sb, "%s[%s]", nm, off);
  }
}

void tc_cg_store_at(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, const char *off, const char *val) {
  const char *nm = c_name(g, b->name, b->id);
  tc_dtype d = b->dtype;
  bool global = b->scope == TC_SCOPE_GLOBAL;
  if (tc_cg_is4(d)) {
    const char *st = global ? "tcg_st4_atomic" : "tcg_st4";
    if (d.code == TC_DT_FLOAT4_E2M1FN)
      tc_sb_printf(sb, "%s(%s, %s, tcg_f32_to_%s%s(%s));", st, nm, off, tc_cg_dtname(d), tc_dtype_store_saturates(d) ? "_sat" : "", val);
    else tc_sb_printf(sb, "%s(%s, %s, (uint8_t)((%s) & 15));", st, nm, off, val);
  } else if (tc_cg_narrow_float(d)) {
    tc_sb_printf(sb, "%s[%s] = tcg_f32_to_%s%s(%s);", nm, off, tc_cg_dtname(d), tc_dtype_store_saturates(d) ? "_sat" : "", val);
  } else if (d.code == TC_DT_BOOL) {
    tc_sb_printf(sb, "%s[%s] = (uint8_t)((%s) != 0);", nm, off, val);
  } else {
    tc_sb_printf(sb, "%s[%s] = %s;", nm, off, val);
  }
}

void tc_cg_round(tc_strbuf *sb, tc_dtype d, const char *val) {
  if (tc_cg_narrow_float(d)) tc_sb_printf(sb, "tcg_r_%s(%s)", tc_cg_dtname(d), val);
  else if (d.code == TC_DT_INT4) tc_sb_printf(sb, "tcg_wrap_i4(%s)", val);
  else if (d.code == TC_DT_UINT4) tc_sb_printf(sb, "((uint8_t)((%s) & 15))", val);
  else if (d.code == TC_DT_BOOL) tc_sb_printf(sb, "((%s) != 0)", val);
  else if (is_intlike(d) && d.code != TC_DT_INT32 && d.code != TC_DT_INT64 && d.code != TC_DT_UINT32 &&
           d.code != TC_DT_UINT64)
    tc_sb_printf(sb, "((%s)(%s))", tc_cg_ctype(d), val); /* narrower ints were promoted by C */
  else tc_sb_puts(sb, val); /* 32/64-bit ints: the value text is already an atom or parenthesized */
}

void tc_cg_convert(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *val) {
  if (tc_dtype_eq(from, to)) {
    tc_sb_puts(sb, val);
    return;
  }
  if (to.code == TC_DT_BOOL) {
    tc_sb_printf(sb, "((%s) != 0)", val);
  } else if (is_float(to)) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "(%s)", tc_cg_ctype(to));
    tc_strbuf t;
    tc_sb_init(&t);
    tc_sb_printf(&t, "%s(%s)", tmp, val);
    tc_cg_round(sb, to, tc_sb_cstr(&t));
    tc_sb_free(&t);
  } else if (is_float(from)) {
    tc_sb_printf(sb, "tcg_f2%s((double)(%s))", tc_cg_dtname(to), val);
  } else {
    tc_cg_round(sb, to, val);
  }
}

/* ---- expressions ---- */
static void emit_const_float(tc_strbuf *sb, double v, tc_dtype d) {
  bool dbl = d.code == TC_DT_FLOAT64;
  if (isnan(v)) tc_sb_puts(sb, dbl ? "((double)NAN)" : "NAN");
  else if (isinf(v)) tc_sb_puts(sb, v > 0 ? (dbl ? "((double)INFINITY)" : "INFINITY") : (dbl ? "(-(double)INFINITY)" : "(-INFINITY)"));
  else if (dbl) tc_sb_printf(sb, "%a", v);
  else if (d.code == TC_DT_FLOAT32) tc_sb_printf(sb, "%af", (double)(float)v);
  else {
    char t[64];
    snprintf(t, sizeof t, "%af", (double)(float)v);
    tc_cg_round(sb, d, t);
  }
}

static void emit_const_int(tc_strbuf *sb, int64_t v, tc_dtype d) {
  if (is_float(d)) {
    emit_const_float(sb, (double)v, d);
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
  default: tc_sb_printf(sb, "((%s)INT64_C(%lld))", tc_cg_ctype(d), (long long)v); return;
  }
}

/* The unsigned type signed arithmetic of dtype d wraps through, or NULL (not signed, or an
 * index context). */
static const char *wrap_type(const tc_cg *g, tc_dtype d) {
  if (g->index_ctx) return NULL;
  switch (d.code) {
  case TC_DT_INT8: return "uint8_t";
  case TC_DT_INT16: return "uint16_t";
  case TC_DT_INT32: return "uint32_t";
  case TC_DT_INT64: return "uint64_t";
  default: return NULL;
  }
}

static const char *fsuf(tc_dtype d) { return d.code == TC_DT_FLOAT64 ? "" : "f"; }

static void emit_sub(tc_cg *g, tc_strbuf *sb, const tc_expr *e) { tc_cg_expr(g, sb, e); }

/* Writes `op(args)` and rounds the result to the expression's dtype. */
static void emit_rounded(tc_cg *g, tc_strbuf *sb, const tc_expr *e, const char *fmt_pre, const char *mid,
                         const char *post) {
  tc_strbuf t;
  tc_sb_init(&t);
  tc_sb_puts(&t, fmt_pre);
  for (int i = 0; i < e->nargs; i++) {
    if (i) tc_sb_puts(&t, mid);
    emit_sub(g, &t, e->args[i]);
  }
  tc_sb_puts(&t, post);
  tc_cg_round(sb, e->dtype, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

static void emit_load(tc_cg *g, tc_strbuf *sb, const tc_expr *e) {
  const tc_buffer *b = e->buf;
  tc_strbuf off;
  tc_sb_init(&off);
  tc_cg_offset(g, &off, b, e->nargs, e->args);
  if (b->scope == TC_SCOPE_GLOBAL && !g->unchecked) {
    /* out of bounds reads zero */
    tc_sb_puts(sb, "((");
    for (int j = 0; j < e->nargs; j++) {
      if (j) tc_sb_puts(sb, " && ");
      tc_sb_puts(sb, "tcg_inb(");
      tc_cg_index_expr(g, sb, e->args[j]);
      tc_sb_puts(sb, ", ");
      tc_cg_dim(g, sb, b, j);
      tc_sb_puts(sb, ")");
    }
    if (e->nargs == 0) tc_sb_puts(sb, "1");
    tc_sb_puts(sb, ") ? ");
    tc_cg_load_at(g, sb, b, tc_sb_cstr(&off));
    tc_sb_printf(sb, " : (%s)0)", tc_cg_ctype(b->dtype));
  } else {
    tc_cg_load_at(g, sb, b, tc_sb_cstr(&off));
  }
  tc_sb_free(&off);
}

static void emit_math(tc_cg *g, tc_strbuf *sb, const tc_expr *e, const char *fn) {
  char pre[48];
  snprintf(pre, sizeof pre, "%s%s(", fn, fsuf(e->dtype));
  emit_rounded(g, sb, e, pre, ", ", ")");
}

void tc_cg_expr(tc_cg *g, tc_strbuf *sb, const tc_expr *e) {
  if (!e) {
    tc_sb_puts(sb, "0");
    return;
  }
  tc_dtype d = e->dtype;
  bool fl = is_float(d);
  switch (e->op) {
  case TC_OP_CONST_INT: emit_const_int(sb, e->ival, d); return;
  case TC_OP_CONST_FLOAT:
    if (!fl) emit_const_int(sb, (int64_t)e->fval, d);
    else emit_const_float(sb, e->fval, d);
    return;
  case TC_OP_VAR: var_ref(g, sb, e->var); return;
  case TC_OP_LOAD: emit_load(g, sb, e); return;
  case TC_OP_CAST: {
    tc_strbuf t;
    tc_sb_init(&t);
    emit_sub(g, &t, e->args[0]);
    tc_cg_convert(sb, e->args[0]->dtype, d, tc_sb_cstr(&t));
    tc_sb_free(&t);
    return;
  }
  case TC_OP_SELECT:
    tc_sb_puts(sb, "(");
    emit_sub(g, sb, e->args[0]);
    tc_sb_puts(sb, " ? ");
    emit_sub(g, sb, e->args[1]);
    tc_sb_puts(sb, " : ");
    emit_sub(g, sb, e->args[2]);
    tc_sb_puts(sb, ")");
    return;
  case TC_OP_ADD:
  case TC_OP_SUB:
  case TC_OP_MUL: {
    const char *op = e->op == TC_OP_ADD ? " + " : e->op == TC_OP_SUB ? " - " : " * ";
    const char *u = wrap_type(g, d);
    if (u) { /* signed overflow wraps, as on GPUs: compute in the unsigned type, convert back */
      char pre[64], mid[48];
      snprintf(pre, sizeof pre, "((%s)((%s)(", tc_cg_ctype(d), u);
      snprintf(mid, sizeof mid, ")%s(%s)(", op, u);
      emit_rounded(g, sb, e, pre, mid, ")))");
    } else {
      emit_rounded(g, sb, e, "(", op, ")");
    }
    return;
  }
  case TC_OP_DIV:
    if (fl) emit_rounded(g, sb, e, "(", " / ", ")");
    else emit_rounded(g, sb, e, is_unsigned(d) ? "tcg_udiv(" : "tcg_idiv(", ", ", ")");
    return;
  case TC_OP_FLOORDIV:
    if (fl) emit_rounded(g, sb, e, d.code == TC_DT_FLOAT64 ? "tcg_floordiv_d(" : "tcg_floordiv_f(", ", ", ")");
    else emit_rounded(g, sb, e, is_unsigned(d) ? "tcg_udiv(" : "tcg_floordiv_i(", ", ", ")");
    return;
  case TC_OP_FLOORMOD:
    if (fl) emit_rounded(g, sb, e, d.code == TC_DT_FLOAT64 ? "tcg_floormod_d(" : "tcg_floormod_f(", ", ", ")");
    else emit_rounded(g, sb, e, is_unsigned(d) ? "tcg_umod(" : "tcg_floormod_i(", ", ", ")");
    return;
  case TC_OP_MIN: emit_rounded(g, sb, e, fl ? (d.code == TC_DT_FLOAT64 ? "tcg_min_d(" : "tcg_min_f(") : "tcg_min_i(", ", ", ")"); return;
  case TC_OP_MAX: emit_rounded(g, sb, e, fl ? (d.code == TC_DT_FLOAT64 ? "tcg_max_d(" : "tcg_max_f(") : "tcg_max_i(", ", ", ")"); return;
  case TC_OP_POW:
    if (fl) emit_math(g, sb, e, "pow");
    else emit_rounded(g, sb, e, "tcg_ipow(", ", ", ")");
    return;
  case TC_OP_NEG:
    if (wrap_type(g, d)) {
      char pre[64];
      snprintf(pre, sizeof pre, "((%s)((%s)0 - (%s)(", tc_cg_ctype(d), wrap_type(g, d), wrap_type(g, d));
      emit_rounded(g, sb, e, pre, "", ")))");
    } else {
      emit_rounded(g, sb, e, "(-", "", ")");
    }
    return;
  case TC_OP_BIT_AND: emit_rounded(g, sb, e, "(", " & ", ")"); return;
  case TC_OP_BIT_OR: emit_rounded(g, sb, e, "(", " | ", ")"); return;
  case TC_OP_BIT_XOR: emit_rounded(g, sb, e, "(", " ^ ", ")"); return;
  case TC_OP_BIT_NOT: emit_rounded(g, sb, e, "(~", "", ")"); return;
  case TC_OP_SHL: emit_rounded(g, sb, e, "(", " << ", ")"); return;
  case TC_OP_SHR: emit_rounded(g, sb, e, "(", " >> ", ")"); return;
  case TC_OP_EQ: emit_rounded(g, sb, e, "(", " == ", ")"); return;
  case TC_OP_NE: emit_rounded(g, sb, e, "(", " != ", ")"); return;
  case TC_OP_LT: emit_rounded(g, sb, e, "(", " < ", ")"); return;
  case TC_OP_LE: emit_rounded(g, sb, e, "(", " <= ", ")"); return;
  case TC_OP_GT: emit_rounded(g, sb, e, "(", " > ", ")"); return;
  case TC_OP_GE: emit_rounded(g, sb, e, "(", " >= ", ")"); return;
  case TC_OP_AND: emit_rounded(g, sb, e, "(", " && ", ")"); return;
  case TC_OP_OR: emit_rounded(g, sb, e, "(", " || ", ")"); return;
  case TC_OP_NOT: emit_rounded(g, sb, e, "(!", "", ")"); return;
  case TC_OP_EXP: emit_math(g, sb, e, "exp"); return;
  case TC_OP_EXP2: emit_math(g, sb, e, "exp2"); return;
  case TC_OP_LOG: emit_math(g, sb, e, "log"); return;
  case TC_OP_LOG2: emit_math(g, sb, e, "log2"); return;
  case TC_OP_SQRT: emit_math(g, sb, e, "sqrt"); return;
  case TC_OP_RSQRT: emit_rounded(g, sb, e, d.code == TC_DT_FLOAT64 ? "(1.0 / sqrt(" : "(1.0f / sqrtf(", "", "))"); return;
  case TC_OP_TANH: emit_math(g, sb, e, "tanh"); return;
  case TC_OP_SIGMOID:
    emit_rounded(g, sb, e, d.code == TC_DT_FLOAT64 ? "(1.0 / (1.0 + exp(-" : "(1.0f / (1.0f + expf(-", "", ")))");
    return;
  case TC_OP_SIN: emit_math(g, sb, e, "sin"); return;
  case TC_OP_COS: emit_math(g, sb, e, "cos"); return;
  case TC_OP_FLOOR: emit_math(g, sb, e, "floor"); return;
  case TC_OP_CEIL: emit_math(g, sb, e, "ceil"); return;
  case TC_OP_ABS:
    if (fl) emit_math(g, sb, e, "fabs");
    else emit_rounded(g, sb, e, "tcg_abs_i(", "", ")");
    return;
  case TC_OP_CALL:
    tc_cg_fail(g, e->loc, "the cpu backend does not implement the intrinsic %s", e->callee ? e->callee : "?");
    tc_sb_puts(sb, "0");
    return;
  default:
    tc_cg_fail(g, e->loc, "the cpu backend does not support expression '%s'", tc_expr_op_name(e->op));
    tc_sb_puts(sb, "0");
    return;
  }
}

void tc_cg_index_expr(tc_cg *g, tc_strbuf *sb, const tc_expr *e) {
  bool was = g->index_ctx;
  g->index_ctx = true;
  tc_cg_expr(g, sb, e);
  g->index_ctx = was;
}

void tc_cg_expr_as(tc_cg *g, tc_strbuf *sb, const tc_expr *e, tc_dtype to) {
  tc_strbuf t;
  tc_sb_init(&t);
  tc_cg_expr(g, &t, e);
  tc_cg_convert(sb, e->dtype, to, tc_sb_cstr(&t));
  tc_sb_free(&t);
}

/* ---- statements ---- */
static void emit_block_stmts(tc_cg *g, const tc_stmt *s) {
  g->ind++;
  tc_cg_stmt(g, s);
  g->ind--;
}

/* The in-bounds condition of a global element access (text), or NULL when none is needed. */
static char *elem_inb(tc_cg *g, const tc_buffer *b, int nidx, tc_expr *const *idx) {
  if (b->scope != TC_SCOPE_GLOBAL || g->unchecked) return NULL;
  tc_strbuf c;
  tc_sb_init(&c);
  for (int j = 0; j < nidx; j++) {
    if (j) tc_sb_puts(&c, " && ");
    tc_sb_puts(&c, "tcg_inb(");
    tc_cg_index_expr(g, &c, idx[j]);
    tc_sb_puts(&c, ", ");
    tc_cg_dim(g, &c, b, j);
    tc_sb_puts(&c, ")");
  }
  if (nidx == 0) tc_sb_puts(&c, "1");
  return tc_sb_take(&c);
}

static void emit_store(tc_cg *g, const tc_buffer *b, int nidx, tc_expr *const *idx, const tc_expr *value) {
  tc_strbuf val;
  tc_sb_init(&val);
  tc_cg_expr_as(g, &val, value, b->dtype);
  tc_cg_store_text(g, b, nidx, idx, tc_sb_cstr(&val));
  tc_sb_free(&val);
}

void tc_cg_store_text(tc_cg *g, const tc_buffer *b, int nidx, tc_expr *const *idx, const char *valtext) {
  tc_strbuf off, line;
  tc_sb_init(&off);
  tc_sb_init(&line);
  tc_cg_offset(g, &off, b, nidx, idx);
  tc_cg_store_at(g, &line, b, tc_sb_cstr(&off), valtext);
  char *cond = elem_inb(g, b, nidx, idx);
  if (cond) tc_cg_line(g, "if (%s) %s", cond, tc_sb_cstr(&line));
  else tc_cg_line(g, "%s", tc_sb_cstr(&line));
  free(cond);
  tc_sb_free(&off);
  tc_sb_free(&line);
}

static void emit_atomic_elem(tc_cg *g, const tc_stmt *s) {
  const tc_buffer *b = s->u.atomic.buf;
  tc_strbuf off, val;
  tc_sb_init(&off);
  tc_sb_init(&val);
  tc_cg_offset(g, &off, b, s->u.atomic.nidx, s->u.atomic.idx);
  tc_cg_expr_as(g, &val, s->u.atomic.value, b->dtype);
  char *cond = elem_inb(g, b, s->u.atomic.nidx, s->u.atomic.idx);
  const char *nm = c_name(g, b->name, b->id);
  /* global: other blocks run on other OS threads, so a real atomic */
  tc_strbuf line;
  tc_sb_init(&line);
  if (b->scope == TC_SCOPE_GLOBAL) {
    tc_sb_printf(&line, "tcg_atomic_add_%s(%s, %s, %s);", tc_cg_dtname(b->dtype), nm, tc_sb_cstr(&off), tc_sb_cstr(&val));
  } else {
    /* a block runs on one OS thread: shared/local memory needs no atomic instruction */
    tc_strbuf cur, sum;
    tc_sb_init(&cur);
    tc_sb_init(&sum);
    tc_cg_load_at(g, &cur, b, tc_sb_cstr(&off));
    tc_sb_printf(&sum, "(%s + %s)", tc_sb_cstr(&cur), tc_sb_cstr(&val));
    tc_strbuf r;
    tc_sb_init(&r);
    tc_cg_round(&r, b->dtype, tc_sb_cstr(&sum));
    tc_cg_store_at(g, &line, b, tc_sb_cstr(&off), tc_sb_cstr(&r));
    tc_sb_free(&cur);
    tc_sb_free(&sum);
    tc_sb_free(&r);
  }
  if (cond) tc_cg_line(g, "if (%s) %s", cond, tc_sb_cstr(&line));
  else tc_cg_line(g, "%s", tc_sb_cstr(&line));
  free(cond);
  tc_sb_free(&line);
  tc_sb_free(&off);
  tc_sb_free(&val);
}

static void c_string(tc_strbuf *sb, const char *s) {
  tc_sb_putc(sb, '"');
  for (const char *p = s ? s : ""; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') tc_sb_printf(sb, "\\%c", c);
    else if (c == '%') tc_sb_puts(sb, "%%");
    else if (c < 32 || c > 126) tc_sb_printf(sb, "\\%03o", c);
    else tc_sb_putc(sb, (char)c);
  }
  tc_sb_putc(sb, '"');
}

static void emit_print(tc_cg *g, const tc_stmt *s) {
  tc_strbuf msg;
  tc_sb_init(&msg);
  c_string(&msg, s->u.print.msg ? s->u.print.msg : "");
  const char *who = g->in_threads ? "thread %d" : "block";
  if (s->u.print.value) {
    const tc_expr *v = s->u.print.value;
    tc_strbuf val;
    tc_sb_init(&val);
    tc_cg_expr(g, &val, v);
    bool fl = is_float(v->dtype);
    tc_cg_line(g, "printf(\"[block (%%d, %%d, %%d) %s] %%s%s\\n\", (int)tcg_bx, (int)tcg_by, (int)tcg_bz, %s%s, %s(%s));",
               who, fl ? "%.9g" : "%lld", g->in_threads ? "(int)tcg_tid, " : "", tc_sb_cstr(&msg),
               fl ? "(double)" : "(long long)", tc_sb_cstr(&val));
    tc_sb_free(&val);
  } else if (s->u.print.buf) {
    const tc_buffer *b = s->u.print.buf;
    int64_t n = tc_buffer_numel(b);
    if (n < 0) {
      tc_cg_fail(g, s->loc, "T.print of a buffer with a symbolic shape is not supported on cpu");
    } else {
      int id = g->uniq++;
      tc_cg_line(g, "printf(\"[block (%%d, %%d, %%d) %s] %%s\", (int)tcg_bx, (int)tcg_by, (int)tcg_bz, %s%s);", who,
                 g->in_threads ? "(int)tcg_tid, " : "", tc_sb_cstr(&msg));
      tc_strbuf off, ld;
      tc_sb_init(&off);
      tc_sb_init(&ld);
      tc_sb_printf(&off, "tcg_p%d", id);
      tc_cg_buf_copy_offset(g, &off, b);
      tc_cg_load_at(g, &ld, b, tc_sb_cstr(&off));
      tc_cg_line(g, "for (int64_t tcg_p%d = 0; tcg_p%d < %lld; tcg_p%d++) printf(\" %s\", %s(%s));", id, id,
                 (long long)n, id, is_float(b->dtype) ? "%.9g" : "%lld",
                 is_float(b->dtype) ? "(double)" : "(long long)", tc_sb_cstr(&ld));
      tc_cg_line(g, "printf(\"\\n\");");
      tc_sb_free(&off);
      tc_sb_free(&ld);
    }
  }
  tc_sb_free(&msg);
}

void tc_cg_stmt(tc_cg *g, const tc_stmt *s) {
  if (!s || g->failed) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) tc_cg_stmt(g, s->u.seq.items[i]);
    return;
  case TC_ST_ALLOC: {
    const tc_buffer *b = s->u.alloc.buf;
    if (b->init) {
      tc_expr *zero = tc_ir_int(g->a, 0, tc_index_dtype(), b->loc);
      tc_expr *idx[1] = {zero};
      emit_store(g, b, b->ndim > 0 ? 1 : 0, idx, b->init);
    }
    return;
  }
  case TC_ST_FOR: {
    if (s->u.loop.kind == TC_LOOP_PARALLEL) {
      tc_cg_parallel(g, s);
      return;
    }
    if (s->u.loop.kind == TC_LOOP_THREAD_BINDING) { /* made by GPU lowering only */
      tc_cg_fail(g, s->loc, "the cpu backend does not run thread-bound loops");
      return;
    }
    /* serial, pipelined, unroll and vectorized loops are all plain C loops here; the C
     * compiler vectorizes what it can */
    const tc_var *v = s->u.loop.var;
    const char *nm = c_name(g, v->name, v->id);
    tc_strbuf lo, ext;
    tc_sb_init(&lo);
    tc_sb_init(&ext);
    tc_cg_index_expr(g, &lo, s->u.loop.min);
    tc_cg_index_expr(g, &ext, s->u.loop.extent);
    const char *ct = tc_cg_ctype(v->dtype);
    tc_cg_line(g, "for (%s %s = %s, %s_end = (%s)(%s + %s); %s < %s_end; %s++) {", ct, nm, tc_sb_cstr(&lo), nm, ct,
               tc_sb_cstr(&lo), tc_sb_cstr(&ext), nm, nm, nm);
    tc_sb_free(&lo);
    tc_sb_free(&ext);
    emit_block_stmts(g, s->u.loop.body);
    tc_cg_line(g, "}");
    return;
  }
  case TC_ST_IF: {
    tc_strbuf c;
    tc_sb_init(&c);
    tc_cg_expr(g, &c, s->u.if_.cond);
    tc_cg_line(g, "if (%s) {", tc_sb_cstr(&c));
    tc_sb_free(&c);
    emit_block_stmts(g, s->u.if_.then_s);
    if (s->u.if_.else_s) {
      tc_cg_line(g, "} else {");
      emit_block_stmts(g, s->u.if_.else_s);
    }
    tc_cg_line(g, "}");
    return;
  }
  case TC_ST_STORE: emit_store(g, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->u.store.value); return;
  case TC_ST_LET:
  case TC_ST_ASSIGN: {
    tc_strbuf lhs, rhs;
    tc_sb_init(&lhs);
    tc_sb_init(&rhs);
    var_ref(g, &lhs, s->u.let.var);
    tc_cg_expr_as(g, &rhs, s->u.let.value, s->u.let.var->dtype);
    tc_cg_line(g, "%s = %s;", tc_sb_cstr(&lhs), tc_sb_cstr(&rhs));
    tc_sb_free(&lhs);
    tc_sb_free(&rhs);
    return;
  }
  case TC_ST_COPY: tc_cg_copy(g, s); return;
  case TC_ST_GEMM: tc_cg_gemm(g, s); return;
  case TC_ST_FILL: tc_cg_fill(g, s); return;
  case TC_ST_REDUCE: tc_cg_reduce(g, s); return;
  case TC_ST_CUMSUM: tc_cg_cumsum(g, s); return;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.dst.buf) tc_cg_atomic_tile(g, s);
    else emit_atomic_elem(g, s);
    return;
  case TC_ST_PRINT: emit_print(g, s); return;
  case TC_ST_BARRIER: tc_cg_line(g, "/* barrier */"); return;
  case TC_ST_ASSERT: {
    tc_strbuf c;
    tc_sb_init(&c);
    tc_cg_expr(g, &c, s->u.assert_.cond);
    int id = g->nasserts++;
    g->assert_msgs = tc_arena_grow(g->a, g->assert_msgs, sizeof(char *) * (size_t)id, sizeof(char *) * (size_t)(id + 1));
    g->assert_msgs[id] = s->u.assert_.msg ? s->u.assert_.msg : "assertion failed";
    tc_cg_line(g, "if (!(%s)) return %d;", tc_sb_cstr(&c), id + 1);
    tc_sb_free(&c);
    return;
  }
  case TC_ST_ANNOTATE: tc_cg_line(g, "/* %s (recorded, no effect on cpu) */", s->u.annotate.what ? s->u.annotate.what : "annotate"); return;
  case TC_ST_EVALUATE: {
    tc_strbuf c;
    tc_sb_init(&c);
    tc_cg_expr(g, &c, s->u.evaluate.value);
    tc_cg_line(g, "(void)(%s);", tc_sb_cstr(&c));
    tc_sb_free(&c);
    return;
  }
  case TC_ST_INTRINSIC:
    tc_cg_fail(g, s->loc, "the cpu backend does not implement the intrinsic %s", s->u.intrinsic.name ? s->u.intrinsic.name : "?");
    return;
  default: tc_cg_fail(g, s->loc, "the cpu backend does not support statement '%s'", tc_stmt_kind_name(s->kind)); return;
  }
}
