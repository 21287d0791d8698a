#!/usr/bin/env bash
# functors.sh [RFX] [ROWS]: what symbol functors cost. Rules that make and read symbols
# (to_string, cat, strlen, substr, to_number) over ROWS generated tuples (default
# 2,000,000), on each backend; on the GPU they run on the host beside the device (the
# out-of-core layer copies their inputs down and their results up). Prints a table:
# rule, backend, seconds (the engine's own run time, median of 3), tuples out.
set -uo pipefail
RFX=${1:-build/runtime/rfx}
ROWS=${2:-2000000}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
python3 - "$ROWS" > "$W/n.facts" <<'EOF'
import sys
n = int(sys.argv[1])
sys.stdout.write("".join("%d\t%d\n" % (i, (i * 7919) % 100003) for i in range(n)))
EOF
rule() {   # the program of one rule over n(a, b)
  cat <<EOF
.decl n(a: number, b: number)
.input n(filename="$W/n.facts")
.decl r(a: number, s: symbol)
.decl q(a: number, k: number)
$1
.printsize $2
EOF
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
backends="cpu"
"$RFX" --version 2>/dev/null | grep -q "cuda (available" && backends="cpu cuda"
printf "%-58s %-5s %9s %10s\n" rule backend seconds tuples
while IFS='|' read -r name text out; do
  rule "$text" "$out" > "$W/p.dl"
  for be in $backends; do
    for i in 1 2 3; do
      n=$("$RFX" -q --backend="$be" --profile=json "$W/p.json" "$W/p.dl" | cut -f2)
      grep -o '"seconds": [0-9.]*' "$W/p.json" | head -1 | cut -d' ' -f2
    done > "$W/t"
    printf "%-58s %-5s %9s %10s\n" "$name" "$be" "$(median < "$W/t")" "$n"
  done
done <<'EOF'
r(a, to_string(b)) (makes ROWS symbols)|r(a, to_string(b)) :- n(a, b).|r
r(a, cat(to_string(a), "-x")) (makes 2 x ROWS)|r(a, cat(to_string(a), "-x")) :- n(a, b).|r
q(a, strlen(to_string(b))) (reads them back)|q(a, strlen(to_string(b))) :- n(a, b).|q
q(a, to_number(to_string(a + b))) (round trip)|q(a, to_number(to_string(a + b))) :- n(a, b).|q
q(a, a + b) (the same shape without functors)|q(a, a + b) :- n(a, b).|q
EOF
