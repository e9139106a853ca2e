"""``report`` writes the figures (PNG and SVG) the data allow, and says in one line when matplotlib is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.synthetic_runs import add_verdicts_and_labels, write_run, write_shaped_task
from lmrbench.benchmark.analysis.outcomes import human_judge_pairs
from lmrbench.schemas.run import JudgeCategory

EXE = str(Path(sys.executable).with_name("lmrbench"))
CC, LC, LI = JudgeCategory


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    bench = tmp_path / "bench"
    names = [write_shaped_task(bench, k, nest=k % 3, root_files=k % 2, docs=k % 4, lines=3 + 2 * k,
                               category="Evaluation Metrics" if k % 2 else "Data Processing")
             for k in range(1, 13)]  # fmt: skip
    strong = write_run(tmp_path / "strong", "strong", {n: k < 9 for k, n in enumerate(names)}, bench=bench)
    write_run(tmp_path / "weak", "weak", {n: k < 4 for k, n in enumerate(names)}, bench=bench, context="paper-only")
    add_verdicts_and_labels(strong, {
        names[0]: (CC, CC), names[1]: (CC, LC), names[2]: (LC, LC), names[3]: (LI, LI), names[4]: (CC, None),
    })  # fmt: skip
    return bench, tmp_path / "strong", tmp_path / "weak"


def test_confusion_pairs_are_human_then_judge(runs) -> None:
    from lmrbench.benchmark.pipeline.rundir import RunDir

    pairs = human_judge_pairs(RunDir(runs[1]), "j")
    assert sorted(pairs) == sorted([(CC, CC), (LC, CC), (LC, LC), (LI, LI)])


def test_report_writes_every_figure_as_png_and_svg(runs, tmp_path) -> None:
    bench, strong, weak = runs
    out = subprocess.run([EXE, "report", str(strong), str(weak), "--out", str(tmp_path / "rep"), "--bench", str(bench)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    figs = tmp_path / "rep" / "figures"
    stems = ["human_vs_judge", "judge_split", "success_by_category", "success_vs_structure"]
    assert sorted(p.name for p in figs.iterdir()) == sorted(f"{s}.{x}" for s in stems for x in ("png", "svg"))
    for stem in stems:
        assert (figs / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in (figs / f"{stem}.svg").read_text()
        assert f"wrote {figs / stem}.png" in out.stdout
    assert "By input setting (the paper's Table 3, %)" in out.stdout  # full against paper-only, side by side
    # without labels there is no confusion figure, and without a task set no structure figure
    out = subprocess.run([EXE, "report", str(weak), "--out", str(tmp_path / "w")], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path / "rep")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "w" / "figures").iterdir()) == [
        "success_by_category.png", "success_by_category.svg",
        "success_vs_structure.png", "success_vs_structure.svg",
    ]  # fmt: skip


def test_without_matplotlib_the_report_says_so_in_one_line(runs, tmp_path) -> None:
    blocker = tmp_path / "block" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "block")}
    out = subprocess.run([EXE, "report", str(runs[1]), "--out", str(tmp_path / "rep")], capture_output=True,
                         text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == "figures skipped: figures need matplotlib: pip install 'lmrbench[plots]'"
    assert (tmp_path / "rep" / "report.md").is_file() and not (tmp_path / "rep" / "figures").exists()


def test_figures_fit_a_paper_column_keep_their_text_and_show_zero_bars_with_counts(tmp_path) -> None:
    import re

    from helpers.official_quirks import write_quirky_bench, write_quirky_results
    from lmrbench.benchmark.analysis.figures import report_figures
    from lmrbench.benchmark.labels.official import import_official
    from lmrbench.benchmark.report.scoreboard import build_report

    bench = write_quirky_bench(tmp_path / "bench")
    summary = import_official(write_quirky_results(tmp_path / "results"), tmp_path / "runs", bench=bench)
    runs = sorted(summary.runs.values())
    written, _ = report_figures(build_report(runs), runs, tmp_path / "figs")
    assert {p.stem for p in written} == {"success_by_category", "judge_split", "human_vs_judge",
                                         "success_vs_structure"}  # imported runs draw the confusion too
    svg = (tmp_path / "figs" / "success_by_category.svg").read_text()
    assert re.search(r'<svg[^>]*width="237\.6pt"', svg)  # 3.3 inches: one column
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "unit-test accuracy (%)" in texts  # text, not glyph paths
    assert {"2/5", "1/3"} <= set(texts)  # every bar carries passed/n
    hvj = (tmp_path / "figs" / "human_vs_judge.svg").read_text()
    assert any("(n=5)" in t for t in re.findall(r"<text[^>]*>([^<]*)</text>", hvj))


def test_a_zero_bar_is_drawn_and_counted(tmp_path) -> None:
    from lmrbench.benchmark.analysis.figures import success_by_category
    from lmrbench.benchmark.report.scoreboard import CategoryRow, Report

    report = Report(categories=[CategoryRow("a", "Evaluation Metrics", 3, 0, 0.0),
                                CategoryRow("b", "Evaluation Metrics", 2, 1, 50.0)])  # fmt: skip
    fig = success_by_category(report)
    assert fig is not None
    (ax,) = fig.axes
    stubs = [line for line in ax.lines if max(line.get_xdata()) > 0]
    assert len(stubs) == 1 and stubs[0].get_linewidth() >= 2  # the 0 % bar shows as a stub, not as nothing
    assert sorted(t.get_text() for t in ax.texts) == ["0/3", "1/2"]
