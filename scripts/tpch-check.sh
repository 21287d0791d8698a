#!/usr/bin/env bash
# TPC-H's 22 queries (programs/tpch/) against DuckDB at scale factor 0.01: installs the
# PyPI packages duckdb and duckdb-extension-tpch into build/tpchvenv, generates the tables
# once into build/tpch-sf0.01, and runs bench/tpch.py (every answer equal, or exit 1), as whole
# processes, through librfx (bench_queries) and as one program (suite).
# Usage: scripts/tpch-check.sh [BUILD_DIR] [BACKENDS]   (defaults: build, cpu,auto)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
backends=${2:-cpu,auto}
venv=$build/tpchvenv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import duckdb, duckdb_extension_tpch" 2>/dev/null; then
  python3 -m venv "$venv"
  if ! "$venv/bin/python" -m pip -q --disable-pip-version-check install duckdb==1.5.5 duckdb-extension-tpch==1.5.5; then
    echo "tpch: skipped: could not install duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 from PyPI"
    exit 0
  fi
fi
data=$build/tpch-sf0.01
[ -f "$data/lineitem.tbl" ] || "$venv/bin/python" bench/tpch.py gen "$data" 0.01
"$venv/bin/python" bench/tpch.py run "$data" "$build/runtime/rfx" --backends "$backends"
# the same through librfx, each query's tables read once (rfx_read_inputs) and run twice
"$venv/bin/python" bench/tpch.py run "$data" "$build/runtime/rfx" --kept "$build/bench/bench_queries" --backends cpu
# and as one program, every table read once (bench/tpch.py suite, as at large scale factors)
"$venv/bin/python" bench/tpch.py suite "$data" "$build/runtime/rfx" --backends cpu
