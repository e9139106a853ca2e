"""Rank a repository's functions by how much of a paper's method they carry, with BM25 (``rank_bm25``).

Each function is a document: the words of its qualified name (counted twice), its names, docstring, comments and
strings, with code's abbreviations expanded (``suggest_terms``). The paper is the query: every word of its
passages, weighted ``1 + log(count)`` so that the words it repeats (its method's) weigh more without drowning the
rest; words of algorithm boxes count twice. A function's score is the sum over the paper's words of the word's
weight times its BM25 score in the function. The passage a function matches best is the one that scores highest
with the function's words as the query, over a BM25 index of the passages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rank_bm25 import BM25Okapi

from lmrbench.authoring.suggest.paper_passages import Passage
from lmrbench.authoring.suggest.suggest_terms import terms
from lmrbench.authoring.task.metadata import is_test_file
from lmrbench.core.source.index import FunctionInfo

ALGORITHM_WEIGHT = 2.0
"""How much more a word of an algorithm box counts than a word of prose."""
MATCHED_WORDS = 6
"""Shared words shown per candidate."""


@dataclass(frozen=True)
class Ranked:
    """A function, its score against the paper and the passage it matches best."""

    function: FunctionInfo
    score: float
    passage: Passage
    matched: tuple[str, ...]
    """The words it shares with the passage, those that weigh most first."""


def rankable(function: FunctionInfo) -> bool:
    """True for a function a task can be made of: not in a test file, not nested, not a property, an overload
    stub, a coroutine or a dunder other than ``__call__``."""
    if is_test_file(function.file) or function.name.startswith("test_"):
        return False
    if function.is_nested or function.is_property or function.is_overload or function.is_async:
        return False
    return not (function.name.startswith("__") and function.name.endswith("__") and function.name != "__call__")


def function_terms(function: FunctionInfo, lines: list[str]) -> list[str]:
    """The document of one function: its name's words twice, then the words of its source lines."""
    source = "\n".join(lines[function.lineno - 1 : function.end_lineno])
    name = terms(function.qualname.replace(".", " "), expand=True)
    return name + name + terms(source, expand=True)


def _query_weights(passages: list[Passage]) -> dict[str, float]:
    counts: dict[str, float] = {}
    for p in passages:
        factor = ALGORITHM_WEIGHT if p.kind == "algorithm" else 1.0
        for word in terms(p.title + " " + p.text):
            counts[word] = counts.get(word, 0.0) + factor
    return {w: 1.0 + math.log(c) for w, c in counts.items() if c >= 1.0}


def rank_functions(
    root: Path, functions: list[FunctionInfo], passages: list[Passage], *, limit: int | None = None
) -> list[Ranked]:
    """The rankable ``functions`` of the repository at ``root`` that share a word with the paper, best first, each
    with its best passage; the first ``limit`` of them when given."""
    chosen = [f for f in functions if rankable(f)]
    sources: dict[str, list[str]] = {}
    docs: list[list[str]] = []
    for f in chosen:
        if f.file not in sources:
            try:
                sources[f.file] = (Path(root) / f.file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                sources[f.file] = []
        docs.append(function_terms(f, sources[f.file]))
    if not chosen or not passages or not any(docs):
        return []
    weights = _query_weights(passages)
    code_index = BM25Okapi(docs)
    scores = [0.0] * len(chosen)
    vocabulary = set().union(*map(set, docs))
    word_scores: dict[str, list[float]] = {}
    for word, weight in weights.items():
        if word not in vocabulary:
            continue
        per_doc = code_index.get_scores([word])
        word_scores[word] = [float(s) for s in per_doc]
        for i, s in enumerate(per_doc):
            scores[i] += weight * float(s)
    passage_index = BM25Okapi([terms(p.title + " " + p.text) for p in passages])
    order = sorted((i for i in range(len(chosen)) if scores[i] > 0),  # the others share no word with the paper
                   key=lambda i: (-scores[i], chosen[i].file, chosen[i].lineno))
    ranked = []
    for i in order[:limit]:
        query = sorted(set(docs[i]))
        best = max(range(len(passages)), key=passage_index.get_scores(query).__getitem__) if query else 0
        passage_words = set(terms(passages[best].title + " " + passages[best].text))
        shared = sorted(
            (w for w in set(docs[i]) & passage_words if w in word_scores),
            key=lambda w: -weights[w] * word_scores[w][i],
        )
        ranked.append(Ranked(chosen[i], round(scores[i], 3), passages[best], tuple(shared[:MATCHED_WORDS])))
    return ranked
