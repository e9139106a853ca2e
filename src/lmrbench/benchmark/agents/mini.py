"""The mini-swe-agent adapter: its own agent loop (``DefaultAgent``) and prompts (``mini_textbased.yaml``), with a
model class that calls the endpoint through lmrbench's ``LLMClient`` (from the host) and an environment class
that runs each command in the task's ``AgentContainer`` through exec (mini-swe-agent's own Docker environment
starts its containers with ``docker run`` and a network; this one is handed a container lmrbench made).

mini-swe-agent is the optional extra ``agents``: ``pip install -e '.[agents]'``.
"""

from __future__ import annotations

import json
import os
import platform
import threading
import time
from pathlib import Path
from typing import Any

from lmrbench.benchmark.agents.calls import in_thread
from lmrbench.benchmark.agents.container import AgentContainer
from lmrbench.benchmark.agents.pricing import price
from lmrbench.benchmark.agents.protocol import AgentResult, AgentSession
from lmrbench.benchmark.pipeline.llm import LLMClient
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text
from lmrbench.progress import check_cancel
from lmrbench.schemas.agent_run import AgentStatus
from lmrbench.schemas.run import Usage

NAME = "mini-swe-agent"
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
ACTION_REGEX = r"```mswea_bash_command\s*\n(.*?)\n```"
_EXITS = {"Submitted": AgentStatus.SUBMITTED, "LimitsExceeded": AgentStatus.STEP_LIMIT,
          "TimeExceeded": AgentStatus.TIME_LIMIT}  # fmt: skip


def _import_mini() -> tuple[Any, Any]:
    """mini-swe-agent's package and its text-based config, or LmrError saying how to install it."""
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # its banner would land in lmrbench's output
    try:
        import minisweagent
        import yaml
        from minisweagent.config import get_config_path
    except ImportError:
        raise LmrError("mini-swe-agent is not installed; pip install 'lmrbench[agents]'") from None
    config = yaml.safe_load(Path(get_config_path("mini_textbased")).read_text())
    return minisweagent, config


def check_installed() -> None:
    """LmrError saying how to install mini-swe-agent when it is not."""
    _import_mini()


def task_text(session: AgentSession) -> str:
    """The task as the agent reads it: where it works, how its work is taken, and TASK.md."""
    repo = session.task.info.repo_folder_name
    return (
        f"You work in `{session.workdir}`: it holds TASK.md (below) and the repository folder `{repo}/`. "
        "There is no network. The unit tests are not given: when the functions are implemented, submit; "
        "what the files hold then is taken as your work.\n\n" + session.prompt
    )


class LmrModel:
    """mini-swe-agent's Model protocol over an ``LLMClient``: text replies with one ```mswea_bash_command``` block."""

    def __init__(self, client: LLMClient, model_config: dict[str, Any], cancel: threading.Event | None = None) -> None:
        self.client, self.cancel = client, cancel
        self.config = dict(model_config, model_name=client.params.model)
        self.usage = Usage()

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        """One model call; the reply with its parsed action, tokens, price and time in ``extra``."""
        from minisweagent.exceptions import FormatError
        from minisweagent.models.utils.actions_text import parse_regex_actions

        prepared = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        t0 = time.time()
        # in a thread of its own: a cancel gives up a reply that takes minutes (it ends with the process)
        reply = in_thread(lambda: self.client.complete(prepared, use_cache=False), "lmrbench-model-call",
                          every=lambda: check_cancel(self.cancel))
        self.usage = self.usage.add(reply.usage)
        extra = {"usage": reply.usage.model_dump(), "cost": price(self.client.params.model, reply.usage),
                 "seconds": round(time.time() - t0, 3), "finish_reason": reply.finish_reason}  # fmt: skip
        try:
            actions = parse_regex_actions(
                reply.text, action_regex=ACTION_REGEX, format_error_template=self.config["format_error_template"],
                template_kwargs={"finish_reason": reply.finish_reason})  # fmt: skip
        except FormatError as exc:
            exc.messages[0]["extra"].update(extra, response=reply.text)
            raise
        return {"role": "assistant", "content": reply.text,
                "extra": {"actions": actions, **extra, "timestamp": time.time()}}  # fmt: skip

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        return dict(kwargs)

    def format_observation_messages(self, message: dict[str, Any], outputs: list[dict[str, Any]],
                                    template_vars: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        from minisweagent.models.utils.actions_text import format_observation_messages

        return format_observation_messages(outputs, observation_template=self.config["observation_template"],
                                           template_vars=template_vars)  # fmt: skip

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return dict(self.config)

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"model": {"model_name": self.client.params.model,
                                              "base_url": self.client.params.base_url},
                                    "model_type": "lmrbench LLMClient"}}}  # fmt: skip


class ContainerEnvironment:
    """mini-swe-agent's Environment protocol over an ``AgentContainer``: each action a bash command run by exec."""

    def __init__(self, container: AgentContainer, workdir: str, timeout: float, deadline: float) -> None:
        self.container, self.workdir, self.timeout, self.deadline = container, workdir, timeout, deadline
        self.config = {"cwd": workdir, "timeout": timeout, "image": container.image}

    def execute(self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run the action's command; raise mini-swe-agent's Submitted when its output starts with the submit word."""
        from minisweagent.exceptions import Submitted

        limit = max(1.0, min(float(timeout or self.timeout), self.deadline - time.monotonic()))
        result = self.container.exec(str(action.get("command", "")), cwd=cwd or self.workdir, timeout=limit)
        output: dict[str, Any] = {"output": result.output, "returncode": result.returncode, "exception_info": "",
                                  "extra": {"seconds": round(result.duration, 3)}}  # fmt: skip
        if result.timed_out:
            output["exception_info"] = f"the command was killed after {limit:g} s"
        lines = result.output.lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT and result.returncode == 0:
            rest = "".join(lines[1:])
            done = {"exit_status": "Submitted", "submission": rest}
            raise Submitted({"role": "exit", "content": rest, "extra": done})
        return output

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {**self.config, "system": "Linux", "release": "", "version": "", "machine": platform.machine(),
                **kwargs}  # fmt: skip

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"environment": dict(self.config),
                                    "environment_type": "lmrbench AgentContainer (docker exec, no network)"}}}


def _agent_class() -> type:
    from minisweagent.agents.default import DefaultAgent

    class Agent(DefaultAgent):  # type: ignore[misc]
        """DefaultAgent that stops on lmrbench's cancel and writes its trajectory atomically."""

        cancel: threading.Event | None = None

        def query(self) -> dict[str, Any]:
            check_cancel(self.cancel)
            return dict(super().query())

        def save(self, path: Path | None, *extra_dicts: dict[str, Any]) -> dict[str, Any]:
            data: dict[str, Any] = self.serialize(*extra_dicts)
            if path:
                atomic_write_text(Path(path), json.dumps(data, indent=1, default=str) + "\n")
            return data

    return Agent


class MiniSweAgent:
    """The adapter (see ``protocol.AgentAdapter``)."""

    name = NAME

    def run(self, session: AgentSession) -> AgentResult:
        """mini-swe-agent's DefaultAgent on the task, until it submits or reaches a limit."""
        _, config = _import_mini()
        model = LmrModel(session.client, config["model"], session.cancel)
        deadline = time.monotonic() + session.limits.wall_time
        env = ContainerEnvironment(session.container, session.workdir, session.limits.command_timeout, deadline)
        agent_config = {k: v for k, v in config["agent"].items() if k in ("system_template", "instance_template")}
        agent = _agent_class()(model, env, **agent_config, step_limit=session.limits.step_limit,
                               cost_limit=session.limits.cost_limit,
                               wall_time_limit_seconds=int(session.limits.wall_time),
                               output_path=session.trajectory)  # fmt: skip
        agent.cancel = session.cancel
        info = agent.run(task_text(session))  # ContainerError and LLMError reach the runner as they are
        exit_status = str(info.get("exit_status", ""))
        status = _EXITS.get(exit_status, AgentStatus.GAVE_UP)
        reason = "" if status is AgentStatus.SUBMITTED else exit_status
        return AgentResult(status=status, exit_status=exit_status, reason=reason, steps=agent.n_calls,
                           usage=model.usage, cost=float(agent.cost))  # fmt: skip
