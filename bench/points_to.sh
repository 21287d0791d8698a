#!/usr/bin/env bash
# points_to.sh [RFX] [N...]: Andersen's points-to analysis (programs/points_to.dl) over a
# random input of N variables (N address-of and assign facts, N/4 loads and stores; seed 7),
# rfx on its backends and Soufflé 2.5 (../shared/tools/souffle, when there) on the same
# host. Prints a table: n, engine, seconds (the whole process), points-to facts.
# Random inputs make one large strongly connected component: points-to grows to about
# n^2/2 and the load rule's self-join to far more, so keep N in the low thousands.
set -uo pipefail
cd "$(dirname "$0")/.."
RFX=${1:-build/runtime/rfx}
shift || true
SIZES=${*:-500 1000}
SOUFFLE=../shared/tools/souffle/bin/souffle
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
backends="cpu"
"$RFX" --version 2>/dev/null | grep -q "cuda (available" && backends="cpu cuda"
printf "%-6s %-14s %9s %12s\n" n engine seconds points_to
for n in $SIZES; do
  mkdir -p "$W/$n"
  python3 - "$n" "$W/$n" <<'PY'
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
for name, m in (("addressOf", n), ("assign", n), ("load", n // 4), ("store", n // 4)):
    with open("%s/%s.facts" % (out, name), "w") as f:
        f.write("".join("%d\t%d\n" % (rng.randrange(n), rng.randrange(n)) for _ in range(m)))
PY
  for be in $backends; do
    s=$(date +%s.%N)
    size=$("$RFX" -q --backend="$be" -F "$W/$n" programs/points_to.dl 2>&1 | tail -1 | cut -f2)
    printf "%-6s %-14s %9.2f %12s\n" "$n" "rfx $be" "$(echo "$(date +%s.%N) - $s" | bc)" "$size"
  done
  if [ -x "$SOUFFLE" ]; then
    s=$(date +%s.%N)
    size=$("$SOUFFLE" -j"$(nproc)" -F "$W/$n" programs/points_to.dl 2>&1 | tail -1 | cut -f2)
    printf "%-6s %-14s %9.2f %12s\n" "$n" "souffle -j$(nproc)" "$(echo "$(date +%s.%N) - $s" | bc)" "$size"
  fi
done
