/* codegen.h: state shared by the cpu code generator's files (codegen.c: the expression
 * printer's cpu hooks, statements, the block function and entry points; tileops.c: tile operations). */
#ifndef TILEC_TARGET_CPU_CODEGEN_H
#define TILEC_TARGET_CPU_CODEGEN_H

#include "target/cfamily.h"
#include "target/cpu/cpu_internal.h"

typedef struct tc_cg {
  tc_cf cf;            /* the shared expression printer (first member: hooks cast back) */
  tc_arena *a;
  tc_strbuf *sb;
  const tc_cpu_plan *P;
  const tc_kernel_ir *k;
  int ind;             /* indentation level */
  bool in_threads;     /* inside a thread loop: per-thread storage is indexed by tcg_tid */
  bool unchecked;      /* inside a region proven in bounds: global accesses skip checks */
  int uniq;            /* counter for unique local names */
  int64_t *buf_off;    /* by buffer id: byte offset in the block scratch, -1 none */
  int64_t scratch_bytes;
  int64_t gemm_pack_off, gemm_pack_floats; /* gemm packing / conversion scratch */
  int64_t gemm_cvt_off;
  const char **subst;  /* by var id: text replacing a VAR reference (affine bound checks) */
  int nasserts;
  const char **assert_msgs;
} tc_cg;

/* The cpu hooks of the C-family printer (codegen.c): variables by plan storage, loads with
 * bounds checks; dtypes, rounding, conversions and math in the C spellings. */
extern const tc_cf_hooks tc_cpu_cf_hooks;

void tc_cg_line(tc_cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tc_cg_expr(tc_cg *g, tc_strbuf *sb, const tc_expr *e) { tc_cf_expr(&g->cf, sb, e); }
static inline void tc_cg_index_expr(tc_cg *g, tc_strbuf *sb, const tc_expr *e) { tc_cf_index_expr(&g->cf, sb, e); }
static inline void tc_cg_expr_as(tc_cg *g, tc_strbuf *sb, const tc_expr *e, tc_dtype to) {
  tc_cf_expr_as(&g->cf, sb, e, to);
}
void tc_cg_stmt(tc_cg *g, const tc_stmt *s);
/* buf[idx] = val, where val is C text already in the buffer's compute type */
void tc_cg_store_text(tc_cg *g, const tc_buffer *b, int nidx, tc_expr *const *idx, const char *val);
/* Name of a buffer's base pointer (global param or scratch pointer); per-thread copies are
 * offset by the caller via tc_cg_buf_copy_offset. */
void tc_cg_buf_name(tc_cg *g, tc_strbuf *sb, const tc_buffer *b);
/* "+ tcg_tid*numel" (or nothing) for per-thread buffers */
void tc_cg_buf_copy_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b);
/* Linear element offset of buf[idx...] */
void tc_cg_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int nidx, tc_expr *const *idx);
/* A global buffer with a layout (tc_layout_on_global) holds logical element idx at the layout's
 * offset from its base, not row-major: tc_cg_offset applies it; tile ops pass the per-dim
 * index texts to tc_cg_layout_offset. */
void tc_cg_layout_offset(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, const char *const *idx_c);
/* Extent of dimension j of a buffer as C text (a constant or the global's dim variable) */
void tc_cg_dim(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int j);
void tc_cg_stride(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, int j);
/* Element load/store given an offset text; value text is in the buffer's compute type. */
void tc_cg_load_at(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, const char *off);
void tc_cg_store_at(tc_cg *g, tc_strbuf *sb, const tc_buffer *b, const char *off, const char *val);
/* tile operations (tileops.c) */
void tc_cg_copy(tc_cg *g, const tc_stmt *s);
void tc_cg_fill(tc_cg *g, const tc_stmt *s);
void tc_cg_reduce(tc_cg *g, const tc_stmt *s);
void tc_cg_cumsum(tc_cg *g, const tc_stmt *s);
void tc_cg_gemm(tc_cg *g, const tc_stmt *s);
void tc_cg_atomic_tile(tc_cg *g, const tc_stmt *s);
void tc_cg_parallel(tc_cg *g, const tc_stmt *s);
/* Scratch needed by a gemm statement's conversion/packing (floats), for layout. */
int64_t tc_cg_gemm_scratch_floats(const tc_stmt *s);

#endif
