"""The progress line in Jupyter: a notebook cell's long run shows it on the cell's stderr."""
import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat not installed: Jupyter test skipped")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed: Jupyter test skipped")
pytest.importorskip("ipykernel", reason="ipykernel not installed: Jupyter test skipped")

CELL = """
import numpy as np, rfx
eng = rfx.Engine(backend="cpu", threads=1)    # progress: on by default in a kernel
eng.load('''.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).''')
eng.insert("edge", np.stack([np.arange(4000), np.arange(1, 4001)], axis=1))   # a run of well over the line's half second
print(eng.run().size("path"))
"""


def test_progress_in_a_notebook():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    outs = nb.cells[0].outputs
    stdout = "".join(o.get("text", "") for o in outs if o.get("name") == "stdout")
    stderr = "".join(o.get("text", "") for o in outs if o.get("name") == "stderr")
    assert stdout.strip() == str(4000 * 4001 // 2)
    assert "rfx: stratum" in stderr and "iteration" in stderr
