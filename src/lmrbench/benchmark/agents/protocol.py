"""The adapter protocol: what an agent implements to work on lmrbench tasks.

The runner (``benchmark.agents.runner``) does the rest, the same for every agent:

1. prepare: writes the task's agent view with ``export_agent`` (masked repository, paper, TASK.md; never the
   tests, golden files or recorded data), builds or finds the task's image and starts an ``AgentContainer``
   of it with no network, the view copied into /workspace;
2. run: calls ``adapter.run(session)``; the adapter drives its agent, sends every command through
   ``session.container.exec`` and every model call to ``session.client`` (the OpenAI-compatible endpoint, called
   from the host), and writes its trajectory to ``session.trajectory`` (any JSON the report can read);
3. collect: reads the goal files back out of the container and turns them into candidates as ``import-agent``
   does, writes the adapter's ``AgentResult`` as ``agent/<task>/outcome.json`` and removes the container.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lmrbench.benchmark.agents.container import AgentContainer
from lmrbench.benchmark.pipeline.llm import LLMClient
from lmrbench.core.taskset import Task
from lmrbench.schemas.agent_run import AgentResult


@dataclass(frozen=True)
class AgentLimits:
    """What bounds one task's agent run."""

    step_limit: int = 50
    """Model calls at most (0: none)."""
    cost_limit: float = 3.0
    """Dollars at most, where the model's price is known (0: none)."""
    wall_time: float = 3600.0
    """Seconds of the whole run at most."""
    command_timeout: float = 300.0
    """Seconds one command may run."""


@dataclass
class AgentSession:
    """What the runner hands the adapter for one task."""

    task: Task
    container: AgentContainer
    client: LLMClient
    prompt: str
    """TASK.md, as the agent view holds it."""
    workdir: str
    """The task's folder in the container (TASK.md and the repository folder are in it)."""
    trajectory: Path
    """Where the adapter keeps its trajectory (JSON; written atomically as it goes)."""
    limits: AgentLimits
    cancel: threading.Event | None = None


__all__ = ["AgentAdapter", "AgentLimits", "AgentResult", "AgentSession"]


class AgentAdapter(Protocol):
    """An agent lmrbench can run: a name, and ``run`` of one task's session."""

    name: str

    def run(self, session: AgentSession) -> AgentResult:
        """Work on the task in ``session.container``; raise ``ContainerError`` or ``LLMError`` of kind connect,
        timeout, rate_limit, server or auth for an infrastructure error (the runner retries those)."""
        ...
