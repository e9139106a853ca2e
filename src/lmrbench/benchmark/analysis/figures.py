"""The report's figures (PNG and SVG, matplotlib, an optional extra: ``pip install 'lmrbench[plots]'``).

Sized for a paper: one column (3.3 in) wide, or the full text width (6.9 in) for multi-panel figures, 8 pt
text. SVG text stays text (``svg.fonttype: none``), so it can be searched, edited and set in the paper's font.
Every bar says its count (a 0 % bar is drawn as a stub, so it shows), and legends sit outside the axes.

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
           "imbalance": "directory imbalance", "goal_lines": "goal lines (SLOC)"}  # fmt: skip
COLUMN_WIDTH = 3.3
"""Inches: one column of a two-column paper (ACL)."""
TEXT_WIDTH = 6.9
"""Inches: the full text width of a two-column paper."""
STYLE: dict[str, Any] = {
    "svg.fonttype": "none", "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 7, "figure.dpi": 150,
}  # fmt: skip


class FiguresUnavailable(LmrError):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise FiguresUnavailable(INSTALL_HINT) from None
    plt.rcParams.update(STYLE)  # type: ignore[arg-type]
    return plt


def _save(fig: Figure, out: Path, stem: str) -> list[Path]:
    import io

    written = []
    for fmt in FORMATS:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=300, metadata={"Date": None} if fmt == "svg" else {})
        atomic_write_bytes(out / f"{stem}.{fmt}", buf.getvalue())
        written.append(out / f"{stem}.{fmt}")
    return written


def success_by_category(report: Report) -> Figure | None:
    """Horizontal grouped bars: one group per category, one bar per run, each bar labelled passed/n."""
    if not report.categories:
        return None
    plt = _pyplot()
    runs = list(dict.fromkeys(c.run for c in report.categories))
    cats = list(dict.fromkeys(c.category for c in report.categories))
    by = {(c.run, c.category): c for c in report.categories}
    bar = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 0.9 + len(cats) * max(0.3, 0.14 * len(runs))),
                           layout="constrained")  # fmt: skip
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, run in enumerate(runs):
        color = colors[i % len(colors)]
        ys = [j + (i - (len(runs) - 1) / 2) * bar for j in range(len(cats))]
        cells = [by.get((run, c)) for c in cats]
        acc = [(c.accuracy or 0.0) if c else 0.0 for c in cells]
        ax.barh(ys, acc, bar * 0.9, color=color, label=run)
        for y, a, c in zip(ys, acc, cells, strict=True):
            if c is None:
                continue
            if a == 0.0:  # a stub, so that 0 % is seen as a result and not as a missing bar
                ax.plot([0, 1.2], [y, y], color=color, lw=2.2, solid_capstyle="butt")
            ax.text(a + 2, y, f"{c.passed}/{c.implementations}", va="center", fontsize=5.5)
    ax.set_yticks(range(len(cats)), cats)
    ax.invert_yaxis()
    ax.set_xlim(0, 115)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("unit-test accuracy (%)")
    fig.legend(loc="outside lower center", ncol=2 if len(runs) > 1 else 1, frameon=False)
    return fig


def judge_split(report: Report) -> Figure | None:
    """Stacked horizontal bars: CC, LC and LI shares of each run and judge, with n at the end of each bar."""
    rows = [r for r in report.rows if r.judge and r.judged]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 0.25 * len(rows) + 1.3), layout="constrained")
    names = [f"{r.run} / {r.judge}" for r in rows]
    left = [0.0] * len(rows)
    for cat, color in zip(JudgeCategory, _JUDGE_COLORS, strict=True):
        counts = [getattr(r, cat.short.lower()) for r in rows]
        shares = [100.0 * n / r.judged for n, r in zip(counts, rows, strict=True)]
        ax.barh(names, shares, left=left, color=color, label=f"{cat.short}: {cat.value.replace('_', ' ')}")
        left = [a + b for a, b in zip(left, shares, strict=True)]
    for k, r in enumerate(rows):
        ax.text(101, k, f"n={r.judged}", va="center", fontsize=5.5)
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("judged candidates (%)")
    fig.legend(loc="outside lower center", ncol=1, frameon=False)
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
    per_row = min(3, len(panels))
    nrows = -(-len(panels) // per_row)
    width = COLUMN_WIDTH if per_row == 1 else TEXT_WIDTH
    fig, axes = plt.subplots(nrows, per_row, figsize=(width, nrows * width / per_row + 0.3), squeeze=False,
                             layout="constrained")  # fmt: skip
    ticks = [c.short for c in JudgeCategory]
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (title, matrix) in zip(axes.flat, panels, strict=False):
        ax.imshow(matrix, cmap="Blues", vmin=0)
        top = max(max(row) for row in matrix)
        for i, row in enumerate(matrix):
            for j, n in enumerate(row):
                color = "white" if n > top / 2 else "black"
                ax.text(j, i, str(n), ha="center", va="center", fontsize=8, color=color)
        ax.set_xticks(range(3), ticks)
        ax.set_yticks(range(3), ticks)
        ax.set_xlabel("judge")
        ax.set_ylabel("human")
        ax.set_title(f"{title} (n={sum(map(sum, matrix))})", fontsize=7)
    return fig


def success_vs_structure(observations: Sequence[Observation]) -> Figure | None:
    """Success rate against each structure predictor, per model, binned by quintiles; each point is one bin
    (its area grows with its count), and points are not joined: a bin is not a continuation of the last."""
    if not observations:
        return None
    import numpy as np

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(PREDICTORS), figsize=(TEXT_WIDTH, 2.1), sharey=True, layout="constrained")
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
            sizes = [8.0 * float((which == k).sum()) for k in bins]
            ax.scatter(cx, cy, s=sizes, alpha=0.7, label=model)
        ax.set_xlabel(_LABELS[name])
        ax.set_ylim(-8, 108)
    axes[0].set_ylabel("unit tests passed (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(models)), frameon=False,
               markerscale=0.6)  # fmt: skip
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
