"""The nine task categories of the LMR-Bench paper, and the mapping from the free text real files use."""

from __future__ import annotations

import re
from enum import StrEnum


class Category(StrEnum):
    """The paper's nine categories (Table 1)."""

    FEATURE_LEARNING = "Feature Learning & Representation"
    ARCHITECTURES = "Neural Network Architectures"
    PROMPTING = "Prompt Engineering & Instruction Tuning"
    INFORMATION_EXTRACTION = "Information Extraction"
    DATA_AUGMENTATION = "Data Augmentation"
    TRAINING_OBJECTIVES = "Training Objectives & Optimization"
    DECODING = "Decoding & Search Strategies"
    EVALUATION_METRICS = "Evaluation Metrics"
    INTERPRETABILITY = "Interpretability & Explainability"


# Keyword stems checked in order; the first category with a match wins.
_KEYWORDS: list[tuple[Category, tuple[str, ...]]] = [
    (Category.TRAINING_OBJECTIVES, ("training objective", "optimi", "loss", "objective", "regulari")),
    (Category.EVALUATION_METRICS, ("evaluation", "metric", "benchmark", "score")),
    (Category.DATA_AUGMENTATION, ("augment", "data generation", "synthetic data")),
    (Category.INFORMATION_EXTRACTION, ("information extraction", "extraction", "knowledge", "retriev")),
    (Category.ARCHITECTURES, ("architecture", "module", "layer", "attention", "network")),
    (Category.DECODING, ("decoding", "search", "sampling", "generation strateg")),
    (Category.PROMPTING, ("prompt", "instruction", "in-context")),
    (Category.INTERPRETABILITY, ("interpretab", "explainab", "probing", "attribution")),
    (Category.FEATURE_LEARNING, ("feature", "representation", "embedding", "contrastive")),
]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\band\b", "&", text).strip().lower())


def category_from_text(text: str | None) -> Category | None:
    """Map a category as written in a real info.json onto one of the nine, or None when it says nothing.

    Exact names (any case, '&' or 'and') win; otherwise the first keyword that appears decides.
    """
    if not text or not text.strip():
        return None
    norm = _norm(text)
    for cat in Category:
        if _norm(cat.value) == norm or norm.startswith(_norm(cat.value)):
            return cat
    low = text.lower()
    for cat, words in _KEYWORDS:
        if any(w in low for w in words):
            return cat
    return None


def parse_category(text: str) -> Category:
    """Parse a category given by a user (CLI, TUI): one of the nine or an unambiguous alias; else ValueError."""
    cat = category_from_text(text)
    if cat is None:
        names = "; ".join(c.value for c in Category)
        raise ValueError(f"unknown category {text!r}; use one of: {names}")
    return cat
