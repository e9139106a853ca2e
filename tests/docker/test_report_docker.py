"""End to end through the CLI with the Docker runner: the example tasks' golden code passes and is judged
correct."""

from __future__ import annotations

import pytest

from benchmark.test_report import CC, LI, cli, llm_opts
from helpers.tasks import copy_examples
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.scoreboard import build_report


@pytest.mark.docker
def test_example_tasks_in_docker_golden_passes_and_is_completely_correct(
    server, base_image, tmp_path
) -> None:
    from lmrbench.core.source.splice import extract_function
    from lmrbench.core.taskset import load_taskset

    bench = copy_examples(tmp_path / "tasks")
    tasks, problems = load_taskset(bench)
    assert not problems and len(tasks) >= 3
    server.on("Reference implementation", LI)
    for task in tasks:
        for impl in task.info.implementations:
            golden = extract_function(task.golden_path(impl).read_text(), impl.goal_functions[0])
            server.on(
                f"Functions to implement, in {impl.goal_file}: {impl.goal_functions[0]}",
                f"```python\n{golden}\n```",
            )
            server.on(
                golden.rstrip() + "\n</candidate-", CC
            )  # the judge sees the golden code as the candidate
    run = tmp_path / "run"
    cli("generate", bench, "--out", run, *llm_opts(server, "gold", tmp_path / "cache"))
    cli("evaluate", bench, run, "--sandbox", "docker", "--timeout", "300")
    cli("judge", bench, run, *llm_opts(server, "judge", tmp_path / "cache"))
    cli("report", run)
    row = build_report([run]).rows[0]
    assert (row.implementations, row.passed, row.accuracy, row.infra_errors) == (
        len(tasks),
        len(tasks),
        100.0,
        0,
    )
    assert (row.cc, row.judged) == (len(tasks), len(tasks))
    assert all(t.image_digest.startswith("sha256:") for t in RunDir(run).require_manifest().tasks)
