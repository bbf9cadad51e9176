/* layout.c: fragment layouts (where each element of a block-wide tile lives) and their
 * inference over a kernel.
 *
 * A layout is one of a few parametric patterns (gpu.h). Each pattern has a forward map
 * (element -> thread, register) and an inverse (thread, register -> element) that is a closed
 * form in the thread index once the register is a constant, which is what the lowering needs:
 * it unrolls a thread's registers and indexes them with constants, so they stay in registers.
 * Every question the lowering asks about two layouts (does the thread that holds x[i, j] also
 * hold m[i]? in which register?) is answered by enumerating the threads, so the patterns need
 * no algebra beyond these maps.
 *
 * Inference: gemm accumulators get the accumulator pattern of their warp partition; fragments
 * copied from, or accessed at the same indices in a T.Parallel loop as, a fragment with a layout
 * take the same one; row vectors beside a tile (m[i] in a loop over (i, j), or the destination
 * of a row reduction) get the tile's row layout; what is left is dealt cyclically. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu/gpu_internal.h"
#include "ir/walk.h"

bool tc_gpu_plant_parse(const char *name, int *out) {
  static const char *const names[] = {"none", "layout-thread", "barrier", "bounds", "reduce-init"};
  for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
    if (strcmp(names[i], name) == 0) return *out = i, true;
  return false;
}

bool tc_gpu_fail(tc_gpu_plan *P, tc_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(P->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
  return false;
}

static int64_t numel_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static void set_shape(tc_gpu_layout *L, int ndim, const int64_t *shape, int threads) {
  memset(L, 0, sizeof *L);
  L->ndim = ndim;
  for (int i = 0; i < ndim; i++) L->shape[i] = shape[i];
  L->numel = numel_of(ndim, shape);
  L->threads = threads;
  L->reps = 1;
}

bool tc_gl_make_acc(tc_gpu_layout *L, int64_t M, int64_t N, int wm, int wn, int threads, char *why, size_t cap) {
  int64_t shape[2] = {M, N};
  set_shape(L, 2, shape, threads);
  L->kind = TC_GL_ACC;
  L->M = M, L->N = N, L->wm = wm, L->wn = wn;
  /* a tile too small for every warp is held by the first wm x wn warps and replicated in the
   * others (they compute the same values: the block GEMM takes the warp index modulo) */
  if (threads % (wm * wn * 32)) {
    snprintf(why, cap, "%d x %d warps do not divide %d threads", wm, wn, threads);
    return false;
  }
  L->reps = threads / (wm * wn * 32);
  if (M % (16 * wm) || N % (8 * wn)) {
    snprintf(why, cap,
             "a %lld x %lld tile cannot be split over %d x %d warps in 16 x 8 tensor-core tiles",
             (long long)M, (long long)N, wm, wn);
    return false;
  }
  L->num_regs = (M / wm / 16) * (N / wn / 8) * 4;
  return true;
}

bool tc_gl_make_acc_wgmma(tc_gpu_layout *L, int64_t M, int64_t N, int threads, char *why, size_t cap) {
  int warps = threads / 32;
  if (!tc_gl_make_acc(L, M, N, warps, 1, threads, why, cap)) return false;
  L->interleave = M > 16 * (int64_t)warps;
  return true;
}

bool tc_gl_make_acc_coop(tc_gpu_layout *L, int64_t M, int64_t N, int wm, int wn, int threads, char *why, size_t cap) {
  if (!tc_gl_make_acc(L, M, N, wm, wn, threads, why, cap)) return false;
  if ((M / wm) % 16 || (N / wn) % 32) {
    snprintf(why, cap, "a %lld x %lld tile cannot be split over %d x %d simdgroups in 16 x 32 matmul2d fragments", (long long)M,
             (long long)N, wm, wn);
    return false;
  }
  L->coop = true; /* same register count: 16 x 32 / 32 lanes = 16 per fragment */
  return true;
}

bool tc_gl_make_acc_sg(tc_gpu_layout *L, int64_t M, int64_t N, int wm, int wn, int threads, char *why, size_t cap) {
  if (!tc_gl_make_acc(L, M, N, wm, wn, threads, why, cap)) return false;
  L->sg = true; /* same blocks and registers: only the lanes are permuted */
  return true;
}

/* The lane of an ACC (or ROWS_ACC) layout holding row g and column pair q (columns 2q, 2q+1) of
 * an 8x8 block, and back. The m16n8 pattern: lane 4g + q. simdgroup_matrix (`sg`): row
 * 4*l[4] + l[2:1], pair 2*l[3] + l[0], the ownership public Metal GEMMs read through
 * thread_elements() (Apple does not document it; docs/metal.md). */
static int64_t acc_lane(const tc_gpu_layout *L, int64_t g, int64_t q) {
  return L->sg ? ((g >> 2) << 4) | ((q >> 1) << 3) | ((g & 3) << 1) | (q & 1) : g * 4 + q;
}
static int64_t lane_row(const tc_gpu_layout *L, int64_t l) { return L->sg ? ((l >> 4) & 1) * 4 + ((l >> 1) & 3) : l / 4; }
static int64_t lane_pair(const tc_gpu_layout *L, int64_t l) { return L->sg ? ((l >> 3) & 1) * 2 + (l & 1) : l % 4; }

/* ACC with `coop`: a warp's (M/wm) x (N/wn) sub-tile is FN = N/wn/32 fragments of 16 x 32 per
 * 16-row band, fragment f = fi * FN + fj in registers 16f .. 16f+15, each placed as Metal 4's
 * matmul2d destination cooperative tensor (16 x 32, float, execution_simdgroup) places its
 * elements: element i of lane l is row 8*i[2] + 4*l[4] + l[2:1], column 16*i[3] + 4*(l[0] +
 * 2*l[3]) + i[1:0]. Apple does not document it; it is the placement public Metal 4 GEMMs
 * (TileLang's among them) store cooperative tensors by, and the emulator's (docs/metal.md). */
static void coop_split(int64_t r16, int64_t c32, int64_t *lane, int64_t *loc) {
  int64_t r8 = r16 % 8, cg = (c32 % 16) / 4;
  *lane = (cg % 2) + (r8 % 4) * 2 + (cg / 2) * 8 + (r8 / 4) * 16;
  *loc = (c32 / 16) * 8 + (r16 / 8) * 4 + c32 % 4;
}

/* ACC rows: band wmi of the warp partition, 16-row tile mi of the band, row r16 of the tile */
static int64_t acc_row(const tc_gpu_layout *L, int64_t wmi, int64_t mi, int64_t r16) {
  return L->interleave ? mi * 16 * L->wm + wmi * 16 + r16 : wmi * (L->M / L->wm) + mi * 16 + r16;
}
static void acc_row_split(const tc_gpu_layout *L, int64_t row, int64_t *wmi, int64_t *mi, int64_t *r16) {
  int64_t TM = L->M / L->wm;
  *r16 = row % 16;
  if (L->interleave) *wmi = (row / 16) % L->wm, *mi = row / (16 * L->wm);
  else *wmi = row / TM, *mi = (row % TM) / 16;
}

void tc_gl_make_cyclic(tc_gpu_layout *L, int ndim, const int64_t *shape, int threads, int elem_bytes, bool by_warp) {
  set_shape(L, ndim, shape, threads);
  L->kind = TC_GL_CYCLIC;
  int64_t last = ndim ? shape[ndim - 1] : 1;
  int vec = elem_bytes >= 4 ? 4 : 8;
  while (vec > 1 && (last % vec || L->numel % ((int64_t)vec * threads))) vec /= 2;
  L->vec = vec;
  int64_t chunks = (L->numel + vec - 1) / vec;
  L->num_regs = (chunks + threads - 1) / threads * vec;
  /* Rows by warp: only where the whole-tile deal would spread a row over several warps (more
   * than 32 chunks a row) and every warp gets a row. */
  int64_t rows = ndim == 2 ? shape[0] : 0, per_row = last / vec;
  if (by_warp && ndim == 2 && threads % 32 == 0 && last % vec == 0 && per_row > 32 && per_row % 32 == 0 && rows >= threads / 32) {
    int64_t per = threads / 32;
    L->group = 32;
    L->num_regs = (rows + per - 1) / per * (per_row / 32) * vec;
  }
}

void tc_gl_make_repl(tc_gpu_layout *L, int ndim, const int64_t *shape, int threads) {
  set_shape(L, ndim, shape, threads);
  L->kind = TC_GL_REPL;
  L->num_regs = L->numel;
  L->reps = threads;
}

void tc_gl_make_rows(tc_gpu_layout *L, const tc_gpu_layout *tile, int threads) {
  int64_t M = tile->shape[0];
  if (tile->kind == TC_GL_ACC) {
    set_shape(L, 1, &M, threads);
    L->kind = TC_GL_ROWS_ACC;
    L->M = tile->M, L->N = tile->N, L->wm = tile->wm, L->wn = tile->wn;
    L->interleave = tile->interleave;
    /* a matmul2d destination holds rows as a simdgroup_matrix does: row 8*i[2] + 4*l[4] +
     * l[2:1] of each 16-row band, held by the 4 lanes that differ in l[0] and l[3] */
    L->sg = tile->sg || tile->coop;
    L->num_regs = (tile->M / tile->wm / 16) * 2;
    L->reps = 4 * tile->wn * tile->reps;
    return;
  }
  if (tile->kind == TC_GL_CYCLIC && tile->ndim == 2) {
    int64_t N = tile->shape[1], G = tile->group ? tile->group : N / tile->vec;
    if (N % tile->vec == 0 && G < threads && threads % G == 0) {
      set_shape(L, 1, &M, threads);
      L->kind = TC_GL_ROWS_CYCLIC;
      L->vec = tile->vec;
      L->N = N;
      L->group = G;
      int64_t per = threads / G; /* rows held at once by the block */
      L->num_regs = (M + per - 1) / per;
      L->reps = G;
      return;
    }
  }
  tc_gl_make_repl(L, 1, &M, threads);
}

/* Thread t of a plain CYCLIC (R, N) tile holds chunks t, t + threads, ...; where threads * vec
 * is a multiple of N every one of them lies at columns (t * vec) % N .. + vec, so a vector
 * indexed by the tile's column needs only those vec elements in thread t. */
bool tc_gl_make_cols(tc_gpu_layout *L, const tc_gpu_layout *tile, int threads) {
  if (tile->kind == TC_GL_ACC && !tile->coop && tile->ndim == 2) {
    /* lane pair q of every warp in column band wni holds columns wni * TN + 8 ni + 2q + {0, 1}:
     * replicated over the 8 lane rows, the wm row bands and the tile's own replicas */
    int64_t N = tile->N;
    set_shape(L, 1, &N, threads);
    L->kind = TC_GL_COLS_ACC;
    L->M = tile->M, L->N = tile->N, L->wm = tile->wm, L->wn = tile->wn, L->sg = tile->sg;
    L->num_regs = (tile->N / tile->wn / 8) * 2;
    L->reps = 8 * tile->wm * tile->reps;
    return true;
  }
  if (tile->kind != TC_GL_CYCLIC || tile->ndim != 2 || tile->group || tile->planted) return false;
  int64_t N = tile->shape[1], per = N / tile->vec; /* chunks a row: threads t and t + per agree */
  if (N % tile->vec || ((int64_t)threads * tile->vec) % N) return false;
  set_shape(L, 1, &N, threads);
  L->kind = TC_GL_COLS_CYCLIC;
  L->vec = tile->vec;
  L->num_regs = tile->vec;
  L->reps = threads / per;
  return true;
}

void tc_gl_owner(const tc_gpu_layout *L, int64_t e, int64_t rep, int64_t *thread, int64_t *reg) {
  switch (L->kind) {
  case TC_GL_ACC: {
    int64_t TN = L->N / L->wn, NT = TN / 8;
    if (L->coop) {
      int64_t TM = L->M / L->wm, row = e / L->N, col = e % L->N, lane, loc;
      int64_t wmi = row / TM, wni = col / TN, rr = row % TM, cc = col % TN;
      coop_split(rr % 16, cc % 32, &lane, &loc);
      *thread = (wmi * L->wn + wni) * 32 + lane + rep * 32 * L->wm * L->wn;
      *reg = ((rr / 16) * (TN / 32) + cc / 32) * 16 + loc;
      return;
    }
    int64_t row = e / L->N, col = e % L->N, wmi, mi, r16;
    acc_row_split(L, row, &wmi, &mi, &r16);
    int64_t h = r16 / 8, g = r16 % 8;
    int64_t wni = col / TN, cc = col % TN, ni = cc / 8, q = (cc % 8) / 2, c = cc % 2;
    *thread = (wmi * L->wn + wni) * 32 + acc_lane(L, g, q) + rep * 32 * L->wm * L->wn;
    *reg = ((mi * 2 + h) * NT + ni) * 2 + c;
    return;
  }
  case TC_GL_ROWS_ACC: {
    int64_t wmi, mi, r16, per = 4 * L->wn;
    acc_row_split(L, e, &wmi, &mi, &r16);
    *thread = (wmi * L->wn + (rep % per) / 4) * 32 + acc_lane(L, r16 % 8, rep % 4) + (rep / per) * 32 * L->wm * L->wn;
    *reg = mi * 2 + r16 / 8;
    return;
  }
  case TC_GL_CYCLIC: {
    if (L->group) {
      int64_t N = L->shape[1], row = e / N, col = e % N, ch = col / L->vec;
      int64_t per = L->threads / L->group, cpt = N / L->vec / L->group;
      *thread = (row % per) * L->group + ch % L->group;
      *reg = ((row / per) * cpt + ch / L->group) * L->vec + col % L->vec;
      return;
    }
    int64_t chunk = e / L->vec;
    *thread = chunk % L->threads;
    *reg = chunk / L->threads * L->vec + e % L->vec;
    return;
  }
  case TC_GL_ROWS_CYCLIC: {
    int64_t per = L->threads / L->group;
    *thread = (e % per) * L->group + rep;
    *reg = e / per;
    return;
  }
  case TC_GL_COLS_CYCLIC:
    *thread = e / L->vec + rep * (L->shape[0] / L->vec);
    *reg = e % L->vec;
    return;
  case TC_GL_COLS_ACC: { /* rep = (outer * wm + wmi) * 8 + lane row g */
    int64_t TN = L->N / L->wn, wni = e / TN, cc = e % TN, g = rep % 8, wmi = (rep / 8) % L->wm, outer = rep / (8 * L->wm);
    *thread = (wmi * L->wn + wni) * 32 + acc_lane(L, g, (cc % 8) / 2) + outer * 32 * L->wm * L->wn;
    *reg = (cc / 8) * 2 + cc % 2;
    return;
  }
  case TC_GL_REPL:
    *thread = rep;
    *reg = e;
    return;
  }
}

int64_t tc_gl_elem(const tc_gpu_layout *L, int64_t t, int64_t r, int64_t *rep) {
  *rep = 0;
  if (r < 0 || r >= L->num_regs || t < 0 || t >= L->threads) return -1;
  switch (L->kind) {
  case TC_GL_ACC: {
    int64_t TN = L->N / L->wn, NT = TN / 8, W = 32 * L->wm * L->wn;
    *rep = t / W;
    t %= W;
    int64_t w = t / 32, l = t % 32, c = r % 2, ni = (r / 2) % NT, h = (r / (2 * NT)) % 2, mi = r / (4 * NT);
    if (L->coop) {
      int64_t TM = L->M / L->wm, FN = TN / 32, f = r / 16, loc = r % 16;
      int64_t r16 = ((loc / 4) % 2) * 8 + (l / 16) * 4 + (l / 2) % 4, c32 = (loc / 8) * 16 + ((l % 2) + ((l / 8) % 2) * 2) * 4 + loc % 4;
      return ((w / L->wn) * TM + (f / FN) * 16 + r16) * L->N + (w % L->wn) * TN + (f % FN) * 32 + c32;
    }
    int64_t row = acc_row(L, w / L->wn, mi, h * 8 + lane_row(L, l));
    int64_t col = (w % L->wn) * TN + ni * 8 + lane_pair(L, l) * 2 + c;
    return row * L->N + col;
  }
  case TC_GL_ROWS_ACC: {
    int64_t W = 32 * L->wm * L->wn, outer = t / W;
    t %= W;
    int64_t w = t / 32, l = t % 32;
    *rep = outer * 4 * L->wn + (w % L->wn) * 4 + lane_pair(L, l);
    return acc_row(L, w / L->wn, r / 2, (r % 2) * 8 + lane_row(L, l));
  }
  case TC_GL_CYCLIC: {
    if (L->group) {
      int64_t N = L->shape[1], per = L->threads / L->group, cpt = N / L->vec / L->group, k = r / L->vec;
      int64_t row = (k / cpt) * per + t / L->group, ch = (k % cpt) * L->group + t % L->group;
      return row < L->shape[0] ? row * N + ch * L->vec + r % L->vec : -1;
    }
    int64_t e = ((r / L->vec) * L->threads + t) * L->vec + r % L->vec;
    return e < L->numel ? e : -1;
  }
  case TC_GL_ROWS_CYCLIC: {
    int64_t per = L->threads / L->group, e = r * per + t / L->group;
    *rep = t % L->group;
    return e < L->numel ? e : -1;
  }
  case TC_GL_COLS_CYCLIC: {
    int64_t per = L->shape[0] / L->vec;
    *rep = t / per;
    return (t % per) * L->vec + r;
  }
  case TC_GL_COLS_ACC: {
    int64_t W = 32 * L->wm * L->wn, outer = t / W, w = (t % W) / 32, l = t % 32, TN = L->N / L->wn;
    *rep = (outer * L->wm + w / L->wn) * 8 + lane_row(L, l);
    return (w % L->wn) * TN + (r / 2) * 8 + lane_pair(L, l) * 2 + r % 2;
  }
  case TC_GL_REPL:
    *rep = t;
    return r;
  }
  return -1;
}

/* ---- expressions ---- */
static tc_expr *ci(tc_arena *a, int64_t v, tc_loc loc) { return tc_ir_int(a, v, tc_index_dtype(), loc); }
static tc_expr *bin(tc_arena *a, tc_expr_op op, tc_expr *x, tc_expr *y, tc_loc loc) {
  return tc_ir_binary(a, op, x, y, loc);
}
/* x // d and x % d with the identities a reader expects (d == 1). */
static tc_expr *divc(tc_arena *a, tc_expr *x, int64_t d, tc_loc loc) {
  return d == 1 ? x : bin(a, TC_OP_FLOORDIV, x, ci(a, d, loc), loc);
}
static tc_expr *modc(tc_arena *a, tc_expr *x, int64_t d, tc_loc loc) {
  return d == 1 ? ci(a, 0, loc) : bin(a, TC_OP_FLOORMOD, x, ci(a, d, loc), loc);
}
static tc_expr *mulc(tc_arena *a, tc_expr *x, int64_t c, tc_loc loc) {
  return c == 1 ? x : c == 0 ? ci(a, 0, loc) : bin(a, TC_OP_MUL, x, ci(a, c, loc), loc);
}

/* lane_row and lane_pair of the lane expression l */
static tc_expr *lane_row_expr(tc_arena *a, const tc_gpu_layout *L, tc_expr *l, tc_loc loc) {
  if (!L->sg) return divc(a, l, 4, loc);
  return bin(a, TC_OP_ADD, mulc(a, divc(a, l, 16, loc), 4, loc), modc(a, divc(a, l, 2, loc), 4, loc), loc);
}
static tc_expr *lane_pair_expr(tc_arena *a, const tc_gpu_layout *L, tc_expr *l, tc_loc loc) {
  if (!L->sg) return modc(a, l, 4, loc);
  return bin(a, TC_OP_ADD, mulc(a, modc(a, divc(a, l, 8, loc), 2, loc), 2, loc), modc(a, l, 2, loc), loc);
}

/* Split a linear element expression into the layout's logical indices. */
static void split_linear(tc_arena *a, const tc_gpu_layout *L, tc_expr *e, tc_expr **idx, tc_loc loc) {
  int64_t stride = 1;
  for (int d = L->ndim - 1; d >= 0; d--) {
    tc_expr *q = divc(a, e, stride, loc);
    idx[d] = d == 0 ? q : modc(a, q, L->shape[d], loc);
    stride *= L->shape[d];
  }
}

/* r is an expression: a constant, or the counter of a loop over the registers (the target
 * unrolls it; the expressions fold to constants per register then). */
void tc_gl_index_exprs_at(tc_arena *a, const tc_gpu_layout *L, tc_expr *tid, tc_expr *r, tc_expr **idx, tc_expr **valid,
                          tc_loc loc) {
  *valid = NULL;
  switch (L->kind) {
  case TC_GL_ACC: {
    int64_t TM = L->M / L->wm, TN = L->N / L->wn, NT = TN / 8;
    if (L->reps > 1) tid = modc(a, tid, 32 * L->wm * L->wn, loc);
    if (L->coop) {
      tc_expr *w = divc(a, tid, 32, loc), *l = modc(a, tid, 32, loc), *f = divc(a, r, 16, loc), *e = modc(a, r, 16, loc);
      int64_t FN = TN / 32;
      tc_expr *r16 = bin(a, TC_OP_ADD, mulc(a, modc(a, divc(a, e, 4, loc), 2, loc), 8, loc),
                         bin(a, TC_OP_ADD, mulc(a, divc(a, l, 16, loc), 4, loc), modc(a, divc(a, l, 2, loc), 4, loc), loc), loc);
      tc_expr *cg = bin(a, TC_OP_ADD, modc(a, l, 2, loc), mulc(a, modc(a, divc(a, l, 8, loc), 2, loc), 2, loc), loc);
      tc_expr *c32 = bin(a, TC_OP_ADD, mulc(a, divc(a, e, 8, loc), 16, loc), bin(a, TC_OP_ADD, mulc(a, cg, 4, loc), modc(a, e, 4, loc), loc), loc);
      idx[0] = bin(a, TC_OP_ADD, bin(a, TC_OP_ADD, mulc(a, divc(a, w, L->wn, loc), TM, loc), mulc(a, divc(a, f, FN, loc), 16, loc), loc), r16, loc);
      idx[1] = bin(a, TC_OP_ADD, bin(a, TC_OP_ADD, mulc(a, modc(a, w, L->wn, loc), TN, loc), mulc(a, modc(a, f, FN, loc), 32, loc), loc), c32, loc);
      return;
    }
    tc_expr *c = modc(a, r, 2, loc), *ni = modc(a, divc(a, r, 2, loc), NT, loc);
    tc_expr *h = modc(a, divc(a, r, 2 * NT, loc), 2, loc), *mi = divc(a, r, 4 * NT, loc);
    tc_expr *w = divc(a, tid, 32, loc), *l = modc(a, tid, 32, loc);
    /* band and tile strides: stacked (TM, 16) or interleaved (16, 16 * wm) */
    int64_t band = L->interleave ? 16 : TM, tile = L->interleave ? 16 * L->wm : 16;
    tc_expr *row = bin(a, TC_OP_ADD, bin(a, TC_OP_ADD, mulc(a, divc(a, w, L->wn, loc), band, loc), lane_row_expr(a, L, l, loc), loc),
                       bin(a, TC_OP_ADD, mulc(a, mi, tile, loc), mulc(a, h, 8, loc), loc), loc);
    tc_expr *col = bin(a, TC_OP_ADD, bin(a, TC_OP_ADD, mulc(a, modc(a, w, L->wn, loc), TN, loc), mulc(a, lane_pair_expr(a, L, l, loc), 2, loc), loc),
                       bin(a, TC_OP_ADD, mulc(a, ni, 8, loc), c, loc), loc);
    idx[0] = row, idx[1] = col;
    return;
  }
  case TC_GL_ROWS_ACC: {
    int64_t TM = L->M / L->wm, band = L->interleave ? 16 : TM, tile = L->interleave ? 16 * L->wm : 16;
    if (L->reps > 4 * L->wn) tid = modc(a, tid, 32 * L->wm * L->wn, loc);
    tc_expr *w = divc(a, tid, 32, loc), *l = modc(a, tid, 32, loc);
    tc_expr *slot = bin(a, TC_OP_ADD, mulc(a, divc(a, r, 2, loc), tile, loc), mulc(a, modc(a, r, 2, loc), 8, loc), loc);
    idx[0] = bin(a, TC_OP_ADD, bin(a, TC_OP_ADD, mulc(a, divc(a, w, L->wn, loc), band, loc), lane_row_expr(a, L, l, loc), loc), slot, loc);
    return;
  }
  case TC_GL_CYCLIC: {
    if (L->group) { /* row (k / cpt) * per + tid / group, chunk (k % cpt) * group + tid % group */
      int64_t per = L->threads / L->group, cpt = L->shape[1] / L->vec / L->group, rc;
      tc_expr *k = divc(a, r, L->vec, loc);
      idx[0] = bin(a, TC_OP_ADD, mulc(a, divc(a, k, cpt, loc), per, loc), divc(a, tid, L->group, loc), loc);
      tc_expr *ch = bin(a, TC_OP_ADD, mulc(a, modc(a, tc_ir_clone_expr(a, k), cpt, loc), L->group, loc), modc(a, tc_ir_clone_expr(a, tid), L->group, loc), loc);
      idx[1] = bin(a, TC_OP_ADD, mulc(a, ch, L->vec, loc), modc(a, tc_ir_clone_expr(a, r), L->vec, loc), loc);
      bool constant = tc_expr_const_int(r, &rc);
      if (constant ? (rc / L->vec / cpt + 1) * per > L->shape[0] : L->shape[0] % per != 0)
        *valid = bin(a, TC_OP_LT, tc_ir_clone_expr(a, idx[0]), ci(a, L->shape[0], loc), loc);
      return;
    }
    /* e = ((r / vec) * threads + tid) * vec + r % vec */
    if (L->planted) tid = modc(a, bin(a, TC_OP_ADD, tid, ci(a, 1, loc), loc), L->threads, loc);
    tc_expr *e = bin(a, TC_OP_ADD, mulc(a, bin(a, TC_OP_ADD, mulc(a, divc(a, r, L->vec, loc), L->threads, loc), tid, loc), L->vec, loc),
                     modc(a, r, L->vec, loc), loc);
    split_linear(a, L, e, idx, loc);
    int64_t rc;
    bool constant = tc_expr_const_int(r, &rc);
    if (constant ? (rc / L->vec + 1) * L->threads * L->vec > L->numel : L->numel % ((int64_t)L->threads * L->vec) != 0)
      *valid = bin(a, TC_OP_LT, tc_ir_clone_expr(a, e), ci(a, L->numel, loc), loc);
    return;
  }
  case TC_GL_ROWS_CYCLIC: {
    int64_t per = L->threads / L->group, rc;
    tc_expr *e = bin(a, TC_OP_ADD, divc(a, tid, L->group, loc), mulc(a, r, per, loc), loc);
    idx[0] = e;
    bool constant = tc_expr_const_int(r, &rc);
    if (constant ? (rc + 1) * per > L->numel : L->numel % per != 0) *valid = bin(a, TC_OP_LT, tc_ir_clone_expr(a, e), ci(a, L->numel, loc), loc);
    return;
  }
  case TC_GL_COLS_CYCLIC: /* (tid % (N / vec)) * vec + r */
    idx[0] = bin(a, TC_OP_ADD, mulc(a, modc(a, tid, L->shape[0] / L->vec, loc), L->vec, loc), r, loc);
    return;
  case TC_GL_COLS_ACC: { /* (w % wn) * TN + (r / 2) * 8 + pair * 2 + r % 2 */
    int64_t TN = L->N / L->wn;
    if (L->reps > 8 * L->wm) tid = modc(a, tid, 32 * L->wm * L->wn, loc);
    tc_expr *w = divc(a, tid, 32, loc), *l = modc(a, tc_ir_clone_expr(a, tid), 32, loc);
    tc_expr *band = bin(a, TC_OP_ADD, mulc(a, modc(a, w, L->wn, loc), TN, loc), mulc(a, lane_pair_expr(a, L, l, loc), 2, loc), loc);
    idx[0] = bin(a, TC_OP_ADD, band, bin(a, TC_OP_ADD, mulc(a, divc(a, r, 2, loc), 8, loc), modc(a, tc_ir_clone_expr(a, r), 2, loc), loc), loc);
    return;
  }
  case TC_GL_REPL:
    split_linear(a, L, r, idx, loc);
    return;
  }
}

void tc_gl_index_exprs(tc_arena *a, const tc_gpu_layout *L, tc_expr *tid, int64_t r, tc_expr **idx, tc_expr **valid,
                       tc_loc loc) {
  tc_gl_index_exprs_at(a, L, tid, ci(a, r, loc), idx, valid, loc);
}

tc_expr *tc_gl_rep_expr(tc_arena *a, const tc_gpu_layout *L, tc_expr *tid, tc_loc loc) {
  switch (L->kind) {
  case TC_GL_ACC: return L->reps > 1 ? divc(a, tid, 32 * L->wm * L->wn, loc) : ci(a, 0, loc);
  case TC_GL_ROWS_ACC: {
    int64_t W = 32 * L->wm * L->wn;
    tc_expr *inner = bin(a, TC_OP_ADD, mulc(a, modc(a, divc(a, tid, 32, loc), L->wn, loc), 4, loc),
                         lane_pair_expr(a, L, modc(a, tid, 32, loc), loc), loc);
    if (L->reps > 4 * L->wn) inner = bin(a, TC_OP_ADD, inner, mulc(a, divc(a, tid, W, loc), 4 * L->wn, loc), loc);
    return inner;
  }
  case TC_GL_ROWS_CYCLIC: return modc(a, tid, L->group, loc);
  case TC_GL_COLS_CYCLIC: return divc(a, tid, L->shape[0] / L->vec, loc);
  case TC_GL_COLS_ACC: { /* (outer * wm + wmi) * 8 + lane row */
    int64_t W = 32 * L->wm * L->wn;
    tc_expr *band = bin(a, TC_OP_ADD, mulc(a, divc(a, tid, 32 * L->wn, loc), 8, loc),
                        lane_row_expr(a, L, modc(a, tc_ir_clone_expr(a, tid), 32, loc), loc), loc);
    (void)W; /* tid / (32 wn) is outer * wm + wmi: the warps are numbered band-major, outer copies last */
    return band;
  }
  case TC_GL_REPL: return tid;
  default: return ci(a, 0, loc);
  }
}

bool tc_gl_equal(const tc_gpu_layout *x, const tc_gpu_layout *y) {
  if (x->kind != y->kind || x->ndim != y->ndim || x->threads != y->threads) return false;
  for (int i = 0; i < x->ndim; i++)
    if (x->shape[i] != y->shape[i]) return false;
  return x->M == y->M && x->N == y->N && x->wm == y->wm && x->wn == y->wn && x->interleave == y->interleave && x->coop == y->coop && x->sg == y->sg &&
         x->vec == y->vec && x->group == y->group;
}

void tc_gl_describe(const tc_gpu_layout *L, char *out, size_t cap) {
  switch (L->kind) {
  case TC_GL_ACC:
    snprintf(out, cap, "%sacc(%lldx%lld, warps %dx%d%s%s)", L->coop ? "matmul2d " : L->sg ? "simdgroup " : "", (long long)L->M, (long long)L->N, L->wm, L->wn,
             L->interleave ? ", interleaved" : "", L->reps > 1 ? ", replicated" : "");
    break;
  case TC_GL_ROWS_ACC: snprintf(out, cap, "rows of %sacc(%lldx%lld, warps %dx%d)", L->sg ? "simdgroup " : "", (long long)L->M, (long long)L->N, L->wm, L->wn); break;
  case TC_GL_CYCLIC:
    if (L->group) snprintf(out, cap, "cyclic(vec %d, rows by groups of %lld threads)", L->vec, (long long)L->group);
    else snprintf(out, cap, "cyclic(vec %d)", L->vec);
    break;
  case TC_GL_ROWS_CYCLIC: snprintf(out, cap, "rows of cyclic(groups of %lld threads)", (long long)L->group); break;
  case TC_GL_COLS_CYCLIC: snprintf(out, cap, "columns of cyclic(vec %d)", L->vec); break;
  case TC_GL_COLS_ACC: snprintf(out, cap, "columns of %sacc(%lldx%lld, warps %dx%d)", L->sg ? "simdgroup " : "", (long long)L->M, (long long)L->N, L->wm, L->wn); break;
  case TC_GL_REPL: snprintf(out, cap, "replicated"); break;
  }
}

bool tc_gpu_warp_partition(tc_gemm_policy policy, int64_t M, int64_t N, int warps, int *wm, int *wn) {
  /* Candidates in the policy's order of preference; the first that tiles M x N wins. */
  int best_m = 0, best_n = 0;
  double best_score = 1e30;
  for (int m = 1; m <= warps; m *= 2) {
    int n = warps / m;
    if (m * n != warps || M % (16 * m) || N % (8 * n)) continue;
    double score;
    if (policy == TC_POLICY_FULL_ROW) score = -m;       /* as many warps along M as possible */
    else if (policy == TC_POLICY_FULL_COL) score = -n;  /* along N */
    else { /* Square: warp tiles as close to square as possible */
      double tm = (double)M / m, tn = (double)N / n;
      score = tm > tn ? tm / tn : tn / tm;
    }
    if (score < best_score) best_score = score, best_m = m, best_n = n;
  }
  if (!best_m) /* too small for every warp: the largest partition that fits (the rest replicate) */
    return warps > 1 && tc_gpu_warp_partition(policy, M, N, warps / 2, wm, wn);
  *wm = best_m, *wn = best_n;
  return true;
}

/* ---- inference ---- */
typedef struct infer_ctx {
  tc_gpu_plan *P;
  bool changed;
  bool ok;
  int seed_min_dims;
} infer_ctx;

static bool const_shape(const tc_buffer *b, int64_t *shape) {
  return b->ndim <= TC_GL_MAXDIM && tc_buffer_const_shape(b, shape);
}

static bool is_frag(const tc_buffer *b) { return b && tc_scope_in_registers(b->scope); }

static bool assign(infer_ctx *C, const tc_buffer *b, const tc_gpu_layout *L) {
  tc_gpu_plan *P = C->P;
  if (P->frag[b->id]) return true;
  /* a Metal accumulator scope is opaque to propagation and seeding: it takes only its
   * instruction's placement (infer_gemm), whatever a T.Parallel or a copy beside it says */
  if (b->scope == TC_SCOPE_METAL_SIMDGROUP && !(L->kind == TC_GL_ACC && L->sg)) return true;
  if (b->scope == TC_SCOPE_METAL_COOPERATIVE_TENSOR && !(L->kind == TC_GL_ACC && L->coop)) return true;
  int64_t shape[TC_GL_MAXDIM];
  if (!const_shape(b, shape) || b->ndim != L->ndim) return true;
  for (int i = 0; i < b->ndim; i++)
    if (shape[i] != L->shape[i]) return true;
  P->frag[b->id] = TC_NEW(P->a, tc_gpu_layout);
  *P->frag[b->id] = *L;
  P->frag[b->id]->planted = P->desc->plant == TC_PLANT_LAYOUT_THREAD && L->kind == TC_GL_CYCLIC && !L->group;
  C->changed = true;
  return true;
}

bool tc_gpu_parallel_nest(const tc_stmt *s, par_nest *out) {
  out->n = 0;
  /* a T.vectorized loop directly inside a T.Parallel nest is one more parallel dimension */
  while (s && s->kind == TC_ST_FOR && (s->u.loop.kind == TC_LOOP_PARALLEL || (out->n > 0 && s->u.loop.kind == TC_LOOP_VECTORIZED)) &&
         out->n < TC_GL_MAXDIM) {
    int64_t mn, ext;
    if (!tc_expr_const_int(s->u.loop.min, &mn) || mn != 0 || !tc_expr_const_int(s->u.loop.extent, &ext)) return false;
    out->var[out->n] = s->u.loop.var;
    out->ext[out->n++] = ext;
    s = s->u.loop.body;
    /* a body that is a seq of one loop continues the nest */
    while (s && s->kind == TC_ST_SEQ && s->u.seq.n == 1) s = s->u.seq.items[0];
  }
  out->body = (tc_stmt *)s;
  return out->n > 0;
}

/* Which loop variable an index is (exactly a VAR of the nest), or -1. */
static int nest_var_of(const par_nest *N, const tc_expr *e) {
  if (!e || e->op != TC_OP_VAR) return -1;
  for (int i = 0; i < N->n; i++)
    if (N->var[i] == e->var) return i;
  return -1;
}

typedef struct lets_scan {
  par_lets *L;
  const tc_var *assigned[64];
  int nassigned;
  bool overflow;
} lets_scan;

static bool lets_cb(void *ctx, tc_stmt *s) {
  lets_scan *S = ctx;
  if (s->kind == TC_ST_LET && tc_dtype_is_int(s->u.let.var->dtype)) {
    if (S->L->n < 64) S->L->var[S->L->n] = s->u.let.var, S->L->value[S->L->n++] = s->u.let.value;
  } else if (s->kind == TC_ST_ASSIGN) {
    if (S->nassigned < 64) S->assigned[S->nassigned++] = s->u.let.var;
    else S->overflow = true;
  }
  return true;
}

void tc_gpu_collect_lets(const tc_stmt *body, par_lets *out) {
  lets_scan S = {.L = out};
  out->n = 0;
  tc_visit_stmts((tc_stmt *)body, lets_cb, &S);
  int k = 0;
  for (int i = 0; i < out->n; i++) {
    bool again = S.overflow;
    for (int j = 0; j < S.nassigned && !again; j++) again = S.assigned[j] == out->var[i];
    if (!again) out->var[k] = out->var[i], out->value[k++] = out->value[i];
  }
  out->n = k;
}

const tc_expr *tc_gpu_let_value(const par_lets *L, const tc_var *v) {
  for (int i = 0; L && i < L->n; i++)
    if (L->var[i] == v) return L->value[i];
  return NULL;
}

/* e as c + sum coef[d] * var[d] over the nest's vars, with every other leaf a constant. */
static bool nest_affine(const par_nest *N, const par_lets *lets, const tc_expr *e, int64_t scale, int64_t *coef, int64_t *c,
                        int depth) {
  if (depth > 64) return false;
  switch (e->op) {
  case TC_OP_CONST_INT: *c += scale * e->ival; return true;
  case TC_OP_VAR: {
    int d = nest_var_of(N, e);
    const tc_expr *v;
    if (d < 0) return (v = tc_gpu_let_value(lets, e->var)) && nest_affine(N, lets, v, scale, coef, c, depth + 1);
    coef[d] += scale;
    return true;
  }
  case TC_OP_ADD:
    return nest_affine(N, lets, e->args[0], scale, coef, c, depth + 1) && nest_affine(N, lets, e->args[1], scale, coef, c, depth + 1);
  case TC_OP_SUB:
    return nest_affine(N, lets, e->args[0], scale, coef, c, depth + 1) && nest_affine(N, lets, e->args[1], -scale, coef, c, depth + 1);
  case TC_OP_NEG: return nest_affine(N, lets, e->args[0], -scale, coef, c, depth + 1);
  case TC_OP_CAST:
    return tc_dtype_is_int(e->dtype) && tc_dtype_is_int(e->args[0]->dtype) && nest_affine(N, lets, e->args[0], scale, coef, c, depth + 1);
  case TC_OP_MUL:
    if (e->args[0]->op == TC_OP_CONST_INT) return nest_affine(N, lets, e->args[1], scale * e->args[0]->ival, coef, c, depth + 1);
    if (e->args[1]->op == TC_OP_CONST_INT) return nest_affine(N, lets, e->args[0], scale * e->args[1]->ival, coef, c, depth + 1);
    return false;
  default: return false;
  }
}

bool tc_gpu_bijective_access(const par_nest *N, const par_lets *lets, int ndim, const int64_t *shape, int nidx,
                             tc_expr *const *idx, par_map *m) {
  if (nidx != ndim || ndim < 1 || N->n < 1) return false;
  memset(m, 0, sizeof *m);
  int64_t numel = 1, total = 1;
  for (int k = ndim - 1; k >= 0; k--) {
    int64_t coef[TC_GL_MAXDIM] = {0}, c = 0;
    /* [x // n, x % n] over dims of extents (_, n) is element x of the two as one: (x // n) * n
     * + x % n == x for floor division, whatever x is */
    const tc_expr *q = idx[k - (k > 0)], *r = idx[k];
    if (k > 0 && r->op == TC_OP_FLOORMOD && q->op == TC_OP_FLOORDIV && r->args[1]->op == TC_OP_CONST_INT &&
        q->args[1]->op == TC_OP_CONST_INT && r->args[1]->ival == shape[k] && q->args[1]->ival == shape[k]) {
      int64_t qc[TC_GL_MAXDIM] = {0}, qk = 0;
      if (!nest_affine(N, lets, r->args[0], 1, coef, &c, 0) || !nest_affine(N, lets, q->args[0], 1, qc, &qk, 0) || qk != c ||
          memcmp(qc, coef, sizeof qc) != 0)
        return false;
      for (int d = 0; d < N->n; d++) m->stride[d] += coef[d] * numel;
      m->offset += c * numel;
      numel *= shape[k] * shape[k - 1];
      k--;
      continue;
    }
    if (!nest_affine(N, lets, idx[k], 1, coef, &c, 0)) return false;
    for (int d = 0; d < N->n; d++) m->stride[d] += coef[d] * numel;
    m->offset += c * numel;
    numel *= shape[k];
  }
  for (int d = 0; d < N->n; d++) total *= N->ext[d];
  if (total != numel) return false;
  /* mixed radix: take the dims in increasing |stride|; each must be the product of the
   * extents before it (dims of extent 1 have no say and must have stride 0) */
  bool used[TC_GL_MAXDIM] = {false};
  int64_t expect = 1, low = 0; /* the smallest element index the map reaches */
  for (int d = 0; d < N->n; d++)
    if (N->ext[d] == 1) {
      if (m->stride[d]) return false;
      used[d] = true;
    }
  for (;;) {
    int pick = -1;
    for (int d = 0; d < N->n; d++)
      if (!used[d] && (m->stride[d] == expect || m->stride[d] == -expect)) pick = d;
    if (pick < 0) break;
    used[pick] = true;
    if (m->stride[pick] < 0) low += m->stride[pick] * (N->ext[pick] - 1);
    expect *= N->ext[pick];
  }
  for (int d = 0; d < N->n; d++)
    if (!used[d]) return false;
  return expect == numel && m->offset + low == 0;
}

bool tc_gpu_map_equal(const par_nest *N, const par_map *x, const par_map *y) {
  for (int d = 0; d < N->n; d++)
    if (x->stride[d] != y->stride[d]) return false;
  return x->offset == y->offset;
}

static void note_bijective(access_scan *A, const tc_buffer *b, const par_map *m, bool write) {
  int i = 0;
  while (i < A->nbij && A->bij[i] != b) i++;
  if (i == A->nbij) {
    if (A->nbij == 64) return;
    A->bij[A->nbij] = b, A->bij_map[A->nbij] = *m, A->nbij++;
  } else if (!tc_gpu_map_equal(A->N, &A->bij_map[i], m)) {
    A->bij_mixed[i] = true;
  }
  if (write) A->bij_written[i] = true;
}

static void note_access(access_scan *A, const tc_buffer *b, int nidx, tc_expr *const *idx, bool write) {
  if (!is_frag(b)) return;
  int64_t shape[TC_GL_MAXDIM];
  if (!const_shape(b, shape)) return;
  const par_nest *N = A->N;
  bool exact = nidx == N->n;
  for (int i = 0; exact && i < nidx; i++) exact = nest_var_of(N, idx[i]) == i && shape[i] == N->ext[i];
  if (exact) {
    if (A->nexact < 64) A->exact[A->nexact++] = b;
    if (write && !A->exact_written) A->exact_written = b;
    return;
  }
  par_map m;
  if (tc_gpu_bijective_access(N, &A->lets, b->ndim, shape, nidx, idx, &m)) {
    note_bijective(A, b, &m, write);
    return;
  }
  if (nidx == 1 && N->n >= 2 && nest_var_of(N, idx[0]) == 0 && shape[0] == N->ext[0] && A->nrows < 64)
    A->rows[A->nrows++] = b;
  else if (nidx == 1 && N->n == 2 && nest_var_of(N, idx[0]) == 1 && shape[0] == N->ext[1] && A->ncols < 64)
    A->cols[A->ncols++] = b;
}

static void scan_expr(access_scan *A, const tc_expr *e) {
  if (!e) return;
  if (e->op == TC_OP_LOAD) note_access(A, e->buf, e->nargs, e->args, false);
  for (int i = 0; i < e->nargs; i++) scan_expr(A, e->args[i]);
}

static bool scan_stmt_cb(void *ctx, tc_stmt *s) {
  access_scan *A = ctx;
  switch (s->kind) {
  case TC_ST_STORE:
    note_access(A, s->u.store.buf, s->u.store.nidx, s->u.store.idx, true);
    for (int i = 0; i < s->u.store.nidx; i++) scan_expr(A, s->u.store.idx[i]);
    scan_expr(A, s->u.store.value);
    break;
  case TC_ST_LET: case TC_ST_ASSIGN: scan_expr(A, s->u.let.value); break;
  case TC_ST_IF: scan_expr(A, s->u.if_.cond); break;
  case TC_ST_WHILE: scan_expr(A, s->u.while_.cond); break;
  case TC_ST_FOR: scan_expr(A, s->u.loop.min); scan_expr(A, s->u.loop.extent); break;
  case TC_ST_ATOMIC_ADD:
    if (!s->u.atomic.dst.buf) {
      for (int i = 0; i < s->u.atomic.nidx; i++) scan_expr(A, s->u.atomic.idx[i]);
      scan_expr(A, s->u.atomic.value);
    }
    break;
  default: break;
  }
  return true;
}

void tc_gpu_scan_nest(access_scan *A, const par_nest *N) {
  memset(A, 0, sizeof *A);
  A->N = N;
  tc_gpu_collect_lets(N->body, &A->lets);
  tc_visit_stmts(N->body, scan_stmt_cb, A);
}

static void infer_gemm(infer_ctx *C, tc_stmt *s) {
  tc_gpu_plan *P = C->P;
  tc_buffer *cb = s->u.gemm.c.buf;
  int64_t shape[2];
  if (!is_frag(cb) || cb->ndim != 2 || !const_shape(cb, shape)) return;
  if (P->frag[cb->id]) return;
  int wm, wn, warps = P->threads / P->desc->warp_size;
  char why[160];
  char instr_why[200];
  bool wgmma = tc_gpu_gemm_choose(P, s, instr_why, sizeof instr_why) == TC_GPU_GEMM_WGMMA;
  if (wgmma) {
    wm = warps, wn = 1; /* warpgroups split M in 64-row blocks, each warp 16 rows of them */
  } else if (!tc_gpu_acc_partition(s, P->threads, P->desc->warp_size, &wm, &wn)) {
    tc_gpu_fail(P, s->loc,
                "T.gemm: a %lld x %lld accumulator cannot be split over %d threads in 16 x 8 tensor-core tiles "
                "(on %s the threads must be a multiple of %d and each warp needs 16 x 8 elements)",
                (long long)shape[0], (long long)shape[1], P->threads, P->desc->target, P->desc->warp_size);
    C->ok = false;
    return;
  }
  /* a Metal accumulator scope (src/target/metal/simdgroup_scope.c) fixes the placement */
  tc_gpu_layout L;
  bool coop = cb->scope == TC_SCOPE_METAL_COOPERATIVE_TENSOR, sg = cb->scope == TC_SCOPE_METAL_SIMDGROUP;
  if (!(wgmma ? tc_gl_make_acc_wgmma(&L, shape[0], shape[1], P->threads, why, sizeof why)
        : coop ? tc_gl_make_acc_coop(&L, shape[0], shape[1], wm, wn, P->threads, why, sizeof why)
        : sg   ? tc_gl_make_acc_sg(&L, shape[0], shape[1], wm, wn, P->threads, why, sizeof why)
               : tc_gl_make_acc(&L, shape[0], shape[1], wm, wn, P->threads, why, sizeof why))) {
    tc_gpu_fail(P, s->loc, "T.gemm: %s", why);
    C->ok = false;
    return;
  }
  assign(C, cb, &L);
}

/* L over another shape of as many elements, when each element keeps its (thread, register):
 * the cyclic deal depends on the flat index alone, so a reshape keeps it if its chunks stay
 * within the new shape's rows. */
static bool reshaped(const tc_gpu_layout *L, int ndim, const int64_t *shape, tc_gpu_layout *out) {
  if (L->kind != TC_GL_CYCLIC || L->group || ndim > TC_GL_MAXDIM || numel_of(ndim, shape) != L->numel) return false;
  if (shape[ndim - 1] % L->vec) return false;
  *out = *L;
  out->ndim = ndim;
  for (int i = 0; i < TC_GL_MAXDIM; i++) out->shape[i] = i < ndim ? shape[i] : 0;
  return true;
}

/* Fragments a nest indexes by the same bijection take one layout (over their own shapes). */
static void propagate_bijections(infer_ctx *C, const par_nest *N, const access_scan *A) {
  tc_gpu_plan *P = C->P;
  int n = 0;
  const tc_buffer *buf[128];
  par_map map[128];
  for (int i = 0; i < A->nexact && n < 128; i++) {
    par_map m = {{0}, 0};
    int64_t stride = 1;
    for (int d = N->n - 1; d >= 0; d--) m.stride[d] = stride, stride *= N->ext[d];
    buf[n] = A->exact[i], map[n++] = m;
  }
  for (int i = 0; i < A->nbij && n < 128; i++)
    if (!A->bij_mixed[i]) buf[n] = A->bij[i], map[n++] = A->bij_map[i];
  for (int i = 0; i < n; i++) {
    const tc_gpu_layout *L = P->frag[buf[i]->id];
    if (!L) continue;
    for (int j = 0; j < n; j++) {
      int64_t shape[TC_GL_MAXDIM];
      if (P->frag[buf[j]->id] || !tc_gpu_map_equal(N, &map[i], &map[j]) || !const_shape(buf[j], shape)) continue;
      tc_gpu_layout R;
      if (buf[j]->ndim == L->ndim && numel_of(L->ndim, L->shape) == numel_of(buf[j]->ndim, shape) &&
          memcmp(shape, L->shape, sizeof(int64_t) * (size_t)L->ndim) == 0)
        assign(C, buf[j], L);
      else if (reshaped(L, buf[j]->ndim, shape, &R))
        assign(C, buf[j], &R);
    }
  }
}

static void infer_parallel(infer_ctx *C, tc_stmt *s) {
  tc_gpu_plan *P = C->P;
  par_nest N;
  if (!tc_gpu_parallel_nest(s, &N)) return;
  access_scan A;
  tc_gpu_scan_nest(&A, &N);
  const tc_gpu_layout *have = NULL;
  for (int i = 0; i < A.nexact && !have; i++) have = P->frag[A.exact[i]->id];
  if (have) {
    for (int i = 0; i < A.nexact; i++) assign(C, A.exact[i], have);
    if (N.n == 2) {
      tc_gpu_layout rows, cols;
      tc_gl_make_rows(&rows, have, P->threads);
      for (int i = 0; i < A.nrows; i++) assign(C, A.rows[i], &rows);
      if (tc_gl_make_cols(&cols, have, P->threads))
        for (int i = 0; i < A.ncols; i++) assign(C, A.cols[i], &cols);
    }
  }
  propagate_bijections(C, &N, &A);
}

static void infer_copy(infer_ctx *C, tc_stmt *s) {
  tc_gpu_plan *P = C->P;
  const tc_region *src = &s->u.copy.src, *dst = &s->u.copy.dst;
  if (!is_frag(src->buf) || !is_frag(dst->buf) || src->buf->ndim > TC_GL_MAXDIM || dst->buf->ndim > TC_GL_MAXDIM ||
      !tc_gpu_region_whole(src) || !tc_gpu_region_whole(dst))
    return;
  tc_gpu_layout *ls = P->frag[src->buf->id], *ld = P->frag[dst->buf->id];
  if (ls && !ld) assign(C, dst->buf, ls);
  else if (ld && !ls) assign(C, src->buf, ld);
}

static void infer_reduce(infer_ctx *C, tc_stmt *s) {
  tc_gpu_plan *P = C->P;
  const tc_region *src = &s->u.reduce.src, *dst = &s->u.reduce.dst;
  if (!is_frag(src->buf) || !is_frag(dst->buf) || src->buf->ndim != 2 || dst->buf->ndim != 1) return;
  tc_gpu_layout *ls = P->frag[src->buf->id];
  if (!ls || s->u.reduce.dim != 1) return;
  tc_gpu_layout rows;
  tc_gl_make_rows(&rows, ls, P->threads);
  assign(C, dst->buf, &rows);
}

static bool infer_cb(void *ctx, tc_stmt *s) {
  infer_ctx *C = ctx;
  switch (s->kind) {
  case TC_ST_GEMM: infer_gemm(C, s); return true;
  case TC_ST_FOR:
    if (s->u.loop.kind == TC_LOOP_PARALLEL) {
      infer_parallel(C, s);
      return false;
    }
    return true;
  case TC_ST_COPY: infer_copy(C, s); return true;
  case TC_ST_REDUCE: infer_reduce(C, s); return true;
  default: return true;
  }
}

/* Whether the kernel reduces a 2-D fragment of shape ext along its rows (T.reduce_* dim=1). */
typedef struct reduced_scan {
  const int64_t *ext;
  bool found;
} reduced_scan;

static bool reduced_cb(void *ctx, tc_stmt *s) {
  reduced_scan *R = ctx;
  if (s->kind != TC_ST_REDUCE) return true;
  const tc_buffer *b = s->u.reduce.src.buf;
  int64_t shape[TC_GL_MAXDIM];
  if (is_frag(b) && b->ndim == 2 && (s->u.reduce.dim == 1 || s->u.reduce.dim == -1) && const_shape(b, shape) && shape[0] == R->ext[0] &&
      shape[1] == R->ext[1])
    R->found = true;
  return !R->found;
}

static bool rows_reduced(const tc_gpu_plan *P, int n, const int64_t *ext) {
  if (n != 2) return false;
  reduced_scan R = {ext, false};
  tc_visit_stmts(P->k->body, reduced_cb, &R);
  return R.found;
}

/* A fragment without a layout after propagation: the cyclic deal. Before that, a T.Parallel
 * whose exact fragments have none gets one from the first fragment it writes, so the nest's
 * fragments agree. */
static bool seed_cb(void *ctx, tc_stmt *s) {
  infer_ctx *C = ctx;
  tc_gpu_plan *P = C->P;
  if (s->kind != TC_ST_FOR || s->u.loop.kind != TC_LOOP_PARALLEL) return true;
  par_nest N;
  if (!tc_gpu_parallel_nest(s, &N)) return false;
  access_scan A;
  tc_gpu_scan_nest(&A, &N);
  if (C->changed) return false; /* one seed per round keeps propagation first */
  if (N.n < C->seed_min_dims) return false; /* tiles first: row vectors follow them */
  const tc_buffer *b = A.exact_written ? A.exact_written : A.nexact ? A.exact[0] : NULL;
  if (b && !P->frag[b->id]) {
    tc_gpu_layout L;
    /* a vector nobody ties to a tile is small: every thread keeps all of it */
    if (N.n == 1 && N.ext[0] % P->threads) tc_gl_make_repl(&L, 1, N.ext, P->threads);
    else tc_gl_make_cyclic(&L, N.n, N.ext, P->threads, (tc_dtype_bits(b->dtype) + 7) / 8, rows_reduced(P, N.n, N.ext));
    assign(C, b, &L);
    return false;
  }
  if (b) return false;
  /* no fragment at the nest's own indices: one it reaches through a bijection (`x[i * n + j]`),
   * the first written, is dealt over its own shape, and the nest runs over that fragment */
  int pick = -1;
  for (int i = 0; i < A.nbij; i++)
    if (!A.bij_mixed[i] && (pick < 0 || (A.bij_written[i] && !A.bij_written[pick]))) pick = i;
  int64_t shape[TC_GL_MAXDIM];
  if (pick >= 0 && !P->frag[A.bij[pick]->id] && const_shape(A.bij[pick], shape)) {
    const tc_buffer *f = A.bij[pick];
    tc_gpu_layout L;
    if (N.n == 1) tc_gl_make_repl(&L, f->ndim, shape, P->threads);
    else tc_gl_make_cyclic(&L, f->ndim, shape, P->threads, (tc_dtype_bits(f->dtype) + 7) / 8, false);
    assign(C, f, &L);
  }
  return false;
}

static bool collect_frags(void *ctx, tc_stmt *s) {
  infer_ctx *C = ctx;
  tc_gpu_plan *P = C->P;
  if (s->kind != TC_ST_ALLOC || !is_frag(s->u.alloc.buf)) return true;
  tc_buffer *b = s->u.alloc.buf;
  if (P->frag[b->id]) return true;
  int64_t shape[TC_GL_MAXDIM];
  if (!const_shape(b, shape)) {
    C->ok = tc_gpu_fail(P, b->loc, "fragment '%s' needs a constant shape on %s", b->name, P->desc->target);
    return true;
  }
  if (b->ndim >= 2) { /* no loop or instruction decides where its elements live: keep it in shared memory */
    P->demote[b->id] = true;
    return true;
  }
  tc_gpu_layout L;
  tc_gl_make_repl(&L, 1, shape, P->threads);
  assign(C, b, &L);
  return true;
}

bool tc_gpu_infer_layouts(tc_gpu_plan *P) {
  infer_ctx C = {.P = P, .ok = true};
  for (int round = 0; round < 64; round++) {
    C.changed = false;
    tc_visit_stmts(P->k->body, infer_cb, &C);
    if (!C.ok) return false;
    if (C.changed) continue;
    C.seed_min_dims = 2;
    tc_visit_stmts(P->k->body, seed_cb, &C);
    if (C.changed) continue;
    C.seed_min_dims = 1;
    tc_visit_stmts(P->k->body, seed_cb, &C);
    if (!C.changed) break;
  }
  tc_visit_stmts(P->k->body, collect_frags, &C);
  return C.ok;
}
