"""Errors, threads, progress, profiles, emitted stages, the struct layouts librfx expects."""
import os
import re
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import rfx
from rfx import _capi

from conftest import ROOT

TC = """.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def chain(n):
    return np.stack([np.arange(n, dtype=np.int32), np.arange(1, n + 1, dtype=np.int32)], axis=1)


def test_program_errors_carry_file_line_col(tmp_path):
    bad = tmp_path / "bad.dl"
    bad.write_text(".decl a(x: number)\n\na(x) :- b(x).\n")
    with pytest.raises(rfx.ProgramError) as err:
        rfx.Engine().load(bad)
    assert re.search(r"bad\.dl:3:9: error: unknown relation 'b'", str(err.value))
    assert err.value.code == 1
    with pytest.raises(rfx.ProgramError, match=r"<string>:1:12: error: syntax error"):
        rfx.Engine().load(".decl a(x: nmber")


def test_usage_errors():
    eng = rfx.Engine()
    with pytest.raises(rfx.InputError, match="cannot open|No such file"):
        eng.load("/nonexistent/prog.dl")
    eng = rfx.Engine()
    with pytest.raises(rfx.InputError, match="no program"):
        eng.run()
    eng.load(TC)
    with pytest.raises(rfx.InputError, match="call rfx_run first"):
        eng.relation("path")
    with pytest.raises(rfx.InputError, match="no relation named 'nope'"):
        eng.size("nope")
    with pytest.raises(rfx.InputError, match="one program per engine|already"):
        eng.load(TC)
    eng.close()
    with pytest.raises(rfx.InputError, match="closed"):
        eng.run()
    with pytest.raises(rfx.InputError, match="backend"):
        rfx.Engine(backend="tpu")
    with pytest.raises(rfx.InputError, match="tune"):
        rfx.Engine(tune="no_such_knob=1")
    with pytest.raises(rfx.InputError, match="profile"):
        rfx.Engine().profile()


def test_counted_relation_is_not_listed():
    with rfx.Engine() as eng:
        # a triangle count: a leapfrog triejoin that only counts
        eng.load(".decl a(x: number, y: number)\na(1, 2).\na(2, 3).\na(1, 3).\n"
                 ".decl e(x: number, y: number, z: number)\ne(x, y, z) :- a(x, y), a(y, z), a(x, z).\n"
                 ".printsize e\n")
        eng.run()
        assert eng.size("e") == 1
        with pytest.raises(rfx.InputError, match="counted, not listed"):
            eng.relation("e")


def test_run_time_error_and_recovery():
    with rfx.Engine(backend="cpu") as eng:
        eng.load(".decl a(x: number)\n.decl b(x: number)\nb(10 / x) :- a(x).\n")
        eng.insert("a", [[0]])
        with pytest.raises(rfx.ProgramError, match="division by zero"):
            eng.run()


def test_two_engines_in_two_threads_run_at_once():
    """Each run releases the GIL: while one engine computes, Python code (the other engine,
    this thread's counter) goes on."""
    n = 1500
    results, errors = {}, []

    def work(key):
        try:
            with rfx.Engine(backend="cpu", threads=1) as eng:
                eng.load(TC)
                eng.insert("edge", chain(n))
                t0 = time.perf_counter()
                eng.run()
                results[key] = (eng.size("path"), t0, time.perf_counter())
        except Exception as e:   # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in "ab"]
    ticks = []
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    for t in threads:
        t.join()
    assert not errors, errors
    want = n * (n + 1) // 2
    assert results["a"][0] == want and results["b"][0] == want
    # the two runs overlapped, and this thread ran while they did
    (_, a0, a1), (_, b0, b1) = results["a"], results["b"]
    assert max(a0, b0) < min(a1, b1)
    assert sum(1 for t in ticks if max(a0, b0) < t < min(a1, b1)) >= 3


def test_progress_line(capfd):
    eng = rfx.Engine(backend="cpu", threads=1, progress=True)
    eng.load(TC)
    eng.insert("edge", chain(4000))   # a run of well over the line's half second
    eng.run()
    eng.close()
    err = capfd.readouterr().err
    assert "rfx: stratum" in err and "iteration" in err and " s" in err


def test_profile_and_emit():
    with rfx.Engine(backend="cpu", profile=True) as eng:
        eng.load(TC)
        assert eng.profile() is None
        eng.insert("edge", chain(50))
        eng.run()
        prof = eng.profile()
        assert prof["backend"] == "cpu" and prof["seconds"] >= 0
        assert any(op["operator"] for op in prof["operators"])
        eng.run()
        assert eng.profile()["backend"] == "cpu"      # each run's own
        assert "path" in eng.emit("plan") and "JOIN" in eng.emit("plan")
        assert eng.emit("ast").startswith(".decl") or "edge" in eng.emit("ast")
        with pytest.raises(rfx.InputError):
            eng.emit("nothing")


def test_files_in_and_out(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "edge.facts").write_text("1\t2\n2\t3\n")
    prog = tmp_path / "tc.dl"
    prog.write_text(TC.replace(".output path", ".input edge\n.output path"))
    with rfx.Engine(fact_dir=tmp_path / "in", output_dir=tmp_path / "out") as eng:
        eng.load(prog).run()
        assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n2\t3\n"
        assert eng.columns("path") == [("x", "number"), ("y", "number")]
        assert eng.relations == ["edge", "path"]


def test_inputs_read_once(tmp_path):
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n")
    with rfx.Engine(backend="cpu", fact_dir=tmp_path) as eng:
        eng.load(TC.replace(".output path", ".input edge")).read_inputs()
        (tmp_path / "edge.facts").unlink()   # the runs read no file
        assert eng.run().size("path") == 3
        eng.insert("edge", [(3, 4)])
        assert eng.run().size("path") == 6
        with pytest.raises(rfx.InputError, match="read already"):
            eng.read_inputs()


def test_include_dirs(tmp_path):
    """A program file's #include finds a file in include_dirs (rfx's -I)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "edges.dl").write_text("edge(1, 2). edge(2, 3).\n")
    prog = tmp_path / "tc.dl"
    prog.write_text('#include "edges.dl"\n' + TC)
    with rfx.Engine(include_dirs=str(tmp_path / "lib")) as eng:
        eng.load(prog).run()
        assert eng.relation("path").tolist() == [[1, 2], [1, 3], [2, 3]]
    with rfx.Engine() as eng:
        with pytest.raises(rfx.ProgramError, match="edges.dl"):
            eng.load(prog)
    with rfx.Engine(include_dirs=str(tmp_path / "lib"), no_preprocessor=True) as eng:
        with pytest.raises(rfx.ProgramError, match="--no-preprocessor"):
            eng.load(prog)


def test_struct_layouts_match_rfx_h(tmp_path):
    """rfx_config and rfx_column as ctypes mirrors them and as a C compiler lays them out."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler: layout check skipped")
    fields = {"rfx_config": _capi.Config, "rfx_column": _capi.Column}
    src = ["#include <stddef.h>", "#include <stdio.h>", '#include "rfx.h"', "int main(void) {"]
    for cname, py in fields.items():
        src.append(f'printf("{cname} %zu\\n", sizeof({cname}));')
        for name, _ in py._fields_:
            src.append(f'printf("{cname}.{name} %zu\\n", offsetof({cname}, {name}));')
    src.append("return 0; }")
    (tmp_path / "layout.c").write_text("\n".join(src))
    subprocess.run([cc, "-I", str(ROOT / "runtime"), str(tmp_path / "layout.c"), "-o", str(tmp_path / "layout")],
                   check=True)
    out = subprocess.run([str(tmp_path / "layout")], capture_output=True, text=True, check=True).stdout.split("\n")
    want = dict(line.split() for line in out if line)
    for cname, py in fields.items():
        assert int(want[cname]) == _capi.ctypes.sizeof(py), cname
        for name, _ in py._fields_:
            assert int(want[f"{cname}.{name}"]) == getattr(py, name).offset, f"{cname}.{name}"


def test_version():
    assert re.match(r"\d+\.\d+\.\d+", rfx.__version__)
