"""Check lmrbench against the official LMR-Bench repository, fetched outside the project.

    python benchmarks/official_results.py /path/to/LMR-Bench [--runs DIR]

PATH holds ``benchmark/`` (the task set, e.g. at commit 2198c422) and ``results/`` (the official results). The
script imports the results with the task set, then prints what the paper's tables need and checks the
figures a reader of the paper can verify: every one of the 168 labels joined with its judge verdict (exact
agreement 0.625), the unit-test accuracy of each run with a results.txt, the judge's Table 2 columns, and the
regression of Table 5 on the imported OpenHands runs. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from lmrbench.benchmark.analysis.paper_regression import beside_paper, row_evidence
from lmrbench.benchmark.analysis.regression import fit_logit, gather, table
from lmrbench.benchmark.analysis.structure import PREDICTORS, structure
from lmrbench.benchmark.labels.agreement import agreement
from lmrbench.benchmark.labels.official import import_official
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.paper_table import against_paper, difference_lines, summary_line
from lmrbench.benchmark.report.scoreboard import build_report
from lmrbench.core.taskset import load_taskset

UNIT = {"openhands_agent-gpt4o": 25.0, "openhands_agent-o4mini": 35.7, "no_agent-gpt4.1": 42.9}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="the official repository (benchmark/ and results/)")
    parser.add_argument("--runs", type=Path, help="where to write the imported runs (default: a temp folder)")
    args = parser.parse_args()
    runs_dir = args.runs or Path(tempfile.mkdtemp(prefix="lmrbench-official-"))
    bench, results = args.repo / "benchmark", args.repo / "results"
    failures: list[str] = []

    def check(ok: bool, what: str) -> None:
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    start = time.perf_counter()
    summary = import_official(results, runs_dir, bench=bench)
    print(f"import: {time.perf_counter() - start:.1f} s, {summary.verdicts} analyses, {summary.labels} labels, "
          f"{summary.unit_results} unit-test outcomes, {len(summary.runs)} runs into {runs_dir}")  # fmt: skip
    for line in summary.skipped_tasks + summary.not_imported:
        print(f"  {line}")
    runs = sorted(summary.runs.values())
    report = agreement(runs)
    hj = report.human_vs_judge
    check(hj.n == 168, f"human vs judge over every label: n = {hj.n} (168)")
    check(hj.exact is not None and round(hj.exact, 3) == 0.625, f"exact agreement {hj.exact} (0.625)")
    names = {t.name for t in load_taskset(bench)[0]}
    labelled = {lab.task for run in runs for lab in RunDir(run).labels()}
    check(labelled <= names, f"every label names a task folder of the set ({len(labelled)} tasks, e.g. 01-DPO)")
    board = build_report(runs)
    for row in board.rows:
        acc = "-" if row.accuracy is None else f"{row.accuracy:.1f}"
        judge = f"CC {row.pct(row.cc) or 0:.1f} LC {row.pct(row.lc) or 0:.1f} LI {row.pct(row.li) or 0:.1f}"
        print(f"  {row.run:28} unit {acc:>5} ({row.passed}/{row.passed + row.failed})  "
              f"{judge if row.judge else 'no judge'}")  # fmt: skip
    accuracy = {r.run: r.accuracy for r in board.rows}
    for run, expected in UNIT.items():
        got = accuracy.get(run)
        check(got is not None and round(got, 1) == expected, f"{run} unit-test accuracy {got} ({expected})")
    checks = against_paper(board)
    for line in difference_lines(checks):
        print(f"  {line}")
    print(f"  {summary_line(checks, 'Table 2')}")
    table2 = [c for c in checks if c.table == "Table 2"]
    differ = [c for c in table2 if not c.agrees]
    check(len(table2) == 42 and len(differ) == 11 and all(c.cause for c in differ),
          "Table 2: 42 cells beside the paper's, 11 differ or have no data, each with a cause")  # fmt: skip
    tasks, _ = load_taskset(bench)
    rows, problems = structure(tasks)
    for p in problems:
        print(f"  structure: {p}")
    openhands = [summary.runs[n] for n in ("openhands_agent-gpt4o", "openhands_agent-o4mini",
                                           "openhands_agent-gpt4.1")]  # fmt: skip
    obs, parts = gather(openhands, rows, "tests")
    result = fit_logit(obs, PREDICTORS, reference="openhands_agent-gpt4.1")
    headers, body = table(result)
    print(f"Table 5 (ours): n = {result.n}, successes = {result.successes}, pseudo R2 = {result.pseudo_r2:.3f}")
    print("  " + " | ".join(headers))
    for line in body:
        print("  " + " | ".join(line))
    side_headers, side = beside_paper(result, parts)
    print("Table 5 beside the paper's (reference GPT-4.1):\n  " + " | ".join(side_headers))
    for line in side:
        print("  " + " | ".join(line))
    for line in row_evidence(result, parts):
        print(f"  rows: {line}")
    check(result.n > 0 and result.reference_model == "openhands_agent-gpt4.1",
          "the regression runs on the imported OpenHands runs, GPT-4.1 the reference")  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
