/* streamk.h: stream-K for the persistent GEMM (streamk.c; docs/cuda.md, "Stream-K"). */
#ifndef TILEC_CUDA_STREAMK_H
#define TILEC_CUDA_STREAMK_H

#include "ir/ir.h"
#include "util/strbuf.h"

#define TC_CUDA_STREAMK_MAX_ACC 4
typedef struct tc_cuda_streamk {
  const tc_stmt *loop;                           /* the warp-specialized k loop */
  int consumers;                                 /* the consumer threads */
  int nacc;                                      /* the per-thread accumulators its gemms add into */
  const tc_buffer *acc[TC_CUDA_STREAMK_MAX_ACC];
  int64_t acc_n[TC_CUDA_STREAMK_MAX_ACC];        /* elements each thread holds */
  int64_t slot_bytes;                            /* one block's partial sums */
} tc_cuda_streamk;

/* Whether the persistent kernel `body`, whose warp-specialized loop is `loop`, may be cut along
 * that loop (a pure sum into zeroed accumulators, the loop at the top level); fills *out, or
 * says in *why why not (NULL: no such loop at all). */
bool tc_cuda_streamk_plan(const tc_stmt *body, const tc_stmt *loop, int consumers, tc_cuda_streamk *out, const char **why);
/* The lines that store this block's partial sums in its slot (names: the accumulators' C
 * names), and those that add the partial sums of block tcg_below to the accumulators. */
void tc_cuda_streamk_put(tc_strbuf *sb, int ind, const tc_cuda_streamk *p, const char *const *names);
void tc_cuda_streamk_add(tc_strbuf *sb, int ind, const tc_cuda_streamk *p, const char *const *names);

#endif
