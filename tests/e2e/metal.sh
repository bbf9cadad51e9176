#!/bin/sh
# The metal target without a Mac (docs/metal.md): every line of tests/e2e/examples.list runs on
# the emulator (backend emu: the generated MSL built by the host C++ compiler and run on the
# CPU) in both configurations, Metal 3 (--target metal) and Metal 4 (metal,metal4=1), and is
# verified against the reference interpreter, with GEMM variants for Metal 4's matmul2d; then
# source tests on the generated MSL: qualifiers, 128-bit copies, threadgroup memory, the GEMM
# path and its reasons (--explain), both matmul2d forms, the MSL version rules for bfloat16,
# option errors. About 60 s on 2 cores (plain build).
T=${TILEC:-build/tilec}
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "metal: no C++ compiler (${TILEC_EMU_CXX:-c++}): the emulator cannot run, nothing checked"
  exit 0
fi
J=$(nproc 2>/dev/null || echo 2)
. tests/e2e/sanitized.sh
sampled_note metal

# Metal has 32 KB of threadgroup memory: gemm_transposed's default 128 x 128 float32 C_shared
# (64 KB) is refused (an error naming the buffer), so it runs here with 64 x 64 blocks.
case_sh='
T=$1; tgt=$2; line=$3
file=${line%% *}; args=${line#"$file"}
[ "$file" = gemm_transposed.py ] && args="$args -D block_M=64 -D block_N=64"
# shellcheck disable=SC2086
out=$(timeout 300 "$T" run "examples/$file" $args --target "$tgt" --verify 2>&1); rc=$?
if [ $rc -eq 0 ]; then printf "PASS metal run %s %s\n" "$tgt" "$line"
else printf "FAIL metal run %s %s (exit %s)\n%s\n" "$tgt" "$line" "$rc" "$(echo "$out" | tail -n 8 | sed "s/^/    /")"; fi'
# Examples Metal cannot run: an fp8 T.gemm has no Metal matrix path (simdgroup_matrix and
# matmul2d take 16- and 32-bit floats); the cpu and cuda scripts run them.
# gemm_fp8.py: no Metal matrix path for fp8; the attention lines with 128x128 blocks and the gemm
# lines with 128x256 blocks are sized for an H200's 227 KB of shared memory (Metal allows 32 KB,
# and says so)
nometal='^gemm_fp8\.py\|block_M=128 -D block_N=128 -D threads=256\|block_N=256 -D block_K=64 -D threads=256'
# tests/e2e/data/metal_matmul2d.py: GEMM variants for Metal 4's matmul2d (both forms, transposes,
# row reductions, atomics, ragged and non-square tiles, the dtypes); most fall back to the
# simdgroup path on Metal 3, and run there too.
m2d="../tests/e2e/data/metal_matmul2d.py"
for tgt in metal metal,metal4=1; do
  { grep -v -e '^#' -e '^$' -e "$nometal" tests/e2e/examples.list | sed 's/[[:space:]]*$//'
    # non-square block tiles on the simdgroup path; bfloat16 both ways (MSL 3.0: 16-bit storage)
    echo "gemm.py -D M=200 -D N=136 -D K=96 -D block_M=64 -D block_N=128"
    echo "gemm.py -D M=96 -D N=96 -D K=64 -D block_M=32 -D block_N=96 -D block_K=32"
    # a tile too small for every simdgroup: the replicas hold copies and do not simdgroup_store
    echo "gemm.py -D M=48 -D N=40 -D K=32 -D block_M=16 -D block_N=16"
    echo "cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16"
    echo "$m2d"
    echo "$m2d -D trans_A=True -D trans_B=True -D epilogue=atomic"
    echo "$m2d -D staged=True -D trans_B=True"
    echo "$m2d -D M=50 -D N=70 -D K=40 -D block_M=16 -D block_N=32 -D threads=32 -D dtype=bfloat16"
    echo "$m2d -D M=64 -D N=96 -D K=48 -D block_M=64 -D block_N=32 -D threads=64 -D dtype=float32 -D trans_A=True"
    echo "$m2d -D M=40 -D N=128 -D K=32 -D block_M=32 -D block_N=128 -D threads=128 -D staged=True"
    # row reductions beside the accumulator: on matmul2d its rows are replicated (the general
    # form); on the simdgroup path rows split over 2 x 2 and 1 x 4 simdgroups combine through
    # shared memory, one slot per thread (a slot per simdgroup lost rows: found here)
    echo "$m2d -D epilogue=rows"
    echo "$m2d -D epilogue=rows -D staged=True -D trans_A=True"
    echo "$m2d -D epilogue=rows -D block_M=32 -D block_N=32 -D threads=32 -D trans_B=True"
    echo "$m2d -D epilogue=rows -D block_M=32 -D M=40 -D N=128"
    # chained gemms, the second with A from registers: on matmul2d both or neither (D=48)
    echo "../tests/e2e/data/metal_gemm_rs.py"
    echo "../tests/e2e/data/metal_gemm_rs.py -D trans_V=True"
    echo "../tests/e2e/data/metal_gemm_rs.py -D D=48"
    # T.alloc_reducer updated from T.Parallel loops wider than its shape (combined after each loop)
    echo "../tests/e2e/data/compat/alloc_reducer.py -D R=192 -D C=96"
    echo "../tests/e2e/data/compat/alloc_reducer.py -D R=100 -D C=70 -D threads=32"
    # global tensors placed by their own T.Layout (flash attention's backward dQ)
    for k in accumulate unpermute pipelined_operand; do echo "../tests/e2e/data/compat/global_layout.py --kernel $k"; done
    # tiles of disjoint lifetimes sharing threadgroup memory (more than 32 KiB one after another)
    for k in gemm_then_tile two_phases; do echo "../tests/e2e/data/compat/smem_reuse.py --kernel $k"; done
    # a gemm's B operand computed in a fragment, read through a shared tile
    echo "../tests/e2e/data/compat/gemm_fragment_b.py"
    echo "../tests/e2e/data/compat/gemm_fragment_b.py -D trans_B=True"
    # a gemm's A fragment laid out for other statements, read through a shared tile
    echo "../tests/e2e/data/compat/gemm_fragment_a.py --kernel scaled_gemm"
    echo "../tests/e2e/data/compat/gemm_fragment_a.py --kernel scaled_gemm -D trans_A=True"
    echo "../tests/e2e/data/compat/gemm_fragment_a.py --kernel two_gemms"
    for k in split_q b_columns; do echo "../tests/e2e/data/compat/gemm_shared_slice.py --kernel $k"; done
    echo "../tests/e2e/data/compat/parallel_cells.py"
    # gemms the tensor cores cannot take: a loop per thread
    for l in "small_gemm -D M=64 -D N=1 -D K=32" "small_gemm -D M=64 -D N=32 -D K=1 -D trans_A=True" \
      "small_gemm -D M=20 -D N=12 -D K=40 -D clear=True -D threads=64" "grouped_scores -D G=4 -D threads=128"; do
      echo "../tests/e2e/data/compat/simt_gemm.py --kernel $l"
    done
    echo "../tests/e2e/data/compat/fragment_view.py"
    for k in per_thread one_thread; do echo "../tests/e2e/data/compat/rng.py --kernel $k"; done
    # while loops on runtime conditions
    echo "../tests/e2e/data/compat/runtime_while.py"
    # fragments a T.Parallel loop uses at elements its threads do not hold: kept in shared memory
    for k in neighbour_rows column_accumulator accumulator_rows; do echo "../tests/e2e/data/compat/fragment_demoted.py --kernel $k"; done
    # a row vector in shared memory updated once a row, not once a thread holding it
    echo "../tests/e2e/data/compat/shared_row_update.py"
    for k in combine neighbours short_vec; do echo "../tests/e2e/data/compat/split_combine.py --kernel $k"; done
    for k in gemv_reducer running_sum max_from_five; do echo "../tests/e2e/data/compat/reducer_loop.py --kernel $k"; done
    for d in "" "-D full_col=True" "-D threads=256 -D M=32 -D N=64"; do echo "../tests/e2e/data/compat/column_vectors.py $d"; done
    echo "../tests/e2e/data/compat/fp_classes.py"
    echo "../tests/e2e/data/compat/latent_decode.py -D dim=64 -D pe_dim=16 -D block_H=32"
    for k in streamed_gemm shared_cursor; do echo "../tests/e2e/data/compat/while_gemm.py --kernel $k"; done
    # views of global tensors (T.Tensor(shape, dtype, X.data)): pointers to their tensors
    echo "../tests/e2e/data/compat/global_views.py"
    # kernels of several launches (dependent 'with T.Kernel' blocks, T.sync_grid): one dispatch each
    for k in split_combine direct grid_sync split_combine_locals; do echo "../tests/e2e/data/compat/multi_launch.py --kernel $k"; done
    # T.reinterpret: bits read as another dtype of the same width (no float64 on Metal)
    echo "../tests/e2e/data/compat/reinterpret_bits.py --kernel bits -D N=64"
    echo "../tests/e2e/data/compat/reinterpret_bits.py --kernel narrow_widths -D N=64"
    echo "../tests/e2e/data/metal_gemm_rs.py -D M=100 -D dtype=bfloat16"
    # explicit warp specialization as a ring of stages: mapped onto T.Pipelined (gpu/ws_explicit.c),
    # so Metal runs it (in program order it could not: its waits are run-time checks)
    echo "../tests/e2e/data/compat/ws_gemm.py -D M=200 -D N=136 -D K=96"
    echo "../tests/e2e/data/compat/ws_gemm.py -D M=300 -D N=200 -D K=320 -D block_M=128 -D block_N=128 -D block_K=64"
    echo "../tests/e2e/data/compat/ws_gemm_pipelined.py -D M=300 -D N=200 -D K=320"
    echo "../tests/e2e/data/compat/ws_gemm_mbarrier_list.py -D M=300 -D N=200 -D K=320"
  } | one_per_key | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$T" "$tgt" {}
done
out=$("$T" run examples/cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16 --target metal,msl=3.0 --verify 2>&1)
if [ $? -eq 0 ]; then echo "PASS metal run msl=3.0 bfloat16 (software conversions)"
else echo "FAIL metal run msl=3.0 bfloat16"; echo "$out" | tail -n 5; fi

# ---- source tests ----
check() { # NAME, then the condition's exit status in $?
  if [ "$2" -eq 0 ]; then echo "PASS metal source $1"; else echo "FAIL metal source $1"; fi
}
src() { "$T" source "$@" 2>&1; }

g=$(src examples/gemm.py --target metal --kernel-only)
echo "$g" | grep -q '^\[\[kernel, max_total_threads_per_threadgroup(128)\]\] void tilec_matmul($'; check "kernel attribute and name" $?
echo "$g" | grep -q 'const device half \*__restrict b0_A \[\[buffer(0)\]\]'; check "read-only tensor is const device __restrict" $?
echo "$g" | grep -q '    device half \*__restrict b2_C \[\[buffer(2)\]\]'; check "written tensor is device __restrict, not const" $?
echo "$g" | grep -q 'ushort tcg_lane \[\[thread_index_in_simdgroup\]\]'; check "lane from its attribute" $?
echo "$g" | grep -q '\*(threadgroup uint4 \*)(&b[0-9]*_A_shared\[.*\]) = \*(const device uint4 \*)'; check "128-bit copies into threadgroup memory" $?
echo "$g" | grep -q 'threadgroup_barrier(mem_flags::mem_threadgroup);'; check "threadgroup barriers" $?
echo "$g" | grep -q 'tcm_gemm_ss<128, 128, 32, 2, 2, false, false, half, half, float>('; check "gemm: simdgroup_matrix 128x128x32 over 2x2" $?
echo "$g" | grep -q 'threadgroup uint4 tcg_smem\[1024\];'; check "16 KB of threadgroup memory (no cp.async staging)" $?
echo "$g" | grep -q -e '__syncthreads' -e 'threadIdx' -e '__shfl' -e 'double'; [ $? -ne 0 ]; check "no CUDA spellings, no double" $?
f=$(src examples/gemm.py --target metal)
echo "$f" | grep -q 'simdgroup_multiply_accumulate(c\[i\]\[j\], a\[i\], b\[j\], c\[i\]\[j\])'; check "prelude: simdgroup_multiply_accumulate" $?
echo "$f" | grep -q 'simdgroup_load(raw, x, stride'; check "prelude: simdgroup_load" $?

# The accumulator in the metal.simdgroup scope (src/target/metal/simdgroup_scope.c): the target
# pass moves it there before the lowering, the gemm moves its registers in the thread (they are
# the simdgroup matrices' thread_elements(), no shuffles) and its T.copy to C is a
# simdgroup_store to device memory; a partial tile keeps the element-wise copy (the ragged
# gemm.py lines above run both forms in one kernel and verify).
ir=$("$T" ir examples/gemm.py --lowered --target metal 2>&1)
echo "$ir" | grep -q '^    C_local = alloc metal.simdgroup float32\[128, 128\]$' &&
  echo "$ir" | grep -q '^# passes of target metal: metal-accumulator-scope$'
check "ir: the gemm accumulator is in the metal.simdgroup scope" $?
"$T" ir examples/gemm.py --lowered --target metal,metal4=1 2>&1 | grep -q '^    C_local = alloc metal.cooperative_tensor float32\[128, 128\]$'
check "ir: metal4, the accumulator is in the metal.cooperative_tensor scope" $?
"$T" ir "tests/e2e/data/metal_matmul2d.py" -D dtype=int8 -D accum_dtype=int32 --lowered --target metal 2>&1 |
  grep -q '^    C_local = alloc fragment int32\[64, 64\]$'
check "ir: an int8 gemm's accumulator stays a fragment (the SIMT gemm)" $?
irfa=$("$T" ir examples/flash_attention.py --lowered --target metal 2>&1)
echo "$irfa" | grep -q ' acc_s = alloc metal.simdgroup ' && echo "$irfa" | grep -q ' acc_o = alloc metal.simdgroup ' &&
  echo "$irfa" | grep -q ' acc_s_cast = alloc fragment '
check "ir: attention's two accumulators are in the metal.simdgroup scope, its register operand is not" $?
echo "$g" | grep -q '^    tcm_store_sg<128, 128, 2, 2>((&b[0-9]*_C_local\[(long)0\]), (&b2_C\[.*\]), (ulong)(256), tcg_simdgroup);$'
check "copy of the accumulator to C: simdgroup_store to device memory" $?
[ "$(echo "$g" | grep -c 'b2_C\[.*\] = half(')" -eq 1 ] && echo "$g" | grep 'b2_C\[.*\] = half(' | grep -q '< (uint)256) b2_C\['
check "copy of the accumulator to C: element stores only as the bounds-checked fallback" $?
echo "$f" | grep -q 'inline void tcm_store_sg(thread const TC \*acc, device TO \*dst, ulong ld, ushort simdgroup)' &&
  echo "$f" | grep -q 'simdgroup_store(m, dst, ld, ulong2(col0 + j \* 8, row0 + i \* 8));'
check "prelude: tcm_store_sg writes each 8x8 block to device memory by simdgroup_store" $?
echo "$f" | grep -q 'simd_shuffle('; [ $? -ne 0 ]; check "prelude: the simdgroup gemm moves its accumulator without shuffles" $?
rg=$(src examples/gemm.py -D M=200 -D N=136 -D K=96 -D block_M=64 -D block_N=128 --target metal --kernel-only)
echo "$rg" | grep -q 'tcm_store_sg<64, 128, 1, 4>(' && echo "$rg" | grep -q '< (uint)200 && .*< (uint)136) b2_C\['
check "ragged gemm: simdgroup_store for whole tiles, bounds-checked element stores for partial ones" $?
e=$(src examples/gemm.py --target metal --explain --kernel-only | head -n 3)
echo "$e" | grep -q "^// examples/gemm.py:[0-9]*:[0-9]*: accumulator 'C_local': metal.simdgroup scope (its registers are the simdgroup_matrix 8x8 blocks' thread_elements())$" &&
  echo "$e" | grep -q '^// examples/gemm.py:[0-9]*:[0-9]*: T.copy(C_local -> C): simdgroup_store of the metal.simdgroup accumulator to device memory, 8 x 8 blocks of 8x8 on each of 2 x 2 simdgroups (element-wise when the tile is partial)$'
check "explain: the accumulator's scope and its simdgroup_store" $?

fa=$(src examples/flash_attention.py --target metal --kernel-only)
echo "$fa" | grep -q 'tcm_gemm_rs<64, 64, 64, 4, 1, false, false, half, half, float>((&b[0-9]*_acc_s_cast'; check "attention: second gemm with A in registers" $?
echo "$fa" | grep -q 'simd_shuffle_xor('; check "row reductions by simd_shuffle_xor" $?

tg=$(src examples/gemm_transposed.py --target metal -D block_M=64 -D block_N=64 --kernel-only)
echo "$tg" | grep -q 'tcm_gemm_ss<64, 64, 64, 2, 2, false, true, bfloat, bfloat, float>('; check "gemm with B transposed, bfloat16 operands" $?

e=$(src examples/gemm.py --target metal --explain --kernel-only | head -n 1)
echo "$e" | grep -q '^// examples/gemm.py:[0-9]*:[0-9]*: T.gemm 128 x 128 x 32 (float16 x float16 -> float32, A in threadgroup memory): simdgroup_matrix 8x8 path over 2 x 2 simdgroups (64 x 64 per simdgroup, float accumulation in the metal.simdgroup scope); not matmul2d: metal4 is off (--target metal,metal4=1)$'
check "explain: Metal 3 takes the simdgroup path" $?
e=$(src examples/gemm.py --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q '^// examples/gemm.py:[0-9]*:[0-9]*: T.gemm 128 x 128 x 32 (float16 x float16 -> float32, A in device memory): matmul2d (direct-global): mpp::tensor_ops::matmul2d 16 x 32 x 32 on each simdgroup.s 4 x 2 fragments over 2 x 2 simdgroups (64 x 64 per simdgroup), float cooperative-tensor accumulation, A and B read from device memory (no threadgroup staging)$'
check "explain: metal4, gemm.py takes matmul2d (direct-global)" $?
e=$(src examples/gemm.py --target metal,metal4=1 -D block_N=48 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'T.gemm 128 x 48 x 32 .*simdgroup_matrix 8x8 path over 4 x 1 simdgroups (32 x 48 per simdgroup.*not matmul2d: N = 48 is not a multiple of 32$'
check "explain: metal4, N % 32 != 0 takes the simdgroup path" $?
e=$(src examples/gemm.py --target metal,metal4=1 -D block_M=64 -D block_N=64 -D block_K=8 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'not matmul2d: K = 8 is not a multiple of 16$'; check "explain: metal4, K % 16 != 0" $?
e=$(src "tests/e2e/data/metal_matmul2d.py" -D block_M=32 --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'simdgroup_matrix 8x8 path over 1 x 4 simdgroups.*not matmul2d: the 1 x 4 simdgroup partition gives 32 x 16 sub-tiles, not multiples of 16 x 32$'
check "explain: metal4, a partition without whole 16 x 32 fragments" $?
e=$(src "tests/e2e/data/metal_matmul2d.py" -D accum_dtype=float16 --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'not matmul2d: the accumulator is float16 (matmul2d here accumulates into float32)$'; check "explain: metal4, a float16 accumulator" $?
e=$(src "tests/e2e/data/metal_matmul2d.py" -D dtype=int8 -D accum_dtype=int32 --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'SIMT path.*not matmul2d: its operands are int8 x int8'; check "explain: metal4, int8 operands" $?
e=$(src examples/flash_attention.py --target metal,metal4=1 --explain --kernel-only | head -n 2)
echo "$e" | head -n 1 | grep -q 'A in threadgroup memory): matmul2d (shared-staged)' &&
  echo "$e" | tail -n 1 | grep -q "A in registers): matmul2d (A from registers): mpp::tensor_ops::matmul2d 16 x 32 x 16 on each simdgroup's 1 x 2 fragments over 4 x 1 simdgroups (16 x 64 per simdgroup), float cooperative-tensor accumulation, A's registers as 16 x 16 left-input cooperative tensors, B loaded from threadgroup memory$"
check "explain: metal4, attention runs both gemms on matmul2d, the second with A from registers" $?
fa4=$(src examples/flash_attention.py --target metal,metal4=1 --kernel-only)
echo "$fa4" | grep -q 'tcm_gemm_mpp_rs<64, 64, 64, 4, 1, false, false, half, half>((&b[0-9]*_acc_s_cast\[(long)0\]), (&b[0-9]*_V_shared\[.*\]), (&b[0-9]*_acc_o\[(long)0\]), tcg_simdgroup);' &&
  echo "$fa4" | grep -q 'simd_shuffle_xor(' && "$T" source examples/flash_attention.py --target metal,metal4=1 | grep -q 'op.template get_left_input_cooperative_tensor<TA, TB, float>()'
check "matmul2d RS: attention's P * V from registers (tcm_gemm_mpp_rs, left-input cooperative tensors), row reductions by shuffles" $?
e=$(src "tests/e2e/data/metal_gemm_rs.py" -D D=48 --target metal,metal4=1 --explain --kernel-only | head -n 2)
echo "$e" | head -n 1 | grep -q 'A in threadgroup memory): simdgroup_matrix 8x8 path .*; not matmul2d: a T.gemm of this kernel reads A from registers and another cannot run on matmul2d (they share the accumulator placement: all take matmul2d, or none)$' &&
  echo "$e" | tail -n 1 | grep -q 'A in registers): simdgroup_matrix 8x8 path .*; not matmul2d: N = 48 is not a multiple of 32$'
check "explain: metal4, A from registers needs every gemm of the kernel on matmul2d, or none" $?
"$T" source "tests/e2e/data/metal_gemm_rs.py" -D trans_V=True --target metal,metal4=1 --kernel-only 2>&1 |
  grep -q 'tcm_gemm_mpp_rs<64, 64, 64, 4, 1, false, true, half, half>((&b[0-9]*_P\[(long)0\]), '
check "matmul2d RS: B transposed" $?
e=$(src examples/conv_implicit_gemm.py --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q "matmul2d (shared-staged): .*; not direct-global: A ('data_shared') is not staged by a T.copy right before the T.gemm$"
check "explain: metal4, a tile computed by T.Parallel stays shared-staged" $?
e=$(src "tests/e2e/data/metal_matmul2d.py" -D staged=True --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q "matmul2d (shared-staged): .*not direct-global: A ('A_shared') is used by more than its T.copy and this T.gemm$"
check "explain: metal4, a tile read outside the gemm stays shared-staged" $?

# a row reduction beside a matmul2d accumulator runs in registers and simd_shuffle_xor over lane
# bits 0 and 3 (its rows are held as a simdgroup_matrix holds them), with 512 bytes of scratch for the
# rows that span 2 simdgroups, not the 16 KB tile staged in threadgroup memory
rr=$(src "tests/e2e/data/metal_matmul2d.py" -D epilogue=rows --target metal,metal4=1 --kernel-only)
echo "$rr" | grep -q 'simd_shuffle_xor(b[0-9]*_tcg_part\[(long)0\], (ushort)(1))' &&
  echo "$rr" | grep -q 'simd_shuffle_xor(b[0-9]*_tcg_part\[(long)0\], (ushort)(8))' && echo "$rr" | grep -q 'threadgroup uint4 tcg_smem\[32\];'
check "matmul2d: a row reduction of the accumulator in registers (simd_shuffle_xor over lane bits 0 and 3)" $?

# matmul2d's MSL: direct-global reads device memory with no threadgroup memory or barrier;
# shared-staged reads the threadgroup tiles; both forms on non-square tiles and transposes
g4=$(src examples/gemm.py --target metal,metal4=1 --kernel-only)
echo "$g4" | grep -q '    tcm_gemm_mpp_gg<128, 128, 32, 2, 2, false, false, half, half>(b0_A, 256, 256, .*, b1_B, 256, 256, .*, (&b[0-9]*_C_local\[(long)0\]), tcg_simdgroup);$'
check "matmul2d direct-global: gemm.py calls tcm_gemm_mpp_gg on the device tensors" $?
echo "$g4" | grep -q -e 'tcg_smem' -e 'threadgroup_barrier' -e '^ *threadgroup '; [ $? -ne 0 ]
check "matmul2d direct-global: no threadgroup memory, no barrier" $?
f4=$(src examples/gemm.py --target metal,metal4=1)
echo "$f4" | grep -q '^#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>$' &&
  echo "$f4" | grep -q 'mpp::tensor_ops::matmul2d_descriptor(16, 32, K, TRANS_A, TRANS_B, false,' &&
  echo "$f4" | grep -q 'mpp::tensor_ops::matmul2d<desc, execution_simdgroup> op;' &&
  echo "$f4" | grep -q 'get_destination_cooperative_tensor<decltype(a), decltype(b), float>()' &&
  echo "$f4" | grep -q 'op.run(a, b, d);' && echo "$f4" | grep -q 'tensor<device TA, dextents<int32_t, 2>, tensor_inline>'
check "matmul2d prelude: descriptor, execution_simdgroup, destination cooperative tensor, run" $?
echo "$g" | grep -q -e 'MetalPerformancePrimitives' -e 'tcm_gemm_mpp'; [ $? -ne 0 ]; check "Metal 3 MSL has no MPP" $?
ns=$(src "tests/e2e/data/metal_matmul2d.py" -D M=64 -D N=96 -D K=48 -D block_M=64 -D block_N=32 -D threads=64 -D trans_A=True --target metal,metal4=1 --kernel-only)
echo "$ns" | grep -q 'tcm_gemm_mpp_gg<64, 32, 16, 2, 1, true, false, half, half>(b0_A, 48, 64, ' &&
  ! echo "$ns" | grep -q 'tcg_smem'
check "matmul2d direct-global: 64 x 32 tile over 2 x 1 simdgroups, A transposed" $?
ss=$(src "tests/e2e/data/metal_matmul2d.py" -D M=40 -D N=128 -D K=32 -D block_M=32 -D block_N=128 -D threads=128 -D staged=True --target metal,metal4=1 --kernel-only)
echo "$ss" | grep -q 'tcm_gemm_mpp_ss<32, 128, 16, 1, 4, false, false, half, half>((&b[0-9]*_A_shared\[(long)0\]), (&b[0-9]*_B_shared\[(long)0\]), ' &&
  echo "$ss" | grep -q 'threadgroup_barrier'
check "matmul2d shared-staged: 32 x 128 tile over 1 x 4 simdgroups, from threadgroup memory" $?
tg4=$(src examples/gemm_transposed.py --target metal,metal4=1 -D block_M=64 -D block_N=64 --kernel-only)
echo "$tg4" | grep -q 'tcm_gemm_mpp_gg<64, 64, 64, 2, 2, false, true, bfloat, bfloat>('; check "matmul2d direct-global: B transposed, bfloat16" $?
# every gemm example takes matmul2d on Metal 4 (attention's second gemm with A from registers)
for line in $(grep -v -e '^#' -e '^$' -e "$nometal" tests/e2e/examples.list | sed 's/ .*//' | sort -u); do
  grep -q 'T.gemm' "examples/$line" || continue
  args=$(grep "^$line -D" tests/e2e/examples.list | head -n 1 | sed "s/^$line//")
  [ "$line" = gemm_transposed.py ] && args="$args -D block_M=64 -D block_N=64"
  # shellcheck disable=SC2086
  src "examples/$line" $args --target metal,metal4=1 --explain --kernel-only | grep -q '): matmul2d (direct-global\|shared-staged\|A from registers)'
  check "explain: metal4, $line takes matmul2d" $?
done
e=$(src examples/softmax.py -D m=4 --target metal --explain --kernel-only | head -n 1)
[ "$e" = "// no T.gemm: no GEMM path to choose" ]; check "explain: a kernel without T.gemm" $?

b31=$(src examples/cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16 --target metal --kernel-only)
b30=$(src examples/cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16 --target metal,msl=3.0 --kernel-only)
echo "$b31" | grep -q 'const device bfloat \*__restrict'; check "MSL 3.1: bfloat16 is bfloat" $?
echo "$b30" | grep -q 'const device ushort \*__restrict' && ! echo "$b30" | grep -qw 'bfloat'; check "MSL 3.0: bfloat16 is 16-bit storage, no bfloat" $?
m=$(src examples/gemm.py --target metal,msl=3.1,metal4=1)
[ $? -eq 2 ] && echo "$m" | grep -q 'metal4=1 needs MSL 4.0 (msl=3.1 given)'; check "metal4=1 with msl=3.1 is a usage error" $?
m=$(src examples/gemm.py --target metal,msl=2.4)
[ $? -eq 2 ] && echo "$m" | grep -q "unknown MSL version '2.4'"; check "unknown MSL version is a usage error" $?
m=$("$T" run examples/gemm.py -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 --target metal 2>&1)
[ $? -eq 1 ] && echo "$m" | grep -q "need 49152 bytes one after another and 49152 with the tiles of disjoint lifetimes sharing memory; metal allows 32768 (exceeded from 'B_shared' on)"
check "threadgroup memory over 32 KB, even with tiles sharing it, is a program error" $?
# C_shared (32 KB) takes the memory of the mainloop's tiles, dead once the loop ends
m=$("$T" run examples/gemm_transposed.py --target metal --verify 2>&1)
[ $? -eq 0 ] && echo "$m" | grep -q "verify C: ok"; check "gemm_transposed: 64 KB of tiles one after another run in 32 KB" $?
"$T" backends | grep -q '^metal   emu       yes      yes'; check "tilec backends: emu is the default off macOS" $?
# T.atomic_add(..., return_prev=True) through atomic_fetch_add_explicit (int32, float32) and the
# compare-and-swap loop (float16): each thread's value before its addition, and slot lists
# compared as multisets along the dimension the slots index
C=tests/e2e/data/compat
D=$(mktemp -d /tmp/tilec-e2e-metal-prev-XXXXXX)
"$T" run "$C/atomic_prev_shared.py" --target metal --verify --save "$D/prev" >/dev/null 2>&1 && cmp -s "$D/prev/Hist.npy" "$D/prev/Ref.npy"
check "return_prev on shared int32, float32 and float16 counters" $?
src "$C/atomic_prev_shared.py" --target metal | grep -q '_prev\[0\] = (int)atomic_fetch_add_explicit((threadgroup atomic_int \*)'
check "return_prev: the fetched value goes to the thread's cell" $?
"$T" run "$C/atomic_slots.py" -D R=4 -D N=256 --target metal --verify 2>&1 | grep -q "^verify Idx: ok .*compared as multisets along dimension 1)"
check "slot lists from return_prev verify as multisets on metal" $?
rm -rf "$D"
# reductions and prefix sums over a dimension after an extent-1 one (found on the cuda emulator:
# the shared lowering reduced the wrong dimension)
[ "$("$T" run tests/e2e/data/compat/unit_dim_reduce.py --target metal --verify 2>&1 | grep -c '^verify .*: ok')" -eq 4 ]
check "T.reduce and T.cumsum over dimension 1 of (1, ...) tiles verify" $?

# The Metal 4 gemm's epilogue (issue 37): the accumulator's runs of 4 columns a thread go to C as
# half4 stores (32 a thread for the 128 x 128 tile), not 128 element stores; element stores stay
# as the fallbacks (a misaligned tile inside C, a ragged tile's bounds-checked stores)
g4=$(src examples/gemm.py --target metal,metal4=1 --kernel-only)
[ "$(echo "$g4" | grep -c '^    \*(device half4 \*)(&b2_C\[')" -eq 32 ] &&
  [ "$(echo "$g4" | grep -c '^ *b2_C\[.*\] = half(')" -eq 1 ] && [ "$(echo "$g4" | grep -c 'if .*b2_C\[.*\] = half(')" -eq 1 ]
check "matmul2d epilogue: C stored as 32 half4 stores a thread, elements only in the two fallback loops" $?
