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
    assert "Unit-test accuracy by input setting" in out.stdout  # full against paper-only, side by side
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
