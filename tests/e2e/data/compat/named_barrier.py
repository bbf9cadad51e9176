# T.sync_threads(barrier_id, arrive_count): a barrier of the 32 threads that `if tx < 32` selects
# in a block of 64 (topk_selector.py's scan of its histogram). The scan must give what
# T.cumsum gives (Out must equal Ref).
import tilelang
import tilelang.language as T


@T.prim_func
def scan(A: T.Tensor((32,), "int32"), Out: T.Tensor((32,), "int32"), Ref: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        S = T.alloc_shared((32,), "int32")
        R = T.alloc_shared((32,), "int32")
        v = T.alloc_var("int32")
        T.copy(A, S)
        T.copy(A, R)
        T.sync_threads()
        if tx < 32:
            for i in T.serial(5):
                offset = 1 << i
                T.sync_threads(1, 32)
                if tx >= offset:
                    v = S[tx] + S[tx - offset]
                T.sync_threads(1, 32)
                if tx >= offset:
                    S[tx] = v
        T.sync_threads()
        T.cumsum(R)
        T.copy(S, Out)
        T.copy(R, Ref)
