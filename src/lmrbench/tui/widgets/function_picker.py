"""The repository's file tree and a fuzzy-searchable list of its functions: goal functions are ticked."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Label, OptionList, Tree
from textual.widgets.option_list import Option

from lmrbench.authoring.index import FunctionInfo

SHOWN = 300  # rows in the list at once; the count says how many more matched


def key_of(fn: FunctionInfo) -> str:
    """The task spec's spelling of a function: ``file::Class.name``."""
    return f"{fn.file}::{fn.qualname}"


def fuzzy_filter(functions: list[FunctionInfo], query: str, file: str | None = None) -> list[FunctionInfo]:
    """Functions whose ``file::qualname`` holds the query's letters in order, best first.

    A match inside the qualified name beats one that needs the path; a tighter match beats a looser one.
    """
    pool = [f for f in functions if file is None or f.file == file or f.file.startswith(file + "/")]
    query = "".join(query.split())
    if not query:
        return pool
    pattern = re.compile(".*?".join(f"({re.escape(c)})" for c in query), re.IGNORECASE)
    scored: list[tuple[tuple[int, int, int], FunctionInfo]] = []
    for fn in pool:
        m = pattern.search(fn.qualname)
        if m is not None:
            scored.append(((0, m.end() - m.start(), len(fn.qualname)), fn))
            continue
        m = pattern.search(key_of(fn))
        if m is not None:
            scored.append(((1, m.end() - m.start(), len(fn.file)), fn))
    scored.sort(key=lambda s: s[0])
    return [fn for _, fn in scored]


class FunctionPicker(Widget):
    """Tree of files | search box over a list of functions. Posts Highlighted and Toggled."""

    DEFAULT_CSS = """
    FunctionPicker { height: 1fr; }
    FunctionPicker Tree { width: 32; border-right: solid $primary-darken-2; }
    FunctionPicker #fp-right { width: 1fr; }
    FunctionPicker OptionList { height: 1fr; border: none; }
    FunctionPicker #fp-count { color: $text-muted; height: 1; margin: 0 1; }
    """

    @dataclass
    class Highlighted(Message):
        """The cursor is on a function: show its code."""

        function: FunctionInfo

    @dataclass
    class Toggled(Message):
        """The set of goal functions changed."""

        selected: tuple[str, ...]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.functions: list[FunctionInfo] = []
        self.selected: list[str] = []
        self.file_filter: str | None = None
        self._shown: list[FunctionInfo] = []
        self._status = ""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Tree("repository", id="fp-tree")
            with Vertical(id="fp-right"):
                yield Input(placeholder="fuzzy search: file::Class.name", id="fp-search")
                yield OptionList(id="fp-list")
                yield Label("", id="fp-count")

    def set_functions(self, functions: list[FunctionInfo], selected: list[str] | None = None) -> None:
        """Show the functions of a freshly indexed repository."""
        self.functions = functions
        self.selected = list(selected or [])
        self.file_filter = None
        tree = self.query_one(Tree)
        tree.clear()
        tree.root.data = None
        nodes: dict[str, object] = {"": tree.root}
        for file in sorted({f.file for f in functions}):
            parts = file.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in nodes:
                    parent = nodes["/".join(parts[: i - 1])]
                    nodes[d] = parent.add(parts[i - 1] + "/", data=d)  # type: ignore[attr-defined]
            parent = nodes["/".join(parts[:-1])]
            parent.add_leaf(parts[-1], data=file)  # type: ignore[attr-defined]
        tree.root.expand()
        self.refilter()

    def refilter(self) -> None:
        """Apply the search text and the file chosen in the tree."""
        query = self.query_one("#fp-search", Input).value
        found = fuzzy_filter(self.functions, query, self.file_filter)
        self._shown = found[:SHOWN]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(self._prompt(fn), id=key_of(fn)) for fn in self._shown])
        where = f" in {self.file_filter}" if self.file_filter else ""
        more = f" (first {SHOWN} shown)" if len(found) > SHOWN else ""
        self._status = f"{len(found)} of {len(self.functions)} functions{where}{more}"
        self._show_count()

    def _prompt(self, fn: FunctionInfo) -> Text:
        mark = "✔ " if key_of(fn) in self.selected else "  "
        text = Text(mark, style="bold green")
        text.append(fn.qualname, style="bold")
        text.append(f"  {fn.file}:{fn.lineno}", style="dim")
        return text

    @on(Input.Changed, "#fp-search")
    def _search(self) -> None:
        self.refilter()

    @on(Input.Submitted, "#fp-search")
    def _to_list(self) -> None:
        options = self.query_one(OptionList)
        if options.option_count and options.highlighted is None:
            options.highlighted = 0
        options.focus()

    @on(Tree.NodeSelected, "#fp-tree")
    def _tree(self, event: Tree.NodeSelected[str | None]) -> None:
        event.stop()
        self.file_filter = event.node.data
        self.refilter()

    @on(OptionList.OptionHighlighted, "#fp-list")
    def _highlight(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(self._shown[event.option_index]))

    @on(OptionList.OptionSelected, "#fp-list")
    def _toggle(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        fn = self._shown[event.option_index]
        key = key_of(fn)
        if key in self.selected:
            self.selected.remove(key)
        else:
            self.selected.append(key)
        event.option_list.replace_option_prompt_at_index(event.option_index, self._prompt(fn))
        self._show_count()
        self.post_message(self.Toggled(tuple(self.selected)))

    def _show_count(self) -> None:
        self.query_one("#fp-count", Label).update(
            f"{self._status} · {len(self.selected)} selected · enter: select/unselect"
        )
