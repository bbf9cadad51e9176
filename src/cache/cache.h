/* cache.h: tilec's kernel cache: a content-addressed disk cache of built artifacts, and an
 * in-memory cache of loaded kernels that sits in front of it (one per context).
 *
 * Keys. A key is the SHA-256 of length-prefixed, named fields: everything that changes the
 * artifact (tilec version, canonical IR text after binding, bound parameters, target, target
 * options, backend, toolchain identity). Dynamic dimensions stay symbolic in the IR, so their
 * run-time values never reach the key. See docs/cache.md.
 *
 * Disk entries. One file per key, DIR/<64 hex digits>.tce, holding the artifact and named
 * metadata sections (parameter list, dtypes, launch shape, generated source, ...). A file is
 * written to a temp file in DIR itself, fsync'd, renamed onto its final name and the directory
 * fsync'd, so a reader sees either no entry or a complete one, across processes, without locks.
 * Readers check magic, format version, lengths, key and a SHA-256 over the whole file; anything
 * invalid is a miss and is removed, so the next put replaces it.
 *
 * Faults. The first failing write (read-only or full disk, permissions, ...) switches the disk
 * cache off for that cache object and records one warning (tc_disk_cache_take_warning); put
 * still returns TILEC_OK, so the compile that called it succeeds.
 *
 * Backends. A backend whose kernel lives only in process memory (TC_BACKEND_IN_MEMORY) or that
 * builds no artifact (build == NULL) never touches the disk: get is a miss and put a no-op
 * for it. tc_cache_disk_allowed says which.
 *
 * Threads. Every function is thread-safe; each cache object has its own mutex.
 */
#ifndef TILEC_CACHE_H
#define TILEC_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache/sha256.h"
#include "target/target.h"
#include "tilec.h"

/* ---- keys --------------------------------------------------------------------------------- */
typedef struct tc_cache_key {
  uint8_t bytes[TC_SHA256_SIZE];
} tc_cache_key;

/* Incremental key builder: begin, any number of fields, end. Each field is hashed as
 * (len(name), name, len(value), value) with 64-bit lengths, so no two field lists collide by
 * concatenation. A NULL value hashes differently from the empty string. */
typedef struct tc_cache_key_builder {
  tc_sha256 sha;
} tc_cache_key_builder;
void tc_cache_key_begin(tc_cache_key_builder *b);
void tc_cache_key_field(tc_cache_key_builder *b, const char *name, const void *value, size_t size);
void tc_cache_key_str(tc_cache_key_builder *b, const char *name, const char *value);
void tc_cache_key_end(tc_cache_key_builder *b, tc_cache_key *out);

/* The standard key of a compiled kernel. NULL fields hash as "absent". */
typedef struct tc_cache_key_input {
  const char *tilec_version;  /* NULL: TILEC_VERSION_STRING */
  const char *ir_text;        /* canonical IR after binding (tc_ir_print of the bound kernel) */
  const char *params;         /* bound parameters, canonical "name=value\n" lines, sorted */
  const char *target;         /* "cpu", "cuda", "metal" (resolved, never "auto") */
  const char *target_options; /* e.g. "-O3 -march=native", GPU arch */
  const char *backend;        /* resolved backend name */
  const char *toolchain_id;   /* tc_backend.toolchain_id() */
} tc_cache_key_input;
void tc_cache_key_compute(const tc_cache_key_input *in, tc_cache_key *out);

#define TC_CACHE_KEY_HEX_SIZE (2 * TC_SHA256_SIZE + 1)
void tc_cache_key_hex(const tc_cache_key *k, char out[TC_CACHE_KEY_HEX_SIZE]);
/* Parse 64 hex digits; false when malformed. */
bool tc_cache_key_from_hex(const char *hex, tc_cache_key *out);

/* ---- entries ------------------------------------------------------------------------------ */
#define TC_CACHE_MAX_SECTIONS 16
#define TC_CACHE_SECTION_NAME_MAX 63

/* A named metadata section. Names: 1..63 bytes of [A-Za-z0-9_.-]; "artifact" is reserved. */
typedef struct tc_cache_section {
  const char *name;
  const void *data;
  size_t size;
} tc_cache_section;

/* What put stores and get returns. For put, the caller owns every pointer. For get, the
 * pointers point into one buffer owned by the entry (storage), freed by
 * tc_cache_entry_release; section data is followed by a NUL byte, so text sections can be
 * used as C strings. The section named "description" (if any) is shown by `tilec cache ls`. */
typedef struct tc_cache_entry {
  const void *artifact;
  size_t artifact_size;
  size_t nsections;
  tc_cache_section sections[TC_CACHE_MAX_SECTIONS];
  void *storage; /* set by get */
} tc_cache_entry;

/* The section with this name, or NULL. */
const tc_cache_section *tc_cache_entry_section(const tc_cache_entry *e, const char *name);
/* Free what get allocated and zero the entry (safe on a zeroed entry). */
void tc_cache_entry_release(tc_cache_entry *e);

/* ---- disk cache --------------------------------------------------------------------------- */
typedef struct tc_disk_cache tc_disk_cache;

enum {
  TC_DISK_CACHE_DISABLE = 1u << 0 /* API flag: open a disabled cache (like TILEC_DISABLE_CACHE=1) */
};

#define TC_DISK_CACHE_DEFAULT_MAX_MB 1024
#define TC_DISK_CACHE_TEMP_MAX_AGE_S 3600 /* temp files older than this are debris */

/* Resolve the directory: `dir` if non-NULL, else $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec,
 * else $HOME/.cache/tilec; create it (and its parents) with mode 0700. The size limit is
 * $TILEC_CACHE_MAX_MB (MiB, a positive integer; default TC_DISK_CACHE_DEFAULT_MAX_MB).
 * Returns a disabled cache (tc_disk_cache_enabled false) when TILEC_DISABLE_CACHE is set to
 * anything but "" or "0", or flags has TC_DISK_CACHE_DISABLE; and a disabled cache with a
 * warning when the directory cannot be resolved or created, belongs to another user, is
 * writable by group or others (entries are loaded as code), or its path is too long. A
 * malformed TILEC_CACHE_MAX_MB gives a warning and the default. NULL only when out of memory. */
tc_disk_cache *tc_disk_cache_open(const char *dir, unsigned flags, tilec_error *err);
void tc_disk_cache_close(tc_disk_cache *c);

bool tc_disk_cache_enabled(tc_disk_cache *c); /* false: disabled, or switched off by a fault */
bool tc_disk_cache_off_by_choice(const tc_disk_cache *c); /* disabled by flag or TILEC_DISABLE_CACHE */
/* Whether new entries could be written now (false with the reason, e.g. a read-only mount). */
bool tc_disk_cache_writable(const tc_disk_cache *c, char *why, size_t why_cap);
/* The resolved directory ("" when none could be resolved). Valid while c is open. */
const char *tc_disk_cache_dir(const tc_disk_cache *c);
uint64_t tc_disk_cache_max_bytes(const tc_disk_cache *c);
/* The one warning recorded by a fault, or NULL; malloc'd for the caller; cleared by reading. */
char *tc_disk_cache_take_warning(tc_disk_cache *c);

/* May this backend's kernels be stored on disk? False for NULL, for TC_BACKEND_IN_MEMORY
 * backends and for backends without a build step (they produce no artifact bytes). */
bool tc_cache_disk_allowed(const tc_backend *b);

typedef enum tc_cache_result {
  TC_CACHE_HIT = 0,
  TC_CACHE_ABSENT,  /* no entry */
  TC_CACHE_INVALID, /* an entry existed but failed validation; it was removed */
  TC_CACHE_INVALID_KEPT, /* ... and could not be removed (a read-only directory): it is still there */
  TC_CACHE_OFF      /* cache disabled, switched off, or the backend may not use the disk */
} tc_cache_result;
const char *tc_cache_result_name(tc_cache_result r); /* "hit", "absent", "invalid", "invalid-kept", "off" */

/* Look up key. On TC_CACHE_HIT *out holds the entry (release it) and the file's last-use time
 * is set to now (for LRU). Otherwise *out is zeroed. For TC_CACHE_INVALID, `why` (if non-NULL)
 * receives the reason ("checksum mismatch", "truncated: ...", ...); for TC_CACHE_INVALID_KEPT it
 * ends with why the file could not be removed. Read errors other than ENOENT are treated as
 * invalid entries too. */
tc_cache_result tc_disk_cache_get(tc_disk_cache *c, const tc_backend *b, const tc_cache_key *key,
                                  tc_cache_entry *out, char *why, size_t why_cap);

/* Store an entry atomically (see the top of this file), then evict least-recently-used
 * entries while the directory holds more than the size limit (never the entry just written)
 * and remove stale temp files. TILEC_OK also when nothing was stored (cache off, backend not
 * allowed, or a write fault that switched the cache off); TILEC_ERROR_USAGE for a malformed
 * entry (bad section name, too many sections); TILEC_ERROR_NOMEM. */
tilec_status tc_disk_cache_put(tc_disk_cache *c, const tc_backend *b, const tc_cache_key *key,
                               const tc_cache_entry *e, tilec_error *err);

/* Remove the entry for key if present (true if a file was removed; otherwise, with why, the
 * reason: "No such file or directory", "Read-only file system"). */
bool tc_disk_cache_remove(tc_disk_cache *c, const tc_cache_key *key);
bool tc_disk_cache_remove_why(tc_disk_cache *c, const tc_cache_key *key, char *why, size_t why_cap);

/* Listing for `tilec cache ls|stats`. Works on a disabled cache too (it reads the directory).
 * Entries are sorted by last use, most recent first. */
typedef struct tc_cache_listing_entry {
  char key_hex[TC_CACHE_KEY_HEX_SIZE];
  uint64_t size;       /* file size in bytes */
  int64_t last_use_ns; /* Unix time in ns (the file's mtime) */
  bool valid;          /* only checked when descriptions were asked for; else true */
  char *description;   /* the "description" section, or NULL (with_details only) */
} tc_cache_listing_entry;

typedef struct tc_cache_listing {
  size_t count;
  uint64_t total_bytes; /* sum of entry file sizes */
  size_t temp_files;    /* temp files present (writes in progress or debris) */
  uint64_t temp_bytes;
  tc_cache_listing_entry *entries;
} tc_cache_listing;

/* with_details: read and validate every entry and fetch its description. */
tilec_status tc_disk_cache_list(tc_disk_cache *c, bool with_details, tc_cache_listing *out,
                                tilec_error *err);
void tc_cache_listing_free(tc_cache_listing *l);

/* Remove every entry file and temp file (only names tilec writes); *removed counts them. */
tilec_status tc_disk_cache_clear(tc_disk_cache *c, size_t *removed, tilec_error *err);

/* Tests only: replace write(2) for entry files, to inject faults or slow writes. NULL restores
 * the default. Not for library users. */
typedef ssize_t (*tc_cache_write_fn)(int fd, const void *buf, size_t n, void *user);
void tc_disk_cache_set_write_hook(tc_disk_cache *c, tc_cache_write_fn fn, void *user);

/* ---- in-memory cache ---------------------------------------------------------------------- */
/* A map key -> loaded object for one context. Objects are reference counted by the caller's
 * retain/release functions; the cache holds one reference per stored object. retain is called
 * with the cache's mutex held, so it must be quick and must not call back into the cache. */
typedef struct tc_mem_cache tc_mem_cache;
typedef void (*tc_mem_ref_fn)(void *obj);

/* max_entries 0: unlimited; else the least recently used object is dropped beyond it. NULL
 * when out of memory. */
tc_mem_cache *tc_mem_cache_create(tc_mem_ref_fn retain, tc_mem_ref_fn release, size_t max_entries);
/* Releases every stored object. */
void tc_mem_cache_destroy(tc_mem_cache *m);
/* The object for key with a new reference for the caller, or NULL. */
void *tc_mem_cache_get(tc_mem_cache *m, const tc_cache_key *key);
/* Offer obj (the caller holds a reference) for key. If key is absent, the cache retains obj
 * and returns obj. If another thread stored one first, that object is returned with a new
 * reference for the caller, who should release its own obj and use the returned one. Out of
 * memory: obj is returned and not stored. Either way the caller holds a reference to the
 * result. */
void *tc_mem_cache_insert(tc_mem_cache *m, const tc_cache_key *key, void *obj);
bool tc_mem_cache_remove(tc_mem_cache *m, const tc_cache_key *key);
size_t tc_mem_cache_count(tc_mem_cache *m);
void tc_mem_cache_clear(tc_mem_cache *m);

#endif
