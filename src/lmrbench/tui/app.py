"""The app shell: the first screen, global bindings, the command palette, the stylesheet."""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual._context import active_message_pump
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button

from lmrbench.errors import LmrError
from lmrbench.tui.commands import ScreenActions
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.dialogs.help import HelpScreen
from lmrbench.tui.dialogs.open_review import OpenReviewDialog
from lmrbench.tui.messages import RunAction
from lmrbench.tui.screens.review import ReviewScreen
from lmrbench.tui.screens.taskset import TaskSetScreen

if TYPE_CHECKING:
    from lmrbench.core.sandbox import SandboxKind


class LmrApp(App[None]):
    """lmrbench's authoring app over one task set folder."""

    CSS_PATH = "app.tcss"
    TITLE = "lmrbench"
    COMMANDS = App.COMMANDS | {ScreenActions}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", show=False,
                tooltip="Leave the app (asks first when work would be lost)"),
        Binding("f1,question_mark", "help", "Help", id="app.help", tooltip="The keys and what this screen does"),
        Binding("ctrl+f", "toggle_maximize", "Full size", id="app.maximize", show=False,
                tooltip="Show the focused panel on the whole screen (ctrl+f or esc: back)"),
        Binding(
            "ctrl+r", "review", "Review labels", id="app.review", show=False,
            tooltip="Label a run's candidates 1-3 (human evaluation)",
        ),
    ]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-roomy"), (45, "-tall")]
    """Screen classes by the terminal's height: below 36 rows the new-task flow's log yields to what a step is for."""
    SCREENSHOTS = ".lmrbench/screenshots"
    """Where the palette's Screenshot saves, inside the task set folder."""
    ERROR_LOG = ".lmrbench/app-errors.log"
    """Where the whole traceback of an error that a screen or widget did not handle is kept, in the task set."""

    def __init__(
        self, bench_dir: Path, *, sandbox: SandboxKind | None = None, runs: list[Path] | None = None,
        review: Path | None = None, annotator: str | None = None, blind: bool = True, created: bool = False,
    ) -> None:
        super().__init__()
        self.created = created
        """The task set folder did not exist: made empty now (a mistyped path must not pass in silence)."""
        self.bench_dir = bench_dir
        self.sandbox_kind = sandbox
        self.runs = runs or []
        self.sub_title = str(bench_dir)
        self.review_run = review
        self.annotator = annotator
        self.blind = blind

    def on_mount(self) -> None:
        """Say when the task set was made just now; with run folders given, open their summary over the task set."""
        if self.created:
            self.notify(f"{self.bench_dir} did not exist: it is a new, empty task set (ctrl+q and check the path if "
                        "you meant another)", title="New task set", severity="warning", timeout=15)
        if self.runs:
            from lmrbench.tui.screens.run_summary import RunSummaryScreen

            self.push_screen(RunSummaryScreen(self.runs))
        if self.review_run is not None:
            self.push_screen(ReviewScreen(self.bench_dir, self.review_run, self.annotator, blind=self.blind))

    def action_review(self) -> None:
        """Ask for a run folder and an annotator, then open the review screen."""
        from lmrbench.benchmark.labels.review import default_annotator

        def opened(answer: tuple[Path, str] | None) -> None:
            if answer is not None:
                self.push_screen(ReviewScreen(self.bench_dir, answer[0], answer[1] or None, blind=self.blind))

        self.push_screen(OpenReviewDialog(self.annotator or default_annotator()), opened)

    def get_default_screen(self) -> TaskSetScreen:
        """The task set is the app's first screen."""
        return TaskSetScreen(self.bench_dir, sandbox=self.sandbox_kind)

    def unsaved_work(self) -> list[str]:
        """What quitting now would lose, from every screen that can say (``unsaved_work()``)."""
        out = []
        for screen in self.screen_stack:
            ask = getattr(screen, "unsaved_work", None)
            lost = ask() if callable(ask) else None
            if lost:
                out.append(lost)
        return out

    async def action_quit(self) -> None:
        """Quit; asks first when a draft, unsaved edits or running work would be lost."""
        lost = self.unsaved_work()
        if not lost or isinstance(self.screen, ConfirmDialog):
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(ConfirmDialog(f"Quit and lose {'; '.join(lost)}?", yes="Quit"), answered)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification of the app (a widget's ``notify`` ends here) shows its text as it is: the text holds
        paths, instructions and errors, where Textual's markup ate "[i]" and "[plots]" and raised on "[/]"."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def _handle_exception(self, error: Exception) -> None:
        """An error a screen or widget did not handle is a message, not the end of the session: its traceback goes
        to ``ERROR_LOG``, the author reads one line, and a screen whose own handler failed is closed. Errors while
        the app starts, or in the app itself, still end it (there is nothing to go back to)."""
        pump = active_message_pump.get(None)
        if pump is None or pump is self or not self.is_running or len(self.screen_stack) == 0:
            super()._handle_exception(error)
            return
        where = type(pump).__name__
        log = self.bench_dir / self.ERROR_LOG
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as fh:
                fh.write(f"--- {where}\n" + "".join(traceback.format_exception(error)))
            said = f"; the whole error is in {log}"
        except OSError:
            said = ""
        closed = ""
        if isinstance(pump, Screen) and pump is self.screen and len(self.screen_stack) > 1:
            self.pop_screen()
            closed = "; the screen was closed"
        elif isinstance(pump, Widget):
            closed = f"; {where} stopped working (esc and open the screen again)"
            # its queue is no longer read: keys sent to it would be lost, so it gives up the focus and takes no more
            if self.focused is not None and (self.focused is pump or pump in self.focused.ancestors):
                self.set_focus(None)
            pump.can_focus = pump.can_focus_children = False
        self.notify(f"{where}: {type(error).__name__}: {error}{closed}{said}", title="Something went wrong",
                    severity="error", timeout=30)
        if self.is_headless and self._exception is None:
            self._exception = error  # a test run still fails on it when the test ends

    SMALLEST = (80, 24)
    """The smallest terminal the screens are laid out for; below it the app says so."""
    _too_small = False

    def on_resize(self, event: events.Resize) -> None:
        """Below 80x24 say once (until the terminal is large enough again) that fields and keys will be cut."""
        width, height = event.size
        small = width < self.SMALLEST[0] or height < self.SMALLEST[1]
        if small and not self._too_small:
            self.notify(f"this terminal is {width}x{height}: lmrbench is laid out for {self.SMALLEST[0]}x"
                        f"{self.SMALLEST[1]} or more, so fields and keys are cut here; enlarge the window",
                        title="Terminal too small", severity="warning", timeout=20)
        self._too_small = small

    def on_key(self, event: events.Key) -> None:
        """Text typed where no widget takes text (a button, a list) is never lost in silence: say where it went."""
        focused = self.focused
        if focused is None or not event.is_printable or event.character in (None, " "):
            return
        if isinstance(focused, Button):
            self.notify(f"{event.character!r} went to the button {str(focused.label)!r}, which takes no text: "
                        "tab (or shift+tab) to a field", title="Not typed", severity="warning", timeout=5)

    def action_help(self) -> None:
        """Show the keys of the current screen and what it is for."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_maximize(self) -> None:
        """Show the focused panel (paper, log, code, instruction) on the whole screen, or bring the layout back."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
        elif screen.focused is None or not screen.maximize(screen.focused):
            self.notify("focus a panel first (tab), then ctrl+f shows it whole", title="Full size")

    def action_help_quit(self) -> None:
        """ctrl+c copies in a text field and quits nothing: say which keys quit and stop."""
        self.notify("ctrl+q quits the app (it asks first when work would be lost); ctrl+t stops running work; "
                    "ctrl+c copies the selected text", title="ctrl+c does not quit")

    def action_save_screenshot(self) -> None:
        """Save an SVG of the screen into the task set's screenshot folder and say where."""
        folder = self.bench_dir / self.SCREENSHOTS
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = self.save_screenshot(path=str(folder))
        except OSError as exc:
            self.notify(f"{folder}: {exc.strerror}", title="No screenshot", severity="error")
            return
        self.notify(path, title="Screenshot saved")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands, with a Screenshot that saves where the author can find it, and without Textual's
        Keys panel (F1 lists the keys whole; the panel squeezed an 80-column screen and cut its footer)."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Screenshot", "Keys"):
                yield command
        yield SystemCommand(
            "Screenshot", f"Save an SVG of the screen in {self.SCREENSHOTS}/ of the task set",
            lambda: self.set_timer(0.1, self.action_save_screenshot),
        )

    @on(RunAction)
    async def _run_action(self, message: RunAction) -> None:
        await self.run_action(message.action, message.node)


def make_app(
    bench_dir: Path | str,
    *,
    sandbox: SandboxKind | None = None,
    runs: list[Path] | None = None,
    review: Path | str | None = None,
    annotator: str | None = None,
    blind: bool = True,
) -> LmrApp:
    """Build the app for a task set folder (created when missing); used by the CLI and the tests.

    ``sandbox`` picks the environment that builds and validates (docker, local, None: docker if it answers);
    ``runs`` opens the summary of these run folders first; ``review`` opens the review screen of that run
    folder for ``annotator``; ``blind`` False shows the tests' outcome and the judge's verdict before an item is
    labelled (adjudication).
    """
    if sandbox not in (None, "docker", "local"):
        raise LmrError(f"unknown sandbox {sandbox!r}; use docker or local")
    bench = Path(bench_dir).expanduser()
    if bench.exists() and not bench.is_dir():
        raise LmrError("not a folder", bench)
    created = not bench.exists()
    bench.mkdir(parents=True, exist_ok=True)
    run = Path(review).expanduser().resolve() if review is not None else None
    return LmrApp(bench.resolve(), sandbox=sandbox, runs=[Path(r) for r in runs or []], review=run, annotator=annotator,
                  blind=blind, created=created)  # fmt: skip
