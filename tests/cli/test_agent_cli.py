"""``lmrbench agent``'s refusals before anything starts: an unknown agent, a count below one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmrbench.cli.main import app
from lmrbench.errors import LmrError


@pytest.mark.parametrize(("extra", "problem"), [
    (["--agent", "openhands"], "--agent openhands: unknown; known: mini-swe-agent"),
    (["--tries", "0"], "--tries and --jobs take 1 or more"),
])
def test_a_bad_option_is_one_line_naming_it(tmp_path: Path, extra: list[str], problem: str) -> None:
    result = CliRunner().invoke(app, ["agent", str(tmp_path), "--model", "m", "--out", str(tmp_path / "run"),
                                      *extra])
    assert isinstance(result.exception, LmrError) and problem in str(result.exception)
    assert not (tmp_path / "run").exists()
