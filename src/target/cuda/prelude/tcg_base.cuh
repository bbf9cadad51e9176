/* tcg_base.cuh: tilec's CUDA device prelude, part 1: dtype tags, the shared-memory swizzle,
 * barriers, warp reductions, cp.async, vector loads and stores, atomics.
 * It follows the dtype prelude (tc_dtype_c_prelude()), whose conversions it uses, and needs no
 * header: NVRTC compiles it with no include path. API and layouts: docs/cuda-prelude.md. */
#ifndef TCG_CUDA_PRELUDE
#define TCG_CUDA_PRELUDE 1
#ifndef TCG_DTYPE_PRELUDE
#error "the tilec dtype prelude must come first"
#endif

#define TCG_DEV __device__ __forceinline__
/* static member functions; TCG_HDEV: the tags' conversions, usable on the host too (checkers) */
#define TCG_SDEV static __device__ __forceinline__
#define TCG_HDEV static __host__ __device__ __forceinline__

/* ---- dtype tags: T is the element as the cpu stores it, C the type arithmetic runs in ---- */
enum { TCG_KIND_FLOAT = 0, TCG_KIND_SINT = 1, TCG_KIND_UINT = 2 };

#define TCG_NARROW_TAG(tag, name, store_t)                                         \
  struct tag {                                                                     \
    typedef store_t T;                                                             \
    typedef float C;                                                               \
    enum { BYTES = sizeof(store_t), KIND = TCG_KIND_FLOAT };                       \
    TCG_HDEV float to_c(T v) { return tcg_##name##_to_f32(v); }                    \
    TCG_HDEV T from_c(float v) { return tcg_f32_to_##name(v); }                    \
    TCG_HDEV float round(float v) { return tcg_##name##_to_f32(tcg_f32_to_##name(v)); } \
  };
TCG_NARROW_TAG(tcg_f16, float16, uint16_t)
TCG_NARROW_TAG(tcg_bf16, bfloat16, uint16_t)
TCG_NARROW_TAG(tcg_e4m3, float8_e4m3fn, uint8_t)
TCG_NARROW_TAG(tcg_e5m2, float8_e5m2, uint8_t)
TCG_NARROW_TAG(tcg_e4m3fnuz, float8_e4m3fnuz, uint8_t)
TCG_NARROW_TAG(tcg_e5m2fnuz, float8_e5m2fnuz, uint8_t)
TCG_NARROW_TAG(tcg_e8m0, float8_e8m0fnu, uint8_t)
#undef TCG_NARROW_TAG

#define TCG_PLAIN_TAG(tag, store_t, compute_t, kind)                               \
  struct tag {                                                                     \
    typedef store_t T;                                                             \
    typedef compute_t C;                                                           \
    enum { BYTES = sizeof(store_t), KIND = kind };                                 \
    TCG_HDEV C to_c(T v) { return (C)v; }                                          \
    TCG_HDEV T from_c(C v) { return (T)v; }                                        \
    TCG_HDEV C round(C v) { return (C)(T)v; }                                      \
  };
TCG_PLAIN_TAG(tcg_f32, float, float, TCG_KIND_FLOAT)
TCG_PLAIN_TAG(tcg_f64, double, double, TCG_KIND_FLOAT)
TCG_PLAIN_TAG(tcg_i8, int8_t, int32_t, TCG_KIND_SINT)
TCG_PLAIN_TAG(tcg_u8, uint8_t, int32_t, TCG_KIND_UINT)
TCG_PLAIN_TAG(tcg_i16, int16_t, int32_t, TCG_KIND_SINT)
TCG_PLAIN_TAG(tcg_u16, uint16_t, int32_t, TCG_KIND_UINT)
TCG_PLAIN_TAG(tcg_i32, int32_t, int32_t, TCG_KIND_SINT)
TCG_PLAIN_TAG(tcg_u32, uint32_t, uint32_t, TCG_KIND_UINT)
TCG_PLAIN_TAG(tcg_i64, int64_t, int64_t, TCG_KIND_SINT)
TCG_PLAIN_TAG(tcg_u64, uint64_t, uint64_t, TCG_KIND_UINT)
#undef TCG_PLAIN_TAG

template <class A, class B> struct tcg_same { enum { value = 0 }; };
template <class A> struct tcg_same<A, A> { enum { value = 1 }; };

/* ---- shared-memory swizzle (the lowering's T.copy writes tiles with the same placement:
 * tc_gpu_swizzle_index in src/gpu/lower.c) ----
 * A tile is rows x COLS, BYTES per element, R = COLS * BYTES bytes a row. Rows of 32, 64 or 128
 * bytes are stored row-major with their 16-byte chunks permuted by the row's low bits. Wider rows
 * (R a multiple of 128) are cut into 8-row x 128-byte atoms stored one after another along the
 * row, each permuted like a 128-byte-row tile: the layout wgmma descriptors can describe. */
template <int COLS, int BYTES> TCG_DEV int tcg__swizzle_chunk(int chunk, int row7) {
  enum { R = COLS * BYTES };
  if (R % 128 == 0) return (chunk & ~7) | ((chunk ^ row7) & 7);
  if (R == 64) return chunk ^ ((row7 >> 1) & 3);
  if (R == 32) return chunk ^ ((row7 >> 2) & 1);
  return chunk;
}
/* Element offset of (row, col) where row = row8 + row7, row8 a multiple of 8, row7 < 8. */
template <int COLS, int BYTES, int SWZ> TCG_DEV int tcg__tile_offset(int row8, int row7, int col) {
  if (!SWZ) return (row8 + row7) * COLS + col;
  enum { E = 16 / BYTES, R = COLS * BYTES, P = 128 / BYTES };
  if (R % 128 == 0)
    return row8 * COLS + (col / P) * 8 * P + row7 * P + ((((col % P) / E) ^ row7) & 7) * E + col % E;
  return (row8 + row7) * COLS + tcg__swizzle_chunk<COLS, BYTES>(col / E, row7) * E + col % E;
}
template <int COLS, int BYTES> TCG_DEV int tcg_swizzle_offset(int row, int col) {
  return tcg__tile_offset<COLS, BYTES, 1>(row & ~7, row & 7, col);
}

/* ---- a failed run-time check (T.assert): the GPU traps (the message is the source's only);
 * the emulator ends the launch with the message, as the cpu target reports it ---- */
#ifndef TCG_EMU
#define tcg_assert_fail(msg) __trap()
#else
#define tcg_assert_fail(msg) tcg_emu_fail("kernel assertion failed: " msg)
#endif

/* ---- barriers ---- */
TCG_DEV void tcg_sync_block() { __syncthreads(); }
TCG_DEV void tcg_sync_warp() { __syncwarp(); }
/* named barrier `id` over `nthreads` threads (a multiple of 32) */
#ifndef TCG_EMU
TCG_DEV void tcg_sync_named(int id, int nthreads) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory"); }
#else /* the emulator (emu/tcg_emu.h) */
TCG_DEV void tcg_sync_named(int id, int nthreads) { tcg_emu_rt->bar_sync(id, nthreads); }
#endif

/* ---- warp all-reduce: every lane of each aligned group of WIDTH lanes (a power of two <= 32)
 * gets the group's result; xor butterflies, so every lane computes the same value. ---- */
struct tcg_op_sum { template <class T> TCG_SDEV T apply(T a, T b) { return a + b; } };
struct tcg_op_max { template <class T> TCG_SDEV T apply(T a, T b) { return a > b ? a : b; } };
struct tcg_op_min { template <class T> TCG_SDEV T apply(T a, T b) { return a < b ? a : b; } };
template <class OP, int WIDTH, class T> TCG_DEV T tcg_warp_allreduce(T v) {
  static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0, "WIDTH: a power of two <= 32");
#pragma unroll
  for (int mask = WIDTH / 2; mask > 0; mask >>= 1) v = OP::apply(v, __shfl_xor_sync(0xffffffffu, v, mask));
  return v;
}
template <int WIDTH, class T> TCG_DEV T tcg_warp_allreduce_sum(T v) { return tcg_warp_allreduce<tcg_op_sum, WIDTH>(v); }
template <int WIDTH, class T> TCG_DEV T tcg_warp_allreduce_max(T v) { return tcg_warp_allreduce<tcg_op_max, WIDTH>(v); }
template <int WIDTH, class T> TCG_DEV T tcg_warp_allreduce_min(T v) { return tcg_warp_allreduce<tcg_op_min, WIDTH>(v); }

/* ---- shared-memory addresses, cp.async (sm_80+) ---- */
TCG_DEV uint32_t tcg_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

#ifndef TCG_EMU
/* Copies BYTES (4, 8 or 16) from global to shared memory asynchronously; 16 bytes bypass L1. */
template <int BYTES> TCG_DEV void tcg_cp_async(void *smem, const void *gmem) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(tcg_smem_addr(smem)), "l"(gmem) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(tcg_smem_addr(smem)), "l"(gmem), "n"(BYTES) : "memory");
}
/* The same, writing zeros instead where !valid (gmem is not read then). */
template <int BYTES> TCG_DEV void tcg_cp_async_zfill(void *smem, const void *gmem, bool valid) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  int src = valid ? BYTES : 0;
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(tcg_smem_addr(smem)), "l"(gmem), "r"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(tcg_smem_addr(smem)), "l"(gmem), "n"(BYTES), "r"(src)
                 : "memory");
}
TCG_DEV void tcg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/* Waits until at most N committed groups are still in flight. */
template <int N> TCG_DEV void tcg_cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
#else /* the emulator: a copy lands when the thread waits for its group */
template <int BYTES> TCG_DEV void tcg_cp_async(void *smem, const void *gmem) { tcg_emu_cp_push(smem, gmem, BYTES, 1); }
template <int BYTES> TCG_DEV void tcg_cp_async_zfill(void *smem, const void *gmem, bool valid) {
  tcg_emu_cp_push(smem, gmem, BYTES, valid);
}
TCG_DEV void tcg_cp_async_commit() { tcg_emu_me()->cp_groups++; }
template <int N> TCG_DEV void tcg_cp_async_wait() { tcg_emu_cp_wait(N); }
#endif

/* ---- vector loads and stores (the address must be aligned to the size) ---- */
struct __align__(16) tcg_b128 { uint32_t x, y, z, w; };
struct __align__(8) tcg_b64 { uint32_t x, y; };
template <int BYTES> struct tcg_vec;
template <> struct tcg_vec<16> { typedef tcg_b128 T; };
template <> struct tcg_vec<8> { typedef tcg_b64 T; };
template <> struct tcg_vec<4> { typedef uint32_t T; };
template <> struct tcg_vec<2> { typedef uint16_t T; };
template <> struct tcg_vec<1> { typedef uint8_t T; };
template <int BYTES> TCG_DEV typename tcg_vec<BYTES>::T tcg_ld_vec(const void *p) {
  return *(const typename tcg_vec<BYTES>::T *)p;
}
template <int BYTES> TCG_DEV void tcg_st_vec(void *p, typename tcg_vec<BYTES>::T v) { *(typename tcg_vec<BYTES>::T *)p = v; }
TCG_DEV tcg_b128 tcg_ld16(const void *p) { return tcg_ld_vec<16>(p); }
TCG_DEV void tcg_st16(void *p, tcg_b128 v) { tcg_st_vec<16>(p, v); }
/* copies 16 bytes (global or shared, either way) */
TCG_DEV void tcg_copy16(void *dst, const void *src) { tcg_st16(dst, tcg_ld16(src)); }

/* ---- atomic add: *p = round(*p + v) in D's arithmetic, as the cpu's element update ----
 * float32, float64, 32- and 64-bit integers use the native instructions (exact); everything
 * narrower is a compare-and-swap loop on the aligned 32-bit word that holds the element. */
template <class D> TCG_DEV void tcg__atomic_add_cas(typename D::T *p, typename D::C v) {
  enum { B = sizeof(typename D::T) };
  static_assert(B == 1 || B == 2, "narrow atomics only");
  unsigned long long a = (unsigned long long)p;
  unsigned int *w = (unsigned int *)(a & ~3ull);
  unsigned int sh = (unsigned int)(a & 3) * 8, mask = (B == 1 ? 0xffu : 0xffffu) << sh;
  unsigned int old = *(volatile unsigned int *)w, assumed;
  do {
    assumed = old;
    typename D::T e = (typename D::T)((assumed & mask) >> sh);
    typename D::T n = D::from_c(D::to_c(e) + v);
    unsigned int nw = (assumed & ~mask) | (((unsigned int)n << sh) & mask);
    old = atomicCAS(w, assumed, nw);
  } while (old != assumed);
}
template <class D> struct tcg__atomic {
  TCG_SDEV void add(typename D::T *p, typename D::C v) { tcg__atomic_add_cas<D>(p, v); }
};
template <> struct tcg__atomic<tcg_f32> { TCG_SDEV void add(float *p, float v) { atomicAdd(p, v); } };
template <> struct tcg__atomic<tcg_f64> { TCG_SDEV void add(double *p, double v) { atomicAdd(p, v); } };
template <> struct tcg__atomic<tcg_i32> { TCG_SDEV void add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); } };
template <> struct tcg__atomic<tcg_u32> {
  TCG_SDEV void add(uint32_t *p, uint32_t v) { atomicAdd((unsigned int *)p, (unsigned int)v); }
};
template <> struct tcg__atomic<tcg_i64> {
  TCG_SDEV void add(int64_t *p, int64_t v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }
};
template <> struct tcg__atomic<tcg_u64> {
  TCG_SDEV void add(uint64_t *p, uint64_t v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }
};
template <class D> TCG_DEV void tcg_atomic_add(typename D::T *p, typename D::C v) { tcg__atomic<D>::add(p, v); }
#endif /* TCG_CUDA_PRELUDE */
