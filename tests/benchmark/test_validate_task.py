"""validate_task: one task's typed results; a stored result goes stale when the task's files change."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.tasks import create_task
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.task import ResultStatus, stored_results, validate_task
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError

UNIT_TEST = '''import numpy as np
from losses import preference_loss


def test_preference_loss():
    out = preference_loss(np.array([1.0, 2.0]), np.array([0.0, 0.5]), beta=1.0)
    assert np.allclose(out, np.log1p(np.exp(-np.array([1.0, 1.5]))))
'''


class Details:
    """A Progress that keeps the detail of every step."""

    def __init__(self) -> None:
        self.details: list[str] = []

    def start(self, label: str, total: int | None) -> None:  # noqa: D102
        pass

    def advance(self, n: int = 1, detail: str = "") -> None:  # noqa: D102
        self.details.append(detail)

    def log(self, line: str) -> None:  # noqa: D102
        pass


@pytest.fixture
def task(fixture_repo: Path, tmp_path: Path) -> Task:
    made = create_task(fixture_repo, tmp_path / "bench", ["losses.py::preference_loss"],
                       instruction="Implement the DPO loss.", name="1-Toy")
    (made.repo_dir / "unit_test" / "unit_test_1.py").write_text(UNIT_TEST)
    return made


def test_valid_then_stale_when_the_tests_change(task: Task) -> None:
    progress = Details()
    (res,) = validate_task(task.path, sandbox="local", options=ValidateOptions(repeat=1, max_mutants=3),
                           progress=progress)
    assert res.valid and res.mutants_total >= 1
    assert stored_results(task)[1][1] is ResultStatus.VALID
    mutant_lines = [d for d in progress.details if " mutant " in d]
    assert mutant_lines and all(d.endswith((": killed", ": survived")) for d in mutant_lines), mutant_lines

    test = task.repo_dir / "unit_test" / "unit_test_1.py"
    test.write_text(UNIT_TEST.replace("2.0", "3.0"))  # re-recorded tests
    assert stored_results(task)[1][1] is ResultStatus.STALE
    test.write_text(UNIT_TEST)
    assert stored_results(task)[1][1] is ResultStatus.VALID
    task.goal_path(task.info.implementations[0]).write_text("def preference_loss(*a, **k):\n    pass\n")  # re-masked
    assert stored_results(task)[1][1] is ResultStatus.STALE


def test_a_broken_info_json_is_an_error_naming_it(task: Task) -> None:
    (task.path / "info.json").write_text('{"implementations": [')
    with pytest.raises(LmrError, match="info.json"):
        validate_task(task.path, sandbox="local", options=ValidateOptions(repeat=1, max_mutants=0))
