"""The app never dies on what a repository holds: a name defined twice (in two branches) is listed twice, told apart
by its line, and a task can be made of either definition; real repositories open in the function picker.

Real repositories are read from ``LMRBENCH_REAL_REPOS`` (folders separated by ``os.pathsep``: checkouts, bare git
mirrors, or folders of task folders whose repositories are checked out inside them); without it those tests skip,
and the fixture below reproduces the shape that broke the picker on every run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.widgets import OptionList

from helpers.pilot import open_and_clone, screen_text, wait_for_workers
from helpers.tasks import create_task
from lmrbench.authoring.task.task_spec import FunctionRef
from lmrbench.core.source.index import function_refs, index_repo
from lmrbench.errors import LmrError
from lmrbench.tui.app import make_app
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.function_picker import FunctionPicker

pytestmark = pytest.mark.anyio

TRAINER = '''import numpy as np


class Trainer:
    def __init__(self, model, use_grad):
        self.model = model
        if use_grad:
            def make_inputs_require_grad(module, inputs):
                return inputs * 2.0
        else:
            def make_inputs_require_grad(module, inputs):
                return np.asarray(inputs) + 1.0
        self.hook = make_inputs_require_grad

    def loss(self, x):
        return float(np.sum(self.hook(None, x)))
'''
FIRST, SECOND = 8, 11  # the lines the two definitions start at
NAME = "trainer.py::Trainer.__init__.make_inputs_require_grad"


@pytest.fixture
def twice_repo(tmp_path: Path, make_repo: Callable[[Path, dict[str, str | bytes]], str]) -> Path:
    """A repository whose trainer defines one nested function in two branches."""
    root = tmp_path / "twice"
    make_repo(root, {"trainer.py": TRAINER, "requirements.txt": "numpy\n"})
    return root


def test_a_name_defined_twice_has_two_references(twice_repo: Path) -> None:
    functions = index_repo(twice_repo)
    refs = function_refs(functions)
    assert f"{NAME}@{FIRST}" in refs and f"{NAME}@{SECOND}" in refs
    assert "trainer.py::Trainer.loss" in refs  # a name defined once keeps its plain reference
    assert FunctionRef.parse(f"{NAME}@{SECOND}") == FunctionRef(
        "trainer.py", "Trainer.__init__.make_inputs_require_grad", SECOND)
    with pytest.raises(LmrError, match="@147"):
        FunctionRef.parse("trainer.py::Trainer.loss@")


@pytest.mark.parametrize(("line", "masked_body", "kept_body"), [
    (FIRST, "return inputs * 2.0", "return np.asarray(inputs) + 1.0"),
    (SECOND, "return np.asarray(inputs) + 1.0", "return inputs * 2.0"),
])
def test_a_task_of_either_definition(twice_repo: Path, bench: Path, line: int, masked_body: str,
                                     kept_body: str) -> None:
    task = create_task(twice_repo, bench, [f"{NAME}@{line}"], instruction="Make the inputs need a gradient.")
    impl = task.info.implementations[0]
    assert impl.goal_line == line
    goal = task.goal_path(impl).read_text()
    assert kept_body in goal and masked_body not in goal
    assert goal.count("raise NotImplementedError") == 1
    # a definition that does not start at the line given is one line naming the lines it does start at
    with pytest.raises(LmrError, match=f"starts at line {FIRST}, {SECOND}"):
        create_task(twice_repo, bench, [f"{NAME}@9"], instruction="x", force=True)
    # the other definition is free for another task; the same one is refused
    other = SECOND if line == FIRST else FIRST
    create_task(twice_repo, bench, [f"{NAME}@{other}"], instruction="The other branch.")
    with pytest.raises(LmrError, match="already task"):
        create_task(twice_repo, bench, [f"{NAME}@{line}"], instruction="Again.")


async def test_the_picker_lists_both_and_masks_the_one_picked(twice_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, twice_repo)
        picker = screen.query_one(FunctionPicker)
        assert picker.query_one(OptionList).option_count == len(picker.functions) == 4
        await pilot.press(*"make_inputs", "enter")
        await pilot.press("down", "enter")  # the second of the two rows: the second definition
        await pilot.pause()
        assert screen.selected == [f"{NAME}@{SECOND}"]
        await pilot.press("ctrl+n")
        await wait_for_workers(app, pilot)
        diff = screen.query_one(DiffView).text
        assert "-                return np.asarray(inputs) + 1.0" in diff
        assert "-                return inputs * 2.0" not in diff
        assert "Traceback" not in screen_text(app)


async def _until(check: Callable[[], bool], rounds: int = 5000) -> bool:
    """Let the app's tasks run until ``check()`` holds (at most ``rounds`` turns of the event loop). Pilot's
    ``pause`` cannot be used once a widget has stopped: it waits for every widget's queue, the stopped one's too,
    for 30 s, then raises."""
    for _ in range(rounds):
        if check():
            return True
        await asyncio.sleep(0)
    return check()


async def test_an_error_in_a_widget_is_a_message(bench: Path) -> None:
    app = make_app(bench)
    checked = []
    with pytest.raises(RuntimeError, match="broken on purpose"):  # a test run still fails on it, at its end
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            table = app.screen.query_one("DataTable")

            def broken() -> None:
                raise RuntimeError("broken on purpose")

            def shown() -> list[str]:
                return [n.message for n in app._notifications]

            table.call_later(broken)
            assert await _until(lambda: any("broken on purpose" in m for m in shown())), shown()
            assert app.is_running
            assert any("broken on purpose" in m and "DataTable" in m for m in shown()), shown()
            assert "broken on purpose" in (bench / app.ERROR_LOG).read_text()
            # the session goes on: the stopped table (it had the focus) gives it up, so keys reach the screen
            # (they went to the table's queue, unread, and ctrl+q did nothing) and it takes the focus no more
            assert app.focused is None and not table.focusable
            app.post_message(events.Key("ctrl+q", None))
            assert await _until(lambda: not app.is_running)
            checked.append(True)
    assert checked  # the checks above ran: the error is raised only when the test's app ends


def _real_repositories() -> list[Path]:
    """Every repository under ``LMRBENCH_REAL_REPOS``: a checkout, a bare mirror, or a task set's task folders."""
    found: list[Path] = []
    for entry in filter(None, os.environ.get("LMRBENCH_REAL_REPOS", "").split(os.pathsep)):
        root = Path(entry)
        if (root / "HEAD").is_file() or (root / ".git").exists() or (root / "repo" / "HEAD").is_file():
            found.append(root / "repo" if (root / "repo" / "HEAD").is_file() else root)
        elif root.is_dir():
            for task in sorted(p for p in root.iterdir() if p.is_dir()):
                found.extend(sorted(p for p in task.iterdir() if p.is_dir() and p.name != "golden_files")[:1])
    return found


REAL = _real_repositories()


def _checkout(repo: Path, into: Path) -> Path:
    """A plain folder of ``repo``'s Python files (a bare mirror, whose largest blobs may be absent, is checked out
    file by file; a folder is used as it is)."""
    if not ((repo / "HEAD").is_file() and (repo / "objects").is_dir()):
        return repo
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(repo), str(into)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(into), "checkout", "HEAD", "--", "*.py"], check=True, capture_output=True)
    shutil.rmtree(into / ".git")
    return into


@pytest.mark.skipif(not REAL, reason="LMRBENCH_REAL_REPOS names no repository")
@pytest.mark.parametrize("repo", REAL, ids=[f"{p.parent.name}/{p.name}" for p in REAL])
async def test_a_real_repository_opens_in_the_picker(repo: Path, tmp_path: Path) -> None:
    root = _checkout(repo, tmp_path / "checkout")
    functions = index_repo(root)
    refs = function_refs(functions)
    assert len(set(refs)) == len(refs) or any(f.is_overload for f in functions)
    bench = tmp_path / "bench"
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, root)
        picker = screen.query_one(FunctionPicker)
        assert len(picker.functions) == len(functions)
        assert picker.query_one(OptionList).option_count == min(len(functions), 100)
        await pilot.press("enter", "down", "enter")
        await pilot.pause()
        assert app.screen is screen
