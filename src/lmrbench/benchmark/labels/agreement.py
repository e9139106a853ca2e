"""Agreement between human labels, the LLM judge and the unit tests, over one or more runs.

Every rater speaks the paper's scale: 1 logically incorrect, 2 logically correct, 3 completely correct. Unit tests
become a label (passed = 3, failed or timed out = 1; infrastructure errors and missing results are left out).
Where several annotators labelled an item, their consensus is the majority label, or on a tie the median
(the lower middle value for an even count). Kappas come from statsmodels, alpha from ``krippendorff``.
Only labels and verdicts of the current candidate (same digest) count.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from lmrbench.benchmark.labels.consensus import RULE, consensus
from lmrbench.benchmark.pipeline.rundir import RunDir, run_labels, speaks_of_current
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.agreement import (
    AgreementReport,
    Comparison,
    InterAnnotator,
    PairAgreement,
    SliceAgreement,
)
from lmrbench.schemas.categories import Category
from lmrbench.schemas.run import ResultStatus

METHOD = (
    "Labels on the paper's scale: 1 logically incorrect, 2 logically correct, 3 completely correct. "
    + RULE
    + " Unit tests as a label: passed = 3, failed or timed out = 1. "
    "Binary agreement: 3 against not 3. Weighted kappa: quadratic weights."
)
UNCATEGORIZED = "Uncategorized"
SCORES = (1, 2, 3)


@dataclass
class Item:
    """One candidate with everything said about it."""

    run: str
    task: str
    impl: int
    category: str = UNCATEGORIZED
    humans: dict[str, int] = field(default_factory=dict)
    judge: int | None = None
    tests: int | None = None

    @property
    def human(self) -> int | None:
        """The human consensus, or None when nobody labelled the item."""
        return consensus(self.humans.values())


def _none_if_nan(value: float) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else float(value)


def compare(pairs: list[tuple[int, int]]) -> Comparison:
    """n, exact and binary agreement, Cohen's kappa (plain and quadratic) and the 3x3 confusion of score pairs."""
    table = np.zeros((3, 3), dtype=int)
    for a, b in pairs:
        table[a - 1, b - 1] += 1
    n = len(pairs)
    if not n:
        return Comparison()
    exact = sum(1 for a, b in pairs if a == b) / n
    binary = sum(1 for a, b in pairs if (a == 3) == (b == 3)) / n
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        kappa = cohens_kappa(table, return_results=False)
        weighted = cohens_kappa(table, wt="quadratic", return_results=False)
    return Comparison(
        n=n,
        exact=exact,
        cohen_kappa=_none_if_nan(kappa),
        weighted_kappa=_none_if_nan(weighted),
        binary=binary,
        confusion=table.tolist(),
    )


def alpha(units: list[dict[str, int]]) -> float | None:
    """Krippendorff's alpha (ordinal) over items labelled by two or more annotators; None when undefined."""
    units = [u for u in units if len(u) >= 2]
    raters = sorted({a for u in units for a in u})
    if not units:
        return None
    data = np.full((len(raters), len(units)), np.nan)
    for j, unit in enumerate(units):
        for a, score in unit.items():
            data[raters.index(a), j] = score
    if len({s for u in units for s in u.values()}) < 2:
        return 1.0  # every annotator gave the same single label: perfect, if trivial, agreement
    try:
        value = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=SCORES)
    except (ValueError, ZeroDivisionError):
        return None
    return _none_if_nan(value)


def slice_agreement(items: list[Item]) -> SliceAgreement:
    """The three comparisons on a set of items."""
    hj = [(h, i.judge) for i in items if (h := i.human) is not None and i.judge is not None]
    ht = [(h, i.tests) for i in items if (h := i.human) is not None and i.tests is not None]
    jt = [(i.judge, i.tests) for i in items if i.judge is not None and i.tests is not None]
    return SliceAgreement(human_vs_judge=compare(hj), human_vs_tests=compare(ht), judge_vs_tests=compare(jt))


def inter_annotator(items: list[Item]) -> InterAnnotator:
    """Pairwise agreement and alpha over items with two or more annotators."""
    multi = [i for i in items if len(i.humans) >= 2]
    names = sorted({a for i in multi for a in i.humans})
    pairs = []
    for a, b in combinations(names, 2):
        shared = [(i.humans[a], i.humans[b]) for i in multi if a in i.humans and b in i.humans]
        if shared:
            pairs.append(PairAgreement(a=a, b=b, **compare(shared).model_dump()))
    return InterAnnotator(items=len(multi), krippendorff_alpha=alpha([i.humans for i in multi]), pairs=pairs)


def _categories(bench: str) -> dict[tuple[str, int], str]:
    """(task, impl) -> category from the run's task set, when it is still there."""
    out: dict[tuple[str, int], str] = {}
    if not bench or not Path(bench).is_dir():
        return out
    tasks, _ = load_taskset(Path(bench))
    for task in tasks:
        for impl in task.info.implementations:
            cat = impl.category_normalized
            out[(task.name, impl.index)] = cat.value if cat else UNCATEGORIZED
    return out


def _run_items(run: RunDir, label: str, judge: str, report: AgreementReport) -> list[Item]:
    """The items of one run (counting stale labels into ``report``)."""
    cands = {(c.task, c.impl): c for c in run.candidates()}
    by_key: dict[tuple[str, int], Item] = {}

    def current(key: tuple[str, int], digest: str) -> bool:
        return speaks_of_current(cands, key, digest)

    for res in run.results():
        key = (res.task, res.impl)
        if res.status is ResultStatus.INFRA_ERROR or not current(key, res.candidate_digest):
            continue
        it = by_key.setdefault(key, Item(label, *key))
        it.tests = 3 if res.status is ResultStatus.PASSED else 1
        it.category = res.category or UNCATEGORIZED
    for v in run.verdicts(judge) if judge else []:
        key = (v.task, v.impl)
        if v.category is not None and current(key, v.candidate_digest):
            by_key.setdefault(key, Item(label, *key)).judge = v.category.score
    for lab in run.labels():
        key = (lab.task, lab.impl)
        if not current(key, lab.candidate_digest):
            report.stale_labels += 1
            continue
        by_key.setdefault(key, Item(label, *key)).humans[lab.annotator] = lab.label.score
    return list(by_key.values())


def collect(run_paths: list[Path], *, judge: str | None = None) -> tuple[list[Item], AgreementReport]:
    """Read every run into items; the report returned holds the counts (no statistics yet)."""
    report = AgreementReport(method=METHOD)
    items: list[Item] = []
    for path, label in zip(run_paths, run_labels(run_paths), strict=True):
        run = RunDir(Path(path))
        manifest = run.require_manifest()
        judges = run.judges()
        if judge is not None and judge not in judges:
            have = ", ".join(judges) or "none"
            raise LmrError(f"no verdicts of judge {judge!r} (judges here: {have})", run.path)
        if judge is None and len(judges) > 1:
            raise LmrError(f"several judges ({', '.join(judges)}): choose one with --judge", run.path)
        name = judge or (judges[0] if judges else "")
        report.judges[label] = name
        found = _run_items(run, label, name, report)
        if any(i.category == UNCATEGORIZED for i in found):
            cats = _categories(manifest.bench)
            for it in found:
                if it.category == UNCATEGORIZED:
                    it.category = cats.get((it.task, it.impl), UNCATEGORIZED)
        items += found
    return items, report


def agreement(run_paths: list[Path], *, judge: str | None = None) -> AgreementReport:
    """The whole agreement report over the runs; LmrError when a folder is not a run or the judge is unclear."""
    items, report = collect(run_paths, judge=judge)
    labelled = [i for i in items if i.humans]
    report.items = len(labelled)
    report.labels = sum(len(i.humans) for i in labelled)
    report.annotators = dict(sorted(Counter(a for i in labelled for a in i.humans).items()))
    overall = slice_agreement(items)
    report.human_vs_judge = overall.human_vs_judge
    report.human_vs_tests = overall.human_vs_tests
    report.judge_vs_tests = overall.judge_vs_tests
    report.inter_annotator = inter_annotator(items)
    by_model: dict[str, list[Item]] = defaultdict(list)
    by_cat: dict[str, list[Item]] = defaultdict(list)
    for i in items:
        by_model[i.run].append(i)
        by_cat[i.category].append(i)
    report.by_model = {m: slice_agreement(v) for m, v in by_model.items()}
    order = [c.value for c in Category] + [UNCATEGORIZED]
    ranked = sorted(by_cat, key=lambda c: (order.index(c) if c in order else len(order), c))
    report.by_category = {c: slice_agreement(by_cat[c]) for c in ranked}
    return report
