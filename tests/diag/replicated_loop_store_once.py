# tilec: source --target cuda,arch=sm_90a --kernel-only
# A T.Parallel loop over a row vector that every thread of a row holds (a gemm accumulator's row
# sums) updates each thread's copy and also adds into shared memory, which must happen once a
# row: refused at the loop, not added 16 times (a plain store there runs: every copy holds the
# same value)
import tilelang
import tilelang.language as T


@T.prim_func
def rows_and_store(Q: T.Tensor((64, 64), "float16"), Kt: T.Tensor((32, 64), "float16"), O: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        q_s = T.alloc_shared((64, 64), "float16")
        k_s = T.alloc_shared((32, 64), "float16")
        out_s = T.alloc_shared((64,), "float32")
        s = T.alloc_fragment((64, 32), "float32")
        row_sum = T.alloc_fragment((64,), "float32")
        T.copy(Q, q_s)
        T.copy(Kt, k_s)
        T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
        T.reduce_sum(s, row_sum, dim=1)
        T.fill(out_s, 0)
        for i in T.Parallel(64):
            row_sum[i] = row_sum[i] * 2.0
            out_s[i] = out_s[i] + row_sum[i]
        T.copy(out_s, O)
