/* sha256.c: SHA-256 as specified in FIPS 180-4, section 6.2. A portable compression
 * function, and on x86 with the SHA extensions one built on them (several times faster: the
 * disk cache hashes every entry it reads), chosen once per process by CPUID. */
#include "cache/sha256.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define TC_SHA_X86 1
#endif

static const uint32_t k_round[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress_portable(uint32_t st[8], const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k_round[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  st[0] += a;
  st[1] += b;
  st[2] += c;
  st[3] += d;
  st[4] += e;
  st[5] += f;
  st[6] += g;
  st[7] += h;
}

#ifdef TC_SHA_X86
/* The state as the SHA instructions want it: one register holds A,B,E,F and the other
 * C,D,G,H; two rounds per sha256rnds2, message schedule by sha256msg1/msg2. */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_shani(uint32_t st[8],
                                                                        const uint8_t *p,
                                                                        size_t nblocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128((const __m128i *)&st[0]);
  __m128i hgfe = _mm_loadu_si128((const __m128i *)&st[4]);
  __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(badc, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);
  for (; nblocks; nblocks--, p += 64) {
    __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w[4];
    for (int g = 0; g < 16; g++) {
      __m128i m;
      if (g < 4) {
        m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
      } else {
        /* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time. */
        __m128i t = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
        t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
        m = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
      }
      w[g & 3] = m;
      __m128i wk = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&k_round[4 * g]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&st[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&st[4], _mm_alignr_epi8(dchg, feba, 8));
}

static pthread_once_t g_detect_once = PTHREAD_ONCE_INIT;
static bool g_have_shani; /* written once under g_detect_once: a property of the CPU */

static void detect(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  bool ssse3 = c & (1u << 9), sse41 = c & (1u << 19);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
  g_have_shani = ssse3 && sse41 && (b & (1u << 29));
}
#endif

bool tc_sha256_accelerated(void) {
#ifdef TC_SHA_X86
  pthread_once(&g_detect_once, detect);
  return g_have_shani;
#else
  return false;
#endif
}

static void compress(tc_sha256 *s, const uint8_t *p, size_t nblocks) {
  if (s->accel) {
#ifdef TC_SHA_X86
    compress_shani(s->state, p, nblocks);
    return;
#endif
  }
  for (; nblocks; nblocks--, p += 64) compress_portable(s->state, p);
}

void tc_sha256_init(tc_sha256 *s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->state, iv, sizeof iv);
  s->total = 0;
  s->pending = 0;
  s->accel = tc_sha256_accelerated();
}

void tc_sha256_init_portable(tc_sha256 *s) {
  tc_sha256_init(s);
  s->accel = false;
}

void tc_sha256_update(tc_sha256 *s, const void *data, size_t n) {
  const uint8_t *p = data;
  s->total += n;
  if (s->pending) {
    size_t take = 64 - s->pending < n ? 64 - s->pending : n;
    memcpy(s->block + s->pending, p, take);
    s->pending += take;
    p += take;
    n -= take;
    if (s->pending < 64) return;
    compress(s, s->block, 1);
    s->pending = 0;
  }
  if (n >= 64) {
    compress(s, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
  }
  if (n) {
    memcpy(s->block, p, n);
    s->pending = n;
  }
}

void tc_sha256_final(tc_sha256 *s, uint8_t out[TC_SHA256_SIZE]) {
  uint64_t bits = s->total * 8;
  s->block[s->pending++] = 0x80;
  if (s->pending > 56) {
    memset(s->block + s->pending, 0, 64 - s->pending);
    compress(s, s->block, 1);
    s->pending = 0;
  }
  memset(s->block + s->pending, 0, 56 - s->pending);
  for (int i = 0; i < 8; i++) s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  compress(s, s->block, 1);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(s->state[i] >> 24);
    out[4 * i + 1] = (uint8_t)(s->state[i] >> 16);
    out[4 * i + 2] = (uint8_t)(s->state[i] >> 8);
    out[4 * i + 3] = (uint8_t)s->state[i];
  }
  s->pending = 0;
}

void tc_sha256_digest(const void *data, size_t n, uint8_t out[TC_SHA256_SIZE]) {
  tc_sha256 s;
  tc_sha256_init(&s);
  tc_sha256_update(&s, data, n);
  tc_sha256_final(&s, out);
}

void tc_hex_encode(const uint8_t *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = 0;
}
