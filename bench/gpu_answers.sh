#!/usr/bin/env bash
# gpu_answers.sh: runs on the lent GPU machine over binaries carried in .device/ (see
# docs/RELIABILITY.md): the CUDA backend's answers against the CPU backend's and Soufflé's,
# the GPU tests, then TC and SG timed with this build and an earlier one, side by side.
#   .device/new/   rfx, librfx.so.0, test_cases, test_gpu, test_cli of this build
#   .device/old/   rfx, librfx.so.0 of the build to compare with (optional)
#   .device/souffle, .device/graphs/   Soufflé 2.5 and the graphs TC and SG read
# Logs go to $OUT (or ./gpu-out). SOUFFLE_SECONDS sets each differential run's budget;
# RFX_SKIP_TESTS=1 skips the test programs, RFX_SKIP_BENCH=1 the timings.
. "$(dirname "$0")/gpu_env.sh"
D=$PWD/.device
budget=${SOUFFLE_SECONDS:-120}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"
git log --oneline -1 2>/dev/null | tee -a "$OUT/device.txt"

if [ "${RFX_SKIP_TESTS:-0}" != 1 ]; then
echo "== end-to-end cases on both backends"
for be in cpu cuda; do
  RFX_TEST_BIN=$D/new/rfx RFX_TEST_CASES=$PWD/tests/cases RFX_BACKEND=$be RFX_TEST_ARGS=--tune=jit_min_rows=0,jit_background=0 \
    RFX_CACHE_DIR=$OUT/jit-cache "$D/new/test_cases" > "$OUT/cases_$be.log" 2>&1
  echo "test_cases ($be) exit $?: $(grep -E '^ +tests ' "$OUT/cases_$be.log")"
  grep -B3 -A8 FAILED "$OUT/cases_$be.log" | head -40
done
RFX_TEST_BIN=$D/new/rfx "$D/new/test_cli" > "$OUT/cli.log" 2>&1
echo "test_cli exit $?: $(grep -E '^ +tests ' "$OUT/cli.log")"
RFX_GPU_QUICK=1 RFX_TEST_BIN=$D/new/rfx RFX_TEST_CASES=$PWD/tests/cases "$D/new/test_gpu" > "$OUT/gpu.log" 2>&1
echo "test_gpu (quick) exit $?: $(grep -E '^ +tests |^ +asserts ' "$OUT/gpu.log" | tr -s ' ' | tr '\n' ' ')"
grep -B3 -A8 FAILED "$OUT/gpu.log" | head -40
fi

echo "== random programs: rfx against Soufflé 2.5, on each backend"
jobs=$(( $(nproc) - 2 ))
for be in cpu cuda; do
  python3 scripts/diff_souffle.py "$D/new/rfx" 1000000 --souffle "$D/souffle" --seed $((RANDOM + 1000)) \
    --work "/tmp/diff-$be" --budget "$budget" --jobs "$jobs" --rfx-opts="--backend=$be" > "$OUT/diff_$be.log" 2>&1
  echo "diff_souffle ($be) exit $?: $(tail -1 "$OUT/diff_$be.log")"
  grep -E "refused|differs" "$OUT/diff_$be.log" | head -5
  ls -d /tmp/diff-$be/fail-* 2>/dev/null | head -3 | while read -r f; do
    echo "--- $f"; cat "$f/why.txt"; head -c 1500 "$f/program.dl"; done
done

[ "${RFX_SKIP_BENCH:-0}" = 1 ] && exit 0
echo "== TC and SG: this build against the earlier one, runs alternating, median of 5"
echo "(run s: the engine's own time from --profile=json, the CUDA driver's start and the file's read outside; wall s: the whole process)"
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf "%-3s %-22s %-5s %10s %9s %9s %9s %9s\n" run graph backend tuples new_run old_run new_wall old_wall | tee "$OUT/tc_sg.txt"
for run in "tc p2p-Gnutella31.txt.gz" "tc ca-GrQc.txt" "sg ca-HepTh.txt" "sg p2p-Gnutella08.txt"; do
  set -- $run
  tc_sg_program "$1" "$D/graphs/$2" > "$OUT/$1.dl"
  for be in cuda cpu; do
    [ "$be" = cpu ] && [ "$2" = p2p-Gnutella31.txt.gz ] && continue
    reps=5; [ "$be" = cpu ] && reps=3
    rm -f "$OUT"/t_*
    for i in $(seq $reps); do
      for build in new old; do
        s=$(date +%s.%N)
        n=$("$D/$build/rfx" -q --backend=$be --profile=json "$OUT/p.json" "$OUT/$1.dl" | cut -f2)
        e=$(date +%s.%N)
        awk "BEGIN {print $e - $s}" >> "$OUT/t_wall_$build"
        grep -o '"seconds": [0-9.]*' "$OUT/p.json" | head -1 | cut -d' ' -f2 >> "$OUT/t_run_$build"
        [ "$build" = new ] && tuples=$n
      done
    done
    printf "%-3s %-22s %-5s %10s %9.3f %9.3f %9.3f %9.3f\n" "$1" "$2" $be "$tuples" \
      "$(median < "$OUT/t_run_new")" "$(median < "$OUT/t_run_old")" "$(median < "$OUT/t_wall_new")" \
      "$(median < "$OUT/t_wall_old")" | tee -a "$OUT/tc_sg.txt"
  done
done
rm -f "$OUT"/t_* "$OUT/p.json"
rm -rf "$OUT/jit-cache"
