/* exec.c: who runs a statement, the block once or each thread (the rule is in analysis.h). */
#include "analysis/analysis.h"

bool tc_buffer_is_per_thread(const tc_buffer *b) {
  return b && (b->scope == TC_SCOPE_LOCAL || b->scope == TC_SCOPE_VAR);
}

bool tc_buffer_is_block_visible(const tc_buffer *b) {
  return b && (b->scope == TC_SCOPE_SHARED || b->scope == TC_SCOPE_GLOBAL);
}

tc_exec_kind tc_stmt_exec(const tc_stmt *s) {
  if (!s) return TC_EXEC_THREAD;
  if (s->kind == TC_ST_FOR) return s->u.loop.kind == TC_LOOP_PARALLEL ? TC_EXEC_BLOCK : TC_EXEC_THREAD;
  tc_stmt_region regs[TC_MAX_STMT_REGIONS];
  int n = tc_stmt_regions(s, regs);
  if (n == 0) return TC_EXEC_THREAD; /* not a tile operation */
  for (int i = 0; i < n; i++)
    if (tc_buffer_is_per_thread(regs[i].region->buf)) return TC_EXEC_THREAD;
  return TC_EXEC_BLOCK;
}

static bool contains(const tc_stmt *s, bool barriers) {
  if (!s) return false;
  if (tc_stmt_is_collective(s) || (barriers && s->kind == TC_ST_BARRIER)) return true;
  switch (s->kind) {
  case TC_ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (contains(s->u.seq.items[i], barriers)) return true;
    return false;
  case TC_ST_FOR: return contains(s->u.loop.body, barriers);
  case TC_ST_IF: return contains(s->u.if_.then_s, barriers) || contains(s->u.if_.else_s, barriers);
  case TC_ST_WHILE: return contains(s->u.while_.body, barriers);
  default: return false;
  }
}

bool tc_stmt_contains_collective(const tc_stmt *s) { return contains(s, false); }
bool tc_stmt_contains_sync(const tc_stmt *s) { return contains(s, true); }

void tc_error_sync_under_divergence(tilec_error *err, const tc_stmt *s) {
  if (tc_stmt_contains_collective(s))
    tc_error_at(err, TILEC_ERROR_PROGRAM, s->loc, "a tile operation is under control flow that depends on the thread index");
  else
    tc_error_at(err, TILEC_ERROR_PROGRAM, s->loc,
                "a barrier is needed under control flow that depends on the thread index "
                "(threads read shared memory other threads write inside this %s)",
                s->kind == TC_ST_FOR || s->kind == TC_ST_WHILE ? "loop" : "if");
}
