# Stream compaction with slots handed out by T.atomic_add(..., return_prev=True): each thread
# appends the indices of the positive elements it sees to its row of Idx, at the position the
# row's counter held before its addition (deepseek_v32/topk_selector.py's pattern). Which
# index lands in which slot depends on the order threads reach the atomic, which differs
# between the reference interpreter (threads in lockstep) and the cpu target (each thread's
# run in turn); the set each row receives does not. Idx is compared as multisets along
# dimension 1; Count, the number of slots used, exactly. Unused slots keep -1.
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_slots(R, N):

    @T.prim_func
    def main(A: T.Tensor((R, N), "float32"), Idx: T.Tensor((R, N), "int32"), Count: T.Tensor((R,), "int32")):
        with T.Kernel(R, threads=64) as bx:
            count = T.alloc_shared((1,), "int32")
            slot = T.alloc_var("int32")
            tx = T.get_thread_binding()
            for j in T.serial(N // 64):
                Idx[bx, j * 64 + tx] = -1
            if tx == 0:
                count[0] = 0
            T.sync_threads()
            for j in T.serial(N // 64):
                if A[bx, j * 64 + tx] > 0:
                    slot = T.atomic_add(count[0], 1, return_prev=True)
                    Idx[bx, slot] = j * 64 + tx
            T.sync_threads()
            if tx == 0:
                Count[bx] = count[0]

    return main
