"""Standard prompting: ask a model for each implementation of a task set, save each reply as a candidate.

A candidate folder holds the raw reply (reply.txt), candidate.json and, when the reply held the goal
functions, the masked goal file with them (and the new imports, helpers and constants beside them) spliced in
at ``<repo folder>/<goal file>``; candidate.json's ``reason`` says which code block they came from. A re-run redoes
only the implementations without an ``ok`` candidate (endpoint errors, replies without a usable function).
Every attempt, a rejected or failed one too, adds a line to ``RUN/attempts/<task>/<impl>.jsonl``: when, the
status and reason, the raw reply, its finish reason, tokens, requests sent (retries included) and whether it came
from the cache; the candidate folder holds the last one only.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from lmrbench.benchmark.pipeline.context import CONTEXT_KEY, ContextSetting
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMError, LLMReply
from lmrbench.benchmark.pipeline.prompts import DEFAULT_MAX_PAPER_CHARS, generate_prompt_version, generation_prompt
from lmrbench.benchmark.pipeline.reply import ReplyProblem, splice_reply
from lmrbench.benchmark.pipeline.rundir import CANDIDATE_JSON, REPLY_TXT, RunDir, digest_files, save_model, task_entry
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
    run: RunDir, task: Task, impl: Implementation, client: LLMClient, options: GenerateOptions
) -> Candidate:
    """Ask for one implementation and write its candidate (whatever happens, a candidate.json says what, and the
    attempt is logged beside the others)."""
    cand, reply = _generate_one(run, task, impl, client, options)
    return _log_attempt(run, task, cand, reply)


def _generate_one(
    run: RunDir, task: Task, impl: Implementation, client: LLMClient, options: GenerateOptions
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
        reply = client.complete(prompt.messages)
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
    except ReplyProblem as exc:
        client.evict(reply)  # a re-run asks again rather than reading the same unusable reply
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


def start_manifest(run: RunDir, tasks: list[Task], manifest: RunManifest) -> RunManifest:
    """Create run.json or check that an existing run was made the same way; record the tasks' digests."""
    old = run.manifest()
    if old is not None:
        same = (
            old.source,
            old.generation and old.generation.model_dump(exclude={"base_url"}),
            old.prompt_version,
            {CONTEXT_KEY: "full", **old.settings},  # runs made before the setting existed were full
        )
        new = (
            manifest.source,
            manifest.generation and manifest.generation.model_dump(exclude={"base_url"}),
            manifest.prompt_version,
            manifest.settings,
        )
        if same != new:
            raise LmrError(
                f"this run was made by {old.label or old.source} with other settings; use another --out",
                run.path / "run.json",
            )
        manifest = old
    entries = {e.name: e for e in manifest.tasks}
    for task in tasks:
        entry = task_entry(task)
        prior = entries.get(task.name)
        entries[task.name] = entry if prior is None or prior.digest != entry.digest else prior
    manifest = manifest.model_copy(update={"tasks": sorted(entries.values(), key=lambda e: _num(e.name))})
    run.save_manifest(manifest)
    return manifest


def _num(name: str) -> tuple[int, str]:
    head = name.split("-", 1)[0]
    return (int(head), name) if head.isdigit() else (1 << 30, name)


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
    """Generate a candidate for every implementation that has no ``ok`` one yet."""
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
    )
    summary = StageSummary()
    jobs: list[tuple[Task, Implementation]] = []
    for task in tasks:
        for impl in task.info.implementations:
            old = run.candidate(task.name, impl.index)
            if old is not None and old.status is CandidateStatus.OK:
                summary.skipped += 1
            else:
                jobs.append((task, impl))

    def work(job: tuple[Task, Implementation]) -> tuple[str, Usage]:
        cand = generate_one(run, job[0], job[1], client, options)
        if cand.status is not CandidateStatus.OK:
            summary.problems.append(f"{cand.task}#{cand.impl}: {cand.status.value}: {cand.reason}")
        return cand.status.value, cand.usage

    return run_jobs(
        jobs,
        work,
        label="generate",
        workers=options.jobs,
        summary=summary,
        progress=progress,
        cancel=cancel,
        describe=lambda j: f"{j[0].name}#{j[1].index}",
    )
