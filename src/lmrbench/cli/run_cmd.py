"""``lmrbench generate | export-agent | import-agent | evaluate | judge | report``: running the benchmark."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from lmrbench.cli.limit_options import (
    AddressOpt,
    Cpus,
    ExecutorOpt,
    Gpus,
    HfCache,
    Memory,
    SandboxOpt,
    TaskFilter,
    run_limits,
)
from lmrbench.cli.output import Format, check_format, emit
from lmrbench.errors import LmrError

if TYPE_CHECKING:
    from lmrbench.benchmark.pipeline.llm import LLMClient
    from lmrbench.benchmark.pipeline.stage import StageSummary
    from lmrbench.core.taskset import Task

out_console = Console()
err_console = Console(stderr=True)

Bench = Annotated[Path, typer.Argument(help="The task set folder (or one task folder).")]
Run = Annotated[Path, typer.Argument(help="The run folder.")]
Out = Annotated[Path, typer.Option("--out", help="The run folder to write candidates into.")]
Model = Annotated[str, typer.Option(
    "--model", envvar="LMRBENCH_MODEL", help="anthropic/..., gemini/..., openai/... (any provider litellm knows), "
    "or the model id an OpenAI-compatible --base-url serves.")]  # fmt: skip
BaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", envvar="LMRBENCH_BASE_URL",
                 help="Base URL of the endpoint: OpenAI-compatible, or the named provider's "
                 "(default: the provider's own; $OPENAI_BASE_URL or OpenAI's for other models)."),
]
KeyEnv = Annotated[str, typer.Option("--api-key-env", help="Environment variable holding the API key.")]
Temperature = Annotated[float, typer.Option("--temperature", help="Sampling temperature.")]
MaxTokens = Annotated[int, typer.Option("--max-tokens", help="Maximum tokens per reply.")]
Timeout = Annotated[float, typer.Option("--request-timeout", help="Seconds to wait for one reply of the model.")]
Retries = Annotated[int, typer.Option("--retries", help="Retries after connection errors, 429 and 5xx.")]
Cache = Annotated[bool, typer.Option("--cache/--no-cache", help="Read and write the response cache.")]
CacheDir = Annotated[
    Path | None, typer.Option("--cache-dir", help="Response cache folder (default: ~/.cache/lmrbench/llm).")
]
Jobs = Annotated[int, typer.Option("--jobs", "-j", envvar="LMRBENCH_JOBS", help="Items (and requests) in flight "
                                   "at once.")]
DEFAULT_JOBS = 4
"""Items in flight at once for generate, judge and evaluate alike."""
Context = Annotated[
    str,
    typer.Option(
        "--context",
        help="What is shown of each repository: full, paper+goal-file (only the goal file) or paper-only "
        "(only the goal functions' signatures and docstrings). Evaluation always uses the full repository.",
    ),
]


def _tasks(bench: Path, only: list[str] | None) -> list[Task]:
    from lmrbench.core.taskset import load_taskset

    tasks, problems = load_taskset(bench, only or None)
    for problem in problems:
        err_console.print(f"[yellow]skipped:[/yellow] {problem}", highlight=False)
    if not tasks:
        raise LmrError("no task to run", bench)
    return tasks


def _client(
    model: str,
    base_url: str | None,
    api_key_env: str,
    temperature: float,
    max_tokens: int,
    timeout: float,
    retries: int,
    concurrency: int,
    *,
    cache_dir: Path | None,
    cache: bool,
) -> LLMClient:
    """A client of the model; its replies cached under ``cache_dir`` (default ~/.cache/lmrbench/llm) when ``cache``."""
    from lmrbench.benchmark.pipeline.llm import DEFAULT_CACHE, LLMClient, LLMConfig
    from lmrbench.benchmark.pipeline.providers import base_url_for
    from lmrbench.schemas.run import LLMParams

    url = base_url_for(model, base_url)
    params = LLMParams(model=model, base_url=url, temperature=temperature, max_tokens=max_tokens)
    config = LLMConfig(
        params=params,
        api_key_env=api_key_env,
        timeout=timeout,
        max_retries=retries,
        concurrency=concurrency,
        cache_dir=(cache_dir or DEFAULT_CACHE) if cache else None,
    )
    return LLMClient(config)


EXIT_PROBLEMS = 3
"""A stage's exit status when problems are left (infrastructure errors, items not run), as ``validate``'s."""
Force = Annotated[bool, typer.Option(
    "--force", help="Start a new run where --out was made with other settings (the old run is moved aside).")]


def _finish(summary: StageSummary, what: str, fmt: str = "text") -> None:
    """Print what the stage did; exit ``EXIT_PROBLEMS`` when problems are left for a re-run."""
    _finish_all([(summary, what)], fmt)


def _finish_all(done: list[tuple[StageSummary, str]], fmt: str = "text") -> None:
    """Print what each run of a stage did (a run per sample), as text or one JSON document; exit
    ``EXIT_PROBLEMS`` when any left problems."""
    if fmt == "json":
        emit(fmt, {"stages": [_as_dict(summary, what) for summary, what in done]})
        left = [bool(summary.problems) for summary, _ in done]
    else:
        left = [_told(summary, what) for summary, what in done]
    if any(left):
        raise typer.Exit(EXIT_PROBLEMS)


def _as_dict(summary: StageSummary, what: str) -> dict[str, object]:
    """What a stage did, for ``--format json``."""
    return {"stage": what, "summary": summary.line(), "statuses": dict(summary.statuses), "skipped": summary.skipped,
            "weaker": summary.weaker, "usage": summary.usage.model_dump(mode="json"), "notes": summary.notes,
            "problems": summary.problems}


def _told(summary: StageSummary, what: str) -> bool:
    """Print what the stage did; whether problems are left for a re-run."""
    from rich.markup import escape

    for line in summary.notes:
        out_console.print(f"{what}: {line}", highlight=False, markup=False, soft_wrap=True)
    for line in summary.problems:
        err_console.print(f"[yellow]{escape(line)}[/yellow]", highlight=False, markup=True)
    out_console.print(f"{what}: {summary.line()}", highlight=False)
    if summary.problems:
        err_console.print(f"{what}: {len(summary.problems)} problem(s) left (exit {EXIT_PROBLEMS}); a re-run "
                          "retries them", highlight=False, markup=False)
    return bool(summary.problems)


def generate_cmd(
    bench: Bench,
    out: Out,
    model: Model,
    base_url: BaseUrl = None,
    api_key_env: KeyEnv = "OPENAI_API_KEY",
    temperature: Temperature = 0.0,
    max_tokens: MaxTokens = 4096,
    timeout: Timeout = 300.0,
    retries: Retries = 4,
    cache: Cache = True,
    cache_dir: CacheDir = None,
    max_paper_chars: Annotated[
        int, typer.Option("--max-paper-chars", help="Paper text budget per prompt.")
    ] = 100_000,
    jobs: Jobs = DEFAULT_JOBS,
    context: Context = "full",
    only: TaskFilter = None,
    samples: Annotated[int, typer.Option(
        "--samples", help="Samples per implementation, each kept as OUT/samples/<s>/ (report: pass@1, pass@k).")] = 1,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Also ask again where the reply had no usable code (each earlier attempt is kept "
        "under RUN/attempts/); by default such a reply is the model's answer, graded as failed.")] = False,
    force: Force = False,
    fmt: Format = "text",
) -> None:
    """Ask a model for every implementation (standard prompting); a re-run asks again only where the endpoint
    failed. Exit 3 when infrastructure errors are left."""
    from lmrbench.benchmark.pipeline.context import check_context
    from lmrbench.benchmark.pipeline.generate import GenerateOptions, generate
    from lmrbench.benchmark.pipeline.samples import sample_folders
    from lmrbench.cli.rich_progress import RichProgress

    check_format(fmt)
    setting = check_context(context)
    tasks = _tasks(bench, only)
    opts = GenerateOptions(max_paper_chars=max_paper_chars, jobs=jobs, context=setting, retry_failed=retry_failed,
                           force=force)
    folders = sample_folders(out, samples)
    done = []
    for sample, folder in enumerate(folders, start=1):
        client = _client(model, base_url, api_key_env, temperature, max_tokens, timeout, retries, jobs,
                         cache_dir=cache_dir, cache=cache)
        if sample > 1:  # sample 1 shares the cache with a run without samples; the others never reuse a reply
            client.config = replace(client.config, cache_salt=f"sample {sample}")
        with client, RichProgress() as progress:
            summary = generate(tasks, folder, client, bench=str(bench), options=opts, progress=progress)
        done.append((summary, "generate" if samples == 1 else f"generate (sample {sample} of {samples})"))
    _finish_all(done, fmt)


def export_agent_cmd(
    bench: Bench,
    out: Annotated[Path, typer.Option("--out", help="Folder to write the agent's view into.")],
    force: Annotated[bool, typer.Option("--force", help="Replace an existing folder.")] = False,
    context: Context = "full",
    only: TaskFilter = None,
) -> None:
    """Write what an agent may see: masked repositories, papers, a TASK.md per task (no tests, no golden)."""
    from lmrbench.benchmark.pipeline.agent import export_agent
    from lmrbench.benchmark.pipeline.context import check_context
    from lmrbench.cli.rich_progress import RichProgress

    setting = check_context(context)
    with RichProgress() as progress:
        path = export_agent(_tasks(bench, only), out, replace=force, context=setting, progress=progress)
    out_console.print(f"exported to {path}", highlight=False)


def import_agent_cmd(
    bench: Bench,
    agent_dir: Annotated[Path, typer.Argument(help="The exported folder after the agent worked in it.")],
    out: Out,
    label: Annotated[
        str, typer.Option("--label", help="The agent's name in reports (default: folder name).")
    ] = "",
    only: TaskFilter = None,
    context: Annotated[str | None, typer.Option(
        "--context", help="The setting the agent worked in, where this machine holds no record of the export "
        "(by default the one export-agent recorded here).")] = None,
    only_exported: Annotated[bool, typer.Option(
        "--only-exported", help="Grade only the tasks export-agent exported (by default every task of the set "
        "or of --task; one the agent's folder lacks is a wrong answer).")] = False,
    force: Force = False,
    fmt: Format = "text",
) -> None:
    """Take the agent's goal functions back as candidates (spliced into the pristine masked files). Every task
    is graded; the setting and the tasks exported are what export-agent recorded on this machine, never what
    the agent's folder says."""
    from lmrbench.benchmark.pipeline.agent import import_agent

    check_format(fmt)
    summary = import_agent(_tasks(bench, only), agent_dir, out, label=label, bench=str(bench), context=context,
                           only_exported=only_exported, force=force)
    _finish(summary, "import-agent", fmt)


def evaluate_cmd(
    bench: Bench,
    run: Run,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", envvar="LMRBENCH_JOBS",
        help=f"Candidates tested at once (default {DEFAULT_JOBS}, as for generate and judge; "
        "with --executor ray, the cluster's CPUs).")] = None,
    sandbox: SandboxOpt = None,
    executor: ExecutorOpt = None,
    address: AddressOpt = None,
    timeout: Annotated[float, typer.Option("--test-timeout", help="Seconds one test run may take.")] = 600.0,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild the environments.")] = False,
    only: TaskFilter = None,
    memory: Memory = None,
    cpus: Cpus = None,
    gpus: Gpus = None,
    hf_cache: HfCache = None,
    fmt: Format = "text",
) -> None:
    """Run every candidate's unit tests; resumable, infrastructure errors kept apart and retried (exit 3 when
    some are left)."""
    from lmrbench.benchmark.execution.choose import executor_factory
    from lmrbench.benchmark.pipeline.evaluate import evaluate
    from lmrbench.benchmark.pipeline.samples import run_folders
    from lmrbench.cli.rich_progress import RichProgress

    check_format(fmt)
    tasks = _tasks(bench, only)
    with RichProgress(verbose=True) as progress:
        limits = run_limits(memory, cpus, gpus, hf_cache)
        if jobs is None and executor != "ray":
            jobs = DEFAULT_JOBS
        make = executor_factory(executor, sandbox=sandbox, address=address, jobs=jobs,  # type: ignore[arg-type]
                                limits=limits, progress=progress, untrusted=True)
        summaries = [(folder, evaluate(tasks, folder, timeout=timeout, rebuild=rebuild, executor=make,
                                       progress=progress)) for folder in run_folders([run])]  # fmt: skip
    if fmt == "text":
        out_console.print(f"the whole test output of each candidate: {run / 'results'}/<task>/<impl>.log",
                          highlight=False, markup=False, soft_wrap=True)
    _finish_all([(summary, "evaluate" if folder == run else f"evaluate ({folder.relative_to(run)})")
                 for folder, summary in summaries], fmt)


def judge_cmd(
    bench: Bench,
    run: Run,
    model: Model,
    base_url: BaseUrl = None,
    api_key_env: KeyEnv = "OPENAI_API_KEY",
    temperature: Temperature = 0.0,
    max_tokens: MaxTokens = 1024,
    timeout: Timeout = 300.0,
    retries: Retries = 4,
    cache: Cache = True,
    cache_dir: CacheDir = None,
    attempts: Annotated[
        int, typer.Option("--attempts", help="Requests per candidate if replies are malformed.")
    ] = 3,
    jobs: Jobs = DEFAULT_JOBS,
    only: TaskFilter = None,
    fmt: Format = "text",
) -> None:
    """Ask an LLM judge to classify each candidate (Completely / Logically Correct, Logically Incorrect)."""
    from lmrbench.benchmark.pipeline.judge import judge
    from lmrbench.benchmark.pipeline.samples import run_folders
    from lmrbench.cli.rich_progress import RichProgress

    check_format(fmt)
    tasks = _tasks(bench, only)
    client = _client(
        model, base_url, api_key_env, temperature, max_tokens, timeout, retries, jobs, cache_dir=cache_dir, cache=cache
    )
    with client, RichProgress() as progress:
        summaries = [(folder, judge(tasks, folder, client, jobs=jobs, max_attempts=attempts, progress=progress))
                     for folder in run_folders([run])]  # fmt: skip
    _finish_all([(summary, "judge" if folder == run else f"judge ({folder.relative_to(run)})")
                 for folder, summary in summaries], fmt)


def register(app: typer.Typer) -> None:
    """Attach the commands to the root app."""
    app.command("generate")(generate_cmd)
    app.command("export-agent")(export_agent_cmd)
    app.command("import-agent")(import_agent_cmd)
    app.command("evaluate")(evaluate_cmd)
    app.command("judge")(judge_cmd)
