#!/usr/bin/env bash
# pytest over the sebt Python package of a build folder.
# Usage: run_package_tests.sh PYTHON BUILD_PYTHON_DIR SEBT_BINARY TEST_DIR INCLUDE_DIR
# Exit 77 (skipped) when PYTHON lacks numpy or pytest.
set -u
py=$1 pkg_dir=$2 sebt=$3 tests=$4 include=$5
if ! "$py" -c 'import numpy, pytest' 2>/dev/null; then
  echo "SKIP: $py has no numpy or no pytest (apt-get install python3-numpy python3-pytest)"
  exit 77
fi
export PYTHONPATH=$pkg_dir SEBT_BINARY=$sebt SEBT_INCLUDE_DIR=$include
unset SEBT_LIB SEBT_SHARE_DIR
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} CI=1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$py" -m pytest -q -p no:cacheprovider "$tests" --basetemp="$work/tmp"
