"""Review: label a run's candidates 1-3, one annotator at a time, golden and candidate side by side.

Every label is written at once (one atomic file per label); reopening the screen resumes at the first
unlabelled item. In blind mode (the default) the tests' outcome and the judge's verdict stay hidden until the
item is labelled; after a label the screen stays on the item and shows them, until the annotator moves on.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Label
from textual.worker import Worker, WorkerState

from lmrbench.errors import LmrError
from lmrbench.tui.dialogs.comment import CommentDialog
from lmrbench.tui.dialogs.text_view import TextDialog
from lmrbench.tui.screens.review_text import judge_text, label_text
from lmrbench.tui.widgets.code_diff import CodeDiff
from lmrbench.tui.widgets.keys_footer import KeysFooter
from lmrbench.tui.widgets.review_facts import ReviewFacts
from lmrbench.tui.widgets.review_queue import ReviewQueue, Row

if TYPE_CHECKING:
    from lmrbench.benchmark.labels.review import Filter, ReviewItem, ReviewSession

WIDE = 120
"""From this many columns the queue shows beside the diff; below, the diff takes the width (``q`` shows it)."""


class ReviewScreen(Screen[None]):
    """One annotator's review queue over one run."""

    HELP = (
        "Label each candidate against the golden code: 1 logically incorrect, 2 logically correct, 3 completely "
        "correct. The tests' outcome and the judge's verdict show once you have labelled (blind review)."
    )
    BINDINGS = [
        Binding("1", "label(1)", "Wrong", id="review.label1", tooltip="Label 1: logically incorrect"),
        Binding("2", "label(2)", "Logic ok", id="review.label2", tooltip="Label 2: logically correct"),
        Binding("3", "label(3)", "Correct", id="review.label3", tooltip="Label 3: completely correct"),
        Binding("u", "unsure", "Unsure", id="review.unsure", tooltip="Mark the label unsure (or sure again)"),
        Binding("s", "skip", "Skip", id="review.skip", tooltip="Pass over this item for now (not a label)"),
        Binding("x", "clear", "Clear", id="review.clear", tooltip="Remove your label of this item (z brings it back)"),
        Binding("z,ctrl+z", "undo", "Undo", id="review.undo", tooltip="Undo the last label, clear, skip or unsure"),
        Binding("c", "comment", "Note", id="review.comment", tooltip="Add or edit a comment on this item"),
        Binding("n", "move(1)", "Next", id="review.next", tooltip="Next item (of the filter)"),
        Binding("p", "move(-1)", "Prev", id="review.prev", tooltip="Previous item (of the filter)"),
        Binding("pagedown", "scroll_diff(1)", "Diff", id="review.diff_down", priority=True, show=False,
                tooltip="Scroll the code down a page (j: a few lines)"),
        Binding("pageup", "scroll_diff(-1)", "Diff up", id="review.diff_up", priority=True, show=False,
                tooltip="Scroll the code up a page (k: a few lines)"),
        Binding("j", "scroll_lines(3)", "Down", id="review.lines_down",
                tooltip="Scroll the code down a few lines"),
        Binding("k", "scroll_lines(-3)", "Up", id="review.lines_up",
                tooltip="Scroll the code up a few lines"),
        Binding("i", "instruction", "Instr", id="review.instruction",
                tooltip="Read the whole instruction the model was given"),
        Binding("a", "cycle_filter", "Filter", id="review.filter",
                tooltip="Show all, unlabelled, skipped, unsure, disagreeing with the judge or with the tests"),
        Binding("q", "toggle_queue", "Queue", id="review.queue", tooltip="Show or hide the queue beside the code"),
        Binding("escape", "leave", "Back", id="review.back", tooltip="Back to the task set"),
        Binding("m", "agreement", "Agree", id="review.agreement",
                tooltip="This run's labels against the judge, the tests and the other annotators"),
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
        self.pinned: int | None = None
        """An item just labelled or skipped: it stays shown (with its outcome) until the annotator moves."""
        self._diff_of: int | None = None
        """The item whose code the diff shows."""

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
        yield KeysFooter(rows=2)

    def on_mount(self) -> None:
        """Open the session in a thread (it reads every candidate's files)."""
        # blind: no run folder in the title either (its name is often the model's)
        self.sub_title = "review (blind)" if self.blind else f"review {self.run_path}"
        self.set_class(self.app.size.width < WIDE, "-narrow")
        self._open()

    def on_resize(self, event: events.Resize) -> None:
        """Below ``WIDE`` columns the queue hides and the code takes the width."""
        self.set_class(event.size.width < WIDE, "-narrow")

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
        if self.session.read_only:
            self.sub_title = "review (imported run: labels, verdicts, tests)"
        self.filter = Filter.ALL
        self.pos = self.session.first_unlabelled()
        self.refresh_bindings()  # a read-only session has no label keys
        await self._show()

    LABELLING = frozenset({"label", "unsure", "skip", "clear", "undo", "comment", "cycle_filter"})
    """The actions that label; a run without candidate code (imported) has none of them."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the labelling keys on a read-only review: no key in the footer that does nothing."""
        return not (action in self.LABELLING and self.session is not None and self.session.read_only)

    # what is shown

    def _visible(self) -> list[int]:
        assert self.session is not None and self.filter is not None
        shown = self.session.visible(self.filter)
        if self.pinned is not None and self.pinned not in shown:
            shown = sorted([*shown, self.pinned])
        return shown

    def _progress(self) -> str:
        assert self.session is not None and self.filter is not None
        if self.session.read_only:
            where = f"item {self.pos + 1} of {len(self.session.items)}"
            return f"{where} · imported run, nothing to label · m: agreement"
        done, skipped, total = self.session.progress()
        mode = "blind" if self.session.blind else "outcomes shown"
        visible = self._visible()
        where = f"item {visible.index(self.pos) + 1} of {len(visible)}" if self.pos in visible else "no item"
        return (
            f"{self.session.annotator} · {done}/{total} labelled" + (f", {skipped} skipped" if skipped else "")
            + f" · {where} ({self.filter.value}) · {mode}"
        )

    def _queue_rows(self) -> list[tuple[int, Row]]:
        assert self.session is not None
        return [(k, self._row(self.session.items[k])) for k in self._visible()]

    def _row(self, item: ReviewItem) -> Row:
        assert self.session is not None
        if self.session.read_only:
            return (item.task, str(item.impl), f"{len(item.others)} lab", "")
        lab = self.session.label_of(item)
        mark = "skip" if self.session.skipped(item) else "·"
        if lab is not None:
            mark = f"{lab.label.score}" + (" unsure" if lab.unsure else "")
        other = "moved" if item.reassigned else ("shared" if item.shared else "")
        return (item.task, str(item.impl), mark, other)

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
            self._diff_of = None
            await self.query_one(CodeDiff).message("")
            self.query_one(ReviewFacts).show(Text(""), Text(""), Text(""))
            return
        await self._show_item(self.session.items[self.pos])

    async def _show_item(self, item: ReviewItem) -> None:
        from lmrbench.benchmark.labels.review import tests_text

        assert self.session is not None
        # a blind review never names the run's model (its label), not even once an item is labelled
        title = Text(f"{item.task} #{item.impl}" + ("" if self.session.blind else f" · {item.model}"), style="bold")
        if item.shared:
            title.append(" · shared: another annotator labels it too", style="bold")
        if item.reassigned:
            title.append(" · reassigned to others: your earlier label still counts (x clears it)", style="yellow")
        title.append(" · i: instruction", style="dim")
        self.query_one("#item-title", Label).update(title)
        self.query_one("#instruction", Label).update(item.instruction)
        diff = self.query_one(CodeDiff)
        if not item.loaded:
            await asyncio.to_thread(self.session.sources, item)
        if self._diff_of != self.pos:  # a label, unsure or comment keeps the code where the reader left it
            self._diff_of = self.pos
            if item.source_error:
                await diff.message(f"cannot show the code: {item.source_error}")
            else:
                await diff.show(item.golden, item.candidate)
        if not self.session.revealed(item):
            hidden = Text.assemble(
                ("Unit tests and judge: ", "bold"), ("hidden until you label this item (blind review)", "dim")
            )
            self.query_one(ReviewFacts).show(hidden, Text(""), label_text(self.session, item, self.pinned == self.pos))
            return
        head, failures = tests_text(item)
        tests = Text.assemble(("Unit tests: ", "bold"), head)
        for line in failures:
            tests.append("\n" + line, style="red")
        mine = label_text(self.session, item, self.pinned == self.pos)
        self.query_one(ReviewFacts).show(tests, judge_text(item), mine)

    # actions

    def _current(self) -> ReviewItem | None:
        if self.session is None or not self._visible():
            return None
        return self.session.items[self.pos]

    async def action_label(self, score: int) -> None:
        """Label the shown item; the file is written before the screen changes, which stays on the item."""
        item = self._current()
        if item is None or self.session is None:
            return
        self.session.label(item, score)
        self.pinned = self.pos
        await self._show()

    async def _change(self, change: Callable[[ReviewSession, ReviewItem], object]) -> None:
        """Apply ``change`` (mark unsure, skip or clear) to the shown item (what the session refuses is one
        line)."""
        item = self._current()
        if item is None or self.session is None:
            return
        try:
            change(self.session, item)
        except LmrError as exc:
            self.notify(str(exc), title="Review", severity="warning")
            return
        self.pinned = self.pos
        await self._show()

    async def action_unsure(self) -> None:
        """Mark the label of the shown item unsure, or sure again."""
        await self._change(lambda session, item: session.toggle_unsure(item))

    async def action_skip(self) -> None:
        """Skip the shown item (it stays unlabelled; the review resumes past it), then go to the next one."""
        await self._change(lambda session, item: session.skip(item))
        await self.action_move(1)

    async def action_clear(self) -> None:
        """Remove this annotator's label of the shown item."""
        await self._change(lambda session, item: session.clear(item))

    async def action_undo(self) -> None:
        """Undo the last label, clear, skip or unsure, and show its item."""
        item = self.session.undo() if self.session is not None else None
        if item is None or self.session is None:
            self.notify("nothing to undo", title="Review")
            return
        self.pos = self.pinned = self.session.items.index(item)
        await self._show()

    async def action_move(self, step: int) -> None:
        """Move through the items the filter shows (an item just labelled leaves the filter now)."""
        visible = self._visible() if self.session is not None else []
        if not visible:
            return
        here = visible.index(self.pos) if self.pos in visible else 0
        self.pos = visible[max(0, min(len(visible) - 1, here + step))]
        self.pinned = None
        await self._show()

    def action_scroll_diff(self, pages: int) -> None:
        """Scroll the code a page down (1) or up (-1)."""
        diff = self.query_one(CodeDiff)
        (diff.scroll_page_down if pages > 0 else diff.scroll_page_up)(animate=False)

    def action_scroll_lines(self, lines: int) -> None:
        """Scroll the code a few lines."""
        self.query_one(CodeDiff).scroll_relative(y=lines, animate=False)

    def action_toggle_queue(self) -> None:
        """Show or hide the queue (hidden by default below ``WIDE`` columns)."""
        self.toggle_class("-flip")
        queue = self.query_one(ReviewQueue)
        if queue.display:
            queue.focus()

    async def action_cycle_filter(self) -> None:
        """All, unlabelled, skipped, unsure, disagreeing with the judge, disagreeing with the tests."""
        from lmrbench.benchmark.labels.review import Filter

        if self.filter is None:
            return
        order = list(Filter)
        self.filter = order[(order.index(self.filter) + 1) % len(order)]
        self.pinned = None
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

    def action_instruction(self) -> None:
        """Show the shown item's whole instruction (the screen has room for two or three lines of it)."""
        item = self._current()
        if item is not None:
            self.app.push_screen(TextDialog(f"Instruction of {item.task} #{item.impl}", item.instruction))

    async def action_agreement(self) -> None:
        """The agreement figures of this run (``lmrbench labels agreement``); in a blind review once every item is
        labelled, since they tell how the judge and the tests decided."""
        from lmrbench.benchmark.labels.agreement import agreement
        from lmrbench.benchmark.labels.render import render_markdown

        if self.session is None:
            return
        done, _, total = self.session.progress()
        if self.session.blind and done < total and not self.session.read_only:
            self.notify(f"{done}/{total} labelled: a blind review shows agreement once every item is labelled",
                        title="Agreement", severity="warning")
            return
        try:
            report = await asyncio.to_thread(agreement, [self.run_path], judge=self.judge)
        except LmrError as exc:
            self.notify(str(exc), title="Agreement", severity="error")
            return
        text = render_markdown(report)
        if self.session.blind:  # a blind review names no run (its label is often the model's), here neither
            names = {*report.judges, *(item.model for item in self.session.items)}  # the run's label
            for name in sorted(filter(None, names), key=len, reverse=True):
                text = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", "this run", text)
        title = "Agreement" if self.session.blind else f"Agreement: {self.run_path.name}"
        self.app.push_screen(TextDialog(title, text, markdown=True))

    def action_leave(self) -> None:
        """Back to the previous screen (labels are already on disk)."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.exit()

    @on(ReviewQueue.Chosen)
    async def _chosen(self, message: ReviewQueue.Chosen) -> None:
        if message.position != self.pos:
            self.pinned = None
        self.pos = message.position
        await self._show()
