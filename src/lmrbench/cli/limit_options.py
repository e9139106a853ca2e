"""The resource options of every command that runs a task's code (validate, evaluate, task record)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lmrbench.benchmark.sandbox.run_limits import RunLimits

Memory = Annotated[str | None, typer.Option(
    "--memory", help="Memory per container, e.g. 8g (default: the task's info.json resources, else 2g).")]
Cpus = Annotated[float | None, typer.Option(
    "--cpus", help="CPU cores per container (default: the task's info.json resources, else 1).")]
Gpus = Annotated[str | None, typer.Option(
    "--gpus", help="GPUs per container: all, a count, or ids 0,1 (needs the NVIDIA container toolkit).")]
HfCache = Annotated[Path | None, typer.Option(
    "--hf-cache", help="Hugging Face cache folder, mounted read-only at /hf-cache (HF_HOME; offline).")]


def run_limits(memory: str | None, cpus: float | None, gpus: str | None, hf_cache: Path | None) -> RunLimits:
    """The options as RunLimits."""
    return RunLimits(memory=memory, cpus=cpus, gpus=gpus, hf_cache=hf_cache)
