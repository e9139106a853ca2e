"""``lmrbench task suggest`` as a user runs it (the installed console script, a real subprocess) in Docker: on a
repository of about 30 functions and a paper that describes one, the function is in the top 3 with a runnable
caller and its call count, and ``--create 1`` leaves a task that validates."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.suggest_fixture import METHODS, make_pair, target_ref
from lmrbench.core.source.index import index_repo
from lmrbench.core.taskset import load_task

DPO = METHODS[1]


@pytest.mark.docker
@pytest.mark.timeout(1500)
def test_suggest_then_create_leaves_a_valid_task(tmp_path: Path, base_image: str) -> None:
    repo, pdf = make_pair(tmp_path, DPO)
    assert 28 <= len(index_repo(repo)) <= 40
    exe = Path(sys.executable).with_name("lmrbench")
    bench = tmp_path / "bench"
    out = subprocess.run(
        [str(exe), "task", "suggest", str(repo), "--paper", str(pdf), "--sandbox", "docker", "--top", "5",
         "--create", "1", "--bench", str(bench)],
        capture_output=True, text=True, timeout=1400, env={**os.environ, "COLUMNS": "220"},
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    rows = [[c.strip() for c in ln.split("│")] for ln in out.stdout.splitlines()
            if ln.startswith("│") and ln.split("│")[1].strip().isdigit()]
    ranked = [r[2] for r in rows]
    assert target_ref(DPO) in ranked[:3], out.stdout
    row = rows[ranked.index(target_ref(DPO))]
    assert row[6] == "3 by `python examples/train.py`" and row[7] == "yes"
    assert "ran `python examples/train.py`: exit 0" in out.stdout
    tasks = sorted(p for p in bench.iterdir() if (p / "info.json").is_file())
    assert len(tasks) == 1
    task = load_task(tasks[0])
    impl = task.info.implementation(1)
    assert f"{impl.goal_file}::{impl.goal_function}" == target_ref(DPO)
    assert "check it before the task is published" in (task.info.provenance or {})["instruction"]
    # the driver's 3 calls and the cases the recording adds where a parameter never varied
    line = rf"created {re.escape(str(tasks[0]))}: \d+ recorded case\(s\), valid"
    assert re.search(line, out.stdout.replace("\n", ""))
    result = json.loads((bench / ".lmrbench/validate" / task.name / "impl-1.json").read_text())
    assert result["valid"] is True and result["sandbox"] == "docker"
