/* eval_stmt.c: statements. At compile time they run as Python does; inside a kernel, loops
 * over T.Parallel / T.Pipelined / T.serial / range and `if` on runtime conditions become IR
 * statements, and names bound to runtime values become LET / ASSIGN. */
#include "front/eval_int.h"
#include "ir/walk.h"

#include <stdio.h>
#include <string.h>

static bool is_lit(const tc_val *v) { return v->kind == TV_INT || v->kind == TV_BOOL || v->kind == TV_FLOAT; }

/* ---------------------------------------------------------------- expression depth of statements */

uint32_t ev_expr_depth(tc_ev *ev, const tc_expr *e);

/* How deep an expression a statement may hold. The passes, the interpreter and every backend's code
 * generator walk expressions recursively; 2000 levels is what they take under AddressSanitizer,
 * whose frames are the largest. Deeper values (a flat sum of 10,000 terms) are cut into
 * temporaries of CHAIN_SPLIT_DEPTH levels when they are a store's or an assignment's value. */
enum { STMT_EXPR_DEPTH_LIMIT = 2000, CHAIN_SPLIT_DEPTH = 1000 };

/* Binary arithmetic evaluates both operands whatever their values, so a prefix of a chain of it
 * may be computed just before the statement without changing what runs. */
static bool is_chain_op(const tc_expr *e) {
  if (e->nargs != 2) return false;
  switch (e->op) {
  case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MUL: case TC_OP_DIV: case TC_OP_FLOORDIV: case TC_OP_FLOORMOD:
  case TC_OP_MIN: case TC_OP_MAX: case TC_OP_POW: case TC_OP_BIT_AND: case TC_OP_BIT_OR: case TC_OP_BIT_XOR:
  case TC_OP_SHL: case TC_OP_SHR: return true;
  default: return false;
  }
}

/* `a + b + c + ...` with more than CHAIN_SPLIT_DEPTH terms, rebuilt from its first operand with a
 * LET temporary every CHAIN_SPLIT_DEPTH operations, emitted before the statement that uses it: what
 * the user would write when told to bind parts of it to names. Each temporary rounds to the
 * chain's dtype, as any LET does. The chain's nodes are copied, never changed: values share them. */
static tc_expr *split_chain(tc_ev *ev, tc_expr *e) {
  int m = 0;
  for (const tc_expr *x = e; is_chain_op(x); x = x->args[0]) m++;
  if (m <= CHAIN_SPLIT_DEPTH) return e;
  tc_expr **spine = EV_NEW_ARRAY(ev, tc_expr *, m); /* spine[0]: e; spine[m - 1]: the innermost */
  int i = 0;
  for (tc_expr *x = e; is_chain_op(x); x = x->args[0]) spine[i++] = x;
  tc_expr *cur = spine[m - 1]->args[0];
  for (int j = m - 1, since = 0; j >= 0; j--) {
    tc_expr *n = TC_NEW(ev->ir, tc_expr);
    *n = *spine[j];
    n->args = TC_NEW_ARRAY(ev->ir, tc_expr *, 2);
    n->args[0] = cur;
    n->args[1] = spine[j]->args[1];
    ev_expr_depth(ev, n); /* measured as it is built, so each measure recurses one level */
    cur = n;
    if (++since == CHAIN_SPLIT_DEPTH && j > 0) {
      tc_var *t = tc_ir_new_var(ev->ir, ev->k, "chain", cur->dtype, TC_VAR_LOCAL, cur->loc);
      tc_stmt *let = tc_ir_stmt(ev->ir, TC_ST_LET, cur->loc);
      let->u.let.var = t;
      let->u.let.value = cur;
      tc_stmt_list_push(ev->ir, ev->cur, let);
      cur = tc_ir_var_ref(ev->ir, t, cur->loc);
      since = 0;
    }
  }
  return cur;
}

static void check_slot_depth(void *ctx, tc_expr **slot) {
  tc_ev *ev = ctx;
  if (*slot && ev_expr_depth(ev, *slot) > STMT_EXPR_DEPTH_LIMIT)
    ev_fail(ev, (*slot)->loc, "this expression nests more than %d operations deep; bind parts of it to names",
            STMT_EXPR_DEPTH_LIMIT);
}

static void bound_expression_depth(tc_ev *ev, tc_stmt *s) {
  tc_expr **value = s->kind == TC_ST_STORE ? &s->u.store.value
                    : s->kind == TC_ST_LET || s->kind == TC_ST_ASSIGN ? &s->u.let.value
                                                                      : NULL;
  if (value && *value && ev_expr_depth(ev, *value) > STMT_EXPR_DEPTH_LIMIT) *value = split_chain(ev, *value);
  tc_visit_own_expr_slots(s, check_slot_depth, ev);
}

void ev_emit(tc_ev *ev, tc_stmt *s, tc_loc loc, const char *what) {
  if (!ev->cur) {
    if (ev->kernel_seen && ev->in_prim_func)
      ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)' (this statement comes after the kernel block)", what);
    ev_fail(ev, loc, "%s must be inside 'with T.Kernel(...)'", what);
  }
  bound_expression_depth(ev, s);
  tc_stmt_list_push(ev->ir, ev->cur, s);
}

/* ---------------------------------------------------------------- runtime blocks */

void ev_rt_enter(tc_ev *ev, int *mark) {
  *mark = ev->nundo;
  ev->rt_depth++;
}

typedef struct changed_set {
  int n, cap;
  tc_env **scope;
  const char **name;
} changed_set;

static void changed_add(tc_ev *ev, changed_set *c, tc_env *s, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (c->scope[i] == s && strcmp(c->name[i], name) == 0) return;
  if (c->n == c->cap) {
    int cap = c->cap ? c->cap * 2 : 8;
    c->scope = tc_arena_grow(&ev->tmp, c->scope, sizeof(tc_env *) * (size_t)c->n, sizeof(tc_env *) * (size_t)cap);
    c->name = tc_arena_grow(&ev->tmp, c->name, sizeof(char *) * (size_t)c->n, sizeof(char *) * (size_t)cap);
    c->cap = cap;
  }
  c->scope[c->n] = s;
  c->name[c->n++] = name;
}

static bool same_value(tc_ev *ev, tc_val *a, tc_val *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if ((is_lit(a) || a->kind == TV_STR || a->kind == TV_NONE || a->kind == TV_DTYPE) && a->kind == b->kind)
    return ev_equal(ev, a, b);
  return false;
}

static tc_val *dead(tc_ev *ev, const char *why, tc_loc loc) {
  tc_val *d = tv_new(ev, TV_DEAD);
  d->u.dead.why = why;
  d->u.dead.loc = loc;
  return d;
}

/* The end of a `with T.Kernel(...)` block: the runtime values it bound (its local variables and
 * its shared, fragment and local buffers) exist only inside it. A later block of the same
 * prim_func that assigns such a name binds a variable of its own; one that reads it is told. */
void ev_kernel_scope_end(tc_ev *ev, tc_loc loc) {
  tc_env *s = ev->scope;
  for (int i = 0; i < s->cap; i++) {
    tc_binding *b = &s->slots[i];
    if (!b->name || !b->val) continue;
    bool local_buf = b->val->kind == TV_BUFFER && b->val->u.buf->scope != TC_SCOPE_GLOBAL;
    if (!b->owned && !local_buf) continue;
    b->val = dead(ev, "is a runtime value of an earlier 'with T.Kernel(...)' block, which does not carry over to the next", loc);
    b->owned = NULL;
  }
}

/* End a runtime block: restore the bindings from before it and add the names it changed to
 * *changed (when given). */
static void rt_leave(tc_ev *ev, int mark, changed_set *changed, const char *why_new, tc_loc loc) {
  for (int i = mark; i < ev->nundo; i++) {
    tc_undo *u = &ev->undo[i];
    bool first = true;
    for (int j = mark; j < i && first; j++)
      if (ev->undo[j].scope == u->scope && strcmp(ev->undo[j].name, u->name) == 0) first = false;
    if (!first) continue;
    tc_binding *b = scope_find_local(u->scope, u->name);
    if (!b) continue;
    bool was_bound = u->old.val != NULL;
    if (!same_value(ev, b->val, u->old.val) && changed) changed_add(ev, changed, u->scope, u->name);
    if (was_bound) {
      *b = u->old;
    } else {
      b->val = dead(ev, why_new, loc);
      b->owned = NULL;
      b->depth = ev->rt_depth - 1;
    }
  }
  ev->nundo = mark;
  ev->rt_depth--;
}

static void kill_changed(tc_ev *ev, changed_set *c, const char *why, tc_loc loc) {
  for (int i = 0; i < c->n; i++) {
    tc_binding *b = scope_find_local(c->scope[i], c->name[i]);
    if (!b) continue;
    /* the binding itself is replaced in place (no undo entry): the enclosing block restores
     * from its own log */
    if (ev->rt_depth > 0) {
      tc_val *saved = b->val;
      scope_set(ev, c->scope[i], c->name[i], saved);
      b = scope_find_local(c->scope[i], c->name[i]);
    }
    b->val = dead(ev, why, loc);
    b->owned = NULL;
  }
}

void ev_rt_leave(tc_ev *ev, int mark, bool kill) {
  changed_set c = {0};
  tc_loc none = {0};
  rt_leave(ev, mark, &c, "is only defined inside a loop or an 'if' on a runtime condition", none);
  if (kill) kill_changed(ev, &c, "was assigned inside a loop or an 'if' on a runtime condition and is not known after it", none);
}

/* ---------------------------------------------------------------- assignment */

static tc_env *target_scope(tc_ev *ev, const char *name) {
  tc_env *s = ev->scope;
  for (int i = 0; i < s->nglobals; i++)
    if (strcmp(s->globals[i], name) == 0) {
      /* nonlocal: the nearest enclosing function scope that has it; global: module */
      for (tc_env *p = s->parent; p && !p->is_module; p = p->parent)
        if (scope_find_local(p, name)) return p;
      return ev->globals;
    }
  return s;
}

void ev_bind_name(tc_ev *ev, const char *name, tc_val *v, tc_loc loc) {
  tc_env *s = target_scope(ev, name);
  tc_binding *b = scope_find_local(s, name);
  if (ev->cur && v->kind != TV_BUFFER) {
    bool scalar = ev_is_runtime(v) || is_lit(v);
    if (b && b->owned && scalar) {
      if (b->owned->folded && b->depth < ev->loop_depth_mark && ev->loop_depth_mark > 0)
        ev_fail(ev, loc,
                "'%s' (bound on line %d) is assigned in a loop after the extent of a slice in that loop was worked "
                "out from its value; make the slice's end an expression of its start, or keep '%s' unchanged in the loop",
                name, b->owned->loc.line, name);
      b->owned->let_value = NULL;
      b->owned->assign_stamp = ++ev->assign_stamp;
      tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_ASSIGN, loc);
      st->u.let.var = b->owned;
      st->u.let.value = ev_to_expr_as(ev, v, b->owned->dtype, loc);
      ev_emit(ev, st, loc, "an assignment");
      return;
    }
    if (b && b->val->kind == TV_BUFFER && b->val->u.buf->scope == TC_SCOPE_VAR && scalar) {
      tc_buffer *buf = b->val->u.buf;
      tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
      st->u.store.buf = buf;
      st->u.store.nidx = 1;
      st->u.store.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
      st->u.store.idx[0] = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
      st->u.store.value = ev_to_expr_as(ev, v, buf->dtype, loc);
      ev_emit(ev, st, loc, "an assignment");
      return;
    }
    if (ev_is_runtime(v)) {
      v = ev_scalar(ev, v, loc);
      tc_expr *e = v->u.e;
      if (e->op == TC_OP_VAR && e->var->kind != TC_VAR_LOCAL) { /* an index or dimension: no copy needed */
        scope_set(ev, s, name, v);
        return;
      }
      if (b && b->val->kind != TV_DEAD && b->depth < ev->loop_depth_mark && ev->loop_depth_mark > 0)
        ev_fail(ev, loc,
                "'%s' is bound outside this loop to %s and assigned a runtime value inside it; make it a runtime "
                "variable before the loop, e.g. %s = T.alloc_var(T.%s)",
                name, ev_is_runtime(b->val) ? "a runtime value that is not a variable" : "a compile-time value", name,
                ev_dtype_name(e->dtype));
      tc_var *var = tc_ir_new_var(ev->ir, ev->k, tc_arena_strdup(ev->ir, name), e->dtype, TC_VAR_LOCAL, loc);
      tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_LET, loc);
      st->u.let.var = var;
      st->u.let.value = e;
      var->let_value = e;
      var->let_stamp = ++ev->assign_stamp;
      ev_emit(ev, st, loc, "an assignment");
      tc_binding *nb = scope_set(ev, s, name, tv_expr(ev, tc_ir_var_ref(ev->ir, var, loc)));
      nb->owned = var;
      return;
    }
  }
  scope_set(ev, s, name, v);
}

static void store_element(tc_ev *ev, tc_val *elem, tc_val *v, tc_loc loc) {
  tc_buffer *buf = elem->u.elem.buf;
  if (buf->scope == TC_SCOPE_GLOBAL || buf->scope == TC_SCOPE_SHARED || buf->scope == TC_SCOPE_FRAGMENT ||
      buf->scope == TC_SCOPE_LOCAL || buf->scope == TC_SCOPE_VAR) {
    tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
    st->u.store.buf = buf;
    st->u.store.nidx = buf->ndim;
    st->u.store.idx = elem->u.elem.idx;
    tc_val *sv = ev_scalar(ev, v, loc);
    if (!ev_is_runtime(sv) && !is_lit(sv)) {
      if (sv->kind == TV_BUFFER || sv->kind == TV_REGION)
        ev_fail(ev, loc, "cannot store a whole buffer into an element of '%s'; use T.copy", buf->name);
      ev_fail(ev, loc, "cannot store %s into an element of '%s'", tv_kind_name(sv), buf->name);
    }
    st->u.store.value = ev_to_expr_as(ev, sv, buf->dtype, loc);
    ev_emit(ev, st, loc, "a store to a buffer element");
  }
}

static bool unpack_item(tc_ev *ev, tc_val *item, void *ctx) {
  tv_list_push(ev, (tc_val *)ctx, item);
  return true;
}

void ev_assign(tc_ev *ev, const tc_ast *t, tc_val *v, tc_loc loc) {
  switch (t->kind) {
  case TC_AST_NAME: ev_bind_name(ev, t->str, v, t->loc); return;
  case TC_AST_TUPLE:
  case TC_AST_LIST: {
    tc_val *items;
    if (v->kind == TV_TUPLE || v->kind == TV_LIST) items = v;
    else if (ev_is_runtime(v) || v->kind == TV_BUFFER)
      ev_fail(ev, loc, "cannot unpack %s into %d names", tv_kind_name(v), t->list.n);
    else {
      items = tv_list(ev, 0, NULL);
      ev_iterate(ev, v, loc, unpack_item, items);
    }
    int star = -1;
    for (int i = 0; i < t->list.n; i++)
      if (t->list.v[i]->kind == TC_AST_STARRED) star = i;
    int n = items->u.seq.n, nt = t->list.n;
    if (star < 0 && n != nt)
      ev_fail(ev, loc, n > nt ? "too many values to unpack (expected %d, got %d)" : "not enough values to unpack (expected %d, got %d)",
              nt, n);
    if (star >= 0 && n < nt - 1) ev_fail(ev, loc, "not enough values to unpack (expected at least %d, got %d)", nt - 1, n);
    for (int i = 0, j = 0; i < nt; i++) {
      if (i == star) {
        int cnt = n - (nt - 1);
        ev_assign(ev, t->list.v[i]->a, tv_list(ev, cnt, items->u.seq.v + j), loc);
        j += cnt;
      } else {
        ev_assign(ev, t->list.v[i], items->u.seq.v[j++], loc);
      }
    }
    return;
  }
  case TC_AST_SUBSCRIPT: {
    tc_val *obj = ev_expr(ev, t->a);
    tc_val *idx = ev_expr(ev, t->b);
    if (obj->kind == TV_BUFFER) {
      int nidx = idx->kind == TV_TUPLE ? idx->u.seq.n : 1;
      bool slices = idx->kind == TV_SLICE;
      for (int i = 0; idx->kind == TV_TUPLE && i < nidx; i++) slices |= idx->u.seq.v[i]->kind == TV_SLICE;
      if (!slices && nidx < obj->u.buf->ndim)
        ev_fail(ev, t->loc, "buffer '%s' has %d dimensions but %d index%s given", obj->u.buf->name, obj->u.buf->ndim, nidx,
                nidx == 1 ? " was" : "es were");
      tc_val *el = ev_subscript(ev, obj, idx, t->b, t->loc);
      if (el->kind == TV_REGION) ev_unsupported(ev, t->loc, "assigning to a slice of a buffer; use T.fill or T.copy");
      store_element(ev, el, v, t->loc);
      return;
    }
    if (obj->kind == TV_LIST) {
      if (idx->kind != TV_INT) ev_fail(ev, t->b->loc, "list indices must be integers, not %s", tv_kind_name(idx));
      int64_t i = idx->u.i < 0 ? idx->u.i + obj->u.seq.n : idx->u.i;
      if (i < 0 || i >= obj->u.seq.n) ev_fail(ev, t->b->loc, "list assignment index out of range");
      obj->u.seq.v[i] = v;
      return;
    }
    if (obj->kind == TV_DICT) {
      for (int i = 0; i < obj->u.dict.n; i++)
        if (ev_equal(ev, obj->u.dict.k[i], idx)) {
          obj->u.dict.v[i] = v;
          return;
        }
      int n = obj->u.dict.n;
      obj->u.dict.k = tc_arena_grow(&ev->tmp, obj->u.dict.k, sizeof(tc_val *) * (size_t)n, sizeof(tc_val *) * (size_t)(n + 1));
      obj->u.dict.v = tc_arena_grow(&ev->tmp, obj->u.dict.v, sizeof(tc_val *) * (size_t)n, sizeof(tc_val *) * (size_t)(n + 1));
      obj->u.dict.k[n] = idx;
      obj->u.dict.v[n] = v;
      obj->u.dict.n++;
      return;
    }
    if (obj->kind == TV_OPAQUE) ev_fail(ev, t->loc, "unsupported: use of '%s' in code that tilec evaluates", obj->u.opaque.name);
    ev_fail(ev, t->loc, "'%s' object does not support item assignment", tv_kind_name(obj));
  }
  case TC_AST_STARRED: ev_fail(ev, t->loc, "starred assignment target must be in a list or tuple");
  case TC_AST_ATTRIBUTE: ev_unsupported(ev, t->loc, "assigning to an attribute");
  default: ev_fail(ev, t->loc, "cannot assign to this expression");
  }
}

static void aug_assign(tc_ev *ev, const tc_ast *s) {
  const tc_ast *t = s->a;
  if (t->kind == TC_AST_NAME) {
    tc_val *cur = ev_lookup(ev, t->str, t->loc);
    tc_val *rhs = ev_expr(ev, s->b);
    if (cur->kind == TV_LIST && s->op == TC_P_PLUS) { /* list += iterable extends in place */
      tc_val *items = ev_to_list(ev, rhs, s->b->loc);
      for (int i = 0; i < items->u.seq.n; i++) tv_list_push(ev, cur, items->u.seq.v[i]);
      return;
    }
    ev_bind_name(ev, t->str, ev_binop(ev, s->op, cur, rhs, s->loc), t->loc);
    return;
  }
  if (t->kind == TC_AST_SUBSCRIPT) {
    tc_val *obj = ev_expr(ev, t->a);
    tc_val *idx = ev_expr(ev, t->b);
    tc_val *cur = ev_subscript(ev, obj, idx, t->b, t->loc);
    if (cur->kind == TV_REGION) ev_unsupported(ev, t->loc, "augmented assignment to a slice of a buffer");
    tc_val *rhs = ev_expr(ev, s->b);
    tc_val *nv = ev_binop(ev, s->op, cur, rhs, s->loc);
    if (obj->kind == TV_BUFFER) {
      store_element(ev, cur, nv, t->loc);
      return;
    }
    /* lists and dicts: assign through the generic path (the index is evaluated again; it has
     * no side effects in the subset) */
    ev_assign(ev, t, nv, s->loc);
    return;
  }
  ev_fail(ev, t->loc, "illegal target for augmented assignment");
}

/* ---------------------------------------------------------------- imports and defs */

/* tilec's Python package stands for tilelang in programs written for it (`import tilec`,
 * `@tilec.jit`, `import tilec.language as T`): the same modules. */
static tc_val *resolve_module(tc_ev *ev, const char *dotted) {
  if (strcmp(dotted, "tilelang") == 0 || strcmp(dotted, "tilec") == 0) return tv_module(ev, TM_TILELANG);
  if (strcmp(dotted, "tilelang.language") == 0 || strcmp(dotted, "tilec.language") == 0) return tv_module(ev, TM_LANGUAGE);
  if (strcmp(dotted, "tilelang.layout") == 0 || strcmp(dotted, "tilec.layout") == 0) return tv_module(ev, TM_LAYOUT);
  if (strcmp(dotted, "math") == 0) return tv_module(ev, TM_MATH);
  /* `from tilelang.tileop.base import GemmWarpPolicy`: the enum T.GemmWarpPolicy names */
  if (strcmp(dotted, "tilelang.tileop.base.GemmWarpPolicy") == 0 || strcmp(dotted, "tilelang.tileop.GemmWarpPolicy") == 0)
    return tv_module(ev, TM_POLICY);
  if (strcmp(dotted, "itertools") == 0) return tv_module(ev, TM_ITERTOOLS);
  return tv_opaque(ev, dotted);
}

static void exec_import(tc_ev *ev, const tc_ast *s) {
  for (int i = 0; i < s->list.n; i++) {
    const tc_ast *al = s->list.v[i];
    if (al->str2) {
      ev_bind_name(ev, al->str2, resolve_module(ev, al->str), al->loc);
    } else {
      const char *dot = strchr(al->str, '.');
      const char *first = dot ? tc_arena_strndup(&ev->tmp, al->str, (size_t)(dot - al->str)) : al->str;
      ev_bind_name(ev, first, resolve_module(ev, first), al->loc);
    }
  }
}

static void exec_import_from(tc_ev *ev, const tc_ast *s) {
  const char *mod = s->str ? s->str : "";
  tc_val *m = resolve_module(ev, mod);
  if (m->kind == TV_OPAQUE && ev_import_sibling(ev, mod, s)) return; /* NAME.py beside the program */
  for (int i = 0; i < s->list.n; i++) {
    const tc_ast *al = s->list.v[i];
    if (strcmp(al->str, "*") == 0) {
      if (m->kind == TV_MODULE) ev_unsupported(ev, al->loc, "'from ... import *' of a tilelang module; import the names you use");
      continue;
    }
    const char *bind = al->str2 ? al->str2 : al->str;
    tc_val *v;
    if (m->kind == TV_MODULE) {
      if (m->u.mod.id == TM_TILELANG && strcmp(al->str, "language") == 0) v = tv_module(ev, TM_LANGUAGE);
      else if (m->u.mod.id == TM_TILELANG && strcmp(al->str, "tvm") == 0) v = tv_opaque(ev, "tvm");
      else v = ev_module_attr(ev, m->u.mod.id, al->str, al->loc);
    } else {
      char buf[300];
      snprintf(buf, sizeof buf, "%s.%s", mod, al->str);
      v = resolve_module(ev, buf);
    }
    ev_bind_name(ev, bind, v, al->loc);
  }
}

static const char *decorator_name(const tc_ast *d) {
  if (d->kind == TC_AST_CALL) d = d->a;
  if (d->kind == TC_AST_NAME || d->kind == TC_AST_ATTRIBUTE) return d->str;
  return "";
}

/* Look a name up without failing when it is unknown. */
static tc_val *try_lookup(tc_ev *ev, const char *name, tc_loc loc) {
  for (tc_env *s = ev->scope; s && !s->is_module; s = s->parent) {
    tc_binding *b = scope_find_local(s, name);
    if (b) return b->val;
  }
  bool found;
  tc_val *v = ev_lookup_global(ev, name, loc, &found);
  return found ? v : NULL;
}

static void exec_def(tc_ev *ev, const tc_ast *s) {
  tc_func *f = ev_make_func(ev, s);
  for (int i = s->list2.n - 1; i >= 0; i--) {
    const tc_ast *d = s->list2.v[i];
    const tc_ast *base = d->kind == TC_AST_CALL ? d->a : d;
    if (base->kind == TC_AST_ATTRIBUTE && base->a && base->a->kind == TC_AST_NAME) {
      /* check T.<name> decorators against the module, so a typo is reported */
      tc_val *m = try_lookup(ev, base->a->str, base->a->loc);
      if (m && m->kind == TV_MODULE) ev_getattr(ev, m, base->str, base->loc);
    }
    const char *name = decorator_name(d);
    if (strcmp(name, "prim_func") == 0) f->is_prim_func = true;
    else if (strcmp(name, "macro") == 0) f->is_macro = true;
    else if (strcmp(name, "jit") == 0) {
      f->is_jit = true;
      if (d->kind == TC_AST_CALL) f->jit_call = d;
    }
  }
  tc_val *v = tv_new(ev, TV_FUNC);
  v->u.func = f;
  if (ev->cur) scope_set(ev, target_scope(ev, s->str), s->str, v);
  else ev_bind_name(ev, s->str, v, s->loc);
}

/* ---------------------------------------------------------------- loops */

typedef struct ct_loop {
  const tc_ast *s;
  tc_flow flow;
  bool broke;
} ct_loop;

static bool ct_loop_item(tc_ev *ev, tc_val *item, void *ctx) {
  ct_loop *c = ctx;
  ev_assign(ev, c->s->a, item, c->s->a->loc);
  tc_flow f = ev_block(ev, &c->s->list);
  if (f == FLOW_BREAK) {
    c->broke = true;
    return false;
  }
  if (f == FLOW_RETURN) {
    c->flow = FLOW_RETURN;
    return false;
  }
  return true;
}

static const char *loop_name(tr_kind k) {
  switch (k) {
  case TR_PARALLEL: return "T.Parallel";
  case TR_PIPELINED: return "T.Pipelined";
  case TR_UNROLL: return "T.unroll";
  case TR_SERIAL: return "T.serial";
  case TR_VECTORIZED: return "T.vectorized";
  case TR_PERSISTENT: return "T.Persistent";
  default: return "range";
  }
}

static tc_flow persistent_for(tc_ev *ev, const tc_ast *s, tc_val *r, const tc_ast **names, bool bind_tuple);

/* The body of a loop the kernel runs (a runtime loop, T.Persistent), evaluated once with the
 * loop's names bound to `values` (or the tuple of them to `tuple`, for `for t in ...`); break,
 * continue and return inside it are refused. */
/* brk[0] == 0: the guard of what a runtime 'break' skips */
static tc_expr *brk_clear(tc_ev *ev, tc_buffer *brk, tc_loc loc) {
  tc_expr **idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  idx[0] = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
  return tc_ir_binary(ev->ir, TC_OP_EQ, tc_ir_load(ev->ir, brk, 1, idx, loc), tc_ir_int(ev->ir, 0, brk->dtype, loc), loc);
}

static tc_stmt *brk_store(tc_ev *ev, tc_buffer *brk, int v, tc_loc loc) {
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  st->u.store.buf = brk;
  st->u.store.nidx = 1;
  st->u.store.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  st->u.store.idx[0] = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
  st->u.store.value = tc_ir_int(ev->ir, v, brk->dtype, loc);
  return st;
}

/* may_break: a serial runtime loop, whose body may 'break' under a runtime condition; *brk_out
 * gets the loop's flag cell when it did (the caller allocates and clears it before the loop) */
static tc_stmt *runtime_loop_body_brk(tc_ev *ev, const tc_ast *s, const char *tuple, int n, const tc_ast **names, tc_val **values,
                                      bool may_break, tc_buffer **brk_out);

static tc_stmt *runtime_loop_body(tc_ev *ev, const tc_ast *s, const char *tuple, int n, const tc_ast **names, tc_val **values) {
  return runtime_loop_body_brk(ev, s, tuple, n, names, values, false, NULL);
}

static tc_stmt *runtime_loop_body_brk(tc_ev *ev, const tc_ast *s, const char *tuple, int n, const tc_ast **names, tc_val **values,
                                      bool may_break, tc_buffer **brk_out) {
  bool saved_ok = ev->brk_ok;
  tc_buffer *saved_brk = ev->brk;
  ev->brk_ok = may_break;
  ev->brk = NULL;
  int mark;
  ev_rt_enter(ev, &mark);
  int saved_mark = ev->loop_depth_mark;
  ev->loop_depth_mark = ev->rt_depth;
  if (tuple) scope_set(ev, ev->scope, tuple, tv_tuple(ev, n, values));
  else
    for (int d = 0; d < n; d++) scope_set(ev, ev->scope, names[d]->str, values[d]);
  tc_stmt_list body = {0};
  tc_stmt_list *saved = ev->cur;
  ev->cur = &body;
  tc_flow f = ev_block(ev, &s->list);
  ev->cur = saved;
  if (f == FLOW_BREAK) ev_unsupported(ev, s->loc, "'break' in a loop in a kernel");
  if (f == FLOW_CONTINUE) ev_unsupported(ev, s->loc, "'continue' in a loop in a kernel");
  if (f == FLOW_RETURN) ev_unsupported(ev, s->loc, "'return' inside a loop in a kernel");
  ev->loop_depth_mark = saved_mark;
  ev_rt_leave(ev, mark, true);
  tc_stmt *seq = tc_stmt_list_seq(ev->ir, &body, s->loc);
  tc_buffer *brk = ev->brk;
  ev->brk_ok = saved_ok;
  ev->brk = saved_brk;
  if (brk) { /* a runtime 'break' ran: later iterations run nothing */
    if (brk_out) *brk_out = brk;
    return tc_ir_if_then(ev->ir, brk_clear(ev, brk, s->loc), seq, s->loc);
  }
  return seq;
}

static tc_flow runtime_for(tc_ev *ev, const tc_ast *s, tc_val *r) {
  tr_kind rk = r->u.range.kind;
  int n = r->u.range.n;
  if (!ev->cur) ev_fail(ev, s->loc, "%s loops must be inside 'with T.Kernel(...)'", loop_name(rk));
  if (s->list2.n) ev_unsupported(ev, s->list2.v[0]->loc, "'else' on a loop in a kernel");
  const tc_ast *t = s->a;
  const tc_ast **names = EV_NEW_ARRAY(ev, const tc_ast *, n);
  bool bind_tuple = false;
  if (n == 1) {
    if (t->kind == TC_AST_NAME) names[0] = t;
    else if ((t->kind == TC_AST_TUPLE || t->kind == TC_AST_LIST) && t->list.n == 1 && t->list.v[0]->kind == TC_AST_NAME)
      names[0] = t->list.v[0];
    else ev_fail(ev, t->loc, "the target of a %s loop must be a name", loop_name(rk));
  } else if (t->kind == TC_AST_NAME) {
    bind_tuple = true;
  } else if ((t->kind == TC_AST_TUPLE || t->kind == TC_AST_LIST) && t->list.n == n) {
    for (int i = 0; i < n; i++) {
      if (t->list.v[i]->kind != TC_AST_NAME) ev_fail(ev, t->list.v[i]->loc, "loop targets must be names");
      names[i] = t->list.v[i];
    }
  } else {
    ev_fail(ev, t->loc, "%s(...) has %d dimensions, so the loop needs %d names", loop_name(rk), n, n);
  }
  if (rk == TR_PERSISTENT) return persistent_for(ev, s, r, names, bind_tuple);
  tc_loop_kind lk = rk == TR_PARALLEL ? TC_LOOP_PARALLEL : rk == TR_PIPELINED ? TC_LOOP_PIPELINED
                    : rk == TR_UNROLL ? TC_LOOP_UNROLL : rk == TR_VECTORIZED ? TC_LOOP_VECTORIZED : TC_LOOP_SERIAL;
  tc_stmt **loops = EV_NEW_ARRAY(ev, tc_stmt *, n);
  tc_val **bound = EV_NEW_ARRAY(ev, tc_val *, n);
  static const char *const default_names[] = {"i", "j", "k", "l"};
  for (int d = 0; d < n; d++) {
    tc_val *start = r->u.range.start[d], *stop = r->u.range.stop[d];
    int64_t step = 1;
    if (r->u.range.step) {
      step = ev_need_int(ev, r->u.range.step, NULL, s->b->loc, "the step of a loop in a kernel");
      if (step == 0) ev_fail(ev, s->b->loc, "the loop step must not be zero");
    }
    tc_expr *lo = ev_index_expr(ev, start, s->b->loc);
    tc_expr *hi = ev_index_expr(ev, stop, s->b->loc);
    tc_expr *extent;
    int64_t c;
    if (ev_const_diff(hi, lo, &c)) {
      if (step != 1) c = step > 0 ? (c + step - 1) / step : (-c + (-step) - 1) / (-step);
      if (c < 0) c = 0;
      if (c > INT32_MAX) ev_fail(ev, s->b->loc, "the loop has more than 2^31 iterations");
      extent = tc_ir_int(ev->ir, c, tc_index_dtype(), s->b->loc);
    } else {
      tc_val *diff = ev_ir_binop(ev, TC_P_MINUS, tv_expr(ev, step > 0 ? hi : lo), tv_expr(ev, step > 0 ? lo : hi), s->b->loc);
      if (step != 1 && step != -1) {
        int64_t as = step > 0 ? step : -step;
        diff = ev_ir_binop(ev, TC_P_DSLASH, ev_ir_binop(ev, TC_P_PLUS, diff, tv_int(ev, as - 1), s->b->loc), tv_int(ev, as),
                           s->b->loc);
      }
      extent = diff->u.e;
      if (step != 1) ev_unsupported(ev, s->b->loc, "a loop with a step and runtime bounds in a kernel");
    }
    const char *vname = names[d] ? names[d]->str : (d < 4 ? default_names[d] : "i");
    tc_var *var = tc_ir_new_var(ev->ir, ev->k, tc_arena_strdup(ev->ir, vname), tc_index_dtype(), TC_VAR_LOOP,
                                names[d] ? names[d]->loc : t->loc);
    tc_stmt *loop = tc_ir_stmt(ev->ir, TC_ST_FOR, s->loc);
    loop->u.loop.var = var;
    loop->u.loop.kind = lk;
    loop->u.loop.num_stages = rk == TR_PIPELINED ? r->u.range.num_stages : 0;
    if (rk == TR_PIPELINED) loop->u.loop.pipeline = r->u.range.pipe;
    tc_expr *vref = tc_ir_var_ref(ev->ir, var, s->loc);
    if (step == 1) {
      loop->u.loop.min = lo;
      loop->u.loop.extent = extent;
      bound[d] = tv_expr(ev, vref);
    } else { /* var runs over [0, extent); the name is start + var * step */
      loop->u.loop.min = tc_ir_int(ev->ir, 0, tc_index_dtype(), s->loc);
      loop->u.loop.extent = extent;
      bound[d] = ev_ir_binop(ev, TC_P_PLUS, tv_expr(ev, lo),
                             ev_ir_binop(ev, TC_P_STAR, tv_expr(ev, vref), tv_int(ev, step), s->loc), s->loc);
    }
    loops[d] = loop;
  }
  tc_buffer *brk = NULL;
  bool may_break = n == 1 && (lk == TC_LOOP_SERIAL || lk == TC_LOOP_UNROLL);
  tc_stmt *inner = runtime_loop_body_brk(ev, s, bind_tuple ? t->str : NULL, n, names, bound, may_break, &brk);
  for (int d = n - 1; d >= 0; d--) {
    loops[d]->u.loop.body = inner;
    inner = loops[d];
  }
  if (brk) { /* the flag of a runtime 'break', clear when the loop starts */
    tc_stmt *al = tc_ir_stmt(ev->ir, TC_ST_ALLOC, s->loc);
    al->u.alloc.buf = brk;
    ev_emit(ev, al, s->loc, "a loop");
    ev_emit(ev, brk_store(ev, brk, 0, s->loc), s->loc, "a loop");
  }
  ev_emit(ev, inner, s->loc, "a loop");
  return FLOW_NORMAL;
}

/* for v0, ..., vn in T.Persistent(domain, wave_size, index, group_size): TileLang's persistent
 * loop. Wave w gives this block the tile w * wave_size + index of the domain padded to whole
 * groups of group_size along its last axis and walked group by group ([last / group, d0, ...,
 * d(n-2), group], last index fastest); padding tiles and tiles past the end run nothing (TileLang
 * breaks out of the loop there, which is the same: later waves are past the end too). */
static tc_flow persistent_for(tc_ev *ev, const tc_ast *s, tc_val *r, const tc_ast **names, bool bind_tuple) {
  int n = r->u.range.n;
  tc_loc loc = s->b->loc;
  tc_val *last = r->u.range.stop[n - 1];
  tc_val *g, *group = r->u.range.group; /* max(1, min(group_size, last)) */
  if (group->kind == TV_INT && last->kind == TV_INT) {
    int64_t v = group->u.i < last->u.i ? group->u.i : last->u.i;
    g = tv_int(ev, v > 1 ? v : 1);
  } else {
    g = ev_ir_minmax(ev, TC_OP_MAX, tv_int(ev, 1), ev_ir_minmax(ev, TC_OP_MIN, group, last, loc), loc);
  }
  int ng = n + 1;
  tc_val **grouped = EV_NEW_ARRAY(ev, tc_val *, ng);
  grouped[0] = ev_binop(ev, TC_P_DSLASH, ev_binop(ev, TC_P_PLUS, last, ev_binop(ev, TC_P_MINUS, g, tv_int(ev, 1), loc), loc), g, loc);
  for (int i = 0; i < n - 1; i++) grouped[i + 1] = r->u.range.stop[i];
  grouped[ng - 1] = g;
  tc_val *padded = grouped[0];
  for (int i = 1; i < ng; i++) padded = ev_binop(ev, TC_P_STAR, padded, grouped[i], loc);
  tc_val *wave = r->u.range.wave;
  tc_val *waves = ev_binop(ev, TC_P_DSLASH, ev_binop(ev, TC_P_PLUS, padded, ev_binop(ev, TC_P_MINUS, wave, tv_int(ev, 1), loc), loc),
                           wave, loc);
  tc_var *w = tc_ir_new_var(ev->ir, ev->k, "w", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_val *tile = ev_binop(ev, TC_P_PLUS, ev_binop(ev, TC_P_STAR, tv_expr(ev, tc_ir_var_ref(ev->ir, w, loc)), wave, loc),
                          r->u.range.index, loc);
  tc_val **idx = EV_NEW_ARRAY(ev, tc_val *, ng);
  tc_val *rem = tile;
  for (int i = ng - 1; i >= 1; i--) { /* the tile index is never negative: floor and truncating division agree */
    idx[i] = ev_binop(ev, TC_P_PERCENT, rem, grouped[i], loc);
    rem = ev_binop(ev, TC_P_DSLASH, rem, grouped[i], loc);
  }
  idx[0] = rem;
  tc_val **coord = EV_NEW_ARRAY(ev, tc_val *, n);
  for (int i = 0; i < n - 1; i++) coord[i] = idx[i + 1];
  coord[n - 1] = ev_binop(ev, TC_P_PLUS, ev_binop(ev, TC_P_STAR, idx[0], g, loc), idx[ng - 1], loc);
  tc_expr *guard = tc_ir_binary(ev->ir, TC_OP_AND, ev_to_bool_expr(ev, ev_compare(ev, TC_CMP_LT, tile, padded, loc), loc),
                                ev_to_bool_expr(ev, ev_compare(ev, TC_CMP_LT, coord[n - 1], last, loc), loc), loc);

  tc_stmt *cond = tc_ir_stmt(ev->ir, TC_ST_IF, s->loc);
  cond->u.if_.cond = guard;
  cond->u.if_.then_s = runtime_loop_body(ev, s, bind_tuple ? s->a->str : NULL, n, names, coord);
  tc_stmt *loop = tc_ir_stmt(ev->ir, TC_ST_FOR, s->loc);
  loop->u.loop.var = w;
  loop->u.loop.kind = TC_LOOP_SERIAL;
  loop->u.loop.min = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
  loop->u.loop.extent = ev_index_expr(ev, waves, loc);
  loop->u.loop.body = cond;
  ev_emit(ev, loop, s->loc, "a loop");
  return FLOW_NORMAL;
}

static tc_flow exec_for(tc_ev *ev, const tc_ast *s) {
  tc_val *it = ev_expr(ev, s->b);
  if (it->kind == TV_RANGE && (it->u.range.kind != TR_PY_RANGE || ev->cur)) return runtime_for(ev, s, it);
  ct_loop c = {s, FLOW_NORMAL, false};
  bool saved_ok = ev->brk_ok;
  ev->brk_ok = false; /* a 'break' in its body is this loop's */
  ev_iterate(ev, it, s->b->loc, ct_loop_item, &c);
  ev->brk_ok = saved_ok;
  if (c.flow == FLOW_RETURN) return FLOW_RETURN;
  if (!c.broke && s->list2.n) return ev_block(ev, &s->list2);
  return FLOW_NORMAL;
}

/* Whether the expression `e` reads the name `name`. */
static bool reads_name(const tc_ast *e, const char *name) {
  if (!e) return false;
  if (e->kind == TC_AST_NAME) return strcmp(e->str, name) == 0;
  if (e->kind == TC_AST_LAMBDA) return false;
  if (reads_name(e->a, name) || reads_name(e->b, name) || reads_name(e->c, name)) return true;
  for (int i = 0; i < e->list.n; i++)
    if (reads_name(e->list.v[i], name)) return true;
  for (int i = 0; i < e->list2.n; i++)
    if (reads_name(e->list2.v[i], name)) return true;
  return false;
}

/* `while` on a runtime condition in a kernel: a WHILE statement. The condition is built once,
 * so the body may change what it reads only at run time (a T.alloc_var cell, a buffer, a
 * local variable it assigns); rebinding one of its names to a compile-time value is an error. */
static tc_flow runtime_while(tc_ev *ev, const tc_ast *s, tc_val *t) {
  if (s->list2.n) ev_unsupported(ev, s->loc, "'else' of a 'while' on a runtime condition");
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_WHILE, s->loc);
  st->u.while_.cond = ev_to_bool_expr(ev, t, s->a->loc);
  changed_set changed = {0};
  int mark;
  ev_rt_enter(ev, &mark);
  int saved_mark = ev->loop_depth_mark;
  ev->loop_depth_mark = ev->rt_depth;
  tc_stmt_list body = {0};
  tc_stmt_list *saved = ev->cur;
  ev->cur = &body;
  tc_flow f = ev_block(ev, &s->list);
  ev->cur = saved;
  if (f == FLOW_BREAK) ev_unsupported(ev, s->loc, "'break' in a 'while' on a runtime condition");
  if (f == FLOW_CONTINUE) ev_unsupported(ev, s->loc, "'continue' in a 'while' on a runtime condition");
  if (f == FLOW_RETURN) ev_unsupported(ev, s->loc, "'return' inside a loop in a kernel");
  ev->loop_depth_mark = saved_mark;
  rt_leave(ev, mark, &changed, "is only defined inside a 'while' on a runtime condition", s->loc);
  for (int i = 0; i < changed.n; i++)
    if (reads_name(s->a, changed.name[i]))
      ev_fail(ev, s->a->loc,
              "the condition of this 'while' reads '%s', which its body rebinds at compile time, so the loop would never "
              "see the new value; keep it in a T.alloc_var cell and assign the cell", changed.name[i]);
  kill_changed(ev, &changed, "was assigned in the body of a 'while' on a runtime condition, so its value after the loop is not known "
               "at compile time; to carry a value out of the loop, assign a T.alloc_var cell made before it", s->loc);
  st->u.while_.body = tc_stmt_list_seq(ev->ir, &body, s->loc);
  ev_emit(ev, st, s->loc, "a 'while' on a runtime condition");
  return FLOW_NORMAL;
}

static tc_flow exec_while_inner(tc_ev *ev, const tc_ast *s);
static tc_flow exec_while(tc_ev *ev, const tc_ast *s) {
  bool saved_ok = ev->brk_ok;
  ev->brk_ok = false; /* a 'break' in its body is this loop's */
  tc_flow f = exec_while_inner(ev, s);
  ev->brk_ok = saved_ok;
  return f;
}

static tc_flow exec_while_inner(tc_ev *ev, const tc_ast *s) {
  for (int64_t iter = 0;; iter++) {
    tc_val *t = ev_expr(ev, s->a);
    if (ev_is_runtime(ev_scalar(ev, t, s->a->loc))) {
      if (!ev->cur) ev_unsupported(ev, s->loc, "'while' with a runtime condition");
      if (iter > 0) /* a compile-time condition became a runtime one after some iterations */
        ev_unsupported(ev, s->a->loc, "a 'while' whose condition becomes known only at run time after it ran at compile time");
      return runtime_while(ev, s, ev_scalar(ev, t, s->a->loc));
    }
    if (!ev_truth(ev, t, s->a->loc)) break;
    if (iter >= 1000000) ev_fail(ev, s->loc, "this 'while' loop ran 1000000 iterations at compile time; is it infinite?");
    tc_flow f = ev_block(ev, &s->list);
    if (f == FLOW_BREAK) return FLOW_NORMAL;
    if (f == FLOW_RETURN) return f;
  }
  if (s->list2.n) return ev_block(ev, &s->list2);
  return FLOW_NORMAL;
}

static tc_flow exec_if(tc_ev *ev, const tc_ast *s) {
  tc_val *t = ev_expr(ev, s->a);
  t = ev_scalar(ev, t, s->a->loc);
  if (!ev_is_runtime(t)) {
    if (ev_truth(ev, t, s->a->loc)) return ev_block(ev, &s->list);
    return s->list2.n ? ev_block(ev, &s->list2) : FLOW_NORMAL;
  }
  if (!ev->cur) ev_fail(ev, s->a->loc, "this condition must be known at compile time, but it %s", ev_runtime_reason(ev, t));
  tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_IF, s->loc);
  st->u.if_.cond = ev_to_bool_expr(ev, t, s->a->loc);
  changed_set changed = {0};
  tc_stmt_list *saved = ev->cur;
  bool broke = false;
  /* `if tx < C:`: arrivals in each branch count the threads that take it (eval_ws.c) */
  int64_t split = ev->ws_threads ? -1 : ev_thread_range_split(ev, st->u.if_.cond);
  int64_t block = 1;
  for (int i = 0; i < ev->threads_ndim; i++) block *= ev->threads[i];
  for (int branch = 0; branch < 2; branch++) {
    const tc_ast_list *body = branch == 0 ? &s->list : &s->list2;
    if (branch == 1 && body->n == 0) break;
    int mark;
    ev_rt_enter(ev, &mark);
    tc_stmt_list l = {0};
    ev->cur = &l;
    if (split > 0) ev->ws_threads = branch == 0 ? split : block - split;
    tc_flow f = ev_block(ev, body);
    if (split > 0) ev->ws_threads = 0;
    ev->cur = saved;
    if (f == FLOW_RETURN) ev_unsupported(ev, s->loc, "'return' under a runtime condition");
    if (f == FLOW_BREAK && ev->brk_ok) { /* the innermost runtime loop stops: set its flag */
      if (!ev->brk) {
        tc_expr **shape = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
        shape[0] = tc_ir_int(ev->ir, 1, tc_index_dtype(), s->loc);
        ev->brk = tc_ir_new_buffer(ev->ir, ev->k, "broke", tc_dt(TC_DT_INT32), TC_SCOPE_VAR, 1, shape, s->loc);
      }
      tc_stmt_list_push(ev->ir, &l, brk_store(ev, ev->brk, 1, s->loc));
      f = FLOW_RT_BREAK;
    }
    if (f == FLOW_RT_BREAK) broke = true;
    if (f == FLOW_BREAK || f == FLOW_CONTINUE)
      ev_unsupported(ev, s->loc, "'break' or 'continue' under a runtime condition");
    rt_leave(ev, mark, &changed, "is only defined inside an 'if' on a runtime condition", s->loc);
    tc_stmt *seq = tc_stmt_list_seq(ev->ir, &l, s->loc);
    if (branch == 0) st->u.if_.then_s = seq;
    else st->u.if_.else_s = seq;
  }
  kill_changed(ev, &changed, "was assigned under a runtime condition, so its value after the 'if' is not known at compile time; to "
               "carry a value out of an 'if', assign a T.alloc_var cell made before it", s->loc);
  if (ev_contains_partial_barrier(ev, st)) { /* T.sync_threads(id, count) inside: eval_barrier.c */
    ev_emit(ev, ev_hoist_partial_barriers(ev, st), s->loc, "an 'if' on a runtime condition");
    return broke ? FLOW_RT_BREAK : FLOW_NORMAL;
  }
  if (split > 0 && !broke && ev_ws_split_branches(ev, st, s->loc)) return FLOW_NORMAL;
  ev_emit(ev, st, s->loc, "an 'if' on a runtime condition");
  if (broke) return FLOW_RT_BREAK;
  return FLOW_NORMAL;
}

/* ---------------------------------------------------------------- other statements */

static void exec_assert(tc_ev *ev, const tc_ast *s) {
  tc_val *t = ev_scalar(ev, ev_expr(ev, s->a), s->a->loc);
  if (ev_is_runtime(t)) {
    tc_stmt *st = tc_ir_stmt(ev->ir, TC_ST_ASSERT, s->loc);
    st->u.assert_.cond = ev_to_bool_expr(ev, t, s->a->loc);
    const char *msg = s->b ? tv_to_cstr(ev, ev_expr(ev, s->b), false) : ev_node_text(ev, s->a);
    st->u.assert_.msg = tc_arena_strdup(ev->ir, msg);
    ev_emit(ev, st, s->loc, "an assert on a runtime condition");
    return;
  }
  if (ev_truth(ev, t, s->a->loc)) return;
  if (s->b) {
    tc_val *m = ev_expr(ev, s->b);
    ev_fail(ev, s->loc, "assertion failed: %s", tv_to_cstr(ev, m, false));
  }
  ev_fail(ev, s->loc, "assertion failed: %s", ev_node_text(ev, s->a));
}

static void exec_raise(tc_ev *ev, const tc_ast *s) {
  const tc_ast *x = s->a;
  if (!x) ev_fail(ev, s->loc, "raise");
  if (x->kind == TC_AST_CALL && x->a->kind == TC_AST_NAME) {
    tc_strbuf sb;
    tc_sb_init(&sb);
    for (int i = 0; i < x->list.n; i++) {
      if (i) tc_sb_puts(&sb, ", ");
      tv_format(ev, &sb, ev_expr(ev, x->list.v[i]), false);
    }
    char msg[800];
    snprintf(msg, sizeof msg, "%s", tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    ev_fail(ev, s->loc, "%s: %s", x->a->str, msg);
  }
  ev_fail(ev, s->loc, "raise %s", ev_node_text(ev, x));
}

static void exec_ann_assign(tc_ev *ev, const tc_ast *s) {
  const tc_ast *t = s->a;
  if (s->c) {
    ev_assign(ev, t, ev_expr(ev, s->c), s->loc);
    return;
  }
  if (t->kind != TC_AST_NAME || !ev->eager_def) return;
  const tc_ast *def = ev->eager_def;
  for (int i = 0; i < def->params.n; i++) {
    if (strcmp(def->params.v[i].name, t->str) != 0 || i >= ev->neager) continue;
    if (ev->eager_tensors[i]) ev_fail(ev, s->loc, "tensor parameter '%s' is annotated twice", t->str);
    ev->implicit_dims = true;
    tc_val *ann = ev_expr(ev, s->b);
    ev->implicit_dims = false;
    if (ann->kind != TV_TENSOR_TYPE)
      ev_fail(ev, s->b->loc, "the annotation of parameter '%s' must be T.Tensor(shape, dtype), not %s", t->str,
              tv_kind_name(ann));
    tc_buffer *b = ev_make_param_buffer(ev, t->str, ann, t->loc);
    ev->eager_tensors[i] = b;
    scope_set(ev, ev->scope, t->str, tv_buffer(ev, b));
    return;
  }
}

tc_flow ev_stmt(tc_ev *ev, const tc_ast *s) {
  if (++ev->steps > 2000000) ev_fail(ev, s->loc, "compile-time evaluation ran more than 2000000 steps");
  ev->cur_stmt = s;
  switch (s->kind) {
  case TC_AST_EXPR_STMT: ev_expr(ev, s->a); return FLOW_NORMAL;
  case TC_AST_ASSIGN: {
    tc_val *v = ev_expr(ev, s->a);
    for (int i = 0; i < s->list.n; i++) ev_assign(ev, s->list.v[i], v, s->loc);
    return FLOW_NORMAL;
  }
  case TC_AST_AUG_ASSIGN: aug_assign(ev, s); return FLOW_NORMAL;
  case TC_AST_ANN_ASSIGN: exec_ann_assign(ev, s); return FLOW_NORMAL;
  case TC_AST_FUNCTION_DEF: exec_def(ev, s); return FLOW_NORMAL;
  case TC_AST_CLASS_DEF: {
    char buf[200];
    snprintf(buf, sizeof buf, "class %s", s->str);
    ev_bind_name(ev, s->str, tv_opaque(ev, buf), s->loc);
    return FLOW_NORMAL;
  }
  case TC_AST_RETURN:
    if (ev->rt_depth > ev->fn_rt_base) ev_unsupported(ev, s->loc, "'return' inside a loop or an 'if' on a runtime condition");
    ev->ret = s->a ? ev_expr(ev, s->a) : tv_none(ev);
    return FLOW_RETURN;
  case TC_AST_IF: return exec_if(ev, s);
  case TC_AST_FOR: return exec_for(ev, s);
  case TC_AST_WHILE: return exec_while(ev, s);
  case TC_AST_WITH: {
    /* `with A as x, B:` is `with A as x: with B:`; the only contexts besides T.Kernel and T.ws
     * are ones that do nothing (iket.range), so at most one item opens a scope */
    const tc_ast *item = NULL;
    tc_val *ctx = NULL;
    bool attr = false;
    for (int i = 0; i < s->list.n; i++) {
      const tc_ast *it = s->list.v[i];
      tc_val *c = ev_expr(ev, it->a);
      bool is_attr = c->kind == TV_OPAQUE && strcmp(c->u.opaque.name, ATTR_NAME) == 0;
      if (is_attr || (c->kind == TV_OPAQUE && strcmp(c->u.opaque.name, IKET_RANGE_NAME) == 0)) {
        if (it->b) ev_unsupported(ev, it->b->loc, is_attr ? "'with T.attr(...) as NAME'" : "'with iket.range(...) as NAME'");
        attr = attr || is_attr;
        continue;
      }
      if (item) ev_unsupported(ev, it->a->loc, "'with' with several context managers that each open a scope");
      item = it;
      ctx = c;
    }
    if (!item) return attr ? ev_attr_block(ev, &s->list2) : ev_block(ev, &s->list2);
    if (attr) ev_unsupported(ev, item->a->loc, "'with T.attr(...)' together with another context in one 'with'");
    if (ctx->kind == TV_KERNEL) {
      ev_kernel_enter(ev, ctx, item->b, &s->list2, s->loc);
      return FLOW_NORMAL;
    }
    if (ctx->kind == TV_WARP_GROUP) {
      if (item->b) ev_unsupported(ev, item->b->loc, "'with T.ws(...) as NAME'");
      ev_ws_enter(ev, ctx, &s->list2, s->loc);
      return FLOW_NORMAL;
    }
    if (ctx->kind == TV_OPAQUE && ev->cur) ev_fail(ev, item->a->loc, "unsupported: use of '%s' inside a kernel", ctx->u.opaque.name);
    ev_unsupported(ev, item->a->loc, tc_arena_printf(&ev->tmp, "'with' on %s (only 'with T.Kernel(...)' is supported)",
                                                     ctx->kind == TV_OPAQUE ? ctx->u.opaque.name : tv_kind_name(ctx)));
  }
  case TC_AST_PASS: return FLOW_NORMAL;
  case TC_AST_BREAK: return FLOW_BREAK;
  case TC_AST_CONTINUE: return FLOW_CONTINUE;
  case TC_AST_ASSERT: exec_assert(ev, s); return FLOW_NORMAL;
  case TC_AST_IMPORT: exec_import(ev, s); return FLOW_NORMAL;
  case TC_AST_IMPORT_FROM: exec_import_from(ev, s); return FLOW_NORMAL;
  case TC_AST_GLOBAL: {
    tc_env *sc = ev->scope;
    if (sc->is_module) return FLOW_NORMAL;
    sc->globals = tc_arena_grow(&ev->tmp, sc->globals, sizeof(char *) * (size_t)sc->nglobals,
                                sizeof(char *) * (size_t)(sc->nglobals + s->list.n));
    for (int i = 0; i < s->list.n; i++) sc->globals[sc->nglobals++] = s->list.v[i]->str;
    return FLOW_NORMAL;
  }
  case TC_AST_DELETE:
    for (int i = 0; i < s->list.n; i++) {
      const tc_ast *t = s->list.v[i];
      if (t->kind != TC_AST_NAME) ev_unsupported(ev, t->loc, "'del' of anything but a name");
      ev_lookup(ev, t->str, t->loc);
      tc_binding *b = scope_find_local(target_scope(ev, t->str), t->str);
      if (!b) ev_fail(ev, t->loc, "name '%s' is not defined in this scope", t->str);
      scope_set(ev, target_scope(ev, t->str), t->str, dead(ev, "was deleted", t->loc));
    }
    return FLOW_NORMAL;
  case TC_AST_RAISE: exec_raise(ev, s); return FLOW_NORMAL;
  case TC_AST_TRY: { /* nothing raises in the subset: the body, else and finally run */
    tc_flow f = ev_block(ev, &s->list);
    if (f == FLOW_NORMAL) f = ev_block(ev, &s->list3);
    if (f == FLOW_NORMAL) f = ev_block(ev, &s->list4);
    return f;
  }
  case TC_AST_MATCH: ev_unsupported(ev, s->loc, "'match' statements");
  case TC_AST_ERROR_STMT: ev_fail(ev, s->loc, "%s", s->str ? s->str : "invalid syntax");
  default: ev_fail(ev, s->loc, "unsupported statement (%s)", tc_ast_kind_name(s->kind));
  }
}

tc_flow ev_block(tc_ev *ev, const tc_ast_list *body) {
  if (++ev->block_depth > 300 && body->n) ev_fail(ev, body->v[0]->loc, "statements nested too deeply");
  for (int i = 0; i < body->n; i++) {
    tc_flow f = ev_stmt(ev, body->v[i]);
    if (f == FLOW_RT_BREAK && i + 1 < body->n) {
      /* a runtime 'break' may have run: the rest of the block runs only while the flag is clear */
      tc_buffer *brk = ev->brk;
      tc_loc loc = body->v[i + 1]->loc;
      changed_set changed = {0};
      int mark;
      ev_rt_enter(ev, &mark);
      tc_stmt_list rest = {0}, *saved = ev->cur;
      ev->cur = &rest;
      tc_ast_list tail = *body;
      tail.v += i + 1;
      tail.n -= i + 1;
      tc_flow g = ev_block(ev, &tail);
      ev->cur = saved;
      rt_leave(ev, mark, &changed, "is only defined after a 'break' under a runtime condition", loc);
      kill_changed(ev, &changed, "was assigned after a 'break' under a runtime condition, so its value is not known at "
                   "compile time; assign a T.alloc_var cell made before the loop", loc);
      if (g != FLOW_NORMAL && g != FLOW_RT_BREAK) ev_unsupported(ev, loc, "'break', 'continue' or 'return' after a 'break' under a runtime condition");
      ev_emit(ev, tc_ir_if_then(ev->ir, brk_clear(ev, brk, loc), tc_stmt_list_seq(ev->ir, &rest, loc), loc), loc,
              "the statements after a runtime 'break'");
      ev->block_depth--;
      return FLOW_RT_BREAK;
    }
    if (f != FLOW_NORMAL) {
      ev->block_depth--;
      return f;
    }
  }
  ev->block_depth--;
  return FLOW_NORMAL;
}

/* ---------------------------------------------------------------- compiling kernels */

static void add_param(tc_ev *ev, const char *name, tc_buffer *buf, tc_var *var) {
  tc_kernel_ir *k = ev->k;
  k->params = tc_arena_grow(ev->ir, k->params, sizeof(tc_param) * (size_t)k->nparams, sizeof(tc_param) * (size_t)(k->nparams + 1));
  tc_param *p = &k->params[k->nparams];
  memset(p, 0, sizeof *p);
  p->name = tc_arena_strdup(ev->ir, name);
  p->buf = buf;
  p->var = var;
  if (buf) buf->param_index = k->nparams;
  k->nparams++;
  for (int i = 0; i < k->nworkspaces; i++) k->workspaces[i]->param_index = k->nparams + i; /* after the parameters */
}

void ev_compile_prim(tc_ev *ev, tc_func *f, tc_loc loc);
void ev_compile_prim(tc_ev *ev, tc_func *f, tc_loc loc) {
  const tc_ast *def = f->def;
  (void)loc;
  tc_env *saved = ev->scope;
  ev->scope = f->closure;
  tc_modswitch mod = ev_module_enter(ev, f->closure);
  ev->in_prim_func = true;
  tc_val **vals = EV_NEW_ARRAY(ev, tc_val *, def->params.n);
  for (int i = 0; i < def->params.n; i++) {
    const tc_ast_param *p = &def->params.v[i];
    if (p->kind == TC_PARAM_VARARGS || p->kind == TC_PARAM_KWARGS)
      ev_unsupported(ev, p->loc, "'*args' or '**kwargs' in a @T.prim_func");
    if (!p->annotation)
      ev_fail(ev, p->loc, "parameter '%s' of prim_func '%s' needs an annotation such as T.Tensor((M, N), dtype)", p->name,
              f->name);
    tc_val *ann = ev_expr(ev, p->annotation);
    if (ann->kind == TV_TENSOR_TYPE) {
      tc_buffer *b = ev_make_param_buffer(ev, p->name, ann, p->loc);
      add_param(ev, p->name, b, NULL);
      vals[i] = tv_buffer(ev, b);
    } else if (ann->kind == TV_DTYPE) {
      tc_var *v = tc_ir_new_var(ev->ir, ev->k, tc_arena_strdup(ev->ir, p->name), ann->u.dt, TC_VAR_PARAM, p->loc);
      add_param(ev, p->name, NULL, v);
      vals[i] = tv_expr(ev, tc_ir_var_ref(ev->ir, v, p->loc));
    } else {
      ev_fail(ev, p->annotation->loc,
              "the annotation of parameter '%s' must be T.Tensor(shape, dtype), T.Buffer(shape, dtype) or a scalar "
              "dtype such as T.int32, not %s",
              p->name, tv_kind_name(ann));
    }
  }
  tc_env *sc = scope_new(ev, f->closure, false);
  for (int i = 0; i < def->params.n; i++) scope_set(ev, sc, def->params.v[i].name, vals[i]);
  ev->scope = sc;
  int saved_base = ev->fn_rt_base;
  ev->fn_rt_base = ev->rt_depth;
  ev_block(ev, &def->list);
  ev->fn_rt_base = saved_base;
  ev_module_leave(ev, mod);
  ev->scope = saved;
  ev->in_prim_func = false;
  if (!ev->kernel_seen) ev_fail(ev, def->loc, "prim_func '%s' has no 'with T.Kernel(...)' block", f->name);
}

static bool annotated_in_body(const tc_ast_list *body, const char *name, int depth) {
  if (depth > 20) return false;
  for (int i = 0; i < body->n; i++) {
    const tc_ast *s = body->v[i];
    if (s->kind == TC_AST_ANN_ASSIGN && !s->c && s->a->kind == TC_AST_NAME && strcmp(s->a->str, name) == 0) return true;
    if (s->kind == TC_AST_IF && (annotated_in_body(&s->list, name, depth + 1) || annotated_in_body(&s->list2, name, depth + 1)))
      return true;
  }
  return false;
}

const tilec_define *ev_find_define(tc_ev *ev, const char *name, tc_val **out);
void ev_check_define_kind(tc_ev *ev, const char *name, const tc_val *v, const tc_val *def_value,
                          const tc_ast *annotation, bool module_constant);

void ev_compile_eager(tc_ev *ev, tc_func *f);
void ev_compile_eager(tc_ev *ev, tc_func *f) {
  const tc_ast *def = f->def;
  tc_env *saved = ev->scope;
  ev->scope = f->closure;
  tc_modswitch mod = ev_module_enter(ev, f->closure);
  ev->in_prim_func = true;
  ev->eager_def = def;
  ev->neager = def->params.n;
  ev->eager_tensors = EV_NEW_ARRAY(ev, tc_buffer *, def->params.n);
  bool *is_tensor = EV_NEW_ARRAY(ev, bool, def->params.n);
  tc_val **vals = EV_NEW_ARRAY(ev, tc_val *, def->params.n);
  for (int i = 0; i < def->params.n; i++) {
    const tc_ast_param *p = &def->params.v[i];
    if (p->kind == TC_PARAM_VARARGS || p->kind == TC_PARAM_KWARGS)
      ev_unsupported(ev, p->loc, "'*args' or '**kwargs' in a @tilelang.jit kernel");
    tc_val *ann = p->annotation ? ev_expr(ev, p->annotation) : NULL;
    if (ann && ann->kind == TV_TENSOR_TYPE) {
      tc_buffer *b = ev_make_param_buffer(ev, p->name, ann, p->loc);
      ev->eager_tensors[i] = b;
      is_tensor[i] = true;
      vals[i] = tv_buffer(ev, b);
      continue;
    }
    if (annotated_in_body(&def->list, p->name, 0)) {
      is_tensor[i] = true;
      vals[i] = dead(ev, "is a tensor parameter used before its annotation", p->loc);
      continue;
    }
    tc_val *v;
    if (ev_find_define(ev, p->name, &v)) {
      ev_check_define_kind(ev, p->name, v, f->defaults[i], p->annotation, false);
      vals[i] = v;
    } else if (f->defaults[i]) {
      vals[i] = f->defaults[i];
    }
    else
      ev_fail_usage(ev, "kernel '%s' needs a value for parameter '%s'; give it with -D %s=VALUE", f->name, p->name, p->name);
  }
  tc_env *sc = scope_new(ev, f->closure, false);
  for (int i = 0; i < def->params.n; i++) scope_set(ev, sc, def->params.v[i].name, vals[i]);
  ev->scope = sc;
  ev->ret = NULL;
  int saved_base = ev->fn_rt_base;
  ev->fn_rt_base = ev->rt_depth;
  tc_flow fl = ev_block(ev, &def->list);
  ev->fn_rt_base = saved_base;
  ev_module_leave(ev, mod);
  tc_val *ret = fl == FLOW_RETURN ? ev->ret : NULL;
  ev->scope = saved;
  ev->in_prim_func = false;
  for (int i = 0; i < def->params.n; i++) {
    if (!is_tensor[i]) continue;
    if (!ev->eager_tensors[i])
      ev_fail(ev, def->params.v[i].loc, "tensor parameter '%s' is never annotated; add '%s: T.Tensor((...), dtype)'",
              def->params.v[i].name, def->params.v[i].name);
    add_param(ev, def->params.v[i].name, ev->eager_tensors[i], NULL);
  }
  for (int i = 0; i < ev->nempties; i++) { /* T.empty tensors are outputs the kernel returns */
    add_param(ev, ev->empties[i]->name, ev->empties[i], NULL);
    ev->k->params[ev->k->nparams - 1].is_output = true;
  }
  if (!ev->kernel_seen) ev_fail(ev, def->loc, "kernel '%s' has no 'with T.Kernel(...)' block", f->name);
  if (ret && ret->kind != TV_NONE) {
    tc_val **items = &ret;
    int n = 1;
    if (ret->kind == TV_TUPLE || ret->kind == TV_LIST) items = ret->u.seq.v, n = ret->u.seq.n;
    ev->outputs = EV_NEW_ARRAY(ev, tc_buffer *, n);
    for (int i = 0; i < n; i++) {
      if (items[i]->kind != TV_BUFFER || items[i]->u.buf->scope != TC_SCOPE_GLOBAL)
        ev_fail(ev, def->loc, "kernel '%s' must return its output tensors (from T.empty), but it returned %s", f->name,
                tv_kind_name(items[i]));
      ev->outputs[ev->noutputs++] = items[i]->u.buf;
    }
  }
}
