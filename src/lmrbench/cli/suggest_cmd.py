"""``lmrbench task suggest``: rank a repository's functions against its paper; find what calls them; make tasks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lmrbench.cli.limit_options import Cpus, Gpus, HfCache, Memory, SandboxOpt, run_limits
from lmrbench.defaults import SUGGEST_BUDGET as DEFAULT_BUDGET
from lmrbench.defaults import SUGGEST_TOP as DEFAULT_TOP
from lmrbench.errors import UsageError

if TYPE_CHECKING:
    from lmrbench.authoring.suggest.suggest import Suggestion
    from lmrbench.benchmark.suggest_create import Created

console = Console(width=None if sys.stdout.isatty() else 200)
WIDE = 140
"""Terminals at least this wide get the candidates as a table; narrower ones one block per candidate."""


def task_suggest(
    repo: Annotated[Path, typer.Argument(help="The repository's folder (a checkout).")],
    paper: Annotated[Path, typer.Option("--paper", help="The paper's PDF.")],
    command: Annotated[list[str] | None, typer.Option(
        "--command", help="Shell command that runs the code, from the repo root; repeat for more "
                          "(default: the repository's tests and example scripts).")] = None,
    top: Annotated[int, typer.Option("--top", help="Candidates examined and shown.")] = DEFAULT_TOP,
    budget: Annotated[float, typer.Option("--budget", help="Seconds all the commands together may run.")]
    = DEFAULT_BUDGET,
    no_run: Annotated[bool, typer.Option("--no-run", help="Rank only: run nothing, count no calls.")] = False,
    bench: Annotated[Path | None, typer.Option(
        "--bench", help="The task set: which candidates it already masks, and where --create writes.")] = None,
    create: Annotated[int, typer.Option("--create", help="Make tasks of the best N candidates.")] = 0,
    repo_url: Annotated[str | None, typer.Option("--repo-url", help="repo_url the tasks record.")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="OpenAI-compatible endpoint that improves the draft instructions.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="The model at --base-url.")] = None,
    sandbox: SandboxOpt = None,
    memory: Memory = None,
    cpus: Cpus = None,
    gpus: Gpus = None,
    hf_cache: HfCache = None,
) -> None:
    """Rank the functions that carry the paper's method, with the passage each matches and what calls it."""
    if create and bench is None:
        raise UsageError("--create needs --bench BENCH, the task set to write the tasks into")
    if create and no_run:
        raise UsageError("--create records the tasks' tests: it cannot go with --no-run")
    if (base_url is None) != (model is None):
        raise UsageError("give --base-url and --model together")
    if sandbox not in (None, "docker", "local"):
        raise UsageError(f"unknown sandbox {sandbox!r}; use docker or local")
    from lmrbench.authoring.suggest.suggest import suggest  # PyMuPDF, LibCST: after the options are known to be right
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress() as progress:
        box = None
        if not no_run:
            from lmrbench.benchmark.execution.sandboxes import get_sandbox

            limits = run_limits(memory, cpus, gpus, hf_cache)
            box = get_sandbox(sandbox, progress=progress, limits=limits)  # type: ignore[arg-type]
        result = suggest(repo, paper, commands=command, sandbox=box, top=top, budget=budget,
                         bench=bench, repo_url=repo_url, progress=progress)
    print_suggestion(result, ran=box is not None)
    made: list[Created] = []
    if create and box is not None and bench is not None:
        from lmrbench.benchmark.pipeline.llm import LLMConfig
        from lmrbench.benchmark.suggest_create import create_tasks
        from lmrbench.schemas.run import LLMParams

        llm = LLMConfig(LLMParams(model=model, base_url=base_url)) if model and base_url else None
        with RichProgress() as progress:
            made = create_tasks(result, repo, paper, bench, create, sandbox=box, llm=llm, repo_url=repo_url,
                                progress=progress)
    if create:
        print_created(made, create, result)
        if len(made) < create or not all(m.valid for m in made):
            raise typer.Exit(1)


def _calls(c: object) -> str:
    from lmrbench.authoring.suggest.suggest import Candidate

    assert isinstance(c, Candidate)
    if c.not_recordable:
        return f"- ({c.not_recordable})"
    unsaved = c.calls.unsaved
    times = f"{unsaved} time{'s' if unsaved != 1 else ''}"
    why = c.calls.codec.removeprefix("no: ") or "its values cannot be saved"
    if not c.calls.calls:
        return f"called {times}, none can be recorded: {why}" if unsaved else "none"
    more = f" (and {unsaved} that cannot be recorded)" if unsaved else ""
    return f"{c.calls.count_text} by `{c.caller}`{more}"


def print_suggestion(s: Suggestion, *, ran: bool) -> None:
    """The candidates' table, the commands run and the candidates nothing called."""
    table = Table(title=f"{s.functions} functions ranked against {s.passages} passages of the paper")
    for col in ("rank", "function", "score", "passage (shared words)", "lines", "calls", "codec", "copies",
                "task"):
        table.add_column(col, justify="right" if col in ("rank", "score") else "left", overflow="fold")
    for c in s.candidates:
        f = c.function
        passage = f"{c.ranked.passage.label} ({', '.join(c.ranked.matched)})"
        table.add_row(
            str(c.rank), escape(f.ref), f"{c.ranked.score:.1f}", escape(passage), f"{f.lineno}-{f.end_lineno}",
            escape(_calls(c)) if ran and not s.no_calls else "not run", escape(c.calls.codec or "-"),
            escape(", ".join(c.copies) or "none"), escape(c.task or "-"),
        )
    if console.width >= WIDE:
        console.print(table)
    else:  # a narrow terminal: one block per candidate, nothing cut
        console.print(str(table.title), highlight=False)
        for c in s.candidates:
            f = c.function
            console.print(f"{c.rank}. {f.ref}  score {c.ranked.score:.1f}  lines {f.lineno}-{f.end_lineno}\n"
                          f"   passage: {c.ranked.passage.label} ({', '.join(c.ranked.matched)})\n"
                          f"   calls: {_calls(c) if ran and not s.no_calls else 'not run'}; "
                          f"codec: {c.calls.codec or '-'}; "
                          f"copies: {', '.join(c.copies) or 'none'}; task: {c.task or '-'}",
                          highlight=False, markup=False, soft_wrap=True)
    if not ran:
        return
    if s.no_calls:
        console.print(s.no_calls, highlight=False, markup=False, soft_wrap=True)
        return
    if not s.commands:
        console.print("no command given and no tests or example scripts found: nothing ran (give --command)",
                      highlight=False)
    for r in s.runs:
        if r.note.startswith("not run"):
            console.print(f"`{r.command}` {r.note}", highlight=False, markup=False, soft_wrap=True)
            continue
        how = "timed out" if r.timed_out else "did not start" if r.exit_code is None else f"exit {r.exit_code}"
        note = f": {r.note}" if r.note else ""
        console.print(f"ran `{r.command}`: {how} in {r.seconds:.1f} s{note}", highlight=False, markup=False,
                      soft_wrap=True)
    uncalled = [c.function.ref for c in s.candidates if not c.calls.calls and not c.calls.unsaved
                and not c.not_recordable]
    unsaved = [f"{c.function.ref} ({_calls(c)})" for c in s.candidates if not c.calls.calls and c.calls.unsaved
               and not c.not_recordable]
    if unsaved:
        console.print(f"called, but no call can be recorded: {'; '.join(unsaved)}", highlight=False, markup=False,
                      soft_wrap=True)
    if uncalled:
        console.print(f"no runnable caller: {', '.join(uncalled)}", highlight=False, markup=False, soft_wrap=True)


def print_created(made: list[Created], wanted: int, s: Suggestion) -> None:
    """One line per task made: where, its cases, its validation; and why fewer than asked were made."""
    from lmrbench.benchmark.suggest_create import eligible

    for m in made:
        name = m.task.path if m.task else m.candidate.function.ref
        if m.error:
            console.print(f"[red]failed[/red] {escape(str(name))}: {escape(m.error)}", highlight=False)
            continue
        cases = len(m.record.cases) if m.record else 0
        verdict = "valid" if m.valid else "invalid: " + "; ".join(r for v in m.validation for r in v.reasons)
        console.print(f"created {escape(str(name))}: {cases} recorded case(s), {escape(verdict)}, in "
                      f"{m.seconds:.1f} s; its instruction is a draft: check it (info.json provenance)",
                      highlight=False, soft_wrap=True)
    if len(made) < wanted:
        console.print(f"only {len(made)} of {wanted} candidate(s) could be made tasks; the others:", highlight=False)
        for c in s.candidates:
            if (why := eligible(c)) is not None:
                console.print(f"  {c.rank}. {c.function.ref}: {why}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add ``suggest`` to the ``task`` sub-app."""
    from lmrbench.cli.task_cmd import task_app

    task_app.command("suggest")(task_suggest)
