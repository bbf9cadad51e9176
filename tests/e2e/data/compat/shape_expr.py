# Tensors whose dimensions are computed from symbolic sizes (the IndexQ of TileLang's dsa_hisa and
# fp8_lighting_indexer kernels, [seq_len * heads, index_dim]): `tilec run` sizes X and Half from
# -D a=.. -D b=.. (tilec_kernel_param_shape), and the launch checks them against the a and b
# that S binds.
import tilelang
import tilelang.language as T

a = T.dynamic("a")
b = T.dynamic("b")


@T.prim_func
def scale_rows(
    X: T.Tensor((a * b, 16), "float32"),
    S: T.Tensor((a, b), "float32"),
    Y: T.Tensor((a, b, 16), "float32"),
    Half: T.Tensor((T.ceildiv(a, 2), 16), "float32"),
):
    with T.Kernel(a, b, threads=32) as (bx, by):
        for k in T.Parallel(16):
            Y[bx, by, k] = X[bx * b + by, k] * S[bx, by]
        if bx % 2 == 0 and by == 0:
            for k in T.Parallel(16):
                Half[bx // 2, k] = X[bx * b, k] + 1.0
