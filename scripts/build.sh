#!/usr/bin/env bash
# Configures and builds rfx. Usage: scripts/build.sh [--sanitize] [build-dir]
# Installs missing Debian packages first (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=OFF
if [ "${1:-}" = "--sanitize" ]; then sanitize=ON; shift; fi
build=${1:-build}
[ "$sanitize" = ON ] && [ -z "${1:-}" ] && build=build-asan
scripts/install-deps.sh
type=Release
[ "$sanitize" = ON ] && type=RelWithDebInfo
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=$type -DRFX_SANITIZE=$sanitize >"$build.cmake.log" 2>&1 \
  || { cat "$build.cmake.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" 2>&1 | grep -E "warning|error|Error" || true
test -x "$build/runtime/rfx"
