"""The researcher's view of a set of runs, read from their folders: the per-sample rows, the leaderboard, the task
x run matrix and the cost of each stage. A run of samples (``generate --samples k``) is one run of k samples."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.benchmark.pipeline.rundir import RunDir, run_labels
from lmrbench.benchmark.pipeline.samples import expand_runs, run_folders
from lmrbench.benchmark.report.costs import StageCost, run_total, stage_costs
from lmrbench.benchmark.report.leaderboard import Standing, standings, task_matrix
from lmrbench.benchmark.report.samples import SampleRow, run_rows

__all__ = ["Results", "build_results", "run_folders", "stage_table"]


@dataclass
class Results:
    """Everything below Table 2 that a report shows and writes."""

    samples: list[SampleRow] = field(default_factory=list)
    board: list[Standing] = field(default_factory=list)
    matrix: tuple[list[str], list[list[str]]] = field(default_factory=lambda: (["Task"], []))
    stages: list[StageCost] = field(default_factory=list)


def build_results(runs: list[Path], *, judge: str | None = None) -> Results:
    """Read the runs (LmrError naming a folder that is no run) into their results."""
    entries = expand_runs(runs)
    first = {run: folder for run, _, folder in reversed(entries)}
    labels = dict(zip(first, run_labels(list(first.values())), strict=True))
    out = Results()
    spent: dict[str, list[StageCost]] = defaultdict(list)
    for run, sample, folder in entries:
        out.samples += run_rows(RunDir(folder), labels[run], sample, judge)
        stages = stage_costs(RunDir(folder), labels[run])
        spent[labels[run]] += stages
        out.stages += [StageCost(s.run if sample == 1 and len(_samples(entries, run)) == 1 else f"{s.run} #{sample}",
                                 s.stage, s.models, s.calls, s.prompt_tokens, s.completion_tokens, s.cost)
                       for s in stages]  # fmt: skip
    out.board = standings(out.samples)
    for standing in out.board:
        standing.cost = run_total(spent[standing.run])
    out.matrix = task_matrix(out.samples)
    return out


def _samples(entries: list[tuple[Path, int, Path]], run: Path) -> list[int]:
    return [sample for r, sample, _ in entries if r == run]


def stage_table(stages: list[StageCost]) -> tuple[list[str], list[list[str]]]:
    """Tokens and dollars per run and stage."""
    rows = [[s.run, s.stage, s.models or "-", str(s.calls), str(s.prompt_tokens), str(s.completion_tokens),
             "unknown" if s.cost is None else f"{s.cost:.4f}"] for s in stages]  # fmt: skip
    return ["Run", "Stage", "Model", "Calls", "Prompt tokens", "Completion tokens", "Cost $"], rows
