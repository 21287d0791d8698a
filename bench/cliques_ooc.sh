#!/usr/bin/env bash
# k-clique counts out of core: `rfx cliques -k K --count` over R-MAT graphs in core and with
# the device memory capped at fractions of the oriented edge relation (8 bytes a row), the
# LFTJ operator's seconds from --profile (median of the repeats) and the share of the
# in-core rate each cap keeps; every count must equal the in-core one.
#   bench/cliques_ooc.sh RFX [K [SCALES [FRACTIONS [REPEATS [TUNE]]]]]
#   defaults: K=4, SCALES="20", FRACTIONS="0.25", REPEATS=1; TUNE: `--tune` settings for
#   every run (e.g. induced_device=0: parts' subgraphs made on the host); graphs are made in $TMPDIR
#   (bench/gen_graph next to RFX's build, or GEN_GRAPH=path) as gen_graph rmat S 16 1.
set -uo pipefail
rfx=${1:?usage: bench/cliques_ooc.sh RFX [K [SCALES [FRACTIONS [REPEATS [TUNE]]]]]}
k=${2:-4}; scales=${3:-20}; fractions=${4:-0.25}; reps=${5:-1}; tune=${6:+--tune=$6}
gen=${GEN_GRAPH:-$(dirname "$rfx")/../bench/gen_graph}
tmp=${TMPDIR:-/tmp}
[ -x "$gen" ] || { echo "cliques_ooc: no gen_graph at $gen (set GEN_GRAPH)"; exit 2; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# the LFTJ seconds and the count of one run: "SECONDS COUNT"
run() {
  local out err
  out=$("$rfx" -q ${tune:+"$tune"} cliques -k "$k" --count --profile "$@" 2>"$tmp/cliques_ooc.err") || { echo "fail fail"; return; }
  err=$(awk '$1 == "LFTJ" {s += $3} END {print s + 0}' "$tmp/cliques_ooc.err")
  echo "$err $out"
}
printf '%-8s %12s %14s %10s %12s %10s  %s\n' scale edges count cap LFTJ_s share answer
status=0
for s in $scales; do
  g=$tmp/rmat$s.txt
  [ -f "$g" ] || "$gen" rmat "$s" 16 1 "$g" || exit 2
  # the oriented relation's rows: the same program `rfx cliques` writes, its e counted
  prog=$tmp/cliques_ooc_e$s.dl
  cat > "$prog" <<EOF
.decl edge(x: number, y: number)
.input edge(filename="$g", format="edges")
.decl u(x: number, y: number)
u(x, y) :- edge(x, y), x != y.
u(y, x) :- edge(x, y), x != y.
.decl deg(x: number, d: number)
deg(x, d) :- u(x, _), d = count : { u(x, _) }.
.decl e(x: number, y: number)
e(x, y) :- u(x, y), deg(x, dx), deg(y, dy), dx < dy.
e(x, y) :- u(x, y), deg(x, d), deg(y, d), x < y.
.printsize e
EOF
  rows=$("$rfx" -q "$prog" | awk '$1 == "e" {print $2}')
  ts=(); count=
  for r in $(seq "$reps"); do read -r t c < <(run "$g"); ts+=("$t"); count=$c; done
  base=$(printf '%s\n' "${ts[@]}" | median)
  printf '%-8s %12s %14s %10s %12s %10s  %s\n' "R-MAT $s" "$rows" "$count" "-" "$base" "1.00" "in core"
  for f in $fractions; do
    cap=$(awk -v r="$rows" -v f="$f" 'BEGIN {printf "%d", r * 8 * f}')
    ts=(); verdict=equal
    for r in $(seq "$reps"); do
      read -r t c < <(run --device-memory="$cap" "$g"); ts+=("$t")
      [ "$c" = "$count" ] || { verdict="DIFFERS ($c)"; status=1; }
    done
    t=$(printf '%s\n' "${ts[@]}" | median)
    printf '%-8s %12s %14s %10s %12s %10s  %s\n' "R-MAT $s" "$rows" "$count" "$f" "$t" \
      "$(awk -v a="$base" -v b="$t" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')" "$verdict"
  done
done
rm -f "$tmp/cliques_ooc.err"
exit $status
