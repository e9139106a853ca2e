"""Standard prompting: ask a model for each implementation of a task set, save each reply as a candidate.

A candidate folder holds the raw reply (reply.txt), candidate.json and, when the reply held the goal
functions, the masked goal file with them (and the new imports, helpers and constants beside them) spliced in
at ``<repo folder>/<goal file>``; candidate.json's ``reason`` says which code block they came from.

pass@1 is pass@1: a reply without usable code (a refusal, code that does not parse) is the model's answer for
that sample, kept and graded as a failure. A re-run asks again only where the endpoint failed (an
infrastructure error); ``retry_failed`` asks again for the wrong answers too, with the cache bypassed, and keeps
every earlier attempt under ``RUN/attempts/<task>/<impl>/<n>/``.
Every attempt, a rejected or failed one too, also adds a line to ``RUN/attempts/<task>/<impl>.jsonl``: when,
the status and reason, the raw reply, its finish reason, tokens, requests sent (retries included) and whether it
came from the cache.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from lmrbench.benchmark.pipeline.context import CONTEXT_KEY, ContextSetting
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMError, LLMReply
from lmrbench.benchmark.pipeline.manifest import finish_manifest, start_manifest
from lmrbench.benchmark.pipeline.prompts import DEFAULT_MAX_PAPER_CHARS, generate_prompt_version, generation_prompt
from lmrbench.benchmark.pipeline.reply import ReplyProblem, splice_reply
from lmrbench.benchmark.pipeline.rundir import CANDIDATE_JSON, REPLY_TXT, RunDir, digest_files, save_model
from lmrbench.benchmark.pipeline.stage import StageSummary, run_jobs
from lmrbench.core.source.candidate_splice import merge_notes
from lmrbench.core.source.tree import goal_plan, read_source
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text, staging_dir
from lmrbench.progress import Progress
from lmrbench.pyparse import encode_source
from lmrbench.schemas.run import Candidate, CandidateStatus, RunManifest, Usage
from lmrbench.schemas.task_info import Implementation


@dataclass(frozen=True)
class GenerateOptions:
    """Settings that shape the candidates (recorded in run.json)."""

    max_paper_chars: int = DEFAULT_MAX_PAPER_CHARS
    """Paper text budget (see prompts.truncate_paper)."""
    jobs: int = 4
    """Implementations in flight at once (the client's concurrency caps the requests)."""
    context: ContextSetting = "full"
    """What the prompt shows of the repository (see benchmark.context); evaluation always uses all of it."""
    retry_failed: bool = False
    """Ask again for candidates without usable code too (every earlier attempt is kept in the run)."""
    force: bool = False
    """Start a new run where the existing one was made with other settings (the old one is moved aside)."""


def write_candidate(run: RunDir, task: Task, cand: Candidate, reply: str, files: dict[str, str]) -> Candidate:
    """Write a whole candidate folder (replacing an earlier one); returns the candidate with its digest."""
    try:
        blobs = {rel: encode_source(text) for rel, text in files.items()}
    except UnicodeEncodeError as exc:
        bad = cand.model_copy(update={"status": CandidateStatus.PARSE_ERROR,
                                      "reason": f"a character has no place in the file's {exc.encoding}"})
        return write_candidate(run, task, bad, reply, {})
    cand = cand.model_copy(
        update={"digest": digest_files(blobs, salt=cand.status.value), "goal_files": list(files)}
    )
    with staging_dir(run.candidate_dir(task.name, cand.impl), replace=True) as tmp:
        (tmp / REPLY_TXT).write_text(reply, "utf-8")
        for rel, data in blobs.items():
            dest = tmp / task.info.repo_folder_name / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        save_model(tmp / CANDIDATE_JSON, cand)
    return cand


ATTEMPTS_DIR = "attempts"


def attempts_path(run: RunDir, task: str, impl: int) -> Path:
    """The log of every attempt at one implementation (JSONL, oldest first)."""
    return run.path / ATTEMPTS_DIR / task / f"{impl}.jsonl"


def attempts(run: RunDir, task: str, impl: int) -> list[dict[str, object]]:
    """The attempts at one implementation, oldest first ([] when none is logged)."""
    path = attempts_path(run, task, impl)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _log_attempt(run: RunDir, task: Task, cand: Candidate, reply: LLMReply | None) -> Candidate:
    """Add ``cand``'s attempt (and the raw reply it came from) to its log; returns ``cand``."""
    entry = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "status": cand.status.value,
        "reason": cand.reason,
        "reply": reply.text if reply is not None else None,
        "finish_reason": reply.finish_reason if reply is not None else "",
        "prompt_tokens": reply.usage.prompt_tokens if reply is not None else 0,
        "completion_tokens": reply.usage.completion_tokens if reply is not None else 0,
        "requests": reply.attempts if reply is not None else 0,
        "cached": reply.cached if reply is not None else False,
    }
    path = attempts_path(run, task.name, cand.impl)
    before = path.read_text("utf-8") if path.is_file() else ""
    atomic_write_text(path, before + json.dumps(entry, ensure_ascii=False) + "\n")
    return cand


def generate_one(
    run: RunDir, task: Task, impl: Implementation, client: LLMClient, options: GenerateOptions, *, fresh: bool = False
) -> Candidate:
    """Ask for one implementation and write its candidate (whatever happens, a candidate.json says what, and the
    attempt is logged beside the others)."""
    cand, reply = _generate_one(run, task, impl, client, options, fresh)
    return _log_attempt(run, task, cand, reply)


def _generate_one(
    run: RunDir, task: Task, impl: Implementation, client: LLMClient, options: GenerateOptions, fresh: bool
) -> tuple[Candidate, LLMReply | None]:
    base = Candidate(
        task=task.name,
        impl=impl.index,
        source="generate",
        status=CandidateStatus.OK,
        model=client.params.model,
        prompt_version=generate_prompt_version(options.context),
    )
    try:
        plan = goal_plan(task, impl)
        prompt = generation_prompt(
            task, impl, impl.qualnames, max_paper_chars=options.max_paper_chars, context=options.context, plan=plan
        )
    except (LmrError, OSError, UnicodeDecodeError) as exc:
        bad = base.model_copy(update={"status": CandidateStatus.LLM_ERROR, "reason": f"task: {exc}"})
        return write_candidate(run, task, bad, "", {}), None
    try:
        reply = client.complete(prompt.messages, use_cache=not fresh)  # fresh: a new sample, not the cached one
    except LLMError as exc:
        bad = base.model_copy(update={"status": CandidateStatus.LLM_ERROR, "reason": str(exc)})
        return write_candidate(run, task, bad, "", {}), None
    base = base.model_copy(update={"usage": reply.usage})
    files: dict[str, str] = {}
    functions: list[str] = []
    notes: dict[str, list[str]] = {}
    taken: list[int] = []
    total = 0
    try:
        for which, (rel, quals) in enumerate(plan):
            masked = read_source(task.goal_path(impl, which), task.goal_path(impl, which))
            spliced = splice_reply(reply.text, masked, quals, file=rel)
            files[rel] = spliced.source
            functions += spliced.functions
            if spliced.splice is not None:
                merge_notes(notes, spliced.splice)
            taken += [b for b in spliced.blocks if b not in taken]
            total = spliced.total_blocks
    except ReplyProblem as exc:  # the model's answer for this sample: kept, graded as a failure
        reason = exc.reason
        if reply.finish_reason == "length":
            reason += f" (the reply was cut at --max-tokens {client.params.max_tokens})"
        bad = base.model_copy(update={"status": CandidateStatus(exc.status), "reason": reason})
        return write_candidate(run, task, bad, reply.text, {}), reply
    reason = f"code from block {', '.join(map(str, sorted(taken)))} of {total}"
    if prompt.missing_context:
        reason += f"; retrieval context not found: {', '.join(prompt.missing_context)}"
    cand = base.model_copy(update={"functions": functions, **notes, "reason": reason})
    return write_candidate(run, task, cand, reply.text, files), reply


def generate(
    tasks: list[Task],
    run_path: Path,
    client: LLMClient,
    *,
    bench: str = "",
    options: GenerateOptions | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Generate a candidate for every implementation that has none yet, or whose request failed (an
    infrastructure error); with ``options.retry_failed`` also for those without usable code, keeping the
    earlier attempts."""
    from lmrbench import __version__

    options = options or GenerateOptions()
    run = RunDir(Path(run_path))
    start_manifest(
        run,
        tasks,
        RunManifest(
            tool_version=__version__,
            source="generate",
            label=client.params.model,
            bench=bench,
            generation=client.params,
            prompt_version=generate_prompt_version(options.context),
            settings={
                "max_paper_chars": str(options.max_paper_chars),
                CONTEXT_KEY: options.context,
            },
        ),
        force=options.force,
    )
    summary = StageSummary()
    jobs: list[tuple[Task, Implementation]] = []
    retried: set[tuple[str, int]] = set()
    for task in tasks:
        for impl in task.info.implementations:
            old = run.candidate(task.name, impl.index)
            if old is None or old.status is CandidateStatus.LLM_ERROR:
                jobs.append((task, impl))
            elif options.retry_failed and old.status is not CandidateStatus.OK:
                keep_attempt(run, task.name, impl.index)
                retried.add((task.name, impl.index))
                jobs.append((task, impl))
            else:
                summary.skipped += 1

    def work(job: tuple[Task, Implementation]) -> tuple[str, Usage]:
        fresh = (job[0].name, job[1].index) in retried
        cand = generate_one(run, job[0], job[1], client, options, fresh=fresh)
        line = f"{cand.task}#{cand.impl}: {cand.status.value}: {cand.reason}"
        if cand.status is CandidateStatus.LLM_ERROR:
            summary.problems.append(line)
        elif cand.status is not CandidateStatus.OK:
            summary.notes.append(f"wrong answer kept: {line}")
        return cand.status.value, cand.usage

    try:
        return run_jobs(jobs, work, label="generate", workers=options.jobs, summary=summary, progress=progress,
                        cancel=cancel, describe=lambda j: f"{j[0].name}#{j[1].index}")
    finally:
        finish_manifest(run)


def keep_attempt(run: RunDir, task: str, impl: int) -> Path:
    """Copy a candidate's folder to the next ``RUN/attempts/<task>/<impl>/<n>/`` before it is asked again."""
    root = run.path / "attempts" / task / str(impl)
    n = 1 + max((int(p.name) for p in root.glob("*") if p.name.isdigit()), default=0)
    dest = root / str(n)
    with staging_dir(dest) as tmp:
        shutil.copytree(run.candidate_dir(task, impl), tmp, dirs_exist_ok=True)
    return dest
