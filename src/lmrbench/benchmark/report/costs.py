"""Tokens and dollars per stage of a run (generation, the agent, each judge), from the usage each candidate,
agent outcome and verdict records and litellm's price table; a stage whose model the table does not know has an
unknown cost (None), never a cost of 0."""

from __future__ import annotations

from dataclasses import dataclass

from lmrbench.benchmark.agents.runner import outcome
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.samples import cost_of
from lmrbench.schemas.run import Usage


@dataclass
class StageCost:
    """What one stage of one run spent."""

    run: str
    stage: str
    """generation, agent or ``judge <name>``."""
    models: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


def _add(found: dict[str, Usage], model: str, usage: Usage) -> None:
    found[model] = found.get(model, Usage()).add(usage)


def _stage(run: str, stage: str, by_model: dict[str, Usage]) -> StageCost:
    total = Usage()
    costs = []
    for model, usage in by_model.items():
        total = total.add(usage)
        costs.append(cost_of(model, usage))
    return StageCost(run, stage, ", ".join(sorted(m for m in by_model if m)), total.calls, total.prompt_tokens,
                     total.completion_tokens, None if None in costs else sum(c or 0.0 for c in costs))  # fmt: skip


def stage_costs(run: RunDir, label: str) -> list[StageCost]:
    """The stages of one run folder that spent anything, in order: generation or agent, then each judge."""
    manifest = run.require_manifest()
    made: dict[str, Usage] = {}
    if manifest.source == "agent":
        for task in manifest.tasks:
            done = outcome(run, task.name)
            if done is not None:
                _add(made, done.model, done.usage)
    else:
        default = manifest.generation.model if manifest.generation else ""
        for cand in run.candidates():
            _add(made, cand.model or default, cand.usage)
    stages = [_stage(label, manifest.source if manifest.source == "agent" else "generation", made)] if made else []
    for name in run.judges():
        judged: dict[str, Usage] = {}
        for verdict in run.verdicts(name):
            _add(judged, verdict.judge.model, verdict.usage)
        if judged:
            stages.append(_stage(label, f"judge {name}", judged))
    return stages


def run_total(stages: list[StageCost]) -> float | None:
    """The run's dollars over its stages; None when any stage's cost is unknown."""
    costs = [s.cost for s in stages]
    return None if None in costs else sum(c or 0.0 for c in costs)
