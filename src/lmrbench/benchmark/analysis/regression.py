"""A logistic regression of binary success on the structure predictors and model indicators (Appendix G).

One observation per (run, implementation) with a success value (see outcomes.py) and structure predictors
(see structure.py). The predictors are standardized (mean 0, sample standard deviation 1, over the
observations), so a coefficient is the change in log-odds of success per standard deviation, or left in their
own units (``scale="raw"``). Each model other than the reference (chosen, else the first in the order the runs
were given) gets a 0/1 indicator.
The fit is statsmodels' ``Logit`` (Newton's method). It refuses, with one line saying why, data that have
only one outcome, fewer successes or failures than coefficients, collinear predictors, or perfect
separation, instead of printing coefficients that mean nothing. A predictor that does not vary is dropped
with a note.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from lmrbench.benchmark.analysis.outcomes import Outcome, outcomes
from lmrbench.benchmark.analysis.structure import PREDICTORS, ImplStructure
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.paper_figures import Coefficient, paper_row
from lmrbench.errors import LmrError

Scale = Literal["standardized", "raw"]
"""Predictors per standard deviation (mean 0, sd 1 over the observations) or in their own units."""
SCALES: tuple[str, ...] = get_args(Scale)


@dataclass(frozen=True)
class Observation:
    """One candidate: who made it, for what, whether it succeeded, and its raw predictor values."""

    model: str
    task: str
    impl: int
    success: bool
    predictors: dict[str, float]


@dataclass
class RegressionResult:
    """The fitted model, in the paper's layout, with what went into it."""

    outcome: str
    n: int
    successes: int
    coefficients: list[Coefficient]
    reference_model: str
    log_likelihood: float
    pseudo_r2: float
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Predictor -> (mean, standard deviation) used to standardize it (empty for raw units)."""
    notes: list[str] = field(default_factory=list)
    scale: str = "standardized"
    """standardized (per standard deviation) or raw (per unit of each predictor)."""
    per_model: dict[str, int] = field(default_factory=dict)
    """Observations per model."""

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)


def run_model(run: RunDir) -> str:
    """The model a run stands for: the generating model, or the agent's label."""
    manifest = run.require_manifest()
    return manifest.generation.model if manifest.generation else (manifest.label or run.path.name)


@dataclass
class Contribution:
    """What one run gave the fit: its outcomes, those joined with a structure row, and the tasks left out."""

    path: str
    model: str
    paper_model: str | None
    """The paper's model the run stands for (GPT-4o, GPT-4.1, o4-mini), if any."""
    outcomes: int = 0
    joined: int = 0
    unmeasured: list[str] = field(default_factory=list)
    """Tasks with an outcome but no structure row (not in the task set, or not measurable)."""


def gather(
    run_paths: Sequence[Path], rows: Sequence[ImplStructure], outcome: Outcome
) -> tuple[list[Observation], list[Contribution]]:
    """Observations of every run joined with the structure rows, and what each run contributed."""
    by_key = {(r.task, r.impl): r for r in rows}
    obs: list[Observation] = []
    runs: list[Contribution] = []
    for path in run_paths:
        run = RunDir(Path(path))
        row = paper_row(run.require_manifest())
        part = Contribution(str(run.path), run_model(run), row.model if row else None)
        for (task, impl), success in sorted(outcomes(run, outcome).items()):
            part.outcomes += 1
            found = by_key.get((task, impl))
            if found is None:
                part.unmeasured.append(task)
                continue
            part.joined += 1
            values = {name: float(getattr(found, name)) for name in PREDICTORS}
            obs.append(Observation(part.model, task, impl, success, values))
        runs.append(part)
    return obs, runs


def collect(
    run_paths: Sequence[Path], rows: Sequence[ImplStructure], outcome: Outcome
) -> tuple[list[Observation], list[str]]:
    """Observations of every run joined with the structure rows, and notes on what could not be joined."""
    obs, runs = gather(run_paths, rows, outcome)
    notes = [
        f"{part.path}: {len(part.unmeasured)} observation(s) of tasks with no structure row (not in the task set, "
        f"or skipped above) were left out: {', '.join(sorted(set(part.unmeasured)))}"
        for part in runs
        if part.unmeasured
    ]
    return obs, notes


def design(
    observations: Sequence[Observation],
    predictors: Sequence[str],
    *,
    reference: str | None = None,
    scale: Scale = "standardized",
) -> tuple[np.ndarray, np.ndarray, list[str], str, dict[str, tuple[float, float]], list[str]]:
    """(y, X with a constant first, column names, reference model, scales, notes) for the observations.

    The reference model is ``reference`` (it must be one of the observations' models), else the first model.
    """
    notes: list[str] = []
    y = np.array([1.0 if o.success else 0.0 for o in observations])
    columns: list[np.ndarray] = [np.ones(len(observations))]
    names = ["const"]
    scales: dict[str, tuple[float, float]] = {}
    for name in predictors:
        raw = np.array([float(o.predictors[name]) for o in observations])
        sd = float(raw.std(ddof=1)) if len(raw) > 1 else 0.0
        if sd == 0.0 or not math.isfinite(sd):
            notes.append(f"{name} is the same for every observation; left out")
            continue
        mean = float(raw.mean())
        if scale == "standardized":
            scales[name] = (mean, sd)
        columns.append((raw - mean) / sd if scale == "standardized" else raw)
        names.append(name)
    models = list(dict.fromkeys(o.model for o in observations))
    if reference is not None and reference not in models:
        raise LmrError(f"reference model {reference!r} has no observation (models: {', '.join(models)})")
    reference = reference or (models[0] if models else "")
    for model in (m for m in models if m != reference):
        columns.append(np.array([1.0 if o.model == model else 0.0 for o in observations]))
        names.append(f"model[{model}]")
    return y, np.column_stack(columns), names, reference, scales, notes


def fit_logit(
    observations: Sequence[Observation],
    predictors: Sequence[str],
    *,
    outcome: str = "tests",
    reference: str | None = None,
    scale: Scale = "standardized",
) -> RegressionResult:
    """Fit the regression; LmrError with the reason when the data cannot support it."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

    y, x, names, reference, scales, notes = design(observations, predictors, reference=reference, scale=scale)
    n, k = x.shape
    wins = int(y.sum())
    if n == 0:
        raise LmrError(f"no observation with a {outcome} outcome: nothing to fit")
    if wins in (0, n):
        which = "succeeded" if wins else "failed"
        raise LmrError(f"all {n} observations {which}: a regression needs both outcomes")
    if min(wins, n - wins) < k:
        raise LmrError(
            f"too few data: {wins} successes and {n - wins} failures for {k} coefficients (need at least {k} of each)"
        )
    if np.linalg.matrix_rank(x) < k:
        raise LmrError(f"the predictors are collinear ({', '.join(names[1:])}); drop a run or a predictor")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = sm.Logit(y, x).fit(disp=0, maxiter=100)
        except np.linalg.LinAlgError as exc:
            raise LmrError(f"the fit failed: {exc}") from None
    kinds = {w.category for w in caught}
    if PerfectSeparationWarning in kinds:
        raise LmrError(
            "the outcome is perfectly separated by the predictors (some combination predicts every success "
            "and failure): coefficients and intervals would be meaningless"
        )
    if ConvergenceWarning in kinds or not fit.mle_retvals.get("converged", True):
        raise LmrError("the fit did not converge (likely quasi-separation); the coefficients would be meaningless")
    ci = fit.conf_int(0.05)
    coefs = [
        Coefficient(
            name=name,
            coef=float(fit.params[i]),
            std_err=float(fit.bse[i]),
            z=float(fit.tvalues[i]),
            p=float(fit.pvalues[i]),
            ci_low=float(ci[i][0]),
            ci_high=float(ci[i][1]),
        )
        for i, name in enumerate(names)
    ]
    events = min(wins, n - wins) / max(1, k - 1)
    if events < 10:
        notes.append(f"{events:.1f} events per predictor (fewer than 10): read the intervals with care")
    per_model = dict(Counter(o.model for o in observations))
    return RegressionResult(
        outcome=outcome, n=n, successes=wins, coefficients=coefs, reference_model=reference,
        log_likelihood=float(fit.llf), pseudo_r2=float(fit.prsquared), scales=scales, notes=notes,
        scale=scale, per_model=per_model,
    )  # fmt: skip


def table(result: RegressionResult) -> tuple[list[str], list[list[str]]]:
    """The paper's (statsmodels') layout: coef, std err, z, P>|z|, [0.025, 0.975]."""
    headers = ["Predictor", "coef", "std err", "z", "P>|z|", "[0.025", "0.975]"]
    rows = [
        [c.name, f"{c.coef:.4f}", f"{c.std_err:.3f}", f"{c.z:.3f}", f"{c.p:.3f}", f"{c.ci_low:.3f}", f"{c.ci_high:.3f}"]
        for c in result.coefficients
    ]
    return headers, rows
