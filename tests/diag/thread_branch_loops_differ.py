# tilec: run
# The consumer's loop runs one iteration more than the producer's: the reader interleaves a
# producer's and a consumer's loops only when their bounds are the same, so it runs the branches
# in program order and the consumer's first wait, written first, has no arrival yet.
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((16, 128), "float32"), S: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=256):
        ring = T.alloc_shared((2, 16, 32), "float32")
        acc = T.alloc_fragment((16,), "float32")
        part = T.alloc_fragment((16,), "float32")
        tile = T.alloc_fragment((16, 32), "float32")
        bars = T.alloc_barrier([128] * 4)
        if T.get_thread_binding() < 128:
            T.fill(acc, 0)
            for k in T.serial(4):
                T.mbarrier_wait_parity(bars[k % 2], (k // 2) % 2)
                T.copy(ring[k % 2, :, :], tile)
                T.reduce_sum(tile, part, dim=1)
                for i in T.Parallel(16):
                    acc[i] += part[i]
                T.mbarrier_arrive(bars[k % 2 + 2])
            T.copy(acc, S)
        else:
            for k in T.serial(3):
                T.mbarrier_wait_parity(bars[k % 2 + 2], ((k // 2) % 2) ^ 1)
                T.copy(A[0:16, k * 32:(k + 1) * 32], ring[k % 2, :, :])
                T.mbarrier_arrive(bars[k % 2])
