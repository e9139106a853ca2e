"""Verdicts right both ways, in Docker: an agent's goal file with a new top import (used in an annotation), a
helper and a constant passes, a wrong one fails; recorded data outside unit_test/ is trusted once validate saw
the tests read it (the candidate cannot read it, the agent export does not hold it); an edited candidate is
graded again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.run_task import GOAL, METRICS_PY, REPO
from helpers.tasks import Impl, write_task
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.pipeline.agent import export_agent, import_agent
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.core.taskset import load_taskset
from lmrbench.harness.sandbox import Sandbox

pytestmark = pytest.mark.docker

TEST_RECORDED = """import json
import pathlib

from toy.metrics import dice


def test_dice_recorded():
    expected = json.loads(pathlib.Path("tensors/expected.json").read_text())
    assert dice([1, 2, 3], [2, 3, 4]) == expected["dice"]
"""

AGENT_HEAD = '''"""Metrics and a scaler of the toy paper."""

from typing import Iterable, Set
import math

SMOOTH = 0.0


def _as_set(xs: Iterable[int]) -> Set[int]:
    return set(xs)

'''

RIGHT = '''def dice(a: Iterable[int], b: Iterable[int]) -> float:
    """Dice coefficient of two sets."""
    a, b = _as_set(a), _as_set(b)
    if not a and not b:
        return 1.0
    return (2 * len(a & b) + SMOOTH) / (len(a) + len(b) + SMOOTH)
'''

WRONG = RIGHT.replace("2 * len(a & b)", "len(a & b)")

READS_THE_ANSWER = '''def dice(a, b):
    import json
    import pathlib
    return json.loads(pathlib.Path("tensors/expected.json").read_text())["dice"]
'''


@pytest.fixture
def sandbox(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    return Sandbox(DockerRunner(base_image=base_image))


def _bench(tmp_path: Path) -> Path:
    bench = tmp_path / "bench"
    write_task(bench, "1-Toy", repo=REPO, goal_file=GOAL, goal=mask_source(METRICS_PY, ["dice"], file=GOAL),
               golden=METRICS_PY, impls=[Impl("dice", "unit_test/unit_test_1.py", "Implement dice.")],
               files={"toy/__init__.py": "", "unit_test/unit_test_1.py": TEST_RECORDED,
                      "tensors/expected.json": json.dumps({"dice": 4 / 6})})  # fmt: skip
    return bench


def _agent_run(bench: Path, tmp_path: Path, name: str, body: str) -> Path:
    tasks, _ = load_taskset(bench)
    out = export_agent(tasks, tmp_path / f"agent-{name}")
    goal = out / "1-Toy" / REPO / GOAL
    masked = goal.read_text()
    head, _, _ = masked.partition("# The paper's Equation 3.")
    goal.write_text(AGENT_HEAD + head.split("import math", 1)[1] + body)
    import_agent(tasks, out, tmp_path / name)
    return tmp_path / name


def _status(run: Path) -> str:
    result = RunDir(run).result("1-Toy", 1)
    assert result is not None
    return result.status.value


def test_agent_style_candidates_and_recorded_data_outside_unit_test(tmp_path: Path, sandbox) -> None:
    bench = _bench(tmp_path)
    tasks, _ = load_taskset(bench)
    cheat = _agent_run(bench, tmp_path, "cheat-before", READS_THE_ANSWER)
    evaluate(tasks, cheat, sandbox, timeout=120)
    # before validate marks tensors/ trusted, the grader already withholds what the tests read (one reader of the
    # data tests read, which follows the test's name chains): a cheat that reads the answer fails from the start
    assert _status(cheat) == "failed"

    summary = validate_taskset(bench, sandbox=sandbox, options=ValidateOptions(repeat=1, max_mutants=0, timeout=120))
    assert summary.rows[0].valid, summary.rows
    info = json.loads((bench / "1-Toy" / "info.json").read_text())
    assert info["implementations"][0]["trusted_files"] == ["tensors/expected.json"]
    tasks, _ = load_taskset(bench)
    export = export_agent(tasks, tmp_path / "export")
    assert not (export / "1-Toy" / REPO / "tensors" / "expected.json").exists()

    runs = {name: _agent_run(bench, tmp_path, name, body)
            for name, body in (("right", RIGHT), ("wrong", WRONG), ("cheat", READS_THE_ANSWER))}  # fmt: skip
    for run in runs.values():
        evaluate(tasks, run, sandbox, timeout=120)
    assert {n: _status(r) for n, r in runs.items()} == {"right": "passed", "wrong": "failed", "cheat": "failed"}
    cand = RunDir(runs["right"]).candidate("1-Toy", 1)
    assert cand is not None and cand.helpers == ["from typing import Iterable, Set", "SMOOTH = 0.0", "def _as_set"]
    result = RunDir(runs["right"]).result("1-Toy", 1)
    assert result is not None and not result.weaker_evidence and result.sandbox == "docker"

    # edited after evaluation: graded again, not "already done"
    edited = RunDir(runs["right"]).candidate_dir("1-Toy", 1) / REPO / GOAL
    edited.write_text(edited.read_text().replace("2 * len(a & b)", "3 * len(a & b)"))
    again = evaluate(tasks, runs["right"], sandbox, timeout=120)
    assert again.skipped == 0 and _status(runs["right"]) == "failed"
