/* eval_hopper.c: TileLang's explicit asynchronous Hopper constructs (issue 10), given the
 * meaning they have once every wait they need has been reached.
 *
 * T.wgmma_gemm issues a warpgroup MMA without waiting for it; T.wait_wgmma(n) waits until at
 * most n of them are in flight; T.ptx_commit_group / T.ptx_wait_group(n) do the same for
 * cp.async copies (TileLang's `T.Parallel(..., prefer_async=True)` loops issue those). A correct
 * program reads no result before the wait that covers it, so a gemm or copy that completes when
 * it is issued gives every correct program the same results: on the interpreter and the cpu
 * backend (the reference), and on cuda and metal, whose T.gemm and copies are synchronous at
 * this level. T.wgmma_gemm is therefore T.gemm with wg_wait=-1 (the IR keeps the request for
 * no implicit wait), and the waits and commits have nothing left to do. */
#include "front/eval_int.h"

#include <string.h>

/* T.wgmma_gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, annotations=): T.gemm's
 * arguments without k_pack and wg_wait, so it is bound to T.gemm's spec with k_pack at its
 * default and wg_wait=-1 (TileLang's explicit form never emits the implicit wait). */
static tc_val *h_wgmma_gemm(tc_ev *ev, tc_val *self, tc_args *a) {
  enum { GEMM_NPARAMS = 9, WGMMA_NPARAMS = 7 };
  tc_args g = *a;
  g.p = EV_NEW_ARRAY(ev, tc_val *, GEMM_NPARAMS);
  g.pnode = EV_NEW_ARRAY(ev, const tc_ast *, GEMM_NPARAMS);
  for (int i = 0; i < WGMMA_NPARAMS; i++) g.p[i] = a->p[i], g.pnode[i] = a->pnode[i];
  g.p[8] = tv_int(ev, -1);
  return ev_t_gemm(ev, self, &g);
}

/* T.wait_wgmma(n), T.ptx_wait_group(n): the gemms and copies they wait for are complete. */
static tc_val *h_wait(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_val *n = a->p[0];
  if (n->kind != TV_INT || n->u.i < 0)
    ev_fail(ev, arg_loc(a, 0), "the number of operations left in flight must be an int >= 0 known at compile time");
  return tv_none(ev);
}

/* T.ptx_commit_group(): closes a group of cp.async copies, which are complete already. */
static tc_val *h_commit(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_none(ev);
}

/* T.sync_grid(): every block of the grid meets (a cooperative launch); eval_kernels.c */
static tc_val *h_sync_grid(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  ev_kernel_grid_sync(ev, a->call ? a->call->loc : (tc_loc){0});
  return tv_none(ev);
}

static const tc_builtin hopper_builtins[] = {
    {"T.sync_grid", "", h_sync_grid, 0},
    {"T.wgmma_gemm", "A B C transpose_A? transpose_B? policy? clear_accum? | annotations?", h_wgmma_gemm, 0},
    {"T.wait_wgmma", "id", h_wait, 0},
    {"T.ptx_wait_group", "num", h_wait, 0},
    {"T.ptx_commit_group", "", h_commit, 0},
    {NULL, NULL, NULL, 0},
};

const tc_builtin *ev_hopper_builtin(const char *attr) {
  return ev_builtin_find(hopper_builtins, attr, 2);
}
