/* pool.c: the thread pool. Jobs live on their callers' stacks and are linked into the pool's
 * queue; workers take chunks from the first job that has any left. A job is finished when its
 * index counter has passed the end and no participant is still inside fn. */
#include "util/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct tc_pool_job {
  tc_range_fn fn;
  void *ctx;
  int64_t end, grain;
  _Atomic int64_t next;      /* first index not yet handed out */
  _Atomic int slots;         /* participants that joined so far */
  int active;                /* workers inside the job (pool mutex) */
  bool queued;               /* still linked in the queue (pool mutex) */
  struct tc_pool_job *link;
} tc_pool_job;

struct tc_thread_pool {
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* workers wait for jobs */
  pthread_cond_t done_cv; /* callers wait for workers to leave their job */
  tc_pool_job *head;
  bool stop;
  int nworkers;
  pthread_t *threads;
};

static bool job_has_work(tc_pool_job *j) {
  return atomic_load_explicit(&j->next, memory_order_relaxed) < j->end;
}

static void job_work(tc_pool_job *j) {
  int slot = atomic_fetch_add(&j->slots, 1);
  for (;;) {
    int64_t b = atomic_fetch_add(&j->next, j->grain);
    if (b >= j->end) break;
    int64_t e = b + j->grain < j->end ? b + j->grain : j->end;
    j->fn(j->ctx, b, e, slot);
  }
}

static void unlink_job(tc_thread_pool *p, tc_pool_job *j) {
  if (!j->queued) return;
  for (tc_pool_job **pp = &p->head; *pp; pp = &(*pp)->link)
    if (*pp == j) {
      *pp = j->link;
      break;
    }
  j->queued = false;
}

static void *worker_main(void *arg) {
  tc_thread_pool *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    tc_pool_job *j = NULL;
    while (!p->stop) {
      /* Take the first job with work left; exhausted ones are unlinked by their caller. */
      for (tc_pool_job *c = p->head; c; c = c->link)
        if (job_has_work(c)) {
          j = c;
          break;
        }
      if (j) break;
      pthread_cond_wait(&p->work_cv, &p->mu);
    }
    if (!j) break;
    j->active++;
    pthread_mutex_unlock(&p->mu);
    job_work(j);
    pthread_mutex_lock(&p->mu);
    unlink_job(p, j);
    if (--j->active == 0) pthread_cond_broadcast(&p->done_cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

tc_thread_pool *tc_thread_pool_create(int nthreads) {
  tc_thread_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  if (pthread_mutex_init(&p->mu, NULL) != 0) goto fail_mu;
  if (pthread_cond_init(&p->work_cv, NULL) != 0) goto fail_work;
  if (pthread_cond_init(&p->done_cv, NULL) != 0) goto fail_done;
  int want = nthreads > 1 ? nthreads - 1 : 0;
  if (want > 0) {
    p->threads = calloc((size_t)want, sizeof *p->threads);
    if (!p->threads) goto fail_threads;
  }
  for (int i = 0; i < want; i++) {
    if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
      tc_thread_pool_destroy(p);
      return NULL;
    }
    p->nworkers++;
  }
  return p;
fail_threads:
  pthread_cond_destroy(&p->done_cv);
fail_done:
  pthread_cond_destroy(&p->work_cv);
fail_work:
  pthread_mutex_destroy(&p->mu);
fail_mu:
  free(p);
  return NULL;
}

void tc_thread_pool_destroy(tc_thread_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->threads[i], NULL);
  free(p->threads);
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->work_cv);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

int tc_thread_pool_size(const tc_thread_pool *p) { return p ? p->nworkers + 1 : 1; }

void tc_thread_pool_parallel_for(tc_thread_pool *p, int64_t begin, int64_t end, int64_t grain,
                                 tc_range_fn fn, void *ctx) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  if (!p || p->nworkers == 0 || end - begin <= grain) {
    for (int64_t b = begin; b < end; b += grain) fn(ctx, b, b + grain < end ? b + grain : end, 0);
    return;
  }
  tc_pool_job j = {.fn = fn, .ctx = ctx, .end = end, .grain = grain};
  atomic_init(&j.next, begin);
  atomic_init(&j.slots, 0);
  pthread_mutex_lock(&p->mu);
  j.queued = true;
  tc_pool_job **tail = &p->head;
  while (*tail) tail = &(*tail)->link;
  *tail = &j;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);

  job_work(&j);

  pthread_mutex_lock(&p->mu);
  unlink_job(p, &j);
  while (j.active > 0) pthread_cond_wait(&p->done_cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
