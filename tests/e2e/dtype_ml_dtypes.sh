#!/bin/sh
# Compare tilec's dtype conversions with ml_dtypes (and numpy's float16) when ml_dtypes is
# installed (CI: pip install ml_dtypes numpy); otherwise report the skip and pass.
B="${TILEC_BUILD:-build}"
dump="$B/tests/helpers/dtype_dump"
if [ ! -x "$dump" ]; then
  echo "FAIL dtype ml_dtypes: $dump not built (make $dump)"
  exit 1
fi
if ! python3 -c 'import ml_dtypes, numpy' >/dev/null 2>&1; then
  echo "SKIP dtype ml_dtypes: python3 with ml_dtypes and numpy is not installed (sh tools/deps.sh test)"
  exit 0
fi
python3 "$(dirname "$0")/dtype_ml_dtypes.py" "$dump"
