"""The new-task flow: step marks that mean done, warnings instead of silently dropped values, a function list
that works at 80x24 and keeps one line per function when wide, and no draft lost to ctrl+q while work runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Select, TextArea

from helpers.pilot import open_and_clone, wait_for_workers
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.widgets.step_list import StepList

pytestmark = pytest.mark.anyio


def mark(steps: StepList, key: str) -> str:
    """The mark shown in front of a step."""
    return str(steps.get_option(key).prompt).strip()[0]


async def test_a_step_is_checked_when_done_not_when_visited(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        steps = screen.query_one(StepList)
        assert mark(steps, "source") == "✔" and screen.step == "function"
        await pilot.press("ctrl+n")  # to the mask with nothing selected
        await pilot.pause()
        assert mark(steps, "function") == "!"
        await pilot.press("ctrl+n", "ctrl+n")  # paper (no instruction), metadata
        await pilot.pause()
        assert screen.step == "metadata"
        assert mark(steps, "paper") == "!" and mark(steps, "mask") == "!"
        year = screen.query_one("#md-year", Input)
        year.value = "20x3"
        await pilot.press("ctrl+l")  # leave by the step list: back to the paper
        await pilot.pause()
        screen.go("paper")
        await pilot.pause()
        assert mark(steps, "metadata") == "!"
        assert year.value == "20x3"  # kept as typed, not dropped
        notes = [str(n.message) for n in app._notifications]
        assert any("year: must be a year" in n for n in notes), notes

        screen.go("function")
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        screen.query_one("#instruction", TextArea).text = "Implement the DPO loss."
        screen.go("mask")
        await wait_for_workers(app, pilot)
        screen.go("metadata")
        year.value = "2023"
        screen.query_one("#md-category", Select).value = "Training Objectives & Optimization"
        screen.go("save")
        await pilot.pause()
        assert [mark(steps, k) for k in ("source", "function", "mask", "paper", "metadata")] == ["✔"] * 5
        assert mark(steps, "tests") != "✔" and mark(steps, "validate") != "✔"  # never recorded or validated


async def test_the_function_search_stays_at_80x24(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        search = screen.query_one("#fp-search", Input)
        listing = screen.query_one("#fp-list", OptionList)
        assert search.region.width >= 20 and search.region.height >= 1
        assert listing.region.width >= 20 and listing.region.height >= 3
        await pilot.press(*"prfloss")
        await pilot.pause()
        assert listing.option_count == 1


LONG = '''class MultiHeadSelfAttentionWithRotaryEmbeddings:
    def scaled_dot_product_attention_with_causal_mask(self, queries, keys, values):
        return queries

    def apply_rotary_position_embeddings_to_queries_and_keys(self, queries, keys):
        return keys
'''


async def test_function_names_take_one_line_each_at_150_columns(bench: Path, tmp_path: Path, make_repo) -> None:
    repo = tmp_path / "long-names"
    make_repo(repo, {"src/models/attention/multi_head_self_attention_layers.py": LONG})
    app = make_app(bench)
    async with app.run_test(size=(150, 40)) as pilot:
        screen = await open_and_clone(app, pilot, repo)
        listing = screen.query_one("#fp-list", OptionList)
        assert listing.option_count == 2
        assert listing.virtual_size.height == listing.option_count  # one line each, cut with an ellipsis


async def test_ctrl_q_while_work_runs_asks_and_keeps_the_draft(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench, sandbox="local")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        screen.go("tests")
        screen.query_one("#tests-cmd", Input).value = "python -c 'import time; time.sleep(4)'"
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert any(w.group == "tests" for w in screen.running_workers)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        assert app.screen.question == "Quit and lose the draft task and the running recording?"
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and screen.draft is not None and screen.draft.path.is_dir()
        for _ in range(100):  # the recording ends (it fails: the command never calls the function)
            if not screen.running_workers:
                break
            await pilot.pause(0.1)
        assert screen.draft.path.is_dir()
