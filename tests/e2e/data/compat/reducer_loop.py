# Combines of replicated fragments inside serial loops (combine_hoist.c). `gemv_reducer` is the
# shape of TileLang's gemv_alloc_reducer: a reducer updated from a 2-D T.Parallel loop in every
# step of a pipelined loop over K and read only after it; its replicas are combined once, after
# the loop (they were combined through shared memory in every step). `running_sum` reads the
# fragment in the loop (a running prefix): combined every step, as before. `max_from_five` starts
# the fragment at a value that is not the identity of its op (max from 5), folded in once.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemv_reducer(M=256, N=512, block_M=64, block_N=128, num_stages=2, threads=128):

    @T.prim_func
    def main(a: T.Tensor((M, N), "float16"), x: T.Tensor((N,), "float16"), o: T.Tensor((M,), "float16")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bm:
            r = T.alloc_reducer(block_M, "float32", replication="all")
            T.clear(r)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                a_s = T.alloc_shared((block_M, block_N), "float16")
                T.copy(a[bm * block_M, k * block_N], a_s)
                a_f = T.alloc_fragment((block_M, block_N), "float16")
                T.copy(a_s, a_f)
                x_f = T.alloc_fragment(block_N, "float16")
                T.copy(x[k * block_N], x_f)
                for i, j in T.Parallel(block_M, block_N):
                    r[i] += a_f[i, j] * x_f[j]
            T.finalize_reducer(r)
            T.copy(r, o[bm * block_M])

    return main


@tilelang.jit(out_idx=[-1])
def running_sum(M=64, N=256, block_N=64, threads=128):

    @T.prim_func
    def main(a: T.Tensor((M, N), "float32"), o: T.Tensor((N // block_N, M), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            a_f = T.alloc_fragment((M, block_N), "float32")
            r = T.alloc_fragment(M, "float32")
            T.clear(r)
            for k in T.serial(N // block_N):
                for i, j in T.Parallel(M, block_N):
                    a_f[i, j] = a[i, k * block_N + j]
                for i, j in T.Parallel(M, block_N):
                    r[i] += a_f[i, j]
                for i in T.Parallel(M):
                    o[k, i] = r[i]

    return main


@tilelang.jit(out_idx=[-1])
def max_from_five(M=64, N=256, block_N=64, threads=128):

    @T.prim_func
    def main(a: T.Tensor((M, N), "float32"), o: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            a_f = T.alloc_fragment((M, block_N), "float32")
            r = T.alloc_fragment(M, "float32")
            T.fill(r, 5.0)
            for k in T.serial(N // block_N):
                for i, j in T.Parallel(M, block_N):
                    a_f[i, j] = a[i, k * block_N + j] * 4.0
                for i, j in T.Parallel(M, block_N):
                    r[i] = T.max(r[i], a_f[i, j])
            for i in T.Parallel(M):
                o[i] = r[i]

    return main
