"""The task commands as a user types them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from lmrbench.cli.main import app

runner = CliRunner()


def _lmrbench(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed console entry point in a fresh process (exit codes and stderr as a user sees them)."""
    return subprocess.run([sys.executable, "-c", "from lmrbench.cli.main import main; main()", *args],
                          capture_output=True, text=True)


def test_task_new_then_list_and_check(fixture_repo: Path, fixture_pdf: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    res = runner.invoke(app, ["task", "new", "--repo", str(fixture_repo), "--function",
                              "losses.py::preference_loss", "--instruction", "Implement the loss.",
                              "--category", "Training Objectives & Optimization", "--paper", str(fixture_pdf),
                              "--paper-url", "https://example.org/p.pdf", str(bench)])
    assert res.exit_code == 0, res.output
    info = json.loads((bench / "1-SrcRepo" / "info.json").read_text())
    assert info["implementations"][0]["goal_function"] == "preference_loss"
    listed = runner.invoke(app, ["task", "list", str(bench)])
    assert listed.exit_code == 0 and "preference_loss" in listed.output and "1 task(s) loaded" in listed.output
    checked = runner.invoke(app, ["task", "check", str(bench)])
    assert checked.exit_code == 1 and "unit_test_1.py" in checked.output


def test_errors_are_one_line_on_stderr_with_exit_1(fixture_repo: Path, tmp_path: Path) -> None:
    out = _lmrbench("task", "new", "--repo", str(fixture_repo), "--function", "losses.py::preferenceloss",
                    "--instruction", "x", str(tmp_path / "b"))
    assert out.returncode == 1
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "losses.py" in lines[0] and "preference_loss" in lines[0]
    assert "Traceback" not in out.stderr


def test_exit_status_of_a_failing_check_reaches_the_shell(tmp_path: Path) -> None:
    broken = tmp_path / "1-Broken"
    broken.mkdir()
    (broken / "info.json").write_text("[]")
    out = _lmrbench("task", "check", str(tmp_path))
    assert out.returncode == 1 and "the top level must be a JSON object" in out.stdout


def test_task_add_then_remask(fixture_repo: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    res = runner.invoke(app, ["task", "new", "--repo", str(fixture_repo), "--function", "losses.py::preference_loss",
                              "--instruction", "Implement the loss.", str(bench)])
    assert res.exit_code == 0, res.output
    task = bench / "1-SrcRepo"
    res = runner.invoke(app, ["task", "add", str(task), "--function", "losses.py::Scaler.scale",
                              "--instruction", "Scale by k.", "--mask-style", "raise"])
    assert res.exit_code == 0, res.output
    assert "added implementation 2" in res.output
    impls = json.loads((task / "info.json").read_text())["implementations"]
    assert [(i["index"], i["goal_function"]) for i in impls] == [(1, "preference_loss"), (2, "scale")]
    goal = task / "src-repo" / "losses.py"
    assert goal.read_text().count("# TODO: Implement this function") == 1  # only the first, todo_raise
    res = runner.invoke(app, ["task", "remask", str(task), "--impl", "2", "--mask-style", "todo_raise"])
    assert res.exit_code == 0, res.output
    assert goal.read_text().count("# TODO: Implement this function") == 2

    before = goal.read_bytes()
    out = _lmrbench("task", "add", str(task), "--function", "losses.py::Scaler.scale", "--instruction", "again")
    assert out.returncode == 1 and out.stderr.strip().splitlines() == [
        "error: src-repo/losses.py: Scaler.scale is already implementation 2"]
    out = _lmrbench("task", "remask", str(task), "--impl", "1", "--mask-style", "nothing")
    assert out.returncode == 2 and "unknown --mask-style 'nothing'" in out.stderr
    assert goal.read_bytes() == before
