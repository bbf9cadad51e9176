/* tileops.c: tile operations -> code every thread runs (SIMT IR).
 *
 * A fragment becomes a register array per thread. Work on a fragment is done by the threads
 * that hold it: the lowering unrolls the registers of the "driving" fragment (the one written,
 * or the one read for copies out), computes each register's logical index from the thread
 * index (layout.c), and finds the register of every other fragment the statement touches by
 * enumerating the threads: it must be the same register in every thread, else the layouts
 * disagree and the statement is rejected with the names of both. Work on shared and global
 * memory alone is dealt to the threads cyclically. A tile operation whose operands are
 * per-thread (local/var buffers) is done by each thread on its own copy. */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu_internal.h"
#include "ir/walk.h"


/* ---- small builders ---- */
static tc_expr *ci(tc_gpu_plan *P, int64_t v, tc_loc loc) { return tc_ir_int(P->a, v, tc_index_dtype(), loc); }
static tc_expr *bin(tc_gpu_plan *P, tc_expr_op op, tc_expr *x, tc_expr *y, tc_loc loc) {
  return tc_ir_binary(P->a, op, x, y, loc);
}
static tc_expr *tid_ref(tc_gpu_plan *P, tc_loc loc) { return tc_ir_var_ref(P->a, P->tid, loc); }
static tc_expr *cast_to(tc_gpu_plan *P, tc_dtype dt, tc_expr *e) {
  return tc_dtype_eq(dt, e->dtype) ? e : tc_ir_cast(P->a, dt, e, e->loc);
}
static tc_stmt *store(tc_gpu_plan *P, tc_buffer *b, int n, tc_expr **idx, tc_expr *v, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(P->a, TC_ST_STORE, loc);
  s->u.store.buf = b;
  s->u.store.nidx = n;
  s->u.store.idx = idx;
  s->u.store.value = cast_to(P, b->dtype, v);
  return s;
}
static tc_expr **idx1(tc_gpu_plan *P, tc_expr *e) {
  tc_expr **v = TC_NEW_ARRAY(P->a, tc_expr *, 1);
  v[0] = e;
  return v;
}
static tc_expr *reg_load(tc_gpu_plan *P, tc_buffer *regs, int64_t r, tc_loc loc) {
  return tc_ir_load(P->a, regs, 1, idx1(P, ci(P, r, loc)), loc);
}
static tc_stmt *reg_store(tc_gpu_plan *P, tc_buffer *regs, int64_t r, tc_expr *v, tc_loc loc) {
  return store(P, regs, 1, idx1(P, ci(P, r, loc)), v, loc);
}
static tc_stmt *if_then(tc_gpu_plan *P, tc_expr *cond, tc_stmt *then_s, tc_loc loc) { return tc_ir_if_then(P->a, cond, then_s, loc); }
static tc_expr *and_expr(tc_gpu_plan *P, tc_expr *a, tc_expr *b, tc_loc loc) {
  return !a ? b : !b ? a : bin(P, TC_OP_AND, a, b, loc);
}
static tc_stmt *barrier(tc_gpu_plan *P, tc_loc loc) { return tc_ir_stmt(P->a, TC_ST_BARRIER, loc); }
static tc_var *new_var(tc_gpu_plan *P, const char *base, tc_dtype dt, tc_var_kind kind, tc_loc loc) {
  char name[64];
  snprintf(name, sizeof name, "%s_%d", base, P->uniq++);
  return tc_ir_new_var(P->a, P->k, tc_arena_strdup(P->a, name), dt, kind, loc);
}
static tc_stmt *let_stmt(tc_gpu_plan *P, tc_var *v, tc_expr *val, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(P->a, TC_ST_LET, loc);
  s->u.let.var = v;
  s->u.let.value = val;
  return s;
}
static tc_stmt *for_loop(tc_gpu_plan *P, tc_var *v, int64_t extent, tc_loop_kind kind, tc_stmt *body, tc_loc loc) {
  tc_stmt *s = tc_ir_stmt(P->a, TC_ST_FOR, loc);
  s->u.loop.var = v;
  s->u.loop.min = ci(P, 0, loc);
  s->u.loop.extent = ci(P, extent, loc);
  s->u.loop.kind = kind;
  s->u.loop.body = body;
  return s;
}

static bool is_frag(const tc_buffer *b) { return b && tc_scope_in_registers(b->scope); }
static bool is_thread_local(const tc_buffer *b) { return b && (b->scope == TC_SCOPE_LOCAL || b->scope == TC_SCOPE_VAR); }
static int64_t lin_of(const tc_gpu_layout *L, const int64_t *idx) {
  int64_t e = 0;
  for (int d = 0; d < L->ndim; d++) e = e * L->shape[d] + idx[d];
  return e;
}
static void unlin(const tc_gpu_layout *L, int64_t e, int64_t *idx) {
  for (int d = L->ndim - 1; d >= 0; d--) idx[d] = e % L->shape[d], e /= L->shape[d];
}
/* The register of element f in thread t, or -1 when t does not hold it. */
static int64_t reg_in_thread(const tc_gpu_layout *F, int64_t f, int64_t t) {
  if (F->kind == TC_GL_REPL) return f;
  for (int64_t rep = 0; rep < F->reps; rep++) {
    int64_t thr, reg;
    tc_gl_owner(F, f, rep, &thr, &reg);
    if (thr == t) return reg;
  }
  return -1;
}

/* ---- constant evaluation of an index under loop-variable values ---- */
typedef struct binding {
  int n;
  tc_var *const *vars;
  const int64_t *vals;
  const par_lets *lets; /* variables the body binds once, read as their values */
  int depth;
} binding;

static bool eval_int(const tc_expr *e, const binding *B, int64_t *out) {
  int64_t x, y;
  switch (e->op) {
  case TC_OP_CONST_INT: *out = e->ival; return true;
  case TC_OP_VAR: {
    for (int i = 0; i < B->n; i++)
      if (B->vars[i] == e->var) return *out = B->vals[i], true;
    const tc_expr *v = tc_gpu_let_value(B->lets, e->var);
    if (!v || B->depth > 64) return false;
    binding inner = *B;
    inner.depth++;
    return eval_int(v, &inner, out);
  }
  case TC_OP_CAST: return tc_dtype_is_int(e->dtype) && eval_int(e->args[0], B, out);
  case TC_OP_NEG: if (!eval_int(e->args[0], B, &x)) return false; *out = -x; return true;
  default: break;
  }
  if (e->nargs != 2 || !eval_int(e->args[0], B, &x) || !eval_int(e->args[1], B, &y)) return false;
  switch (e->op) {
  case TC_OP_ADD: *out = x + y; return true;
  case TC_OP_SUB: *out = x - y; return true;
  case TC_OP_MUL: *out = x * y; return true;
  case TC_OP_FLOORDIV: if (!y) return false; *out = x / y - ((x % y != 0) && ((x < 0) != (y < 0))); return true;
  case TC_OP_FLOORMOD: if (!y) return false; *out = ((x % y) + y) % y; return true;
  case TC_OP_DIV: if (!y) return false; *out = x / y; return true;
  case TC_OP_MIN: *out = x < y ? x : y; return true;
  case TC_OP_MAX: *out = x > y ? x : y; return true;
  default: return false;
  }
}

/* ---- the per-register transform of a statement body ---- */
typedef struct iter_ctx {
  tc_gpu_plan *P;
  /* the iteration: loop vars and, per thread, their values (NULL when the thread has none) */
  int nvars;
  tc_var **vars;
  tc_expr **subst;      /* the vars' values as expressions of tid */
  int64_t *vals;        /* [threads][nvars] */
  bool *has;            /* [threads] */
  /* the driving layout when the loop vars are its indices one for one (drive(); else NULL):
   * accesses at exactly those indices, of that layout or of its rows, need no per-thread search */
  const tc_gpu_layout *ident;
  /* has/vals hold register vals_r's iteration of every thread (-1: none yet); drive() fills
   * them on demand, since accesses at the loop vars themselves never look at them */
  int64_t vals_r;
  const tc_gpu_layout *drv;
  const int64_t *starts, *exts;
  bool region;
  /* LET variables of the body get a fresh variable in each copy of it */
  int nren, capren;
  tc_var **ren_from, **ren_to;
  bool runtime;         /* iterations are not tied to registers: fragments must be replicated */
  bool every;           /* with runtime: each thread runs every iteration (its replicas all see each write) */
  bool once;            /* only replica 0 of the driver runs the body */
  tc_expr *every_owner; /* with every: true in the one thread that performs the iteration's side effects */
  /* the loop vars from the driver's element through a bijection (lower_parallel); NULL: its indices */
  const par_map *map;
  const int64_t *map_ext;
  const par_lets *lets; /* the body's variables bound once (drive()) */
  /* per-thread cells the body allocates (T.alloc_var, T.alloc_local) get a new buffer in each
   * copy of it, as LET variables do */
  int nbren, capbren;
  const tc_buffer **bren_from;
  tc_buffer **bren_to;
  bool failed;
  /* drive(): first every register is transformed once to record which register each fragment
   * access uses (rec), then, when those fit simple formulas of the register number, the body is
   * transformed once more for a loop over the registers (loop_r) */
  struct access_rec *rec;
  int nrec, caprec;
  int64_t cur_r, nregs;
  tc_expr *loop_r;
} iter_ctx;

typedef struct access_rec {
  const void *node;     /* the access in the original body (a LOAD expression or a STORE) */
  int64_t *reg;         /* by driver register: the accessed fragment's register, -1 unknown */
  int64_t div, mod, scale, offset; /* fitted: ((r / div) % mod) * scale + offset (mod 0: none) */
  bool runtime;         /* a replicated fragment indexed at run time */
} access_rec;

static tc_expr *xform_expr(iter_ctx *I, const tc_expr *e);
static tc_expr *repl_index(tc_gpu_plan *P, const tc_buffer *b, int n, tc_expr *const *idx, tc_loc loc);

/* The constant register of fragment b at indices idx (written in the loop vars) for this
 * iteration, checked to be the same in every thread; -1 (and an error) otherwise. */
static access_rec *rec_of(iter_ctx *I, const void *node) {
  for (int i = 0; i < I->nrec; i++)
    if (I->rec[i].node == node) return &I->rec[i];
  if (I->nrec == I->caprec) {
    int cap = I->caprec ? I->caprec * 2 : 8;
    I->rec = tc_arena_grow(I->P->a, I->rec, sizeof(access_rec) * (size_t)I->nrec, sizeof(access_rec) * (size_t)cap);
    I->caprec = cap;
  }
  access_rec *r = &I->rec[I->nrec++];
  memset(r, 0, sizeof *r);
  r->node = node;
  r->reg = TC_NEW_ARRAY(I->P->a, int64_t, I->nregs > 0 ? I->nregs : 1);
  for (int64_t k = 0; k < I->nregs; k++) r->reg[k] = -1;
  return r;
}

/* Fit ((r / div) % mod) * scale + offset to the recorded registers. */
static bool fit(access_rec *a, int64_t n) {
  int64_t base = -1;
  for (int64_t r = 0; r < n; r++)
    if (a->reg[r] >= 0) base = base < 0 ? r : base;
  if (base < 0) { /* never used */
    a->div = 1, a->mod = 0, a->scale = 0, a->offset = 0;
    return true;
  }
  for (int64_t div = 1; div <= n; div *= 2)
    for (int64_t mod = 0; mod <= n; mod = mod ? mod * 2 : 2)
      for (int64_t scale = 0; scale <= 1; scale++) {
        int64_t q = base / div;
        if (mod) q %= mod;
        int64_t off = a->reg[base] - q * scale;
        bool ok = true;
        for (int64_t r = 0; r < n && ok; r++) {
          if (a->reg[r] < 0) continue;
          int64_t v = r / div;
          if (mod) v %= mod;
          ok = v * scale + off == a->reg[r];
        }
        if (ok) {
          a->div = div, a->mod = mod, a->scale = scale, a->offset = off;
          return true;
        }
      }
  return false;
}

static tc_expr *fitted(iter_ctx *I, const access_rec *a, tc_loc loc) {
  tc_gpu_plan *P = I->P;
  tc_expr *v = tc_ir_clone_expr(P->a, I->loop_r);
  if (a->div > 1) v = bin(P, TC_OP_FLOORDIV, v, ci(P, a->div, loc), loc);
  if (a->mod) v = bin(P, TC_OP_FLOORMOD, v, ci(P, a->mod, loc), loc);
  if (!a->scale) v = ci(P, a->offset, loc);
  else if (a->offset) v = bin(P, TC_OP_ADD, v, ci(P, a->offset, loc), loc);
  return v;
}

static int64_t frag_reg_at(iter_ctx *I, const tc_buffer *b, int nidx, tc_expr *const *idx, tc_loc loc, bool store);
/* Record or look up: in loop mode returns -4 and the register expression in *out. */
static int64_t frag_reg(iter_ctx *I, const tc_buffer *b, int nidx, tc_expr *const *idx, tc_loc loc, const void *node,
                        bool store, tc_expr **out) {
  if (I->loop_r) {
    access_rec *a = rec_of(I, node);
    if (a->runtime) return -3;
    *out = fitted(I, a, loc);
    return -4;
  }
  int64_t r = frag_reg_at(I, b, nidx, idx, loc, store);
  if (I->nregs && r >= 0) rec_of(I, node)->reg[I->cur_r] = r;
  if (I->nregs && r == -3) rec_of(I, node)->runtime = true;
  return r;
}

/* Every thread's iteration values for driver register r (has[t]: t runs one inside the region);
 * whether any thread does. */
/* The iteration a bijection (par_map) maps onto flat element f: its digits in |stride| order. */
static void map_inverse(const par_map *m, const int64_t *ext, int n, int64_t f, int64_t *vals) {
  for (int d = 0; d < n; d++) {
    int64_t st = m->stride[d] < 0 ? -m->stride[d] : m->stride[d];
    if (!st) { vals[d] = 0; continue; }
    int64_t digit = (f / st) % ext[d];
    vals[d] = m->stride[d] < 0 ? ext[d] - 1 - digit : digit;
  }
}

static void map_inverse_exprs(tc_gpu_plan *P, const par_map *m, const int64_t *ext, int n, const tc_gpu_layout *D,
                              tc_expr *const *idx, tc_expr **out, tc_loc loc) {
  tc_expr *f = NULL;
  for (int k = 0; k < D->ndim; k++)
    f = f ? bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, f, ci(P, D->shape[k], loc), loc), tc_ir_clone_expr(P->a, idx[k]), loc)
          : tc_ir_clone_expr(P->a, idx[k]);
  for (int d = 0; d < n; d++) {
    int64_t st = m->stride[d] < 0 ? -m->stride[d] : m->stride[d];
    if (!st) { out[d] = ci(P, 0, loc); continue; }
    tc_expr *q = st == 1 ? tc_ir_clone_expr(P->a, f) : bin(P, TC_OP_FLOORDIV, tc_ir_clone_expr(P->a, f), ci(P, st, loc), loc);
    tc_expr *digit = st * ext[d] >= D->numel ? q : bin(P, TC_OP_FLOORMOD, q, ci(P, ext[d], loc), loc);
    out[d] = m->stride[d] < 0 ? bin(P, TC_OP_SUB, ci(P, ext[d] - 1, loc), digit, loc) : digit;
  }
}

static bool thread_values(iter_ctx *I, int64_t r) {
  const tc_gpu_layout *D = I->drv;
  bool any = false;
  for (int t = 0; t < I->P->threads; t++) {
    int64_t rep, e = tc_gl_elem(D, t, r, &rep), fi[TC_GL_MAXDIM];
    I->has[t] = false;
    if (e < 0) continue;
    unlin(D, e, fi);
    bool in = true;
    int k = 0;
    for (int d = 0; d < D->ndim; d++) {
      if (fi[d] < I->starts[d] || fi[d] >= I->starts[d] + I->exts[d]) in = false;
      /* through a map the loop has its own number of vars (map_inverse below), not the driver's dims */
      if (!I->region && !I->map) I->vals[(size_t)t * (size_t)I->nvars + (size_t)d] = fi[d];
      else if (I->exts[d] != 1 && k < I->nvars) I->vals[(size_t)t * (size_t)I->nvars + (size_t)k++] = fi[d] - I->starts[d];
    }
    if (I->map) map_inverse(I->map, I->map_ext, I->nvars, e, I->vals + (size_t)t * (size_t)I->nvars);
    I->has[t] = in && (!I->once || rep == 0);
    any |= I->has[t];
  }
  I->vals_r = r;
  return any;
}

static void need_values(iter_ctx *I) {
  if (I->drv && I->vals_r != I->cur_r) thread_values(I, I->cur_r);
}

/* An access at the loop vars themselves: the driver's own register, or for a row vector in the
 * rows layout of a 2-D driver, the register of the row in any thread that runs it (all agree,
 * by the rows layout's construction). -2: not such an access. */
static int64_t frag_reg_direct(iter_ctx *I, const tc_gpu_layout *F, int nidx, tc_expr *const *idx) {
  const tc_gpu_layout *D = I->ident;
  if (!D || nidx > I->nvars) return -2;
  for (int d = 0; d < nidx; d++)
    if (idx[d]->op != TC_OP_VAR || idx[d]->var != I->vars[d]) return -2;
  if (nidx == D->ndim && tc_gl_equal(F, D)) return I->cur_r;
  if (nidx != 1 || D->ndim != 2) return -2;
  tc_gpu_layout rows;
  tc_gl_make_rows(&rows, D, I->P->threads);
  if (rows.kind == TC_GL_REPL || !tc_gl_equal(F, &rows)) return -2;
  for (int t = 0; t < I->P->threads; t++) { /* the first thread that holds the driver's register */
    int64_t rep, e = tc_gl_elem(D, t, I->cur_r, &rep);
    if (e >= 0) return reg_in_thread(F, e / D->shape[1], t);
  }
  return -2;
}

static bool is_combining(const tc_gpu_plan *P, const tc_buffer *b) {
  for (int i = 0; i < P->ncombining; i++)
    if (P->combining[i] == b) return true;
  return false;
}

/* Ask tc_gpu_lower to try again with fragment b in shared memory, where every thread reaches
 * every element. Not for one a T.Parallel loop combines into (`r[i] += v` from several threads):
 * in shared memory those updates would race, so the error stands instead. */
static void ask_shared(tc_gpu_plan *P, const tc_buffer *b, tc_loc at) {
  if (is_combining(P, b)) return;
  P->redemote = b->id, P->redemote_at = at;
}

/* A store to a fragment held in several threads (replicas) writes each replica only in the
 * thread that runs the iteration, so every replica of an element this driver register writes
 * must be in a thread that writes that same element now; otherwise the copies diverge and a
 * later reader (a copy out, another loop) sees a stale one. The written elements are elem[t]. */
static bool replicas_all_written(const iter_ctx *I, const tc_gpu_layout *F, const int64_t *elem) {
  for (int t = 0; t < I->P->threads; t++) {
    if (!I->has[t]) continue;
    if (F->kind == TC_GL_REPL) { /* every thread holds every element: all must write it */
      for (int u = 0; u < I->P->threads; u++)
        if (!I->has[u] || elem[u] != elem[t]) return false;
      continue;
    }
    for (int64_t rep = 0; rep < F->reps; rep++) {
      int64_t thr, reg;
      tc_gl_owner(F, elem[t], rep, &thr, &reg);
      if (thr < 0 || thr >= I->P->threads || !I->has[thr] || elem[thr] != elem[t]) return false;
    }
  }
  return true;
}

static int64_t frag_reg_at(iter_ctx *I, const tc_buffer *b, int nidx, tc_expr *const *idx, tc_loc loc, bool store) {
  tc_gpu_plan *P = I->P;
  const tc_gpu_layout *F = P->frag[b->id];
  bool check_replicas = store && F->reps > 1 && !is_combining(P, b);
  int64_t direct = frag_reg_direct(I, F, nidx, idx);
  /* only replica 0 of the driver runs: a replicated fragment's other copies need the check */
  if (direct >= 0 && !(check_replicas && I->once)) return direct;
  need_values(I);
  int64_t reg = -2;
  int64_t *elem = check_replicas ? TC_NEW_ARRAY(P->a, int64_t, P->threads) : NULL;
  for (int t = 0; t < P->threads; t++) {
    if (!I->has[t]) continue;
    binding B = {I->nvars, I->vars, I->vals + (size_t)t * (size_t)I->nvars, I->lets, 0};
    int64_t iv[TC_GL_MAXDIM];
    for (int d = 0; d < nidx; d++) {
      if (!eval_int(idx[d], &B, &iv[d])) {
        ask_shared(P, b, P->parallel ? P->parallel->loc : loc); /* in shared memory any index serves */
        tc_gpu_fail(P, loc, "fragment '%s' is indexed by a value other than the T.Parallel loop variables; "
                            "on %s a fragment index must be known at compile time for each iteration",
                    b->name, P->desc->target);
        return -1;
      }
      if (iv[d] < 0 || iv[d] >= F->shape[d]) {
        tc_gpu_fail(P, loc, "fragment '%s' is indexed out of its bounds (%lld in dimension %d of %lld)", b->name,
                    (long long)iv[d], d, (long long)F->shape[d]);
        return -1;
      }
    }
    int64_t r = reg_in_thread(F, lin_of(F, iv), t);
    if (elem) elem[t] = lin_of(F, iv);
    if (F->kind == TC_GL_REPL && check_replicas) { /* replicas_all_written below */
      reg = r;
      continue;
    }
    if (F->kind == TC_GL_REPL && reg != -2 && r != reg) return -3; /* every thread holds it: index at run time */
    if (r < 0 || (reg != -2 && r != reg)) {
      char ld[96];
      tc_gl_describe(F, ld, sizeof ld);
      ask_shared(P, b, P->parallel ? P->parallel->loc : loc); /* tc_gpu_lower tries again with it in shared memory */
      tc_gpu_fail(P, loc,
                  "fragment '%s' (layout %s) is not held by the thread that runs this T.Parallel iteration; "
                  "use it at the same indices as the loop's other fragments, or copy it through shared memory",
                  b->name, ld);
      return -1;
    }
    reg = r;
  }
  if (check_replicas && !replicas_all_written(I, F, elem)) {
    char ld[96];
    tc_gl_describe(F, ld, sizeof ld);
    ask_shared(P, b, P->parallel ? P->parallel->loc : loc); /* in shared memory one write serves all */
    tc_gpu_fail(P, loc,
                "fragment '%s' (layout %s) is held by several threads, and this T.Parallel loop writes an element of it "
                "from only some of them; copy it through shared memory",
                b->name, ld);
    return -1;
  }
  return reg < 0 ? 0 : reg;
}

static tc_buffer *renamed_buf(const iter_ctx *I, tc_buffer *b) {
  for (int i = I->nbren - 1; i >= 0; i--)
    if (I->bren_from[i] == b) return I->bren_to[i];
  return b;
}

static tc_expr *xform_expr(iter_ctx *I, const tc_expr *e) {
  tc_gpu_plan *P = I->P;
  if (!e || I->failed) return (tc_expr *)e;
  if (e->op == TC_OP_VAR) {
    for (int i = I->nren - 1; i >= 0; i--)
      if (I->ren_from[i] == e->var) return tc_ir_var_ref(P->a, I->ren_to[i], e->loc);
    for (int i = 0; i < I->nvars; i++)
      if (I->vars[i] == e->var) return tc_ir_clone_expr(P->a, I->subst[i]);
    return (tc_expr *)e;
  }
  if (e->op == TC_OP_LOAD && is_frag(e->buf)) {
    tc_expr *rx = NULL;
    int64_t r = I->runtime ? -3 : frag_reg(I, e->buf, e->nargs, e->args, e->loc, e, false, &rx);
    if (r == -4) return tc_ir_load(P->a, P->regs[e->buf->id], 1, idx1(P, rx), e->loc);
    if (r == -3 && P->frag[e->buf->id]->kind != TC_GL_REPL) {
      char ld[96];
      tc_gl_describe(P->frag[e->buf->id], ld, sizeof ld);
      ask_shared(P, e->buf, P->parallel ? P->parallel->loc : e->loc);
      tc_gpu_fail(P, e->loc, "fragment '%s' (layout %s) is read in a T.Parallel loop that no fragment of its shape drives; "
                             "on %s use it at the loop's indices or keep it in shared memory", e->buf->name, ld, P->desc->target);
      I->failed = true;
      return (tc_expr *)e;
    }
    if (r == -3) {
      tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, e->nargs > 0 ? e->nargs : 1);
      for (int i = 0; i < e->nargs; i++) idx[i] = xform_expr(I, e->args[i]);
      return tc_ir_load(P->a, P->regs[e->buf->id], 1, idx1(P, repl_index(P, e->buf, e->nargs, idx, e->loc)), e->loc);
    }
    if (r < 0) {
      I->failed = true;
      return (tc_expr *)e;
    }
    return reg_load(P, P->regs[e->buf->id], r, e->loc);
  }
  tc_expr *c = TC_NEW(P->a, tc_expr);
  *c = *e;
  if (c->buf) c->buf = renamed_buf(I, c->buf);
  if (e->nargs) {
    c->args = TC_NEW_ARRAY(P->a, tc_expr *, e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = xform_expr(I, e->args[i]);
  }
  return c;
}

static tc_stmt *lower_stmt(tc_gpu_plan *P, tc_stmt *s);

/* A variable declared in a body that is copied (once per register) gets a new one per copy;
 * later references in the copy are renamed to it. */
static tc_var *fresh_var(iter_ctx *I, const tc_var *v) {
  tc_gpu_plan *P = I->P;
  if (I->nren == I->capren) {
    int cap = I->capren ? I->capren * 2 : 8;
    I->ren_from = tc_arena_grow(P->a, I->ren_from, sizeof(tc_var *) * (size_t)I->nren, sizeof(tc_var *) * (size_t)cap);
    I->ren_to = tc_arena_grow(P->a, I->ren_to, sizeof(tc_var *) * (size_t)I->nren, sizeof(tc_var *) * (size_t)cap);
    I->capren = cap;
  }
  tc_var *nv = tc_ir_new_var(P->a, P->k, v->name, v->dtype, v->kind, v->loc);
  I->ren_from[I->nren] = (tc_var *)v;
  I->ren_to[I->nren++] = nv;
  return nv;
}

/* Where every thread runs every iteration (to keep its copy of a replicated fragment), an
 * atomic or a print happens once per iteration all the same: in the thread the deal gives it. */
static tc_stmt *once_per_iteration(iter_ctx *I, tc_stmt *effect) {
  if (!I->every_owner) return effect;
  return if_then(I->P, tc_ir_clone_expr(I->P->a, I->every_owner), effect, effect->loc);
}

static tc_stmt *xform_stmt(iter_ctx *I, const tc_stmt *s) {
  tc_gpu_plan *P = I->P;
  if (!s || I->failed) return NULL;
  tc_stmt *c = tc_ir_stmt(P->a, s->kind, s->loc);
  *c = *s;
  switch (s->kind) {
  case TC_ST_SEQ:
    c->u.seq.items = TC_NEW_ARRAY(P->a, tc_stmt *, s->u.seq.n > 0 ? s->u.seq.n : 1);
    for (int i = 0; i < s->u.seq.n; i++) c->u.seq.items[i] = xform_stmt(I, s->u.seq.items[i]);
    return c;
  case TC_ST_STORE: {
    tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, s->u.store.nidx > 0 ? s->u.store.nidx : 1);
    c->u.store.value = xform_expr(I, s->u.store.value);
    if (is_frag(s->u.store.buf) && I->runtime && P->frag[s->u.store.buf->id]->kind == TC_GL_REPL) {
      if (!I->every && !is_combining(P, s->u.store.buf)) { /* dealt: only this thread's copy would get the value */
        ask_shared(P, s->u.store.buf, P->parallel ? P->parallel->loc : s->loc);
        tc_gpu_fail(P, s->loc, "fragment '%s' is replicated in every thread, and this T.Parallel loop writes each element "
                               "from one thread; copy it through shared memory", s->u.store.buf->name);
        I->failed = true;
        return c;
      }
      for (int i = 0; i < s->u.store.nidx; i++) idx[i] = xform_expr(I, s->u.store.idx[i]);
      return store(P, P->regs[s->u.store.buf->id], 1, idx1(P, repl_index(P, s->u.store.buf, s->u.store.nidx, idx, s->loc)),
                   c->u.store.value, s->loc);
    }
    if (is_frag(s->u.store.buf)) {
      tc_expr *rx = NULL;
      int64_t r = I->runtime ? -3 : frag_reg(I, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->loc, s, true, &rx);
      if (r == -4) return store(P, P->regs[s->u.store.buf->id], 1, idx1(P, rx), c->u.store.value, s->loc);
      bool combining = is_combining(P, s->u.store.buf);
      if (r == -3 && combining) { /* each thread combines into its own copy (par_reduce_wrap) */
        for (int i = 0; i < s->u.store.nidx; i++) idx[i] = xform_expr(I, s->u.store.idx[i]);
        return store(P, P->regs[s->u.store.buf->id], 1, idx1(P, repl_index(P, s->u.store.buf, s->u.store.nidx, idx, s->loc)),
                     c->u.store.value, s->loc);
      }
      if (r == -3) {
        ask_shared(P, s->u.store.buf, P->parallel ? P->parallel->loc : s->loc);
        tc_gpu_fail(P, s->loc, "fragment '%s' is replicated in every thread and cannot be written from this T.Parallel loop "
                               "on %s; write it in a loop over its own shape", s->u.store.buf->name, P->desc->target);
        r = -1;
      }
      if (r < 0) {
        I->failed = true;
        return c;
      }
      return reg_store(P, P->regs[s->u.store.buf->id], r, c->u.store.value, s->loc);
    }
    for (int i = 0; i < s->u.store.nidx; i++) idx[i] = xform_expr(I, s->u.store.idx[i]);
    c->u.store.idx = idx;
    c->u.store.buf = renamed_buf(I, c->u.store.buf);
    return c;
  }
  case TC_ST_ALLOC: { /* a per-thread cell: a new one in each copy of the body */
    const tc_buffer *b = s->u.alloc.buf;
    if ((b->scope != TC_SCOPE_VAR && b->scope != TC_SCOPE_LOCAL) || b->view_of) break;
    if (I->nbren == I->capbren) {
      int cap = I->capbren ? I->capbren * 2 : 8;
      I->bren_from = tc_arena_grow(P->a, I->bren_from, sizeof(tc_buffer *) * (size_t)I->nbren, sizeof(tc_buffer *) * (size_t)cap);
      I->bren_to = tc_arena_grow(P->a, I->bren_to, sizeof(tc_buffer *) * (size_t)I->nbren, sizeof(tc_buffer *) * (size_t)cap);
      I->capbren = cap;
    }
    tc_buffer *nb = tc_ir_new_buffer(P->a, P->k, b->name, b->dtype, b->scope, b->ndim, b->shape, b->loc);
    I->bren_from[I->nbren] = b;
    I->bren_to[I->nbren++] = nb;
    c->u.alloc.buf = nb;
    return c;
  }
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    c->u.let.value = xform_expr(I, s->u.let.value);
    if (s->kind == TC_ST_LET) {
      c->u.let.var = fresh_var(I, s->u.let.var);
    } else {
      for (int i = I->nren - 1; i >= 0; i--)
        if (I->ren_from[i] == s->u.let.var) {
          c->u.let.var = I->ren_to[i];
          break;
        }
    }
    return c;
  case TC_ST_IF:
    c->u.if_.cond = xform_expr(I, s->u.if_.cond);
    c->u.if_.then_s = xform_stmt(I, s->u.if_.then_s);
    c->u.if_.else_s = xform_stmt(I, s->u.if_.else_s);
    return c;
  case TC_ST_FOR: {
    c->u.loop.min = xform_expr(I, s->u.loop.min);
    c->u.loop.extent = xform_expr(I, s->u.loop.extent);
    c->u.loop.var = fresh_var(I, s->u.loop.var);
    c->u.loop.body = xform_stmt(I, s->u.loop.body);
    return c;
  }
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) {
      tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, s->u.atomic.nidx > 0 ? s->u.atomic.nidx : 1);
      for (int i = 0; i < s->u.atomic.nidx; i++) idx[i] = xform_expr(I, s->u.atomic.idx[i]);
      c->u.atomic.idx = idx;
      c->u.atomic.value = xform_expr(I, s->u.atomic.value);
      c->u.atomic.buf = renamed_buf(I, c->u.atomic.buf);
      if (c->u.atomic.prev) c->u.atomic.prev = renamed_buf(I, c->u.atomic.prev);
      if (I->every_owner && c->u.atomic.prev) {
        tc_gpu_fail(P, s->loc, "T.atomic_add(..., return_prev=True) in a T.Parallel loop that writes the replicated fragment "
                               "of every thread is not supported on %s (split the loop)", P->desc->target);
        I->failed = true;
        return c;
      }
      return once_per_iteration(I, c);
    }
    break;
  case TC_ST_EVALUATE:
    c->u.evaluate.value = xform_expr(I, s->u.evaluate.value);
    return c;
  case TC_ST_INTRINSIC:
    c->u.intrinsic.args = TC_NEW_ARRAY(P->a, tc_expr *, s->u.intrinsic.nargs > 0 ? s->u.intrinsic.nargs : 1);
    for (int i = 0; i < s->u.intrinsic.nargs; i++) c->u.intrinsic.args[i] = xform_expr(I, s->u.intrinsic.args[i]);
    return c;
  case TC_ST_ASSERT:
    c->u.assert_.cond = xform_expr(I, s->u.assert_.cond);
    return c;
  case TC_ST_PRINT:
    c->u.print.value = xform_expr(I, s->u.print.value);
    return once_per_iteration(I, c);
  default:
    break;
  }
  tc_gpu_fail(P, s->loc, "`%s` inside a T.Parallel loop is not supported on %s", tc_stmt_kind_name(s->kind),
              P->desc->target);
  I->failed = true;
  return c;
}

static bool has_loop_cb(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_FOR) *(bool *)ctx = true;
  return true;
}

static bool has_side_effects_cb(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_ATOMIC_ADD || s->kind == TC_ST_PRINT) *(bool *)ctx = true;
  return true;
}
/* Stores to memory the block shares (a shared tile, a fragment moved to shared memory, a global
 * tensor) in a loop body, and whether the body also reads a buffer it stores to there: run by
 * several replicas at once, such an update would be applied once by each. */
typedef struct block_stores {
  const tc_buffer *stored[16];
  int n;
  bool any, rmw;
} block_stores;
static bool block_visible(const tc_buffer *b) { return b && (b->scope == TC_SCOPE_SHARED || b->scope == TC_SCOPE_GLOBAL); }
static bool block_store_cb(void *ctx, tc_stmt *s) {
  block_stores *B = ctx;
  if (s->kind == TC_ST_STORE && block_visible(s->u.store.buf)) {
    B->any = true;
    const tc_buffer *root = tc_buffer_storage(s->u.store.buf);
    bool seen = false;
    for (int i = 0; i < B->n; i++) seen |= B->stored[i] == root;
    if (!seen && B->n < 16) B->stored[B->n++] = root;
    else if (!seen) B->rmw = true; /* too many to track: assume the worst */
  }
  return true;
}
static tc_expr *block_load_cb(void *ctx, tc_expr *e) {
  block_stores *B = ctx;
  if (e->op == TC_OP_LOAD && block_visible(e->buf))
    for (int i = 0; i < B->n; i++) B->rmw |= B->stored[i] == tc_buffer_storage(e->buf);
  return e;
}

/* Unroll the registers of layout D: for each register, bind the iteration variables `vars`
 * (the logical index of that register, through `to_iter`) and run `body` transformed.
 * to_iter maps a fragment index to iteration values (identity for a T.Parallel over it). */
typedef struct driven {
  const tc_gpu_layout *D;
  int nvars;
  tc_var **vars;
  const tc_range *region; /* iteration = fragment index - region start over the region's dims; NULL: identity */
  int region_ndim;
  bool once;              /* replicas other than 0 skip the body */
  const par_map *map;     /* without region: the loop vars from the driver's element (its indices: NULL) */
  const int64_t *map_ext;
} driven;

static tc_stmt *drive(tc_gpu_plan *P, const driven *dv, const tc_stmt *body, tc_loc loc) {
  const tc_gpu_layout *D = dv->D;
  tc_stmt_list out = {0};
  iter_ctx I = {.P = P, .nvars = dv->nvars, .vars = dv->vars};
  I.subst = TC_NEW_ARRAY(P->a, tc_expr *, dv->nvars > 0 ? dv->nvars : 1);
  I.vals = TC_NEW_ARRAY(P->a, int64_t, (size_t)P->threads * (size_t)(dv->nvars > 0 ? dv->nvars : 1));
  I.has = TC_NEW_ARRAY(P->a, bool, P->threads);
  int64_t starts[TC_GL_MAXDIM] = {0}, exts[TC_GL_MAXDIM];
  for (int d = 0; d < D->ndim; d++) exts[d] = D->shape[d];
  if (dv->region) {
    for (int d = 0; d < D->ndim; d++) {
      if (!tc_expr_const_int(dv->region[d].start, &starts[d])) {
        tc_gpu_fail(P, loc, "a region of a fragment needs a constant start on %s", P->desc->target);
        return NULL;
      }
      exts[d] = dv->region[d].extent;
    }
  }
  I.drv = D, I.starts = starts, I.exts = exts, I.region = dv->region != NULL, I.vals_r = -1;
  I.once = dv->once && D->reps > 1;
  par_lets *lets = TC_NEW(P->a, par_lets);
  tc_gpu_collect_lets(body, lets);
  I.lets = lets;
  I.map = dv->region ? NULL : dv->map, I.map_ext = dv->map_ext;
  I.ident = I.map ? NULL : D;
  if (dv->region) {
    if (dv->nvars != D->ndim) I.ident = NULL;
    for (int d = 0; d < D->ndim; d++)
      if (starts[d] != 0 || exts[d] != D->shape[d] || exts[d] == 1) I.ident = NULL;
  }
  tc_expr *tid = tid_ref(P, loc);
  /* pass 1 records each fragment access's register per driver register; when every access
   * fits a formula of the register number, pass 2 emits one loop over the registers (small
   * source; the target unrolls it) instead of a copy of the body per register */
  I.nregs = D->num_regs;
  bool loop_ok = D->num_regs > 1;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (int i = 0; i < I.nrec && loop_ok; i++) loop_ok = I.rec[i].runtime || fit(&I.rec[i], D->num_regs);
      if (!loop_ok) break;
      /* the loop */
      tc_var *rv = new_var(P, "r", tc_index_dtype(), TC_VAR_LOOP, loc);
      I.loop_r = tc_ir_var_ref(P->a, rv, loc);
      tc_expr *idx[TC_GL_MAXDIM], *valid;
      tc_gl_index_exprs_at(P->a, D, tid, I.loop_r, idx, &valid, loc);
      tc_expr *cond = valid;
      int k = 0;
      for (int d = 0; d < D->ndim; d++) {
        if (dv->region && (starts[d] != 0 || exts[d] != D->shape[d])) {
          cond = and_expr(P, cond, bin(P, TC_OP_GE, idx[d], ci(P, starts[d], loc), loc), loc);
          cond = and_expr(P, cond, bin(P, TC_OP_LT, tc_ir_clone_expr(P->a, idx[d]), ci(P, starts[d] + exts[d], loc), loc), loc);
        }
        if (!dv->region) I.subst[d] = idx[d];
        else if (exts[d] != 1 && k < dv->nvars) I.subst[k++] = starts[d] ? bin(P, TC_OP_SUB, idx[d], ci(P, starts[d], loc), loc) : idx[d];
      }
      if (I.map) map_inverse_exprs(P, I.map, I.map_ext, dv->nvars, D, idx, I.subst, loc);
      I.nren = 0;
      tc_stmt *b = xform_stmt(&I, body);
      if (I.failed || !b) return NULL;
      if (dv->once && D->reps > 1)
        cond = and_expr(P, cond, bin(P, TC_OP_EQ, tc_gl_rep_expr(P->a, D, tid, loc), ci(P, 0, loc), loc), loc);
      /* a body with a loop of its own (a reduction's fold) stays rolled: unrolling both
       * multiplies the code the target compiles for no gain */
      bool inner = false;
      tc_visit_stmts(b, has_loop_cb, &inner);
      return for_loop(P, rv, D->num_regs, inner ? TC_LOOP_SERIAL : TC_LOOP_UNROLL, if_then(P, cond, b, loc), loc);
    }
  for (int64_t r = 0; r < D->num_regs; r++) {
    I.cur_r = r;
    tc_expr *idx[TC_GL_MAXDIM], *valid;
    tc_gl_index_exprs(P->a, D, tid, r, idx, &valid, loc);
    /* does any thread run this register? (with the loop vars as the driver's indices, any
     * thread that holds it does, and the per-thread values wait until an access needs them) */
    bool any = false;
    if (I.ident) {
      int64_t rep;
      for (int t = 0; t < P->threads && !any; t++) any = tc_gl_elem(D, t, r, &rep) >= 0;
    } else {
      any = thread_values(&I, r);
    }
    if (!any) continue;
    tc_expr *cond = valid;
    int k = 0;
    for (int d = 0; d < D->ndim; d++) {
      if (dv->region && (starts[d] != 0 || exts[d] != D->shape[d])) {
        cond = and_expr(P, cond, bin(P, TC_OP_GE, idx[d], ci(P, starts[d], loc), loc), loc);
        cond = and_expr(P, cond, bin(P, TC_OP_LT, idx[d], ci(P, starts[d] + exts[d], loc), loc), loc);
      }
      if (!dv->region) I.subst[d] = idx[d];
      else if (exts[d] != 1 && k < dv->nvars) I.subst[k++] = starts[d] ? bin(P, TC_OP_SUB, idx[d], ci(P, starts[d], loc), loc) : idx[d];
    }
    if (I.map) map_inverse_exprs(P, I.map, I.map_ext, dv->nvars, D, idx, I.subst, loc);
    tc_stmt *b = xform_stmt(&I, body);
    if (I.failed || !b) return NULL;
    if (dv->once && D->reps > 1)
      cond = and_expr(P, cond, bin(P, TC_OP_EQ, tc_gl_rep_expr(P->a, D, tid, loc), ci(P, 0, loc), loc), loc);
    tc_stmt_list_push(P->a, &out, if_then(P, cond, b, loc));
  }
  if (!loop_ok) break;
  }
  return tc_stmt_list_seq(P->a, &out, loc);
}

/* Deal `total` iterations (row-major over ext[0..n)) to the threads cyclically; `body` is
 * written in `vars` and is transformed like a T.Parallel body (fragments must be replicated). */
static tc_stmt *deal_ex(tc_gpu_plan *P, int n, tc_var **vars, const int64_t *ext, const tc_stmt *body, bool every, tc_loc loc);
static tc_stmt *deal(tc_gpu_plan *P, int n, tc_var **vars, const int64_t *ext, const tc_stmt *body, tc_loc loc) {
  return deal_ex(P, n, vars, ext, body, false, loc);
}
/* every: each thread runs every iteration (to update its own copy of replicated fragments). */
static tc_stmt *deal_ex(tc_gpu_plan *P, int n, tc_var **vars, const int64_t *ext, const tc_stmt *body, bool every, tc_loc loc) {
  int64_t total = 1;
  for (int d = 0; d < n; d++) total *= ext[d];
  int threads = every ? 1 : P->threads;
  int64_t trips = (total + threads - 1) / threads;
  tc_var *c = new_var(P, "it", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *ev = new_var(P, "e", tc_index_dtype(), TC_VAR_LOCAL, loc);
  tc_expr *e = tc_ir_var_ref(P->a, ev, loc);
  iter_ctx I = {.P = P, .nvars = n, .vars = vars, .runtime = true, .every = every};
  I.subst = TC_NEW_ARRAY(P->a, tc_expr *, n > 0 ? n : 1);
  I.vals = TC_NEW_ARRAY(P->a, int64_t, 1);
  I.has = TC_NEW_ARRAY(P->a, bool, P->threads); /* no thread enumerates: fragments need REPL */
  if (every && P->threads > 1)
    I.every_owner = bin(P, TC_OP_EQ, bin(P, TC_OP_FLOORMOD, tc_ir_var_ref(P->a, ev, loc), ci(P, P->threads, loc), loc),
                        tid_ref(P, loc), loc);
  int64_t stride = 1;
  for (int d = n - 1; d >= 0; d--) {
    tc_expr *q = stride == 1 ? e : bin(P, TC_OP_FLOORDIV, e, ci(P, stride, loc), loc);
    I.subst[d] = d == 0 ? q : bin(P, TC_OP_FLOORMOD, q, ci(P, ext[d], loc), loc);
    stride *= ext[d];
  }
  tc_stmt *b = xform_stmt(&I, body);
  if (I.failed || !b) return NULL;
  tc_stmt_list inner = {0};
  tc_expr *lin = every ? tc_ir_var_ref(P->a, c, loc)
                      : bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, tc_ir_var_ref(P->a, c, loc), ci(P, threads, loc), loc), tid_ref(P, loc), loc);
  tc_stmt_list_push(P->a, &inner, let_stmt(P, ev, lin, loc));
  tc_stmt_list_push(P->a, &inner, if_then(P, total % threads ? bin(P, TC_OP_LT, e, ci(P, total, loc), loc) : NULL, b, loc));
  return for_loop(P, c, trips, trips <= 32 ? TC_LOOP_UNROLL : TC_LOOP_SERIAL, tc_stmt_list_seq(P->a, &inner, loc), loc);
}

/* ---- replicated fragments read at runtime indices (outside T.Parallel) ---- */
typedef struct repl_ctx {
  tc_gpu_plan *P;
  bool failed;
  tc_loc loc;
} repl_ctx;

static tc_expr *repl_index(tc_gpu_plan *P, const tc_buffer *b, int n, tc_expr *const *idx, tc_loc loc) {
  const tc_gpu_layout *F = P->frag[b->id];
  tc_expr *e = NULL;
  for (int d = 0; d < n; d++) {
    tc_expr *x = idx[d];
    e = e ? bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, e, ci(P, F->shape[d], loc), loc), x, loc) : x;
  }
  return e ? e : ci(P, 0, loc);
}

static tc_expr *repl_rewrite(void *ctx, tc_expr *e) {
  repl_ctx *R = ctx;
  if (e->op != TC_OP_LOAD || !is_frag(e->buf)) return e;
  const tc_gpu_layout *F = R->P->frag[e->buf->id];
  if (F->kind != TC_GL_REPL) {
    if (!R->failed)
      tc_gpu_fail(R->P, e->loc, "fragment '%s' is read outside T.Parallel; on %s that needs it in every thread "
                                "(use a T.Parallel loop, or copy it to shared memory)",
                  e->buf->name, R->P->desc->target);
    R->failed = true;
    return e;
  }
  return tc_ir_load(R->P->a, R->P->regs[e->buf->id], 1, idx1(R->P, repl_index(R->P, e->buf, e->nargs, e->args, e->loc)), e->loc);
}

/* ---- region helpers ---- */
/* Indices of region `r` at iteration `it` (one value per non-unit dimension, in order). */
tc_expr **tc_gpu_region_at(tc_gpu_plan *P, const tc_region *r, tc_expr *const *it, tc_loc loc) {
  tc_expr **idx = TC_NEW_ARRAY(P->a, tc_expr *, r->ndim > 0 ? r->ndim : 1);
  int k = 0;
  for (int d = 0; d < r->ndim; d++) {
    if (r->r[d].extent == 1) idx[d] = r->r[d].start;
    else {
      int64_t s0;
      idx[d] = tc_expr_const_int(r->r[d].start, &s0) && s0 == 0 ? it[k] : bin(P, TC_OP_ADD, r->r[d].start, it[k], loc);
      k++;
    }
  }
  return idx;
}

bool tc_gpu_region_whole(const tc_region *r) {
  int64_t s;
  if (!r->buf || r->ndim != r->buf->ndim) return false;
  for (int d = 0; d < r->ndim; d++) {
    int64_t ext;
    if (!tc_expr_const_int(r->buf->shape[d], &ext) || r->r[d].extent != ext || !tc_expr_const_int(r->r[d].start, &s) || s)
      return false;
  }
  return true;
}

/* Iteration vars for the squeezed shape of region r. */
static int iter_vars(tc_gpu_plan *P, const tc_region *r, tc_var **vars, int64_t *ext, tc_loc loc) {
  int n = 0;
  for (int d = 0; d < r->ndim && n < TC_GL_MAXDIM; d++)
    if (r->r[d].extent != 1) {
      vars[n] = new_var(P, "i", tc_index_dtype(), TC_VAR_LOOP, loc);
      ext[n++] = r->r[d].extent;
    }
  return n;
}

/* Region dimension `dim` (negative: from the end) as an index into the squeezed shape iter_vars
 * walks, which drops extent-1 dimensions: a (1, 4, 8) tile reduced over dimension 1 walks (4, 8)
 * and reduces its dimension 0. -1: out of range; -2: the dimension has extent 1. */
static int squeezed_dim(const tc_region *r, int dim) {
  if (dim < 0) dim += r->ndim;
  if (dim < 0 || dim >= r->ndim) return -1;
  if (r->r[dim].extent == 1) return -2;
  int k = 0;
  for (int d = 0; d < dim; d++) k += r->r[d].extent != 1;
  return k;
}

static tc_expr **var_refs(tc_gpu_plan *P, int n, tc_var **vars, tc_loc loc) {
  tc_expr **v = TC_NEW_ARRAY(P->a, tc_expr *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) v[i] = tc_ir_var_ref(P->a, vars[i], loc);
  return v;
}

/* A serial nest over ext (for per-thread tile ops). */
static tc_stmt *serial_nest(tc_gpu_plan *P, int n, tc_var **vars, const int64_t *ext, tc_stmt *body, tc_loc loc) {
  for (int d = n - 1; d >= 0; d--) body = for_loop(P, vars[d], ext[d], TC_LOOP_SERIAL, body, loc);
  return body;
}

/* Run `body` (written in vars over the squeezed shape of the region `over` of a fragment or
 * of any buffer) by the right threads. */
static tc_stmt *over_region(tc_gpu_plan *P, const tc_region *over, int n, tc_var **vars, const int64_t *ext,
                            tc_stmt *body, bool once, tc_loc loc) {
  if (is_frag(over->buf)) {
    driven dv = {.D = P->frag[over->buf->id], .nvars = n, .vars = vars, .region = over->r, .region_ndim = over->ndim, .once = once};
    return drive(P, &dv, body, loc);
  }
  return deal(P, n, vars, ext, body, loc);
}

/* ---- tile operations ---- */
/* A copy between global and shared memory of one dtype whose rows are whole 16-byte chunks
 * gets a fast path: 16-byte copies without bounds checks, taken when the tile is inside the
 * tensor and its rows are 16-byte aligned (tested once, at run time); else the checked
 * element copy. Returns NULL (no error) when the copy does not qualify. */
tc_expr *tc_gpu_global_in_bounds(tc_gpu_plan *P, const tc_region *g, tc_loc loc) {
  tc_expr *cond = NULL;
  for (int d = 0; d < g->ndim; d++) {
    tc_expr *st = g->r[d].start;
    tc_expr *end = bin(P, TC_OP_ADD, st, ci(P, g->r[d].extent, loc), loc);
    int64_t c0;
    if (!tc_expr_const_int(st, &c0) || c0 < 0) cond = and_expr(P, cond, bin(P, TC_OP_GE, st, ci(P, 0, loc), loc), loc);
    tc_expr *limit = g->buf->shape[d];
    if (P->desc->plant == TC_PLANT_BOUNDS) limit = bin(P, TC_OP_ADD, limit, ci(P, 1, loc), loc);
    cond = and_expr(P, cond, bin(P, TC_OP_LE, end, limit, loc), loc);
  }
  return cond;
}

/* The run-time test of a vectorized copy of global tile g in runs of v elements: the tile is
 * inside the tensor, its first element 16-byte aligned, and every row a whole number of runs. */
static tc_expr *aligned_tile(tc_gpu_plan *P, const tc_region *g, int v, tc_loc loc) {
  tc_expr **g0 = TC_NEW_ARRAY(P->a, tc_expr *, g->ndim);
  for (int d = 0; d < g->ndim; d++) g0[d] = g->r[d].start;
  tc_expr **aa = TC_NEW_ARRAY(P->a, tc_expr *, 1);
  aa[0] = tc_ir_address_of(P->a, g->buf, g->ndim, g0, loc);
  tc_expr *cond = and_expr(P, tc_gpu_global_in_bounds(P, g, loc), tc_ir_call(P->a, "aligned16", tc_dt(TC_DT_BOOL), 1, aa, loc), loc);
  if (g->ndim > 1)
    cond = and_expr(P, cond, bin(P, TC_OP_EQ, bin(P, TC_OP_FLOORMOD, g->buf->shape[g->ndim - 1], ci(P, v, loc), loc), ci(P, 0, loc), loc), loc);
  return cond;
}

static tc_stmt *vector_copy(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext, tc_loc loc) {
  const tc_region *g = src->buf->scope == TC_SCOPE_GLOBAL ? src : dst, *sh = g == src ? dst : src;
  if (!(g->buf->scope == TC_SCOPE_GLOBAL && sh->buf->scope == TC_SCOPE_SHARED) || tc_layout_on_global(g->buf) ||
      !tc_dtype_eq(src->buf->dtype, dst->buf->dtype) ||
      tc_dtype_bits(src->buf->dtype) < 8 || n == 0)
    return NULL;
  int eb = tc_dtype_bits(src->buf->dtype) / 8, v = 16 / eb;
  int64_t cols, s0;
  /* the innermost dimension of both regions is the copy's innermost one, whole chunks long */
  if (src->r[src->ndim - 1].extent != ext[n - 1] || dst->r[dst->ndim - 1].extent != ext[n - 1] || ext[n - 1] % v) return NULL;
  if (!tc_expr_const_int(sh->buf->shape[sh->buf->ndim - 1], &cols) || cols % v || !tc_expr_const_int(sh->r[sh->ndim - 1].start, &s0) ||
      s0 % v)
    return NULL;
  tc_var *vars[TC_GL_MAXDIM];
  int64_t vext[TC_GL_MAXDIM];
  tc_expr *it[TC_GL_MAXDIM];
  for (int d = 0; d < n; d++) {
    vars[d] = new_var(P, "c", tc_index_dtype(), TC_VAR_LOOP, loc);
    vext[d] = d == n - 1 ? ext[d] / v : ext[d];
    it[d] = tc_ir_var_ref(P->a, vars[d], loc);
  }
  it[n - 1] = bin(P, TC_OP_MUL, it[n - 1], ci(P, v, loc), loc);
  tc_expr **di = tc_gpu_region_at(P, dst, it, loc), **si = tc_gpu_region_at(P, src, it, loc);
  tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 2);
  args[0] = tc_ir_address_of(P->a, dst->buf, dst->ndim, di, loc);
  args[1] = tc_ir_address_of(P->a, src->buf, src->ndim, si, loc);
  tc_stmt *body = tc_ir_intrinsic_stmt(P->a, P->async_copy ? "cp_async16" : "copy16", 2, args, loc);
  tc_stmt *fast = deal(P, n, vars, vext, body, loc);
  if (!fast) return NULL;
  /* run-time test: in bounds, first element aligned, every row aligned */
  tc_expr *cond = aligned_tile(P, g, v, loc);
  tc_stmt *c = tc_ir_stmt(P->a, TC_ST_IF, loc);
  c->u.if_.cond = cond;
  c->u.if_.then_s = fast;
  return c;
}

/* The longest run (a power of two, at most max_w, 1 when none) such that every thread's registers
 * r0 .. r0 + w - 1, for r0 a multiple of w, hold w consecutive elements of one row, the first at a
 * multiple of w in its row: those registers move to or from memory as one vector access. */
static int register_run(const tc_gpu_layout *D, int max_w) {
  int64_t inner = D->shape[D->ndim - 1];
  int w = 1;
  while (w * 2 <= max_w) w *= 2;
  for (; w >= 2; w /= 2) {
    bool ok = D->num_regs % w == 0 && inner % w == 0;
    for (int64_t t = 0; ok && t < D->threads; t++)
      for (int64_t r0 = 0; ok && r0 < D->num_regs; r0 += w) {
        int64_t rep, e0 = tc_gl_elem(D, t, r0, &rep);
        if (e0 < 0 || e0 % inner % w) {
          ok = false;
          break;
        }
        for (int j = 1; j < w; j++)
          if (tc_gl_elem(D, t, r0 + j, &rep) != e0 + j) ok = false;
      }
    if (ok) return w;
  }
  return 1;
}

/* A copy between a CYCLIC fragment (each thread holds runs of `vec` consecutive elements of a
 * row) and a global tensor or a shared tile moves each run with vector accesses (copy_vec of
 * 4, 8 or 16 bytes) instead of one load or store per element. For a global tensor it is taken
 * when the tile is inside the tensor and its rows are aligned (*cond_out, tested once at run
 * time); a shared tile's alignment is known (*cond_out NULL), and a run of at most 16 bytes
 * stays contiguous under the XOR swizzle, which permutes whole 16-byte chunks (an annotated
 * layout does not qualify, nor does a global tensor with its own). NULL: does not qualify. */
static tc_stmt *vector_frag_copy(tc_gpu_plan *P, const tc_region *src, const tc_region *dst, int n, const int64_t *ext,
                                 tc_expr **cond_out, tc_loc loc) {
  const tc_region *f = is_frag(src->buf) ? src : dst, *g = f == src ? dst : src;
  bool shared = g->buf->scope == TC_SCOPE_SHARED;
  if (!is_frag(f->buf) || !(g->buf->scope == TC_SCOPE_GLOBAL || shared) || !tc_gpu_region_whole(f) || n == 0) return NULL;
  if ((shared && P->annotated[g->buf->id]) || tc_layout_on_global(g->buf)) return NULL;
  const tc_gpu_layout *D = P->frag[f->buf->id];
  if (!D || D->reps != 1 || !P->regs[f->buf->id]) return NULL;
  int bits = tc_dtype_bits(g->buf->dtype), eb = bits / 8;
  if (bits % 8 || eb == 0 || tc_dtype_bits(f->buf->dtype) < 8) return NULL;
  int64_t inner = D->shape[D->ndim - 1];
  int w;
  if (D->kind == TC_GL_CYCLIC) {
    if (D->vec < 2) return NULL;
    w = D->vec;
    while (w > 1 && (int64_t)w * eb > 16) w /= 2;
    if (w < 2 || D->vec % w || inner % D->vec) return NULL;
  } else {
    w = register_run(D, 16 / eb); /* an accumulator's runs (Metal 4's matmul2d: 4 columns a thread) */
  }
  if (w < 2 || (w * eb != 4 && w * eb != 8 && w * eb != 16)) return NULL;
  /* the run is along the global tensor's innermost (contiguous) dimension */
  if (g->r[g->ndim - 1].extent != inner || ext[n - 1] != inner) return NULL;
  int k = 0;
  for (int d = 0; d < D->ndim; d++)
    if (D->shape[d] != 1) {
      if (k >= n || ext[k] != D->shape[d]) return NULL;
      k++;
    }
  if (k != n) return NULL;
  if (shared) {
    int64_t cols, s0;
    if (!tc_expr_const_int(g->buf->shape[g->buf->ndim - 1], &cols) || cols % w) return NULL;
    for (int d = 0; d < g->ndim; d++)
      if (!tc_expr_const_int(g->r[d].start, &s0) || (d == g->ndim - 1 && s0 % w)) return NULL;
  }
  tc_stmt_list out = {0};
  tc_expr *tid = tid_ref(P, loc);
  for (int64_t r0 = 0; r0 < D->num_regs; r0 += w) {
    tc_expr *idx[TC_GL_MAXDIM], *valid, *it[TC_GL_MAXDIM];
    tc_gl_index_exprs(P->a, D, tid, r0, idx, &valid, loc);
    k = 0;
    for (int d = 0; d < D->ndim; d++)
      if (D->shape[d] != 1) it[k++] = idx[d];
    tc_expr *gaddr = tc_ir_address_of(P->a, g->buf, g->ndim, tc_gpu_region_at(P, g, it, loc), loc);
    tc_expr *raddr = tc_ir_address_of(P->a, P->regs[f->buf->id], 1, idx1(P, ci(P, r0, loc)), loc);
    tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 3);
    args[0] = f == dst ? raddr : gaddr;
    args[1] = f == dst ? gaddr : raddr;
    args[2] = ci(P, w, loc);
    tc_stmt_list_push(P->a, &out, if_then(P, valid, tc_ir_intrinsic_stmt(P->a, "copy_vec", 3, args, loc), loc));
  }
  *cond_out = NULL;
  if (shared) return tc_ir_seq(P->a, out.n, out.items, loc);
  tc_expr *cond = aligned_tile(P, g, w, loc);
  *cond_out = cond;
  return tc_ir_seq(P->a, out.n, out.items, loc);
}

static tc_stmt *lower_copy(tc_gpu_plan *P, tc_stmt *s) {
  const tc_region *src = &s->u.copy.src, *dst = &s->u.copy.dst;
  tc_var *vars[TC_GL_MAXDIM];
  int64_t ext[TC_GL_MAXDIM];
  int n = iter_vars(P, dst, vars, ext, s->loc);
  tc_expr **it = var_refs(P, n, vars, s->loc);
  tc_expr *val = tc_ir_load(P->a, src->buf, src->ndim, tc_gpu_region_at(P, src, it, s->loc), s->loc);
  tc_stmt *body = store(P, dst->buf, dst->ndim, tc_gpu_region_at(P, dst, it, s->loc), tc_ir_cast(P->a, dst->buf->dtype, val, s->loc), s->loc);
  tc_stmt *fast = is_frag(src->buf) || is_frag(dst->buf) ? NULL : vector_copy(P, src, dst, n, ext, s->loc);
  /* between a fragment and a global tensor: a path without bounds checks when the tile is
   * inside the tensor (tested once at run time) */
  const tc_region *g = src->buf->scope == TC_SCOPE_GLOBAL ? src : dst->buf->scope == TC_SCOPE_GLOBAL ? dst : NULL;
  if (!fast && g == dst && is_frag(src->buf)) { /* an accumulator through shared memory */
    tc_stmt *staged = tc_gpu_acc_store_staged(P, src, dst, n, ext, s->loc);
    if (staged) return staged;
  }
  if (!fast && g && (is_frag(src->buf) || is_frag(dst->buf))) {
    tc_stmt *quick = tc_ir_clone_stmt(P->a, body);
    if (g == src) quick->u.store.value->args[0]->in_bounds = true; /* cast(load) */
    else quick->u.store.in_bounds = true;
    const tc_region *over = is_frag(dst->buf) ? dst : src;
    tc_stmt *a = over_region(P, over, n, vars, ext, quick, over == src, s->loc);
    tc_stmt *b = over_region(P, over, n, vars, ext, body, over == src, s->loc);
    if (!a || !b) return NULL;
    tc_stmt *c = tc_ir_stmt(P->a, TC_ST_IF, s->loc);
    c->u.if_.cond = tc_gpu_global_in_bounds(P, g, s->loc);
    c->u.if_.then_s = a;
    c->u.if_.else_s = b;
    tc_expr *vcond = NULL;
    tc_stmt *vec = NULL;
    bool in_bounds_only = false; /* vec's test is c's own: only c's checked copy is left */
    /* Metal's simdgroup accumulators: simdgroup_store, before vector stores of their runs */
    if (is_frag(src->buf)) in_bounds_only = (vec = tc_gpu_acc_store_simdgroup(P, src, dst, n, ext, &vcond, s->loc)) != NULL;
    if (!vec) vec = vector_frag_copy(P, src, dst, n, ext, &vcond, s->loc);
    if (!vec) return c;
    tc_stmt *v = tc_ir_stmt(P->a, TC_ST_IF, s->loc);
    v->u.if_.cond = vcond;
    v->u.if_.then_s = vec;
    v->u.if_.else_s = in_bounds_only ? b : c;
    return v;
  }
  if (fast) {
    tc_stmt *slow = over_region(P, dst, n, vars, ext, body, false, s->loc);
    if (!slow) return NULL;
    fast->u.if_.else_s = slow;
    return fast;
  }
  if (is_thread_local(src->buf) || is_thread_local(dst->buf)) {
    repl_ctx R = {.P = P};
    tc_rewrite_stmt_exprs(body, repl_rewrite, &R);
    return R.failed ? NULL : serial_nest(P, n, vars, ext, body, s->loc);
  }
  if (is_frag(src->buf) != is_frag(dst->buf)) {
    tc_expr *none = NULL;
    tc_stmt *vec = vector_frag_copy(P, src, dst, n, ext, &none, s->loc);
    if (vec) return vec;
  }
  if (is_frag(dst->buf)) return over_region(P, dst, n, vars, ext, body, false, s->loc);
  if (is_frag(src->buf)) return over_region(P, src, n, vars, ext, body, true, s->loc);
  return over_region(P, dst, n, vars, ext, body, false, s->loc);
}

static tc_stmt *lower_fill(tc_gpu_plan *P, tc_stmt *s) {
  const tc_region *dst = &s->u.fill.dst;
  tc_var *vars[TC_GL_MAXDIM];
  int64_t ext[TC_GL_MAXDIM];
  int n = iter_vars(P, dst, vars, ext, s->loc);
  tc_expr **it = var_refs(P, n, vars, s->loc);
  tc_stmt *body = store(P, dst->buf, dst->ndim, tc_gpu_region_at(P, dst, it, s->loc), s->u.fill.value, s->loc);
  if (is_thread_local(dst->buf)) return serial_nest(P, n, vars, ext, body, s->loc);
  return over_region(P, dst, n, vars, ext, body, false, s->loc);
}

/* ---- T.Parallel loops that combine several iterations into one fragment element ----
 * `r[i] += x[i, j]` (or T.max / T.min / a bitwise op) in `for i, j in T.Parallel(M, N)` writes
 * r[i] from N iterations: TileLang's reducers (T.alloc_reducer + T.finalize_reducer), or a plain
 * fragment updated the same way. The reference runs the iterations one after another. Driven by
 * the tile, the iterations of one row run on several threads, each holding its own copy (a
 * replica) of r[i]; updating the copies in place leaves each with only its own contributions.
 * So such a loop is lowered as: each thread saves its registers of r and starts them from the
 * op's identity, runs its iterations, and afterwards every replica of an element is combined
 * through shared scratch memory (slot rep * numel + element) and folded into the saved value,
 * so every copy holds what the reference's one copy holds. */
typedef struct par_red {
  tc_buffer *buf;
  tc_expr_op op; /* the combine (ADD for a subtraction) */
  int stores;
  int loads;
} par_red;
typedef struct red_scan {
  tc_gpu_plan *P;
  const par_nest *N;
  par_red r[16];
  int n;
  bool bad;
  tc_loc bad_loc;
  const tc_buffer *bad_buf;
} red_scan;

static bool uses_var(const tc_expr *e, const tc_var *v) {
  if (!e) return false;
  if (e->op == TC_OP_VAR) return e->var == v;
  for (int i = 0; i < e->nargs; i++)
    if (uses_var(e->args[i], v)) return true;
  return false;
}
static bool loads_buf(const tc_expr *e, const tc_buffer *b) {
  if (!e) return false;
  if (e->op == TC_OP_LOAD && tc_buffer_storage(e->buf) == tc_buffer_storage(b)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (loads_buf(e->args[i], b)) return true;
  return false;
}
static bool same_expr(const tc_expr *x, const tc_expr *y) {
  if (x->op != y->op || x->nargs != y->nargs || !tc_dtype_eq(x->dtype, y->dtype)) return false;
  switch (x->op) {
  case TC_OP_CONST_INT: return x->ival == y->ival;
  case TC_OP_VAR: return x->var == y->var;
  case TC_OP_LOAD: case TC_OP_ADDRESS_OF: if (x->buf != y->buf) return false; break;
  case TC_OP_CALL: if (!x->callee || !y->callee || strcmp(x->callee, y->callee)) return false; break;
  default:
    if (x->nargs == 0) return false; /* floats and other leaves: not needed for indices */
  }
  for (int i = 0; i < x->nargs; i++)
    if (!same_expr(x->args[i], y->args[i])) return false;
  return true;
}
static const tc_expr *strip_cast(const tc_expr *e) {
  while (e->op == TC_OP_CAST) e = e->args[0];
  return e;
}
/* value is `b[idx] op v` (or `v op b[idx]` for a commutative op) with v not reading b: the op */
static bool combine_of(const tc_stmt *st, tc_expr_op *op) {
  const tc_buffer *b = st->u.store.buf;
  const tc_expr *v = strip_cast(st->u.store.value);
  if (v->nargs != 2) return false;
  switch (v->op) {
  case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MAX: case TC_OP_MIN: case TC_OP_BIT_AND: case TC_OP_BIT_OR: case TC_OP_BIT_XOR: break;
  default: return false;
  }
  for (int side = 0; side < 2; side++) {
    if (side == 1 && v->op == TC_OP_SUB) break;
    const tc_expr *l = strip_cast(v->args[side]), *o = v->args[1 - side];
    if (l->op != TC_OP_LOAD || l->buf != b || l->nargs != st->u.store.nidx || loads_buf(o, b)) continue;
    bool same = true;
    for (int d = 0; d < l->nargs && same; d++) same = same_expr(l->args[d], st->u.store.idx[d]);
    if (!same) continue;
    *op = v->op == TC_OP_SUB ? TC_OP_ADD : v->op;
    return true;
  }
  return false;
}
static bool red_scan_cb(void *ctx, tc_stmt *s) {
  red_scan *R = ctx;
  if (s->kind != TC_ST_STORE || !is_frag(s->u.store.buf)) return true;
  tc_buffer *b = s->u.store.buf;
  const tc_gpu_layout *L = R->P->frag[b->id];
  if (!L || !R->P->regs[b->id] || L->reps <= 1) return true; /* one owner per element: it runs all its iterations */
  bool missing = false, value_varies = loads_buf(s->u.store.value, b);
  for (int k = 0; k < R->N->n; k++) {
    if (R->N->ext[k] <= 1) continue;
    bool used = false;
    for (int d = 0; d < s->u.store.nidx && !used; d++) used = uses_var(s->u.store.idx[d], R->N->var[k]);
    if (!used) missing = true, value_varies |= uses_var(s->u.store.value, R->N->var[k]);
  }
  if (!missing || !value_varies) return true; /* one iteration per element, or the same value from each */
  tc_expr_op op;
  int i = 0;
  while (i < R->n && R->r[i].buf != b) i++;
  if (!combine_of(s, &op) || (i < R->n && R->r[i].op != op) || (i == R->n && R->n == 16)) {
    if (!R->bad) R->bad = true, R->bad_loc = s->loc, R->bad_buf = b;
    return true;
  }
  if (i == R->n) R->r[R->n++] = (par_red){.buf = b, .op = op};
  R->r[i].stores++;
  return true;
}
static tc_expr *count_loads_rw(void *ctx, tc_expr *e) {
  red_scan *R = ctx;
  if (e->op == TC_OP_LOAD)
    for (int i = 0; i < R->n; i++)
      if (tc_buffer_storage(e->buf) == tc_buffer_storage(R->r[i].buf)) R->r[i].loads++;
  return e;
}

static tc_expr *combine_identity(tc_gpu_plan *P, tc_expr_op op, tc_dtype dt, tc_loc loc);
static tc_buffer *scratch(tc_gpu_plan *P, tc_dtype dt, int64_t elems, tc_loc loc);
static tc_dtype acc_dtype(tc_dtype d);

/* Wrap the lowered loop `lowered` with the save/identity before and the combine after, for
 * each fragment R->r[] combines into. */
static tc_stmt *par_reduce_wrap(tc_gpu_plan *P, red_scan *R, tc_stmt *lowered, tc_loc loc) {
  tc_stmt_list pre = {0}, post = {0};
  for (int i = 0; i < R->n; i++) {
    tc_buffer *b = R->r[i].buf, *regs = P->regs[b->id];
    tc_expr_op op = R->r[i].op;
    const tc_gpu_layout *L = P->frag[b->id];
    tc_expr **shape = idx1(P, ci(P, L->num_regs, loc));
    tc_buffer *old = tc_ir_new_buffer(P->a, P->k, "tcg_red_old", b->dtype, TC_SCOPE_LOCAL, 1, shape, loc);
    tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, loc);
    al->u.alloc.buf = old;
    tc_stmt_list_push(P->a, &pre, al);
    for (int64_t r = 0; r < L->num_regs; r++) {
      tc_stmt_list_push(P->a, &pre, reg_store(P, old, r, reg_load(P, regs, r, loc), loc));
      tc_stmt_list_push(P->a, &pre, reg_store(P, regs, r, combine_identity(P, op, b->dtype, loc), loc));
    }
    tc_buffer *sc = scratch(P, acc_dtype(b->dtype), L->reps * L->numel, loc);
    tc_stmt_list wr = {0}, rd = {0};
    for (int64_t r = 0; r < L->num_regs; r++) {
      tc_expr *idx[TC_GL_MAXDIM], *valid;
      tc_gl_index_exprs(P->a, L, tid_ref(P, loc), r, idx, &valid, loc);
      tc_expr *e = ci(P, 0, loc);
      for (int d = 0; d < L->ndim; d++) e = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, e, ci(P, L->shape[d], loc), loc), idx[d], loc);
      tc_expr *rep = tc_gl_rep_expr(P->a, L, tid_ref(P, loc), loc);
      tc_expr *slot = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, rep, ci(P, L->numel, loc), loc), e, loc);
      tc_stmt *w = store(P, sc, 1, idx1(P, slot), reg_load(P, regs, r, loc), loc);
      tc_stmt_list_push(P->a, &wr, valid ? if_then(P, valid, w, loc) : w);
      /* regs[r] = old[r]; for k < reps: regs[r] = regs[r] op scratch[k * numel + e] */
      tc_var *k = new_var(P, "rk", tc_index_dtype(), TC_VAR_LOOP, loc);
      tc_expr *kslot = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, tc_ir_var_ref(P->a, k, loc), ci(P, L->numel, loc), loc),
                           tc_ir_clone_expr(P->a, e), loc);
      tc_expr *part = cast_to(P, b->dtype, tc_ir_load(P->a, sc, 1, idx1(P, kslot), loc));
      tc_stmt *fold = for_loop(P, k, L->reps, TC_LOOP_SERIAL, reg_store(P, regs, r, bin(P, op, reg_load(P, regs, r, loc), part, loc), loc), loc);
      tc_stmt *items[2] = {reg_store(P, regs, r, reg_load(P, old, r, loc), loc), fold};
      tc_stmt *both = tc_ir_seq(P->a, 2, items, loc);
      tc_stmt_list_push(P->a, &rd, valid ? if_then(P, tc_ir_clone_expr(P->a, valid), both, loc) : both);
    }
    tc_stmt_list_push(P->a, &post, barrier(P, loc));
    tc_stmt_list_push(P->a, &post, tc_stmt_list_seq(P->a, &wr, loc));
    tc_stmt_list_push(P->a, &post, barrier(P, loc));
    tc_stmt_list_push(P->a, &post, tc_stmt_list_seq(P->a, &rd, loc));
  }
  tc_stmt *items[3] = {tc_stmt_list_seq(P->a, &pre, loc), lowered, tc_stmt_list_seq(P->a, &post, loc)};
  tc_stmt *wrap = tc_ir_seq(P->a, 3, items, loc);
  tc_stmt_set_add(P->a, &P->combine_wraps, wrap); /* combine_hoist.c may move its parts out of loops */
  return wrap;
}

/* ---- stores to shared memory that several iterations make to one element ----
 * `s[r] += v` (or `s[0] = x[i]`) in `for r, c in T.Parallel(R, C)` with s in shared memory: the
 * reference runs the iterations in order, a GPU runs them on several threads at once, and the
 * element ends with whichever write lands last. No lowering makes that right, so it is refused
 * (a fragment combined into that way is merged by par_reduce_wrap instead). */
typedef struct race_scan {
  const par_nest *N;
  par_lets lets;
  const tc_stmt *bad;
  const tc_var *missing;
} race_scan;

static bool uses_var_through(const tc_expr *e, const tc_var *v, const par_lets *lets, int depth) {
  if (!e || depth > 64) return false;
  if (e->op == TC_OP_VAR) {
    if (e->var == v) return true;
    const tc_expr *x = tc_gpu_let_value(lets, e->var);
    return x && uses_var_through(x, v, lets, depth + 1);
  }
  for (int i = 0; i < e->nargs; i++)
    if (uses_var_through(e->args[i], v, lets, depth + 1)) return true;
  return false;
}

static bool race_cb(void *ctx, tc_stmt *s) {
  race_scan *R = ctx;
  if (R->bad || s->kind != TC_ST_STORE || s->u.store.buf->scope != TC_SCOPE_SHARED) return true;
  for (int k = 0; k < R->N->n; k++) {
    if (R->N->ext[k] <= 1) continue;
    bool used = false;
    for (int d = 0; d < s->u.store.nidx && !used; d++) used = uses_var_through(s->u.store.idx[d], R->N->var[k], &R->lets, 0);
    if (used) continue;
    /* the same value from every iteration is harmless; a value that varies, or reads the
     * element it updates, is not */
    if (uses_var_through(s->u.store.value, R->N->var[k], &R->lets, 0) || loads_buf(s->u.store.value, s->u.store.buf)) {
      R->bad = s, R->missing = R->N->var[k];
      return false;
    }
  }
  return true;
}

static tc_stmt *lower_parallel(tc_gpu_plan *P, tc_stmt *s) {
  par_nest N;
  if (!tc_gpu_parallel_nest(s, &N)) {
    tc_gpu_fail(P, s->loc, "T.Parallel needs constant extents on %s", P->desc->target);
    return NULL;
  }
  race_scan race = {.N = &N};
  tc_gpu_collect_lets(N.body, &race.lets);
  if (P->threads > 1) tc_visit_stmts(N.body, race_cb, &race); /* one thread runs them in order */
  if (race.bad) {
    tc_gpu_fail(P, race.bad->loc,
                "several iterations of this T.Parallel loop write one element of the shared buffer '%s' (its index does not "
                "use '%s'), on several threads at once: a race on %s; reduce into a fragment (T.alloc_reducer, or "
                "`r[i] = r[i] + v` on a T.alloc_fragment) or write it from a T.serial loop",
                race.bad->u.store.buf->name, race.missing->name, P->desc->target);
    return NULL;
  }
  access_scan A;
  tc_gpu_scan_nest(&A, &N);
  const tc_buffer *driver = A.exact_written ? A.exact_written : A.nexact ? A.exact[0] : NULL;
  bool driver_written = driver && A.exact_written == driver;
  const par_map *map = NULL;
  /* no fragment at the nest's own indices, or only a replicated one: a fragment the nest reaches
   * through a bijection (`x[i * n + j]`) can drive it, the loop vars following from its element */
  if (!driver || P->frag[driver->id]->kind == TC_GL_REPL) {
    int pick = -1;
    for (int i = 0; i < A.nbij; i++) {
      const tc_gpu_layout *L = P->frag[A.bij[i]->id];
      if (A.bij_mixed[i] || !L || (driver && L->kind == TC_GL_REPL)) continue;
      if (pick < 0 || (A.bij_written[i] && !A.bij_written[pick]) ||
          (P->frag[A.bij[pick]->id]->kind == TC_GL_REPL && L->kind != TC_GL_REPL))
        pick = i;
    }
    if (pick >= 0) driver = A.bij[pick], driver_written = A.bij_written[pick], map = &A.bij_map[pick];
  }
  tc_stmt *body = N.body;
  bool dealt = !(driver && P->frag[driver->id]->kind != TC_GL_REPL);
  /* a loop that writes a replicated fragment whole runs every iteration in every thread, so
   * that each thread's copy is updated */
  bool every = dealt && driver && driver_written;
  red_scan R = {.P = P, .N = &N};
  if (!every) {
    tc_visit_stmts(body, red_scan_cb, &R);
    tc_rewrite_stmt_exprs(body, count_loads_rw, &R);
    for (int i = 0; i < R.n && !R.bad; i++)
      if (R.r[i].loads != R.r[i].stores) R.bad = true, R.bad_loc = s->loc, R.bad_buf = R.r[i].buf;
    if (R.bad) {
      tc_gpu_fail(P, R.bad_loc,
                  "fragment '%s' is written at fewer indices than the T.Parallel loop has, so several iterations on several "
                  "threads write one element; %s combines them only for updates `x[i] = x[i] + v` (also -, T.max, T.min, &, |, ^) "
                  "and no other access to '%s' in the loop (use T.reduce_* or T.alloc_reducer)",
                  R.bad_buf->name, P->desc->target, R.bad_buf->name);
      return NULL;
    }
  }
  tc_stmt *lowered;
  if (!dealt) {
    bool effects = false;
    tc_visit_stmts(body, has_side_effects_cb, &effects);
    block_stores BS = {0};
    tc_visit_stmts(body, block_store_cb, &BS);
    tc_rewrite_stmt_exprs(body, block_load_cb, &BS);
    const tc_gpu_layout *D = P->frag[driver->id];
    if (R.n && D->reps > 1 && driver_written) {
      tc_gpu_fail(P, s->loc, "fragment '%s' is combined into from a T.Parallel loop that also writes the replicated fragment '%s'; %s "
                  "does not lower that (split the loop)", R.r[0].buf->name, driver->name, P->desc->target);
      return NULL;
    }
    /* Each replica of a replicated driver runs the iteration to update its own copy. An update of
     * shared or global memory that reads what it writes (a shared `d[i] = d[i] + x[i]` run by 16
     * replicas added x 16 times), an atomic or a print must happen once an iteration: with the
     * driver written too, both at once is not lowered. A plain store there is the same value from
     * every replica (they hold the same registers), so it may run in each. */
    if ((effects || BS.rmw) && D->reps > 1 && driver_written) {
      tc_gpu_fail(P, s->loc, "a T.Parallel loop that writes the replicated fragment '%s' (held by %lld threads per element) "
                  "also %s, which must happen once per iteration; %s does not lower that (split the loop)", driver->name,
                  (long long)D->reps, effects ? "adds atomically or prints" : "updates shared or global memory it reads",
                  P->desc->target);
      return NULL;
    }
    if (!driver_written) effects |= BS.any; /* one write per iteration suffices: replica 0's */
    /* with combined fragments or stores to block memory, each iteration must contribute once: only
     * replica 0 of a replicated driver runs it */
    driven dv = {.D = D, .nvars = N.n, .vars = N.var, .once = effects || R.n > 0, .map = map, .map_ext = N.ext};
    const tc_buffer *comb[16];
    for (int i = 0; i < R.n; i++) comb[i] = R.r[i].buf;
    P->combining = comb, P->ncombining = R.n;
    lowered = drive(P, &dv, body, s->loc);
    P->combining = NULL, P->ncombining = 0;
  } else {
    /* no fragment to follow: deal the iterations; replicated fragments are read in place, and
     * the ones combined into are updated in each thread's copy (par_reduce_wrap merges them) */
    const tc_buffer *comb[16];
    for (int i = 0; i < R.n; i++) comb[i] = R.r[i].buf;
    P->combining = comb, P->ncombining = R.n;
    lowered = deal_ex(P, N.n, N.var, N.ext, body, every, s->loc);
    P->combining = NULL, P->ncombining = 0;
  }
  if (!lowered || !R.n) return lowered;
  return par_reduce_wrap(P, &R, lowered, s->loc);
}

/* ---- reductions ---- */
static tc_dtype acc_dtype(tc_dtype d) {
  if (tc_dtype_is_float(d)) return tc_dt(tc_dtype_bits(d) > 32 ? TC_DT_FLOAT64 : TC_DT_FLOAT32);
  return d;
}
static tc_expr *red_identity(tc_gpu_plan *P, tc_reduce_kind op, tc_dtype dt, tc_loc loc) {
  bool fl = tc_dtype_is_float(dt);
  switch (op) {
  case TC_RED_MAX:
    if (fl && P->desc->plant == TC_PLANT_REDUCE_INIT) return tc_ir_float(P->a, 0.0, dt, loc);
    if (fl) return tc_ir_float(P->a, -__builtin_inf(), dt, loc);
    return tc_ir_int(P->a, tc_dtype_is_signed(dt) ? (tc_dtype_bits(dt) >= 64 ? INT64_MIN : -(1ll << (tc_dtype_bits(dt) - 1))) : 0, dt, loc);
  case TC_RED_MIN:
    if (fl) return tc_ir_float(P->a, __builtin_inf(), dt, loc);
    return tc_ir_int(P->a, tc_dtype_is_signed(dt) ? (tc_dtype_bits(dt) >= 64 ? INT64_MAX : (1ll << (tc_dtype_bits(dt) - 1)) - 1)
                                                  : (tc_dtype_bits(dt) >= 64 ? -1 : (int64_t)((1ull << tc_dtype_bits(dt)) - 1)),
                     dt, loc);
  default: return fl ? tc_ir_float(P->a, 0.0, dt, loc) : tc_ir_int(P->a, 0, dt, loc);
  }
}
static tc_expr *red_combine(tc_gpu_plan *P, tc_reduce_kind op, tc_expr *acc, tc_expr *x, tc_loc loc) {
  switch (op) {
  case TC_RED_MAX: case TC_RED_ABSMAX: return bin(P, TC_OP_MAX, acc, x, loc);
  case TC_RED_MIN: return bin(P, TC_OP_MIN, acc, x, loc);
  default: return bin(P, TC_OP_ADD, acc, x, loc);
  }
}
static tc_expr *red_input(tc_gpu_plan *P, tc_reduce_kind op, tc_dtype acc, tc_expr *x, tc_loc loc) {
  x = cast_to(P, acc, x);
  return op == TC_RED_ABSMAX || op == TC_RED_ABSSUM ? tc_ir_unary(P->a, TC_OP_ABS, x, loc) : x;
}

/* The identity of a T.Parallel loop's combine op (ADD, MAX, MIN, BIT_AND/OR/XOR) in dtype dt. */
static tc_expr *combine_identity(tc_gpu_plan *P, tc_expr_op op, tc_dtype dt, tc_loc loc) {
  switch (op) {
  case TC_OP_MAX: return red_identity(P, TC_RED_MAX, dt, loc);
  case TC_OP_MIN: return red_identity(P, TC_RED_MIN, dt, loc);
  case TC_OP_BIT_AND: return tc_ir_int(P->a, -1, dt, loc);
  default: return red_identity(P, TC_RED_SUM, dt, loc);
  }
}

/* A flat shared scratch buffer of at least `elems` elements of dtype dt (one per dtype,
 * sized for the largest use; uses are separated by barriers). */
static tc_buffer *scratch(tc_gpu_plan *P, tc_dtype dt, int64_t elems, tc_loc loc) {
  tc_buffer **slot = tc_dtype_bits(dt) > 32 ? &P->scratch64 : &P->scratch;
  tc_dtype want = tc_dtype_bits(dt) > 32 ? tc_dt(TC_DT_FLOAT64) : tc_dt(TC_DT_FLOAT32);
  if (!tc_dtype_is_float(dt)) want = tc_dtype_bits(dt) > 32 ? tc_dt(TC_DT_INT64) : tc_dt(TC_DT_INT32);
  if (!tc_dtype_is_float(dt) && tc_dtype_bits(dt) <= 32) slot = &P->scratch_i32;
  else if (!tc_dtype_is_float(dt)) slot = &P->scratch_i64;
  if (!*slot) {
    tc_expr **shape = idx1(P, ci(P, elems, loc));
    *slot = tc_ir_new_buffer(P->a, P->k, want.code == TC_DT_FLOAT32 ? "tcg_scratch" : "tcg_scratch_w", want,
                             TC_SCOPE_SHARED, 1, shape, loc);
  }
  tc_expr *sz = (*slot)->shape[0];
  if (sz->ival < elems) sz->ival = elems;
  return *slot;
}

/* Whether the reduction of fragment src (2-D, along dim 1) into fragment dst can be done in
 * registers and warp shuffles: returns the per-register destination map and the thread bits
 * that vary among the threads sharing a row. */
static bool reduce_in_regs(tc_gpu_plan *P, const tc_gpu_layout *S, const tc_gpu_layout *D, int64_t *dreg_of, unsigned *vbits) {
  int64_t C = S->shape[1], rows = S->shape[0];
  for (int64_t r = 0; r < S->num_regs; r++) dreg_of[r] = -2;
  /* reg_of_row[f]: the register of row f in D in the current thread (-1: not held), built from
   * D's few registers instead of searching D's replicas for every source register */
  int64_t *reg_of_row = TC_NEW_ARRAY(P->a, int64_t, rows > 0 ? rows : 1);
  for (int t = 0; t < P->threads; t++) {
    for (int64_t f = 0; f < rows; f++) reg_of_row[f] = -1;
    for (int64_t d = 0; d < D->num_regs; d++) {
      int64_t rep, f = tc_gl_elem(D, t, d, &rep);
      if (f >= 0 && f < rows && reg_of_row[f] < 0) reg_of_row[f] = d;
    }
    for (int64_t r = 0; r < S->num_regs; r++) {
      int64_t rep, e = tc_gl_elem(S, t, r, &rep);
      if (e < 0) continue;
      int64_t d = e / C < rows ? reg_of_row[e / C] : -1;
      if (d < 0 || (dreg_of[r] != -2 && dreg_of[r] != d)) return false;
      dreg_of[r] = d;
    }
  }
  if (S->reps > 1) { /* a replicated source: every owner must hold whole rows */
    for (int64_t f = 0; f < S->shape[0]; f++)
      for (int64_t rep = 0; rep < D->reps; rep++) {
        int64_t t, reg;
        tc_gl_owner(D, f, rep, &t, &reg);
        for (int64_t c = 0; c < C; c++)
          if (reg_in_thread(S, f * C + c, t) < 0) return false;
      }
    *vbits = 0;
    return true;
  }
  unsigned V = 0;
  for (int64_t f = 0; f < S->shape[0]; f++) {
    int64_t t0 = -1;
    for (int64_t c = 0; c < C; c++) {
      int64_t t, reg;
      tc_gl_owner(S, f * C + c, 0, &t, &reg);
      if (t0 < 0) t0 = t;
      V |= (unsigned)(t ^ t0);
    }
  }
  /* every row: its contributors are exactly the coset t0 ^ subsets(V), and they are its owners in D */
  int nb = __builtin_popcount(V);
  /* seen[t] == f + 1: thread t holds part of row f (no clearing between rows) */
  int64_t *seen = TC_NEW_ARRAY(P->a, int64_t, P->threads);
  for (int64_t f = 0; f < S->shape[0]; f++) {
    int64_t cnt = 0, t0 = -1;
    for (int64_t c = 0; c < C; c++) {
      int64_t t, reg;
      tc_gl_owner(S, f * C + c, 0, &t, &reg);
      if (t0 < 0) t0 = t;
      if ((((unsigned)t ^ (unsigned)t0) & ~V) != 0 || t < 0 || t >= P->threads) return false;
      if (seen[t] != f + 1) seen[t] = f + 1, cnt++;
    }
    if (cnt != (1ll << nb) || D->reps != cnt) return false;
    for (int64_t rep = 0; rep < D->reps; rep++) {
      int64_t t, reg;
      tc_gl_owner(D, f, rep, &t, &reg);
      if (t < 0 || t >= P->threads || seen[t] != f + 1) return false;
    }
  }
  *vbits = V;
  return true;
}

static tc_stmt *lower_reduce_regs(tc_gpu_plan *P, tc_stmt *s, const int64_t *dreg_of, unsigned V) {
  tc_loc loc = s->loc;
  tc_reduce_kind op = s->u.reduce.op;
  const tc_buffer *sb = s->u.reduce.src.buf, *db = s->u.reduce.dst.buf;
  const tc_gpu_layout *S = P->frag[sb->id], *D = P->frag[db->id];
  tc_dtype acc = acc_dtype(db->dtype);
  tc_stmt_list out = {0};
  tc_expr **shape = idx1(P, ci(P, D->num_regs, loc));
  tc_buffer *part = tc_ir_new_buffer(P->a, P->k, "tcg_part", acc, TC_SCOPE_LOCAL, 1, shape, loc);
  tc_stmt *al = tc_ir_stmt(P->a, TC_ST_ALLOC, loc);
  al->u.alloc.buf = part;
  tc_stmt_list_push(P->a, &out, al);
  for (int64_t d = 0; d < D->num_regs; d++) tc_stmt_list_push(P->a, &out, reg_store(P, part, d, red_identity(P, op, acc, loc), loc));
  /* Each destination register folds its source registers as a balanced tree: the same number
   * of combines as a serial fold, but a dependency chain of log2(n) instead of n (a 64x128
   * accumulator's row max is 32 registers a thread). A register that may lie past the end of a
   * cyclic tile (a run-time validity test) joins the fold under that test, serially. */
  tc_expr **leaves = TC_NEW_ARRAY(P->a, tc_expr *, S->num_regs ? S->num_regs : 1);
  for (int64_t d = 0; d < D->num_regs; d++) {
    int64_t n = 0;
    for (int64_t r = 0; r < S->num_regs; r++) {
      if (dreg_of[r] != d) continue;
      tc_expr *x = red_input(P, op, acc, reg_load(P, P->regs[sb->id], r, loc), loc);
      tc_expr *idx[TC_GL_MAXDIM], *valid;
      tc_gl_index_exprs(P->a, S, tid_ref(P, loc), r, idx, &valid, loc);
      if (!valid) {
        leaves[n++] = x;
        continue;
      }
      tc_expr *v = red_combine(P, op, reg_load(P, part, d, loc), x, loc);
      tc_stmt_list_push(P->a, &out, if_then(P, valid, reg_store(P, part, d, v, loc), loc));
    }
    for (; n > 1; n = (n + 1) / 2)
      for (int64_t i = 0; i < n / 2 + n % 2; i++)
        leaves[i] = 2 * i + 1 < n ? red_combine(P, op, leaves[2 * i], leaves[2 * i + 1], loc) : leaves[2 * i];
    if (n == 1) tc_stmt_list_push(P->a, &out, reg_store(P, part, d, red_combine(P, op, reg_load(P, part, d, loc), leaves[0], loc), loc));
  }
  for (int b = 0; b < 5; b++) {
    if (!(V & (1u << b))) continue;
    for (int64_t d = 0; d < D->num_regs; d++) {
      tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 3);
      args[0] = reg_load(P, part, d, loc), args[1] = ci(P, 1 << b, loc), args[2] = ci(P, 32, loc);
      tc_expr *call = tc_ir_call(P->a, "shfl_xor", acc, 3, args, loc);
      tc_stmt_list_push(P->a, &out, reg_store(P, part, d, red_combine(P, op, reg_load(P, part, d, loc), call, loc), loc));
    }
  }
  unsigned W = V >> 5; /* warp bits: combine through shared memory */
  if (W) {
    /* After the shuffles the lanes that differ only in V's lane bits hold the same values, and
     * the others hold other rows: one slot per warp, remaining lane and register, the lane
     * numbered by its bits outside V (MLA decode's 64-row reductions over 8 warps: 2 KB, where a
     * slot per thread took 8 KB, which its tiles could not spare). The lane with those bits 0
     * writes it. */
    unsigned VL = V & 31u;
    int kept = 0;
    tc_expr *lc = NULL; /* the lane's compact number: its bits outside VL, packed */
    tc_expr *lane = bin(P, TC_OP_FLOORMOD, tid_ref(P, loc), ci(P, 32, loc), loc);
    for (int b = 0; b < 5; b++) {
      if (VL & (1u << b)) continue;
      tc_expr *bit = bin(P, TC_OP_BIT_AND, bin(P, TC_OP_SHR, tc_ir_clone_expr(P->a, lane), ci(P, b, loc), loc), ci(P, 1, loc), loc);
      tc_expr *t = kept ? bin(P, TC_OP_SHL, bit, ci(P, kept, loc), loc) : bit;
      lc = lc ? bin(P, TC_OP_BIT_OR, lc, t, loc) : t;
      kept++;
    }
    if (!lc) lc = ci(P, 0, loc);
    int64_t L = (int64_t)1 << kept; /* compact lanes a warp */
    tc_buffer *sc = scratch(P, acc, (int64_t)P->threads / 32 * L * D->num_regs, loc);
    tc_expr *tid = tid_ref(P, loc), *w = bin(P, TC_OP_FLOORDIV, tid, ci(P, 32, loc), loc);
    tc_stmt_list wr = {0};
    for (int64_t d = 0; d < D->num_regs; d++) {
      tc_expr *slot = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, tc_ir_clone_expr(P->a, w), ci(P, L, loc), loc), tc_ir_clone_expr(P->a, lc), loc);
      tc_expr *off = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, slot, ci(P, D->num_regs, loc), loc), ci(P, d, loc), loc);
      tc_stmt_list_push(P->a, &wr, store(P, sc, 1, idx1(P, off), reg_load(P, part, d, loc), loc));
    }
    tc_stmt *writes = tc_stmt_list_seq(P->a, &wr, loc);
    if (VL) /* one writer for the lanes that hold the same values */
      writes = if_then(P, bin(P, TC_OP_EQ, bin(P, TC_OP_BIT_AND, tc_ir_clone_expr(P->a, lane), ci(P, VL, loc), loc), ci(P, 0, loc), loc),
                       writes, loc);
    tc_stmt_list_push(P->a, &out, barrier(P, loc));
    tc_stmt_list_push(P->a, &out, writes);
    tc_stmt_list_push(P->a, &out, barrier(P, loc));
    for (int64_t d = 0; d < D->num_regs; d++) {
      tc_expr *accv = NULL;
      for (unsigned sub = W;; sub = (sub - 1) & W) { /* every subset of the warp bits */
        tc_expr *wp = bin(P, TC_OP_BIT_OR, bin(P, TC_OP_BIT_AND, tc_ir_clone_expr(P->a, w), ci(P, ~(int64_t)W, loc), loc), ci(P, sub, loc), loc);
        tc_expr *tp = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, wp, ci(P, L, loc), loc), tc_ir_clone_expr(P->a, lc), loc);
        tc_expr *off = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, tp, ci(P, D->num_regs, loc), loc), ci(P, d, loc), loc);
        tc_expr *v = tc_ir_load(P->a, sc, 1, idx1(P, off), loc);
        accv = accv ? red_combine(P, op, accv, v, loc) : v;
        if (!sub) break;
      }
      tc_stmt_list_push(P->a, &out, reg_store(P, part, d, accv, loc));
    }
    tc_stmt_list_push(P->a, &out, barrier(P, loc));
  }
  for (int64_t d = 0; d < D->num_regs; d++) {
    tc_expr *v = reg_load(P, part, d, loc);
    if (!s->u.reduce.clear) v = red_combine(P, op, cast_to(P, acc, reg_load(P, P->regs[db->id], d, loc)), v, loc);
    tc_expr *idx[TC_GL_MAXDIM], *valid;
    tc_gl_index_exprs(P->a, D, tid_ref(P, loc), d, idx, &valid, loc);
    tc_stmt_list_push(P->a, &out, if_then(P, valid, reg_store(P, P->regs[db->id], d, v, loc), loc));
  }
  return tc_stmt_list_seq(P->a, &out, loc);
}

/* General reduction: the source (staged into shared memory when it is a fragment) is read by
 * the threads that own each destination element, which fold their slice serially. */
static tc_stmt *lower_reduce_general(tc_gpu_plan *P, tc_stmt *s) {
  tc_loc loc = s->loc;
  const tc_region *src = &s->u.reduce.src, *dst = &s->u.reduce.dst;
  tc_reduce_kind op = s->u.reduce.op;
  int dim = s->u.reduce.dim;
  tc_dtype acc = acc_dtype(dst->buf->dtype);
  tc_stmt_list out = {0};
  /* the source's squeezed shape */
  tc_var *sv[TC_GL_MAXDIM];
  int64_t sext[TC_GL_MAXDIM];
  int sn = iter_vars(P, src, sv, sext, loc);
  dim = squeezed_dim(src, dim);
  if (dim == -2) {
    tc_gpu_fail(P, loc, "T.reduce over dimension %d, of extent 1, is not supported on %s (copy the tile instead)",
                s->u.reduce.dim, P->desc->target);
    return NULL;
  }
  if (dim < 0 || dim >= sn) {
    tc_gpu_fail(P, loc, "T.reduce: dimension %d out of range on %s", s->u.reduce.dim, P->desc->target);
    return NULL;
  }
  int64_t total = 1;
  for (int d = 0; d < sn; d++) total *= sext[d];
  /* where the source is read from: its own buffer, or a staged row-major copy */
  tc_buffer *from = NULL;
  if (is_frag(src->buf) || is_thread_local(src->buf)) {
    if (is_thread_local(src->buf)) {
      tc_gpu_fail(P, loc, "T.reduce from a per-thread buffer into a block-wide one is not supported on %s", P->desc->target);
      return NULL;
    }
    from = scratch(P, acc, total, loc);
    tc_expr **it = var_refs(P, sn, sv, loc);
    tc_expr *lin = NULL;
    for (int d = 0; d < sn; d++) lin = lin ? bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, lin, ci(P, sext[d], loc), loc), it[d], loc) : it[d];
    tc_stmt *st = store(P, from, 1, idx1(P, lin ? lin : ci(P, 0, loc)),
                        tc_ir_load(P->a, src->buf, src->ndim, tc_gpu_region_at(P, src, it, loc), loc), loc);
    tc_stmt_list_push(P->a, &out, barrier(P, loc));
    tc_stmt *stage = over_region(P, src, sn, sv, sext, st, true, loc);
    if (!stage) return NULL;
    tc_stmt_list_push(P->a, &out, stage);
    tc_stmt_list_push(P->a, &out, barrier(P, loc));
  }
  /* destination iteration: the source dims without `dim` */
  tc_var *dv[TC_GL_MAXDIM];
  int64_t dext[TC_GL_MAXDIM];
  int dn = iter_vars(P, dst, dv, dext, loc);
  tc_expr **dit = var_refs(P, dn, dv, loc);
  tc_var *k = new_var(P, "k", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *accv = new_var(P, "acc", acc, TC_VAR_LOCAL, loc);
  /* source iteration at (dst iteration, k) */
  tc_expr *sit[TC_GL_MAXDIM];
  for (int d = 0, j = 0; d < sn; d++) sit[d] = d == dim ? tc_ir_var_ref(P->a, k, loc) : (j < dn ? dit[j++] : ci(P, 0, loc));
  tc_expr *x;
  if (from) {
    tc_expr *lin = NULL;
    for (int d = 0; d < sn; d++) lin = lin ? bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, lin, ci(P, sext[d], loc), loc), sit[d], loc) : sit[d];
    x = tc_ir_load(P->a, from, 1, idx1(P, lin), loc);
  } else {
    x = tc_ir_load(P->a, src->buf, src->ndim, tc_gpu_region_at(P, src, sit, loc), loc);
  }
  tc_stmt_list body = {0};
  tc_stmt_list_push(P->a, &body, let_stmt(P, accv, red_identity(P, op, acc, loc), loc));
  tc_stmt *as = tc_ir_stmt(P->a, TC_ST_ASSIGN, loc);
  as->u.let.var = accv;
  as->u.let.value = red_combine(P, op, tc_ir_var_ref(P->a, accv, loc), red_input(P, op, acc, x, loc), loc);
  tc_stmt_list_push(P->a, &body, for_loop(P, k, sext[dim], TC_LOOP_SERIAL, as, loc));
  tc_expr *v = tc_ir_var_ref(P->a, accv, loc);
  tc_expr **didx = tc_gpu_region_at(P, dst, dit, loc);
  if (!s->u.reduce.clear) v = red_combine(P, op, cast_to(P, acc, tc_ir_load(P->a, dst->buf, dst->ndim, didx, loc)), v, loc);
  tc_stmt_list_push(P->a, &body, store(P, dst->buf, dst->ndim, didx, v, loc));
  tc_stmt *b = tc_stmt_list_seq(P->a, &body, loc);
  tc_stmt *dealt = is_thread_local(dst->buf) ? serial_nest(P, dn, dv, dext, b, loc) : over_region(P, dst, dn, dv, dext, b, false, loc);
  if (!dealt) return NULL;
  tc_stmt_list_push(P->a, &out, dealt);
  if (from) tc_stmt_list_push(P->a, &out, barrier(P, loc));
  return tc_stmt_list_seq(P->a, &out, loc);
}

static tc_stmt *lower_reduce(tc_gpu_plan *P, tc_stmt *s) {
  const tc_region *src = &s->u.reduce.src, *dst = &s->u.reduce.dst;
  if (is_frag(src->buf) && is_frag(dst->buf) && tc_gpu_region_whole(src) && tc_gpu_region_whole(dst) && src->buf->ndim == 2 &&
      dst->buf->ndim == 1 && (s->u.reduce.dim == 1 || s->u.reduce.dim == -1)) {
    const tc_gpu_layout *S = P->frag[src->buf->id], *D = P->frag[dst->buf->id];
    int64_t *dreg = TC_NEW_ARRAY(P->a, int64_t, S->num_regs > 0 ? S->num_regs : 1);
    unsigned V = 0;
    if (reduce_in_regs(P, S, D, dreg, &V)) return lower_reduce_regs(P, s, dreg, V);
  }
  if (is_thread_local(dst->buf) && is_thread_local(src->buf)) {
    /* per-thread: each thread folds its own buffer */
    return lower_reduce_general(P, s);
  }
  return lower_reduce_general(P, s);
}

/* Inclusive prefix sums: the source is staged into shared scratch, each thread scans whole
 * lines, and the result is written back through the destination's layout. */
static tc_stmt *lower_cumsum(tc_gpu_plan *P, tc_stmt *s) {
  tc_loc loc = s->loc;
  const tc_region *src = &s->u.cumsum.src, *dst = &s->u.cumsum.dst;
  tc_var *v[TC_GL_MAXDIM];
  int64_t ext[TC_GL_MAXDIM];
  int n = iter_vars(P, src, v, ext, loc);
  int dim = squeezed_dim(src, s->u.cumsum.dim);
  if (dim == -2) {
    tc_gpu_fail(P, loc, "T.cumsum over dimension %d, of extent 1, is not supported on %s (copy the tile instead)",
                s->u.cumsum.dim, P->desc->target);
    return NULL;
  }
  if (n == 0 || dim < 0 || dim >= n) {
    tc_gpu_fail(P, loc, "T.cumsum: dimension %d out of range on %s", s->u.cumsum.dim, P->desc->target);
    return NULL;
  }
  tc_dtype acc = acc_dtype(dst->buf->dtype);
  int64_t total = 1;
  for (int d = 0; d < n; d++) total *= ext[d];
  tc_buffer *sc = scratch(P, acc, total, loc);
  tc_expr **it = var_refs(P, n, v, loc);
  tc_expr *lin = NULL;
  for (int d = 0; d < n; d++) lin = lin ? bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, lin, ci(P, ext[d], loc), loc), it[d], loc) : it[d];
  tc_stmt_list out = {0};
  tc_stmt_list_push(P->a, &out, barrier(P, loc));
  tc_stmt *st = store(P, sc, 1, idx1(P, lin), tc_ir_load(P->a, src->buf, src->ndim, tc_gpu_region_at(P, src, it, loc), loc), loc);
  tc_stmt *stage = is_thread_local(src->buf) ? NULL : over_region(P, src, n, v, ext, st, true, loc);
  if (!stage) {
    if (!is_thread_local(src->buf)) return NULL;
    tc_gpu_fail(P, loc, "T.cumsum on per-thread buffers is not supported on %s", P->desc->target);
    return NULL;
  }
  tc_stmt_list_push(P->a, &out, stage);
  tc_stmt_list_push(P->a, &out, barrier(P, loc));
  /* lines: every index but dim; line l, position k -> linear offset */
  int64_t len = ext[dim], lines = total / len, stride = 1;
  for (int d = n - 1; d > dim; d--) stride *= ext[d];
  tc_var *lv[1] = {new_var(P, "line", tc_index_dtype(), TC_VAR_LOOP, loc)};
  tc_var *k = new_var(P, "k", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *run = new_var(P, "run", acc, TC_VAR_LOCAL, loc);
  tc_expr *l = tc_ir_var_ref(P->a, lv[0], loc);
  /* base of line l: (l / stride) * len * stride + l % stride */
  tc_expr *base = bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, bin(P, TC_OP_FLOORDIV, l, ci(P, stride, loc), loc), ci(P, len * stride, loc), loc),
                      bin(P, TC_OP_FLOORMOD, l, ci(P, stride, loc), loc), loc);
  tc_expr *kk = tc_ir_var_ref(P->a, k, loc);
  if (s->u.cumsum.reverse) kk = bin(P, TC_OP_SUB, ci(P, len - 1, loc), kk, loc);
  tc_expr *off = bin(P, TC_OP_ADD, base, bin(P, TC_OP_MUL, kk, ci(P, stride, loc), loc), loc);
  tc_stmt_list body = {0};
  tc_stmt *as = tc_ir_stmt(P->a, TC_ST_ASSIGN, loc);
  as->u.let.var = run;
  as->u.let.value = bin(P, TC_OP_ADD, tc_ir_var_ref(P->a, run, loc), tc_ir_load(P->a, sc, 1, idx1(P, off), loc), loc);
  tc_stmt_list inner = {0};
  tc_stmt_list_push(P->a, &inner, as);
  /* the running sum is rounded to the destination's dtype at each step, as the reference does */
  tc_stmt_list_push(P->a, &inner, store(P, sc, 1, idx1(P, tc_ir_clone_expr(P->a, off)),
                                        cast_to(P, acc, cast_to(P, dst->buf->dtype, tc_ir_var_ref(P->a, run, loc))), loc));
  tc_stmt_list_push(P->a, &body, let_stmt(P, run, red_identity(P, TC_RED_SUM, acc, loc), loc));
  tc_stmt_list_push(P->a, &body, for_loop(P, k, len, TC_LOOP_SERIAL, tc_stmt_list_seq(P->a, &inner, loc), loc));
  tc_stmt *scan = deal(P, 1, lv, &lines, tc_stmt_list_seq(P->a, &body, loc), loc);
  if (!scan) return NULL;
  tc_stmt_list_push(P->a, &out, scan);
  tc_stmt_list_push(P->a, &out, barrier(P, loc));
  tc_var *w[TC_GL_MAXDIM];
  int64_t wext[TC_GL_MAXDIM];
  int wn = iter_vars(P, dst, w, wext, loc);
  tc_expr **wit = var_refs(P, wn, w, loc);
  tc_expr *wl = NULL;
  for (int d = 0; d < wn; d++) wl = wl ? bin(P, TC_OP_ADD, bin(P, TC_OP_MUL, wl, ci(P, wext[d], loc), loc), wit[d], loc) : wit[d];
  tc_stmt *back = store(P, dst->buf, dst->ndim, tc_gpu_region_at(P, dst, wit, loc), tc_ir_load(P->a, sc, 1, idx1(P, wl), loc), loc);
  tc_stmt *wb = over_region(P, dst, wn, w, wext, back, false, loc);
  if (!wb) return NULL;
  tc_stmt_list_push(P->a, &out, wb);
  tc_stmt_list_push(P->a, &out, barrier(P, loc));
  return tc_stmt_list_seq(P->a, &out, loc);
}

static tc_stmt *lower_atomic_tile(tc_gpu_plan *P, tc_stmt *s) {
  const tc_region *src = &s->u.atomic.src, *dst = &s->u.atomic.dst;
  tc_var *vars[TC_GL_MAXDIM];
  int64_t ext[TC_GL_MAXDIM];
  int n = iter_vars(P, dst, vars, ext, s->loc);
  tc_expr **it = var_refs(P, n, vars, s->loc);
  tc_stmt *a = tc_ir_stmt(P->a, TC_ST_ATOMIC_ADD, s->loc);
  a->u.atomic.buf = dst->buf;
  a->u.atomic.nidx = dst->ndim;
  a->u.atomic.idx = tc_gpu_region_at(P, dst, it, s->loc);
  a->u.atomic.value = cast_to(P, dst->buf->dtype, tc_ir_load(P->a, src->buf, src->ndim, tc_gpu_region_at(P, src, it, s->loc), s->loc));
  if (is_frag(src->buf)) return over_region(P, src, n, vars, ext, a, true, s->loc);
  return over_region(P, dst, n, vars, ext, a, false, s->loc);
}

/* a stage of a pipelined tile, or the whole buffer */
bool tc_gpu_region_is_tile(const tc_region *r) {
  int n = r->ndim;
  for (int d = 0; d < n; d++) {
    int64_t ext, s;
    if (d < n - 2) {
      if (r->r[d].extent != 1) return false;
      continue;
    }
    if (!tc_expr_const_int(r->buf->shape[d], &ext) || r->r[d].extent != ext || !tc_expr_const_int(r->r[d].start, &s) || s) return false;
  }
  return true;
}

/* T.gemm -> the target's block GEMM intrinsic. Arguments (all int32 constants but the last
 * three): M, N, K, warps_m, warps_n, trans_a, trans_b, the instruction (tc_gpu_gemm_instr;
 * clear_accum is done by stores before the call), swizzle_a, swizzle_b,
 * then the addresses of A (flat shared tile, or the register array for A in registers), B, C,
 * and the wgmma wait depth (1 for the gemms of an asynchronous mainloop, pipeline.c). */
static tc_stmt *lower_gemm(tc_gpu_plan *P, tc_stmt *s) {
  tc_loc loc = s->loc;
  const tc_region *ra = &s->u.gemm.a, *rb = &s->u.gemm.b, *rc = &s->u.gemm.c;
  const tc_gpu_layout *Lc = P->frag[rc->buf->id];
  if (!is_frag(rc->buf) || !Lc || Lc->kind != TC_GL_ACC || !tc_gpu_region_whole(rc)) {
    tc_gpu_fail(P, loc, "T.gemm on %s needs the accumulator C to be a whole fragment", P->desc->target);
    return NULL;
  }
  for (int i = 0; i < 2; i++) {
    const tc_region *r = i ? rb : ra;
    if (Lc->coop && r->buf->scope == TC_SCOPE_GLOBAL && r->buf->ndim == 2) continue; /* direct-global (direct.c) */
    if (r->buf->ndim < 2 || !tc_gpu_region_is_tile(r) || (r->buf->scope != TC_SCOPE_SHARED && !(i == 0 && is_frag(r->buf)))) {
      tc_gpu_fail(P, loc, "T.gemm on %s needs %s as a whole 2-D shared tile%s", P->desc->target, i ? "B" : "A",
                  i ? "" : " (or a fragment)");
      return NULL;
    }
  }
  int64_t M = Lc->M, N = Lc->N;
  int64_t sa0 = ra->r[ra->ndim - 2].extent, sa1 = ra->r[ra->ndim - 1].extent; /* a whole tile, or a global region */
  int64_t K = s->u.gemm.trans_a ? sa0 : sa1;
  if (is_frag(ra->buf)) {
    const tc_gpu_layout *La = P->frag[ra->buf->id];
    tc_gpu_layout want;
    char why[128];
    bool made = Lc->interleave ? tc_gl_make_acc_wgmma(&want, M, K, P->threads, why, sizeof why)
                : Lc->coop     ? tc_gl_make_acc_coop(&want, M, K, Lc->wm, 1, P->threads, why, sizeof why) /* matmul2d's left input */
                               : tc_gl_make_acc(&want, M, K, Lc->wm, 1, P->threads, why, sizeof why);
    want.sg = Lc->sg; /* on simdgroup_matrix, A's registers are thread_elements() as C's are */
    if (s->u.gemm.trans_a || !made || Lc->wn != 1 || !La || !tc_gl_equal(La, &want)) {
      P->restage_a = s->u.gemm.seq; /* tc_gpu_lower tries again with A through shared memory */
      char have[96] = "none";
      if (La) tc_gl_describe(La, have, sizeof have);
      tc_gpu_fail(P, loc,
                  "T.gemm with A in registers ('%s', layout %s) needs A laid out like the accumulator of a %lld x %lld "
                  "gemm over %d x 1 warps (use policy=T.GemmWarpPolicy.FullRow and compute A with the same warps), "
                  "or A in shared memory",
                  ra->buf->name, have, (long long)M, (long long)K, Lc->wm);
      return NULL;
    }
  }
  char instr_why[200];
  tc_gpu_gemm_instr instr = tc_gpu_gemm_choose(P, s, instr_why, sizeof instr_why);
  if (Lc->coop) {
    /* the accumulator holds matmul2d destinations (layout.c): every gemm into it must run there */
    const char *no = tc_gpu_matmul2d_reason(M, N, K, Lc->wm, Lc->wn, ra->buf->dtype, rb->buf->dtype, rc->buf->dtype,
                                            !is_frag(ra->buf), !is_frag(rb->buf), false,
                                            instr_why, sizeof instr_why);
    if (no) {
      tc_gpu_fail(P, loc, "T.gemm on %s: the accumulator %s is laid out for matmul2d by another gemm, and this one cannot "
                  "run on matmul2d (%s)", P->desc->target, rc->buf->name, no);
      return NULL;
    }
    instr = TC_GPU_GEMM_MATMUL2D;
    snprintf(instr_why, sizeof instr_why, "matmul2d 16x32x%lld over %d x %d simdgroups", (long long)K, Lc->wm, Lc->wn);
  } else if (Lc->sg) { /* the accumulator holds simdgroup_matrix blocks (metal.simdgroup) */
    instr = TC_GPU_GEMM_SIMDGROUP;
    snprintf(instr_why, sizeof instr_why, "simdgroup_matrix 8x8 over %d x %d simdgroups", Lc->wm, Lc->wn);
  }
  if (instr == TC_GPU_GEMM_MMA && Lc->interleave) {
    tc_gpu_fail(P, loc, "T.gemm on %s: the accumulator %s is laid out for wgmma by another gemm, and this one cannot "
                "run on wgmma (%s)", P->desc->target, rc->buf->name, instr_why);
    return NULL;
  }
  if (instr == TC_GPU_GEMM_WGMMA && (Lc->wm * 32 != P->threads || Lc->wn != 1 || !P->swizzle[rb->buf->id] ||
                                     (ra->buf->scope == TC_SCOPE_SHARED && !P->swizzle[ra->buf->id])))
    instr = TC_GPU_GEMM_MMA; /* the accumulator was laid out for another gemm's partition */
  if (P->notes) {
    if (loc.src) tc_sb_printf(P->notes, "%s:%d:%d: ", loc.src->name, loc.line, loc.col);
    tc_sb_printf(P->notes, "T.gemm %lld x %lld x %lld (%s x %s -> %s): ", (long long)M, (long long)N, (long long)K,
                 tc_dtype_scalar_name((tc_scalar_type)ra->buf->dtype.code), tc_dtype_scalar_name((tc_scalar_type)rb->buf->dtype.code),
                 tc_dtype_scalar_name((tc_scalar_type)rc->buf->dtype.code));
    if (instr == TC_GPU_GEMM_MATMUL2D || instr == TC_GPU_GEMM_SIMDGROUP)
      tc_sb_printf(P->notes, "%s\n", instr_why);
    else if (instr == TC_GPU_GEMM_WGMMA)
      tc_sb_printf(P->notes, "%s%s\n", instr_why, tc_stmt_set_has(&P->async_mma, s) ? ", asynchronous mainloop" : "");
    else
      tc_sb_printf(P->notes, "mma.sync over %d x %d warps; not wgmma: %s\n", Lc->wm, Lc->wn,
                   strcmp(instr_why, "mma.sync") && !strstr(instr_why, "wgmma m64") ? instr_why
                                                                                    : "the accumulator is laid out for another gemm");
  }
  int64_t v[10] = {M, N, K, Lc->wm, Lc->wn, s->u.gemm.trans_a, s->u.gemm.trans_b, instr,
                   ra->buf->scope == TC_SCOPE_SHARED && P->swizzle[ra->buf->id], P->swizzle[rb->buf->id]};
  tc_expr **args = TC_NEW_ARRAY(P->a, tc_expr *, 14);
  for (int i = 0; i < 10; i++) args[i] = ci(P, v[i], loc);
  const tc_buffer *ops[3] = {ra->buf, rb->buf, rc->buf};
  for (int i = 0; i < 3; i++) {
    tc_buffer *b = (tc_buffer *)ops[i];
    if (is_frag(b)) b = P->regs[b->id];
    const tc_region *r = i == 0 ? ra : i == 1 ? rb : rc;
    tc_expr **start = TC_NEW_ARRAY(P->a, tc_expr *, b->ndim > 0 ? b->ndim : 1);
    for (int d = 0; d < b->ndim; d++) start[d] = b == r->buf ? r->r[d].start : ci(P, 0, loc);
    args[10 + i] = tc_ir_address_of(P->a, b, b->ndim, start, loc);
  }
  args[13] = ci(P, instr == TC_GPU_GEMM_WGMMA && tc_stmt_set_has(&P->async_mma, s) ? 1 : 0, loc);
  tc_stmt *ev = tc_ir_intrinsic_stmt(P->a, "gemm_block", 14, args, loc);
  if (!s->u.gemm.clear_accum) return ev;
  /* clear_accum: the accumulator is zeroed here, so the intrinsic always accumulates */
  tc_stmt_list out = {0};
  for (int64_t r = 0; r < Lc->num_regs; r++)
    tc_stmt_list_push(P->a, &out, reg_store(P, P->regs[rc->buf->id], r, tc_ir_float(P->a, 0.0, tc_dt(TC_DT_FLOAT32), loc), loc));
  tc_stmt_list_push(P->a, &out, ev);
  return tc_stmt_list_seq(P->a, &out, loc);
}

/* ---- the walk ---- */
static tc_stmt *lower_seq(tc_gpu_plan *P, tc_stmt *s) {
  tc_stmt_list out = {0};
  for (int i = 0; i < s->u.seq.n; i++) {
    tc_stmt *c = lower_stmt(P, s->u.seq.items[i]);
    if (!c) return NULL;
    tc_stmt_list_push(P->a, &out, c);
  }
  return tc_stmt_list_seq(P->a, &out, s->loc);
}

static bool has_barrier_cb(void *ctx, tc_stmt *s) {
  if (s->kind == TC_ST_BARRIER) *(bool *)ctx = true;
  return true;
}

/* The lowered form of one tile operation touches each element from one thread only, so no
 * barrier is needed inside it: the barrier pass takes it as one access (unless the lowering
 * placed barriers in it itself, as reductions through shared memory do). */
static tc_stmt *as_unit(tc_gpu_plan *P, tc_stmt *c) {
  if (!c) return c;
  bool inner = false;
  tc_visit_stmts(c, has_barrier_cb, &inner);
  if (!inner) tc_stmt_set_add(P->a, &P->units, c);
  return c;
}

static tc_stmt *lower_stmt(tc_gpu_plan *P, tc_stmt *s) {
  if (!s) return NULL;
  switch (s->kind) {
  case TC_ST_SEQ: return lower_seq(P, s);
  case TC_ST_ALLOC: {
    tc_buffer *b = s->u.alloc.buf;
    if (!is_frag(b)) return s;
    tc_stmt *c = tc_ir_stmt(P->a, TC_ST_ALLOC, s->loc);
    c->u.alloc.buf = P->regs[b->id];
    return c;
  }
  case TC_ST_COPY: {
    bool async = tc_stmt_set_has(&P->async, s);
    P->async_copy = async;
    tc_stmt *c = as_unit(P, lower_copy(P, s));
    P->async_copy = false;
    if (c && async) tc_stmt_set_add(P->a, &P->async, c); /* the barrier pass leaves it out (pipeline.c) */
    return c;
  }
  case TC_ST_FILL: return as_unit(P, lower_fill(P, s));
  case TC_ST_REDUCE: return lower_reduce(P, s);
  case TC_ST_CUMSUM: return lower_cumsum(P, s);
  case TC_ST_GEMM: return lower_gemm(P, s);
  case TC_ST_ATOMIC_ADD:
    if (!s->u.atomic.buf) return as_unit(P, lower_atomic_tile(P, s));
    break;
  case TC_ST_FOR:
    if (s->u.loop.kind == TC_LOOP_PARALLEL) {
      P->parallel = s;
      tc_stmt *c = lower_parallel(P, s);
      P->parallel = NULL;
      return as_unit(P, c);
    }
    {
      tc_stmt *c = tc_ir_stmt(P->a, TC_ST_FOR, s->loc);
      *c = *s;
      c->u.loop.body = lower_stmt(P, s->u.loop.body);
      if (!c->u.loop.body) return NULL;
      s = c;
    }
    break;
  case TC_ST_WHILE: {
    tc_stmt *c = tc_ir_stmt(P->a, TC_ST_WHILE, s->loc);
    *c = *s;
    c->u.while_.body = lower_stmt(P, s->u.while_.body);
    if (!c->u.while_.body) return NULL;
    s = c;
    break;
  }
  case TC_ST_IF: {
    tc_stmt *c = tc_ir_stmt(P->a, TC_ST_IF, s->loc);
    *c = *s;
    c->u.if_.then_s = lower_stmt(P, s->u.if_.then_s);
    if (!c->u.if_.then_s) return NULL;
    if (s->u.if_.else_s && !(c->u.if_.else_s = lower_stmt(P, s->u.if_.else_s))) return NULL;
    s = c;
    break;
  }
  default: break;
  }
  /* ordinary per-thread statements: fragments may be read only when every thread holds them */
  tc_stmt *c = tc_ir_clone_stmt(P->a, s);
  if (s->kind == TC_ST_FOR || s->kind == TC_ST_IF || s->kind == TC_ST_WHILE) {
    /* children were lowered above; rewrite only this statement's own expressions */
    c = s;
  }
  repl_ctx R = {.P = P};
  if (c->kind == TC_ST_FOR) {
    c->u.loop.min = tc_rewrite_expr(c->u.loop.min, repl_rewrite, &R);
    c->u.loop.extent = tc_rewrite_expr(c->u.loop.extent, repl_rewrite, &R);
  } else if (c->kind == TC_ST_IF) {
    c->u.if_.cond = tc_rewrite_expr(c->u.if_.cond, repl_rewrite, &R);
  } else if (c->kind == TC_ST_WHILE) {
    c->u.while_.cond = tc_rewrite_expr(c->u.while_.cond, repl_rewrite, &R);
  } else {
    tc_rewrite_stmt_exprs(c, repl_rewrite, &R);
    if (c->kind == TC_ST_STORE && is_frag(c->u.store.buf)) {
      const tc_gpu_layout *F = P->frag[c->u.store.buf->id];
      if (F->kind != TC_GL_REPL) {
        tc_gpu_fail(P, c->loc, "fragment '%s' is written outside T.Parallel; on %s use a T.Parallel loop", c->u.store.buf->name,
                    P->desc->target);
        return NULL;
      }
      tc_buffer *regs = P->regs[c->u.store.buf->id];
      c->u.store.idx = idx1(P, repl_index(P, c->u.store.buf, c->u.store.nidx, c->u.store.idx, c->loc));
      c->u.store.nidx = 1;
      c->u.store.buf = regs;
    }
  }
  return R.failed ? NULL : c;
}

bool tc_gpu_lower_tileops(tc_gpu_plan *P) {
  /* register arrays for the fragments */
  for (int id = 0; id < P->nbufs; id++) {
    const tc_gpu_layout *L = P->frag[id];
    if (!L) continue;
    (void)L;
  }
  tc_stmt *body = lower_stmt(P, P->k->body);
  if (!body) return false;
  P->k->body = body;
  return true;
}
