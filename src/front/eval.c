/* eval.c: the evaluator's core: errors, values, scopes, lazily evaluated module globals,
 * finding kernels, and the entry point tc_front_eval (factory, eager and prim_func styles). */
#include "front/eval_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- errors */

_Noreturn void ev_fail(tc_ev *ev, tc_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_verror_at(ev->err, TILEC_ERROR_PROGRAM, loc, fmt, ap);
  va_end(ap);
  longjmp(ev->fail_jmp, 1);
}

_Noreturn void ev_fail_usage(tc_ev *ev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_loc none = {0};
  tc_verror_at(ev->err, TILEC_ERROR_USAGE, none, fmt, ap);
  va_end(ap);
  longjmp(ev->fail_jmp, 1);
}

_Noreturn void ev_unsupported(tc_ev *ev, tc_loc loc, const char *what) {
  ev_fail(ev, loc, "unsupported: %s", what);
}

/* ---------------------------------------------------------------- values */

/* The bytes a value of kind k needs: its kind and the one union member it uses. Most values of a
 * kernel are runtime expressions, elements and numbers, which need 16 or 32 of the union's 136
 * bytes; a value never changes to a kind with a larger member (list <-> tuple share one). */
static size_t val_bytes(tv_kind k) {
  const tc_val *v = NULL;
  size_t head = offsetof(tc_val, u), body;
  switch (k) {
  case TV_NONE: case TV_BOOL: case TV_INT: case TV_FLOAT: body = sizeof v->u.i; break;
  case TV_DTYPE: body = sizeof v->u.dt; break;
  case TV_FUNC: case TV_MODULE: case TV_OPAQUE: case TV_EXPR: case TV_BUFFER: body = sizeof v->u.e; break;
  case TV_STR: body = sizeof v->u.str; break;
  case TV_TUPLE: case TV_LIST: body = sizeof v->u.seq; break;
  case TV_DICT: body = sizeof v->u.dict; break;
  case TV_SLICE: body = sizeof v->u.slice; break;
  case TV_BUILTIN: body = sizeof v->u.bi; break;
  case TV_ELEM: body = sizeof v->u.elem; break;
  case TV_REGION: body = sizeof v->u.region; break;
  case TV_ENUM: body = sizeof v->u.en; break;
  case TV_DEAD: body = sizeof v->u.dead; break;
  default: return sizeof(tc_val);
  }
  return head + body;
}

tc_val *tv_new(tc_ev *ev, tv_kind k) {
  tc_val *v = tc_arena_zalloc(&ev->tmp, val_bytes(k));
  v->kind = k;
  return v;
}
tc_val *tv_none(tc_ev *ev) { return tv_new(ev, TV_NONE); }
/* Small ints and bools are immutable and frequent (loop counters): shared, so compile-time
 * loops do not allocate for them. */
enum { SMALL_INT_MIN = -16, SMALL_INT_MAX = 1023 };
tc_val *tv_bool(tc_ev *ev, bool b) {
  if (!ev->bools) {
    ev->bools = EV_NEW_ARRAY(ev, tc_val, 2);
    ev->bools[0].kind = ev->bools[1].kind = TV_BOOL;
    ev->bools[1].u.b = true;
  }
  return &ev->bools[b ? 1 : 0];
}
tc_val *tv_int(tc_ev *ev, int64_t i) {
  if (i >= SMALL_INT_MIN && i <= SMALL_INT_MAX) {
    if (!ev->small_ints) {
      ev->small_ints = EV_NEW_ARRAY(ev, tc_val, SMALL_INT_MAX - SMALL_INT_MIN + 1);
      for (int k = 0; k <= SMALL_INT_MAX - SMALL_INT_MIN; k++) {
        ev->small_ints[k].kind = TV_INT;
        ev->small_ints[k].u.i = k + SMALL_INT_MIN;
      }
    }
    return &ev->small_ints[i - SMALL_INT_MIN];
  }
  tc_val *v = tv_new(ev, TV_INT);
  v->u.i = i;
  return v;
}
tc_val *tv_float(tc_ev *ev, double f) {
  tc_val *v = tv_new(ev, TV_FLOAT);
  v->u.f = f;
  return v;
}
tc_val *tv_str(tc_ev *ev, const char *s, size_t n) {
  tc_val *v = tv_new(ev, TV_STR);
  v->u.str.s = tc_arena_strndup(&ev->tmp, s, n);
  v->u.str.n = n;
  return v;
}
tc_val *tv_cstr(tc_ev *ev, const char *s) { return tv_str(ev, s, strlen(s)); }
static tc_val *tv_seq(tc_ev *ev, tv_kind k, int n, tc_val **items) {
  tc_val *v = tv_new(ev, k);
  v->u.seq.n = n;
  v->u.seq.cap = n > 4 ? n : 4;
  v->u.seq.v = EV_NEW_ARRAY(ev, tc_val *, v->u.seq.cap);
  if (n > 0 && items) memcpy(v->u.seq.v, items, sizeof(tc_val *) * (size_t)n);
  return v;
}
tc_val *tv_tuple(tc_ev *ev, int n, tc_val **v) { return tv_seq(ev, TV_TUPLE, n, v); }
tc_val *tv_list(tc_ev *ev, int n, tc_val **v) { return tv_seq(ev, TV_LIST, n, v); }
tc_val *tv_dtype(tc_ev *ev, tc_dtype dt) {
  tc_val *v = tv_new(ev, TV_DTYPE);
  v->u.dt = dt;
  return v;
}
/* Tree size (shared subexpressions counted once per use: what printers and recursive passes
 * pay) and depth of an expression, memoized by node. Children were measured when they became
 * values, so the recursion here stays shallow. A value may be as deep as a flat chain of 16,384
 * terms; what a statement may hold is bounded lower, where it is emitted (ev_emit). */
enum { EXPR_SIZE_LIMIT = 100000, EXPR_DEPTH_LIMIT = 16384 };
/* Shallow expressions, most of a program's, are measured again rather than remembered: the memo
 * would cost more memory than the IR itself (a program of 150,000 statements held 3 million). */
enum { MEMO_MIN_DEPTH = 8 };
typedef struct esz { uint32_t size, depth; } esz;

static esz expr_measure(tc_ev *ev, const tc_expr *e, int rec) {
  esz r = {1, 1};
  if (!e || e->nargs <= 0) return r;
  if (rec > 64) {
    r.size = EXPR_SIZE_LIMIT + 1;
    return r;
  }
  uint32_t mask = (uint32_t)ev->esize.cap - 1, h;
  if (ev->esize.cap) {
    h = (uint32_t)(((uintptr_t)e >> 4) * 2654435761u) & mask;
    for (uint32_t i = h; ev->esize.key[i]; i = (i + 1) & mask)
      if (ev->esize.key[i] == e) {
        r.size = ev->esize.size[i];
        r.depth = ev->esize.depth[i];
        return r;
      }
  }
  uint64_t total = 1;
  uint32_t depth = 0;
  for (int i = 0; i < e->nargs && total <= EXPR_SIZE_LIMIT; i++) {
    esz c = expr_measure(ev, e->args[i], rec + 1);
    total += c.size;
    if (c.depth > depth) depth = c.depth;
  }
  r.size = total > EXPR_SIZE_LIMIT ? EXPR_SIZE_LIMIT + 1 : (uint32_t)total;
  r.depth = depth + 1;
  if (r.depth <= MEMO_MIN_DEPTH) return r;
  if ((ev->esize.n + 1) * 2 > ev->esize.cap) { /* grow and rehash */
    int oldcap = ev->esize.cap;
    const tc_expr **ok = ev->esize.key;
    uint32_t *os = ev->esize.size, *od = ev->esize.depth;
    ev->esize.cap = oldcap ? oldcap * 2 : 256;
    ev->esize.key = EV_NEW_ARRAY(ev, const tc_expr *, ev->esize.cap);
    ev->esize.size = EV_NEW_ARRAY(ev, uint32_t, ev->esize.cap);
    ev->esize.depth = EV_NEW_ARRAY(ev, uint32_t, ev->esize.cap);
    mask = (uint32_t)ev->esize.cap - 1;
    for (int i = 0; i < oldcap; i++)
      if (ok[i]) {
        uint32_t j = (uint32_t)(((uintptr_t)ok[i] >> 4) * 2654435761u) & mask;
        while (ev->esize.key[j]) j = (j + 1) & mask;
        ev->esize.key[j] = ok[i];
        ev->esize.size[j] = os[i];
        ev->esize.depth[j] = od[i];
      }
  }
  mask = (uint32_t)ev->esize.cap - 1;
  h = (uint32_t)(((uintptr_t)e >> 4) * 2654435761u) & mask;
  while (ev->esize.key[h]) h = (h + 1) & mask;
  ev->esize.key[h] = e;
  ev->esize.size[h] = r.size;
  ev->esize.depth[h] = r.depth;
  ev->esize.n++;
  return r;
}

/* The depth of e (memoized, as tv_expr measures it); e's operands must have been measured, as the
 * operands of every value were. */
uint32_t ev_expr_depth(tc_ev *ev, const tc_expr *e);
uint32_t ev_expr_depth(tc_ev *ev, const tc_expr *e) { return expr_measure(ev, e, 0).depth; }

tc_val *tv_expr(tc_ev *ev, tc_expr *e) {
  esz m = expr_measure(ev, e, 0);
  if (m.size > EXPR_SIZE_LIMIT)
    ev_fail(ev, e->loc, "this expression grows past %d operations; bind parts of it to names", EXPR_SIZE_LIMIT);
  if (m.depth > EXPR_DEPTH_LIMIT)
    ev_fail(ev, e->loc, "this expression nests more than %d operations deep; bind parts of it to names", EXPR_DEPTH_LIMIT);
  tc_val *v = tv_new(ev, TV_EXPR);
  v->u.e = e;
  return v;
}
tc_val *tv_buffer(tc_ev *ev, tc_buffer *b) {
  tc_val *v = tv_new(ev, TV_BUFFER);
  v->u.buf = b;
  return v;
}
tc_val *tv_builtin(tc_ev *ev, const tc_builtin *b, tc_val *self) {
  tc_val *v = tv_new(ev, TV_BUILTIN);
  v->u.bi.b = b;
  v->u.bi.self = self;
  return v;
}
tc_val *tv_module(tc_ev *ev, int id) {
  tc_val *v = tv_new(ev, TV_MODULE);
  v->u.mod.id = id;
  return v;
}
tc_val *tv_opaque(tc_ev *ev, const char *name) {
  const tc_builtin *b = ev_compat_builtin(name); /* a helper tilec implements, however it was imported */
  if (b) return tv_builtin(ev, b, NULL);
  tc_val *v = tv_new(ev, TV_OPAQUE);
  v->u.opaque.name = tc_arena_strdup(&ev->tmp, name);
  return v;
}

void tv_list_push(tc_ev *ev, tc_val *list, tc_val *x) {
  if (list->u.seq.n >= 1000000) ev_fail(ev, (tc_loc){0}, "list grows past 1000000 elements");
  if (list->u.seq.n == list->u.seq.cap) {
    int cap = list->u.seq.cap * 2;
    list->u.seq.v = tc_arena_grow(&ev->tmp, list->u.seq.v, sizeof(tc_val *) * (size_t)list->u.seq.n,
                                  sizeof(tc_val *) * (size_t)cap);
    list->u.seq.cap = cap;
  }
  list->u.seq.v[list->u.seq.n++] = x;
}

const char *ev_dtype_name(tc_dtype dt) {
  const char *n = tc_dtype_scalar_name((tc_scalar_type)dt.code);
  return n ? n : "?";
}

const char *tv_kind_name(const tc_val *v) {
  switch (v->kind) {
  case TV_NONE: return "NoneType";
  case TV_BOOL: return "bool";
  case TV_INT: return "int";
  case TV_FLOAT: return "float";
  case TV_STR: return "str";
  case TV_TUPLE: return "tuple";
  case TV_LIST: return "list";
  case TV_DICT: return "dict";
  case TV_SLICE: return "slice";
  case TV_DTYPE: return "dtype";
  case TV_FUNC: return v->u.func->is_prim_func ? "prim_func" : "function";
  case TV_BUILTIN: return "builtin function";
  case TV_MODULE: return "module";
  case TV_OPAQUE: return v->u.opaque.name;
  case TV_EXPR: return ev_dtype_name(v->u.e->dtype);
  case TV_BUFFER: return "buffer";
  case TV_ELEM: return "buffer element";
  case TV_REGION: return "buffer region";
  case TV_RANGE: return "range";
  case TV_KERNEL: return "T.Kernel frame";
  case TV_TENSOR_TYPE: return "T.Tensor type";
  case TV_ENUM: return "T.GemmWarpPolicy";
  case TV_LAYOUT: return v->u.layout.l->kind == TC_LAYOUT_FRAGMENT ? "Fragment" : "Layout";
  case TV_WARP_GROUP: return "T.ws frame";
  case TV_DEAD: return "undefined";
  }
  return "?";
}

static void format_float(tc_strbuf *sb, double f) {
  if (f != f) { tc_sb_puts(sb, "nan"); return; }
  if (f > 1.7976931348623157e308) { tc_sb_puts(sb, "inf"); return; }
  if (f < -1.7976931348623157e308) { tc_sb_puts(sb, "-inf"); return; }
  char buf[64];
  for (int prec = 1; prec <= 17; prec++) { /* shortest text that reads back exactly, like repr */
    snprintf(buf, sizeof buf, "%.*g", prec, f);
    if (strtod(buf, NULL) == f) break;
  }
  tc_sb_puts(sb, buf);
  if (!strpbrk(buf, ".eni")) tc_sb_puts(sb, ".0");
}

void tv_format(tc_ev *ev, tc_strbuf *sb, const tc_val *v, bool repr) {
  switch (v->kind) {
  case TV_NONE: tc_sb_puts(sb, "None"); return;
  case TV_BOOL: tc_sb_puts(sb, v->u.b ? "True" : "False"); return;
  case TV_INT: tc_sb_printf(sb, "%lld", (long long)v->u.i); return;
  case TV_FLOAT: format_float(sb, v->u.f); return;
  case TV_STR:
    if (repr) tc_sb_putc(sb, '\'');
    tc_sb_putn(sb, v->u.str.s, v->u.str.n);
    if (repr) tc_sb_putc(sb, '\'');
    return;
  case TV_TUPLE:
  case TV_LIST:
    tc_sb_putc(sb, v->kind == TV_TUPLE ? '(' : '[');
    for (int i = 0; i < v->u.seq.n; i++) {
      if (i) tc_sb_puts(sb, ", ");
      tv_format(ev, sb, v->u.seq.v[i], true);
    }
    if (v->kind == TV_TUPLE && v->u.seq.n == 1) tc_sb_putc(sb, ',');
    tc_sb_putc(sb, v->kind == TV_TUPLE ? ')' : ']');
    return;
  case TV_DICT:
    tc_sb_putc(sb, '{');
    for (int i = 0; i < v->u.dict.n; i++) {
      if (i) tc_sb_puts(sb, ", ");
      tv_format(ev, sb, v->u.dict.k[i], true);
      tc_sb_puts(sb, ": ");
      tv_format(ev, sb, v->u.dict.v[i], true);
    }
    tc_sb_putc(sb, '}');
    return;
  case TV_DTYPE: tc_sb_puts(sb, ev_dtype_name(v->u.dt)); return;
  case TV_FUNC: tc_sb_printf(sb, "<function %s>", v->u.func->name); return;
  case TV_BUILTIN: tc_sb_printf(sb, "<built-in function %s>", v->u.bi.b->name); return;
  case TV_OPAQUE: tc_sb_printf(sb, "<%s>", v->u.opaque.name); return;
  case TV_EXPR: tc_ir_print_expr(sb, v->u.e); return;
  case TV_LAYOUT: tc_layout_print(sb, v->u.layout.l); return;
  case TV_BUFFER: tc_sb_puts(sb, v->u.buf->name); return;
  case TV_ELEM: tc_sb_printf(sb, "%s[...]", v->u.elem.buf->name); return;
  case TV_REGION: tc_sb_printf(sb, "%s[...]", v->u.region.buf->name); return;
  case TV_ENUM: {
    static const char *const names[] = {"Square", "FullRow", "FullCol"};
    tc_sb_printf(sb, "GemmWarpPolicy.%s", names[v->u.en.value % 3]);
    return;
  }
  default: tc_sb_printf(sb, "<%s>", tv_kind_name(v)); return;
  }
}

const char *tv_to_cstr(tc_ev *ev, const tc_val *v, bool repr) {
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  tv_format(ev, &sb, v, repr);
  const char *s = tc_arena_strdup(&ev->tmp, tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  return s;
}

/* Byte offset of a (line, col) location in the source. */
static size_t loc_offset(const tc_source *src, int line, int col) {
  const char *p = src->text, *end = src->text + src->len;
  for (int l = 1; l < line && p < end; p++)
    if (*p == '\n') l++;
  size_t off = (size_t)(p - src->text) + (size_t)(col > 0 ? col - 1 : 0);
  return off > src->len ? src->len : off;
}

const char *ev_node_text(tc_ev *ev, const tc_ast *node) {
  if (!node || !ev->src || !ev->src->text) return "?";
  size_t a = loc_offset(ev->src, node->loc.line, node->loc.col);
  size_t b = node->end_line > 0 ? loc_offset(ev->src, node->end_line, node->end_col) : a;
  if (b < a) b = a;
  if (b - a > 200) b = a + 200;
  /* collapse newlines and runs of spaces (continuation lines) */
  char *out = tc_arena_alloc(&ev->tmp, b - a + 1);
  size_t n = 0;
  for (size_t i = a; i < b; i++) {
    char c = ev->src->text[i];
    if (c == '\n' || c == '\t' || c == '\r' || c == '\\') c = ' ';
    if (c == ' ' && n > 0 && out[n - 1] == ' ') continue;
    out[n++] = c;
  }
  while (n > 0 && out[n - 1] == ' ') n--;
  out[n] = 0;
  return n ? out : "?";
}

/* ---------------------------------------------------------------- scopes */

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

tc_env *scope_new(tc_ev *ev, tc_env *parent, bool is_module) {
  tc_env *s = EV_NEW(ev, tc_env);
  s->parent = parent;
  s->is_module = is_module;
  s->cap = 16;
  s->slots = EV_NEW_ARRAY(ev, tc_binding, s->cap);
  return s;
}

static tc_binding *scope_slot(tc_env *s, const char *name, uint32_t h) {
  uint32_t mask = (uint32_t)s->cap - 1;
  for (uint32_t i = h & mask;; i = (i + 1) & mask) {
    tc_binding *b = &s->slots[i];
    if (!b->name || (b->hash == h && strcmp(b->name, name) == 0)) return b;
  }
}

tc_binding *scope_find_local(tc_env *s, const char *name) {
  tc_binding *b = scope_slot(s, name, name_hash(name));
  return b->name ? b : NULL;
}

static void scope_grow(tc_ev *ev, tc_env *s) {
  tc_binding *old = s->slots;
  int oldcap = s->cap;
  s->cap *= 2;
  s->slots = EV_NEW_ARRAY(ev, tc_binding, s->cap);
  for (int i = 0; i < oldcap; i++)
    if (old[i].name) *scope_slot(s, old[i].name, old[i].hash) = old[i];
}

tc_binding *scope_set(tc_ev *ev, tc_env *s, const char *name, tc_val *v) {
  if ((s->n + 1) * 2 > s->cap) scope_grow(ev, s);
  uint32_t h = name_hash(name);
  tc_binding *b = scope_slot(s, name, h);
  if (ev->rt_depth > 0) { /* remember the old binding so the runtime block can end it */
    if (ev->nundo == ev->capundo) {
      int cap = ev->capundo ? ev->capundo * 2 : 32;
      ev->undo = tc_arena_grow(&ev->tmp, ev->undo, sizeof(tc_undo) * (size_t)ev->nundo, sizeof(tc_undo) * (size_t)cap);
      ev->capundo = cap;
    }
    tc_undo *u = &ev->undo[ev->nundo++];
    u->scope = s;
    u->name = name;
    if (b->name) u->old = *b;
    else memset(&u->old, 0, sizeof u->old);
  }
  if (!b->name) {
    b->name = name;
    b->hash = h;
    s->n++;
  }
  b->val = v;
  b->owned = NULL;
  b->depth = ev->rt_depth;
  return b;
}

/* ---------------------------------------------------------------- module globals */

static void collect_targets(tc_ev *ev, const tc_ast *t, const tc_ast *stmt, bool simple);

static void add_pending(tc_ev *ev, const char *name, const tc_ast *stmt, bool simple) {
  tc_pending *p = &ev->pending[ev->npending++];
  p->name = name;
  p->stmt = stmt;
  p->state = simple ? 0 : 3; /* 3: defined by code tilec does not run */
}

static void collect_targets(tc_ev *ev, const tc_ast *t, const tc_ast *stmt, bool simple) {
  if (!t) return;
  if (t->kind == TC_AST_NAME) add_pending(ev, t->str, stmt, simple);
  else if (t->kind == TC_AST_TUPLE || t->kind == TC_AST_LIST)
    for (int i = 0; i < t->list.n; i++) collect_targets(ev, t->list.v[i], stmt, simple);
  else if (t->kind == TC_AST_STARRED) collect_targets(ev, t->a, stmt, simple);
}

static int count_bindings(const tc_ast *s);
static int count_list(const tc_ast_list *l) {
  int n = 0;
  for (int i = 0; i < l->n; i++) n += count_bindings(l->v[i]);
  return n;
}
static int count_target(const tc_ast *t) {
  if (!t) return 0;
  if (t->kind == TC_AST_NAME) return 1;
  if (t->kind == TC_AST_STARRED) return count_target(t->a);
  if (t->kind == TC_AST_TUPLE || t->kind == TC_AST_LIST) {
    int n = 0;
    for (int i = 0; i < t->list.n; i++) n += count_target(t->list.v[i]);
    return n;
  }
  return 0;
}
static int count_bindings(const tc_ast *s) {
  if (!s) return 0;
  switch (s->kind) {
  case TC_AST_ASSIGN: {
    int n = 0;
    for (int i = 0; i < s->list.n; i++) n += count_target(s->list.v[i]);
    return n;
  }
  case TC_AST_ANN_ASSIGN:
  case TC_AST_AUG_ASSIGN: return count_target(s->a);
  case TC_AST_FOR: return count_target(s->a) + count_list(&s->list) + count_list(&s->list2);
  case TC_AST_IMPORT:
  case TC_AST_IMPORT_FROM: return s->list.n;
  case TC_AST_FUNCTION_DEF:
  case TC_AST_CLASS_DEF: return 1;
  case TC_AST_IF:
  case TC_AST_WHILE: return count_list(&s->list) + count_list(&s->list2);
  case TC_AST_WITH: {
    int n = count_list(&s->list2);
    for (int i = 0; i < s->list.n; i++) n += count_target(s->list.v[i]->b);
    return n;
  }
  case TC_AST_TRY: {
    int n = count_list(&s->list) + count_list(&s->list3) + count_list(&s->list4);
    for (int i = 0; i < s->list2.n; i++) n += count_list(&s->list2.v[i]->list);
    return n;
  }
  default: return 0;
  }
}

static const char *import_bound_name(tc_ev *ev, const tc_ast *alias, bool from) {
  if (alias->str2) return alias->str2;
  if (from) return alias->str;
  const char *dot = strchr(alias->str, '.');
  return dot ? tc_arena_strndup(&ev->tmp, alias->str, (size_t)(dot - alias->str)) : alias->str;
}

static void scan_stmt(tc_ev *ev, const tc_ast *s, bool simple) {
  switch (s->kind) {
  case TC_AST_ASSIGN:
    for (int i = 0; i < s->list.n; i++) collect_targets(ev, s->list.v[i], s, simple);
    break;
  case TC_AST_ANN_ASSIGN:
    if (s->c || !simple) collect_targets(ev, s->a, s, simple);
    break;
  case TC_AST_AUG_ASSIGN: collect_targets(ev, s->a, s, simple); break;
  case TC_AST_IMPORT:
  case TC_AST_IMPORT_FROM:
    for (int i = 0; i < s->list.n; i++)
      if (strcmp(s->list.v[i]->str, "*") != 0)
        add_pending(ev, import_bound_name(ev, s->list.v[i], s->kind == TC_AST_IMPORT_FROM), s, simple);
    break;
  case TC_AST_FUNCTION_DEF:
  case TC_AST_CLASS_DEF: add_pending(ev, s->str, s, simple); break;
  case TC_AST_FOR:
    collect_targets(ev, s->a, s, false);
    for (int i = 0; i < s->list.n; i++) scan_stmt(ev, s->list.v[i], false);
    for (int i = 0; i < s->list2.n; i++) scan_stmt(ev, s->list2.v[i], false);
    break;
  case TC_AST_IF:
  case TC_AST_WHILE:
    for (int i = 0; i < s->list.n; i++) scan_stmt(ev, s->list.v[i], false);
    for (int i = 0; i < s->list2.n; i++) scan_stmt(ev, s->list2.v[i], false);
    break;
  case TC_AST_WITH:
    for (int i = 0; i < s->list.n; i++) collect_targets(ev, s->list.v[i]->b, s, false);
    for (int i = 0; i < s->list2.n; i++) scan_stmt(ev, s->list2.v[i], false);
    break;
  case TC_AST_TRY:
    for (int i = 0; i < s->list.n; i++) scan_stmt(ev, s->list.v[i], false);
    for (int j = 0; j < s->list2.n; j++)
      for (int i = 0; i < s->list2.v[j]->list.n; i++) scan_stmt(ev, s->list2.v[j]->list.v[i], false);
    for (int i = 0; i < s->list3.n; i++) scan_stmt(ev, s->list3.v[i], false);
    for (int i = 0; i < s->list4.n; i++) scan_stmt(ev, s->list4.v[i], false);
    break;
  case TC_AST_ERROR_STMT:
    ev->error_stmts[ev->nerror_stmts++] = s;
    break;
  default: break;
  }
}

void ev_scan_module(tc_ev *ev) {
  const tc_ast_list *body = &ev->module->list;
  int total = count_list(body);
  ev->pending = EV_NEW_ARRAY(ev, tc_pending, total);
  ev->error_stmts = EV_NEW_ARRAY(ev, const tc_ast *, body->n);
  for (int i = 0; i < body->n; i++) scan_stmt(ev, body->v[i], true);
}

static bool ident_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Does an ERROR_STMT's source line bind `name` (an import, a def, or an assignment)? */
static bool error_stmt_binds(tc_ev *ev, const tc_ast *s, const char *name) {
  size_t off = loc_offset(ev->src, s->loc.line, s->loc.col);
  const char *p = ev->src->text + off;
  size_t n = strlen(name);
  while (*p == ' ') p++;
  const char *eol = strchr(p, '\n');
  size_t len = eol ? (size_t)(eol - p) : strlen(p);
  if (strncmp(p, "import ", 7) == 0 || strncmp(p, "from ", 5) == 0) {
    for (const char *q = p; q + n <= p + len; q++)
      if (strncmp(q, name, n) == 0 && (q == p || !ident_char(q[-1])) && !ident_char(q[n])) return true;
    return false;
  }
  if (strncmp(p, "def ", 4) == 0 || strncmp(p, "class ", 6) == 0) {
    p = strchr(p, ' ') + 1;
    while (*p == ' ') p++;
    return strncmp(p, name, n) == 0 && !ident_char(p[n]);
  }
  for (;;) { /* a = ..., a, b = ... */
    while (*p == ' ' || *p == '(' || *p == '[') p++;
    if (strncmp(p, name, n) == 0 && !ident_char(p[n])) return true;
    while (*p && ident_char(*p)) p++;
    while (*p == ' ' || *p == ')' || *p == ']') p++;
    if (*p != ',') return false;
    p++;
  }
}

static void run_module_stmt(tc_ev *ev, tc_pending *p) {
  tc_env *saved_scope = ev->scope;
  tc_stmt_list *saved_cur = ev->cur;
  int saved_rt = ev->rt_depth, saved_mark = ev->loop_depth_mark;
  bool saved_prim = ev->in_prim_func;
  ev->scope = ev->globals;
  ev->cur = NULL;
  ev->rt_depth = 0;
  ev->loop_depth_mark = 0;
  ev->in_prim_func = false;
  /* every pending entry of this statement is being run */
  for (int i = 0; i < ev->npending; i++)
    if (ev->pending[i].stmt == p->stmt) ev->pending[i].state = 1;
  ev_stmt(ev, p->stmt);
  for (int i = 0; i < ev->npending; i++)
    if (ev->pending[i].stmt == p->stmt) ev->pending[i].state = 2;
  ev->scope = saved_scope;
  ev->cur = saved_cur;
  ev->rt_depth = saved_rt;
  ev->loop_depth_mark = saved_mark;
  ev->in_prim_func = saved_prim;
}

tc_val *ev_lookup_global(tc_ev *ev, const char *name, tc_loc loc, bool *found) {
  tc_binding *b = scope_find_local(ev->globals, name);
  if (b) {
    *found = true;
    return b->val;
  }
  bool any = false;
  for (int i = 0; i < ev->npending; i++) {
    tc_pending *p = &ev->pending[i];
    if (strcmp(p->name, name) != 0) continue;
    if (p->state == 0) {
      run_module_stmt(ev, p);
      any = true;
    } else if (p->state == 1 && !scope_find_local(ev->globals, name)) {
      ev_fail(ev, loc, "name '%s' is used in its own definition", name);
    }
  }
  b = scope_find_local(ev->globals, name);
  if (b) {
    *found = true;
    return b->val;
  }
  if (!any) {
    const tc_builtin *bi = ev_python_builtin(name);
    if (bi) {
      *found = true;
      return tv_builtin(ev, bi, NULL);
    }
    for (int i = 0; i < ev->npending; i++)
      if (ev->pending[i].state == 3 && strcmp(ev->pending[i].name, name) == 0)
        ev_fail(ev, loc,
                "name '%s' is only defined by module-level code that tilec does not run (line %d); "
                "define it with a plain assignment, import or def",
                name, ev->pending[i].stmt->loc.line);
    for (int i = 0; i < ev->nerror_stmts; i++)
      if (error_stmt_binds(ev, ev->error_stmts[i], name)) {
        const tc_ast *s = ev->error_stmts[i];
        /* the statement that defines the name did not parse: report its syntax error */
        if (ev->err && ev->err->status == TILEC_OK) {
          tc_error_at(ev->err, TILEC_ERROR_PROGRAM, s->loc, "invalid syntax");
          if (s->str) {
            snprintf(ev->err->rendered, sizeof ev->err->rendered, "%s", s->str);
            const char *m = strstr(s->str, "error: ");
            if (m) {
              const char *e = strchr(m, '\n');
              snprintf(ev->err->message, sizeof ev->err->message, "%.*s", (int)(e ? e - m - 7 : (long)strlen(m + 7)), m + 7);
            }
          }
        }
        longjmp(ev->fail_jmp, 1);
      }
  }
  *found = false;
  return NULL;
}

/* Names visible from the current scope, for "did you mean". */
static void suggest_name(tc_ev *ev, const char *name, const char **best, int *bestd) {
  for (tc_env *s = ev->scope; s; s = s->parent ? s->parent : (s->is_module ? NULL : ev->globals)) {
    for (int i = 0; i < s->cap; i++) {
      const tc_binding *b = &s->slots[i];
      if (!b->name || b->val->kind == TV_DEAD) continue;
      int d = tc_edit_distance(name, b->name, 3);
      if (d < *bestd) {
        *bestd = d;
        *best = b->name;
      }
    }
    if (s->is_module) break;
  }
  for (int i = 0; i < ev->npending; i++) {
    int d = tc_edit_distance(name, ev->pending[i].name, 3);
    if (d < *bestd) {
      *bestd = d;
      *best = ev->pending[i].name;
    }
  }
  int d;
  const char *b = ev_python_builtin_suggest(name, &d);
  if (b && d < *bestd) {
    *bestd = d;
    *best = b;
  }
}

static int suggestion_limit(const char *name) {
  size_t n = strlen(name);
  return n <= 1 ? 0 : n <= 3 ? 1 : n <= 6 ? 2 : 3;
}

tc_val *ev_lookup(tc_ev *ev, const char *name, tc_loc loc) {
  for (tc_env *s = ev->scope; s && !s->is_module; s = s->parent) {
    tc_binding *b = scope_find_local(s, name);
    if (b) {
      if (b->val->kind == TV_DEAD) ev_fail(ev, loc, "'%s' %s", name, b->val->u.dead.why);
      return b->val;
    }
  }
  bool found;
  tc_val *v = ev_lookup_global(ev, name, loc, &found);
  if (found) {
    if (v->kind == TV_DEAD) ev_fail(ev, loc, "'%s' %s", name, v->u.dead.why);
    return v;
  }
  if (ev->implicit_dims) return ev_implicit_dim(ev, name, loc);
  const char *best = NULL;
  int bestd = suggestion_limit(name) + 1;
  suggest_name(ev, name, &best, &bestd);
  if (best && bestd <= suggestion_limit(name))
    ev_fail(ev, loc, "name '%s' is not defined; did you mean '%s'?", name, best);
  if (ev_module_attr_try(ev, TM_LANGUAGE, name)) /* alloc_shared written without T. */
    ev_fail(ev, loc, "name '%s' is not defined; did you mean 'T.%s'?", name, name);
  ev_fail(ev, loc, "name '%s' is not defined", name);
}

/* ---------------------------------------------------------------- finding kernels */

static const char *decorator_name(const tc_ast *d) {
  if (d->kind == TC_AST_CALL) d = d->a;
  if (d->kind == TC_AST_NAME) return d->str;
  if (d->kind == TC_AST_ATTRIBUTE) return d->str;
  return "";
}

static bool has_decorator(const tc_ast *def, const char *name) {
  for (int i = 0; i < def->list2.n; i++)
    if (strcmp(decorator_name(def->list2.v[i]), name) == 0) return true;
  return false;
}

static bool contains_prim_func(const tc_ast_list *body, bool nested, int depth) {
  if (depth > 50) return false;
  for (int i = 0; i < body->n; i++) {
    const tc_ast *s = body->v[i];
    switch (s->kind) {
    case TC_AST_FUNCTION_DEF:
      /* nested: a helper that defines the prim_func (def kernel_func(...): @T.prim_func ...) */
      if (has_decorator(s, "prim_func") || (nested && contains_prim_func(&s->list, nested, depth + 1))) return true;
      break;
    case TC_AST_IF:
    case TC_AST_FOR:
    case TC_AST_WHILE:
      if (contains_prim_func(&s->list, nested, depth + 1) || contains_prim_func(&s->list2, nested, depth + 1)) return true;
      break;
    case TC_AST_WITH:
      if (contains_prim_func(&s->list2, nested, depth + 1)) return true;
      break;
    case TC_AST_TRY:
      if (contains_prim_func(&s->list, nested, depth + 1)) return true;
      break;
    default: break;
    }
  }
  return false;
}

/* Whether a `@x.jit` decorator is TileLang's (not @triton.jit or @numba.jit in the same file):
 * x must be a name the module binds to tilelang or to tilec's Python package, which stands for
 * it (import tilelang [as x], import tilec [as x]); a bare @jit counts. */
static bool is_tilelang_jit(const tc_ast *module, const tc_ast *def) {
  for (int i = 0; i < def->list2.n; i++) {
    const tc_ast *d = def->list2.v[i];
    if (strcmp(decorator_name(d), "jit") != 0) continue;
    if (d->kind == TC_AST_CALL) d = d->a;
    if (d->kind == TC_AST_NAME) return true;
    if (d->kind != TC_AST_ATTRIBUTE || !d->a || d->a->kind != TC_AST_NAME) continue;
    const char *base = d->a->str;
    if (strcmp(base, "tilelang") == 0 || strcmp(base, "tilec") == 0) return true;
    for (int j = 0; j < module->list.n; j++) {
      const tc_ast *s = module->list.v[j];
      if (s->kind != TC_AST_IMPORT) continue;
      for (int k = 0; k < s->list.n; k++) {
        const tc_ast *al = s->list.v[k];
        if ((strcmp(al->str, "tilelang") == 0 || strcmp(al->str, "tilec") == 0) && al->str2 && strcmp(al->str2, base) == 0)
          return true;
      }
    }
  }
  return false;
}

tc_kernel_defs tc_front_find_kernels(tc_arena *arena, const tc_ast *module) {
  tc_kernel_defs out = {0, NULL};
  if (!module || module->kind != TC_AST_MODULE) return out;
  out.v = TC_NEW_ARRAY(arena, tc_kernel_def, module->list.n > 0 ? module->list.n : 1);
  if (!out.v) return out;
  for (int i = 0; i < module->list.n; i++) {
    const tc_ast *s = module->list.v[i];
    if (s->kind != TC_AST_FUNCTION_DEF) continue;
    tc_kernel_style style;
    if (has_decorator(s, "prim_func")) style = TC_STYLE_PRIM_FUNC;
    else if (has_decorator(s, "macro")) continue;
    else if (contains_prim_func(&s->list, false, 0)) style = TC_STYLE_FACTORY;
    /* a @tilelang.jit function whose nested helper defines and returns the prim_func is a
     * factory too (an undecorated one, such as an autotuning driver, is no kernel) */
    else if (is_tilelang_jit(module, s) && contains_prim_func(&s->list, true, 0)) style = TC_STYLE_FACTORY;
    else if (is_tilelang_jit(module, s)) style = TC_STYLE_EAGER;
    else continue;
    int j;
    for (j = 0; j < out.n; j++) /* a redefinition replaces the earlier one, as in Python */
      if (strcmp(out.v[j].name, s->str) == 0) break;
    out.v[j].name = s->str;
    out.v[j].style = style;
    out.v[j].def = s;
    if (j == out.n) out.n++;
  }
  return out;
}

/* ---------------------------------------------------------------- defines */

static tc_val *define_value(tc_ev *ev, const char *s);

/* "[a, b, ...]" or "(a, b, ...)": a list or tuple of values, each read as a -D value (nested
 * brackets allowed), as a list-valued factory parameter (`batch_sizes_list`) is written. NULL
 * when s is not bracketed or its brackets do not balance. */
static tc_val *define_sequence(tc_ev *ev, const char *s) {
  size_t n = strlen(s);
  char open = s[0], close = open == '[' ? ']' : open == '(' ? ')' : 0;
  if (!close || n < 2 || s[n - 1] != close) return NULL;
  tc_val *out = tv_list(ev, 0, NULL);
  const char *p = s + 1, *end = s + n - 1;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p == end) break;
    const char *q = p;
    int depth = 0;
    for (; q < end && (depth > 0 || *q != ','); q++) {
      if (*q == '[' || *q == '(') depth++;
      else if (*q == ']' || *q == ')') depth--;
      if (depth < 0) return NULL;
    }
    if (depth != 0) return NULL;
    const char *e = q;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    tv_list_push(ev, out, define_value(ev, tc_arena_strndup(&ev->tmp, p, (size_t)(e - p))));
    p = q < end ? q + 1 : q;
  }
  if (open == '(') return tv_tuple(ev, out->u.seq.n, out->u.seq.v);
  return out;
}

static tc_val *define_value(tc_ev *ev, const char *s) {
  char *end;
  tc_val *seq = define_sequence(ev, s);
  if (seq) return seq;
  if (*s) {
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (*end == 0 && errno == 0 && !(s[0] == '0' && s[1] >= '0' && s[1] <= '9')) return tv_int(ev, v);
    double f = strtod(s, &end);
    if (*end == 0 && (strchr(s, '.') || strchr(s, 'e') || strchr(s, 'E'))) return tv_float(ev, f);
  }
  if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0) return tv_bool(ev, true);
  if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0) return tv_bool(ev, false);
  if (strcmp(s, "None") == 0) return tv_none(ev);
  /* a dtype written as the kernel file writes it (-D dtype=T.bfloat16) */
  tc_dtype dt;
  if (strncmp(s, "T.", 2) == 0 && tc_dtype_lookup(s + 2, &dt, NULL, 0)) return tv_dtype(ev, dt);
  return tv_cstr(ev, s);
}

const tilec_define *ev_find_define(tc_ev *ev, const char *name, tc_val **out);
const tilec_define *ev_find_define(tc_ev *ev, const char *name, tc_val **out) {
  for (size_t i = ev->ndefines; i-- > 0;) /* the last -D wins */
    if (ev->defines[i].name && strcmp(ev->defines[i].name, name) == 0) {
      if (out) *out = define_value(ev, ev->defines[i].value ? ev->defines[i].value : "");
      return &ev->defines[i];
    }
  return NULL;
}

/* The kind of number a parameter takes, from its default or its annotation (`M: int`): "an int",
 * "a float", "True or False", or NULL when it says nothing. */
static const char *number_kind(const tc_val *def_value, const tc_ast *annotation) {
  if (def_value && def_value->kind == TV_INT) return "an int";
  if (def_value && def_value->kind == TV_FLOAT) return "a float";
  if (def_value && def_value->kind == TV_BOOL) return "True or False";
  if (!def_value && annotation && annotation->kind == TC_AST_NAME && annotation->str) {
    if (strcmp(annotation->str, "int") == 0) return "an int";
    if (strcmp(annotation->str, "float") == 0) return "a float";
    if (strcmp(annotation->str, "bool") == 0) return "True or False";
  }
  return NULL;
}

/* -D NAME=VALUE where VALUE reads as a word (-D M=abc) for a parameter that takes a number: the
 * -D is wrong, and saying so beats a type error deep inside the kernel that never names it. */
void ev_check_define_kind(tc_ev *ev, const char *name, const tc_val *v, const tc_val *def_value,
                          const tc_ast *annotation, bool module_constant);
void ev_check_define_kind(tc_ev *ev, const char *name, const tc_val *v, const tc_val *def_value,
                          const tc_ast *annotation, bool module_constant) {
  const char *kind = number_kind(def_value, annotation);
  if (!kind || v->kind != TV_STR) return;
  if (def_value && module_constant)
    ev_fail_usage(ev, "-D %s=%s: the module constant '%s' takes %s (the file sets it to %s), and '%s' is not one", name,
                  v->u.str.s, name, kind, tv_to_cstr(ev, def_value, true), v->u.str.s);
  if (def_value)
    ev_fail_usage(ev, "-D %s=%s: parameter '%s' of kernel '%s' takes %s (its default is %s), and '%s' is not one", name,
                  v->u.str.s, name, ev->kernel_name, kind, tv_to_cstr(ev, def_value, true), v->u.str.s);
  ev_fail_usage(ev, "-D %s=%s: parameter '%s' of kernel '%s' takes %s (it is annotated '%s'), and '%s' is not one",
                name, v->u.str.s, name, ev->kernel_name, kind, annotation->str, v->u.str.s);
}

/* Names a define may bind: parameters, T.const / T.symbolic / T.dynamic names in the body, in
 * the order found (the message lists them so), with a hash index: a module of 100,000 constants
 * must not make the check quadratic. */
typedef struct name_set {
  int n, cap;
  const char **v;
  int nslots;         /* a power of two, at least twice n */
  const char **slots; /* open addressing */
} name_set;

static bool names_has(const name_set *s, const char *name, uint32_t h, int *slot) {
  int mask = s->nslots - 1, i = (int)(h & (uint32_t)mask);
  for (; s->slots[i]; i = (i + 1) & mask)
    if (strcmp(s->slots[i], name) == 0) return true;
  *slot = i;
  return false;
}

static void names_rehash(tc_ev *ev, name_set *s) {
  s->nslots = s->nslots ? s->nslots * 2 : 64;
  s->slots = tc_arena_zalloc(&ev->tmp, sizeof(char *) * (size_t)s->nslots);
  for (int k = 0; k < s->n; k++) {
    int slot = 0;
    names_has(s, s->v[k], name_hash(s->v[k]), &slot);
    s->slots[slot] = s->v[k];
  }
}

static void names_add(tc_ev *ev, name_set *s, const char *name) {
  if (2 * (s->n + 1) > s->nslots) names_rehash(ev, s);
  int slot = 0;
  if (names_has(s, name, name_hash(name), &slot)) return;
  s->slots[slot] = name;
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    s->v = tc_arena_grow(&ev->tmp, s->v, sizeof(char *) * (size_t)s->n, sizeof(char *) * (size_t)cap);
    s->cap = cap;
  }
  s->v[s->n++] = name;
}

static void scan_const_names(tc_ev *ev, const tc_ast *n, name_set *s, int depth);
static void scan_const_list(tc_ev *ev, const tc_ast_list *l, name_set *s, int depth) {
  for (int i = 0; i < l->n; i++) scan_const_names(ev, l->v[i], s, depth);
}
static void scan_const_names(tc_ev *ev, const tc_ast *n, name_set *s, int depth) {
  if (!n || depth > 200) return;
  if (n->kind == TC_AST_CALL && n->a && n->a->kind == TC_AST_ATTRIBUTE &&
      (strcmp(n->a->str, "const") == 0 || strcmp(n->a->str, "symbolic") == 0 ||
       strcmp(n->a->str, "dynamic") == 0) &&
      n->list.n >= 1 && n->list.v[0]->kind == TC_AST_STRING) {
    const char *p = n->list.v[0]->str;
    while (*p) { /* "M, N, K" or "M N K" */
      while (*p == ' ' || *p == ',') p++;
      const char *q = p;
      while (*q && *q != ' ' && *q != ',') q++;
      if (q > p) names_add(ev, s, tc_arena_strndup(&ev->tmp, p, (size_t)(q - p)));
      p = q;
    }
  }
  if (n->kind == TC_AST_LIST && n->list.n && n->list.v[0]->kind == TC_AST_STRING) {
    /* T.const(["M", "N"]) is handled through the call's first argument below */
  }
  scan_const_names(ev, n->a, s, depth + 1);
  scan_const_names(ev, n->b, s, depth + 1);
  scan_const_names(ev, n->c, s, depth + 1);
  scan_const_list(ev, &n->list, s, depth + 1);
  scan_const_list(ev, &n->list2, s, depth + 1);
  scan_const_list(ev, &n->list3, s, depth + 1);
  scan_const_list(ev, &n->list4, s, depth + 1);
  if (n->kind == TC_AST_CALL && n->a && n->a->kind == TC_AST_ATTRIBUTE && strcmp(n->a->str, "const") == 0 &&
      n->list.n >= 1 && n->list.v[0]->kind == TC_AST_LIST)
    for (int i = 0; i < n->list.v[0]->list.n; i++)
      if (n->list.v[0]->list.v[i]->kind == TC_AST_STRING) names_add(ev, s, n->list.v[0]->list.v[i]->str);
}

static bool module_assigns(const tc_ast *module, const char *name) {
  for (int i = 0; i < module->list.n; i++) {
    const tc_ast *st = module->list.v[i];
    if (st->kind == TC_AST_ASSIGN)
      for (int j = 0; j < st->list.n; j++)
        if (st->list.v[j]->kind == TC_AST_NAME && strcmp(st->list.v[j]->str, name) == 0) return true;
    if ((st->kind == TC_AST_ANN_ASSIGN || st->kind == TC_AST_AUG_ASSIGN) && st->a && st->a->kind == TC_AST_NAME &&
        strcmp(st->a->str, name) == 0)
      return true;
  }
  return false;
}

/* Names in an eager annotation that may be implicit shape names: those the module does not
 * define (a module constant is the value TileLang uses, so a define cannot bind it). */
static void scan_names(tc_ev *ev, const tc_ast *n, name_set *s, int depth) {
  if (!n || depth > 200) return;
  if (n->kind == TC_AST_NAME && n->str && !module_assigns(ev->module, n->str)) names_add(ev, s, n->str);
  if (n->kind == TC_AST_ATTRIBUTE) return; /* T.float16: not a shape name */
  scan_names(ev, n->a, s, depth + 1);
  scan_names(ev, n->b, s, depth + 1);
  for (int i = 0; i < n->list.n; i++) scan_names(ev, n->list.v[i], s, depth + 1);
  for (int i = 0; i < n->list2.n; i++) scan_names(ev, n->list2.v[i], s, depth + 1);
}

/* Every parameter without a value at once, with its annotation, and the defaults of the rest. */
static _Noreturn void fail_missing_params(tc_ev *ev, const char *kernel, const tc_ast *def, const tc_func *f, int missing) {
  tc_strbuf sb, rest;
  tc_sb_init_arena(&sb, &ev->tmp);
  tc_sb_init_arena(&rest, &ev->tmp);
  const char *only = NULL;
  for (int i = 0; i < def->params.n; i++) {
    const tc_ast_param *p = &def->params.v[i];
    if (p->kind == TC_PARAM_VARARGS || p->kind == TC_PARAM_KWARGS) continue;
    tc_val *v;
    if (ev_find_define(ev, p->name, &v)) continue;
    if (!f->defaults[i]) {
      only = p->name;
      tc_sb_printf(&sb, "\n  -D %s=VALUE", p->name);
      if (p->annotation) tc_sb_printf(&sb, "   (%s)", ev_node_text(ev, p->annotation));
    } else if (p->default_) {
      tc_sb_printf(&rest, "%s%s=%s", rest.len ? ", " : "", p->name, ev_node_text(ev, p->default_));
    }
  }
  if (rest.len) tc_sb_printf(&sb, "\nthe other parameters have defaults: %s", tc_sb_cstr(&rest));
  if (missing == 1)
    ev_fail_usage(ev, "kernel '%s' needs a value for parameter '%s'; give it with:%s", kernel, only, tc_sb_cstr(&sb));
  ev_fail_usage(ev, "kernel '%s' needs values for %d parameters; give them with:%s", kernel, missing, tc_sb_cstr(&sb));
}

static bool is_param_name(const tc_ast *def, const char *name) {
  for (int i = 0; i < def->params.n; i++)
    if (strcmp(def->params.v[i].name, name) == 0) return true;
  return false;
}

static bool is_module_assign_name(const tc_ev *ev, const char *name) {
  for (int i = 0; i < ev->npending; i++)
    if (ev->pending[i].stmt->kind == TC_AST_ASSIGN && strcmp(ev->pending[i].name, name) == 0) return true;
  return false;
}

static void check_defines(tc_ev *ev, const tc_ast *def) {
  if (ev->ndefines == 0) return; /* nothing to check */
  name_set s = {0};
  if (ev->style == TC_STYLE_PRIM_FUNC) {
    for (int i = 0; i < ev->npending; i++)
      if (ev->pending[i].state == 0 && ev->pending[i].stmt->kind == TC_AST_ASSIGN) names_add(ev, &s, ev->pending[i].name);
    for (int i = 0; i < ev->module->list.n; i++) /* n = T.symbolic("n") at module level */
      if (ev->module->list.v[i]->kind == TC_AST_ASSIGN) scan_const_names(ev, ev->module->list.v[i], &s, 0);
  } else {
    for (int i = 0; i < def->params.n; i++)
      if (def->params.v[i].kind != TC_PARAM_VARARGS && def->params.v[i].kind != TC_PARAM_KWARGS)
        names_add(ev, &s, def->params.v[i].name);
    for (int i = 0; i < ev->npending; i++) /* a module constant (M = 8192) can be overridden too */
      if (ev->pending[i].stmt->kind == TC_AST_ASSIGN && !is_param_name(def, ev->pending[i].name))
        names_add(ev, &s, ev->pending[i].name);
  }
  scan_const_list(ev, &def->list, &s, 0);
  for (int i = 0; i < def->params.n; i++) scan_const_names(ev, def->params.v[i].annotation, &s, 0);
  if (ev->style == TC_STYLE_EAGER) /* implicit shape names of `X: T.Tensor([M, N], dtype)` */
    for (int i = 0; i < def->list.n; i++)
      if (def->list.v[i]->kind == TC_AST_ANN_ASSIGN && !def->list.v[i]->c) scan_names(ev, def->list.v[i]->b, &s, 0);
  for (size_t i = 0; i < ev->ndefines; i++) {
    const char *name = ev->defines[i].name ? ev->defines[i].name : "";
    int slot = 0;
    if (s.nslots && names_has(&s, name, name_hash(name), &slot)) continue;
    tc_strbuf sb;
    tc_sb_init_arena(&sb, &ev->tmp);
    const char *best = NULL;
    int bestd = suggestion_limit(name) + 1;
    for (int j = 0; j < s.n; j++) {
      int d = tc_edit_distance(name, s.v[j], 3);
      if (d < bestd) {
        bestd = d;
        best = s.v[j];
      }
    }
    for (int j = 0; j < s.n; j++) tc_sb_printf(&sb, "%s%s", j ? ", " : "", s.v[j]);
    char msg[900];
    snprintf(msg, sizeof msg, "%s", tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    const char *what = ev->style == TC_STYLE_PRIM_FUNC ? "module constant" : "parameter";
    if (best)
      ev_fail_usage(ev, "kernel '%s' has no %s '%s'; did you mean '%s'? %ss: %s", ev->kernel_name, what, name,
                    best, what, s.n ? msg : "(none)");
    ev_fail_usage(ev, "kernel '%s' has no %s '%s'; %ss: %s", ev->kernel_name, what, name, what, s.n ? msg : "(none)");
  }
}

/* ---------------------------------------------------------------- compiling kernels */

void ev_compile_prim(tc_ev *ev, tc_func *f, tc_loc loc);
void ev_compile_eager(tc_ev *ev, tc_func *f);

static void walk_outputs(tc_kernel_ir *k, const tc_stmt *s);
static void mark_output(tc_kernel_ir *k, tc_buffer *b) {
  if (b && b->view_of) b = b->view_of; /* writing a view writes the tensor it views */
  if (b && b->scope == TC_SCOPE_GLOBAL && b->param_index >= 0 && b->param_index < k->nparams)
    k->params[b->param_index].is_output = true;
}
static void walk_outputs(tc_kernel_ir *k, const tc_stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) walk_outputs(k, s->u.seq.items[i]);
    break;
  case TC_ST_FOR: walk_outputs(k, s->u.loop.body); break;
  case TC_ST_WHILE: walk_outputs(k, s->u.while_.body); break;
  case TC_ST_IF:
    walk_outputs(k, s->u.if_.then_s);
    walk_outputs(k, s->u.if_.else_s);
    break;
  case TC_ST_STORE: mark_output(k, s->u.store.buf); break;
  case TC_ST_COPY: mark_output(k, s->u.copy.dst.buf); break;
  case TC_ST_GEMM: mark_output(k, s->u.gemm.c.buf); break;
  case TC_ST_FILL: mark_output(k, s->u.fill.dst.buf); break;
  case TC_ST_REDUCE: mark_output(k, s->u.reduce.dst.buf); break;
  case TC_ST_CUMSUM: mark_output(k, s->u.cumsum.dst.buf); break;
  case TC_ST_ATOMIC_ADD:
    mark_output(k, s->u.atomic.buf);
    mark_output(k, s->u.atomic.dst.buf);
    break;
  default: break;
  }
}

/* The pass_configs keys tilec acts on, written tilelang.PassConfigKey.NAME (any prefix) or as
 * the "tl.name" string: fast math, turning warp specialization off, and turning the automatic
 * barriers between per-thread statements off. Values are evaluated at module level; the other
 * keys are TVM pass switches with no meaning here. */
static bool is_config_key(const char *text, const char *attr, const char *key) {
  size_t n = strlen(text), na = strlen(attr), nk = strlen(key);
  if (n >= na && strcmp(text + n - na, attr) == 0) return true;
  return n == nk + 2 && (text[0] == '"' || text[0] == '\'') && text[n - 1] == text[0] && strncmp(text + 1, key, nk) == 0;
}
/* pass_configs=NAME: the dict literal of the module's last `NAME = {...}`, else NULL. */
static const tc_ast *module_dict(const tc_ast *module, const char *name) {
  const tc_ast *found = NULL;
  for (int i = 0; module && i < module->list.n; i++) {
    const tc_ast *st = module->list.v[i];
    if (st->kind == TC_AST_ASSIGN && st->list.n == 1 && st->list.v[0]->kind == TC_AST_NAME && strcmp(st->list.v[0]->str, name) == 0)
      found = st->a;
  }
  return found && found->kind == TC_AST_DICT ? found : NULL;
}

static void record_pass_config(tc_ev *ev, const char *key_text, const tc_val *v) {
  bool fast = is_config_key(key_text, "TL_ENABLE_FAST_MATH", "tl.enable_fast_math");
  bool no_ws = is_config_key(key_text, "TL_DISABLE_WARP_SPECIALIZED", "tl.disable_warp_specialized");
  bool no_sync = is_config_key(key_text, "TL_DISABLE_THREAD_STORAGE_SYNC", "tl.disable_thread_storage_sync");
  bool on = (v->kind == TV_BOOL && v->u.b) || (v->kind == TV_INT && v->u.i != 0);
  if (fast) ev->k->fast_math = on;
  else if (no_ws) ev->k->no_warp_specialize = on;
  else if (no_sync) ev->k->no_storage_sync = on;
}

/* pass_configs=: a dict literal (or the name of a module-level one) is read key by key, by the keys'
 * text, evaluating only the values of the keys tilec acts on; any other expression (a conditional,
 * a dict built by a function, a key held in a variable) is evaluated at module level and must give
 * a dict. */
static void record_pass_configs(tc_ev *ev, const tc_ast *configs) {
  if (!configs) return;
  const tc_ast *literal = configs->kind == TC_AST_NAME ? module_dict(ev->module, configs->str) : configs;
  tc_env *saved = ev->scope;
  ev->scope = ev->globals;
  if (literal && literal->kind == TC_AST_DICT) {
    for (int i = 0; i < literal->list.n; i++) {
      const tc_ast *key = literal->list.v[i];
      if (!key) continue; /* **other */
      const char *text = ev_node_text(ev, key);
      if (is_config_key(text, "TL_ENABLE_FAST_MATH", "tl.enable_fast_math") ||
          is_config_key(text, "TL_DISABLE_WARP_SPECIALIZED", "tl.disable_warp_specialized") ||
          is_config_key(text, "TL_DISABLE_THREAD_STORAGE_SYNC", "tl.disable_thread_storage_sync"))
        record_pass_config(ev, text, ev_expr(ev, literal->list2.v[i]));
    }
    bool spread = false; /* {**base, key: value}: the whole dict is evaluated */
    for (int i = 0; i < literal->list.n; i++) spread |= !literal->list.v[i];
    if (!spread) {
      ev->scope = saved;
      return;
    }
  }
  tc_val *d = ev_expr(ev, configs);
  ev->scope = saved;
  if (d->kind == TV_NONE) return;
  if (d->kind != TV_DICT) ev_fail(ev, configs->loc, "pass_configs is %s, not a dict", tv_kind_name(d));
  for (int i = 0; i < d->u.dict.n; i++) {
    const tc_val *k = d->u.dict.k[i];
    const char *text = k->kind == TV_OPAQUE ? k->u.opaque.name
                       : k->kind == TV_STR ? tc_arena_printf(ev->ir, "\"%.*s\"", (int)k->u.str.n, k->u.str.s) : "";
    record_pass_config(ev, text, d->u.dict.v[i]);
  }
}

/* Record @tilelang.jit(...) arguments: out_idx evaluated, the rest as written. */
static void record_jit(tc_ev *ev, const tc_ast *call, tc_val *out_idx) {
  tc_kernel_ir *k = ev->k;
  if (call && call->kind == TC_AST_CALL && (call->list.n || call->list2.n)) {
    const tc_ast *first = call->list.n ? call->list.v[0] : call->list2.v[0];
    const tc_ast *last = call->list2.n ? call->list2.v[call->list2.n - 1] : call->list.v[call->list.n - 1];
    tc_ast span = *first;
    span.end_line = last->end_line;
    span.end_col = last->end_col;
    k->jit_args = tc_arena_strdup(ev->ir, ev_node_text(ev, &span));
    for (int i = 0; i < call->list2.n; i++)
      if (call->list2.v[i]->str && strcmp(call->list2.v[i]->str, "pass_configs") == 0) record_pass_configs(ev, call->list2.v[i]->a);
    for (int i = 0; i < call->list2.n; i++)
      if (call->list2.v[i]->str && strcmp(call->list2.v[i]->str, "out_idx") == 0) {
        tc_env *saved = ev->scope;
        ev->scope = ev->globals;
        out_idx = ev_expr(ev, call->list2.v[i]->a);
        ev->scope = saved;
      }
  }
  if (!out_idx || out_idx->kind == TV_NONE) return;
  tc_val *items = out_idx;
  if (out_idx->kind == TV_INT) items = tv_list(ev, 1, &out_idx);
  if (items->kind != TV_LIST && items->kind != TV_TUPLE)
    ev_fail(ev, call ? call->loc : k->loc, "out_idx must be an int or a list of ints, got %s", tv_kind_name(out_idx));
  k->nout_idx = items->u.seq.n;
  k->out_idx = TC_NEW_ARRAY(ev->ir, int, items->u.seq.n > 0 ? items->u.seq.n : 1);
  for (int i = 0; i < items->u.seq.n; i++) {
    tc_val *x = items->u.seq.v[i];
    if (x->kind != TV_INT) ev_fail(ev, call ? call->loc : k->loc, "out_idx must hold ints, got %s", tv_kind_name(x));
    int64_t idx = x->u.i < 0 ? x->u.i + k->nparams : x->u.i;
    if (idx < 0 || idx >= k->nparams)
      ev_fail(ev, call ? call->loc : k->loc, "out_idx %lld is out of range for a kernel with %d parameters",
              (long long)x->u.i, k->nparams);
    k->out_idx[i] = (int)x->u.i;
    k->params[idx].is_output = true;
  }
}

/* What a TileLang caller gets back: out_idx (normalised to 0..nparams-1), else the tensors an
 * eager function returns, as parameter indices. */
static void record_returns(tc_ev *ev, tc_kernel_ir *k) {
  int n = k->nout_idx > 0 ? k->nout_idx : ev->noutputs;
  if (n <= 0) return;
  k->returns = TC_NEW_ARRAY(ev->ir, int, n);
  for (int i = 0; i < n; i++) {
    int idx = -1;
    if (k->nout_idx > 0) {
      idx = k->out_idx[i] < 0 ? k->out_idx[i] + k->nparams : k->out_idx[i];
    } else {
      for (int p = 0; p < k->nparams; p++)
        if (k->params[p].buf == ev->outputs[i]) idx = p;
    }
    if (idx < 0) ev_fail(ev, k->loc, "kernel '%s' returns a tensor that is not one of its parameters", k->name);
    k->returns[k->nreturns++] = idx;
  }
}

/* The literal number a module constant is assigned (`M = 8192`), as a value; NULL for any other. */
static tc_val *module_literal(tc_ev *ev, const char *name) {
  for (int i = ev->npending - 1; i >= 0; i--) {
    const tc_ast *st = ev->pending[i].stmt;
    if (strcmp(ev->pending[i].name, name) != 0 || st->kind != TC_AST_ASSIGN) continue;
    if (st->a->kind == TC_AST_INT) return tv_int(ev, st->a->ival);
    if (st->a->kind == TC_AST_FLOAT) return tv_float(ev, st->a->fval);
    return NULL;
  }
  return NULL;
}

/* Is `name` a module-level name assigned from T.symbolic(...) / T.dynamic(...)? */
static bool binds_symbolic(tc_ev *ev, const char *name) {
  for (int i = 0; i < ev->npending; i++) {
    const tc_ast *st = ev->pending[i].stmt;
    if (strcmp(ev->pending[i].name, name) != 0 || st->kind != TC_AST_ASSIGN) continue;
    const tc_ast *v = st->a;
    if (v->kind == TC_AST_CALL && v->a->kind == TC_AST_ATTRIBUTE &&
        (strcmp(v->a->str, "symbolic") == 0 || strcmp(v->a->str, "dynamic") == 0))
      return true;
  }
  return false;
}

static tc_kernel_ir *eval_kernel(tc_ev *ev, const tc_kernel_def *kd) {
  tc_kernel_ir *k = TC_NEW(ev->ir, tc_kernel_ir);
  ev->k = k;
  k->name = tc_arena_strdup(ev->ir, kd->name);
  k->loc = kd->def->loc;
  ev->threads_ndim = 1;
  ev->threads[0] = 128;
  ev->threads[1] = ev->threads[2] = 1;
  ev->style = kd->style;
  ev->kernel_name = kd->name;
  check_defines(ev, kd->def);
  for (size_t i = 0; i < ev->ndefines; i++) { /* -D overrides a module constant */
    if (kd->style != TC_STYLE_PRIM_FUNC &&
        (is_param_name(kd->def, ev->defines[i].name) || !is_module_assign_name(ev, ev->defines[i].name)))
      continue; /* a factory's parameter, or a T.const name */
    if (binds_symbolic(ev, ev->defines[i].name)) continue; /* n = T.symbolic("n") stays symbolic */
    tc_val *v;
    ev_find_define(ev, ev->defines[i].name, &v);
    ev_check_define_kind(ev, ev->defines[i].name, v, module_literal(ev, ev->defines[i].name), NULL, true);
    scope_set(ev, ev->globals, ev->defines[i].name, v);
  }
  bool found;
  tc_val *fv = ev_lookup_global(ev, kd->name, kd->def->loc, &found);
  if (!found || fv->kind != TV_FUNC) ev_fail(ev, kd->def->loc, "'%s' is not a function", kd->name);
  tc_func *f = fv->u.func;
  const tc_ast *jit_call = f->jit_call;
  tc_val *out_idx = NULL;
  if (kd->style == TC_STYLE_FACTORY) {
    tc_args a = {0};
    a.call = kd->def;
    const tc_ast *def = kd->def;
    a.kw = EV_NEW_ARRAY(ev, const char *, def->params.n);
    a.kv = EV_NEW_ARRAY(ev, tc_val *, def->params.n);
    a.knode = EV_NEW_ARRAY(ev, const tc_ast *, def->params.n);
    int missing = 0;
    for (int i = 0; i < def->params.n; i++) {
      const tc_ast_param *p = &def->params.v[i];
      if (p->kind == TC_PARAM_VARARGS || p->kind == TC_PARAM_KWARGS) continue;
      tc_val *v;
      if (ev_find_define(ev, p->name, &v)) {
        ev_check_define_kind(ev, p->name, v, f->defaults[i], p->annotation, false);
        a.kw[a.nkw] = p->name;
        a.kv[a.nkw++] = v;
      } else if (!f->defaults[i]) {
        missing++;
      }
    }
    if (missing) fail_missing_params(ev, kd->name, def, f, missing);
    tc_val *r = ev_call_func(ev, f, &a, kd->def->loc);
    if (r->kind != TV_FUNC || !r->u.func->is_prim_func)
      ev_fail(ev, kd->def->loc, "kernel factory '%s' must return a @T.prim_func, but it returned %s", kd->name,
              r->kind == TV_NONE ? "None" : tv_kind_name(r));
    out_idx = r->u.func->out_idx;
    ev_compile_prim(ev, r->u.func, kd->def->loc);
  } else if (kd->style == TC_STYLE_EAGER) {
    ev_compile_eager(ev, f);
  } else {
    ev_compile_prim(ev, f, kd->def->loc);
  }
  walk_outputs(k, k->body);
  for (int i = 0; i < ev->noutputs; i++) mark_output(k, ev->outputs[i]);
  record_jit(ev, jit_call, out_idx);
  record_returns(ev, k);
  return k;
}

/* The module's globals, then the kernel definition `name` (NULL: the only one); a usage error
 * names the choices, and NULL comes back (err set) when the file defines no kernel. */
static const tc_kernel_def *module_kernel(tc_ev *ev, const char *name) {
  ev->globals = scope_new(ev, NULL, true);
  ev->scope = ev->globals;
  ev_scan_module(ev);
  tc_kernel_defs defs = tc_front_find_kernels(&ev->tmp, ev->module);
  const tc_kernel_def *kd = NULL;
  if (name) {
    for (int i = 0; i < defs.n; i++)
      if (strcmp(defs.v[i].name, name) == 0) kd = &defs.v[i];
    if (!kd) {
      tc_strbuf sb;
      tc_sb_init_arena(&sb, &ev->tmp);
      const char *best = NULL;
      int bestd = suggestion_limit(name) + 1;
      for (int i = 0; i < defs.n; i++) {
        tc_sb_printf(&sb, "%s%s", i ? ", " : "", defs.v[i].name);
        int d = tc_edit_distance(name, defs.v[i].name, 3);
        if (d < bestd) bestd = d, best = defs.v[i].name;
      }
      char list[800];
      snprintf(list, sizeof list, "%s", defs.n ? tc_sb_cstr(&sb) : "(none)");
      tc_sb_free(&sb);
      if (best) ev_fail_usage(ev, "program has no kernel named '%s'; did you mean '%s'? kernels: %s", name, best, list);
      ev_fail_usage(ev, "program has no kernel named '%s'; kernels: %s", name, list);
    }
  } else if (defs.n == 0) {
    /* placed at 1:1 so the message has the file:line:col every other one has */
    tc_loc top = {ev->src, 1, 1};
    if (ev->module->list.n == 0) tc_error_at(ev->err, TILEC_ERROR_PROGRAM, top, "the file is empty: there is no kernel to compile");
    else
      tc_error_at(ev->err, TILEC_ERROR_PROGRAM, top,
                  "program defines no kernel (a @T.prim_func, a kernel factory returning one, or a "
                  "@tilelang.jit function)");
    return NULL;
  } else if (defs.n > 1) {
    tc_strbuf sb;
    tc_sb_init_arena(&sb, &ev->tmp);
    for (int i = 0; i < defs.n; i++) tc_sb_printf(&sb, "%s%s", i ? ", " : "", defs.v[i].name);
    char list[800];
    snprintf(list, sizeof list, "%s", tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    ev_fail_usage(ev, "program defines several kernels (%s); choose one with --kernel", list);
  } else {
    kd = &defs.v[0];
  }
  return kd;
}

/* The part of tc_front_eval that runs under the error and out-of-memory escapes. Everything it
 * needs lives in *ev, so nothing is clobbered by longjmp. */
static tc_kernel_ir *eval_guarded(tc_ev *ev, const char *name) {
  if (setjmp(ev->oom_jmp)) {
    tc_error_clear(ev->err);
    tc_error(ev->err, TILEC_ERROR_NOMEM, "out of memory while evaluating the program");
    return NULL;
  }
  if (setjmp(ev->fail_jmp)) {
    if (ev->err->status == TILEC_OK) tc_error(ev->err, TILEC_ERROR_INTERNAL, "evaluation failed without a diagnostic");
    return NULL;
  }
  const tc_kernel_def *kd = module_kernel(ev, name);
  if (!kd) return NULL;
  return eval_kernel(ev, kd);
}

tc_kernel_ir *tc_front_eval(tc_arena *arena, const tc_source *src, const tc_ast *module, const char *name,
                            const tilec_define *defines, size_t ndefines, tilec_error *err) {
  tilec_error local_err;
  if (!err) err = &local_err;
  tc_error_clear(err);
  if (!arena || !module || module->kind != TC_AST_MODULE) {
    tc_error(err, TILEC_ERROR_USAGE, "tc_front_eval: no module");
    return NULL;
  }
  tc_ev *ev = calloc(1, sizeof *ev);
  if (!ev) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return NULL;
  }
  ev->ir = arena;
  tc_arena_init(&ev->tmp);
  ev->src = src;
  ev->module = module;
  ev->err = err;
  ev->defines = defines;
  ev->ndefines = defines ? ndefines : 0;
  jmp_buf *saved_oom = arena->oom_jmp;
  arena->oom_jmp = &ev->oom_jmp;
  ev->tmp.oom_jmp = &ev->oom_jmp;
  ev->tmp.limit = (size_t)512 << 20; /* a runaway compile-time program fails cleanly */
  tc_kernel_ir *result = eval_guarded(ev, name);
  arena->oom_jmp = saved_oom;
  tc_arena_free(&ev->tmp);
  free(ev);
  return result;
}

/* ---------------------------------------------------------------- autotune configurations */

/* One configuration value as -D takes it, or false when it has no such spelling. */
static bool config_value_text(const tc_val *v, tc_strbuf *sb) {
  char b[64];
  switch (v->kind) {
  case TV_BOOL: tc_sb_puts(sb, v->u.b ? "True" : "False"); return true;
  case TV_INT: tc_sb_printf(sb, "%lld", (long long)v->u.i); return true;
  case TV_FLOAT: tc_sb_printf(sb, "%.17g", v->u.f); return true;
  case TV_DTYPE: tc_sb_puts(sb, tc_dtype_name(v->u.dt, b, sizeof b)); return true;
  case TV_STR:
    for (size_t i = 0; i < v->u.str.n; i++)
      if (v->u.str.s[i] == ' ' || v->u.str.s[i] == '\n' || v->u.str.s[i] == '=') return false;
    tc_sb_printf(sb, "%.*s", (int)v->u.str.n, v->u.str.s);
    return true;
  default: return false;
  }
}

static bool has_param(const tc_ast *def, const char *name) {
  for (int i = 0; i < def->params.n; i++)
    if (strcmp(def->params.v[i].name, name) == 0) return true;
  return false;
}

static char *autotune_guarded(tc_ev *ev, const char *name) {
  if (setjmp(ev->oom_jmp)) {
    tc_error_clear(ev->err);
    tc_error(ev->err, TILEC_ERROR_NOMEM, "out of memory while evaluating the program");
    return NULL;
  }
  if (setjmp(ev->fail_jmp)) {
    if (ev->err->status == TILEC_OK) tc_error(ev->err, TILEC_ERROR_INTERNAL, "evaluation failed without a diagnostic");
    return NULL;
  }
  const tc_kernel_def *kd = module_kernel(ev, name);
  if (!kd) return NULL;
  const tc_ast *call = NULL;
  for (int i = 0; i < kd->def->list2.n; i++)
    if (strcmp(decorator_name(kd->def->list2.v[i]), "autotune") == 0) call = kd->def->list2.v[i];
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  if (!call) return strdup("");
  if (call->kind != TC_AST_CALL) ev_fail(ev, call->loc, "@autotune needs its configurations: @autotune(configs=[...])");
  const tc_ast *arg = call->list.n ? call->list.v[0] : NULL;
  for (int i = 0; i < call->list2.n; i++)
    if (call->list2.v[i]->str && strcmp(call->list2.v[i]->str, "configs") == 0) arg = call->list2.v[i]->a;
  if (!arg) ev_fail(ev, call->loc, "@autotune has no configs= to try");
  tc_val *cfgs = ev_expr(ev, arg);
  if (cfgs->kind != TV_LIST && cfgs->kind != TV_TUPLE)
    ev_fail(ev, arg->loc, "@autotune's configs must be a list of dicts (parameter name -> value), not %s%s", tv_kind_name(cfgs),
            cfgs->kind == TV_FUNC || cfgs->kind == TV_BUILTIN ? " (call it: configs=get_configs())" : "");
  for (int c = 0; c < cfgs->u.seq.n; c++) {
    const tc_val *d = cfgs->u.seq.v[c];
    if (d->kind != TV_DICT) ev_fail(ev, arg->loc, "@autotune configuration %d is %s, not a dict", c, tv_kind_name(d));
    int written = 0;
    for (int j = 0; j < d->u.dict.n; j++) {
      const tc_val *k = d->u.dict.k[j];
      if (k->kind != TV_STR) ev_fail(ev, arg->loc, "@autotune configuration %d has a key that is not a parameter name", c);
      /* pass_configs in a configuration are TileLang compile options (TMA, warp specialization
       * switches), not kernel parameters: they never change a result and are dropped */
      if (k->u.str.n == 12 && memcmp(k->u.str.s, "pass_configs", 12) == 0 && d->u.dict.v[j]->kind == TV_DICT &&
          !has_param(kd->def, "pass_configs"))
        continue;
      tc_sb_printf(&sb, "%s%.*s=", written++ ? " " : "", (int)k->u.str.n, k->u.str.s);
      if (!config_value_text(d->u.dict.v[j], &sb))
        ev_fail(ev, arg->loc, "@autotune configuration %d: the value of '%.*s' (%s) cannot be given with -D", c, (int)k->u.str.n,
                k->u.str.s, tv_kind_name(d->u.dict.v[j]));
    }
    tc_sb_putc(&sb, '\n');
  }
  char *out = strdup(tc_sb_cstr(&sb));
  if (!out) longjmp(ev->oom_jmp, 1);
  return out;
}

char *tc_front_autotune_configs(const tc_source *src, const tc_ast *module, const char *name, tilec_error *err) {
  tc_error_clear(err);
  tc_ev *ev = calloc(1, sizeof *ev);
  tc_arena ir;
  if (!ev) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory");
    return NULL;
  }
  tc_arena_init(&ir);
  ev->ir = &ir;
  tc_arena_init(&ev->tmp);
  ev->src = src;
  ev->module = module;
  ev->err = err;
  ir.oom_jmp = &ev->oom_jmp;
  ev->tmp.oom_jmp = &ev->oom_jmp;
  ev->tmp.limit = (size_t)512 << 20;
  char *out = autotune_guarded(ev, name);
  tc_arena_free(&ev->tmp);
  tc_arena_free(&ir);
  free(ev);
  return out;
}
