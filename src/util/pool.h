/* pool.h: a fixed thread pool for running a range of independent indices (block ids) in
 * parallel. No global state: each pool is an object. Several threads may call
 * tc_thread_pool_parallel_for on one pool at once; their jobs share the workers, and each
 * caller also works on its own job, so nested or concurrent calls never deadlock. */
#ifndef TILEC_POOL_H
#define TILEC_POOL_H
#include <stdint.h>

typedef struct tc_thread_pool tc_thread_pool;

/* A pool with `nthreads` participants per job: nthreads-1 worker threads plus the calling
 * thread. nthreads <= 1 creates no threads (jobs run in the caller). NULL when thread creation
 * or allocation fails. */
tc_thread_pool *tc_thread_pool_create(int nthreads);
void tc_thread_pool_destroy(tc_thread_pool *p); /* NULL is fine; no job may be running */
int tc_thread_pool_size(const tc_thread_pool *p); /* participants per job (>= 1); 1 for NULL */

/* Runs fn(ctx, b, e, slot) over chunks [b, e) of [begin, end), each of at most `grain`
 * indices, and returns when all are done. `slot` identifies the participant within this call
 * (0 <= slot < tc_thread_pool_size(p)), so fn may keep per-participant scratch in ctx indexed by
 * slot without locking. p may be NULL: everything runs in the caller with slot 0. */
typedef void (*tc_range_fn)(void *ctx, int64_t begin, int64_t end, int slot);
void tc_thread_pool_parallel_for(tc_thread_pool *p, int64_t begin, int64_t end, int64_t grain,
                                 tc_range_fn fn, void *ctx);

#endif
