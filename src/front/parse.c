/* parse.c: a recursive-descent parser for Python 3.11 (statements; expressions are in
 * parse_expr.c). Each parse function carries the grammar rule it implements, in the notation
 * of Python's own grammar file. A syntax error longjmps to the statement being recovered
 * (see tc_parse in ast.h for the recovery rules). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "front/parse_internal.h"

/* ---- infrastructure --------------------------------------------------------------------- */

void tc_vec_push(tc_parser *P, tc_vec *vec, tc_ast *node) {
  if (vec->n == vec->cap) {
    int ncap = vec->cap ? vec->cap * 2 : 4;
    vec->v = tc_arena_grow(P->arena, vec->v, sizeof(tc_ast *) * (size_t)vec->cap,
                           sizeof(tc_ast *) * (size_t)ncap);
    vec->cap = ncap;
  }
  vec->v[vec->n++] = node;
}

tc_ast_list tc_vec_list(tc_vec *vec) {
  tc_ast_list l = {vec->n, vec->v};
  return l;
}

bool tc_p_accept(tc_parser *P, tc_punct p) {
  if (!tc_p_punct(P, p)) return false;
  tc_p_advance(P);
  return true;
}

bool tc_p_accept_kw(tc_parser *P, tc_keyword kw) {
  if (!tc_p_kw(P, kw)) return false;
  tc_p_advance(P);
  return true;
}

void tc_p_expect(tc_parser *P, tc_punct p, const char *msg) {
  if (tc_p_accept(P, p)) return;
  if (msg) tc_p_error(P, "%s", msg);
  if (p == TC_P_RPAREN || p == TC_P_RBRACKET || p == TC_P_RBRACE) tc_p_error(P, "invalid syntax");
  tc_p_error(P, "expected '%s'", tc_punct_spelling(p));
}

bool tc_tok_starts_operand(const tc_token *t) {
  switch (t->kind) {
  case TC_TK_NAME:
    return t->kw == TC_KW_NONE_ || t->kw == TC_KW_TRUE || t->kw == TC_KW_FALSE || t->kw == TC_KW_NONE;
  case TC_TK_INT:
  case TC_TK_FLOAT:
  case TC_TK_IMAG:
  case TC_TK_STRING: return true;
  default: return false;
  }
}

bool tc_tok_starts_expression(const tc_token *t) {
  if (tc_tok_starts_operand(t)) return true;
  if (t->kind == TC_TK_NAME)
    return t->kw == TC_KW_NOT || t->kw == TC_KW_LAMBDA || t->kw == TC_KW_AWAIT;
  if (t->kind != TC_TK_PUNCT) return false;
  switch (t->punct) {
  case TC_P_LPAREN:
  case TC_P_LBRACKET:
  case TC_P_LBRACE:
  case TC_P_MINUS:
  case TC_P_PLUS:
  case TC_P_TILDE:
  case TC_P_STAR:
  case TC_P_ELLIPSIS: return true;
  default: return false;
  }
}

void tc_p_error_at(tc_parser *P, size_t tok_index, tc_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(P->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
  P->err_pos = tok_index;
  longjmp(*P->jb, 1);
}

void tc_p_unexpected_indent(tc_parser *P) {
  /* CPython places it on the last byte of the indentation. */
  tc_loc loc = tc_p_peek(P)->loc;
  if (loc.col > 1) loc.col--;
  tc_p_error_at(P, P->pos, loc, "unexpected indent");
}

tc_ast *tc_p_node(tc_parser *P, tc_ast_kind kind, tc_loc loc) {
  tc_ast *n = TC_NEW(P->arena, tc_ast);
  n->kind = kind;
  n->loc = loc;
  n->end_line = loc.line;
  n->end_col = loc.col;
  return n;
}

tc_loc tc_tok_end(const tc_token *t) {
  tc_loc l = t->loc;
  for (size_t i = 0; i < t->len; i++) {
    if (t->start[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

tc_ast *tc_p_finish(tc_parser *P, tc_ast *node) {
  size_t i = P->pos;
  while (i > 0) {
    const tc_token *t = &P->t[i - 1];
    if (t->kind != TC_TK_NEWLINE && t->kind != TC_TK_INDENT && t->kind != TC_TK_DEDENT) {
      tc_loc end = tc_tok_end(t);
      node->end_line = end.line;
      node->end_col = end.col;
      break;
    }
    i--;
  }
  return node;
}

char *tc_p_ident(tc_parser *P, const tc_token *t) { return tc_arena_strndup(P->arena, t->start, t->len); }

const char *tc_expr_name(const tc_ast *e) {
  switch (e->kind) {
  case TC_AST_ATTRIBUTE: return "attribute";
  case TC_AST_SUBSCRIPT: return "subscript";
  case TC_AST_STARRED: return "starred";
  case TC_AST_NAME: return "name";
  case TC_AST_LIST: return "list";
  case TC_AST_TUPLE: return "tuple";
  case TC_AST_LAMBDA: return "lambda";
  case TC_AST_CALL: return "function call";
  case TC_AST_BOOLOP:
  case TC_AST_BINOP:
  case TC_AST_UNARYOP: return "expression";
  case TC_AST_COMPREHENSION:
    return e->op == TC_P_LBRACKET ? "list comprehension"
           : e->op == TC_P_LPAREN ? "generator expression"
           : e->b                 ? "dict comprehension"
                                  : "set comprehension";
  case TC_AST_DICT: return "dict literal";
  case TC_AST_SET: return "set display";
  case TC_AST_FSTRING: return "f-string expression";
  case TC_AST_BOOL: return e->ival ? "True" : "False";
  case TC_AST_NONE: return "None";
  case TC_AST_ELLIPSIS: return "ellipsis";
  case TC_AST_COMPARE: return "comparison";
  case TC_AST_IFEXP: return "conditional expression";
  case TC_AST_NAMED_EXPR: return "named expression";
  case TC_AST_AWAIT: return "await expression";
  case TC_AST_YIELD: return "yield expression";
  case TC_AST_SLICE: return "slice";
  default: return "literal";
  }
}

/* ---- statements ------------------------------------------------------------------------- */

static void statement(tc_parser *P, tc_vec *out);
static void simple_stmts(tc_parser *P, tc_vec *out);

static bool at_line_end(const tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  return t->kind == TC_TK_NEWLINE || t->kind == TC_TK_EOF || tc_tok_punct(t, TC_P_SEMI);
}

/* block: NEWLINE INDENT statements DEDENT | simple_stmts
 * `what` names the statement for "expected an indented block after ..." */
static tc_ast_list block(tc_parser *P, const char *what, int line) {
  tc_vec body = {0};
  if (tc_p_peek(P)->kind == TC_TK_NEWLINE) {
    tc_p_advance(P);
    if (tc_p_peek(P)->kind != TC_TK_INDENT) {
      /* At the end of the input CPython points at the end of the header line. */
      size_t at = tc_p_peek(P)->kind == TC_TK_EOF ? P->pos - 1 : P->pos;
      tc_p_error_at(P, at, P->t[at].loc, "expected an indented block after %s on line %d", what, line);
    }
    tc_p_advance(P);
    while (tc_p_peek(P)->kind != TC_TK_DEDENT && tc_p_peek(P)->kind != TC_TK_EOF) statement(P, &body);
    tc_p_advance(P); /* DEDENT */
  } else {
    if (tc_p_peek(P)->kind == TC_TK_EOF) tc_p_error(P, "expected an indented block after %s on line %d", what, line);
    simple_stmts(P, &body);
  }
  return tc_vec_list(&body);
}

static void expect_colon(tc_parser *P) { tc_p_expect(P, TC_P_COLON, NULL); }

static bool is_aug_assign(const tc_token *t, tc_punct *binop) {
  if (t->kind != TC_TK_PUNCT) return false;
  static const tc_punct pairs[][2] = {
      {TC_P_PLUS_EQ, TC_P_PLUS},     {TC_P_MINUS_EQ, TC_P_MINUS},   {TC_P_STAR_EQ, TC_P_STAR},
      {TC_P_SLASH_EQ, TC_P_SLASH},   {TC_P_DSLASH_EQ, TC_P_DSLASH}, {TC_P_PERCENT_EQ, TC_P_PERCENT},
      {TC_P_DSTAR_EQ, TC_P_DSTAR},   {TC_P_AMP_EQ, TC_P_AMP},       {TC_P_PIPE_EQ, TC_P_PIPE},
      {TC_P_CARET_EQ, TC_P_CARET},   {TC_P_LSHIFT_EQ, TC_P_LSHIFT}, {TC_P_RSHIFT_EQ, TC_P_RSHIFT},
      {TC_P_AT_EQ, TC_P_AT}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (t->punct == pairs[i][0]) {
      *binop = pairs[i][1];
      return true;
    }
  return false;
}

/* The single target of `=` that is not a tuple or list gets CPython's hint about `==`. */
static void check_assign_target(tc_parser *P, tc_ast *e) {
  if (e->kind != TC_AST_TUPLE && e->kind != TC_AST_LIST && e->kind != TC_AST_NAME &&
      e->kind != TC_AST_ATTRIBUTE && e->kind != TC_AST_SUBSCRIPT && e->kind != TC_AST_STARRED &&
      e->kind != TC_AST_BOOL && e->kind != TC_AST_NONE && e->kind != TC_AST_COMPREHENSION)
    tc_p_error_node(P, e, "cannot assign to %s here. Maybe you meant '==' instead of '='?", tc_expr_name(e));
  tc_p_check_target(P, e, TC_TARGET_STORE);
}

/* assignment:
 *     | NAME ':' expression ['=' annotated_rhs]
 *     | ('(' single_target ')' | single_subscript_attribute_target) ':' expression ['=' annotated_rhs]
 *     | (star_targets '=')+ (yield_expr | star_expressions) !'='
 *     | single_target augassign (yield_expr | star_expressions)
 * star_expressions (an expression statement) */
static tc_ast *expr_or_assign(tc_parser *P) {
  const tc_token *first = tc_p_peek(P);
  tc_ast *e = tc_p_star_expression_or_yield(P);
  const tc_token *t = tc_p_peek(P);
  tc_punct binop;
  if (tc_tok_punct(t, TC_P_COLON)) {
    if (e->kind == TC_AST_TUPLE) tc_p_error_node(P, e, "only single target (not tuple) can be annotated");
    if (e->kind == TC_AST_LIST) tc_p_error_node(P, e, "only single target (not list) can be annotated");
    if (e->kind != TC_AST_NAME && e->kind != TC_AST_ATTRIBUTE && e->kind != TC_AST_SUBSCRIPT)
      tc_p_error_node(P, e, "illegal target for annotation");
    tc_p_advance(P);
    tc_ast *s = tc_p_node(P, TC_AST_ANN_ASSIGN, first->loc);
    s->a = e;
    s->b = tc_p_expression(P);
    if (tc_p_accept(P, TC_P_ASSIGN)) s->c = tc_p_star_expression_or_yield(P);
    return tc_p_finish(P, s);
  }
  if (is_aug_assign(t, &binop)) {
    if (e->kind != TC_AST_NAME && e->kind != TC_AST_ATTRIBUTE && e->kind != TC_AST_SUBSCRIPT)
      tc_p_error_node(P, e, "'%s' is an illegal expression for augmented assignment", tc_expr_name(e));
    tc_p_advance(P);
    tc_ast *s = tc_p_node(P, TC_AST_AUG_ASSIGN, first->loc);
    s->a = e;
    s->op = binop;
    s->b = tc_p_star_expression_or_yield(P);
    return tc_p_finish(P, s);
  }
  if (tc_tok_punct(t, TC_P_ASSIGN)) {
    tc_ast *s = tc_p_node(P, TC_AST_ASSIGN, first->loc);
    tc_vec targets = {0};
    check_assign_target(P, e);
    tc_vec_push(P, &targets, e);
    tc_ast *v = NULL;
    while (tc_p_accept(P, TC_P_ASSIGN)) {
      v = tc_p_star_expression_or_yield(P);
      if (tc_p_punct(P, TC_P_ASSIGN)) {
        if (v->kind == TC_AST_YIELD) tc_p_error_node(P, v, "assignment to yield expression not possible");
        tc_p_check_target(P, v, TC_TARGET_STORE);
        tc_vec_push(P, &targets, v);
      }
    }
    s->list = tc_vec_list(&targets);
    s->a = v;
    return tc_p_finish(P, s);
  }
  if (e->kind == TC_AST_STARRED) tc_p_error_node(P, e, "can't use starred expression here");
  if (e->kind == TC_AST_NAME && tc_tok_starts_operand(t) &&
      (strcmp(e->str, "print") == 0 || strcmp(e->str, "exec") == 0))
    tc_p_error_node(P, e, "Missing parentheses in call to '%s'. Did you mean %s(...)?", e->str, e->str);
  tc_ast *s = tc_p_node(P, TC_AST_EXPR_STMT, first->loc);
  s->a = e;
  return tc_p_finish(P, s);
}

/* dotted_name: dotted_name '.' NAME | NAME */
static char *dotted_name(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  if (!tc_tok_ident(t)) tc_p_error(P, "invalid syntax");
  const char *start = t->start;
  const char *end = t->start + t->len;
  tc_p_advance(P);
  bool spaced = false;
  while (tc_p_punct(P, TC_P_DOT)) {
    const tc_token *n = tc_p_peek_at(P, 1);
    if (!tc_tok_ident(n)) {
      tc_p_advance(P);
      tc_p_error(P, "invalid syntax");
    }
    if (n->start != tc_p_peek(P)->start + 1 || tc_p_peek(P)->start != end) spaced = true;
    end = n->start + n->len;
    tc_p_advance(P);
    tc_p_advance(P);
  }
  if (!spaced) return tc_arena_strndup(P->arena, start, (size_t)(end - start));
  /* `a . b` written with spaces: rebuild without them. */
  size_t cap = (size_t)(end - start) + 1, k = 0;
  char *buf = tc_arena_alloc(P->arena, cap);
  for (const char *c = start; c < end; c++)
    if (*c != ' ' && *c != '\t' && *c != '\\' && *c != '\n' && *c != '\r' && *c != '\f') buf[k++] = *c;
  buf[k] = 0;
  return buf;
}

/* import_name: 'import' dotted_as_names ; dotted_as_name: dotted_name ['as' NAME]
 * import_from: 'from' ('.' | '...')* dotted_name 'import' import_from_targets
 *            | 'from' ('.' | '...')+ 'import' import_from_targets
 * import_from_targets: '(' import_from_as_names [','] ')' | import_from_as_names !',' | '*' */
static tc_ast *import_stmt(tc_parser *P) {
  const tc_token *kw = tc_p_peek(P);
  tc_p_advance(P);
  tc_vec names = {0};
  if (kw->kw == TC_KW_IMPORT) {
    tc_ast *s = tc_p_node(P, TC_AST_IMPORT, kw->loc);
    do {
      tc_ast *a = tc_p_node(P, TC_AST_ALIAS, tc_p_peek(P)->loc);
      a->str = dotted_name(P);
      if (tc_p_accept_kw(P, TC_KW_AS)) {
        if (!tc_tok_ident(tc_p_peek(P))) tc_p_error(P, "invalid syntax");
        a->str2 = tc_p_ident(P, tc_p_peek(P));
        tc_p_advance(P);
      }
      tc_vec_push(P, &names, tc_p_finish(P, a));
    } while (tc_p_accept(P, TC_P_COMMA));
    s->list = tc_vec_list(&names);
    return tc_p_finish(P, s);
  }
  tc_ast *s = tc_p_node(P, TC_AST_IMPORT_FROM, kw->loc);
  char dots[256];
  size_t nd = 0;
  while (tc_p_punct(P, TC_P_DOT) || tc_p_punct(P, TC_P_ELLIPSIS)) {
    int k = tc_p_punct(P, TC_P_DOT) ? 1 : 3;
    for (int i = 0; i < k && nd < sizeof dots - 1; i++) dots[nd++] = '.';
    tc_p_advance(P);
  }
  dots[nd] = 0;
  if (tc_p_kw(P, TC_KW_IMPORT)) {
    if (nd == 0) tc_p_error(P, "invalid syntax");
    s->str = tc_arena_strdup(P->arena, dots);
  } else {
    char *mod = dotted_name(P);
    s->str = nd ? tc_arena_printf(P->arena, "%s%s", dots, mod) : mod;
  }
  if (!tc_p_accept_kw(P, TC_KW_IMPORT)) tc_p_error(P, "invalid syntax");
  if (tc_p_punct(P, TC_P_STAR)) {
    tc_ast *a = tc_p_node(P, TC_AST_ALIAS, tc_p_peek(P)->loc);
    a->str = "*";
    tc_p_advance(P);
    tc_vec_push(P, &names, tc_p_finish(P, a));
  } else {
    bool paren = tc_p_accept(P, TC_P_LPAREN);
    for (;;) {
      const tc_token *t = tc_p_peek(P);
      if (!tc_tok_ident(t)) tc_p_error(P, "invalid syntax");
      tc_ast *a = tc_p_node(P, TC_AST_ALIAS, t->loc);
      a->str = tc_p_ident(P, t);
      tc_p_advance(P);
      if (tc_p_accept_kw(P, TC_KW_AS)) {
        if (!tc_tok_ident(tc_p_peek(P))) tc_p_error(P, "invalid syntax");
        a->str2 = tc_p_ident(P, tc_p_peek(P));
        tc_p_advance(P);
      }
      tc_vec_push(P, &names, tc_p_finish(P, a));
      if (!tc_p_accept(P, TC_P_COMMA)) break;
      if (paren && tc_p_punct(P, TC_P_RPAREN)) break;
      if (!paren && at_line_end(P)) tc_p_error(P, "trailing comma not allowed without surrounding parentheses");
    }
    if (paren) tc_p_expect(P, TC_P_RPAREN, NULL);
  }
  s->list = tc_vec_list(&names);
  return tc_p_finish(P, s);
}

/* simple_stmt: assignment | star_expressions | return_stmt | import_stmt | raise_stmt | 'pass'
 *            | del_stmt | yield_stmt | assert_stmt | 'break' | 'continue' | global_stmt
 *            | nonlocal_stmt */
static tc_ast *simple_stmt(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_ast *s;
  switch (t->kind == TC_TK_NAME ? t->kw : TC_KW_NONE_) {
  case TC_KW_PASS:
  case TC_KW_BREAK:
  case TC_KW_CONTINUE:
    tc_p_advance(P);
    s = tc_p_node(P, t->kw == TC_KW_PASS ? TC_AST_PASS : t->kw == TC_KW_BREAK ? TC_AST_BREAK : TC_AST_CONTINUE, t->loc);
    return tc_p_finish(P, s);
  /* return_stmt: 'return' [star_expressions] */
  case TC_KW_RETURN:
    tc_p_advance(P);
    s = tc_p_node(P, TC_AST_RETURN, t->loc);
    if (!at_line_end(P)) s->a = tc_p_star_expressions(P);
    return tc_p_finish(P, s);
  /* raise_stmt: 'raise' expression ['from' expression] | 'raise' */
  case TC_KW_RAISE:
    tc_p_advance(P);
    s = tc_p_node(P, TC_AST_RAISE, t->loc);
    if (!at_line_end(P)) {
      s->a = tc_p_expression(P);
      if (tc_p_accept_kw(P, TC_KW_FROM)) s->b = tc_p_expression(P);
    }
    return tc_p_finish(P, s);
  /* assert_stmt: 'assert' expression [',' expression] */
  case TC_KW_ASSERT:
    tc_p_advance(P);
    s = tc_p_node(P, TC_AST_ASSERT, t->loc);
    s->a = tc_p_expression(P);
    if (tc_p_accept(P, TC_P_COMMA)) s->b = tc_p_expression(P);
    return tc_p_finish(P, s);
  /* global_stmt: 'global' ','.NAME+ ; nonlocal_stmt: 'nonlocal' ','.NAME+ */
  case TC_KW_GLOBAL:
  case TC_KW_NONLOCAL: {
    tc_p_advance(P);
    s = tc_p_node(P, TC_AST_GLOBAL, t->loc);
    s->flag = t->kw == TC_KW_NONLOCAL;
    tc_vec names = {0};
    do {
      const tc_token *n = tc_p_peek(P);
      if (!tc_tok_ident(n)) tc_p_error(P, "invalid syntax");
      tc_ast *x = tc_p_node(P, TC_AST_NAME, n->loc);
      x->str = tc_p_ident(P, n);
      x->str_len = n->len;
      tc_p_advance(P);
      tc_vec_push(P, &names, tc_p_finish(P, x));
    } while (tc_p_accept(P, TC_P_COMMA));
    s->list = tc_vec_list(&names);
    return tc_p_finish(P, s);
  }
  /* del_stmt: 'del' del_targets &(';' | NEWLINE) ; del_targets: ','.del_target+ [','] */
  case TC_KW_DEL: {
    tc_p_advance(P);
    s = tc_p_node(P, TC_AST_DELETE, t->loc);
    tc_vec targets = {0};
    do {
      if (at_line_end(P)) break;
      tc_ast *x = tc_p_bitwise_or(P);
      tc_p_check_target(P, x, TC_TARGET_DEL);
      tc_vec_push(P, &targets, x);
    } while (tc_p_accept(P, TC_P_COMMA));
    if (targets.n == 0) tc_p_error(P, "invalid syntax");
    s->list = tc_vec_list(&targets);
    return tc_p_finish(P, s);
  }
  case TC_KW_IMPORT:
  case TC_KW_FROM: return import_stmt(P);
  default: break;
  }
  if (t->kind == TC_TK_INDENT) tc_p_unexpected_indent(P);
  if (!tc_tok_starts_expression(t) && !tc_tok_kw(t, TC_KW_YIELD)) tc_p_error(P, "invalid syntax");
  return expr_or_assign(P);
}

/* simple_stmts: simple_stmt !';' NEWLINE | ';'.simple_stmt+ [';'] NEWLINE */
static void simple_stmts(tc_parser *P, tc_vec *out) {
  for (;;) {
    tc_vec_push(P, out, simple_stmt(P));
    if (!tc_p_accept(P, TC_P_SEMI)) break;
    if (tc_p_peek(P)->kind == TC_TK_NEWLINE) break;
  }
  const tc_token *t = tc_p_peek(P);
  if (t->kind == TC_TK_NEWLINE) {
    tc_p_advance(P);
    return;
  }
  if (t->kind == TC_TK_EOF) return;
  tc_p_error(P, "invalid syntax");
}

/* decorators: ('@' named_expression NEWLINE)+
 * function_def: decorators? ['async'] 'def' NAME '(' [params] ')' ['->' expression] ':' block
 * class_def: decorators? 'class' NAME ['(' [arguments] ')'] ':' block */
static tc_ast *definition(tc_parser *P) {
  tc_vec decorators = {0};
  tc_loc loc = tc_p_peek(P)->loc;
  while (tc_p_punct(P, TC_P_AT)) {
    tc_p_advance(P);
    tc_vec_push(P, &decorators, tc_p_named_expression(P));
    if (tc_p_peek(P)->kind != TC_TK_NEWLINE) tc_p_error(P, "invalid syntax");
    tc_p_advance(P);
  }
  const tc_token *t = tc_p_peek(P);
  bool async = false;
  if (tc_tok_kw(t, TC_KW_ASYNC)) {
    async = true;
    tc_p_advance(P);
    t = tc_p_peek(P);
    if (!tc_tok_kw(t, TC_KW_DEF)) tc_p_error(P, "invalid syntax");
  }
  if (!tc_tok_kw(t, TC_KW_DEF) && !tc_tok_kw(t, TC_KW_CLASS)) tc_p_error(P, "invalid syntax");
  bool is_class = t->kw == TC_KW_CLASS;
  int line = t->loc.line;
  tc_p_advance(P);
  const tc_token *name = tc_p_peek(P);
  if (!tc_tok_ident(name)) tc_p_error(P, "invalid syntax");
  tc_p_advance(P);
  tc_ast *d = tc_p_node(P, is_class ? TC_AST_CLASS_DEF : TC_AST_FUNCTION_DEF, loc);
  d->str = tc_p_ident(P, name);
  d->str_len = name->len;
  d->flag = async;
  d->list2 = tc_vec_list(&decorators);
  if (is_class) {
    if (tc_p_accept(P, TC_P_LPAREN)) {
      tc_vec args = {0}, kws = {0};
      tc_p_arguments(P, &args, &kws, TC_P_RPAREN);
      tc_p_expect(P, TC_P_RPAREN, NULL);
      for (int i = 0; i < kws.n; i++) tc_vec_push(P, &args, kws.v[i]);
      d->list3 = tc_vec_list(&args);
    }
    expect_colon(P);
    d->list = block(P, "class definition", line);
  } else {
    tc_p_expect(P, TC_P_LPAREN, NULL);
    tc_p_params(P, &d->params, true, TC_P_RPAREN);
    tc_p_expect(P, TC_P_RPAREN, NULL);
    if (tc_p_accept(P, TC_P_ARROW)) d->a = tc_p_expression(P);
    expect_colon(P);
    d->list = block(P, "function definition", line);
  }
  return tc_p_finish(P, d);
}

/* if_stmt: 'if' named_expression ':' block (elif_stmt | [else_block])
 * elif_stmt: 'elif' named_expression ':' block (elif_stmt | [else_block])
 * else_block: 'else' ':' block */
static tc_ast *if_stmt(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  bool elif = t->kw == TC_KW_ELIF;
  tc_p_advance(P);
  tc_ast *s = tc_p_node(P, TC_AST_IF, t->loc);
  s->a = tc_p_named_expression(P);
  if (tc_p_punct(P, TC_P_ASSIGN)) {
    if (s->a->kind == TC_AST_NAME)
      tc_p_error_node(P, s->a, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
    tc_p_error_node(P, s->a, "cannot assign to %s here. Maybe you meant '==' instead of '='?", tc_expr_name(s->a));
  }
  expect_colon(P);
  s->list = block(P, elif ? "'elif' statement" : "'if' statement", t->loc.line);
  if (tc_p_kw(P, TC_KW_ELIF)) {
    tc_vec orelse = {0};
    tc_vec_push(P, &orelse, if_stmt(P));
    s->list2 = tc_vec_list(&orelse);
  } else if (tc_p_kw(P, TC_KW_ELSE)) {
    int line = tc_p_peek(P)->loc.line;
    tc_p_advance(P);
    expect_colon(P);
    s->list2 = block(P, "'else' statement", line);
  }
  return tc_p_finish(P, s);
}

static tc_ast_list else_block(tc_parser *P) {
  tc_ast_list none = {0, NULL};
  if (!tc_p_kw(P, TC_KW_ELSE)) return none;
  int line = tc_p_peek(P)->loc.line;
  tc_p_advance(P);
  expect_colon(P);
  return block(P, "'else' statement", line);
}

/* while_stmt: 'while' named_expression ':' block [else_block] */
static tc_ast *while_stmt(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_p_advance(P);
  tc_ast *s = tc_p_node(P, TC_AST_WHILE, t->loc);
  s->a = tc_p_named_expression(P);
  expect_colon(P);
  s->list = block(P, "'while' statement", t->loc.line);
  s->list2 = else_block(P);
  return tc_p_finish(P, s);
}

/* for_stmt: ['async'] 'for' star_targets 'in' star_expressions ':' block [else_block] */
static tc_ast *for_stmt(tc_parser *P, tc_loc loc, bool async) {
  const tc_token *t = tc_p_peek(P);
  tc_p_advance(P);
  tc_ast *s = tc_p_node(P, TC_AST_FOR, loc);
  s->flag = async;
  s->a = tc_p_star_targets(P);
  if (!tc_p_accept_kw(P, TC_KW_IN)) tc_p_error(P, "invalid syntax");
  s->b = tc_p_star_expressions(P);
  expect_colon(P);
  s->list = block(P, "'for' statement", t->loc.line);
  s->list2 = else_block(P);
  return tc_p_finish(P, s);
}

/* with_item: expression 'as' star_target &(',' | ')' | ':') | expression */
static tc_ast *with_item(tc_parser *P) {
  tc_ast *w = tc_p_node(P, TC_AST_WITH_ITEM, tc_p_peek(P)->loc);
  w->a = tc_p_expression(P);
  if (tc_p_accept_kw(P, TC_KW_AS)) {
    w->b = tc_p_bitwise_or(P);
    tc_p_check_target(P, w->b, TC_TARGET_FOR);
    if (!tc_p_punct(P, TC_P_COMMA) && !tc_p_punct(P, TC_P_RPAREN) && !tc_p_punct(P, TC_P_COLON))
      tc_p_error(P, "invalid syntax");
  }
  return tc_p_finish(P, w);
}

/* Does the bracket at the current token close right before a ':'? */
static bool paren_then_colon(const tc_parser *P) {
  int depth = 0;
  for (size_t i = P->pos; i < P->n; i++) {
    const tc_token *t = &P->t[i];
    if (t->kind != TC_TK_PUNCT) continue;
    if (t->punct == TC_P_LPAREN || t->punct == TC_P_LBRACKET || t->punct == TC_P_LBRACE) depth++;
    if (t->punct == TC_P_RPAREN || t->punct == TC_P_RBRACKET || t->punct == TC_P_RBRACE) {
      if (--depth == 0) return i + 1 < P->n && tc_tok_punct(&P->t[i + 1], TC_P_COLON);
    }
  }
  return false;
}

/* with_stmt: ['async'] 'with' '(' ','.with_item+ ','? ')' ':' block
 *          | ['async'] 'with' ','.with_item+ ':' block */
static tc_ast *with_stmt(tc_parser *P, tc_loc loc, bool async) {
  const tc_token *t = tc_p_peek(P);
  tc_p_advance(P);
  tc_ast *s = tc_p_node(P, TC_AST_WITH, loc);
  s->flag = async;
  tc_vec items = {0};
  if (tc_p_punct(P, TC_P_LPAREN) && !tc_tok_punct(tc_p_peek_at(P, 1), TC_P_RPAREN) &&
      !tc_tok_kw(tc_p_peek_at(P, 1), TC_KW_YIELD) && paren_then_colon(P)) {
    tc_p_advance(P);
    do {
      if (tc_p_punct(P, TC_P_RPAREN)) break;
      tc_vec_push(P, &items, with_item(P));
    } while (tc_p_accept(P, TC_P_COMMA));
    tc_p_expect(P, TC_P_RPAREN, NULL);
  } else {
    do tc_vec_push(P, &items, with_item(P));
    while (tc_p_accept(P, TC_P_COMMA));
  }
  s->list = tc_vec_list(&items);
  expect_colon(P);
  s->list2 = block(P, "'with' statement", t->loc.line);
  return tc_p_finish(P, s);
}

/* try_stmt: 'try' ':' block finally_block
 *         | 'try' ':' block except_block+ [else_block] [finally_block]
 *         | 'try' ':' block except_star_block+ [else_block] [finally_block]
 * except_block: 'except' expression ['as' NAME] ':' block | 'except' ':' block
 * except_star_block: 'except' '*' expression ['as' NAME] ':' block
 * finally_block: 'finally' ':' block */
static tc_ast *try_stmt(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_p_advance(P);
  tc_ast *s = tc_p_node(P, TC_AST_TRY, t->loc);
  expect_colon(P);
  s->list = block(P, "'try' statement", t->loc.line);
  tc_vec handlers = {0};
  int kinds = 0; /* 1: except, 2: except* */
  while (tc_p_kw(P, TC_KW_EXCEPT)) {
    const tc_token *e = tc_p_peek(P);
    tc_p_advance(P);
    bool star = tc_p_accept(P, TC_P_STAR);
    kinds |= star ? 2 : 1;
    if (kinds == 3) tc_p_error_at(P, P->pos, e->loc, "cannot have both 'except' and 'except*' on the same 'try'");
    tc_ast *h = tc_p_node(P, TC_AST_EXCEPT_HANDLER, e->loc);
    if (!tc_p_punct(P, TC_P_COLON)) {
      h->a = tc_p_expression(P);
      if (tc_p_punct(P, TC_P_COMMA)) tc_p_error_node(P, h->a, "multiple exception types must be parenthesized");
      if (tc_p_accept_kw(P, TC_KW_AS)) {
        if (!tc_tok_ident(tc_p_peek(P))) tc_p_error(P, "invalid syntax");
        h->str = tc_p_ident(P, tc_p_peek(P));
        tc_p_advance(P);
      }
    } else if (star) {
      tc_p_error(P, "expected one or more exception types");
    }
    expect_colon(P);
    h->list = block(P, star ? "'except*' statement" : "'except' statement", e->loc.line);
    tc_vec_push(P, &handlers, tc_p_finish(P, h));
  }
  s->flag = kinds == 2;
  s->list2 = tc_vec_list(&handlers);
  if (handlers.n) s->list3 = else_block(P);
  if (tc_p_kw(P, TC_KW_FINALLY)) {
    int line = tc_p_peek(P)->loc.line;
    tc_p_advance(P);
    expect_colon(P);
    s->list4 = block(P, "'finally' statement", line);
  }
  if (handlers.n == 0 && s->list4.n == 0) tc_p_error(P, "expected 'except' or 'finally' block");
  return tc_p_finish(P, s);
}

/* match_stmt: "match" subject_expr ':' NEWLINE INDENT case_block+ DEDENT
 * Not needed by the subset: recognised by its shape and skipped as an opaque block. */
static bool at_match_stmt(const tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  if (!tc_tok_ident(t) || t->len != 5 || memcmp(t->start, "match", 5) != 0) return false;
  const tc_token *n = tc_p_peek_at(P, 1);
  if (n->kind == TC_TK_NEWLINE || tc_tok_punct(n, TC_P_COLON) || tc_tok_punct(n, TC_P_ASSIGN) ||
      tc_tok_punct(n, TC_P_DOT) || tc_tok_punct(n, TC_P_COMMA))
    return false;
  size_t i = P->pos;
  while (i < P->n && P->t[i].kind != TC_TK_NEWLINE && P->t[i].kind != TC_TK_EOF) i++;
  return i + 1 < P->n && i > P->pos && tc_tok_punct(&P->t[i - 1], TC_P_COLON) && P->t[i + 1].kind == TC_TK_INDENT;
}

static tc_ast *match_stmt(tc_parser *P) {
  tc_ast *s = tc_p_node(P, TC_AST_MATCH, tc_p_peek(P)->loc);
  while (tc_p_peek(P)->kind != TC_TK_NEWLINE) tc_p_advance(P);
  tc_p_advance(P);
  int depth = 0;
  do {
    const tc_token *t = tc_p_peek(P);
    if (t->kind == TC_TK_INDENT) depth++;
    if (t->kind == TC_TK_DEDENT) depth--;
    if (t->kind == TC_TK_EOF) break;
    tc_p_advance(P);
  } while (depth > 0);
  return tc_p_finish(P, s);
}

/* statement: compound_stmt | simple_stmts
 * compound_stmt: function_def | if_stmt | class_def | with_stmt | for_stmt | try_stmt
 *              | while_stmt | match_stmt */
static void statement(tc_parser *P, tc_vec *out) {
  const tc_token *t = tc_p_peek(P);
  if (t->kind == TC_TK_INDENT) tc_p_unexpected_indent(P);
  if (tc_tok_punct(t, TC_P_AT)) {
    tc_vec_push(P, out, definition(P));
    return;
  }
  if (t->kind == TC_TK_NAME) {
    switch (t->kw) {
    case TC_KW_DEF:
    case TC_KW_CLASS: tc_vec_push(P, out, definition(P)); return;
    case TC_KW_IF: tc_vec_push(P, out, if_stmt(P)); return;
    case TC_KW_WHILE: tc_vec_push(P, out, while_stmt(P)); return;
    case TC_KW_FOR: tc_vec_push(P, out, for_stmt(P, t->loc, false)); return;
    case TC_KW_WITH: tc_vec_push(P, out, with_stmt(P, t->loc, false)); return;
    case TC_KW_TRY: tc_vec_push(P, out, try_stmt(P)); return;
    case TC_KW_ASYNC: {
      const tc_token *n = tc_p_peek_at(P, 1);
      if (tc_tok_kw(n, TC_KW_DEF)) {
        tc_vec_push(P, out, definition(P));
        return;
      }
      tc_p_advance(P);
      if (tc_tok_kw(n, TC_KW_FOR)) tc_vec_push(P, out, for_stmt(P, t->loc, true));
      else if (tc_tok_kw(n, TC_KW_WITH)) tc_vec_push(P, out, with_stmt(P, t->loc, true));
      else tc_p_error(P, "invalid syntax");
      return;
    }
    case TC_KW_NONE_:
      if (at_match_stmt(P)) {
        tc_vec_push(P, out, match_stmt(P));
        return;
      }
      break;
    default: break;
    }
  }
  simple_stmts(P, out);
}

/* ---- the module and error recovery ------------------------------------------------------ */

/* The token index just past the top-level statement that starts at `start` and contains the
 * error at `err_pos`. */
static size_t skip_statement(const tc_parser *P, size_t start, size_t err_pos) {
  int depth = 0;
  for (size_t i = start; i < P->n; i++) {
    const tc_token *t = &P->t[i];
    if (t->kind == TC_TK_EOF) return i;
    if (t->kind == TC_TK_INDENT) depth++;
    else if (t->kind == TC_TK_DEDENT) {
      depth--;
      if (depth <= 0 && i >= err_pos) return i + 1;
    } else if (t->kind == TC_TK_NEWLINE && depth == 0 && i >= err_pos) {
      if (i + 1 >= P->n || P->t[i + 1].kind != TC_TK_INDENT) return i + 1;
    }
  }
  return P->n - 1;
}

static bool starts_definition(const tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  return tc_tok_punct(t, TC_P_AT) || tc_tok_kw(t, TC_KW_DEF) || tc_tok_kw(t, TC_KW_CLASS) ||
         (tc_tok_kw(t, TC_KW_ASYNC) && tc_tok_kw(tc_p_peek_at(P, 1), TC_KW_DEF));
}

/* State of the module loop. It lives outside the function that calls setjmp, so nothing that
 * changes between setjmp and longjmp is a local of that function. */
typedef struct module_state {
  tc_parser P;
  jmp_buf jb;
  jmp_buf *saved_oom;
  tilec_error stmt_err;
  tilec_error *err;
  tc_vec body;
  tc_ast *module;
  size_t start;
  int body_n;
  bool fatal_kind, recovering;
} module_state;

/* Returns false when parsing must stop (S->err is filled). */
static bool recover(module_state *S) {
  tc_parser *P = &S->P;
  if (S->stmt_err.status == TILEC_OK || S->recovering) {
    tc_error(S->err, TILEC_ERROR_NOMEM, "out of memory while parsing %s",
             P->src->name ? P->src->name : "<input>");
    return false;
  }
  if (S->fatal_kind || !S->module) {
    if (S->err && S->err->status == TILEC_OK) *S->err = S->stmt_err;
    return false;
  }
  S->recovering = true;
  S->body.n = S->body_n; /* drop the statements of a partly parsed line */
  tc_ast *e = tc_p_node(P, TC_AST_ERROR_STMT, P->t[S->start].loc);
  e->str = tc_arena_strdup(P->arena, S->stmt_err.rendered);
  e->str_len = strlen(e->str);
  e->str2 = tc_arena_strdup(P->arena, S->stmt_err.message);
  e->ival = S->stmt_err.line;
  e->op = S->stmt_err.col;
  size_t next = skip_statement(P, S->start, P->err_pos);
  tc_vec_push(P, &S->body, e);
  P->pos = next > S->start ? next : S->start + 1;
  if (P->pos >= P->n) P->pos = P->n - 1;
  tc_p_finish(P, e);
  P->depth = 0;
  S->recovering = false;
  return true;
}

static bool parse_module(module_state *S) {
  tc_parser *P = &S->P;
  if (setjmp(S->jb) != 0) {
    if (!recover(S)) return false;
  } else {
    S->module = tc_p_node(P, TC_AST_MODULE, P->t[0].loc);
  }
  while (tc_p_peek(P)->kind != TC_TK_EOF) {
    tc_error_clear(&S->stmt_err);
    S->start = P->pos;
    S->body_n = S->body.n;
    S->fatal_kind = starts_definition(P);
    statement(P, &S->body);
  }
  S->module->list = tc_vec_list(&S->body);
  tc_p_finish(P, S->module);
  return true;
}

tc_ast *tc_parse(tc_arena *arena, const tc_source *src, const tc_token_array *tokens, tilec_error *err) {
  if (!tokens || tokens->n == 0 || tokens->v[tokens->n - 1].kind != TC_TK_EOF) {
    tc_error(err, TILEC_ERROR_INTERNAL, "tc_parse: token array does not end in EOF");
    return NULL;
  }
  module_state *S = calloc(1, sizeof *S);
  if (!S) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return NULL;
  }
  S->P.arena = arena;
  S->P.src = src;
  S->P.t = tokens->v;
  S->P.n = tokens->n;
  S->P.err = &S->stmt_err;
  S->P.jb = &S->jb;
  S->err = err;
  S->saved_oom = arena->oom_jmp;
  arena->oom_jmp = &S->jb;
  tc_ast *module = parse_module(S) ? S->module : NULL;
  arena->oom_jmp = S->saved_oom;
  free(S);
  return module;
}

static tc_loc end_of_source(const tc_source *src) {
  tc_loc l = {src, 1, 1};
  for (size_t i = 0; i < src->len; i++) {
    if (src->text[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

static bool loc_before(int l1, int c1, int l2, int c2) { return l1 < l2 || (l1 == l2 && c1 < c2); }

/* CPython's tokenizer runs over the rest of the file after a syntax error, and these errors of
 * its tokenizer then win over the syntax error; the others (indentation, an unclosed bracket,
 * escapes, stray ASCII characters) lose to a syntax error that comes before them. */
static bool lex_error_overrides(const char *msg) {
  static const char *const prefixes[] = {
      "unterminated string literal", "unterminated triple-quoted", "invalid decimal literal",
      "invalid hexadecimal literal", "invalid octal literal",      "invalid binary literal",
      "invalid imaginary literal",   "invalid digit",              "leading zeros",
      "unmatched '",                 "closing parenthesis",        "invalid non-printable character"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(msg, prefixes[i], strlen(prefixes[i])) == 0) return true;
  return false;
}

/* tc_read's work on the lexer's malloc'd tokens; it may grow toks->v, and tc_read frees it. */
static tc_ast *read_tokens(tc_arena *arena, const tc_source *src, tc_token_array *toks, bool lexed,
                           const tilec_error *lex_err, tilec_error *err) {
  if (lexed) return tc_parse(arena, src, toks, err);
  if (lex_err->status == TILEC_ERROR_PROGRAM && toks->n > 0 && !lex_error_overrides(lex_err->message)) {
    /* Otherwise a syntax error before the lexer's error (an unclosed bracket's error is placed
     * at the bracket) is the one CPython reports. */
    bool unclosed = strstr(lex_err->message, "was never closed") != NULL;
    tc_loc at = unclosed ? end_of_source(src) : (tc_loc){src, lex_err->line, lex_err->col};
    size_t n = toks->n;
    tc_token *v = realloc(toks->v, (n + 2) * sizeof(tc_token));
    if (v) {
      toks->v = v;
      for (size_t i = n; i < n + 2; i++) {
        memset(&v[i], 0, sizeof v[i]);
        v[i].kind = i == n ? TC_TK_NEWLINE : TC_TK_EOF;
        v[i].loc = at;
        v[i].start = v[n - 1].start + v[n - 1].len;
      }
      tc_token_array prefix = {v, n + 2};
      tilec_error first;
      tc_error_clear(&first);
      tc_ast *m = tc_parse(arena, src, &prefix, &first);
      if (m) { /* a recoverable module-level error counts too: the file fails anyway */
        for (int i = 0; i < m->list.n; i++) {
          const tc_ast *s = m->list.v[i];
          if (s->kind != TC_AST_ERROR_STMT) continue;
          tc_loc l = {src, (int)s->ival, s->op};
          tc_error_at(&first, TILEC_ERROR_PROGRAM, l, "%s", s->str2);
          break;
        }
      }
      if (first.status == TILEC_ERROR_PROGRAM && loc_before(first.line, first.col, lex_err->line, lex_err->col)) {
        if (err && err->status == TILEC_OK) *err = first;
        return NULL;
      }
    }
  }
  if (err && err->status == TILEC_OK) *err = *lex_err;
  return NULL;
}

tc_ast *tc_read(tc_arena *arena, const tc_source *src, tilec_error *err) {
  tc_token_array toks;
  tilec_error lex_err;
  tc_error_clear(&lex_err);
  bool lexed = tc_lex_heap(arena, src, &toks, &lex_err);
  tc_ast *m = read_tokens(arena, src, &toks, lexed, &lex_err, err);
  free(toks.v); /* the tree keeps no token: only the decoded strings, which live in the arena */
  return m;
}
