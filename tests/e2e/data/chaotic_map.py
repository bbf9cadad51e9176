# A result that depends on its inputs' range: a row sum (whose float32 rounding differs from the
# reference's float64 sum in the last place) seeds 300 steps of the logistic map, which is
# chaotic, so the cpu backend and the reference end far apart on random inputs
# (tests/e2e/cli_usability.sh: tilec run --verify explains it and points at --load).
import tilelang.language as T
@T.prim_func
def logistic_sum(A: T.Tensor((64, 256), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_fragment((64, 256), "float32")
        s = T.alloc_fragment((64,), "float32")
        T.copy(A, a)
        T.reduce_sum(a, s, dim=1)
        for i in T.Parallel(64):
            x = T.alloc_var("float32")
            x = T.abs(s[i]) * 0.01 + 0.3
            for it in T.serial(300):
                x = x * 3.99 * (1.0 - x)
            B[i] = x
