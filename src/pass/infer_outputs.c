/* infer_outputs.c: a tensor parameter that the kernel writes is an output. Verification
 * compares outputs; `tilec run` fills inputs with random values and outputs with zeros. */
#include "ir/walk.h"
#include "pass/pass.h"

static void mark_written(void *ctx, tc_buffer *b, tc_stmt *where) {
  (void)where;
  tc_kernel_ir *k = ctx;
  if (b && b->view_of) b = b->view_of; /* writing a view writes the tensor it views */
  if (b && b->scope == TC_SCOPE_GLOBAL && b->param_index >= 0 && b->param_index < k->nparams)
    k->params[b->param_index].is_output = true;
}

static bool visit(void *ctx, tc_stmt *s) {
  tc_stmt_written_buffers(s, mark_written, ctx);
  return true;
}

bool tc_pass_infer_outputs(tc_arena *arena, tc_kernel_ir *k, tilec_error *err) {
  (void)arena;
  (void)err;
  tc_visit_stmts(k->body, visit, k);
  return true;
}
