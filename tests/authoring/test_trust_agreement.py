"""tasks check (F116), the grader and export-agent take what the tests read from one reader, ``core.datareads``:
the candidate's view withholds every file it finds, and F116 names exactly those info.json does not list, on every
planted and example task; the name-chain spellings of lmrbench's own recorded tests are followed before any
validate."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.planted_set import write_planted_set
from lmrbench.authoring.check.taskdata import untrusted_data_findings, untrusted_reads
from lmrbench.authoring.task.metadata import mark_trusted
from lmrbench.core.datareads import outside_data
from lmrbench.core.source.tree import candidate_view
from lmrbench.core.taskset import Task, load_task, load_taskset
from lmrbench.core.testfiles import read_unit_tests
from lmrbench.core.trust import is_trusted, trusted_paths

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def _agreement(task: Task) -> tuple[int, int]:
    """Assert the candidate's view withholds every file the tests read, and F116 names exactly those info.json
    does not list; (flagged, listed) counts."""
    view = candidate_view(task, None, "masked")
    listed = trusted_paths(task)
    flagged = trusted = 0
    for impl in task.info.implementations:
        said = untrusted_reads(task, impl)
        for tf in read_unit_tests(task, impl):
            for rel in outside_data(task, impl, tf):
                assert view.dropped(rel.rstrip("/")), (task.name, rel)
                unlisted = not is_trusted(rel, listed)
                assert (rel in said.get(tf.where, [])) == unlisted, (task.name, rel)
                flagged += unlisted
                trusted += not unlisted
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


CHAINED_TEST = '''"""Recorded cases, their data moved to tensors/."""

import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

from decoding import greedy_decode  # noqa: E402

DATA = REPO / "tensors" / "impl_1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARENT = Path(__file__).parent.parent
KIND = "ref"
NAME = "scores_" + KIND


def lm(tokens):
    return np.array([0.1, 0.5, 0.2, float(len(tokens) % 3)])


def test_recorded():
    case = np.load(DATA / "case_1.npz")
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == case["expected"].tolist()


def test_scores():
    want = np.load(os.path.join(ROOT, "outputs", NAME + ".npy"))
    assert greedy_decode(lm, [0], 4, 3)[1] == want[0]


def test_more():
    want = np.load(PARENT.joinpath("extra", f"{KIND}.npy"))
    assert want.size
'''


def test_name_chains_get_f116_before_validate_and_are_withheld(planted: Path, tmp_path: Path) -> None:
    from lmrbench.benchmark.pipeline.agent import export_agent

    (src,) = [p for p in planted.iterdir() if p.name.endswith("-nested-data")]
    dest = tmp_path / "set" / src.name
    shutil.copytree(src, dest)
    task = load_task(dest)
    repo = task.repo_dir
    (repo / task.info.implementations[0].unit_test_files[0]).write_text(CHAINED_TEST)
    shutil.rmtree(repo / "tensors")
    data = ["tensors/impl_1/case_1.npz", "outputs/scores_ref.npy", "extra/ref.npy"]
    for rel in data:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(b"not read by this test")
    (repo / "outputs" / "scores_other.npy").write_bytes(b"a file no test names")
    (repo / "decoding.py").write_text((repo / "decoding.py").read_text() + GOAL_READS)
    task = load_task(dest)
    impl = task.info.implementations[0]
    (finding,) = untrusted_data_findings(task, impl)
    assert finding.code == "F116"
    assert all(p in finding.message for p in data)
    hidden, read_by_goal = ["tensors/impl_1/case_1.npz", "extra/ref.npy"], "outputs/scores_ref.npy"
    view = candidate_view(task, None, "masked")
    assert all(view.dropped(p) for p in hidden) and not view.dropped("outputs/scores_other.npy")
    assert not view.dropped(read_by_goal)  # the golden code reads it itself: hidden, it would fail
    out = export_agent([task], tmp_path / "agent")
    shipped = {p.relative_to(out / task.name / task.info.repo_folder_name).as_posix()
               for p in (out / task.name / task.info.repo_folder_name).rglob("*") if p.is_file()}
    assert not shipped & set(hidden)  # a comment of the goal file naming them gives them no pass
    assert {"outputs/scores_other.npy", read_by_goal, "decoding.py"} <= shipped


GOAL_READS = '''

# Recorded cases: tensors/impl_1/case_1.npz, compared with extra/ref.npy (a comment; the code reads neither).
def reference_scores():
    """Scores read from outputs beside this file."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "outputs", "scores_ref.npy"), "rb") as f:
        return f.read()
'''


def test_cases_handed_to_the_tests_own_helper_get_f116_and_are_withheld(tmp_path: Path) -> None:
    """A recorded test whose case files were moved to tensors/ hands each path to ``load_case``, a module of
    unit_test/ (the tests' own, not the repository's code): the test reads them, so F116 names them before any
    validate and export-agent leaves them out (they hold the expected results)."""
    from lmrbench.benchmark.pipeline.agent import export_agent

    dest = tmp_path / "set" / "1-DPO"
    shutil.copytree(EXAMPLES / "1-DPO", dest, ignore=shutil.ignore_patterns(".lmrbench"))
    task = load_task(dest)
    repo = task.repo_dir
    test = repo / task.info.implementations[0].unit_test_files[0]
    text = test.read_text()
    assert "from lmrbench_values import load_case" in text and 'DATA = HERE / "data" / "impl_1"' in text
    test.write_text(text.replace('DATA = HERE / "data" / "impl_1"', 'DATA = REPO / "tensors" / "impl_1"'))
    (repo / "tensors").mkdir()
    shutil.move(repo / "unit_test" / "data" / "impl_1", repo / "tensors" / "impl_1")
    cases = sorted(p.relative_to(repo).as_posix() for p in (repo / "tensors" / "impl_1").glob("case_*.npz"))
    assert cases
    task = load_task(dest)
    impl = task.info.implementations[0]
    (finding,) = untrusted_data_findings(task, impl)
    assert finding.code == "F116" and cases[0] in finding.message
    assert sorted(p for found in untrusted_reads(task, impl).values() for p in found) == cases
    out = export_agent([task], tmp_path / "agent")
    shipped = out / task.name / task.info.repo_folder_name
    assert (shipped / "dpo" / "trainers.py").is_file()
    assert not [c for c in cases if (shipped / c).exists()]
