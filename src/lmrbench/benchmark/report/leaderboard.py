"""The leaderboard and the task x run matrix, both read from the per-sample rows.

Runs are ranked by unit-test accuracy over their scored implementations (pass@1: with several samples, the mean
over samples of each implementation's share of passing samples). The 95% interval is Wilson's for one sample
(statsmodels' ``proportion_confint``) and a percentile bootstrap over implementations for several; pass@k is the
unbiased estimator of Chen et al. (2021): 1 - C(n-c, k) / C(n, k) per implementation, averaged.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from math import comb

from lmrbench.benchmark.report.samples import SampleRow

BOOTSTRAP_RESAMPLES = 2000


@dataclass
class Standing:
    """One run's line of the leaderboard (percentages; None where nothing is scored)."""

    run: str
    samples: int
    implementations: int
    """Implementations with at least one scored sample."""
    passed: int
    """Passing samples, over all implementations."""
    scored: int
    accuracy: float | None
    """pass@1, %."""
    low: float | None
    high: float | None
    pass_k: float | None
    """pass@k (k = samples), %; None for one sample."""
    cost: float | None
    """Dollars of the candidates' tokens; None when a model's price is unknown."""
    tokens: int


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one implementation with ``c`` of ``n`` samples passing."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def _interval(per_impl: list[tuple[int, int]]) -> tuple[float, float]:
    """95% interval of pass@1, as fractions: Wilson for one sample per implementation, else a bootstrap."""
    if all(n == 1 for n, _ in per_impl):
        from statsmodels.stats.proportion import proportion_confint

        low, high = proportion_confint(sum(c for _, c in per_impl), len(per_impl), alpha=0.05, method="wilson")
        return float(low), float(high)
    import numpy as np

    shares = np.array([c / n for n, c in per_impl])
    rng = np.random.default_rng(0)
    means = shares[rng.integers(0, len(shares), size=(BOOTSTRAP_RESAMPLES, len(shares)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def standings(rows: list[SampleRow]) -> list[Standing]:
    """Every run's standing, best first (ties: by name)."""
    by_run: dict[str, list[SampleRow]] = defaultdict(list)
    for row in rows:
        by_run[row.run].append(row)
    out = []
    for run, mine in by_run.items():
        samples = max(r.sample for r in mine)
        per_impl: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
        for r in mine:
            if r.scored:
                per_impl[(r.task, r.impl)][0] += 1
                per_impl[(r.task, r.impl)][1] += r.status == "passed"
        counts = [(n, c) for n, c in per_impl.values()]
        costs = [r.cost for r in mine]
        standing = Standing(run=run, samples=samples, implementations=len(counts), passed=sum(c for _, c in counts),
                            scored=sum(n for n, _ in counts), accuracy=None, low=None, high=None, pass_k=None,
                            cost=None if None in costs else sum(c or 0.0 for c in costs),
                            tokens=sum(r.prompt_tokens + r.completion_tokens for r in mine))  # fmt: skip
        if counts:
            standing.accuracy = 100.0 * sum(c / n for n, c in counts) / len(counts)
            low, high = _interval(counts)
            standing.low, standing.high = 100.0 * low, 100.0 * high
            if samples > 1:
                standing.pass_k = 100.0 * sum(pass_at_k(n, c, min(samples, n)) for n, c in counts) / len(counts)
        out.append(standing)
    return sorted(out, key=lambda s: (-(s.accuracy if s.accuracy is not None else -1.0), s.run))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def leaderboard_table(board: list[Standing]) -> tuple[list[str], list[list[str]]]:
    """The leaderboard as text cells: rank, run, pass@1, its 95% interval, passed/scored, pass@k when any run has
    several samples, and cost."""
    several = any(s.samples > 1 for s in board)
    headers = ["#", "Run", "Acc. %", "95% CI", "Passed", *(["pass@k %"] if several else []), "Cost $"]
    rows = []
    for rank, s in enumerate(board, 1):
        ci = "-" if s.low is None else f"{s.low:.1f}-{s.high:.1f}"
        passk = [f"{_pct(s.pass_k)} (k={s.samples})" if s.samples > 1 else "-"] if several else []
        cost = "unknown" if s.cost is None else f"{s.cost:.2f}"
        rows.append([str(rank), s.run, _pct(s.accuracy), ci, f"{s.passed}/{s.scored}", *passk, cost])
    return headers, rows


def task_matrix(rows: list[SampleRow]) -> tuple[list[str], list[list[str]]]:
    """Tasks down, runs across: each cell the passing samples over the scored ones of the task's implementations
    (``-``: nothing scored)."""
    runs = list(dict.fromkeys(r.run for r in rows))
    tasks = sorted({r.task for r in rows}, key=_task_order)
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r.scored:
            cells[(r.task, r.run)][0] += r.status == "passed"
            cells[(r.task, r.run)][1] += 1
    table = [[task, *(f"{cells[(task, run)][0]}/{cells[(task, run)][1]}" if (task, run) in cells else "-"
                      for run in runs)] for task in tasks]  # fmt: skip
    return ["Task", *runs], table


def _task_order(name: str) -> tuple[int, str]:
    head = name.split("-", 1)[0]
    return (int(head), name) if head.isdigit() else (1 << 30, name)
