#!/usr/bin/env bash
# Thin recursions and small programs as whole processes: rfx on each backend against
# compiled Soufflé, same host, same facts, same run (issue "never slower than Soufflé").
#   bench/thin.sh prepare DIR [SOUFFLE_HOME]   writes the programs to DIR/programs and, with
#                                              SOUFFLE_HOME (../shared/tools/souffle), compiles
#                                              them to DIR/souffle/ (do this where a compiler is)
#   bench/thin.sh run DIR RFX GRAPHS [ROUNDS [THREADS [LIMIT]]]
#                                              makes the facts in DIR/facts (GRAPHS holds
#                                              email-Enron.txt.gz and p2p-Gnutella08.txt) and
#                                              prints a table: median seconds of ROUNDS runs,
#                                              a run stopped after LIMIT seconds (default 60)
# Workloads: reach from one vertex along a chain of 100,000 and 1,000,000 edges (one new
# tuple an iteration), on a 1000 x 1000 grid (edges right and down) and on a binary tree of
# 2^20 nodes; the triangles of email-Enron; TC of p2p-Gnutella08. Every run's printed sizes
# must agree with Soufflé's (a row says DISAGREE otherwise and the script fails).
set -uo pipefail
mode=${1:-}; dir=${2:-}
[ -n "$mode" ] && [ -n "$dir" ] || { sed -n '2,16p' "$0"; exit 2; }

if [ "$mode" = prepare ]; then
  mkdir -p "$dir/programs"
  cat > "$dir/programs/reach.dl" <<'EOF'
.decl edge(x: number, y: number)
.input edge
.decl start(x: number)
.input start
.decl reach(x: number)
.printsize reach
reach(x) :- start(x).
reach(y) :- reach(x), edge(x, y).
EOF
  cat > "$dir/programs/tc.dl" <<'EOF'
.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.printsize path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
EOF
  cat > "$dir/programs/tri.dl" <<'EOF'
.decl edge(x: number, y: number)
.input edge
.decl tri(x: number, y: number, z: number)
.printsize tri
tri(x, y, z) :- edge(x, y), edge(y, z), edge(x, z), x < y, y < z.
EOF
  if [ -n "${3:-}" ]; then
    mkdir -p "$dir/souffle"
    for p in reach tc tri; do
      "$3/bin/souffle" -g "$dir/souffle/$p.cpp" "$dir/programs/$p.dl" || exit 1
      c++ -std=c++17 -O3 -fopenmp -DUSE_LIBZ -I "$3/include" "$dir/souffle/$p.cpp" -o "$dir/souffle/$p" -lz -pthread || exit 1
      rm -f "$dir/souffle/$p.cpp"
    done
  fi
  exit 0
fi

[ "$mode" = run ] || { echo "unknown mode $mode" >&2; exit 2; }
rfx=$3; graphs=$4; rounds=${5:-3}; threads=${6:-$(nproc)}; limit=${7:-60}
facts=$dir/facts
mkdir -p "$facts"
make_facts() {   # name, then a command writing edge.facts to stdout; start vertex 0
  local d=$facts/$1; shift
  [ -s "$d/edge.facts" ] && return
  mkdir -p "$d" && "$@" > "$d/edge.facts" && echo 0 > "$d/start.facts"
}
make_facts chain100k awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%d\t%d\n", i, i + 1 }'
make_facts chain1m awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "%d\t%d\n", i, i + 1 }'
make_facts grid1000 awk 'BEGIN { n = 1000; for (r = 0; r < n; r++) for (c = 0; c < n; c++) {
  v = r * n + c; if (c + 1 < n) printf "%d\t%d\n", v, v + 1; if (r + 1 < n) printf "%d\t%d\n", v, v + n } }'
make_facts tree20 awk 'BEGIN { for (v = 1; v < 2^20; v++) printf "%d\t%d\n", int((v - 1) / 2), v }'
snap() { { gzip -dcf "$1" 2>/dev/null || cat "$1"; } | awk '!/^#/ && NF >= 2 { printf "%s\t%s\n", $1, $2 }'; }
make_facts enron snap "$graphs/email-Enron.txt.gz"
make_facts gnutella08 snap "$graphs/p2p-Gnutella08.txt"

host_out=$(mktemp -d)
trap 'rm -rf "$host_out"' EXIT
# median wall seconds of `rounds` runs of a command (one where it takes over 5 s; ">LIMIT"
# where it is stopped); its output kept in $host_out/last
timed() {
  local ts=() s e
  for ((i = 0; i < rounds; i++)); do
    s=$(date +%s.%N); timeout "$limit" "$@" > "$host_out/last" 2>&1
    [ $? = 124 ] && { echo ">$limit"; : > "$host_out/last"; return; }
    e=$(date +%s.%N)
    ts+=("$(awk "BEGIN {print $e - $s}")")
    awk "BEGIN {exit !($e - $s > 5)}" && break
  done
  printf "%s\n" "${ts[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
sizes() { grep -E '^[a-z_]+[[:space:]]+[0-9]+$' "$host_out/last" | awk '{ print $1, $2 }' | sort | tr '\n' ' '; }
printf "threads %s, median of %s runs, whole processes (seconds)\n" "$threads" "$rounds"
printf "%-12s %-6s %10s %9s %9s %9s %11s %11s %10s\n" workload prog souffle "rfx cpu" "rfx auto" "rfx cuda" \
  "cpu/souffle" "auto/souffle" "auto/best"
status=0
for w in chain100k:reach chain1m:reach grid1000:reach tree20:reach enron:tri gnutella08:tc; do
  name=${w%%:*}; prog=${w##*:}
  s="-"; want=""
  if [ -x "$dir/souffle/$prog" ]; then
    s=$(timed "$dir/souffle/$prog" -j "$threads" -F "$facts/$name" -D "$host_out"); want=$(sizes)
  fi
  declare -A t=()
  bad=""
  for b in cpu auto cuda; do
    t[$b]=$(timed "$rfx" --backend=$b -j "$threads" -F "$facts/$name" -D "$host_out" "$dir/programs/$prog.dl")
    got=$(sizes)
    [ "${t[$b]}" = ">$limit" ] && continue
    if [ -z "$got" ]; then t[$b]="-"; [ $b = cuda ] || bad="$bad $b failed: $(head -c 120 "$host_out/last")"; continue; fi
    [ -z "$want" ] && want=$got
    [ "$got" = "$want" ] || bad="$bad DISAGREE $b: $got vs $want"
  done
  best=$(printf "%s\n" "${t[cpu]}" "${t[cuda]}" | grep -v '^[->]' | sort -g | head -1)
  ratio() { case "$1$2" in *-*|*'>'*) echo -;; *) awk "BEGIN {printf \"%.2f\", $1 / $2}";; esac; }
  printf "%-12s %-6s %10s %9s %9s %9s %11s %11s %10s%s\n" "$name" "$prog" "$s" "${t[cpu]}" "${t[auto]}" "${t[cuda]}" \
    "$(ratio "${t[cpu]}" "$s")" "$(ratio "${t[auto]}" "$s")" "$(ratio "${t[auto]}" "$best")" "$bad"
  [ -z "$bad" ] || status=1
done
exit $status
