/* cfamily.h: the expression printer shared by the C-family emitters (the cpu target's C, and
 * the CUDA C++ and Metal Shading Language emitters to come).
 *
 * The printer knows C's operators and tilec's value rules (every operation rounds to its
 * dtype; signed integer arithmetic wraps; division by zero gives 0); an emitter supplies what
 * differs between languages and targets through tc_cf_hooks: how a dtype is spelled, how a
 * variable and a buffer element read, how a value rounds and converts, which function
 * computes a math or helper op at a dtype. Dtype spellings come from src/dtype/. */
#ifndef TILEC_TARGET_CFAMILY_H
#define TILEC_TARGET_CFAMILY_H

#include <stdbool.h>

#include "ir/ir.h"
#include "util/strbuf.h"

typedef struct tc_cf tc_cf;

typedef struct tc_cf_hooks {
  /* The type expressions of dtype d compute in ("float" for float16 in C). */
  const char *(*ctype)(tc_dtype d);
  /* A variable reference (the emitter decides where a variable lives). */
  void (*var)(tc_cf *p, tc_strbuf *sb, const tc_var *v);
  /* A LOAD expression: buffer element read, with whatever bounds handling the target does. */
  void (*load)(tc_cf *p, tc_strbuf *sb, const tc_expr *e);
  /* Round the computed value `val` to dtype d's precision and range. */
  void (*round)(tc_strbuf *sb, tc_dtype d, const char *val);
  /* Convert the computed value `val` of dtype `from` to dtype `to` (TC_OP_CAST, stores). */
  void (*cast)(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *val);
  /* The function computing op at dtype d when the language spells it as a call ("expf",
   * "tcg_floordiv_i"); NULL when the target cannot compute it. */
  const char *(*call)(tc_expr_op op, tc_dtype d);
} tc_cf_hooks;

/* Printer state; emitters embed it as the first member of their own state and reach that
 * from the hooks' `p`. */
struct tc_cf {
  const tc_cf_hooks *h;
  const char *target; /* named in "the cpu backend does not support expression 'x'" */
  tilec_error *err;
  bool failed;    /* the first failure is reported; later output is discarded by the caller */
  bool index_ctx; /* printing an index or bound: plain integer arithmetic, no wrapping casts */
};

void tc_cf_fail(tc_cf *p, tc_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tc_cf_expr(tc_cf *p, tc_strbuf *sb, const tc_expr *e);
/* An index, bound or region start: signed arithmetic without the wrapping casts values get,
 * so the compiler can reason about the indices and vectorize. */
void tc_cf_index_expr(tc_cf *p, tc_strbuf *sb, const tc_expr *e);
/* The expression converted to dtype `to`. */
void tc_cf_expr_as(tc_cf *p, tc_strbuf *sb, const tc_expr *e, tc_dtype to);

/* The C spellings (also the CUDA ones where CUDA C++ is C): rounding and conversion through
 * the tilec C prelude's helpers (dtype_csrc.c: tcg_r_<dtype>, tcg_f2<dtype>, ...), and the
 * math functions of <math.h> plus the prelude's integer helpers. */
void tc_cf_c_round(tc_strbuf *sb, tc_dtype d, const char *val);
void tc_cf_c_convert(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *val);
const char *tc_cf_c_call(tc_expr_op op, tc_dtype d);

/* philox_rand(key, seq, pos) (T.rng_rand) as a call of philox.h's tcg_philox, each argument
 * cast to the language's unsigned 64-bit type `u64` ("uint64_t", MSL's "ulong"). */
/* text is a C primary expression (a name, a non-negative number, a call, a subscript, or wholly in
 * parentheses), so it needs no parentheses of its own as an operand */
bool tc_cf_is_primary(const char *text);
/* the end of a loop `for (v = min; v < END; v++)` as text: the extent alone from 0, a number when
 * both are constant, else min + extent */
void tc_cf_loop_end(tc_strbuf *sb, const tc_expr *min, const tc_expr *extent, const char *min_text, const char *extent_text);
/* x // c or x % c for x >= 0 (x an operand's text) and c a power of two: "(x >> k)" or "(x & (c - 1))" */
void tc_cf_pow2_divmod(tc_strbuf *sb, const char *x, int64_t c, bool mod);
/* text without the parentheses around the whole of it, if any (a condition, a value assigned) */
const char *tc_cf_unwrapped(tc_strbuf *sb);
/* text as an operand: "(text)" unless it is a primary */
void tc_cf_operand(tc_strbuf *sb, const char *text);
void tc_cf_philox_text(tc_strbuf *sb, const char *u64, const char *const args[3]);

/* reinterpret(x) (T.reinterpret) as text: x's encoding as an unsigned integer of its width, then
 * that integer decoded as `to`. x is the operand's text; narrow_bits, for a narrow float x
 * (which computes as float32), the text of its encoding by the target's encoder, or NULL for
 * the shared prelude's (tcg_f32_to_NAME, _sat where stores saturate). float32 and
 * float64 go through tcg_bits_f32/_f64 and tcg_f32/_f64_bits, which each target's prelude
 * defines; to_ctype is the C type `to` computes in. */
void tc_cf_reinterpret_text(tc_strbuf *sb, tc_dtype from, tc_dtype to, const char *x, const char *narrow_bits,
                            const char *to_ctype);

#endif
