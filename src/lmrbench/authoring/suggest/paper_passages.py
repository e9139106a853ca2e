"""A paper cut into passages a function can be matched with: its sections (long ones in chunks), each algorithm box
on its own, the references left out.

Read with PyMuPDF's text blocks (``page.get_text("blocks")``): a block whose first line looks like a heading
(``3.2 Contrastive objective``, ``Abstract``, ``A.1 Proofs``) starts a section; one that starts with
``Algorithm N`` is an algorithm box. Equations stay in the passage around them: their symbols count as words
(``suggest_terms`` names ``σ`` ``sigma``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pymupdf

from lmrbench.authoring.task.paper import check_pdf
from lmrbench.errors import LmrError

PassageKind = Literal["section", "algorithm"]
MAX_WORDS = 160
"""A section's text is cut into passages of about this many words (at line boundaries)."""

_NAMED = (
    "abstract|introduction|related work|background|preliminaries|method|methods|methodology|approach|model|"
    "experiments|experimental setup|results|evaluation|analysis|discussion|limitations|conclusion|conclusions|"
    "references|bibliography|acknowledgments|acknowledgements|appendix"
)
_HEADING = re.compile(
    rf"^(?:(?:\d+(?:\.\d+)*|[A-H](?:\.\d+)*)\.?\s+[A-Z][^.!?=]{{1,80}}|(?:{_NAMED}))$", re.IGNORECASE
)
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*|[A-H](?:\.\d+)*)\.?\s+[A-Z]")
_ALGORITHM = re.compile(r"^algorithm\s+\d+\b", re.IGNORECASE)
_SKIPPED = re.compile(r"^(?:\d+\.?\s+)?(?:references|bibliography|acknowledge?ments)$", re.IGNORECASE)


@dataclass(frozen=True)
class Passage:
    """A piece of the paper: where it is and what it says."""

    page: int
    """The page it starts on (1-based)."""
    title: str
    """The heading of its section (``3.2 Contrastive objective``) or the algorithm's first line."""
    text: str
    kind: PassageKind

    @property
    def label(self) -> str:
        """``p. 3, 3.2 Contrastive objective``: where a person finds it."""
        return f"p. {self.page}, {self.title}"


def is_heading(line: str) -> bool:
    """True for a section heading: a numbered title (``3.2 Loss``, ``A.1 Proofs``) or a usual section name."""
    line = line.strip()
    if not line or len(line) > 90 or line.endswith((".", ",", ":")):
        return False
    if not _HEADING.match(line):
        return False
    if re.match(r"^[A-H]\s", line):  # an appendix (``B Proofs``), or a sentence that starts with "A"
        return len(line.split()) <= 5
    return bool(_NUMBERED.match(line)) or len(line.split()) <= 3


class _Builder:
    """Blocks in reading order in, passages out."""

    def __init__(self) -> None:
        self.passages: list[Passage] = []
        self.title = "Title"
        self.page = 1
        self.lines: list[str] = []
        self.words = 0
        self.skipping = False

    def flush(self) -> None:
        text = " ".join(ln.strip() for ln in self.lines if ln.strip())
        if text and not self.skipping:
            self.passages.append(Passage(self.page, self.title, text, "section"))
        self.lines, self.words = [], 0

    def block(self, page: int, text: str) -> None:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines:
            return
        first = lines[0].strip()
        if _ALGORITHM.match(first):
            self.flush()
            self.passages.append(Passage(page, first, " ".join(ln.strip() for ln in lines), "algorithm"))
            return
        if is_heading(first):
            self.flush()
            self.title, self.page = first, page
            self.skipping = bool(_SKIPPED.match(first))
            lines = lines[1:]
        for line in lines:
            if not self.lines:
                self.page = page
            self.lines.append(line)
            self.words += len(line.split())
            if self.words >= MAX_WORDS:
                self.flush()


def pdf_passages(pdf: Path) -> list[Passage]:
    """The passages of a PDF paper, in reading order; LmrError naming the file when it is not a readable PDF."""
    pdf = Path(pdf)
    check_pdf(pdf)
    builder = _Builder()
    try:
        with pymupdf.open(pdf, filetype="pdf") as doc:
            for number, page in enumerate(doc, start=1):
                for block in page.get_text("blocks", sort=False):
                    if block[6] == 0:  # a text block (1 is an image)
                        builder.block(number, str(block[4]))
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise LmrError(f"not a readable PDF: {exc}", pdf) from None
    builder.flush()
    if not builder.passages:
        raise LmrError("the PDF holds no text (a scanned paper needs OCR first)", pdf)
    return builder.passages


def paper_title(pdf: Path) -> str:
    """The paper's title: the PDF's metadata title, else the first line of its first page ('' when unreadable)."""
    try:
        with pymupdf.open(Path(pdf), filetype="pdf") as doc:
            title = str((doc.metadata or {}).get("title") or "").strip()
            if not title and len(doc):
                lines = [ln.strip() for ln in doc[0].get_text().splitlines() if ln.strip()]
                title = lines[0] if lines else ""
    except (pymupdf.FileDataError, RuntimeError, ValueError):
        return ""
    return title[:200]
