"""tasks check: missing files and leaked golden bodies are reported, one line each, naming the file."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.tasks import create_task
from lmrbench.authoring.check.check import check_task, check_taskset
from lmrbench.core.taskset import load_task

CALLS = "from losses import preference_loss\n\n\ndef test():\n    assert preference_loss(1.0, 0.0) < 1\n"


def _task(repo: Path, bench: Path):
    return create_task(repo, bench, ["losses.py::preference_loss"], instruction="x", category="", name="1-T")


def test_golden_body_copied_into_another_file_or_notebook_is_a_leak(fixture_repo: Path, tmp_path: Path) -> None:
    task = _task(fixture_repo, tmp_path)
    (task.repo_dir / "unit_test" / "unit_test_1.py").write_text(CALLS)
    assert check_task(task) == []
    (task.repo_dir / "old_copy.py").write_text(
        "def dpo(chosen, rejected, beta):\n    logits = chosen - rejected  # same\n"
        "    losses = -log_sigmoid(beta * logits)\n    return losses\n")
    nb = {"cells": [{"cell_type": "code", "source": ["logits = chosen - rejected\n",
                                                     "losses = -log_sigmoid(beta*logits)\n", "return losses"]}]}
    (task.repo_dir / "explore.ipynb").write_text(json.dumps(nb))
    problems = check_task(task)
    assert len(problems) == 2
    assert all("L201" in p and "golden body of preference_loss" in p for p in problems)
    assert any("old_copy.py" in p for p in problems) and any("explore.ipynb" in p for p in problems)


def test_wrong_unit_test_file_and_broken_task_are_reported_while_others_load(fixture_repo: Path,
                                                                           tmp_path: Path) -> None:
    task = _task(fixture_repo, tmp_path)
    info = json.loads((task.path / "info.json").read_text())
    info["implementations"][0]["unit_test_file"] = "unit_test/wrong.py"
    (task.path / "info.json").write_text(json.dumps(info))
    broken = tmp_path / "2-Broken"
    broken.mkdir()
    (broken / "info.json").write_text("{not json")
    results = dict(check_taskset(tmp_path))
    assert any("unit_test/wrong.py" in p and "does not exist" in p for p in results["1-T"])
    assert len(results["2-Broken"]) == 1 and "invalid JSON" in results["2-Broken"][0]
    assert load_task(task.path).info.implementations[0].unit_test_file == "unit_test/wrong.py"


def test_official_style_dockerfile_that_bakes_in_golden_files_is_flagged(fixture_repo: Path, tmp_path: Path) -> None:
    task = _task(fixture_repo, tmp_path)
    (task.repo_dir / "unit_test" / "unit_test_1.py").write_text(CALLS)
    (task.path / "Dockerfile").write_text("FROM pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime\nARG UID\n"
                                          "WORKDIR /workspace\nCOPY . .\n")
    problems = check_task(task)
    assert any("COPY . ." in p and "golden" in p for p in problems)
    (task.path / "Dockerfile").unlink()
    assert any("Dockerfile: D401 missing" in p for p in check_task(task))


def test_a_leaked_method_body_is_found_through_its_class(fixture_repo: Path, tmp_path: Path) -> None:
    task = create_task(fixture_repo, tmp_path, ["losses.py::Scaler.scale"], instruction="x", category="", name="2-M")
    (task.repo_dir / "unit_test" / "unit_test_1.py").write_text(
        "from losses import Scaler\n\n\ndef test():\n    assert Scaler(2).scale(1) == 2\n")
    assert check_task(task) == []
    (task.repo_dir / "notes.md").write_text("```\nout = x * self.k\nreturn out\n```\n")
    problems = check_task(task)
    assert len(problems) == 1 and "notes.md" in problems[0] and "Scaler.scale" in problems[0]
