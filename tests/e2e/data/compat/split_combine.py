# The combine step of split-KV flash decoding (each of num_split blocks wrote a partial output and
# its log-sum-exp; one block per head merges them), the shape TileLang's GQA decode example ends
# with: vectors as long as the block has threads, not tied to any tile. Each thread holds one
# element of such a vector (every thread held all 128 and ran every loop 128 times), and the
# [num_split, 128] tile reduced along its first dimension stays in shared memory.
# `neighbours` reads a dealt vector at elements other threads hold (kept correct through shared
# memory); `short_vec` is a vector shorter than the block (every thread keeps all of it).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def combine(batch=2, heads=4, num_split=8, dim=128, threads=128):

    @T.prim_func
    def main(glse: T.Tensor([batch, heads, num_split], "float16"),
             partial: T.Tensor([batch, heads, num_split, dim], "float16"),
             Output: T.Tensor([batch, heads, dim], "float16")):
        with T.Kernel(heads, batch, threads=threads) as (by, bz):
            po = T.alloc_fragment([dim], "float16")
            acc = T.alloc_fragment([dim], "float32")
            lse = T.alloc_fragment([num_split, dim], "float16")
            logsum = T.alloc_fragment([dim], "float32")
            lmax = T.alloc_fragment([dim], "float32")
            scale = T.alloc_fragment([dim], "float32")
            T.clear(logsum)
            T.clear(acc)
            for k, j in T.Parallel(num_split, dim):
                lse[k, j] = glse[bz, by, k]
            T.reduce_max(lse, lmax, dim=0, clear=True)
            for k in T.serial(num_split):
                for j in T.Parallel(dim):
                    logsum[j] += T.exp2(lse[k, j] - lmax[j])
            for j in T.Parallel(dim):
                logsum[j] = T.log2(logsum[j]) + lmax[j]
            for k in T.serial(num_split):
                for i in T.Parallel(dim):
                    po[i] = partial[bz, by, k, i]
                for j in T.Parallel(dim):
                    scale[j] = T.exp2(lse[k, j] - logsum[j])
                for i in T.Parallel(dim):
                    acc[i] += po[i] * scale[i]
            for i in T.Parallel(dim):
                Output[bz, by, i] = acc[i]

    return main


@tilelang.jit(out_idx=[-1])
def neighbours(n=256, threads=128):

    @T.prim_func
    def main(A: T.Tensor([n], "float32"), B: T.Tensor([n], "float32")):
        with T.Kernel(1, threads=threads) as bx:
            v = T.alloc_fragment([n], "float32")
            for j in T.Parallel(n):
                v[j] = A[j] * 2.0
            for j in T.Parallel(n):
                B[j] = v[(j + 1) % n] + v[j] + v[n - 1 - j]

    return main


@tilelang.jit(out_idx=[-1])
def short_vec(n=96, threads=128):

    @T.prim_func
    def main(A: T.Tensor([4, n], "float32"), B: T.Tensor([4, n], "float32")):
        with T.Kernel(4, threads=threads) as bx:
            v = T.alloc_fragment([n], "float32")
            for j in T.Parallel(n):
                v[j] = A[bx, j] + 1.0
            for j in T.Parallel(n):
                B[bx, j] = v[j] * v[n - 1 - j]

    return main
