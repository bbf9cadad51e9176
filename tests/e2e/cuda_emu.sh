#!/bin/sh
# The cuda target without a GPU (docs/cuda.md, "The emulator"): every line of
# tests/e2e/examples.list runs on the emulator (backend emu: the CUDA C++ NVRTC would compile,
# built by the host C++ compiler, every CUDA thread a fiber on the CPU) for sm_90a (wgmma, TMA,
# warp specialization, persistent blocks, TMA stores) and sm_80 (mma.sync, ldmatrix, cp.async),
# and is verified against the reference interpreter; the warp-specialized GEMMs also with
# clusters of two (TMA multicast, cluster mbarrier arrivals), with stream-K (tiles cut along k)
# and on a device of one multiprocessor (a persistent block walks every tile); sm_90a again with the threads resumed in
# reverse order (TILEC_EMU_ORDER=reverse), so a missing barrier shows whichever way it races.
# About 2 minutes on 2 cores.
T=${TILEC:-build/tilec}
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "cuda emu: no C++ compiler (${TILEC_EMU_CXX:-c++}): the emulator cannot run, nothing checked"
  exit 0
fi
J=$(nproc 2>/dev/null || echo 2)
. tests/e2e/sanitized.sh
sampled_note cuda_emu

case_sh='
T=$1; tgt=$2; line=$3
sms=; case "$line" in SMS=*) sms=${line%% *}; line=${line#* };; esac
order=forward; case "$line" in reverse\ *) order=reverse; line=${line#* };; esac
file=${line%% *}; args=${line#"$file"}
# shellcheck disable=SC2086
out=$(env TILEC_CUDA_EMU_${sms:-SMS=4} TILEC_EMU_ORDER=$order timeout 600 "$T" run "examples/$file" $args --target "$tgt" --backend emu --verify 2>&1); rc=$?
[ $order = reverse ] && sms="$sms reverse"
if [ $rc -eq 0 ]; then printf "PASS cuda emu %s %s %s\n" "$tgt" "$sms" "$line"
else printf "FAIL cuda emu %s %s %s (exit %s)\n%s\n" "$tgt" "$sms" "$line" "$rc" "$(echo "$out" | tail -n 8 | sed "s/^/    /")"; fi'

# sm_80 has 163 KB of shared memory per block: the 128 x 128 attention lines (192 KB of tiles one
# after another) run there because the output's tile takes the memory of K and V's stages
# the warp-specialized GEMMs (128 x 256 tiles): clusters of two share B's tile
ws_gemm='block_N=256 -D block_K'
{
  for arch in sm_90a sm_80; do
    grep -v -e '^#' -e '^$' tests/e2e/examples.list | sed 's/[[:space:]]*$//' |
      sed "s/^/cuda,arch=$arch|/"
  done
  # the threads resumed from the last: a write that runs before a read of the old value shows
  grep -v -e '^#' -e '^$' tests/e2e/examples.list | sed 's/[[:space:]]*$//' | sed 's/^/cuda,arch=sm_90a|reverse /'
  grep -e "$ws_gemm" tests/e2e/examples.list | sed 's/^/cuda,arch=sm_90a,clusters=on|/'
  # more tiles than the device holds: each block (each cluster) walks several, the producer
  # loading the next tile's stages while the consumers store the last
  for t in cuda,arch=sm_90a cuda,arch=sm_90a,clusters=on; do
    echo "$t|SMS=1 gemm.py -D M=512 -D N=512 -D K=256 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4"
    echo "$t|SMS=3 gemm.py -D M=520 -D N=264 -D K=200 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=3"
  done
  # stream-K (streamk=on, docs/cuda.md "Stream-K"): more tiles than blocks, not a multiple of them:
  # the last waves' tiles cut along k, a block's partial sums added by the block finishing the tile
  # (6 tiles on 4 blocks: every tile cut; 10 on 3 and 12 on 5: whole tiles first, then the cut;
  # 2 on 5 and 3 on 7, fewer tiles than blocks: a tile spread over three ranges, middle pieces)
  G4='-D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4'
  for o in "" "reverse "; do
    echo "cuda,arch=sm_90a,streamk=on|SMS=4 ${o}gemm.py -D M=256 -D N=768 -D K=512 $G4"
    echo "cuda,arch=sm_90a,streamk=on|SMS=3 ${o}gemm.py -D M=520 -D N=264 -D K=1000 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=3"
    echo "cuda,arch=sm_90a,streamk=on|SMS=5 ${o}gemm.py -D M=300 -D N=1000 -D K=640 $G4"
    echo "cuda,arch=sm_90a,streamk=on|SMS=5 ${o}gemm.py -D M=256 -D N=256 -D K=1024 $G4"
    echo "cuda,arch=sm_90a,streamk=on|SMS=7 ${o}gemm.py -D M=384 -D N=200 -D K=640 $G4"
  done
  echo "cuda,arch=sm_90a,streamk=on|SMS=4 gemm.py -D M=256 -D N=768 -D K=512 -D dtype=bfloat16 $G4"
  echo "cuda,arch=sm_90a,streamk=on|SMS=4 gemm.py -D M=640 -D N=256 -D K=512 -D block_M=128 -D block_N=128 -D block_K=64 -D threads=128 -D num_stages=4"
  echo "cuda,arch=sm_90a,streamk=on|SMS=4 gemm_fp8.py -D M=256 -D N=768 -D K=1024 -D block_M=128 -D block_N=256 -D block_K=128 -D threads=256 -D num_stages=3"
  grep -e "$ws_gemm" tests/e2e/examples.list | sed 's/^/cuda,arch=sm_90a,streamk=on|/'
  # a bias staged in shared memory before the loop (run again by each piece), and an accumulator
  # seeded with the bias (tiles walked whole)
  for k in bias_gemm seeded_gemm; do
    echo "cuda,arch=sm_90a,streamk=on|SMS=4 ../tests/e2e/data/streamk_gemm.py --kernel $k"
    echo "cuda,arch=sm_90a,streamk=on|SMS=5 reverse ../tests/e2e/data/streamk_gemm.py --kernel $k -D M=300 -D N=1000 -D K=640"
  done
  # an epilogue through a shared tile of the program's own, read back by other threads: the
  # consumers keep their barriers between tiles (without them this fails in both orders)
  for o in "" "reverse "; do echo "cuda,arch=sm_90a|SMS=2 ${o}../tests/e2e/data/user_staged_epilogue.py"; done
  echo "cuda,arch=sm_90a|SMS=1 flash_attention.py -D seq_len=384 -D dim=128 -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
  # T.alloc_reducer updated from T.Parallel loops wider than its shape: the threads' copies
  # are combined after each loop (sum, max, min, a subtraction; partial blocks; one warp)
  for arch in sm_90a sm_80; do
    echo "cuda,arch=$arch|../tests/e2e/data/compat/alloc_reducer.py -D R=192 -D C=96"
    echo "cuda,arch=$arch|../tests/e2e/data/compat/alloc_reducer.py -D R=100 -D C=70 -D threads=32"
    # global tensors placed by their own T.Layout (flash attention's backward dQ): every access
    # goes through the layout, and no vector, cp.async, TMA or staged path touches them
    for k in accumulate unpermute pipelined_operand; do echo "cuda,arch=$arch|../tests/e2e/data/compat/global_layout.py --kernel $k"; done
    # a gemm's B operand computed in a fragment, read through a shared tile (stage_operands.c)
    echo "cuda,arch=$arch|../tests/e2e/data/compat/gemm_fragment_b.py"
    echo "cuda,arch=$arch|reverse ../tests/e2e/data/compat/gemm_fragment_b.py -D trans_B=True"
    # a gemm's A fragment laid out for other statements, read through a shared tile (the lowering
    # tries again with it staged: stage_operands.c)
    echo "cuda,arch=$arch|../tests/e2e/data/compat/gemm_fragment_a.py --kernel scaled_gemm"
    echo "cuda,arch=$arch|reverse ../tests/e2e/data/compat/gemm_fragment_a.py --kernel scaled_gemm -D trans_A=True"
    echo "cuda,arch=$arch|../tests/e2e/data/compat/gemm_fragment_a.py --kernel two_gemms"
    # T.rng_rand: cuRAND's Philox4_32_10, bit for bit (one generator per thread, or a block of one
    # thread drawing in a T.Parallel loop)
    for k in per_thread one_thread; do echo "cuda,arch=$arch|../tests/e2e/data/compat/rng.py --kernel $k"; done
    # a view of an accumulator that splits its last dimension (the lightning indexer's
    # T.reshape): its loops run over the accumulator, its reduction folds each group
    for o in "" "reverse "; do echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/fragment_view.py"; done
    echo "cuda,arch=$arch|../tests/e2e/data/compat/fragment_view.py -D N=128 -D Q=2 -D H=64 -D threads=256"
    # per-thread cells allocated inside a T.Parallel body: one per copy of the body
    echo "cuda,arch=$arch|../tests/e2e/data/compat/parallel_cells.py"
    # gemms the tensor cores cannot take (a 64 x 1 accumulator, K of 1): a loop per thread
    for l in "small_gemm -D M=64 -D N=1 -D K=32" "small_gemm -D M=64 -D N=1 -D K=32 -D trans_B=True" \
      "small_gemm -D M=64 -D N=32 -D K=1 -D trans_A=True" "small_gemm -D M=20 -D N=12 -D K=40 -D clear=True -D threads=64" \
      "grouped_scores" "grouped_scores -D G=4 -D threads=128"; do
      echo "cuda,arch=$arch|../tests/e2e/data/compat/simt_gemm.py --kernel $l"
    done
    # gemm operands that are column slices of a shared tile, copied to tiles of their own
    for k in split_q b_columns; do echo "cuda,arch=$arch|../tests/e2e/data/compat/gemm_shared_slice.py --kernel $k"; done
    # while loops on runtime conditions: tile operations and a pipelined gemm inside, a condition
    # the body writes in shared memory (a barrier before each evaluation), a per-thread loop
    echo "cuda,arch=$arch|../tests/e2e/data/compat/runtime_while.py"
    # fragments a T.Parallel loop uses at elements its threads do not hold: kept in shared memory
    for o in "" "reverse "; do
      for k in neighbour_rows column_accumulator accumulator_rows; do echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/fragment_demoted.py --kernel $k"; done
    done
    # a row vector in shared memory updated from a loop over rows every thread of a row holds: once
    # a row (it was added 16 times); and the latent-cache decode kernel that found it
    for o in "" "reverse "; do
      echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/shared_row_update.py"
      echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/latent_decode.py"
    done
    # vectors as long as the block (split-KV decoding's combine): one element a thread; read at
    # elements other threads hold; shorter than the block
    for o in "" "reverse "; do
      for k in combine neighbours short_vec; do echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/split_combine.py --kernel $k"; done
    done
    # combines of replicated fragments in serial loops: moved after the loop (a GEMV reducer), kept in
    # the loop where it reads the fragment, a start value that is not the op's identity
    for o in "" "reverse "; do
      for k in gemv_reducer running_sum max_from_five; do echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/reducer_loop.py --kernel $k"; done
    done
    # column vectors beside a gemm accumulator: FullRow, FullCol, a replicated accumulator
    for o in "" "reverse "; do
      for d in "" "-D full_col=True" "-D threads=256 -D M=32 -D N=64" "-D threads=256 -D full_col=True"; do
        echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/column_vectors.py $d"
      done
    done
    # T.isnan / T.isinf / T.isfinite on NaN and infinities the kernel makes
    for d in "" "-D dtype=float16"; do echo "cuda,arch=$arch|../tests/e2e/data/compat/fp_classes.py $d"; done
    # T.alloc_global workspaces: zeroed memory after the parameters (atomic counters in them, a
    # workspace two launches share)
    echo "cuda,arch=$arch|../tests/e2e/data/compat/atomic_prev.py"
    echo "cuda,arch=$arch|../tests/e2e/data/compat/multi_launch.py --kernel workspace"
    for o in "" "reverse "; do
      echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/while_gemm.py --kernel streamed_gemm"
      echo "cuda,arch=$arch|${o}../tests/e2e/data/compat/while_gemm.py --kernel shared_cursor"
    done
    # views of global tensors (T.Tensor(shape, dtype, X.data)): pointers to their tensors
    echo "cuda,arch=$arch|../tests/e2e/data/compat/global_views.py"
    # T.reinterpret: bits read as another dtype (float16, bfloat16, float8, float32, float64)
    echo "cuda,arch=$arch|../tests/e2e/data/compat/reinterpret_bits.py --kernel bits -D N=64"
    echo "cuda,arch=$arch|../tests/e2e/data/compat/reinterpret_bits.py --kernel widths -D N=64"
    echo "cuda,arch=$arch|../tests/e2e/data/compat/reinterpret_bits.py --kernel narrow_widths -D N=64"
  done
  # tiles of disjoint lifetimes sharing shared memory (more than sm_80's 163 KiB one after
  # another), in both thread orders: a missing barrier before a tile takes another's memory shows
  for o in "" "reverse "; do
    echo "cuda,arch=sm_80|${o}../tests/e2e/data/compat/smem_reuse.py --kernel gemm_then_tile -D M=256 -D N=256 -D block_M=128 -D block_N=128 -D block_K=64 -D stages=4 -D threads=256"
    echo "cuda,arch=sm_80|${o}../tests/e2e/data/compat/smem_reuse.py --kernel two_phases -D rows=128 -D cols=192 -D threads=256"
  done
} | one_per_key | while IFS='|' read -r tgt line; do printf '%s\0%s\0' "$tgt" "$line"; done |
  xargs -0 -n 2 -P "$J" sh -c "$case_sh" sh "$T"

# the arch rule without a device: sm_80 unless the target names one
out=$("$T" run examples/elementwise.py --target cuda --backend emu --verify 2>&1)
case "$out" in
*"on cuda/emu"*"verify D: ok"*) echo "PASS cuda emu: --target cuda --backend emu runs without a GPU" ;;
*) printf 'FAIL cuda emu: --target cuda --backend emu\n%s\n' "$out" ;;
esac
# tilec verify lists the emulator beside the other backends
out=$("$T" verify examples/softmax.py -D m=37 -D N=300 2>&1)
case "$out" in
*"cuda/emu "*" yes  yes"*) echo "PASS cuda emu: tilec verify runs the emulator" ;;
*) printf 'FAIL cuda emu: tilec verify\n%s\n' "$out" ;;
esac
# T.atomic_add(..., return_prev=True): the thread's cell receives atomicAdd's result (int32,
# float32) or the element the compare-and-swap of a float16 replaced; slot lists verify as
# multisets along the dimension the slots index
C=tests/e2e/data/compat
for arch in sm_90a sm_80; do
  out=$("$T" run "$C/atomic_prev_shared.py" --target cuda,arch=$arch --backend emu --verify 2>&1)
  case "$out" in
  *"verify Hist: ok"*"verify Ref: ok"*) echo "PASS cuda emu $arch: return_prev on shared int32, float32 and float16 counters" ;;
  *) printf 'FAIL cuda emu %s: return_prev\n%s\n' "$arch" "$out" ;;
  esac
  out=$("$T" run "$C/atomic_slots.py" -D R=4 -D N=256 --target cuda,arch=$arch --backend emu --verify 2>&1)
  case "$out" in
  *"verify Idx: ok "*"compared as multisets along dimension 1)"*) echo "PASS cuda emu $arch: slot lists from return_prev verify as multisets" ;;
  *) printf 'FAIL cuda emu %s: slot lists\n%s\n' "$arch" "$out" ;;
  esac
done
# shared tiles allocated inside a T.Pipelined body (deepseek_mhc's gemm + sqrsum)
for arch in sm_90a sm_80; do
  out=$("$T" run "$C/pipelined_alloc.py" -D stages=3 --target cuda,arch=$arch --backend emu --verify 2>&1)
  case "$out" in
  *"verify Y: ok"*"verify S: ok"*) echo "PASS cuda emu $arch: shared tiles allocated inside a pipelined loop" ;;
  *) printf 'FAIL cuda emu %s: pipelined_alloc.py\n%s\n' "$arch" "$(echo "$out" | tail -n 6)" ;;
  esac
done
# dependent T.Kernel blocks (fusedmoe's shared experts: the second reads what another block of
# the first wrote): the runtime launches the kernel once per launch, one after another, and the
# launch number (tcg_launch) picks each block's part; both thread orders
for o in forward reverse; do
  out=$(TILEC_EMU_ORDER=$o "$T" run "$C/jit_launches.py" --kernel reverse_twice --target cuda,arch=sm_80 --backend emu --verify 2>&1)
  case "$out" in
  *"verify Mid: ok"*"verify Out: ok"*"verify Ref: ok"*) echo "PASS cuda emu $o: dependent T.Kernel blocks of a body-annotated kernel run as two launches" ;;
  *) printf 'FAIL cuda emu: jit_launches.py\n%s\n' "$(echo "$out" | tail -n 6)" ;;
  esac
  out=$(TILEC_EMU_ORDER=$o "$T" run "$C/multi_launch.py" --kernel split_combine --target cuda,arch=sm_90a --backend emu --verify 2>&1)
  case "$out" in
  *"verify Partial: ok"*"verify Out: ok"*"verify Scaled: ok"*) echo "PASS cuda emu $o: a prim_func of three dependent T.Kernel blocks runs as three launches" ;;
  *) printf 'FAIL cuda emu: multi_launch.py\n%s\n' "$(echo "$out" | tail -n 6)" ;;
  esac
done
if "$T" source "$C/multi_launch.py" --kernel split_combine --target cuda --kernel-only | grep -q 'int32_t tcg_launch) {' &&
   "$T" source "$C/multi_launch.py" --kernel split_combine --target cuda --explain 2>&1 | grep -q '^// a kernel of 3 launches: the runtime launches it 3 times'; then
  echo "PASS cuda emu: a kernel of several launches takes its launch number, and --explain says so"
else
  echo "FAIL cuda emu: the launch number parameter or its --explain line"
fi
# what the emulator ran, NVRTC compiles too (where it is installed)
for spec in "reinterpret_bits.py --kernel widths -D N=64" "multi_launch.py --kernel split_combine" "global_views.py" \
            "smem_reuse.py --kernel two_phases -D rows=128 -D cols=192 -D threads=256" "gemm_fragment_b.py" \
            "global_layout.py --kernel accumulate" "gemm_fragment_a.py --kernel scaled_gemm" "while_gemm.py --kernel streamed_gemm" \
            "gemm_shared_slice.py --kernel split_q" "parallel_cells.py" "rng.py --kernel per_thread"; do
  f=${spec%% *}; args=${spec#"$f"}
  # shellcheck disable=SC2086
  out=$("$T" compile "$C/$f" $args --target cuda,arch=sm_90a -o "${TMPDIR:-/tmp}/tilec-emu-nvrtc.cubin" 2>&1); rc=$?
  if [ $rc -eq 0 ]; then echo "PASS cuda emu: NVRTC compiles $spec"
  elif echo "$out" | grep -q "NVRTC not found"; then echo "SKIP cuda emu: NVRTC absent ($spec)"
  else printf 'FAIL cuda emu: NVRTC on %s (exit %s)\n%s\n' "$spec" "$rc" "$(echo "$out" | tail -n 6)"; fi
done
rm -f "${TMPDIR:-/tmp}/tilec-emu-nvrtc.cubin"
if "$T" source "$C/global_layout.py" --kernel pipelined_operand --target cuda,arch=sm_90a --explain 2>&1 |
  grep -q "by cp.async, producers 1 iteration ahead; not TMA: 'A' has its own layout (T.annotate_layout)"; then
  echo "PASS cuda emu: a laid-out global operand is loaded by cp.async, and --explain says why not TMA"
else
  echo "FAIL cuda emu: --explain of a laid-out global operand"
fi
if "$T" source "$C/gemm_fragment_b.py" --target cuda,arch=sm_90a --explain 2>&1 |
  grep -q "gemm_fragment_b.py:35:17: T.gemm: B ('bg') is a fragment; it is copied to a shared tile 'bg_staged' first"; then
  echo "PASS cuda emu: --explain says a fragment B operand goes through a shared tile"
else
  echo "FAIL cuda emu: --explain of a fragment B operand"
fi
# the staged A: on mma.sync the scores of a 1 x 4-warp gemm are not the 4 x 1-warp operand the
# next gemm takes from registers; the failed attempt's error and notes are gone
out=$("$T" source "$C/gemm_fragment_a.py" --kernel two_gemms --target cuda,arch=sm_80 --explain --kernel-only 2>&1)
if echo "$out" | grep -q "gemm_fragment_a.py:64:17: T.gemm: A ('p') is a fragment; it is copied to a shared tile 'p_staged' first (its registers are laid out for other statements" &&
   [ "$(echo "$out" | grep -c "gemm_fragment_a.py:62:17: T.gemm 64 x 64 x 64")" = 1 ] && ! echo "$out" | grep -q "error:"; then
  echo "PASS cuda emu: --explain says a fragment A operand laid out for other warps goes through a shared tile"
else
  echo "FAIL cuda emu: --explain of a staged fragment A operand"; echo "$out" | grep "^//" | head -5
fi
if "$T" source "$C/simt_gemm.py" --kernel grouped_scores --target cuda,arch=sm_90a --explain --kernel-only 2>&1 |
  grep -q "^// .*simt_gemm.py:57:9: T.gemm 64 x 32 x 1: a loop every thread runs over the accumulator elements it holds, not the tensor cores (K = 1 is not a multiple of the tensor cores' K step (16))$"; then
  echo "PASS cuda emu: --explain says which gemm runs as a loop per thread, and why"
else
  echo "FAIL cuda emu: --explain of a gemm the tensor cores cannot take"
fi
if "$T" source "$C/fragment_demoted.py" --kernel column_accumulator --target cuda,arch=sm_90a --explain --kernel-only 2>&1 |
  grep -q "^// fragment 'acc' is kept in shared memory: a T.Parallel loop uses elements of it that its threads would not hold in registers$"; then
  echo "PASS cuda emu: --explain says which fragment is kept in shared memory"
else
  echo "FAIL cuda emu: --explain of a fragment kept in shared memory"
fi
if "$T" source "$C/fragment_demoted.py" --kernel accumulator_rows --target cuda,arch=sm_90a --explain --kernel-only 2>&1 |
  grep -q "^// .*fragment_demoted.py:65:17: T.Parallel: reads the accumulator 'acc' through a shared copy 'acc_read', made before the loop"; then
  echo "PASS cuda emu: --explain says which loop reads an accumulator through a shared copy"
else
  echo "FAIL cuda emu: --explain of an accumulator read through a shared copy"
fi
if "$T" source "$C/fragment_view.py" --target cuda,arch=sm_90a --explain --kernel-only 2>&1 |
  grep -q "^// 's_reshaped' (T.reshape of 's') is read as 's' itself: its T.Parallel loops run over 's', its reductions fold each group of 16$"; then
  echo "PASS cuda emu: --explain says a view is read as its accumulator"
else
  echo "FAIL cuda emu: --explain of a view read as its accumulator"
fi
if "$T" source "$C/atomic_prev_shared.py" --target cuda --kernel-only | grep -q '_prev\[0\] = tcg_atomic_add_float16('; then
  echo "PASS cuda emu: return_prev stores the helper's result in the thread's cell"
else
  echo "FAIL cuda emu: return_prev's CUDA spelling"
fi
# Explicit warp specialization (T.ws, T.alloc_barrier, T.tma_copy, the barrier waits and
# arrivals; tile operations in thread-index branches): a ring of stages that copies fill and a gemm
# reads is mapped onto T.Pipelined (src/gpu/ws_explicit.c: on sm_90a the warp-specialized TMA
# pipeline, on sm_80 cp.async), anything else runs in program order on every thread, its waits
# checked at run time; --explain says which and why; a wait that program order cannot satisfy
# traps (the cpu reports the same wait)
for arch in sm_90a sm_80; do
  for line in "ws_gemm.py -D M=200 -D N=136 -D K=96" "ws_gemm.py -D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=128 -D block_K=64" \
              "ws_gemm.py -D M=300 -D N=200 -D K=320 -D block_M=128 -D block_N=128 -D block_K=64" \
              "ws_gemm.py -D M=256 -D N=256 -D K=64 -D block_M=128 -D block_N=128 -D block_K=64" "producer_consumer.py -D M=16 -D K=192" \
              "ws_gemm_pipelined.py -D M=300 -D N=200 -D K=320" "ws_gemm_pipelined.py -D M=256 -D N=384 -D K=512 -D stages=2 -D dtype=bfloat16" \
              "ws_gemm_mbarrier_list.py -D M=300 -D N=200 -D K=320" "ws_gemm_counter.py -D M=128 -D N=192 -D K=128"; do
    f=${line%% *}; args=${line#"$f"}
    # shellcheck disable=SC2086
    out=$("$T" run "$C/$f" $args --target cuda,arch=$arch --backend emu --verify 2>&1)
    if [ $? -eq 0 ]; then echo "PASS cuda emu $arch: explicit warp specialization $line"
    else printf 'FAIL cuda emu %s: %s\n%s\n' "$arch" "$line" "$(echo "$out" | tail -n 6)"; fi
  done
done
# shellcheck disable=SC2086
x=$("$T" source "$C/ws_gemm.py" -D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=128 -D block_K=64 --target cuda,arch=sm_90a --explain --kernel-only 2>&1)
if echo "$x" | grep -q "^// $C/ws_gemm.py:20:20: explicit warp specialization: a ring of 2 stages that copies fill and 1 warp group runs the gemm on, mapped onto T.Pipelined(num_stages=2) over the 128 threads of that group" &&
  echo "$x" | grep -q "^// T.Pipelined(num_stages=2): warp-specialized: a producer warpgroup (threads 128..255) loads 2 tiles per stage by TMA" &&
  echo "$x" | grep -q "^extern \"C\" __global__ void __launch_bounds__(256, 2) "; then
  echo "PASS cuda emu: --explain: a ring of stages maps onto the warp-specialized TMA pipeline, 128 + 128 threads"
else
  printf 'FAIL cuda emu: --explain of a mapped ring\n%s\n' "$(echo "$x" | grep '^// ' | head -4)"
fi
x=$("$T" source "$C/ws_gemm_pipelined.py" -D M=256 -D N=256 -D K=256 --target cuda,arch=sm_90a --explain --kernel-only 2>&1)
if echo "$x" | grep -q "^// $C/ws_gemm_pipelined.py:19:22: explicit warp specialization: shared tiles that copies fill and 1 warp group runs the gemm on, mapped onto T.Pipelined(num_stages=3)" &&
  echo "$x" | grep -q "^// T.Pipelined(num_stages=3): warp-specialized: a producer warpgroup (threads 128..255) loads 2 tiles per stage by TMA"; then
  echo "PASS cuda emu: --explain: T.ws inside T.Pipelined (single-buffered tiles) maps onto the warp-specialized pipeline"
else
  printf 'FAIL cuda emu: --explain of T.ws in T.Pipelined\n%s\n' "$(echo "$x" | grep '^// ' | head -3)"
fi
for c in "producer_consumer.py -D M=16 -D K=192|no T.ws body runs a T.gemm" \
         "ws_gemm_other_stage.py -D M=128 -D N=128 -D K=128|its gemm reads 'A_s' before the iteration's copy fills it" \
         "ws_gemm_counter.py -D M=128 -D N=128 -D K=128|it reads the thread index or adds atomically per thread, which the consumer groups alone would change"; do
  line=${c%%|*}; why=${c#*|}; f=${line%% *}; args=${line#"$f"}
  # shellcheck disable=SC2086
  if "$T" source "$C/$f" $args --target cuda,arch=sm_90a --explain --kernel-only 2>&1 |
    grep -qF "explicit warp specialization runs in program order on all 256 threads: each T.ws body (or thread-index branch) in place, its barriers as per-thread counters whose waits are checks; it is not mapped onto T.Pipelined because $why"; then
    echo "PASS cuda emu: --explain says why $f runs in program order"
  else
    echo "FAIL cuda emu: --explain of $f"
  fi
done
out=$("$T" run tests/diag/thread_branch_loops_differ.py --target cuda,arch=sm_90a --backend emu 2>&1)
case "$out" in
*"cuda emulator: block (0, 0, 0) thread (0, 0, 0): kernel assertion failed: tests/diag/thread_branch_loops_differ.py:17:17: T.mbarrier_wait_parity waits"*)
  echo "PASS cuda emu: a wait program order cannot satisfy traps, and the emulator names it as the cpu does" ;;
*) printf 'FAIL cuda emu: thread_branch_loops_differ on cuda\n%s\n' "$out" ;;
esac
# reductions and prefix sums over a dimension after an extent-1 one (the lowering walks tiles
# with extent-1 dimensions dropped; it once reduced the wrong dimension)
for arch in sm_90a sm_80; do
  out=$("$T" run "$C/unit_dim_reduce.py" --target cuda,arch=$arch --backend emu --verify 2>&1)
  if [ "$(echo "$out" | grep -c '^verify .*: ok')" -eq 4 ]; then echo "PASS cuda emu $arch: T.reduce and T.cumsum over dimension 1 of (1, ...) tiles"
  else printf 'FAIL cuda emu %s: unit_dim_reduce.py\n%s\n' "$arch" "$(echo "$out" | tail -n 6)"; fi
done
H=${TILEC_BUILD:-build}/tests/helpers/gpu_source
if [ -x "$H" ]; then
  out=$("$H" "$C/unit_dim_reduce.py" sm_90a --interp 2>&1)
  case "$out" in PASS*) echo "PASS cuda emu: unit_dim_reduce.py's lowering agrees in the interpreter" ;;
  *) printf 'FAIL cuda emu: unit_dim_reduce.py lowering\n%s\n' "$out" ;; esac
fi
