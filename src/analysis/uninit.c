/* uninit.c: a read of on-chip memory that nothing has written yet (analysis.h).
 *
 * Shared memory, fragments and local cells start with undefined contents on a GPU, while the
 * cpu reference starts them at zero, so a kernel that reads one before writing it gives
 * whatever the last block left there: results that differ from run to run, or NaNs, and that
 * `--verify` catches only sometimes. The walk follows program order, the first iteration of
 * each loop included: a tile read at the top of a loop and written at its bottom is undefined
 * the first time round. It never guesses against the user: any write, however partial, counts;
 * everything an `if` writes counts as written before either branch (the producer and consumer
 * branches of a warp-specialized kernel), and reads under an `if` are not reported (they may
 * be guarded by the iteration, `if k > 0`); buffers handed to intrinsics by address count as
 * written. */
#include <stdlib.h>

#include "analysis/analysis.h"

enum { MAX_LOOPS = 64 }; /* enclosing loops remembered for the message; deeper ones go unnamed */
typedef struct uninit_walk {
  bool *written; /* by storage buffer id */
  int nids;
  int guarded;   /* how many `if`s enclose the statement */
  const tc_stmt *loops[MAX_LOOPS];
  int nloops;    /* the nesting depth, which may pass MAX_LOOPS */
  bool found;
  tc_uninit_read *out;
} uninit_walk;

static bool tracked(const tc_buffer *b) {
  return b && (b->scope == TC_SCOPE_SHARED || b->scope == TC_SCOPE_FRAGMENT || b->scope == TC_SCOPE_LOCAL ||
               b->scope == TC_SCOPE_VAR);
}

static bool *slot(uninit_walk *w, const tc_buffer *b) {
  b = tc_buffer_storage(b);
  return b && b->id >= 0 && b->id < w->nids ? &w->written[b->id] : NULL;
}

static void mark(uninit_walk *w, const tc_buffer *b) {
  bool *s = slot(w, b);
  if (s) *s = true;
}

/* every buffer an expression loads or takes the address of, as written (opaque uses) */
static void mark_expr(uninit_walk *w, const tc_expr *e) {
  if (!e) return;
  if ((e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) && e->buf) mark(w, e->buf);
  for (int i = 0; i < e->nargs && e->args; i++) mark_expr(w, e->args[i]);
}

static void mark_writes_cb(void *ctx, const tc_buffer *b, bool write) {
  if (write) mark(ctx, b);
}

/* everything statement s (and what it holds) writes, or hands over by address, as written */
static void mark_stmt_writes(uninit_walk *w, const tc_stmt *s) {
  if (!s) return;
  tc_access_fns f = {NULL, mark_writes_cb, w};
  tc_stmt_accesses(&f, s, false);
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.items; i++) mark_stmt_writes(w, s->u.seq.items[i]);
    break;
  case TC_ST_FOR: mark_stmt_writes(w, s->u.loop.body); break;
  case TC_ST_WHILE: mark_stmt_writes(w, s->u.while_.body); break;
  case TC_ST_IF:
    mark_stmt_writes(w, s->u.if_.then_s);
    mark_stmt_writes(w, s->u.if_.else_s);
    break;
  case TC_ST_INTRINSIC:
    for (int i = 0; i < s->u.intrinsic.nargs && s->u.intrinsic.args; i++) mark_expr(w, s->u.intrinsic.args[i]);
    break;
  case TC_ST_EVALUATE: mark_expr(w, s->u.evaluate.value); break;
  default: break;
  }
}

/* Does statement s (a loop) write buffer b anywhere? */
typedef struct writes_ctx {
  const tc_buffer *b;
  bool hit;
} writes_ctx;
static void writes_cb(void *ctx, const tc_buffer *b, bool write) {
  writes_ctx *c = ctx;
  if (write && tc_buffer_storage(b) == c->b) c->hit = true;
}

static void report(uninit_walk *w, const tc_stmt *s, const tc_buffer *b) {
  if (w->found || w->guarded) return;
  const tc_buffer *root = tc_buffer_storage(b);
  w->found = true;
  w->out->stmt = s;
  w->out->buf = root;
  w->out->loop = NULL;
  for (int i = 0; i < w->nloops && i < MAX_LOOPS; i++) { /* the outermost loop that writes it later: its first iteration */
    writes_ctx c = {root, false};
    tc_access_fns f = {NULL, writes_cb, &c};
    tc_stmt_accesses(&f, w->loops[i], true);
    if (c.hit) {
      w->out->loop = w->loops[i];
      break;
    }
  }
}

/* the reads of a leaf statement (before its own writes) */
typedef struct read_ctx {
  uninit_walk *w;
  const tc_stmt *s;
} read_ctx;
static void read_cb(void *ctx, const tc_buffer *b, bool write) {
  read_ctx *c = ctx;
  if (write || !tracked(b)) return;
  bool *s = slot(c->w, b);
  if (s && !*s) report(c->w, c->s, b);
}

static void walk(uninit_walk *w, const tc_stmt *s) {
  if (!s || w->found) return;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n && s->u.seq.items && !w->found; i++) walk(w, s->u.seq.items[i]);
    return;
  case TC_ST_ALLOC:
    if (s->u.alloc.buf && s->u.alloc.buf->init) mark(w, s->u.alloc.buf);
    return;
  case TC_ST_FOR:
  case TC_ST_WHILE: {
    const tc_stmt *body = s->kind == TC_ST_FOR ? s->u.loop.body : s->u.while_.body;
    if (w->nloops < MAX_LOOPS) w->loops[w->nloops] = s;
    w->nloops++;
    walk(w, body); /* its first iteration, in order */
    w->nloops--;
    mark_stmt_writes(w, body);
    return;
  }
  case TC_ST_IF:
    mark_stmt_writes(w, s); /* what either branch writes is written before both */
    w->guarded++;
    walk(w, s->u.if_.then_s);
    walk(w, s->u.if_.else_s);
    w->guarded--;
    return;
  case TC_ST_INTRINSIC:
  case TC_ST_EVALUATE:
    mark_stmt_writes(w, s);
    return;
  default: break;
  }
  read_ctx c = {w, s};
  tc_access_fns f = {NULL, read_cb, &c};
  if (s->kind == TC_ST_GEMM && s->u.gemm.clear_accum) { /* C is not read */
    tc_stmt_region r[TC_MAX_STMT_REGIONS];
    int n = tc_stmt_regions(s, r);
    for (int i = 0; i < n; i++)
      if (r[i].region->buf && r[i].read && r[i].region != &s->u.gemm.c) read_cb(&c, r[i].region->buf, false);
  } else {
    tc_stmt_accesses(&f, s, false);
  }
  mark_stmt_writes(w, s);
}

bool tc_find_uninit_read(const tc_kernel_ir *k, tc_uninit_read *out) {
  uninit_walk w = {0};
  w.nids = tc_kernel_max_id(k) + 1;
  w.written = calloc((size_t)w.nids, sizeof *w.written);
  if (!w.written) return false; /* out of memory: no finding, nothing else lost */
  w.out = out;
  walk(&w, k->body);
  free(w.written);
  return w.found;
}
