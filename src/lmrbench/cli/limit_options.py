"""The options every command that runs a task's code shares (validate, evaluate, task record): where it runs,
on which tasks, with which resources."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lmrbench.benchmark.sandbox.running.run_limits import RunLimits

Memory = Annotated[str | None, typer.Option(
    "--memory", help="Memory per container, e.g. 8g (default: the task's info.json resources, else 2g).")]
Cpus = Annotated[float | None, typer.Option(
    "--cpus", help="CPU cores per container (default: the task's info.json resources, else 1).")]
Gpus = Annotated[str | None, typer.Option(
    "--gpus", help="GPUs per container: all, a count, or ids 0,1 (needs the NVIDIA container toolkit).")]
HfCache = Annotated[Path | None, typer.Option(
    "--hf-cache", help="Hugging Face cache folder, mounted read-only at /hf-cache (HF_HOME; offline).")]

SandboxOpt = Annotated[str | None, typer.Option(
    "--sandbox", envvar="LMRBENCH_SANDBOX",
    help="docker or local (default: docker if its engine answers, else local, saying why).")]
ExecutorOpt = Annotated[str | None, typer.Option(
    "--executor", help="local (default: threads of this machine) or ray (the nodes of a Ray cluster).")]
AddressOpt = Annotated[str | None, typer.Option(
    "--address", help="With --executor ray: auto (default: $RAY_ADDRESS or the cluster of this machine), "
    "host:port of the head, or ray://host:10001.")]
TaskFilter = Annotated[list[str] | None, typer.Option(
    "--task", "-t", help="Only this task (folder name or number; repeatable).")]


def run_limits(memory: str | None, cpus: float | None, gpus: str | None, hf_cache: Path | None) -> RunLimits:
    """The options as RunLimits."""
    return RunLimits(memory=memory, cpus=cpus, gpus=gpus, hf_cache=hf_cache)
