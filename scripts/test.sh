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
cd "$build"
ctest --output-on-failure --timeout 3000 -j 2 | tee ctest.log
# ctest prints its summary; the CUnit suites' own totals are in the verbose log:
grep -h -A4 "Run Summary" Testing/Temporary/LastTest.log | awk '/tests/ {p+=$4; f+=$5} END {printf "cunit: %d passed, %d failed\n", p, f}'
