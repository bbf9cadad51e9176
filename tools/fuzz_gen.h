/* fuzz_gen.h: random TileLang programs for `tilec fuzz` (docs/testing.md).
 *
 * A program is a list of kernels; a kernel is a block tile size, a few on-chip buffers (shared
 * tiles and fragments of the block's shape, flat or as row and column vectors) and a list of
 * operations between them and the global tensors: T.copy (whole tiles and halves), T.Parallel
 * nests writing through random index maps, reductions, cumsum, pipelined gemms and sums,
 * atomics, per-thread T.alloc_var loops, stores of the results. The model is kept apart from
 * its text so that a failing program can be minimized (operations dropped, sizes shrunk) and
 * printed again: every buffer is filled before the first operation, so any subset of the
 * operations is still a valid, deterministic program. */
#ifndef TILEC_FUZZ_GEN_H
#define TILEC_FUZZ_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FZ_MAX_TILES 10
#define FZ_MAX_OPS 16
#define FZ_MAX_GLOBALS 12
#define FZ_MAX_KERNELS 3

typedef enum { FZ_SHARED, FZ_FRAGMENT } fz_scope;
/* a block tile (BM, BN), the same elements flat (BM * BN,), a row vector (BM,), a column one (BN,) */
typedef enum { FZ_TILE, FZ_FLAT, FZ_ROWS, FZ_COLS } fz_form;
typedef enum { FZ_F32, FZ_F16, FZ_BF16, FZ_I32, FZ_NDT } fz_dtype;

typedef struct fz_tile {
  fz_scope scope;
  fz_form form;
  fz_dtype dt;
  bool exact; /* holds only values copied from inputs (or its fill): safe to compare and floor */
  int written; /* generation: 1 + the last operation that wrote it (0: none), so that operations
                  read what the ones before them wrote (chains, not unrelated statements) */
  float fill;
} fz_tile;

/* global tensors: inputs (M, N), the gemm's and pipelined sum's (M, K) and (K, N), outputs
 * (M, N) and (M,), the atomic counters (8, 8) */
typedef enum { FZ_G_IN, FZ_G_IN_MK, FZ_G_IN_KN, FZ_G_OUT, FZ_G_OUT_ROWS, FZ_G_ATOMIC } fz_gkind;
typedef struct fz_global {
  fz_gkind kind;
  fz_dtype dt;
  bool trans; /* gemm operands stored transposed: (K, M) or (N, K) */
} fz_global;

typedef enum {
  FZ_OP_LOAD,      /* T.copy(G[by * BM, bx * BN], tile) */
  FZ_OP_LOAD_HALF, /* the first half of the block's rows into the second half of the tile */
  FZ_OP_COPY,      /* T.copy(tile, tile), whole or halves */
  FZ_OP_PAR,       /* T.Parallel nest: dst[map] = expr(sources at their maps) */
  FZ_OP_REDUCE,    /* T.reduce_*(fragment tile, vector, dim) */
  FZ_OP_CUMSUM,    /* T.cumsum(shared tile, shared tile, dim, reverse) */
  FZ_OP_GEMM,      /* T.Pipelined over K: copies of A and B tiles, T.gemm into a float32 fragment */
  FZ_OP_PIPESUM,   /* T.Pipelined over K: a copy, then a T.Parallel accumulation */
  FZ_OP_ATOMIC,    /* T.atomic_add of exact integers into an (8, 8) counter */
  FZ_OP_VARLOOP,   /* a T.alloc_var per thread, updated in a T.serial loop */
  FZ_OP_STORE,     /* a tile (or vector) to its own output */
} fz_opkind;

typedef struct fz_op {
  fz_opkind kind;
  int dst;       /* tile written (STORE: the tile read) */
  int src[3];    /* tiles read (-1: none) */
  int global;    /* global read or written (-1: none) */
  int global2;   /* GEMM: B */
  int map;       /* index map of dst (PAR), variant (others) */
  int nest;      /* PAR: 0 a (BM, BN) nest, 1 a flat (BM * BN) nest */
  int param[4];  /* per kind: dims, reverse, transposes, stages, loop counts, reduce kind, clear */
  uint64_t seed; /* for the expression, so it does not change when other operations go */
} fz_op;

typedef struct fz_kernel {
  int BM, BN, BK, threads;
  int64_t M, N, K;
  int ntiles, nglobals, nops;
  /* fragments are read and written only at the nests' own indices, as most real kernels do: they
   * then stay in registers (elsewhere tilec moves a fragment a nest reads across threads to shared
   * memory), so the register layouts and their code are what the program exercises */
  bool disciplined;
  fz_tile tiles[FZ_MAX_TILES];
  fz_global globals[FZ_MAX_GLOBALS];
  fz_op ops[FZ_MAX_OPS];
  bool dropped[FZ_MAX_OPS]; /* minimization: the operation is left out */
} fz_kernel;

typedef struct fz_program {
  uint64_t seed;
  int nkernels;
  fz_kernel k[FZ_MAX_KERNELS];
} fz_program;

/* A random program; the same seed gives the same program. */
void fz_generate(uint64_t seed, fz_program *p);
/* Its TileLang text (kernels named k0, k1, ...); malloc'ed, NULL without memory. */
char *fz_render(const fz_program *p);
/* How many operations are live (for reports). */
int fz_live_ops(const fz_program *p);

#endif
