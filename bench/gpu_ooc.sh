#!/usr/bin/env bash
# Out-of-core and multi-GPU evidence on the lent GPU machine (issue: boxing, double
# buffering, streaming operators), over a build carried in .device/build and graphs in
# .device/graphs. Logs go to $OUT. RFX_OOC_SCALES (default "22 24") picks the R-MAT
# scales of bench_ooc; RFX_OOC_DEVICES=N adds the run spread over N GPUs; RFX_SKIP_TESTS=1
# leaves out the tests and the bundled graphs' capped counts.
. "$(dirname "$0")/gpu_env.sh"
export RFX_CACHE_DIR=/tmp/rfx-jit-cache
nvidia-smi --query-gpu=name,memory.total --format=csv | tee "$OUT/device-ooc.txt"
if [ "${RFX_SKIP_TESTS:-0}" != 1 ]; then
echo "== test_ooc on the GPU: every relation under 1-64 MB caps equals the uncapped run"
RFX_BACKEND=cuda $B/tests/test_ooc > "$OUT/ooc.log" 2>&1; echo "test_ooc (cuda) exit $?: $(grep -E '^ +tests ' "$OUT/ooc.log")"
grep -B2 -A10 FAILED "$OUT/ooc.log" | head -40
echo "== every case on the GPU under a 4 MB cap"
RFX_BACKEND=cuda RFX_TEST_ARGS=--device-memory=4194304 $B/tests/test_cases > "$OUT/cases_capped_cuda.log" 2>&1
echo "test_cases (cuda, 4 MB) exit $?: $(grep -E '^ +tests ' "$OUT/cases_capped_cuda.log")"
grep -B3 -A8 FAILED "$OUT/cases_capped_cuda.log" | head -40
echo "== GPU primitive and leapfrog triejoin tests"
RFX_GPU_QUICK=1 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu exit $?: $(grep -E '^ +tests ' "$OUT/test_gpu.log")"
grep -B2 -A6 FAILED "$OUT/test_gpu.log" | head -30
RFX_GRAPHS=$G $B/tests/test_lftj > "$OUT/test_gpu.log" 2>&1; echo "test_lftj exit $?: $(grep -E '^ +tests ' "$OUT/test_gpu.log")"
grep -B2 -A6 FAILED "$OUT/test_gpu.log" | head -30
echo "== triangles with the cap at 25%, 10%, 5% of the oriented edges (8 bytes each) vs MANIFEST"
while IFS=$'\t' read -r file repo path nodes und tri pub four sha; do
  [ "$file" = file ] && continue
  for pct in ${RFX_OOC_PCTS:-100 25 10 5}; do
    cap=$((und * 8 * pct / 100))
    s=$(date +%s.%N)
    got=$($B/runtime/rfx cliques -k 3 --count --backend=cuda $([ $pct = 100 ] || echo --device-memory=$cap) "$G/$file" 2>"$OUT/err.txt")
    e=$(date +%s.%N)
    printf "%-26s cap %3s%% %10s %10s %6.2f s %s\n" "$file" "$pct" "$got" "$tri" "$(awk "BEGIN {print $e - $s}")" \
      "$([ "$got" = "$tri" ] && echo ok || echo "MISMATCH $(head -c 300 "$OUT/err.txt")")"
  done
  got=$($B/runtime/rfx cliques -k 3 --count --backend=cuda --tune box_tries=1 --device-memory=$((und * 8 * 5 / 100)) \
    "$G/$file" 2>"$OUT/err.txt")   # slices sent as TrieArrays
  printf "%-26s cap   5%% %10s %10s TrieArray slices %s\n" "$file" "$got" "$tri" \
    "$([ "$got" = "$tri" ] && echo ok || echo "MISMATCH $(head -c 300 "$OUT/err.txt")")"
  got=$($B/runtime/rfx cliques -k 4 --count --backend=cuda "$G/$file" 2>"$OUT/err.txt")
  printf "%-26s k=4 in core %10s %10s %s\n" "$file" "$got" "$four" "$([ "$got" = "$four" ] && echo ok || echo MISMATCH)"
done < "$G/MANIFEST.tsv" | tee "$OUT/cliques_capped.txt"
grep -c MISMATCH "$OUT/cliques_capped.txt" | sed 's/^/capped triangle mismatches: /'
fi
if [ "${RFX_SKIP_TC:-0}" != 1 ]; then
echo "== transitive closure with the cap below its final size"
for g in ca-GrQc.txt p2p-Gnutella08.txt; do
  printf '.decl e(x: number, y: number)\n.input e(filename="%s", format="edges")\n.decl p(x: number, y: number)\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n.printsize p\n' "$G/$g" > "$OUT/tc.dl"
  for cap in 0 64M 16M; do
    s=$(date +%s.%N)
    res=$($B/runtime/rfx --backend=cuda $([ $cap = 0 ] || echo --device-memory=$cap) --profile "$OUT/tc.dl" 2>"$OUT/tc-$cap.err")
    rc=$?
    e=$(date +%s.%N)
    printf "%-20s cap %4s exit %d %8.2f s %s | %s\n" "$g" "$cap" $rc "$(awk "BEGIN {print $e - $s}")" "$res" "$(grep 'out of core' "$OUT/tc-$cap.err")"
  done
done | tee "$OUT/tc_capped.txt"
fi
echo "== bench_ooc: triangle counting in core, at 25/10/5% caps$( [ "${RFX_OOC_DEVICES:-1}" -gt 1 ] && echo ", on ${RFX_OOC_DEVICES} GPUs")"
args=""
for s in ${RFX_OOC_SCALES:-22 24}; do args="$args -s $s"; done
timeout 420 $B/bench/bench_ooc -r ${RFX_OOC_REPS:-2} ${RFX_OOC_CAPS:-} -d "${RFX_OOC_DEVICES:-1}" -t "$OUT/trace-ooc.json" $args 2>&1 | tee "$OUT/bench_ooc.txt"
command -v python3 >/dev/null && python3 bench/trace_overlap.py "$OUT/trace-ooc.json"
if [ "${RFX_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck on the out-of-core tests (GPU)"
  RFX_BACKEND=cuda timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_ooc > "$OUT/sanitizer-ooc.log" 2>&1
  echo "memcheck test_ooc exit $?: $(grep -E "ERROR SUMMARY|tests " "$OUT/sanitizer-ooc.log" | tr '\n' ' ')"
  RFX_BACKEND=cuda timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_ooc > "$OUT/sanitizer-ooc-race.log" 2>&1
  echo "racecheck test_ooc exit $?: $(grep -E "ERROR SUMMARY|tests " "$OUT/sanitizer-ooc-race.log" | tr '\n' ' ')"
fi
