/* npy.h: reading and writing NumPy .npy files (format versions 1.0-3.0, little-endian) for
 * `tilec run --load/--save`. Files in Fortran order are read into C order; files are written in
 * C order. */
#ifndef TILEC_NPY_H
#define TILEC_NPY_H
#include <stddef.h>
#include <stdint.h>

typedef struct npy_array {
  char descr[16];  /* e.g. "<f4", "|u1" */
  int ndim;
  int64_t shape[16];
  void *data;      /* malloc'd */
  size_t nbytes;
} npy_array;

/* 0 on success; else -1 with a message in msg. */
int npy_read(const char *path, npy_array *out, char *msg, size_t cap);
int npy_write(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data,
              size_t nbytes, char *msg, size_t cap);
void npy_free(npy_array *a);
#endif
