/* eval_builtins.c: binding call arguments to builtin signatures, Python's builtin functions
 * (range, len, min, max, ...) and the methods of lists, tuples, strings and dicts. */
#include "front/eval_int.h"

#include <math.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- argument binding */

typedef struct spec_param {
  char name[40];
  bool optional, kwonly, varargs;
} spec_param;

static int parse_spec(const char *spec, spec_param *out, int cap, bool *any_kw) {
  int n = 0;
  bool kwonly = false;
  *any_kw = false;
  const char *p = spec;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *q = p;
    while (*q && *q != ' ') q++;
    size_t len = (size_t)(q - p);
    if (len == 1 && *p == '|') kwonly = true;
    else if (len == 2 && p[0] == '*' && p[1] == '*') *any_kw = true;
    else if (n < cap) {
      spec_param *sp = &out[n++];
      memset(sp, 0, sizeof *sp);
      sp->kwonly = kwonly;
      if (*p == '*') {
        sp->varargs = true;
        p++;
        len--;
        kwonly = true; /* parameters after *args are keyword-only */
      }
      if (len > 0 && p[len - 1] == '?') {
        sp->optional = true;
        len--;
      }
      if (len >= sizeof sp->name) len = sizeof sp->name - 1;
      memcpy(sp->name, p, len);
      sp->name[len] = 0;
    }
    p = q;
  }
  return n;
}

void ev_bind_builtin(tc_ev *ev, const tc_builtin *b, tc_args *a) {
  spec_param ps[16];
  bool any_kw;
  int np = parse_spec(b->spec, ps, 16, &any_kw);
  a->p = EV_NEW_ARRAY(ev, tc_val *, np);
  a->pnode = EV_NEW_ARRAY(ev, const tc_ast *, np);
  tc_loc loc = a->call ? a->call->loc : (tc_loc){0};
  int npos = 0, nreq = 0, var = -1;
  for (int i = 0; i < np; i++) {
    if (ps[i].varargs) var = i;
    else if (!ps[i].kwonly) {
      npos++;
      if (!ps[i].optional) nreq++;
    }
  }
  tc_val *rest = var >= 0 ? tv_tuple(ev, 0, NULL) : NULL;
  int pi = 0;
  for (int i = 0; i < a->n; i++) {
    while (pi < np && (ps[pi].kwonly && !ps[pi].varargs)) pi++;
    if (pi < np && ps[pi].varargs) {
      tv_list_push(ev, rest, a->v[i]);
      if (!a->pnode[pi]) a->pnode[pi] = a->node ? a->node[i] : NULL;
      continue;
    }
    if (pi >= np) {
      if (npos == nreq)
        ev_fail(ev, loc, "%s() takes %d positional argument%s but %d %s given", b->name, npos, npos == 1 ? "" : "s", a->n,
                a->n == 1 ? "was" : "were");
      ev_fail(ev, loc, "%s() takes from %d to %d positional arguments but %d were given", b->name, nreq, npos, a->n);
    }
    a->p[pi] = a->v[i];
    a->pnode[pi] = a->node ? a->node[i] : NULL;
    pi++;
  }
  if (var >= 0) a->p[var] = rest;
  for (int i = 0; i < a->nkw; i++) {
    int j;
    for (j = 0; j < np; j++)
      if (!ps[j].varargs && strcmp(ps[j].name, a->kw[i]) == 0) break;
    if (j == np) {
      if (any_kw) continue;
      const char *best = NULL;
      int bestd = 3;
      for (j = 0; j < np; j++) {
        if (ps[j].varargs) continue;
        int d = strcasecmp(a->kw[i], ps[j].name) == 0 ? 0 : tc_edit_distance(a->kw[i], ps[j].name, 2);
        if (d < bestd) bestd = d, best = ps[j].name;
      }
      tc_loc kl = ev_kw_loc(a, i, loc);
      if (best) ev_fail(ev, kl, "%s() got an unexpected keyword argument '%s'; did you mean '%s'?", b->name, a->kw[i], best);
      ev_fail(ev, kl, "%s() got an unexpected keyword argument '%s'", b->name, a->kw[i]);
    }
    if (a->p[j]) ev_fail(ev, loc, "%s() got multiple values for argument '%s'", b->name, a->kw[i]);
    a->p[j] = a->kv[i];
    a->pnode[j] = a->knode ? a->knode[i] : NULL;
  }
  int missing = 0, first = -1;
  for (int i = 0; i < np; i++)
    if (!a->p[i] && !ps[i].optional && !ps[i].varargs) {
      if (first < 0) first = i;
      missing++;
    }
  if (missing) {
    tc_strbuf sb;
    tc_sb_init_arena(&sb, &ev->tmp);
    int k = 0;
    for (int i = 0; i < np; i++)
      if (!a->p[i] && !ps[i].optional && !ps[i].varargs) {
        if (k) tc_sb_puts(&sb, k == missing - 1 ? " and " : ", ");
        tc_sb_printf(&sb, "'%s'", ps[i].name);
        k++;
      }
    char names[300];
    snprintf(names, sizeof names, "%s", tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    ev_fail(ev, loc, "%s() missing %d required %sargument%s: %s", b->name, missing,
            ps[first].kwonly ? "keyword-only " : "positional ", missing == 1 ? "" : "s", names);
  }
}

tc_loc arg_loc(tc_args *a, int i) {
  if (a->pnode && a->pnode[i]) return a->pnode[i]->loc;
  return a->call ? a->call->loc : (tc_loc){0};
}

bool arg_bool(tc_ev *ev, tc_args *a, int i, bool dflt) {
  tc_val *v = a->p[i];
  if (!v || v->kind == TV_NONE) return dflt;
  if (ev_is_runtime(v))
    ev_fail(ev, arg_loc(a, i), "this flag must be known at compile time, but it %s", ev_runtime_reason(ev, v));
  return ev_truth(ev, v, arg_loc(a, i));
}

int64_t arg_int(tc_ev *ev, tc_args *a, int i, int64_t dflt, const char *what) {
  tc_val *v = a->p[i];
  if (!v || v->kind == TV_NONE) return dflt;
  return ev_need_int(ev, v, a->pnode[i], arg_loc(a, i), what);
}

static tc_loc call_loc(tc_args *a) { return a->call ? a->call->loc : (tc_loc){0}; }

/* ---------------------------------------------------------------- builtin functions */

tc_val *ev_make_py_range(tc_ev *ev, tc_args *a);

static tc_val *b_range(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return ev_make_py_range(ev, a);
}

static int64_t length_of(tc_ev *ev, tc_val *v, tc_loc loc) {
  switch (v->kind) {
  case TV_STR: return (int64_t)v->u.str.n;
  case TV_TUPLE:
  case TV_LIST: return v->u.seq.n;
  case TV_DICT: return v->u.dict.n;
  case TV_RANGE:
    if (v->u.range.kind == TR_PY_RANGE && v->u.range.start[0]->kind == TV_INT && v->u.range.stop[0]->kind == TV_INT) {
      int64_t lo = v->u.range.start[0]->u.i, hi = v->u.range.stop[0]->u.i, st = v->u.range.step ? v->u.range.step->u.i : 1;
      __int128 n = st > 0 ? ((__int128)hi - lo + st - 1) / st : ((__int128)lo - hi - st - 1) / -(__int128)st;
      if (n > INT64_MAX) ev_fail(ev, loc, "range is too long");
      return n < 0 ? 0 : (int64_t)n;
    }
    break;
  default: break;
  }
  ev_fail(ev, loc, "object of type '%s' has no len()", tv_kind_name(v));
}

static tc_val *b_len(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return tv_int(ev, length_of(ev, a->p[0], arg_loc(a, 0)));
}

static tc_val *b_minmax(tc_ev *ev, tc_args *a, bool is_max) {
  tc_val *args = a->p[0];
  tc_loc loc = call_loc(a);
  const char *name = is_max ? "max" : "min";
  if (a->p[1] && a->p[1]->kind != TV_NONE) ev_unsupported(ev, arg_loc(a, 1), "key= in min()/max()");
  tc_val *items = args;
  if (args->u.seq.n == 1) items = ev_to_list(ev, args->u.seq.v[0], loc);
  if (items->u.seq.n == 0) {
    if (a->p[2]) return a->p[2];
    ev_fail(ev, loc, "%s() arg is an empty sequence", name);
  }
  tc_val *best = items->u.seq.v[0];
  for (int i = 1; i < items->u.seq.n; i++) {
    tc_val *x = items->u.seq.v[i];
    if (ev_is_runtime(x) || ev_is_runtime(best)) {
      best = ev_ir_minmax(ev, is_max ? TC_OP_MAX : TC_OP_MIN, best, x, loc);
      continue;
    }
    tc_val *c = ev_compare(ev, is_max ? TC_CMP_GT : TC_CMP_LT, x, best, loc);
    if (c->u.b) best = x;
  }
  return best;
}
static tc_val *b_max(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return b_minmax(ev, a, true); }
static tc_val *b_min(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return b_minmax(ev, a, false); }

static tc_val *b_abs(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *x = ev_scalar(ev, a->p[0], arg_loc(a, 0));
  if (x->kind == TV_INT || x->kind == TV_BOOL) {
    int64_t i = x->kind == TV_BOOL ? x->u.b : x->u.i;
    if (i == INT64_MIN) ev_fail(ev, call_loc(a), "integer overflow in abs()");
    return tv_int(ev, i < 0 ? -i : i);
  }
  if (x->kind == TV_FLOAT) return tv_float(ev, fabs(x->u.f));
  if (x->kind == TV_EXPR) {
    tc_expr *e = x->u.e;
    if (tc_dtype_is_bool(e->dtype)) e = ev_cast(ev, e, tc_dt(TC_DT_INT32), call_loc(a));
    return tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_ABS, e, call_loc(a)));
  }
  ev_fail(ev, arg_loc(a, 0), "bad operand type for abs(): '%s'", tv_kind_name(x));
}

static tc_val *parse_number(tc_ev *ev, tc_val *s, bool want_int, int base, tc_loc loc) {
  const char *p = s->u.str.s;
  while (*p == ' ') p++;
  char *end;
  errno = 0;
  if (want_int) {
    long long v = strtoll(p, &end, base);
    while (*end == ' ') end++;
    if (*end || end == p || errno) ev_fail(ev, loc, "invalid literal for int() with base %d: '%s'", base, s->u.str.s);
    return tv_int(ev, v);
  }
  double f = strtod(p, &end);
  while (*end == ' ') end++;
  if (*end || end == p) ev_fail(ev, loc, "could not convert string to float: '%s'", s->u.str.s);
  return tv_float(ev, f);
}

static tc_val *b_int(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *x = a->p[0];
  if (!x) return tv_int(ev, 0);
  x = ev_scalar(ev, x, arg_loc(a, 0));
  switch (x->kind) {
  case TV_INT: return x;
  case TV_BOOL: return tv_int(ev, x->u.b);
  case TV_FLOAT:
    if (!(x->u.f > -9.2e18 && x->u.f < 9.2e18)) ev_fail(ev, arg_loc(a, 0), "cannot convert float %g to integer", x->u.f);
    return tv_int(ev, (int64_t)x->u.f);
  case TV_STR: return parse_number(ev, x, true, a->p[1] ? (int)arg_int(ev, a, 1, 10, "base") : 10, arg_loc(a, 0));
  case TV_EXPR:
    if (tc_dtype_is_int(x->u.e->dtype)) return x;
    return tv_expr(ev, ev_cast(ev, x->u.e, tc_dt(TC_DT_INT32), call_loc(a)));
  default: ev_fail(ev, arg_loc(a, 0), "int() argument must be a string or a number, not '%s'", tv_kind_name(x));
  }
}

static tc_val *b_float(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *x = a->p[0];
  if (!x) return tv_float(ev, 0);
  x = ev_scalar(ev, x, arg_loc(a, 0));
  switch (x->kind) {
  case TV_INT: return tv_float(ev, (double)x->u.i);
  case TV_BOOL: return tv_float(ev, x->u.b);
  case TV_FLOAT: return x;
  case TV_STR:
    if (strcmp(x->u.str.s, "inf") == 0 || strcmp(x->u.str.s, "+inf") == 0) return tv_float(ev, INFINITY);
    if (strcmp(x->u.str.s, "-inf") == 0) return tv_float(ev, -INFINITY);
    if (strcmp(x->u.str.s, "nan") == 0) return tv_float(ev, NAN);
    return parse_number(ev, x, false, 10, arg_loc(a, 0));
  case TV_EXPR:
    if (tc_dtype_is_float(x->u.e->dtype)) return x;
    return tv_expr(ev, ev_cast(ev, x->u.e, tc_dt(TC_DT_FLOAT32), call_loc(a)));
  default: ev_fail(ev, arg_loc(a, 0), "float() argument must be a string or a number, not '%s'", tv_kind_name(x));
  }
}

static tc_val *b_bool(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!a->p[0]) return tv_bool(ev, false);
  return tv_bool(ev, ev_truth(ev, a->p[0], arg_loc(a, 0)));
}

static tc_val *b_str(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!a->p[0]) return tv_cstr(ev, "");
  return tv_cstr(ev, tv_to_cstr(ev, a->p[0], false));
}

static tc_val *b_list(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!a->p[0]) return tv_list(ev, 0, NULL);
  return ev_to_list(ev, a->p[0], arg_loc(a, 0));
}

static tc_val *b_tuple(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!a->p[0]) return tv_tuple(ev, 0, NULL);
  tc_val *l = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  l->kind = TV_TUPLE;
  return l;
}

static tc_val *b_dict(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *d = tv_new(ev, TV_DICT);
  d->u.dict.k = EV_NEW_ARRAY(ev, tc_val *, a->nkw);
  d->u.dict.v = EV_NEW_ARRAY(ev, tc_val *, a->nkw);
  for (int i = 0; i < a->nkw; i++) {
    d->u.dict.k[d->u.dict.n] = tv_cstr(ev, a->kw[i]);
    d->u.dict.v[d->u.dict.n++] = a->kv[i];
  }
  if (a->p[0]) {
    tc_val *src = a->p[0];
    if (src->kind != TV_DICT) { /* an iterable of (key, value) pairs: dict(zip(names, values)) */
      tc_val *pairs = ev_to_list(ev, src, arg_loc(a, 0)), *m = tv_new(ev, TV_DICT);
      m->u.dict.k = EV_NEW_ARRAY(ev, tc_val *, pairs->u.seq.n + 1);
      m->u.dict.v = EV_NEW_ARRAY(ev, tc_val *, pairs->u.seq.n + 1);
      for (int i = 0; i < pairs->u.seq.n; i++) {
        tc_val *p = pairs->u.seq.v[i];
        if ((p->kind != TV_TUPLE && p->kind != TV_LIST) || p->u.seq.n != 2)
          ev_fail(ev, arg_loc(a, 0), "dict(): element %d of the sequence is not a (key, value) pair", i);
        int j;
        for (j = 0; j < m->u.dict.n; j++)
          if (ev_equal(ev, m->u.dict.k[j], p->u.seq.v[0])) break;
        m->u.dict.k[j] = p->u.seq.v[0];
        m->u.dict.v[j] = p->u.seq.v[1];
        if (j == m->u.dict.n) m->u.dict.n++;
      }
      src = m;
    }
    tc_val *r = tv_new(ev, TV_DICT);
    int n = src->u.dict.n + d->u.dict.n;
    r->u.dict.k = EV_NEW_ARRAY(ev, tc_val *, n);
    r->u.dict.v = EV_NEW_ARRAY(ev, tc_val *, n);
    memcpy(r->u.dict.k, src->u.dict.k, sizeof(tc_val *) * (size_t)src->u.dict.n);
    memcpy(r->u.dict.v, src->u.dict.v, sizeof(tc_val *) * (size_t)src->u.dict.n);
    r->u.dict.n = src->u.dict.n;
    for (int i = 0; i < d->u.dict.n; i++) {
      int j;
      for (j = 0; j < r->u.dict.n; j++)
        if (ev_equal(ev, r->u.dict.k[j], d->u.dict.k[i])) break;
      r->u.dict.k[j] = d->u.dict.k[i];
      r->u.dict.v[j] = d->u.dict.v[i];
      if (j == r->u.dict.n) r->u.dict.n++;
    }
    return r;
  }
  return d;
}

static tc_val *b_enumerate(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  int64_t start = arg_int(ev, a, 1, 0, "start of enumerate()");
  tc_val *out = tv_list(ev, 0, NULL);
  for (int i = 0; i < items->u.seq.n; i++) {
    tc_val *pair[2] = {tv_int(ev, start + i), items->u.seq.v[i]};
    tv_list_push(ev, out, tv_tuple(ev, 2, pair));
  }
  return out;
}

static tc_val *b_zip(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *its = a->p[0];
  int n = its->u.seq.n;
  tc_val **lists = EV_NEW_ARRAY(ev, tc_val *, n);
  int len = n ? INT32_MAX : 0;
  for (int i = 0; i < n; i++) {
    lists[i] = ev_to_list(ev, its->u.seq.v[i], call_loc(a));
    if (lists[i]->u.seq.n < len) len = lists[i]->u.seq.n;
  }
  tc_val *out = tv_list(ev, 0, NULL);
  for (int j = 0; j < len; j++) {
    tc_val **t = EV_NEW_ARRAY(ev, tc_val *, n);
    for (int i = 0; i < n; i++) t[i] = lists[i]->u.seq.v[j];
    tv_list_push(ev, out, tv_tuple(ev, n, t));
  }
  return out;
}

static const tc_builtin *builtin_named(const char *name);

static bool is_instance(tc_ev *ev, tc_val *obj, tc_val *cls, tc_loc loc) {
  if (cls->kind == TV_TUPLE) {
    for (int i = 0; i < cls->u.seq.n; i++)
      if (is_instance(ev, obj, cls->u.seq.v[i], loc)) return true;
    return false;
  }
  if (cls->kind != TV_BUILTIN) {
    if (cls->kind == TV_OPAQUE) return false;
    ev_fail(ev, loc, "isinstance() arg 2 must be a type or a tuple of types");
  }
  const char *n = cls->u.bi.b->name;
  if (strcmp(n, "int") == 0) return obj->kind == TV_INT || obj->kind == TV_BOOL;
  if (strcmp(n, "float") == 0) return obj->kind == TV_FLOAT;
  if (strcmp(n, "bool") == 0) return obj->kind == TV_BOOL;
  if (strcmp(n, "str") == 0) return obj->kind == TV_STR;
  if (strcmp(n, "list") == 0) return obj->kind == TV_LIST;
  if (strcmp(n, "tuple") == 0) return obj->kind == TV_TUPLE;
  if (strcmp(n, "dict") == 0) return obj->kind == TV_DICT;
  return false;
}

static tc_val *b_isinstance(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return tv_bool(ev, is_instance(ev, a->p[0], a->p[1], arg_loc(a, 1)));
}

static tc_val *b_sum(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  tc_val *acc = a->p[1] ? a->p[1] : tv_int(ev, 0);
  for (int i = 0; i < items->u.seq.n; i++) acc = ev_binop(ev, TC_P_PLUS, acc, items->u.seq.v[i], call_loc(a));
  return acc;
}

static tc_val *b_anyall(tc_ev *ev, tc_args *a, bool is_any) {
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  for (int i = 0; i < items->u.seq.n; i++)
    if (ev_truth(ev, items->u.seq.v[i], arg_loc(a, 0)) == is_any) return tv_bool(ev, is_any);
  return tv_bool(ev, !is_any);
}
static tc_val *b_any(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return b_anyall(ev, a, true); }
static tc_val *b_all(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return b_anyall(ev, a, false); }

static tc_val *b_sorted(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[1] && a->p[1]->kind != TV_NONE) ev_unsupported(ev, arg_loc(a, 1), "key= in sorted()");
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  bool rev = arg_bool(ev, a, 2, false);
  int n = items->u.seq.n;
  tc_val **v = items->u.seq.v;
  for (int i = 1; i < n; i++) /* insertion sort: stable, and lists here are small */
    for (int j = i; j > 0; j--) {
      tc_val *c = ev_compare(ev, TC_CMP_LT, v[j], v[j - 1], call_loc(a));
      tc_val *c2 = ev_compare(ev, TC_CMP_LT, v[j - 1], v[j], call_loc(a));
      if (!(rev ? c2->u.b : c->u.b)) break;
      tc_val *t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return items;
}

static tc_val *b_reversed(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  int n = items->u.seq.n;
  for (int i = 0; i < n / 2; i++) {
    tc_val *t = items->u.seq.v[i];
    items->u.seq.v[i] = items->u.seq.v[n - 1 - i];
    items->u.seq.v[n - 1 - i] = t;
  }
  return items;
}

static tc_val *b_round(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *x = a->p[0];
  if (x->kind == TV_INT) return x;
  if (x->kind != TV_FLOAT && x->kind != TV_BOOL) ev_fail(ev, arg_loc(a, 0), "round() needs a number, not %s", tv_kind_name(x));
  double f = x->kind == TV_BOOL ? x->u.b : x->u.f;
  if (a->p[1] && a->p[1]->kind != TV_NONE) {
    int64_t nd = arg_int(ev, a, 1, 0, "ndigits of round()");
    double m = pow(10.0, (double)nd);
    return tv_float(ev, nearbyint(f * m) / m);
  }
  double r = nearbyint(f); /* round half to even, as Python */
  if (!(r > -9.2e18 && r < 9.2e18)) ev_fail(ev, call_loc(a), "cannot convert %g to an integer", f);
  return tv_int(ev, (int64_t)r);
}

static tc_val *b_pow(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return ev_binop(ev, TC_P_DSTAR, a->p[0], a->p[1], call_loc(a));
}

static tc_val *b_divmod(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *r[2] = {ev_binop(ev, TC_P_DSLASH, a->p[0], a->p[1], call_loc(a)), ev_binop(ev, TC_P_PERCENT, a->p[0], a->p[1], call_loc(a))};
  return tv_tuple(ev, 2, r);
}

static tc_val *b_print(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  (void)a;
  return tv_none(ev); /* the library never prints; print() at compile time does nothing */
}

static tc_val *b_getattr(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[1]->kind != TV_STR) ev_fail(ev, arg_loc(a, 1), "getattr(): attribute name must be string");
  if (a->p[2]) {
    if (a->p[0]->kind == TV_MODULE) {
      tc_val *v = ev_module_attr_try(ev, a->p[0]->u.mod.id, a->p[1]->u.str.s);
      return v ? v : a->p[2];
    }
  }
  return ev_getattr(ev, a->p[0], a->p[1]->u.str.s, call_loc(a));
}

static tc_val *b_map(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *its = a->p[1];
  if (its->u.seq.n != 1) ev_unsupported(ev, call_loc(a), "map() over several iterables");
  tc_val *items = ev_to_list(ev, its->u.seq.v[0], call_loc(a));
  tc_val *out = tv_list(ev, 0, NULL);
  for (int i = 0; i < items->u.seq.n; i++) {
    tc_args ca = {0};
    ca.call = a->call;
    ca.n = 1;
    ca.v = &items->u.seq.v[i];
    const tc_ast *nn = NULL;
    ca.node = &nn;
    tv_list_push(ev, out, ev_call_value(ev, a->p[0], &ca, call_loc(a)));
  }
  return out;
}

static const tc_builtin python_builtins[] = {
    {"range", "start stop? step?", b_range, 0},
    {"len", "obj", b_len, 0},
    {"min", "*args | key? default?", b_min, 0},
    {"max", "*args | key? default?", b_max, 0},
    {"abs", "x", b_abs, 0},
    {"int", "x? base?", b_int, 0},
    {"float", "x?", b_float, 0},
    {"bool", "x?", b_bool, 0},
    {"str", "x?", b_str, 0},
    {"list", "iterable?", b_list, 0},
    {"tuple", "iterable?", b_tuple, 0},
    {"set", "iterable?", b_list, 0},
    {"dict", "mapping? **", b_dict, 0},
    {"enumerate", "iterable start?", b_enumerate, 0},
    {"zip", "*iterables", b_zip, 0},
    {"isinstance", "obj cls", b_isinstance, 0},
    {"sum", "iterable start?", b_sum, 0},
    {"any", "iterable", b_any, 0},
    {"all", "iterable", b_all, 0},
    {"sorted", "iterable | key? reverse?", b_sorted, 0},
    {"reversed", "seq", b_reversed, 0},
    {"round", "number ndigits?", b_round, 0},
    {"pow", "base exp", b_pow, 0},
    {"divmod", "a b", b_divmod, 0},
    {"print", "*args | sep? end? file? flush?", b_print, 0},
    {"getattr", "obj name default?", b_getattr, 0},
    {"map", "func *iterables", b_map, 0},
    {NULL, NULL, NULL, 0},
};

const tc_builtin *ev_builtin_find(const tc_builtin *table, const char *name, size_t skip) {
  for (const tc_builtin *b = table; b->name; b++)
    if (strlen(b->name) >= skip && strcmp(b->name + skip, name) == 0) return b;
  return NULL;
}

static const tc_builtin *builtin_named(const char *name) { return ev_builtin_find(python_builtins, name, 0); }

const tc_builtin *ev_python_builtin(const char *name) { return builtin_named(name); }

const char *ev_python_builtin_suggest(const char *name, int *dist) {
  const char *best = NULL;
  *dist = 100;
  for (const tc_builtin *b = python_builtins; b->name; b++) {
    int d = tc_edit_distance(name, b->name, 3);
    if (d < *dist) *dist = d, best = b->name;
  }
  return best;
}

/* ---------------------------------------------------------------- methods */

static tc_val *m_append(tc_ev *ev, tc_val *self, tc_args *a) {
  tv_list_push(ev, self, a->p[0]);
  return tv_none(ev);
}
static tc_val *m_extend(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  for (int i = 0; i < items->u.seq.n; i++) tv_list_push(ev, self, items->u.seq.v[i]);
  return tv_none(ev);
}
static tc_val *m_pop(tc_ev *ev, tc_val *self, tc_args *a) {
  int n = self->u.seq.n;
  if (n == 0) ev_fail(ev, call_loc(a), "pop from empty list");
  int64_t i = arg_int(ev, a, 0, -1, "index of pop()");
  if (i < 0) i += n;
  if (i < 0 || i >= n) ev_fail(ev, call_loc(a), "pop index out of range");
  tc_val *v = self->u.seq.v[i];
  memmove(self->u.seq.v + i, self->u.seq.v + i + 1, sizeof(tc_val *) * (size_t)(n - i - 1));
  self->u.seq.n--;
  return v;
}
static tc_val *m_insert(tc_ev *ev, tc_val *self, tc_args *a) {
  int64_t i = arg_int(ev, a, 0, 0, "index of insert()");
  int n = self->u.seq.n;
  if (i < 0) i += n;
  if (i < 0) i = 0;
  if (i > n) i = n;
  tv_list_push(ev, self, a->p[1]);
  memmove(self->u.seq.v + i + 1, self->u.seq.v + i, sizeof(tc_val *) * (size_t)(n - i));
  self->u.seq.v[i] = a->p[1];
  return tv_none(ev);
}
static tc_val *m_index(tc_ev *ev, tc_val *self, tc_args *a) {
  for (int i = 0; i < self->u.seq.n; i++)
    if (ev_equal(ev, self->u.seq.v[i], a->p[0])) return tv_int(ev, i);
  ev_fail(ev, call_loc(a), "%s is not in %s", tv_to_cstr(ev, a->p[0], true), tv_kind_name(self));
}
static tc_val *m_count(tc_ev *ev, tc_val *self, tc_args *a) {
  int c = 0;
  for (int i = 0; i < self->u.seq.n; i++)
    if (ev_equal(ev, self->u.seq.v[i], a->p[0])) c++;
  return tv_int(ev, c);
}
static tc_val *m_copy(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  return tv_list(ev, self->u.seq.n, self->u.seq.v);
}
static tc_val *m_reverse(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  int n = self->u.seq.n;
  for (int i = 0; i < n / 2; i++) {
    tc_val *t = self->u.seq.v[i];
    self->u.seq.v[i] = self->u.seq.v[n - 1 - i];
    self->u.seq.v[n - 1 - i] = t;
  }
  return tv_none(ev);
}

static tc_val *m_split(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *out = tv_list(ev, 0, NULL);
  const char *s = self->u.str.s, *end = s + self->u.str.n;
  tc_val *sep = a->p[0];
  if (!sep || sep->kind == TV_NONE) {
    while (s < end) {
      while (s < end && (*s == ' ' || *s == '\t' || *s == '\n')) s++;
      const char *q = s;
      while (q < end && !(*q == ' ' || *q == '\t' || *q == '\n')) q++;
      if (q > s) tv_list_push(ev, out, tv_str(ev, s, (size_t)(q - s)));
      s = q;
    }
    return out;
  }
  if (sep->kind != TV_STR || sep->u.str.n == 0) ev_fail(ev, arg_loc(a, 0), "empty separator");
  for (;;) {
    const char *q = s;
    while (q + sep->u.str.n <= end && memcmp(q, sep->u.str.s, sep->u.str.n) != 0) q++;
    if (q + sep->u.str.n > end) {
      tv_list_push(ev, out, tv_str(ev, s, (size_t)(end - s)));
      return out;
    }
    tv_list_push(ev, out, tv_str(ev, s, (size_t)(q - s)));
    s = q + sep->u.str.n;
  }
}
static tc_val *m_strip(tc_ev *ev, tc_val *self, tc_args *a) {
  const char *chars = a->p[0] && a->p[0]->kind == TV_STR ? a->p[0]->u.str.s : " \t\n\r";
  const char *s = self->u.str.s, *e = s + self->u.str.n;
  while (s < e && strchr(chars, *s)) s++;
  while (e > s && strchr(chars, e[-1])) e--;
  return tv_str(ev, s, (size_t)(e - s));
}
static tc_val *m_case(tc_ev *ev, tc_val *self, tc_args *a, bool upper) {
  (void)a;
  char *s = tc_arena_strndup(&ev->tmp, self->u.str.s, self->u.str.n);
  for (size_t i = 0; i < self->u.str.n; i++)
    if (upper ? (s[i] >= 'a' && s[i] <= 'z') : (s[i] >= 'A' && s[i] <= 'Z')) s[i] ^= 32;
  return tv_str(ev, s, self->u.str.n);
}
static tc_val *m_lower(tc_ev *ev, tc_val *self, tc_args *a) { return m_case(ev, self, a, false); }
static tc_val *m_upper(tc_ev *ev, tc_val *self, tc_args *a) { return m_case(ev, self, a, true); }
static tc_val *m_startswith(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *p = a->p[0];
  if (p->kind != TV_STR) ev_fail(ev, arg_loc(a, 0), "startswith first arg must be str");
  return tv_bool(ev, p->u.str.n <= self->u.str.n && memcmp(self->u.str.s, p->u.str.s, p->u.str.n) == 0);
}
static tc_val *m_endswith(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *p = a->p[0];
  if (p->kind != TV_STR) ev_fail(ev, arg_loc(a, 0), "endswith first arg must be str");
  return tv_bool(ev, p->u.str.n <= self->u.str.n &&
                         memcmp(self->u.str.s + self->u.str.n - p->u.str.n, p->u.str.s, p->u.str.n) == 0);
}
static tc_val *m_replace(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *x = a->p[0], *y = a->p[1];
  if (x->kind != TV_STR || y->kind != TV_STR) ev_fail(ev, call_loc(a), "replace() arguments must be str");
  if (x->u.str.n == 0) return self;
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  const char *s = self->u.str.s, *end = s + self->u.str.n;
  while (s < end) {
    if ((size_t)(end - s) >= x->u.str.n && memcmp(s, x->u.str.s, x->u.str.n) == 0) {
      tc_sb_putn(&sb, y->u.str.s, y->u.str.n);
      s += x->u.str.n;
    } else {
      tc_sb_putc(&sb, *s++);
    }
  }
  tc_val *r = tv_str(ev, tc_sb_cstr(&sb), sb.len);
  tc_sb_free(&sb);
  return r;
}
static tc_val *m_join(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  for (int i = 0; i < items->u.seq.n; i++) {
    tc_val *x = items->u.seq.v[i];
    if (x->kind != TV_STR) {
      tc_sb_free(&sb);
      ev_fail(ev, arg_loc(a, 0), "sequence item %d: expected str instance, %s found", i, tv_kind_name(x));
    }
    if (i) tc_sb_putn(&sb, self->u.str.s, self->u.str.n);
    tc_sb_putn(&sb, x->u.str.s, x->u.str.n);
  }
  tc_val *r = tv_str(ev, tc_sb_cstr(&sb), sb.len);
  tc_sb_free(&sb);
  return r;
}
static tc_val *m_format(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *args = a->p[0];
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  const char *s = self->u.str.s, *end = s + self->u.str.n;
  int auto_i = 0;
  while (s < end) {
    if (*s == '{' && s + 1 < end && s[1] == '{') {
      tc_sb_putc(&sb, '{');
      s += 2;
    } else if (*s == '}' && s + 1 < end && s[1] == '}') {
      tc_sb_putc(&sb, '}');
      s += 2;
    } else if (*s == '{') {
      const char *q = s + 1;
      while (q < end && *q != '}' && *q != ':') q++;
      const char *close = q;
      while (close < end && *close != '}') close++;
      tc_val *v = NULL;
      if (q == s + 1) {
        if (auto_i < args->u.seq.n) v = args->u.seq.v[auto_i++];
      } else if (s[1] >= '0' && s[1] <= '9') {
        int idx = atoi(s + 1);
        if (idx < args->u.seq.n) v = args->u.seq.v[idx];
      } else {
        for (int i = 0; i < a->nkw; i++)
          if (strlen(a->kw[i]) == (size_t)(q - s - 1) && strncmp(a->kw[i], s + 1, (size_t)(q - s - 1)) == 0) v = a->kv[i];
      }
      if (!v) {
        tc_sb_free(&sb);
        ev_fail(ev, call_loc(a), "str.format: replacement field out of range");
      }
      tv_format(ev, &sb, v, false);
      s = close < end ? close + 1 : end;
    } else {
      tc_sb_putc(&sb, *s++);
    }
  }
  tc_val *r = tv_str(ev, tc_sb_cstr(&sb), sb.len);
  tc_sb_free(&sb);
  return r;
}

static tc_val *m_get(tc_ev *ev, tc_val *self, tc_args *a) {
  for (int i = 0; i < self->u.dict.n; i++)
    if (ev_equal(ev, self->u.dict.k[i], a->p[0])) return self->u.dict.v[i];
  return a->p[1] ? a->p[1] : tv_none(ev);
}
static tc_val *m_items(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  tc_val *out = tv_list(ev, 0, NULL);
  for (int i = 0; i < self->u.dict.n; i++) {
    tc_val *p[2] = {self->u.dict.k[i], self->u.dict.v[i]};
    tv_list_push(ev, out, tv_tuple(ev, 2, p));
  }
  return out;
}
static tc_val *m_keys(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  return tv_list(ev, self->u.dict.n, self->u.dict.k);
}
static tc_val *m_values(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  return tv_list(ev, self->u.dict.n, self->u.dict.v);
}

tc_val *ev_astype(tc_ev *ev, tc_val *self, tc_args *a);

static tc_val *m_isdigit(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  bool r = self->u.str.n > 0;
  for (size_t i = 0; i < self->u.str.n && r; i++) r = self->u.str.s[i] >= '0' && self->u.str.s[i] <= '9';
  return tv_bool(ev, r);
}

static const tc_builtin list_methods[] = {
    {"list.append", "x", m_append, 0},   {"list.extend", "iterable", m_extend, 0}, {"list.pop", "index?", m_pop, 0},
    {"list.insert", "index x", m_insert, 0}, {"list.index", "x", m_index, 0},  {"list.count", "x", m_count, 0},
    {"list.copy", "", m_copy, 0},        {"list.reverse", "", m_reverse, 0},
    {NULL, NULL, NULL, 0},
};
static const tc_builtin tuple_methods[] = {
    {"tuple.index", "x", m_index, 0}, {"tuple.count", "x", m_count, 0}, {NULL, NULL, NULL, 0},
};
static const tc_builtin str_methods[] = {
    {"str.split", "sep? maxsplit?", m_split, 0}, {"str.strip", "chars?", m_strip, 0},
    {"str.lower", "", m_lower, 0},               {"str.upper", "", m_upper, 0},
    {"str.startswith", "prefix", m_startswith, 0}, {"str.endswith", "suffix", m_endswith, 0},
    {"str.replace", "old new", m_replace, 0},    {"str.join", "iterable", m_join, 0},
    {"str.format", "*args | **", m_format, 0},  {"str.isdigit", "", m_isdigit, 0},
    {NULL, NULL, NULL, 0},
};
static const tc_builtin dict_methods[] = {
    {"dict.get", "key default?", m_get, 0}, {"dict.items", "", m_items, 0},
    {"dict.keys", "", m_keys, 0},           {"dict.values", "", m_values, 0},
    {NULL, NULL, NULL, 0},
};
static const tc_builtin expr_methods[] = {
    {"astype", "dtype", ev_astype, 0},
    {NULL, NULL, NULL, 0},
};

static const tc_builtin *find_method(const tc_builtin *t, const char *attr) {
  for (; t->name; t++) {
    const char *dot = strchr(t->name, '.');
    if (strcmp(dot ? dot + 1 : t->name, attr) == 0) return t;
  }
  return NULL;
}

tc_val *ev_method(tc_ev *ev, tc_val *obj, const char *attr, tc_loc loc) {
  (void)loc;
  const tc_builtin *t = NULL;
  switch (obj->kind) {
  case TV_LIST: t = list_methods; break;
  case TV_TUPLE: t = tuple_methods; break;
  case TV_STR: t = str_methods; break;
  case TV_DTYPE: { /* str methods on a dtype act on its name (dtype.startswith("float")) */
    const char *name = ev_dtype_name(obj->u.dt);
    obj = tv_str(ev, name, strlen(name));
    t = str_methods;
    break;
  }
  case TV_DICT: t = dict_methods; break;
  case TV_INT:
  case TV_BOOL: return ev_compat_int_method(ev, obj, attr);
  case TV_EXPR:
  case TV_ELEM: t = expr_methods; break;
  case TV_BUFFER:
    if (obj->u.buf->scope == TC_SCOPE_VAR) t = expr_methods;
    break;
  default: break;
  }
  if (!t) return NULL;
  const tc_builtin *m = find_method(t, attr);
  return m ? tv_builtin(ev, m, obj) : NULL;
}
