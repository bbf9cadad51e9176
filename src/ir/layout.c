/* layout.c: constructors, the shared swizzle, evaluation, the enumeration check and the text
 * form of buffer layouts (layout.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/walk.h"

tc_layout *tc_layout_new(tc_arena *a, tc_kernel_ir *k, tc_layout_kind kind, const char *name, int ndim,
                         const char *const *names, tc_loc loc) {
  tc_layout *L = TC_NEW(a, tc_layout);
  L->kind = kind;
  L->name = name;
  L->ndim = ndim;
  L->replicate = 1;
  L->index = TC_NEW_ARRAY(a, tc_var *, ndim > 0 ? ndim : 1);
  for (int i = 0; i < ndim; i++) {
    const char *n = names && names[i] ? names[i] : tc_arena_printf(a, "i%d", i);
    L->index[i] = tc_ir_new_var(a, k, n, tc_index_dtype(), TC_VAR_LAYOUT_INDEX, loc);
    L->index[i]->axis = i;
  }
  return L;
}

tc_var *tc_layout_replica_var(tc_arena *a, tc_kernel_ir *k, tc_layout *L, const char *name, tc_loc loc) {
  if (!L->replica) {
    L->replica = tc_ir_new_var(a, k, name ? name : "rep", tc_index_dtype(), TC_VAR_LAYOUT_INDEX, loc);
    L->replica->axis = -1;
  }
  return L->replica;
}

bool tc_layout_on_global(const tc_buffer *b) {
  return b && b->scope == TC_SCOPE_GLOBAL && b->layout && b->layout->kind == TC_LAYOUT_SHARED;
}

typedef struct offset_subst {
  tc_arena *a;
  const tc_layout *L;
  tc_expr *const *idx;
} offset_subst;

static tc_expr *offset_subst_cb(void *ctx, tc_expr *e) {
  offset_subst *S = ctx;
  if (e->op == TC_OP_VAR)
    for (int d = 0; d < S->L->ndim; d++)
      if (S->L->index[d] == e->var) return tc_ir_clone_expr(S->a, S->idx[d]);
  return e;
}

tc_expr *tc_layout_offset_at(tc_arena *a, const tc_layout *L, tc_expr *const *idx) {
  offset_subst S = {a, L, idx};
  return tc_rewrite_expr(tc_ir_clone_expr(a, L->offset), offset_subst_cb, &S);
}

/* ---- the shared swizzle ---- */
static tc_expr *ci(tc_arena *a, int64_t v, tc_loc loc) { return tc_ir_int(a, v, tc_index_dtype(), loc); }
static tc_expr *bin(tc_arena *a, tc_expr_op op, tc_expr *x, tc_expr *y, tc_loc loc) { return tc_ir_binary(a, op, x, y, loc); }

tc_layout *tc_layout_swizzled(tc_arena *a, tc_kernel_ir *k, const tc_buffer *buf) {
  int64_t shape[16];
  if (buf->ndim < 1 || buf->ndim > 16 || !tc_buffer_const_shape(buf, shape)) return NULL;
  tc_loc loc = buf->loc;
  /* one name for every width: the offset expression says which swizzle it is */
  tc_layout *L = tc_layout_new(a, k, TC_LAYOUT_SHARED, "swizzle", buf->ndim, NULL, loc);
  L->by_construction = true;
  int nd = buf->ndim;
  int64_t cols = shape[nd - 1];
  tc_expr *col = tc_ir_var_ref(a, L->index[nd - 1], loc);
  tc_expr *row = NULL; /* leading dims folded row-major */
  for (int i = 0; i < nd - 1; i++) {
    tc_expr *x = tc_ir_var_ref(a, L->index[i], loc);
    row = row ? bin(a, TC_OP_ADD, bin(a, TC_OP_MUL, row, ci(a, shape[i], loc), loc), x, loc) : x;
  }
  int bits = tc_dtype_bits(buf->dtype) * buf->dtype.lanes;
  int64_t b = bits / 8, rbytes = cols * b;
  tc_expr *chunk = NULL;
  bool swz = row && bits >= 8 && bits % 8 == 0 && b <= 16 && 16 % b == 0 &&
             (rbytes % 128 == 0 || rbytes == 64 || rbytes == 32);
  tc_expr *offset;
  if (swz) {
    int64_t per = 16 / b; /* elements per 16-byte chunk */
    tc_expr *c = bin(a, TC_OP_FLOORDIV, col, ci(a, per, loc), loc);
    tc_expr *e = bin(a, TC_OP_FLOORMOD, tc_ir_var_ref(a, L->index[nd - 1], loc), ci(a, per, loc), loc);
    if (rbytes % 128 == 0) {
      tc_expr *hi = bin(a, TC_OP_BIT_AND, c, ci(a, ~(int64_t)7, loc), loc);
      tc_expr *lo = bin(a, TC_OP_BIT_AND, bin(a, TC_OP_BIT_XOR, tc_ir_clone_expr(a, c), row, loc), ci(a, 7, loc), loc);
      chunk = bin(a, TC_OP_BIT_OR, hi, lo, loc);
    } else if (rbytes == 64) {
      chunk = bin(a, TC_OP_BIT_XOR, c, bin(a, TC_OP_BIT_AND, bin(a, TC_OP_SHR, row, ci(a, 1, loc), loc), ci(a, 3, loc), loc), loc);
    } else {
      chunk = bin(a, TC_OP_BIT_XOR, c, bin(a, TC_OP_BIT_AND, bin(a, TC_OP_SHR, row, ci(a, 2, loc), loc), ci(a, 1, loc), loc), loc);
    }
    offset = bin(a, TC_OP_ADD, bin(a, TC_OP_MUL, chunk, ci(a, per, loc), loc), e, loc);
  } else {
    offset = col;
  }
  if (row) offset = bin(a, TC_OP_ADD, bin(a, TC_OP_MUL, tc_ir_clone_expr(a, row), ci(a, cols, loc), loc), offset, loc);
  L->offset = offset;
  L->storage_elems = tc_buffer_numel(buf);
  return L;
}

/* ---- evaluation ---- */
typedef struct bindings {
  const tc_layout *L;
  const int64_t *idx;
  int64_t replica;
} bindings;

static bool bind_placeholder(void *ctx, const tc_var *v, int64_t *out) {
  const bindings *b = ctx;
  for (int i = 0; i < b->L->ndim; i++)
    if (b->L->index[i] == v) {
      *out = b->idx[i];
      return true;
    }
  if (v == b->L->replica) {
    *out = b->replica;
    return true;
  }
  return false;
}

bool tc_layout_eval_expr(const tc_layout *L, const tc_expr *e, const int64_t *idx, int64_t replica, int64_t *out) {
  bindings b = {L, idx, replica};
  return tc_expr_eval_int(e, bind_placeholder, &b, out);
}

bool tc_layout_eval(const tc_layout *L, const int64_t *idx, int64_t replica, int64_t *thread, int64_t *reg,
                    int64_t *offset) {
  bindings b = {L, idx, replica};
  if (L->kind == TC_LAYOUT_SHARED) return tc_expr_eval_int(L->offset, bind_placeholder, &b, offset);
  return tc_expr_eval_int(L->thread, bind_placeholder, &b, thread) && tc_expr_eval_int(L->reg, bind_placeholder, &b, reg);
}

/* ---- interval bounds ----
 * Layouts over large buffers (a global gradient tensor) are too big to enumerate; their output
 * extents come from interval arithmetic over the placeholders' ranges instead. It is exact for
 * the sums, products by constants and floor division/modulo by positive constants layouts are
 * written with, and never too small for anything it accepts. */
static bool bound_div(int64_t lo, int64_t hi, int64_t c, int64_t *olo, int64_t *ohi) {
  if (c <= 0) return false;
  *olo = lo >= 0 ? lo / c : -((-lo + c - 1) / c);
  *ohi = hi >= 0 ? hi / c : -((-hi + c - 1) / c);
  return true;
}

static bool expr_bounds(const tc_layout *L, const tc_expr *e, const int64_t *shape, int64_t reps, int64_t *lo, int64_t *hi,
                        int depth) {
  if (!e || depth > 64) return false;
  int64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  switch (e->op) {
  case TC_OP_CONST_INT: *lo = *hi = e->ival; return true;
  case TC_OP_VAR:
    for (int i = 0; i < L->ndim; i++)
      if (e->var == L->index[i]) return *lo = 0, *hi = shape[i] - 1, true;
    if (e->var && e->var == L->replica) return *lo = 0, *hi = reps - 1, true;
    return false;
  case TC_OP_CAST:
    return tc_dtype_is_int(e->dtype) && expr_bounds(L, e->args[0], shape, reps, lo, hi, depth + 1);
  case TC_OP_NEG:
    if (!expr_bounds(L, e->args[0], shape, reps, &a0, &a1, depth + 1)) return false;
    return *lo = -a1, *hi = -a0, true;
  default: break;
  }
  if (e->nargs != 2 || !expr_bounds(L, e->args[0], shape, reps, &a0, &a1, depth + 1) ||
      !expr_bounds(L, e->args[1], shape, reps, &b0, &b1, depth + 1))
    return false;
  const int64_t big = (int64_t)1 << 40; /* keeps every product below int64 overflow */
  if (a0 < -big || a1 > big || b0 < -big || b1 > big) return false;
  switch (e->op) {
  case TC_OP_ADD: *lo = a0 + b0, *hi = a1 + b1; return true;
  case TC_OP_SUB: *lo = a0 - b1, *hi = a1 - b0; return true;
  case TC_OP_MUL: {
    if (b0 != b1 && a0 != a1) return false; /* products of two ranges stay out: no layout needs them */
    int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
    *lo = *hi = p[0];
    for (int i = 1; i < 4; i++) *lo = p[i] < *lo ? p[i] : *lo, *hi = p[i] > *hi ? p[i] : *hi;
    return true;
  }
  case TC_OP_FLOORDIV:
    return b0 == b1 && bound_div(a0, a1, b0, lo, hi);
  case TC_OP_DIV: /* truncating: the same as floor on non-negative operands */
    return b0 == b1 && a0 >= 0 && bound_div(a0, a1, b0, lo, hi);
  case TC_OP_FLOORMOD:
    if (b0 != b1 || b0 <= 0) return false;
    if (a0 >= 0 && a1 < b0) return *lo = a0, *hi = a1, true; /* the modulo never wraps */
    return *lo = 0, *hi = b0 - 1, true;
  case TC_OP_MIN: *lo = a0 < b0 ? a0 : b0, *hi = a1 < b1 ? a1 : b1; return true;
  case TC_OP_MAX: *lo = a0 > b0 ? a0 : b0, *hi = a1 > b1 ? a1 : b1; return true;
  case TC_OP_BIT_AND:
    if (a0 < 0 || b0 < 0) return false;
    return *lo = 0, *hi = a1 < b1 ? a1 : b1, true;
  case TC_OP_BIT_OR:
  case TC_OP_BIT_XOR: {
    if (a0 < 0 || b0 < 0) return false;
    int64_t m = a1 > b1 ? a1 : b1, p = 1;
    while (p <= m) p <<= 1;
    return *lo = 0, *hi = p - 1, true;
  }
  case TC_OP_SHR:
    if (b0 != b1 || b0 < 0 || b0 > 62 || a0 < 0) return false;
    return *lo = a0 >> b0, *hi = a1 >> b0, true;
  case TC_OP_SHL:
    if (b0 != b1 || b0 < 0 || b0 > 20 || a0 < 0) return false;
    return *lo = a0 << b0, *hi = a1 << b0, true;
  default: return false;
  }
}

bool tc_layout_expr_bounds(const tc_layout *L, const tc_expr *e, const int64_t *shape, int64_t reps, int64_t *lo, int64_t *hi) {
  for (int i = 0; i < L->ndim; i++)
    if (shape[i] < 1) return false;
  return reps >= 1 && expr_bounds(L, e, shape, reps, lo, hi, 0);
}

/* ---- the enumeration check ---- */
static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static void idx_str(const int64_t *idx, int n, char *out, size_t cap) {
  size_t w = 0;
  out[w++] = '(';
  for (int i = 0; i < n && w + 24 < cap; i++) w += (size_t)snprintf(out + w, cap - w, "%s%lld", i ? ", " : "", (long long)idx[i]);
  snprintf(out + w, cap - w, ")");
}

/* A storage layout too large to sort its offsets: the bounds come from interval arithmetic
 * (sound at any size), distinctness from a bitmap over the storage while that stays small. */
static bool check_large_shared(const tc_layout *L, const int64_t *shape, int64_t numel, char *why, size_t cap) {
  int64_t lo, hi;
  if (numel > TC_LAYOUT_BITMAP_LIMIT || L->storage_elems > 4 * (int64_t)TC_LAYOUT_BITMAP_LIMIT) {
    if (!tc_layout_expr_bounds(L, L->offset, shape, 1, &lo, &hi)) {
      snprintf(why, cap, "cannot be bounded over its %lld elements (a layout this large may use only +, -, and *, // and %% by "
                         "constants)", (long long)numel);
      return false;
    }
    if (lo < 0 || hi >= L->storage_elems) {
      snprintf(why, cap, "maps some index to an offset in [%lld, %lld], outside [0, %lld)", (long long)lo, (long long)hi,
               (long long)L->storage_elems);
      return false;
    }
    return true; /* distinctness is not checked at this size (docs/ir.md) */
  }
  if (L->storage_elems < numel) {
    snprintf(why, cap, "has storage for %lld elements, fewer than the %lld the buffer holds", (long long)L->storage_elems, (long long)numel);
    return false;
  }
  uint8_t *seen = calloc((size_t)(L->storage_elems + 7) / 8, 1);
  if (!seen) return true; /* cannot check: not a property of the layout */
  int64_t idx[16] = {0};
  char is[200];
  bool ok = true;
  for (int64_t lin = 0; ok && lin < numel; lin++) {
    int64_t r = lin, off = 0;
    for (int i = L->ndim - 1; i >= 0; i--) idx[i] = r % shape[i], r /= shape[i];
    if (!tc_layout_eval(L, idx, 0, NULL, NULL, &off)) {
      idx_str(idx, L->ndim, is, sizeof is);
      snprintf(why, cap, "cannot be evaluated at %s", is);
      ok = false;
    } else if (off < 0 || off >= L->storage_elems) {
      idx_str(idx, L->ndim, is, sizeof is);
      snprintf(why, cap, "maps %s to offset %lld, outside [0, %lld)", is, (long long)off, (long long)L->storage_elems);
      ok = false;
    } else if (seen[off >> 3] & (1u << (off & 7))) {
      snprintf(why, cap, "maps two elements to offset %lld", (long long)off);
      ok = false;
    } else {
      seen[off >> 3] |= (uint8_t)(1u << (off & 7));
    }
  }
  free(seen);
  return ok;
}

bool tc_layout_check(const tc_layout *L, const int64_t *shape, int64_t threads, char *why, size_t cap) {
  int nd = L->ndim;
  int64_t numel = 1;
  bool frag = L->kind == TC_LAYOUT_FRAGMENT;
  for (int i = 0; i < nd; i++) {
    if (shape[i] <= 0) return true;
    numel *= shape[i];
    if (numel > TC_LAYOUT_BITMAP_LIMIT) break;
  }
  if (!frag && numel > TC_LAYOUT_CHECK_LIMIT) return check_large_shared(L, shape, numel, why, cap);
  if (numel > TC_LAYOUT_CHECK_LIMIT) return true;
  int64_t reps = frag ? L->replicate : 1;
  if (reps < 1 || (frag && L->num_regs < 1) || (!frag && L->storage_elems < numel)) {
    snprintf(why, cap, frag ? "has %lld registers per thread and replicate %lld" : "has storage for %lld elements, fewer than the %lld the buffer holds",
             frag ? (long long)L->num_regs : (long long)L->storage_elems, frag ? (long long)reps : (long long)numel);
    return false;
  }
  if (numel * reps > TC_LAYOUT_CHECK_LIMIT) return true;
  int64_t *keys = malloc(sizeof *keys * (size_t)(numel * reps));
  if (!keys) return true; /* cannot check: not a property of the layout */
  int64_t idx[16] = {0};
  char is[200];
  bool ok = true;
  int64_t n = 0;
  for (int64_t lin = 0; ok && lin < numel; lin++) {
    int64_t r = lin;
    for (int i = nd - 1; i >= 0; i--) idx[i] = r % shape[i], r /= shape[i];
    for (int64_t rep = 0; ok && rep < reps; rep++) {
      int64_t t = 0, g = 0, off = 0;
      if (!tc_layout_eval(L, idx, rep, &t, &g, &off)) {
        idx_str(idx, nd, is, sizeof is);
        snprintf(why, cap, "cannot be evaluated at %s", is);
        ok = false;
      } else if (frag && (t < 0 || t >= threads)) {
        idx_str(idx, nd, is, sizeof is);
        snprintf(why, cap, "maps %s to thread %lld, outside the block's %lld threads", is, (long long)t, (long long)threads);
        ok = false;
      } else if (frag && (g < 0 || g >= L->num_regs)) {
        idx_str(idx, nd, is, sizeof is);
        snprintf(why, cap, "maps %s to register %lld, outside [0, %lld)", is, (long long)g, (long long)L->num_regs);
        ok = false;
      } else if (!frag && (off < 0 || off >= L->storage_elems)) {
        idx_str(idx, nd, is, sizeof is);
        snprintf(why, cap, "maps %s to offset %lld, outside [0, %lld)", is, (long long)off, (long long)L->storage_elems);
        ok = false;
      } else {
        keys[n++] = frag ? t * L->num_regs + g : off;
      }
    }
  }
  if (ok) {
    qsort(keys, (size_t)n, sizeof *keys, cmp_i64);
    for (int64_t i = 1; ok && i < n; i++)
      if (keys[i] == keys[i - 1]) {
        if (frag)
          snprintf(why, cap, "maps two elements to thread %lld, register %lld", (long long)(keys[i] / L->num_regs),
                   (long long)(keys[i] % L->num_regs));
        else
          snprintf(why, cap, "maps two elements to offset %lld", (long long)keys[i]);
        ok = false;
      }
  }
  free(keys);
  return ok;
}

/* ---- equality and text ---- */
static bool expr_equal(const tc_expr *x, const tc_expr *y, const tc_layout *a, const tc_layout *b) {
  if (!x || !y) return x == y;
  if (x->op != y->op || !tc_dtype_eq(x->dtype, y->dtype) || x->nargs != y->nargs) return false;
  switch (x->op) {
  case TC_OP_CONST_INT: return x->ival == y->ival;
  case TC_OP_CONST_FLOAT: return x->fval == y->fval;
  case TC_OP_VAR:
    if (x->var == y->var) return true;
    if (x->var == a->replica || y->var == b->replica) return x->var == a->replica && y->var == b->replica;
    for (int i = 0; i < a->ndim; i++)
      if (x->var == a->index[i]) return y->var == b->index[i];
    return false;
  case TC_OP_LOAD:
  case TC_OP_ADDRESS_OF:
    if (x->buf != y->buf) return false;
    break;
  case TC_OP_CALL:
    if (!x->callee || !y->callee || strcmp(x->callee, y->callee) != 0) return false;
    break;
  default: break;
  }
  for (int i = 0; i < x->nargs; i++)
    if (!expr_equal(x->args[i], y->args[i], a, b)) return false;
  return true;
}

bool tc_layout_equal(const tc_layout *a, const tc_layout *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind || a->ndim != b->ndim || (a->replica == NULL) != (b->replica == NULL)) return false;
  if (a->kind == TC_LAYOUT_SHARED) return a->storage_elems == b->storage_elems && expr_equal(a->offset, b->offset, a, b);
  return a->num_regs == b->num_regs && a->replicate == b->replicate && expr_equal(a->thread, b->thread, a, b) &&
         expr_equal(a->reg, b->reg, a, b);
}

void tc_layout_print(tc_strbuf *sb, const tc_layout *L) {
  tc_sb_printf(sb, "%s{(", L->name ? L->name : "layout");
  for (int i = 0; i < L->ndim; i++) tc_sb_printf(sb, "%s%s", i ? ", " : "", L->index && L->index[i] ? L->index[i]->name : "?");
  if (L->kind == TC_LAYOUT_FRAGMENT && L->replica) tc_sb_printf(sb, "; %s", L->replica->name);
  tc_sb_puts(sb, ") -> ");
  if (L->kind == TC_LAYOUT_SHARED) {
    tc_sb_puts(sb, "offset: ");
    tc_ir_print_expr(sb, L->offset);
    tc_sb_printf(sb, "; storage: %lld}", (long long)L->storage_elems);
    return;
  }
  tc_sb_puts(sb, "thread: ");
  tc_ir_print_expr(sb, L->thread);
  tc_sb_puts(sb, ", reg: ");
  tc_ir_print_expr(sb, L->reg);
  tc_sb_printf(sb, "; regs: %lld", (long long)L->num_regs);
  if (L->replicate != 1) tc_sb_printf(sb, ", replicate: %lld", (long long)L->replicate);
  tc_sb_putc(sb, '}');
}
