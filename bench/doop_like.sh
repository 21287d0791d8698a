#!/usr/bin/env bash
# programs/doop_like.dl (components, records for contexts, eqrel) on random programs'
# facts: rfx on each backend against compiled Soufflé, same host, same facts, same run.
#   bench/doop_like.sh prepare DIR SOUFFLE_HOME [METHODS...]   facts in DIR/facts-N (default
#                                              N = 100 150) and Soufflé's compiled binary in
#                                              DIR/doop_like (do this where a compiler is)
#   bench/doop_like.sh run DIR RFX [ROUNDS [THREADS]]
#                                              a table: median seconds of ROUNDS runs each;
#                                              every rfx run's outputs must equal Soufflé's
#                                              (sorted), else the row says DIFFER and the
#                                              script fails
set -uo pipefail
mode=${1:-}; dir=${2:-}
[ -n "$mode" ] && [ -n "$dir" ] || { sed -n '2,12p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
prog=$here/programs/doop_like.dl

if [ "$mode" = prepare ]; then
  home=${3:?SOUFFLE_HOME}
  shift 3
  mkdir -p "$dir"
  for n in ${@:-100 150}; do python3 "$here/bench/doop_like.py" "$dir/facts-$n" "$n" || exit 1; done
  "$home/bin/souffle" -g "$dir/doop_like.cpp" "$prog" || exit 1
  c++ -std=c++17 -O3 -fopenmp -DUSE_LIBZ -I "$home/include" "$dir/doop_like.cpp" -o "$dir/doop_like" -lz -pthread || exit 1
  exit 0
fi

rfx=${3:?RFX}; rounds=${4:-3}; threads=${5:-$(nproc)}
median() { sort -g | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; if (m ~ /^[0-9.]+$/) printf "%.3f\n", m; else print m}'; }
# seconds of one run of "$@" (its outputs into the directory $out)
timed() { local t0 t1; t0=$(date +%s%N); "$@" > /dev/null 2>&1 || return 1; t1=$(date +%s%N)
          awk -v d=$((t1 - t0)) 'BEGIN {printf "%.3f\n", d / 1e9}'; }
same() { for f in "$1"/*; do cmp -s <(sort "$f") <(sort "$2/$(basename "$f")") || return 1; done; }
status=0
printf '%-10s %10s %10s %10s %10s  %s\n' methods souffle rfx-cpu rfx-cuda rfx-auto answers
for facts in "$dir"/facts-*; do
  n=${facts##*-}
  ref=$(mktemp -d); out=$(mktemp -d)
  row=()
  ts=(); for r in $(seq "$rounds"); do rm -rf "$ref"/*; ts+=("$(timed "$dir/doop_like" -j"$threads" -F "$facts" -D "$ref")")
  done; row+=("$(printf '%s\n' "${ts[@]}" | median)")
  verdict=same
  for be in cpu cuda auto; do
    ts=(); for r in $(seq "$rounds"); do rm -rf "$out"/*
      ts+=("$(timed "$rfx" -q --backend="$be" -j"$threads" -F "$facts" -D "$out" "$prog" || echo fail)")
    done
    row+=("$(printf '%s\n' "${ts[@]}" | median)")
    same "$ref" "$out" 2>/dev/null || { verdict="DIFFER ($be)"; status=1; }
  done
  printf '%-10s %10s %10s %10s %10s  %s\n' "$n" "${row[@]}" "$verdict"
  rm -rf "$ref" "$out"
done
exit $status
