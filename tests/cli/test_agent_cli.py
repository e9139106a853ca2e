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


def test_an_endpoint_that_does_not_answer_ends_the_run_before_any_task(tmp_path: Path) -> None:
    """One line naming the URL and a non-zero exit, before a container is started or a task is tried."""
    import os
    import shutil
    import socket
    import subprocess
    import sys

    bench = tmp_path / "tasks"
    examples = Path(__file__).resolve().parents[2] / "examples" / "tasks"
    shutil.copytree(examples / "1-DPO", bench / "1-DPO", ignore=shutil.ignore_patterns(".lmrbench"))
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    script = Path(sys.executable).with_name("lmrbench")
    proc = subprocess.run([str(script), "agent", str(bench), "--model", "m", "--base-url", url,
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert proc.returncode == 3  # could not run
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"the model endpoint {url}/chat/completions does not answer" in lines[0], proc.stderr
    assert not (tmp_path / "run" / "agent").exists()
