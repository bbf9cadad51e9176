#include "npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void npy_free(npy_array *a) {
  free(a->data);
  a->data = NULL;
}

static int fail(char *msg, size_t cap, const char *path, const char *what) {
  snprintf(msg, cap, "%s: %s", path, what);
  return -1;
}

/* Find 'key': in the header dict and return a pointer just past the colon. */
static const char *find_key(const char *h, const char *key) {
  const char *p = strstr(h, key);
  if (!p) return NULL;
  p = strchr(p + strlen(key), ':');
  return p ? p + 1 : NULL;
}

/* A Fortran-order array (first index fastest, as numpy.asfortranarray or a transposed view saves
 * it) rearranged into C order in place of its data: the C-order index runs as an odometer, last
 * dimension fastest, while the Fortran offset follows it through the per-dimension strides. */
static int to_c_order(npy_array *a, size_t item) {
  unsigned char *c = malloc(a->nbytes ? a->nbytes : 1);
  if (!c) return -1;
  size_t fstride[16], idx[16] = {0}, off = 0, numel = a->nbytes / item;
  size_t stride = 1;
  for (int d = 0; d < a->ndim; d++) {
    fstride[d] = stride;
    stride *= (size_t)a->shape[d];
  }
  for (size_t i = 0; i < numel; i++) {
    memcpy(c + i * item, (unsigned char *)a->data + off * item, item);
    for (int d = a->ndim - 1; d >= 0; d--) { /* next C-order index */
      if (++idx[d] < (size_t)a->shape[d]) {
        off += fstride[d];
        break;
      }
      off -= fstride[d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
  free(a->data);
  a->data = c;
  return 0;
}

int npy_read(const char *path, npy_array *out, char *msg, size_t cap) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(msg, cap, "cannot open '%s': %s", path, strerror(errno));
    return -1;
  }
  unsigned char pre[12];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    fclose(f);
    return fail(msg, cap, path, "not a .npy file");
  }
  size_t hlen;
  if (pre[6] == 1) {
    hlen = pre[8] | (size_t)pre[9] << 8;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      fclose(f);
      return fail(msg, cap, path, "truncated header");
    }
    hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  } else {
    fclose(f);
    return fail(msg, cap, path, "unsupported .npy version");
  }
  if (hlen > 1 << 20) {
    fclose(f);
    return fail(msg, cap, path, "header too large");
  }
  char *h = malloc(hlen + 1);
  if (!h || fread(h, 1, hlen, f) != hlen) {
    free(h);
    fclose(f);
    return fail(msg, cap, path, "truncated header");
  }
  h[hlen] = 0;
  const char *d = find_key(h, "'descr'"), *fo = find_key(h, "'fortran_order'"), *sh = find_key(h, "'shape'");
  if (!d || !fo || !sh) {
    free(h);
    fclose(f);
    return fail(msg, cap, path, "malformed header");
  }
  while (*d == ' ') d++;
  if (*d != '\'' || !strchr(d + 1, '\'') || strchr(d + 1, '\'') - d - 1 >= (long)sizeof out->descr) {
    free(h);
    fclose(f);
    return fail(msg, cap, path, "unsupported descr");
  }
  memcpy(out->descr, d + 1, (size_t)(strchr(d + 1, '\'') - d - 1));
  while (*fo == ' ') fo++;
  bool fortran = strncmp(fo, "True", 4) == 0;
  if (!fortran && strncmp(fo, "False", 5) != 0) {
    free(h);
    fclose(f);
    return fail(msg, cap, path, "malformed fortran_order");
  }
  while (*sh == ' ') sh++;
  if (*sh != '(') {
    free(h);
    fclose(f);
    return fail(msg, cap, path, "malformed shape");
  }
  sh++;
  size_t numel = 1;
  for (;;) {
    while (*sh == ' ' || *sh == ',') sh++;
    if (*sh == ')') break;
    char *end;
    long long v = strtoll(sh, &end, 10);
    if (end == sh || v < 0 || out->ndim >= 16) {
      free(h);
      fclose(f);
      return fail(msg, cap, path, "malformed shape");
    }
    out->shape[out->ndim++] = v;
    numel *= (size_t)v;
    sh = end;
  }
  free(h);
  int item = atoi(out->descr + 2);
  if (item <= 0 || item > 16) {
    fclose(f);
    return fail(msg, cap, path, "unsupported descr");
  }
  out->nbytes = numel * (size_t)item;
  out->data = malloc(out->nbytes ? out->nbytes : 1);
  if (!out->data) {
    fclose(f);
    return fail(msg, cap, path, "out of memory");
  }
  if (fread(out->data, 1, out->nbytes, f) != out->nbytes) {
    npy_free(out);
    fclose(f);
    return fail(msg, cap, path, "truncated data");
  }
  fclose(f);
  if (fortran && out->ndim > 1 && numel > 1 && to_c_order(out, (size_t)item) != 0) {
    npy_free(out);
    return fail(msg, cap, path, "out of memory");
  }
  return 0;
}

int npy_write(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data,
              size_t nbytes, char *msg, size_t cap) {
  char hdr[512];
  int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < ndim; i++) n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld,%s", (long long)shape[i], i + 1 < ndim ? " " : "");
  n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
  /* pad so that the data starts at a multiple of 64 bytes; the header ends in '\n' */
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  if ((size_t)n + pad + 1 >= sizeof hdr) return fail(msg, cap, path, "header too long");
  memset(hdr + n, ' ', pad);
  n += (int)pad;
  hdr[n++] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) {
    snprintf(msg, cap, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)n, f) == (size_t)n &&
           fwrite(data, 1, nbytes, f) == nbytes;
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    snprintf(msg, cap, "error writing '%s'", path);
    return -1;
  }
  return 0;
}
