/* ast.c: node kind names and the S-expression dump of the syntax tree (tests compare it).
 *
 * Format: a NAME is its identifier, numbers are written as numbers (floats always with a '.'
 * or exponent, imaginary ones with a 'j'), strings in double quotes with C escapes (b"..",
 * f".." for bytes and f-strings), True/False/None/... as themselves; everything else is
 * (head child...), where head is the operator or the statement keyword. Statement bodies are
 * (body ...), absent branches are left out, absent optional children are _. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/ast.h"
#include "util/strbuf.h"

static const char *const kind_names[] = {
#define X(kind, doc) #kind,
    TC_AST_LIST(X)
#undef X
};

const char *tc_ast_kind_name(tc_ast_kind k) {
  if ((int)k < 0 || k >= TC_AST_COUNT) return "?";
  return kind_names[k];
}

static void dump(tc_strbuf *sb, const tc_ast *n);

static void dump_string(tc_strbuf *sb, const char *s, size_t len) {
  tc_sb_putc(sb, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"': tc_sb_puts(sb, "\\\""); break;
    case '\\': tc_sb_puts(sb, "\\\\"); break;
    case '\n': tc_sb_puts(sb, "\\n"); break;
    case '\t': tc_sb_puts(sb, "\\t"); break;
    case '\r': tc_sb_puts(sb, "\\r"); break;
    default:
      if (c < 0x20 || c == 0x7f) tc_sb_printf(sb, "\\x%02x", c);
      else tc_sb_putc(sb, (char)c);
    }
  }
  tc_sb_putc(sb, '"');
}

static void dump_float(tc_strbuf *sb, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  /* Shortest text that reads back the same number. */
  for (int prec = 1; prec <= 17; prec++) {
    char t[64];
    snprintf(t, sizeof t, "%.*g", prec, v);
    double back = 0;
    if (sscanf(t, "%lf", &back) == 1 && back == v) {
      memcpy(buf, t, sizeof t);
      break;
    }
  }
  tc_sb_puts(sb, buf);
  if (!strpbrk(buf, ".eni")) tc_sb_puts(sb, ".0");
}

static void dump_list(tc_strbuf *sb, const tc_ast_list *l) {
  for (int i = 0; i < l->n; i++) {
    tc_sb_putc(sb, ' ');
    dump(sb, l->v[i]);
  }
}

static void dump_opt(tc_strbuf *sb, const tc_ast *n) {
  tc_sb_putc(sb, ' ');
  if (n) dump(sb, n);
  else tc_sb_putc(sb, '_');
}

static void dump_block(tc_strbuf *sb, const char *head, const tc_ast_list *l, bool always) {
  if (!always && l->n == 0) return;
  tc_sb_printf(sb, " (%s", head);
  dump_list(sb, l);
  tc_sb_putc(sb, ')');
}

static void dump_params(tc_strbuf *sb, const tc_ast_params *ps) {
  static const char *const kinds[] = {"posonly", "", "vararg", "kwonly", "kwarg"};
  tc_sb_puts(sb, "(params");
  for (int i = 0; i < ps->n; i++) {
    const tc_ast_param *p = &ps->v[i];
    tc_sb_putc(sb, ' ');
    if (p->kind == TC_PARAM_NORMAL && !p->annotation && !p->default_) {
      tc_sb_puts(sb, p->name);
      continue;
    }
    tc_sb_printf(sb, "(%s", p->name);
    if (p->kind != TC_PARAM_NORMAL) tc_sb_printf(sb, " %s", kinds[p->kind]);
    if (p->annotation) {
      tc_sb_puts(sb, " : ");
      dump(sb, p->annotation);
    }
    if (p->default_) {
      tc_sb_puts(sb, " = ");
      dump(sb, p->default_);
    }
    tc_sb_putc(sb, ')');
  }
  tc_sb_putc(sb, ')');
}

static const char *cmp_spelling(tc_cmp_op op) {
  static const char *const s[] = {"==", "!=", "<", "<=", ">", ">=", "in", "not-in", "is", "is-not"};
  return (unsigned)op < sizeof s / sizeof s[0] ? s[op] : "?";
}

/* (op (op (op a b) c) d) for a flat chain a op b op c op d: its left spine is walked with a loop
 * (a chain of 10,000 terms is a tree 10,000 deep), its right operands by dump. */
static void dump_binop_chain(tc_strbuf *sb, const tc_ast *n) {
  size_t depth = 0;
  for (const tc_ast *x = n; x && x->kind == TC_AST_BINOP; x = x->a) depth++;
  const tc_ast **spine = malloc(depth * sizeof *spine);
  if (!spine) {
    sb->failed = 1;
    return;
  }
  size_t i = depth;
  for (const tc_ast *x = n; x && x->kind == TC_AST_BINOP; x = x->a) {
    spine[--i] = x; /* spine[0]: the innermost */
    tc_sb_printf(sb, "(%s ", tc_punct_spelling((tc_punct)x->op));
  }
  dump(sb, spine[0]->a);
  for (i = 0; i < depth; i++) {
    tc_sb_putc(sb, ' ');
    dump(sb, spine[i]->b);
    tc_sb_putc(sb, ')');
  }
  free(spine);
}

static void dump(tc_strbuf *sb, const tc_ast *n) {
  if (!n) {
    tc_sb_putc(sb, '_');
    return;
  }
  if (n->kind == TC_AST_BINOP) {
    dump_binop_chain(sb, n);
    return;
  }
  switch (n->kind) {
  case TC_AST_NAME: tc_sb_puts(sb, n->str); return;
  case TC_AST_INT:
    if (n->flag) tc_sb_puts(sb, "(int-overflow)");
    else tc_sb_printf(sb, "%lld", (long long)n->ival);
    return;
  case TC_AST_FLOAT: dump_float(sb, n->fval); return;
  case TC_AST_IMAG:
    dump_float(sb, n->fval);
    tc_sb_putc(sb, 'j');
    return;
  case TC_AST_STRING:
    if (n->flag & TC_STR_BYTES) tc_sb_putc(sb, 'b');
    dump_string(sb, n->str, n->str_len);
    return;
  case TC_AST_FSTRING:
    tc_sb_putc(sb, 'f');
    dump_string(sb, n->str, n->str_len);
    return;
  case TC_AST_BOOL: tc_sb_puts(sb, n->ival ? "True" : "False"); return;
  case TC_AST_NONE: tc_sb_puts(sb, "None"); return;
  case TC_AST_ELLIPSIS: tc_sb_puts(sb, "..."); return;
  case TC_AST_PASS: tc_sb_puts(sb, "pass"); return;
  case TC_AST_BREAK: tc_sb_puts(sb, "break"); return;
  case TC_AST_CONTINUE: tc_sb_puts(sb, "continue"); return;
  default: break;
  }
  tc_sb_putc(sb, '(');
  switch (n->kind) {
  case TC_AST_ATTRIBUTE:
    tc_sb_puts(sb, ". ");
    dump(sb, n->a);
    tc_sb_printf(sb, " %s", n->str);
    break;
  case TC_AST_SUBSCRIPT:
    tc_sb_puts(sb, "[] ");
    dump(sb, n->a);
    tc_sb_putc(sb, ' ');
    dump(sb, n->b);
    break;
  case TC_AST_SLICE:
    tc_sb_putc(sb, ':');
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    dump_opt(sb, n->c);
    break;
  case TC_AST_CALL:
    tc_sb_puts(sb, "call ");
    dump(sb, n->a);
    dump_list(sb, &n->list);
    dump_list(sb, &n->list2);
    break;
  case TC_AST_KEYWORD:
    if (n->str) tc_sb_printf(sb, "kw %s ", n->str);
    else tc_sb_puts(sb, "** ");
    dump(sb, n->a);
    break;
  case TC_AST_UNARYOP:
    tc_sb_puts(sb, n->op == TC_AST_NOT_OP ? "not"
                   : n->op == TC_P_MINUS  ? "u-"
                   : n->op == TC_P_PLUS   ? "u+"
                                          : "~");
    dump_opt(sb, n->a);
    break;
  case TC_AST_BOOLOP:
    tc_sb_puts(sb, n->op == TC_KW_AND ? "and" : "or");
    dump_list(sb, &n->list);
    break;
  case TC_AST_COMPARE:
    tc_sb_puts(sb, "cmp ");
    dump(sb, n->a);
    for (int i = 0; i < n->list.n; i++) {
      tc_sb_printf(sb, " %s ", cmp_spelling(n->ops[i]));
      dump(sb, n->list.v[i]);
    }
    break;
  case TC_AST_IFEXP:
    tc_sb_puts(sb, "ifexp");
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    dump_opt(sb, n->c);
    break;
  case TC_AST_TUPLE: tc_sb_puts(sb, "tuple"); dump_list(sb, &n->list); break;
  case TC_AST_LIST: tc_sb_puts(sb, "list"); dump_list(sb, &n->list); break;
  case TC_AST_SET: tc_sb_puts(sb, "set"); dump_list(sb, &n->list); break;
  case TC_AST_DICT:
    tc_sb_puts(sb, "dict");
    for (int i = 0; i < n->list.n; i++) {
      if (n->list.v[i]) {
        tc_sb_puts(sb, " (");
        dump(sb, n->list.v[i]);
        tc_sb_putc(sb, ' ');
      } else {
        tc_sb_puts(sb, " (** ");
      }
      dump(sb, n->list2.v[i]);
      tc_sb_putc(sb, ')');
    }
    break;
  case TC_AST_STARRED: tc_sb_putc(sb, '*'); dump_opt(sb, n->a); break;
  case TC_AST_LAMBDA:
    tc_sb_puts(sb, "lambda ");
    dump_params(sb, &n->params);
    dump_opt(sb, n->a);
    break;
  case TC_AST_COMPREHENSION:
    tc_sb_puts(sb, n->op == TC_P_LBRACKET ? "listcomp"
                   : n->op == TC_P_LPAREN ? "genexp"
                   : n->b                 ? "dictcomp"
                                          : "setcomp");
    dump_opt(sb, n->a);
    if (n->b) dump_opt(sb, n->b);
    dump_list(sb, &n->list);
    break;
  case TC_AST_COMP_FOR:
    tc_sb_puts(sb, n->flag ? "async-for" : "for");
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    for (int i = 0; i < n->list.n; i++) {
      tc_sb_puts(sb, " (if ");
      dump(sb, n->list.v[i]);
      tc_sb_putc(sb, ')');
    }
    break;
  case TC_AST_NAMED_EXPR:
    tc_sb_puts(sb, ":=");
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    break;
  case TC_AST_AWAIT: tc_sb_puts(sb, "await"); dump_opt(sb, n->a); break;
  case TC_AST_YIELD:
    tc_sb_puts(sb, n->flag ? "yield-from" : "yield");
    if (n->a) dump_opt(sb, n->a);
    break;
  case TC_AST_MODULE: tc_sb_puts(sb, "module"); dump_list(sb, &n->list); break;
  case TC_AST_FUNCTION_DEF:
    tc_sb_printf(sb, "%s %s ", n->flag ? "async-def" : "def", n->str);
    dump_params(sb, &n->params);
    if (n->a) {
      tc_sb_puts(sb, " (-> ");
      dump(sb, n->a);
      tc_sb_putc(sb, ')');
    }
    dump_block(sb, "decorators", &n->list2, false);
    dump_block(sb, "body", &n->list, true);
    break;
  case TC_AST_CLASS_DEF:
    tc_sb_printf(sb, "class %s", n->str);
    dump_block(sb, "bases", &n->list3, false);
    dump_block(sb, "decorators", &n->list2, false);
    dump_block(sb, "body", &n->list, true);
    break;
  case TC_AST_RETURN:
    tc_sb_puts(sb, "return");
    if (n->a) dump_opt(sb, n->a);
    break;
  case TC_AST_ASSIGN:
    tc_sb_putc(sb, '=');
    dump_list(sb, &n->list);
    dump_opt(sb, n->a);
    break;
  case TC_AST_AUG_ASSIGN:
    tc_sb_printf(sb, "%s=", tc_punct_spelling((tc_punct)n->op));
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    break;
  case TC_AST_ANN_ASSIGN:
    tc_sb_puts(sb, "ann");
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    if (n->c) dump_opt(sb, n->c);
    break;
  case TC_AST_FOR:
    tc_sb_puts(sb, n->flag ? "async-for" : "for");
    dump_opt(sb, n->a);
    dump_opt(sb, n->b);
    dump_block(sb, "body", &n->list, true);
    dump_block(sb, "else", &n->list2, false);
    break;
  case TC_AST_WHILE:
    tc_sb_puts(sb, "while");
    dump_opt(sb, n->a);
    dump_block(sb, "body", &n->list, true);
    dump_block(sb, "else", &n->list2, false);
    break;
  case TC_AST_IF:
    tc_sb_puts(sb, "if");
    dump_opt(sb, n->a);
    dump_block(sb, "body", &n->list, true);
    dump_block(sb, "else", &n->list2, false);
    break;
  case TC_AST_WITH:
    tc_sb_puts(sb, n->flag ? "async-with" : "with");
    dump_list(sb, &n->list);
    dump_block(sb, "body", &n->list2, true);
    break;
  case TC_AST_WITH_ITEM:
    tc_sb_puts(sb, "item");
    dump_opt(sb, n->a);
    if (n->b) dump_opt(sb, n->b);
    break;
  case TC_AST_EXPR_STMT: tc_sb_puts(sb, "expr"); dump_opt(sb, n->a); break;
  case TC_AST_ASSERT:
    tc_sb_puts(sb, "assert");
    dump_opt(sb, n->a);
    if (n->b) dump_opt(sb, n->b);
    break;
  case TC_AST_IMPORT: tc_sb_puts(sb, "import"); dump_list(sb, &n->list); break;
  case TC_AST_IMPORT_FROM:
    tc_sb_printf(sb, "from %s", n->str);
    dump_list(sb, &n->list);
    break;
  case TC_AST_ALIAS:
    if (n->str2) tc_sb_printf(sb, "as %s %s", n->str, n->str2);
    else tc_sb_printf(sb, "alias %s", n->str);
    break;
  case TC_AST_GLOBAL:
    tc_sb_puts(sb, n->flag ? "nonlocal" : "global");
    dump_list(sb, &n->list);
    break;
  case TC_AST_DELETE: tc_sb_puts(sb, "del"); dump_list(sb, &n->list); break;
  case TC_AST_RAISE:
    tc_sb_puts(sb, "raise");
    if (n->a) dump_opt(sb, n->a);
    if (n->b) {
      tc_sb_puts(sb, " (from ");
      dump(sb, n->b);
      tc_sb_putc(sb, ')');
    }
    break;
  case TC_AST_TRY:
    tc_sb_puts(sb, n->flag ? "try*" : "try");
    dump_block(sb, "body", &n->list, true);
    dump_list(sb, &n->list2);
    dump_block(sb, "else", &n->list3, false);
    dump_block(sb, "finally", &n->list4, false);
    break;
  case TC_AST_EXCEPT_HANDLER:
    tc_sb_puts(sb, "except");
    dump_opt(sb, n->a);
    if (n->str) tc_sb_printf(sb, " %s", n->str);
    dump_block(sb, "body", &n->list, true);
    break;
  case TC_AST_MATCH: tc_sb_puts(sb, "match"); break;
  case TC_AST_ERROR_STMT: {
    tc_sb_puts(sb, "error ");
    const char *s = n->str ? n->str : "";
    const char *nl = strchr(s, '\n');
    dump_string(sb, s, nl ? (size_t)(nl - s) : strlen(s));
    break;
  }
  default: tc_sb_puts(sb, tc_ast_kind_name(n->kind)); break;
  }
  tc_sb_putc(sb, ')');
}

void tc_ast_dump(tc_strbuf *sb, const tc_ast *node) { dump(sb, node); }
