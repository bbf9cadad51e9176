# A producer and a consumer branch around loops of the same trip count, ordered by mbarriers
# through a ring of two stages (minference's TMA producer and attention consumer): the
# consumer, written first, waits for each stage the producer fills; the producer waits for the
# consumer to free a stage before filling it again. Neither branch can run whole before the
# other, so the reader runs the two loops iteration by iteration, the producer's body first.
# Each tile's row sums are weighted by the iteration, so a stage refilled too early changes S.
# Before its loop the producer also loads a bias tile and arrives on its own barrier, which the
# consumer waits for before its loop (minference's Q tile). SRef computes the same with no
# branches.
import tilelang
import tilelang.language as T


@tilelang.jit
def producer_consumer(M, K):

    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), Bias: T.Tensor((M,), "float32"), S: T.Tensor((M,), "float32"),
             SRef: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=256):
            ring = T.alloc_shared((2, M, 32), "float32")
            acc = T.alloc_fragment((M,), "float32")
            part = T.alloc_fragment((M,), "float32")
            tile = T.alloc_fragment((M, 32), "float32")
            bias = T.alloc_shared((M,), "float32")
            bars = T.alloc_barrier([128] * 5)  # full 0, 1; empty 2, 3; bias 4
            tid = T.get_thread_binding()
            if tid < 128:
                T.mbarrier_wait_parity(bars[4], 0)
                T.copy(bias, acc)
                for k in T.serial(K // 32):
                    T.mbarrier_wait_parity(bars[k % 2], (k // 2) % 2)
                    T.copy(ring[k % 2, :, :], tile)
                    T.reduce_sum(tile, part, dim=1)
                    for i in T.Parallel(M):
                        acc[i] += part[i] * (k + 1)
                    T.mbarrier_arrive(bars[k % 2 + 2])
                T.copy(acc, S)
            else:
                T.copy(Bias, bias)
                T.mbarrier_arrive(bars[4])
                for k in T.serial(K // 32):
                    T.mbarrier_wait_parity(bars[k % 2 + 2], ((k // 2) % 2) ^ 1)
                    T.copy(A[0:M, k * 32:(k + 1) * 32], ring[k % 2, :, :])
                    T.mbarrier_arrive(bars[k % 2])
            ref = T.alloc_fragment((M,), "float32")
            T.copy(Bias, ref)
            for k in T.serial(K // 32):
                T.copy(A[0:M, k * 32:(k + 1) * 32], tile)
                T.reduce_sum(tile, part, dim=1)
                for i in T.Parallel(M):
                    ref[i] += part[i] * (k + 1)
            T.copy(ref, SRef)

    return main
