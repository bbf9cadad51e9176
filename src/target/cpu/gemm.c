/* gemm.c: T.gemm on the cpu.
 *
 * Fast path (C float32; A and B float32 or a narrower float, converted to float32 once per
 * call): op(B) is packed into panels of TCG_NR columns (zero padded); op(A) is read in place
 * when row-major (else copied row-major once), its last partial panel of rows copied into a
 * zero-padded panel; then a register-blocked
 * micro-kernel keeps a TCG_MR x TCG_NR block of C in vector registers (GCC/Clang vector
 * extensions, 16 or 8 lanes by the target's vector width) over the whole k loop and adds it
 * to C once. Transposes are handled by the packing strides. Other accumulator dtypes (float64,
 * float16, integers) use a plain loop nest that accumulates in C's dtype. */
#include <stdio.h>
#include <string.h>

#include "target/cpu/codegen.h"

void tc_cpu_emit_gemm_support(tc_strbuf *sb) {
  tc_sb_puts(sb,
             "/* ---- gemm micro-kernel ---- */\n"
             "#if defined(__GNUC__) || defined(__clang__)\n"
             "#  if defined(__AVX512F__)\n"
             "#    define TCG_VL 16\n"
             "#    define TCG_MR 8\n"
             "#  elif defined(__AVX__) || defined(__ARM_NEON)\n"
             "#    define TCG_VL 8\n"
             "#    define TCG_MR 6\n"
             "#  else\n"
             "#    define TCG_VL 4\n"
             "#    define TCG_MR 4\n"
             "#  endif\n"
             "typedef float tcg_vf __attribute__((vector_size(TCG_VL * 4)));\n"
             "#  define TCG_HAVE_VEC 1\n"
             "#else\n"
             "#  define TCG_VL 4\n"
             "#  define TCG_MR 4\n"
             "#endif\n"
             "#define TCG_NR (2 * TCG_VL)\n"
             "\n"
             "static void tcg_pack_b(int N, int K, const float *B, int64_t bk, int64_t bn, float *restrict Bp) {\n"
             "  for (int j0 = 0; j0 < N; j0 += TCG_NR, Bp += (size_t)K * TCG_NR) {\n"
             "    int nr = N - j0 < TCG_NR ? N - j0 : TCG_NR;\n"
             "    if (nr == TCG_NR && bn == 1) {\n"
             "      for (int k = 0; k < K; k++) memcpy(Bp + k * TCG_NR, B + (int64_t)k * bk + j0, sizeof(float) * TCG_NR);\n"
             "    } else {\n"
             "      for (int k = 0; k < K; k++)\n"
             "        for (int c = 0; c < TCG_NR; c++)\n"
             "          Bp[k * TCG_NR + c] = c < nr ? B[(int64_t)k * bk + (int64_t)(j0 + c) * bn] : 0.0f;\n"
             "    }\n"
             "  }\n"
             "}\n"
             "\n"
             "/* C[mr x nr] (+)= A[TCG_MR rows, stride am] x Bp-panel over K. */\n"
             "static inline __attribute__((always_inline)) void tcg_ukr(int K, const float *restrict A, int64_t am,\n"
             "    const float *restrict Bp, float *restrict C, int64_t cm, int64_t cn, int mr, int nr, int clear) {\n"
             "#ifdef TCG_HAVE_VEC\n"
             "  tcg_vf acc[TCG_MR][2];\n"
             "  for (int r = 0; r < TCG_MR; r++) acc[r][0] = acc[r][1] = (tcg_vf){0};\n"
             "  for (int k = 0; k < K; k++) {\n"
             "    tcg_vf b0, b1;\n"
             "    memcpy(&b0, Bp + (size_t)k * TCG_NR, sizeof b0);\n"
             "    memcpy(&b1, Bp + (size_t)k * TCG_NR + TCG_VL, sizeof b1);\n"
             "    TCG_UNROLL\n"
             "    for (int r = 0; r < TCG_MR; r++) {\n"
             "      const float a = A[(int64_t)r * am + k];\n"
             "      acc[r][0] += a * b0;\n"
             "      acc[r][1] += a * b1;\n"
             "    }\n"
             "  }\n"
             "  if (mr == TCG_MR && nr == TCG_NR && cn == 1) {\n"
             "    for (int r = 0; r < TCG_MR; r++) {\n"
             "      float *c = C + (int64_t)r * cm;\n"
             "      tcg_vf c0 = acc[r][0], c1 = acc[r][1];\n"
             "      if (!clear) {\n"
             "        tcg_vf o0, o1;\n"
             "        memcpy(&o0, c, sizeof o0);\n"
             "        memcpy(&o1, c + TCG_VL, sizeof o1);\n"
             "        c0 += o0;\n"
             "        c1 += o1;\n"
             "      }\n"
             "      memcpy(c, &c0, sizeof c0);\n"
             "      memcpy(c + TCG_VL, &c1, sizeof c1);\n"
             "    }\n"
             "    return;\n"
             "  }\n"
             "  float t[TCG_MR][TCG_NR];\n"
             "  for (int r = 0; r < TCG_MR; r++) {\n"
             "    memcpy(&t[r][0], &acc[r][0], sizeof acc[r][0]);\n"
             "    memcpy(&t[r][TCG_VL], &acc[r][1], sizeof acc[r][1]);\n"
             "  }\n"
             "#else\n"
             "  float t[TCG_MR][TCG_NR];\n"
             "  memset(t, 0, sizeof t);\n"
             "  for (int k = 0; k < K; k++)\n"
             "    for (int r = 0; r < TCG_MR; r++)\n"
             "      for (int c = 0; c < TCG_NR; c++) t[r][c] += A[(int64_t)r * am + k] * Bp[(size_t)k * TCG_NR + c];\n"
             "#endif\n"
             "  for (int r = 0; r < mr; r++)\n"
             "    for (int c = 0; c < nr; c++) {\n"
             "      float *p = C + (int64_t)r * cm + (int64_t)c * cn;\n"
             "      *p = clear ? t[r][c] : *p + t[r][c];\n"
             "    }\n"
             "}\n"
             "\n"
             "/* C[M x N] (+)= op(A)[M x K] op(B)[K x N]; op(A)(i,k) = A[i*am + k*ak], op(B)(k,j) = B[k*bk + j*bn],\n"
             " * C(i,j) = C[i*cm + j*cn]. pack: (M + 16 + ceil(N/NR)*NR) * K floats, 64-byte aligned.\n"
             " * Inlined into each call site, so tile sizes and strides are constants the compiler folds. */\n"
             "static inline __attribute__((always_inline)) void tcg_gemm_f32(int M, int N, int K, const float *A, int64_t am,\n"
             "    int64_t ak, const float *B, int64_t bk, int64_t bn, float *C, int64_t cm, int64_t cn, int clear,\n"
             "    float *restrict pack) {\n"
             "  if (M <= 0 || N <= 0) return;\n"
             "  if (K <= 0) {\n"
             "    if (clear)\n"
             "      for (int i = 0; i < M; i++)\n"
             "        for (int j = 0; j < N; j++) C[(int64_t)i * cm + (int64_t)j * cn] = 0.0f;\n"
             "    return;\n"
             "  }\n"
             "  float *At = pack, *edge = pack + (size_t)M * K, *Bp = pack + (size_t)(M + 16) * K;\n"
             "  if (ak != 1) { /* op(A) not row-major (transpose_A): make a row-major copy */\n"
             "    for (int i = 0; i < M; i++)\n"
             "      for (int k = 0; k < K; k++) At[(size_t)i * K + k] = A[(int64_t)i * am + (int64_t)k * ak];\n"
             "    A = At;\n"
             "    am = K;\n"
             "  }\n"
             "  tcg_pack_b(N, K, B, bk, bn, Bp);\n"
             "  int medge = M % TCG_MR, mfull = M - medge;\n"
             "  if (medge) { /* the last rows, zero padded to a full panel */\n"
             "    memset(edge, 0, sizeof(float) * TCG_MR * (size_t)K);\n"
             "    for (int r = 0; r < medge; r++) memcpy(edge + (size_t)r * K, A + (int64_t)(mfull + r) * am, sizeof(float) * K);\n"
             "  }\n"
             "  for (int j0 = 0; j0 < N; j0 += TCG_NR) {\n"
             "    const float *bp = Bp + (size_t)(j0 / TCG_NR) * TCG_NR * K;\n"
             "    int nr = N - j0 < TCG_NR ? N - j0 : TCG_NR;\n"
             "    for (int i0 = 0; i0 < mfull; i0 += TCG_MR)\n"
             "      tcg_ukr(K, A + (int64_t)i0 * am, am, bp, C + (int64_t)i0 * cm + (int64_t)j0 * cn, cm, cn, TCG_MR, nr, clear);\n"
             "    if (medge) tcg_ukr(K, edge, K, bp, C + (int64_t)mfull * cm + (int64_t)j0 * cn, cm, cn, medge, nr, clear);\n"
             "  }\n"
             "}\n\n");
}

/* Strides of a region's two squeezed dims, and the text of its base element offset. */
typedef struct g2 {
  int64_t ext[2];
  char stride[2][64];
  char base[512];
} g2;

/* The two dims of region r a gemm multiplies over, in dims; the number of non-unit dims (2 when
 * a 1-row or 1-column operand falls back to its last two dims, so the shape is still 2-D, as
 * the front end reads a (1, K) tile). The scratch size and the code both take the dims here. */
static int gemm_dims(const tc_region *r, int dims[2]) {
  int n = 0;
  for (int j = 0; j < r->ndim; j++)
    if (r->r[j].extent != 1) {
      if (n < 2) dims[n] = j;
      n++;
    }
  if (n < 2 && r->ndim >= 2) {
    dims[0] = r->ndim - 2;
    dims[1] = r->ndim - 1;
    n = 2;
  }
  return n;
}

static bool region2(tc_cg *g, const tc_stmt *s, const tc_region *r, g2 *out, const char *what) {
  int dims[2], n = gemm_dims(r, dims);
  if (n < 2) {
    tc_cf_fail(&g->cf, s->loc, "T.gemm operand %s must be a 2-D tile on cpu", what);
    return false;
  }
  if (n > 2) {
    tc_cf_fail(&g->cf, s->loc, "T.gemm operand %s has more than 2 non-unit dimensions", what);
    return false;
  }
  if (tc_layout_on_global(r->buf)) { /* the packed kernels read rows through strides */
    tc_cf_fail(&g->cf, s->loc, "T.gemm operand %s: '%s' is a global buffer with an annotated layout; copy it to a shared tile first",
               what, r->buf->name);
    return false;
  }
  for (int i = 0; i < 2; i++) {
    out->ext[i] = r->r[dims[i]].extent;
    tc_strbuf t;
    tc_sb_init(&t);
    tc_cg_stride(g, &t, r->buf, dims[i]);
    snprintf(out->stride[i], sizeof out->stride[i], "%s", tc_sb_cstr(&t));
    tc_sb_free(&t);
  }
  tc_strbuf b;
  tc_sb_init(&b);
  tc_sb_puts(&b, "(0");
  for (int j = 0; j < r->ndim; j++) {
    tc_sb_puts(&b, " + (int64_t)(");
    tc_cg_index_expr(g, &b, r->r[j].start);
    tc_sb_puts(&b, ") * ");
    tc_cg_stride(g, &b, r->buf, j);
  }
  tc_cg_buf_copy_offset(g, &b, r->buf);
  tc_sb_puts(&b, ")");
  if (b.len >= sizeof out->base) {
    tc_sb_free(&b);
    tc_cf_fail(&g->cf, s->loc, "T.gemm operand %s: region start expression too long", what);
    return false;
  }
  snprintf(out->base, sizeof out->base, "%s", tc_sb_cstr(&b));
  tc_sb_free(&b);
  return true;
}

static bool fast_operand(tc_dtype d) {
  return tc_dtype_is_narrow_float(d) || d.code == TC_DT_FLOAT32;
}

int64_t tc_cg_gemm_scratch_floats(const tc_stmt *s) {
  int da[2], db[2];
  if (gemm_dims(&s->u.gemm.a, da) != 2 || gemm_dims(&s->u.gemm.b, db) != 2) return 0; /* refused by tc_cg_gemm */
  int64_t ra[2] = {s->u.gemm.a.r[da[0]].extent, s->u.gemm.a.r[da[1]].extent};
  int64_t rb[2] = {s->u.gemm.b.r[db[0]].extent, s->u.gemm.b.r[db[1]].extent};
  int64_t M = s->u.gemm.trans_a ? ra[1] : ra[0], K = s->u.gemm.trans_a ? ra[0] : ra[1];
  int64_t N = s->u.gemm.trans_b ? rb[0] : rb[1];
  int64_t n = (M + 16) * K + (N + 64) * K;
  if (s->u.gemm.a.buf->dtype.code != TC_DT_FLOAT32) n += M * K + 16;
  if (s->u.gemm.b.buf->dtype.code != TC_DT_FLOAT32) n += K * N + 16;
  return n;
}

/* Converts a narrow-float operand tile to a dense float32 copy [rows][cols] at scratch offset. */
static void convert_tile(tc_cg *g, const tc_buffer *b, const g2 *x, const char *dst, int id, char which) {
  tc_strbuf off, ld;
  tc_sb_init(&off);
  tc_sb_init(&ld);
  tc_sb_printf(&off, "%s + tcg_g%d_%c0 * %s + tcg_g%d_%c1 * %s", x->base, id, which, x->stride[0], id, which, x->stride[1]);
  tc_cg_load_at(g, &ld, b, tc_sb_cstr(&off));
  tc_cg_line(g, "for (int64_t tcg_g%d_%c0 = 0; tcg_g%d_%c0 < %lld; tcg_g%d_%c0++)", id, which, id, which,
             (long long)x->ext[0], id, which);
  tc_cg_line(g, "  for (int64_t tcg_g%d_%c1 = 0; tcg_g%d_%c1 < %lld; tcg_g%d_%c1++)", id, which, id, which,
             (long long)x->ext[1], id, which);
  tc_cg_line(g, "    %s[tcg_g%d_%c0 * %lld + tcg_g%d_%c1] = %s;", dst, id, which, (long long)x->ext[1], id, which,
             tc_sb_cstr(&ld));
  tc_sb_free(&off);
  tc_sb_free(&ld);
}

void tc_cg_gemm(tc_cg *g, const tc_stmt *s) {
  const tc_region *ra = &s->u.gemm.a, *rb = &s->u.gemm.b, *rc = &s->u.gemm.c;
  if (ra->buf->scope == TC_SCOPE_GLOBAL || rb->buf->scope == TC_SCOPE_GLOBAL || rc->buf->scope == TC_SCOPE_GLOBAL) {
    tc_cf_fail(&g->cf, s->loc, "T.gemm operands must be shared, fragment or local buffers (copy global tiles first)");
    return;
  }
  g2 A, B, C;
  if (!region2(g, s, ra, &A, "A") || !region2(g, s, rb, &B, "B") || !region2(g, s, rc, &C, "C")) return;
  bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
  int64_t M = ta ? A.ext[1] : A.ext[0], K = ta ? A.ext[0] : A.ext[1];
  int64_t Kb = tb ? B.ext[1] : B.ext[0], N = tb ? B.ext[0] : B.ext[1];
  if (K != Kb || C.ext[0] != M || C.ext[1] != N) {
    tc_cf_fail(&g->cf, s->loc, "T.gemm shapes do not match: A is %lldx%lld, B is %lldx%lld, C is %lldx%lld (after transposes)",
               (long long)M, (long long)K, (long long)Kb, (long long)N, (long long)C.ext[0], (long long)C.ext[1]);
    return;
  }
  int id = g->uniq++;
  /* element (i,k) of op(A) = A[base + i*am + k*ak] */
  const char *am = ta ? A.stride[1] : A.stride[0], *ak = ta ? A.stride[0] : A.stride[1];
  const char *bk = tb ? B.stride[1] : B.stride[0], *bn = tb ? B.stride[0] : B.stride[1];
  tc_dtype cd = rc->buf->dtype;
  tc_cg_line(g, "{ /* T.gemm %s%s x %s%s -> %s (%lldx%lldx%lld)%s */", ra->buf->name, ta ? "^T" : "", rb->buf->name,
             tb ? "^T" : "", rc->buf->name, (long long)M, (long long)N, (long long)K, s->u.gemm.clear_accum ? ", clear" : "");
  g->ind++;
  char an[64], bnm[64], cn[64];
  tc_strbuf t;
  tc_sb_init(&t);
  tc_cg_buf_name(g, &t, ra->buf);
  snprintf(an, sizeof an, "%s", tc_sb_cstr(&t));
  t.len = 0;
  tc_cg_buf_name(g, &t, rb->buf);
  snprintf(bnm, sizeof bnm, "%s", tc_sb_cstr(&t));
  t.len = 0;
  tc_cg_buf_name(g, &t, rc->buf);
  snprintf(cn, sizeof cn, "%s", tc_sb_cstr(&t));
  tc_sb_free(&t);
  if (cd.code == TC_DT_FLOAT32 && fast_operand(ra->buf->dtype) && fast_operand(rb->buf->dtype)) {
    int64_t packf = (M + 16) * K + (N + 64) * K;
    tc_cg_line(g, "float *tcg_g%d_pack = (float *)(tcg_scratch + %lld);", id, (long long)g->gemm_pack_off);
    int64_t cvt = g->gemm_pack_off + packf * 4;
    char apx[640], bpx[640], ams[64], aks[64], bks[64], bns[64];
    if (ra->buf->dtype.code == TC_DT_FLOAT32) {
      snprintf(apx, sizeof apx, "%s + %s", an, A.base);
      snprintf(ams, sizeof ams, "%s", am);
      snprintf(aks, sizeof aks, "%s", ak);
    } else {
      cvt = (cvt + 63) / 64 * 64;
      char d[48];
      snprintf(d, sizeof d, "tcg_g%d_a", id);
      tc_cg_line(g, "float *%s = (float *)(tcg_scratch + %lld);", d, (long long)cvt);
      convert_tile(g, ra->buf, &A, d, id, 'a');
      cvt += A.ext[0] * A.ext[1] * 4;
      snprintf(apx, sizeof apx, "%s", d);
      snprintf(ams, sizeof ams, "%lld", ta ? 1LL : (long long)A.ext[1]);
      snprintf(aks, sizeof aks, "%lld", ta ? (long long)A.ext[1] : 1LL);
    }
    if (rb->buf->dtype.code == TC_DT_FLOAT32) {
      snprintf(bpx, sizeof bpx, "%s + %s", bnm, B.base);
      snprintf(bks, sizeof bks, "%s", bk);
      snprintf(bns, sizeof bns, "%s", bn);
    } else {
      cvt = (cvt + 63) / 64 * 64;
      char d[48];
      snprintf(d, sizeof d, "tcg_g%d_b", id);
      tc_cg_line(g, "float *%s = (float *)(tcg_scratch + %lld);", d, (long long)cvt);
      convert_tile(g, rb->buf, &B, d, id, 'b');
      snprintf(bpx, sizeof bpx, "%s", d);
      snprintf(bks, sizeof bks, "%lld", tb ? 1LL : (long long)B.ext[1]);
      snprintf(bns, sizeof bns, "%lld", tb ? (long long)B.ext[1] : 1LL);
    }
    tc_cg_line(g, "tcg_gemm_f32(%lld, %lld, %lld, %s, %s, %s, %s, %s, %s, %s + %s, %s, %s, %d, tcg_g%d_pack);", (long long)M,
               (long long)N, (long long)K, apx, ams, aks, bpx, bks, bns, cn, C.base, C.stride[0], C.stride[1],
               s->u.gemm.clear_accum ? 1 : 0, id);
  } else {
    /* accumulate in C's dtype */
    tc_strbuf la, lb, lc, ca, cb, prod, rp, sum, rs, st;
    tc_sb_init(&la);
    tc_sb_init(&lb);
    tc_sb_init(&lc);
    tc_sb_init(&ca);
    tc_sb_init(&cb);
    tc_sb_init(&prod);
    tc_sb_init(&rp);
    tc_sb_init(&sum);
    tc_sb_init(&rs);
    tc_sb_init(&st);
    char offa[800], offb[800], offc[800];
    snprintf(offa, sizeof offa, "%s + tcg_g%d_i * %s + tcg_g%d_k * %s", A.base, id, am, id, ak);
    snprintf(offb, sizeof offb, "%s + tcg_g%d_k * %s + tcg_g%d_j * %s", B.base, id, bk, id, bn);
    snprintf(offc, sizeof offc, "%s + tcg_g%d_i * %s + tcg_g%d_j * %s", C.base, id, C.stride[0], id, C.stride[1]);
    tc_cg_load_at(g, &la, ra->buf, offa);
    tc_cg_load_at(g, &lb, rb->buf, offb);
    tc_cg_load_at(g, &lc, rc->buf, offc);
    tc_cf_c_convert(&ca, ra->buf->dtype, cd, tc_sb_cstr(&la));
    tc_cf_c_convert(&cb, rb->buf->dtype, cd, tc_sb_cstr(&lb));
    tc_sb_printf(&prod, "%s * %s", tc_sb_cstr(&ca), tc_sb_cstr(&cb));
    tc_cf_c_round(&rp, cd, tc_sb_cstr(&prod));
    tc_sb_printf(&sum, "tcg_g%d_acc + %s", id, tc_sb_cstr(&rp));
    tc_cf_c_round(&rs, cd, tc_sb_cstr(&sum));
    char accn[32];
    snprintf(accn, sizeof accn, "tcg_g%d_acc", id);
    tc_cg_store_at(g, &st, rc->buf, offc, accn);
    tc_cg_line(g, "for (int64_t tcg_g%d_i = 0; tcg_g%d_i < %lld; tcg_g%d_i++)", id, id, (long long)M, id);
    tc_cg_line(g, "  for (int64_t tcg_g%d_j = 0; tcg_g%d_j < %lld; tcg_g%d_j++) {", id, id, (long long)N, id);
    g->ind += 2;
    tc_cg_line(g, "%s tcg_g%d_acc = %s;", tc_dtype_c_compute(cd), id, s->u.gemm.clear_accum ? "0" : tc_sb_cstr(&lc));
    tc_cg_line(g, "for (int64_t tcg_g%d_k = 0; tcg_g%d_k < %lld; tcg_g%d_k++) tcg_g%d_acc = %s;", id, id, (long long)K,
               id, id, tc_sb_cstr(&rs));
    tc_cg_line(g, "%s", tc_sb_cstr(&st));
    g->ind -= 2;
    tc_cg_line(g, "  }");
    tc_sb_free(&la);
    tc_sb_free(&lb);
    tc_sb_free(&lc);
    tc_sb_free(&ca);
    tc_sb_free(&cb);
    tc_sb_free(&prod);
    tc_sb_free(&rp);
    tc_sb_free(&sum);
    tc_sb_free(&rs);
    tc_sb_free(&st);
  }
  g->ind--;
  tc_cg_line(g, "}");
}
