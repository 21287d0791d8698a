#!/usr/bin/env bash
# The main job: counts the triangles of a real SNAP graph (ca-GrQc, bundled) with the
# Datalog program programs/triangles.dl. Builds rfx first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build >/dev/null
echo "rfx: triangles of programs/data/ca-GrQc.txt (SNAP publishes 48260):"
time build/runtime/rfx -F programs/data programs/triangles.dl
