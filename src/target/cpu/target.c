/* target.c: the cpu target: its description and its pass list.
 *
 * The cpu's lowering decides, statement by statement, what runs once per block and what runs
 * in a loop over the block's threads (lower.c, "the plan"). The IR is not rewritten: the plan
 * is recorded in tc_lowered.state for the emitter (module.c), and `tilec ir --lowered --target
 * cpu` prints it after the IR. */
#include <stdio.h>

#include "target/cpu/cpu_internal.h"
#include "util/diag.h"

static bool cpu_describe(const tc_target_spec *spec, tc_target_desc *out, tilec_error *err) {
  (void)spec;
  (void)err;
  out->target = "cpu";
  snprintf(out->arch, sizeof out->arch, "native"); /* cc -march=native (build.c) */
  out->warp_size = 1; /* threads of a block run one after another on one OS thread */
  out->max_threads_per_block = 1024; /* the reader's limit on T.Kernel(threads=...) */
  out->smem_per_block = 0;           /* shared buffers live in the worker's scratch block */
  return true;
}

/* A kernel without T.Kernel has no launch to plan. */
static bool pass_launch_check(tc_lowered *lw, tilec_error *err) {
  const tc_kernel_ir *k = lw->k;
  if (k->threads_ndim < 1 || k->grid_ndim < 1) {
    tc_error_at(err, TILEC_ERROR_PROGRAM, k->loc, "kernel '%s' has no launch (T.Kernel)", k->name ? k->name : "?");
    return false;
  }
  return true;
}

static bool pass_plan(tc_lowered *lw, tilec_error *err) {
  tc_cpu_plan *P = TC_NEW(lw->arena, tc_cpu_plan);
  if (!tc_cpu_plan_build(lw->arena, lw->k, P, err)) return false;
  lw->state = P;
  return true;
}

static const tc_target_pass k_cpu_passes[] = {
    {"cpu-launch-check", pass_launch_check},
    {"cpu-plan", pass_plan},
};

static void print_lines(tc_strbuf *sb, const tc_stmt *s) {
  if (s && s->loc.line > 0) tc_sb_printf(sb, " (line %d)", s->loc.line);
}

static void print_nodes(tc_strbuf *sb, const tc_cpu_nodes *l, int depth) {
  for (int i = 0; i < l->n; i++) {
    const tc_cpu_node *n = l->v[i];
    tc_sb_puts(sb, "#  ");
    tc_sb_indent(sb, depth);
    switch (n->kind) {
    case TC_CPU_ONCE:
      tc_sb_printf(sb, "once %s", tc_stmt_kind_name(n->stmt->kind));
      print_lines(sb, n->stmt);
      break;
    case TC_CPU_THREADS:
      tc_sb_printf(sb, "threads segment %d%s: %d statement%s", n->seg, n->lockstep ? " (lockstep)" : "",
                   n->stmts.n, n->stmts.n == 1 ? "" : "s");
      if (n->stmts.n) print_lines(sb, n->stmts.items[0]);
      break;
    case TC_CPU_LOOP:
      if (n->stmt->kind == TC_ST_WHILE) tc_sb_puts(sb, "while");
      else tc_sb_printf(sb, "loop %s", n->stmt->u.loop.var->name);
      print_lines(sb, n->stmt);
      break;
    case TC_CPU_IF:
      tc_sb_puts(sb, "if");
      print_lines(sb, n->stmt);
      break;
    }
    tc_sb_putc(sb, '\n');
    print_nodes(sb, &n->body, depth + 1);
    if (n->orelse.n) {
      tc_sb_puts(sb, "#  ");
      tc_sb_indent(sb, depth);
      tc_sb_puts(sb, "else\n");
      print_nodes(sb, &n->orelse, depth + 1);
    }
  }
}

static void cpu_print_state(tc_strbuf *sb, const tc_lowered *lw) {
  const tc_cpu_plan *P = lw->state;
  if (!P) return;
  tc_sb_printf(sb, "# cpu plan: %d thread%s per block, %d thread segment%s\n", P->nthreads,
               P->nthreads == 1 ? "" : "s", P->nsegs, P->nsegs == 1 ? "" : "s");
  print_nodes(sb, &P->top, 0);
  bool any = false;
  for (int id = 0; id < P->nids; id++) {
    const char *name = P->vars[id] ? P->vars[id]->name : P->bufs[id] ? P->bufs[id]->name : NULL;
    if (!name || P->storage[id] != TC_CPU_STORE_PER_THREAD) continue;
    tc_sb_printf(sb, "%s %s", any ? "," : "# per-thread storage:", name);
    any = true;
  }
  if (any) tc_sb_putc(sb, '\n');
}

const tc_target tc_cpu_target = {
    .name = "cpu",
    .describe = cpu_describe,
    .passes = k_cpu_passes,
    .npasses = (int)(sizeof k_cpu_passes / sizeof *k_cpu_passes),
    .print_state = cpu_print_state,
};
