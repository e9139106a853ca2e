"""The run summary screen: Table 2 of the given runs and terminal plots of accuracy and the judge's split."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

from helpers.synthetic_runs import add_verdicts_and_labels, write_run
from lmrbench.schemas.run import JudgeCategory
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.run_summary import RunSummaryScreen

pytestmark = pytest.mark.anyio
CC, LC, LI = JudgeCategory


async def test_summary_shows_table_and_plots(tmp_path: Path) -> None:
    strong = write_run(tmp_path / "strong", "strong", {"1-A": True, "2-B": True, "3-C": False, "4-D": True})
    write_run(tmp_path / "weak", "weak", {"1-A": False, "2-B": True, "3-C": False, "4-D": False})
    add_verdicts_and_labels(strong, {"1-A": (CC, None), "2-B": (LC, None), "3-C": (LI, None), "4-D": (CC, None)})
    app = make_app(tmp_path / "bench", runs=[tmp_path / "strong", tmp_path / "weak"])
    async with app.run_test(size=(140, 44)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunSummaryScreen)
        table = app.screen.query_one("#run-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[:3] for r in rows] == [["strong", "full", "75.0"], ["weak", "full", "25.0"]]
        assert rows[0][7:11] == ["j", "50.0", "25.0", "25.0"]  # CC, LC, LI of the judge
        accuracy = app.screen.query_one("#accuracy-plot", PlotextPlot).plt.build()
        assert "Unit-test accuracy (%)" in accuracy and "strong" in accuracy and "weak" in accuracy
        judge = app.screen.query_one("#judge-plot", PlotextPlot).plt.build()
        assert "Judge: CC / LC / LI (%)" in judge and "strong/j" in judge
        await pilot.press("escape")
        assert not isinstance(app.screen, RunSummaryScreen)


async def test_a_folder_that_is_not_a_run_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    app = make_app(tmp_path / "bench", runs=[tmp_path / "empty"])
    async with app.run_test(size=(120, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.screen.query_one("#run-status", Static).render())
        assert "cannot read the runs" in status and "not a run folder" in status
