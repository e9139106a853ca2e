"""The panes of the new-task flow that are only a layout: source, mask, paper, validate, save, and the switcher
that shows one step's pane at a time."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, ContentSwitcher, Input, Label, Select, TextArea

from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.tui.widgets.code_view import CodeView
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.function_picker import FunctionPicker
from lmrbench.tui.widgets.metadata_form import MetadataForm
from lmrbench.tui.widgets.paper_view import PaperView
from lmrbench.tui.widgets.task_tests import TaskTests
from lmrbench.tui.widgets.validation_table import ValidationTable


class SourcePane(Vertical):
    """Step 1: the repository and the commit."""

    DEFAULT_CSS = """
    SourcePane #source, SourcePane #commit { width: 1fr; }
    """

    def __init__(self, source: str, *, id: str) -> None:
        super().__init__(id=id)
        self.source = source

    def compose(self) -> ComposeResult:
        yield Label("Repository: a git URL or a local folder", classes="pane-title")
        yield Input(self.source, placeholder="https://… or /path/to/repo", id="source", select_on_focus=False)
        yield Input(placeholder="commit (default: HEAD)", id="commit", select_on_focus=False)
        with Horizontal(classes="row"):
            yield Button("Clone and index (ctrl+g)", id="clone", variant="primary")
        yield Label("", id="source-status", classes="hint", markup=False)


class MaskPane(Vertical):
    """Step 3: the mask style and the diff it makes."""

    DEFAULT_CSS = """
    MaskPane #mask-style { width: 30; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Label("Mask style ", classes="pane-title")
            yield Select(
                [(s.value, s.value) for s in MaskStyle], value=MaskStyle.TODO_RAISE.value,
                allow_blank=False, id="mask-style",
            )
        yield Label("", id="mask-functions", classes="hint", markup=False)
        yield DiffView(id="diff")


class PaperPane(Vertical):
    """Step 4: the paper beside the instruction the model will read."""

    DEFAULT_CSS = """
    PaperPane #pdf { width: 1fr; }
    PaperPane #paper { width: 1fr; }
    PaperPane #instruction-pane { width: 1fr; border-left: solid $primary-darken-2; }
    PaperPane #instruction { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Input(placeholder="paper PDF path (optional)", id="pdf", select_on_focus=False)
            yield Button("Load", id="load-pdf")
        with Horizontal(id="paper-split"):
            yield PaperView(id="paper")
            with Vertical(id="instruction-pane"):
                yield Label("Instruction (shown to the model)", classes="pane-title")
                yield TextArea("", id="instruction", soft_wrap=True)


class ValidatePane(Vertical):
    """Step 7: build and validate the draft task."""

    def compose(self) -> ComposeResult:
        yield Label("Build the task's environment, then validate it", classes="pane-title")
        with Horizontal(classes="row"):
            yield Button("Build & validate (ctrl+g)", id="validate", variant="primary")
        yield Label("", id="validate-summary", classes="hint", markup=False)
        yield ValidationTable(id="validation")


class SavePane(Vertical):
    """Step 8: what is missing, and Save or Cancel."""

    def compose(self) -> ComposeResult:
        yield Label("Save", classes="pane-title")
        yield Label("", id="save-summary", classes="hint", markup=False)
        with Horizontal(classes="row"):
            yield Button("Save (ctrl+s)", id="save", variant="success")
            yield Button("Cancel (esc)", id="cancel", variant="error")


class StepPanes(ContentSwitcher):
    """Each step's pane (``step-<key>``), one shown at a time; starts on the source."""

    def __init__(self, source: str, *, taken: set[str], id: str) -> None:
        super().__init__(initial="step-source", id=id)
        self.source = source
        self.taken = taken

    def compose(self) -> ComposeResult:
        yield SourcePane(self.source, id="step-source")
        with Horizontal(id="step-function"):
            yield FunctionPicker(id="picker")
            yield CodeView(id="code")
        yield MaskPane(id="step-mask")
        yield PaperPane(id="step-paper")
        with Vertical(id="step-metadata"):
            yield MetadataForm(id="metadata", taken=self.taken)
        with Vertical(id="step-tests"):
            yield TaskTests(id="tests")
        yield ValidatePane(id="step-validate")
        yield SavePane(id="step-save")
