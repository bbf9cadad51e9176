# A gather: Out[i, :] = X[Idx[i], :]. Random inputs fill the integer tensor Idx with values it
# does not expect as indices (tests/e2e/cli_usability.sh: a failed check names Idx in its note).
import tilelang.language as T


@T.prim_func
def gather_rows(X: T.Tensor((64, 32), "float32"), Idx: T.Tensor((16,), "int32"), Out: T.Tensor((16, 32), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i, j in T.Parallel(16, 32):
            Out[i, j] = X[T.clamp(Idx[i], 0, 63), j]
