"""The paper: a PDF copied into the repository folder and its text per page in paper.json (as the official tooling)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pymupdf

from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text

PAPER_PDF = "paper.pdf"
PAPER_JSON = "paper.json"


def check_pdf(pdf: Path) -> None:
    """LmrError unless ``pdf`` is a file that starts as a PDF does (``%PDF-``): PyMuPDF opens text files too."""
    pdf = Path(pdf)
    if not pdf.is_file():
        raise LmrError("no such PDF file", pdf)
    with open(pdf, "rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise LmrError("not a PDF file (it does not start with %PDF-)", pdf)


def paper_pages(pdf: Path) -> dict[str, str]:
    """The text of each page, keyed "1", "2", ... as in the official paper.json files."""
    pdf = Path(pdf)
    check_pdf(pdf)
    try:
        with pymupdf.open(pdf, filetype="pdf") as doc:
            return {str(i + 1): page.get_text() for i, page in enumerate(doc)}
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise LmrError(f"not a readable PDF: {exc}", pdf) from None


def write_paper(pdf: Path, repo_dir: Path) -> dict[str, str]:
    """Copy ``pdf`` to ``repo_dir/paper.pdf`` and write ``repo_dir/paper.json``; return the pages."""
    pages = paper_pages(pdf)
    if Path(pdf).resolve() != (Path(repo_dir) / PAPER_PDF).resolve():
        tmp = Path(repo_dir) / f".{PAPER_PDF}.tmp"
        shutil.copyfile(pdf, tmp)
        tmp.replace(Path(repo_dir) / PAPER_PDF)
    # As the official files: two-space indent, non-ASCII characters kept as they are.
    atomic_write_text(Path(repo_dir) / PAPER_JSON, json.dumps(pages, indent=2, ensure_ascii=False))
    return pages


def write_empty_paper(repo_dir: Path) -> None:
    """Write ``repo_dir/paper.json`` as ``{}`` (no paper): the official generator opens it for every task."""
    target = Path(repo_dir) / PAPER_JSON
    if not target.exists():
        atomic_write_text(target, "{}")
