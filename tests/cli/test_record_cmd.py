"""``lmrbench task record`` as a user types it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from helpers.record_fixture import make_task
from lmrbench.cli.main import app

runner = CliRunner()


def test_record_prints_each_case_and_its_size(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    res = runner.invoke(
        app,
        [
            "task",
            "record",
            str(task.path),
            "--impl",
            "1",
            "--command",
            "python train.py --steps 2",
            "--max-calls",
            "2",
            "--sandbox",
            "local",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any(
        line.split()[:1] == ["case_1.npz"] and "bytes  model/losses.py::hinge_loss" in line for line in lines
    )
    assert any(line.split()[:1] == ["case_2.npz"] for line in lines)
    assert re.search(r"and \d+ case\(s\)", res.output)
    assert "hinge_loss: kept " in res.output and "mutants: the kept cases kill " in res.output
    assert (task.repo_dir / "unit_test" / "unit_test_1.py").is_file()


def test_scaffold_needs_no_command(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    res = runner.invoke(app, ["task", "record", str(task.path), "--impl", "1", "--scaffold"])
    assert res.exit_code == 0, res.output
    assert "LMRBENCH-TODO" in (task.repo_dir / "unit_test" / "unit_test_1.py").read_text()


def test_a_failing_command_is_one_line_on_stderr_with_exit_1(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lmrbench.cli.main import main; main()",
            "task",
            "record",
            str(task.path),
            "--impl",
            "1",
            "--command",
            "python -c 'raise SystemExit(4)'",
            "--sandbox",
            "local",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1  # a runtime error, not a usage error
    message = " ".join(out.stderr.split())
    assert (
        message
        == "error: `python -c 'raise SystemExit(4)'` failed with exit code 4; output tail: (no output)"
    )
