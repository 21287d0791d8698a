"""Shared fixtures: the repository, the rfx command built beside the package, the SNAP graphs."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def rfx_cli():
    """The rfx command of the CMake build (scripts/build.sh), the oracle the package must match."""
    for build in ("build", "build-asan"):
        exe = ROOT / build / "runtime" / "rfx"
        if exe.exists():
            return str(exe)
    pytest.skip("rfx command not built (scripts/build.sh): CLI comparisons skipped")


@pytest.fixture(scope="session")
def graphs():
    """../shared/data/graphs (or RFX_GRAPHS), with MANIFEST.tsv."""
    d = pathlib.Path(os.environ.get("RFX_GRAPHS", ROOT.parent / "shared" / "data" / "graphs"))
    if not (d / "MANIFEST.tsv").exists():
        pytest.skip(f"no SNAP graphs at {d}: graph tests skipped")
    return d
