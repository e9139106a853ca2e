"""Paper and task metadata, validated inline: each problem is shown under its field as the author types."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Label, Select, SelectionList

from lmrbench.authoring.task.metadata import metadata_problems, retrieval_candidates
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
    ("paper_name", "Paper title", "the paper's title"),
    ("name", "Task folder (N-Name)", "e.g. 7-DPO"),
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
        self.name_note = ""
        """Said under the task folder field when it has no problem (why it cannot change, where it cannot)."""

    def compose(self) -> ComposeResult:
        for key, label, hint in FIELDS:
            yield Label(label, classes="field-label")
            yield Input(placeholder=hint, id=f"md-{key}", select_on_focus=False)
            yield Label("", id=f"md-{key}-error", classes="field-error", markup=False)
        yield Label("Category", classes="field-label")
        choices = [(c.value, c.value) for c in Category]
        yield Select(choices, id="md-category", prompt="choose one of the nine")
        yield Label("", id="md-category-error", classes="field-error", markup=False)
        yield Label("Retrieval context (files given to the model as context)", classes="field-label")
        yield SelectionList[str](id="md-retrieval")

    def set_files(self, files: list[str], chosen: list[str] | None = None) -> None:
        """The repository files the author may pick as retrieval context (test files never are)."""
        sel = self.query_one(SelectionList)
        sel.clear_options()
        sel.add_options([(f, f, f in (chosen or [])) for f in retrieval_candidates(files)])

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
        """Field -> problem, for every field that is not acceptable (the core's rules, as `task new` checks)."""
        cat = self.query_one("#md-category", Select).value
        name = self.query_one("#md-name", Input)
        return metadata_problems(
            name=None if name.disabled else name.value.strip(),
            paper_url=self.query_one("#md-paper_url", Input).value.strip(),
            year=self.query_one("#md-year", Input).value.strip(),
            category="" if cat is Select.NULL else str(cat),
            taken=self.taken,
        )

    def check_fields(self) -> dict[str, str]:
        """Show each field's problem under it; return them."""
        found = self.problems()
        for key in [k for k, _, _ in FIELDS] + ["category"]:
            note = self.name_note if key == "name" else ""
            self.query_one(f"#md-{key}-error", Label).update(found.get(key, "") or note)
        return found

    @on(Input.Changed)
    @on(Select.Changed)
    def _changed(self) -> None:
        self.check_fields()
