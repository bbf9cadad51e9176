#!/bin/sh
# The cuda target from the command line where CI runs it (usually no GPU, NVRTC and nvcc present):
# `tilec backends` rows, `tilec compile` to a cubin (or the emitter's absence said plainly), the
# arch rule's errors, the driver's absence on `tilec run`, and SASS from cuobjdump when present.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-cuda-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
. tests/e2e/find_cuobjdump
find_cuobjdump >/dev/null || echo "SKIP cuda sass: no cuobjdump, the cubins' SASS is not read (sh tools/deps.sh test installs nvidia-cuda-cuobjdump)"
ok() { echo "PASS cuda: $1"; }
bad() { echo "FAIL cuda: $1"; [ -f "$D/err" ] && head -n 6 "$D/err"; }

"$T" backends >"$D/out" 2>"$D/err" || bad "tilec backends exits 0"
grep -Eq '^cuda +nvrtc +yes +(yes|no) ' "$D/out" && ok "backends: nvrtc is cuda's default" || bad "backends: nvrtc row"
grep -Eq '^cuda +nvcc +no +(yes|no) ' "$D/out" && ok "backends: nvcc row" || bad "backends: nvcc row"
if ! [ -e /dev/nvidiactl ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
  grep -q 'no NVIDIA driver: libcuda.so.1 cannot be loaded' "$D/out" && ok "backends: missing driver said" || bad "backends: missing driver reason"
  "$T" run examples/gemm.py --target cuda >"$D/out" 2>"$D/err"
  [ $? -eq 4 ] && grep -q "backend 'nvrtc' of target 'cuda' is not available: no NVIDIA driver" "$D/err" &&
    ok "run --target cuda without a driver: exit 4 and why" || bad "run --target cuda without a driver"
fi

# Target options: the arch is checked before anything is built; other targets take none.
"$T" compile examples/gemm.py --target cuda,arch=sm_9 -o "$D/x" >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && grep -q "unknown cuda arch 'sm_9' (supported: sm_80, sm_86, sm_89, sm_90, sm_90a)" "$D/err" &&
  ok "bad arch: usage error" || bad "bad arch"
TILEC_CUDA_ARCH=sm_7 "$T" compile examples/gemm.py --target cuda -o "$D/x" >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && grep -q "unknown cuda arch 'sm_7' from TILEC_CUDA_ARCH (supported: " "$D/err" &&
  ok "bad TILEC_CUDA_ARCH: usage error" || bad "bad TILEC_CUDA_ARCH"
TILEC_CUDA_ARCH=sm_7 "$T" ir --lowered --target cuda,arch=sm_86 examples/gemm.py >"$D/out" 2>"$D/err" &&
  grep -q "^# target cuda: arch sm_86" "$D/out" && ok "arch= wins over TILEC_CUDA_ARCH" || bad "arch= over TILEC_CUDA_ARCH"
TILEC_CUDA_ARCH=sm_89 "$T" ir --lowered --target cuda examples/gemm.py >"$D/out" 2>"$D/err" &&
  grep -q "^# target cuda: arch sm_89" "$D/out" && ok "TILEC_CUDA_ARCH gives the arch" || bad "TILEC_CUDA_ARCH"
"$T" compile examples/gemm.py --target cuda,opt=3 -o "$D/x" >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && grep -q "unknown option 'opt' for target 'cuda' (valid options: arch, clusters, streamk, plant)" "$D/err" &&
  ok "unknown cuda option" || bad "unknown cuda option"
"$T" compile examples/gemm.py --target cpu,arch=sm_80 -o "$D/x" >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && grep -q "unknown option 'arch' for target 'cpu' (cpu takes no options)" "$D/err" &&
  ok "cpu takes no options" || bad "cpu options"
"$T" compile examples/gemm.py >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && ok "compile needs -o" || bad "compile needs -o"
[ -e "$D/x" ] && bad "a failed compile left a file" || ok "failed compiles write nothing"

# cpu: the shared object.
"$T" compile examples/gemm.py -o "$D/gemm.so" 2>"$D/err" && head -c 4 "$D/gemm.so" | grep -q ELF &&
  ok "compile --target cpu writes the .so" || bad "compile cpu"

# cuda: a cubin with NVRTC alone, for both arches; until the emitter lands, it says so.
for arch in sm_80 sm_90a; do
  "$T" compile examples/gemm.py --target "cuda,arch=$arch" -o "$D/gemm_$arch.cubin" >"$D/out" 2>"$D/err"
  rc=$?
  if [ $rc -eq 0 ]; then
    head -c 4 "$D/gemm_$arch.cubin" | grep -q ELF && ok "compile cuda,arch=$arch writes a cubin" || bad "cubin $arch is not ELF"
    if cuobj=$(find_cuobjdump); then
      "$cuobj" -sass "$D/gemm_$arch.cubin" >"$D/sass" 2>"$D/err" && grep -q "Function :" "$D/sass" &&
        ok "cuobjdump -sass reads the $arch cubin" || bad "cuobjdump on the $arch cubin"
    fi
  elif [ $rc -eq 4 ] && grep -q "cuda code generator not built yet" "$D/err"; then
    ok "compile cuda,arch=$arch: the missing emitter is said (exit 4)"
  elif [ $rc -eq 4 ] && grep -q "NVRTC not found" "$D/err"; then
    echo "SKIP cuda: NVRTC absent"
  else
    bad "compile cuda,arch=$arch (exit $rc)"
  fi
done

# --explain: which instruction each T.gemm runs on, and why not wgmma (no GPU or NVRTC needed)
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain >"$D/out" 2>"$D/err"
grep -qx '// examples/gemm.py:44:17: T.gemm 128 x 128 x 32 (float16 x float16 -> float32): wgmma m64n128k16 f16, 1 warpgroup x 2 row blocks, A from shared memory, asynchronous mainloop' "$D/out" &&
  ok "explain: the default gemm on wgmma" || bad "explain: wgmma line"
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain -D threads=64 -D block_M=64 -D block_N=64 >"$D/out" 2>"$D/err"
grep -qx '// examples/gemm.py:44:17: T.gemm 64 x 64 x 32 (float16 x float16 -> float32): mma.sync over 1 x 2 warps; not wgmma: wgmma needs whole warpgroups and M a multiple of 16 rows per warp (64 threads: M a multiple of 32; the tile has 64)' "$D/out" &&
  ok "explain: why a gemm stays on mma.sync" || bad "explain: mma.sync reason"
# the pipelined loop: TMA where its tiles qualify, else cp.async and why not TMA
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain -D K=250 >"$D/out" 2>"$D/err"
grep -qx "// T.Pipelined(num_stages=3): 2 tiles per stage by cp.async, producers 1 iteration ahead; not TMA: 'A' has 250 columns, not a multiple of the tile's 64-byte panel (32 elements)" "$D/out" &&
  ok "explain: why a pipeline stays on cp.async" || bad "explain: cp.async reason"
# the example's own 128 x 128 x 32 blocks: A's 64-byte rows load by TMA in the 64-byte swizzle
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain >"$D/out" 2>"$D/err"
grep -qx "// T.Pipelined(num_stages=3): warp-specialized: a producer warpgroup (threads 128..255) loads 2 tiles per stage by TMA up to 3 stages ahead; the 128 consumer threads wait on full mbarriers and free stages on empty ones" "$D/out" &&
  ok "explain: 64-byte rows by TMA, warp-specialized" || bad "explain: 64-byte rows by TMA"
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 --kernel-only >"$D/out" 2>"$D/err"
grep -qx '// T.Pipelined(num_stages=4): warp-specialized: a producer warpgroup (threads 256..383) loads 2 tiles per stage by TMA up to 4 stages ahead; the 256 consumer threads wait on full mbarriers and free stages on empty ones; setmaxnreg moves registers from the producers to the consumers' "$D/out" &&
  grep -q 'const __grid_constant__ tcg_tmap tcg_tm1, const __grid_constant__ tcg_tmap tcg_tm2)' "$D/out" && grep -q '__launch_bounds__(384, 1)' "$D/out" &&
  grep -q 'tcg_setmaxnreg_inc<232>();' "$D/out" && grep -q 'tcg_setmaxnreg_dec<40>();' "$D/out" &&
  [ "$(grep -c '__syncthreads();' "$D/out")" = 1 ] &&
  [ "$(grep -c 'tcg_tma_load_any(' "$D/out")" = 2 ] && grep -q 'tcg_mbar_arrive_warp(' "$D/out" &&
  ok "explain: the pipeline on TMA, warp-specialized" || bad "explain: warp-specialized TMA line"
# the consumers of that GEMM share no memory outside the loop: no barrier between tiles; a bias
# staged in shared memory before the loop (read in the epilogue by other threads) keeps them
grep -qx '// consumers: no barrier between the warpgroups at a tile'"'"'s start, after its loop or at its end: outside the loop they share no memory, so one warpgroup'"'"'s epilogue overlaps the other'"'"'s next gemms' "$D/out" &&
  ! grep -q 'tcg_bar_consumers<' "$D/out" &&
  "$T" source tests/e2e/data/streamk_gemm.py --kernel bias_gemm --target cuda,arch=sm_90a --explain --kernel-only >"$D/out2" 2>"$D/err" &&
  ! grep -q '^// consumers:' "$D/out2" && grep -q 'tcg_bar_consumers<256>(); /\* the tile'"'"'s shared memory is free for the next \*/' "$D/out2" &&
  "$T" source tests/e2e/data/user_staged_epilogue.py --target cuda,arch=sm_90a --explain --kernel-only >"$D/out2" 2>"$D/err" &&
  ! grep -q '^// consumers:' "$D/out2" && grep -q 'tcg_bar_consumers<256>(); /\* the tile'"'"'s shared memory is free for the next \*/' "$D/out2" &&
  ok "explain: consumers run free between tiles where they share no memory, and meet where they do (a shared tile named as the lowering's own included)" || bad "explain: free consumers"
# the persistent walk's panels: as high as make a wave read the least, computed on the device
grep -q '^// persistent walk: T.use_swizzle'"'"'s panels are sqrt(G x 32768 / 16384) grid-y tiles high on a device of G blocks, not 10' "$D/out" &&
  grep -q 'const int tcg_panel = tcg_wave_panel((int)gridDim.x, 16384LL, 32768LL, tcg_gy);' "$D/out" &&
  ok "explain: the wave panels" || bad "explain: wave panels"
# the accumulator's store to C goes through shared memory: on sm_90, one TMA box per warp and
# 16-row chunk (lane 0 stores it, fenced, and waits before the tile is rewritten); where the tensor
# does not suit a tensor map, and before sm_90, whole 16-byte rows
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain --kernel-only >"$D/out" 2>"$D/err"
grep -qx '// T.copy(C_local -> C): the acc(128x128, warps 4x1, interleaved) accumulator through shared memory, TMA stores (cp.async.bulk.tensor) of 16 x 128-byte boxes, 4 tiles per warp' "$D/out" &&
  [ "$(grep -c 'tcg_tma_store(' "$D/out")" = 4 ] && [ "$(grep -c 'tcg_fence_async_shared();' "$D/out")" = 4 ] &&
  [ "$(grep -c 'tcg_tma_store_wait<0>();' "$D/out")" = 2 ] && ! grep -q 'tcg_tma_store_wait_read' "$D/out" &&
  tail -n 2 "$D/out" | grep -q 'tcg_tma_store_wait<0>(); /\* the shared tiles live until the stores are done \*/' &&
  ok "explain: the staged epilogue by TMA stores" || bad "explain: TMA-store epilogue line"
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain --kernel-only -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -qx '// T.copy(C_local -> C): the acc(128x256, warps 8x1) accumulator through shared memory, TMA stores (cp.async.bulk.tensor) of 16 x 128-byte boxes, 2 tiles per warp' "$D/out" &&
  [ "$(grep -c 'tcg_tma_store_wait_read<1>();' "$D/out")" = 2 ] &&
  ok "explain: TMA-store epilogue cycling through two tiles a warp" || bad "explain: two-tile TMA-store epilogue"
grep -qx "// T.Pipelined: no clusters: they are off; clusters of 2 could share this loop's tiles (the cuda target option clusters=on)" "$D/out" &&
  ! grep -q '__cluster_dims__' "$D/out" && ok "explain: clusters would apply, and are off by default" || bad "explain: clusters off"
# clusters=on (docs/cuda.md, "Clusters"): pairs of grid-y tiles share B's tile, half loaded by each
# block and multicast; each stage is freed on both blocks' barriers; the cluster meets after the
# barriers are made and before each role exits
"$T" source examples/gemm.py --target cuda,arch=sm_90a,clusters=on --explain --kernel-only -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -qx "// T.Pipelined: clusters of 2 blocks on consecutive grid-y tiles: each loads half of the 'B_shared' tile and multicasts it to both (TMA .multicast::cluster), and frees a stage on both blocks' empty mbarriers" "$D/out" &&
  grep -q '__launch_bounds__(384, 1) __cluster_dims__(2, 1, 1) tilec_matmul(' "$D/out" &&
  [ "$(grep -c 'tcg_tma_load_multicast<2, 16384u, 4>(' "$D/out")" = 1 ] && [ "$(grep -c 'tcg_tma_load_any(' "$D/out")" = 1 ] &&
  grep -q 'tcg_mbar_arrive_cluster<2>(' "$D/out" && ! grep -q 'tcg_mbar_arrive_warp(' "$D/out" &&
  grep -q '(int)(4), (int)(16));' "$D/out" && [ "$(grep -c 'tcg_cluster_sync();' "$D/out")" = 3 ] &&
  [ "$(grep -c 'tcg_by = tcg_by \* 2 + tcg_rank;' "$D/out")" = 2 ] &&
  ok "clusters=on: B multicast in clusters of two" || bad "clusters=on: source"
"$T" source examples/gemm.py --target cuda,arch=sm_90a,clusters=on --explain --kernel-only -D M=384 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -qx "// T.Pipelined: no clusters: the grid's y extent is not a constant multiple of 2" "$D/out" && ! grep -q '__cluster_dims__' "$D/out" &&
  ok "clusters=on: an odd number of row tiles keeps single blocks, and says why" || bad "clusters=on: odd grid"
# streamk=on (docs/cuda.md, "Stream-K"): the persistent walk may cut tiles along k; the kernel takes
# the workspace, the consumers hand partial sums over; off by default, and the note says so
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain --kernel-only -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -qx "// no stream-K: it is off; the persistent blocks could cut the last waves' tiles along the k loop (the cuda target option streamk=on)" "$D/out" &&
  ! grep -q 'tcg_sk_' "$D/out" && ok "explain: stream-K would apply, and is off by default" || bad "explain: stream-K off"
"$T" source examples/gemm.py --target cuda,arch=sm_90a,streamk=on --explain --kernel-only -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -q "^// stream-K: when the tiles do not fill the waves of persistent blocks, the last two waves' tiles (or all, when there are fewer tiles than blocks) are cut along the k loop.*head first.*(131072 bytes a block" "$D/out" &&
  grep -q 'unsigned char \*__restrict__ tcg_sk_ws, const __grid_constant__ tcg_tmap tcg_tm0' "$D/out" &&
  [ "$(grep -c 'tcg_sk_walk tcg_sk = tcg_sk_schedule(tcg_tiles, tcg_iters);' "$D/out")" = 1 ] &&
  [ "$(grep -c 'if (tcg_next >= tcg_sk.dp && !tcg_sk_piece(tcg_sk, tcg_iters, tcg_tile, tcg_k0, tcg_k1)) break;' "$D/out")" = 2 ] &&
  [ "$(grep -c 'tcg_pipe += tcg_k1 - tcg_k0;' "$D/out")" = 2 ] && [ "$(grep -c 'tcg_sk_put4(' "$D/out")" = 1 ] &&
  grep -q 'tcg_sk_signal<256>((unsigned \*)tcg_sk_ws + blockIdx.x);' "$D/out" &&
  grep -q 'tcg_sk_wait<256>((unsigned \*)tcg_sk_ws + tcg_below);' "$D/out" &&
  grep -q 'if (!tcg_sk_shared_below(tcg_sk, tcg_below, tcg_tile, tcg_iters)) break;' "$D/out" &&
  ok "streamk=on: pieces of tiles, partial sums handed over" || bad "streamk=on: source"
"$T" source examples/flash_attention.py --target cuda,arch=sm_90a,streamk=on --explain --kernel-only -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2 -D is_causal=False >"$D/out" 2>"$D/err"
grep -q "^// no stream-K: the loop's consumers do more than sum gemms" "$D/out" && ! grep -q 'tcg_sk_' "$D/out" &&
  ok "streamk=on: attention is not a sum along its loop, and says so" || bad "streamk=on: attention"
"$T" source tests/e2e/data/streamk_gemm.py --kernel bias_gemm --target cuda,arch=sm_90a,streamk=on --explain --kernel-only >"$D/out" 2>"$D/err"
grep -q "^// stream-K: when the tiles" "$D/out" && grep -q 'tcg_sk_piece(' "$D/out" &&
  "$T" source tests/e2e/data/streamk_gemm.py --kernel seeded_gemm --target cuda,arch=sm_90a,streamk=on --explain --kernel-only >"$D/out" 2>"$D/err" &&
  grep -qx "// no stream-K: the tile writes global memory or an accumulator before the loop (a piece of a tile runs that part again)" "$D/out" &&
  ! grep -q 'tcg_sk_' "$D/out" && ok "streamk=on: a bias staged before the loop allows the cut, an accumulator seeded before it does not" ||
  bad "streamk=on: what comes before the loop"
"$T" source examples/gemm.py --target cuda,streamk=maybe >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && grep -q "streamk=maybe: expected streamk=on or streamk=off" "$D/err" && ok "streamk=: bad value is a usage error" ||
  bad "streamk=: bad value"
"$T" source examples/gemm.py --target cuda,clusters=sometimes >"$D/out" 2>"$D/err"
[ $? -eq 2 ] && grep -q "clusters=sometimes: expected clusters=on or clusters=off" "$D/err" && ok "clusters=: bad value is a usage error" ||
  bad "clusters=: bad value"
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain --kernel-only -D M=200 -D N=136 -D K=96 >"$D/out" 2>"$D/err"
grep -qx "// T.copy(C_local -> C): not by TMA stores: the last two dimensions of 'C' are not constants with columns a multiple of 64" "$D/out" &&
  grep -qx '// T.copy(C_local -> C): the acc(128x128, warps 4x1, interleaved) accumulator through shared memory, 16-byte stores of whole rows' "$D/out" &&
  grep -q 'b[0-9]*_tcg_epilogue' "$D/out" && grep -q '__syncwarp();' "$D/out" && ! grep -q 'tcg_tma_store' "$D/out" &&
  ok "explain: the staged epilogue in 16-byte stores, and why not TMA" || bad "explain: staged epilogue line"
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain --kernel-only -D M=136 -D N=128 -D K=384 -D block_M=64 -D block_K=64 -D threads=128 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -qx "// T.copy(C_local -> C): not by TMA stores: two 16-row tiles per warp do not fit beside the kernel's 99456 bytes of shared memory without costing a block per SM" "$D/out" &&
  ok "explain: no TMA-store epilogue at the cost of a block per SM" || bad "explain: TMA-store epilogue and occupancy"
# sm_90 (no setmaxnreg), and pass_configs turning warp specialization off: the block-wide TMA pipeline
"$T" source examples/gemm.py --target cuda,arch=sm_90 --explain -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 --kernel-only >"$D/out" 2>"$D/err"
grep -qx '// T.Pipelined(num_stages=4): not warp-specialized: the arch is not sm_90a (setmaxnreg)' "$D/out" &&
  grep -qx '// T.Pipelined(num_stages=4): 2 tiles per stage by TMA (cp.async.bulk.tensor), mbarrier waits, producers 3 iterations ahead' "$D/out" &&
  grep -q '__launch_bounds__(256)' "$D/out" && ! grep -q 'tcg_setmaxnreg' "$D/out" &&
  ok "explain: TMA without warp specialization on sm_90" || bad "explain: sm_90 TMA line"
sed 's/@tilelang.jit(out_idx=\[-1\])/@tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_warp_specialized": True})/' examples/gemm.py >"$D/gemm_nows.py"
"$T" source "$D/gemm_nows.py" --target cuda,arch=sm_90a --explain -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out" 2>"$D/err"
grep -qx '// T.Pipelined(num_stages=4): not warp-specialized: pass_configs turns it off (tl.disable_warp_specialized)' "$D/out" &&
  grep -qx '// T.Pipelined(num_stages=4): 2 tiles per stage by TMA (cp.async.bulk.tensor), mbarrier waits, producers 2 iterations ahead' "$D/out" &&
  ok "explain: pass_configs turns warp specialization off" || bad "explain: tl.disable_warp_specialized"
# attention's two consumer warpgroups take turns at the tensor cores (src/gpu/pingpong.c), and
# one consumer warpgroup has nobody to take turns with, and says so
FA="-D batch=1 -D heads=2 -D seq_len=512 -D dim=128 -D block_M=128 -D block_N=128 -D threads=256"
"$T" source examples/flash_attention.py --target cuda,arch=sm_90a --explain --kernel-only $FA -D num_stages=2 >"$D/out" 2>"$D/err"
grep -qx "// T.Pipelined: the 2 consumer warpgroups take turns at the tensor cores: each starts its first gemm after the previous one has, so one's softmax runs beside the others' gemms" "$D/out" &&
  [ "$(grep -c 'tcg_wg_turn_wait();' "$D/out")" = 2 ] && ! grep -q 'tcg_wg_turn_pass' "$D/out" &&
  grep -Eq 'tcg_wg_turn_wait\(\);$' "$D/out" && grep -Eq 'tcg_wgmma_ss<128, 128, 128, 8, 0, 1, 128, 128, tcg_f16, 0, 2, 0>\(' "$D/out" &&
  grep -Eq 'tcg_wgmma_rs<128, 128, 128, 8, 0, 128, tcg_f16, 0, 0, 0>\(' "$D/out" &&
  grep -q 'tcg_wg_turn_init<2>();' "$D/out" && ok "explain: attention's warpgroups take turns" || bad "warpgroup turns"
# each warpgroup overlaps its softmax with its own P V (src/gpu/overlap.c): the loop is peeled into
# the first block (QK^T awaited), the others (QK^T of block k issued, then P V of block k-1, which
# waits for QK^T only, the softmax, then the wait for P V and the free of k-1's V stage before P
# is written) and the last P V; K and V have barriers of their own (pipeline.c's groups)
grep -qx "// T.Pipelined: each consumer warpgroup issues the second gemm of block k-1 behind the first gemm of block k and runs the work between them while it runs (FlashAttention-3's intra-warpgroup overlap)" "$D/out" &&
  grep -qx "// T.Pipelined: the tiles of a stage come in 2 groups with barriers of their own, each awaited before the statement that reads it first and freed after the one that reads it last" "$D/out" &&
  awk '/tcg_wgmma_ss<128, 128, 128, 8, 0, 1, 128, 128, tcg_f16, -1, 0, 0>\(/ { s = NR }
       /tcg_wgmma_rs<128, 128, 128, 8, 0, 128, tcg_f16, 1, 2, 0>\(/ && s == NR - 1 { r = NR }
       /tcg_fast_exp2f/ && r && !e { e = NR }
       /tcg_wgmma_wait<0>\(\);/ && e && !w { w = NR }
       /tcg_mbar_arrive_warp/ && w == NR - 1 { a = NR }
       /tcg_f32_to_float16_fast/ && a && !c { c = NR }
       END { exit !(s && r && e > r && w > e && a && c > a) }' "$D/out" &&
  grep -q 'if ((v[0-9]*_n_pipe) > 0) {' "$D/out" &&
  ok "explain: each warpgroup's softmax runs beside its own P V" || bad "intra-warpgroup overlap"
# work after the second gemm (here a row update behind P V) keeps the loop as written, and says why
python3 - "$D/fa_after.py" <<'PYEOF'
import sys
s = open("examples/flash_attention.py").read()
rescale = "                for i, j in T.Parallel(block_M, dim):\n                    acc_o[i, j] *= scores_scale[i]\n"
pv = "                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)\n"
assert rescale in s and pv in s
s = s.replace(rescale, "").replace(pv, pv + "                for i in T.Parallel(block_M):\n                    logsum[i] = logsum[i] + 0\n")
open(sys.argv[1], "w").write(s)
PYEOF
"$T" source "$D/fa_after.py" --target cuda,arch=sm_90a --explain --kernel-only $FA -D num_stages=2 >"$D/out3" 2>"$D/err"
grep -qx '// T.Pipelined: the consumers await each gemm before the work after it (no overlap: work after the second gemm)' "$D/out3" &&
  ! grep -q 'tcg_f16, -1' "$D/out3" && ok "explain: no overlap with work after the second gemm" || bad "overlap refusal"
# Q, which threads store before the loop, is fenced for the wgmma once, not at every QK^T
[ "$(grep -c 'tcg__fence_proxy_async();' "$D/out")" = 1 ] && ! grep -Eq 'tcg_wgmma_ss<[^>]*, 1>\(' "$D/out" &&
  ok "one proxy fence before the attention loop" || bad "hoisted proxy fence"
# fence.proxy.async only where threads write a wgmma's shared operand: attention's Q (stored by
# threads) keeps it, the TMA-fed GEMM mainloop and attention's V do not
"$T" source examples/gemm.py --target cuda,arch=sm_90a --kernel-only -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 >"$D/out2" 2>"$D/err"
grep -q 'tcg_wgmma_ss<128, 256, 64, 8, 0, 0, 64, 256, tcg_f16, 1, 0, 0>(' "$D/out2" &&
  grep -q 'tcg_wgmma_rs<128, 128, 128, 8, 0, 128, tcg_f16, 0, 0, 0>(' "$D/out" &&
  ok "no proxy fence for tiles only TMA writes" || bad "proxy fence selection"
# ptxas keeps the turn where it pays: the pass (BAR.ARV) the next instruction after the last QK^T HGMMA,
# before its wait (WARPGROUP.DEPBAR), and the softmax's exponentials after both
if cuobj=$(find_cuobjdump) && "$T" compile examples/flash_attention.py --target cuda,arch=sm_90a $FA -D num_stages=2 -o "$D/fa.cubin" 2>"$D/err"; then
  "$cuobj" -sass "$D/fa.cubin" | awk '
    /HGMMA/ && /gsb0/ && !g { g = NR }
    /BAR.ARV R/ && g && !a { a = NR }
    /WARPGROUP.DEPBAR/ && a && !w { w = NR }
    /MUFU.EX2/ && w && !e { e = NR }
    END { exit !(g && a > g && a <= g + 2 && w > a && e > w) }' && ok "sass: the turn passes once QK^T is issued" || bad "sass: turn placement"
  # the overlap in SASS: the wait that leaves one gemm (P V) running, the exponentials after it,
  # and only then the wait for everything
  "$cuobj" -sass "$D/fa.cubin" | awk '
    /WARPGROUP.DEPBAR.LE gsb0, 0x1/ && !one { one = NR }
    /MUFU.EX2/ && one && !e { e = NR }
    /WARPGROUP.DEPBAR.LE gsb0, 0x0/ && e && !z { z = NR }
    END { exit !(one && e > one && z > e) }' && ok "sass: the softmax runs while P V does" || bad "sass: overlap placement"
fi
"$T" source examples/flash_attention.py --target cuda,arch=sm_90a --explain --kernel-only $FA -D num_stages=2 -D block_M=64 -D threads=128 >"$D/out" 2>"$D/err"
grep -qx '// T.Pipelined: the consumer warpgroups run in step (no turns at the tensor cores: one consumer warpgroup)' "$D/out" &&
  ! grep -q 'tcg_wg_turn' "$D/out" && ok "explain: no turns for one warpgroup" || bad "turns refused for one warpgroup"
# fast math only where the kernel asks for it (flash_attention.py sets TL_ENABLE_FAST_MATH)
"$T" source examples/flash_attention.py --target cuda,arch=sm_90a --kernel-only >"$D/out" 2>"$D/err"
"$T" source examples/softmax.py --target cuda,arch=sm_90a --kernel-only -D m=256 >"$D/out2" 2>"$D/err"
grep -q 'tcg_fast_exp2f(' "$D/out" && ! grep -q 'tcg_fast_exp2f(' "$D/out2" && grep -q 'exp2f(' "$D/out2" &&
  ok "fast math where pass_configs asks for it, exact exp2 elsewhere" || bad "fast math selection"
# fast math: the bare cvt to float16 (no NaN check) and FMNMX for max; NaN rules elsewhere
grep -q 'tcg_f32_to_float16_fast(' "$D/out" && grep -q 'fmaxf(' "$D/out" && ! grep -q 'tcg_f32_to_float16_fast(' "$D/out2" &&
  ! grep -q 'fmaxf(' "$D/out2" && ok "fast math: bare conversions and max" || bad "fast math conversions"
# float16 / float8 conversions run as the bare instructions; each element loop and each vector
# copy group notes a NaN and then runs again with the exact conversions (tests/gpu/nan_paths.sh
# checks the results on a GPU); a tile copy's vector groups note NaNs for one check after the run
C=tests/gpu/data/conversions.py
"$T" source $C --target cuda,arch=sm_90a --kernel-only >"$D/out3" 2>"$D/err"
grep -q 'tcg_f32_to_float8_e4m3fn_raw_chk(' "$D/out3" && grep -q '^ *if (tcg_isnan(tcg_nan[0-9]*)) {' "$D/out3" &&
  grep -q 'tcg_nan_note(tcg_f0, tcg_nan[0-9]*);' "$D/out3" && ok "conversions: bare, with a NaN check and an exact rerun" || bad "conversions: NaN-checked fast path"
for arch in sm_80 sm_90a; do
  "$T" compile $C --target cuda,arch=$arch -o "$D/conv_$arch.cubin" >"$D/out" 2>"$D/err" && ok "conversions compile for $arch" || bad "conversions compile for $arch"
done
if cuobj=$(find_cuobjdump) && [ -f "$D/conv_sm_90a.cubin" ]; then
  "$cuobj" -sass "$D/conv_sm_90a.cubin" >"$D/sass" 2>"$D/err"
  grep -q 'F2FP.SATFINITE.E4M3.F32' "$D/sass" && grep -q 'F2FP.SATFINITE.E5M2.F32' "$D/sass" &&
    ok "sass: float8 encoded by the hardware conversion" || bad "sass: float8 conversion instruction"
fi
# a thread's runs of consecutive fragment elements move as one vector access
grep -Eq 'const uint[24] tcg_v = \*\(const uint[24] \*\)' "$D/out2" && ok "fragment copies vectorized" || bad "no vectorized fragment copy"
"$T" source examples/flash_attention.py --target cuda,arch=sm_80 --explain >"$D/out" 2>"$D/err"
[ "$(grep -c 'mma.sync over 4 x 1 warps; not wgmma: the arch has no wgmma (sm_90a only)' "$D/out")" = 2 ] &&
  ok "explain: sm_80 has no wgmma" || bad "explain: sm_80 reason"

# Generated code reads as the program was written (issue 37): index arithmetic that cannot overflow
# (analysis/range.c) is printed with C's own operators, not through unsigned casts, and constant
# guards and loop bounds are folded
for a in sm_80 sm_90a; do
  "$T" source examples/gemm.py --target cuda,arch=$a --kernel-only >"$D/src" 2>"$D/err"
  if ! grep -q ' \* (uint32_t)\| + (uint32_t)' "$D/src" && ! grep -q '1 &&\|&& 1)\|(0) + (' "$D/src" &&
     { [ $a != sm_80 ] || grep -q 'int32_t v[0-9]*_e_[0-9]* = (v[0-9]*_it_[0-9]* \* 128) + ((int)threadIdx.x);' "$D/src"; }; then
    ok "gemm.py on $a: plain index arithmetic, no constant guards"
  else bad "gemm.py on $a: wrapping casts or constant guards left in the source"; grep -m 3 ' \* (uint32_t)\|1 &&\|(0) + (' "$D/src"; fi
done

# A vector as long as the block, tied to no tile (split-KV decoding's combine): one element a
# thread, not all 128 in every thread
"$T" source tests/e2e/data/compat/split_combine.py --kernel combine --target cuda,arch=sm_90a --kernel-only >"$D/src" 2>"$D/err"
if grep -q 'float b[0-9]*_acc\[1\];' "$D/src" && grep -q 'float b[0-9]*_lmax\[1\];' "$D/src" && ! grep -q '\[128\];' "$D/src"; then
  ok "split-KV combine: one element of each 128-long vector a thread"
else bad "split-KV combine: vectors not dealt over the block"; grep -m 5 '\[[0-9]*\];' "$D/src"; fi

# A GEMV reducer in a pipelined loop over K: its replicas are combined once after the loop (no
# barrier pairs in every step), and its column vector of x holds 8 elements a thread, not 128
"$T" source tests/e2e/data/compat/reducer_loop.py --kernel gemv_reducer --target cuda,arch=sm_90a --explain --kernel-only \
  >"$D/src" 2>"$D/err"
if grep -q '^// combines: 1 T.Parallel combine' "$D/src" && grep -q 'uint16_t b[0-9]*_x_f\[8\];' "$D/src" &&
   [ "$(sed -n '/for (int32_t v[0-9]*_k_pipe = 0/,/^  }$/p' "$D/src" | grep -c '__syncthreads')" = 1 ]; then
  ok "GEMV reducer: one barrier a step, combined after the loop, x by columns"
else bad "GEMV reducer: combine or column vector not as expected"; grep -m 3 'combines\|x_f\[' "$D/src"; fi
"$T" source tests/e2e/data/compat/reducer_loop.py --kernel running_sum --target cuda,arch=sm_90a --explain --kernel-only \
  >"$D/src" 2>"$D/err"
if ! grep -q '^// combines:' "$D/src"; then ok "a combine whose fragment the loop reads stays in the loop"
else bad "running_sum: a combine was moved out of a loop that reads its fragment"; fi

# A latent-cache decode step at DeepSeek MLA decode's sizes (dim 512, 64-row tiles, 2 stages) fits
# sm_90a's shared memory: the output tile takes dead tiles' memory and the row reductions over 8
# warps take a slot per warp and row (it was refused at 237,568 bytes against 232,448)
"$T" source tests/e2e/data/compat/latent_decode.py -D dim=512 -D pe_dim=64 -D block_N=64 -D seq=8192 -D heads=128 \
  --target cuda,arch=sm_90a --explain --kernel-only >"$D/src" 2>"$D/err"
if grep -q '^// shared memory: 23[0-2][0-9][0-9][0-9] bytes' "$D/src"; then ok "latent decode at MLA sizes fits sm_90a"
else bad "latent decode at MLA sizes: $(grep -h 'shared memory' "$D/src" "$D/err" | head -n 1)"; fi
