#!/usr/bin/env bash
# Rule shapes that ordinary Soufflé programs write and a planner can turn into products
# tested pair by pair: a join on a computed key (`a(x), b(x + 1, y)`), a band join
# (`b(y), y >= x - 2, y <= x + 2`), a band within keys, a recursion whose delta meets an
# atom through an expression, and Takeuchi's function (four atoms tied by x - 1, y - 1,
# z - 1). Each as a whole process on each backend and under Soufflé's interpreter, over
# the same values (made by range(), no facts), outputs compared by their sizes.
#   bench/shapes.sh RFX SOUFFLE [BACKENDS [N [JOBS]]]   (defaults: "cpu auto", 100000, all cores)
set -uo pipefail
rfx=${1:?usage: bench/shapes.sh RFX SOUFFLE [BACKENDS [N [JOBS]]]}
souffle=${2:?usage: bench/shapes.sh RFX SOUFFLE [BACKENDS [N [JOBS]]]}
backends=${3:-cpu auto}; n=${4:-100000}; jobs=${5:-$(nproc)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shapes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prog() {   # NAME BODY: a program whose output relation `out` is counted
  cat > "$tmp/$1.dl" <<DL
.decl a(x: number)
a(i) :- i = range(0, $n).
.decl b(x: number, y: number)
b(i * 3, i) :- i = range(0, $n).
.decl k(g: number, x: number)
k(i % 10, i) :- i = range(0, $n).
$2
.printsize out
DL
}
prog computed_key '.decl out(x: number, y: number)
out(x, y) :- a(x), b(x * 3 + 3, y).'
prog band '.decl out(x: number, y: number)
out(x, y) :- a(x), b(y, _), y >= x - 2, y <= x + 2.'
prog keyed_band '.decl out(g: number, x: number, y: number)
out(g, x, y) :- k(g, x), k(g, y), y > x, y <= x + 50.'
prog delta_key '.decl out(x: number)
out(0).
out(y) :- out(x), b(x * 3 + 3, y).'
cat > "$tmp/tak.dl" <<'DL'
.decl nat(n: number)
nat(-1).
nat(n + 1) :- nat(n), n < 16.
.decl tak(x: number, y: number, z: number, v: number)
tak(x, y, z, y) :- y >= x, nat(x), nat(y), nat(z).
tak(x, y, z, v) :- tak(x - 1, y, z, v1), tak(y - 1, z, x, v2), tak(z - 1, x, y, v3), tak(v1, v2, v3, v), y < x.
.decl out(n: number, v: number)
out(n, v) :- tak(n, 0, n + 1, v).
.printsize out
DL
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > "$tmp/out.txt" 2>"$tmp/err.txt" || { echo fail; return; }; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'; }
size() { awk '$1 == "out" {print $2}' "$tmp/out.txt"; }
printf '%-14s %10s %10s' shape souffle_s rows
for be in $backends; do printf ' %10s' "$be"_s; done
printf '  %s\n' answers
status=0
for s in computed_key band keyed_band delta_key tak; do
  t=$(secs "$souffle" -j "$jobs" "$tmp/$s.dl"); want=$(size)
  printf '%-14s %10s %10s' "$s" "$t" "$want"
  same=same
  for be in $backends; do
    t=$(secs "$rfx" -q -j "$jobs" --backend="$be" -D - "$tmp/$s.dl"); got=$(size)
    printf ' %10s' "$t"
    [ "$got" = "$want" ] || { same="DIFFER ($be: $got)"; status=1; }
  done
  printf '  %s\n' "$same"
done
exit $status
