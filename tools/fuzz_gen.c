/* fuzz_gen.c: random TileLang programs and their text (fuzz_gen.h).
 *
 * Validity by construction: every on-chip buffer is filled before the first operation, every
 * global access is inside the tensor (copies are guarded by tilec, element accesses are clamped
 * or masked), every output element is written by one thread of one block, atomics add exact
 * small integers (their order cannot change the sum), and only values copied from the inputs
 * ("exact") feed a comparison or a floor, so no rounding difference can flip a branch. */
#include "fuzz_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers (splitmix64: one state, reproducible from the seed) ---- */
typedef struct fz_rng {
  uint64_t s;
} fz_rng;

static uint64_t next_u64(fz_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int below(fz_rng *r, int n) { return n <= 1 ? 0 : (int)(next_u64(r) % (uint64_t)n); }
static bool chance(fz_rng *r, int percent) { return below(r, 100) < percent; }
static int pick(fz_rng *r, const int *v, int n) { return v[below(r, n)]; }

static const char *dt_name(fz_dtype d) {
  static const char *names[] = {"float32", "float16", "bfloat16", "int32"};
  return names[d];
}
static bool dt_float(fz_dtype d) { return d != FZ_I32; }

/* ---- generation ---- */
static fz_dtype random_dt(fz_rng *r) {
  int x = below(r, 100);
  return x < 50 ? FZ_F32 : x < 75 ? FZ_F16 : x < 90 ? FZ_BF16 : FZ_I32;
}

static int add_global(fz_kernel *k, fz_gkind kind, fz_dtype dt, bool trans) {
  if (k->nglobals == FZ_MAX_GLOBALS) return -1;
  k->globals[k->nglobals] = (fz_global){kind, dt, trans};
  return k->nglobals++;
}

/* an input (M, N) of dtype dt: an existing one half of the time */
static int input_global(fz_rng *r, fz_kernel *k, fz_dtype dt) {
  for (int g = 0; g < k->nglobals; g++)
    if (k->globals[g].kind == FZ_G_IN && k->globals[g].dt == dt && chance(r, 50)) return g;
  return add_global(k, FZ_G_IN, dt, false);
}

/* a tile of the given forms (bit mask of 1 << fz_form) and scopes (1 << fz_scope), other than
 * `not`; -1 when there is none */
static int find_tile(fz_rng *r, const fz_kernel *k, unsigned forms, unsigned scopes, int not, bool float_only) {
  int cand[FZ_MAX_TILES], n = 0, latest = -1;
  for (int t = 0; t < k->ntiles; t++) {
    const fz_tile *x = &k->tiles[t];
    if (t != not && (forms >> x->form & 1) && (scopes >> x->scope & 1) && (!float_only || dt_float(x->dt))) {
      cand[n++] = t;
      if (x->written && (latest < 0 || x->written > k->tiles[latest].written)) latest = t;
    }
  }
  if (latest >= 0 && chance(r, 60)) return latest;
  return n ? cand[below(r, n)] : -1;
}

#define ANY_FORM 15u
#define ANY_SCOPE 3u
#define FORM(f) (1u << (f))
#define SCOPE(s) (1u << (s))

/* the number of index maps a destination of this form has in a nest (0: (BM, BN), 1: flat) */
static int dst_maps(const fz_kernel *k, fz_form f, int nest) {
  if (nest == 1) return 2;
  if (f == FZ_TILE) return k->BM == k->BN ? 4 : 3;
  if (f == FZ_FLAT) return 3;
  return 2; /* vectors: [i], reversed */
}

/* An operation reading and writing nothing yet, with its own expression seed. */
static void blank_op(fz_rng *r, fz_op *op) {
  memset(op, 0, sizeof *op);
  op->src[0] = op->src[1] = op->src[2] = -1;
  op->global = op->global2 = -1;
  op->seed = next_u64(r);
}

static bool gen_op(fz_rng *r, fz_kernel *k, fz_op *op) {
  blank_op(r, op);
  int x = below(r, 100);
  if (x < 14) { /* LOAD / LOAD_HALF */
    op->kind = chance(r, 25) && k->BM >= 2 ? FZ_OP_LOAD_HALF : FZ_OP_LOAD;
    op->dst = find_tile(r, k, FORM(FZ_TILE), ANY_SCOPE, -1, false);
    if (op->dst < 0) return false;
    op->global = input_global(r, k, chance(r, 60) ? k->tiles[op->dst].dt : random_dt(r));
    return op->global >= 0;
  }
  if (x < 24) { /* COPY */
    op->kind = FZ_OP_COPY;
    op->src[0] = find_tile(r, k, ANY_FORM, ANY_SCOPE, -1, false);
    if (op->src[0] < 0) return false;
    op->dst = find_tile(r, k, FORM(k->tiles[op->src[0]].form), ANY_SCOPE, op->src[0], false);
    op->map = k->tiles[op->src[0]].form == FZ_TILE && k->BM >= 2 && chance(r, 30); /* halves */
    return op->dst >= 0;
  }
  if (x < 54) { /* PAR */
    op->kind = FZ_OP_PAR;
    op->dst = find_tile(r, k, ANY_FORM, ANY_SCOPE, -1, false);
    if (op->dst < 0) return false;
    fz_form f = k->tiles[op->dst].form;
    op->nest = (f == FZ_TILE || f == FZ_FLAT) && chance(r, 25);
    op->map = chance(r, 50) ? 0 : below(r, dst_maps(k, f, op->nest));
    if (k->disciplined && k->tiles[op->dst].scope == FZ_FRAGMENT) op->map = 0, op->nest = 0;
    /* not the destination: another iteration may be writing the element read (a race); the
     * accumulating form reads it at the written element only */
    for (int i = 0; i < 2; i++) op->src[i] = chance(r, 85) ? find_tile(r, k, ANY_FORM, ANY_SCOPE, op->dst, false) : -1;
    if (chance(r, 30)) op->global = input_global(r, k, random_dt(r));
    op->param[0] = chance(r, 20); /* masked by an index condition */
    op->param[1] = chance(r, 20); /* accumulate: dst[map] = dst[map] + expr */
    op->param[2] = chance(r, 15) ? 1 + below(r, 2) : 0; /* all values shifted below (1) or above (2) zero */
    return true;
  }
  if (x < 62) { /* REDUCE */
    op->kind = FZ_OP_REDUCE;
    op->src[0] = find_tile(r, k, FORM(FZ_TILE), SCOPE(FZ_FRAGMENT), -1, true);
    op->param[0] = below(r, 2); /* dim */
    op->dst = find_tile(r, k, FORM(op->param[0] ? FZ_ROWS : FZ_COLS), SCOPE(FZ_FRAGMENT), -1, true);
    op->param[1] = below(r, 5); /* sum max min abssum absmax */
    op->param[2] = chance(r, 50); /* clear */
    return op->src[0] >= 0 && op->dst >= 0;
  }
  if (x < 68) { /* CUMSUM */
    op->kind = FZ_OP_CUMSUM;
    op->src[0] = find_tile(r, k, FORM(FZ_TILE), SCOPE(FZ_SHARED), -1, true);
    if (op->src[0] < 0) return false;
    op->dst = chance(r, 30) ? op->src[0] : find_tile(r, k, FORM(FZ_TILE), SCOPE(FZ_SHARED), op->src[0], true);
    op->param[0] = below(r, 2), op->param[1] = below(r, 2); /* dim, reverse */
    return op->dst >= 0 && k->tiles[op->src[0]].dt != FZ_BF16 && k->tiles[op->dst].dt != FZ_BF16;
  }
  if (x < 76) { /* GEMM */
    op->kind = FZ_OP_GEMM;
    if (k->BM < 16 || k->BN < 16) return false;
    op->dst = find_tile(r, k, FORM(FZ_TILE), SCOPE(FZ_FRAGMENT), -1, false);
    if (op->dst < 0 || k->tiles[op->dst].dt != FZ_F32) return false;
    static const fz_dtype opd[] = {FZ_F16, FZ_F16, FZ_BF16, FZ_F32};
    fz_dtype dt = opd[below(r, 4)];
    op->param[0] = chance(r, 30), op->param[1] = chance(r, 40); /* transpose A, B */
    op->param[2] = below(r, 4);                                  /* stages */
    op->param[3] = chance(r, 50);                                /* clear the accumulator first */
    op->global = add_global(k, FZ_G_IN_MK, dt, op->param[0]);
    op->global2 = add_global(k, FZ_G_IN_KN, dt, op->param[1]);
    return op->global >= 0 && op->global2 >= 0;
  }
  if (x < 81) { /* PIPESUM */
    op->kind = FZ_OP_PIPESUM;
    op->dst = find_tile(r, k, FORM(FZ_TILE), ANY_SCOPE, -1, false);
    if (op->dst < 0 || k->tiles[op->dst].dt != FZ_F32) return false;
    op->global = add_global(k, FZ_G_IN_MK, random_dt(r), false);
    op->param[2] = below(r, 4);
    return op->global >= 0;
  }
  if (x < 87) { /* ATOMIC */
    op->kind = FZ_OP_ATOMIC;
    op->src[0] = chance(r, 60) ? find_tile(r, k, FORM(FZ_TILE), ANY_SCOPE, -1, false) : -1;
    if (op->src[0] >= 0 && !k->tiles[op->src[0]].exact) op->src[0] = -1;
    if (op->src[0] < 0) op->global2 = input_global(r, k, random_dt(r));
    op->global = add_global(k, FZ_G_ATOMIC, chance(r, 50) ? FZ_F32 : FZ_I32, false);
    return op->global >= 0 && (op->src[0] >= 0 || op->global2 >= 0);
  }
  if (x < 92) { /* VARLOOP */
    op->kind = FZ_OP_VARLOOP;
    op->dst = find_tile(r, k, FORM(FZ_TILE) | FORM(FZ_FLAT), ANY_SCOPE, -1, true);
    if (op->dst < 0) return false;
    op->map = k->disciplined && k->tiles[op->dst].scope == FZ_FRAGMENT ? 0 : below(r, dst_maps(k, k->tiles[op->dst].form, 0));
    op->src[0] = find_tile(r, k, ANY_FORM, ANY_SCOPE, op->dst, false);
    op->param[0] = 1 + below(r, 4);
    op->param[1] = chance(r, 40); /* a T.alloc_local pair of cells instead of a T.alloc_var */
    return true;
  }
  /* STORE */
  op->kind = FZ_OP_STORE;
  op->dst = find_tile(r, k, ANY_FORM, ANY_SCOPE, -1, false);
  if (op->dst < 0) return false;
  fz_form f = k->tiles[op->dst].form;
  op->global = add_global(k, f == FZ_ROWS ? FZ_G_OUT_ROWS : f == FZ_COLS ? FZ_G_OUT_ROWS : FZ_G_OUT,
                          chance(r, 70) ? k->tiles[op->dst].dt : random_dt(r), f == FZ_COLS);
  op->map = f == FZ_TILE ? below(r, 3) : below(r, 2); /* T.copy, or element stores at a map */
  if (k->disciplined && k->tiles[op->dst].scope == FZ_FRAGMENT) op->map = 0;
  return op->global >= 0;
}

/* whether the op leaves its destination exact (holding input values only) */
static bool keeps_exact(const fz_kernel *k, const fz_op *op) {
  if (op->kind == FZ_OP_LOAD || op->kind == FZ_OP_LOAD_HALF) return true;
  if (op->kind == FZ_OP_COPY) return k->tiles[op->src[0]].exact;
  return false;
}

/* The chain kernels are made of (softmax, norms, attention's rows): a T.Parallel nest writes a
 * fragment tile at its own indices, a reduction along its rows, then a nest that reads the tile
 * beside the row values. Three ordinary operations, so minimization can take any of them out. */
static int gen_row_chain(fz_rng *r, fz_kernel *k, fz_op *ops, int room) {
  if (room < 4) return 0;
  int tile = find_tile(r, k, FORM(FZ_TILE), SCOPE(FZ_FRAGMENT), -1, true);
  int rows = find_tile(r, k, FORM(FZ_ROWS), SCOPE(FZ_FRAGMENT), -1, true);
  int out = find_tile(r, k, FORM(FZ_TILE), ANY_SCOPE, tile, false);
  if (tile < 0 || rows < 0 || out < 0) return 0;
  for (int i = 0; i < 4; i++) blank_op(r, &ops[i]);
  ops[0].kind = FZ_OP_PAR, ops[0].dst = tile, ops[0].global = input_global(r, k, random_dt(r));
  ops[0].src[0] = find_tile(r, k, ANY_FORM, ANY_SCOPE, tile, false);
  ops[1].kind = FZ_OP_REDUCE, ops[1].src[0] = tile, ops[1].dst = rows, ops[1].param[0] = 1;
  ops[1].param[1] = below(r, 5), ops[1].param[2] = chance(r, 70);
  /* rows of one sign half of the time, the sign a max (min) meets its identity with: all below
   * (above) zero, where a wrong starting value shows */
  if (chance(r, 50)) ops[0].param[2] = ops[1].param[1] == 2 ? 2 : 1;
  ops[2].kind = FZ_OP_PAR, ops[2].dst = out, ops[2].src[0] = tile, ops[2].src[1] = rows;
  ops[3].kind = FZ_OP_STORE, ops[3].dst = out, ops[3].global = add_global(k, FZ_G_OUT, k->tiles[out].dt, false);
  return ops[0].global >= 0 && ops[3].global >= 0 ? 4 : 0;
}

/* The chain decoding and attention kernels end with (MLA decode's denominator): a gemm into a
 * float32 accumulator, its rows reduced into a row vector, the vector updated in place by a loop
 * over the rows (`m[i] = m[i] + ...`, every thread holding row i runs it), then read by a nest
 * over another tile, whose threads hold other rows (the vector moves to shared memory, where the
 * update must still happen once a row). */
static int gen_acc_row_chain(fz_rng *r, fz_kernel *k, fz_op *ops, int room) {
  if (room < 5 || k->BM < 16 || k->BN < 16) return 0;
  int acc = -1, rows = -1;
  for (int t = 0; t < k->ntiles; t++) {
    const fz_tile *x = &k->tiles[t];
    if (x->scope != FZ_FRAGMENT || x->dt != FZ_F32) continue;
    if (x->form == FZ_TILE && (acc < 0 || chance(r, 50))) acc = t;
    if (x->form == FZ_ROWS && (rows < 0 || chance(r, 50))) rows = t;
  }
  int out = find_tile(r, k, FORM(FZ_TILE) | FORM(FZ_FLAT), ANY_SCOPE, acc, false);
  if (acc < 0 || rows < 0 || out < 0) return 0;
  for (int i = 0; i < 5; i++) blank_op(r, &ops[i]);
  static const fz_dtype opd[] = {FZ_F16, FZ_BF16};
  fz_dtype dt = opd[below(r, 2)];
  ops[0].kind = FZ_OP_GEMM, ops[0].dst = acc, ops[0].param[1] = chance(r, 50), ops[0].param[2] = below(r, 3);
  ops[0].param[3] = 1;
  ops[0].global = add_global(k, FZ_G_IN_MK, dt, false);
  ops[0].global2 = add_global(k, FZ_G_IN_KN, dt, ops[0].param[1]);
  ops[1].kind = FZ_OP_REDUCE, ops[1].src[0] = acc, ops[1].dst = rows, ops[1].param[0] = 1;
  ops[1].param[1] = below(r, 3), ops[1].param[2] = 1; /* sum, max or min, cleared */
  ops[2].kind = FZ_OP_PAR, ops[2].dst = rows, ops[2].param[1] = 1; /* rows[i] = rows[i] + ... */
  ops[2].src[0] = find_tile(r, k, FORM(FZ_ROWS) | FORM(FZ_COLS), ANY_SCOPE, rows, false);
  ops[3].kind = FZ_OP_PAR, ops[3].dst = out, ops[3].src[0] = rows, ops[3].map = below(r, dst_maps(k, k->tiles[out].form, 0));
  if (k->disciplined && k->tiles[out].scope == FZ_FRAGMENT) ops[3].map = 0;
  ops[3].src[1] = chance(r, 50) ? find_tile(r, k, ANY_FORM, ANY_SCOPE, out, false) : -1;
  ops[4].kind = FZ_OP_STORE, ops[4].dst = out, ops[4].global = add_global(k, FZ_G_OUT, k->tiles[out].dt, false);
  return ops[0].global >= 0 && ops[0].global2 >= 0 && ops[4].global >= 0 ? 5 : 0;
}

/* A size for blocks of b: a whole number of them, one more or one less than that (the edges where
 * bounds checks go wrong), or anything up to three blocks. */
static int64_t ragged(fz_rng *r, int b) {
  int x = below(r, 100);
  int64_t whole = (int64_t)b * (1 + below(r, 3));
  if (x < 35) return whole;
  if (x < 65) return chance(r, 50) ? whole + 1 : whole - 1 > 0 ? whole - 1 : 1;
  return 1 + below(r, 3 * b);
}

static void gen_kernel(fz_rng *r, fz_kernel *k) {
  memset(k, 0, sizeof *k);
  static const int blocks[] = {8, 16, 32, 64}, threads[] = {32, 64, 128, 128, 256};
  k->BM = pick(r, blocks, 4), k->BN = pick(r, blocks, 4);
  while (k->BM * k->BN > 2048) {
    if (k->BM > k->BN) k->BM /= 2;
    else k->BN /= 2;
  }
  k->BK = chance(r, 50) ? 16 : 32;
  k->threads = pick(r, threads, 5);
  k->M = ragged(r, k->BM), k->N = ragged(r, k->BN), k->K = ragged(r, k->BK);
  k->disciplined = chance(r, 50);
  k->ntiles = 3 + below(r, 5);
  for (int t = 0; t < k->ntiles; t++) {
    fz_tile *x = &k->tiles[t];
    int f = below(r, 100);
    x->form = f < 55 ? FZ_TILE : f < 70 ? FZ_FLAT : f < 85 ? FZ_ROWS : FZ_COLS;
    x->scope = chance(r, 40) ? FZ_SHARED : FZ_FRAGMENT;
    x->dt = random_dt(r);
    x->exact = true;
    static const float fills[] = {0.0f, 1.0f, -0.5f, 2.0f};
    x->fill = fills[below(r, 4)];
  }
  int want = 3 + below(r, FZ_MAX_OPS - 4);
  for (int tries = 0; k->nops < want && tries < 200; tries++) {
    fz_op op;
    int saved_globals = k->nglobals;
    int chained = chance(r, 20)  ? gen_row_chain(r, k, &k->ops[k->nops], FZ_MAX_OPS - k->nops)
                  : chance(r, 8) ? gen_acc_row_chain(r, k, &k->ops[k->nops], FZ_MAX_OPS - k->nops)
                                 : 0;
    if (chained) {
      for (int i = 0; i < chained; i++, k->nops++) {
        fz_op *c = &k->ops[k->nops];
        k->tiles[c->dst].exact = false;
        k->tiles[c->dst].written = k->nops + 1;
      }
      continue;
    }
    k->nglobals = saved_globals;
    if (!gen_op(r, k, &op)) {
      k->nglobals = saved_globals; /* globals the failed try added go */
      continue;
    }
    if (op.dst >= 0 && op.kind != FZ_OP_STORE) {
      k->tiles[op.dst].exact = k->tiles[op.dst].exact && keeps_exact(k, &op);
      k->tiles[op.dst].written = k->nops + 1;
    }
    k->ops[k->nops++] = op;
  }
  bool stored = false;
  for (int i = 0; i < k->nops; i++) stored |= k->ops[i].kind == FZ_OP_STORE;
  if (!stored) { /* every kernel keeps a result */
    fz_op *op = &k->ops[k->nops < FZ_MAX_OPS ? k->nops++ : FZ_MAX_OPS - 1];
    memset(op, 0, sizeof *op);
    op->kind = FZ_OP_STORE;
    op->src[0] = op->src[1] = op->src[2] = -1;
    op->global2 = -1;
    op->dst = below(r, k->ntiles);
    fz_form f = k->tiles[op->dst].form;
    op->global = add_global(k, f == FZ_TILE || f == FZ_FLAT ? FZ_G_OUT : FZ_G_OUT_ROWS, k->tiles[op->dst].dt, f == FZ_COLS);
    if (op->global < 0) k->nops--;
  }
}

void fz_generate(uint64_t seed, fz_program *p) {
  memset(p, 0, sizeof *p);
  fz_rng r = {seed * 0x2545f4914f6cdd1dull + 1};
  p->seed = seed;
  p->nkernels = chance(&r, 15) ? 2 : 1;
  for (int i = 0; i < p->nkernels; i++) gen_kernel(&r, &p->k[i]);
}

int fz_live_ops(const fz_program *p) {
  int n = 0;
  for (int i = 0; i < p->nkernels; i++)
    for (int j = 0; j < p->k[i].nops; j++) n += !p->k[i].dropped[j];
  return n;
}

/* ---- text ---- */
typedef struct sb {
  char *s;
  size_t len, cap;
  bool oom;
} sb;

static void put(sb *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  char tmp[1024];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t need = b->len + (size_t)n + 1;
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < need) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = true;
      return;
    }
    b->s = s, b->cap = cap;
  }
  memcpy(b->s + b->len, tmp, (size_t)n + 1);
  b->len += (size_t)n;
}

/* the iteration's indices as text, in the nest being printed */
typedef struct nest_ctx {
  const fz_kernel *k;
  char I[48], J[48]; /* i and j, or their expressions of the flat index e, or "0" where the nest lacks one */
  fz_rng r;
  int global; /* an input the expression may read (clamped), or -1 */
} nest_ctx;

/* an element of tile t at a map (reads need not be bijective; `map` picks one of several) */
static void tile_at(sb *b, const nest_ctx *c, int t, int map) {
  const fz_kernel *k = c->k;
  int BM = k->BM, BN = k->BN;
  switch (k->tiles[t].form) {
  case FZ_TILE:
    switch (map % (BM == BN ? 4 : 3)) {
    case 0: put(b, "t%d[%s, %s]", t, c->I, c->J); break;
    case 1: put(b, "t%d[%d - %s, %s]", t, BM - 1, c->I, c->J); break;
    case 2: put(b, "t%d[%s, %d - %s]", t, c->I, BN - 1, c->J); break;
    default: put(b, "t%d[%s, %s]", t, c->J, c->I); break;
    }
    break;
  case FZ_FLAT:
    switch (map % 3) {
    case 0: put(b, "t%d[%s * %d + %s]", t, c->I, BN, c->J); break;
    case 1: put(b, "t%d[%s * %d + %s]", t, c->J, BM, c->I); break;
    default: put(b, "t%d[(%d - %s) * %d + (%d - %s)]", t, BM - 1, c->I, BN, BN - 1, c->J); break;
    }
    break;
  case FZ_ROWS:
    if (map % 2) put(b, "t%d[%d - %s]", t, BM - 1, c->I);
    else put(b, "t%d[%s]", t, c->I);
    break;
  case FZ_COLS:
    if (map % 2) put(b, "t%d[%d - %s]", t, BN - 1, c->J);
    else put(b, "t%d[%s]", t, c->J);
    break;
  }
}

static void leaf(sb *b, nest_ctx *c, const int *srcs, int nsrc, const char *cdt, bool want_int) {
  const fz_kernel *k = c->k;
  int x = below(&c->r, 100);
  if (x < 60 && nsrc) {
    int t = srcs[below(&c->r, nsrc)];
    const fz_tile *tl = &k->tiles[t];
    /* mostly the loop's own indices: fragments then stay in registers, where layouts matter */
    int map = chance(&c->r, 60) ? 0 : below(&c->r, 4);
    if (k->disciplined && tl->scope == FZ_FRAGMENT) {
      /* a vector nest reads no tile fragment (its element is in another thread's registers) */
      bool vector_nest = strcmp(c->I, "0") == 0 || strcmp(c->J, "0") == 0;
      if (vector_nest && (tl->form == FZ_TILE || tl->form == FZ_FLAT)) {
        put(b, want_int ? "%d" : "T.cast(%d, \"%s\")", 1 + below(&c->r, 3), cdt);
        return;
      }
      map = 0;
    }
    if (want_int && dt_float(tl->dt)) { /* only an exact value floors the same everywhere */
      if (!tl->exact) {
        put(b, "%d", 1 + below(&c->r, 5));
        return;
      }
      put(b, "T.cast(T.floor(T.cast(");
      tile_at(b, c, t, map);
      put(b, ", \"float32\") * 4.0), \"int32\")");
      return;
    }
    if (strcmp(dt_name(tl->dt), cdt) != 0) {
      put(b, "T.cast(");
      tile_at(b, c, t, map);
      put(b, ", \"%s\")", cdt);
    } else {
      tile_at(b, c, t, map);
    }
    return;
  }
  if (x < 75 && c->global >= 0 && !want_int) {
    put(b, "T.cast(G%d[T.min(by * %d + %s, %lld), T.min(bx * %d + %s, %lld)], \"%s\")", c->global, k->BM, c->I,
        (long long)k->M - 1, k->BN, c->J, (long long)k->N - 1, cdt);
    return;
  }
  if (x < 88) { /* the indices themselves */
    if (want_int) put(b, "(%s + %d * %s)", c->I, 1 + below(&c->r, 3), c->J);
    else put(b, "T.cast(%s + %s, \"%s\") * T.cast(0.0625, \"%s\")", c->I, c->J, cdt, cdt);
    return;
  }
  static const char *consts[] = {"0.5", "1.25", "-2.0", "3.0"};
  if (want_int) put(b, "%d", below(&c->r, 7) - 3);
  else put(b, "T.cast(%s, \"%s\")", consts[below(&c->r, 4)], cdt);
}

/* a condition no rounding can flip: on the indices, or an exact source against 0 */
static void condition(sb *b, nest_ctx *c, const int *srcs, int nsrc) {
  const fz_kernel *k = c->k;
  int exact[4], ne = 0;
  for (int i = 0; i < nsrc && ne < 4; i++)
    if (k->tiles[srcs[i]].exact && dt_float(k->tiles[srcs[i]].dt)) exact[ne++] = srcs[i];
  int x = below(&c->r, 3);
  if (x == 0 && ne) {
    put(b, "T.cast(");
    tile_at(b, c, exact[below(&c->r, ne)], below(&c->r, 4));
    put(b, ", \"float32\") > 0.0");
  } else if (x == 1) {
    put(b, "(%s + %s) %% %d == 0", c->I, c->J, 2 + below(&c->r, 2));
  } else {
    put(b, "%s < %d", below(&c->r, 2) ? c->I : c->J, 1 + below(&c->r, 8));
  }
}

static void expr(sb *b, nest_ctx *c, const int *srcs, int nsrc, const char *cdt, bool want_int, int depth) {
  int x = below(&c->r, 100);
  if (depth <= 0 || x < 30) {
    leaf(b, c, srcs, nsrc, cdt, want_int);
    return;
  }
  static const char *bin_ops[] = {" + ", " - ", " * "};
  if (x < 65) {
    put(b, "(");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, "%s", bin_ops[below(&c->r, 3)]);
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ")");
  } else if (x < 78) {
    put(b, below(&c->r, 2) ? "T.max(" : "T.min(");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ", ");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ")");
  } else if (x < 88) {
    put(b, "T.if_then_else(");
    condition(b, c, srcs, nsrc);
    put(b, ", ");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ", ");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ")");
  } else if (x < 93 && !want_int) {
    put(b, "T.abs(");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ")");
  } else if (!want_int && strcmp(cdt, "float32") == 0) {
    put(b, "T.exp(T.max(T.min(");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ", T.float32(2.0)), T.float32(-2.0)))");
  } else {
    put(b, "(-");
    expr(b, c, srcs, nsrc, cdt, want_int, depth - 1);
    put(b, ")");
  }
}

static void indent(sb *b, int n) { put(b, "%*s", n, ""); }

/* `for ... in T.Parallel(...)` over a destination of form f (nest 1: flat over the block), with
 * c's I and J set; returns the body's indentation */
static int open_nest(sb *b, nest_ctx *c, fz_form f, int nest, int ind) {
  const fz_kernel *k = c->k;
  indent(b, ind);
  if (f == FZ_ROWS) {
    put(b, "for i in T.Parallel(%d):\n", k->BM);
    snprintf(c->I, sizeof c->I, "i"), snprintf(c->J, sizeof c->J, "0");
  } else if (f == FZ_COLS) {
    put(b, "for j in T.Parallel(%d):\n", k->BN);
    snprintf(c->I, sizeof c->I, "0"), snprintf(c->J, sizeof c->J, "j");
  } else if (nest == 1) {
    put(b, "for e in T.Parallel(%d):\n", k->BM * k->BN);
    snprintf(c->I, sizeof c->I, "(e // %d)", k->BN), snprintf(c->J, sizeof c->J, "(e %% %d)", k->BN);
  } else {
    put(b, "for i, j in T.Parallel(%d, %d):\n", k->BM, k->BN);
    snprintf(c->I, sizeof c->I, "i"), snprintf(c->J, sizeof c->J, "j");
  }
  return ind + 4;
}

/* the destination's element for the op's map: a bijection of the nest onto the tile */
static void dst_at(sb *b, const nest_ctx *c, int t, int map, int nest) {
  const fz_kernel *k = c->k;
  int n = k->BM * k->BN;
  if (nest == 1) {
    if (k->tiles[t].form == FZ_TILE) {
      if (map) put(b, "t%d[(%d - e) // %d, (%d - e) %% %d]", t, n - 1, k->BN, n - 1, k->BN);
      else put(b, "t%d[e // %d, e %% %d]", t, k->BN, k->BN);
    } else {
      if (map) put(b, "t%d[%d - e]", t, n - 1);
      else put(b, "t%d[e]", t);
    }
    return;
  }
  tile_at(b, c, t, map);
}

static const char *compute_dt(fz_dtype d) { return d == FZ_I32 ? "int32" : dt_name(d); }

static void render_par(sb *b, const fz_kernel *k, const fz_op *op, int ind) {
  const fz_tile *d = &k->tiles[op->dst];
  nest_ctx c = {.k = k, .r = {op->seed}, .global = op->global};
  int srcs[3], nsrc = 0;
  for (int i = 0; i < 2; i++)
    if (op->src[i] >= 0) srcs[nsrc++] = op->src[i];
  int in = open_nest(b, &c, d->form, op->nest, ind);
  bool want_int = d->dt == FZ_I32;
  const char *cdt = compute_dt(d->dt);
  if (op->param[0]) {
    indent(b, in);
    put(b, "if ");
    condition(b, &c, srcs, nsrc);
    put(b, ":\n");
    in += 4;
  }
  indent(b, in);
  dst_at(b, &c, op->dst, op->map, op->nest);
  put(b, " = ");
  if (op->param[1]) {
    dst_at(b, &c, op->dst, op->map, op->nest);
    put(b, " + ");
  }
  put(b, "T.cast(");
  expr(b, &c, srcs, nsrc, cdt, want_int, 3);
  if (op->param[2] && !want_int) put(b, " %s T.cast(16.0, \"%s\")", op->param[2] == 1 ? "-" : "+", cdt);
  put(b, ", \"%s\")\n", dt_name(d->dt));
}

static void render_varloop(sb *b, const fz_kernel *k, int opi, const fz_op *op, int ind) {
  const fz_tile *d = &k->tiles[op->dst];
  nest_ctx c = {.k = k, .r = {op->seed}, .global = -1};
  int srcs[1] = {op->src[0]}, nsrc = op->src[0] >= 0;
  int in = open_nest(b, &c, d->form, 0, ind);
  const char *cdt = compute_dt(d->dt);
  if (op->param[1]) { /* per-thread cells: l[0] runs, l[1] holds what it adds */
    indent(b, in);
    put(b, "l%d = T.alloc_local((2,), \"%s\")\n", opi, cdt);
    for (int cell = 0; cell < 2; cell++) {
      indent(b, in);
      put(b, "l%d[%d] = ", opi, cell);
      expr(b, &c, srcs, nsrc, cdt, false, 1);
      put(b, "\n");
    }
    indent(b, in);
    put(b, "for s%d in T.serial(%d):\n", opi, op->param[0]);
    indent(b, in + 4);
    put(b, "l%d[0] = l%d[0] * T.cast(0.5, \"%s\") + l%d[1]\n", opi, opi, cdt, opi);
    indent(b, in);
    dst_at(b, &c, op->dst, op->map, 0);
    put(b, " = l%d[0]\n", opi);
    return;
  }
  indent(b, in);
  put(b, "v%d = T.alloc_var(\"%s\")\n", opi, cdt);
  indent(b, in);
  put(b, "v%d = ", opi);
  expr(b, &c, srcs, nsrc, cdt, false, 1);
  put(b, "\n");
  indent(b, in);
  put(b, "for s%d in T.serial(%d):\n", opi, op->param[0]);
  indent(b, in + 4);
  put(b, "v%d = v%d * T.cast(0.5, \"%s\") + ", opi, opi, cdt);
  expr(b, &c, srcs, nsrc, cdt, false, 1);
  put(b, "\n");
  indent(b, in);
  dst_at(b, &c, op->dst, op->map, 0);
  put(b, " = v%d\n", opi);
}

static void render_store(sb *b, const fz_kernel *k, const fz_op *op, int ind) {
  const fz_tile *t = &k->tiles[op->dst];
  const fz_global *g = &k->globals[op->global];
  int BM = k->BM, BN = k->BN;
  if (t->form == FZ_ROWS || t->form == FZ_COLS) { /* one block column (row) writes the vector */
    bool rows = t->form == FZ_ROWS;
    nest_ctx c = {.k = k};
    indent(b, ind);
    put(b, "if %s == 0:\n", rows ? "bx" : "by");
    int in = open_nest(b, &c, t->form, 0, ind + 4);
    indent(b, in);
    put(b, rows ? "if by * %d + i < %lld:\n" : "if bx * %d + j < %lld:\n", rows ? BM : BN, (long long)(rows ? k->M : k->N));
    indent(b, in + 4);
    put(b, rows ? "G%d[by * %d + i] = T.cast(" : "G%d[bx * %d + j] = T.cast(", op->global, rows ? BM : BN);
    tile_at(b, &c, op->dst, op->map);
    put(b, ", \"%s\")\n", dt_name(g->dt));
    return;
  }
  if (t->form == FZ_TILE && op->map == 0 && t->dt == g->dt) {
    indent(b, ind);
    put(b, "T.copy(t%d, G%d[by * %d, bx * %d])\n", op->dst, op->global, BM, BN);
    return;
  }
  nest_ctx c = {.k = k};
  int in = open_nest(b, &c, FZ_TILE, 0, ind);
  indent(b, in);
  put(b, "if by * %d + i < %lld and bx * %d + j < %lld:\n", BM, (long long)k->M, BN, (long long)k->N);
  indent(b, in + 4);
  put(b, "G%d[by * %d + i, bx * %d + j] = T.cast(", op->global, BM, BN);
  tile_at(b, &c, op->dst, op->map);
  put(b, ", \"%s\")\n", dt_name(g->dt));
}

static const char *reduce_names[] = {"sum", "max", "min", "abssum", "absmax"};

static void render_op(sb *b, const fz_kernel *k, int i, int ind) {
  const fz_op *op = &k->ops[i];
  int BM = k->BM, BN = k->BN;
  switch (op->kind) {
  case FZ_OP_LOAD:
    indent(b, ind);
    put(b, "T.copy(G%d[by * %d, bx * %d], t%d)\n", op->global, BM, BN, op->dst);
    break;
  case FZ_OP_LOAD_HALF:
    indent(b, ind);
    put(b, "T.copy(G%d[by * %d:by * %d + %d, bx * %d:bx * %d + %d], t%d[%d:%d, 0:%d])\n", op->global, BM, BM, BM / 2, BN, BN,
        BN, op->dst, BM - BM / 2, BM - BM / 2 + BM / 2, BN);
    break;
  case FZ_OP_COPY:
    indent(b, ind);
    if (op->map) put(b, "T.copy(t%d[0:%d, 0:%d], t%d[%d:%d, 0:%d])\n", op->src[0], BM / 2, BN, op->dst, BM - BM / 2, BM, BN);
    else put(b, "T.copy(t%d, t%d)\n", op->src[0], op->dst);
    break;
  case FZ_OP_PAR: render_par(b, k, op, ind); break;
  case FZ_OP_REDUCE:
    indent(b, ind);
    if (op->param[1] == 3) put(b, "T.reduce_abssum(t%d, t%d, dim=%d)\n", op->src[0], op->dst, op->param[0]);
    else put(b, "T.reduce_%s(t%d, t%d, dim=%d, clear=%s)\n", reduce_names[op->param[1]], op->src[0], op->dst, op->param[0],
             op->param[2] ? "True" : "False");
    break;
  case FZ_OP_CUMSUM:
    indent(b, ind);
    if (op->dst == op->src[0]) put(b, "T.cumsum(t%d, dim=%d, reverse=%s)\n", op->src[0], op->param[0], op->param[1] ? "True" : "False");
    else put(b, "T.cumsum(t%d, t%d, dim=%d, reverse=%s)\n", op->src[0], op->dst, op->param[0], op->param[1] ? "True" : "False");
    break;
  case FZ_OP_GEMM: {
    const char *dt = dt_name(k->globals[op->global].dt);
    bool ta = op->param[0], tb = op->param[1];
    indent(b, ind);
    put(b, "a%d = T.alloc_shared(%s, \"%s\")\n", i, ta ? "(BK_, BM_)" : "(BM_, BK_)", dt);
    indent(b, ind);
    put(b, "b%d = T.alloc_shared(%s, \"%s\")\n", i, tb ? "(BN_, BK_)" : "(BK_, BN_)", dt);
    if (op->param[3]) {
      indent(b, ind);
      put(b, "T.clear(t%d)\n", op->dst);
    }
    indent(b, ind);
    put(b, "for ko in T.Pipelined(%lld, num_stages=%d):\n", (long long)((k->K + k->BK - 1) / k->BK), op->param[2]);
    indent(b, ind + 4);
    if (ta) put(b, "T.copy(G%d[ko * %d, by * %d], a%d)\n", op->global, k->BK, BM, i);
    else put(b, "T.copy(G%d[by * %d, ko * %d], a%d)\n", op->global, BM, k->BK, i);
    indent(b, ind + 4);
    if (tb) put(b, "T.copy(G%d[bx * %d, ko * %d], b%d)\n", op->global2, BN, k->BK, i);
    else put(b, "T.copy(G%d[ko * %d, bx * %d], b%d)\n", op->global2, k->BK, BN, i);
    indent(b, ind + 4);
    put(b, "T.gemm(a%d, b%d, t%d, transpose_A=%s, transpose_B=%s)\n", i, i, op->dst, ta ? "True" : "False", tb ? "True" : "False");
    break;
  }
  case FZ_OP_PIPESUM: {
    indent(b, ind);
    put(b, "p%d = T.alloc_shared((BM_, BK_), \"%s\")\n", i, dt_name(k->globals[op->global].dt));
    indent(b, ind);
    put(b, "for ko in T.Pipelined(%lld, num_stages=%d):\n", (long long)((k->K + k->BK - 1) / k->BK), op->param[2]);
    indent(b, ind + 4);
    put(b, "T.copy(G%d[by * %d, ko * %d], p%d)\n", op->global, BM, k->BK, i);
    indent(b, ind + 4);
    put(b, "for i, j in T.Parallel(%d, %d):\n", BM, BN);
    indent(b, ind + 8);
    put(b, "t%d[i, j] = t%d[i, j] + T.cast(p%d[i, j %% %d], \"float32\")\n", op->dst, op->dst, i, k->BK);
    break;
  }
  case FZ_OP_ATOMIC: {
    const fz_global *g = &k->globals[op->global];
    indent(b, ind);
    put(b, "for i, j in T.Parallel(%d, %d):\n", BM, BN);
    indent(b, ind + 4);
    put(b, "if by * %d + i < %lld and bx * %d + j < %lld:\n", BM, (long long)k->M, BN, (long long)k->N);
    indent(b, ind + 8);
    put(b, "T.atomic_add(G%d[(by * %d + i) %% 8, (bx * %d + j) %% 8], T.cast(T.floor(T.cast(", op->global, BM, BN);
    if (op->src[0] >= 0) put(b, "t%d[i, j]", op->src[0]);
    else put(b, "G%d[by * %d + i, bx * %d + j]", op->global2, BM, BN);
    put(b, ", \"float32\") * 4.0), \"%s\"))\n", dt_name(g->dt));
    break;
  }
  case FZ_OP_VARLOOP: render_varloop(b, k, i, op, ind); break;
  case FZ_OP_STORE: render_store(b, k, op, ind); break;
  }
}

/* the globals live operations use, in order */
static void used_globals(const fz_kernel *k, bool *used) {
  memset(used, 0, sizeof(bool) * FZ_MAX_GLOBALS);
  for (int i = 0; i < k->nops; i++) {
    if (k->dropped[i]) continue;
    const fz_op *op = &k->ops[i];
    if (op->global >= 0) used[op->global] = true;
    if (op->global2 >= 0) used[op->global2] = true;
    if (op->kind == FZ_OP_PAR && op->global >= 0) used[op->global] = true;
  }
}

static void render_kernel(sb *b, const fz_kernel *k, int idx) {
  bool used[FZ_MAX_GLOBALS];
  used_globals(k, used);
  /* the block sizes as names, so a reader sees the tile shapes */
  put(b, "BM_%d, BN_%d, BK_%d = %d, %d, %d\n\n\n", idx, idx, idx, k->BM, k->BN, k->BK);
  put(b, "@T.prim_func\ndef k%d(", idx);
  bool first = true;
  for (int g = 0; g < k->nglobals; g++) {
    if (!used[g]) continue;
    const fz_global *x = &k->globals[g];
    char shape[96];
    long long M = k->M, N = k->N, K = k->K;
    switch (x->kind) {
    case FZ_G_IN: case FZ_G_OUT: snprintf(shape, sizeof shape, "(%lld, %lld)", M, N); break;
    case FZ_G_IN_MK: snprintf(shape, sizeof shape, x->trans ? "(%lld, %lld)" : "(%lld, %lld)", x->trans ? K : M, x->trans ? M : K); break;
    case FZ_G_IN_KN: snprintf(shape, sizeof shape, "(%lld, %lld)", x->trans ? N : K, x->trans ? K : N); break;
    case FZ_G_OUT_ROWS: snprintf(shape, sizeof shape, "(%lld,)", x->trans ? N : M); break;
    case FZ_G_ATOMIC: snprintf(shape, sizeof shape, "(8, 8)"); break;
    }
    put(b, "%sG%d: T.Tensor(%s, \"%s\")", first ? "" : ", ", g, shape, dt_name(x->dt));
    first = false;
  }
  put(b, "):\n");
  put(b, "    with T.Kernel(%lld, %lld, threads=%d) as (bx, by):\n", (k->N + k->BN - 1) / k->BN, (k->M + k->BM - 1) / k->BM,
      k->threads);
  /* tiles no live operation touches are left out (a minimized program shows only what matters) */
  bool live[FZ_MAX_TILES] = {false};
  for (int i = 0; i < k->nops; i++) {
    if (k->dropped[i]) continue;
    const fz_op *op = &k->ops[i];
    if (op->dst >= 0) live[op->dst] = true;
    for (int s = 0; s < 3; s++)
      if (op->src[s] >= 0) live[op->src[s]] = true;
  }
  for (int t = 0; t < k->ntiles; t++) {
    const fz_tile *x = &k->tiles[t];
    if (!live[t]) continue;
    const char *shape = x->form == FZ_TILE ? "(BM_, BN_)" : x->form == FZ_FLAT ? "(BM_ * BN_,)" : x->form == FZ_ROWS ? "(BM_,)" : "(BN_,)";
    put(b, "        t%d = T.alloc_%s(%s, \"%s\")\n", t, x->scope == FZ_SHARED ? "shared" : "fragment", shape, dt_name(x->dt));
  }
  for (int t = 0; t < k->ntiles; t++) {
    const fz_tile *x = &k->tiles[t];
    if (!live[t]) continue;
    if (x->dt == FZ_I32) put(b, "        T.fill(t%d, %d)\n", t, (int)x->fill);
    else put(b, "        T.fill(t%d, %g)\n", t, (double)x->fill);
  }
  for (int i = 0; i < k->nops; i++)
    if (!k->dropped[i]) render_op(b, k, i, 8);
}

/* the BM_/BN_/BK_ placeholders of a kernel's text become its own names (BM_0, ...) */
static char *name_blocks(char *text) {
  size_t n = strlen(text);
  char *out = malloc(n * 2 + 1);
  if (!out) return NULL;
  size_t o = 0;
  int kernel = -1;
  for (size_t i = 0; i < n; i++) {
    if (strncmp(text + i, "def k", 5) == 0) kernel = atoi(text + i + 5);
    out[o++] = text[i];
    if (i >= 2 && text[i] == '_' && (text[i - 1] == 'M' || text[i - 1] == 'N' || text[i - 1] == 'K') && text[i - 2] == 'B' &&
        !(text[i + 1] >= '0' && text[i + 1] <= '9') && kernel >= 0)
      o += (size_t)sprintf(out + o, "%d", kernel);
  }
  out[o] = 0;
  return out;
}

char *fz_render(const fz_program *p) {
  sb b = {0};
  put(&b, "# A program of `tilec fuzz` (seed %llu): see docs/testing.md.\n", (unsigned long long)p->seed);
  put(&b, "import tilelang.language as T\n\n");
  for (int i = 0; i < p->nkernels; i++) {
    put(&b, "\n");
    render_kernel(&b, &p->k[i], i);
  }
  if (b.oom) {
    free(b.s);
    return NULL;
  }
  char *named = name_blocks(b.s);
  free(b.s);
  return named;
}
