/* gpu_internal.h: what the GPU lowering's files share and nobody else needs. */
#ifndef TILEC_GPU_INTERNAL_H
#define TILEC_GPU_INTERNAL_H

#include "gpu/gpu.h"

/* A perfect nest of T.Parallel loops: its vars, constant extents and innermost body. */
typedef struct par_nest {
  int n;
  tc_var *var[TC_GL_MAXDIM];
  int64_t ext[TC_GL_MAXDIM];
  tc_stmt *body;
} par_nest;
bool tc_gpu_parallel_nest(const tc_stmt *s, par_nest *out);

/* How a fragment access in a T.Parallel nest maps iterations onto the fragment's elements, when
 * it is a bijection of mixed-radix form: the flattened (row-major) element index is
 * offset + sum_d stride[d] * var[d], and the |stride|s, sorted, are 1, ext[a], ext[a] * ext[b],
 * ... over the nest's extents (a reshape, a transpose, reversed dims, or any mix). Its inverse
 * is then a closed form: var[d] = digit, or ext[d] - 1 - digit where stride[d] < 0, with digit
 * = (flat / |stride[d]|) % ext[d]. `i * npt + j` over (threads, npt) is one. */
typedef struct par_map {
  int64_t stride[TC_GL_MAXDIM];
  int64_t offset;
} par_map;
/* Integer variables a nest's body binds once (`e = i * npt + j`) and never assigns again: an
 * index through one is read as its value. */
typedef struct par_lets {
  int n;
  const tc_var *var[64];
  const tc_expr *value[64];
} par_lets;
void tc_gpu_collect_lets(const tc_stmt *body, par_lets *out);
const tc_expr *tc_gpu_let_value(const par_lets *L, const tc_var *v);
bool tc_gpu_bijective_access(const par_nest *N, const par_lets *lets, int ndim, const int64_t *shape, int nidx,
                             tc_expr *const *idx, par_map *m);
bool tc_gpu_map_equal(const par_nest *N, const par_map *x, const par_map *y);

/* Fragment accesses in a T.Parallel body, classified by how they are indexed. */
typedef struct access_scan {
  const par_nest *N;
  const tc_buffer *exact[64]; /* indexed exactly by the nest's vars, in order, full shape */
  int nexact;
  const tc_buffer *rows[64];  /* 1-D, indexed by the nest's first var */
  int nrows;
  const tc_buffer *cols[64];  /* 1-D, indexed by a 2-D nest's second var */
  int ncols;
  const tc_buffer *exact_written; /* the first of `exact` that is written */
  /* indexed otherwise, by a bijection of the nest onto the whole fragment (par_map); one entry
   * per fragment, the first access's map, `bij_mixed` when its accesses use different maps */
  const tc_buffer *bij[64];
  par_map bij_map[64];
  bool bij_written[64], bij_mixed[64];
  int nbij;
  par_lets lets;
} access_scan;
void tc_gpu_scan_nest(access_scan *A, const par_nest *N);

/* tileops.c: the indices of a region at iteration `it` of its squeezed shape. */
tc_expr **tc_gpu_region_at(tc_gpu_plan *P, const tc_region *r, tc_expr *const *it, tc_loc loc);
/* Whether r covers its (constant-shaped) buffer whole. */
bool tc_gpu_region_whole(const tc_region *r);
/* Whether r is one whole 2-D tile of its buffer: leading dimensions of extent 1, the last two
 * whole (what the matrix instructions address). */
bool tc_gpu_region_is_tile(const tc_region *r);
/* tileops.c: the run-time test that global tile g lies inside its tensor (NULL: always). */
tc_expr *tc_gpu_global_in_bounds(tc_gpu_plan *P, const tc_region *g, tc_loc loc);

/* pipeline.c: whether integer expression e is known to be a multiple of m (constants, and sums
 * and products of them with anything). */
bool tc_gpu_multiple_of(const tc_expr *e, int64_t m);
/* pipeline.c: the kernel's TMA tensor map of kernel parameter `param` in boxes of rows x cols
 * (k->tma), added when new; its index. */
int tc_gpu_tma_map(tc_gpu_plan *P, int param, int64_t rows, int64_t cols);
/* pipeline.c: whether a region of a global tensor takes single indices in the dimensions before
 * its last two, each of a constant or symbolic extent (a tensor map's flattened leading
 * dimension, which the launch knows). */
bool tc_gpu_tma_leading_dims(const tc_region *r);

/* epilogue.c: a gemm accumulator's T.copy to a global tile through shared memory (any tile:
 * partial and unaligned ones included), or NULL when it does not qualify. */
tc_stmt *tc_gpu_acc_store_staged(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                 tc_loc loc);
/* simdgroup_store.c: a metal.simdgroup accumulator's T.copy to a global tile as one
 * simdgroup_store_acc, or NULL when it does not qualify; *cond is the run-time test (the tile is
 * inside the tensor) under which it may be taken. */
tc_stmt *tc_gpu_acc_store_simdgroup(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                    tc_expr **cond, tc_loc loc);
/* direct.c: on Metal 4, gemm operands only staged through shared tiles by a T.copy are read
 * from global memory instead (matmul2d's direct-global form) */
bool tc_gpu_matmul2d_direct(tc_gpu_plan *P);
/* Shared memory the kernel has asked for so far, its tiles one after another (and the
 * lowering's scratch), in bytes (smem_reuse.c). */
int64_t tc_gpu_shared_bytes(const tc_gpu_plan *P);

/* pingpong.c: a statement's leaves, SEQs opened, in order (the consumer part of a
 * warp-specialized loop, which pingpong.c and overlap.c rearrange); fn on each warp-specialized
 * loop among s's statements, looking into SEQs only (such a loop is at the kernel's top level) */
void tc_gpu_flatten(tc_arena *a, tc_stmt_set *f, tc_stmt *s);
bool tc_gpu_is_intrinsic(const tc_stmt *s, const char *name);
void tc_gpu_each_ws_loop(tc_gpu_plan *P, tc_stmt *s, void (*fn)(tc_gpu_plan *P, tc_stmt *loop));

#endif
