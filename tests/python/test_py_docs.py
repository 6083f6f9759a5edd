"""docs/python.md runs: its python code blocks, in order, in one namespace, in a fresh
directory holding a copy of examples/ (what a reader following it would have)."""

import os
import re
import shutil

import pytest
from pyutil import REPO, need_package

need_package()


def test_tutorial_runs(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        env = {}
        for i, code in enumerate(blocks):
            exec(compile(code, f"docs/python.md block {i + 1}", "exec"), env)
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    assert "['edge', 'core', 'upstream']" in out
    assert "parse_error <text>:2:" in out
    for png in ("protocol-mix.png", "lookup-batches.png"):
        assert (tmp_path / png).stat().st_size > 2000, png
