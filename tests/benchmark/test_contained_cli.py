"""A task whose goal file links out of it: refused by validate and export-agent, and nothing is written through
the link (the installed console script, as a user runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.small_task import write_task

LMRBENCH = str(Path(sys.executable).with_name("lmrbench"))


def test_a_goal_file_linking_out_of_the_task_is_refused(tmp_path: Path):
    task = write_task(tmp_path / "bench")
    goal = task / "calc" / "calc.py"
    outside = tmp_path / "outside.py"
    outside.write_text(goal.read_text())
    before = outside.read_bytes()
    goal.unlink()
    goal.symlink_to(outside)
    wide = {**os.environ, "COLUMNS": "400"}  # one table row per line
    out = subprocess.run([LMRBENCH, "validate", str(tmp_path / "bench"), "--sandbox", "local"],
                         capture_output=True, text=True, timeout=600, env=wide)
    assert "a symbolic link leaves the task folder: calc/calc.py" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    exported = subprocess.run([LMRBENCH, "export-agent", str(tmp_path / "bench"), "--out", str(tmp_path / "agent")],
                              capture_output=True, text=True, timeout=120)
    assert "a symbolic link leaves the task folder: calc/calc.py" in exported.stdout + exported.stderr
    assert "Traceback" not in exported.stdout + exported.stderr
    assert outside.read_bytes() == before
