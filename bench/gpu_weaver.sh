#!/usr/bin/env bash
# The kernel weaver on the lent GPU (a subset of bench/gpu.sh): its tests, every case
# with generated kernels, fused vs unfused on the five thesis patterns, compute-sanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${RFX_BUILD:-.device/build}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export RFX_TEST_BIN=$PWD/$B/runtime/rfx RFX_TEST_CASES=$PWD/tests/cases RFX_CACHE_DIR=$OUT/jit-cache
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/device.txt"
$B/tests/test_weaver > "$OUT/test_weaver.log" 2>&1; echo "test_weaver exit $?: $(grep -E '^ +tests ' "$OUT/test_weaver.log")"
grep -B2 -A12 FAILED "$OUT/test_weaver.log" | head -60
$B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu exit $?: $(grep -E '^ +tests ' "$OUT/test_gpu.log")"
grep -B2 -A12 FAILED "$OUT/test_gpu.log" | head -60
RFX_JIT_MIN_ROWS=0 RFX_BACKEND=cuda $B/tests/test_cases > "$OUT/cases_cuda.log" 2>&1
echo "test_cases (cuda, generated kernels) exit $?: $(grep -E '^ +tests ' "$OUT/cases_cuda.log")"
grep -B3 -A8 FAILED "$OUT/cases_cuda.log" | head -40
echo "== bench_weaver"
$B/bench/bench_weaver ${RFX_WEAVER_MB:-64 4096} ${RFX_WEAVER_REPS:-5} ${RFX_WEAVER_PATTERNS:-abcde} 2>&1 | tee "$OUT/bench_weaver.txt"
echo "== bench_weaver again: kernels from the disk cache"
$B/bench/bench_weaver 64 64 1 2>&1 | tail -1
if [ "${RFX_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_weaver > "$OUT/sanitizer-weaver-$tool.log" 2>&1
    echo "$tool test_weaver exit $?: $(grep -E "ERROR SUMMARY|tests " "$OUT/sanitizer-weaver-$tool.log" | tr '\n' ' ')"
  done
fi
