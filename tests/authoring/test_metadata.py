"""The task-name and paper rules are the core's: the CLI and the app accept and refuse the same values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tasks import EXAMPLES, create_task
from lmrbench.authoring.check.check import check_task
from lmrbench.authoring.task.metadata import (
    ImplFields,
    PaperFields,
    is_test_file,
    metadata_problems,
    retrieval_candidates,
    update_info,
)
from lmrbench.core.taskset import load_task, load_taskset
from lmrbench.errors import LmrError


def _new(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).with_name("lmrbench")  # the console script installed with the package
    return subprocess.run([str(cli), "task", "new", "--repo", str(repo), "--function", "losses.py::preference_loss",
                           "--instruction", "x", *args], capture_output=True, text=True)


@pytest.mark.parametrize("name", ["DPO", "7 DPO", "7-", "7-DPO loss"])
def test_the_cli_refuses_the_names_the_app_refuses(fixture_repo: Path, tmp_path: Path, name: str) -> None:
    assert "name" in metadata_problems(name=name, paper_url="", year="", category="Evaluation Metrics")
    out = _new(fixture_repo, "--name", name, str(tmp_path / "b"))
    assert out.returncode == 2
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and repr(name) in lines[0] and "N-Name" in lines[0]
    assert not (tmp_path / "b").exists() or list((tmp_path / "b").iterdir()) == []


def test_the_cli_accepts_a_name_the_app_accepts(fixture_repo: Path, tmp_path: Path) -> None:
    assert metadata_problems(name="7-DPO_v2.1", paper_url="", year="2023", category="Evaluation Metrics") == {}
    out = _new(fixture_repo, "--name", "7-DPO_v2.1", str(tmp_path / "b"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "b" / "7-DPO_v2.1" / "info.json").is_file()


def test_the_cli_refuses_a_paper_url_that_is_not_http(fixture_repo: Path, tmp_path: Path) -> None:
    out = _new(fixture_repo, "--paper-url", "papers/dpo.txt", str(tmp_path / "b"))
    assert out.returncode == 2 and "http(s) URL" in out.stderr


def test_test_files_are_never_retrieval_context() -> None:
    files = ["losses.py", "unit_test/unit_test_1.py", "tests/helpers.py", "test_losses.py", "losses_test.py",
             "conftest.py", "pkg/testing/util.py", "pkg/contest.py", "attest.py"]
    assert retrieval_candidates(files) == ["losses.py", "pkg/contest.py", "attest.py"]
    assert is_test_file("a/tests/b.py") and not is_test_file("latest.py")


def test_update_info_writes_one_implementation_and_the_paper(new_task_in, tmp_path: Path) -> None:
    task = new_task_in(tmp_path)
    edit = ImplFields("Implement the loss (eq. 7).", "Evaluation Metrics", ["train.py"])
    new = update_info(task, PaperFields("Toy", "https://arxiv.org/abs/1", 2024), {1: edit})
    impl = new.info.implementation(1)
    assert (impl.instruction, impl.category, impl.retrieval_context) == (edit.instruction, edit.category, ["train.py"])
    assert (new.info.paper_name, new.info.paper_url, new.info.year) == ("Toy", "https://arxiv.org/abs/1", 2024)
    assert check_task(load_task(task.path)) == []


@pytest.mark.parametrize(
    ("paper", "edit", "message"),
    [
        (PaperFields(paper_url="arxiv"), ImplFields("x", "Evaluation Metrics"), "paper_url: must be an http(s) URL"),
        (PaperFields(year=1800), ImplFields("x", "Evaluation Metrics"), "year: must be a year"),
        (PaperFields(), ImplFields("  ", "Evaluation Metrics"), "the instruction is empty"),
        (PaperFields(), ImplFields("x", "Cooking"), "implementation 1 category"),
        (PaperFields(), ImplFields("x", "Evaluation Metrics", ["unit_test/unit_test_1.py"]), "is a test file"),
        (PaperFields(), ImplFields("x", "Evaluation Metrics", ["nope.py"]), "not a file of the repository"),
    ],
)
def test_update_info_refuses_a_bad_value_and_writes_nothing(
    new_task_in, tmp_path: Path, paper: PaperFields, edit: ImplFields, message: str
) -> None:
    task = new_task_in(tmp_path)
    before = (task.path / "info.json").read_bytes()
    with pytest.raises(LmrError, match="info.json") as err:
        update_info(task, paper, {1: edit})
    assert message in str(err.value)
    assert (task.path / "info.json").read_bytes() == before


def test_the_bundled_examples_pass_the_apps_own_check() -> None:
    tasks, problems = load_taskset(EXAMPLES)
    assert problems == [] and len(tasks) == 3
    for task in tasks:
        info = json.loads((task.path / "info.json").read_text())
        for impl in task.info.implementations:
            found = metadata_problems(name=task.name, paper_url=info["paper_url"], year=str(info["year"]),
                                      category=impl.category)
            assert found == {}, (task.name, found)
        assert check_task(task) == []


@pytest.fixture
def new_task_in(fixture_repo: Path):
    def make(bench: Path):
        task = create_task(fixture_repo, bench / "bench", ["losses.py::preference_loss"],
                           instruction="Implement the DPO loss.", name="1-Toy")
        (task.repo_dir / "unit_test" / "unit_test_1.py").write_text(
            "import numpy as np\nfrom losses import preference_loss\n\n\ndef test_x():\n"
            "    assert np.isfinite(preference_loss(np.zeros(2), np.zeros(2))).all()\n"
        )
        return task
    return make
