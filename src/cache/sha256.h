/* sha256.h: SHA-256 (FIPS 180-4) with an incremental interface, used for cache keys and entry
 * checksums. Plain portable C; no global state. */
#ifndef TILEC_SHA256_H
#define TILEC_SHA256_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TC_SHA256_SIZE 32

typedef struct tc_sha256 {
  uint32_t state[8];
  uint64_t total;      /* bytes hashed so far */
  uint8_t block[64];   /* pending partial block */
  size_t pending;      /* bytes in block */
  bool accel;          /* use the CPU's SHA instructions */
} tc_sha256;

void tc_sha256_init(tc_sha256 *s);
/* The same, never using CPU SHA instructions (tests compare the two paths). */
void tc_sha256_init_portable(tc_sha256 *s);
/* Whether tc_sha256_init picks the CPU's SHA instructions on this machine. */
bool tc_sha256_accelerated(void);
void tc_sha256_update(tc_sha256 *s, const void *data, size_t n);
/* Writes the digest; the state must be re-initialised before further use. */
void tc_sha256_final(tc_sha256 *s, uint8_t out[TC_SHA256_SIZE]);
/* One-shot digest. */
void tc_sha256_digest(const void *data, size_t n, uint8_t out[TC_SHA256_SIZE]);
/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void tc_hex_encode(const uint8_t *bytes, size_t n, char *out);

#endif
