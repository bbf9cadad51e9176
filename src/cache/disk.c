/* disk.c: the disk cache. One file per key; atomic publication by rename within the cache
 * directory; validation on every read; LRU eviction by file mtime (set to "now" on each hit);
 * the first write fault switches the cache off with one warning. See cache.h and
 * docs/cache.md. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache_internal.h"
#include "util/strbuf.h"

#define ENTRY_NAME_LEN (2 * TC_SHA256_SIZE + sizeof TC_ENTRY_SUFFIX - 1)

struct tc_disk_cache {
  pthread_mutex_t mu;
  char *dir;          /* resolved directory, "" when none */
  bool enabled;       /* guarded by mu */
  uint64_t max_bytes;
  char *warning;      /* guarded by mu; one warning, taken by the caller */
  bool warned;        /* a warning was recorded once; later faults add none */
  bool by_choice;     /* disabled on purpose (TC_DISK_CACHE_DISABLE, TILEC_DISABLE_CACHE) */
  tc_cache_write_fn write_hook;
  void *write_hook_user;
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t stat_mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Last use is the file's mtime, set explicitly from CLOCK_REALTIME: file timestamps taken by
 * the kernel are coarse (a clock tick), which would make LRU order ties. */
static void set_last_use(int fd) {
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[1] = ts[0];
  (void)futimens(fd, ts);
}

static bool env_set(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *path) {
  char buf[PATH_MAX];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char saved = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    buf[i] = saved;
  }
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

static void record_warning_locked(tc_disk_cache *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void record_warning_locked(tc_disk_cache *c, const char *fmt, ...) {
  if (c->warned) return;
  c->warned = true;
  tc_strbuf sb;
  tc_sb_init(&sb);
  va_list ap;
  va_start(ap, fmt);
  tc_sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  c->warning = tc_sb_take(&sb); /* NULL when out of memory: the warning is lost, not the compile */
}

/* A write failed: switch the cache off for this object, warn once. */
static void write_fault(tc_disk_cache *c, const char *what, int e) {
  pthread_mutex_lock(&c->mu);
  if (c->enabled) {
    c->enabled = false;
    record_warning_locked(c, "disk cache disabled: cannot %s in %s: %s", what, c->dir, strerror(e));
  }
  pthread_mutex_unlock(&c->mu);
}

tc_disk_cache *tc_disk_cache_open(const char *dir, unsigned flags, tilec_error *err) {
  tc_disk_cache *c = calloc(1, sizeof *c);
  if (!c) goto nomem;
  pthread_mutex_init(&c->mu, NULL);
  c->max_bytes = (uint64_t)TC_DISK_CACHE_DEFAULT_MAX_MB << 20;
  const char *mb = getenv("TILEC_CACHE_MAX_MB");
  if (mb && *mb) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(mb, &end, 10);
    if (*end || errno || v == 0 || v > (UINT64_MAX >> 20) || *mb == '-')
      record_warning_locked(c, "TILEC_CACHE_MAX_MB='%s' is not a positive integer; using %d", mb,
                            TC_DISK_CACHE_DEFAULT_MAX_MB);
    else
      c->max_bytes = (uint64_t)v << 20;
  }
  tc_strbuf sb;
  tc_sb_init(&sb);
  const char *env;
  if (dir && *dir) tc_sb_puts(&sb, dir);
  else if ((env = getenv("TILEC_CACHE_DIR")) && *env) tc_sb_puts(&sb, env);
  else if ((env = getenv("XDG_CACHE_HOME")) && *env) tc_sb_printf(&sb, "%s/tilec", env);
  else if ((env = getenv("HOME")) && *env) tc_sb_printf(&sb, "%s/.cache/tilec", env);
  while (sb.len > 1 && sb.data[sb.len - 1] == '/') sb.data[--sb.len] = 0;
  c->dir = sb.len ? tc_sb_take(&sb) : strdup("");
  if (!c->dir) goto nomem;
  if (!*c->dir) {
    record_warning_locked(c, "disk cache disabled: no cache directory (set TILEC_CACHE_DIR or HOME)");
    return c;
  }
  if ((flags & TC_DISK_CACHE_DISABLE) || env_set("TILEC_DISABLE_CACHE")) {
    c->by_choice = true;
    return c;
  }
  if (strlen(c->dir) + ENTRY_NAME_LEN + 32 >= PATH_MAX) { /* room for entry and temp names */
    record_warning_locked(c, "disk cache disabled: the cache directory path is too long");
    return c;
  }
  if (make_dirs(c->dir) != 0) {
    record_warning_locked(c, "disk cache disabled: cannot create %s: %s", c->dir, strerror(errno));
    return c;
  }
  /* Entries are code that gets loaded and run: a directory someone else can write to would
   * let them plant one (the checksum detects accidents, not forgeries). */
  struct stat st;
  if (stat(c->dir, &st) != 0) {
    record_warning_locked(c, "disk cache disabled: cannot stat %s: %s", c->dir, strerror(errno));
    return c;
  }
  if (st.st_uid != geteuid()) {
    record_warning_locked(c, "disk cache disabled: %s belongs to another user (uid %u)", c->dir,
                          (unsigned)st.st_uid);
    return c;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    record_warning_locked(c, "disk cache disabled: %s is writable by other users (chmod 700 it)",
                          c->dir);
    return c;
  }
  c->enabled = true;
  return c;
nomem:
  if (c) {
    pthread_mutex_destroy(&c->mu);
    free(c);
  }
  tc_error(err, TILEC_ERROR_NOMEM, "out of memory opening the disk cache");
  return NULL;
}

void tc_disk_cache_close(tc_disk_cache *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->mu);
  free(c->dir);
  free(c->warning);
  free(c);
}

bool tc_disk_cache_enabled(tc_disk_cache *c) {
  pthread_mutex_lock(&c->mu);
  bool on = c->enabled;
  pthread_mutex_unlock(&c->mu);
  return on;
}

const char *tc_disk_cache_dir(const tc_disk_cache *c) { return c->dir; }
bool tc_disk_cache_off_by_choice(const tc_disk_cache *c) { return c->by_choice; }

bool tc_disk_cache_writable(const tc_disk_cache *c, char *why, size_t why_cap) {
  /* access() sees a read-only filesystem even for root, whom permissions do not stop */
  if (*c->dir && access(c->dir, W_OK | X_OK) == 0) return true;
  snprintf(why, why_cap, "cannot write in %s: %s", *c->dir ? c->dir : "(no directory)", *c->dir ? strerror(errno) : "unset");
  return false;
}
uint64_t tc_disk_cache_max_bytes(const tc_disk_cache *c) { return c->max_bytes; }

char *tc_disk_cache_take_warning(tc_disk_cache *c) {
  pthread_mutex_lock(&c->mu);
  char *w = c->warning;
  c->warning = NULL;
  pthread_mutex_unlock(&c->mu);
  return w;
}

void tc_disk_cache_set_write_hook(tc_disk_cache *c, tc_cache_write_fn fn, void *user) {
  pthread_mutex_lock(&c->mu);
  c->write_hook = fn;
  c->write_hook_user = user;
  pthread_mutex_unlock(&c->mu);
}

bool tc_cache_disk_allowed(const tc_backend *b) {
  return b && !(b->flags & TC_BACKEND_IN_MEMORY) && b->build != NULL;
}

const char *tc_cache_result_name(tc_cache_result r) {
  switch (r) {
  case TC_CACHE_HIT: return "hit";
  case TC_CACHE_ABSENT: return "absent";
  case TC_CACHE_INVALID: return "invalid";
  case TC_CACHE_INVALID_KEPT: return "invalid-kept";
  case TC_CACHE_OFF: return "off";
  }
  return "?";
}

/* ---- names ---- */

static bool is_entry_name(const char *name, tc_cache_key *key) {
  if (strlen(name) != ENTRY_NAME_LEN || strcmp(name + 2 * TC_SHA256_SIZE, TC_ENTRY_SUFFIX) != 0)
    return false;
  char hex[TC_CACHE_KEY_HEX_SIZE];
  memcpy(hex, name, 2 * TC_SHA256_SIZE);
  hex[2 * TC_SHA256_SIZE] = 0;
  tc_cache_key k;
  if (!tc_cache_key_from_hex(hex, &k)) return false;
  if (key) *key = k;
  return true;
}

static bool is_temp_name(const char *name) {
  return strncmp(name, TC_TEMP_PREFIX, sizeof TC_TEMP_PREFIX - 1) == 0;
}

static void entry_path(const tc_disk_cache *c, const tc_cache_key *key, char *out, size_t cap) {
  char hex[TC_CACHE_KEY_HEX_SIZE];
  tc_cache_key_hex(key, hex);
  snprintf(out, cap, "%s/%s%s", c->dir, hex, TC_ENTRY_SUFFIX);
}

/* ---- reading ---- */
typedef enum { READ_OK, READ_ABSENT, READ_BAD } read_status;

/* Read and validate the file at path. On READ_BAD, *st (if the file was opened) identifies
 * the file that was read, so the caller removes that one and not a newer replacement. */
static read_status read_entry(const char *path, const tc_cache_key *key, bool touch,
                              tc_cache_entry *out, struct stat *st, bool *have_st, char *why,
                              size_t why_cap) {
  memset(out, 0, sizeof *out);
  *have_st = false;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return READ_ABSENT;
    if (why && why_cap) snprintf(why, why_cap, "cannot open: %s", strerror(errno));
    return READ_BAD;
  }
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    if (why && why_cap) snprintf(why, why_cap, "not a regular file");
    close(fd);
    return READ_BAD;
  }
  *have_st = true;
  if ((uint64_t)st->st_size > SIZE_MAX - 1) {
    if (why && why_cap) snprintf(why, why_cap, "too large");
    close(fd);
    return READ_BAD;
  }
  size_t size = (size_t)st->st_size;
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) {
    if (why && why_cap) snprintf(why, why_cap, "out of memory reading %zu bytes", size);
    close(fd);
    return READ_ABSENT; /* not the entry's fault: leave it */
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = pread(fd, buf + got, size - got, (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got < size) {
    if (why && why_cap) snprintf(why, why_cap, "truncated: read %zu of %zu bytes", got, size);
    free(buf);
    close(fd);
    return READ_BAD;
  }
  if (!tc_entry_decode(buf, size, key, out, why, why_cap)) {
    free(buf);
    close(fd);
    return READ_BAD;
  }
  out->storage = buf;
  if (touch) set_last_use(fd);
  close(fd);
  return READ_OK;
}

/* Remove path if it is still the file described by st (a concurrent writer may have renamed
 * a good entry onto the name since we read the bad one). 0 when the bad file is gone, else the
 * errno of the failed unlink (a read-only directory). */
static int remove_if_same(const char *path, const struct stat *st) {
  struct stat now;
  if (lstat(path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino && unlink(path) != 0 &&
      errno != ENOENT)
    return errno;
  return 0;
}

tc_cache_result tc_disk_cache_get(tc_disk_cache *c, const tc_backend *b, const tc_cache_key *key,
                                  tc_cache_entry *out, char *why, size_t why_cap) {
  memset(out, 0, sizeof *out);
  if (why && why_cap) why[0] = 0;
  if (!tc_cache_disk_allowed(b) || !tc_disk_cache_enabled(c)) return TC_CACHE_OFF;
  char path[PATH_MAX];
  entry_path(c, key, path, sizeof path);
  struct stat st;
  bool have_st;
  read_status r = read_entry(path, key, true, out, &st, &have_st, why, why_cap);
  if (r == READ_OK) return TC_CACHE_HIT;
  if (r == READ_ABSENT) return TC_CACHE_ABSENT;
  int kept = have_st ? remove_if_same(path, &st) : 0;
  if (kept && why && why_cap) {
    size_t n = strlen(why);
    snprintf(why + n, why_cap - n, "%sremoving it failed: %s", n ? "; " : "", strerror(kept));
  }
  return kept ? TC_CACHE_INVALID_KEPT : TC_CACHE_INVALID;
}

bool tc_disk_cache_remove(tc_disk_cache *c, const tc_cache_key *key) {
  return tc_disk_cache_remove_why(c, key, NULL, 0);
}

bool tc_disk_cache_remove_why(tc_disk_cache *c, const tc_cache_key *key, char *why, size_t why_cap) {
  if (!*c->dir) return false;
  char path[PATH_MAX];
  entry_path(c, key, path, sizeof path);
  if (unlink(path) == 0) return true;
  if (why && why_cap) snprintf(why, why_cap, "%s", strerror(errno));
  return false;
}

/* ---- writing ---- */
static ssize_t default_write(int fd, const void *buf, size_t n, void *user) {
  (void)user;
  return write(fd, buf, n);
}

static int write_all(tc_cache_write_fn fn, void *user, int fd, const uint8_t *p, size_t n) {
  while (n) {
    ssize_t w = fn(fd, p, n, user);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    if (w == 0) {
      errno = ENOSPC; /* write(2) returning 0 for a regular file means no room */
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd); /* some filesystems refuse fsync on a directory; the rename still stands */
  close(fd);
}

typedef struct file_info {
  char name[ENTRY_NAME_LEN + 1];
  uint64_t size;
  int64_t mtime_ns;
} file_info;

static int by_mtime(const void *a, const void *b) {
  const file_info *x = a, *y = b;
  if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Evict least-recently-used entries beyond the size limit, never `keep`; remove temp files
 * older than TC_DISK_CACHE_TEMP_MAX_AGE_S. Files that vanish meanwhile (another process
 * evicting or clearing) are skipped. */
static void evict(tc_disk_cache *c, const char *keep) {
  DIR *d = opendir(c->dir);
  if (!d) return;
  int dfd = dirfd(d);
  file_info *files = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  int64_t stale_before = now_ns() - (int64_t)TC_DISK_CACHE_TEMP_MAX_AGE_S * 1000000000;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    struct stat st;
    bool entry = is_entry_name(de->d_name, NULL);
    if (!entry && !is_temp_name(de->d_name)) continue;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!entry) {
      if (stat_mtime_ns(&st) < stale_before) (void)unlinkat(dfd, de->d_name, 0);
      continue;
    }
    if (n == cap) {
      size_t ncap = cap ? 2 * cap : 64;
      file_info *nf = realloc(files, ncap * sizeof *nf);
      if (!nf) break; /* evict what we have seen; the next put sees the rest */
      files = nf;
      cap = ncap;
    }
    memcpy(files[n].name, de->d_name, ENTRY_NAME_LEN + 1);
    files[n].size = (uint64_t)st.st_size;
    files[n].mtime_ns = stat_mtime_ns(&st);
    total += files[n].size;
    n++;
  }
  if (total > c->max_bytes && n) {
    qsort(files, n, sizeof *files, by_mtime);
    for (size_t i = 0; i < n && total > c->max_bytes; i++) {
      if (keep && strcmp(files[i].name, keep) == 0) continue;
      if (unlinkat(dfd, files[i].name, 0) == 0 || errno == ENOENT) total -= files[i].size;
    }
  }
  free(files);
  closedir(d);
}

tilec_status tc_disk_cache_put(tc_disk_cache *c, const tc_backend *b, const tc_cache_key *key,
                               const tc_cache_entry *e, tilec_error *err) {
  if (!tc_cache_disk_allowed(b) || !tc_disk_cache_enabled(c)) return TILEC_OK;
  uint8_t *image;
  size_t size;
  tilec_status st = tc_entry_encode(key, e, &image, &size, err);
  if (st != TILEC_OK) return st;
  pthread_mutex_lock(&c->mu);
  tc_cache_write_fn fn = c->write_hook ? c->write_hook : default_write;
  void *user = c->write_hook_user;
  pthread_mutex_unlock(&c->mu);

  char hex[TC_CACHE_KEY_HEX_SIZE], tmp[PATH_MAX], final[PATH_MAX];
  tc_cache_key_hex(key, hex);
  snprintf(final, sizeof final, "%s/%s%s", c->dir, hex, TC_ENTRY_SUFFIX);
  snprintf(tmp, sizeof tmp, "%s/" TC_TEMP_PREFIX "%.16s-XXXXXX", c->dir, hex);
  /* mkstemp in the cache directory itself, so the rename never crosses filesystems. */
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && make_dirs(c->dir) == 0) { /* directory removed under us */
    snprintf(tmp, sizeof tmp, "%s/" TC_TEMP_PREFIX "%.16s-XXXXXX", c->dir, hex);
    fd = mkostemp(tmp, O_CLOEXEC);
  }
  if (fd < 0) {
    write_fault(c, "create a file", errno);
    free(image);
    return TILEC_OK;
  }
  const char *what = NULL;
  if (write_all(fn, user, fd, image, size) != 0) what = "write";
  else if (fsync(fd) != 0) what = "sync";
  if (!what) set_last_use(fd);
  int saved = errno;
  if (close(fd) != 0 && !what) {
    what = "write";
    saved = errno;
  }
  free(image);
  if (what) {
    (void)unlink(tmp);
    write_fault(c, what, saved);
    return TILEC_OK;
  }
  if (rename(tmp, final) != 0) {
    saved = errno;
    (void)unlink(tmp);
    /* ENOENT: a concurrent `cache clear` removed our temp file; that put is simply lost. */
    if (saved != ENOENT) write_fault(c, "rename a file", saved);
    return TILEC_OK;
  }
  fsync_dir(c->dir);
  evict(c, final + strlen(c->dir) + 1);
  return TILEC_OK;
}

/* ---- listing and clearing ---- */
static int by_last_use_desc(const void *a, const void *b) {
  const tc_cache_listing_entry *x = a, *y = b;
  if (x->last_use_ns != y->last_use_ns) return x->last_use_ns > y->last_use_ns ? -1 : 1;
  return strcmp(x->key_hex, y->key_hex);
}

tilec_status tc_disk_cache_list(tc_disk_cache *c, bool with_details, tc_cache_listing *out,
                                tilec_error *err) {
  memset(out, 0, sizeof *out);
  if (!*c->dir) return TILEC_OK;
  DIR *d = opendir(c->dir);
  if (!d) {
    if (errno == ENOENT) return TILEC_OK;
    tc_error(err, TILEC_ERROR_IO, "cannot read the cache directory %s: %s", c->dir, strerror(errno));
    return TILEC_ERROR_IO;
  }
  int dfd = dirfd(d);
  size_t cap = 0;
  struct dirent *de;
  tilec_status st = TILEC_OK;
  while ((de = readdir(d)) != NULL) {
    struct stat sb;
    tc_cache_key key;
    bool entry = is_entry_name(de->d_name, &key);
    if (!entry && !is_temp_name(de->d_name)) continue;
    if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (!entry) {
      out->temp_files++;
      out->temp_bytes += (uint64_t)sb.st_size;
      continue;
    }
    if (out->count == cap) {
      size_t ncap = cap ? 2 * cap : 32;
      tc_cache_listing_entry *ne = realloc(out->entries, ncap * sizeof *ne);
      if (!ne) {
        st = TILEC_ERROR_NOMEM;
        tc_error(err, st, "out of memory listing the cache");
        break;
      }
      out->entries = ne;
      cap = ncap;
    }
    tc_cache_listing_entry *le = &out->entries[out->count++];
    memset(le, 0, sizeof *le);
    tc_cache_key_hex(&key, le->key_hex);
    le->size = (uint64_t)sb.st_size;
    le->last_use_ns = stat_mtime_ns(&sb);
    le->valid = true;
    out->total_bytes += le->size;
    if (with_details) {
      char path[PATH_MAX];
      snprintf(path, sizeof path, "%s/%s", c->dir, de->d_name);
      tc_cache_entry ent;
      struct stat rs;
      bool have;
      read_status r = read_entry(path, &key, false, &ent, &rs, &have, NULL, 0);
      le->valid = r == READ_OK;
      const tc_cache_section *desc = r == READ_OK ? tc_cache_entry_section(&ent, "description") : NULL;
      if (desc) le->description = strndup(desc->data, desc->size);
      tc_cache_entry_release(&ent);
    }
  }
  closedir(d);
  if (out->count) qsort(out->entries, out->count, sizeof *out->entries, by_last_use_desc);
  if (st != TILEC_OK) tc_cache_listing_free(out);
  return st;
}

void tc_cache_listing_free(tc_cache_listing *l) {
  if (!l) return;
  for (size_t i = 0; i < l->count; i++) free(l->entries[i].description);
  free(l->entries);
  memset(l, 0, sizeof *l);
}

tilec_status tc_disk_cache_clear(tc_disk_cache *c, size_t *removed, tilec_error *err) {
  if (removed) *removed = 0;
  if (!*c->dir) return TILEC_OK;
  DIR *d = opendir(c->dir);
  if (!d) {
    if (errno == ENOENT) return TILEC_OK;
    tc_error(err, TILEC_ERROR_IO, "cannot read the cache directory %s: %s", c->dir, strerror(errno));
    return TILEC_ERROR_IO;
  }
  int dfd = dirfd(d);
  struct dirent *de;
  tilec_status st = TILEC_OK;
  while ((de = readdir(d)) != NULL) {
    if (!is_entry_name(de->d_name, NULL) && !is_temp_name(de->d_name)) continue;
    if (unlinkat(dfd, de->d_name, 0) == 0) {
      if (removed) ++*removed;
    } else if (errno != ENOENT && st == TILEC_OK) {
      st = TILEC_ERROR_IO;
      tc_error(err, st, "cannot remove %s/%s: %s", c->dir, de->d_name, strerror(errno));
    }
  }
  closedir(d);
  return st;
}
