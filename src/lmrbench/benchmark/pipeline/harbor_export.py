"""``lmrbench task export --harbor``: one Harbor task folder per implementation of any task set lmrbench loads.

Each folder (``<out>/<task>-<index>``, lower case) holds what Harbor (``harbor run -p <out>``) reads:
``instruction.md`` (the implementation's instruction, where the goal file and the paper are); ``environment/``
(a Dockerfile that builds the task's Python environment as lmrbench does, from ``requirements.txt`` and the
``wheels/`` resolved on the host for the base image's Python, so the build needs no index; then the agent's view
of the task in /workspace: the masked repository and the paper, without tests, golden files or recorded data, as
``export-agent`` writes it); ``tests/`` (lmrbench's verifier: ``harbor_verifier``); ``solution/solve.sh`` (writes
the golden goal files); ``task.toml`` (timeouts, CPUs, memory, GPUs, no network, a separate verifier that gets
only the goal files from the agent's container, and the task's metadata).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench import __version__
from lmrbench.authoring.check.dockerfile import DEFAULT_BASE_IMAGE, PIP_INSTALL, render_dockerfile
from lmrbench.benchmark.pipeline.agent import PAPER_FILES, export_agent
from lmrbench.benchmark.pipeline.evaluate import DEFAULT_TIMEOUT
from lmrbench.benchmark.pipeline.harbor_verifier import (
    TEST_SH,
    WORKSPACE,
    goal_targets,
    verifier_files,
    workspace_path,
)
from lmrbench.benchmark.sandbox.environments.images import BASE_TARGET
from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.environments.wheelhouse import build_wheelhouse, pip_options
from lmrbench.benchmark.sandbox.running.run_limits import DEFAULT_CPUS, DEFAULT_MEMORY
from lmrbench.core.source.tree import goal_plan
from lmrbench.core.taskset import Task, task_digest
from lmrbench.errors import LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.progress import NullProgress, Progress
from lmrbench.runtime import HARBOR_DOCKER, runtime_files
from lmrbench.schemas.task_info import Implementation

AGENT_TIMEOUT = 3600.0
"""Default seconds an agent may work on one task."""
BUILD_TIMEOUT = 1800.0
"""Seconds Harbor may take to build a task's image."""


@dataclass
class HarborExport:
    """What ``export_harbor`` wrote."""

    path: Path
    tasks: list[str] = field(default_factory=list)
    """The Harbor task folders, by name."""
    notes: list[str] = field(default_factory=list)
    """One line each: what the export decided that the user should know."""


def harbor_name(task: Task, impl: Implementation) -> str:
    """The Harbor task's folder name: the task's name and the implementation's index, lower case."""
    slug = re.sub(r"[^a-z0-9]+", "-", task.name.lower()).strip("-") or "task"
    return f"{slug}-{impl.index}"


def memory_mb(text: str) -> int:
    """Docker's notation ("2g", "512m", "1.5G") in MiB; LmrError for anything else."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", str(text).lower())
    if not m:
        raise LmrError(f"memory {text!r}: use Docker's notation, e.g. 2g or 512m")
    scale = {"": 1 / (1 << 20), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1 << 20}[m.group(2)]
    return max(1, int(float(m.group(1)) * scale))


def gpu_count(gpus: str | int | None) -> int:
    """GPUs a task asks for, as Harbor counts them ("all" is one; device ids count themselves)."""
    text = "" if gpus is None else str(gpus).strip().removeprefix("device=")
    if text in ("", "0", "none"):
        return 0
    if text == "all":
        return 1
    return int(text) if text.isdigit() else len([p for p in text.split(",") if p.strip()])


def _toml(value: object) -> str:
    """A TOML value (strings, numbers, booleans, lists of them): JSON's spelling is TOML's for these."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


def task_toml(task: Task, impl: Implementation, *, isolation: str, timeout: float, agent_timeout: float,
              digest: str) -> str:
    """task.toml of one implementation."""
    res = task.info.resources
    cat = impl.category_normalized
    metadata: dict[str, object] = {
        "paper": task.info.paper_name,
        "paper_url": task.info.paper_url,
        "year": str(task.info.year or ""),
        "category": cat.value if cat else (impl.category or ""),
        "category_original": impl.category or "",
        "lmrbench_task": task.name,
        "lmrbench_implementation": impl.index,
        "goal_files": impl.goal_files,
        "goal_functions": [q for _, quals in goal_plan(task, impl) for q in quals],
        "lmrbench_version": __version__,
        "task_digest": digest,
        "isolation": isolation,
        "reward": "0 or 1: 1 when every test the task declares passed (lmrbench's verdict); "
                  "the fraction of cases passed is in verdict.json",
    }
    artifacts = [workspace_path(task, goal) for goal in goal_targets(task, impl)]
    lines = [
        "# Exported by lmrbench (`lmrbench task export --harbor`); the verifier is lmrbench's recorded tests.",
        'version = "1.0"',
        f"artifacts = {_toml(artifacts)}",
        "",
        "[metadata]",
        *(f"{key} = {_toml(value)}" for key, value in metadata.items()),
        "",
        "[verifier]",
        f"timeout_sec = {float(timeout) + 120:.1f}",
        'user = "root"',
        "# A container of its own: the agent's processes are gone, and only the goal files (artifacts) come over.",
        'environment_mode = "separate"',
        "",
        "[agent]",
        f"timeout_sec = {float(agent_timeout):.1f}",
        "",
        "[environment]",
        f"build_timeout_sec = {BUILD_TIMEOUT:.1f}",
        f"cpus = {float((res.cpus if res else None) or DEFAULT_CPUS):g}",
        f"memory_mb = {memory_mb((res.memory if res else None) or DEFAULT_MEMORY)}",
        f"gpus = {gpu_count(res.gpus if res else None)}",
        "allow_internet = false",
        "",
    ]
    return "\n".join(lines)


def instruction(task: Task, impl: Implementation) -> str:
    """instruction.md: what to implement, where, and where the paper is."""
    repo = f"{WORKSPACE}/{task.info.repo_folder_name}"
    funcs = ", ".join(f"`{q}`" for _, quals in goal_plan(task, impl) for q in quals)
    files = ", ".join(f"`{repo}/{g}`" for g in impl.goal_files)
    lines = [
        f"# {task.info.paper_name or task.name}",
        "",
        f"The folder `{repo}/` is the paper's code repository with some functions left unimplemented (they raise "
        f"NotImplementedError). The paper is `{repo}/paper.pdf`, its text per page `{repo}/paper.json`.",
        "",
        f"Implement {funcs} in {files}, in place, keeping its name, class and signature. Only that file is taken "
        "from your work and graded by the task's tests; edits to other files and new files are ignored. "
        "There is no network.",
        "",
        impl.instruction.strip() or "(no instruction given)",
        "",
    ]
    if impl.retrieval_context:
        lines += ["Useful context: " + ", ".join(f"`{repo}/{c}`" for c in impl.retrieval_context), ""]
    return "\n".join(lines)


INDEX_INSTALL = "/opt/venv/bin/pip install --no-cache-dir -r /tmp/lmrbench/requirements.txt pytest"
"""The requirements from the index at build time (``wheels=False``: wheels/ is left empty)."""


def dockerfile(task: Task, base_image: str, *, wheels: bool = True) -> str:
    """The environment's Dockerfile: lmrbench's task layer (its two stages, the wheels in no layer), then the
    agent's view in /workspace, the image running as the task's user."""
    text = render_dockerfile(base_image=base_image, requirements="environment/requirements.txt")
    body = text[text.index("ARG BASE_IMAGE="):text.index("# An instruction of your own")]
    if not wheels:
        body = body.replace(PIP_INSTALL, INDEX_INSTALL)
    repo = task.info.repo_folder_name
    return (
        f"# lmrbench task image of {task.name}, exported for Harbor: the task's Python environment (requirements\n"
        "# installed offline from wheels/, resolved for the base image's Python), then the agent's view of the task\n"
        "# in /workspace: the masked repository and the paper; no tests, golden files or recorded data.\n"
        f"{body}COPY workspace/ {WORKSPACE}/\nRUN chown -R $UID:$GID {WORKSPACE}\n"
        f"WORKDIR {WORKSPACE}/{repo}\nUSER $UID:$GID\n"
    )


def solve_sh(task: Task, impl: Implementation) -> tuple[str, dict[str, bytes]]:
    """solution/solve.sh and its files: the golden goal files written over the masked ones."""
    lines = ["#!/bin/sh", f"# The golden code of {task.name} implementation {impl.index}: the whole unmasked goal "
             "file(s).", "set -eu", 'here=$(cd "$(dirname "$0")" && pwd)']
    files: dict[str, bytes] = {}
    for which, goal in enumerate(impl.goal_files):
        name = f"golden_{which}.py"
        files[name] = task.golden_path(impl, which).read_bytes()
        lines.append(f'cat "$here/{name}" > {json.dumps(workspace_path(task, goal))}')
    return "\n".join(lines) + "\n", files


def _write(path: Path, data: bytes | str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.chmod(path, mode)


def _link_tree(src: Path, dest: Path) -> None:
    """A copy of ``src`` whose files are hard links where the file system allows."""
    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)
    shutil.copytree(src, dest, copy_function=link)


def export_harbor(
    tasks: list[Task],
    out: Path,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    timeout: float = DEFAULT_TIMEOUT,
    agent_timeout: float = AGENT_TIMEOUT,
    wheels: bool = True,
    force: bool = False,
    progress: Progress | None = None,
) -> HarborExport:
    """Write ``out`` as a Harbor dataset folder: one task folder per implementation (see the module docstring);
    all or nothing, an existing ``out`` replaced only with ``force``. ``wheels``: carry the requirements' wheels
    (else the image installs them from the index at build time)."""
    progress = progress or NullProgress()
    out = Path(out)
    for task in tasks:
        if out.resolve() == task.path.resolve() or task.path.resolve() in out.resolve().parents:
            raise LmrError("the export folder must be outside the task folder", out)
    if out.exists() and not force:
        raise LmrError("exists; use --force to replace it", out)
    result = HarborExport(out)
    with staging_dir(out, replace=force) as tmp, tempfile.TemporaryDirectory(prefix="lmrbench-harbor-") as scratch:
        for task in tasks:
            view = export_agent([task], Path(scratch) / task.name, keep=False, progress=progress)
            workspace = view / task.name
            (workspace / "TASK.md").unlink()
            reqs = read_task_requirements(task)
            result.notes += [f"{task.name}: {w}" for w in reqs.warnings]
            wheelhouse = None
            if wheels:
                progress.log(f"{task.name}: wheels for {base_image} (Python {BASE_TARGET.python})")
                wheelhouse = build_wheelhouse(reqs.lines, BASE_TARGET, options=pip_options(reqs.text),
                                              progress=progress)
            digest = task_digest(task)
            if not all((task.repo_dir / name).is_file() for name in PAPER_FILES):
                result.notes.append(f"{task.name}: no paper.pdf or paper.json: the instruction names them all the same")
            for impl in task.info.implementations:
                name = harbor_name(task, impl)
                folder = tmp / name
                tests, isolation = verifier_files(task, impl, timeout=timeout)
                for rel, data in tests.items():
                    _write(folder / "tests" / rel, data)
                _write(folder / "tests" / "test.sh", TEST_SH.format(task=task.name, index=impl.index,
                                                                  isolation=isolation), 0o755)
                script, golden = solve_sh(task, impl)
                _write(folder / "solution" / "solve.sh", script, 0o755)
                for rel, data in golden.items():
                    _write(folder / "solution" / rel, data)
                env = folder / "environment"
                _write(env / "Dockerfile", dockerfile(task, base_image, wheels=wheelhouse is not None))
                _write(env / "requirements.txt", "\n".join(reqs.lines) + "\n")
                if wheelhouse is not None:
                    _link_tree(wheelhouse, env / "wheels")
                else:
                    (env / "wheels").mkdir()
                shutil.copytree(workspace, env / "workspace", symlinks=True)
                _write(folder / "instruction.md", instruction(task, impl))
                _write(folder / "task.toml", task_toml(task, impl, isolation=isolation, timeout=timeout,
                                                       agent_timeout=agent_timeout, digest=digest))
                result.tasks.append(name)
                if isolation != "split":
                    result.notes.append(f"{name}: graded in one process (shared: the goal code changes module or "
                                        "class state), weaker than a split run")
        _write(tmp / HARBOR_DOCKER, runtime_files((HARBOR_DOCKER,))[HARBOR_DOCKER])
    return result
