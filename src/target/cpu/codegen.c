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

/* ---- output helpers ---- */
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
  case TC_VAR_BLOCK_IDX: tc_sb_puts(sb, v->axis == 3 ? "tcg_launch" : bnames[ax]); return; /* 3: tc_kernel_ir.launch_var */
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

void tc_cg_layout_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, const char *const *idx_c) {
  const tc_layout *L = b->layout;
  for (int j = 0; j < L->ndim; j++)
    if (L->index[j]->id >= 0 && L->index[j]->id < g->P->nids) g->subst[L->index[j]->id] = tc_arena_printf(g->a, "(%s)", idx_c[j]);
  tc_sb_puts(sb, "(int64_t)(");
  tc_cg_index_expr(g, sb, L->offset);
  tc_sb_putc(sb, ')');
  for (int j = 0; j < L->ndim; j++)
    if (L->index[j]->id >= 0 && L->index[j]->id < g->P->nids) g->subst[L->index[j]->id] = NULL;
}

void tc_cg_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int nidx, tc_expr *const *idx) {
  if (tc_layout_on_global(b) && nidx == b->ndim) {
    const char *idx_c[16];
    for (int j = 0; j < nidx && j < 16; j++) {
      tc_strbuf t;
      tc_sb_init(&t);
      tc_sb_puts(&t, "(int64_t)(");
      tc_cg_index_expr(g, &t, idx[j]);
      tc_sb_putc(&t, ')');
      idx_c[j] = tc_arena_strdup(g->a, tc_sb_cstr(&t));
      tc_sb_free(&t);
    }
    tc_cg_layout_offset(g, sb, b, idx_c);
    return;
  }
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
  if (tc_dtype_is_packed4(d)) {
    if (d.code == TC_DT_INT4) tc_sb_printf(sb, "tcg_sx4(tcg_ld4(%s, %s))", nm, off);
    else if (d.code == TC_DT_UINT4) tc_sb_printf(sb, "tcg_ld4(%s, %s)", nm, off);
    else tc_sb_printf(sb, "tcg_%s_to_f32(tcg_ld4(%s, %s))", tc_dtype_elem_name(d), nm, off);
  } else if (tc_dtype_is_narrow_float(d)) {
    tc_sb_printf(sb, "tcg_%s_to_f32(%s[%s])", tc_dtype_elem_name(d), nm, off);
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
  if (tc_dtype_is_packed4(d)) {
    const char *st = global ? "tcg_st4_atomic" : "tcg_st4";
    if (d.code == TC_DT_FLOAT4_E2M1FN)
      tc_sb_printf(sb, "%s(%s, %s, tcg_f32_to_%s%s(%s));", st, nm, off, tc_dtype_elem_name(d), tc_dtype_store_saturates(d) ? "_sat" : "", val);
    else tc_sb_printf(sb, "%s(%s, %s, (uint8_t)((%s) & 15));", st, nm, off, val);
  } else if (tc_dtype_is_narrow_float(d)) {
    tc_sb_printf(sb, "%s[%s] = tcg_f32_to_%s%s(%s);", nm, off, tc_dtype_elem_name(d), tc_dtype_store_saturates(d) ? "_sat" : "", val);
  } else if (d.code == TC_DT_BOOL) {
    tc_sb_printf(sb, "%s[%s] = (uint8_t)((%s) != 0);", nm, off, val);
  } else {
    tc_sb_printf(sb, "%s[%s] = %s;", nm, off, val);
  }
}

/* ---- expressions: the shared C-family printer (target/cfamily.c) with cpu hooks ---- */
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
    tc_sb_printf(sb, " : (%s)0)", tc_dtype_c_compute(b->dtype));
  } else {
    tc_cg_load_at(g, sb, b, tc_sb_cstr(&off));
  }
  tc_sb_free(&off);
}

static void var_hook(tc_cf *p, tc_strbuf *sb, const tc_var *v) { var_ref((tc_cg *)p, sb, v); }
static void load_hook(tc_cf *p, tc_strbuf *sb, const tc_expr *e) { emit_load((tc_cg *)p, sb, e); }

const tc_cf_hooks tc_cpu_cf_hooks = {
    .ctype = tc_dtype_c_compute,
    .var = var_hook,
    .load = load_hook,
    .round = tc_cf_c_round,
    .cast = tc_cf_c_convert,
    .call = tc_cf_c_call,
};

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
  const tc_buffer *prev = s->u.atomic.prev; /* return_prev: the value before this thread's addition */
  tc_expr *zero = tc_ir_int(g->a, 0, tc_index_dtype(), s->loc);
  if (prev && b->scope == TC_SCOPE_GLOBAL) {
    tc_dtype d = b->dtype;
    bool ok = d.lanes == 1 && (d.code == TC_DT_FLOAT32 || d.code == TC_DT_FLOAT64 ||
                               (tc_dtype_is_int(d) && !tc_dtype_is_packed4(d) && d.code != TC_DT_BOOL));
    if (!ok) {
      tc_cf_fail(&g->cf, s->loc, "T.atomic_add(..., return_prev=True) on a global %s tensor is not supported by the cpu backend",
                 tc_dtype_elem_name(d));
    } else {
      tc_cg_line(g, "%s{", cond ? tc_arena_printf(g->a, "if (%s) ", cond) : "");
      g->ind++;
      tc_cg_line(g, "%s tcg_prev = tcg_atomic_fetch_add_%s(%s, %s, %s);", tc_dtype_c_storage(d), tc_dtype_elem_name(d), nm,
                 tc_sb_cstr(&off), tc_sb_cstr(&val));
      tc_cg_store_text(g, prev, 1, &zero, "tcg_prev");
      g->ind--;
      tc_cg_line(g, "}");
    }
    free(cond);
    tc_sb_free(&line);
    tc_sb_free(&off);
    tc_sb_free(&val);
    return;
  }
  if (b->scope == TC_SCOPE_GLOBAL) {
    tc_sb_printf(&line, "tcg_atomic_add_%s(%s, %s, %s);", tc_dtype_elem_name(b->dtype), nm, tc_sb_cstr(&off), tc_sb_cstr(&val));
  } else {
    /* a block runs on one OS thread: shared/local memory needs no atomic instruction */
    tc_strbuf cur, sum;
    tc_sb_init(&cur);
    tc_sb_init(&sum);
    tc_cg_load_at(g, &cur, b, tc_sb_cstr(&off));
    tc_sb_printf(&sum, "(%s + %s)", tc_sb_cstr(&cur), tc_sb_cstr(&val));
    tc_strbuf r;
    tc_sb_init(&r);
    tc_cf_c_round(&r, b->dtype, tc_sb_cstr(&sum));
    tc_cg_store_at(g, &line, b, tc_sb_cstr(&off), tc_sb_cstr(&r));
    if (prev) { /* this block's threads run one after another: read, keep, then add */
      if (cond) tc_cg_line(g, "if (%s) {", cond);
      if (cond) g->ind++;
      tc_cg_store_text(g, prev, 1, &zero, tc_sb_cstr(&cur));
      tc_cg_line(g, "%s", tc_sb_cstr(&line));
      if (cond) g->ind--;
      if (cond) tc_cg_line(g, "}");
      free(cond);
      cond = NULL;
      tc_sb_free(&line);
      tc_sb_init(&line);
    }
    tc_sb_free(&cur);
    tc_sb_free(&sum);
    tc_sb_free(&r);
  }
  if (cond) tc_cg_line(g, "if (%s) %s", cond, tc_sb_cstr(&line));
  else if (tc_sb_cstr(&line)[0]) tc_cg_line(g, "%s", tc_sb_cstr(&line));
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
    bool fl = tc_dtype_is_float(v->dtype);
    tc_cg_line(g, "printf(\"[block (%%d, %%d, %%d) %s] %%s%s\\n\", (int)tcg_bx, (int)tcg_by, (int)tcg_bz, %s%s, %s(%s));",
               who, fl ? "%.9g" : "%lld", g->in_threads ? "(int)tcg_tid, " : "", tc_sb_cstr(&msg),
               fl ? "(double)" : "(long long)", tc_sb_cstr(&val));
    tc_sb_free(&val);
  } else if (s->u.print.buf) {
    const tc_buffer *b = s->u.print.buf;
    int64_t n = tc_buffer_numel(b);
    if (n < 0) {
      tc_cf_fail(&g->cf, s->loc, "T.print of a buffer with a symbolic shape is not supported on cpu");
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
                 (long long)n, id, tc_dtype_is_float(b->dtype) ? "%.9g" : "%lld",
                 tc_dtype_is_float(b->dtype) ? "(double)" : "(long long)", tc_sb_cstr(&ld));
      tc_cg_line(g, "printf(\"\\n\");");
      tc_sb_free(&off);
      tc_sb_free(&ld);
    }
  }
  tc_sb_free(&msg);
}

void tc_cg_stmt(tc_cg *g, const tc_stmt *s) {
  if (!s || g->cf.failed) return;
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
      tc_cf_fail(&g->cf, s->loc, "the cpu backend does not run thread-bound loops");
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
    const char *ct = tc_dtype_c_compute(v->dtype);
    tc_cg_line(g, "for (%s %s = %s, %s_end = (%s)(%s + %s); %s < %s_end; %s++) {", ct, nm, tc_sb_cstr(&lo), nm, ct,
               tc_sb_cstr(&lo), tc_sb_cstr(&ext), nm, nm, nm);
    tc_sb_free(&lo);
    tc_sb_free(&ext);
    emit_block_stmts(g, s->u.loop.body);
    tc_cg_line(g, "}");
    return;
  }
  case TC_ST_WHILE: {
    tc_strbuf c;
    tc_sb_init(&c);
    tc_cg_expr(g, &c, s->u.while_.cond);
    tc_cg_line(g, "while (%s) {", tc_sb_cstr(&c));
    tc_sb_free(&c);
    emit_block_stmts(g, s->u.while_.body);
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
    tc_cf_fail(&g->cf, s->loc, "the cpu backend does not implement the intrinsic %s", s->u.intrinsic.name ? s->u.intrinsic.name : "?");
    return;
  default: tc_cf_fail(&g->cf, s->loc, "the cpu backend does not support statement '%s'", tc_stmt_kind_name(s->kind)); return;
  }
}
