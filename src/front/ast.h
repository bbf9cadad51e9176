/* ast.h: the syntax tree of a Python module, modelled on Python's own `ast` module. The parser
 * builds it for the whole file; the evaluator (eval.c) walks the parts that define kernels.
 *
 * One node type for all kinds keeps the parser and the evaluator simple. Which fields a kind
 * uses is listed beside it; unused fields are zero. Lists are arrays (n, v). */
#ifndef TILEC_AST_H
#define TILEC_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "front/lex.h"
#include "util/arena.h"
#include "util/diag.h"

typedef struct tc_ast tc_ast;
typedef struct tc_ast_list {
  int n;
  tc_ast **v;
} tc_ast_list;

/* X(kind, fields used) */
#define TC_AST_LIST(X)                                                                            \
  /* ---- expressions ---- */                                                                     \
  X(NAME, "str=identifier")                                                                       \
  X(INT, "ival (overflow: flag, ival then INT64_MAX); fval = the value as a double")                                                                 \
  X(FLOAT, "fval")                                                                                \
  X(IMAG, "fval")                                                                                 \
  X(STRING, "str/str_len (adjacent literals concatenated); flag=TC_STR_* of the first")         \
  X(BOOL, "ival 0/1")                                                                             \
  X(NONE, "")                                                                                     \
  X(ELLIPSIS, "")                                                                                 \
  X(ATTRIBUTE, "a=value, str=attr")                                                               \
  X(SUBSCRIPT, "a=value, b=index (a TUPLE for x[i, j]; SLICE nodes inside)")                     \
  X(SLICE, "a=lower, b=upper, c=step (each may be NULL)")                                         \
  X(CALL, "a=func, list=positional args (STARRED allowed), list2=KEYWORD nodes")                  \
  X(KEYWORD, "str=name (NULL for **kwargs), a=value")                                             \
  X(BINOP, "op=tc_punct (PLUS, MINUS, STAR, SLASH, DSLASH, PERCENT, DSTAR, AT, AMP, PIPE, CARET, " \
           "LSHIFT, RSHIFT), a=left, b=right")                                                    \
  X(UNARYOP, "op=tc_punct PLUS/MINUS/TILDE, or op=TC_AST_NOT_OP for `not`; a=operand")             \
  X(BOOLOP, "op=TC_KW_AND or TC_KW_OR, list=operands (>= 2)")                                      \
  X(COMPARE, "a=left, list=comparators, ops[]=TC_CMP_* (one per comparator)")                     \
  X(IFEXP, "a=test, b=body, c=orelse")                                                            \
  X(TUPLE, "list=elements")                                                                       \
  X(LIST, "list=elements")                                                                        \
  X(SET, "list=elements")                                                                         \
  X(DICT, "list=keys (NULL entry for **x), list2=values")                                         \
  X(STARRED, "a=value (*x)")                                                                      \
  X(LAMBDA, "params=parameters, a=body expression")                                               \
  X(COMPREHENSION, "op=TC_P_LBRACKET list / LPAREN generator / LBRACE set or dict; a=element "    \
                   "(b=value for dict); list=COMP_FOR clauses")                                   \
  X(COMP_FOR, "a=target, b=iter, list=if conditions; flag=1 for `async for`")                                             \
  X(NAMED_EXPR, "a=target NAME, b=value (x := v)")                                                \
  X(FSTRING, "str=the literal text as written between the quotes (not evaluated); when " \
            "concatenated, plain parts are appended with their braces doubled")                \
  X(AWAIT, "a=value")                                                                             \
  X(YIELD, "a=value or NULL; flag=1 for `yield from`")                                           \
  /* ---- statements ---- */                                                                      \
  X(MODULE, "list=body")                                                                          \
  X(FUNCTION_DEF, "str=name, params=parameters, list=body, list2=decorators, a=return annotation; " \
                 "flag=1 for `async def`") \
  X(CLASS_DEF, "str=name, list=body, list2=decorators, list3=bases and keywords")                 \
  X(RETURN, "a=value or NULL")                                                                    \
  X(ASSIGN, "list=targets (a = b = v has two), a=value")                                          \
  X(AUG_ASSIGN, "a=target, op=tc_punct of the binary op (PLUS for +=), b=value")                  \
  X(ANN_ASSIGN, "a=target, b=annotation, c=value or NULL")                                        \
  X(FOR, "a=target, b=iter, list=body, list2=orelse; flag=1 for `async for`")                                             \
  X(WHILE, "a=test, list=body, list2=orelse")                                                     \
  X(IF, "a=test, list=body, list2=orelse (elif is a nested IF as the only orelse element)")       \
  X(WITH, "list=WITH_ITEM nodes, list2=body; flag=1 for `async with`")                                                     \
  X(WITH_ITEM, "a=context expression, b=optional `as` target")                                    \
  X(EXPR_STMT, "a=value")                                                                         \
  X(PASS, "")                                                                                     \
  X(BREAK, "")                                                                                    \
  X(CONTINUE, "")                                                                                 \
  X(ASSERT, "a=test, b=message or NULL")                                                          \
  X(IMPORT, "list=ALIAS nodes")                                                                   \
  X(IMPORT_FROM, "str=module (dots included, e.g. \"..x\"), list=ALIAS nodes")                    \
  X(ALIAS, "str=dotted name, str2=asname or NULL")                                                \
  X(GLOBAL, "list=NAME nodes (also nonlocal: flag=1)")                                            \
  X(DELETE, "list=targets")                                                                       \
  X(RAISE, "a=exception or NULL, b=cause or NULL")                                                \
  X(TRY, "list=body, list2=EXCEPT_HANDLER nodes, list3=orelse, list4=finalbody; flag=1: except*")                  \
  X(EXCEPT_HANDLER, "a=type or NULL, str=name or NULL, list=body")                                \
  X(MATCH, "skipped statement: recognised by its shape and skipped as an opaque block (no children)")         \
  X(ERROR_STMT, "a top-level statement that did not parse and was skipped (see the parser): " \
                "str=the rendered diagnostic, str2=its message, ival/op=its line/col")

typedef enum tc_ast_kind {
#define X(kind, doc) TC_AST_##kind,
  TC_AST_LIST(X)
#undef X
  TC_AST_COUNT
} tc_ast_kind;
const char *tc_ast_kind_name(tc_ast_kind k);

enum { TC_AST_NOT_OP = 1000 };

typedef enum tc_cmp_op {
  TC_CMP_EQ, TC_CMP_NE, TC_CMP_LT, TC_CMP_LE, TC_CMP_GT, TC_CMP_GE,
  TC_CMP_IN, TC_CMP_NOT_IN, TC_CMP_IS, TC_CMP_IS_NOT
} tc_cmp_op;

/* A function's parameters. */
typedef enum tc_param_kind { TC_PARAM_POSONLY, TC_PARAM_NORMAL, TC_PARAM_VARARGS, TC_PARAM_KWONLY, TC_PARAM_KWARGS } tc_param_kind;
typedef struct tc_ast_param {
  const char *name;
  tc_param_kind kind;
  tc_ast *annotation; /* or NULL */
  tc_ast *default_;   /* or NULL */
  tc_loc loc;
} tc_ast_param;
typedef struct tc_ast_params {
  int n;
  tc_ast_param *v;
} tc_ast_params;

struct tc_ast {
  /* Laid out to 176 bytes (a multiple of the arena's 16): the tree is what the reader keeps per
   * source byte. */
  tc_ast_kind kind;
  int op;
  int flag;
  uint32_t str_len;
  tc_loc loc;               /* the node's first token */
  int end_line, end_col;    /* one past its last token, for ranges in diagnostics */
  const char *str;
  const char *str2;
  union {
    int64_t ival;
    double fval;            /* FLOAT, IMAG */
  };
  tc_ast *a, *b, *c;
  tc_ast_list list, list2, list3, list4;
  tc_cmp_op *ops;     /* COMPARE: list.n entries */
  tc_ast_params params;
};

/* Parse a whole module. Returns the MODULE node, or NULL with err filled on a syntax error.
 * Error recovery: a syntax error inside a top-level `def`, `class` or decorated definition is
 * fatal (kernels live there, and valid Python always parses). A syntax error in any other
 * top-level statement is skipped up to the next top-level statement and kept as an ERROR_STMT
 * node whose str holds the rendered diagnostic, so unusual module-level Python never stops
 * tilec; the evaluator never evaluates module code that is not needed for a kernel. */
tc_ast *tc_parse(tc_arena *arena, const tc_source *src, const tc_token_array *tokens, tilec_error *err);

/* Lex and parse in one step, choosing between a lexing error and an earlier syntax error the
 * way CPython 3.11 does (its tokenizer runs lazily, then over the rest of the file): a bad
 * string, number or closing bracket is reported wherever it is; an indentation error, an
 * unclosed bracket or a bad escape loses to a syntax error before it. */
tc_ast *tc_read(tc_arena *arena, const tc_source *src, tilec_error *err);

/* Debug: print the tree as an S-expression (tests use it). */
struct tc_strbuf;
void tc_ast_dump(struct tc_strbuf *sb, const tc_ast *node);

#endif
