"""A faithful re-implementation of the official LMR-Bench unit-test evaluation, kept to test exports against.

The official loop, per task folder: ``docker build --build-arg UID=<uid> --build-arg GID=<gid>
--build-arg DIR=<repo_folder_name> -t eval_<task> -f Dockerfile .`` in the task folder; ``docker run --rm --user
<uid>:<gid> -v <task>:/workspace -v <tmp>:/tmp eval_<task> bash -lc "pwd && cd <repo> && export PYTHONPATH=$(pwd)
&& mkdir -p /workspace/results && for pyf in unit_test/unit_test_*.py; do python "$pyf" >
/workspace/results/$(basename "$pyf" .py).log 2>&1; done"``; then its statistics read
``<task>/<repo>/unit_test/logs/*.log``: a log passes when it holds no ``Failed`` and at least one ``Passed``.
Left out here: ``--gpus device=0`` and the Hugging Face token and cache mounts (no GPU or token on a test machine).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path


def official_build(task: Path) -> str:
    """Build the task's image with the official command; return its tag (CalledProcessError on failure)."""
    info = json.loads((task / "info.json").read_text())
    tag = f"eval_{task.name.lower()}"
    subprocess.run(
        ["docker", "build", "--build-arg", f"UID={os.getuid()}", "--build-arg", f"GID={os.getgid()}",
         "--build-arg", f"DIR={info['repo_folder_name']}", "-t", tag, "-f", "Dockerfile", "."],
        cwd=task, check=True, capture_output=True, text=True, timeout=900,
    )
    return tag


def official_run(task: Path, tag: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """Run every ``unit_test/unit_test_*.py`` of the task in its image as the official runner does."""
    repo = json.loads((task / "info.json").read_text())["repo_folder_name"]
    script = (
        f"pwd && cd {repo} && export PYTHONPATH=$(pwd) && mkdir -p /workspace/results && "
        'for pyf in unit_test/unit_test_*.py; do python "$pyf" > /workspace/results/"$(basename "$pyf" .py)".log '
        "2>&1; done"
    )
    return subprocess.run(
        ["docker", "run", "--rm", "--user", f"{os.getuid()}:{os.getgid()}", "-v", f"{task.resolve()}:/workspace",
         "-v", f"{tmp}:/tmp", tag, "bash", "-lc", script],
        capture_output=True, text=True, timeout=900,
    )


def official_statistics(task: Path) -> dict[str, bool]:
    """The official statistics of one task: log name -> passed."""
    repo = json.loads((task / "info.json").read_text())["repo_folder_name"]
    logs = task / repo / "unit_test" / "logs"
    out = {}
    for log in sorted(logs.glob("*.log")) if logs.is_dir() else []:
        content = log.read_text(encoding="utf-8", errors="replace")
        out[log.name] = len(re.findall("Failed", content)) == 0 and len(re.findall("Passed", content)) > 0
    return out
