/* mem.c: the in-memory cache of loaded kernels: a chained hash map from key to object, with a
 * use counter for least-recently-used eviction, behind one mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

typedef struct mem_node {
  tc_cache_key key;
  void *obj;
  uint64_t last_use;
  struct mem_node *next;
} mem_node;

struct tc_mem_cache {
  pthread_mutex_t mu;
  tc_mem_ref_fn retain, release;
  size_t max_entries;
  mem_node **buckets;
  size_t nbuckets; /* a power of two */
  size_t count;
  uint64_t clock;  /* bumped on every use */
};

static size_t bucket_of(const tc_mem_cache *m, const tc_cache_key *k) {
  uint64_t h;
  memcpy(&h, k->bytes, sizeof h); /* the key is already a uniform hash */
  return (size_t)h & (m->nbuckets - 1);
}

tc_mem_cache *tc_mem_cache_create(tc_mem_ref_fn retain, tc_mem_ref_fn release, size_t max_entries) {
  tc_mem_cache *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->nbuckets = 64;
  m->buckets = calloc(m->nbuckets, sizeof *m->buckets);
  if (!m->buckets) {
    free(m);
    return NULL;
  }
  pthread_mutex_init(&m->mu, NULL);
  m->retain = retain;
  m->release = release;
  m->max_entries = max_entries;
  return m;
}

/* Unlink every node; returns them as a list for releasing outside the lock. */
static mem_node *detach_all_locked(tc_mem_cache *m) {
  mem_node *list = NULL;
  for (size_t i = 0; i < m->nbuckets; i++) {
    mem_node *n = m->buckets[i];
    while (n) {
      mem_node *next = n->next;
      n->next = list;
      list = n;
      n = next;
    }
    m->buckets[i] = NULL;
  }
  m->count = 0;
  return list;
}

static void release_list(tc_mem_cache *m, mem_node *list) {
  while (list) {
    mem_node *next = list->next;
    if (m->release) m->release(list->obj);
    free(list);
    list = next;
  }
}

void tc_mem_cache_destroy(tc_mem_cache *m) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  mem_node *list = detach_all_locked(m);
  pthread_mutex_unlock(&m->mu);
  release_list(m, list);
  pthread_mutex_destroy(&m->mu);
  free(m->buckets);
  free(m);
}

void tc_mem_cache_clear(tc_mem_cache *m) {
  pthread_mutex_lock(&m->mu);
  mem_node *list = detach_all_locked(m);
  pthread_mutex_unlock(&m->mu);
  release_list(m, list);
}

static mem_node **find_locked(tc_mem_cache *m, const tc_cache_key *k) {
  mem_node **p = &m->buckets[bucket_of(m, k)];
  while (*p && memcmp((*p)->key.bytes, k->bytes, sizeof k->bytes) != 0) p = &(*p)->next;
  return p;
}

void *tc_mem_cache_get(tc_mem_cache *m, const tc_cache_key *key) {
  pthread_mutex_lock(&m->mu);
  mem_node *n = *find_locked(m, key);
  void *obj = NULL;
  if (n) {
    n->last_use = ++m->clock;
    obj = n->obj;
    if (m->retain) m->retain(obj);
  }
  pthread_mutex_unlock(&m->mu);
  return obj;
}

static void grow_locked(tc_mem_cache *m) {
  size_t nb = m->nbuckets * 2;
  mem_node **b = calloc(nb, sizeof *b);
  if (!b) return; /* longer chains, still correct */
  for (size_t i = 0; i < m->nbuckets; i++) {
    mem_node *n = m->buckets[i];
    while (n) {
      mem_node *next = n->next;
      uint64_t h;
      memcpy(&h, n->key.bytes, sizeof h);
      size_t j = (size_t)h & (nb - 1);
      n->next = b[j];
      b[j] = n;
      n = next;
    }
  }
  free(m->buckets);
  m->buckets = b;
  m->nbuckets = nb;
}

/* Unlink the least recently used node (O(n): only when over the limit). */
static mem_node *evict_one_locked(tc_mem_cache *m) {
  mem_node **victim = NULL;
  for (size_t i = 0; i < m->nbuckets; i++)
    for (mem_node **p = &m->buckets[i]; *p; p = &(*p)->next)
      if (!victim || (*p)->last_use < (*victim)->last_use) victim = p;
  if (!victim) return NULL;
  mem_node *n = *victim;
  *victim = n->next;
  n->next = NULL;
  m->count--;
  return n;
}

void *tc_mem_cache_insert(tc_mem_cache *m, const tc_cache_key *key, void *obj) {
  mem_node *evicted = NULL;
  pthread_mutex_lock(&m->mu);
  mem_node **p = find_locked(m, key);
  void *result = obj;
  if (*p) {
    (*p)->last_use = ++m->clock;
    result = (*p)->obj;
    if (m->retain) m->retain(result);
  } else {
    mem_node *n = calloc(1, sizeof *n);
    if (n) {
      n->key = *key;
      n->obj = obj;
      n->last_use = ++m->clock;
      if (m->retain) m->retain(obj);
      *p = n;
      m->count++;
      while (m->max_entries && m->count > m->max_entries) {
        mem_node *e = evict_one_locked(m);
        if (!e) break;
        e->next = evicted;
        evicted = e;
      }
      if (m->count > m->nbuckets) grow_locked(m);
    }
  }
  pthread_mutex_unlock(&m->mu);
  release_list(m, evicted);
  return result;
}

bool tc_mem_cache_remove(tc_mem_cache *m, const tc_cache_key *key) {
  pthread_mutex_lock(&m->mu);
  mem_node **p = find_locked(m, key);
  mem_node *n = *p;
  if (n) {
    *p = n->next;
    n->next = NULL;
    m->count--;
  }
  pthread_mutex_unlock(&m->mu);
  release_list(m, n);
  return n != NULL;
}

size_t tc_mem_cache_count(tc_mem_cache *m) {
  pthread_mutex_lock(&m->mu);
  size_t n = m->count;
  pthread_mutex_unlock(&m->mu);
  return n;
}
