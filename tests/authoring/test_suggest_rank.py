"""Ranking a repository's functions against a paper: the function the paper describes comes first, whichever of
the six papers is read, and the passage it matches is the paper's method."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.suggest_fixture import METHODS, make_pair, target_ref, write_paper
from lmrbench.authoring.suggest.paper_passages import pdf_passages
from lmrbench.authoring.suggest.suggest_rank import rank_functions
from lmrbench.core.source.index import index_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pair")
    return make_pair(folder, METHODS[0], git=False)[0]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_each_paper_puts_its_own_method_first_in_the_same_repository(repo: Path, tmp_path: Path, method):
    ranked = rank_functions(repo, index_repo(repo), pdf_passages(write_paper(method, tmp_path / "p.pdf")))
    assert ranked[0].function.ref == target_ref(method)
    assert ranked[0].passage.title.startswith(("3 Method", "Algorithm 1"))
    assert ranked[0].score > ranked[1].score
    assert len(ranked[0].matched) >= 3


def test_an_anonymous_target_is_found_from_its_body_alone(tmp_path: Path):
    repo, pdf = make_pair(tmp_path, METHODS[1], git=False, anonymous=True)
    refs = [r.function.ref for r in rank_functions(repo, index_repo(repo), pdf_passages(pdf))]
    assert refs.index(target_ref(METHODS[1], anonymous=True)) < 3


def test_tests_nested_functions_and_dunders_are_not_candidates(repo: Path, tmp_path: Path):
    functions = index_repo(repo)
    assert any(f.qualname == "distillation_loss.log_soft" for f in functions)
    ranked = rank_functions(repo, functions, pdf_passages(write_paper(METHODS[4], tmp_path / "p.pdf")))
    names = {r.function.qualname for r in ranked}
    assert "distillation_loss.log_soft" not in names and "test_accuracy" not in names
    assert "Adam.__init__" not in names and "Adam.step" in names


def test_a_paper_about_nothing_in_the_repository_ranks_nothing(repo: Path, tmp_path: Path):
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 800), "1 Introduction\nZebras graze quietly.")
    doc.save(tmp_path / "zebra.pdf")
    assert rank_functions(repo, index_repo(repo), pdf_passages(tmp_path / "zebra.pdf")) == []
