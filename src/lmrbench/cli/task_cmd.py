"""``lmrbench task new|add|remask`` and ``lmrbench task list|check``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lmrbench.cli.grammar import LmrGroup
from lmrbench.cli.output import Format, check_format, emit
from lmrbench.cli.tables import print_table
from lmrbench.errors import LmrError, UsageError

if TYPE_CHECKING:
    from lmrbench.authoring.check.findings import Finding
    from lmrbench.authoring.task.mask_style import MaskStyle
    from lmrbench.core.taskset import Task

task_app = typer.Typer(cls=LmrGroup, help="Author one task (new, add, remask, record, export, suggest) or look at a "
                       "task set (list, check).", no_args_is_help=True)
# Piped output (files, grep) gets long lines rather than ellipsised columns.
console = Console(width=None if sys.stdout.isatty() else 200)


@task_app.command("new")
def task_new(
    out: Annotated[Path, typer.Argument(metavar="BENCH", help="The task set folder to create the task in.")],
    repo: Annotated[str, typer.Option("--repo", help="Git URL, local git repository or folder to take the code from.")],
    function: Annotated[list[str], typer.Option("--function", help="FILE::[Class.]name to mask; repeat for more.")],
    instruction: Annotated[list[str], typer.Option("--instruction", help="What to implement; once, or per function.")],
    category: Annotated[str, typer.Option("--category", help="One of the paper's nine categories.")] = "",
    paper: Annotated[Path | None, typer.Option("--paper", help="The paper's PDF.")] = None,
    paper_url: Annotated[str, typer.Option("--paper-url", help="Where the paper is published.")] = "",
    paper_name: Annotated[str, typer.Option("--paper-name", help="The paper's title.")] = "",
    year: Annotated[int | None, typer.Option("--year", help="The paper's year.")] = None,
    commit: Annotated[str | None, typer.Option("--commit", help="Commit to pin (default: HEAD).")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Task folder name, N-Name (default: next number).")] = None,
    retrieval: Annotated[list[str] | None, typer.Option("--retrieval", help="Repo file shown as context.")] = None,
    mask_style: Annotated[str, typer.Option("--mask-style", help="todo_raise, raise or pass.")] = "todo_raise",
    repo_url: Annotated[str | None, typer.Option(
        "--repo-url", help="repo_url to record (default: --repo), e.g. the public URL of a local mirror.")] = None,
    repo_folder_name: Annotated[str | None, typer.Option(
        "--repo-folder-name", help="The repository's folder in the task (default: the repository's name).")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an existing task folder; make a task even when one masks the same function.")] = False,
) -> None:
    """Create a task folder: masked repository, golden file, info.json, paper files, unit_test/, Dockerfile."""
    from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec, check_spec

    style = _mask_style(mask_style)
    functions = [FunctionRef.parse(f) for f in function]
    spec = TaskSpec(
        source=repo,
        functions=functions,
        instructions=instruction,
        bench=out,
        category=category,
        paper=paper,
        paper_url=paper_url,
        paper_name=paper_name,
        year=year,
        commit=commit,
        name=name,
        retrieval_context=retrieval or [],
        mask_style=style,
        repo_url=repo_url,
        repo_folder_name=repo_folder_name,
    )
    check_spec(spec)  # bad options are refused before the parsers (PyMuPDF, LibCST) are imported: 0.25 s, not 1.2
    from lmrbench.authoring.task.task_new import create_task
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress() as progress:
        task = create_task(spec, force=force, progress=progress)
    console.print(f"created {task.path} ({len(task.info.implementations)} implementation(s), "
                  f"commit {task.info.upstream_commit or 'none'})")
    _warn_leaks(task)


def _warn_leaks(task: Task) -> None:
    """Say where the new task's repository still holds its golden code (copies, near-copies, bytecode)."""
    from lmrbench.authoring.check.check import leak_findings

    for f in leak_findings(task):
        console.print(f"[yellow]warning[/yellow] {f.code} {f.where}: {f.message}; remove it before publishing",
                      highlight=False, soft_wrap=True)


def _mask_style(text: str) -> MaskStyle:
    from lmrbench.authoring.task.mask_style import MaskStyle

    try:
        return MaskStyle(text)
    except ValueError:
        raise UsageError(f"unknown --mask-style {text!r}; use todo_raise, raise or pass") from None


@task_app.command("add")
def task_add(
    task: Annotated[Path, typer.Argument(help="The task folder to add an implementation to.")],
    function: Annotated[str, typer.Option("--function", help="FILE::[Class.]name to mask.")],
    instruction: Annotated[str, typer.Option("--instruction", help="What to implement.")],
    category: Annotated[str, typer.Option("--category", help="One of the paper's nine categories.")] = "",
    mask_style: Annotated[str, typer.Option("--mask-style", help="todo_raise, raise or pass.")] = "todo_raise",
) -> None:
    """Mask one more function of a task's repository as a new implementation."""
    from lmrbench.authoring.task.goal_functions import add_implementation
    from lmrbench.authoring.task.task_spec import FunctionRef
    from lmrbench.core.taskset import load_task

    new = add_implementation(load_task(task), FunctionRef.parse(function), instruction, category=category,
                             mask_style=_mask_style(mask_style))
    impl = new.info.implementations[-1]
    _warn_leaks(new)
    console.print(f"added implementation {impl.index} to {new.path}: {impl.goal_file}::{function.partition('::')[2]}"
                  f" (tests go in {impl.unit_test_file})", highlight=False)


@task_app.command("remask")
def task_remask(
    task: Annotated[Path, typer.Argument(help="The task folder.")],
    impl: Annotated[int, typer.Option("--impl", help="The implementation whose goal file to rebuild.")],
    mask_style: Annotated[str, typer.Option("--mask-style", help="todo_raise, raise or pass.")],
) -> None:
    """Rebuild an implementation's masked goal file from its golden file in another mask style."""
    from lmrbench.authoring.task.goal_functions import remask
    from lmrbench.core.taskset import load_task

    new = remask(load_task(task), impl, _mask_style(mask_style))
    files = ", ".join(new.info.implementation(impl).goal_files)
    console.print(f"re-masked {files} of {new.path} ({mask_style})", highlight=False)


@task_app.command("export")
def task_export(
    task: Annotated[Path, typer.Argument(help="The task folder (with --harbor: a task folder or a task set).")],
    out: Annotated[Path, typer.Option("--out", help="--official: the folder to write <out>/<task name> into; "
                                      "--harbor: the dataset folder, one Harbor task per implementation.")],
    official: Annotated[bool, typer.Option(
        "--official", help="For the official LMR-Bench tooling: its docker build, runner and statistics.")] = False,
    harbor: Annotated[bool, typer.Option(
        "--harbor", help="Harbor task folders (harbor run -p OUT): environment, instruction, lmrbench's verifier, "
        "the golden solution.")] = False,
    base_image: Annotated[str | None, typer.Option(
        "--base-image", help="FROM of the exported Dockerfile (default python:3.11-slim).")] = None,
    no_wheels: Annotated[bool, typer.Option(
        "--no-wheels", help="Install requirements from the index at build time instead of a wheels/ folder.")]
    = False,
    test_timeout: Annotated[float, typer.Option("--test-timeout", help="--harbor: seconds the tests may run.")]
    = 600.0,
    agent_timeout: Annotated[float, typer.Option(
        "--agent-timeout", help="--harbor: seconds an agent may work on a task.")] = 3600.0,
    force: Annotated[bool, typer.Option("--force", help="Replace an earlier export.")] = False,
) -> None:
    """Copy a task in the official layout so that the official tooling builds and runs it as it is, or write
    Harbor task folders of a task set."""
    from lmrbench.authoring.check.dockerfile import DEFAULT_BASE_IMAGE
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.core.taskset import load_task

    if official == harbor:
        raise UsageError("task export writes one format: pass --official or --harbor")
    if harbor:
        _export_harbor(task, out, base_image or DEFAULT_BASE_IMAGE, test_timeout, agent_timeout, not no_wheels, force)
        return
    from lmrbench.benchmark.pipeline.official_export import export_official

    with RichProgress() as progress:
        res = export_official(load_task(task), out, base_image=base_image or DEFAULT_BASE_IMAGE,
                              wheels=not no_wheels, force=force, progress=progress)
    for note in res.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    scripts = f"; script block added to {', '.join(res.scripts)}" if res.scripts else ""
    console.print(f"exported {res.path}{scripts}", highlight=False, markup=False)


def _export_harbor(bench: Path, out: Path, base_image: str, timeout: float, agent_timeout: float, wheels: bool,
                   force: bool) -> None:
    from lmrbench.benchmark.pipeline.harbor_export import export_harbor
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.core.taskset import load_taskset

    tasks, problems = load_taskset(bench)
    if problems:
        raise problems[0]
    if not tasks:
        raise LmrError("no task folder (one holding info.json) here", bench)
    with RichProgress() as progress:
        res = export_harbor(tasks, out, base_image=base_image, timeout=timeout, agent_timeout=agent_timeout,
                            wheels=wheels, force=force, progress=progress)
    for note in res.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    console.print(f"exported {len(res.tasks)} Harbor task(s) to {res.path}: harbor run -p {res.path} -a AGENT",
                  highlight=False, markup=False)


@task_app.command("list")
def tasks_list(bench: Annotated[Path, typer.Argument(help="The task set folder (or one task folder).")],
               fmt: Format = "text") -> None:
    """One row per implementation: task, index, category, goal file and function, tests."""
    from lmrbench.core.taskset import load_taskset

    check_format(fmt)
    tasks, problems = load_taskset(bench)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        for impl in task.info.implementations:
            cat = impl.category_normalized
            qual = ".".join(p for p in (impl.class_name, ", ".join(impl.goal_functions)) if p)
            rows.append({"task": task.name, "impl": impl.index,
                         "category": cat.value if cat else f"? {impl.category or ''}".strip(),
                         "goal": f"{', '.join(impl.goal_files)}::{qual}", "tests": list(impl.unit_test_files)})
    errors = Console(stderr=True)
    for p in problems:
        errors.print(f"[red]error:[/red] {escape(str(p))}", highlight=False, soft_wrap=True)
    if fmt == "json":
        emit(fmt, {"bench": str(bench), "implementations": rows, "problems": [str(p) for p in problems]})
    else:
        table = Table("task", "impl", "category", "goal", "tests")
        for row in rows:
            table.add_row(row["task"], str(row["impl"]), row["category"], row["goal"], ", ".join(row["tests"]))
        print_table(console, table)
        console.print(f"{len(tasks)} task(s) loaded, {len(problems)} broken")
    if problems:
        raise typer.Exit(1)


@task_app.command("check")
def tasks_check(
    bench: Annotated[Path, typer.Argument(help="A task set folder (or one task folder).")],
    select: Annotated[str | None, typer.Option("--select", help="Only these codes or prefixes (L,T301).")] = None,
    ignore: Annotated[str | None, typer.Option("--ignore", help="Leave out these codes or prefixes (D403).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text, json or sarif (on stdout).")] = "text",
    fail_on: Annotated[str, typer.Option("--fail-on", help="Exit 1 on findings this severe: error, warning, note.")]
    = "error",
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, envvar="LMRBENCH_JOBS",
                                             help="Tasks checked at once (default: CPUs).")] = None,
) -> None:
    """Check every task statically: files, goal functions, leaked or near-copied golden code, tests that cannot
    test the candidate, Dockerfiles. Identical findings of many tasks are shown once."""
    import json

    from lmrbench import __version__
    from lmrbench.authoring.check.checkset import taskset_findings
    from lmrbench.authoring.check.findings import Selection, Severity, as_json, as_sarif, exit_status, parse_codes
    from lmrbench.cli.rich_progress import RichProgress

    check_format(fmt, ("text", "json", "sarif"))
    try:
        threshold = Severity[fail_on.upper()]
    except KeyError:
        raise UsageError(f"unknown --fail-on {fail_on!r}; use error, warning or note") from None
    sel, ign = parse_codes(select, "--select"), parse_codes(ignore, "--ignore")
    with RichProgress() as progress:
        names, findings = taskset_findings(bench, Selection(sel, ign), jobs=jobs, progress=progress)
    if fmt == "json":
        sys.stdout.write(json.dumps(as_json(names, findings), indent=2) + "\n")
    elif fmt == "sarif":
        root = bench.parent if (bench / "info.json").is_file() else bench
        sys.stdout.write(json.dumps(as_sarif(findings, __version__, root), indent=2) + "\n")
    else:
        _print_findings(names, findings)
    raise typer.Exit(exit_status(findings, threshold))


_STYLE = {"error": "bold red", "warning": "yellow", "note": "cyan"}
_MAX_NAMES = 6


def _print_findings(names: list[str], items: list[Finding]) -> None:
    """Grouped text: one line per group of identical findings, a second line naming the tasks when many."""
    from lmrbench.authoring.check.findings import Severity, group

    for g in group(items):
        sev = str(g.severity)
        head = f"[{_STYLE[sev]}]{sev:7s}[/] [bold]{g.code}[/]"
        tasks = sorted({t for t, _ in g.where}, key=lambda n: (len(n.split("-")[0]), n))
        places = {w for _, w in g.where}
        if len(g.where) == 1:
            task, where = g.where[0]
            text = f"{task}/{where}: {g.message}" if where else f"{task}: {g.message}"
            console.print(f"{head} {escape(text)}",
                          highlight=False, soft_wrap=True)
            continue
        if len(places) == 1:
            where = f"{next(iter(places))}: " if next(iter(places)) else ""
            console.print(f"{head} {len(tasks)} tasks: {escape(where + g.message)}", highlight=False, soft_wrap=True)
            more = f" and {len(tasks) - _MAX_NAMES} more" if len(tasks) > _MAX_NAMES else ""
            console.print(f"          {escape(', '.join(tasks[:_MAX_NAMES]))}{more}", highlight=False, soft_wrap=True)
            continue
        console.print(f"{head} {len(g.where)} places: {escape(g.message)}", highlight=False, soft_wrap=True)
        for task, where in g.where[:_MAX_NAMES]:
            console.print(f"          {escape(f'{task}/{where}')}", highlight=False, soft_wrap=True)
        if len(g.where) > _MAX_NAMES:
            console.print(f"          and {len(g.where) - _MAX_NAMES} more", highlight=False)
    counts = {s: sum(f.severity is s for f in items) for s in reversed(Severity)}
    bad = len({f.task for f in items if f.severity > Severity.NOTE})
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items())
    console.print(f"{len(names)} task(s) checked: {summary}; {len(names) - bad} without errors or warnings",
                  highlight=False)


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.add_typer(task_app, name="task")
