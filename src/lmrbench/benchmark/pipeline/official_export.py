"""``lmrbench task export --official``: a copy of a task folder that the official LMR-Bench tooling runs as is.

What the official evaluation does with a task folder: ``docker build --build-arg UID --build-arg GID
--build-arg DIR=<repo_folder_name> -t eval_<task> -f Dockerfile .`` in the folder, then ``docker run`` with
the folder mounted at /workspace and ``cd <repo> && export PYTHONPATH=$(pwd) && python unit_test/unit_test_k.py``
for each test, and its statistics read ``<repo>/unit_test/logs/*.log`` (a file passes with no ``Failed`` and at
least one ``Passed``). The official generator opens ``<repo>/paper.json`` and reads ``retrieval_content``.

So the export: writes a Dockerfile that builds from the folder itself (it copies only the requirements file and
a ``wheels/`` folder that the export puts there, so the build needs no index and no registry but the base
image's); appends a script block to every declared pytest-style test so that running it prints and logs
``Passed``/``Failed``; writes paper.json (``{}`` without a paper); writes ``retrieval_content``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.authoring.check.dockerfile import DEFAULT_BASE_IMAGE, DOCKERFILE, render_official_dockerfile
from lmrbench.authoring.record.script_mode import has_main_block, with_script_block
from lmrbench.authoring.task.paper import PAPER_JSON
from lmrbench.benchmark.sandbox.environments.images import BASE_TARGET
from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.environments.wheelhouse import build_wheelhouse, pip_options
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_json, atomic_write_text, staging_dir
from lmrbench.harness.legacy import is_legacy_test
from lmrbench.progress import NullProgress, Progress
from lmrbench.schemas.task_info import INFO_JSON

SKIPPED = ("__pycache__", ".pytest_cache", ".lmrbench", "logs", "*.pyc", ".git")
"""Never exported: caches, lmrbench's results, old logs (the official statistics would count them)."""
WHEELS = "wheels"


@dataclass
class ExportResult:
    """What ``export_official`` wrote."""

    path: Path
    scripts: list[str] = field(default_factory=list)
    """Test files given the script block (relative to the repo folder)."""
    notes: list[str] = field(default_factory=list)
    """One line each: what the export decided that the user should know."""


def export_official(
    task: Task,
    out: Path,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    wheels: bool = True,
    force: bool = False,
    progress: Progress | None = None,
) -> ExportResult:
    """Write ``out/<task name>`` in the official layout (see the module docstring); atomic, refuses to
    replace an existing folder unless ``force``."""
    progress = progress or NullProgress()
    final = Path(out) / task.name
    if final.resolve() == task.path.resolve() or task.path.resolve() in final.resolve().parents:
        raise LmrError("the export folder must be outside the task folder", out)
    if final.exists() and not force:
        raise LmrError("exists; use --force to replace it", final)
    reqs = read_task_requirements(task)
    lines = reqs.lines
    with staging_dir(final, replace=force) as tmp:
        shutil.rmtree(tmp)
        shutil.copytree(task.path, tmp, ignore=shutil.ignore_patterns(*SKIPPED), symlinks=True)
        result = ExportResult(final)
        repo = tmp / task.info.repo_folder_name
        if wheels:
            progress.log(f"wheels for {base_image} (Python {BASE_TARGET.python}): {len(lines)} requirement(s)")
            options = pip_options(reqs.text)  # the index options the task's own build honours (--find-links ...)
            shutil.copytree(build_wheelhouse(lines, BASE_TARGET, options=options, progress=progress), tmp / WHEELS)
        result.notes += reqs.warnings
        rel_req = reqs.source.relative_to(task.path).as_posix() if reqs.source else None
        if reqs.source is not None and reqs.source.name != "requirements.txt":
            rel_req = "requirements.txt"  # the pip section of environment.yml, as plain requirements
            atomic_write_text(tmp / rel_req, "\n".join(lines) + "\n")
        atomic_write_text(
            tmp / DOCKERFILE,
            render_official_dockerfile(
                repo_folder_name=task.info.repo_folder_name, base_image=base_image, requirements=rel_req,
                wheels=wheels,
            ),
        )
        for impl in task.info.implementations:
            for rel in impl.unit_test_files:
                path = repo / rel
                if not path.is_file() or is_legacy_test(path):
                    continue
                text = path.read_text(encoding="utf-8")
                if not has_main_block(text):
                    atomic_write_text(path, with_script_block(text))
                    result.scripts.append(rel)
        if not (repo / PAPER_JSON).is_file():
            atomic_write_text(repo / PAPER_JSON, "{}")
            result.notes.append(f"no paper: {task.info.repo_folder_name}/{PAPER_JSON} is {{}}")
        atomic_write_json(tmp / INFO_JSON, official_info(task))
    return result


def official_info(task: Task) -> dict[str, object]:
    """info.json as the official tooling reads it: ``retrieval_content`` in every implementation."""
    data = task.info.to_json_dict()
    for raw in data.get("implementations", []):
        context = raw.pop("retrieval_context", None)
        raw["retrieval_content"] = raw.get("retrieval_content", context or [])
    return json.loads(json.dumps(data))
