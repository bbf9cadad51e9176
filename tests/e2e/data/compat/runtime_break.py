# 'break' under a runtime condition in a serial loop (topk_selector.py's `if l_new_topk <= 0:
# break`): each thread sums its row until the sum passes 2, and counts the elements it added.
# The reader keeps a flag cell; the statements after the break and later iterations run while
# it is clear. B and Count must equal Ref and CountRef, which the flag written by hand gives.
import tilelang
import tilelang.language as T

N = 16


@T.prim_func
def brk(A: T.Tensor((32, N), "float32"), B: T.Tensor((32,), "float32"), Count: T.Tensor((32,), "int32"),
        Ref: T.Tensor((32,), "float32"), CountRef: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding()
        acc = T.alloc_var("float32")
        n = T.alloc_var("int32")
        acc = 0
        n = 0
        for i in T.serial(N):
            if acc > 2:
                break
            acc = acc + A[tx, i]
            n = n + 1
        B[tx] = acc
        Count[tx] = n
        # the same by hand
        done = T.alloc_var("int32")
        acc2 = T.alloc_var("float32")
        n2 = T.alloc_var("int32")
        done = 0
        acc2 = 0
        n2 = 0
        for i in T.serial(N):
            if done == 0:
                if acc2 > 2:
                    done = 1
                if done == 0:
                    acc2 = acc2 + A[tx, i]
                    n2 = n2 + 1
        Ref[tx] = acc2
        CountRef[tx] = n2
