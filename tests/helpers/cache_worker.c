/* cache_worker: one process using the disk cache, for the multi-process tests
 * (tests/e2e/cache_*.sh). The artifact of a key is derived from its name and size, so any
 * process can check what it reads.
 *
 *   cache_worker DIR put NAME SIZE [--slow]  store NAME; --slow writes 4 KiB per 20 ms and
 *                                            prints "writing" first (to be killed mid-write)
 *   cache_worker DIR get NAME SIZE           exit 0 hit with the right bytes, 1 absent,
 *                                            2 invalid (prints the reason), 3 wrong bytes, 4 off
 *   cache_worker DIR compile NAME SIZE...    per name: get; on a miss "compile" (sleep 5 ms)
 *                                            and put; then get must hit with the right bytes.
 *                                            Exit 0 when all did; prints hit/miss per name
 *   cache_worker DIR churn PREFIX N SIZE     put PREFIX0..PREFIX<N-1>, reading each back and
 *                                            reading earlier ones (under TILEC_CACHE_MAX_MB other
 *                                            processes evict them: absent is fine, invalid or
 *                                            wrong bytes are not). Exit 0 when none was bad
 *   cache_worker DIR stats                   prints "entries N valid N invalid N temp N"
 *                                            (and " bytes N" with --bytes)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"

static tilec_status build_bytes(const tc_backend_env *env, const tc_generated *src, void **a,
                                size_t *n, tilec_error *err) {
  (void)env, (void)src, (void)a, (void)n;
  tc_error(err, TILEC_ERROR_INTERNAL, "cache_worker stores its own bytes");
  return TILEC_ERROR_INTERNAL;
}
/* A backend that produces an artifact file, so the disk cache serves it. */
static const tc_backend worker_backend = {.target = "test", .name = "worker", .build = build_bytes};

static void key_of(const char *name, tc_cache_key *k) {
  tc_cache_key_input in = {.ir_text = name, .target = "test", .backend = "worker"};
  tc_cache_key_compute(&in, k);
}

static uint8_t *artifact_of(const char *name, size_t size) {
  uint8_t *p = malloc(size ? size : 1);
  uint32_t h = 2166136261u;
  for (const char *c = name; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
  for (size_t i = 0; i < size; i++) {
    h ^= h << 13, h ^= h >> 17, h ^= h << 5;
    p[i] = (uint8_t)h;
  }
  return p;
}

static void entry_of(const char *name, uint8_t *art, size_t size, tc_cache_entry *e) {
  memset(e, 0, sizeof *e);
  e->artifact = art;
  e->artifact_size = size;
  e->nsections = 1;
  e->sections[0] = (tc_cache_section){"description", name, strlen(name)};
}

static ssize_t slow_write(int fd, const void *buf, size_t n, void *user) {
  (void)user;
  static int announced;
  if (!announced) {
    announced = 1;
    printf("writing\n");
    fflush(stdout);
  }
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  return write(fd, buf, n < 4096 ? n : 4096);
}

static int do_get(tc_disk_cache *c, const char *name, size_t size, int quiet) {
  tc_cache_key k;
  key_of(name, &k);
  tc_cache_entry e;
  char why[256];
  tc_cache_result r = tc_disk_cache_get(c, &worker_backend, &k, &e, why, sizeof why);
  if (r == TC_CACHE_ABSENT) return 1;
  if (r == TC_CACHE_OFF) return 4;
  if (r == TC_CACHE_INVALID) {
    if (!quiet) printf("invalid: %s\n", why);
    return 2;
  }
  uint8_t *want = artifact_of(name, size);
  const tc_cache_section *d = tc_cache_entry_section(&e, "description");
  int ok = e.artifact_size == size && memcmp(e.artifact, want, size) == 0 && d &&
           d->size == strlen(name) && memcmp(d->data, name, d->size) == 0;
  free(want);
  tc_cache_entry_release(&e);
  return ok ? 0 : 3;
}

static int do_put(tc_disk_cache *c, const char *name, size_t size) {
  tc_cache_key k;
  key_of(name, &k);
  uint8_t *art = artifact_of(name, size);
  tc_cache_entry e;
  entry_of(name, art, size, &e);
  tilec_error err = {0};
  tilec_status st = tc_disk_cache_put(c, &worker_backend, &k, &e, &err);
  free(art);
  if (st != TILEC_OK) {
    printf("put failed: %s\n", err.message);
    return 1;
  }
  char *w = tc_disk_cache_take_warning(c);
  if (w) {
    printf("warning: %s\n", w);
    free(w);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cache_worker DIR put|get|compile|stats ...\n");
    return 64;
  }
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(argv[1], 0, &err);
  if (!c) {
    printf("open failed: %s\n", err.message);
    return 65;
  }
  const char *cmd = argv[2];
  int rc = 64;
  if (strcmp(cmd, "put") == 0 && argc >= 5) {
    if (argc > 5 && strcmp(argv[5], "--slow") == 0) tc_disk_cache_set_write_hook(c, slow_write, NULL);
    rc = do_put(c, argv[3], strtoul(argv[4], NULL, 10));
  } else if (strcmp(cmd, "get") == 0 && argc >= 5) {
    rc = do_get(c, argv[3], strtoul(argv[4], NULL, 10), 0);
  } else if (strcmp(cmd, "compile") == 0 && argc >= 5 && argc % 2 == 1) {
    rc = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
      size_t size = strtoul(argv[i + 1], NULL, 10);
      int g = do_get(c, argv[i], size, 0);
      if (g == 0) {
        printf("%s hit\n", argv[i]);
        continue;
      }
      if (g != 1) { /* another process's entry must never be invalid or wrong */
        printf("%s bad read (%d)\n", argv[i], g);
        rc = 1;
      }
      struct timespec ts = {0, 5 * 1000 * 1000};
      nanosleep(&ts, NULL);
      if (do_put(c, argv[i], size) != 0) rc = 1;
      g = do_get(c, argv[i], size, 0);
      /* Absent is possible only if a concurrent eviction removed it; with the default limit
       * it is not, so anything but a hit fails. */
      if (g != 0) {
        printf("%s not readable after put (%d)\n", argv[i], g);
        rc = 1;
      } else {
        printf("%s miss\n", argv[i]);
      }
    }
  } else if (strcmp(cmd, "churn") == 0 && argc >= 6) {
    int n = atoi(argv[4]);
    size_t size = strtoul(argv[5], NULL, 10);
    rc = 0;
    for (int i = 0; i < n; i++) {
      char name[128];
      snprintf(name, sizeof name, "%s%d", argv[3], i);
      if (do_put(c, name, size) != 0) rc = 1;
      for (int j = i; j >= 0 && j > i - 4; j--) {
        snprintf(name, sizeof name, "%s%d", argv[3], j);
        int g = do_get(c, name, size, 0);
        if (g != 0 && g != 1) {
          printf("%s bad read (%d)\n", name, g);
          rc = 1;
        }
      }
    }
  } else if (strcmp(cmd, "stats") == 0) {
    tc_cache_listing l;
    if (tc_disk_cache_list(c, true, &l, &err) != TILEC_OK) {
      printf("list failed: %s\n", err.message);
      rc = 1;
    } else {
      size_t valid = 0;
      for (size_t i = 0; i < l.count; i++) valid += l.entries[i].valid;
      printf("entries %zu valid %zu invalid %zu temp %zu", l.count, valid, l.count - valid, l.temp_files);
      if (argc > 3 && strcmp(argv[3], "--bytes") == 0) printf(" bytes %llu", (unsigned long long)l.total_bytes);
      printf("\n");
      tc_cache_listing_free(&l);
      rc = 0;
    }
  }
  if (rc == 64) fprintf(stderr, "cache_worker: bad arguments\n");
  tc_disk_cache_close(c);
  return rc;
}
