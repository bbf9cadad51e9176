/* parse_internal.h: what the statement parser (parse.c) and the expression parser
 * (parse_expr.c) share. Not part of the reader's interface. */
#ifndef TILEC_PARSE_INTERNAL_H
#define TILEC_PARSE_INTERNAL_H

#include <setjmp.h>

#include "front/ast.h"

/* Expression nesting beyond this is an error, so no input can exhaust the stack (brackets are
 * also limited to 200 levels by the lexer and blocks to 100 by the indentation stack). */
enum { TC_PARSE_MAX_DEPTH = 1000 };

typedef struct tc_parser {
  tc_arena *arena;
  const tc_source *src;
  const tc_token *t;
  size_t n, pos;
  tilec_error *err;  /* the error of the statement being parsed */
  size_t err_pos;    /* token index of the last syntax error */
  jmp_buf *jb;       /* where a syntax error escapes to */
  int depth;
} tc_parser;

/* A growable list of nodes in the arena. */
typedef struct tc_vec {
  tc_ast **v;
  int n, cap;
} tc_vec;
void tc_vec_push(tc_parser *P, tc_vec *vec, tc_ast *node);
tc_ast_list tc_vec_list(tc_vec *vec);

/* ---- tokens ---- */
static inline const tc_token *tc_p_peek(const tc_parser *P) { return &P->t[P->pos]; }
static inline const tc_token *tc_p_peek_at(const tc_parser *P, size_t k) {
  size_t i = P->pos + k;
  return &P->t[i < P->n ? i : P->n - 1];
}
static inline void tc_p_advance(tc_parser *P) {
  if (P->pos + 1 < P->n) P->pos++;
}
static inline bool tc_tok_punct(const tc_token *t, tc_punct p) {
  return t->kind == TC_TK_PUNCT && t->punct == p;
}
static inline bool tc_tok_kw(const tc_token *t, tc_keyword kw) {
  return t->kind == TC_TK_NAME && t->kw == kw;
}
static inline bool tc_p_punct(const tc_parser *P, tc_punct p) { return tc_tok_punct(tc_p_peek(P), p); }
static inline bool tc_p_kw(const tc_parser *P, tc_keyword kw) { return tc_tok_kw(tc_p_peek(P), kw); }
bool tc_p_accept(tc_parser *P, tc_punct p);
bool tc_p_accept_kw(tc_parser *P, tc_keyword kw);
/* Expect a punctuator; the error is CPython's "expected 'x'" unless msg says otherwise. */
void tc_p_expect(tc_parser *P, tc_punct p, const char *msg);
/* Is t a NAME that is not a keyword (soft keywords are names)? */
static inline bool tc_tok_ident(const tc_token *t) { return t->kind == TC_TK_NAME && t->kw == TC_KW_NONE_; }
/* Can t begin an operand (used for "Perhaps you forgot a comma?")? */
bool tc_tok_starts_operand(const tc_token *t);
/* Can t begin an expression at all (operators and keywords such as `not` included)? */
bool tc_tok_starts_expression(const tc_token *t);

_Noreturn void tc_p_error_at(tc_parser *P, size_t tok_index, tc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
_Noreturn void tc_p_unexpected_indent(tc_parser *P);
/* A syntax error at the current token. */
#define tc_p_error(P, ...) tc_p_error_at((P), (P)->pos, tc_p_peek(P)->loc, __VA_ARGS__)
#define tc_p_error_node(P, node, ...) tc_p_error_at((P), (P)->pos, (node)->loc, __VA_ARGS__)

/* ---- nodes ---- */
tc_ast *tc_p_node(tc_parser *P, tc_ast_kind kind, tc_loc loc);
/* Set node->end_line/end_col to the end of the last real token consumed. Returns node. */
tc_ast *tc_p_finish(tc_parser *P, tc_ast *node);
tc_loc tc_tok_end(const tc_token *t);
char *tc_p_ident(tc_parser *P, const tc_token *t);
/* The name CPython uses for an expression in "cannot assign to %s". */
const char *tc_expr_name(const tc_ast *e);

/* ---- expressions (parse_expr.c) ---- */
tc_ast *tc_p_expression(tc_parser *P);
tc_ast *tc_p_named_expression(tc_parser *P);
tc_ast *tc_p_star_expressions(tc_parser *P);
tc_ast *tc_p_star_expression_or_yield(tc_parser *P); /* annotated_rhs: yield_expr | star_expressions */
tc_ast *tc_p_yield_expr(tc_parser *P);
tc_ast *tc_p_bitwise_or(tc_parser *P);
tc_ast *tc_p_disjunction(tc_parser *P);
tc_ast *tc_p_star_targets(tc_parser *P); /* for/comprehension targets (stop before `in`) */
void tc_p_arguments(tc_parser *P, tc_vec *args, tc_vec *keywords, tc_punct close);
void tc_p_params(tc_parser *P, tc_ast_params *out, bool annotations, tc_punct close);

typedef enum tc_target_ctx { TC_TARGET_STORE, TC_TARGET_DEL, TC_TARGET_FOR } tc_target_ctx;
void tc_p_check_target(tc_parser *P, tc_ast *e, tc_target_ctx ctx);

#endif
