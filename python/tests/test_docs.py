"""docs/python.md's tour runs as written: its Python blocks, in order, in one namespace."""
import os
import re

from conftest import ROOT


def test_tour_runs(tmp_path, capsys):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        env = {}
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/python.md block {i + 1}", "exec"), env)
    finally:
        os.chdir(here)
    out = capsys.readouterr().out
    assert "6\n" in out and "['a', 'b', 'age']" in out and "<string>:2:9" in out
