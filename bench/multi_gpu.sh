#!/usr/bin/env bash
# multi_gpu.sh [-b BIN] [-g GRAPHS] [-n "1 2 4 8"] [-w WORKLOADS] [-l LAUNCH]: rfx on 1, 2, 4
# ... GPUs of one host as MPI processes (one a GPU: rfx gives local process i GPU i), the
# same programs and inputs on each, outputs compared with the one-GPU run's. Prints a table:
# workload, GPUs, fixpoint seconds (the run less reading facts and writing outputs: process
# and MPI start, CUDA start and facts excluded), speed-up over one GPU, rows each process
# sent on average, the largest process's share of the biggest relation, and whether the
# output is identical to one GPU's. Each cell is the second of two runs (the first fills
# the kernel cache).
#   BIN        folder with rfx and gen_graph (default build/runtime and build/bench)
#   GRAPHS     SNAP graphs (default ../shared/data/graphs): p2p-Gnutella31, ca-HepTh
#   WORKLOADS  some of: tc31 (TC of p2p-Gnutella31), rmat17 (TC of R-MAT 17, edge factor 2:
#              1.43 G paths), rmatbig (TC of R-MAT $RMAT_BIG, default "18 2"), sg (SG of
#              ca-HepTh), pt (points-to, programs/points_to.dl over $PT_N variables, default
#              3000), cspa (programs/cspa.dl over random assign and dereference facts of
#              $CSPA_N variables, default 2000), tri (triangle count of R-MAT $TRI_SCALE,
#              default 26, edge factor 16)
#   LAUNCH     how N processes start: the command before N (default "mpirun --oversubscribe -np")
# Logs (each run's JSON profile and stderr) go to $OUT (default a temporary folder).
# BACKEND=cpu runs the same table on the CPU backend (one process a socket, say).
set -uo pipefail
cd "$(dirname "$0")/.."
RFX=build/runtime/rfx GEN=build/bench/gen_graph G=../shared/data/graphs NS="1 2" LAUNCH="mpirun --oversubscribe -np"
WORKLOADS="tc31 rmat17 sg pt tri"
while getopts "b:g:n:w:l:" o; do
  case $o in
    b) RFX=$OPTARG/rfx GEN=$OPTARG/gen_graph ;;
    g) G=$OPTARG ;;
    n) NS=$OPTARG ;;
    w) WORKLOADS=$OPTARG ;;
    l) LAUNCH=$OPTARG ;;
    *) sed -n '2,22p' "$0"; exit 2 ;;
  esac
done
RFX=$(realpath "$RFX") GEN=$(realpath "$GEN") G=$(realpath -m "$G")
OUT=${OUT:-$(mktemp -d)}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

tc() {   # TC over edge file $1 into program $2 (.printsize: the closures are too big to write)
  printf '.decl edge(x: number, y: number)\n.input edge(filename="%s", format="edges")\n.decl path(x: number, y: number)\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n.printsize path\n' "$1" > "$2"
}
graph() {   # a SNAP graph's path, unpacked into $W where it is gzipped
  local f=$G/$1.txt
  [ -f "$f" ] && { echo "$f"; return; }
  [ -f "$f.gz" ] || { echo "multi_gpu.sh: $1 not in $G" >&2; return 1; }
  gzip -dc "$f.gz" > "$W/$1.txt" && echo "$W/$1.txt"
}

prepare() {   # workload $1: writes $W/$1.dl (and its facts); false where its input is missing
  local w=$1 f
  case $w in
    tc31) f=$(graph p2p-Gnutella31) && tc "$f" "$W/$w.dl" ;;
    rmat17) "$GEN" rmat 17 2 7 "$W/rmat17.txt" && tc "$W/rmat17.txt" "$W/$w.dl" ;;
    rmatbig) set -- ${RMAT_BIG:-18 2}; "$GEN" rmat "$1" "$2" 7 "$W/rmatbig.txt" && tc "$W/rmatbig.txt" "$W/$w.dl" ;;
    sg) f=$(graph ca-HepTh) &&
      printf '.decl e(p: number, c: number)\n.input e(filename="%s", format="edges")\n.decl sg(x: number, y: number)\nsg(x, y) :- e(p, x), e(p, y), x != y.\nsg(x, y) :- e(a, x), sg(a, b), e(b, y).\n.output sg\n' "$f" > "$W/$w.dl" ;;
    pt) mkdir -p "$W/pt" && python3 - "${PT_N:-3000}" "$W/pt" <<'PY' && sed 's/^\.printsize pointsTo/.output pointsTo/' programs/points_to.dl > "$W/$w.dl"
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
for name, m in (("addressOf", n), ("assign", n), ("load", n // 4), ("store", n // 4)):
    with open("%s/%s.facts" % (out, name), "w") as f:
        f.write("".join("%d\t%d\n" % (rng.randrange(n), rng.randrange(n)) for _ in range(m)))
PY
      ;;
    cspa) mkdir -p "$W/cspa" && python3 - "${CSPA_N:-2000}" "$W/cspa" <<'PY' && sed 's/^\.printsize \(.*\)/.output \1/' programs/cspa.dl > "$W/$w.dl"
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(11)
for name, m in (("assign", n * 7 // 10), ("dereference", n * 3 // 10)):
    with open("%s/%s.facts" % (out, name), "w") as f:
        f.write("".join("%d\t%d\n" % (rng.randrange(n), rng.randrange(n)) for _ in range(m)))
PY
      ;;
    tri) "$GEN" rmat "${TRI_SCALE:-26}" 16 7 "$W/tri.txt" &&
      sed "s|ca-GrQc.txt|$W/tri.txt|" programs/triangles.dl > "$W/$w.dl" ;;
    *) echo "multi_gpu.sh: unknown workload $w" >&2; return 1 ;;
  esac
}

# the fixpoint of profile $1: the run less reading facts and writing outputs
fields() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
io = sum(o["seconds"] for o in d["operators"] if o["operator"] in ("INPUT", "OUTPUT", "PRINTSIZE"))
procs = d.get("processes", [])
sent = sum(p["sent_rows"] for p in procs) / len(procs) if procs else 0
share = max(d.get("shares", []), key=lambda s: s["tuples"], default=None)
print("%.3f %d %s" % (d["seconds"] - io, sent, "%.1f%%" % (100 * share["largest_share"]) if share else "-"))
PY
}

run() {   # workload $1 on $2 processes: output folder $W/$1.$2, profile $OUT/$1.np$2.json
  local w=$1 n=$2 d=$W/$1.$2 launch="" facts=$W
  [ "$n" -gt 1 ] && launch="$LAUNCH $n"
  case $w in pt|cspa) facts=$W/$w ;; esac
  for r in 1 2; do
    rm -rf "$d" && mkdir -p "$d"
    $launch "$RFX" -q --backend="${BACKEND:-cuda}" -F "$facts" -D "$d" --profile=json:"$OUT/$w.np$n.json" "$W/$w.dl" \
      > "$d/stdout" 2> "$OUT/$w.np$n.err" || return 1
  done
}

printf "%-9s %5s %11s %8s %14s %9s %10s\n" workload GPUs "fixpoint s" speed-up "rows sent/GPU" "largest" identical
for w in $WORKLOADS; do
  prepare "$w" || { printf "%-9s skipped: no input\n" "$w"; continue; }
  base=""
  for n in $NS; do
    if ! run "$w" "$n"; then
      printf "%-9s %5s failed: %s\n" "$w" "$n" "$(tail -1 "$OUT/$w.np$n.err")"
      continue
    fi
    read -r fix sent share <<< "$(fields "$OUT/$w.np$n.json")"
    [ -z "$base" ] && base=$fix
    same=no
    diff -r "$W/$w.${NS%% *}" "$W/$w.$n" > /dev/null && same=yes
    printf "%-9s %5s %11s %8s %14s %9s %10s\n" "$w" "$n" "$fix" \
      "$(awk -v b="$base" -v f="$fix" 'BEGIN {printf "%.2fx", b / f}')" "$sent" "$share" "$same"
  done
  rm -rf "$W"/"$w".* "$W"/*.txt 2> /dev/null
done
