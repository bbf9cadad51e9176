/* artifact.c: the cuda artifact container and the code generator's metadata (cuda.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda_internal.h"
#include "util/diag.h"

static const unsigned char k_magic[8] = {'T', 'I', 'L', 'E', 'C', 'U', 'B', 1};

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

tilec_status tc_cuda_artifact_pack(const char *meta, const void *cubin, size_t cubin_size, void **out,
                                   size_t *out_size, tilec_error *err) {
  *out = NULL;
  *out_size = 0;
  size_t m = meta ? strlen(meta) : 0;
  if (m > UINT32_MAX || !cubin || cubin_size == 0) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda artifact: %s", !cubin || !cubin_size ? "no cubin" : "meta too long");
    return TILEC_ERROR_INTERNAL;
  }
  size_t n = TC_CUDA_ARTIFACT_HEADER + m + cubin_size;
  unsigned char *p = malloc(n);
  if (!p) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return TILEC_ERROR_NOMEM;
  }
  memcpy(p, k_magic, 8);
  put_le(p + 8, TC_CUDA_ARTIFACT_VERSION, 4);
  put_le(p + 12, m, 4);
  put_le(p + 16, cubin_size, 8);
  if (m) memcpy(p + TC_CUDA_ARTIFACT_HEADER, meta, m);
  memcpy(p + TC_CUDA_ARTIFACT_HEADER + m, cubin, cubin_size);
  *out = p;
  *out_size = n;
  return TILEC_OK;
}

tilec_status tc_cuda_artifact_unpack(const void *a, size_t size, const char **meta, size_t *meta_len,
                                     const void **cubin, size_t *cubin_size, tilec_error *err) {
  const unsigned char *p = a;
  const char *why = NULL;
  if (!p || size < TC_CUDA_ARTIFACT_HEADER || memcmp(p, k_magic, 8) != 0) why = "not a tilec cuda artifact";
  else if (get_le(p + 8, 4) != TC_CUDA_ARTIFACT_VERSION) why = "artifact format version differs";
  if (!why) {
    uint64_t m = get_le(p + 12, 4), c = get_le(p + 16, 8);
    if (c < 4 || m > size - TC_CUDA_ARTIFACT_HEADER || c != size - TC_CUDA_ARTIFACT_HEADER - m) {
      why = "artifact lengths do not match its size";
    } else {
      *meta = (const char *)p + TC_CUDA_ARTIFACT_HEADER;
      *meta_len = (size_t)m;
      *cubin = p + TC_CUDA_ARTIFACT_HEADER + m;
      *cubin_size = (size_t)c;
      if (memcmp(*cubin, "\177ELF", 4) != 0) why = "the cubin is not an ELF file";
    }
  }
  if (why) {
    tc_error(err, TILEC_ERROR_TARGET, "cuda artifact: %s", why);
    return TILEC_ERROR_TARGET;
  }
  return TILEC_OK;
}

const void *tc_cuda_payload(const void *artifact, size_t size, size_t *payload_size) {
  const char *meta;
  size_t mlen;
  const void *cubin = NULL;
  *payload_size = 0;
  if (tc_cuda_artifact_unpack(artifact, size, &meta, &mlen, &cubin, payload_size, NULL) != TILEC_OK) return NULL;
  return cubin;
}

tilec_status tc_cuda_meta_parse(const char *text, size_t len, tc_cuda_meta *out, tilec_error *err) {
  memset(out, 0, sizeof *out);
  out->launches = 1;
  bool have_block = false;
  const char *p = text ? text : "", *end = p + (text ? len : 0);
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char line[512];
    if (n >= sizeof line) {
      tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: line too long");
      return TILEC_ERROR_INTERNAL;
    }
    memcpy(line, p, n);
    line[n] = 0;
    p += n + (nl ? 1 : 0);
    char *eq = strchr(line, '=');
    if (!line[0]) continue;
    if (!eq) {
      tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: line '%s' is not key=value", line);
      return TILEC_ERROR_INTERNAL;
    }
    *eq = 0;
    const char *key = line, *val = eq + 1;
    if (strcmp(key, "entry") == 0) {
      bool ok = val[0] && strlen(val) < sizeof out->entry && (isalpha((unsigned char)val[0]) || val[0] == '_');
      for (const char *c = val; ok && *c; c++) ok = isalnum((unsigned char)*c) || *c == '_';
      if (!ok) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: entry '%s' is not a C identifier", val);
        return TILEC_ERROR_INTERNAL;
      }
      snprintf(out->entry, sizeof out->entry, "%s", val);
    } else if (strcmp(key, "block") == 0) {
      int x, y, z, used = 0;
      if (sscanf(val, "%d,%d,%d%n", &x, &y, &z, &used) != 3 || val[used] || x < 1 || y < 1 || z < 1 ||
          (int64_t)x * y * z > 1024) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: block '%s' is not X,Y,Z with 1..1024 threads", val);
        return TILEC_ERROR_INTERNAL;
      }
      out->block[0] = x, out->block[1] = y, out->block[2] = z;
      have_block = true;
    } else if (strcmp(key, "smem") == 0) {
      char *e;
      long long v = strtoll(val, &e, 10);
      if (!val[0] || *e || v < 0 || v > (1 << 30)) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: smem '%s' is not a byte count", val);
        return TILEC_ERROR_INTERNAL;
      }
      out->smem = v;
    } else if (strcmp(key, "tmap") == 0) {
      tc_cuda_tmap t = {0};
      long long rows, cols, R, C;
      int used = 0;
      bool ok = out->ntmaps < TC_CUDA_MAX_TMAPS &&
                sscanf(val, "%d,%d,%lld,%lld,%lld,%lld,%n", &t.param, &t.eb, &rows, &cols, &R, &C, &used) == 6 && t.param >= 0 &&
                (t.eb == 1 || t.eb == 2 || t.eb == 4) && rows > 0 && cols > 0 && R > 0 && C > 0;
      for (const char *f = val + used; ok && *f;) {
        char *e;
        bool sym = *f == 's';
        long long v = strtoll(sym ? f + 1 : f, &e, 10);
        ok = e != (sym ? f + 1 : f) && v >= 0 && t.nlead < 8 && (*e == '*' || !*e);
        if (ok) t.lead[t.nlead++] = sym ? -(v + 1) : v;
        f = *e ? e + 1 : e;
      }
      if (!ok || t.nlead == 0) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: tmap '%s' is not PARAM,EB,ROWS,COLS,R,C,LEAD", val);
        return TILEC_ERROR_INTERNAL;
      }
      t.rows = rows, t.cols = cols, t.R = R, t.C = C;
      out->tmaps[out->ntmaps++] = t;
    } else if (strcmp(key, "persistent") == 0) {
      if (strcmp(val, "0") && strcmp(val, "1")) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: persistent '%s' is not 0 or 1", val);
        return TILEC_ERROR_INTERNAL;
      }
      out->walks_tiles = true;
      out->persistent = val[0] == '1';
    } else if (strcmp(key, "cluster") == 0 || strcmp(key, "launches") == 0) {
      bool cl = key[0] == 'c';
      char *e;
      long v = strtol(val, &e, 10), most = cl ? 8 : 64;
      if (e == val || *e || v < 1 || v > most) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: %s '%s' is not between 1 and %ld", key, val, most);
        return TILEC_ERROR_INTERNAL;
      }
      *(cl ? &out->cluster : &out->launches) = (int)v;
    } else if (strcmp(key, "fold") == 0) {
      if (strcmp(val, "1")) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: fold '%s' is not 1", val);
        return TILEC_ERROR_INTERNAL;
      }
      out->folds = true;
    } else if (strcmp(key, "streamk") == 0) {
      char *e;
      long long v = strtoll(val, &e, 10);
      if (!val[0] || *e || v < 4 || v > (1LL << 30) || v % 4) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: streamk '%s' is not a byte count", val);
        return TILEC_ERROR_INTERNAL;
      }
      out->streamk = v;
    } else if (strcmp(key, "arch") == 0) {
      if (!tc_cuda_arch_known(val)) {
        tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: arch '%s' is not a supported cuda arch", val);
        return TILEC_ERROR_INTERNAL;
      }
      snprintf(out->arch, sizeof out->arch, "%s", val);
    }
  }
  if (out->folds && out->walks_tiles) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: fold= with persistent=");
    return TILEC_ERROR_INTERNAL;
  }
  if (out->streamk && !out->persistent) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: streamk= without persistent=1");
    return TILEC_ERROR_INTERNAL;
  }
  if (!out->entry[0] || !have_block || !out->arch[0]) {
    tc_error(err, TILEC_ERROR_INTERNAL, "cuda meta: missing %s", !out->entry[0] ? "entry=" : !have_block ? "block=" : "arch=");
    return TILEC_ERROR_INTERNAL;
  }
  return TILEC_OK;
}
