"""``lmrbench agent`` (an agent at work on each task inside its own image) and ``lmrbench agent-report`` (its
actions by kind, or those of OpenHands logs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from lmrbench.cli.limit_options import Cpus, Gpus, HfCache, Memory, TaskFilter
from lmrbench.cli.output import Format, OldJsonFile, check_format, emit
from lmrbench.cli.run_cmd import (
    BaseUrl,
    Bench,
    Force,
    KeyEnv,
    MaxTokens,
    Model,
    Out,
    Retries,
    Temperature,
    Timeout,
    _client,
    _finish_all,
    _tasks,
)
from lmrbench.cli.tables import print_table
from lmrbench.errors import UsageError

out_console = Console()

AGENTS = ("mini-swe-agent",)


def agent_cmd(
    bench: Bench,
    out: Out,
    model: Model,
    agent: Annotated[str, typer.Option("--agent", help="The agent: mini-swe-agent.")] = "mini-swe-agent",
    base_url: BaseUrl = None,
    api_key_env: KeyEnv = "OPENAI_API_KEY",
    temperature: Temperature = 0.0,
    max_tokens: MaxTokens = 4096,
    timeout: Timeout = 300.0,
    retries: Retries = 4,
    jobs: Annotated[int, typer.Option("--jobs", "-j", envvar="LMRBENCH_JOBS", help="Tasks worked on at once.")] = 1,
    step_limit: Annotated[int, typer.Option("--step-limit", help="Model calls per task at most (0: none).")] = 50,
    cost_limit: Annotated[float, typer.Option(
        "--cost-limit", help="Dollars per task at most, where litellm's price table knows the model (0: none).")] = 3.0,
    wall_time: Annotated[float, typer.Option("--wall-time", help="Seconds per task at most.")] = 3600.0,
    command_timeout: Annotated[float, typer.Option("--command-timeout", help="Seconds one command may run.")] = 300.0,
    tries: Annotated[int, typer.Option("--tries", help="Tries per task while each ends in an infra error.")] = 3,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the task images.")] = False,
    only: TaskFilter = None,
    memory: Memory = None,
    cpus: Cpus = None,
    gpus: Gpus = None,
    hf_cache: HfCache = None,
    samples: Annotated[int, typer.Option(
        "--samples", help="Runs of the agent per task, each kept as OUT/samples/<s>/ (report: pass@1, pass@k).")] = 1,
    force: Force = False,
    fmt: Format = "text",
) -> None:
    """Run an agent on every task in a container of the task's own image (no network; the model is called from
    here); its goal files become the run's candidates. Resumable: a finished task is not run again."""
    from lmrbench.benchmark.agents.mini import MiniSweAgent, check_installed
    from lmrbench.benchmark.agents.protocol import AgentLimits
    from lmrbench.benchmark.agents.runner import AgentOptions, run_agent
    from lmrbench.benchmark.pipeline.samples import sample_folders
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner
    from lmrbench.cli.rich_progress import RichProgress

    check_format(fmt)
    if agent not in AGENTS:
        raise UsageError(f"--agent {agent}: unknown; known: {', '.join(AGENTS)}")
    if tries < 1 or jobs < 1:
        raise UsageError("--tries and --jobs take 1 or more")
    check_installed()
    folders = sample_folders(out, samples)
    tasks = _tasks(bench, only)
    limits = AgentLimits(step_limit=step_limit, cost_limit=cost_limit, wall_time=wall_time,
                         command_timeout=command_timeout)  # fmt: skip
    options = AgentOptions(limits=limits, jobs=jobs, retries=tries - 1, rebuild=rebuild, force=force)
    client = _client(model, base_url, api_key_env, temperature, max_tokens, timeout, retries, max(4, jobs),
                     cache_dir=None, cache=False)  # fmt: skip
    docker = DockerRunner(memory=memory, cpus=cpus, gpus=gpus, hf_cache=hf_cache)
    try:
        done = []
        with client, RichProgress(verbose=True) as progress:
            for sample, folder in enumerate(folders, start=1):
                summary = run_agent(tasks, folder, MiniSweAgent(), client, docker, bench=str(bench),
                                    options=options, progress=progress)  # fmt: skip
                done.append((summary, "agent" if samples == 1 else f"agent (sample {sample} of {samples})"))
    finally:
        docker.close()
    where = out / "agent" if samples == 1 else out / "samples" / "<s>" / "agent"
    if fmt == "text":
        out_console.print(f"trajectories: {where}/<task>/trajectory.json; grade with: lmrbench evaluate "
                          f"{bench} {out}", highlight=False, markup=False, soft_wrap=True)  # fmt: skip
    _finish_all(done, fmt)


def agent_report_cmd(
    source: Annotated[Path, typer.Argument(help="A run folder of lmrbench agent, or an OpenHands output.jsonl.")],
    results: Annotated[Path | None, typer.Option(
        "--run", help="The run folder whose unit-test results split the trajectories by outcome "
        "(default: SOURCE when it is a run).")] = None,
    fmt: Format = "text",
    json_out: OldJsonFile = None,
) -> None:
    """The agent's actions by kind (read, edit, run, search, think, submit), over all and split by outcome."""
    from lmrbench.benchmark.analysis.actions import action_report
    from lmrbench.schemas.agent_run import ACTION_KINDS

    check_format(fmt)
    report = action_report(source, results)
    emit(fmt, report.model_dump(mode="json"), json_out, "agent-report")
    if fmt == "json":
        return
    table = Table(title=f"actions of {report.agent}: {source}")
    for column in ("outcome", "trajectories", *ACTION_KINDS):
        table.add_column(column, justify="left" if column == "outcome" else "right")
    for name, counts in [("all", report.all), *sorted(report.by_outcome.items())]:
        table.add_row(name, str(counts.trajectories), *(str(counts.counts.get(k, 0)) for k in ACTION_KINDS))
    print_table(out_console, table)


def register(app: typer.Typer) -> None:
    """Attach the commands to the root app."""
    app.command("agent")(agent_cmd)
    app.command("agent-report")(agent_report_cmd)
