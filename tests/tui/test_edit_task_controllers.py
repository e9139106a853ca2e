"""The edit screen's plain object without the app: the implementation shown, its unsaved edits and Save."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from lmrbench.core.taskset import Task, load_task
from lmrbench.errors import LmrError
from lmrbench.tui.screens.edit_task_edits import TaskEdits


def test_a_loaded_task_shows_its_first_implementation_and_a_workers_change_counts_as_saved(
    new_task: Callable[..., Task],
) -> None:
    task = new_task(with_test=False)
    edits = TaskEdits()
    assert edits.result() is None
    assert edits.take(task, ["losses.py", "train.py"], None) == 1 and not edits.saved
    instruction, md = edits.select(1)
    assert instruction == "Implement the DPO loss." and edits.impl_index == 1
    assert (md.name, md.paper_name, md.year) == (task.name, "Toy DPO", 2023)
    assert edits.files == ["losses.py", "train.py"]
    assert any("unit_test_file" in line for line in edits.problems())
    assert edits.take(task, [], 7) == 1 and edits.saved  # an index it lacks: the first; a worker changed the task
    assert edits.result() == task.name


def test_edits_are_unsaved_until_save_and_an_odd_url_left_alone_does_not_block(new_task: Callable[..., Task]) -> None:
    task = new_task()
    edits = TaskEdits()
    edits.take(task, [], None)
    edits.shown = shown = edits.select(1)
    assert not edits.changed(shown) and edits.unsaved(shown, ["load", "files"]) is None
    typed = ("Implement the DPO loss on log-ratios.", replace(shown[1], year=2024))
    assert edits.changed(typed)
    assert edits.unsaved(typed, ["files", "validate", "mask"]) == (
        f"the unsaved edits of {task.name}#1 and the running validation and masking")
    md = typed[1]
    assert edits.refusal(md, {"paper_url": "not a URL"}) is None  # the URL as it was: kept
    assert edits.refusal(replace(md, paper_url="x"), {"paper_url": "not a URL", "year": "y"}) == (
        "paper_url: not a URL; year: y")
    with pytest.raises(LmrError, match="info.json"):
        edits.save(typed[0], replace(md, year=1800))
    assert not edits.saved and load_task(task.path).info.year == 2023
    saved = edits.save(*typed)
    assert edits.saved and edits.result() == task.name and edits.task is saved
    info = load_task(task.path).info
    assert (info.year, info.implementations[0].instruction) == (2024, "Implement the DPO loss on log-ratios.")
