"""Structure predictors on hand-built trees, against counts made by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from helpers.run_task import write_taskset
from lmrbench.benchmark.analysis.structure import structure, tree_metrics
from lmrbench.core.taskset import load_taskset

EXE = str(Path(sys.executable).with_name("lmrbench"))


def make_tree(root: Path, paths: list[str]) -> Path:
    """Files (and, with a trailing slash, empty folders) under ``root``."""
    for rel in paths:
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x\n")
    return root


def test_uneven_tree_matches_hand_counts(tmp_path) -> None:
    root = make_tree(
        tmp_path / "repo",
        ["a.py", "b.py", "pkg/__init__.py", "pkg/mod.py", "pkg/sub/deep.py", "docs/", "data/x.csv",
         "unit_test/test_a.py", ".git/HEAD", "paper.json", "pkg/__pycache__/mod.pyc"],
    )  # fmt: skip
    os.symlink(root / "pkg", root / "link_to_pkg")
    m = tree_metrics(root, {PurePosixPath("unit_test"), PurePosixPath("paper.json")})
    # nodes and their depths: a.py 1, b.py 1, pkg 1, pkg/__init__.py 2, pkg/mod.py 2, pkg/sub 2,
    # pkg/sub/deep.py 3, docs 1, data 1, data/x.csv 2  -> 16 / 10
    assert m.depth == pytest.approx(1.6)
    # folders with a child: root (3 subfolders), pkg (1), pkg/sub (0), data (0); docs is empty -> 4 / 4
    assert m.branch_factor == pytest.approx(1.0)
    # only the root splits into >= 2 subfolders: files below pkg 3, docs 0, data 1 -> (3 - 0) / 4
    assert m.imbalance == pytest.approx(0.75)
    assert (m.files, m.folders) == (6, 4)


def test_balanced_and_flat_trees(tmp_path) -> None:
    even = tree_metrics(make_tree(tmp_path / "even", ["l/x.py", "r/y.py", "l/z/w.py", "r/q/v.py"]))
    # depths 1,1,2,2,2,2,3,3 -> 16 / 8; branches root 2, l 1, r 1, l/z 0, r/q 0 -> 4 / 5
    assert (even.depth, even.branch_factor, even.imbalance) == (2.0, pytest.approx(0.8), 0.0)
    flat = tree_metrics(make_tree(tmp_path / "flat", ["a.py", "b.py", "c.py"]))
    assert (flat.depth, flat.branch_factor, flat.imbalance, flat.files, flat.folders) == (1.0, 0.0, 0.0, 3, 0)
    empty = tree_metrics(make_tree(tmp_path / "empty", ["only/"]))
    assert (empty.depth, empty.branch_factor, empty.imbalance) == (1.0, 1.0, 0.0)


def test_task_set_rows_and_the_cli(tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    tasks, _ = load_taskset(bench)
    rows, problems = structure(tasks)
    assert not problems
    # toy_repo without unit_test/ and the paper files: toy (1) and its three files (2) -> 7 / 4.
    # The paper's goal lines: SLOC of the golden goal file, 34 lines less 12 blank and 1 comment-only -> 21.
    assert [(r.task, r.impl, r.depth, r.branch_factor, r.imbalance, r.goal_lines) for r in rows] == [
        ("1-Toy", 1, 1.75, 0.5, 0.0, 21),
        ("1-Toy", 2, 1.75, 0.5, 0.0, 21),
        ("2-Async", 1, 1.75, 0.5, 0.0, 21),
    ]
    spans, _ = structure(tasks, "function-lines")
    assert [r.goal_lines for r in spans] == [
        6,  # dice: def, docstring and four lines
        4,  # Scaler.apply
        3,  # total
    ]
    out = subprocess.run([EXE, "analyze", "structure", str(bench), "--json", str(tmp_path / "s.json")],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "1-Toy" in out.stdout and "1.75" in out.stdout
    data = json.loads((tmp_path / "s.json").read_text())
    assert [r["goal_lines"] for r in data["rows"]] == [21, 21, 21] and data["goal_lines"] == "file-sloc"
    out = subprocess.run([EXE, "analyze", "structure", str(bench), "--goal-lines", "function-lines", "--format",
                          "json"], capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert [r["goal_lines"] for r in json.loads(out.stdout)["rows"]] == [6, 4, 3]  # the JSON alone on stdout
    bad = subprocess.run([EXE, "analyze", "structure", str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert bad.returncode == 1 and "error:" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_source_lines_leave_out_blank_and_comment_lines_only() -> None:
    from lmrbench.benchmark.analysis.structure import source_lines

    text = '# header\n\ndef f(x):\n    """Two\n    lines."""\n    # note\n\n    return x  # tail\n'
    assert source_lines(text) == 4  # def, both docstring lines, return
    assert source_lines("") == 0
    assert source_lines("def broken(:\n    x = '\n") == 2  # does not tokenize: non-blank, non-# lines


def test_an_empty_repository_folder_is_refused_with_a_line_and_the_others_are_measured(tmp_path) -> None:
    bench = write_taskset(tmp_path / "bench")
    repo = bench / "2-Async" / "toy_repo"
    for path in sorted(repo.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()  # an uninitialised submodule: the folder, nothing in it
    tasks, problems = load_taskset(bench)
    assert not problems
    rows, problems = structure(tasks)
    assert {r.task for r in rows} == {"1-Toy"}
    (problem,) = problems
    assert str(repo) in str(problem) and "holds no file" in str(problem)
