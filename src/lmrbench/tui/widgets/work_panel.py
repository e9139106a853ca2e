"""A progress bar and a live log for long work; also the core Progress protocol, delivered as messages."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Label, ProgressBar, RichLog


class WorkPanel(Widget):
    """Shows the phase, the progress and the log lines of the work a screen runs in its workers.

    The new-task flow's log yields to the step on short terminals (one line below 36 rows: app.tcss), every log
    grows on tall ones, and ``ctrl+f`` on it shows it whole."""

    DEFAULT_CSS = """
    WorkPanel {
        height: auto;
        border-top: solid $primary-darken-2;
    }
    WorkPanel #work-head { height: 1; }
    WorkPanel #work-label { width: 1fr; margin: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    WorkPanel ProgressBar { width: auto; }
    WorkPanel RichLog { height: 4; background: $surface; }
    WorkPanel.-quiet ProgressBar { display: none; }
    WorkPanel.-idle RichLog { display: none; }
    """

    @dataclass
    class Started(Message):
        """A phase of work began."""

        label: str
        total: int | None

    @dataclass
    class Advanced(Message):
        """Some steps of the phase are done."""

        n: int
        detail: str

    @dataclass
    class Logged(Message):
        """A log line (build output, test output)."""

        line: str

    _phase = ""

    def __init__(self, *, id: str | None = None) -> None:
        # no bar until work starts (an idle bar would move), no log until there is a line: idle, the panel is one line
        super().__init__(id=id, classes="-quiet -idle")

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal

        with Horizontal(id="work-head"):
            yield Label("idle", id="work-label")
            yield ProgressBar(id="work-bar", show_eta=False)
        yield RichLog(id="work-log", max_lines=5000, markup=False, wrap=True)

    def progress(self) -> PanelProgress:
        """A Progress for a core function running in a worker thread."""
        return PanelProgress(self)

    def error(self, text: str) -> None:
        """Show an error line (from the UI thread); the bar goes away, since the work did not finish."""
        self.remove_class("-idle")
        self.query_one(RichLog).write(f"error: {text}")
        self.query_one("#work-label", Label).update(Text.assemble(("error: ", "bold red"), text))
        self.add_class("-quiet")

    def stopped(self, text: str) -> None:
        """The work was cancelled: say so, without a full bar."""
        self.remove_class("-idle")
        self.query_one(RichLog).write(text)
        self.query_one("#work-label", Label).update(Text.assemble((text, "yellow")))
        self.add_class("-quiet")

    def done(self, text: str) -> None:
        """Mark the work finished (from the UI thread); a log with lines gets it too, so an earlier error is not
        the last line it shows."""
        if not self.has_class("-idle"):
            self.query_one(RichLog).write(f"done: {text}")
        bar = self.query_one(ProgressBar)
        total = bar.total or 1
        bar.update(total=total, progress=total)
        self.query_one("#work-label", Label).update(Text(text))

    @on(Started)
    def _started(self, message: Started) -> None:
        self.remove_class("-quiet", "-idle")
        self._phase = message.label
        self.query_one("#work-label", Label).update(Text(message.label))
        self.query_one(ProgressBar).update(total=message.total, progress=0)

    @on(Advanced)
    def _advanced(self, message: Advanced) -> None:
        self.query_one(ProgressBar).advance(message.n)
        if message.detail:
            self.query_one("#work-label", Label).update(Text(f"{self._phase} · {message.detail}"))

    @on(Logged)
    def _logged(self, message: Logged) -> None:
        self.remove_class("-idle")
        self.query_one(RichLog).write(message.line)


class PanelProgress:
    """The core Progress protocol for worker threads: calls become messages to the panel.

    Advances are summed and sent at most every ``interval`` seconds, so thousands of small steps (indexing a
    large repository) cost the UI a few redraws.
    """

    def __init__(self, panel: WorkPanel, interval: float = 0.1) -> None:
        self._panel = panel
        self._interval = interval
        self._lock = threading.Lock()
        self._pending = 0
        self._sent = 0.0

    def start(self, label: str, total: int | None) -> None:
        """A new phase."""
        with self._lock:
            self._pending = 0
            self._sent = time.monotonic()
        self._panel.post_message(WorkPanel.Started(label, total))

    def advance(self, n: int = 1, detail: str = "") -> None:
        """Steps done."""
        with self._lock:
            self._pending += n
            now = time.monotonic()
            if now - self._sent < self._interval:
                return
            n, self._pending, self._sent = self._pending, 0, now
        self._panel.post_message(WorkPanel.Advanced(n, detail))

    def log(self, line: str) -> None:
        """One log line."""
        self._panel.post_message(WorkPanel.Logged(line))
