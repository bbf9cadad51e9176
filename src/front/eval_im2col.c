/* eval_im2col.c: T.im2col (and its older name T.c2d_im2col), the im2col tile of a 2-D
 * convolution. img is an NHWC tensor; the destination tile (block_m, block_k) receives rows
 * m = nhw_step * block_m + i of the im2col matrix (an output pixel n, oh, ow) and columns
 * k = c_step * block_k + j (a kernel tap kh, kw and channel c, in that order), zero where the
 * tap falls in the padding. It becomes the element loop TileLang's own SIMT lowering makes (a
 * T.Parallel nest over the tile), so every target runs it as it runs T.Parallel. */
#include "front/eval_int.h"

static tc_val *op2(tc_ev *ev, int op, tc_val *x, tc_val *y, tc_loc loc) { return ev_binop(ev, op, x, y, loc); }
static tc_val *num(tc_ev *ev, int64_t v) { return tv_int(ev, v); }

tc_val *ev_t_im2col(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_loc loc = a->call ? a->call->loc : arg_loc(a, 0);
  if (!ev->cur) ev_emit(ev, NULL, loc, "T.im2col"); /* fails: outside a kernel */
  if (a->p[0]->kind != TV_BUFFER || a->p[0]->u.buf->ndim != 4 || a->p[0]->u.buf->scope != TC_SCOPE_GLOBAL)
    ev_fail(ev, arg_loc(a, 0), "T.im2col needs the image as a 4-D (N, H, W, C) tensor");
  tc_buffer *img = a->p[0]->u.buf;
  tc_region dst = ev_region(ev, a->p[1], NULL, a->pnode[1], arg_loc(a, 1), "T.im2col");
  if (dst.ndim < 2) ev_fail(ev, arg_loc(a, 1), "T.im2col needs a destination tile of at least 2 dimensions");
  if (!tc_dtype_eq(dst.buf->dtype, img->dtype)) {
    char b1[32], b2[32];
    ev_fail(ev, arg_loc(a, 1), "T.im2col: the tile is %s, the image %s; they must have the same dtype",
            tc_dtype_name(dst.buf->dtype, b1, sizeof b1), tc_dtype_name(img->dtype, b2, sizeof b2));
  }
  int64_t kernel = ev_need_int(ev, a->p[4], a->pnode[4], arg_loc(a, 4), "the kernel size of T.im2col");
  int64_t stride = ev_need_int(ev, a->p[5], a->pnode[5], arg_loc(a, 5), "the stride of T.im2col");
  int64_t dilation = ev_need_int(ev, a->p[6], a->pnode[6], arg_loc(a, 6), "the dilation of T.im2col");
  int64_t pad = ev_need_int(ev, a->p[7], a->pnode[7], arg_loc(a, 7), "the padding of T.im2col");
  if (kernel < 1 || stride < 1 || dilation < 1 || pad < 0)
    ev_fail(ev, loc, "T.im2col needs kernel, stride and dilation of at least 1 and a padding of at least 0");
  int64_t block_m = dst.r[dst.ndim - 2].extent, block_k = dst.r[dst.ndim - 1].extent;

  tc_val *dim[4];
  for (int d = 0; d < 4; d++) {
    int64_t c;
    dim[d] = tc_expr_const_int(img->shape[d], &c) ? num(ev, c) : tv_expr(ev, ev_cast(ev, img->shape[d], tc_index_dtype(), loc));
  }
  tc_val *H = dim[1], *W = dim[2], *C = dim[3];
  /* out = (size + 2 * pad - (kernel - 1) * dilation - 1) // stride + 1 */
  int64_t reach = 2 * pad - (kernel - 1) * dilation - 1;
  tc_val *out_h = op2(ev, TC_P_PLUS, op2(ev, TC_P_DSLASH, op2(ev, TC_P_PLUS, H, num(ev, reach), loc), num(ev, stride), loc), num(ev, 1), loc);
  tc_val *out_w = op2(ev, TC_P_PLUS, op2(ev, TC_P_DSLASH, op2(ev, TC_P_PLUS, W, num(ev, reach), loc), num(ev, stride), loc), num(ev, 1), loc);
  tc_val *out_hw = op2(ev, TC_P_STAR, out_h, out_w, loc);

  tc_var *vi = tc_ir_new_var(ev->ir, ev->k, "i", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_var *vj = tc_ir_new_var(ev->ir, ev->k, "j", tc_index_dtype(), TC_VAR_LOOP, loc);
  tc_val *i = tv_expr(ev, tc_ir_var_ref(ev->ir, vi, loc)), *j = tv_expr(ev, tc_ir_var_ref(ev->ir, vj, loc));
  tc_val *m = op2(ev, TC_P_PLUS, op2(ev, TC_P_STAR, a->p[2], num(ev, block_m), loc), i, loc);
  tc_val *k = op2(ev, TC_P_PLUS, op2(ev, TC_P_STAR, a->p[3], num(ev, block_k), loc), j, loc);
  tc_val *h = op2(ev, TC_P_MINUS,
                  op2(ev, TC_P_PLUS, op2(ev, TC_P_STAR, op2(ev, TC_P_DSLASH, op2(ev, TC_P_PERCENT, m, out_hw, loc), out_w, loc), num(ev, stride), loc),
                      op2(ev, TC_P_STAR, op2(ev, TC_P_DSLASH, k, op2(ev, TC_P_STAR, num(ev, kernel), C, loc), loc), num(ev, dilation), loc), loc),
                  num(ev, pad), loc);
  tc_val *w = op2(ev, TC_P_MINUS,
                  op2(ev, TC_P_PLUS, op2(ev, TC_P_STAR, op2(ev, TC_P_PERCENT, m, out_w, loc), num(ev, stride), loc),
                      op2(ev, TC_P_STAR, op2(ev, TC_P_PERCENT, op2(ev, TC_P_DSLASH, k, C, loc), num(ev, kernel), loc), num(ev, dilation), loc), loc),
                  num(ev, pad), loc);
  tc_expr *in_h = tc_ir_binary(ev->ir, TC_OP_AND, ev_to_bool_expr(ev, ev_compare(ev, TC_CMP_GE, h, num(ev, 0), loc), loc),
                               ev_to_bool_expr(ev, ev_compare(ev, TC_CMP_LT, h, H, loc), loc), loc);
  tc_expr *in_w = tc_ir_binary(ev->ir, TC_OP_AND, ev_to_bool_expr(ev, ev_compare(ev, TC_CMP_GE, w, num(ev, 0), loc), loc),
                               ev_to_bool_expr(ev, ev_compare(ev, TC_CMP_LT, w, W, loc), loc), loc);
  tc_expr *idx[4] = {ev_index_expr(ev, op2(ev, TC_P_DSLASH, m, out_hw, loc), loc), ev_index_expr(ev, h, loc), ev_index_expr(ev, w, loc),
                     ev_index_expr(ev, op2(ev, TC_P_PERCENT, k, C, loc), loc)};
  tc_expr *load = tc_ir_load(ev->ir, img, 4, idx, loc);
  tc_expr *value = tc_ir_select(ev->ir, tc_ir_binary(ev->ir, TC_OP_AND, in_h, in_w, loc), load, ev_cast(ev, tc_ir_int(ev->ir, 0, tc_index_dtype(), loc), img->dtype, loc), loc);

  tc_expr **didx = TC_NEW_ARRAY(ev->ir, tc_expr *, dst.ndim);
  for (int d = 0; d < dst.ndim; d++) {
    didx[d] = dst.r[d].start;
    if (d == dst.ndim - 2) didx[d] = tc_ir_binary(ev->ir, TC_OP_ADD, dst.r[d].start, i->u.e, loc);
    if (d == dst.ndim - 1) didx[d] = tc_ir_binary(ev->ir, TC_OP_ADD, dst.r[d].start, j->u.e, loc);
  }
  tc_stmt *store = tc_ir_stmt(ev->ir, TC_ST_STORE, loc);
  store->u.store.buf = dst.buf;
  store->u.store.nidx = dst.ndim;
  store->u.store.idx = didx;
  store->u.store.value = value;
  tc_stmt *inner = tc_ir_stmt(ev->ir, TC_ST_FOR, loc);
  inner->u.loop.var = vj;
  inner->u.loop.kind = TC_LOOP_PARALLEL;
  inner->u.loop.min = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
  inner->u.loop.extent = tc_ir_int(ev->ir, block_k, tc_index_dtype(), loc);
  inner->u.loop.body = store;
  tc_stmt *outer = tc_ir_stmt(ev->ir, TC_ST_FOR, loc);
  outer->u.loop.var = vi;
  outer->u.loop.kind = TC_LOOP_PARALLEL;
  outer->u.loop.min = tc_ir_int(ev->ir, 0, tc_index_dtype(), loc);
  outer->u.loop.extent = tc_ir_int(ev->ir, block_m, tc_index_dtype(), loc);
  outer->u.loop.body = inner;
  ev_emit(ev, outer, loc, "T.im2col");
  return tv_none(ev);
}
