"""Split the candidates of one or more runs between annotators, with a share labelled by two of them.

The items are shuffled with the seed; the first ``round(overlap * n)`` go to two annotators, the rest to one.
Each item goes to the annotators with the fewest items so far (ties: the pair seen least often, then the
annotators' order), so loads differ by at most one item and the shared items are spread over every pair.
Queues list their items in run order (task, implementation), so a paper's functions come together.
Same runs, annotators, overlap and seed: same queues.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from lmrbench.benchmark.labels.store import check_annotator
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
from lmrbench.errors import LmrError, UsageError
from lmrbench.schemas.run import CandidateStatus, LabelQueue, QueueItem


def reviewable(run: RunDir) -> list[tuple[str, int]]:
    """(task, impl) of every candidate with code, in run order (candidates without code need no review)."""
    return [(c.task, c.impl) for c in run.candidates() if c.status is CandidateStatus.OK]


@dataclass
class Assignment:
    """The queues drawn: per run folder, per annotator."""

    queues: dict[Path, dict[str, LabelQueue]] = field(default_factory=dict)
    items: int = 0
    shared: int = 0

    def load(self) -> Counter[str]:
        """Items per annotator over every run."""
        out: Counter[str] = Counter()
        for per_run in self.queues.values():
            for name, queue in per_run.items():
                out[name] += len(queue.items)
        return out


def assign(run_paths: list[Path], annotators: list[str], *, overlap: float, seed: int = 0) -> Assignment:
    """Draw the queues (nothing is written); LmrError for bad arguments or a run without candidates."""
    names = [check_annotator(a.strip()) for a in annotators if a.strip()]
    if len(set(names)) != len(names):
        raise LmrError(f"an annotator is named twice: {', '.join(names)}")
    if not names:
        raise LmrError("no annotator given")
    if not 0.0 <= overlap <= 1.0:
        raise UsageError(f"--overlap must be between 0 and 1, not {overlap}")
    if overlap > 0 and len(names) < 2:
        raise LmrError("an overlap needs two annotators or more")
    runs = [RunDir(Path(p)) for p in run_paths]
    items: list[tuple[int, str, int]] = []
    for k, run in enumerate(runs):
        run.require_manifest()
        found = reviewable(run)
        if not found:
            raise LmrError("no candidate with code to review in this run", run.path)
        items += [(k, task, impl) for task, impl in found]
    order = list(items)
    random.Random(seed).shuffle(order)
    n_shared = round(overlap * len(order))
    load: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    given: dict[tuple[int, str, int], tuple[str, ...]] = {}
    for pos, item in enumerate(order):
        if pos < n_shared:
            pair = min(
                combinations(names, 2),
                key=lambda p: (load[p[0]] + load[p[1]], max(load[p[0]], load[p[1]]), pairs[p]),
            )
            pairs[pair] += 1
            given[item] = pair
        else:
            given[item] = (min(names, key=lambda a: load[a]),)
        for a in given[item]:
            load[a] += 1
    out = Assignment(items=len(items), shared=n_shared)
    for k, run in enumerate(runs):
        per_run: dict[str, LabelQueue] = {}
        for name in names:
            queue_items = [
                QueueItem(task=task, impl=impl, shared=len(given[(k, task, impl)]) > 1)
                for kk, task, impl in items
                if kk == k and name in given[(kk, task, impl)]
            ]
            per_run[name] = LabelQueue(
                annotator=name, annotators=names, seed=seed, overlap=overlap, items=queue_items
            )
        out.queues[run.path] = per_run
    return out


def write_assignment(assignment: Assignment) -> list[Path]:
    """Write every queue (labels already given stay as they are); returns the files written."""
    written = []
    for path, per_run in assignment.queues.items():
        run = RunDir(path)
        for name, queue in per_run.items():
            save_model(run.queue_path(name), queue)
            written.append(run.queue_path(name))
    return written
