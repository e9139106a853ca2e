"""generate, judge and evaluate keep the same number of items in flight unless told otherwise."""

from __future__ import annotations

import re

import typer

from lmrbench.cli.main import app


def _jobs_default(command: str) -> str:
    cmd = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    option = next(p for p in cmd.params if "--jobs" in p.opts)
    if option.default is not None:
        return str(option.default)
    found = re.search(r"default (\d+)", option.help or "")
    assert found, option.help
    return found.group(1)


def test_evaluate_runs_as_many_at_once_as_generate_and_judge() -> None:
    assert _jobs_default("evaluate") == _jobs_default("generate") == _jobs_default("judge") == "4"
