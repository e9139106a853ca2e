"""The masked body's styles, apart from the LibCST transform, so that checking a task's settings imports no parser."""

from __future__ import annotations

from enum import StrEnum


class MaskStyle(StrEnum):
    """What a masked body holds after the docstring."""

    TODO_RAISE = "todo_raise"
    """A ``# TODO: Implement this function`` line, then ``raise NotImplementedError`` (the default)."""
    RAISE = "raise"
    """``raise NotImplementedError`` alone."""
    PASS = "pass"
    """``pass`` alone."""
