/* rounding.c: the narrowest float dtype each output's value passes through inside a kernel.
 *
 * The reference interpreter and every backend round where the program rounds: a store into a
 * float buffer, a cast, a typed scalar, a gemm's accumulator. Before such a point their values
 * differ by the order of the additions (the reference sums in float64), so the rounding can go
 * either way, and the difference, a unit in the last place of that dtype, travels on to the
 * output. A float32 result computed from bfloat16 intermediates (attention's P, a recurrent
 * state kept in bfloat16) is then only as close to the reference as bfloat16 allows, and its
 * verification needs that dtype's tolerance (docs/verify.md).
 *
 * Flow-insensitive, to a fixpoint: each element statement or tile operation takes the
 * narrowest level among what it reads and the casts in its expressions (level_in of what it
 * writes); a write that rounds (any write into a float buffer or scalar but a same-dtype move:
 * a copy, or a load or variable of the target's dtype) adds the target's own dtype for its
 * readers (level_out). Inputs never written are exact. Integer values carry their sources'
 * level on unchanged. */
#include <limits.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "ir/walk.h"

enum { EXACT = INT_MAX };

/* Bits of a float dtype's significand after the point; EXACT for the others. */
static int precision(tc_dtype d) {
  switch (d.code) {
  case TC_DT_FLOAT64: return 52;
  case TC_DT_FLOAT32: return 23;
  case TC_DT_FLOAT16: return 10;
  case TC_DT_BFLOAT16: return 7;
  case TC_DT_FLOAT8_E4M3FN:
  case TC_DT_FLOAT8_E4M3FNUZ: return 3;
  case TC_DT_FLOAT8_E5M2:
  case TC_DT_FLOAT8_E5M2FNUZ: return 2;
  case TC_DT_FLOAT4_E2M1FN: return 1;
  case TC_DT_FLOAT8_E8M0FNU: return 0;
  default: return EXACT;
  }
}

typedef struct level {
  int bits;   /* precision(dt), or EXACT */
  tc_dtype dt;
} level;

typedef struct flow {
  int nids;
  level *buf_in, *buf_out, *var_in, *var_out; /* by id */
  /* one statement's reads and writes */
  level incoming;
  const tc_buffer *wbuf[16];
  const tc_var *wvar[16];
  int nwbuf, nwvar;
  bool changed;
} flow;

static void take(flow *f, level l) {
  if (l.bits < f->incoming.bits) f->incoming = l;
}

static void on_var(void *ctx, const tc_var *v, bool write) {
  flow *f = ctx;
  if (!v || v->id < 0 || v->id >= f->nids) return;
  if (!write) take(f, f->var_out[v->id]);
  else if (f->nwvar < 16) f->wvar[f->nwvar++] = v;
}

static void on_buf(void *ctx, const tc_buffer *b, bool write) {
  flow *f = ctx;
  if (!b || b->id < 0 || b->id >= f->nids) return;
  if (!write) take(f, f->buf_out[b->id]);
  else if (f->nwbuf < 16) f->wbuf[f->nwbuf++] = b;
}

/* casts to a float dtype in an expression round there */
static tc_expr *cast_cb(void *ctx, tc_expr *e) {
  if (e->op == TC_OP_CAST && tc_dtype_is_float(e->dtype)) take(ctx, (level){precision(e->dtype), e->dtype});
  return e;
}

/* Whether writing `value` into something of dtype `to` is a same-dtype move (no rounding). */
static bool plain_move(const tc_expr *value, tc_dtype to) {
  return value && (value->op == TC_OP_LOAD || value->op == TC_OP_VAR) && tc_dtype_eq(value->dtype, to);
}

static void update(flow *f, level *in, level *out, tc_dtype dt, bool rounds) {
  if (f->incoming.bits < in->bits) *in = f->incoming, f->changed = true;
  level o = *in;
  if (rounds && precision(dt) < o.bits) o = (level){precision(dt), dt};
  if (o.bits < out->bits) *out = o, f->changed = true;
}

static bool stmt_cb(void *ctx, tc_stmt *s) {
  flow *f = ctx;
  bool rounds = true; /* a write here rounds to the target's dtype */
  const tc_expr *moved = NULL;
  switch (s->kind) {
  case TC_ST_SEQ:
  case TC_ST_FOR:
  case TC_ST_IF:
  case TC_ST_WHILE: return true; /* their bodies; conditions and bounds carry no values */
  case TC_ST_COPY: rounds = !tc_dtype_eq(s->u.copy.src.buf->dtype, s->u.copy.dst.buf->dtype); break;
  case TC_ST_STORE: moved = s->u.store.value; break;
  case TC_ST_LET:
  case TC_ST_ASSIGN: moved = s->u.let.value; break;
  case TC_ST_GEMM:
  case TC_ST_FILL:
  case TC_ST_REDUCE:
  case TC_ST_CUMSUM:
  case TC_ST_ATOMIC_ADD:
  case TC_ST_INTRINSIC: break;
  default: return false;
  }
  f->incoming = (level){EXACT, tc_dt(TC_DT_INVALID)};
  f->nwbuf = f->nwvar = 0;
  tc_access_fns fns = {on_var, on_buf, f};
  tc_stmt_accesses(&fns, s, false);
  tc_rewrite_stmt_exprs(s, cast_cb, f);
  for (int i = 0; i < f->nwbuf; i++) {
    const tc_buffer *b = f->wbuf[i];
    update(f, &f->buf_in[b->id], &f->buf_out[b->id], b->dtype, rounds && !plain_move(moved, b->dtype));
  }
  for (int i = 0; i < f->nwvar; i++) {
    const tc_var *v = f->wvar[i];
    update(f, &f->var_in[v->id], &f->var_out[v->id], v->dtype, rounds && !plain_move(moved, v->dtype));
  }
  return false;
}

int tc_kernel_rounds_through(const tc_kernel_ir *k, tc_dtype *out) {
  for (int i = 0; i < k->nparams; i++) out[i] = tc_dt(TC_DT_INVALID);
  if (!k->body) return 0;
  flow f = {0};
  f.nids = tc_kernel_max_id(k) + 1;
  size_t ni = (size_t)f.nids;
  level *all = malloc(4 * ni * sizeof *all);
  if (!all) return -1;
  for (size_t i = 0; i < 4 * ni; i++) all[i] = (level){EXACT, tc_dt(TC_DT_INVALID)};
  f.buf_in = all, f.buf_out = all + ni, f.var_in = all + 2 * ni, f.var_out = all + 3 * ni;
  /* each round can only lower levels, of which there are few: a handful of rounds suffice */
  for (int round = 0; round < 64; round++) {
    f.changed = false;
    tc_visit_stmts(k->body, stmt_cb, &f);
    if (!f.changed) break;
  }
  for (int i = 0; i < k->nparams; i++) {
    const tc_buffer *b = k->params[i].buf;
    if (!b || !tc_dtype_is_float(b->dtype) || b->id < 0 || b->id >= f.nids) continue;
    /* an output read back and written again carries its own dtype's level: no change */
    if (f.buf_in[b->id].bits < precision(b->dtype)) out[i] = f.buf_in[b->id].dt;
  }
  free(all);
  return 0;
}
