/* ir.c: constructors and small queries for the tile IR. */
#include "ir/ir.h"

#include "analysis/analysis.h"

#include <string.h>

static const char *const expr_op_names[] = {
#define TC_EXPR_OP(id, spelling, arity, cls) spelling,
#include "ir/ops.def"
};
static const int expr_op_arity[] = {
#define TC_EXPR_OP(id, spelling, arity, cls) arity,
#include "ir/ops.def"
};
static const tc_op_class expr_op_class[] = {
#define TC_EXPR_OP(id, spelling, arity, cls) TC_CLS_##cls,
#include "ir/ops.def"
};
static const char *const stmt_names[] = {
#define TC_STMT_OP(id, spelling) spelling,
#include "ir/ops.def"
};

const char *tc_expr_op_name(tc_expr_op op) { return op < TC_OP_COUNT ? expr_op_names[op] : "?"; }
int tc_expr_op_arity(tc_expr_op op) { return op < TC_OP_COUNT ? expr_op_arity[op] : 0; }
tc_op_class tc_expr_op_class(tc_expr_op op) { return op < TC_OP_COUNT ? expr_op_class[op] : TC_CLS_SPECIAL; }
const char *tc_stmt_kind_name(tc_stmt_kind k) { return k < TC_ST_COUNT ? stmt_names[k] : "?"; }

const char *tc_scope_name(tc_scope s) {
  static const char *const names[] = {"global", "shared", "fragment", "local", "var",
                                      "metal.simdgroup", "metal.cooperative_tensor"};
  return s < TC_SCOPE_COUNT ? names[s] : "?";
}

const char *tc_loop_kind_name(tc_loop_kind k) {
  static const char *const names[TC_LOOP_KIND_COUNT] = {"serial", "parallel", "pipelined", "unroll", "vectorized", "thread_binding"};
  return (unsigned)k < TC_LOOP_KIND_COUNT ? names[k] : "?";
}

const char *tc_eviction_policy_name(tc_eviction_policy p) {
  static const char *const names[] = {"evict_normal", "evict_first", "evict_last"};
  return (unsigned)p < 3 ? names[p] : "?";
}

const char *tc_barrier_scope_name(tc_barrier_scope s) {
  static const char *const names[] = {"block", "warp"};
  return (unsigned)s < 2 ? names[s] : "?";
}

const char *tc_swizzle_order_name(tc_swizzle_order o) {
  static const char *const names[] = {"row", "column", "mlx"};
  return (unsigned)o < 3 ? names[o] : "?";
}

static const tc_intrinsic_info intrinsics[] = {
#define TC_INTRINSIC(id, name, kind, arity, targets) {name, TC_INTRIN_KIND_##kind, arity, targets},
#include "ir/intrinsics.def"
};

const tc_intrinsic_info *tc_intrinsic_lookup(const char *name, tc_intrinsic_id *id) {
  if (!name) return NULL;
  for (int i = 0; i < TC_INTRIN_COUNT; i++)
    if (strcmp(intrinsics[i].name, name) == 0) {
      if (id) *id = (tc_intrinsic_id)i;
      return &intrinsics[i];
    }
  return NULL;
}

const char *tc_intrinsic_construct(const char *name) {
  static const char *const map[][2] = {{"philox_rand", "T.rng_rand"}, {"reinterpret", "T.reinterpret"}};
  for (size_t i = 0; name && i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i][0], name)) return map[i][1];
  return NULL;
}

const char *tc_reduce_kind_name(tc_reduce_kind k) {
  static const char *const names[] = {"sum", "max", "min", "abssum", "absmax"};
  return (unsigned)k < 5 ? names[k] : "?";
}

const char *tc_gemm_policy_name(tc_gemm_policy p) {
  static const char *const names[] = {"Square", "FullRow", "FullCol"};
  return (unsigned)p < 3 ? names[p] : "?";
}

tc_dtype tc_index_dtype(void) { return tc_dt(TC_DT_INT32); }

static tc_expr *new_expr(tc_arena *a, tc_expr_op op, tc_dtype dt, tc_loc loc) {
  tc_expr *e = TC_NEW(a, tc_expr);
  e->op = op;
  e->dtype = dt;
  e->loc = loc;
  return e;
}

tc_expr *tc_ir_int(tc_arena *a, int64_t v, tc_dtype dt, tc_loc loc) {
  tc_expr *e = new_expr(a, TC_OP_CONST_INT, dt, loc);
  e->ival = v;
  return e;
}

tc_expr *tc_ir_float(tc_arena *a, double v, tc_dtype dt, tc_loc loc) {
  tc_expr *e = new_expr(a, TC_OP_CONST_FLOAT, dt, loc);
  e->fval = v;
  return e;
}

tc_expr *tc_ir_bool(tc_arena *a, bool v, tc_loc loc) { return tc_ir_int(a, v ? 1 : 0, tc_dt(TC_DT_BOOL), loc); }

tc_expr *tc_ir_var_ref(tc_arena *a, tc_var *v, tc_loc loc) {
  tc_expr *e = new_expr(a, TC_OP_VAR, v->dtype, loc);
  e->var = v;
  return e;
}

tc_expr *tc_ir_load(tc_arena *a, tc_buffer *b, int nidx, tc_expr **idx, tc_loc loc) {
  tc_expr *e = new_expr(a, TC_OP_LOAD, b->dtype, loc);
  e->buf = b;
  e->nargs = nidx;
  e->args = TC_NEW_ARRAY(a, tc_expr *, nidx > 0 ? nidx : 1);
  if (nidx > 0) memcpy(e->args, idx, sizeof(tc_expr *) * (size_t)nidx);
  return e;
}

static tc_expr *with_args(tc_arena *a, tc_expr *e, int n, tc_expr *x, tc_expr *y, tc_expr *z) {
  e->nargs = n;
  e->args = TC_NEW_ARRAY(a, tc_expr *, n);
  tc_expr *v[3] = {x, y, z};
  for (int i = 0; i < n; i++) e->args[i] = v[i];
  return e;
}

tc_expr *tc_ir_cast(tc_arena *a, tc_dtype to, tc_expr *x, tc_loc loc) {
  return with_args(a, new_expr(a, TC_OP_CAST, to, loc), 1, x, NULL, NULL);
}

static tc_dtype result_dtype(tc_expr_op op, tc_expr *first) {
  tc_op_class c = tc_expr_op_class(op);
  if (c == TC_CLS_CMP || c == TC_CLS_LOGIC) return tc_dt(TC_DT_BOOL);
  return first->dtype;
}

tc_expr *tc_ir_unary(tc_arena *a, tc_expr_op op, tc_expr *x, tc_loc loc) {
  return with_args(a, new_expr(a, op, result_dtype(op, x), loc), 1, x, NULL, NULL);
}

tc_expr *tc_ir_binary(tc_arena *a, tc_expr_op op, tc_expr *x, tc_expr *y, tc_loc loc) {
  return with_args(a, new_expr(a, op, result_dtype(op, x), loc), 2, x, y, NULL);
}

tc_expr *tc_ir_select(tc_arena *a, tc_expr *c, tc_expr *t, tc_expr *f, tc_loc loc) {
  return with_args(a, new_expr(a, TC_OP_SELECT, t->dtype, loc), 3, c, t, f);
}

static tc_expr **copy_args(tc_arena *a, int n, tc_expr **args) {
  tc_expr **v = TC_NEW_ARRAY(a, tc_expr *, n > 0 ? n : 1);
  if (n > 0) memcpy(v, args, sizeof(tc_expr *) * (size_t)n);
  return v;
}

tc_expr *tc_ir_call(tc_arena *a, const char *callee, tc_dtype dt, int nargs, tc_expr **args, tc_loc loc) {
  tc_expr *e = new_expr(a, TC_OP_CALL, dt, loc);
  e->callee = callee;
  e->nargs = nargs;
  e->args = copy_args(a, nargs, args);
  return e;
}

tc_expr *tc_ir_address_of(tc_arena *a, tc_buffer *b, int nidx, tc_expr **idx, tc_loc loc) {
  tc_expr *e = new_expr(a, TC_OP_ADDRESS_OF, tc_dt(TC_DT_UINT64), loc);
  e->buf = b;
  e->nargs = nidx;
  e->args = copy_args(a, nidx, idx);
  return e;
}

tc_stmt *tc_ir_intrinsic_stmt(tc_arena *a, const char *name, int nargs, tc_expr **args, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(a, TC_ST_INTRINSIC, loc);
  s->u.intrinsic.name = name;
  s->u.intrinsic.nargs = nargs;
  s->u.intrinsic.args = copy_args(a, nargs, args);
  return s;
}

tc_var *tc_ir_new_var(tc_arena *a, tc_kernel_ir *k, const char *name, tc_dtype dt, tc_var_kind kind, tc_loc loc) {
  tc_var *v = TC_NEW(a, tc_var);
  v->name = name;
  v->dtype = dt;
  v->kind = kind;
  v->id = k ? k->next_id++ : 0;
  v->loc = loc;
  return v;
}

tc_buffer *tc_ir_new_buffer(tc_arena *a, tc_kernel_ir *k, const char *name, tc_dtype dt, tc_scope scope,
                            int ndim, tc_expr **shape, tc_loc loc) {
  tc_buffer *b = TC_NEW(a, tc_buffer);
  b->name = name;
  b->dtype = dt;
  b->scope = scope;
  b->ndim = ndim;
  b->shape = TC_NEW_ARRAY(a, tc_expr *, ndim > 0 ? ndim : 1);
  if (ndim > 0) memcpy(b->shape, shape, sizeof(tc_expr *) * (size_t)ndim);
  b->id = k ? k->next_id++ : 0;
  b->param_index = -1;
  b->loc = loc;
  return b;
}

tc_stmt *tc_ir_stmt(tc_arena *a, tc_stmt_kind kind, tc_loc loc) {
  tc_stmt *s = TC_NEW(a, tc_stmt);
  s->kind = kind;
  s->loc = loc;
  return s;
}

tc_stmt *tc_ir_if_then(tc_arena *a, tc_expr *cond, tc_stmt *then_s, tc_loc loc) {
  if (!cond) return then_s;
  tc_stmt *s = tc_ir_stmt(a, TC_ST_IF, loc);
  s->u.if_.cond = cond;
  s->u.if_.then_s = then_s;
  return s;
}

tc_stmt *tc_ir_seq(tc_arena *a, int n, tc_stmt **items, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(a, TC_ST_SEQ, loc);
  s->u.seq.n = n;
  s->u.seq.items = TC_NEW_ARRAY(a, tc_stmt *, n > 0 ? n : 1);
  if (n > 0) memcpy(s->u.seq.items, items, sizeof(tc_stmt *) * (size_t)n);
  return s;
}

void tc_stmt_list_push(tc_arena *a, tc_stmt_list *l, tc_stmt *s) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    l->items = tc_arena_grow(a, l->items, sizeof(tc_stmt *) * (size_t)l->n, sizeof(tc_stmt *) * (size_t)cap);
    l->cap = cap;
  }
  l->items[l->n++] = s;
}

tc_stmt *tc_stmt_list_seq(tc_arena *a, tc_stmt_list *l, tc_loc loc) { return tc_ir_seq(a, l->n, l->items, loc); }

bool tc_expr_const_int(const tc_expr *e, int64_t *out) {
  if (!e || e->op != TC_OP_CONST_INT) return false;
  if (out) *out = e->ival;
  return true;
}

bool tc_buffer_const_shape(const tc_buffer *b, int64_t *out) {
  for (int i = 0; i < b->ndim; i++) {
    int64_t v;
    if (!tc_expr_const_int(b->shape[i], &v)) return false;
    if (out) out[i] = v;
  }
  return true;
}

int64_t tc_buffer_numel(const tc_buffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) {
    int64_t v;
    if (!tc_expr_const_int(b->shape[i], &v)) return -1;
    n *= v;
  }
  return n;
}

tc_region tc_ir_whole_region(tc_arena *a, tc_buffer *b) {
  tc_region r;
  r.buf = b;
  r.ndim = b->ndim;
  r.r = TC_NEW_ARRAY(a, tc_range, b->ndim > 0 ? b->ndim : 1);
  for (int i = 0; i < b->ndim; i++) {
    int64_t v = 0;
    tc_expr_const_int(b->shape[i], &v);
    r.r[i].start = tc_ir_int(a, 0, tc_index_dtype(), b->loc);
    r.r[i].extent = v;
  }
  return r;
}

int tc_region_squeezed(const tc_region *reg, int64_t *out, int cap) {
  int n = 0;
  for (int i = 0; i < reg->ndim; i++)
    if (reg->r[i].extent != 1) {
      if (n < cap) out[n] = reg->r[i].extent;
      n++;
    }
  return n;
}

int64_t tc_region_numel(const tc_region *reg) {
  int64_t n = 1;
  for (int i = 0; i < reg->ndim; i++) n *= reg->r[i].extent;
  return n;
}

tc_expr *tc_ir_clone_expr(tc_arena *a, const tc_expr *e) {
  if (!e) return NULL;
  tc_expr *c = TC_NEW(a, tc_expr);
  *c = *e;
  if (e->nargs > 0) {
    c->args = TC_NEW_ARRAY(a, tc_expr *, e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = tc_ir_clone_expr(a, e->args[i]);
  }
  return c;
}

static tc_region clone_region(tc_arena *a, tc_region r) {
  tc_region c = r;
  if (r.buf && r.ndim > 0) {
    c.r = TC_NEW_ARRAY(a, tc_range, r.ndim);
    for (int i = 0; i < r.ndim; i++) {
      c.r[i].start = tc_ir_clone_expr(a, r.r[i].start);
      c.r[i].extent = r.r[i].extent;
    }
  }
  return c;
}

static tc_expr **clone_exprs(tc_arena *a, tc_expr **v, int n) {
  if (n <= 0) return v;
  tc_expr **c = TC_NEW_ARRAY(a, tc_expr *, n);
  for (int i = 0; i < n; i++) c[i] = tc_ir_clone_expr(a, v[i]);
  return c;
}

tc_stmt *tc_ir_clone_stmt(tc_arena *a, const tc_stmt *s) {
  if (!s) return NULL;
  tc_stmt *c = TC_NEW(a, tc_stmt);
  *c = *s;
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(c, regs);
  for (int i = 0; i < nr; i++) *regs[i].region = clone_region(a, *regs[i].region);
  switch (s->kind) {
  case TC_ST_SEQ:
    c->u.seq.items = TC_NEW_ARRAY(a, tc_stmt *, s->u.seq.n > 0 ? s->u.seq.n : 1);
    for (int i = 0; i < s->u.seq.n; i++) c->u.seq.items[i] = tc_ir_clone_stmt(a, s->u.seq.items[i]);
    break;
  case TC_ST_FOR:
    c->u.loop.min = tc_ir_clone_expr(a, s->u.loop.min);
    c->u.loop.extent = tc_ir_clone_expr(a, s->u.loop.extent);
    c->u.loop.body = tc_ir_clone_stmt(a, s->u.loop.body);
    break;
  case TC_ST_WHILE:
    c->u.while_.cond = tc_ir_clone_expr(a, s->u.while_.cond);
    c->u.while_.body = tc_ir_clone_stmt(a, s->u.while_.body);
    break;
  case TC_ST_IF:
    c->u.if_.cond = tc_ir_clone_expr(a, s->u.if_.cond);
    c->u.if_.then_s = tc_ir_clone_stmt(a, s->u.if_.then_s);
    c->u.if_.else_s = tc_ir_clone_stmt(a, s->u.if_.else_s);
    break;
  case TC_ST_STORE:
    c->u.store.idx = clone_exprs(a, s->u.store.idx, s->u.store.nidx);
    c->u.store.value = tc_ir_clone_expr(a, s->u.store.value);
    break;
  case TC_ST_ATOMIC_ADD:
    c->u.atomic.idx = clone_exprs(a, s->u.atomic.idx, s->u.atomic.nidx);
    c->u.atomic.value = tc_ir_clone_expr(a, s->u.atomic.value);
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    c->u.let.value = tc_ir_clone_expr(a, s->u.let.value);
    break;
  case TC_ST_FILL:
    c->u.fill.value = tc_ir_clone_expr(a, s->u.fill.value);
    break;
  case TC_ST_PRINT:
    c->u.print.value = tc_ir_clone_expr(a, s->u.print.value);
    break;
  case TC_ST_ASSERT:
    c->u.assert_.cond = tc_ir_clone_expr(a, s->u.assert_.cond);
    break;
  case TC_ST_EVALUATE:
    c->u.evaluate.value = tc_ir_clone_expr(a, s->u.evaluate.value);
    break;
  case TC_ST_INTRINSIC:
    c->u.intrinsic.args = clone_exprs(a, s->u.intrinsic.args, s->u.intrinsic.nargs);
    break;
  default:
    break;
  }
  return c;
}
