#!/usr/bin/env bash
# CPU benchmark: transitive closure and same generation on SNAP graphs (the runs the
# issue compares with Souffle 2.5 -j2), triangles on the largest bundled graph.
# Prints a table: wall time (load included), result tuples, tuples/s, peak memory.
# Usage: bench/run.sh [threads]   (default 2, as in the Souffle reference runs)
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
graphs=${RFX_GRAPHS:-../shared/data/graphs}
scripts/build.sh build >/dev/null
rfx=$PWD/build/runtime/rfx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

program() {   # name graph -> program text
  local kind=$1 graph=$2
  echo ".decl edge(x: number, y: number)"
  echo ".input edge(filename=\"$graphs/$graph\", format=\"edges\")"
  case $kind in
    tc) echo ".decl r(x: number, y: number)"
        echo "r(x, y) :- edge(x, y)."
        echo "r(x, z) :- r(x, y), edge(y, z)." ;;
    sg) echo ".decl r(x: number, y: number)"
        echo "r(x, y) :- edge(p, x), edge(p, y), x != y."
        echo "r(x, y) :- edge(a, x), r(a, b), edge(b, y)." ;;
    tri) echo ".decl e(x: number, y: number)"
         echo "e(x, y) :- edge(x, y), x < y."
         echo "e(y, x) :- edge(x, y), y < x."
         echo ".decl r(x: number, y: number, z: number)"
         echo "r(x, y, z) :- e(x, y), e(y, z), e(x, z)." ;;
  esac
  echo ".printsize r"
}

printf "%-5s %-26s %8s %12s %14s %10s %12s\n" prog graph threads seconds tuples "Mtuples/s" "peak MiB"
for run in "tc p2p-Gnutella08.txt 11.0" "tc ca-GrQc.txt 25.0" "sg p2p-Gnutella08.txt 79.5" \
           "sg ca-GrQc.txt -" "tc ca-HepTh.txt -" "tri soc-Slashdot0902.txt.gz -"; do
  set -- $run
  program "$1" "$2" > "$work/p.dl"
  /usr/bin/time -f "%e %M" -o "$work/time" "$rfx" -j "$threads" "$work/p.dl" > "$work/out"
  read -r secs kb < "$work/time"
  tuples=$(cut -f2 "$work/out")
  printf "%-5s %-26s %8s %12s %14s %10.1f %12.0f" "$1" "$2" "$threads" "$secs" "$tuples" \
    "$(awk "BEGIN {print $tuples / $secs / 1e6}")" "$(awk "BEGIN {print $kb / 1024}")"
  [ "$3" != "-" ] && printf "   (Souffle 2.5 -j2: %s s)" "$3"
  echo
done
