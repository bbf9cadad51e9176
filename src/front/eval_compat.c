/* eval_compat.c: the compile-time helpers and device queries TileLang's examples call from
 * Python (issue 10), and the diagnostics for constructs that need hardware tilec has no target
 * for. Each helper is looked up by the dotted name the program reaches it by
 * (tilelang.math.next_power_of_2, driver.get_num_sms through `from tilelang.carver.arch import
 * driver`, ...), so an import alias or a from-import finds the same entry.
 *
 * Device queries are answered for tilec's default CUDA target (sm_90, 132 SMs) on every target:
 * the cpu target is the reference the GPU kernels are checked against, so a kernel must take the
 * same code path (the same persistent grid, the same fp8 type) whichever target builds it. */
#include "front/eval_int.h"

#include <string.h>

enum { DEVICE_SM_MAJOR = 9, DEVICE_SM_MINOR = 0, DEVICE_NUM_SMS = 132 };

static int64_t int_arg(tc_ev *ev, tc_args *a, int i, const char *fn) {
  tc_val *v = a->p[i];
  if (v->kind == TV_INT) return v->u.i;
  if (v->kind == TV_BOOL) return v->u.b;
  ev_fail(ev, arg_loc(a, i), "%s expects an int known at compile time, not %s", fn, tv_kind_name(v));
}

/* tilelang.math.next_power_of_2(x) is `1 << (x - 1).bit_length()`, so 0 gives 2 and 1 gives 1. */
static tc_val *c_next_power_of_2(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  int64_t x = int_arg(ev, a, 0, "next_power_of_2"), m = x - 1;
  if (m < 0) m = -m; /* bit_length of a negative number is that of its magnitude */
  int bits = 0;
  while (bits < 63 && (m >> bits) != 0) bits++;
  if (bits >= 62) ev_fail(ev, arg_loc(a, 0), "next_power_of_2(%lld) does not fit in 64 bits", (long long)x);
  return tv_int(ev, (int64_t)1 << bits);
}

static tc_val *c_num_sms(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_int(ev, DEVICE_NUM_SMS);
}

static tc_val *c_capability(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  tc_val **v = EV_NEW_ARRAY(ev, tc_val *, 2);
  v[0] = tv_int(ev, DEVICE_SM_MAJOR);
  v[1] = tv_int(ev, DEVICE_SM_MINOR);
  return tv_tuple(ev, 2, v);
}

static tc_val *c_fp8_type(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_str(ev, "float8_e4m3fn", strlen("float8_e4m3fn")); /* NVIDIA's (AMD's would be e4m3fnuz) */
}

/* The name of the device the queries describe (sm_90, 132 SMs: an H100 SXM). */
static tc_val *c_device_name(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  static const char name[] = "NVIDIA H100 80GB HBM3";
  return tv_str(ev, name, strlen(name));
}

/* torch.cuda.get_device_properties(d): an object whose major, minor, multi_processor_count and
 * name describe the same device (ev_compat_device_property answers them). */
static tc_val *c_device_properties(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_opaque(ev, DEVICE_PROPERTIES_NAME);
}

tc_val *ev_compat_device_property(tc_ev *ev, const char *attr) {
  if (strcmp(attr, "major") == 0) return tv_int(ev, DEVICE_SM_MAJOR);
  if (strcmp(attr, "minor") == 0) return tv_int(ev, DEVICE_SM_MINOR);
  if (strcmp(attr, "multi_processor_count") == 0) return tv_int(ev, DEVICE_NUM_SMS);
  if (strcmp(attr, "name") == 0) return c_device_name(ev, NULL, NULL);
  return NULL;
}

static tc_val *c_true(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_bool(ev, true);
}

/* tvm.DataType(d): TVM's dtype object; tilec's dtype values already answer .bits and .lanes. */
static tc_val *c_data_type(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  tc_dtype dt;
  ev_get_dtype(ev, a->p[0], &dt, arg_loc(a, 0), "tvm.DataType");
  return tv_dtype(ev, dt);
}

/* tilelang.tools.cuda.iket: intra-kernel event timing (a profiler). Its ranges, marks and
 * payloads record timestamps and never change a result, so they are accepted and dropped:
 * iket.range(...) is a context that does nothing (see the 'with' statement). */
static tc_val *c_iket_range(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  tc_val *v = tv_new(ev, TV_OPAQUE);
  v->u.opaque.name = IKET_RANGE_NAME;
  return v;
}

static tc_val *c_none(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self, (void)a;
  return tv_none(ev);
}

/* tvm.target.Target("hip -mcpu=gfx950"): an object that keeps its description, which
 * tilelang.rocm.target.target_is_gfx950 reads (the cdna4 dequantize example asks it). */
#define TARGET_PREFIX "tvm.target.Target:"
static tc_loc first_arg_loc(const tc_args *a) {
  if (a->pnode && a->pnode[0]) return a->pnode[0]->loc;
  return a->call ? a->call->loc : (tc_loc){0};
}

static tc_val *c_target(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  if (a->p[0]->kind != TV_STR) ev_fail(ev, first_arg_loc(a), "tvm.target.Target takes a target string");
  return tv_opaque(ev, tc_arena_printf(&ev->tmp, TARGET_PREFIX "%.*s", (int)a->p[0]->u.str.n, a->p[0]->u.str.s));
}

/* Whether a tvm.target.Target names AMD's gfx950 (-mcpu=gfx950). */
static tc_val *c_target_is_gfx950(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)self;
  const tc_val *t = a->p[0];
  if (t->kind != TV_OPAQUE || strncmp(t->u.opaque.name, TARGET_PREFIX, strlen(TARGET_PREFIX)) != 0)
    ev_fail(ev, first_arg_loc(a), "target_is_gfx950 takes a tvm.target.Target");
  const char *desc = t->u.opaque.name + strlen(TARGET_PREFIX);
  const char *m = strstr(desc, "-mcpu=gfx950");
  return tv_bool(ev, m && (m[12] == 0 || m[12] == ' '));
}

static const tc_builtin compat_builtins[] = {
    {"tvm.target.Target", "target host?", c_target, 0},
    {"tilelang.cuda.intrinsics.make_mma_swizzle_layout", "buffer is_smooth?", ev_t_mma_swizzle_layout, 0},
    {"tilelang.cuda.intrinsics.layout.make_mma_swizzle_layout", "buffer is_smooth?", ev_t_mma_swizzle_layout, 0},
    {"tilelang.rocm.target.target_is_gfx950", "target", c_target_is_gfx950, 0},
    {"tvm.DataType", "dtype", c_data_type, 0},
    {"tilelang.tvm.DataType", "dtype", c_data_type, 0},
    {"tilelang.DataType", "dtype", c_data_type, 0},
    {"torch.cuda.get_device_properties", "device?", c_device_properties, 0},
    {"tilelang.math.next_power_of_2", "x", c_next_power_of_2, 0},
    {"tilelang.next_power_of_2", "x", c_next_power_of_2, 0},
    {"tilelang.carver.arch.driver.get_num_sms", "device_id?", c_num_sms, 0},
    {"tilelang.carver.arch.driver.cuda_driver.get_num_sms", "device_id?", c_num_sms, 0},
    {"torch.cuda.get_device_capability", "device?", c_capability, 0},
    {"tilelang.language.fp8.determine_fp8_type", "fp8_format?", c_fp8_type, 0},
    {"torch.cuda.is_available", "", c_true, 0},
    {"torch.cuda.get_device_name", "device?", c_device_name, 0},
    {"tilelang.tools.cuda.iket.range", "name | payload?", c_iket_range, 0},
    {"tilelang.tools.cuda.iket.mark", "name | payload?", c_none, 0},
    {"tilelang.tools.cuda.iket.payload", "value | dtype?", c_none, 0},
    {NULL, NULL, NULL, 0},
};

const tc_builtin *ev_compat_builtin(const char *dotted) {
  const tc_builtin *b = ev_builtin_find(compat_builtins, dotted, 0);
  return b ? b : ev_tirx_builtin(dotted);
}

static bool table_has_prefix(const tc_builtin *table, const char *prefix, size_t n) {
  for (const tc_builtin *b = table; b->name; b++)
    if (strncmp(b->name, prefix, n) == 0 && b->name[n] == '.') return true;
  return false;
}

/* `tvm.tirx` inside a kernel (a helper's `tvm.tirx.const(...)`) is a path to a builtin, not a
 * use of the opaque module itself. */
bool ev_compat_builtin_prefix(const char *dotted) {
  size_t n = strlen(dotted);
  return table_has_prefix(compat_builtins, dotted, n) || ev_tirx_builtin_prefix(dotted);
}

/* int.bit_length(), a compile-time int method. */
static tc_val *m_bit_length(tc_ev *ev, tc_val *self, tc_args *a) {
  (void)a;
  int64_t x = self->kind == TV_BOOL ? self->u.b : self->u.i;
  uint64_t m = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  int bits = 0;
  while (m) m >>= 1, bits++;
  return tv_int(ev, bits);
}

static const tc_builtin int_methods[] = {
    {"int.bit_length", "", m_bit_length, 0},
    {NULL, NULL, NULL, 0},
};

tc_val *ev_compat_int_method(tc_ev *ev, tc_val *obj, const char *attr) {
  const tc_builtin *b = ev_builtin_find(int_methods, attr, 4);
  return b ? tv_builtin(ev, b, obj) : NULL;
}

/* Constructs of Blackwell (sm_100) GPUs: tensor memory, tcgen05 MMA, thread-block clusters. */
static const char *const blackwell_attrs[] = {"alloc_tmem", "tcgen05_gemm", "ClusterKernel", "tcgen05_mma", "tcgen05_commit",
                                              "tcgen05_ld", "tcgen05_st", "tcgen05_cp", "gemm_tcgen05", "alloc_tmem_barrier",
                                              NULL};

void ev_compat_check_attr(tc_ev *ev, const char *module, const char *attr, tc_loc loc) {
  for (int i = 0; blackwell_attrs[i]; i++)
    if (strcmp(attr, blackwell_attrs[i]) == 0)
      ev_fail(ev, loc,
              "%s.%s needs an sm_100 (Blackwell) target: tensor memory and tcgen05 exist only there, and tilec's "
              "targets (cpu, and cuda up to sm_90) have no meaning for it",
              module, attr);
}
