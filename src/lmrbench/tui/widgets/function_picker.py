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

from lmrbench.core.source.index import FunctionInfo, function_refs

SHOWN = 100  # rows in the list at once; the count says how many more matched


def _pattern(query: str) -> re.Pattern[str]:
    """Letters of ``query`` in order, with no backtracking: ``abc`` -> ``a[^b]*b[^c]*c``."""
    parts = [re.escape(query[0])]
    for c in query[1:]:
        parts.append(f"[^{re.escape(c)}]*{re.escape(c)}")
    return re.compile("".join(parts))


class FuzzyIndex:
    """Fuzzy search over ``file::qualname``; a query extending the previous one searches only its matches."""

    def __init__(self, functions: list[FunctionInfo]) -> None:
        self.functions = functions
        self.refs = function_refs(functions)
        """The task spec's spelling of each function: ``file::Class.name``, ``@line`` added for a name defined
        twice in its file."""
        self.ref_of = {id(f): ref for f, ref in zip(functions, self.refs, strict=True)}
        self._names = [f.qualname.lower() for f in functions]
        self._keys = [ref.lower() for ref in self.refs]
        self._last: tuple[str, str | None, list[int]] = ("", None, list(range(len(functions))))

    def search(self, query: str, file: str | None = None) -> list[FunctionInfo]:
        """Matches best first: inside the qualified name before needing the path, tighter before looser."""
        query = "".join(query.split()).lower()
        last_query, last_file, last_hits = self._last
        if file == last_file and query.startswith(last_query):
            pool = last_hits
        else:
            pool = [
                i for i, f in enumerate(self.functions)
                if file is None or f.file == file or f.file.startswith(file + "/")
            ]
        if not query:
            self._last = (query, file, pool)
            return [self.functions[i] for i in pool]
        pattern = _pattern(query)
        scored: list[tuple[int, int, int, int]] = []
        for i in pool:
            m = pattern.search(self._names[i])
            if m is not None:
                scored.append((0, m.end() - m.start(), len(self._names[i]), i))
                continue
            m = pattern.search(self._keys[i])
            if m is not None:
                scored.append((1, m.end() - m.start(), len(self._keys[i]), i))
        self._last = (query, file, sorted(s[3] for s in scored))
        scored.sort()
        return [self.functions[s[3]] for s in scored]


class FunctionPicker(Widget):
    """Tree of files | search box over a list of functions. Posts Highlighted and Toggled."""

    DEFAULT_CSS = """
    FunctionPicker { height: 1fr; }
    FunctionPicker Tree { width: 26; border-right: solid $primary-darken-2; }
    FunctionPicker #fp-right { width: 1fr; }
    FunctionPicker OptionList { height: 1fr; border: none; text-wrap: nowrap; text-overflow: ellipsis; }
    FunctionPicker #fp-count { color: $text-muted; height: 1; margin: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
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
        self.index = FuzzyIndex([])
        self.selected: list[str] = []
        self.file_filter: str | None = None
        self._shown: list[FunctionInfo] = []
        self._status = ""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Tree("repository", id="fp-tree")
            with Vertical(id="fp-right"):
                yield Input(placeholder="fuzzy search: file::Class.name", id="fp-search", select_on_focus=False)
                yield OptionList(id="fp-list")
                yield Label("", id="fp-count", markup=False)

    def set_functions(self, functions: list[FunctionInfo], selected: list[str] | None = None) -> None:
        """Show the functions of a freshly indexed repository."""
        self.functions = functions
        self.index = FuzzyIndex(functions)
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

    def key_of(self, fn: FunctionInfo) -> str:
        """The reference of a listed function (``file::qualname``, or ``file::qualname@line``)."""
        return self.index.ref_of[id(fn)]

    def highlight(self, key: str) -> None:
        """Put the list's cursor on a shown function (its reference): its code shows beside it."""
        shown = [self.key_of(fn) for fn in self._shown]
        if key in shown:
            self.query_one(OptionList).highlighted = shown.index(key)

    def refilter(self) -> None:
        """Apply the search text and the file chosen in the tree."""
        query = self.query_one("#fp-search", Input).value
        found = self.index.search(query, self.file_filter)
        self._shown = found[:SHOWN]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(self._prompt(fn)) for fn in self._shown])  # ids: a name may be defined twice
        where = f" in {self.file_filter}" if self.file_filter else ""
        more = f" (first {SHOWN} shown)" if len(found) > SHOWN else ""
        self._status = f"{len(found)} of {len(self.functions)} functions{where}{more}"
        self._show_count()

    def _prompt(self, fn: FunctionInfo) -> Text:
        mark = "✔ " if self.key_of(fn) in self.selected else "  "
        text = Text(mark, style="bold green")
        text.append(fn.qualname, style="bold")
        if self.key_of(fn).endswith(f"@{fn.lineno}"):  # a name defined twice in its file: its line tells them apart
            text.append(f"@{fn.lineno}", style="bold yellow")
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
        key = self.key_of(fn)
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
