/* lex.h: the Python 3 tokenizer. Any valid Python file tokenizes; the reader then takes the
 * subset it needs. Produces the whole token array at once, with INDENT/DEDENT and NEWLINE as
 * Python's tokenizer makes them (no NEWLINE inside brackets or after a backslash). */
#ifndef TILEC_LEX_H
#define TILEC_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/diag.h"

/* Operators and delimiters: X(id, spelling). Longest match wins. */
#define TC_PUNCT_LIST(X)                                                                           \
  X(LPAREN, "(") X(RPAREN, ")") X(LBRACKET, "[") X(RBRACKET, "]") X(LBRACE, "{") X(RBRACE, "}")  \
  X(COLON, ":") X(COMMA, ",") X(SEMI, ";") X(DOT, ".") X(ELLIPSIS, "...") X(ARROW, "->")         \
  X(AT, "@") X(ASSIGN, "=") X(WALRUS, ":=")                                                       \
  X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(DSLASH, "//") X(PERCENT, "%")         \
  X(DSTAR, "**") X(AMP, "&") X(PIPE, "|") X(CARET, "^") X(TILDE, "~") X(LSHIFT, "<<")           \
  X(RSHIFT, ">>") X(LT, "<") X(GT, ">") X(LE, "<=") X(GE, ">=") X(EQ, "==") X(NE, "!=")         \
  X(PLUS_EQ, "+=") X(MINUS_EQ, "-=") X(STAR_EQ, "*=") X(SLASH_EQ, "/=") X(DSLASH_EQ, "//=")     \
  X(PERCENT_EQ, "%=") X(DSTAR_EQ, "**=") X(AMP_EQ, "&=") X(PIPE_EQ, "|=") X(CARET_EQ, "^=")     \
  X(LSHIFT_EQ, "<<=") X(RSHIFT_EQ, ">>=") X(AT_EQ, "@=")

typedef enum tc_punct {
  TC_P_NONE = 0,
#define X(id, sp) TC_P_##id,
  TC_PUNCT_LIST(X)
#undef X
  TC_P_COUNT
} tc_punct;
const char *tc_punct_spelling(tc_punct p);

/* Python keywords: X(id, spelling). Soft keywords (match, case, type, _) are plain names. */
#define TC_KEYWORD_LIST(X)                                                                         \
  X(FALSE, "False") X(NONE, "None") X(TRUE, "True") X(AND, "and") X(AS, "as") X(ASSERT, "assert") \
  X(ASYNC, "async") X(AWAIT, "await") X(BREAK, "break") X(CLASS, "class") X(CONTINUE, "continue") \
  X(DEF, "def") X(DEL, "del") X(ELIF, "elif") X(ELSE, "else") X(EXCEPT, "except")                 \
  X(FINALLY, "finally") X(FOR, "for") X(FROM, "from") X(GLOBAL, "global") X(IF, "if")             \
  X(IMPORT, "import") X(IN, "in") X(IS, "is") X(LAMBDA, "lambda") X(NONLOCAL, "nonlocal")         \
  X(NOT, "not") X(OR, "or") X(PASS, "pass") X(RAISE, "raise") X(RETURN, "return") X(TRY, "try")   \
  X(WHILE, "while") X(WITH, "with") X(YIELD, "yield")

typedef enum tc_keyword {
  TC_KW_NONE_ = 0, /* not a keyword */
#define X(id, sp) TC_KW_##id,
  TC_KEYWORD_LIST(X)
#undef X
  TC_KW_COUNT
} tc_keyword;

typedef enum tc_token_kind {
  TC_TK_EOF,
  TC_TK_NEWLINE,
  TC_TK_INDENT,
  TC_TK_DEDENT,
  TC_TK_NAME,    /* identifier or keyword (kw != TC_KW_NONE_) */
  TC_TK_INT,     /* ival; overflow set when the literal does not fit in int64 */
  TC_TK_FLOAT,   /* fval */
  TC_TK_IMAG,    /* fval is the imaginary part: 3j */
  TC_TK_STRING,  /* str/str_len: the decoded value; adjacent literals are separate tokens */
  TC_TK_PUNCT    /* punct */
} tc_token_kind;

enum { TC_STR_BYTES = 1, TC_STR_RAW = 2, TC_STR_FORMAT = 4, TC_STR_TRIPLE = 8 };

typedef struct tc_token {
  /* 64 bytes: the reader holds one per token until the parse ends, so its size is most of the
   * reader's memory per source byte (sources are at most TC_MAX_SOURCE_BYTES, so lengths fit 32 bits). */
  tc_token_kind kind : 8;
  tc_keyword kw : 8;
  tc_punct punct : 8;
  unsigned overflow : 1;
  unsigned str_flags : 7; /* TC_STR_* */
  uint32_t len;           /* source bytes */
  uint32_t str_len;
  tc_loc loc;             /* where the token starts */
  const char *start;      /* into the source text */
  int64_t ival;
  double fval;
  const char *str;        /* decoded string literal (arena), NUL-terminated; may contain NULs */
} tc_token;

typedef struct tc_token_array {
  tc_token *v;
  size_t n;
} tc_token_array;

/* Tokenize the whole source. Returns false with err filled (TILEC_ERROR_PROGRAM and the place)
 * on a lexing error: an unterminated string, an inconsistent dedent, a stray character, ...
 * Tokens and decoded strings are allocated from the arena. On failure `out` holds the tokens
 * before the error (not ended by EOF), so a caller can look for an earlier syntax error. */
bool tc_lex(tc_arena *arena, const tc_source *src, tc_token_array *out, tilec_error *err);

/* The same, but the token array is malloc'd (the caller frees out->v, also on failure) while
 * decoded strings stay in the arena: tc_read frees the tokens once the tree is built. */
bool tc_lex_heap(tc_arena *arena, const tc_source *src, tc_token_array *out, tilec_error *err);

/* The largest source the reader accepts (an error at 1:1 beyond it), which bounds its memory. */
#define TC_MAX_SOURCE_BYTES ((size_t)8 << 20)

#endif
