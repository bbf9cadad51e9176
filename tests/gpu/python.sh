#!/bin/bash
# tests/gpu/python.sh: the Python package and the seed workloads on a machine with an NVIDIA GPU,
# in one device call (docs/python.md). Run from the repository root after `make -j16 all`:
#     OUT=/some/dir bash tests/gpu/python.sh
# Parts (each under its own time limit; a failing part never stops the others):
#   pytest     python/tests against build/libtilec.so (cuda tests run where cuda is available)
#   workloads  the chains of 11 and 20 kernels (and the fused one), WaveNet, MobileNetV2 on every
#              target found, each checked against the cpu backend and a float64 numpy model
#   bench      build/bench/bench_launch and bench/workloads_bench.py (chain, cnn, launch)
# Writes summary.txt and python.log to $OUT.
set -u
OUT=${OUT:-$(mktemp -d /tmp/tilec-py-XXXXXX)}
mkdir -p "$OUT"
export TILEC_CACHE_DIR=$(mktemp -d /tmp/tilec-py-cache-XXXXXX)
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
LOG="$OUT/python.log"
: >"$LOG"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
part() { # name limit command...
  local name=$1 limit=$2 t0=$(date +%s) rc
  shift 2
  echo "==== $name: $*" >>"$LOG"
  timeout "$limit" "$@" >>"$LOG" 2>&1
  rc=$?
  say "$name: exit $rc ($(($(date +%s) - t0)) s)"
}
. tests/gpu/dlpack.sh
make -s -j"${JOBS:-16}" build/bench/bench_launch "$@" >>"$LOG" 2>&1
python3 -c 'import numpy, sys; print("python", sys.version.split()[0], "numpy", numpy.__version__)' >>"$LOG" 2>&1
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' >>"$LOG" 2>&1
part pytest 120 python3 -m pytest -q python/tests
part chain11 60 python3 examples/workloads/chain.py --stages 11
part chain20-fused 90 python3 examples/workloads/chain.py --stages 20 --fused --rows 65536 --channels 256 --targets cpu,cuda
part wavenet 60 python3 examples/workloads/wavenet.py --targets cpu,cuda
part mobilenet_v2 120 python3 examples/workloads/mobilenet_v2.py --targets cpu,cuda
part bench_launch 60 build/bench/bench_launch
part workloads_bench 150 python3 bench/workloads_bench.py
