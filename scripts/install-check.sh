#!/usr/bin/env bash
# Installs a build into a scratch prefix with `cmake --install`, checks every file is in
# place (binary, library, header, pkg-config file, man page), then builds
# programs/c/triangles.c against the installed library with pkg-config and runs it on the
# bundled SNAP graph (ca-GrQc: 48,260 triangles). Usage: scripts/install-check.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -1)
for f in bin/rfx include/rfx.h share/man/man1/rfx.1; do
  test -e "$prefix/$f" || { echo "install-check: $f not installed"; exit 1; }
done
test -e "$libdir/librfx.so" && test -e "$libdir/pkgconfig/rfx.pc" \
  || { echo "install-check: librfx.so or rfx.pc not installed"; exit 1; }
"$prefix/bin/rfx" --version | head -1 | grep -q '^rfx ' || { echo "install-check: installed rfx does not run"; exit 1; }
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -Wall -Werror programs/c/triangles.c $(pkg-config --cflags --libs rfx) -Wl,-rpath,"$libdir" \
   -o "$prefix/triangles"
out=$(RFX_BACKEND=${RFX_BACKEND:-cpu} "$prefix/triangles" programs/data/ca-GrQc.txt 3)
echo "$out"
echo "$out" | head -1 | grep -q ' 48260 triangles$' || { echo "install-check: wrong triangle count"; exit 1; }
echo "install-check: ok ($prefix)"
