# gpu_env.sh: sourced by the lent-machine scripts (gpu.sh, gpu_ooc.sh): the build carried
# in $RFX_BUILD (.device/build), the graphs in $RFX_GRAPHS (.device/graphs), logs in $OUT
# (gpu-out), and what the tests need to find the binary and the cases.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=${RFX_BUILD:-.device/build}
G=${RFX_GRAPHS:-$PWD/.device/graphs}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export RFX_TEST_BIN=$PWD/$B/runtime/rfx RFX_TEST_CASES=$PWD/tests/cases RFX_GRAPHS=$G

# tc_sg_program tc|sg GRAPH_PATH: transitive closure or same generation over an edge file,
# its size printed
tc_sg_program() {
  echo ".decl edge(x: number, y: number)"
  echo ".input edge(filename=\"$2\", format=\"edges\")"
  echo ".decl r(x: number, y: number)"
  if [ "$1" = tc ]; then
    echo "r(x, y) :- edge(x, y)."; echo "r(x, z) :- r(x, y), edge(y, z)."
  else
    echo "r(x, y) :- edge(p, x), edge(p, y), x != y."; echo "r(x, y) :- edge(a, x), r(a, b), edge(b, y)."
  fi
  echo ".printsize r"
}
