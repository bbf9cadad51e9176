#!/usr/bin/env python3
"""The flash-attention peer of bench/bench_cuda.c: PyTorch SDPA's flash backend and cuDNN backend,
forward, fp16 and bf16, B=8 H=16 S=4096 D=128, causal and not. Median of timed runs (CUDA events) after
warm-up, with the L2 cache flushed before each run, as bench_cuda.c times tilec's kernel.
Prints "no torch" / "no CUDA device" and exits 0 where it cannot run.
    python3 bench/attention_peer.py [--runs N]"""
import sys

RUNS = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 30

try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError as e:
    print(f"no torch ({e}); nothing to measure")
    sys.exit(0)
if not torch.cuda.is_available():
    print("no CUDA device; nothing to measure")
    sys.exit(0)

B, H, S, D = 8, 16, 4096, 128
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
l2 = getattr(props, "L2_cache_size", 64 << 20) or (64 << 20)
flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
q, k, v = (torch.randn(B, H, S, D, dtype=torch.float16, device=dev) for _ in range(3))
print(f"device: {props.name}, torch {torch.__version__}; median of {RUNS} runs, L2 flushed before each")


def median_ms(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for i in range(RUNS):
        flush.fill_(i & 0xFF)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


for dt, dname in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
    q, k, v = (x.to(dt) for x in (q, k, v))
    for causal in (True, False):
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            label = f"sdpa {name:5s} {dname} B={B} H={H} S={S} D={D} {'causal' if causal else 'non-causal'}"
            try:
                with sdpa_kernel([backend]):
                    ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                print(f"{label}: {ms:8.3f} ms  {flops / ms / 1e9:7.1f} TFLOP/s")
            except Exception as e:  # a backend this build or GPU lacks
                print(f"{label}: unavailable ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
