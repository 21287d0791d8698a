#!/usr/bin/env bash
# The whole test suite: builds rfx and runs every CUnit suite through ctest.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: AddressSanitizer + UBSan build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  build=build-asan
  scripts/build.sh --sanitize "$build"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
  build=build
  scripts/build.sh "$build"
fi
(cd "$build" && ctest --output-on-failure --timeout 3000 -j 2 | tee ctest.log
 # ctest prints its summary; the CUnit suites' own totals are in the verbose log, and each
 # skipped test's reason (no GPU, no ../shared) in one line:
 grep -h -A4 "Run Summary" Testing/Temporary/LastTest.log | awk '/tests/ {p+=$4; f+=$5} END {printf "cunit: %d passed, %d failed\n", p, f}'
 grep -h -o "[a-z_]*: skipped: .*" Testing/Temporary/LastTest.log | sort -u || true)
if [ "$build" = build ]; then
  # librfx leaks nothing (two engines in two threads included), and installs and links
  # the way docs/api.md says
  valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1 \
    --suppressions=tests/valgrind.supp \
    "$build/tests/test_api" >"$build/valgrind.log" 2>&1 || { cat "$build/valgrind.log"; echo "valgrind: errors"; exit 1; }
  echo "valgrind: test_api clean"
  scripts/install-check.sh "$build"
  # the Python package: pip install . into build/pyvenv, then its pytest suite
  scripts/python-check.sh
  # TPC-H's 22 queries in Datalog, answers equal to DuckDB's (SF 0.01, both backends)
  scripts/tpch-check.sh "$build"
fi
