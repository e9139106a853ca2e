"""A recording command's obvious mistakes, found before the task's environment is built (which takes minutes)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)?)?$")
_SHELL = ("&&", "||", ";", "|", "&", ">", "<", "$(", "`")


def command_problem(command: str, repo: Path) -> str | None:
    """One line naming what ``command`` runs that the repository lacks (``python trian.py``, ``python -m
    pkg.modul``, ``./run.sh``), or None. Only plain commands are read: one with shell operators, or a module that
    may be installed rather than in the repository, is left to the run."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return f"the command cannot be read as a shell command ({exc})"
    if not words:
        return "the command is empty"
    if any(op in command for op in _SHELL) or words[0] == "cd" or "=" in words[0]:
        return None
    if _PYTHON.match(words[0]):
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[1:]
        if len(rest) >= 2 and rest[0] == "-m":
            return None  # a module may be installed (pytest): the run says
        if rest and rest[0].endswith(".py") and not (repo / rest[0]).is_file():
            return f"{rest[0]} is not a file of the repository (the command runs in its root): {command!r}"
        return None
    if words[0].startswith(("./", "../")) and not (repo / words[0]).is_file():
        return f"{words[0]} is not a file of the repository (the command runs in its root): {command!r}"
    return None
