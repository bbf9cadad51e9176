# Dependent `with T.Kernel(...)` blocks in a @tilelang.jit kernel that annotates its tensors in
# its body (fusedmoe's style): the second block reads rows of Mid that another block of the
# first wrote (in reverse order), so it must be a launch of its own, after the first. Its
# tensors get their parameter indices only after the body is evaluated; the blocks were once
# taken as independent and fused into one launch, which read Mid before it was written.
# Out must equal Ref, which the first block computes directly.
import tilelang
import tilelang.language as T


@tilelang.jit
def reverse_twice(A, Mid, Out, Ref, rows: int = 8, cols: int = 32):
    A: T.Tensor((rows, cols), T.float32)
    Mid: T.Tensor((rows, cols), T.float32)
    Out: T.Tensor((rows, cols), T.float32)
    Ref: T.Tensor((rows, cols), T.float32)
    with T.Kernel(rows, threads=32) as bx:
        for j in T.Parallel(cols):
            Mid[bx, j] = A[bx, j] * 2 + 1
            Ref[bx, j] = (A[rows - 1 - bx, j] * 2 + 1) + A[bx, j]
    with T.Kernel(rows, threads=32) as bx:
        S = T.alloc_shared((cols,), T.float32)
        T.copy(Mid[rows - 1 - bx, 0], S)
        for j in T.Parallel(cols):
            Out[bx, j] = S[j] + A[bx, j]


# The same with T.sync_grid: Mid, a tensor, may be used on both sides of the grid barrier (it
# was once taken for a block's own buffer, which does not outlive a launch, and refused).
@tilelang.jit
def reverse_sync(A, Mid, Out, Ref, rows: int = 8, cols: int = 32):
    A: T.Tensor((rows, cols), T.float32)
    Mid: T.Tensor((rows, cols), T.float32)
    Out: T.Tensor((rows, cols), T.float32)
    Ref: T.Tensor((rows, cols), T.float32)
    with T.Kernel(rows, threads=32) as bx:
        for j in T.Parallel(cols):
            Mid[bx, j] = A[bx, j] * 2 + 1
            Ref[bx, j] = (A[rows - 1 - bx, j] * 2 + 1) + A[bx, j]
        T.sync_grid()
        for j in T.Parallel(cols):
            Out[bx, j] = Mid[rows - 1 - bx, j] + A[bx, j]
