"""The review session's second chances on disk: unsure, skip, clear and undo; older label files still load;
labels of items reassigned to others are listed, and still count in agreement."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.labels_run import write_review_run
from lmrbench.benchmark.labels import review
from lmrbench.benchmark.labels.agreement import agreement
from lmrbench.benchmark.labels.review import Filter, open_session
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
from lmrbench.schemas.run import HumanLabel, LabelQueue, QueueItem


def test_a_label_file_without_unsure_loads_as_sure(tmp_path: Path) -> None:
    old = {"schema_version": 1, "task": "1-Toy", "impl": 1, "label": "logically_correct", "annotator": "alice"}
    assert HumanLabel.model_validate_json(json.dumps(old)).unsure is False


def test_unsure_skip_clear_and_undo_are_written_at_once(tmp_path: Path) -> None:
    bench, run = write_review_run(tmp_path)
    session = open_session(bench, run, "alice")
    first, second = session.items[0], session.items[1]
    session.skip(first)
    assert session.first_unlabelled() == 1 and session.progress() == (0, 1, 3)
    assert open_session(bench, run, "alice").first_unlabelled() == 1  # the skip is on disk
    session.label(first, 2)
    assert not session.skipped(first) and session.visible(Filter.SKIPPED) == []
    session.toggle_unsure(first)
    assert RunDir(run).labels("alice")[0].unsure is True
    session.clear(first)
    assert RunDir(run).labels("alice") == []
    session.undo()  # the clear
    assert RunDir(run).labels("alice")[0].unsure is True
    session.undo()  # the unsure
    session.undo()  # the label: skipped again, as before it
    assert RunDir(run).labels("alice") == [] and session.skipped(first)
    session.undo()  # the skip
    assert not session.skipped(first) and session.undo() is None
    session.label(second, 3)
    assert open_session(bench, run, "alice").progress() == (1, 0, 3)


def test_outcome_wording_counts_passed_cases(tmp_path: Path) -> None:
    bench, run = write_review_run(tmp_path)
    session = open_session(bench, run, "alice")
    head, failures = review.tests_text(session.items[0])
    assert head == "failed, 1 of 2 cases passed" and failures[0].startswith("unit_test_1.py::test_dice_overlap")


def test_a_reassigned_items_label_is_listed_and_counts(tmp_path: Path) -> None:
    bench, run = write_review_run(tmp_path)
    session = open_session(bench, run, "alice")
    session.label(session.items[2], 2)
    queue = LabelQueue(annotator="alice", annotators=["alice", "bob"], seed=0, overlap=0.0,
                       items=[QueueItem(task="1-Toy", impl=1), QueueItem(task="1-Toy", impl=2)])  # fmt: skip
    save_model(RunDir(run).queue_path("alice"), queue)
    reopened = open_session(bench, run, "alice")
    assert [(i.key, i.reassigned) for i in reopened.items] == [
        (("1-Toy", 1), False), (("1-Toy", 2), False), (("2-Async", 1), True)]
    assert agreement([run]).labels == 1
    reopened.clear(reopened.items[2])
    assert agreement([run]).labels == 0
