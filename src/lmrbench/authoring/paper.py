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


def paper_pages(pdf: Path) -> dict[str, str]:
    """The text of each page, keyed "1", "2", ... as in the official paper.json files."""
    pdf = Path(pdf)
    if not pdf.is_file():
        raise LmrError("no such PDF file", pdf)
    try:
        with pymupdf.open(pdf) as doc:
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
