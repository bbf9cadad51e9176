# torch tensors through the layer: outputs allocated as torch tensors, a torch reference program.
import torch
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(N, dtype=T.float32):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                C[bx * 64 + i] = A[bx * 64 + i] + B[bx * 64 + i]

    return main


kernel = add(1000)
device = "cuda" if kernel.target == "cuda" else "cpu"
a = torch.randn(1000, device=device)
b = torch.randn(1000, device=device)
c = kernel(a, b)
assert isinstance(c, torch.Tensor) and c.device == a.device
torch.testing.assert_close(c, a + b)
kernel.get_profiler().assert_allclose(lambda x, y: x + y)
print("torch_add: ok")
