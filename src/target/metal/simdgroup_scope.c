/* simdgroup_scope.c: the metal target's pass "metal-accumulator-scope" (docs/metal.md). It runs
 * on tile IR, before the GPU lowering and so before layout inference, and moves each gemm
 * accumulator fragment to the scope of the instruction that will hold it:
 *
 *   metal.cooperative_tensor  Metal 4 (metal4=1) and every gemm into it suits matmul2d
 *                             (tc_gpu_matmul2d_reason): registers placed as matmul2d's 16 x 32
 *                             destination cooperative tensors place their elements. When a gemm
 *                             of the kernel reads A from registers, A's placement comes from an
 *                             accumulator, so every gemm must suit matmul2d, or none takes it;
 *   metal.simdgroup           every gemm into it takes simdgroup_matrix 8x8 operands
 *                             (tc_metal_simdgroup_gemm): registers that are the thread_elements()
 *                             of the simdgroup's 8x8 float matrices, so the gemm moves them in
 *                             and out within the thread and a T.copy to device memory is a
 *                             simdgroup_store;
 *   (stays a fragment)        otherwise (8-bit integer operands: the SIMT gemm, m16n8 placement).
 *
 * The new scope is an explicit, printed fact of the IR (`tilec ir --lowered --target metal`)
 * that the lowering reads instead of deciding again: layout inference gives the accumulator the
 * scope's placement (src/gpu/layout.c), the direct-global form is tried only on
 * cooperative-tensor accumulators (src/gpu/direct.c), and the copy to device memory of a
 * simdgroup accumulator is a simdgroup_store (src/gpu/simdgroup_store.c). Everything else
 * (T.Parallel epilogues, reductions, atomics, copies to shared memory) sees a register tile with
 * a layout, as for any fragment (tc_scope_in_registers).
 *
 * Every reference is rewritten (allocation, gemm regions, copies, loads and addresses in nested
 * call arguments) to one new buffer per accumulator with the same id. The kernel is a copy: the
 * reference interpreter keeps running the tile IR as the front end wrote it. */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "ir/walk.h"
#include "target/metal/metal.h"

bool tc_metal_simdgroup_operand(int msl, tc_dtype d) {
  return d.code == TC_DT_FLOAT16 || d.code == TC_DT_FLOAT32 || (d.code == TC_DT_BFLOAT16 && msl >= 310);
}

bool tc_metal_simdgroup_gemm(int msl, tc_dtype a, tc_dtype b, tc_dtype c, int64_t K) {
  return tc_metal_simdgroup_operand(msl, a) && tc_metal_simdgroup_operand(msl, b) && tc_dtype_is_float(c) && K % 8 == 0;
}

enum { CAN_COOP = 1, CAN_SG = 2 };

typedef struct scope_ctx {
  int msl;
  bool metal4;
  int threads;
  int n;              /* buffer ids are < n */
  bool rs;            /* a gemm of the kernel reads A from registers */
  bool all_coop;      /* every gemm of the kernel suits matmul2d */
  unsigned char *can; /* by accumulator id: CAN_* every gemm into it allows; 0 with seen */
  bool *seen;
  tc_buffer **acc;    /* by id: the accumulator buffer */
} scope_ctx;

static bool find_rs_cb(void *ctx, tc_stmt *s) {
  scope_ctx *S = ctx;
  if (s->kind == TC_ST_GEMM && s->u.gemm.a.buf && s->u.gemm.a.buf->scope == TC_SCOPE_FRAGMENT) S->rs = true;
  return true;
}

static bool gemm_cb(void *ctx, tc_stmt *s) {
  scope_ctx *S = ctx;
  if (s->kind != TC_ST_GEMM) return true;
  tc_buffer *A = s->u.gemm.a.buf, *B = s->u.gemm.b.buf, *C = s->u.gemm.c.buf;
  const tc_region *ra = &s->u.gemm.a;
  int64_t cs[2];
  if (!A || !B || !C || C->scope != TC_SCOPE_FRAGMENT || C->ndim != 2 || !tc_buffer_const_shape(C, cs) || C->id < 0 ||
      C->id >= S->n || ra->ndim < 2) {
    S->all_coop = false;
    return true;
  }
  int64_t K = ra->r[s->u.gemm.trans_a ? ra->ndim - 2 : ra->ndim - 1].extent;
  unsigned char can = 0;
  int wm, wn;
  char why[200];
  if (tc_gpu_acc_partition(s, S->threads, 32, &wm, &wn)) {
    if (S->metal4 && !tc_gpu_matmul2d_reason(cs[0], cs[1], K, wm, wn, A->dtype, B->dtype, C->dtype, A->scope != TC_SCOPE_FRAGMENT,
                                             B->scope != TC_SCOPE_FRAGMENT, false, why, sizeof why))
      can |= CAN_COOP;
    if (tc_metal_simdgroup_gemm(S->msl, A->dtype, B->dtype, C->dtype, K)) can |= CAN_SG;
  }
  S->all_coop &= (can & CAN_COOP) != 0;
  S->can[C->id] = S->seen[C->id] ? (unsigned char)(S->can[C->id] & can) : can;
  S->seen[C->id] = true;
  S->acc[C->id] = C;
  return true;
}

/* A view of a moved accumulator (T.reshape) becomes a view of the moved one. */
typedef struct views_ctx {
  tc_arena *a;
  tc_buffer **to;
  int n;
} views_ctx;
static bool repoint_views_cb(void *ctx, tc_stmt *s) {
  views_ctx *V = ctx;
  if (s->kind != TC_ST_ALLOC) return true;
  const tc_buffer *b = s->u.alloc.buf;
  if (!b->view_of || b->view_of->id < 0 || b->view_of->id >= V->n || !V->to[b->view_of->id] || b->id < 0 || b->id >= V->n) return true;
  tc_buffer *nv = TC_NEW(V->a, tc_buffer);
  *nv = *b;
  nv->view_of = V->to[b->view_of->id];
  nv->scope = nv->view_of->scope; /* a view shares its buffer's storage, so its scope */
  V->to[b->id] = nv;
  return true;
}

bool tc_metal_accumulator_scope(tc_lowered *lw, tilec_error *err) {
  tc_arena *a = lw->arena;
  tc_kernel_ir *k0 = lw->k;
  scope_ctx S = {.n = k0->next_id, .threads = 1, .all_coop = true};
  if (!tc_metal_arch_parse(lw->desc->arch, &S.msl, &S.metal4)) {
    tc_error(err, TILEC_ERROR_INTERNAL, "metal: the description's arch '%s' is not an MSL version", lw->desc->arch);
    return false;
  }
  for (int i = 0; i < k0->threads_ndim; i++) S.threads *= (int)k0->threads[i];
  /* explicit warp specialization runs on Metal only mapped onto T.Pipelined, over the warp
   * groups that run its gemm (gpu/ws_explicit.c) */
  if (k0->warp_specialized && tc_gpu_ws_consumer_threads(k0)) S.threads = tc_gpu_ws_consumer_threads(k0);
  S.can = TC_NEW_ARRAY(a, unsigned char, S.n);
  S.seen = TC_NEW_ARRAY(a, bool, S.n);
  S.acc = TC_NEW_ARRAY(a, tc_buffer *, S.n);
  tc_visit_stmts(k0->body, find_rs_cb, &S);
  tc_visit_stmts(k0->body, gemm_cb, &S);
  if (S.rs && !S.all_coop) /* A from registers is laid out by an accumulator: all on matmul2d, or none */
    for (int id = 0; id < S.n; id++) S.can[id] &= (unsigned char)~CAN_COOP;
  tc_buffer **to = TC_NEW_ARRAY(a, tc_buffer *, S.n);
  bool any = false;
  for (int id = 0; id < S.n; id++) {
    if (!S.seen[id] || !(S.can[id] & (CAN_COOP | CAN_SG))) continue;
    tc_buffer *nb = TC_NEW(a, tc_buffer);
    *nb = *S.acc[id]; /* same id: the lowering's tables by id stay valid */
    nb->scope = S.can[id] & CAN_COOP ? TC_SCOPE_METAL_COOPERATIVE_TENSOR : TC_SCOPE_METAL_SIMDGROUP;
    to[id] = nb;
    any = true;
  }
  if (!any) return true;
  views_ctx V = {a, to, S.n};
  tc_visit_stmts(k0->body, repoint_views_cb, &V);
  tc_kernel_ir *k = TC_NEW(a, tc_kernel_ir);
  *k = *k0;
  k->body = tc_ir_clone_stmt(a, k0->body);
  tc_replace_buffers(k->body, to, S.n);
  lw->k = k;
  return true;
}
