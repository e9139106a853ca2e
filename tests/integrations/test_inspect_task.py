"""The ``lmr_bench`` task's samples and the entry point that registers lmrbench with Inspect AI (no Docker: the
sandbox and the grading run in tests/docker/test_inspect_docker.py)."""

from __future__ import annotations

import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError

# Inspect AI takes seconds to import: the tests import it, so collecting this module costs nothing.

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def test_each_implementation_is_a_sample_in_its_task_s_sandbox_told_its_instruction_never_its_golden_code(
    tmp_path: Path,
) -> None:
    from lmrbench.integrations.inspect.sandbox import LmrbenchConfig
    from lmrbench.integrations.inspect.task import samples

    bench = tmp_path / "tasks"
    shutil.copytree(EXAMPLES, bench, ignore=shutil.ignore_patterns(".lmrbench"))
    (bench / "2-BERTScore" / "Dockerfile").write_text("FROM python:3.11-slim\nCOPY . .\n")  # golden files inside
    out = samples(bench)
    assert [s.id for s in out] == ["1-DPO#1", "3-ContrastiveDecoding#1"]
    tasks = {t.name: t for t in load_taskset(bench)[0]}
    for sample in out:
        task = tasks[str(sample.metadata["task"] if sample.metadata else "")]
        impl = task.info.implementations[0]
        assert sample.sandbox is not None and sample.sandbox.type == "lmrbench"
        assert sample.sandbox.config == LmrbenchConfig(task=str(task.path.resolve()), lifetime=7200.0)
        prompt = str(sample.input)
        assert impl.instruction in prompt and f"`{task.info.repo_folder_name}/{impl.goal_file}`" in prompt
        masked = task.goal_path(impl).read_text()
        body = [line for line in task.golden_path(impl).read_text().splitlines()
                if len(line.strip()) > 20 and line not in masked]  # fmt: skip
        assert body and not any(line in prompt for line in body)
    with pytest.raises(LmrError, match="no task of the set can be run"):
        samples(bench, only=["2-BERTScore"])


def test_inspect_finds_the_task_and_the_sandbox_through_the_entry_point() -> None:
    from inspect_ai._util.registry import registry_lookup
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    from lmrbench.integrations.inspect.sandbox import LmrbenchSandbox

    found = [ep for ep in entry_points(group="inspect_ai") if ep.name == "lmrbench"]
    assert len(found) == 1, "pyproject.toml's [project.entry-points.inspect_ai] (reinstall with pip install -e .)"
    assert found[0].load().LmrbenchSandbox is LmrbenchSandbox
    assert registry_lookup("task", "lmrbench/lmr_bench") is not None
    assert registry_find_sandboxenv("lmrbench") is LmrbenchSandbox
