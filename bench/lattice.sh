#!/usr/bin/env bash
# Lattices (.lattice) against compiled Soufflé: single-source shortest paths as the lattice of
# numbers ordered by >= (Lub: the smaller, from the test library tests/functors) over a SNAP
# graph with random weights 1-19 from node 0. Prints whole-process seconds, best of REPEATS,
# of rfx (each backend) and of Soufflé's compiled program (-j THREADS), and checks the sizes.
# Usage: bench/lattice.sh RFX FUNCTOR_LIB_DIR GRAPH [SOUFFLE_BIN [BACKENDS [THREADS [REPEATS]]]]
set -uo pipefail
rfx=$(realpath "$1"); lib=$(cd "$2" && pwd); graph=$3; souffle=${4:-}; backends=${5:-cpu auto}; threads=${6:-2}; reps=${7:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
python3 - "$graph" "$W/edge.facts" <<'PY'
import gzip, random, sys
rng = random.Random(1)
src = gzip.open(sys.argv[1], "rt") if sys.argv[1].endswith(".gz") else open(sys.argv[1])
with open(sys.argv[2], "w") as out:
    for line in src:
        f = line.replace(",", " ").split()
        if len(f) >= 2 and f[0].isdigit() and f[1].isdigit():
            out.write(f"{f[0]}\t{f[1]}\t{rng.randrange(1, 20)}\n")
PY
cat > "$W/sssp.dl" <<'DL'
.type Dist <: number
.functor lat_min(a: Dist, b: Dist): Dist
.functor lat_max(a: Dist, b: Dist): Dist
.lattice Dist<> { Bottom -> 2147483647, Lub -> @lat_min(_, _), Glb -> @lat_max(_, _) }
.decl edge(x: number, y: number, w: number)
.input edge
.decl dist(x: number, d: Dist<>)
dist(0, 0).
dist(y, d + w) :- dist(x, d), edge(x, y, w).
.printsize dist
DL
best() {   # best of $reps runs of "$@": seconds and the printed size
    local b= out
    for _ in $(seq "$reps"); do
        local t0=$(date +%s.%N)
        out=$("$@" 2>&1) || { echo "failed: $out" >&2; return 1; }
        local t=$(echo "$(date +%s.%N) - $t0" | bc)
        [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ] && b=$t
    done
    printf "%.3f\t%s\n" "$b" "$(echo "$out" | awk '/^dist/ {print $2}')"
}
echo -e "system\tseconds\tdist"
if [ -n "$souffle" ]; then
    inc=$(dirname "$(dirname "$souffle")")/include
    (cd "$W" && "$souffle" -g sssp.cpp sssp.dl && c++ -std=c++17 -O3 -fopenmp -DUSE_LIBZ -I "$inc" sssp.cpp -o sssp \
        -L"$lib" -ltestfunctors -lz -pthread) || exit 1
    echo -e "souffle -j$threads\t$(cd "$W" && LD_LIBRARY_PATH=$lib best ./sssp -j "$threads" -F .)"
fi
for b in $backends; do
    echo -e "rfx $b\t$(cd "$W" && best "$rfx" -q -j "$threads" --backend="$b" -L "$lib" -l testfunctors -F . sssp.dl)"
done
