/* cuda.h: the cuda target: its description and passes (target.c), its execution backends
 * (backends.c), and the contract between the CUDA C++ code generator and the runtime that
 * builds, loads and launches what it emits (runtime.c).
 *
 * The code generator, tc_cuda_generate_for (cuda_internal.h), lowers and prints a kernel for a
 * GPU arch (the compile's tc_target_desc.arch): it fills kernel_source (the kernel alone, as
 * `tilec source --kernel-only` prints it) and full_source (the whole translation unit
 * NVRTC/nvcc compiles: no host code, no includes beyond what NVRTC provides), and returns the
 * entry's name, its threads per block and its dynamic shared memory. The backends' generate
 * (tc_cuda_emit) turns those into tc_generated.meta, malloc'd "key=value" lines for the runtime:
 *   entry=NAME     the extern "C" __global__ function
 *   block=X,Y,Z    threads per block (from T.Kernel(threads=...))
 *   smem=BYTES     dynamic shared memory; may exceed 48 KB (the runtime raises
 *                  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
 *   arch=sm_XX     the arch the source was written for
 *   persistent=0|1 the kernel walks the tiles of its grid itself (a warp-specialized kernel,
 *                  codegen.c), computing the logical grid from its parameters; the launch is
 *                  along x: 1: min(tiles, the blocks the device holds at once), 0: one per tile
 *   cluster=C      (with persistent=1) the kernel runs in clusters of C blocks along x
 *                  (__cluster_dims__); the launch is a multiple of C blocks, at most as many
 *                  clusters as the device holds at once
 *   launches=N     a kernel of N launches (tc_kernel_ir.nlaunches; dependent 'with T.Kernel'
 *                  blocks): the runtime launches it N times on the stream, one after another,
 *                  over the same grid, with the launch's number as the int32 parameter
 *                  tcg_launch (after the symbolic dims); 1 when not given
 *   fold=1         the kernel (not one that walks its tiles) finds its logical grid from its
 *                  parameters and takes gridDim.x != gx as the grid folded into x: the runtime
 *                  launches gx * gy * gz blocks along x when gy or gz passes 65535
 *   streamk=BYTES  (with persistent=1) the kernel cuts tiles along k (stream-K, streamk.c) and
 *                  takes a workspace pointer tcg_sk_ws: for G blocks at most, G uint32 flags,
 *                  zero between launches, padded to a multiple of 256 bytes, then G slots of
 *                  BYTES each. Launches of one kernel that share the workspace run one after
 *                  another (the runtime orders them across streams)
 * Unknown keys are ignored when parsed.
 *
 * Kernel parameter ABI (the entry's parameters, in this order):
 *   - for each k->params[i] in order: a tensor is a pointer to its first element (the caller's
 *     data + byte_offset, device memory); a scalar is passed by value in its dtype's C type and
 *     size (int8/uint8/bool 1 byte, int16/float16/bfloat16 2 (float16/bfloat16 as their bits),
 *     int32/uint32/float32 4, int64/uint64/float64 8; float8 types 1 byte of bits);
 *   - then each k->syms[s] (symbolic dimension) as int32;
 *   - then, for a kernel of several launches (launches=), the launch's number as int32;
 *   - then, for a stream-K kernel (streamk=), its workspace's device pointer;
 *   - then each k->workspaces[w] (T.alloc_global) as a pointer to device memory the runtime
 *     keeps with the loaded kernel (after stream-K's, each on a 256-byte boundary), zeroed on
 *     the stream before every launch (before the first of a kernel of several launches, which
 *     share it); launches on other streams wait for the last one, as stream-K's do;
 *   - then one 128-byte CUtensorMap (`const __grid_constant__`) per meta tmap= line, made by the
 *     runtime at each launch from the tensor's pointer (TMA loads on sm_90, docs/cuda.md).
 * The grid is k->grid[] evaluated on the host with the symbolic dims and scalars bound; the
 * block is meta's block=. */
#ifndef TILEC_CUDA_H
#define TILEC_CUDA_H
#include "target/target.h"

extern const tc_backend tc_cuda_nvrtc_backend; /* NVRTC in process (the default) */
extern const tc_backend tc_cuda_emu_backend;   /* the emulator: the CUDA C++ run on the CPU (emu_backend.c) */
extern const tc_backend tc_cuda_nvcc_backend;  /* external nvcc producing a cubin */
extern const tc_target tc_cuda_target;
/* The description of one arch ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"); an unknown
 * arch is an error naming the supported ones. */
bool tc_cuda_describe_arch(const char *arch, tc_target_desc *out, tilec_error *err);
/* Whether tc_cuda_describe_arch knows `arch`. */
bool tc_cuda_arch_known(const char *arch);
/* The arch when neither the target string nor $TILEC_CUDA_ARCH names one and no device is found
 * (the rule: target.c, docs/cuda.md). */
#define TC_CUDA_DEFAULT_ARCH "sm_80"

/* ---- the metadata ---- */
/* tmap=PARAM,EB,ROWS,COLS,R,C,LEAD: a TMA tensor map the kernel takes after its symbolic dims
 * (in order): parameter PARAM (EB-byte elements, last two dimensions R x C) in boxes of ROWS x
 * COLS landing in the 128-byte-atom swizzled layout; LEAD the leading dimensions' product as
 * factors joined by '*' (a number, or sK for symbolic dim K), "1" when there are none. */
#define TC_CUDA_MAX_TMAPS 16
typedef struct tc_cuda_tmap {
  int param, eb;
  int64_t rows, cols, R, C;
  int nlead;
  int64_t lead[8]; /* >= 0: a constant; < 0: symbolic dim -(v + 1) */
} tc_cuda_tmap;
typedef struct tc_cuda_meta {
  char entry[256];
  int block[3];
  int64_t smem;
  char arch[32];
  int ntmaps;
  tc_cuda_tmap tmaps[TC_CUDA_MAX_TMAPS];
  bool walks_tiles; /* persistent= given */
  bool persistent;  /* ... and 1 */
  bool folds;       /* fold=1 */
  int cluster;      /* cluster=, 0 when not given */
  int launches;     /* launches=, 1 when not given */
  int64_t streamk;  /* streamk=: bytes of one block's partial sums; 0 when not given */
} tc_cuda_meta;
/* Bytes of a stream-K kernel's workspace for `blocks` blocks at most (streamk=). */
static inline int64_t tc_cuda_streamk_bytes(const tc_cuda_meta *m, int64_t blocks) {
  return ((blocks * 4 + 255) & ~(int64_t)255) + blocks * m->streamk;
}
/* Parse meta text (`len` bytes). Requires entry, block and arch; smem defaults to 0. */
tilec_status tc_cuda_meta_parse(const char *text, size_t len, tc_cuda_meta *out, tilec_error *err);

/* ---- the artifact: what the disk cache stores for a cuda kernel ----
 *   bytes 0..7    magic "TILECUB\x01"
 *   bytes 8..11   format version (little-endian u32, TC_CUDA_ARTIFACT_VERSION)
 *   bytes 12..15  meta length M (little-endian u32)
 *   bytes 16..23  cubin length C (little-endian u64)
 *   then M bytes of meta text, then C bytes of cubin (an ELF file)
 * A cache hit needs neither the emitter nor NVRTC: the meta travels with the cubin. */
#define TC_CUDA_ARTIFACT_VERSION 1u
#define TC_CUDA_ARTIFACT_HEADER 24u
tilec_status tc_cuda_artifact_pack(const char *meta, const void *cubin, size_t cubin_size, void **out,
                                   size_t *out_size, tilec_error *err);
/* Views into `a` (nothing is copied); a malformed container is an error. */
tilec_status tc_cuda_artifact_unpack(const void *a, size_t size, const char **meta, size_t *meta_len,
                                     const void **cubin, size_t *cubin_size, tilec_error *err);

#endif
