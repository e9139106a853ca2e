"""The command line speaks one grammar: every command's options walked in-process, and the old spellings still
taken with a note naming the new one; exit codes the same on every command."""

from __future__ import annotations

import io
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console

from lmrbench.cli.grammar import OLD_COMMANDS, OLD_OPTIONS, QUIET, ROOT_VERBOSE, VERBOSE, rewrite
from lmrbench.cli.main import app, main
from lmrbench.cli.rich_progress import RichProgress

GROUPS = {"task", "image", "label", "analyze", "schema"}
ARGUMENTS = {"BENCH", "RUN", "RUNS", "TASK", "BENCH|RUN", "REPO", "RESULTS", "PREDICTIONS", "REQUIREMENTS", "SOURCE",
             "AGENT_DIR"}
"""The positional arguments' names: the task set is BENCH and a run RUN (RUNS) wherever they are positional."""
TIMEOUTS = {"--request-timeout", "--test-timeout", "--command-timeout", "--agent-timeout"}
PARALLEL = {"--jobs", "--concurrency", "--workers", "--threads", "--parallel"}
GONE = {"--timeout", "--concurrency", "--run-dir", "--tasks", "--results", "--verbose", "--quiet", "--json", "-v"}
"""Old or ambiguous names no command shows (they live on as hidden spellings for one release)."""
ENV = {"--model": "LMRBENCH_MODEL", "--base-url": "LMRBENCH_BASE_URL", "--sandbox": "LMRBENCH_SANDBOX",
       "--jobs": "LMRBENCH_JOBS"}
ENV_EXEMPT = {("task", "suggest")}
"""suggest's --model and --base-url are an optional pair that improves its drafts, not the model under test."""
RESULTS_PRINTED = {("validate",), ("report",), ("agent-report",), ("task", "list"), ("task", "check"),
                   ("image", "list"), ("analyze", "structure"), ("analyze", "regression"), ("analyze", "familiarity"),
                   ("label", "agreement"), ("label", "binary"), ("generate",), ("evaluate",), ("judge",), ("agent",),
                   ("import-agent",), ("import-predictions",), ("regrade",), ("label", "assign")}
"""Commands whose output is a result (a table of figures), so ``--format json`` prints it on stdout."""


def _walk(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _walk(sub, (*path, name))


def _options(cmd: Any) -> dict[str, Any]:
    return {name: p for p in cmd.params if p.param_type_name == "option"
            for name in (*p.opts, *p.secondary_opts)}  # fmt: skip


def _problems(path: tuple[str, ...], cmd: Any) -> list[str]:
    """What breaks the grammar in one command."""
    where = " ".join(("lmrbench", *path))
    shown = {n: p for n, p in _options(cmd).items() if not p.hidden and n != "--help"}
    bad = [f"{where}: shows {n}" for n in sorted(GONE & shown.keys())]
    for p in cmd.params:
        if p.param_type_name == "argument" and (p.metavar or p.name.upper()) not in ARGUMENTS:
            bad.append(f"{where}: argument {p.metavar or p.name.upper()}")
    bad += [f"{where}: {n}" for n in shown if "timeout" in n and n not in TIMEOUTS]
    if len(PARALLEL & shown.keys()) > 1:
        bad.append(f"{where}: two parallelism knobs {sorted(PARALLEL & shown.keys())}")
    if "--jobs" in shown and "-j" not in shown["--jobs"].opts:
        bad.append(f"{where}: --jobs without -j")
    if "--out" in shown and "folder" not in (shown["--out"].help or "").lower():
        bad.append(f"{where}: --out is not a folder the command writes")
    if "--cache" in shown and (shown["--cache"].secondary_opts != ["--no-cache"] or "--cache-dir" not in shown):
        bad.append(f"{where}: --cache is not --cache/--no-cache beside --cache-dir")
    for name, var in ENV.items():
        if name in shown and shown[name].envvar != var and path not in ENV_EXEMPT:
            bad.append(f"{where}: {name} does not read ${var}")
    if "--memory" in shown and not {"--cpus", "--gpus", "--hf-cache"} <= shown.keys():
        bad.append(f"{where}: --memory without the other limits (--cpus, --gpus, --hf-cache)")
    if path in RESULTS_PRINTED and "--format" not in shown:
        bad.append(f"{where}: prints a result without --format")
    if "--format" in shown and "json" not in (shown["--format"].help or ""):
        bad.append(f"{where}: --format without json")
    for old, moved in OLD_OPTIONS.get(path, {}).items():
        if old in shown and not moved.valued:
            bad.append(f"{where}: the old {old} is still shown")
        names = {p.metavar or p.name.upper() for p in cmd.params} | shown.keys()
        if moved is not ROOT_VERBOSE and moved.to not in names:
            bad.append(f"{where}: the old {old} points at {moved.to}, which it lacks")
    return bad


def test_every_command_speaks_one_grammar() -> None:
    root = typer.main.get_command(app)
    commands = dict(_walk(root))
    groups = {p[0] for p in commands if len(p) == 2}
    leaves = {p: c for p, c in commands.items() if not hasattr(c, "commands")}
    assert groups == GROUPS
    root_opts = _options(root)
    assert {"--verbose", "-v", "--quiet", "-q"} <= root_opts.keys()
    problems = [bad for path, cmd in leaves.items() for bad in _problems(path, cmd)]
    problems += [f"old command {' '.join(old)} -> {new}: no such group" for old, new in OLD_COMMANDS.items()
                 if (*old[:-1], new) not in commands or old in commands]
    problems += [f"old spellings of {' '.join(p)}: no such command" for p in OLD_OPTIONS if p not in leaves]
    assert not problems, "\n".join(problems)
    assert len(leaves) >= 35  # every command was walked


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run the console script's entry point in this process; its exit status."""
    monkeypatch.setattr(sys, "argv", ["lmrbench", *args])
    before = signal.getsignal(signal.SIGTERM)
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        signal.signal(signal.SIGTERM, before)
    return 0


def test_old_spellings_work_with_a_note_and_exit_codes_agree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "bench"
    empty.mkdir()
    assert _main(monkeypatch, "tasks", "list", str(empty)) == 0
    out = capsys.readouterr()
    assert out.err.splitlines() == ["note: lmrbench tasks is now lmrbench task; the old spelling goes in the next "
                                    "release"] and "0 task(s) loaded" in out.out
    assert _main(monkeypatch, "task", "list", "--format", "json", str(empty)) == 0
    listed = capsys.readouterr()
    assert json.loads(listed.out) == {"bench": str(empty), "implementations": [], "problems": []}
    assert not listed.err
    assert _main(monkeypatch, "task", "list", "--format", "yaml", str(empty)) == 2  # usage
    assert "'yaml' is not one of text, json" in capsys.readouterr().err
    code = _main(monkeypatch, "regrade", str(tmp_path / "missing"), "--run-dir", str(tmp_path / "none"))
    assert code == 1  # an LmrError: a runtime error, not a usage error
    assert capsys.readouterr().err.splitlines() == [
        "note: --run-dir is now --validation (lmrbench regrade); the old spelling goes in the next release",
        f"error: {tmp_path / 'missing'}: not a folder"]


def _progress_lines(key: str | None) -> list[str]:
    """What a phase and two log lines print off a terminal, inside an invocation with the root option ``key``."""
    out = io.StringIO()
    command = typer.core.TyperCommand("lmrbench")
    ctx = command.context_class(command)
    if key:
        ctx.meta[key] = True
    with ctx, RichProgress(Console(file=out, force_terminal=False, width=200), every=3600, quiet_under=0) as bar:
        bar.start("validate", 1)
        bar.advance(1, "1-DPO")
        bar.log("pip: Collecting torch")
        bar.log("warning: disk almost full")
    return out.getvalue().splitlines()


def test_root_verbose_and_quiet_reach_every_progress_display() -> None:
    assert _progress_lines(QUIET) == ["warning: disk almost full"]
    plain, loud = _progress_lines(None), _progress_lines(VERBOSE)
    assert plain[0] == "warning: disk almost full" and plain[1].startswith("validate: 1/1 done") and len(plain) == 2
    assert loud[:2] == ["pip: Collecting torch", "warning: disk almost full"] and loud[2:] == plain[1:]


def test_old_options_are_rewritten_to_the_new_before_parsing(capsys: pytest.CaptureFixture[str]) -> None:
    meta: dict[str, Any] = {}
    old = ["B", "--out", "R", "--timeout", "5", "--concurrency=3", "--cache", "/c", "--task", "1"]
    assert rewrite(("generate",), old, meta) == ["B", "--out", "R", "--request-timeout=5", "--jobs=3",
                                                 "--cache-dir=/c", "--task", "1"]
    assert rewrite(("generate",), ["B", "--cache", "--out", "R"], meta) == ["B", "--cache", "--out", "R"]  # the flag
    assert rewrite(("task", "new"), ["--out", "my-bench", "--repo", "r"], meta) == ["--repo", "r", "my-bench"]
    assert rewrite(("validate",), ["B", "-v", "--", "--timeout"], meta) == ["B", "--", "--timeout"]
    assert meta == {VERBOSE: True}
    notes = capsys.readouterr().err.splitlines()
    assert notes[0] == "note: --timeout is now --request-timeout (lmrbench generate); the old spelling goes in the " \
                       "next release"
    assert "note: --out BENCH is now BENCH, the positional argument (lmrbench task new); the old spelling goes in " \
           "the next release" in notes
    assert len(notes) == 5
