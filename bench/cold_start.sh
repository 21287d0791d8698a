#!/usr/bin/env bash
# cold_start.sh RFX [ROUNDS [BACKENDS [N]]]: a first run (empty kernel cache: every fused
# group's kernels to compile with NVRTC) against a warm one (every kernel in the cache: a
# run with jit_background=0 filled it), whole processes, of programs/cspa.dl over two
# random inputs of N variables (default 2000; seeds 11 and 12, as bench/multi_gpu.sh makes
# them). Cold and warm runs alternate ROUNDS times (default 5) per backend (default "cuda
# auto"); the table gives their medians and cold / warm, and the NVRTC line of one more
# cold run's `--profile`. Logs in $OUT (default a temporary folder).
set -uo pipefail
RFX=$(realpath "$1") ROUNDS=${2:-5} BACKENDS=${3:-cuda auto} N=${4:-2000}
OUT=${OUT:-$(mktemp -d)}
cd "$(dirname "$0")/.."
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

for seed in 11 12; do
  python3 - "$N" "$W/in$seed" "$seed" <<'PY'
import os, random, sys
n, out, seed = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
rng = random.Random(seed)
for name, m in (("assign", n * 7 // 10), ("dereference", n * 3 // 10)):
    with open("%s/%s.facts" % (out, name), "w") as f:
        f.write("".join("%d\t%d\n" % (rng.randrange(n), rng.randrange(n)) for _ in range(m)))
PY
done

median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# one whole run in seconds on stdout: backend $1, input $2, cache folder $3 (more options after)
run() {
  local s e be=$1 in=$2 cache=$3
  shift 3
  s=$(date +%s%N)
  RFX_CACHE_DIR=$cache "$RFX" -q --backend="$be" "$@" -F "$W/$in" programs/cspa.dl \
    > "$W/out.txt" 2> "$W/err.txt" || { echo fail; cat "$W/err.txt" >> "$OUT/errors.txt"; return; }
  e=$(date +%s%N)
  awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", (e - s) / 1e9}'
}

printf "%-8s %-6s %10s %10s %11s  %s\n" input backend "cold s" "warm s" "cold/warm" "NVRTC (a profiled cold run)" | tee "$OUT/cold_start.txt"
for input in in11 in12; do
  for be in $BACKENDS; do
    : > "$W/cold"; : > "$W/warm"
    warm_dir=$W/cache-warm
    rm -rf "$warm_dir" && mkdir -p "$warm_dir"
    # fills the warm cache: every kernel compiled before its group's first run (a run in the
    # background would leave those NVRTC had not finished to later runs)
    run "$be" "$input" "$warm_dir" --tune jit_background=0 > /dev/null
    for r in $(seq "$ROUNDS"); do
      rm -rf "$W/cache-cold" && mkdir -p "$W/cache-cold"
      run "$be" "$input" "$W/cache-cold" >> "$W/cold"
      run "$be" "$input" "$warm_dir" >> "$W/warm"
    done
    rm -rf "$W/cache-cold" && mkdir -p "$W/cache-cold"
    run "$be" "$input" "$W/cache-cold" --profile > /dev/null   # (profiled: every command waited for)
    nvrtc=$(grep -o "[0-9]* compiled with NVRTC ([0-9.]* ms)" "$W/err.txt" | head -1)
    c=$(median < "$W/cold") w=$(median < "$W/warm")
    printf "%-8s %-6s %10s %10s %11s  %s\n" "$input" "$be" "$c" "$w" \
      "$(awk -v c="$c" -v w="$w" 'BEGIN {if (w + 0 > 0) printf "%.2f", c / w; else print "-"}')" "${nvrtc:--}" |
      tee -a "$OUT/cold_start.txt"
    { echo "$input $be cold: $(tr '\n' ' ' < "$W/cold")"; echo "$input $be warm: $(tr '\n' ' ' < "$W/warm")"; } \
      >> "$OUT/cold_start_runs.txt"
  done
done
