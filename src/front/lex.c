/* lex.c: the Python 3 tokenizer (see lex.h).
 *
 * One pass over the bytes. Indentation follows CPython: a tab moves to the next multiple of 8,
 * a form feed resets the column, and a second measure that counts every whitespace character
 * as 1 catches indentation that is only consistent for one tab size. Errors longjmp back to
 * tc_lex, which returns them as values. */
#include "front/lex.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
  MAX_INDENT = 100,   /* CPython's MAXINDENT */
  MAX_BRACKETS = 200, /* CPython's MAXLEVEL */
  MAX_FSTRING_NEST = 32
};

typedef struct lexer {
  tc_arena *arena;
  const tc_source *src;
  const char *p, *end;
  int line;
  const char *line_start;
  tc_token *toks;
  size_t n, cap;
  int indent[MAX_INDENT + 1], altindent[MAX_INDENT + 1], nindent;
  char bracket[MAX_BRACKETS];
  tc_loc bracket_loc[MAX_BRACKETS];
  int depth;
  tilec_error *err;
  jmp_buf jb;
} lexer;

static const char *const punct_spellings[] = {
    "",
#define X(id, sp) sp,
    TC_PUNCT_LIST(X)
#undef X
};

static const unsigned char punct_lens[] = {
    0,
#define X(id, sp) sizeof(sp) - 1,
    TC_PUNCT_LIST(X)
#undef X
};

const char *tc_punct_spelling(tc_punct p) {
  if ((int)p <= 0 || p >= TC_P_COUNT) return "";
  return punct_spellings[p];
}

static const char *const keyword_spellings[] = {
    "",
#define X(id, sp) sp,
    TC_KEYWORD_LIST(X)
#undef X
};

static const unsigned char keyword_lens[] = {
    0,
#define X(id, sp) sizeof(sp) - 1,
    TC_KEYWORD_LIST(X)
#undef X
};

static tc_loc loc_at(const lexer *L, const char *p) {
  tc_loc loc = {L->src, L->line, (int)(p - L->line_start) + 1};
  return loc;
}

static _Noreturn __attribute__((format(printf, 3, 4))) void lex_error(lexer *L, tc_loc loc,
                                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(L->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
  longjmp(L->jb, 1);
}

static int at(const lexer *L, const char *q) { return q < L->end ? (unsigned char)*q : 0; }

static bool is_id_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static bool is_id_char(int c) { return is_id_start(c) || (c >= '0' && c <= '9'); }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The first byte of [p, e) that does not begin a valid UTF-8 sequence, with CPython's reason
 * ('utf-8' codec: overlong forms and surrogates are invalid too), or NULL. */
static const char *bad_utf8(const char *p, const char *e, const char **why, int *nbad) {
  *nbad = 1;
  while (p < e) {
    unsigned char c = (unsigned char)*p;
    if (c < 0x80) {
      p++;
      continue;
    }
    int need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
    if (!need) {
      *why = "invalid start byte";
      return p;
    }
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (int i = 1; i <= need; i++) {
      unsigned char d = p + i < e ? (unsigned char)p[i] : 0;
      if (p + i >= e || d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xBF)) {
        *why = p + i >= e ? "unexpected end of data" : "invalid continuation byte";
        *nbad = i;
        return p;
      }
    }
    p += need + 1;
  }
  return NULL;
}

static tc_token *push(lexer *L, tc_token_kind kind, tc_loc loc, const char *start, size_t len) {
  if (L->n == L->cap) {
    /* realloc, not the arena: a grown arena array would keep every smaller copy alive */
    size_t ncap = L->cap + L->cap / 2 + 256;
    tc_token *v = realloc(L->toks, ncap * sizeof(tc_token));
    if (!v) {
      tc_error(L->err, TILEC_ERROR_NOMEM, "out of memory while reading %s", L->src->name ? L->src->name : "<input>");
      longjmp(L->jb, 1);
    }
    L->toks = v;
    L->cap = ncap;
  }
  tc_token *t = &L->toks[L->n++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->loc = loc;
  t->start = start;
  t->len = len;
  return t;
}

/* Advance the line counter over the newlines in [from, to). */
static void count_lines(lexer *L, const char *from, const char *to) {
  for (const char *q = from; q < to; q++)
    if (*q == '\n') {
      L->line++;
      L->line_start = q + 1;
    }
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* CPython accepts a number directly followed by some keywords (`1if x else 2`); any other
 * identifier character right after a number is an error. */
static void verify_end_of_number(lexer *L, const char *q, const char *start, const char *kind) {
  static const char *const kws[] = {"and", "else", "for", "if", "in", "is", "not", "or"};
  int c = at(L, q);
  if (!is_id_char(c)) return;
  for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++) {
    size_t n = strlen(kws[i]);
    if ((size_t)(L->end - q) >= n && memcmp(q, kws[i], n) == 0) return;
  }
  lex_error(L, loc_at(L, start), "invalid %s literal", kind);
}

static const char *scan_prefixed_int(lexer *L, const char *start, tc_token *t) {
  int base = 16;
  const char *kind = "hexadecimal";
  int pc = start[1] | 0x20;
  if (pc == 'o') base = 8, kind = "octal";
  if (pc == 'b') base = 2, kind = "binary";
  const char *q = start + 2;
  uint64_t v = 0;
  double fv = 0;
  bool overflow = false;
  int ndigits = 0;
  for (;;) {
    int c = at(L, q);
    if (c == '_') {
      q++;
      c = at(L, q);
      int d = hex_value(c);
      if (d < 0 || d >= base) {
        if (base < 10 && is_digit(c))
          lex_error(L, loc_at(L, q), "invalid digit '%c' in %s literal", c, kind);
        lex_error(L, loc_at(L, start), "invalid %s literal", kind);
      }
    }
    int d = hex_value(c);
    if (d < 0) break;
    if (d >= base) {
      if (is_digit(c)) lex_error(L, loc_at(L, q), "invalid digit '%c' in %s literal", c, kind);
      break;
    }
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) overflow = true;
    v = v * (uint64_t)base + (uint64_t)d;
    fv = fv * base + d;
    ndigits++;
    q++;
  }
  if (ndigits == 0) lex_error(L, loc_at(L, start), "invalid %s literal", kind);
  verify_end_of_number(L, q, start, kind);
  if (v > (uint64_t)INT64_MAX) overflow = true;
  t->kind = TC_TK_INT;
  t->ival = overflow ? INT64_MAX : (int64_t)v;
  t->overflow = overflow;
  t->fval = fv;
  return q;
}

/* digitpart: digit (["_"] digit)* */
static const char *scan_digitpart(lexer *L, const char *q, const char *start) {
  while (is_digit(at(L, q))) {
    q++;
    if (at(L, q) == '_') {
      if (!is_digit(at(L, q + 1))) lex_error(L, loc_at(L, start), "invalid decimal literal");
      q++;
    }
  }
  return q;
}

static const char *scan_number(lexer *L, const char *start, tc_token *t) {
  int c1 = at(L, start + 1) | 0x20;
  if (*start == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) return scan_prefixed_int(L, start, t);
  const char *q = start;
  bool is_float = false;
  if (*q != '.') q = scan_digitpart(L, q, start);
  if (at(L, q) == '.') {
    is_float = true;
    q++;
    if (is_digit(at(L, q))) q = scan_digitpart(L, q, start);
  }
  if ((at(L, q) | 0x20) == 'e') {
    const char *e = q + 1;
    if (at(L, e) == '+' || at(L, e) == '-') e++;
    if (is_digit(at(L, e))) {
      q = scan_digitpart(L, e, start);
      is_float = true;
    } else if (at(L, e) == '+' || at(L, e) == '-' || e > q + 1) {
      lex_error(L, loc_at(L, start), "invalid decimal literal");
    }
  }
  bool imag = false;
  if ((at(L, q) | 0x20) == 'j') {
    imag = true;
    q++;
    verify_end_of_number(L, q, start, "imaginary");
  } else {
    verify_end_of_number(L, q, start, "decimal");
  }
  /* Copy without the underscores for the conversion. */
  size_t n = (size_t)(q - start);
  char small[128];
  char *buf = n < sizeof small ? small : tc_arena_alloc(L->arena, n + 1);
  size_t k = 0;
  for (const char *s = start; s < q; s++)
    if (*s != '_' && (*s | 0x20) != 'j') buf[k++] = *s;
  buf[k] = 0;
  if (imag || is_float) {
    t->kind = imag ? TC_TK_IMAG : TC_TK_FLOAT;
    t->fval = strtod(buf, NULL);
    return q;
  }
  /* A decimal integer: no leading zeros unless it is all zeros. */
  if (buf[0] == '0') {
    for (size_t i = 0; i < k; i++)
      if (buf[i] != '0')
        lex_error(L, loc_at(L, start),
                  "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
                  "for octal integers");
  }
  uint64_t v = 0;
  bool overflow = false;
  double fv = 0;
  for (size_t i = 0; i < k; i++) {
    unsigned d = (unsigned)(buf[i] - '0');
    if (v > (UINT64_MAX - d) / 10) overflow = true;
    v = v * 10 + d;
    fv = fv * 10 + d;
  }
  if (v > (uint64_t)INT64_MAX) overflow = true;
  t->kind = TC_TK_INT;
  t->ival = overflow ? INT64_MAX : (int64_t)v;
  t->overflow = overflow;
  t->fval = fv;
  return q;
}

/* ---- strings ---------------------------------------------------------------------------- */

typedef struct str_scan {
  const char *tok_start; /* the prefix or the opening quote */
  tc_loc tok_loc;
  char quote;
  bool triple;
  bool raw;
  int line; /* line being scanned (for "detected at line N") */
} str_scan;

static _Noreturn void unterminated(lexer *L, const str_scan *s, int detected_line) {
  if (s->triple)
    lex_error(L, s->tok_loc, "unterminated triple-quoted string literal (detected at line %d)",
              detected_line);
  lex_error(L, s->tok_loc, "unterminated string literal (detected at line %d)", detected_line);
}

static int last_line(const lexer *L) {
  int line = L->line;
  for (const char *q = L->p; q < L->end; q++)
    if (*q == '\n') line++;
  /* CPython reports the line of the end of the file; a final newline starts no new line. */
  if (L->end > L->src->text && L->end[-1] == '\n') line--;
  return line;
}

static const char *scan_string_body(lexer *L, str_scan *s, const char *q, bool fstr, int nest);

/* Is the quote at q the start of a closing delimiter of s? */
static bool is_closing(const lexer *L, const str_scan *s, const char *q) {
  if (*q != s->quote) return false;
  return !s->triple || (at(L, q + 1) == s->quote && at(L, q + 2) == s->quote);
}

/* The expression part of an f-string replacement field, after its '{'. Nested strings may use
 * any quote (as in Python 3.12). Returns the position after the field's closing '}', or the
 * position of the outer string's closing quote when the field is left open (the f-string is
 * then malformed, which the tokenizer does not judge). */
static const char *scan_fstring_field(lexer *L, str_scan *outer, const char *q, int nest) {
  if (nest > MAX_FSTRING_NEST) lex_error(L, outer->tok_loc, "f-string: expressions nested too deeply");
  int depth = 0;
  for (;;) {
    if (q >= L->end) unterminated(L, outer, last_line(L));
    int c = (unsigned char)*q;
    if (c == '\n') {
      if (!outer->triple) unterminated(L, outer, outer->line);
      outer->line++;
      q++;
    } else if (c == '\'' || c == '"') {
      bool nested_f = false, nested_raw = false;
      for (const char *b = q - 1; b >= q - 2 && is_id_char((unsigned char)*b); b--) {
        if ((*b | 0x20) == 'f') nested_f = true;
        if ((*b | 0x20) == 'r') nested_raw = true;
      }
      str_scan inner = *outer;
      inner.raw = nested_raw;
      inner.quote = (char)c;
      inner.triple = at(L, q + 1) == c && at(L, q + 2) == c;
      q = scan_string_body(L, &inner, q + (inner.triple ? 3 : 1), nested_f, nest + 1);
      outer->line = inner.line;
      q += inner.triple ? 3 : 1;
    } else if (c == '(' || c == '[' || c == '{') {
      depth++;
      q++;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      depth--;
      q++;
    } else if (c == '}') {
      return q + 1;
    } else if (c == ':' && depth == 0 && at(L, q + 1) != '=') {
      /* Format spec: literal text with nested fields, up to the field's '}'. */
      q++;
      for (;;) {
        if (q >= L->end) unterminated(L, outer, last_line(L));
        if (is_closing(L, outer, q)) return q;
        if (*q == '\n') {
          if (!outer->triple) unterminated(L, outer, outer->line);
          outer->line++;
        }
        if (*q == '{') {
          q = scan_fstring_field(L, outer, q + 1, nest + 1);
          continue;
        }
        if (*q == '}') return q + 1;
        q++;
      }
    } else {
      q++;
    }
  }
}

/* Scan a string body starting after the opening quote(s); returns the closing quote. */
static const char *scan_string_body(lexer *L, str_scan *s, const char *q, bool fstr, int nest) {
  for (;;) {
    if (q >= L->end) unterminated(L, s, s->triple ? last_line(L) : s->line);
    int c = (unsigned char)*q;
    if (c == '\\') {
      q++;
      /* In an f-string a brace after a backslash keeps its meaning, and \N{...} is one escape. */
      if (fstr && q < L->end && (*q == '{' || *q == '}')) continue;
      if (fstr && !s->raw && at(L, q) == 'N' && at(L, q + 1) == '{') {
        const char *r = q + 2;
        while (r < L->end && *r != '}' && *r != s->quote && *r != '\n') r++;
        if (at(L, r) == '}') {
          q = r + 1;
          continue;
        }
      }
      if (q < L->end) {
        if (*q == '\n') s->line++;
        if (*q == '\r' && at(L, q + 1) == '\n') q++, s->line++;
        q++;
      }
      continue;
    }
    if (c == '\n') {
      if (!s->triple) unterminated(L, s, s->line);
      s->line++;
      q++;
      continue;
    }
    if (c == s->quote && is_closing(L, s, q)) return q;
    if (fstr && c == '{') {
      if (at(L, q + 1) == '{') {
        q += 2;
        continue;
      }
      q = scan_fstring_field(L, s, q + 1, nest + 1);
      continue;
    }
    q++;
  }
}

static void put_utf8(char *out, size_t *k, uint32_t cp) {
  if (cp < 0x80) {
    out[(*k)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*k)++] = (char)(0xC0 | (cp >> 6));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*k)++] = (char)(0xE0 | (cp >> 12));
    out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*k)++] = (char)(0xF0 | (cp >> 18));
    out[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  }
}

/* Decode the body [b, e) of a literal that is not an f-string. Decoding never grows the text. */
static void decode_string(lexer *L, tc_token *t, const str_scan *s, const char *b, const char *e) {
  bool raw = t->str_flags & TC_STR_RAW, bytes = t->str_flags & TC_STR_BYTES;
  char *out = tc_arena_alloc(L->arena, (size_t)(e - b) + 1);
  size_t k = 0;
  /* A bad escape stops decoding, but the token may still reach the parser (tc_read parses the
   * tokens before a lexing error): it must hold a string, never NULL. */
  out[0] = 0;
  t->str = out;
  t->str_len = 0;
  const char *codec = bytes ? "(value error)" : "(unicode error) 'unicodeescape' codec can't decode bytes in";
  for (const char *q = b; q < e;) {
    unsigned char c = (unsigned char)*q;
    if (bytes && c >= 0x80) lex_error(L, s->tok_loc, "bytes can only contain ASCII literal characters");
    if (c == '\r' && q + 1 < e && q[1] == '\n') {
      q++;
      continue;
    }
    if (c != '\\' || raw) {
      out[k++] = (char)c;
      q++;
      continue;
    }
    int pos = (int)(q - b);
    q++;
    if (q >= e) { /* cannot happen: a backslash always escapes the next character */
      out[k++] = '\\';
      break;
    }
    c = (unsigned char)*q;
    switch (c) {
    case '\n': q++; continue;
    case '\r': q += (q + 1 < e && q[1] == '\n') ? 2 : 1; continue;
    case '\\': out[k++] = '\\'; q++; continue;
    case '\'': out[k++] = '\''; q++; continue;
    case '"': out[k++] = '"'; q++; continue;
    case 'a': out[k++] = '\a'; q++; continue;
    case 'b': out[k++] = '\b'; q++; continue;
    case 'f': out[k++] = '\f'; q++; continue;
    case 'n': out[k++] = '\n'; q++; continue;
    case 'r': out[k++] = '\r'; q++; continue;
    case 't': out[k++] = '\t'; q++; continue;
    case 'v': out[k++] = '\v'; q++; continue;
    default: break;
    }
    if (c >= '0' && c <= '7') {
      uint32_t v = 0;
      for (int i = 0; i < 3 && q < e && *q >= '0' && *q <= '7'; i++, q++) v = v * 8 + (uint32_t)(*q - '0');
      if (bytes) out[k++] = (char)(v & 0xFF);
      else put_utf8(out, &k, v);
      continue;
    }
    int want = c == 'x' ? 2 : (!bytes && c == 'u') ? 4 : (!bytes && c == 'U') ? 8 : 0;
    if (want) {
      uint32_t v = 0;
      int got = 0;
      q++;
      while (got < want && q < e && hex_value((unsigned char)*q) >= 0) {
        v = v * 16 + (uint32_t)hex_value((unsigned char)*q);
        q++;
        got++;
      }
      if (got < want) {
        if (bytes) lex_error(L, s->tok_loc, "%s invalid \\x escape at position %d", codec, pos);
        const char *form = c == 'x' ? "\\xXX" : c == 'u' ? "\\uXXXX" : "\\UXXXXXXXX";
        lex_error(L, s->tok_loc, "%s position %d-%d: truncated %s escape", codec, pos, pos + 1 + got, form);
      }
      if (bytes) {
        out[k++] = (char)v;
      } else {
        if (v > 0x10FFFF)
          lex_error(L, s->tok_loc, "%s position %d-%d: illegal Unicode character", codec, pos, pos + 1 + got);
        put_utf8(out, &k, v);
      }
      continue;
    }
    if (!bytes && c == 'N') {
      /* \N{NAME}: kept verbatim (no Unicode name table); only its form is checked. */
      const char *r = q + 1;
      if (r < e && *r == '{') {
        while (r < e && *r != '}') r++;
      }
      if (r >= e || *r != '}' || r == q + 2 || q[1] != '{')
        lex_error(L, s->tok_loc, "%s position %d-%d: malformed \\N character escape", codec, pos,
                  (int)(r - b) - 1);
      out[k++] = '\\';
      memcpy(out + k, q, (size_t)(r + 1 - q));
      k += (size_t)(r + 1 - q);
      q = r + 1;
      continue;
    }
    /* An unknown escape keeps its backslash. */
    out[k++] = '\\';
  }
  out[k] = 0;
  t->str = out;
  t->str_len = k;
}

/* Returns the flags of a valid string prefix [p, p+n), or -1. */
static int string_prefix_flags(const char *p, size_t n) {
  if (n == 0 || n > 2) return -1;
  int flags = 0;
  for (size_t i = 0; i < n; i++) {
    int c = p[i] | 0x20, f;
    if (c == 'r') f = TC_STR_RAW;
    else if (c == 'b') f = TC_STR_BYTES;
    else if (c == 'f') f = TC_STR_FORMAT;
    else if (c == 'u') f = 0x100;
    else return -1;
    if (flags & f) return -1;
    flags |= f;
  }
  if ((flags & 0x100) && n > 1) return -1;                      /* u only alone */
  if ((flags & TC_STR_BYTES) && (flags & TC_STR_FORMAT)) return -1; /* no bf */
  return flags & ~0x100;
}

static const char *scan_string(lexer *L, const char *start, const char *quote_at, int flags) {
  str_scan s = {start, loc_at(L, start), *quote_at, false, (flags & TC_STR_RAW) != 0, L->line};
  s.triple = at(L, quote_at + 1) == s.quote && at(L, quote_at + 2) == s.quote;
  const char *body = quote_at + (s.triple ? 3 : 1);
  const char *close = scan_string_body(L, &s, body, flags & TC_STR_FORMAT, 0);
  const char *after = close + (s.triple ? 3 : 1);
  tc_token *t = push(L, TC_TK_STRING, s.tok_loc, start, (size_t)(after - start));
  t->str_flags = flags | (s.triple ? TC_STR_TRIPLE : 0);
  if (flags & TC_STR_FORMAT) {
    t->str = tc_arena_strndup(L->arena, body, (size_t)(close - body));
    t->str_len = (size_t)(close - body);
  } else {
    decode_string(L, t, &s, body, close);
  }
  count_lines(L, start, after);
  return after;
}

/* ---- operators -------------------------------------------------------------------------- */

static tc_punct match_punct(const lexer *L, const char *q, size_t *len) {
  tc_punct best = TC_P_NONE;
  size_t best_len = 0;
  size_t avail = (size_t)(L->end - q);
  for (int i = 1; i < TC_P_COUNT; i++) {
    const char *sp = punct_spellings[i];
    size_t n = punct_lens[i];
    if (sp[0] == *q && n > best_len && n <= avail && memcmp(q, sp, n) == 0) {
      best = (tc_punct)i;
      best_len = n;
    }
  }
  *len = best_len;
  return best;
}

static void open_bracket(lexer *L, char c, tc_loc loc) {
  if (L->depth >= MAX_BRACKETS) lex_error(L, loc, "too many nested parentheses");
  L->bracket[L->depth] = c;
  L->bracket_loc[L->depth] = loc;
  L->depth++;
}

static void close_bracket(lexer *L, char c, tc_loc loc) {
  if (L->depth == 0) lex_error(L, loc, "unmatched '%c'", c);
  char o = L->bracket[L->depth - 1];
  char want = o == '(' ? ')' : o == '[' ? ']' : '}';
  if (c != want) {
    tc_loc ol = L->bracket_loc[L->depth - 1];
    if (ol.line != loc.line)
      lex_error(L, loc, "closing parenthesis '%c' does not match opening parenthesis '%c' on line %d",
                c, o, ol.line);
    lex_error(L, loc, "closing parenthesis '%c' does not match opening parenthesis '%c'", c, o);
  }
  L->depth--;
}

/* ---- indentation ------------------------------------------------------------------------ */

/* At the start of a logical line (outside brackets): measure the indentation, skip blank and
 * comment-only lines, and emit INDENT/DEDENT. Returns false at the end of the input. */
static bool start_line(lexer *L) {
  for (;;) {
    int col = 0, alt = 0;
    const char *q = L->p;
    for (;; q++) {
      int c = at(L, q);
      if (c == ' ') col++, alt++;
      else if (c == '\t') col = (col / 8 + 1) * 8, alt++;
      else if (c == '\f') col = alt = 0;
      else if (c == '\r' && at(L, q + 1) != '\n') continue; /* a lone CR is whitespace */
      else break;
    }
    if (q >= L->end) {
      L->p = q;
      return false;
    }
    int c = (unsigned char)*q;
    if (c == '#' || c == '\n' || (c == '\r' && at(L, q + 1) == '\n')) {
      while (q < L->end && *q != '\n') q++;
      if (q < L->end) {
        q++;
        L->line++;
        L->line_start = q;
      }
      L->p = q;
      continue;
    }
    L->p = q;
    tc_loc loc = loc_at(L, q);
    /* CPython's places: tab errors point at the last indentation byte, a bad unindent at the
     * end of its line. */
    tc_loc tab_loc = loc;
    if (tab_loc.col > 1) tab_loc.col--;
    tc_loc eol_loc = loc;
    for (const char *e = q; e < L->end && *e != '\n' && *e != '\r'; e++) eol_loc.col++;
    int top = L->indent[L->nindent];
    if (col == top) {
      if (alt != L->altindent[L->nindent])
        lex_error(L, tab_loc, "inconsistent use of tabs and spaces in indentation");
    } else if (col > top) {
      if (L->nindent + 1 >= MAX_INDENT) lex_error(L, loc, "too many levels of indentation");
      if (alt <= L->altindent[L->nindent])
        lex_error(L, tab_loc, "inconsistent use of tabs and spaces in indentation");
      L->nindent++;
      L->indent[L->nindent] = col;
      L->altindent[L->nindent] = alt;
      push(L, TC_TK_INDENT, loc, q, 0);
    } else {
      while (L->nindent > 0 && col < L->indent[L->nindent]) {
        L->nindent--;
        push(L, TC_TK_DEDENT, loc, q, 0);
      }
      if (col != L->indent[L->nindent])
        lex_error(L, eol_loc, "unindent does not match any outer indentation level");
      if (alt != L->altindent[L->nindent])
        lex_error(L, tab_loc, "inconsistent use of tabs and spaces in indentation");
    }
    return true;
  }
}

/* ---- the main loop ---------------------------------------------------------------------- */

static void lex_all(lexer *L) {
  bool line_start = true;
  for (;;) {
    if (line_start) {
      if (!start_line(L)) break;
      line_start = false;
    }
    while (L->p < L->end && (*L->p == ' ' || *L->p == '\t' || *L->p == '\f' ||
                             (*L->p == '\r' && at(L, L->p + 1) != '\n')))
      L->p++;
    if (L->p >= L->end) break;
    const char *q = L->p;
    int c = (unsigned char)*q;
    if (c == '#') {
      while (q < L->end && *q != '\n' && !(*q == '\r' && at(L, q + 1) == '\n')) q++;
      L->p = q;
      continue;
    }
    if (c == '\n' || c == '\r') {
      if (L->depth == 0) push(L, TC_TK_NEWLINE, loc_at(L, q), q, 1);
      if (c == '\r') q++;
      q++;
      L->line++;
      L->line_start = q;
      L->p = q;
      line_start = L->depth == 0;
      continue;
    }
    if (c == '\\') {
      const char *r = q + 1;
      if (at(L, r) == '\r' && at(L, r + 1) == '\n') r++;
      /* At the end of the input CPython points just after the backslash. */
      if (r >= L->end || r + 1 >= L->end) lex_error(L, loc_at(L, q + 1), "unexpected EOF while parsing");
      if (*r != '\n') lex_error(L, loc_at(L, r), "unexpected character after line continuation character");
      L->line++;
      L->line_start = r + 1;
      L->p = r + 1;
      continue;
    }
    tc_loc loc = loc_at(L, q);
    if (is_id_start(c)) {
      const char *r = q;
      bool high = false;
      while (is_id_char(at(L, r))) high |= (unsigned char)*r++ >= 0x80;
      const char *why;
      int nbad, pos;
      const char *bad = high ? bad_utf8(q, r, &why, &nbad) : NULL;
      if (bad) { /* CPython decodes the file first; bad bytes never reach the IR or generated code */
        pos = (int)(bad - L->line_start);
        if (nbad == 1)
          lex_error(L, loc_at(L, bad), "(unicode error) 'utf-8' codec can't decode byte 0x%02x in position %d: %s",
                    (unsigned char)*bad, pos, why);
        lex_error(L, loc_at(L, bad), "(unicode error) 'utf-8' codec can't decode bytes in position %d-%d: %s", pos,
                  pos + nbad - 1, why);
      }
      int qc = at(L, r);
      if (qc == '\'' || qc == '"') {
        int flags = string_prefix_flags(q, (size_t)(r - q));
        if (flags >= 0) {
          L->p = scan_string(L, q, r, flags);
          continue;
        }
      }
      tc_token *t = push(L, TC_TK_NAME, loc, q, (size_t)(r - q));
      size_t n = (size_t)(r - q);
      if (n >= 2 && n <= 8) {
        for (int k = 1; k < TC_KW_COUNT; k++)
          if (keyword_lens[k] == n && keyword_spellings[k][0] == c && memcmp(keyword_spellings[k], q, n) == 0) {
            t->kw = (tc_keyword)k;
            break;
          }
      }
      L->p = r;
      continue;
    }
    if (is_digit(c) || (c == '.' && is_digit(at(L, q + 1)))) {
      tc_token tmp;
      memset(&tmp, 0, sizeof tmp);
      const char *r = scan_number(L, q, &tmp);
      tc_token *t = push(L, tmp.kind, loc, q, (size_t)(r - q));
      t->ival = tmp.ival;
      t->fval = tmp.fval;
      t->overflow = tmp.overflow;
      L->p = r;
      continue;
    }
    if (c == '\'' || c == '"') {
      L->p = scan_string(L, q, q, 0);
      continue;
    }
    size_t plen;
    tc_punct pu = match_punct(L, q, &plen);
    if (pu != TC_P_NONE) {
      if (c == '(' || c == '[' || c == '{') open_bracket(L, (char)c, loc);
      else if (c == ')' || c == ']' || c == '}') close_bracket(L, (char)c, loc);
      tc_token *t = push(L, TC_TK_PUNCT, loc, q, plen);
      t->punct = pu;
      L->p = q + plen;
      continue;
    }
    if (c == 0) lex_error(L, loc, "source code cannot contain null bytes");
    if (c == '!') lex_error(L, loc, "invalid syntax");
    if (c < 0x20 || c == 0x7f) lex_error(L, loc, "invalid non-printable character U+%04X", c);
    lex_error(L, loc, "invalid character '%c' (U+%04X)", c, c);
  }
  tc_loc eof = loc_at(L, L->end);
  if (L->depth > 0) {
    lex_error(L, L->bracket_loc[L->depth - 1], "'%c' was never closed", L->bracket[L->depth - 1]);
  }
  if (L->n > 0 && L->toks[L->n - 1].kind != TC_TK_NEWLINE && L->toks[L->n - 1].kind != TC_TK_DEDENT)
    push(L, TC_TK_NEWLINE, eof, L->end, 0);
  while (L->nindent > 0) {
    L->nindent--;
    push(L, TC_TK_DEDENT, eof, L->end, 0);
  }
  push(L, TC_TK_EOF, eof, L->end, 0);
}

bool tc_lex_heap(tc_arena *arena, const tc_source *src, tc_token_array *out, tilec_error *err) {
  out->v = NULL;
  out->n = 0;
  if (src->len > TC_MAX_SOURCE_BYTES) {
    tc_error_at(err, TILEC_ERROR_PROGRAM, (tc_loc){src, 1, 1},
                "the file is %zu bytes; tilec reads programs of at most %zu bytes (%zu MiB)", src->len,
                TC_MAX_SOURCE_BYTES, TC_MAX_SOURCE_BYTES >> 20);
    return false;
  }
  lexer *L = calloc(1, sizeof *L);
  if (!L) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return false;
  }
  L->arena = arena;
  L->src = src;
  L->p = src->text;
  L->end = src->text + src->len;
  L->line = 1;
  /* A UTF-8 byte order mark is skipped, as CPython does; columns count from after it. */
  if (src->len >= 3 && memcmp(src->text, "\xEF\xBB\xBF", 3) == 0) L->p += 3;
  L->line_start = L->p;
  tilec_error local;
  tc_error_clear(&local);
  L->err = err ? err : &local;
  jmp_buf *saved = arena->oom_jmp;
  arena->oom_jmp = &L->jb;
  volatile bool ok = false;
  if (setjmp(L->jb) == 0) {
    L->cap = src->len / 6 + 64; /* real code has about one token per 5-6 bytes; grows if needed */
    L->toks = malloc(L->cap * sizeof(tc_token));
    if (!L->toks) {
      tc_error(L->err, TILEC_ERROR_NOMEM, "out of memory while reading %s", src->name ? src->name : "<input>");
      longjmp(L->jb, 1);
    }
    lex_all(L);
    ok = true;
  } else if (L->err->status == TILEC_OK) {
    tc_error(L->err, TILEC_ERROR_NOMEM, "out of memory while reading %s", src->name ? src->name : "<input>");
  }
  out->v = L->toks;
  out->n = L->n;
  arena->oom_jmp = saved;
  free(L);
  return ok;
}

bool tc_lex(tc_arena *arena, const tc_source *src, tc_token_array *out, tilec_error *err) {
  tc_token_array heap;
  bool ok = tc_lex_heap(arena, src, &heap, err);
  out->v = NULL;
  out->n = 0;
  if (heap.n > 0) {
    jmp_buf *saved = arena->oom_jmp; /* no longjmp past the heap array */
    arena->oom_jmp = NULL;
    out->v = tc_arena_alloc(arena, heap.n * sizeof(tc_token));
    arena->oom_jmp = saved;
    if (out->v) {
      memcpy(out->v, heap.v, heap.n * sizeof(tc_token));
      out->n = heap.n;
    } else {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory while reading %s", src->name ? src->name : "<input>");
      ok = false;
    }
  }
  free(heap.v);
  return ok;
}
