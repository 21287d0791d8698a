"""Every program in programs/ run through Python gives what the rfx command writes."""
import pathlib
import random
import subprocess
import sys

import numpy as np
import pytest

import rfx

from conftest import ROOT

PROGRAMS = sorted((ROOT / "programs").glob("*.dl"))


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    """Small random inputs for every program: a SNAP-style graph under the name the graph
    programs read, edge lists, points-to facts (Andersen's and CSPA's), and doop_like's facts
    from its generator."""
    d = tmp_path_factory.mktemp("facts")
    rng = random.Random(7)
    with open(d / "ca-GrQc.txt", "w") as f:
        f.write("# a random graph in SNAP's format\n# FromNodeId\tToNodeId\n")
        for _ in range(900):
            f.write(f"{rng.randrange(150)}\t{rng.randrange(150)}\n")
    with open(d / "edge.facts", "w") as f:
        for _ in range(400):
            f.write(f"{rng.randrange(120)}\t{rng.randrange(120)}\n")
    for name in ("addressOf", "assign", "load", "store", "dereference"):
        with open(d / f"{name}.facts", "w") as f:
            for _ in range(120):
                f.write(f"{rng.randrange(60)}\t{rng.randrange(60)}\n")
    subprocess.run([sys.executable, str(ROOT / "bench" / "doop_like.py"), str(d), "16", "3"], check=True,
                   stdout=subprocess.DEVNULL)
    return d


def typed(text, kind):
    if kind in ("number", "unsigned"):
        return int(text)
    if kind == "float":
        return float(np.float32(float(text)))
    return text


def as_python(value, kind):
    if kind in ("number", "unsigned"):
        return int(value)
    if kind == "float":
        return float(np.float32(value))
    return value


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_matches_cli(program, facts, rfx_cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    cli = subprocess.run([rfx_cli, "-q", "--backend=cpu", "-F", str(facts), "-D", str(out), str(program)],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    sizes = dict(line.rsplit("\t", 1) for line in cli.stdout.splitlines() if "\t" in line)

    with rfx.Engine(backend="cpu", fact_dir=facts) as eng:
        eng.load(program)
        eng.run()
        outputs = sorted(out.glob("*.csv"))
        assert outputs or sizes, "the program writes nothing to compare"
        for csv in outputs:
            name = csv.name[:-len(".csv")]
            got = eng.relation(name)
            kinds = got.types
            want = [[typed(v, k) for v, k in zip(line.split("\t"), kinds)]
                    for line in csv.read_text().splitlines()]
            have = [[as_python(v, k) for v, k in zip(row, kinds)] for row in got.tolist()]
            assert have == want, name
            assert eng.size(name) == len(want)
        for name, n in sizes.items():
            assert eng.size(name) == int(n), name
