"""Tables in an 80-column pipe: folded to a readable form, never a header cut to ``Un…``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.scoreboard import TABLE_HEADERS
from lmrbench.cli.tables import print_table
from lmrbench.schemas.run import RunManifest


def _report(tmp_path: Path, labels: list[str]) -> str:
    runs = []
    for label in labels:
        run = RunDir(tmp_path / label)
        run.save_manifest(RunManifest(tool_version="0", source="agent", label=label))
        runs.append(str(run.path))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    cmd = [str(Path(sys.executable).parent / "lmrbench"), "report", *runs, "--out", str(tmp_path / "out")]
    out = subprocess.run([*cmd, "--no-figures"], capture_output=True, text=True, env=env, check=True)
    return out.stdout


def test_report_in_a_pipe_shows_every_header_whole(tmp_path: Path) -> None:
    out = _report(tmp_path, ["model-a", "model-b"])
    assert "…" not in out
    for header in TABLE_HEADERS:
        assert header in out, header
    assert max(len(line) for line in out.splitlines()) <= 80
    # two runs fit turned: a row per header, a column per run
    assert any(line.split("│")[1].strip() == "Passed" for line in out.splitlines() if line.count("│") >= 3)


def test_report_of_many_runs_stacks_one_block_per_run(tmp_path: Path) -> None:
    labels = [f"a-long-model-name-{k}" for k in range(5)]
    out = _report(tmp_path, labels)
    assert "…" not in out
    for label in labels:
        assert f"Run: {label}" in out
    assert "  Unit test acc. (%): -" in out


def test_a_table_that_fits_is_printed_as_it_is() -> None:
    table = Table(title="small")
    table.add_column("Name")
    table.add_column("Score")
    table.add_row("x", "1")
    buf = io.StringIO()
    print_table(Console(file=buf, width=80), table)
    lines = buf.getvalue().splitlines()
    assert lines[2].split("┃")[1:3] == [" Name ", " Score "]


def test_a_table_that_fits_only_with_headers_folded_keeps_every_word_whole() -> None:
    # rich would narrow the widest column (the unbreakable run names) first and cut them to "openha…"
    table = Table(title="wide", show_edge=False)
    table.add_column("Run")
    for h in ("Unit", "Judge CC", "Judge LC", "Judge LI", "Human CC", "Human LC", "Human LI"):
        table.add_column(h, justify="right")
    names = ["openhands_agent-gpt4.1", "  paper: OpenHands (GPT-4.1)"]
    for name in names:
        table.add_row(name, *["35.7*"] * 7)
    buf = io.StringIO()
    print_table(Console(file=buf, width=80), table)
    out = buf.getvalue()
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    assert "openhands_agent-gpt4.1" in out and out.count("35.7*") == 14
    assert "┃ Judge ┃" in out  # the headers fold instead
