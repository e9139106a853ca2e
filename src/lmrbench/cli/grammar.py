"""The command line's one grammar, and the old spellings it still takes for one release.

Groups are singular nouns (``task``, ``image``, ``label``, ``schema``) or ``analyze``; the task set is the argument
BENCH (``--bench`` where it is optional beside run folders), a run is RUN/RUNS (``--run`` where optional); ``--out``
is only ever the folder a command writes. An old spelling is rewritten to the new one before click parses it, with
a one-line note on stderr naming the new one (``OLD_COMMANDS``, ``OLD_OPTIONS``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from typer.core import TyperGroup

try:  # typer >= 0.15 vendors click
    from typer._click.globals import get_current_context  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - typer < 0.15
    from click import get_current_context  # type: ignore[no-redef,unused-ignore]

VERBOSE, QUIET = "lmrbench.verbose", "lmrbench.quiet"
"""Keys of the root options in the context's ``meta`` (shared by every sub-context of one invocation)."""


@dataclass(frozen=True)
class Moved:
    """An old option's new spelling. ``to``: the new option, the positional argument's name (``positional``), or
    ``"lmrbench --verbose"`` for a flag that moved to the root; ``valued``: rewrite only when a value follows
    (``--cache PATH`` is now ``--cache-dir PATH``, while ``--cache`` alone is the new flag)."""

    to: str
    valued: bool = False
    positional: bool = False


ROOT_VERBOSE = Moved("lmrbench --verbose")

OLD_COMMANDS: dict[tuple[str, ...], str] = {
    ("tasks",): "task",  # ``tasks list|check`` are now ``task list|check``
    ("images",): "image",
    ("labels",): "label",
}
"""(group path..., old name) -> the new name in that group."""

_LLM: dict[str, Moved] = {"--timeout": Moved("--request-timeout"), "--concurrency": Moved("--jobs"),
                          "--cache": Moved("--cache-dir", valued=True)}
_VERBOSE: dict[str, Moved] = {"--verbose": ROOT_VERBOSE, "-v": ROOT_VERBOSE}

OLD_OPTIONS: dict[tuple[str, ...], dict[str, Moved]] = {
    ("generate",): _LLM,
    ("judge",): _LLM,
    ("agent",): {"--timeout": Moved("--request-timeout")},
    ("agent-report",): {"--results": Moved("--run")},
    ("evaluate",): {"--timeout": Moved("--test-timeout")},
    ("validate",): {"--timeout": Moved("--test-timeout"), "--run-dir": Moved("--out"), **_VERBOSE},
    ("regrade",): {"--run-dir": Moved("--validation")},
    ("export-predictions",): {"--out": Moved("PREDICTIONS", positional=True)},
    ("task", "new"): {"--out": Moved("BENCH", positional=True)},
    ("task", "export"): _VERBOSE,
    ("task", "record"): {"--timeout": Moved("--command-timeout"), **_VERBOSE},
    ("task", "suggest"): {"--tasks": Moved("--bench"), "--out": Moved("--bench"), **_VERBOSE},
    ("image", "bootstrap"): _VERBOSE,
    ("image", "base"): _VERBOSE,
    ("image", "build"): _VERBOSE,
    ("image", "try"): {"--run": Moved("--command"), **_VERBOSE},
    ("analyze", "familiarity"): {"--timeout": Moved("--request-timeout")},
}
"""Command path -> {old option: its new spelling}. ``--json FILE`` stays a hidden option of its commands (it
writes a file, which ``--format json`` on stdout does not)."""


def note_old(old: str, new: str, where: str = "") -> None:
    """One line on stderr: the old spelling still works, and which new one to use."""
    place = f" ({where})" if where else ""
    print(f"note: {old} is now {new}{place}; the old spelling goes in the next release", file=sys.stderr)


def _path(ctx: Any) -> tuple[str, ...]:
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:
        names.append(str(ctx.info_name))
        ctx = ctx.parent
    return tuple(reversed(names))


def rewrite(path: tuple[str, ...], args: list[str], meta: dict[str, Any]) -> list[str]:
    """``args`` of the command at ``path`` with each old option in its new spelling (a note for each)."""
    table = OLD_OPTIONS.get(path)
    if not table:
        return args
    where = "lmrbench " + " ".join(path)
    out: list[str] = []
    moved: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out += args[i:]
            break
        name, eq, value = arg.partition("=")
        rule = table.get(name) if name.startswith("-") else None
        has_value = bool(eq) or (i + 1 < len(args) and not args[i + 1].startswith("-"))
        if rule is None or (rule.valued and not has_value):
            out.append(arg)
            i += 1
            continue
        if rule is ROOT_VERBOSE:
            note_old(f"{where} {name}", f"{rule.to} {' '.join(path)}")
            meta[VERBOSE] = True
            i += 1
            continue
        if not eq and i + 1 < len(args):
            i += 1
            value, eq = args[i], "="
        note_old(f"{name} {rule.to}" if rule.positional else name,
                 f"{rule.to}, the positional argument" if rule.positional else rule.to, where)
        if rule.positional:
            moved += [value] if eq else []
        else:
            out.append(f"{rule.to}={value}" if eq else rule.to)
        i += 1
    return out + moved


class LmrGroup(TyperGroup):
    """A typer group that takes the old command names and option spellings, each with a note."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        path = _path(ctx)
        if args and (new := OLD_COMMANDS.get((*path, args[0]))) is not None:
            note_old(" ".join(("lmrbench", *path, args[0])), " ".join(("lmrbench", *path, new)))
            args = [new, *args[1:]]
        name, cmd, rest = super().resolve_command(ctx, args)
        if name is not None and not hasattr(cmd, "commands"):
            rest = rewrite((*path, name), rest, ctx.meta)
        return name, cmd, rest


def _flag(key: str) -> bool:
    ctx = get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(key))


def verbose() -> bool:
    """Whether this invocation runs with ``lmrbench --verbose`` (log lines above the bars)."""
    return _flag(VERBOSE)


def quiet() -> bool:
    """Whether this invocation runs with ``lmrbench --quiet`` (no bars, no status or log lines)."""
    return _flag(QUIET)
