# Row vectors beside a gemm accumulator are held by every thread that holds the row (16 threads a
# row for a 64 x 32 tile over 8 warps), and a T.Parallel loop over them runs in each of those
# threads. When one of them lives in shared memory (here `denom`, which a loop over a differently
# laid out tile reads at rows its threads do not hold), its update `denom[i] = denom[i] +
# row_sum[i]` must happen once a row: it ran in all 16 threads and added row_sum 16 times, on cuda
# and metal alike (a latent-cache decode kernel found it: tests/e2e/data/compat/latent_decode.py).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def shared_row_update(H=64, dim=128, block_N=32, K=64, threads=256, iters=2):

    @T.prim_func
    def main(Q: T.Tensor((H, K), "float16"), Kt: T.Tensor((iters * block_N, K), "float16"), O: T.Tensor((H, dim), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            q_s = T.alloc_shared((H, K), "float16")
            k_s = T.alloc_shared((block_N, K), "float16")
            s = T.alloc_fragment((H, block_N), "float32")
            o = T.alloc_fragment((H, dim), "float32")
            row_sum = T.alloc_fragment((H,), "float32")
            denom = T.alloc_fragment((H,), "float32")
            T.copy(Q, q_s)
            T.fill(denom, 0)
            for it in T.serial(iters):
                T.copy(Kt[it * block_N:(it + 1) * block_N, :], k_s)
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
                T.reduce_sum(s, row_sum, dim=1)
                for i in T.Parallel(H):
                    denom[i] = denom[i] + row_sum[i]
            for i, j in T.Parallel(H, dim):
                o[i, j] = denom[i] * 0.5 + j
            T.copy(o, O)

    return main
