/* interp.c: the reference evaluator of the tile IR (see interp.h for the semantics).
 *
 * A plain tree-walking interpreter: slow, simple, and independent of the code generators.
 * Runtime faults unwind with longjmp to tc_interp_run; everything the run allocates hangs off
 * the context and is freed there, so nothing leaks on an error. */
#include "ir/interp.h"
#include "ir/philox.h"
#include "util/clock.h"
#include "gpu/gpu.h"

#include "analysis/analysis.h"

/* Products and sums round separately, as the reference defines them: no fused multiply-add.
 * (GCC does not contract in ISO C mode; clang needs to be told.) */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDIM 8

typedef union val {
  int64_t i; /* integer and bool dtypes: the value, sign- or zero-extended to 64 bits */
  double f;  /* float dtypes: the value, already rounded to the dtype where stored */
} val;

/* ---- pointer -> index map (open addressing) ---- */
typedef struct ptrmap {
  const void **keys;
  int *vals;
  int cap, n;
} ptrmap;

static size_t ptr_hash(const void *p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(x ^ (x >> 29));
}

static int map_get(const ptrmap *m, const void *p) {
  if (!m->cap) return -1;
  for (size_t i = ptr_hash(p) & (size_t)(m->cap - 1);; i = (i + 1) & (size_t)(m->cap - 1)) {
    if (m->keys[i] == p) return m->vals[i];
    if (!m->keys[i]) return -1;
  }
}

static bool map_put(ptrmap *m, const void *p, int v) {
  if ((m->n + 1) * 2 > m->cap) {
    int cap = m->cap ? m->cap * 2 : 64;
    const void **k = calloc((size_t)cap, sizeof *k);
    int *vs = calloc((size_t)cap, sizeof *vs);
    if (!k || !vs) {
      free(k);
      free(vs);
      return false;
    }
    for (int i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = ptr_hash(m->keys[i]) & (size_t)(cap - 1);
        while (k[j]) j = (j + 1) & (size_t)(cap - 1);
        k[j] = m->keys[i];
        vs[j] = m->vals[i];
      }
    free((void *)m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = vs;
    m->cap = cap;
  }
  size_t i = ptr_hash(p) & (size_t)(m->cap - 1);
  while (m->keys[i]) i = (i + 1) & (size_t)(m->cap - 1);
  m->keys[i] = p;
  m->vals[i] = v;
  m->n++;
  return true;
}

static void map_free(ptrmap *m) {
  free((void *)m->keys);
  free(m->vals);
}

/* ---- run state ---- */
typedef struct bufstate {
  const tc_buffer *b;
  int ndim;
  int64_t shape[MAXDIM], stride[MAXDIM];
  int64_t numel;
  bool global, per_thread;
  void *data;  /* global: the caller's tensor */
  val *cells;  /* others: numel values, times nthreads when per thread */
} bufstate;

typedef struct mask {
  int n;
  const int *ids; /* active threads, ascending */
} mask;

typedef struct level { /* scratch for one nesting level of IF/FOR */
  int *a, *b;
  int64_t *lo, *ext;
} level;

typedef struct ictx {
  const tc_kernel_ir *k;
  tilec_error *err;
  jmp_buf jb;
  int nthreads, tdim[3];
  ptrmap varmap, bufmap;
  const tc_var **varlist;
  int nvars, varcap;
  bufstate *bufs;
  int nbufs, bufcap;
  val *vars; /* vars[slot * nthreads + t] */
  int64_t block[3];
  bool in_parallel;
  bool op_per_thread; /* the tile op being run touches per-thread storage: it runs per thread */
  int op_t;           /* ... as this thread (0 for block-wide ops) */
  uint64_t steps, step_limit;
  uint64_t next_clock_check; /* the step count at which the clock is read next */
  double deadline_ms, seconds; /* tc_now_ms() past which the run stops, and its budget; 0: none */
  const tc_stmt *running_while, *running_for; /* the innermost loops being run, for a runaway's error */
  level *levels;
  int nlevels;
  int *all_ids; /* 0..nthreads-1 */
  int64_t *st_idx; /* two-phase stores: per active thread, MAXDIM indices and a value */
  val *st_val;
  mask active;  /* the threads running the current statement (for warp intrinsics) */
  val *scratch[4];
  size_t scratch_cap[4];
} ictx;

static _Noreturn void vfail(ictx *c, tilec_status st, tc_loc loc, int t, const char *fmt, va_list ap) {
  char msg[640];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (t >= 0)
    tc_error_at(c->err, st, loc, "%s (block (%lld, %lld, %lld), thread %d)", msg, (long long)c->block[0],
                (long long)c->block[1], (long long)c->block[2], t);
  else
    tc_error_at(c->err, st, loc, "%s", msg);
  longjmp(c->jb, 1);
}

static _Noreturn void fail(ictx *c, tilec_status st, tc_loc loc, int t, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static _Noreturn void fail(ictx *c, tilec_status st, tc_loc loc, int t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(c, st, loc, t, fmt, ap);
}

static const tc_loc no_loc = {0};

static void *xcalloc(ictx *c, size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) fail(c, TILEC_ERROR_NOMEM, no_loc, -1, "reference interpreter: out of memory");
  return p;
}

static val *scratch(ictx *c, int which, size_t n) {
  if (c->scratch_cap[which] < n) {
    free(c->scratch[which]);
    c->scratch[which] = NULL;
    c->scratch_cap[which] = 0;
    c->scratch[which] = xcalloc(c, n, sizeof(val));
    c->scratch_cap[which] = n;
  }
  return c->scratch[which];
}

/* A runaway run stops at the loop that keeps it going: the innermost runtime `while` (the loop
 * most likely never to end), else the innermost loop, else the kernel. */
static _Noreturn void fail_runaway(ictx *c, tc_loc loc, const char *spent) {
  const tc_stmt *loop = c->running_while ? c->running_while : c->running_for;
  if (!loop)
    fail(c, TILEC_ERROR_TARGET, loc, -1, "reference interpreter stopped after %s (a runaway loop?)", spent);
  bool is_while = loop->kind == TC_ST_WHILE;
  fail(c, TILEC_ERROR_TARGET, loop->loc, -1,
       "reference interpreter stopped after %s: this %s loop was still running (%s)", spent,
       is_while ? "while" : "for", is_while ? "does its condition ever become false?" : "a runaway loop?");
}

enum { CLOCK_CHECK_STEPS = 1 << 16 }; /* reading the clock this rarely costs nothing measurable */

static void count_steps(ictx *c, uint64_t n, tc_loc loc) {
  c->steps += n;
  char spent[64];
  if (c->steps > c->step_limit) {
    snprintf(spent, sizeof spent, "%llu steps", (unsigned long long)c->step_limit);
    fail_runaway(c, loc, spent);
  }
  if (c->deadline_ms > 0 && c->steps >= c->next_clock_check) {
    c->next_clock_check = c->steps + CLOCK_CHECK_STEPS;
    if (tc_now_ms() > c->deadline_ms) {
      snprintf(spent, sizeof spent, "%g s (its time limit)", c->seconds);
      fail_runaway(c, loc, spent);
    }
  }
}

static level *get_level(ictx *c, int depth) {
  if (depth >= c->nlevels) {
    int n = depth + 8;
    level *l = realloc(c->levels, sizeof *l * (size_t)n);
    if (!l) fail(c, TILEC_ERROR_NOMEM, no_loc, -1, "reference interpreter: out of memory");
    memset(l + c->nlevels, 0, sizeof *l * (size_t)(n - c->nlevels));
    c->levels = l;
    c->nlevels = n;
  }
  level *l = &c->levels[depth];
  if (!l->a) {
    l->a = xcalloc(c, (size_t)c->nthreads, sizeof(int));
    l->b = xcalloc(c, (size_t)c->nthreads, sizeof(int));
    l->lo = xcalloc(c, (size_t)c->nthreads, sizeof(int64_t));
    l->ext = xcalloc(c, (size_t)c->nthreads, sizeof(int64_t));
  }
  return l;
}

/* ---- dtype arithmetic ---- */
static bool isf(tc_dtype d) { return tc_dtype_is_float(d); }
static bool is_u64(tc_dtype d) { return d.code == TC_DT_UINT64; }

static int64_t wrap_int(tc_dtype d, int64_t v) {
  if (tc_dtype_is_bool(d)) return v != 0;
  int b = tc_dtype_bits(d);
  if (b >= 64) return v;
  uint64_t m = (UINT64_C(1) << b) - 1, u = (uint64_t)v & m;
  if (tc_dtype_is_signed(d) && ((u >> (b - 1)) & 1)) u |= ~m;
  return (int64_t)u;
}

static double round_f(tc_dtype d, double v) {
  switch (d.code) {
  case TC_DT_FLOAT64: return v;
  case TC_DT_FLOAT32: return (double)(float)v;
  default: return tc_narrow_to_double((tc_scalar_type)d.code, tc_double_to_narrow((tc_scalar_type)d.code, v, tc_dtype_store_saturates(d)));
  }
}

static double int_to_double(tc_dtype d, int64_t v) { return is_u64(d) ? (double)(uint64_t)v : (double)v; }

/* Truncate toward zero and saturate to the target's range; NaN gives 0. */
static int64_t float_to_int(tc_dtype to, double f) {
  if (isnan(f)) return 0;
  double t = trunc(f);
  int b = tc_dtype_bits(to);
  if (is_u64(to)) {
    if (t <= 0) return 0;
    if (t >= 18446744073709551616.0) return (int64_t)UINT64_MAX;
    return (int64_t)(uint64_t)t;
  }
  if (b >= 64) {
    if (t >= 9223372036854775808.0) return INT64_MAX;
    if (t < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)t;
  }
  double lo = tc_dtype_is_signed(to) ? -ldexp(1.0, b - 1) : 0.0;
  double hi = tc_dtype_is_signed(to) ? ldexp(1.0, b - 1) - 1 : ldexp(1.0, b) - 1;
  if (t < lo) t = lo;
  if (t > hi) t = hi;
  return (int64_t)t;
}

static val convert(tc_dtype from, val v, tc_dtype to) {
  val r;
  bool ff = isf(from);
  if (tc_dtype_is_bool(to)) r.i = ff ? (v.f != 0.0) : (v.i != 0);
  else if (isf(to)) r.f = round_f(to, ff ? v.f : int_to_double(from, v.i));
  else if (ff) r.i = float_to_int(to, v.f);
  else r.i = wrap_int(to, v.i);
  return r;
}

static val normalize(tc_dtype d, val v) {
  if (isf(d)) v.f = round_f(d, v.f);
  else v.i = wrap_int(d, v.i);
  return v;
}


/* ---- element access ---- */
static val read_global(tc_dtype d, const void *base, int64_t i) {
  val v;
  switch (d.code) {
  case TC_DT_BOOL: v.i = ((const uint8_t *)base)[i] != 0; break;
  case TC_DT_INT8: v.i = ((const int8_t *)base)[i]; break;
  case TC_DT_INT16: v.i = ((const int16_t *)base)[i]; break;
  case TC_DT_INT32: v.i = ((const int32_t *)base)[i]; break;
  case TC_DT_INT64: v.i = ((const int64_t *)base)[i]; break;
  case TC_DT_UINT8: v.i = ((const uint8_t *)base)[i]; break;
  case TC_DT_UINT16: v.i = ((const uint16_t *)base)[i]; break;
  case TC_DT_UINT32: v.i = ((const uint32_t *)base)[i]; break;
  case TC_DT_UINT64: v.i = (int64_t)((const uint64_t *)base)[i]; break;
  case TC_DT_FLOAT32: v.f = ((const float *)base)[i]; break;
  case TC_DT_FLOAT64: v.f = ((const double *)base)[i]; break;
  default: /* narrow floats, 4-bit integers: the dtype library decodes them */
    if (isf(d)) v.f = tc_dtype_load_f64(d, base, (size_t)i);
    else v.i = (int64_t)tc_dtype_load_f64(d, base, (size_t)i);
    break;
  }
  return v;
}

static void write_global(tc_dtype d, void *base, int64_t i, val v) {
  switch (d.code) {
  case TC_DT_BOOL: ((uint8_t *)base)[i] = v.i != 0; break;
  case TC_DT_INT8: ((int8_t *)base)[i] = (int8_t)v.i; break;
  case TC_DT_INT16: ((int16_t *)base)[i] = (int16_t)v.i; break;
  case TC_DT_INT32: ((int32_t *)base)[i] = (int32_t)v.i; break;
  case TC_DT_INT64: ((int64_t *)base)[i] = v.i; break;
  case TC_DT_UINT8: ((uint8_t *)base)[i] = (uint8_t)v.i; break;
  case TC_DT_UINT16: ((uint16_t *)base)[i] = (uint16_t)v.i; break;
  case TC_DT_UINT32: ((uint32_t *)base)[i] = (uint32_t)v.i; break;
  case TC_DT_UINT64: ((uint64_t *)base)[i] = (uint64_t)v.i; break;
  case TC_DT_FLOAT32: ((float *)base)[i] = (float)v.f; break;
  case TC_DT_FLOAT64: ((double *)base)[i] = v.f; break;
  default: tc_dtype_store_f64(d, base, (size_t)i, isf(d) ? v.f : (double)v.i); break;
  }
}

static void put_index(char *out, size_t cap, const bufstate *bs, const int64_t *idx) {
  size_t n = (size_t)snprintf(out, cap, "%s[", bs->b->name ? bs->b->name : "?");
  for (int i = 0; i < bs->ndim && n + 48 < cap; i++) n += (size_t)snprintf(out + n, cap - n, "%s%lld", i ? ", " : "", (long long)idx[i]);
  n += (size_t)snprintf(out + n, cap - n, "] (shape [");
  for (int i = 0; i < bs->ndim && n + 48 < cap; i++) n += (size_t)snprintf(out + n, cap - n, "%s%lld", i ? ", " : "", (long long)bs->shape[i]);
  snprintf(out + n, cap - n, "])");
}

/* Linear offset of idx in bs, or -1 when outside (then internal buffers fail). */
static int64_t offset_of(ictx *c, const bufstate *bs, const int64_t *idx, int t, tc_loc loc, const char *what) {
  int64_t off = 0;
  for (int i = 0; i < bs->ndim; i++) {
    if (idx[i] < 0 || idx[i] >= bs->shape[i]) {
      if (bs->global) return -1;
      char where[300];
      put_index(where, sizeof where, bs, idx);
      fail(c, TILEC_ERROR_PROGRAM, loc, t, "%s outside buffer %s", what, where);
    }
    off += idx[i] * bs->stride[i];
  }
  /* a layout on a global buffer (T.annotate_layout) places logical elements in the tensor's memory */
  if (bs->global && bs->b->layout && bs->b->layout->kind == TC_LAYOUT_SHARED &&
      (!tc_layout_eval(bs->b->layout, idx, 0, NULL, NULL, &off) || off < 0 || off >= bs->numel))
    fail(c, TILEC_ERROR_PROGRAM, loc, t, "the layout of the global buffer %s maps an element outside it", bs->b->name ? bs->b->name : "?");
  return off;
}

static val *cell(const bufstate *bs, int64_t off, int t) {
  return &bs->cells[(bs->per_thread ? (int64_t)t * bs->numel : 0) + off];
}

static val load_elem(ictx *c, const bufstate *bs, const int64_t *idx, int t, tc_loc loc) {
  int64_t off = offset_of(c, bs, idx, t, loc, "read");
  if (off < 0) {
    val z = {0};
    return z;
  }
  if (bs->global) return read_global(bs->b->dtype, bs->data, off);
  return *cell(bs, off, t);
}

static void store_elem(ictx *c, const bufstate *bs, const int64_t *idx, int t, val v, tc_loc loc) {
  int64_t off = offset_of(c, bs, idx, t, loc, "write");
  if (off < 0) return;
  v = normalize(bs->b->dtype, v);
  if (bs->global) write_global(bs->b->dtype, bs->data, off, v);
  else *cell(bs, off, t) = v;
}

static bufstate *buf_of(ictx *c, const tc_buffer *b, tc_loc loc) {
  int i = map_get(&c->bufmap, b);
  if (i < 0) fail(c, TILEC_ERROR_INTERNAL, loc, -1, "reference interpreter: unknown buffer %s", b->name);
  return &c->bufs[i];
}

static int var_slot(ictx *c, const tc_var *v, tc_loc loc) {
  int i = map_get(&c->varmap, v);
  if (i < 0) fail(c, TILEC_ERROR_INTERNAL, loc, -1, "reference interpreter: unknown variable %s", v->name);
  return i;
}

static void set_var(ictx *c, int slot, int t, val v) { c->vars[(size_t)slot * (size_t)c->nthreads + (size_t)t] = v; }

static void set_uniform(ictx *c, int slot, val v) {
  for (int t = 0; t < c->nthreads; t++) set_var(c, slot, t, v);
}

/* ---- expressions ---- */
TC_PHILOX_CODE /* tcg_philox, the philox_rand intrinsic */

static val eval(ictx *c, const tc_expr *e, int t);

static int64_t int_pow(int64_t b, int64_t e, bool *div0) {
  if (e < 0) {
    if (b == 0) *div0 = true;
    if (b == 1) return 1;
    if (b == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, x = (uint64_t)b;
  while (e) {
    if (e & 1) r *= x;
    x *= x;
    e >>= 1;
  }
  return (int64_t)r;
}

static val eval_int_arith(ictx *c, const tc_expr *e, int t, int64_t a, int64_t b) {
  tc_dtype d = e->dtype;
  bool u64 = is_u64(d);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int64_t r = 0;
  switch (e->op) {
  case TC_OP_ADD: r = (int64_t)(ua + ub); break;
  case TC_OP_SUB: r = (int64_t)(ua - ub); break;
  case TC_OP_MUL: r = (int64_t)(ua * ub); break;
  case TC_OP_DIV:
  case TC_OP_FLOORDIV:
  case TC_OP_FLOORMOD:
    if (b == 0) fail(c, TILEC_ERROR_PROGRAM, e->loc, t, "integer division by zero");
    if (u64) {
      r = (int64_t)(e->op == TC_OP_FLOORMOD ? ua % ub : ua / ub);
    } else if (b == -1) { /* INT64_MIN / -1 wraps instead of trapping */
      r = e->op == TC_OP_FLOORMOD ? 0 : (int64_t)(0 - ua);
    } else {
      int64_t q = a / b, m = a % b;
      if (e->op == TC_OP_DIV) r = q;
      else if (e->op == TC_OP_FLOORDIV) r = (m != 0 && ((m < 0) != (b < 0))) ? q - 1 : q;
      else r = (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
    }
    break;
  case TC_OP_MIN: r = u64 ? (ua < ub ? a : b) : (a < b ? a : b); break;
  case TC_OP_MAX: r = u64 ? (ua > ub ? a : b) : (a > b ? a : b); break;
  case TC_OP_POW: {
    bool div0 = false;
    r = int_pow(a, b, &div0);
    if (div0) fail(c, TILEC_ERROR_PROGRAM, e->loc, t, "zero raised to a negative power");
    break;
  }
  case TC_OP_NEG: r = (int64_t)(0 - ua); break;
  case TC_OP_ABS: r = (a < 0 && !u64) ? (int64_t)(0 - ua) : a; break;
  case TC_OP_BIT_AND: r = a & b; break;
  case TC_OP_BIT_OR: r = a | b; break;
  case TC_OP_BIT_XOR: r = a ^ b; break;
  case TC_OP_BIT_NOT: r = ~a; break;
  case TC_OP_SHL:
  case TC_OP_SHR: {
    /* 8- and 16-bit integers shift as C, CUDA and Metal compute them: promoted to 32 bits,
     * shifted, wrapped back (1 << 8 is 0 in uint8); counts past the promoted width are errors */
    int bits = tc_dtype_bits(d) < 32 ? 32 : tc_dtype_bits(d);
    if (b < 0 || b >= bits) fail(c, TILEC_ERROR_PROGRAM, e->loc, t, "shift count %lld out of range for %d-bit integers", (long long)b, bits);
    if (e->op == TC_OP_SHL) r = (int64_t)(ua << b);
    else if (u64 || a >= 0) r = (int64_t)(ua >> b);
    else r = ~((~a) >> b);
    break;
  }
  default:
    fail(c, TILEC_ERROR_INTERNAL, e->loc, t, "reference interpreter: `%s` on integers", tc_expr_op_name(e->op));
  }
  val v;
  v.i = wrap_int(d, r);
  return v;
}

static double py_fmod(double a, double b) {
  double m = fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

/* Each operation rounds its exact (double) result to the expression's dtype, as the program's
 * arithmetic does: for + - * / and sqrt that is the correctly rounded result in that dtype, and
 * for the elementary functions the correctly rounded value of the exact function in nearly
 * every case. So an integer result computed from floats (floor, casts) agrees with a faithful
 * implementation at exact boundaries, where keeping float64 intermediates would not. */
static double round_to_dtype(tc_dtype d, double r) {
  switch (d.code) {
  case TC_DT_FLOAT32: return (double)(float)r;
  case TC_DT_FLOAT16:
  case TC_DT_BFLOAT16: return tc_narrow_to_double((tc_scalar_type)d.code, tc_double_to_narrow((tc_scalar_type)d.code, r, false));
  default: return r;
  }
}

static val eval_float_arith(ictx *c, const tc_expr *e, int t, double a, double b) {
  double r;
  switch (e->op) {
  case TC_OP_ADD: r = a + b; break;
  case TC_OP_SUB: r = a - b; break;
  case TC_OP_MUL: r = a * b; break;
  case TC_OP_DIV: r = a / b; break;
  case TC_OP_FLOORDIV: r = floor(a / b); break;
  case TC_OP_FLOORMOD: r = py_fmod(a, b); break;
  case TC_OP_MIN: r = fmin(a, b); break;
  case TC_OP_MAX: r = fmax(a, b); break;
  case TC_OP_POW: r = pow(a, b); break;
  case TC_OP_NEG: r = -a; break;
  case TC_OP_ABS: r = fabs(a); break;
  case TC_OP_EXP: r = exp(a); break;
  case TC_OP_EXP2: r = exp2(a); break;
  case TC_OP_LOG: r = log(a); break;
  case TC_OP_LOG2: r = log2(a); break;
  case TC_OP_SQRT: r = sqrt(a); break;
  case TC_OP_RSQRT: r = 1.0 / sqrt(a); break;
  case TC_OP_TANH: r = tanh(a); break;
  case TC_OP_SIGMOID: r = 1.0 / (1.0 + exp(-a)); break;
  case TC_OP_SIN: r = sin(a); break;
  case TC_OP_COS: r = cos(a); break;
  case TC_OP_FLOOR: r = floor(a); break;
  case TC_OP_CEIL: r = ceil(a); break;
  default:
    fail(c, TILEC_ERROR_INTERNAL, e->loc, t, "reference interpreter: `%s` on floats", tc_expr_op_name(e->op));
  }
  val v;
  v.f = round_to_dtype(e->dtype, r);
  return v;
}

static bool compare(tc_expr_op op, tc_dtype d, val a, val b) {
  if (isf(d)) {
    switch (op) {
    case TC_OP_EQ: return a.f == b.f;
    case TC_OP_NE: return a.f != b.f;
    case TC_OP_LT: return a.f < b.f;
    case TC_OP_LE: return a.f <= b.f;
    case TC_OP_GT: return a.f > b.f;
    default: return a.f >= b.f;
    }
  }
  int s = 0;
  if (is_u64(d)) s = (uint64_t)a.i < (uint64_t)b.i ? -1 : (uint64_t)a.i > (uint64_t)b.i;
  else s = a.i < b.i ? -1 : a.i > b.i;
  switch (op) {
  case TC_OP_EQ: return s == 0;
  case TC_OP_NE: return s != 0;
  case TC_OP_LT: return s < 0;
  case TC_OP_LE: return s <= 0;
  case TC_OP_GT: return s > 0;
  default: return s >= 0;
  }
}

static int64_t thread_coord(ictx *c, int t, int axis) {
  if (axis == 0) return t % c->tdim[0];
  if (axis == 1) return (t / c->tdim[0]) % c->tdim[1];
  return t / (c->tdim[0] * c->tdim[1]);
}

static bool is_active(const ictx *c, int t) {
  int lo = 0, hi = c->active.n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (c->active.ids[mid] == t) return true;
    if (c->active.ids[mid] < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/* shfl_xor / shfl_sync: the value of args[0] in another lane of t's warp (32 consecutive
 * threads), within groups of `width` lanes. Lockstep makes every lane's operands readable. */
static val eval_shuffle(ictx *c, const tc_expr *e, int t, bool xor_mode) {
  const char *name = e->callee;
  if (c->in_parallel) fail(c, TILEC_ERROR_PROGRAM, e->loc, -1, "%s inside a T.Parallel loop, where threads have no lanes", name);
  int64_t sel = eval(c, e->args[1], t).i, width = eval(c, e->args[2], t).i;
  if (width < 1 || width > 32 || (width & (width - 1)))
    fail(c, TILEC_ERROR_PROGRAM, e->loc, t, "%s: width %lld is not a power of two in [1, 32]", name, (long long)width);
  int lane = t % 32, base = t - lane;
  int group = lane - lane % (int)width;
  int64_t src = xor_mode ? (lane ^ sel) : group + ((sel % width) + width) % width;
  if (xor_mode && (src < group || src >= group + width)) src = lane; /* outside the group: own value */
  int st = base + (int)src;
  if (st >= c->nthreads || !is_active(c, st))
    fail(c, TILEC_ERROR_PROGRAM, e->loc, t, "%s reads lane %lld, whose thread is not running this statement", name, (long long)src);
  return eval(c, e->args[0], st);
}

static val eval(ictx *c, const tc_expr *e, int t) {
  val v;
  switch (e->op) {
  case TC_OP_CONST_INT:
    if (isf(e->dtype)) v.f = round_f(e->dtype, (double)e->ival);
    else v.i = wrap_int(e->dtype, e->ival);
    return v;
  case TC_OP_CONST_FLOAT:
    if (isf(e->dtype)) v.f = round_f(e->dtype, e->fval);
    else v.i = float_to_int(e->dtype, e->fval);
    return v;
  case TC_OP_VAR:
    if (e->var->kind == TC_VAR_THREAD_IDX) {
      if (c->in_parallel)
        fail(c, TILEC_ERROR_PROGRAM, e->loc, -1,
             "the thread index %s is used inside a T.Parallel loop, where it has no defined value", e->var->name);
      v.i = wrap_int(e->dtype, thread_coord(c, t, e->var->axis));
      return v;
    }
    return c->vars[(size_t)var_slot(c, e->var, e->loc) * (size_t)c->nthreads + (size_t)t];
  case TC_OP_LOAD: {
    int64_t idx[MAXDIM];
    for (int i = 0; i < e->nargs; i++) idx[i] = eval(c, e->args[i], t).i;
    return load_elem(c, buf_of(c, e->buf, e->loc), idx, t, e->loc);
  }
  case TC_OP_CAST:
    return convert(e->args[0]->dtype, eval(c, e->args[0], t), e->dtype);
  case TC_OP_CALL: {
    tc_intrinsic_id id = TC_INTRIN_COUNT;
    tc_intrinsic_lookup(e->callee, &id);
    if (id == TC_INTRIN_SHFL_XOR || id == TC_INTRIN_SHFL_SYNC) return eval_shuffle(c, e, t, id == TC_INTRIN_SHFL_XOR);
    if (id == TC_INTRIN_ALIGNED16) {
      v.i = 1;
      return v;
    }
    if (id == TC_INTRIN_REINTERPRET) { /* the same bits, read as the other dtype */
      uint64_t bits = 0;
      write_global(e->args[0]->dtype, &bits, 0, eval(c, e->args[0], t));
      return read_global(e->dtype, &bits, 0);
    }
    if (id == TC_INTRIN_PHILOX_RAND) { /* philox.h */
      v.i = tcg_philox((uint64_t)eval(c, e->args[0], t).i, (uint64_t)eval(c, e->args[1], t).i, (uint64_t)eval(c, e->args[2], t).i);
      return normalize(e->dtype, v);
    }
    fail(c, TILEC_ERROR_TARGET, e->loc, -1, "intrinsic %s runs only on a GPU target", e->callee ? e->callee : "?");
  }
  case TC_OP_ADDRESS_OF:
    fail(c, TILEC_ERROR_TARGET, e->loc, -1, "T.address_of runs only on a GPU target");
  case TC_OP_SELECT: /* only the chosen branch is evaluated, as in C's ?: */
    return eval(c, e->args[0], t).i ? eval(c, e->args[1], t) : eval(c, e->args[2], t);
  case TC_OP_AND:
    v.i = eval(c, e->args[0], t).i && eval(c, e->args[1], t).i;
    return v;
  case TC_OP_OR:
    v.i = eval(c, e->args[0], t).i || eval(c, e->args[1], t).i;
    return v;
  case TC_OP_NOT:
    v.i = !eval(c, e->args[0], t).i;
    return v;
  default:
    break;
  }
  tc_op_class cls = tc_expr_op_class(e->op);
  if (cls == TC_CLS_CMP) {
    val a = eval(c, e->args[0], t), b = eval(c, e->args[1], t);
    v.i = compare(e->op, e->args[0]->dtype, a, b);
    return v;
  }
  if (cls == TC_CLS_ARITH || cls == TC_CLS_MATH) {
    val a = eval(c, e->args[0], t), b = {0};
    if (e->nargs > 1) b = eval(c, e->args[1], t);
    if (isf(e->dtype)) return eval_float_arith(c, e, t, a.f, b.f);
    if (cls == TC_CLS_MATH) fail(c, TILEC_ERROR_INTERNAL, e->loc, t, "reference interpreter: `%s` on integers", tc_expr_op_name(e->op));
    return eval_int_arith(c, e, t, a.i, b.i);
  }
  fail(c, TILEC_ERROR_INTERNAL, e->loc, t, "reference interpreter: unexpected expression `%s`", tc_expr_op_name(e->op));
}

/* The value of e, which must be the same in every thread of the block. */
/* The block GEMM intrinsic of the GPU lowering (src/gpu/gpu.h), for thread t: its accumulator
 * registers (the ACC layout) += op(A) @ op(B), summed in float64 and rounded once, read from
 * the flat shared tiles through the same swizzle the lowering writes them with. */
static val gemm_operand(ictx *c, const tc_expr *addr, int64_t rows, int64_t cols, bool swz, int64_t row, int64_t col,
                        const tc_gpu_layout *regs_layout, int t) {
  bufstate *bs = buf_of(c, addr->buf, addr->loc);
  int64_t off;
  if (regs_layout) { /* A in registers: the tensor core gathers it from the threads that hold it */
    int64_t owner, reg;
    tc_gl_owner(regs_layout, row * cols + col, 0, &owner, &reg);
    return convert(addr->buf->dtype, *cell(bs, reg, (int)owner), tc_dt(TC_DT_FLOAT64));
  } else {
    /* the tile starts at the address's (flat) offset: a stage of a pipelined buffer */
    int64_t base = addr->nargs == 1 ? eval(c, addr->args[0], t).i : 0;
    off = base + (swz ? tc_gpu_swizzle_index(row, col, cols, tc_dtype_bits(addr->buf->dtype) / 8) : row * cols + col);
  }
  (void)rows;
  return convert(addr->buf->dtype, *cell(bs, off, t), tc_dt(TC_DT_FLOAT64));
}

/* copy16(&dst[i...], &src[j...]) and copy_vec(&dst, &src, n): n elements (copy16: 16 bytes of
 * them) along the last dimension of each, converted. */
static void run_copy_run(ictx *c, tc_expr *const *args, bool sized, int t) {
  const tc_expr *d = args[0], *sx = args[1];
  int64_t di[MAXDIM], si[MAXDIM];
  for (int i = 0; i < d->nargs; i++) di[i] = eval(c, d->args[i], t).i;
  for (int i = 0; i < sx->nargs; i++) si[i] = eval(c, sx->args[i], t).i;
  int64_t n = sized ? eval(c, args[2], t).i : 16 / (tc_dtype_bits(d->buf->dtype) / 8);
  bufstate *db = buf_of(c, d->buf, d->loc), *sb = buf_of(c, sx->buf, sx->loc);
  for (int64_t k = 0; k < n; k++) {
    val x = load_elem(c, sb, si, t, sx->loc);
    store_elem(c, db, di, t, convert(sx->buf->dtype, x, d->buf->dtype), d->loc);
    di[d->nargs - 1]++, si[sx->nargs - 1]++;
  }
}

/* simdgroup_store_acc(M, N, wm, wn, &C, &G[origin...], row_stride): the calling thread's
 * registers of the simdgroup accumulator into the global tile at origin (replica 0 only). */
static void run_simdgroup_store(ictx *c, tc_expr *const *args, int t, tc_loc loc) {
  int64_t v[4];
  for (int i = 0; i < 4; i++) v[i] = eval(c, args[i], t).i;
  const tc_expr *C = args[4], *G = args[5];
  tc_gpu_layout acc;
  char why[128];
  if (!tc_gl_make_acc_sg(&acc, v[0], v[1], (int)v[2], (int)v[3], c->nthreads, why, sizeof why)) {
    fail(c, TILEC_ERROR_INTERNAL, loc, t, "simdgroup_store_acc: %s", why);
    return;
  }
  int64_t gi[MAXDIM], origin[MAXDIM];
  int nd = G->nargs;
  for (int i = 0; i < nd; i++) origin[i] = eval(c, G->args[i], t).i;
  bufstate *cs = buf_of(c, C->buf, C->loc), *gs = buf_of(c, G->buf, G->loc);
  for (int64_t r = 0; r < acc.num_regs; r++) {
    int64_t rep, el = tc_gl_elem(&acc, t, r, &rep);
    if (el < 0 || rep != 0) continue;
    for (int i = 0; i < nd; i++) gi[i] = origin[i];
    gi[nd - 2] += el / v[1], gi[nd - 1] += el % v[1];
    store_elem(c, gs, gi, t, convert(C->buf->dtype, *cell(cs, r, t), G->buf->dtype), G->loc);
  }
}

/* A TMA box between the global tensor at &g[start...] and the swizzled shared tile at flat offset
 * off (&s[off]): tma_load(&s, &g, &bar, rows, cols, map) reads it (zeros outside the tensor),
 * tma_store(&s, &g, rows, cols, map) writes it (elements outside the tensor are dropped:
 * store_elem skips them, as the TMA unit does). */
static void run_tma_box(ictx *c, const tc_expr *sx, const tc_expr *gx, int64_t rows, int64_t cols, bool store, int t) {
  int64_t gi[MAXDIM];
  for (int i = 0; i < gx->nargs; i++) gi[i] = eval(c, gx->args[i], t).i;
  int64_t base = sx->nargs == 1 ? eval(c, sx->args[0], t).i : 0;
  bufstate *sb = buf_of(c, sx->buf, sx->loc), *gb = buf_of(c, gx->buf, gx->loc);
  int nd = gx->nargs, eb = (int)(tc_dtype_bits(sx->buf->dtype) / 8);
  int64_t r0 = gi[nd - 2], c0 = gi[nd - 1];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t col = 0; col < cols; col++) {
      int64_t off = base + tc_gpu_swizzle_index(r, col, cols, eb);
      gi[nd - 2] = r0 + r, gi[nd - 1] = c0 + col;
      if (store) store_elem(c, gb, gi, t, convert(sx->buf->dtype, load_elem(c, sb, &off, t, sx->loc), gx->buf->dtype), gx->loc);
      else store_elem(c, sb, &off, t, convert(gx->buf->dtype, load_elem(c, gb, gi, t, gx->loc), sx->buf->dtype), sx->loc);
    }
}

static void run_gpu_gemm(ictx *c, tc_expr *const *args, int t, tc_loc loc) {
  int64_t v[10];
  for (int i = 0; i < 10; i++) v[i] = eval(c, args[i], t).i;
  int64_t M = v[0], N = v[1], K = v[2];
  const tc_expr *A = args[10], *B = args[11], *C = args[12];
  tc_gpu_layout acc, alay;
  char why[128];
  /* the instruction fixes the accumulator layout: wgmma's interleaves 64-row blocks, Metal
   * simdgroup_matrix's permutes the lanes (layout.c) */
  bool wgmma = v[7] == 1, sg = v[7] == TC_GPU_GEMM_SIMDGROUP;
  if (!(wgmma ? tc_gl_make_acc_wgmma(&acc, M, N, c->nthreads, why, sizeof why)
         : sg ? tc_gl_make_acc_sg(&acc, M, N, (int)v[3], (int)v[4], c->nthreads, why, sizeof why)
              : tc_gl_make_acc(&acc, M, N, (int)v[3], (int)v[4], c->nthreads, why, sizeof why))) {
    fail(c, TILEC_ERROR_INTERNAL, loc, t, "gemm: %s", why);
    return;
  }
  bool rs = A->buf->scope == TC_SCOPE_LOCAL;
  if (rs && !(wgmma ? tc_gl_make_acc_wgmma(&alay, M, K, c->nthreads, why, sizeof why)
                    : tc_gl_make_acc(&alay, M, K, (int)v[3], 1, c->nthreads, why, sizeof why))) {
    fail(c, TILEC_ERROR_INTERNAL, loc, t, "gemm: %s", why);
    return;
  }
  alay.sg = sg;
  bufstate *cs = buf_of(c, C->buf, C->loc);
  for (int64_t r = 0; r < acc.num_regs; r++) {
    int64_t rep, el = tc_gl_elem(&acc, t, r, &rep), row = el / N, col = el % N;
    double sum = 0;
    for (int64_t k = 0; k < K; k++) {
      double a = v[5] ? gemm_operand(c, A, K, M, v[8], k, row, NULL, t).f
                      : gemm_operand(c, A, M, K, v[8], row, k, rs ? &alay : NULL, t).f;
      double b = v[6] ? gemm_operand(c, B, N, K, v[9], col, k, NULL, t).f : gemm_operand(c, B, K, N, v[9], k, col, NULL, t).f;
      sum += a * b;
    }
    val *cv = cell(cs, r, t);
    val old = convert(C->buf->dtype, *cv, tc_dt(TC_DT_FLOAT64)), nv;
    nv.f = old.f + sum;
    *cv = normalize(C->buf->dtype, convert(tc_dt(TC_DT_FLOAT64), nv, C->buf->dtype));
  }
  count_steps(c, (uint64_t)(acc.num_regs * K), loc);
}

static val eval_uniform(ictx *c, const tc_expr *e, const char *what, tc_loc loc) {
  val v0 = eval(c, e, 0);
  for (int t = 1; t < c->nthreads; t++) {
    val v = eval(c, e, t);
    if (memcmp(&v, &v0, sizeof v) != 0)
      fail(c, TILEC_ERROR_PROGRAM, loc, t, "%s differs between the threads of a block", what);
  }
  return v0;
}

/* ---- tile operations ---- */
typedef struct rview {
  const bufstate *bs;
  int ndim;
  int64_t start[MAXDIM], ext[MAXDIM];
  int64_t numel;
} rview;

static rview view_of(ictx *c, const tc_region *r, tc_loc loc) {
  rview v;
  v.bs = buf_of(c, r->buf, loc);
  v.ndim = r->ndim;
  v.numel = 1;
  for (int i = 0; i < r->ndim; i++) {
    v.start[i] = (c->in_parallel || c->op_per_thread) ? eval(c, r->r[i].start, c->op_t).i
                                                        : eval_uniform(c, r->r[i].start, "a region start", loc).i;
    v.ext[i] = r->r[i].extent;
    v.numel *= v.ext[i];
  }
  return v;
}

/* Visit the region's elements in row-major order of its own extents. Equal squeezed shapes
 * give the same order, which is how tile ops pair up elements of differently shaped regions. */
static void read_view(ictx *c, const rview *v, tc_dtype to, val *out, tc_loc loc) {
  int64_t coord[MAXDIM] = {0}, idx[MAXDIM];
  for (int64_t n = 0; n < v->numel; n++) {
    for (int i = 0; i < v->ndim; i++) idx[i] = v->start[i] + coord[i];
    out[n] = convert(v->bs->b->dtype, load_elem(c, v->bs, idx, c->op_t, loc), to);
    for (int i = v->ndim - 1; i >= 0; i--) {
      if (++coord[i] < v->ext[i]) break;
      coord[i] = 0;
    }
  }
  count_steps(c, (uint64_t)v->numel, loc);
}

static void write_view(ictx *c, const rview *v, const val *in, tc_loc loc) {
  int64_t coord[MAXDIM] = {0}, idx[MAXDIM];
  for (int64_t n = 0; n < v->numel; n++) {
    for (int i = 0; i < v->ndim; i++) idx[i] = v->start[i] + coord[i];
    store_elem(c, v->bs, idx, c->op_t, in[n], loc);
    for (int i = v->ndim - 1; i >= 0; i--) {
      if (++coord[i] < v->ext[i]) break;
      coord[i] = 0;
    }
  }
  count_steps(c, (uint64_t)v->numel, loc);
}

static const tc_dtype f64 = {TC_DT_FLOAT64, 1};

static void run_copy(ictx *c, const tc_stmt *s) {
  rview src = view_of(c, &s->u.copy.src, s->loc), dst = view_of(c, &s->u.copy.dst, s->loc);
  val *tmp = scratch(c, 0, (size_t)src.numel);
  read_view(c, &src, dst.bs->b->dtype, tmp, s->loc);
  write_view(c, &dst, tmp, s->loc);
}

static void run_fill(ictx *c, const tc_stmt *s) {
  rview dst = view_of(c, &s->u.fill.dst, s->loc);
  val x = c->op_per_thread ? eval(c, s->u.fill.value, c->op_t) : eval_uniform(c, s->u.fill.value, "the T.fill value", s->loc);
  val v = convert(s->u.fill.value->dtype, x, dst.bs->b->dtype);
  val *tmp = scratch(c, 0, (size_t)dst.numel);
  for (int64_t i = 0; i < dst.numel; i++) tmp[i] = v;
  write_view(c, &dst, tmp, s->loc);
}

static void run_gemm(ictx *c, const tc_stmt *s) {
  rview A = view_of(c, &s->u.gemm.a, s->loc), B = view_of(c, &s->u.gemm.b, s->loc), C = view_of(c, &s->u.gemm.c, s->loc);
  int64_t a0 = A.ext[A.ndim - 2], a1 = A.ext[A.ndim - 1], b0 = B.ext[B.ndim - 2], b1 = B.ext[B.ndim - 1];
  bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
  int64_t M = ta ? a1 : a0, K = ta ? a0 : a1, N = tb ? b0 : b1;
  val *av = scratch(c, 0, (size_t)A.numel), *bv = scratch(c, 1, (size_t)B.numel), *cv = scratch(c, 2, (size_t)C.numel);
  read_view(c, &A, f64, av, s->loc);
  read_view(c, &B, f64, bv, s->loc);
  if (!s->u.gemm.clear_accum) read_view(c, &C, f64, cv, s->loc);
  /* op(A) as [M][K] and op(B) as [K][N], then rows of C accumulated over k in order: each
   * C element is the same k-ordered float64 sum as the plain triple loop, only faster */
  val *al = scratch(c, 3, (size_t)(M * K + K * N + N));
  double *ar = &al[0].f, *br = &al[M * K].f, *row = &al[M * K + K * N].f;
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++) ar[m * K + k] = ta ? av[k * a1 + m].f : av[m * a1 + k].f;
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) br[k * N + n] = tb ? bv[n * b1 + k].f : bv[k * b1 + n].f;
  for (int64_t m = 0; m < M; m++) {
    for (int64_t n = 0; n < N; n++) row[n] = 0;
    for (int64_t k = 0; k < K; k++) {
      double x = ar[m * K + k];
      const double *b = &br[k * N];
      for (int64_t n = 0; n < N; n++) row[n] += x * b[n];
    }
    for (int64_t n = 0; n < N; n++) {
      double prev = s->u.gemm.clear_accum ? 0.0 : cv[m * N + n].f;
      cv[m * N + n] = convert(f64, (val){.f = prev + row[n]}, C.bs->b->dtype);
    }
  }
  count_steps(c, (uint64_t)(M * N), s->loc);
  write_view(c, &C, cv, s->loc);
}

static void run_reduce(ictx *c, const tc_stmt *s) {
  rview src = view_of(c, &s->u.reduce.src, s->loc), dst = view_of(c, &s->u.reduce.dst, s->loc);
  int d = s->u.reduce.dim;
  int64_t outer = 1, len = src.ext[d], inner = 1;
  for (int i = 0; i < d; i++) outer *= src.ext[i];
  for (int i = d + 1; i < src.ndim; i++) inner *= src.ext[i];
  val *sv = scratch(c, 0, (size_t)src.numel), *dv = scratch(c, 1, (size_t)dst.numel);
  read_view(c, &src, f64, sv, s->loc);
  if (!s->u.reduce.clear) read_view(c, &dst, f64, dv, s->loc);
  tc_reduce_kind op = s->u.reduce.op;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double acc = op == TC_RED_MAX || op == TC_RED_ABSMAX ? -INFINITY : op == TC_RED_MIN ? INFINITY : 0.0;
      for (int64_t j = 0; j < len; j++) {
        double x = sv[(o * len + j) * inner + in].f;
        switch (op) {
        case TC_RED_SUM: acc += x; break;
        case TC_RED_MAX: acc = fmax(acc, x); break;
        case TC_RED_MIN: acc = fmin(acc, x); break;
        case TC_RED_ABSSUM: acc += fabs(x); break;
        case TC_RED_ABSMAX: acc = fmax(acc, fabs(x)); break;
        }
      }
      int64_t r = o * inner + in;
      if (!s->u.reduce.clear) {
        double prev = dv[r].f;
        acc = (op == TC_RED_SUM || op == TC_RED_ABSSUM) ? prev + acc : op == TC_RED_MIN ? fmin(prev, acc) : fmax(prev, acc);
      }
      dv[r] = convert(f64, (val){.f = acc}, dst.bs->b->dtype);
    }
  write_view(c, &dst, dv, s->loc);
}

static void run_cumsum(ictx *c, const tc_stmt *s) {
  rview src = view_of(c, &s->u.cumsum.src, s->loc), dst = view_of(c, &s->u.cumsum.dst, s->loc);
  int d = s->u.cumsum.dim;
  int64_t outer = 1, len = src.ext[d], inner = 1;
  for (int i = 0; i < d; i++) outer *= src.ext[i];
  for (int i = d + 1; i < src.ndim; i++) inner *= src.ext[i];
  val *sv = scratch(c, 0, (size_t)src.numel), *dv = scratch(c, 1, (size_t)src.numel);
  read_view(c, &src, f64, sv, s->loc);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double acc = 0;
      for (int64_t jj = 0; jj < len; jj++) {
        int64_t j = s->u.cumsum.reverse ? len - 1 - jj : jj, at = (o * len + j) * inner + in;
        acc += sv[at].f;
        dv[at] = convert(f64, (val){.f = acc}, dst.bs->b->dtype);
      }
    }
  write_view(c, &dst, dv, s->loc);
}

static void run_tile_atomic(ictx *c, const tc_stmt *s) {
  rview dst = view_of(c, &s->u.atomic.dst, s->loc), src = view_of(c, &s->u.atomic.src, s->loc);
  tc_dtype dt = dst.bs->b->dtype;
  val *sv = scratch(c, 0, (size_t)src.numel), *dv = scratch(c, 1, (size_t)dst.numel);
  read_view(c, &src, dt, sv, s->loc);
  read_view(c, &dst, dt, dv, s->loc);
  for (int64_t i = 0; i < dst.numel; i++) {
    if (isf(dt)) dv[i].f += sv[i].f;
    else dv[i].i = (int64_t)((uint64_t)dv[i].i + (uint64_t)sv[i].i);
  }
  write_view(c, &dst, dv, s->loc);
}

/* ---- statements ---- */
static void exec(ictx *c, const tc_stmt *s, mask m, int depth);

static void require_block(ictx *c, const tc_stmt *s, mask m, const char *what) {
  if (c->in_parallel)
    fail(c, TILEC_ERROR_PROGRAM, s->loc, -1, "%s inside a T.Parallel loop; tile operations are done by the whole block", what);
  if (m.n != c->nthreads)
    fail(c, TILEC_ERROR_PROGRAM, s->loc, -1, "%s reached by %d of the block's %d threads; tile operations need all of them", what,
         m.n, c->nthreads);
}

/* A tile operation is collective, unless one of its operands is per-thread storage (local or
 * var): then every active thread does it on its own copy, like any per-thread statement (the
 * rule is tc_stmt_exec's, analysis.h). */
static void exec_tile(ictx *c, const tc_stmt *s, mask m, const char *what, void (*run_op)(ictx *, const tc_stmt *)) {
  bool per_thread = tc_stmt_exec(s) == TC_EXEC_THREAD;
  if (!per_thread) {
    require_block(c, s, m, what);
    run_op(c, s);
    return;
  }
  c->op_per_thread = true;
  for (int j = 0; j < m.n; j++) {
    c->op_t = m.ids[j];
    run_op(c, s);
  }
  c->op_per_thread = false;
  c->op_t = 0;
}

static void exec_store(ictx *c, const tc_stmt *s, mask m, bool atomic) {
  const tc_buffer *b = atomic ? s->u.atomic.buf : s->u.store.buf;
  int nidx = atomic ? s->u.atomic.nidx : s->u.store.nidx;
  tc_expr *const *idx = atomic ? s->u.atomic.idx : s->u.store.idx;
  const tc_expr *value = atomic ? s->u.atomic.value : s->u.store.value;
  const bufstate *bs = buf_of(c, b, s->loc);
  /* lockstep: every active thread reads its operands before any thread writes */
  for (int j = 0; j < m.n; j++) {
    int t = m.ids[j];
    for (int i = 0; i < nidx; i++) c->st_idx[(size_t)j * MAXDIM + (size_t)i] = eval(c, idx[i], t).i;
    c->st_val[j] = eval(c, value, t);
  }
  for (int j = 0; j < m.n; j++) {
    int t = m.ids[j];
    const int64_t *ix = &c->st_idx[(size_t)j * MAXDIM];
    val v = c->st_val[j];
    if (atomic) {
      if (offset_of(c, bs, ix, t, s->loc, "atomic_add") < 0) continue;
      val old = load_elem(c, bs, ix, t, s->loc);
      if (s->u.atomic.prev) { /* return_prev: this thread's value before its addition */
        static const int64_t zero[MAXDIM];
        store_elem(c, buf_of(c, s->u.atomic.prev, s->loc), zero, t, old, s->loc);
      }
      if (isf(b->dtype)) v.f += old.f;
      else v.i = (int64_t)((uint64_t)v.i + (uint64_t)old.i);
    }
    store_elem(c, bs, ix, t, v, s->loc);
  }
  count_steps(c, (uint64_t)m.n, s->loc);
}

static void exec_for(ictx *c, const tc_stmt *s, mask m, int depth) {
  int slot = var_slot(c, s->u.loop.var, s->loc);
  tc_dtype vdt = s->u.loop.var->dtype;
  if (s->u.loop.kind == TC_LOOP_PARALLEL && !c->in_parallel) {
    require_block(c, s, m, "a T.Parallel loop");
    int64_t lo = eval_uniform(c, s->u.loop.min, "the T.Parallel loop start", s->loc).i;
    int64_t ext = eval_uniform(c, s->u.loop.extent, "the T.Parallel loop extent", s->loc).i;
    /* the body runs once per iteration, as one logical thread (thread 0's storage) */
    static const int zero = 0;
    mask one = {1, &zero};
    c->in_parallel = true;
    for (int64_t j = 0; j < ext; j++) {
      set_var(c, slot, 0, (val){.i = wrap_int(vdt, lo + j)});
      count_steps(c, 1, s->loc);
      exec(c, s->u.loop.body, one, depth + 1);
    }
    c->in_parallel = false;
    return;
  }
  if (s->u.loop.kind == TC_LOOP_THREAD_BINDING) { /* each thread runs the iteration of its own index */
    for (int j = 0; j < m.n; j++)
      set_var(c, slot, m.ids[j], (val){.i = wrap_int(vdt, thread_coord(c, m.ids[j], s->u.loop.thread_axis))});
    count_steps(c, (uint64_t)m.n, s->loc);
    exec(c, s->u.loop.body, m, depth + 1);
    return;
  }
  level L = *get_level(c, depth); /* by value: deeper levels may move the array */
  bool uniform = true;
  int64_t maxext = 0;
  for (int j = 0; j < m.n; j++) {
    int t = m.ids[j];
    L.lo[j] = eval(c, s->u.loop.min, t).i;
    L.ext[j] = eval(c, s->u.loop.extent, t).i;
    if (L.ext[j] > maxext) maxext = L.ext[j];
    if (j && (L.lo[j] != L.lo[0] || L.ext[j] != L.ext[0])) uniform = false;
  }
  for (int64_t it = 0; it < maxext; it++) {
    mask im = m;
    if (!uniform) {
      int n = 0;
      for (int j = 0; j < m.n; j++)
        if (it < L.ext[j]) L.a[n++] = m.ids[j];
      if (!n) break;
      im.n = n;
      im.ids = L.a;
    }
    for (int j = 0; j < m.n; j++)
      if (it < L.ext[j]) set_var(c, slot, m.ids[j], (val){.i = wrap_int(vdt, L.lo[j] + it)});
    count_steps(c, (uint64_t)im.n, s->loc);
    exec(c, s->u.loop.body, im, depth + 1);
  }
}

static void exec_if(ictx *c, const tc_stmt *s, mask m, int depth) {
  level L = *get_level(c, depth);
  int nt = 0, nf = 0;
  for (int j = 0; j < m.n; j++) {
    int t = m.ids[j];
    if (eval(c, s->u.if_.cond, t).i) L.a[nt++] = t;
    else L.b[nf++] = t;
  }
  count_steps(c, (uint64_t)m.n, s->loc);
  if (nt) exec(c, s->u.if_.then_s, (mask){nt, L.a}, depth + 1);
  if (nf && s->u.if_.else_s) exec(c, s->u.if_.else_s, (mask){nf, L.b}, depth + 1);
}

/* Each thread runs the body while its condition holds; the threads whose condition fails leave
 * the loop, and it ends when none is left. */
static void exec_while(ictx *c, const tc_stmt *s, mask m, int depth) {
  level L = *get_level(c, depth);
  mask cur = m;
  for (;;) {
    int n = 0; /* filtering in place: L.a[n] is written after cur.ids[j >= n] was read */
    for (int j = 0; j < cur.n; j++) {
      int t = cur.ids[j];
      if (eval(c, s->u.while_.cond, t).i) L.a[n++] = t;
    }
    count_steps(c, (uint64_t)cur.n, s->loc);
    if (!n) return;
    cur = (mask){n, L.a};
    exec(c, s->u.while_.body, cur, depth + 1);
  }
}

/* A warp-level synchronisation: every existing lane of each active thread's warp is active. */
static void require_whole_warps(ictx *c, const tc_stmt *s, mask m, const char *what) {
  if (c->in_parallel) fail(c, TILEC_ERROR_PROGRAM, s->loc, -1, "%s inside a T.Parallel loop", what);
  for (int j = 0; j < m.n; j++) {
    int base = m.ids[j] - m.ids[j] % 32;
    for (int t = base; t < base + 32 && t < c->nthreads; t++)
      if (!is_active(c, t))
        fail(c, TILEC_ERROR_PROGRAM, s->loc, t, "%s reached by only part of warp %d", what, base / 32);
  }
}

static void exec_stmt(ictx *c, const tc_stmt *s, mask m, int depth);

static void exec(ictx *c, const tc_stmt *s, mask m, int depth) {
  mask saved = c->active;
  c->active = m;
  exec_stmt(c, s, m, depth);
  c->active = saved;
}

static void exec_stmt(ictx *c, const tc_stmt *s, mask m, int depth) {
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) exec(c, s->u.seq.items[i], m, depth);
    return;
  case TC_ST_ALLOC: {
    const tc_buffer *b = s->u.alloc.buf;
    if (!b->init) return;
    const bufstate *bs = buf_of(c, b, s->loc);
    int64_t zero[MAXDIM] = {0};
    for (int j = 0; j < m.n; j++) store_elem(c, bs, zero, m.ids[j], eval(c, b->init, m.ids[j]), s->loc);
    count_steps(c, (uint64_t)m.n, s->loc);
    return;
  }
  case TC_ST_FOR: {
    const tc_stmt *outer = c->running_for;
    c->running_for = s;
    exec_for(c, s, m, depth);
    c->running_for = outer;
    return;
  }
  case TC_ST_IF:
    exec_if(c, s, m, depth);
    return;
  case TC_ST_WHILE: {
    const tc_stmt *outer = c->running_while;
    c->running_while = s;
    exec_while(c, s, m, depth);
    c->running_while = outer;
    return;
  }
  case TC_ST_STORE:
    exec_store(c, s, m, false);
    return;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) exec_store(c, s, m, true);
    else exec_tile(c, s, m, "T.atomic_add on tiles", run_tile_atomic);
    return;
  case TC_ST_LET:
  case TC_ST_ASSIGN: {
    /* lockstep: every thread reads (a shuffle reads other lanes' variables) before any writes */
    int slot = var_slot(c, s->u.let.var, s->loc);
    for (int j = 0; j < m.n; j++) c->st_val[j] = normalize(s->u.let.var->dtype, eval(c, s->u.let.value, m.ids[j]));
    for (int j = 0; j < m.n; j++) set_var(c, slot, m.ids[j], c->st_val[j]);
    count_steps(c, (uint64_t)m.n, s->loc);
    return;
  }
  case TC_ST_COPY:
    exec_tile(c, s, m, "T.copy", run_copy);
    return;
  case TC_ST_GEMM:
    exec_tile(c, s, m, "T.gemm", run_gemm);
    return;
  case TC_ST_FILL:
    exec_tile(c, s, m, "T.fill", run_fill);
    return;
  case TC_ST_REDUCE:
    exec_tile(c, s, m, "T.reduce", run_reduce);
    return;
  case TC_ST_CUMSUM:
    exec_tile(c, s, m, "T.cumsum", run_cumsum);
    return;
  case TC_ST_INTRINSIC: {
    tc_intrinsic_id id = TC_INTRIN_COUNT;
    tc_intrinsic_lookup(s->u.intrinsic.name, &id);
    if (id == TC_INTRIN_COPY16 || id == TC_INTRIN_CP_ASYNC16) {
      for (int j = 0; j < m.n; j++) run_copy_run(c, s->u.intrinsic.args, false, m.ids[j]);
      return;
    }
    if (id == TC_INTRIN_TMA_LOAD) { /* one copy for the block (thread 0's) */
      if (m.n > 0) {
        tc_expr *const *a = s->u.intrinsic.args;
        run_tma_box(c, a[0], a[1], eval(c, a[3], m.ids[0]).i, eval(c, a[4], m.ids[0]).i, false, m.ids[0]);
      }
      return;
    }
    if (id == TC_INTRIN_TMA_STORE) { /* each calling thread's box */
      for (int j = 0; j < m.n; j++) {
        tc_expr *const *a = s->u.intrinsic.args;
        run_tma_box(c, a[0], a[1], eval(c, a[2], m.ids[j]).i, eval(c, a[3], m.ids[j]).i, true, m.ids[j]);
      }
      return;
    }
    if (id == TC_INTRIN_TMA_STORE_WAIT || id == TC_INTRIN_FENCE_ASYNC_SHARED) return;
    if (id == TC_INTRIN_MBAR_INIT || id == TC_INTRIN_MBAR_EXPECT || id == TC_INTRIN_MBAR_WAIT || id == TC_INTRIN_MBAR_ARRIVE_WARP ||
        id == TC_INTRIN_MBAR_ARRIVE_CLUSTER ||
        id == TC_INTRIN_WG_TURN_WAIT || id == TC_INTRIN_WG_TURN_PASS)
      return;
    if (id == TC_INTRIN_COPY_VEC) {
      for (int j = 0; j < m.n; j++) run_copy_run(c, s->u.intrinsic.args, true, m.ids[j]);
      return;
    }
    /* copies land and gemms finish at once here */
    if (id == TC_INTRIN_CP_ASYNC_COMMIT || id == TC_INTRIN_CP_ASYNC_WAIT || id == TC_INTRIN_WGMMA_WAIT) return;
    if (id == TC_INTRIN_GEMM_BLOCK) {
      for (int j = 0; j < m.n; j++) run_gpu_gemm(c, s->u.intrinsic.args, m.ids[j], s->loc);
      return;
    }
    if (id == TC_INTRIN_SIMDGROUP_STORE_ACC) {
      for (int j = 0; j < m.n; j++) run_simdgroup_store(c, s->u.intrinsic.args, m.ids[j], s->loc);
      return;
    }
    if (id != TC_INTRIN_WARP_SYNC)
      fail(c, TILEC_ERROR_TARGET, s->loc, -1, "intrinsic %s runs only on a GPU target", s->u.intrinsic.name ? s->u.intrinsic.name : "?");
    require_whole_warps(c, s, m, "warp_sync");
    return;
  }
  case TC_ST_BARRIER:
    if (c->in_parallel) fail(c, TILEC_ERROR_PROGRAM, s->loc, -1, "barrier inside a T.Parallel loop");
    if (s->u.barrier.scope == TC_BARRIER_WARP) {
      require_whole_warps(c, s, m, "warp barrier");
      return;
    }
    if (m.n != c->nthreads)
      fail(c, TILEC_ERROR_PROGRAM, s->loc, -1, "barrier reached by %d of the block's %d threads", m.n, c->nthreads);
    return;
  case TC_ST_ASSERT:
    for (int j = 0; j < m.n; j++)
      if (!eval(c, s->u.assert_.cond, m.ids[j]).i)
        fail(c, TILEC_ERROR_PROGRAM, s->loc, m.ids[j], "assertion failed%s%s", s->u.assert_.msg ? ": " : "",
             s->u.assert_.msg ? s->u.assert_.msg : "");
    count_steps(c, (uint64_t)m.n, s->loc);
    return;
  case TC_ST_EVALUATE:
    for (int j = 0; j < m.n; j++) (void)eval(c, s->u.evaluate.value, m.ids[j]);
    return;
  case TC_ST_PRINT:    /* the library never prints */
  case TC_ST_ANNOTATE: /* layout hints do not change results */
    return;
  default:
    fail(c, TILEC_ERROR_INTERNAL, s->loc, -1, "reference interpreter: unexpected statement %s", tc_stmt_kind_name(s->kind));
  }
}

/* ---- set-up ---- */
static void need_scalar(ictx *c, tc_dtype d, const char *what, const char *name) {
  if (d.lanes != 1) fail(c, TILEC_ERROR_TARGET, no_loc, -1, "reference interpreter: vector dtype of %s %s is not supported", what, name);
}

static void add_var(ictx *c, const tc_var *v) {
  if (!v || map_get(&c->varmap, v) >= 0) return;
  need_scalar(c, v->dtype, "variable", v->name);
  if (!map_put(&c->varmap, v, c->nvars)) fail(c, TILEC_ERROR_NOMEM, no_loc, -1, "reference interpreter: out of memory");
  c->nvars++;
}

static void add_buf(ictx *c, const tc_buffer *b) {
  if (!b || map_get(&c->bufmap, b) >= 0) return;
  if (b->view_of) add_buf(c, b->view_of);
  need_scalar(c, b->dtype, "buffer", b->name);
  if (b->ndim > MAXDIM)
    fail(c, TILEC_ERROR_TARGET, b->loc, -1, "reference interpreter: buffer %s has %d dimensions, at most %d are supported", b->name,
         b->ndim, MAXDIM);
  if (c->nbufs == c->bufcap) {
    int cap = c->bufcap ? c->bufcap * 2 : 16;
    bufstate *n = realloc(c->bufs, sizeof *n * (size_t)cap);
    if (!n) fail(c, TILEC_ERROR_NOMEM, no_loc, -1, "reference interpreter: out of memory");
    c->bufs = n;
    c->bufcap = cap;
  }
  bufstate *bs = &c->bufs[c->nbufs];
  memset(bs, 0, sizeof *bs);
  bs->b = b;
  bs->ndim = b->ndim;
  bs->global = b->scope == TC_SCOPE_GLOBAL;
  bs->per_thread = b->scope == TC_SCOPE_LOCAL || b->scope == TC_SCOPE_VAR;
  if (!map_put(&c->bufmap, b, c->nbufs)) fail(c, TILEC_ERROR_NOMEM, no_loc, -1, "reference interpreter: out of memory");
  c->nbufs++;
}

static void scan_expr(ictx *c, const tc_expr *e) {
  need_scalar(c, e->dtype, "expression", tc_expr_op_name(e->op));
  if (e->op == TC_OP_VAR) add_var(c, e->var);
  if (e->op == TC_OP_LOAD || e->op == TC_OP_ADDRESS_OF) add_buf(c, e->buf);
  for (int i = 0; i < e->nargs; i++) scan_expr(c, e->args[i]);
}

static void scan_stmt(ictx *c, const tc_stmt *s) {
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) scan_stmt(c, s->u.seq.items[i]);
    break;
  case TC_ST_ALLOC:
    add_buf(c, s->u.alloc.buf);
    if (s->u.alloc.buf->init) scan_expr(c, s->u.alloc.buf->init);
    break;
  case TC_ST_FOR:
    add_var(c, s->u.loop.var);
    scan_expr(c, s->u.loop.min);
    scan_expr(c, s->u.loop.extent);
    scan_stmt(c, s->u.loop.body);
    break;
  case TC_ST_WHILE:
    scan_expr(c, s->u.while_.cond);
    scan_stmt(c, s->u.while_.body);
    break;
  case TC_ST_IF:
    scan_expr(c, s->u.if_.cond);
    scan_stmt(c, s->u.if_.then_s);
    if (s->u.if_.else_s) scan_stmt(c, s->u.if_.else_s);
    break;
  case TC_ST_STORE:
    for (int i = 0; i < s->u.store.nidx; i++) scan_expr(c, s->u.store.idx[i]);
    scan_expr(c, s->u.store.value);
    break;
  case TC_ST_ATOMIC_ADD:
    if (s->u.atomic.buf) {
      add_buf(c, s->u.atomic.buf);
      add_buf(c, s->u.atomic.prev);
      for (int i = 0; i < s->u.atomic.nidx; i++) scan_expr(c, s->u.atomic.idx[i]);
      scan_expr(c, s->u.atomic.value);
    }
    break;
  case TC_ST_LET:
  case TC_ST_ASSIGN:
    add_var(c, s->u.let.var);
    scan_expr(c, s->u.let.value);
    break;
  case TC_ST_COPY:
  case TC_ST_GEMM:
  case TC_ST_REDUCE:
  case TC_ST_CUMSUM:
    break; /* region buffers are in scope, so already known; starts hold vars seen elsewhere or scanned below */
  case TC_ST_FILL:
    scan_expr(c, s->u.fill.value);
    break;
  case TC_ST_ASSERT:
    scan_expr(c, s->u.assert_.cond);
    break;
  case TC_ST_EVALUATE:
    scan_expr(c, s->u.evaluate.value);
    break;
  case TC_ST_INTRINSIC:
    for (int i = 0; i < s->u.intrinsic.nargs; i++) scan_expr(c, s->u.intrinsic.args[i]);
    break;
  default:
    break;
  }
  /* region start expressions */
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int nr = tc_stmt_regions(s, regs);
  for (int r = 0; r < nr; r++) {
    add_buf(c, regs[r].region->buf);
    for (int i = 0; i < regs[r].region->ndim; i++) scan_expr(c, regs[r].region->r[i].start);
  }
}

/* Row-major strides; numel is -1 when it does not fit in int64. */
static void set_strides(bufstate *bs) {
  int64_t st = 1;
  for (int i = bs->ndim - 1; i >= 0; i--) {
    bs->stride[i] = st;
    if (st >= 0 && bs->shape[i] > 0 && st > INT64_MAX / bs->shape[i]) st = -1;
    else if (st >= 0) st *= bs->shape[i];
  }
  bs->numel = st;
}

static void run(ictx *c, void *const *data, const int64_t *scalars, const double *fscalars, const int64_t *syms) {
  const tc_kernel_ir *k = c->k;
  c->tdim[0] = c->tdim[1] = c->tdim[2] = 1;
  int64_t nth = 1;
  for (int i = 0; i < k->threads_ndim; i++) {
    c->tdim[i] = k->threads[i];
    nth *= k->threads[i];
  }
  if (nth > 65536) fail(c, TILEC_ERROR_TARGET, k->loc, -1, "reference interpreter: %lld threads per block is too many", (long long)nth);
  c->nthreads = (int)nth;

  for (int i = 0; i < k->nsyms; i++) add_var(c, k->syms[i]);
  for (int i = 0; i < k->nparams; i++) {
    add_var(c, k->params[i].var);
    add_buf(c, k->params[i].buf);
  }
  for (int i = 0; i < 3; i++) add_var(c, k->block_idx[i]);
  if (k->launch_var) add_var(c, k->launch_var);
  for (int i = 0; i < k->grid_ndim; i++) scan_expr(c, k->grid[i]);
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i].buf)
      for (int d = 0; d < k->params[i].buf->ndim; d++) scan_expr(c, k->params[i].buf->shape[d]);
  for (int i = 0; i < k->nworkspaces; i++) { /* T.alloc_global: storage at data[nparams + i] */
    add_buf(c, k->workspaces[i]);
    for (int d = 0; d < k->workspaces[i]->ndim; d++) scan_expr(c, k->workspaces[i]->shape[d]);
  }
  scan_stmt(c, k->body);

  c->vars = xcalloc(c, (size_t)c->nvars * (size_t)c->nthreads, sizeof(val));
  c->all_ids = xcalloc(c, (size_t)c->nthreads, sizeof(int));
  for (int t = 0; t < c->nthreads; t++) c->all_ids[t] = t;
  c->st_idx = xcalloc(c, (size_t)c->nthreads * MAXDIM, sizeof(int64_t));
  c->st_val = xcalloc(c, (size_t)c->nthreads, sizeof(val));

  /* uniform kernel-level values */
  for (int i = 0; i < k->nsyms; i++) {
    if (!syms) fail(c, TILEC_ERROR_USAGE, no_loc, -1, "reference interpreter: no values given for the symbolic dimensions");
    if (syms[i] < 0) fail(c, TILEC_ERROR_USAGE, no_loc, -1, "symbolic dimension %s is %lld", k->syms[i]->name, (long long)syms[i]);
    set_uniform(c, var_slot(c, k->syms[i], no_loc), (val){.i = wrap_int(k->syms[i]->dtype, syms[i])});
  }
  for (int i = 0; i < k->nparams; i++) {
    const tc_var *v = k->params[i].var;
    if (!v) continue;
    val x;
    if (isf(v->dtype)) {
      if (!fscalars) fail(c, TILEC_ERROR_USAGE, no_loc, -1, "no value given for the float parameter %s", v->name);
      x.f = round_f(v->dtype, fscalars[i]);
    } else {
      if (!scalars) fail(c, TILEC_ERROR_USAGE, no_loc, -1, "no value given for the integer parameter %s", v->name);
      x.i = wrap_int(v->dtype, scalars[i]);
    }
    set_uniform(c, var_slot(c, v, no_loc), x);
  }
  for (int i = 0; i < c->nbufs; i++) {
    bufstate *bs = &c->bufs[i];
    const tc_buffer *b = bs->b;
    for (int d = 0; d < b->ndim; d++) {
      bs->shape[d] = eval(c, b->shape[d], 0).i;
      if (bs->shape[d] < 0) fail(c, TILEC_ERROR_USAGE, b->loc, -1, "buffer %s has dimension %d of size %lld", b->name, d, (long long)bs->shape[d]);
    }
    set_strides(bs);
    if (bs->global) {
      if (bs->numel < 0) fail(c, TILEC_ERROR_USAGE, b->loc, -1, "tensor parameter %s has more than 2^63 elements", b->name);
      bs->data = data ? data[tc_buffer_storage(b)->param_index] : NULL; /* a view: its tensor's */
      if (!bs->data && bs->numel > 0) fail(c, TILEC_ERROR_USAGE, no_loc, -1, "no data given for the tensor parameter %s", b->name);
    } else if (!b->view_of) {
      double cells = (double)bs->numel * (bs->per_thread ? c->nthreads : 1);
      if (cells > 4294967296.0 || bs->numel < 0)
        fail(c, TILEC_ERROR_TARGET, b->loc, -1, "reference interpreter: buffer %s is too large", b->name);
      bs->cells = xcalloc(c, (size_t)bs->numel * (size_t)(bs->per_thread ? c->nthreads : 1), sizeof(val));
    }
  }
  for (int i = 0; i < c->nbufs; i++) { /* a view shares the cells of the buffer it views (same count) */
    bufstate *bs = &c->bufs[i];
    if (!bs->global && bs->b->view_of) bs->cells = buf_of(c, bs->b->view_of, bs->b->loc)->cells;
  }
  int64_t grid[3] = {1, 1, 1};
  for (int i = 0; i < k->grid_ndim; i++) {
    grid[i] = eval(c, k->grid[i], 0).i;
    if (grid[i] < 0) fail(c, TILEC_ERROR_USAGE, k->loc, -1, "the grid extent along axis %d is %lld", i, (long long)grid[i]);
  }
  mask all = {c->nthreads, c->all_ids};
  int launches = k->launch_var && k->nlaunches > 1 ? k->nlaunches : 1; /* one after another */
  for (int launch = 0; launch < launches; launch++)
  for (int64_t bz = 0; bz < grid[2]; bz++)
    for (int64_t by = 0; by < grid[1]; by++)
      for (int64_t bx = 0; bx < grid[0]; bx++) {
        c->block[0] = bx;
        c->block[1] = by;
        c->block[2] = bz;
        for (int i = 0; i < 3; i++)
          if (k->block_idx[i])
            set_uniform(c, var_slot(c, k->block_idx[i], no_loc), (val){.i = wrap_int(k->block_idx[i]->dtype, c->block[i])});
        if (launches > 1) set_uniform(c, var_slot(c, k->launch_var, no_loc), (val){.i = launch});
        for (int i = 0; i < c->nbufs; i++)
          if (!c->bufs[i].global && !c->bufs[i].b->view_of)
            memset(c->bufs[i].cells, 0, sizeof(val) * (size_t)c->bufs[i].numel * (size_t)(c->bufs[i].per_thread ? c->nthreads : 1));
        count_steps(c, 1, k->loc);
        exec(c, k->body, all, 0);
      }
}

static bool run_guarded(ictx *c, void *const *data, const int64_t *scalars, const double *fscalars, const int64_t *syms) {
  if (setjmp(c->jb)) return false;
  run(c, data, scalars, fscalars, syms);
  return true;
}

tilec_status tc_interp_run(const tc_kernel_ir *k, void *const *data, const int64_t *scalars, const double *fscalars,
                           const int64_t *syms, tilec_error *err) {
  return tc_interp_run_limited(k, data, scalars, fscalars, syms, TC_INTERP_STEP_LIMIT, err);
}

tilec_status tc_interp_run_limited(const tc_kernel_ir *k, void *const *data, const int64_t *scalars, const double *fscalars,
                                   const int64_t *syms, uint64_t step_limit, tilec_error *err) {
  tc_interp_budget budget = {step_limit, 0};
  return tc_interp_run_budget(k, data, scalars, fscalars, syms, &budget, err);
}

tilec_status tc_interp_run_budget(const tc_kernel_ir *k, void *const *data, const int64_t *scalars,
                                  const double *fscalars, const int64_t *syms, const tc_interp_budget *budget,
                                  tilec_error *err) {
  tilec_error local;
  if (!err) err = &local;
  tc_error_clear(err);
  if (!tc_ir_verify(k, "interp", err)) return err->status;
  ictx *c = calloc(1, sizeof *c);
  if (!c) {
    tc_error(err, TILEC_ERROR_NOMEM, "reference interpreter: out of memory");
    return err->status;
  }
  c->k = k;
  c->err = err;
  c->step_limit = budget && budget->step_limit ? budget->step_limit : TC_INTERP_STEP_LIMIT;
  if (budget && budget->seconds > 0) {
    c->seconds = budget->seconds;
    c->deadline_ms = tc_now_ms() + budget->seconds * 1000.0;
  }
  bool ok = run_guarded(c, data, scalars, fscalars, syms);
  map_free(&c->varmap);
  map_free(&c->bufmap);
  for (int i = 0; i < c->nbufs; i++)
    if (!c->bufs[i].b->view_of) free(c->bufs[i].cells);
  free(c->bufs);
  free(c->vars);
  for (int i = 0; i < c->nlevels; i++) {
    free(c->levels[i].a);
    free(c->levels[i].b);
    free(c->levels[i].lo);
    free(c->levels[i].ext);
  }
  free(c->levels);
  free(c->all_ids);
  free(c->st_idx);
  free(c->st_val);
  for (int i = 0; i < 4; i++) free(c->scratch[i]);
  free(c);
  return ok ? TILEC_OK : (err->status != TILEC_OK ? err->status : TILEC_ERROR_INTERNAL);
}
