#include "util/diag.h"

#include <stdio.h>
#include <string.h>

void tc_error_clear(tilec_error *err) {
  if (err) memset(err, 0, sizeof *err);
}

static void copy_trunc(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

/* Append the source line of loc and a caret under its column. */
static void render_excerpt(char *out, size_t cap, tc_loc loc) {
  if (!loc.src || !loc.src->text || loc.line <= 0) return;
  const char *p = loc.src->text, *end = loc.src->text + loc.src->len;
  for (int l = 1; l < loc.line && p < end; p++)
    if (*p == '\n') l++;
  const char *eol = p;
  while (eol < end && *eol != '\n') eol++;
  size_t used = strlen(out);
  int linelen = (int)(eol - p);
  if (linelen > 300) linelen = 300; /* keep very long lines readable */
  int w = snprintf(out + used, cap - used, "  %.*s\n  ", linelen, p);
  if (w < 0 || (size_t)w >= cap - used) return;
  used += (size_t)w;
  int col = loc.col > 0 ? loc.col : 1;
  for (int i = 1; i < col && i <= linelen && used + 2 < cap; i++)
    out[used++] = (p[i - 1] == '\t') ? '\t' : ' ';
  if (used + 2 < cap) {
    out[used++] = '^';
    out[used++] = '\n';
  }
  out[used] = 0;
}

void tc_render_at(char *out, size_t cap, tc_loc loc, const char *kind, const char *message) {
  if (!cap) return;
  if (loc.src) {
    snprintf(out, cap, "%s:%d:%d: %s: %s\n", loc.src->name ? loc.src->name : "<input>", loc.line, loc.col, kind, message);
    render_excerpt(out, cap, loc);
  } else {
    snprintf(out, cap, "%s: %s\n", kind, message);
  }
}

void tc_verror_at(tilec_error *err, tilec_status st, tc_loc loc, const char *fmt, va_list ap) {
  if (!err || err->status != TILEC_OK) return;
  err->status = st;
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  if (loc.src) {
    copy_trunc(err->file, sizeof err->file, loc.src->name ? loc.src->name : "<input>");
    err->line = loc.line;
    err->col = loc.col;
    tc_render_at(err->rendered, sizeof err->rendered, loc, "error", err->message);
  } else {
    err->file[0] = 0;
    err->line = err->col = 0;
    snprintf(err->rendered, sizeof err->rendered, "error: %s\n", err->message);
  }
}

void tc_error_at(tilec_error *err, tilec_status st, tc_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(err, st, loc, fmt, ap);
  va_end(ap);
}

void tc_error(tilec_error *err, tilec_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_loc none = {0};
  tc_verror_at(err, st, none, fmt, ap);
  va_end(ap);
}

void tc_error_note(tilec_error *err, tc_loc loc, const char *fmt, ...) {
  if (!err) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t used = strlen(err->rendered);
  if (loc.src)
    snprintf(err->rendered + used, sizeof err->rendered - used, "%s:%d:%d: note: %s\n",
             loc.src->name ? loc.src->name : "<input>", loc.line, loc.col, msg);
  else
    snprintf(err->rendered + used, sizeof err->rendered - used, "note: %s\n", msg);
  if (loc.src) render_excerpt(err->rendered, sizeof err->rendered, loc);
}

int tc_edit_distance(const char *a, const char *b, int limit) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return limit + 1;
  int row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int prev = row[0], best = (int)i;
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int cur = row[j];
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = prev + cost;
      if (row[j] + 1 < v) v = row[j] + 1;
      if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
      row[j] = v;
      prev = cur;
      if (v < best) best = v;
    }
    if (best > limit) return limit + 1;
  }
  return row[lb];
}
