# T.Persistent(domain, wave_size, index, group_size): 7 blocks walk the 6 x 5 tiles of B in
# waves, grouped by 2 along the last axis (padded to 6 x 6: 36 tiles, 6 waves). Every tile must
# be visited: B (through the persistent loop) equals Ref (written directly).
import tilelang
import tilelang.language as T

M, N, bm, bn, sms = 96, 80, 16, 16, 7


@T.prim_func
def add_one(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), Ref: T.Tensor((M, N), "float32")):
    with T.Kernel(sms, threads=32) as block_id:
        for bx, by in T.Persistent([M // bm, N // bn], sms, block_id, 2):
            for i, j in T.Parallel(bm, bn):
                B[bx * bm + i, by * bn + j] = A[bx * bm + i, by * bn + j] + 1
        if block_id == 0:
            for i, j in T.Parallel(M, N):
                Ref[i, j] = A[i, j] + 1
