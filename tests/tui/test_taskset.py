"""The task set screen: rows per implementation, validation results, filter, sort, the task checks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, RichLog

from helpers.pilot import wait_for_workers
from lmrbench.authoring.check.check import check_task
from lmrbench.benchmark.validation.store import result_path, task_fingerprint
from lmrbench.core.taskset import Task
from lmrbench.defaults import default_run_dir
from lmrbench.fsutil import atomic_write_json
from lmrbench.schemas.testrun import TestReport, TestStatus
from lmrbench.schemas.validation import ImplValidation
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.taskset import TaskSetScreen

pytestmark = pytest.mark.anyio


def shown_warnings(app) -> str:
    """The warnings pane's text with the wrapping (and all other whitespace) removed."""
    lines = app.screen.query_one("#warnings", RichLog).lines
    return "".join("".join(str(line.text).split()) for line in lines)


def rows(app) -> list[list[str]]:
    table = app.screen.query_one("#tasks", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def write_result(bench: Path, task: Task, *, valid: bool, killed: int, total: int, weak: bool = False) -> None:
    """A stored result about the task's files as they are now; a weak one with the reasons validate gives."""
    res = ImplValidation(
        min_kill_rate=0.75 if weak else 0.0,
        weak_reasons=["M2 drop_guard: line 4: drop the guard '1' of 'max(n, 1)' passes; a case where the guard "
                      "'1' binds (a count of zero, a value past the bound) would kill it"] if weak else [],
        task=task.name, impl=1, sandbox="local", fingerprint=task_fingerprint(task), repeat=3,
        golden_passes=3 if valid else 1, mutants_killed=killed, mutants_total=total, valid=valid, weak=weak,
        golden_runs=[TestReport(status=TestStatus.PASSED if k < (3 if valid else 1) else TestStatus.FAILED,
                                sandbox="local") for k in range(3)],
        reasons=[] if valid else ["golden code failed 2 of 3 runs"],
        finished_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
    )
    atomic_write_json(result_path(default_run_dir(bench), task.name, 1), res.model_dump(mode="json"))


async def test_rows_show_stored_validation_and_the_task_checks(new_task, bench: Path) -> None:
    good = new_task()
    bad = new_task(with_test=False)
    write_result(bench, good, valid=True, killed=5, total=6)
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TaskSetScreen)
        table = rows(app)
        assert [r[:5] for r in table] == [
            [good.name, "1", "valid", "3/3", "5/6 (83%)"],
            [bad.name, "1", "not validated", "-", "-"],
        ]
        assert table[0][5] == "Training Objectives & Optimization"
        expected = check_task(bad)
        assert expected and all("".join(w.split()) in shown_warnings(app) for w in expected)
        assert not check_task(good)


async def test_a_weak_task_is_not_shown_as_plainly_valid(new_task, bench: Path) -> None:
    # the CLI's table says "valid but weak"; the app said "valid" and nothing more
    weak = new_task()
    write_result(bench, weak, valid=True, killed=1, total=6, weak=True)
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [r[:5] for r in rows(app)] == [[weak.name, "1", "valid but weak", "3/3", "1/6 (17%)"]]
        assert "validbutweak:itstestskill1/6mutants(17%),belowthekillrate75%" in shown_warnings(app)
        assert "validbutweak:M2drop_guard:line4:droptheguard'1'of'max(n,1)'passes;acasewheretheguard'1'binds" \
            in shown_warnings(app)
        assert "addteststhattell" not in shown_warnings(app)
        await pilot.press("slash", *"weak")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [weak.name]


async def test_filter_and_sort(new_task, bench: Path) -> None:
    first = new_task()
    second = new_task()
    write_result(bench, second, valid=False, killed=0, total=4)
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("slash", *"invalid")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [second.name]
        assert "goldencodefailed2of3runs" in shown_warnings(app)
        app.screen.query_one("#filter", Input).value = ""
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [first.name, second.name]
        # Sorting by status puts "invalid" before "not validated"; the same header again reverses.
        await pilot.click("#tasks", offset=(2, 0))  # task header: already sorted ascending -> descending
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [second.name, first.name]
        app.screen.sort_column = 2
        await pilot.press("s")  # next column after status: golden
        assert app.screen.sort_column == 3


async def test_a_result_goes_stale_when_the_tests_change(new_task, bench: Path) -> None:
    task = new_task()
    write_result(bench, task, valid=True, killed=5, total=6)
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert rows(app)[0][2] == "valid"
        test = task.repo_dir / "unit_test" / "unit_test_1.py"
        test.write_text(test.read_text() + "\n\ndef test_more():\n    pass\n")  # tests recorded again
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert rows(app)[0][2] == "stale"
        assert "changedsinceitwasvalidated" in shown_warnings(app)


async def test_escape_clears_the_filter_and_shift_s_reverses(new_task, bench: Path) -> None:
    first = new_task()
    second = new_task()
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("slash", *first.name)
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [first.name]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.query_one("#filter", Input).value == ""
        assert app.screen.focused is app.screen.query_one("#tasks", DataTable)
        assert [r[0] for r in rows(app)] == [first.name, second.name]
        await pilot.press("S")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [second.name, first.name]
        assert "↓" in str(app.screen.query_one("#count").render())
        await pilot.press("S")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == [first.name, second.name]


async def test_columns_are_as_wide_as_their_longest_cell(new_task, bench: Path) -> None:
    task = new_task()
    write_result(bench, task, valid=True, killed=5, total=6)
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#tasks", DataTable)
        for _ in range(2):  # as loaded, and after a filter that empties the table and is cleared
            for k, column in enumerate(table.columns.values()):
                longest = max(len(str(table.get_row_at(i)[k])) for i in range(table.row_count))
                assert column.get_render_width(table) >= longest + 2, column.label
            await pilot.press("slash", *"zzz")
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()


async def test_a_draft_left_behind_is_listed(new_task, bench: Path) -> None:
    new_task()
    (bench / ".lmrbench-draft-k2x9" / "source").mkdir(parents=True)
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ".lmrbench-draft-k2x9:anunsavednewtask" in shown_warnings(app)


def test_the_status_filter_takes_whole_words() -> None:
    from lmrbench.tui.screens.taskset import Row

    def row(status: str) -> Row:
        return Row("1-Toy", 1, status, "3/3", "80%", "Evaluation Metrics", "today")

    assert [s for s in ("valid", "valid but weak", "invalid", "not validated", "stale") if row(s).matches("valid")] \
        == ["valid", "valid but weak"]
    assert row("stale").matches("toy stale") and row("valid").matches("metrics") and not row("valid").matches("weak")


async def test_validate_all_says_the_golden_pass_rate(new_task, bench: Path) -> None:
    # a whole-set validate and its pass rate were on the command line only; a stored result of the unchanged task
    # is reused, so nothing runs here
    write_result(bench, new_task(), valid=True, killed=5, total=6)
    app = make_app(bench, sandbox="local")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("V")
        await wait_for_workers(app, pilot)
        await wait_for_workers(app, pilot)
        line = "golden pass rate 1/1 = 100%; valid 1/1, valid but weak 0/1"
        assert any(line in str(n.message) for n in app._notifications), [n.message for n in app._notifications]
        assert line in str(app.screen.query_one("#work-label").render())
