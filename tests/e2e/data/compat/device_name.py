# torch.cuda.get_device_name() answers for the device tilec's queries describe (sm_90, 132 SMs:
# an H100), on every target, as the amd/ examples' IsRDNA() asks it.
import tilelang
import tilelang.language as T
import torch


def is_rdna():
    if torch.cuda.is_available():
        gpu_name = torch.cuda.get_device_name().strip()
        return "Radeon" in gpu_name
    return False


@tilelang.jit(out_idx=[1])
def fill(N):
    value = 2.0 if is_rdna() else 3.0
    assert "H100" in torch.cuda.get_device_name(0)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] + value

    return main
