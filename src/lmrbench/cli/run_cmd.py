"""``lmrbench generate | export-agent | import-agent | evaluate | judge | report``: running the benchmark."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from lmrbench.errors import LmrError

out_console = Console()
err_console = Console(stderr=True)

BenchArg = typer.Argument(..., help="The task set folder (or one task folder).", exists=False)
RunArg = typer.Argument(..., help="The run folder.")
OnlyOpt = typer.Option(None, "--only", help="Only these tasks (folder name or number); repeatable.")
ModelOpt = typer.Option(..., "--model", help="Model id sent to the endpoint.")
BaseUrlOpt = typer.Option(
    None,
    "--base-url",
    help="OpenAI-compatible base URL [default: $OPENAI_BASE_URL or https://api.openai.com/v1].",
)
KeyEnvOpt = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key.")
TempOpt = typer.Option(0.0, "--temperature", help="Sampling temperature.")
MaxTokOpt = typer.Option(4096, "--max-tokens", help="Maximum tokens per reply.")
TimeoutOpt = typer.Option(300.0, "--timeout", help="Seconds to wait for one reply.")
RetriesOpt = typer.Option(4, "--retries", help="Retries after connection errors, 429 and 5xx.")
ConcOpt = typer.Option(4, "--concurrency", help="Requests in flight at once.")
CacheOpt = typer.Option(None, "--cache", help="Response cache folder [default: ~/.cache/lmrbench/llm].")
NoCacheOpt = typer.Option(False, "--no-cache", help="Do not read or write the response cache.")


def _tasks(bench: Path, only: list[str] | None) -> list:  # type: ignore[type-arg]
    from lmrbench.authoring.taskset import load_taskset

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
    cache: Path | None,
    no_cache: bool,
):  # type: ignore[no-untyped-def]
    from lmrbench.benchmark.llm import DEFAULT_CACHE, LLMClient, LLMConfig
    from lmrbench.schemas.run import LLMParams

    url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    params = LLMParams(model=model, base_url=url, temperature=temperature, max_tokens=max_tokens)
    config = LLMConfig(
        params=params,
        api_key_env=api_key_env,
        timeout=timeout,
        max_retries=retries,
        concurrency=concurrency,
        cache_dir=None if no_cache else (cache or DEFAULT_CACHE),
    )
    return LLMClient(config)


def _finish(summary, what: str) -> None:  # type: ignore[no-untyped-def]
    for line in summary.problems:
        err_console.print(f"[yellow]{line}[/yellow]", highlight=False, markup=True)
    out_console.print(f"{what}: {summary.line()}", highlight=False)


def generate_cmd(
    bench: Path = BenchArg,
    out: Path = typer.Option(..., "--out", help="The run folder to write candidates into."),
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt,
    temperature: float = TempOpt,
    max_tokens: int = MaxTokOpt,
    timeout: float = TimeoutOpt,
    retries: int = RetriesOpt,
    concurrency: int = ConcOpt,
    cache: Path | None = CacheOpt,
    no_cache: bool = NoCacheOpt,
    allow_helpers: bool = typer.Option(
        False, "--allow-helpers", help="Keep extra imports and helper functions."
    ),
    max_paper_chars: int = typer.Option(100_000, "--max-paper-chars", help="Paper text budget per prompt."),
    jobs: int = typer.Option(4, "--jobs", help="Implementations in flight at once."),
    only: list[str] | None = OnlyOpt,
) -> None:
    """Ask a model for every implementation (standard prompting); a re-run redoes only failed ones."""
    from lmrbench.benchmark.generate import GenerateOptions, generate
    from lmrbench.cli.rich_progress import RichProgress

    tasks = _tasks(bench, only)
    opts = GenerateOptions(allow_helpers=allow_helpers, max_paper_chars=max_paper_chars, jobs=jobs)
    client = _client(
        model, base_url, api_key_env, temperature, max_tokens, timeout, retries, concurrency, cache, no_cache
    )
    with client, RichProgress() as progress:
        summary = generate(tasks, out, client, bench=str(bench), options=opts, progress=progress)
    _finish(summary, "generate")


def export_agent_cmd(
    bench: Path = BenchArg,
    out: Path = typer.Option(..., "--out", help="Folder to write the agent's view into."),
    force: bool = typer.Option(False, "--force", help="Replace an existing folder."),
    only: list[str] | None = OnlyOpt,
) -> None:
    """Write what an agent may see: masked repositories, papers, a TASK.md per task (no tests, no golden)."""
    from lmrbench.benchmark.agent import export_agent

    path = export_agent(_tasks(bench, only), out, replace=force)
    out_console.print(f"exported to {path}", highlight=False)


def import_agent_cmd(
    bench: Path = BenchArg,
    agent_dir: Path = typer.Argument(..., help="The exported folder after the agent worked in it."),
    out: Path = typer.Option(..., "--out", help="The run folder to write candidates into."),
    label: str = typer.Option(
        "", "--label", help="Name of the agent in reports [default: the folder's name]."
    ),
    only: list[str] | None = OnlyOpt,
) -> None:
    """Take the agent's goal functions back as candidates (spliced into the pristine masked files)."""
    from lmrbench.benchmark.agent import import_agent

    summary = import_agent(_tasks(bench, only), agent_dir, out, label=label, bench=str(bench))
    _finish(summary, "import-agent")


def evaluate_cmd(
    bench: Path = BenchArg,
    run: Path = RunArg,
    jobs: int = typer.Option(1, "--jobs", help="Candidates tested at once."),
    runner: str | None = typer.Option(
        None, "--runner", help="docker or local [default: docker if it answers]."
    ),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds per test run."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild the environments."),
    only: list[str] | None = OnlyOpt,
) -> None:
    """Run every candidate's unit tests; resumable, infrastructure errors kept apart and retried."""
    from lmrbench.benchmark.evaluate import evaluate
    from lmrbench.benchmark.sandbox import get_sandbox
    from lmrbench.cli.rich_progress import RichProgress

    tasks = _tasks(bench, only)
    with RichProgress(verbose=True) as progress:
        sandbox = get_sandbox(runner, progress=progress)  # type: ignore[arg-type]
        summary = evaluate(
            tasks, run, sandbox, jobs=jobs, timeout=timeout, rebuild=rebuild, progress=progress
        )
    _finish(summary, "evaluate")


def judge_cmd(
    bench: Path = BenchArg,
    run: Path = RunArg,
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key_env: str = KeyEnvOpt,
    temperature: float = TempOpt,
    max_tokens: int = typer.Option(1024, "--max-tokens", help="Maximum tokens per reply."),
    timeout: float = TimeoutOpt,
    retries: int = RetriesOpt,
    concurrency: int = ConcOpt,
    cache: Path | None = CacheOpt,
    no_cache: bool = NoCacheOpt,
    attempts: int = typer.Option(3, "--attempts", help="Requests per candidate when replies are malformed."),
    jobs: int = typer.Option(4, "--jobs", help="Candidates judged at once."),
    only: list[str] | None = OnlyOpt,
) -> None:
    """Ask an LLM judge to classify each candidate (Completely / Logically Correct, Logically Incorrect)."""
    from lmrbench.benchmark.judge import judge
    from lmrbench.cli.rich_progress import RichProgress

    tasks = _tasks(bench, only)
    client = _client(
        model, base_url, api_key_env, temperature, max_tokens, timeout, retries, concurrency, cache, no_cache
    )
    with client, RichProgress() as progress:
        summary = judge(tasks, run, client, jobs=jobs, max_attempts=attempts, progress=progress)
    _finish(summary, "judge")


def report_cmd(
    runs: list[Path] = typer.Argument(..., help="Run folders, one row each."),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for report.md/.csv/.json [default: first run]."
    ),
    judge_name: str | None = typer.Option(
        None, "--judge", help="Only this judge's verdicts (its folder name)."
    ),
) -> None:
    """Print the paper's Table 2 for the runs and a per-category breakdown; write Markdown, CSV and JSON."""
    from lmrbench.benchmark.report import (
        TABLE_HEADERS,
        build_report,
        category_table,
        table_rows,
        write_report,
    )

    report = build_report(runs, judge=judge_name)
    table = Table(title="Unit tests and LLM judge")
    for h in TABLE_HEADERS:
        table.add_column(h, justify="left" if h in ("Run", "Judge") else "right")
    for row in table_rows(report):
        table.add_row(*row)
    out_console.print(table)
    headers, rows = category_table(report)
    cats = Table(title="Unit-test accuracy by category (%)")
    for h in headers:
        cats.add_column(h, justify="left" if h == "Category" else "right")
    for row in rows:
        cats.add_row(*row)
    out_console.print(cats)
    for path in write_report(report, out or runs[0]):
        out_console.print(f"wrote {path}", highlight=False)


def register(app: typer.Typer) -> None:
    """Attach the commands to the root app."""
    app.command("generate")(generate_cmd)
    app.command("export-agent")(export_agent_cmd)
    app.command("import-agent")(import_agent_cmd)
    app.command("evaluate")(evaluate_cmd)
    app.command("judge")(judge_cmd)
    app.command("report")(report_cmd)
