"""The new-task screen's plain objects without the app: the steps' marks, the author's choices and the rules that
keep a task from being validated or saved."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lmrbench.authoring.task.clone import ClonedRepo
from lmrbench.authoring.task.draft import validated_key
from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.authoring.task.task_spec import TaskSpec
from lmrbench.core.source.index import FunctionInfo
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.tui.screens.new_task_choices import TaskChoices
from lmrbench.tui.screens.new_task_save import STALE, SaveRules
from lmrbench.tui.screens.new_task_steps import StepTracker, numbered
from lmrbench.tui.screens.suggest import Suggested
from lmrbench.tui.widgets.metadata_form import Metadata


def function(file: str, qualname: str) -> FunctionInfo:
    """A top-level function of ``file``."""
    return FunctionInfo(file=file, qualname=qualname, name=qualname.rsplit(".", 1)[-1], class_name="", lineno=1,
                        end_lineno=2, is_async=False, is_method=False, is_property=False, is_nested=False,
                        is_overload=False, decorators=())  # fmt: skip


def cloned(tmp_path: Path) -> ClonedRepo:
    return ClonedRepo(path=tmp_path / "source", url="https://example.org/toy-dpo.git", commit="0123456789abcdef")


FUNCTIONS = [function("losses.py", "preference_loss"), function("losses.py", "log_sigmoid")]


def test_a_step_is_marked_done_when_its_part_is_and_a_problem_once_left_undone() -> None:
    steps = StepTracker()
    complete = {"source": True, "function": False, "mask": False, "save": False}
    assert steps.states(complete, "none") == {"source": "done"}
    steps.enter("function")
    steps.enter(steps.next())
    assert steps.current == "mask"
    assert steps.states(complete, "none") == {"source": "done", "function": "problem"}
    assert steps.states(complete, "stale")["validate"] == "problem"
    lines = steps.flag([("save", "x"), ("function", "tick at least one function")])
    assert lines == ["step 8: x", "step 2: tick at least one function"]
    assert steps.states(complete, "none")["save"] == "problem"  # flagged: even Save
    steps.enter("save")
    assert steps.next() == "save"


def test_a_new_clone_keeps_the_ticked_functions_it_has(tmp_path: Path) -> None:
    choices = TaskChoices(tmp_path / "bench")
    assert choices.take_clone(cloned(tmp_path), FUNCTIONS) == 0
    choices.tick(["losses.py::preference_loss", "losses.py::log_sigmoid"])
    assert choices.take_clone(cloned(tmp_path), FUNCTIONS[:1]) == 1
    assert choices.selected == ["losses.py::preference_loss"]
    assert choices.files() == ["losses.py"]
    assert choices.clone_summary(2) == ("cloned https://example.org/toy-dpo.git at 0123456789ab: 1 functions in 1 "
                                        "files; 2 files did not parse")  # fmt: skip
    assert choices.masking() == "masking: losses.py::preference_loss"


def test_suggests_pick_is_ticked_once_and_its_passage_shown_once(tmp_path: Path) -> None:
    pick = Suggested(repo="/repo", ref="losses.py::log_sigmoid", paper="p.pdf", page=2, passage="Method")
    choices = TaskChoices(tmp_path / "bench", pick)
    choices.take_clone(cloned(tmp_path), FUNCTIONS)
    assert choices.tick_pick() == "losses.py::log_sigmoid" and choices.selected == ["losses.py::log_sigmoid"]
    assert choices.tick_pick() is None  # something is ticked already
    assert choices.take_paper({"1": "a", "2": "b"}) is pick
    assert choices.take_paper({"1": "a"}) is None and choices.pages == {"1": "a"}


def test_the_task_is_named_after_the_title_until_the_author_names_it(tmp_path: Path) -> None:
    choices = TaskChoices(tmp_path / "bench")
    md = Metadata()
    assert choices.name_task(md) and md.name == "1-Task"
    md.paper_name = "Toy DPO"
    assert choices.name_task(md) and md.name == "1-ToyDPO"
    md.name = "7-Mine"
    assert not choices.name_task(md) and md.name == "7-Mine"


def test_the_spec_needs_a_clone_and_a_function(tmp_path: Path) -> None:
    choices = TaskChoices(tmp_path / "bench")
    md = Metadata(name="1-ToyDPO", paper_name="Toy DPO", year=2023)
    with pytest.raises(LmrError, match="clone a repository first"):
        choices.spec(tmp_path, md, pdf="", instruction="x", style=MaskStyle.PASS)
    choices.take_clone(cloned(tmp_path), FUNCTIONS)
    with pytest.raises(LmrError, match="select at least one function"):
        choices.spec(tmp_path, md, pdf="", instruction="x", style=MaskStyle.PASS)
    choices.tick(["losses.py::preference_loss"])
    spec = choices.spec(tmp_path / "bench", md, pdf="~/p.pdf", instruction="Do it.", style=MaskStyle.PASS)
    assert (spec.name, spec.instructions, spec.mask_style, spec.repo_url) == (
        "1-ToyDPO", ["Do it."], MaskStyle.PASS, "https://example.org/toy-dpo.git")
    assert spec.paper == Path("~/p.pdf").expanduser() and [f.qualname for f in spec.functions] == ["preference_loss"]


@dataclass
class FakeForm:
    """The screen's part the rules read: the form's values, the metadata's problems, the draft task."""

    choices: TaskChoices
    text: str = ""
    problems: dict[str, str] = field(default_factory=dict)
    shown: list[bool] = field(default_factory=list)
    draft_task: Task | None = None

    def spec(self, bench: Path) -> TaskSpec:
        md = Metadata(name="1-ToyDPO", paper_name="Toy DPO", year=2023, category="Training Objectives & Optimization")
        return self.choices.spec(bench, md, pdf="", instruction=self.text, style=MaskStyle.PASS)

    def instruction(self) -> str:
        return self.text

    def metadata_problems(self, *, show: bool) -> dict[str, str]:
        self.shown.append(show)
        return self.problems


def test_every_missing_part_is_listed_by_step_and_the_tests_only_for_validate(tmp_path: Path) -> None:
    choices = TaskChoices(tmp_path / "bench")
    form = FakeForm(choices, problems={"category": "pick one"})
    rules = SaveRules(choices, form)
    assert rules.step_problems() == [
        ("source", "clone a repository (ctrl+g)"), ("function", "tick at least one function (enter on it)"),
        ("paper", "write the instruction"), ("metadata", "category: pick one"),
    ]
    assert form.shown == [True]  # listing them shows the metadata's problems under their fields
    assert rules.problems(tests=True)[-1] == "step 6: record the tests (ctrl+g) or write a scaffold"
    assert rules.complete() == dict.fromkeys(
        ["source", "function", "mask", "paper", "metadata", "tests", "validate", "save"], False)
    choices.take_clone(cloned(tmp_path), [])
    assert rules.step_problems()[0] == ("source", "the repository has no Python function to mask: clone another")


def test_a_validation_is_current_until_the_instruction_changes(tmp_path: Path) -> None:
    choices = TaskChoices(tmp_path / "bench")
    form = FakeForm(choices, text="Implement the DPO loss.")
    rules = SaveRules(choices, form)
    assert rules.validation() == "none" and "never validated" in (rules.unproven() or "")
    choices.take_clone(cloned(tmp_path), FUNCTIONS)
    choices.tick(["losses.py::preference_loss"])
    choices.valid_key = validated_key(form.spec(choices.bench))
    assert rules.validation() == "current" and rules.unproven() is None
    assert rules.summary().splitlines()[1:] == [
        "functions: losses.py::preference_loss",
        "• step 6: no tests yet (record them, or write a scaffold); Save writes the task without them",
        "ready to save, without tests",  # never a bare "ready to save" while the tests are missing
    ]
    form.text = "Implement the DPO loss, with beta."
    assert rules.validation() == "stale" and "changed since it was validated" in (rules.unproven() or "")
    assert "the validation is stale" in rules.summary() and STALE.startswith("stale:")
    assert numbered([("validate", "again")]) == ["step 7: again"]
