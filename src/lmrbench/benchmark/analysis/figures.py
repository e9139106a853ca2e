"""The report's figures (PNG and SVG, matplotlib, an optional extra: ``pip install 'lmrbench[plots]'``).

- ``success_by_category``: unit-test accuracy per category, one bar per run;
- ``judge_split``: the judge's Completely / Logically Correct / Logically Incorrect shares per run and judge;
- ``human_vs_judge``: the confusion of human labels (rows) with judge verdicts (columns), per run and judge,
  drawn only when labels exist;
- ``success_vs_structure``: unit-test success against each structure predictor, per model (the
  implementations binned by the predictor's quantiles, a point's area showing its count), drawn when the
  task set is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmrbench.benchmark.analysis.outcomes import human_judge_pairs
from lmrbench.benchmark.analysis.regression import Observation
from lmrbench.benchmark.analysis.structure import PREDICTORS
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.scoreboard import Report
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes
from lmrbench.schemas.run import JudgeCategory

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL_HINT = "figures need matplotlib: pip install 'lmrbench[plots]'"
FORMATS = ("png", "svg")
_JUDGE_COLORS = ("#2e7d32", "#f9a825", "#c62828")
_LABELS = {"depth": "average directory depth", "branch_factor": "average branch factor",
           "imbalance": "directory imbalance", "goal_lines": "goal-function lines"}  # fmt: skip


class FiguresUnavailable(LmrError):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise FiguresUnavailable(INSTALL_HINT) from None
    return plt


def _save(fig: Figure, out: Path, stem: str) -> list[Path]:
    import io

    written = []
    for fmt in FORMATS:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=150, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else {})
        atomic_write_bytes(out / f"{stem}.{fmt}", buf.getvalue())
        written.append(out / f"{stem}.{fmt}")
    return written


def success_by_category(report: Report) -> Figure | None:
    """Grouped bars: categories on the x axis, one bar per run."""
    if not report.categories:
        return None
    plt = _pyplot()
    runs = list(dict.fromkeys(c.run for c in report.categories))
    cats = list(dict.fromkeys(c.category for c in report.categories))
    acc = {(c.run, c.category): c.accuracy or 0.0 for c in report.categories}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(cats) * max(1, len(runs)) ** 0.5 + 2), 4.2))
    width = 0.8 / len(runs)
    for i, run in enumerate(runs):
        xs = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(cats))]
        ax.bar(xs, [acc.get((run, c), 0.0) for c in cats], width, label=run)
    ax.set_xticks(range(len(cats)), [c.replace(" & ", " &\n") for c in cats], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("unit-test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Unit-test accuracy by category")
    ax.legend(fontsize=8)
    return fig


def judge_split(report: Report) -> Figure | None:
    """Stacked horizontal bars: CC, LC and LI shares of each run and judge."""
    rows = [r for r in report.rows if r.judge and r.judged]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(rows) + 1.5))
    names = [f"{r.run} / {r.judge}" for r in rows]
    left = [0.0] * len(rows)
    for cat, color in zip(JudgeCategory, _JUDGE_COLORS, strict=True):
        counts = [getattr(r, cat.short.lower()) for r in rows]
        shares = [100.0 * n / r.judged for n, r in zip(counts, rows, strict=True)]
        ax.barh(names, shares, left=left, color=color, label=cat.value.replace("_", " "))
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of judged candidates (%)")
    ax.set_title("LLM judge: three-way split")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, frameon=False)
    ax.invert_yaxis()
    return fig


def human_vs_judge(report: Report) -> Figure | None:
    """One 3x3 confusion matrix (human label rows, judge verdict columns) per run and judge with labels."""
    panels = []
    for r in report.rows:
        if not r.judge:
            continue
        pairs = human_judge_pairs(RunDir(Path(r.path)), r.judge)
        if pairs:
            cats = list(JudgeCategory)
            matrix = [[sum(1 for h, j in pairs if h is hc and j is jc) for jc in cats] for hc in cats]
            panels.append((f"{r.run} / {r.judge}", matrix))
    if not panels:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.8 * len(panels), 3.6), squeeze=False, layout="constrained")
    ticks = [c.short for c in JudgeCategory]
    for ax, (title, matrix) in zip(axes[0], panels, strict=True):
        ax.imshow(matrix, cmap="Blues", vmin=0)
        top = max(max(row) for row in matrix)
        for i, row in enumerate(matrix):
            for j, n in enumerate(row):
                color = "white" if n > top / 2 else "black"
                ax.text(j, i, str(n), ha="center", va="center", fontsize=11, color=color)
        ax.set_xticks(range(3), ticks)
        ax.set_yticks(range(3), ticks)
        ax.set_xlabel("judge")
        ax.set_ylabel("human")
        ax.set_title(title, fontsize=9)
    fig.suptitle("Human labels against the LLM judge")
    return fig


def success_vs_structure(observations: Sequence[Observation]) -> Figure | None:
    """Success rate against each structure predictor, one line per model, binned by quantiles."""
    if not observations:
        return None
    import numpy as np

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(PREDICTORS), figsize=(3.4 * len(PREDICTORS), 3.2), sharey=True)
    models = list(dict.fromkeys(o.model for o in observations))
    for ax, name in zip(axes, PREDICTORS, strict=True):
        for model in models:
            xs = np.array([o.predictors[name] for o in observations if o.model == model])
            ys = np.array([1.0 if o.success else 0.0 for o in observations if o.model == model])
            edges = np.unique(np.quantile(xs, np.linspace(0, 1, 6)))
            which = np.clip(np.searchsorted(edges, xs, side="right") - 1, 0, max(0, len(edges) - 2))
            bins = [k for k in range(len(edges)) if (which == k).any()]
            cx = [float(xs[which == k].mean()) for k in bins]
            cy = [100.0 * float(ys[which == k].mean()) for k in bins]
            sizes = [12.0 * float((which == k).sum()) ** 0.5 * 3 for k in bins]
            ax.plot(cx, cy, "-", alpha=0.6)
            ax.scatter(cx, cy, s=sizes, label=model)
        ax.set_xlabel(_LABELS[name])
        ax.set_ylim(-5, 105)
    axes[0].set_ylabel("unit tests passed (%)")
    axes[-1].legend(fontsize=8)
    fig.suptitle("Success against repository structure")
    return fig


def write_figures(report: Report, out: Path, observations: Sequence[Observation] = ()) -> list[Path]:
    """Write every figure the data allow into ``out`` as PNG and SVG; FiguresUnavailable without matplotlib."""
    plt = _pyplot()
    written: list[Path] = []
    for stem, fig in (
        ("success_by_category", success_by_category(report)),
        ("judge_split", judge_split(report)),
        ("human_vs_judge", human_vs_judge(report)),
        ("success_vs_structure", success_vs_structure(observations)),
    ):
        if fig is None:
            continue
        try:
            written += _save(fig, Path(out), stem)
        finally:
            plt.close(fig)
    return written


def recorded_bench(run_paths: Sequence[Path]) -> Path | None:
    """The task set all runs were made from, when run.json names one and it exists here."""
    benches = {RunDir(Path(p)).require_manifest().bench for p in run_paths}
    if len(benches) == 1:
        bench = next(iter(benches))
        if bench and Path(bench).is_dir():
            return Path(bench)
    return None


def report_figures(
    report: Report, run_paths: Sequence[Path], out: Path, bench: Path | None = None
) -> tuple[list[Path], list[str]]:
    """The report's figures in ``out`` (structure figure when the task set is known); (written, notes)."""
    from lmrbench.benchmark.analysis.regression import collect
    from lmrbench.benchmark.analysis.structure import structure
    from lmrbench.core.taskset import load_taskset

    _pyplot()  # fail before any work when matplotlib is missing
    notes: list[str] = []
    bench = bench or recorded_bench(run_paths)
    observations: list[Observation] = []
    if bench is None:
        notes.append("no success-vs-structure figure: the runs name no task set found here (pass --bench)")
    else:
        tasks, problems = load_taskset(bench)
        rows, more = structure(tasks)
        notes += [f"structure: {p}" for p in [*problems, *more]]
        observations, joined = collect(run_paths, rows, "tests")
        notes += joined
    return write_figures(report, out, observations), notes
