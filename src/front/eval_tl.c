/* eval_tl.c: the modules tilelang, tilelang.language (T) and math: kernel frames, buffers,
 * tile operations, loops, math intrinsics, dtypes. Each T.* function checks its operands and
 * appends IR to the current kernel body. */
#include "front/eval_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_lit(const tc_val *v) { return v->kind == TV_INT || v->kind == TV_BOOL || v->kind == TV_FLOAT; }
static tc_loc call_loc(tc_args *a) { return a->call ? a->call->loc : (tc_loc){0}; }

/* The name a buffer takes from its assignment: `A_shared = T.alloc_shared(...)`. */
const char *ev_target_name(tc_ev *ev, const tc_ast *call, const char *dflt) {
  const tc_ast *s = ev->cur_stmt;
  if (!s || !call) return dflt;
  const tc_ast *t = NULL, *v = NULL;
  if (s->kind == TC_AST_ASSIGN && s->list.n >= 1) t = s->list.v[0], v = s->a;
  else if (s->kind == TC_AST_ANN_ASSIGN) t = s->a, v = s->c;
  if (!t || !v) return dflt;
  if (v == call && t->kind == TC_AST_NAME) return t->str;
  if (v->kind == TC_AST_TUPLE && (t->kind == TC_AST_TUPLE || t->kind == TC_AST_LIST) && v->list.n == t->list.n)
    for (int i = 0; i < v->list.n; i++)
      if (v->list.v[i] == call && t->list.v[i]->kind == TC_AST_NAME) return t->list.v[i]->str;
  return dflt;
}

static void shape_str(tc_strbuf *sb, const tc_region *r) {
  int64_t sq[8];
  int n = tc_region_squeezed(r, sq, 8);
  tc_sb_putc(sb, '(');
  for (int i = 0; i < n && i < 8; i++) tc_sb_printf(sb, "%s%lld", i ? ", " : "", (long long)sq[i]);
  if (n == 1) tc_sb_putc(sb, ',');
  tc_sb_putc(sb, ')');
}

static const char *shape_cstr(tc_ev *ev, const tc_region *r) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  shape_str(&sb, r);
  const char *s = tc_arena_strdup(&ev->tmp, tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  return s;
}

static const char *full_shape_cstr(tc_ev *ev, const tc_region *r) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_sb_putc(&sb, '(');
  for (int i = 0; i < r->ndim; i++) tc_sb_printf(&sb, "%s%lld", i ? ", " : "", (long long)r->r[i].extent);
  if (r->ndim == 1) tc_sb_putc(&sb, ',');
  tc_sb_putc(&sb, ')');
  const char *s = tc_arena_strdup(&ev->tmp, tc_sb_cstr(&sb));
  tc_sb_free(&sb);
  return s;
}

/* ---------------------------------------------------------------- regions */

/* The operand as written, for an error message (computed only on failure: it rescans the source). */
static const char *operand_text(tc_ev *ev, const tc_ast *node) { return node ? ev_node_text(ev, node) : "?"; }

tc_region ev_region(tc_ev *ev, tc_val *v, const tc_region *other, const tc_ast *node, tc_loc loc, const char *what) {
  tc_region r;
  memset(&r, 0, sizeof r);
  switch (v->kind) {
  case TV_BUFFER: {
    tc_buffer *b = v->u.buf;
    if (!tc_buffer_const_shape(b, NULL))
      ev_fail(ev, loc, "%s: the shape of '%s' is not known at compile time; use a slice of it such as %s[a:b, ...]", what,
              b->name, b->name);
    return tc_ir_whole_region(ev->ir, b);
  }
  case TV_REGION:
    r.buf = v->u.region.buf;
    r.ndim = r.buf->ndim;
    r.r = v->u.region.r;
    return r;
  case TV_ELEM: {
    tc_buffer *b = v->u.elem.buf;
    if (!other)
      ev_fail(ev, loc, "%s: '%s' is a single element; this operand must be a buffer or a slice of one", what, operand_text(ev, node));
    r.buf = b;
    r.ndim = b->ndim;
    r.r = TC_NEW_ARRAY(ev->ir, tc_range, b->ndim > 0 ? b->ndim : 1);
    int shift = other->ndim - b->ndim; /* align trailing dimensions */
    for (int i = 0; i < shift; i++)
      if (other->r[i].extent != 1)
        ev_fail(ev, loc, "%s: '%s' has %d dimensions, fewer than the %d-D tile %s it is copied with", what, operand_text(ev, node), b->ndim,
                other->ndim, full_shape_cstr(ev, other));
    for (int i = 0; i < b->ndim; i++) {
      int j = i + shift;
      r.r[i].start = v->u.elem.idx[i];
      r.r[i].extent = j >= 0 ? other->r[j].extent : 1;
    }
    return r;
  }
  default:
    ev_fail(ev, loc, "%s expects a buffer or a buffer region, but '%s' is %s", what, operand_text(ev, node), tv_kind_name(v));
  }
}

static bool same_shape(const tc_region *a, const tc_region *b) {
  int64_t x[16], y[16];
  int n = tc_region_squeezed(a, x, 16), m = tc_region_squeezed(b, y, 16);
  if (n != m || n > 16) return false;
  for (int i = 0; i < n; i++)
    if (x[i] != y[i]) return false;
  return true;
}

/* ---------------------------------------------------------------- kernel frame */

static int64_t need_int_arg(tc_ev *ev, tc_args *a, int i, const char *what) {
  return ev_need_int(ev, a->p[i], a->pnode[i], arg_loc(a, i), what);
}

static tc_expr *grid_extent(tc_ev *ev, tc_val *v, const tc_ast *node, tc_loc loc) {
  v = ev_scalar(ev, v, loc);
  if (v->kind == TV_INT || v->kind == TV_BOOL) {
    int64_t n = v->kind == TV_INT ? v->u.i : v->u.b;
    if (n <= 0 || n > INT32_MAX) ev_fail(ev, loc, "a grid dimension must be between 1 and 2^31-1, got %lld", (long long)n);
    return tc_ir_int(ev->ir, n, tc_index_dtype(), loc);
  }
  if (v->kind == TV_EXPR) {
    const char *why = ev_runtime_reason(ev, v);
    if (strstr(why, "symbolic") || strstr(why, "scalar parameter") || strstr(why, "computed"))
      return ev_index_expr(ev, v, loc);
    ev_fail(ev, loc, "the grid of T.Kernel must be known when the kernel launches, but '%s' %s", ev_node_text(ev, node), why);
  }
  ev_fail(ev, loc, "a grid dimension of T.Kernel must be an int, not %s", tv_kind_name(v));
}

static tc_val *t_kernel(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *blocks = a->p[0];
  int n = blocks->u.seq.n;
  if (n < 1 || n > 3) ev_fail(ev, call_loc(a), "T.Kernel takes 1 to 3 grid dimensions, got %d", n);
  tc_val *k = tv_new(ev, TV_KERNEL);
  k->u.kernel.n = n;
  k->u.kernel.v = EV_NEW_ARRAY(ev, tc_val *, n);
  for (int i = 0; i < n; i++) k->u.kernel.v[i] = blocks->u.seq.v[i];
  /* keep the grid expressions' syntax for messages */
  k->u.kernel.threads_ndim = 1;
  k->u.kernel.threads[0] = 128;
  k->u.kernel.threads[1] = k->u.kernel.threads[2] = 1;
  tc_val *th = a->p[1];
  if (th && th->kind != TV_NONE) {
    if (th->kind == TV_TUPLE || th->kind == TV_LIST) {
      int tn = th->u.seq.n;
      if (tn < 1 || tn > 3) ev_fail(ev, arg_loc(a, 1), "threads= takes 1 to 3 dimensions, got %d", tn);
      k->u.kernel.threads_ndim = tn;
      for (int i = 0; i < tn; i++) {
        int64_t t = ev_need_int(ev, th->u.seq.v[i], a->pnode[1], arg_loc(a, 1), "the thread count of T.Kernel");
        if (t <= 0 || t > 1024) ev_fail(ev, arg_loc(a, 1), "the thread count must be between 1 and 1024, got %lld", (long long)t);
        k->u.kernel.threads[i] = (int)t;
      }
    } else {
      int64_t t = need_int_arg(ev, a, 1, "the thread count of T.Kernel");
      if (t <= 0 || t > 1024) ev_fail(ev, arg_loc(a, 1), "the thread count must be between 1 and 1024, got %lld", (long long)t);
      k->u.kernel.threads[0] = (int)t;
    }
  }
  if (a->p[2] && a->p[2]->kind != TV_NONE && ev_truth(ev, a->p[2], arg_loc(a, 2)))
    ev_unsupported(ev, arg_loc(a, 2), "T.Kernel(..., is_cpu=True)");
  if (a->p[3] && a->p[3]->kind != TV_NONE) ev_unsupported(ev, arg_loc(a, 3), "T.Kernel(..., prelude=...)");
  k->u.kernel.nodes = EV_NEW_ARRAY(ev, const tc_ast *, n);
  for (int i = 0; i < n; i++) k->u.kernel.nodes[i] = i < a->n ? a->node[i] : NULL;
  return k;
}

void ev_kernel_enter(tc_ev *ev, tc_val *frame, const tc_ast *target, const tc_ast_list *body, tc_loc loc) {
  tc_kernel_ir *k = ev->k;
  if (!ev->in_prim_func) ev_fail(ev, loc, "'with T.Kernel(...)' must be inside a @T.prim_func or a @tilelang.jit function");
  if (ev->cur) ev_fail(ev, loc, "'with T.Kernel(...)' cannot be nested in another");
  int n = frame->u.kernel.n;
  tc_expr *grid[3];
  for (int i = 0; i < n; i++) grid[i] = grid_extent(ev, frame->u.kernel.v[i], frame->u.kernel.nodes[i], loc);
  bool fuse = ev->kernel_seen; /* a later block joins the first's launch (eval_kernels.c) */
  tc_ev_fuse fz;
  if (fuse) {
    ev_kernel_fuse_begin(ev, &fz, n, grid, frame->u.kernel.threads, frame->u.kernel.threads_ndim, loc);
  } else {
    k->grid_ndim = n;
    for (int i = 0; i < n; i++) k->grid[i] = grid[i];
    k->threads_ndim = frame->u.kernel.threads_ndim;
    for (int i = 0; i < 3; i++) k->threads[i] = frame->u.kernel.threads[i];
  }
  ev->threads_ndim = k->threads_ndim;
  memcpy(ev->threads, k->threads, sizeof ev->threads);
  static const char *const axis_names[] = {"bx", "by", "bz"};
  if (target) {
    if (target->kind == TC_AST_NAME) {
      if (n == 1) {
        if (!k->block_idx[0]) k->block_idx[0] = tc_ir_new_var(ev->ir, k, tc_arena_strdup(ev->ir, target->str), tc_index_dtype(), TC_VAR_BLOCK_IDX, target->loc);
        scope_set(ev, ev->scope, target->str, tv_expr(ev, tc_ir_var_ref(ev->ir, k->block_idx[0], target->loc)));
      } else {
        tc_val **vs = EV_NEW_ARRAY(ev, tc_val *, n);
        for (int i = 0; i < n; i++) {
          if (!k->block_idx[i])
            k->block_idx[i] = tc_ir_new_var(ev->ir, k, axis_names[i], tc_index_dtype(), TC_VAR_BLOCK_IDX, target->loc);
          k->block_idx[i]->axis = i;
          vs[i] = tv_expr(ev, tc_ir_var_ref(ev->ir, k->block_idx[i], target->loc));
        }
        scope_set(ev, ev->scope, target->str, tv_tuple(ev, n, vs));
      }
    } else if (target->kind == TC_AST_TUPLE || target->kind == TC_AST_LIST) {
      if (target->list.n != n)
        ev_fail(ev, target->loc, "T.Kernel has %d grid dimension%s but %d names are bound", n, n == 1 ? "" : "s", target->list.n);
      for (int i = 0; i < n; i++) {
        const tc_ast *t = target->list.v[i];
        if (t->kind != TC_AST_NAME) ev_fail(ev, t->loc, "the names bound by T.Kernel must be plain names");
        if (!k->block_idx[i]) /* a later block's names share the launch's indices */
          k->block_idx[i] = tc_ir_new_var(ev->ir, k, tc_arena_strdup(ev->ir, t->str), tc_index_dtype(), TC_VAR_BLOCK_IDX, t->loc);
        k->block_idx[i]->axis = i;
        scope_set(ev, ev->scope, t->str, tv_expr(ev, tc_ir_var_ref(ev->ir, k->block_idx[i], t->loc)));
      }
    } else {
      ev_fail(ev, target->loc, "the target of 'with T.Kernel(...) as' must be a name or a tuple of names");
    }
  }
  tc_stmt_list list = {0};
  ev->cur = &list;
  ev->kernel_top = &list;
  ev->nsyncs = 0;
  ev->npbars = 0;
  tc_flow f = ev_block(ev, body);
  if (f == FLOW_NORMAL) ev_check_partial_barriers(ev);
  ev->cur = NULL;
  ev->kernel_top = NULL;
  ev->rng_state = NULL;
  ev_kernel_scope_end(ev, loc);
  if (f == FLOW_RETURN) ev_unsupported(ev, loc, "'return' inside 'with T.Kernel(...)'");
  if (f != FLOW_NORMAL) ev_fail(ev, loc, "'break' or 'continue' outside a loop");
  if (fuse && ev->nsyncs) ev_unsupported(ev, ev->syncs[0].loc, "T.sync_grid in a 'with T.Kernel(...)' block other than the first");
  if (fuse) ev_kernel_fuse_end(ev, &fz, tc_stmt_list_seq(ev->ir, &list, loc), loc);
  else k->body = ev->nsyncs ? ev_kernel_split_launches(ev, &list, loc) : tc_stmt_list_seq(ev->ir, &list, loc);
  ev->kernel_seen = true;
}

/* ---------------------------------------------------------------- tensors and buffers */

static tc_val *shape_items(tc_ev *ev, tc_val *shape, tc_loc loc, const char *what) {
  if (shape->kind == TV_TUPLE || shape->kind == TV_LIST) return shape;
  if (shape->kind == TV_INT || ev_is_runtime(shape)) return tv_tuple(ev, 1, &shape);
  ev_fail(ev, loc, "%s must be an int or a tuple of ints, not %s", what, tv_kind_name(shape));
}

static const tc_ast *shape_node(const tc_ast *node, int i, int n) {
  if (node && (node->kind == TC_AST_TUPLE || node->kind == TC_AST_LIST) && node->list.n == n) return node->list.v[i];
  return node;
}

tc_val *ev_tensor_type(tc_ev *ev, tc_val *shape, const tc_ast *shape_n, tc_loc shape_loc, tc_val *dtype, tc_loc dtype_loc) {
  tc_val *items = shape_items(ev, shape, shape_loc, "the shape of T.Tensor");
  tc_val *t = tv_new(ev, TV_TENSOR_TYPE);
  int n = items->u.seq.n;
  if (n < 1 || n > 8) ev_fail(ev, shape_loc, "a tensor needs 1 to 8 dimensions, got %d", n);
  t->u.tensor.ndim = n;
  t->u.tensor.shape = EV_NEW_ARRAY(ev, tc_val *, n);
  for (int i = 0; i < n; i++) {
    tc_val *d = ev_scalar(ev, items->u.seq.v[i], shape_loc);
    const tc_ast *dn = shape_node(shape_n, i, n);
    if (d->kind == TV_INT) {
      if (d->u.i <= 0 || d->u.i > INT32_MAX)
        ev_fail(ev, dn ? dn->loc : shape_loc, "a tensor dimension must be between 1 and 2^31-1, got %lld", (long long)d->u.i);
    } else if (d->kind == TV_EXPR) {
      const char *why = ev_runtime_reason(ev, d);
      if (!tc_dtype_is_int(d->u.e->dtype) || !(strstr(why, "symbolic") || strstr(why, "scalar parameter")))
        ev_fail(ev, dn ? dn->loc : shape_loc,
                "a tensor dimension must be an int or a symbolic dimension (T.symbolic / T.dynamic), but '%s' %s",
                ev_node_text(ev, dn), why);
    } else {
      ev_fail(ev, dn ? dn->loc : shape_loc, "a tensor dimension must be an int, but '%s' is %s", ev_node_text(ev, dn),
              tv_kind_name(d));
    }
    t->u.tensor.shape[i] = d;
  }
  t->u.tensor.dt = tc_dt(TC_DT_FLOAT32);
  if (dtype && dtype->kind != TV_NONE) ev_get_dtype(ev, dtype, &t->u.tensor.dt, dtype_loc, "the dtype of T.Tensor");
  return t;
}

/* T.Tensor(shape, dtype): a tensor type; T.Tensor(shape, dtype, X.data): a view of X (eval_view.c) */
static tc_val *t_tensor(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *t = ev_tensor_type(ev, a->p[0], a->pnode[0], arg_loc(a, 0), a->p[1], arg_loc(a, 1));
  if (!a->p[2] || a->p[2]->kind == TV_NONE) return t;
  return ev_make_view(ev, a->p[2], arg_loc(a, 2), t, a->call, "T.Tensor(shape, dtype, data)");
}

tc_buffer *ev_make_param_buffer(tc_ev *ev, const char *name, tc_val *tt, tc_loc loc) {
  int n = tt->u.tensor.ndim;
  tc_expr **shape = EV_NEW_ARRAY(ev, tc_expr *, n);
  for (int i = 0; i < n; i++) shape[i] = ev_index_expr(ev, tt->u.tensor.shape[i], loc);
  return tc_ir_new_buffer(ev->ir, ev->k, tc_arena_strdup(ev->ir, name), tt->u.tensor.dt, TC_SCOPE_GLOBAL, n, shape, loc);
}

static tc_buffer *alloc_buffer(tc_ev *ev, tc_args *a, tc_scope scope, const char *what, int shape_i, int dtype_i) {
  tc_loc loc = call_loc(a);
  tc_val *items = shape_items(ev, a->p[shape_i], arg_loc(a, shape_i), tc_arena_printf(&ev->tmp, "the shape of %s", what));
  int n = items->u.seq.n;
  if (n < 1 || n > 8) ev_fail(ev, arg_loc(a, shape_i), "%s needs 1 to 8 dimensions, got %d", what, n);
  tc_expr **shape = EV_NEW_ARRAY(ev, tc_expr *, n);
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    const tc_ast *dn = shape_node(a->pnode[shape_i], i, n);
    int64_t d = ev_need_int(ev, items->u.seq.v[i], dn, dn ? dn->loc : loc, tc_arena_printf(&ev->tmp, "the shape of %s", what));
    if (d <= 0) ev_fail(ev, dn ? dn->loc : loc, "the shape of %s must be positive, got %lld", what, (long long)d);
    if (__builtin_mul_overflow(total, d, &total) || total > ((int64_t)1 << 31))
      ev_fail(ev, dn ? dn->loc : loc, "%s is too large (more than 2^31 elements)", what);
    shape[i] = tc_ir_int(ev->ir, d, tc_index_dtype(), loc);
  }
  tc_dtype dt;
  ev_get_dtype(ev, a->p[dtype_i], &dt, arg_loc(a, dtype_i), tc_arena_printf(&ev->tmp, "the dtype of %s", what));
  const char *name = ev_target_name(ev, a->call, "buf");
  return tc_ir_new_buffer(ev->ir, ev->k, tc_arena_strdup(ev->ir, name), dt, scope, n, shape, loc);
}

static tc_scope scope_from_string(tc_ev *ev, tc_val *v, tc_scope dflt, tc_loc loc) {
  if (!v || v->kind == TV_NONE) return dflt;
  if (v->kind != TV_STR) ev_fail(ev, loc, "scope= must be a string, not %s", tv_kind_name(v));
  const char *s = v->u.str.s;
  if (strcmp(s, "shared") == 0 || strcmp(s, "shared.dyn") == 0) return TC_SCOPE_SHARED;
  if (strcmp(s, "local.fragment") == 0) return TC_SCOPE_FRAGMENT;
  if (strcmp(s, "local") == 0) return TC_SCOPE_LOCAL;
  if (strcmp(s, "local.var") == 0) return TC_SCOPE_VAR;
  if (strcmp(s, "global") == 0) ev_unsupported(ev, loc, "allocating a global buffer inside a kernel");
  ev_fail(ev, loc, "unknown scope '%s'; expected \"shared\", \"shared.dyn\", \"local.fragment\", \"local\" or \"local.var\"", s);
}

static void emit_alloc(tc_ev *ev, tc_buffer *b, tc_loc loc, const char *what) {
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_ALLOC, loc);
  s->u.alloc.buf = b;
  ev_emit(ev, s, loc, what);
}

static tc_val *alloc_common(tc_ev *ev, tc_args *a, int which) {
  static const char *const names[] = {"T.alloc_shared", "T.alloc_fragment", "T.alloc_local", "T.alloc_buffer"};
  static const tc_scope scopes[] = {TC_SCOPE_SHARED, TC_SCOPE_FRAGMENT, TC_SCOPE_LOCAL, TC_SCOPE_SHARED};
  if (!ev->cur) ev_emit(ev, NULL, call_loc(a), names[which]);
  tc_scope sc = scope_from_string(ev, a->p[2], scopes[which], arg_loc(a, 2));
  tc_buffer *b = alloc_buffer(ev, a, sc, names[which], 0, 1);
  emit_alloc(ev, b, call_loc(a), names[which]);
  return tv_buffer(ev, b);
}
static tc_val *t_alloc_shared(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return alloc_common(ev, a, 0); }
static tc_val *t_alloc_fragment(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return alloc_common(ev, a, 1); }
static tc_val *t_alloc_local(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return alloc_common(ev, a, 2); }
static tc_val *t_alloc_buffer(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return alloc_common(ev, a, 3); }

/* T.alloc_global(shape, dtype): a global workspace of the kernel (tc_kernel_ir.workspaces): the
 * runtime allocates it, zeroed, for each launch, and every block and every dependent
 * 'with T.Kernel' block of the prim_func sees the same storage (a split kernel's partial
 * results, which its combine block reads). Its dimensions are ints or symbolic sizes. */
static tc_val *t_alloc_global(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  if (!ev->in_prim_func || !ev->k) ev_fail(ev, loc, "T.alloc_global must be inside a @T.prim_func");
  tc_val *tt = ev_tensor_type(ev, a->p[0], a->pnode[0], arg_loc(a, 0), a->p[1], arg_loc(a, 1));
  tc_kernel_ir *k = ev->k;
  tc_buffer *b = ev_make_param_buffer(ev, ev_target_name(ev, a->call, "workspace"), tt, loc);
  k->workspaces = tc_arena_grow(ev->ir, k->workspaces, sizeof(tc_buffer *) * (size_t)k->nworkspaces,
                                sizeof(tc_buffer *) * (size_t)(k->nworkspaces + 1));
  b->param_index = k->nparams + k->nworkspaces;
  k->workspaces[k->nworkspaces++] = b;
  return tv_buffer(ev, b);
}

static tc_val *t_alloc_var(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!ev->cur) ev_emit(ev, NULL, call_loc(a), "T.alloc_var");
  tc_dtype dt;
  ev_get_dtype(ev, a->p[0], &dt, arg_loc(a, 0), "the dtype of T.alloc_var");
  tc_scope sc = scope_from_string(ev, a->p[2], TC_SCOPE_VAR, arg_loc(a, 2));
  if (sc != TC_SCOPE_VAR) ev_fail(ev, arg_loc(a, 2), "T.alloc_var takes scope=\"local.var\" only");
  tc_expr *one = tc_ir_int(ev->ir, 1, tc_index_dtype(), call_loc(a));
  const char *name = ev_target_name(ev, a->call, "var");
  tc_buffer *b = tc_ir_new_buffer(ev->ir, ev->k, tc_arena_strdup(ev->ir, name), dt, TC_SCOPE_VAR, 1, &one, call_loc(a));
  if (a->p[1] && a->p[1]->kind != TV_NONE) b->init = ev_to_expr_as(ev, a->p[1], dt, arg_loc(a, 1));
  emit_alloc(ev, b, call_loc(a), "T.alloc_var");
  return tv_buffer(ev, b);
}

static tc_val *t_empty(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!ev->eager_def) ev_fail(ev, call_loc(a), "T.empty is only available in @tilelang.jit kernels (the eager style)");
  if (ev->cur) ev_fail(ev, call_loc(a), "T.empty must come before 'with T.Kernel(...)'");
  /* T.empty((M, N), dtype), T.empty((M, N)) or T.empty(M, N, dtype=...) */
  tc_val *items = a->p[0];
  tc_val *p[3] = {NULL, a->p[1], NULL};
  const tc_ast *pn[3] = {a->pnode[0], a->pnode[1], NULL};
  int n = items->u.seq.n;
  if (n == 0) ev_fail(ev, call_loc(a), "T.empty needs a shape");
  tc_val *last = items->u.seq.v[n - 1];
  if (!p[1] && n >= 2 && (last->kind == TV_DTYPE || last->kind == TV_STR)) {
    p[1] = last;
    pn[1] = a->n >= n ? a->node[n - 1] : NULL;
    n--;
  }
  if (n == 1 && (items->u.seq.v[0]->kind == TV_TUPLE || items->u.seq.v[0]->kind == TV_LIST)) {
    p[0] = items->u.seq.v[0];
  } else {
    p[0] = tv_tuple(ev, n, items->u.seq.v);
    pn[0] = NULL;
  }
  tc_args ta = *a;
  ta.p = p;
  ta.pnode = pn;
  tc_val *tt = t_tensor(ev, NULL, &ta);
  const char *name = ev_target_name(ev, a->call, "out");
  tc_buffer *b = ev_make_param_buffer(ev, name, tt, call_loc(a));
  if (ev->nempties == ev->capempties) {
    int cap = ev->capempties ? ev->capempties * 2 : 4;
    ev->empties = tc_arena_grow(&ev->tmp, ev->empties, sizeof(tc_buffer *) * (size_t)ev->nempties, sizeof(tc_buffer *) * (size_t)cap);
    ev->capempties = cap;
  }
  ev->empties[ev->nempties++] = b;
  return tv_buffer(ev, b);
}

/* ---------------------------------------------------------------- symbolic dimensions */

const tilec_define *ev_find_define(tc_ev *ev, const char *name, tc_val **out);

/* A T.const name bound by a define becomes that constant. A T.symbolic / T.dynamic dimension
 * stays symbolic even when a define names it: there the define only gives the size that
 * `tilec run` allocates, and the kernel is compiled once for every size. */
static tc_val *symbolic_dim(tc_ev *ev, const char *name, tc_dtype dt, tc_loc loc, bool define_binds) {
  tc_val *dv;
  if (ev_find_define(ev, name, &dv)) {
    if (dv->kind != TV_INT) ev_fail_usage(ev, "-D %s needs an integer value for the dimension '%s'", name, name);
    if (define_binds) return dv;
  }
  tc_kernel_ir *k = ev->k;
  for (int i = 0; i < k->nsyms; i++)
    if (strcmp(k->syms[i]->name, name) == 0) return tv_expr(ev, tc_ir_var_ref(ev->ir, k->syms[i], loc));
  tc_var *v = tc_ir_new_var(ev->ir, k, tc_arena_strdup(ev->ir, name), dt, TC_VAR_SYMBOLIC, loc);
  if (define_binds) { /* so a diagnostic can say that -D NAME=... fixes it */
    ev->const_dims = tc_arena_grow(&ev->tmp, ev->const_dims, sizeof(tc_var *) * (size_t)ev->nconst_dims,
                                   sizeof(tc_var *) * (size_t)(ev->nconst_dims + 1));
    ev->const_dims[ev->nconst_dims++] = v;
  }
  k->syms = tc_arena_grow(ev->ir, k->syms, sizeof(tc_var *) * (size_t)k->nsyms, sizeof(tc_var *) * (size_t)(k->nsyms + 1));
  k->syms[k->nsyms++] = v;
  return tv_expr(ev, tc_ir_var_ref(ev->ir, v, loc));
}

static tc_dtype sym_dtype(tc_ev *ev, tc_args *a, int i) {
  tc_dtype dt = tc_dt(TC_DT_INT32);
  if (a->p[i] && a->p[i]->kind != TV_NONE) ev_get_dtype(ev, a->p[i], &dt, arg_loc(a, i), "the dtype of a symbolic dimension");
  if (!tc_dtype_is_int(dt)) ev_fail(ev, arg_loc(a, i), "a symbolic dimension must have an integer dtype, not %s", ev_dtype_name(dt));
  return dt;
}

/* Names as T.const and T.dynamic take them: "M, N, K", "M N K", or a list of strings. One name
 * gives a value, several a tuple (the list form always a tuple). */
static tc_val *dims_common(tc_ev *ev, tc_args *a, bool define_binds) {
  tc_val *names = a->p[0];
  tc_dtype dt = sym_dtype(ev, a, 1);
  tc_val *out = tv_tuple(ev, 0, NULL);
  bool list_form = names->kind == TV_LIST || names->kind == TV_TUPLE;
  if (list_form) {
    for (int i = 0; i < names->u.seq.n; i++) {
      if (names->u.seq.v[i]->kind != TV_STR) ev_fail(ev, arg_loc(a, 0), "T.const names must be strings");
      tv_list_push(ev, out, symbolic_dim(ev, names->u.seq.v[i]->u.str.s, dt, call_loc(a), define_binds));
    }
    return out;
  }
  if (names->kind != TV_STR) ev_fail(ev, arg_loc(a, 0), "dimension names must be a string such as \"M, N, K\" or a list of strings");
  const char *p = names->u.str.s;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    const char *q = p;
    while (*q && *q != ' ' && *q != ',') q++;
    if (q > p)
      tv_list_push(ev, out, symbolic_dim(ev, tc_arena_strndup(&ev->tmp, p, (size_t)(q - p)), dt, call_loc(a), define_binds));
    p = q;
  }
  if (out->u.seq.n == 0) ev_fail(ev, arg_loc(a, 0), "a dimension needs a name");
  return out->u.seq.n == 1 ? out->u.seq.v[0] : out;
}

tc_val *ev_implicit_dim(tc_ev *ev, const char *name, tc_loc loc) {
  tc_val *v = symbolic_dim(ev, tc_arena_strdup(ev->ir, name), tc_dt(TC_DT_INT32), loc, true);
  scope_set(ev, ev->scope, tc_arena_strdup(ev->ir, name), v);
  return v;
}

static tc_val *t_const(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return dims_common(ev, a, true);
}

static tc_val *t_symbolic(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return dims_common(ev, a, false);
}

/* ---------------------------------------------------------------- loops */

tc_val *ev_make_range(tc_ev *ev, tr_kind kind, int n) {
  tc_val *r = tv_new(ev, TV_RANGE);
  r->u.range.kind = kind;
  r->u.range.n = n;
  r->u.range.start = EV_NEW_ARRAY(ev, tc_val *, n);
  r->u.range.stop = EV_NEW_ARRAY(ev, tc_val *, n);
  return r;
}

tc_val *ev_loop_bound(tc_ev *ev, tc_val *v, tc_loc loc, const char *what) {
  v = ev_scalar(ev, v, loc);
  if (v->kind == TV_INT || v->kind == TV_BOOL) return v->kind == TV_BOOL ? tv_int(ev, v->u.b) : v;
  if (v->kind == TV_EXPR && (tc_dtype_is_int(v->u.e->dtype) || tc_dtype_is_bool(v->u.e->dtype))) return v;
  ev_fail(ev, loc, "the bounds of %s must be integers, not %s", what, tv_kind_name(v));
}

/* start, stop?, step? as range() takes them */
static tc_val *range_like(tc_ev *ev, tc_args *a, tr_kind kind, const char *what) {
  tc_val *r = ev_make_range(ev, kind, 1);
  if (!a->p[1] || a->p[1]->kind == TV_NONE) {
    r->u.range.start[0] = tv_int(ev, 0);
    r->u.range.stop[0] = ev_loop_bound(ev, a->p[0], arg_loc(a, 0), what);
  } else {
    r->u.range.start[0] = ev_loop_bound(ev, a->p[0], arg_loc(a, 0), what);
    r->u.range.stop[0] = ev_loop_bound(ev, a->p[1], arg_loc(a, 1), what);
  }
  return r;
}

tc_val *ev_make_py_range(tc_ev *ev, tc_args *a);
tc_val *ev_make_py_range(tc_ev *ev, tc_args *a) {
  tc_val *r = range_like(ev, a, TR_PY_RANGE, "range()");
  if (a->p[2] && a->p[2]->kind != TV_NONE) {
    tc_val *s = ev_scalar(ev, a->p[2], arg_loc(a, 2));
    if (s->kind != TV_INT) {
      if (ev_is_runtime(s)) ev_fail(ev, arg_loc(a, 2), "the step of range() must be known at compile time");
      ev_fail(ev, arg_loc(a, 2), "'%s' object cannot be interpreted as an integer", tv_kind_name(s));
    }
    if (s->u.i == 0) ev_fail(ev, arg_loc(a, 2), "range() arg 3 must not be zero");
    r->u.range.step = s;
  }
  return r;
}

static tc_val *t_serial(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *r = ev_make_py_range(ev, a);
  r->u.range.kind = TR_SERIAL;
  return r;
}

static tc_val *t_unroll(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *r = ev_make_py_range(ev, a);
  r->u.range.kind = TR_UNROLL;
  return r;
}

static tc_val *t_parallel(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *ext = a->p[0];
  int n = ext->u.seq.n;
  if (n < 1) ev_fail(ev, call_loc(a), "T.Parallel needs at least one extent");
  if (n > 8) ev_fail(ev, call_loc(a), "T.Parallel takes at most 8 extents");
  tc_val *r = ev_make_range(ev, TR_PARALLEL, n);
  for (int i = 0; i < n; i++) {
    r->u.range.start[i] = tv_int(ev, 0);
    r->u.range.stop[i] = ev_loop_bound(ev, ext->u.seq.v[i], i < a->n ? arg_loc(a, 0) : call_loc(a), "T.Parallel");
  }
  return r;
}

static tc_val *t_grid(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *r = t_parallel(ev, self, a);
  r->u.range.kind = TR_SERIAL;
  return r;
}

/* ---- T.rng_init / T.rng_rand: cuRAND's Philox4_32_10, one generator per thread ----
 * TileLang emits curand_init(seed, seq, off, &state) and curand(&state). tilec keeps a thread's
 * state as (seed, seq, position) in a uint64 array allocated at the top of the kernel block; T.rng_rand() reads output number `position` (the philox_rand intrinsic, philox.h) and
 * moves the position on by one. */
static tc_buffer *rng_state(tc_ev *ev, tc_loc loc) {
  if (ev->rng_state) return ev->rng_state;
  tc_expr **shape = EV_NEW_ARRAY(ev, tc_expr *, 1);
  shape[0] = tc_ir_int(ev->ir, 3, tc_index_dtype(), loc);
  /* a block of one thread keeps it in shared memory, which a T.Parallel loop (run by that one
   * thread, in order, as TileLang runs it) may use; with more threads it is per thread, and a
   * T.Parallel loop cannot draw from it (which thread runs which iteration is TileLang's loop
   * partition) */
  int64_t nth = 1;
  for (int i = 0; i < ev->threads_ndim; i++) nth *= ev->threads[i];
  tc_buffer *b = tc_ir_new_buffer(ev->ir, ev->k, "rng_state", tc_dt(TC_DT_UINT64), nth == 1 ? TC_SCOPE_SHARED : TC_SCOPE_LOCAL, 1,
                                  shape, loc);
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_ALLOC, loc);
  s->u.alloc.buf = b;
  tc_stmt_list *top = ev->kernel_top; /* first in the block, so every later use is in its scope */
  tc_stmt_list_push(ev->ir, top, s);
  memmove(top->items + 1, top->items, sizeof(tc_stmt *) * (size_t)(top->n - 1));
  top->items[0] = s;
  for (int i = 0; i < ev->nsyncs; i++) ev->syncs[i].at++;
  ev->rng_state = b;
  return b;
}

static tc_expr *rng_cell(tc_ev *ev, tc_buffer *st, int i, tc_loc loc) {
  tc_expr **idx = EV_NEW_ARRAY(ev, tc_expr *, 1);
  idx[0] = tc_ir_int(ev->ir, i, tc_index_dtype(), loc);
  return tc_ir_load(ev->ir, st, 1, idx, loc);
}

static void rng_set(tc_ev *ev, tc_buffer *st, int i, tc_expr *v, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  s->u.store.buf = st;
  s->u.store.nidx = 1;
  s->u.store.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  s->u.store.idx[0] = tc_ir_int(ev->ir, i, tc_index_dtype(), loc);
  s->u.store.value = v;
  ev_emit(ev, s, loc, "T.rng_init");
}

static tc_val *t_rng_init(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  if (!ev->cur || !ev->kernel_top) ev_fail(ev, loc, "T.rng_init must be inside 'with T.Kernel(...)'");
  if (a->p[3] && a->p[3]->kind != TV_NONE) {
    if (a->p[3]->kind != TV_STR) ev_fail(ev, arg_loc(a, 3), "the generator of T.rng_init must be a string");
    if (strcmp(a->p[3]->u.str.s, "curandStatePhilox4_32_10_t") != 0)
      ev_unsupported(ev, arg_loc(a, 3), tc_arena_printf(&ev->tmp, "T.rng_init(..., generator=\"%s\") (tilec has curandStatePhilox4_32_10_t)",
                                                        a->p[3]->u.str.s));
  }
  if (!a->p[1] || a->p[1]->kind == TV_NONE)
    ev_unsupported(ev, loc, "T.rng_init without a subsequence (give seq=, e.g. 0)");
  tc_buffer *st = rng_state(ev, loc);
  tc_dtype u64 = tc_dt(TC_DT_UINT64);
  tc_val *off = a->p[2] && a->p[2]->kind != TV_NONE ? a->p[2] : NULL;
  rng_set(ev, st, 0, ev_to_expr_as(ev, ev_scalar(ev, a->p[0], arg_loc(a, 0)), u64, arg_loc(a, 0)), loc);
  rng_set(ev, st, 1, ev_to_expr_as(ev, ev_scalar(ev, a->p[1], arg_loc(a, 1)), u64, arg_loc(a, 1)), loc);
  rng_set(ev, st, 2, off ? ev_to_expr_as(ev, ev_scalar(ev, off, arg_loc(a, 2)), u64, arg_loc(a, 2)) : tc_ir_int(ev->ir, 0, u64, loc),
          loc);
  return tv_none(ev);
}

static tc_val *t_rng_rand(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  if (!ev->cur || !ev->rng_state) ev_fail(ev, loc, "T.rng_rand needs a T.rng_init earlier in the 'with T.Kernel(...)' block");
  tc_buffer *st = ev->rng_state;
  tc_expr **args = EV_NEW_ARRAY(ev, tc_expr *, 3);
  for (int i = 0; i < 3; i++) args[i] = rng_cell(ev, st, i, loc);
  tc_var *r = tc_ir_new_var(ev->ir, ev->k, "rng", tc_dt(TC_DT_UINT32), TC_VAR_LOCAL, loc);
  tc_stmt *let = tc_ir_stmt(ev->ir, TC_ST_LET, loc);
  let->u.let.var = r;
  let->u.let.value = tc_ir_call(ev->ir, "philox_rand", tc_dt(TC_DT_UINT32), 3, args, loc);
  ev_emit(ev, let, loc, "T.rng_rand");
  tc_expr *next = tc_ir_binary(ev->ir, TC_OP_ADD, rng_cell(ev, st, 2, loc), tc_ir_int(ev->ir, 1, tc_dt(TC_DT_UINT64), loc), loc);
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  s->u.store.buf = st;
  s->u.store.nidx = 1;
  s->u.store.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  s->u.store.idx[0] = tc_ir_int(ev->ir, 2, tc_index_dtype(), loc);
  s->u.store.value = next;
  ev_emit(ev, s, loc, "T.rng_rand");
  return tv_expr(ev, tc_ir_var_ref(ev->ir, r, loc));
}

static tc_val *t_sync_threads(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[1] && a->p[1]->kind != TV_NONE) { /* T.sync_threads(barrier_id, arrive_count): eval_barrier.c */
    if (a->p[0] && a->p[0]->kind != TV_NONE) (void)arg_int(ev, a, 0, 0, "the barrier id of T.sync_threads");
    if (!ev->cur) ev_fail(ev, call_loc(a), "T.sync_threads must be inside 'with T.Kernel(...)'");
    ev_partial_barrier(ev, arg_int(ev, a, 1, 0, "the arrive count of T.sync_threads"), call_loc(a));
    return tv_none(ev);
  }
  ev_emit(ev, tc_ir_stmt(ev->ir, TC_ST_BARRIER, call_loc(a)), call_loc(a), "T.sync_threads");
  return tv_none(ev);
}

static tc_val *t_copy(tc_ev *ev, tc_val *self, tc_args *a);

/* T.tma_copy(src, dst, barrier=): TileLang's split-phase TMA (the load is issued against the
 * barrier's transaction count; the user arrives and waits). The reference runs it in program
 * order, where the copy is complete before the wait that guards its use: a T.copy. */
static tc_val *t_tma_copy(tc_ev *ev, tc_val *self, tc_args *a) {
  tc_val *barrier = a->p[2];
  if (barrier && barrier->kind != TV_NONE) ev_check_barrier_arg(ev, barrier, call_loc(a), "barrier= of T.tma_copy");
  if (a->p[3] && a->p[3]->kind != TV_NONE)
    ev_fail(ev, arg_loc(a, 3), "T.tma_copy: cluster_mask multicasts within a thread-block cluster, which tilec does not model");
  tc_args b = *a;
  tc_val *p[8] = {a->p[0], a->p[1], NULL, NULL, a->p[5], NULL, NULL, NULL}; /* T.copy's slots; eviction_policy is its 5th */
  for (int i = 2; i < 8; i++)
    if (!p[i]) p[i] = tv_none(ev);
  b.p = p;
  return t_copy(ev, self, &b);
}

/* T.no_set_max_nreg / T.disable_warp_group_reg_alloc / T.annotate_producer_reg_dealloc /
 * T.annotate_consumer_reg_alloc, and the explicit T.set_max_nreg(count, is_inc) /
 * T.inc_max_nreg / T.dec_max_nreg a warp group runs itself: how TileLang's warp specialization splits the register file
 * between producer and consumer warp groups (setmaxnreg). A register budget never changes a
 * result and tilec's GPU code does not use setmaxnreg, so they are checked and dropped. `self`
 * carries the default register count, 0 for the ones that take none. */
static tc_val *t_reg_alloc_hint(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  /* the name as written (T.disable_warp_group_reg_alloc), for the messages */
  const char *fn = a->call && a->call->a && a->call->a->kind == TC_AST_ATTRIBUTE && a->call->a->str ? a->call->a->str : "register hint";
  if (!ev->cur) ev_fail(ev, call_loc(a), "T.%s must be inside 'with T.Kernel(...)'", fn);
  if (a->n > 0 && a->p[0] && a->p[0]->kind != TV_NONE) {
    int64_t regs = arg_int(ev, a, 0, 0, "the register count");
    if (regs < 24 || regs > 256 || regs % 8 != 0)
      ev_fail(ev, arg_loc(a, 0), "T.%s: the register count must be a multiple of 8 in [24, 256] (setmaxnreg), got %lld", fn,
              (long long)regs);
  }
  if (strcmp(fn, "set_max_nreg") == 0) {
    int64_t inc = arg_int(ev, a, 1, 0, "is_inc");
    if (inc != 0 && inc != 1) ev_fail(ev, arg_loc(a, 1), "T.set_max_nreg: is_inc must be 1 (increase) or 0 (decrease), got %lld", (long long)inc);
  }
  return tv_none(ev);
}

static tc_val *t_block_binding(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int64_t axis = arg_int(ev, a, 0, 0, "the axis of T.get_block_binding");
  tc_kernel_ir *k = ev->k;
  if (!ev->cur) ev_fail(ev, call_loc(a), "T.get_block_binding must be inside 'with T.Kernel(...)'");
  if (axis < 0 || axis >= k->grid_ndim)
    ev_fail(ev, arg_loc(a, 0), "T.get_block_binding(%lld): the kernel has %d grid dimension%s", (long long)axis,
            k->grid_ndim, k->grid_ndim == 1 ? "" : "s");
  if (!k->block_idx[axis]) {
    static const char *const names[] = {"bx", "by", "bz"};
    k->block_idx[axis] = tc_ir_new_var(ev->ir, k, names[axis], tc_index_dtype(), TC_VAR_BLOCK_IDX, call_loc(a));
    k->block_idx[axis]->axis = (int)axis;
  }
  return tv_expr(ev, tc_ir_var_ref(ev->ir, k->block_idx[axis], call_loc(a)));
}

/* A list or tuple of compile-time ints (None or absent: empty). */
static tc_int_list int_list_of(tc_ev *ev, tc_val *v, tc_loc loc, const char *what) {
  tc_int_list l = {0, NULL};
  if (!v || v->kind == TV_NONE) return l;
  if (v->kind != TV_LIST && v->kind != TV_TUPLE) ev_fail(ev, loc, "%s must be a list of ints, not %s", what, tv_kind_name(v));
  l.n = v->u.seq.n;
  l.v = TC_NEW_ARRAY(ev->ir, int, l.n > 0 ? l.n : 1);
  for (int i = 0; i < l.n; i++) {
    int64_t x = ev_need_int(ev, v->u.seq.v[i], NULL, loc, what);
    if (x < INT32_MIN || x > INT32_MAX) ev_fail(ev, loc, "%s: %lld is out of range", what, (long long)x);
    l.v[i] = (int)x;
  }
  return l;
}

static tc_int_list int_list_arg(tc_ev *ev, tc_args *a, int i, const char *what) {
  return int_list_of(ev, a->p[i], arg_loc(a, i), what);
}

static tc_int_lists int_lists_arg(tc_ev *ev, tc_args *a, int i, const char *what) {
  tc_int_lists l = {0, NULL};
  tc_val *v = a->p[i];
  if (!v || v->kind == TV_NONE) return l;
  if (v->kind != TV_LIST && v->kind != TV_TUPLE)
    ev_fail(ev, arg_loc(a, i), "%s must be a list of lists of ints, not %s", what, tv_kind_name(v));
  l.n = v->u.seq.n;
  l.v = TC_NEW_ARRAY(ev->ir, tc_int_list, l.n > 0 ? l.n : 1);
  for (int j = 0; j < l.n; j++) l.v[j] = int_list_of(ev, v->u.seq.v[j], arg_loc(a, i), what);
  return l;
}

static tc_val *t_pipelined(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *r = range_like(ev, a, TR_PIPELINED, "T.Pipelined");
  r->u.range.num_stages = 0;
  if (a->p[2] && a->p[2]->kind != TV_NONE) {
    int64_t st = need_int_arg(ev, a, 2, "num_stages of T.Pipelined");
    if (st < 0 || st > 16) ev_fail(ev, arg_loc(a, 2), "num_stages must be between 0 and 16, got %lld", (long long)st);
    r->u.range.num_stages = (int)st;
  }
  /* order / stage / sync / group steer the GPU schedule; they do not change results */
  tc_pipeline_args *p = &r->u.range.pipe;
  p->order = int_list_arg(ev, a, 3, "order of T.Pipelined");
  p->stage = int_list_arg(ev, a, 4, "stage of T.Pipelined");
  p->sync = int_lists_arg(ev, a, 5, "sync of T.Pipelined");
  p->group = int_lists_arg(ev, a, 6, "group of T.Pipelined");
  for (int i = 0; i < p->order.n; i++)
    if (p->order.v[i] < -1) ev_fail(ev, arg_loc(a, 3), "order of T.Pipelined: entry %d is %d, not a position or -1", i, p->order.v[i]);
  for (int i = 0; i < p->stage.n; i++)
    if (p->stage.v[i] < -1) ev_fail(ev, arg_loc(a, 4), "stage of T.Pipelined: entry %d is %d, not a stage or -1", i, p->stage.v[i]);
  if (p->order.n && p->stage.n && p->order.n != p->stage.n)
    ev_fail(ev, call_loc(a), "T.Pipelined: order has %d entries but stage has %d; give one of each per statement", p->order.n,
            p->stage.n);
  return r;
}

static tc_val *t_vectorized(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return range_like(ev, a, TR_VECTORIZED, "T.vectorized");
}

/* ---------------------------------------------------------------- tile operations */

static tc_val *t_copy(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *src = a->p[0], *dst = a->p[1];
  tc_loc loc = call_loc(a);
  if (src->kind == TV_ELEM && dst->kind == TV_ELEM)
    ev_fail(ev, loc, "T.copy: both operands are single elements; give a whole buffer or a slice for at least one");
  tc_region rs, rd;
  if (src->kind == TV_ELEM) {
    rd = ev_region(ev, dst, NULL, a->pnode[1], arg_loc(a, 1), "T.copy");
    rs = ev_region(ev, src, &rd, a->pnode[0], arg_loc(a, 0), "T.copy");
  } else {
    rs = ev_region(ev, src, NULL, a->pnode[0], arg_loc(a, 0), "T.copy");
    rd = ev_region(ev, dst, &rs, a->pnode[1], arg_loc(a, 1), "T.copy");
  }
  if (!same_shape(&rs, &rd))
    ev_fail(ev, loc, "T.copy: the source '%s' has shape %s but the destination '%s' has shape %s",
            ev_node_text(ev, a->pnode[0]), shape_cstr(ev, &rs), ev_node_text(ev, a->pnode[1]), shape_cstr(ev, &rd));
  /* coalesced_width / disable_tma / eviction_policy are performance hints, kept for the GPU;
   * loop_layout is accepted and not modelled */
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_COPY, loc);
  s->u.copy.src = rs;
  s->u.copy.dst = rd;
  if (a->p[2] && a->p[2]->kind != TV_NONE) {
    int64_t w = arg_int(ev, a, 2, 0, "coalesced_width of T.copy");
    if (w < 1 || w > 1024) ev_fail(ev, arg_loc(a, 2), "coalesced_width must be between 1 and 1024, got %lld", (long long)w);
    s->u.copy.coalesced_width = (int)w;
  }
  s->u.copy.disable_tma = arg_bool(ev, a, 3, false);
  if (a->p[4] && a->p[4]->kind != TV_NONE) {
    static const char *const pol[] = {"evict_normal", "evict_first", "evict_last"};
    tc_val *e = a->p[4];
    int found = -1;
    for (int i = 0; e->kind == TV_STR && i < 3; i++)
      if (strcmp(e->u.str.s, pol[i]) == 0) found = i;
    if (found < 0) ev_fail(ev, arg_loc(a, 4), "eviction_policy must be \"evict_normal\", \"evict_first\" or \"evict_last\"");
    s->u.copy.eviction_policy = (tc_eviction_policy)found;
  }
  ev_emit(ev, s, loc, "T.copy");
  return tv_none(ev);
}

static void gemm_dims(tc_ev *ev, const tc_region *r, const tc_ast *node, tc_loc loc, const char *which, int64_t out[2]) {
  int64_t sq[8];
  int n = tc_region_squeezed(r, sq, 8);
  if (n == 1 && r->ndim >= 2) { /* a (1, K) tile squeezes to 1-D: keep its last two dims */
    out[0] = r->r[r->ndim - 2].extent;
    out[1] = r->r[r->ndim - 1].extent;
    return;
  }
  if (n != 2)
    ev_fail(ev, loc, "T.gemm: %s must be a 2-D tile, but '%s' has shape %s", which, ev_node_text(ev, node), shape_cstr(ev, r));
  out[0] = sq[0];
  out[1] = sq[1];
}

tc_val *ev_t_gemm(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_region ra = ev_region(ev, a->p[0], NULL, a->pnode[0], arg_loc(a, 0), "T.gemm");
  tc_region rb = ev_region(ev, a->p[1], NULL, a->pnode[1], arg_loc(a, 1), "T.gemm");
  tc_region rc = ev_region(ev, a->p[2], NULL, a->pnode[2], arg_loc(a, 2), "T.gemm");
  bool ta = arg_bool(ev, a, 3, false), tb = arg_bool(ev, a, 4, false);
  int64_t da[2], db[2], dc[2];
  gemm_dims(ev, &ra, a->pnode[0], arg_loc(a, 0), "A", da);
  gemm_dims(ev, &rb, a->pnode[1], arg_loc(a, 1), "B", db);
  gemm_dims(ev, &rc, a->pnode[2], arg_loc(a, 2), "C", dc);
  int64_t M = ta ? da[1] : da[0], K = ta ? da[0] : da[1];
  int64_t K2 = tb ? db[1] : db[0], N = tb ? db[0] : db[1];
  if (K != K2)
    ev_fail(ev, loc,
            "T.gemm: the reduction dimensions do not match: A%s is (%lld, %lld) and B%s is (%lld, %lld), so K is %lld "
            "for A but %lld for B",
            ta ? " (transposed)" : "", (long long)da[0], (long long)da[1], tb ? " (transposed)" : "", (long long)db[0],
            (long long)db[1], (long long)K, (long long)K2);
  if (dc[0] != M || dc[1] != N)
    ev_fail(ev, loc, "T.gemm: C has shape (%lld, %lld) but A @ B has shape (%lld, %lld)", (long long)dc[0], (long long)dc[1],
            (long long)M, (long long)N);
  tc_gemm_policy policy = TC_POLICY_SQUARE;
  if (a->p[5] && a->p[5]->kind != TV_NONE) {
    if (a->p[5]->kind == TV_ENUM) policy = (tc_gemm_policy)a->p[5]->u.en.value;
    else if (a->p[5]->kind == TV_INT && a->p[5]->u.i >= 0 && a->p[5]->u.i <= 2) policy = (tc_gemm_policy)a->p[5]->u.i;
    else ev_fail(ev, arg_loc(a, 5), "policy= must be a T.GemmWarpPolicy (Square, FullRow or FullCol)");
  }
  int64_t kp = arg_int(ev, a, 7, 1, "k_pack of T.gemm");
  if (kp < 1 || kp > 8) ev_fail(ev, arg_loc(a, 7), "k_pack must be between 1 and 8, got %lld", (long long)kp);
  int64_t wg_wait = arg_int(ev, a, 8, 0, "wg_wait of T.gemm");
  if (wg_wait < -1 || wg_wait > 64) ev_fail(ev, arg_loc(a, 8), "wg_wait must be between -1 and 64, got %lld", (long long)wg_wait);
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_GEMM, loc);
  s->u.gemm.a = ra;
  s->u.gemm.b = rb;
  s->u.gemm.c = rc;
  s->u.gemm.trans_a = ta;
  s->u.gemm.trans_b = tb;
  s->u.gemm.clear_accum = arg_bool(ev, a, 6, false);
  s->u.gemm.policy = policy;
  s->u.gemm.k_pack = (int)kp;
  s->u.gemm.wg_wait = (int)wg_wait;
  ev_emit(ev, s, loc, "T.gemm");
  return tv_none(ev);
}

static tc_val *fill_common(tc_ev *ev, tc_args *a, tc_val *value, const char *what) {
  tc_loc loc = call_loc(a);
  tc_region r;
  if (a->p[0]->kind == TV_ELEM) { /* T.fill(buf[i, j], v): TileLang fills the one element */
    tc_buffer *b = a->p[0]->u.elem.buf;
    memset(&r, 0, sizeof r);
    r.buf = b;
    r.ndim = b->ndim;
    r.r = TC_NEW_ARRAY(ev->ir, tc_range, b->ndim > 0 ? b->ndim : 1);
    for (int i = 0; i < b->ndim; i++) {
      r.r[i].start = a->p[0]->u.elem.idx[i];
      r.r[i].extent = 1;
    }
  } else {
    r = ev_region(ev, a->p[0], NULL, a->pnode[0], arg_loc(a, 0), what);
  }
  tc_val *v = ev_scalar(ev, value, loc);
  if (!ev_is_runtime(v) && !is_lit(v)) ev_fail(ev, loc, "%s: the value must be a scalar, not %s", what, tv_kind_name(v));
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_FILL, loc);
  s->u.fill.dst = r;
  s->u.fill.value = ev_to_expr_as(ev, v, r.buf->dtype, loc);
  ev_emit(ev, s, loc, what);
  return tv_none(ev);
}
static tc_val *t_fill(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return fill_common(ev, a, a->p[1], "T.fill"); }
static tc_val *t_clear(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return fill_common(ev, a, tv_int(ev, 0), "T.clear"); }

static int norm_dim(tc_ev *ev, tc_args *a, int i, int64_t dflt, int ndim, const char *what) {
  int64_t d = arg_int(ev, a, i, dflt, tc_arena_printf(&ev->tmp, "dim of %s", what));
  int64_t nd = d < 0 ? d + ndim : d;
  if (nd < 0 || nd >= ndim)
    ev_fail(ev, a->p[i] ? arg_loc(a, i) : call_loc(a), "%s: dim %lld is out of range for a %d-D buffer", what, (long long)d, ndim);
  return (int)nd;
}

static tc_val *t_reduce(tc_ev *ev, tc_val *self, tc_args *a, tc_reduce_kind kind, const char *what, bool has_clear) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_region rs = ev_region(ev, a->p[0], NULL, a->pnode[0], arg_loc(a, 0), what);
  tc_region rd = ev_region(ev, a->p[1], NULL, a->pnode[1], arg_loc(a, 1), what);
  int dim = norm_dim(ev, a, 2, -1, rs.ndim, what);
  /* the output is the source without `dim`, or with it kept as 1 */
  bool ok = false;
  if (rd.ndim == rs.ndim - 1 || (rs.ndim == 1 && rd.ndim == 1)) {
    ok = true;
    for (int i = 0, j = 0; i < rs.ndim; i++) {
      if (i == dim) continue;
      if (j >= rd.ndim || rd.r[j].extent != rs.r[i].extent) ok = false;
      j++;
    }
    if (rs.ndim == 1) ok = rd.r[0].extent == 1;
  }
  if (!ok && rd.ndim == rs.ndim) {
    ok = true;
    for (int i = 0; i < rs.ndim; i++)
      if (rd.r[i].extent != (i == dim ? 1 : rs.r[i].extent)) ok = false;
  }
  if (!ok) {
    tc_strbuf sb;
    tc_sb_init(&sb);
    tc_sb_putc(&sb, '(');
    int cnt = 0;
    for (int i = 0; i < rs.ndim; i++)
      if (i != dim) tc_sb_printf(&sb, "%s%lld", cnt++ ? ", " : "", (long long)rs.r[i].extent);
    if (cnt == 0) tc_sb_puts(&sb, "1");
    if (cnt <= 1) tc_sb_putc(&sb, ',');
    tc_sb_putc(&sb, ')');
    char expect[200];
    snprintf(expect, sizeof expect, "%s", tc_sb_cstr(&sb));
    tc_sb_free(&sb);
    ev_fail(ev, loc, "%s: the output '%s' has shape %s, but reducing '%s' of shape %s along dim %d gives %s", what,
            ev_node_text(ev, a->pnode[1]), full_shape_cstr(ev, &rd), ev_node_text(ev, a->pnode[0]), full_shape_cstr(ev, &rs),
            dim, expect);
  }
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_REDUCE, loc);
  s->u.reduce.op = kind;
  s->u.reduce.src = rs;
  s->u.reduce.dst = rd;
  s->u.reduce.dim = dim;
  s->u.reduce.clear = has_clear ? arg_bool(ev, a, 3, true) : true;
  ev_emit(ev, s, loc, what);
  return tv_none(ev);
}
static tc_val *t_reduce_max(tc_ev *ev, tc_val *self, tc_args *a) { return t_reduce(ev, self, a, TC_RED_MAX, "T.reduce_max", true); }
static tc_val *t_reduce_min(tc_ev *ev, tc_val *self, tc_args *a) { return t_reduce(ev, self, a, TC_RED_MIN, "T.reduce_min", true); }
static tc_val *t_reduce_sum(tc_ev *ev, tc_val *self, tc_args *a) { return t_reduce(ev, self, a, TC_RED_SUM, "T.reduce_sum", true); }
static tc_val *t_reduce_absmax(tc_ev *ev, tc_val *self, tc_args *a) { return t_reduce(ev, self, a, TC_RED_ABSMAX, "T.reduce_absmax", true); }
static tc_val *t_reduce_abssum(tc_ev *ev, tc_val *self, tc_args *a) { return t_reduce(ev, self, a, TC_RED_ABSSUM, "T.reduce_abssum", false); }

static tc_val *t_cumsum(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_region rs = ev_region(ev, a->p[0], NULL, a->pnode[0], arg_loc(a, 0), "T.cumsum");
  tc_region rd = rs;
  if (a->p[1] && a->p[1]->kind != TV_NONE) rd = ev_region(ev, a->p[1], NULL, a->pnode[1], arg_loc(a, 1), "T.cumsum");
  if (rd.ndim != rs.ndim || !same_shape(&rs, &rd))
    ev_fail(ev, loc, "T.cumsum: the source has shape %s but the destination has shape %s", full_shape_cstr(ev, &rs),
            full_shape_cstr(ev, &rd));
  int dim = norm_dim(ev, a, 2, 0, rs.ndim, "T.cumsum");
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_CUMSUM, loc);
  s->u.cumsum.src = rs;
  s->u.cumsum.dst = rd;
  s->u.cumsum.dim = dim;
  s->u.cumsum.reverse = arg_bool(ev, a, 3, false);
  ev_emit(ev, s, loc, "T.cumsum");
  return tv_none(ev);
}

static tc_val *t_atomic_add(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_val *dst = a->p[0], *val = a->p[1];
  bool return_prev = a->p[3] && a->p[3]->kind != TV_NONE && ev_truth(ev, a->p[3], arg_loc(a, 3));
  /* use_tma=True asks TileLang for a TMA reduction (cp.reduce.async.bulk, sm_90+): the same sums
   * by another instruction, so it is checked and dropped */
  (void)arg_bool(ev, a, 4, false);
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_ATOMIC_ADD, loc);
  tc_val *sv = ev_scalar(ev, val, loc);
  bool scalar_value = is_lit(sv) || (ev_is_runtime(val) && !(val->kind == TV_ELEM && dst->kind != TV_ELEM));
  if (dst->kind == TV_ELEM && scalar_value) {
    tc_buffer *b = dst->u.elem.buf;
    s->u.atomic.buf = b;
    s->u.atomic.nidx = b->ndim;
    s->u.atomic.idx = dst->u.elem.idx;
    s->u.atomic.value = ev_to_expr_as(ev, sv, b->dtype, loc);
  } else if (dst->kind == TV_BUFFER && dst->u.buf->scope == TC_SCOPE_VAR && scalar_value) {
    tc_buffer *b = dst->u.buf;
    s->u.atomic.buf = b;
    s->u.atomic.nidx = 1;
    s->u.atomic.idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
    s->u.atomic.idx[0] = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
    s->u.atomic.value = ev_to_expr_as(ev, sv, b->dtype, loc);
  } else {
    if (scalar_value) ev_fail(ev, loc, "T.atomic_add: adding a scalar needs an element destination such as %s[i, j]", ev_node_text(ev, a->pnode[0]));
    if (return_prev) ev_unsupported(ev, arg_loc(a, 3), "T.atomic_add(..., return_prev=True) on tiles (tilec returns the previous value of one element)");
    tc_region rs, rd;
    if (dst->kind == TV_ELEM) {
      rs = ev_region(ev, val, NULL, a->pnode[1], arg_loc(a, 1), "T.atomic_add");
      rd = ev_region(ev, dst, &rs, a->pnode[0], arg_loc(a, 0), "T.atomic_add");
    } else {
      rd = ev_region(ev, dst, NULL, a->pnode[0], arg_loc(a, 0), "T.atomic_add");
      rs = ev_region(ev, val, &rd, a->pnode[1], arg_loc(a, 1), "T.atomic_add");
    }
    if (!same_shape(&rs, &rd))
      ev_fail(ev, loc, "T.atomic_add: the value '%s' has shape %s but the destination '%s' has shape %s",
              ev_node_text(ev, a->pnode[1]), shape_cstr(ev, &rs), ev_node_text(ev, a->pnode[0]), shape_cstr(ev, &rd));
    s->u.atomic.dst = rd;
    s->u.atomic.src = rs;
  }
  if (return_prev) { /* the element's value before this thread's addition, in a cell of its own */
    if (!ev->cur) ev_fail(ev, loc, "T.atomic_add must be inside 'with T.Kernel(...)'");
    tc_expr **shape = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
    shape[0] = tc_ir_int(ev->ir, 1, tc_index_dtype(), loc);
    tc_buffer *prev = tc_ir_new_buffer(ev->ir, ev->k, "prev", s->u.atomic.buf->dtype, TC_SCOPE_VAR, 1, shape, loc);
    emit_alloc(ev, prev, loc, "T.atomic_add");
    s->u.atomic.prev = prev;
    ev_emit(ev, s, loc, "T.atomic_add");
    tc_expr **idx = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
    idx[0] = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
    return tv_expr(ev, tc_ir_load(ev->ir, prev, 1, idx, loc));
  }
  ev_emit(ev, s, loc, "T.atomic_add");
  return tv_none(ev);
}

static tc_val *t_thread_binding(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int64_t axis = arg_int(ev, a, 0, 0, "the axis of T.get_thread_binding");
  if (axis < 0 || axis > 2) ev_fail(ev, arg_loc(a, 0), "T.get_thread_binding takes an axis 0, 1 or 2, got %lld", (long long)axis);
  if (!ev->cur) ev_fail(ev, call_loc(a), "T.get_thread_binding must be inside 'with T.Kernel(...)'");
  if (axis >= ev->threads_ndim)
    ev_fail(ev, call_loc(a), "T.get_thread_binding(%lld): the kernel has %d thread dimension%s", (long long)axis,
            ev->threads_ndim, ev->threads_ndim == 1 ? "" : "s");
  if (!ev->thread_vars[axis]) {
    static const char *const names[] = {"tx", "ty", "tz"};
    ev->thread_vars[axis] = tc_ir_new_var(ev->ir, ev->k, names[axis], tc_index_dtype(), TC_VAR_THREAD_IDX, call_loc(a));
    ev->thread_vars[axis]->axis = (int)axis;
  }
  return tv_expr(ev, tc_ir_var_ref(ev->ir, ev->thread_vars[axis], call_loc(a)));
}

/* tx = T.thread_binding(0, threads, thread="threadIdx.x") inside T.Kernel: TVM's builder enters
 * a thread-bound loop over the rest of the block, which merges with the launch's own threadIdx.x
 * of the same extent, so the name is the kernel's thread index. Another extent would launch
 * more or fewer threads than T.Kernel says; tilec refuses that. (The `for` form is not read.) */
static tc_val *t_thread_binding_loop(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  /* TVM's forms: (start, stop, thread), (extent, thread) and (extent, thread=...) */
  int ti = a->p[1] && a->p[1]->kind == TV_STR && (!a->p[2] || a->p[2]->kind == TV_NONE) ? 1 : 2;
  bool has_stop = ti == 2 && a->p[1] && a->p[1]->kind != TV_NONE;
  int64_t start = has_stop ? arg_int(ev, a, 0, 0, "the start of T.thread_binding") : 0;
  int64_t stop = arg_int(ev, a, has_stop ? 1 : 0, 0, "the stop of T.thread_binding");
  if (!a->p[ti] || a->p[ti]->kind != TV_STR) ev_fail(ev, loc, "T.thread_binding needs thread=\"threadIdx.x\" (or .y, .z)");
  const char *tag = a->p[ti]->u.str.s;
  int axis = !strcmp(tag, "threadIdx.x") ? 0 : !strcmp(tag, "threadIdx.y") ? 1 : !strcmp(tag, "threadIdx.z") ? 2 : -1;
  if (axis < 0)
    ev_fail(ev, arg_loc(a, ti), "T.thread_binding: thread must be \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\", not '%s'%s", tag,
            !strncmp(tag, "blockIdx", 8) ? " (blocks come from T.Kernel's grid)" : "");
  if (!ev->cur) ev_fail(ev, loc, "T.thread_binding must be inside 'with T.Kernel(...)'");
  int64_t have = axis < ev->threads_ndim ? ev->threads[axis] : 1;
  if (start != 0 || stop != have)
    ev_fail(ev, loc, "T.thread_binding(%lld, %lld) on %s: the kernel launches %lld thread%s there; tilec binds only the whole range "
                     "[0, %lld)", (long long)start, (long long)stop, tag, (long long)have, have == 1 ? "" : "s", (long long)have);
  if (axis >= ev->threads_ndim) return tv_int(ev, 0); /* a unit dimension the kernel does not name */
  tc_args b = *a;
  tc_val *ax = tv_int(ev, axis);
  tc_val *p[1] = {ax};
  b.p = p;
  b.n = 1;
  return t_thread_binding(ev, NULL, &b);
}

static tc_val *t_use_swizzle(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int64_t panel = arg_int(ev, a, 0, 10, "panel_size of T.use_swizzle");
  const char *order = "row";
  if (a->p[1] && a->p[1]->kind != TV_NONE) {
    if (a->p[1]->kind != TV_STR) ev_fail(ev, arg_loc(a, 1), "order= must be a string such as \"row\"");
    order = a->p[1]->u.str.s;
    if (strcmp(order, "row") != 0 && strcmp(order, "col") != 0 && strcmp(order, "column") != 0 && strcmp(order, "mlx") != 0)
      ev_fail(ev, arg_loc(a, 1), "order= must be \"row\", \"column\" or \"mlx\", not '%s'", order);
  }
  bool enable = arg_bool(ev, a, 2, true);
  if (!ev->cur) ev_fail(ev, call_loc(a), "T.use_swizzle must be inside 'with T.Kernel(...)'");
  if (panel < 1 || panel > INT32_MAX) ev_fail(ev, arg_loc(a, 0), "panel_size of T.use_swizzle must be positive, got %lld", (long long)panel);
  /* a kernel-wide property: the block order of the launch */
  ev->k->swizzle_panel = (int)panel;
  ev->k->swizzle_enable = enable;
  ev->k->swizzle_order = strcmp(order, "row") == 0 ? TC_SWIZZLE_ROW : strcmp(order, "mlx") == 0 ? TC_SWIZZLE_MLX : TC_SWIZZLE_COLUMN;
  return tv_none(ev);
}

static tc_val *t_print(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = call_loc(a);
  tc_stmt *s = tc_ir_stmt(ev->ir, TC_ST_PRINT, loc);
  tc_val *v = a->p[0] ? a->p[0] : tv_none(ev);
  if (v->kind == TV_NONE) s->u.print.msg = "";
  else if (v->kind == TV_BUFFER && v->u.buf->scope != TC_SCOPE_VAR) s->u.print.buf = v->u.buf;
  else if (v->kind == TV_STR && !a->p[1]) s->u.print.msg = tc_arena_strdup(ev->ir, v->u.str.s);
  else s->u.print.value = ev_to_expr(ev, v, loc);
  if (a->p[1] && a->p[1]->kind != TV_NONE) {
    if (a->p[1]->kind != TV_STR) ev_fail(ev, arg_loc(a, 1), "msg= of T.print must be a string");
    s->u.print.msg = tc_arena_strdup(ev->ir, a->p[1]->u.str.s);
  }
  if (!s->u.print.msg) s->u.print.msg = "";
  ev_emit(ev, s, loc, "T.print");
  return tv_none(ev);
}

/* ---------------------------------------------------------------- scalar functions */

static tc_val *t_ceildiv(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *x = ev_scalar(ev, a->p[0], arg_loc(a, 0)), *y = ev_scalar(ev, a->p[1], arg_loc(a, 1));
  if ((x->kind == TV_INT || x->kind == TV_BOOL) && (y->kind == TV_INT || y->kind == TV_BOOL)) {
    tc_val *num = ev_binop(ev, TC_P_MINUS, tv_int(ev, 0), x, call_loc(a));
    tc_val *q = ev_binop(ev, TC_P_DSLASH, num, y, call_loc(a)); /* -((-x) // y) */
    return ev_binop(ev, TC_P_MINUS, tv_int(ev, 0), q, call_loc(a));
  }
  if (!ev_is_runtime(x) && !is_lit(x)) ev_fail(ev, arg_loc(a, 0), "T.ceildiv expects integers, not %s", tv_kind_name(x));
  if (!ev_is_runtime(y) && !is_lit(y)) ev_fail(ev, arg_loc(a, 1), "T.ceildiv expects integers, not %s", tv_kind_name(y));
  tc_val *s = ev_binop(ev, TC_P_MINUS, ev_binop(ev, TC_P_PLUS, x, y, call_loc(a)), tv_int(ev, 1), call_loc(a));
  return ev_binop(ev, TC_P_DSLASH, s, y, call_loc(a));
}

static const struct { const char *name; tc_expr_op op; } math_ops[] = {
    {"T.exp", TC_OP_EXP},   {"T.exp2", TC_OP_EXP2}, {"T.log", TC_OP_LOG},         {"T.log2", TC_OP_LOG2},
    {"T.sqrt", TC_OP_SQRT}, {"T.rsqrt", TC_OP_RSQRT}, {"T.tanh", TC_OP_TANH},     {"T.sigmoid", TC_OP_SIGMOID},
    {"T.sin", TC_OP_SIN},   {"T.cos", TC_OP_COS},   {"T.floor", TC_OP_FLOOR},     {"T.ceil", TC_OP_CEIL},
};

#define MATH_FN(fname, idx)                                                                \
  static tc_val *fname(tc_ev *ev, tc_val *self, tc_args *a) {                              \
    (void)self;                                                                            \
    return ev_ir_math(ev, math_ops[idx].op, math_ops[idx].name, a->p[0], arg_loc(a, 0));   \
  }
MATH_FN(t_exp, 0)
MATH_FN(t_exp2, 1)
MATH_FN(t_log, 2)
MATH_FN(t_log2, 3)
MATH_FN(t_sqrt, 4)
MATH_FN(t_rsqrt, 5)
MATH_FN(t_tanh, 6)
MATH_FN(t_sigmoid, 7)
MATH_FN(t_sin, 8)
MATH_FN(t_cos, 9)
MATH_FN(t_floor, 10)
MATH_FN(t_ceil, 11)

static tc_val *t_abs(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *x = ev_scalar(ev, a->p[0], arg_loc(a, 0));
  if (x->kind == TV_INT) {
    if (x->u.i == INT64_MIN) ev_fail(ev, arg_loc(a, 0), "integer overflow in abs");
    return tv_int(ev, x->u.i < 0 ? -x->u.i : x->u.i);
  }
  if (x->kind == TV_FLOAT) return tv_float(ev, fabs(x->u.f));
  tc_expr *e = ev_to_expr(ev, x, arg_loc(a, 0));
  if (tc_dtype_is_bool(e->dtype)) e = ev_cast(ev, e, tc_dt(TC_DT_INT32), arg_loc(a, 0));
  return tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_ABS, e, call_loc(a)));
}

/* T.isnan / T.isinf / T.isfinite: comparisons every backend keeps exactly (x != x holds for NaN
 * alone; |x| == inf for the infinities; |x| < inf for the rest). No target compiles with
 * finite-math assumptions (Metal's fast math is off, src/target/metal/runtime.c). Integers are
 * finite. */
enum { FP_ISNAN, FP_ISINF, FP_ISFINITE };
static tc_val *fp_class(tc_ev *ev, tc_args *a, int what) {
  tc_val *x = ev_scalar(ev, a->p[0], arg_loc(a, 0));
  tc_loc loc = call_loc(a);
  if (x->kind == TV_INT || x->kind == TV_BOOL) return tv_bool(ev, what == FP_ISFINITE);
  if (x->kind == TV_FLOAT)
    return tv_bool(ev, what == FP_ISNAN ? isnan(x->u.f) : what == FP_ISINF ? isinf(x->u.f) : isfinite(x->u.f));
  tc_expr *e = ev_to_expr(ev, x, arg_loc(a, 0));
  if (!tc_dtype_is_float(e->dtype)) return tv_bool(ev, what == FP_ISFINITE);
  if (what == FP_ISNAN) return ev_compare(ev, TC_CMP_NE, x, x, loc);
  tc_val *mag = tv_expr(ev, tc_ir_unary(ev->ir, TC_OP_ABS, e, loc));
  return ev_compare(ev, what == FP_ISINF ? TC_CMP_EQ : TC_CMP_LT, mag, tv_float(ev, INFINITY), loc);
}
static tc_val *t_isnan(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return fp_class(ev, a, FP_ISNAN); }
static tc_val *t_isinf(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return fp_class(ev, a, FP_ISINF); }
static tc_val *t_isfinite(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return fp_class(ev, a, FP_ISFINITE); }

static tc_val *minmax(tc_ev *ev, tc_args *a, bool is_max) {
  tc_val *x = ev_scalar(ev, a->p[0], arg_loc(a, 0)), *y = ev_scalar(ev, a->p[1], arg_loc(a, 1));
  if (!ev_is_runtime(x) && !ev_is_runtime(y)) {
    tc_val *lt = ev_compare(ev, TC_CMP_LT, x, y, call_loc(a));
    return (lt->u.b == is_max) ? y : x;
  }
  return ev_ir_minmax(ev, is_max ? TC_OP_MAX : TC_OP_MIN, x, y, call_loc(a));
}
static tc_val *t_max(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return minmax(ev, a, true); }
static tc_val *t_min(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return minmax(ev, a, false); }

static tc_val *t_clamp(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_args b = *a;
  tc_val *p[2] = {a->p[0], a->p[2]};
  const tc_ast *n[2] = {a->pnode[0], a->pnode[2]};
  b.p = p;
  b.pnode = n;
  tc_val *lo_args[2] = {minmax(ev, &b, false), a->p[1]};
  const tc_ast *ln[2] = {a->pnode[0], a->pnode[1]};
  b.p = lo_args;
  b.pnode = ln;
  return minmax(ev, &b, true);
}

static tc_val *t_pow(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return ev_binop(ev, TC_P_DSTAR, ev_scalar(ev, a->p[0], arg_loc(a, 0)), ev_scalar(ev, a->p[1], arg_loc(a, 1)), call_loc(a));
}

static tc_val *t_floordiv(tc_ev *ev, tc_val *self, tc_args *a) {
  return ev_binop(ev, self ? TC_P_PERCENT : TC_P_DSLASH, a->p[0], a->p[1], call_loc(a));
}

/* T.shift_left(x, y) / T.shift_right(x, y): TVM's left_shift / right_shift, which Python's `<<`
 * and `>>` on expressions call, so they mean exactly what `x << y` and `x >> y` mean here. */
static tc_val *t_shift_left(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return ev_binop(ev, TC_P_LSHIFT, a->p[0], a->p[1], call_loc(a));
}
static tc_val *t_shift_right(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return ev_binop(ev, TC_P_RSHIFT, a->p[0], a->p[1], call_loc(a));
}

/* T.truncdiv / T.truncmod: C's rounding toward zero (the IR's DIV on integers). */
static tc_val *trunc_common(tc_ev *ev, tc_args *a, bool mod) {
  tc_val *x = ev_scalar(ev, a->p[0], arg_loc(a, 0)), *y = ev_scalar(ev, a->p[1], arg_loc(a, 1));
  tc_loc loc = call_loc(a);
  if ((x->kind == TV_INT || x->kind == TV_BOOL) && (y->kind == TV_INT || y->kind == TV_BOOL)) {
    int64_t p = x->kind == TV_INT ? x->u.i : x->u.b, q = y->kind == TV_INT ? y->u.i : y->u.b;
    if (q == 0) ev_fail(ev, loc, "integer division by zero");
    if (p == INT64_MIN && q == -1) return tv_int(ev, mod ? 0 : p); /* wraps, as in C */
    return tv_int(ev, mod ? p % q : p / q);
  }
  tc_expr *ex = ev_to_expr(ev, x, arg_loc(a, 0)), *ey = ev_to_expr(ev, y, arg_loc(a, 1));
  tc_dtype d = ev_promote(ex->dtype, ey->dtype);
  if (!tc_dtype_is_int(d))
    ev_fail(ev, loc, "%s expects integer operands, got %s", mod ? "T.truncmod" : "T.truncdiv", ev_dtype_name(d));
  ex = ev_cast(ev, ex, d, loc);
  ey = ev_cast(ev, ey, d, loc);
  tc_expr *q = tc_ir_binary(ev->ir, TC_OP_DIV, ex, ey, loc);
  if (!mod) return tv_expr(ev, q);
  return tv_expr(ev, tc_ir_binary(ev->ir, TC_OP_SUB, ex, tc_ir_binary(ev->ir, TC_OP_MUL, q, ey, loc), loc));
}
static tc_val *t_truncdiv(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return trunc_common(ev, a, false); }
static tc_val *t_truncmod(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return trunc_common(ev, a, true); }

static tc_val *t_if_then_else(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return ev_ir_select(ev, a->p[0], a->p[1], a->p[2], call_loc(a));
}

static tc_val *do_cast(tc_ev *ev, tc_val *x, tc_val *dtv, tc_loc xloc, tc_loc dloc, tc_loc loc) {
  tc_dtype dt;
  ev_get_dtype(ev, dtv, &dt, dloc, "the dtype of a cast");
  x = ev_scalar(ev, x, xloc);
  if (!ev_is_runtime(x) && !is_lit(x)) ev_fail(ev, xloc, "cannot cast %s to %s", tv_kind_name(x), ev_dtype_name(dt));
  return tv_expr(ev, ev_to_expr_as(ev, x, dt, loc));
}
/* T.dtype("float16") / T.dtype(T.float16): a dtype value. Also what `dtype: T.dtype = ...`
 * annotations name (annotations of compile-time parameters are only hints). */
static tc_val *t_dtype(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_dtype dt;
  ev_get_dtype(ev, a->p[0], &dt, arg_loc(a, 0), "T.dtype()");
  return tv_dtype(ev, dt);
}

/* T.reinterpret(value, dtype) (TileLang's order, like T.cast; the older (dtype, value) is
 * accepted too, as TileLang does) and tvm.tirx.reinterpret(dtype, value): the value's bits read
 * as dtype, of the same width. */
static tc_val *do_reinterpret(tc_ev *ev, tc_args *a, bool dtype_first) {
  tc_loc loc = call_loc(a);
  int vi = dtype_first ? 1 : 0, di = dtype_first ? 0 : 1;
  if (!dtype_first && a->p[0]->kind == TV_DTYPE && a->p[1]->kind != TV_DTYPE) vi = 1, di = 0;
  tc_dtype to;
  ev_get_dtype(ev, a->p[di], &to, arg_loc(a, di), "the dtype of reinterpret");
  tc_val *x = ev_scalar(ev, a->p[vi], arg_loc(a, vi));
  if (!ev_is_runtime(x) && !is_lit(x)) ev_fail(ev, arg_loc(a, vi), "reinterpret expects a scalar value, not %s", tv_kind_name(x));
  tc_expr *e = ev_to_expr(ev, x, arg_loc(a, vi));
  int fb = tc_dtype_bits(e->dtype), tb = tc_dtype_bits(to);
  if (fb != tb)
    ev_fail(ev, loc, "reinterpret: %s has %d bits but %s has %d; a reinterpretation keeps the width", ev_dtype_name(e->dtype), fb,
            ev_dtype_name(to), tb);
  if (fb != 8 && fb != 16 && fb != 32 && fb != 64)
    ev_unsupported(ev, loc, tc_arena_printf(&ev->tmp, "reinterpret of a %d-bit type", fb));
  if (tc_dtype_eq(e->dtype, to)) return tv_expr(ev, e);
  tc_expr **args = TC_NEW_ARRAY(ev->ir, tc_expr *, 1);
  args[0] = e;
  return tv_expr(ev, tc_ir_call(ev->ir, "reinterpret", to, 1, args, loc));
}
static tc_val *t_reinterpret(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return do_reinterpret(ev, a, false); }
static tc_val *t_tirx_reinterpret(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return do_reinterpret(ev, a, true); }
/* tvm.tirx.const(value, dtype): a constant of that dtype */
static tc_val *t_tirx_const(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (!a->p[1] || a->p[1]->kind == TV_NONE) return a->p[0];
  return do_cast(ev, a->p[0], a->p[1], arg_loc(a, 0), arg_loc(a, 1), call_loc(a));
}

static tc_val *t_cast(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return do_cast(ev, a->p[0], a->p[1], arg_loc(a, 0), arg_loc(a, 1), call_loc(a));
}
static tc_val *t_Cast(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  return do_cast(ev, a->p[1], a->p[0], arg_loc(a, 1), arg_loc(a, 0), call_loc(a));
}
tc_val *ev_astype(tc_ev *ev, tc_val *self, tc_args *a);
tc_val *ev_astype(tc_ev *ev, tc_val *self, tc_args *a) {
  return do_cast(ev, self, a->p[0], call_loc(a), arg_loc(a, 0), call_loc(a));
}

static double float_max(tc_dtype dt) {
  switch (dt.code) {
  case TC_DT_FLOAT16: return 65504.0;
  case TC_DT_BFLOAT16: return 3.3895313892515355e38;
  case TC_DT_FLOAT32: return 3.4028234663852886e38;
  case TC_DT_FLOAT64: return 1.7976931348623157e308;
  case TC_DT_FLOAT8_E4M3FN: return 448.0;
  case TC_DT_FLOAT8_E5M2: return 57344.0;
  case TC_DT_FLOAT8_E4M3FNUZ: return 240.0;
  case TC_DT_FLOAT8_E5M2FNUZ: return 57344.0;
  case TC_DT_FLOAT8_E8M0FNU: return 1.7014118346046923e38;
  case TC_DT_FLOAT4_E2M1FN: return 6.0;
  default: return 0;
  }
}

static tc_val *t_limit(tc_ev *ev, tc_args *a, int which /* 0 inf, 1 max, 2 min */) {
  static const char *const names[] = {"T.infinity", "T.max_value", "T.min_value"};
  tc_dtype dt;
  ev_get_dtype(ev, a->p[0], &dt, arg_loc(a, 0), tc_arena_printf(&ev->tmp, "the dtype of %s", names[which]));
  tc_loc loc = call_loc(a);
  if (tc_dtype_is_float(dt)) {
    if (which == 0) {
      if (dt.code == TC_DT_FLOAT8_E4M3FN || dt.code == TC_DT_FLOAT8_E4M3FNUZ || dt.code == TC_DT_FLOAT8_E5M2FNUZ ||
          dt.code == TC_DT_FLOAT8_E8M0FNU || dt.code == TC_DT_FLOAT4_E2M1FN)
        ev_fail(ev, arg_loc(a, 0), "T.infinity: %s has no infinity", ev_dtype_name(dt));
      return tv_expr(ev, tc_ir_float(ev->ir, INFINITY, dt, loc));
    }
    double m = float_max(dt);
    if (which == 2 && dt.code == TC_DT_FLOAT8_E8M0FNU) m = -5.877471754111438e-39; /* no sign: smallest */
    return tv_expr(ev, tc_ir_float(ev->ir, which == 1 ? m : (dt.code == TC_DT_FLOAT8_E8M0FNU ? 5.877471754111438e-39 : -m), dt, loc));
  }
  if (which == 0) ev_fail(ev, arg_loc(a, 0), "T.infinity needs a float dtype, not %s", ev_dtype_name(dt));
  int bits = tc_dtype_bits(dt);
  int64_t lo, hi;
  if (tc_dtype_is_bool(dt)) lo = 0, hi = 1;
  else if (tc_dtype_is_signed(dt)) {
    hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  } else {
    lo = 0;
    hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << bits) - 1; /* uint64 max is clamped to int64 */
  }
  return tv_expr(ev, tc_ir_int(ev->ir, which == 1 ? hi : lo, dt, loc));
}
static tc_val *t_infinity(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return t_limit(ev, a, 0); }
static tc_val *t_max_value(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return t_limit(ev, a, 1); }
static tc_val *t_min_value(tc_ev *ev, tc_val *self, tc_args *a) { (void)self; return t_limit(ev, a, 2); }

static tc_val *t_identity(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  (void)ev;
  return a->p[0];
}

static tc_val *t_compile(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *f = a->p[0];
  if (f->kind != TV_FUNC || !f->u.func->is_prim_func)
    ev_fail(ev, arg_loc(a, 0), "tilelang.compile expects a @T.prim_func, not %s", tv_kind_name(f));
  tc_func *copy = EV_NEW(ev, tc_func);
  *copy = *f->u.func;
  copy->out_idx = a->p[1];
  tc_val *v = tv_new(ev, TV_FUNC);
  v->u.func = copy;
  return v;
}

/* ---------------------------------------------------------------- tables */

/* TVM's tirx functions TileLang's examples call (`from tvm import tirx`), by the dotted name
 * they are reached by; ev_compat_builtin looks here too. */
static const tc_builtin tirx_builtins[] = {
    {"tvm.tirx.const", "value dtype?", t_tirx_const, 0},
    {"tvm.tirx.reinterpret", "dtype value", t_tirx_reinterpret, 0},
    {"tvm.tirx.Cast", "dtype value", t_Cast, 0},
    {"tvm.tirx.Select", "cond t f", t_if_then_else, 0},
    {"tvm.tirx.Min", "a b", t_min, 0},
    {NULL, NULL, NULL, 0},
};

bool ev_tirx_builtin_prefix(const char *dotted) {
  size_t n = strlen(dotted);
  for (const tc_builtin *b = tirx_builtins; b->name; b++)
    if (strncmp(b->name, dotted, n) == 0 && b->name[n] == '.') return true;
  return false;
}

const tc_builtin *ev_tirx_builtin(const char *dotted) {
  return ev_builtin_find(tirx_builtins, dotted, 0);
}

static const tc_builtin language_builtins[] = {
    {"T.Kernel", "*blocks | threads? is_cpu? prelude?", t_kernel, 0},
    {"T.Parallel", "*extents | coalesced_width? loop_layout? prefer_async? annotations?", t_parallel, 0},
    {"T.parallel", "start stop? | annotations?", ev_t_tir_parallel, 0},
    {"T.Persistent", "domain wave_size index group_size?", ev_t_persistent, 0},
    {"T.Pipelined", "start stop? num_stages? order? stage? sync? group?", t_pipelined, 0},
    {"T.serial", "start stop? step? | annotations?", t_serial, 0},
    {"T.Serial", "start stop? step? | annotations?", t_serial, 0},
    {"T.unroll", "start stop? step? | explicit? unroll_factor?", t_unroll, 0},
    {"T.Unroll", "start stop? step? | explicit? unroll_factor?", t_unroll, 0},
    {"T.vectorized", "start stop? | annotations?", t_vectorized, 0},
    {"T.Vectorized", "start stop? | annotations?", t_vectorized, 0},
    {"T.grid", "*extents", t_grid, 0},
    {"T.sync_threads", "barrier_id? arrive_count?", t_sync_threads, 0},
    {"T.get_block_binding", "dim?", t_block_binding, 0},
    {"T.alloc_shared", "shape dtype scope?", t_alloc_shared, 0},
    {"T.alloc_fragment", "shape dtype scope?", t_alloc_fragment, 0},
    {"T.alloc_local", "shape dtype scope?", t_alloc_local, 0},
    {"T.alloc_buffer", "shape dtype scope?", t_alloc_buffer, 0},
    {"T.alloc_var", "dtype init? scope?", t_alloc_var, 0},
    {"T.alloc_global", "shape dtype", t_alloc_global, 0},
    {"T.rng_init", "seed seq? off? generator?", t_rng_init, 0},
    {"T.rng_rand", "", t_rng_rand, 0},
    {"T.copy", "src dst | coalesced_width? disable_tma? eviction_policy? loop_layout?", t_copy, 0},
    {"T.gemm", "A B C transpose_A? transpose_B? policy? clear_accum? k_pack? wg_wait?", ev_t_gemm, 0},
    {"T.fill", "buffer value", t_fill, 0},
    {"T.clear", "buffer", t_clear, 0},
    {"T.reduce_max", "buffer out dim? clear?", t_reduce_max, 0},
    {"T.reduce_min", "buffer out dim? clear?", t_reduce_min, 0},
    {"T.reduce_sum", "buffer out dim? clear?", t_reduce_sum, 0},
    {"T.reduce_absmax", "buffer out dim? clear?", t_reduce_absmax, 0},
    {"T.reduce_abssum", "buffer out dim?", t_reduce_abssum, 0},
    {"T.cumsum", "src dst? dim? reverse?", t_cumsum, 0},
    {"T.atomic_add", "dst value memory_order? return_prev? use_tma?", t_atomic_add, 0},
    {"T.atomic_addx2", "dst value return_prev?", ev_t_atomic_addx2, 0},
    {"T.atomic_addx4", "dst value return_prev?", ev_t_atomic_addx4, 0},
    {"T.get_thread_binding", "dim?", t_thread_binding, 0},
    {"T.thread_binding", "start stop? thread? | annotations?", t_thread_binding_loop, 0},
    {"T.use_swizzle", "panel_size? order? enable?", t_use_swizzle, 0},
    {"T.alloc_barrier", "arrive_count", ev_t_alloc_barrier, 0},
    {"T.create_list_of_mbarrier", "*arrive_counts", ev_t_create_list_of_mbarrier, 0},
    {"T.get_mbarrier", "barrier_id", ev_t_get_mbarrier, 0},
    {"T.barrier_arrive", "mbarrier", ev_t_barrier_arrive, 0},
    {"T.mbarrier_arrive", "mbarrier cta_id?", ev_t_mbarrier_arrive, 0},
    {"T.barrier_wait", "mbarrier parity", ev_t_barrier_wait, 0},
    {"T.mbarrier_wait_parity", "mbarrier parity", ev_t_mbarrier_wait_parity, 0},
    {"T.ws", "*warp_group_idx", ev_t_ws, 0},
    {"T.tma_copy", "src dst | barrier? cluster_mask? leader_scope_threads? eviction_policy? annotations?", t_tma_copy, 0},
    {"T.no_set_max_nreg", "", t_reg_alloc_hint, 0},
    {"T.disable_warp_group_reg_alloc", "", t_reg_alloc_hint, 0},
    {"T.annotate_producer_reg_dealloc", "reg_count?", t_reg_alloc_hint, 0},
    {"T.annotate_consumer_reg_alloc", "reg_count?", t_reg_alloc_hint, 0},
    {"T.set_max_nreg", "reg_count is_inc", t_reg_alloc_hint, 0},
    {"T.inc_max_nreg", "reg_count", t_reg_alloc_hint, 0},
    {"T.dec_max_nreg", "reg_count", t_reg_alloc_hint, 0},
    {"T.annotate_layout", "layout_map | allow_reannotation? allow_buffer_region?", ev_t_annotate_layout, 0},
    {"T.Layout", "shape forward_fn", ev_t_layout, EV_TAG_LAMBDA_ARGS},
    {"T.Fragment", "shape forward_fn? forward_thread_fn? replicate? forward_index_fn?", ev_t_fragment, EV_TAG_LAMBDA_ARGS},
    {"T.symbolic", "names dtype?", t_symbolic, 0},
    {"T.dynamic", "names dtype?", t_symbolic, 0},
    {"T.clamp", "x lo hi", t_clamp, 0},
    {"T.const", "names dtype?", t_const, 0},
    {"T.empty", "*shape | dtype?", t_empty, 0},
    {"T.Tensor", "shape dtype? data? | scope?", t_tensor, 0},
    {"T.reshape", "src shape", ev_t_reshape, 0},
    {"T.im2col", "img col nhw_step c_step kernel stride dilation pad eviction_policy? annotations?", ev_t_im2col, 0},
    {"T.c2d_im2col", "img col nhw_step c_step kernel stride dilation pad eviction_policy? annotations?", ev_t_im2col, 0},
    {"T.view", "src shape? dtype?", ev_t_view, 0},
    {"T.Buffer", "shape dtype? scope?", t_tensor, 0},
    {"T.print", "obj? msg?", t_print, 0},
    {"T.ceildiv", "a b", t_ceildiv, 0},
    {"T.exp", "x", t_exp, 0},
    {"T.exp2", "x", t_exp2, 0},
    {"T.log", "x", t_log, 0},
    {"T.log2", "x", t_log2, 0},
    {"T.sqrt", "x", t_sqrt, 0},
    {"T.rsqrt", "x", t_rsqrt, 0},
    {"T.tanh", "x", t_tanh, 0},
    {"T.sigmoid", "x", t_sigmoid, 0},
    {"T.sin", "x", t_sin, 0},
    {"T.cos", "x", t_cos, 0},
    {"T.floor", "x", t_floor, 0},
    {"T.ceil", "x", t_ceil, 0},
    {"T.abs", "x", t_abs, 0},
    {"T.isnan", "x", t_isnan, 0},
    {"T.isinf", "x", t_isinf, 0},
    {"T.isfinite", "x", t_isfinite, 0},
    {"T.max", "a b", t_max, 0},
    {"T.min", "a b", t_min, 0},
    {"T.pow", "x y", t_pow, 0},
    {"T.floordiv", "a b", t_floordiv, 0},
    {"T.truncdiv", "a b", t_truncdiv, 0},
    {"T.shift_left", "x y", t_shift_left, 0},
    {"T.shift_right", "x y", t_shift_right, 0},
    {"T.truncmod", "a b", t_truncmod, 0},
    {"T.if_then_else", "cond t f", t_if_then_else, 0},
    {"T.cast", "value dtype", t_cast, 0},
    {"T.dtype", "value", t_dtype, 0},
    {"T.Cast", "dtype value", t_Cast, 0},
    {"T.reinterpret", "value dtype", t_reinterpret, 0},
    {"T.infinity", "dtype", t_infinity, 0},
    {"T.max_value", "dtype", t_max_value, 0},
    {"T.min_value", "dtype", t_min_value, 0},
    {"T.prim_func", "func", t_identity, 0},
    {"T.macro", "func", t_identity, 0},
    {NULL, NULL, NULL, 0},
};

static const tc_builtin layout_builtins[] = {
    {"tilelang.layout.Layout", "shape forward_fn", ev_t_layout, EV_TAG_LAMBDA_ARGS},
    {"tilelang.layout.Fragment", "shape forward_fn? forward_thread_fn? replicate? forward_index_fn?", ev_t_fragment,
     EV_TAG_LAMBDA_ARGS},
    {"tilelang.layout.make_swizzled_layout", "buffer k_major? allow_pad?", ev_t_swizzled_layout, 0},
    {NULL, NULL, NULL, 0},
};

static const tc_builtin floormod_builtin = {"T.floormod", "a b", t_floordiv, 1};

static const tc_builtin tilelang_builtins[] = {
    {"tilelang.jit", "func? | out_idx? pass_configs? target? execution_backend? verbose? target_host? debug_root_path? **", t_identity, 0},
    {"tilelang.compile", "func out_idx? target? execution_backend? target_host? verbose? pass_configs? **", t_compile, 0},
    {"tilelang.cdiv", "a b", t_ceildiv, 0},
    {NULL, NULL, NULL, 0},
};

/* math: compile-time numbers only */
static double num_arg(tc_ev *ev, tc_args *a, int i, const char *fn) {
  tc_val *v = a->p[i];
  if (v->kind == TV_INT) return (double)v->u.i;
  if (v->kind == TV_BOOL) return v->u.b;
  if (v->kind == TV_FLOAT) return v->u.f;
  if (ev_is_runtime(v)) ev_fail(ev, arg_loc(a, i), "%s needs a number known at compile time; use the T.* function in kernels", fn);
  ev_fail(ev, arg_loc(a, i), "%s: must be a real number, not %s", fn, tv_kind_name(v));
}

/* itertools.product(*iterables, repeat=1): the cartesian product as a list of tuples, the last
 * iterable varying fastest (how autotune configuration lists are written). */
static tc_val *it_product(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int64_t repeat = arg_int(ev, a, 1, 1, "repeat of itertools.product");
  if (repeat < 0) ev_fail(ev, arg_loc(a, 1), "itertools.product: repeat must be non-negative");
  tc_val *its = a->p[0];
  int64_t n = (int64_t)its->u.seq.n * repeat;
  if (n > 64) ev_fail(ev, call_loc(a), "itertools.product: more than 64 iterables");
  tc_val **lists = EV_NEW_ARRAY(ev, tc_val *, n > 0 ? n : 1);
  for (int64_t i = 0; i < n; i++) lists[i] = ev_to_list(ev, its->u.seq.v[i % its->u.seq.n], call_loc(a));
  tc_val *out = tv_list(ev, 0, NULL);
  int64_t total = 1;
  for (int64_t i = 0; i < n; i++) {
    total *= lists[i]->u.seq.n;
    if (total > 1000000) ev_fail(ev, call_loc(a), "itertools.product: more than a million combinations");
  }
  int *at = EV_NEW_ARRAY(ev, int, n > 0 ? n : 1);
  for (int64_t c = 0; c < total; c++) {
    tc_val **t = EV_NEW_ARRAY(ev, tc_val *, n > 0 ? n : 1);
    for (int64_t i = 0; i < n; i++) t[i] = lists[i]->u.seq.v[at[i]];
    tv_list_push(ev, out, tv_tuple(ev, (int)n, t));
    for (int64_t i = n - 1; i >= 0; i--) { /* odometer: the last iterable fastest */
      if (++at[i] < lists[i]->u.seq.n) break;
      at[i] = 0;
    }
  }
  return out;
}
static const tc_builtin itertools_builtins[] = {
    {"itertools.product", "*iterables | repeat?", it_product, 0},
    {NULL, NULL, NULL, 0},
};

static tc_val *m_fn(tc_ev *ev, tc_val *self, tc_args *a);
static const tc_builtin math_builtins[] = {
    {"math.sqrt", "x", m_fn, 0},  {"math.exp", "x", m_fn, 1},    {"math.log", "x base?", m_fn, 2},
    {"math.log2", "x", m_fn, 3},  {"math.log10", "x", m_fn, 4},  {"math.ceil", "x", m_fn, 5},
    {"math.floor", "x", m_fn, 6}, {"math.fabs", "x", m_fn, 7},   {"math.pow", "x y", m_fn, 8},
    {"math.gcd", "a b", m_fn, 9}, {"math.isqrt", "n", m_fn, 10}, {"math.trunc", "x", m_fn, 11},
    {"math.tanh", "x", m_fn, 12}, {"math.sin", "x", m_fn, 13},   {"math.cos", "x", m_fn, 14},
    {"math.prod", "it", m_fn, 15},
    {NULL, NULL, NULL, 0},
};

static tc_val *m_fn(tc_ev *ev, tc_val *self, tc_args *a) {
  /* the table entry is passed through self (a TV_BUILTIN value describing the function) */
  const tc_builtin *b = self->u.bi.b;
  const char *fn = b->name;
  tc_loc loc = call_loc(a);
  double x = (b->tag == 9 || b->tag == 10 || b->tag == 15) ? 0 : num_arg(ev, a, 0, fn);
  switch (b->tag) {
  case 0:
    if (x < 0) ev_fail(ev, loc, "math domain error");
    return tv_float(ev, sqrt(x));
  case 1: return tv_float(ev, exp(x));
  case 2:
    if (x <= 0) ev_fail(ev, loc, "math domain error");
    if (a->p[1]) {
      double base = num_arg(ev, a, 1, fn);
      if (base <= 0 || base == 1) ev_fail(ev, loc, "math domain error");
      return tv_float(ev, log(x) / log(base));
    }
    return tv_float(ev, log(x));
  case 3:
    if (x <= 0) ev_fail(ev, loc, "math domain error");
    return tv_float(ev, log2(x));
  case 4:
    if (x <= 0) ev_fail(ev, loc, "math domain error");
    return tv_float(ev, log10(x));
  case 5:
  case 6:
  case 11: {
    if (a->p[0]->kind == TV_INT) return a->p[0];
    double r = b->tag == 5 ? ceil(x) : b->tag == 6 ? floor(x) : trunc(x);
    if (!(r > -9.2e18 && r < 9.2e18)) ev_fail(ev, loc, "cannot convert %g to an integer", x);
    return tv_int(ev, (int64_t)r);
  }
  case 7: return tv_float(ev, fabs(x));
  case 8: return tv_float(ev, pow(x, num_arg(ev, a, 1, fn)));
  case 9: {
    int64_t p = arg_int(ev, a, 0, 0, "math.gcd"), q = arg_int(ev, a, 1, 0, "math.gcd");
    if (p < 0) p = -p;
    if (q < 0) q = -q;
    while (q) {
      int64_t t = p % q;
      p = q;
      q = t;
    }
    return tv_int(ev, p);
  }
  case 10: {
    int64_t n = arg_int(ev, a, 0, 0, "math.isqrt");
    if (n < 0) ev_fail(ev, loc, "isqrt() argument must be nonnegative");
    int64_t r = (int64_t)sqrt((double)n);
    while (r * r > n) r--;
    while ((r + 1) * (r + 1) <= n) r++;
    return tv_int(ev, r);
  }
  case 12: return tv_float(ev, tanh(x));
  case 13: return tv_float(ev, sin(x));
  case 14: return tv_float(ev, cos(x));
  case 15: {
    tc_val *items = ev_to_list(ev, a->p[0], arg_loc(a, 0));
    tc_val *acc = tv_int(ev, 1);
    for (int i = 0; i < items->u.seq.n; i++) acc = ev_binop(ev, TC_P_STAR, acc, items->u.seq.v[i], loc);
    return acc;
  }
  }
  ev_fail(ev, loc, "%s: internal error", fn);
}

static const tc_builtin *find_in(const tc_builtin *t, const char *prefix, const char *attr) {
  size_t pl = strlen(prefix);
  for (; t->name; t++)
    if (strncmp(t->name, prefix, pl) == 0 && strcmp(t->name + pl, attr) == 0) return t;
  return NULL;
}

static const char *const policy_names[] = {"Square", "FullRow", "FullCol"};

tc_val *ev_module_attr_try(tc_ev *ev, int mod, const char *attr) {
  const tc_builtin *b;
  switch (mod) {
  case TM_LANGUAGE:
    if ((b = find_in(language_builtins, "T.", attr)) || (b = ev_hopper_builtin(attr)) ||
        (b = ev_reducer_builtin(attr)) ||
        (b = ev_attr_builtin(attr)))
      return tv_builtin(ev, b, NULL);
    if (strcmp(attr, "floormod") == 0) return tv_builtin(ev, &floormod_builtin, tv_none(ev));
    if (strcmp(attr, "GemmWarpPolicy") == 0) return tv_module(ev, TM_POLICY);
    {
      tc_dtype dt;
      char sugg[64];
      if (tc_dtype_lookup_attr(attr, &dt, sugg, sizeof sugg)) return tv_dtype(ev, dt);
    }
    return NULL;
  case TM_TILELANG:
    if ((b = find_in(tilelang_builtins, "tilelang.", attr))) return tv_builtin(ev, b, NULL);
    if (strcmp(attr, "language") == 0) return tv_module(ev, TM_LANGUAGE);
    if (strcmp(attr, "layout") == 0) return tv_module(ev, TM_LAYOUT);
    {
      char buf[200];
      snprintf(buf, sizeof buf, "tilelang.%s", attr);
      return tv_opaque(ev, buf);
    }
  case TM_MATH:
    if ((b = find_in(math_builtins, "math.", attr))) {
      tc_val *v = tv_builtin(ev, b, NULL);
      v->u.bi.self = v; /* m_fn finds its table entry through self */
      return v;
    }
    if (strcmp(attr, "pi") == 0) return tv_float(ev, 3.141592653589793);
    if (strcmp(attr, "e") == 0) return tv_float(ev, 2.718281828459045);
    if (strcmp(attr, "tau") == 0) return tv_float(ev, 6.283185307179586);
    if (strcmp(attr, "inf") == 0) return tv_float(ev, INFINITY);
    if (strcmp(attr, "nan") == 0) return tv_float(ev, NAN);
    return NULL;
  case TM_LAYOUT:
    if ((b = find_in(layout_builtins, "tilelang.layout.", attr))) return tv_builtin(ev, b, NULL);
    return NULL;
  case TM_ITERTOOLS: {
    if ((b = find_in(itertools_builtins, "itertools.", attr))) return tv_builtin(ev, b, NULL);
    char buf[200]; /* the rest of itertools: unsupported where used, as any module tilec lacks */
    snprintf(buf, sizeof buf, "itertools.%s", attr);
    return tv_opaque(ev, buf);
  }
  case TM_POLICY:
    for (int i = 0; i < 3; i++)
      if (strcmp(attr, policy_names[i]) == 0) {
        tc_val *v = tv_new(ev, TV_ENUM);
        v->u.en.id = TM_POLICY;
        v->u.en.value = i;
        return v;
      }
    return NULL;
  default: return NULL;
  }
}

tc_val *ev_module_attr(tc_ev *ev, int mod, const char *attr, tc_loc loc) {
  tc_val *v = ev_module_attr_try(ev, mod, attr);
  if (v) return v;
  ev_compat_check_attr(ev, mod == TM_LANGUAGE ? "T" : "tilelang", attr, loc);
  const char *best = NULL;
  int bestd = 4;
  const char *modname = mod == TM_LANGUAGE ? "T" : mod == TM_MATH ? "math" : mod == TM_POLICY ? "T.GemmWarpPolicy"
                        : mod == TM_LAYOUT ? "tilelang.layout" : "tilelang";
  const tc_builtin *t = mod == TM_LANGUAGE ? language_builtins : mod == TM_MATH ? math_builtins
                        : mod == TM_LAYOUT ? layout_builtins : tilelang_builtins;
  size_t pl = mod == TM_LANGUAGE ? 2 : mod == TM_MATH ? 5 : mod == TM_LAYOUT ? 16 : 9;
  if (mod != TM_POLICY)
    for (; t->name; t++) {
      int d = tc_edit_distance(attr, t->name + pl, 3);
      if (d < bestd) bestd = d, best = t->name + pl;
    }
  else
    for (int i = 0; i < 3; i++) {
      int d = tc_edit_distance(attr, policy_names[i], 3);
      if (d < bestd) bestd = d, best = policy_names[i];
    }
  if (mod == TM_LANGUAGE) {
    tc_dtype dt;
    char sugg[64] = "";
    if (!tc_dtype_lookup_attr(attr, &dt, sugg, sizeof sugg) && sugg[0]) {
      const char *s = strncmp(sugg, "T.", 2) == 0 ? sugg + 2 : sugg;
      int d = tc_edit_distance(attr, s, 3);
      if (d < bestd) bestd = d, best = tc_arena_strdup(&ev->tmp, s);
    }
    if (strcmp(attr, "GemmWarpPolicy") != 0) {
      int d = tc_edit_distance(attr, "GemmWarpPolicy", 3);
      if (d < bestd) bestd = d, best = "GemmWarpPolicy";
    }
  }
  size_t n = strlen(attr);
  int limit = n <= 3 ? 1 : n <= 6 ? 2 : 3;
  if (best && bestd <= limit)
    ev_fail(ev, loc, "module '%s' has no attribute '%s'; did you mean '%s'?", modname, attr, best);
  ev_fail(ev, loc, "module '%s' has no attribute '%s'", modname, attr);
}

