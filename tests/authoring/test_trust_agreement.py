"""tasks check (F116) and the grader take trusted files from one reader, ``core.trust.trusted_paths``: what F116
says a candidate could read is exactly what the candidate's view holds, on every planted and example task."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.planted_set import write_planted_set
from lmrbench.authoring.check.datapaths import outside_data
from lmrbench.authoring.check.taskdata import untrusted_data_findings, untrusted_reads
from lmrbench.authoring.check.testlint import read_unit_tests
from lmrbench.authoring.task.metadata import mark_trusted
from lmrbench.core.source.tree import candidate_view
from lmrbench.core.taskset import Task, load_task, load_taskset

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def _agreement(task: Task) -> tuple[int, int]:
    """Assert F116 and the candidate's view agree on every file the tests read; (flagged, trusted) counts."""
    view = candidate_view(task, None, "masked")
    flagged = trusted = 0
    for impl in task.info.implementations:
        said = untrusted_reads(task, impl)
        for tf in read_unit_tests(task, impl):
            for rel in outside_data(task, impl, tf):
                visible = not view.dropped(rel.rstrip("/"))
                assert (rel in said.get(tf.where, [])) == visible, (task.name, rel)
                flagged += visible
                trusted += not visible
    return flagged, trusted


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agree") / "set"
    write_planted_set(root)
    return root


def test_checker_and_grader_agree_on_every_planted_and_example_task(planted: Path) -> None:
    counts = [0, 0]
    for bench in (planted, EXAMPLES):
        tasks, errors = load_taskset(bench)
        assert tasks
        for task in tasks:
            flagged, trusted = _agreement(task)
            counts[0] += flagged
            counts[1] += trusted
    assert counts[0] >= 2 and counts[1] >= 2  # both answers were put to the test


def test_a_task_validate_marked_gets_no_f116(planted: Path, tmp_path: Path) -> None:
    for name in ("untrusted-data", "nested-data"):
        (src,) = [p for p in planted.iterdir() if p.name.endswith(f"-{name}")]
        shutil.copytree(src, tmp_path / src.name)
        task = load_task(tmp_path / src.name)
        impl = task.info.implementations[0]
        reads = [p for found in untrusted_reads(task, impl).values() for p in found]
        assert reads and untrusted_data_findings(task, impl)
        mark_trusted(task, impl.index, reads)  # what validate writes after its golden runs
        task = load_task(task.path)
        assert untrusted_data_findings(task, task.info.implementations[0]) == []
        assert all(candidate_view(task, None, "masked").dropped(p) for p in reads)
