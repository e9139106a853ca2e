"""``agreement.json``: how far humans, the LLM judge and the unit tests agree on a set of runs.

Every label is on the paper's scale (1 logically incorrect, 2 logically correct, 3 completely correct). Unit tests
count as a label too: passed = 3, failed or timed out = 1. Rates are fractions (0.625, not 62.5); a statistic
that is undefined (no item, or a kappa whose chance agreement is 1) is null.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Comparison(_Strict):
    """Two raters on the items both rated."""

    n: int = 0
    """Items rated by both."""
    exact: float | None = None
    """Share of items with the same label."""
    cohen_kappa: float | None = None
    """Cohen's kappa (unweighted)."""
    weighted_kappa: float | None = None
    """Cohen's kappa with quadratic weights (a 1-vs-3 disagreement costs four times a 1-vs-2 one)."""
    binary: float | None = None
    """Share of items on which both say "completely correct" (3) or both say it is not."""
    confusion: list[list[int]] = Field(default_factory=lambda: [[0] * 3 for _ in range(3)])
    """3x3 counts: row = first rater's label 1-3, column = second rater's label 1-3."""


class PairAgreement(Comparison):
    """Two annotators on the items both labelled."""

    a: str
    """First annotator."""
    b: str
    """Second annotator."""


class InterAnnotator(_Strict):
    """Agreement between annotators, on items that two or more of them labelled."""

    items: int = 0
    """Items with two or more labels."""
    krippendorff_alpha: float | None = None
    """Krippendorff's alpha, ordinal, over every annotator and every such item."""
    pairs: list[PairAgreement] = Field(default_factory=list)
    """Every pair of annotators that share an item."""


class SliceAgreement(_Strict):
    """The three comparisons on one slice of the items (a model, or a category)."""

    human_vs_judge: Comparison = Field(default_factory=Comparison)
    """Human consensus against the judge."""
    human_vs_tests: Comparison = Field(default_factory=Comparison)
    """Human consensus against the unit tests."""
    judge_vs_tests: Comparison = Field(default_factory=Comparison)
    """The judge against the unit tests."""


class AgreementReport(SliceAgreement):
    """The whole agreement report."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    method: str
    """How the human consensus of an item is formed, and how unit tests become a label."""
    judges: dict[str, str] = Field(default_factory=dict)
    """Run label -> the judge folder whose verdicts were compared."""
    items: int = 0
    """Candidates with at least one current human label."""
    labels: int = 0
    """Current human labels counted."""
    stale_labels: int = 0
    """Labels left out because their candidate changed since."""
    annotators: dict[str, int] = Field(default_factory=dict)
    """Annotator -> labels counted."""
    inter_annotator: InterAnnotator = Field(default_factory=InterAnnotator)
    """Agreement between annotators."""
    by_model: dict[str, SliceAgreement] = Field(default_factory=dict)
    """Run label (model or agent) -> its comparisons."""
    by_category: dict[str, SliceAgreement] = Field(default_factory=dict)
    """Category -> its comparisons."""
