"""``lmrbench agent``: run an agent on every task of a set, each in a container of the task's own image, and take
its goal files as the run's candidates.

```
RUN/agent/<task>/outcome.json      AgentOutcome: how the agent's run ended, steps, tokens, cost, time
RUN/agent/<task>/trajectory.json   the agent's trajectory (every model message and action with its output)
RUN/candidates/<task>/<impl>/      the goal files it left, as import-agent makes them
```
Before the first container, one request asks whether the model's endpoint answers (``LLMClient.preflight``):
one that does not ends the run within seconds. A re-run skips the tasks whose outcome is not an infrastructure
error; an infrastructure error (the container, the image, the model's endpoint) is tried again at once
(``retries``) and by the next run, and never becomes a candidate. Ctrl-C (the cancel event) removes the running
containers.
"""

from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench import __version__
from lmrbench.authoring.check.dockerfile import DOCKERFILE, context_copies, is_generated
from lmrbench.benchmark.agents.calls import in_thread
from lmrbench.benchmark.agents.container import WORKSPACE, AgentContainer, ContainerError
from lmrbench.benchmark.agents.protocol import AgentAdapter, AgentLimits, AgentResult, AgentSession
from lmrbench.benchmark.pipeline.agent import AGENT_PROMPT_VERSION, PROMPT_FILE, export_agent, import_one
from lmrbench.benchmark.pipeline.context import CONTEXT_KEY
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMError
from lmrbench.benchmark.pipeline.manifest import finish_manifest, start_manifest
from lmrbench.benchmark.pipeline.rundir import RunDir, load_model, save_model, unless_broken
from lmrbench.benchmark.pipeline.stage import StageSummary, run_jobs
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.progress import Cancelled, NullProgress, Progress, check_cancel, stop_on_cancel
from lmrbench.schemas.agent_run import AgentOutcome, AgentStatus
from lmrbench.schemas.run import RunManifest, Usage

if TYPE_CHECKING:
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

OUTCOME = "outcome.json"
TRAJECTORY = "trajectory.json"
INFRA_KINDS = frozenset({"connect", "timeout", "rate_limit", "server", "auth"})
"""LLMError kinds that are the endpoint's fault, not the agent's."""


@dataclass(frozen=True)
class AgentOptions:
    """How the agent runs: its limits, tasks at once and tries after an infrastructure error."""

    limits: AgentLimits = field(default_factory=AgentLimits)
    jobs: int = 1
    retries: int = 2
    rebuild: bool = False
    force: bool = False
    """Start a new run where the existing one was made with other settings or limits (the old one moved aside)."""


def agent_folder(run: RunDir, task: str) -> Path:
    """``RUN/agent/<task>``: the outcome and trajectory of one task."""
    return run.path / "agent" / task


def outcome(run: RunDir, task: str) -> AgentOutcome | None:
    """A task's outcome, or None when it has none (or an unreadable one)."""
    path = agent_folder(run, task) / OUTCOME
    return unless_broken(load_model, path, AgentOutcome) if path.is_file() else None


def image_exposes(task: Task) -> str | None:
    """Why the task's image would put task files in the agent's reach, or None: a Dockerfile lmrbench did not
    write is built with the task folder as its context, so a COPY or ADD of anything but requirements and wheels
    (the official ``COPY . .``) may carry the golden files and tests into the image. A generated one (edited or
    not) is built from a context of the requirements and wheels only."""
    path = task.path / DOCKERFILE
    text = path.read_text("utf-8", errors="replace") if path.is_file() else ""
    if not text or is_generated(text):
        return None
    bad = [src for src in context_copies(text) if not _requirements_like(src)]
    if not bad:
        return None
    return (f"{path.name} copies {', '.join(bad)} from the task folder into the image, where the agent could read "
            f"the golden files and tests; write one that does not: lmrbench image dockerfile {task.path} --force")


def _requirements_like(src: str) -> bool:
    name = src.rstrip("/").rsplit("/", 1)[-1]
    return name == "wheels" or name.endswith((".txt", ".yml", ".yaml"))


def _goal_rels(task: Task) -> list[str]:
    return sorted({f for impl in task.info.implementations for f in impl.goal_files})


class AgentRunner:
    """One command's agent run: the adapter, the endpoint client, the Docker runner and the run folder."""

    def __init__(self, adapter: AgentAdapter, client: LLMClient, docker: DockerRunner, run: RunDir,
                 options: AgentOptions, progress: Progress, cancel: threading.Event) -> None:
        self.adapter, self.client, self.docker, self.run = adapter, client, docker, run
        self.options, self.progress, self.cancel = options, progress, cancel
        self._live: set[AgentContainer] = set()
        self._lock = threading.Lock()

    def remove_all(self) -> None:
        """Remove every container still running (Ctrl-C: from the main thread, not waiting for the tasks)."""
        with self._lock:
            boxes = list(self._live)
        for box in boxes:
            box.remove()

    def task(self, task: Task) -> AgentOutcome:
        """Run the agent on one task (tried again after an infrastructure error) and import its goal files."""
        for attempt in range(1, self.options.retries + 2):
            done = self._attempt(task, attempt)
            if done.status is not AgentStatus.INFRA_ERROR:
                return done
            self.progress.log(f"{task.name}: infrastructure error (try {attempt}): {done.reason}")
        return done

    def _attempt(self, task: Task, attempt: int) -> AgentOutcome:
        folder = agent_folder(self.run, task.name)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / TRAJECTORY).unlink(missing_ok=True)
        base = AgentOutcome(task=task.name, agent=self.adapter.name, model=self.client.params.model,
                            status=AgentStatus.INFRA_ERROR, attempts=attempt)  # fmt: skip
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="lmrbench-agent-") as tmp:
            try:
                logs = _LogsOnly(self.progress, task.name)  # the agent phase's bar stays the one shown
                view = export_agent([task], Path(tmp) / "view", progress=logs, cancel=self.cancel,
                                    keep=False)
                image = self.docker.prepare(task, rebuild=self.options.rebuild, progress=logs, cancel=self.cancel)
            except Cancelled:
                raise
            except (LmrError, OSError) as exc:
                return self._save(base.model_copy(update={"reason": f"cannot prepare the task: {exc}"}))
            base = base.model_copy(update={"image": image})
            box = AgentContainer(self.docker, task, image, lifetime=self.options.limits.wall_time)
            with self._lock:
                self._live.add(box)
            with box, stop_on_cancel(self.cancel, box.remove):
                try:
                    box.start(view / task.name)
                    session = AgentSession(task=task, container=box, client=self.client,
                                           prompt=(view / task.name / PROMPT_FILE).read_text("utf-8"),
                                           workdir=WORKSPACE, trajectory=folder / TRAJECTORY,
                                           limits=self.options.limits, cancel=self.cancel)  # fmt: skip
                    result = self.adapter.run(session)
                    collected = Path(tmp) / "collected"
                    box.read_goal_files(_goal_rels(task), collected / task.name / task.info.repo_folder_name)
                except Cancelled:
                    raise
                except ContainerError as exc:
                    check_cancel(self.cancel)  # a container removed by Ctrl-C is no infrastructure error
                    return self._save(base.model_copy(update={"reason": str(exc), "duration": _since(t0)}))
                except LLMError as exc:
                    check_cancel(self.cancel)
                    if exc.kind in INFRA_KINDS:
                        return self._save(base.model_copy(update={"reason": str(exc), "duration": _since(t0)}))
                    result = AgentResult(status=AgentStatus.GAVE_UP, exit_status="ModelError", reason=str(exc))
                    collected = Path(tmp) / "collected"
                    box.read_goal_files(_goal_rels(task), collected / task.name / task.info.repo_folder_name)
                except Exception as exc:  # the adapter's own failure: not the agent's answer; the other tasks go on
                    check_cancel(self.cancel)
                    reason = f"the {self.adapter.name} adapter failed: {type(exc).__name__}: {exc}"
                    return self._save(base.model_copy(update={"reason": reason, "duration": _since(t0)}))
                finally:
                    with self._lock:
                        self._live.discard(box)
            for impl in task.info.implementations:
                import_one(self.run, task, impl, collected)
        done = base.model_copy(update={**{k: getattr(result, k) for k in AgentResult.model_fields},
                                       "duration": _since(t0),
                                       "trajectory": TRAJECTORY if (folder / TRAJECTORY).is_file() else ""})
        return self._save(done)

    def _save(self, out: AgentOutcome) -> AgentOutcome:
        save_model(agent_folder(self.run, out.task) / OUTCOME, out)
        return out


class _LogsOnly(NullProgress):
    """A Progress that passes on only the log lines of a step inside one task, naming the task."""

    def __init__(self, progress: Progress, task: str) -> None:
        self.progress, self.task = progress, task

    def log(self, line: str) -> None:  # noqa: D102
        self.progress.log(f"{self.task}: {line}")


def _since(t0: float) -> float:
    return round(time.monotonic() - t0, 3)


def run_agent(
    tasks: list[Task],
    run_path: Path,
    adapter: AgentAdapter,
    client: LLMClient,
    docker: DockerRunner,
    *,
    bench: str = "",
    options: AgentOptions | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Run ``adapter`` on every task of ``tasks`` that has no finished outcome in the run at ``run_path``."""
    options = options or AgentOptions()
    progress = progress or NullProgress()
    cancel = cancel or threading.Event()
    run = RunDir(Path(run_path))
    start_manifest(run, tasks, RunManifest(
        tool_version=__version__, source="agent", label=f"{adapter.name} ({client.params.model})", bench=bench,
        generation=client.params, prompt_version=AGENT_PROMPT_VERSION,
        settings={CONTEXT_KEY: "full", "agent": adapter.name, **limit_settings(options.limits)}),
        force=options.force)  # fmt: skip
    summary = StageSummary()
    todo = []
    for task in tasks:
        old = outcome(run, task.name)
        if old is not None and old.status is not AgentStatus.INFRA_ERROR:
            summary.skipped += 1
        elif (problem := image_exposes(task)) is not None:
            summary.statuses["refused"] += 1
            summary.problems.append(f"{task.name}: not run: {problem}")
        else:
            todo.append(task)
    if todo:
        client.preflight()  # an endpoint that does not answer ends the run here, before any container starts
    runner = AgentRunner(adapter, client, docker, run, options, progress, cancel)

    def work(task: Task) -> tuple[str, Usage]:
        done = runner.task(task)
        if done.status is AgentStatus.INFRA_ERROR:
            summary.problems.append(f"{task.name}: infrastructure error: {done.reason}")
        return done.status.value, done.usage

    def interrupted() -> None:  # Ctrl-C: every task stops, and its container goes at once
        cancel.set()
        runner.remove_all()

    try:
        return in_thread(lambda: run_jobs(todo, work, label="agent", workers=options.jobs, summary=summary,
                                          progress=progress, cancel=cancel, describe=lambda t: t.name),
                         "lmrbench-agent", on_interrupt=interrupted)
    finally:
        finish_manifest(run)


def limit_settings(limits: AgentLimits) -> dict[str, str]:
    """The agent's limits as run.json's settings record them (a re-run with others is another run)."""
    return {f"agent_{name}": str(value) for name, value in sorted(vars(limits).items())}
