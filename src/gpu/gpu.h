/* gpu.h: the GPU lowering that the CUDA and Metal targets share.
 *
 * Input: a kernel's tile IR after the target-independent passes. Output: the same kernel as
 * SIMT IR, in which every statement is run by every thread of the block:
 *   - fragments become per-thread register arrays (LOCAL buffers of `num_regs` elements) laid
 *     out by a fragment layout (layout.c), and every access to them has a constant register
 *     index;
 *   - shared buffers become flat SHARED buffers whose elements are placed by a shared layout
 *     (row-major, or the XOR swizzle the tensor-core GEMM reads without bank conflicts);
 *   - tile operations become loops over the work each thread owns (tileops.c, reduce.c), the
 *     GEMM becomes an intrinsic the target implements (gemm.c), and barriers are placed where
 *     shared memory has a hazard (barrier.c).
 * The passes run as the list in tc_gpu_lower (lower.c). Targets print the result (CUDA C++,
 * MSL) and implement the intrinsics. */
#ifndef TILEC_GPU_H
#define TILEC_GPU_H

#include "ir/ir.h"

/* What the lowering needs to know about the machine. */
typedef struct tc_gpu_desc {
  const char *target;     /* "cuda", "metal": for messages */
  int warp_size;          /* 32 */
  int64_t max_smem;       /* bytes of shared memory one block may use */
  int max_threads;        /* per block */
  int gemm_k_step;        /* the block GEMM's K step: K must be a multiple of it (cuda: 16; metal: 8) */
  int gemm_k_step_8bit;   /* ... where an operand has 8 bits (cuda: 32, m16n8k32; metal: 1, its SIMT path) */
  bool mma_f16;           /* m16n8k16 f16/bf16 tensor-core instructions */
  bool mma_i8;            /* m16n8k32 int8 */
  bool mma_fp8;           /* m16n8k32 e4m3/e5m2 (sm_89+) */
  bool cp_async;          /* asynchronous global->shared copies (sm_80+) */
  bool wgmma;             /* warpgroup MMA from shared-memory descriptors (sm_90a) */
  bool tma;               /* cp.async.bulk.tensor loads completing on mbarriers (sm_90+) */
  bool clusters;          /* thread-block clusters with TMA multicast may share a GEMM's tiles
                             (sm_90a; the cuda target option clusters=on) */
  bool swizzle_gemm_operands; /* store T.gemm's 8/16-bit shared operands XOR-swizzled (cuda's
                                 ldmatrix wants it; Metal's simdgroup_load reads row-major) */
  bool staged_epilogue;   /* a gemm accumulator stored to global memory goes through shared
                             memory in 16-byte rows (epilogue.c) */
  bool simdgroup_bfloat16; /* Metal: simdgroup_matrix<bfloat> exists (MSL 3.1+), so a bfloat16 tile
                              may be written by simdgroup_store (simdgroup_store.c) */
  bool matmul2d;          /* Metal 4's cooperative-tensor matmul2d (16 x 32 destinations) may
                             hold a gemm's accumulator (layout ACC with `coop`, gemm.c) */
  bool atomic_fetch;      /* the codegen gives T.atomic_add(..., return_prev=True) its value before
                             the addition (Metal's atomic_fetch_add_explicit) */
  bool traps;             /* a failed run-time check (T.assert) ends the kernel with an error
                             (cuda's __trap); Metal kernels cannot */
  bool launches;          /* the runtime launches a kernel of several launches (tc_kernel_ir.nlaunches)
                             one launch after another, passing the launch's number */
  bool workspaces;        /* the runtime gives the kernel its T.alloc_global workspaces (zeroed device
                             memory, after the parameters: tc_launch_args.ws_bytes) */
  int plant;              /* tc_gpu_plant: a bug planted on purpose, to show that the program
                             generator finds it (target option plant=NAME; docs/testing.md) */
} tc_gpu_desc;

/* Bugs the GPU lowering plants on request (target option plant=NAME, cuda and metal), so that
 * `tilec fuzz` can be shown to find each (docs/testing.md); never on by default. */
typedef enum tc_gpu_plant {
  TC_PLANT_NONE,
  TC_PLANT_LAYOUT_THREAD,  /* the cyclic layout's register -> element map reads thread tid + 1's */
  TC_PLANT_BARRIER,        /* no barrier before a loop that reads shared memory written before it */
  TC_PLANT_BOUNDS,         /* a copy's in-bounds test lets a tile one past the tensor's end through */
  TC_PLANT_REDUCE_INIT,    /* max reductions start from 0, not -inf */
} tc_gpu_plant;
/* The plant option's value: true and *out set for a known name, else false. */
bool tc_gpu_plant_parse(const char *name, int *out);

/* ---- fragment layouts (layout.c) ----
 * Where each element of a block-wide fragment lives: which thread holds it, in which of that
 * thread's registers. An element may be held by several threads (replicas): a row vector used
 * beside an accumulator tile is replicated across the threads that share the row. */
typedef enum tc_gl_kind {
  TC_GL_ACC,         /* the tensor-core accumulator pattern of a (M, N) gemm tile */
  TC_GL_ROWS_ACC,    /* (M,): row i held by every thread that holds row i of an ACC tile */
  TC_GL_CYCLIC,      /* elements in row-major order dealt to threads in chunks of `vec` */
  TC_GL_ROWS_CYCLIC, /* (M,): row i held by the `group` threads that hold row i of a CYCLIC tile */
  TC_GL_COLS_CYCLIC, /* (N,): column j held by every thread that holds column j of a CYCLIC tile */
  TC_GL_COLS_ACC,    /* (N,): column j held by every thread that holds column j of an ACC tile */
  TC_GL_REPL         /* every thread holds every element */
} tc_gl_kind;

#define TC_GL_MAXDIM 8
typedef struct tc_gpu_layout {
  tc_gl_kind kind;
  int ndim;
  int64_t shape[TC_GL_MAXDIM];
  int64_t numel;
  int threads;
  int64_t num_regs; /* registers per thread */
  int64_t reps;     /* threads holding each element */
  /* ACC, ROWS_ACC, COLS_ACC: the gemm tile M x N and its warp partition */
  int64_t M, N;
  int wm, wn;
  /* ACC, ROWS_ACC: warp slices interleaved (wgmma with several 64-row blocks per warpgroup):
   * a warp's 16-row tiles are 16 * wm rows apart, not stacked in one band of M / wm rows */
  bool interleave;
  /* ACC: placed as Metal 4 matmul2d destinations instead of the m16n8 pattern: each warp's
   * sub-tile is 16 x 32 fragments, row-major, each held as one cooperative tensor (gemm.c) */
  bool coop;
  /* ACC, ROWS_ACC: placed as Metal's simdgroup_matrix<float, 8, 8> holds its elements (the
   * metal.simdgroup scope): the same 8x8 blocks and registers as the m16n8 pattern, the lanes
   * permuted: in each 8x8 block, row g and column pair q are lane
   * 16*g[2] + 8*q[1] + 2*g[1:0] + q[0] (layout.c) */
  bool sg;
  /* CYCLIC: chunk size, and `group` > 0 when rows are dealt to groups of that many threads
   * (each row's chunks cyclic over its group; 0: chunks cyclic over the whole tile);
   * ROWS_CYCLIC: vec and row length N of the source tile, group size;
   * COLS_CYCLIC: vec of the source tile (a thread holds one chunk of columns) */
  int vec;
  int64_t group;
  bool planted; /* TC_PLANT_LAYOUT_THREAD: its code takes thread tid + 1's elements (a test's bug) */
} tc_gpu_layout;

/* Registers per thread and element placement. Indices are linear (row-major) element numbers. */
void tc_gl_owner(const tc_gpu_layout *L, int64_t elem, int64_t rep, int64_t *thread, int64_t *reg);
/* The element held in register `reg` of `thread` (and which replica that thread is), or -1. */
int64_t tc_gl_elem(const tc_gpu_layout *L, int64_t thread, int64_t reg, int64_t *rep);
/* The logical index of register `reg` as int32 expressions of the thread index `tid`, and the
 * condition under which that register holds an element (NULL: always). */
void tc_gl_index_exprs(tc_arena *a, const tc_gpu_layout *L, tc_expr *tid, int64_t reg, tc_expr **idx,
                       tc_expr **valid, tc_loc loc);
/* The same with the register as an expression (a loop counter the target unrolls). */
void tc_gl_index_exprs_at(tc_arena *a, const tc_gpu_layout *L, tc_expr *tid, tc_expr *reg, tc_expr **idx,
                          tc_expr **valid, tc_loc loc);
/* Replica number of the calling thread as an expression (0 for unreplicated layouts). */
tc_expr *tc_gl_rep_expr(tc_arena *a, const tc_gpu_layout *L, tc_expr *tid, tc_loc loc);
bool tc_gl_equal(const tc_gpu_layout *a, const tc_gpu_layout *b);
/* "acc(128x128, warps 2x2)" etc. */
void tc_gl_describe(const tc_gpu_layout *L, char *out, size_t cap);

/* Constructors. They return false with `why` filled when the shape does not fit. */
bool tc_gl_make_acc(tc_gpu_layout *L, int64_t M, int64_t N, int wm, int wn, int threads, char *why, size_t cap);
/* The accumulator of a gemm on wgmma (every warp along M): warpgroups run m64 instructions over
 * 64-row blocks, so with M > 16 * warps a warp's tiles are interleaved (gemm.c). */
bool tc_gl_make_acc_wgmma(tc_gpu_layout *L, int64_t M, int64_t N, int threads, char *why, size_t cap);
/* by_warp: the tile's rows are reduced along their length, so give each warp whole rows when the
 * shape allows (a row's chunks dealt over the 32 lanes of one warp): its reductions are then
 * shuffles, with no shared memory and no barrier. */
void tc_gl_make_cyclic(tc_gpu_layout *L, int ndim, const int64_t *shape, int threads, int elem_bytes, bool by_warp);
void tc_gl_make_repl(tc_gpu_layout *L, int ndim, const int64_t *shape, int threads);
/* The layout of a row vector (shape (M,)) used beside a 2-D tile of layout `tile`; falls back
 * to REPL when the tile's rows are not held by fixed thread groups. */
/* The column vector of an ACC tile (m16n8 or simdgroup placement), or of a plain CYCLIC tile
 * whose threads each hold one fixed chunk of columns (threads * vec a multiple of the row
 * length); false where the tile is neither. */
bool tc_gl_make_cols(tc_gpu_layout *L, const tc_gpu_layout *tile, int threads);
void tc_gl_make_rows(tc_gpu_layout *L, const tc_gpu_layout *tile, int threads);

/* The accumulator of a gemm held as Metal 4 matmul2d destinations (16 x 32 cooperative tensors
 * over wm x wn warps, gemm.c). */
bool tc_gl_make_acc_coop(tc_gpu_layout *L, int64_t M, int64_t N, int wm, int wn, int threads, char *why, size_t cap);
/* The accumulator of a gemm held as simdgroup_matrix 8x8 blocks (metal.simdgroup scope): its
 * registers are the blocks' thread_elements(), so the gemm and simdgroup_store move them
 * within the thread. */
bool tc_gl_make_acc_sg(tc_gpu_layout *L, int64_t M, int64_t N, int wm, int wn, int threads, char *why, size_t cap);

/* The matrix instruction of a T.gemm (gemm.c), and in `why` the reason for it. MATMUL2D: Metal
 * 4's mpp::tensor_ops::matmul2d on an accumulator laid out as ACC with `coop`. */
typedef enum tc_gpu_gemm_instr {
  TC_GPU_GEMM_MMA = 0,
  TC_GPU_GEMM_WGMMA = 1,
  TC_GPU_GEMM_MATMUL2D = 2,
  TC_GPU_GEMM_SIMDGROUP = 3 /* Metal simdgroup_matrix 8x8 on an accumulator laid out as ACC with `sg` */
} tc_gpu_gemm_instr;
struct tc_gpu_plan;
tc_gpu_gemm_instr tc_gpu_gemm_choose(const struct tc_gpu_plan *P, const tc_stmt *gemm, char *why, size_t cap);
/* float8_e4m3fn or float8_e5m2: the 8-bit floats wgmma multiplies (k32, K-major operands only) */
bool tc_gpu_wgmma_fp8(tc_dtype d);
/* Why a gemm cannot run on Metal 4's matmul2d, or NULL when it can: operand and accumulator
 * dtypes, B in memory (shared, or global on the direct-global form), A in memory or in registers
 * (then over wm x 1 simdgroups with K a multiple of 32: the RS form), M % 16, N % 32, K % 16, the
 * wm x wn partition giving sub-tiles of whole 16 x 32 fragments, and not `rs_blocked` (a gemm of
 * the kernel reads A from registers and another cannot run on matmul2d: A's placement comes from
 * an accumulator, so they all take matmul2d or none does). The metal target's accumulator-scope
 * pass, the lowering and --explain ask the same question. */
const char *tc_gpu_matmul2d_reason(int64_t M, int64_t N, int64_t K, int wm, int wn, tc_dtype a, tc_dtype b, tc_dtype c,
                                   bool a_mem, bool b_mem, bool rs_blocked, char *buf, size_t cap);

/* Rows of a shared buffer's 2-D tile as the swizzle sees it (lower.c): the next-to-last
 * dimension when leading dimensions stack tiles, else all rows; 0 when not constant. */
int64_t tc_gpu_tile_rows(const tc_buffer *b);

/* The warp partition TileLang's GemmWarpPolicy gives a gemm tile. */
bool tc_gpu_warp_partition(tc_gemm_policy policy, int64_t M, int64_t N, int warps, int *wm, int *wn);
/* The wm x wn partition of a T.gemm's accumulator (a constant 2-D tile) over a block of
 * `threads` in warps of `warp_size`, by its policy: the one answer the layout inference (and
 * so the block GEMM and the simdgroup store that read the layout) and the metal target's
 * accumulator-scope pass use. False when the threads or the tile do not split. */
bool tc_gpu_acc_partition(const tc_stmt *gemm, int threads, int warp_size, int *wm, int *wn);

/* A set of statements (by identity) the passes mark for later ones. */
typedef struct tc_stmt_set {
  tc_stmt **v;
  int n, cap;
} tc_stmt_set;
void tc_stmt_set_add(tc_arena *a, tc_stmt_set *s, tc_stmt *st);
bool tc_stmt_set_has(const tc_stmt_set *s, const tc_stmt *st);

/* ---- the plan the passes share ---- */
typedef struct tc_gpu_plan {
  tc_arena *a;
  struct tc_strbuf *notes;   /* decisions for --explain, or NULL */
  tc_kernel_ir *k;
  const tc_gpu_desc *desc;
  tilec_error *err;
  int threads;               /* product of the block's thread extents */
  int nbufs;                 /* buffer ids are < nbufs */
  tc_gpu_layout **frag;      /* by buffer id: the layout of a fragment, else NULL */
  bool *swizzle;             /* by buffer id: shared buffer stored with the XOR swizzle */
  bool *demote;              /* by buffer id: a fragment kept in shared memory instead */
  const tc_layout **annotated; /* by buffer id: a shared buffer's T.annotate_layout (not the swizzle) */
  bool failed;
  tc_buffer **regs;          /* by buffer id: a fragment's register array (LOCAL) */
  tc_buffer **flat;          /* by buffer id: a shared buffer's flat storage */
  tc_var *tid;               /* the flat thread index (a LET at the top of the body) */
  tc_var *lane;              /* not used by every kernel */
  int64_t scratch_elems;     /* float32 elements of the shared scratch reductions use */
  tc_buffer *scratch;        /* flat shared float32 scratch, or NULL */
  tc_buffer *scratch64;      /* flat shared float64 scratch for float64 reductions, or NULL */
  tc_buffer *scratch_i32, *scratch_i64; /* the same for integer reductions */
  int uniq;
  /* pipelining (pipeline.c): copies issued ahead asynchronously, and the tiles it staged */
  tc_stmt_set async;
  tc_stmt_set async_mma;     /* gemms of a pipelined mainloop that leave their wgmma running */
  tc_buffer *restage_from[64], *restage_to[64];
  int nrestage;
  bool async_copy;           /* while lowering a producer: its 16-byte copies are cp.async */
  tc_stmt_set units;         /* lowered tile operations the barrier pass takes as one access */
  tc_stmt_set combine_wraps; /* tileops.c's {save, loop, combine} sequences (combine_hoist.c) */
  tc_buffer *epi_stage[2];   /* epilogue.c's per-warp staging tiles (16- and 32-bit), or NULL */
  int epi_slots[2];          /* their TMA form's 16-row slots per warp; 0: the 16-byte-store form */
  /* tileops.c: while a T.Parallel loop that combines iterations into fragment elements is
   * lowered, those fragments (a replicated one is then written at a run-time register) */
  const struct tc_buffer *const *combining;
  int ncombining;
  /* What tc_gpu_lower's earlier attempts asked for (lower.c, "Attempts"): gemms (by gemm.seq)
   * whose A fragment stage_operands.c copies to a shared tile, and fragments (by buffer id) kept
   * in shared memory from the start (or, a gemm's accumulator, read through a shared copy in
   * the loop that asked); and what this attempt asks for when it gives up: the gemm whose A
   * fragment is laid out unlike its operand (lower_gemm), the fragment a T.Parallel loop reads
   * or writes at elements its threads do not hold, and that loop (tileops.c). */
  const int *stage_a, *demote_ids;
  const tc_loc *demote_at; /* per demote_ids entry: the T.Parallel loop that asked */
  int nstage_a, ndemote_ids;
  int restage_a, redemote;
  tc_loc redemote_at;
  const tc_stmt *parallel; /* the T.Parallel nest tileops.c is lowering, or NULL */
} tc_gpu_plan;

bool tc_gpu_fail(tc_gpu_plan *P, tc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Passes (each returns false with P->err filled). */
bool tc_gpu_explicit_ws(tc_gpu_plan *P);      /* ws_explicit.c: T.ws rings -> T.Pipelined (else program order) */
/* The threads an explicitly warp-specialized kernel keeps when it maps onto T.Pipelined: those of
 * the warp groups whose T.ws bodies run a gemm (0: none). */
int tc_gpu_ws_consumer_threads(const tc_kernel_ir *k);
bool tc_gpu_stage_operands(tc_gpu_plan *P);   /* stage_operands.c: a gemm's fragment B (or A) through a shared tile */
bool tc_gpu_simt_gemms(tc_gpu_plan *P);       /* simt_gemm.c: a gemm no matrix instruction takes, as a loop per thread */
void tc_gpu_resolve_views(tc_gpu_plan *P);    /* views.c: a view splitting a register tile's last dimension, as the tile */
bool tc_gpu_pipeline(tc_gpu_plan *P);         /* pipeline.c: T.Pipelined -> staged, asynchronous copies */
bool tc_gpu_infer_layouts(tc_gpu_plan *P);    /* layout.c: fragments and swizzled shared tiles */
bool tc_gpu_lower_tileops(tc_gpu_plan *P);    /* tileops.c: tile ops -> per-thread code */
bool tc_gpu_hoist_combines(tc_gpu_plan *P);   /* combine_hoist.c: replica combines out of serial loops */
bool tc_gpu_insert_barriers(tc_gpu_plan *P);  /* barrier.c */
bool tc_gpu_pingpong(tc_gpu_plan *P);         /* pingpong.c */
bool tc_gpu_overlap(tc_gpu_plan *P);          /* overlap.c */
/* smem_reuse.c: the bytes a shared tile of numel elements takes (rounded up to 128, as every
 * target places tiles) */
int64_t tc_gpu_tile_bytes(tc_dtype d, int64_t numel);
/* smem_reuse.c: shared tiles of disjoint lifetimes share memory; called when the tiles one
 * after another (`sequential` bytes) do not fit (they cross the target's limit at `over`) */
bool tc_gpu_share_smem(tc_gpu_plan *P, const tc_buffer *over, int64_t sequential);

/* The whole lowering: runs the passes above, in order, with the verifier between them.
 * Returns the lowered kernel (a new kernel sharing params with `k`), or NULL. */
/* notes (may be NULL): the lowering's decisions, one line each, for `tilec source --explain`
 * (which instruction each T.gemm runs on, and why not the faster one) */
tc_kernel_ir *tc_gpu_lower(tc_arena *a, const tc_kernel_ir *k, const tc_gpu_desc *desc, struct tc_strbuf *notes, tilec_error *err);

/* Shared-memory layout (the XOR swizzle, lower.c) of a 2-D tile, as an element offset
 * expression; whether a rows x cols tile can have it. */
tc_expr *tc_gpu_swizzle_offset(tc_arena *a, tc_expr *row, tc_expr *col, int64_t cols, int elem_bytes, tc_loc loc);
bool tc_gpu_swizzle_applies(int64_t rows, int64_t cols, int elem_bytes);
/* The same placement as a number: element offset of (row, col). */
int64_t tc_gpu_swizzle_index(int64_t row, int64_t col, int64_t cols, int elem_bytes);

/* The lowering uses the intrinsics gemm_block and shfl_xor of src/ir/intrinsics.def. */

#endif
