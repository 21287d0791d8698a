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
