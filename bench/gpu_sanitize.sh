#!/usr/bin/env bash
# gpu_sanitize.sh: compute-sanitizer over the GPU suite, a process per test, many at once.
# racecheck of test_gpu in one process never finished (each test alone takes 4-412 s on an
# H100, CUB's radix sorts most of it), so every test of test_gpu and every case of test_cases
# on CUDA (with the rfx processes it starts) runs alone, JOBS at a time; test_lftj whole.
# racecheck leaves CUB's kernels out (--kernel-name-exclude kns=cub: NVIDIA's, and what made
# the sort tests run out of time); memcheck checks everything.
# Usage: bench/gpu_sanitize.sh [TOOL...]   (default: memcheck racecheck)
# Environment: RFX_BUILD (.device/build), OUT (gpu-out), JOBS (12), TIMEOUT (450 s a process),
# RFX_SANITIZE_ONLY=gpu|lftj|cases (one part only), RFX_SANITIZE_MATCH=REGEX (the processes
# whose id, e.g. gpu07 or case-arithmetic_bitwise, matches). The whole suite takes longer than one call
# of the lent machine allows: split it by part and tool. Prints a line per process and a
# count; exits 1 when a process failed, timed out or reported anything. A case whose rfx
# stops before it opens the device (a bad program, option or input) ends compute-sanitizer
# with status 255 ("terminated before first instrumented API call"), no CUDA call to check:
# clean when its test passed.
. "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
export RFX_CACHE_DIR=${RFX_CACHE_DIR:-/tmp/rfx-jit} RFX_GPU_QUICK=1
CS=${CS:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$CS" ] || { echo "gpu_sanitize: no compute-sanitizer" >&2; exit 2; }
tools=${*:-memcheck racecheck}
only=${RFX_SANITIZE_ONLY:-}
jobs="$OUT/sanitize-jobs.txt"
: > "$jobs"
for tool in $tools; do
  # id|tool|RFX_TEST_ONLY|binary|backend
  if [ -z "$only" ] || [ "$only" = gpu ]; then
    grep -o 'CU_add_test(s, "[^"]*"' tests/test_gpu.c | sed 's/CU_add_test(s, "//;s/"$//' | grep -v '2^28' |
      awk -v t="$tool" -v b="$B/tests/test_gpu" '{printf "gpu%02d|%s|=%s|%s|\n", NR, t, $0, b}' >> "$jobs"
  fi
  if [ -z "$only" ] || [ "$only" = lftj ]; then
    echo "lftj|$tool||$B/tests/test_lftj|" >> "$jobs"
  fi
  if [ -z "$only" ] || [ "$only" = cases ]; then
    for c in $(ls tests/cases); do echo "case-$c|$tool|=$c|$B/tests/test_cases|cuda" >> "$jobs"; done
  fi
done
if [ -n "${RFX_SANITIZE_MATCH:-}" ]; then
  grep -E "^(${RFX_SANITIZE_MATCH})\|" "$jobs" > "$jobs.tmp"
  mv "$jobs.tmp" "$jobs"
fi
one() {
  IFS='|' read -r id tool name bin backend <<< "$1"
  local log="$OUT/sanitize-$id-$tool.log" extra=() s
  [ "$tool" = racecheck ] && extra=(--kernel-name-exclude kns=cub)
  s=$(date +%s)
  RFX_TEST_ONLY="$name" RFX_BACKEND="${backend:-${RFX_BACKEND:-}}" timeout "${TIMEOUT:-450}" \
    "$CS" --tool "$tool" "${extra[@]}" --target-processes all --error-exitcode 9 "$bin" > "$log" 2>&1
  local rc=$? summary
  summary=$(grep -h -o -E "(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards? displayed)" "$log" |
    sort | uniq -c | tr -s ' ' | tr '\n' ';')
  # CUnit's line: tests TOTAL RAN PASSED FAILED INACTIVE
  local verdict=ok
  if [ $rc = 124 ]; then verdict=TIMEOUT
  elif ! grep -q -E "^ +tests +[0-9]+ +[1-9][0-9]* +[0-9]+ +0 " "$log"; then verdict=FAILED
  elif [ $rc = 9 ] || grep -q -E "ERROR SUMMARY: [1-9]|SUMMARY: [1-9][0-9]* hazard" "$log"; then verdict=REPORTED
  fi
  echo "$verdict $id $tool rc=$rc $(($(date +%s) - s))s ${summary:-no summary}"
}
export -f one
export CS B OUT
s0=$(date +%s)
tr '\n' '\0' < "$jobs" | xargs -0 -P "${JOBS:-12}" -I{} bash -c 'one "$1"' _ {} | tee "$OUT/sanitize-summary.txt"
n=$(wc -l < "$jobs")
bad=$(grep -c -v "^ok " "$OUT/sanitize-summary.txt")
echo "gpu_sanitize: $n processes, $bad not clean, $(($(date +%s) - s0)) s ($tools)"
[ "$bad" = 0 ]
