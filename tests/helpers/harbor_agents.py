"""A Harbor agent that writes a wrong answer into the goal file and touches nothing else (loaded by Harbor's own
Python with ``--agent-import-path harbor_agents:WrongAnswer --ak answers=FILE``; it imports Harbor, never lmrbench).

``answers`` is a JSON file mapping a goal file's path in the container to the source to write there; the agent
writes the one whose path its instruction names, as the task's user, through the shell the environment gives.
"""

from __future__ import annotations

import base64
import json
import shlex
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext


class WrongAnswer(BaseAgent):
    """Writes a wrong goal file (a mutant of the golden code) where the instruction says, then stops."""

    def __init__(self, *args: object, answers: str = "", **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._answers: dict[str, str] = json.loads(Path(answers).read_text()) if answers else {}

    @staticmethod
    def name() -> str:
        return "lmrbench-wrong-answer"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return None

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        path = next((p for p in self._answers if f"`{p}`" in instruction), None)
        if path is None:
            raise RuntimeError("no answer for this instruction's goal file")
        data = base64.b64encode(self._answers[path].encode()).decode()
        result = await environment.exec(f"echo {data} | base64 -d > {shlex.quote(path)}")
        if result.return_code != 0:
            raise RuntimeError(f"writing {path} failed: {result.stderr}")
