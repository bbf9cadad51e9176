# `while` on a runtime condition: a block-strided walk over rows whose cursor is a T.alloc_var
# cell (as TileLang's persistent kernels write it), with tile operations in the body, and a
# per-thread loop on a local variable. Ref holds the expected values, written without 'while'.
import tilelang
import tilelang.language as T

M, N, blocks = 48, 32, 5


@T.prim_func
def walk(
    A: T.Tensor((M, N), "float32"),
    Steps: T.Tensor((blocks,), "int32"),
    B: T.Tensor((M, N), "float32"),
    Count: T.Tensor((blocks, N), "int32"),
    Ref: T.Tensor((M, N), "float32"),
    CountRef: T.Tensor((blocks, N), "int32"),
):
    with T.Kernel(blocks, threads=N) as bx:
        row = T.alloc_var(T.int32)
        row = bx
        S = T.alloc_shared((1, N), "float32")
        while row < M:
            T.copy(A[row, 0], S)
            for j in T.Parallel(N):
                S[0, j] = S[0, j] * 2 + row
            T.copy(S, B[row, 0])
            row = row + blocks
        for r, j in T.Parallel(M // blocks + 1, N):
            if r * blocks + bx < M:
                Ref[r * blocks + bx, j] = A[r * blocks + bx, j] * 2 + (r * blocks + bx)
        tx = T.get_thread_binding()
        n = T.alloc_var(T.int32)
        n = 0
        i = tx % 7
        while i < (Steps[bx] % 5 + 1) * 10:
            n = n + 1
            i = i + 3
        Count[bx, tx] = n
        CountRef[bx, tx] = T.max(((Steps[bx] % 5 + 1) * 10 - tx % 7 + 2) // 3, 0)
