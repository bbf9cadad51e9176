/* print.c: the tile IR as readable, stable, Python-like text (what `tilec ir` prints and what
 * exact-text tests compare).
 *
 *   kernel main(A: float16[M, 1024], B: float16[1024, 1024], C: float16[M, 1024] output):
 *     symbolic M: int32
 *     with T.Kernel(8, (M + 127) // 128, threads=128) as (bx, by):
 *       A_shared = alloc shared float16[128, 32]
 *       for k in pipelined(0, 32, stages=3):
 *         T.copy(A[by * 128 : +128, k * 32 : +32], A_shared)
 *
 * Expressions use the fewest parentheses Python's precedence allows. Constants of the default
 * dtypes (int32, float32, bool) print bare; others as `float16(1.0)`. A region prints as the
 * buffer's name when it covers the whole buffer, else one `start : +extent` per dimension
 * (a bare `start` when the extent is 1). Two different variables or buffers with the same name
 * print as `name_id`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* ---- names ---- */
typedef struct name_entry {
  const void *ptr;
  const char *name;
  int id;
  bool dup;
  bool global; /* visible in the whole kernel: parameters, symbols, block and thread indices */
} name_entry;

typedef struct pctx {
  tc_strbuf *sb;
  name_entry *names; /* NULL when printing without a kernel: bare names */
  int nnames, cap;
  int *scope; /* indices into names of the body-level declarations visible at this point */
  int nscope, scope_cap;
} pctx;

/* A name needs its id only where it could be confused: two different variables or buffers of
 * the same name whose scopes overlap (one shadows the other, or one is kernel-wide). */
static int note_name(pctx *pc, const void *ptr, const char *name, int id) {
  if (!ptr) return -1;
  for (int i = 0; i < pc->nnames; i++)
    if (pc->names[i].ptr == ptr) return i;
  if (pc->nnames == pc->cap) {
    int cap = pc->cap ? pc->cap * 2 : 64;
    name_entry *n = realloc(pc->names, sizeof *n * (size_t)cap);
    if (!n) return -1; /* printing then falls back to bare names */
    pc->names = n;
    pc->cap = cap;
  }
  pc->names[pc->nnames] = (name_entry){ptr, name ? name : "?", id, false, true};
  return pc->nnames++;
}

static void declare_name(pctx *pc, const void *ptr, const char *name, int id) {
  bool fresh = true;
  for (int i = 0; i < pc->nnames; i++) fresh &= pc->names[i].ptr != ptr;
  int at = note_name(pc, ptr, name, id);
  if (at < 0) return;
  if (fresh) pc->names[at].global = false;
  for (int i = 0; i < pc->nscope; i++) {
    name_entry *o = &pc->names[pc->scope[i]];
    if (o->ptr != ptr && strcmp(o->name, pc->names[at].name) == 0) o->dup = pc->names[at].dup = true;
  }
  if (pc->nscope == pc->scope_cap) {
    int cap = pc->scope_cap ? pc->scope_cap * 2 : 32;
    int *n = realloc(pc->scope, sizeof *n * (size_t)cap);
    if (!n) return;
    pc->scope = n;
    pc->scope_cap = cap;
  }
  pc->scope[pc->nscope++] = at;
}

static void collect_expr(pctx *pc, const tc_expr *e) {
  if (!e) return;
  if (e->op == TC_OP_VAR && e->var) note_name(pc, e->var, e->var->name, e->var->id);
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && e->buf) note_name(pc, e->buf, e->buf->name, e->buf->id);
  for (int i = 0; i < e->nargs && e->args; i++) collect_expr(pc, e->args[i]);
}

static void collect_region(pctx *pc, const tc_region *r) {
  if (!r->buf) return;
  note_name(pc, r->buf, r->buf->name, r->buf->id);
  for (int i = 0; i < r->ndim && r->r; i++) collect_expr(pc, r->r[i].start);
}

static void collect_stmt(pctx *pc, const tc_stmt *s) {
  if (!s) return;
  int mark = pc->nscope;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) collect_stmt(pc, s->u.seq.items ? s->u.seq.items[i] : NULL);
    pc->nscope = mark;
    break;
  case TC_ST_ALLOC:
    if (s->u.alloc.buf) {
      collect_expr(pc, s->u.alloc.buf->init);
      declare_name(pc, s->u.alloc.buf, s->u.alloc.buf->name, s->u.alloc.buf->id);
    }
    break;
  case TC_ST_FOR:
    collect_expr(pc, s->u.loop.min);
    collect_expr(pc, s->u.loop.extent);
    if (s->u.loop.var) declare_name(pc, s->u.loop.var, s->u.loop.var->name, s->u.loop.var->id);
    collect_stmt(pc, s->u.loop.body);
    pc->nscope = mark;
    break;
  case TC_ST_WHILE:
    collect_expr(pc, s->u.while_.cond);
    collect_stmt(pc, s->u.while_.body);
    pc->nscope = mark;
    break;
  case TC_ST_IF:
    collect_expr(pc, s->u.if_.cond);
    collect_stmt(pc, s->u.if_.then_s);
    pc->nscope = mark;
    collect_stmt(pc, s->u.if_.else_s);
    pc->nscope = mark;
    break;
  case TC_ST_STORE:
    if (s->u.store.buf) note_name(pc, s->u.store.buf, s->u.store.buf->name, s->u.store.buf->id);
    for (int i = 0; i < s->u.store.nidx && s->u.store.idx; i++) collect_expr(pc, s->u.store.idx[i]);
    collect_expr(pc, s->u.store.value);
    break;
  case TC_ST_LET:
    collect_expr(pc, s->u.let.value);
    if (s->u.let.var) declare_name(pc, s->u.let.var, s->u.let.var->name, s->u.let.var->id);
    break;
  case TC_ST_ASSIGN:
    if (s->u.let.var) note_name(pc, s->u.let.var, s->u.let.var->name, s->u.let.var->id);
    collect_expr(pc, s->u.let.value);
    break;
  case TC_ST_COPY:
    collect_region(pc, &s->u.copy.src);
    collect_region(pc, &s->u.copy.dst);
    break;
  case TC_ST_GEMM:
    collect_region(pc, &s->u.gemm.a);
    collect_region(pc, &s->u.gemm.b);
    collect_region(pc, &s->u.gemm.c);
    break;
  case TC_ST_FILL:
    collect_region(pc, &s->u.fill.dst);
    collect_expr(pc, s->u.fill.value);
    break;
  case TC_ST_REDUCE:
    collect_region(pc, &s->u.reduce.src);
    collect_region(pc, &s->u.reduce.dst);
    break;
  case TC_ST_CUMSUM:
    collect_region(pc, &s->u.cumsum.src);
    collect_region(pc, &s->u.cumsum.dst);
    break;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) note_name(pc, s->u.atomic.buf, s->u.atomic.buf->name, s->u.atomic.buf->id);
    for (int i = 0; i < s->u.atomic.nidx && s->u.atomic.idx; i++) collect_expr(pc, s->u.atomic.idx[i]);
    collect_expr(pc, s->u.atomic.value);
    collect_region(pc, &s->u.atomic.dst);
    collect_region(pc, &s->u.atomic.src);
    break;
  case TC_ST_PRINT:
    collect_expr(pc, s->u.print.value);
    if (s->u.print.buf) note_name(pc, s->u.print.buf, s->u.print.buf->name, s->u.print.buf->id);
    break;
  case TC_ST_ASSERT:
    collect_expr(pc, s->u.assert_.cond);
    break;
  case TC_ST_EVALUATE:
    collect_expr(pc, s->u.evaluate.value);
    break;
  case TC_ST_INTRINSIC:
    for (int i = 0; i < s->u.intrinsic.nargs && s->u.intrinsic.args; i++) collect_expr(pc, s->u.intrinsic.args[i]);
    break;
  default:
    break;
  }
}

static void mark_duplicates(pctx *pc) {
  for (int i = 0; i < pc->nnames; i++)
    for (int j = i + 1; j < pc->nnames; j++)
      if ((pc->names[i].global || pc->names[j].global) && strcmp(pc->names[i].name, pc->names[j].name) == 0)
        pc->names[i].dup = pc->names[j].dup = true;
}

static void put_name(pctx *pc, const void *ptr, const char *name) {
  tc_sb_puts(pc->sb, name ? name : "?");
  for (int i = 0; i < pc->nnames; i++)
    if (pc->names[i].ptr == ptr) {
      if (pc->names[i].dup) tc_sb_printf(pc->sb, "_%d", pc->names[i].id);
      return;
    }
}

static void put_dtype(tc_strbuf *sb, tc_dtype d) {
  char buf[64];
  if (!tc_dtype_valid(d)) {
    tc_sb_puts(sb, "<invalid dtype>");
    return;
  }
  tc_sb_puts(sb, tc_dtype_name(d, buf, sizeof buf));
}

static void put_string_literal(tc_strbuf *sb, const char *s) {
  tc_sb_putc(sb, '"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') tc_sb_printf(sb, "\\%c", c);
    else if (c == '\n') tc_sb_puts(sb, "\\n");
    else if (c == '\t') tc_sb_puts(sb, "\\t");
    else if (c < 0x20 || c == 0x7f) tc_sb_printf(sb, "\\x%02x", c);
    else tc_sb_putc(sb, (char)c);
  }
  tc_sb_putc(sb, '"');
}

/* The shortest text that reads back as the same double, always with a '.' or exponent. */
static void put_float(tc_strbuf *sb, double v) {
  if (isnan(v)) {
    tc_sb_puts(sb, "nan");
    return;
  }
  if (isinf(v)) {
    tc_sb_puts(sb, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  tc_sb_puts(sb, buf);
  if (!strpbrk(buf, ".e")) tc_sb_puts(sb, ".0");
}

/* ---- expressions ---- */
enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_BOR, P_BXOR, P_BAND, P_SHIFT, P_ADD, P_MUL, P_UNARY, P_ATOM = 13 };

static bool is_default_dtype(tc_dtype d, tc_scalar_type t) { return d.code == t && d.lanes == 1; }

/* T.ceildiv(x, y) reaches the IR as (x + y - 1) // y; print it the way it was written. */
static bool same_expr(const tc_expr *a, const tc_expr *b) {
  if (a == b) return true;
  if (!a || !b || a->op != b->op || a->nargs != b->nargs || !tc_dtype_eq(a->dtype, b->dtype)) return false;
  if (a->op == TC_OP_CONST_INT) return a->ival == b->ival;
  if (a->op == TC_OP_VAR) return a->var == b->var;
  if (a->op != TC_OP_ADD && a->op != TC_OP_SUB && a->op != TC_OP_MUL && a->op != TC_OP_FLOORDIV && a->op != TC_OP_CAST)
    return false;
  for (int i = 0; i < a->nargs; i++)
    if (!same_expr(a->args[i], b->args[i])) return false;
  return true;
}

static bool is_ceildiv(const tc_expr *e) {
  if (e->op != TC_OP_FLOORDIV || e->nargs != 2) return false;
  const tc_expr *s = e->args[0];
  if (!s || s->op != TC_OP_SUB || s->nargs != 2 || !s->args[1] || s->args[1]->op != TC_OP_CONST_INT || s->args[1]->ival != 1)
    return false;
  const tc_expr *add = s->args[0];
  return add && add->op == TC_OP_ADD && add->nargs == 2 && same_expr(add->args[1], e->args[1]);
}

static int expr_prec(const tc_expr *e) {
  if (!e || is_ceildiv(e)) return P_ATOM;
  switch (e->op) {
  case TC_OP_CONST_INT:
    return (is_default_dtype(e->dtype, TC_DT_INT32) && e->ival < 0) ? P_UNARY : P_ATOM;
  case TC_OP_CONST_FLOAT:
    return (is_default_dtype(e->dtype, TC_DT_FLOAT32) && signbit(e->fval) && !isnan(e->fval)) ? P_UNARY : P_ATOM;
  case TC_OP_OR: return P_OR;
  case TC_OP_AND: return P_AND;
  case TC_OP_NOT: return P_NOT;
  case TC_OP_EQ: case TC_OP_NE: case TC_OP_LT: case TC_OP_LE: case TC_OP_GT: case TC_OP_GE: return P_CMP;
  case TC_OP_BIT_OR: return P_BOR;
  case TC_OP_BIT_XOR: return P_BXOR;
  case TC_OP_BIT_AND: return P_BAND;
  case TC_OP_SHL: case TC_OP_SHR: return P_SHIFT;
  case TC_OP_ADD: case TC_OP_SUB: return P_ADD;
  case TC_OP_MUL: case TC_OP_DIV: case TC_OP_FLOORDIV: case TC_OP_FLOORMOD: return P_MUL;
  case TC_OP_NEG: case TC_OP_BIT_NOT: return P_UNARY;
  default: return P_ATOM;
  }
}

static void print_expr(pctx *pc, const tc_expr *e, int min_prec);
static void print_indices(pctx *pc, const tc_buffer *b, int n, tc_expr *const *idx);

static void print_arg(pctx *pc, const tc_expr *e, int i, int min_prec) {
  print_expr(pc, (e->args && i < e->nargs) ? e->args[i] : NULL, min_prec);
}

static void print_call(pctx *pc, const char *fn, const tc_expr *e) {
  tc_sb_puts(pc->sb, fn);
  tc_sb_putc(pc->sb, '(');
  for (int i = 0; i < e->nargs; i++) {
    if (i) tc_sb_puts(pc->sb, ", ");
    print_arg(pc, e, i, 0);
  }
  tc_sb_putc(pc->sb, ')');
}

static void print_const(pctx *pc, const tc_expr *e) {
  tc_strbuf *sb = pc->sb;
  if (e->op == TC_OP_CONST_INT) {
    if (is_default_dtype(e->dtype, TC_DT_BOOL)) {
      tc_sb_puts(sb, e->ival ? "True" : "False");
    } else if (is_default_dtype(e->dtype, TC_DT_INT32)) {
      tc_sb_printf(sb, "%lld", (long long)e->ival);
    } else {
      put_dtype(sb, e->dtype);
      tc_sb_printf(sb, "(%lld)", (long long)e->ival);
    }
    return;
  }
  if (is_default_dtype(e->dtype, TC_DT_FLOAT32)) {
    put_float(sb, e->fval);
  } else {
    put_dtype(sb, e->dtype);
    tc_sb_putc(sb, '(');
    put_float(sb, e->fval);
    tc_sb_putc(sb, ')');
  }
}

static void print_expr(pctx *pc, const tc_expr *e, int min_prec) {
  tc_strbuf *sb = pc->sb;
  if (!e) {
    tc_sb_puts(sb, "<null>");
    return;
  }
  int p = expr_prec(e);
  bool paren = p < min_prec;
  if (paren) tc_sb_putc(sb, '(');
  int arity = tc_expr_op_arity(e->op);
  if (arity >= 0 && e->nargs != arity && e->op != TC_OP_CONST_INT && e->op != TC_OP_CONST_FLOAT && e->op != TC_OP_VAR) {
    /* malformed: show what is there, for the verifier's messages */
    print_call(pc, tc_expr_op_name(e->op), e);
    if (paren) tc_sb_putc(sb, ')');
    return;
  }
  if (is_ceildiv(e)) {
    tc_sb_puts(sb, "T.ceildiv(");
    print_expr(pc, e->args[0]->args[0]->args[0], 0);
    tc_sb_puts(sb, ", ");
    print_arg(pc, e, 1, 0);
    tc_sb_putc(sb, ')');
    if (paren) tc_sb_putc(sb, ')');
    return;
  }
  switch (e->op) {
  case TC_OP_CONST_INT:
  case TC_OP_CONST_FLOAT:
    print_const(pc, e);
    break;
  case TC_OP_VAR:
    if (e->var) put_name(pc, e->var, e->var->name);
    else tc_sb_puts(sb, "<null var>");
    break;
  case TC_OP_LOAD:
    if (e->buf) put_name(pc, e->buf, e->buf->name);
    else tc_sb_puts(sb, "<null buffer>");
    tc_sb_putc(sb, '[');
    for (int i = 0; i < e->nargs; i++) {
      if (i) tc_sb_puts(sb, ", ");
      print_arg(pc, e, i, 0);
    }
    tc_sb_putc(sb, ']');
    break;
  case TC_OP_ADDRESS_OF:
    tc_sb_puts(sb, "T.address_of(");
    print_indices(pc, e->buf, e->nargs, e->args);
    tc_sb_putc(sb, ')');
    break;
  case TC_OP_CALL: /* intrinsics print as @name(args) */
    tc_sb_putc(sb, '@');
    print_call(pc, e->callee ? e->callee : "<null>", e);
    break;
  case TC_OP_CAST:
    tc_sb_puts(sb, "cast(");
    put_dtype(sb, e->dtype);
    tc_sb_puts(sb, ", ");
    print_arg(pc, e, 0, 0);
    tc_sb_putc(sb, ')');
    break;
  case TC_OP_SELECT:
  case TC_OP_MIN:
  case TC_OP_MAX:
  case TC_OP_POW:
    print_call(pc, tc_expr_op_name(e->op), e);
    break;
  case TC_OP_NEG:
    tc_sb_putc(sb, '-');
    print_arg(pc, e, 0, P_UNARY + 1);
    break;
  case TC_OP_BIT_NOT:
    tc_sb_putc(sb, '~');
    print_arg(pc, e, 0, P_UNARY + 1);
    break;
  case TC_OP_NOT:
    tc_sb_puts(sb, "not ");
    print_arg(pc, e, 0, P_NOT);
    break;
  default:
    if (tc_expr_op_class(e->op) == TC_CLS_MATH || e->op == TC_OP_ABS) {
      print_call(pc, tc_expr_op_name(e->op), e);
    } else if (arity == 2) {
      bool cmp = p == P_CMP;
      print_arg(pc, e, 0, cmp ? p + 1 : p);
      tc_sb_printf(sb, " %s ", tc_expr_op_name(e->op));
      print_arg(pc, e, 1, p + 1);
    } else {
      print_call(pc, tc_expr_op_name(e->op), e);
    }
    break;
  }
  if (paren) tc_sb_putc(sb, ')');
}

void tc_ir_print_expr(tc_strbuf *sb, const tc_expr *e) {
  pctx pc = {sb, NULL, 0, 0, NULL, 0, 0};
  print_expr(&pc, e, 0);
}

/* ---- regions and statements ---- */
static bool region_is_whole(const tc_region *r) {
  if (!r->r || r->ndim != r->buf->ndim) return false;
  for (int i = 0; i < r->ndim; i++) {
    int64_t start, dim;
    if (!tc_expr_const_int(r->r[i].start, &start) || start != 0) return false;
    if (!tc_expr_const_int(r->buf->shape[i], &dim) || dim != r->r[i].extent) return false;
  }
  return true;
}

static void print_region(pctx *pc, const tc_region *r) {
  tc_strbuf *sb = pc->sb;
  if (!r->buf) {
    tc_sb_puts(sb, "<no region>");
    return;
  }
  put_name(pc, r->buf, r->buf->name);
  if (region_is_whole(r)) return;
  tc_sb_putc(sb, '[');
  for (int i = 0; i < r->ndim && r->r; i++) {
    if (i) tc_sb_puts(sb, ", ");
    print_expr(pc, r->r[i].start, 0);
    if (r->r[i].extent != 1) tc_sb_printf(sb, " : +%lld", (long long)r->r[i].extent);
  }
  tc_sb_putc(sb, ']');
}

static void print_shape(pctx *pc, const tc_buffer *b) {
  tc_sb_putc(pc->sb, '[');
  for (int i = 0; i < b->ndim; i++) {
    if (i) tc_sb_puts(pc->sb, ", ");
    print_expr(pc, b->shape ? b->shape[i] : NULL, 0);
  }
  tc_sb_putc(pc->sb, ']');
}

static void print_indices(pctx *pc, const tc_buffer *b, int n, tc_expr *const *idx) {
  if (b) put_name(pc, b, b->name);
  else tc_sb_puts(pc->sb, "<null buffer>");
  tc_sb_putc(pc->sb, '[');
  for (int i = 0; i < n; i++) {
    if (i) tc_sb_puts(pc->sb, ", ");
    print_expr(pc, idx ? idx[i] : NULL, 0);
  }
  tc_sb_putc(pc->sb, ']');
}

/* The loop's upper bound min + extent, folded when both are constants. */
static void print_loop_stop(pctx *pc, const tc_expr *min, const tc_expr *extent) {
  int64_t a, b;
  if (tc_expr_const_int(min, &a) && a == 0) {
    print_expr(pc, extent, 0);
  } else if (tc_expr_const_int(min, &a) && tc_expr_const_int(extent, &b)) {
    tc_sb_printf(pc->sb, "%lld", (long long)(a + b));
  } else {
    print_expr(pc, min, P_ADD);
    tc_sb_puts(pc->sb, " + ");
    print_expr(pc, extent, P_ADD + 1);
  }
}

static void print_stmt(pctx *pc, const tc_stmt *s, int ind);

static const char *axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : axis == 2 ? "z" : "?"; }

static void print_int_list(tc_strbuf *sb, const tc_int_list *l) {
  tc_sb_putc(sb, '[');
  for (int i = 0; i < l->n && l->v; i++) tc_sb_printf(sb, "%s%d", i ? ", " : "", l->v[i]);
  tc_sb_putc(sb, ']');
}

static void print_int_lists(tc_strbuf *sb, const tc_int_lists *l) {
  tc_sb_putc(sb, '[');
  for (int i = 0; i < l->n && l->v; i++) {
    if (i) tc_sb_puts(sb, ", ");
    print_int_list(sb, &l->v[i]);
  }
  tc_sb_putc(sb, ']');
}

/* T.Pipelined's arguments, each only when given */
static void print_pipeline(tc_strbuf *sb, const tc_stmt *s) {
  const tc_pipeline_args *p = &s->u.loop.pipeline;
  if (s->u.loop.num_stages > 0) tc_sb_printf(sb, ", stages=%d", s->u.loop.num_stages);
  if (p->order.n) tc_sb_puts(sb, ", order="), print_int_list(sb, &p->order);
  if (p->stage.n) tc_sb_puts(sb, ", stage="), print_int_list(sb, &p->stage);
  if (p->sync.n) tc_sb_puts(sb, ", sync="), print_int_lists(sb, &p->sync);
  if (p->group.n) tc_sb_puts(sb, ", group="), print_int_lists(sb, &p->group);
}

static void print_body(pctx *pc, const tc_stmt *s, int ind) {
  if (!s) {
    tc_sb_indent(pc->sb, ind);
    tc_sb_puts(pc->sb, "<null>\n");
    return;
  }
  if (s->kind == TC_ST_SEQ && s->u.seq.n == 0) {
    tc_sb_indent(pc->sb, ind);
    tc_sb_puts(pc->sb, "pass\n");
    return;
  }
  print_stmt(pc, s, ind);
}

static void print_if(pctx *pc, const tc_stmt *s, int ind, const char *kw) {
  tc_strbuf *sb = pc->sb;
  tc_sb_printf(sb, "%s ", kw);
  print_expr(pc, s->u.if_.cond, 0);
  tc_sb_puts(sb, ":\n");
  print_body(pc, s->u.if_.then_s, ind + 1);
  const tc_stmt *e = s->u.if_.else_s;
  if (!e) return;
  tc_sb_indent(sb, ind);
  if (e->kind == TC_ST_IF) {
    print_if(pc, e, ind, "elif");
  } else {
    tc_sb_puts(sb, "else:\n");
    print_body(pc, e, ind + 1);
  }
}

static void print_stmt(pctx *pc, const tc_stmt *s, int ind) {
  tc_strbuf *sb = pc->sb;
  if (s && s->kind == TC_ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) print_stmt(pc, s->u.seq.items ? s->u.seq.items[i] : NULL, ind);
    return;
  }
  tc_sb_indent(sb, ind);
  if (!s) {
    tc_sb_puts(sb, "<null>\n");
    return;
  }
  switch (s->kind) {
  case TC_ST_ALLOC: {
    const tc_buffer *b = s->u.alloc.buf;
    if (!b) {
      tc_sb_puts(sb, "<null> = alloc\n");
      return;
    }
    put_name(pc, b, b->name);
    tc_sb_printf(sb, " = alloc %s ", tc_scope_name(b->scope));
    put_dtype(sb, b->dtype);
    print_shape(pc, b);
    if (b->init) {
      tc_sb_puts(sb, " init ");
      print_expr(pc, b->init, 0);
    }
    if (b->layout) {
      tc_sb_puts(sb, " layout=");
      tc_layout_print(sb, b->layout);
    }
    if (b->view_of) {
      tc_sb_puts(sb, " view of ");
      put_name(pc, b->view_of, b->view_of->name);
    }
    break;
  }
  case TC_ST_FOR:
    tc_sb_puts(sb, "for ");
    if (s->u.loop.var) put_name(pc, s->u.loop.var, s->u.loop.var->name);
    else tc_sb_puts(sb, "<null var>");
    tc_sb_printf(sb, " in %s(", tc_loop_kind_name(s->u.loop.kind));
    print_expr(pc, s->u.loop.min, 0);
    tc_sb_puts(sb, ", ");
    print_loop_stop(pc, s->u.loop.min, s->u.loop.extent);
    if (s->u.loop.kind == TC_LOOP_PIPELINED) print_pipeline(sb, s);
    if (s->u.loop.kind == TC_LOOP_THREAD_BINDING) tc_sb_printf(sb, ", axis=%s", axis_name(s->u.loop.thread_axis));
    if (s->u.loop.ws_split) tc_sb_puts(sb, ", warp_specialized=True");
    if (s->u.loop.ws_rotated) tc_sb_puts(sb, ", rotated=True");
    tc_sb_puts(sb, "):\n");
    print_body(pc, s->u.loop.body, ind + 1);
    return;
  case TC_ST_IF:
    print_if(pc, s, ind, "if");
    return;
  case TC_ST_WHILE:
    tc_sb_puts(sb, "while ");
    print_expr(pc, s->u.while_.cond, 0);
    tc_sb_puts(sb, ":\n");
    print_body(pc, s->u.while_.body, ind + 1);
    return;
  case TC_ST_STORE:
    print_indices(pc, s->u.store.buf, s->u.store.nidx, s->u.store.idx);
    tc_sb_puts(sb, " = ");
    print_expr(pc, s->u.store.value, 0);
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    if (s->u.let.var) put_name(pc, s->u.let.var, s->u.let.var->name);
    else tc_sb_puts(sb, "<null var>");
    if (s->kind == TC_ST_LET) {
      tc_sb_puts(sb, ": ");
      if (s->u.let.var) put_dtype(sb, s->u.let.var->dtype);
    }
    tc_sb_puts(sb, " = ");
    print_expr(pc, s->u.let.value, 0);
    break;
  case TC_ST_COPY:
    tc_sb_puts(sb, "T.copy(");
    print_region(pc, &s->u.copy.src);
    tc_sb_puts(sb, ", ");
    print_region(pc, &s->u.copy.dst);
    if (s->u.copy.coalesced_width) tc_sb_printf(sb, ", coalesced_width=%d", s->u.copy.coalesced_width);
    if (s->u.copy.disable_tma) tc_sb_puts(sb, ", disable_tma=True");
    if (s->u.copy.eviction_policy != TC_EVICT_NORMAL)
      tc_sb_printf(sb, ", eviction_policy=\"%s\"", tc_eviction_policy_name(s->u.copy.eviction_policy));
    tc_sb_putc(sb, ')');
    break;
  case TC_ST_GEMM:
    tc_sb_puts(sb, "T.gemm(");
    print_region(pc, &s->u.gemm.a);
    tc_sb_puts(sb, ", ");
    print_region(pc, &s->u.gemm.b);
    tc_sb_puts(sb, ", ");
    print_region(pc, &s->u.gemm.c);
    if (s->u.gemm.trans_a) tc_sb_puts(sb, ", transpose_A=True");
    if (s->u.gemm.trans_b) tc_sb_puts(sb, ", transpose_B=True");
    if (s->u.gemm.clear_accum) tc_sb_puts(sb, ", clear_accum=True");
    if (s->u.gemm.policy != TC_POLICY_SQUARE)
      tc_sb_printf(sb, ", policy=T.GemmWarpPolicy.%s", tc_gemm_policy_name(s->u.gemm.policy));
    if (s->u.gemm.k_pack > 1) tc_sb_printf(sb, ", k_pack=%d", s->u.gemm.k_pack);
    if (s->u.gemm.wg_wait != 0) tc_sb_printf(sb, ", wg_wait=%d", s->u.gemm.wg_wait);
    tc_sb_putc(sb, ')');
    break;
  case TC_ST_FILL:
    tc_sb_puts(sb, "T.fill(");
    print_region(pc, &s->u.fill.dst);
    tc_sb_puts(sb, ", ");
    print_expr(pc, s->u.fill.value, 0);
    tc_sb_putc(sb, ')');
    break;
  case TC_ST_REDUCE:
    tc_sb_printf(sb, "T.reduce_%s(", tc_reduce_kind_name(s->u.reduce.op));
    print_region(pc, &s->u.reduce.src);
    tc_sb_puts(sb, ", ");
    print_region(pc, &s->u.reduce.dst);
    tc_sb_printf(sb, ", dim=%d, clear=%s)", s->u.reduce.dim, s->u.reduce.clear ? "True" : "False");
    break;
  case TC_ST_CUMSUM:
    tc_sb_puts(sb, "T.cumsum(");
    print_region(pc, &s->u.cumsum.src);
    tc_sb_puts(sb, ", ");
    print_region(pc, &s->u.cumsum.dst);
    tc_sb_printf(sb, ", dim=%d, reverse=%s)", s->u.cumsum.dim, s->u.cumsum.reverse ? "True" : "False");
    break;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf && s->u.atomic.prev) { /* return_prev=True */
      put_name(pc, s->u.atomic.prev, s->u.atomic.prev->name);
      tc_sb_puts(sb, "[0] = ");
    }
    tc_sb_puts(sb, "T.atomic_add(");
    if (s->u.atomic.buf) {
      print_indices(pc, s->u.atomic.buf, s->u.atomic.nidx, s->u.atomic.idx);
      tc_sb_puts(sb, ", ");
      print_expr(pc, s->u.atomic.value, 0);
      if (s->u.atomic.prev) tc_sb_puts(sb, ", return_prev=True");
    } else {
      print_region(pc, &s->u.atomic.dst);
      tc_sb_puts(sb, ", ");
      print_region(pc, &s->u.atomic.src);
    }
    tc_sb_putc(sb, ')');
    break;
  case TC_ST_PRINT:
    tc_sb_puts(sb, "T.print(");
    if (s->u.print.buf) put_name(pc, s->u.print.buf, s->u.print.buf->name);
    else print_expr(pc, s->u.print.value, 0);
    if (s->u.print.msg) {
      tc_sb_puts(sb, ", msg=");
      put_string_literal(sb, s->u.print.msg);
    }
    tc_sb_putc(sb, ')');
    break;
  case TC_ST_BARRIER:
    if (s->u.barrier.scope == TC_BARRIER_BLOCK) tc_sb_puts(sb, "barrier()");
    else tc_sb_printf(sb, "barrier(scope=\"%s\")", tc_barrier_scope_name(s->u.barrier.scope));
    break;
  case TC_ST_ASSERT:
    tc_sb_puts(sb, "assert ");
    print_expr(pc, s->u.assert_.cond, 0);
    if (s->u.assert_.msg) {
      tc_sb_puts(sb, ", ");
      put_string_literal(sb, s->u.assert_.msg);
    }
    break;
  case TC_ST_ANNOTATE:
    tc_sb_printf(sb, "annotate %s", s->u.annotate.what ? s->u.annotate.what : "<null>");
    if (s->u.annotate.detail) tc_sb_printf(sb, "(%s)", s->u.annotate.detail);
    break;
  case TC_ST_EVALUATE:
    tc_sb_puts(sb, "evaluate(");
    print_expr(pc, s->u.evaluate.value, 0);
    tc_sb_putc(sb, ')');
    break;
  case TC_ST_INTRINSIC:
    tc_sb_printf(sb, "@%s(", s->u.intrinsic.name ? s->u.intrinsic.name : "<null>");
    for (int i = 0; i < s->u.intrinsic.nargs; i++) {
      if (i) tc_sb_puts(sb, ", ");
      print_expr(pc, s->u.intrinsic.args ? s->u.intrinsic.args[i] : NULL, 0);
    }
    tc_sb_putc(sb, ')');
    break;
  default:
    tc_sb_printf(sb, "<unknown statement %d>", (int)s->kind);
    break;
  }
  tc_sb_putc(sb, '\n');
}

void tc_ir_print_stmt(tc_strbuf *sb, const tc_stmt *s, int indent) {
  pctx pc = {sb, NULL, 0, 0, NULL, 0, 0};
  print_stmt(&pc, s, indent);
}

static void print_param(pctx *pc, const tc_param *p) {
  tc_strbuf *sb = pc->sb;
  if (p->buf) put_name(pc, p->buf, p->buf->name);
  else if (p->var) put_name(pc, p->var, p->var->name);
  else tc_sb_puts(sb, p->name ? p->name : "?");
  tc_sb_puts(sb, ": ");
  if (p->buf) {
    put_dtype(sb, p->buf->dtype);
    print_shape(pc, p->buf);
  } else if (p->var) {
    put_dtype(sb, p->var->dtype);
  } else {
    tc_sb_puts(sb, "<nothing>");
  }
  if (p->is_output) tc_sb_puts(sb, " output");
}

void tc_ir_print_kernel(tc_strbuf *sb, const tc_kernel_ir *k) {
  pctx pc = {sb, NULL, 0, 0, NULL, 0, 0};
  for (int i = 0; i < k->nparams; i++) {
    if (k->params[i].var) note_name(&pc, k->params[i].var, k->params[i].var->name, k->params[i].var->id);
    if (k->params[i].buf) {
      note_name(&pc, k->params[i].buf, k->params[i].buf->name, k->params[i].buf->id);
      for (int d = 0; d < k->params[i].buf->ndim; d++) collect_expr(&pc, k->params[i].buf->shape[d]);
    }
  }
  for (int i = 0; i < k->nworkspaces; i++) {
    note_name(&pc, k->workspaces[i], k->workspaces[i]->name, k->workspaces[i]->id);
    for (int d = 0; d < k->workspaces[i]->ndim; d++) collect_expr(&pc, k->workspaces[i]->shape[d]);
  }
  for (int i = 0; i < k->nsyms; i++)
    if (k->syms[i]) note_name(&pc, k->syms[i], k->syms[i]->name, k->syms[i]->id);
  for (int i = 0; i < 3; i++) {
    if (k->block_idx[i]) note_name(&pc, k->block_idx[i], k->block_idx[i]->name, k->block_idx[i]->id);
    if (i < k->grid_ndim) collect_expr(&pc, k->grid[i]);
  }
  collect_stmt(&pc, k->body);
  mark_duplicates(&pc);

  if (k->jit_args) tc_sb_printf(sb, "@jit(%s)\n", k->jit_args);
  tc_sb_printf(sb, "kernel %s(", k->name ? k->name : "?");
  for (int i = 0; i < k->nparams; i++) {
    if (i) tc_sb_puts(sb, ", ");
    print_param(&pc, &k->params[i]);
  }
  tc_sb_puts(sb, "):\n");
  if (k->nout_idx > 0 && k->out_idx && !k->jit_args) { /* the @jit line already shows it */
    tc_sb_puts(sb, "  out_idx=[");
    for (int i = 0; i < k->nout_idx; i++) tc_sb_printf(sb, "%s%d", i ? ", " : "", k->out_idx[i]);
    tc_sb_puts(sb, "]\n");
  }
  if (k->nsyms > 0) {
    tc_sb_puts(sb, "  symbolic ");
    for (int i = 0; i < k->nsyms; i++) {
      if (i) tc_sb_puts(sb, ", ");
      if (!k->syms[i]) {
        tc_sb_puts(sb, "<null>");
        continue;
      }
      put_name(&pc, k->syms[i], k->syms[i]->name);
      tc_sb_puts(sb, ": ");
      put_dtype(sb, k->syms[i]->dtype);
    }
    tc_sb_putc(sb, '\n');
  }
  if (k->swizzle_panel > 0) {
    tc_sb_printf(sb, "  use_swizzle(panel_size=%d, order=\"%s\"", k->swizzle_panel, tc_swizzle_order_name(k->swizzle_order));
    tc_sb_puts(sb, k->swizzle_enable ? ")\n" : ", enable=False)\n");
  }
  for (int i = 0; i < k->nworkspaces; i++) { /* T.alloc_global */
    tc_sb_puts(sb, "  workspace ");
    put_name(&pc, k->workspaces[i], k->workspaces[i]->name);
    tc_sb_puts(sb, ": ");
    put_dtype(sb, k->workspaces[i]->dtype);
    print_shape(&pc, k->workspaces[i]);
    tc_sb_puts(sb, " (allocated for each launch, zeroed)\n");
  }
  if (k->nlaunches > 1 && k->launch_var) /* src/front/eval_kernels.c */
    tc_sb_printf(sb, "  # launched %d times, one launch after another; '%s' is the launch's number\n", k->nlaunches,
                 k->launch_var->name);
  tc_sb_puts(sb, "  with T.Kernel(");
  for (int i = 0; i < k->grid_ndim && i < 3; i++) {
    print_expr(&pc, k->grid[i], 0);
    tc_sb_puts(sb, ", ");
  }
  tc_sb_puts(sb, "threads=");
  if (k->threads_ndim == 1) {
    tc_sb_printf(sb, "%d", k->threads[0]);
  } else {
    tc_sb_putc(sb, '(');
    for (int i = 0; i < k->threads_ndim && i < 3; i++) tc_sb_printf(sb, "%s%d", i ? ", " : "", k->threads[i]);
    tc_sb_putc(sb, ')');
  }
  tc_sb_putc(sb, ')');
  bool any_idx = false;
  for (int i = 0; i < k->grid_ndim && i < 3; i++) any_idx |= k->block_idx[i] != NULL;
  if (any_idx) {
    tc_sb_puts(sb, k->grid_ndim > 1 ? " as (" : " as ");
    for (int i = 0; i < k->grid_ndim && i < 3; i++) {
      if (i) tc_sb_puts(sb, ", ");
      if (k->block_idx[i]) put_name(&pc, k->block_idx[i], k->block_idx[i]->name);
      else tc_sb_putc(sb, '_');
    }
    if (k->grid_ndim > 1) tc_sb_putc(sb, ')');
  }
  tc_sb_puts(sb, ":\n");
  print_body(&pc, k->body, 2);
  free(pc.names);
  free(pc.scope);
}

void tc_ir_print_region(tc_strbuf *sb, const tc_region *r) {
  pctx pc = {sb, NULL, 0, 0, NULL, 0, 0};
  print_region(&pc, r);
}
