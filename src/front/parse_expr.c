/* parse_expr.c: the expression half of the recursive-descent parser (Python 3.11 grammar).
 * Each function carries the grammar rule it implements. Binary operators from `|` down to
 * `*` use precedence climbing, which keeps the call depth per nesting level small. */
#include <stdlib.h>
#include <string.h>

#include "front/parse_internal.h"

static tc_ast *atom(tc_parser *P);
static tc_ast *primary(tc_parser *P);
static tc_ast *factor(tc_parser *P);
static tc_ast *star_named_expression(tc_parser *P);
static tc_ast *comprehension(tc_parser *P, int op, tc_ast *elt, tc_ast *value, tc_loc loc);

static void enter(tc_parser *P) {
  if (++P->depth > TC_PARSE_MAX_DEPTH) tc_p_error(P, "expression too deeply nested");
}
static void leave(tc_parser *P) { P->depth--; }

static bool at_comp_for(const tc_parser *P) {
  return tc_p_kw(P, TC_KW_FOR) || (tc_p_kw(P, TC_KW_ASYNC) && tc_tok_kw(tc_p_peek_at(P, 1), TC_KW_FOR));
}

/* After an element inside brackets: two operands in a row mean a missing comma. */
static void check_missing_comma(tc_parser *P, const tc_ast *prev) {
  if (tc_tok_starts_operand(tc_p_peek(P)))
    tc_p_error_at(P, P->pos, prev->loc, "invalid syntax. Perhaps you forgot a comma?");
}

/* ---- targets ---------------------------------------------------------------------------- */

void tc_p_check_target(tc_parser *P, tc_ast *e, tc_target_ctx ctx) {
  switch (e->kind) {
  case TC_AST_NAME:
  case TC_AST_ATTRIBUTE:
  case TC_AST_SUBSCRIPT: return;
  case TC_AST_TUPLE:
  case TC_AST_LIST:
    for (int i = 0; i < e->list.n; i++) {
      tc_ast *x = e->list.v[i];
      if (x->kind == TC_AST_STARRED && ctx != TC_TARGET_DEL) x = x->a;
      tc_p_check_target(P, x, ctx);
    }
    return;
  case TC_AST_STARRED:
    if (ctx == TC_TARGET_DEL) tc_p_error_node(P, e, "cannot delete starred");
    tc_p_error_node(P, e, "starred assignment target must be in a list or tuple");
  default:
    if (ctx == TC_TARGET_DEL) tc_p_error_node(P, e, "cannot delete %s", tc_expr_name(e));
    tc_p_error_node(P, e, "cannot assign to %s", tc_expr_name(e));
  }
}

/* star_targets: star_target (',' star_target)* [','] ; star_target: ['*'] target
 * Targets are parsed as bitwise_or (so a following `in` is not a comparison) and checked. */
tc_ast *tc_p_star_targets(tc_parser *P) {
  tc_loc loc = tc_p_peek(P)->loc;
  tc_vec items = {0};
  bool comma = false;
  for (;;) {
    tc_ast *x;
    if (tc_p_punct(P, TC_P_STAR)) {
      tc_loc sl = tc_p_peek(P)->loc;
      tc_p_advance(P);
      x = tc_p_node(P, TC_AST_STARRED, sl);
      x->a = tc_p_bitwise_or(P);
      tc_p_finish(P, x);
    } else {
      x = tc_p_bitwise_or(P);
    }
    tc_vec_push(P, &items, x);
    if (!tc_p_accept(P, TC_P_COMMA)) break;
    comma = true;
    if (tc_p_kw(P, TC_KW_IN) || tc_p_punct(P, TC_P_ASSIGN) || tc_p_punct(P, TC_P_COLON)) break;
  }
  tc_ast *r;
  if (!comma) {
    r = items.v[0];
  } else {
    r = tc_p_node(P, TC_AST_TUPLE, loc);
    r->list = tc_vec_list(&items);
    tc_p_finish(P, r);
  }
  tc_p_check_target(P, r, TC_TARGET_FOR);
  return r;
}

/* ---- repeated names --------------------------------------------------------------------- */

/* Short lists are checked for a repeated name as they grow (quadratic but tiny); long ones
 * once at the end by sorting, so no input makes the check slow. */
enum { REPEAT_SCAN_MAX = 128 };

typedef struct named_at {
  const char *name;
  int index;
} named_at;

static int cmp_named_at(const void *x, const void *y) {
  const named_at *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  return c ? c : a->index - b->index;
}

/* The index of the earliest name that repeats an earlier one, or -1. */
static int first_repeat(tc_parser *P, const char *const *names, int n) {
  named_at *v = tc_arena_alloc(P->arena, sizeof(named_at) * (size_t)n);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (names[i]) v[k++] = (named_at){names[i], i};
  qsort(v, (size_t)k, sizeof *v, cmp_named_at);
  int best = -1;
  for (int i = 1; i < k; i++)
    if (strcmp(v[i].name, v[i - 1].name) == 0 && (best < 0 || v[i].index < best)) best = v[i].index;
  return best;
}

/* ---- parameters ------------------------------------------------------------------------- */

static void push_param(tc_parser *P, tc_ast_params *out, int *cap, tc_ast_param prm) {
  for (int i = 0; i < out->n && out->n < REPEAT_SCAN_MAX; i++)
    if (strcmp(out->v[i].name, prm.name) == 0)
      tc_p_error_at(P, P->pos, prm.loc, "duplicate argument '%s' in function definition", prm.name);
  if (out->n == *cap) {
    int ncap = *cap ? *cap * 2 : 8;
    out->v = tc_arena_grow(P->arena, out->v, sizeof(tc_ast_param) * (size_t)*cap,
                           sizeof(tc_ast_param) * (size_t)ncap);
    *cap = ncap;
  }
  out->v[out->n++] = prm;
}

/* parameters (def) / lambda_parameters (lambda, no annotations):
 *   param_list: [posonly ... '/' ','] [param [':' expression] ['=' expression]] ...
 *               ['*' [param] (',' param_maybe_default)*] [',' '**' param] [',']
 * All forms are accepted in one loop; the rules CPython enforces are checked as we go. */
void tc_p_params(tc_parser *P, tc_ast_params *out, bool annotations, tc_punct close) {
  int cap = 0;
  bool seen_slash = false, seen_star = false, seen_kwargs = false, seen_default = false;
  out->n = 0;
  out->v = NULL;
  while (!tc_p_punct(P, close)) {
    const tc_token *t = tc_p_peek(P);
    if (seen_kwargs) tc_p_error(P, "arguments cannot follow var-keyword argument");
    if (tc_tok_punct(t, TC_P_SLASH)) {
      if (seen_slash) tc_p_error(P, "/ may appear only once");
      if (seen_star) tc_p_error(P, "/ must be ahead of *");
      if (out->n == 0) tc_p_error(P, "at least one argument must precede /");
      for (int i = 0; i < out->n; i++) out->v[i].kind = TC_PARAM_POSONLY;
      seen_slash = true;
      tc_p_advance(P);
    } else if (tc_tok_punct(t, TC_P_STAR) || tc_tok_punct(t, TC_P_DSTAR)) {
      bool kw = tc_tok_punct(t, TC_P_DSTAR);
      if (!kw && seen_star) tc_p_error(P, "* argument may appear only once");
      size_t star_pos = P->pos;
      tc_p_advance(P);
      if (!kw && (tc_p_punct(P, TC_P_COMMA) || tc_p_punct(P, close))) {
        seen_star = true;
        if (tc_p_punct(P, close) || tc_tok_punct(tc_p_peek_at(P, 1), close) ||
            tc_tok_punct(tc_p_peek_at(P, 1), TC_P_DSTAR))
          tc_p_error_at(P, star_pos, t->loc, "named arguments must follow bare *");
      } else {
        const tc_token *nt = tc_p_peek(P);
        if (!tc_tok_ident(nt)) tc_p_error(P, "invalid syntax");
        tc_ast_param prm = {tc_p_ident(P, nt), kw ? TC_PARAM_KWARGS : TC_PARAM_VARARGS, NULL, NULL, nt->loc};
        tc_p_advance(P);
        if (annotations && tc_p_accept(P, TC_P_COLON)) {
          if (!kw && tc_p_punct(P, TC_P_STAR)) { /* *args: *Ts */
            tc_loc sl = tc_p_peek(P)->loc;
            tc_p_advance(P);
            prm.annotation = tc_p_node(P, TC_AST_STARRED, sl);
            prm.annotation->a = tc_p_expression(P);
            tc_p_finish(P, prm.annotation);
          } else {
            prm.annotation = tc_p_expression(P);
          }
        }
        if (tc_p_punct(P, TC_P_ASSIGN))
          tc_p_error(P, kw ? "var-keyword argument cannot have default value"
                           : "var-positional argument cannot have default value");
        push_param(P, out, &cap, prm);
        if (kw) seen_kwargs = true;
        else seen_star = true;
      }
    } else if (tc_tok_ident(t)) {
      tc_ast_param prm = {tc_p_ident(P, t), seen_star ? TC_PARAM_KWONLY : TC_PARAM_NORMAL, NULL, NULL, t->loc};
      tc_p_advance(P);
      if (annotations && tc_p_accept(P, TC_P_COLON)) prm.annotation = tc_p_expression(P);
      if (tc_p_accept(P, TC_P_ASSIGN)) {
        if (tc_p_punct(P, TC_P_COMMA) || tc_p_punct(P, close)) tc_p_error(P, "expected default value expression");
        prm.default_ = tc_p_expression(P);
        if (!seen_star) seen_default = true;
      } else if (seen_default && !seen_star) {
        tc_p_error_at(P, P->pos, prm.loc, "non-default argument follows default argument");
      }
      push_param(P, out, &cap, prm);
    } else {
      tc_p_error(P, "invalid syntax");
    }
    if (!tc_p_accept(P, TC_P_COMMA)) {
      if (!tc_p_punct(P, close)) {
        tc_p_error(P, "invalid syntax");
      }
      break;
    }
  }
  if (out->n > REPEAT_SCAN_MAX) {
    const char **names = tc_arena_alloc(P->arena, sizeof(char *) * (size_t)out->n);
    for (int i = 0; i < out->n; i++) names[i] = out->v[i].name;
    int r = first_repeat(P, names, out->n);
    if (r >= 0)
      tc_p_error_at(P, P->pos, out->v[r].loc, "duplicate argument '%s' in function definition", out->v[r].name);
  }
}

/* ---- call arguments --------------------------------------------------------------------- */

/* arguments: args [','] &')'
 * args: ','.(starred_expression | (assignment_expression | expression !':=') !'=')+ [',' kwargs]
 *     | kwargs
 * kwargs: ','.(NAME '=' expression | '*' expression)+ [',' ','.('**' expression | NAME '=' expression)+]
 * A lone generator expression argument needs no parentheses of its own. */
void tc_p_arguments(tc_parser *P, tc_vec *args, tc_vec *keywords, tc_punct close) {
  bool seen_kw = false, seen_dstar = false;
  while (!tc_p_punct(P, close)) {
    const tc_token *t = tc_p_peek(P);
    tc_ast *last;
    if (tc_tok_punct(t, TC_P_STAR)) {
      if (seen_dstar) tc_p_error(P, "iterable argument unpacking follows keyword argument unpacking");
      tc_p_advance(P);
      tc_ast *s = tc_p_node(P, TC_AST_STARRED, t->loc);
      s->a = tc_p_expression(P);
      tc_vec_push(P, args, tc_p_finish(P, s));
      last = s;
    } else if (tc_tok_punct(t, TC_P_DSTAR)) {
      tc_p_advance(P);
      tc_ast *k = tc_p_node(P, TC_AST_KEYWORD, t->loc);
      k->a = tc_p_expression(P);
      tc_vec_push(P, keywords, tc_p_finish(P, k));
      seen_dstar = true;
      last = k;
    } else if (t->kind == TC_TK_NAME && tc_tok_punct(tc_p_peek_at(P, 1), TC_P_ASSIGN)) {
      if (t->kw == TC_KW_TRUE || t->kw == TC_KW_FALSE || t->kw == TC_KW_NONE)
        tc_p_error(P, "cannot assign to %.*s", (int)t->len, t->start);
      if (t->kw != TC_KW_NONE_) tc_p_error(P, "invalid syntax");
      tc_ast *k = tc_p_node(P, TC_AST_KEYWORD, t->loc);
      k->str = tc_p_ident(P, t);
      k->str_len = t->len;
      for (int i = 0; i < keywords->n && keywords->n < REPEAT_SCAN_MAX; i++)
        if (keywords->v[i]->str && strcmp(keywords->v[i]->str, k->str) == 0)
          tc_p_error(P, "keyword argument repeated: %s", k->str);
      tc_p_advance(P);
      tc_p_advance(P);
      k->a = tc_p_expression(P);
      tc_vec_push(P, keywords, tc_p_finish(P, k));
      seen_kw = true;
      last = k;
    } else {
      size_t start = P->pos;
      tc_ast *e = tc_p_named_expression(P);
      if (tc_p_punct(P, TC_P_ASSIGN))
        tc_p_error_at(P, P->pos, e->loc, "expression cannot contain assignment, perhaps you meant \"==\"?");
      if (at_comp_for(P)) {
        e = tc_p_finish(P, comprehension(P, TC_P_LPAREN, e, NULL, e->loc));
        if (args->n + keywords->n > 0 || !tc_p_punct(P, close))
          tc_p_error_at(P, start, e->loc, "Generator expression must be parenthesized");
      }
      if (seen_dstar) tc_p_error_node(P, e, "positional argument follows keyword argument unpacking");
      if (seen_kw) tc_p_error_node(P, e, "positional argument follows keyword argument");
      tc_vec_push(P, args, e);
      last = e;
    }
    if (!tc_p_accept(P, TC_P_COMMA)) {
      if (!tc_p_punct(P, close)) {
        check_missing_comma(P, last);
        tc_p_error(P, "invalid syntax");
      }
      break;
    }
  }
  if (keywords->n > REPEAT_SCAN_MAX) {
    const char **names = tc_arena_alloc(P->arena, sizeof(char *) * (size_t)keywords->n);
    for (int i = 0; i < keywords->n; i++) names[i] = keywords->v[i]->str;
    int r = first_repeat(P, names, keywords->n);
    if (r >= 0)
      tc_p_error_node(P, keywords->v[r], "keyword argument repeated: %s", keywords->v[r]->str);
  }
}

/* ---- comprehensions --------------------------------------------------------------------- */

/* for_if_clauses: (['async'] 'for' star_targets 'in' disjunction ('if' disjunction)*)+ */
static tc_ast *comprehension(tc_parser *P, int op, tc_ast *elt, tc_ast *value, tc_loc loc) {
  if (elt->kind == TC_AST_STARRED) tc_p_error_node(P, elt, "iterable unpacking cannot be used in comprehension");
  tc_ast *c = tc_p_node(P, TC_AST_COMPREHENSION, loc);
  c->op = op;
  c->a = elt;
  c->b = value;
  tc_vec clauses = {0};
  while (at_comp_for(P)) {
    tc_ast *f = tc_p_node(P, TC_AST_COMP_FOR, tc_p_peek(P)->loc);
    if (tc_p_accept_kw(P, TC_KW_ASYNC)) f->flag = 1;
    tc_p_advance(P); /* for */
    f->a = tc_p_star_targets(P);
    if (!tc_p_accept_kw(P, TC_KW_IN)) tc_p_error(P, "expected 'in'");
    f->b = tc_p_disjunction(P);
    tc_vec conds = {0};
    while (tc_p_accept_kw(P, TC_KW_IF)) tc_vec_push(P, &conds, tc_p_disjunction(P));
    f->list = tc_vec_list(&conds);
    tc_vec_push(P, &clauses, tc_p_finish(P, f));
  }
  c->list = tc_vec_list(&clauses);
  return c;
}

/* ---- atoms ------------------------------------------------------------------------------ */

/* strings: STRING+ (adjacent literals concatenate; an f-string part makes the whole an FSTRING) */
static tc_ast *strings(tc_parser *P) {
  size_t first = P->pos, last = P->pos;
  bool any_f = false;
  size_t total = 0;
  int bytes = P->t[first].str_flags & TC_STR_BYTES;
  while (last < P->n && P->t[last].kind == TC_TK_STRING) {
    const tc_token *t = &P->t[last];
    if ((t->str_flags & TC_STR_BYTES) != bytes)
      tc_p_error_at(P, last, P->t[first].loc, "cannot mix bytes and nonbytes literals");
    if (t->str_flags & TC_STR_FORMAT) any_f = true;
    total += t->str_len * 2; /* room for doubled braces */
    last++;
  }
  tc_ast *s = tc_p_node(P, any_f ? TC_AST_FSTRING : TC_AST_STRING, P->t[first].loc);
  s->flag = P->t[first].str_flags;
  if (last == first + 1) {
    s->str = P->t[first].str;
    s->str_len = P->t[first].str_len;
  } else {
    char *buf = tc_arena_alloc(P->arena, total + 1);
    size_t k = 0;
    for (size_t i = first; i < last; i++) {
      const tc_token *t = &P->t[i];
      if (any_f && !(t->str_flags & TC_STR_FORMAT)) {
        /* A plain part of an f-string concatenation: keep its braces literal. */
        for (size_t j = 0; j < t->str_len; j++) {
          buf[k++] = t->str[j];
          if (t->str[j] == '{' || t->str[j] == '}') buf[k++] = t->str[j];
        }
      } else {
        memcpy(buf + k, t->str, t->str_len);
        k += t->str_len;
      }
    }
    buf[k] = 0;
    s->str = buf;
    s->str_len = k;
  }
  P->pos = last;
  return tc_p_finish(P, s);
}

/* tuple | group | genexp:
 *   '(' [star_named_expression ',' [star_named_expressions]] ')'
 *   '(' (yield_expr | named_expression) ')'
 *   '(' (assignment_expression | expression !':=') for_if_clauses ')' */
static tc_ast *paren(tc_parser *P) {
  const tc_token *open = tc_p_peek(P);
  tc_p_advance(P);
  if (tc_p_punct(P, TC_P_RPAREN)) {
    tc_p_advance(P);
    return tc_p_finish(P, tc_p_node(P, TC_AST_TUPLE, open->loc));
  }
  if (tc_p_kw(P, TC_KW_YIELD)) {
    tc_ast *y = tc_p_yield_expr(P);
    tc_p_expect(P, TC_P_RPAREN, NULL);
    return y;
  }
  tc_ast *first = star_named_expression(P);
  if (at_comp_for(P)) {
    tc_ast *c = comprehension(P, TC_P_LPAREN, first, NULL, open->loc);
    tc_p_expect(P, TC_P_RPAREN, NULL);
    return tc_p_finish(P, c);
  }
  if (tc_p_punct(P, TC_P_RPAREN)) {
    if (first->kind == TC_AST_STARRED) tc_p_error_node(P, first, "cannot use starred expression here");
    tc_p_advance(P);
    return first; /* a group keeps the inner node (and its place) */
  }
  if (!tc_p_punct(P, TC_P_COMMA)) {
    check_missing_comma(P, first);
    tc_p_expect(P, TC_P_RPAREN, NULL);
  }
  tc_vec items = {0};
  tc_vec_push(P, &items, first);
  while (tc_p_accept(P, TC_P_COMMA)) {
    if (tc_p_punct(P, TC_P_RPAREN)) break;
    tc_ast *x = star_named_expression(P);
    tc_vec_push(P, &items, x);
    if (!tc_p_punct(P, TC_P_COMMA) && !tc_p_punct(P, TC_P_RPAREN)) check_missing_comma(P, x);
  }
  tc_p_expect(P, TC_P_RPAREN, NULL);
  tc_ast *tu = tc_p_node(P, TC_AST_TUPLE, open->loc);
  tu->list = tc_vec_list(&items);
  return tc_p_finish(P, tu);
}

/* list: '[' [star_named_expressions] ']' ; listcomp: '[' named_expression for_if_clauses ']' */
static tc_ast *list_display(tc_parser *P) {
  const tc_token *open = tc_p_peek(P);
  tc_p_advance(P);
  tc_vec items = {0};
  if (!tc_p_punct(P, TC_P_RBRACKET)) {
    tc_ast *first = star_named_expression(P);
    if (at_comp_for(P)) {
      tc_ast *c = comprehension(P, TC_P_LBRACKET, first, NULL, open->loc);
      tc_p_expect(P, TC_P_RBRACKET, NULL);
      return tc_p_finish(P, c);
    }
    tc_vec_push(P, &items, first);
    for (;;) {
      if (!tc_p_accept(P, TC_P_COMMA)) {
        if (!tc_p_punct(P, TC_P_RBRACKET)) check_missing_comma(P, items.v[items.n - 1]);
        break;
      }
      if (tc_p_punct(P, TC_P_RBRACKET)) break;
      tc_ast *x = star_named_expression(P);
      if (at_comp_for(P)) tc_p_error_at(P, P->pos, first->loc, "did you forget parentheses around the comprehension target?");
      tc_vec_push(P, &items, x);
    }
  }
  tc_p_expect(P, TC_P_RBRACKET, NULL);
  tc_ast *l = tc_p_node(P, TC_AST_LIST, open->loc);
  l->list = tc_vec_list(&items);
  return tc_p_finish(P, l);
}

/* dict: '{' [double_starred_kvpairs] '}' ; set: '{' star_named_expressions '}'
 * dictcomp: '{' kvpair for_if_clauses '}' ; setcomp: '{' named_expression for_if_clauses '}'
 * double_starred_kvpair: '**' bitwise_or | expression ':' expression */
static tc_ast *brace_display(tc_parser *P) {
  const tc_token *open = tc_p_peek(P);
  tc_p_advance(P);
  if (tc_p_accept(P, TC_P_RBRACE)) return tc_p_finish(P, tc_p_node(P, TC_AST_DICT, open->loc));
  tc_vec keys = {0}, values = {0};
  bool is_dict;
  if (tc_p_punct(P, TC_P_DSTAR)) {
    tc_loc dstar = tc_p_peek(P)->loc;
    tc_p_advance(P);
    tc_vec_push(P, &keys, NULL);
    tc_vec_push(P, &values, tc_p_bitwise_or(P));
    if (at_comp_for(P)) tc_p_error_at(P, P->pos, dstar, "dict unpacking cannot be used in dict comprehension");
    is_dict = true;
  } else {
    tc_ast *first = star_named_expression(P);
    tc_loc colon = tc_p_peek(P)->loc;
    if (tc_p_accept(P, TC_P_COLON)) {
      if (first->kind == TC_AST_STARRED) tc_p_error_node(P, first, "cannot use a starred expression in a dictionary key");
      if (tc_p_punct(P, TC_P_RBRACE) || tc_p_punct(P, TC_P_COMMA))
        tc_p_error_at(P, P->pos, colon, "expression expected after dictionary key and ':'");
      tc_ast *v = tc_p_expression(P);
      if (at_comp_for(P)) {
        tc_ast *c = comprehension(P, TC_P_LBRACE, first, v, open->loc);
        tc_p_expect(P, TC_P_RBRACE, NULL);
        return tc_p_finish(P, c);
      }
      tc_vec_push(P, &keys, first);
      tc_vec_push(P, &values, v);
      is_dict = true;
    } else {
      if (at_comp_for(P)) {
        tc_ast *c = comprehension(P, TC_P_LBRACE, first, NULL, open->loc);
        tc_p_expect(P, TC_P_RBRACE, NULL);
        return tc_p_finish(P, c);
      }
      tc_vec_push(P, &keys, first);
      is_dict = false;
    }
  }
  for (;;) {
    if (!tc_p_accept(P, TC_P_COMMA)) {
      if (!tc_p_punct(P, TC_P_RBRACE)) {
        tc_ast *prev = is_dict ? values.v[values.n - 1] : keys.v[keys.n - 1];
        check_missing_comma(P, prev);
      }
      break;
    }
    if (tc_p_punct(P, TC_P_RBRACE)) break;
    if (is_dict) {
      if (tc_p_accept(P, TC_P_DSTAR)) {
        tc_vec_push(P, &keys, NULL);
        tc_vec_push(P, &values, tc_p_bitwise_or(P));
        continue;
      }
      tc_ast *k = tc_p_expression(P);
      tc_loc kcolon = tc_p_peek(P)->loc;
      if (!tc_p_accept(P, TC_P_COLON)) tc_p_error_node(P, k, "':' expected after dictionary key");
      if (tc_p_punct(P, TC_P_RBRACE) || tc_p_punct(P, TC_P_COMMA))
        tc_p_error_at(P, P->pos, kcolon, "expression expected after dictionary key and ':'");
      tc_vec_push(P, &keys, k);
      tc_vec_push(P, &values, tc_p_expression(P));
    } else {
      tc_vec_push(P, &keys, star_named_expression(P));
    }
  }
  tc_p_expect(P, TC_P_RBRACE, NULL);
  tc_ast *d = tc_p_node(P, is_dict ? TC_AST_DICT : TC_AST_SET, open->loc);
  d->list = tc_vec_list(&keys);
  if (is_dict) d->list2 = tc_vec_list(&values);
  return tc_p_finish(P, d);
}

/* atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | tuple | group | genexp
 *     | list | listcomp | dict | set | dictcomp | setcomp | '...' */
static tc_ast *atom(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_ast *e;
  switch (t->kind) {
  case TC_TK_NAME:
    switch (t->kw) {
    case TC_KW_NONE_:
      e = tc_p_node(P, TC_AST_NAME, t->loc);
      e->str = tc_p_ident(P, t);
      e->str_len = t->len;
      break;
    case TC_KW_TRUE:
    case TC_KW_FALSE:
      e = tc_p_node(P, TC_AST_BOOL, t->loc);
      e->ival = t->kw == TC_KW_TRUE;
      break;
    case TC_KW_NONE: e = tc_p_node(P, TC_AST_NONE, t->loc); break;
    default: tc_p_error(P, "invalid syntax");
    }
    tc_p_advance(P);
    return tc_p_finish(P, e);
  case TC_TK_INT:
    e = tc_p_node(P, TC_AST_INT, t->loc);
    e->ival = t->ival;
    e->flag = t->overflow;
    tc_p_advance(P);
    return tc_p_finish(P, e);
  case TC_TK_FLOAT:
  case TC_TK_IMAG:
    e = tc_p_node(P, t->kind == TC_TK_FLOAT ? TC_AST_FLOAT : TC_AST_IMAG, t->loc);
    e->fval = t->fval;
    tc_p_advance(P);
    return tc_p_finish(P, e);
  case TC_TK_STRING: return strings(P);
  case TC_TK_PUNCT:
    switch (t->punct) {
    case TC_P_LPAREN: return paren(P);
    case TC_P_LBRACKET: return list_display(P);
    case TC_P_LBRACE: return brace_display(P);
    case TC_P_ELLIPSIS:
      tc_p_advance(P);
      return tc_p_finish(P, tc_p_node(P, TC_AST_ELLIPSIS, t->loc));
    default: break;
    }
    break;
  case TC_TK_INDENT: tc_p_unexpected_indent(P);
  default: break;
  }
  tc_p_error(P, "invalid syntax");
}

/* slice: [expression] ':' [expression] [':' [expression]] | named_expression | starred_expression */
static tc_ast *slice(tc_parser *P) {
  tc_loc loc = tc_p_peek(P)->loc;
  if (tc_p_punct(P, TC_P_STAR)) return star_named_expression(P);
  tc_ast *lower = NULL;
  if (!tc_p_punct(P, TC_P_COLON)) {
    lower = tc_p_named_expression(P);
    if (!tc_p_punct(P, TC_P_COLON)) return lower;
  }
  tc_p_advance(P); /* ':' */
  tc_ast *s = tc_p_node(P, TC_AST_SLICE, loc);
  s->a = lower;
  if (!tc_p_punct(P, TC_P_COLON) && !tc_p_punct(P, TC_P_COMMA) && !tc_p_punct(P, TC_P_RBRACKET))
    s->b = tc_p_expression(P);
  if (tc_p_accept(P, TC_P_COLON)) {
    if (!tc_p_punct(P, TC_P_COMMA) && !tc_p_punct(P, TC_P_RBRACKET)) s->c = tc_p_expression(P);
  }
  return tc_p_finish(P, s);
}

/* slices: slice !',' | ','.(slice | starred_expression)+ [','] */
static tc_ast *slices(tc_parser *P) {
  tc_loc loc = tc_p_peek(P)->loc;
  if (tc_p_punct(P, TC_P_RBRACKET)) tc_p_error(P, "invalid syntax");
  tc_ast *first = slice(P);
  if (!tc_p_punct(P, TC_P_COMMA)) {
    if (!tc_p_punct(P, TC_P_RBRACKET)) check_missing_comma(P, first);
    if (first->kind != TC_AST_STARRED) return first;
    /* x[*a] indexes with the tuple (*a,), as in CPython. */
    tc_ast *tu = tc_p_node(P, TC_AST_TUPLE, loc);
    tc_vec one = {0};
    tc_vec_push(P, &one, first);
    tu->list = tc_vec_list(&one);
    return tc_p_finish(P, tu);
  }
  tc_vec items = {0};
  tc_vec_push(P, &items, first);
  while (tc_p_accept(P, TC_P_COMMA)) {
    if (tc_p_punct(P, TC_P_RBRACKET)) break;
    tc_ast *x = slice(P);
    tc_vec_push(P, &items, x);
    if (!tc_p_punct(P, TC_P_COMMA) && !tc_p_punct(P, TC_P_RBRACKET)) check_missing_comma(P, x);
  }
  tc_ast *tu = tc_p_node(P, TC_AST_TUPLE, loc);
  tu->list = tc_vec_list(&items);
  return tc_p_finish(P, tu);
}

/* primary: atom ('.' NAME | '(' [arguments] ')' | '[' slices ']')* */
static tc_ast *primary(tc_parser *P) {
  tc_ast *e = atom(P);
  for (;;) {
    const tc_token *t = tc_p_peek(P);
    if (tc_tok_punct(t, TC_P_DOT)) {
      tc_p_advance(P);
      const tc_token *name = tc_p_peek(P);
      if (name->kind != TC_TK_NAME) tc_p_error(P, "invalid syntax");
      if (name->kw != TC_KW_NONE_) tc_p_error(P, "invalid syntax");
      tc_ast *a = tc_p_node(P, TC_AST_ATTRIBUTE, e->loc);
      a->a = e;
      a->str = tc_p_ident(P, name);
      a->str_len = name->len;
      tc_p_advance(P);
      e = tc_p_finish(P, a);
    } else if (tc_tok_punct(t, TC_P_LPAREN)) {
      tc_p_advance(P);
      tc_ast *c = tc_p_node(P, TC_AST_CALL, e->loc);
      c->a = e;
      tc_vec args = {0}, kws = {0};
      tc_p_arguments(P, &args, &kws, TC_P_RPAREN);
      tc_p_expect(P, TC_P_RPAREN, NULL);
      c->list = tc_vec_list(&args);
      c->list2 = tc_vec_list(&kws);
      e = tc_p_finish(P, c);
    } else if (tc_tok_punct(t, TC_P_LBRACKET)) {
      tc_p_advance(P);
      tc_ast *s = tc_p_node(P, TC_AST_SUBSCRIPT, e->loc);
      s->a = e;
      s->b = slices(P);
      tc_p_expect(P, TC_P_RBRACKET, NULL);
      e = tc_p_finish(P, s);
    } else {
      return e;
    }
  }
}

/* await_primary: 'await' primary | primary
 * power: await_primary ['**' factor] */
static tc_ast *power(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_ast *e;
  if (tc_tok_kw(t, TC_KW_AWAIT)) {
    tc_p_advance(P);
    e = tc_p_node(P, TC_AST_AWAIT, t->loc);
    e->a = primary(P);
    tc_p_finish(P, e);
  } else {
    e = primary(P);
  }
  if (tc_p_punct(P, TC_P_DSTAR)) {
    tc_p_advance(P);
    tc_ast *b = tc_p_node(P, TC_AST_BINOP, e->loc);
    b->op = TC_P_DSTAR;
    b->a = e;
    enter(P);
    b->b = factor(P);
    leave(P);
    e = tc_p_finish(P, b);
  }
  return e;
}

/* factor: '+' factor | '-' factor | '~' factor | power */
static tc_ast *factor(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  if (tc_tok_punct(t, TC_P_PLUS) || tc_tok_punct(t, TC_P_MINUS) || tc_tok_punct(t, TC_P_TILDE)) {
    enter(P);
    tc_p_advance(P);
    tc_ast *u = tc_p_node(P, TC_AST_UNARYOP, t->loc);
    u->op = t->punct;
    u->a = factor(P);
    leave(P);
    return tc_p_finish(P, u);
  }
  return power(P);
}

static int binop_prec(const tc_token *t) {
  if (t->kind != TC_TK_PUNCT) return 0;
  switch (t->punct) {
  case TC_P_PIPE: return 1;
  case TC_P_CARET: return 2;
  case TC_P_AMP: return 3;
  case TC_P_LSHIFT:
  case TC_P_RSHIFT: return 4;
  case TC_P_PLUS:
  case TC_P_MINUS: return 5;
  case TC_P_STAR:
  case TC_P_SLASH:
  case TC_P_DSLASH:
  case TC_P_PERCENT:
  case TC_P_AT: return 6;
  default: return 0;
  }
}

/* bitwise_or: bitwise_or '|' bitwise_xor | bitwise_xor
 * bitwise_xor: bitwise_xor '^' bitwise_and | bitwise_and
 * bitwise_and: bitwise_and '&' shift_expr | shift_expr
 * shift_expr: shift_expr ('<<' | '>>') sum | sum
 * sum: sum ('+' | '-') term | term
 * term: term ('*' | '/' | '//' | '%' | '@') factor | factor
 * (all left-associative; parsed by precedence climbing) */
static tc_ast *binary(tc_parser *P, int min_prec) {
  tc_ast *lhs = factor(P);
  for (;;) {
    const tc_token *t = tc_p_peek(P);
    int prec = binop_prec(t);
    if (prec == 0 || prec < min_prec) return lhs;
    tc_p_advance(P);
    tc_ast *b = tc_p_node(P, TC_AST_BINOP, lhs->loc);
    b->op = t->punct;
    b->a = lhs;
    b->b = binary(P, prec + 1);
    lhs = tc_p_finish(P, b);
  }
}

tc_ast *tc_p_bitwise_or(tc_parser *P) { return binary(P, 1); }

/* comparison: bitwise_or (compare_op bitwise_or)*
 * compare_op: '==' | '!=' | '<=' | '<' | '>=' | '>' | 'not' 'in' | 'in' | 'is' 'not' | 'is' */
static tc_ast *comparison(tc_parser *P) {
  tc_ast *left = tc_p_bitwise_or(P);
  tc_vec comps = {0};
  tc_cmp_op ops[64], *opv = ops;
  int cap = 64, n = 0;
  for (;;) {
    const tc_token *t = tc_p_peek(P);
    int op = -1;
    if (t->kind == TC_TK_PUNCT) {
      switch (t->punct) {
      case TC_P_EQ: op = TC_CMP_EQ; break;
      case TC_P_NE: op = TC_CMP_NE; break;
      case TC_P_LT: op = TC_CMP_LT; break;
      case TC_P_LE: op = TC_CMP_LE; break;
      case TC_P_GT: op = TC_CMP_GT; break;
      case TC_P_GE: op = TC_CMP_GE; break;
      default: break;
      }
      if (op >= 0) tc_p_advance(P);
    } else if (tc_tok_kw(t, TC_KW_IN)) {
      op = TC_CMP_IN;
      tc_p_advance(P);
    } else if (tc_tok_kw(t, TC_KW_NOT) && tc_tok_kw(tc_p_peek_at(P, 1), TC_KW_IN)) {
      op = TC_CMP_NOT_IN;
      tc_p_advance(P);
      tc_p_advance(P);
    } else if (tc_tok_kw(t, TC_KW_IS)) {
      tc_p_advance(P);
      op = tc_p_accept_kw(P, TC_KW_NOT) ? TC_CMP_IS_NOT : TC_CMP_IS;
    }
    if (op < 0) break;
    if (n == cap) {
      tc_cmp_op *nv = tc_arena_alloc(P->arena, sizeof(tc_cmp_op) * (size_t)cap * 2);
      memcpy(nv, opv, sizeof(tc_cmp_op) * (size_t)n);
      opv = nv;
      cap *= 2;
    }
    opv[n++] = (tc_cmp_op)op;
    tc_vec_push(P, &comps, tc_p_bitwise_or(P));
  }
  if (n == 0) return left;
  tc_ast *c = tc_p_node(P, TC_AST_COMPARE, left->loc);
  c->a = left;
  c->list = tc_vec_list(&comps);
  c->ops = tc_arena_alloc(P->arena, sizeof(tc_cmp_op) * (size_t)n);
  memcpy(c->ops, opv, sizeof(tc_cmp_op) * (size_t)n);
  return tc_p_finish(P, c);
}

/* inversion: 'not' inversion | comparison */
static tc_ast *inversion(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  if (!tc_tok_kw(t, TC_KW_NOT)) return comparison(P);
  enter(P);
  tc_p_advance(P);
  tc_ast *u = tc_p_node(P, TC_AST_UNARYOP, t->loc);
  u->op = TC_AST_NOT_OP;
  u->a = inversion(P);
  leave(P);
  return tc_p_finish(P, u);
}

/* conjunction: inversion ('and' inversion)* ; disjunction: conjunction ('or' conjunction)* */
static tc_ast *boolop(tc_parser *P, tc_keyword kw) {
  tc_ast *first = kw == TC_KW_AND ? inversion(P) : boolop(P, TC_KW_AND);
  if (!tc_p_kw(P, kw)) return first;
  tc_vec items = {0};
  tc_vec_push(P, &items, first);
  while (tc_p_accept_kw(P, kw)) tc_vec_push(P, &items, kw == TC_KW_AND ? inversion(P) : boolop(P, TC_KW_AND));
  tc_ast *b = tc_p_node(P, TC_AST_BOOLOP, first->loc);
  b->op = kw;
  b->list = tc_vec_list(&items);
  return tc_p_finish(P, b);
}

tc_ast *tc_p_disjunction(tc_parser *P) { return boolop(P, TC_KW_OR); }

/* lambdef: 'lambda' [lambda_params] ':' expression */
static tc_ast *lambdef(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_p_advance(P);
  tc_ast *l = tc_p_node(P, TC_AST_LAMBDA, t->loc);
  tc_p_params(P, &l->params, false, TC_P_COLON);
  tc_p_expect(P, TC_P_COLON, NULL);
  l->a = tc_p_expression(P);
  return tc_p_finish(P, l);
}

/* expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef */
tc_ast *tc_p_expression(tc_parser *P) {
  enter(P);
  tc_ast *e;
  if (tc_p_kw(P, TC_KW_LAMBDA)) {
    e = lambdef(P);
  } else {
    e = tc_p_disjunction(P);
    if (tc_p_kw(P, TC_KW_IF)) {
      tc_p_advance(P);
      tc_ast *x = tc_p_node(P, TC_AST_IFEXP, e->loc);
      x->b = e;
      x->a = tc_p_disjunction(P);
      if (!tc_p_accept_kw(P, TC_KW_ELSE)) tc_p_error_node(P, e, "expected 'else' after 'if' expression");
      x->c = tc_p_expression(P);
      e = tc_p_finish(P, x);
    }
  }
  leave(P);
  return e;
}

/* named_expression: NAME ':=' expression | expression !':=' */
tc_ast *tc_p_named_expression(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  if (tc_tok_ident(t) && tc_tok_punct(tc_p_peek_at(P, 1), TC_P_WALRUS)) {
    tc_ast *target = atom(P);
    tc_p_advance(P);
    tc_ast *n = tc_p_node(P, TC_AST_NAMED_EXPR, t->loc);
    n->a = target;
    n->b = tc_p_expression(P);
    return tc_p_finish(P, n);
  }
  tc_ast *e = tc_p_expression(P);
  if (tc_p_punct(P, TC_P_WALRUS))
    tc_p_error_node(P, e, "cannot use assignment expressions with %s", tc_expr_name(e));
  return e;
}

/* star_named_expression: '*' bitwise_or | named_expression */
static tc_ast *star_named_expression(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  if (!tc_tok_punct(t, TC_P_STAR)) return tc_p_named_expression(P);
  tc_p_advance(P);
  tc_ast *s = tc_p_node(P, TC_AST_STARRED, t->loc);
  s->a = tc_p_bitwise_or(P);
  return tc_p_finish(P, s);
}

/* star_expressions: star_expression (',' star_expression)* [',']
 * star_expression: '*' bitwise_or | expression */
tc_ast *tc_p_star_expressions(tc_parser *P) {
  tc_loc loc = tc_p_peek(P)->loc;
  tc_vec items = {0};
  bool comma = false;
  for (;;) {
    tc_ast *x;
    const tc_token *t = tc_p_peek(P);
    if (tc_tok_punct(t, TC_P_STAR)) {
      tc_p_advance(P);
      x = tc_p_node(P, TC_AST_STARRED, t->loc);
      x->a = tc_p_bitwise_or(P);
      tc_p_finish(P, x);
    } else {
      x = tc_p_expression(P);
    }
    tc_vec_push(P, &items, x);
    if (!tc_p_punct(P, TC_P_COMMA)) break;
    tc_p_advance(P);
    comma = true;
    if (!tc_tok_starts_expression(tc_p_peek(P))) break;
  }
  if (!comma) return items.v[0];
  tc_ast *tu = tc_p_node(P, TC_AST_TUPLE, loc);
  tu->list = tc_vec_list(&items);
  return tc_p_finish(P, tu);
}

/* yield_expr: 'yield' 'from' expression | 'yield' [star_expressions] */
tc_ast *tc_p_yield_expr(tc_parser *P) {
  const tc_token *t = tc_p_peek(P);
  tc_p_advance(P);
  tc_ast *y = tc_p_node(P, TC_AST_YIELD, t->loc);
  if (tc_p_accept_kw(P, TC_KW_FROM)) {
    y->flag = 1;
    y->a = tc_p_expression(P);
  } else {
    if (tc_tok_starts_expression(tc_p_peek(P))) y->a = tc_p_star_expressions(P);
  }
  return tc_p_finish(P, y);
}

/* annotated_rhs: yield_expr | star_expressions */
tc_ast *tc_p_star_expression_or_yield(tc_parser *P) {
  if (tc_p_kw(P, TC_KW_YIELD)) return tc_p_yield_expr(P);
  return tc_p_star_expressions(P);
}
