#!/usr/bin/env bash
# Runs on the lent GPU machine, over a build carried in .device/build and graphs in
# .device/graphs (see docs/PERFORMANCE.md): GPU tests, then TC / SG on both backends,
# then compute-sanitizer. Logs go to $OUT (or ./gpu-out). RFX_SKIP_TESTS=1 runs only
# the benchmarks, RFX_SKIP_BENCH=1 only the tests.
. "$(dirname "$0")/gpu_env.sh"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv | tee "$OUT/device.txt"
if [ "${RFX_SKIP_TESTS:-0}" != 1 ]; then
echo "== GPU tests"
RFX_GPU_BIG=1 $B/tests/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu exit $?"
grep -E "FAILED|Run Summary|tests |asserts|device:" "$OUT/test_gpu.log" | head -20
grep -B2 -A6 FAILED "$OUT/test_gpu.log" | head -60
$B/tests/test_weaver > "$OUT/test_weaver.log" 2>&1; echo "test_weaver exit $?: $(grep -E '^ +tests ' "$OUT/test_weaver.log")"
grep -B2 -A8 FAILED "$OUT/test_weaver.log" | head -40

echo "== librfx on the GPU: two engines in two threads, docs examples (backend auto)"
$B/runtime/rfx --version | tee "$OUT/version.txt"
$B/tests/test_api > "$OUT/api.log" 2>&1; echo "test_api exit $?: $(grep -E '^ +tests ' "$OUT/api.log")"
grep -B3 -A8 FAILED "$OUT/api.log" | head -40
$B/tests/test_docs > "$OUT/docs.log" 2>&1; echo "test_docs exit $?: $(grep -E '^ +tests ' "$OUT/docs.log")"
grep -B3 -A8 FAILED "$OUT/docs.log" | head -40
echo "== triangles and 4-cliques on every bundled graph, GPU (rfx cliques --count) vs MANIFEST"
$B/tests/test_lftj > "$OUT/lftj.log" 2>&1; echo "test_lftj exit $?: $(grep -E '^ +tests ' "$OUT/lftj.log")"
bad=0
while IFS=$'\t' read -r file repo path nodes und tri pub four sha; do
  [ "$file" = file ] && continue
  for k in 3 4; do
    want=$([ $k = 3 ] && echo "$tri" || echo "$four")
    [ -z "$want" ] || [ "$want" = - ] && continue
    s=$(date +%s.%N)
    got=$($B/runtime/rfx cliques -k $k --count --backend=cuda "$G/$file" 2>"$OUT/err.txt")
    e=$(date +%s.%N)
    printf "%-26s k=%d %12s %12s %6.2f s %s\n" "$file" $k "$got" "$want" "$(awk "BEGIN {print $e - $s}")" \
      "$([ "$got" = "$want" ] && echo ok || { bad=1; echo "MISMATCH $(head -c 200 "$OUT/err.txt")"; })"
  done
done < "$G/MANIFEST.tsv" | tee "$OUT/cliques_gpu.txt"
grep -c MISMATCH "$OUT/cliques_gpu.txt" | sed 's/^/clique mismatches: /'
echo "== end-to-end cases and fault injection on the CUDA backend"
RFX_TEST_ARGS=--tune=jit_min_rows=0,jit_background=0 RFX_CACHE_DIR=$OUT/jit-cache RFX_BACKEND=cuda $B/tests/test_cases > "$OUT/cases_cuda.log" 2>&1; echo "test_cases (cuda) exit $?: $(grep -E '^ +tests ' "$OUT/cases_cuda.log")"
grep -B3 -A8 FAILED "$OUT/cases_cuda.log" | head -40
RFX_BACKEND=cuda $B/tests/test_faults > "$OUT/faults_cuda.log" 2>&1; echo "test_faults (cuda) exit $?: $(grep -E '^ +tests |runs' "$OUT/faults_cuda.log" | tr '\n' ' ')"
grep -B2 -A8 FAILED "$OUT/faults_cuda.log" | head -40
echo "== past the device memory cap: out of core (--device-memory=16M on TC of ca-GrQc, 17,293,270 paths)"
prog0() { echo ".decl e(x: number, y: number)"; echo ".input e(filename=\"$G/ca-GrQc.txt\", format=\"edges\")"; echo ".decl p(x: number, y: number)"; echo "p(x, y) :- e(x, y)."; echo "p(x, z) :- p(x, y), e(y, z)."; echo ".printsize p"; }
prog0 > "$OUT/oom.dl"
$B/runtime/rfx --backend=cuda --device-memory=16M "$OUT/oom.dl"; echo "exit $?"
echo "(bench/gpu_ooc.sh has the out-of-core and multi-GPU evidence)"
fi
if [ "${RFX_SKIP_BENCH:-0}" != 1 ]; then
echo "== the fused groups' kernels of TC and SG, compiled into the cache (first run ever)"
for k in tc sg; do
  tc_sg_program $k "$G/p2p-Gnutella08.txt" > "$OUT/p.dl"
  s=$(date +%s.%N)
  $B/runtime/rfx --backend=cuda --tune jit_min_rows=0,jit_background=0 --profile "$OUT/p.dl" 2>&1 | grep -E "fused groups|^r\b"
  e=$(date +%s.%N)
  echo "$k cold cache: $(awk "BEGIN {print $e - $s}") s"
done
echo "== programs (wall seconds, load included; kernels from the cache)"
printf "%-4s %-24s %-11s %10s %14s\n" prog graph backend seconds tuples
for run in "tc p2p-Gnutella08.txt" "tc ca-GrQc.txt" "sg p2p-Gnutella08.txt" "sg ca-GrQc.txt" "tc ca-HepTh.txt" "tc p2p-Gnutella31.txt.gz" "sg ca-HepTh.txt"; do
  set -- $run
  tc_sg_program "$1" "$G/$2" > "$OUT/p.dl"
  for be in cuda cuda-nofuse cpu; do
    [ "$be" = cpu ] && [ "${RFX_SKIP_CPU:-0}" = 1 ] && continue
    s=$(date +%s.%N)
    res=$(timeout 300 $B/runtime/rfx --backend=${be%-nofuse} $([ "$be" = cuda-nofuse ] && echo --no-fuse) \
          -j "$(nproc)" "$OUT/p.dl" 2>"$OUT/err.txt")
    rc=$?
    e=$(date +%s.%N)
    printf "%-4s %-24s %-11s %10.2f %14s %s\n" "$1" "$2" "$be" "$(awk "BEGIN {print $e - $s}")" "$(echo "$res" | cut -f2)" \
      "$([ $rc = 0 ] || echo "exit $rc: $(head -c 300 "$OUT/err.txt")")"
  done
done | tee "$OUT/programs.txt"
echo "== the same programs through librfx: warm engines, no process or CUDA driver start (cuInit and a context: 0.2-0.3 s a process)"
$B/bench/bench_programs -r 3 -p tc "$G/p2p-Gnutella08.txt" "$G/ca-GrQc.txt" "$G/ca-HepTh.txt" 2>&1 | tee "$OUT/programs_librfx.txt"
$B/bench/bench_programs -r 3 -p sg "$G/p2p-Gnutella08.txt" "$G/ca-GrQc.txt" 2>&1 | tail -2 | tee -a "$OUT/programs_librfx.txt"
echo "== --profile of TC on p2p-Gnutella31 (CUDA)"
tc_sg_program tc "$G/p2p-Gnutella31.txt.gz" > "$OUT/p.dl"
$B/runtime/rfx --backend=cuda --profile --profile=json "$OUT/profile-tc-gnutella31.json" "$OUT/p.dl" 2>&1 | tail -20
echo "== bench_weaver: the thesis's five fusion patterns, fused vs unfused"
$B/bench/bench_weaver ${RFX_WEAVER_MB:-64 4096} 5 2>&1 | tee "$OUT/bench_weaver.txt"
echo "== bench_lftj: triangles on the bundled graphs and R-MAT (GPU LFTJ vs binary joins vs CPU LFTJ)"
files=""
for f in "$G"/*.txt "$G"/*.txt.gz "$G"/*.csv; do files="$files -f $f"; done
$B/bench/bench_lftj -r 3 $files ${RFX_RMAT:--s 20 -s 22 -s 24} 2>&1 | tee "$OUT/bench_lftj.txt"
echo "== bench_lftj -k4: 4-cliques, LFTJ vs binary joins (the whole program through librfx, and the join alone)"
$B/bench/bench_lftj -k4 -r 3 $files -s 16 -s 18 2>&1 | tee "$OUT/bench_k4.txt"
fi
if [ "${RFX_SANITIZE:-1}" = 1 ] && [ "${RFX_SKIP_TESTS:-0}" != 1 ] && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer (memcheck, racecheck) on the GPU primitive tests"
  compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_api > "$OUT/sanitizer-api.log" 2>&1
  echo "memcheck test_api exit $?: $(grep -E "ERROR SUMMARY|tests " "$OUT/sanitizer-api.log" | tr '\n' ' ')"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_weaver > "$OUT/sanitizer-weaver-$tool.log" 2>&1
    echo "$tool test_weaver exit $?: $(grep -E "ERROR SUMMARY|tests " "$OUT/sanitizer-weaver-$tool.log" | tr '\n' ' ')"
  done
  for tool in memcheck synccheck; do
    RFX_GPU_QUICK=1 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_gpu > "$OUT/sanitizer-$tool.log" 2>&1
    echo "$tool exit $?: $(grep -E "ERROR SUMMARY|tests " "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
  done
  # racecheck of test_gpu in one process does not finish: a process a test (and the rest of
  # the suite, under both tools: bench/gpu_sanitize.sh without arguments)
  RFX_SANITIZE_ONLY=gpu bash bench/gpu_sanitize.sh racecheck | tail -1
fi
