"""The per-sample table: one row per run, task, implementation and sample, as researchers read results (the
shape of Inspect's sample log and SWE-bench's per-instance report), written as CSV and JSONL (and parquet where
pandas is installed).

A row holds the unit-test status (``pending`` without a result for the current candidate; the candidate's own
status, such as ``parse_error``, when it has no usable code), the ids of the failing test cases, the judge's
category, the tokens spent making the candidate (an agent's tokens are the task's: they sit on its first
implementation), their dollar cost from litellm's price table (``None``: the model's price is unknown) and the
seconds its tests ran.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lmrbench.benchmark.agents.pricing import known, price
from lmrbench.benchmark.agents.runner import outcome
from lmrbench.benchmark.pipeline.rundir import RunDir, speaks_of_current
from lmrbench.fsutil import atomic_write_bytes, atomic_write_text
from lmrbench.schemas.run import CandidateStatus, Usage

COLUMNS = ("run", "task", "impl", "sample", "status", "failing", "judge", "category", "prompt_tokens",
           "completion_tokens", "cost", "seconds")  # fmt: skip


@dataclass
class SampleRow:
    """One implementation of one task in one sample of a run."""

    run: str
    task: str
    impl: int
    sample: int
    status: str
    failing: list[str] = field(default_factory=list)
    judge: str = ""
    category: str = ""
    """CC, LC or LI (empty: no current verdict)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    """Dollars for the tokens above; None when the model's price is unknown."""
    seconds: float = 0.0

    @property
    def scored(self) -> bool:
        """Whether the row counts for accuracy: a unit-test outcome that is not an infrastructure error."""
        return self.status in ("passed", "failed", "timeout")


def cost_of(model: str, usage: Usage) -> float | None:
    """Dollars for ``usage`` of ``model``; 0 for no tokens, None when the price table does not know the model."""
    if usage.prompt_tokens + usage.completion_tokens == 0:
        return 0.0
    return price(model, usage) if known(model) else None


def run_rows(run: RunDir, label: str, sample: int = 1, judge: str | None = None) -> list[SampleRow]:
    """The rows of one run folder (``judge``: whose verdicts; default the first judge of the run)."""
    manifest = run.require_manifest()
    cands = {(c.task, c.impl): c for c in run.candidates()}
    results = {(r.task, r.impl): r for r in run.results()}
    judges = run.judges()
    name = judge if judge in judges else (judges[0] if judges else "")
    verdicts = {(v.task, v.impl): v for v in run.verdicts(name)} if name else {}
    keys = {(t.name, i) for t in manifest.tasks for i in t.implementations} | set(cands) | set(results)
    rows: list[SampleRow] = []
    agent_done: set[str] = set()
    for task, impl in sorted(keys):
        cand, res, verdict = cands.get((task, impl)), results.get((task, impl)), verdicts.get((task, impl))
        row = SampleRow(run=label, task=task, impl=impl, sample=sample, status="pending", judge=name)
        if res is not None and speaks_of_current(cands, (task, impl), res.candidate_digest):
            row.status, row.seconds = res.status.value, round(res.duration, 3)
            row.failing = sorted(res.failures)
        elif cand is not None and cand.status is not CandidateStatus.OK:
            row.status = cand.status.value
        if verdict is not None and verdict.category is not None and \
                speaks_of_current(cands, (task, impl), verdict.candidate_digest):
            row.category = verdict.category.short
        usage, model = (cand.usage, cand.model) if cand is not None else (Usage(), "")
        done = outcome(run, task) if manifest.source == "agent" and task not in agent_done else None
        if done is not None:
            agent_done.add(task)
            usage, model = done.usage, done.model
        row.prompt_tokens, row.completion_tokens = usage.prompt_tokens, usage.completion_tokens
        row.cost = cost_of(model or (manifest.generation.model if manifest.generation else ""), usage)
        rows.append(row)
    return rows


def _cells(row: SampleRow) -> dict[str, object]:
    data = asdict(row)
    data["failing"] = ";".join(row.failing)
    return data


def render_csv(rows: list[SampleRow]) -> str:
    """The table as CSV (``failing``: the ids joined by ``;``; ``cost`` empty when unknown)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in _cells(row).items()})
    return buf.getvalue()


def render_jsonl(rows: list[SampleRow]) -> str:
    """The table as JSON lines (``failing`` a list; ``cost`` null when unknown)."""
    return "".join(json.dumps(asdict(row), ensure_ascii=False) + "\n" for row in rows)


def write_samples(rows: list[SampleRow], out: Path) -> list[Path]:
    """Write samples.csv and samples.jsonl into ``out`` (and samples.parquet when pandas and pyarrow are there)."""
    written = []
    for name, text in (("samples.csv", render_csv(rows)), ("samples.jsonl", render_jsonl(rows))):
        atomic_write_text(Path(out) / name, text)
        written.append(Path(out) / name)
    try:
        import pandas as pd

        buf = io.BytesIO()
        pd.DataFrame([_cells(r) for r in rows], columns=list(COLUMNS)).to_parquet(buf, index=False)
    except (ImportError, ValueError):
        return written  # no parquet engine: CSV and JSONL say the same
    atomic_write_bytes(Path(out) / "samples.parquet", buf.getvalue())
    return [*written, Path(out) / "samples.parquet"]
