"""Messages the app itself handles (posted by the command palette and by screens)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.dom import DOMNode
from textual.message import Message


@dataclass
class RunAction(Message):
    """Run ``action`` on ``node`` (the command palette posts this; it never acts itself)."""

    node: DOMNode
    action: str


@dataclass
class TaskSetChanged(Message):
    """A task was saved or edited: the task set screen reloads."""

    task_name: str
