"""A PDF cut into passages: sections (long ones in chunks), algorithm boxes, references left out."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from helpers.suggest_fixture import METHODS, write_paper
from lmrbench.authoring.suggest.paper_passages import is_heading, paper_title, pdf_passages
from lmrbench.errors import LmrError


def test_a_paper_gives_its_sections_and_its_algorithm_box(tmp_path: Path):
    pdf = write_paper(METHODS[1], tmp_path / "paper.pdf")
    passages = pdf_passages(pdf)
    titles = [p.title for p in passages]
    assert titles[1:5] == ["Abstract", "1 Introduction", "2 Related Work", "3 Method"]
    method = passages[4]
    assert method.page == 1 and "π_ref" in method.text and "σ" in method.text
    algo = next(p for p in passages if p.kind == "algorithm")
    assert algo.title == "Algorithm 1 Preference optimization step" and algo.page == 2
    assert "References" not in titles and not any("Kingma" in p.text for p in passages)
    assert paper_title(pdf) == METHODS[1].title


def test_headings_are_told_from_sentences():
    assert is_heading("3.2 Contrastive objective") and is_heading("Abstract") and is_heading("A.1 Proofs")
    assert not is_heading("3 methods are compared in Table 2.")
    assert not is_heading("The loss is minimised over the whole training set of every model")
    assert is_heading("B Additional results") and not is_heading("A Simple Framework for Contrastive Learning of Views")


def test_a_long_section_is_cut_into_chunks(tmp_path: Path):
    doc = pymupdf.open()
    page = doc.new_page()
    words = " ".join(f"word{i}" for i in range(400))
    page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), "2 Method\n" + words, fontsize=7)
    doc.save(tmp_path / "long.pdf")
    passages = pdf_passages(tmp_path / "long.pdf")
    assert len(passages) >= 2 and {p.title for p in passages} == {"2 Method"}
    assert " ".join(p.text for p in passages) == words


def test_a_file_that_is_not_a_pdf_is_named(tmp_path: Path):
    bad = tmp_path / "paper.pdf"
    bad.write_text("not a pdf")
    with pytest.raises(LmrError, match="not a PDF") as err:
        pdf_passages(bad)
    assert str(bad) in str(err.value)
