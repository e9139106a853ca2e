"""Terminal plots of runs (textual-plotext, part of ``lmrbench[plots]``): accuracy and the judge's split."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from lmrbench.benchmark.report.scoreboard import Report
from lmrbench.schemas.run import JudgeCategory

INSTALL_HINT = "terminal plots need textual-plotext: pip install 'lmrbench[plots]'"


class RunPlots(Horizontal):
    """Unit-test accuracy per run, and the judge's CC / LC / LI shares per run and judge, side by side."""

    DEFAULT_CSS = """
    RunPlots { height: 1fr; min-height: 12; }
    RunPlots > * { width: 1fr; }
    """

    def __init__(self, report: Report, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.report = report

    def compose(self) -> ComposeResult:
        try:
            from textual_plotext import PlotextPlot
        except ImportError:
            yield Static(INSTALL_HINT, id="plots-missing", markup=False)
            return
        yield PlotextPlot(id="accuracy-plot")
        yield PlotextPlot(id="judge-plot")

    def on_mount(self) -> None:
        """Draw both plots from the report."""
        try:
            from textual_plotext import PlotextPlot
        except ImportError:
            return
        runs = list(dict.fromkeys(r.run for r in self.report.rows))
        acc = {r.run: r.accuracy or 0.0 for r in self.report.rows}
        plt = self.query_one("#accuracy-plot", PlotextPlot).plt
        plt.bar(runs, [acc[r] for r in runs])
        plt.ylim(0, 100)
        plt.title("Unit-test accuracy (%)")
        judged = [r for r in self.report.rows if r.judge and r.judged]
        plt = self.query_one("#judge-plot", PlotextPlot).plt
        if judged:
            shares = [[100.0 * getattr(r, c.short.lower()) / r.judged for r in judged] for c in JudgeCategory]
            names = [f"{r.run}/{r.judge}" for r in judged]
            labels = [c.short for c in JudgeCategory]
            # the bundled stubs lag plotext: it takes ``labels`` and one color per stacked series
            plt.stacked_bar(names, shares, labels=labels, color=["green", "orange", "red"])  # type: ignore[call-arg,arg-type]
            plt.title("Judge: CC / LC / LI (%)")
        else:
            plt.title("No judge verdicts yet")
