# torch.cuda.get_device_properties(0) and tilelang.DataType answer at compile time: the device
# tilec's queries describe is sm_90 with 132 SMs (an H100), and DataType(d).bits is d's width.
import tilelang
import tilelang.language as T
import torch
from tilelang import DataType


def check_hopper():
    props = torch.cuda.get_device_properties(0)
    return (props.major, props.minor) == (9, 0)


@tilelang.jit(out_idx=[1])
def fill(N):
    props = torch.cuda.get_device_properties(0)
    assert check_hopper() and props.multi_processor_count == 132 and "H100" in props.name
    value = DataType("float16").bits + props.major  # 16 + 9

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] + value

    return main
