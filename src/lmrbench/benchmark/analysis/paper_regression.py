"""The regression beside the paper's Table 5: the coefficients side by side, why the two can differ, and what the
standard errors say about the number of rows the paper fitted.

The paper's model indicators are named by its models (GPT-4o, o4-mini, against GPT-4.1); a fit's indicator is
set beside the paper's when its run stands for that model (``paper_figures.paper_row``) and the fit's reference
stands for GPT-4.1 as the paper's does. If standard errors shrink as 1/sqrt(n), a fit of n rows whose standard
error is s against the paper's s_p implies the paper fitted about n * (s / s_p)^2 rows.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from lmrbench.benchmark.analysis.regression import Contribution, RegressionResult
from lmrbench.benchmark.report.paper_figures import N_PER_RUN, TABLE5, TABLE5_REFERENCE, PaperCoefficient


@dataclass(frozen=True)
class Setup:
    """The choices a fit was made with (each one a switch of ``analyze regression``)."""

    outcome: str
    goal_lines: str
    scale: str
    unmeasured: tuple[str, ...] = ()
    """Tasks with outcomes left out because they could not be measured (an empty repository folder)."""


def paired(result: RegressionResult, runs: list[Contribution]) -> list[tuple[PaperCoefficient, str | None]]:
    """Each of the paper's coefficients with the fit's coefficient of the same name (None when it has none)."""
    ours = {c.name for c in result.coefficients}
    paper_of = {f"model[{r.model}]": r.paper_model for r in runs if r.paper_model}
    ref = next((r.paper_model for r in runs if r.model == result.reference_model), None)
    out: list[tuple[PaperCoefficient, str | None]] = []
    for p in TABLE5:
        if not p.name.startswith("model["):
            out.append((p, p.name if p.name in ours else None))
            continue
        match = [n for n in ours if ref == TABLE5_REFERENCE and f"model[{paper_of.get(n)}]" == p.name]
        out.append((p, match[0] if match else None))
    return out


def beside_paper(result: RegressionResult, runs: list[Contribution]) -> tuple[list[str], list[list[str]]]:
    """Coefficient, z and p of the paper's Table 5 beside the fit's, one row per paper predictor."""
    got = {c.name: c for c in result.coefficients}
    rows = []
    for p, name in paired(result, runs):
        c = got.get(name) if name else None
        rows.append([
            p.name, f"{p.coef:.4f}", "-" if c is None else f"{c.coef:.4f}", f"{p.z:.3f}",
            "-" if c is None else f"{c.z:.3f}", f"{p.p:.3f}", "-" if c is None else f"{c.p:.3f}",
        ])  # fmt: skip
    return ["Predictor", "Paper coef", "Here coef", "Paper z", "Here z", "Paper p", "Here p"], rows


def indicator_names(result: RegressionResult, runs: list[Contribution]) -> list[str]:
    """'model[GPT-4o] is model[<run's model>] here' for each paper indicator the fit has."""
    return [f"{p.name} is {name} here" for p, name in paired(result, runs) if name and name != p.name]


def implied_rows(result: RegressionResult, runs: list[Contribution]) -> dict[str, float]:
    """Per coefficient both fits have: the rows the paper's standard error implies, n * (se / paper se)^2."""
    got = {c.name: c for c in result.coefficients}
    return {
        p.paper_name: result.n * (got[name].std_err / p.std_err) ** 2
        for p, name in paired(result, runs)
        if name is not None and p.std_err > 0
    }


def row_evidence(result: RegressionResult, runs: list[Contribution]) -> list[str]:
    """What the fit's rows are and what the paper's standard errors imply about its own."""
    per_model = ", ".join(f"{m} {k}" for m, k in result.per_model.items())
    lines = [f"here n = {result.n} ({per_model}); the paper's three OpenHands runs of {N_PER_RUN} implementations "
             f"give at most {3 * N_PER_RUN}"]  # fmt: skip
    implied = implied_rows(result, runs)
    if implied:
        each = ", ".join(f"{name} {n:.0f}" for name, n in implied.items())
        lines.append(
            f"the paper's standard errors imply, if they shrink as 1/sqrt(n) from this fit's, a median of "
            f"{statistics.median(implied.values()):.0f} rows ({each})"
        )
    return lines


def reasons(result: RegressionResult, runs: list[Contribution], setup: Setup) -> list[str]:
    """Why the fit and the paper's Table 5 can differ: each with this fit's choice and the switch, if any."""
    ref = next((r for r in runs if r.model == result.reference_model), None)
    ref_paper = ref.paper_model if ref else None
    stands = (
        f"{ref_paper}, as the paper's" if ref_paper == TABLE5_REFERENCE
        else f"{ref_paper or 'not one of the paper models'}; the paper's is {TABLE5_REFERENCE}"
    )  # fmt: skip
    lines = [
        f"reference model: {result.reference_model} ({stands}) (switch: --reference)",
        f"outcome: {setup.outcome}; the paper says binary success without saying whether from unit tests or human "
        "labels (switch: --outcome tests|human)",
        f"goal lines: {setup.goal_lines}; the paper counts the source lines of code of the goal function file "
        "without saying how blank, comment and docstring lines count (switch: --goal-lines file-sloc|function-lines)",
        f"scale: {setup.scale}; the paper does not say whether its predictors were standardized (switch: --scale "
        "standardized|raw; z and p do not change)",
        "tree: the repository as its authors wrote it, without the benchmark's unit_test/, paper.pdf and paper.json, "
        "version control and caches; the paper does not say (no switch)",
        "branch factor: subfolders per folder with at least one child, one reading of the paper's sentence; "
        "directory imbalance: lmrbench's own formula, as the paper gives none (no switch)",
        "runs: the paper regresses its three OpenHands runs; the fit uses the runs given",
    ]
    if setup.unmeasured:
        lines.append(
            f"rows left out: the outcomes of {', '.join(setup.unmeasured)}, which could not be measured here (see "
            "the skipped: lines); the paper must have measured it (no switch)"
        )
    return lines
