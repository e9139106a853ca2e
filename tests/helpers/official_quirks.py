"""An official task set and results folder with the quirks of the published ones, written by the tests.

The task set pads its folder names (``01-Alpha``) where the results do not (``1-Alpha``); ``04-Sub`` is an
uninitialised git submodule (an empty repository folder) and ``05-Broken`` has an info.json that does not
parse. The results hold labels, judge analyses, two unit-test ``results.txt`` in the shapes the official
statistics script writes (``PASS`` and ``PASS fail_count: 0``, a log without a number, a task that left no log
folder, totals), a model with unit tests only, and the folders and files an import leaves alone (agent logs,
a notebook, the judge's own summary.txt).
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.tasks import Impl, write_task

GOLDEN = '''"""A toy module."""

import math


# Equation 1.
def alpha(x):
    """Alpha."""
    return math.sqrt(x)


def beta(x):
    return x + 1


def gamma(x):
    return x * 2
'''
GOLDEN_SLOC = 9
"""Lines of GOLDEN that hold code (17 lines, less 7 blank and 1 comment-only)."""

# Task folder in the set, the name the results use, repo folder, goal functions, tree (extra files).
TASKS = [
    ("01-Alpha", "1-Alpha", "alpha-repo", ["alpha"], ["pkg/a.py", "pkg/b.py", "README.md"]),
    ("02-Beta", "2-Beta", "beta_repo", ["beta", "gamma"], ["x.py", "deep/er/y.py", "data/z.py"]),
    ("03-Gamma", "3-Gamma", "gamma", ["gamma"], ["g.py"]),
    ("04-Sub", "4-Sub", "sub", ["alpha"], []),
]

# (agent folder, model, results name, function index, judge score, human score)
ITEMS = [
    ("OpenHands", "m1", "1-Alpha", 0, 3, 3),
    ("OpenHands", "m1", "2-Beta", 0, 1, 1),
    ("OpenHands", "m1", "2-Beta", 1, 2, 1),
    ("OpenHands", "m1", "3-Gamma", 0, 1, 2),
    ("OpenHands", "m1", "4-Sub", 0, 1, 1),
    ("BaseAgent", "m1", "1-Alpha", 0, 2, 2),
    ("BaseAgent", "m1", "2-Beta", 0, 1, 1),
    ("BaseAgent", "m1", "2-Beta", 1, 1, 1),
]
# human vs judge: (3,3) (1,1) (1,2) (2,1) (1,1) (2,2) (1,1) (1,1) -> exact 6/8

UNITS = {
    ("OpenHands", "m1"): (
        "1-Alpha/unit_test_1.log: PASS fail_count: 0\n"
        "2-Beta/unit_test_1.log: FAIL (found 2 failure lines)\n"
        "2-Beta/unit_test_2.log: PASS\n"
        "/home/someone/outputs/OpenHands/m1/3-Gamma/gamma/unit_test/logs is not a directory\n"
        "4-Sub/unit_test.log: FAIL (found 0 failure lines)\n"
        "\nTotal log files: 5\nPassed files:    2\nFailed files:    3\nOverall pass rate: 40.00%\n"
    ),
    ("OpenHands", "m2"): (
        "1-Alpha/unit_test.log: PASS\n"
        "2-Beta/unit_test_1.log: PASS\n"
        "/home/someone/outputs/OpenHands/m2/2-Beta/beta_repo/unit_test/logs is not a directory\n"
        "\nTotal log files: 4\nPassed files:    2\nFailed files:    2\nOverall pass rate: 50.00%\n"
    ),
}
"""m1: 2 of 5 pass (40.0); m2 (unit tests only): the missing log folder of 2-Beta fails both of its
implementations, and its totals (4 files) disagree with its 3 lines."""


def write_quirky_bench(bench: Path) -> Path:
    """The task set (see the module); returns ``bench``."""
    for name, _, repo, functions, tree in TASKS:
        impls = [Impl(fn, f"unit_test/unit_test_{k}.py", category="Evaluation Metrics")
                 for k, fn in enumerate(functions, 1)]  # fmt: skip
        files = {rel: "x = 1\n" for rel in tree}
        task = write_task(bench, name, repo=repo, goal_file="mod.py", goal=GOLDEN, golden=GOLDEN, impls=impls,
                          files=files)  # fmt: skip
        if not tree:  # an uninitialised submodule: the folder is there, empty
            for path in sorted((task / repo).rglob("*"), reverse=True):
                path.rmdir() if path.is_dir() else path.unlink()
    broken = bench / "05-Broken"
    broken.mkdir()
    (broken / "info.json").write_text("{ not json")
    return bench


def write_quirky_results(root: Path) -> Path:
    """The results folder (see the module); returns ``root``."""
    repos = {results_name: repo for _, results_name, repo, _, _ in TASKS}
    labels: list[dict[str, object]] = []
    for folder, model, name, fi, judge, human in ITEMS:
        path = root / "llm_as_a_judge_evaluation" / folder / model / f"{name}_{repos[name]}_{fi}_analysis.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'Analysis.\n{{"category": "{judge}", "rationale": ["says {judge}"]}}\n')
        labels.append({
            "annotator": "ann", "agent_type": "openhands_agent" if folder == "OpenHands" else "no_agent",
            "model_name": model, "paper_index": int(name.split("-")[0]), "function_index": fi,
            "human_judge_result": human, "comment": "",
        })  # fmt: skip
    (root / "llm_as_a_judge_evaluation" / "OpenHands" / "m1" / "summary.txt").write_text("Total cases: 2\n")
    human = root / "human_evaluation"
    (human / ".ipynb_checkpoints").mkdir(parents=True)
    (human / "ann.json").write_text(json.dumps(labels, indent=2))
    (human / "analysis.ipynb").write_text("{}")
    (human / ".ipynb_checkpoints" / "ann-checkpoint.json").write_text("[]")
    for (folder, model), text in UNITS.items():
        path = root / "unit_test_evaluation" / folder / model / "results.txt"
        path.parent.mkdir(parents=True)
        path.write_text(text)
    logs = root / "logs" / "OpenHands" / "m1"
    logs.mkdir(parents=True)
    (logs / "output.jsonl").write_text("{}\n")
    return root
