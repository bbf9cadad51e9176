/* diag.h: diagnostics as values. A tc_source is one program text; a tc_loc points into it.
 * tc_error_at renders "file:line:col: error: msg", the source line and a caret into a
 * tilec_error, the way a C compiler prints it. */
#ifndef TILEC_DIAG_H
#define TILEC_DIAG_H
#include <stdarg.h>
#include <stddef.h>

#include "tilec.h"

typedef struct tc_source {
  const char *name; /* file name shown in diagnostics */
  const char *text; /* NUL-terminated */
  size_t len;
} tc_source;

typedef struct tc_loc {
  const tc_source *src; /* NULL: no location */
  int line, col;        /* 1-based; col counts bytes */
} tc_loc;

/* Fill err (if non-NULL) with a located error. Only the first error is kept: if err already
 * holds one (status != TILEC_OK), nothing changes. */
void tc_error_at(tilec_error *err, tilec_status st, tc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tc_verror_at(tilec_error *err, tilec_status st, tc_loc loc, const char *fmt, va_list ap);
/* An error with no program location. */
void tc_error(tilec_error *err, tilec_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Add a note line ("note: ...") under an already rendered error. */
void tc_error_note(tilec_error *err, tc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tc_error_clear(tilec_error *err);
/* "file:line:col: KIND: message", the source line and a caret under the column, into out (as
 * tilec_error.rendered is made); without a location, "KIND: message". */
void tc_render_at(char *out, size_t cap, tc_loc loc, const char *kind, const char *message);

/* Edit distance for "did you mean" suggestions (bounded: returns limit+1 when above). */
int tc_edit_distance(const char *a, const char *b, int limit);

#endif
