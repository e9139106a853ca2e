"""The human label of an item that several annotators labelled: the majority, or on a tie the median."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable

from lmrbench.benchmark.pipeline.rundir import RunDir, speaks_of_current

RULE = (
    "Human consensus per item: the majority label of its annotators; on a tie, the median label "
    "(the lower middle value for an even count)."
)


def consensus(scores: Iterable[int]) -> int | None:
    """The majority score; on a tie the median (lower middle value for an even count); None for no score."""
    values = sorted(scores)
    if not values:
        return None
    counts = Counter(values).most_common()
    if len(counts) == 1 or counts[0][1] > counts[1][1]:
        return counts[0][0]
    return int(statistics.median_low(values))


def run_consensus(run: RunDir) -> dict[tuple[str, int], int]:
    """(task, impl) -> consensus score (1-3) of the current labels of a run (labels of a changed candidate skipped)."""
    cands = {(c.task, c.impl): c for c in run.candidates()}
    scores: dict[tuple[str, int], list[int]] = defaultdict(list)
    for lab in run.labels():
        key = (lab.task, lab.impl)
        if speaks_of_current(cands, key, lab.candidate_digest):
            scores[key].append(lab.label.score)
    return {key: s for key, values in scores.items() if (s := consensus(values)) is not None}
