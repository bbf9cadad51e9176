# Kept from the planted-bug check (docs/testing.md): with plant=barrier (no barrier before a
# loop reading shared memory written before it) this program, minimized, fails on cuda; it must
# verify on every target without it.
# Found by `tilec fuzz --seed 3 --count 1 --targets cuda,arch=sm_90a,plant=barrier:emu`, minimized: wrong on cuda,arch=sm_90a,plant=barrier:emu ('G2' differs from the reference: max_abs_err=124 cosine=0.704720).
# tilec-test: TILEC_EMU_ORDER=reverse cuda,arch=sm_90a --backend emu --kernel k0 --seed 3
# A program of `tilec fuzz` (seed 3): see docs/testing.md.
import tilelang.language as T


BM_0, BN_0, BK_0 = 32, 16, 16


@T.prim_func
def k0(G1: T.Tensor((32, 1), "float32"), G2: T.Tensor((32, 1), "float32")):
    with T.Kernel(1, 1, threads=32) as (bx, by):
        t0 = T.alloc_shared((BM_0, BN_0), "float32")
        t1 = T.alloc_shared((BN_0,), "float32")
        T.fill(t0, -0.5)
        T.fill(t1, 1)
        for i, j in T.Parallel(32, 16):
            t0[31 - i, j] = T.cast(T.exp(T.max(T.min(T.max((T.cast(i + j, "float32") * T.cast(0.0625, "float32") + T.cast(G1[T.min(by * 32 + i, 31), T.min(bx * 16 + j, 0)], "float32")), t1[j]), T.float32(2.0)), T.float32(-2.0))), "float32")
        T.copy(t0, G2[by * 32, bx * 16])
