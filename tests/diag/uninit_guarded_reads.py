# tilec: ir
# No warning: the accumulator is cleared by the gemm itself (clear_accum), the previous tile is
# read under `if t > 0` only, and what either branch of an `if` writes counts before both.
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((4, 64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((4, 64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        prev = T.alloc_fragment((64, 64), "float32")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(B, B_s)
        for t in T.serial(4):
            T.copy(A[t, :, :], A_s)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            if t > 0:
                for i, j in T.Parallel(64, 64):
                    acc[i, j] += prev[i, j]
            T.copy(acc, prev)
            T.copy(acc, C[t, :, :])
