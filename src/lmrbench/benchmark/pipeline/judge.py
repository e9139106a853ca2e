"""The LLM judge: compare each candidate's goal functions with the golden ones (the paper's Appendix C).

Only the goal functions are shown (``extract_function`` on the golden file and on the candidate's goal file,
with the imports, helpers and constants the candidate added beside them), the candidate between tags it
cannot forge. The reply must be a JSON object with a category 1-3 and rationale bullets; a malformed reply
is asked again (up to ``max_attempts`` requests), then recorded as no verdict, never as a category. A
candidate without usable code (no goal function, a parse error) is Logically Incorrect without a request,
as the paper counts it. One verdict file per candidate and judge; a re-run redoes only missing, stale or
no-verdict ones.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from pathlib import Path

from lmrbench import jsonsafe
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMError
from lmrbench.benchmark.pipeline.prompts import (
    JUDGE_PROMPT_VERSION,
    JUDGE_VERSIONS_SAME_SCALE,
    judge_messages,
    judge_retry_messages,
)
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model, slug, unless_broken
from lmrbench.benchmark.pipeline.stage import StageSummary, run_jobs
from lmrbench.core.source.candidate_splice import splice_candidate
from lmrbench.core.source.splice import extract_function
from lmrbench.core.source.tree import goal_plan, read_source
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.progress import Progress
from lmrbench.schemas.run import Candidate, CandidateStatus, JudgeCategory, JudgeEntry, Usage, Verdict
from lmrbench.schemas.task_info import Implementation

_NAMES = {
    "completely correct": JudgeCategory.COMPLETELY_CORRECT,
    "logically correct": JudgeCategory.LOGICALLY_CORRECT,
    "logically incorrect": JudgeCategory.LOGICALLY_INCORRECT,
}
NO_VERDICT = "no_verdict"


def parse_verdict(text: str) -> tuple[JudgeCategory, list[str]]:
    """The category and rationale of a judge reply; ValueError with the problem when it does not validate."""
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*\n(.*?)```", body, re.S)
    if fence:
        body = fence.group(1).strip()
    try:
        data = jsonsafe.loads(body)
    except ValueError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the reply holds no JSON object") from None
        try:
            data = jsonsafe.loads(body[start : end + 1])
        except ValueError as exc:
            raise ValueError(f"the JSON object does not parse ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("the reply is JSON but not an object")
    raw = data.get("category")
    category: JudgeCategory | None = None
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 3:
        category = JudgeCategory.from_score(raw)
    elif isinstance(raw, str):
        key = raw.strip().lower().replace("_", " ")
        if key in {"1", "2", "3"}:
            category = JudgeCategory.from_score(int(key))
        else:
            category = _NAMES.get(re.sub(r"^[123][.):]?\s*", "", key))
    if category is None:
        raise ValueError(f'"category" must be 1, 2 or 3, not {raw!r}')
    rationale = data.get("rationale")
    if isinstance(rationale, str):
        rationale = [line.strip().lstrip("-*• ").strip() for line in rationale.splitlines()]
    if not isinstance(rationale, list) or not all(isinstance(r, str) for r in rationale):
        raise ValueError('"rationale" must be a list of strings')
    bullets = [r.strip() for r in rationale if r.strip()]
    if not bullets:
        raise ValueError('"rationale" is empty')
    return category, bullets


def scoped_sources(run: RunDir, task: Task, impl: Implementation) -> tuple[str, str]:
    """(golden goal functions, candidate goal functions) as text; LmrError when one cannot be read."""
    golden_parts, cand_parts = [], []
    folder = run.candidate_dir(task.name, impl.index) / task.info.repo_folder_name
    for which, (rel, quals) in enumerate(goal_plan(task, impl)):
        golden_path = task.golden_path(impl, which)
        cand_path = folder / rel
        golden = read_source(golden_path, golden_path)
        cand = read_source(cand_path, cand_path)
        masked = read_source(task.goal_path(impl, which), task.goal_path(impl, which))
        kept = splice_candidate(masked, cand, quals, file=rel, donor_file=str(cand_path)).kept_source
        if kept:
            cand_parts.append(kept.rstrip("\n"))
        for q in quals:
            golden_parts.append(extract_function(golden, q, file=str(golden_path)))
            cand_parts.append(extract_function(cand, q, file=str(cand_path)))
    return "\n\n".join(golden_parts), "\n\n".join(cand_parts)


def judge_one(
    run: RunDir,
    task: Task,
    impl: Implementation,
    cand: Candidate,
    client: LLMClient,
    *,
    max_attempts: int = 3,
) -> Verdict:
    """Ask the judge about one candidate and write the verdict (or the reason there is none)."""
    base = Verdict(
        task=task.name,
        impl=impl.index,
        candidate_digest=cand.digest,
        judge=client.params,
        prompt_version=JUDGE_PROMPT_VERSION,
    )
    try:
        golden, candidate = scoped_sources(run, task, impl)
    except LmrError as exc:
        verdict = base.model_copy(update={"reason": f"sources: {exc}"})
        save_model(run.verdict_path(slug(client.params.model), task.name, impl.index), verdict)
        return verdict
    first = judge_messages(task.info.paper_name, impl.instruction, golden, candidate)
    messages = first
    usage = Usage()
    attempts = 0
    verdict = base
    while attempts < max(1, max_attempts):
        attempts += 1
        try:
            reply = client.complete(messages)
        except LLMError as exc:
            verdict = base.model_copy(update={"reason": f"endpoint: {exc}"})
            break
        usage = usage.add(reply.usage)
        try:
            category, bullets = parse_verdict(reply.text)
        except ValueError as exc:
            client.evict(reply)  # never reuse an unusable reply from the cache
            verdict = base.model_copy(
                update={
                    "reason": f"invalid reply after {attempts} attempt(s): {exc}",
                    "raw_reply": reply.text,
                }
            )
            messages = judge_retry_messages(first, reply.text, str(exc))
            continue
        verdict = base.model_copy(
            update={"category": category, "rationale": bullets, "raw_reply": reply.text, "reason": ""}
        )
        break
    verdict = verdict.model_copy(update={"attempts": attempts, "usage": usage})
    save_model(run.verdict_path(slug(client.params.model), task.name, impl.index), verdict)
    return verdict


def no_code_verdict(run: RunDir, cand: Candidate, client: LLMClient) -> Verdict:
    """Write the verdict on a candidate without usable code (no goal function, code that does not parse):
    Logically Incorrect, as the paper counts it, without asking the judge; the rationale says why."""
    verdict = Verdict(
        task=cand.task,
        impl=cand.impl,
        category=JudgeCategory.LOGICALLY_INCORRECT,
        rationale=[f"no usable code ({cand.status.value}): {cand.reason or 'nothing to judge'}"],
        candidate_digest=cand.digest,
        judge=client.params,
        prompt_version=JUDGE_PROMPT_VERSION,
    )
    save_model(run.verdict_path(slug(client.params.model), cand.task, cand.impl), verdict)
    return verdict


def is_current(verdict: Verdict | None, cand: Candidate, client: LLMClient) -> bool:
    """True when the verdict is a category for this exact candidate, judge settings and prompt version."""
    if verdict is None or verdict.category is None:
        return False
    same_params = verdict.judge.model_dump(exclude={"base_url"}) == client.params.model_dump(
        exclude={"base_url"}
    )
    return (
        same_params
        and verdict.candidate_digest == cand.digest
        and verdict.prompt_version in JUDGE_VERSIONS_SAME_SCALE
    )


def judge(
    tasks: list[Task],
    run_path: Path,
    client: LLMClient,
    *,
    jobs: int = 4,
    max_attempts: int = 3,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Judge every candidate with code that lacks a current verdict from this judge."""
    run = RunDir(Path(run_path))
    manifest = run.require_manifest()
    judges = dict(manifest.judges)
    judges[slug(client.params.model)] = JudgeEntry(params=client.params, prompt_version=JUDGE_PROMPT_VERSION)
    run.save_manifest(manifest.model_copy(update={"judges": judges}))
    summary = StageSummary()
    todo: list[tuple[Task, Implementation, Candidate]] = []
    for task in tasks:
        for impl in task.info.implementations:
            cand = run.candidate(task.name, impl.index)
            if cand is None or cand.status is CandidateStatus.LLM_ERROR:
                continue
            prior = unless_broken(run.verdict, slug(client.params.model), task.name, impl.index)
            if is_current(prior, cand, client):
                summary.skipped += 1
            elif cand.status is not CandidateStatus.OK:
                verdict = no_code_verdict(run, cand, client)
                summary.statuses[verdict.category.value if verdict.category else NO_VERDICT] += 1
            else:
                todo.append((task, impl, cand))

    def work(job: tuple[Task, Implementation, Candidate]) -> tuple[str, Usage]:
        verdict = judge_one(run, job[0], job[1], job[2], client, max_attempts=max_attempts)
        if verdict.category is None:
            summary.problems.append(f"{verdict.task}#{verdict.impl}: no verdict: {verdict.reason}")
            return NO_VERDICT, verdict.usage
        return verdict.category.value, verdict.usage

    return run_jobs(
        todo,
        work,
        label="judge",
        workers=jobs,
        summary=summary,
        progress=progress,
        cancel=cancel,
        describe=lambda j: f"{j[0].name}#{j[1].index}",
    )


def verdict_counts(run: RunDir, judge_name: str) -> Counter[str]:
    """Verdicts on disk by category (``no_verdict`` for none), rebuilt from every file."""
    return Counter(v.category.value if v.category else NO_VERDICT for v in run.verdicts(judge_name))
