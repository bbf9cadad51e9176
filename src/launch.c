/* launch.c: checking launch arguments against a kernel's parameters, then running the kernel on
 * its backend or on the reference interpreter. Nothing is written unless every check passes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ir/interp.h"
#include "pass/pass.h"

typedef struct launch_state {
  int device; /* device ordinal shared by the tensors */
  void **data;
  int64_t *scalars;
  double *fscalars;
  int64_t *syms;
  int64_t *offsets, *nbytes;
  int nws;   /* T.alloc_global workspaces (tc_kernel_ir.workspaces): their bytes, and for host */
  int64_t *ws_bytes; /* tensors the memory at data[nparams + w] (device backends allocate their own) */
  void **ws;
} launch_state;

static void launch_state_free(launch_state *s) {
  for (int i = 0; i < s->nws && s->ws; i++) free(s->ws[i]);
  free(s->ws);
  free(s->ws_bytes);
  free(s->data);
  free(s->scalars);
  free(s->fscalars);
  free(s->syms);
  free(s->offsets);
  free(s->nbytes);
}

static const char *device_name(int32_t t) {
  switch (t) {
  case kDLCPU: return "cpu";
  case kDLCUDA: return "cuda";
  case kDLCUDAHost: return "cuda_host";
  case kDLMetal: return "metal";
  default: return "other";
  }
}

/* Does the tensor's dtype match the parameter's? Types DLPack cannot name (fp8, fp4, int4) are
 * passed as unsigned integer tensors of their storage width. */
static bool dtype_matches(const tc_param_meta *m, DLDataType got) {
  DLDataType want = m->info.dl_dtype;
  if (want.code != 255) return got.code == want.code && got.bits == want.bits && got.lanes == want.lanes;
  return got.code == kDLUInt && got.bits == (want.bits < 8 ? 8 : want.bits) && got.lanes == 1;
}

static void dtype_text(DLDataType d, char *buf, size_t cap) {
  tc_dtype t;
  if (tc_dtype_from_dlpack(d.code, d.bits, d.lanes, &t)) tc_dtype_name(t, buf, cap);
  else snprintf(buf, cap, "dlpack(code=%d, bits=%d, lanes=%d)", d.code, d.bits, d.lanes);
}

/* An integer scalar exactly (a double would lose the low bits of large int64 values). */
static int64_t scalar_as_int(tc_dtype dt, const void *p) {
  if (!tc_dtype_is_int(dt) || tc_dtype_bits(dt) < 8) return (int64_t)tc_dtype_load_f64(dt, p, 0);
  switch (tc_dtype_bits(dt)) {
  case 8: return tc_dtype_is_signed(dt) ? *(const int8_t *)p : *(const uint8_t *)p;
  case 16: return tc_dtype_is_signed(dt) ? *(const int16_t *)p : *(const uint16_t *)p;
  case 32: return tc_dtype_is_signed(dt) ? *(const int32_t *)p : (int64_t) * (const uint32_t *)p;
  default: {
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  }
}

typedef struct flop_env flop_env;
static bool eval_int(const tc_kernel_ir *ir, const tc_expr *e, const int64_t *syms, const int64_t *scalars,
                     const flop_env *locals, int64_t *out);

/* T.alloc_global: each workspace's bytes, and on the host (cpu, the reference run, emulators) the
 * zeroed memory for this launch at data[nparams + w]; a device backend allocates its own. */
static bool alloc_workspaces(const tc_kernel_ir *ir, int32_t device, launch_state *st, tilec_error *err) {
  st->ws = calloc((size_t)ir->nworkspaces, sizeof(void *));
  st->ws_bytes = calloc((size_t)ir->nworkspaces, sizeof(int64_t));
  if (!st->ws || !st->ws_bytes) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", ir->name);
    return false;
  }
  st->nws = ir->nworkspaces;
  for (int w = 0; w < ir->nworkspaces; w++) {
    const tc_buffer *b = ir->workspaces[w];
    int64_t numel = 1;
    for (int d = 0; d < b->ndim; d++) {
      int64_t n;
      if (!eval_int(ir, b->shape[d], st->syms, st->scalars, NULL, &n) || n < 0 || (n > 0 && numel > INT64_MAX / 16 / n)) {
        tc_error(err, TILEC_ERROR_USAGE, "kernel '%s': the size of workspace '%s' cannot be computed", ir->name, b->name);
        return false;
      }
      numel *= n;
    }
    int64_t bytes = (numel * tc_dtype_bits(b->dtype) + 7) / 8;
    st->ws_bytes[w] = bytes;
    if (device != kDLCPU) continue;
    st->ws[w] = calloc((size_t)(bytes > 0 ? bytes : 1), 1);
    if (!st->ws[w]) {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory allocating workspace '%s' (%lld bytes) of '%s'", b->name, (long long)bytes,
               ir->name);
      return false;
    }
    st->data[ir->nparams + w] = st->ws[w];
  }
  return true;
}

/* The text of a dimension's expression ("seq_len * heads") for a message; "?" without memory. */
static void expr_text(const tc_expr *e, char *buf, size_t cap) {
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ir_print_expr(&sb, e);
  snprintf(buf, cap, "%s", sb.failed || !sb.data ? "?" : tc_sb_cstr(&sb));
  tc_sb_free(&sb);
}

/* The first symbolic size e reads whose value is unknown (-1), or -1 when none is. */
static int first_unknown_sym(const tc_kernel_ir *ir, const tc_expr *e, const int64_t *sizes) {
  if (e->op == TC_OP_VAR)
    for (int s = 0; s < ir->nsyms; s++)
      if (ir->syms[s] == e->var && sizes[s] < 0) return s;
  for (int a = 0; a < e->nargs; a++) {
    int s = first_unknown_sym(ir, e->args[a], sizes);
    if (s >= 0) return s;
  }
  return -1;
}

/* Binds the one unknown symbolic size a dimension's expression reads so that the expression
 * equals `value`, through +, - and * with operands already known (n * 4, rows + 1): a size
 * that only appears inside such dimensions still binds from a tensor's shape. False when the
 * expression has another form, a second unknown, or no exact nonnegative solution;
 * check_computed_dims then checks the result like any other binding. */
static bool solve_unknown(const tc_kernel_ir *ir, const tc_expr *e, int64_t value, int64_t *syms, const int64_t *scalars) {
  if (e->op == TC_OP_VAR) {
    for (int s = 0; s < ir->nsyms; s++)
      if (ir->syms[s] == e->var && syms[s] < 0 && value >= 0 && value <= INT32_MAX) {
        syms[s] = value;
        return true;
      }
    return false;
  }
  if (e->op == TC_OP_CAST) return solve_unknown(ir, e->args[0], value, syms, scalars);
  if (e->nargs != 2 || (e->op != TC_OP_ADD && e->op != TC_OP_SUB && e->op != TC_OP_MUL)) return false;
  int side = first_unknown_sym(ir, e->args[0], syms) >= 0 ? 0 : 1;
  int64_t known, target;
  if (!eval_int(ir, e->args[1 - side], syms, scalars, NULL, &known)) return false;
  switch (e->op) {
  case TC_OP_ADD: target = value - known; break;
  case TC_OP_SUB: target = side == 0 ? value + known : known - value; break;
  default:
    if (known == 0 || value % known != 0) return false;
    target = value / known;
    break;
  }
  return solve_unknown(ir, e->args[side], target, syms, scalars);
}

/* Sizes no plain dimension gave, from the dimensions computed from them; repeated while one
 * binding lets another dimension solve. */
static void bind_from_computed_dims(const tilec_kernel *k, DLTensor *const *args, launch_state *st) {
  const tc_kernel_ir *ir = k->ir;
  for (bool progress = true; progress;) {
    progress = false;
    for (int i = 0; i < ir->nparams; i++)
      for (int d = 0; d < k->params[i].info.ndim; d++) {
        if (k->params[i].shape[d] >= 0 || k->params[i].sym_of_dim[d] >= 0) continue;
        const tc_expr *e = ir->params[i].buf->shape[d]; /* a tensor: only they have dimensions */
        if (first_unknown_sym(ir, e, st->syms) < 0) continue;
        progress |= solve_unknown(ir, e, args[i]->shape[d], st->syms, st->scalars);
      }
  }
}

/* Every dimension computed from symbolic sizes (seq_len * heads) must equal its value once the
 * plain symbolic dimensions have bound them. */
static bool check_computed_dims(const tilec_kernel *k, DLTensor *const *args, const launch_state *st, tilec_error *err) {
  const tc_kernel_ir *ir = k->ir;
  for (int i = 0; i < ir->nparams; i++) {
    const tc_param_meta *m = &k->params[i];
    for (int d = 0; d < m->info.ndim; d++) {
      if (m->shape[d] >= 0 || m->sym_of_dim[d] >= 0) continue;
      const tc_expr *e = ir->params[i].buf->shape[d];
      char text[256];
      int64_t want;
      if (!eval_int(ir, e, st->syms, st->scalars, NULL, &want)) {
        expr_text(e, text, sizeof text);
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s': dimension %d (%s) cannot be computed from the symbolic sizes",
                 m->info.name, d, text);
        return false;
      }
      if (args[i]->shape[d] != want) {
        expr_text(e, text, sizeof text);
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has size %" PRId64 " in dimension %d, expected %s = %" PRId64,
                 m->info.name, args[i]->shape[d], d, text, want);
        return false;
      }
      if (want > INT32_MAX) { /* as for a plain symbolic dimension: kernels index with int32 */
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s': dimension %d is too large for an int32 index", m->info.name, d);
        return false;
      }
    }
  }
  return true;
}

/* No 64-bit platform tilec runs on gives user memory above 2^56 (x86-64 with 5-level paging; arm64
 * stops at 2^52, and CUDA's unified addresses lie in the same range), so a tensor reaching past it
 * came from a wrong byte_offset and would fault inside the kernel. */
#define TC_ADDRESS_LIMIT (UINTPTR_MAX > (UINT64_C(1) << 56) ? (UINT64_C(1) << 56) : (uint64_t)UINTPTR_MAX)

/* DLPack's byte_offset moves the first element within the allocation `data` points to. An offset
 * that splits an element would read every value from the wrong bytes, and one that moves the
 * tensor off the address space would fault in the generated code: both are usage errors here.
 * A Metal tensor's data is its buffer object, so only the offset and size are checked. */
static bool check_byte_offset(const char *pn, const DLTensor *t, int64_t numel, bool data_is_handle, tilec_error *err) {
  uint64_t off = t->byte_offset, bits = (uint64_t)t->dtype.bits * (t->dtype.lanes ? t->dtype.lanes : 1);
  uint64_t elem_bytes = bits >= 8 ? bits / 8 : 1; /* sub-byte types are packed into bytes */
  if (off % elem_bytes != 0) {
    tc_error(err, TILEC_ERROR_USAGE,
             "argument '%s': byte_offset %" PRIu64 " is not a multiple of its element size (%" PRIu64
             " bytes), so every element would be read from the wrong bytes",
             pn, off, elem_bytes);
    return false;
  }
  uint64_t limit = TC_ADDRESS_LIMIT, nbytes = 0;
  bool fits = bits == 0 || (uint64_t)numel <= (limit - 7) / bits;
  if (fits) nbytes = ((uint64_t)numel * bits + 7) / 8;
  uint64_t base = data_is_handle || !t->data ? 0 : (uint64_t)(uintptr_t)t->data;
  fits = fits && off <= limit && nbytes <= limit - off && base <= limit - off - nbytes;
  if (!fits) {
    tc_error(err, TILEC_ERROR_USAGE,
             "argument '%s': byte_offset %" PRIu64 " puts its %" PRId64
             " elements past the end of the address space (byte_offset is the distance in bytes from data to the first "
             "element)",
             pn, off, numel);
    return false;
  }
  return true;
}

static tilec_status check_args(tilec_kernel *k, DLTensor *const *args, size_t nargs, int32_t device,
                               launch_state *st, tilec_error *err) {
  tc_kernel_ir *ir = k->ir;
  memset(st, 0, sizeof *st);
  if (nargs != (size_t)ir->nparams) {
    tc_error(err, TILEC_ERROR_USAGE, "kernel '%s' takes %d arguments, %zu given", ir->name, ir->nparams, nargs);
    return TILEC_ERROR_USAGE;
  }
  size_t np = (size_t)(ir->nparams > 0 ? ir->nparams : 1), ns = (size_t)(ir->nsyms > 0 ? ir->nsyms : 1);
  st->data = calloc(np + (size_t)ir->nworkspaces, sizeof(void *));
  st->scalars = calloc(np, sizeof(int64_t));
  st->fscalars = calloc(np, sizeof(double));
  st->syms = malloc(ns * sizeof(int64_t));
  st->offsets = calloc(np, sizeof(int64_t));
  st->nbytes = calloc(np, sizeof(int64_t));
  if (!st->data || !st->scalars || !st->fscalars || !st->syms || !st->offsets || !st->nbytes) {
    launch_state_free(st);
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory launching '%s'", ir->name);
    return TILEC_ERROR_NOMEM;
  }
  for (size_t s = 0; s < ns; s++) st->syms[s] = -1;
  bool seen_device = false;
  for (int i = 0; i < ir->nparams; i++) {
    const tc_param_meta *m = &k->params[i];
    const DLTensor *t = args ? args[i] : NULL;
    const char *pn = m->info.name;
    if (!t) {
      tc_error(err, TILEC_ERROR_USAGE, "argument %d ('%s') is NULL", i, pn);
      goto bad;
    }
    /* Tensors live on the kernel's device; a scalar is a 0-d tensor whose value is read on
     * the host (and passed by value), so it is host memory for every kernel. */
    bool scalar = ir->params[i].var != NULL;
    int32_t want = scalar ? kDLCPU : device, got_dev = (int32_t)t->device.device_type;
    bool host_ok = scalar && got_dev == kDLCUDAHost;
    if (got_dev != want && !host_ok) {
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s' is %s on device '%s', but kernel '%s' %s '%s'%s", pn,
               scalar ? "a scalar" : "a tensor", device_name(got_dev), ir->name,
               scalar ? "reads scalars on" : "runs on", device_name(want),
               scalar ? "" : want == kDLCUDA ? " (tilec copies nothing: pass device memory)" : " (tilec copies nothing: pass host memory)");
      goto bad;
    }
    if (!scalar && device != kDLCPU) {
      if (seen_device && t->device.device_id != st->device) {
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s' is on %s device %d, but an earlier argument is on device %d", pn,
                 device_name(device), t->device.device_id, st->device);
        goto bad;
      }
      st->device = t->device.device_id;
      seen_device = true;
    }
    if (!dtype_matches(m, t->dtype)) {
      char got[64];
      dtype_text(t->dtype, got, sizeof got);
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has dtype %s, expected %s", pn, got, m->info.dtype);
      goto bad;
    }
    if (t->ndim != m->info.ndim) {
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has %d dimensions, expected %d", pn, t->ndim, m->info.ndim);
      goto bad;
    }
    if (t->ndim > 0 && !t->shape) {
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has %d dimensions but its shape is NULL", pn, t->ndim);
      goto bad;
    }
    int64_t numel = 1, stride = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
      int64_t got = t->shape[d];
      if (got < 0) {
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has a negative size in dimension %d", pn, d);
        goto bad;
      }
      if (m->shape[d] >= 0 && got != m->shape[d]) {
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has size %" PRId64 " in dimension %d, expected %" PRId64, pn,
                 got, d, m->shape[d]);
        goto bad;
      }
      int s = m->sym_of_dim[d]; /* a dimension computed from symbolic sizes is checked below, once they are bound */
      if (s >= 0) {
        if (st->syms[s] >= 0 && st->syms[s] != got) {
          tc_error(err, TILEC_ERROR_USAGE,
                   "argument '%s' has size %" PRId64 " in dimension %d, but '%s' is %" PRId64 " from an earlier argument",
                   pn, got, d, ir->syms[s]->name, st->syms[s]);
          goto bad;
        }
        if (got > INT32_MAX) {
          tc_error(err, TILEC_ERROR_USAGE, "argument '%s': dimension %d is too large for an int32 index", pn, d);
          goto bad;
        }
        st->syms[s] = got;
      }
      if (t->strides && t->shape[d] > 1 && t->strides[d] != stride) {
        tc_error(err, TILEC_ERROR_USAGE, "argument '%s' is not contiguous (row-major) in dimension %d", pn, d);
        goto bad;
      }
      stride *= got;
      numel *= got;
    }
    if (!t->data && numel > 0) {
      tc_error(err, TILEC_ERROR_USAGE, "argument '%s' has no data", pn);
      goto bad;
    }
    if (!check_byte_offset(pn, t, numel, device == kDLMetal && !scalar, err)) goto bad;
    void *p = t->data ? (char *)t->data + t->byte_offset : NULL;
    st->data[i] = p;
    if (!scalar && device == kDLMetal) { /* kDLMetal: data is the id<MTLBuffer>, the offset apart */
      int bits = tc_dtype_bits(ir->params[i].buf->dtype);
      st->data[i] = t->data;
      st->offsets[i] = (int64_t)t->byte_offset;
      st->nbytes[i] = (numel * bits + 7) / 8; /* 4-bit types packed two per byte */
    }
    if (ir->params[i].var) { /* scalar parameter: a 0-d tensor holding the value */
      tc_dtype dt = ir->params[i].var->dtype;
      st->fscalars[i] = tc_dtype_load_f64(dt, p, 0);
      st->scalars[i] = scalar_as_int(dt, p);
      st->data[i] = NULL;
    }
  }
  bind_from_computed_dims(k, args, st);
  for (int s = 0; s < ir->nsyms; s++)
    if (st->syms[s] < 0) {
      tc_error(err, TILEC_ERROR_USAGE, "symbolic dimension '%s' is not the size of any tensor argument", ir->syms[s]->name);
      goto bad;
    }
  if (!check_computed_dims(k, args, st, err)) goto bad;
  if (ir->nworkspaces > 0 && !alloc_workspaces(ir, device, st, err)) goto bad;
  return TILEC_OK;
bad:
  launch_state_free(st);
  return TILEC_ERROR_USAGE;
}

static int32_t target_device(const tilec_kernel *k) {
  if (k->backend->flags & TC_BACKEND_HOST_TENSORS) return kDLCPU;
  if (strcmp(k->backend->target, "cuda") == 0) return kDLCUDA;
  if (strcmp(k->backend->target, "metal") == 0) return kDLMetal;
  return kDLCPU;
}


static tilec_status launch(tilec_kernel *k, DLTensor *const *args, size_t nargs, void *stream, bool async,
                           const char *fn, tilec_error *err) {
  if (!k) {
    tc_error(err, TILEC_ERROR_USAGE, "%s: kernel is NULL", fn);
    return TILEC_ERROR_USAGE;
  }
  int32_t device = target_device(k);
  if (stream && device != kDLCUDA && device != kDLMetal) {
    tc_error(err, TILEC_ERROR_USAGE, "%s: kernel '%s' runs on '%s', which has no streams", fn, k->ir->name,
             k->backend->target);
    return TILEC_ERROR_USAGE;
  }
  launch_state st;
  tilec_status rc = check_args(k, args, nargs, device, &st, err);
  if (rc != TILEC_OK) return rc;
  tc_launch_args la = {st.data, st.scalars, st.fscalars, st.syms, k->ir->nparams, k->ir->nsyms,
                       st.device, stream, async, {1, 1, 1}, true, st.offsets, st.nbytes, st.nws, st.ws_bytes};
  for (int i = 0; i < k->ir->grid_ndim && la.grid_known; i++)
    la.grid_known = eval_int(k->ir, k->ir->grid[i], st.syms, st.scalars, NULL, &la.grid[i]);
  rc = k->backend->launch(&k->env, k->module->mod, &la, err);
  launch_state_free(&st);
  return rc;
}

tilec_status tilec_kernel_launch(tilec_kernel *k, DLTensor *const *args, size_t nargs, tilec_error *err) {
  return launch(k, args, nargs, NULL, false, "tilec_kernel_launch", err);
}

tilec_status tilec_kernel_launch_stream(tilec_kernel *k, DLTensor *const *args, size_t nargs, void *cu_stream,
                                        tilec_error *err) {
  return launch(k, args, nargs, cu_stream, true, "tilec_kernel_launch_stream", err);
}

tilec_status tilec_kernel_synchronize(tilec_kernel *k, void *stream, tilec_error *err) {
  if (!k) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_kernel_synchronize: kernel is NULL");
    return TILEC_ERROR_USAGE;
  }
  if (!k->backend->synchronize) {
    if (stream) {
      tc_error(err, TILEC_ERROR_USAGE, "tilec_kernel_synchronize: backend %s/%s has no streams", k->backend->target,
               k->backend->name);
      return TILEC_ERROR_USAGE;
    }
    return TILEC_OK; /* its launches are finished when they return */
  }
  return k->backend->synchronize(&k->env, stream, err);
}

tilec_status tc_kernel_run_reference_within(tilec_kernel *k, DLTensor *const *args, size_t nargs, double seconds,
                                            tilec_error *err) {
  if (!k) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_kernel_run_reference: kernel is NULL");
    return TILEC_ERROR_USAGE;
  }
  launch_state st;
  tilec_status rc = check_args(k, args, nargs, kDLCPU, &st, err);
  if (rc != TILEC_OK) return rc;
  tc_interp_budget budget = {0, seconds > 0 ? seconds : 0};
  rc = tc_interp_run_budget(k->ir, st.data, st.scalars, st.fscalars, st.syms, &budget, err);
  launch_state_free(&st);
  return rc;
}

tilec_status tilec_kernel_run_reference(tilec_kernel *k, DLTensor *const *args, size_t nargs, tilec_error *err) {
  return tc_kernel_run_reference_within(k, args, nargs, 0, err);
}

/* ---- parameter shapes from symbolic sizes, before any tensor exists ---- */

tilec_status tilec_kernel_param_shape(const tilec_kernel *k, size_t param, const int64_t *sizes, size_t nsizes,
                                      int64_t *shape, int *missing, tilec_error *err) {
  if (missing) *missing = -1;
  if (!k || !shape || (nsizes > 0 && !sizes)) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_kernel_param_shape: kernel, shape or sizes is NULL");
    return TILEC_ERROR_USAGE;
  }
  const tc_kernel_ir *ir = k->ir;
  if (param >= (size_t)ir->nparams || nsizes != (size_t)ir->nsyms) {
    tc_error(err, TILEC_ERROR_USAGE,
             "tilec_kernel_param_shape: kernel '%s' has %d parameters and %d symbolic sizes; asked for parameter %zu with %zu sizes",
             ir->name, ir->nparams, ir->nsyms, param, nsizes);
    return TILEC_ERROR_USAGE;
  }
  const tc_param_meta *m = &k->params[param];
  for (int d = 0; d < m->info.ndim; d++) {
    if (m->shape[d] >= 0) {
      shape[d] = m->shape[d];
      continue;
    }
    const tc_expr *e = ir->params[param].buf->shape[d];
    char text[256];
    int unknown = first_unknown_sym(ir, e, sizes);
    if (unknown >= 0) {
      if (missing) *missing = unknown;
      expr_text(e, text, sizeof text);
      tc_error(err, TILEC_ERROR_USAGE, "dimension %d of '%s' (%s) needs the symbolic size '%s', which has no value", d,
               m->info.name, text, ir->syms[unknown]->name);
      return TILEC_ERROR_USAGE;
    }
    /* No scalar values exist before a launch, so a dimension that reads one cannot be sized. */
    bool computed = eval_int(ir, e, sizes, NULL, NULL, &shape[d]);
    if (!computed || shape[d] < 0) {
      expr_text(e, text, sizeof text);
      tc_error(err, TILEC_ERROR_USAGE, "dimension %d of '%s' (%s) %s", d, m->info.name, text,
               computed ? "is negative for these sizes" : "cannot be computed from the symbolic sizes alone");
      return TILEC_ERROR_USAGE;
    }
  }
  return TILEC_OK;
}

tilec_status tilec_kernel_check_sizes(const tilec_kernel *k, const int64_t *sizes, size_t nsizes, tilec_error *err) {
  if (!k || (nsizes > 0 && !sizes) || nsizes != (size_t)k->ir->nsyms) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_kernel_check_sizes: kernel or sizes is NULL, or the count of sizes differs from the kernel's");
    return TILEC_ERROR_USAGE;
  }
  const tc_kernel_ir *ir = k->ir;
  int64_t grid[3] = {1, 1, 1};
  for (int i = 0; i < ir->grid_ndim; i++)
    if (first_unknown_sym(ir, ir->grid[i], sizes) >= 0 || !eval_int(ir, ir->grid[i], sizes, NULL, NULL, &grid[i]))
      return TILEC_OK; /* only the launch knows it */
  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0) return TILEC_OK; /* an empty grid runs nothing */
  tilec_error why = {0};
  if (!k->backend->check_grid || !k->module || !k->module->mod || k->backend->check_grid(k->module->mod, grid, &why) == TILEC_OK) return TILEC_OK;
  tc_error(err, why.status, "kernel '%s': %.900s", ir->name, why.message);
  return why.status;
}

/* ---- operation counts, for GFLOP/s and GB/s ---- */

/* Counting GEMM work (below) also binds the block indices, loop variables and scalar LETs of one
 * block: a causal flash attention's loop bound depends on the block index. */
enum { FLOP_ENV_MAX = 64, FLOP_LOOP_MAX = 4096, FLOP_BLOCKS_MAX = 2048 };
struct flop_env {
  int n;
  const tc_var *var[FLOP_ENV_MAX];
  int64_t val[FLOP_ENV_MAX];
};

static void env_set(flop_env *env, const tc_var *v, int64_t x) {
  for (int i = env->n - 1; i >= 0; i--)
    if (env->var[i] == v) {
      env->val[i] = x;
      return;
    }
  if (env->n < FLOP_ENV_MAX) {
    env->var[env->n] = v;
    env->val[env->n++] = x;
  }
}

/* Evaluate an integer expression of constants, symbolic dims, (when `scalars` is given) scalar
 * parameters and (when `locals` is given) bound variables; false if it involves more or divides
 * by zero. */
static bool eval_int(const tc_kernel_ir *ir, const tc_expr *e, const int64_t *syms, const int64_t *scalars,
                     const flop_env *locals, int64_t *out) {
  int64_t a, b, c;
  switch (e->op) {
  case TC_OP_CONST_INT: *out = e->ival; return true;
  case TC_OP_VAR:
    for (int s = 0; s < ir->nsyms; s++)
      if (ir->syms[s] == e->var) {
        *out = syms[s];
        return true;
      }
    for (int i = 0; scalars && i < ir->nparams; i++)
      if (ir->params[i].var == e->var && tc_dtype_is_int(e->var->dtype)) {
        *out = scalars[i];
        return true;
      }
    for (int i = locals ? locals->n - 1 : -1; i >= 0; i--)
      if (locals->var[i] == e->var) {
        *out = locals->val[i];
        return true;
      }
    return false;
  case TC_OP_CAST: return tc_dtype_is_int(e->dtype) && eval_int(ir, e->args[0], syms, scalars, locals, out);
  case TC_OP_NEG:
    if (!eval_int(ir, e->args[0], syms, scalars, locals, &a)) return false;
    *out = -a;
    return true;
  case TC_OP_SELECT:
    if (!eval_int(ir, e->args[0], syms, scalars, locals, &c) || !eval_int(ir, e->args[1], syms, scalars, locals, &a) ||
        !eval_int(ir, e->args[2], syms, scalars, locals, &b))
      return false;
    *out = c ? a : b;
    return true;
  default: break;
  }
  if (e->nargs != 2 || !eval_int(ir, e->args[0], syms, scalars, locals, &a) ||
      !eval_int(ir, e->args[1], syms, scalars, locals, &b) || !tc_fold_int(e->op, a, b, out))
    return false;
  *out = tc_wrap_int(*out, e->dtype);
  return true;
}

typedef struct flop_ctx {
  const tc_kernel_ir *ir;
  const int64_t *syms;
  flop_env env;
} flop_ctx;

static bool eval_local(const flop_ctx *fc, const tc_expr *e, int64_t *out) {
  return eval_int(fc->ir, e, fc->syms, NULL, &fc->env, out);
}

/* GEMM flops of a statement tree for one block, loops run (or, when long, multiplied out). */
static double stmt_flops(flop_ctx *fc, const tc_stmt *s) {
  if (!s) return 0;
  switch (s->kind) {
  case TC_ST_SEQ: {
    double f = 0;
    for (int i = 0; i < s->u.seq.n; i++) f += stmt_flops(fc, s->u.seq.items[i]);
    return f;
  }
  case TC_ST_LET:
  case TC_ST_ASSIGN: {
    int64_t x;
    if (tc_dtype_is_int(s->u.let.value->dtype) && eval_local(fc, s->u.let.value, &x)) env_set(&fc->env, s->u.let.var, x);
    return 0;
  }
  case TC_ST_FOR: {
    int64_t lo, n;
    if (!eval_local(fc, s->u.loop.min, &lo) || !eval_local(fc, s->u.loop.extent, &n) || n <= 0) return 0;
    if (n > FLOP_LOOP_MAX) {
      env_set(&fc->env, s->u.loop.var, lo);
      return stmt_flops(fc, s->u.loop.body) * (double)n;
    }
    double f = 0;
    for (int64_t i = 0; i < n; i++) {
      env_set(&fc->env, s->u.loop.var, lo + i);
      f += stmt_flops(fc, s->u.loop.body);
    }
    return f;
  }
  case TC_ST_IF: {
    int64_t c;
    if (eval_local(fc, s->u.if_.cond, &c)) return stmt_flops(fc, c ? s->u.if_.then_s : s->u.if_.else_s);
    return stmt_flops(fc, s->u.if_.then_s);
  }
  case TC_ST_GEMM: {
    int64_t sa[4], sc[4];
    int na = tc_region_squeezed(&s->u.gemm.a, sa, 4), nc = tc_region_squeezed(&s->u.gemm.c, sc, 4);
    if (na != 2 || nc != 2) return 0;
    int64_t kdim = s->u.gemm.trans_a ? sa[0] : sa[1];
    return 2.0 * (double)sc[0] * (double)sc[1] * (double)kdim;
  }
  default: return 0;
  }
}

static bool syms_from_args(const tilec_kernel *k, DLTensor *const *args, size_t nargs, int64_t *syms) {
  const tc_kernel_ir *ir = k->ir;
  for (int s = 0; s < ir->nsyms; s++) syms[s] = -1;
  if (nargs != (size_t)ir->nparams) return false;
  for (int i = 0; i < ir->nparams; i++) {
    if (!args[i] || args[i]->ndim != k->params[i].info.ndim || (args[i]->ndim > 0 && !args[i]->shape)) return false;
    for (int d = 0; d < args[i]->ndim; d++)
      if (k->params[i].sym_of_dim[d] >= 0) syms[k->params[i].sym_of_dim[d]] = args[i]->shape[d];
  }
  for (int s = 0; s < ir->nsyms; s++)
    if (syms[s] < 0) return false;
  return true;
}

double tilec_kernel_flops(const tilec_kernel *k, DLTensor *const *args, size_t nargs) {
  if (!k) return 0;
  int64_t syms[64];
  const tc_kernel_ir *ir = k->ir;
  if (ir->nsyms > 64 || !syms_from_args(k, args, nargs, syms)) return 0;
  flop_ctx fc = {ir, syms, {0, {0}, {0}}};
  int64_t g[3] = {1, 1, 1};
  for (int i = 0; i < ir->grid_ndim; i++)
    if (!eval_local(&fc, ir->grid[i], &g[i]) || g[i] <= 0) return 0;
  /* Every block when there are few; otherwise evenly spaced blocks, scaled to the grid. */
  double blocks = (double)g[0] * (double)g[1] * (double)g[2], f = 0;
  int64_t total = g[0] * g[1] * g[2], step = total > FLOP_BLOCKS_MAX ? total / FLOP_BLOCKS_MAX : 1, counted = 0;
  for (int64_t b = 0; b < total; b += step, counted++) {
    fc.env.n = 0;
    int64_t idx[3] = {b % g[0], (b / g[0]) % g[1], b / (g[0] * g[1])};
    for (int a = 0; a < 3; a++)
      if (ir->block_idx[a]) env_set(&fc.env, ir->block_idx[a], idx[a]);
    f += stmt_flops(&fc, ir->body);
  }
  return counted ? f * blocks / (double)counted : 0;
}

double tilec_kernel_bytes(const tilec_kernel *k, DLTensor *const *args, size_t nargs) {
  if (!k || nargs != (size_t)k->ir->nparams) return 0;
  double bytes = 0;
  for (size_t i = 0; i < nargs; i++) {
    if (!args[i] || !k->ir->params[i].buf || (args[i]->ndim > 0 && !args[i]->shape)) continue;
    size_t n = 1;
    for (int d = 0; d < args[i]->ndim; d++) n *= (size_t)args[i]->shape[d];
    bytes += (double)tc_dtype_storage_bytes(k->ir->params[i].buf->dtype, n);
  }
  return bytes;
}
