#!/usr/bin/env bash
# Installs the Debian packages rfx needs to build and test (run as root; idempotent).
# zlib is used to read gzip-compressed edge files (SNAP ships them that way); libffi calls
# user-defined functors (.functor) with the signatures programs declare; Open MPI runs
# `mpirun -np N rfx` (optional at build time, installed so that its tests run).
set -euo pipefail
pkgs="flex bison libcunit1-dev zlib1g-dev libffi-dev libopenmpi-dev openmpi-bin cmake make gcc g++ cpp pkg-config time valgrind python3"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
