"""Input settings of a run (the paper's Table 3 ablation): how much of the repository a model or agent sees.

- ``full``: the masked repository (the goal file, retrieval-context files, the rest of the repository);
- ``paper+goal-file``: the paper and the masked goal file(s) only, every other repository file removed;
- ``paper-only``: the paper and only the goal functions' signatures and docstrings (methods inside a bare
  header of their class), no repository file at all.

Evaluation always runs the candidate in the full repository: the setting only changes what was shown.
"""

from __future__ import annotations

import ast
from typing import Literal, cast

from lmrbench import pyparse
from lmrbench.core.source.splice import extract_function
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError, UsageError
from lmrbench.schemas.task_info import Implementation

ContextSetting = Literal["full", "paper+goal-file", "paper-only"]
CONTEXT_SETTINGS: tuple[ContextSetting, ...] = ("full", "paper+goal-file", "paper-only")
CONTEXT_KEY = "context"
"""The key of run.json's ``settings`` that records the setting (absent in older runs: full)."""


def check_context(value: str) -> ContextSetting:
    """``value`` as a setting; LmrError listing the valid ones otherwise."""
    if value not in CONTEXT_SETTINGS:
        raise UsageError(f"unknown --context {value!r}; use one of {', '.join(CONTEXT_SETTINGS)}")
    return cast(ContextSetting, value)


def run_context(settings: dict[str, str]) -> ContextSetting:
    """The setting recorded in a run's settings (full for runs made before settings existed)."""
    value = settings.get(CONTEXT_KEY, "full")
    return cast(ContextSetting, value) if value in CONTEXT_SETTINGS else "full"


def _class_header(source: str, cls: str) -> str:
    """The ``class`` line(s) of a top-level class, with its docstring, as written in ``source``."""
    tree = pyparse.parse(source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            lines = source.splitlines()
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            header = "\n".join(lines[first - 1 : node.body[0].lineno - 1]).rstrip()
            first_stmt = node.body[0]
            if ast.get_docstring(node, clean=False) is not None:
                header += "\n" + "\n".join(lines[first_stmt.lineno - 1 : first_stmt.end_lineno]).rstrip()
            return header
    return f"class {cls}:"


def goal_stub(masked: str, qualnames: list[str], *, file: str) -> str:
    """The goal functions of a masked file as signature, docstring and stub only; methods under their class.

    A ``Class.method`` goal comes inside the class's own header (bases, decorators, docstring); every other
    member of the class and of the file is left out.
    """
    groups: dict[str, list[str]] = {}
    for qual in qualnames:
        head = qual.split(".", 1)[0]
        is_class = "." in qual and any(isinstance(n, ast.ClassDef) and n.name == head
                                       for n in pyparse.parse(masked).body)
        text = extract_function(masked, qual, file=file).rstrip()
        if is_class:
            indented = "\n".join(("    " + line) if line else line for line in text.splitlines())
            groups.setdefault(head, []).append(indented)
        else:
            groups.setdefault("", []).append(text)
    parts = list(groups.pop("", []))
    for cls, defs in groups.items():
        parts.append(_class_header(masked, cls) + "\n\n" + "\n\n".join(defs))
    return "\n\n\n".join(parts) + "\n"


def goal_stubs(task: Task, impl: Implementation, plan: list[tuple[str, list[str]]]) -> dict[str, str]:
    """Goal file (relative to the repository) -> its stub text, for the goal files of ``plan``."""
    out = {}
    for which, (rel, quals) in enumerate(plan):
        path = task.goal_path(impl, which)
        try:
            masked = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LmrError(f"cannot read the goal file: {exc}", path) from None
        out[rel] = goal_stub(masked, quals, file=rel) if quals else ""
    return out
