"""An agent works only in an image that holds no task file: a Dockerfile lmrbench did not write is built with the
task folder as its context, and one that copies it (the official ``COPY . .``) is refused before any container."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lmrbench.benchmark.agents.protocol import AgentResult, AgentSession
from lmrbench.benchmark.agents.runner import image_exposes, run_agent
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.core.taskset import load_taskset
from lmrbench.schemas.run import LLMParams

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "1-DPO"
OFFICIAL_LIKE = """ARG UID
ARG DIR=dpo-numpy
FROM python:3.11
WORKDIR /workspace
COPY . .
RUN pip install -r ${DIR}/requirements.txt
"""


class _Never:
    name = "never"

    def run(self, session: AgentSession) -> AgentResult:
        raise AssertionError("no agent runs in an image that holds the task folder")


@pytest.mark.parametrize(("dockerfile", "refused"), [
    (OFFICIAL_LIKE, True),
    ('FROM python:3.11\nCOPY ["dpo-numpy/unit_test", "/t/"]\n', True),
    ("FROM python:3.11\nCOPY dpo-numpy/requirements.txt wheels/ /tmp/r/\nRUN pip install -r /tmp/r/requirements.txt\n",
     False),
    (None, False),  # the generated one: its build context holds the requirements and wheels only
])
def test_an_image_built_from_the_task_folder_is_refused(tmp_path: Path, dockerfile: str | None,
                                                         refused: bool) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "tasks" / "1-DPO", ignore=shutil.ignore_patterns(".lmrbench"))
    if dockerfile is not None:
        (tmp_path / "tasks" / "1-DPO" / "Dockerfile").write_text(dockerfile)
    task = load_taskset(tmp_path / "tasks")[0][0]
    assert (image_exposes(task) is not None) is refused
    if refused:
        with LLMClient(LLMConfig(LLMParams(model="m", base_url="http://127.0.0.1:9/v1"), cache_dir=None)) as client:
            summary = run_agent([task], tmp_path / "run", _Never(), client, DockerRunner())
        assert dict(summary.statuses) == {"refused": 1}
        assert "lmrbench image dockerfile" in summary.problems[0] and "golden files and tests" in summary.problems[0]
        assert not (tmp_path / "run" / "agent").exists()
