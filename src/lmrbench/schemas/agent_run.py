"""The files an agent run adds to a run folder: per task, the outcome of the agent's work (``agent/<task>/
outcome.json``, :class:`AgentOutcome`) beside its trajectory (``agent/<task>/trajectory.json``, the agent's own
format), and the report of its actions by kind (:class:`ActionReport`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lmrbench.schemas.run import Usage


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class AgentStatus(StrEnum):
    """How an agent's work on one task ended."""

    SUBMITTED = "submitted"
    """The agent said it was done."""
    STEP_LIMIT = "step_limit"
    """It reached the step or the cost limit first."""
    TIME_LIMIT = "time_limit"
    """It reached the wall-clock limit first."""
    GAVE_UP = "gave_up"
    """It stopped otherwise: replies it could not act on, a model that refused the request."""
    INFRA_ERROR = "infra_error"
    """The container or the model's endpoint failed: not the agent's doing; retried, and by a re-run."""


class AgentResult(_Strict):
    """How an agent's run on one task ended, as its adapter says it (the part of ``AgentOutcome`` it fills)."""

    status: AgentStatus
    """How the run ended."""
    exit_status: str = ""
    """The agent's own word for it (mini-swe-agent's exit status)."""
    reason: str = ""
    """One line on a status other than submitted."""
    steps: int = 0
    """Model calls made."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens the model calls cost."""
    cost: float = 0.0
    """Their price in dollars where the model's price is known (0 otherwise)."""


class AgentOutcome(AgentResult):
    """``agent/<task>/outcome.json``: how one task's agent run ended; its goal files are the task's candidates."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    task: str
    """The task folder's name."""
    agent: str
    """The agent that worked (its adapter's name)."""
    model: str
    """The model id the agent called."""
    duration: float = 0.0
    """Seconds the last try took: the agent view, the image (built or found), the container and the agent."""
    attempts: int = 1
    """Tries made (an infrastructure error is tried again)."""
    image: str = ""
    """The task image the container ran."""
    trajectory: str = ""
    """The trajectory file, relative to this file's folder ('' when none was written)."""


ActionKind = Literal["read", "edit", "run", "search", "think", "submit"]
ACTION_KINDS: tuple[ActionKind, ...] = ("read", "edit", "run", "search", "think", "submit")


class ActionCounts(_Strict):
    """Actions of one group of trajectories by kind."""

    trajectories: int = 0
    """Trajectories counted."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Kind (read, edit, run, search, think, submit) -> actions."""


class ActionReport(_Strict):
    """The actions of a run's (or a log's) trajectories by kind, over all and split by outcome (paper 5.1)."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    source: str
    """The run folder or log file read."""
    agent: str = ""
    """mini-swe-agent or OpenHands."""
    all: ActionCounts = Field(default_factory=ActionCounts)
    """Every trajectory."""
    by_outcome: dict[str, ActionCounts] = Field(default_factory=dict)
    """passed, failed or unknown (no unit-test result) -> the trajectories of that outcome."""
