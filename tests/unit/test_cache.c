/* test_cache.c: SHA-256, cache keys, the disk cache (round trip, every kind of invalid entry,
 * LRU eviction, disabling, write faults on real read-only and full filesystems) and the
 * in-memory cache. Real files in temp directories; no mocks except where a test says so. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "harness.h"

/* ---- helpers ---- */
static tilec_status fake_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                               size_t *size, tilec_error *err) {
  (void)env, (void)err;
  *size = strlen(src->full_source);
  *artifact = strdup(src->full_source);
  return *artifact ? TILEC_OK : TILEC_ERROR_NOMEM;
}
/* A backend that produces artifact bytes, one whose kernel lives in memory only, and one
 * without a build step. */
static const tc_backend disk_backend = {.target = "test", .name = "disk", .build = fake_build};
static const tc_backend memory_backend = {.target = "test", .name = "mem", .flags = TC_BACKEND_IN_MEMORY, .build = fake_build};
static const tc_backend nobuild_backend = {.target = "test", .name = "nobuild"};

static char g_root[256];

static const char *new_dir(const char *name) {
  static char buf[512];
  if (!g_root[0]) {
    snprintf(g_root, sizeof g_root, "/tmp/tilec-test-cache-XXXXXX");
    if (!mkdtemp(g_root)) abort();
  }
  snprintf(buf, sizeof buf, "%s/%s", g_root, name);
  return buf;
}

static void key_of(const char *s, tc_cache_key *k) {
  tc_cache_key_input in = {.ir_text = s, .target = "test", .backend = "disk"};
  tc_cache_key_compute(&in, k);
}

static char *entry_file(tc_disk_cache *c, const tc_cache_key *k) {
  static char buf[1024];
  char hex[TC_CACHE_KEY_HEX_SIZE];
  tc_cache_key_hex(k, hex);
  snprintf(buf, sizeof buf, "%s/%s.tce", tc_disk_cache_dir(c), hex);
  return buf;
}

static bool exists(const char *p) { return access(p, F_OK) == 0; }

static size_t count_files(const char *dir, const char *prefix) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "ls -A '%s' 2>/dev/null | grep -c '^%s' ", dir, prefix);
  FILE *p = popen(cmd, "r");
  size_t n = 0;
  if (p) {
    if (fscanf(p, "%zu", &n) != 1) n = 0;
    pclose(p);
  }
  return n;
}

/* An entry with an artifact of `size` bytes derived from seed, and two sections. */
typedef struct test_entry {
  uint8_t *artifact;
  tc_cache_entry e;
} test_entry;

static void make_entry(test_entry *t, size_t size, unsigned seed) {
  t->artifact = malloc(size ? size : 1);
  for (size_t i = 0; i < size; i++) t->artifact[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
  memset(&t->e, 0, sizeof t->e);
  t->e.artifact = t->artifact;
  t->e.artifact_size = size;
  t->e.nsections = 2;
  t->e.sections[0] = (tc_cache_section){"params", "A:float16[M,K]\nB:float16[K,N]\n", 30};
  t->e.sections[1] = (tc_cache_section){"description", "gemm M=128", 10};
}

static bool same_entry(const tc_cache_entry *a, const tc_cache_entry *b) {
  if (a->artifact_size != b->artifact_size || memcmp(a->artifact, b->artifact, a->artifact_size))
    return false;
  if (a->nsections != b->nsections) return false;
  for (size_t i = 0; i < a->nsections; i++) {
    const tc_cache_section *x = &a->sections[i], *y = &b->sections[i];
    if (strcmp(x->name, y->name) || x->size != y->size || memcmp(x->data, y->data, x->size)) return false;
  }
  return true;
}

static void unset_cache_env(void) {
  unsetenv("TILEC_CACHE_DIR");
  unsetenv("TILEC_DISABLE_CACHE");
  unsetenv("TILEC_CACHE_MAX_MB");
}

/* ---- SHA-256 (FIPS 180-4 / NIST example vectors) ---- */
static void hex_of(const uint8_t *d, char *out) { tc_hex_encode(d, 32, out); }

TEST(sha256_vectors) {
  struct { const char *msg, *hex; } v[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char hex[65];
  uint8_t d[32];
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
    tc_sha256_digest(v[i].msg, strlen(v[i].msg), d);
    hex_of(d, hex);
    CHECK_STR(hex, v[i].hex);
  }
  /* One million 'a', fed in uneven pieces. */
  static char a[1024];
  memset(a, 'a', sizeof a);
  tc_sha256 s;
  tc_sha256_init(&s);
  size_t left = 1000000, piece = 1;
  while (left) {
    size_t n = piece < left ? piece : left;
    tc_sha256_update(&s, a, n);
    left -= n;
    piece = piece % 997 + 13;
  }
  tc_sha256_final(&s, d);
  hex_of(d, hex);
  CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(sha256_incremental_every_split) {
  uint8_t msg[200], whole[32], part[32];
  for (int i = 0; i < 200; i++) msg[i] = (uint8_t)(i * 37 + 1);
  for (size_t len = 0; len <= 200; len += 1) {
    tc_sha256_digest(msg, len, whole);
    for (size_t cut = 0; cut <= len; cut += 7) {
      tc_sha256 s;
      tc_sha256_init(&s);
      tc_sha256_update(&s, msg, cut);
      tc_sha256_update(&s, msg + cut, len - cut);
      tc_sha256_final(&s, part);
      CHECK(memcmp(whole, part, 32) == 0);
    }
  }
}

/* Both compression paths (CPU SHA instructions where present, portable C) agree. */
TEST(sha256_paths_agree) {
  static uint8_t msg[5000];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof msg; i++) msg[i] = (uint8_t)((x = x * 1103515245 + 12345) >> 16);
  printf("  (CPU SHA instructions %s)\n", tc_sha256_accelerated() ? "in use" : "not available");
  for (size_t len = 0; len < sizeof msg; len += 61) {
    uint8_t a[32], b[32];
    tc_sha256 s;
    tc_sha256_init(&s);
    tc_sha256_update(&s, msg, len);
    tc_sha256_final(&s, a);
    tc_sha256_init_portable(&s);
    tc_sha256_update(&s, msg, len);
    tc_sha256_final(&s, b);
    CHECK(memcmp(a, b, 32) == 0);
  }
}

/* ---- keys ---- */
TEST(key_fields_are_unambiguous) {
  tc_cache_key_builder b;
  tc_cache_key k1, k2, k3, k4;
  tc_cache_key_begin(&b);
  tc_cache_key_str(&b, "x", "ab");
  tc_cache_key_str(&b, "y", "c");
  tc_cache_key_end(&b, &k1);
  tc_cache_key_begin(&b);
  tc_cache_key_str(&b, "x", "a");
  tc_cache_key_str(&b, "y", "bc");
  tc_cache_key_end(&b, &k2);
  CHECK(memcmp(k1.bytes, k2.bytes, 32) != 0);
  tc_cache_key_begin(&b);
  tc_cache_key_str(&b, "x", NULL);
  tc_cache_key_end(&b, &k3);
  tc_cache_key_begin(&b);
  tc_cache_key_str(&b, "x", "");
  tc_cache_key_end(&b, &k4);
  CHECK(memcmp(k3.bytes, k4.bytes, 32) != 0);
}

TEST(key_input_every_field_counts) {
  tc_cache_key_input base = {"0.1.0", "ir", "M=128\n", "cpu", "-O3", "cc", "gcc 12"};
  tc_cache_key k0, k;
  tc_cache_key_compute(&base, &k0);
  for (int i = 0; i < 7; i++) {
    tc_cache_key_input in = base;
    const char **f[7] = {&in.tilec_version, &in.ir_text, &in.params, &in.target,
                         &in.target_options, &in.backend, &in.toolchain_id};
    *f[i] = "changed";
    tc_cache_key_compute(&in, &k);
    EXPECT(memcmp(k.bytes, k0.bytes, 32) != 0);
    *f[i] = NULL; /* absent differs from present too */
    tc_cache_key_compute(&in, &k);
    EXPECT(memcmp(k.bytes, k0.bytes, 32) != 0 || i == 0);
  }
  tc_cache_key_compute(&base, &k);
  CHECK(memcmp(k.bytes, k0.bytes, 32) == 0); /* deterministic */
  /* NULL tilec_version means this tilec's version. */
  tc_cache_key_input v = base;
  v.tilec_version = NULL;
  tc_cache_key_compute(&v, &k);
  CHECK((memcmp(k.bytes, k0.bytes, 32) == 0) == (strcmp(TILEC_VERSION_STRING, "0.1.0") == 0));
  char hex[TC_CACHE_KEY_HEX_SIZE];
  tc_cache_key_hex(&k0, hex);
  CHECK_INT(strlen(hex), 64);
  tc_cache_key back;
  CHECK(tc_cache_key_from_hex(hex, &back));
  CHECK(memcmp(back.bytes, k0.bytes, 32) == 0);
  hex[5] = 'G';
  CHECK(!tc_cache_key_from_hex(hex, &back));
}

/* ---- disk cache ---- */
TEST(round_trip) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("roundtrip"), 0, &err);
  CHECK(c && tc_disk_cache_enabled(c));
  struct stat st;
  CHECK(stat(tc_disk_cache_dir(c), &st) == 0 && (st.st_mode & 0777) == 0700);
  tc_cache_key k;
  key_of("round trip", &k);
  tc_cache_entry got;
  CHECK_INT(tc_disk_cache_get(c, &disk_backend, &k, &got, NULL, 0), TC_CACHE_ABSENT);
  test_entry t;
  make_entry(&t, 50000, 1);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err), TILEC_OK);
  CHECK(exists(entry_file(c, &k)));
  CHECK_INT(count_files(tc_disk_cache_dir(c), ".tmp-"), 0);
  CHECK_INT(tc_disk_cache_get(c, &disk_backend, &k, &got, NULL, 0), TC_CACHE_HIT);
  CHECK(same_entry(&got, &t.e));
  const tc_cache_section *p = tc_cache_entry_section(&got, "params");
  CHECK(p && ((const char *)p->data)[p->size] == 0); /* usable as a C string */
  CHECK(tc_cache_entry_section(&got, "nope") == NULL);
  tc_cache_entry_release(&got);
  /* An empty artifact and no sections round-trips too. */
  tc_cache_entry empty = {0};
  key_of("empty", &k);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &empty, &err), TILEC_OK);
  CHECK_INT(tc_disk_cache_get(c, &disk_backend, &k, &got, NULL, 0), TC_CACHE_HIT);
  CHECK_INT(got.artifact_size, 0);
  CHECK_INT(got.nsections, 0);
  tc_cache_entry_release(&got);
  free(t.artifact);
  CHECK(tc_disk_cache_take_warning(c) == NULL);
  tc_disk_cache_close(c);
}

TEST(bad_entries_rejected_by_put) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("badput"), 0, &err);
  tc_cache_key k;
  key_of("bad", &k);
  tc_cache_entry e = {0};
  e.nsections = 1;
  e.sections[0] = (tc_cache_section){"artifact", "x", 1};
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &e, &err), TILEC_ERROR_USAGE);
  CHECK_STR(err.message, "invalid cache section name 'artifact' (1-63 characters of A-Z a-z 0-9 _ . -, not 'artifact')");
  tc_error_clear(&err);
  e.nsections = 2;
  e.sections[0] = (tc_cache_section){"src", "x", 1};
  e.sections[1] = (tc_cache_section){"src", "y", 1};
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &e, &err), TILEC_ERROR_USAGE);
  CHECK_STR(err.message, "duplicate cache section name 'src'");
  CHECK(!exists(entry_file(c, &k)));
  tc_disk_cache_close(c);
}

/* Flip a byte of the entry file at `off` (negative: from the end). */
static void poke(const char *path, long off, uint8_t x) {
  int fd = open(path, O_RDWR);
  off_t at = off >= 0 ? off : lseek(fd, 0, SEEK_END) + off;
  uint8_t b;
  if (pread(fd, &b, 1, at) != 1) abort();
  b ^= x;
  if (pwrite(fd, &b, 1, at) != 1) abort();
  close(fd);
}

/* Damage an entry, expect an invalid miss with `reason` as the start of why, the file gone,
 * and a put rebuilding it. */
static int damaged_case(tc_disk_cache *c, const char *name, void (*damage)(const char *path),
                        const char *reason) {
  tilec_error err = {0};
  tc_cache_key k;
  key_of(name, &k);
  test_entry t;
  make_entry(&t, 4096, 7);
  int ok = tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err) == TILEC_OK;
  const char *path = entry_file(c, &k);
  damage(path);
  tc_cache_entry got;
  char why[256];
  tc_cache_result r = tc_disk_cache_get(c, &disk_backend, &k, &got, why, sizeof why);
  if (r != TC_CACHE_INVALID || strncmp(why, reason, strlen(reason)) != 0) {
    printf("  %s: got %s '%s', expected invalid '%s'\n", name, tc_cache_result_name(r), why, reason);
    ok = 0;
  }
  if (exists(path)) ok = 0;                                              /* removed */
  if (tc_disk_cache_get(c, &disk_backend, &k, &got, NULL, 0) != TC_CACHE_ABSENT) ok = 0;
  if (tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err) != TILEC_OK) ok = 0; /* rebuilt */
  if (tc_disk_cache_get(c, &disk_backend, &k, &got, NULL, 0) != TC_CACHE_HIT || !same_entry(&got, &t.e)) ok = 0;
  tc_cache_entry_release(&got);
  free(t.artifact);
  return ok;
}

static void flip_payload(const char *p) { poke(p, 2000, 0x01); }
static void flip_last(const char *p) { poke(p, -1, 0x80); }
static void flip_reserved(const char *p) { poke(p, 100, 0x04); }
static void flip_checksum(const char *p) { poke(p, 70, 0x10); }
static void flip_magic(const char *p) { poke(p, 0, 0x20); }
static void bump_version(const char *p) { poke(p, 8, 0x03); }
static void truncate_half(const char *p) {
  struct stat st;
  stat(p, &st);
  if (truncate(p, st.st_size / 2)) abort();
}
static void truncate_header(const char *p) {
  if (truncate(p, 40)) abort();
}
static void append_byte(const char *p) {
  FILE *f = fopen(p, "ab");
  fputc(0, f);
  fclose(f);
}

TEST(corrupted_entries_are_misses_and_rebuilt) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("corrupt"), 0, &err);
  CHECK(c);
  EXPECT(damaged_case(c, "payload", flip_payload, "checksum mismatch"));
  EXPECT(damaged_case(c, "last", flip_last, "checksum mismatch"));
  EXPECT(damaged_case(c, "reserved", flip_reserved, "checksum mismatch"));
  EXPECT(damaged_case(c, "checksum", flip_checksum, "checksum mismatch"));
  EXPECT(damaged_case(c, "magic", flip_magic, "bad magic"));
  EXPECT(damaged_case(c, "version", bump_version, "format version 2 (this tilec reads 1)"));
  EXPECT(damaged_case(c, "trunc", truncate_half, "truncated: header says"));
  EXPECT(damaged_case(c, "trunchdr", truncate_header, "truncated: 40 bytes"));
  EXPECT(damaged_case(c, "append", append_byte, "truncated: header says"));
  tc_disk_cache_close(c);
}

TEST(key_mismatch_is_a_miss) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("keymismatch"), 0, &err);
  tc_cache_key a, b;
  key_of("kernel a", &a);
  key_of("kernel b", &b);
  test_entry t;
  make_entry(&t, 1000, 3);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &a, &t.e, &err), TILEC_OK);
  char pa[1024];
  snprintf(pa, sizeof pa, "%s", entry_file(c, &a));
  CHECK(link(pa, entry_file(c, &b)) == 0); /* a valid entry under the wrong name */
  tc_cache_entry got;
  char why[256];
  CHECK_INT(tc_disk_cache_get(c, &disk_backend, &b, &got, why, sizeof why), TC_CACHE_INVALID);
  CHECK_STR(why, "key mismatch");
  CHECK(!exists(entry_file(c, &b)));
  CHECK_INT(tc_disk_cache_get(c, &disk_backend, &a, &got, NULL, 0), TC_CACHE_HIT);
  tc_cache_entry_release(&got);
  free(t.artifact);
  tc_disk_cache_close(c);
}

TEST(lru_eviction_order) {
  unset_cache_env();
  setenv("TILEC_CACHE_MAX_MB", "1", 1);
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("lru"), 0, &err);
  unsetenv("TILEC_CACHE_MAX_MB");
  CHECK(c);
  CHECK_INT(tc_disk_cache_max_bytes(c), 1 << 20);
  tc_cache_key k[5];
  const char *names[5] = {"A", "B", "C", "D", "E"};
  test_entry t;
  make_entry(&t, 300000, 9); /* four of these exceed 1 MiB */
  for (int i = 0; i < 5; i++) key_of(names[i], &k[i]);
  for (int i = 0; i < 3; i++) CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k[i], &t.e, &err), TILEC_OK);
  tc_cache_entry got;
  CHECK_INT(tc_disk_cache_get(c, &disk_backend, &k[0], &got, NULL, 0), TC_CACHE_HIT); /* A used last */
  tc_cache_entry_release(&got);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k[3], &t.e, &err), TILEC_OK);
  CHECK(exists(entry_file(c, &k[0])));
  CHECK(!exists(entry_file(c, &k[1]))); /* B: least recently used */
  CHECK(exists(entry_file(c, &k[2])));
  CHECK(exists(entry_file(c, &k[3])));
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k[4], &t.e, &err), TILEC_OK);
  CHECK(!exists(entry_file(c, &k[2]))); /* then C */
  CHECK(exists(entry_file(c, &k[0])));
  CHECK(exists(entry_file(c, &k[3])));
  CHECK(exists(entry_file(c, &k[4])));
  tc_cache_listing l;
  CHECK_INT(tc_disk_cache_list(c, false, &l, &err), TILEC_OK);
  CHECK_INT(l.count, 3);
  CHECK(l.total_bytes <= 1u << 20);
  tc_cache_listing_free(&l);
  free(t.artifact);
  tc_disk_cache_close(c);
}

TEST(oversized_entry_is_kept_alone) {
  unset_cache_env();
  setenv("TILEC_CACHE_MAX_MB", "1", 1);
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("oversized"), 0, &err);
  unsetenv("TILEC_CACHE_MAX_MB");
  tc_cache_key a, b;
  key_of("small", &a);
  key_of("huge", &b);
  test_entry s, h;
  make_entry(&s, 1000, 1);
  make_entry(&h, 1500000, 2);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &a, &s.e, &err), TILEC_OK);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &b, &h.e, &err), TILEC_OK);
  CHECK(!exists(entry_file(c, &a)));
  CHECK(exists(entry_file(c, &b))); /* the entry just written is never evicted by its own put */
  free(s.artifact);
  free(h.artifact);
  tc_disk_cache_close(c);
}

TEST(max_mb_malformed_warns) {
  unset_cache_env();
  setenv("TILEC_CACHE_MAX_MB", "12x", 1);
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("maxmb"), 0, &err);
  unsetenv("TILEC_CACHE_MAX_MB");
  CHECK(c && tc_disk_cache_enabled(c));
  CHECK_INT(tc_disk_cache_max_bytes(c), (uint64_t)TC_DISK_CACHE_DEFAULT_MAX_MB << 20);
  char *w = tc_disk_cache_take_warning(c);
  CHECK_STR(w, "TILEC_CACHE_MAX_MB='12x' is not a positive integer; using 1024");
  free(w);
  tc_disk_cache_close(c);
}

TEST(disabled_by_env_and_flag) {
  unset_cache_env();
  tilec_error err = {0};
  const char *dir = new_dir("disabled");
  tc_cache_key k;
  key_of("off", &k);
  test_entry t;
  make_entry(&t, 100, 1);
  for (int mode = 0; mode < 3; mode++) {
    if (mode == 0) setenv("TILEC_DISABLE_CACHE", "1", 1);
    if (mode == 1) setenv("TILEC_DISABLE_CACHE", "yes", 1);
    tc_disk_cache *c = tc_disk_cache_open(dir, mode == 2 ? TC_DISK_CACHE_DISABLE : 0, &err);
    unsetenv("TILEC_DISABLE_CACHE");
    CHECK(c && !tc_disk_cache_enabled(c));
    CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err), TILEC_OK);
    tc_cache_entry got;
    CHECK_INT(tc_disk_cache_get(c, &disk_backend, &k, &got, NULL, 0), TC_CACHE_OFF);
    CHECK(tc_disk_cache_take_warning(c) == NULL); /* asked for: no warning */
    tc_disk_cache_close(c);
    CHECK(!exists(dir)); /* a disabled cache creates nothing */
  }
  setenv("TILEC_DISABLE_CACHE", "0", 1); /* "0" means enabled */
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  unsetenv("TILEC_DISABLE_CACHE");
  CHECK(c && tc_disk_cache_enabled(c));
  tc_disk_cache_close(c);
  free(t.artifact);
}

TEST(directory_resolution) {
  unset_cache_env();
  const char *saved_home = getenv("HOME"), *saved_xdg = getenv("XDG_CACHE_HOME");
  char home[600], xdg[600], env[600];
  snprintf(home, sizeof home, "%s", new_dir("home"));
  snprintf(xdg, sizeof xdg, "%s", new_dir("xdg"));
  snprintf(env, sizeof env, "%s", new_dir("envdir"));
  char *sh = saved_home ? strdup(saved_home) : NULL, *sx = saved_xdg ? strdup(saved_xdg) : NULL;
  tilec_error err = {0};
  char want[700];
  setenv("HOME", home, 1);
  unsetenv("XDG_CACHE_HOME");
  tc_disk_cache *c = tc_disk_cache_open(NULL, 0, &err);
  snprintf(want, sizeof want, "%s/.cache/tilec", home);
  EXPECT(c && strcmp(tc_disk_cache_dir(c), want) == 0 && exists(want));
  tc_disk_cache_close(c);
  setenv("XDG_CACHE_HOME", xdg, 1);
  c = tc_disk_cache_open(NULL, 0, &err);
  snprintf(want, sizeof want, "%s/tilec", xdg);
  EXPECT(c && strcmp(tc_disk_cache_dir(c), want) == 0 && exists(want));
  tc_disk_cache_close(c);
  setenv("TILEC_CACHE_DIR", env, 1);
  c = tc_disk_cache_open(NULL, 0, &err);
  EXPECT(c && strcmp(tc_disk_cache_dir(c), env) == 0 && exists(env));
  tc_disk_cache_close(c);
  snprintf(want, sizeof want, "%s/explicit/", env);
  c = tc_disk_cache_open(want, 0, &err); /* explicit beats the environment; trailing / dropped */
  want[strlen(want) - 1] = 0;
  EXPECT(c && strcmp(tc_disk_cache_dir(c), want) == 0 && exists(want));
  tc_disk_cache_close(c);
  unset_cache_env();
  if (sh) setenv("HOME", sh, 1); else unsetenv("HOME");
  if (sx) setenv("XDG_CACHE_HOME", sx, 1); else unsetenv("XDG_CACHE_HOME");
  free(sh);
  free(sx);
}

TEST(directory_under_a_file_disables) {
  unset_cache_env();
  const char *file = new_dir("plainfile");
  char path[700];
  snprintf(path, sizeof path, "%s", file);
  FILE *f = fopen(path, "w");
  CHECK(f);
  fclose(f);
  strcat(path, "/cache");
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(path, 0, &err);
  CHECK(c && !tc_disk_cache_enabled(c));
  char *w = tc_disk_cache_take_warning(c);
  char want[900];
  snprintf(want, sizeof want, "disk cache disabled: cannot create %s: Not a directory", path);
  CHECK_STR(w, want);
  free(w);
  CHECK(tc_disk_cache_take_warning(c) == NULL); /* taken once */
  tc_cache_key k;
  key_of("x", &k);
  test_entry t;
  make_entry(&t, 10, 1);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err), TILEC_OK);
  free(t.artifact);
  tc_disk_cache_close(c);
}

/* Entries are loaded as code: a directory others can write to, or another user's, is refused. */
TEST(directory_others_can_write_disables) {
  unset_cache_env();
  char dir[700];
  snprintf(dir, sizeof dir, "%s", new_dir("shared"));
  CHECK(mkdir(dir, 0700) == 0);
  CHECK(chmod(dir, 0777) == 0);
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  CHECK(c && !tc_disk_cache_enabled(c));
  char *w = tc_disk_cache_take_warning(c);
  char want[900];
  snprintf(want, sizeof want, "disk cache disabled: %s is writable by other users (chmod 700 it)", dir);
  CHECK_STR(w, want);
  free(w);
  tc_disk_cache_close(c);
  CHECK(chmod(dir, 0750) == 0); /* group read is fine */
  c = tc_disk_cache_open(dir, 0, &err);
  CHECK(c && tc_disk_cache_enabled(c));
  tc_disk_cache_close(c);
  if (geteuid() == 0) { /* root can hand the directory to someone else */
    CHECK(chown(dir, 65534, 65534) == 0);
    c = tc_disk_cache_open(dir, 0, &err);
    CHECK(c && !tc_disk_cache_enabled(c));
    w = tc_disk_cache_take_warning(c);
    snprintf(want, sizeof want, "disk cache disabled: %s belongs to another user (uid 65534)", dir);
    CHECK_STR(w, want);
    free(w);
    tc_disk_cache_close(c);
  }
}

TEST(directory_path_too_long_disables) {
  unset_cache_env();
  static char path[4100];
  strcpy(path, "/tmp/");
  while (strlen(path) < 4030) strcat(path, "abcdefghij/");
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(path, 0, &err);
  CHECK(c && !tc_disk_cache_enabled(c));
  char *w = tc_disk_cache_take_warning(c);
  CHECK_STR(w, "disk cache disabled: the cache directory path is too long");
  free(w);
  tc_disk_cache_close(c);
}

/* Put into dir and report (in the exit status) whether the put behaved as on a faulty disk:
 * TILEC_OK, cache switched off, exactly one warning equal to `want`, no file left behind. */
static int faulty_put_child(const char *dir, size_t size, const char *want) {
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  if (!c) return 10;
  if (!tc_disk_cache_enabled(c)) return 11;
  tc_cache_key k;
  key_of("faulty", &k);
  test_entry t;
  make_entry(&t, size, 4);
  if (tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err) != TILEC_OK) return 12;
  if (tc_disk_cache_enabled(c)) return 13;
  char *w = tc_disk_cache_take_warning(c);
  if (!w || strcmp(w, want) != 0) {
    printf("  warning: %s\n  expected: %s\n", w ? w : "(none)", want);
    return 14;
  }
  free(w);
  if (tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err) != TILEC_OK) return 15;
  if (tc_disk_cache_take_warning(c) != NULL) return 16; /* one warning only */
  if (count_files(dir, ".tmp-") || count_files(dir, "[0-9a-f]")) return 17;
  free(t.artifact);
  tc_disk_cache_close(c);
  return 0;
}

/* Run fn in a child with its own mount namespace (root only). Returns the child's status, or
 * -1 when namespaces are not available. */
static int in_mount_ns(int (*fn)(const char *dir), const char *dir) {
  pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(99);
    fflush(stdout);
    _exit(fn(dir));
  }
  int status;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return 98;
  return WEXITSTATUS(status) == 99 ? -1 : WEXITSTATUS(status);
}

static int readonly_child(const char *dir) {
  if (mount(dir, dir, NULL, MS_BIND, NULL) != 0) return 99;
  if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) return 99;
  char want[900];
  snprintf(want, sizeof want, "disk cache disabled: cannot create a file in %s: Read-only file system", dir);
  return faulty_put_child(dir, 1000, want);
}

static int full_child(const char *dir) {
  if (mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700") != 0) return 99;
  char want[900];
  snprintf(want, sizeof want, "disk cache disabled: cannot write in %s: No space left on device", dir);
  return faulty_put_child(dir, 200000, want);
}

static int g_inject_errno;
static ssize_t inject_write(int fd, const void *buf, size_t n, void *user) {
  (void)fd, (void)buf, (void)n, (void)user;
  errno = g_inject_errno;
  return -1;
}

/* The fault path with the failure injected through the test-only write hook. */
static int injected_fault_child(const char *dir, int e, const char *text) {
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  if (!c) return 10;
  g_inject_errno = e;
  tc_disk_cache_set_write_hook(c, inject_write, NULL);
  tc_cache_key k;
  key_of("injected", &k);
  test_entry t;
  make_entry(&t, 1000, 4);
  int rc = 0;
  if (tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err) != TILEC_OK) rc = 12;
  else if (tc_disk_cache_enabled(c)) rc = 13;
  char *w = tc_disk_cache_take_warning(c);
  char want[900];
  snprintf(want, sizeof want, "disk cache disabled: cannot write in %s: %s", dir, text);
  if (!rc && (!w || strcmp(w, want) != 0)) rc = 14;
  if (!rc && (count_files(dir, ".tmp-") || count_files(dir, "[0-9a-f]"))) rc = 17;
  free(w);
  free(t.artifact);
  tc_disk_cache_close(c);
  return rc;
}

TEST(readonly_directory) {
  unset_cache_env();
  char dir[700];
  snprintf(dir, sizeof dir, "%s", new_dir("readonly"));
  CHECK(mkdir(dir, 0700) == 0);
  int r;
  if (geteuid() == 0) {
    r = in_mount_ns(readonly_child, dir);
    if (r >= 0) printf("  (read-only bind mount in a private mount namespace)\n");
    if (r < 0) { /* root without mount namespaces: permissions do not stop root */
      printf("  (no mount namespace: EROFS injected through the write hook instead)\n");
      r = injected_fault_child(dir, EROFS, "Read-only file system");
    }
  } else { /* not root: permissions do stop writes */
    chmod(dir, 0500);
    char want[900];
    snprintf(want, sizeof want, "disk cache disabled: cannot create a file in %s: Permission denied", dir);
    pid_t pid = fork();
    if (pid == 0) _exit(faulty_put_child(dir, 1000, want));
    int status;
    waitpid(pid, &status, 0);
    r = WIFEXITED(status) ? WEXITSTATUS(status) : 98;
    chmod(dir, 0700);
    printf("  (chmod 0500 as a non-root user)\n");
  }
  CHECK_INT(r, 0);
}

/* A damaged entry in a directory that became read-only: the lookup says it is invalid and was NOT
 * removed (and why), and the file is indeed still there. */
static int damaged_readonly_child(const char *dir) {
  if (geteuid() == 0) {
    if (mount(dir, dir, NULL, MS_BIND, NULL) != 0) return 99;
    if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) return 99;
  }
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  if (!c) return 10;
  tc_cache_key k;
  key_of("damaged-readonly", &k);
  tc_cache_entry got;
  char why[256];
  tc_cache_result r = tc_disk_cache_get(c, &disk_backend, &k, &got, why, sizeof why);
  const char *want = geteuid() == 0 ? "checksum mismatch; removing it failed: Read-only file system"
                                    : "checksum mismatch; removing it failed: Permission denied";
  int rc = r != TC_CACHE_INVALID_KEPT ? 11 : strcmp(why, want) != 0 ? 12 : !exists(entry_file(c, &k)) ? 13 : 0;
  if (rc) printf("  result %s, why '%s'\n", tc_cache_result_name(r), why);
  tc_disk_cache_close(c);
  return rc;
}

TEST(damaged_entry_in_a_readonly_directory_is_kept_and_said_so) {
  unset_cache_env();
  char dir[700];
  snprintf(dir, sizeof dir, "%s", new_dir("damaged-readonly"));
  CHECK(mkdir(dir, 0700) == 0);
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(dir, 0, &err);
  CHECK(c != NULL);
  tc_cache_key k;
  key_of("damaged-readonly", &k);
  test_entry t;
  make_entry(&t, 4000, 7);
  CHECK(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err) == TILEC_OK);
  flip_payload(entry_file(c, &k));
  tc_disk_cache_close(c);
  free(t.artifact);
  int r;
  if (geteuid() == 0) {
    r = in_mount_ns(damaged_readonly_child, dir);
    if (r < 0) {
      printf("  (no mount namespace: skipped)\n");
      return;
    }
  } else {
    chmod(dir, 0500);
    r = damaged_readonly_child(dir);
    chmod(dir, 0700);
  }
  CHECK_INT(r, 0);
}

TEST(full_disk) {
  unset_cache_env();
  char dir[700];
  snprintf(dir, sizeof dir, "%s", new_dir("full"));
  CHECK(mkdir(dir, 0700) == 0);
  int r = geteuid() == 0 ? in_mount_ns(full_child, dir) : -1;
  if (r < 0) {
    printf("  (no mount namespace: ENOSPC injected through the write hook instead)\n");
    r = injected_fault_child(dir, ENOSPC, "No space left on device");
  } else {
    printf("  (64 KiB tmpfs in a private mount namespace)\n");
  }
  CHECK_INT(r, 0);
}

/* Injected write failure (test hook): the fault path without needing root. */
static ssize_t failing_write(int fd, const void *buf, size_t n, void *user) {
  int *calls = user;
  if ((*calls)++ == 0) return write(fd, buf, n < 100 ? n : 100); /* a partial write first */
  errno = EDQUOT;
  return -1;
}

TEST(write_fault_hook) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("hook"), 0, &err);
  int calls = 0;
  tc_disk_cache_set_write_hook(c, failing_write, &calls);
  tc_cache_key k;
  key_of("hook", &k);
  test_entry t;
  make_entry(&t, 5000, 1);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err), TILEC_OK);
  CHECK_INT(calls, 2);
  CHECK(!tc_disk_cache_enabled(c));
  char *w = tc_disk_cache_take_warning(c);
  char want[900];
  snprintf(want, sizeof want, "disk cache disabled: cannot write in %s: Disk quota exceeded", tc_disk_cache_dir(c));
  CHECK_STR(w, want);
  free(w);
  CHECK_INT(count_files(tc_disk_cache_dir(c), "."), 0); /* the temp file is gone */
  CHECK(!exists(entry_file(c, &k)));
  free(t.artifact);
  tc_disk_cache_close(c);
}

TEST(in_memory_backend_skips_disk) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("inmem"), 0, &err);
  CHECK(tc_cache_disk_allowed(&disk_backend));
  CHECK(!tc_cache_disk_allowed(&memory_backend));
  CHECK(!tc_cache_disk_allowed(&nobuild_backend));
  CHECK(!tc_cache_disk_allowed(NULL));
  tc_cache_key k;
  key_of("inmem", &k);
  test_entry t;
  make_entry(&t, 100, 1);
  CHECK_INT(tc_disk_cache_put(c, &memory_backend, &k, &t.e, &err), TILEC_OK);
  CHECK_INT(tc_disk_cache_put(c, &nobuild_backend, &k, &t.e, &err), TILEC_OK);
  CHECK_INT(count_files(tc_disk_cache_dir(c), "."), 0);
  CHECK_INT(count_files(tc_disk_cache_dir(c), "[0-9a-f]"), 0);
  /* Even with a file present under the key, such a backend never reads it. */
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err), TILEC_OK);
  tc_cache_entry got;
  CHECK_INT(tc_disk_cache_get(c, &memory_backend, &k, &got, NULL, 0), TC_CACHE_OFF);
  CHECK_INT(tc_disk_cache_get(c, &nobuild_backend, &k, &got, NULL, 0), TC_CACHE_OFF);
  CHECK(got.artifact == NULL && got.storage == NULL);
  CHECK(tc_disk_cache_enabled(c));
  free(t.artifact);
  tc_disk_cache_close(c);
}

TEST(listing_and_clear) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("list"), 0, &err);
  const char *dir = tc_disk_cache_dir(c);
  tc_cache_key k1, k2;
  key_of("list one", &k1);
  key_of("list two", &k2);
  test_entry t;
  make_entry(&t, 2000, 1);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k1, &t.e, &err), TILEC_OK);
  t.e.nsections = 1; /* no description */
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k2, &t.e, &err), TILEC_OK);
  char p[1024];
  snprintf(p, sizeof p, "%s/.tmp-0123456789abcdef-AbCdEf", dir);
  FILE *f = fopen(p, "w");
  fputs("partial", f);
  fclose(f);
  snprintf(p, sizeof p, "%s/notes.txt", dir);
  f = fopen(p, "w");
  fputs("not ours", f);
  fclose(f);
  tc_cache_listing l;
  CHECK_INT(tc_disk_cache_list(c, true, &l, &err), TILEC_OK);
  CHECK_INT(l.count, 2);
  CHECK_INT(l.temp_files, 1);
  CHECK_INT(l.temp_bytes, 7);
  char h1[65], h2[65];
  tc_cache_key_hex(&k1, h1);
  tc_cache_key_hex(&k2, h2);
  CHECK_STR(l.entries[0].key_hex, h2); /* most recent first */
  CHECK_STR(l.entries[1].key_hex, h1);
  CHECK(l.entries[0].description == NULL);
  CHECK_STR(l.entries[1].description, "gemm M=128");
  CHECK(l.entries[0].valid && l.entries[1].valid);
  CHECK_INT(l.total_bytes, l.entries[0].size + l.entries[1].size);
  CHECK(l.entries[1].size > 2000);
  tc_cache_listing_free(&l);
  poke(entry_file(c, &k1), 500, 1);
  CHECK_INT(tc_disk_cache_list(c, true, &l, &err), TILEC_OK);
  CHECK_INT(l.count, 2);
  const tc_cache_listing_entry *e1 = strcmp(l.entries[0].key_hex, h1) == 0 ? &l.entries[0] : &l.entries[1];
  CHECK_STR(e1->key_hex, h1);
  CHECK(!e1->valid && e1->description == NULL); /* damaged: listed, marked invalid */
  tc_cache_listing_free(&l);
  size_t removed = 0;
  CHECK_INT(tc_disk_cache_clear(c, &removed, &err), TILEC_OK);
  CHECK_INT(removed, 3);
  CHECK(exists(p)); /* foreign files stay */
  CHECK_INT(tc_disk_cache_list(c, false, &l, &err), TILEC_OK);
  CHECK_INT(l.count, 0);
  CHECK_INT(l.temp_files, 0);
  tc_cache_listing_free(&l);
  free(t.artifact);
  tc_disk_cache_close(c);
}

TEST(stale_temp_files_cleaned) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("stale"), 0, &err);
  char old[1024], fresh[1024];
  snprintf(old, sizeof old, "%s/.tmp-aaaaaaaaaaaaaaaa-OLDOLD", tc_disk_cache_dir(c));
  snprintf(fresh, sizeof fresh, "%s/.tmp-bbbbbbbbbbbbbbbb-NEWNEW", tc_disk_cache_dir(c));
  fclose(fopen(old, "w"));
  fclose(fopen(fresh, "w"));
  struct timespec ts[2] = {{time(NULL) - 2 * 3600, 0}, {time(NULL) - 2 * 3600, 0}};
  CHECK(utimensat(AT_FDCWD, old, ts, 0) == 0);
  tc_cache_key k;
  key_of("stale", &k);
  test_entry t;
  make_entry(&t, 10, 1);
  CHECK_INT(tc_disk_cache_put(c, &disk_backend, &k, &t.e, &err), TILEC_OK);
  CHECK(!exists(old));
  CHECK(exists(fresh)); /* may be a write in progress in another process */
  free(t.artifact);
  tc_disk_cache_close(c);
}

/* Threads of one process putting and getting the same keys: never an invalid read. */
typedef struct thread_arg {
  tc_disk_cache *c;
  int id, bad;
} thread_arg;

static void *put_get_thread(void *p) {
  thread_arg *a = p;
  test_entry t;
  make_entry(&t, 20000, 5);
  for (int i = 0; i < 40; i++) {
    tc_cache_key k;
    char name[32];
    snprintf(name, sizeof name, "threaded %d", i % 4);
    key_of(name, &k);
    tilec_error err = {0};
    if (tc_disk_cache_put(a->c, &disk_backend, &k, &t.e, &err) != TILEC_OK) a->bad++;
    tc_cache_entry got;
    tc_cache_result r = tc_disk_cache_get(a->c, &disk_backend, &k, &got, NULL, 0);
    if (r == TC_CACHE_INVALID || (r == TC_CACHE_HIT && !same_entry(&got, &t.e))) a->bad++;
    tc_cache_entry_release(&got);
  }
  free(t.artifact);
  return NULL;
}

TEST(threads_share_one_cache) {
  unset_cache_env();
  tilec_error err = {0};
  tc_disk_cache *c = tc_disk_cache_open(new_dir("threads"), 0, &err);
  pthread_t th[8];
  thread_arg args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (thread_arg){c, i, 0};
    pthread_create(&th[i], NULL, put_get_thread, &args[i]);
  }
  int bad = 0;
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    bad += args[i].bad;
  }
  CHECK_INT(bad, 0);
  tc_cache_listing l;
  CHECK_INT(tc_disk_cache_list(c, true, &l, &err), TILEC_OK);
  CHECK_INT(l.count, 4);
  CHECK_INT(l.temp_files, 0);
  for (size_t i = 0; i < l.count; i++) CHECK(l.entries[i].valid);
  tc_cache_listing_free(&l);
  CHECK(tc_disk_cache_enabled(c));
  tc_disk_cache_close(c);
}

/* ---- in-memory cache ---- */
typedef struct obj {
  atomic_int refs;
  int id;
} obj;
static atomic_int g_live;
static void obj_retain(void *p) { atomic_fetch_add(&((obj *)p)->refs, 1); }
static void obj_release(void *p) {
  obj *o = p;
  if (atomic_fetch_sub(&o->refs, 1) == 1) {
    atomic_fetch_sub(&g_live, 1);
    free(o);
  }
}
static obj *obj_new(int id) {
  obj *o = calloc(1, sizeof *o);
  atomic_init(&o->refs, 1);
  o->id = id;
  atomic_fetch_add(&g_live, 1);
  return o;
}

TEST(mem_cache_basics) {
  atomic_store(&g_live, 0);
  tc_mem_cache *m = tc_mem_cache_create(obj_retain, obj_release, 0);
  CHECK(m);
  tc_cache_key a, b;
  key_of("mem a", &a);
  key_of("mem b", &b);
  CHECK(tc_mem_cache_get(m, &a) == NULL);
  obj *o1 = obj_new(1);
  CHECK(tc_mem_cache_insert(m, &a, o1) == o1);
  CHECK_INT(atomic_load(&o1->refs), 2);
  obj *o2 = obj_new(2); /* a second compile of the same key, finished later */
  obj *use = tc_mem_cache_insert(m, &a, o2);
  CHECK(use == o1);
  CHECK_INT(atomic_load(&o1->refs), 3);
  obj_release(o2);
  obj_release(use);
  obj *g = tc_mem_cache_get(m, &a);
  CHECK(g == o1 && atomic_load(&o1->refs) == 3);
  obj_release(g);
  CHECK(tc_mem_cache_get(m, &b) == NULL);
  CHECK_INT(tc_mem_cache_count(m), 1);
  obj_release(o1); /* the caller's own reference; the cache keeps it alive */
  CHECK_INT(atomic_load(&g_live), 1);
  CHECK(tc_mem_cache_remove(m, &a));
  CHECK(!tc_mem_cache_remove(m, &a));
  CHECK_INT(atomic_load(&g_live), 0);
  tc_mem_cache_destroy(m);
}

TEST(mem_cache_lru_limit) {
  atomic_store(&g_live, 0);
  tc_mem_cache *m = tc_mem_cache_create(obj_retain, obj_release, 3);
  tc_cache_key k[5];
  obj *o[5];
  for (int i = 0; i < 5; i++) {
    char name[16];
    snprintf(name, sizeof name, "lru %d", i);
    key_of(name, &k[i]);
  }
  for (int i = 0; i < 3; i++) {
    o[i] = obj_new(i);
    tc_mem_cache_insert(m, &k[i], o[i]);
    obj_release(o[i]);
  }
  obj_release(tc_mem_cache_get(m, &k[0])); /* 0 used most recently */
  o[3] = obj_new(3);
  tc_mem_cache_insert(m, &k[3], o[3]);
  obj_release(o[3]);
  CHECK_INT(tc_mem_cache_count(m), 3);
  void *g;
  CHECK((g = tc_mem_cache_get(m, &k[1])) == NULL); /* evicted and released */
  CHECK_INT(atomic_load(&g_live), 3);
  CHECK((g = tc_mem_cache_get(m, &k[0])) != NULL);
  obj_release(g);
  tc_mem_cache_clear(m);
  CHECK_INT(tc_mem_cache_count(m), 0);
  CHECK_INT(atomic_load(&g_live), 0);
  tc_mem_cache_destroy(m);
}

static tc_mem_cache *g_mem;
static void *mem_thread(void *p) {
  int id = (int)(intptr_t)p;
  for (int i = 0; i < 2000; i++) {
    tc_cache_key k;
    char name[16];
    snprintf(name, sizeof name, "t%d", (i * 7 + id) % 50);
    key_of(name, &k);
    obj *o = tc_mem_cache_get(g_mem, &k);
    if (!o) {
      obj *mine = obj_new(i);
      o = tc_mem_cache_insert(g_mem, &k, mine);
      if (o != mine) obj_release(mine);
    }
    obj_release(o);
  }
  return NULL;
}

TEST(mem_cache_threads) {
  atomic_store(&g_live, 0);
  g_mem = tc_mem_cache_create(obj_retain, obj_release, 32);
  pthread_t th[8];
  for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, mem_thread, (void *)(intptr_t)i);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  CHECK(tc_mem_cache_count(g_mem) <= 32);
  CHECK_INT(atomic_load(&g_live), (int)tc_mem_cache_count(g_mem));
  tc_mem_cache_destroy(g_mem);
  CHECK_INT(atomic_load(&g_live), 0);
}

int main(void) {
  RUN(sha256_vectors);
  RUN(sha256_incremental_every_split);
  RUN(sha256_paths_agree);
  RUN(key_fields_are_unambiguous);
  RUN(key_input_every_field_counts);
  RUN(round_trip);
  RUN(bad_entries_rejected_by_put);
  RUN(corrupted_entries_are_misses_and_rebuilt);
  RUN(key_mismatch_is_a_miss);
  RUN(lru_eviction_order);
  RUN(oversized_entry_is_kept_alone);
  RUN(max_mb_malformed_warns);
  RUN(disabled_by_env_and_flag);
  RUN(directory_resolution);
  RUN(directory_under_a_file_disables);
  RUN(directory_others_can_write_disables);
  RUN(directory_path_too_long_disables);
  RUN(readonly_directory);
  RUN(damaged_entry_in_a_readonly_directory_is_kept_and_said_so);
  RUN(full_disk);
  RUN(write_fault_hook);
  RUN(in_memory_backend_skips_disk);
  RUN(listing_and_clear);
  RUN(stale_temp_files_cleaned);
  RUN(threads_share_one_cache);
  RUN(mem_cache_basics);
  RUN(mem_cache_lru_limit);
  RUN(mem_cache_threads);
  if (g_root[0] && !tc_t_failed) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    if (system(cmd) != 0) printf("note: could not remove %s\n", g_root);
  }
  TEST_MAIN_END();
}
