#!/usr/bin/env bash
# Writing and reading large relations as text: TC of an edge file with its paths written
# (`.output`), then the paths read back whole and their first tenth, each timed by
# --profile (OUTPUT, INPUT) and as a whole process; every file's md5 is printed so that
# two builds can be compared. BASE=DIR (a directory holding another build's librfx.so.0)
# runs each step with that library too, alternated with this one.
# Usage: bench/io.sh RFX EDGEFILE [REPEATS] [BACKEND]   (files go to $TMPDIR or /tmp)
# Default: 2 repeats, --backend=auto. (p2p-Gnutella31: 884 M paths, 10.3 GB of text.)
set -uo pipefail
rfx=$1 graph=$2 reps=${3:-2} backend=${4:-auto}
dir=$(mktemp -d "${TMPDIR:-/tmp}/rfx-io.XXXXXX")
trap 'rm -rf "$dir"' EXIT
libs="new"
[ -n "${BASE:-}" ] && libs="base new"
# one process: label, program; prints seconds, the profile's line for op, and the result
timed() {
  local lib=$1 prog=$2 op=$3 s e out
  rm -f "$dir/out.csv"
  s=$(date +%s.%N)
  if [ "$lib" = base ]; then out=$(LD_LIBRARY_PATH=$BASE "$rfx" --backend="$backend" --profile "$prog" 2>"$dir/prof.txt")
  else out=$("$rfx" --backend="$backend" --profile "$prog" 2>"$dir/prof.txt"); fi
  local rc=$?
  e=$(date +%s.%N)
  printf "%-4s %-30s rc %d %12s %8.2f %8s %s\n" "$lib" "$4" "$rc" "$(echo "$out" | cut -f2)" \
    "$(awk "BEGIN {print $e - $s}")" "$(awk -v op="$op" '$1 == op {print $3}' "$dir/prof.txt")" \
    "$([ -f "$dir/out.csv" ] && md5sum "$dir/out.csv" | cut -c1-12)"
}
printf '.decl e(x: number, y: number)\n.input e(filename="%s", format="edges")\n.decl p(x: number, y: number)\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n.output p(IO=file, filename="%s/out.csv")\n.printsize p\n' "$graph" "$dir" > "$dir/tc.dl"
printf "%-4s %-30s %4s %12s %8s %8s %s\n" lib step rc rows process op md5
for r in $(seq "$reps"); do for lib in $libs; do timed "$lib" "$dir/tc.dl" OUTPUT "TC, paths written (OUTPUT s)"; done; done
"$rfx" --backend="$backend" "$dir/tc.dl" > /dev/null 2>&1 && mv "$dir/out.csv" "$dir/paths.csv"
rows=$(wc -l < "$dir/paths.csv")
head -n $((rows / 10)) "$dir/paths.csv" > "$dir/tenth.csv"
for f in tenth paths; do
  printf '.decl p(x: number, y: number)\n.input p(filename="%s/%s.csv")\n.output p(IO=file, filename="%s/out.csv")\n.printsize p\n' "$dir" "$f" "$dir" > "$dir/rd.dl"
  for r in $(seq "$reps"); do for lib in $libs; do timed "$lib" "$dir/rd.dl" INPUT "$f read back (INPUT s)"; done; done
done
