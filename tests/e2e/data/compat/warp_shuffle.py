# T.tvm_warp_shuffle (example_hadamard.py's butterfly exchange) and make_mma_swizzle_layout:
# B and C take other lanes' values with the shuffle, BRef and CRef read the same lanes' inputs
# from A directly; D goes through shared tiles with the MMA swizzle (and its identity case).
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import make_mma_swizzle_layout


@tilelang.jit
def shuffles(N=64):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), X: T.Tensor((N, 16), "float32"), B: T.Tensor((N,), "float32"),
             C: T.Tensor((N,), "float32"), BRef: T.Tensor((N,), "float32"), CRef: T.Tensor((N,), "float32"),
             D: T.Tensor((N, 16), "float32"), E: T.Tensor((N, 8), "float32")):
        with T.Kernel(1, threads=N) as bx:
            s = T.alloc_shared((N, 16), "float32")
            t = T.alloc_shared((N, 8), "float32")
            T.annotate_layout({s: make_mma_swizzle_layout(s), t: make_mma_swizzle_layout(t)})
            tx = T.get_thread_binding(0)
            v = T.alloc_local((1,), "float32")
            v[0] = A[tx] * 2.0
            for i in T.serial(2):  # twice, as the hadamard rounds do
                B[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, v[0] + i, tx ^ (1 << i), 32, 32)
            C[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, v[0], tx + 3, 8, 32)
            BRef[tx] = A[(tx - tx % 32) + (tx ^ 2) % 32] * 2.0 + 1
            CRef[tx] = A[(tx - tx % 8) + (tx + 3) % 8] * 2.0
            T.copy(X, s)
            T.copy(X[0:N, 0:8], t)
            T.copy(s, D)
            T.copy(t, E)

    return main
