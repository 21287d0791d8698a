#!/usr/bin/env bash
# Fuzzes the program front end, the facts reader and the JSON reader with libFuzzer (clang, ASan+UBSan).
# Usage: scripts/fuzz.sh [seconds per target (default 60)] [runs per target (0 = unbounded)]
# A crash stops the script with exit 1 and copies the input into
# tests/fuzz/regressions/<target>/, where ordinary builds replay it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
runs=${2:-0}
if ! command -v clang >/dev/null || ! echo 'int main(){return 0;}' | clang -fsanitize=fuzzer-no-link -x c - -o /dev/null 2>/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
scripts/install-deps.sh
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRFX_FUZZ=ON -DRFX_NO_CUDA=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >build-fuzz.cmake.log 2>&1 || { cat build-fuzz.cmake.log; exit 1; }
cmake --build build-fuzz -j "$(nproc)" --target fuzz_program fuzz_facts fuzz_json 2>&1 | grep -E "error|warning" || true
status=0
for t in program facts json; do
  work=build-fuzz/corpus-$t
  mkdir -p "$work"
  log=build-fuzz/fuzz-$t.log
  set +e
  ASAN_OPTIONS=detect_leaks=1 build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$secs" -runs="$([ "$runs" = 0 ] && echo -1 || echo "$runs")" \
    -entropic=0 -max_len=8192 -timeout=10 -rss_limit_mb=3000 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crash-$t-" "$work" tests/fuzz/corpus/$t >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -E "^stat::number_of_executed_units" "$log" | awk '{print $2}')
  if [ $rc -ne 0 ]; then
    mkdir -p tests/fuzz/regressions/$t
    for c in build-fuzz/crash-$t-*; do [ -f "$c" ] && cp "$c" tests/fuzz/regressions/$t/; done
    echo "fuzz_$t: FAILED after ${execs:-?} executions (input saved in tests/fuzz/regressions/$t)"
    grep -E "ERROR|SUMMARY|runtime error" "$log" | head -5
    status=1
  else
    echo "fuzz_$t: ${execs:-?} executions, no crash, hang or sanitizer report"
  fi
done
exit $status
