/* eval_expr.c: expressions. Compile-time values fold with Python's semantics; a runtime
 * operand (an IR expression, a buffer element) turns the operation into IR (eval_types.c). */
#include "front/eval_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

bool ev_is_runtime(tc_val *v) {
  return v->kind == TV_EXPR || v->kind == TV_ELEM || (v->kind == TV_BUFFER && v->u.buf->scope == TC_SCOPE_VAR);
}

static bool is_num(const tc_val *v) { return v->kind == TV_INT || v->kind == TV_BOOL || v->kind == TV_FLOAT; }
static int64_t as_i(const tc_val *v) { return v->kind == TV_BOOL ? (int64_t)v->u.b : v->u.i; }
static double as_f(const tc_val *v) {
  return v->kind == TV_FLOAT ? v->u.f : (double)as_i(v);
}

bool ev_truth(tc_ev *ev, tc_val *v, tc_loc loc) {
  switch (v->kind) {
  case TV_NONE: return false;
  case TV_BOOL: return v->u.b;
  case TV_INT: return v->u.i != 0;
  case TV_FLOAT: return v->u.f != 0;
  case TV_STR: return v->u.str.n > 0;
  case TV_TUPLE:
  case TV_LIST: return v->u.seq.n > 0;
  case TV_DICT: return v->u.dict.n > 0;
  case TV_EXPR:
  case TV_ELEM:
    ev_fail(ev, loc, "this condition must be known at compile time, but it %s", ev_runtime_reason(ev, v));
  case TV_OPAQUE: ev_fail(ev, loc, "unsupported: use of '%s' in code that tilec evaluates", v->u.opaque.name);
  case TV_BUFFER:
    if (v->u.buf->scope == TC_SCOPE_VAR)
      ev_fail(ev, loc, "this condition must be known at compile time, but it reads the variable '%s'", v->u.buf->name);
    return true;
  default: return true;
  }
}

static const char *op_spelling(int op) {
  if (op == TC_AST_NOT_OP) return "not";
  return tc_punct_spelling((tc_punct)op);
}

/* ---------------------------------------------------------------- compile-time arithmetic */

static tc_val *int_binop(tc_ev *ev, int op, int64_t a, int64_t b, tc_loc loc) {
  int64_t r;
  switch (op) {
  case TC_P_PLUS:
    if (__builtin_add_overflow(a, b, &r)) goto overflow;
    return tv_int(ev, r);
  case TC_P_MINUS:
    if (__builtin_sub_overflow(a, b, &r)) goto overflow;
    return tv_int(ev, r);
  case TC_P_STAR:
    if (__builtin_mul_overflow(a, b, &r)) goto overflow;
    return tv_int(ev, r);
  case TC_P_SLASH:
    if (b == 0) ev_fail(ev, loc, "division by zero");
    return tv_float(ev, (double)a / (double)b);
  case TC_P_DSLASH:
  case TC_P_PERCENT: {
    if (b == 0) ev_fail(ev, loc, op == TC_P_DSLASH ? "integer division by zero" : "integer modulo by zero");
    if (a == INT64_MIN && b == -1) {
      if (op == TC_P_PERCENT) return tv_int(ev, 0);
      goto overflow;
    }
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) {
      q--;
      m += b;
    }
    return tv_int(ev, op == TC_P_DSLASH ? q : m);
  }
  case TC_P_DSTAR: {
    if (b < 0) {
      if (a == 0) ev_fail(ev, loc, "0 cannot be raised to a negative power");
      return tv_float(ev, pow((double)a, (double)b));
    }
    int64_t acc = 1, base = a;
    for (int64_t e = b; e > 0; e >>= 1) {
      if (e & 1)
        if (__builtin_mul_overflow(acc, base, &acc)) goto overflow;
      if (e > 1 && __builtin_mul_overflow(base, base, &base)) {
        if (a == 1 || a == -1 || a == 0) break;
        goto overflow;
      }
    }
    if (a == -1) return tv_int(ev, (b & 1) ? -1 : 1);
    if (a == 1) return tv_int(ev, 1);
    if (a == 0) return tv_int(ev, b == 0 ? 1 : 0);
    return tv_int(ev, acc);
  }
  case TC_P_AMP: return tv_int(ev, a & b);
  case TC_P_PIPE: return tv_int(ev, a | b);
  case TC_P_CARET: return tv_int(ev, a ^ b);
  case TC_P_LSHIFT:
    if (b < 0) ev_fail(ev, loc, "negative shift count");
    if (b >= 63 || (a != 0 && (a > (INT64_MAX >> b) || a < (INT64_MIN >> b)))) goto overflow;
    return tv_int(ev, (int64_t)((uint64_t)a << b));
  case TC_P_RSHIFT:
    if (b < 0) ev_fail(ev, loc, "negative shift count");
    return tv_int(ev, b >= 63 ? (a < 0 ? -1 : 0) : a >> b);
  default: break;
  }
  ev_fail(ev, loc, "unsupported operand type(s) for %s: 'int' and 'int'", op_spelling(op));
overflow:
  ev_fail(ev, loc, "integer overflow: the result of %lld %s %lld does not fit in 64 bits", (long long)a, op_spelling(op),
          (long long)b);
}

static tc_val *float_binop(tc_ev *ev, int op, double a, double b, tc_loc loc) {
  switch (op) {
  case TC_P_PLUS: return tv_float(ev, a + b);
  case TC_P_MINUS: return tv_float(ev, a - b);
  case TC_P_STAR: return tv_float(ev, a * b);
  case TC_P_SLASH:
    if (b == 0) ev_fail(ev, loc, "float division by zero");
    return tv_float(ev, a / b);
  case TC_P_DSLASH:
    if (b == 0) ev_fail(ev, loc, "float floor division by zero");
    return tv_float(ev, floor(a / b));
  case TC_P_PERCENT: {
    if (b == 0) ev_fail(ev, loc, "float modulo by zero");
    double m = fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return tv_float(ev, m);
  }
  case TC_P_DSTAR:
    if (a == 0 && b < 0) ev_fail(ev, loc, "0.0 cannot be raised to a negative power");
    if (a < 0 && b != floor(b)) ev_fail(ev, loc, "a negative number raised to a fractional power is complex");
    return tv_float(ev, pow(a, b));
  default: break;
  }
  ev_fail(ev, loc, "unsupported operand type(s) for %s: 'float' and 'float'", op_spelling(op));
}

static tc_val *seq_concat(tc_ev *ev, tc_val *x, tc_val *y) {
  int n = x->u.seq.n + y->u.seq.n;
  tc_val **v = EV_NEW_ARRAY(ev, tc_val *, n);
  memcpy(v, x->u.seq.v, sizeof(tc_val *) * (size_t)x->u.seq.n);
  memcpy(v + x->u.seq.n, y->u.seq.v, sizeof(tc_val *) * (size_t)y->u.seq.n);
  return x->kind == TV_TUPLE ? tv_tuple(ev, n, v) : tv_list(ev, n, v);
}

static tc_val *seq_repeat(tc_ev *ev, tc_val *x, int64_t times, tc_loc loc) {
  if (times < 0) times = 0;
  int64_t n = (int64_t)x->u.seq.n * times;
  if (n > 1000000) ev_fail(ev, loc, "sequence repetition makes more than 1000000 elements");
  tc_val **v = EV_NEW_ARRAY(ev, tc_val *, n);
  for (int64_t i = 0; i < n; i++) v[i] = x->u.seq.v[i % x->u.seq.n];
  return x->kind == TV_TUPLE ? tv_tuple(ev, (int)n, v) : tv_list(ev, (int)n, v);
}

/* "%d items" % x: the conversions %d %i %s %r %f %e %g %x with flags, width and precision. */
static tc_val *str_percent(tc_ev *ev, tc_val *fmt, tc_val *args, tc_loc loc) {
  tc_val **av = &args;
  int an = 1, ai = 0;
  if (args->kind == TV_TUPLE) av = args->u.seq.v, an = args->u.seq.n;
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  const char *p = fmt->u.str.s, *end = p + fmt->u.str.n;
  while (p < end) {
    if (*p != '%') {
      tc_sb_putc(&sb, *p++);
      continue;
    }
    p++;
    if (p < end && *p == '%') {
      tc_sb_putc(&sb, '%');
      p++;
      continue;
    }
    char spec[32] = "%";
    int sn = 1;
    while (p < end && strchr("-+ #0123456789.", *p) && sn < 28) spec[sn++] = *p++;
    if (p >= end) {
      tc_sb_free(&sb);
      ev_fail(ev, loc, "incomplete format");
    }
    char conv = *p++;
    if (ai >= an) {
      tc_sb_free(&sb);
      ev_fail(ev, loc, "not enough arguments for format string");
    }
    tc_val *a = av[ai++];
    if (conv == 's' || conv == 'r') {
      spec[sn++] = 's';
      spec[sn] = 0;
      tc_sb_printf(&sb, spec, tv_to_cstr(ev, a, conv == 'r'));
    } else if ((conv == 'd' || conv == 'i' || conv == 'x' || conv == 'X') && is_num(a)) {
      spec[sn++] = 'l';
      spec[sn++] = 'l';
      spec[sn++] = conv == 'i' ? 'd' : conv;
      spec[sn] = 0;
      tc_sb_printf(&sb, spec, (long long)(a->kind == TV_FLOAT ? (int64_t)a->u.f : as_i(a)));
    } else if (strchr("feEgG", conv) && is_num(a)) {
      spec[sn++] = conv;
      spec[sn] = 0;
      tc_sb_printf(&sb, spec, as_f(a));
    } else {
      tc_sb_free(&sb);
      ev_fail(ev, loc, "unsupported format conversion '%%%c' for %s", conv, tv_kind_name(a));
    }
  }
  if (ai < an) {
    tc_sb_free(&sb);
    ev_fail(ev, loc, "not all arguments converted during string formatting");
  }
  tc_val *r = tv_cstr(ev, tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  return r;
}

tc_val *ev_binop(tc_ev *ev, int op, tc_val *x, tc_val *y, tc_loc loc) {
  if (ev_is_runtime(x) || ev_is_runtime(y)) return ev_ir_binop(ev, op, x, y, loc);
  if (is_num(x) && is_num(y)) {
    if (x->kind == TV_FLOAT || y->kind == TV_FLOAT) return float_binop(ev, op, as_f(x), as_f(y), loc);
    return int_binop(ev, op, as_i(x), as_i(y), loc);
  }
  if (op == TC_P_PLUS) {
    if (x->kind == TV_STR && y->kind == TV_STR) {
      char *s = tc_arena_alloc(&ev->tmp, x->u.str.n + y->u.str.n + 1);
      memcpy(s, x->u.str.s, x->u.str.n);
      memcpy(s + x->u.str.n, y->u.str.s, y->u.str.n);
      return tv_str(ev, s, x->u.str.n + y->u.str.n);
    }
    if ((x->kind == TV_TUPLE || x->kind == TV_LIST) && x->kind == y->kind) return seq_concat(ev, x, y);
  }
  if (op == TC_P_STAR) {
    if ((x->kind == TV_TUPLE || x->kind == TV_LIST) && (y->kind == TV_INT || y->kind == TV_BOOL))
      return seq_repeat(ev, x, as_i(y), loc);
    if ((y->kind == TV_TUPLE || y->kind == TV_LIST) && (x->kind == TV_INT || x->kind == TV_BOOL))
      return seq_repeat(ev, y, as_i(x), loc);
    if (x->kind == TV_STR && (y->kind == TV_INT || y->kind == TV_BOOL)) {
      int64_t t = as_i(y) < 0 ? 0 : as_i(y);
      if ((int64_t)x->u.str.n * t > 1000000) ev_fail(ev, loc, "string repetition makes more than 1000000 characters");
      size_t n = x->u.str.n * (size_t)t;
      char *s = tc_arena_alloc(&ev->tmp, n + 1);
      for (size_t i = 0; i < n; i++) s[i] = x->u.str.s[i % x->u.str.n];
      return tv_str(ev, s, n);
    }
  }
  if (op == TC_P_PERCENT && x->kind == TV_STR) return str_percent(ev, x, y, loc);
  if (x->kind == TV_OPAQUE || y->kind == TV_OPAQUE)
    ev_fail(ev, loc, "unsupported: use of '%s' in code that tilec evaluates",
            x->kind == TV_OPAQUE ? x->u.opaque.name : y->u.opaque.name);
  ev_fail(ev, loc, "unsupported operand type(s) for %s: '%s' and '%s'", op_spelling(op), tv_kind_name(x),
          tv_kind_name(y));
}

bool ev_equal(tc_ev *ev, tc_val *x, tc_val *y) {
  if (is_num(x) && is_num(y)) {
    if (x->kind == TV_FLOAT || y->kind == TV_FLOAT) return as_f(x) == as_f(y);
    return as_i(x) == as_i(y);
  }
  if (x->kind == TV_DTYPE && y->kind == TV_STR) {
    tc_val *t = x;
    x = y;
    y = t;
  }
  if (x->kind == TV_STR && y->kind == TV_DTYPE) {
    tc_dtype d;
    return ev_parse_dtype_string(ev, x->u.str.s, &d, (tc_loc){0}, false) && tc_dtype_eq(d, y->u.dt);
  }
  if (x->kind != y->kind) return false;
  switch (x->kind) {
  case TV_NONE: return true;
  case TV_STR: return x->u.str.n == y->u.str.n && memcmp(x->u.str.s, y->u.str.s, x->u.str.n) == 0;
  case TV_TUPLE:
  case TV_LIST:
    if (x->u.seq.n != y->u.seq.n) return false;
    for (int i = 0; i < x->u.seq.n; i++)
      if (!ev_equal(ev, x->u.seq.v[i], y->u.seq.v[i])) return false;
    return true;
  case TV_DTYPE: return tc_dtype_eq(x->u.dt, y->u.dt);
  case TV_ENUM: return x->u.en.id == y->u.en.id && x->u.en.value == y->u.en.value;
  case TV_FUNC: return x->u.func == y->u.func;
  case TV_BUILTIN: return x->u.bi.b == y->u.bi.b && x->u.bi.self == y->u.bi.self;
  case TV_MODULE: return x->u.mod.id == y->u.mod.id;
  case TV_BUFFER: return x->u.buf == y->u.buf;
  case TV_OPAQUE: return strcmp(x->u.opaque.name, y->u.opaque.name) == 0;
  default: return x == y;
  }
}

/* Three-way comparison for ordering; *ok false when the types do not order. */
static int ev_order(tc_ev *ev, tc_val *x, tc_val *y, bool *ok) {
  *ok = true;
  if (is_num(x) && is_num(y)) {
    if (x->kind == TV_FLOAT || y->kind == TV_FLOAT) {
      double a = as_f(x), b = as_f(y);
      if (a != a || b != b) {
        *ok = true;
        return 2; /* unordered: every ordering is false */
      }
      return a < b ? -1 : a > b;
    }
    int64_t a = as_i(x), b = as_i(y);
    return a < b ? -1 : a > b;
  }
  if (x->kind == TV_STR && y->kind == TV_STR) {
    size_t n = x->u.str.n < y->u.str.n ? x->u.str.n : y->u.str.n;
    int c = memcmp(x->u.str.s, y->u.str.s, n);
    if (c) return c < 0 ? -1 : 1;
    return x->u.str.n < y->u.str.n ? -1 : x->u.str.n > y->u.str.n;
  }
  if ((x->kind == TV_TUPLE || x->kind == TV_LIST) && x->kind == y->kind) {
    for (int i = 0; i < x->u.seq.n && i < y->u.seq.n; i++) {
      if (ev_equal(ev, x->u.seq.v[i], y->u.seq.v[i])) continue;
      return ev_order(ev, x->u.seq.v[i], y->u.seq.v[i], ok);
    }
    return x->u.seq.n < y->u.seq.n ? -1 : x->u.seq.n > y->u.seq.n;
  }
  *ok = false;
  return 0;
}

static bool contains(tc_ev *ev, tc_val *container, tc_val *x, tc_loc loc) {
  switch (container->kind) {
  case TV_TUPLE:
  case TV_LIST:
    for (int i = 0; i < container->u.seq.n; i++)
      if (ev_equal(ev, container->u.seq.v[i], x)) return true;
    return false;
  case TV_DICT:
    for (int i = 0; i < container->u.dict.n; i++)
      if (ev_equal(ev, container->u.dict.k[i], x)) return true;
    return false;
  case TV_STR:
    if (x->kind != TV_STR) ev_fail(ev, loc, "'in <string>' requires string as left operand, not %s", tv_kind_name(x));
    if (x->u.str.n == 0) return true;
    for (size_t i = 0; i + x->u.str.n <= container->u.str.n; i++)
      if (memcmp(container->u.str.s + i, x->u.str.s, x->u.str.n) == 0) return true;
    return false;
  default: ev_fail(ev, loc, "argument of type '%s' is not iterable", tv_kind_name(container));
  }
}

tc_val *ev_compare(tc_ev *ev, tc_cmp_op op, tc_val *x, tc_val *y, tc_loc loc) {
  if (op == TC_CMP_IS || op == TC_CMP_IS_NOT) {
    bool same;
    if (x->kind == TV_NONE || y->kind == TV_NONE) same = x->kind == y->kind;
    else if (x->kind == TV_BOOL && y->kind == TV_BOOL) same = x->u.b == y->u.b;
    else if (x->kind == y->kind && (x->kind == TV_DTYPE || x->kind == TV_BUFFER || x->kind == TV_FUNC || x->kind == TV_MODULE))
      same = ev_equal(ev, x, y);
    else same = x == y;
    return tv_bool(ev, op == TC_CMP_IS ? same : !same);
  }
  if (op == TC_CMP_IN || op == TC_CMP_NOT_IN) {
    if (ev_is_runtime(x) || ev_is_runtime(y))
      ev_fail(ev, loc, "'in' needs values known at compile time");
    bool c = contains(ev, y, x, loc);
    return tv_bool(ev, op == TC_CMP_IN ? c : !c);
  }
  if (ev_is_runtime(x) || ev_is_runtime(y)) return ev_ir_compare(ev, op, x, y, loc);
  if (op == TC_CMP_EQ) return tv_bool(ev, ev_equal(ev, x, y));
  if (op == TC_CMP_NE) return tv_bool(ev, !ev_equal(ev, x, y));
  bool ok;
  int c = ev_order(ev, x, y, &ok);
  if (!ok) {
    static const char *const sp[] = {"==", "!=", "<", "<=", ">", ">="};
    ev_fail(ev, loc, "'%s' not supported between instances of '%s' and '%s'", sp[op], tv_kind_name(x), tv_kind_name(y));
  }
  bool r;
  if (c == 2) r = false;
  else if (op == TC_CMP_LT) r = c < 0;
  else if (op == TC_CMP_LE) r = c <= 0;
  else if (op == TC_CMP_GT) r = c > 0;
  else r = c >= 0;
  return tv_bool(ev, r);
}

/* ---------------------------------------------------------------- iteration */

void ev_iterate(tc_ev *ev, tc_val *it, tc_loc loc, tc_iter_fn fn, void *ctx) {
  switch (it->kind) {
  case TV_TUPLE:
  case TV_LIST:
    for (int i = 0; i < it->u.seq.n; i++)
      if (!fn(ev, it->u.seq.v[i], ctx)) return;
    return;
  case TV_DICT:
    for (int i = 0; i < it->u.dict.n; i++)
      if (!fn(ev, it->u.dict.k[i], ctx)) return;
    return;
  case TV_STR:
    for (size_t i = 0; i < it->u.str.n; i++)
      if (!fn(ev, tv_str(ev, it->u.str.s + i, 1), ctx)) return;
    return;
  case TV_DTYPE: { /* a dtype is its name, as in TileLang, where dtypes are strings */
    const char *name = ev_dtype_name(it->u.dt);
    ev_iterate(ev, tv_str(ev, name, strlen(name)), loc, fn, ctx);
    return;
  }
  case TV_RANGE:
    if (it->u.range.kind == TR_PY_RANGE || it->u.range.kind == TR_SERIAL || it->u.range.kind == TR_UNROLL ||
        it->u.range.kind == TR_VECTORIZED) {
      tc_val *a = it->u.range.start[0], *b = it->u.range.stop[0], *s = it->u.range.step;
      if (a->kind == TV_INT && b->kind == TV_INT && (!s || s->kind == TV_INT)) {
        int64_t step = s ? s->u.i : 1;
        if (step == 0) ev_fail(ev, loc, "range() arg 3 must not be zero");
        for (int64_t i = a->u.i; step > 0 ? i < b->u.i : i > b->u.i; i += step) {
          if (++ev->steps > 2000000) ev_fail(ev, loc, "compile-time evaluation ran more than 2000000 steps");
          if (!fn(ev, tv_int(ev, i), ctx)) return;
          if ((step > 0 && i > INT64_MAX - step) || (step < 0 && i < INT64_MIN - step)) return;
        }
        return;
      }
      ev_fail(ev, loc, "this loop needs bounds known at compile time here, but its bound %s",
              ev_runtime_reason(ev, (a->kind != TV_INT) ? a : b));
    }
    ev_fail(ev, loc, "%s loops must be inside 'with T.Kernel(...)'",
            it->u.range.kind == TR_PARALLEL ? "T.Parallel" : "T.Pipelined");
  case TV_OPAQUE: ev_fail(ev, loc, "unsupported: use of '%s' in code that tilec evaluates", it->u.opaque.name);
  default: ev_fail(ev, loc, "'%s' object is not iterable", tv_kind_name(it));
  }
}

static bool collect_item(tc_ev *ev, tc_val *item, void *ctx) {
  tv_list_push(ev, (tc_val *)ctx, item);
  return true;
}

tc_val *ev_to_list(tc_ev *ev, tc_val *it, tc_loc loc) {
  tc_val *l = tv_list(ev, 0, NULL);
  ev_iterate(ev, it, loc, collect_item, l);
  return l;
}

/* ---------------------------------------------------------------- functions */

tc_func *ev_make_func(tc_ev *ev, const tc_ast *def) {
  tc_func *f = EV_NEW(ev, tc_func);
  f->name = def->kind == TC_AST_FUNCTION_DEF ? def->str : "<lambda>";
  f->def = def;
  f->closure = ev->scope;
  f->defaults = EV_NEW_ARRAY(ev, tc_val *, def->params.n);
  for (int i = 0; i < def->params.n; i++)
    if (def->params.v[i].default_) f->defaults[i] = ev_expr(ev, def->params.v[i].default_);
  return f;
}

tc_val *ev_call_func(tc_ev *ev, tc_func *f, tc_args *a, tc_loc loc) {
  const tc_ast *def = f->def;
  if (f->is_prim_func) ev_unsupported(ev, loc, "calling a @T.prim_func from Python code");
  if (ev->call_depth > 200) ev_fail(ev, loc, "function calls nested too deeply (recursion?)");
  const tc_ast_params *ps = &def->params;
  tc_env *sc = scope_new(ev, f->closure, false);
  tc_val **bound = EV_NEW_ARRAY(ev, tc_val *, ps->n);
  int varargs = -1, kwargs = -1, npos = 0;
  for (int i = 0; i < ps->n; i++) {
    if (ps->v[i].kind == TC_PARAM_VARARGS) varargs = i;
    else if (ps->v[i].kind == TC_PARAM_KWARGS) kwargs = i;
    else if (ps->v[i].kind != TC_PARAM_KWONLY && varargs < 0) npos++;
  }
  const char *fname = f->name;
  int pi = 0;
  tc_val *rest = varargs >= 0 ? tv_tuple(ev, 0, NULL) : NULL;
  for (int i = 0; i < a->n; i++) {
    while (pi < ps->n && (ps->v[pi].kind == TC_PARAM_VARARGS || ps->v[pi].kind == TC_PARAM_KWONLY ||
                          ps->v[pi].kind == TC_PARAM_KWARGS))
      pi = ps->n;
    if (pi < ps->n && pi < npos + (varargs >= 0 && varargs < npos ? 1 : 0)) {
      bound[pi++] = a->v[i];
    } else if (rest) {
      tv_list_push(ev, rest, a->v[i]);
    } else {
      ev_fail(ev, loc, "%s() takes %d positional argument%s but %d %s given", fname, npos, npos == 1 ? "" : "s", a->n,
              a->n == 1 ? "was" : "were");
    }
  }
  tc_val *kwd = NULL;
  for (int i = 0; i < a->nkw; i++) {
    int j;
    for (j = 0; j < ps->n; j++)
      if (ps->v[j].kind != TC_PARAM_VARARGS && ps->v[j].kind != TC_PARAM_KWARGS && ps->v[j].kind != TC_PARAM_POSONLY &&
          strcmp(ps->v[j].name, a->kw[i]) == 0)
        break;
    if (j < ps->n) {
      if (bound[j]) ev_fail(ev, loc, "%s() got multiple values for argument '%s'", fname, a->kw[i]);
      bound[j] = a->kv[i];
    } else if (kwargs >= 0) {
      if (!kwd) kwd = tv_new(ev, TV_DICT);
      tc_val *k = tv_cstr(ev, a->kw[i]);
      int n = kwd->u.dict.n;
      kwd->u.dict.k = tc_arena_grow(&ev->tmp, kwd->u.dict.k, sizeof(tc_val *) * (size_t)n, sizeof(tc_val *) * (size_t)(n + 1));
      kwd->u.dict.v = tc_arena_grow(&ev->tmp, kwd->u.dict.v, sizeof(tc_val *) * (size_t)n, sizeof(tc_val *) * (size_t)(n + 1));
      kwd->u.dict.k[n] = k;
      kwd->u.dict.v[n] = a->kv[i];
      kwd->u.dict.n++;
    } else {
      const char *best = NULL;
      int bestd = 3;
      for (j = 0; j < ps->n; j++) {
        int d = strcasecmp(a->kw[i], ps->v[j].name) == 0 ? 0 : tc_edit_distance(a->kw[i], ps->v[j].name, 2);
        if (d < bestd) bestd = d, best = ps->v[j].name;
      }
      tc_loc kl = ev_kw_loc(a, i, loc);
      if (best) ev_fail(ev, kl, "%s() got an unexpected keyword argument '%s'; did you mean '%s'?", fname, a->kw[i], best);
      ev_fail(ev, kl, "%s() got an unexpected keyword argument '%s'", fname, a->kw[i]);
    }
  }
  for (int i = 0; i < ps->n; i++) {
    if (i == varargs) {
      bound[i] = tv_tuple(ev, rest->u.seq.n, rest->u.seq.v);
      continue;
    }
    if (i == kwargs) {
      bound[i] = kwd ? kwd : tv_new(ev, TV_DICT);
      continue;
    }
    if (!bound[i]) bound[i] = f->defaults[i];
    if (!bound[i]) {
      int missing = 0;
      for (int j = i; j < ps->n; j++)
        if (!bound[j] && !f->defaults[j] && j != varargs && j != kwargs) missing++;
      ev_fail(ev, loc, "%s() missing %d required %sargument%s: '%s'", fname, missing,
              ps->v[i].kind == TC_PARAM_KWONLY ? "keyword-only " : "positional ", missing == 1 ? "" : "s", ps->v[i].name);
    }
  }
  tc_env *saved = ev->scope;
  ev->scope = sc;
  for (int i = 0; i < ps->n; i++) scope_set(ev, sc, ps->v[i].name, bound[i]);
  tc_modswitch mod = ev_module_enter(ev, f->closure); /* a sibling module's function: its globals */
  ev->call_depth++;
  int saved_base = ev->fn_rt_base;
  const tc_ast *saved_stmt = ev->cur_stmt; /* the caller's statement names its buffers */
  ev->fn_rt_base = ev->rt_depth;
  tc_val *result;
  if (def->kind == TC_AST_LAMBDA) {
    result = ev_expr(ev, def->a);
  } else {
    ev->ret = NULL;
    tc_flow fl = ev_block(ev, &def->list);
    result = (fl == FLOW_RETURN && ev->ret) ? ev->ret : tv_none(ev);
    ev->ret = NULL;
  }
  ev->call_depth--;
  ev_module_leave(ev, mod);
  ev->fn_rt_base = saved_base;
  ev->cur_stmt = saved_stmt;
  ev->scope = saved;
  return result;
}

static tc_val *call_dtype(tc_ev *ev, tc_dtype dt, tc_args *a, tc_loc loc) {
  char name[32];
  snprintf(name, sizeof name, "T.%s", ev_dtype_name(dt));
  if (a->nkw) ev_fail(ev, loc, "%s() got an unexpected keyword argument '%s'", name, a->kw[0]);
  if (a->n != 1) ev_fail(ev, loc, "%s() takes 1 positional argument but %d were given", name, a->n);
  tc_val *x = ev_scalar(ev, a->v[0], loc);
  if (x->kind == TV_EXPR) return tv_expr(ev, ev_cast(ev, x->u.e, dt, loc));
  return tv_expr(ev, ev_to_expr_as(ev, x, dt, loc));
}

tc_val *ev_call_value(tc_ev *ev, tc_val *fn, tc_args *a, tc_loc loc) {
  switch (fn->kind) {
  case TV_BUILTIN:
    ev_bind_builtin(ev, fn->u.bi.b, a);
    return fn->u.bi.b->fn(ev, fn->u.bi.self, a);
  case TV_FUNC: return ev_call_func(ev, fn->u.func, a, loc);
  case TV_DTYPE: return call_dtype(ev, fn->u.dt, a, loc);
  case TV_OPAQUE:
    if (ev->cur || ev->in_prim_func)
      ev_fail(ev, loc, "unsupported: use of '%s' inside a kernel", fn->u.opaque.name);
    ev_fail(ev, loc, "unsupported: call of '%s' in code that tilec evaluates", fn->u.opaque.name);
  default: ev_fail(ev, loc, "'%s' object is not callable", tv_kind_name(fn));
  }
}

static tc_val *eval_arg(tc_ev *ev, const tc_ast *x, bool lambdas) {
  if (lambdas && x->kind == TC_AST_LAMBDA) {
    tc_val *r = tv_new(ev, TV_FUNC);
    r->u.func = ev_make_func(ev, x);
    return r;
  }
  return ev_expr(ev, x);
}

static tc_val *eval_call(tc_ev *ev, const tc_ast *e) {
  tc_val *fn = ev_expr(ev, e->a);
  /* T.annotate_layout records its argument as written: layout constructors are not modelled */
  bool lazy = fn->kind == TV_BUILTIN && fn->u.bi.b->tag == EV_TAG_LAZY_ARGS;
  /* layout constructors take lambdas over their placeholders, also inside a kernel */
  bool lambdas = fn->kind == TV_BUILTIN && fn->u.bi.b->tag == EV_TAG_LAMBDA_ARGS;
  tc_args a = {0};
  a.call = e;
  int cap = e->list.n + 4;
  a.v = EV_NEW_ARRAY(ev, tc_val *, cap);
  a.node = EV_NEW_ARRAY(ev, const tc_ast *, cap);
  for (int i = 0; i < e->list.n; i++) {
    const tc_ast *x = e->list.v[i];
    if (x->kind == TC_AST_STARRED) {
      tc_val *l = ev_to_list(ev, ev_expr(ev, x->a), x->loc);
      int need = a.n + l->u.seq.n;
      if (need > cap) {
        int nc = need + 4;
        a.v = tc_arena_grow(&ev->tmp, a.v, sizeof(tc_val *) * (size_t)cap, sizeof(tc_val *) * (size_t)nc);
        a.node = tc_arena_grow(&ev->tmp, a.node, sizeof(tc_ast *) * (size_t)cap, sizeof(tc_ast *) * (size_t)nc);
        cap = nc;
      }
      for (int j = 0; j < l->u.seq.n; j++) {
        a.node[a.n] = x;
        a.v[a.n++] = l->u.seq.v[j];
      }
      continue;
    }
    if (a.n == cap) {
      int nc = cap * 2;
      a.v = tc_arena_grow(&ev->tmp, a.v, sizeof(tc_val *) * (size_t)cap, sizeof(tc_val *) * (size_t)nc);
      a.node = tc_arena_grow(&ev->tmp, a.node, sizeof(tc_ast *) * (size_t)cap, sizeof(tc_ast *) * (size_t)nc);
      cap = nc;
    }
    a.node[a.n] = x;
    a.v[a.n++] = lazy ? tv_none(ev) : eval_arg(ev, x, lambdas);
  }
  int kcap = e->list2.n + 4;
  a.kw = EV_NEW_ARRAY(ev, const char *, kcap);
  a.kv = EV_NEW_ARRAY(ev, tc_val *, kcap);
  a.knode = EV_NEW_ARRAY(ev, const tc_ast *, kcap);
  for (int i = 0; i < e->list2.n; i++) {
    const tc_ast *k = e->list2.v[i];
    if (!k->str) { /* **mapping */
      tc_val *d = ev_expr(ev, k->a);
      if (d->kind != TV_DICT) ev_fail(ev, k->loc, "argument after ** must be a mapping, not %s", tv_kind_name(d));
      for (int j = 0; j < d->u.dict.n; j++) {
        if (d->u.dict.k[j]->kind != TV_STR) ev_fail(ev, k->loc, "keywords must be strings");
        if (a.nkw == kcap) {
          int nc = kcap * 2;
          a.kw = tc_arena_grow(&ev->tmp, a.kw, sizeof(char *) * (size_t)kcap, sizeof(char *) * (size_t)nc);
          a.kv = tc_arena_grow(&ev->tmp, a.kv, sizeof(tc_val *) * (size_t)kcap, sizeof(tc_val *) * (size_t)nc);
          a.knode = tc_arena_grow(&ev->tmp, a.knode, sizeof(tc_ast *) * (size_t)kcap, sizeof(tc_ast *) * (size_t)nc);
          kcap = nc;
        }
        a.kw[a.nkw] = d->u.dict.k[j]->u.str.s;
        a.knode[a.nkw] = k;
        a.kv[a.nkw++] = d->u.dict.v[j];
      }
      continue;
    }
    if (a.nkw == kcap) {
      int nc = kcap * 2;
      a.kw = tc_arena_grow(&ev->tmp, a.kw, sizeof(char *) * (size_t)kcap, sizeof(char *) * (size_t)nc);
      a.kv = tc_arena_grow(&ev->tmp, a.kv, sizeof(tc_val *) * (size_t)kcap, sizeof(tc_val *) * (size_t)nc);
      a.knode = tc_arena_grow(&ev->tmp, a.knode, sizeof(tc_ast *) * (size_t)kcap, sizeof(tc_ast *) * (size_t)nc);
      kcap = nc;
    }
    a.kw[a.nkw] = k->str;
    a.knode[a.nkw] = k->a;
    a.kv[a.nkw++] = lazy ? tv_none(ev) : eval_arg(ev, k->a, lambdas);
  }
  return ev_call_value(ev, fn, &a, e->loc);
}

/* ---------------------------------------------------------------- attributes, subscripts */

tc_val *ev_getattr(tc_ev *ev, tc_val *obj, const char *attr, tc_loc loc) {
  switch (obj->kind) {
  case TV_MODULE: return ev_module_attr(ev, obj->u.mod.id, attr, loc);
  case TV_OPAQUE: {
    if (strcmp(obj->u.opaque.name, DEVICE_PROPERTIES_NAME) == 0) {
      tc_val *v = ev_compat_device_property(ev, attr);
      if (v) return v;
      ev_fail(ev, loc, "unsupported: the device property '%s' (tilec answers major, minor, multi_processor_count and name)", attr);
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s.%s", obj->u.opaque.name, attr);
    /* torch.cuda.is_available() inside a kernel is a compile-time answer; torch.relu is not */
    if (ev->cur && !ev_compat_builtin(buf) && !ev_compat_builtin_prefix(buf) && !(strcmp(buf, "torch.cuda") == 0))
      ev_fail(ev, loc, "unsupported: use of '%s' inside a kernel", obj->u.opaque.name);
    return tv_opaque(ev, buf);
  }
  case TV_BUFFER: {
    tc_buffer *b = obj->u.buf;
    if (strcmp(attr, "shape") == 0) {
      tc_val **v = EV_NEW_ARRAY(ev, tc_val *, b->ndim);
      for (int i = 0; i < b->ndim; i++) {
        int64_t c;
        v[i] = tc_expr_const_int(b->shape[i], &c) ? tv_int(ev, c) : tv_expr(ev, b->shape[i]);
      }
      return tv_tuple(ev, b->ndim, v);
    }
    if (strcmp(attr, "dtype") == 0) return tv_dtype(ev, b->dtype);
    if (strcmp(attr, "ndim") == 0) return tv_int(ev, b->ndim);
    if (strcmp(attr, "name") == 0) return tv_cstr(ev, b->name);
    if (strcmp(attr, "data") == 0) return obj; /* its storage: T.Tensor(shape, dtype, X.data) views it */
    break;
  }
  case TV_TENSOR_TYPE:
    if (strcmp(attr, "shape") == 0) return tv_tuple(ev, obj->u.tensor.ndim, obj->u.tensor.shape);
    if (strcmp(attr, "dtype") == 0) return tv_dtype(ev, obj->u.tensor.dt);
    break;
  case TV_EXPR:
    if (strcmp(attr, "dtype") == 0) return tv_dtype(ev, obj->u.e->dtype);
    break;
  case TV_ELEM:
    if (strcmp(attr, "dtype") == 0) return tv_dtype(ev, obj->u.elem.buf->dtype);
    break;
  case TV_DTYPE:
    if (strcmp(attr, "bits") == 0) return tv_int(ev, tc_dtype_bits(obj->u.dt));
    if (strcmp(attr, "lanes") == 0) return tv_int(ev, obj->u.dt.lanes);
    break;
  case TV_FUNC:
    if (strcmp(attr, "__name__") == 0) return tv_cstr(ev, obj->u.func->name);
    break;
  default: break;
  }
  tc_val *m = ev_method(ev, obj, attr, loc);
  if (m) return m;
  ev_fail(ev, loc, "'%s' object has no attribute '%s'", tv_kind_name(obj), attr);
}

static int64_t seq_index(tc_ev *ev, tc_val *idx, int64_t n, tc_loc loc, const char *what) {
  if (idx->kind != TV_INT && idx->kind != TV_BOOL) {
    if (ev_is_runtime(idx))
      ev_fail(ev, loc, "%s indices must be known at compile time, but this one %s", what, ev_runtime_reason(ev, idx));
    ev_fail(ev, loc, "%s indices must be integers, not %s", what, tv_kind_name(idx));
  }
  int64_t i = as_i(idx);
  if (i < 0) i += n;
  if (i < 0 || i >= n) ev_fail(ev, loc, "%s index out of range", what);
  return i;
}

static void slice_bounds(tc_ev *ev, tc_val *s, int64_t n, int64_t *lo, int64_t *hi, int64_t *step, tc_loc loc) {
  tc_val *vs[3] = {s->u.slice.lo, s->u.slice.hi, s->u.slice.step};
  int64_t v[3];
  bool given[3];
  for (int i = 0; i < 3; i++) {
    given[i] = vs[i] && vs[i]->kind != TV_NONE;
    if (given[i]) {
      if (vs[i]->kind != TV_INT && vs[i]->kind != TV_BOOL) ev_fail(ev, loc, "slice indices must be integers");
      v[i] = as_i(vs[i]);
    }
  }
  *step = given[2] ? v[2] : 1;
  if (*step == 0) ev_fail(ev, loc, "slice step cannot be zero");
  if (*step > 0) {
    *lo = given[0] ? (v[0] < 0 ? (v[0] + n < 0 ? 0 : v[0] + n) : (v[0] > n ? n : v[0])) : 0;
    *hi = given[1] ? (v[1] < 0 ? (v[1] + n < 0 ? 0 : v[1] + n) : (v[1] > n ? n : v[1])) : n;
  } else {
    *lo = given[0] ? (v[0] < 0 ? (v[0] + n < -1 ? -1 : v[0] + n) : (v[0] >= n ? n - 1 : v[0])) : n - 1;
    *hi = given[1] ? (v[1] < 0 ? (v[1] + n < -1 ? -1 : v[1] + n) : (v[1] >= n ? n - 1 : v[1])) : -1;
  }
}

/* A region or element of buffer b from an index value (one per dimension). */
static tc_val *buffer_subscript(tc_ev *ev, tc_buffer *b, tc_val *index, const tc_ast *index_node, tc_loc loc) {
  tc_val **items = &index;
  int n = 1;
  const tc_ast *const *nodes = &index_node;
  if (index->kind == TV_TUPLE) {
    items = index->u.seq.v;
    n = index->u.seq.n;
    if (index_node && index_node->kind == TC_AST_TUPLE && index_node->list.n == n)
      nodes = (const tc_ast *const *)index_node->list.v;
    else
      nodes = NULL;
  }
  if (n > b->ndim)
    ev_fail(ev, loc, "buffer '%s' has %d dimension%s but %d indices were given", b->name, b->ndim, b->ndim == 1 ? "" : "s", n);
  bool any_slice = n < b->ndim;
  for (int i = 0; i < n; i++)
    if (items[i]->kind == TV_SLICE) any_slice = true;
  if (!any_slice) {
    tc_val *v = tv_new(ev, TV_ELEM);
    v->u.elem.buf = b;
    v->u.elem.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
      tc_loc l = nodes && nodes[i] ? nodes[i]->loc : loc;
      v->u.elem.idx[i] = ev_index_expr(ev, items[i], l);
      int64_t c, dim;
      if (b->scope != TC_SCOPE_GLOBAL && tc_expr_const_int(v->u.elem.idx[i], &c) &&
          tc_expr_const_int(b->shape[i], &dim) && (c < 0 || c >= dim))
        ev_fail(ev, l, "index %lld is out of bounds for dimension %d of '%s' (size %lld)", (long long)c, i, b->name,
                (long long)dim);
    }
    return v;
  }
  tc_val *v = tv_new(ev, TV_REGION);
  v->u.region.buf = b;
  v->u.region.r = TC_NEW_ARRAY(ev->ir, tc_range, b->ndim);
  v->u.region.point = EV_NEW_ARRAY(ev, bool, b->ndim);
  for (int i = 0; i < b->ndim; i++) {
    tc_val *it = i < n ? items[i] : NULL;
    tc_loc l = nodes && i < n && nodes[i] ? nodes[i]->loc : loc;
    int64_t dim = -1;
    bool dim_const = tc_expr_const_int(b->shape[i], &dim);
    if (it && it->kind != TV_SLICE) {
      v->u.region.r[i].start = ev_index_expr(ev, it, l);
      v->u.region.r[i].extent = 1;
      v->u.region.point[i] = true;
      continue;
    }
    tc_val *lo = it ? it->u.slice.lo : NULL, *hi = it ? it->u.slice.hi : NULL, *st = it ? it->u.slice.step : NULL;
    if (st && st->kind != TV_NONE && !(st->kind == TV_INT && st->u.i == 1))
      ev_unsupported(ev, l, "a slice step other than 1 in a buffer region");
    tc_expr *start = lo && lo->kind != TV_NONE ? ev_index_expr(ev, lo, l) : tc_ir_int(ev->ir, 0, tc_index_dtype(), l);
    int64_t extent;
    if (!hi || hi->kind == TV_NONE) {
      int64_t s0;
      if (!dim_const)
        ev_fail(ev, l, "the end of this slice must be given: dimension %d of '%s' has no size known at compile time", i,
                b->name);
      if (!tc_expr_const_int(start, &s0))
        ev_fail(ev, l, "this slice of '%s' needs an end: its start is not known at compile time", b->name);
      extent = dim - s0;
    } else {
      tc_expr *stop = ev_index_expr(ev, hi, l);
      if (!ev_const_diff(stop, start, &extent) && !ev_const_diff_lets(stop, start, &extent))
        ev_fail(ev, l, "the extent of the slice '%s' must be known at compile time (the end minus the start does not "
                "fold to a constant)",
                nodes && nodes[i] ? ev_node_text(ev, nodes[i]) : "?");
    }
    if (extent <= 0) ev_fail(ev, l, "the slice of '%s' in dimension %d is empty (extent %lld)", b->name, i, (long long)extent);
    int64_t s0;
    if (b->scope != TC_SCOPE_GLOBAL && dim_const && tc_expr_const_int(start, &s0) && (s0 < 0 || s0 + extent > dim))
      ev_fail(ev, l, "the slice [%lld:%lld] is out of bounds for dimension %d of '%s' (size %lld)", (long long)s0,
              (long long)(s0 + extent), i, b->name, (long long)dim);
    v->u.region.r[i].start = start;
    v->u.region.r[i].extent = extent;
  }
  return v;
}

tc_val *ev_subscript(tc_ev *ev, tc_val *obj, tc_val *index, const tc_ast *index_node, tc_loc loc) {
  switch (obj->kind) {
  case TV_BUFFER: return buffer_subscript(ev, obj->u.buf, index, index_node, loc);
  case TV_TUPLE:
  case TV_LIST:
    if (index->kind == TV_SLICE) {
      int64_t lo, hi, step;
      slice_bounds(ev, index, obj->u.seq.n, &lo, &hi, &step, loc);
      tc_val *r = obj->kind == TV_TUPLE ? tv_tuple(ev, 0, NULL) : tv_list(ev, 0, NULL);
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) tv_list_push(ev, r, obj->u.seq.v[i]);
      return r;
    }
    return obj->u.seq.v[seq_index(ev, index, obj->u.seq.n, loc, obj->kind == TV_TUPLE ? "tuple" : "list")];
  case TV_STR:
    if (index->kind == TV_SLICE) {
      int64_t lo, hi, step;
      slice_bounds(ev, index, (int64_t)obj->u.str.n, &lo, &hi, &step, loc);
      tc_strbuf sb;
      tc_sb_init_arena(&sb, &ev->tmp);
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) tc_sb_putc(&sb, obj->u.str.s[i]);
      tc_val *r = tv_str(ev, tc_sb_cstr(&sb), sb.len);
      tc_sb_free(&sb);
      return r;
    }
    return tv_str(ev, obj->u.str.s + seq_index(ev, index, (int64_t)obj->u.str.n, loc, "string"), 1);
  case TV_DICT:
    for (int i = 0; i < obj->u.dict.n; i++)
      if (ev_equal(ev, obj->u.dict.k[i], index)) return obj->u.dict.v[i];
    ev_fail(ev, loc, "KeyError: %s", tv_to_cstr(ev, index, true));
  case TV_BUILTIN: { /* T.Tensor[(M, K), dtype] */
    tc_args a = {0};
    a.call = index_node;
    if (index->kind == TV_TUPLE) {
      a.n = index->u.seq.n;
      a.v = index->u.seq.v;
    } else {
      a.n = 1;
      a.v = &index;
    }
    a.node = EV_NEW_ARRAY(ev, const tc_ast *, a.n);
    return ev_call_value(ev, obj, &a, loc);
  }
  case TV_ELEM:
  case TV_EXPR: ev_fail(ev, loc, "a scalar value cannot be indexed");
  case TV_OPAQUE:
    if (ev->cur) ev_fail(ev, loc, "unsupported: use of '%s' inside a kernel", obj->u.opaque.name);
    return obj;
  default: ev_fail(ev, loc, "'%s' object is not subscriptable", tv_kind_name(obj));
  }
}

/* ---------------------------------------------------------------- f-strings */

/* Evaluate an f-string field; an error inside is reported at the f-string itself (the
 * field's own locations point into a scratch source). */
static tc_val *eval_caught(tc_ev *ev, const tc_ast *expr, const tc_ast *node) {
  jmp_buf saved;
  memcpy(&saved, &ev->fail_jmp, sizeof saved);
  if (setjmp(ev->fail_jmp)) {
    memcpy(&ev->fail_jmp, &saved, sizeof saved);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", ev->err ? ev->err->message : "error");
    tc_error_clear(ev->err);
    ev_fail(ev, node->loc, "%s (in an f-string)", msg);
  }
  tc_val *v = ev_expr(ev, expr);
  memcpy(&ev->fail_jmp, &saved, sizeof saved);
  return v;
}

static void fstring_field(tc_ev *ev, tc_strbuf *sb, const char *text, size_t n, const tc_ast *node) {
  /* split expr [!conv] [:spec] at the top level */
  int depth = 0;
  size_t ex_end = n, conv_at = 0, spec_at = n;
  char quote = 0;
  for (size_t i = 0; i < n; i++) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') depth++;
    else if (c == ')' || c == ']' || c == '}') depth--;
    else if (depth == 0 && c == '!' && i + 1 < n && text[i + 1] != '=' && ex_end == n) {
      ex_end = i;
      conv_at = i + 1;
    } else if (depth == 0 && c == ':') {
      if (ex_end == n) ex_end = i;
      spec_at = i + 1;
      break;
    }
  }
  bool self_doc = ex_end > 0 && text[ex_end - 1] == '=' && (ex_end < 2 || !strchr("=!<>", text[ex_end - 2]));
  size_t exn = self_doc ? ex_end - 1 : ex_end;
  tc_source *src = EV_NEW(ev, tc_source);
  char *code = tc_arena_printf(&ev->tmp, "(%.*s)\n", (int)exn, text);
  src->name = ev->src ? ev->src->name : "<f-string>";
  src->text = code;
  src->len = strlen(code);
  tc_token_array toks;
  tilec_error perr;
  tc_error_clear(&perr);
  tc_ast *mod = NULL;
  if (tc_lex(&ev->tmp, src, &toks, &perr)) mod = tc_parse(&ev->tmp, src, &toks, &perr);
  if (!mod || mod->list.n != 1 || mod->list.v[0]->kind != TC_AST_EXPR_STMT)
    ev_fail(ev, node->loc, "invalid expression in f-string: '%.*s'", (int)exn, text);
  tc_val *v = eval_caught(ev, mod->list.v[0]->a, node);
  if (self_doc) tc_sb_putn(sb, text, ex_end);
  char conv = conv_at ? text[conv_at] : (self_doc ? 'r' : 's');
  size_t specn = spec_at < n ? n - spec_at : 0;
  if (specn == 0) {
    tv_format(ev, sb, v, conv == 'r');
    return;
  }
  char spec[40] = "%";
  size_t k = 1;
  const char *sp = text + spec_at;
  char type = sp[specn - 1];
  size_t body = strchr("dfeEgGxXs%", type) ? specn - 1 : specn;
  if (!strchr("dfeEgGxXs%", type)) type = 0;
  for (size_t i = 0; i < body && k < 30; i++) {
    char c = sp[i];
    if (c == '>') continue; /* right alignment is printf's default */
    if (c == '<') c = '-';
    if (c == ',' || c == '_' || c == '^' || c == '=') continue;
    spec[k++] = c;
  }
  spec[k] = 0;
  if (v->kind == TV_INT || v->kind == TV_BOOL) {
    if (type == 0 || type == 'd' || type == 'x' || type == 'X') {
      snprintf(spec + k, sizeof spec - k, "ll%c", type ? type : 'd');
      tc_sb_printf(sb, spec, (long long)as_i(v));
      return;
    }
  }
  if (is_num(v) && type && strchr("feEgG%", type)) {
    double f = as_f(v);
    if (type == '%') f *= 100;
    snprintf(spec + k, sizeof spec - k, "%c", type == '%' ? 'f' : type);
    tc_sb_printf(sb, spec, f);
    if (type == '%') tc_sb_putc(sb, '%');
    return;
  }
  snprintf(spec + k, sizeof spec - k, "s");
  tc_sb_printf(sb, spec, tv_to_cstr(ev, v, conv == 'r'));
}

tc_loc ev_kw_loc(const tc_args *a, int i, tc_loc fallback) {
  if (!a->call || i < 0 || i >= a->nkw) return fallback;
  for (int j = 0; j < a->call->list2.n; j++) {
    const tc_ast *k = a->call->list2.v[j];
    if (k && k->kind == TC_AST_KEYWORD && k->str && strcmp(k->str, a->kw[i]) == 0) return k->loc;
  }
  return fallback;
}

static tc_val *eval_fstring(tc_ev *ev, const tc_ast *e) {
  tc_strbuf sb;
  tc_sb_init_arena(&sb, &ev->tmp);
  const char *s = e->str ? e->str : "";
  size_t n = e->str ? (e->str_len ? e->str_len : strlen(s)) : 0;
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c == '{' && i + 1 < n && s[i + 1] == '{') {
      tc_sb_putc(&sb, '{');
      i += 2;
    } else if (c == '}' && i + 1 < n && s[i + 1] == '}') {
      tc_sb_putc(&sb, '}');
      i += 2;
    } else if (c == '{') {
      int depth = 1;
      size_t j = i + 1;
      char quote = 0;
      for (; j < n && depth > 0; j++) {
        if (quote) {
          if (s[j] == quote) quote = 0;
        } else if (s[j] == '\'' || s[j] == '"') quote = s[j];
        else if (s[j] == '{') depth++;
        else if (s[j] == '}') depth--;
      }
      if (depth) {
        tc_sb_free(&sb);
        ev_fail(ev, e->loc, "f-string: expecting '}'");
      }
      fstring_field(ev, &sb, s + i + 1, j - i - 2, e);
      i = j;
    } else {
      tc_sb_putc(&sb, c);
      i++;
    }
  }
  tc_val *r = tv_str(ev, tc_sb_cstr(&sb), sb.len);
  tc_sb_free(&sb);
  return r;
}

/* ---------------------------------------------------------------- comprehensions */

typedef struct comp_ctx {
  const tc_ast *e;
  int clause;
  tc_val *out;
} comp_ctx;

static void comp_run(tc_ev *ev, comp_ctx *c);
static bool comp_item(tc_ev *ev, tc_val *item, void *ctx) {
  comp_ctx *c = ctx;
  const tc_ast *cl = c->e->list.v[c->clause];
  ev_assign(ev, cl->a, item, cl->loc);
  for (int i = 0; i < cl->list.n; i++) {
    tc_val *cond = ev_expr(ev, cl->list.v[i]);
    if (!ev_truth(ev, cond, cl->list.v[i]->loc)) return true;
  }
  c->clause++;
  comp_run(ev, c);
  c->clause--;
  return true;
}

static void comp_run(tc_ev *ev, comp_ctx *c) {
  if (c->clause == c->e->list.n) {
    if (c->out->kind == TV_DICT) {
      tc_val *k = ev_expr(ev, c->e->a), *v = ev_expr(ev, c->e->b);
      tc_val *d = c->out;
      for (int i = 0; i < d->u.dict.n; i++)
        if (ev_equal(ev, d->u.dict.k[i], k)) {
          d->u.dict.v[i] = v;
          return;
        }
      int n = d->u.dict.n;
      d->u.dict.k = tc_arena_grow(&ev->tmp, d->u.dict.k, sizeof(tc_val *) * (size_t)n, sizeof(tc_val *) * (size_t)(n + 1));
      d->u.dict.v = tc_arena_grow(&ev->tmp, d->u.dict.v, sizeof(tc_val *) * (size_t)n, sizeof(tc_val *) * (size_t)(n + 1));
      d->u.dict.k[n] = k;
      d->u.dict.v[n] = v;
      d->u.dict.n++;
    } else {
      tv_list_push(ev, c->out, ev_expr(ev, c->e->a));
    }
    return;
  }
  const tc_ast *cl = c->e->list.v[c->clause];
  ev_iterate(ev, ev_expr(ev, cl->b), cl->b->loc, comp_item, c);
}

static tc_val *eval_comprehension(tc_ev *ev, const tc_ast *e) {
  if (e->list.n == 0) ev_fail(ev, e->loc, "empty comprehension");
  comp_ctx c = {e, 0, NULL};
  c.out = (e->op == TC_P_LBRACE && e->b) ? tv_new(ev, TV_DICT) : tv_list(ev, 0, NULL);
  tc_env *saved = ev->scope;
  ev->scope = scope_new(ev, saved, false);
  comp_run(ev, &c);
  ev->scope = saved;
  if (e->op == TC_P_LPAREN) c.out->kind = TV_TUPLE; /* a generator: consumed at once */
  return c.out;
}

/* ---------------------------------------------------------------- expressions */

static tc_val *eval_seq_literal(tc_ev *ev, const tc_ast *e, tv_kind kind) {
  tc_val *l = tv_list(ev, 0, NULL);
  for (int i = 0; i < e->list.n; i++) {
    const tc_ast *x = e->list.v[i];
    if (x->kind == TC_AST_STARRED) {
      tc_val *items = ev_to_list(ev, ev_expr(ev, x->a), x->loc);
      for (int j = 0; j < items->u.seq.n; j++) tv_list_push(ev, l, items->u.seq.v[j]);
    } else {
      tv_list_push(ev, l, ev_expr(ev, x));
    }
  }
  l->kind = kind;
  return l;
}

static tc_val *eval_boolop(tc_ev *ev, const tc_ast *e) {
  bool is_and = e->op == TC_KW_AND;
  tc_expr *acc = NULL;
  tc_loc loc = e->loc;
  for (int i = 0; i < e->list.n; i++) {
    tc_val *v = ev_expr(ev, e->list.v[i]);
    if (ev_is_runtime(v)) {
      tc_expr *b = ev_to_bool_expr(ev, v, e->list.v[i]->loc);
      acc = acc ? tc_ir_binary(ev->ir, is_and ? TC_OP_AND : TC_OP_OR, acc, b, loc) : b;
      continue;
    }
    bool t = ev_truth(ev, v, e->list.v[i]->loc);
    if (!acc) {
      if (is_and ? !t : t) return v;
      if (i == e->list.n - 1) return v;
    } else {
      if (is_and ? !t : t) return tv_bool(ev, t); /* rt and False == False; rt or True == True */
    }
  }
  return acc ? tv_expr(ev, acc) : tv_none(ev);
}

static tc_val *eval_compare(tc_ev *ev, const tc_ast *e) {
  tc_val *left = ev_expr(ev, e->a);
  tc_expr *acc = NULL;
  tc_val *result = NULL;
  for (int i = 0; i < e->list.n; i++) {
    tc_val *right = ev_expr(ev, e->list.v[i]);
    tc_val *r = ev_compare(ev, e->ops[i], left, right, e->list.v[i]->loc);
    if (ev_is_runtime(r)) {
      acc = acc ? tc_ir_binary(ev->ir, TC_OP_AND, acc, r->u.e, e->loc) : r->u.e;
    } else if (!ev_truth(ev, r, e->loc)) {
      return tv_bool(ev, false);
    } else {
      result = r;
    }
    left = right;
  }
  if (acc) return tv_expr(ev, acc);
  return result ? result : tv_bool(ev, true);
}

static tc_val *eval_unary(tc_ev *ev, const tc_ast *e) {
  tc_val *x = ev_expr(ev, e->a);
  if (e->op == TC_AST_NOT_OP) {
    if (ev_is_runtime(x)) return tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_NOT, ev_to_bool_expr(ev, x, e->loc), e->loc));
    return tv_bool(ev, !ev_truth(ev, x, e->loc));
  }
  if (ev_is_runtime(x)) return ev_ir_unary(ev, e->op, x, e->loc);
  if (x->kind == TV_INT || x->kind == TV_BOOL) {
    int64_t i = as_i(x);
    if (e->op == TC_P_PLUS) return tv_int(ev, i);
    if (e->op == TC_P_MINUS) {
      if (i == INT64_MIN) ev_fail(ev, e->loc, "integer overflow: -(%lld) does not fit in 64 bits", (long long)i);
      return tv_int(ev, -i);
    }
    if (e->op == TC_P_TILDE) return tv_int(ev, ~i);
  }
  if (x->kind == TV_FLOAT) {
    if (e->op == TC_P_PLUS) return x;
    if (e->op == TC_P_MINUS) return tv_float(ev, -x->u.f);
  }
  ev_fail(ev, e->loc, "bad operand type for unary %s: '%s'", op_spelling(e->op), tv_kind_name(x));
}

/* A flat chain `a + b - c + ...` parses into a left-deep tree as deep as the chain is long. Its
 * left spine is walked with a loop, leftmost operand first and each right operand in order (as
 * Python evaluates it), so the C stack stays flat however many terms there are; only genuine
 * nesting (parentheses, right operands) counts toward the depth limit. */
static tc_val *eval_binop_chain(tc_ev *ev, const tc_ast *e) {
  int n = 0;
  for (const tc_ast *x = e; x->kind == TC_AST_BINOP; x = x->a) n++;
  const tc_ast **spine = EV_NEW_ARRAY(ev, const tc_ast *, n); /* spine[0]: the innermost BINOP */
  int i = n;
  for (const tc_ast *x = e; x->kind == TC_AST_BINOP; x = x->a) spine[--i] = x;
  tc_val *acc = ev_expr(ev, spine[0]->a);
  for (i = 0; i < n; i++) {
    tc_val *y = ev_expr(ev, spine[i]->b);
    acc = ev_binop(ev, spine[i]->op, acc, y, spine[i]->loc);
  }
  return acc;
}

tc_val *ev_expr(tc_ev *ev, const tc_ast *e) {
  if (++ev->expr_depth > 400) ev_fail(ev, e->loc, "expression nested too deeply");
  tc_val *r;
  switch (e->kind) {
  case TC_AST_NAME: r = ev_lookup(ev, e->str, e->loc); break;
  case TC_AST_INT:
    if (e->flag) ev_fail(ev, e->loc, "integer literal does not fit in 64 bits");
    r = tv_int(ev, e->ival);
    break;
  case TC_AST_FLOAT: r = tv_float(ev, e->fval); break;
  case TC_AST_STRING:
    if (e->flag & TC_STR_BYTES) ev_unsupported(ev, e->loc, "bytes literals");
    r = tv_str(ev, e->str ? e->str : "", e->str ? (e->str_len ? e->str_len : strlen(e->str)) : 0);
    break;
  case TC_AST_FSTRING: r = eval_fstring(ev, e); break;
  case TC_AST_BOOL: r = tv_bool(ev, e->ival != 0); break;
  case TC_AST_NONE: r = tv_none(ev); break;
  case TC_AST_IMAG: ev_unsupported(ev, e->loc, "complex numbers");
  case TC_AST_ELLIPSIS: ev_unsupported(ev, e->loc, "'...' here");
  case TC_AST_ATTRIBUTE: r = ev_getattr(ev, ev_expr(ev, e->a), e->str, e->loc); break;
  case TC_AST_SUBSCRIPT: {
    tc_val *obj = ev_expr(ev, e->a);
    r = ev_subscript(ev, obj, ev_expr(ev, e->b), e->b, e->loc);
    break;
  }
  case TC_AST_SLICE:
    r = tv_new(ev, TV_SLICE);
    r->u.slice.lo = e->a ? ev_expr(ev, e->a) : NULL;
    r->u.slice.hi = e->b ? ev_expr(ev, e->b) : NULL;
    r->u.slice.step = e->c ? ev_expr(ev, e->c) : NULL;
    break;
  case TC_AST_CALL: r = eval_call(ev, e); break;
  case TC_AST_BINOP: r = eval_binop_chain(ev, e); break;
  case TC_AST_UNARYOP: r = eval_unary(ev, e); break;
  case TC_AST_BOOLOP: r = eval_boolop(ev, e); break;
  case TC_AST_COMPARE: r = eval_compare(ev, e); break;
  case TC_AST_IFEXP: {
    tc_val *t = ev_expr(ev, e->a);
    if (ev_is_runtime(t)) {
      tc_val *x = ev_expr(ev, e->b), *y = ev_expr(ev, e->c);
      r = ev_ir_select(ev, t, x, y, e->loc);
    } else {
      r = ev_expr(ev, ev_truth(ev, t, e->a->loc) ? e->b : e->c);
    }
    break;
  }
  case TC_AST_TUPLE: r = eval_seq_literal(ev, e, TV_TUPLE); break;
  case TC_AST_LIST: r = eval_seq_literal(ev, e, TV_LIST); break;
  case TC_AST_SET: r = eval_seq_literal(ev, e, TV_LIST); break;
  case TC_AST_DICT: {
    r = tv_new(ev, TV_DICT);
    int n = e->list.n;
    r->u.dict.k = EV_NEW_ARRAY(ev, tc_val *, n);
    r->u.dict.v = EV_NEW_ARRAY(ev, tc_val *, n);
    for (int i = 0; i < n; i++) {
      if (!e->list.v[i]) ev_unsupported(ev, e->loc, "'**' in a dict literal");
      tc_val *k = ev_expr(ev, e->list.v[i]), *v = ev_expr(ev, e->list2.v[i]);
      int j;
      for (j = 0; j < r->u.dict.n; j++)
        if (ev_equal(ev, r->u.dict.k[j], k)) break;
      r->u.dict.k[j] = k;
      r->u.dict.v[j] = v;
      if (j == r->u.dict.n) r->u.dict.n++;
    }
    break;
  }
  case TC_AST_LAMBDA:
    if (ev->cur) ev_unsupported(ev, e->loc, "lambda in a kernel");
    r = tv_new(ev, TV_FUNC);
    r->u.func = ev_make_func(ev, e);
    break;
  case TC_AST_COMPREHENSION: r = eval_comprehension(ev, e); break;
  case TC_AST_NAMED_EXPR:
    r = ev_expr(ev, e->b);
    ev_assign(ev, e->a, r, e->loc);
    break;
  case TC_AST_STARRED: ev_fail(ev, e->loc, "can't use starred expression here");
  case TC_AST_AWAIT: ev_unsupported(ev, e->loc, "'await'");
  case TC_AST_YIELD: ev_unsupported(ev, e->loc, "'yield'");
  default: ev_fail(ev, e->loc, "unsupported expression (%s)", tc_ast_kind_name(e->kind));
  }
  ev->expr_depth--;
  return r;
}
