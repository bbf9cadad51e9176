/* cxxlib.h: C++ text built by the host compiler into a shared object and loaded with dlopen:
 * how the emulators (metal's, cuda's) turn generated GPU code into something the CPU runs.
 *
 * The compiler runs without a shell (posix_spawn), its flags fixed: -std=c++20 -O1 -fPIC
 * -shared, plus -fsanitize=address when tilec itself is built with ASan, so out-of-bounds
 * accesses in generated code are caught there too. The command is `cxx` (a command such as
 * "g++" or "ccache c++"), else $TILEC_EMU_CXX, else "c++". */
#ifndef TILEC_UTIL_CXXLIB_H
#define TILEC_UTIL_CXXLIB_H
#include <stdbool.h>
#include <stddef.h>

#include "tilec.h"

/* A header written into the include directory (name may hold one folder: "A/B.h"). */
typedef struct tc_cxx_header {
  const char *name, *text;
} tc_cxx_header;

bool tc_cxx_available(const char *cxx, char *why, size_t cap);
/* Identity of the compiler and flags for cache keys (malloc'd): "TAG cxx=PATH ... abi=ABI". */
char *tc_cxx_toolchain_id(const char *cxx, const char *tag, int abi, tilec_error *err);
/* Compiles `source` (named src_name, for the compiler's messages) with the headers on the
 * include path into shared-object bytes (*so, malloc'd). On a compile error: TILEC_ERROR_TARGET
 * with "WHO: the C++ compiler failed ..." and the log in *log (malloc'd; log may be NULL). */
tilec_status tc_cxx_build_so(const char *who, const char *cxx, const char *src_name, const char *source,
                             const tc_cxx_header *headers, int nheaders, void **so, size_t *so_size, char **log,
                             tilec_error *err);
/* Shared-object bytes -> dlopen handle (through a temporary file, removed at once). */
tilec_status tc_so_open(const void *so, size_t so_size, const char *what, void **handle, tilec_error *err);

#endif
