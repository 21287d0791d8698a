#!/usr/bin/env bash
# Equivalence relations (eqrel) against Soufflé: bench/eqrel.sh RFX [SOUFFLE_BIN [BACKENDS]]
# prints whole-process seconds of two programs on generated inputs, rfx on each backend
# (default: cpu auto) and Soufflé's interpreter where SOUFFLE_BIN is given, and checks the
# printed sizes agree:
#   classes      20 classes of 1,000 elements joined by random spanning links; the pairs
#                (20 M) counted
#   unification  unification-based points-to over 100,000 variables (15,000 assignments,
#                20,000 allocations): an eqrel in a recursion with the relation it unifies by
set -uo pipefail
rfx=$1; souffle=${2:-}; backends=${3:-cpu auto}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/classes" "$W/unification"
cat > "$W/classes.dl" <<'DL'
.decl link(x: number, y: number)
.input link
.decl same(x: number, y: number) eqrel
same(x, y) :- link(x, y).
.printsize same
DL
cat > "$W/unification.dl" <<'DL'
.decl assign(x: number, y: number)
.input assign
.decl alloc(x: number, o: number)
.input alloc
.decl same(x: number, y: number) eqrel
.decl pts(x: number, o: number)
same(x, y) :- assign(x, y).
same(a, b) :- pts(x, a), pts(y, b), same(x, y), a != b.
pts(x, o) :- alloc(x, o).
pts(x, o) :- same(x, y), pts(y, o).
.printsize same
.printsize pts
DL
python3 - "$W" <<'PY'
import random, sys
w = sys.argv[1]
r = random.Random(3)
with open(w + "/classes/link.facts", "w") as f:
    for c in range(20):
        for i in range(1, 1000):
            f.write("%d\t%d\n" % (c * 1000 + i, c * 1000 + r.randrange(i)))
r = random.Random(5)
n = 100000
with open(w + "/unification/assign.facts", "w") as f:
    f.writelines("%d\t%d\n" % (r.randrange(n), r.randrange(n)) for _ in range(15000))
with open(w + "/unification/alloc.facts", "w") as f:
    f.writelines("%d\t%d\n" % (r.randrange(n), n + r.randrange(n)) for _ in range(20000))
PY
timed() {   # seconds of one run; its sizes in $W/out
  local s e
  s=$(date +%s.%N); timeout 600 "$@" > "$W/out" 2>&1; e=$(date +%s.%N)
  awk "BEGIN {printf \"%.3f\", $e - $s}"
}
printf "%-12s" program; for b in $backends; do printf " %10s" "rfx $b"; done
[ -n "$souffle" ] && printf " %10s" souffle; printf "  sizes\n"
status=0
for p in classes unification; do
  printf "%-12s" $p; want=""
  for b in $backends; do
    printf " %10s" "$(timed "$rfx" --backend=$b -F "$W/$p" "$W/$p.dl")"
    got=$(sort "$W/out" | tr '\n' ' '); [ -z "$want" ] && want=$got
    [ "$got" = "$want" ] || { status=1; echo " DISAGREE $b: $got"; }
  done
  if [ -n "$souffle" ]; then
    printf " %10s" "$(timed "$souffle" -F "$W/$p" -D "$W" "$W/$p.dl")"
    got=$(sort "$W/out" | tr '\n' ' ')
    [ "$got" = "$want" ] || { status=1; echo " DISAGREE souffle: $got"; }
  fi
  printf "  %s\n" "$want"
done
exit $status
