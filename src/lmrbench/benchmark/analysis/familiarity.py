"""Familiarity (data contamination) scores: how probable a model finds each task's golden goal file.

The score of a task is the mean, over every token of its golden file(s), of the probability the model gives
that token conditional on the tokens before it, read from an OpenAI-compatible ``/completions`` endpoint
asked with ``echo: true`` and ``logprobs`` (one token is generated and ignored). A token without a logprob
(the first of the text, which has no context) is left out. Several golden files of a task are pooled
token by token. A high score means the model has likely seen the code. An endpoint that returns no logprobs
for the prompt (no echo support) is refused with one line: its numbers would not be a familiarity score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lmrbench.benchmark.analysis.outcomes import unit_test_outcomes
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMError
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress

COMPLETIONS_PATH = "/completions"


@dataclass(frozen=True)
class TokenScores:
    """Logprobs of the prompt tokens of one text (None-valued tokens already left out)."""

    logprobs: list[float]

    @property
    def mean_prob(self) -> float:
        """Mean per-token probability."""
        return sum(math.exp(lp) for lp in self.logprobs) / len(self.logprobs)


@dataclass
class TaskFamiliarity:
    """One task's score, or why there is none."""

    task: str
    files: list[str] = field(default_factory=list)
    tokens: int = 0
    mean_prob: float | None = None
    mean_logprob: float | None = None
    success: float | None = None
    """Share of the task's candidates (over the given runs) whose tests passed; None without runs."""
    error: str = ""


@dataclass
class Correlation:
    """Familiarity against success over the tasks that have both."""

    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    note: str = ""


@dataclass
class FamiliarityReport:
    """Every task's score and, with runs, the correlation with success."""

    model: str
    base_url: str
    tasks: list[TaskFamiliarity]
    correlation: Correlation | None = None

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)


def _prompt_logprobs(data: dict[str, Any], prompt: str, url: str) -> TokenScores:
    """The prompt tokens' logprobs from a /completions reply; LmrError when the endpoint gave none."""
    try:
        choice = data["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise LLMError("malformed", "reply is not a completion (no choices)", url) from None
    lp = choice.get("logprobs") if isinstance(choice, dict) else None
    values = lp.get("token_logprobs") if isinstance(lp, dict) else None
    if not isinstance(lp, dict) or not isinstance(values, list):
        raise LmrError(
            "the endpoint returned no logprobs; familiarity needs /completions with echo and logprobs (as vLLM serves)",
            url,
        )
    usage = data.get("usage") or {}
    n_prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    offsets = lp.get("text_offset")
    if not isinstance(n_prompt, int) and isinstance(offsets, list):
        n_prompt = sum(1 for o in offsets if isinstance(o, int) and o < len(prompt))
    if not isinstance(n_prompt, int) or n_prompt < 2 or len(values) < n_prompt:
        raise LmrError(
            "the endpoint returned logprobs for the generated tokens only, not the prompt (echo is not "
            "supported); familiarity needs /completions with echo and logprobs (as vLLM serves)",
            url,
        )
    kept = [float(v) for v in values[:n_prompt] if isinstance(v, int | float)]
    if not kept:
        raise LmrError("the endpoint returned no logprob for any prompt token", url)
    return TokenScores(kept)


def score_text(client: LLMClient, text: str) -> TokenScores:
    """The model's logprob of every token of ``text`` (conditional on the tokens before it)."""
    body = {
        "model": client.params.model,
        "prompt": text,
        "max_tokens": 1,
        "temperature": 0.0,
        "echo": True,
        "logprobs": 1,
    }
    data = client.post_json(COMPLETIONS_PATH, body)
    return _prompt_logprobs(data, text, client.params.base_url.rstrip("/") + COMPLETIONS_PATH)


def golden_files(task: Task) -> list[Path]:
    """The distinct golden files of a task, in implementation order."""
    seen: dict[Path, None] = {}
    for impl in task.info.implementations:
        for which in range(len(impl.goal_files)):
            seen.setdefault(task.golden_path(impl, which), None)
    return list(seen)


def task_familiarity(client: LLMClient, task: Task) -> TaskFamiliarity:
    """One task's score; a task-level problem (unreadable file, HTTP 400 for a too-long file) is recorded."""
    row = TaskFamiliarity(task=task.name)
    pooled: list[float] = []
    try:
        for path in golden_files(task):
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise LmrError(f"cannot read the golden file: {exc}", path) from None
            row.files.append(path.relative_to(task.path).as_posix())
            pooled += score_text(client, text).logprobs
    except LLMError as exc:
        if exc.kind != "client":
            raise
        row.error = str(exc)
        return row
    row.tokens = len(pooled)
    row.mean_prob = TokenScores(pooled).mean_prob
    row.mean_logprob = sum(pooled) / len(pooled)
    return row


def task_success(run_paths: Sequence[Path]) -> dict[str, float]:
    """Task -> share of its scored candidates (over every run) whose unit tests passed."""
    tally: dict[str, list[bool]] = {}
    for path in run_paths:
        run = RunDir(Path(path))
        run.require_manifest()
        for (task, _), ok in unit_test_outcomes(run).items():
            tally.setdefault(task, []).append(ok)
    return {task: sum(v) / len(v) for task, v in tally.items()}


def correlate(rows: Sequence[TaskFamiliarity]) -> Correlation:
    """Pearson and Spearman correlation of familiarity with success over the tasks that have both."""
    pairs = [(r.mean_prob, r.success) for r in rows if r.mean_prob is not None and r.success is not None]
    corr = Correlation(n=len(pairs))
    if len(pairs) < 3:
        corr.note = f"{len(pairs)} task(s) with both a score and a result: too few to correlate (need 3)"
        return corr
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(xs)) == 1 or len(set(ys)) == 1:
        corr.note = "familiarity or success is the same for every task: no correlation is defined"
        return corr
    from scipy import stats

    pr = stats.pearsonr(xs, ys)
    sr = stats.spearmanr(xs, ys)
    corr.pearson, corr.pearson_p = float(pr.statistic), float(pr.pvalue)
    corr.spearman, corr.spearman_p = float(sr.statistic), float(sr.pvalue)
    return corr


def familiarity(
    client: LLMClient, tasks: Sequence[Task], runs: Sequence[Path] = (), *, progress: Progress | None = None
) -> FamiliarityReport:
    """Score every task; with runs, attach each task's success and the correlation."""
    progress = progress or NullProgress()
    success = task_success(runs) if runs else {}
    progress.start("familiarity", len(tasks))
    rows = []
    for task in tasks:
        row = task_familiarity(client, task)
        row.success = success.get(task.name)
        rows.append(row)
        progress.advance(1, task.name)
    report = FamiliarityReport(model=client.params.model, base_url=client.params.base_url, tasks=rows)
    if runs:
        report.correlation = correlate(rows)
    return report
