/* tileops.c: C loop nests for the tile operations (copy, fill, reduce, cumsum, tile atomic_add,
 * T.Parallel) and the call into the gemm micro-kernel.
 *
 * Every loop nest has constant trip counts (tile shapes are constants) with the innermost
 * dimension contiguous, so the C compiler vectorizes it. Global accesses are bounds-checked
 * (reads outside give zero, writes outside are dropped); each nest is emitted twice, a fast
 * copy without checks guarded by one test that the whole tile is in bounds, and the checked
 * copy for edge tiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "target/cpu/codegen.h"

#define MAX_DIMS 8

typedef struct rg {
  const tc_region *r;
  const tc_buffer *b;
  char tag[24];
  int q_of_dim[MAX_DIMS]; /* loop index of each dim, -1 for unit dims */
  int nq;
  int64_t qext[MAX_DIMS];
} rg;

static bool rg_prep(tc_cg *g, rg *x, const tc_region *r, const char *tag, tc_loc loc) {
  memset(x, 0, sizeof *x);
  x->r = r;
  x->b = r->buf;
  snprintf(x->tag, sizeof x->tag, "%s", tag);
  if (r->ndim > MAX_DIMS) {
    tc_cf_fail(&g->cf, loc, "regions of more than %d dimensions are not supported on cpu", MAX_DIMS);
    return false;
  }
  for (int j = 0; j < r->ndim; j++) {
    tc_strbuf t;
    tc_sb_init(&t);
    tc_cg_index_expr(g, &t, r->r[j].start);
    tc_cg_line(g, "const int64_t %s_o%d = (int64_t)(%s);", tag, j, tc_sb_cstr(&t));
    tc_sb_free(&t);
    if (r->r[j].extent != 1) {
      x->qext[x->nq] = r->r[j].extent;
      x->q_of_dim[j] = x->nq++;
    } else {
      x->q_of_dim[j] = -1;
    }
  }
  return true;
}

/* Linear offset of the element whose squeezed (non-unit) dim q is at loop variable lv[q]. */
static void rg_offset(tc_cg *g, tc_strbuf *sb, const rg *x, const char *const *lv) {
  if (tc_layout_on_global(x->b) && x->r->ndim == x->b->ndim) {
    const char *idx_c[MAX_DIMS];
    for (int j = 0; j < x->r->ndim; j++) {
      int q = x->q_of_dim[j];
      idx_c[j] = q >= 0 ? tc_arena_printf(g->a, "%s_o%d + %s", x->tag, j, lv[q]) : tc_arena_printf(g->a, "%s_o%d", x->tag, j);
    }
    tc_cg_layout_offset(g, sb, x->b, idx_c);
    return;
  }
  tc_sb_putc(sb, '(');
  for (int j = 0; j < x->r->ndim; j++) {
    if (j) tc_sb_puts(sb, " + ");
    int q = x->q_of_dim[j];
    if (q >= 0) tc_sb_printf(sb, "(%s_o%d + %s)", x->tag, j, lv[q]);
    else tc_sb_printf(sb, "%s_o%d", x->tag, j);
    if (j != x->r->ndim - 1) {
      tc_sb_puts(sb, " * ");
      tc_cg_stride(g, sb, x->b, j);
    }
  }
  if (x->r->ndim == 0) tc_sb_puts(sb, "0");
  tc_cg_buf_copy_offset(g, sb, x->b);
  tc_sb_putc(sb, ')');
}

static bool rg_global(const rg *x) { return x->b->scope == TC_SCOPE_GLOBAL; }

static void rg_elem_inb(tc_cg *g, tc_strbuf *sb, const rg *x, const char *const *lv) {
  bool any = false;
  for (int j = 0; j < x->r->ndim; j++) {
    if (any) tc_sb_puts(sb, " && ");
    any = true;
    int q = x->q_of_dim[j];
    if (q >= 0) tc_sb_printf(sb, "tcg_inb(%s_o%d + %s, ", x->tag, j, lv[q]);
    else tc_sb_printf(sb, "tcg_inb(%s_o%d, ", x->tag, j);
    tc_cg_dim(g, sb, x->b, j);
    tc_sb_puts(sb, ")");
  }
  if (!any) tc_sb_puts(sb, "1");
}

/* Emit one element statement of a tile op. With `guard`, it runs only when the element lies
 * inside x's global tensor: out-of-bounds stores are dropped. */
static void emit_elem_stmt(tc_cg *g, const rg *x, const char *const *lv, bool guard, const char *stmt) {
  if (!guard) {
    tc_cg_line(g, "%s", stmt);
    return;
  }
  tc_strbuf c;
  tc_sb_init(&c);
  rg_elem_inb(g, &c, x, lv);
  tc_cg_line(g, "if (%s) %s", tc_sb_cstr(&c), stmt);
  tc_sb_free(&c);
}

static void rg_tile_inb(tc_cg *g, tc_strbuf *sb, const rg *x) {
  bool any = false;
  for (int j = 0; j < x->r->ndim; j++) {
    if (any) tc_sb_puts(sb, " && ");
    any = true;
    tc_sb_printf(sb, "%s_o%d >= 0 && %s_o%d + %lld <= ", x->tag, j, x->tag, j, (long long)x->r->r[j].extent);
    tc_cg_dim(g, sb, x->b, j);
  }
  if (!any) tc_sb_puts(sb, "1");
}

/* Loops named <tag>_i<q> (the names loop_names gives) over the extents ext[q]. */
static void nest_open(tc_cg *g, const char *tag, int nq, const int64_t *ext) {
  for (int q = 0; q < nq; q++) {
    if (q == nq - 1) tc_cg_line(g, "TCG_IVDEP");
    tc_cg_line(g, "for (int64_t %s_i%d = 0; %s_i%d < %lld; %s_i%d++) {", tag, q, tag, q, (long long)ext[q], tag, q);
    g->ind++;
  }
}
static void nest_close(tc_cg *g, int nq) {
  for (int q = 0; q < nq; q++) {
    g->ind--;
    tc_cg_line(g, "}");
  }
}

static const char **loop_names(tc_cg *g, const char *tag, int n) {
  const char **lv = TC_NEW_ARRAY(g->a, const char *, n > 0 ? n : 1);
  for (int q = 0; q < n; q++) lv[q] = tc_arena_printf(g->a, "%s_i%d", tag, q);
  return lv;
}

static bool same_shape(const rg *a, const rg *b) {
  if (a->nq != b->nq) return false;
  for (int q = 0; q < a->nq; q++)
    if (a->qext[q] != b->qext[q]) return false;
  return true;
}

/* ---- T.copy ---- */
static void copy_body(tc_cg *g, const rg *src, const rg *dst, const char **lv, bool checked) {
  tc_strbuf so, dof, ld, cv, st;
  tc_sb_init(&so);
  tc_sb_init(&dof);
  tc_sb_init(&ld);
  tc_sb_init(&cv);
  tc_sb_init(&st);
  rg_offset(g, &so, src, lv);
  rg_offset(g, &dof, dst, lv);
  if (!checked && tc_dtype_eq(src->b->dtype, dst->b->dtype)) { /* same dtype: copy the encoding */
    char *sn, *dn;
    tc_cg_buf_name(g, &st, src->b);
    sn = tc_sb_take(&st);
    tc_cg_buf_name(g, &st, dst->b);
    dn = tc_sb_take(&st);
    if (tc_dtype_is_packed4(src->b->dtype))
      tc_cg_line(g, "%s(%s, %s, tcg_ld4(%s, %s));", rg_global(dst) ? "tcg_st4_atomic" : "tcg_st4", dn ? dn : "",
                 tc_sb_cstr(&dof), sn ? sn : "", tc_sb_cstr(&so));
    else tc_cg_line(g, "%s[%s] = %s[%s];", dn ? dn : "", tc_sb_cstr(&dof), sn ? sn : "", tc_sb_cstr(&so));
    free(sn);
    free(dn);
    tc_sb_free(&so);
    tc_sb_free(&dof);
    return;
  }
  tc_cg_load_at(g, &ld, src->b, tc_sb_cstr(&so));
  if (checked && rg_global(src)) {
    tc_strbuf c;
    tc_sb_init(&c);
    rg_elem_inb(g, &c, src, lv);
    tc_strbuf t;
    tc_sb_init(&t);
    tc_sb_printf(&t, "((%s) ? %s : (%s)0)", tc_sb_cstr(&c), tc_sb_cstr(&ld), tc_dtype_c_compute(src->b->dtype));
    tc_cf_c_convert(&cv, src->b->dtype, dst->b->dtype, tc_sb_cstr(&t));
    tc_sb_free(&t);
    tc_sb_free(&c);
  } else {
    tc_cf_c_convert(&cv, src->b->dtype, dst->b->dtype, tc_sb_cstr(&ld));
  }
  tc_cg_store_at(g, &st, dst->b, tc_sb_cstr(&dof), tc_sb_cstr(&cv));
  emit_elem_stmt(g, dst, lv, checked && rg_global(dst), tc_sb_cstr(&st));
  tc_sb_free(&so);
  tc_sb_free(&dof);
  tc_sb_free(&ld);
  tc_sb_free(&cv);
  tc_sb_free(&st);
}

/* Unique C names for one tile op: its source and destination region prefixes and its loop
 * prefix, e.g. tcg_r7_s, tcg_r7_d, tcg_r7 for the 7th op with tag 'r'. */
static void op_names(tc_cg *g, char tag, char ts[24], char td[24], char tl[24]) {
  int id = g->uniq++;
  snprintf(ts, 24, "tcg_%c%d_s", tag, id);
  snprintf(td, 24, "tcg_%c%d_d", tag, id);
  snprintf(tl, 24, "tcg_%c%d", tag, id);
}

/* A reduction's or scan's dim, negative counting from the end; false (recorded) when out of range. */
static bool resolve_dim(tc_cg *g, const tc_stmt *s, const char *what, int dim, int ndim, int *out) {
  int d = dim < 0 ? dim + ndim : dim;
  if (d < 0 || d >= ndim) {
    tc_cf_fail(&g->cf, s->loc, "%s dim %d is out of range for a %d-dimensional source", what, dim, ndim);
    return false;
  }
  *out = d;
  return true;
}

/* The common start of an elementwise tile op from region sr to region dr of the same shape
 * (T.copy, tile-form T.atomic_add): unique names, the opening of its C block, the prepared
 * regions and the loop variables. False when codegen failed (the error is recorded). */
static bool pair_begin(tc_cg *g, const tc_stmt *s, char tag, const char *what, const char *shape_error,
                       const tc_region *sr, const tc_region *dr, rg *src, rg *dst, char tl[24], const char ***lv) {
  char ts[24], td[24];
  op_names(g, tag, ts, td, tl);
  tc_cg_line(g, "{ /* %s %s <- %s */", what, dr->buf->name, sr->buf->name);
  g->ind++;
  if (!rg_prep(g, src, sr, ts, s->loc) || !rg_prep(g, dst, dr, td, s->loc)) return false;
  if (!same_shape(src, dst)) {
    tc_cf_fail(&g->cf, s->loc, "%s", shape_error);
    return false;
  }
  *lv = loop_names(g, tl, dst->nq);
  return true;
}

void tc_cg_copy(tc_cg *g, const tc_stmt *s) {
  char tl[24];
  rg src, dst;
  const char **lv;
  if (!pair_begin(g, s, 'c', "T.copy", "T.copy between regions of different shapes is not supported on cpu",
                  &s->u.copy.src, &s->u.copy.dst, &src, &dst, tl, &lv))
    return;
  bool need_check = (rg_global(&src) || rg_global(&dst)) && !g->unchecked;
  if (need_check) {
    tc_strbuf c;
    tc_sb_init(&c);
    if (rg_global(&src)) rg_tile_inb(g, &c, &src);
    if (rg_global(&src) && rg_global(&dst)) tc_sb_puts(&c, " && ");
    if (rg_global(&dst)) rg_tile_inb(g, &c, &dst);
    tc_cg_line(g, "if (%s) {", tc_sb_cstr(&c));
    tc_sb_free(&c);
    g->ind++;
  }
  nest_open(g, tl, dst.nq, dst.qext);
  copy_body(g, &src, &dst, lv, false);
  nest_close(g, dst.nq);
  if (need_check) {
    g->ind--;
    tc_cg_line(g, "} else {");
    g->ind++;
    nest_open(g, tl, dst.nq, dst.qext);
    copy_body(g, &src, &dst, lv, true);
    nest_close(g, dst.nq);
    g->ind--;
    tc_cg_line(g, "}");
  }
  g->ind--;
  tc_cg_line(g, "}");
}

/* ---- T.fill ---- */
void tc_cg_fill(tc_cg *g, const tc_stmt *s) {
  char ts[24], td[24], tl[24];
  op_names(g, 'f', ts, td, tl);
  tc_cg_line(g, "{ /* T.fill %s */", s->u.fill.dst.buf->name);
  g->ind++;
  rg dst;
  if (!rg_prep(g, &dst, &s->u.fill.dst, td, s->loc)) return;
  tc_strbuf v;
  tc_sb_init(&v);
  tc_cg_expr_as(g, &v, s->u.fill.value, dst.b->dtype);
  tc_cg_line(g, "const %s %s_v = %s;", tc_dtype_c_compute(dst.b->dtype), tl, tc_sb_cstr(&v));
  tc_sb_free(&v);
  const char **lv = loop_names(g, tl, dst.nq);
  char val[40];
  snprintf(val, sizeof val, "%s_v", tl);
  for (int pass = 0; pass < 2; pass++) {
    bool checked = pass == 1;
    if (checked && (!rg_global(&dst) || g->unchecked)) break;
    if (!checked && rg_global(&dst) && !g->unchecked) {
      tc_strbuf c;
      tc_sb_init(&c);
      rg_tile_inb(g, &c, &dst);
      tc_cg_line(g, "if (%s) {", tc_sb_cstr(&c));
      tc_sb_free(&c);
      g->ind++;
    }
    nest_open(g, tl, dst.nq, dst.qext);
    tc_strbuf off, st;
    tc_sb_init(&off);
    tc_sb_init(&st);
    rg_offset(g, &off, &dst, lv);
    tc_cg_store_at(g, &st, dst.b, tc_sb_cstr(&off), val);
    emit_elem_stmt(g, &dst, lv, checked, tc_sb_cstr(&st));
    tc_sb_free(&off);
    tc_sb_free(&st);
    nest_close(g, dst.nq);
    if (rg_global(&dst) && !g->unchecked) {
      g->ind--;
      tc_cg_line(g, checked ? "}" : "} else {");
      if (!checked) g->ind++;
    }
  }
  g->ind--;
  tc_cg_line(g, "}");
}

/* Loads an element of a region (global: bounds-checked) as text in the region's compute type. */
static void rg_load(tc_cg *g, tc_strbuf *sb, const rg *x, const char *const *lv) {
  tc_strbuf off, ld;
  tc_sb_init(&off);
  tc_sb_init(&ld);
  rg_offset(g, &off, x, lv);
  tc_cg_load_at(g, &ld, x->b, tc_sb_cstr(&off));
  if (rg_global(x) && !g->unchecked) {
    tc_strbuf c;
    tc_sb_init(&c);
    rg_elem_inb(g, &c, x, lv);
    tc_sb_printf(sb, "((%s) ? %s : (%s)0)", tc_sb_cstr(&c), tc_sb_cstr(&ld), tc_dtype_c_compute(x->b->dtype));
    tc_sb_free(&c);
  } else {
    tc_sb_puts(sb, tc_sb_cstr(&ld));
  }
  tc_sb_free(&off);
  tc_sb_free(&ld);
}

static void rg_store(tc_cg *g, const rg *x, const char *const *lv, const char *val) {
  tc_strbuf off, st;
  tc_sb_init(&off);
  tc_sb_init(&st);
  rg_offset(g, &off, x, lv);
  tc_cg_store_at(g, &st, x->b, tc_sb_cstr(&off), val);
  emit_elem_stmt(g, x, lv, rg_global(x) && !g->unchecked, tc_sb_cstr(&st));
  tc_sb_free(&off);
  tc_sb_free(&st);
}

/* ---- T.reduce_* ---- */
static bool is_fl(tc_dtype d) { return !strcmp(tc_dtype_c_compute(d), "float") || d.code == TC_DT_FLOAT64; }

void tc_cg_reduce(tc_cg *g, const tc_stmt *s) {
  char ts[24], td[24], tl[24];
  op_names(g, 'r', ts, td, tl);
  const tc_region *sr = &s->u.reduce.src;
  int dim;
  if (!resolve_dim(g, s, "reduce", s->u.reduce.dim, sr->ndim, &dim)) return;
  tc_cg_line(g, "{ /* T.reduce_%s %s -> %s, dim %d */", tc_reduce_kind_name(s->u.reduce.op), sr->buf->name,
             s->u.reduce.dst.buf->name, dim);
  g->ind++;
  rg src, dst;
  if (!rg_prep(g, &src, sr, ts, s->loc) || !rg_prep(g, &dst, &s->u.reduce.dst, td, s->loc)) return;
  /* outer loops: the source's squeezed dims other than `dim`; they map onto dst's squeezed dims */
  int qd = src.q_of_dim[dim];
  int nouter = src.nq - (qd >= 0 ? 1 : 0);
  int64_t oext[MAX_DIMS];
  for (int q = 0, o = 0; q < src.nq; q++)
    if (q != qd) oext[o++] = src.qext[q];
  if (nouter != dst.nq) {
    tc_cf_fail(&g->cf, s->loc, "reduce destination shape does not match the source without dim %d", dim);
    return;
  }
  for (int q = 0; q < nouter; q++)
    if (oext[q] != dst.qext[q]) {
      tc_cf_fail(&g->cf, s->loc, "reduce destination shape does not match the source without dim %d", dim);
      return;
    }
  const char **ov = loop_names(g, tl, nouter);
  /* source loop names: outer names with the reduced loop inserted */
  const char **sv = TC_NEW_ARRAY(g->a, const char *, src.nq + 1);
  char rv[32];
  snprintf(rv, sizeof rv, "%s_k", tl);
  for (int q = 0, o = 0; q < src.nq; q++) sv[q] = q == qd ? rv : ov[o++];
  tc_dtype ad = dst.b->dtype;
  const char *ct = tc_dtype_c_compute(ad);
  bool fl = is_fl(ad);
  tc_reduce_kind op = s->u.reduce.op;
  char init[64] = "0";
  if (op == TC_RED_MAX || op == TC_RED_MIN) {
    bool mx_ = op == TC_RED_MAX, dbl = ad.code == TC_DT_FLOAT64;
    if (fl) snprintf(init, sizeof init, "%s%sINFINITY", mx_ ? "-" : "", dbl ? "(double)" : "");
    else snprintf(init, sizeof init, "tcg_%s_%s", mx_ ? "lo" : "hi", tc_dtype_elem_name(ad));
  }
  nest_open(g, tl, nouter, oext);
  tc_cg_line(g, "%s %s_acc = %s;", ct, tl, init);
  tc_strbuf ld, cv, comb;
  tc_sb_init(&ld);
  tc_sb_init(&cv);
  tc_sb_init(&comb);
  rg_load(g, &ld, &src, sv);
  tc_cf_c_convert(&cv, src.b->dtype, ad, tc_sb_cstr(&ld));
  const char *x = tc_sb_cstr(&cv);
  char acc[40];
  snprintf(acc, sizeof acc, "%s_acc", tl);
  const char *mx = fl ? (ad.code == TC_DT_FLOAT64 ? "tcg_max_d" : "tcg_max_f") : "tcg_max_i";
  const char *mn = fl ? (ad.code == TC_DT_FLOAT64 ? "tcg_min_d" : "tcg_min_f") : "tcg_min_i";
  const char *ab = fl ? (ad.code == TC_DT_FLOAT64 ? "fabs" : "fabsf") : "tcg_abs_i";
  tc_strbuf raw;
  tc_sb_init(&raw);
  switch (op) {
  case TC_RED_SUM: tc_sb_printf(&raw, "%s + %s", acc, x); break;
  case TC_RED_ABSSUM: tc_sb_printf(&raw, "%s + %s(%s)", acc, ab, x); break;
  case TC_RED_MAX: tc_sb_printf(&raw, "%s(%s, %s)", mx, acc, x); break;
  case TC_RED_MIN: tc_sb_printf(&raw, "%s(%s, %s)", mn, acc, x); break;
  case TC_RED_ABSMAX: tc_sb_printf(&raw, "%s(%s, %s(%s))", mx, acc, ab, x); break;
  }
  tc_cf_c_round(&comb, ad, tc_sb_cstr(&raw));
  int64_t rext = qd >= 0 ? src.qext[qd] : 1;
  tc_cg_line(g, "for (int64_t %s = 0; %s < %lld; %s++) %s = %s;", rv, rv, (long long)rext, rv, acc, tc_sb_cstr(&comb));
  if (!s->u.reduce.clear) {
    tc_strbuf old, r2, c2;
    tc_sb_init(&old);
    tc_sb_init(&r2);
    tc_sb_init(&c2);
    rg_load(g, &old, &dst, ov);
    if (op == TC_RED_SUM || op == TC_RED_ABSSUM) tc_sb_printf(&r2, "%s + %s", tc_sb_cstr(&old), acc);
    else tc_sb_printf(&r2, "%s(%s, %s)", op == TC_RED_MIN ? mn : mx, tc_sb_cstr(&old), acc);
    tc_cf_c_round(&c2, ad, tc_sb_cstr(&r2));
    tc_cg_line(g, "%s = %s;", acc, tc_sb_cstr(&c2));
    tc_sb_free(&old);
    tc_sb_free(&r2);
    tc_sb_free(&c2);
  }
  rg_store(g, &dst, ov, acc);
  nest_close(g, nouter);
  tc_sb_free(&raw);
  tc_sb_free(&ld);
  tc_sb_free(&cv);
  tc_sb_free(&comb);
  g->ind--;
  tc_cg_line(g, "}");
}

/* ---- T.cumsum ---- */
void tc_cg_cumsum(tc_cg *g, const tc_stmt *s) {
  char ts[24], td[24], tl[24];
  op_names(g, 'p', ts, td, tl);
  const tc_region *sr = &s->u.cumsum.src;
  int dim;
  if (!resolve_dim(g, s, "cumsum", s->u.cumsum.dim, sr->ndim, &dim)) return;
  tc_cg_line(g, "{ /* T.cumsum %s -> %s, dim %d%s */", sr->buf->name, s->u.cumsum.dst.buf->name, dim,
             s->u.cumsum.reverse ? ", reverse" : "");
  g->ind++;
  rg src, dst;
  if (!rg_prep(g, &src, sr, ts, s->loc) || !rg_prep(g, &dst, &s->u.cumsum.dst, td, s->loc)) return;
  if (!same_shape(&src, &dst)) {
    tc_cf_fail(&g->cf, s->loc, "T.cumsum source and destination shapes differ");
    return;
  }
  int qd = src.q_of_dim[dim];
  int nouter = src.nq - (qd >= 0 ? 1 : 0);
  int64_t oext[MAX_DIMS];
  const char **ov = loop_names(g, tl, nouter);
  const char **sv = TC_NEW_ARRAY(g->a, const char *, src.nq + 1);
  char rv[32];
  snprintf(rv, sizeof rv, "%s_k", tl);
  for (int q = 0, o = 0; q < src.nq; q++) {
    if (q == qd) sv[q] = rv;
    else {
      oext[o] = src.qext[q];
      sv[q] = ov[o++];
    }
  }
  tc_dtype ad = dst.b->dtype;
  int64_t rext = qd >= 0 ? src.qext[qd] : 1;
  nest_open(g, tl, nouter, oext);
  tc_cg_line(g, "%s %s_acc = 0;", tc_dtype_c_compute(ad), tl);
  char rvv[48];
  if (s->u.cumsum.reverse) snprintf(rvv, sizeof rvv, "%s_r", tl);
  if (s->u.cumsum.reverse) {
    tc_cg_line(g, "for (int64_t %s_r = %lld; %s_r-- > 0;) {", tl, (long long)rext, tl);
    for (int q = 0; q < src.nq; q++)
      if (q == qd) sv[q] = tc_arena_printf(g->a, "%s_r", tl);
  } else {
    tc_cg_line(g, "for (int64_t %s = 0; %s < %lld; %s++) {", rv, rv, (long long)rext, rv);
  }
  g->ind++;
  tc_strbuf ld, cv, raw, comb;
  tc_sb_init(&ld);
  tc_sb_init(&cv);
  tc_sb_init(&raw);
  tc_sb_init(&comb);
  rg_load(g, &ld, &src, sv);
  tc_cf_c_convert(&cv, src.b->dtype, ad, tc_sb_cstr(&ld));
  tc_sb_printf(&raw, "%s_acc + %s", tl, tc_sb_cstr(&cv));
  tc_cf_c_round(&comb, ad, tc_sb_cstr(&raw));
  tc_cg_line(g, "%s_acc = %s;", tl, tc_sb_cstr(&comb));
  char acc[40];
  snprintf(acc, sizeof acc, "%s_acc", tl);
  rg_store(g, &dst, sv, acc);
  tc_sb_free(&ld);
  tc_sb_free(&cv);
  tc_sb_free(&raw);
  tc_sb_free(&comb);
  g->ind--;
  tc_cg_line(g, "}");
  nest_close(g, nouter);
  g->ind--;
  tc_cg_line(g, "}");
}

/* ---- tile-form T.atomic_add(dst, src) ---- */
void tc_cg_atomic_tile(tc_cg *g, const tc_stmt *s) {
  char tl[24];
  rg src, dst;
  const char **lv;
  if (!pair_begin(g, s, 'a', "T.atomic_add", "T.atomic_add between regions of different shapes",
                  &s->u.atomic.src, &s->u.atomic.dst, &src, &dst, tl, &lv))
    return;
  nest_open(g, tl, dst.nq, dst.qext);
  tc_strbuf ld, cv, off, line;
  tc_sb_init(&ld);
  tc_sb_init(&cv);
  tc_sb_init(&off);
  tc_sb_init(&line);
  rg_load(g, &ld, &src, lv);
  tc_cf_c_convert(&cv, src.b->dtype, dst.b->dtype, tc_sb_cstr(&ld));
  rg_offset(g, &off, &dst, lv);
  if (rg_global(&dst)) {
    tc_sb_printf(&line, "tcg_atomic_add_%s(", tc_dtype_elem_name(dst.b->dtype));
    tc_cg_buf_name(g, &line, dst.b);
    tc_sb_printf(&line, ", %s, %s);", tc_sb_cstr(&off), tc_sb_cstr(&cv));
    emit_elem_stmt(g, &dst, lv, true, tc_sb_cstr(&line));
  } else {
    tc_strbuf cur, raw, r;
    tc_sb_init(&cur);
    tc_sb_init(&raw);
    tc_sb_init(&r);
    tc_cg_load_at(g, &cur, dst.b, tc_sb_cstr(&off));
    tc_sb_printf(&raw, "%s + %s", tc_sb_cstr(&cur), tc_sb_cstr(&cv));
    tc_cf_c_round(&r, dst.b->dtype, tc_sb_cstr(&raw));
    tc_cg_store_at(g, &line, dst.b, tc_sb_cstr(&off), tc_sb_cstr(&r));
    tc_cg_line(g, "%s", tc_sb_cstr(&line));
    tc_sb_free(&cur);
    tc_sb_free(&raw);
    tc_sb_free(&r);
  }
  tc_sb_free(&ld);
  tc_sb_free(&cv);
  tc_sb_free(&off);
  tc_sb_free(&line);
  nest_close(g, dst.nq);
  g->ind--;
  tc_cg_line(g, "}");
}

/* ---- T.Parallel ---- */
typedef struct acc_list {
  int n, cap;
  const tc_buffer **buf;
  int *nidx;
  tc_expr *const **idx;
} acc_list;

static void acc_push(tc_cg *g, acc_list *l, const tc_buffer *b, int nidx, tc_expr *const *idx) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    l->buf = tc_arena_grow(g->a, l->buf, sizeof(*l->buf) * (size_t)l->n, sizeof(*l->buf) * (size_t)cap);
    l->nidx = tc_arena_grow(g->a, l->nidx, sizeof(*l->nidx) * (size_t)l->n, sizeof(*l->nidx) * (size_t)cap);
    l->idx = tc_arena_grow(g->a, l->idx, sizeof(*l->idx) * (size_t)l->n, sizeof(*l->idx) * (size_t)cap);
    l->cap = cap;
  }
  l->buf[l->n] = b;
  l->nidx[l->n] = nidx;
  l->idx[l->n] = idx;
  l->n++;
}

static void collect_expr(tc_cg *g, acc_list *l, const tc_expr *e) {
  if (!e) return;
  if (e->op == TC_OP_LOAD && e->buf->scope == TC_SCOPE_GLOBAL) acc_push(g, l, e->buf, e->nargs, e->args);
  for (int i = 0; i < e->nargs; i++) collect_expr(g, l, e->args[i]);
}

/* Global accesses of a parallel body and the variables it defines. Returns false when the body
 * holds something whose accesses are not simple element loads/stores (tile ops). */
static bool collect_stmt(tc_cg *g, acc_list *l, bool *inner, const tc_stmt *s) {
  if (!s) return true;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!collect_stmt(g, l, inner, s->u.seq.items[i])) return false;
    return true;
  case TC_ST_FOR:
    if (s->u.loop.var->id >= 0 && s->u.loop.var->id < g->P->nids) inner[s->u.loop.var->id] = true;
    collect_expr(g, l, s->u.loop.min);
    collect_expr(g, l, s->u.loop.extent);
    return collect_stmt(g, l, inner, s->u.loop.body);
  case TC_ST_IF:
    collect_expr(g, l, s->u.if_.cond);
    return collect_stmt(g, l, inner, s->u.if_.then_s) && collect_stmt(g, l, inner, s->u.if_.else_s);
  case TC_ST_STORE:
    for (int i = 0; i < s->u.store.nidx; i++) collect_expr(g, l, s->u.store.idx[i]);
    collect_expr(g, l, s->u.store.value);
    if (s->u.store.buf->scope == TC_SCOPE_GLOBAL) acc_push(g, l, s->u.store.buf, s->u.store.nidx, s->u.store.idx);
    return true;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.dst.buf) return false;
    for (int i = 0; i < s->u.atomic.nidx; i++) collect_expr(g, l, s->u.atomic.idx[i]);
    collect_expr(g, l, s->u.atomic.value);
    if (s->u.atomic.buf->scope == TC_SCOPE_GLOBAL) acc_push(g, l, s->u.atomic.buf, s->u.atomic.nidx, s->u.atomic.idx);
    return true;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    if (s->u.let.var->id >= 0 && s->u.let.var->id < g->P->nids) inner[s->u.let.var->id] = true;
    collect_expr(g, l, s->u.let.value);
    return true;
  case TC_ST_ALLOC:
  case TC_ST_BARRIER:
  case TC_ST_ANNOTATE: return true;
  case TC_ST_EVALUATE: collect_expr(g, l, s->u.evaluate.value); return true;
  case TC_ST_ASSERT: collect_expr(g, l, s->u.assert_.cond); return true;
  case TC_ST_PRINT: collect_expr(g, l, s->u.print.value); return true;
  default: return false;
  }
}

/* Variables defined inside the parallel body (marked in `inner`): an index using one is not
 * affine in the loop variables alone. */
typedef struct inner_ctx {
  const bool *inner;
  int nids;
} inner_ctx;
static bool inner_var(void *c, const tc_var *v) {
  const inner_ctx *x = c;
  return v->id >= 0 && v->id < x->nids && x->inner[v->id];
}

static void parallel_nest(tc_cg *g, const tc_stmt *const *loops, int n, const tc_stmt *body) {
  for (int i = 0; i < n; i++) {
    const tc_var *v = loops[i]->u.loop.var;
    tc_strbuf lo, ext, nm;
    tc_sb_init(&lo);
    tc_sb_init(&ext);
    tc_sb_init(&nm);
    tc_cg_index_expr(g, &lo, loops[i]->u.loop.min);
    tc_cg_index_expr(g, &ext, loops[i]->u.loop.extent);
    tc_cg_expr(g, &nm, tc_ir_var_ref(g->a, (tc_var *)v, v->loc));
    const char *ct = tc_dtype_c_compute(v->dtype);
    if (i == n - 1) tc_cg_line(g, "TCG_IVDEP");
    tc_cg_line(g, "for (%s %s = %s; %s < (%s)(%s + %s); %s++) {", ct, tc_sb_cstr(&nm), tc_sb_cstr(&lo), tc_sb_cstr(&nm),
               ct, tc_sb_cstr(&lo), tc_sb_cstr(&ext), tc_sb_cstr(&nm));
    g->ind++;
    tc_sb_free(&lo);
    tc_sb_free(&ext);
    tc_sb_free(&nm);
  }
  tc_cg_stmt(g, body);
  for (int i = 0; i < n; i++) {
    g->ind--;
    tc_cg_line(g, "}");
  }
}

void tc_cg_parallel(tc_cg *g, const tc_stmt *s) {
  const tc_stmt *loops[MAX_DIMS * 2];
  int n = 0;
  const tc_stmt *cur = s;
  for (;;) {
    loops[n++] = cur;
    const tc_stmt *b = cur->u.loop.body;
    while (b && b->kind == TC_ST_SEQ && b->u.seq.n == 1) b = b->u.seq.items[0];
    if (n < MAX_DIMS * 2 && b && b->kind == TC_ST_FOR && b->u.loop.kind == TC_LOOP_PARALLEL) cur = b;
    else break;
  }
  const tc_stmt *body = loops[n - 1]->u.loop.body;
  tc_cg_line(g, "{ /* T.Parallel */");
  g->ind++;
  acc_list l = {0};
  bool *inner = TC_NEW_ARRAY(g->a, bool, g->P->nids + 1);
  bool simple = collect_stmt(g, &l, inner, body);
  const tc_var *vars[MAX_DIMS * 2];
  int64_t coef[MAX_DIMS * 2];
  for (int i = 0; i < n; i++) vars[i] = loops[i]->u.loop.var;
  bool fast = simple && l.n > 0 && !g->unchecked;
  inner_ctx ic = {inner, g->P->nids};
  tc_affine_vars A = {n, vars, inner_var, &ic};
  for (int i = 0; i < n && fast; i++)
    if (!tc_expr_free_of(&A, loops[i]->u.loop.min) || !tc_expr_free_of(&A, loops[i]->u.loop.extent)) fast = false;
  tc_strbuf cond;
  tc_sb_init(&cond);
  for (int a = 0; a < l.n && fast; a++) {
    for (int j = 0; j < l.nidx[a] && fast; j++) {
      memset(coef, 0, sizeof coef);
      if (!tc_expr_affine(&A, l.idx[a][j], coef)) {
        fast = false;
        break;
      }
      /* the index at its smallest and largest corner of the iteration box */
      for (int corner = 0; corner < 2; corner++) {
        for (int i = 0; i < n; i++) {
          tc_strbuf lo, ext;
          tc_sb_init(&lo);
          tc_sb_init(&ext);
          tc_cg_index_expr(g, &lo, loops[i]->u.loop.min);
          tc_cg_index_expr(g, &ext, loops[i]->u.loop.extent);
          bool hi = (coef[i] > 0) == (corner == 1);
          g->subst[vars[i]->id] = coef[i] == 0 || !hi ? tc_arena_printf(g->a, "(%s)", tc_sb_cstr(&lo))
                                                      : tc_arena_printf(g->a, "(%s + %s - 1)", tc_sb_cstr(&lo), tc_sb_cstr(&ext));
          tc_sb_free(&lo);
          tc_sb_free(&ext);
        }
        if (cond.len) tc_sb_puts(&cond, " && ");
        tc_sb_puts(&cond, "(int64_t)(");
        tc_cg_index_expr(g, &cond, l.idx[a][j]);
        if (corner == 0) tc_sb_puts(&cond, ") >= 0");
        else {
          tc_sb_puts(&cond, ") < ");
          tc_cg_dim(g, &cond, l.buf[a], j);
        }
        for (int i = 0; i < n; i++) g->subst[vars[i]->id] = NULL;
      }
    }
  }
  if (fast) {
    tc_cg_line(g, "if (%s) {", tc_sb_cstr(&cond));
    g->ind++;
    g->unchecked = true;
    parallel_nest(g, loops, n, body);
    g->unchecked = false;
    g->ind--;
    tc_cg_line(g, "} else {");
    g->ind++;
    parallel_nest(g, loops, n, body);
    g->ind--;
    tc_cg_line(g, "}");
  } else {
    parallel_nest(g, loops, n, body);
  }
  tc_sb_free(&cond);
  g->ind--;
  tc_cg_line(g, "}");
}
