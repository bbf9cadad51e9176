"""Matrix-vector product y = A @ x written at thread level.

Each block owns BLOCK_N rows and runs BLOCK_N x reduce_threads threads: thread (tn, tk) walks
the K axis in strides, keeps a private float32 partial sum in a local register, and the
reduce_threads partial sums of a row meet in shared memory through T.atomic_add. The default
N = 1000 is NOT a multiple of BLOCK_N = 64, so the last block guards its rows explicitly.
"""
import argparse

import tilelang
import tilelang.language as T


def ref_program(A, x):
    return (A.float() @ x.float()).to(A.dtype)


@tilelang.jit(out_idx=[-1])
def gemv(N=1000, K=1024, BLOCK_N=64, reduce_threads=4, TILE_K=8, dtype=T.float16, accum_dtype=T.float):
    BLOCK_K = reduce_threads * TILE_K
    assert K % BLOCK_K == 0, "K must be a multiple of reduce_threads * TILE_K"

    @T.prim_func
    def main(
        A: T.Tensor((N, K), dtype),
        x: T.Tensor((K,), dtype),
        y: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            a_local = T.alloc_local((TILE_K,), dtype)
            x_local = T.alloc_local((TILE_K,), dtype)
            acc = T.alloc_local((1,), accum_dtype)
            y_shared = T.alloc_shared((BLOCK_N,), accum_dtype)

            row = bn * BLOCK_N + tn
            if tk == 0:
                y_shared[tn] = 0
            T.clear(acc)
            for bk in T.serial(K // BLOCK_K):
                for k in T.unroll(TILE_K):
                    col = bk * BLOCK_K + tk * TILE_K + k
                    x_local[k] = x[col]
                    a_local[k] = T.if_then_else(row < N, A[row, col], 0)
                for k in T.serial(TILE_K):
                    acc[0] += a_local[k].astype(accum_dtype) * x_local[k].astype(accum_dtype)
            T.atomic_add(y_shared[tn], acc[0])
            if tk == 0 and row < N:
                y[row] = y_shared[tn]

    return main


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--k", type=int, default=1024)
    args = parser.parse_args()

    import torch

    kernel = gemv(args.n, args.k)
    A = torch.randn(args.n, args.k, device="cuda", dtype=torch.float16)
    x = torch.randn(args.k, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(A, x), ref_program(A, x), rtol=1e-2, atol=1e-2)
    print("gemv: all checks pass")


if __name__ == "__main__":
    main()
