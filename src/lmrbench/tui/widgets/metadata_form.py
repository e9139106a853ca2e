"""Paper and task metadata, validated inline: each problem is shown under its field as the author types."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Label, Select, SelectionList

from lmrbench.schemas.categories import Category, parse_category


@dataclass
class Metadata:
    """What the form holds."""

    name: str = ""
    paper_name: str = ""
    paper_url: str = ""
    year: int | None = None
    category: str = ""
    retrieval_context: list[str] = field(default_factory=list)


FIELDS = (
    ("name", "Task folder (N-Name)", "e.g. 7-DPO"),
    ("paper_name", "Paper title", "the paper's title"),
    ("paper_url", "Paper URL", "https://arxiv.org/abs/…"),
    ("year", "Year", "e.g. 2023"),
)


class MetadataForm(VerticalScroll):
    """Task name, paper name, URL, year, category (the nine), retrieval context files."""

    DEFAULT_CSS = """
    MetadataForm { height: 1fr; padding: 0 1; }
    MetadataForm Label.field-label { margin-top: 1; text-style: bold; }
    MetadataForm .field-error { color: $error; height: auto; }
    MetadataForm SelectionList { height: 12; }
    """

    def __init__(self, *, taken: set[str] | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.taken = taken or set()

    def compose(self) -> ComposeResult:
        for key, label, hint in FIELDS:
            yield Label(label, classes="field-label")
            yield Input(placeholder=hint, id=f"md-{key}")
            yield Label("", id=f"md-{key}-error", classes="field-error")
        yield Label("Category", classes="field-label")
        choices = [(c.value, c.value) for c in Category]
        yield Select(choices, id="md-category", prompt="choose one of the nine")
        yield Label("", id="md-category-error", classes="field-error")
        yield Label("Retrieval context (files given to the model as context)", classes="field-label")
        yield SelectionList[str](id="md-retrieval")

    def set_files(self, files: list[str], chosen: list[str] | None = None) -> None:
        """The repository files the author may pick as retrieval context."""
        sel = self.query_one(SelectionList)
        sel.clear_options()
        sel.add_options([(f, f, f in (chosen or [])) for f in files])

    def set_values(self, md: Metadata) -> None:
        """Fill the form."""
        for key, _, _ in FIELDS:
            value = getattr(md, key)
            self.query_one(f"#md-{key}", Input).value = "" if value is None else str(value)
        if md.category:
            with contextlib.suppress(ValueError):
                self.query_one("#md-category", Select).value = parse_category(md.category).value
        self.check_fields()

    def values(self) -> Metadata:
        """The form's values (year None when not a number)."""
        text = {key: self.query_one(f"#md-{key}", Input).value.strip() for key, _, _ in FIELDS}
        cat = self.query_one("#md-category", Select).value
        year = text["year"]
        return Metadata(
            name=text["name"],
            paper_name=text["paper_name"],
            paper_url=text["paper_url"],
            year=int(year) if year.isdigit() else None,
            category="" if cat is Select.NULL else str(cat),
            retrieval_context=list(self.query_one(SelectionList).selected),
        )

    def problems(self) -> dict[str, str]:
        """Field -> problem, for every field that is not acceptable."""
        out: dict[str, str] = {}
        name = self.query_one("#md-name", Input).value.strip()
        if not re.fullmatch(r"\d+-[A-Za-z0-9_.-]+", name):
            out["name"] = "must look like N-Name (a number, a dash, letters or digits)"
        elif name in self.taken:
            out["name"] = f"the task set already has a task {name}"
        url = self.query_one("#md-paper_url", Input).value.strip()
        if url and not re.match(r"https?://\S+$", url):
            out["paper_url"] = "must be an http(s) URL"
        year = self.query_one("#md-year", Input).value.strip()
        if year and not (year.isdigit() and 1950 <= int(year) <= 2100):
            out["year"] = "must be a year such as 2023"
        cat = self.query_one("#md-category", Select).value
        if cat is Select.NULL:
            out["category"] = "choose one of the nine categories"
        else:
            try:
                parse_category(str(cat))
            except ValueError as exc:
                out["category"] = str(exc)
        return out

    def check_fields(self) -> dict[str, str]:
        """Show each field's problem under it; return them."""
        found = self.problems()
        for key in [k for k, _, _ in FIELDS] + ["category"]:
            self.query_one(f"#md-{key}-error", Label).update(found.get(key, ""))
        return found

    @on(Input.Changed)
    @on(Select.Changed)
    def _changed(self) -> None:
        self.check_fields()
