/* module.c: assembles the cpu translation unit (see codegen.c for its layout): the helpers,
 * the scratch layout, the block function from the plan (lower.c), and the entry points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/philox.h"
#include "target/cpu/codegen.h"

static const char helpers_head[] =
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include <math.h>\n"
    "\n";

static const char helpers_body[] =
    "/* ---- helpers ---- */\n"
    "#if defined(__clang__)\n"
    "#  define TCG_IVDEP _Pragma(\"clang loop vectorize(assume_safety)\")\n"
    "#  define TCG_UNROLL _Pragma(\"unroll\")\n"
    "#elif defined(__GNUC__)\n"
    "#  define TCG_IVDEP _Pragma(\"GCC ivdep\")\n"
    "#  define TCG_UNROLL _Pragma(\"GCC unroll 16\")\n"
    "#else\n"
    "#  define TCG_IVDEP\n"
    "#  define TCG_UNROLL\n"
    "#endif\n"
    "#define tcg_inb(i, d) ((uint64_t)(int64_t)(i) < (uint64_t)(int64_t)(d))\n"
    "/* integer division: C truncation; x/0 is 0 (no trap), INT_MIN/-1 wraps */\n"
    "static inline int64_t tcg_idiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; }\n"
    "static inline uint64_t tcg_udiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }\n"
    "static inline uint64_t tcg_umod(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }\n"
    "static inline int64_t tcg_floordiv_i(int64_t a, int64_t b) {\n"
    "  if (b == 0) return 0;\n"
    "  if (b == -1) return (int64_t)(0 - (uint64_t)a);\n"
    "  int64_t q = a / b;\n"
    "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n"
    "static inline int64_t tcg_floormod_i(int64_t a, int64_t b) {\n"
    "  if (b == 0 || b == -1) return 0;\n"
    "  int64_t r = a % b;\n"
    "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
    "}\n"
    "static inline float tcg_floordiv_f(float a, float b) { return floorf(a / b); }\n"
    "static inline double tcg_floordiv_d(double a, double b) { return floor(a / b); }\n"
    "static inline float tcg_floormod_f(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "static inline double tcg_floormod_d(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
    "static inline float tcg_max_f(float a, float b) { return a > b ? a : b; }\n"
    "static inline float tcg_min_f(float a, float b) { return a < b ? a : b; }\n"
    "static inline double tcg_max_d(double a, double b) { return a > b ? a : b; }\n"
    "static inline double tcg_min_d(double a, double b) { return a < b ? a : b; }\n"
    "static inline int64_t tcg_max_i(int64_t a, int64_t b) { return a > b ? a : b; }\n"
    "static inline int64_t tcg_min_i(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "static inline int64_t tcg_abs_i(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }\n"
    "static inline int64_t tcg_ipow(int64_t a, int64_t b) {\n"
    "  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "  uint64_t r = 1, x = (uint64_t)a;\n"
    "  while (b) { if (b & 1) r *= x; x *= x; b >>= 1; }\n"
    "  return (int64_t)r;\n"
    "}\n"
    "/* 4-bit elements: element 2k is the low nibble of byte k, 2k+1 the high nibble */\n"
    "static inline uint8_t tcg_ld4(const uint8_t *p, int64_t i) { return (uint8_t)((p[i >> 1] >> ((i & 1) * 4)) & 15); }\n"
    "static inline void tcg_st4(uint8_t *p, int64_t i, uint8_t v) {\n"
    "  int sh = (int)(i & 1) * 4;\n"
    "  p[i >> 1] = (uint8_t)((p[i >> 1] & ~(15 << sh)) | ((v & 15) << sh));\n"
    "}\n"
    "static inline void tcg_st4_atomic(uint8_t *p, int64_t i, uint8_t v) { /* blocks may share a byte */\n"
    "  int sh = (int)(i & 1) * 4;\n"
    "  uint8_t old = __atomic_load_n(&p[i >> 1], __ATOMIC_RELAXED), nv;\n"
    "  do { nv = (uint8_t)((old & ~(15 << sh)) | ((v & 15) << sh)); }\n"
    "  while (!__atomic_compare_exchange_n(&p[i >> 1], &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "}\n"
    "static inline int8_t tcg_sx4(uint8_t v) { return (int8_t)((v & 8) ? (int)v - 16 : (int)v); }\n"
    "static inline int8_t tcg_wrap_i4(int64_t v) { return tcg_sx4((uint8_t)(v & 15)); }\n"
    "/* float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0 */\n"
    "#define TCG_F2I(name, T, lo, hi) \\\n"
    "  static inline T tcg_f2##name(double x) { return x != x ? (T)0 : x <= (double)(lo) ? (T)(lo) : x >= (double)(hi) ? (T)(hi) : (T)x; }\n"
    "TCG_F2I(int8, int8_t, INT8_MIN, INT8_MAX)\n"
    "TCG_F2I(int16, int16_t, INT16_MIN, INT16_MAX)\n"
    "TCG_F2I(int32, int32_t, INT32_MIN, INT32_MAX)\n"
    "TCG_F2I(uint8, uint8_t, 0, UINT8_MAX)\n"
    "TCG_F2I(uint16, uint16_t, 0, UINT16_MAX)\n"
    "TCG_F2I(uint32, uint32_t, 0, UINT32_MAX)\n"
    "TCG_F2I(int4, int8_t, -8, 7)\n"
    "TCG_F2I(uint4, uint8_t, 0, 15)\n"
    "static inline int64_t tcg_f2int64(double x) { return x != x ? 0 : x < -9223372036854775808.0 ? INT64_MIN : x >= 9223372036854775808.0 ? INT64_MAX : (int64_t)x; }\n"
    "static inline uint64_t tcg_f2uint64(double x) { return x != x || x <= 0 ? 0 : x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x; }\n"
    "static inline int tcg_f2bool(double x) { return x != 0; }\n"
    "#define tcg_lo_int8 INT8_MIN\n#define tcg_hi_int8 INT8_MAX\n#define tcg_lo_int16 INT16_MIN\n#define tcg_hi_int16 INT16_MAX\n"
    "#define tcg_lo_int32 INT32_MIN\n#define tcg_hi_int32 INT32_MAX\n#define tcg_lo_int64 INT64_MIN\n#define tcg_hi_int64 INT64_MAX\n"
    "#define tcg_lo_uint8 0\n#define tcg_hi_uint8 UINT8_MAX\n#define tcg_lo_uint16 0\n#define tcg_hi_uint16 UINT16_MAX\n"
    "#define tcg_lo_uint32 0\n#define tcg_hi_uint32 UINT32_MAX\n#define tcg_lo_uint64 0\n#define tcg_hi_uint64 UINT64_MAX\n"
    "#define tcg_lo_int4 (-8)\n#define tcg_hi_int4 7\n#define tcg_lo_uint4 0\n#define tcg_hi_uint4 15\n#define tcg_lo_bool 0\n#define tcg_hi_bool 1\n"
    "/* bit casts of float32/float64 (T.reinterpret) */\n"
    "static inline uint32_t tcg_bits_f32(float x) { uint32_t b; memcpy(&b, &x, 4); return b; }\n"
    "static inline uint64_t tcg_bits_f64(double x) { uint64_t b; memcpy(&b, &x, 8); return b; }\n"
    "static inline float tcg_f32_bits(uint32_t b) { float x; memcpy(&x, &b, 4); return x; }\n"
    "static inline double tcg_f64_bits(uint64_t b) { double x; memcpy(&x, &b, 8); return x; }\n"
    "/* cuRAND's Philox4_32_10 (T.rng_rand; src/ir/philox.h) */\n"
    TC_PHILOX_TEXT
    "/* atomics on global memory (blocks run on several OS threads) */\n"
    "#define TCG_ATOMIC_INT(name, T) \\\n"
    "  static inline void tcg_atomic_add_##name(T *p, int64_t i, T v) { __atomic_fetch_add(&p[i], v, __ATOMIC_RELAXED); } \\\n"
    "  static inline T tcg_atomic_fetch_add_##name(T *p, int64_t i, T v) { return __atomic_fetch_add(&p[i], v, __ATOMIC_RELAXED); }\n"
    "TCG_ATOMIC_INT(int8, int8_t)\nTCG_ATOMIC_INT(int16, int16_t)\nTCG_ATOMIC_INT(int32, int32_t)\nTCG_ATOMIC_INT(int64, int64_t)\n"
    "TCG_ATOMIC_INT(uint8, uint8_t)\nTCG_ATOMIC_INT(uint16, uint16_t)\nTCG_ATOMIC_INT(uint32, uint32_t)\nTCG_ATOMIC_INT(uint64, uint64_t)\n"
    "static inline void tcg_atomic_add_float32(float *p, int64_t i, float v) {\n"
    "  uint32_t *q = (uint32_t *)(void *)&p[i], old = __atomic_load_n(q, __ATOMIC_RELAXED), nv;\n"
    "  do { float f; memcpy(&f, &old, 4); f += v; memcpy(&nv, &f, 4); }\n"
    "  while (!__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "}\n"
    "static inline float tcg_atomic_fetch_add_float32(float *p, int64_t i, float v) {\n"
    "  uint32_t *q = (uint32_t *)(void *)&p[i], old = __atomic_load_n(q, __ATOMIC_RELAXED), nv; float f;\n"
    "  do { memcpy(&f, &old, 4); float s = f + v; memcpy(&nv, &s, 4); }\n"
    "  while (!__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "  return f;\n"
    "}\n"
    "static inline double tcg_atomic_fetch_add_float64(double *p, int64_t i, double v) {\n"
    "  uint64_t *q = (uint64_t *)(void *)&p[i], old = __atomic_load_n(q, __ATOMIC_RELAXED), nv; double f;\n"
    "  do { memcpy(&f, &old, 8); double s = f + v; memcpy(&nv, &s, 8); }\n"
    "  while (!__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "  return f;\n"
    "}\n"
    "static inline void tcg_atomic_add_float64(double *p, int64_t i, double v) {\n"
    "  uint64_t *q = (uint64_t *)(void *)&p[i], old = __atomic_load_n(q, __ATOMIC_RELAXED), nv;\n"
    "  do { double f; memcpy(&f, &old, 8); f += v; memcpy(&nv, &f, 8); }\n"
    "  while (!__atomic_compare_exchange_n(q, &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "}\n"
    "static inline void tcg_atomic_add_bool(uint8_t *p, int64_t i, int v) { if (v) __atomic_store_n(&p[i], 1, __ATOMIC_RELAXED); }\n"
    "static inline void tcg_atomic_add_int4(uint8_t *p, int64_t i, int8_t v) {\n"
    "  int sh = (int)(i & 1) * 4;\n"
    "  uint8_t old = __atomic_load_n(&p[i >> 1], __ATOMIC_RELAXED), nv;\n"
    "  do { int8_t x = tcg_wrap_i4(tcg_sx4((uint8_t)((old >> sh) & 15)) + v); nv = (uint8_t)((old & ~(15 << sh)) | ((x & 15) << sh)); }\n"
    "  while (!__atomic_compare_exchange_n(&p[i >> 1], &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "}\n"
    "static inline void tcg_atomic_add_uint4(uint8_t *p, int64_t i, uint8_t v) {\n"
    "  int sh = (int)(i & 1) * 4;\n"
    "  uint8_t old = __atomic_load_n(&p[i >> 1], __ATOMIC_RELAXED), nv;\n"
    "  do { nv = (uint8_t)((old & ~(15 << sh)) | ((((old >> sh) + v) & 15) << sh)); }\n"
    "  while (!__atomic_compare_exchange_n(&p[i >> 1], &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
    "}\n";

/* Per narrow float type: rounding to its precision and an atomic add on its encoding. */
static void emit_narrow_helpers(tc_strbuf *sb) {
  for (int c = TC_DT_INVALID + 1; c < TC_DT_COUNT; c++) {
    tc_dtype d = tc_dt((tc_scalar_type)c);
    if (!tc_dtype_is_narrow_float(d)) continue;
    const char *n = tc_dtype_elem_name(d), *st = tc_dtype_c_storage(d);
    /* the encoder every store and cast uses: saturating where tc_dtype_store_saturates says */
    char enc[96];
    snprintf(enc, sizeof enc, "tcg_f32_to_%s%s", n, tc_dtype_store_saturates(d) ? "_sat" : "");
    tc_sb_printf(sb, "static inline float tcg_r_%s(float x) { return tcg_%s_to_f32(%s(x)); }\n", n, n, enc);
    if (tc_dtype_is_packed4(d)) {
      tc_sb_printf(sb,
                   "static inline void tcg_atomic_add_%s(uint8_t *p, int64_t i, float v) {\n"
                   "  int sh = (int)(i & 1) * 4;\n"
                   "  uint8_t old = __atomic_load_n(&p[i >> 1], __ATOMIC_RELAXED), nv;\n"
                   "  do { uint8_t x = %s(tcg_%s_to_f32((uint8_t)((old >> sh) & 15)) + v);\n"
                   "       nv = (uint8_t)((old & ~(15 << sh)) | ((x & 15) << sh)); }\n"
                   "  while (!__atomic_compare_exchange_n(&p[i >> 1], &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
                   "}\n",
                   n, enc, n);
    } else {
      tc_sb_printf(sb,
                   "static inline void tcg_atomic_add_%s(%s *p, int64_t i, float v) {\n"
                   "  %s old = __atomic_load_n(&p[i], __ATOMIC_RELAXED), nv;\n"
                   "  do { nv = %s(tcg_%s_to_f32(old) + v); }\n"
                   "  while (!__atomic_compare_exchange_n(&p[i], &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
                   "}\n",
                   n, st, st, enc, n);
    }
  }
  tc_sb_putc(sb, '\n');
}

static int64_t elem_storage_bytes(tc_dtype d, int64_t n) {
  if (tc_dtype_is_packed4(d)) return (n + 1) / 2;
  switch (d.code) {
  case TC_DT_INT16:
  case TC_DT_UINT16:
  case TC_DT_FLOAT16:
  case TC_DT_BFLOAT16: return 2 * n;
  case TC_DT_INT32:
  case TC_DT_UINT32:
  case TC_DT_FLOAT32: return 4 * n;
  case TC_DT_INT64:
  case TC_DT_UINT64:
  case TC_DT_FLOAT64: return 8 * n;
  default: return n;
  }
}

static bool find_gemm_scratch(const tc_stmt *s, int64_t *max) {
  if (!s) return false;
  bool any = false;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) any |= find_gemm_scratch(s->u.seq.items[i], max);
    return any;
  case TC_ST_FOR: return find_gemm_scratch(s->u.loop.body, max);
  case TC_ST_WHILE: return find_gemm_scratch(s->u.while_.body, max);
  case TC_ST_IF: {
    bool a = find_gemm_scratch(s->u.if_.then_s, max);
    bool b = find_gemm_scratch(s->u.if_.else_s, max);
    return a || b;
  }
  case TC_ST_GEMM: {
    int64_t n = tc_cg_gemm_scratch_floats(s);
    if (n > *max) *max = n;
    return true;
  }
  default: return false;
  }
}

static bool layout_scratch(tc_cg *g) {
  const tc_cpu_plan *P = g->P;
  g->buf_off = TC_NEW_ARRAY(g->a, int64_t, P->nids + 1);
  int64_t off = 0;
  for (int id = 0; id < P->nids; id++) {
    g->buf_off[id] = -1;
    const tc_buffer *b = P->bufs[id];
    if (!b || b->scope == TC_SCOPE_GLOBAL) continue;
    if (b->view_of) { /* a view names the storage of the buffer it views (a smaller id) */
      if (b->view_of->id >= 0 && b->view_of->id < id) g->buf_off[id] = g->buf_off[b->view_of->id];
      continue;
    }
    int64_t n = tc_buffer_numel(b);
    if (n < 0) {
      tc_cf_fail(&g->cf, b->loc, "buffer '%s' needs a constant shape on cpu", b->name);
      return false;
    }
    if (b->dtype.lanes != 1) {
      tc_cf_fail(&g->cf, b->loc, "vector dtypes are not supported by the cpu backend (buffer '%s')", b->name);
      return false;
    }
    int64_t copies = P->storage[id] == TC_CPU_STORE_PER_THREAD ? P->nthreads : 1;
    int64_t bytes = copies * ((elem_storage_bytes(b->dtype, n) + 63) / 64 * 64);
    g->buf_off[id] = off;
    off += bytes > 0 ? bytes : 64;
  }
  int64_t gf = 0;
  if (find_gemm_scratch(g->k->body, &gf)) {
    g->gemm_pack_off = off;
    off += (gf * 4 + 63) / 64 * 64;
  }
  g->scratch_bytes = off;
  return true;
}

/* (Per-thread copies of 4-bit buffers are indexed by element, tid * numel + i, so they pack
 * contiguously; the space reserved above per copy is at least as large.) */

static void emit_prologue_syms(tc_cg *g) {
  const tc_kernel_ir *k = g->k;
  for (int i = 0; i < k->nsyms; i++) {
    const tc_var *v = k->syms[i];
    tc_strbuf t;
    tc_sb_init(&t);
    tc_cg_expr(g, &t, tc_ir_var_ref(g->a, (tc_var *)v, v->loc));
    tc_cg_line(g, "const %s %s = (%s)tcg_syms[%d];", tc_dtype_c_compute(v->dtype), tc_sb_cstr(&t), tc_dtype_c_compute(v->dtype), i);
    tc_sb_free(&t);
  }
  for (int i = 0; i < k->nparams; i++) {
    const tc_var *v = k->params[i].var;
    if (!v) continue;
    tc_strbuf t;
    tc_sb_init(&t);
    tc_cg_expr(g, &t, tc_ir_var_ref(g->a, (tc_var *)v, v->loc));
    bool fl = !strcmp(tc_dtype_c_compute(v->dtype), "float") || v->dtype.code == TC_DT_FLOAT64;
    tc_cg_line(g, "const %s %s = (%s)%s[%d];", tc_dtype_c_compute(v->dtype), tc_sb_cstr(&t), tc_dtype_c_compute(v->dtype),
               fl ? "tcg_fscalars" : "tcg_scalars", i);
    tc_sb_free(&t);
  }
  tc_cg_line(g, "(void)tcg_syms; (void)tcg_scalars; (void)tcg_fscalars;");
}

/* Whether b is a view or a view names its storage: then its pointer aliases another and is not
 * restrict-qualified. */
static bool aliased(const tc_cg *g, const tc_buffer *b) {
  if (b->view_of) return true;
  for (int id = 0; id < g->P->nids; id++)
    if (g->P->bufs[id] && g->P->bufs[id]->view_of == b) return true;
  return false;
}

/* The pointer, extents and strides of a global buffer: a tensor parameter, or a view of one. */
static void emit_global(tc_cg *g, const tc_buffer *b, int param) {
  tc_strbuf nm;
  tc_sb_init(&nm);
  tc_cg_buf_name(g, &nm, b);
  const char *n = tc_sb_cstr(&nm);
  tc_cg_line(g, "%s *%s%s = (%s *)tcg_data[%d];", tc_dtype_c_storage(b->dtype), aliased(g, b) ? "" : "restrict ", n,
             tc_dtype_c_storage(b->dtype), param);
  for (int j = 0; j < b->ndim; j++) {
    tc_strbuf e;
    tc_sb_init(&e);
    tc_cg_index_expr(g, &e, b->shape[j]);
    tc_cg_line(g, "const int64_t %s_d%d = (int64_t)(%s);", n, j, tc_sb_cstr(&e));
    tc_sb_free(&e);
  }
  for (int j = b->ndim - 2; j >= 0; j--) {
    if (j == b->ndim - 2) tc_cg_line(g, "const int64_t %s_s%d = %s_d%d;", n, j, n, j + 1);
    else tc_cg_line(g, "const int64_t %s_s%d = %s_s%d * %s_d%d;", n, j, n, j + 1, n, j + 1);
  }
  tc_cg_line(g, "(void)%s;", n);
  tc_sb_free(&nm);
}

static void emit_prologue_globals(tc_cg *g) {
  const tc_kernel_ir *k = g->k;
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i].buf) emit_global(g, k->params[i].buf, i);
  for (int i = 0; i < k->nworkspaces; i++) /* T.alloc_global: the runtime's storage after the parameters' */
    emit_global(g, k->workspaces[i], k->nparams + i);
  for (int id = 0; id < g->P->nids; id++) {
    const tc_buffer *b = g->P->bufs[id];
    if (b && b->scope == TC_SCOPE_GLOBAL && b->view_of) emit_global(g, b, b->view_of->param_index);
  }
}

static void emit_nodes(tc_cg *g, const tc_cpu_nodes *l);

static void thread_loop_head(tc_cg *g, const tc_cpu_node *n, const char *what) {
  const tc_kernel_ir *k = g->k;
  int tx = k->threads_ndim > 0 ? k->threads[0] : 1, ty = k->threads_ndim > 1 ? k->threads[1] : 1;
  tc_cg_line(g, "for (int32_t tcg_tid = 0; tcg_tid < %d; tcg_tid++) { /* thread loop, segment %d%s */", g->P->nthreads,
             n->seg, what);
  g->ind++;
  tc_cg_line(g, "const int32_t tcg_tx = tcg_tid %% %d, tcg_ty = (tcg_tid / %d) %% %d, tcg_tz = tcg_tid / %d;", tx, tx,
             ty, tx * ty);
  tc_cg_line(g, "(void)tcg_tx; (void)tcg_ty; (void)tcg_tz;");
  for (int id = 0; id < g->P->nids; id++) {
    const tc_var *v = g->P->vars[id];
    if (v && g->P->storage[id] == TC_CPU_STORE_SEGMENT && g->P->var_seg[id] == n->seg) {
      tc_strbuf nm;
      tc_sb_init(&nm);
      tc_cg_expr(g, &nm, tc_ir_var_ref(g->a, (tc_var *)v, v->loc));
      tc_cg_line(g, "%s %s = 0;", tc_dtype_c_compute(v->dtype), tc_sb_cstr(&nm));
      tc_sb_free(&nm);
    }
  }
}

static void emit_threads(tc_cg *g, const tc_cpu_node *n) {
  bool was = g->in_threads;
  if (n->lockstep) {
    /* all threads compute the value, then all store it */
    const tc_stmt *guarded = n->stmts.items[0];
    const tc_stmt *s = tc_cpu_lockstep_store(guarded);
    const tc_expr *guard = guarded->kind == TC_ST_IF ? guarded->u.if_.cond : NULL;
    const tc_buffer *b = s->u.store.buf;
    int id = g->uniq++;
    tc_cg_line(g, "{ /* lockstep store: %s reads the buffer it writes */", b->name);
    g->ind++;
    tc_cg_line(g, "%s tcg_ls%d[%d];", tc_dtype_c_compute(b->dtype), id, g->P->nthreads);
    if (guard) tc_cg_line(g, "unsigned char tcg_lg%d[%d];", id, g->P->nthreads);
    thread_loop_head(g, n, ", compute");
    g->in_threads = true;
    tc_strbuf v;
    tc_sb_init(&v);
    if (guard) {
      tc_cg_expr(g, &v, guard);
      tc_cg_line(g, "tcg_lg%d[tcg_tid] = (%s) != 0;", id, tc_sb_cstr(&v));
      v.len = 0;
      tc_cg_expr_as(g, &v, s->u.store.value, b->dtype);
      tc_cg_line(g, "if (tcg_lg%d[tcg_tid]) tcg_ls%d[tcg_tid] = %s;", id, id, tc_sb_cstr(&v));
    } else {
      tc_cg_expr_as(g, &v, s->u.store.value, b->dtype);
      tc_cg_line(g, "tcg_ls%d[tcg_tid] = %s;", id, tc_sb_cstr(&v));
    }
    tc_sb_free(&v);
    g->in_threads = was;
    g->ind--;
    tc_cg_line(g, "}");
    thread_loop_head(g, n, ", store");
    g->in_threads = true;
    char val[48];
    snprintf(val, sizeof val, "tcg_ls%d[tcg_tid]", id);
    if (guard) tc_cg_line(g, "if (tcg_lg%d[tcg_tid]) {", id);
    if (guard) g->ind++;
    tc_cg_store_text(g, b, s->u.store.nidx, s->u.store.idx, val);
    if (guard) {
      g->ind--;
      tc_cg_line(g, "}");
    }
    g->in_threads = was;
    g->ind--;
    tc_cg_line(g, "}");
    g->ind--;
    tc_cg_line(g, "}");
    return;
  }
  thread_loop_head(g, n, "");
  g->in_threads = true;
  for (int i = 0; i < n->stmts.n; i++) tc_cg_stmt(g, n->stmts.items[i]);
  g->in_threads = was;
  g->ind--;
  tc_cg_line(g, "}");
}

static void emit_nodes(tc_cg *g, const tc_cpu_nodes *l) {
  for (int i = 0; i < l->n && !g->cf.failed; i++) {
    const tc_cpu_node *n = l->v[i];
    switch (n->kind) {
    case TC_CPU_ONCE: tc_cg_stmt(g, n->stmt); break;
    case TC_CPU_THREADS: emit_threads(g, n); break;
    case TC_CPU_LOOP: {
      const tc_stmt *s = n->stmt;
      if (s->kind == TC_ST_WHILE) { /* its condition is uniform: the planner checked */
        tc_strbuf c;
        tc_sb_init(&c);
        tc_cg_expr(g, &c, s->u.while_.cond);
        tc_cg_line(g, "while (%s) { /* split around: barriers inside */", tc_sb_cstr(&c));
        tc_sb_free(&c);
        g->ind++;
        emit_nodes(g, &n->body);
        g->ind--;
        tc_cg_line(g, "}");
        break;
      }
      tc_strbuf lo, ext, nm;
      tc_sb_init(&lo);
      tc_sb_init(&ext);
      tc_sb_init(&nm);
      tc_cg_index_expr(g, &lo, s->u.loop.min);
      tc_cg_index_expr(g, &ext, s->u.loop.extent);
      tc_cg_expr(g, &nm, tc_ir_var_ref(g->a, s->u.loop.var, s->loc));
      const char *ct = tc_dtype_c_compute(s->u.loop.var->dtype);
      tc_cg_line(g, "for (%s %s = %s, %s_end = (%s)(%s + %s); %s < %s_end; %s++) { /* split around: barriers inside */",
                 ct, tc_sb_cstr(&nm), tc_sb_cstr(&lo), tc_sb_cstr(&nm), ct, tc_sb_cstr(&lo), tc_sb_cstr(&ext),
                 tc_sb_cstr(&nm), tc_sb_cstr(&nm), tc_sb_cstr(&nm));
      tc_sb_free(&lo);
      tc_sb_free(&ext);
      tc_sb_free(&nm);
      g->ind++;
      emit_nodes(g, &n->body);
      g->ind--;
      tc_cg_line(g, "}");
      break;
    }
    case TC_CPU_IF: {
      tc_strbuf c;
      tc_sb_init(&c);
      tc_cg_expr(g, &c, n->stmt->u.if_.cond);
      tc_cg_line(g, "if (%s) {", tc_sb_cstr(&c));
      tc_sb_free(&c);
      g->ind++;
      emit_nodes(g, &n->body);
      g->ind--;
      if (n->orelse.n) {
        tc_cg_line(g, "} else {");
        g->ind++;
        emit_nodes(g, &n->orelse);
        g->ind--;
      }
      tc_cg_line(g, "}");
      break;
    }
    }
  }
}

static void emit_block_fn(tc_cg *g) {
  const tc_kernel_ir *k = g->k;
  const tc_cpu_plan *P = g->P;
  tc_cg_line(g, "/* kernel %s: grid of blocks, %d thread(s) per block; one call runs one block */",
             k->name ? k->name : "?", P->nthreads);
  tc_cg_line(g, "static int tcg_block(void *const *tcg_data, const int64_t *tcg_scalars, const double *tcg_fscalars,");
  tc_cg_line(g, "                     const int64_t *tcg_syms, int32_t tcg_bx, int32_t tcg_by, int32_t tcg_bz,");
  if (k->nlaunches > 1) /* which launch of the kernel this block runs in (tc_kernel_ir.launch_var) */
    tc_cg_line(g, "                     int32_t tcg_launch, unsigned char *restrict tcg_scratch) {");
  else
    tc_cg_line(g, "                     unsigned char *restrict tcg_scratch) {");
  g->ind++;
  tc_cg_line(g, "(void)tcg_bx; (void)tcg_by; (void)tcg_bz; (void)tcg_scratch;");
  emit_prologue_syms(g);
  emit_prologue_globals(g);
  for (int id = 0; id < P->nids; id++) {
    const tc_buffer *b = P->bufs[id];
    if (!b || g->buf_off[id] < 0) continue;
    tc_strbuf nm;
    tc_sb_init(&nm);
    tc_cg_buf_name(g, &nm, b);
    tc_cg_line(g, "%s *%s%s = (%s *)(tcg_scratch + %lld); /* %s %s%s%s */", tc_dtype_c_storage(b->dtype), aliased(g, b) ? "" : "restrict ",
               tc_sb_cstr(&nm), tc_dtype_c_storage(b->dtype), (long long)g->buf_off[id], tc_scope_name(b->scope), tc_dtype_elem_name(b->dtype),
               P->storage[id] == TC_CPU_STORE_PER_THREAD ? ", one copy per thread" : "", b->view_of ? ", a view" : "");
    tc_sb_free(&nm);
  }
  for (int id = 0; id < P->nids; id++) {
    const tc_var *v = P->vars[id];
    if (!v) continue;
    tc_strbuf nm;
    tc_sb_init(&nm);
    bool was = g->in_threads;
    g->in_threads = false;
    tc_cg_expr(g, &nm, tc_ir_var_ref(g->a, (tc_var *)v, v->loc));
    g->in_threads = was;
    /* strip a trailing [0] (per-thread arrays are declared with their size) */
    char *txt = tc_sb_take(&nm);
    if (!txt) continue;
    char *br = strchr(txt, '[');
    if (br) *br = 0;
    if (P->storage[id] == TC_CPU_STORE_PER_THREAD) tc_cg_line(g, "%s %s[%d]; /* per thread */", tc_dtype_c_compute(v->dtype), txt, P->nthreads);
    else if (P->storage[id] == TC_CPU_STORE_SHARED) tc_cg_line(g, "%s %s = 0;", tc_dtype_c_compute(v->dtype), txt);
    free(txt);
  }
  int64_t bufs_end = g->gemm_pack_off ? g->gemm_pack_off : g->scratch_bytes;
  if (bufs_end > 0) /* every block starts with zeroed buffers, as in the reference interpreter */
    tc_cg_line(g, "memset(tcg_scratch, 0, %lld);", (long long)bufs_end);
  emit_nodes(g, &P->top);
  tc_cg_line(g, "return 0;");
  g->ind--;
  tc_cg_line(g, "}");
}

/* The entry that runs blocks begin..end of the grid, one tcg_block each; with_launch: it also
 * takes the launch index and passes it on (a kernel of several launches). */
static void emit_block_loop(tc_cg *g, const char *name, bool with_launch) {
  tc_cg_line(g, "int %s(void *const *data, const int64_t *scalars, const double *fscalars,", name);
  tc_cg_line(g, "                         const int64_t *syms, int64_t begin, int64_t end, void *scratch%s) {", with_launch ? ", int launch" : "");
  tc_cg_line(g, "  int64_t grid[3];");
  tc_cg_line(g, "  tilec_cpu_grid(scalars, fscalars, syms, grid);");
  tc_cg_line(g, "  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0) return 0;");
  tc_cg_line(g, "  for (int64_t b = begin; b < end; b++) {");
  tc_cg_line(g, "    int rc = tcg_block(data, scalars, fscalars, syms, (int32_t)(b %% grid[0]), (int32_t)((b / grid[0]) %% grid[1]),");
  tc_cg_line(g, "                       (int32_t)(b / (grid[0] * grid[1])), %s(unsigned char *)scratch);", with_launch ? "(int32_t)launch, " : "");
  tc_cg_line(g, "    if (rc) return rc;");
  tc_cg_line(g, "  }");
  tc_cg_line(g, "  return 0;");
  tc_cg_line(g, "}");
}

static void emit_entry_points(tc_cg *g) {
  const tc_kernel_ir *k = g->k;
  tc_cg_line(g, "/* ---- entry points (ABI %d) ---- */", TC_CPU_ABI_VERSION);
  tc_cg_line(g, "int tilec_cpu_abi(void) { return %d; }", TC_CPU_ABI_VERSION);
  tc_cg_line(g, "int64_t tilec_cpu_scratch_bytes(void) { return %lld; }", (long long)g->scratch_bytes);
  tc_cg_line(g, "int tilec_cpu_threads_per_block(void) { return %d; }", g->P->nthreads);
  tc_cg_line(g, "void tilec_cpu_grid(const int64_t *tcg_scalars, const double *tcg_fscalars, const int64_t *tcg_syms,");
  tc_cg_line(g, "                    int64_t tcg_grid[3]) {");
  g->ind++;
  emit_prologue_syms(g);
  for (int i = 0; i < 3; i++) {
    if (i < k->grid_ndim && k->grid[i]) {
      tc_strbuf e;
      tc_sb_init(&e);
      tc_cg_index_expr(g, &e, k->grid[i]);
      tc_cg_line(g, "tcg_grid[%d] = (int64_t)(%s);", i, tc_sb_cstr(&e));
      tc_sb_free(&e);
    } else {
      tc_cg_line(g, "tcg_grid[%d] = 1;", i);
    }
  }
  g->ind--;
  tc_cg_line(g, "}");
  if (k->nlaunches > 1) {
    /* Several launches (tc_kernel_ir.nlaunches): the runtime runs the blocks of launch 0 with
     * tilec_cpu_run_launch, waits for all of them, then those of launch 1, and so on;
     * tilec_cpu_run_blocks runs the launches in turn, right only over the whole grid. */
    tc_cg_line(g, "int tilec_cpu_launches(void) { return %d; }", k->nlaunches);
    emit_block_loop(g, "tilec_cpu_run_launch", true);
    tc_cg_line(g, "int tilec_cpu_run_blocks(void *const *data, const int64_t *scalars, const double *fscalars,");
    tc_cg_line(g, "                         const int64_t *syms, int64_t begin, int64_t end, void *scratch) {");
    tc_cg_line(g, "  for (int l = 0; l < %d; l++) {", k->nlaunches);
    tc_cg_line(g, "    int rc = tilec_cpu_run_launch(data, scalars, fscalars, syms, begin, end, scratch, l);");
    tc_cg_line(g, "    if (rc) return rc;");
    tc_cg_line(g, "  }");
    tc_cg_line(g, "  return 0;");
    tc_cg_line(g, "}");
  } else {
    emit_block_loop(g, "tilec_cpu_run_blocks", false);
  }
  tc_cg_line(g, "const char *tilec_cpu_assert_message(int id) {");
  tc_cg_line(g, "  static const char *const msgs[] = {");
  for (int i = 0; i < g->nasserts; i++) {
    tc_strbuf m;
    tc_sb_init(&m);
    tc_sb_putc(&m, '"');
    for (const char *p = g->assert_msgs[i]; *p; p++) {
      unsigned char c = (unsigned char)*p;
      if (c == '"' || c == '\\') tc_sb_printf(&m, "\\%c", c);
      else if (c < 32 || c > 126) tc_sb_printf(&m, "\\%03o", c);
      else tc_sb_putc(&m, (char)c);
    }
    tc_sb_putc(&m, '"');
    tc_cg_line(g, "    %s,", tc_sb_cstr(&m));
    tc_sb_free(&m);
  }
  tc_cg_line(g, "    \"\"};");
  tc_cg_line(g, "  return id >= 1 && id <= %d ? msgs[id - 1] : \"\";", g->nasserts);
  tc_cg_line(g, "}");
}

tilec_status tc_cpu_generate(const tc_lowered *lw, tc_generated *out, tilec_error *err) {
  memset(out, 0, sizeof *out);
  const tc_kernel_ir *k = lw->k;
  const tc_cpu_plan *plan = lw->state;
  if (!plan) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cpu emission needs the plan of the pass 'cpu-plan'");
    return TILEC_ERROR_INTERNAL;
  }
  tc_arena a;
  tc_arena_init(&a);
  tc_strbuf body;
  tc_sb_init(&body);
  tc_cg g = {0};
  g.a = &a;
  g.sb = &body;
  g.P = plan;
  g.k = k;
  g.cf.h = &tc_cpu_cf_hooks;
  g.cf.target = "cpu";
  g.cf.err = err;
  g.subst = TC_NEW_ARRAY(&a, const char *, plan->nids + 1);
  tilec_status st = TILEC_OK;
  if (layout_scratch(&g)) emit_block_fn(&g);
  if (g.cf.failed) {
    st = err && err->status != TILEC_OK ? err->status : TILEC_ERROR_PROGRAM;
  } else {
    tc_strbuf full;
    tc_sb_init(&full);
    tc_sb_printf(&full, "/* generated by tilec %s: kernel %s, target cpu, backend cc */\n", TILEC_VERSION_STRING,
                 k->name ? k->name : "?");
    tc_sb_puts(&full, helpers_head);
    tc_sb_puts(&full, "/* ---- dtype prelude ---- */\n");
    tc_sb_puts(&full, tc_dtype_c_prelude());
    tc_sb_puts(&full, "\n");
    tc_sb_puts(&full, helpers_body);
    emit_narrow_helpers(&full);
    if (g.gemm_pack_off || find_gemm_scratch(k->body, &(int64_t){0})) tc_cpu_emit_gemm_support(&full);
    tc_sb_puts(&full, tc_sb_cstr(&body));
    tc_sb_puts(&full, "\n");
    tc_strbuf *saved = g.sb;
    g.sb = &full;
    emit_entry_points(&g);
    g.sb = saved;
    out->kernel_source = tc_sb_take(&body);
    out->full_source = tc_sb_take(&full);
    if (!out->kernel_source || !out->full_source) {
      free(out->kernel_source);
      free(out->full_source);
      memset(out, 0, sizeof *out);
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory generating C for kernel '%s'", k->name ? k->name : "?");
      st = TILEC_ERROR_NOMEM;
    }
  }
  tc_sb_free(&body);
  tc_arena_free(&a);
  return st;
}
