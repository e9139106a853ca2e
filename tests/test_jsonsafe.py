"""JSON that lmrbench did not write is depth-checked before it is parsed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lmrbench import jsonsafe
from lmrbench.errors import LmrError


def test_deep_nesting_is_refused_and_normal_json_loads():
    assert jsonsafe.loads('{"a": [1, {"b": "[[[["}]}') == {"a": [1, {"b": "[[[["}]}
    with pytest.raises(LmrError, match="nested deeper than 100 levels"):
        jsonsafe.loads("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError):  # reply parsers catch ValueError
        jsonsafe.loads("[" * 101 + "]" * 101)


def test_a_deeply_nested_info_json_is_one_line_from_the_installed_script(tmp_path: Path):
    task = tmp_path / "bench" / "1-Deep"
    (task / "repo").mkdir(parents=True)
    (task / "info.json").write_text('{"instance_id": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    exe = Path(sys.executable).parent / "lmrbench"
    proc = subprocess.run([str(exe), "task", "check", str(tmp_path / "bench")], capture_output=True, text=True)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "nested deeper than 100 levels" in proc.stdout + proc.stderr
