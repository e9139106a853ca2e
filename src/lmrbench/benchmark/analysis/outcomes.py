"""Binary success of each candidate of a run, by unit tests or by human label (the regression's outcome).

Only the current candidate counts: a result or label made for an earlier candidate (another digest) is
ignored, as in the report. Candidates whose generation failed on the endpoint (an infrastructure error) and
results that are infrastructure errors are left out, never counted as failures.
"""

from __future__ import annotations

from typing import Literal

from lmrbench.benchmark.pipeline.rundir import RunDir, speaks_of_current
from lmrbench.schemas.run import CandidateStatus, HumanLabel, JudgeCategory, ResultStatus

Outcome = Literal["tests", "human"]
Key = tuple[str, int]


def unit_test_outcomes(run: RunDir) -> dict[Key, bool]:
    """(task, impl) -> whether every unit test passed, for each scored current candidate."""
    cands = {(c.task, c.impl): c for c in run.candidates()}
    out: dict[Key, bool] = {}
    for res in run.results():
        key = (res.task, res.impl)
        if not speaks_of_current(cands, key, res.candidate_digest) or res.status is ResultStatus.INFRA_ERROR:
            continue
        out[(res.task, res.impl)] = res.status is ResultStatus.PASSED
    return out


def read_human_labels(run: RunDir) -> list[HumanLabel]:
    """Every human label of a run. The one place that knows where labels are stored."""
    return run.labels()


def human_outcomes(run: RunDir) -> dict[Key, bool]:
    """(task, impl) -> whether the human label is the top grade (Completely Correct), for labelled candidates.

    With several labels of one candidate, success needs a majority of Completely Correct labels.
    """
    cands = {(c.task, c.impl): c for c in run.candidates()}
    votes: dict[Key, list[bool]] = {}
    for label in read_human_labels(run):
        key = (label.task, label.impl)
        cand = cands.get(key)
        if cand is not None and cand.status is CandidateStatus.LLM_ERROR:
            continue
        if label.candidate_digest and not speaks_of_current(cands, key, label.candidate_digest):
            continue
        votes.setdefault(key, []).append(label.label is JudgeCategory.COMPLETELY_CORRECT)
    return {key: 2 * sum(v) > len(v) for key, v in votes.items()}


def outcomes(run: RunDir, outcome: Outcome) -> dict[Key, bool]:
    """The success of each candidate of ``run`` under ``outcome``."""
    return unit_test_outcomes(run) if outcome == "tests" else human_outcomes(run)


def human_judge_pairs(run: RunDir, judge: str) -> list[tuple[JudgeCategory, JudgeCategory]]:
    """(human label, judge verdict) of every current candidate that has both (the confusion matrix's data)."""
    cands = {(c.task, c.impl): c for c in run.candidates()}
    verdicts = {(v.task, v.impl): v for v in run.verdicts(judge)}
    pairs = []
    for label in read_human_labels(run):
        key = (label.task, label.impl)
        verdict = verdicts.get(key)
        if verdict is None or verdict.category is None or not speaks_of_current(cands, key, verdict.candidate_digest):
            continue
        if label.candidate_digest and not speaks_of_current(cands, key, label.candidate_digest):
            continue
        pairs.append((label.label, verdict.category))
    return pairs
