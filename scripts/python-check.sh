#!/usr/bin/env bash
# The Python package's tests: installs the package with `pip install .` (librfx built by CMake
# through scikit-build-core, CUDA where nvcc is found) into a virtual environment under
# build/, with what its tests use from PyPI, and runs its pytest suite (python/tests).
# Usage: scripts/python-check.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/pyvenv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    echo "python-check: installing python3-venv"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    rm -rf "$venv"
    python3 -m venv "$venv"
  }
fi
pip=("$venv/bin/python" -m pip -q --disable-pip-version-check)
"${pip[@]}" install "scikit-build-core>=0.10" numpy pandas pyarrow networkx pytest nbclient nbformat ipykernel
"${pip[@]}" install --no-build-isolation . -Cbuild-dir=build/python
cd python/tests
"../../$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$@"
