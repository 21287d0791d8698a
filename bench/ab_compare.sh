#!/usr/bin/env bash
# ab_compare.sh OLD NEW GRAPHS [ROUNDS [WORKLOADS]]: two builds of rfx side by side on the GPU, run
# alternately (old, new, old, new, ...) ROUNDS times (default 5), and the median of each
# printed with new/old: TC of p2p-Gnutella31 and SG of ca-HepTh through librfx (warm
# engines), a CSPA-style points-to analysis as a whole process, the in-core triangle count
# of R-MAT 24 (bench_lftj), the count at a 25% memory cap (bench_ooc) and the primitives at
# 2^26-2^28 (bench_gpu_prims, each operator's median time). OLD and NEW are folders holding
# a build's rfx, librfx.so.0, bench_programs, bench_lftj, bench_ooc and bench_gpu_prims;
# GRAPHS holds the SNAP files. WORKLOADS (default all): some of tc sg points_to lftj24
# ooc25 prims, blank-separated; also, not in the default, `rfx cliques -k K --count` as a
# process, its LFTJ commands' time from --profile: cliques3 / cliques4 over R-MAT 20 (edge
# factor 16, made by NEW's gen_graph), cliques3_25 / cliques4_25 over R-MAT 20 / 18 with
# the device memory capped at 25% of the oriented relation, cliques3_slashdot /
# cliques4_slashdot over soc-Slashdot0902. Logs go to $OUT (default a temporary folder).
set -uo pipefail
OLD=$(realpath "$1") NEW=$(realpath "$2") G=$(realpath "$3") ROUNDS=${4:-5}
WORKLOADS=${5:-tc sg points_to lftj24 ooc25 prims}
OUT=${OUT:-$(mktemp -d)}
cd "$(dirname "$0")/.."
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# the points-to input: 1,500 variables, seed 7 (as bench/points_to.sh makes them)
python3 - 1500 "$W/pt" <<'PY'
import os, random, sys
n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
rng = random.Random(7)
for name, m in (("addressOf", n), ("assign", n), ("load", n // 4), ("store", n // 4)):
    with open("%s/%s.facts" % (out, name), "w") as f:
        f.write("".join("%d\t%d\n" % (rng.randrange(n), rng.randrange(n)) for _ in range(m)))
PY
p2p31=$G/p2p-Gnutella31.txt
[ -f "$p2p31" ] || { gzip -dc "$G/p2p-Gnutella31.txt.gz" > "$W/p2p-Gnutella31.txt"; p2p31=$W/p2p-Gnutella31.txt; }

# R-MAT graph of scale $1 (edge factor 16, seed 1), made once by NEW's gen_graph
rmat() {
  [ -f "$W/rmat$1.txt" ] || "$NEW/gen_graph" rmat "$1" 16 1 "$W/rmat$1.txt" > /dev/null || return 1
  echo "$W/rmat$1.txt"
}
# the device memory for a 25% cap of the oriented relation of graph $1 (8 bytes a row: half
# its distinct non-loop edges), for `rfx cliques`; counted once a graph
quarter_cap() {
  [ -f "$1.cap" ] || awk '$1 != $2 {print ($1 < $2 ? $1 " " $2 : $2 " " $1)}' "$1" | sort -u | wc -l \
    | awk '{print int($1 * 8 / 4)}' > "$1.cap"
  cat "$1.cap"
}
# `rfx cliques -k $2 --count` over graph $3 with build $1 (and options after), the LFTJ
# commands' ms from --profile
cliques_ms() {
  local B=$1 k=$2 g=$3
  shift 3
  "$B/rfx" -q cliques -k "$k" --count --backend=cuda --profile "$@" "$g" 2> "$W/cliques.err" > "$W/cliques.out" \
    || { echo fail; return; }
  echo "$k $(basename "$g") $*: $(cat "$W/cliques.out")" >> "$OUT/cliques_counts.txt"
  awk '$1 == "LFTJ" {s += $3} END {printf "%.1f\n", s * 1000}' "$W/cliques.err"
}
slashdot() {
  [ -f "$W/slashdot.txt" ] || gzip -dc "$G/soc-Slashdot0902.txt.gz" > "$W/slashdot.txt"
  echo "$W/slashdot.txt"
}

# one measurement of workload $1 with build folder $2, in ms, on stdout
measure() {
  local w=$1 B=$2
  export LD_LIBRARY_PATH=$B
  case $w in
    tc) "$B/bench_programs" -g -r 1 -p tc "$p2p31" | awk '$1 == "tc" {print $4}' ;;
    sg) "$B/bench_programs" -g -r 1 -p sg "$G/ca-HepTh.txt" | awk '$1 == "sg" {print $4}' ;;
    points_to)
      local s e
      s=$(date +%s%N)
      "$B/rfx" -q --backend=cuda -F "$W/pt" programs/points_to.dl > "$W/pt.out" 2>&1 || { echo fail; return; }
      e=$(date +%s%N)
      awk -v s="$s" -v e="$e" 'BEGIN {printf "%.1f\n", (e - s) / 1e6}' ;;
    lftj24) "$B/bench_lftj" -c -r 3 -s 24 | awk '$1 ~ /^rmat/ {print $11}' ;;
    ooc25) "$B/bench_ooc" -r 1 -s 24 -c 0.25 | awk '$1 ~ /^rmat/ && $6 == "25%" {print $12 * 1000}' ;;
    cliques3) cliques_ms "$B" 3 "$(rmat 20)" ;;
    cliques4) cliques_ms "$B" 4 "$(rmat 20)" ;;
    cliques3_25) local g; g=$(rmat 20); cliques_ms "$B" 3 "$g" --device-memory="$(quarter_cap "$g")" ;;
    cliques4_25) local g; g=$(rmat 18); cliques_ms "$B" 4 "$g" --device-memory="$(quarter_cap "$g")" ;;
    cliques3_slashdot) cliques_ms "$B" 3 "$(slashdot)" ;;
    cliques4_slashdot) cliques_ms "$B" 4 "$(slashdot)" ;;
  esac
}

ratio() { awk -v n="$1" -v o="$2" 'BEGIN {if (o + 0 > 0 && n + 0 > 0) printf "%.3f", n / o; else print "-"}'; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf "%-12s %12s %12s %8s\n" workload "old ms" "new ms" new/old | tee "$OUT/ab.txt"
for w in $WORKLOADS; do
  [ "$w" = prims ] && continue
  : > "$W/$w.old"; : > "$W/$w.new"
  for r in $(seq "$ROUNDS"); do
    measure $w "$OLD" >> "$W/$w.old"
    measure $w "$NEW" >> "$W/$w.new"
  done
  o=$(median < "$W/$w.old") n=$(median < "$W/$w.new")
  printf "%-12s %12s %12s %8s\n" "$w" "$o" "$n" "$(ratio "$n" "$o")" | tee -a "$OUT/ab.txt"
  { echo "$w old: $(tr '\n' ' ' < "$W/$w.old")"; echo "$w new: $(tr '\n' ' ' < "$W/$w.new")"; } >> "$OUT/ab_runs.txt"
done

# the primitives: each build's own median of ROUNDS repeats, the two builds alternated twice
case " $WORKLOADS " in *" prims "*) ;; *) exit 0 ;; esac
for r in 1 2; do
  LD_LIBRARY_PATH=$OLD "$OLD/bench_gpu_prims" 26 28 "$ROUNDS" > "$OUT/prims_old_$r.txt" 2>&1
  LD_LIBRARY_PATH=$NEW "$NEW/bench_gpu_prims" 26 28 "$ROUNDS" > "$OUT/prims_new_$r.txt" 2>&1
done
echo | tee -a "$OUT/ab.txt"
printf "%-12s %5s %12s %12s %8s\n" operator log2n "old ms" "new ms" new/old | tee -a "$OUT/ab.txt"
cat "$OUT"/prims_old_*.txt | awk '$2 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {print $1 "_" $2, $4}' | sort > "$W/po"
cat "$OUT"/prims_new_*.txt | awk '$2 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {print $1 "_" $2, $4}' | sort > "$W/pn"
for key in $(cut -d' ' -f1 "$W/po" | sort -u); do
  o=$(awk -v k="$key" '$1 == k {print $2}' "$W/po" | median) n=$(awk -v k="$key" '$1 == k {print $2}' "$W/pn" | median)
  printf "%-12s %5s %12s %12s %8s\n" "${key%_*}" "${key##*_}" "$o" "$n" "$(ratio "$n" "$o")" | tee -a "$OUT/ab.txt"
done
