/* entry.c: cache keys, and the on-disk entry format (encode and validate).
 *
 * Entry file, little-endian:
 *   header (TC_ENTRY_HEADER_SIZE = 128 bytes)
 *     0   magic "TILECKC\n"
 *     8   u32 format version (TC_ENTRY_FORMAT_VERSION)
 *     12  u32 header size (128)
 *     16  key (32 bytes)
 *     48  u64 payload size (file size - 128)
 *     56  u32 record count (1 + sections)
 *     60  u32 flags (0)
 *     64  SHA-256 of the whole file with these 32 bytes zeroed
 *     96  reserved, zero
 *   payload: records, each 8-byte aligned
 *     u32 name length (without NUL), u32 0, u64 data size, name, NUL, pad to 8,
 *     data, NUL, pad to 8
 *   record 0 is named "artifact"; the rest are the entry's sections in order.
 */
#include "cache/cache_internal.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t k_magic[8] = {'T', 'I', 'L', 'E', 'C', 'K', 'C', '\n'};
static const char k_key_domain[] = "tilec-cache-key/v1";

/* ---- keys ---- */
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void hash_len(tc_sha256 *s, uint64_t n) {
  uint8_t b[8];
  put_u64(b, n);
  tc_sha256_update(s, b, 8);
}

void tc_cache_key_begin(tc_cache_key_builder *b) {
  tc_sha256_init(&b->sha);
  tc_sha256_update(&b->sha, k_key_domain, sizeof k_key_domain);
}

void tc_cache_key_field(tc_cache_key_builder *b, const char *name, const void *value, size_t size) {
  size_t nlen = strlen(name);
  hash_len(&b->sha, nlen);
  tc_sha256_update(&b->sha, name, nlen);
  if (!value) {
    hash_len(&b->sha, UINT64_MAX); /* absent: a length no real value has */
    return;
  }
  hash_len(&b->sha, size);
  tc_sha256_update(&b->sha, value, size);
}

void tc_cache_key_str(tc_cache_key_builder *b, const char *name, const char *value) {
  tc_cache_key_field(b, name, value, value ? strlen(value) : 0);
}

void tc_cache_key_end(tc_cache_key_builder *b, tc_cache_key *out) {
  tc_sha256_final(&b->sha, out->bytes);
}

void tc_cache_key_compute(const tc_cache_key_input *in, tc_cache_key *out) {
  tc_cache_key_builder b;
  tc_cache_key_begin(&b);
  tc_cache_key_str(&b, "tilec_version", in->tilec_version ? in->tilec_version : TILEC_VERSION_STRING);
  tc_cache_key_str(&b, "ir", in->ir_text);
  tc_cache_key_str(&b, "params", in->params);
  tc_cache_key_str(&b, "target", in->target);
  tc_cache_key_str(&b, "target_options", in->target_options);
  tc_cache_key_str(&b, "backend", in->backend);
  tc_cache_key_str(&b, "toolchain", in->toolchain_id);
  tc_cache_key_end(&b, out);
}

void tc_cache_key_hex(const tc_cache_key *k, char out[TC_CACHE_KEY_HEX_SIZE]) {
  tc_hex_encode(k->bytes, TC_SHA256_SIZE, out);
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1; /* upper case is not what we write, so it is not a key */
}

bool tc_cache_key_from_hex(const char *hex, tc_cache_key *out) {
  for (int i = 0; i < TC_SHA256_SIZE; i++) {
    int hi = hex_digit(hex[2 * i]);
    if (hi < 0) return false;
    int lo = hex_digit(hex[2 * i + 1]);
    if (lo < 0) return false;
    out->bytes[i] = (uint8_t)(hi << 4 | lo);
  }
  return hex[2 * TC_SHA256_SIZE] == 0;
}

/* ---- entries ---- */
const tc_cache_section *tc_cache_entry_section(const tc_cache_entry *e, const char *name) {
  for (size_t i = 0; i < e->nsections && i < TC_CACHE_MAX_SECTIONS; i++)
    if (e->sections[i].name && strcmp(e->sections[i].name, name) == 0) return &e->sections[i];
  return NULL;
}

void tc_cache_entry_release(tc_cache_entry *e) {
  if (!e) return;
  free(e->storage);
  memset(e, 0, sizeof *e);
}

static bool valid_section_name(const char *name) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n > TC_CACHE_SECTION_NAME_MAX) return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return strcmp(name, TC_ENTRY_ARTIFACT_NAME) != 0;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bytes one record takes; 0 on overflow. */
static size_t record_size(size_t name_len, size_t data_size) {
  size_t head = 16 + pad8(name_len + 1);
  if (data_size > SIZE_MAX - head - 16) return 0;
  return head + pad8(data_size + 1);
}

tilec_status tc_entry_encode(const tc_cache_key *key, const tc_cache_entry *e, uint8_t **out,
                             size_t *out_size, tilec_error *err) {
  *out = NULL;
  *out_size = 0;
  if (e->nsections > TC_CACHE_MAX_SECTIONS) {
    tc_error(err, TILEC_ERROR_USAGE, "cache entry has %zu sections (at most %d)", e->nsections,
             TC_CACHE_MAX_SECTIONS);
    return TILEC_ERROR_USAGE;
  }
  if (!e->artifact && e->artifact_size) {
    tc_error(err, TILEC_ERROR_USAGE, "cache entry has an artifact size but no artifact");
    return TILEC_ERROR_USAGE;
  }
  size_t total = TC_ENTRY_HEADER_SIZE;
  size_t r = record_size(strlen(TC_ENTRY_ARTIFACT_NAME), e->artifact_size);
  if (!r || r > SIZE_MAX - total) goto too_big;
  total += r;
  for (size_t i = 0; i < e->nsections; i++) {
    const tc_cache_section *s = &e->sections[i];
    if (!valid_section_name(s->name)) {
      tc_error(err, TILEC_ERROR_USAGE,
               "invalid cache section name '%s' (1-%d characters of A-Z a-z 0-9 _ . -, not '%s')",
               s->name ? s->name : "(null)", TC_CACHE_SECTION_NAME_MAX, TC_ENTRY_ARTIFACT_NAME);
      return TILEC_ERROR_USAGE;
    }
    for (size_t j = 0; j < i; j++)
      if (strcmp(e->sections[j].name, s->name) == 0) {
        tc_error(err, TILEC_ERROR_USAGE, "duplicate cache section name '%s'", s->name);
        return TILEC_ERROR_USAGE;
      }
    if (!s->data && s->size) {
      tc_error(err, TILEC_ERROR_USAGE, "cache section '%s' has a size but no data", s->name);
      return TILEC_ERROR_USAGE;
    }
    r = record_size(strlen(s->name), s->size);
    if (!r || r > SIZE_MAX - total) goto too_big;
    total += r;
  }
  uint8_t *buf = calloc(1, total);
  if (!buf) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory encoding a cache entry of %zu bytes", total);
    return TILEC_ERROR_NOMEM;
  }
  memcpy(buf, k_magic, 8);
  put_u32(buf + 8, TC_ENTRY_FORMAT_VERSION);
  put_u32(buf + 12, TC_ENTRY_HEADER_SIZE);
  memcpy(buf + 16, key->bytes, TC_SHA256_SIZE);
  put_u64(buf + 48, total - TC_ENTRY_HEADER_SIZE);
  put_u32(buf + 56, (uint32_t)(1 + e->nsections));
  size_t at = TC_ENTRY_HEADER_SIZE;
  for (size_t i = 0; i <= e->nsections; i++) {
    const char *name = i == 0 ? TC_ENTRY_ARTIFACT_NAME : e->sections[i - 1].name;
    const void *data = i == 0 ? e->artifact : e->sections[i - 1].data;
    size_t size = i == 0 ? e->artifact_size : e->sections[i - 1].size;
    size_t nlen = strlen(name);
    put_u32(buf + at, (uint32_t)nlen);
    put_u64(buf + at + 8, size);
    at += 16;
    memcpy(buf + at, name, nlen); /* NUL and padding are already zero */
    at += pad8(nlen + 1);
    if (size) memcpy(buf + at, data, size);
    at += pad8(size + 1);
  }
  tc_sha256_digest(buf, total, buf + 64); /* checksum field is still zero here */
  *out = buf;
  *out_size = total;
  return TILEC_OK;
too_big:
  tc_error(err, TILEC_ERROR_USAGE, "cache entry too large");
  return TILEC_ERROR_USAGE;
}

#define BAD(...)                                        \
  do {                                                  \
    if (why && why_cap) snprintf(why, why_cap, __VA_ARGS__); \
    return false;                                       \
  } while (0)

bool tc_entry_decode(uint8_t *buf, size_t size, const tc_cache_key *key, tc_cache_entry *out,
                     char *why, size_t why_cap) {
  memset(out, 0, sizeof *out);
  if (size < TC_ENTRY_HEADER_SIZE)
    BAD("truncated: %zu bytes, shorter than the %d-byte header", size, TC_ENTRY_HEADER_SIZE);
  if (memcmp(buf, k_magic, 8) != 0) BAD("bad magic");
  uint32_t version = get_u32(buf + 8);
  if (version != TC_ENTRY_FORMAT_VERSION)
    BAD("format version %u (this tilec reads %u)", version, TC_ENTRY_FORMAT_VERSION);
  if (get_u32(buf + 12) != TC_ENTRY_HEADER_SIZE) BAD("bad header size %u", get_u32(buf + 12));
  uint64_t payload = get_u64(buf + 48);
  if (payload != size - TC_ENTRY_HEADER_SIZE)
    BAD("truncated: header says %llu payload bytes, file has %zu",
        (unsigned long long)payload, size - TC_ENTRY_HEADER_SIZE);
  if (key && memcmp(buf + 16, key->bytes, TC_SHA256_SIZE) != 0) BAD("key mismatch");
  uint8_t stored[TC_SHA256_SIZE], actual[TC_SHA256_SIZE];
  memcpy(stored, buf + 64, TC_SHA256_SIZE);
  memset(buf + 64, 0, TC_SHA256_SIZE);
  tc_sha256_digest(buf, size, actual);
  memcpy(buf + 64, stored, TC_SHA256_SIZE);
  if (memcmp(stored, actual, TC_SHA256_SIZE) != 0) BAD("checksum mismatch");
  /* The checksum matched, so what follows was written by tc_entry_encode; the bounds checks
   * still guard against a different writer of the same format version. */
  uint32_t nrec = get_u32(buf + 56);
  if (nrec < 1 || nrec > 1 + TC_CACHE_MAX_SECTIONS) BAD("bad record count %u", nrec);
  size_t at = TC_ENTRY_HEADER_SIZE;
  for (uint32_t i = 0; i < nrec; i++) {
    if (size - at < 16) BAD("record %u runs past the end", i);
    uint64_t nlen = get_u32(buf + at), dsize = get_u64(buf + at + 8);
    if (nlen == 0 || nlen > TC_CACHE_SECTION_NAME_MAX) BAD("record %u: bad name length", i);
    at += 16;
    if (size - at < pad8(nlen + 1)) BAD("record %u runs past the end", i);
    char *name = (char *)buf + at;
    if (name[nlen] != 0) BAD("record %u: name not terminated", i);
    at += pad8(nlen + 1);
    if (dsize >= size - at || size - at < pad8(dsize + 1)) BAD("record %u runs past the end", i);
    uint8_t *data = buf + at;
    if (data[dsize] != 0) BAD("record %u: data not terminated", i);
    at += pad8(dsize + 1);
    if (i == 0) {
      if (strcmp(name, TC_ENTRY_ARTIFACT_NAME) != 0) BAD("record 0 is not the artifact");
      out->artifact = data;
      out->artifact_size = dsize;
    } else {
      out->sections[i - 1] = (tc_cache_section){.name = name, .data = data, .size = dsize};
    }
  }
  if (at != size) BAD("%zu bytes after the last record", size - at);
  out->nsections = nrec - 1;
  return true;
}
