"""``lmrbench task suggest`` as a user types it: the table, the commands run, and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.suggest_fixture import METHODS, make_pair
from lmrbench.cli.main import app

runner = CliRunner()


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return make_pair(tmp_path, METHODS[2], git=False)


def _rows(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.startswith("│") and ln.split("│")[1].strip().isdigit()]


def test_the_table_ranks_the_described_function_first(pair) -> None:
    repo, pdf = pair
    res = runner.invoke(app, ["task", "suggest", str(repo), "--paper", str(pdf), "--no-run", "--top", "5"],
                        env={"COLUMNS": "220"})
    assert res.exit_code == 0, res.output
    rows = _rows(res.output)
    assert len(rows) == 5
    cells = [c.strip() for c in rows[0].split("│")]
    assert cells[1:3] == ["1", "mlkit/methods.py::focal_loss"]
    assert cells[4].startswith("p. ") and cells[6] == "not run"
    assert "ran `" not in res.output


def test_the_commands_run_and_the_callers_are_shown(pair) -> None:
    repo, pdf = pair
    res = runner.invoke(app, ["task", "suggest", str(repo), "--paper", str(pdf), "--sandbox", "local",
                              "--command", "python examples/train.py", "--top", "3"], env={"COLUMNS": "220"})
    assert res.exit_code == 0, res.output
    first = [c.strip() for c in _rows(res.output)[0].split("│")]
    assert first[2] == "mlkit/methods.py::focal_loss" and first[6] == "3 by `python examples/train.py`"
    assert first[7] == "yes"
    assert "ran `python examples/train.py`: exit 0 in" in res.output
    assert "no runnable caller: " in res.output


@pytest.mark.parametrize(("extra", "message"), [
    (["--create", "1"], "--create needs --bench BENCH"),
    (["--create", "1", "--bench", "b", "--no-run"], "cannot go with --no-run"),
    (["--base-url", "http://127.0.0.1:9/v1"], "give --base-url and --model together"),
    (["--top", "0", "--no-run"], "--top must be at least 1"),
])
def test_bad_options_get_one_line(pair, extra: list[str], message: str) -> None:
    repo, pdf = pair
    exe = Path(sys.executable).with_name("lmrbench")
    out = subprocess.run([str(exe), "task", "suggest", str(repo), "--paper", str(pdf), *extra],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], out.stderr


def test_a_narrow_terminal_gets_one_block_per_candidate(pair, monkeypatch) -> None:
    from lmrbench.cli import suggest_cmd

    repo, pdf = pair
    monkeypatch.setattr(suggest_cmd.console, "width", 80)
    res = runner.invoke(app, ["task", "suggest", str(repo), "--paper", str(pdf), "--no-run", "--top", "2"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert not any(ln.startswith("│") for ln in lines)
    assert any(ln.startswith("1. mlkit/methods.py::focal_loss  score ") for ln in lines)
    assert any(ln.startswith("   passage: p. ") for ln in lines)
    assert any(ln.startswith("2. ") for ln in lines)
