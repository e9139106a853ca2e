"""Review: label a run's candidates 1-3, one annotator at a time, golden and candidate side by side.

Every label is written at once (one atomic file per label); reopening the screen resumes at the first
unlabelled item. In blind mode (the default) the judge's verdict stays hidden until the item is labelled.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Label
from textual.worker import Worker, WorkerState

from lmrbench.tui.dialogs.comment import CommentDialog
from lmrbench.tui.widgets.code_diff import CodeDiff
from lmrbench.tui.widgets.review_facts import ReviewFacts
from lmrbench.tui.widgets.review_queue import ReviewQueue

if TYPE_CHECKING:
    from lmrbench.benchmark.labels.review import Filter, ReviewItem, ReviewSession


class ReviewScreen(Screen[None]):
    """One annotator's review queue over one run."""

    BINDINGS = [
        Binding("1", "label(1)", "Incorrect", id="review.label1", tooltip="Label 1: logically incorrect"),
        Binding("2", "label(2)", "Logic ok", id="review.label2", tooltip="Label 2: logically correct"),
        Binding("3", "label(3)", "Correct", id="review.label3", tooltip="Label 3: completely correct"),
        Binding("c", "comment", "Comment", id="review.comment", tooltip="Add or edit a comment on this item"),
        Binding("n", "move(1)", "Next", id="review.next", tooltip="Next item (of the filter)"),
        Binding("p", "move(-1)", "Prev", id="review.prev", tooltip="Previous item (of the filter)"),
        Binding(
            "a", "cycle_filter", "Filter", id="review.filter",
            tooltip="Show all, unlabelled, disagreeing with the judge, or disagreeing with the tests",
        ),
        Binding("escape", "leave", "Back", id="review.back", tooltip="Back to the task set"),
    ]  # fmt: skip

    AUTO_FOCUS = "#queue"

    @dataclass
    class Opened(Message):
        """The worker opened the session."""

        session: ReviewSession

    def __init__(
        self, bench: Path, run: Path, annotator: str | None = None, *, blind: bool = True, judge: str | None = None
    ) -> None:
        super().__init__()
        self.bench = bench
        self.run_path = run
        self.annotator = annotator
        self.blind = blind
        self.judge = judge
        self.session: ReviewSession | None = None
        self.pos = 0
        self.filter: Filter | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label("opening the run…", id="progress", markup=False)
        with Horizontal():
            yield ReviewQueue(id="queue")
            with Vertical(id="item"):
                yield Label("", id="item-title", markup=False)
                yield Label("", id="instruction", classes="hint", markup=False)
                yield CodeDiff(id="diff")
                yield ReviewFacts(id="facts")
        yield Footer()

    def on_mount(self) -> None:
        """Open the session in a thread (it reads every candidate's files)."""
        self.sub_title = f"review {self.run_path}"
        self._open()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _open(self) -> None:
        from lmrbench.benchmark.labels.review import open_session

        session = open_session(self.bench, self.run_path, self.annotator, blind=self.blind, judge=self.judge)
        self.post_message(self.Opened(session))

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self.query_one("#progress", Label).update(f"cannot review: {error}")
            self.notify(str(error), title="Review", severity="error", timeout=10)

    @on(Opened)
    async def _opened(self, message: Opened) -> None:
        from lmrbench.benchmark.labels.review import Filter

        self.session = message.session
        self.filter = Filter.ALL
        self.pos = self.session.first_unlabelled()
        await self._show()

    # what is shown

    def _visible(self) -> list[int]:
        assert self.session is not None and self.filter is not None
        return self.session.visible(self.filter)

    def _progress(self) -> str:
        assert self.session is not None and self.filter is not None
        done, total = self.session.progress()
        mode = "blind" if self.session.blind else "judge shown"
        return (
            f"{self.session.annotator} · {done}/{total} labelled · filter: {self.filter.value} "
            f"({len(self._visible())} shown) · {mode}"
        )

    def _queue_rows(self) -> list[tuple[int, tuple[str, str, str, str]]]:
        assert self.session is not None
        rows = []
        for k in self._visible():
            item = self.session.items[k]
            lab = self.session.label_of(item)
            mark = str(lab.label.score) if lab else "·"
            rows.append((k, (item.task, str(item.impl), item.model, mark + (" ⇄" if item.shared else ""))))
        return rows

    async def _show(self) -> None:
        """Redraw the queue, the progress and the current item."""
        if self.session is None:
            return
        self.query_one("#progress", Label).update(self._progress())
        visible = self._visible()
        if visible and self.pos not in visible:
            self.pos = next((k for k in visible if k >= self.pos), visible[-1])
        self.query_one(ReviewQueue).show(self._queue_rows(), self.pos)
        if not visible:
            self.query_one("#item-title", Label).update("no item matches this filter (a: next filter)")
            await self.query_one(CodeDiff).message("")
            self.query_one(ReviewFacts).show(Text(""), Text(""), Text(""))
            return
        await self._show_item(self.session.items[self.pos])

    async def _show_item(self, item: ReviewItem) -> None:
        from lmrbench.benchmark.labels.review import tests_text

        assert self.session is not None
        title = f"{item.task} #{item.impl} · {item.model}" + (" · shared with another annotator" if item.shared else "")
        self.query_one("#item-title", Label).update(Text(title, style="bold"))
        self.query_one("#instruction", Label).update(item.instruction)
        diff = self.query_one(CodeDiff)
        if not item.loaded:
            await asyncio.to_thread(self.session.sources, item)
        if item.source_error:
            await diff.message(f"cannot show the code: {item.source_error}")
        else:
            await diff.show(item.golden, item.candidate)
        head, failures = tests_text(item)
        tests = Text.assemble(("Unit tests: ", "bold"), head)
        for line in failures:
            tests.append("\n" + line, style="red")
        self.query_one(ReviewFacts).show(tests, self._judge_text(item), self._label_text(item))

    def _judge_text(self, item: ReviewItem) -> Text:
        from lmrbench.benchmark.labels.review import verdict_text

        assert self.session is not None
        if not self.session.judge_visible(item):
            return Text.assemble(("Judge: ", "bold"), ("hidden until you label this item (blind mode)", "dim"))
        head, bullets = verdict_text(item)
        text = Text.assemble(("Judge: ", "bold"), head)
        for b in bullets:
            text.append(f"\n  - {b}")
        return text

    def _label_text(self, item: ReviewItem) -> Text:
        from lmrbench.benchmark.labels.review import SCALE

        assert self.session is not None
        lab = self.session.label_of(item)
        note = self.session.note_of(item)
        text = Text.assemble(("Your label: ", "bold"))
        text.append(f"{lab.label.score} {SCALE[lab.label.score]}" if lab else "none yet (1, 2 or 3)")
        if note:
            text.append(f"\nComment: {note}" + ("" if lab else " (saved with the label)"))
        return text

    # actions

    def _current(self) -> ReviewItem | None:
        if self.session is None or not self._visible():
            return None
        return self.session.items[self.pos]

    async def action_label(self, score: int) -> None:
        """Label the shown item; the file is written before the screen changes."""
        item = self._current()
        if item is None or self.session is None:
            return
        self.session.label(item, score)
        await self._show()

    async def action_move(self, step: int) -> None:
        """Move through the items the filter shows."""
        visible = self._visible() if self.session is not None else []
        if not visible:
            return
        here = visible.index(self.pos) if self.pos in visible else 0
        self.pos = visible[max(0, min(len(visible) - 1, here + step))]
        await self._show()

    async def action_cycle_filter(self) -> None:
        """All, unlabelled, disagreeing with the judge, disagreeing with the tests."""
        from lmrbench.benchmark.labels.review import Filter

        if self.filter is None:
            return
        order = list(Filter)
        self.filter = order[(order.index(self.filter) + 1) % len(order)]
        await self._show()

    def action_comment(self) -> None:
        """Ask for a comment on the shown item."""
        item = self._current()
        if item is None or self.session is None:
            return
        session = self.session

        async def done(note: str | None) -> None:
            if note is not None:
                session.comment(item, note)
                await self._show()

        self.app.push_screen(CommentDialog(f"Comment on {item.task} #{item.impl}", session.note_of(item)), done)

    def action_leave(self) -> None:
        """Back to the previous screen (labels are already on disk)."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.exit()

    @on(ReviewQueue.Chosen)
    async def _chosen(self, message: ReviewQueue.Chosen) -> None:
        self.pos = message.position
        await self._show()
