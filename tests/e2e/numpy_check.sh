#!/bin/sh
# An independent check of the examples' meaning: numpy references written from the maths, fed the
# same inputs through --load and compared with --save (examples/check/numpy_check.py). --verify
# compares a backend with tilec's own reference, which reads the program through the same front
# end; this catches a misreading of TileLang itself.
T=${TILEC:-build/tilec}
if ! python3 -c 'import numpy' 2>/dev/null; then
  echo "SKIP numpy_check: numpy not installed (sh tools/deps.sh test)"
  exit 0
fi
TMPDIR=${TMPDIR:-/tmp} python3 examples/check/numpy_check.py "$T"
